//! Findings as LSP diagnostics: the CLI's code, severity and message; its notes and help
//! under the message; the chain of earlier steps as related information.

use lsp_types::{
    CodeDescription, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString,
    Url,
};

use crate::diagnostic::{Diagnostic, Severity};

use super::text_map::TextMap;

/// The diagnostics of `findings`, grouped by the document they are in (a notebook's
/// findings go to their cells); every document of `map` gets an entry, empty when clean,
/// so that fixed findings disappear.
pub fn to_lsp(
    findings: &[Diagnostic],
    map: &TextMap,
    documents: &[Url],
) -> Vec<(Url, Vec<lsp_types::Diagnostic>)> {
    let mut by_document: Vec<(Url, Vec<lsp_types::Diagnostic>)> =
        documents.iter().map(|u| (u.clone(), Vec::new())).collect();
    for d in findings {
        let Some((uri, range)) = map.locate(d.span.start as usize, d.span.end as usize) else {
            continue;
        };
        let related: Vec<DiagnosticRelatedInformation> = d
            .chain
            .iter()
            .filter_map(|label| {
                let (uri, range) =
                    map.locate(label.span.start as usize, label.span.end as usize)?;
                Some(DiagnosticRelatedInformation {
                    location: Location { uri, range },
                    message: label.message.clone(),
                })
            })
            .collect();
        let diagnostic = lsp_types::Diagnostic {
            range,
            severity: Some(severity(d.severity)),
            code: Some(NumberOrString::String(d.code.to_string())),
            code_description: Url::parse(&d.url())
                .ok()
                .map(|href| CodeDescription { href }),
            source: Some("stridelint".into()),
            message: message(d),
            related_information: (!related.is_empty()).then_some(related),
            tags: None,
            data: None,
        };
        match by_document.iter_mut().find(|(u, _)| *u == uri) {
            Some((_, list)) => list.push(diagnostic),
            None => by_document.push((uri, vec![diagnostic])),
        }
    }
    by_document
}

pub fn severity(s: Severity) -> DiagnosticSeverity {
    match s {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
    }
}

/// The message with what the CLI prints under it: the notes and the help.
fn message(d: &Diagnostic) -> String {
    let mut text = d.message.clone();
    for note in &d.notes {
        text.push_str("\nnote: ");
        text.push_str(note);
    }
    if let Some(help) = &d.help {
        text.push_str("\nhelp: ");
        text.push_str(help);
    }
    if let Some(summary) = d
        .verify
        .as_ref()
        .and_then(|v| v.get("summary"))
        .and_then(|s| s.as_str())
    {
        text.push_str("\nmeasured: ");
        text.push_str(summary);
    }
    text
}
