//! `concise`: one line per finding, `path:row:col: SL001 message`, exactly Ruff's
//! concise shape so that editors' and CI's existing problem matchers parse it. With
//! `show_fixes`, a finding with a safe fix gets Ruff's `[*]` marker after its code.

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
    for diagnostic in diagnostics {
        // In a notebook: the cell, then the row within it (`nb.ipynb:cell 3:4:12:`).
        let (cell, start) = diagnostic
            .file
            .cell_relative(diagnostic.file.location(diagnostic.span.start as usize));
        style::write_styled(
            &mut *out,
            &style::path(),
            &paths.display(diagnostic.file.path()),
        )?;
        style::write_styled(&mut *out, &style::separator(), ":")?;
        if let Some(cell) = cell {
            write!(out, "cell {cell}")?;
            style::write_styled(&mut *out, &style::separator(), ":")?;
        }
        write!(out, "{}", start.row)?;
        style::write_styled(&mut *out, &style::separator(), ":")?;
        write!(out, "{}", start.column)?;
        style::write_styled(&mut *out, &style::separator(), ":")?;
        out.write_all(b" ")?;
        style::write_styled(&mut *out, &style::rule_code(), diagnostic.code)?;
        out.write_all(b" ")?;
        if ctx.show_fixes && has_safe_fix(diagnostic) {
            style::write_fix_marker(&mut *out)?;
        }
        writeln!(out, "{}", diagnostic.message)?;
    }
    out.flush()
}
