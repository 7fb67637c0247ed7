//! Suppression comments as the binary reads them: only real comments count (never text in
//! a string or a docstring, in Python or in Rust), Ruff's `noqa` syntax, file-level
//! `# stridelint: noqa[: codes]`, and malformed stridelint directives reported as warnings.

use std::path::Path;
use std::process::{Command, Output};

/// `view` after `transpose` merges dimensions that are not adjacent: SL001 on line `4`.
const VIEW_BUG: &str = "\
def merge(x):
    B, H, T, D = x.shape
    y = x.transpose(1, 2)
    return y.view(B, T, H * D)
";

/// A candle `matmul` of an operand narrowed on its last dim, which cuBLAS rejects: SL005 on
/// line 8, after a line of strings and chars that hold comment markers.
const CANDLE_BUG: &str = r##"use candle_core::{Result, Tensor, D};
pub fn scores(qkv: &Tensor) -> Result<Tensor> {
    let (_t, three_h) = qkv.dims2()?;
    let h = three_h / 3;
    let q = qkv.narrow(D::Minus1, 0, h)?;
    let k = qkv.narrow(D::Minus1, h, h)?;
    let s = "// stridelint: ignore[SL005]"; let c = '"'; let r = r#"/* "#;
    q.matmul(&k.t()?)
}
"##;

fn check(dir: &Path, file: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stridelint"))
        .current_dir(dir)
        .args(["check", file, "--no-cache", "--output-format", "concise"])
        .env_remove("STRIDELINT_CACHE_DIR")
        .output()
        .expect("the binary runs")
}

/// The codes reported, in order.
fn codes(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split(": ").nth(1))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

fn run(name: &str, text: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), text).unwrap();
    check(dir.path(), name)
}

#[test]
fn a_directive_inside_a_string_suppresses_nothing() {
    let text = VIEW_BUG.replace("H * D)\n", "H * D); s = \"# noqa: SL001\"\n");
    assert_eq!(codes(&run("m.py", &text)), ["SL001"]);
    // The same directive in a comment does.
    let text = VIEW_BUG.replace("H * D)\n", "H * D)  # noqa: SL001\n");
    assert!(codes(&run("m.py", &text)).is_empty());
}

#[test]
fn a_file_directive_inside_a_docstring_does_not_skip_the_file() {
    let text = format!("\"\"\"Module docs.\n# stridelint: noqa\n\"\"\"\n{VIEW_BUG}");
    assert_eq!(codes(&run("m.py", &text)), ["SL001"]);
    let text = format!("# stridelint: noqa\n{VIEW_BUG}");
    assert!(codes(&run("m.py", &text)).is_empty());
}

#[test]
fn noqa_spacing_case_and_separators_follow_ruff() {
    for comment in [
        "#noqa:SL001",
        "# NOQA : SL001",
        "# noqa: SL002 SL001",
        "# noqa:E501,SL001",
        "# NoQA",
    ] {
        let text = VIEW_BUG.replace("H * D)\n", &format!("H * D)  {comment}\n"));
        let found = codes(&run("m.py", &text));
        // SL002 listed on a line without SL002 is itself reported (SL100), nothing else.
        assert!(found.iter().all(|c| c == "SL100"), "{comment}: {found:?}");
    }
}

#[test]
fn a_file_level_directive_with_codes_suppresses_only_those() {
    let text = format!("# stridelint: noqa: SL002\n{VIEW_BUG}");
    assert_eq!(codes(&run("m.py", &text)), ["SL001"]);
    let text = format!("# stridelint: noqa: SL001\n{VIEW_BUG}");
    assert!(codes(&run("m.py", &text)).is_empty());
}

#[test]
fn malformed_stridelint_directives_are_warnings_and_suppress_nothing() {
    for (comment, expected) in [
        ("# stridelint: ignore", "names no rule"),
        ("# stridelint: ignore[]", "lists no rule code"),
        ("# stridelint: noqa SL001", "needs a `:`"),
        ("# stridelint: ignroe[SL001]", "unknown directive"),
        ("# stridelint: noqa", "must be on a line of its own"),
    ] {
        let text = VIEW_BUG.replace("H * D)\n", &format!("H * D)  {comment}\n"));
        let out = run("m.py", &text);
        assert_eq!(codes(&out), ["SL001"], "{comment}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("warning: m.py:4:33: ") && err.contains(expected),
            "{comment}: {err}"
        );
        assert_eq!(out.status.code(), Some(1));
    }
}

#[test]
fn rust_directives_are_read_from_comments_only() {
    let out = run("m.rs", CANDLE_BUG);
    assert_eq!(
        codes(&out),
        ["SL005"],
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let text = CANDLE_BUG.replace(
        "    q.matmul(&k.t()?)\n",
        "    /* a /* nested */ block */ q.matmul(&k.t()?) // stridelint: ignore[SL005]\n",
    );
    assert!(codes(&run("m.rs", &text)).is_empty());
    let text = format!("// stridelint: noqa: SL005\n{CANDLE_BUG}");
    assert!(codes(&run("m.rs", &text)).is_empty());
    let text = format!("// stridelint: noqa: SL006\n{CANDLE_BUG}");
    assert_eq!(
        codes(&run("m.rs", &text)),
        ["SL005"],
        "only the listed rule"
    );
}

/// The warning is repeated on a run that takes the file's findings from the cache.
#[test]
fn a_malformed_directive_is_reported_on_cached_runs_too() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.py"), "x = 1  # stridelint: ignore\n").unwrap();
    for run in ["first", "cached"] {
        let out = Command::new(env!("CARGO_BIN_EXE_stridelint"))
            .current_dir(dir.path())
            .args(["check", "m.py"])
            .env_remove("STRIDELINT_CACHE_DIR")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{run}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("warning: m.py:1:8: "), "{run}: {err}");
    }
    assert!(dir.path().join(".stridelint_cache").is_dir());
}
