//! Bad input never crashes the whole pipeline (parse → analysis → lints): random bytes,
//! mutated fixtures, very deep nesting, huge files, invalid UTF-8, unreadable paths.

use std::path::Path;

use proptest::prelude::*;
use stridelint::settings::SettingsResolver;
use stridelint::{check_file, check_paths, check_source, Settings};

fn fixture_texts() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/python");
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "py"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    out.sort();
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_do_not_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let _ = check_source(Path::new("fuzz.py"), format!("import torch\nx.view(2)\n{text}"), &Settings::default());
    }

    #[test]
    fn mutated_fixtures_do_not_panic(which in 0usize..64, cuts in proptest::collection::vec((0usize..4096, 0usize..64, any::<u8>()), 1..8)) {
        let fixtures = fixture_texts();
        let mut text = fixtures[which % fixtures.len()].clone().into_bytes();
        for (at, len, byte) in cuts {
            let at = at % (text.len() + 1);
            let end = (at + len).min(text.len());
            // Replace a random range by one random (ASCII, to stay UTF-8) byte.
            text.splice(at..end, [b' ' + byte % 95]);
        }
        let text = String::from_utf8_lossy(&text).into_owned();
        let _ = check_source(Path::new("mutated.py"), text, &Settings::default());
    }
}

/// Run on a thread with the default 2 MiB stack, as rayon's workers have.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn deeply_nested_expressions_do_not_overflow_the_stack() {
    on_small_stack(|| {
        let depth = 5000;
        let nested = format!("y = x.view({}1{})\n", "(".repeat(depth), ")".repeat(depth));
        let sum = format!("y = x.reshape({})\n", vec!["a"; 20000].join(" + "));
        let calls = format!("y = {}x{}\n", "f(".repeat(depth), ")".repeat(depth));
        let attrs = format!("y = x{}\n", ".t()".repeat(depth));
        for body in [nested, sum, calls, attrs] {
            let text = format!("import torch\ndef g(x, a):\n    {body}    return y\n");
            let _ = check_source(Path::new("deep.py"), text, &Settings::default());
        }
    });
}

#[test]
fn a_file_of_tens_of_megabytes_is_linted() {
    let unit = "def f{i}(x):\n    B, T, C = x.size()\n    return x.transpose(1, 2).view(B, C * T)  # finding\n\n";
    let mut text = String::from("import torch\n");
    let mut i = 0;
    while text.len() < 12 << 20 {
        text.push_str(&unit.replace("{i}", &i.to_string()));
        i += 1;
    }
    let started = std::time::Instant::now();
    let diagnostics = check_source(Path::new("huge.py"), text, &Settings::default());
    // The file's work and op events are bounded in proportion to its size, and this file
    // holds far more ops per byte than model code: the analysis stops part way (and says
    // so). What it found until then is one SL001 per function, from the first on.
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
    assert!(diagnostics.len() >= 5_000, "{} findings", diagnostics.len());
    assert!(diagnostics.len() < i);
    assert!(diagnostics.iter().all(|d| d.code == "SL001"));
}

#[test]
fn invalid_utf8_binary_and_missing_paths_are_reported_and_the_rest_is_linted() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.py");
    std::fs::write(
        &good,
        "def f(x):\n    B, T, C = x.size()\n    return x.transpose(1, 2).view(B, -1)\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("latin1.py"), b"# caf\xe9\nx = 1\n").unwrap();
    std::fs::write(dir.path().join("binary.py"), b"\x00\x01\x02view").unwrap();
    let missing = dir.path().join("missing.py");
    let result = check_paths(
        &[dir.path().to_path_buf(), missing],
        &SettingsResolver::fixed(Settings::default()),
    );
    assert_eq!(
        result.diagnostics.len(),
        1,
        "{:?}",
        result
            .diagnostics
            .iter()
            .map(|d| &d.message)
            .collect::<Vec<_>>()
    );
    let messages: Vec<String> = result
        .errors
        .iter()
        .map(|e| format!("{}: {}", e.path.display(), e.message))
        .collect();
    assert_eq!(result.errors.len(), 3, "{messages:?}");
    assert!(
        messages
            .iter()
            .any(|m| m.contains("latin1.py") && m.contains("UTF-8")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("binary.py") && m.contains("binary")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("missing.py")),
        "{messages:?}"
    );
    assert!(check_file(&good, &Settings::default()).is_ok());
}

#[test]
fn syntax_errors_are_reported_and_the_file_is_still_analysed() {
    let text = "import torch\ndef f(x):\n    B, T, C = x.size()\n    return x.transpose(1, 2).view(B, -1)\n\ndef g(:\n    pass\n";
    let diagnostics = check_source(
        Path::new("broken.py"),
        text.to_string(),
        &Settings::default(),
    );
    let codes: Vec<&str> = diagnostics.iter().map(|d| d.code).collect();
    assert!(codes.contains(&"SL999"), "{codes:?}");
    assert!(codes.contains(&"SL001"), "{codes:?}");
}
