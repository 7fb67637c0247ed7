//! SL008 `unfused-attention`: attention written out op by op, `softmax(q @ kᵀ · scale +
//! mask) @ v`, that `F.scaled_dot_product_attention` computes fused.
//!
//! The written-out form stores the whole (…, L, S) weight matrix (and the scores before
//! the softmax, and the dropout mask) in memory, once per head and batch; the fused kernels
//! never do. The rule follows the dataflow the interpreter recorded ([`Producer`]) back from
//! the `weights @ v` product:
//!
//! - dropout, dtype conversions and `.contiguous()` after the softmax;
//! - a softmax over the last dim;
//! - before it, dtype conversions, `.contiguous()`, a scale by a number (`* 0.125`,
//!   `/ math.sqrt(d)`), an additive mask or bias, a `masked_fill`;
//! - a product `q @ kᵀ` (`matmul`, `bmm`, `baddbmm`).
//!
//! Which ops play which part is table data (`attention-*` tags in `rules/torch.toml`).
//! Anything else on the way (a `tanh` soft cap, a multiplicative mask, a transpose of the
//! weights) is not what SDPA computes, and the rule stays silent. So it does when the
//! weights or scores are used besides (returned as `attn_weights`, stored), since the fused
//! kernel cannot give them, and when the function also calls
//! `scaled_dot_product_attention` (the written-out form is then its deliberate fallback).
//! Python only; no fix (the rewrite spans several statements).

use crate::analysis::event::{OpEvent, Outcome};
use crate::analysis::value::{format_shape, Producer, SymLayout};
use crate::diagnostic::{Label, Subject};
use crate::ir::{Language, Span};
use crate::ops::OpKind;

use super::{Finding, LintContext};

/// The tag of the products that apply the weights (`weights @ v`); the rule reports on them.
pub const OUTPUT_TAG: &str = "attention-output";
const SCORES_TAG: &str = "attention-scores";
const SOFTMAX_TAG: &str = "attention-softmax";
const SCALE_TAG: &str = "attention-scale";
const BIAS_TAG: &str = "attention-bias";

/// Calls between the scores and the softmax the rule looks through.
const MAX_SCORE_STEPS: usize = 8;

/// One hand-written attention, found back from its `weights @ v`.
struct Attention<'p> {
    scores: &'p Producer,
    softmax: &'p Producer,
    dropout: Option<&'p Producer>,
    scaled: bool,
    masked: bool,
    /// Every call from the scores to the weights, in dataflow order (the scores first).
    calls: Vec<Span>,
}

impl<'p> Attention<'p> {
    /// The steps of another path to the same scores and softmax are taken too.
    fn merge(&mut self, other: Attention<'p>) {
        self.scaled |= other.scaled;
        self.masked |= other.masked;
        if self.dropout.is_none() {
            self.dropout = other.dropout;
        }
        for call in other.calls {
            if !self.calls.contains(&call) {
                self.calls.push(call);
            }
        }
        // Dataflow order is the order the calls finish in.
        self.calls
            .sort_by_key(|c| (c.end, std::cmp::Reverse(c.start)));
    }
}

pub fn check<'e>(ev: &'e OpEvent, ctx: &LintContext) -> Option<Finding<'e>> {
    if ctx.language != Language::Python || !ev.tags.iter().any(|t| t == OUTPUT_TAG) {
        return None;
    }
    // The same attention on every path that reaches the call (whose weights' layout may
    // be unknown: the finding is about the ops, not the layout). Paths may differ in the
    // steps between (an optional mask): the scores and the softmax are the same calls.
    let first = ev.outcomes.first()?;
    let mut attention = attention_from(first.input.made_by.as_deref()?)?;
    for o in &ev.outcomes[1..] {
        let other = attention_from(o.input.made_by.as_deref()?)?;
        if other.scores.span != attention.scores.span
            || other.softmax.span != attention.softmax.span
        {
            return None;
        }
        attention.merge(other);
    }
    let mut calls = attention.calls.clone();
    calls.push(ev.span);
    if calls.iter().any(|s| s.in_other_file()) {
        return None;
    }
    let function = ctx.source.function_of(ev.span.start)?;
    if calls
        .iter()
        .any(|s| ctx.source.function_of(s.start) != Some(function))
    {
        return None;
    }
    let calls_fused = ctx.events.iter().any(|e| {
        e.kind == OpKind::Sdpa.name()
            && !e.span.in_other_file()
            && ctx.source.function_of(e.span.start) == Some(function)
    });
    if calls_fused || !ctx.source.flows_only_along(&calls) {
        return None;
    }
    // The score matrix: the weights' layout, else the scores' own (a mask of unknown
    // shape leaves the weights' unknown; it can only broadcast to the scores').
    let scores_event = ctx.events.iter().find(|e| e.span == attention.scores.span);
    let matrix = first.input.layout.clone().or_else(|| {
        scores_event?
            .outcomes
            .iter()
            .find_map(|o| match &o.outcome {
                Outcome::Ok(Some(l)) => Some(l.clone()),
                _ => None,
            })
    });
    let size = match &matrix {
        Some(l) => format!(" {} ({} elements)", format_shape(&l.shape), numel(l)),
        None => String::new(),
    };
    let scores_text = ctx
        .source
        .written(attention.scores.span)
        .unwrap_or_else(|| "q @ kᵀ".into());
    let message = "attention written out by hand stores the score matrix; `F.scaled_dot_product_attention` does not".to_string();
    let mut finding = Finding::new(ev.span, message, None);
    finding.details = vec![format!(
        "the{size} score matrix is stored between `{scores_text}` (line {}) and this product",
        ctx.source.line(attention.scores.span.start),
    )];
    finding.chain = labels(&attention);
    finding.help = Some(help(&attention, ev, ctx));
    finding.subject = matrix.map(|l| Subject {
        op: attention.softmax.spec.name.clone(),
        layout: l,
        target: None,
        semantics: ev.semantics,
        aliases: Vec::new(),
    });
    Some(finding)
}

/// The attention whose weights `p` computed, if it is one.
fn attention_from(p: &Producer) -> Option<Attention<'_>> {
    let mut after = Vec::new();
    let mut dropout = None;
    let mut cur = p;
    while matches!(
        cur.spec.kind,
        OpKind::Dropout | OpKind::Convert | OpKind::Contiguous
    ) {
        if cur.spec.kind == OpKind::Dropout {
            dropout = Some(cur);
        }
        after.push(cur.span);
        cur = input(cur, 0)?;
    }
    if !cur.tagged(SOFTMAX_TAG) || cur.dim_from_end != Some(1) {
        return None;
    }
    let softmax = cur;
    let mut before = Vec::new();
    let (scores, scaled, masked) = scores_of(input(softmax, 0)?, &mut before, MAX_SCORE_STEPS)?;
    let mut calls = before;
    calls.reverse();
    calls.push(softmax.span);
    calls.extend(after.into_iter().rev());
    Some(Attention {
        scores,
        softmax,
        dropout,
        scaled,
        masked,
        calls,
    })
}

/// The product `q @ kᵀ` behind the softmax's input `p`, looking through scales, masks and
/// conversions; `steps` receives the calls passed, newest first (the scores last). Also
/// says whether a scale and a mask were passed.
fn scores_of<'p>(
    p: &'p Producer,
    steps: &mut Vec<Span>,
    budget: usize,
) -> Option<(&'p Producer, bool, bool)> {
    let budget = budget.checked_sub(1)?;
    let mark = steps.len();
    steps.push(p.span);
    if p.tagged(SCORES_TAG) {
        return Some((p, false, false));
    }
    // A dtype conversion or `.contiguous()` keeps the values.
    if matches!(p.spec.kind, OpKind::Convert | OpKind::Contiguous) {
        return scores_of(input(p, 0)?, steps, budget);
    }
    // A scale by a number: a tensor factor (a multiplicative mask, a learned scale per
    // position) is not what SDPA's `scale` is.
    if p.tagged(SCALE_TAG) && p.numbers_only && p.inputs.len() == 1 {
        return scores_of(input(p, 0)?, steps, budget).map(|(s, _, m)| (s, true, m));
    }
    if p.tagged(BIAS_TAG) {
        // The scores may be either operand (`mask + scores`).
        for i in 0..p.inputs.len() {
            if let Some(found) = input(p, i).and_then(|q| scores_of(q, steps, budget)) {
                return Some((found.0, found.1, true));
            }
        }
    }
    steps.truncate(mark);
    None
}

fn input(p: &Producer, i: usize) -> Option<&Producer> {
    p.inputs.get(i)?.as_deref()
}

fn numel(l: &SymLayout) -> String {
    let mut n = crate::layout::Dim::lit(1);
    for d in &l.shape {
        n = n.mul(d);
    }
    n.to_string()
}

/// The steps of the attention, as the chain under the finding.
fn labels(a: &Attention) -> Vec<Label> {
    let mut out = vec![Label {
        span: a.scores.span,
        message: "the scores, `q @ kᵀ`".into(),
    }];
    out.push(Label {
        span: a.softmax.span,
        message: "their softmax over the keys: the weights".into(),
    });
    if let Some(d) = a.dropout {
        out.push(Label {
            span: d.span,
            message: "dropout on the weights".into(),
        });
    }
    out
}

/// Transposes of the last two dims as written (spaces removed), which SDPA's keys undo.
const LAST_TWO_SWAPPED: [&str; 3] = [".transpose(-2,-1)", ".transpose(-1,-2)", ".mT"];

/// The query, keys and values SDPA takes, in the code's words: the scores' operands
/// (`a @ b` is `softmax(q @ kᵀ)`'s `q` and `kᵀ`; `baddbmm`'s last two) and the operand
/// this product applies the weights to; the keys with their last two dims swapped back.
fn roles(a: &Attention, ev: &OpEvent, ctx: &LintContext) -> Option<[String; 3]> {
    let n = a.scores.inputs.len();
    let scores = ctx.source.operands(a.scores.span, n)?;
    let [query, keys_read] = [&scores[n.checked_sub(2)?], &scores[n - 1]];
    let value = ctx.source.operands(ev.span, 2)?.pop()?;
    let compact: String = keys_read.chars().filter(|c| !c.is_whitespace()).collect();
    let keys = match LAST_TWO_SWAPPED.iter().find(|t| compact.ends_with(*t)) {
        Some(t) => compact[..compact.len() - t.len()].to_string(),
        None if is_atomic(keys_read) => format!("{keys_read}.transpose(-2, -1)"),
        None => format!("({keys_read}).transpose(-2, -1)"),
    };
    Some([query.clone(), keys, value])
}

/// Whether `text` can take a method call as it is (`k`, `self.k`, `k.permute(0, 2, 3, 1)`).
fn is_atomic(text: &str) -> bool {
    let mut depth = 0;
    text.chars().all(|c| {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            _ => {}
        }
        depth > 0 || c.is_alphanumeric() || "_.()[]".contains(c)
    })
}

fn help(a: &Attention, ev: &OpEvent, ctx: &LintContext) -> String {
    let roles = roles(a, ev, ctx);
    let mut args = vec![match &roles {
        Some(r) => r.join(", "),
        None => "q, k, v".to_string(),
    }];
    if a.masked {
        args.push("attn_mask=mask".into());
    }
    if a.dropout.is_some() {
        args.push("dropout_p=p if self.training else 0.0".into());
    }
    args.push(if a.scaled { "scale=scale" } else { "scale=1.0" }.into());
    let first = ctx.source.line(a.calls[0].start);
    let mut help = format!(
        "replace the steps from line {first} to here with `F.scaled_dot_product_attention({})`",
        args.join(", ")
    );
    if roles.is_none() {
        help.push_str(": q as it enters the scores, k the scores' right operand with its last two dims swapped back (`.transpose(-2, -1)`: SDPA takes the keys as (…, S, E)), v as it enters this product");
    }
    if a.scaled {
        help.push_str("; `scale` is the factor the scores are multiplied by (SDPA's default is 1/√E, E = q.size(-1))");
    } else {
        help.push_str(
            "; the scores are not scaled here, hence `scale=1.0` (SDPA's default is 1/√E)",
        );
    }
    if a.masked {
        help.push_str("; an additive mask or bias goes to `attn_mask` as it is, a boolean one is True where attention is allowed (the opposite of `masked_fill`'s), and a causal mask can be `is_causal=True`");
    }
    help.push_str("; the fused kernels also take the strided query, keys and values of a transpose, so a `.contiguous()` before them is not needed");
    help
}

/// The producer a test builds by hand.
#[cfg(test)]
fn leaf(
    spec: &'static crate::ops::OpSpec,
    inputs: Vec<Option<std::sync::Arc<Producer>>>,
) -> std::sync::Arc<Producer> {
    std::sync::Arc::new(Producer::new(spec, Span::default(), inputs, true, Some(1)))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn spec(method: &str) -> &'static crate::ops::OpSpec {
        crate::analysis::tables::OpTables::python()
            .method(method)
            .unwrap_or_else(|| panic!("no method {method}"))
    }

    /// (line, message) of each SL008 finding.
    fn sl008(source: &str) -> Vec<(usize, String)> {
        sl008_help(source)
            .into_iter()
            .map(|(row, message, _)| (row, message))
            .collect()
    }

    /// (line, message, help) of each SL008 finding.
    fn sl008_help(source: &str) -> Vec<(usize, String, String)> {
        let settings = crate::Settings::default();
        crate::check_source(Path::new("m.py"), source.to_string(), &settings)
            .into_iter()
            .filter(|d| d.code == "SL008")
            .map(|d| {
                let row = d.file.location(d.span.start as usize).row;
                let said = std::iter::once(d.message)
                    .chain(d.notes)
                    .collect::<Vec<_>>();
                (row, said.join("\n"), d.help.unwrap_or_default())
            })
            .collect()
    }

    #[test]
    fn the_pattern_is_found_back_from_the_product() {
        let scores = leaf(spec("matmul"), vec![None, None]);
        let softmax = leaf(spec("softmax"), vec![Some(scores)]);
        let a = attention_from(&softmax).expect("attention");
        assert!(!a.scaled && !a.masked && a.dropout.is_none());
        // A tanh soft cap between the scores and the softmax is not SDPA's.
        let scores = leaf(spec("matmul"), vec![None, None]);
        let capped = leaf(spec("tanh"), vec![Some(scores)]);
        let softmax = leaf(spec("softmax"), vec![Some(capped)]);
        assert!(attention_from(&softmax).is_none());
    }

    const BLOCK: &str = "import math
import torch
import torch.nn as nn
import torch.nn.functional as F

class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.drop = nn.Dropout(0.1)
        self.heads = heads

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        att = q @ k.transpose(-2, -1) / math.sqrt(C // self.heads)
        att = att.softmax(dim=-1)
        att = self.drop(att)
        y = att @ v
        return y.transpose(1, 2).reshape(B, T, C)
";

    #[test]
    fn hand_written_attention_is_reported_at_the_product() {
        let found = sl008(BLOCK);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, 19);
        assert!(
            found[0]
                .1
                .contains("the (B, heads, T, T) (B·heads·T² elements) score matrix"),
            "{}",
            found[0].1
        );
    }

    #[test]
    fn weights_used_elsewhere_or_a_fused_path_are_not() {
        let returned = BLOCK.replace(
            "return y.transpose(1, 2).reshape(B, T, C)",
            "return y.transpose(1, 2).reshape(B, T, C), att",
        );
        assert_eq!(sl008(&returned), []);
        let fallback = BLOCK.replace(
            "        y = att @ v\n",
            "        y = att @ v\n        if self.heads > 64:\n            y = F.scaled_dot_product_attention(q, k, v)\n",
        );
        assert_eq!(sl008(&fallback), []);
        let log_weights = BLOCK.replace("att.softmax(dim=-1)", "att.log_softmax(dim=-1)");
        assert_eq!(sl008(&log_weights), []);
        let over_queries = BLOCK.replace("att.softmax(dim=-1)", "att.softmax(dim=-2)");
        assert_eq!(sl008(&over_queries), []);
        let tensor_factor = BLOCK.replace("/ math.sqrt(C // self.heads)", "* x.new_ones(T, T)");
        assert_eq!(sl008(&tensor_factor), []);
    }

    /// Keys laid out (…, E, S) by the code itself (`k.permute(0, 2, 3, 1)`) enter SDPA with
    /// their last two dims swapped back; a scale computed from a parameter that defaults to
    /// an integer is a number.
    #[test]
    fn keys_laid_out_for_the_product_are_swapped_back_in_the_help() {
        let source = BLOCK
            .replace(
                "        self.heads = heads\n",
                "        self.heads = heads\n        self.scale = head_dim ** -0.5\n",
            )
            .replace("def __init__(self, dim, heads):", "def __init__(self, dim, heads, head_dim=64):")
            .replace(
                "q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)",
                "q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).unbind(2)\n        q, v = q.transpose(1, 2), v.transpose(1, 2)\n        k = k.permute(0, 2, 3, 1)",
            )
            .replace("att = q @ k.transpose(-2, -1) / math.sqrt(C // self.heads)", "att = (q @ k) * self.scale");
        let found = sl008_help(&source);
        assert_eq!(found.len(), 1, "{found:?}\n{source}");
        let help = &found[0].2;
        assert!(
            help.contains("F.scaled_dot_product_attention(q, k.transpose(-2, -1), v, dropout_p="),
            "{help}"
        );
        let transposed = &sl008_help(BLOCK)[0].2;
        assert!(
            transposed.contains("F.scaled_dot_product_attention(q, k, v, dropout_p="),
            "{transposed}"
        );
    }

    /// timm's DaViT channel attention: the scores are `kᵀ @ v` and the weights apply to
    /// `qᵀ`, so SDPA's query is `kᵀ`, its keys `vᵀ` and its values `qᵀ` (the operands'
    /// roles, not their names); `k` was scaled before, so the scores are not.
    #[test]
    fn the_rewrite_gives_each_operand_the_role_the_code_gives_it() {
        let source = BLOCK.replace(
            "        att = q @ k.transpose(-2, -1) / math.sqrt(C // self.heads)\n        att = att.softmax(dim=-1)\n        att = self.drop(att)\n        y = att @ v\n",
            "        k = k * 0.125\n        att = k.transpose(-1, -2) @ v\n        att = att.softmax(dim=-1)\n        y = (att @ q.transpose(-1, -2)).transpose(-1, -2)\n",
        );
        let found = sl008_help(&source);
        assert_eq!(found.len(), 1, "{found:?}\n{source}");
        let help = &found[0].2;
        assert!(
            help.contains("`F.scaled_dot_product_attention(k.transpose(-1, -2), v.transpose(-2, -1), q.transpose(-1, -2), scale=1.0)`"),
            "{help}"
        );
    }
}
