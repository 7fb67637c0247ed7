//! SL002 `hidden-copy`: `reshape` / `reshape_as` / `flatten` / `ravel` /
//! `einops.rearrange` (and candle's `reshape`) on a layout that cannot be viewed, so the
//! call silently allocates and copies the whole tensor.
//!
//! Which ops count is table data: ops tagged `hidden-copy` in `rules/*.toml`.

use crate::analysis::event::{AltOutcome, OpEvent};
use crate::analysis::value::{format_shape, SymLayout};
use crate::diagnostic::{Applicability, Fix, Subject};
use crate::layout::Dim;
use crate::ops::Semantics;

use super::explain::{copy_cause, describe_non_contiguous, name_non_adjacent, CopyCause};
use super::{describe_non_adjacent, Finding, LintContext};

/// The tag `rules/*.toml` gives the ops that copy silently when no view exists.
pub const HIDDEN_COPY_TAG: &str = "hidden-copy";

pub fn check<'e>(ev: &'e OpEvent, ctx: &LintContext) -> Option<Finding<'e>> {
    if !ev.tags.iter().any(|t| t == HIDDEN_COPY_TAG) {
        return None;
    }
    let holds = ev.holds(|o: &AltOutcome| o.copies.is_yes())?;
    let alt = holds.outcome();
    let input = alt.input.layout.as_ref()?;
    let numel = alt
        .copied_numel
        .as_ref()
        .map(|n| format!("{n} elements"))
        .unwrap_or_else(|| "the whole tensor".into());
    // candle's `reshape` copies whenever its input is not contiguous, whether or not the
    // merged dims could be viewed (spec §10.2); torch and tch-rs copy only when they cannot.
    let (reason, why) = if alt.stacks_list {
        (Some("einops stacks the list first".to_string()), None)
    } else if ev.semantics == Semantics::Candle {
        let reason = Some("candle copies every non-contiguous input".to_string());
        let why = describe_non_contiguous(input, &ev.assumptions).map(|s| {
            format!(
                "candle's `{}` copies every non-contiguous input, and {s}",
                ev.op
            )
        });
        (reason, why)
    } else {
        let target = alt.target.as_deref();
        (
            name_non_adjacent(input, target, &ev.assumptions),
            describe_non_adjacent(input, target, &ev.assumptions),
        )
    };
    // The first line says what is copied and why in a few words; the layout and the
    // arithmetic that decides it are notes.
    let message = match reason {
        Some(reason) => format!("`{}` copies the tensor: {reason}", ev.op),
        None => format!("`{}` copies the tensor", ev.op),
    };
    let target = alt
        .target
        .as_ref()
        .map(|t| format!(", to {}", format_shape(t)))
        .unwrap_or_default();
    let layout = format!(
        "copies {numel} of {} strides {}{target}",
        format_shape(&input.shape),
        format_shape(&input.strides),
    );
    let mut finding = Finding::new(ev.span, message, Some(holds));
    finding.details = std::iter::once(layout).chain(why).collect();
    // What copies: the input, or for einops the permuted intermediate its reshape copies.
    let (copied, shape) = match &alt.copied_reshape {
        Some((copied, shape)) => (copied, Some(shape.as_slice())),
        None => (input, alt.target.as_deref()),
    };
    let cause = copy_cause(copied, shape, &ev.assumptions);
    finding.help = Some(if alt.stacks_list {
        STACKED_LIST_HELP.into()
    } else {
        help_for(cause, ev.semantics, copied, shape)
    });
    if alt.copied_reshape.is_none() && ev.semantics == Semantics::Torch {
        finding.fix = explicit_copy_fix(ev, ctx);
    }
    // What is copied: the input, or for einops the permuted intermediate its final
    // reshape copies (what `--verify` replays).
    finding.subject = Some(match &alt.copied_reshape {
        Some((copied, shape)) => Subject {
            op: ev.op.to_string(),
            layout: copied.clone(),
            target: Some(shape.clone()),
            semantics: ev.semantics,
            aliases: Vec::new(),
        },
        None => Subject {
            op: ev.op.to_string(),
            layout: input.clone(),
            target: alt.target.clone(),
            semantics: ev.semantics,
            aliases: Vec::new(),
        },
    });
    Some(finding)
}

/// Insert `.contiguous()` before the copying method (`x.contiguous().reshape(…)`): the same
/// values and the same one copy, now written where it happens, which marks it intended
/// (SL002 is then silent: the reshape of a contiguous tensor is a view). Unsafe: whether the
/// copy is intended is the author's call, and `--fix` would otherwise silence every SL002.
/// An einops pattern copies after its own permute, which an earlier copy does not avoid.
fn explicit_copy_fix(ev: &OpEvent, ctx: &LintContext) -> Option<Fix> {
    super::fixes::insert_contiguous(
        ev,
        ctx,
        &["reshape", "reshape_as", "flatten", "ravel"],
        "Insert `.contiguous()` to make the copy explicit",
        Applicability::Unsafe,
    )
}

/// What to do about an einops call on a list, which stacks it before the pattern runs.
const STACKED_LIST_HELP: &str = "einops turns a list into one tensor with `torch.stack`, a copy of every tensor in it; where the pattern only moves the stacked axis, `torch.stack(xs, dim=k)` writes the result in its final order with the same one copy, and a list kept as one preallocated tensor (written in place) avoids the copy";

/// What to do instead, by what makes the reshape copy.
fn help_for(
    cause: CopyCause,
    semantics: Semantics,
    copied: &SymLayout,
    target: Option<&[Dim]>,
) -> String {
    if semantics == Semantics::Candle {
        return "candle's `reshape` copies every non-contiguous input: reshape before the `transpose`/`narrow` that made it non-contiguous, or make the copy explicit with `.contiguous()?` where it is intended".into();
    }
    match cause {
        CopyCause::Broadcast { dim } => {
            let mut help = format!(
                "the reshape writes out a broadcast: dim {dim} (size {}) has stride 0 (as `expand` and `meshgrid` return it), so the result holds that many copies of the same elements; keep the broadcast instead (matmul and element-wise ops broadcast by themselves), or make the copy explicit with `.contiguous()` where it is intended",
                copied.shape[dim]
            );
            if repeats_kv_heads(copied, target, dim) {
                help.push_str("; the key/value heads repeated for grouped-query attention can go to `F.scaled_dot_product_attention(q, k, v, enable_gqa=True)` as they are (torch ≥ 2.5)");
            }
            help
        }
        CopyCause::Gap => "a slice or `narrow` left gaps between the elements the reshape merges: reshape before slicing (and slice the result), or make the copy explicit with `.contiguous()` where it is intended".into(),
        CopyCause::Permuted | CopyCause::Other => "the copy allocates a new tensor of the same size; avoid it by producing the tensor in the order the reshape needs (e.g. permute after reshaping, or have the producer write that layout), or make it explicit with `.contiguous()` where it is intended".into(),
    }
}

/// Whether the copy is `repeat_kv`'s: (batch, kv_heads, n_rep, seq, head_dim) with `n_rep`
/// (dim 2) broadcast, merged into the heads of a 4-d (batch, heads, seq, head_dim). Only
/// that broadcast is grouped-query attention, which `enable_gqa` takes unrepeated.
fn repeats_kv_heads(copied: &SymLayout, target: Option<&[Dim]>, broadcast: usize) -> bool {
    let merged_heads = |t: &[Dim]| t.len() == 4 && t[1] == copied.shape[1].mul(&copied.shape[2]);
    copied.rank() == 5 && broadcast == 2 && target.is_some_and(merged_heads)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The SL002 findings of the whole pipeline, as the crate root runs it.
    fn sl002(path: &str, source: &str) -> Vec<crate::diagnostic::Diagnostic> {
        let settings = crate::Settings::default();
        crate::check_source(Path::new(path), source.to_string(), &settings)
            .into_iter()
            .filter(|d| d.code == "SL002")
            .collect()
    }

    fn messages(path: &str, source: &str) -> Vec<String> {
        // The first line and the notes: what the finding says.
        sl002(path, source)
            .into_iter()
            .map(|d| {
                std::iter::once(d.message)
                    .chain(d.notes)
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .collect()
    }

    /// The notes of each SL002 finding.
    fn notes(source: &str) -> Vec<Vec<String>> {
        sl002("m.py", source).into_iter().map(|d| d.notes).collect()
    }

    /// A contiguous view of a parameter is contiguous only if the parameter is: the copy
    /// found after it rests on that, although the chain shown starts at the view.
    #[test]
    fn a_copy_after_a_view_of_a_parameter_names_the_assumption() {
        let assumed = "assumes the function's tensor arguments are contiguous";
        let through_view = notes(
            "def f(x):\n    B, T, C = x.shape\n    y = x.view(B * T, C)\n    return y.t().reshape(-1)\n",
        );
        assert_eq!(through_view.len(), 1, "{through_view:?}");
        assert!(
            through_view[0].iter().any(|n| n == assumed),
            "{through_view:?}"
        );
        // A square `Linear` writes a new tensor of its input's very layout: nothing after it
        // rests on the parameter's layout.
        let through_layer = notes(
            "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self, c):\n        super().__init__()\n        self.proj = nn.Linear(c, c)\n    def forward(self, x):\n        B, T, C = x.shape\n        return self.proj(x).transpose(1, 2).reshape(B, -1)\n",
        );
        assert_eq!(through_layer.len(), 1, "{through_layer:?}");
        assert!(
            !through_layer[0].iter().any(|n| n == assumed),
            "{through_layer:?}"
        );
    }

    /// The help says what to do for the way the reshape copies: a permutation, a broadcast
    /// (`repeat_kv`), a slice's gap.
    #[test]
    fn the_help_follows_the_cause_of_the_copy() {
        let help = |source: &str| -> Vec<String> {
            sl002("m.py", source)
                .into_iter()
                .filter_map(|d| d.help)
                .collect()
        };
        let permuted =
            help("def f(x):\n    B, T, C = x.shape\n    return x.transpose(1, 2).reshape(B, -1)\n");
        assert_eq!(permuted.len(), 1, "{permuted:?}");
        assert!(
            permuted[0].contains("permute after reshaping"),
            "{}",
            permuted[0]
        );
        let broadcast = help(
            "def repeat_kv(hidden_states, n_rep):\n    batch, num_key_value_heads, slen, head_dim = hidden_states.shape\n    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)\n    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)\n",
        );
        assert_eq!(broadcast.len(), 1, "{broadcast:?}");
        assert!(
            broadcast[0].contains("dim 2 (size n_rep) has stride 0"),
            "{}",
            broadcast[0]
        );
        assert!(broadcast[0].contains("enable_gqa=True"), "{}", broadcast[0]);
        // timm's NaFlex patch coordinates: a meshgrid's broadcast flattened, no attention.
        let grid = help("import torch\ndef coords(nh: int, nw: int):\n    y_idx, x_idx = torch.meshgrid(torch.arange(nh), torch.arange(nw), indexing='ij')\n    return torch.stack([y_idx.reshape(-1), x_idx.reshape(-1)], dim=1)\n");
        assert_eq!(grid.len(), 2, "{grid:?}");
        for h in &grid {
            assert!(h.contains("writes out a broadcast"), "{h}");
            assert!(
                !h.contains("grouped-query") && !h.contains("enable_gqa"),
                "{h}"
            );
        }
        let gap = help("import torch\ndef f():\n    x = torch.randn(4, 6, 8)\n    return x[:, :, :4].reshape(4, -1)\n");
        assert_eq!(gap.len(), 1, "{gap:?}");
        assert!(gap[0].contains("reshape before slicing"), "{}", gap[0]);
    }

    /// candle copies any non-contiguous input; torch only when the dims cannot be merged.
    #[test]
    fn the_reason_follows_the_library() {
        let candle = messages(
            "model.rs",
            "use candle_core::{Tensor, D};\nfn f(x: &Tensor) -> candle_core::Result<Tensor> {\n    let (b, t, c) = x.dims3()?;\n    x.transpose(1, 2)?.reshape((b, c * t))\n}\n",
        );
        assert_eq!(candle.len(), 1, "{candle:?}");
        assert!(
            candle[0].contains("candle's `reshape` copies every non-contiguous input, and it is not contiguous (stride(2) = c, where a contiguous tensor has 1)"),
            "{}",
            candle[0]
        );
        let torch = messages(
            "model.py",
            "def f(x):\n    b, t, c = x.shape\n    return x.transpose(1, 2).reshape(b, c * t)\n",
        );
        assert_eq!(torch.len(), 1, "{torch:?}");
        assert!(
            torch[0].contains("which are not adjacent in memory"),
            "{}",
            torch[0]
        );
    }
}
