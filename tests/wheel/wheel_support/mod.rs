//! The Python wheel for the tests that install it (`tests/wheel/wheel.rs`, the `language:
//! python` hook in `tests/wheel/precommit.rs`): built once per test run with maturin (from
//! PyPI, in a virtual environment under the target directory), in this target directory
//! so that the release build `cargo test --release` made is reused, and `--locked`, as
//! the release workflow builds it. Every step that needs the network or a tool that is
//! not here returns `None` after printing why (`skipped: …`), and fails under CI
//! (`crate::tool_support`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Instant;

pub fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `target/tmp` (Cargo's scratch directory for integration tests).
pub fn scratch() -> &'static Path {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
}

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The `bin` (or `Scripts`) directory of a virtual environment.
pub fn venv_bin(venv: &Path) -> PathBuf {
    if cfg!(windows) {
        venv.join("Scripts")
    } else {
        venv.join("bin")
    }
}

/// A fresh virtual environment at `dir` (removed first), or `None` with the reason.
pub fn fresh_venv(dir: &Path) -> Option<PathBuf> {
    let _ = std::fs::remove_dir_all(dir);
    let python = if cfg!(windows) { "python" } else { "python3" };
    match Command::new(python).args(["-m", "venv"]).arg(dir).output() {
        Ok(o) if o.status.success() => Some(dir.to_path_buf()),
        Ok(o) => {
            let why = format!("-m venv failed:\n{}", text(&o));
            crate::tool_support::missing(python, &why, "a virtual environment for pip");
            None
        }
        Err(e) => {
            let why = format!("does not run: {e}");
            crate::tool_support::missing(python, &why, "a virtual environment for pip");
            None
        }
    }
}

/// `pip install ARGS` into the virtual environment, or `None` with pip's output.
pub fn pip_install(venv: &Path, args: &[&str]) -> Option<()> {
    let out = Command::new(venv_bin(venv).join("python"))
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(args)
        .output();
    match out {
        Ok(o) if o.status.success() => Some(()),
        Ok(o) => {
            let why = format!("failed to install:\n{}", text(&o));
            crate::tool_support::missing(&args.join(" "), &why, "pip, from PyPI");
            None
        }
        Err(e) => {
            let why = format!("does not run: {e}");
            crate::tool_support::missing("pip", &why, "a virtual environment for pip");
            None
        }
    }
}

/// maturin from PyPI, kept under the target directory between runs. Installed once per
/// test binary: tests run in parallel, and one that found the executable while another
/// was still writing it (or removing a half-made environment) could not run it.
pub fn maturin() -> Option<PathBuf> {
    static MATURIN: OnceLock<Option<PathBuf>> = OnceLock::new();
    MATURIN.get_or_init(install_maturin).clone()
}

fn install_maturin() -> Option<PathBuf> {
    let venv = scratch().join("maturin-venv");
    let exe = venv_bin(&venv).join("maturin");
    if exe.is_file() {
        return Some(exe);
    }
    let venv = fresh_venv(&venv)?;
    pip_install(&venv, &["maturin>=1.5,<2"])?;
    if !exe.is_file() {
        crate::tool_support::missing("maturin", "is not installed", "pip, from PyPI");
        return None;
    }
    Some(exe)
}

/// The built wheel and how long the build took.
pub struct Wheel {
    pub path: PathBuf,
    pub build_seconds: f64,
}

/// The wheel of this checkout, built once per test binary.
pub fn wheel() -> Option<&'static Wheel> {
    static WHEEL: OnceLock<Option<Wheel>> = OnceLock::new();
    WHEEL.get_or_init(build_wheel).as_ref()
}

fn build_wheel() -> Option<Wheel> {
    let maturin = maturin()?;
    let out = scratch().join("wheels");
    let _ = std::fs::remove_dir_all(&out);
    // `target/tmp/..` is the target directory `cargo test` built in.
    let target_dir = scratch().parent().unwrap();
    let started = Instant::now();
    let built = Command::new(&maturin)
        .args(["build", "--release", "--locked", "--quiet", "--out"])
        .arg(&out)
        .arg("--manifest-path")
        .arg(manifest_dir().join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target_dir)
        .output()
        .expect("maturin runs");
    let build_seconds = started.elapsed().as_secs_f64();
    assert!(
        built.status.success(),
        "maturin build failed:\n{}",
        text(&built)
    );
    let wheels: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    assert_eq!(wheels.len(), 1, "one wheel expected in {}", out.display());
    let path = wheels.into_iter().next().unwrap();
    eprintln!(
        "built {} ({:.1} MB) in {build_seconds:.1} s",
        path.file_name().unwrap().to_string_lossy(),
        std::fs::metadata(&path).unwrap().len() as f64 / 1e6
    );
    Some(Wheel {
        path,
        build_seconds,
    })
}
