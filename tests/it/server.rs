//! `stridelint server` driven by a client over its standard input and output, as an editor
//! drives it: initialize, didOpen, didChange, publishDiagnostics, hover, codeAction,
//! inlayHint, notebooks, configuration changes, a contained panic, shutdown.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const TIMEOUT: Duration = Duration::from_secs(60);

/// A language client: JSON-RPC frames over the server's pipes.
struct Client {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    /// Notifications received while waiting for something else.
    notifications: Vec<Value>,
    next_id: i64,
}

impl Client {
    /// Start the server in `dir` and initialize it with `init` as `initializationOptions`.
    fn start(dir: &Path, init: Value) -> Client {
        Self::start_with(dir, init, &[])
    }

    fn start_with(dir: &Path, init: Value, env: &[(&str, &str)]) -> Client {
        let mut command = Command::new(env!("CARGO_BIN_EXE_stridelint"));
        command
            .arg("server")
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("the server starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, incoming) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(n) = line.strip_prefix("Content-Length: ") {
                        length = n.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; length.expect("a Content-Length header")];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                let message: Value = serde_json::from_slice(&body).expect("JSON from the server");
                if tx.send(message).is_err() {
                    return;
                }
            }
        });
        let mut client = Client {
            child,
            stdin,
            incoming,
            notifications: Vec::new(),
            next_id: 0,
        };
        let root = url(dir);
        let result = client.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": root,
                "capabilities": {
                    "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}},
                    "textDocument": {"publishDiagnostics": {"relatedInformation": true}},
                },
                "initializationOptions": init,
            }),
        );
        let caps = &result["result"]["capabilities"];
        assert_eq!(caps["hoverProvider"], json!(true), "{result}");
        assert_eq!(
            caps["textDocumentSync"]["change"],
            json!(2),
            "incremental sync: {result}"
        );
        client.notify("initialized", json!({}));
        client
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Send a request and wait for its response (answering the server's own requests and
    /// keeping its notifications meanwhile).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait_for(|m| m.get("method").is_none() && m["id"] == json!(id))
    }

    fn wait_for(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.notifications.iter().position(&wanted) {
            return self.notifications.remove(i);
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .incoming
                .recv_timeout(left)
                .expect("the server answers in time");
            if wanted(&message) {
                return message;
            }
            if message.get("method").is_some() && message.get("id").is_some() {
                // A request of the server's (`client/registerCapability`): accept it.
                let id = message["id"].clone();
                self.send(json!({"jsonrpc": "2.0", "id": id, "result": null}));
            } else {
                self.notifications.push(message);
            }
        }
    }

    /// The next diagnostics published for `uri` (at `version`, when given).
    fn diagnostics(&mut self, uri: &str, version: Option<i64>) -> Vec<Value> {
        let uri = uri.to_string();
        let message = self.wait_for(|m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == json!(uri)
                && version.is_none_or(|v| m["params"]["version"] == json!(v))
        });
        message["params"]["diagnostics"].as_array().unwrap().clone()
    }

    fn open(&mut self, uri: &str, language: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
        );
    }

    fn shutdown(mut self) {
        let response = self.request("shutdown", json!(null));
        assert!(response.get("error").is_none(), "{response}");
        self.notify("exit", json!(null));
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "the server exits cleanly: {status}");
                return;
            }
            assert!(Instant::now() < deadline, "the server exits after `exit`");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn url(path: &Path) -> String {
    format!("file://{}", path.display())
}

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    std::fs::read_to_string(path).unwrap()
}

/// (0-based line, code) of each diagnostic.
fn codes(diagnostics: &[Value]) -> Vec<(u64, String)> {
    let mut out: Vec<(u64, String)> = diagnostics
        .iter()
        .map(|d| {
            (
                d["range"]["start"]["line"].as_u64().unwrap(),
                d["code"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// The position of the `n`th occurrence (0-based) of `needle` in `text`, plus `shift` characters.
fn position_of(text: &str, needle: &str, shift: usize) -> Value {
    let offset = text
        .find(needle)
        .unwrap_or_else(|| panic!("`{needle}` in the text"))
        + shift;
    let line = text[..offset].matches('\n').count();
    let column = offset - text[..offset].rfind('\n').map_or(0, |i| i + 1);
    json!({"line": line, "character": column})
}

const NANOGPT: &str = "fixtures/python/nanogpt_missing_contiguous.py";

/// A server in a new directory with the nanoGPT fixture open as `model.py` (a file that is
/// not on disk), its first diagnostics received: (directory, URI, text, client, diagnostics).
fn open_nanogpt(init: Value) -> (tempfile::TempDir, String, String, Client, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let uri = url(&dir.path().join("model.py"));
    let text = fixture(NANOGPT);
    let mut client = Client::start(dir.path(), init);
    client.open(&uri, "python", &text);
    let found = client.diagnostics(&uri, Some(1));
    (dir, uri, text, client, found)
}

#[test]
fn diagnostics_come_from_the_editors_text_and_follow_each_change() {
    // The file does not exist on disk: the editor's text is what is linted.
    let (_dir, uri, text, mut client, found) = open_nanogpt(json!({}));
    assert_eq!(
        codes(&found),
        vec![
            (30, "SL008".to_string()),
            (35, "SL001".to_string()),
            (42, "SL002".to_string())
        ],
        "{found:#?}"
    );
    let sl001 = found.iter().find(|d| d["code"] == "SL001").unwrap();
    assert_eq!(sl001["severity"], json!(1), "an error");
    assert_eq!(sl001["source"], json!("stridelint"));
    assert!(sl001["codeDescription"]["href"]
        .as_str()
        .unwrap()
        .ends_with("SL001.md"));
    assert!(
        sl001["message"]
            .as_str()
            .unwrap()
            .starts_with("`view` fails: dims 2 (n_head)"),
        "{sl001}"
    );
    assert!(
        sl001["message"]
            .as_str()
            .unwrap()
            .contains("\nhelp: call `.contiguous()`"),
        "{sl001}"
    );
    // The chain of steps, as related information: the matmul in `attend`, the transpose.
    let related = sl001["relatedInformation"].as_array().unwrap();
    assert_eq!(related.len(), 2, "{related:#?}");
    assert_eq!(related[0]["location"]["range"]["start"]["line"], json!(30));
    assert!(related[1]["message"]
        .as_str()
        .unwrap()
        .contains("`.transpose(1, 2)`"));

    // Typing `reshape` over `view`: the view error becomes a hidden copy.
    let view = position_of(&text, ".view(B, T, C)", 1);
    let end = json!({"line": view["line"], "character": view["character"].as_u64().unwrap() + 4});
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": {"start": view, "end": end}, "text": "reshape"}],
        }),
    );
    let found = client.diagnostics(&uri, Some(2));
    assert_eq!(
        codes(&found),
        vec![
            (30, "SL008".to_string()),
            (35, "SL002".to_string()),
            (42, "SL002".to_string())
        ],
        "{found:#?}"
    );
    // Closing clears them.
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    assert!(client.diagnostics(&uri, None).is_empty());
    client.shutdown();
}

#[test]
fn code_actions_offer_the_fix_the_suppression_and_fix_all() {
    let (_dir, uri, text, mut client, found) = open_nanogpt(json!({}));
    let sl001 = found.iter().find(|d| d["code"] == "SL001").unwrap().clone();
    let response = client.request(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": uri},
            "range": sl001["range"],
            "context": {"diagnostics": [sl001]},
        }),
    );
    let actions = response["result"].as_array().unwrap();
    let titles: Vec<&str> = actions
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert!(
        titles.iter().any(|t| t.starts_with("Fix SL001: ")),
        "{titles:?}"
    );
    assert!(
        titles
            .iter()
            .any(|t| t.starts_with("Fix SL001: ") && t.contains("(unsafe")),
        "{titles:?}"
    );
    assert!(
        titles.contains(&"Suppress SL001 on this line"),
        "{titles:?}"
    );
    // Applying the preferred fix removes the error.
    let fix = actions
        .iter()
        .find(|a| a["isPreferred"] == json!(true))
        .expect("a preferred (safe) fix");
    let edits = fix["edit"]["changes"][&uri].as_array().unwrap();
    let fixed = apply(&text, edits);
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": fixed}]}),
    );
    let after = client.diagnostics(&uri, Some(2));
    assert!(
        !codes(&after).iter().any(|(_, c)| c == "SL001"),
        "{after:#?}"
    );
    // The suppression comment hides it too.
    let suppress = actions
        .iter()
        .find(|a| a["title"] == "Suppress SL001 on this line")
        .unwrap();
    let suppressed = apply(&text, suppress["edit"]["changes"][&uri].as_array().unwrap());
    // The comment `--add-noqa` writes, on the finding's line.
    assert!(
        suppressed
            .contains("y = y.transpose(1, 2).view(B, T, C)  # expect: SL001  # noqa: SL001\n"),
        "{suppressed}"
    );
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": suppressed}]}),
    );
    let after = client.diagnostics(&uri, Some(3));
    assert_eq!(
        codes(&after),
        vec![(30, "SL008".to_string()), (42, "SL002".to_string())],
        "{after:#?}"
    );
    // "Fix all" asked for by kind, as an editor does on save.
    let response = client.request(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "context": {"diagnostics": [], "only": ["source.fixAll"]},
        }),
    );
    let actions = response["result"].as_array().unwrap();
    assert!(
        actions
            .iter()
            .all(|a| a["kind"] == "source.fixAll.stridelint"),
        "only the kind asked for: {actions:#?}"
    );
    client.shutdown();
}

/// Apply LSP text edits (non-overlapping) to `text`.
fn apply(text: &str, edits: &[Value]) -> String {
    let offset = |p: &Value| {
        let line = p["line"].as_u64().unwrap() as usize;
        let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        start + p["character"].as_u64().unwrap() as usize
    };
    let mut edits: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| {
            (
                offset(&e["range"]["start"]),
                offset(&e["range"]["end"]),
                e["newText"].as_str().unwrap(),
            )
        })
        .collect();
    edits.sort();
    let mut out = text.to_string();
    for (start, end, new) in edits.into_iter().rev() {
        out.replace_range(start..end, new);
    }
    out
}

fn hover_text(client: &mut Client, uri: &str, position: Value) -> Option<String> {
    let response = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": position}),
    );
    assert!(response.get("error").is_none(), "{response}");
    let result = &response["result"];
    (!result.is_null()).then(|| result["contents"]["value"].as_str().unwrap().to_string())
}

#[test]
fn hover_shows_the_layout_and_the_steps_that_made_it() {
    let (_dir, uri, text, mut client, _) = open_nanogpt(json!({}));
    // `y` where `y.transpose(1, 2).view(B, T, C)` reads it: the attention output.
    let y = position_of(&text, "y.transpose(1, 2).view", 0);
    let shown = hover_text(&mut client, &uri, y).expect("a hover on `y`");
    assert!(
        shown.starts_with("`y`: (B, n_head, T, n_embd/n_head) strides (T·n_embd, T·n_embd/n_head, n_embd/n_head, 1) offset 0, contiguous"),
        "{shown}"
    );
    assert!(
        shown.contains("How it got this layout:\n1. line 31: `att @ v`"),
        "{shown}"
    );
    // On `transpose`: the call's result, not contiguous.
    let transpose = position_of(&text, "transpose(1, 2).view", 2);
    let shown = hover_text(&mut client, &uri, transpose).unwrap();
    assert!(
        shown.starts_with("`y.transpose(1, 2)`: (B, T, n_head, n_embd/n_head)"),
        "{shown}"
    );
    assert!(shown.contains("not contiguous"), "{shown}");
    // A parameter whose sizes are never read: what the analysis assumes.
    let x = position_of(&text, "self.attend(x)", 12);
    let shown = hover_text(&mut client, &uri, x).unwrap();
    assert!(
        shown.starts_with("`x`: (B, T, C) strides (T·C, C, 1) offset 0, contiguous"),
        "{shown}"
    );
    // Not a tensor: no hover.
    let math = position_of(&text, "import math", 8);
    assert_eq!(hover_text(&mut client, &uri, math), None);
    // A value the analysis lost: the hover says why.
    let other =
        url(&std::path::PathBuf::from(uri.trim_start_matches("file://")).with_file_name("load.py"));
    let loading = "def f(x):\n    h = load_weights(x)\n    return h.view(-1)\n";
    client.open(&other, "python", loading);
    let shown = hover_text(&mut client, &other, json!({"line": 2, "character": 11})).unwrap();
    assert_eq!(
        shown,
        "`h`: unknown: input from a call the analysis cannot follow"
    );
    client.shutdown();
}

#[test]
fn inlay_hints_are_off_until_the_client_turns_them_on() {
    let whole = json!({"start": {"line": 0, "character": 0}, "end": {"line": 60, "character": 0}});
    let (_dir, uri, _, mut client, _) = open_nanogpt(json!({}));
    let response = client.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": uri}, "range": whole}),
    );
    assert_eq!(response["result"], json!([]), "off by default");
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"stridelint": {"inlayHints": true}}}),
    );
    let response = client.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": uri}, "range": whole}),
    );
    let hints = response["result"].as_array().unwrap();
    let on_line = |line: u64| -> Vec<&str> {
        hints
            .iter()
            .filter(|h| h["position"]["line"] == json!(line))
            .map(|h| h["label"].as_str().unwrap())
            .collect()
    };
    // `k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)`: after `k`.
    assert_eq!(
        on_line(25),
        vec![": (B, n_head, T, n_embd/n_head) strides (3·T·n_embd, n_embd/n_head, 3·n_embd, 1)"],
        "{hints:#?}"
    );
    assert_eq!(
        hints
            .iter()
            .find(|h| h["position"]["line"] == json!(25))
            .unwrap()["position"]["character"],
        json!(9)
    );
    // `att = F.softmax(att, dim=-1)`: contiguous, the shape only.
    assert_eq!(on_line(29), vec![": (B, n_head, T, T)"], "{hints:#?}");
    client.shutdown();
}

#[test]
fn the_closest_configuration_applies_and_its_changes_are_picked_up() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let config = sub.join("stridelint.toml");
    std::fs::write(&config, "ignore = [\"SL002\"]\n").unwrap();
    let uri = url(&sub.join("model.py"));
    let text = fixture(NANOGPT);
    let mut client = Client::start(dir.path(), json!({}));
    client.open(&uri, "python", &text);
    assert_eq!(
        codes(&client.diagnostics(&uri, Some(1))),
        vec![(30, "SL008".to_string()), (35, "SL001".to_string())]
    );
    std::fs::write(&config, "ignore = [\"SL001\"]\n").unwrap();
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": url(&config), "type": 2}]}),
    );
    assert_eq!(
        codes(&client.diagnostics(&uri, Some(1))),
        vec![(30, "SL008".to_string()), (42, "SL002".to_string())]
    );
    // A broken configuration is shown once, and the file is linted with the defaults.
    std::fs::write(&config, "selectt = []\n").unwrap();
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": url(&config), "type": 2}]}),
    );
    let shown = client.wait_for(|m| m["method"] == "window/showMessage");
    assert!(
        shown["params"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown field `selectt`"),
        "{shown}"
    );
    assert_eq!(codes(&client.diagnostics(&uri, Some(1))).len(), 3);
    client.shutdown();
}

#[test]
fn a_notebooks_findings_land_on_their_cells() {
    let dir = tempfile::tempdir().unwrap();
    let notebook = url(&dir.path().join("nb.ipynb"));
    let cell = |n: u32| format!("vscode-notebook-cell://{}#cell{n}", dir.path().display());
    let (first, second, third) = (cell(1), cell(2), cell(3));
    let mut client = Client::start(dir.path(), json!({}));
    client.notify(
        "notebookDocument/didOpen",
        json!({
            "notebookDocument": {
                "uri": notebook, "notebookType": "jupyter-notebook", "version": 1,
                "cells": [
                    {"kind": 2, "document": first},
                    {"kind": 1, "document": second},
                    {"kind": 2, "document": third},
                ],
            },
            "cellTextDocuments": [
                {"uri": first, "languageId": "python", "version": 1,
                 "text": "import torch\n%time x = torch.randn(4, 8, 16)\nx = torch.randn(4, 8, 16)\n"},
                {"uri": second, "languageId": "markdown", "version": 1, "text": "# Heads\n"},
                {"uri": third, "languageId": "python", "version": 1,
                 "text": "y = x.transpose(1, 2)\nz = y.view(4, -1)\n"},
            ],
        }),
    );
    let on_first = client.diagnostics(&first, None);
    assert!(on_first.is_empty(), "{on_first:#?}");
    let on_third = client.diagnostics(&third, None);
    assert_eq!(
        codes(&on_third),
        vec![(1, "SL001".to_string())],
        "{on_third:#?}"
    );
    // Hover in the third cell knows the first cell's tensor.
    let shown = hover_text(&mut client, &third, json!({"line": 0, "character": 0})).unwrap();
    assert!(
        shown.starts_with("`y`: (4, 16, 8) strides (128, 1, 16)"),
        "{shown}"
    );
    // An edit of the third cell re-lints.
    client.notify(
        "notebookDocument/didChange",
        json!({
            "notebookDocument": {"uri": notebook, "version": 2},
            "change": {"cells": {"textContent": [{
                "document": {"uri": third, "version": 2},
                "changes": [{"text": "y = x.transpose(1, 2)\nz = y.reshape(4, -1)\n"}],
            }]}},
        }),
    );
    // The reshape copies 2 KiB: under `hidden-copy-min-bytes`, as on the command line.
    let on_third = client.diagnostics(&third, Some(2));
    assert!(on_third.is_empty(), "{on_third:#?}");
    client.shutdown();
}

#[test]
fn a_panic_in_one_analysis_fails_that_request_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let broken = url(&dir.path().join("broken.py"));
    let fine = url(&dir.path().join("model.py"));
    let mut client = Client::start_with(
        dir.path(),
        json!({}),
        &[("STRIDELINT_DEBUG_PANIC_ON", "trigger-the-test-panic")],
    );
    client.open(
        &broken,
        "python",
        "import torch\n# trigger-the-test-panic\nx = torch.randn(2, 3)\n",
    );
    let shown = client.wait_for(|m| m["method"] == "window/showMessage");
    let message = shown["params"]["message"].as_str().unwrap();
    assert!(
        message.contains("the analysis of") && message.contains("broken.py"),
        "{message}"
    );
    let response = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": broken}, "position": {"line": 2, "character": 0}}),
    );
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("failed"),
        "{response}"
    );
    client.open(&fine, "python", &fixture(NANOGPT));
    assert_eq!(codes(&client.diagnostics(&fine, Some(1))).len(), 3);
    client.shutdown();
}

#[test]
fn exit_without_shutdown_ends_with_status_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = Client::start(dir.path(), json!({}));
    client.notify("exit", json!(null));
    let deadline = Instant::now() + TIMEOUT;
    loop {
        if let Some(status) = client.child.try_wait().unwrap() {
            assert_eq!(status.code(), Some(1), "LSP: 1 without a shutdown request");
            return;
        }
        assert!(Instant::now() < deadline, "the server exits on `exit`");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_rust_file_is_linted_as_rust() {
    let dir = tempfile::tempdir().unwrap();
    let uri = url(&dir.path().join("attention.rs"));
    let text = fixture("fixtures/rust/tch_attention.rs");
    let expected: Vec<(u64, String)> = text
        .lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let code = l.split("// expect: ").nth(1)?;
            Some((i as u64, code.trim().to_string()))
        })
        .collect();
    assert!(!expected.is_empty());
    let mut client = Client::start(dir.path(), json!({}));
    client.open(&uri, "rust", &text);
    let found = client.diagnostics(&uri, Some(1));
    let found: Vec<(u64, String)> = codes(&found);
    for e in &expected {
        assert!(found.contains(e), "{e:?} in {found:?}");
    }
    client.shutdown();
}
