//! Counting what the analysis understood at the call sites the layout rules are about (see
//! `crate::coverage`): a site is *decided* when some analysis of it (the function on its
//! own, or through one of its callers) knew every alternative of its input and decided the
//! op's outcome; otherwise it is *unknown*, for the reason of its first undecided analysis.
//!
//! The reasons come from the interpreter: an event carries why its input was unknown
//! ([`OpEvent::unknown_input`], set where the unknown value arose); an outcome left
//! undecided on a known input is told apart here, from the target and the operands, only
//! for the sites counted.

use rustc_hash::FxHashMap as HashMap;

use crate::analysis::event::{AltOutcome, OpEvent, Outcome, UnknownReason};
use crate::coverage::{OpFamily, SiteCounts};
use crate::ir::{Language, Span};
use crate::layout::Tri;
use crate::ops::OpKind;

use super::prefilter::ReportedOps;
use super::sl002_hidden_copy::HIDDEN_COPY_TAG;
use super::sl005_candle_matmul_strides::CANDLE_MATMUL_TAG;

/// The sites of `events` (one file's), by family.
pub fn count_sites(events: &[OpEvent], language: Language) -> SiteCounts {
    let ops = ReportedOps::get(language);
    let requires_contiguous = super::registered("SL006");
    // Per site: its family, and `None` once decided, else the first reason seen.
    let mut sites: HashMap<(Span, &str), (OpFamily, Option<UnknownReason>)> = HashMap::default();
    let mut order: Vec<(Span, &str)> = Vec::new();
    for ev in events {
        let family = if ops.reports(requires_contiguous, ev.op) {
            OpFamily::RequiresContiguous
        } else {
            match family_of(ev) {
                Some(family) => family,
                None => continue,
            }
        };
        let undecided = undecided(ev, family);
        let key = (ev.span, ev.op);
        match sites.get_mut(&key) {
            Some((_, reason)) => {
                if reason.is_some() {
                    *reason = undecided.and(*reason);
                }
            }
            None => {
                order.push(key);
                sites.insert(key, (family, undecided));
            }
        }
    }
    let mut counts = SiteCounts::default();
    for key in order {
        let (family, reason) = sites[&key];
        counts.record(family, reason.map(UnknownReason::describe));
    }
    counts
}

/// The family of a layout rule's op, by its kind and tags (the registry's selectors).
fn family_of(ev: &OpEvent) -> Option<OpFamily> {
    let tagged = |tag: &str| ev.tags.iter().any(|t| t == tag);
    let kind = OpKind::from_name(ev.kind);
    if kind == Some(OpKind::View) || tagged(HIDDEN_COPY_TAG) {
        return Some(OpFamily::ShapeChange);
    }
    let matmul = matches!(
        kind,
        Some(OpKind::Matmul | OpKind::Mm | OpKind::Bmm | OpKind::Addmm | OpKind::Baddbmm)
    );
    (matmul || tagged(CANDLE_MATMUL_TAG)).then_some(OpFamily::Matmul)
}

/// Why this analysis of the call did not decide it; `None` when it did.
fn undecided(ev: &OpEvent, family: OpFamily) -> Option<UnknownReason> {
    if let Some(why) = ev.unknown_input {
        return Some(why);
    }
    if ev.outcomes.is_empty() {
        return Some(UnknownReason::Unmodelled);
    }
    ev.outcomes
        .iter()
        .find_map(|o| undecided_alternative(o, family))
}

fn undecided_alternative(o: &AltOutcome, family: OpFamily) -> Option<UnknownReason> {
    let decided = match (&o.outcome, family) {
        (Outcome::Error(_), _) => true,
        // Whether it copies is the question for a shape change (SL002), not its result.
        (Outcome::Ok(_), OpFamily::ShapeChange) => o.copies != Tri::Unknown,
        (Outcome::Ok(result), OpFamily::Matmul) => result.is_some(),
        (Outcome::Ok(_), OpFamily::RequiresContiguous) => o.input.layout.is_some(),
        (Outcome::Unknown, _) => false,
    };
    if decided {
        return None;
    }
    let Some(input) = &o.input.layout else {
        return Some(UnknownReason::UnknownRank);
    };
    if o.operands.iter().any(|(_, layout)| layout.is_none()) {
        return Some(UnknownReason::UnknownOperand);
    }
    if family == OpFamily::ShapeChange {
        let Some(target) = &o.target else {
            return Some(UnknownReason::UnreadableTarget);
        };
        let input_symbols: Vec<String> = input.shape.iter().flat_map(|d| d.symbols()).collect();
        let unrelated = target
            .iter()
            .flat_map(|d| d.symbols())
            .any(|s| !input_symbols.contains(&s));
        if unrelated {
            return Some(UnknownReason::UnrelatedTargetSize);
        }
    }
    Some(UnknownReason::UndecidedComparison)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::value::TensorAlt;
    use crate::layout::{Dim, Layout};

    fn event(
        op: &'static str,
        kind: &'static str,
        target: Option<Vec<Dim>>,
        unknown: Option<UnknownReason>,
    ) -> OpEvent {
        let input = Layout::contiguous(vec![Dim::sym("B"), Dim::sym("C")]);
        OpEvent {
            span: Span { start: 0, end: 1 },
            name_span: Default::default(),
            op,
            kind,
            tags: &[],
            outcomes: vec![AltOutcome {
                target,
                ..AltOutcome::bare(
                    TensorAlt::new(Some(input), None),
                    Outcome::Unknown,
                    Tri::Unknown,
                    Vec::new(),
                )
            }],
            unknown_input: unknown,
            divisibility: Default::default(),
            assumptions: Default::default(),
            aliases: Default::default(),
            semantics: crate::ops::Semantics::Torch,
            from_caller: false,
            context: None,
            path: None,
            write: None,
            arguments: Vec::new(),
        }
    }

    #[test]
    fn a_target_size_of_its_own_is_unrelated_and_a_known_one_undecided() {
        let unrelated = event(
            "view",
            "view",
            Some(vec![Dim::sym("n"), Dim::lit(-1)]),
            None,
        );
        let related = event(
            "view",
            "view",
            Some(vec![Dim::sym("C"), Dim::sym("B")]),
            None,
        );
        assert_eq!(
            undecided(&unrelated, OpFamily::ShapeChange),
            Some(UnknownReason::UnrelatedTargetSize)
        );
        assert_eq!(
            undecided(&related, OpFamily::ShapeChange),
            Some(UnknownReason::UndecidedComparison)
        );
    }

    #[test]
    fn a_site_is_decided_when_one_of_its_analyses_is() {
        let mut decided = event("view", "view", None, None);
        decided.outcomes[0].outcome = Outcome::Ok(None);
        decided.outcomes[0].copies = Tri::No;
        let unknown = event("view", "view", None, Some(UnknownReason::UnresolvedCall));
        let counts = count_sites(&[unknown.clone(), decided], Language::Python);
        let shape = &counts.families[&OpFamily::ShapeChange];
        assert_eq!((shape.reached, shape.decided, shape.unknown), (1, 1, 0));
        let counts = count_sites(&[unknown], Language::Python);
        let shape = &counts.families[&OpFamily::ShapeChange];
        assert_eq!((shape.reached, shape.unknown), (1, 1));
        assert_eq!(
            shape.top_reasons(),
            vec![(UnknownReason::UnresolvedCall.describe(), 1)]
        );
    }
}
