//! `stridelint report`: one self-contained HTML page about what the copies cost. The page
//! is checked as text (no network: nothing loaded from elsewhere) and in a real browser:
//! headless Chromium (Debian's `chromium`, installed by `.ci/run`) loads it, runs its one
//! script and renders it to a PNG. Skipped without Chromium.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::tool_support;

fn stridelint(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stridelint"))
        .args(args)
        .current_dir(dir)
        .env("STRIDELINT_CACHE_DIR", dir.join(".cache"))
        .output()
        .unwrap()
}

const MODEL: &str = "\
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.heads = heads

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        y = (q @ k.transpose(-2, -1)).softmax(-1) @ v
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


def merge_heads(y):
    B, H, T, D = y.shape
    return y.transpose(1, 2).view(B, T, H * D)
";

/// The report of `MODEL` at real sizes, and its path.
fn report(dir: &Path) -> (String, PathBuf) {
    std::fs::write(dir.join("model.py"), MODEL).unwrap();
    let out = stridelint(
        dir,
        &[
            "report", "model.py", "--dim", "B=16", "--dim", "T=4096", "--dim", "dim=4096", "--dim",
            "heads=32", "--dim", "H=32", "--dim", "D=128", "--dtype", "bf16", "--layers", "32",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = dir.join("stridelint-report.html");
    (std::fs::read_to_string(&path).unwrap(), path)
}

/// `report` writes HTML only: another `--output-format` (which `check` takes) is refused
/// before anything is written, instead of silently writing HTML under the name given.
#[test]
fn the_report_refuses_a_format_other_than_html_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("model.py"), MODEL).unwrap();
    for format in ["json", "sarif", "full", "concise"] {
        let out = stridelint(
            dir.path(),
            &["report", "model.py", "--output-format", format, "-o", "x"],
        );
        assert_eq!(out.status.code(), Some(2), "{format}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            err.trim(),
            format!(
                "error: `stridelint report` writes the HTML cost report only \
                 (`--output-format html`); for `--output-format {format}` use `stridelint check`"
            )
        );
        assert!(out.stdout.is_empty());
        assert!(!dir.path().join("x").exists(), "{format}");
        assert!(
            !dir.path().join("stridelint-report.html").exists(),
            "{format}"
        );
    }
    // `html`, the report's own format, is accepted.
    let out = stridelint(
        dir.path(),
        &[
            "report",
            "model.py",
            "--output-format",
            "html",
            "-o",
            "r.html",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let page = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"), "{}", &page[..40]);
}

#[test]
fn the_report_ranks_the_copies_by_bytes_and_needs_no_network() {
    let dir = tempfile::tempdir().unwrap();
    let (html, _) = report(dir.path());
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    // Nothing is fetched: no external script, style sheet, image or font.
    for outside in ["src=\"http", "href=\"http", "@import", "url(", "<link"] {
        assert!(!html.contains(outside), "`{outside}` in the page");
    }
    // The summary and the chart: the one sized copy, 16·4096·4096 bf16 elements ×32 layers.
    // The copy, the view, and the attention written out by hand (SL008).
    assert!(html.contains("3 findings in 1 file"), "{html}");
    assert!(
        html.contains("1 copy of known size moves <b>16.0 GiB</b> per forward pass"),
        "{html}"
    );
    assert!(html.contains("<svg id=\"chart\""), "{html}");
    // One bar per function whose copies have a size, labelled with the file and function.
    assert_eq!(html.matches("<rect class=\"bar\"").count(), 1, "{html}");
    assert!(
        html.contains(">model.py · Attention.forward</text>"),
        "{html}"
    );
    // Per file and function, costliest first, each with its bytes per forward pass and
    // the four ways to write each site.
    let forward = html
        .find("<h3><code>Attention.forward</code> <span class=\"cost\">16.0 GiB per forward pass</span></h3>")
        .unwrap_or_else(|| panic!("{html}"));
    let merge = html
        .find("<h3><code>merge_heads</code></h3>")
        .unwrap_or_else(|| panic!("{html}"));
    assert!(forward < merge, "the costlier function first: {html}");
    assert!(
        html.contains("<b>SL001</b> <code>view</code>"),
        "backticks set as code: {html}"
    );
    assert!(
        html.contains("copies 16.0 GiB per pass, silently (this line)"),
        "{html}"
    );
    assert!(html.contains("fails at run time"), "{html}");
    // The hand-written attention: the score matrices it stores, not a copy.
    assert!(
        html.contains("1 hand-written attention of known size stores <b>512.0 GiB</b> of score matrices per forward pass"),
        "{html}"
    );
    assert!(html.contains("stores 512.0 GiB of scores"), "{html}");
}

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|name| {
            Command::new(name)
                .arg("--version")
                .stdin(Stdio::null())
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

/// Run headless Chromium with `args` on `url`, killed after a minute. Its output goes to
/// files (a page's DOM outgrows a pipe that nobody reads while it runs).
fn headless(browser: &str, profile: &Path, args: &[String], url: &str) -> Output {
    std::fs::create_dir_all(profile).unwrap();
    let (out, err) = (profile.join("stdout"), profile.join("stderr"));
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("Chromium did not finish in a minute");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Output {
        status: child.wait().unwrap(),
        stdout: std::fs::read(&out).unwrap(),
        stderr: std::fs::read(&err).unwrap(),
    }
}

#[test]
fn chromium_renders_the_report_with_its_chart() {
    let Some(browser) = chromium() else {
        tool_support::missing("chromium", "is not installed", "Debian's chromium");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (_, page) = report(dir.path());
    let url = format!("file://{}", page.display());
    // The DOM after the page's script ran: it counts the chart's bars.
    let dom = headless(
        browser,
        &dir.path().join("profile-dom"),
        &["--dump-dom".into(), "--window-size=1280,900".into()],
        &url,
    );
    let dom_text = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom_text.contains("data-rendered=\"1\"") && dom_text.contains("data-overflow=\"0\""),
        "the page's script ran, found the chart and no horizontal overflow at 1280 px: {dom_text}\n{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    // A screenshot: a PNG of the page as drawn.
    let png = dir.path().join("report.png");
    let shot = headless(
        browser,
        &dir.path().join("profile-shot"),
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1280,900".into(),
            "--hide-scrollbars".into(),
        ],
        &url,
    );
    let bytes = std::fs::read(&png).unwrap_or_else(|e| {
        panic!(
            "no screenshot ({e}): {}",
            String::from_utf8_lossy(&shot.stderr)
        )
    });
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    assert!(
        bytes.len() > 10_000,
        "a page, not a blank: {} bytes",
        bytes.len()
    );
    if let Ok(keep) = std::env::var("STRIDELINT_KEEP_SCREENSHOT") {
        std::fs::copy(&png, keep).unwrap();
    }
}

/// The page at 1280 px wide is no wider than the window, with every finding of the
/// repository's fixtures in it (long messages, code, paths outside the current directory,
/// which the page names from the directory they share).
#[test]
fn at_1280_px_the_report_of_many_findings_has_no_horizontal_overflow() {
    let Some(browser) = chromium() else {
        tool_support::missing("chromium", "is not installed", "Debian's chromium");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/python");
    let fixtures = fixtures.to_str().unwrap();
    let out = stridelint(
        dir.path(),
        &[
            "report", fixtures, "--dim", "B=16", "--dim", "T=4096", "-o", "r.html",
        ],
    );
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = dir.path().join("r.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.matches("<tr class=").count() > 50, "many findings");
    assert!(
        !html.contains(&format!("<h2>{fixtures}")),
        "paths named from the tree"
    );
    let dom = headless(
        browser,
        &dir.path().join("profile"),
        &["--dump-dom".into(), "--window-size=1280,900".into()],
        &format!("file://{}", page.display()),
    );
    let dom = String::from_utf8_lossy(&dom.stdout);
    let overflow = dom
        .split("data-overflow=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("the page's script measured the page: {dom}"));
    assert_eq!(overflow, "0", "pixels beyond the 1280 px window");
}
