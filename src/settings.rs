//! Configuration: `stridelint.toml` (or `.stridelint.toml`), or `[tool.stridelint]` in
//! `pyproject.toml`. As in Ruff, the closest configuration file above a linted file
//! applies to it; `extend = "../base.toml"` inherits from another file; CLI flags
//! override everything; `--config FILE` uses one file for all.
//!
//! Keys are kebab-case. An unknown key or a value of the wrong type is an error that names
//! the file, the key and the expected type.
//!
//! The pieces, in the order a run uses them:
//! - [`Config`]: one file's table, parsed and validated ([`parse_config_file`]), with its
//!   `extend` chain merged ([`load_config`]);
//! - [`ConfigResolver`]: which configuration applies to a file (closest one wins);
//! - [`SettingsResolver`]: the per-file [`Settings`] the library lints with — defaults,
//!   then the file's configuration, then the command line, then `per-file-ignores` — plus
//!   what decides discovery (`exclude`, `respect-gitignore`, `--force-exclude`).

mod rule_selection;
mod toml_location;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use globset::{Glob, GlobSet, GlobSetBuilder};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use serde::Deserialize;

pub use rule_selection::{enabled_codes, SelectionLayer};

use crate::analysis::AnalysisSettings;
use crate::discover::DiscoverOptions;
use crate::layout::candle::CandleBackend;
use crate::verify::DType;

/// What to check and how.
#[derive(Debug, Clone)]
pub struct Settings {
    pub analysis: AnalysisSettings,
    /// Rule codes (or prefixes like `SL00`) to report; empty = all.
    pub select: Vec<String>,
    pub ignore: Vec<String>,
    pub discover: DiscoverOptions,
    /// Concrete sizes, dtype and layer count for `--verify` (config `dims`, `dtype`, `layers`).
    pub verify: VerifyInputs,
    /// Which candle matmul rule applies (config `candle-backend`; default cuBLAS's).
    pub candle_backend: CandleBackend,
    /// `--ignore-noqa`: suppression comments hide nothing (and SL100 does not run).
    pub ignore_noqa: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            analysis: AnalysisSettings::default(),
            select: Vec::new(),
            ignore: Vec::new(),
            discover: DiscoverOptions {
                respect_gitignore: true,
                ..Default::default()
            },
            verify: VerifyInputs::default(),
            candle_backend: CandleBackend::Cuda,
            ignore_noqa: false,
        }
    }
}

impl Settings {
    /// Is `code` enabled by `select`/`ignore` (longest matching prefix wins, as in Ruff)?
    pub fn is_enabled(&self, code: &str) -> bool {
        let best = |list: &[String]| {
            list.iter()
                .filter(|p| code.starts_with(p.as_str()) || p.as_str() == "ALL")
                .map(|p| if p == "ALL" { 0 } else { p.len() })
                .max()
        };
        let sel = if self.select.is_empty() {
            Some(0)
        } else {
            best(&self.select)
        };
        match (sel, best(&self.ignore)) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(s), Some(i)) => s > i,
        }
    }
}

/// The `[tool.stridelint]` table / a `stridelint.toml` file. Every field is optional:
/// unset fields inherit (from `extend`) or take the default. The command line's overrides
/// are a `Config` too, layered on top.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// Another configuration file this one inherits from (relative to this file).
    pub extend: Option<PathBuf>,
    pub select: Option<Vec<String>>,
    pub extend_select: Option<Vec<String>>,
    pub ignore: Option<Vec<String>>,
    /// Glob (relative to the configuration's directory) → codes ignored in matching files.
    pub per_file_ignores: Option<BTreeMap<String, Vec<String>>>,
    /// Gitignore-style patterns (relative to the configuration's directory) of files and
    /// directories not to lint, in addition to the built-in ones (`.git`, `.venv`, …).
    pub exclude: Option<Vec<String>>,
    pub extend_exclude: Option<Vec<String>>,
    pub respect_gitignore: Option<bool>,
    /// Assumption: tensors entering a function as parameters are contiguous (default true).
    /// The analysis cannot drop this assumption yet, so `false` is rejected.
    pub assume_contiguous_args: Option<bool>,
    /// Assumption: the smallest value of a named size (default 2).
    pub min_symbolic_size: Option<i64>,
    /// Follow calls of names imported from other files of the tree (default false).
    pub follow_imports: Option<bool>,
    /// Sizes for `--verify`: `{ B = 16, T = 4096 }`.
    pub dims: Option<BTreeMap<String, i64>>,
    /// Element type for `--verify`: `bf16`, `f16`, `f32`, ...
    pub dtype: Option<String>,
    /// Layers per forward pass, for `--verify` totals.
    pub layers: Option<u32>,
    /// Hidden copies (SL002) of known size smaller than this are not reported: a byte
    /// count (`1048576`, `0` to report every copy) or a size (`"1 MiB"`, `"512K"`).
    pub hidden_copy_min_bytes: Option<ByteCount>,
    /// Which candle matmul rule applies: `cuda` (default), `mkl`/`accelerate` or `cpu`.
    pub candle_backend: Option<String>,
    /// The least severity that fails the run (exit 1): `error` (default), `warning` or
    /// `info`. Read from the configuration of the current directory (or `--config`), as
    /// `respect-gitignore` is: it is about the run, not a file.
    pub fail_on: Option<FailOn>,
    /// The rule-selection layers of the `extend` chain, base first: filled by
    /// [`load_config`], because selection does not merge like the other keys (see
    /// `rule_selection`). Not a key of the file; leave it empty in a hand-built `Config`
    /// such as the CLI's overrides, whose own `select`/`ignore` are used.
    #[serde(skip)]
    pub selection_layers: Vec<SelectionLayer>,
}

/// `fail-on` / `--fail-on`: the least severity whose findings fail the run, as ESLint's
/// and Clippy's gates: by default errors do and warnings do not; `warning` makes warnings
/// fail too; `info` makes every finding fail (SL900's infos included).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    /// Errors fail the run; warnings and infos do not (the default).
    #[default]
    Error,
    /// Errors and warnings fail the run.
    Warning,
    /// Every finding fails the run.
    Info,
}

impl FailOn {
    pub fn as_str(self) -> &'static str {
        match self {
            FailOn::Error => "error",
            FailOn::Warning => "warning",
            FailOn::Info => "info",
        }
    }
}

/// A number of bytes as a configuration spells it: an integer, or a size with a unit.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum ByteCount {
    Bytes(u64),
    Text(String),
}

impl ByteCount {
    pub fn bytes(&self) -> Result<u64, String> {
        match self {
            ByteCount::Bytes(n) => Ok(*n),
            ByteCount::Text(text) => crate::verify::budget::parse_byte_size(text),
        }
    }
}

/// The largest `min-symbolic-size`: a floor above it is no size every named dimension has,
/// and the decisions' exact 128-bit arithmetic must hold products of several sizes at
/// least that large (at 2^32 it overflows and findings silently disappear).
pub const MAX_MIN_SYMBOLIC_SIZE: i64 = 1 << 16;

/// The default of `hidden-copy-min-bytes`: a copy under 1 MiB is not worth a warning.
pub const DEFAULT_HIDDEN_COPY_MIN_BYTES: u64 = 1 << 20;

/// A configuration that could not be used: unreadable, not TOML, an unknown key, a value
/// of the wrong type or out of range. `path` is the file, or the command-line flag for
/// errors in overrides (`--select`).
#[derive(Debug, Clone)]
pub struct ConfigError {
    pub path: PathBuf,
    /// 1-based line and column in the file of the offending key or value, when known.
    pub location: Option<(usize, usize)>,
    pub message: String,
}

impl ConfigError {
    /// An error about the file or flag `path` as a whole.
    pub fn new(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        ConfigError {
            path: path.into(),
            location: None,
            message: message.into(),
        }
    }

    /// Where the error is: `stridelint.toml:3:7`, or the file (flag) alone.
    pub fn place(&self) -> String {
        match self.location {
            Some((line, column)) => format!("{}:{line}:{column}", display_path(&self.path)),
            None => display_path(&self.path),
        }
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.place(), self.message)
    }
}

/// An error in a configuration's text: the message (naming the full key) and the line and
/// column of the key or value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextError {
    pub message: String,
    pub location: Option<(usize, usize)>,
}

impl std::error::Error for ConfigError {}

/// `path` relative to the current directory when it lies below it (how users wrote it).
pub fn display_path(path: &Path) -> String {
    let relative = std::env::current_dir()
        .ok()
        .and_then(|cwd| {
            let cwd = cwd.canonicalize().unwrap_or(cwd);
            path.strip_prefix(&cwd).ok().map(Path::to_path_buf)
        })
        .unwrap_or_else(|| path.to_path_buf());
    match relative.as_os_str().is_empty() {
        true => ".".to_string(),
        false => relative.display().to_string(),
    }
}

impl Config {
    /// `self` on top of `base`: fields set here win; `extend-*` lists accumulate.
    fn over(self, base: Config) -> Config {
        Config {
            extend: None,
            select: self.select.or(base.select),
            extend_select: concat(base.extend_select, self.extend_select),
            ignore: self.ignore.or(base.ignore),
            per_file_ignores: self.per_file_ignores.or(base.per_file_ignores),
            exclude: self.exclude.or(base.exclude),
            extend_exclude: concat(base.extend_exclude, self.extend_exclude),
            respect_gitignore: self.respect_gitignore.or(base.respect_gitignore),
            assume_contiguous_args: self.assume_contiguous_args.or(base.assume_contiguous_args),
            min_symbolic_size: self.min_symbolic_size.or(base.min_symbolic_size),
            follow_imports: self.follow_imports.or(base.follow_imports),
            dims: self.dims.or(base.dims),
            dtype: self.dtype.or(base.dtype),
            layers: self.layers.or(base.layers),
            hidden_copy_min_bytes: self.hidden_copy_min_bytes.or(base.hidden_copy_min_bytes),
            candle_backend: self.candle_backend.or(base.candle_backend),
            fail_on: self.fail_on.or(base.fail_on),
            selection_layers: base
                .selection_layers
                .into_iter()
                .chain(self.selection_layers)
                .collect(),
        }
    }

    /// This table's own `select`/`extend-select`/`ignore`, as one selection layer.
    pub fn own_selection_layer(&self) -> SelectionLayer {
        SelectionLayer {
            select: self.select.clone(),
            extend_select: self.extend_select.clone().unwrap_or_default(),
            ignore: self.ignore.clone().unwrap_or_default(),
        }
    }

    /// Upper-case rule selectors and check every value a type cannot check: selectors
    /// name known rules, sizes are positive, `dtype` and `candle-backend` are known names.
    /// The message names the key.
    pub fn validate(&mut self) -> Result<(), String> {
        self.check_values()
            .map_err(|(key, message)| format!("{}: {message}", dotted(&key)))
    }

    /// [`Self::validate`], with the failing key as its segments and the message without it.
    fn check_values(&mut self) -> Result<(), (Vec<String>, String)> {
        let key = |segments: &[&str]| segments.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let known = known_codes();
        let selector_lists = [
            ("select", self.select.as_mut()),
            ("extend-select", self.extend_select.as_mut()),
            ("ignore", self.ignore.as_mut()),
        ];
        for (name, list) in selector_lists {
            for selector in list.into_iter().flatten() {
                *selector = rule_selection::normalize_selector(selector);
                rule_selection::check_selector(selector, &known).map_err(|e| (key(&[name]), e))?;
            }
        }
        for (name, list) in [
            ("exclude", &self.exclude),
            ("extend-exclude", &self.extend_exclude),
        ] {
            for pattern in list.iter().flatten() {
                check_exclude_pattern(pattern).map_err(|e| (key(&[name]), e))?;
            }
        }
        for (pattern, codes) in self.per_file_ignores.iter_mut().flatten() {
            Glob::new(pattern).map_err(|e| {
                (
                    key(&["per-file-ignores", pattern]),
                    format!("invalid glob `{pattern}`: {}", e.kind()),
                )
            })?;
            for code in codes.iter_mut() {
                *code = rule_selection::normalize_selector(code);
                rule_selection::check_selector(code, &known)
                    .map_err(|e| (key(&["per-file-ignores", pattern]), e))?;
            }
        }
        if self.assume_contiguous_args == Some(false) {
            return Err((
                key(&["assume-contiguous-args"]),
                "`false` is not supported yet (the analysis always assumes tensor parameters \
                 are contiguous)"
                    .into(),
            ));
        }
        if let Some(n) = self.min_symbolic_size {
            if !(1..=MAX_MIN_SYMBOLIC_SIZE).contains(&n) {
                return Err((
                    key(&["min-symbolic-size"]),
                    format!("expected an integer from 1 to {MAX_MIN_SYMBOLIC_SIZE}, found {n}"),
                ));
            }
        }
        for (name, &size) in self.dims.iter().flatten() {
            if size < 1 {
                return Err((
                    key(&["dims", name]),
                    format!("expected a size >= 1, found {size}"),
                ));
            }
        }
        if let Some(dtype) = &self.dtype {
            parse_dtype(dtype).map_err(|e| (key(&["dtype"]), e))?;
        }
        if let Some(backend) = &self.candle_backend {
            parse_candle_backend(backend).map_err(|e| (key(&["candle-backend"]), e))?;
        }
        if let Some(count) = &self.hidden_copy_min_bytes {
            count
                .bytes()
                .map_err(|e| (key(&["hidden-copy-min-bytes"]), e))?;
        }
        Ok(())
    }
}

fn concat(a: Option<Vec<String>>, b: Option<Vec<String>>) -> Option<Vec<String>> {
    match (a, b) {
        (None, None) => None,
        (x, y) => Some(
            x.unwrap_or_default()
                .into_iter()
                .chain(y.unwrap_or_default())
                .collect(),
        ),
    }
}

/// Every code a selector can name: the registered rules.
pub fn known_codes() -> Vec<&'static str> {
    crate::lints::RULES.iter().map(|r| r.code).collect()
}

fn parse_dtype(text: &str) -> Result<DType, String> {
    text.parse::<DType>().map_err(|_| {
        let names: Vec<&str> = DType::ALL.iter().map(|d| d.name()).collect();
        format!(
            "unknown dtype `{text}`, expected one of {}",
            names.join(", ")
        )
    })
}

fn parse_candle_backend(text: &str) -> Result<CandleBackend, String> {
    CandleBackend::parse(text).ok_or_else(|| {
        format!("unknown backend `{text}`, expected one of cuda, mkl, accelerate, cpu, metal")
    })
}

/// `pyproject.toml`, of which only `[tool.stridelint]` is ours: other tables are not
/// checked, ours is (unknown keys are errors there too).
#[derive(Deserialize)]
struct PyProject {
    tool: Option<PyProjectTools>,
}

#[derive(Deserialize)]
struct PyProjectTools {
    stridelint: Option<Config>,
}

/// Parse one configuration file (not following `extend`). For `pyproject.toml` the
/// `[tool.stridelint]` table is read; `Ok(None)` when it has none.
pub fn parse_config_file(path: &Path) -> Result<Option<Config>, ConfigError> {
    let text = crate::fsutil::read_regular_to_string(path)
        .map_err(|e| ConfigError::new(path, format!("cannot read: {e}")))?;
    let is_pyproject = path.file_name().is_some_and(|n| n == "pyproject.toml");
    parse_config_located(&text, is_pyproject).map_err(|e| ConfigError {
        path: path.to_path_buf(),
        location: e.location,
        message: e.message,
    })
}

/// [`parse_config_file`] of a file's text: a `stridelint.toml`, or with `is_pyproject` a
/// `pyproject.toml` whose `[tool.stridelint]` table is read.
pub fn parse_config_text(text: &str, is_pyproject: bool) -> Result<Option<Config>, String> {
    parse_config_located(text, is_pyproject).map_err(|e| e.message)
}

/// [`parse_config_text`], with the line and column of the error.
pub fn parse_config_located(text: &str, is_pyproject: bool) -> Result<Option<Config>, TextError> {
    let config = if is_pyproject {
        let doc: PyProject = toml::from_str(text).map_err(|e| describe_toml_error(&e, text))?;
        doc.tool.and_then(|t| t.stridelint)
    } else {
        Some(toml::from_str::<Config>(text).map_err(|e| describe_toml_error(&e, text))?)
    };
    let Some(mut config) = config else {
        return Ok(None);
    };
    config.check_values().map_err(|(key, message)| {
        // The key as written: under `[tool.stridelint]` in pyproject.toml.
        let mut full = key.clone();
        if is_pyproject {
            full.splice(0..0, ["tool".to_string(), "stridelint".to_string()]);
        }
        TextError {
            message: format!("{}: {message}", dotted(&key)),
            location: toml_location::offset_of(text, &full)
                .map(|offset| toml_location::line_column(text, offset)),
        }
    })?;
    Ok(Some(config))
}

/// A key path as TOML writes it: bare segments joined by dots, others quoted
/// (`per-file-ignores."tests/*.py"`).
fn dotted(key: &[String]) -> String {
    let bare = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    key.iter()
        .map(|s| match bare(s) {
            true => s.clone(),
            false => format!("{s:?}"),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// toml's message, with the full key in front when the message does not already name it
/// (a type error names only the types), Rust type names in words, and the line and column
/// of the span toml gives.
fn describe_toml_error(e: &toml::de::Error, text: &str) -> TextError {
    let message = e
        .message()
        .trim()
        .replace("expected i64", "expected an integer")
        .replace("expected u32", "expected a non-negative integer")
        .replace("expected a sequence", "expected an array")
        .replace("expected a map", "expected a table");
    let offset = e.span().map(|span| span.start);
    let key = offset.and_then(|offset| toml_location::key_at(text, offset));
    // In pyproject.toml our keys live under `tool.stridelint`; name them as in stridelint.toml.
    let key = key.map(|mut key| {
        if key.len() > 2 && key[0] == "tool" && key[1] == "stridelint" {
            key.drain(..2);
        }
        dotted(&key)
    });
    let message = match key {
        Some(key) if !message.contains("unknown field") && !message.contains("missing field") => {
            format!("{key}: {message}")
        }
        _ => message,
    };
    TextError {
        message,
        location: offset.map(|offset| toml_location::line_column(text, offset)),
    }
}

/// Load a configuration file and everything it `extend`s (cycles are an error).
pub fn load_config(path: &Path) -> Result<Option<Config>, ConfigError> {
    let mut seen: Vec<PathBuf> = Vec::new();
    load_chain(path, &mut seen)
}

fn load_chain(path: &Path, seen: &mut Vec<PathBuf>) -> Result<Option<Config>, ConfigError> {
    seen.push(path.canonicalize().unwrap_or_else(|_| path.to_path_buf()));
    let Some(mut cfg) = parse_config_file(path)? else {
        return Ok(None);
    };
    cfg.selection_layers = vec![cfg.own_selection_layer()];
    let Some(parent) = cfg.extend.clone() else {
        return Ok(Some(cfg));
    };
    // Errors about the file `extend` names are reported at the `extend` key that names it.
    let at_extend = |message: String| ConfigError {
        location: extend_location(path),
        path: path.to_path_buf(),
        message,
    };
    let parent_path = path.parent().unwrap_or(Path::new(".")).join(&parent);
    let named = format!("extend = \"{}\"", parent.display());
    if parent.as_os_str().is_empty() || parent_path.is_dir() {
        return Err(at_extend(format!(
            "{named} is a directory, not a configuration file (name the file: extend = \"../stridelint.toml\")"
        )));
    }
    if !parent_path.exists() {
        return Err(at_extend(format!(
            "{named}: no such file ({})",
            display_path(&parent_path)
        )));
    }
    let canonical = parent_path
        .canonicalize()
        .unwrap_or_else(|_| parent_path.clone());
    if seen.contains(&canonical) {
        return Err(at_extend(format!("{named} forms a cycle")));
    }
    let base = load_chain(&parent_path, seen)?.unwrap_or_default();
    Ok(Some(cfg.over(base)))
}

/// Line and column of the `extend` key in a configuration file (under `[tool.stridelint]`
/// in a `pyproject.toml`).
fn extend_location(path: &Path) -> Option<(usize, usize)> {
    let text = crate::fsutil::read_regular_to_string(path).ok()?;
    let key: Vec<String> = if path.file_name().is_some_and(|n| n == "pyproject.toml") {
        vec!["tool".into(), "stridelint".into(), "extend".into()]
    } else {
        vec!["extend".into()]
    };
    toml_location::offset_of(&text, &key).map(|offset| toml_location::line_column(&text, offset))
}

const CONFIG_NAMES: &[&str] = &["stridelint.toml", ".stridelint.toml", "pyproject.toml"];

/// The closest configuration file at or above `dir` (a `pyproject.toml` counts only if it
/// has a `[tool.stridelint]` table).
pub fn find_config(dir: &Path) -> Option<PathBuf> {
    let mut cur = Some(dir);
    while let Some(d) = cur {
        for name in CONFIG_NAMES {
            let p = d.join(name);
            // A FIFO or device under a configuration name is returned too, so that loading
            // it reports what it is instead of the file being skipped (or read forever).
            if crate::fsutil::exists_but_not_regular(&p).is_some_and(|kind| !kind.is_dir()) {
                return Some(p);
            }
            if p.is_file() {
                if *name == "pyproject.toml" {
                    let has = crate::fsutil::read_regular_to_string(&p)
                        .map(|t| t.contains("[tool.stridelint"))
                        .unwrap_or(false);
                    if !has {
                        continue;
                    }
                }
                return Some(p);
            }
        }
        cur = d.parent();
    }
    None
}

/// An `exclude` pattern the matcher cannot use (`[invalid`), which it would otherwise
/// drop without a word. Patterns are gitignore lines: a leading `!` negates.
pub fn check_exclude_pattern(pattern: &str) -> Result<(), String> {
    let glob = pattern.strip_prefix('!').unwrap_or(pattern);
    globset::GlobBuilder::new(glob)
        .literal_separator(true)
        .build()
        .map(drop)
        .map_err(|e| format!("invalid pattern `{pattern}`: {}", e.kind()))
}

/// Everything resolved for the files under one configuration.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub config: Config,
    /// Directory the configuration's relative paths are resolved against (canonical).
    pub root: PathBuf,
    /// The file it was loaded from (`None` for `--config`-less defaults).
    pub path: Option<PathBuf>,
    per_file: Vec<(GlobSet, Vec<String>)>,
    exclude: Gitignore,
}

impl Resolved {
    pub fn new(config: Config, root: PathBuf) -> Result<Resolved, ConfigError> {
        let root = root.canonicalize().unwrap_or(root);
        let err = |message: String| ConfigError {
            location: None,
            path: root.clone(),
            message,
        };
        let mut per_file = Vec::new();
        if let Some(map) = &config.per_file_ignores {
            for (pattern, codes) in map {
                let glob = Glob::new(pattern)
                    .map_err(|e| err(format!("per-file-ignores: invalid glob `{pattern}`: {e}")))?;
                let mut b = GlobSetBuilder::new();
                b.add(glob);
                if !pattern.contains('/') {
                    // A bare file pattern matches at any depth, as in Ruff.
                    if let Ok(g) = Glob::new(&format!("**/{pattern}")) {
                        b.add(g);
                    }
                }
                per_file.push((
                    b.build().unwrap_or_else(|_| GlobSet::empty()),
                    codes.clone(),
                ));
            }
        }
        let mut exclude = GitignoreBuilder::new(&root);
        for pattern in config
            .exclude
            .iter()
            .flatten()
            .chain(config.extend_exclude.iter().flatten())
        {
            exclude
                .add_line(None, pattern)
                .map_err(|e| err(format!("exclude: invalid pattern `{pattern}`: {e}")))?;
        }
        let exclude = exclude.build().map_err(|e| err(format!("exclude: {e}")))?;
        Ok(Resolved {
            config,
            root,
            path: None,
            per_file,
            exclude,
        })
    }

    /// Codes ignored for `file` (canonical) by `per-file-ignores`.
    pub fn ignored_for(&self, file: &Path) -> Vec<String> {
        let rel = file.strip_prefix(&self.root).unwrap_or(file);
        self.per_file
            .iter()
            .filter(|(g, _)| g.is_match(rel))
            .flat_map(|(_, c)| c.iter().cloned())
            .collect()
    }

    /// Does `exclude`/`extend-exclude` exclude `file` (canonical) or a directory above it?
    pub fn excludes(&self, file: &Path) -> bool {
        // The matcher asserts that the path lies below its root.
        file.starts_with(&self.root)
            && self
                .exclude
                .matched_path_or_any_parents(file, false)
                .is_ignore()
    }
}

/// Finds and caches the configuration for each directory.
pub struct ConfigResolver {
    /// `--config FILE`: one configuration for everything.
    fixed: Option<Arc<Resolved>>,
    /// Directory (canonical) → its closest configuration file.
    by_dir: Mutex<HashMap<PathBuf, Option<PathBuf>>>,
    /// Configuration file → loaded and resolved (each file is read once per run).
    by_file: Mutex<HashMap<PathBuf, Option<Arc<Resolved>>>>,
}

impl ConfigResolver {
    pub fn new(explicit: Option<&Path>) -> Result<ConfigResolver, ConfigError> {
        let fixed = match explicit {
            Some(p) => {
                if let Some(kind) = crate::fsutil::exists_but_not_regular(p) {
                    return Err(ConfigError {
                        location: None,
                        path: p.to_path_buf(),
                        message: crate::fsutil::not_regular(&kind).to_string(),
                    });
                }
                if !p.is_file() {
                    return Err(ConfigError {
                        location: None,
                        path: p.to_path_buf(),
                        message: "no such configuration file".into(),
                    });
                }
                let cfg = load_config(p)?.unwrap_or_default();
                let root = p
                    .parent()
                    .filter(|d| !d.as_os_str().is_empty())
                    .unwrap_or(Path::new("."))
                    .to_path_buf();
                let mut resolved = Resolved::new(cfg, root)?;
                resolved.path = Some(p.to_path_buf());
                Some(Arc::new(resolved))
            }
            None => None,
        };
        Ok(ConfigResolver {
            fixed,
            by_dir: Mutex::new(HashMap::new()),
            by_file: Mutex::new(HashMap::new()),
        })
    }

    /// The configuration that applies to files in `dir` (`None`: defaults only).
    pub fn for_dir(&self, dir: &Path) -> Result<Option<Arc<Resolved>>, ConfigError> {
        if let Some(f) = &self.fixed {
            return Ok(Some(f.clone()));
        }
        // Keyed by the directory as given too: canonicalising costs a system call per path
        // component, and every file of a directory asks twice (exclusion, then settings).
        let lookup = |key: &Path| {
            self.by_dir
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(key)
                .cloned()
        };
        let config_path = match lookup(dir) {
            Some(hit) => hit,
            None => {
                let canonical = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
                let found = lookup(&canonical).unwrap_or_else(|| find_config(&canonical));
                let mut by_dir = self.by_dir.lock().unwrap_or_else(|e| e.into_inner());
                by_dir.insert(dir.to_path_buf(), found.clone());
                by_dir.insert(canonical, found.clone());
                found
            }
        };
        let Some(config_path) = config_path else {
            return Ok(None);
        };
        if let Some(hit) = self
            .by_file
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&config_path)
        {
            return Ok(hit.clone());
        }
        let resolved = match load_config(&config_path)? {
            Some(cfg) => {
                let mut resolved = Resolved::new(
                    cfg,
                    config_path
                        .parent()
                        .map(Path::to_path_buf)
                        .unwrap_or_default(),
                )?;
                resolved.path = Some(config_path.clone());
                Some(Arc::new(resolved))
            }
            None => None,
        };
        self.by_file
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(config_path, resolved.clone());
        Ok(resolved)
    }

    /// The configuration that applies to `file` (`None`: defaults only).
    pub fn for_file(&self, file: &Path) -> Result<Option<Arc<Resolved>>, ConfigError> {
        let dir = file
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        self.for_dir(dir)
    }
}

/// Concrete inputs for `--verify`, from the configuration (`dims`, `dtype`, `layers`)
/// with command-line values on top.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyInputs {
    /// Named sizes, e.g. `B = 16`.
    pub dims: BTreeMap<String, i64>,
    pub dtype: Option<DType>,
    /// Layers per forward pass, to scale per-layer costs to a whole pass.
    pub layers: Option<u32>,
    /// `hidden-copy-min-bytes` (`None`: [`DEFAULT_HIDDEN_COPY_MIN_BYTES`]).
    pub hidden_copy_min_bytes: Option<u64>,
}

/// Where each file's [`Settings`] come from: with [`SettingsResolver::fixed`] always the
/// same; with [`SettingsResolver::from_cli`] the closest configuration file (or
/// `--config`) with the command line's overrides on top.
pub struct SettingsResolver {
    /// `None`: fixed settings, no configuration files.
    configs: Option<ConfigResolver>,
    /// The command line's values, the top layer.
    overrides: Config,
    force_exclude: bool,
    discover: DiscoverOptions,
    /// Settings without per-file ignores, per configuration file (`None`: no file).
    by_config: Mutex<HashMap<Option<PathBuf>, Arc<Settings>>>,
    fixed: Option<Arc<Settings>>,
    /// `--ignore-noqa`, for every file.
    ignore_noqa: bool,
    /// `--fail-on`, else the current directory's configuration's `fail-on`.
    fail_on: FailOn,
}

impl SettingsResolver {
    /// Every file gets `settings`; no configuration file is read.
    pub fn fixed(settings: Settings) -> Self {
        SettingsResolver {
            configs: None,
            overrides: Config::default(),
            force_exclude: settings.discover.force_exclude,
            discover: settings.discover.clone(),
            by_config: Mutex::new(HashMap::new()),
            ignore_noqa: settings.ignore_noqa,
            fixed: Some(Arc::new(settings)),
            fail_on: FailOn::default(),
        }
    }

    /// Settings as the CLI sees them: `overrides` holds the flags given (`--select`,
    /// `--ignore`, `--exclude`, `--min-symbolic-size`, …; unset flags stay `None`),
    /// `config_file` is `--config`. Discovery options come from the configuration of the
    /// current directory (or `--config`) and the flags. Fails on an invalid configuration
    /// there or an unknown rule in the flags.
    pub fn from_cli(
        mut overrides: Config,
        config_file: Option<&Path>,
        force_exclude: bool,
    ) -> Result<Self, ConfigError> {
        let known = known_codes();
        for (flag, list) in [
            ("--select", overrides.select.as_mut()),
            ("--extend-select", overrides.extend_select.as_mut()),
            ("--ignore", overrides.ignore.as_mut()),
        ] {
            for selector in list.into_iter().flatten() {
                *selector = rule_selection::normalize_selector(selector);
                rule_selection::check_selector(selector, &known).map_err(|message| {
                    ConfigError {
                        location: None,
                        path: PathBuf::from(flag),
                        message,
                    }
                })?;
            }
        }
        for (flag, list) in [
            ("--exclude", &overrides.exclude),
            ("--extend-exclude", &overrides.extend_exclude),
        ] {
            for pattern in list.iter().flatten() {
                check_exclude_pattern(pattern).map_err(|message| ConfigError {
                    location: None,
                    path: PathBuf::from(flag),
                    message,
                })?;
            }
        }
        let configs = ConfigResolver::new(config_file)?;
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let top = configs.for_dir(&cwd)?;
        let top_config = top.as_ref().map(|r| &r.config);
        let discover = DiscoverOptions {
            exclude: overrides
                .exclude
                .iter()
                .flatten()
                .chain(overrides.extend_exclude.iter().flatten())
                .cloned()
                .collect(),
            respect_gitignore: overrides
                .respect_gitignore
                .or(top_config.and_then(|c| c.respect_gitignore))
                .unwrap_or(true),
            force_exclude,
        };
        let fail_on = overrides
            .fail_on
            .or(top_config.and_then(|c| c.fail_on))
            .unwrap_or_default();
        Ok(SettingsResolver {
            configs: Some(configs),
            overrides,
            force_exclude,
            discover,
            by_config: Mutex::new(HashMap::new()),
            fixed: None,
            ignore_noqa: false,
            fail_on,
        })
    }

    /// `--ignore-noqa`: every file's suppression comments are ignored.
    pub fn with_ignore_noqa(mut self, on: bool) -> Self {
        self.ignore_noqa = on;
        self
    }

    /// The project's root: the directory of the configuration that applies to the current
    /// directory (or `--config`'s), else the current directory. The cache lives there.
    pub fn project_root(&self) -> PathBuf {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let top = self
            .configs
            .as_ref()
            .and_then(|c| c.for_dir(&cwd).ok().flatten());
        top.map(|r| r.root.clone()).unwrap_or(cwd)
    }

    /// The least severity that fails the run: `--fail-on`, else `fail-on` in the
    /// configuration of the current directory (or `--config`), else errors.
    pub fn fail_on(&self) -> FailOn {
        self.fail_on
    }

    /// How to walk the paths given on the command line.
    pub fn discover_options(&self) -> &DiscoverOptions {
        &self.discover
    }

    /// Should a discovered `file` be skipped because its configuration's `exclude` matches
    /// it? A file named on the command line (`explicit`) is linted anyway unless
    /// `--force-exclude`, as in Ruff (pre-commit passes every staged file by name).
    pub fn is_excluded(&self, file: &Path, explicit: bool) -> Result<bool, ConfigError> {
        let Some(configs) = &self.configs else {
            return Ok(false);
        };
        if explicit && !self.force_exclude {
            return Ok(false);
        }
        match configs.for_file(file)? {
            Some(resolved) => Ok(resolved.excludes(&canonical_file(file))),
            None => Ok(false),
        }
    }

    /// The settings `file` is linted with.
    pub fn settings_for(&self, file: &Path) -> Result<Arc<Settings>, ConfigError> {
        if let Some(fixed) = &self.fixed {
            return Ok(fixed.clone());
        }
        let configs = self
            .configs
            .as_ref()
            .expect("a resolver has fixed settings or configurations");
        let resolved = configs.for_file(file)?;
        let key = resolved.as_ref().and_then(|r| r.path.clone());
        let cached = self
            .by_config
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .cloned();
        let base = match cached {
            Some(base) => base,
            None => {
                let base = Arc::new(self.build(resolved.as_deref(), Vec::new()));
                self.by_config
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(key, base.clone());
                base
            }
        };
        let per_file = resolved
            .as_ref()
            .map(|r| r.ignored_for(&canonical_file(file)))
            .unwrap_or_default();
        if per_file.is_empty() {
            Ok(base)
        } else {
            Ok(Arc::new(self.build(resolved.as_deref(), per_file)))
        }
    }

    /// `--show-settings`: the settings `file` is linted with and the configuration file
    /// they come from, one `key = value` a line.
    pub fn describe_settings(&self, file: &Path) -> Result<String, ConfigError> {
        let settings = self.settings_for(file)?;
        let config = match &self.configs {
            Some(configs) => configs.for_file(file)?.and_then(|r| r.path.clone()),
            None => None,
        };
        let list = |items: &[String]| {
            let quoted: Vec<String> = items.iter().map(|i| format!("{i:?}")).collect();
            format!("[{}]", quoted.join(", "))
        };
        let enabled: Vec<String> = known_codes()
            .into_iter()
            .filter(|c| settings.is_enabled(c))
            .map(str::to_string)
            .collect();
        let dims: Vec<String> = settings
            .verify
            .dims
            .iter()
            .map(|(name, size)| format!("{name} = {size}"))
            .collect();
        let mut out = format!(
            "Resolved settings for: {}\nSettings path: {}\n\n",
            display_path(file),
            config.map_or("none (defaults)".to_string(), |p| display_path(&p))
        );
        let lines = [
            ("rules", list(&enabled)),
            (
                "min-symbolic-size",
                settings.analysis.assumptions.min_symbolic_size.to_string(),
            ),
            (
                "follow-imports",
                settings.analysis.follow_imports.to_string(),
            ),
            (
                "candle-backend",
                format!(
                    "\"{}\"",
                    format!("{:?}", settings.candle_backend).to_lowercase()
                ),
            ),
            (
                "dims",
                match dims.is_empty() {
                    true => "{}".to_string(),
                    false => format!("{{ {} }}", dims.join(", ")),
                },
            ),
            (
                "dtype",
                settings
                    .verify
                    .dtype
                    .map_or("none".to_string(), |d| format!("\"{}\"", d.name())),
            ),
            (
                "layers",
                settings
                    .verify
                    .layers
                    .map_or("none".to_string(), |n| n.to_string()),
            ),
            (
                "hidden-copy-min-bytes",
                settings
                    .verify
                    .hidden_copy_min_bytes
                    .unwrap_or(DEFAULT_HIDDEN_COPY_MIN_BYTES)
                    .to_string(),
            ),
            ("exclude", list(&settings.discover.exclude)),
            (
                "respect-gitignore",
                settings.discover.respect_gitignore.to_string(),
            ),
            ("force-exclude", settings.discover.force_exclude.to_string()),
            ("ignore-noqa", settings.ignore_noqa.to_string()),
            ("fail-on", format!("\"{}\"", self.fail_on.as_str())),
        ];
        for (key, value) in lines {
            out.push_str(&format!("{key} = {value}\n"));
        }
        Ok(out)
    }

    /// Defaults, then `resolved`'s configuration, then the overrides, then `per_file_ignores`.
    fn build(&self, resolved: Option<&Resolved>, per_file_ignores: Vec<String>) -> Settings {
        let file_config = resolved.map(|r| r.config.clone()).unwrap_or_default();
        let mut layers = file_config.selection_layers.clone();
        layers.push(self.overrides.own_selection_layer());
        layers.push(SelectionLayer::ignoring(per_file_ignores));
        let config = self.overrides.clone().over(file_config);

        let mut settings = Settings {
            discover: self.discover.clone(),
            ignore_noqa: self.ignore_noqa,
            ..Settings::default()
        };
        let enabled: Vec<String> = enabled_codes(&known_codes(), &layers)
            .into_iter()
            .map(str::to_string)
            .collect();
        // `Settings::is_enabled` reads an empty `select` as "everything"; an empty
        // selection is therefore spelled as "ignore all".
        settings.ignore = if enabled.is_empty() {
            vec![rule_selection::ALL.to_string()]
        } else {
            Vec::new()
        };
        settings.select = enabled;
        if let Some(n) = config.min_symbolic_size {
            settings.analysis.assumptions.min_symbolic_size = n;
        }
        if let Some(follow) = config.follow_imports {
            settings.analysis.follow_imports = follow;
        }
        // Values were validated when the file was parsed (and by the CLI's own parsers).
        settings.verify = VerifyInputs {
            dims: config.dims.unwrap_or_default(),
            dtype: config.dtype.as_deref().and_then(|d| parse_dtype(d).ok()),
            layers: config.layers,
            hidden_copy_min_bytes: config
                .hidden_copy_min_bytes
                .as_ref()
                .and_then(|c| c.bytes().ok()),
        };
        if let Some(backend) = config
            .candle_backend
            .as_deref()
            .and_then(|b| parse_candle_backend(b).ok())
        {
            settings.candle_backend = backend;
        }
        settings
    }
}

/// `file` with its directory canonicalized (the form configuration roots are in).
fn canonical_file(file: &Path) -> PathBuf {
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    match (dir.canonicalize(), file.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => file.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_key_and_wrong_type_name_the_file_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("stridelint.toml");
        std::fs::write(&p, "selectt = [\"SL001\"]\n").unwrap();
        let e = load_config(&p).unwrap_err();
        assert!(
            e.to_string().contains("stridelint.toml") && e.message.contains("selectt"),
            "{e}"
        );
        assert!(
            e.message
                .starts_with("unknown field `selectt`, expected one of"),
            "{e}"
        );
        std::fs::write(&p, "min-symbolic-size = \"two\"\n").unwrap();
        let e = load_config(&p).unwrap_err();
        assert_eq!(
            e.message,
            "min-symbolic-size: invalid type: string \"two\", expected an integer"
        );
        std::fs::write(&p, "[dims]\nB = \"x\"\n").unwrap();
        let e = load_config(&p).unwrap_err();
        assert!(e.message.starts_with("dims.B: invalid type"), "{e}");
    }

    #[test]
    fn values_types_cannot_check_are_validated() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("stridelint.toml");
        for (text, expected) in [
            (
                "select = [\"SL0009\"]\n",
                "select: unknown rule selector `SL0009`",
            ),
            ("dtype = \"f12\"\n", "dtype: unknown dtype `f12`"),
            (
                "candle-backend = \"tpu\"\n",
                "candle-backend: unknown backend `tpu`",
            ),
            (
                "min-symbolic-size = 0\n",
                "min-symbolic-size: expected an integer from 1 to 65536",
            ),
            (
                "min-symbolic-size = 4294967296\n",
                "min-symbolic-size: expected an integer from 1 to 65536, found 4294967296",
            ),
            (
                "exclude = [\"gen/\", \"[invalid\"]\n",
                "exclude: invalid pattern `[invalid`",
            ),
            (
                "[per-file-ignores]\n\"a.py\" = [\"XX1\"]\n",
                "per-file-ignores.\"a.py\": unknown rule selector `XX1`",
            ),
        ] {
            std::fs::write(&p, text).unwrap();
            let e = load_config(&p).unwrap_err();
            assert!(e.message.starts_with(expected), "{text}: {e}");
        }
        std::fs::write(&p, "select = [\"sl001\"]\ndtype = \"torch.bfloat16\"\n").unwrap();
        let cfg = load_config(&p).unwrap().unwrap();
        assert_eq!(cfg.select, Some(vec!["SL001".to_string()]));
    }

    #[test]
    fn pyproject_section_and_extend_chain() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join("base.toml"),
            "ignore = [\"SL002\"]\nmin-symbolic-size = 3\nextend-select = [\"SL001\"]\n",
        )
        .unwrap();
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        std::fs::write(
            root.join("pkg/pyproject.toml"),
            "[project]\nname = \"x\"\n[tool.stridelint]\nextend = \"../base.toml\"\nmin-symbolic-size = 4\nextend-select = [\"SL003\"]\n",
        )
        .unwrap();
        let found = find_config(&root.join("pkg")).unwrap();
        assert!(found.ends_with("pkg/pyproject.toml"));
        let cfg = load_config(&found).unwrap().unwrap();
        assert_eq!(cfg.min_symbolic_size, Some(4));
        assert_eq!(cfg.ignore, Some(vec!["SL002".to_string()]));
        assert_eq!(
            cfg.extend_select,
            Some(vec!["SL001".to_string(), "SL003".to_string()])
        );
        assert_eq!(cfg.selection_layers.len(), 2);
        assert_eq!(cfg.selection_layers[0].ignore, vec!["SL002".to_string()]);
    }

    #[test]
    fn pyproject_errors_point_into_the_tool_table() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pyproject.toml");
        std::fs::write(
            &p,
            "[tool.black]\nline-length = 100\n[tool.stridelint]\nlayers = \"many\"\n",
        )
        .unwrap();
        let e = load_config(&p).unwrap_err();
        assert!(
            e.message
                .starts_with("layers: invalid type: string \"many\""),
            "{e}"
        );
        std::fs::write(&p, "[tool.black]\nline-length = 100\n").unwrap();
        assert!(load_config(&p).unwrap().is_none());
    }

    #[test]
    fn closest_config_wins_and_per_file_ignores_match() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("stridelint.toml"), "select = [\"SL001\"]\n").unwrap();
        std::fs::write(
            root.join("a/stridelint.toml"),
            "select = [\"SL002\"]\n[per-file-ignores]\n\"test_*.py\" = [\"SL002\"]\n",
        )
        .unwrap();
        let r = ConfigResolver::new(None).unwrap();
        let inner = r.for_file(&root.join("a/b/m.py")).unwrap().unwrap();
        assert_eq!(inner.config.select, Some(vec!["SL002".to_string()]));
        let outer = r.for_file(&root.join("m.py")).unwrap().unwrap();
        assert_eq!(outer.config.select, Some(vec!["SL001".to_string()]));
        let canon = std::fs::canonicalize(root.join("a")).unwrap();
        assert_eq!(
            inner.ignored_for(&canon.join("b/test_x.py")),
            vec!["SL002".to_string()]
        );
        assert!(inner.ignored_for(&canon.join("b/x.py")).is_empty());
    }

    #[test]
    fn extend_cycle_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.toml"), "extend = \"b.toml\"\n").unwrap();
        std::fs::write(dir.path().join("b.toml"), "extend = \"a.toml\"\n").unwrap();
        assert!(load_config(&dir.path().join("a.toml"))
            .unwrap_err()
            .message
            .contains("cycle"));
    }

    /// An `extend` that names a missing file, or closes a cycle, is reported at the key.
    #[test]
    fn a_broken_extend_is_reported_at_its_key() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.toml"),
            "select = [\"SL001\"]\nextend = \"nope.toml\"\n",
        )
        .unwrap();
        let missing = load_config(&dir.path().join("a.toml")).unwrap_err();
        assert_eq!(missing.location, Some((2, 10)), "{}", missing.message);
        assert!(
            missing
                .message
                .contains("extend = \"nope.toml\": no such file"),
            "{}",
            missing.message
        );
        std::fs::write(dir.path().join("b.toml"), "extend = \"c.toml\"\n").unwrap();
        std::fs::write(dir.path().join("c.toml"), "\n\nextend = \"b.toml\"\n").unwrap();
        let cycle = load_config(&dir.path().join("b.toml")).unwrap_err();
        assert!(cycle.place().ends_with("c.toml:3:10"), "{}", cycle.place());
    }

    #[test]
    fn settings_layer_config_cli_and_per_file_ignores() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join("stridelint.toml"),
            "ignore = [\"SL002\"]\nmin-symbolic-size = 3\ndims = { B = 16 }\ndtype = \"bf16\"\nlayers = 12\n\
             candle-backend = \"cpu\"\n[per-file-ignores]\n\"tests/*.py\" = [\"SL001\"]\n",
        )
        .unwrap();
        let config = Some(root.join("stridelint.toml"));
        let cli = Config {
            extend_select: Some(vec!["sl002".into()]),
            ..Config::default()
        };
        let resolver = SettingsResolver::from_cli(cli, config.as_deref(), false).unwrap();
        let s = resolver.settings_for(&root.join("model.py")).unwrap();
        assert!(
            s.is_enabled("SL001") && s.is_enabled("SL002"),
            "CLI extend-select re-enables: {:?}",
            s.select
        );
        assert_eq!(s.analysis.assumptions.min_symbolic_size, 3);
        assert_eq!(s.verify.dims.get("B"), Some(&16));
        assert_eq!(s.verify.dtype, Some(DType::BF16));
        assert_eq!(s.verify.layers, Some(12));
        assert_eq!(s.candle_backend, CandleBackend::Cpu);
        std::fs::create_dir_all(root.join("tests")).unwrap();
        let t = resolver
            .settings_for(&root.join("tests/test_model.py"))
            .unwrap();
        assert!(!t.is_enabled("SL001") && t.is_enabled("SL002"));

        let cli = Config {
            select: Some(vec!["SL003".into()]),
            min_symbolic_size: Some(5),
            ..Config::default()
        };
        let resolver = SettingsResolver::from_cli(cli, config.as_deref(), false).unwrap();
        let s = resolver.settings_for(&root.join("model.py")).unwrap();
        assert!(s.is_enabled("SL003") && !s.is_enabled("SL001") && !s.is_enabled("SL002"));
        assert_eq!(s.analysis.assumptions.min_symbolic_size, 5);

        let cli = Config {
            select: Some(vec![]),
            ..Config::default()
        };
        let resolver = SettingsResolver::from_cli(cli, config.as_deref(), false).unwrap();
        let s = resolver.settings_for(&root.join("model.py")).unwrap();
        assert!(known_codes().iter().all(|c| !s.is_enabled(c)));
    }

    #[test]
    fn fixed_settings_ignore_configuration_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("stridelint.toml"),
            "exclude = [\"*.py\"]\nignore = [\"SL001\"]\n",
        )
        .unwrap();
        let file = dir.path().join("m.py");
        let resolver = SettingsResolver::fixed(Settings::default());
        assert!(!resolver.is_excluded(&file, false).unwrap());
        let settings = resolver.settings_for(&file).unwrap();
        assert!(settings.is_enabled("SL001"));
        assert!(Arc::ptr_eq(
            &settings,
            &resolver.settings_for(&dir.path().join("other.py")).unwrap()
        ));
    }

    #[test]
    fn unknown_rules_on_the_command_line_name_the_flag() {
        let cli = Config {
            ignore: Some(vec!["SL0X".into()]),
            ..Config::default()
        };
        let e = SettingsResolver::from_cli(cli, None, false).err().unwrap();
        assert_eq!(
            e.to_string(),
            "--ignore: unknown rule selector `SL0X` (see `stridelint rules`)"
        );
    }

    #[test]
    fn excludes_apply_below_the_config_and_to_explicit_files_only_when_forced() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("gen/deep")).unwrap();
        std::fs::write(
            root.join("stridelint.toml"),
            "exclude = [\"gen/\"]\nextend-exclude = [\"*_pb2.py\"]\n",
        )
        .unwrap();
        let config = root.join("stridelint.toml");
        let resolver = SettingsResolver::from_cli(Config::default(), Some(&config), false).unwrap();
        assert!(resolver
            .is_excluded(&root.join("gen/deep/m.py"), false)
            .unwrap());
        assert!(resolver.is_excluded(&root.join("x_pb2.py"), false).unwrap());
        assert!(!resolver.is_excluded(&root.join("m.py"), false).unwrap());
        assert!(!resolver
            .is_excluded(&root.join("gen/deep/m.py"), true)
            .unwrap());
        let forced = SettingsResolver::from_cli(Config::default(), Some(&config), true).unwrap();
        assert!(forced
            .is_excluded(&root.join("gen/deep/m.py"), true)
            .unwrap());
    }
}
