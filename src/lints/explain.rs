//! Shared wording for diagnostics: the chain of layout steps as labels, the
//! assumptions as notes, and which dimensions are not adjacent in memory.

use std::sync::Arc;

use crate::analysis::event::{AltOutcome, Holds, OpEvent};
use crate::analysis::frame::CallContext;
use crate::layout::Assumption;

use super::LintContext;
use crate::analysis::value::{chain_steps, format_layout, rests_on_assumption, Step, SymLayout};
use crate::diagnostic::Label;
use crate::layout::dim::with_display_order;
use crate::layout::{
    blocks_of_two_or_more, infer_size, Assumptions, CandleBackend, Decider, Dim, Tri,
};

/// Runs `f`, which words a finding about `ev`, with its sizes printed in the order the
/// code introduced them: the order they first occur in the shapes of the event's chains,
/// oldest step first, then its inputs and targets, then in their strides (see
/// [`with_display_order`], which may run `f` twice).
pub fn in_source_order<R>(ev: &OpEvent, f: impl Fn() -> R) -> R {
    let mut layouts: Vec<&SymLayout> = Vec::new();
    let mut targets: Vec<&Dim> = Vec::new();
    for o in &ev.outcomes {
        let steps: Vec<_> = chain_steps(&o.input.chain).collect();
        layouts.extend(steps.iter().rev().filter_map(|s| s.layout.as_ref()));
        layouts.extend(o.input.layout.as_ref());
        targets.extend(o.target.iter().flatten());
    }
    let shapes = layouts.iter().flat_map(|l| l.shape.iter());
    let strides = layouts.iter().flat_map(|l| l.strides.iter());
    with_display_order(shapes.chain(targets).chain(strides), f)
}

/// Labels for the steps that produced the input layout, oldest first (at most 6).
pub fn chain_labels(alt: &AltOutcome) -> Vec<Label> {
    let mut steps: Vec<Label> = chain_steps(&alt.input.chain)
        .map(|s| Label {
            span: s.span,
            message: format!("{}: {}", s.what, format_layout(&s.layout)),
        })
        .collect();
    steps.truncate(6);
    steps.reverse();
    steps
}

/// Says in the chain's labels which steps ran in another function than the flagged call:
/// "`.transpose(1, 2)` in `split_heads` (called at line 12): …" for a step inside a helper
/// the flagged function called, "in `Block.forward`" for one in the function that called
/// the flagged call's own. `chain` holds [`chain_labels`] of `alt` first (a lint may have
/// added labels after them, which are left as they are).
pub fn place_steps(chain: &mut [Label], ev: &OpEvent, alt: &AltOutcome, ctx: &LintContext) {
    let mut steps: Vec<&Step> = chain_steps(&alt.input.chain).collect();
    steps.truncate(6);
    steps.reverse();
    for (label, step) in chain.iter_mut().zip(steps) {
        let Some(rest) = label.message.strip_prefix(step.what.as_str()) else {
            continue;
        };
        if label.span != step.span {
            continue;
        }
        if let Some(place) = step_place(step, ev, ctx) {
            label.message = format!("{} {place}{rest}", step.what);
        }
    }
}

/// Where `step` ran, when not in the function of the call `ev` flags: a function on the
/// way to it (the notes say which call led there) is only named; a helper it called also
/// says the call.
fn step_place(step: &Step, ev: &OpEvent, ctx: &LintContext) -> Option<String> {
    let same = |a: Option<&Arc<CallContext>>, b: Option<&Arc<CallContext>>| match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        _ => false,
    };
    let on_the_way: Vec<Option<&Arc<CallContext>>> =
        std::iter::successors(ev.context.as_ref(), |c| c.parent.as_ref())
            .map(|c| c.parent.as_ref())
            .collect();
    if same(step.context.as_ref(), ev.context.as_ref()) {
        return None;
    }
    if on_the_way.iter().any(|c| same(*c, step.context.as_ref())) {
        let function = match &step.context {
            Some(call) => &call.callee,
            // The function the analysis started from: the outermost caller.
            None => {
                let outer = std::iter::successors(ev.context.as_ref(), |c| c.parent.as_ref());
                &outer.last()?.caller
            }
        };
        return Some(format!("in `{function}`"));
    }
    let call = step.context.as_ref()?;
    let line = ctx.source.line(call.call_span.start);
    Some(match same(call.parent.as_ref(), ev.context.as_ref()) {
        true => format!("in `{}` (called at line {line})", call.callee),
        false => format!(
            "in `{}` (called from `{}` at line {line})",
            call.callee, call.caller
        ),
    })
}

/// Notes listing what a finding rests on: the call it was found through, the path, the
/// assumptions about sizes, and the conditions under which it holds.
///
/// `extra` are assumptions the lint's own decisions used besides the interpreter's.
pub fn notes_for(
    ev: &OpEvent,
    holds: Holds,
    extra: &[Assumption],
    ctx: &LintContext,
) -> Vec<String> {
    let alt = holds.outcome();
    let mut items: Vec<String> = Vec::new();
    let mut unless: Vec<String> = Vec::new();
    let mut solved: Vec<String> = Vec::new();
    let mut defaults: Vec<(String, Vec<String>)> = Vec::new();
    let extra = extra.iter().filter(|a| !alt.assumptions.contains(a));
    for a in alt
        .assumptions
        .iter()
        .chain(extra)
        .chain(ev.divisibility.iter())
    {
        match a {
            Assumption::Distinct { a, b } => {
                let s = format!("{a} == {b}");
                if !unless.contains(&s) {
                    unless.push(s);
                }
            }
            Assumption::DefaultArgument { class, name, value } => {
                let s = format!("`{name}={value}`");
                match defaults.iter_mut().find(|(c, _)| c == class) {
                    Some((_, args)) if !args.contains(&s) => args.push(s),
                    Some(_) => {}
                    None => defaults.push((class.clone(), vec![s])),
                }
            }
            Assumption::SolvedSize { name, value } => solved.push(format!(
                "`{name}` is taken to be {value}, the one value the element count allows (with any other value the call fails as well)"
            )),
            Assumption::ElementCountMatches => {
                let s = "if the target has the input's element count (with any other count the call fails as well)".to_string();
                if !solved.contains(&s) {
                    solved.push(s);
                }
            }
            other => {
                let s = other.to_string();
                if !items.contains(&s) {
                    items.push(s);
                }
            }
        }
    }
    let param = rests_on_assumption(&alt.input.chain);
    let mut notes = Vec::new();
    // Steps that rest on an assumption of their own say so in their label.
    for step in chain_steps(&alt.input.chain) {
        if let Some(at) = step.what.find(" (assuming ") {
            let assumption = step.what[at + 2..].trim_end_matches(')');
            notes.push(format!("at {}: {assumption}", &step.what[..at]));
        }
    }
    if let Some(context) = &ev.context {
        notes.push(format!(
            "found through the call from `{}` at line {}",
            context.caller,
            ctx.source.line(context.call_span.start)
        ));
    }
    if param {
        notes.push("assumes the function's tensor arguments are contiguous".to_string());
    }
    if !items.is_empty() {
        notes.push(format!("holds for all sizes with {}", items.join(", ")));
    }
    if !unless.is_empty() {
        notes.push(format!("holds unless {}", unless.join(" or ")));
    }
    notes.extend(solved);
    for (class, args) in defaults {
        let plural = if args.len() > 1 { "s" } else { "" };
        notes.push(format!(
            "holds for `{class}` built with its default{plural} {}",
            args.join(", ")
        ));
    }
    match holds {
        Holds::OnPath(o) => {
            if let Some(c) = &o.input.condition {
                notes.push(format!("holds on the path where {c}"));
            }
        }
        Holds::Always(_) if ev.outcomes.len() > 1 => notes.push(format!(
            "holds on all {} paths that reach this call",
            ev.outcomes.len()
        )),
        Holds::Always(_) => {}
    }
    if let Some(path) = &ev.path {
        notes.push(format!("holds on the path where {path}"));
    }
    if let Some(reached) = reached_only_where(ev) {
        notes.push(format!("the call is reached only where {reached}"));
    }
    notes
}

/// The branches every path to the call took (`q_global` is None), which the paths' own
/// conditions leave out: they name only what tells the paths apart.
fn reached_only_where(ev: &OpEvent) -> Option<String> {
    let first = &ev.outcomes.first()?.decisions;
    let common = ev.outcomes.iter().fold(first.len(), |n, o| {
        n.min(
            first
                .iter()
                .zip(&o.decisions)
                .take_while(|(a, b)| a == b)
                .count(),
        )
    });
    let mut taken: Vec<&str> = Vec::new();
    for d in &first[..common] {
        if !taken.contains(&&**d) {
            taken.push(d);
        }
    }
    (!taken.is_empty()).then(|| taken.join(" and "))
}

/// Why a view/reshape to `target` needs a copy: the first group of input dims that the
/// target merges into one size although they are not adjacent in memory, e.g.
/// "merges dims 2 (n_head) and 3 (D), which are not adjacent in memory (stride(2) = T·D,
/// but size(3)·stride(3) = D)". Falls back to the first non-adjacent pair when the target's
/// grouping cannot be worked out.
/// Why `layout` is not contiguous, e.g. "it is not contiguous (stride(1) = 3·H, where a
/// contiguous tensor has H)": the innermost dim whose stride differs from the contiguous one.
pub fn describe_non_contiguous(layout: &SymLayout, assumptions: &Assumptions) -> Option<String> {
    let d = Decider::new(assumptions);
    let mut contiguous_stride = Dim::lit(1);
    for i in (0..layout.shape.len()).rev() {
        let size = &layout.shape[i];
        if !d.eq_lit(size, 1).is_yes() {
            if d.ne(&layout.strides[i], &contiguous_stride).is_yes() {
                return Some(format!(
                    "it is not contiguous (stride({i}) = {}, where a contiguous tensor has {})",
                    layout.strides[i], contiguous_stride
                ));
            }
            contiguous_stride = contiguous_stride.mul(size);
        }
    }
    None
}

pub fn describe_non_adjacent(
    layout: &SymLayout,
    target: Option<&[Dim]>,
    assumptions: &Assumptions,
) -> Option<String> {
    let found = first_non_adjacent(layout, target, assumptions)?;
    Some(match found {
        NonAdjacent::Pair { i, j, merged } => {
            let needed = layout.shape[j].mul(&layout.strides[j]);
            let which = format!(
                "dims {i} ({}) and {j} ({})",
                layout.shape[i], layout.shape[j]
            );
            let why = format!(
                "stride({i}) = {}, but size({j})·stride({j}) = {needed}",
                layout.strides[i]
            );
            if merged {
                format!("it merges {which}, which are not adjacent in memory ({why})")
            } else {
                format!("{which} are not adjacent in memory ({why})")
            }
        }
        NonAdjacent::Blocks { blocks, fewer } => format!(
            "its dims lie in {blocks} blocks of memory that no view can merge, and {fewer} cannot cover them one by one"
        ),
    })
}

/// The first pair of dims that no view can merge, in a few words for a first line:
/// "dims 2 (n_head) and 3 (D) are not adjacent in memory" (the arithmetic that shows it is
/// [`describe_non_adjacent`]'s).
pub fn name_non_adjacent(
    layout: &SymLayout,
    target: Option<&[Dim]>,
    assumptions: &Assumptions,
) -> Option<String> {
    // A size spelled by a long expression is left to the notes: the line stays readable.
    const LONGEST_NAMED_SIZE: usize = 24;
    let dim = |d: usize| {
        let size = layout.shape[d].to_string();
        match size.chars().count() <= LONGEST_NAMED_SIZE {
            true => format!("{d} ({size})"),
            false => d.to_string(),
        }
    };
    Some(match first_non_adjacent(layout, target, assumptions)? {
        NonAdjacent::Pair { i, j, .. } => {
            format!("dims {} and {} are not adjacent in memory", dim(i), dim(j))
        }
        NonAdjacent::Blocks { blocks, .. } => {
            format!("its dims lie in {blocks} blocks of memory no view can merge")
        }
    })
}

/// Why a reshape copies, for the help that says what to do instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyCause {
    /// Dims out of memory order (a `permute`/`transpose` before the merge).
    Permuted,
    /// A dim of stride 0 (an `expand`) is merged: the copy materialises the broadcast.
    Broadcast { dim: usize },
    /// Dims in memory order with a gap between them (a slice or `narrow` of the inner dim).
    Gap,
    /// Not worked out.
    Other,
}

/// What makes the reshape of `layout` to `target` copy: the first pair of dims it merges
/// that are not adjacent in memory, classified by their strides.
pub fn copy_cause(
    layout: &SymLayout,
    target: Option<&[Dim]>,
    assumptions: &Assumptions,
) -> CopyCause {
    let Some(NonAdjacent::Pair { i, j, .. }) = first_non_adjacent(layout, target, assumptions)
    else {
        return CopyCause::Other;
    };
    let d = Decider::new(assumptions);
    for dim in [i, j] {
        if d.eq_lit(&layout.strides[dim], 0).is_yes() {
            return CopyCause::Broadcast { dim };
        }
    }
    // Dims in memory order (strides decreasing, outermost first) with a merge that still
    // fails leave a gap; dims out of that order were permuted.
    let strides: Vec<&Dim> = (0..layout.rank())
        .filter(|&k| !d.eq_lit(&layout.shape[k], 1).is_yes())
        .map(|k| &layout.strides[k])
        .collect();
    let in_order = strides.windows(2).all(|w| d.lt(w[1], w[0]).is_yes());
    let out_of_order = strides.windows(2).any(|w| d.lt(w[0], w[1]).is_yes());
    match (in_order, out_of_order) {
        (true, _) => CopyCause::Gap,
        (_, true) => CopyCause::Permuted,
        _ => CopyCause::Other,
    }
}

/// The first dims a view/reshape to `target` cannot merge.
enum NonAdjacent {
    /// Dims `i` and `j` (the next dim of size other than 1): stride(i) ≠ size(j)·stride(j).
    /// `merged`: the target merges them (else the target's grouping was not worked out).
    Pair { i: usize, j: usize, merged: bool },
    /// The dims lie in more blocks of memory than the target has dims.
    Blocks { blocks: usize, fewer: String },
}

fn first_non_adjacent(
    layout: &SymLayout,
    target: Option<&[Dim]>,
    assumptions: &Assumptions,
) -> Option<NonAdjacent> {
    let d = Decider::new(assumptions);
    let is_one = |x: &Dim| d.eq_lit(x, 1).is_yes();
    let apart = |i: usize, j: usize| {
        let needed = layout.shape[j].mul(&layout.strides[j]);
        d.ne(&layout.strides[i], &needed).is_yes()
    };
    // Resolve a `-1` so the grouping sees real sizes.
    let resolved = target.and_then(|t| infer_size(t, &layout.numel(), &d).ok());
    if let Some(target) = resolved.as_deref() {
        for group in merged_groups(&layout.shape, target, &d) {
            let dims: Vec<usize> = group
                .into_iter()
                .filter(|&i| !is_one(&layout.shape[i]))
                .collect();
            if let Some(w) = dims.windows(2).find(|w| apart(w[0], w[1])) {
                return Some(NonAdjacent::Pair {
                    i: w[0],
                    j: w[1],
                    merged: true,
                });
            }
        }
    }
    if resolved.is_none() {
        if let Some(blocks) = blocks_of_two_or_more(layout, &d)
            .filter(|&b| b > 1 && target.is_none_or(|t| t.len() < b))
        {
            let fewer = match target {
                Some(t) => format!("the {} dims of the target", t.len()),
                None => "a target of fewer dims".to_string(),
            };
            return Some(NonAdjacent::Blocks { blocks, fewer });
        }
    }
    let dims: Vec<usize> = (0..layout.shape.len())
        .filter(|&i| !is_one(&layout.shape[i]))
        .collect();
    dims.windows(2)
        .find(|w| apart(w[0], w[1]))
        .map(|w| NonAdjacent::Pair {
            i: w[0],
            j: w[1],
            merged: false,
        })
}

/// Groups of consecutive input dims whose product equals a run of consecutive target
/// sizes, by shapes alone; only groups of two or more input dims are returned.
fn merged_groups(shape: &[Dim], target: &[Dim], d: &Decider) -> Vec<Vec<usize>> {
    let mut groups = Vec::new();
    let (mut i, mut j) = (0usize, 0usize);
    while i < shape.len() && j < target.len() {
        let (mut a, mut b) = (shape[i].clone(), target[j].clone());
        let mut members = vec![i];
        let (mut ni, mut nj) = (i + 1, j + 1);
        let mut guard = 0;
        while d.eq(&a, &b).is_no() && guard < 64 {
            guard += 1;
            match d.lt(&a, &b) {
                Tri::Yes if ni < shape.len() => {
                    a = a.mul(&shape[ni]);
                    members.push(ni);
                    ni += 1;
                }
                Tri::No if nj < target.len() => {
                    b = b.mul(&target[nj]);
                    nj += 1;
                }
                _ => return groups,
            }
        }
        if !d.eq(&a, &b).is_yes() {
            return groups;
        }
        if members.len() > 1 {
            groups.push(members);
        }
        i = ni;
        j = nj;
    }
    groups
}

/// Which candle backends reject a call and which accept it, as a note: `rejecting` from a
/// contract of `rules/candle.toml`, among the backends the op runs on (`runs_on`: a
/// CUDA-only kernel accepts nothing elsewhere), `at` the place in candle's source of the
/// check that fails on the configured backend.
pub fn backend_verdicts(
    rejecting: &[CandleBackend],
    runs_on: &[CandleBackend],
    at: &str,
) -> String {
    let names = |pass: bool| -> Vec<String> {
        CandleBackend::ALL
            .iter()
            .filter(|b| runs_on.contains(b) && rejecting.contains(b) != pass)
            .map(|b| b.describe().to_string())
            .collect()
    };
    let (fails, passes) = (names(false), names(true));
    let mut note = format!("fails on {}", fails.join(", "));
    if !passes.is_empty() {
        note.push_str(&format!("; no error on {}", passes.join(", ")));
    }
    format!("{note} (the check on the configured backend: {at})")
}

/// Where a finding's first line names the backends: nothing when every backend the op
/// runs on rejects the call, else " on <backends>".
pub fn backends_clause(rejecting: &[CandleBackend], runs_on: &[CandleBackend]) -> String {
    if runs_on.iter().all(|b| rejecting.contains(b)) {
        return String::new();
    }
    let names: Vec<String> = CandleBackend::ALL
        .iter()
        .filter(|b| rejecting.contains(b))
        .map(|b| b.describe().to_string())
        .collect();
    format!(" on {}", names.join(", "))
}
