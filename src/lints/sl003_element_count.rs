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
        upper_bounds: ev.assumptions.upper_bounds.clone(),
    };
    let d = Decider::new(&weak);
    matches!(infer_size(target, &input.numel(), &d), Err(e) if e != ShapeError::Undecided)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// timm's GCViT global attention: built with `use_global=True` (two projections), its
    /// `else` branch reshapes to three, which fails only where `q_global` is None; with
    /// only the constructor's default stated the finding reads as a false alarm.
    #[test]
    fn a_finding_states_every_branch_the_path_to_it_took() {
        let source = "import torch
from torch import nn

class WindowAttentionGlobal(nn.Module):
    def __init__(self, dim: int, num_heads: int, use_global: bool = True):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.use_global = use_global
        if self.use_global:
            self.qkv = nn.Linear(dim, dim * 2)
        else:
            self.qkv = nn.Linear(dim, dim * 3)

    def forward(self, x, q_global=None):
        B, N, C = x.shape
        if self.use_global and q_global is not None:
            kv = self.qkv(x).reshape(B, N, 2, self.num_heads, self.head_dim)
            q = q_global.reshape(B, N, self.num_heads, self.head_dim)
        else:
            qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim)
        return x
";
        let settings = crate::Settings::default();
        let found: Vec<_> = crate::check_source(Path::new("m.py"), source.into(), &settings)
            .into_iter()
            .filter(|d| d.code == "SL003")
            .collect();
        assert_eq!(found.len(), 1, "{found:?}");
        let notes = found[0].notes.join("\n");
        assert!(
            notes.contains("built with its default `use_global=True`"),
            "{notes}"
        );
        assert!(
            notes.contains("the call is reached only where `q_global` is None"),
            "{notes}"
        );
    }
}
