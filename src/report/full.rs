//! `full` (the default): each finding rendered by codespan-reporting with its source.
//!
//! ```text
//! error: SL001 [view-incompatible] `.view(B, T, C)` cannot work on this layout
//!   --> model.py:5:9
//!   |
//! 3 |     q = q.transpose(1, 2)
//!   |         ----------------- after `.transpose(1, 2)`: (B, H, T, D) strides (H·T·D, D, H·D, 1)
//! 4 |     …
//! 5 |     y = q.view(B, T, C)
//!   |         ^^^^^^^^^^^^^^^
//!   |
//!   = note: assumes `q` enters `forward` contiguous
//!   = help: use `.reshape(B, T, C)`, which copies
//! ```
//!
//! The primary label marks the offending call; every step of the layout chain is a
//! secondary label whose text is the shape and strides after that step, so the reader
//! sees *why* the call fails without re-running anything. Notes, the help (one line, which
//! says when `--fix` applies it; see `help_lines`) and the `--verify` summary follow as
//! `= …` lines. ASCII drawing
//! characters are used, as Ruff and rustc do, so logs stay readable everywhere.

use std::io::{self, Write};
use std::ops::Range;

use codespan_reporting::diagnostic::{
    Diagnostic as Rendered, Label as RenderedLabel, Severity as RenderedSeverity,
};
use codespan_reporting::files::{Error as FilesError, Files};
use codespan_reporting::term::{self, Chars, Config};

use super::paths::PathDisplay;
use super::{style, ReportContext};
use crate::diagnostic::{Applicability, Diagnostic, Fix, Severity};
use crate::ir::Span;
use crate::source::SourceFile;

pub(super) fn write(
    w: &mut dyn Write,
    diagnostics: &[&Diagnostic],
    ctx: &ReportContext,
    paths: &PathDisplay,
) -> io::Result<()> {
    let config = Config {
        chars: Chars::ascii(),
        ..Config::default()
    };
    let mut out = style::color_writer(w, ctx.color);
    for diagnostic in diagnostics {
        let mut name = paths.display(diagnostic.file.path());
        // A notebook's header names the cell (`--> nb.ipynb:cell 3:4:12`); the gutter then
        // counts rows within cells (see `line_number` below).
        if let Some(cell) = diagnostic.file.cell_at(diagnostic.span.start as usize) {
            name = format!("{name}:cell {cell}");
        }
        let file = CodespanFile {
            name,
            file: &diagnostic.file,
        };
        term::emit(&mut *out, &config, &file, &rendered(diagnostic, ctx)).map_err(into_io_error)?;
    }
    out.flush()
}

/// The codespan diagnostic for one finding.
fn rendered(diagnostic: &Diagnostic, ctx: &ReportContext) -> Rendered<()> {
    let severity = match diagnostic.severity {
        Severity::Error => RenderedSeverity::Error,
        Severity::Warning => RenderedSeverity::Warning,
        Severity::Info => RenderedSeverity::Note,
    };
    let header = match ctx.rule(diagnostic.code) {
        Some(rule) => format!("{} [{}] {}", diagnostic.code, rule.name, diagnostic.message),
        None => format!("{} {}", diagnostic.code, diagnostic.message),
    };
    let text = &diagnostic.file.text;

    let mut labels = vec![RenderedLabel::primary(
        (),
        clamped_range(text, diagnostic.span),
    )];
    labels.extend(chain_labels(diagnostic).into_iter().map(|(span, message)| {
        RenderedLabel::secondary((), clamped_range(text, span)).with_message(message)
    }));

    let mut notes: Vec<String> = diagnostic
        .notes
        .iter()
        .map(|note| format!("note: {note}"))
        .collect();
    notes.extend(help_lines(
        diagnostic.help.as_deref(),
        diagnostic.fix.as_ref().filter(|_| ctx.show_fixes),
    ));
    if let Some(verify) = &diagnostic.verify {
        notes.push(format!("verify: {}", verify_summary(verify)));
    }

    Rendered::new(severity)
        .with_message(header)
        .with_labels(labels)
        .with_notes(notes)
}

/// The chain's labels, each marking what its step added to the expression and numbered
/// in the order the steps ran when two or more fall on one line.
///
/// A step of a method chain spans the steps before it (`y.transpose(1, 2).transpose(2, 3)`
/// holds `y.transpose(1, 2)`); its label marks only its own call (`.transpose(2, 3)`), so
/// that each label hangs from its own column, as rustc draws several labels on a line.
/// Codespan, like rustc, stacks those labels with the rightmost on top, so the last step
/// reads first: the numbers (`1.`, `2.`, … over the whole chain) give the order the code ran.
fn chain_labels(diagnostic: &Diagnostic) -> Vec<(Span, String)> {
    let chain = &diagnostic.chain;
    let spans: Vec<Span> = chain
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let inner = chain[..i]
                .iter()
                .filter(|earlier| {
                    earlier.span.start == step.span.start && earlier.span.end < step.span.end
                })
                .map(|earlier| earlier.span.end)
                .max();
            match inner {
                Some(end) => Span {
                    start: end,
                    end: step.span.end,
                },
                None => step.span,
            }
        })
        .collect();
    let file = &diagnostic.file;
    let mut lines: Vec<usize> = spans
        .iter()
        .map(|span| file.line_index((span.start as usize).min(file.text.len())))
        .collect();
    lines.sort_unstable();
    let shared = lines.windows(2).any(|pair| pair[0] == pair[1]);
    spans
        .into_iter()
        .zip(chain)
        .enumerate()
        .map(|(i, (span, step))| match shared {
            true => (span, format!("{}. {}", i + 1, step.message)),
            false => (span, step.message.clone()),
        })
        .collect()
}

/// One help line for the help and the fix together. A fix whose title only repeats the
/// help (every piece of code it names is in the help: "Insert `.contiguous()` before the
/// view") adds just the flag that applies it; a title that says more gets a `fix:` line;
/// a fix without a help is the help, as in Ruff. The fix title itself stays in the
/// machine-readable formats' fix object.
fn help_lines(help: Option<&str>, fix: Option<&Fix>) -> Vec<String> {
    match (help, fix) {
        (None, None) => Vec::new(),
        (Some(help), None) => vec![format!("help: {help}")],
        (None, Some(fix)) => vec![format!("help: {}", fix.message)],
        (Some(help), Some(fix)) if repeats(help, &fix.message) => {
            let flag = match fix.applicability {
                Applicability::Safe => "--fix",
                Applicability::Unsafe => "--fix --unsafe-fixes",
            };
            vec![format!("help: {help} (fixable with `{flag}`)")]
        }
        (Some(help), Some(fix)) => vec![format!("help: {help}"), format!("fix: {}", fix.message)],
    }
}

/// Whether a fix title says nothing the help does not: it names code, and the help names
/// every piece of it.
fn repeats(help: &str, title: &str) -> bool {
    let pieces: Vec<&str> = title.split('`').skip(1).step_by(2).collect();
    !pieces.is_empty()
        && pieces
            .iter()
            .all(|piece| help.contains(&format!("`{piece}")))
}

/// The one-line summary of a `--verify` measurement; the whole value if it has none.
fn verify_summary(verify: &serde_json::Value) -> String {
    match verify.get("summary").and_then(serde_json::Value::as_str) {
        Some(summary) => summary.to_owned(),
        None => verify.to_string(),
    }
}

/// `span` as a byte range codespan accepts: inside the text, on character boundaries.
/// A lint bug that produced an odd span then shows a slightly wider/narrower mark instead
/// of aborting the whole report.
fn clamped_range(text: &str, span: Span) -> Range<usize> {
    let floor = |mut offset: usize| {
        offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    };
    let start = floor(span.start as usize);
    let end = floor(span.end as usize).max(start);
    start..end
}

fn into_io_error(error: FilesError) -> io::Error {
    match error {
        FilesError::Io(error) => error,
        other => io::Error::other(other),
    }
}

/// Lets codespan read a [`SourceFile`] through its own line index instead of building a
/// second one for every rendered finding.
struct CodespanFile<'a> {
    /// The path as shown in the `-->` line.
    name: String,
    file: &'a SourceFile,
}

impl<'a> Files<'a> for CodespanFile<'_> {
    type FileId = ();
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, (): ()) -> Result<&'a str, FilesError> {
        Ok(&self.name)
    }

    fn source(&'a self, (): ()) -> Result<&'a str, FilesError> {
        Ok(&self.file.text)
    }

    /// Rows as the user counts them: within the cell in a notebook.
    fn line_number(&'a self, (): (), line_index: usize) -> Result<usize, FilesError> {
        let location = crate::source::Location {
            row: line_index + 1,
            column: 1,
        };
        Ok(self.file.cell_relative(location).1.row)
    }

    fn line_index(&'a self, (): (), byte_index: usize) -> Result<usize, FilesError> {
        Ok(self.file.line_index(byte_index.min(self.file.text.len())))
    }

    /// Codespan expects a line's range to include its terminator (as its own `SimpleFile`
    /// does), and accepts one past the last line as the empty range at the end.
    fn line_range(&'a self, (): (), line_index: usize) -> Result<Range<usize>, FilesError> {
        let line_count = self.file.line_count();
        let text_len = self.file.text.len();
        if line_index > line_count {
            return Err(FilesError::LineTooLarge {
                given: line_index,
                max: line_count - 1,
            });
        }
        if line_index == line_count {
            return Ok(text_len..text_len);
        }
        let start = self.file.line_range(line_index).start;
        let end = if line_index + 1 < line_count {
            self.file.line_range(line_index + 1).start
        } else {
            text_len
        };
        Ok(start..end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fix_that_repeats_the_help_adds_only_its_flag() {
        let fix = |message: &str, applicability| Fix {
            message: message.to_owned(),
            applicability,
            edits: Vec::new(),
        };
        let help =
            "call `.contiguous()` before `.view(...)` (an explicit copy), or use `.reshape(...)`";
        let insert = fix(
            "Insert `.contiguous()` before the view",
            Applicability::Safe,
        );
        assert_eq!(
            help_lines(Some(help), Some(&insert)),
            [format!("help: {help} (fixable with `--fix`)")]
        );
        let reshape = fix("Replace `view` with `reshape`", Applicability::Unsafe);
        assert_eq!(
            help_lines(Some(help), Some(&reshape)),
            [
                format!("help: {help}"),
                "fix: Replace `view` with `reshape`".to_owned()
            ]
        );
        let unsafe_insert = fix("Insert `.contiguous()`", Applicability::Unsafe);
        assert_eq!(
            help_lines(Some(help), Some(&unsafe_insert)),
            [format!(
                "help: {help} (fixable with `--fix --unsafe-fixes`)"
            )]
        );
        let plain = fix("Insert a copy", Applicability::Safe);
        assert_eq!(help_lines(Some(help), Some(&plain)).len(), 2);
        assert_eq!(help_lines(None, Some(&plain)), ["help: Insert a copy"]);
        assert_eq!(help_lines(Some("h"), None), ["help: h"]);
        assert!(help_lines(None, None).is_empty());
    }

    #[test]
    fn clamped_ranges_stay_inside_the_text_and_on_char_boundaries() {
        let text = "aé\n";
        assert_eq!(clamped_range(text, Span::new(0, 2)), 0..1);
        assert_eq!(clamped_range(text, Span::new(1, 99)), 1..4);
        assert_eq!(clamped_range(text, Span::new(3, 1)), 3..3);
    }

    #[test]
    fn codespan_line_ranges_include_the_terminator() {
        let source = SourceFile::new("m.py", "ab\r\ncd\nlast".to_owned());
        let file = CodespanFile {
            name: "m.py".to_owned(),
            file: &source,
        };
        assert_eq!(file.line_range((), 0).unwrap(), 0..4);
        assert_eq!(file.line_range((), 1).unwrap(), 4..7);
        assert_eq!(file.line_range((), 2).unwrap(), 7..11);
        assert_eq!(file.line_range((), 3).unwrap(), 11..11);
        assert!(file.line_range((), 4).is_err());
    }
}
