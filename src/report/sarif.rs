//! `sarif`: SARIF 2.1.0, the format code-scanning services (GitHub code scanning, Azure
//! DevOps, IDE viewers) ingest. One run; `tool.driver.rules` describes every rule that
//! has a finding (from [`RuleInfo`], its documentation becoming `fullDescription` and
//! `help`); each result points into that list by `ruleIndex`.
//!
//! Mapping of a [`Diagnostic`]:
//! - primary span → `locations[0]`: a `uri` relative to the current directory with
//!   `uriBaseId` `%SRCROOT%`, which the run's `originalUriBaseIds` maps to that directory's
//!   absolute `file:` URI (as CodeQL writes it: GitHub code scanning resolves the relative
//!   URI against the repository, other viewers get the absolute location; files outside
//!   the current directory get an absolute `file:` URI; see [`PathDisplay::uri`]);
//! - each layout-chain step → a `relatedLocations` entry whose message is the step's label;
//! - a fix with edits → `fixes[0]`, one `replacement` (`deletedRegion` + `insertedContent`)
//!   per edit;
//! - notes, help and the verify measurement → the result's `properties` bag.
//!
//! Columns are Unicode scalar values (as everywhere in stridelint), which SARIF calls
//! `unicodeCodePoints`; the run says so in `columnKind`, because SARIF's default is
//! UTF-16 code units. End columns are exclusive, as SARIF defines them.
//!
//! The structs are typed rather than `json!` maps so the key order is stable.

use std::io::{self, Write};

use serde::Serialize;

use super::paths::PathDisplay;
use super::{ReportContext, RuleInfo};
use crate::diagnostic::{rule_url, Diagnostic, Severity};
use crate::ir::Span;
use crate::source::SourceFile;

/// The `$id` of the official OASIS schema.
const SCHEMA: &str = "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json";
const INFORMATION_URI: &str = "https://github.com/stridelint/stridelint";
/// The `uriBaseId` of relative artifact URIs (SARIF §3.4.4; CodeQL's name for it).
const SOURCE_ROOT: &str = "%SRCROOT%";

pub(super) fn write(
    w: &mut dyn Write,
    diagnostics: &[&Diagnostic],
    ctx: &ReportContext,
    paths: &PathDisplay,
) -> io::Result<()> {
    let rules = referenced_rules(diagnostics, ctx);
    let log = SarifLog {
        schema: SCHEMA,
        version: "2.1.0",
        runs: [Run {
            tool: Tool {
                driver: Driver {
                    name: "stridelint",
                    version: ctx.version,
                    information_uri: INFORMATION_URI,
                    rules: rules
                        .iter()
                        .map(|rule| ReportingDescriptor::new(rule))
                        .collect(),
                },
            },
            original_uri_base_ids: paths.source_root_uri().map(|uri| {
                let mut bases = std::collections::BTreeMap::new();
                bases.insert(SOURCE_ROOT, BaseUri { uri });
                bases
            }),
            column_kind: "unicodeCodePoints",
            results: diagnostics
                .iter()
                .map(|diagnostic| SarifResult::new(diagnostic, &rules, paths))
                .collect(),
        }],
    };
    serde_json::to_writer_pretty(&mut *w, &log)?;
    writeln!(w)
}

/// The rules with at least one finding, by code: SARIF viewers list `driver.rules`, and
/// a list of rules that did not fire only adds noise (Ruff does the same).
fn referenced_rules<'a>(diagnostics: &[&Diagnostic], ctx: &ReportContext<'a>) -> Vec<&'a RuleInfo> {
    let mut rules: Vec<&RuleInfo> = ctx
        .rules
        .iter()
        .filter(|rule| {
            diagnostics
                .iter()
                .any(|diagnostic| diagnostic.code == rule.code)
        })
        .collect();
    rules.sort_by_key(|rule| rule.code);
    rules.dedup_by_key(|rule| rule.code);
    rules
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

#[derive(Serialize)]
struct SarifLog<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool<'a>,
    /// `%SRCROOT%` → the current directory (absent when it cannot be read).
    #[serde(skip_serializing_if = "Option::is_none")]
    original_uri_base_ids: Option<std::collections::BTreeMap<&'static str, BaseUri>>,
    column_kind: &'static str,
    results: Vec<SarifResult<'a>>,
}

#[derive(Serialize)]
struct BaseUri {
    uri: String,
}

#[derive(Serialize)]
struct Tool<'a> {
    driver: Driver<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver<'a> {
    name: &'static str,
    version: &'a str,
    information_uri: &'static str,
    rules: Vec<ReportingDescriptor<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReportingDescriptor<'a> {
    id: &'a str,
    name: &'a str,
    short_description: Text<'a>,
    full_description: Text<'a>,
    help: Markdown<'a>,
    help_uri: String,
    default_configuration: Configuration,
}

impl<'a> ReportingDescriptor<'a> {
    fn new(rule: &'a RuleInfo) -> Self {
        ReportingDescriptor {
            id: rule.code,
            name: rule.name,
            short_description: Text { text: rule.summary },
            full_description: Text {
                text: rule.doc_markdown,
            },
            help: Markdown {
                text: rule.doc_markdown,
                markdown: rule.doc_markdown,
            },
            help_uri: rule_url(rule.code),
            default_configuration: Configuration {
                level: level(rule.severity),
            },
        }
    }
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
struct Text<'a> {
    text: &'a str,
}

/// SARIF's multiformat message: plain text, plus Markdown for viewers that render it.
#[derive(Serialize)]
struct Markdown<'a> {
    text: &'a str,
    markdown: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'a str,
    /// Absent for a code the registry does not know (it then has no descriptor).
    #[serde(skip_serializing_if = "Option::is_none")]
    rule_index: Option<usize>,
    level: &'static str,
    message: Text<'a>,
    locations: [SarifLocation<'a>; 1],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<SarifLocation<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    fixes: Vec<SarifFix<'a>>,
    #[serde(skip_serializing_if = "Properties::is_empty")]
    properties: Properties<'a>,
}

impl<'a> SarifResult<'a> {
    fn new(diagnostic: &'a Diagnostic, rules: &[&RuleInfo], paths: &PathDisplay) -> Self {
        let file = &*diagnostic.file;
        let uri = ArtifactLocation::new(file.path(), paths);
        SarifResult {
            rule_id: diagnostic.code,
            rule_index: rules.iter().position(|rule| rule.code == diagnostic.code),
            level: level(diagnostic.severity),
            message: Text {
                text: &diagnostic.message,
            },
            locations: [SarifLocation {
                id: None,
                physical_location: PhysicalLocation::new(&uri, file, diagnostic.span),
                message: None,
            }],
            related_locations: diagnostic
                .chain
                .iter()
                .enumerate()
                .map(|(id, step)| SarifLocation {
                    id: Some(id),
                    physical_location: PhysicalLocation::new(&uri, file, step.span),
                    message: Some(Text {
                        text: &step.message,
                    }),
                })
                .collect(),
            fixes: diagnostic
                .fix
                .iter()
                .filter(|fix| !fix.edits.is_empty())
                .map(|fix| SarifFix {
                    description: Text { text: &fix.message },
                    artifact_changes: [ArtifactChange {
                        artifact_location: uri.clone(),
                        replacements: fix
                            .edits
                            .iter()
                            .map(|edit| Replacement {
                                deleted_region: Region::new(file, edit.span),
                                inserted_content: ArtifactContent {
                                    text: &edit.content,
                                },
                            })
                            .collect(),
                    }],
                })
                .collect(),
            properties: Properties {
                cell: file.cell_at(diagnostic.span.start as usize),
                notes: &diagnostic.notes,
                help: diagnostic.help.as_deref(),
                verify: diagnostic.verify.as_ref(),
                copy: diagnostic.copy.as_ref(),
            },
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifLocation<'a> {
    /// Identifies a related location within its result (SARIF §3.28.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<usize>,
    physical_location: PhysicalLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Text<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    region: Region,
}

impl PhysicalLocation {
    fn new(uri: &ArtifactLocation, file: &SourceFile, span: Span) -> Self {
        PhysicalLocation {
            artifact_location: uri.clone(),
            region: Region::new(file, span),
        }
    }
}

#[derive(Serialize, Clone)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    /// `%SRCROOT%` for a relative `uri`.
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
}

impl ArtifactLocation {
    fn new(path: &std::path::Path, paths: &PathDisplay) -> Self {
        let relative = paths.uri_is_relative(path) && paths.source_root_uri().is_some();
        ArtifactLocation {
            uri: paths.uri(path),
            uri_base_id: relative.then_some(SOURCE_ROOT),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
    start_column: usize,
    end_line: usize,
    /// Exclusive: the column just after the last character.
    end_column: usize,
}

impl Region {
    /// In a notebook, rows count within the cell (the result's `properties.cell`).
    fn new(file: &SourceFile, span: Span) -> Self {
        let (start, end) = file.cell_span_locations(span);
        Region {
            start_line: start.row,
            start_column: start.column,
            end_line: end.row,
            end_column: end.column,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifFix<'a> {
    description: Text<'a>,
    artifact_changes: [ArtifactChange<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactChange<'a> {
    artifact_location: ArtifactLocation,
    replacements: Vec<Replacement<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Replacement<'a> {
    deleted_region: Region,
    inserted_content: ArtifactContent<'a>,
}

#[derive(Serialize)]
struct ArtifactContent<'a> {
    text: &'a str,
}

/// What SARIF has no dedicated place for: the assumptions and hints of the finding, and
/// the `--verify` measurement.
#[derive(Serialize)]
struct Properties<'a> {
    /// The notebook cell (1-based) the regions' rows count in.
    #[serde(skip_serializing_if = "Option::is_none")]
    cell: Option<usize>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    notes: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    help: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    verify: Option<&'a serde_json::Value>,
    /// The size of a hidden copy, when every size it needs is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    copy: Option<&'a crate::diagnostic::CopySize>,
}

impl Properties<'_> {
    fn is_empty(&self) -> bool {
        self.cell.is_none()
            && self.notes.is_empty()
            && self.help.is_none()
            && self.verify.is_none()
            && self.copy.is_none()
    }
}
