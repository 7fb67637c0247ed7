//! The command line as users meet it: configuration discovery and errors (exit 2 with the
//! file and key named), `--config`, SL100 and its fix, `--add-noqa`, `--summary`, and no
//! progress bar where nobody watches. (The GitHub Action's steps: `tests/it/action.rs`.)

use std::path::Path;
use std::process::{Command, Output};

use crate::cli_support;
use cli_support::{project, stderr, stdout};

const VIEW_BUG: &str = "\
def merge(x):
    B, H, T, D = x.shape
    y = x.transpose(1, 2)
    return y.view(B, T, H * D)
";

fn stridelint(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stridelint"))
        .current_dir(dir)
        .args(args)
        .arg("--no-cache")
        .env_remove("STRIDELINT_CACHE_DIR")
        .output()
        .expect("the binary runs")
}

#[test]
fn an_unknown_key_is_an_error_naming_file_and_key() {
    let dir = project(&[
        ("stridelint.toml", "selectt = [\"SL001\"]\n"),
        ("m.py", VIEW_BUG),
    ]);
    let out = stridelint(dir.path(), &["check", "."]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.starts_with(
            "error: stridelint.toml:1:1: unknown field `selectt`, expected one of `extend`, `select`"
        ),
        "{err}"
    );
    assert!(
        stdout(&out).is_empty(),
        "no report on a configuration error"
    );
}

#[test]
fn a_wrong_type_names_the_key_and_the_expected_type() {
    let dir = project(&[
        ("pyproject.toml", "[tool.stridelint]\nignore = \"SL002\"\n"),
        ("m.py", VIEW_BUG),
    ]);
    let out = stridelint(dir.path(), &["check", "."]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).trim(),
        "error: pyproject.toml:2:10: ignore: invalid type: string \"SL002\", expected an array"
    );
}

#[test]
fn unknown_rules_in_flags_are_errors() {
    let dir = project(&[("m.py", VIEW_BUG)]);
    let out = stridelint(dir.path(), &["check", ".", "--select", "SL0X1"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).trim(),
        "error: --select: unknown rule selector `SL0X1` (see `stridelint rules`)"
    );
}

#[test]
fn the_discovered_configuration_and_config_flag_apply() {
    let dir = project(&[
        ("stridelint.toml", "ignore = [\"SL001\"]\n"),
        ("other.toml", "select = [\"SL001\"]\n"),
        ("m.py", VIEW_BUG),
    ]);
    let discovered = stridelint(dir.path(), &["check", ".", "--output-format", "concise"]);
    assert_eq!(discovered.status.code(), Some(0), "{}", stdout(&discovered));
    let explicit = stridelint(
        dir.path(),
        &[
            "check",
            "m.py",
            "--output-format",
            "concise",
            "--config",
            "other.toml",
        ],
    );
    assert_eq!(explicit.status.code(), Some(1));
    assert!(
        stdout(&explicit).starts_with("m.py:4:12: SL001 "),
        "{}",
        stdout(&explicit)
    );
    let missing = stridelint(dir.path(), &["check", ".", "--config", "nope.toml"]);
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(
        stderr(&missing).trim(),
        "error: nope.toml: no such configuration file"
    );
    // CLI flags override the file: --extend-select re-enables what it ignores.
    let extended = stridelint(dir.path(), &["check", ".", "--extend-select", "SL001"]);
    assert_eq!(extended.status.code(), Some(1));
}

#[test]
fn unused_suppressions_are_reported_and_fixed() {
    let text = "def f(x):\n    y = x.contiguous()  # noqa: SL001, E501\n    return y  # stridelint: ignore[SL002]\n";
    let dir = project(&[("m.py", text)]);
    // SL100 is a warning: `--fail-on warning` makes it fail the run (a stale suppression
    // in CI).
    let out = stridelint(dir.path(), &["check", "m.py", "--output-format", "concise"]);
    assert_eq!(out.status.code(), Some(0));
    let strict = stridelint(
        dir.path(),
        &[
            "check",
            "m.py",
            "--output-format",
            "concise",
            "--fail-on",
            "warning",
        ],
    );
    assert_eq!(strict.status.code(), Some(1));
    assert_eq!(
        stdout(&out)
            .lines()
            .filter(|l| l.starts_with("m.py"))
            .collect::<Vec<_>>(),
        vec![
            "m.py:2:25: SL100 [*] unused `noqa` directive (unused: `SL001`)",
            "m.py:3:15: SL100 [*] unused `stridelint: ignore` directive (unused: `SL002`)",
        ]
    );
    let fixed = stridelint(dir.path(), &["check", "m.py", "--fix"]);
    assert_eq!(fixed.status.code(), Some(0), "{}", stdout(&fixed));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("m.py")).unwrap(),
        "def f(x):\n    y = x.contiguous()  # noqa: E501\n    return y\n"
    );
    // Blanket `# noqa` and other tools' codes are left alone.
    let dir = project(&[("m.py", "x = 1  # noqa\ny = 2  # noqa: E501\n")]);
    assert_eq!(
        stridelint(dir.path(), &["check", "m.py"]).status.code(),
        Some(0)
    );
}

#[test]
fn add_noqa_adopts_a_code_base_in_one_step() {
    let with_comment = VIEW_BUG.replace("H * D)\n", "H * D)  # noqa: E501\n");
    let dir = project(&[("a.py", VIEW_BUG), ("b.py", &with_comment)]);
    let out = stridelint(dir.path(), &["check", ".", "--add-noqa"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stderr(&out).trim(), "Added 2 noqa directives.");
    assert!(std::fs::read_to_string(dir.path().join("a.py"))
        .unwrap()
        .contains("H * D)  # noqa: SL001\n"));
    assert!(std::fs::read_to_string(dir.path().join("b.py"))
        .unwrap()
        .contains("H * D)  # noqa: E501, SL001\n"));
    let clean = stridelint(dir.path(), &["check", "."]);
    assert_eq!(clean.status.code(), Some(0), "{}", stdout(&clean));
    let again = stridelint(dir.path(), &["check", ".", "--add-noqa"]);
    assert_eq!(stderr(&again).trim(), "Added 0 noqa directives.");
    // --add-noqa and --fix are different modes.
    assert_eq!(
        stridelint(dir.path(), &["check", ".", "--add-noqa", "--fix"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn summary_appends_a_markdown_table() {
    let dir = project(&[("pkg/a.py", VIEW_BUG), ("pkg/b.py", VIEW_BUG)]);
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let out = stridelint(
        dir.path(),
        &[
            "check",
            "pkg",
            "--output-format",
            "github",
            "--summary",
            "summary.md",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).starts_with("::error file=pkg/a.py,line=4,col=12,"),
        "{}",
        stdout(&out)
    );
    let url = "https://github.com/stridelint/stridelint/blob/main/rules/lints/SL001.md";
    assert_eq!(
        std::fs::read_to_string(&summary).unwrap(),
        format!(
            "earlier step\n### stridelint\n\n**2 findings** (2 errors, 0 warnings) in 2 files.\n\n\
             | Rule | Name | Findings |\n|:--|:--|--:|\n| [SL001]({url}) | view-incompatible | 2 |\n\n\
             | File | Rule | Findings |\n|:--|:--|--:|\n| `pkg/a.py` | SL001 | 1 |\n| `pkg/b.py` | SL001 | 1 |\n\n"
        )
    );
}

#[test]
fn no_progress_bar_when_stderr_is_not_a_terminal() {
    let files: Vec<(String, &str)> = (0..150).map(|i| (format!("m{i}.py"), "x = 1\n")).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
    let dir = project(&refs);
    let out = stridelint(dir.path(), &["check", "."]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "All checks passed! (150 files)\n");
}

/// `-` lints standard input under `--stdin-filename`, with the configuration that applies
/// to that name (as editors and formatters pass buffers); edits are refused.
#[test]
fn standard_input_is_linted_under_its_given_name() {
    let dir = project(&[("pkg/stridelint.toml", "ignore = [\"SL001\"]\n")]);
    let run = |args: &[&str]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_stridelint"))
            .current_dir(dir.path())
            .args(args)
            .arg("--no-cache")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the binary runs");
        use std::io::Write as _;
        // A run that refuses standard input may exit before reading it (broken pipe).
        let _ = child.stdin.take().unwrap().write_all(VIEW_BUG.as_bytes());
        child.wait_with_output().unwrap()
    };
    let out = run(&[
        "check",
        "-",
        "--stdin-filename",
        "models/model.py",
        "--output-format",
        "concise",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("models/model.py:4:12: SL001"),
        "{}",
        stdout(&out)
    );
    // Under `pkg/`, `pkg/stridelint.toml` applies and ignores SL001.
    let ignored = run(&["check", "-", "--stdin-filename", "pkg/model.py"]);
    assert_eq!(ignored.status.code(), Some(0), "{}", stdout(&ignored));
    let fix = run(&["check", "-", "--fix"]);
    assert_eq!(fix.status.code(), Some(2));
    assert!(stderr(&fix).contains("standard input"), "{}", stderr(&fix));
}

/// `-o FILE` writes the report there, uncoloured, and nothing to standard output.
#[test]
fn output_file_receives_the_report() {
    let dir = project(&[("model.py", VIEW_BUG)]);
    let out = stridelint(
        dir.path(),
        &["check", ".", "--output-format", "json", "-o", "report.json"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    let report = std::fs::read_to_string(dir.path().join("report.json")).unwrap();
    let findings: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(findings[0]["code"], "SL001");
    let missing_dir = stridelint(dir.path(), &["check", ".", "-o", "no/such/dir/r.txt"]);
    assert_eq!(missing_dir.status.code(), Some(2));
}

/// Two `view` errors far apart in one file.
fn two_view_bugs() -> String {
    let filler: String = (0..20).map(|i| format!("z{i} = {i}\n")).collect();
    format!("{VIEW_BUG}{filler}{}", VIEW_BUG.replace("merge", "merge2"))
}

#[test]
fn diff_prints_minimal_hunks_with_three_lines_of_context() {
    let dir = project(&[("m.py", &two_view_bugs())]);
    let out = stridelint(dir.path(), &["check", "m.py", "--diff"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "--- m.py\n+++ m.py\n@@ -1,7 +1,7 @@\n def merge(x):\n     B, H, T, D = x.shape\n     y = x.transpose(1, 2)\n\
         -    return y.view(B, T, H * D)\n+    return y.contiguous().view(B, T, H * D)\n z0 = 0\n z1 = 1\n z2 = 2\n\
         @@ -25,4 +25,4 @@\n def merge2(x):\n     B, H, T, D = x.shape\n     y = x.transpose(1, 2)\n\
         -    return y.view(B, T, H * D)\n+    return y.contiguous().view(B, T, H * D)\n"
    );
    assert_eq!(stderr(&out), "Would fix 2 findings in 1 file.\n");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("m.py")).unwrap(),
        two_view_bugs(),
        "--diff writes nothing"
    );
}

/// SL001's unsafe fix rewrites `view` to `reshape`: shown by `--diff --unsafe-fixes`,
/// applied by `--fix --unsafe-fixes`; `--fix` alone inserts `.contiguous()`.
#[test]
fn the_unsafe_reshape_fix_is_shown_and_applied_only_with_unsafe_fixes() {
    let dir = project(&[("m.py", VIEW_BUG)]);
    let diff = stridelint(dir.path(), &["check", "m.py", "--diff", "--unsafe-fixes"]);
    assert!(
        stdout(&diff)
            .contains("-    return y.view(B, T, H * D)\n+    return y.reshape(B, T, H * D)\n"),
        "{}",
        stdout(&diff)
    );
    let fixed = stridelint(dir.path(), &["check", "m.py", "--fix", "--unsafe-fixes"]);
    assert!(
        stderr(&fixed).contains("Fixed 1 finding."),
        "{}",
        stderr(&fixed)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("m.py")).unwrap(),
        VIEW_BUG.replace("y.view(", "y.reshape(")
    );
    // What remains is the copy the reshape makes (SL002), reported, never an SL001.
    assert!(stdout(&fixed).contains("SL002"), "{}", stdout(&fixed));
    assert!(!stdout(&fixed).contains("SL001"), "{}", stdout(&fixed));
    let dir = project(&[("m.py", VIEW_BUG)]);
    let safe = stridelint(dir.path(), &["check", "m.py", "--fix"]);
    assert_eq!(safe.status.code(), Some(0), "{}", stdout(&safe));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("m.py")).unwrap(),
        VIEW_BUG.replace("y.view(", "y.contiguous().view(")
    );
}

#[test]
fn show_fixes_lists_what_was_fixed_and_exit_non_zero_on_fix_says_so() {
    let dir = project(&[("m.py", &two_view_bugs())]);
    let out = stridelint(
        dir.path(),
        &[
            "check",
            "m.py",
            "--fix",
            "--show-fixes",
            "--exit-non-zero-on-fix",
        ],
    );
    assert_eq!(
        stderr(&out),
        "Fixed 2 findings:\n- m.py:\n    2 × SL001 (view-incompatible)\n"
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "nothing remains, but a file was fixed"
    );
    let again = stridelint(
        dir.path(),
        &["check", "m.py", "--fix", "--exit-non-zero-on-fix"],
    );
    assert_eq!(again.status.code(), Some(0), "nothing to fix any more");
}

#[test]
fn ignore_noqa_reports_what_comments_suppress() {
    let text = format!(
        "# stridelint: noqa: SL002\n{}",
        VIEW_BUG.replace("H * D)\n", "H * D)  # noqa: SL001\n")
    );
    let dir = project(&[
        ("m.py", &text),
        ("n.py", &format!("# stridelint: noqa\n{VIEW_BUG}")),
    ]);
    let quiet = stridelint(dir.path(), &["check", "."]);
    assert_eq!(quiet.status.code(), Some(0), "{}", stdout(&quiet));
    let out = stridelint(
        dir.path(),
        &["check", ".", "--ignore-noqa", "--output-format", "concise"],
    );
    assert_eq!(out.status.code(), Some(1));
    let report = stdout(&out);
    let locations: Vec<&str> = report
        .lines()
        .filter(|l| l.contains(" SL001 "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    assert_eq!(locations, ["m.py:5:12:", "n.py:5:12:"], "{report}");
}

#[test]
fn exit_status_two_never_says_all_checks_passed() {
    let dir = project(&[
        ("m.py", "x = 1\n"),
        ("sub/stridelint.toml", "[dims]\nB = \"x\"\n"),
        ("sub/n.py", "y = 2\n"),
    ]);
    for args in [&["check", "nope.py"][..], &["check", "."]] {
        let out = stridelint(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            !stdout(&out).contains("All checks passed"),
            "{args:?}: {}",
            stdout(&out)
        );
    }
}

/// A configuration error names the file, line and column of the value, and the full key
/// (`dims.B`, also inside an inline table, not `dims`).
#[test]
fn configuration_errors_carry_line_column_and_the_full_key() {
    for (config, expected) in [
        (
            "select = [\"SL001\"]\ndims = { T = 4, B = \"x\" }\n",
            "error: sub/stridelint.toml:2:21: dims.B: invalid type: string \"x\", expected an integer",
        ),
        (
            "\n[dims]\nB = 0\n",
            "error: sub/stridelint.toml:3:5: dims.B: expected a size >= 1, found 0",
        ),
        (
            "ignore = [\"SL0X9\"]\n",
            "error: sub/stridelint.toml:1:10: ignore: unknown rule selector `SL0X9`",
        ),
    ] {
        let dir = project(&[("sub/stridelint.toml", config), ("sub/m.py", VIEW_BUG)]);
        let out = stridelint(dir.path(), &["check", "."]);
        assert_eq!(out.status.code(), Some(2));
        assert!(
            stderr(&out).starts_with(expected),
            "{config}: {}",
            stderr(&out)
        );
    }
}

/// `stridelint PATH` means `stridelint check PATH` when PATH exists or looks like a path;
/// a bare word that names nothing is an unknown subcommand, not a path to lint.
#[test]
fn unknown_subcommands_are_errors_and_paths_still_work_without_check() {
    let dir = project(&[("m.py", VIEW_BUG), ("pkg/a.py", VIEW_BUG)]);
    let out = stridelint(dir.path(), &["chek", "pkg"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.starts_with("error: unrecognized subcommand 'chek'") && err.contains("'check'"),
        "{err}"
    );
    assert!(stdout(&out).is_empty());
    for path in ["pkg", "m.py", ".", "./pkg/"] {
        let out = stridelint(dir.path(), &[path, "--output-format", "concise"]);
        assert_eq!(out.status.code(), Some(1), "{path}: {}", stderr(&out));
    }
    let missing = stridelint(dir.path(), &["missing.py"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).starts_with("error: missing.py: "),
        "{}",
        stderr(&missing)
    );
}

#[test]
fn clean_removes_the_caches_and_only_caches() {
    let dir = project(&[("m.py", "x = 1\n"), ("sub/n.py", "y = 2\n")]);
    let run = |cwd: &Path, args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_stridelint"))
            .current_dir(cwd)
            .args(args)
            .env_remove("STRIDELINT_CACHE_DIR")
            .output()
            .unwrap()
    };
    assert_eq!(run(dir.path(), &["check", "."]).status.code(), Some(0));
    assert_eq!(
        run(&dir.path().join("sub"), &["check", "."]).status.code(),
        Some(0)
    );
    assert!(dir.path().join(".stridelint_cache").is_dir());
    assert!(dir.path().join("sub/.stridelint_cache").is_dir());
    let out = run(dir.path(), &["clean"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "Removing cache at: .stridelint_cache\nRemoving cache at: sub/.stridelint_cache\n"
    );
    assert!(!dir.path().join(".stridelint_cache").exists());
    assert!(!dir.path().join("sub/.stridelint_cache").exists());
    assert!(dir.path().join("m.py").exists());
    // A directory stridelint did not make is refused.
    std::fs::create_dir(dir.path().join("keep")).unwrap();
    let refused = run(dir.path(), &["clean", "--cache-dir", "keep"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(dir.path().join("keep").is_dir());
}

/// `| head -1` closes the pipe after one line: the run ends without a panic message.
#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_quietly() {
    let files: Vec<(String, &str)> = (0..200).map(|i| (format!("m{i}.py"), VIEW_BUG)).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
    let dir = project(&refs);
    let exe = env!("CARGO_BIN_EXE_stridelint");
    for command in [
        format!("'{exe}' rule --all | head -1"),
        format!("'{exe}' rules | head -1"),
        format!("'{exe}' check --no-cache . | head -1"),
    ] {
        let out = Command::new("sh")
            .current_dir(dir.path())
            .arg("-c")
            .arg(&command)
            .output()
            .unwrap();
        assert_eq!(stdout(&out).lines().count(), 1, "{command}");
        assert!(stderr(&out).is_empty(), "{command}: {}", stderr(&out));
    }
}

#[test]
fn statistics_and_rule_docs_come_as_json() {
    let dir = project(&[("m.py", VIEW_BUG)]);
    let out = stridelint(
        dir.path(),
        &["check", ".", "--statistics", "--output-format", "json"],
    );
    let stats: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    // One object, two arrays, every row of an array with the same keys (Ruff's, and
    // `copies`; `null` here, no size being known).
    assert_eq!(
        stats["rules"],
        serde_json::json!([{
            "code": "SL001",
            "name": "view-incompatible",
            "count": 1,
            "fixable": true,
            "copies": null,
        }])
    );
    let keys = |row: &serde_json::Value| -> Vec<String> {
        let mut keys: Vec<String> = row.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    for row in stats["sites"].as_array().unwrap() {
        assert_eq!(
            keys(row),
            ["decided", "family", "reached", "reasons", "unknown"],
            "{row}"
        );
    }
    assert_eq!(keys(&stats), ["rules", "sites"]);
    // Nothing to count: both arrays, empty.
    let clean = project(&[("m.py", "x = 1\n")]);
    let out = stridelint(
        clean.path(),
        &["check", ".", "--statistics", "--output-format", "json"],
    );
    let empty: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(empty, serde_json::json!({"rules": [], "sites": []}));
    let rule_command = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_stridelint"))
            .args(args)
            .output()
            .unwrap()
    };
    let one = rule_command(&["rule", "SL002", "--output-format", "json"]);
    let rule: serde_json::Value = serde_json::from_str(&stdout(&one)).expect("JSON");
    assert_eq!(rule["name"], "hidden-copy");
    assert!(rule["explanation"].as_str().unwrap().starts_with("# SL002"));
    let all = rule_command(&["rule", "--all", "--output-format", "json"]);
    let rules: serde_json::Value = serde_json::from_str(&stdout(&all)).expect("JSON");
    assert_eq!(
        rules.as_array().unwrap().len(),
        stridelint::lints::RULES.len()
    );
    let text = rule_command(&["rule", "--all"]);
    assert_eq!(
        stdout(&text).matches("\n# SL").count() + 1,
        stridelint::lints::RULES.len()
    );
    // `rules` as JSON: what the text lists (code, name, severity, summary), with `fix` and
    // `url`, one object per rule in the registry's order.
    let listed = rule_command(&["rules", "--output-format", "json"]);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    let listed: serde_json::Value = serde_json::from_str(&stdout(&listed)).expect("JSON");
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), stridelint::lints::RULES.len());
    for (object, rule) in listed.iter().zip(stridelint::lints::RULES) {
        assert_eq!(
            object,
            &serde_json::json!({
                "code": rule.code,
                "name": rule.name,
                "severity": rule.severity.as_str(),
                "summary": rule.summary,
                "fix": rule.fix.as_str(),
                "url": stridelint::diagnostic::rule_url(rule.code),
            })
        );
    }
    let text = stdout(&rule_command(&["rules"]));
    assert!(
        text.starts_with("SL001   view-incompatible        error    "),
        "{text}"
    );
}

/// Model code with five shape-change sites (two decided, three whose input the analysis
/// does not know, each for another reason) and one decided matmul.
const ANALYSED_SITES: &str = "\
import torch.nn.functional as F
from mylib import helper


def heads(x, n_head):
    B, T, C = x.shape
    q = x.view(B, T, n_head, C // n_head).transpose(1, 2)
    att = q @ q.transpose(-2, -1)
    y = q.view(B, T, C)
    return att, y, helper(x).view(B, -1)


def features(x, weight, config):
    h = F.unfold(x, weight).flatten(2)
    return h, config.table.view(-1)
";

#[test]
fn statistics_count_the_sites_decided_and_why_others_are_unknown() {
    let dir = project(&[("m.py", ANALYSED_SITES)]);
    let text = stridelint(dir.path(), &["check", ".", "--statistics"]);
    assert_eq!(text.status.code(), Some(1));
    assert_eq!(
        stdout(&text),
        "\
1\tSL001\t[*] view-incompatible

Analysed call sites (decided / reached):
  view/reshape/flatten/rearrange  2 / 5 decided, 3 unknown
      1  input from a backend-dependent op
      1  input from a call the analysis cannot follow
      1  input read from an unknown object or name
  matmul family                   1 / 1 decided
"
    );
    // Normal output shows none of it.
    let plain = stdout(&stridelint(dir.path(), &["check", "."]));
    assert!(!plain.contains("Analysed call sites"), "{plain}");
    assert!(!plain.contains("cannot follow"), "{plain}");

    let json = stridelint(
        dir.path(),
        &["check", ".", "--statistics", "--output-format", "json"],
    );
    let stats: serde_json::Value = serde_json::from_str(&stdout(&json)).expect("JSON");
    // The rule rows and the family rows, apart.
    assert_eq!(stats["rules"][0]["code"], "SL001");
    assert_eq!(stats["rules"].as_array().unwrap().len(), 1);
    let rows = &stats["sites"];
    assert_eq!(rows[0]["family"], "shape-change");
    assert_eq!(
        (
            &rows[0]["reached"],
            &rows[0]["decided"],
            &rows[0]["unknown"]
        ),
        (&5.into(), &2.into(), &3.into())
    );
    assert_eq!(
        rows[0]["reasons"][1],
        serde_json::json!({"reason": "input from a call the analysis cannot follow", "count": 1})
    );
    assert_eq!(rows[1]["family"], "matmul");
    assert_eq!(rows[1]["decided"], 1);
    assert_eq!(rows.as_array().unwrap().len(), 2);
}

/// With the cache on, `--statistics` still analyses every file: the cache stores findings,
/// not what the analysis reached.
#[test]
fn statistics_are_the_same_on_a_warm_cache() {
    let dir = project(&[("m.py", ANALYSED_SITES)]);
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_stridelint"))
            .current_dir(dir.path())
            .args(["check", ".", "--statistics"])
            .env_remove("STRIDELINT_CACHE_DIR")
            .output()
            .unwrap()
    };
    let warm = Command::new(env!("CARGO_BIN_EXE_stridelint"))
        .current_dir(dir.path())
        .args(["check", "."])
        .env_remove("STRIDELINT_CACHE_DIR")
        .output()
        .unwrap();
    assert_eq!(warm.status.code(), Some(1));
    let first = stdout(&run());
    assert!(first.contains("2 / 5 decided"), "{first}");
    assert_eq!(stdout(&run()), first);
}

/// SL900 answers `reveal_layout(x)` and `# stridelint: reveal` with infos, which alone
/// leave the run passing. The strides are torch's (fixtures/python/reveal_layout.py checks
/// them: `(120, 4, 24, 1)`, offset 8, for B, T, C, n_head = 2, 5, 8, 2).
#[test]
fn reveal_layout_reports_infos_that_do_not_fail_the_run() {
    let model = "\
from debug_helpers import reveal_layout


def split_heads(x, n_head):
    B, T, C = x.size()
    k = x.view(B, T, n_head, C // n_head).transpose(1, 2)
    reveal_layout(k)
    flat = k.flatten(2)  # stridelint: reveal
    return reveal_layout(helper(x))
";
    let dir = project(&[("m.py", model)]);
    let out = stridelint(
        dir.path(),
        &[
            "check",
            ".",
            "--select",
            "SL900",
            "--output-format",
            "concise",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).is_empty(),
        "no malformed directive: {}",
        stderr(&out)
    );
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "m.py:7:5: SL900 layout of `k`: (B, n_head, T, C/n_head) strides (T·C, C/n_head, C, 1) offset 0, not contiguous",
        "{text}"
    );
    assert!(
        lines[1].starts_with("m.py:8:12: SL900 layout of `k.flatten(2)`: (B, n_head, T·C/n_head) strides (T·C, T·C/n_head, 1) offset 0, contiguous"),
        "{text}"
    );
    assert_eq!(
        lines[2],
        "m.py:9:12: SL900 layout of `helper(x)`: unknown: input from a call the analysis cannot follow",
        "{text}"
    );
    assert_eq!(
        lines[3],
        "Found 3 findings (0 errors, 0 warnings, 3 infos) in 1 file."
    );
    let sarif = stdout(&stridelint(
        dir.path(),
        &[
            "check",
            ".",
            "--select",
            "SL900",
            "--output-format",
            "sarif",
        ],
    ));
    let sarif: serde_json::Value = serde_json::from_str(&sarif).unwrap();
    assert_eq!(sarif["runs"][0]["results"][0]["level"], "note");
    let doc = Command::new(env!("CARGO_BIN_EXE_stridelint"))
        .args(["rule", "SL900"])
        .output()
        .unwrap();
    assert!(stdout(&doc).starts_with("# SL900 reveal-layout"));
}

#[test]
fn show_files_and_show_settings_lint_nothing() {
    let dir = project(&[
        (
            "stridelint.toml",
            "ignore = [\"SL002\"]\nexclude = [\"gen/\"]\n[dims]\nB = 16\n",
        ),
        ("m.py", VIEW_BUG),
        ("pkg/a.py", "x = 1\n"),
        ("gen/g.py", "x = 1\n"),
    ]);
    let files = stridelint(dir.path(), &["check", ".", "--show-files"]);
    assert_eq!(files.status.code(), Some(0));
    assert_eq!(stdout(&files), "m.py\npkg/a.py\n");
    let settings = stridelint(dir.path(), &["check", "m.py", "--show-settings"]);
    assert_eq!(settings.status.code(), Some(0));
    let text = stdout(&settings);
    assert!(
        text.starts_with("Resolved settings for: m.py\nSettings path: stridelint.toml\n"),
        "{text}"
    );
    assert!(text.contains("\nrules = [\"SL001\", \"SL003\""), "{text}");
    assert!(text.contains("\ndims = { B = 16 }\n"), "{text}");
}

/// Without `--verify`, a hidden copy whose sizes are all known says how large it is: the
/// seed's 512 MiB bf16 activation, 32 times per forward pass; with a size unbound, nothing.
#[test]
fn a_hidden_copy_smaller_than_hidden_copy_min_bytes_is_not_reported() {
    // 4·16·8 f32 elements: a 2 KiB copy, under the default 1 MiB.
    let model = "\
import torch

def heads():
    x = torch.randn(4, 8, 16)
    return x.transpose(1, 2).reshape(4, -1)

def merge(y, B, T, C):
    return y.view(B, C, T).transpose(1, 2).reshape(B, -1)
";
    let dir = project(&[("m.py", model)]);
    let rows = |out: &Output| -> Vec<String> {
        stdout(out)
            .lines()
            .filter(|l| l.contains("SL002"))
            .map(|l| l.split(' ').next().unwrap().to_string())
            .collect()
    };
    let args = [
        "check",
        ".",
        "--select",
        "SL002",
        "--output-format",
        "concise",
    ];
    let out = stridelint(dir.path(), &args);
    assert_eq!(rows(&out), vec!["m.py:8:12:"], "{}", stdout(&out));
    assert!(
        stderr(&out).contains("note: 1 hidden copy smaller than `hidden-copy-min-bytes`"),
        "{}",
        stderr(&out)
    );
    // Unknown sizes are reported as before; at sizes that make it large, it stays.
    let big = stridelint(
        dir.path(),
        &[
            &args[..],
            &["--dim", "B=64", "--dim", "T=4096", "--dim", "C=512"],
        ]
        .concat(),
    );
    assert_eq!(rows(&big), vec!["m.py:8:12:"], "{}", stdout(&big));
    let small = stridelint(
        dir.path(),
        &[&args[..], &["--dim", "B=1", "--dim", "T=4", "--dim", "C=8"]].concat(),
    );
    assert!(rows(&small).is_empty(), "{}", stdout(&small));
    // 0 reports every copy: on the command line, or in the configuration.
    let every = stridelint(
        dir.path(),
        &[&args[..], &["--hidden-copy-min-bytes", "0"]].concat(),
    );
    assert_eq!(
        rows(&every),
        vec!["m.py:5:12:", "m.py:8:12:"],
        "{}",
        stdout(&every)
    );
    std::fs::write(
        dir.path().join("stridelint.toml"),
        "hidden-copy-min-bytes = \"1K\"\n",
    )
    .unwrap();
    let out = stridelint(dir.path(), &args);
    assert_eq!(
        rows(&out),
        vec!["m.py:5:12:", "m.py:8:12:"],
        "{}",
        stdout(&out)
    );
    std::fs::write(
        dir.path().join("stridelint.toml"),
        "hidden-copy-min-bytes = \"lots\"\n",
    )
    .unwrap();
    let out = stridelint(dir.path(), &args);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("hidden-copy-min-bytes"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_hidden_copy_states_its_size_when_the_sizes_are_known() {
    let model = "\
def merge_heads(y, B, T, H, D):
    y = y.view(B, H, T, D).transpose(1, 2)
    return y.reshape(B, T, H * D)
";
    let dir = project(&[("m.py", model)]);
    let all = ["B=16", "T=4096", "H=32", "D=128"];
    // stdout of `check` with these sizes and any further arguments.
    let run = |dims: &[&str], extra: &[&str]| {
        let mut args = vec![
            "check", ".", "--select", "SL002", "--dtype", "bf16", "--layers", "32",
        ];
        for d in dims {
            args.extend(["--dim", d]);
        }
        args.extend(extra);
        stridelint(dir.path(), &args)
    };
    let sized = |dims: &[&str]| {
        let out = run(dims, &[]);
        // SL002 is a warning: reported, and the run passes (`--fail-on error`).
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(!stderr(&out).contains("only matter"), "{}", stderr(&out));
        stdout(&out)
    };
    let text = sized(&all);
    assert!(
        text.contains(
            "note: the copy at B = 16, D = 128, H = 32, T = 4096: 268435456 elements, \
             512.0 MiB in bf16; ×32 layers: 16.0 GiB per forward pass"
        ),
        "{text}"
    );
    let text = sized(&["B=16", "T=4096", "H=32"]);
    assert!(!text.contains("the copy at"), "{text}");
    // From a warm cache too (the cache keeps findings as text, without their subject).
    let text = sized(&all);
    assert!(text.contains("512.0 MiB in bf16"), "{text}");
    // `--statistics` sums them per rule, in text and JSON.
    let stats = |format: &str| stdout(&run(&all, &["--statistics", "--output-format", format]));
    let text = stats("full");
    assert!(
        text.contains("hidden-copy\tcopies 16.0 GiB per forward pass (1 of 1 with known sizes)"),
        "{text}"
    );
    let rows: serde_json::Value = serde_json::from_str(&stats("json")).unwrap();
    assert_eq!(
        rows["rules"][0]["copies"]["bytes_per_forward_pass"], 17_179_869_184_u64,
        "{rows}"
    );
    // JSON and SARIF carry the numbers.
    for (format, at) in [
        ("json", "/0/copy"),
        ("sarif", "/runs/0/results/0/properties/copy"),
    ] {
        let out = run(&all, &["--output-format", format]);
        let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let copy = report
            .pointer(at)
            .unwrap_or_else(|| panic!("{format}: no {at}"));
        assert_eq!(copy["elements"], 268_435_456, "{format}: {copy}");
        assert_eq!(copy["bytes"], 536_870_912_u64, "{format}: {copy}");
        assert_eq!(
            copy["bytes_per_forward_pass"], 17_179_869_184_u64,
            "{format}: {copy}"
        );
        assert_eq!(copy["dtype"], "bf16", "{format}: {copy}");
        assert_eq!(copy["at"]["T"], 4096, "{format}: {copy}");
    }
}

/// Sizes print in the order the code introduced them (`B, nh, T, hs = y.shape`: `nh·hs`,
/// strides `nh·T·hs`), not by name, and the same whatever else is linted with the file,
/// in parallel, and from a warm cache (which stores findings as text).
#[test]
fn sizes_print_in_the_order_the_code_introduced_them() {
    let merge = "\
def merge_heads(y):
    B, nh, T, hs = y.shape
    return y.transpose(1, 2).reshape(B, T, nh * hs)
";
    // Another file, and a function before it, that introduce the same names in another order.
    let other = "\
def split(x):
    T, B, hs, nh = x.shape
    return x.transpose(1, 2).reshape(T, hs, B * nh)
";
    let expected = "copies B·nh·T·hs elements of (B, T, nh, hs) strides (nh·T·hs, hs, T·hs, 1), \
                    to (B, T, nh·hs)";
    let dir = project(&[
        ("a_other.py", other),
        ("b_merge.py", merge),
        ("c_both.py", &format!("{other}\n\n{merge}")),
    ]);
    let alone = stdout(&stridelint(dir.path(), &["check", "b_merge.py"]));
    assert!(alone.contains(expected), "{alone}");
    assert!(
        alone.contains(
            "parameter `y` (assumed contiguous): (B, nh, T, hs) strides (nh·T·hs, T·hs, hs, 1)"
        ),
        "{alone}"
    );
    let all = stdout(&stridelint(
        dir.path(),
        &["check", ".", "--output-format", "full"],
    ));
    // The finding at `at` (`file:row:column`), with its notes.
    let finding = |text: &str, at: &str| {
        text.split("warning: ")
            .find(|f| f.contains(&format!("--> {at}\n")))
            .unwrap_or_else(|| panic!("no finding at {at}: {text}"))
            .to_owned()
    };
    assert!(finding(&all, "b_merge.py:3:12").contains(expected), "{all}");
    assert!(finding(&all, "c_both.py:8:12").contains(expected), "{all}");
    // The other order where the code spells it so.
    assert!(
        finding(&all, "a_other.py:3:12").contains("copies T·B·hs·nh elements of (T, hs, B, nh)"),
        "{all}"
    );
    let cached = || {
        Command::new(env!("CARGO_BIN_EXE_stridelint"))
            .current_dir(dir.path())
            .args(["check", ".", "--output-format", "full"])
            .env_remove("STRIDELINT_CACHE_DIR")
            .output()
            .unwrap()
    };
    let cold = stdout(&cached());
    assert_eq!(cold, all);
    assert_eq!(stdout(&cached()), all, "from the warm cache");
}

/// Several steps of a chain on one line: each label hangs from its own call and the steps
/// are numbered in the order they ran (codespan stacks the rightmost label on top).
#[test]
fn chain_steps_on_one_line_are_numbered_in_the_order_they_ran() {
    let model = "\
def merge(y):
    B, nh, T, hs = y.shape
    return y.transpose(1, 2).transpose(2, 3).reshape(B, T, nh * hs)
";
    let dir = project(&[("m.py", model)]);
    let text = stdout(&stridelint(dir.path(), &["check", "m.py"]));
    let expected = "\
2 |     B, nh, T, hs = y.shape
  |                    ------- 1. parameter `y` (assumed contiguous): (B, nh, T, hs) strides (nh·T·hs, T·hs, hs, 1)
3 |     return y.transpose(1, 2).transpose(2, 3).reshape(B, T, nh * hs)
  |            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  |            |                |
  |            |                3. `.transpose(2, 3)`: (B, T, hs, nh) strides (nh·T·hs, hs, 1, T·hs)
  |            2. `.transpose(1, 2)`: (B, T, nh, hs) strides (nh·T·hs, hs, T·hs, 1)
";
    assert!(text.contains(expected), "{text}");
    // One step per line: no numbers.
    let apart = "\
def merge(y):
    B, nh, T, hs = y.shape
    y = y.transpose(1, 2)
    return y.reshape(B, T, nh * hs)
";
    std::fs::write(dir.path().join("m.py"), apart).unwrap();
    let text = stdout(&stridelint(dir.path(), &["check", "m.py"]));
    assert!(
        text.contains("------- parameter `y` (assumed contiguous)"),
        "{text}"
    );
    assert!(
        text.contains("----------------- `.transpose(1, 2)`"),
        "{text}"
    );
}

/// A chain that runs through a helper says so in the labels of the helper's steps: the
/// flagged `view` is in `forward`, the transpose in `split_heads`.
#[test]
fn chain_steps_in_a_helper_name_it_and_the_call() {
    let model = "\
import torch.nn as nn


def split_heads(x, n_head):
    B, T, C = x.shape
    x = x.view(B, T, n_head, C // n_head)
    return x.transpose(1, 2)


class Attention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(n_embd, n_embd)

    def forward(self, x):
        B, T, C = x.shape
        q = split_heads(self.qkv(x), self.n_head)
        return q.view(B, T, C)
";
    let dir = project(&[("m.py", model)]);
    let out = stridelint(dir.path(), &["check", "m.py"]);
    let text = stdout(&out);
    assert!(text.contains("--> m.py:19:16"), "{text}");
    assert!(
        text.contains("`.view(B, T, n_head, C // n_head)` in `split_heads` (called at line 18): (B, T, n_head, n_embd/n_head)"),
        "{text}"
    );
    assert!(
        text.contains("`.transpose(1, 2)` in `split_heads` (called at line 18): (B, n_head, T, n_embd/n_head)"),
        "{text}"
    );
    // The same helper's own finding, in its own analysis, names no function.
    let helper = "\
def split_heads(x, n_head):
    B, T, C = x.shape
    x = x.view(B, T, n_head, C // n_head).transpose(1, 2)
    return x.view(B, T, C)
";
    std::fs::write(dir.path().join("m.py"), helper).unwrap();
    let text = stdout(&stridelint(dir.path(), &["check", "m.py"]));
    assert!(
        text.contains("`.transpose(1, 2)`: (B, n_head, T, C/n_head)"),
        "{text}"
    );
    assert!(!text.contains(" in `split_heads`"), "{text}");
}

/// `--watch` lints, then lints again when a file changes, as Ruff's does; a pipe gets every
/// run in turn, each ending with `Watching for file changes.`
#[test]
fn watch_lints_again_when_a_file_changes() {
    use std::io::{BufRead, BufReader};
    let clean = "import torch\n\ndef f(x):\n    return x + 1\n";
    let failing = "import torch\n\nx = torch.randn(2, 3, 4)\ny = x.transpose(1, 2).view(2, 12)\n";
    let dir = project(&[("a.py", clean)]);
    let mut child = Command::new(cli_support::binary())
        .args([
            "check",
            "--watch",
            "--no-cache",
            "--output-format",
            "concise",
            ".",
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // Everything one run printed, up to its `Watching` line.
    let mut next_run = || -> String {
        let mut run = String::new();
        for line in lines.by_ref() {
            let line = line.unwrap();
            run.push_str(&line);
            run.push('\n');
            if line.ends_with("Watching for file changes.") {
                break;
            }
        }
        run
    };
    let first = next_run();
    std::fs::write(dir.path().join("a.py"), failing).unwrap();
    let second = next_run();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(first.contains("Starting linter in watch mode"), "{first}");
    assert!(first.contains("All checks passed!"), "{first}");
    assert!(second.contains("File change detected"), "{second}");
    assert!(second.contains("a.py:4:5: SL001"), "{second}");
}

#[test]
fn watch_refuses_standard_input() {
    let dir = project(&[]);
    let out = stridelint(dir.path(), &["check", "--watch", "-"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--watch"), "{}", stderr(&out));
}

/// `--dim C=…` sizes a copy whose sizes the analysis named after another name it unified
/// with `C` (`nn.Linear(n_embd, …)` reads `x`'s `C`, which is `n_embd` from then on): the
/// nanoGPT merge of heads at B = 16, T = C = 4096, 32 heads, bf16 is 512 MiB.
#[test]
fn a_dim_given_under_a_unified_name_sizes_the_copy() {
    let source = "\
import torch
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        y = att @ v
        return y.transpose(1, 2).reshape(B, T, C)
";
    let dir = project(&[("attn.py", source)]);
    let mut args = vec!["check", "attn.py", "--dtype", "bf16", "--select", "SL002"];
    for d in ["B=16", "T=4096", "C=4096", "n_head=32"] {
        args.extend(["--dim", d]);
    }
    let text = stdout(&stridelint(dir.path(), &args));
    assert!(text.contains("512.0 MiB in bf16"), "{text}");
}
