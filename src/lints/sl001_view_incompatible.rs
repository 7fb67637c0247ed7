//! SL001 `view-incompatible`: `view` / `view_as` on a layout where no view exists.
//!
//! PyTorch raises "view size is not compatible with input tensor's size and stride"
//! when the new shape would merge dimensions that are not adjacent in memory (ATen's
//! `computeStride` finds no strides). The lint fires only when *every* layout that can
//! reach the call fails, for every size satisfying the stated assumptions.

use crate::analysis::event::{OpEvent, Outcome};
use crate::analysis::value::format_shape;
use crate::diagnostic::{Applicability, Edit, Fix, Subject};
use crate::ops::OpErrorKind;

use super::explain::name_non_adjacent;
use super::{describe_non_adjacent, Finding, LintContext};

pub fn check<'e>(ev: &'e OpEvent, ctx: &LintContext) -> Option<Finding<'e>> {
    if ev.kind != "view" && ev.kind != "view_as" {
        return None;
    }
    let fails = |o: &crate::analysis::event::AltOutcome| matches!(&o.outcome, Outcome::Error(e) if e.kind == OpErrorKind::ViewIncompatible);
    let holds = ev.holds(fails)?;
    let alt = holds.outcome();
    let input = alt.input.layout.as_ref()?;
    let target = alt
        .target
        .as_ref()
        .map(|t| format_shape(t))
        .unwrap_or_else(|| "the target shape".into());
    // The first line says that the view fails and, in a few words, why; the layout and
    // the arithmetic that decides it are notes.
    let message = match name_non_adjacent(input, alt.target.as_deref(), &ev.assumptions) {
        Some(reason) => format!("`{}` fails: {reason}", ev.op),
        None => format!("`{}` fails: no strides give the target shape", ev.op),
    };
    let layout = format!(
        "the input is {} strides {}, viewed as {target}",
        format_shape(&input.shape),
        format_shape(&input.strides),
    );
    let why = describe_non_adjacent(input, alt.target.as_deref(), &ev.assumptions);
    let mut finding = Finding::new(ev.span, message, Some(holds));
    finding.details = std::iter::once(layout).chain(why).collect();
    finding.help = Some(format!(
        "call `.contiguous()` before `.{}(...)` (an explicit copy), use `.reshape(...)`, or keep the tensor in the memory order the view needs",
        ev.op
    ));
    finding.fix = contiguous_fix(ev, ctx);
    finding.unsafe_fix = reshape_fix(ev, ctx);
    finding.subject = Some(Subject {
        op: ev.op.to_string(),
        layout: input.clone(),
        target: alt.target.clone(),
        semantics: ev.semantics,
        aliases: Vec::new(),
    });
    Some(finding)
}

/// Insert `.contiguous()` before the `.view` of a method call: same values, an explicit copy.
pub(super) fn contiguous_fix(ev: &OpEvent, ctx: &LintContext) -> Option<Fix> {
    super::fixes::insert_contiguous(
        ev,
        ctx,
        &["view", "view_as"],
        "Insert `.contiguous()` before the view",
        Applicability::Safe,
    )
}

/// The unsafe alternative (`--unsafe-fixes`): rewrite the method `view` to `reshape`. Here
/// it copies, as `.contiguous().view` would, but elsewhere `reshape` may return a view
/// that aliases its input, where `view` raised: code that writes into the result could
/// then change the input.
pub(super) fn reshape_fix(ev: &OpEvent, ctx: &LintContext) -> Option<Fix> {
    let (_, name) = ctx.source.method_call(ev.name_span)?;
    let replacement = match name.as_str() {
        "view" => "reshape",
        "view_as" => "reshape_as",
        _ => return None,
    };
    Some(Fix {
        message: format!("Replace `{name}` with `{replacement}`"),
        applicability: Applicability::Unsafe,
        edits: vec![Edit {
            span: ev.name_span,
            content: replacement.into(),
        }],
    })
}
