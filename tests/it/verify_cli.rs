//! The built binary's `check --verify` and `replay`: JSON fields, the full output's verify
//! line, unbound sizes, engine selection on this machine, op chains and `--table`.
//!
//! Sizes are small and measurements use 3 timed runs, so the tests check what is exact
//! (bytes, layouts, verdicts, exit codes) and only that times are positive.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const MODEL: &str = r#"import torch


def merge_heads(y):
    """(B, H, T, D) -> (B, T, H*D): the reshape copies the whole tensor."""
    B, H, T, D = y.shape
    return y.permute(0, 2, 1, 3).reshape(B, T, H * D)


def literal_sizes(x):
    x = x.view(2, 8, 16, 4)
    return x.transpose(1, 2).view(2, 16, 32)
"#;

fn stridelint(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stridelint"))
        .args(args)
        .output()
        .expect("the stridelint binary runs")
}

fn model_file() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.py");
    std::fs::write(&path, MODEL).unwrap();
    (dir, path)
}

fn check(path: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "check",
        path.to_str().unwrap(),
        "--no-cache",
        "--verify-runs",
        "3",
        // The copies measured here are small: every one is reported.
        "--hidden-copy-min-bytes",
        "0",
    ];
    args.extend_from_slice(extra);
    stridelint(&args)
}

fn json_stdout(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn finding<'a>(findings: &'a Value, code: &str) -> &'a Value {
    findings
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {findings:#}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn verified_findings_carry_the_measurement_in_json() {
    let (_dir, path) = model_file();
    let dims = [
        "--dim", "B=2", "--dim", "H=4", "--dim", "T=32", "--dim", "D=16",
    ];
    let mut args = vec![
        "--verify=cpu",
        "--dtype",
        "bf16",
        "--layers",
        "4",
        "--output-format",
        "json",
    ];
    args.extend_from_slice(&dims);
    let output = check(&path, &args);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let findings = json_stdout(&output);

    let copy = &finding(&findings, "SL002")["verify"];
    assert_eq!(copy["engine"], "cpu");
    assert!(copy["device"].as_str().is_some_and(|d| !d.is_empty()));
    assert_eq!(copy["dtype"], "bf16");
    assert_eq!(
        copy["dims"],
        serde_json::json!({"B": 2, "D": 16, "H": 4, "T": 32})
    );
    // The copied tensor is (B, T, H, D) = 2·32·4·16 bf16 elements of 2 bytes.
    let bytes = 2 * 32 * 4 * 16 * 2;
    assert_eq!(copy["bytes_copied"], bytes);
    assert_eq!(copy["extra_bytes"], bytes);
    assert_eq!(copy["per_forward"]["bytes_copied"], 4 * bytes);
    assert_eq!(copy["layers"], 4);
    assert_eq!(copy["runs"], 3);
    for field in ["median_ms", "gbps", "copy_ceiling_gbps"] {
        assert!(
            copy[field].as_f64().is_some_and(|v| v > 0.0),
            "{field}: {copy:#}"
        );
    }
    assert_eq!(copy["recheck"]["agrees"], true);
    // y.permute(0, 2, 1, 3) of a contiguous (2, 4, 32, 16): strides (2048, 16, 512, 1).
    assert_eq!(
        copy["layout"]["strides"],
        serde_json::json!([2048, 16, 512, 1])
    );

    // The literal sizes need no --dim: (2, 8, 16, 4) transposed, 4 KiB of bf16.
    let view = &finding(&findings, "SL001")["verify"];
    assert_eq!(view["bytes_copied"], 2 * 8 * 16 * 4 * 2);
    assert_eq!(view["dims"], serde_json::json!({}));
    assert_eq!(view["target"], serde_json::json!([2, 16, 32]));
    assert!(view["summary"]
        .as_str()
        .unwrap()
        .contains("`view` fails at these sizes"));
}

#[test]
fn the_full_output_prints_the_verify_line() {
    let (_dir, path) = model_file();
    let output = check(
        &path,
        &[
            "--verify=cpu",
            "--dtype",
            "f16",
            "--layers",
            "3",
            "--dim",
            "B=2",
            "--dim",
            "H=2",
            "--dim",
            "T=8",
            "--dim",
            "D=8",
        ],
    );
    let stdout = text(&output.stdout);
    // 2·8·2·8 f16 elements = 512 B per layer, 1.5 KiB over 3 layers.
    let line = stdout
        .lines()
        .find(|l| l.contains("= verify: verified on ") && l.contains("copies 512 B in "))
        .unwrap_or_else(|| panic!("no verify line for the reshape:\n{stdout}"));
    assert!(
        line.contains("×3 layers = ") && line.ends_with("and 1.5 KiB per forward pass"),
        "{line}"
    );
}

#[test]
fn unbound_sizes_are_named() {
    let (_dir, path) = model_file();
    let output = check(
        &path,
        &["--verify=cpu", "--dim", "B=2", "--output-format", "json"],
    );
    let findings = json_stdout(&output);
    let skipped = &finding(&findings, "SL002")["verify"];
    assert_eq!(skipped["skipped"], "unbound sizes: D, H, T");
    assert!(skipped.get("bytes_copied").is_none());

    let full = text(&check(&path, &["--verify=cpu", "--dim", "B=2"]).stdout);
    assert!(
        full.contains("= verify: not verified: unbound sizes: D, H, T"),
        "{full}"
    );
}

#[test]
fn auto_falls_back_to_the_cpu_with_one_note() {
    let (_dir, path) = model_file();
    let output = check(&path, &["--verify", "--output-format", "json"]);
    let stderr = text(&output.stderr);
    let engine = finding(&json_stdout(&output), "SL001")["verify"]["engine"].clone();
    if engine == "cpu" {
        let notes: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("note: --verify"))
            .collect();
        assert_eq!(notes.len(), 1, "{stderr}");
        assert!(notes[0].contains("CUDA"), "{stderr}");
    } else {
        assert_eq!(engine, "cuda", "{stderr}");
        assert!(!stderr.contains("note: --verify"), "{stderr}");
    }
}

#[test]
fn cuda_that_does_not_work_is_an_error() {
    let (_dir, path) = model_file();
    let output = check(&path, &["--verify=cuda", "--output-format", "json"]);
    let stderr = text(&output.stderr);
    if output.status.code() == Some(2) {
        assert!(
            stderr.contains("error: --verify=cuda: CUDA unavailable: "),
            "{stderr}"
        );
        assert!(output.stdout.is_empty());
    } else {
        // A machine with a working GPU.
        assert_eq!(
            finding(&json_stdout(&output), "SL001")["verify"]["engine"],
            "cuda"
        );
    }
}

#[test]
fn bad_dims_are_usage_errors() {
    let (_dir, path) = model_file();
    for bad in ["B", "B=0", "B=two"] {
        let output = check(&path, &["--verify=cpu", "--dim", bad]);
        assert_eq!(output.status.code(), Some(2), "--dim {bad}");
        assert!(
            text(&output.stderr).contains("--dim"),
            "{}",
            text(&output.stderr)
        );
    }
}

fn replay(args: &[&str]) -> Output {
    let mut all = vec!["replay", "--engine", "cpu", "--runs", "3"];
    all.extend_from_slice(args);
    stridelint(&all)
}

#[test]
fn replay_prints_each_step_and_measures_the_copy() {
    let output = replay(&[
        "--shape",
        "2,16,8,4",
        "--dtype",
        "bf16",
        "permute(0,2,1,3)",
        "reshape(2,8,-1)",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].contains("(2, 16, 8, 4) strides (512, 32, 4, 1)"),
        "{stdout}"
    );
    // torch.empty(2, 16, 8, 4).permute(0, 2, 1, 3).stride() == (512, 4, 32, 1)
    assert!(
        lines[1].starts_with("permute(0,2,1,3)")
            && lines[1].contains("(2, 8, 16, 4) strides (512, 4, 32, 1)  no copy"),
        "{stdout}"
    );
    // 2·16·8·4 bf16 elements = 2 KiB.
    assert!(
        lines[2].starts_with("reshape(2,8,-1)") && lines[2].contains("copies 2.0 KiB in "),
        "{stdout}"
    );
    assert!(
        lines[3].starts_with("measured on ") && lines[3].contains("1 copy, 2.0 KiB in "),
        "{stdout}"
    );
}

#[test]
fn replay_json_has_layouts_copies_and_totals() {
    let output = replay(&[
        "--shape",
        "2,16,8,4",
        "--layers",
        "5",
        "--output-format",
        "json",
        "permute(0,2,1,3).reshape(2,8,-1)",
        "[:, :, 1:]",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let replayed = json_stdout(&output);
    assert_eq!(replayed["engine"], "cpu");
    assert_eq!(replayed["dtype"], "f32");
    let steps = replayed["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    assert_eq!(steps[0]["copies"], "no");
    assert_eq!(steps[1]["op"], "reshape(2,8,-1)");
    assert_eq!(steps[1]["copies"], "yes");
    assert_eq!(steps[1]["measurement"]["bytes_copied"], 2 * 16 * 8 * 4 * 4);
    // The copy is a fresh (2, 8, 64) tensor; [:, :, 1:] views it at offset 1.
    assert_eq!(
        steps[2]["layout"],
        serde_json::json!({"shape": [2, 8, 63], "strides": [512, 64, 1], "offset": 1})
    );
    assert_eq!(replayed["total"]["copies"], 1);
    assert_eq!(replayed["total"]["per_forward"]["bytes_copied"], 5 * 4096);
}

#[test]
fn replay_stops_at_the_step_that_raises() {
    let output = replay(&[
        "--shape",
        "2,16,8,4",
        "transpose(1,2)",
        "view(2,8,-1)",
        "t()",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("view(2,8,-1)")
            && stdout.contains(
                "raises: view size is not compatible with input tensor's size and stride"
            ),
        "{stdout}"
    );
    assert!(
        !stdout.contains("t()"),
        "the replay stops at the error:\n{stdout}"
    );
    assert!(stdout.contains("no copy: nothing to measure"), "{stdout}");
}

#[test]
fn replay_rejects_what_it_cannot_run() {
    for ops in [["frobnicate(1)"], ["view(B, -1)"], ["view(2"]] {
        let mut args = vec!["--shape", "4,6"];
        args.extend_from_slice(&ops);
        let output = replay(&args);
        assert_eq!(output.status.code(), Some(2), "{ops:?}");
        assert!(
            text(&output.stderr).starts_with("error: "),
            "{}",
            text(&output.stderr)
        );
    }
    assert_eq!(replay(&["--shape", "4,6"]).status.code(), Some(2));
    assert_eq!(
        replay(&["--shape", "4,6", "--strides", "1"]).status.code(),
        Some(2)
    );
}

#[test]
fn table_compares_view_contiguous_view_and_reshape() {
    let output = replay(&["--shape", "2,16,8,4", "--dtype", "bf16", "--table"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    let rows: Vec<(&str, &str)> = stdout
        .lines()
        .filter(|l| l.starts_with("x.") && !l.contains(": "))
        .map(|l| {
            let mut cols = l.split("  ").map(str::trim).filter(|c| !c.is_empty());
            (cols.next().unwrap(), cols.next().unwrap())
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("x.view(2, 16, -1)", "view"),
            ("x.transpose(1, 2).view(2, 8, -1)", "error"),
            ("x.transpose(1, 2).contiguous().view(2, 8, -1)", "copy"),
            ("x.transpose(1, 2).reshape(2, 8, -1)", "copy"),
        ],
        "{stdout}"
    );
    assert!(stdout.contains("the same copy as above"), "{stdout}");
    assert!(
        stdout.contains("x.transpose(1, 2).view(2, 8, -1): view size is not compatible"),
        "{stdout}"
    );

    let json = json_stdout(&replay(&[
        "--shape",
        "2,16,8,4",
        "--dtype",
        "bf16",
        "--table",
        "--output-format",
        "json",
    ]));
    let rows = json["rows"].as_array().unwrap();
    let results: Vec<&str> = rows.iter().map(|r| r["result"].as_str().unwrap()).collect();
    assert_eq!(results, ["view", "error", "copy", "copy"]);
    assert_eq!(rows[2]["copy"]["extra_bytes"], 2 * 16 * 8 * 4 * 2);
    assert_eq!(rows[3]["copy"]["reused"], true);
    assert_eq!(
        rows[2]["copy"]["bytes_copied"],
        rows[3]["copy"]["bytes_copied"]
    );
}
