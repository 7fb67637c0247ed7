//! Jupyter notebooks end to end: linted cell by cell through the CLI, locations reported per
//! cell in every format, and fixes (`--fix`, `--add-noqa`) written back into the notebook
//! JSON without touching outputs, metadata or formatting.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// A notebook as Jupyter writes it (nbformat 4, `indent=1`, sorted keys, non-ASCII kept):
/// a markdown cell, a cell of imports with a line magic and a shell escape, a cell with an
/// SL001 finding and an output, and a `%%bash` cell magic.
const NOTEBOOK: &str = r##"{
 "cells": [
  {
   "cell_type": "markdown",
   "metadata": {},
   "source": [
    "# Merging heads — a layout bug"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 1,
   "metadata": {},
   "outputs": [],
   "source": [
    "%matplotlib inline\n",
    "import torch\n",
    "!nvidia-smi"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 2,
   "metadata": {
    "tags": [
     "attention"
    ]
   },
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "torch.Size([2, 8, 4, 16]) — ok\n"
     ]
    }
   ],
   "source": [
    "def merge(x):\n",
    "    B, H, T, D = x.shape\n",
    "    y = x.transpose(1, 2)\n",
    "    return y.view(B, T, H * D)"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": null,
   "metadata": {},
   "outputs": [],
   "source": [
    "%%bash\n",
    "echo $((1 + 1))"
   ]
  }
 ],
 "metadata": {
  "kernelspec": {
   "display_name": "Python 3",
   "language": "python",
   "name": "python3"
  },
  "language_info": {
   "name": "python",
   "version": "3.11.4"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
"##;

fn stridelint(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stridelint"))
        .current_dir(dir)
        .args(args)
        .arg("--no-cache")
        .env_remove("STRIDELINT_CACHE_DIR")
        .output()
        .expect("the binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn notebook_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("nb.ipynb"), NOTEBOOK).unwrap();
    dir
}

#[test]
fn findings_are_located_by_cell_in_concise_and_full() {
    let dir = notebook_dir();
    let concise = stridelint(
        dir.path(),
        &["check", "nb.ipynb", "--output-format", "concise"],
    );
    assert_eq!(concise.status.code(), Some(1));
    let text = stdout(&concise);
    // Cell 3 (the markdown cell is cell 1), row 4 of that cell, column 12: `y.view(…)`.
    // No syntax error: the magics and the shell escape were masked.
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("nb.ipynb")).collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert!(
        lines[0].starts_with("nb.ipynb:cell 3:4:12: SL001 "),
        "{text}"
    );

    let full = stdout(&stridelint(
        dir.path(),
        &["check", "nb.ipynb", "--output-format", "full"],
    ));
    assert!(full.contains("--> nb.ipynb:cell 3:4:12"), "{full}");
    // The gutter counts rows within the cell.
    assert!(
        full.contains("4 |     return y.view(B, T, H * D)"),
        "{full}"
    );
}

#[test]
fn json_and_sarif_carry_the_cell() {
    let dir = notebook_dir();
    let json: Value = serde_json::from_str(&stdout(&stridelint(
        dir.path(),
        &["check", "nb.ipynb", "--output-format", "json"],
    )))
    .unwrap();
    let finding = &json[0];
    assert_eq!(finding["cell"], 3);
    assert_eq!(finding["name"], "view-incompatible");
    assert_eq!(
        finding["location"],
        serde_json::json!({"row": 4, "column": 12})
    );
    assert_eq!(
        finding["end_location"],
        serde_json::json!({"row": 4, "column": 31})
    );
    assert_eq!(finding["noqa_row"], 4);
    assert_eq!(finding["chain"][0]["location"]["row"], 2);

    let sarif: Value = serde_json::from_str(&stdout(&stridelint(
        dir.path(),
        &["check", "nb.ipynb", "--output-format", "sarif"],
    )))
    .unwrap();
    let result = &sarif["runs"][0]["results"][0];
    assert_eq!(result["properties"]["cell"], 3);
    assert_eq!(
        result["locations"][0]["physicalLocation"]["region"]["startLine"],
        4
    );
    assert_eq!(
        result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "nb.ipynb"
    );
}

/// Everything but the code cells' `source` of two notebooks.
fn without_sources(mut notebook: Value) -> Value {
    for cell in notebook["cells"].as_array_mut().unwrap() {
        if cell["cell_type"] == "code" {
            cell.as_object_mut().unwrap().remove("source");
        }
    }
    notebook
}

#[test]
fn fix_writes_back_only_the_fixed_cells_source_and_is_idempotent() {
    let dir = notebook_dir();
    let path = dir.path().join("nb.ipynb");
    let fixed = stridelint(dir.path(), &["check", "nb.ipynb", "--fix"]);
    assert_eq!(
        fixed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&fixed.stderr)
    );
    let after = std::fs::read_to_string(&path).unwrap();
    // Exactly one line of the file changed: formatting, outputs, metadata and the
    // non-ASCII text are as Jupyter wrote them.
    let expected = NOTEBOOK.replace(
        "\"    return y.view(B, T, H * D)\"",
        "\"    return y.contiguous().view(B, T, H * D)\"",
    );
    assert_eq!(after, expected);
    let before: Value = serde_json::from_str(NOTEBOOK).unwrap();
    let now: Value = serde_json::from_str(&after).unwrap();
    assert_eq!(without_sources(before), without_sources(now));
    // A second --fix changes nothing.
    let again = stridelint(dir.path(), &["check", "nb.ipynb", "--fix"]);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
}

#[test]
fn diff_shows_the_notebook_change_and_writes_nothing() {
    let dir = notebook_dir();
    let diff = stridelint(dir.path(), &["check", "nb.ipynb", "--diff"]);
    assert_eq!(diff.status.code(), Some(1));
    let text = stdout(&diff);
    assert!(text.contains("-    \"    return y.view(B, T, H * D)\"\n+    \"    return y.contiguous().view(B, T, H * D)\"\n"), "{text}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("nb.ipynb")).unwrap(),
        NOTEBOOK
    );
}

#[test]
fn add_noqa_suppresses_inside_the_cell() {
    let dir = notebook_dir();
    let added = stridelint(dir.path(), &["check", "nb.ipynb", "--add-noqa"]);
    assert_eq!(added.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&added.stderr).contains("Added 1 noqa directive."));
    let after = std::fs::read_to_string(dir.path().join("nb.ipynb")).unwrap();
    assert_eq!(
        after,
        NOTEBOOK.replace("H * D)\"", "H * D)  # noqa: SL001\"")
    );
    let clean = stridelint(dir.path(), &["check", "nb.ipynb"]);
    assert_eq!(clean.status.code(), Some(0), "{}", stdout(&clean));
}

#[test]
fn a_broken_notebook_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.ipynb"), "{\"cells\": [").unwrap();
    let output = stridelint(dir.path(), &["check", "bad.ipynb"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("error: bad.ipynb: not a Jupyter notebook"),
        "{stderr}"
    );
}
