//! SL011 `view-of-gradient`: `grad_output.view(...)` in the `backward` of a
//! `torch.autograd.Function`.
//!
//! autograd hands `backward` the gradient of the forward's output as the rest of the graph
//! made it: when the output was consumed through a transpose, a permute or an expand, that
//! gradient is not contiguous, and `view` of it fails ("view size is not compatible with input
//! tensor's size and stride"). The function cannot know how its output will be used, so a
//! view of a gradient as received is a failure waiting for a caller (Megatron-LM #251, apex
//! #1573). Reported only where the view reads the gradient parameter itself, never after
//! `.contiguous()` or another op. The safe fix inserts `.contiguous()` before the view; the
//! unsafe one writes `reshape`, which copies only when it must.

use crate::analysis::event::{AltOutcome, OpEvent};
use crate::ir::Span;

use super::{Finding, LintContext};

pub fn check<'e>(ev: &'e OpEvent, ctx: &LintContext) -> Option<Finding<'e>> {
    if ev.op != "view" || ev.outcomes.is_empty() || !ev.all(gradient_as_received) {
        return None;
    }
    let gradients = ctx.source.autograd_gradients(ev.span.start);
    if gradients.is_empty() {
        return None;
    }
    let (dot, _) = ctx.source.method_call(ev.name_span)?;
    let receiver = ctx.source.written(Span {
        start: ev.span.start,
        end: dot,
    })?;
    if !gradients.contains(&receiver) {
        return None;
    }
    let message = format!(
        "`{receiver}.view(...)` in an autograd `Function.backward` fails whenever autograd hands over a non-contiguous gradient (the forward's output used through a transpose, permute or expand)"
    );
    let mut finding = Finding::new(ev.span, message, None);
    finding.help = Some(format!(
        "use `{receiver}.reshape(...)` (a copy only when the gradient is not contiguous) or `{receiver}.contiguous().view(...)`"
    ));
    // Safe: `.contiguous()` returns a contiguous gradient itself, so code that ran before
    // runs the same; the unsafe alternative `reshape` may change where the copy happens.
    // The same two fixes as SL001's.
    finding.fix = super::sl001_view_incompatible::contiguous_fix(ev, ctx);
    finding.unsafe_fix = super::sl001_view_incompatible::reshape_fix(ev, ctx);
    Some(finding)
}

/// The view reads the parameter as `backward` received it: no op made it.
fn gradient_as_received(o: &AltOutcome) -> bool {
    o.input.made_by.is_none() && o.input.chain.as_deref().is_some_and(|s| s.prev.is_none())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    fn sl011(source: &str) -> Vec<usize> {
        let settings = crate::Settings::default();
        crate::check_source(Path::new("m.py"), source.to_string(), &settings)
            .into_iter()
            .filter(|d| d.code == "SL011")
            .map(|d| d.file.location(d.span.start as usize).row)
            .collect()
    }

    #[test]
    fn only_the_gradient_of_an_autograd_function_as_received_is_reported() {
        let function = "from torch.autograd import Function\n\nclass F(Function):\n    @staticmethod\n    def backward(ctx, grad, other):\n        a = grad.view(-1)\n        b = other.contiguous().view(-1)\n        c = ctx.saved.view(-1)\n        return a, b\n";
        assert_eq!(sl011(function), vec![6]);
        let module = "import torch\n\nclass M(torch.nn.Module):\n    def backward(self, grad):\n        return grad.view(-1)\n";
        assert_eq!(sl011(module), Vec::<usize>::new());
    }
}
