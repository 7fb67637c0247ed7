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
//! (`follow-imports`). Changes arriving together are analysed once. A panic in the
//! analysis of one file fails that request (or that file's diagnostics) with a message;
//! the server goes on.
//!
//! Modules: [`positions`] (offsets and LSP positions), [`text_map`] (a notebook's cells
//! as one text), [`diagnostics`], [`actions`], [`hover`] (hover and inlay hints),
//! [`notebook`] (the notebook messages), [`state`] (documents and their analyses).

mod actions;
mod diagnostics;
mod hover;
mod notebook;
mod positions;
mod state;
mod text_map;

use anyhow::Context;
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{self as notif, Notification as _};
use lsp_types::request::{self as req, Request as _};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, HoverProviderCapability,
    InitializeParams, OneOf, PositionEncodingKind, SaveOptions, ServerCapabilities, ServerInfo,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions,
};

use positions::Encoding;
use state::{Options, State};

/// How a session ended. LSP wants exit status 0 only after `shutdown` then `exit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// `shutdown`, then `exit`.
    Shutdown,
    /// `exit` without `shutdown` first, or the client closed the connection.
    Abandoned,
}

/// Run the server on standard input and output until the client asks it to exit.
pub fn run() -> anyhow::Result<Ended> {
    let (connection, io_threads) = Connection::stdio();
    let ended = serve(&connection)?;
    drop(connection);
    io_threads
        .join()
        .context("the connection's threads failed")?;
    Ok(ended)
}

/// The whole session on `connection` (also an in-memory one, in the tests).
pub fn serve(connection: &Connection) -> anyhow::Result<Ended> {
    let (id, params) = connection.initialize_start()?;
    let params: InitializeParams =
        serde_json::from_value(params).context("invalid initialize parameters")?;
    let encoding = negotiate_encoding(&params);
    let options = Options::from_json(params.initialization_options.as_ref());
    let mut capabilities = serde_json::to_value(capabilities(encoding))?;
    // lsp-types 0.95 predates notebooks: their sync option is added as JSON.
    capabilities["notebookDocumentSync"] = notebook::sync_options();
    let result = serde_json::json!({
        "capabilities": capabilities,
        "serverInfo": ServerInfo {
            name: "stridelint".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        },
    });
    connection.initialize_finish(id, result)?;
    let mut state = State::new(connection.sender.clone(), encoding, options);
    if watches_files_dynamically(&params) {
        state.watch_configuration_files();
    }
    main_loop(connection, &mut state)
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

fn main_loop(connection: &Connection, state: &mut State) -> anyhow::Result<Ended> {
    loop {
        let Ok(first) = connection.receiver.recv() else {
            return Ok(Ended::Abandoned);
        };
        // Everything already waiting is handled before analysing: one analysis per burst
        // of keystrokes, not one per keystroke.
        let mut next = Some(first);
        while let Some(message) = next {
            match message {
                Message::Request(request) => {
                    if connection.handle_shutdown(&request)? {
                        return Ok(Ended::Shutdown);
                    }
                    let response = handle_request(state, request);
                    connection.sender.send(Message::Response(response))?;
                }
                Message::Notification(n) if n.method == notif::Exit::METHOD => {
                    return Ok(Ended::Abandoned)
                }
                Message::Notification(n) => handle_notification(state, n),
                // Answers to our own requests (registering the file watchers).
                Message::Response(_) => {}
            }
            next = connection.receiver.try_recv().ok();
        }
        state.publish_dirty();
    }
}

fn handle_request(state: &mut State, request: Request) -> Response {
    let id = request.id.clone();
    let result = match request.method.as_str() {
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
    };
    respond(id, result)
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
