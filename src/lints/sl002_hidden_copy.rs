//! SL002 `hidden-copy`: `reshape` / `reshape_as` / `flatten` / `ravel` /
//! `einops.rearrange` (and candle's `reshape`) on a layout that cannot be viewed, so the
//! call silently allocates and copies the whole tensor.
//!
//! Which ops count is table data: ops tagged `hidden-copy` in `rules/*.toml`.

use crate::analysis::event::{AltOutcome, OpEvent};
use crate::analysis::value::format_shape;
use crate::diagnostic::{Diagnostic, Severity, Subject};

use super::{chain_labels, describe_non_adjacent, notes_for, LintContext};

pub fn check(ev: &OpEvent, ctx: &LintContext) -> Option<Diagnostic> {
    if !ev.tags.iter().any(|t| t == "hidden-copy") {
        return None;
    }
    if !ev.all(|o: &AltOutcome| o.copies.is_yes()) {
        return None;
    }
    let alt = &ev.outcomes[0];
    let input = alt.input.layout.as_ref()?;
    let numel = alt
        .copied_numel
        .as_ref()
        .map(|n| format!("{n} elements"))
        .unwrap_or_else(|| "the whole tensor".into());
    let why = describe_non_adjacent(input, alt.target.as_deref(), &ev.assumptions)
        .map(|s| format!("; {s}"))
        .unwrap_or_default();
    let target = alt
        .target
        .as_ref()
        .map(|t| format!(" to {}", format_shape(t)))
        .unwrap_or_default();
    let message = format!(
        "`{}`{} copies {} of {} strides {}{}",
        ev.op,
        target,
        numel,
        format_shape(&input.shape),
        format_shape(&input.strides),
        why
    );
    Some(Diagnostic {
        code: "SL002",
        severity: Severity::Warning,
        message,
        file: ctx.file.clone(),
        span: ev.span,
        chain: chain_labels(alt),
        notes: notes_for(ev, alt),
        help: Some(
            "the copy allocates a new tensor of the same size; avoid it by producing the tensor in the order the reshape needs (e.g. permute after reshaping, or have the producer write that layout), or make it explicit with `.contiguous()` where it is intended".into(),
        ),
        fix: None,
        verify: None,
        subject: Some(Subject { op: ev.op.clone(), layout: input.clone(), target: alt.target.clone() }),
    })
}
