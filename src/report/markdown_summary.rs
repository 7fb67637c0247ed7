//! The Markdown summary (`--summary FILE`), written for GitHub's job summary
//! (`$GITHUB_STEP_SUMMARY`): a headline with the totals, then one table of findings per
//! rule and one per file and rule. Annotations (`--output-format github`) point at lines;
//! this page answers "how bad is it, and where" at a glance.
//!
//! ```markdown
//! ### stridelint
//! **3 findings** (2 errors, 1 warning) in 12 files.
//!
//! | Rule | Name | Findings |
//! |:--|:--|--:|
//! | [SL001](…/SL001.md) | view-incompatible | 2 |
//!
//! | File | Rule | Findings |
//! |:--|:--|--:|
//! | `models/gpt.py` | SL001 | 2 |
//! ```

use std::collections::BTreeMap;
use std::io::{self, Write};

use super::paths::PathDisplay;
use super::ReportContext;
use crate::diagnostic::{rule_url, Diagnostic, Severity};

/// Writes the summary of `diagnostics` found in `files_checked` files.
pub fn write_markdown_summary(
    w: &mut dyn Write,
    diagnostics: &[Diagnostic],
    ctx: &ReportContext,
    files_checked: usize,
) -> io::Result<()> {
    // Repository-relative, as the annotations of the same job.
    let paths = PathDisplay::from_env();
    writeln!(w, "### stridelint")?;
    writeln!(w)?;
    let files = plural(files_checked, "file");
    if diagnostics.is_empty() {
        writeln!(w, "No findings in {files}.")?;
        return writeln!(w);
    }
    let count = |severity: Severity| {
        diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count()
    };
    let infos = count(Severity::Info);
    writeln!(
        w,
        "**{}** ({}, {}{}) in {files}.",
        plural(diagnostics.len(), "finding"),
        plural(count(Severity::Error), "error"),
        plural(count(Severity::Warning), "warning"),
        if infos > 0 {
            format!(", {}", plural(infos, "info"))
        } else {
            String::new()
        }
    )?;
    writeln!(w)?;

    let mut by_rule: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_file: BTreeMap<(String, &str), usize> = BTreeMap::new();
    for d in diagnostics {
        *by_rule.entry(d.code).or_default() += 1;
        *by_file
            .entry((paths.github(d.file.path()), d.code))
            .or_default() += 1;
    }
    writeln!(w, "| Rule | Name | Findings |")?;
    writeln!(w, "|:--|:--|--:|")?;
    for (code, count) in &by_rule {
        let name = ctx.rule(code).map_or("", |r| r.name);
        writeln!(w, "| [{code}]({}) | {name} | {count} |", rule_url(code))?;
    }
    writeln!(w)?;
    writeln!(w, "| File | Rule | Findings |")?;
    writeln!(w, "|:--|:--|--:|")?;
    for ((path, code), count) in &by_file {
        writeln!(w, "| {} | {code} | {count} |", code_span(path))?;
    }
    writeln!(w)
}

/// `text` as inline code in a table cell: `|` would end the cell, and a backtick in the
/// text needs a longer fence.
fn code_span(text: &str) -> String {
    let escaped = text.replace('|', "\\|");
    if escaped.contains('`') {
        format!("`` {escaped} ``")
    } else {
        format!("`{escaped}`")
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_survive_table_syntax() {
        assert_eq!(code_span("src/a.py"), "`src/a.py`");
        assert_eq!(code_span("a|b.py"), "`a\\|b.py`");
        assert_eq!(code_span("we`ird.py"), "`` we`ird.py ``");
    }
}
