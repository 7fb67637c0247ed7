//! The Python wheel (`pyproject.toml`, maturin's `bin` bindings): built from this checkout
//! (`tests/wheel/wheel_support`), installed into a fresh virtual environment with pip and no
//! index, and run — `stridelint` on PATH of that environment and `python -m stridelint`
//! — on the bundled example. Skips, saying why, where maturin cannot be installed.

use crate::wheel_support;

use std::path::Path;
use std::process::{Command, Output};

use wheel_support::{fresh_venv, manifest_dir, pip_install, text, venv_bin, wheel};

fn run(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

/// `stridelint check` on `examples/attention.py`, run in the repository, by `program`
/// (with `prefix` arguments, e.g. `-m stridelint`).
fn lint_example(program: &Path, prefix: &[&str]) -> Output {
    run(Command::new(program)
        .args(prefix)
        .args([
            "check",
            "--no-cache",
            "--output-format",
            "concise",
            "examples/attention.py",
        ])
        .current_dir(manifest_dir()))
}

#[test]
fn the_wheel_puts_stridelint_on_path_and_runs_as_a_module() {
    let Some(wheel) = wheel() else {
        return;
    };
    let env = tempfile::tempdir().unwrap();
    let Some(venv) = fresh_venv(&env.path().join("venv")) else {
        return;
    };
    pip_install(&venv, &["--no-index", wheel.path.to_str().unwrap()])
        .expect("the wheel installs without an index");
    let bin = venv_bin(&venv);
    let exe = bin.join(if cfg!(windows) {
        "stridelint.exe"
    } else {
        "stridelint"
    });
    assert!(exe.is_file(), "pip put no stridelint in {}", bin.display());
    let version = run(Command::new(&exe).arg("--version"));
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("stridelint {}", env!("CARGO_PKG_VERSION"))
    );

    // The example's findings (an SL001 error among them), with exit code 1, from the binary
    // and from the module.
    let direct = lint_example(&exe, &[]);
    assert_eq!(direct.status.code(), Some(1), "{}", text(&direct));
    let report = String::from_utf8_lossy(&direct.stdout).into_owned();
    assert!(
        report.contains("examples/attention.py:") && report.contains(" SL001 "),
        "{report}"
    );
    let module = lint_example(&bin.join("python"), &["-m", "stridelint"]);
    assert_eq!(module.status.code(), Some(1), "{}", text(&module));
    assert_eq!(String::from_utf8_lossy(&module.stdout), report);
    let rules = run(Command::new(bin.join("python")).args(["-m", "stridelint", "rules"]));
    assert!(rules.status.success(), "{}", text(&rules));
    assert!(String::from_utf8_lossy(&rules.stdout).contains("SL001"));
    // A usage error keeps stridelint's exit code 2 through the module.
    let usage =
        run(Command::new(bin.join("python")).args(["-m", "stridelint", "check", "--no-such-flag"]));
    assert_eq!(usage.status.code(), Some(2), "{}", text(&usage));
}

#[test]
fn the_wheel_holds_the_binary_and_the_package_only() {
    let Some(wheel) = wheel() else {
        return;
    };
    let listing = run(Command::new(if cfg!(windows) { "python" } else { "python3" })
        .args([
            "-c",
            "import sys, zipfile\nfor i in zipfile.ZipFile(sys.argv[1]).infolist(): print(i.filename, i.file_size)",
        ])
        .arg(&wheel.path));
    assert!(listing.status.success(), "{}", text(&listing));
    let listing = String::from_utf8_lossy(&listing.stdout).into_owned();
    let names: Vec<&str> = listing
        .lines()
        .filter_map(|l| l.rsplit_once(' ').map(|(name, _)| name))
        .collect();
    let version = env!("CARGO_PKG_VERSION");
    let exe = if cfg!(windows) {
        "stridelint.exe"
    } else {
        "stridelint"
    };
    for expected in [
        format!("stridelint-{version}.data/scripts/{exe}"),
        "stridelint/__init__.py".to_string(),
        "stridelint/__main__.py".to_string(),
        format!("stridelint-{version}.dist-info/METADATA"),
    ] {
        assert!(
            names.contains(&expected.as_str()),
            "{expected} missing:\n{listing}"
        );
    }
    assert!(
        !names.iter().any(|n| n.contains("bench_engine")),
        "the developer tool is not shipped:\n{listing}"
    );
    let size = std::fs::metadata(&wheel.path).unwrap().len();
    eprintln!(
        "wheel: {} bytes ({:.1} MB), built in {:.1} s",
        size,
        size as f64 / 1e6,
        wheel.build_seconds
    );
    assert!(size < 30_000_000, "{size} bytes: is the binary stripped?");
}

/// The sdist (what `pip install stridelint` builds where no wheel fits) holds what the build
/// needs — the crate, `rules/` and `kernels/` (embedded at build time), the Python package —
/// and not the test suite.
#[test]
fn the_sdist_holds_what_the_build_needs() {
    let Some(maturin) = wheel_support::maturin() else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let built = run(Command::new(maturin)
        .args(["sdist", "--out"])
        .arg(out.path())
        .arg("--manifest-path")
        .arg(manifest_dir().join("Cargo.toml")));
    assert!(built.status.success(), "{}", text(&built));
    let sdist = out
        .path()
        .join(format!("stridelint-{}.tar.gz", env!("CARGO_PKG_VERSION")));
    let listed = run(Command::new("tar").arg("-tzf").arg(&sdist));
    assert!(listed.status.success(), "{}", text(&listed));
    let listing = String::from_utf8_lossy(&listed.stdout).into_owned();
    let prefix = format!("stridelint-{}/", env!("CARGO_PKG_VERSION"));
    for expected in [
        "Cargo.toml",
        "Cargo.lock",
        "pyproject.toml",
        "src/main.rs",
        "rules/torch.toml",
        "rules/lints/SL001.md",
        "python/stridelint/__main__.py",
    ] {
        assert!(
            listing.lines().any(|l| l == format!("{prefix}{expected}")),
            "{expected} missing:\n{listing}"
        );
    }
    assert!(
        listing
            .lines()
            .any(|l| l.starts_with(&format!("{prefix}kernels/"))),
        "kernels/ missing"
    );
    assert!(
        !listing
            .lines()
            .any(|l| l.starts_with(&format!("{prefix}tests/"))),
        "the test suite is not shipped"
    );
}
