//! stridelint: a static analyzer for tensor layout bugs and hidden copies in PyTorch,
//! candle and tch-rs model code. See `ARCHITECTURE.md` for the map of the code.
//!
//! The library's face is [`check_paths`] (lint files and directories) and
//! [`check_source`] (lint one in-memory file); `main.rs` is only the CLI around them.

pub mod analysis;
pub mod diagnostic;
pub mod discover;
pub mod fix;
pub mod frontend;
pub mod ir;
pub mod layout;
pub mod lints;
pub mod ops;
pub mod report;
pub mod settings;
pub mod source;
pub mod verify;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use analysis::AnalysisSettings;
use diagnostic::{Diagnostic, Severity};
use ir::Span;
use source::SourceFile;

/// Files larger than this are reported and skipped (tree-sitter and the interpreter are
/// linear, but a 100 MB generated file is not model code).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// What to check and how.
#[derive(Debug, Clone)]
pub struct Settings {
    pub analysis: AnalysisSettings,
    /// Rule codes (or prefixes like `SL00`) to report; empty = all.
    pub select: Vec<String>,
    pub ignore: Vec<String>,
    pub discover: discover::DiscoverOptions,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            analysis: AnalysisSettings::default(),
            select: Vec::new(),
            ignore: Vec::new(),
            discover: discover::DiscoverOptions { respect_gitignore: true, ..Default::default() },
        }
    }
}

impl Settings {
    /// Is `code` enabled by `select`/`ignore` (longest matching prefix wins, as in Ruff)?
    pub fn is_enabled(&self, code: &str) -> bool {
        let best = |list: &[String]| list.iter().filter(|p| code.starts_with(p.as_str()) || p.as_str() == "ALL").map(|p| if p == "ALL" { 0 } else { p.len() }).max();
        let sel = if self.select.is_empty() { Some(0) } else { best(&self.select) };
        match (sel, best(&self.ignore)) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(s), Some(i)) => s > i,
        }
    }
}

/// A file that could not be linted (I/O error, not UTF-8, too large).
#[derive(Debug, Clone)]
pub struct FileError {
    pub path: PathBuf,
    pub message: String,
}

#[derive(Debug, Default)]
pub struct CheckResult {
    pub diagnostics: Vec<Diagnostic>,
    pub errors: Vec<FileError>,
    pub files_checked: usize,
}

/// Code of the pseudo-rule under which syntax errors are reported.
pub const SYNTAX_ERROR_CODE: &str = "SL999";

/// Lint every lintable file under `paths`, in parallel.
pub fn check_paths(paths: &[PathBuf], settings: &Settings) -> CheckResult {
    let (files, walk_errors) = discover::discover(paths, &settings.discover);
    let mut result = CheckResult {
        errors: walk_errors.into_iter().map(|e| FileError { path: e.path, message: e.message }).collect(),
        files_checked: files.len(),
        ..Default::default()
    };
    let per_file: Vec<Result<Vec<Diagnostic>, FileError>> =
        files.par_iter().map(|p| check_file(p, settings)).collect();
    for r in per_file {
        match r {
            Ok(d) => result.diagnostics.extend(d),
            Err(e) => result.errors.push(e),
        }
    }
    result
}

/// Read and lint one file.
pub fn check_file(path: &Path, settings: &Settings) -> Result<Vec<Diagnostic>, FileError> {
    let err = |message: String| FileError { path: path.to_path_buf(), message };
    let meta = std::fs::metadata(path).map_err(|e| err(e.to_string()))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(err(format!("file is {} MiB, larger than the {} MiB limit", meta.len() >> 20, MAX_FILE_BYTES >> 20)));
    }
    let bytes = std::fs::read(path).map_err(|e| err(e.to_string()))?;
    if bytes.contains(&0) {
        return Err(err("binary file (contains NUL bytes)".into()));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        err(format!("not valid UTF-8 (invalid byte at offset {})", e.utf8_error().valid_up_to()))
    })?;
    Ok(check_source(path, text, settings))
}

/// Lint one in-memory source file. The language is chosen by extension (`.rs` → Rust).
pub fn check_source(path: &Path, text: String, settings: &Settings) -> Vec<Diagnostic> {
    let is_rust = path.extension().is_some_and(|e| e == "rs");
    if is_rust {
        // The Rust frontend arrives with the candle/tch-rs tables.
        return Vec::new();
    }
    if !frontend::python::may_contain_layout_ops(&text) {
        return Vec::new();
    }
    let file = Arc::new(SourceFile::new(path, text));
    if file.is_file_exempt() {
        return Vec::new();
    }
    let parsed = frontend::python::parse_python(&file.text);
    let mut diagnostics = Vec::new();
    if let Some(e) = parsed.errors.first() {
        diagnostics.push(syntax_error(&file, e.span, &e.message));
    }
    if std::env::var_os("STRIDELINT_PARSE_ONLY").is_some() { return diagnostics; }
    let events = analysis::analyze_module(&parsed.module, &file.text, &settings.analysis);
    if std::env::var_os("STRIDELINT_DEBUG_EVENTS").is_some() {
        // Debugging aid: every op call the interpreter reached, with its outcomes.
        for ev in &events {
            let loc = file.location(ev.span.start as usize);
            eprintln!("{}:{}:{} {} ({}) unknown_input={}", file.path.display(), loc.row, loc.column, ev.op, ev.kind, ev.unknown_input);
            for o in &ev.outcomes {
                eprintln!("    in {} -> {:?} copies={:?}", analysis::value::format_layout(&o.input.layout), o.outcome, o.copies);
            }
        }
    }
    let ctx = lints::LintContext { file: file.clone() };
    diagnostics.extend(lints::run_lints(&events, &ctx));
    diagnostics.retain(|d| settings.is_enabled(d.code) && file.suppression_for(d.code, d.span).is_none());
    diagnostics
}

fn syntax_error(file: &Arc<SourceFile>, span: Span, message: &str) -> Diagnostic {
    Diagnostic {
        code: SYNTAX_ERROR_CODE,
        severity: Severity::Error,
        message: format!("syntax error: {message} (the rest of the file is analysed as far as it parses)"),
        file: file.clone(),
        span,
        chain: Vec::new(),
        notes: Vec::new(),
        help: None,
        fix: None,
        verify: None,
        subject: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn select_and_ignore_follow_longest_prefix() {
        let mut s = Settings::default();
        assert!(s.is_enabled("SL001"));
        s.ignore = vec!["SL00".into()];
        assert!(!s.is_enabled("SL001"));
        s.select = vec!["SL001".into()];
        assert!(s.is_enabled("SL001"));
        assert!(!s.is_enabled("SL002"));
    }
}
