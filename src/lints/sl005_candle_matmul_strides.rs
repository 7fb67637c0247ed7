//! SL005 `candle-matmul-strides`: a candle `matmul` whose operand strides the backend's
//! GEMM cannot take, so the call returns an error (spec §10.3).
//!
//! candle hands each operand to BLAS as a batch of matrices with *one* batch stride and
//! *one* leading dimension. Every backend requires the batch dims to merge into one
//! stride (none, one, or two that are adjacent in memory); cuBLAS (the `cuda` feature) and
//! the `mkl`/`accelerate` CPU builds also require each matrix to be row-major with the
//! leading dimension exactly its width, or column-major likewise. A matrix narrowed on its
//! last dim keeps the full row stride and fails that test even though its last dim is
//! contiguous. The default CPU build (the `gemm` crate) passes arbitrary matrix strides,
//! so the same code can pass every CPU test and fail on the GPU: which build's rule is
//! checked is the `candle-backend` setting (`cuda` by default).
//!
//! Which ops count is table data: ops tagged `candle-matmul` in `rules/candle.toml`. The
//! lint fires only when the shapes agree (a shape mismatch is a different error) and the
//! stride rule fails for every layout that reaches the call, for every size satisfying the
//! assumptions.

use crate::analysis::event::{AltOutcome, Holds, OpEvent, Outcome};
use crate::analysis::value::{format_shape, SymLayout};
use crate::diagnostic::Subject;
use crate::layout::{candle_matmul_ok, Decider, Dim, Tri};

use super::{Finding, LintContext};

/// The tag `rules/candle.toml` gives the ops whose operands candle's matmul rule governs.
pub const CANDLE_MATMUL_TAG: &str = "candle-matmul";

/// The table parameter of the right-hand operand (`lhs.matmul(&rhs)`: `rhs` is `other`).
const RHS_PARAM: &str = "other";

pub fn check<'e>(ev: &'e OpEvent, ctx: &LintContext) -> Option<Finding<'e>> {
    if !ev.tags.iter().any(|t| t == CANDLE_MATMUL_TAG) || ev.unknown_input.is_some() {
        return None;
    }
    let d = Decider::new(&ev.assumptions);
    let mut first: Option<(&AltOutcome, Option<&str>, String)> = None;
    for alt in &ev.outcomes {
        // A call that fails anyway, or is undecided, is another lint's business.
        if !matches!(alt.outcome, Outcome::Ok(_)) {
            return None;
        }
        let lhs = alt.input.layout.as_ref()?;
        let rhs = rhs_operand(alt)?;
        if shapes_agree(lhs, rhs, &d) != Tri::Yes {
            return None;
        }
        let verdict = candle_matmul_ok(lhs, rhs, ctx.candle_backend, &d);
        if verdict.ok != Tri::No {
            return None;
        }
        let reason = verdict.reason.unwrap_or_default();
        first.get_or_insert((alt, verdict.rejected, reason));
    }
    let (alt, rejected, reason) = first?;
    let lhs = alt.input.layout.as_ref()?;
    let rhs = rhs_operand(alt)?;
    // The first line names the backend and the operand; the layouts and candle's own
    // words are notes.
    let operand = rejected.map_or("an operand".into(), |side| format!("its {side}"));
    let message = format!(
        "`{}` fails on candle's {} backend: {operand} has a layout its kernel rejects",
        ev.op, ctx.candle_backend,
    );
    let mut finding = Finding::new(ev.span, message, Some(Holds::Always(alt)));
    finding.details = vec![
        format!(
            "lhs {} strides {}, rhs {} strides {}",
            format_shape(&lhs.shape),
            format_shape(&lhs.strides),
            format_shape(&rhs.shape),
            format_shape(&rhs.strides),
        ),
        reason,
    ];
    // The decisions above used assumptions of their own (sizes >= 2): list them too.
    finding.extra_assumptions = d.used();
    finding.help = Some(
            "make the rejected operand contiguous first (`.contiguous()?`), or produce it in a row-major layout (narrow the rows rather than the columns of a fused projection); set `candle-backend = \"cpu\"` if the code only runs on candle's default CPU build".into(),
        );
    finding.subject = Some(Subject {
        op: ev.op.to_string(),
        layout: lhs.clone(),
        target: None,
        semantics: ev.semantics,
        aliases: Vec::new(),
    });
    Some(finding)
}

/// The right-hand operand's layout, when the analysis knows it.
fn rhs_operand(alt: &AltOutcome) -> Option<&SymLayout> {
    alt.operands
        .iter()
        .find(|(name, _)| name == RHS_PARAM)
        .and_then(|(_, layout)| layout.as_ref())
}

/// candle's shape rule for `matmul` (no broadcasting): the same rank ≥ 2, the same `k`,
/// and the same number of matrices. Only when it holds is a failure about strides.
fn shapes_agree(lhs: &SymLayout, rhs: &SymLayout, d: &Decider) -> Tri {
    let rank = lhs.rank();
    if rank < 2 || rhs.rank() != rank {
        return Tri::No;
    }
    let batch = |l: &SymLayout| {
        l.shape[..rank - 2]
            .iter()
            .fold(Dim::lit(1), |acc, size| acc.mul(size))
    };
    d.eq(&lhs.shape[rank - 1], &rhs.shape[rank - 2])
        .and(d.eq(&batch(lhs), &batch(rhs)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::value::TensorAlt;
    use crate::layout::{CandleBackend, Layout};

    fn sym(shape: &[&str], strides: &[Dim]) -> SymLayout {
        Layout::new(
            shape.iter().map(|s| Dim::sym(s)).collect(),
            strides.to_vec(),
            Dim::lit(0),
        )
    }

    fn matmul_event(lhs: SymLayout, rhs: SymLayout) -> OpEvent {
        let out = Layout::contiguous(vec![lhs.shape[0].clone(), rhs.shape[1].clone()]);
        OpEvent {
            span: Default::default(),
            name_span: Default::default(),
            op: "matmul",
            kind: "matmul",
            tags: Vec::leak(vec![CANDLE_MATMUL_TAG.into()]),
            outcomes: vec![AltOutcome {
                input: TensorAlt::new(Some(lhs), None),
                target: None,
                outcome: Outcome::Ok(Some(out)),
                copies: Tri::No,
                copied_numel: None,
                copied_reshape: None,
                assumptions: Vec::new(),
                operands: vec![(RHS_PARAM.into(), Some(rhs))],
                decisions: Vec::new(),
            }],
            unknown_input: None,
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

    fn context(candle_backend: CandleBackend) -> LintContext<'static> {
        LintContext {
            candle_backend,
            language: crate::ir::Language::Rust,
            source: &crate::lints::NoSource,
            events: &[],
        }
    }

    /// The fixture's fused-QKV split (spec §10.3): `q = qkv.narrow(1, 0, h)` of a
    /// contiguous (t, 3h) tensor is (t, h) with strides (3h, 1): neither row-major (the
    /// leading dimension 3h is not the width h) nor column-major.
    fn narrowed_q_times_contiguous_k() -> OpEvent {
        let h = Dim::sym("h");
        let q = sym(&["t", "h"], &[h.mul(&Dim::lit(3)), Dim::lit(1)]);
        let k_t = sym(&["h", "t"], &[Dim::sym("t"), Dim::lit(1)]);
        matmul_event(q, k_t)
    }

    #[test]
    fn narrowed_lhs_fails_on_cuda_and_mkl_but_not_on_the_default_cpu_build() {
        let ev = narrowed_q_times_contiguous_k();
        let found = check(&ev, &context(CandleBackend::Cuda)).expect("cuBLAS rejects it");
        assert!(found.message.contains("its lhs"), "{}", found.message);
        assert!(
            found.details[1].contains("non-contiguous lhs"),
            "{:?}",
            found.details
        );
        assert!(check(&ev, &context(CandleBackend::Mkl)).is_some());
        assert!(check(&ev, &context(CandleBackend::Cpu)).is_none());
    }

    /// Three batch dims never merge into one batch stride: every backend rejects them,
    /// even contiguous ones (rank 5).
    #[test]
    fn batch_rule_applies_on_every_backend() {
        let shape = ["a", "b", "c", "m", "m"];
        let lhs = Layout::contiguous(shape.iter().map(|s| Dim::sym(s)).collect());
        let ev = matmul_event(lhs.clone(), lhs);
        for backend in [CandleBackend::Cuda, CandleBackend::Mkl, CandleBackend::Cpu] {
            assert!(check(&ev, &context(backend)).is_some(), "{backend}");
        }
    }

    #[test]
    fn contiguous_and_transposed_operands_pass() {
        let q = sym(&["t", "h"], &[Dim::sym("h"), Dim::lit(1)]);
        // k.t() of a contiguous (t, h): column-major (h, t) with strides (1, h).
        let k_t = sym(&["h", "t"], &[Dim::lit(1), Dim::sym("h")]);
        assert!(check(&matmul_event(q, k_t), &context(CandleBackend::Cuda)).is_none());
    }

    #[test]
    fn unknown_rhs_or_mismatched_shapes_are_not_reported() {
        let mut ev = narrowed_q_times_contiguous_k();
        ev.outcomes[0].operands = vec![(RHS_PARAM.into(), None)];
        assert!(check(&ev, &context(CandleBackend::Cuda)).is_none());
        let mut ev = narrowed_q_times_contiguous_k();
        let wrong_k = sym(&["k", "t"], &[Dim::sym("t"), Dim::lit(1)]);
        ev.outcomes[0].operands = vec![(RHS_PARAM.into(), Some(wrong_k))];
        assert!(check(&ev, &context(CandleBackend::Cuda)).is_none());
    }
}
