//! `stridelint replay --table`: the comparison the classic write-ups of the `view` error
//! show, for the user's own shape — a direct `view` of the contiguous tensor, the same merge
//! after a transpose (the error), `.contiguous().view` (the copy that fixes it) and
//! `reshape` (which makes the same copy silently).
//!
//! The rows are op chains replayed like any other (`replay_chain`), so every verdict comes
//! from the op tables and every time from the engine; nothing here knows the answers.

use std::fmt::Write as _;

use serde_json::{json, Value};
use stridelint::layout::Layout;
use stridelint::verify::replay::{format_bytes, format_ms};

use super::replay_chain::{replay_chain, Meter, ReplayedStep, StepOutcome};
use super::replay_syntax::parse_chain;
use stridelint::verify_findings::measurement_json;

/// One row: the expression shown and the chain replayed for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRow {
    pub expression: String,
    pub chain: String,
}

/// The four rows for a contiguous tensor of `shape` (rank ≥ 2).
///
/// The transposed tensor swaps the two dimensions before the last (`transpose(1, 2)` of a
/// 4-d tensor, as in attention's head split); the `view` merges the last two dimensions of
/// each. On the contiguous tensor they are adjacent in memory; after the transpose the
/// second-to-last has stride `size[-2] · size[-1]` of the original, so the merge needs a copy
/// (unless a size of 1 makes the transpose trivial — the replay then says so).
pub fn classic_rows(shape: &[i64]) -> Result<Vec<TableRow>, String> {
    let rank = shape.len();
    if rank < 2 {
        return Err(format!(
            "--table needs a shape of at least 2 dimensions, got {rank}"
        ));
    }
    let merged_view = |sizes: &[i64]| {
        let mut args: Vec<String> = sizes[..rank - 2].iter().map(i64::to_string).collect();
        args.push("-1".to_string());
        args.join(", ")
    };
    let (a, b) = if rank == 2 {
        (0, 1)
    } else {
        (rank - 3, rank - 2)
    };
    let mut transposed_shape = shape.to_vec();
    transposed_shape.swap(a, b);
    let direct = merged_view(shape);
    let merged = merged_view(&transposed_shape);
    let transpose = format!("transpose({a}, {b})");
    let rows = [
        format!("view({direct})"),
        format!("{transpose}.view({merged})"),
        format!("{transpose}.contiguous().view({merged})"),
        format!("{transpose}.reshape({merged})"),
    ];
    Ok(rows
        .into_iter()
        .map(|chain| TableRow {
            expression: format!("x.{chain}"),
            chain,
        })
        .collect())
}

/// A replayed row, reduced to what the table shows.
pub struct RowResult {
    pub row: TableRow,
    pub steps: Vec<ReplayedStep>,
}

impl RowResult {
    /// `view`, `copy` or `error`.
    fn outcome(&self) -> &'static str {
        if self.error().is_some() {
            "error"
        } else if self.copy().is_some() {
            "copy"
        } else {
            "view"
        }
    }

    fn error(&self) -> Option<&str> {
        self.steps.iter().find_map(|s| match &s.outcome {
            StepOutcome::Raises(message) | StepOutcome::Stops(message) => Some(message.as_str()),
            StepOutcome::Tensor { .. } => None,
        })
    }

    fn copy(&self) -> Option<&super::replay_chain::MeasuredCopy> {
        self.steps.iter().find_map(|s| match &s.outcome {
            StepOutcome::Tensor {
                copy: Some(Ok(measured)),
                ..
            } => Some(measured),
            _ => None,
        })
    }

    fn copy_error(&self) -> Option<String> {
        self.steps.iter().find_map(|s| match &s.outcome {
            StepOutcome::Tensor {
                copy: Some(Err(error)),
                ..
            } => Some(error.to_string()),
            _ => None,
        })
    }
}

/// Replays every row from a contiguous tensor of `shape`.
pub fn replay_rows(
    shape: &[i64],
    meter: &mut Meter,
) -> Result<Vec<RowResult>, Box<dyn std::error::Error>> {
    let start = Layout::contiguous(shape.to_vec());
    let mut results = Vec::new();
    for row in classic_rows(shape)? {
        let steps = parse_chain(&row.chain)?;
        let steps = replay_chain(&start, &steps, meter)?;
        results.push(RowResult { row, steps });
    }
    Ok(results)
}

/// The table as text: one line per row, then the error message in full.
pub fn render_text(shape: &[i64], rows: &[RowResult], meter: &Meter) -> String {
    let mut out = String::new();
    let numel: i64 = shape.iter().product();
    let bytes = numel as u64 * meter.dtype().size_bytes() as u64;
    let dims: Vec<String> = shape.iter().map(i64::to_string).collect();
    let _ = write!(
        out,
        "x: contiguous ({}) {}, {}",
        dims.join(", "),
        meter.dtype(),
        format_bytes(bytes)
    );
    if let Some((_, device)) = meter.identity() {
        let _ = write!(out, ", measured on {device}");
    }
    out.push('\n');
    let width = rows
        .iter()
        .map(|r| r.row.expression.chars().count())
        .max()
        .unwrap_or(0);
    let _ = writeln!(
        out,
        "{:width$}  {:6}  {:>10}  {:>10}  {:>12}  note",
        "expression", "result", "time", "GB/s", "extra memory"
    );
    for result in rows {
        let (time, speed, extra, note) = match (result.copy(), result.copy_error()) {
            (Some(measured), _) => {
                let m = &measured.replay.measurement;
                let ceiling = measured
                    .replay
                    .ceiling_gbps
                    .filter(|c| *c > 0.0)
                    .map(|c| format!("{:.0}% of this device's copy ceiling", 100.0 * m.gbps / c))
                    .unwrap_or_default();
                let note = if measured.reused {
                    "the same copy as above".to_string()
                } else {
                    ceiling
                };
                (
                    format_ms(m.median_ms),
                    format!("{:.1}", m.gbps),
                    format_bytes(m.extra_bytes),
                    note,
                )
            }
            (None, Some(error)) => (
                "-".into(),
                "-".into(),
                "-".into(),
                format!("measurement failed: {error}"),
            ),
            (None, None) if result.error().is_some() => {
                ("-".into(), "-".into(), "-".into(), String::new())
            }
            (None, None) => ("-".into(), "-".into(), "0 B".into(), String::new()),
        };
        let _ = writeln!(
            out,
            "{:width$}  {:6}  {:>10}  {:>10}  {:>12}  {note}",
            result.row.expression,
            result.outcome(),
            time,
            speed,
            extra
        );
    }
    for result in rows {
        if let Some(error) = result.error() {
            let _ = writeln!(out, "{}: {error}", result.row.expression);
        }
    }
    out
}

/// The table as JSON: `{dtype, engine, device, shape, rows: [{expression, result, …}]}`.
pub fn render_json(shape: &[i64], rows: &[RowResult], meter: &Meter) -> Value {
    let (engine, device) = match meter.identity() {
        Some((engine, device)) => (json!(engine), json!(device)),
        None => (Value::Null, Value::Null),
    };
    let rows: Vec<Value> = rows
        .iter()
        .map(|result| {
            let mut row = json!({
                "expression": result.row.expression,
                "result": result.outcome(),
                "error": result.error(),
            });
            if let Some(measured) = result.copy() {
                let mut measurement = measurement_json(&measured.replay, 1);
                measurement["summary"] = json!(measured.replay.summary);
                measurement["reused"] = json!(measured.reused);
                row["copy"] = measurement;
            } else if let Some(error) = result.copy_error() {
                row["copy"] = json!({ "error": error });
            }
            row
        })
        .collect();
    json!({
        "dtype": meter.dtype().name(),
        "engine": engine,
        "device": device,
        "shape": shape,
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_for_an_attention_shape() {
        let rows = classic_rows(&[16, 4096, 32, 128]).unwrap();
        let expressions: Vec<&str> = rows.iter().map(|r| r.expression.as_str()).collect();
        assert_eq!(
            expressions,
            [
                "x.view(16, 4096, -1)",
                "x.transpose(1, 2).view(16, 32, -1)",
                "x.transpose(1, 2).contiguous().view(16, 32, -1)",
                "x.transpose(1, 2).reshape(16, 32, -1)",
            ]
        );
    }

    #[test]
    fn rows_for_small_ranks() {
        let rows = classic_rows(&[8, 16]).unwrap();
        assert_eq!(rows[1].expression, "x.transpose(0, 1).view(-1)");
        let rows = classic_rows(&[2, 8, 16]).unwrap();
        assert_eq!(rows[3].expression, "x.transpose(0, 1).reshape(8, -1)");
        assert!(classic_rows(&[5]).is_err());
    }
}
