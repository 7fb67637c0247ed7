//! SL010's fact (`write-to-copy`): which tensors are copies an op certainly made. The
//! result of a `reshape`/`flatten`/`ravel`/`rearrange` (ops tagged `hidden-copy`) or a
//! `.contiguous()` that copies its input carries a [`CopiedBy`]; the views and in-place
//! results of such a tensor keep it (they share its memory). Nothing else changes.

use std::sync::Arc;

use crate::ir::Span;
use crate::layout::{Assumptions, Tri};
use crate::ops::{OpKind, Semantics};

use super::super::event::{AltOutcome, Outcome};
use super::super::foreign::SourceText;
use super::super::value::{TensorAlt, TensorFact, TensorVal, Value};
use super::{FactPass, OpSite};

/// The op that made a tensor as a copy of its input: a result of an op that certainly
/// copies, carried by the result's alternative (and its views) so that a later write to it
/// can say where its memory came from.
#[derive(Debug)]
pub struct CopiedBy {
    /// The op's table name (`reshape`), and its call.
    pub op: String,
    pub span: Span,
    pub semantics: Semantics,
    /// The op's receiver as written (`w.t()` in `w.t().reshape(-1)`), when it is short.
    pub input_text: Option<String>,
    /// The op's outcome for this alternative: the input it copied, with its chain.
    pub outcome: AltOutcome,
    /// The assumptions the decision was made under.
    pub assumptions: Assumptions,
}

/// A copy is told apart by the call that made it.
impl TensorFact for CopiedBy {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn identity(&self) -> u64 {
        (u64::from(self.span.start) << 32) | u64::from(self.span.end)
    }

    /// A write into the copy may be lost: SL010 reads whether anything observes it.
    fn watches_writes(&self) -> bool {
        true
    }
}

/// The pass: puts a [`CopiedBy`] on the results of copies and keeps it on their views.
pub struct Copies;

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

impl FactPass for Copies {
    /// The result `value` of the op applied to the alternative `input`, with the copy it is
    /// part of: a new one when the op certainly copied, the input's when the op shares the
    /// input's memory.
    fn after_op(
        &self,
        site: &OpSite,
        input: &TensorAlt,
        outcome: &AltOutcome,
        value: Value,
    ) -> Value {
        let spec = site.spec;
        let copying =
            spec.tags.iter().any(|t| t == "hidden-copy") || spec.kind == OpKind::Contiguous;
        let copied: Arc<dyn TensorFact> = if copying
            && outcome.copies == Tri::Yes
            && matches!(outcome.outcome, Outcome::Ok(Some(_)))
            && input.layout.is_some()
        {
            Arc::new(CopiedBy {
                op: spec.name.clone(),
                span: site.span,
                semantics: spec.semantics,
                input_text: receiver_text(site.source, site.span, site.name_span),
                outcome: outcome.clone(),
                assumptions: site.assumptions.clone(),
            })
        } else {
            match input.facts.shared::<CopiedBy>() {
                Some(c) if shares_memory(spec.kind) && outcome.copies == Tri::No => c.clone(),
                _ => return value,
            }
        };
        match value {
            Value::Tensor(TensorVal::Alts(alts)) => Value::Tensor(TensorVal::Alts(
                alts.into_iter()
                    .map(|mut a| {
                        a.facts.put(copied.clone());
                        a
                    })
                    .collect(),
            )),
            other => other,
        }
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

#[cfg(test)]
mod tests {
    use super::CopiedBy;
    use crate::analysis::{analyze_module, AnalysisSettings};
    use crate::frontend::python::parse_python;

    /// Per event at the line `row` (1-based) with op `op`: the copy each input alternative
    /// is part of, as its op and receiver.
    fn copies_at(src: &str, row: usize, op: &str) -> Vec<Option<(String, Option<String>)>> {
        let parsed = parse_python(src);
        let analysis = analyze_module(&parsed.module, src, &AnalysisSettings::default(), None);
        let ev = analysis
            .events
            .iter()
            .find(|ev| ev.op == op && src[..ev.span.start as usize].lines().count() == row)
            .unwrap_or_else(|| panic!("no `{op}` event at line {row}"));
        ev.outcomes
            .iter()
            .map(|o| {
                let c = o.input.facts.get::<CopiedBy>()?;
                Some((c.op.clone(), c.input_text.clone()))
            })
            .collect()
    }

    #[test]
    fn a_certain_copy_is_marked_and_its_views_keep_the_mark() {
        let src = "def f(w, src):\n    a, b = w.shape\n    flat = w.t().reshape(-1)\n    flat.view(a, b).add_(1)\n    w.reshape(-1).copy_(src)\n    return flat\n";
        let by_reshape = Some(("reshape".to_string(), Some("w.t()".to_string())));
        // `flat` is the copy `reshape` made of `w.t()`; its view, which `add_` writes, shares
        // that memory.
        assert_eq!(copies_at(src, 4, "view"), vec![by_reshape.clone()]);
        assert_eq!(copies_at(src, 4, "in-place"), vec![by_reshape]);
        // `reshape` of the contiguous `w` is a view: `copy_` writes into no copy.
        assert_eq!(copies_at(src, 5, "in-place"), vec![None]);
    }
}
