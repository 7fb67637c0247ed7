//! A command-line run around the per-file pipeline: the paths (and standard input)
//! discovered and linted, the result cache, fixes and suppressions written (and the files
//! linted again after fixing), the `--summary` file, and what the run ends with: its
//! summary line and exit status. `main.rs` maps its arguments onto these steps and prints
//! what they give.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cache::Cache;
use crate::diagnostic::{Diagnostic, Severity};
use crate::fix::{write_fixed, FixMode, Plan, WriteOutcome};
use crate::progress::Progress;
use crate::report::{ReportContext, RuleInfo};
use crate::settings::{FailOn, SettingsResolver};
use crate::{check_files, discover_files, CheckOptions, CheckResult, FileError};

/// Is `path` the `-` that names standard input?
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// What standard input is linted as, unless `--stdin-filename` names it.
pub fn stdin_name(stdin_filename: Option<&Path>) -> PathBuf {
    stdin_filename.map_or_else(|| PathBuf::from("stdin.py"), Path::to_path_buf)
}

/// Discover and lint `paths`, with a progress bar on a terminal when `show_progress`.
/// A path `-` is standard input, linted under `stdin_filename` (default `stdin.py`).
pub fn lint(
    paths: &[PathBuf],
    stdin_filename: Option<&Path>,
    resolver: &SettingsResolver,
    cache: Option<&Cache>,
    show_progress: bool,
) -> CheckResult {
    let reads_stdin = paths.iter().any(|p| is_stdin(p));
    let paths: Vec<PathBuf> = paths.iter().filter(|p| !is_stdin(p)).cloned().collect();
    let (files, errors) = if paths.is_empty() && reads_stdin {
        (Vec::new(), Vec::new())
    } else {
        discover_files(&paths, resolver)
    };
    let progress = Progress::new(files.len(), show_progress);
    let mut result = check_files(
        &files,
        resolver,
        &CheckOptions {
            cache,
            progress: Some(&progress),
        },
    );
    progress.finish();
    result.errors.splice(0..0, errors);
    if reads_stdin {
        lint_stdin(stdin_name(stdin_filename), resolver, &mut result);
    }
    result
}

/// Lints standard input as one file called `name`, with the checks a file gets (size,
/// NUL bytes, UTF-8, a valid notebook for `.ipynb`).
fn lint_stdin(name: PathBuf, resolver: &SettingsResolver, result: &mut CheckResult) {
    let error = |message: String| FileError {
        location: None,
        path: name.clone(),
        message: format!("standard input: {message}"),
    };
    let mut bytes = Vec::new();
    // One byte over the limit is enough to know the input is too large.
    let limit = crate::fsutil::MAX_FILE_BYTES + 1;
    let read = std::io::Read::read_to_end(
        &mut std::io::Read::take(std::io::stdin().lock(), limit),
        &mut bytes,
    );
    if let Err(e) = read {
        return result.errors.push(error(e.to_string()));
    }
    let settings = match resolver.settings_for(&name) {
        Ok(settings) => settings,
        Err(e) => return result.errors.push(error(e.to_string())),
    };
    if resolver.is_excluded(&name, false).unwrap_or(false) {
        return;
    }
    match crate::check_bytes(&name, bytes, &settings) {
        Ok(report) => {
            result.diagnostics.extend(report.diagnostics);
            result.sites.add(&report.sites);
            result.files_checked += 1;
        }
        Err(e) => result.errors.push(error(e.message)),
    }
}

/// The files a run over `paths` lints, sorted (standard input under its name), and the
/// paths that could not be read: what `--show-files` lists.
pub fn files_to_lint(
    paths: &[PathBuf],
    stdin_filename: Option<&Path>,
    resolver: &SettingsResolver,
) -> (Vec<PathBuf>, Vec<FileError>) {
    let on_disk: Vec<PathBuf> = paths.iter().filter(|p| !is_stdin(p)).cloned().collect();
    let (mut files, errors) = discover_files(&on_disk, resolver);
    if paths.iter().any(|p| is_stdin(p)) {
        files.push(stdin_name(stdin_filename));
    }
    files.sort();
    (files, errors)
}

/// The result cache in `dir` (else `STRIDELINT_CACHE_DIR`, else `.stridelint_cache` in the
/// project root), keeping the findings' subjects when `subjects_needed` and their fix
/// edits when `fixes_needed`.
pub fn open_cache(
    dir: Option<PathBuf>,
    resolver: &SettingsResolver,
    subjects_needed: bool,
    fixes_needed: bool,
) -> Cache {
    let dir = dir
        .or_else(|| std::env::var_os("STRIDELINT_CACHE_DIR").map(PathBuf::from))
        .unwrap_or_else(|| resolver.project_root().join(crate::cache::DEFAULT_DIR));
    Cache::open(&dir)
        .with_subjects_needed(subjects_needed)
        .with_fixes_needed(fixes_needed)
}

/// The fixes of `result`'s findings in `mode`, one plan per file whose text on disk is still
/// the text linted; the files that are not go to `result`'s errors.
pub fn plan_fixes(result: &mut CheckResult, mode: FixMode) -> Vec<Plan> {
    let plans = crate::fix::plan_fixes(&result.diagnostics, mode);
    let (plans, unwritable) = crate::fix::plans_on_disk(&result.diagnostics, plans);
    result.errors.extend(unwritable);
    plans
}

/// What writing edit plans did.
#[derive(Debug, Default)]
pub struct Written {
    /// The edits written (findings fixed, directives added), over all files.
    pub count: usize,
    /// The files written.
    pub files: Vec<PathBuf>,
    /// The files that changed on disk while they were being linted: left alone.
    pub changed_on_disk: Vec<PathBuf>,
}

/// Write each plan's edited text atomically; a file that cannot be written becomes an
/// error in `errors`, its message starting with `failure`.
pub fn write_plans(plans: &[Plan], errors: &mut Vec<FileError>, failure: &str) -> Written {
    let mut written = Written::default();
    for (path, original, edited, n) in plans {
        match write_fixed(path, original, edited) {
            Ok(WriteOutcome::Written) => {
                written.count += n;
                written.files.push(path.clone());
            }
            Ok(WriteOutcome::ChangedOnDisk) => written.changed_on_disk.push(path.clone()),
            Err(e) => errors.push(FileError {
                location: None,
                path: path.clone(),
                message: format!("{failure}: {e}"),
            }),
        }
    }
    written
}

/// After `--fix` wrote `fixed`: lint `paths` again, so that `result` holds the findings
/// that remain. Returns the fixes applied, per file and rule (`--show-fixes`).
pub fn lint_again_after_fixing(
    result: &mut CheckResult,
    fixed: &Written,
    mode: FixMode,
    paths: &[PathBuf],
    resolver: &SettingsResolver,
    cache: Option<&Cache>,
) -> String {
    let again = lint(paths, None, resolver, cache, false);
    if let Some(cache) = cache {
        let _ = cache.save();
    }
    let applied = fixes_by_file(&result.diagnostics, mode, &fixed.files);
    result.diagnostics = again.diagnostics;
    applied
}

/// `--show-fixes`: the fixes applied to `files`, per file and rule, as Ruff lists them.
fn fixes_by_file(diagnostics: &[Diagnostic], mode: FixMode, files: &[PathBuf]) -> String {
    let mut counts: std::collections::BTreeMap<&Path, std::collections::BTreeMap<&str, usize>> =
        Default::default();
    for d in diagnostics {
        if files.contains(&d.file.path) && crate::fix::chosen_fix(d, mode).is_some() {
            *counts
                .entry(&d.file.path)
                .or_default()
                .entry(d.code)
                .or_default() += 1;
        }
    }
    let mut out = String::new();
    for (path, codes) in counts {
        out.push_str(&format!("- {}:\n", crate::settings::display_path(path)));
        for (code, n) in codes {
            let name = crate::lints::rule(code).map_or("", |r| r.name);
            out.push_str(&format!("    {n} × {code} ({name})\n"));
        }
    }
    out
}

/// `--add-noqa`: write a suppression for every finding of `result`, atomically. Returns
/// what was written and the errors of the run (`result`'s, then those of writing).
pub fn add_noqa(result: &CheckResult) -> (Written, Vec<FileError>) {
    let plans = crate::noqa::plan_add_noqa(&result.diagnostics);
    let (plans, mut errors) = crate::fix::plans_on_disk(&result.diagnostics, plans);
    errors.extend(result.errors.iter().cloned());
    let written = write_plans(&plans, &mut errors, "cannot write");
    (written, errors)
}

/// The order reports list findings in: by file, then position, then rule.
pub fn sort_findings(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| {
        a.file
            .path
            .cmp(&b.file.path)
            .then(a.span.start.cmp(&b.span.start))
            .then(a.code.cmp(b.code))
    });
}

/// The registry's rules as the reports know them.
pub fn rule_infos() -> Vec<RuleInfo> {
    crate::lints::RULES
        .iter()
        .map(|r| RuleInfo {
            code: r.code,
            name: r.name,
            summary: r.summary,
            severity: r.severity,
            doc_markdown: r.doc.text,
            claim: r.claim,
        })
        .collect()
}

/// `--summary FILE`: append the Markdown summary (GitHub's step summary file is shared by
/// all steps of a job, so it is appended to, never truncated).
pub fn append_summary(
    path: &Path,
    diagnostics: &[Diagnostic],
    ctx: &ReportContext,
    files: usize,
) -> std::io::Result<()> {
    let mut text = Vec::new();
    crate::report::write_markdown_summary(&mut text, diagnostics, ctx, files)?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    file.write_all(&text)
}

/// The line after a human-format report: `All checks passed! (3 files)` or `Found 2
/// findings (…) in 3 files.`; none when a path or configuration could not be read (exit
/// 2): that run has not passed. When warnings were found and none of the findings fails
/// the run (`--fail-on error`), the line says so: the run passes with them.
pub fn summary_line(diagnostics: &[Diagnostic], result: &CheckResult, fail_on: FailOn) -> String {
    let files = plural(result.files_checked, "file");
    if diagnostics.is_empty() {
        return match result.errors.is_empty() {
            true => format!("All checks passed! ({files})\n"),
            false => String::new(),
        };
    }
    let count = |severity: Severity| {
        diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count()
    };
    let infos = match count(Severity::Info) {
        0 => String::new(),
        n => format!(", {}", plural(n, "info")),
    };
    let passes = !diagnostics.iter().any(|d| fails(fail_on, d.severity));
    let gate = match passes && count(Severity::Warning) > 0 {
        true => " Warnings do not fail the run (`--fail-on warning` makes them).",
        false => "",
    };
    format!(
        "Found {} ({}, {}{infos}) in {files}.{gate}\n",
        plural(diagnostics.len(), "finding"),
        plural(count(Severity::Error), "error"),
        plural(count(Severity::Warning), "warning"),
    )
}

/// The exit status of a check run: 2 after an error, 1 when a finding fails the run under
/// `fail_on` (unless `exit_zero`) or a fix was written that should fail it
/// (`fixed_fails`), else 0.
pub fn exit_status(
    result: &CheckResult,
    diagnostics: &[Diagnostic],
    fail_on: FailOn,
    exit_zero: bool,
    fixed_fails: bool,
) -> u8 {
    if !result.errors.is_empty() {
        2
    } else if (diagnostics.iter().any(|d| fails(fail_on, d.severity)) && !exit_zero) || fixed_fails
    {
        1
    } else {
        0
    }
}

/// Does a finding of `severity` fail the run under the gate `fail_on` (`--fail-on`)?
pub fn fails(fail_on: FailOn, severity: Severity) -> bool {
    let least = match fail_on {
        FailOn::Error => Severity::Error,
        FailOn::Warning => Severity::Warning,
        FailOn::Info => Severity::Info,
    };
    severity >= least
}

/// `n word`, with the plural `word`s unless `n` is 1.
pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// What `stridelint clean` removes: `cache_dir` (else `STRIDELINT_CACHE_DIR`, else the
/// project's cache) and every `.stridelint_cache` below the current directory, each once.
pub fn caches_to_clean(cache_dir: Option<PathBuf>) -> Vec<PathBuf> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let main = cache_dir
        .or_else(|| std::env::var_os("STRIDELINT_CACHE_DIR").map(PathBuf::from))
        .unwrap_or_else(|| {
            // A broken configuration must not keep the cache from being removed.
            let root = SettingsResolver::from_cli(crate::settings::Config::default(), None, false)
                .map_or_else(|_| cwd.clone(), |r| r.project_root());
            root.join(crate::cache::DEFAULT_DIR)
        });
    let mut dirs = vec![main];
    dirs.extend(crate::cache::find_caches(&cwd));
    dirs.sort();
    dirs.dedup_by(|a, b| {
        a.canonicalize()
            .ok()
            .zip(b.canonicalize().ok())
            .is_some_and(|(a, b)| a == b)
    });
    dirs
}
