//! `github`: GitHub Actions workflow commands, which the runner turns into annotations
//! on the pull request's diff:
//!
//! ```text
//! ::error file=src/model.py,line=12,col=9,endLine=12,endColumn=30,title=SL001::view size is not compatible …
//! ```
//!
//! `file` is relative to the repository root (`GITHUB_WORKSPACE`, else the current
//! directory) with `/` separators and no `./` prefix: GitHub attaches an annotation to
//! the pull request's diff only when its path is the file's path in the repository.
//!
//! `::warning` is used for warnings. GitHub draws a column range only within one line,
//! so `col`/`endColumn` are left out when the finding spans several lines.
//!
//! Escaping follows the runner's own (`@actions/core` `toCommandValue` /
//! `escapeProperty`): in the message, `%`, `\r` and `\n` are percent-encoded; property
//! values additionally encode `:` and `,`, which would otherwise end the value.

use std::io::{self, Write};

use super::paths::PathDisplay;
use crate::diagnostic::{Diagnostic, Severity};

pub(super) fn write(
    w: &mut dyn Write,
    diagnostics: &[&Diagnostic],
    paths: &PathDisplay,
) -> io::Result<()> {
    for diagnostic in diagnostics {
        // A notebook has no lines of its own to annotate: rows count within the cell,
        // which the message names.
        let (start, end) = diagnostic.file.cell_span_locations(diagnostic.span);
        let message = match diagnostic.file.cell_at(diagnostic.span.start as usize) {
            Some(cell) => format!("cell {cell}: {}", diagnostic.message),
            None => diagnostic.message.clone(),
        };
        let command = match diagnostic.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let file = escape_property(&paths.github(diagnostic.file.path()));
        write!(w, "::{command} file={file},line={}", start.row)?;
        if start.row == end.row {
            write!(w, ",col={}", start.column)?;
        }
        write!(w, ",endLine={}", end.row)?;
        if start.row == end.row {
            write!(w, ",endColumn={}", end.column)?;
        }
        writeln!(
            w,
            ",title={}::{}",
            escape_property(diagnostic.code),
            escape_data(&message)
        )?;
    }
    Ok(())
}

/// Escapes the message after `::`.
fn escape_data(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => escaped.push_str("%25"),
            '\r' => escaped.push_str("%0D"),
            '\n' => escaped.push_str("%0A"),
            _ => escaped.push(c),
        }
    }
    escaped
}

/// Escapes a `key=value` property value.
fn escape_property(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => escaped.push_str("%25"),
            '\r' => escaped.push_str("%0D"),
            '\n' => escaped.push_str("%0A"),
            ':' => escaped.push_str("%3A"),
            ',' => escaped.push_str("%2C"),
            _ => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_escapes_percent_first_and_line_breaks() {
        assert_eq!(
            escape_data("50% of a\r\nb: c, d"),
            "50%25 of a%0D%0Ab: c, d"
        );
        assert_eq!(escape_data("%0A"), "%250A");
    }

    #[test]
    fn properties_also_escape_colon_and_comma() {
        assert_eq!(escape_property("C:\\a,b%\n.py"), "C%3A\\a%2Cb%25%0A.py");
        assert_eq!(escape_property("modèle.py"), "modèle.py");
    }
}
