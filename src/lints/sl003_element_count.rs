//! SL003 `element-count-mismatch`: the target shape of `view`/`reshape` cannot hold the
//! tensor's elements (`shape '[…]' is invalid for input of size …`), two `-1`s, or a
//! negative size other than `-1`.

use crate::analysis::event::{AltOutcome, OpEvent, Outcome};
use crate::diagnostic::{Diagnostic, Severity};
use crate::layout::{infer_size, Assumptions, Decider, ShapeError};
use crate::ops::OpErrorKind;

use super::{chain_labels, notes_for, LintContext};

pub fn check(ev: &OpEvent, ctx: &LintContext) -> Option<Diagnostic> {
    let is_count_error = |o: &AltOutcome| {
        matches!(&o.outcome, Outcome::Error(e) if matches!(e.kind,
            OpErrorKind::ElementCount | OpErrorKind::TwoInferred | OpErrorKind::InvalidShapeDim))
    };
    if !ev.all(is_count_error) {
        return None;
    }
    // A size the code never names (`_` in `b, h, _, d = x.shape`) is often 1 on purpose;
    // an element-count error must hold even when every named size may be 1.
    if !ev.outcomes.iter().all(|o| fails_with_sizes_of_one(o, ev)) {
        return None;
    }
    let alt = &ev.outcomes[0];
    let Outcome::Error(err) = &alt.outcome else {
        return None;
    };
    Some(Diagnostic {
        code: "SL003",
        severity: Severity::Error,
        message: format!("`{}`: {}", ev.op, err.message),
        file: ctx.file.clone(),
        span: ev.span,
        chain: chain_labels(alt),
        notes: notes_for(ev, crate::analysis::event::Holds::Always(alt), ctx),
        help: Some("the product of the target sizes must equal the number of elements; at most one size may be -1".into()),
        fix: None,
        verify: None,
        subject: None,
    })
}

/// Re-decide the element count with named sizes only assumed `>= 1`.
fn fails_with_sizes_of_one(o: &AltOutcome, ev: &OpEvent) -> bool {
    let (Some(input), Some(target)) = (o.input.layout.as_ref(), o.target.as_ref()) else {
        // No target shape to re-check (e.g. `view_as`): only literal-free errors count.
        return matches!(&o.outcome, Outcome::Error(e) if e.kind == OpErrorKind::TwoInferred || e.kind == OpErrorKind::InvalidShapeDim);
    };
    let weak = Assumptions {
        min_symbolic_size: 1,
        exact_quotients: ev.assumptions.exact_quotients.clone(),
        distinct_sizes: false,
    };
    let d = Decider::new(&weak);
    matches!(infer_size(target, &input.numel(), &d), Err(e) if e != ShapeError::Undecided)
}
