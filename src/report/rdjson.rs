//! `rdjson`: the Reviewdog Diagnostic Format's JSON form (`DiagnosticResult`), which
//! `reviewdog -f=rdjson` turns into pull-request review comments, with fixes as suggested
//! changes:
//!
//! ```json
//! {"source": {"name": "stridelint", "url": "…"},
//!  "diagnostics": [{"message": "…", "severity": "ERROR",
//!    "location": {"path": "/abs/src/model.py",
//!                 "range": {"start": {"line": 7, "column": 9}, "end": {"line": 7, "column": 24}}},
//!    "code": {"value": "SL001", "url": "…"},
//!    "suggestions": [{"range": {…}, "text": "reshape"}]}]}
//! ```
//!
//! Paths are absolute, as Ruff's (reviewdog accepts absolute and relative paths). As
//! the format defines them (`reviewdog.proto`), columns are 1-based **UTF-8 byte**
//! offsets within the line and ranges end exclusively — not the character columns of
//! the other formats. Every fix, safe or not, becomes a suggestion: a reviewer applies
//! it or not. In a notebook, lines count within the cell that the message names.

use std::io::{self, Write};

use serde::Serialize;

use super::paths::PathDisplay;
use crate::diagnostic::{Diagnostic, Severity};
use crate::ir::Span;
use crate::source::SourceFile;

const SOURCE_URL: &str = "https://github.com/stridelint/stridelint";

pub(super) fn write(
    w: &mut dyn Write,
    diagnostics: &[&Diagnostic],
    paths: &PathDisplay,
) -> io::Result<()> {
    let result = DiagnosticResult {
        source: Source {
            name: "stridelint",
            url: SOURCE_URL,
        },
        diagnostics: diagnostics
            .iter()
            .map(|diagnostic| {
                let file = &*diagnostic.file;
                RdDiagnostic {
                    message: match file.cell_at(diagnostic.span.start as usize) {
                        Some(cell) => format!("cell {cell}: {}", diagnostic.message),
                        None => diagnostic.message.clone(),
                    },
                    location: Location {
                        path: paths.display_absolute(file.path()),
                        range: Range::new(file, diagnostic.span),
                    },
                    severity: match diagnostic.severity {
                        Severity::Error => "ERROR",
                        Severity::Warning => "WARNING",
                        Severity::Info => "INFO",
                    },
                    code: Code {
                        value: diagnostic.code,
                        url: diagnostic.url(),
                    },
                    suggestions: diagnostic
                        .fix
                        .iter()
                        .flat_map(|fix| &fix.edits)
                        .map(|edit| Suggestion {
                            range: Range::new(file, edit.span),
                            text: &edit.content,
                        })
                        .collect(),
                }
            })
            .collect(),
    };
    serde_json::to_writer_pretty(&mut *w, &result)?;
    writeln!(w)
}

#[derive(Serialize)]
struct DiagnosticResult<'a> {
    source: Source,
    diagnostics: Vec<RdDiagnostic<'a>>,
}

#[derive(Serialize)]
struct Source {
    name: &'static str,
    url: &'static str,
}

#[derive(Serialize)]
struct RdDiagnostic<'a> {
    message: String,
    location: Location,
    severity: &'static str,
    code: Code<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    suggestions: Vec<Suggestion<'a>>,
}

#[derive(Serialize)]
struct Location {
    path: String,
    range: Range,
}

#[derive(Serialize)]
struct Code<'a> {
    value: &'a str,
    url: String,
}

#[derive(Serialize)]
struct Suggestion<'a> {
    range: Range,
    text: &'a str,
}

#[derive(Serialize)]
struct Range {
    start: Position,
    end: Position,
}

impl Range {
    fn new(file: &SourceFile, span: Span) -> Self {
        Range {
            start: Position::at(file, span.start as usize),
            end: Position::at(file, span.end as usize),
        }
    }
}

#[derive(Serialize, Debug, PartialEq)]
struct Position {
    line: usize,
    /// 1-based, in UTF-8 bytes.
    column: usize,
}

impl Position {
    /// The line (within its cell, in a notebook) and byte column of byte `offset`.
    fn at(file: &SourceFile, offset: usize) -> Self {
        let mut offset = offset.min(file.text.len());
        while !file.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line_start = file.line_range(file.line_index(offset)).start;
        let (_, location) = file.cell_relative(file.location(offset));
        Position {
            line: location.row,
            column: offset - line_start + 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_utf8_bytes() {
        // The proto's own example: in `a𐐀b`, `b` is at column 6.
        let file = SourceFile::new("x.py", "a𐐀b\nc".to_owned());
        assert_eq!(Position::at(&file, 5), Position { line: 1, column: 6 });
        assert_eq!(Position::at(&file, 7), Position { line: 2, column: 1 });
        // The exclusive end of the first line, and of the text.
        assert_eq!(Position::at(&file, 6), Position { line: 1, column: 7 });
        assert_eq!(Position::at(&file, 8), Position { line: 2, column: 2 });
    }
}
