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
//! A rule whose findings have copies of known size (SL002 with `--dim`/`dims`) adds, after
//! a tab, the bytes they copy per forward pass together:
//! `copies 16.0 GiB per forward pass (1 of 1 with known sizes)`. SL008 states the score
//! matrices hand-written attention stores the same way: `stores 32.0 GiB per forward pass`.
//!
//! After the table, a block on what the analysis understood (see `crate::coverage`): per
//! family of ops the layout rules are about, the call sites it reached, decided and left
//! unknown, with the most frequent reasons for "unknown":
//!
//! ```text
//! Analysed call sites (decided / reached):
//!   view/reshape/flatten/rearrange  9 / 12 decided, 3 unknown
//!       2  input from a call the analysis cannot follow
//!       1  input of unknown rank
//!   matmul family                   4 / 4 decided
//! ```
//!
//! The JSON variant is one object with two arrays, each of rows of one shape:
//!
//! ```json
//! {
//!   "rules": [{"code", "name", "count", "fixable", "copies"}],
//!   "sites": [{"family", "reached", "decided", "unknown", "reasons": [{"reason", "count"}]}]
//! }
//! ```
//!
//! `rules` has Ruff's keys (`code`, `name`, `count`, `fixable`) and `copies`
//! (`{"sized", "bytes_per_forward_pass"}`, or `null` when no copy of the rule has a known
//! size); both arrays are present, empty when there is nothing to count.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use super::{has_safe_fix, style, ReportContext};
use crate::coverage::{FamilyCounts, OpFamily, SiteCounts};
use crate::diagnostic::Diagnostic;
use crate::verify::replay::format_bytes;

/// How many reasons for "unknown" the text block lists per family.
const TOP_REASONS: usize = 5;

/// One row of the statistics table; also the object of the JSON variant (Ruff's keys).
#[derive(Debug, Serialize)]
struct Statistic<'a> {
    code: &'a str,
    /// The rule's name, or empty for a code the registry does not know.
    name: &'a str,
    count: usize,
    /// Every finding of this rule has a safe fix.
    fixable: bool,
    /// The findings whose copy has a known size, and the bytes they copy per forward pass
    /// together (`null` when there are none).
    copies: Option<CopiedBytes>,
}

#[derive(Debug, Default, Clone, Copy, Serialize)]
struct CopiedBytes {
    sized: usize,
    bytes_per_forward_pass: u64,
}

/// Writes the table, then the block on the analysed sites; nothing when there are no
/// findings (as Ruff) and no site was reached.
pub fn write_statistics(
    w: &mut dyn Write,
    diagnostics: &[Diagnostic],
    sites: &SiteCounts,
    ctx: &ReportContext,
) -> io::Result<()> {
    write_rule_table(w, diagnostics, ctx)?;
    if sites.is_empty() {
        return Ok(());
    }
    if !diagnostics.is_empty() {
        writeln!(w)?;
    }
    write_sites(w, sites)
}

fn write_rule_table(
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
        let verb = if ctx.claim(statistic.code).states_stored_memory() {
            "stores"
        } else {
            "copies"
        };
        match statistic.copies {
            Some(c) => writeln!(
                out,
                "{}\t{verb} {} per forward pass ({} of {} with known sizes)",
                statistic.name,
                format_bytes(c.bytes_per_forward_pass),
                c.sized,
                statistic.count
            )?,
            None => writeln!(out, "{}", statistic.name)?,
        }
    }
    out.flush()
}

/// The analysed-sites block (see the module documentation).
fn write_sites(w: &mut dyn Write, sites: &SiteCounts) -> io::Result<()> {
    writeln!(w, "Analysed call sites (decided / reached):")?;
    let reached: Vec<(OpFamily, &FamilyCounts)> = OpFamily::ALL
        .iter()
        .filter_map(|f| sites.families.get(f).map(|c| (*f, c)))
        .filter(|(_, c)| c.reached > 0)
        .collect();
    let label_width = reached
        .iter()
        .map(|(f, _)| f.label().len())
        .max()
        .unwrap_or(0);
    let count_width = reached
        .iter()
        .map(|(_, c)| c.reached.to_string().len())
        .max()
        .unwrap_or(0);
    for (family, counts) in reached {
        write!(
            w,
            "  {:<label_width$}  {:>count_width$} / {} decided",
            family.label(),
            counts.decided,
            counts.reached
        )?;
        if counts.unknown == 0 {
            writeln!(w)?;
            continue;
        }
        writeln!(w, ", {} unknown", counts.unknown)?;
        for (reason, n) in counts.top_reasons().into_iter().take(TOP_REASONS) {
            writeln!(w, "      {n:>count_width$}  {reason}")?;
        }
    }
    Ok(())
}

/// One family's row of the JSON variant.
#[derive(Serialize)]
struct SiteRow<'a> {
    family: OpFamily,
    reached: usize,
    decided: usize,
    unknown: usize,
    /// Most frequent first.
    reasons: Vec<ReasonRow<'a>>,
}

/// The JSON variant: the rule rows and the family rows, apart.
#[derive(Serialize)]
struct JsonStatistics<'a> {
    rules: Vec<Statistic<'a>>,
    sites: Vec<SiteRow<'a>>,
}

#[derive(Serialize)]
struct ReasonRow<'a> {
    reason: &'a str,
    count: usize,
}

/// One JSON object: `rules`, the rule rows `{code, name, count, fixable, copies}`, and
/// `sites`, one row per family of analysed sites (both `[]` when there is nothing).
pub fn write_statistics_json(
    w: &mut dyn Write,
    diagnostics: &[Diagnostic],
    sites: &SiteCounts,
    ctx: &ReportContext,
) -> io::Result<()> {
    let mut rows = JsonStatistics {
        rules: statistics(diagnostics, ctx),
        sites: Vec::new(),
    };
    for family in OpFamily::ALL {
        let Some(counts) = sites.families.get(&family).filter(|c| c.reached > 0) else {
            continue;
        };
        let row = SiteRow {
            family,
            reached: counts.reached,
            decided: counts.decided,
            unknown: counts.unknown,
            reasons: counts
                .top_reasons()
                .into_iter()
                .map(|(reason, count)| ReasonRow { reason, count })
                .collect(),
        };
        rows.sites.push(row);
    }
    serde_json::to_writer_pretty(&mut *w, &rows)?;
    writeln!(w)
}

/// Rows by descending count; rules with equal counts by code.
fn statistics<'a>(diagnostics: &'a [Diagnostic], ctx: &ReportContext<'a>) -> Vec<Statistic<'a>> {
    let mut by_code: BTreeMap<&str, (usize, bool, Option<CopiedBytes>)> = BTreeMap::new();
    for diagnostic in diagnostics {
        let (count, fixable, copies) = by_code.entry(diagnostic.code).or_insert((0, true, None));
        *count += 1;
        *fixable &= has_safe_fix(diagnostic);
        if let Some(size) = &diagnostic.copy {
            let c = copies.get_or_insert_with(CopiedBytes::default);
            c.sized += 1;
            let per_pass = size.bytes_per_forward_pass.unwrap_or(u64::MAX);
            c.bytes_per_forward_pass = c.bytes_per_forward_pass.saturating_add(per_pass);
        }
    }
    let mut rows: Vec<Statistic> = by_code
        .into_iter()
        .map(|(code, (count, fixable, copies))| Statistic {
            code,
            name: ctx.rule(code).map_or("", |rule| rule.name),
            count,
            fixable,
            copies,
        })
        .collect();
    rows.sort_by_key(|row| std::cmp::Reverse(row.count));
    rows
}
