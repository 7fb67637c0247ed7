// Each test binary uses the markers of one language only.
#![allow(dead_code)]

//! The fixture harness shared by `tests/fixtures.rs` (Python) and `tests/rust_fixtures.rs`
//! (Rust): fixture discovery, `expect:` markers, and the mismatch report.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One finding, as the fixtures write it: 1-based line and rule code.
pub type Finding = (usize, String);

/// How a language writes its markers: `# expect:` / `//` comments.
pub struct Markers {
    pub expect: &'static str,
    /// The comment leader that ends the code list (a suppression may follow the marker).
    pub comment: &'static str,
}

pub const PYTHON: Markers = Markers {
    expect: "# expect:",
    comment: "#",
};
pub const RUST: Markers = Markers {
    expect: "// expect:",
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
    let Some(at) = line.find(m.expect) else {
        return Vec::new();
    };
    let rest = &line[at + m.expect.len()..];
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

/// The findings stridelint reports in one file, as (line, code).
pub fn reported_findings(
    path: &Path,
    text: &str,
    settings: &stridelint::Settings,
) -> BTreeSet<Finding> {
    stridelint::check_source(path, text.to_string(), settings)
        .iter()
        .map(|d| {
            (
                d.file.location(d.span.start as usize).row,
                d.code.to_string(),
            )
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
