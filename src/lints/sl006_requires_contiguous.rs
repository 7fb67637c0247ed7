//! SL006 `requires-contiguous`: a fused kernel that only reads contiguous memory called on
//! a non-contiguous tensor, so the call returns an error (spec §10.4).
//!
//! candle-nn's `ops::softmax_last_dim`, `ops::rms_norm`, `ops::layer_norm` and
//! `rotary_emb::rope` / `rope_i` / `rope_thd` check their inputs and return
//! `Err("… has to be contiguous")` instead of copying; a `transpose`/`t()`/`narrow` right
//! before them makes every forward pass fail. (The modules `RmsNorm` and `LayerNorm` fall
//! back to a slow composed path instead and are not reported.)
//!
//! Which ops count is table data: `requires_contiguous = true` in `rules/*.toml`; the op's
//! transfer function answers a [`OpErrorKind::NonContiguousInput`] failure when a tensor
//! argument is certainly not contiguous by its library's test. The lint fires only when
//! every layout that reaches the call fails, for every size satisfying the assumptions.

use crate::analysis::event::{AltOutcome, Holds, OpEvent, Outcome};
use crate::analysis::value::{format_shape, SymLayout};
use crate::diagnostic::Subject;
use crate::layout::{CandleBackend, Decider};
use crate::ops::{tensor_rejections, OpErrorKind, OpTable, Rejection};

use super::{Finding, LintContext};

pub fn check<'e>(ev: &'e OpEvent, ctx: &LintContext) -> Option<Finding<'e>> {
    let rejected = |o: &AltOutcome| matches!(&o.outcome, Outcome::Error(e) if e.kind == OpErrorKind::NonContiguousInput);
    if !ev.all(rejected) {
        return None;
    }
    let alt = &ev.outcomes[0];
    let Outcome::Error(error) = &alt.outcome else {
        return None;
    };
    let input = alt.input.layout.as_ref()?;
    // A candle op with a contract: which backends reject the call, decided on every
    // alternative; the finding needs the configured backend among them.
    let contract = OpTable::candle()
        .call_named(ev.op)
        .filter(|spec| spec.contract.iter().any(|c| c.check.is_tensor_check()));
    let mut backends_note = None;
    let mut on = String::new();
    let mut tensor = "its input".to_string();
    let mut requirement = "contiguous";
    if let Some(spec) = contract {
        let d = Decider::new(&ev.assumptions);
        let mut common: Option<Vec<CandleBackend>> = None;
        let mut first: Option<Rejection> = None;
        for alt in &ev.outcomes {
            let layout_of = |name: &str| -> Option<&SymLayout> {
                if name == "input" {
                    return alt.input.layout.as_ref();
                }
                alt.operands
                    .iter()
                    .find(|(n, _)| n == name)
                    .and_then(|(_, l)| l.as_ref())
            };
            let (rejections, _) = tensor_rejections(spec, layout_of, &d);
            let mut on: Vec<CandleBackend> = rejections.iter().map(|r| r.backend).collect();
            on.sort();
            on.dedup();
            common = Some(match common {
                None => on,
                Some(prev) => prev.into_iter().filter(|b| on.contains(b)).collect(),
            });
            if first.is_none() {
                first = rejections
                    .into_iter()
                    .find(|r| r.backend == ctx.candle_backend);
            }
        }
        let common = common.unwrap_or_default();
        if !common.contains(&ctx.candle_backend) {
            return None;
        }
        let first = first?;
        if first.param != "input" {
            tensor = format!("its `{}`", first.param);
        }
        requirement = first.clause.check.requirement();
        let runs_on: Vec<CandleBackend> = CandleBackend::ALL
            .into_iter()
            .filter(|b| spec.contract.iter().any(|c| c.backends.contains(b)))
            .collect();
        backends_note = Some(super::explain::backend_verdicts(
            &common,
            &runs_on,
            first.clause.at.as_str(),
        ));
        on = super::explain::backends_clause(&common, &runs_on);
    }
    let message = format!("`{}` rejects {tensor}{on}: it is not {requirement}", ev.op);
    let mut finding = Finding::new(ev.span, message, Some(Holds::Always(alt)));
    finding.details = vec![
        format!(
            "its input is {} with strides {}",
            format_shape(&input.shape),
            format_shape(&input.strides),
        ),
        format!("candle: {}", error.message),
    ];
    finding.details.extend(backends_note);
    finding.help = Some(
        "call `.contiguous()?` on the tensor before the kernel (one explicit copy), or use a composed form that takes any layout (`candle_nn::ops::softmax(&x, D::Minus1)`, the `RmsNorm`/`LayerNorm` modules)".into(),
    );
    finding.subject = Some(Subject {
        op: ev.op.to_string(),
        layout: input.clone(),
        target: None,
        semantics: ev.semantics,
        aliases: Vec::new(),
    });
    Some(finding)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::value::TensorAlt;
    use crate::layout::{CandleBackend, Dim, Layout, Tri};
    use crate::ops::OpError;

    fn event(outcome: Outcome, unknown_input: bool) -> OpEvent {
        let transposed = Layout::new(
            vec![Dim::sym("b"), Dim::sym("t"), Dim::sym("s")],
            vec![
                Dim::sym("s").mul(&Dim::sym("t")),
                Dim::lit(1),
                Dim::sym("t"),
            ],
            Dim::lit(0),
        );
        OpEvent {
            span: Default::default(),
            name_span: Default::default(),
            op: &crate::ops::OpTable::candle()
                .op("softmax_last_dim")
                .unwrap()
                .name,
            kind: "contiguous_result",
            tags: &[],
            outcomes: vec![AltOutcome {
                input: TensorAlt::new(Some(transposed), None),
                target: None,
                outcome,
                copies: Tri::No,
                copied_numel: None,
                copied_reshape: None,
                stacks_list: false,
                assumptions: Vec::new(),
                operands: Vec::new(),
                decisions: Vec::new(),
            }],
            unknown_input: unknown_input
                .then_some(crate::analysis::event::UnknownReason::UnknownRank),
            divisibility: Default::default(),
            assumptions: Default::default(),
            aliases: Default::default(),
            semantics: crate::ops::Semantics::Candle,
            from_caller: false,
            context: None,
            path: None,
            write: None,
            arguments: Vec::new(),
        }
    }

    fn context() -> LintContext<'static> {
        LintContext {
            candle_backend: CandleBackend::Cuda,
            language: crate::ir::Language::Rust,
            source: &crate::lints::NoSource,
            events: &[],
        }
    }

    fn rejection() -> Outcome {
        Outcome::Error(OpError {
            kind: OpErrorKind::NonContiguousInput,
            message: "softmax_last_dim: input has to be contiguous".into(),
        })
    }

    #[test]
    fn reports_a_certain_rejection_only() {
        let ev = event(rejection(), false);
        let found = check(&ev, &context()).expect("a finding");
        assert!(
            found
                .message
                .contains("rejects its input: it is not contiguous"),
            "{}",
            found.message
        );
        assert!(
            found.details[1].contains("input has to be contiguous"),
            "{:?}",
            found.details
        );
        // Some analysis reached the call with an unknown layout: nothing certain.
        assert!(check(&event(rejection(), true), &context()).is_none());
        assert!(check(&event(Outcome::Unknown, false), &context()).is_none());
        let other_error = Outcome::Error(OpError {
            kind: OpErrorKind::InvalidArgument,
            message: "unexpected rank".into(),
        });
        assert!(check(&event(other_error, false), &context()).is_none());
    }
}
