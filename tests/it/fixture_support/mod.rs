//! The fixture harness shared by `tests/it/fixtures.rs` (Python) and `tests/it/rust_fixtures.rs`
//! (Rust): fixture discovery, `expect:` markers, and the mismatch report.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One finding, as the fixtures write it: 1-based line and rule code. A finding that holds
/// on one named path only (`# expect-on-path: SL001`) has the code `SL001@path`.
pub type Finding = (usize, String);

/// The suffix of a finding's code that holds on one path only (see [`Finding`]).
pub const ON_PATH: &str = "@path";

/// How a language writes its markers: `# expect:` / `//` comments.
pub struct Markers {
    pub expect: &'static str,
    /// A finding certain on one named path, not on every path (`# expect-on-path:`).
    pub expect_on_path: &'static str,
    /// The comment leader that ends the code list (a suppression may follow the marker).
    pub comment: &'static str,
}

pub const PYTHON: Markers = Markers {
    expect: "# expect:",
    expect_on_path: "# expect-on-path:",
    comment: "#",
};
pub const RUST: Markers = Markers {
    expect: "// expect:",
    expect_on_path: "// expect-on-path:",
    comment: "//",
};

/// `fixtures/<sub>/*.<ext>`, sorted.
pub fn fixture_paths(sub: &str, ext: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(sub);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{} exists: {e}", dir.display()))
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    paths.sort();
    paths
}

/// The codes of one line's marker. The list ends at the next comment, so a suppression
/// comment may follow it (`# expect: SL001  # noqa: SL002`). A malformed code is a broken
/// fixture, not a linter failure, so it panics with the line.
pub fn expected_codes(line: &str, m: &Markers) -> Vec<String> {
    let mut codes = marker_codes(line, m.expect, m);
    codes.extend(
        marker_codes(line, m.expect_on_path, m)
            .into_iter()
            .map(|c| format!("{c}{ON_PATH}")),
    );
    codes
}

fn marker_codes(line: &str, marker: &str, m: &Markers) -> Vec<String> {
    let Some(at) = line.find(marker) else {
        return Vec::new();
    };
    let rest = &line[at + marker.len()..];
    let list = rest.split(m.comment).next().unwrap_or_default();
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

pub fn expected_findings(text: &str, m: &Markers) -> BTreeSet<Finding> {
    text.lines()
        .enumerate()
        .flat_map(|(index, line)| {
            expected_codes(line, m)
                .into_iter()
                .map(move |code| (index + 1, code))
        })
        .collect()
}

/// What went wrong in one fixture, written for a reader who has the file open.
pub fn describe_mismatch(
    name: &str,
    text: &str,
    missing: &[&Finding],
    extra: &[&Finding],
) -> String {
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

/// A fixture as the linter sees it: the model code, without the driver that runs it under
/// torch for `scripts/oracle/check_fixtures.py` (`def _oracle_run():`, always the last
/// definition). The driver calls the code with concrete sizes and swallows the errors it
/// expects; linted, those calls would be contexts of their own. Lines are kept (blanked), so
/// positions do not move.
pub fn without_oracle_driver(text: &str) -> String {
    match text.find("\ndef _oracle_run():") {
        Some(at) => {
            let (code, driver) = text.split_at(at);
            let blank: String = driver
                .chars()
                .map(|c| if c == '\n' { '\n' } else { ' ' })
                .collect();
            format!("{code}{blank}")
        }
        None => text.to_string(),
    }
}

/// The findings stridelint reports in one file, as (line, code).
pub fn reported_findings(
    path: &Path,
    text: &str,
    settings: &stridelint::Settings,
) -> BTreeSet<Finding> {
    stridelint::check_source(path, without_oracle_driver(text), settings)
        .iter()
        .map(|d| {
            let on_path = d
                .notes
                .iter()
                .any(|n| n.starts_with("holds on the path where"));
            let code = if on_path {
                format!("{}{ON_PATH}", d.code)
            } else {
                d.code.to_string()
            };
            (d.file.location(d.span.start as usize).row, code)
        })
        .collect()
}

/// Lints every fixture in `paths` and asserts that each reports exactly the findings its
/// markers expect. Prints a row per fixture (`--nocapture`) and, on failure, every
/// disagreement of every fixture at once.
pub fn assert_every_fixture_matches(paths: &[PathBuf], markers: &Markers, what: &str) {
    assert!(!paths.is_empty(), "no {what} found");
    let mut failures = Vec::new();
    for path in paths {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).expect("fixture is UTF-8");
        let expected = expected_findings(&text, markers);
        let actual = reported_findings(path, &text, &stridelint::Settings::default());
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
        "{} of {} {what} disagree with their `{}` markers:\n\n{}",
        failures.len(),
        paths.len(),
        markers.expect,
        failures.join("\n")
    );
}
