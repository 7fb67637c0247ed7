//! The hand-written parser against the tree-sitter lowering, file by file: the lowered
//! modules (as `Debug` text, spans included) must be equal wherever tree-sitter parses a
//! file without errors.
//!
//! `STRIDELINT_DIFF_TREE=DIR cargo test --release --lib differential -- --ignored --nocapture`

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{parse_python, parse_python_for_lint, parse_python_handwritten};

fn python_files(root: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            python_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "py") {
            out.push(path);
        }
    }
}

/// The first line where two pretty-printed modules differ, with some context.
fn first_difference(expected: &str, actual: &str, source: &str) -> String {
    let expected: Vec<&str> = expected.lines().collect();
    let actual: Vec<&str> = actual.lines().collect();
    let at = expected
        .iter()
        .zip(&actual)
        .position(|(a, b)| a != b)
        .unwrap_or(expected.len().min(actual.len()));
    let from = at.saturating_sub(12);
    let mut out = String::new();
    let near = expected[..at].iter().rev().find_map(|line| {
        line.trim()
            .strip_prefix("start: ")?
            .trim_end_matches(',')
            .parse::<usize>()
            .ok()
    });
    if let Some(near) = near {
        let mut a = near.saturating_sub(80).min(source.len());
        while !source.is_char_boundary(a) {
            a -= 1;
        }
        let mut b = (near + 120).min(source.len());
        while !source.is_char_boundary(b) {
            b += 1;
        }
        out.push_str(&format!("--- source near {near}: {:?}\n", &source[a..b]));
    }
    for (label, lines) in [("tree-sitter", &expected), ("hand-written", &actual)] {
        out.push_str(&format!("--- {label} (from line {from})\n"));
        for line in lines.iter().skip(from).take(at - from + 6) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

pub(super) struct Comparison {
    pub compared: usize,
    pub differences: Vec<(PathBuf, String)>,
    pub tree_sitter_errors: Vec<PathBuf>,
    pub new_errors_on_clean: Vec<(PathBuf, String)>,
    pub bytes: usize,
    /// Per file: the first error of the new parser as `line:message`, or `-`.
    pub new_first_errors: Vec<(PathBuf, String)>,
    pub tree_sitter_time: Duration,
    pub new_time: Duration,
}

pub(super) fn compare_files(files: &[PathBuf]) -> Comparison {
    let mut result = Comparison {
        compared: 0,
        differences: Vec::new(),
        tree_sitter_errors: Vec::new(),
        new_errors_on_clean: Vec::new(),
        bytes: 0,
        new_first_errors: Vec::new(),
        tree_sitter_time: Duration::ZERO,
        new_time: Duration::ZERO,
    };
    for path in files {
        let Ok(source) = std::fs::read_to_string(path) else {
            continue;
        };
        result.bytes += source.len();
        let started = Instant::now();
        let old = parse_python(&source);
        result.tree_sitter_time += started.elapsed();
        let started = Instant::now();
        let new = parse_python_handwritten(&source);
        result.new_time += started.elapsed();
        let first = match new.errors.first() {
            Some(error) => {
                let line = 1 + source.as_bytes()[..error.span.start as usize]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count();
                format!("{line}:{}", error.message)
            }
            None => "-".to_string(),
        };
        result.new_first_errors.push((path.clone(), first));
        if !old.errors.is_empty() {
            result.tree_sitter_errors.push(path.clone());
            continue;
        }
        result.compared += 1;
        if let Some(error) = new.errors.first() {
            result.new_errors_on_clean.push((
                path.clone(),
                format!("{} at {:?}", error.message, error.span),
            ));
        }
        let (old_text, new_text) = (format!("{:?}", old.module), format!("{:?}", new.module));
        if old_text != new_text {
            let detail = first_difference(
                &format!("{:#?}", old.module),
                &format!("{:#?}", new.module),
                &source,
            );
            result.differences.push((path.clone(), detail));
        }
    }
    result
}

#[test]
#[ignore = "needs STRIDELINT_DIFF_TREE"]
fn differential_against_tree_sitter() {
    let Some(root) = std::env::var_os("STRIDELINT_DIFF_TREE") else {
        return;
    };
    let mut files = Vec::new();
    for root in std::env::split_paths(&root) {
        if root.is_file() {
            files.push(root);
        } else {
            python_files(&root, &mut files);
        }
    }
    let result = compare_files(&files);
    let show = std::env::var("STRIDELINT_DIFF_SHOW")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    for (path, detail) in result.differences.iter().take(show) {
        println!("=== {}\n{detail}", path.display());
    }
    for (path, error) in result.new_errors_on_clean.iter().take(20) {
        println!(
            "new parser error on a clean file: {}: {error}",
            path.display()
        );
    }
    let mb = result.bytes as f64 / 1e6;
    // Speed, single thread, best of three passes over the files already read once.
    let sources: Vec<String> = files
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .collect();
    let best = |parse: &dyn Fn(&str) -> usize| {
        (0..3)
            .map(|_| {
                let started = Instant::now();
                let mut items = 0;
                for source in &sources {
                    items += parse(source);
                }
                std::hint::black_box(items);
                started.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    };
    let size = |outcome: super::ParseOutcome| outcome.module.body.len() + outcome.module.functions.len();
    let full = best(&|s| size(parse_python(s)));
    let partial = best(&|s| size(parse_python_for_lint(s)));
    let new = best(&|s| size(parse_python_handwritten(s)));
    println!(
        "best of 3, one thread: tree-sitter whole files {full:.3} s ({:.1} MB/s), tree-sitter partial {partial:.3} s ({:.1} MB/s), hand-written whole files {new:.3} s ({:.1} MB/s); {:.1}x / {:.1}x",
        mb / full,
        mb / partial,
        mb / new,
        full / new,
        partial / new
    );
    println!(
        "{} files ({:.1} MB): {} compared, {} differ, {} with tree-sitter errors, {} clean files with new-parser errors",
        files.len(),
        mb,
        result.compared,
        result.differences.len(),
        result.tree_sitter_errors.len(),
        result.new_errors_on_clean.len()
    );
    println!(
        "tree-sitter: {:.3} s ({:.1} MB/s); hand-written: {:.3} s ({:.1} MB/s)",
        result.tree_sitter_time.as_secs_f64(),
        mb / result.tree_sitter_time.as_secs_f64(),
        result.new_time.as_secs_f64(),
        mb / result.new_time.as_secs_f64()
    );
    if std::env::var_os("STRIDELINT_DIFF_LIST").is_some() {
        for (path, _) in &result.differences {
            println!("differs: {}", path.display());
        }
        for path in &result.tree_sitter_errors {
            println!("tree-sitter error: {}", path.display());
        }
    }
    if let Some(out) = std::env::var_os("STRIDELINT_DIFF_ERRORS_OUT") {
        let text: String = result
            .new_first_errors
            .iter()
            .map(|(path, first)| format!("{}\t{first}\n", path.display()))
            .collect();
        std::fs::write(out, text).unwrap();
    }
    assert!(result.differences.is_empty());
}
