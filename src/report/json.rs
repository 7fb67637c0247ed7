//! `json`: a pretty-printed JSON array with one object per finding, in Ruff's shape
//! (`cell`, `code`, `end_location`, `filename`, `fix`, `location`, `message`, `name`,
//! `noqa_row`, `url`) plus what stridelint adds: `severity`, the layout `chain`, `notes`,
//! `help` and the `verify` measurement. Rows and columns are 1-based; columns count
//! Unicode scalar values, as Ruff's do. `cell` is `null` outside notebooks; in a notebook
//! it is the 1-based cell and rows count within that cell, as in Ruff. `name` is the
//! rule's kebab-case name (`view-incompatible`). [`JsonDiagnostic`] is shared with
//! `json-lines`.
//!
//! The objects are structs, not `serde_json::json!` maps, so the key order is fixed by
//! the field order below whatever serde_json features other crates switch on. Fields
//! are in alphabetical order, as in Ruff's output.

use std::io::{self, Write};

use serde::Serialize;

use super::paths::PathDisplay;
use super::ReportContext;
use crate::diagnostic::{Applicability, Diagnostic, Label, Severity};
use crate::source::{Location, SourceFile};

pub(super) fn write(
    w: &mut dyn Write,
    diagnostics: &[&Diagnostic],
    ctx: &ReportContext,
    paths: &PathDisplay,
) -> io::Result<()> {
    let objects: Vec<JsonDiagnostic> = diagnostics
        .iter()
        .map(|diagnostic| JsonDiagnostic::new(diagnostic, ctx, paths))
        .collect();
    serde_json::to_writer_pretty(&mut *w, &objects)?;
    writeln!(w)
}

#[derive(Serialize)]
pub(super) struct JsonDiagnostic<'a> {
    /// In a notebook, the 1-based cell (all rows and columns are then within that cell);
    /// `null` elsewhere, as in Ruff.
    cell: Option<usize>,
    chain: Vec<JsonLabel<'a>>,
    code: &'a str,
    end_location: Location,
    /// The absolute, normalised path, as in Ruff's JSON.
    filename: String,
    fix: Option<JsonFix<'a>>,
    help: Option<&'a str>,
    location: Location,
    message: &'a str,
    /// The rule's kebab-case name (`view-incompatible`), as Ruff's `name`; empty for a
    /// code the registry does not know.
    name: &'static str,
    /// The row a suppression comment (`# noqa: SL001`) must be on: the finding's first row.
    noqa_row: usize,
    notes: &'a [String],
    severity: Severity,
    url: String,
    verify: Option<&'a serde_json::Value>,
    /// The size of a hidden copy, when every size it needs is known (see `Diagnostic::copy`).
    #[serde(skip_serializing_if = "Option::is_none")]
    copy: Option<&'a crate::diagnostic::CopySize>,
    /// The layout the finding is about, symbolically (`{"op", "shape", "strides", "target"}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    subject: Option<JsonSubject>,
}

#[derive(Serialize)]
struct JsonSubject {
    op: String,
    shape: Vec<String>,
    strides: Vec<String>,
    target: Option<Vec<String>>,
}

#[derive(Serialize)]
struct JsonLabel<'a> {
    end_location: Location,
    location: Location,
    message: &'a str,
}

#[derive(Serialize)]
struct JsonFix<'a> {
    applicability: Applicability,
    edits: Vec<JsonEdit<'a>>,
    message: &'a str,
}

#[derive(Serialize)]
struct JsonEdit<'a> {
    content: &'a str,
    end_location: Location,
    location: Location,
}

impl<'a> JsonDiagnostic<'a> {
    pub(super) fn new(
        diagnostic: &'a Diagnostic,
        ctx: &ReportContext,
        paths: &PathDisplay,
    ) -> Self {
        let file = &*diagnostic.file;
        let (location, end_location) = file.cell_span_locations(diagnostic.span);
        JsonDiagnostic {
            cell: file.cell_at(diagnostic.span.start as usize),
            chain: diagnostic
                .chain
                .iter()
                .map(|label| JsonLabel::new(file, label))
                .collect(),
            code: diagnostic.code,
            end_location,
            filename: paths.display_absolute(file.path()),
            fix: diagnostic.fix.as_ref().map(|fix| JsonFix {
                applicability: fix.applicability,
                edits: fix
                    .edits
                    .iter()
                    .map(|edit| {
                        let (location, end_location) = file.cell_span_locations(edit.span);
                        JsonEdit {
                            content: &edit.content,
                            end_location,
                            location,
                        }
                    })
                    .collect(),
                message: &fix.message,
            }),
            help: diagnostic.help.as_deref(),
            location,
            message: &diagnostic.message,
            name: ctx.rule(diagnostic.code).map_or("", |rule| rule.name),
            noqa_row: location.row,
            notes: &diagnostic.notes,
            severity: diagnostic.severity,
            url: diagnostic.url(),
            verify: diagnostic.verify.as_ref(),
            copy: diagnostic.copy.as_ref(),
            subject: diagnostic.subject.as_ref().map(|s| JsonSubject {
                op: s.op.clone(),
                shape: s.layout.shape.iter().map(|d| d.to_string()).collect(),
                strides: s.layout.strides.iter().map(|d| d.to_string()).collect(),
                target: s
                    .target
                    .as_ref()
                    .map(|t| t.iter().map(|d| d.to_string()).collect()),
            }),
        }
    }
}

impl<'a> JsonLabel<'a> {
    fn new(file: &SourceFile, label: &'a Label) -> Self {
        let (location, end_location) = file.cell_span_locations(label.span);
        JsonLabel {
            end_location,
            location,
            message: &label.message,
        }
    }
}
