//! Every input a fuzz target once crashed, hung or failed on (`tests/data/fuzz/<target>/`)
//! is replayed through the same harness (`tests/it/fuzz_support/mod.rs`), and so are the seed
//! files the fuzzers start from: each must run to completion.

use crate::fuzz_support;

use std::path::Path;
use std::time::{Duration, Instant};

fn inputs(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.is_file() && p.file_name().is_some_and(|n| n != "README.md"));
    files.sort();
    files
}

#[test]
fn past_fuzz_findings_stay_fixed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz");
    let mut replayed = 0;
    for (name, run) in fuzz_support::TARGETS {
        for input in inputs(&root.join(name)) {
            let bytes = std::fs::read(&input).unwrap();
            let start = Instant::now();
            run(&bytes);
            let took = start.elapsed();
            assert!(
                took < Duration::from_secs(5),
                "{}: {took:?} (the fuzzers' time limit is 5 s)",
                input.display()
            );
            replayed += 1;
        }
    }
    // The reproducers of the defects fixed before the fuzzers existed.
    for input in inputs(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/reliability")) {
        let bytes = std::fs::read(&input).unwrap();
        fuzz_support::python_frontend(&bytes);
        fuzz_support::pipeline(&[&[0u8][..], &bytes].concat());
        replayed += 1;
    }
    assert!(replayed > 0, "the regression corpus is empty");
}

#[test]
fn the_seed_files_run_through_every_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (dir, run) in [
        (
            "fixtures/python",
            fuzz_support::python_frontend as fn(&[u8]),
        ),
        ("fixtures/rust", fuzz_support::rust_frontend),
        ("examples", fuzz_support::python_frontend),
    ] {
        for input in inputs(&root.join(dir)) {
            run(&std::fs::read(&input).unwrap());
        }
    }
    for config in [
        "\0select = [\"SL001\"]\nexclude = [\"gen/**\", \"!keep.py\"]\n[per-file-ignores]\n\"tests/*\" = [\"SL\"]\n",
        "\u{1}[tool.stridelint]\nignore = [\"SL002\"]\ndims = { B = 16 }\n",
    ] {
        fuzz_support::config_loader(config.as_bytes());
    }
    fuzz_support::replay_ops(b"\x02permute(0,2,1,3)\nreshape(2,4,-1)\n[:, :3].contiguous()");
    fuzz_support::notebook_reader(
        br#"{"cells": [{"cell_type": "code", "source": ["%time x\n", "y = x.view(2)"]}], "metadata": {}}"#,
    );
}
