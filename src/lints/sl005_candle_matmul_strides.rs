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
use crate::layout::{
    candle_linear_operands, candle_matmul_check, candle_matmul_operand_check, CandleBackend,
    Decider, Dim, MatmulCheck, MatmulRules, Tri,
};
use crate::ops::{ContractCheck, OpSpec, OpTable};

use super::{Finding, LintContext};

/// The tag `rules/candle.toml` gives the ops whose operands candle's matmul rule governs.
pub const CANDLE_MATMUL_TAG: &str = "candle-matmul";

/// The table parameter of the right-hand operand (`lhs.matmul(&rhs)`: `rhs` is `other`).
const RHS_PARAM: &str = "other";

/// The operands one alternative hands the kernel: the lhs, and the rhs when known.
struct Operands {
    lhs: Option<SymLayout>,
    rhs: Option<SymLayout>,
}

/// One alternative's verdict on one backend.
struct Verdict {
    check: MatmulCheck,
    operands: Operands,
}

pub fn check<'e>(ev: &'e OpEvent, ctx: &LintContext) -> Option<Finding<'e>> {
    if !ev.tags.iter().any(|t| t == CANDLE_MATMUL_TAG) {
        return None;
    }
    let spec = OpTable::candle().call_named(ev.op)?;
    let d = Decider::new(&ev.assumptions);
    // Every backend's verdict, alternative by alternative: a backend rejects the call
    // when every alternative fails its checks — on every path that reaches the call, or
    // on one path whose branches can be named (`self.skip_rope` is true).
    let all: Vec<&AltOutcome> = ev.outcomes.iter().collect();
    let (rejecting, shown, holds) = match rejections(&all, spec, ctx, &d)? {
        (rejecting, Some(shown)) => (rejecting, shown, Holds::Always as fn(_) -> _),
        (_, None) => {
            let (rejecting, shown) = on_a_named_path(ev, spec, ctx, &d)?;
            (rejecting, shown, Holds::OnPath as fn(_) -> _)
        }
    };
    let (alt, verdict) = shown;
    let Verdict { check, operands } = verdict;
    let reason = check.reason.unwrap_or_default();
    let operand = check
        .rejected
        .map_or("an operand".into(), |side| format!("its {side}"));
    let names = |pass: bool| -> Vec<&str> {
        CandleBackend::ALL
            .iter()
            .filter(|b| rejecting.contains(b) != pass)
            .map(|b| b.describe())
            .collect()
    };
    let (failing, passing) = (names(false), names(true));
    let message = if passing.is_empty() {
        format!(
            "`{}` fails on every candle backend: {operand} has a layout the kernels reject",
            ev.op
        )
    } else {
        format!(
            "`{}` fails on {}, passes on {}: {operand} has a layout those kernels reject",
            ev.op,
            failing.join(", "),
            passing.join(", ")
        )
    };
    let mut finding = Finding::new(ev.span, message, Some(holds(alt)));
    let batch_rule = check.batch_rule;
    let at = spec
        .contract
        .iter()
        .filter(|c| c.backends.contains(&ctx.candle_backend))
        .find(|c| match c.check {
            ContractCheck::MatmulBatch => batch_rule,
            ContractCheck::MatmulMatrix(_) => !batch_rule,
            _ => false,
        })
        .map_or("", |c| c.at.as_str());
    finding.details = vec![
        operands_text(&operands),
        reason,
        super::explain::backend_verdicts(&rejecting, &CandleBackend::ALL, at),
    ];
    if let (Some(lhs), Some(rhs)) = (&operands.lhs, &operands.rhs) {
        if shapes_agree(lhs, rhs, &d) == Tri::Unknown {
            finding.details.push(
                "the shapes agree only for some sizes (the contracted dims, the number of matrices): the call runs only for those, and there it is rejected".into(),
            );
        }
    }
    let (_, how) = spec.matmul_rules(ctx.candle_backend)?;
    if how == "linear" {
        finding.details.push(
            "`candle_nn::Linear::forward` runs `x.matmul(&w.t()?)` on this input (candle-nn 0.11.1 linear.rs:43-73; a contiguous 3-d/4-d input is reshaped to 2-d first)".into(),
        );
    }
    // The decisions above used assumptions of their own (sizes >= 2): list them too.
    finding.extra_assumptions = d.used();
    finding.help = Some(
            "make the rejected operand contiguous first (`.contiguous()?`), or produce it in a row-major layout (narrow the rows rather than the columns of a fused projection); set `candle-backend = \"cpu\"` if the code only runs on candle's default CPU build".into(),
        );
    finding.subject = operands.lhs.map(|layout| Subject {
        op: ev.op.to_string(),
        layout,
        target: None,
        semantics: ev.semantics,
        aliases: Vec::new(),
    });
    Some(finding)
}

/// The operands as the finding's first detail: each layout, or why an unknown one does
/// not matter.
fn operands_text(operands: &Operands) -> String {
    let side = |name: &str, layout: &Option<SymLayout>, unknown: &str| match layout {
        Some(l) => format!(
            "{name} {} strides {}",
            format_shape(&l.shape),
            format_shape(&l.strides)
        ),
        None => format!("{name} unknown: {unknown}"),
    };
    let lhs = side(
        "lhs",
        &operands.lhs,
        "no non-empty lhs of matching shape makes the rhs acceptable",
    );
    let rhs = side(
        "rhs",
        &operands.rhs,
        "no rhs of matching shape makes the lhs acceptable",
    );
    format!("{lhs}, {rhs}")
}

/// The backends that reject the call on every one of `outcomes`, and the first failing
/// alternative with its verdict on the configured backend (`None` when that backend
/// accepts some alternative); `None` when the op has no matmul rules.
fn rejections<'e>(
    outcomes: &[&'e AltOutcome],
    spec: &OpSpec,
    ctx: &LintContext,
    d: &Decider,
) -> Option<Rejections<'e>> {
    let mut rejecting = Vec::new();
    let mut shown = None;
    for backend in CandleBackend::ALL {
        let (rules, how) = spec.matmul_rules(backend)?;
        let mut first = None;
        let mut all_fail = !outcomes.is_empty();
        for &alt in outcomes {
            match verdict(alt, how, rules, backend, d) {
                Some(v) if v.check.ok == Tri::No => {
                    first.get_or_insert((alt, v));
                }
                _ => {
                    all_fail = false;
                    break;
                }
            }
        }
        if all_fail {
            rejecting.push(backend);
            if backend == ctx.candle_backend {
                shown = first;
            }
        }
    }
    Some((rejecting, shown))
}

/// The rejecting backends and shown alternative (see [`rejections`]).
type Rejections<'e> = (Vec<CandleBackend>, Option<(&'e AltOutcome, Verdict)>);

/// The first path whose branches can be named (its alternatives carry a condition) on
/// which the configured backend rejects every alternative: the path's alternatives are the
/// outcomes found with the same branches taken.
fn on_a_named_path<'e>(
    ev: &'e OpEvent,
    spec: &OpSpec,
    ctx: &LintContext,
    d: &Decider,
) -> Option<(Vec<CandleBackend>, (&'e AltOutcome, Verdict))> {
    ev.outcomes
        .iter()
        .filter(|o| o.input.condition.is_some())
        .find_map(|named| {
            let path: Vec<&AltOutcome> = ev
                .outcomes
                .iter()
                .filter(|o| o.decisions == named.decisions)
                .collect();
            match rejections(&path, spec, ctx, d)? {
                (rejecting, Some(shown)) => Some((rejecting, shown)),
                _ => None,
            }
        })
}

/// One alternative on one backend: `None` when the call fails for another reason, is
/// undecided, or the operands are not known well enough.
fn verdict(
    alt: &AltOutcome,
    how: &str,
    rules: MatmulRules,
    backend: CandleBackend,
    d: &Decider,
) -> Option<Verdict> {
    let label = backend.to_string();
    let Some(input) = alt.input.layout.as_ref() else {
        return rhs_alone(alt, how, rules, &label, d);
    };
    let operands = match how {
        "linear" => {
            let Outcome::Ok(Some(out)) = &alt.outcome else {
                return None;
            };
            let n = out.shape.last()?;
            let (lhs, rhs) = candle_linear_operands(input, n, d)?;
            Operands {
                lhs: Some(lhs),
                rhs: Some(rhs),
            }
        }
        _ => Operands {
            lhs: Some(input.clone()),
            rhs: rhs_operand(alt).cloned(),
        },
    };
    let lhs = operands.lhs.as_ref()?;
    let check = match &operands.rhs {
        Some(rhs) => {
            // A call that fails anyway, or is undecided, is another lint's business.
            if !matches!(alt.outcome, Outcome::Ok(_)) {
                return None;
            }
            match shapes_agree(lhs, rhs, d) {
                Tri::Yes => candle_matmul_check(lhs, rhs, rules, &label, d),
                Tri::No => return None,
                // Contracted sizes of unrelated names (`q.dim(3)`, `k.dim(3)`): the call
                // runs only where they match, and each operand's strides are tested on
                // their own there — as with a partner of unknown layout.
                Tri::Unknown => each_operand(lhs, rhs, rules, &label, d),
            }
        }
        // The rhs is unknown (`w.t()` of a `w` of unknown rank): the lhs alone decides
        // when it fails for every partner.
        None => {
            if matches!(alt.outcome, Outcome::Error(_)) {
                return None;
            }
            candle_matmul_operand_check(lhs, "lhs", rules, &label, d)
        }
    };
    Some(Verdict { check, operands })
}

/// Each operand's own verdict (see [`candle_matmul_operand_check`]): rejected when either
/// is, accepted when both are.
fn each_operand(
    lhs: &SymLayout,
    rhs: &SymLayout,
    rules: MatmulRules,
    label: &str,
    d: &Decider,
) -> MatmulCheck {
    let left = candle_matmul_operand_check(lhs, "lhs", rules, label, d);
    if left.ok == Tri::No {
        return left;
    }
    let right = candle_matmul_operand_check(rhs, "rhs", rules, label, d);
    if right.ok == Tri::No || left.ok == Tri::Yes {
        return right;
    }
    left
}

/// The lhs is unknown (attention weights from a helper the analysis does not follow, or
/// of a shape it lost) but the rhs is known: candle tests each operand's strides on its
/// own (`ab_skip`, `gemm_config`, the mkl and MLX matrix tests read only that operand's
/// strides and its own two sizes), so the rhs decides when it fails for every lhs — one
/// that is not empty and matches its shape, as the call needs.
fn rhs_alone(
    alt: &AltOutcome,
    how: &str,
    rules: MatmulRules,
    label: &str,
    d: &Decider,
) -> Option<Verdict> {
    if how == "linear" || matches!(alt.outcome, Outcome::Error(_)) {
        return None;
    }
    let rhs = rhs_operand(alt)?.clone();
    let check = candle_matmul_operand_check(&rhs, "rhs", rules, label, d);
    Some(Verdict {
        check,
        operands: Operands {
            lhs: None,
            rhs: Some(rhs),
        },
    })
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
            op: &crate::ops::OpTable::candle().op("matmul").unwrap().name,
            kind: "matmul",
            tags: Vec::leak(vec![CANDLE_MATMUL_TAG.into()]),
            outcomes: vec![AltOutcome {
                input: TensorAlt::new(Some(lhs), None),
                target: None,
                outcome: Outcome::Ok(Some(out)),
                copies: Tri::No,
                copied_numel: None,
                copied_reshape: None,
                stacks_list: false,
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

    /// An unknown rhs (`w.t()` of a `w` of unknown rank): the narrowed lhs fails for every
    /// partner, so it is reported (its note says the rhs is unknown); a contiguous lhs is
    /// not, whatever the rhs may be.
    #[test]
    fn an_unknown_rhs_leaves_the_decision_to_the_lhs() {
        let mut ev = narrowed_q_times_contiguous_k();
        ev.outcomes[0].operands = vec![(RHS_PARAM.into(), None)];
        ev.outcomes[0].outcome = Outcome::Unknown;
        let found = check(&ev, &context(CandleBackend::Cuda)).expect("the lhs decides");
        assert!(
            found.details[0].contains("rhs unknown"),
            "{:?}",
            found.details
        );
        assert!(check(&ev, &context(CandleBackend::Cpu)).is_none());
        let q = sym(&["t", "h"], &[Dim::sym("h"), Dim::lit(1)]);
        let mut ev = matmul_event(q.clone(), q);
        ev.outcomes[0].operands = vec![(RHS_PARAM.into(), None)];
        ev.outcomes[0].outcome = Outcome::Unknown;
        assert!(check(&ev, &context(CandleBackend::Cuda)).is_none());
    }

    /// An unknown lhs (weights of unknown rank): values whose batch dims do not merge fail
    /// for every lhs, on every backend; contiguous values are not reported.
    #[test]
    fn an_unknown_lhs_leaves_the_decision_to_the_rhs() {
        let (t, d) = (Dim::sym("t"), Dim::sym("d"));
        let h = Dim::sym("h");
        // v: a (b, h, t, d) view of a (b, t, h, d) buffer.
        let v = sym(
            &["b", "h", "t", "d"],
            &[t.mul(&h).mul(&d), d.clone(), h.mul(&d), Dim::lit(1)],
        );
        let mut ev = narrowed_q_times_contiguous_k();
        ev.outcomes[0].input = TensorAlt::new(None, None);
        ev.outcomes[0].outcome = Outcome::Unknown;
        ev.outcomes[0].operands = vec![(RHS_PARAM.into(), Some(v))];
        for backend in [CandleBackend::Cuda, CandleBackend::Cpu] {
            let found = check(&ev, &context(backend)).expect("the rhs decides");
            assert!(found.message.contains("its rhs"), "{}", found.message);
            assert!(
                found.details[0].contains("lhs unknown"),
                "{:?}",
                found.details
            );
        }
        let contiguous =
            Layout::contiguous(["b", "h", "t", "d"].iter().map(|s| Dim::sym(s)).collect());
        ev.outcomes[0].operands = vec![(RHS_PARAM.into(), Some(contiguous))];
        assert!(check(&ev, &context(CandleBackend::Cuda)).is_none());
    }

    /// Two paths reach the call: on the one whose branch can be named the lhs fails, on
    /// the other it passes. The finding holds on the named path; with the failing path's
    /// branch unnamed (no condition), nothing is reported.
    #[test]
    fn a_failure_on_a_named_path_is_reported_on_that_path() {
        let mut ev = narrowed_q_times_contiguous_k();
        let mut passing = ev.outcomes[0].clone();
        passing.input = TensorAlt::new(Some(sym(&["t", "h"], &[Dim::sym("h"), Dim::lit(1)])), None);
        passing.decisions = vec!["`flag` is false".into()];
        ev.outcomes[0].decisions = vec!["`flag` is true".into()];
        ev.outcomes.push(passing);
        assert!(check(&ev, &context(CandleBackend::Cuda)).is_none());
        ev.outcomes[0].input.condition = Some("`flag` is true".into());
        let found = check(&ev, &context(CandleBackend::Cuda)).expect("the named path fails");
        assert!(matches!(found.holds, Some(Holds::OnPath(_))));
    }

    /// The message names the backends that reject the call and those that do not.
    #[test]
    fn the_finding_names_the_rejecting_backends() {
        let ev = narrowed_q_times_contiguous_k();
        let found = check(&ev, &context(CandleBackend::Cuda)).expect("cuBLAS rejects it");
        assert!(
            found
                .message
                .contains("fails on CUDA, Metal, mkl/accelerate, passes on CPU (gemm crate)"),
            "{}",
            found.message
        );
    }

    #[test]
    fn mismatched_shapes_are_not_reported() {
        let mut ev = narrowed_q_times_contiguous_k();
        // k rows h + 1 against the lhs's h columns: a shape error, another lint's.
        let h_plus_one = Dim::sym("h").add(&Dim::lit(1));
        let wrong_k = Layout::new(
            vec![h_plus_one, Dim::sym("t")],
            vec![Dim::sym("t"), Dim::lit(1)],
            Dim::lit(0),
        );
        ev.outcomes[0].operands = vec![(RHS_PARAM.into(), Some(wrong_k))];
        assert!(check(&ev, &context(CandleBackend::Cuda)).is_none());
    }

    /// Contracted sizes of unrelated names (`h` and `k`): the call runs only where they
    /// match, and there the narrowed lhs is rejected; a contiguous one is not reported.
    #[test]
    fn undecided_contracted_sizes_leave_each_operand_to_decide() {
        let mut ev = narrowed_q_times_contiguous_k();
        let other_k = sym(&["k", "t"], &[Dim::sym("t"), Dim::lit(1)]);
        ev.outcomes[0].operands = vec![(RHS_PARAM.into(), Some(other_k.clone()))];
        assert!(check(&ev, &context(CandleBackend::Cuda)).is_some());
        assert!(check(&ev, &context(CandleBackend::Cpu)).is_none());
        let q = sym(&["t", "h"], &[Dim::sym("h"), Dim::lit(1)]);
        let mut ev = matmul_event(q, other_k);
        ev.outcomes[0].outcome = Outcome::Ok(None);
        assert!(check(&ev, &context(CandleBackend::Cuda)).is_none());
    }
}
