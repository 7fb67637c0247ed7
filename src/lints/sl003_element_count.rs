//! SL003 `element-count-mismatch`: the target shape of `view`/`reshape` cannot hold the
//! tensor's elements (`shape '[…]' is invalid for input of size …`), two `-1`s, or a
//! negative size other than `-1`.

use crate::analysis::event::{AltOutcome, OpEvent, Outcome};
use crate::diagnostic::{Diagnostic, Severity};
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
    let alt = &ev.outcomes[0];
    let Outcome::Error(err) = &alt.outcome else { return None };
    Some(Diagnostic {
        code: "SL003",
        severity: Severity::Error,
        message: format!("`{}`: {}", ev.op, err.message),
        file: ctx.file.clone(),
        span: ev.span,
        chain: chain_labels(alt),
        notes: notes_for(ev, alt),
        help: Some("the product of the target sizes must equal the number of elements; at most one size may be -1".into()),
        fix: None,
        verify: None,
    })
}
