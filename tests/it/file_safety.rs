//! Never touch a file it should not: `--fix`, `--add-noqa` and the cache write through
//! exclusive temporary files (a planted link is never followed), refuse read-only files,
//! keep owner and mode, leave nothing behind when interrupted, never put a comment where it
//! changes the code, and never show a cache entry they did not write.
#![cfg(unix)]

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use crate::cli_support;
use cli_support::{binary, project, stderr};

/// One SL001 with a safe fix (`.contiguous()` before the view).
const VIEW_BUG: &str = "\
import torch
def f(x):
    B, T, C = x.size()
    y = x.transpose(1, 2).view(B, -1)
    return y
";

const FIXED: &str = "\
import torch
def f(x):
    B, T, C = x.size()
    y = x.transpose(1, 2).contiguous().view(B, -1)
    return y
";

fn command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(binary());
    command
        .current_dir(dir)
        .args(args)
        .env_remove("STRIDELINT_CACHE_DIR")
        .stdin(Stdio::null());
    command
}

fn run(dir: &Path, args: &[&str]) -> Output {
    command(dir, args).output().expect("the binary runs")
}

/// `args` run by bash after `setup` (a shell line that may use `$$`, the PID stridelint
/// will have: bash `exec`s it), so that names built from the PID can be planted first.
fn run_after(dir: &Path, setup: &str, args: &[&str]) -> Output {
    let script = format!("{setup}\nexec \"$0\" \"$@\"");
    Command::new("bash")
        .current_dir(dir)
        .arg("-c")
        .arg(script)
        .arg(binary())
        .args(args)
        .env_remove("STRIDELINT_CACHE_DIR")
        .stdin(Stdio::null())
        .output()
        .expect("bash runs")
}

fn read(path: impl AsRef<Path>) -> String {
    std::fs::read_to_string(path).unwrap()
}

fn is_symlink(path: impl AsRef<Path>) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Regular files in `dir` (recursively) named like stridelint's temporary files (the
/// links a test plants at such names are not counted).
fn temporary_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            found.extend(temporary_files(&path));
        } else if kind.is_file() && name.ends_with(".tmp") {
            found.push(path);
        }
    }
    found
}

/// The README's reproducer: links planted at the names `--fix`, `--add-noqa` and the cache
/// used to open with create+truncate (`.a.py.stridelint-PID.tmp`, `.results.PID.tmp`, the
/// cache directory's `.gitignore` and `CACHEDIR.TAG`) are never written through, and the
/// fixed file stays a regular file.
#[test]
fn a_planted_link_is_never_followed() {
    let plant_fix = "ln -s VICTIM .a.py.stridelint-$$.tmp";
    let plant_cache = format!(
        "mkdir -p cache/{v} && ln -s ../../VICTIM cache/{v}/.results.$$.tmp \
         && ln -s ../VICTIM cache/.gitignore && ln -s ../VICTIM cache/CACHEDIR.TAG",
        v = env!("CARGO_PKG_VERSION")
    );
    let cases: [(&str, &str, &[&str], &str); 3] = [
        (
            "--fix",
            plant_fix,
            &["check", "--no-cache", "--fix", "a.py"],
            FIXED,
        ),
        (
            "--add-noqa",
            plant_fix,
            &["check", "--no-cache", "--add-noqa", "a.py"],
            "  # noqa: SL001",
        ),
        (
            "cache",
            &plant_cache,
            &["check", "--cache-dir", "cache", "a.py"],
            VIEW_BUG,
        ),
    ];
    for (name, plant, args, expected) in cases {
        let dir = project(&[("a.py", VIEW_BUG), ("VICTIM", "victim\n")]);
        let out = run_after(dir.path(), plant, args);
        assert_eq!(
            read(dir.path().join("VICTIM")),
            "victim\n",
            "{name}: {out:?}"
        );
        assert!(!is_symlink(dir.path().join("a.py")), "{name}");
        assert!(read(dir.path().join("a.py")).contains(expected), "{name}");
        assert!(temporary_files(dir.path()).is_empty(), "{name}");
    }
}

/// A file without write permission is refused with its name and exit code 2, also when
/// run as root (who could write it): the decision is the file's mode, not `access(2)`.
#[test]
fn a_read_only_file_is_refused() {
    for args in [
        &["--fix"][..],
        &["--add-noqa"],
        &["--fix", "--unsafe-fixes"],
    ] {
        let dir = project(&[("ro.py", VIEW_BUG)]);
        let path = dir.path().join("ro.py");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
        let inode = std::fs::metadata(&path).unwrap().ino();
        let mut all = vec!["check", "--no-cache"];
        all.extend(args);
        all.push("ro.py");
        let out = run(dir.path(), &all);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("ro.py") && stderr(&out).contains("read-only"),
            "{args:?}: {}",
            stderr(&out)
        );
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!((meta.ino(), meta.mode() & 0o7777), (inode, 0o444));
        assert_eq!(read(&path), VIEW_BUG);
    }
}

/// A replaced file keeps its mode and, when run as root, its owner and group.
#[test]
fn a_fixed_file_keeps_its_owner_and_mode() {
    let dir = project(&[("m.py", VIEW_BUG)]);
    let path = dir.path().join("m.py");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    // SAFETY: `geteuid` has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let owner = if root {
        std::os::unix::fs::chown(&path, Some(4321), Some(4322)).unwrap();
        (4321, 4322)
    } else {
        let meta = std::fs::metadata(&path).unwrap();
        (meta.uid(), meta.gid())
    };
    let out = run(dir.path(), &["check", "--no-cache", "--fix", "m.py"]);
    assert!(stderr(&out).contains("Fixed 1 finding"), "{}", stderr(&out));
    assert_eq!(read(&path), FIXED);
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.mode() & 0o7777, 0o640);
    assert_eq!((meta.uid(), meta.gid()), owner);
}

fn numbered_tree(dir: &Path, files: usize) {
    for i in 0..files {
        std::fs::write(dir.join(format!("f{i:03}.py")), VIEW_BUG).unwrap();
    }
}

/// SIGTERM and SIGINT at delays spread over a whole `--fix` run of 300 files: no temporary
/// file is ever left, and every file holds either its old or its fixed text.
#[test]
fn an_interrupted_fix_leaves_no_temporary_file_and_no_torn_file() {
    const FILES: usize = 300;
    const RUNS: u32 = 20;
    let args = ["check", "--no-cache", "--fix", "--quiet", "."];
    let timing = tempfile::tempdir().unwrap();
    numbered_tree(timing.path(), FILES);
    let start = Instant::now();
    let out = run(timing.path(), &args);
    let whole = start.elapsed();
    assert_eq!(read(timing.path().join("f000.py")), FIXED, "{out:?}");
    let mut interrupted_while_writing = 0;
    for run in 0..RUNS {
        let dir = tempfile::tempdir().unwrap();
        numbered_tree(dir.path(), FILES);
        let mut child = command(dir.path(), &args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(whole.mul_f64(f64::from(run + 1) / f64::from(RUNS)));
        let signal = if run % 2 == 0 {
            libc::SIGTERM
        } else {
            libc::SIGINT
        };
        // SAFETY: signalling a child this test started and has not reaped yet.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        child.wait().unwrap();
        let left = temporary_files(dir.path());
        assert!(left.is_empty(), "run {run}: {left:?}");
        let mut fixed = 0;
        for i in 0..FILES {
            let text = read(dir.path().join(format!("f{i:03}.py")));
            assert!(
                text == VIEW_BUG || text == FIXED,
                "run {run}, f{i:03}: {text:?}"
            );
            fixed += usize::from(text == FIXED);
        }
        interrupted_while_writing += usize::from(fixed > 0 && fixed < FILES);
    }
    eprintln!("{interrupted_while_writing} of {RUNS} runs were stopped while writing");
}

fn parses_as_python(path: &Path) -> bool {
    let check = "import ast, sys; ast.parse(open(sys.argv[1]).read())";
    match Command::new("python3")
        .args(["-c", check])
        .arg(path)
        .output()
    {
        Ok(out) => out.status.success(),
        Err(_) => true, // no Python here: the exact text below is checked anyway
    }
}

/// The README's two `--add-noqa` reproducers: the comment goes on the line the statement
/// continues onto (never after a `\`, never inside a string), the result parses, the
/// finding is suppressed on the next run, and a second `--add-noqa` adds nothing.
#[test]
fn add_noqa_never_breaks_a_continuation_or_a_string() {
    let cases = [
        (
            "backslash.py",
            "import torch\ndef f(x):\n    B, T, C = x.size()\n    y = x.transpose(1, 2).view(B, -1) \\\n        + 1\n    return y\n",
            "    y = x.transpose(1, 2).view(B, -1) \\\n        + 1  # noqa: SL001\n",
        ),
        (
            "string.py",
            "import torch\ndef f(x):\n    B, T, C = x.size()\n    y = x.transpose(1, 2).view(B, -1); s = \"\"\"abc\nzzz\"\"\"\n    return y, s\n",
            "; s = \"\"\"abc\nzzz\"\"\"  # noqa: SL001\n",
        ),
    ];
    for (name, text, expected) in cases {
        let dir = project(&[(name, text)]);
        let path = dir.path().join(name);
        let out = run(dir.path(), &["check", "--no-cache", "--add-noqa", name]);
        assert!(stderr(&out).contains("Added 1 noqa directive."), "{out:?}");
        let added = read(&path);
        assert!(added.contains(expected), "{name}:\n{added}");
        assert!(parses_as_python(&path), "{name}:\n{added}");
        let again = run(dir.path(), &["check", "--no-cache", "--add-noqa", name]);
        assert!(
            stderr(&again).contains("Added 0 noqa directives."),
            "{again:?}"
        );
        assert_eq!(read(&path), added, "{name}: a second run changed it");
        let check = run(dir.path(), &["check", "--no-cache", name]);
        assert_eq!(check.status.code(), Some(0), "{name}: {check:?}");
    }
}

/// A cache entry edited into other valid JSON (another known code, message, span and fix
/// text) is dropped: the output equals that of a run without the cache, in every format
/// that shows those fields.
#[test]
fn an_edited_cache_entry_is_never_shown() {
    let dir = project(&[("a.py", VIEW_BUG)]);
    let first = run(dir.path(), &["check", "--cache-dir", "cache", "a.py"]);
    assert_eq!(first.status.code(), Some(1), "{first:?}");
    let results = dir
        .path()
        .join("cache")
        .join(env!("CARGO_PKG_VERSION"))
        .join("results.json");
    let edits = [
        ("\"SL001\"", "\"SL002\""),
        ("`view` fails", "nothing to see"),
        ("\".contiguous()\"", "\".tampered()\""),
        ("\"span\":[54,83]", "\"span\":[0,6]"),
    ];
    for format in ["concise", "json", "sarif"] {
        let mut stored = read(&results);
        for (from, to) in edits {
            assert!(stored.contains(from), "{from} in {stored}");
            stored = stored.replacen(from, to, 1);
        }
        std::fs::write(&results, stored).unwrap();
        let cached = run(
            dir.path(),
            &[
                "check",
                "--cache-dir",
                "cache",
                "--output-format",
                format,
                "a.py",
            ],
        );
        let fresh = run(
            dir.path(),
            &["check", "--no-cache", "--output-format", format, "a.py"],
        );
        assert_eq!(
            String::from_utf8_lossy(&cached.stdout),
            String::from_utf8_lossy(&fresh.stdout),
            "{format}"
        );
        assert_eq!(cached.status.code(), fresh.status.code(), "{format}");
        // The rerun replaced the edited entry with a good one, which the next round edits.
        assert!(!read(&results).contains("tampered"), "{format}");
    }
}
