//! SL001 `view-incompatible`: `view` / `view_as` on a layout where no view exists.
//!
//! PyTorch raises "view size is not compatible with input tensor's size and stride"
//! when the new shape would merge dimensions that are not adjacent in memory (ATen's
//! `computeStride` finds no strides). The lint fires only when *every* layout that can
//! reach the call fails, for every size satisfying the stated assumptions.

use crate::analysis::event::{OpEvent, Outcome};
use crate::analysis::value::format_shape;
use crate::diagnostic::{Applicability, Diagnostic, Edit, Fix, Severity, Subject};
use crate::ir::Span;
use crate::ops::OpErrorKind;

use super::{chain_labels, describe_non_adjacent, notes_for, LintContext};

pub fn check(ev: &OpEvent, ctx: &LintContext) -> Option<Diagnostic> {
    if ev.kind != "view" && ev.kind != "view_as" {
        return None;
    }
    let fails = |o: &crate::analysis::event::AltOutcome| matches!(&o.outcome, Outcome::Error(e) if e.kind == OpErrorKind::ViewIncompatible);
    let holds = ev.holds(fails)?;
    let alt = holds.outcome();
    let input = alt.input.layout.as_ref()?;
    let target = alt
        .target
        .as_ref()
        .map(|t| format_shape(t))
        .unwrap_or_else(|| "the target shape".into());
    let why = describe_non_adjacent(input, alt.target.as_deref(), &ev.assumptions)
        .map(|s| format!(": {s}"))
        .unwrap_or_default();
    let message = format!(
        "`{}` cannot view {} strides {} as {}{}",
        ev.op,
        format_shape(&input.shape),
        format_shape(&input.strides),
        target,
        why
    );
    let text = &ctx.file.text;
    let fix = contiguous_fix(text, ev.name_span);
    Some(Diagnostic {
        code: "SL001",
        severity: Severity::Error,
        message,
        file: ctx.file.clone(),
        span: ev.span,
        chain: chain_labels(alt),
        notes: notes_for(ev, holds, ctx),
        help: Some(format!(
            "call `.contiguous()` before `.{}(...)` (an explicit copy), use `.reshape(...)`, or keep the tensor in the memory order the view needs",
            ev.op
        )),
        fix,
        verify: None,
        subject: Some(Subject { op: ev.op.clone(), layout: input.clone(), target: alt.target.clone(), semantics: ev.semantics }),
    })
}

/// Insert `.contiguous()` before the `.view` of a method call: same values, an explicit copy.
fn contiguous_fix(text: &str, name_span: Span) -> Option<Fix> {
    let name = text.get(name_span.range())?;
    if name != "view" && name != "view_as" {
        return None;
    }
    // Find the `.` that precedes the method name (it may be followed by whitespace/newlines).
    let before = text.get(..name_span.start as usize)?;
    let dot = before.trim_end().strip_suffix('.').map(|s| s.len())?;
    Some(Fix {
        message: "Insert `.contiguous()` before the view".into(),
        applicability: Applicability::Safe,
        edits: vec![Edit {
            span: Span::new(dot, dot),
            content: ".contiguous()".into(),
        }],
    })
}

/// The unsafe alternative: rewrite `view` to `reshape` (it may alias or copy).
pub fn reshape_fix(text: &str, name_span: Span) -> Option<Fix> {
    let name = text.get(name_span.range())?;
    let replacement = match name {
        "view" => "reshape",
        "view_as" => "reshape_as",
        _ => return None,
    };
    Some(Fix {
        message: format!("Replace `{name}` with `{replacement}`"),
        applicability: Applicability::Unsafe,
        edits: vec![Edit {
            span: name_span,
            content: replacement.into(),
        }],
    })
}
