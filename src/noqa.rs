//! `--add-noqa`: a suppression for every remaining finding, merged into the directive
//! already on its line. The directives and comments themselves are read by
//! [`crate::suppression`], so that a code is only ever added to a real comment and never to
//! a line that ends inside a multi-line string.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::diagnostic::{Diagnostic, Edit};
use crate::ir::Span;
use crate::source::SourceFile;
use crate::suppression::{lex, DirectiveKind};

/// The codes `--add-noqa` would add per file: for every remaining finding, its code on the
/// first line of its span where a comment can go — never after a backslash continuation
/// or inside a string: when no line of the span can take one, the line its statement goes
/// on to, which the suppression reader covers too. Syntax errors and SL100 are left out (a
/// suppression cannot fix the first and would only hide the second).
pub fn plan_add_noqa(diagnostics: &[Diagnostic]) -> Vec<(PathBuf, String, String, usize)> {
    let mut by_file: BTreeMap<PathBuf, (&Diagnostic, Vec<&Diagnostic>)> = BTreeMap::new();
    for d in diagnostics
        .iter()
        .filter(|d| crate::lints::claim(d.code).suppressible())
    {
        by_file
            .entry(d.file.path.clone())
            .or_insert_with(|| (d, Vec::new()))
            .1
            .push(d);
    }
    let mut plans = Vec::new();
    for (path, (first, findings)) in by_file {
        let file = &*first.file;
        let (edits, added) = add_noqa_edits(file, &findings);
        let edit_refs: Vec<&Edit> = edits.iter().collect();
        if let Some(fixed) = crate::fix::apply_edits(&file.text, &edit_refs) {
            if fixed != file.text {
                plans.push((path, file.text.clone(), fixed, added));
            }
        }
    }
    plans
}

/// The edits adding each finding's code to a directive on its line (merging with one that
/// is there), and how many codes they add.
pub fn add_noqa_edits(file: &SourceFile, findings: &[&Diagnostic]) -> (Vec<Edit>, usize) {
    let is_rust = file.path.extension().is_some_and(|e| e == "rs");
    // Lines that end inside a string or a block comment, or with a backslash: a comment
    // cannot be appended there.
    let mut continues = vec![false; file.line_count()];
    for offset in lex(&file.text, file.language()).open_breaks {
        continues[file.line_index(offset)] = true;
    }
    let mut by_line: BTreeMap<usize, BTreeSet<&str>> = BTreeMap::new();
    for d in findings {
        let first = file.line_index(d.span.start as usize);
        let last = file.line_index((d.span.end as usize).max(d.span.start as usize));
        // The first line of the span that can take a comment, else the line the last one
        // continues onto (where the suppression reader looks too); none at all only in
        // a file that ends inside a string.
        let line = (first..=last)
            .chain(last + 1..continues.len())
            .find(|&l| !continues[l]);
        if let Some(line) = line {
            by_line.entry(line).or_default().insert(d.code);
        }
    }
    let mut edits = Vec::new();
    let mut added = 0;
    for (line, codes) in by_line {
        let existing = file.suppressions().on_line(line).next();
        let listed: Vec<String> = existing
            .iter()
            .flat_map(|d| d.codes.iter().map(|(c, _)| c.to_ascii_uppercase()))
            .collect();
        let new: Vec<&str> = codes
            .into_iter()
            .filter(|c| !listed.iter().any(|l| l == c))
            .collect();
        if new.is_empty() {
            continue;
        }
        added += new.len();
        let joined = new.join(", ");
        let edit = match existing {
            Some(d) if d.codes.is_empty() && d.kind == DirectiveKind::Noqa => {
                // A blanket noqa suppresses everything already; make it explicit.
                Edit {
                    span: Span::new(d.insert_at, d.insert_at),
                    content: format!(": {joined}"),
                }
            }
            Some(d) if d.codes.is_empty() => Edit {
                span: Span::new(d.insert_at, d.insert_at),
                content: joined,
            },
            Some(d) => Edit {
                span: Span::new(d.insert_at, d.insert_at),
                content: format!(", {joined}"),
            },
            None => {
                let end = file.line_range(line).end;
                let content = if is_rust {
                    format!(" // stridelint: ignore[{joined}]")
                } else {
                    format!("  # noqa: {joined}")
                };
                Edit {
                    span: Span::new(end, end),
                    content,
                }
            }
        };
        edits.push(edit);
    }
    (edits, added)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_noqa_appends_and_merges() {
        use crate::diagnostic::Severity;
        use std::sync::Arc;
        let text = "a = x.view(2)\nb = y.view(3)  # noqa: E501\nc = z.reshape(4)  # stridelint: ignore[SL002]\nd = w.view(\n  5)\n";
        let file = Arc::new(SourceFile::new("m.py", text.to_string()));
        let finding = |needle: &str, code: &'static str| Diagnostic {
            code,
            severity: Severity::Error,
            message: String::new(),
            file: file.clone(),
            span: Span::new(
                text.find(needle).unwrap(),
                text.find(needle).unwrap() + needle.len(),
            ),
            chain: vec![],
            notes: vec![],
            help: None,
            fix: None,
            unsafe_fix: None,
            verify: None,
            copy: None,
            subject: None,
        };
        let findings = [
            finding("x.view(2)", "SL001"),
            finding("x.view(2)", "SL003"),
            finding("y.view(3)", "SL001"),
            finding("z.reshape(4)", "SL003"),
            finding("w.view(\n  5)", "SL001"),
        ];
        let plans = plan_add_noqa(&findings);
        assert_eq!(plans.len(), 1);
        assert_eq!(plans[0].3, 5);
        assert_eq!(
            plans[0].2,
            "a = x.view(2)  # noqa: SL001, SL003\nb = y.view(3)  # noqa: E501, SL001\n\
             c = z.reshape(4)  # stridelint: ignore[SL002, SL003]\nd = w.view(  # noqa: SL001\n  5)\n"
        );
        for (line, code) in plans[0].2.lines().zip(["SL003", "SL001", "SL002"]) {
            assert!(crate::suppression::line_covers(line, code), "{line}");
        }
    }
}
