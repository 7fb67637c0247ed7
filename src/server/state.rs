//! The open documents, their analyses, and the settings they are analysed with.
//!
//! A *unit* is what is analysed as one file: a text document, or a notebook (its code
//! cells, each a text document of its own). Units are keyed by their document's URI.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crossbeam_channel::Sender;
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId};
use lsp_types::notification::{PublishDiagnostics, ShowMessage};
use lsp_types::request::{RegisterCapability, Request as _};
use lsp_types::{
    CodeActionParams, DidChangeWatchedFilesRegistrationOptions, FileSystemWatcher, GlobPattern,
    Hover, HoverContents, HoverParams, InlayHintParams, MarkupContent, MarkupKind, MessageType,
    PublishDiagnosticsParams, Registration, RegistrationParams, ShowMessageParams,
    TextDocumentContentChangeEvent, TextDocumentItem, Url, VersionedTextDocumentIdentifier,
};

use crate::settings::{Config, SettingsResolver};
use crate::source::SourceFile;
use crate::{FileReport, Settings};

use super::positions::{apply_change, Encoding};
use super::text_map::TextMap;
use super::transport::Outgoing;
use super::{actions, diagnostics, guarded, hover, Failure};

/// What the client set (`initializationOptions`, or `stridelint` in
/// `workspace/didChangeConfiguration`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    pub inlay_hints: bool,
}

impl Options {
    pub fn from_json(value: Option<&serde_json::Value>) -> Self {
        let mut options = Options::default();
        options.update(value);
        options
    }

    fn update(&mut self, value: Option<&serde_json::Value>) {
        let Some(value) = value else { return };
        // Either the options themselves or a `stridelint` section holding them.
        let section = value.get("stridelint").unwrap_or(value);
        if let Some(on) = section.get("inlayHints").and_then(|v| v.as_bool()) {
            self.inlay_hints = on;
        }
    }
}

/// A text document the client opened.
struct Document {
    text: String,
    version: i32,
    language_id: String,
}

impl From<TextDocumentItem> for Document {
    fn from(item: TextDocumentItem) -> Self {
        Document {
            text: item.text,
            version: item.version,
            language_id: item.language_id,
        }
    }
}

/// A notebook the client opened: its cells, in order, each with whether it is code.
pub struct Notebook {
    pub version: i32,
    pub cells: Vec<(Url, bool)>,
}

/// The documents a unit's analysis was made of, with their versions (a notebook's own
/// version last).
type Versions = Vec<(Url, i32)>;

/// One unit's analysis, of the versions it names.
struct Analysis {
    versions: Versions,
    map: TextMap,
    file: Arc<SourceFile>,
    report: FileReport,
}

pub struct State {
    sender: Sender<Outgoing>,
    encoding: Encoding,
    options: Options,
    documents: HashMap<Url, Document>,
    pub(super) notebooks: HashMap<Url, Notebook>,
    /// The notebook each open cell belongs to.
    pub(super) cell_owner: HashMap<Url, Url>,
    analyses: HashMap<Url, Analysis>,
    /// Units to analyse and publish once the messages waiting are handled.
    dirty: HashSet<Url>,
    resolver: SettingsResolver,
    /// Configuration errors already shown (each once, until the configuration changes).
    shown: HashSet<String>,
    next_request: i32,
}

/// The names of the files configuration comes from.
const CONFIG_FILES: [&str; 3] = ["stridelint.toml", ".stridelint.toml", "pyproject.toml"];

impl State {
    pub fn new(sender: Sender<Outgoing>, encoding: Encoding, options: Options) -> Self {
        let mut state = State {
            sender,
            encoding,
            options,
            documents: HashMap::new(),
            notebooks: HashMap::new(),
            cell_owner: HashMap::new(),
            analyses: HashMap::new(),
            dirty: HashSet::new(),
            resolver: SettingsResolver::fixed(Settings::default()),
            shown: HashSet::new(),
            next_request: 0,
        };
        state.reload_configuration();
        state
    }

    // ---------------------------------------------------------------- documents

    pub fn open(&mut self, item: TextDocumentItem) {
        let uri = item.uri.clone();
        self.documents.insert(uri.clone(), Document::from(item));
        self.touch(&uri);
    }

    pub fn change(
        &mut self,
        id: VersionedTextDocumentIdentifier,
        changes: Vec<TextDocumentContentChangeEvent>,
    ) {
        let Some(doc) = self.documents.get_mut(&id.uri) else {
            return;
        };
        for change in changes {
            apply_change(&mut doc.text, change.range, &change.text, self.encoding);
        }
        doc.version = id.version;
        self.touch(&id.uri);
    }

    /// A file was saved or changed on disk: a configuration file reloads the settings of
    /// every unit; any file makes the units whose analysis read it dirty.
    pub fn saved(&mut self, uri: &Url) {
        let path = uri.to_file_path().ok();
        let is_config = path
            .as_deref()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .is_some_and(|n| CONFIG_FILES.contains(&n));
        if is_config {
            self.reload_configuration();
            self.analyses.clear();
            let all: Vec<Url> = self.units().collect();
            self.dirty.extend(all);
            return;
        }
        if let Some(path) = path {
            let dependents: Vec<Url> = self
                .analyses
                .iter()
                .filter(|(_, a)| a.report.depends_on.iter().any(|(p, _)| **p == *path))
                .map(|(u, _)| u.clone())
                .collect();
            for unit in dependents {
                self.analyses.remove(&unit);
                self.dirty.insert(unit);
            }
        }
        self.touch(uri);
    }

    pub fn close(&mut self, uri: &Url) {
        self.documents.remove(uri);
        if self.cell_owner.contains_key(uri) {
            return;
        }
        self.analyses.remove(uri);
        self.dirty.remove(uri);
        self.publish(uri.clone(), Vec::new(), None);
    }

    pub fn configure(&mut self, settings: &serde_json::Value) {
        self.options.update(Some(settings));
    }

    /// Mark the unit `uri` belongs to for analysis.
    pub(super) fn touch(&mut self, uri: &Url) {
        let unit = self
            .cell_owner
            .get(uri)
            .cloned()
            .unwrap_or_else(|| uri.clone());
        if self.is_lintable(&unit) {
            self.dirty.insert(unit);
        }
    }

    pub(super) fn open_cell(&mut self, item: TextDocumentItem, notebook: &Url) {
        self.cell_owner.insert(item.uri.clone(), notebook.clone());
        self.documents
            .insert(item.uri.clone(), Document::from(item));
    }

    pub(super) fn close_cell(&mut self, uri: &Url) {
        self.documents.remove(uri);
        self.cell_owner.remove(uri);
    }

    pub(super) fn close_notebook(&mut self, uri: &Url) {
        let cells: Vec<Url> = self
            .cell_owner
            .iter()
            .filter(|(_, nb)| *nb == uri)
            .map(|(c, _)| c.clone())
            .collect();
        for cell in &cells {
            self.close_cell(cell);
            self.publish(cell.clone(), Vec::new(), None);
        }
        self.notebooks.remove(uri);
        self.analyses.remove(uri);
        self.dirty.remove(uri);
    }

    fn units(&self) -> impl Iterator<Item = Url> + '_ {
        self.documents
            .keys()
            .filter(|u| !self.cell_owner.contains_key(*u))
            .chain(self.notebooks.keys())
            .filter(|u| self.is_lintable(u))
            .cloned()
    }

    /// Python (also `.pyi`), Rust, or a notebook.
    fn is_lintable(&self, unit: &Url) -> bool {
        if self.notebooks.contains_key(unit) {
            return true;
        }
        let Some(doc) = self.documents.get(unit) else {
            return false;
        };
        let path = unit.path();
        matches!(doc.language_id.as_str(), "python" | "rust")
            || path.ends_with(".py")
            || path.ends_with(".pyi")
            || path.ends_with(".rs")
    }

    // ---------------------------------------------------------------- settings

    fn reload_configuration(&mut self) {
        self.shown.clear();
        self.resolver = match SettingsResolver::from_cli(Config::default(), None, false) {
            Ok(resolver) => resolver,
            Err(e) => {
                self.show_error(format!("stridelint: {}: {}", e.place(), e.message));
                SettingsResolver::fixed(Settings::default())
            }
        };
    }

    /// The settings for `path`: its closest configuration's, with probes on (hover).
    fn settings_for(&mut self, path: &Path) -> Settings {
        let mut settings = match self.resolver.settings_for(path) {
            Ok(s) => (*s).clone(),
            Err(e) => {
                self.show_error(format!(
                    "stridelint: {}: {} (linting with the default settings)",
                    e.place(),
                    e.message
                ));
                Settings::default()
            }
        };
        settings.analysis.probe = true;
        settings
    }

    fn show_error(&mut self, message: String) {
        if self.shown.insert(message.clone()) {
            self.notify::<ShowMessage>(ShowMessageParams {
                typ: MessageType::ERROR,
                message,
            });
        }
    }

    /// Ask the client to tell us when a configuration file changes on disk.
    pub fn watch_configuration_files(&mut self) {
        let watchers = CONFIG_FILES
            .iter()
            .map(|name| FileSystemWatcher {
                glob_pattern: GlobPattern::String(format!("**/{name}")),
                kind: None,
            })
            .collect();
        let options = DidChangeWatchedFilesRegistrationOptions { watchers };
        let params = RegistrationParams {
            registrations: vec![Registration {
                id: "stridelint-configuration".into(),
                method: "workspace/didChangeWatchedFiles".into(),
                register_options: serde_json::to_value(options).ok(),
            }],
        };
        self.next_request += 1;
        let request = Request::new(
            RequestId::from(format!("stridelint-{}", self.next_request)),
            RegisterCapability::METHOD.into(),
            params,
        );
        let _ = self.sender.send(Message::Request(request).into());
    }

    // ---------------------------------------------------------------- analysis

    /// The documents of `unit` and their versions, in order, with their texts.
    fn contents(&self, unit: &Url) -> Option<(Versions, Vec<(Url, String)>)> {
        let uris: Vec<Url> = match self.notebooks.get(unit) {
            Some(nb) => nb
                .cells
                .iter()
                .filter(|(_, code)| *code)
                .map(|(u, _)| u.clone())
                .collect(),
            None => vec![unit.clone()],
        };
        let mut versions = Vec::with_capacity(uris.len());
        let mut texts = Vec::with_capacity(uris.len());
        let is_notebook = self.notebooks.contains_key(unit);
        for u in uris {
            // A notebook's cell the client has not sent (yet) is left out.
            let Some(doc) = self.documents.get(&u) else {
                if is_notebook {
                    continue;
                }
                return None;
            };
            versions.push((u.clone(), doc.version));
            texts.push((u, doc.text.clone()));
        }
        if let Some(nb) = self.notebooks.get(unit) {
            versions.push((unit.clone(), nb.version));
        }
        Some((versions, texts))
    }

    /// The analysis of `unit` as the client's documents are now, made if stale.
    fn fresh(&mut self, unit: &Url) -> Result<&Analysis, Failure> {
        let Some((versions, texts)) = self.contents(unit) else {
            return Err(Failure::new(
                ErrorCode::InvalidParams,
                format!("{unit} is not open"),
            ));
        };
        let current = self
            .analyses
            .get(unit)
            .is_some_and(|a| a.versions == versions);
        if !current {
            let analysis = self.analyse(unit, versions, texts)?;
            self.analyses.insert(unit.clone(), analysis);
        }
        Ok(&self.analyses[unit])
    }

    fn analyse(
        &mut self,
        unit: &Url,
        versions: Versions,
        texts: Vec<(Url, String)>,
    ) -> Result<Analysis, Failure> {
        let path = path_of(unit);
        let map = match self.notebooks.contains_key(unit) {
            true => TextMap::joined(texts, self.encoding),
            false => {
                let (uri, text) = texts.into_iter().next().expect("a document has one text");
                TextMap::single(uri, text, self.encoding)
            }
        };
        // What the CLI refuses to lint, the server does not analyse either.
        if map.text().len() as u64 > crate::MAX_FILE_BYTES {
            return Err(Failure::new(
                ErrorCode::RequestFailed,
                format!(
                    "stridelint: {} is larger than the {} MiB a file may have; not analysed",
                    path.display(),
                    crate::MAX_FILE_BYTES >> 20
                ),
            ));
        }
        let settings = self.settings_for(&path);
        let file = Arc::new(SourceFile::new(&path, map.text().to_string()));
        let run = {
            let file = file.clone();
            move || {
                let project = crate::project::ProjectIndex::new();
                let mut report = crate::check_source_in(file, &settings, &project);
                // The copy sizes and `hidden-copy-min-bytes`, as the CLI states them.
                let sizing = crate::copy_sizing(&settings);
                crate::verify_findings::state_copy_sizes(&mut report.diagnostics, true, &|_| {
                    sizing.clone()
                });
                report
            }
        };
        match guarded(run) {
            Ok(report) => Ok(Analysis {
                versions,
                map,
                file,
                report,
            }),
            Err(why) => Err(Failure::new(
                ErrorCode::InternalError,
                format!(
                    "stridelint: the analysis of {} failed (a bug: please report it): {why}",
                    path.display()
                ),
            )),
        }
    }

    pub fn has_dirty(&self) -> bool {
        !self.dirty.is_empty()
    }

    /// Analyse the units changed since the last call and publish their diagnostics.
    pub fn publish_dirty(&mut self) {
        let mut dirty: Vec<Url> = self.dirty.drain().collect();
        dirty.sort();
        for unit in dirty {
            match self.fresh(&unit) {
                Ok(analysis) => {
                    let documents: Vec<Url> =
                        analysis.versions.iter().map(|(u, _)| u.clone()).collect();
                    let versions = analysis.versions.clone();
                    let published = diagnostics::to_lsp(
                        &analysis.report.diagnostics,
                        &analysis.map,
                        &documents,
                    );
                    for (uri, list) in published {
                        let version = versions.iter().find(|(u, _)| *u == uri).map(|(_, v)| *v);
                        self.publish(uri, list, version);
                    }
                }
                Err(failure) => {
                    self.show_error(failure.message);
                }
            }
        }
    }

    fn publish(&self, uri: Url, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
        if self.notebooks.contains_key(&uri) {
            return;
        }
        self.notify::<PublishDiagnostics>(PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        });
    }

    fn notify<N: lsp_types::notification::Notification>(&self, params: N::Params) {
        let n = Notification::new(N::METHOD.into(), params);
        let _ = self.sender.send(Message::Notification(n).into());
    }

    fn unit_of(&self, uri: &Url) -> Url {
        self.cell_owner
            .get(uri)
            .cloned()
            .unwrap_or_else(|| uri.clone())
    }

    // ---------------------------------------------------------------- requests

    pub fn hover(&mut self, p: HoverParams) -> Result<serde_json::Value, Failure> {
        let uri = p.text_document_position_params.text_document.uri;
        let position = p.text_document_position_params.position;
        let unit = self.unit_of(&uri);
        let analysis = self.fresh(&unit)?;
        let Some(offset) = analysis.map.offset(&uri, position) else {
            return Ok(serde_json::Value::Null);
        };
        let Some((text, start, end)) =
            hover::hover(&analysis.report.probes, &analysis.file, offset)
        else {
            return Ok(serde_json::Value::Null);
        };
        let range = analysis.map.locate(start, end).map(|(_, r)| r);
        Ok(json(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: text,
            }),
            range,
        }))
    }

    pub fn code_actions(&mut self, p: CodeActionParams) -> Result<serde_json::Value, Failure> {
        let uri = p.text_document.uri;
        let unit = self.unit_of(&uri);
        let analysis = self.fresh(&unit)?;
        let list = actions::actions(
            &analysis.report.diagnostics,
            &analysis.map,
            &uri,
            p.range,
            p.context.only.as_deref(),
        );
        Ok(json(list))
    }

    pub fn inlay_hints(&mut self, p: InlayHintParams) -> Result<serde_json::Value, Failure> {
        if !self.options.inlay_hints {
            return Ok(json(Vec::<lsp_types::InlayHint>::new()));
        }
        let uri = p.text_document.uri;
        let unit = self.unit_of(&uri);
        let analysis = self.fresh(&unit)?;
        Ok(json(hover::inlay_hints(
            &analysis.report.probes,
            &analysis.map,
            &uri,
            p.range,
        )))
    }
}

pub(super) fn json(value: impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

/// The path a document is analysed as: its file, or for an unsaved one (`untitled:`) a
/// name with the document's extension in the current directory (whose configuration
/// applies).
fn path_of(uri: &Url) -> PathBuf {
    if let Ok(path) = uri.to_file_path() {
        return path;
    }
    let name = uri
        .path_segments()
        .and_then(|mut s| s.next_back())
        .filter(|n| !n.is_empty())
        .unwrap_or("untitled.py");
    let name = if name.contains('.') {
        name.to_string()
    } else {
        format!("{name}.py")
    };
    std::env::current_dir().unwrap_or_default().join(name)
}
