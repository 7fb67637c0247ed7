//! SL004 `invalid-dim`: a dimension argument out of range for the tensor's (known) rank,
//! or a `permute` whose dims are duplicated or of the wrong length.

use crate::analysis::event::{AltOutcome, OpEvent, Outcome};
use crate::diagnostic::{Diagnostic, Severity};
use crate::ops::OpErrorKind;

use super::{chain_labels, notes_for, LintContext};

pub fn check(ev: &OpEvent, ctx: &LintContext) -> Option<Diagnostic> {
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
    Some(Diagnostic {
        code: "SL004",
        severity: Severity::Error,
        message,
        file: ctx.file.clone(),
        span: ev.span,
        chain: chain_labels(alt),
        notes: notes_for(ev, crate::analysis::event::Holds::Always(alt), ctx),
        help: None,
        fix: None,
        verify: None,
        subject: None,
    })
}
