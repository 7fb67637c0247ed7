//! stridelint: a static analyzer for tensor layout bugs and hidden copies in PyTorch,
//! candle and tch-rs model code. See `ARCHITECTURE.md` for the map of the code.
//!
//! The library's face is [`check_paths`] (lint files and directories) and
//! [`check_source`] (lint one in-memory file); `main.rs` is only the CLI around them.

pub mod analysis;
pub mod cache;
pub mod contain;
pub mod coverage;
pub mod diagnostic;
pub mod discover;
pub mod fix;
pub mod frontend;
pub mod fsutil;
pub mod ir;
pub mod layout;
pub mod lints;
pub mod noqa;
pub mod notebook;
pub mod ops;
pub mod pipeline;
pub mod progress;
pub mod project;
pub mod report;
pub mod runner;
pub mod server;
pub mod settings;
pub mod source;
pub mod suppression;
pub mod unused_suppression;
pub mod verify;
pub mod verify_findings;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use diagnostic::Diagnostic;
use source::SourceFile;

pub use fsutil::MAX_FILE_BYTES;
pub use settings::Settings;

/// A file that could not be linted (I/O error, not UTF-8, too large).
#[derive(Debug, Clone)]
pub struct FileError {
    pub path: PathBuf,
    /// 1-based line and column in `path` (a configuration error's key), when known.
    pub location: Option<(usize, usize)>,
    pub message: String,
}

impl FileError {
    /// An error of the whole file `path` (no line).
    pub fn new(path: &Path, message: String) -> Self {
        FileError {
            path: path.to_path_buf(),
            location: None,
            message,
        }
    }

    /// How messages name the error's place: `path`, or `path:line:column` (as the reports
    /// name files: `src/model.py`, never `./src/model.py`).
    pub fn place(&self) -> String {
        let path = match self.path.strip_prefix(".") {
            Ok(rest) if !rest.as_os_str().is_empty() => rest,
            _ => &self.path,
        };
        match self.location {
            Some((line, column)) => format!("{}:{line}:{column}", path.display()),
            None => path.display().to_string(),
        }
    }
}

#[derive(Debug, Default)]
pub struct CheckResult {
    pub diagnostics: Vec<Diagnostic>,
    pub errors: Vec<FileError>,
    pub files_checked: usize,
    /// What the analysis reached and decided (files served from the cache add nothing).
    pub sites: coverage::SiteCounts,
}

/// What linting one file gives.
#[derive(Debug, Default)]
pub struct FileReport {
    pub diagnostics: Vec<Diagnostic>,
    /// The file's analysed sites (none when the file was not analysed).
    pub sites: coverage::SiteCounts,
    /// Other files of the tree whose definitions the analysis used (path, blake3 of their
    /// bytes): the findings are stale when one of them changes.
    pub depends_on: Vec<(Arc<Path>, String)>,
    /// With `settings.analysis.probe` (the editor's hover and inlay hints): the layout of
    /// each tensor name where it was read or bound (see [`analysis::ModuleAnalysis::probes`]).
    pub probes: Vec<analysis::event::OpEvent>,
}

impl From<Vec<Diagnostic>> for FileReport {
    fn from(diagnostics: Vec<Diagnostic>) -> Self {
        FileReport {
            diagnostics,
            ..Default::default()
        }
    }
}

/// How a file's hidden copies are sized and which are too small to report, from its
/// settings (`dims`, `dtype`, `layers`, `hidden-copy-min-bytes`); the CLI puts `--dim` and
/// its other flags on top.
pub fn copy_sizing(settings: &Settings) -> verify_findings::CopySizing {
    let inputs = &settings.verify;
    verify_findings::CopySizing {
        request: verify_findings::VerifyRequest {
            dims: inputs.dims.clone(),
            dtype: inputs.dtype.unwrap_or(verify::DType::F32),
            layers: inputs.layers.map_or(1, u64::from).max(1),
            options: verify::MeasureOptions::default(),
            min_symbolic_size: settings.analysis.assumptions.min_symbolic_size,
        },
        dtype_given: inputs.dtype.is_some(),
        min_bytes: inputs
            .hidden_copy_min_bytes
            .unwrap_or(settings::DEFAULT_HIDDEN_COPY_MIN_BYTES),
    }
}

/// Lint every lintable file under `paths`, in parallel, each with the settings its closest
/// configuration and the command line give it (see [`settings::SettingsResolver`]).
pub fn check_paths(paths: &[PathBuf], settings: &settings::SettingsResolver) -> CheckResult {
    let (files, errors) = discover_files(paths, settings);
    let mut result = check_files(&files, settings, &CheckOptions::default());
    result.errors.splice(0..0, errors);
    result
}

/// Expand `paths` into the files to lint: the walk (gitignore, `--exclude`), then the
/// `exclude` of each file's configuration.
pub fn discover_files(
    paths: &[PathBuf],
    settings: &settings::SettingsResolver,
) -> (Vec<PathBuf>, Vec<FileError>) {
    let (files, walk_errors) = discover::discover(paths, settings.discover_options());
    let mut errors: Vec<FileError> = walk_errors
        .into_iter()
        .map(|e| FileError {
            location: None,
            path: e.path,
            message: e.message,
        })
        .collect();
    let explicit: std::collections::HashSet<&PathBuf> = paths.iter().collect();
    let mut kept = Vec::with_capacity(files.len());
    for file in files {
        match settings.is_excluded(&file, explicit.contains(&file)) {
            Ok(true) => {}
            Ok(false) => kept.push(file),
            Err(e) => errors.push(FileError::from(e)),
        }
    }
    dedup_errors(&mut errors);
    (kept, errors)
}

/// What a run uses besides the settings.
#[derive(Default, Clone, Copy)]
pub struct CheckOptions<'a> {
    /// Reuse the findings of unchanged files (`None`: analyse everything, e.g. `--no-cache`).
    pub cache: Option<&'a cache::Cache>,
    /// Advanced once per file.
    pub progress: Option<&'a progress::Progress>,
}

/// Lint `files` (already discovered), in parallel.
pub fn check_files(
    files: &[PathBuf],
    settings: &settings::SettingsResolver,
    options: &CheckOptions,
) -> CheckResult {
    // The tree's modules, read on demand and shared by every file of the run.
    let project = project::ProjectIndex::new();
    let per_file: Vec<Result<FileReport, FileError>> = files
        .par_iter()
        .map(|path| {
            let result = contain::one_file(|| {
                settings
                    .settings_for(path)
                    .map_err(FileError::from)
                    .and_then(|file_settings| {
                        check_file_cached(path, &file_settings, options.cache, &project)
                    })
            })
            .unwrap_or_else(|message| Err(FileError::new(path, message)));
            if let Some(progress) = options.progress {
                progress.inc();
            }
            result
        })
        .collect();
    let mut result = CheckResult {
        files_checked: files.len(),
        ..Default::default()
    };
    for r in per_file {
        match r {
            Ok(report) => {
                result.diagnostics.extend(report.diagnostics);
                result.sites.add(&report.sites);
            }
            Err(e) => result.errors.push(e),
        }
    }
    // A broken configuration fails every file under it: say so once.
    dedup_errors(&mut result.errors);
    result
}

fn dedup_errors(errors: &mut Vec<FileError>) {
    let mut seen = std::collections::HashSet::new();
    errors.retain(|e| seen.insert((e.path.clone(), e.location, e.message.clone())));
}

impl From<settings::ConfigError> for FileError {
    fn from(e: settings::ConfigError) -> Self {
        FileError {
            path: PathBuf::from(settings::display_path(&e.path)),
            location: e.location,
            message: e.message,
        }
    }
}

/// Read and lint one file.
pub fn check_file(path: &Path, settings: &Settings) -> Result<Vec<Diagnostic>, FileError> {
    check_file_cached(path, settings, None, &project::ProjectIndex::new())
        .map(|report| report.diagnostics)
}

/// Read and lint one file, through `cache` when given.
fn check_file_cached(
    path: &Path,
    settings: &Settings,
    cache: Option<&cache::Cache>,
    project: &project::ProjectIndex,
) -> Result<FileReport, FileError> {
    let text = read_source(path)?;
    let key = cache.map(|_| cache::CacheKey::new(text.as_bytes(), settings));
    let hit = cache
        .zip(key.as_ref())
        .and_then(|(cache, key)| cache.get(path, key));
    // A clean file from the cache is not even loaded, unless it may hold a malformed
    // directive, which is reported again on every run.
    if hit.as_ref().is_some_and(Vec::is_empty)
        && !suppression::may_hold_directive(&text, source::language_of(path))
    {
        return Ok(FileReport::default());
    }
    let file = Arc::new(load_source(path, text).map_err(|message| FileError {
        location: None,
        path: path.to_path_buf(),
        message,
    })?);
    let restored = hit.and_then(|cached| match cached.is_empty() {
        true => Some(Vec::new()),
        false => cache::restore(&cached, &file),
    });
    if let Some(restored) = restored {
        warn_malformed(&file, settings);
        return Ok(restored.into());
    }
    let report = check_source_in(file, settings, project);
    if let (Some(cache), Some(key)) = (cache, key) {
        cache.put(path, key, &report.diagnostics, &report.depends_on);
    }
    Ok(report)
}

/// A file's text, if it is one stridelint can lint (a regular file, not too large, not
/// binary, UTF-8).
fn read_source(path: &Path) -> Result<String, FileError> {
    let err = |message: String| FileError {
        location: None,
        path: path.to_path_buf(),
        message,
    };
    let meta = std::fs::metadata(path).map_err(|e| err(e.to_string()))?;
    if !meta.is_file() {
        return Err(err(fsutil::not_regular(&meta.file_type()).to_string()));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(err(too_large(meta.len())));
    }
    let bytes = fsutil::read_regular(path, Some(MAX_FILE_BYTES)).map_err(|e| err(e.to_string()))?;
    decode_source(bytes).map_err(err)
}

fn too_large(bytes: u64) -> String {
    format!(
        "file is {} MiB, larger than the {} MiB limit",
        bytes >> 20,
        MAX_FILE_BYTES >> 20
    )
}

/// A file's bytes as text, if stridelint can lint them: at most [`MAX_FILE_BYTES`], no NUL
/// byte (binary), valid UTF-8. The checks every file gets, standard input included.
pub fn decode_source(bytes: Vec<u8>) -> Result<String, String> {
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    if memchr::memchr(0, &bytes).is_some() {
        return Err("binary file (contains NUL bytes)".into());
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not valid UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// Lint the bytes of one file named `path` that did not come from disk (standard input),
/// with the checks [`check_file`] applies to a file: size, NUL bytes, UTF-8, and a notebook
/// (`.ipynb`) must be one.
pub fn check_bytes(
    path: &Path,
    bytes: Vec<u8>,
    settings: &Settings,
) -> Result<FileReport, FileError> {
    let err = |message: String| FileError {
        location: None,
        path: path.to_path_buf(),
        message,
    };
    let text = decode_source(bytes).map_err(err)?;
    let file = load_source(path, text).map_err(err)?;
    contain::one_file(|| check_source_report(Arc::new(file), settings)).map_err(err)
}

/// The source file the linter sees: a notebook (`.ipynb`) becomes its joined code cells.
pub fn load_source(path: &Path, text: String) -> Result<SourceFile, String> {
    if path.extension().is_some_and(|e| e == "ipynb") {
        let (notebook, python) = notebook::Notebook::parse(text).map_err(|e| e.to_string())?;
        Ok(SourceFile::from_notebook(path, notebook, python))
    } else {
        Ok(SourceFile::new(path, text))
    }
}

/// Lint one in-memory source file. The language is chosen by extension (`.rs` → Rust).
/// A notebook (`.ipynb`) is linted as its code cells; one that cannot be read yields nothing
/// here (`check_file` reports it as an error).
pub fn check_source(path: &Path, text: String, settings: &Settings) -> Vec<Diagnostic> {
    match load_source(path, text) {
        Ok(file) => check_source_file(Arc::new(file), settings),
        Err(_) => Vec::new(),
    }
}

/// Lint one loaded source file (see [`load_source`]). A malformed suppression comment is
/// reported on stderr as a warning (it suppresses nothing).
pub fn check_source_file(file: Arc<SourceFile>, settings: &Settings) -> Vec<Diagnostic> {
    check_source_report(file, settings).diagnostics
}

/// [`check_source_file`], with the file's analysed sites.
pub fn check_source_report(file: Arc<SourceFile>, settings: &Settings) -> FileReport {
    check_source_in(file, settings, &project::ProjectIndex::new())
}

/// [`check_source_report`], reading definitions from the tree through `project` (when
/// `follow-imports` is on): what the language server runs on an open file's text.
pub fn check_source_in(
    file: Arc<SourceFile>,
    settings: &Settings,
    project: &project::ProjectIndex,
) -> FileReport {
    if settings.ignore_noqa {
        return check_loaded(file, settings, project);
    }
    warn_malformed(&file, settings);
    let suppressions = file.suppressions();
    let mut report = check_loaded(file.clone(), settings, project);
    // `# stridelint: noqa: SL001` suppresses SL001 in the whole file (SL100 included).
    report
        .diagnostics
        .retain(|d| !suppressions.file_suppresses(d.code));
    report
}

/// Print a warning for each malformed suppression comment of `file` (none under
/// `--ignore-noqa`, where no comment counts).
fn warn_malformed(file: &SourceFile, settings: &Settings) {
    if settings.ignore_noqa {
        return;
    }
    for malformed in &file.suppressions().malformed {
        eprintln!(
            "warning: {}:{}: {}",
            file.path.display(),
            file.display_location(file.location(malformed.range.start)),
            malformed.message
        );
    }
}

fn check_loaded(
    file: Arc<SourceFile>,
    settings: &Settings,
    project: &project::ProjectIndex,
) -> FileReport {
    let language = file.language();
    // The pre-filter: a file that names no op any rule reports on cannot produce an op
    // finding. It is still parsed when SL999 may report its syntax errors.
    // Probes (the editor's hover) want every layout, whatever the rules could report.
    let may_report = settings.analysis.probe
        || lints::prefilter::may_report(language, &file.text)
        || lints::sl900_reveal_layout::may_request(&file.text);
    let syntax_only = !may_report;
    if syntax_only && !settings.is_enabled(lints::SYNTAX_ERROR) {
        // No finding is possible, so every stridelint code in a suppression is unused.
        return unused_suppression::check(&file, &[], settings).into();
    }
    if !settings.ignore_noqa && file.is_file_exempt() {
        return FileReport::default();
    }
    // syn is not error tolerant: a Rust file that does not parse is reported and skipped.
    let is_rust = language == ir::Language::Rust;
    let parsed = if is_rust {
        frontend::rust::parse_rust(&file.text)
    } else {
        frontend::python::parse_python_for_lint(&file.text)
    };
    let mut diagnostics = Vec::new();
    if let Some(e) = parsed.errors.first() {
        diagnostics.push(runner::syntax_error(&file, e.span, &e.message, is_rust));
    }
    if syntax_only && diagnostics.is_empty() {
        return unused_suppression::check(&file, &[], settings).into();
    }
    if debug_flags().parse_only {
        return diagnostics.into();
    }
    let mut sites = coverage::SiteCounts::default();
    let mut depends_on = Vec::new();
    let mut probes = Vec::new();
    if !syntax_only {
        let analysis = analyze(&file, &parsed.module, settings, project);
        depends_on = analysis.foreign_files;
        probes = analysis.probes;
        let events = analysis.events;
        sites = lints::coverage::count_sites(&events, language);
        diagnostics.extend(runner::lint(
            &file,
            &parsed.module,
            &events,
            settings.candle_backend,
        ));
    }
    diagnostics.retain(|d| settings.is_enabled(d.code));
    // A rule the file exempts itself from (`# stridelint: noqa: SL001`) is not reported,
    // so the line directives that would hide it are not used either.
    if settings.ignore_noqa {
        return FileReport {
            diagnostics,
            sites,
            depends_on,
            probes,
        };
    }
    let suppressions = file.suppressions();
    diagnostics.retain(|d| !suppressions.file_suppresses(d.code));
    // (line of the directive, code) of every finding a suppression comment hid, for SL100.
    let mut used_suppressions = Vec::new();
    diagnostics.retain(|d| match file.suppression_for(d.code, d.span) {
        Some(line) => {
            used_suppressions.push((line, d.code));
            false
        }
        None => true,
    });
    // After a syntax error part of the file went unanalysed: its suppressions may be needed.
    if parsed.errors.is_empty() {
        diagnostics.extend(unused_suppression::check(
            &file,
            &used_suppressions,
            settings,
        ));
    }
    FileReport {
        diagnostics,
        sites,
        depends_on,
        probes,
    }
}

/// The interpreter's events for a parsed file (with the debugging aids of [`debug_flags`]).
fn analyze(
    file: &SourceFile,
    module: &ir::Module,
    settings: &Settings,
    project: &project::ProjectIndex,
) -> analysis::ModuleAnalysis {
    if let Some(marker) = &debug_flags().panic_on {
        assert!(
            !file.text.contains(marker.as_str()),
            "STRIDELINT_DEBUG_PANIC_ON: the file holds `{marker}`"
        );
    }
    let started = std::time::Instant::now();
    let place = match module.language {
        ir::Language::Python if settings.analysis.follow_imports => project.place_of(&file.path),
        ir::Language::Python => None,
        ir::Language::Rust => None,
    };
    let analysis = analysis::analyze_module(
        module,
        &file.text,
        &settings.analysis,
        place.as_ref().map(|p| project.project(p)),
    );
    if debug_flags().time_files {
        eprintln!(
            "analysis-time {:.1} ms work {} {}",
            started.elapsed().as_secs_f64() * 1e3,
            analysis.work,
            file.path.display()
        );
    }
    if let Some(function) = &analysis.budget_exhausted {
        eprintln!(
            "warning: {}: analysis budget exhausted in `{function}`; results for this file are partial",
            file.path.display()
        );
    }
    if debug_flags().print_events {
        let events = &analysis.events;
        // Debugging aid: every op call the interpreter reached, with its outcomes.
        for ev in events {
            let loc = file.location(ev.span.start as usize);
            eprintln!(
                "{}:{}:{} {} ({}) unknown_input={:?} from_caller={}",
                file.path.display(),
                loc.row,
                loc.column,
                ev.op,
                ev.kind,
                ev.unknown_input,
                ev.from_caller
            );
            for o in &ev.outcomes {
                eprintln!(
                    "    in {} -> {:?} copies={:?} target={}",
                    analysis::value::format_layout(&o.input.layout),
                    o.outcome,
                    o.copies,
                    o.target
                        .as_deref()
                        .map(analysis::value::format_shape)
                        .unwrap_or_default()
                );
            }
        }
    }
    analysis
}

/// Debugging switches from the environment, read once rather than per file:
/// `STRIDELINT_PARSE_ONLY` (skip the analysis, to time parsing), `STRIDELINT_DEBUG_EVENTS`
/// (print every op call the interpreter reached), `STRIDELINT_TIME_FILES` (print each file's
/// analysis time, to find the slow ones), `STRIDELINT_DEBUG_PANIC_ON=TEXT` (the analysis
/// panics on a file holding TEXT: tests that a panic is contained, e.g. by the server).
struct DebugFlags {
    parse_only: bool,
    print_events: bool,
    time_files: bool,
    panic_on: Option<String>,
}

fn debug_flags() -> &'static DebugFlags {
    static FLAGS: std::sync::OnceLock<DebugFlags> = std::sync::OnceLock::new();
    FLAGS.get_or_init(|| {
        let set = |name: &str| std::env::var_os(name).is_some();
        DebugFlags {
            parse_only: set("STRIDELINT_PARSE_ONLY"),
            print_events: set("STRIDELINT_DEBUG_EVENTS"),
            time_files: set("STRIDELINT_TIME_FILES"),
            panic_on: std::env::var("STRIDELINT_DEBUG_PANIC_ON")
                .ok()
                .filter(|t| !t.is_empty()),
        }
    })
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
