//! `cargo build` (the binary, and the wheel test's maturin build) and `cargo test` resolve
//! the same features for every dependency they share, so the second build reuses the first's
//! artifacts instead of compiling the graph again under `target/` (issue 34: target/ ≤ 1 GB).
//! The dev-dependencies turn on features of shared crates; `Cargo.toml` names them under
//! "Feature unification". When this fails, add the listed features there.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Crates left to differ: `half` is a leaf only stridelint depends on (a rebuild of one
/// small crate), and candle's features of it would put `rand` into the binary.
const ALLOWED_TO_DIFFER: [&str; 1] = ["half"];

/// Each package (`name vX.Y.Z`) of `cargo tree` over the edge kinds `edges`, with its features.
fn features(edges: &str) -> BTreeMap<String, BTreeSet<String>> {
    let out = Command::new(env!("CARGO"))
        .args(["tree", "--offline", "--prefix", "none", "-e", edges])
        .args(["-f", "{p} {f}", "--manifest-path"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut by_package: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let words: Vec<&str> = line.trim_end_matches(" (*)").split(' ').collect();
        let [name, version, rest @ ..] = words.as_slice() else {
            continue;
        };
        let listed = rest.last().filter(|w| !w.starts_with('('));
        let feats = listed
            .map_or("", |w| w)
            .split(',')
            .filter(|f| !f.is_empty());
        by_package
            .entry(format!("{name} {version}"))
            .or_default()
            .extend(feats.map(str::to_string));
    }
    by_package
}

#[test]
fn a_build_and_a_test_build_share_their_dependencies() {
    let build = features("normal,build");
    let test = features("normal,build,dev");
    let differing: Vec<String> = build
        .iter()
        .filter(|(package, _)| !ALLOWED_TO_DIFFER.contains(&package.split(' ').next().unwrap()))
        .filter_map(|(package, feats)| {
            let extra: Vec<&String> = test.get(package)?.difference(feats).collect();
            (!extra.is_empty()).then(|| format!("{package}: {extra:?}"))
        })
        .collect();
    assert!(
        differing.is_empty(),
        "`cargo test` builds these shared crates with more features than `cargo build`; \
         name them under \"Feature unification\" in Cargo.toml:\n{}",
        differing.join("\n")
    );
}
