//! candle truth harness runner (scripts/candle_real/): tiny candle-transformers 0.11.1 models
//! with random weights (a `VarBuilder` over a `VarMap`), run on CPU against the logging
//! candle-core that `setup.sh` builds.
//!
//!   candle-real-runner list                      the model table
//!   candle-real-runner run <dir> [model...]      one log per model: <dir>/<model>.jsonl,
//!                                                and <dir>/status.json
//!   candle-real-runner mutate <base> <dir>       one run per (mutant, model): every
//!                                                `.contiguous()` site the base run logged
//!                                                copying, skipped (`set_skip`); logs
//!                                                <dir>/m<k>__<model>.jsonl, <dir>/mutants.json
//!   candle-real-runner selftest <vendor-dir>     the ports against candle's text and CPU
//!
//! Every model: batch 2, a prompt of 6 tokens, then one cached decoding step where the
//! model has a cache (the decoding step is where `x.i((.., t, ..))` style rows appear).

mod models;

use candle::{DType, Device, Tensor};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub type Res<T> = candle::Result<T>;

fn run_one(name: &str, f: fn() -> Res<()>) -> String {
    candle::candle_real_log::reset();
    // the same weights and inputs in every run of this model (FNV-1a of the name)
    let seed = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    });
    candle::candle_real_log::seed(seed);
    let r = std::panic::catch_unwind(f);
    candle::candle_real_log::reset();
    match r {
        Ok(Ok(())) => "ok".to_string(),
        Ok(Err(e)) => format!("error: {}", format!("{e}").lines().next().unwrap_or("")),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            format!("panic: {msg}")
        }
    }
}

fn cmd_run(dir: &Path, only: &[String]) {
    std::fs::create_dir_all(dir).unwrap();
    let mut status = BTreeMap::new();
    for (name, f) in models::MODELS {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let log = dir.join(format!("{name}.jsonl"));
        let _ = std::fs::remove_file(&log);
        candle::candle_real_log::set_output(Some(&log));
        let t = std::time::Instant::now();
        let s = run_one(name, *f);
        candle::candle_real_log::set_output(None);
        eprintln!("{name:24} {:6.2}s {s}", t.elapsed().as_secs_f64());
        status.insert(name.to_string(), s);
    }
    let j = serde_json::to_string_pretty(&status).unwrap();
    let p = dir.join("status.json");
    // merge with an existing status (a partial rerun)
    let mut all: BTreeMap<String, String> = std::fs::read_to_string(&p)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    if only.is_empty() {
        all.clear();
    }
    all.extend(status);
    let _ = j;
    std::fs::write(p, serde_json::to_string_pretty(&all).unwrap()).unwrap();
}

/// Model files: sites in candle-transformers' own sources (not `@candle-nn/...`).
fn is_model_site(site: &str) -> bool {
    !site.starts_with('@') && !site.is_empty()
}

fn cmd_mutate(base: &Path, dir: &Path, only_sites: &[String]) {
    std::fs::create_dir_all(dir).unwrap();
    // site -> models that ran it with a copying (non-contiguous input) depth-0 contiguous
    let mut cands: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, _) in models::MODELS {
        let Ok(text) = std::fs::read_to_string(base.join(format!("{name}.jsonl"))) else {
            continue;
        };
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if v["op"] == "contiguous" && v["depth"] == 0 && v["copied"] == true {
                let site = v["site"].as_str().unwrap_or("").to_string();
                if is_model_site(&site) {
                    cands.entry(site).or_default().insert(name.to_string());
                }
            }
        }
    }
    let mut mutants = Vec::new();
    for (k, (site, names)) in cands.iter().enumerate() {
        if !only_sites.is_empty() && !only_sites.contains(site) {
            continue;
        }
        let mut runs = BTreeMap::new();
        for (name, f) in models::MODELS {
            if !names.contains(*name) {
                continue;
            }
            let log = dir.join(format!("m{k}__{name}.jsonl"));
            let _ = std::fs::remove_file(&log);
            candle::candle_real_log::set_output(Some(&log));
            candle::candle_real_log::set_skip(Some(site.clone()));
            let s = run_one(name, *f);
            candle::candle_real_log::set_skip(None);
            candle::candle_real_log::set_output(None);
            eprintln!("m{k} {site} {name}: {s}");
            runs.insert(name.to_string(), s);
        }
        mutants.push(serde_json::json!({"id": format!("m{k}"), "site": site, "runs": runs}));
    }
    std::fs::write(
        dir.join("mutants.json"),
        serde_json::to_string_pretty(&mutants).unwrap(),
    )
    .unwrap();
}

/// The ports (candle_real_ports.rs, generated by make_patches.py at setup time) must test
/// candle's condition lines verbatim: check each line of the original functions' checks
/// occurs in them (and that the generator missed none), and check the ports against CPU
/// candle.
fn cmd_selftest(vendor: &Path) {
    let log = std::fs::read_to_string(vendor.join("candle-core/src/candle_real_ports.rs")).unwrap();
    let reg = vendor.join("candle-core/src");
    let mut fails = 0;
    let mut check = |file: PathBuf, from: &str, to: &str, filter: &dyn Fn(&str) -> bool| {
        let text =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let start = text
            .find(from)
            .unwrap_or_else(|| panic!("{from} not in {}", file.display()));
        let end = start + text[start..].find(to).unwrap();
        let mut n = 0;
        for l in text[start..end]
            .lines()
            .map(str::trim)
            .filter(|l| filter(l))
        {
            n += 1;
            if !log.contains(l) {
                eprintln!("selftest: {} line not in the port: {l}", file.display());
                fails += 1;
            }
        }
        eprintln!(
            "selftest: {}: {n} condition lines of `{from}` found in the port",
            file.display()
        );
        assert!(n >= 4);
    };
    let cond = |l: &str| {
        (l.starts_with("let (") && l.contains(" = if "))
            || l.starts_with("} else if ")
            || l.starts_with('[')
            || l.starts_with("let rhs_m")
            || l.starts_with("let lhs_m")
    };
    check(
        reg.join("cuda_backend/mod.rs"),
        "fn gemm_config<T>(",
        "Ok(StridedBatchedConfig",
        &cond,
    );
    check(
        reg.join("cpu_backend/mod.rs"),
        "#[cfg(feature = \"mkl\")]\n    fn f<",
        "let mut dst = vec!",
        &cond,
    );
    check(
        reg.join("cpu_backend/mod.rs"),
        "#[cfg(feature = \"accelerate\")]\n    fn f<",
        "let mut dst = vec!",
        &cond,
    );
    let metal = Path::new(&std::env::var("CANDLE_METAL_KERNELS_SRC").unwrap_or_default())
        .join("kernels/mlx_gemm.rs");
    if metal.exists() {
        check(metal, "pub fn call_mlx_gemm(", "if m == 1 || n == 1", &cond);
    } else {
        eprintln!("selftest: CANDLE_METAL_KERNELS_SRC not set, metal text not checked");
    }
    // The contiguity the cuda and metal kernels of the indexing ops check (the operands
    // `contig_verdicts` reads): the layouts under `match x.contiguous_offsets()` or
    // `if !x.is_contiguous()` (or `|| !x.is_contiguous()`) in the kernel's block must be the expected set, up to the
    // destination (`dst_l`, metal's `l`), which the ops always make a fresh contiguous copy.
    let blocks: [(&str, &str, &[&str]); 10] = [
        (
            "cuda_backend/mod.rs",
            "impl Map1 for IndexSelect<'_> {",
            &["src_l"],
        ),
        (
            "cuda_backend/mod.rs",
            "impl Map1 for Gather<'_> {",
            &["ids_l", "src_l"],
        ),
        (
            "cuda_backend/mod.rs",
            "impl Map2InPlace for IndexAdd<'_> {",
            &["ids_l", "src_l"],
        ),
        (
            "cuda_backend/mod.rs",
            "impl Map2InPlace for Scatter<'_> {",
            &["ids_l", "src_l"],
        ),
        (
            "cuda_backend/mod.rs",
            "impl Map2InPlace for ScatterAdd<'_> {",
            &["ids_l", "src_l"],
        ),
        (
            "metal_backend/mod.rs",
            "    fn index_select(&self,",
            &["ids_l"],
        ),
        ("metal_backend/mod.rs", "    fn gather(&self,", &["ids_l"]),
        (
            "metal_backend/mod.rs",
            "    fn scatter_set(",
            &["ids_l", "src_l"],
        ),
        (
            "metal_backend/mod.rs",
            "    fn scatter_add_set(",
            &["ids_l", "src_l"],
        ),
        (
            "metal_backend/mod.rs",
            "    fn index_add(",
            &["ids_l", "src_l"],
        ),
    ];
    for (file, anchor, expected) in blocks {
        let text = std::fs::read_to_string(reg.join(file)).unwrap();
        let start = text
            .find(anchor)
            .unwrap_or_else(|| panic!("{anchor} not in {file}"));
        let rest = &text[start + anchor.len()..];
        // an `impl` block ends at a `}` in column 0, a method at a `}` in column 4
        let close = if anchor.starts_with("impl") {
            "\n}\n"
        } else {
            "\n    }\n"
        };
        let end = rest.find(close).unwrap_or(rest.len());
        let body = &rest[..end];
        let mut found = BTreeSet::new();
        for pat in [".contiguous_offsets()", ".is_contiguous()"] {
            for (i, _) in body.match_indices(pat) {
                let var: String = body[..i]
                    .chars()
                    .rev()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                // a check, not a flag passed to a strided kernel: `if !x.is_contiguous()` or
                // `match x.contiguous_offsets()`
                let before = &body[..i - var.len()];
                let check = if pat == ".is_contiguous()" {
                    before.ends_with("if !") || before.ends_with("|| !")
                } else {
                    before.ends_with("match ")
                };
                if check && var != "dst_l" && var != "l" {
                    found.insert(var);
                }
            }
        }
        let want: BTreeSet<String> = expected.iter().map(|s| s.to_string()).collect();
        eprintln!("selftest: {file} `{}`: checks {found:?}", anchor.trim());
        assert_eq!(
            found, want,
            "{file} `{anchor}`: the kernel checks other operands than the logger assumes"
        );
    }

    // Ports against CPU candle: random strided operands; CPU (gemm) accepts exactly when
    // ab_skip does; the ports must accept every contiguous pair and reject a last-dim
    // narrowed lhs on cuda/mkl/metal.
    let dev = Device::Cpu;
    let mut agree = 0;
    for (b, m, n, k) in [(2, 3, 4, 5), (1, 2, 3, 4), (3, 1, 2, 2), (2, 2, 1, 3)] {
        let a = Tensor::zeros((b, m, k), DType::F32, &dev).unwrap();
        let w = Tensor::zeros((b, k, n), DType::F32, &dev).unwrap();
        let (v, _) = candle::candle_real_log::matmul_verdicts(a.layout(), w.layout());
        assert!(
            v.iter().all(|x| *x == candle::candle_real_log::V::Ok),
            "contiguous rejected {v:?}"
        );
        // transposed operands: BLAS accepts them
        let at = Tensor::zeros((b, k, m), DType::F32, &dev)
            .unwrap()
            .transpose(1, 2)
            .unwrap();
        let (v, _) = candle::candle_real_log::matmul_verdicts(at.layout(), w.layout());
        assert!(
            v.iter().all(|x| *x == candle::candle_real_log::V::Ok),
            "transposed rejected {v:?}"
        );
        // narrowed last dim: every BLAS port rejects (when not size-1 escaped)
        if m > 1 && k > 1 {
            let wide = Tensor::zeros((b, m, 2 * k), DType::F32, &dev)
                .unwrap()
                .narrow(2, 0, k)
                .unwrap();
            let (v, _) = candle::candle_real_log::matmul_verdicts(wide.layout(), w.layout());
            assert!(
                v.iter().all(|x| *x == candle::candle_real_log::V::Err),
                "narrowed accepted {v:?}"
            );
            let cpu = wide.matmul(&w).is_ok();
            assert!(cpu, "cpu gemm takes any matrix strides");
        }
        // batch dims that do not merge: cpu rejects, so must the ports (metal: silent)
        let a4 = Tensor::zeros((b + 1, 2, m, k), DType::F32, &dev)
            .unwrap()
            .transpose(0, 1)
            .unwrap();
        let w4 = Tensor::zeros((2, b + 1, k, n), DType::F32, &dev).unwrap();
        let (v, _) = candle::candle_real_log::matmul_verdicts(a4.layout(), w4.layout());
        let cpu_ok = a4.matmul(&w4).is_ok();
        let mergeable = a4.is_contiguous();
        if !cpu_ok {
            assert_eq!(v[0], candle::candle_real_log::V::Err);
            assert_eq!(v[1], candle::candle_real_log::V::Err);
            assert_eq!(v[2], candle::candle_real_log::V::Silent);
        }
        let _ = mergeable;
        agree += 1;
    }
    eprintln!("selftest: {agree} shape families checked against CPU candle");
    assert_eq!(fails, 0, "port text differs from candle's");
    println!("selftest ok");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("list") => {
            for (n, _) in models::MODELS {
                println!("{n}");
            }
            for (n, why) in models::SKIPPED {
                println!("# skipped {n}: {why}");
            }
        }
        Some("run") => cmd_run(Path::new(&args[2]), &args[3..]),
        Some("mutate") => cmd_mutate(Path::new(&args[2]), Path::new(&args[3]), &args[4..]),
        Some("selftest") => cmd_selftest(Path::new(&args[2])),
        _ => {
            eprintln!("usage: candle-real-runner list | run <dir> [model..] | mutate <base> <dir> [site..] | selftest <vendor>");
            std::process::exit(2);
        }
    }
}
