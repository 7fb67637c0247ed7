//! Fixture tests: every `fixtures/python/*.py` file is realistic model code whose lines that
//! must produce a finding end with `# expect: SL001` (or `# expect: SL001, SL002`). The
//! linter must report exactly those (line, code) pairs: a missing finding and an extra one
//! both fail, and the failure message lists every disagreement of every fixture at once.
//!
//! The markers are not opinions: `scripts/oracle/check_fixtures.py` runs each fixture's
//! `_oracle_run()` under real torch and confirms every marker (and the absence of one on
//! every other layout call). Fix the linter, not a torch-confirmed marker.
//!
//! Run `cargo test --test it fixtures:: -- --skip rust_fixtures --nocapture` for the per-fixture table.

use crate::fixture_support;
use fixture_support::Finding;
use std::collections::BTreeSet;
use std::path::PathBuf;

fn fixture_paths() -> Vec<PathBuf> {
    fixture_support::fixture_paths("python", "py")
}

fn expected_codes(line: &str) -> Vec<String> {
    fixture_support::expected_codes(line, &fixture_support::PYTHON)
}

fn expected_findings(text: &str) -> BTreeSet<Finding> {
    fixture_support::expected_findings(text, &fixture_support::PYTHON)
}

#[test]
fn every_fixture_reports_exactly_its_expected_findings() {
    fixture_support::assert_every_fixture_matches(
        &fixture_paths(),
        &fixture_support::PYTHON,
        "fixtures",
    );
}

/// The fixture set is the linter's acceptance suite: it must exercise every lint, keep a
/// torch oracle entry point in every file, and never expect a finding the file suppresses
/// for that same code.
#[test]
fn fixture_set_covers_every_lint_and_is_oracle_checkable() {
    let paths = fixture_paths();
    let mut codes_seen = BTreeSet::new();
    for path in &paths {
        let name = path.display();
        let text = std::fs::read_to_string(path).expect("fixture is UTF-8");
        assert!(
            text.contains("\ndef _oracle_run():"),
            "{name} has no `_oracle_run()` for check_fixtures.py"
        );
        for (index, line) in text.lines().enumerate() {
            let codes = expected_codes(line);
            for code in &codes {
                assert!(
                    !stridelint::suppression::line_covers(line, code),
                    "{name}:{}: expects {code} on a line whose comment suppresses it",
                    index + 1
                );
            }
            codes_seen.extend(codes);
        }
    }
    for code in ["SL001", "SL002", "SL003", "SL004", "SL010"] {
        assert!(codes_seen.contains(code), "no fixture expects {code}");
    }
}

#[test]
fn expect_markers_are_read_up_to_the_next_comment() {
    assert_eq!(
        expected_codes("y = x.view(B, T, C)  # expect: SL001"),
        ["SL001"]
    );
    assert_eq!(
        expected_codes("y = x.view(-1, -1)  # expect: SL001, SL003"),
        ["SL001", "SL003"]
    );
    assert_eq!(
        expected_codes("y = x.view(B, -1)  # expect: SL001  # noqa: SL002"),
        ["SL001"]
    );
    assert!(expected_codes("y = x.view(B, -1)  # noqa: SL001").is_empty());
    assert!(expected_codes("y = x.view(B, -1)").is_empty());
    let text = "a = 1\nb = x.view(3)  # expect: SL003\n";
    assert_eq!(
        expected_findings(text),
        BTreeSet::from([(2, "SL003".to_string())])
    );
}

#[test]
#[should_panic(expected = "malformed expect marker")]
fn malformed_expect_marker_is_a_fixture_error() {
    expected_codes("y = x.view(B, -1)  # expect: SL1");
}
