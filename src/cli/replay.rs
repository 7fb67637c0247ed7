//! `stridelint replay`: replay a chain of tensor ops on concrete sizes, print each step's
//! layout, and measure every copy on a device. `--table` prints the classic comparison of
//! `view`, `.contiguous().view` and `reshape` for the given shape instead.

use std::fmt::Write as _;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde_json::{json, Value};
use stridelint::layout::{Layout, Tri};
use stridelint::verify::replay::{format_bytes, format_ms};
use stridelint::verify::{budget, DType, EngineChoice, MeasureOptions, StridedLayout};
use stridelint::verify_findings::measurement_json;

use super::replay_chain::{replay_chain, resolve, Meter, ReplayedStep, StepOutcome};
use super::replay_syntax::{parse_chain, Step};
use super::replay_table::{render_json, render_text, replay_rows};
use super::streams;

const SYNTAX_HELP: &str = "\
OPS are tensor methods as written after `x.` in PyTorch, with numbers for sizes; each
argument may hold one step or a chain:

  stridelint replay --shape 16,4096,32,128 --dtype bf16 'permute(0,2,1,3)' 'reshape(16,32,-1)'
  stridelint replay --shape 8,64,64 'transpose(1, 2).contiguous().view(8, -1)'
  stridelint replay --shape 4,6 '[:, 1::2]' T 'flatten()'
  stridelint replay --shape 16,4096,32,128 --dtype bf16 --table

Any method or attribute of the torch op table (rules/torch.toml) works: view, reshape,
flatten, unflatten, ravel, contiguous, clone, transpose, permute, movedim, t, T, mT,
narrow, select, unsqueeze, squeeze, expand, split/chunk (the replay follows the first
piece), unfold, diagonal, element-wise ops… Arguments: integers, floats, True/False/None,
tuples `(0, 2, 1, 3)`, keywords `flatten(start_dim=2)`, constants
`contiguous(memory_format=torch.channels_last)`, and subscripts `[:, :3]`, `[..., None]`.

Every step that copies (a `reshape` that cannot be a view, `contiguous()` of a
non-contiguous tensor, `clone()`…) is measured: its input is gathered into a new buffer in
the result's memory order, timed against a memcpy of the same size, and checked; identical
copies are measured once. Exit status: 0, or 1 when a step
raises (the error is printed), 2 on a usage error.";

#[derive(Args, Debug)]
#[command(after_long_help = SYNTAX_HELP)]
pub struct ReplayArgs {
    /// Shape of the starting tensor, comma-separated (16,4096,32,128).
    #[arg(long, value_delimiter = ',', required = true, value_name = "SIZES")]
    shape: Vec<i64>,
    /// Strides of the starting tensor, comma-separated (default: contiguous).
    #[arg(long, value_delimiter = ',', value_name = "STRIDES")]
    strides: Option<Vec<i64>>,
    /// Element type: f32, bf16, f16, f64, i64, i32, i16, i8, u8, bool.
    #[arg(long, default_value = "f32")]
    dtype: DType,
    /// Device: auto (CUDA if it works here, else the CPU), cpu or cuda.
    #[arg(long, default_value = "auto")]
    engine: EngineChoice,
    /// Timed runs per copy (the median is reported; default 50, after 5 warm-up runs; at
    /// most 1000).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=MAX_RUNS))]
    runs: Option<u32>,
    /// Times the chain runs per forward pass, for the total.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    layers: u64,
    /// Refuse to measure a copy whose buffers would take more than this (8G, 512MiB,
    /// 2000000000; default: half of the memory available).
    #[arg(
        long = "max-bytes",
        visible_alias = "verify-max-bytes",
        value_name = "BYTES",
        value_parser = stridelint::verify::budget::parse_byte_size
    )]
    max_bytes: Option<u64>,
    /// Print the view / contiguous().view / reshape comparison for --shape instead of OPS.
    #[arg(long)]
    table: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    output_format: ReplayFormat,
    /// The ops to replay, in order (see below).
    #[arg(value_name = "OPS")]
    ops: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ReplayFormat {
    #[value(alias = "full")]
    Text,
    Json,
}

/// The most timed runs per copy `--runs`/`--verify-runs` take: the median of 50 is already
/// stable, and each run of a large copy takes a while (a bound keeps a typo from running
/// for hours).
pub const MAX_RUNS: i64 = 1000;

/// Measurement options for `runs` timed runs: one warm-up per ten runs, between 1 and the
/// default 5 (so `--runs 50` is the default protocol and `--runs 3` a quick check).
pub fn measure_options(runs: Option<u32>) -> MeasureOptions {
    let defaults = MeasureOptions::default();
    match runs {
        Some(runs) => MeasureOptions {
            timed_runs: runs as usize,
            warmup_runs: (runs as usize / 10).clamp(1, defaults.warmup_runs),
            ..defaults
        },
        None => defaults,
    }
}

pub fn run(args: ReplayArgs) -> ExitCode {
    match run_replay(&args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run_replay(args: &ReplayArgs) -> Result<ExitCode, String> {
    let start = starting_layout(args)?;
    let options = MeasureOptions {
        max_bytes: args.max_bytes,
        ..measure_options(args.runs)
    };
    let mut meter = Meter::new(args.engine, args.dtype, options);
    if args.table {
        if !args.ops.is_empty() {
            return Err("--table replays its own chains; give either --table or OPS".into());
        }
        if args.strides.is_some() {
            return Err("--table starts from a contiguous tensor; drop --strides".into());
        }
        let rows = replay_rows(&args.shape, &mut meter).map_err(|e| e.to_string())?;
        print_fallback_note(&meter);
        let text = match args.output_format {
            ReplayFormat::Text => render_text(&args.shape, &rows, &meter),
            ReplayFormat::Json => format!("{:#}\n", render_json(&args.shape, &rows, &meter)),
        };
        return Ok(streams::print(&text).err().unwrap_or(ExitCode::SUCCESS));
    }
    if args.ops.is_empty() {
        return Err("nothing to replay: give OPS such as 'transpose(1, 2)', or --table".into());
    }
    let mut steps: Vec<Step> = Vec::new();
    for text in &args.ops {
        steps.extend(
            parse_chain(text).map_err(|e| format!("cannot parse `{}`: {e}", abbreviated(text)))?,
        );
    }
    for step in &steps {
        resolve(step)?;
    }
    let replayed = replay_chain(&start, &steps, &mut meter).map_err(|e| e.to_string())?;
    print_fallback_note(&meter);
    // The per-forward totals must fit in 64 bits (`--layers` is any u64).
    let total = totals(&replayed);
    for bytes in [total.bytes, total.extra_bytes] {
        budget::per_forward_bytes(bytes, args.layers).map_err(|e| format!("--layers: {e}"))?;
    }
    let text = match args.output_format {
        ReplayFormat::Text => render_text_chain(&start, &replayed, &meter, args.layers),
        ReplayFormat::Json => format!(
            "{:#}\n",
            render_json_chain(&start, &replayed, &meter, args.layers)
        ),
    };
    if let Err(code) = streams::print(&text) {
        return Ok(code);
    }
    let raised = replayed
        .iter()
        .any(|s| matches!(s.outcome, StepOutcome::Raises(_)));
    Ok(if raised {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `text` as an error message quotes it: at most 60 characters.
fn abbreviated(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

fn starting_layout(args: &ReplayArgs) -> Result<Layout<i64>, String> {
    if let Some(size) = args.shape.iter().find(|&&s| s < 0) {
        return Err(format!("--shape: size {size} is negative"));
    }
    let elements = args
        .shape
        .iter()
        .try_fold(1i64, |n, &s| n.checked_mul(s.max(1)));
    match elements {
        None => return Err("--shape: more than 2^63 elements".to_string()),
        Some(n)
            if (n as u64)
                .checked_mul(args.dtype.size_bytes() as u64)
                .is_none() =>
        {
            return Err(format!(
                "--shape: {n} elements of {} are more than 2^64 bytes",
                args.dtype
            ))
        }
        Some(_) => {}
    }
    let layout = match &args.strides {
        None => Layout::contiguous(args.shape.clone()),
        Some(strides) if strides.len() == args.shape.len() => {
            Layout::new(args.shape.clone(), strides.clone(), 0)
        }
        Some(strides) => {
            return Err(format!(
                "--strides has {} entries for a shape of {} dimensions",
                strides.len(),
                args.shape.len()
            ))
        }
    };
    StridedLayout::new(layout.shape.clone(), layout.strides.clone(), 0)
        .validate()
        .map_err(|e| e.to_string())?;
    Ok(layout)
}

fn print_fallback_note(meter: &Meter) {
    if let Some(reason) = &meter.fallback_note {
        eprintln!("note: measuring on the CPU: {reason}");
    }
}

/// Totals over the measured copies (each distinct copy counted every time it happens).
struct Totals {
    copies: usize,
    bytes: u64,
    extra_bytes: u64,
    ms: f64,
}

fn totals(steps: &[ReplayedStep]) -> Totals {
    let mut totals = Totals {
        copies: 0,
        bytes: 0,
        extra_bytes: 0,
        ms: 0.0,
    };
    for step in steps {
        if let StepOutcome::Tensor {
            copy: Some(Ok(measured)),
            ..
        } = &step.outcome
        {
            let m = &measured.replay.measurement;
            totals.copies += 1;
            totals.bytes += m.bytes_copied;
            totals.extra_bytes += m.extra_bytes;
            totals.ms += m.median_ms;
        }
    }
    totals
}

fn render_text_chain(
    start: &Layout<i64>,
    steps: &[ReplayedStep],
    meter: &Meter,
    layers: u64,
) -> String {
    let mut out = String::new();
    let numel: i64 = start.shape.iter().product();
    // Checked in `starting_layout`; saturating should that ever change.
    let bytes = (numel as u64).saturating_mul(meter.dtype().size_bytes() as u64);
    let width = steps
        .iter()
        .map(|s| s.text.chars().count())
        .max()
        .unwrap_or(0)
        .max(5);
    let _ = writeln!(
        out,
        "{:width$}  {start}  {}, {}",
        "x",
        meter.dtype(),
        format_bytes(bytes)
    );
    for step in steps {
        let text = &step.text;
        match &step.outcome {
            StepOutcome::Tensor {
                layout,
                copies,
                note,
                copy,
            } => {
                let what = match (copies, copy) {
                    (Tri::No, _) => "no copy".to_string(),
                    (Tri::Unknown, _) => "may copy (depends on the dtype or device)".to_string(),
                    (Tri::Yes, Some(Ok(measured))) if measured.reused => {
                        format!("{} (the same copy as above)", measured.replay.summary)
                    }
                    (Tri::Yes, Some(Ok(measured))) => measured.replay.summary.clone(),
                    (Tri::Yes, Some(Err(error))) => format!("copies; measurement failed: {error}"),
                    (Tri::Yes, None) => "copies".to_string(),
                };
                let note = note.as_ref().map(|n| format!(" ({n})")).unwrap_or_default();
                let _ = writeln!(out, "{text:width$}  {layout}{note}  {what}");
            }
            StepOutcome::Raises(message) => {
                let _ = writeln!(out, "{text:width$}  raises: {message}");
            }
            StepOutcome::Stops(why) => {
                let _ = writeln!(out, "{text:width$}  replay stops here: {why}");
            }
        }
    }
    let total = totals(steps);
    match meter.identity() {
        Some((_, device)) if total.copies == 0 => {
            let _ = writeln!(out, "no copy could be measured on {device}");
        }
        Some((_, device)) => {
            let noun = if total.copies == 1 { "copy" } else { "copies" };
            let _ = write!(
                out,
                "measured on {device}: {} {noun}, {} in {}, {} of extra memory",
                total.copies,
                format_bytes(total.bytes),
                format_ms(total.ms),
                format_bytes(total.extra_bytes)
            );
            if layers > 1 {
                let _ = write!(
                    out,
                    "; ×{layers} layers = {} and {} per forward pass",
                    format_ms(total.ms * layers as f64),
                    format_bytes(total.bytes.saturating_mul(layers))
                );
            }
            out.push('\n');
        }
        None => out.push_str("no copy: nothing to measure\n"),
    }
    out
}

fn layout_json(layout: &Layout<i64>) -> Value {
    json!({ "shape": layout.shape, "strides": layout.strides, "offset": layout.offset })
}

fn render_json_chain(
    start: &Layout<i64>,
    steps: &[ReplayedStep],
    meter: &Meter,
    layers: u64,
) -> Value {
    let (engine, device) = match meter.identity() {
        Some((engine, device)) => (json!(engine), json!(device)),
        None => (Value::Null, Value::Null),
    };
    let json_steps: Vec<Value> = steps
        .iter()
        .map(|step| match &step.outcome {
            StepOutcome::Tensor {
                layout,
                copies,
                note,
                copy,
            } => {
                let mut value = json!({
                    "op": step.text,
                    "layout": layout_json(layout),
                    "copies": tri_name(*copies),
                    "note": note,
                });
                match copy {
                    Some(Ok(measured)) => {
                        let mut m = measurement_json(&measured.replay, layers);
                        m["summary"] = json!(measured.replay.summary);
                        m["reused"] = json!(measured.reused);
                        value["measurement"] = m;
                    }
                    Some(Err(error)) => {
                        value["measurement"] = json!({ "error": error.to_string() })
                    }
                    None => {}
                }
                value
            }
            StepOutcome::Raises(message) => json!({ "op": step.text, "error": message }),
            StepOutcome::Stops(why) => json!({ "op": step.text, "stopped": why }),
        })
        .collect();
    let total = totals(steps);
    let forward = |x: u64| x.saturating_mul(layers);
    json!({
        "dtype": meter.dtype().name(),
        "engine": engine,
        "device": device,
        "input": layout_json(start),
        "steps": json_steps,
        "total": {
            "copies": total.copies,
            "bytes_copied": total.bytes,
            "extra_bytes": total.extra_bytes,
            "median_ms": total.ms,
            "layers": layers,
            "per_forward": {
                "bytes_copied": forward(total.bytes),
                "extra_bytes": forward(total.extra_bytes),
                "ms": total.ms * layers as f64,
            },
        },
    })
}

fn tri_name(tri: Tri) -> &'static str {
    match tri {
        Tri::Yes => "yes",
        Tri::No => "no",
        Tri::Unknown => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_scale_the_warmup_between_quick_and_default() {
        assert_eq!(measure_options(None), MeasureOptions::default());
        let quick = measure_options(Some(3));
        assert_eq!((quick.warmup_runs, quick.timed_runs), (1, 3));
        let long = measure_options(Some(200));
        assert_eq!((long.warmup_runs, long.timed_runs), (5, 200));
    }
}
