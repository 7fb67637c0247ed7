//! SL100 `unused-suppression`: a `# noqa: SL001` or `# stridelint: ignore[SL001]` whose
//! code suppresses no finding on its line (Ruff's RUF100).
//!
//! Unlike the other rules this one does not read op events: it runs after the others, on
//! the file's comments and the list of findings that comments suppressed. Only
//! stridelint's own codes (`SL` + digits) are judged; a blanket `# noqa` and other tools'
//! codes (`E501`, `F401`) belong to other linters and are left alone. The fix (safe)
//! removes the unused codes, or the whole directive when none remains.

use std::sync::Arc;

use crate::diagnostic::{Applicability, Diagnostic, Edit, Fix};
use crate::ir::Span;
use crate::lints::UNUSED_SUPPRESSION as CODE;
use crate::settings::Settings;
use crate::source::SourceFile;
use crate::suppression::{is_stridelint_code, Directive, DirectiveKind};

/// Why a listed code is unused (Ruff's three categories).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Reason {
    /// No finding of this rule on the line.
    Unused,
    /// The rule is not enabled for this file, so there is nothing to suppress.
    NonEnabled,
    /// No such rule.
    Unknown,
}

impl Reason {
    fn label(self) -> &'static str {
        match self {
            Reason::Unused => "unused",
            Reason::NonEnabled => "non-enabled",
            Reason::Unknown => "unknown",
        }
    }
}

/// Report the unused codes of every directive in `file`. `used` lists (0-based line of the
/// directive, code) for every finding a directive suppressed.
pub fn check(
    file: &Arc<SourceFile>,
    used: &[(usize, &str)],
    settings: &Settings,
) -> Vec<Diagnostic> {
    if settings.ignore_noqa || !settings.is_enabled(CODE) || file.is_file_exempt() {
        return Vec::new();
    }
    let known = crate::settings::known_codes();
    let mut out = Vec::new();
    for found in &file.suppressions().lines {
        let (line, directive) = (found.line, &found.directive);
        // A directive spread over the lines of a block comment is left alone.
        if directive.range.end > file.line_range(line).end {
            continue;
        }
        // A directive that lists SL100 itself opts out of this rule.
        if directive
            .codes
            .iter()
            .any(|(c, _)| c.eq_ignore_ascii_case(CODE))
        {
            continue;
        }
        let unused: Vec<(&str, Reason)> = directive
            .codes
            .iter()
            .map(|(code, _)| code.as_str())
            .filter(|code| is_stridelint_code(code))
            .filter_map(|code| {
                let upper = code.to_ascii_uppercase();
                let reason = if !known.contains(&upper.as_str()) {
                    Reason::Unknown
                } else if !settings.is_enabled(&upper) {
                    Reason::NonEnabled
                } else if !used
                    .iter()
                    .any(|&(l, c)| l == line && c.eq_ignore_ascii_case(code))
                {
                    Reason::Unused
                } else {
                    return None;
                };
                Some((code, reason))
            })
            .collect();
        if unused.is_empty() {
            continue;
        }
        out.push(diagnostic(file, line, directive, &unused));
    }
    out
}

fn diagnostic(
    file: &Arc<SourceFile>,
    line: usize,
    directive: &Directive,
    unused: &[(&str, Reason)],
) -> Diagnostic {
    let kind = match directive.kind {
        DirectiveKind::Noqa => "`noqa` directive",
        DirectiveKind::Ignore => "`stridelint: ignore` directive",
    };
    let mut reasons: Vec<Reason> = unused.iter().map(|(_, r)| *r).collect();
    reasons.sort();
    reasons.dedup();
    let details: Vec<String> = reasons
        .iter()
        .map(|&reason| {
            let codes: Vec<String> = unused
                .iter()
                .filter(|(_, r)| *r == reason)
                .map(|(c, _)| format!("`{c}`"))
                .collect();
            format!("{}: {}", reason.label(), codes.join(", "))
        })
        .collect();
    let remaining: Vec<&str> = directive
        .codes
        .iter()
        .map(|(c, _)| c.as_str())
        .filter(|c| !unused.iter().any(|(u, _)| u == c))
        .collect();
    let line_range = file.line_range(line);
    let line_start = line_range.start;
    let line_text = &file.text[line_range];
    let relative = directive.range.start - line_start..directive.range.end - line_start;
    let (fix_message, edit) = if remaining.is_empty() {
        (
            "Remove unused suppression".to_string(),
            remove_directive(line_text, line_start, relative),
        )
    } else {
        let first = directive.codes.first().map_or(0, |(_, r)| r.start);
        let last = directive.codes.last().map_or(0, |(_, r)| r.end);
        // Only the codes' separators change: `SL001, SL002` → `SL002`.
        let codes: Vec<String> = unused.iter().map(|(c, _)| format!("`{c}`")).collect();
        (
            format!("Remove unused {}", codes.join(", ")),
            Edit {
                span: Span::new(first, last),
                content: remaining.join(", "),
            },
        )
    };
    Diagnostic {
        code: CODE,
        severity: crate::lints::registered(CODE).severity,
        message: format!("unused {kind} ({})", details.join("; ")),
        file: file.clone(),
        span: Span::new(directive.range.start, directive.range.end),
        chain: Vec::new(),
        notes: Vec::new(),
        help: None,
        fix: Some(Fix {
            message: fix_message,
            applicability: Applicability::Safe,
            edits: vec![edit],
        }),
        unsafe_fix: None,
        verify: None,
        copy: None,
        subject: None,
    }
}

/// The edit deleting a whole directive. Text after it on the line (a reason written after
/// `ignore[…]`) stays a comment; a line holding only the directive becomes empty rather
/// than disappearing, so line numbers — and a notebook's cells — keep their shape.
fn remove_directive(line: &str, line_start: usize, range: std::ops::Range<usize>) -> Edit {
    let text = &line[range.clone()];
    let marker = ["//", "/*"]
        .into_iter()
        .find(|m| text.starts_with(m))
        .unwrap_or("#");
    let after = &line[range.end..];
    if after.trim().is_empty() {
        let before = &line[..range.start];
        let from = before.trim_end().len();
        return Edit {
            span: Span::new(line_start + from, line_start + line.len()),
            content: String::new(),
        };
    }
    let gap = after.len() - after.trim_start().len();
    Edit {
        span: Span::new(line_start + range.start, line_start + range.end + gap),
        content: format!("{marker} "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fix::apply_edits;

    fn run(text: &str, used: &[(usize, &str)], settings: &Settings) -> (Vec<String>, String) {
        let file = Arc::new(SourceFile::new("m.py", text.to_string()));
        let found = check(&file, used, settings);
        let messages = found.iter().map(|d| d.message.clone()).collect();
        let edits: Vec<&Edit> = found
            .iter()
            .flat_map(|d| d.fix.as_ref().unwrap().edits.iter())
            .collect();
        (messages, apply_edits(text, &edits).unwrap())
    }

    #[test]
    fn unused_codes_are_reported_and_removed() {
        let text = "a = x.view(2)  # noqa: SL001\n\
                    b = y.view(3)  # noqa: SL001, SL002, E501\n\
                    c = z  # stridelint: ignore[SL002] copies on purpose\n\
                    d = w  # noqa\n\
                    e = v  # noqa: SL001\n\
                    s = '''\n# noqa: SL001\n'''\n";
        let used = [(1, "SL001"), (4, "SL001")];
        let (messages, fixed) = run(text, &used, &Settings::default());
        assert_eq!(
            messages,
            vec![
                "unused `noqa` directive (unused: `SL001`)",
                "unused `noqa` directive (unused: `SL002`)",
                "unused `stridelint: ignore` directive (unused: `SL002`)",
            ]
        );
        assert_eq!(
            fixed,
            "a = x.view(2)\nb = y.view(3)  # noqa: SL001, E501\nc = z  # copies on purpose\nd = w  # noqa\n\
             e = v  # noqa: SL001\ns = '''\n# noqa: SL001\n'''\n"
        );
    }

    #[test]
    fn unknown_and_non_enabled_codes_are_named_as_such() {
        let settings = Settings {
            ignore: vec!["SL003".into()],
            ..Settings::default()
        };
        let (messages, fixed) = run("a = 1  # noqa: SL003, SL0042\n", &[], &settings);
        assert_eq!(
            messages,
            vec!["unused `noqa` directive (non-enabled: `SL003`; unknown: `SL0042`)"]
        );
        assert_eq!(fixed, "a = 1\n");
    }

    #[test]
    fn a_directive_alone_on_its_line_leaves_an_empty_line_and_sl100_opts_out() {
        let (_, fixed) = run(
            "    # stridelint: ignore[SL001]\nx = 1  # noqa: SL001, SL100\n",
            &[],
            &Settings::default(),
        );
        assert_eq!(fixed, "\nx = 1  # noqa: SL001, SL100\n");
        let off = Settings {
            ignore: vec![CODE.into()],
            ..Settings::default()
        };
        assert!(run("a = 1  # noqa: SL001\n", &[], &off).0.is_empty());
    }
}
