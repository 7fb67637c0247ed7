//! Snapshot tests of the full (codespan) output on a few fixtures: the chain labels, the
//! notes with assumptions and the help/fix lines, exactly as a user sees them.

use std::path::Path;

use crate::fixture_support;

use stridelint::lints::RULES;
use stridelint::report::{write_report, OutputFormat, ReportContext, RuleInfo};
use stridelint::{check_source, Settings};

fn render(fixture: &str) -> String {
    let path = Path::new("fixtures/python").join(fixture);
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(&path)).unwrap();
    let diagnostics = check_source(
        &path,
        fixture_support::without_oracle_driver(&text),
        &Settings::default(),
    );
    assert!(!diagnostics.is_empty(), "{fixture} should have findings");
    let rules: Vec<RuleInfo> = RULES
        .iter()
        .map(|r| RuleInfo {
            code: r.code,
            name: r.name,
            summary: r.summary,
            severity: r.severity,
            doc_markdown: r.doc.text,
            claim: r.claim,
        })
        .collect();
    let ctx = ReportContext {
        rules: &rules,
        version: "test",
        color: false,
        show_fixes: true,
    };
    let mut out = Vec::new();
    write_report(&mut out, OutputFormat::Full, &diagnostics, &ctx).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn nanogpt_missing_contiguous_full_output() {
    insta::assert_snapshot!(render("nanogpt_missing_contiguous.py"));
}

#[test]
fn swin_windows_full_output() {
    insta::assert_snapshot!(render("swin_windows.py"));
}

#[test]
fn invalid_dims_full_output() {
    insta::assert_snapshot!(render("invalid_dims.py"));
}
