//! Edits more than one rule proposes: `.contiguous()` written before a method call, where a
//! copy happens (SL001: before a `view` that would fail; SL002: before a reshape that copies).

use crate::analysis::event::OpEvent;
use crate::diagnostic::{Applicability, Edit, Fix};
use crate::ir::Span;

use super::LintContext;

/// Insert `.contiguous()` before the method of `ev`'s call when it is one of `methods`
/// (`x.view(…)` → `x.contiguous().view(…)`); `None` for a function call or another method.
pub(super) fn insert_contiguous(
    ev: &OpEvent,
    ctx: &LintContext,
    methods: &[&str],
    message: &str,
    applicability: Applicability,
) -> Option<Fix> {
    // The `.` that precedes the method name (it may be followed by whitespace/newlines).
    let (dot, name) = ctx.source.method_call(ev.name_span)?;
    if !methods.contains(&name.as_str()) {
        return None;
    }
    Some(Fix {
        message: message.into(),
        applicability,
        edits: vec![Edit {
            span: Span {
                start: dot,
                end: dot,
            },
            content: ".contiguous()".into(),
        }],
    })
}
