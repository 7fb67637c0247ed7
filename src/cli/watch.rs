//! `check --watch`, as Ruff's: lint, then lint again each time a watched file changes,
//! until interrupted. A terminal is cleared before each run, so it shows the current
//! findings only; a pipe or file gets every run in turn.
//!
//! Changes are found by polling: every [`POLL`] the watched trees are listed again and each
//! file's modification time and size compared with the last run's. That needs no platform
//! watcher, sees files that appear or go away, and costs a few milliseconds on a tree of
//! thousands of files (the result cache keeps a re-run to the files that changed).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

/// How often the watched files are compared with the last run's.
const POLL: Duration = Duration::from_millis(250);

/// The files whose change starts a new run: the sources stridelint reads, the
/// configuration it reads, and the ignore files that decide what it lints.
const WATCHED_EXTENSIONS: [&str; 5] = ["py", "pyi", "rs", "ipynb", "toml"];
const WATCHED_NAMES: [&str; 2] = [".gitignore", ".ignore"];

/// One watched file as last seen: its path, modification time and size.
type Seen = Vec<(PathBuf, Option<SystemTime>, u64)>;

/// Run `check` now and after every change under `paths` (and to the configuration files
/// in the current directory and above it); returns only if standard output goes away.
pub fn watch(paths: &[PathBuf], mut check: impl FnMut() -> ExitCode) -> ExitCode {
    let terminal = std::io::stdout().is_terminal();
    let mut message = "Starting linter in watch mode...";
    loop {
        if announce(terminal, message).is_err() {
            return ExitCode::SUCCESS;
        }
        let before = snapshot(paths);
        check();
        if announce(false, "Watching for file changes.").is_err() {
            return ExitCode::SUCCESS;
        }
        while snapshot(paths) == before {
            std::thread::sleep(POLL);
        }
        message = "File change detected...";
    }
}

/// Print `[time] message` (after clearing a terminal's screen when `clear`).
fn announce(clear: bool, message: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    if clear {
        write!(out, "\x1b[2J\x1b[H")?;
    }
    writeln!(out, "[{}] {message}", local_time())?;
    out.flush()
}

/// Every watched file under `paths` and every configuration file of the current
/// directory and its ancestors, sorted.
fn snapshot(paths: &[PathBuf]) -> Seen {
    let mut seen = Seen::new();
    for root in paths {
        // Hidden directories (`.git`, the result cache) and ignored files change without
        // changing what is linted.
        for entry in ignore::WalkBuilder::new(root).build().flatten() {
            if entry.file_type().is_some_and(|t| t.is_file()) && watched(entry.path()) {
                seen.push(stat(entry.path()));
            }
        }
    }
    if let Ok(cwd) = std::env::current_dir() {
        for dir in cwd.ancestors() {
            for name in ["stridelint.toml", ".stridelint.toml", "pyproject.toml"] {
                let path = dir.join(name);
                if path.is_file() {
                    seen.push(stat(&path));
                }
            }
        }
    }
    seen.sort();
    seen.dedup();
    seen
}

fn watched(path: &Path) -> bool {
    let named = |names: &[&str], part: Option<&std::ffi::OsStr>| {
        part.and_then(|p| p.to_str())
            .is_some_and(|p| names.contains(&p))
    };
    named(&WATCHED_EXTENSIONS, path.extension()) || named(&WATCHED_NAMES, path.file_name())
}

fn stat(path: &Path) -> (PathBuf, Option<SystemTime>, u64) {
    let meta = std::fs::metadata(path).ok();
    let modified = meta.as_ref().and_then(|m| m.modified().ok());
    (path.to_path_buf(), modified, meta.map_or(0, |m| m.len()))
}

/// The local time as `HH:MM:SS` (UTC where the C library's time zone is not at hand).
fn local_time() -> String {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (hour, minute, second) = clock(now);
    format!("{hour:02}:{minute:02}:{second:02}")
}

#[cfg(unix)]
fn clock(seconds: u64) -> (i64, i64, i64) {
    let now = seconds as libc::time_t;
    // SAFETY: `localtime_r` only writes the `tm` it is given; a zeroed `tm` is a valid value.
    let tm = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&now, &mut tm);
        tm
    };
    (tm.tm_hour.into(), tm.tm_min.into(), tm.tm_sec.into())
}

#[cfg(not(unix))]
fn clock(seconds: u64) -> (i64, i64, i64) {
    let of_day = (seconds % 86_400) as i64;
    (of_day / 3600, of_day / 60 % 60, of_day % 60)
}
