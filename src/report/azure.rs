//! `azure`: Azure Pipelines logging commands, which the agent turns into issues on the
//! run's summary page and on the pull request, as Ruff writes them:
//!
//! ```text
//! ##vso[task.logissue type=error;sourcepath=/abs/src/model.py;linenumber=7;columnnumber=9;code=SL001;]message
//! ```
//!
//! `type` is `error` or `warning` by the finding's severity. Paths are absolute, as Azure
//! documents (and Ruff writes) them. In a notebook the row and column count within the
//! cell, which the message names (`cell 3: …`), as in the `github` format.
//!
//! Escaping follows the agent's (`azure-pipelines-task-lib`): `%` becomes `%AZP25`, `\r`
//! and `\n` become `%0D` and `%0A`; property values also encode `;` (`%3B`), which would
//! end the value, and `]` (`%5D`), which would end the properties.

use std::io::{self, Write};

use super::paths::PathDisplay;
use crate::diagnostic::{Diagnostic, Severity};

pub(super) fn write(
    w: &mut dyn Write,
    diagnostics: &[&Diagnostic],
    paths: &PathDisplay,
) -> io::Result<()> {
    for diagnostic in diagnostics {
        let (start, _) = diagnostic.file.cell_span_locations(diagnostic.span);
        let message = match diagnostic.file.cell_at(diagnostic.span.start as usize) {
            Some(cell) => format!("cell {cell}: {}", diagnostic.message),
            None => diagnostic.message.clone(),
        };
        let kind = match diagnostic.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            // Azure's issues are errors or warnings only: an info is a plain log line.
            Severity::Info => {
                writeln!(
                    w,
                    "{}:{}:{}: {} {}",
                    paths.display_absolute(diagnostic.file.path()),
                    start.row,
                    start.column,
                    diagnostic.code,
                    message
                )?;
                continue;
            }
        };
        writeln!(
            w,
            "##vso[task.logissue type={kind};sourcepath={};linenumber={};columnnumber={};code={};]{}",
            escape_property(&paths.display_absolute(diagnostic.file.path())),
            start.row,
            start.column,
            escape_property(diagnostic.code),
            escape_data(&message)
        )?;
    }
    Ok(())
}

/// Escapes the message after `]`.
fn escape_data(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => escaped.push_str("%AZP25"),
            '\r' => escaped.push_str("%0D"),
            '\n' => escaped.push_str("%0A"),
            _ => escaped.push(c),
        }
    }
    escaped
}

/// Escapes a `key=value;` property value.
fn escape_property(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => escaped.push_str("%AZP25"),
            '\r' => escaped.push_str("%0D"),
            '\n' => escaped.push_str("%0A"),
            ';' => escaped.push_str("%3B"),
            ']' => escaped.push_str("%5D"),
            _ => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_escapes_percent_and_line_breaks() {
        assert_eq!(escape_data("50% a\r\nb; c]"), "50%AZP25 a%0D%0Ab; c]");
    }

    #[test]
    fn properties_also_escape_semicolon_and_bracket() {
        assert_eq!(escape_property("a;b]c%d\n"), "a%3Bb%5Dc%AZP25d%0A");
    }
}
