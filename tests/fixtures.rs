//! Fixture tests: every `fixtures/python/*.py` file is realistic model code whose lines that
//! must produce a finding end with `# expect: SL001` (or `# expect: SL001, SL002`). The
//! linter must report exactly those (line, code) pairs: a missing finding and an extra one
//! both fail, and the failure message lists every disagreement of every fixture at once.
//!
//! The markers are not opinions: `scripts/oracle/check_fixtures.py` runs each fixture's
//! `_oracle_run()` under real torch and confirms every marker (and the absence of one on
//! every other layout call). Fix the linter, not a torch-confirmed marker.
//!
//! Run `cargo test --test fixtures -- --nocapture` for the per-fixture table.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use stridelint::{check_source, Settings};

/// One finding, as the fixtures write it: 1-based line and rule code.
type Finding = (usize, String);

const EXPECT_MARKER: &str = "# expect:";

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("python")
}

fn fixture_paths() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(fixture_dir())
        .expect("fixtures/python exists")
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    paths.sort();
    paths
}

/// The codes of one line's `# expect:` marker. The list ends at the next `#`, so a
/// suppression comment may follow it (`# expect: SL001  # noqa: SL002`). A malformed code
/// is a broken fixture, not a linter failure, so it panics with the line.
fn expected_codes(line: &str) -> Vec<String> {
    let Some(at) = line.find(EXPECT_MARKER) else {
        return Vec::new();
    };
    let rest = &line[at + EXPECT_MARKER.len()..];
    let list = rest.split('#').next().unwrap_or_default();
    list.split(',')
        .map(str::trim)
        .filter(|code| !code.is_empty())
        .map(|code| {
            let well_formed = code.len() == 5
                && code.starts_with("SL")
                && code[2..].bytes().all(|b| b.is_ascii_digit());
            assert!(
                well_formed,
                "malformed expect marker {code:?} in line: {line}"
            );
            code.to_string()
        })
        .collect()
}

fn expected_findings(text: &str) -> BTreeSet<Finding> {
    text.lines()
        .enumerate()
        .flat_map(|(index, line)| {
            expected_codes(line)
                .into_iter()
                .map(move |code| (index + 1, code))
        })
        .collect()
}

fn actual_findings(path: &Path, text: &str) -> BTreeSet<Finding> {
    check_source(path, text.to_string(), &Settings::default())
        .iter()
        .map(|d| {
            (
                d.file.location(d.span.start as usize).row,
                d.code.to_string(),
            )
        })
        .collect()
}

/// What went wrong in one fixture, written for a reader who has the file open.
fn describe_mismatch(name: &str, text: &str, missing: &[&Finding], extra: &[&Finding]) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let source_of = |line: usize| lines.get(line - 1).map_or("", |l| l.trim());
    let mut report = format!("{name}:\n");
    for (line, code) in missing {
        let _ = writeln!(
            report,
            "  missing {code} at line {line}: {}",
            source_of(*line)
        );
    }
    for (line, code) in extra {
        let _ = writeln!(
            report,
            "  unexpected {code} at line {line}: {}",
            source_of(*line)
        );
    }
    report
}

#[test]
fn every_fixture_reports_exactly_its_expected_findings() {
    let paths = fixture_paths();
    assert!(
        !paths.is_empty(),
        "no fixtures found in {}",
        fixture_dir().display()
    );
    let mut failures = Vec::new();
    for path in &paths {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).expect("fixture is UTF-8");
        let expected = expected_findings(&text);
        let actual = actual_findings(path, &text);
        let missing: Vec<&Finding> = expected.difference(&actual).collect();
        let extra: Vec<&Finding> = actual.difference(&expected).collect();
        let verdict = if missing.is_empty() && extra.is_empty() {
            "ok"
        } else {
            "FAIL"
        };
        println!(
            "{verdict:<4} {name:<36} expected {:>2}, reported {:>2}, missing {:>2}, extra {:>2}",
            expected.len(),
            actual.len(),
            missing.len(),
            extra.len()
        );
        if verdict != "ok" {
            failures.push(describe_mismatch(&name, &text, &missing, &extra));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures disagree with their `# expect:` markers:\n\n{}",
        failures.len(),
        paths.len(),
        failures.join("\n")
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
            if let Some(suppression) = stridelint::source::parse_suppression(line) {
                for code in &codes {
                    assert!(
                        !suppression.covers(code),
                        "{name}:{}: expects {code} on a line whose comment suppresses it",
                        index + 1
                    );
                }
            }
            codes_seen.extend(codes);
        }
    }
    for code in ["SL001", "SL002", "SL003", "SL004"] {
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
