//! The language server (`stridelint server`) end to end in a real editor: headless Neovim
//! runs `tests/editors/nvim_diagnostics.lua`, which opens a fixture with a known SL001,
//! starts the server for the buffer through Neovim's own LSP client, and writes the
//! diagnostics it receives and the hover at the first one. Skipped without `nvim`
//! (`.ci/run` installs Debian's, 0.7.2 on bookworm; the script also runs on newer ones).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::tool_support;

const FIXTURE: &str = "fixtures/python/factories.py";
const SCRIPT: &str = "tests/editors/nvim_diagnostics.lua";
const TIME_LIMIT: Duration = Duration::from_secs(60);

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn nvim_runs() -> bool {
    Command::new("nvim")
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The 1-based line of the first `# expect: SL001` marker in the fixture.
fn sl001_marker_line(fixture: &Path) -> usize {
    let text = std::fs::read_to_string(fixture).unwrap();
    text.lines()
        .position(|l| l.contains("# expect: SL001"))
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("{} has no `# expect: SL001` marker", fixture.display()))
}

fn read_or_empty(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Neovim's LSP log (under the cache dir on 0.7, the state dir on 0.8 and newer).
fn lsp_log(xdg: &Path) -> String {
    ["cache/nvim/lsp.log", "state/nvim/lsp.log"]
        .iter()
        .map(|rel| read_or_empty(&xdg.join(rel)))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn neovim_receives_sl001_and_a_hover_from_the_server() {
    if !nvim_runs() {
        tool_support::missing("nvim", "is not installed", "Debian's neovim");
        return;
    }
    let fixture = manifest_dir().join(FIXTURE);
    let line = sl001_marker_line(&fixture);

    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.txt");
    let log = tmp.path().join("nvim-output.txt");
    let xdg = tmp.path().join("xdg");
    let dirs: Vec<(&str, PathBuf)> = ["config", "data", "state", "cache"]
        .iter()
        .map(|d| (*d, xdg.join(d)))
        .collect();
    for (_, dir) in &dirs {
        std::fs::create_dir_all(dir).unwrap();
    }

    let log_file = File::create(&log).unwrap();
    let mut command = Command::new("nvim");
    command
        .current_dir(manifest_dir())
        .args(["--headless", "-u", "NONE", "-i", "NONE", "--noplugin"])
        .args(["-c", &format!("luafile {SCRIPT}")])
        .env("STRIDELINT", env!("CARGO_BIN_EXE_stridelint"))
        .env("FIXTURE", &fixture)
        .env("OUT", &out)
        .env("STRIDELINT_CACHE_DIR", tmp.path().join("stridelint-cache"))
        .stdin(Stdio::null())
        .stdout(Stdio::from(log_file.try_clone().unwrap()))
        .stderr(Stdio::from(log_file));
    for (name, dir) in &dirs {
        command.env(format!("XDG_{}_HOME", name.to_uppercase()), dir);
    }
    let mut child = command.spawn().expect("nvim starts");

    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > TIME_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };

    let result = read_or_empty(&out);
    let context = format!(
        "OUT:\n{result}\nnvim's output:\n{}\nLSP log:\n{}",
        read_or_empty(&log),
        lsp_log(&xdg)
    );
    let status = status.unwrap_or_else(|| {
        panic!(
            "nvim did not finish within {} s\n{context}",
            TIME_LIMIT.as_secs()
        )
    });
    assert!(
        status.success(),
        "nvim exited with {status} (the script writes TIMEOUT, EXIT or ERROR on failure)\n{context}"
    );

    let prefix = format!("{line}:");
    assert!(
        result
            .lines()
            .any(|l| l.starts_with(&prefix) && l.split_whitespace().nth(1) == Some("SL001")),
        "no SL001 diagnostic at {FIXTURE}:{line}\n{context}"
    );
    assert!(
        result
            .lines()
            .any(|l| l.starts_with("HOVER ") && l != "HOVER none"),
        "no hover at the first diagnostic\n{context}"
    );
}
