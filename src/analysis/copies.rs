//! Which tensors are copies an op certainly made, for SL010 (`write-to-copy`): the result
//! of a `reshape`/`flatten`/`ravel`/`rearrange` (ops tagged `hidden-copy`) or a
//! `.contiguous()` that copies its input carries a [`CopiedBy`]; the views and in-place
//! results of such a tensor keep it (they share its memory). Nothing else changes.

use std::sync::Arc;

use crate::ir::Span;
use crate::layout::{Assumptions, Tri};
use crate::ops::{OpKind, OpSpec};

use super::event::{AltOutcome, CopiedBy, Outcome};
use super::foreign::SourceText;
use super::value::{TensorAlt, TensorVal, Value};

/// Ops whose result shares its input's memory whenever they do not copy.
fn shares_memory(kind: OpKind) -> bool {
    matches!(
        kind,
        OpKind::InPlace
            | OpKind::Alias
            | OpKind::Transpose
            | OpKind::MatrixTranspose
            | OpKind::ReverseDims
            | OpKind::BatchTranspose
            | OpKind::Permute
            | OpKind::Movedim
            | OpKind::Squeeze
            | OpKind::Unsqueeze
            | OpKind::ViewAsReal
            | OpKind::Expand
            | OpKind::Narrow
            | OpKind::Select
            | OpKind::Diagonal
            | OpKind::Unfold
            | OpKind::Index
            | OpKind::View
            | OpKind::Reshape
            | OpKind::Flatten
            | OpKind::Unflatten
            | OpKind::Ravel
            | OpKind::Contiguous
    )
}

/// The result `value` of `spec` applied to the alternative `input` (whose outcome is
/// `outcome`), with the copy it is part of: a new one when the op certainly copied, the
/// input's when the op shares the input's memory.
#[allow(clippy::too_many_arguments)]
pub fn carry_copy(
    source: SourceText,
    spec: &OpSpec,
    span: Span,
    nspan: Span,
    input: &TensorAlt,
    outcome: Option<&AltOutcome>,
    assumptions: &Assumptions,
    value: Value,
) -> Value {
    let Some(outcome) = outcome else {
        return value;
    };
    let copying = spec.tags.iter().any(|t| t == "hidden-copy") || spec.kind == OpKind::Contiguous;
    let copied = if copying
        && outcome.copies == Tri::Yes
        && matches!(outcome.outcome, Outcome::Ok(Some(_)))
        && input.layout.is_some()
    {
        Arc::new(CopiedBy {
            op: spec.name.clone(),
            span,
            semantics: spec.semantics,
            input_text: receiver_text(source, span, nspan),
            outcome: outcome.clone(),
            assumptions: assumptions.clone(),
        })
    } else {
        match &input.copied {
            Some(c) if shares_memory(spec.kind) && outcome.copies == Tri::No => c.clone(),
            _ => return value,
        }
    };
    match value {
        Value::Tensor(TensorVal::Alts(alts)) => Value::Tensor(TensorVal::Alts(
            alts.into_iter()
                .map(|mut a| {
                    a.copied = Some(copied.clone());
                    a
                })
                .collect(),
        )),
        other => other,
    }
}

/// The receiver of a method call as written (`w.t()` in `w.t().reshape(-1)`), when short.
fn receiver_text(source: SourceText, span: Span, nspan: Span) -> Option<String> {
    if nspan.start <= span.start {
        return None;
    }
    let text = source.get(span.start, nspan.start)?;
    let text: String = text
        .trim_end()
        .strip_suffix('.')?
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    (!text.is_empty() && text.chars().count() <= 40).then_some(text)
}
