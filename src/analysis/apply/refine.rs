//! Deciding an op on one alternative of its input: the transfer function under the path's
//! facts, then, while the outcome stays unknown, the refiners in order — sizes the op
//! needs equal, an element-wise op's first operand, a view's block count, and the harder
//! ways to decide a view/reshape — each stating what it rests on.

use crate::layout::dim::ExactQuotient;
use crate::layout::{Assumption, Decider, Dim, Tri};
use crate::ops::schema::{ParamSpec, ParamType, Variadic};
use crate::ops::{self, ArgValue, OpKind, OpResult, OpSpec};

use super::super::value::SymLayout;
use super::{target_param, ApplyCtx};

/// An op decided on one alternative of its input.
pub(super) struct Decided {
    pub transfer: ops::Transfer<Dim>,
    /// The target shape, where the op has one (a view's, as solved).
    pub target: Option<Vec<Dim>>,
    /// What the outcome rests on.
    pub assumptions: Vec<Assumption>,
    /// The step's text, when a refiner assumed something that the step must say.
    pub what: Option<String>,
}

impl Decided {
    /// Decided without assumptions (or not decided at all).
    pub fn plain(transfer: ops::Transfer<Dim>, target: Option<Vec<Dim>>) -> Decided {
        Decided {
            transfer,
            target,
            assumptions: Vec::new(),
            what: None,
        }
    }
}

/// Is the op's result still unknown, so that a refiner may try?
fn undecided_result(t: &ops::Transfer<Dim>) -> bool {
    matches!(t.result, OpResult::Unknown | OpResult::UnknownTensor)
}

/// Decide `spec` on `bound` (its input's layout known), refining an unknown outcome; `what`
/// is the step's text. Learned equalities and exact quotients go to `ctx`.
pub(super) fn decide(
    ctx: &mut ApplyCtx,
    spec: &'static OpSpec,
    bound: &ops::BoundArgs<Dim>,
    what: &str,
) -> Decided {
    let d = Decider::new(&ctx.facts.assumptions);
    let mut t = ops::apply(spec, bound, &d);
    ctx.bounds.extend(d.take_learned_bounds());
    let mut target = ops::target_shape(spec, bound);
    ctx.quotients
        .extend(inferred_quotients(spec, &t, target.as_deref()));
    let mut step_what = None;
    if undecided_result(&t) {
        if let Some((t2, bound2, equal)) = assume_required_equalities(spec, bound, &d) {
            t = t2;
            target = ops::target_shape(spec, &bound2);
            ctx.learned.extend(equal);
        }
    }
    if undecided_result(&t) {
        if let Some(l) = first_operand_decides(spec, bound, &d) {
            t = ops::Transfer {
                result: OpResult::Tensor(l),
                copies: Tri::No,
                copied_numel: None,
                copied_reshape: None,
            };
            step_what = Some(format!(
                "{what} (assuming its operands of unknown shape broadcast to its first operand's shape)"
            ));
        }
    }
    if undecided_result(&t) {
        if let Some(t2) = decide_by_block_count(spec, bound, &d) {
            t = t2;
        }
    }
    let mut solved: Vec<Assumption> = Vec::new();
    let harder = match t.result {
        OpResult::Unknown => decide_harder(ctx, spec, bound, &mut solved)
            .or_else(|| candle_copy_whatever_the_target(ctx, spec, bound)),
        _ => None,
    };
    let (transfer, target, mut assumptions) = match harder {
        Some((t2, d2, solved_target)) => (t2, solved_target.or(target), d2),
        None => (t, target, d.used()),
    };
    for s in solved {
        if !assumptions.contains(&s) {
            assumptions.push(s);
        }
    }
    Decided {
        what: carried_assumption(step_what, what, &assumptions),
        transfer,
        target,
        assumptions,
    }
}

/// The step's text, naming the assumption the layout it gives rests on where a later
/// finding must state it: an op's own assumptions die with its event, its output lives on
/// (`x[:, i:i + 4]` whose bounds were taken as written).
fn carried_assumption(
    step_what: Option<String>,
    what: &str,
    assumptions: &[Assumption],
) -> Option<String> {
    let Some(slice) = assumptions
        .iter()
        .find(|a| matches!(a, Assumption::SliceWithin { .. }))
    else {
        return step_what;
    };
    let what = step_what.as_deref().unwrap_or(what);
    Some(format!("{what} (assuming {slice})"))
}

/// An element-wise op whose other operands' layouts are unknown, when its first tensor
/// operand alone decides the output (TensorIterator sorts the dims by asking the operands in
/// turn, and the first one whose strides differ decides: a first operand with no size-1 dim
/// and pairwise different, nonzero strides decides every comparison): the output has its
/// shape, in its memory order — assuming the other operands broadcast to that shape without
/// enlarging it (with every size ≥ 2 they can only add leading dims), as the step states.
/// Only a first operand of rank ≥ 3 counts: `self.weight * x` has a rank-1 weight first.
/// candle's broadcasting ops write a fresh row-major output of the broadcast shape, so
/// there the first operand decides whatever its strides (`scores.broadcast_add(bias)`).
fn first_operand_decides(
    spec: &OpSpec,
    bound: &ops::BoundArgs<Dim>,
    d: &Decider,
) -> Option<SymLayout> {
    let candle = spec.semantics == ops::Semantics::Candle;
    if spec.kind != OpKind::Elementwise || !(candle || spec.semantics == ops::Semantics::Torch) {
        return None;
    }
    if !matches!(bound.get("inplace"), None | Some(ArgValue::Bool(false))) {
        return None;
    }
    let mut first: Option<&SymLayout> = None;
    let mut unknown = false;
    for p in spec.params.iter().filter(|p| p.variadic == Variadic::No) {
        if !matches!(
            p.ty,
            ParamType::Tensor | ParamType::TensorOrScalar | ParamType::TensorOrNumber
        ) {
            continue;
        }
        match bound.get(&p.name) {
            Some(ArgValue::Tensor(Some(l))) if l.rank() > 0 && first.is_none() => {
                if unknown {
                    // An operand of unknown layout comes first: it would decide.
                    return None;
                }
                first = Some(l);
            }
            Some(ArgValue::Tensor(None)) | Some(ArgValue::Unknown) => unknown = true,
            _ => {}
        }
    }
    let first = first?;
    // Parameters of a layer (a weight, a bias, a scale) are the low-rank operands that the
    // activations broadcast *to*; only a first operand with batch dims is taken to be the
    // full-size one.
    if !unknown || first.rank() < 3 {
        return None;
    }
    let n = first.rank();
    if candle {
        if first.shape.iter().any(|s| !d.eq_lit(s, 1).is_no()) {
            return None;
        }
        return Some(SymLayout::contiguous(first.shape.clone()));
    }
    for i in 0..n {
        if !d.eq_lit(&first.shape[i], 1).is_no() || !d.eq_lit(&first.strides[i], 0).is_no() {
            return None;
        }
        for j in i + 1..n {
            if !d.eq(&first.strides[i], &first.strides[j]).is_no() {
                return None;
            }
        }
    }
    crate::layout::elementwise::elementwise_output(&[first], d).ok()
}

/// The exact quotients a `view`/`reshape` or an einops call showed: a `-1` solved to `X/h`
/// (a split axis `(h d)` of `X`) means the call only succeeds when `h` divides `X`, so past
/// it `X/h` is a size like `X // h`.
fn inferred_quotients(
    spec: &OpSpec,
    t: &ops::Transfer<Dim>,
    target: Option<&[Dim]>,
) -> Vec<ExactQuotient> {
    // einops raises unless a split axis divides exactly (`b n (h d)` with `h=heads`): a
    // quotient among the sizes of its result is exact.
    if let (
        OpKind::EinopsRearrange | OpKind::EinopsReduce | OpKind::EinopsRepeat,
        OpResult::Tensor(l),
    ) = (spec.kind, &t.result)
    {
        return l.shape.iter().filter_map(symbol_quotient).collect();
    }
    let (OpKind::View | OpKind::Reshape, OpResult::Tensor(l), Some(target)) =
        (spec.kind, &t.result, target)
    else {
        return Vec::new();
    };
    target
        .iter()
        .zip(&l.shape)
        .filter(|(t, _)| t.as_lit() == Some(-1))
        .filter_map(|(_, solved)| symbol_quotient(solved))
        .collect()
}

fn symbol_quotient(size: &Dim) -> Option<ExactQuotient> {
    size.as_symbol_quotient().map(|(x, h)| (Dim::sym(&x), h))
}

/// Sizes an op needs to be equal to succeed, where the algebra cannot decide whether they
/// are: `expand` of a dim of size ≥ 2 to another named size (it must be the same size), and
/// element-wise operands whose dims of size ≥ 2 line up (they must match to broadcast), the
/// contracted dims of a matrix product.
/// The program only continues past the call if they are equal, so the op is decided with
/// them equal; the interpreter then learns the equalities. `None` when there are none, or
/// deciding with them does not help.
fn assume_required_equalities(
    spec: &OpSpec,
    bound: &ops::BoundArgs<Dim>,
    d: &Decider,
) -> Option<DecidedWithEqualities> {
    let mut required = Required::default();
    match spec.kind {
        OpKind::Expand => required.expanded_sizes(spec, bound, d)?,
        OpKind::Elementwise => required.broadcast_sizes(spec, bound, d),
        kind if kind.is_product() => required.contracted_sizes(spec, bound, d)?,
        OpKind::EinopsRearrange | OpKind::EinopsReduce | OpKind::EinopsRepeat => {
            required.einops_group_sizes(spec, bound, d)
        }
        OpKind::Split => required.split_sizes(bound, d)?,
        OpKind::View | OpKind::Reshape if spec.semantics == ops::Semantics::Candle => {
            required.reshaped_input_size(spec, bound, d)?
        }
        _ => return None,
    }
    let Required { mut equal, entries } = required;
    if equal.is_empty() && entries.is_empty() {
        return None;
    }
    let bound = with_sizes_equal(spec, bound, &entries, &equal)?;
    let t = ops::apply(spec, &bound, d);
    // A product's result leaves out the contracted size, so the product is decided under
    // its equalities without learning them: learned, they would rewrite the sizes of every
    // path, and a path whose key came from a layer of unknown output holds fresh symbols.
    if spec.kind.is_product() {
        equal.clear();
    }
    match t.result {
        OpResult::Tensor(_) => Some((t, bound, equal)),
        _ => None,
    }
}

/// The sizes an op needs equal (see [`assume_required_equalities`]).
#[derive(Default)]
struct Required {
    equal: Vec<(Dim, Dim)>,
    /// Shape entries to decide the op with (operand, dim, size) where neither side of an
    /// equality is a symbol to rewrite.
    entries: Vec<(String, usize, Dim)>,
}

/// Is `s` a size other than 1?
fn not_one(d: &Decider, s: &Dim) -> bool {
    d.eq_lit(s, 1).is_no()
}

/// Can the algebra not tell whether `a` and `b` are equal?
fn undecided(d: &Decider, a: &Dim, b: &Dim) -> bool {
    d.eq(a, b) == Tri::Unknown
}

impl Required {
    /// `expand` of a dim of size ≥ 2 to another named size: it must be the same size.
    /// `None` when the target has fewer dims than the input.
    fn expanded_sizes(
        &mut self,
        spec: &OpSpec,
        bound: &ops::BoundArgs<Dim>,
        d: &Decider,
    ) -> Option<()> {
        let input = bound.get("input").and_then(ArgValue::as_layout)?;
        let target = ops::target_shape(spec, bound)?;
        let (rank, n) = (input.rank(), target.len());
        if n < rank {
            return None;
        }
        for (i, t) in target.iter().enumerate() {
            let Some(k) = (i + rank).checked_sub(n) else {
                continue;
            };
            let s = &input.shape[k];
            if t.as_lit() != Some(-1) && not_one(d, s) && undecided(d, s, t) {
                self.equal.push((s.clone(), t.clone()));
            }
        }
        Some(())
    }

    /// Element-wise operands whose dims of size ≥ 2 line up: they must match to broadcast.
    fn broadcast_sizes(&mut self, spec: &OpSpec, bound: &ops::BoundArgs<Dim>, d: &Decider) {
        let layouts: Vec<(&str, &SymLayout)> = spec
            .params
            .iter()
            .filter_map(|p| Some((p.name.as_str(), bound.get(&p.name)?.as_layout()?)))
            .collect();
        // candle's same-shape ops (`a - b`, not `broadcast_sub`) need every size equal to
        // its partner's, 1 included: `(b, 1, C) - (b, t, C)` runs only where t = 1.
        let same_shape = spec.variant.as_deref() == Some("same_shape");
        for (x, (_, a)) in layouts.iter().enumerate() {
            for (name_b, b) in &layouts[x + 1..] {
                for k in 1..=a.rank().min(b.rank()) {
                    let (sa, sb) = (&a.shape[a.rank() - k], &b.shape[b.rank() - k]);
                    let must_match = same_shape || (not_one(d, sa) && not_one(d, sb));
                    if !(must_match && undecided(d, sa, sb)) {
                        continue;
                    }
                    if single_symbol(sa).is_none() && single_symbol(sb).is_none() {
                        // `scores + bias` of (…, H·W, H·W) and (h, r², r²): no symbol
                        // to rewrite, so the later operand takes the size.
                        self.entries
                            .push((name_b.to_string(), b.rank() - k, sa.clone()));
                    } else {
                        self.equal.push((sa.clone(), sb.clone()));
                    }
                }
            }
        }
    }

    /// A product: the left operand's last dim is the size the right one's rows contract
    /// with, and batch dims of size ≥ 2 line up (`q @ k` of keys reshaped to (…, E, S)).
    fn contracted_sizes(
        &mut self,
        spec: &OpSpec,
        bound: &ops::BoundArgs<Dim>,
        d: &Decider,
    ) -> Option<()> {
        let (left, right) = match spec.kind {
            OpKind::Matmul => ("input", "other"),
            OpKind::Addmm => ("mat1", "mat2"),
            OpKind::Baddbmm => ("batch1", "batch2"),
            _ => ("input", "mat2"),
        };
        let a = bound.get(left).and_then(ArgValue::as_layout)?;
        let b = bound.get(right).and_then(ArgValue::as_layout)?;
        let (ra, rb) = (a.rank(), b.rank());
        if ra == 0 || rb == 0 {
            return None;
        }
        // A 1-D right operand contracts with its only dim.
        let rows = rb.saturating_sub(2);
        let (sa, sb) = (&a.shape[ra - 1], &b.shape[rows]);
        if undecided(d, sa, sb) {
            self.equal.push((sa.clone(), sb.clone()));
        }
        for k in 3..=ra.min(rb) {
            let (sa, sb) = (&a.shape[ra - k], &b.shape[rb - k]);
            if not_one(d, sa) && not_one(d, sb) && undecided(d, sa, sb) {
                self.equal.push((sa.clone(), sb.clone()));
            }
        }
        Some(())
    }

    /// `rearrange(x, "b (h p) -> …", p=p)`: einops raises unless `p` divides the dim, so
    /// past the call the dim is `p` times a size of its own, named `H/p`; `b h (x y) d`
    /// with `x=h, y=w`: the axis is `h·w`, or einops raises.
    fn einops_group_sizes(&mut self, spec: &OpSpec, bound: &ops::BoundArgs<Dim>, d: &Decider) {
        for (length, k, check) in ops::einops_undecided_groups(spec, bound, d) {
            if single_symbol(&length).is_none() {
                continue;
            }
            match check {
                ops::einops::GroupCheck::Divides => {
                    let quotient = Dim::sym(&format!("{length}/{k}"));
                    self.equal.push((length, k.mul(&quotient)));
                }
                ops::einops::GroupCheck::Equals => self.equal.push((length, k)),
            }
        }
    }

    /// candle's `reshape` of an input with one size the target does not mention (`c` of a
    /// `(b, t, c)` input reshaped to `(b, t, self.num_heads, self.head_dim)`, whose sizes
    /// come from struct fields): the element counts must match, so past the call `c` is the
    /// target's count over the input's other sizes (`num_heads·head_dim`) — when that
    /// quotient is exact and `c` is one symbol used nowhere else in the input's shape.
    fn reshaped_input_size(
        &mut self,
        spec: &OpSpec,
        bound: &ops::BoundArgs<Dim>,
        d: &Decider,
    ) -> Option<()> {
        let input = bound.get("input").and_then(ArgValue::as_layout)?;
        let target = ops::target_shape(spec, bound)?;
        if target.iter().any(|t| t.as_lit() == Some(-1)) {
            return None;
        }
        let target_symbols: Vec<String> = target.iter().flat_map(|t| t.symbols()).collect();
        let mut free = input.shape.iter().enumerate().filter(|(_, s)| {
            !s.is_lit() && s.symbols().iter().all(|x| !target_symbols.contains(x))
        });
        let (index, size) = free.next()?;
        if free.next().is_some() {
            return None;
        }
        let name = single_symbol(size)?;
        let others = input
            .shape
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != index)
            .try_fold(Dim::lit(1), |acc, (_, s)| {
                (!s.symbols().contains(&name)).then(|| acc.mul(s))
            })?;
        let count = target.iter().fold(Dim::lit(1), |acc, t| acc.mul(t));
        let value = count.floordiv(&others);
        if value.mul(&others) != count || !undecided(d, size, &value) {
            return None;
        }
        self.equal.push((value, size.clone()));
        Some(())
    }

    /// `split([a, b, c], dim)`: the sizes must sum to the dim's size.
    fn split_sizes(&mut self, bound: &ops::BoundArgs<Dim>, d: &Decider) -> Option<()> {
        let input = bound.get("input").and_then(ArgValue::as_layout)?;
        let ArgValue::IntList(items) = bound.get("split_size")? else {
            return None;
        };
        let dim = bound.get("dim").and_then(ArgValue::as_i64)?;
        let d_ix = crate::layout::wrap_dim::wrap_existing_dim(dim, input.rank()).ok()?;
        let sum = items
            .iter()
            .map(ArgValue::as_size)
            .try_fold(Dim::lit(0), |acc, s| Some(acc.add(&s?)))?;
        let size = &input.shape[d_ix];
        if undecided(d, size, &sum) {
            self.equal.push((sum, size.clone()));
        }
        Some(())
    }
}

/// `bound` with the shape `entries` set and each equality's symbol side rewritten into the
/// other everywhere in the arguments; `None` when an equality has no symbol side.
fn with_sizes_equal(
    spec: &OpSpec,
    bound: &ops::BoundArgs<Dim>,
    entries: &[(String, usize, Dim)],
    equal: &[(Dim, Dim)],
) -> Option<ops::BoundArgs<Dim>> {
    let mut bound = bound.clone();
    for (operand, dim, size) in entries {
        if let Some(ArgValue::Tensor(Some(l))) = bound.get(operand) {
            let mut l = l.clone();
            l.shape[*dim] = size.clone();
            bound.set(operand, ArgValue::Tensor(Some(l)));
        }
    }
    for (a, b) in equal {
        let (name, with) = match (single_symbol(b), single_symbol(a)) {
            (Some(n), _) => (n, a.clone()),
            (None, Some(n)) => (n, b.clone()),
            _ => return None,
        };
        bound = substitute_args(&bound, &spec.params, &name, &with);
    }
    Some(bound)
}

/// An op decided with sizes taken equal: its transfer, the arguments it was decided on, and
/// the equalities.
type DecidedWithEqualities = (ops::Transfer<Dim>, ops::BoundArgs<Dim>, Vec<(Dim, Dim)>);

/// The symbol a size is, when it is exactly one symbol.
fn single_symbol(d: &Dim) -> Option<String> {
    let syms = d.symbols();
    match syms.as_slice() {
        [s] if *d == Dim::sym(s) => Some(s.clone()),
        _ => None,
    }
}

/// The arguments with symbol `name` replaced by `with` in every size and layout.
fn substitute_args(
    bound: &ops::BoundArgs<Dim>,
    params: &[ParamSpec],
    name: &str,
    with: &Dim,
) -> ops::BoundArgs<Dim> {
    fn sub(v: &ArgValue<Dim>, name: &str, with: &Dim) -> ArgValue<Dim> {
        let layout = |l: &SymLayout| SymLayout {
            shape: l.shape.iter().map(|d| d.substitute(name, with)).collect(),
            strides: l.strides.iter().map(|d| d.substitute(name, with)).collect(),
            offset: l.offset.substitute(name, with),
        };
        match v {
            ArgValue::Int(d) => ArgValue::Int(d.substitute(name, with)),
            ArgValue::IntList(items) => {
                ArgValue::IntList(items.iter().map(|i| sub(i, name, with)).collect())
            }
            ArgValue::Tensor(Some(l)) => ArgValue::Tensor(Some(layout(l))),
            ArgValue::TensorList(ls) => {
                ArgValue::TensorList(ls.iter().map(|l| l.as_ref().map(layout)).collect())
            }
            other => other.clone(),
        }
    }
    let mut out = bound.clone();
    for p in params {
        if let Some(v) = bound.get(&p.name) {
            out.set(&p.name, sub(v, name, with));
        }
    }
    out
}

/// A transfer decided by [`decide_harder`], the assumptions it rests on, and the target
/// sizes it solved (when it solved one).
type HarderDecision = (ops::Transfer<Dim>, Vec<Assumption>, Option<Vec<Dim>>);

/// When a view/reshape cannot be decided as written, two more ways to decide it, each
/// stating what it rests on (`solved` receives the statement):
/// - **one unrelated size** (`view(B, T, self.all_head_size)` of `(B, T, H, D)`): either the
///   element count differs — the call fails anyway — or that size is the quotient of the
///   element count by the other sizes, like a `-1`;
/// - **up to an equality**: a call that fails for every size except where two independent
///   sizes are equal (`x.transpose(1, 2).view(B, T, C)` of `(B, T, C)`, unless `T == C`) is
///   decided assuming distinct sizes differ.
fn decide_harder(
    ctx: &ApplyCtx,
    spec: &OpSpec,
    bound: &ops::BoundArgs<Dim>,
    solved: &mut Vec<Assumption>,
) -> Option<HarderDecision> {
    if !matches!(spec.kind, OpKind::View | OpKind::Reshape) {
        return None;
    }
    let param = target_param(spec);
    let input = bound.get("input").and_then(ArgValue::as_layout)?.clone();
    let target = ops::target_shape(spec, bound)?;
    let mut bound = bound.clone();
    let mut equation = None;
    let mut solved_target = None;
    if let Some((index, free)) = single_free_size(&input, &target) {
        let mut as_minus_one: Vec<ArgValue<Dim>> =
            target.iter().map(|d| ArgValue::Int(d.clone())).collect();
        as_minus_one[index] = ArgValue::Int(Dim::lit(-1));
        if !bound.set(param, ArgValue::IntList(as_minus_one)) {
            return None;
        }
        let others = target
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != index)
            .fold(Dim::lit(1), |acc, (_, d)| acc.mul(d));
        let value = input.numel().floordiv(&others);
        equation = Some(Assumption::SolvedSize {
            name: free.to_string(),
            value: value.to_string(),
        });
        let mut with_value = target.clone();
        with_value[index] = value;
        solved_target = Some(with_value);
        let d = Decider::new(&ctx.facts.assumptions);
        let t = ops::apply(spec, &bound, &d);
        if !matches!(t.result, OpResult::Unknown) {
            let mut used = d.used();
            used.extend(equation.clone());
            solved.extend(equation);
            return Some((t, used, solved_target));
        }
    }
    let mut distinct = (*ctx.facts.assumptions).clone();
    distinct.distinct_sizes = true;
    let d = Decider::new(&distinct);
    let t = ops::apply(spec, &bound, &d);
    match t.result {
        // Only a failure or a copy is worth stating under the extra assumption; not an
        // element count that differs only because its sizes are unrelated names (a count
        // the code got right is the usual case, and `contiguous_view_result` relies on it).
        OpResult::Error(ref e) if e.kind != ops::OpErrorKind::ElementCount => {}
        OpResult::Tensor(_) if t.copies.is_yes() => {}
        _ => return None,
    }
    let mut used = d.used();
    used.extend(equation.clone());
    solved.extend(equation);
    Some((t, used, solved_target))
}

/// `view`/`reshape` whose target the analysis cannot read in full (`view(batch_size,
/// seq_len, -1)` with sizes of unknown value) but whose number of dims it can: when that is
/// fewer than the input's blocks ([`too_few_dims_for_blocks`](crate::layout::too_few_dims_for_blocks)), no view exists
/// whatever the sizes are, so `view` fails and `reshape` copies (if the element count
/// matches; with any other count both fail). PyTorch semantics only (candle's `reshape`
/// copies every non-contiguous input anyway).
fn decide_by_block_count(
    spec: &OpSpec,
    bound: &ops::BoundArgs<Dim>,
    d: &Decider,
) -> Option<ops::Transfer<Dim>> {
    if spec.semantics != ops::Semantics::Torch
        || !matches!(spec.kind, OpKind::View | OpKind::Reshape)
    {
        return None;
    }
    let input = bound.get("input").and_then(ArgValue::as_layout)?;
    let ArgValue::IntList(items) = bound.get(target_param(spec))? else {
        return None;
    };
    let items = match items.as_slice() {
        [ArgValue::IntList(inner)] => inner.as_slice(),
        items => items,
    };
    if items
        .iter()
        .any(|item| matches!(item, ArgValue::IntList(_)))
    {
        return None;
    }
    // Unreadable sizes stand as sizes that may exceed 1: only their number matters.
    let target: Vec<Dim> = items
        .iter()
        .map(|item| match item {
            ArgValue::Int(size) => size.clone(),
            _ => Dim::lit(2),
        })
        .collect();
    if !crate::layout::too_few_dims_for_blocks(input, &target, d) {
        return None;
    }
    d.record(Assumption::ElementCountMatches);
    Some(if spec.kind == OpKind::View {
        ops::Transfer::error(ops::OpErrorKind::ViewIncompatible, crate::layout::E_VIEW)
    } else {
        ops::Transfer::unknown_tensor().with_copy(Tri::Yes, input.numel())
    })
}

/// candle's `reshape` of a tensor that is not contiguous copies whatever the target (spec
/// §10.2): where the analysis cannot compare the element counts (`(b, c, h, w)` of a
/// `(b, h·w, c)` input whose sizes are other names), it is a copy if the counts match —
/// with any other count the call fails.
fn candle_copy_whatever_the_target(
    ctx: &ApplyCtx,
    spec: &OpSpec,
    bound: &ops::BoundArgs<Dim>,
) -> Option<HarderDecision> {
    if spec.semantics != ops::Semantics::Candle || spec.kind != OpKind::Reshape {
        return None;
    }
    let input = bound.get("input").and_then(ArgValue::as_layout)?;
    let d = Decider::new(&ctx.facts.assumptions);
    if !crate::layout::candle_is_contiguous(input, &d).is_no() {
        return None;
    }
    d.record(Assumption::ElementCountMatches);
    let copy = ops::Transfer::unknown_tensor().with_copy(Tri::Yes, input.numel());
    Some((copy, d.used(), None))
}

/// The one target size of a view/reshape that shares no symbol with the input's shape
/// (and is not `-1` or a literal), when there is exactly one and no `-1`.
fn single_free_size(input: &SymLayout, target: &[Dim]) -> Option<(usize, Dim)> {
    if target.iter().any(|d| d.as_lit() == Some(-1)) {
        return None;
    }
    let input_symbols: Vec<String> = input.shape.iter().flat_map(|d| d.symbols()).collect();
    let mut free = target
        .iter()
        .enumerate()
        .filter(|(_, d)| !d.is_lit() && d.symbols().iter().all(|s| !input_symbols.contains(s)));
    let (index, dim) = free.next()?;
    if free.next().is_some() {
        return None;
    }
    Some((index, dim.clone()))
}
