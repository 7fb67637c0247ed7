//! Exit codes and messages at the edges of the command line: a panic in one file, paths
//! and options that are not regular files, a reader that goes away, closed standard
//! streams, `--exit-zero`, bounded numeric options, invalid exclude patterns, replay's
//! usage errors, and the Python parser's nesting limits against CPython's.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::cli_support;
use cli_support::{binary, project, stderr, stdout};

const VIEW_BUG: &str = "\
def merge(x):
    B, H, T, D = x.shape
    y = x.transpose(1, 2)
    return y.view(B, T, H * D)
";

fn command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(binary());
    command
        .current_dir(dir)
        .args(args)
        .env_remove("STRIDELINT_CACHE_DIR")
        .env_remove("STRIDELINT_DEBUG_PANIC_ON")
        .env("NO_COLOR", "1");
    command
}

/// Runs the command, killed if it takes longer than 30 s (a FIFO opened for reading
/// would block forever).
fn run(mut command: Command) -> Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("still running after 30 s: {command:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn check(dir: &Path, args: &[&str]) -> Output {
    let mut args = args.to_vec();
    args.insert(0, "check");
    args.push("--no-cache");
    run(command(dir, &args))
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

/// A notebook of one code cell holding `source`.
fn notebook(source: &str) -> String {
    serde_json::json!({
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
                   "execution_count": null, "source": source}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5
    })
    .to_string()
}

// ----- a panic in one file -----

fn panicking_project() -> tempfile::TempDir {
    let panics = format!("{VIEW_BUG}# PANICME\n");
    project(&[
        ("a.py", VIEW_BUG),
        ("b.py", &panics),
        ("c.ipynb", &notebook(&panics)),
        ("d.py", VIEW_BUG),
    ])
}

fn check_panicking(dir: &Path, args: &[&str]) -> Output {
    let mut args = args.to_vec();
    args.insert(0, "check");
    args.push("--no-cache");
    let mut command = command(dir, &args);
    command
        .env("STRIDELINT_DEBUG_PANIC_ON", "PANICME")
        .env("RUST_BACKTRACE", "1");
    run(command)
}

/// The panic is each panicking file's error, once, without the panic hook's raw output.
fn assert_panic_reported(out: &Output) {
    assert_eq!(out.status.code(), Some(2), "{}", stderr(out));
    let err = stderr(out);
    for file in ["b.py", "c.ipynb"] {
        let prefix = format!("error: {file}: internal error: the analysis panicked at ");
        assert_eq!(err.matches(&prefix).count(), 1, "{err}");
    }
    assert!(err.contains("STRIDELINT_DEBUG_PANIC_ON"), "{err}");
    assert!(!err.contains("stack backtrace"), "{err}");
    assert!(!err.contains("thread '"), "{err}");
}

#[test]
fn a_panic_in_one_file_is_its_error_and_every_format_keeps_the_others() {
    let dir = panicking_project();
    let formats = [
        "full",
        "concise",
        "json",
        "json-lines",
        "github",
        "sarif",
        "junit",
        "grouped",
        "gitlab",
        "rdjson",
        "azure",
        "pylint",
        "html",
    ];
    for format in formats {
        let out = check_panicking(dir.path(), &["--output-format", format, "."]);
        assert_panic_reported(&out);
        let report = stdout(&out);
        for kept in ["a.py", "d.py"] {
            assert!(report.contains(kept), "{format}: {kept} missing: {report}");
        }
    }
    let out = check_panicking(dir.path(), &["--statistics", "."]);
    assert_panic_reported(&out);
    assert!(stdout(&out).starts_with("2\tSL001"), "{}", stdout(&out));
}

#[test]
fn a_panic_in_one_file_keeps_the_others_fixes_and_stdin_is_contained_too() {
    let dir = panicking_project();
    let out = check_panicking(dir.path(), &["--diff", "."]);
    assert_panic_reported(&out);
    let diff = stdout(&out);
    assert!(diff.contains("a.py\n") && diff.contains("d.py\n"), "{diff}");

    let out = check_panicking(dir.path(), &["--fix", "--unsafe-fixes", "."]);
    assert_panic_reported(&out);
    let fixed = std::fs::read_to_string(dir.path().join("a.py")).unwrap();
    assert!(fixed.contains(".reshape(B, T, H * D)"), "{fixed}");

    let mut command = command(dir.path(), &["check", "--no-cache", "-"]);
    command.env("STRIDELINT_DEBUG_PANIC_ON", "PANICME");
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let source = format!("{VIEW_BUG}# PANICME\n");
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), source.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("error: stdin.py: standard input: internal error"),
        "{}",
        stderr(&out)
    );
}

// ----- paths and options that are not regular files -----

#[test]
fn a_fifo_or_device_path_is_an_error_and_a_fifo_in_a_tree_is_skipped() {
    let dir = project(&[("tree/a.py", VIEW_BUG)]);
    mkfifo(&dir.path().join("x.py"));
    mkfifo(&dir.path().join("tree/pipe.py"));

    let out = check(dir.path(), &["x.py"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("error: x.py: not a regular file (a FIFO)"),
        "{}",
        stderr(&out)
    );
    assert!(
        !stdout(&out).contains("All checks passed"),
        "{}",
        stdout(&out)
    );

    let out = check(dir.path(), &["/dev/zero"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("error: /dev/zero: not a regular file (a character device)"),
        "{}",
        stderr(&out)
    );

    // Met while walking a directory: skipped with a warning; the run is not failed by it.
    let out = check(dir.path(), &["--output-format", "concise", "tree"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("tree/a.py:4:12: SL001"),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains("warning: tree/pipe.py: not a regular file (a FIFO); skipped"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn file_valued_options_refuse_a_fifo_without_blocking() {
    let dir = project(&[("a.py", VIEW_BUG)]);
    mkfifo(&dir.path().join("m.json"));
    let out = check(dir.path(), &["--model-config", "m.json", "a.py"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("m.json: not a regular file (a FIFO)"),
        "{}",
        stderr(&out)
    );
    let out = check(dir.path(), &["--config", "m.json", "a.py"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("a FIFO"), "{}", stderr(&out));
}

// ----- replay -----

fn replay(args: &[&str]) -> Output {
    let mut all = vec!["replay", "--engine", "cpu", "--shape", "4,6"];
    all.extend_from_slice(args);
    run(command(Path::new("."), &all))
}

#[test]
fn replay_refuses_brackets_nested_too_deep() {
    let deep = "[".repeat(30_000);
    let out = replay(&[&deep]);
    assert_eq!(out.status.code(), Some(2), "{:?}", out.status);
    let err = stderr(&out);
    assert!(err.contains("brackets nested more than 200 deep"), "{err}");
    assert!(err.len() < 400, "the argument is not echoed whole: {err}");
    let nested = format!("view({}24{})", "(".repeat(199), ")".repeat(199));
    assert_eq!(replay(&[&nested]).status.code(), Some(0));
}

#[test]
fn replay_of_a_float_where_torch_takes_ints_raises_type_error() {
    for op in ["view(1.5)", "view(2, 1.5)", "reshape((4, 6.0))"] {
        let out = replay(&[op]);
        assert_eq!(out.status.code(), Some(1), "{op}: {}", stdout(&out));
        let report = stdout(&out);
        assert!(
            report.contains("raises: TypeError:") && report.contains("not float"),
            "{op}: {report}"
        );
    }
    // Ops that take numbers still replay.
    assert_eq!(replay(&["mul(1.5)"]).status.code(), Some(0));
}

// ----- --exit-zero -----

#[test]
fn exit_zero_holds_for_diff_and_contradicts_exit_non_zero_on_fix() {
    let dir = project(&[("a.py", VIEW_BUG)]);
    let out = check(
        dir.path(),
        &["--diff", "--unsafe-fixes", "--exit-zero", "a.py"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("--- a.py"), "{}", stdout(&out));
    let out = check(dir.path(), &["--diff", "--unsafe-fixes", "a.py"]);
    assert_eq!(out.status.code(), Some(1));
    // Ruff refuses the combination as contradictory (a usage error).
    let out = check(
        dir.path(),
        &["--fix", "--exit-non-zero-on-fix", "--exit-zero", "a.py"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot be used with"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.py")).unwrap(),
        VIEW_BUG
    );
}

// ----- --fail-on -----

/// A hidden copy (SL002, a warning) and nothing else: an intentional one, as in
/// merging heads.
const HIDDEN_COPY: &str = "\
def merge(x):
    B, H, T, D = x.shape
    y = x.transpose(1, 2)
    return y.reshape(B, T, H * D)
";

/// The severity gate: errors fail the run, warnings and infos do not, unless `--fail-on`
/// (or `fail-on` in the configuration) lowers the gate; `--exit-zero` still wins.
#[test]
fn warnings_alone_pass_unless_fail_on_says_warning() {
    let reveal = "def f(x):\n    y = x.transpose(0, 1)  # stridelint: reveal\n    return y\n";
    let dir = project(&[("w.py", HIDDEN_COPY), ("e.py", VIEW_BUG), ("i.py", reveal)]);
    let code = |args: &[&str]| check(dir.path(), args).status.code();
    // Warnings only: reported, and the run passes; the summary says why.
    let out = check(dir.path(), &["w.py"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("warning: SL002 [hidden-copy]"));
    assert!(
        stdout(&out).ends_with(
            "Found 1 finding (0 errors, 1 warning) in 1 file. \
             Warnings do not fail the run (`--fail-on warning` makes them).\n"
        ),
        "{}",
        stdout(&out)
    );
    assert_eq!(code(&["--fail-on", "warning", "w.py"]), Some(1));
    assert_eq!(code(&["--fail-on", "info", "w.py"]), Some(1));
    assert_eq!(code(&["--fail-on", "error", "w.py"]), Some(0));
    // Every format exits alike (the gate is not the report's).
    for format in ["concise", "json", "sarif", "github", "junit"] {
        assert_eq!(
            code(&["--output-format", format, "w.py"]),
            Some(0),
            "{format}"
        );
        assert_eq!(
            code(&["--output-format", format, "--fail-on", "warning", "w.py"]),
            Some(1),
            "{format}"
        );
    }
    // An error fails the run at every gate; a run that fails says nothing of the gate.
    for gate in ["error", "warning", "info"] {
        assert_eq!(
            code(&["--fail-on", gate, "e.py", "w.py"]),
            Some(1),
            "{gate}"
        );
    }
    let out = check(dir.path(), &["e.py", "w.py"]);
    assert!(!stdout(&out).contains("do not fail"), "{}", stdout(&out));
    // Infos fail only with `--fail-on info`.
    assert_eq!(code(&["i.py"]), Some(0));
    assert_eq!(code(&["--fail-on", "warning", "i.py"]), Some(0));
    assert_eq!(code(&["--fail-on", "info", "i.py"]), Some(1));
    // `--exit-zero` wins over the gate.
    assert_eq!(
        code(&["--fail-on", "warning", "--exit-zero", "w.py"]),
        Some(0)
    );
    // Not a severity: a usage error, naming the values.
    let out = check(dir.path(), &["--fail-on", "warnings", "w.py"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("[possible values: error, warning, info]"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn fail_on_in_the_configuration_and_the_flag_over_it() {
    let dir = project(&[
        ("w.py", HIDDEN_COPY),
        ("stridelint.toml", "fail-on = \"warning\"\n"),
    ]);
    let code = |args: &[&str]| check(dir.path(), args).status.code();
    assert_eq!(code(&["w.py"]), Some(1));
    assert_eq!(code(&["--fail-on", "error", "w.py"]), Some(0));
    // `--show-settings` shows it.
    let shown = stdout(&check(dir.path(), &["--show-settings", "w.py"]));
    assert!(shown.contains("fail-on = \"warning\"\n"), "{shown}");
    // Inherited through `extend`, and in `pyproject.toml`.
    let inherit = project(&[
        ("w.py", HIDDEN_COPY),
        ("base.toml", "fail-on = \"warning\"\n"),
        ("stridelint.toml", "extend = \"base.toml\"\n"),
    ]);
    assert_eq!(check(inherit.path(), &["w.py"]).status.code(), Some(1));
    let pyproject = project(&[
        ("w.py", HIDDEN_COPY),
        ("pyproject.toml", "[tool.stridelint]\nfail-on = \"info\"\n"),
    ]);
    assert_eq!(check(pyproject.path(), &["w.py"]).status.code(), Some(1));
    // `--config` too.
    let other = project(&[
        ("w.py", HIDDEN_COPY),
        ("ci.toml", "fail-on = \"warning\"\n"),
    ]);
    assert_eq!(check(other.path(), &["w.py"]).status.code(), Some(0));
    assert_eq!(
        check(other.path(), &["--config", "ci.toml", "w.py"])
            .status
            .code(),
        Some(1)
    );
    // A value that is no severity: an error naming the file, line, column and key.
    let bad = project(&[
        ("w.py", HIDDEN_COPY),
        ("stridelint.toml", "fail-on = \"warn\"\n"),
    ]);
    let out = check(bad.path(), &["w.py"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).trim(),
        "error: stridelint.toml:1:11: fail-on: unknown variant `warn`, \
         expected one of `error`, `warning`, `info`"
    );
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
}

// ----- standard output and input -----

/// The report's reader goes away after one line: the run ends quietly with 0, as Ruff's.
#[test]
fn a_reader_that_goes_away_ends_the_run_quietly_with_zero() {
    // Far more than a pipe's buffer holds, in every format.
    let files: Vec<(String, &str)> = (0..1000).map(|i| (format!("m{i}.py"), VIEW_BUG)).collect();
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
    let dir = project(&files);
    for args in [
        &["."][..],
        &["--output-format", "json", "."],
        &["--diff", "--unsafe-fixes", "."],
    ] {
        let mut all = vec!["check", "--no-cache"];
        all.extend_from_slice(args);
        let mut child = command(dir.path(), &all)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {:?} {}",
            out.status,
            stderr(&out)
        );
        assert!(
            !stderr(&out).contains("error"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let mut rules = command(dir.path(), &["rules"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    drop(rules.stdout.take());
    assert_eq!(rules.wait().unwrap().code(), Some(0));
}

/// `sh -c 'exec stridelint ARGS REDIRECTION'`: the only way to start it with a stream closed.
fn with_closed_stream(dir: &Path, args: &str, redirection: &str) -> Output {
    let script = format!("exec \"$0\" {args} {redirection}");
    run({
        let mut c = Command::new("sh");
        c.current_dir(dir).arg("-c").arg(script).arg(binary());
        c
    })
}

#[test]
fn a_closed_stdout_or_stdin_is_an_error() {
    let dir = project(&[("a.py", VIEW_BUG)]);
    let out = with_closed_stream(dir.path(), "check --no-cache a.py", ">&-");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("error: standard output is closed"),
        "{}",
        stderr(&out)
    );
    // With -o the report does not need standard output.
    let out = with_closed_stream(dir.path(), "check --no-cache -o r.txt a.py", ">&-");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let out = with_closed_stream(dir.path(), "rules", ">&-");
    assert_eq!(out.status.code(), Some(2));

    let out = with_closed_stream(dir.path(), "check --no-cache -", "<&-");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("error: standard input is closed"),
        "{}",
        stderr(&out)
    );
    // An empty standard input is an empty file.
    let out = with_closed_stream(dir.path(), "check --no-cache -", "</dev/null");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

// ----- --verify=cuda -----

/// `--verify=cuda` where CUDA does not work fails whether or not a finding needs measuring.
#[test]
fn verify_cuda_fails_alike_with_and_without_findings_to_measure() {
    let dir = project(&[("a.py", VIEW_BUG), ("clean.py", "x = 1\n")]);
    let dims = [
        "--dim", "B=2", "--dim", "H=2", "--dim", "T=4", "--dim", "D=4",
    ];
    let mut with_finding = vec!["--verify=cuda", "--verify-runs", "1", "a.py"];
    with_finding.extend(dims);
    let measured = check(dir.path(), &with_finding);
    let nothing = check(dir.path(), &["--verify=cuda", "clean.py"]);
    if measured.status.code() == Some(2) {
        assert_eq!(nothing.status.code(), Some(2), "{}", stderr(&nothing));
        assert!(
            stderr(&nothing).contains("error: --verify=cuda: CUDA unavailable"),
            "{}",
            stderr(&nothing)
        );
    } else {
        // A machine with a working GPU.
        assert_eq!(nothing.status.code(), Some(0), "{}", stderr(&nothing));
    }
}

// ----- numeric options -----

#[test]
fn numeric_options_are_bounded() {
    let dir = project(&[("a.py", VIEW_BUG)]);
    let refused: [&[&str]; 4] = [
        &["--min-symbolic-size", "4294967296"],
        &["--min-symbolic-size", "65537"],
        &["--verify=cpu", "--verify-runs", "100000000"],
        &["--verify=cpu", "--verify-runs", "1001"],
    ];
    for args in refused {
        let mut all = args.to_vec();
        all.push("a.py");
        let out = check(dir.path(), &all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains("is not in 1..="), "{}", stderr(&out));
    }
    let out = check(dir.path(), &["--min-symbolic-size", "65536", "a.py"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let out = run(command(
        dir.path(),
        &["replay", "--runs", "100000000", "--shape", "4", "view(-1)"],
    ));
    assert_eq!(out.status.code(), Some(2));

    std::fs::write(
        dir.path().join("stridelint.toml"),
        "min-symbolic-size = 4294967296\n",
    )
    .unwrap();
    let out = check(dir.path(), &["a.py"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(
            "error: stridelint.toml:1:21: min-symbolic-size: expected an integer from 1 to 65536"
        ),
        "{}",
        stderr(&out)
    );
}

// ----- exclude patterns -----

#[test]
fn an_invalid_exclude_pattern_is_an_error_naming_file_line_or_flag() {
    let dir = project(&[
        ("a.py", VIEW_BUG),
        (
            "stridelint.toml",
            "select = [\"SL001\"]\nexclude = [\"[invalid\"]\n",
        ),
    ]);
    let out = check(dir.path(), &["."]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out)
            .starts_with("error: stridelint.toml:2:11: exclude: invalid pattern `[invalid`"),
        "{}",
        stderr(&out)
    );
    std::fs::write(
        dir.path().join("stridelint.toml"),
        "select = [\"SL001\"]\n[per-file-ignores]\n\"[invalid\" = [\"SL001\"]\n",
    )
    .unwrap();
    let out = check(dir.path(), &["."]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("error: stridelint.toml:3:"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_file(dir.path().join("stridelint.toml")).unwrap();
    for flag in ["--exclude", "--extend-exclude"] {
        let out = check(dir.path(), &[flag, "gen/,[invalid", "."]);
        assert_eq!(out.status.code(), Some(2));
        assert!(
            stderr(&out).starts_with(&format!("error: {flag}: invalid pattern `[invalid`")),
            "{}",
            stderr(&out)
        );
    }
    let out = check(dir.path(), &["--exclude", "gen/,!keep.py,**/x/*.py", "."]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

// ----- the parser's nesting limits -----

/// CPython 3.11's verdicts, measured with `compile()` when this test was written: 200
/// nested brackets of any kind parse and 201 are `too many nested parentheses`; 99 levels
/// of indentation parse and 100 are `too many levels of indentation`.
const CPYTHON_MAX_BRACKETS: usize = 200;
const CPYTHON_MAX_INDENT_LEVELS: usize = 99;

fn nested_brackets(n: usize, kind: &str) -> String {
    let (open, close): (Vec<&str>, Vec<&str>) = match kind {
        "paren" => (vec!["("], vec![")"]),
        "bracket" => (vec!["["], vec!["]"]),
        "brace" => (vec!["{"], vec!["}"]),
        "mixed" => (vec!["(", "[", "{"], vec![")", "]", "}"]),
        _ => (vec!["f("], vec![")"]),
    };
    let opens: String = (0..n).map(|i| open[i % open.len()]).collect();
    let closes: String = (0..n).rev().map(|i| close[i % close.len()]).collect();
    let inner = if kind == "call" { "" } else { "1" };
    format!("import torch\nx = {opens}{inner}{closes}\ny = x.view(-1)\n")
}

fn nested_blocks(levels: usize) -> String {
    let blocks: String = (0..levels)
        .map(|i| format!("{}if x:\n", " ".repeat(i)))
        .collect();
    format!(
        "import torch\n{blocks}{}y = x.view(-1)\n",
        " ".repeat(levels)
    )
}

#[test]
fn nesting_limits_match_cpython_at_the_boundaries() {
    let mut files: Vec<(String, String, bool)> = Vec::new();
    for n in CPYTHON_MAX_BRACKETS - 3..=CPYTHON_MAX_BRACKETS + 1 {
        for kind in ["paren", "bracket", "brace", "mixed", "call"] {
            let valid = n <= CPYTHON_MAX_BRACKETS;
            files.push((format!("b{n}_{kind}.py"), nested_brackets(n, kind), valid));
        }
    }
    for n in CPYTHON_MAX_INDENT_LEVELS - 1..=CPYTHON_MAX_INDENT_LEVELS + 2 {
        let valid = n <= CPYTHON_MAX_INDENT_LEVELS;
        files.push((format!("i{n}.py"), nested_blocks(n), valid));
    }
    let paths: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t, _)| (p.as_str(), t.as_str()))
        .collect();
    let dir = project(&paths);
    let out = check(
        dir.path(),
        &["--select", "SL999", "--output-format", "concise", "."],
    );
    let report = stdout(&out);
    for (name, _, valid) in &files {
        let line = report.lines().find(|l| l.starts_with(&format!("{name}:")));
        match (valid, line) {
            (true, None) => {}
            (true, Some(line)) => panic!("CPython accepts {name}: {line}"),
            (false, Some(line)) => assert!(
                line.contains("too many nested parentheses")
                    || line.contains("too many levels of indentation"),
                "{line}"
            ),
            (false, None) => panic!("CPython refuses {name}: {report}"),
        }
    }
}
