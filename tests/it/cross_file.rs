//! Calls into other files of the tree (`follow-imports = true`): a helper or a layer
//! imported from another module of the package is followed with the caller's values, its
//! result flows back, and a cached result goes stale when the imported file changes.

use std::path::Path;

use stridelint::cache::Cache;
use stridelint::settings::{Config, SettingsResolver};
use stridelint::{check_files, discover_files, CheckOptions, CheckResult};

/// The helper file: `split_heads` returns a transposed view; `Mlp` is a layer.
const LAYERS: &str = "\
import torch
from torch import nn


def split_heads(x, n_head):
    B, T, C = x.size()
    return x.view(B, T, n_head, C // n_head).transpose(1, 2)


class Mlp(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))
";

/// The caller, in another module of the same package.
const BLOCK: &str = "\
import torch
from torch import nn
from .layers import Mlp, split_heads


class Block(nn.Module):
    def __init__(self, dim, n_head):
        super().__init__()
        self.n_head = n_head
        self.mlp = Mlp(dim)

    def forward(self, x):
        B, T, C = x.size()
        q = split_heads(x, self.n_head)
        y = q.reshape(B, T, C)
        h = self.mlp(x)
        return y, h.transpose(1, 2).view(B, -1)
";

fn package(layers: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("model");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("__init__.py"), "").unwrap();
    std::fs::write(pkg.join("block.py"), BLOCK).unwrap();
    if let Some(text) = layers {
        std::fs::write(pkg.join("layers.py"), text).unwrap();
    }
    dir
}

fn run(root: &Path, cache: Option<&Cache>) -> CheckResult {
    run_with(root, cache, true)
}

fn run_with(root: &Path, cache: Option<&Cache>, follow_imports: bool) -> CheckResult {
    let overrides = Config {
        follow_imports: Some(follow_imports),
        ..Config::default()
    };
    let resolver = SettingsResolver::from_cli(overrides, None, false).unwrap();
    let (files, _) = discover_files(&[root.to_path_buf()], &resolver);
    check_files(
        &files,
        &resolver,
        &CheckOptions {
            cache,
            progress: None,
        },
    )
}

/// (file name, line, code) of each finding in `block.py`.
fn block_findings(result: &CheckResult) -> Vec<(usize, &'static str)> {
    let mut out: Vec<(usize, &'static str)> = result
        .diagnostics
        .iter()
        .filter(|d| d.file.path.ends_with("block.py"))
        .map(|d| (d.file.location(d.span.start as usize).row, d.code))
        .collect();
    out.sort();
    out
}

#[test]
fn a_helper_and_a_layer_of_another_file_are_followed() {
    let tree = package(Some(LAYERS));
    let result = run(tree.path(), None);
    // The reshape of the helper's transposed view copies; the view of the layer's
    // transposed output fails.
    assert_eq!(block_findings(&result), vec![(15, "SL002"), (17, "SL001")]);
    let copy = result
        .diagnostics
        .iter()
        .find(|d| d.code == "SL002")
        .unwrap();
    let steps: Vec<&str> = copy.chain.iter().map(|s| s.message.as_str()).collect();
    assert!(
        steps
            .iter()
            .any(|s| s.contains("`split_heads` (model.layers)")),
        "the chain names the helper and its module: {steps:?}"
    );
    // Nothing of `layers.py` is reported in `block.py`, and `layers.py` is linted on
    // its own as usual.
    assert!(result
        .diagnostics
        .iter()
        .all(|d| d.file.path.ends_with("block.py") || d.file.path.ends_with("layers.py")));
}

#[test]
fn calls_into_other_files_are_followed_only_when_asked() {
    let tree = package(Some(LAYERS));
    assert_eq!(block_findings(&run_with(tree.path(), None, false)), vec![]);
}

#[test]
fn without_the_other_file_the_calls_stay_unknown() {
    let tree = package(None);
    assert_eq!(block_findings(&run(tree.path(), None)), vec![]);
}

#[test]
fn a_cached_result_is_stale_once_the_imported_file_changes() {
    let tree = package(Some(LAYERS));
    let cache_dir = tempfile::tempdir().unwrap();
    let first = Cache::open(cache_dir.path());
    assert_eq!(block_findings(&run(tree.path(), Some(&first))).len(), 2);
    first.save().unwrap();

    // Only the helper file changes: its helper now returns a contiguous tensor.
    let fixed = LAYERS.replace(".transpose(1, 2)\n", ".transpose(1, 2).contiguous()\n");
    assert_ne!(fixed, LAYERS);
    std::fs::write(tree.path().join("model/layers.py"), fixed).unwrap();
    let second = Cache::open(cache_dir.path());
    let result = run(tree.path(), Some(&second));
    assert_eq!(block_findings(&result), vec![(17, "SL001")]);
    // `__init__.py` comes from the cache; `layers.py` changed and `block.py` depends on it.
    assert_eq!((second.hits(), second.misses()), (1, 2));
}

#[test]
fn a_cached_result_is_stale_once_a_file_read_for_a_name_changes() {
    // At first `split_heads` rearranges nothing, so it is not followed and its module is
    // only read for the name; then it returns a transposed view.
    const HEADS: &str = "def split_heads(x, n_head):\n    B, T, C = x.size()\n    return x.view(B, T, n_head, C // n_head).transpose(1, 2)\n";
    const USE: &str = "from .heads import split_heads\n\n\ndef merge(x, n_head):\n    B, T, C = x.size()\n    return split_heads(x, n_head).reshape(B, T, C)\n";
    let plain = HEADS.replace(".view(B, T, n_head, C // n_head).transpose(1, 2)", " * 2");
    let tree = tempfile::tempdir().unwrap();
    let pkg = tree.path().join("model");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("__init__.py"), "").unwrap();
    std::fs::write(pkg.join("use.py"), USE).unwrap();
    std::fs::write(pkg.join("heads.py"), &plain).unwrap();
    let in_use = |r: &CheckResult| -> Vec<&'static str> {
        r.diagnostics
            .iter()
            .filter(|d| d.file.path.ends_with("use.py"))
            .map(|d| d.code)
            .collect()
    };
    let cache_dir = tempfile::tempdir().unwrap();
    let first = Cache::open(cache_dir.path());
    assert!(in_use(&run(tree.path(), Some(&first))).is_empty());
    first.save().unwrap();

    std::fs::write(pkg.join("heads.py"), HEADS).unwrap();
    let second = Cache::open(cache_dir.path());
    assert_eq!(in_use(&run(tree.path(), Some(&second))), vec!["SL002"]);
}
