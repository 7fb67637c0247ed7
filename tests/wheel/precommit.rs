//! The pre-commit hook, run by the real `pre-commit` (installed from PyPI into a virtual
//! environment under the target directory; the tests skip, saying why, when that fails).
//!
//! - `hook_rejects_a_view_bug_and_passes_clean_code` (fast): `pre-commit validate-manifest`
//!   checks `.pre-commit-hooks.yaml`; then a temporary git repository uses that very hook
//!   definition as a `local` hook with `language: system` and the binary cargo built, and
//!   two `git commit`s go through `pre-commit install`'s hook.
//! - `python_hook_from_the_mirror_with_a_local_wheel_index`: the hook without a Rust
//!   toolchain, exactly as users get it — a hook repository made from `pre-commit-mirror/`
//!   (`scripts/release/update_mirror.sh`, as the release workflow makes it), `language:
//!   python`, whose `stridelint==X` pin pip resolves from a local wheel index
//!   (`PIP_FIND_LINKS`, `PIP_NO_INDEX`) holding the wheel of this checkout
//!   (`tests/wheel/wheel_support`) and setuptools for the hook repository's own build. Prints the
//!   first `pre-commit install-hooks` time.
//! - `rust_hook_from_this_repository` (ignored: pre-commit runs `cargo install` on a fresh
//!   clone, minutes on a small machine): the hook exactly as users get it — `repo:` this
//!   checkout (copied with its uncommitted changes into a temporary repository and
//!   committed there, since pre-commit clones a commit), `rev:` that commit,
//!   `language: rust`. Prints the first `pre-commit install-hooks` time.

use crate::tool_support;
use crate::wheel_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

const VIEW_BUG: &str = "\
def merge(x):
    B, H, T, D = x.shape
    y = x.transpose(1, 2)
    return y.view(B, T, H * D)
";

const CLEAN: &str = "\
def merge(x):
    B, H, T, D = x.shape
    y = x.transpose(1, 2)
    return y.reshape(B, T, H * D)  # noqa: SL002
";

/// A warning (SL002, a hidden copy) and nothing else.
const HIDDEN_COPY: &str = "\
def merge(x):
    B, H, T, D = x.shape
    y = x.transpose(1, 2)
    return y.reshape(B, T, H * D)
";

use wheel_support::manifest_dir;

fn run(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `pre-commit` from PyPI in a virtual environment kept under the target directory (so
/// reruns do not download it again), or `None` with the reason printed. Set up once per
/// test binary, so tests running in parallel do not race to create it.
fn pre_commit() -> Option<PathBuf> {
    static PRE_COMMIT: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    PRE_COMMIT.get_or_init(install_pre_commit).clone()
}

fn install_pre_commit() -> Option<PathBuf> {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pre-commit-venv");
    let exe = venv.join("bin").join("pre-commit");
    if exe.is_file() {
        return Some(exe);
    }
    let created = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output();
    if !created.as_ref().is_ok_and(|o| o.status.success()) {
        tool_support::missing(
            "python3",
            "cannot create a virtual environment (`python3 -m venv`)",
            "a virtual environment for pip",
        );
        return None;
    }
    let pip = Command::new(venv.join("bin").join("pip"))
        .args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "pre-commit",
        ])
        .output();
    match pip {
        Ok(o) if o.status.success() && exe.is_file() => Some(exe),
        Ok(o) => {
            let why = format!("failed to install:\n{}", text(&o));
            tool_support::missing("pre-commit", &why, "pip, from PyPI");
            None
        }
        Err(e) => {
            let why = format!("does not run: {e}");
            tool_support::missing("pip", &why, "a virtual environment for pip");
            None
        }
    }
}

/// `git` with an identity and no signing, whatever the user's global configuration says.
fn git(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .args([
            "-c",
            "user.name=stridelint test",
            "-c",
            "user.email=test@example.com",
            "-c",
            "commit.gpgsign=false",
        ])
        .env("GIT_CONFIG_NOSYSTEM", "1");
    cmd
}

fn init_repo(dir: &Path) {
    assert!(
        run(git(dir).args(["init", "--quiet", "--initial-branch=main"]))
            .status
            .success()
    );
}

/// A git repository whose `.pre-commit-config.yaml` is `config`, with the hook installed.
fn project_with_hook(pre_commit: &Path, config: &str, pre_commit_home: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    init_repo(dir.path());
    std::fs::write(dir.path().join(".pre-commit-config.yaml"), config).unwrap();
    let installed = run(Command::new(pre_commit)
        .current_dir(dir.path())
        .arg("install")
        .env("PRE_COMMIT_HOME", pre_commit_home));
    assert!(installed.status.success(), "{}", text(&installed));
    assert!(
        run(git(dir.path()).args(["add", ".pre-commit-config.yaml"]))
            .status
            .success()
    );
    dir
}

/// Stage `file` with `content` and try to commit it through the installed hook.
fn commit(
    dir: &Path,
    file: &str,
    content: &str,
    pre_commit_home: &Path,
    env: &[(&str, &Path)],
) -> Output {
    std::fs::write(dir.join(file), content).unwrap();
    assert!(run(git(dir).args(["add", file])).status.success());
    let mut cmd = git(dir);
    cmd.args(["commit", "--quiet", "-m", "change"])
        .env("PRE_COMMIT_HOME", pre_commit_home);
    for (key, value) in env {
        cmd.env(key, value);
    }
    run(&mut cmd)
}

/// Both commits: the view bug is rejected with the finding, the clean version passes.
fn assert_rejects_bug_then_accepts_fix(
    project: &Path,
    pre_commit_home: &Path,
    env: &[(&str, &Path)],
) {
    let rejected = commit(project, "model.py", VIEW_BUG, pre_commit_home, env);
    let output = text(&rejected);
    assert!(
        !rejected.status.success(),
        "the commit with a view bug went through:\n{output}"
    );
    assert!(
        output.contains("SL001 [view-incompatible]") && output.contains("--> model.py:4:12"),
        "{output}"
    );
    let accepted = commit(project, "model.py", CLEAN, pre_commit_home, env);
    assert!(accepted.status.success(), "{}", text(&accepted));
    let log = run(git(project).args(["log", "--oneline"]));
    assert_eq!(String::from_utf8_lossy(&log.stdout).lines().count(), 1);
}

/// The hook of `.pre-commit-hooks.yaml` as a `local` hook running `binary` (the manifest's
/// keys, with `language: system` and the binary's path in `entry`).
fn local_config_from_manifest(binary: &Path) -> String {
    let manifest = std::fs::read_to_string(manifest_dir().join(".pre-commit-hooks.yaml")).unwrap();
    let mut config = String::from("repos:\n  - repo: local\n    hooks:\n");
    for line in manifest
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
    {
        let line = match line.trim_start().split_once(": ") {
            Some(("language", "rust")) => "  language: system".to_string(),
            Some(("entry", entry)) => {
                let args = entry
                    .strip_prefix("stridelint")
                    .expect("the entry runs stridelint");
                format!("  entry: {}{args}", binary.display())
            }
            _ => line.to_string(),
        };
        config.push_str("      ");
        config.push_str(&line);
        config.push('\n');
    }
    config
}

#[test]
fn hook_rejects_a_view_bug_and_passes_clean_code() {
    let Some(pre_commit) = pre_commit() else {
        return;
    };
    let _serial = TARGET_BINARY.lock().unwrap_or_else(|e| e.into_inner());
    let manifest = manifest_dir().join(".pre-commit-hooks.yaml");
    let validated = run(Command::new(&pre_commit)
        .arg("validate-manifest")
        .arg(&manifest));
    assert!(validated.status.success(), "{}", text(&validated));
    let text_of_manifest = std::fs::read_to_string(&manifest).unwrap();
    for expected in [
        "- id: stridelint",
        "language: rust",
        "types_or: [python, rust, jupyter]",
        "require_serial: true",
    ] {
        assert!(text_of_manifest.contains(expected), "{expected}");
    }

    let home = tempfile::tempdir().unwrap();
    let config = local_config_from_manifest(Path::new(env!("CARGO_BIN_EXE_stridelint")));
    let validated_config = {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        std::fs::write(&path, &config).unwrap();
        run(Command::new(&pre_commit).arg("validate-config").arg(&path))
    };
    assert!(
        validated_config.status.success(),
        "{config}\n{}",
        text(&validated_config)
    );
    let project = project_with_hook(&pre_commit, &config, home.path());
    assert_rejects_bug_then_accepts_fix(project.path(), home.path(), &[]);

    // A warning lets the commit through; `args: [--fail-on, warning]`
    // (what README's pre-commit section shows) makes it reject the commit.
    let warned = commit(project.path(), "heads.py", HIDDEN_COPY, home.path(), &[]);
    // (pre-commit prints a passing hook's output only with `verbose: true`.)
    assert!(warned.status.success(), "{}", text(&warned));
    assert!(config.contains("args: []"), "{config}");
    let strict = config.replace("args: []", "args: [--fail-on, warning]");
    let project = project_with_hook(&pre_commit, &strict, home.path());
    let rejected = commit(project.path(), "heads.py", HIDDEN_COPY, home.path(), &[]);
    assert!(!rejected.status.success(), "{}", text(&rejected));
    assert!(text(&rejected).contains("SL002 [hidden-copy]"));
}

/// A repository holding this checkout's files as they are now (tracked and untracked, not
/// ignored), committed: pre-commit clones a commit, and the working tree may be ahead of
/// the last one. Returns the repository and the commit.
fn snapshot_of_this_checkout() -> (tempfile::TempDir, String) {
    let listed = run(git(manifest_dir()).args([
        "ls-files",
        "-z",
        "--cached",
        "--others",
        "--exclude-standard",
    ]));
    assert!(listed.status.success(), "{}", text(&listed));
    let snapshot = tempfile::tempdir().unwrap();
    for rel in listed.stdout.split(|b| *b == 0).filter(|p| !p.is_empty()) {
        let rel = Path::new(std::str::from_utf8(rel).unwrap());
        let from = manifest_dir().join(rel);
        if !from.is_file() {
            continue; // deleted in the working tree
        }
        let to = snapshot.path().join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&from, &to).unwrap();
    }
    init_repo(snapshot.path());
    assert!(run(git(snapshot.path()).args(["add", "--all"]))
        .status
        .success());
    assert!(
        run(git(snapshot.path()).args(["commit", "--quiet", "-m", "snapshot"]))
            .status
            .success()
    );
    let head = run(git(snapshot.path()).args(["rev-parse", "HEAD"]));
    (
        snapshot,
        String::from_utf8_lossy(&head.stdout).trim().to_string(),
    )
}

#[test]
#[ignore = "pre-commit builds stridelint with `cargo install` (minutes)"]
fn rust_hook_from_this_repository() {
    let Some(pre_commit) = pre_commit() else {
        return;
    };
    if run(Command::new("cargo").arg("--version")).status.code() != Some(0) {
        tool_support::missing(
            "cargo",
            "is not on PATH for pre-commit's rust language",
            "rustup",
        );
        return;
    }
    let (hook_repo, rev) = snapshot_of_this_checkout();
    let config = format!(
        "repos:\n  - repo: {}\n    rev: {rev}\n    hooks:\n      - id: stridelint\n",
        hook_repo.path().display()
    );
    let home = tempfile::tempdir().unwrap();
    let project = project_with_hook(&pre_commit, &config, home.path());
    // pre-commit's `cargo install` builds in `CARGO_TARGET_DIR`: one kept between runs makes
    // a rerun incremental (STRIDELINT_FRESH_CARGO_TARGET=1 measures a first install).
    let target = if std::env::var_os("STRIDELINT_FRESH_CARGO_TARGET").is_some() {
        home.path().join("cargo-target")
    } else {
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("pre-commit-cargo-target")
    };
    let env = [("CARGO_TARGET_DIR", target.as_path())];
    install_hooks_timed(
        &pre_commit,
        project.path(),
        home.path(),
        &env,
        "language: rust",
    );
    assert_rejects_bug_then_accepts_fix(project.path(), home.path(), &env);
}

/// `pre-commit install-hooks` (what the first commit would otherwise do), timed.
fn install_hooks_timed(
    pre_commit: &Path,
    project: &Path,
    pre_commit_home: &Path,
    env: &[(&str, &Path)],
    what: &str,
) {
    let mut cmd = Command::new(pre_commit);
    cmd.current_dir(project)
        .arg("install-hooks")
        .env("PRE_COMMIT_HOME", pre_commit_home);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let started = Instant::now();
    let installed = run(&mut cmd);
    let seconds = started.elapsed().as_secs_f64();
    assert!(installed.status.success(), "{}", text(&installed));
    eprintln!("first `pre-commit install-hooks` ({what}): {seconds:.1} s");
}

/// Cargo re-links `target/release/stridelint` while maturin builds the wheel (even when
/// nothing changed), so a test running that binary must not overlap the wheel build.
static TARGET_BINARY: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A local wheel index: the wheel of this checkout and setuptools (which pip needs to
/// build the hook repository itself), downloaded once into the target directory.
fn wheel_index() -> Option<PathBuf> {
    let wheel = {
        let _serial = TARGET_BINARY.lock().unwrap_or_else(|e| e.into_inner());
        wheel_support::wheel()?
    };
    let index = Path::new(env!("CARGO_TARGET_TMPDIR")).join("wheel-index");
    std::fs::create_dir_all(&index).unwrap();
    let has_setuptools = std::fs::read_dir(&index).unwrap().any(|e| {
        e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("setuptools-")
    });
    if !has_setuptools {
        let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pre-commit-venv");
        let downloaded = Command::new(wheel_support::venv_bin(&venv).join("pip"))
            .args([
                "download",
                "--quiet",
                "--disable-pip-version-check",
                "--only-binary=:all:",
                "--dest",
            ])
            .arg(&index)
            .arg("setuptools>=61")
            .output();
        if !downloaded.as_ref().is_ok_and(|o| o.status.success()) {
            tool_support::missing(
                "setuptools",
                "cannot be downloaded for the local wheel index",
                "pip, from PyPI",
            );
            return None;
        }
    }
    for entry in std::fs::read_dir(&index).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("stridelint-")
        {
            std::fs::remove_file(path).unwrap();
        }
    }
    std::fs::copy(&wheel.path, index.join(wheel.path.file_name().unwrap())).unwrap();
    Some(index)
}

#[test]
fn python_hook_from_the_mirror_with_a_local_wheel_index() {
    let Some(pre_commit) = pre_commit() else {
        return;
    };
    let Some(index) = wheel_index() else {
        return;
    };
    let version = env!("CARGO_PKG_VERSION");
    // The hook repository as the release workflow writes it, tagged.
    let mirror = tempfile::tempdir().unwrap();
    let written = run(Command::new("bash")
        .arg(manifest_dir().join("scripts/release/update_mirror.sh"))
        .arg(version)
        .arg(mirror.path()));
    assert!(written.status.success(), "{}", text(&written));
    let manifest = std::fs::read_to_string(mirror.path().join(".pre-commit-hooks.yaml")).unwrap();
    assert!(manifest.contains("language: python"), "{manifest}");
    let pyproject = std::fs::read_to_string(mirror.path().join("pyproject.toml")).unwrap();
    assert!(
        pyproject.contains(&format!("\"stridelint=={version}\"")),
        "{pyproject}"
    );
    let validated = run(Command::new(&pre_commit)
        .arg("validate-manifest")
        .arg(mirror.path().join(".pre-commit-hooks.yaml")));
    assert!(validated.status.success(), "{}", text(&validated));
    init_repo(mirror.path());
    assert!(run(git(mirror.path()).args(["add", "--all"]))
        .status
        .success());
    assert!(
        run(git(mirror.path()).args(["commit", "--quiet", "-m", "hook"]))
            .status
            .success()
    );
    let tag = format!("v{version}");
    assert!(run(git(mirror.path()).args(["tag", &tag])).status.success());

    let config = format!(
        "repos:\n  - repo: {}\n    rev: {tag}\n    hooks:\n      - id: stridelint\n",
        mirror.path().display()
    );
    let home = tempfile::tempdir().unwrap();
    let project = project_with_hook(&pre_commit, &config, home.path());
    // No Rust toolchain may be used: cargo and rustup are hidden from the hook's PATH.
    let no_cargo = tempfile::tempdir().unwrap();
    let path = std::env::join_paths(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .filter(|dir| !dir.join("cargo").exists() && !dir.join("rustc").exists()),
    )
    .unwrap();
    let path = PathBuf::from(path);
    let env = [
        ("PIP_FIND_LINKS", index.as_path()),
        ("PIP_NO_INDEX", Path::new("1")),
        ("PATH", path.as_path()),
        ("CARGO_HOME", no_cargo.path()),
        ("RUSTUP_HOME", no_cargo.path()),
    ];
    install_hooks_timed(
        &pre_commit,
        project.path(),
        home.path(),
        &env,
        "language: python",
    );
    // The hook's environment got the wheel's binary; nothing was compiled.
    let installed: Vec<PathBuf> = walk(home.path())
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "stridelint") && p.is_file())
        .collect();
    assert!(
        installed
            .iter()
            .any(|p| p.parent().is_some_and(|d| d.ends_with("bin"))),
        "no stridelint binary in the hook environment: {installed:?}"
    );
    let built: Vec<PathBuf> = walk(home.path())
        .into_iter()
        .filter(|p| p.ends_with("release/.fingerprint"))
        .collect();
    assert!(
        built.is_empty(),
        "cargo built in the pre-commit cache: {built:?}"
    );
    assert_rejects_bug_then_accepts_fix(project.path(), home.path(), &env);
}

/// Every path below `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path.clone());
            }
            out.push(path);
        }
    }
    out
}
