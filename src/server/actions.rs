//! Code actions: each finding's fix (safe or unsafe, labelled so), "suppress on this
//! line", and "fix all safe fixes" for the whole document.

use std::collections::HashMap;

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Range, TextEdit, Url, WorkspaceEdit,
};

use crate::diagnostic::{Applicability, Diagnostic, Edit, Fix};

use super::diagnostics;
use super::text_map::TextMap;

/// The kind of "fix all safe fixes": editors run it on save when asked
/// (`"editor.codeActionsOnSave": {"source.fixAll.stridelint": "explicit"}`).
pub fn fix_all_kind() -> CodeActionKind {
    CodeActionKind::new("source.fixAll.stridelint")
}

fn wants(only: Option<&[CodeActionKind]>, kind: &CodeActionKind) -> bool {
    only.is_none_or(|only| {
        only.iter().any(|k| {
            kind.as_str() == k.as_str() || kind.as_str().starts_with(&format!("{}.", k.as_str()))
        })
    })
}

/// The actions for `range` of document `uri`.
pub fn actions(
    findings: &[Diagnostic],
    map: &TextMap,
    uri: &Url,
    range: Range,
    only: Option<&[CodeActionKind]>,
) -> Vec<CodeActionOrCommand> {
    let mut out = Vec::new();
    let in_document: Vec<&Diagnostic> = findings
        .iter()
        .filter(|d| {
            map.locate(d.span.start as usize, d.span.end as usize)
                .is_some_and(|(u, _)| &u == uri)
        })
        .collect();
    if wants(only, &CodeActionKind::QUICKFIX) {
        for d in in_document.iter().filter(|d| {
            map.locate(d.span.start as usize, d.span.end as usize)
                .is_some_and(|(_, r)| overlaps(r, range))
        }) {
            let lsp = diagnostics::to_lsp(std::slice::from_ref(*d), map, &[])
                .into_iter()
                .flat_map(|(_, list)| list)
                .collect::<Vec<_>>();
            for fix in d.fix.iter().chain(d.unsafe_fix.iter()) {
                if let Some(edit) = workspace_edit(map, fix.edits.iter()) {
                    out.push(CodeActionOrCommand::CodeAction(CodeAction {
                        title: fix_title(d.code, fix),
                        kind: Some(CodeActionKind::QUICKFIX),
                        diagnostics: Some(lsp.clone()),
                        edit: Some(edit),
                        is_preferred: Some(fix.applicability == Applicability::Safe),
                        ..Default::default()
                    }));
                }
            }
            if crate::lints::claim(d.code).suppressible() {
                let (edits, _) = crate::noqa::add_noqa_edits(&d.file, &[d]);
                if let Some(edit) = workspace_edit(map, edits.iter()) {
                    out.push(CodeActionOrCommand::CodeAction(CodeAction {
                        title: format!("Suppress {} on this line", d.code),
                        kind: Some(CodeActionKind::QUICKFIX),
                        diagnostics: Some(lsp),
                        edit: Some(edit),
                        ..Default::default()
                    }));
                }
            }
        }
    }
    let fix_all = fix_all_kind();
    if wants(only, &fix_all) || wants(only, &CodeActionKind::SOURCE_FIX_ALL) {
        // What `--fix` applies: each finding's safe fix, edits that overlap left out.
        let safe: Vec<&Edit> = in_document
            .iter()
            .filter_map(|d| crate::fix::chosen_fix(d, crate::fix::FixMode::Safe))
            .flat_map(|f| f.edits.iter())
            .collect();
        if let Some(edit) = workspace_edit(map, crate::fix::non_overlapping(&safe).into_iter()) {
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: "stridelint: fix all safe fixes in this file".into(),
                kind: Some(fix_all),
                edit: Some(edit),
                ..Default::default()
            }));
        }
    }
    out
}

fn fix_title(code: &str, fix: &Fix) -> String {
    match fix.applicability {
        Applicability::Safe => format!("Fix {code}: {}", fix.message),
        Applicability::Unsafe => {
            format!("Fix {code}: {} (unsafe: may change behaviour)", fix.message)
        }
    }
}

fn workspace_edit<'e>(
    map: &TextMap,
    edits: impl Iterator<Item = &'e Edit>,
) -> Option<WorkspaceEdit> {
    let mut changes: HashMap<Url, Vec<TextEdit>> = HashMap::new();
    for e in edits {
        let (uri, range) = map.locate(e.span.start as usize, e.span.end as usize)?;
        changes.entry(uri).or_default().push(TextEdit {
            range,
            new_text: e.content.clone(),
        });
    }
    (!changes.is_empty()).then(|| WorkspaceEdit {
        changes: Some(changes),
        ..Default::default()
    })
}

fn overlaps(a: Range, b: Range) -> bool {
    let key = |p: lsp_types::Position| (p.line, p.character);
    key(a.start) <= key(b.end) && key(b.start) <= key(a.end)
}
