//! `stridelint server`: a Language Server over standard input and output.
//!
//! - Diagnostics on open, change and save, from the editor's text (no save needed), with
//!   the CLI's codes, severities and messages; the chain of earlier steps is related
//!   information. The configuration closest to the file applies; a change to a
//!   configuration file is picked up.
//! - Code actions: each finding's fix, "suppress on this line", "fix all safe fixes".
//! - Hover: the layout of the tensor under the cursor (a name, `self.x`, a call's result)
//!   and the steps that made it so, or why it is unknown.
//! - Inlay hints (off unless the client asks, `initializationOptions.inlayHints`): the
//!   shape of each tensor a statement binds, and its strides where it is not contiguous.
//!
//! Only the changed file is analysed again, plus the open files whose analysis read it
//! (`follow-imports`). A burst of changes is analysed once it pauses (see [`SETTLE`]);
//! a request is answered from the latest text without waiting for pending analyses.
//!
//! Bad input never ends the server: a frame that cannot be read is answered with
//! ParseError, a value that is not a message with InvalidRequest ([`transport`]), wrong
//! parameters with InvalidParams, a request before `initialize` with
//! ServerNotInitialized and one after `shutdown` with InvalidRequest. Every handler runs
//! under a panic guard: a panic fails that request (InternalError) or is reported in
//! `window/logMessage`, and the server goes on.
//!
//! Modules: [`transport`] (the frames on the wire), [`positions`] (offsets and LSP
//! positions), [`text_map`] (a notebook's cells as one text), [`diagnostics`],
//! [`actions`], [`hover`] (hover and inlay hints), [`notebook`] (the notebook messages),
//! [`state`] (documents and their analyses).

mod actions;
mod diagnostics;
mod hover;
mod notebook;
mod positions;
mod state;
mod text_map;
mod transport;

use std::io::{Read, Write};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{self as notif, Notification as _};
use lsp_types::request::{self as req, Request as _};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, HoverProviderCapability,
    InitializeParams, LogMessageParams, MessageType, OneOf, PositionEncodingKind, SaveOptions,
    ServerCapabilities, ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind,
    TextDocumentSyncOptions, TextDocumentSyncSaveOptions,
};

use positions::Encoding;
use state::{Options, State};
use transport::{Incoming, Outgoing, Transport};

/// How a session ended. LSP wants exit status 0 only after `shutdown` then `exit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// `shutdown`, then `exit`.
    Shutdown,
    /// `exit` without `shutdown` first, or the client closed the connection.
    Abandoned,
}

/// Two messages less than this apart with no analysis between them make a burst (a
/// paste, a formatter, a client replaying edits): the analysis waits until the connection
/// has been quiet this long, so that the burst is analysed once. A change after an
/// analysis, or after a pause, is analysed at once.
const SETTLE: Duration = Duration::from_millis(10);
/// The longest a stream of rapid changes holds back diagnostics.
const MAX_SETTLE: Duration = Duration::from_millis(500);

/// Run the server on standard input and output until the client asks it to exit.
pub fn run() -> anyhow::Result<Ended> {
    serve(std::io::stdin(), std::io::stdout())
}

/// The whole session: LSP frames read from `input`, answered on `output` (also in-memory
/// streams, in the tests).
pub fn serve(
    input: impl Read + Send + 'static,
    output: impl Write + Send + 'static,
) -> anyhow::Result<Ended> {
    let Transport {
        incoming,
        outgoing,
        writer,
    } = transport::start(input, output);
    let mut session = Session {
        outgoing,
        state: None,
        watch_files: false,
        shut_down: false,
    };
    let ended = session.run(&incoming);
    // The writer ends once it wrote everything the session's senders sent.
    drop(session);
    writer
        .join()
        .map_err(|_| anyhow::anyhow!("the thread writing to the client failed"))?;
    Ok(ended)
}

/// One client's session: LSP's lifecycle (initialize, shutdown, exit) around the state.
struct Session {
    outgoing: Sender<Outgoing>,
    /// Made by `initialize`; until then requests are refused.
    state: Option<State>,
    /// Ask for the configuration files' changes once the client says it is `initialized`.
    watch_files: bool,
    shut_down: bool,
}

impl Session {
    fn run(&mut self, incoming: &Receiver<Incoming>) -> Ended {
        // When the last message arrived, since the last analysis.
        let mut last_arrival: Option<Instant> = None;
        let mut settling_since: Option<Instant> = None;
        loop {
            let received = match self.patience(settling_since) {
                None => incoming.recv().map_err(|_| RecvTimeoutError::Disconnected),
                Some(wait) => incoming.recv_timeout(wait),
            };
            match received {
                Ok(frame) => {
                    let now = Instant::now();
                    let rapid = last_arrival.is_some_and(|last| now - last < SETTLE);
                    last_arrival = Some(now);
                    if let Some(ended) = self.handle(frame) {
                        return ended;
                    }
                    if rapid && self.has_pending() {
                        settling_since.get_or_insert(now);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.analyse_pending();
                    (last_arrival, settling_since) = (None, None);
                }
                Err(RecvTimeoutError::Disconnected) => return Ended::Abandoned,
            }
        }
    }

    /// How long to wait for a message before analysing what changed: no limit when
    /// nothing did; none when no burst is under way (what already waits is handled
    /// first all the same); during a burst, until it pauses.
    fn patience(&self, settling_since: Option<Instant>) -> Option<Duration> {
        if !self.has_pending() {
            return None;
        }
        Some(match settling_since {
            Some(since) => SETTLE.min(MAX_SETTLE.saturating_sub(since.elapsed())),
            None => Duration::ZERO,
        })
    }

    fn has_pending(&self) -> bool {
        !self.shut_down && self.state.as_ref().is_some_and(State::has_dirty)
    }

    /// Handle one frame; `Some` when the session ends.
    fn handle(&mut self, frame: Incoming) -> Option<Ended> {
        match frame {
            Incoming::Invalid(rejection) => {
                // Also in the editor's log of the server, for whoever debugs the client.
                eprintln!("stridelint server: rejected a frame: {}", rejection.message);
                self.send(Outgoing::Rejection(rejection));
            }
            Incoming::Message(Message::Request(request)) => self.on_request(request),
            Incoming::Message(Message::Notification(n)) if n.method == notif::Exit::METHOD => {
                return Some(match self.shut_down {
                    true => Ended::Shutdown,
                    false => Ended::Abandoned,
                });
            }
            Incoming::Message(Message::Notification(n)) => self.on_notification(n),
            // Answers to our own requests (registering the file watchers).
            Incoming::Message(Message::Response(_)) => {}
        }
        None
    }

    fn on_request(&mut self, request: Request) {
        let id = request.id.clone();
        let method = request.method.clone();
        let result = guarded(|| self.answer(request)).unwrap_or_else(|why| {
            Err(Failure::new(
                ErrorCode::InternalError,
                format!("stridelint: `{method}` failed (a bug: please report it): {why}"),
            ))
        });
        self.send(Message::Response(respond(id, result)));
    }

    fn answer(&mut self, request: Request) -> Result<serde_json::Value, Failure> {
        debug_panic(&request.method);
        if self.shut_down {
            return Err(Failure::new(
                ErrorCode::InvalidRequest,
                format!(
                    "`{}` after `shutdown`: only `exit` is expected",
                    request.method
                ),
            ));
        }
        let Some(state) = &mut self.state else {
            return match request.method.as_str() {
                req::Initialize::METHOD => self.initialize(request.params),
                method => Err(Failure::new(
                    ErrorCode::ServerNotInitialized,
                    format!("`{method}` before `initialize`"),
                )),
            };
        };
        match request.method.as_str() {
            req::Initialize::METHOD => Err(Failure::new(
                ErrorCode::InvalidRequest,
                "the server is already initialized".into(),
            )),
            req::Shutdown::METHOD => {
                self.shut_down = true;
                Ok(serde_json::Value::Null)
            }
            _ => handle_request(state, request),
        }
    }

    /// Answer `initialize`; parameters that are not `InitializeParams` are refused and the
    /// client may try again.
    fn initialize(&mut self, params: serde_json::Value) -> Result<serde_json::Value, Failure> {
        let params: InitializeParams = serde_json::from_value(params).map_err(|e| {
            Failure::new(
                ErrorCode::InvalidParams,
                format!("invalid initialize parameters: {e}"),
            )
        })?;
        let encoding = negotiate_encoding(&params);
        let options = Options::from_json(params.initialization_options.as_ref());
        let mut capabilities = state::json(capabilities(encoding));
        // lsp-types 0.95 predates notebooks: their sync option is added as JSON.
        capabilities["notebookDocumentSync"] = notebook::sync_options();
        self.watch_files = watches_files_dynamically(&params);
        self.state = Some(State::new(self.outgoing.clone(), encoding, options));
        Ok(serde_json::json!({
            "capabilities": capabilities,
            "serverInfo": ServerInfo {
                name: "stridelint".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            },
        }))
    }

    fn on_notification(&mut self, n: Notification) {
        let method = n.method.clone();
        if let Err(why) = guarded(|| self.notified(n)) {
            self.log_error(format!(
                "stridelint: handling `{method}` failed (a bug: please report it): {why}"
            ));
        }
    }

    /// A notification: before `initialize` and after `shutdown` only `exit` counts.
    fn notified(&mut self, n: Notification) {
        debug_panic(&n.method);
        let Some(state) = self.state.as_mut().filter(|_| !self.shut_down) else {
            return;
        };
        if n.method == notif::Initialized::METHOD {
            if std::mem::take(&mut self.watch_files) {
                state.watch_configuration_files();
            }
            return;
        }
        handle_notification(state, n);
    }

    fn analyse_pending(&mut self) {
        let Some(state) = &mut self.state else {
            return;
        };
        if let Err(why) = guarded(|| state.publish_dirty()) {
            self.log_error(format!(
                "stridelint: publishing diagnostics failed (a bug: please report it): {why}"
            ));
        }
    }

    fn log_error(&self, message: String) {
        let params = LogMessageParams {
            typ: MessageType::ERROR,
            message,
        };
        let n = Notification::new(notif::LogMessage::METHOD.into(), params);
        self.send(Message::Notification(n));
    }

    fn send(&self, item: impl Into<Outgoing>) {
        // A client that stopped reading is noticed when its input ends.
        let _ = self.outgoing.send(item.into());
    }
}

/// Run `work`; a panic becomes its message, so that a bug in one handler fails that
/// message only and the server goes on.
fn guarded<T>(work: impl FnOnce() -> T) -> Result<T, String> {
    crate::contain::catching(work).map_err(|panic| panic.message)
}

/// `STRIDELINT_DEBUG_SERVER_PANIC=METHOD`: handling a message of METHOD panics, for the
/// tests that a bug in one handler is contained.
fn debug_panic(method: &str) {
    static PANIC_ON: OnceLock<Option<String>> = OnceLock::new();
    let panic_on = PANIC_ON.get_or_init(|| std::env::var("STRIDELINT_DEBUG_SERVER_PANIC").ok());
    if panic_on.as_deref() == Some(method) {
        panic!("STRIDELINT_DEBUG_SERVER_PANIC: `{method}`");
    }
}

fn negotiate_encoding(params: &InitializeParams) -> Encoding {
    let offered = params
        .capabilities
        .general
        .as_ref()
        .and_then(|g| g.position_encodings.as_ref());
    match offered {
        Some(kinds) if kinds.contains(&PositionEncodingKind::UTF8) => Encoding::Utf8,
        _ => Encoding::Utf16,
    }
}

fn watches_files_dynamically(params: &InitializeParams) -> bool {
    params
        .capabilities
        .workspace
        .as_ref()
        .and_then(|w| w.did_change_watched_files.as_ref())
        .and_then(|d| d.dynamic_registration)
        .unwrap_or(false)
}

fn capabilities(encoding: Encoding) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(match encoding {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        }),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                will_save: None,
                will_save_wait_until: None,
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                    include_text: Some(false),
                })),
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX, actions::fix_all_kind()]),
            work_done_progress_options: Default::default(),
            resolve_provider: None,
        })),
        inlay_hint_provider: Some(OneOf::Left(true)),
        ..Default::default()
    }
}

fn handle_request(state: &mut State, request: Request) -> Result<serde_json::Value, Failure> {
    match request.method.as_str() {
        req::HoverRequest::METHOD => {
            parse::<req::HoverRequest>(request).and_then(|p| state.hover(p))
        }
        req::CodeActionRequest::METHOD => {
            parse::<req::CodeActionRequest>(request).and_then(|p| state.code_actions(p))
        }
        req::InlayHintRequest::METHOD => {
            parse::<req::InlayHintRequest>(request).and_then(|p| state.inlay_hints(p))
        }
        method => Err(Failure::new(
            ErrorCode::MethodNotFound,
            format!("stridelint does not answer `{method}`"),
        )),
    }
}

fn respond(id: RequestId, result: Result<serde_json::Value, Failure>) -> Response {
    match result {
        Ok(value) => Response::new_ok(id, value),
        Err(f) => Response::new_err(id, f.code as i32, f.message),
    }
}

/// A request that fails, with the reason the client shows.
pub struct Failure {
    code: ErrorCode,
    message: String,
}

impl Failure {
    fn new(code: ErrorCode, message: String) -> Self {
        Failure { code, message }
    }
}

fn parse<R: req::Request>(request: Request) -> Result<R::Params, Failure> {
    serde_json::from_value(request.params)
        .map_err(|e| Failure::new(ErrorCode::InvalidParams, format!("invalid parameters: {e}")))
}

fn handle_notification(state: &mut State, n: Notification) {
    fn params<N: notif::Notification>(n: Notification) -> Option<N::Params> {
        match serde_json::from_value(n.params) {
            Ok(p) => Some(p),
            Err(e) => {
                eprintln!("stridelint server: ignoring `{}`: {e}", N::METHOD);
                None
            }
        }
    }
    match n.method.as_str() {
        notif::DidOpenTextDocument::METHOD => {
            if let Some(p) = params::<notif::DidOpenTextDocument>(n) {
                state.open(p.text_document);
            }
        }
        notif::DidChangeTextDocument::METHOD => {
            if let Some(p) = params::<notif::DidChangeTextDocument>(n) {
                state.change(p.text_document, p.content_changes);
            }
        }
        notif::DidSaveTextDocument::METHOD => {
            if let Some(p) = params::<notif::DidSaveTextDocument>(n) {
                state.saved(&p.text_document.uri);
            }
        }
        notif::DidCloseTextDocument::METHOD => {
            if let Some(p) = params::<notif::DidCloseTextDocument>(n) {
                state.close(&p.text_document.uri);
            }
        }
        notif::DidChangeConfiguration::METHOD => {
            if let Some(p) = params::<notif::DidChangeConfiguration>(n) {
                state.configure(&p.settings);
            }
        }
        notif::DidChangeWatchedFiles::METHOD => {
            if let Some(p) = params::<notif::DidChangeWatchedFiles>(n) {
                for change in p.changes {
                    state.saved(&change.uri);
                }
            }
        }
        method if notebook::handles(method) => notebook::handle(state, method, n.params),
        // `$/cancelRequest`, `$/setTrace`, …: nothing to do (requests are answered in order).
        _ => {}
    }
}
