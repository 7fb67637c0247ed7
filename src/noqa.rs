//! Suppression directives as text to edit: where `# noqa: SL001` or
//! `# stridelint: ignore[SL001]` sits in a line and where each of its codes is, so that the
//! unused-suppression rule (SL100) can remove codes and `--add-noqa` can add them.
//!
//! Which findings a directive suppresses is decided by `source.rs` (`parse_suppression`);
//! the parser here reads the same syntax and adds byte ranges. Only real comments count:
//! [`comment_starts`] lexes Python strings so that a `# noqa` inside a docstring is text,
//! not a directive, and so that `--add-noqa` never appends a comment to a line that ends
//! inside a multi-line string.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::PathBuf;

use crate::diagnostic::{Diagnostic, Edit};
use crate::ir::Span;
use crate::source::SourceFile;

/// The two spellings of a line suppression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirectiveKind {
    /// `# noqa` / `# noqa: SL001, SL002` (shared with Ruff, flake8, …).
    Noqa,
    /// `# stridelint: ignore[SL001]` (or `//` in Rust).
    Ignore,
}

/// One directive in a line, with byte ranges relative to the start of the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive {
    pub kind: DirectiveKind,
    /// From the comment marker (`#`, `//`) to the end of the directive (the last code, or
    /// `]`, or the `noqa` word of a blanket noqa).
    pub range: Range<usize>,
    /// The listed codes and their ranges; empty for a blanket `# noqa`.
    pub codes: Vec<(String, Range<usize>)>,
    /// Where a code is inserted to extend the list: after the last code, before `]`, or
    /// after `noqa` (then the insertion needs a `:`).
    pub insert_at: usize,
}

fn find_ascii_ci(hay: &str, needle: &str, from: usize) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    (from..=h.len().checked_sub(n.len())?).find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
}

/// The directive in `line`, if any (`stridelint: ignore[…]` first, as `parse_suppression`).
pub fn find_directive(line: &str) -> Option<Directive> {
    if let Some(pos) = find_ascii_ci(line, "stridelint: ignore[", 0) {
        let open = pos + "stridelint: ignore[".len();
        let close = open + line[open..].find(']')?;
        let before = line[..pos].trim_end();
        let start = if before.ends_with("//") {
            before.len() - 2
        } else if before.ends_with('#') {
            before.len() - 1
        } else {
            pos
        };
        let codes = list_codes(line, open..close, |c| c == ',');
        return Some(Directive {
            kind: DirectiveKind::Ignore,
            range: start..close + 1,
            codes,
            insert_at: close,
        });
    }
    let pos = find_ascii_ci(line, "# noqa", 0)?;
    let after_word = pos + "# noqa".len();
    let rest = &line[after_word..];
    let colon = rest.len() - rest.trim_start().len();
    if rest[colon..].starts_with(':') {
        let list_start = after_word + colon + 1;
        let codes: Vec<(String, Range<usize>)> = list_codes(line, list_start..line.len(), |c| {
            c == ',' || c.is_whitespace()
        })
        .into_iter()
        .filter(|(code, _)| is_code_like(code))
        .collect();
        let end = codes.last().map_or(list_start, |(_, r)| r.end);
        return Some(Directive {
            kind: DirectiveKind::Noqa,
            range: pos..end,
            codes,
            insert_at: end,
        });
    }
    Some(Directive {
        kind: DirectiveKind::Noqa,
        range: pos..after_word,
        codes: Vec::new(),
        insert_at: after_word,
    })
}

/// A token that `parse_suppression` accepts as a code: letters then letters/digits.
fn is_code_like(token: &str) -> bool {
    token
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && token.chars().all(|c| c.is_ascii_alphanumeric())
}

/// Is `code` one of stridelint's (`SL` and digits)? Other tools' codes are never touched.
pub fn is_stridelint_code(code: &str) -> bool {
    code.len() > 2
        && code[..2].eq_ignore_ascii_case("SL")
        && code[2..].bytes().all(|b| b.is_ascii_digit())
}

fn list_codes(
    line: &str,
    range: Range<usize>,
    is_separator: impl Fn(char) -> bool,
) -> Vec<(String, Range<usize>)> {
    let mut codes = Vec::new();
    let mut start = None;
    for (i, c) in line[range.clone()]
        .char_indices()
        .map(|(i, c)| (i + range.start, c))
    {
        match (is_separator(c), start) {
            (true, Some(s)) => {
                let end = s + line[s..i].trim_end().len();
                codes.push((line[s..end].to_string(), s..end));
                start = None;
            }
            (false, None) if !c.is_whitespace() => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        let end = s + line[s..range.end].trim_end().len();
        codes.push((line[s..end].to_string(), s..end));
    }
    codes.into_iter().filter(|(c, _)| !c.is_empty()).collect()
}

/// What the Python lexer learned about each line of a file.
#[derive(Debug, Clone, Default)]
pub struct LineFacts {
    /// Byte offset (in the file) of the `#` that starts a comment on each line, if any.
    pub comment_start: Vec<Option<usize>>,
    /// Lines that end inside a string or with a backslash continuation: a comment cannot
    /// be appended to them.
    pub continues: Vec<bool>,
}

/// Lex just enough Python to know where comments are: strings (single, triple-quoted,
/// any prefix; a backslash always escapes the next character for termination purposes,
/// raw strings included) and `#` comments. `line_starts` are the files' line offsets.
pub fn comment_starts(text: &str, line_count: usize) -> LineFacts {
    let bytes = text.as_bytes();
    let mut facts = LineFacts {
        comment_start: vec![None; line_count],
        continues: vec![false; line_count],
    };
    let mut line = 0usize;
    let mut i = 0usize;
    // Open string: its quote byte and whether it is triple-quoted.
    let mut string: Option<(u8, bool)> = None;
    // A line ends at `\n` and at a lone `\r` (Python's universal newlines; the `\r` of a
    // `\r\n` is not the end), as `SourceFile` counts lines.
    let ends_line = |i: usize| match bytes.get(i) {
        Some(b'\n') => true,
        Some(b'\r') => bytes.get(i + 1) != Some(&b'\n'),
        _ => false,
    };
    while i < bytes.len() {
        let b = bytes[i];
        match string {
            Some((q, triple)) => {
                if b == b'\\' {
                    if ends_line(i + 1) && line + 1 < line_count {
                        facts.continues[line] = true;
                        line += 1;
                    } else if bytes[i + 1..].starts_with(b"\r\n") && line + 1 < line_count {
                        facts.continues[line] = true;
                        line += 1;
                        i += 1;
                    }
                    i += 2;
                    continue;
                }
                if ends_line(i) && line + 1 < line_count {
                    if triple {
                        facts.continues[line] = true;
                    } else {
                        // An unterminated single-quoted string ends at the line (a syntax
                        // error the parser reports); the lexer just recovers.
                        string = None;
                    }
                    line += 1;
                } else if b == q && (!triple || bytes[i..].starts_with(&[q, q, q])) {
                    i += if triple { 3 } else { 1 };
                    string = None;
                    continue;
                }
                i += 1;
            }
            None => match b {
                b'#' => {
                    if line < line_count {
                        facts.comment_start[line] = Some(i);
                    }
                    i += memchr::memchr2(b'\n', b'\r', &bytes[i..]).unwrap_or(bytes.len() - i);
                }
                b'\'' | b'"' => {
                    let triple = bytes[i..].starts_with(&[b, b, b]);
                    string = Some((b, triple));
                    i += if triple { 3 } else { 1 };
                }
                b'\\' if ends_line(i + 1) || bytes[i + 1..].starts_with(b"\r\n") => {
                    facts.continues[line] = true;
                    i += 1;
                }
                _ if ends_line(i) && line + 1 < line_count => {
                    line += 1;
                    i += 1;
                }
                _ => i += 1,
            },
        }
    }
    facts
}

/// The directive of 0-based `line` of `file`, with its ranges made absolute, if the line has
/// one in a real comment. Rust files are not lexed (syn drops comments; a directive there is
/// taken where it is found).
pub fn directive_on_line(
    file: &SourceFile,
    facts: Option<&LineFacts>,
    line: usize,
) -> Option<(usize, Directive)> {
    let range = file.line_range(line);
    let text = &file.text[range.clone()];
    let directive = find_directive(text)?;
    if let Some(facts) = facts {
        let comment = facts.comment_start.get(line).copied().flatten()?;
        if range.start + directive.range.start < comment {
            return None;
        }
    }
    Some((range.start, directive))
}

/// The codes `--add-noqa` would add per file: for every remaining finding, its code on the
/// first line of its span where a comment can go. Syntax errors and SL100 are left out (a
/// suppression cannot fix the first and would only hide the second).
pub fn plan_add_noqa(diagnostics: &[Diagnostic]) -> Vec<(PathBuf, String, String, usize)> {
    let mut by_file: BTreeMap<PathBuf, (&Diagnostic, Vec<&Diagnostic>)> = BTreeMap::new();
    for d in diagnostics
        .iter()
        .filter(|d| d.code != crate::SYNTAX_ERROR_CODE && d.code != "SL100")
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
    let facts = (!is_rust).then(|| comment_starts(&file.text, file.line_count()));
    let mut by_line: BTreeMap<usize, BTreeSet<&str>> = BTreeMap::new();
    for d in findings {
        let first = file.line_index(d.span.start as usize);
        let last = file.line_index((d.span.end as usize).max(d.span.start as usize));
        let line = (first..=last)
            .find(|&l| !facts.as_ref().is_some_and(|f| f.continues[l]))
            .unwrap_or(first);
        by_line.entry(line).or_default().insert(d.code);
    }
    let mut edits = Vec::new();
    let mut added = 0;
    for (line, codes) in by_line {
        let existing = directive_on_line(file, facts.as_ref(), line);
        let listed: Vec<String> = existing
            .iter()
            .flat_map(|(_, d)| d.codes.iter().map(|(c, _)| c.to_ascii_uppercase()))
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
            Some((start, d)) if d.codes.is_empty() && d.kind == DirectiveKind::Noqa => {
                // A blanket noqa suppresses everything already; make it explicit.
                Edit {
                    span: Span::new(start + d.insert_at, start + d.insert_at),
                    content: format!(": {joined}"),
                }
            }
            Some((start, d)) if d.codes.is_empty() => Edit {
                span: Span::new(start + d.insert_at, start + d.insert_at),
                content: joined,
            },
            Some((start, d)) => Edit {
                span: Span::new(start + d.insert_at, start + d.insert_at),
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
    use crate::source::parse_suppression;

    #[test]
    fn directives_agree_with_the_suppression_parser() {
        for line in [
            "y = x.view(2)  # noqa: SL001, SL003",
            "y = x.view(2)  # NOQA:SL001",
            "y = x.view(2)  # noqa",
            "y = x.view(2)  # stridelint: ignore[SL001, SL002]",
            "let y = a.matmul(&b)?; // stridelint: ignore[SL005]",
            "z = 1  # type: ignore  # noqa: E501 SL002",
        ] {
            let suppression = parse_suppression(line).unwrap();
            let directive = find_directive(line).unwrap();
            let codes: Vec<String> = directive.codes.iter().map(|(c, _)| c.clone()).collect();
            assert_eq!(codes, suppression.codes, "{line}");
            for (code, range) in &directive.codes {
                assert_eq!(&line[range.clone()], code);
            }
        }
        let line = "y = x  # stridelint: ignore[SL001]";
        let d = find_directive(line).unwrap();
        assert_eq!(&line[d.range.clone()], "# stridelint: ignore[SL001]");
        let line = "y = x  # noqa: SL001, SL002";
        assert_eq!(
            &line[find_directive(line).unwrap().range],
            "# noqa: SL001, SL002"
        );
        assert_eq!(find_directive("y = x  # a comment"), None);
    }

    #[test]
    fn stridelint_codes_are_sl_and_digits() {
        assert!(is_stridelint_code("SL001") && is_stridelint_code("sl100"));
        assert!(
            !is_stridelint_code("SLX") && !is_stridelint_code("E501") && !is_stridelint_code("SL")
        );
    }

    #[test]
    fn the_lexer_skips_strings() {
        let text =
            "a = '# not'  # yes\ns = \"\"\"\n# noqa: SL001\n\"\"\"  # after\nt = x \\\n  + 1\n";
        let lines = text.split_inclusive('\n').count() + 1;
        let facts = comment_starts(text, lines);
        assert_eq!(facts.comment_start[0], Some(text.find("# yes").unwrap()));
        assert_eq!(facts.comment_start[2], None, "inside a docstring");
        assert_eq!(facts.comment_start[3], Some(text.find("# after").unwrap()));
        assert_eq!(
            &facts.continues[..6],
            &[false, true, true, false, true, false]
        );
    }

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
            verify: None,
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
        for line in plans[0].2.lines().take(3) {
            assert!(parse_suppression(line).is_some(), "{line}");
        }
    }
}
