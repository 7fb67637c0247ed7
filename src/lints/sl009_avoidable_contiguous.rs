//! SL009 `avoidable-contiguous`: `.contiguous()` on a tensor that already is contiguous.
//!
//! `contiguous` returns its input itself when the input already has the layout it asks
//! for, so such a call does nothing. It is not free to read, though: it tells the reader
//! (and reviewers deleting "unneeded" calls later) that a copy may happen here, and it
//! hides which producer the code relies on for its layout.
//!
//! Reported only when the function's own code fixes the layout on every path that reaches
//! the call: a layer's or an op's fresh output, a view of it. A layout that rests on a
//! tensor parameter is never enough, neither taken to be contiguous nor passed by the
//! callers the tree has (the call may be there exactly for a caller that passes a
//! transposed tensor, now or later), nor is one path of several (paths the analysis names
//! apart count when each of them makes the call a no-op).
//! A call whose result is thrown away is SL007's. The fix (Python) deletes the call: safe
//! when the layout holds for all sizes with no assumption at all, unsafe otherwise.
//!
//! Also reported: a `.contiguous()` that copies a tensor whose last dim has stride 1 only to
//! pass it to `F.scaled_dot_product_attention`, which reads such strided input itself (its
//! kernels need a unit stride in the last dim only). The copy can go; the fix, which may
//! change which kernel SDPA picks, is unsafe.

use crate::analysis::event::{AltOutcome, OpEvent};
use crate::analysis::value::{basis_of, format_shape, Basis, Producer};
use crate::diagnostic::{Applicability, Edit, Fix};
use crate::ir::{Language, Span};
use crate::ops::OpKind;

use super::{Finding, LintContext};

pub fn check<'e>(ev: &'e OpEvent, ctx: &LintContext) -> Option<Finding<'e>> {
    if ev.kind != "contiguous" || ev.path.is_some() || ctx.source.discarded_call(ev.span).is_some()
    {
        return None;
    }
    no_op(ev, ctx).or_else(|| copy_only_for_sdpa(ev, ctx))
}

/// `.contiguous()` of a tensor the function's own code made contiguous.
fn no_op<'e>(ev: &'e OpEvent, ctx: &LintContext) -> Option<Finding<'e>> {
    // Every alternative must be a no-op: each path that reaches the call (those the
    // alternatives' conditions name, `attention_mask is None` or not, together) returns
    // its input unchanged.
    if !ev.all(|o| o.copies.is_no()) {
        return None;
    }
    let function = ctx.source.function_of(ev.span.start)?;
    // The input is a tensor written anew in this very function (not a parameter, not an
    // attribute the constructor made, which other code may replace), on every path.
    let made_here = |o: &AltOutcome| match basis_of(&o.input.chain) {
        Basis::NewTensor(at) => ctx.source.function_of(at.start) == Some(function),
        Basis::Parameter | Basis::Unknown => false,
    };
    if !ev.outcomes.iter().all(made_here) {
        return None;
    }
    let holds = ev.holds(|o| o.copies.is_no())?;
    // A new tensor of a shape the analysis does not know is still contiguous.
    let layout = holds.outcome().input.layout.as_ref().map(|l| {
        format!(
            "its input is {} strides {}, contiguous: the call returns it unchanged",
            format_shape(&l.shape),
            format_shape(&l.strides)
        )
    });
    let message = match layout {
        Some(_) => format!(
            "`{}()` does nothing here: its input is already contiguous",
            ev.op
        ),
        None => format!("`{}()` does nothing here: its input is a new tensor", ev.op),
    };
    let mut finding = Finding::new(ev.span, message, Some(holds));
    finding.details = layout.into_iter().collect();
    finding.help = Some(
        "delete the call (the steps above show where the contiguous layout comes from); to state what later code relies on, `assert t.is_contiguous()` does it without a possible copy".into(),
    );
    // Removing the call changes nothing when the layout holds for all sizes; when it rests
    // on an assumption (`n_head divides C`, in the notes), the removal is offered as unsafe.
    let unconditional =
        ev.divisibility.is_empty() && ev.outcomes.iter().all(|o| o.assumptions.is_empty());
    if unconditional {
        finding.fix = removal(ev, ctx, Applicability::Safe);
    } else {
        finding.unsafe_fix = removal(ev, ctx, Applicability::Unsafe);
    }
    Some(finding)
}

/// `.contiguous()` whose copy only `F.scaled_dot_product_attention` reads, of a tensor whose
/// last dim has stride 1 on every path.
fn copy_only_for_sdpa<'e>(ev: &'e OpEvent, ctx: &LintContext) -> Option<Finding<'e>> {
    let unit_last_stride = |o: &AltOutcome| {
        o.input
            .layout
            .as_ref()
            .and_then(|l| l.strides.last())
            .is_some_and(|s| s.as_lit() == Some(1))
    };
    if !ev.all(|o| o.copies.is_yes() && unit_last_stride(o)) {
        return None;
    }
    let made_here = |p: &Option<std::sync::Arc<Producer>>| {
        p.as_ref()
            .is_some_and(|p| p.span == ev.span && p.spec.kind == OpKind::Contiguous)
    };
    // The SDPA call that takes the copy as its query, key or value.
    let sdpa = ctx.events.iter().find(|e| {
        e.kind == OpKind::Sdpa.name()
            && (e.outcomes.iter().any(|o| made_here(&o.input.made_by))
                || e.arguments.iter().take(2).any(made_here))
    })?;
    if !ctx.source.flows_only_along(&[ev.span, sdpa.span]) {
        return None;
    }
    let holds = ev.holds(|o| o.copies.is_yes())?;
    let alt = holds.outcome();
    let input = alt.input.layout.as_ref()?;
    let numel = alt
        .copied_numel
        .as_ref()
        .map(|n| format!("{n} elements of "))
        .unwrap_or_default();
    let message = format!(
        "`{}()` copies only for `F.scaled_dot_product_attention` (line {}), which takes it strided",
        ev.op,
        ctx.source.line(sdpa.span.start),
    );
    let mut finding = Finding::new(ev.span, message, Some(holds));
    finding.details = vec![format!(
        "copies {numel}{} strides {}, whose last dim already has stride 1",
        format_shape(&input.shape),
        format_shape(&input.strides),
    )];
    finding.help = Some(
        "pass the tensor without `.contiguous()`: SDPA's flash, memory-efficient and cuDNN kernels take any batch, head and sequence strides as long as the last dim has stride 1, so the copy buys nothing".into(),
    );
    finding.unsafe_fix = removal(ev, ctx, Applicability::Unsafe);
    Some(finding)
}

/// Deleting `.contiguous()` from `x.contiguous()` (Python; Rust's `?` and call forms are left
/// alone).
fn removal(ev: &OpEvent, ctx: &LintContext, applicability: Applicability) -> Option<Fix> {
    if ctx.language != Language::Python {
        return None;
    }
    let (dot, _) = ctx.source.method_call(ev.name_span)?;
    Some(Fix {
        message: format!("Remove `.{}()`", ev.op),
        applicability,
        edits: vec![Edit {
            span: Span {
                start: dot,
                end: ev.span.end,
            },
            content: String::new(),
        }],
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// (line, has a fix) of each SL009 finding.
    fn sl009(path: &str, source: &str) -> Vec<(usize, bool)> {
        let settings = crate::Settings::default();
        crate::check_source(Path::new(path), source.to_string(), &settings)
            .into_iter()
            .filter(|d| d.code == "SL009")
            .map(|d| (d.file.location(d.span.start as usize).row, d.fix.is_some()))
            .collect()
    }

    #[test]
    fn a_fresh_output_made_contiguous_again_is_reported() {
        let found = sl009(
            "m.py",
            "import torch\n\
             def f(a, b):\n    \
                 c = torch.matmul(a, b).contiguous()\n    \
                 d = c.view(-1).contiguous()\n    \
                 return d\n",
        );
        assert_eq!(found, [(3, true), (4, true)]);
    }

    #[test]
    fn a_parameter_a_permutation_and_one_path_are_not() {
        let found = sl009(
            "m.py",
            "import torch\n\
             def f(x, flag):\n    \
                 y = x.contiguous()\n    \
                 B, T, C = x.shape\n    \
                 z = torch.zeros(B, T, C).transpose(1, 2).contiguous()\n    \
                 w = torch.zeros(B, T, C)\n    \
                 if flag:\n        \
                     w = w.transpose(1, 2)\n    \
                 w = w.contiguous()\n    \
                 torch.zeros(B, T).contiguous()\n    \
                 return y, z, w\n",
        );
        assert_eq!(found, [], "{found:?}");
    }

    #[test]
    fn a_copy_only_sdpa_reads_is_reported_once_its_last_dim_has_stride_one() {
        let found = sl009(
            "m.py",
            "import torch
import torch.nn.functional as F
def attend(x, heads):
    B, T, C = x.shape
    q = x.view(B, T, heads, C // heads).transpose(1, 2).contiguous()
    k = x.view(B, T, heads, C // heads).transpose(1, 2).contiguous()
    v = x.view(B, T, heads, C // heads).transpose(1, 2).transpose(-2, -1).contiguous()
    y = F.scaled_dot_product_attention(q, k, v.transpose(-2, -1))
    return y, k
",
        );
        // q: reported (no fix by default: unsafe); k: also returned; v: the copy makes its
        // last dim's stride 1, which SDPA's kernels need.
        assert_eq!(found, [(5, false)], "{found:?}");
    }

    /// What a layout rests on survives a view: a contiguous view of a parameter, `F.pad` of
    /// one (it keeps the memory format), and a tensor the constructor made (other code may
    /// replace it) are not the function's own.
    #[test]
    fn views_of_what_the_function_did_not_make_are_not_reported() {
        let found = sl009(
            "m.py",
            "import torch
             import torch.nn as nn
             import torch.nn.functional as F
             class M(nn.Linear):
                     def __init__(self, i, o):
                             super().__init__(i, o)
                             self.register_buffer('scale', torch.empty(o, i))
                     def forward(self, x):
                             B, T, C = x.shape
                             a = x.view(B * T, C).contiguous()
                             b = F.pad(x, (0, 1)).contiguous()
                             c = self.scale.view(torch.uint8).contiguous()
                             d = self.scale.t().t().contiguous()
                             return a, b, c, d
",
        );
        assert_eq!(found, [], "{found:?}");
    }
}
