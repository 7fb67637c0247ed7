//! Notebooks (LSP 3.17 `notebookDocument/*`): the client sends the notebook's cell list
//! and each cell as a text document; the code cells are analysed together, in order, and
//! each finding is published on its cell. lsp-types 0.95 has no notebook types, so the
//! few fields used are declared here.

use lsp_types::{TextDocumentContentChangeEvent, TextDocumentIdentifier, TextDocumentItem, Url};
use serde::Deserialize;

use super::state::{Notebook, State};

const DID_OPEN: &str = "notebookDocument/didOpen";
const DID_CHANGE: &str = "notebookDocument/didChange";
const DID_SAVE: &str = "notebookDocument/didSave";
const DID_CLOSE: &str = "notebookDocument/didClose";

/// The server's `notebookDocumentSync`: every notebook, its Python cells.
pub fn sync_options() -> serde_json::Value {
    serde_json::json!({
        "notebookSelector": [{ "notebook": { "pattern": "**/*.ipynb" }, "cells": [{ "language": "python" }] }],
        "save": true,
    })
}

pub fn handles(method: &str) -> bool {
    matches!(method, DID_OPEN | DID_CHANGE | DID_SAVE | DID_CLOSE)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Cell {
    /// 1 markup, 2 code.
    kind: u8,
    document: Url,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NotebookDocument {
    uri: Url,
    version: i32,
    cells: Vec<Cell>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OpenParams {
    notebook_document: NotebookDocument,
    cell_text_documents: Vec<TextDocumentItem>,
}

#[derive(Deserialize)]
struct NotebookId {
    uri: Url,
    #[serde(default)]
    version: Option<i32>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ChangeParams {
    notebook_document: NotebookId,
    change: Change,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Change {
    cells: Option<CellChanges>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct CellChanges {
    structure: Option<Structure>,
    text_content: Option<Vec<TextContent>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Structure {
    array: ArrayChange,
    #[serde(default)]
    did_open: Option<Vec<TextDocumentItem>>,
    #[serde(default)]
    did_close: Option<Vec<TextDocumentIdentifier>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ArrayChange {
    start: usize,
    delete_count: usize,
    #[serde(default)]
    cells: Option<Vec<Cell>>,
}

#[derive(Deserialize)]
struct TextContent {
    document: lsp_types::VersionedTextDocumentIdentifier,
    changes: Vec<TextDocumentContentChangeEvent>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CloseParams {
    notebook_document: NotebookId,
}

pub fn handle(state: &mut State, method: &str, params: serde_json::Value) {
    let outcome = match method {
        DID_OPEN => serde_json::from_value(params).map(|p| open(state, p)),
        DID_CHANGE => serde_json::from_value(params).map(|p| change(state, p)),
        DID_SAVE => serde_json::from_value::<CloseParams>(params)
            .map(|p| state.touch(&p.notebook_document.uri)),
        DID_CLOSE => serde_json::from_value::<CloseParams>(params)
            .map(|p| state.close_notebook(&p.notebook_document.uri)),
        _ => Ok(()),
    };
    if let Err(e) = outcome {
        eprintln!("stridelint server: ignoring `{method}`: {e}");
    }
}

fn open(state: &mut State, p: OpenParams) {
    let nb = p.notebook_document;
    for item in p.cell_text_documents {
        state.open_cell(item, &nb.uri);
    }
    // The cell list keeps every cell (markup ones too) for the structure changes' indices.
    state.notebooks.insert(
        nb.uri.clone(),
        Notebook {
            version: nb.version,
            cells: nb
                .cells
                .into_iter()
                .map(|c| (c.document, c.kind == 2))
                .collect(),
        },
    );
    state.touch(&nb.uri);
}

fn change(state: &mut State, p: ChangeParams) {
    let uri = p.notebook_document.uri;
    let Some(cells) = p.change.cells else {
        return;
    };
    if let Some(structure) = cells.structure {
        for item in structure.did_open.into_iter().flatten() {
            state.open_cell(item, &uri);
        }
        for id in structure.did_close.into_iter().flatten() {
            state.close_cell(&id.uri);
        }
        if let Some(nb) = state.notebooks.get_mut(&uri) {
            let a = structure.array;
            let start = a.start.min(nb.cells.len());
            // `deleteCount` comes from the client: it may run past the end, or wrap.
            let end = start.saturating_add(a.delete_count).min(nb.cells.len());
            let new = a
                .cells
                .into_iter()
                .flatten()
                .map(|c| (c.document, c.kind == 2));
            nb.cells.splice(start..end, new);
        }
    }
    for content in cells.text_content.into_iter().flatten() {
        state.change(content.document, content.changes);
    }
    if let (Some(nb), Some(version)) = (state.notebooks.get_mut(&uri), p.notebook_document.version)
    {
        nb.version = version;
    }
    state.touch(&uri);
}
