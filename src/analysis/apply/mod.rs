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
use crate::layout::{infer_size, Decider, Dim, ShapeError, Tri};
use crate::ops::schema::{ParamSpec, ParamType, Variadic};
use crate::ops::{self, ArgValue, OpErrorKind, OpKind, OpResult, OpSpec};

use super::event::{AltOutcome, OpEvent, Outcome, REVEAL_OP};
use super::facts::OpSite;
use super::foreign::SourceText;
use super::frame::{CallContext, Facts, RootState};
use super::tables::OpTables;
use super::value::{
    join, producer_of, with_producer, Origin, Producer, Step, SymLayout, TensorAlt, TensorVal,
    UnknownReason, Value,
};

mod record;
mod refine;

use refine::Decided;

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
    /// The tests the current path decided (see `Env::settled`).
    pub settled: &'a [super::env::SettledTest],
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
    pub quotients: Vec<crate::layout::dim::ExactQuotient>,
    /// Upper bounds an op needed to succeed (a range within its dim: `narrow(d, 0, r)`
    /// shows `r ≤ size`); the interpreter adds them to the path's facts.
    pub bounds: Vec<(String, Dim)>,
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

/// A [`OpKind::FormatFollowing`] op (convolution, pooling, …) whose input is contiguous,
/// or contiguous but for dims it broadcasts (`images.unsqueeze(2).expand(…)` into a
/// `Conv3d`): its output is contiguous.
pub fn follows_contiguous_input(facts: &Facts, spec: &OpSpec, input: &TensorAlt) -> bool {
    spec.kind == OpKind::FormatFollowing
        && spec.semantics == ops::Semantics::Torch
        && match &input.layout {
            None => true,
            Some(l) => l
                .is_contiguous_but_broadcast(&Decider::new(&facts.assumptions))
                .is_yes(),
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
#[derive(Clone)]
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
    /// The positional arguments in order when a `*` spread is a list of layers of unknown
    /// length (`nn.Sequential(*layers)` of a list built in a loop): that spread is one
    /// [`Value::Repeated`] here. Only containers of layers read it; for every other callee
    /// the spread is opaque (`opaque_spread`).
    pub layers_spread: Option<Vec<Value>>,
}

impl CallArgs {
    pub fn positional(values: Vec<Value>) -> CallArgs {
        CallArgs {
            positional: values,
            keywords: Vec::new(),
            opaque_spread: false,
            keyword_spread_only: false,
            packed_spread: false,
            layers_spread: None,
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

/// A layer call whose table entry carries a backend contract (`candle_nn::Linear`: the
/// matmul it runs, rules/candle.toml): one event with an outcome per input alternative,
/// each the layer's transfer on it, so that the lints judge what the layer runs.
pub fn record_module_call(
    ctx: &mut ApplyCtx,
    spec: &'static OpSpec,
    span: Span,
    nspan: Span,
    applied: Vec<(TensorAlt, ops::Transfer<Dim>)>,
) {
    let outcomes = applied
        .into_iter()
        .map(|(input, transfer)| {
            record::alt_outcome(ctx, input, &transfer, None, Vec::new(), Vec::new())
        })
        .collect();
    record::op_event(ctx, spec, span, nspan, outcomes, Vec::new());
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
        aliases: ctx.facts.aliases.clone(),
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
        Value::Str(s) => ArgValue::Str(s.to_string()),
        // A torch constant (`torch.channels_last`) by its dotted name.
        Value::Import(path) => ArgValue::Str(path.to_string()),
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

/// einops stacks a list input (`rearrange(list(xs), 'l b n d -> b n l d')`, as
/// `torch.stack`): a new contiguous tensor of a shape the pattern names. Only a value known
/// to be a list counts (`list(…)`): a tuple, which the analysis does not tell from a list
/// literal or from a list grown by `append`, is no list to einops, which raises.
/// `None` for any other op or input.
fn stacked_for_einops(
    ctx: &mut ApplyCtx,
    spec: &OpSpec,
    input: &Value,
    span: Span,
) -> Option<Value> {
    let einops = matches!(
        spec.kind,
        OpKind::EinopsRearrange | OpKind::EinopsReduce | OpKind::EinopsRepeat
    );
    if !einops || spec.semantics != ops::Semantics::Torch {
        return None;
    }
    // `list(xs)` is a list of unknown items; other lists of unknown length may be tuples
    // (`x.split(sizes)` by sizes the analysis cannot count).
    let Value::Repeated(item) = input else {
        return None;
    };
    if !matches!(**item, Value::Unknown(_)) {
        return None;
    }
    let what = "einops stacks the list into a new tensor";
    let step = Step::fresh(span, what.to_string(), None, ctx.context.clone());
    let mut alt = TensorAlt::new(None, Some(Arc::new(step)));
    alt.origin = Some(ctx.fresh_origin());
    Some(Value::Tensor(TensorVal::Alts(vec![alt])))
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
/// the joined result: bind the arguments, run the op's transfer function on each
/// alternative and refine what it leaves unknown (`refine`), record one outcome per
/// alternative in one [`OpEvent`] (`record`), and join the results.
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
    // Factories (`torch.zeros(B, T)`, `torch.arange(n)`, `torch.tensor(data)`) take no
    // tensor: their first argument is a size or data, never the input. `einsum`'s first
    // argument is its equation: it is applied once to all its operands the same way.
    if recv.is_none() && spec.kind.applied_without_input() {
        let what = step_description(ctx, span, nspan);
        return apply_factory(ctx, spec, &positional, &keywords, span, nspan, &what);
    }
    let call = OpCall::new(ctx, spec, recv, positional, keywords, span, nspan);
    let Some(alts) = call.input_alts() else {
        return apply_to_unknown_input(ctx, &call);
    };
    let args = convert_args(
        ctx.shapes,
        &spec.params,
        call.receiver,
        &call.positional,
        &call.keywords,
    );
    let alts = input_alternatives(ctx, &call, &args, alts);
    let mut outcomes = Vec::with_capacity(alts.len());
    let mut results = Vec::with_capacity(alts.len());
    for alt in &alts {
        let (outcome, applied) = apply_to_alt(ctx, &call, &args, alt);
        outcomes.push(outcome);
        results.push(result_of_alt(ctx, &call, applied, &outcomes));
    }
    record::op_event(ctx, spec, span, nspan, outcomes, call.other_producers);
    if spec.kind == OpKind::Sdpa {
        if let Some(v) = sdpa_alternatives(ctx, &call.positional, &call.keywords, span, &call.what)
        {
            return v;
        }
    }
    join_all(results)
}

/// A call of a table op that has an input (not a factory), as [`apply_op`] got it.
struct OpCall {
    spec: &'static OpSpec,
    recv: Option<Value>,
    /// The positional arguments, a function call's first one taken as a tensor.
    positional: Vec<Value>,
    keywords: Vec<(String, Value)>,
    span: Span,
    nspan: Span,
    /// How a chain names the step (see [`step_description`]).
    what: String,
    /// The receiver's parameter index, for a method call.
    receiver: Option<usize>,
    /// The first tensor of a list input (see [`tensor_list_input`]).
    list_input: Option<TensorAlt>,
    /// The input was a list einops stacks first (see [`stacked_for_einops`]).
    stacks_list: bool,
    /// The producers of the other arguments and whether they are all numbers (see
    /// [`other_inputs`]).
    other_producers: Vec<Option<Arc<Producer>>>,
    numbers_only: bool,
}

impl OpCall {
    fn new(
        ctx: &mut ApplyCtx,
        spec: &'static OpSpec,
        recv: Option<Value>,
        mut positional: Vec<Value>,
        keywords: Vec<(String, Value)>,
        span: Span,
        nspan: Span,
    ) -> OpCall {
        let mut stacks_list = false;
        if recv.is_none() {
            if let Some(first) = positional.first_mut() {
                *first = as_tensor(first.clone(), span, &ctx.context);
                if let Some(stacked) = stacked_for_einops(ctx, spec, first, span) {
                    *first = stacked;
                    stacks_list = true;
                }
            }
        }
        let receiver = recv.is_some().then(|| spec.receiver.unwrap_or(0));
        let list_input = tensor_list_input(spec, &recv, &positional);
        let (other_producers, numbers_only) = other_inputs(&recv, &positional, &keywords);
        OpCall {
            spec,
            what: step_description(ctx, span, nspan),
            receiver,
            list_input,
            stacks_list,
            other_producers,
            numbers_only,
            recv,
            positional,
            keywords,
            span,
            nspan,
        }
    }

    /// The alternatives of the input, `None` when its layout is unknown.
    fn input_alts(&self) -> Option<Vec<TensorAlt>> {
        primary_alts(&self.recv, &self.positional)
            .or_else(|| self.list_input.clone().map(|alt| vec![alt]))
    }

    /// The input as a value (the receiver, else the first positional argument).
    fn input(&self) -> Option<&Value> {
        self.recv.as_ref().or(self.positional.first())
    }

    /// The arguments after the input (see [`method_args`]).
    fn method_args(&self) -> &[Value] {
        method_args(&self.recv, &self.positional)
    }

    /// The converted arguments bound with `layout` as the input (see [`bind_with_input`]).
    fn bind(
        &self,
        args: &OpArgs,
        layout: &Option<SymLayout>,
    ) -> Result<ops::BoundArgs<Dim>, ops::BindError> {
        let (positional, keywords) = args;
        let (method_call, list_input) = (self.recv.is_some(), self.list_input.is_some());
        bind_with_input(
            self.spec,
            method_call,
            list_input,
            positional,
            keywords,
            layout,
        )
    }
}

/// Input layout unknown: nothing certain can follow, but some ops still write a fresh
/// contiguous tensor (`matmul`, `softmax`, `.contiguous()`).
fn apply_to_unknown_input(ctx: &mut ApplyCtx, call: &OpCall) -> Value {
    let (spec, span) = (call.spec, call.span);
    // One outcome of unknown input, so that the path is still seen to reach the call
    // (a failure on another path is then reported on that path only).
    let mut unknown = AltOutcome::bare(
        TensorAlt::new(None, None),
        Outcome::Unknown,
        Tri::Unknown,
        ctx.decisions.to_vec(),
    );
    // candle tests some operands on their own (a matmul's rhs strides): they are kept
    // for the lints even when the input is lost.
    if spec.semantics == ops::Semantics::Candle {
        unknown.operands = unknown_input_operands(ctx, call);
    }
    let why = input_unknown_reason(call.input());
    ctx.record_with(spec, span, call.nspan, vec![unknown], Some(why));
    let args = call.method_args();
    if let Some(v) = partial_product(ctx, call, None) {
        return v;
    }
    if let Some(v) = same_shape_as_known_operand(ctx, call) {
        return v;
    }
    // The dataflow goes on through a tensor of unknown layout.
    let input = producer_of(call.input().unwrap_or(&Value::NoneVal));
    let others = call.other_producers.clone();
    let producer = made_by(spec, span, input, others, call.numbers_only, None, None);
    if fresh_output(spec, args, &call.keywords) {
        return with_producer(fresh_contiguous(ctx, span, &call.what), &producer);
    }
    with_producer(unknown_result(spec, why), &producer)
}

/// A candle same-shape op of an input the analysis lost (`mask.where_cond(&on_true,
/// &scores)`): a known operand gives the shape, since the op fails unless every operand
/// has it, and the output is a new row-major tensor.
fn same_shape_as_known_operand(ctx: &mut ApplyCtx, call: &OpCall) -> Option<Value> {
    if call.spec.variant.as_deref() != Some("same_shape") {
        return None;
    }
    let bound = bind_without_input(ctx, call).ok()?;
    let d = Decider::new(&ctx.facts.assumptions);
    let OpResult::Tensor(layout) = ops::apply(call.spec, &bound, &d).result else {
        return None;
    };
    let step = Step::fresh(
        call.span,
        call.what.clone(),
        Some(layout.clone()),
        ctx.context.clone(),
    );
    Some(Value::Tensor(TensorVal::single(
        Some(layout),
        Some(Arc::new(step)),
    )))
}

/// The call's arguments converted and bound, its input's layout unknown.
fn bind_without_input(
    ctx: &ApplyCtx,
    call: &OpCall,
) -> Result<ops::BoundArgs<Dim>, ops::BindError> {
    let args = convert_args(
        ctx.shapes,
        &call.spec.params,
        call.receiver,
        &call.positional,
        &call.keywords,
    );
    call.bind(&args, &None)
}

/// The tensor operands besides an input of unknown layout, as bound (see
/// [`tensor_operands`]); none when the call does not bind.
fn unknown_input_operands(ctx: &ApplyCtx, call: &OpCall) -> Vec<(String, Option<SymLayout>)> {
    match bind_without_input(ctx, call) {
        Ok(bound) => tensor_operands(call.spec, &bound, call.receiver.unwrap_or(0)),
        Err(_) => Vec::new(),
    }
}

/// The alternatives the op runs on: resolved to the sizes the path gave them, with a layout
/// the op itself shows (see [`input_layout_from_op`]), and a permute of a parameter split
/// by memory format (see [`split_by_memory_format`]).
fn input_alternatives(
    ctx: &mut ApplyCtx,
    call: &OpCall,
    args: &OpArgs,
    alts: Vec<TensorAlt>,
) -> Vec<TensorAlt> {
    let alts: Vec<TensorAlt> = alts.iter().map(|a| ctx.resolve(a)).collect();
    let alts: Vec<TensorAlt> = alts
        .into_iter()
        .map(|alt| input_layout_from_op(ctx, call, args, alt))
        .collect();
    if call.spec.kind != OpKind::Permute {
        return alts;
    }
    split_by_memory_format(alts, |alt| {
        call.bind(args, &alt.layout)
            .is_ok_and(|b| permutes_parameter_channels_last(call.spec, &b, alt))
    })
}

/// `alt` with the layout the op gives it: where its own is unknown, the op itself may say
/// how many dims it has (`permute(0, 2, 1, 3)`), and then the tensor gets a named size per
/// dim, for this use and every alias; a packed block of leading dims is unpacked where the
/// op fixes the rank.
fn input_layout_from_op(
    ctx: &mut ApplyCtx,
    call: &OpCall,
    (positional, keywords): &OpArgs,
    mut alt: TensorAlt,
) -> TensorAlt {
    let spec = call.spec;
    if alt.layout.is_none() && call.list_input.is_none() {
        let (span, nspan) = (call.span, call.nspan);
        if let Some(layout) =
            materialize_from_op(ctx, spec, positional, keywords, &alt, span, nspan)
        {
            alt.layout = Some(layout);
        }
    }
    if let Some(layout) = alt
        .layout
        .as_ref()
        .and_then(|l| unpack_by_rank(ctx, spec, positional, keywords, l))
    {
        alt.layout = Some(layout);
    }
    alt
}

/// What the result of one alternative is made from, besides its recorded outcome.
struct AltApplied {
    result: OpResult<Dim>,
    /// The `dim` argument (which dim a reduction or softmax runs over).
    dim_arg: Option<ArgValue<Dim>>,
    /// The view/reshape target entry by entry, `None` where unreadable.
    loose_target: Option<Vec<Option<Dim>>>,
    /// How the chain names the step, with what a refiner assumed.
    what: String,
}

/// Bind the call to one alternative of its input, decide the op on it, refine what stays
/// unknown: the outcome the event records, and what the result is made from.
fn apply_to_alt(
    ctx: &mut ApplyCtx,
    call: &OpCall,
    args: &OpArgs,
    alt: &TensorAlt,
) -> (AltOutcome, AltApplied) {
    let spec = call.spec;
    let mut input = alt.clone();
    let mut operands = Vec::new();
    let mut dim_arg = None;
    let mut loose_target = None;
    let mut decided = match call.bind(args, &input.layout) {
        Ok(bound) if super::prefix::unsafe_on_packed(spec, &bound) => {
            Decided::plain(unknown_transfer(), None)
        }
        Ok(bound) => {
            dim_arg = bound.get("dim").cloned();
            loose_target = target_entries(spec, &bound);
            operands = tensor_operands(spec, &bound, call.receiver.unwrap_or(0));
            if input.layout.is_none() && call.list_input.is_none() {
                let (t, target, refined) =
                    contiguous_unknown_shape(ctx, spec, &bound, alt, call.span);
                if refined.is_some() {
                    input.layout = refined;
                }
                Decided::plain(t, target)
            } else {
                refine::decide(ctx, spec, &bound, &call.what)
            }
        }
        Err(_) => Decided::plain(unknown_transfer(), None),
    };
    if decided.target.is_none() && matches!(spec.kind_name(), "flatten" | "ravel") {
        // No shape argument: the output shape tells which dims are merged.
        if let OpResult::Tensor(l) = &decided.transfer.result {
            decided.target = Some(l.shape.clone());
        }
    }
    let (target, assumptions) = (decided.target, decided.assumptions);
    let mut outcome =
        record::alt_outcome(ctx, input, &decided.transfer, target, assumptions, operands);
    if call.stacks_list && matches!(outcome.outcome, Outcome::Ok(_)) {
        outcome.copies = Tri::Yes;
        outcome.stacks_list = true;
        outcome.copied_numel = outcome.input.layout.as_ref().map(|l| l.numel());
    }
    let applied = AltApplied {
        result: decided.transfer.result,
        dim_arg,
        loose_target,
        what: decided.what.unwrap_or_else(|| call.what.clone()),
    };
    (outcome, applied)
}

/// The value one alternative gives, from its outcome (the last of `outcomes`): its layout
/// (see [`layout_result`]), the facts the passes put on it, and the call that produced it.
fn result_of_alt(
    ctx: &mut ApplyCtx,
    call: &OpCall,
    mut applied: AltApplied,
    outcomes: &[AltOutcome],
) -> Value {
    let (spec, span) = (call.spec, call.span);
    let outcome = outcomes
        .last()
        .expect("the alternative's outcome is recorded");
    let input = &outcome.input;
    let dim_arg = applied.dim_arg.take();
    let value = layout_result(ctx, call, applied, outcomes);
    let site = OpSite {
        source: ctx.source,
        spec,
        span,
        name_span: call.nspan,
        assumptions: &ctx.facts.assumptions,
    };
    let value = super::facts::after_op(&site, input, outcome, value);
    // A tensor op whose result's layout is unknown still made a tensor.
    let value = match value {
        Value::Unknown(why) if spec.returns_tensor() => Value::unknown_tensor(why),
        v => v,
    };
    if !matches!(value, Value::Tensor(_)) {
        return value;
    }
    let producer = made_by(
        spec,
        span,
        input.made_by.clone(),
        call.other_producers.clone(),
        call.numbers_only,
        dim_arg.as_ref(),
        input.layout.as_ref(),
    );
    with_producer(value, &producer)
}

/// The value of one alternative's result before its copy and producer: a product or a view
/// the analysis can still tell part of, a contiguous tensor the op writes, or the transfer
/// function's result.
fn layout_result(
    ctx: &mut ApplyCtx,
    call: &OpCall,
    applied: AltApplied,
    outcomes: &[AltOutcome],
) -> Value {
    let (spec, span, what) = (call.spec, call.span, &call.what);
    let outcome = outcomes
        .last()
        .expect("the alternative's outcome is recorded");
    let input = &outcome.input;
    let args = call.method_args();
    let fresh = fresh_output(spec, args, &call.keywords);
    let unknown = matches!(applied.result, OpResult::Unknown | OpResult::UnknownTensor);
    let layout = input.layout.as_ref();
    let partial = unknown
        .then(|| partial_product(ctx, call, layout))
        .flatten();
    let partial = partial.or_else(|| {
        unknown
            .then(|| pieces_of_unknown_count(ctx, call, input, span, what))
            .flatten()
    });
    let partial = partial.or_else(|| {
        let (target, loose) = (outcome.target.as_deref(), applied.loose_target.as_deref());
        unknown
            .then(|| contiguous_view_result(ctx, spec, layout, target, loose, input, span, what))
            .flatten()
    });
    match applied.result {
        _ if partial.is_some() => partial.unwrap_or(Value::Unknown(UnknownReason::Unmodelled)),
        OpResult::UnknownTensor if follows_contiguous_input(ctx.facts, spec, input) => {
            contiguous_from_input(ctx, input, span, what)
        }
        OpResult::UnknownTensor if !list_input_decides_contiguity(ctx.facts, call) => {
            Value::unknown_tensor(result_unknown(spec))
        }
        // The layout is unknown but the op writes a new contiguous tensor.
        OpResult::UnknownTensor | OpResult::Unknown if fresh => fresh_contiguous(ctx, span, what),
        r => {
            let of = ResultOf {
                same_shape: keeps_shape(spec, &operands_of(outcomes)),
                writes_new_tensor: fresh,
            };
            let why = result_unknown(spec);
            result_value(ctx, input, r, span, &applied.what, of, why)
        }
    }
}

/// Can the contiguity of a list op's result of unknown layout follow from its first
/// tensor's (`result_value` keeps a contiguous input's state)? Always for an op of one
/// input and for torch's list ops; candle's `cat` only when every tensor of the list is
/// known contiguous (`Tensor::cat(&[&rot, &pass], D::Minus1)` with `pass` a slice of a
/// transposed tensor is not).
fn list_input_decides_contiguity(facts: &Facts, call: &OpCall) -> bool {
    if call.list_input.is_none() || call.spec.first_of_list_decides_contiguity() {
        return true;
    }
    let Some(Value::Tuple(items)) = call.positional.first() else {
        return false;
    };
    let d = Decider::new(&facts.assumptions);
    let contiguous = |alt: &TensorAlt| match &alt.layout {
        None => true,
        Some(l) => call.spec.is_contiguous(l, &d).is_yes(),
    };
    items.iter().all(|item| match item {
        Value::Tensor(TensorVal::Alts(alts)) => alts.iter().all(contiguous),
        _ => false,
    })
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

/// `x.split(sizes, dim)` whose pieces the analysis cannot count (`sizes` a list of unknown
/// length, `[h * w for h, w in shapes]`): a list of unknown length ([`Value::Repeated`]) of
/// pieces that are each a narrow of `x` along `dim`, with its strides and a size of its own
/// (one symbol for every piece: the list's item stands for each).
fn pieces_of_unknown_count(
    ctx: &mut ApplyCtx,
    call: &OpCall,
    input: &TensorAlt,
    span: Span,
    what: &str,
) -> Option<Value> {
    let spec = call.spec;
    if spec.kind != OpKind::Split || spec.semantics != ops::Semantics::Torch {
        return None;
    }
    let layout = input.layout.as_ref()?;
    let dim = match call.keywords.iter().find(|(k, _)| k == "dim") {
        Some((_, v)) => Some(v),
        None => call.method_args().get(1),
    };
    let dim = match dim {
        None => 0,
        Some(Value::Int(d)) => d.as_lit()?,
        Some(_) => return None,
    };
    let d = crate::layout::wrap_dim(dim, layout.rank()).ok()?;
    let list = ctx
        .name_hint
        .clone()
        .unwrap_or_else(|| "pieces".to_string());
    let mut piece = layout.clone();
    piece.shape[d] = ctx.root.mint(&format!("{list}[i].shape[{d}]"));
    piece.offset = ctx.root.mint(&format!("{list}[i].offset"));
    let step = Step::after(
        span,
        format!("{what} (a list of unknown length: each piece a narrow of dim {d})"),
        Some(piece.clone()),
        input.chain.clone(),
        ctx.context.clone(),
    );
    let item = Value::Tensor(TensorVal::single(Some(piece), Some(Arc::new(step))));
    Some(Value::Repeated(Arc::new(item)))
}

/// `a @ b` (`matmul`, `bmm`) where one operand's shape is unknown and the other's is known:
/// a new contiguous tensor whose sizes the known operand gives, each other size a fresh
/// symbol (see [`torch_partial_shape`] and [`candle_partial_shape`]).
fn partial_product(ctx: &mut ApplyCtx, call: &OpCall, input: Option<&SymLayout>) -> Option<Value> {
    let (spec, span) = (call.spec, call.span);
    if !matches!(spec.kind, OpKind::Matmul | OpKind::Bmm) {
        return None;
    }
    let other = match call.method_args().first()? {
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
    let base = ctx
        .text(span)
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .find(|s| !s.is_empty())
        .unwrap_or("t")
        .to_string();
    let (shape, note) = match spec.semantics {
        ops::Semantics::Torch => torch_partial_shape(ctx, spec, known, known_is_left, &base)?,
        ops::Semantics::Candle => {
            let unknown = unknown_operand_name(ctx, call, known_is_left).unwrap_or(base);
            (
                candle_partial_shape(ctx, known, known_is_left, &unknown)?,
                "",
            )
        }
    };
    let layout = SymLayout::contiguous(shape);
    let step = Step::fresh(
        span,
        format!("{}{note}", call.what),
        Some(layout.clone()),
        ctx.context.clone(),
    );
    Some(Value::Tensor(TensorVal::single(
        Some(layout),
        Some(Arc::new(step)),
    )))
}

/// The unknown operand of a method call `a.matmul(&b)` as written, when it is a plain path
/// (`value_states`, `self.v`): the argument when the receiver is the known one, else the
/// receiver. The fresh sizes of the product are named after it.
fn unknown_operand_name(ctx: &ApplyCtx, call: &OpCall, known_is_left: bool) -> Option<String> {
    let (span, nspan) = (call.span, call.nspan);
    if call.recv.is_none() || nspan.start <= span.start {
        return None;
    }
    let text = if known_is_left {
        ctx.text(Span::new(nspan.end as usize, span.end as usize))
    } else {
        ctx.text(Span::new(span.start as usize, nspan.start as usize))
    };
    let name = text.trim_matches(|c: char| "(&)?.".contains(c) || c.is_whitespace());
    let plain = |c: char| c.is_alphanumeric() || c == '_' || c == '.';
    (!name.is_empty() && name.chars().all(plain)).then(|| name.to_string())
}

/// torch's product of a known operand with batch dims: its batch dims, the known matrix
/// size and one fresh size. `bmm` takes 3-d operands only, so that holds outright; for
/// `matmul` it holds if the unknown operand has no more dims than the known one (an extra
/// leading dim would add one), which the returned note states.
fn torch_partial_shape(
    ctx: &mut ApplyCtx,
    spec: &OpSpec,
    known: &SymLayout,
    known_is_left: bool,
    base: &str,
) -> Option<(Vec<Dim>, &'static str)> {
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
    let shape = matrix_sizes(
        ctx,
        known,
        known_is_left,
        base,
        known.shape[..rank - 2].to_vec(),
    );
    let note = match spec.kind {
        OpKind::Bmm => "",
        _ => " (assuming its operand of unknown shape has no more dims than the other)",
    };
    Some((shape, note))
}

/// candle's `matmul` (no broadcasting: both operands of one rank, spec §10.3) gives
/// `[lhs batch dims…, m, n]`: a known lhs fixes all but `n`; a known rhs fixes the rank and
/// `n` (the lhs's batch dims need only have the same product, so they are fresh sizes).
fn candle_partial_shape(
    ctx: &mut ApplyCtx,
    known: &SymLayout,
    known_is_left: bool,
    base: &str,
) -> Option<Vec<Dim>> {
    let rank = known.rank();
    if rank < 2 {
        return None;
    }
    let batch = if known_is_left {
        known.shape[..rank - 2].to_vec()
    } else {
        (0..rank - 2)
            .map(|i| ctx.root.mint(&format!("{base}.shape[{i}]")))
            .collect()
    };
    Some(matrix_sizes(ctx, known, known_is_left, base, batch))
}

/// `batch` followed by the product's matrix sizes: the known operand's (`m` of a lhs, `n` of
/// a rhs) and a fresh size for the other's.
fn matrix_sizes(
    ctx: &mut ApplyCtx,
    known: &SymLayout,
    known_is_left: bool,
    base: &str,
    mut shape: Vec<Dim>,
) -> Vec<Dim> {
    let rank = known.rank();
    if known_is_left {
        shape.push(known.shape[rank - 2].clone());
        shape.push(ctx.root.mint(&format!("{base}.shape[-1]")));
    } else {
        shape.push(ctx.root.mint(&format!("{base}.shape[-2]")));
        shape.push(known.shape[rank - 1].clone());
    }
    shape
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
/// layout (see [`OpKind::output_always_contiguous`]). `rms_norm` keeps some
/// input layouts, and `contiguous(memory_format=…)` may ask for channels-last.
fn fresh_output(spec: &OpSpec, positional: &[Value], keywords: &[(String, Value)]) -> bool {
    // Both libraries allocate these outputs row-major (candle's matmul and fused kernels
    // write a fresh contiguous buffer on every backend, spec §10).
    spec.kind.output_always_contiguous()
        && !matches!(
            spec.variant.as_deref(),
            Some("only_row_major" | "alias_when_unchanged")
        )
        && (spec.kind != OpKind::Contiguous || (positional.is_empty() && keywords.is_empty()))
}

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

/// The arguments after the input: all positional ones of a method call, the rest of a
/// function call's.
fn method_args<'v>(recv: &Option<Value>, positional: &'v [Value]) -> &'v [Value] {
    if recv.is_some() || positional.is_empty() {
        positional
    } else {
        &positional[1..]
    }
}

/// The parameter that holds a `view`'s or `reshape`'s target shape.
fn target_param(spec: &OpSpec) -> &'static str {
    if spec.kind == OpKind::View {
        "size"
    } else {
        "shape"
    }
}

/// A candle reshape target whose entries are not all readable (`(b, t, self.num_kv_heads,
/// head_dim)` with a size the analysis cannot compute): each entry of a candle shape is one
/// dim, so the target has that rank, with a fresh size for each unreadable entry. `None`
/// for other tables, or a target that is not a list of entries.
fn candle_loose_target(
    ctx: &mut ApplyCtx,
    spec: &OpSpec,
    bound: &ops::BoundArgs<Dim>,
    span: Span,
) -> Option<Vec<Dim>> {
    if spec.semantics != ops::Semantics::Candle {
        return None;
    }
    let entries = target_entries(spec, bound)?;
    Some(
        entries
            .into_iter()
            .enumerate()
            .map(|(i, size)| size.unwrap_or_else(|| target_size(ctx, span, i)))
            .collect(),
    )
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
        .unwrap_or("t")
        // A chain broken over lines (`x\n    .reshape(..)`) leaves the line break.
        .trim();
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
            ArgValue::IntList(_) => None,
            other => Some(other.as_size()),
        })
        .collect()
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
    let text = single_spaced(text);
    // Bytes bound characters: a short text needs no count (this runs once per op call).
    if text.len() > MAX_CHARS && text.chars().count() > MAX_CHARS {
        let cut: String = text.chars().take(MAX_CHARS - 1).collect();
        format!("`{cut}…`")
    } else {
        let mut quoted = String::with_capacity(text.len() + 2);
        quoted.push('`');
        quoted.push_str(&text);
        quoted.push('`');
        quoted
    }
}

/// `text` with its words joined by single spaces (`split_whitespace` then `join(" ")`),
/// borrowed when it is so already: most call texts fit on one line.
fn single_spaced(text: &str) -> std::borrow::Cow<'_, str> {
    let bytes = text.as_bytes();
    let plain = !text.starts_with(char::is_whitespace)
        && !text.ends_with(char::is_whitespace)
        && !bytes.windows(2).any(|w| w == b"  ")
        && text.chars().all(|c| c == ' ' || !c.is_whitespace());
    if plain {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(text.split_whitespace().collect::<Vec<_>>().join(" "))
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
    let read = |ctx: &ApplyCtx, i: usize| {
        alt.origin
            .and_then(|o| ctx.root.dim_name(o, i as i64, Some(dims)))
    };
    let shape: Vec<Dim> = (0..dims)
        .map(|i| match read(ctx, i) {
            Some(size) => size,
            None => ctx.root.mint(&format!("{base}.shape[{i}]")),
        })
        .collect();
    let layout = SymLayout::contiguous(shape);
    if let Some(o) = alt.origin {
        ctx.shapes.insert(o, layout.clone());
    }
    Some(layout)
}

/// The rank an op's arguments alone require of its input (`permute(0, 2, 1, 3)`, candle's
/// `permute((0, 2, 1, 3))`: 4).
fn rank_fixed_by_op(
    spec: &OpSpec,
    positional: &[ArgValue<Dim>],
    keywords: &[(String, ArgValue<Dim>)],
) -> Option<usize> {
    if spec.kind != OpKind::Permute {
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
        stacks_list: false,
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
        // Sizes of its own: the arguments' are not known. A 1-d range is named after the
        // argument that gives its length, as written (`torch.arange(nh)`: `nh`).
        let args = Span::new(nspan.end as usize, span.end as usize);
        let length = length_argument(spec.kind, ctx.text(args)).filter(|_| rank == 1);
        let shape: Vec<Dim> = (0..rank)
            .map(|i| match &length {
                Some(name) => ctx.root.mint(name),
                None if spec.name.contains('.') => {
                    ctx.root.mint(&format!("{}.shape[{i}]", spec.name))
                }
                None => ctx.root.mint(&format!("torch.{}.shape[{i}]", spec.name)),
            })
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

/// The argument that gives a 1-d range its length, as `arguments` (the call's parentheses
/// and what is inside) write it, when it is short: `arange`'s only one, `linspace`'s
/// `steps` (the third, or by its keyword).
fn length_argument(kind: OpKind, arguments: &str) -> Option<String> {
    const LONGEST: usize = 24;
    let inside = arguments.trim().strip_prefix('(')?.strip_suffix(')')?;
    let parts = crate::ir::split_top_level(inside, ',');
    let keyword = |name: &str| {
        parts.iter().find_map(|p| {
            let (key, value) = p.split_once('=')?;
            (key.trim() == name && !value.starts_with('=')).then_some(value)
        })
    };
    let positional: Vec<&str> = parts
        .iter()
        .copied()
        .filter(|p| !p.trim().is_empty() && !p.contains('='))
        .collect();
    let length = match kind {
        OpKind::Arange if positional.len() == 1 => positional[0],
        OpKind::Linspace => keyword("steps").or_else(|| positional.get(2).copied())?,
        _ => return None,
    };
    let length = length.split_whitespace().collect::<Vec<_>>().join(" ");
    (!length.is_empty() && length.chars().count() <= LONGEST).then_some(length)
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
        OpKind::EinopsEinsum => match positional.last() {
            Some(Value::Str(pattern)) => ops::einsum_equation(pattern)
                .and_then(|equation| crate::layout::einsum::contiguous_from_letters(&equation)),
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
            let target = ops::target_shape(spec, bound)
                .or_else(|| candle_loose_target(ctx, spec, bound, span));
            let Some(target) = target else {
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
            let size = size_of_unknown_shape(ctx, bound, alt, span);
            (
                plain_transfer(OpResult::Size(ArgValue::Int(size))),
                None,
                None,
            )
        }
        _ if spec.preserves_contiguous_shape() => {
            (plain_transfer(OpResult::UnknownTensor), None, None)
        }
        "index" if takes_leading_rows(bound) => {
            (plain_transfer(OpResult::UnknownTensor), None, None)
        }
        // A contiguous tensor of another shape (`x.squeeze(2)`: its rank unknown too).
        _ if spec.keeps_contiguity() => (plain_transfer(OpResult::UnknownTensor), None, None),
        _ => (unknown_transfer(), None, None),
    }
}

/// Does a subscript take rows of dim 0 and keep the rest whole (`source[i:i + n]`,
/// `x[b]`, `x[a:b, ...]`)? Of a contiguous tensor that is contiguous, whatever its rank
/// and sizes (another shape: a tensor of its own).
fn takes_leading_rows(bound: &ops::BoundArgs<Dim>) -> bool {
    let Some(ArgValue::IntList(entries)) = bound.get("indices") else {
        return false;
    };
    let Some((first, rest)) = entries.split_first() else {
        return false;
    };
    let rows = match first {
        ArgValue::Int(_) => true,
        ArgValue::Slice(s) => {
            let step_one = matches!(&s.step, ArgValue::None) || s.step.as_i64() == Some(1);
            step_one && !at_most_one_row(s)
        }
        _ => false,
    };
    let whole = |e: &ArgValue<Dim>| match e {
        ArgValue::Ellipsis => true,
        ArgValue::Slice(s) => [&s.start, &s.stop, &s.step].iter().all(|p| p.is_none()),
        _ => false,
    };
    rows && rest.iter().all(whole)
}

/// A slice that keeps at most one row (`x[:1]`, `x[-1:]`, `x[3:4]`): its result has a dim
/// of size 0 or 1, which a tensor of unknown shape would take to be a size ≥ 2.
fn at_most_one_row(s: &ops::SliceArg<Dim>) -> bool {
    let lit = |p: &ArgValue<Dim>| p.as_size().and_then(|d| d.as_lit());
    let rows = match (&s.start, &s.stop) {
        (ArgValue::None, stop) => lit(stop),
        (start, ArgValue::None) => lit(start).filter(|&v| v < 0).map(|v| -v),
        (start, stop) => lit(stop).zip(lit(start)).map(|(b, a)| b - a),
    };
    rows.is_some_and(|n| n <= 1)
}

/// `x.size(-1)` of a tensor of unknown shape: one size, the same at every read of that dim
/// (named after the code that reads it first).
fn size_of_unknown_shape(
    ctx: &mut ApplyCtx,
    bound: &ops::BoundArgs<Dim>,
    alt: &TensorAlt,
    span: Span,
) -> Dim {
    let dim = match bound.get("dim") {
        Some(ArgValue::Int(d)) => d.as_lit(),
        _ => None,
    };
    let known = alt
        .origin
        .zip(dim)
        .and_then(|(o, i)| ctx.root.dim_name(o, i, None));
    match known {
        Some(size) => size,
        None => {
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
            if let (Some(o), Some(i)) = (alt.origin, dim) {
                ctx.root.dim_names.insert((o, i), size.clone());
            }
            size
        }
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
        ArgValue::Str(s) => Value::Str(s.into()),
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

#[cfg(test)]
mod tests {
    use super::single_spaced;

    #[test]
    fn single_spaced_joins_words_as_split_whitespace_does() {
        for text in [
            "x.view(B, T, C)",
            " x.view(B,\n    T, C) ",
            "a  b",
            "a\tb",
            "",
            "  ",
            "a\u{a0}b",
        ] {
            let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
            assert_eq!(single_spaced(text), joined, "{text:?}");
        }
    }
}
