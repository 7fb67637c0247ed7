//! Output formats. Every reporter turns a list of [`Diagnostic`]s into text for one
//! audience (a terminal, an editor, a CI service) and computes nothing about tensors.
//!
//! The formats and their conventions follow Ruff's `--output-format`, so that users
//! (and tools written for Ruff) find what they expect:
//!
//! | format       | file            | audience                                |
//! |--------------|-----------------|-----------------------------------------|
//! | `full`       | `full.rs`       | terminals: source snippet, chain, notes |
//! | `concise`    | `concise.rs`    | terminals, editors' problem matchers    |
//! | `json`       | `json.rs`       | tools (one JSON array)                  |
//! | `json-lines` | `json_lines.rs` | tools that stream (one object per line) |
//! | `github`     | `github.rs`     | GitHub Actions workflow annotations     |
//! | `sarif`      | `sarif.rs`      | code-scanning dashboards (SARIF 2.1.0)  |
//! | `junit`      | `junit.rs`      | CI test-report widgets                  |
//! | `grouped`    | `grouped.rs`    | terminals, one header per file          |
//! | `gitlab`     | `gitlab.rs`     | GitLab Code Quality (Code Climate)      |
//! | `rdjson`     | `rdjson.rs`     | reviewdog (review comments, suggestions) |
//! | `azure`      | `azure.rs`      | Azure Pipelines logging commands        |
//! | `pylint`     | `pylint.rs`     | tools that read Pylint's parseable output |
//! | `html`       | `html.rs`       | people: the cost report (`stridelint report`) |
//!
//! How each format names files (relative, repository-relative, absolute; never with a
//! `./` prefix) is `paths.rs`.
//!
//! `--statistics` is `statistics.rs`; `--summary FILE` (Markdown for GitHub's job summary)
//! is `markdown_summary.rs`. The `Found N errors.` summary line is the CLI's job.
//!
//! Notebooks: every format reports rows and columns within the finding's cell and names
//! the cell (`nb.ipynb:cell 3:4:12`, JSON's `cell`, SARIF's `properties.cell`).

mod azure;
mod concise;
mod full;
mod github;
mod gitlab;
mod grouped;
mod html;
mod json;
mod json_lines;
mod junit;
mod markdown_summary;
mod paths;
mod pylint;
mod rdjson;
mod sarif;
mod statistics;
mod style;

use std::io::Write;

use crate::diagnostic::{Claim, Diagnostic, Severity};

pub use markdown_summary::write_markdown_summary;
pub use paths::PathDisplay;
pub use statistics::{write_statistics, write_statistics_json};

/// The `--output-format` choices. Names are the kebab-case ones Ruff uses
/// (`json-lines`, not `jsonlines`), both on the command line and in `stridelint.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputFormat {
    /// Source snippets with the layout chain, notes and help (the default).
    #[default]
    Full,
    /// One line per finding: `path:row:col: CODE message`.
    Concise,
    /// A JSON array of findings.
    Json,
    /// One JSON object per line.
    JsonLines,
    /// GitHub Actions workflow commands (`::error file=…::message`).
    Github,
    /// SARIF 2.1.0, for code-scanning services.
    Sarif,
    /// JUnit XML: one test suite per file, one failing test case per finding.
    Junit,
    /// Findings grouped under one header per file.
    Grouped,
    /// GitLab Code Quality report (Code Climate issues).
    Gitlab,
    /// Reviewdog Diagnostic Format (`reviewdog -f=rdjson`).
    Rdjson,
    /// Azure Pipelines logging commands (`##vso[task.logissue …]`).
    Azure,
    /// Pylint's parseable format: `path:row: [CODE] message`.
    Pylint,
    /// One self-contained HTML page: the copies ranked by cost, a chart, the alternatives
    /// (what `stridelint report` writes).
    Html,
}

/// What a reporter knows about one rule. The lint registry builds these; reporters use
/// them to print a rule's name next to its code and, in SARIF, to describe the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleInfo {
    /// `SL001`
    pub code: &'static str,
    /// Kebab-case name, e.g. `view-incompatible`.
    pub name: &'static str,
    /// One sentence: what the rule reports.
    pub summary: &'static str,
    /// Severity findings of this rule get by default.
    pub severity: Severity,
    /// The rule's full documentation (`rules/lints/SL001.md`).
    pub doc_markdown: &'static str,
    /// What its findings claim (the registry's `Rule::claim`): what the formats treat a
    /// finding by.
    pub claim: Claim,
}

/// Everything a reporter needs besides the findings themselves.
#[derive(Debug, Clone, Copy)]
pub struct ReportContext<'a> {
    /// All known rules; findings whose code is missing here are still reported, without a name.
    pub rules: &'a [RuleInfo],
    /// stridelint's version, written into SARIF's `tool.driver.version`.
    pub version: &'a str,
    /// Emit ANSI colour codes (only the human formats: full, concise, grouped, statistics).
    pub color: bool,
    /// Show fixes in the human formats (`= help:` lines in full, `[*]` markers in
    /// concise/grouped). Machine formats always carry the fix.
    pub show_fixes: bool,
}

impl ReportContext<'_> {
    /// The rule with this code, if registered.
    pub fn rule(&self, code: &str) -> Option<&RuleInfo> {
        self.rules.iter().find(|rule| rule.code == code)
    }

    /// What findings with this code claim ([`Claim::Other`] for a code not registered).
    pub fn claim(&self, code: &str) -> Claim {
        self.rule(code).map_or(Claim::Other, |rule| rule.claim)
    }
}

/// Writes `diagnostics` in `format`, with paths relative to the current directory (and
/// `GITHUB_WORKSPACE` / `CI_PROJECT_DIR` for the formats of those services).
///
/// Findings are written in one canonical order — by path, then position, then code — so
/// that the output does not depend on the order in which files were analysed in parallel.
pub fn write_report(
    w: &mut dyn Write,
    format: OutputFormat,
    diagnostics: &[Diagnostic],
    ctx: &ReportContext,
) -> std::io::Result<()> {
    write_report_with_paths(w, format, diagnostics, ctx, &PathDisplay::from_env())
}

/// [`write_report`] with the directories paths are shown relative to given explicitly.
pub fn write_report_with_paths(
    w: &mut dyn Write,
    format: OutputFormat,
    diagnostics: &[Diagnostic],
    ctx: &ReportContext,
    paths: &PathDisplay,
) -> std::io::Result<()> {
    let diagnostics = canonical_order(diagnostics);
    match format {
        OutputFormat::Full => full::write(w, &diagnostics, ctx, paths),
        OutputFormat::Concise => concise::write(w, &diagnostics, ctx, paths),
        OutputFormat::Json => json::write(w, &diagnostics, ctx, paths),
        OutputFormat::JsonLines => json_lines::write(w, &diagnostics, ctx, paths),
        OutputFormat::Github => github::write(w, &diagnostics, paths),
        OutputFormat::Sarif => sarif::write(w, &diagnostics, ctx, paths),
        OutputFormat::Junit => junit::write(w, &diagnostics, paths),
        OutputFormat::Grouped => grouped::write(w, &diagnostics, ctx, paths),
        OutputFormat::Gitlab => gitlab::write(w, &diagnostics, paths, ctx),
        OutputFormat::Rdjson => rdjson::write(w, &diagnostics, paths),
        OutputFormat::Azure => azure::write(w, &diagnostics, paths),
        OutputFormat::Pylint => pylint::write(w, &diagnostics, paths),
        OutputFormat::Html => html::write(w, &diagnostics, ctx, paths),
    }
}

/// Sorted references: by path, start, end, then code. The sort is stable, so two
/// findings of one rule on one span keep the order the lint emitted them in.
fn canonical_order(diagnostics: &[Diagnostic]) -> Vec<&Diagnostic> {
    let mut sorted: Vec<&Diagnostic> = diagnostics.iter().collect();
    sorted.sort_by(|a, b| {
        (a.file.path(), a.span.start, a.span.end, a.code).cmp(&(
            b.file.path(),
            b.span.start,
            b.span.end,
            b.code,
        ))
    });
    sorted
}

/// A safe fix is one `--fix` would apply; Ruff marks such findings with `[*]`.
fn has_safe_fix(diagnostic: &Diagnostic) -> bool {
    diagnostic
        .fix
        .as_ref()
        .is_some_and(|fix| fix.applicability == crate::diagnostic::Applicability::Safe)
}
