//! SL004 `invalid-dim`: a dimension argument out of range for the tensor's (known) rank,
//! or a `permute` whose dims are duplicated or of the wrong length.

use crate::analysis::event::{AltOutcome, Holds, OpEvent, Outcome};
use crate::ops::OpErrorKind;

use super::{Finding, LintContext};

pub fn check<'e>(ev: &'e OpEvent, _ctx: &LintContext) -> Option<Finding<'e>> {
    let is_dim_error = |o: &AltOutcome| {
        matches!(&o.outcome, Outcome::Error(e) if matches!(e.kind,
            OpErrorKind::DimOutOfRange | OpErrorKind::InvalidPermutation))
    };
    if !ev.all(is_dim_error) {
        return None;
    }
    let alt = &ev.outcomes[0];
    let Outcome::Error(err) = &alt.outcome else {
        return None;
    };
    let rank = alt.input.layout.as_ref().map(|l| l.shape.len());
    let message = match rank {
        Some(r) => format!("`{}` on a {r}-d tensor: {}", ev.op, err.message),
        None => format!("`{}`: {}", ev.op, err.message),
    };
    Some(Finding::new(ev.span, message, Some(Holds::Always(alt))))
}
