//! `stridelint check --verify`: the flags, and the glue between them, each file's settings
//! (the configuration's `dims`, `dtype`, `layers`) and [`stridelint::verify_findings`].

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use stridelint::diagnostic::Diagnostic;
use stridelint::verify::{select_engine, DType, EngineChoice, MeasureOptions};
use stridelint::verify_findings::{
    self, merge_dims, parse_dim_binding, CopySizing, FindingVerifier, VerifyRequest,
};
use stridelint::{FileError, Settings};

use super::replay::{measure_options, MAX_RUNS};

/// The `check` flags of `--verify` (flattened into `CheckArgs`).
#[derive(Args, Debug, Clone, Default)]
pub struct VerifyArgs {
    /// Replay each SL001/SL002 finding whose sizes are bound and measure its copy on a device:
    /// auto (CUDA if it works here, else the CPU), cpu or cuda.
    #[arg(
        long,
        value_name = "ENGINE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "auto"
    )]
    pub verify: Option<EngineChoice>,
    /// A size for copy-size notes and --verify, as NAME=SIZE with the name as the code
    /// spells it (repeatable):
    /// --dim B=16 --dim n_head=12 --dim 'x.shape[2]=64'. Overrides [tool.stridelint.dims].
    #[arg(long = "dim", value_name = "NAME=SIZE", value_parser = parse_dim_binding)]
    pub dims: Vec<(String, i64)>,
    /// Element type for copy sizes and --verify (default f32, or `dtype` from the configuration).
    #[arg(long)]
    pub dtype: Option<DType>,
    /// Layers per forward pass for copy sizes and --verify totals (default 1, or `layers` from the configuration).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub layers: Option<u64>,
    /// Timed runs per measured copy for --verify (default 50, after 5 warm-up runs; at
    /// most 1000).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=MAX_RUNS))]
    pub verify_runs: Option<u32>,
    /// A Hugging Face `config.json`: each integer entry is the size `config.<key>` (as the
    /// analysis names `config.x` and `self.config.x` alike) for copy sizes and --verify; `num_hidden_layers` gives the layers
    /// and `torch_dtype` the dtype unless --layers/--dtype say otherwise. Activation sizes
    /// (batch, sequence) still come from --dim.
    #[arg(long, value_name = "FILE", value_parser = parse_model_config)]
    pub model_config: Option<ModelConfig>,
    /// Do not report hidden copies (SL002) of known size smaller than this: bytes, or a
    /// size such as 1MiB; 0 reports every copy (default 1MiB, or `hidden-copy-min-bytes`).
    #[arg(long, value_name = "BYTES", value_parser = parse_min_bytes)]
    pub hidden_copy_min_bytes: Option<u64>,
    /// Refuse to measure a copy whose buffers would take more than this (8G, 512MiB,
    /// 2000000000; default: half of the memory available).
    #[arg(long, value_name = "BYTES", value_parser = stridelint::verify::budget::parse_byte_size)]
    pub verify_max_bytes: Option<u64>,
}

/// What `--model-config` gives: named sizes, layers per forward pass, the dtype.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelConfig {
    pub dims: BTreeMap<String, i64>,
    pub layers: Option<u64>,
    pub dtype: Option<DType>,
}

/// Read a `config.json`: the integer entries (top level, and one level down for nested
/// configs such as `text_config`) as `config.<key>`.
fn parse_model_config(path: &str) -> Result<ModelConfig, String> {
    // A FIFO or device is refused before it is read (reading one would block or never end).
    const MAX_BYTES: u64 = 16 << 20;
    let bytes = stridelint::fsutil::read_regular(Path::new(path), Some(MAX_BYTES))
        .map_err(|e| format!("{path}: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| format!("{path}: not UTF-8"))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{path}: not JSON: {e}"))?;
    let serde_json::Value::Object(entries) = &json else {
        return Err(format!(
            "{path}: expected a JSON object (a Hugging Face config.json)"
        ));
    };
    let mut config = ModelConfig::default();
    let mut bind = |name: String, value: &serde_json::Value| {
        if let Some(n) = value.as_i64().filter(|&n| n >= 1) {
            config.dims.insert(name, n);
        }
    };
    for (key, value) in entries {
        match value {
            serde_json::Value::Object(nested) => {
                for (inner, v) in nested {
                    bind(format!("config.{key}.{inner}"), v);
                }
            }
            v => bind(format!("config.{key}"), v),
        }
    }
    config.layers = ["num_hidden_layers", "n_layer", "num_layers"]
        .iter()
        .find_map(|k| entries.get(*k).and_then(|v| v.as_u64()))
        .filter(|&n| n >= 1);
    config.dtype = ["torch_dtype", "dtype"]
        .iter()
        .find_map(|k| entries.get(*k).and_then(|v| v.as_str()))
        .and_then(|name| name.parse().ok());
    if config.dims.is_empty() {
        return Err(format!("{path}: no integer entry to take sizes from"));
    }
    Ok(config)
}

/// `--hidden-copy-min-bytes`: `0`, or a byte size as `--verify-max-bytes` takes it.
fn parse_min_bytes(text: &str) -> Result<u64, String> {
    match text.trim() {
        "0" => Ok(0),
        other => stridelint::verify::budget::parse_byte_size(other),
    }
}

impl VerifyArgs {
    /// How the copies of a file linted with `settings` are sized: its configuration's (see
    /// [`stridelint::copy_sizing`]), with `--model-config` over it where the file reads a
    /// model configuration (`text`, see [`reads_model_config`]) and the other flags over
    /// all.
    pub fn sizing(&self, settings: &Settings, text: &str) -> CopySizing {
        let base = stridelint::copy_sizing(settings);
        let model = self
            .model_config
            .as_ref()
            .filter(|_| reads_model_config(text));
        let mut dims = base.request.dims;
        dims.extend(model.iter().flat_map(|m| m.dims.clone()));
        let dtype = self.dtype.or(model.and_then(|m| m.dtype));
        CopySizing {
            request: VerifyRequest {
                dims: merge_dims(Some(&dims), &self.dims),
                dtype: dtype.unwrap_or(base.request.dtype),
                layers: self
                    .layers
                    .or(model.and_then(|m| m.layers))
                    .unwrap_or(base.request.layers)
                    .max(1),
                options: MeasureOptions {
                    max_bytes: self.verify_max_bytes,
                    ..measure_options(self.verify_runs)
                },
                min_symbolic_size: base.request.min_symbolic_size,
            },
            dtype_given: base.dtype_given || dtype.is_some(),
            min_bytes: self.hidden_copy_min_bytes.unwrap_or(base.min_bytes),
        }
    }

    /// The `--verify` request for a file linted with `settings` (see [`Self::sizing`]).
    pub fn request(&self, settings: &Settings, text: &str) -> VerifyRequest {
        self.sizing(settings, text).request
    }
}

/// Whether a file reads a model configuration's entries (`config.hidden_size`,
/// `self.config.num_heads`): only its copies are sized, counted in layers and typed by
/// `--model-config`; a helper that never reads one keeps the other sizes' dtype and count.
fn reads_model_config(text: &str) -> bool {
    text.contains("config.")
}

/// Fills `verify` on every SL001/SL002 finding when `--verify` is given. `settings_for`
/// gives the settings a file was linted with (`None`: the defaults). Errors are printed
/// here; `Err` carries the exit code (2: the engine asked for does not work here). The
/// findings whose measurement was refused (sizes above the memory limit or beyond 64-bit
/// arithmetic) come back as errors, which make the exit code 2 after the report.
pub fn verify_check_findings(
    diagnostics: &mut Vec<Diagnostic>,
    args: &VerifyArgs,
    settings_for: &dyn Fn(&Path) -> Option<Arc<Settings>>,
) -> Result<Vec<FileError>, ExitCode> {
    state_copy_sizes(diagnostics, args, settings_for);
    let Some(choice) = args.verify else {
        if args.verify_max_bytes.is_some() {
            eprintln!("note: --verify-max-bytes only matters with --verify");
        }
        return Ok(Vec::new());
    };
    let verifiable =
        |d: &Diagnostic| stridelint::lints::claim(d.code).verifiable() && d.subject.is_some();
    // `--verify=cuda` asks for a device: one that does not work here is an error even when
    // there is nothing to measure, as it is when there is (`auto` falls back to the CPU).
    if !diagnostics.iter().any(verifiable) && choice != EngineChoice::Cuda {
        return Ok(Vec::new());
    }
    let (engine, fallback) = select_engine(choice).map_err(|e| {
        eprintln!("error: --verify={}: {e}", choice_name(choice));
        ExitCode::from(2)
    })?;
    if let Some(reason) = fallback {
        eprintln!("note: --verify measures on the CPU: {reason}");
    }
    let mut verifier = FindingVerifier::new(engine.as_ref());
    let mut requests: HashMap<PathBuf, VerifyRequest> = HashMap::new();
    for diagnostic in diagnostics.iter_mut().filter(|d| verifiable(d)) {
        let path = diagnostic.file.path.clone();
        let request = requests.entry(path.clone()).or_insert_with(|| {
            let settings = settings_for(&path).unwrap_or_default();
            args.request(&settings, &diagnostic.file.text)
        });
        verifier.verify_diagnostic(diagnostic, request);
    }
    let refused = diagnostics
        .iter()
        .filter(|d| d.verify.as_ref().is_some_and(|v| v["refused"] == true))
        .map(|d| {
            let location = d
                .file
                .display_location(d.file.location(d.span.start as usize));
            let why = d.verify.as_ref().and_then(|v| {
                v.get("skipped")
                    .or_else(|| v.get("error"))
                    .and_then(|w| w.as_str())
            });
            FileError {
                location: None,
                path: d.file.path.clone(),
                message: format!(
                    "{location}: {}: --verify did not measure this finding: {}",
                    d.code,
                    why.unwrap_or("refused")
                ),
            }
        })
        .collect();
    let bugs = verifier.disagreements();
    if bugs > 0 {
        eprintln!(
            "error: --verify: the concrete algorithm contradicts {bugs} finding{} at sizes its assumptions allow; this is a stridelint bug, please report it",
            if bugs == 1 { "" } else { "s" }
        );
    }
    Ok(refused)
}

/// Each hidden copy whose sizes are all known says how large it is (a note), from the
/// code's literals and the `dims`/`dtype`/`layers` of the configuration and the command
/// line; those under `hidden-copy-min-bytes` are dropped (a note on stderr counts them).
fn state_copy_sizes(
    diagnostics: &mut Vec<Diagnostic>,
    args: &VerifyArgs,
    settings_for: &dyn Fn(&Path) -> Option<Arc<Settings>>,
) {
    let dropped = verify_findings::state_copy_sizes(diagnostics, args.verify.is_none(), &|d| {
        args.sizing(
            &settings_for(&d.file.path).unwrap_or_default(),
            &d.file.text,
        )
    });
    if dropped > 0 {
        eprintln!(
            "note: {dropped} hidden cop{} smaller than `hidden-copy-min-bytes` at the known sizes not reported (set it to 0 to see every copy)",
            if dropped == 1 { "y" } else { "ies" }
        );
    }
}

fn choice_name(choice: EngineChoice) -> &'static str {
    match choice {
        EngineChoice::Auto => "auto",
        EngineChoice::Cpu => "cpu",
        EngineChoice::Cuda => "cuda",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stridelint::settings::VerifyInputs;

    #[test]
    fn the_command_line_overrides_the_configuration() {
        let mut analysis = stridelint::analysis::AnalysisSettings::default();
        analysis.assumptions.min_symbolic_size = 3;
        let settings = Settings {
            analysis,
            verify: VerifyInputs {
                dims: [("B".to_string(), 8), ("T".to_string(), 512)]
                    .into_iter()
                    .collect(),
                dtype: Some(DType::BF16),
                layers: Some(12),
                hidden_copy_min_bytes: None,
            },
            ..Settings::default()
        };
        let args = VerifyArgs {
            dims: vec![("T".into(), 4096)],
            layers: Some(32),
            ..VerifyArgs::default()
        };
        let request = args.request(&settings, "");
        assert_eq!(request.dims["B"], 8);
        assert_eq!(request.dims["T"], 4096);
        assert_eq!(request.dtype, DType::BF16);
        assert_eq!((request.layers, request.min_symbolic_size), (32, 3));
        let plain = VerifyArgs::default().request(&Settings::default(), "");
        assert_eq!((plain.dtype, plain.layers), (DType::F32, 1));
    }
}
