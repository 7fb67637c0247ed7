//! `grouped`: Ruff's grouped format. One header line per file, then its findings as
//! `  row:col SL001 message`, with rows right-aligned and columns left-aligned to the
//! widest in that file so the codes line up, and a blank line after each file.

use std::io::{self, Write};

use super::paths::PathDisplay;
use super::{has_safe_fix, style, ReportContext};
use crate::diagnostic::Diagnostic;

pub(super) fn write(
    w: &mut dyn Write,
    diagnostics: &[&Diagnostic],
    ctx: &ReportContext,
    paths: &PathDisplay,
) -> io::Result<()> {
    let mut out = style::color_writer(w, ctx.color);
    // `write_report` sorted the findings by path, so each file's findings are adjacent.
    for file_findings in diagnostics.chunk_by(|a, b| a.file.path() == b.file.path()) {
        // In a notebook, rows count within the finding's cell (`cell 3:4:12`).
        let cells_and_starts: Vec<_> = file_findings
            .iter()
            .map(|diagnostic| {
                diagnostic
                    .file
                    .cell_relative(diagnostic.file.location(diagnostic.span.start as usize))
            })
            .collect();
        let starts: Vec<_> = cells_and_starts.iter().map(|(_, start)| *start).collect();
        let row_width = starts
            .iter()
            .map(|start| decimal_width(start.row))
            .max()
            .unwrap_or(1);
        let column_width = starts
            .iter()
            .map(|start| decimal_width(start.column))
            .max()
            .unwrap_or(1);

        style::write_styled(
            &mut *out,
            &style::path_header(),
            &paths.display(file_findings[0].file.path()),
        )?;
        writeln!(out, ":")?;
        for (diagnostic, (cell, start)) in file_findings.iter().zip(&cells_and_starts) {
            match cell {
                Some(cell) => write!(out, "  cell {cell}:{:>row_width$}", start.row)?,
                None => write!(out, "  {:>row_width$}", start.row)?,
            }
            style::write_styled(&mut *out, &style::separator(), ":")?;
            write!(out, "{:<column_width$} ", start.column)?;
            style::write_styled(&mut *out, &style::rule_code(), diagnostic.code)?;
            out.write_all(b" ")?;
            if ctx.show_fixes && has_safe_fix(diagnostic) {
                style::write_fix_marker(&mut *out)?;
            }
            writeln!(out, "{}", diagnostic.message)?;
        }
        writeln!(out)?;
    }
    out.flush()
}

fn decimal_width(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |log| log as usize + 1)
}

#[cfg(test)]
mod tests {
    use super::decimal_width;

    #[test]
    fn decimal_width_counts_digits() {
        assert_eq!(decimal_width(0), 1);
        assert_eq!(decimal_width(9), 1);
        assert_eq!(decimal_width(10), 2);
        assert_eq!(decimal_width(1234), 4);
    }
}
