//! The result cache through the library and the CLI: a second run over an unchanged tree is
//! served from `.stridelint_cache/` with the same findings; a changed file, changed
//! settings or `--no-cache` bypass it. The speed-up on a real code base is measured by the
//! ignored test at the end.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use stridelint::cache::Cache;
use stridelint::settings::{Config, SettingsResolver};
use stridelint::{check_files, discover_files, CheckOptions, CheckResult};

const VIEW_BUG: &str = "\
def merge(x):
    B, H, T, D = x.shape
    y = x.transpose(1, 2)
    return y.view(B, T, H * D)


def copy(x):
    B, H, T, D = x.shape
    return x.permute(0, 2, 1, 3).reshape(B, T, H * D)
";

fn tree(files: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..files {
        let text = if i % 2 == 0 {
            VIEW_BUG.to_string()
        } else {
            format!("x = {i}\n")
        };
        std::fs::write(dir.path().join(format!("m{i}.py")), text).unwrap();
    }
    dir
}

fn run(root: &Path, cache_dir: &Path, overrides: Config) -> (CheckResult, usize, usize) {
    let resolver = SettingsResolver::from_cli(overrides, None, false).unwrap();
    let (files, _) = discover_files(&[root.to_path_buf()], &resolver);
    let cache = Cache::open(cache_dir);
    let result = check_files(
        &files,
        &resolver,
        &CheckOptions {
            cache: Some(&cache),
            progress: None,
        },
    );
    cache.save().unwrap();
    (result, cache.hits(), cache.misses())
}

/// Everything a report shows of a finding, in a canonical order.
fn rendered(result: &CheckResult) -> Vec<String> {
    let mut out: Vec<String> = result
        .diagnostics
        .iter()
        .map(|d| {
            format!(
                "{}:{}:{} {} {:?} {} {:?} {:?} {:?} {:?}",
                d.file.path.display(),
                d.span.start,
                d.span.end,
                d.code,
                d.severity,
                d.message,
                d.chain,
                d.notes,
                d.help,
                d.fix
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn an_unchanged_tree_is_served_from_the_cache_with_identical_findings() {
    let dir = tree(6);
    let cache_dir = tempfile::tempdir().unwrap();
    let (first, hits, misses) = run(dir.path(), cache_dir.path(), Config::default());
    assert_eq!((hits, misses), (0, 6));
    assert!(
        first.diagnostics.iter().any(|d| d.code == "SL001")
            && first.diagnostics.iter().any(|d| d.code == "SL002")
    );
    let (second, hits, misses) = run(dir.path(), cache_dir.path(), Config::default());
    assert_eq!((hits, misses), (6, 0));
    assert_eq!(rendered(&first), rendered(&second));
}

#[test]
fn a_changed_file_or_changed_settings_miss() {
    let dir = tree(4);
    let cache_dir = tempfile::tempdir().unwrap();
    run(dir.path(), cache_dir.path(), Config::default());
    std::fs::write(dir.path().join("m1.py"), VIEW_BUG).unwrap();
    let (result, hits, misses) = run(dir.path(), cache_dir.path(), Config::default());
    assert_eq!((hits, misses), (3, 1));
    assert_eq!(
        result
            .diagnostics
            .iter()
            .filter(|d| d.code == "SL001")
            .count(),
        3
    );
    // Other settings are another key: everything is analysed again.
    let ignore = Config {
        ignore: Some(vec!["SL002".into()]),
        ..Config::default()
    };
    let (result, hits, misses) = run(dir.path(), cache_dir.path(), ignore);
    assert_eq!((hits, misses), (0, 4));
    assert!(result.diagnostics.iter().all(|d| d.code != "SL002"));
}

fn stridelint(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_stridelint"))
        .current_dir(dir)
        .args(args)
        .env_remove("STRIDELINT_CACHE_DIR")
        .output()
        .unwrap()
}

#[test]
fn the_cli_caches_in_the_project_root_unless_told_not_to() {
    let dir = tree(3);
    let results: PathBuf = dir
        .path()
        .join(".stridelint_cache")
        .join(env!("CARGO_PKG_VERSION"))
        .join("results.json");
    let uncached = stridelint(
        dir.path(),
        &["check", ".", "--no-cache", "--output-format", "json"],
    );
    assert!(!results.exists(), "--no-cache wrote a cache");
    let first = stridelint(dir.path(), &["check", ".", "--output-format", "json"]);
    assert!(results.is_file());
    assert!(dir.path().join(".stridelint_cache/CACHEDIR.TAG").is_file());
    let second = stridelint(dir.path(), &["check", ".", "--output-format", "json"]);
    let text = |o: &std::process::Output| String::from_utf8(o.stdout.clone()).unwrap();
    // Identical, including the findings' subjects, which the cache does not hold.
    assert!(text(&uncached).contains("\"subject\""));
    assert_eq!(text(&first), text(&uncached));
    assert_eq!(text(&second), text(&first));
    assert_eq!(second.status.code(), Some(1));
    let concise = |args: &[&str]| {
        text(&stridelint(
            dir.path(),
            &[&["check", ".", "--output-format", "concise"], args].concat(),
        ))
    };
    assert_eq!(concise(&[]), concise(&["--no-cache"]));
    // The cache directory is never linted itself, and `--cache-dir` moves it.
    let elsewhere = tempfile::tempdir().unwrap();
    let moved = stridelint(
        dir.path(),
        &[
            "check",
            ".",
            "--cache-dir",
            elsewhere.path().to_str().unwrap(),
        ],
    );
    assert_eq!(moved.status.code(), Some(1));
    assert!(elsewhere
        .path()
        .join(env!("CARGO_PKG_VERSION"))
        .join("results.json")
        .is_file());
}

/// The speed-up the cache gives on a real code base (the transformers sources, ~2900
/// files): at least 5×. Ignored by default (it takes a while in a debug build); run with
/// `cargo test --release --test it cache:: -- --ignored --nocapture`. Skips when the sources
/// are not there.
#[test]
#[ignore]
fn a_second_run_over_transformers_is_at_least_5x_faster() {
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("../realcode/src/transformers");
    if !sources.is_dir() {
        eprintln!("skipped: {} not found", sources.display());
        return;
    }
    let cache_dir = tempfile::tempdir().unwrap();
    let dir = cache_dir.path().to_str().unwrap();
    let timed = |args: &[&str]| {
        let start = Instant::now();
        let output = stridelint(&sources, args);
        assert!(
            output.status.code().is_some_and(|c| c <= 1),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        (start.elapsed(), output.stdout)
    };
    let args = [
        "check",
        ".",
        "--output-format",
        "concise",
        "--exit-zero",
        "--cache-dir",
        dir,
    ];
    let (cold, cold_out) = timed(&args);
    let (warm, warm_out) = timed(&args);
    assert_eq!(cold_out, warm_out);
    let ratio = cold.as_secs_f64() / warm.as_secs_f64();
    eprintln!("cold {cold:?}, warm {warm:?}: {ratio:.1}x");
    assert!(
        ratio >= 5.0,
        "cold {cold:?}, warm {warm:?}: only {ratio:.1}x"
    );
}
