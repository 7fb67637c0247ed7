//! Configuration as the library applies it: the closest `stridelint.toml` /
//! `pyproject.toml` per file, `extend`, command-line overrides, `per-file-ignores`,
//! `exclude`, `respect-gitignore`, the assumptions, and errors that name file and key.

use std::path::{Path, PathBuf};

use stridelint::settings::{Config, SettingsResolver};
use stridelint::{check_paths, CheckResult};

/// A function with one certain SL001: `x` (assumed contiguous) transposed, then viewed
/// with H and D merged. With sizes allowed to be 1 the view could work (H = 1), so the
/// finding depends on `min-symbolic-size`.
const VIEW_BUG: &str = "\
def merge(x):
    B, H, T, D = x.shape
    y = x.transpose(1, 2)
    return y.view(B, T, H * D)
";

fn write(root: &Path, rel: &str, text: &str) -> PathBuf {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

fn resolver(config: Option<&Path>, overrides: Config) -> SettingsResolver {
    SettingsResolver::from_cli(overrides, config, false).expect("valid configuration")
}

/// (file name, code) of every finding, sorted.
fn findings(result: &CheckResult) -> Vec<(String, &'static str)> {
    let mut found: Vec<(String, &'static str)> = result
        .diagnostics
        .iter()
        .map(|d| {
            (
                d.file
                    .path
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                d.code,
            )
        })
        .collect();
    found.sort();
    found
}

#[test]
fn the_closest_configuration_applies_to_each_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "stridelint.toml", "ignore = [\"SL001\"]\n");
    write(
        root,
        "sub/pyproject.toml",
        "[project]\nname = \"sub\"\n\n[tool.stridelint]\nselect = [\"SL\"]\n",
    );
    // A pyproject.toml without our table does not count: `other/` falls back to the root's.
    write(
        root,
        "other/pyproject.toml",
        "[tool.black]\nline-length = 100\n",
    );
    write(root, "top.py", VIEW_BUG);
    write(root, "sub/inner.py", VIEW_BUG);
    write(root, "other/third.py", VIEW_BUG);
    let result = check_paths(&[root.to_path_buf()], &resolver(None, Config::default()));
    assert!(result.errors.is_empty(), "{:?}", result.errors);
    assert_eq!(findings(&result), vec![("inner.py".to_string(), "SL001")]);
    assert_eq!(result.files_checked, 3);
}

#[test]
fn extend_inherits_and_the_command_line_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "shared/base.toml", "min-symbolic-size = 1\n");
    write(
        root,
        "proj/stridelint.toml",
        "extend = \"../shared/base.toml\"\n",
    );
    let file = write(root, "proj/m.py", VIEW_BUG);
    // Inherited: sizes may be 1, so the view is not certain to fail.
    let inherited = check_paths(
        std::slice::from_ref(&file),
        &resolver(None, Config::default()),
    );
    assert!(
        findings(&inherited).is_empty(),
        "{:?}",
        findings(&inherited)
    );
    // `--min-symbolic-size 2` wins over the file.
    let cli = Config {
        min_symbolic_size: Some(2),
        ..Config::default()
    };
    let overridden = check_paths(std::slice::from_ref(&file), &resolver(None, cli));
    assert_eq!(findings(&overridden), vec![("m.py".to_string(), "SL001")]);
    // `--select SL002` replaces the configuration's selection.
    let cli = Config {
        min_symbolic_size: Some(2),
        select: Some(vec!["SL002".into()]),
        ..Config::default()
    };
    assert!(findings(&check_paths(&[file], &resolver(None, cli))).is_empty());
}

#[test]
fn per_file_ignores_match_relative_to_the_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "stridelint.toml",
        "[per-file-ignores]\n\"tests/*.py\" = [\"SL001\"]\n\"legacy.py\" = [\"SL\"]\n",
    );
    write(root, "tests/test_m.py", VIEW_BUG);
    write(root, "pkg/legacy.py", VIEW_BUG);
    write(root, "pkg/model.py", VIEW_BUG);
    let result = check_paths(&[root.to_path_buf()], &resolver(None, Config::default()));
    assert_eq!(findings(&result), vec![("model.py".to_string(), "SL001")]);
}

#[test]
fn exclude_skips_discovered_files_but_not_files_named_explicitly() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "stridelint.toml",
        "exclude = [\"generated/\"]\nextend-exclude = [\"*_pb2.py\"]\n",
    );
    write(root, "generated/deep/a.py", VIEW_BUG);
    let explicit = write(root, "msg_pb2.py", VIEW_BUG);
    write(root, "model.py", VIEW_BUG);
    let config = root.join("stridelint.toml");
    let result = check_paths(
        &[root.to_path_buf()],
        &resolver(Some(&config), Config::default()),
    );
    assert_eq!(findings(&result), vec![("model.py".to_string(), "SL001")]);
    // Named on the command line, an excluded file is linted — unless --force-exclude.
    let named = check_paths(
        std::slice::from_ref(&explicit),
        &resolver(Some(&config), Config::default()),
    );
    assert_eq!(named.files_checked, 1);
    let forced = SettingsResolver::from_cli(Config::default(), Some(&config), true).unwrap();
    assert_eq!(check_paths(&[explicit], &forced).files_checked, 0);
}

#[test]
fn respect_gitignore_false_lints_ignored_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".gitignore", "scratch/\n");
    write(root, "scratch/m.py", VIEW_BUG);
    let config = write(root, "stridelint.toml", "respect-gitignore = false\n");
    let by_default = check_paths(&[root.to_path_buf()], &resolver(None, Config::default()));
    assert_eq!(by_default.files_checked, 0);
    let result = check_paths(
        &[root.to_path_buf()],
        &resolver(Some(&config), Config::default()),
    );
    assert_eq!(findings(&result), vec![("m.py".to_string(), "SL001")]);
}

#[test]
fn a_broken_nested_configuration_is_one_error_naming_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "bad/stridelint.toml", "min-symbolic-size = \"two\"\n");
    write(root, "bad/a.py", VIEW_BUG);
    write(root, "bad/b.py", VIEW_BUG);
    write(root, "good/c.py", VIEW_BUG);
    let result = check_paths(&[root.to_path_buf()], &resolver(None, Config::default()));
    assert_eq!(result.errors.len(), 1, "{:?}", result.errors);
    let error = &result.errors[0];
    assert!(
        error.path.ends_with("bad/stridelint.toml"),
        "{:?}",
        error.path
    );
    assert_eq!(
        error.message,
        "min-symbolic-size: invalid type: string \"two\", expected an integer"
    );
    // The other files are still linted.
    assert_eq!(findings(&result), vec![("c.py".to_string(), "SL001")]);
}

#[test]
fn verify_inputs_and_candle_backend_reach_the_settings() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "pyproject.toml",
        "[tool.stridelint]\ndtype = \"bfloat16\"\nlayers = 32\ncandle-backend = \"mkl\"\n\n[tool.stridelint.dims]\nB = 8\nT = 4096\n",
    );
    let file = write(root, "m.py", VIEW_BUG);
    let settings = resolver(None, Config::default())
        .settings_for(&file)
        .unwrap();
    assert_eq!(
        settings
            .verify
            .dims
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect::<Vec<_>>(),
        vec![("B", 8), ("T", 4096)]
    );
    assert_eq!(settings.verify.dtype.map(|d| d.name()), Some("bf16"));
    assert_eq!(settings.verify.layers, Some(32));
    assert_eq!(
        settings.candle_backend,
        stridelint::layout::candle::CandleBackend::Mkl
    );
}
