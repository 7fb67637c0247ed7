//! README.md's Quick start, line by line: every command of its `sh` block is one this test
//! knows, and what the comment above it says the command does is checked against what it
//! does. The claims are read from the README's text (the number of findings, their codes
//! and severities, the exit code), so the test fails when the README and the behaviour
//! drift apart. A command the test does not know fails it too: a new Quick start line
//! needs its check here.
//!
//! Step 1 (`cargo install … --path .`, minutes of build) and step 3 (`cargo test
//! --release`, this very suite) are not run; what they say is checked against the files
//! that decide it (`Cargo.toml`, `.ci/run`).

use std::path::Path;
use std::process::Command;

use crate::cli_support;
use cli_support::{binary, stderr, stdout};

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(manifest_dir().join("README.md")).unwrap()
}

/// The text of the section `heading` (`## Quick start`), up to the next `## `.
fn section(readme: &str, heading: &str) -> String {
    let start = readme
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("README has a `{heading}` section"));
    let rest = &readme[start + 1 + heading.len()..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    rest[..end].to_string()
}

/// One step of the Quick start: the comment lines above a command (without `# `), and
/// the command.
#[derive(Debug)]
struct Step {
    comment: String,
    command: String,
}

/// The steps of the first ```` ```sh ```` block of `text`.
fn steps(text: &str) -> Vec<Step> {
    let block = text
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("the Quick start has a ```sh block");
    let mut steps = Vec::new();
    let mut comment = String::new();
    for line in block.lines() {
        let line = line.trim();
        if let Some(text) = line.strip_prefix('#') {
            comment.push_str(text.trim());
            comment.push(' ');
        } else if !line.is_empty() {
            steps.push(Step {
                comment: std::mem::take(&mut comment),
                command: line.to_string(),
            });
        }
    }
    steps
}

/// `3 findings` in `comment`.
fn claimed_count(comment: &str) -> usize {
    let words: Vec<&str> = comment.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| w.trim_end_matches([',', ':', ';']) == "findings")
        .unwrap_or_else(|| panic!("the comment says how many findings: {comment}"));
    words[at - 1]
        .parse()
        .unwrap_or_else(|_| panic!("a number before `findings`: {comment}"))
}

/// `exits 1` in `comment`.
fn claimed_exit_code(comment: &str) -> i32 {
    let rest = comment
        .split("exits ")
        .nth(1)
        .unwrap_or_else(|| panic!("the comment says how it exits: {comment}"));
    rest[..1].parse().unwrap()
}

/// Each rule code in `comment` with the severity word that comes first after it: in "an
/// SL008 and an SL002 warning and an SL001 error", SL008 and SL002 are warnings and SL001
/// an error.
fn claimed_findings(comment: &str) -> Vec<(String, String)> {
    let words: Vec<String> = comment
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_ascii_alphanumeric())
                .to_string()
        })
        .collect();
    let is_code =
        |w: &str| w.len() == 5 && w.starts_with("SL") && w[2..].chars().all(|c| c.is_ascii_digit());
    let mut claims = Vec::new();
    for (i, word) in words.iter().enumerate() {
        if !is_code(word) {
            continue;
        }
        let severity = words[i + 1..]
            .iter()
            .find(|w| matches!(w.as_str(), "error" | "warning" | "info"))
            .unwrap_or_else(|| panic!("a severity follows {word}: {comment}"));
        claims.push((word.clone(), severity.clone()));
    }
    claims
}

/// Runs a Quick start command that starts with `stridelint`, from the repository root as
/// the Quick start says, with the binary under test and a cache outside the checkout.
fn run_stridelint(command: &str, cache: &Path) -> std::process::Output {
    let args: Vec<&str> = command
        .strip_prefix("stridelint ")
        .expect("a stridelint command")
        .split_whitespace()
        .collect();
    Command::new(binary())
        .current_dir(manifest_dir())
        .args(&args)
        .env("STRIDELINT_CACHE_DIR", cache)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// Step 2: the findings the comment names are the ones reported, as many as it says, with
/// the severities it says, and the run exits as it says; the warnings alone exit 0, as
/// the comment's "warnings alone exit 0" says.
fn check_lint_step(step: &Step) {
    let cache = tempfile::tempdir().unwrap();
    let out = run_stridelint(&step.command, cache.path());
    let text = stdout(&out);
    let claims = claimed_findings(&step.comment);
    assert_eq!(
        out.status.code(),
        Some(claimed_exit_code(&step.comment)),
        "README: {}\n{text}{}",
        step.comment,
        stderr(&out)
    );
    let count = claimed_count(&step.comment);
    assert_eq!(
        claims.len(),
        count,
        "README names each finding: {}",
        step.comment
    );
    let summary = text.lines().last().unwrap_or_default();
    assert!(
        summary.starts_with(&format!("Found {count} findings ")),
        "README says {count} findings; the run says: {summary}"
    );

    // Each finding's code and severity, from the JSON of the same run.
    let json = run_stridelint(
        &format!("{} --output-format json", step.command),
        cache.path(),
    );
    let findings: Vec<serde_json::Value> = serde_json::from_slice(&json.stdout).unwrap();
    let mut reported: Vec<(String, String)> = findings
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut claimed = claims.clone();
    reported.sort();
    claimed.sort();
    assert_eq!(claimed, reported, "README: {}", step.comment);
    for (code, severity) in &claims {
        assert!(
            text.contains(&format!("{severity}: {code} [")),
            "the report shows {code} as an {severity}:\n{text}"
        );
    }

    // "warnings alone exit 0": the same file with only its warnings selected.
    assert!(
        step.comment.contains("warnings alone exit 0"),
        "{}",
        step.comment
    );
    let warnings: Vec<&str> = claims
        .iter()
        .filter(|(_, severity)| severity == "warning")
        .map(|(code, _)| code.as_str())
        .collect();
    assert!(!warnings.is_empty());
    let only_warnings = run_stridelint(
        &format!("{} --select {}", step.command, warnings.join(",")),
        cache.path(),
    );
    assert_eq!(
        only_warnings.status.code(),
        Some(0),
        "{}",
        stdout(&only_warnings)
    );
    assert!(stdout(&only_warnings).contains("warning: "));
    let failing = run_stridelint(
        &format!(
            "{} --select {} --fail-on warning",
            step.command,
            warnings.join(",")
        ),
        cache.path(),
    );
    assert_eq!(failing.status.code(), Some(1), "{}", stdout(&failing));
}

/// Step 1: `cargo install … --profile dist --path .` puts the `stridelint` binary, and only
/// it, on PATH: the profile exists, and every other binary target needs a feature that a
/// plain install does not turn on.
fn check_install_step(step: &Step) {
    assert!(
        step.comment.contains("puts `stridelint` on PATH"),
        "{step:?}"
    );
    let cargo = std::fs::read_to_string(manifest_dir().join("Cargo.toml")).unwrap();
    let profile = step
        .command
        .split("--profile ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the install names a profile");
    assert!(
        cargo.contains(&format!("\n[profile.{profile}]\n")),
        "Cargo.toml has the profile `{profile}` the Quick start installs with"
    );
    for bin in cargo.split("\n[[bin]]\n").skip(1) {
        let table = bin.split("\n[").next().unwrap();
        if !table.contains("name = \"stridelint\"") {
            assert!(
                table.contains("required-features"),
                "`cargo install` would install this binary too:\n{table}"
            );
        }
    }
}

/// Step 3: `cargo test --release` is the test command `.ci/run` runs, as the line after
/// the block says ("`.ci/run` is what CI runs: formatting, clippy, and the test command
/// above").
fn check_test_step(step: &Step, quick_start: &str) {
    assert!(quick_start.contains("`.ci/run` is what CI runs"));
    let ci = std::fs::read_to_string(manifest_dir().join(".ci/run")).unwrap();
    assert!(
        ci.lines().any(|line| line.trim() == step.command),
        ".ci/run runs `{}`",
        step.command
    );
}

#[test]
fn every_quick_start_command_does_what_the_readme_says() {
    let readme = readme();
    let quick_start = section(&readme, "## Quick start");
    let steps = steps(&quick_start);
    assert_eq!(steps.len(), 3, "{steps:#?}");
    for step in &steps {
        match step.command.as_str() {
            c if c.starts_with("cargo install ") => check_install_step(step),
            c if c.starts_with("stridelint ") => check_lint_step(step),
            "cargo test --release" => check_test_step(step, &quick_start),
            other => panic!("a Quick start command this test does not check: `{other}`"),
        }
    }
}

/// The install channels that exist only once a release is published (PyPI, the release
/// archives) say so, and so does the pre-commit hook repository made at each release.
#[test]
fn install_channels_of_a_release_say_they_need_one() {
    let readme = readme();
    let quick_start = section(&readme, "## Quick start");
    let others = quick_start
        .split("Other ways to install:")
        .nth(1)
        .expect("the Quick start lists other ways to install");
    let items: Vec<&str> = others.split("\n- ").skip(1).collect();
    for item in &items {
        let needs_release =
            item.contains("pipx install stridelint") || item.contains("each GitHub release");
        if needs_release {
            assert!(
                item.starts_with("Only after a release"),
                "an install channel that needs a release says so: {item}"
            );
        }
    }
    assert!(items
        .iter()
        .any(|item| item.contains("pipx install stridelint")));
    let pre_commit = section(&readme, "## Usage");
    assert!(
        pre_commit.contains("so it exists only after the first release"),
        "README's pre-commit section says the hook repository needs a release"
    );
}

#[test]
fn the_claim_readers_read_what_they_should() {
    let comment = "Lint the bundled example: 3 findings, an SL008 and an SL002 warning and an \
                   SL001 error; it exits 1, for the error";
    assert_eq!(claimed_count(comment), 3);
    assert_eq!(claimed_exit_code(comment), 1);
    assert_eq!(
        claimed_findings(comment),
        [
            ("SL008".to_string(), "warning".to_string()),
            ("SL002".to_string(), "warning".to_string()),
            ("SL001".to_string(), "error".to_string()),
        ]
    );
    let steps = steps("```sh\n# 1. one\n#    two\nstridelint a.py\n\ncargo x\n```\n");
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0].comment, "1. one two ");
    assert_eq!(steps[1].comment, "");
}
