//! `pylint`: Pylint's parseable format, `path:row: [SL001] message`, exactly as Ruff
//! writes it, for tools that read Pylint's output (editors, Jenkins' warnings plugin,
//! SonarQube's Pylint importer). Paths are relative to the current directory; in a
//! notebook the cell comes before the row (`nb.ipynb:cell 3:4: [SL001] …`), as in
//! `concise`. The format is one line per finding, so line breaks in a message become
//! spaces.

use std::io::{self, Write};

use super::paths::PathDisplay;
use crate::diagnostic::Diagnostic;

pub(super) fn write(
    w: &mut dyn Write,
    diagnostics: &[&Diagnostic],
    paths: &PathDisplay,
) -> io::Result<()> {
    for diagnostic in diagnostics {
        let (cell, start) = diagnostic
            .file
            .cell_relative(diagnostic.file.location(diagnostic.span.start as usize));
        let cell = cell.map_or(String::new(), |cell| format!("cell {cell}:"));
        writeln!(
            w,
            "{}:{cell}{}: [{}] {}",
            paths.display(diagnostic.file.path()),
            start.row,
            diagnostic.code,
            one_line(&diagnostic.message)
        )?;
    }
    Ok(())
}

/// `\r\n`, `\n` and `\r` each become one space; trailing whitespace is dropped.
pub(super) fn one_line(text: &str) -> String {
    text.replace("\r\n", " ")
        .replace(['\n', '\r'], " ")
        .trim_end()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_breaks_become_spaces() {
        assert_eq!(one_line("a\r\nb\nc\rd\n"), "a b c d");
    }
}
