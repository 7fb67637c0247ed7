//! Recording an op call for the lints: one [`AltOutcome`] per alternative of its input,
//! and the [`OpEvent`] that holds them.

use std::sync::Arc;

use crate::ir::Span;
use crate::layout::{Assumption, Dim};
use crate::ops::{self, OpResult, OpSpec};

use super::super::event::{AltOutcome, OpEvent, Outcome};
use super::super::value::{Producer, SymLayout, TensorAlt, UnknownReason};
use super::ApplyCtx;

impl ApplyCtx<'_> {
    /// Record an event whose input is unknown for `unknown_input` (or known, `None`).
    pub(super) fn record_with(
        &mut self,
        spec: &'static OpSpec,
        span: Span,
        nspan: Span,
        outcomes: Vec<AltOutcome>,
        unknown_input: Option<UnknownReason>,
    ) {
        self.events.push(OpEvent {
            span,
            name_span: nspan,
            op: &spec.name,
            kind: spec.kind_name(),
            tags: &spec.tags,
            outcomes,
            unknown_input,
            divisibility: self.facts.divisibility.clone(),
            assumptions: self.facts.assumptions.clone(),
            aliases: self.facts.aliases.clone(),
            semantics: spec.semantics,
            from_caller: self.context.is_some(),
            context: self.context.clone(),
            path: self.path.clone(),
            write: None,
            arguments: Vec::new(),
        });
    }
}

/// Record the event of a call applied to the alternatives of its input: their `outcomes`,
/// and `arguments`, the producers of its other arguments. Its input is unknown when no
/// alternative was applied, or the rank of one was unknown.
pub(super) fn op_event(
    ctx: &mut ApplyCtx,
    spec: &'static OpSpec,
    span: Span,
    nspan: Span,
    outcomes: Vec<AltOutcome>,
    arguments: Vec<Option<Arc<Producer>>>,
) {
    let unknown_rank = outcomes
        .iter()
        .any(|o| o.input.layout.is_none() && matches!(o.outcome, Outcome::Unknown));
    let unknown_input = if outcomes.is_empty() {
        Some(UnknownReason::Unmodelled)
    } else {
        unknown_rank.then_some(UnknownReason::UnknownRank)
    };
    ctx.record_with(spec, span, nspan, outcomes, unknown_input);
    if let Some(event) = ctx.events.last_mut() {
        event.arguments = arguments;
    }
}

/// The outcome of the op on one alternative, `input`, decided by `transfer` under
/// `assumptions`.
pub(super) fn alt_outcome(
    ctx: &ApplyCtx,
    input: TensorAlt,
    transfer: &ops::Transfer<Dim>,
    target: Option<Vec<Dim>>,
    assumptions: Vec<Assumption>,
    operands: Vec<(String, Option<SymLayout>)>,
) -> AltOutcome {
    let mut outcome = match &transfer.result {
        OpResult::Tensor(l) => Outcome::Ok(Some(l.clone())),
        OpResult::Tensors(_) | OpResult::Size(_) => Outcome::Ok(None),
        OpResult::UnknownTensor => Outcome::Ok(None),
        OpResult::Error(e) => Outcome::Error(e.clone()),
        OpResult::Unknown => Outcome::Unknown,
    };
    if matches!(outcome, Outcome::Error(_))
        && ctx.root.rests_on_small_default(&assumptions, ctx.settled)
    {
        // `num_dummy_heads: int = 0` may well be 0, where the code runs: a failure that
        // needs it ≥ 2 is not certain. (A copy that needs it ≥ 2 is reported; its note
        // states the condition.)
        outcome = Outcome::Unknown;
    }
    AltOutcome {
        input,
        target,
        outcome,
        copies: transfer.copies,
        copied_numel: transfer.copied_numel.clone(),
        copied_reshape: transfer.copied_reshape.clone(),
        stacks_list: false,
        assumptions,
        operands,
        decisions: ctx.decisions.to_vec(),
    }
}
