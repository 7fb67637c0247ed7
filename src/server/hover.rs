//! Hover and inlay hints: the layout the analysis held for a tensor where the cursor is,
//! from the probes the analysis records in the editor (see `AnalysisSettings::probe`).

use lsp_types::{InlayHint, InlayHintKind, InlayHintLabel, Range, Url};

use crate::analysis::event::{OpEvent, PROBE_BIND};
use crate::analysis::value::format_shape;
use crate::layout::{Decider, Tri};
use crate::lints::sl900_reveal_layout::{describe, Revealed};
use crate::lints::{chain_labels, in_source_order};
use crate::source::SourceFile;

use super::text_map::TextMap;

/// The probes recorded at the innermost expression around `offset` (a name, `self.x`, a
/// call's result), those of the function analysed on its own first: a caller's context
/// only when the function was never analysed on its own there.
fn probes_at(probes: &[OpEvent], offset: usize) -> Vec<&OpEvent> {
    let contains =
        |ev: &&OpEvent| (ev.span.start as usize) <= offset && offset < ev.span.end as usize;
    let Some(innermost) = probes
        .iter()
        .filter(contains)
        .min_by_key(|ev| ev.span.end - ev.span.start)
        .map(|ev| ev.span)
    else {
        return Vec::new();
    };
    let at: Vec<&OpEvent> = probes.iter().filter(|ev| ev.span == innermost).collect();
    let own: Vec<&OpEvent> = at.iter().copied().filter(|ev| !ev.from_caller).collect();
    if own.is_empty() {
        at
    } else {
        own
    }
}

/// The hover text (Markdown) at `offset` and the byte range it is about.
pub fn hover(
    probes: &[OpEvent],
    file: &SourceFile,
    offset: usize,
) -> Option<(String, usize, usize)> {
    let events = probes_at(probes, offset);
    let first = *events.first()?;
    let subject: String = file
        .text
        .get(first.span.range())
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let text = in_source_order(first, || {
        let mut layouts: Vec<(Option<String>, String)> = Vec::new();
        for ev in &events {
            let decider = Decider::new(&ev.assumptions);
            for o in &ev.outcomes {
                let layout = describe(o, Revealed::Input, ev.unknown_input, &decider);
                let condition = o
                    .input
                    .condition
                    .as_deref()
                    .or(ev.path.as_deref())
                    .map(str::to_string);
                if !layouts.iter().any(|(_, l)| *l == layout) {
                    layouts.push((condition, layout));
                }
            }
        }
        let mut text = match layouts.as_slice() {
            [(_, one)] => format!("`{subject}`: {one}"),
            many => {
                let mut t = format!("`{subject}`: {} alternatives", many.len());
                for (condition, layout) in many {
                    let when = condition
                        .as_deref()
                        .map_or("on another path".to_string(), |c| format!("where {c}"));
                    t.push_str(&format!("\n- {when}: {layout}"));
                }
                t
            }
        };
        if first.from_caller {
            text.push_str(
                "\n\n(as a caller passes it: the function was not analysed on its own here)",
            );
        }
        if let Some(alt) = first.outcomes.first() {
            let steps = chain_labels(alt);
            if !steps.is_empty() {
                text.push_str("\n\nHow it got this layout:");
                for (i, step) in steps.iter().enumerate() {
                    let line = file.location(step.span.start as usize).row;
                    text.push_str(&format!("\n{}. line {line}: {}", i + 1, step.message));
                }
            }
        }
        text
    });
    Some((text, first.span.start as usize, first.span.end as usize))
}

/// The inlay hints of document `uri` in `range`: after each tensor a statement binds to a
/// name, its shape, and its strides where it is not contiguous. Nothing where the layout
/// is unknown or differs between paths.
pub fn inlay_hints(probes: &[OpEvent], map: &TextMap, uri: &Url, range: Range) -> Vec<InlayHint> {
    let Some((lo, hi)) = map.bounds(uri) else {
        return Vec::new();
    };
    let (start, end) = (
        map.offset(uri, range.start).unwrap_or(lo),
        map.offset(uri, range.end).unwrap_or(hi),
    );
    // The bindings in range, those of one span together (loop iterations, paths).
    let mut bound: Vec<&OpEvent> = probes
        .iter()
        .filter(|ev| ev.kind == PROBE_BIND && !ev.from_caller)
        .filter(|ev| (ev.span.start as usize) >= start && (ev.span.end as usize) <= end)
        .collect();
    bound.sort_by_key(|ev| (ev.span.start, ev.span.end));
    let mut hints = Vec::new();
    for at in bound.chunk_by(|a, b| a.span == b.span) {
        let span = at[0].span;
        let Some(label) = in_source_order(at[0], || hint_label(at)) else {
            continue;
        };
        let Some((_, place)) = map.locate(span.end as usize, span.end as usize) else {
            continue;
        };
        hints.push(InlayHint {
            position: place.end,
            label: InlayHintLabel::String(label),
            kind: Some(InlayHintKind::TYPE),
            text_edits: None,
            tooltip: None,
            padding_left: None,
            padding_right: None,
            data: None,
        });
    }
    hints
}

/// `: (B, T, C)`, or `: (B, C, T) strides (T·C, 1, C)` when not contiguous; `None` unless
/// every path holds the same known layout.
fn hint_label(events: &[&OpEvent]) -> Option<String> {
    let mut label: Option<String> = None;
    for ev in events {
        if ev.unknown_input.is_some() || ev.outcomes.is_empty() {
            return None;
        }
        let decider = Decider::new(&ev.assumptions);
        for o in &ev.outcomes {
            let layout = o.input.layout.as_ref()?;
            let text = match layout.is_contiguous(&decider) {
                Tri::Yes => format!(": {}", format_shape(&layout.shape)),
                Tri::No => format!(
                    ": {} strides {}",
                    format_shape(&layout.shape),
                    format_shape(&layout.strides)
                ),
                Tri::Unknown => format!(
                    ": {} strides {}?",
                    format_shape(&layout.shape),
                    format_shape(&layout.strides)
                ),
            };
            match &label {
                Some(l) if *l != text => return None,
                _ => label = Some(text),
            }
        }
    }
    label
}
