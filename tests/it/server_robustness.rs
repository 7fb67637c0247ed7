//! `stridelint server` on bad input: malformed frames, a notebook edit out of range,
//! requests out of order or with wrong parameters, a panic in a handler, a burst of
//! changes, and random sessions (in-process and through the binary). None may end it.
//!
//! `STRIDELINT_LSP_FUZZ_SESSIONS=N` (default 1,000) and `STRIDELINT_LSP_FUZZ_SEED` set the
//! random sessions run in-process; `STRIDELINT_LSP_FUZZ_BINARY_SESSIONS=N` (default 24)
//! how many go through the binary.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Cursor, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stridelint::server::Ended;

const TIMEOUT: Duration = Duration::from_secs(60);
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const INTERNAL_ERROR: i64 = -32603;
const NOT_INITIALIZED: i64 = -32002;

const MODEL: &str =
    "import torch\ndef f(x):\n    B, T, C = x.size()\n    return x.transpose(1, 2).view(B, -1)\n";

fn frame(message: &Value) -> Vec<u8> {
    let body = message.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

fn raw_frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

fn request(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

fn initialize(id: i64) -> Value {
    request(
        id,
        "initialize",
        json!({"processId": null, "capabilities": {}}),
    )
}

fn did_open(uri: &str, text: &str) -> Value {
    notification(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
    )
}

/// A hover on `x.transpose` in [`MODEL`].
fn hover(id: impl Into<Value>, uri: &str) -> Value {
    request(
        id,
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 3, "character": 13}}),
    )
}

/// Every frame in `bytes` (what the server wrote), as JSON.
fn frames_in(bytes: &[u8]) -> Vec<Value> {
    let mut reader = BufReader::new(bytes);
    let mut out = Vec::new();
    while let Some(message) = read_frame(&mut reader) {
        out.push(message);
    }
    out
}

/// One frame the server wrote; None at the end of its output.
fn read_frame(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let value = line.strip_prefix("Content-Length: ").expect("a header");
        length = Some(value.parse::<usize>().expect("a length"));
    }
    let mut body = vec![0; length.expect("a Content-Length header")];
    reader.read_exact(&mut body).ok()?;
    Some(serde_json::from_slice(&body).expect("JSON from the server"))
}

/// The server as a process, driven with raw bytes.
struct Server {
    /// The server's working directory, with no configuration file.
    _dir: tempfile::TempDir,
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<Value>,
    /// Messages received while waiting for another.
    kept: Vec<Value>,
}

impl Server {
    fn start(env: &[(&str, &str)]) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_stridelint"));
        command
            .arg("server")
            .current_dir(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("the server starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, incoming) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_frame(&mut reader) {
                if tx.send(message).is_err() {
                    return;
                }
            }
        });
        Server {
            _dir: dir,
            child,
            stdin,
            incoming,
            kept: Vec::new(),
        }
    }

    /// Started, initialized, with [`MODEL`] open as `a.py`.
    fn ready(env: &[(&str, &str)]) -> Server {
        let mut server = Server::start(env);
        server.write(&frame(&initialize(1)));
        assert!(server.response(1).get("result").is_some());
        server.write(&frame(&notification("initialized", json!({}))));
        server.write(&frame(&did_open("file:///project/a.py", MODEL)));
        server
    }

    fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("the server reads");
        stdin.flush().unwrap();
    }

    fn wait_for(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.kept.iter().position(&wanted) {
            return self.kept.remove(i);
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self.incoming.recv_timeout(left).unwrap_or_else(|_| {
                let status = self.child.try_wait().unwrap();
                panic!("no answer in time; the server's exit status: {status:?}")
            });
            if wanted(&message) {
                return message;
            }
            self.kept.push(message);
        }
    }

    fn response(&mut self, id: impl Into<Value>) -> Value {
        let id = id.into();
        self.wait_for(|m| m.get("method").is_none() && m["id"] == id)
    }

    /// Send a request and return the code of the error it is answered with.
    fn error_code(&mut self, message: Value) -> i64 {
        let id = message["id"].clone();
        self.write(&frame(&message));
        let response = self.response(id);
        response["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("an error: {response}"))
    }

    /// The hover on [`MODEL`] is answered: the server still serves.
    fn assert_serving(&mut self, id: i64) {
        self.write(&frame(&hover(id, "file:///project/a.py")));
        let answer = self.response(id);
        let text = answer["result"]["contents"]["value"].as_str().unwrap_or("");
        assert!(text.contains("not contiguous"), "{answer}");
        assert!(self.child.try_wait().unwrap().is_none(), "still running");
    }

    fn close_and_wait(&mut self) -> ExitStatus {
        drop(self.stdin.take());
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the server ends with its input");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn shutdown_and_exit(mut self) {
        self.write(&frame(&request(9999, "shutdown", Value::Null)));
        assert_eq!(self.response(9999)["result"], Value::Null);
        self.write(&frame(&notification("exit", Value::Null)));
        let status = self.close_and_wait();
        assert_eq!(status.code(), Some(0), "shutdown then exit: status 0");
    }
}

/// Each bad frame of the reliability list, and a few more.
fn malformed_frames() -> Vec<(&'static str, Vec<u8>, i64)> {
    let lone_surrogate = br#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///project/b.py","languageId":"python","version":1,"text":"x = \ud800 y"}}}"#;
    let mut invalid_utf8 =
        br#"{"jsonrpc":"2.0","id":7,"method":"x","params":{"text":"x = "#.to_vec();
    invalid_utf8.extend_from_slice(b"\xff\"}}");
    vec![
        (
            "malformed-json",
            b"Content-Length: 10\r\n\r\n{not json}".to_vec(),
            PARSE_ERROR,
        ),
        (
            "bad-content-length",
            b"Content-Length: abc\r\n\r\n{}".to_vec(),
            PARSE_ERROR,
        ),
        (
            "no-header",
            b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"x\"}\r\n".to_vec(),
            PARSE_ERROR,
        ),
        ("invalid-utf8", raw_frame(&invalid_utf8), PARSE_ERROR),
        ("lone-surrogate", raw_frame(lone_surrogate), PARSE_ERROR),
        (
            "huge-content-length",
            b"Content-Length: 18446744073709551615\r\n\r\n{}".to_vec(),
            PARSE_ERROR,
        ),
        (
            "over-the-limit",
            b"Content-Length: 4000000000\r\n\r\n{}".to_vec(),
            PARSE_ERROR,
        ),
        (
            "no-content-length",
            b"Content-Type: x\r\n\r\n{}".to_vec(),
            PARSE_ERROR,
        ),
        ("not-a-message", raw_frame(b"{}"), INVALID_REQUEST),
        ("a-batch", raw_frame(b"[1, 2]"), INVALID_REQUEST),
        (
            "method-not-a-string",
            raw_frame(br#"{"jsonrpc":"2.0","id":3,"method":5}"#),
            INVALID_REQUEST,
        ),
        (
            "id-not-readable",
            raw_frame(br#"{"jsonrpc":"2.0","id":1.5,"method":"shutdown"}"#),
            INVALID_REQUEST,
        ),
    ]
}

#[test]
fn a_malformed_frame_is_answered_with_an_error_and_the_next_request_too() {
    for (name, bytes, code) in malformed_frames() {
        let mut server = Server::ready(&[]);
        server.write(&bytes);
        let error = server.wait_for(|m| m.get("error").is_some());
        assert_eq!(error["error"]["code"], json!(code), "{name}: {error}");
        if code == PARSE_ERROR {
            assert_eq!(error["id"], Value::Null, "{name}: {error}");
        }
        server.assert_serving(100);
        server.shutdown_and_exit();
    }
}

#[test]
fn garbage_without_a_line_break_before_a_frame_loses_only_itself() {
    let mut server = Server::ready(&[]);
    let mut bytes = b"{}".to_vec();
    bytes.extend(frame(&hover(5, "file:///project/a.py")));
    server.write(&bytes);
    let error = server.wait_for(|m| m.get("error").is_some());
    assert_eq!(error["error"]["code"], json!(PARSE_ERROR), "{error}");
    assert!(server.response(5)["result"].is_object());
    server.shutdown_and_exit();
}

#[test]
fn a_notebook_delete_count_that_wraps_is_cut_at_the_cell_list() {
    let mut server = Server::ready(&[]);
    let notebook = "file:///project/n.ipynb";
    let open = notification(
        "notebookDocument/didOpen",
        json!({
            "notebookDocument": {"uri": notebook, "notebookType": "jupyter-notebook", "version": 1,
                "cells": [{"kind": 2, "document": "cell:a"}, {"kind": 2, "document": "cell:b"}]},
            "cellTextDocuments": [
                {"uri": "cell:a", "languageId": "python", "version": 1, "text": "import torch\n"},
                {"uri": "cell:b", "languageId": "python", "version": 1, "text": "x = 1\n"},
            ],
        }),
    );
    let change = notification(
        "notebookDocument/didChange",
        json!({"notebookDocument": {"uri": notebook, "version": 2},
            "change": {"cells": {"structure": {"array": {"start": 1, "deleteCount": u64::MAX}}}}}),
    );
    server.write(&[frame(&open), frame(&change)].concat());
    server.assert_serving(2);
    // The cell list lost its second cell only: the first cell is still analysed.
    server.write(&frame(&request(
        3,
        "textDocument/hover",
        json!({"textDocument": {"uri": "cell:a"}, "position": {"line": 0, "character": 0}}),
    )));
    assert!(server.response(3).get("error").is_none());
    server.shutdown_and_exit();
}

#[test]
fn a_panic_in_a_notification_handler_is_logged_and_the_server_goes_on() {
    let mut server = Server::ready(&[("STRIDELINT_DEBUG_SERVER_PANIC", "textDocument/didSave")]);
    let save = json!({"textDocument": {"uri": "file:///project/a.py"}});
    server.write(&frame(&notification("textDocument/didSave", save)));
    let log = server.wait_for(|m| m["method"] == "window/logMessage");
    let message = log["params"]["message"].as_str().unwrap();
    assert!(
        message.contains("`textDocument/didSave` failed"),
        "{message}"
    );
    server.assert_serving(2);
    server.shutdown_and_exit();
}

#[test]
fn a_panic_in_a_request_handler_fails_that_request_and_the_server_goes_on() {
    let mut server = Server::ready(&[("STRIDELINT_DEBUG_SERVER_PANIC", "textDocument/inlayHint")]);
    let range = json!({"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}});
    let hints = request(
        2,
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": "file:///project/a.py"}, "range": range}),
    );
    assert_eq!(server.error_code(hints), INTERNAL_ERROR);
    server.assert_serving(3);
    server.shutdown_and_exit();
}

#[test]
fn requests_after_shutdown_are_refused_until_exit() {
    let mut server = Server::ready(&[]);
    server.write(&frame(&request(50, "shutdown", Value::Null)));
    assert_eq!(server.response(50)["result"], Value::Null);
    assert_eq!(
        server.error_code(hover(51, "file:///project/a.py")),
        INVALID_REQUEST
    );
    assert_eq!(
        server.error_code(request(52, "shutdown", Value::Null)),
        INVALID_REQUEST
    );
    server.write(&frame(&notification("exit", Value::Null)));
    assert_eq!(server.close_and_wait().code(), Some(0));
}

#[test]
fn requests_with_wrong_parameters_are_refused_and_the_server_goes_on() {
    let mut server = Server::start(&[]);
    let hover_a = |id: i64| hover(id, "file:///project/a.py");
    assert_eq!(server.error_code(hover_a(1)), NOT_INITIALIZED);
    assert_eq!(
        server.error_code(request(2, "initialize", json!(5))),
        INVALID_PARAMS
    );
    server.write(&frame(&initialize(3)));
    assert!(server.response(3).get("result").is_some());
    assert_eq!(server.error_code(initialize(4)), INVALID_REQUEST);
    server.write(&frame(&did_open("file:///project/a.py", MODEL)));
    let wrong = [
        ("textDocument/hover", json!(5)),
        ("textDocument/hover", json!({"textDocument": {"uri": 7}})),
        ("textDocument/codeAction", json!({"textDocument": {}})),
        ("textDocument/codeAction", json!([1, 2])),
        ("textDocument/inlayHint", Value::Null),
    ];
    for (i, (method, params)) in wrong.into_iter().enumerate() {
        let code = server.error_code(request(10 + i as i64, method, params));
        assert_eq!(code, INVALID_PARAMS, "{method}");
    }
    assert_eq!(
        server.error_code(request(20, "stridelint/nothing", json!({}))),
        METHOD_NOT_FOUND
    );
    // Notifications with wrong parameters are ignored.
    server.write(&frame(&notification("textDocument/didChange", json!(5))));
    server.write(&frame(&notification("notebookDocument/didOpen", json!([]))));
    server.assert_serving(21);
    server.shutdown_and_exit();
}

/// A Python file of about 100 KB: model functions one after another.
fn large_model() -> String {
    let mut text = String::from("import torch\n");
    let mut i = 0;
    while text.len() < 100_000 {
        text.push_str(&format!(
            "def block_{i}(x, w):\n    B, T, C = x.size()\n    y = x.transpose(1, 2)\n    z = y.view(B, -1)\n    return z @ w\n\n"
        ));
        i += 1;
    }
    text
}

#[test]
fn a_burst_of_changes_is_analysed_a_few_times_and_a_hover_waits_for_none() {
    let uri = "file:///project/large.py";
    let text = large_model();
    let mut server = Server::ready(&[]);
    server.write(&frame(&did_open(uri, &text)));
    let changes = 1000;
    for version in 2..=changes + 1 {
        let change = notification(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"text": format!("{text}# version {version}\n")}]}),
        );
        server.write(&frame(&change));
    }
    let sent = Instant::now();
    server.write(&frame(&request(
        7,
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 3, "character": 10}}),
    )));
    let answer = server.response(7);
    let waited = sent.elapsed();
    assert!(answer["result"].is_object(), "{answer}");
    let last = json!(changes + 1);
    server.wait_for(|m| m["params"]["uri"] == uri && m["params"]["version"] == last);
    let published = server
        .kept
        .iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri)
        .count()
        + 1;
    eprintln!("{changes} changes: {published} analyses published, hover answered in {waited:?}");
    assert!(published <= 10, "{published} analyses for one burst");
    assert!(
        waited < Duration::from_secs(1),
        "the hover waited {waited:?}"
    );
    server.shutdown_and_exit();
}

// ------------------------------------------------------------------ random sessions

/// SplitMix64: seeded, the same sessions on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }
}

const TEXTS: &[&str] = &[
    MODEL,
    "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        y = x.permute(0, 2, 1)\n        return y.reshape(4, -1).view(-1)\n",
    "x = 1\n",
    "",
    "def f(:\n    (((\n",
    "é😀\r\n\tx = torch.randn(2, 3).t().view(-1)\n",
    "%time x = 1\n!ls\nimport torch\ny = torch.zeros(2, 3).t().contiguous()\n",
    "fn main() { let t = Tensor::zeros(&[2, 3], (Kind::Float, Device::Cpu)); let u = t.transpose(0, 1).view([-1]); }\n",
];
const URIS: &[&str] = &[
    "file:///fuzz/a.py",
    "file:///fuzz/b.rs",
    "file:///fuzz/c.txt",
    "untitled:Untitled-1",
    "vscode-notebook-cell:/fuzz/n.ipynb#c0",
    "vscode-notebook-cell:/fuzz/n.ipynb#c1",
    "file:///fuzz/pyproject.toml",
];
const NOTEBOOK: &str = "file:///fuzz/n.ipynb";
const CELLS: &[&str] = &[
    "vscode-notebook-cell:/fuzz/n.ipynb#c0",
    "vscode-notebook-cell:/fuzz/n.ipynb#c1",
    "vscode-notebook-cell:/fuzz/n.ipynb#c2",
];

fn number(rng: &mut Rng) -> Value {
    rng.pick(&[
        json!(0),
        json!(1),
        json!(2),
        json!(3),
        json!(7),
        json!(100),
        json!(u32::MAX),
        json!(u64::MAX),
        json!(-1),
        json!(1.5),
    ])
}

fn position(rng: &mut Rng) -> Value {
    json!({"line": number(rng), "character": number(rng)})
}

fn text(rng: &mut Rng) -> String {
    let mut text = rng.pick(TEXTS).to_string();
    if rng.chance(30) && !text.is_empty() {
        let mut cut = rng.below(text.len());
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    if rng.chance(20) {
        text.push_str(rng.pick(&["\u{0}", "\\", "\"\"\"", "😀", "\r", "(", "\t  x"]));
    }
    text
}

/// Parameters of any shape: mostly right, sometimes not.
fn wrong_params(rng: &mut Rng) -> Value {
    rng.pick(&[
        Value::Null,
        json!(5),
        json!("x"),
        json!([]),
        json!({}),
        json!({"textDocument": 5}),
        json!({"textDocument": {"uri": "not a uri"}, "position": {"line": 0, "character": 0}}),
        json!({"textDocument": {"uri": URIS[0]}, "position": "here"}),
    ])
}

fn document_params(rng: &mut Rng, uri: &str) -> Value {
    let start = position(rng);
    let end = position(rng);
    json!({
        "textDocument": {"uri": uri},
        "position": position(rng),
        "range": {"start": start, "end": end},
        "context": {"diagnostics": [], "only": rng.pick(&[json!(null), json!(["quickfix"]), json!(["source.fixAll.stridelint"])])},
    })
}

fn document_event(rng: &mut Rng) -> Value {
    let uri = rng.pick(URIS);
    let version = number(rng);
    match rng.below(5) {
        0 | 1 => notification(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": rng.pick(&["python", "rust", "plaintext"]), "version": version, "text": text(rng)}}),
        ),
        2 => {
            let range = match rng.chance(40) {
                true => Value::Null,
                false => json!({"start": position(rng), "end": position(rng)}),
            };
            let change = match range {
                Value::Null => json!({"text": text(rng)}),
                range => json!({"range": range, "text": text(rng)}),
            };
            notification(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}),
            )
        }
        3 => notification(
            "textDocument/didSave",
            json!({"textDocument": {"uri": uri}}),
        ),
        _ => notification(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        ),
    }
}

fn cell(rng: &mut Rng) -> Value {
    json!({"kind": rng.pick(&[1, 2, 2]), "document": rng.pick(CELLS)})
}

fn notebook_event(rng: &mut Rng) -> Value {
    let cells: Vec<Value> = (0..rng.below(4)).map(|_| cell(rng)).collect();
    let items: Vec<Value> = (0..rng.below(3))
        .map(|_| json!({"uri": rng.pick(CELLS), "languageId": "python", "version": 1, "text": text(rng)}))
        .collect();
    match rng.below(4) {
        0 => notification(
            "notebookDocument/didOpen",
            json!({"notebookDocument": {"uri": NOTEBOOK, "notebookType": "jupyter-notebook", "version": 1, "cells": cells}, "cellTextDocuments": items}),
        ),
        1 | 2 => {
            let change = json!({"document": {"uri": rng.pick(CELLS), "version": 2},
                "changes": [{"range": {"start": position(rng), "end": position(rng)}, "text": text(rng)}]});
            notification(
                "notebookDocument/didChange",
                json!({"notebookDocument": {"uri": NOTEBOOK, "version": number(rng)}, "change": {"cells": {
                    "structure": {"array": {"start": number(rng), "deleteCount": number(rng), "cells": cells},
                        "didOpen": items, "didClose": [{"uri": rng.pick(CELLS)}]},
                    "textContent": [change]}}}),
            )
        }
        _ => notification(
            rng.pick(&["notebookDocument/didClose", "notebookDocument/didSave"]),
            json!({"notebookDocument": {"uri": NOTEBOOK}}),
        ),
    }
}

/// Bytes that are not a well-formed message; none claims more bytes than it has, so the
/// frames after it are read.
fn malformed(rng: &mut Rng) -> Vec<u8> {
    let mut garbage = rng.pick(&malformed_frames()).1;
    match rng.below(4) {
        0 => {
            let noise: Vec<u8> = (0..rng.below(40)).map(|_| rng.next() as u8).collect();
            garbage = noise;
        }
        1 => {
            let body = frame(&document_event(rng));
            let short = rng.below(body.len());
            garbage = raw_frame(&body[..short]);
        }
        _ => {}
    }
    if rng.chance(50) {
        garbage.extend_from_slice(b"\r\n");
    }
    garbage
}

/// One piece of a session's input: bytes, or a pause long enough for the server to
/// analyse what it has.
enum Chunk {
    Bytes(Vec<u8>),
    Pause,
}

/// A random session, and what the server must have done by its end.
struct Session {
    chunks: Vec<Chunk>,
    /// The request that must be answered ("final"), when the session sends it.
    final_request: bool,
    /// The session ends with `exit` (else with the end of its input).
    exits: bool,
    shutdown_ids: Vec<String>,
}

fn random_session(seed: u64) -> Session {
    let mut rng = Rng(seed);
    let mut session = Session {
        chunks: Vec::new(),
        final_request: false,
        exits: false,
        shutdown_ids: Vec::new(),
    };
    if rng.chance(10) {
        session.push(frame(&hover("early", URIS[0])));
    }
    if rng.chance(10) {
        session.push(frame(&request(
            "bad-init",
            "initialize",
            wrong_params(&mut rng),
        )));
    }
    if rng.chance(95) {
        let encodings = rng.pick(&[json!(["utf-8"]), json!(["utf-16"]), json!(null)]);
        let capabilities = json!({"general": {"positionEncodings": encodings},
            "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": rng.chance(50)}}});
        let options = rng.pick(&[json!(null), json!({"inlayHints": true}), json!(5)]);
        session.push(frame(&request("init", "initialize", json!({"processId": null, "capabilities": capabilities, "initializationOptions": options}))));
        session.push(frame(&notification("initialized", json!({}))));
    }
    for step in 0..5 + rng.below(25) {
        let id = format!("r{step}");
        let bytes = match rng.below(20) {
            0..=5 => frame(&document_event(&mut rng)),
            6..=8 => frame(&notebook_event(&mut rng)),
            9..=11 => {
                let method = rng.pick(&[
                    "textDocument/hover",
                    "textDocument/codeAction",
                    "textDocument/inlayHint",
                ]);
                let uri = rng.pick(URIS);
                let params = match rng.chance(80) {
                    true => document_params(&mut rng, uri),
                    false => wrong_params(&mut rng),
                };
                frame(&request(id, method, params))
            }
            12..=14 => malformed(&mut rng),
            15 => {
                let settings = rng.pick(&[
                    json!({"stridelint": {"inlayHints": true}}),
                    json!(7),
                    json!({"inlayHints": "yes"}),
                ]);
                frame(&notification(
                    "workspace/didChangeConfiguration",
                    json!({"settings": settings}),
                ))
            }
            16 => frame(&notification(
                "workspace/didChangeWatchedFiles",
                json!({"changes": [{"uri": rng.pick(URIS), "type": 2}]}),
            )),
            17 => {
                let method = rng.pick(&[
                    "$/cancelRequest",
                    "$/setTrace",
                    "workspace/symbol",
                    "initialize",
                ]);
                match rng.chance(50) {
                    true => frame(&request(id, method, wrong_params(&mut rng))),
                    false => frame(&notification(method, wrong_params(&mut rng))),
                }
            }
            18 if rng.chance(20) => {
                session.shutdown_ids.push(id.clone());
                frame(&request(id, "shutdown", Value::Null))
            }
            19 if rng.chance(50) => {
                session.chunks.push(Chunk::Pause);
                continue;
            }
            _ => continue,
        };
        session.push(bytes);
    }
    match rng.below(5) {
        0 | 1 => {
            session.final_request = true;
            session.push(frame(&hover("final", URIS[0])));
            session.shutdown_ids.push("end".into());
            session.push(frame(&request("end", "shutdown", Value::Null)));
            session.push(frame(&notification("exit", Value::Null)));
            session.exits = true;
        }
        2 => {
            session.push(frame(&notification("exit", Value::Null)));
            session.exits = true;
        }
        3 => {
            // The input ends inside a frame.
            let mut bytes = frame(&document_event(&mut rng));
            bytes.truncate(rng.below(bytes.len()));
            session.push(bytes);
        }
        _ => {}
    }
    session
}

impl Session {
    fn push(&mut self, bytes: Vec<u8>) {
        self.chunks.push(Chunk::Bytes(bytes));
    }

    /// What the server wrote is well-formed, answers each request at most once, and
    /// answers the final request; `ended` is how such a session ends.
    fn check(&self, output: Vec<Value>, ended: Option<Ended>) -> Result<(), String> {
        let mut answers: HashMap<String, Value> = HashMap::new();
        for message in output {
            if message.get("method").is_some() {
                continue;
            }
            // The session's own requests have string ids (a malformed frame's are numbers).
            let Some(id) = message["id"].as_str().map(str::to_string) else {
                continue;
            };
            if answers.insert(id.clone(), message).is_some() {
                return Err(format!("request {id} answered twice"));
            }
        }
        if self.final_request && !answers.contains_key("final") {
            return Err("the final request is not answered".into());
        }
        let shut_down = self
            .shutdown_ids
            .iter()
            .any(|id| answers.get(id).is_some_and(|a| a.get("result").is_some()));
        let expected = match self.exits && shut_down {
            true => Ended::Shutdown,
            false => Ended::Abandoned,
        };
        match ended {
            Some(ended) if ended == expected => Ok(()),
            other => Err(format!("ended {other:?}, expected {expected:?}")),
        }
    }
}

/// A session's input as the server reads it in-process: its chunks, pausing where asked.
struct ChunkReader {
    chunks: VecDeque<Chunk>,
    current: Cursor<Vec<u8>>,
}

impl Read for ChunkReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let n = self.current.read(buf)?;
            if n > 0 {
                return Ok(n);
            }
            match self.chunks.pop_front() {
                None => return Ok(0),
                Some(Chunk::Pause) => std::thread::sleep(Duration::from_millis(15)),
                Some(Chunk::Bytes(bytes)) => self.current = Cursor::new(bytes),
            }
        }
    }
}

/// The server's output, shared with the test.
#[derive(Clone, Default)]
struct SharedOutput(Arc<Mutex<Vec<u8>>>);

impl Write for SharedOutput {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn run_in_process(seed: u64) -> Result<(), String> {
    let session = random_session(seed);
    let chunks: VecDeque<Chunk> = session
        .chunks
        .iter()
        .map(|c| match c {
            Chunk::Bytes(b) => Chunk::Bytes(b.clone()),
            Chunk::Pause => Chunk::Pause,
        })
        .collect();
    let input = ChunkReader {
        chunks,
        current: Cursor::new(Vec::new()),
    };
    let output = SharedOutput::default();
    let ended = std::panic::catch_unwind(|| stridelint::server::serve(input, output.clone()))
        .map_err(|_| "the server panicked".to_string())?
        .map_err(|e| format!("the server failed: {e:#}"))?;
    let written = output.0.lock().unwrap().clone();
    session.check(frames_in(&written), Some(ended))
}

fn run_binary(seed: u64) -> Result<(), String> {
    let session = random_session(seed);
    let mut server = Server::start(&[]);
    let mut stdin = server.stdin.take().unwrap();
    for chunk in &session.chunks {
        match chunk {
            // A server that ended early closed its input: what is left is not read.
            Chunk::Bytes(bytes) => {
                if stdin.write_all(bytes).is_err() {
                    break;
                }
            }
            Chunk::Pause => std::thread::sleep(Duration::from_millis(15)),
        }
    }
    drop(stdin);
    let status = server.close_and_wait();
    // The server's output ended with it: the reader thread has it all, or will soon.
    let output: Vec<Value> = server.incoming.iter().collect();
    let ended = match status.code() {
        Some(0) => Some(Ended::Shutdown),
        Some(1) => Some(Ended::Abandoned),
        _ => None,
    };
    session
        .check(output, ended)
        .map_err(|e| format!("{e} (exit status {status})"))
}

fn fuzz_settings() -> (u64, usize) {
    let read = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let seed = read("STRIDELINT_LSP_FUZZ_SEED").unwrap_or(0x5EED_1234);
    let sessions = read("STRIDELINT_LSP_FUZZ_SESSIONS").unwrap_or(1000) as usize;
    (seed, sessions)
}

#[test]
fn random_sessions_in_process_never_end_the_server() {
    let (seed, sessions) = fuzz_settings();
    let started = Instant::now();
    let threads = 4;
    let failures: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    (t..sessions)
                        .step_by(threads)
                        .filter_map(|i| {
                            let seed = seed.wrapping_add(i as u64);
                            run_in_process(seed)
                                .err()
                                .map(|e| format!("seed {seed}: {e}"))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    eprintln!(
        "{sessions} random LSP sessions in-process: {} failed, {:.1} s",
        failures.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn random_sessions_through_the_binary_never_end_it() {
    let (seed, _) = fuzz_settings();
    let sessions = std::env::var("STRIDELINT_LSP_FUZZ_BINARY_SESSIONS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(24);
    let failures: Vec<String> = (0..sessions)
        .map(|i| seed.wrapping_add(1_000_000 + i))
        .filter_map(|seed| run_binary(seed).err().map(|e| format!("seed {seed}: {e}")))
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}
