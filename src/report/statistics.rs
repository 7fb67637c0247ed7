//! `--statistics`: how many findings each rule produced, most frequent first — Ruff's
//! (and Flake8's) layout: count (right-aligned), a tab, the code (padded to the longest),
//! a tab, then the rule's name:
//!
//! ```text
//! 12<TAB>SL002<TAB>[*] hidden-copy
//!  3<TAB>SL001<TAB>[ ] view-incompatible
//! ```
//!
//! The `[*]`/`[ ]` column appears only when some rule's findings are all safely fixable.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use super::{has_safe_fix, style, ReportContext};
use crate::diagnostic::Diagnostic;

/// One row of the statistics table; also the object of the JSON variant (Ruff's keys).
#[derive(Debug, Serialize)]
struct Statistic<'a> {
    code: &'a str,
    /// The rule's name, or empty for a code the registry does not know.
    name: &'a str,
    count: usize,
    /// Every finding of this rule has a safe fix.
    fixable: bool,
}

/// Writes the table; writes nothing when there are no findings (as Ruff).
pub fn write_statistics(
    w: &mut dyn Write,
    diagnostics: &[Diagnostic],
    ctx: &ReportContext,
) -> io::Result<()> {
    let statistics = statistics(diagnostics, ctx);
    let Some(max_count) = statistics.iter().map(|statistic| statistic.count).max() else {
        return Ok(());
    };
    let count_width = max_count.to_string().len();
    let code_width = statistics
        .iter()
        .map(|statistic| statistic.code.chars().count())
        .max()
        .unwrap_or(0);
    let any_fixable = statistics.iter().any(|statistic| statistic.fixable);

    let mut out = style::color_writer(w, ctx.color);
    for statistic in &statistics {
        let count = statistic.count.to_string();
        write!(out, "{:>pad$}", "", pad = count_width - count.len())?;
        style::write_styled(&mut *out, &style::count(), &count)?;
        out.write_all(b"\t")?;
        style::write_styled(&mut *out, &style::rule_code(), statistic.code)?;
        write!(
            out,
            "{:>pad$}\t",
            "",
            pad = code_width - statistic.code.chars().count()
        )?;
        if any_fixable {
            if statistic.fixable {
                style::write_fix_marker(&mut *out)?;
            } else {
                out.write_all(b"[ ] ")?;
            }
        }
        writeln!(out, "{}", statistic.name)?;
    }
    out.flush()
}

/// The same rows as a JSON array of `{code, name, count, fixable}` (`[]` when empty, so
/// a consumer always gets valid JSON).
pub fn write_statistics_json(
    w: &mut dyn Write,
    diagnostics: &[Diagnostic],
    ctx: &ReportContext,
) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, &statistics(diagnostics, ctx))?;
    writeln!(w)
}

/// Rows by descending count; rules with equal counts by code.
fn statistics<'a>(diagnostics: &'a [Diagnostic], ctx: &ReportContext<'a>) -> Vec<Statistic<'a>> {
    let mut by_code: BTreeMap<&str, (usize, bool)> = BTreeMap::new();
    for diagnostic in diagnostics {
        let (count, fixable) = by_code.entry(diagnostic.code).or_insert((0, true));
        *count += 1;
        *fixable &= has_safe_fix(diagnostic);
    }
    let mut rows: Vec<Statistic> = by_code
        .into_iter()
        .map(|(code, (count, fixable))| Statistic {
            code,
            name: ctx.rule(code).map_or("", |rule| rule.name),
            count,
            fixable,
        })
        .collect();
    rows.sort_by_key(|row| std::cmp::Reverse(row.count));
    rows
}
