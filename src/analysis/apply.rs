//! Applying a table op to abstract values: bind the call's arguments, run the op's
//! transfer function on every alternative layout of its input, record one
//! [`OpEvent`] for the lints and return the joined result.
//!
//! This is the part of a call that no longer cares where the call came from or what the
//! surrounding code is: it needs the op, the argument values, the size facts of the path
//! ([`Facts`]) and the names of the analysis ([`RootState`]) — the small [`ApplyCtx`], not
//! the interpreter.

use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

use crate::ir::{Language, Span};
use crate::layout::sdpa::sdpa_output_layouts;
use crate::layout::{infer_size, Assumption, Decider, Dim, ShapeError, Tri};
use crate::ops::schema::{ParamSpec, ParamType, Variadic};
use crate::ops::{self, ArgValue, OpErrorKind, OpKind, OpResult, OpSpec};

use super::event::{AltOutcome, OpEvent, Outcome, REVEAL_OP};
use super::foreign::SourceText;
use super::frame::{CallContext, Facts, RootState};
use super::tables::OpTables;
use super::value::{
    join, producer_of, with_producer, Origin, Producer, Step, SymLayout, TensorAlt, TensorVal,
    UnknownReason, Value,
};

/// What applying an op needs besides the op and its arguments.
pub struct ApplyCtx<'a> {
    pub source: SourceText<'a>,
    pub language: Language,
    pub tables: &'a OpTables,
    pub facts: &'a Facts,
    pub root: &'a mut RootState,
    /// The sizes the current path gave tensors of unknown shape (see `Env::shapes`).
    pub shapes: &'a mut HashMap<Origin, SymLayout>,
    /// The branches the current path took (see `Env::decisions`).
    pub decisions: &'a [Arc<str>],
    pub events: &'a mut Vec<OpEvent>,
    pub context: Option<Arc<CallContext>>,
    /// The variable the result is assigned to, when the call is the whole right-hand side
    /// (names the sizes the op mints: `C = x.size(-1)`).
    pub name_hint: Option<String>,
    /// Hands out fresh [`Origin`]s.
    pub next_origin: &'a mut Origin,
    /// The path the current statements run on (see [`OpEvent::path`]).
    pub path: Option<Arc<str>>,
    /// Equalities of sizes an op needed to succeed (see [`required_equalities`]): the
    /// program only gets past the call if they hold, so the interpreter learns them.
    pub learned: Vec<(Dim, Dim)>,
    /// Exact quotients an op showed (a `-1` of a successful `view` solved to `C/h`: `h`
    /// divides `C`); the interpreter adds them to the path's facts.
    pub quotients: Vec<(String, Dim)>,
}

impl ApplyCtx<'_> {
    fn text(&self, span: Span) -> &str {
        self.source.text(span)
    }

    fn fresh_origin(&mut self) -> Origin {
        *self.next_origin += 1;
        *self.next_origin
    }

    /// The layout `alt` stands for: its own, or the sizes its origin was given.
    pub fn resolve(&self, alt: &TensorAlt) -> TensorAlt {
        resolve_alt(self.shapes, alt)
    }

    fn record(
        &mut self,
        spec: &'static OpSpec,
        span: Span,
        nspan: Span,
        outcomes: Vec<AltOutcome>,
    ) {
        let unknown_rank = outcomes
            .iter()
            .any(|o| o.input.layout.is_none() && matches!(o.outcome, Outcome::Unknown));
        let unknown_input = if outcomes.is_empty() {
            Some(UnknownReason::Unmodelled)
        } else {
            unknown_rank.then_some(UnknownReason::UnknownRank)
        };
        self.record_with(spec, span, nspan, outcomes, unknown_input);
    }

    fn record_with(
        &mut self,
        spec: &'static OpSpec,
        span: Span,
        nspan: Span,
        outcomes: Vec<AltOutcome>,
        unknown_input: Option<UnknownReason>,
    ) {
        self.events.push(OpEvent {
            span,
            name_span: nspan,
            op: &spec.name,
            kind: spec.kind_name(),
            tags: &spec.tags,
            outcomes,
            unknown_input,
            divisibility: self.facts.divisibility.clone(),
            assumptions: self.facts.assumptions.clone(),
            semantics: spec.semantics,
            from_caller: self.context.is_some(),
            context: self.context.clone(),
            path: self.path.clone(),
            write: None,
            arguments: Vec::new(),
        });
    }
}

/// Why the result of `spec` is unknown when its transfer function leaves it so: the
/// tables leave the layout to the backend, or the op's outcome was not decided.
pub fn result_unknown(spec: &OpSpec) -> UnknownReason {
    if spec.kind == OpKind::UnknownLayout {
        UnknownReason::BackendDependent
    } else {
        UnknownReason::UndecidedOp
    }
}

/// The layout an alternative stands for, looking through its origin (see [`Origin`]).
pub fn resolve_alt(shapes: &HashMap<Origin, SymLayout>, alt: &TensorAlt) -> TensorAlt {
    match (&alt.layout, alt.origin) {
        (None, Some(o)) => match shapes.get(&o) {
            Some(l) => TensorAlt {
                layout: Some(l.clone()),
                ..alt.clone()
            },
            None => alt.clone(),
        },
        _ => alt.clone(),
    }
}

/// Resolve every alternative of a tensor value through the origins' sizes.
pub fn resolve_value(shapes: &HashMap<Origin, SymLayout>, v: Value) -> Value {
    match v {
        Value::Tensor(TensorVal::Alts(alts))
            if alts
                .iter()
                .any(|a| a.layout.is_none() && a.origin.is_some()) =>
        {
            Value::Tensor(TensorVal::Alts(
                alts.iter().map(|a| resolve_alt(shapes, a)).collect(),
            ))
        }
        other => other,
    }
}

/// How the chain step of a parameter used as a tensor begins.
const PARAMETER_STEP: &str = "parameter ";

/// A parameter used as a tensor: contiguous, shape unknown (assumption 1).
pub fn param_as_tensor(
    name: &str,
    origin: Option<Origin>,
    span: Span,
    context: Option<Arc<CallContext>>,
) -> Value {
    let step = Step::parameter(
        span,
        format!("{PARAMETER_STEP}`{name}` (assumed contiguous)"),
        None,
        context,
    );
    let mut alt = TensorAlt::new(None, Some(Arc::new(step)));
    alt.origin = origin;
    Value::Tensor(TensorVal::Alts(vec![alt]))
}

/// A name that may be a tensor parameter, as a tensor; anything else unchanged.
pub fn as_tensor(v: Value, span: Span, context: &Option<Arc<CallContext>>) -> Value {
    match v {
        Value::Named {
            name,
            param: Some(origin),
        } => param_as_tensor(&name, Some(origin), span, context.clone()),
        other => other,
    }
}

/// A contiguous tensor of unknown shape with a fresh origin, made by the op at `span`
/// (a `matmul` whose operand shape is unknown still writes a new contiguous tensor).
fn fresh_contiguous(ctx: &mut ApplyCtx, span: Span, what: &str) -> Value {
    let origin = ctx.fresh_origin();
    let step = Step::fresh(span, what.to_string(), None, ctx.context.clone());
    let mut alt = TensorAlt::new(None, Some(Arc::new(step)));
    alt.origin = Some(origin);
    Value::Tensor(TensorVal::Alts(vec![alt]))
}

/// A [`OpKind::FormatFollowing`] op (convolution, pooling, …) whose input is contiguous.
pub fn follows_contiguous_input(facts: &Facts, spec: &OpSpec, input: &TensorAlt) -> bool {
    spec.kind == OpKind::FormatFollowing
        && spec.semantics == ops::Semantics::Torch
        && match &input.layout {
            None => true,
            Some(l) => l.is_contiguous(&Decider::new(&facts.assumptions)).is_yes(),
        }
}

/// The contiguous output of unknown shape that a format-following op makes from a
/// contiguous input; its chain keeps the input's, so a finding still names what the
/// input's contiguity rests on (a parameter assumed contiguous).
pub fn contiguous_from_input(
    ctx: &mut ApplyCtx,
    input: &TensorAlt,
    span: Span,
    what: &str,
) -> Value {
    let origin = ctx.fresh_origin();
    let step = Step::after(
        span,
        format!("{what} {FROM_CONTIGUOUS_INPUT}"),
        None,
        input.chain.clone(),
        ctx.context.clone(),
    );
    let mut alt = TensorAlt::new(None, Some(Arc::new(step)));
    alt.origin = Some(origin);
    alt.condition = input.condition.clone();
    Value::Tensor(TensorVal::Alts(vec![alt]))
}

/// How the chain step of [`contiguous_from_input`] ends.
const FROM_CONTIGUOUS_INPUT: &str = "(contiguous, as its input)";

/// Evaluated call arguments.
pub struct CallArgs {
    pub positional: Vec<Value>,
    pub keywords: Vec<(String, Value)>,
    /// `*args`/`**kwargs` spreads whose contents are unknown.
    pub opaque_spread: bool,
    /// The unknown spreads are all `**kwargs`: the positions are known, and a constructor
    /// of the analysed code (`Block(dim, **dd)`, `super().__init__(**kwargs)`) is still
    /// entered, each parameter the call does not name taking an unknown value instead of its
    /// default (the spread may hold it). Calls of other functions stay unknown: following
    /// them costs more than it finds.
    pub keyword_spread_only: bool,
    /// A `*` spread put packed leading sizes among the positional arguments
    /// (`f(*input_shape, x)`): the positions after them are unknown, so only an op of
    /// the tables, which reads them as one shape, can take the call.
    pub packed_spread: bool,
}

impl CallArgs {
    pub fn positional(values: Vec<Value>) -> CallArgs {
        CallArgs {
            positional: values,
            keywords: Vec::new(),
            opaque_spread: false,
            keyword_spread_only: false,
            packed_spread: false,
        }
    }
    pub fn keyword(&self, name: &str) -> Option<&Value> {
        self.keywords
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }
}

pub fn unknown_result(spec: &OpSpec, why: UnknownReason) -> Value {
    if spec.returns_tensor() {
        Value::unknown_tensor(why)
    } else {
        Value::Unknown(why)
    }
}

/// A `reveal_layout(x)` call (lint SL900): one event whose outcomes are `x`'s alternatives
/// as the path holds them; the value is returned unchanged, as `reveal_type` does.
pub fn reveal(ctx: &mut ApplyCtx, value: Value, span: Span, nspan: Span) -> Value {
    let value = resolve_value(ctx.shapes, as_tensor(value, span, &ctx.context));
    let alts = match &value {
        Value::Tensor(TensorVal::Alts(alts)) => alts.clone(),
        _ => vec![TensorAlt::new(None, None)],
    };
    let unknown_input = match &value {
        Value::Tensor(TensorVal::Alts(_)) => None,
        other => Some(input_unknown_reason(Some(other))),
    };
    let outcomes = alts
        .into_iter()
        .map(|input| {
            let layout = Outcome::Ok(input.layout.clone());
            AltOutcome::bare(input, layout, Tri::No, ctx.decisions.to_vec())
        })
        .collect();
    ctx.events.push(OpEvent {
        span,
        name_span: nspan,
        op: REVEAL_OP,
        kind: REVEAL_OP,
        tags: &[],
        outcomes,
        unknown_input,
        divisibility: ctx.facts.divisibility.clone(),
        assumptions: ctx.facts.assumptions.clone(),
        semantics: ops::Semantics::Torch,
        from_caller: ctx.context.is_some(),
        context: ctx.context.clone(),
        path: ctx.path.clone(),
        write: None,
        arguments: Vec::new(),
    });
    value
}

/// Why an op's input value carries no layout: what the value itself says, or what kind of
/// value it is instead of a tensor.
pub fn input_unknown_reason(input: Option<&Value>) -> UnknownReason {
    match input {
        Some(Value::Unknown(why) | Value::Tensor(TensorVal::Unknown(why, _))) => *why,
        Some(Value::Named { param: None, .. }) => UnknownReason::UnknownObject,
        _ => UnknownReason::NotATensor,
    }
}

/// Convert an abstract value to an op argument of (declared) type `ty`. A name of unknown
/// type (`n_head`, `config.dim`, `self.bias`) is a size where the op wants an int, and a
/// tensor of unknown layout where it wants a tensor — never a guessed layout.
fn to_arg(shapes: &HashMap<Origin, SymLayout>, v: &Value, ty: Option<ParamType>) -> ArgValue<Dim> {
    let wants_tensor = matches!(
        ty,
        Some(
            ParamType::Tensor
                | ParamType::Tensors
                | ParamType::TensorOrScalar
                | ParamType::TensorOrNumber
        )
    );
    let single_layout = |alts: &[TensorAlt]| match alts {
        [a] => resolve_alt(shapes, a).layout,
        _ => None,
    };
    match v {
        Value::Tensor(TensorVal::Alts(a)) => ArgValue::Tensor(single_layout(a)),
        Value::Tensor(_) => ArgValue::Tensor(None),
        Value::Int(d) => ArgValue::Int(d.clone()),
        // Packed leading sizes are one entry of a shape (`view(*input_shape, -1)`), nothing
        // else: as a dim or a count their number would matter.
        Value::PackedSizes(d) if matches!(ty, Some(ParamType::Int | ParamType::Shape)) => {
            ArgValue::Int(d.clone())
        }
        Value::PackedSizes(_) => ArgValue::Unknown,
        Value::Tuple(items)
            if super::value::holds_packed(items) && ty != Some(ParamType::Shape) =>
        {
            ArgValue::Unknown
        }
        Value::Float => ArgValue::Float(f64::NAN),
        Value::Bool(Some(b)) => ArgValue::Bool(*b),
        Value::Str(s) => ArgValue::Str(s.clone()),
        // A torch constant (`torch.channels_last`) by its dotted name.
        Value::Import(path) => ArgValue::Str(path.clone()),
        Value::NoneVal => ArgValue::None,
        Value::Tuple(items) => {
            if ty == Some(ParamType::Tensors)
                || (!items.is_empty() && items.iter().all(|i| i.is_tensor()))
            {
                ArgValue::TensorList(
                    items
                        .iter()
                        .map(|i| match i {
                            Value::Tensor(TensorVal::Alts(a)) => single_layout(a),
                            _ => None,
                        })
                        .collect(),
                )
            } else {
                ArgValue::IntList(
                    items
                        .iter()
                        .map(|i| to_arg(shapes, i, Some(ParamType::Int)))
                        .collect(),
                )
            }
        }
        Value::Slice(parts) => {
            let [a, b, c] = &**parts;
            let part = |v: &Value| to_arg(shapes, v, Some(ParamType::Int));
            ArgValue::Slice(Box::new(ops::SliceArg {
                start: part(a),
                stop: part(b),
                step: part(c),
            }))
        }
        Value::Ellipsis => ArgValue::Ellipsis,
        Value::Named { .. } if wants_tensor => ArgValue::Tensor(None),
        // Where anything goes (`torch.tensor(data)`), a name of unknown type may be a list.
        Value::Named { .. } if ty == Some(ParamType::Any) => ArgValue::Unknown,
        // A name where a shape or dims go (`view(shape)`, `permute(dims)`) may hold a tuple
        // as well as an int: unknown. (Several names in `view(B, T, C)` are ints each: see
        // [`convert_args`]. A split size, `split(self.n_embd)`, stays an int, as model code
        // passes a list there literally.)
        Value::Named { .. } if holds_sizes(ty) => ArgValue::Unknown,
        Value::Named { name, .. } => ArgValue::Int(Dim::sym(name)),
        _ => ArgValue::Unknown,
    }
}

/// The parameters positional arguments bind to, in order (the receiver and keyword-only
/// ones left out); a `*args` parameter takes every argument from its place on.
fn positional_slots(
    params: &[ParamSpec],
    receiver: Option<usize>,
) -> impl Iterator<Item = &ParamSpec> {
    params.iter().enumerate().filter_map(move |(idx, p)| {
        let skipped = Some(idx) == receiver || p.keyword_only || p.variadic == Variadic::Keywords;
        (!skipped).then_some(p)
    })
}

/// Declared type of the parameter that the `i`-th positional argument binds to.
fn positional_type(params: &[ParamSpec], receiver: Option<usize>, i: usize) -> Option<ParamType> {
    positional_slots(params, receiver)
        .enumerate()
        .find(|(k, p)| p.variadic == Variadic::Positional || *k == i)
        .map(|(_, p)| p.ty)
}

/// The position at which a `*size`-like parameter (of sizes or dims) starts collecting
/// positional arguments.
fn variadic_position(params: &[ParamSpec], receiver: Option<usize>) -> Option<usize> {
    positional_slots(params, receiver)
        .enumerate()
        .find(|(_, p)| p.variadic == Variadic::Positional)
        .filter(|(_, p)| holds_sizes(Some(p.ty)))
        .map(|(k, _)| k)
}

/// A parameter whose one argument may be a whole sequence of sizes or dims (`view(shape)`,
/// `permute(dims)`), as well as one size.
fn holds_sizes(ty: Option<ParamType>) -> bool {
    matches!(
        ty,
        Some(ParamType::Shape | ParamType::Ints | ParamType::Dims)
    )
}

fn keyword_type(params: &[ParamSpec], name: &str) -> Option<ParamType> {
    params.iter().find(|p| p.answers_to(name)).map(|p| p.ty)
}

/// A call's arguments as op arguments: positional, then keyword.
pub type OpArgs = (Vec<ArgValue<Dim>>, Vec<(String, ArgValue<Dim>)>);

pub fn convert_args(
    shapes: &HashMap<Origin, SymLayout>,
    params: &[ParamSpec],
    receiver: Option<usize>,
    positional: &[Value],
    keywords: &[(String, Value)],
) -> OpArgs {
    // Two or more arguments of `*size` (`view(B, T, C)`) are one int each.
    let spread_from = variadic_position(params, receiver).filter(|&k| positional.len() > k + 1);
    let pos = positional
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let ty = match spread_from {
                Some(k) if i >= k => Some(ParamType::Int),
                _ => positional_type(params, receiver, i),
            };
            to_arg(shapes, v, ty)
        })
        .collect();
    let kw = keywords
        .iter()
        .map(|(k, v)| (k.clone(), to_arg(shapes, v, keyword_type(params, k))))
        .collect();
    (pos, kw)
}

/// For an op whose input is a list of tensors (`torch.cat([a, b], -1)`, Rust
/// `Tensor::cat(&[&a, &b], 2)`): the single
/// alternative of the list's first tensor, which the event reports as the op's input (the
/// op itself reads the whole list).
fn tensor_list_input(
    spec: &OpSpec,
    recv: &Option<Value>,
    positional: &[Value],
) -> Option<TensorAlt> {
    if recv.is_some() || spec.params.first().map(|p| p.ty) != Some(ParamType::Tensors) {
        return None;
    }
    let Some(Value::Tuple(items)) = positional.first() else {
        return None;
    };
    match items.first() {
        Some(Value::Tensor(TensorVal::Alts(alts))) if alts.len() == 1 => Some(alts[0].clone()),
        _ => None,
    }
}

/// The receiver (or first positional tensor) whose alternatives the op is applied to.
fn primary_alts(recv: &Option<Value>, positional: &[Value]) -> Option<Vec<TensorAlt>> {
    let v = recv.as_ref().or_else(|| positional.first())?;
    match v {
        Value::Tensor(TensorVal::Alts(a)) => Some(a.clone()),
        _ => None,
    }
}

/// Apply a table op to every alternative of its input, record the event, and return
/// the joined result.
pub fn apply_op(
    ctx: &mut ApplyCtx,
    spec: &'static OpSpec,
    recv: Option<Value>,
    positional: Vec<Value>,
    keywords: Vec<(String, Value)>,
    span: Span,
    nspan: Span,
) -> Value {
    let recv = recv.map(|r| as_tensor(r, span, &ctx.context));
    let what = step_description(ctx, span, nspan);
    // Factories (`torch.zeros(B, T)`, `torch.arange(n)`, `torch.tensor(data)`) take no
    // tensor: their first argument is a size or data, never the input. `einsum`'s first
    // argument is its equation: it is applied once to all its operands the same way.
    if recv.is_none() && spec.kind.applied_without_input() {
        return apply_factory(ctx, spec, &positional, &keywords, span, nspan, &what);
    }
    let mut positional = positional;
    if recv.is_none() {
        if let Some(first) = positional.first_mut() {
            *first = as_tensor(first.clone(), span, &ctx.context);
        }
    }
    let receiver = if recv.is_some() {
        Some(spec.receiver.unwrap_or(0))
    } else {
        None
    };
    let list_input = tensor_list_input(spec, &recv, &positional);
    let Some(alts) =
        primary_alts(&recv, &positional).or_else(|| list_input.clone().map(|alt| vec![alt]))
    else {
        // Input layout unknown: nothing certain can follow, but some ops still write a
        // fresh contiguous tensor (`matmul`, `softmax`, `.contiguous()`).
        // One outcome of unknown input, so that the path is still seen to reach the call
        // (a failure on another path is then reported on that path only).
        let unknown = AltOutcome::bare(
            TensorAlt::new(None, None),
            Outcome::Unknown,
            Tri::Unknown,
            ctx.decisions.to_vec(),
        );
        let why = input_unknown_reason(recv.as_ref().or(positional.first()));
        ctx.record_with(spec, span, nspan, vec![unknown], Some(why));
        let args = method_args(&recv, &positional);
        if let Some(v) = partial_product(ctx, spec, None, args.first(), span, &what) {
            return v;
        }
        // The dataflow goes on through a tensor of unknown layout.
        let input = producer_of(
            recv.as_ref()
                .or(positional.first())
                .unwrap_or(&Value::NoneVal),
        );
        let (others, numbers_only) = other_inputs(&recv, &positional, &keywords);
        let producer = made_by(spec, span, input, others, numbers_only, None, None);
        if fresh_output(spec, args, &keywords) {
            return with_producer(fresh_contiguous(ctx, span, &what), &producer);
        }
        return with_producer(unknown_result(spec, why), &producer);
    };
    let (other_producers, numbers_only) = other_inputs(&recv, &positional, &keywords);
    let alts: Vec<TensorAlt> = alts.iter().map(|a| ctx.resolve(a)).collect();
    let (pos_converted, kw_args) =
        convert_args(ctx.shapes, &spec.params, receiver, &positional, &keywords);
    let alts: Vec<TensorAlt> = alts
        .into_iter()
        .map(|alt| {
            let mut input_alt = alt;
            if input_alt.layout.is_none() && list_input.is_none() {
                // The op itself may say how many dims its input has (`permute(0, 2, 1, 3)`):
                // then the tensor gets a named size per dim, for this use and every alias.
                if let Some(layout) = materialize_from_op(
                    ctx,
                    spec,
                    &pos_converted,
                    &kw_args,
                    &input_alt,
                    span,
                    nspan,
                ) {
                    input_alt.layout = Some(layout);
                }
            }
            if let Some(layout) = input_alt
                .layout
                .as_ref()
                .and_then(|l| unpack_by_rank(ctx, spec, &pos_converted, &kw_args, l))
            {
                input_alt.layout = Some(layout);
            }
            input_alt
        })
        .collect();
    let bind_input = |layout: &Option<SymLayout>| {
        bind_with_input(
            spec,
            recv.is_some(),
            list_input.is_some(),
            &pos_converted,
            &kw_args,
            layout,
        )
    };
    let alts = if spec.kind == OpKind::Permute {
        split_by_memory_format(alts, |alt| {
            bind_input(&alt.layout).is_ok_and(|b| permutes_parameter_channels_last(spec, &b, alt))
        })
    } else {
        alts
    };
    let mut outcomes = Vec::with_capacity(alts.len());
    let mut results = Vec::with_capacity(alts.len());
    for alt in &alts {
        let mut input_alt = alt.clone();
        let mut operands = Vec::new();
        let mut dim_arg = None;
        let mut solved: Vec<Assumption> = Vec::new();
        let mut step_what = what.clone();
        // The view/reshape target entry by entry, `None` where unreadable.
        let mut loose_target: Option<Vec<Option<Dim>>> = None;
        let (transfer, mut target, decided_under) = match bind_input(&input_alt.layout) {
            Ok(bound) if super::prefix::unsafe_on_packed(spec, &bound) => {
                (unknown_transfer(), None, None)
            }
            Ok(bound) => {
                dim_arg = bound.get("dim").cloned();
                loose_target = target_entries(spec, &bound);
                operands = tensor_operands(spec, &bound, receiver.unwrap_or(0));
                if input_alt.layout.is_none() && list_input.is_none() {
                    let (t, target, refined) =
                        contiguous_unknown_shape(ctx, spec, &bound, alt, span);
                    if refined.is_some() {
                        input_alt.layout = refined;
                    }
                    (t, target, None)
                } else {
                    let d = Decider::new(&ctx.facts.assumptions);
                    let mut t = ops::apply(spec, &bound, &d);
                    let mut target = ops::target_shape(spec, &bound);
                    ctx.quotients
                        .extend(inferred_quotients(spec, &t, target.as_deref()));
                    if matches!(t.result, OpResult::Unknown | OpResult::UnknownTensor) {
                        if let Some((t2, bound2, equal)) =
                            assume_required_equalities(spec, &bound, &d)
                        {
                            t = t2;
                            target = ops::target_shape(spec, &bound2);
                            ctx.learned.extend(equal);
                        }
                    }
                    if matches!(t.result, OpResult::Unknown | OpResult::UnknownTensor) {
                        if let Some(l) = first_operand_decides(spec, &bound, &d) {
                            t = ops::Transfer {
                                result: OpResult::Tensor(l),
                                copies: Tri::No,
                                copied_numel: None,
                                copied_reshape: None,
                            };
                            step_what = format!(
                                    "{what} (assuming its operands of unknown shape broadcast to its first operand's shape)"
                                );
                        }
                    }
                    if matches!(t.result, OpResult::Unknown | OpResult::UnknownTensor) {
                        if let Some(t2) = decide_by_block_count(spec, &bound, &d) {
                            t = t2;
                        }
                    }
                    if matches!(t.result, OpResult::Unknown) {
                        match decide_harder(ctx, spec, &bound, &mut solved) {
                            Some((t2, d2, solved_target)) => {
                                (t2, solved_target.or(target), Some(d2))
                            }
                            None => (t, target, Some(d.used())),
                        }
                    } else {
                        (t, target, Some(d.used()))
                    }
                }
            }
            Err(_) => (
                ops::Transfer {
                    result: OpResult::Unknown,
                    copies: Tri::Unknown,
                    copied_numel: None,
                    copied_reshape: None,
                },
                None,
                None,
            ),
        };
        if target.is_none() && matches!(spec.kind_name(), "flatten" | "ravel") {
            // No shape argument: the output shape tells which dims are merged.
            if let OpResult::Tensor(l) = &transfer.result {
                target = Some(l.shape.clone());
            }
        }
        let mut outcome = match &transfer.result {
            OpResult::Tensor(l) => Outcome::Ok(Some(l.clone())),
            OpResult::Tensors(_) | OpResult::Size(_) => Outcome::Ok(None),
            OpResult::UnknownTensor => Outcome::Ok(None),
            OpResult::Error(e) => Outcome::Error(e.clone()),
            OpResult::Unknown => Outcome::Unknown,
        };
        let mut assumptions = decided_under.unwrap_or_default();
        for s in solved {
            if !assumptions.contains(&s) {
                assumptions.push(s);
            }
        }
        if matches!(outcome, Outcome::Error(_)) && ctx.root.rests_on_small_default(&assumptions) {
            // `num_dummy_heads: int = 0` may well be 0, where the code runs: a failure that
            // needs it ≥ 2 is not certain. (A copy that needs it ≥ 2 is reported; its note
            // states the condition.)
            outcome = Outcome::Unknown;
        }
        outcomes.push(AltOutcome {
            input: input_alt.clone(),
            target,
            outcome,
            copies: transfer.copies,
            copied_numel: transfer.copied_numel.clone(),
            copied_reshape: transfer.copied_reshape.clone(),
            assumptions,
            operands,
            decisions: ctx.decisions.to_vec(),
        });
        let args = method_args(&recv, &positional);
        let fresh = fresh_output(spec, args, &keywords);
        let partial = match &transfer.result {
            OpResult::UnknownTensor | OpResult::Unknown => partial_product(
                ctx,
                spec,
                input_alt.layout.as_ref(),
                args.first(),
                span,
                &what,
            ),
            _ => None,
        };
        let partial = partial.or_else(|| match &transfer.result {
            OpResult::Unknown | OpResult::UnknownTensor => contiguous_view_result(
                ctx,
                spec,
                input_alt.layout.as_ref(),
                outcomes.last().and_then(|o| o.target.as_deref()),
                loose_target.as_deref(),
                &input_alt,
                span,
                &what,
            ),
            _ => None,
        });
        let value = match transfer.result {
            _ if partial.is_some() => partial.unwrap_or(Value::Unknown(UnknownReason::Unmodelled)),
            OpResult::UnknownTensor if follows_contiguous_input(ctx.facts, spec, &input_alt) => {
                contiguous_from_input(ctx, &input_alt, span, &what)
            }
            // The layout is unknown but the op writes a new contiguous tensor.
            OpResult::UnknownTensor | OpResult::Unknown if fresh => {
                fresh_contiguous(ctx, span, &what)
            }
            r => {
                let of = ResultOf {
                    same_shape: keeps_shape(spec, &operands_of(&outcomes)),
                    writes_new_tensor: fresh,
                };
                result_value(
                    ctx,
                    &input_alt,
                    r,
                    span,
                    &step_what,
                    of,
                    result_unknown(spec),
                )
            }
        };
        let value = super::copies::carry_copy(
            ctx.source,
            spec,
            span,
            nspan,
            &input_alt,
            outcomes.last(),
            &ctx.facts.assumptions,
            value,
        );
        // A tensor op whose result's layout is unknown still made a tensor.
        let value = match value {
            Value::Unknown(why) if spec.returns_tensor() => Value::unknown_tensor(why),
            v => v,
        };
        let value = if matches!(value, Value::Tensor(_)) {
            let producer = made_by(
                spec,
                span,
                input_alt.made_by.clone(),
                other_producers.clone(),
                numbers_only,
                dim_arg.as_ref(),
                input_alt.layout.as_ref(),
            );
            with_producer(value, &producer)
        } else {
            value
        };
        results.push(value);
    }
    ctx.record(spec, span, nspan, outcomes);
    if let Some(event) = ctx.events.last_mut() {
        event.arguments = other_producers;
    }
    if spec.kind == OpKind::Sdpa {
        if let Some(v) = sdpa_alternatives(ctx, &positional, &keywords, span, &what) {
            return v;
        }
    }
    join_all(results)
}

/// The op's arguments with `layout` as its input: the receiver of a method call, else the
/// first positional argument (a list input is the argument itself: its first tensor only
/// names the input).
fn bind_with_input(
    spec: &OpSpec,
    method_call: bool,
    list_input: bool,
    positional: &[ArgValue<Dim>],
    keywords: &[(String, ArgValue<Dim>)],
    layout: &Option<SymLayout>,
) -> Result<ops::BoundArgs<Dim>, ops::BindError> {
    let input = ArgValue::Tensor(layout.clone());
    let mut positional = positional.to_vec();
    let receiver = if method_call {
        Some(input)
    } else {
        if !list_input {
            if let Some(first) = positional.first_mut() {
                *first = input;
            }
        }
        None
    };
    ops::bind(spec, receiver, positional, keywords.to_vec())
}

/// The producers of a call's arguments besides its input (the receiver, else the first
/// positional argument) that are not numbers, in the order written (`None` for one no op
/// made: a parameter, an unknown value), and whether every other argument is a number.
fn other_inputs(
    recv: &Option<Value>,
    positional: &[Value],
    keywords: &[(String, Value)],
) -> (Vec<Option<Arc<Producer>>>, bool) {
    let others = method_args(recv, positional)
        .iter()
        .chain(keywords.iter().map(|(_, v)| v));
    let mut producers = Vec::new();
    let mut numbers_only = true;
    for v in others {
        match v {
            Value::Int(_) | Value::Float | Value::Bool(_) | Value::NoneVal => {}
            _ => {
                producers.push(producer_of(v));
                numbers_only = false;
            }
        }
    }
    (producers, numbers_only)
}

/// The [`Producer`] of a call's result.
fn made_by(
    spec: &'static OpSpec,
    span: Span,
    input: Option<Arc<Producer>>,
    others: Vec<Option<Arc<Producer>>>,
    numbers_only: bool,
    dim: Option<&ArgValue<Dim>>,
    input_layout: Option<&SymLayout>,
) -> Arc<Producer> {
    // `dim=-1`, or `dim=3` of a rank-4 input: the last dim.
    let dim_from_end = match dim.and_then(|d| match d {
        ArgValue::Int(d) => d.as_lit(),
        _ => None,
    }) {
        Some(k) if k < 0 => usize::try_from(-k).ok(),
        Some(k) => input_layout.and_then(|l| l.shape.len().checked_sub(usize::try_from(k).ok()?)),
        None => None,
    };
    let mut inputs = Vec::with_capacity(1 + others.len());
    inputs.push(input);
    inputs.extend(others);
    Arc::new(Producer::new(
        spec,
        span,
        inputs,
        numbers_only,
        dim_from_end,
    ))
}

/// The output of `scaled_dot_product_attention` as one alternative per kernel family
/// whose layout differs (`layout::sdpa`), each named by its kernels: a finding on one of
/// them holds "on the path where `scaled_dot_product_attention` runs its math kernel".
/// When every kernel gives the same layout it is the one, unconditional, alternative.
fn sdpa_alternatives(
    ctx: &mut ApplyCtx,
    positional: &[Value],
    keywords: &[(String, Value)],
    span: Span,
    what: &str,
) -> Option<Value> {
    let arg = |i: usize, name: &str| {
        keywords
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
            .or_else(|| positional.get(i))
    };
    let layout_of = |v: &Value| match v {
        Value::Tensor(TensorVal::Alts(alts)) if alts.len() == 1 => ctx.resolve(&alts[0]).layout,
        _ => None,
    };
    let query = layout_of(arg(0, "query")?)?;
    // The value gives the output its last size; of a value of unknown shape, that size
    // gets a name of its own.
    let value_dim = match layout_of(arg(2, "value")?).and_then(|v| v.shape.last().cloned()) {
        Some(dim) => dim,
        None => {
            let name = match arg(2, "value")? {
                Value::Named { name, .. } => name.as_str(),
                _ => "value",
            };
            ctx.root.mint(&format!("{name}.shape[-1]"))
        }
    };
    let d = Decider::new(&ctx.facts.assumptions);
    let mut kernels: Vec<(Vec<&str>, SymLayout)> = Vec::new();
    for (kernel, layout) in sdpa_output_layouts(&query, &value_dim, &d)? {
        match kernels.iter_mut().find(|(_, l)| *l == layout) {
            Some((names, _)) => names.push(kernel.name()),
            None => kernels.push((vec![kernel.name()], layout)),
        }
    }
    let single = kernels.len() == 1;
    let alts = kernels
        .into_iter()
        .map(|(names, layout)| {
            let names = names.join(" or ");
            let step = Step::fresh(
                span,
                format!("{what} (its {names} kernel)"),
                Some(layout.clone()),
                ctx.context.clone(),
            );
            let mut alt = TensorAlt::new(Some(layout), Some(Arc::new(step)));
            if !single {
                alt.condition = Some(Arc::from(format!(
                    "`scaled_dot_product_attention` runs its {names} kernel"
                )));
            }
            alt
        })
        .collect();
    Some(Value::Tensor(TensorVal::Alts(alts)))
}

/// `permute(0, 2, 3, 1)` (or `(0, 2, 3, 4, 1)`) of a tensor parameter as received: the
/// NCHW → NHWC idiom, applied to a feature map. Feature maps arrive channels-last as often
/// as contiguous (a convolution's output follows its input's memory format, and attention
/// blocks hand back `transpose(-1, -2).reshape(B, C, H, W)`, which is channels-last), and
/// then this permute is itself contiguous: the "parameters are contiguous" assumption is
/// not credible on its own here (see [`split_by_memory_format`]).
fn permutes_parameter_channels_last(
    spec: &OpSpec,
    bound: &ops::BoundArgs<Dim>,
    alt: &TensorAlt,
) -> bool {
    const CHANNELS_LAST: [&[i64]; 2] = [&[0, 2, 3, 1], &[0, 2, 3, 4, 1]];
    if spec.kind != OpKind::Permute || received_parameter(alt).is_none() {
        return false;
    }
    let Some(dims) = bound.get("dims").and_then(ArgValue::as_i64s) else {
        return false;
    };
    let rank = dims.len() as i64;
    let wrapped: Vec<i64> = dims
        .iter()
        .map(|&d| if d < 0 { d + rank } else { d })
        .collect();
    CHANNELS_LAST.contains(&wrapped.as_slice())
}

/// The input alternatives of a permute, each that [`permutes_parameter_channels_last`]
/// (`is_idiom`) split in two named by the parameter's memory format: the default one
/// (assumed), and channels-last, in which the permute is contiguous. What fails only in the
/// default format is then reported with that condition, as the README's assumption states
/// it; what holds in both is reported plainly.
fn split_by_memory_format(
    alts: Vec<TensorAlt>,
    is_idiom: impl Fn(&TensorAlt) -> bool,
) -> Vec<TensorAlt> {
    let mut out = Vec::with_capacity(alts.len() + 1);
    for alt in alts {
        let split = is_idiom(&alt).then(|| memory_format_pair(&alt)).flatten();
        match split {
            Some((default, channels_last)) => out.extend([default, channels_last]),
            None => out.push(alt),
        }
    }
    out
}

/// A 4-d (5-d) parameter alternative as the two memory formats it may have: the default
/// (as assumed) and channels-last, each named by its condition.
fn memory_format_pair(alt: &TensorAlt) -> Option<(TensorAlt, TensorAlt)> {
    let name = received_parameter(alt)?;
    let layout = alt.layout.as_ref()?;
    let format = match layout.rank() {
        4 => crate::layout::MemoryFormat::ChannelsLast,
        5 => crate::layout::MemoryFormat::ChannelsLast3d,
        _ => return None,
    };
    let strides = crate::layout::strides_for_format(&layout.shape, format).ok()?;
    let named = |what: String| {
        let mut a = alt.clone();
        a.condition = Some(super::env::conjoin(alt.condition.as_deref(), &what));
        a
    };
    let default = named(format!(
        "`{name}` has the default memory format (channels-last would make the permute contiguous)"
    ));
    let mut channels_last = named(format!("`{name}` is channels-last"));
    channels_last.layout = Some(SymLayout {
        strides,
        ..layout.clone()
    });
    Some((default, channels_last))
}

/// The name of the parameter of the analysed function that the tensor is (its layout
/// assumed), as received or through format-following ops only (`self.conv(x)`:
/// channels-last in, channels-last out).
fn received_parameter(alt: &TensorAlt) -> Option<&str> {
    let mut step = alt.chain.as_deref();
    while let Some(s) = step {
        if s.prev.is_none() {
            let rest = s.what.strip_prefix(PARAMETER_STEP)?.strip_prefix('`')?;
            return rest.split('`').next();
        }
        if !s.what.ends_with(FROM_CONTIGUOUS_INPUT) {
            return None;
        }
        step = s.prev.as_deref();
    }
    None
}

/// `view`/`reshape` of a contiguous tensor to a target whose element count the analysis
/// cannot compare with the input's (`view(B, n, …)` with an unrelated `n`): if the call
/// returns, the counts are equal and the result is that contiguous shape, since a
/// contiguous tensor can be viewed as any shape of its size (the chain step says so); a
/// target it cannot read in full keeps the sizes it can read, with a fresh size for each
/// other entry (and for a `-1`), and one it cannot read at all gives a contiguous tensor
/// whose shape later uses reveal. The input of unknown shape (`layout` `None`) is contiguous
/// too.
#[allow(clippy::too_many_arguments)]
fn contiguous_view_result(
    ctx: &mut ApplyCtx,
    spec: &OpSpec,
    input: Option<&SymLayout>,
    target: Option<&[Dim]>,
    loose_target: Option<&[Option<Dim>]>,
    input_alt: &TensorAlt,
    span: Span,
    what: &str,
) -> Option<Value> {
    if spec.semantics != ops::Semantics::Torch
        || !matches!(spec.kind, OpKind::View | OpKind::Reshape)
    {
        return None;
    }
    let d = Decider::new(&ctx.facts.assumptions);
    if let Some(input) = input {
        if !input.is_contiguous(&d).is_yes() {
            return None;
        }
    }
    let entries: Vec<Option<Dim>> = match (target, loose_target) {
        (Some(t), _) => t.iter().cloned().map(Some).collect(),
        (None, Some(loose)) => loose.to_vec(),
        // A target it cannot read at all: contiguous still, of a shape later uses reveal.
        (None, None) => {
            // A view of the input, not a new tensor: its layout rests on the input's.
            return input.map(|_| {
                let origin = ctx.fresh_origin();
                let step = Step::restart(
                    span,
                    what.to_string(),
                    None,
                    &input_alt.chain,
                    ctx.context.clone(),
                );
                let mut alt = TensorAlt::new(None, Some(Arc::new(step)));
                alt.origin = Some(origin);
                alt.condition = input_alt.condition.clone();
                Value::Tensor(TensorVal::Alts(vec![alt]))
            });
        }
    };
    let inferred = entries
        .iter()
        .filter(|e| e.as_ref().is_some_and(|d| d.as_lit() == Some(-1)))
        .count();
    if inferred > 1
        || entries.iter().any(|e| {
            e.as_ref()
                .is_some_and(|d| d.as_lit().is_some_and(|v| v < -1))
        })
    {
        return None;
    }
    let shape: Vec<Dim> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| match e {
            Some(d) if d.as_lit() != Some(-1) => d.clone(),
            _ => target_size(ctx, span, i),
        })
        .collect();
    let layout = SymLayout::contiguous(shape);
    let step = Step::restart(
        span,
        format!("{what} (if its element count matches)"),
        Some(layout.clone()),
        &input_alt.chain,
        ctx.context.clone(),
    );
    let mut alt = TensorAlt::new(Some(layout), Some(Arc::new(step)));
    alt.condition = input_alt.condition.clone();
    Some(Value::Tensor(TensorVal::Alts(vec![alt])))
}

/// `a @ b` (`matmul`, `bmm`) where one operand's shape is unknown and the other's is known
/// with batch dims: a new contiguous tensor whose batch dims are the known operand's and
/// whose one unknown size is a fresh symbol. `bmm` takes 3-d operands only, so that holds
/// outright; for `matmul` it holds if the unknown operand has no more dims than the known
/// one (an extra leading dim would add one), which the chain step states.
fn partial_product(
    ctx: &mut ApplyCtx,
    spec: &OpSpec,
    input: Option<&SymLayout>,
    other: Option<&Value>,
    span: Span,
    what: &str,
) -> Option<Value> {
    if spec.semantics != ops::Semantics::Torch || !matches!(spec.kind, OpKind::Matmul | OpKind::Bmm)
    {
        return None;
    }
    let other = match other? {
        Value::Tensor(TensorVal::Alts(alts)) if alts.len() == 1 => ctx.resolve(&alts[0]).layout,
        _ => None,
    };
    // The receiver of `__rmatmul__` is the right operand.
    let (left, right) = match spec.receiver {
        Some(r) if r != 0 => (other.as_ref(), input),
        _ => (input, other.as_ref()),
    };
    let (known, known_is_left) = match (left, right) {
        (Some(l), None) => (l, true),
        (None, Some(r)) => (r, false),
        _ => return None,
    };
    let rank = known.rank();
    let ok_rank = match spec.kind {
        OpKind::Bmm => rank == 3,
        _ => rank >= 3,
    };
    if !ok_rank {
        return None;
    }
    let d = Decider::new(&ctx.facts.assumptions);
    // A batch dim of size 1 may broadcast to the other operand's: then it is unknown.
    if known.shape[..rank - 2]
        .iter()
        .any(|s| !d.eq_lit(s, 1).is_no())
    {
        return None;
    }
    let base = ctx
        .text(span)
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .find(|s| !s.is_empty())
        .unwrap_or("t")
        .to_string();
    let mut shape: Vec<Dim> = known.shape[..rank - 2].to_vec();
    if known_is_left {
        shape.push(known.shape[rank - 2].clone());
        shape.push(ctx.root.mint(&format!("{base}.shape[-1]")));
    } else {
        shape.push(ctx.root.mint(&format!("{base}.shape[-2]")));
        shape.push(known.shape[rank - 1].clone());
    }
    let layout = SymLayout::contiguous(shape);
    let note = match spec.kind {
        OpKind::Bmm => String::new(),
        _ => " (assuming its operand of unknown shape has no more dims than the other)".into(),
    };
    let step = Step::fresh(
        span,
        format!("{what}{note}"),
        Some(layout.clone()),
        ctx.context.clone(),
    );
    Some(Value::Tensor(TensorVal::single(
        Some(layout),
        Some(Arc::new(step)),
    )))
}

/// An element-wise op whose other operands' layouts are unknown, when its first tensor
/// operand alone decides the output (TensorIterator sorts the dims by asking the operands in
/// turn, and the first one whose strides differ decides: a first operand with no size-1 dim
/// and pairwise different, nonzero strides decides every comparison): the output has its
/// shape, in its memory order — assuming the other operands broadcast to that shape without
/// enlarging it (with every size ≥ 2 they can only add leading dims), as the step states.
/// Only a first operand of rank ≥ 3 counts: `self.weight * x` has a rank-1 weight first.
fn first_operand_decides(
    spec: &OpSpec,
    bound: &ops::BoundArgs<Dim>,
    d: &Decider,
) -> Option<SymLayout> {
    if spec.kind != OpKind::Elementwise || spec.semantics != ops::Semantics::Torch {
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
) -> Vec<(String, Dim)> {
    // einops raises unless a split axis divides exactly (`b n (h d)` with `h=heads`): a
    // quotient among the sizes of its result is exact.
    if let (
        OpKind::EinopsRearrange | OpKind::EinopsReduce | OpKind::EinopsRepeat,
        OpResult::Tensor(l),
    ) = (spec.kind, &t.result)
    {
        return l.shape.iter().filter_map(Dim::as_symbol_quotient).collect();
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
        .filter_map(|(_, solved)| solved.as_symbol_quotient())
        .collect()
}

/// The tensor operands (besides the input) the last outcome recorded.
fn operands_of(outcomes: &[AltOutcome]) -> Vec<(String, Option<SymLayout>)> {
    outcomes
        .last()
        .map(|o| o.operands.clone())
        .unwrap_or_default()
}

/// Does the op give a result of its input's shape? Element-wise ops only when no other
/// tensor takes part (a tensor operand may broadcast the result to a larger shape).
fn keeps_shape(spec: &OpSpec, operands: &[(String, Option<SymLayout>)]) -> bool {
    match spec.kind {
        OpKind::Contiguous
        | OpKind::Clone
        | OpKind::Convert
        | OpKind::Alias
        | OpKind::InPlace
        | OpKind::CreateLike => true,
        OpKind::ContiguousResult => spec.variant.as_deref() != Some("broadcast_mask"),
        OpKind::Dropout => spec.variant.is_none(),
        OpKind::Elementwise => operands.is_empty(),
        _ => false,
    }
}

/// Ops whose result is always a newly written contiguous tensor, whatever the input
/// layout (PyTorch only; see [`OpKind::output_always_contiguous`]). `rms_norm` keeps some
/// input layouts, and `contiguous(memory_format=…)` may ask for channels-last.
fn fresh_output(spec: &OpSpec, positional: &[Value], keywords: &[(String, Value)]) -> bool {
    spec.semantics == ops::Semantics::Torch
        && spec.kind.output_always_contiguous()
        && spec.variant.as_deref() != Some("only_row_major")
        && (spec.kind != OpKind::Contiguous || (positional.is_empty() && keywords.is_empty()))
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
    let not_one = |s: &Dim| d.eq_lit(s, 1).is_no();
    let undecided = |a: &Dim, b: &Dim| d.eq(a, b) == Tri::Unknown;
    let mut equal: Vec<(Dim, Dim)> = Vec::new();
    // Shape entries to decide the op with (operand, dim, size) where neither side of an
    // equality is a symbol to rewrite.
    let mut entries: Vec<(String, usize, Dim)> = Vec::new();
    match spec.kind {
        OpKind::Expand => {
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
                if t.as_lit() != Some(-1) && not_one(s) && undecided(s, t) {
                    equal.push((s.clone(), t.clone()));
                }
            }
        }
        OpKind::Elementwise => {
            let layouts: Vec<(&str, &SymLayout)> = spec
                .params
                .iter()
                .filter_map(|p| Some((p.name.as_str(), bound.get(&p.name)?.as_layout()?)))
                .collect();
            for (x, (_, a)) in layouts.iter().enumerate() {
                for (name_b, b) in &layouts[x + 1..] {
                    for k in 1..=a.rank().min(b.rank()) {
                        let (sa, sb) = (&a.shape[a.rank() - k], &b.shape[b.rank() - k]);
                        if !(not_one(sa) && not_one(sb) && undecided(sa, sb)) {
                            continue;
                        }
                        if single_symbol(sa).is_none() && single_symbol(sb).is_none() {
                            // `scores + bias` of (…, H·W, H·W) and (h, r², r²): no symbol
                            // to rewrite, so the later operand takes the size.
                            entries.push((name_b.to_string(), b.rank() - k, sa.clone()));
                        } else {
                            equal.push((sa.clone(), sb.clone()));
                        }
                    }
                }
            }
        }
        // A product: the left operand's last dim is the size the right one's rows contract
        // with, and batch dims of size ≥ 2 line up (`q @ k` of keys reshaped to (…, E, S)).
        kind if kind.is_product() => {
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
            if undecided(sa, sb) {
                equal.push((sa.clone(), sb.clone()));
            }
            for k in 3..=ra.min(rb) {
                let (sa, sb) = (&a.shape[ra - k], &b.shape[rb - k]);
                if not_one(sa) && not_one(sb) && undecided(sa, sb) {
                    equal.push((sa.clone(), sb.clone()));
                }
            }
        }
        // `rearrange(x, "b (h p) -> …", p=p)`: einops raises unless `p` divides the dim, so
        // past the call the dim is `p` times a size of its own, named `H/p`.
        OpKind::EinopsRearrange | OpKind::EinopsReduce | OpKind::EinopsRepeat => {
            // `b h (x y) d` with `x=h, y=w`: the axis is `h·w`, or einops raises.
            for (length, k, check) in ops::einops_undecided_groups(spec, bound, d) {
                if single_symbol(&length).is_none() {
                    continue;
                }
                match check {
                    ops::einops::GroupCheck::Divides => {
                        let quotient = Dim::sym(&format!("{length}/{k}"));
                        equal.push((length, k.mul(&quotient)));
                    }
                    ops::einops::GroupCheck::Equals => equal.push((length, k)),
                }
            }
        }
        // `split([a, b, c], dim)`: the sizes must sum to the dim's size.
        OpKind::Split => {
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
            if undecided(size, &sum) {
                equal.push((sum, size.clone()));
            }
        }
        _ => return None,
    }
    if equal.is_empty() && entries.is_empty() {
        return None;
    }
    let mut bound = bound.clone();
    for (operand, dim, size) in &entries {
        if let Some(ArgValue::Tensor(Some(l))) = bound.get(operand) {
            let mut l = l.clone();
            l.shape[*dim] = size.clone();
            bound.set(operand, ArgValue::Tensor(Some(l)));
        }
    }
    for (a, b) in &equal {
        // Rewrite the symbol side into the other everywhere in the arguments.
        let (name, with) = match (single_symbol(b), single_symbol(a)) {
            (Some(n), _) => (n, a.clone()),
            (None, Some(n)) => (n, b.clone()),
            _ => return None,
        };
        bound = substitute_args(&bound, &spec.params, &name, &with);
    }
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

/// An op decided with sizes taken equal: its transfer, the arguments it was decided on, and
/// the equalities.
type DecidedWithEqualities = (ops::Transfer<Dim>, ops::BoundArgs<Dim>, Vec<(Dim, Dim)>);

/// The input shape an einops call's pattern spells (`b n (h d)` with `h=heads`: `(b, n,
/// heads·d)`), each axis a fresh size named as in the pattern unless a keyword gives it; a
/// group holds at most one such axis. `None` with an ellipsis or an unreadable length.
fn einops_input_shape(ctx: &mut ApplyCtx, bound: &ops::BoundArgs<Dim>) -> Option<Vec<Dim>> {
    let Some(ArgValue::Str(pattern)) = bound.get("pattern") else {
        return None;
    };
    let (lhs, _) = ops::einops::parse_pattern(pattern).ok()?;
    let given = |name: &str| {
        bound
            .extra_keywords()
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_size())
    };
    let mut shape = Vec::with_capacity(lhs.composition.len());
    for composition in &lhs.composition {
        let ops::einops::Composition::Group(axes) = composition else {
            return None;
        };
        let mut size = Dim::lit(1);
        let mut minted = 0;
        for axis in axes {
            let length = match axis {
                ops::einops::Axis::Named(name) => match given(name) {
                    Some(length) => length?,
                    None => {
                        minted += 1;
                        ctx.root.mint(name)
                    }
                },
                ops::einops::Axis::Anonymous { length, .. } => Dim::lit(*length as i64),
                ops::einops::Axis::Ellipsis => return None,
            };
            size = size.mul(&length);
        }
        if minted > 1 {
            return None;
        }
        shape.push(size);
    }
    Some(shape)
}

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

/// The arguments after the input: all positional ones of a method call, the rest of a
/// function call's.
fn method_args<'v>(recv: &Option<Value>, positional: &'v [Value]) -> &'v [Value] {
    if recv.is_some() || positional.is_empty() {
        positional
    } else {
        &positional[1..]
    }
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

/// The parameter that holds a `view`'s or `reshape`'s target shape.
fn target_param(spec: &OpSpec) -> &'static str {
    if spec.kind == OpKind::View {
        "size"
    } else {
        "shape"
    }
}

/// A fresh size for entry `i` of a view/reshape target the analysis cannot compute (a
/// `-1` whose element count is unknown, an unreadable size), named after the tensor the
/// call starts from (`x[2]` for `x.view(B, T, -1)`), or after the variable it is assigned
/// to when it starts from `self` or a library (`q = self.proj(h).view(B, T, -1, D)`:
/// `q[2]`, not a size of `self`).
fn target_size(ctx: &mut ApplyCtx, span: Span, i: usize) -> Dim {
    let first = ctx
        .text(span)
        .trim_start_matches('(')
        .split('.')
        .next()
        .unwrap_or("t");
    let not_a_tensor = matches!(first, "self" | "torch" | "F" | "nn" | "");
    let base = match &ctx.name_hint {
        Some(hint) if not_a_tensor => hint.clone(),
        _ if not_a_tensor => "t".to_string(),
        _ => first.to_string(),
    };
    ctx.root.mint(&format!("{base}[{i}]"))
}

/// A view/reshape's target entry by entry (`None` for one the analysis cannot read), when
/// it is a flat list whose number of entries is known.
fn target_entries(spec: &OpSpec, bound: &ops::BoundArgs<Dim>) -> Option<Vec<Option<Dim>>> {
    if !matches!(spec.kind, OpKind::View | OpKind::Reshape) {
        return None;
    }
    let ArgValue::IntList(items) = bound.get(target_param(spec))? else {
        return None;
    };
    let items = match items.as_slice() {
        [ArgValue::IntList(inner)] => inner.as_slice(),
        items => items,
    };
    items
        .iter()
        .map(|item| match item {
            ArgValue::Int(size) => Some(Some(size.clone())),
            ArgValue::IntList(_) => None,
            _ => Some(None),
        })
        .collect()
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

/// How a chain label names the step at `span` (the call) whose op name is at `nspan`: a
/// method call by its own part (`.transpose(1, 2)`, so that the steps of a chain starting at
/// the same receiver read apart), anything else by its text; long texts are cut.
fn step_description(ctx: &ApplyCtx, span: Span, nspan: Span) -> String {
    const MAX_CHARS: usize = 60;
    let method_start = (nspan.start as usize).checked_sub(1);
    let is_method = nspan.start > span.start
        && method_start.is_some_and(|dot| ctx.text(Span::new(dot, dot + 1)) == ".");
    let text = match (is_method, method_start) {
        (true, Some(dot)) => ctx.text(Span::new(dot, span.end as usize)),
        _ => ctx.text(span),
    };
    let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() > MAX_CHARS {
        let cut: String = text.chars().take(MAX_CHARS - 1).collect();
        format!("`{cut}…`")
    } else {
        format!("`{text}`")
    }
}

/// The receiver's text of a method call (`x` in `x.permute(…)`), when it is a plain name.
fn receiver_name(ctx: &ApplyCtx, span: Span, nspan: Span) -> Option<String> {
    if nspan.start <= span.start {
        return None;
    }
    let text = ctx.text(Span::new(span.start as usize, nspan.start as usize));
    let name = text.trim_end().strip_suffix('.')?.trim();
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    ok.then(|| name.to_string())
}

/// An op that fixes the rank of its input by its arguments alone (`permute(0, 2, 1, 3)`
/// has rank 4; any other rank raises): the contiguous tensor of unknown shape it is given
/// gets a named size per dim, recorded for its origin so every alias agrees.
fn materialize_from_op(
    ctx: &mut ApplyCtx,
    spec: &OpSpec,
    positional: &[ArgValue<Dim>],
    keywords: &[(String, ArgValue<Dim>)],
    alt: &TensorAlt,
    span: Span,
    nspan: Span,
) -> Option<SymLayout> {
    let dims = rank_fixed_by_op(spec, positional, keywords)?;
    let base = receiver_name(ctx, span, nspan).unwrap_or_else(|| "t".to_string());
    let shape: Vec<Dim> = (0..dims)
        .map(|i| ctx.root.mint(&format!("{base}.shape[{i}]")))
        .collect();
    let layout = SymLayout::contiguous(shape);
    if let Some(o) = alt.origin {
        ctx.shapes.insert(o, layout.clone());
    }
    Some(layout)
}

/// The rank an op's arguments alone require of its input (`permute(0, 2, 1, 3)`: 4).
fn rank_fixed_by_op(
    spec: &OpSpec,
    positional: &[ArgValue<Dim>],
    keywords: &[(String, ArgValue<Dim>)],
) -> Option<usize> {
    if spec.semantics != ops::Semantics::Torch || spec.kind != OpKind::Permute {
        return None;
    }
    match (positional, keywords) {
        ([ArgValue::IntList(items)], _) => Some(items.len()),
        (items, []) if !items.is_empty() && items.iter().all(|a| matches!(a, ArgValue::Int(_))) => {
            Some(items.len())
        }
        ([], [(_, ArgValue::IntList(items))]) => Some(items.len()),
        _ => None,
    }
}

/// An op that fixes its input's rank (`permute(0, 2, 1, 3)`) given a tensor with packed
/// leading dims (`analysis::prefix`): the rank says how many dims are packed, each a size
/// of its own from now on (see `prefix::unpack`).
fn unpack_by_rank(
    ctx: &mut ApplyCtx,
    spec: &OpSpec,
    positional: &[ArgValue<Dim>],
    keywords: &[(String, ArgValue<Dim>)],
    layout: &SymLayout,
) -> Option<SymLayout> {
    let rank = rank_fixed_by_op(spec, positional, keywords)?;
    let count = super::prefix::packed_count(layout, rank)?;
    let name = super::prefix::packed_base_name(&layout.shape[0])?.to_string();
    let sizes: Vec<Dim> = (0..count)
        .map(|i| ctx.root.mint(&format!("{name}[{i}]")))
        .collect();
    let (split, learned) = super::prefix::unpack(layout, sizes);
    ctx.learned.extend(learned);
    Some(split)
}

/// A factory call (or `einsum`): the op is applied once, without an input tensor; a result
/// it can lay out (`zeros(B, T)` is a contiguous (B, T)) starts a new chain.
fn apply_factory(
    ctx: &mut ApplyCtx,
    spec: &'static OpSpec,
    positional: &[Value],
    keywords: &[(String, Value)],
    span: Span,
    nspan: Span,
    what: &str,
) -> Value {
    let (pos_args, kw_args) = convert_args(ctx.shapes, &spec.params, None, positional, keywords);
    let d = Decider::new(&ctx.facts.assumptions);
    let result = match ops::bind(spec, None, pos_args, kw_args) {
        Ok(bound) => ops::apply(spec, &bound, &d).result,
        Err(_) => OpResult::Unknown,
    };
    let outcome = match &result {
        OpResult::Tensor(l) => Outcome::Ok(Some(l.clone())),
        // A value, not a tensor (`torch.jit.is_tracing()`): decided.
        OpResult::Size(_) => Outcome::Ok(None),
        OpResult::Error(e) => Outcome::Error(e.clone()),
        _ => Outcome::Unknown,
    };
    let known = matches!(outcome, Outcome::Ok(_));
    let undecided = matches!(outcome, Outcome::Unknown);
    let nothing = TensorAlt::new(None, None);
    let factory_outcome = AltOutcome {
        input: nothing.clone(),
        target: None,
        outcome,
        copies: Tri::No,
        copied_numel: None,
        copied_reshape: None,
        assumptions: d.used(),
        operands: Vec::new(),
        decisions: ctx.decisions.to_vec(),
    };
    ctx.record_with(
        spec,
        span,
        nspan,
        vec![factory_outcome],
        (!known).then_some(UnknownReason::Unmodelled),
    );
    if let Some(rank) = contiguous_whatever_the_args(spec, positional).filter(|_| undecided) {
        // Sizes of its own: the arguments' are not known.
        let shape: Vec<Dim> = (0..rank)
            .map(|i| ctx.root.mint(&format!("torch.{}.shape[{i}]", spec.name)))
            .collect();
        let layout = SymLayout::contiguous(shape);
        let step = Step::fresh(
            span,
            format!("{what} (whatever its operands' layouts)"),
            Some(layout.clone()),
            ctx.context.clone(),
        );
        return Value::Tensor(TensorVal::single(Some(layout), Some(Arc::new(step))));
    }
    match result {
        OpResult::Tensor(_) | OpResult::Tensors(_) => result_value(
            ctx,
            &nothing,
            result,
            span,
            what,
            ResultOf {
                same_shape: false,
                writes_new_tensor: true,
            },
            result_unknown(spec),
        ),
        OpResult::Size(a) => from_arg(a),
        _ => unknown_result(spec, result_unknown(spec)),
    }
}

/// The rank of a factory's result that is contiguous whatever its arguments are:
/// `torch.arange`/`torch.linspace` (1-d, of a length the analysis may not know), and
/// `torch.einsum` whose equation alone makes it contiguous
/// ([`crate::layout::einsum::contiguous_from_letters`]), whatever its operands' layouts.
fn contiguous_whatever_the_args(spec: &OpSpec, positional: &[Value]) -> Option<usize> {
    if spec.semantics != ops::Semantics::Torch {
        return None;
    }
    match spec.kind {
        OpKind::Arange | OpKind::Linspace => Some(1),
        OpKind::Einsum => match positional.first() {
            Some(Value::Str(equation)) => crate::layout::einsum::contiguous_from_letters(equation),
            _ => None,
        },
        _ => None,
    }
}

/// The op's tensor arguments other than its input (the parameter at `input_index`), as
/// bound: what lints comparing operands read (see [`AltOutcome::operands`]).
fn tensor_operands(
    spec: &OpSpec,
    bound: &ops::BoundArgs<Dim>,
    input_index: usize,
) -> Vec<(String, Option<SymLayout>)> {
    let is_tensor = |ty: ParamType| {
        matches!(
            ty,
            ParamType::Tensor | ParamType::TensorOrScalar | ParamType::TensorOrNumber
        )
    };
    spec.params
        .iter()
        .enumerate()
        .filter(|&(i, p)| i != input_index && p.variadic == Variadic::No && is_tensor(p.ty))
        .filter_map(|(_, p)| match bound.get(&p.name) {
            Some(ArgValue::Tensor(layout)) => Some((p.name.clone(), layout.clone())),
            _ => None,
        })
        .collect()
}

fn unknown_transfer() -> ops::Transfer<Dim> {
    ops::Transfer {
        result: OpResult::Unknown,
        copies: Tri::Unknown,
        copied_numel: None,
        copied_reshape: None,
    }
}

fn plain_transfer(result: OpResult<Dim>) -> ops::Transfer<Dim> {
    ops::Transfer {
        result,
        copies: Tri::No,
        copied_numel: None,
        copied_reshape: None,
    }
}

/// Ops on a tensor known only to be contiguous (shape unknown): `view`/`reshape` give a
/// contiguous tensor of the target shape (an unknown `-1` becomes a fresh symbol); ops
/// whose output is contiguous with the input's shape keep "contiguous, shape unknown";
/// anything needing the rank is unknown.
fn contiguous_unknown_shape(
    ctx: &mut ApplyCtx,
    spec: &OpSpec,
    bound: &ops::BoundArgs<Dim>,
    alt: &TensorAlt,
    span: Span,
) -> (ops::Transfer<Dim>, Option<Vec<Dim>>, Option<SymLayout>) {
    match spec.kind_name() {
        "view" | "reshape" => {
            let Some(target) = ops::target_shape(spec, bound) else {
                // A target the analysis cannot read (`x.size()[:-1] + (h, -1)` of a tensor
                // of unknown rank): the result, if any, is still a view of a contiguous
                // tensor, so contiguous, of a shape its later uses may reveal.
                return (plain_transfer(OpResult::UnknownTensor), None, None);
            };
            // Errors that do not depend on the element count (two `-1`s, a size < -1).
            let numel = Dim::opaque("numel");
            let d = Decider::new(&ctx.facts.assumptions);
            if let Err(e @ (ShapeError::MultipleInferred | ShapeError::InvalidDimension { .. })) =
                infer_size(&target, &numel, &d)
            {
                let kind = if matches!(e, ShapeError::MultipleInferred) {
                    OpErrorKind::TwoInferred
                } else {
                    OpErrorKind::InvalidShapeDim
                };
                let err = ops::OpError {
                    kind,
                    message: e.message(),
                };
                return (plain_transfer(OpResult::Error(err)), Some(target), None);
            }
            let mut shape = Vec::with_capacity(target.len());
            for (i, d) in target.iter().enumerate() {
                if d.as_lit() == Some(-1) {
                    shape.push(target_size(ctx, span, i));
                } else {
                    shape.push(d.clone());
                }
            }
            let l = SymLayout::contiguous(shape);
            (plain_transfer(OpResult::Tensor(l)), Some(target), None)
        }
        "einops_rearrange" | "einops_reduce" | "einops_repeat" => {
            // The pattern's left side names every axis of the input: that is the tensor's
            // shape (contiguous, as assumed), a group `(h d)` the product of its axes.
            let Some(shape) = einops_input_shape(ctx, bound) else {
                return (unknown_transfer(), None, None);
            };
            let layout = SymLayout::contiguous(shape);
            if let Some(o) = alt.origin {
                ctx.shapes.insert(o, layout.clone());
            }
            let mut args = bound.clone();
            args.set("input", ArgValue::Tensor(Some(layout.clone())));
            let d = Decider::new(&ctx.facts.assumptions);
            (ops::apply(spec, &args, &d), None, Some(layout))
        }
        "size"
            if bound
                .get("dim")
                .is_some_and(|d| matches!(d, ArgValue::Int(_))) =>
        {
            // `x.size(-1)`: one size of a tensor of unknown shape.
            let name = match ctx.name_hint.take() {
                Some(n) => n,
                None => ctx
                    .text(span)
                    .chars()
                    .filter(|c| !c.is_whitespace())
                    .take(40)
                    .collect(),
            };
            let size = ctx.root.mint(&name);
            (
                plain_transfer(OpResult::Size(ArgValue::Int(size))),
                None,
                None,
            )
        }
        _ if spec.preserves_contiguous_shape() => {
            (plain_transfer(OpResult::UnknownTensor), None, None)
        }
        _ => (unknown_transfer(), None, None),
    }
}

/// What the op is, for [`result_value`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ResultOf {
    /// The op keeps its input's shape (a contiguous input of unknown shape then gives a
    /// contiguous output with the same origin, that is, the same layout).
    pub same_shape: bool,
    /// The op writes a new contiguous tensor whatever its input's layout (a matmul, a
    /// `Linear` layer): its result rests on no assumption about that layout.
    pub writes_new_tensor: bool,
}

/// The value an op produced for one input alternative, with the chain extended by this step.
pub fn result_value(
    ctx: &mut ApplyCtx,
    input: &TensorAlt,
    r: OpResult<Dim>,
    span: Span,
    what: &str,
    of: ResultOf,
    unknown: UnknownReason,
) -> Value {
    let ResultOf {
        same_shape,
        writes_new_tensor,
    } = of;
    match r {
        OpResult::Tensor(l) => {
            let chain = if writes_new_tensor && is_contiguous(&l) {
                // A new tensor: its layout rests on nothing its input's did, even when it is
                // the same layout (a square `Linear`).
                Some(Arc::new(Step::fresh(
                    span,
                    what.to_string(),
                    Some(l.clone()),
                    ctx.context.clone(),
                )))
            } else if input.layout.as_ref() == Some(&l) {
                input.chain.clone()
            } else if is_contiguous(&l) {
                // A contiguous tensor's history cannot explain a later non-contiguity:
                // the chain restarts here, still resting on what its input rested on.
                Some(Arc::new(Step::restart(
                    span,
                    what.to_string(),
                    Some(l.clone()),
                    &input.chain,
                    ctx.context.clone(),
                )))
            } else {
                Some(Arc::new(Step::after(
                    span,
                    what.to_string(),
                    Some(l.clone()),
                    input.chain.clone(),
                    ctx.context.clone(),
                )))
            };
            let mut alt = TensorAlt::new(Some(l), chain);
            alt.condition = input.condition.clone();
            Value::Tensor(TensorVal::Alts(vec![alt]))
        }
        OpResult::Tensors(ls) => Value::Tuple(
            ls.into_iter()
                .map(|l| {
                    let step = Step::after(
                        span,
                        what.to_string(),
                        Some(l.clone()),
                        input.chain.clone(),
                        ctx.context.clone(),
                    );
                    Value::Tensor(TensorVal::single(Some(l), Some(Arc::new(step))))
                })
                .collect(),
        ),
        OpResult::UnknownTensor => {
            if input.layout.is_none() {
                // Kept contiguous with unknown shape (see `contiguous_unknown_shape`): a new
                // tensor of the same, still unknown, shape.
                let mut alt = TensorAlt::new(None, input.chain.clone());
                alt.origin = match input.origin {
                    Some(o) if same_shape => Some(o),
                    _ => Some(ctx.fresh_origin()),
                };
                Value::Tensor(TensorVal::Alts(vec![alt]))
            } else {
                Value::unknown_tensor(unknown)
            }
        }
        OpResult::Size(a) => from_arg(a),
        OpResult::Error(_) | OpResult::Unknown => Value::Unknown(unknown),
    }
}

fn is_contiguous(l: &SymLayout) -> bool {
    let assumptions = crate::layout::Assumptions::default();
    l.is_contiguous(&Decider::new(&assumptions)).is_yes()
}

fn from_arg(a: ArgValue<Dim>) -> Value {
    match a {
        ArgValue::Int(d) if super::prefix::is_packed(&d) => Value::PackedSizes(d),
        ArgValue::Int(d) => Value::Int(d),
        ArgValue::IntList(items) => Value::Tuple(items.into_iter().map(from_arg).collect()),
        ArgValue::Bool(b) => Value::Bool(Some(b)),
        ArgValue::Float(_) => Value::Float,
        ArgValue::Str(s) => Value::Str(s),
        ArgValue::None => Value::NoneVal,
        ArgValue::Tensor(l) => Value::Tensor(match l {
            Some(l) => TensorVal::single(Some(l), None),
            None => TensorVal::Unknown(UnknownReason::Unmodelled, None),
        }),
        _ => Value::Unknown(UnknownReason::Unmodelled),
    }
}

pub fn join_all(results: Vec<Value>) -> Value {
    let mut it = results.into_iter();
    let Some(first) = it.next() else {
        return Value::Unknown(UnknownReason::Unmodelled);
    };
    it.fold(first, |acc, v| join(&acc, &v))
}
