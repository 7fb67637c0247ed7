//! `json-lines`: the objects of the `json` format, one compact object per line, so a
//! consumer can process findings as they stream without parsing one large array.

use std::io::{self, Write};

use super::json::JsonDiagnostic;
use super::paths::PathDisplay;
use super::ReportContext;
use crate::diagnostic::Diagnostic;

pub(super) fn write(
    w: &mut dyn Write,
    diagnostics: &[&Diagnostic],
    ctx: &ReportContext,
    paths: &PathDisplay,
) -> io::Result<()> {
    for diagnostic in diagnostics {
        serde_json::to_writer(&mut *w, &JsonDiagnostic::new(diagnostic, ctx, paths))?;
        writeln!(w)?;
    }
    Ok(())
}
