//! Helpers shared by the tests that run the `stridelint` binary on a project of files
//! (`tests/it/cli.rs`, `tests/it/cli_exits.rs`, `tests/it/file_safety.rs`, `tests/it/reliability.rs`).

use std::path::PathBuf;
use std::process::Output;

/// The binary under test; `STRIDELINT_BIN` runs the tests against another build (to see
/// them fail on the build before a fix).
pub fn binary() -> PathBuf {
    std::env::var_os("STRIDELINT_BIN")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_stridelint").into())
        .into()
}

/// The captured standard output, lossily decoded.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The captured standard error, lossily decoded.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A temporary directory holding `files` (relative path, text), parents created.
pub fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}
