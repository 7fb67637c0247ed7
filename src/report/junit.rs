//! `junit`: JUnit XML, which CI services show as a test report. Ruff's mapping: one
//! `<testsuite>` per file (named by its absolute path, as Ruff's), one failing `<testcase>` per finding (named
//! `org.stridelint.SL001`, class name = the path without its extension), and, when there
//! is nothing to report, a single passing test case "No errors found" so the report is
//! never empty.
//!
//! Every attribute value and text node goes through [`escape_xml`].

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use super::paths::PathDisplay;
use crate::diagnostic::Diagnostic;

const PACKAGE: &str = "org.stridelint";

pub(super) fn write(
    w: &mut dyn Write,
    diagnostics: &[&Diagnostic],
    paths: &PathDisplay,
) -> io::Result<()> {
    writeln!(w, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    let total = diagnostics.len().max(1);
    let failures = diagnostics
        .iter()
        .filter(|d| d.severity.fails_run())
        .count();
    writeln!(
        w,
        r#"<testsuites name="stridelint" tests="{total}" failures="{failures}" errors="0">"#
    )?;

    if diagnostics.is_empty() {
        writeln!(
            w,
            r#"    <testsuite name="stridelint" tests="1" disabled="0" errors="0" failures="0" package="{PACKAGE}">"#
        )?;
        writeln!(
            w,
            r#"        <testcase name="No errors found" classname="stridelint">"#
        )?;
        writeln!(w, "        </testcase>")?;
        writeln!(w, "    </testsuite>")?;
    }

    // Grouped by the path as displayed; `write_report` sorted by path, and a BTreeMap
    // keeps that order even if two spellings of one file display alike.
    let mut by_file: BTreeMap<String, Vec<&Diagnostic>> = BTreeMap::new();
    for diagnostic in diagnostics {
        by_file
            .entry(paths.display_absolute(diagnostic.file.path()))
            .or_default()
            .push(diagnostic);
    }
    for (path, findings) in &by_file {
        let count = findings.len();
        let failed = findings.iter().filter(|d| d.severity.fails_run()).count();
        writeln!(
            w,
            r#"    <testsuite name="{}" tests="{count}" disabled="0" errors="0" failures="{failed}" package="{PACKAGE}">"#,
            escape_xml(path)
        )?;
        let classname = escape_xml(&class_name(Path::new(path)));
        for diagnostic in findings {
            // In a notebook, rows count within the cell the failure text names.
            let (cell, start) = diagnostic
                .file
                .cell_relative(diagnostic.file.location(diagnostic.span.start as usize));
            let cell = cell.map_or(String::new(), |cell| format!("cell {cell}, "));
            let message = escape_xml(&diagnostic.message);
            writeln!(
                w,
                r#"        <testcase name="{PACKAGE}.{}" classname="{classname}" line="{}" column="{}">"#,
                escape_xml(diagnostic.code),
                start.row,
                start.column
            )?;
            // An info passes: its text is the test case's output, not a failure.
            let element = if diagnostic.severity.fails_run() {
                format!(
                    r#"<failure message="{message}" type="{}">"#,
                    diagnostic.severity.as_str()
                )
            } else {
                "<system-out>".to_string()
            };
            let close = if diagnostic.severity.fails_run() {
                "</failure>"
            } else {
                "</system-out>"
            };
            writeln!(
                w,
                "            {element}{cell}line {}, col {}, {message}{close}",
                start.row, start.column
            )?;
            writeln!(w, "        </testcase>")?;
        }
        writeln!(w, "    </testsuite>")?;
    }
    writeln!(w, "</testsuites>")
}

/// `src/model.py` → `src/model`: JUnit viewers group test cases by class name, and the
/// path without extension reads like a module path.
fn class_name(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|stem| stem.to_string_lossy())
        .unwrap_or_default();
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => {
            parent.join(&*stem).to_string_lossy().into_owned()
        }
        _ => stem.into_owned(),
    }
}

/// Escapes text for use both in attribute values and in text nodes.
///
/// Besides the five markup characters, line breaks and tabs become character
/// references so attribute values keep them (a parser normalises a literal newline in an
/// attribute to a space). Control characters XML 1.0 cannot represent at all, even as
/// references, become U+FFFD.
pub(super) fn escape_xml(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            '\n' => escaped.push_str("&#10;"),
            '\r' => escaped.push_str("&#13;"),
            '\t' => escaped.push_str("&#9;"),
            c if is_forbidden_in_xml(c) => escaped.push('\u{FFFD}'),
            c => escaped.push(c),
        }
    }
    escaped
}

/// Characters outside XML 1.0's `Char` production.
fn is_forbidden_in_xml(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_line_breaks_and_control_characters_are_escaped() {
        assert_eq!(
            escape_xml(r#"a<b>&"c"'d'"#),
            "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;"
        );
        assert_eq!(escape_xml("x\ny\r\tz"), "x&#10;y&#13;&#9;z");
        assert_eq!(escape_xml("bell\u{7}"), "bell\u{FFFD}");
        assert_eq!(escape_xml("(B, T, 3·C) → ok"), "(B, T, 3·C) → ok");
    }

    #[test]
    fn class_name_is_the_path_without_extension() {
        assert_eq!(class_name(Path::new("model.py")), "model");
        assert_eq!(
            class_name(Path::new("src/nn/attention.rs")),
            "src/nn/attention"
        );
    }
}
