//! `--model-config config.json`: a Hugging Face config sizes `config.<key>` and gives the
//! layers and dtype. The bytes per forward pass stated for `examples/llama/model.py` are
//! checked against what torch allocated for the same copies, and the score matrices the
//! attention written out by hand stores (SL008) against the softmax results torch stored
//! (`tests/data/model_config/llama_bytes.json`, made by
//! `scripts/oracle/check_model_config_bytes.py --table`).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn stridelint(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stridelint"))
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap()
}

#[test]
fn the_bytes_per_forward_pass_match_torchs_allocations() {
    let table: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("tests/data/model_config/llama_bytes.json")).unwrap(),
    )
    .unwrap();
    let rows = table.as_array().unwrap();
    assert!(rows.len() >= 2);
    for row in rows {
        let mut args = vec![
            "check".to_string(),
            row["model"].as_str().unwrap().into(),
            "--no-cache".into(),
            "--output-format".into(),
            "json".into(),
            "--hidden-copy-min-bytes".into(),
            "0".into(),
            "--model-config".into(),
            row["config"].as_str().unwrap().into(),
        ];
        for (name, value) in row["dims"].as_object().unwrap() {
            args.push("--dim".into());
            args.push(format!("{name}={value}"));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = stridelint(&args);
        let findings: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for (code, key) in [
            ("SL002", "bytes_per_forward_pass"),
            ("SL008", "score_matrix_bytes_per_forward_pass"),
        ] {
            let stated: BTreeMap<String, u64> = findings
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["code"] == code)
                .map(|f| {
                    (
                        f["location"]["row"].to_string(),
                        f["copy"]["bytes_per_forward_pass"].as_u64().unwrap_or(0),
                    )
                })
                .collect();
            let measured: BTreeMap<String, u64> = row[key]
                .as_object()
                .unwrap()
                .iter()
                .map(|(line, bytes)| (line.clone(), bytes.as_u64().unwrap()))
                .collect();
            assert!(!measured.is_empty(), "{key} at {}", row["dims"]);
            assert_eq!(stated, measured, "{code} at {}", row["dims"]);
        }
    }
}

#[test]
fn the_config_gives_sizes_layers_and_dtype_and_the_flags_win() {
    let base = [
        "check",
        "examples/llama/model.py",
        "--no-cache",
        "--model-config",
        "examples/llama/model.config.json",
        "--dim",
        "bsz=1",
        "--dim",
        "q_len=4096",
    ];
    let text = String::from_utf8_lossy(&stridelint(&base).stdout).into_owned();
    assert!(
        text.contains(
            "note: the copy at bsz = 1, config.hidden_size = 4096, config.num_attention_heads = 32, \
             q_len = 4096: 16777216 elements, 32.0 MiB in bf16; ×32 layers: 1.0 GiB per forward pass"
        ),
        "{text}"
    );
    let flags = [&base[..], &["--layers", "2", "--dtype", "f32"]].concat();
    let text = String::from_utf8_lossy(&stridelint(&flags).stdout).into_owned();
    assert!(
        text.contains("64.0 MiB in f32; ×2 layers: 128.0 MiB per forward pass"),
        "{text}"
    );
    let dim = [&base[..], &["--dim", "config.hidden_size=2048"]].concat();
    let text = String::from_utf8_lossy(&stridelint(&dim).stdout).into_owned();
    assert!(text.contains("config.hidden_size = 2048"), "{text}");
    // A file that is not a config is refused with exit status 2.
    let out = stridelint(&[
        "check",
        "examples/llama/model.py",
        "--model-config",
        "README.md",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("README.md: not JSON"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The config's dtype and layers are the model's: a helper file linted beside it that never
/// reads `config.*` keeps its own (f32, one layer), with the sizes the flags give.
#[test]
fn the_config_applies_only_to_the_files_that_read_it() {
    let dir = tempfile::tempdir().unwrap();
    let helper = dir.path().join("helper.py");
    std::fs::write(
        &helper,
        "def merge_heads(y):\n    B, H, T, D = y.shape\n    return y.transpose(1, 2).reshape(B, T, H * D)\n",
    )
    .unwrap();
    let out = stridelint(&[
        "check",
        "examples/llama/model.py",
        helper.to_str().unwrap(),
        "--no-cache",
        "--output-format",
        "json",
        "--model-config",
        "examples/llama/model.config.json",
        "--dim",
        "bsz=1",
        "--dim",
        "q_len=4096",
        "--dim",
        "B=1",
        "--dim",
        "T=4096",
        "--dim",
        "H=32",
        "--dim",
        "D=128",
    ]);
    let findings: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let copy_in = |file: &str| -> Vec<(String, u64)> {
        findings
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["filename"].as_str().unwrap().ends_with(file) && f["copy"].is_object())
            .map(|f| {
                let c = &f["copy"];
                (
                    c["dtype"].as_str().unwrap().to_string(),
                    c["layers"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let model = copy_in("model.py");
    assert!(
        !model.is_empty() && model.iter().all(|c| *c == ("bf16".into(), 32)),
        "{model:?}"
    );
    assert_eq!(copy_in("helper.py"), [("f32".to_string(), 1)]);
}
