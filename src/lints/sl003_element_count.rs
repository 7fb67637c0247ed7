//! SL003 `element-count-mismatch`: the target shape of `view`/`reshape` cannot hold the
//! tensor's elements (`shape '[…]' is invalid for input of size …`), two `-1`s, or a
//! negative size other than `-1`.

use crate::analysis::event::{AltOutcome, Holds, OpEvent, Outcome};
use crate::layout::{infer_size, Assumptions, Decider, ShapeError};
use crate::ops::{OpErrorKind, OpKind};

use super::{Finding, LintContext, Reports};

/// The kinds whose transfer functions answer an element-count error: the shape changes,
/// and the ops whose operand shapes must agree (joins, splits, products, normalisations).
pub const REPORTS_ON: &[Reports] = &[
    Reports::Kind(OpKind::View),
    Reports::Kind(OpKind::Reshape),
    Reports::Kind(OpKind::Flatten),
    Reports::Kind(OpKind::Unflatten),
    Reports::Kind(OpKind::Ravel),
    Reports::Kind(OpKind::Expand),
    Reports::Kind(OpKind::Split),
    Reports::Kind(OpKind::Chunk),
    Reports::Kind(OpKind::TensorSplit),
    Reports::Kind(OpKind::Unbind),
    Reports::Kind(OpKind::Cat),
    Reports::Kind(OpKind::Stack),
    Reports::Kind(OpKind::Hstack),
    Reports::Kind(OpKind::Vstack),
    Reports::Kind(OpKind::Repeat),
    Reports::Kind(OpKind::Tile),
    Reports::Kind(OpKind::RepeatInterleave),
    Reports::Kind(OpKind::Matmul),
    Reports::Kind(OpKind::Mm),
    Reports::Kind(OpKind::Bmm),
    Reports::Kind(OpKind::Addmm),
    Reports::Kind(OpKind::Baddbmm),
    Reports::Kind(OpKind::Linear),
    Reports::Kind(OpKind::LinearModule),
    Reports::Kind(OpKind::ContiguousResult),
    Reports::Kind(OpKind::EinopsRearrange),
    Reports::Kind(OpKind::EinopsReduce),
    Reports::Kind(OpKind::EinopsRepeat),
];

pub fn check<'e>(ev: &'e OpEvent, _ctx: &LintContext) -> Option<Finding<'e>> {
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
    let message = format!("`{}`: {}", ev.op, err.message);
    let mut finding = Finding::new(ev.span, message, Some(Holds::Always(alt)));
    finding.help = Some("the product of the target sizes must equal the number of elements; at most one size may be -1".into());
    Some(finding)
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
        loop_indices: ev.assumptions.loop_indices.clone(),
    };
    let d = Decider::new(&weak);
    matches!(infer_size(target, &input.numel(), &d), Err(e) if e != ShapeError::Undecided)
}
