//! The registry (`src/lints/mod.rs`) against everything derived from it or required by it:
//! each rule's doc, fixtures and torch judge. A rule that lacks one fails the test named
//! after it, and the message says what to add. Adding a rule touches four files: the rule,
//! its doc, a fixture and the registry (nothing else lists rules; the README points at
//! `stridelint rules`).
//!
//! `cargo test --release --test it rules:: -- --nocapture` prints the rule → fixtures index.

use crate::fixture_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use stridelint::lints::{rule, Judge, RULES};

const REPO: &str = env!("CARGO_MANIFEST_DIR");
/// Where `scripts/oracle/check_fixtures.py` implements its judges.
const CHECK_FIXTURES: &str = "scripts/oracle/check_fixtures.py";

fn repo(path: &str) -> PathBuf {
    Path::new(REPO).join(path)
}

/// Rule code → the fixtures (Python and Rust) that expect a finding of it.
fn fixtures_index() -> BTreeMap<String, BTreeSet<String>> {
    let mut index: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (sub, ext, markers) in [
        ("python", "py", &fixture_support::PYTHON),
        ("rust", "rs", &fixture_support::RUST),
    ] {
        for path in fixture_support::fixture_paths(sub, ext) {
            let text = std::fs::read_to_string(&path).expect("fixture is UTF-8");
            let name = path
                .strip_prefix(REPO)
                .unwrap_or(&path)
                .display()
                .to_string();
            for (_, code) in fixture_support::expected_findings(&text, markers) {
                let code = code.trim_end_matches(fixture_support::ON_PATH).to_string();
                index.entry(code).or_default().insert(name.clone());
            }
        }
    }
    index
}

/// Rules whose findings are about tensors (and so need a fixture and a judge).
fn op_rules() -> impl Iterator<Item = &'static stridelint::lints::Rule> {
    RULES.iter().filter(|r| r.check.event_lint().is_some())
}

#[test]
fn every_rule_has_its_doc() {
    let mut codes = BTreeSet::new();
    for r in RULES {
        assert!(codes.insert(r.code), "{} is registered twice", r.code);
        assert_eq!(
            r.doc.path,
            format!("rules/lints/{}.md", r.code),
            "{}: docs live in rules/lints/<code>.md",
            r.code
        );
        let on_disk = std::fs::read_to_string(repo(r.doc.path))
            .unwrap_or_else(|e| panic!("{}: no doc at {}: {e}", r.code, r.doc.path));
        assert_eq!(on_disk, r.doc.text);
        let title = format!("# {} {}", r.code, r.name);
        assert!(
            r.doc.text.starts_with(&title),
            "{}: the doc must start with `{title}`",
            r.code
        );
        for section in [
            "## What it does",
            "## Why is this bad?",
            "## Example",
            "## How to fix",
        ] {
            assert!(
                r.doc.text.contains(section),
                "{}: the doc has no `{section}` section",
                r.code
            );
        }
        // The URL every report format gives points at that file.
        let url = stridelint::diagnostic::rule_url(r.code);
        assert!(
            url.ends_with(r.doc.path),
            "{url} does not name {}",
            r.doc.path
        );
        assert!(rule(&r.code.to_ascii_lowercase()).is_some());
    }
    // Every doc file belongs to a rule.
    for entry in std::fs::read_dir(repo("rules/lints")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        if let Some(code) = name.strip_suffix(".md") {
            assert!(
                rule(code).is_some(),
                "rules/lints/{name} documents no registered rule"
            );
        }
    }
}

/// The README names no rule list that a new rule would have to extend (a rule touches its
/// file, its doc, a fixture and its registry line, nothing else): it points at the lists the
/// registry makes, and every code it mentions is registered.
#[test]
fn the_readme_points_at_the_rules_instead_of_listing_them() {
    let readme = std::fs::read_to_string(repo("README.md")).unwrap();
    for pointer in ["`stridelint rules`", "(rules/lints/)"] {
        assert!(
            readme.contains(pointer),
            "README.md no longer mentions {pointer}"
        );
    }
    assert!(
        !readme.lines().any(|l| l.starts_with("| [SL")),
        "README.md has a rule table again: point at `stridelint rules` and rules/lints/ instead"
    );
    for word in readme.split(|c: char| !c.is_ascii_alphanumeric()) {
        if word.len() == 5
            && word.starts_with("SL")
            && word[2..].bytes().all(|b| b.is_ascii_digit())
        {
            assert!(
                rule(word).is_some(),
                "README.md names {word}, which is not registered"
            );
        }
    }
}

#[test]
fn every_rule_has_a_fixture() {
    let index = fixtures_index();
    println!("rule → fixtures (from the `expect` markers):");
    for r in RULES {
        let fixtures = index.get(r.code).cloned().unwrap_or_default();
        println!(
            "  {} {:<24} {}",
            r.code,
            r.name,
            fixtures.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    for r in op_rules() {
        assert!(
            index.contains_key(r.code),
            "{} has no fixture: add model code with a `# expect: {}` (or `// expect: {}`) marker under fixtures/",
            r.code,
            r.code,
            r.code
        );
    }
    for code in index.keys() {
        assert!(
            rule(code).is_some(),
            "a fixture expects {code}, which is not registered"
        );
    }
}

/// The judge kinds `check_fixtures.py` implements (its `JUDGE_KINDS = (...)` line).
fn judge_kinds_of_the_script() -> BTreeSet<String> {
    let script = std::fs::read_to_string(repo(CHECK_FIXTURES)).unwrap();
    let line = script
        .lines()
        .find(|l| l.starts_with("JUDGE_KINDS = ("))
        .expect("check_fixtures.py declares JUDGE_KINDS");
    line.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn every_rule_has_its_torch_judge() {
    let index = fixtures_index();
    let kinds = judge_kinds_of_the_script();
    for r in op_rules() {
        let python_fixtures = index
            .get(r.code)
            .is_some_and(|f| f.iter().any(|p| p.ends_with(".py")));
        match r.judge {
            Judge::Torch(judges) => {
                assert!(!judges.is_empty(), "{}: an empty torch judge", r.code);
                for (kind, what) in judges {
                    assert!(
                        kinds.contains(*kind),
                        "{}: judge kind `{kind}` is not one {CHECK_FIXTURES} implements ({kinds:?})",
                        r.code
                    );
                    assert!(
                        !what.is_empty() && !what.contains('"'),
                        "{}: judge `{what}`",
                        r.code
                    );
                }
            }
            Judge::Candle(test) => {
                assert!(
                    !python_fixtures,
                    "{}: Python fixtures need a torch judge",
                    r.code
                );
                let text = std::fs::read_to_string(repo(test))
                    .unwrap_or_else(|e| panic!("{}: judge {test}: {e}", r.code));
                assert!(text.contains(r.code), "{test} never mentions {}", r.code);
            }
            Judge::NotApplicable => panic!("{} reports on ops and has no judge", r.code),
        }
    }
}

/// The script reads its judges from the registry; ask it what it read (it needs no torch
/// for that) and compare.
#[test]
fn check_fixtures_reads_the_judges_of_the_registry() {
    let output = match Command::new("python3")
        .arg(repo(CHECK_FIXTURES))
        .arg("--judges")
        .output()
    {
        Ok(output) => output,
        Err(e) => {
            eprintln!("skipped: cannot run python3 ({e})");
            return;
        }
    };
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed: BTreeMap<String, Vec<(String, String)>> =
        serde_json::from_slice::<BTreeMap<String, Vec<(String, String)>>>(&output.stdout)
            .expect("--judges prints JSON");
    let expected: BTreeMap<String, Vec<(String, String)>> = RULES
        .iter()
        .filter_map(|r| match r.judge {
            Judge::Torch(judges) => Some((
                r.code.to_string(),
                judges
                    .iter()
                    .map(|(k, w)| (k.to_string(), w.to_string()))
                    .collect(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(printed, expected);
}

/// Every op rule is checked on its ops whatever else a file names: before the pre-filter
/// was derived from the registry, a file naming none of `view`/`reshape`/the permutations
/// was not parsed, so SL004 on `select` never fired there.
#[test]
fn no_rule_is_gated_by_another_rules_tokens() {
    let source = "def f(x):\n    B, T, C = x.shape\n    return x.select(5, 0)\n";
    let found = stridelint::check_source(
        Path::new("m.py"),
        source.to_string(),
        &stridelint::Settings::default(),
    );
    let codes: Vec<&str> = found.iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        ["SL004"],
        "{:?}",
        found.iter().map(|d| &d.message).collect::<Vec<_>>()
    );
}

fn stridelint(args: &[&str], dir: &Path) -> (String, String, Option<i32>) {
    let output = Command::new(env!("CARGO_BIN_EXE_stridelint"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&output.stdout).to_string(),
        String::from_utf8_lossy(&output.stderr).to_string(),
        output.status.code(),
    )
}

/// SL999 is a rule like the others: documented, named in statistics, in SARIF's rules,
/// and reported even in a file the pre-filter would skip.
#[test]
fn sl999_is_a_real_rule() {
    let (doc, _, status) = stridelint(&["rule", "SL999"], Path::new(REPO));
    assert_eq!(status, Some(0));
    assert!(doc.starts_with("# SL999 syntax-error"), "{doc}");
    let (list, _, _) = stridelint(&["rules"], Path::new(REPO));
    assert!(
        list.contains("SL999") && list.contains("syntax-error"),
        "{list}"
    );

    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sl999");
    std::fs::create_dir_all(&dir).unwrap();
    // No op any rule reports on: the pre-filter alone would skip this file.
    std::fs::write(dir.join("broken.py"), "def f(x):\n    return (x +\n").unwrap();
    let (out, err, status) = stridelint(&["check", "--no-cache", "broken.py"], &dir);
    assert_eq!(status, Some(1), "{out}{err}");
    assert!(out.contains("SL999"), "{out}");
    assert!(!out.contains("All checks passed"), "{out}");

    let (stats, _, _) = stridelint(&["check", "--no-cache", "--statistics", "broken.py"], &dir);
    assert!(
        stats.contains("SL999") && stats.contains("syntax-error"),
        "{stats}"
    );

    let (sarif, _, _) = stridelint(
        &[
            "check",
            "--no-cache",
            "--output-format",
            "sarif",
            "broken.py",
        ],
        &dir,
    );
    let sarif: serde_json::Value = serde_json::from_str(&sarif).expect("SARIF is JSON");
    let rules = &sarif["runs"][0]["tool"]["driver"]["rules"];
    assert!(
        rules
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["id"] == "SL999" && r["name"] == "syntax-error"),
        "{rules}"
    );
}

/// Configuration accepts exactly the registered codes (and their prefixes).
#[test]
fn configuration_knows_every_rule() {
    for r in RULES {
        assert!(
            stridelint::settings::known_codes().contains(&r.code),
            "{} is not a known code",
            r.code
        );
    }
    assert_eq!(stridelint::settings::known_codes().len(), RULES.len());
}
