//! Calls: resolving what a call expression refers to (a tensor method, a library
//! function from the op tables, an `nn.Module` object, one of the file's own functions)
//! and applying ops to every alternative layout of their input, recording an
//! [`OpEvent`] per call site for the lints.

use std::sync::Arc;

use crate::ir::{self, BinOp, Expr, ExprKind, Language, Span};
use crate::layout::{infer_size, Decider, Dim, ShapeError, Tri};
use crate::ops::schema::{ParamSpec, ParamType, Variadic};
use crate::ops::{self, ArgValue, OpErrorKind, OpKind, OpResult, OpSpec};

use super::env::Env;
use super::event::{AltOutcome, OpEvent, Outcome};
use super::interp::Interpreter;
use super::value::{join, NnModuleVal, Step, SymLayout, TensorAlt, TensorVal, Value};

/// Attribute reads on a tensor that are ops (`x.T`, `x.mT`, `x.shape`, ...).
pub fn is_tensor_property(it: &Interpreter, attr: &str) -> bool {
    it.tables.attribute(attr).is_some()
}

/// A parameter used as a tensor: contiguous, shape unknown (assumption 1).
pub fn param_as_tensor(name: &str, span: Span) -> Value {
    let step = Step {
        span,
        what: format!("parameter `{name}` (assumed contiguous)"),
        layout: None,
        prev: None,
    };
    Value::Tensor(TensorVal::single(None, Some(Arc::new(step))))
}

/// `self.register_buffer("name", value)` → `name`.
pub fn register_buffer_name(e: &Expr) -> Option<String> {
    let ExprKind::Call { func, args } = &e.kind else {
        return None;
    };
    let ExprKind::Attr { value, attr } = &func.kind else {
        return None;
    };
    if attr != "register_buffer" || !matches!(&value.kind, ExprKind::Name(n) if n == "self") {
        return None;
    }
    match &args.first()?.value.kind {
        ExprKind::Str(s) => Some(s.clone()),
        _ => None,
    }
}

/// Evaluated call arguments.
struct CallArgs {
    positional: Vec<Value>,
    keywords: Vec<(String, Value)>,
    /// `*args`/`**kwargs` spreads whose contents are unknown.
    opaque_spread: bool,
}

fn eval_args(it: &mut Interpreter, args: &[ir::Arg], env: &mut Env) -> CallArgs {
    let mut out = CallArgs {
        positional: Vec::new(),
        keywords: Vec::new(),
        opaque_spread: false,
    };
    for a in args {
        let v = it.eval(&a.value, env);
        if a.double_star {
            out.opaque_spread = true;
        } else if a.star {
            match v {
                Value::Tuple(items) => out.positional.extend(items),
                _ => out.opaque_spread = true,
            }
        } else if let Some(k) = &a.name {
            out.keywords.push((k.clone(), v));
        } else {
            out.positional.push(v);
        }
    }
    out
}

/// Span of the callee's last name (`view` in `x.view(...)`), for fixes.
fn name_span(func: &Expr, text: &str) -> Span {
    match &func.kind {
        ExprKind::Attr { attr, .. } => {
            let end = func.span.end as usize;
            let start = end.saturating_sub(attr.len());
            if text.get(start..end) == Some(attr.as_str()) {
                Span::new(start, end)
            } else {
                func.span
            }
        }
        _ => func.span,
    }
}

pub fn eval_call(
    it: &mut Interpreter,
    call: &Expr,
    func: &Expr,
    args: &[ir::Arg],
    env: &mut Env,
) -> Value {
    // `self.register_buffer("bias", t)` stores an attribute.
    if let Some(name) = register_buffer_name(call) {
        let a = eval_args(it, args, env);
        if let Some(v) = a.positional.get(1) {
            env.self_attrs.insert(name, v.clone());
        }
        return Value::NoneVal;
    }
    let nspan = name_span(func, it.source);
    match &func.kind {
        ExprKind::Attr { value, attr } => {
            let recv = it.eval(value, env);
            let learned = it.learned_count();
            let a = eval_args(it, args, env);
            // An argument may teach a size (`x.narrow(D::Minus1, 0, d / 2)` rewrites `d` as
            // `2·q`): the receiver, read first, must see it too.
            let recv = if it.learned_count() > learned {
                it.apply_subst(recv)
            } else {
                recv
            };
            if it.language == Language::Rust {
                if let Some(v) = rust_special_call(it, &recv, attr, &a, call.span, env) {
                    return v;
                }
            }
            if matches!(recv, Value::Tuple(_)) && LIST_MUTATORS.contains(&attr.as_str()) {
                // `shape.append(n)`: the list changed; its value is no longer known.
                if let ExprKind::Name(name) = &value.kind {
                    env.set(name, Value::Unknown);
                }
                return Value::Unknown;
            }
            if is_unknown_in_place(it, attr)
                && (recv.is_tensor() || matches!(recv, Value::Named { is_param: true, .. }))
            {
                // `x.t_()`, `x.unsqueeze_(0)`, `x.set_(...)`: the receiver's layout may have
                // changed in place; forget it.
                forget_receiver(value, env);
                return Value::unknown_tensor();
            }
            match recv {
                Value::Import(path) => {
                    call_qualified(it, &format!("{path}.{attr}"), a, call.span, nspan)
                }
                Value::Tensor(_) => tensor_method(it, attr, recv, a, call.span, nspan),
                Value::Named {
                    ref name,
                    is_param: true,
                } => {
                    if it.tables.method(attr).is_some() {
                        let t = param_as_tensor(name, value.span);
                        tensor_method(it, attr, t, a, call.span, nspan)
                    } else {
                        Value::Unknown
                    }
                }
                Value::SelfObj => {
                    let target = it.eval_attr(value, attr, func.span, env);
                    call_value(it, target, a, call.span, nspan, env)
                }
                Value::NnModule(m) if attr == "forward" || attr == "forward_t" => {
                    call_module(it, &m, a, call.span, nspan, env)
                }
                _ => Value::Unknown,
            }
        }
        ExprKind::Name(n) => {
            let target = it.lookup(n, env);
            let a = eval_args(it, args, env);
            match target {
                Value::Unknown if is_builtin(n) => builtin(it, n, a),
                other => call_value(it, other, a, call.span, nspan, env),
            }
        }
        _ => {
            let target = it.eval(func, env);
            let a = eval_args(it, args, env);
            call_value(it, target, a, call.span, nspan, env)
        }
    }
}

fn call_value(
    it: &mut Interpreter,
    target: Value,
    a: CallArgs,
    span: Span,
    nspan: Span,
    env: &mut Env,
) -> Value {
    match target {
        Value::Import(path) => call_qualified(it, &path, a, span, nspan),
        Value::NnModule(m) => call_module(it, &m, a, span, nspan, env),
        Value::Function(f, bound) => {
            if a.opaque_spread {
                return Value::Unknown;
            }
            let mut a = a;
            // Rust's `Self::method(self, x)`: the receiver is passed explicitly, but the
            // IR lists a method's parameters without it.
            if it.language == Language::Rust
                && f.is_method
                && matches!(a.positional.first(), Some(Value::SelfObj))
            {
                a.positional.remove(0);
            }
            let args: Vec<(Option<String>, Value)> = a
                .positional
                .into_iter()
                .map(|v| (None, v))
                .chain(a.keywords.into_iter().map(|(k, v)| (Some(k), v)))
                .collect();
            it.call_local(&f, bound, args)
        }
        _ => Value::Unknown,
    }
}

/// A call of a dotted library name: an op of the tables, or an `nn.Module` constructor.
fn call_qualified(it: &mut Interpreter, path: &str, a: CallArgs, span: Span, nspan: Span) -> Value {
    if let Some(spec) = it.tables.function(path) {
        if a.opaque_spread {
            return unknown_result(spec);
        }
        return apply_op(it, spec, None, a.positional, a.keywords, span, nspan);
    }
    if let Some(mspec) = it.tables.module(path) {
        let (positional, keywords) = convert_args(&mspec.init, None, &a.positional, &a.keywords);
        return match ops::bind_module(mspec, positional, keywords) {
            Ok(args) => Value::NnModule(Arc::new(NnModuleVal { spec: mspec, args })),
            Err(_) => Value::Unknown,
        };
    }
    Value::Unknown
}

fn unknown_result(spec: &OpSpec) -> Value {
    if spec.returns_tensor() {
        Value::unknown_tensor()
    } else {
        Value::Unknown
    }
}

fn call_module(
    it: &mut Interpreter,
    m: &Arc<NnModuleVal>,
    a: CallArgs,
    span: Span,
    nspan: Span,
    env: &mut Env,
) -> Value {
    let Some(input) = a.positional.first().cloned() else {
        return Value::Unknown;
    };
    let mut input = as_tensor(input, span);
    // A module that fixes its input's last size (`nn.Linear(in_features, ...)`) tells us
    // that size: the call fails otherwise.
    if let (Some(ArgValue::Int(want)), Value::Tensor(TensorVal::Alts(alts))) =
        (m.args.get("in_features"), &input)
    {
        if let [TensorAlt {
            layout: Some(l), ..
        }] = alts.as_slice()
        {
            if let Some(last) = l.shape.last() {
                let (last, want) = (last.clone(), want.clone());
                it.learn_equal(&last, &want, env);
                input = it.apply_subst(input);
            }
        }
    }
    let Value::Tensor(TensorVal::Alts(alts)) = &input else {
        return Value::unknown_tensor();
    };
    let mut results = Vec::new();
    for alt in alts {
        let assumptions = it.assumptions.clone();
        let d = Decider::new(&assumptions);
        let arg = ArgValue::Tensor(alt.layout.clone());
        let transfer = ops::apply_module(m.spec, &m.args, arg, &d);
        results.push(result_value(
            alt,
            transfer.result,
            span,
            &format!("`{}(…)`", m.spec.name),
        ));
    }
    let _ = nspan;
    join_all(results)
}

/// A method call on a tensor value.
fn tensor_method(
    it: &mut Interpreter,
    method: &str,
    recv: Value,
    a: CallArgs,
    span: Span,
    nspan: Span,
) -> Value {
    let Some(spec) = it.tables.method(method) else {
        return unknown_method_result(method, recv);
    };
    if a.opaque_spread {
        return unknown_result(spec);
    }
    let mut positional = a.positional;
    // Rust's `IndexOp::i` takes one index per dim as a single tuple, `x.i((.., 0..2))`:
    // its elements are the entries of a Python subscript `x[:, 0:2]`.
    if it.language == Language::Rust && spec.kind == OpKind::Index {
        if let [Value::Tuple(entries)] = positional.as_slice() {
            positional = entries.clone();
        }
    }
    apply_op(it, spec, Some(recv), positional, a.keywords, span, nspan)
}

/// Rust calls that are not table ops but change what the value is:
/// - `D::Minus(k)`: candle's dim `-k`;
/// - `xs.apply(&m)`: candle's and tch-rs's `Module::forward` called through the tensor,
///   `m.forward(xs)`;
/// - float math on a number, `(head_dim as f64).sqrt()` (the cast is erased): a float, so
///   that `(scores / scale)?` is known to be a tensor-by-scalar op.
fn rust_special_call(
    it: &mut Interpreter,
    recv: &Value,
    attr: &str,
    a: &CallArgs,
    span: Span,
    env: &mut Env,
) -> Option<Value> {
    if matches!(recv, Value::Int(_) | Value::Float) && RUST_FLOAT_METHODS.contains(&attr) {
        return Some(Value::Float);
    }
    match (recv, attr, a.positional.as_slice()) {
        (Value::Import(path), "Minus", [Value::Int(k)]) if path.rsplit('.').next() == Some("D") => {
            Some(Value::Int(Dim::lit(0).sub(k)))
        }
        (
            Value::Tensor(_) | Value::Named { is_param: true, .. },
            "apply" | "apply_t",
            [Value::NnModule(m), ..],
        ) => {
            let args = CallArgs {
                positional: vec![recv.clone()],
                keywords: Vec::new(),
                opaque_spread: false,
            };
            Some(call_module(it, m, args, span, span, env))
        }
        _ => None,
    }
}

/// Methods of Rust's `f32`/`f64` that return a float.
const RUST_FLOAT_METHODS: &[&str] = &[
    "sqrt", "powf", "powi", "exp", "ln", "log", "log2", "log10", "recip", "sin", "cos", "tanh",
    "to_f32", "to_f64",
];

/// Methods that change a Python list in place.
const LIST_MUTATORS: &[&str] = &[
    "append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
];

/// An in-place method (`name_`) the tables do not list: it may rewrite the layout.
fn is_unknown_in_place(it: &Interpreter, method: &str) -> bool {
    method.ends_with('_') && !method.starts_with("__") && it.tables.method(method).is_none()
}

fn forget_receiver(recv: &Expr, env: &mut Env) {
    match &recv.kind {
        ExprKind::Name(n) => env.set(n, Value::unknown_tensor()),
        ExprKind::Attr { value, attr } if matches!(&value.kind, ExprKind::Name(s) if s == "self") =>
        {
            env.self_attrs.insert(attr.clone(), Value::unknown_tensor());
        }
        _ => {}
    }
}

/// Methods the tables do not know: in-place methods (`x.transpose_()`) may change the
/// receiver's layout, so the result is unknown; everything else returns an unknown value.
fn unknown_method_result(_method: &str, _recv: Value) -> Value {
    Value::Unknown
}

pub fn tensor_method_by_name(
    it: &mut Interpreter,
    method: &str,
    recv: Value,
    positional: Vec<Value>,
    span: Span,
    _env: &mut Env,
) -> Value {
    let a = CallArgs {
        positional,
        keywords: Vec::new(),
        opaque_spread: false,
    };
    tensor_method(it, method, recv, a, span, span)
}

/// `x.T`, `x.mT`, `x.shape`, `x.ndim` ...
pub fn tensor_property(
    it: &mut Interpreter,
    t: Value,
    attr: &str,
    _recv: &Expr,
    span: Span,
    _env: &mut Env,
) -> Value {
    let Some(spec) = it.tables.attribute(attr) else {
        return Value::Unknown;
    };
    apply_op(it, spec, Some(t), Vec::new(), Vec::new(), span, span)
}

/// `x[...]`: basic indexing through the `__getitem__` entry of the table; each
/// comma-separated entry is one positional argument.
pub fn tensor_getitem(
    it: &mut Interpreter,
    e: &Expr,
    v: Value,
    index: &[Expr],
    env: &mut Env,
) -> Value {
    let t = match v {
        Value::Named {
            name,
            is_param: true,
        } => param_as_tensor(&name, e.span),
        other => other,
    };
    let mut items = Vec::with_capacity(index.len());
    for ix in index {
        items.push(index_item(it, ix, env));
    }
    let Some(spec) = it.tables.method("__getitem__") else {
        return Value::unknown_tensor();
    };
    apply_op(it, spec, Some(t), items, Vec::new(), e.span, e.span)
}

/// One index entry as a value: ints, `None`, `...`, slices.
fn index_item(it: &mut Interpreter, ix: &Expr, env: &mut Env) -> Value {
    match &ix.kind {
        ExprKind::Slice { lower, upper, step } => {
            let mut part = |p: &Option<Box<Expr>>| match p {
                Some(x) => it.eval(x, env),
                None => Value::NoneVal,
            };
            let (a, b, c) = (part(lower), part(upper), part(step));
            Value::Slice(Box::new([a, b, c]))
        }
        ExprKind::Ellipsis => Value::Ellipsis,
        _ => it.eval(ix, env),
    }
}

/// Python operators on tensors map to the table's dunder entries (`__add__`, `__matmul__`).
pub fn tensor_binop(
    it: &mut Interpreter,
    op: BinOp,
    l: Value,
    r: Value,
    span: Span,
    _env: &mut Env,
) -> Value {
    let method = match op {
        BinOp::Add => "__add__",
        BinOp::Sub => "__sub__",
        BinOp::Mul => "__mul__",
        BinOp::Div => "__truediv__",
        BinOp::FloorDiv => "__floordiv__",
        BinOp::Mod => "__mod__",
        BinOp::Pow => "__pow__",
        BinOp::MatMul => "__matmul__",
        BinOp::Other => "__eq__",
    };
    let (recv, other) = if l.is_tensor() { (l, r) } else { (r, l) };
    let other = match other {
        Value::Named {
            name,
            is_param: true,
        } => param_as_tensor(&name, span),
        Value::Named { .. } => Value::unknown_tensor(),
        x => x,
    };
    tensor_method_by_name(it, method, recv, vec![other], span, _env)
}

fn as_tensor(v: Value, span: Span) -> Value {
    match v {
        Value::Named {
            name,
            is_param: true,
        } => param_as_tensor(&name, span),
        other => other,
    }
}

/// Convert an abstract value to an op argument of (declared) type `ty`. A name of unknown
/// type (`n_head`, `config.dim`, `self.bias`) is a size where the op wants an int, and a
/// tensor of unknown layout where it wants a tensor — never a guessed layout.
fn to_arg(v: &Value, ty: Option<ParamType>) -> ArgValue<Dim> {
    let wants_tensor = matches!(
        ty,
        Some(
            ParamType::Tensor
                | ParamType::Tensors
                | ParamType::TensorOrScalar
                | ParamType::TensorOrNumber
        )
    );
    match v {
        Value::Tensor(TensorVal::Alts(a)) if a.len() == 1 => ArgValue::Tensor(a[0].layout.clone()),
        Value::Tensor(_) => ArgValue::Tensor(None),
        Value::Int(d) => ArgValue::Int(d.clone()),
        Value::Float => ArgValue::Float(f64::NAN),
        Value::Bool(Some(b)) => ArgValue::Bool(*b),
        Value::Str(s) => ArgValue::Str(s.clone()),
        Value::NoneVal => ArgValue::None,
        Value::Tuple(items) => {
            if ty == Some(ParamType::Tensors)
                || (!items.is_empty() && items.iter().all(|i| i.is_tensor()))
            {
                ArgValue::TensorList(
                    items
                        .iter()
                        .map(|i| match i {
                            Value::Tensor(TensorVal::Alts(a)) if a.len() == 1 => {
                                a[0].layout.clone()
                            }
                            _ => None,
                        })
                        .collect(),
                )
            } else {
                ArgValue::IntList(
                    items
                        .iter()
                        .map(|i| to_arg(i, Some(ParamType::Int)))
                        .collect(),
                )
            }
        }
        Value::Slice(parts) => {
            let [a, b, c] = &**parts;
            let part = |v: &Value| to_arg(v, Some(ParamType::Int));
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
        Value::Named { name, .. } => ArgValue::Int(Dim::sym(name)),
        _ => ArgValue::Unknown,
    }
}

/// Declared type of the parameter that the `i`-th positional argument binds to.
fn positional_type(params: &[ParamSpec], receiver: Option<usize>, i: usize) -> Option<ParamType> {
    let mut k = 0;
    for (idx, p) in params.iter().enumerate() {
        if Some(idx) == receiver || p.keyword_only || p.variadic == Variadic::Keywords {
            continue;
        }
        if p.variadic == Variadic::Positional || k == i {
            return Some(p.ty);
        }
        k += 1;
    }
    None
}

fn keyword_type(params: &[ParamSpec], name: &str) -> Option<ParamType> {
    params.iter().find(|p| p.answers_to(name)).map(|p| p.ty)
}

/// A call's arguments as op arguments: positional, then keyword.
type OpArgs = (Vec<ArgValue<Dim>>, Vec<(String, ArgValue<Dim>)>);

fn convert_args(
    params: &[ParamSpec],
    receiver: Option<usize>,
    positional: &[Value],
    keywords: &[(String, Value)],
) -> OpArgs {
    let pos = positional
        .iter()
        .enumerate()
        .map(|(i, v)| to_arg(v, positional_type(params, receiver, i)))
        .collect();
    let kw = keywords
        .iter()
        .map(|(k, v)| (k.clone(), to_arg(v, keyword_type(params, k))))
        .collect();
    (pos, kw)
}

/// For an op whose input is a list of tensors (`Tensor::cat(&[&a, &b], 2)`): the single
/// alternative of the list's first tensor, which the event reports as the op's input (the
/// op itself reads the whole list). Rust only for now: Python's `torch.cat` results stay
/// unknown, as the Python fixtures were settled with.
fn tensor_list_input(
    it: &Interpreter,
    spec: &OpSpec,
    recv: &Option<Value>,
    positional: &[Value],
) -> Option<TensorAlt> {
    if it.language != Language::Rust
        || recv.is_some()
        || spec.params.first().map(|p| p.ty) != Some(ParamType::Tensors)
    {
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
fn apply_op(
    it: &mut Interpreter,
    spec: &'static OpSpec,
    recv: Option<Value>,
    positional: Vec<Value>,
    keywords: Vec<(String, Value)>,
    span: Span,
    nspan: Span,
) -> Value {
    let recv = recv.map(|r| as_tensor(r, span));
    let what = step_description(it, span, nspan);
    // Factories (`torch.zeros(B, T)`, `torch.arange(n)`, `torch.tensor(data)`) take no
    // tensor: their first argument is a size or data, never the input.
    if recv.is_none() && spec.kind.is_factory() {
        return apply_factory(it, spec, &positional, &keywords, span, nspan, &what);
    }
    let mut positional = positional;
    if recv.is_none() {
        if let Some(first) = positional.first_mut() {
            *first = as_tensor(first.clone(), span);
        }
    }
    let receiver = if recv.is_some() {
        Some(spec.receiver.unwrap_or(0))
    } else {
        None
    };
    let (pos_converted, kw_args) = convert_args(&spec.params, receiver, &positional, &keywords);
    let list_input = tensor_list_input(it, spec, &recv, &positional);
    let Some(alts) =
        primary_alts(&recv, &positional).or_else(|| list_input.clone().map(|alt| vec![alt]))
    else {
        // Input layout unknown: still evaluate size queries etc.? Nothing certain can follow.
        record_event(it, spec, span, nspan, Vec::new(), true);
        return unknown_result(spec);
    };
    let mut outcomes = Vec::with_capacity(alts.len());
    let mut results = Vec::with_capacity(alts.len());
    let mut unknown_input = false;
    for alt in &alts {
        let input_arg = ArgValue::Tensor(alt.layout.clone());
        // The input as the op saw it (an einops pattern may name an unknown shape).
        let mut input_alt = alt.clone();
        let (recv_arg, pos_args): (Option<ArgValue<Dim>>, Vec<ArgValue<Dim>>) = if recv.is_some() {
            (Some(input_arg), pos_converted.clone())
        } else if list_input.is_some() {
            // The list itself is the argument; its first tensor only names the input.
            (None, pos_converted.clone())
        } else {
            let mut p = pos_converted.clone();
            if let Some(first) = p.first_mut() {
                *first = input_arg;
            }
            (None, p)
        };
        let assumptions = it.assumptions.clone();
        let d = Decider::new(&assumptions);
        let mut operands = Vec::new();
        let transfer = match ops::bind(spec, recv_arg, pos_args, kw_args.clone()) {
            Ok(bound) => {
                operands = tensor_operands(spec, &bound, receiver.unwrap_or(0));
                if alt.layout.is_none() && list_input.is_none() {
                    let (t, target, refined) = contiguous_unknown_shape(it, spec, &bound, span);
                    if refined.is_some() {
                        input_alt.layout = refined;
                    }
                    (t, target)
                } else {
                    let t = ops::apply(spec, &bound, &d);
                    let target = ops::target_shape(spec, &bound);
                    (t, target)
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
            ),
        };
        let (transfer, mut target) = transfer;
        if target.is_none() && matches!(spec.kind_name(), "flatten" | "ravel") {
            // No shape argument: the output shape tells which dims are merged.
            if let OpResult::Tensor(l) = &transfer.result {
                target = Some(l.shape.clone());
            }
        }
        let outcome = match &transfer.result {
            OpResult::Tensor(l) => Outcome::Ok(Some(l.clone())),
            OpResult::Tensors(_) | OpResult::Size(_) => Outcome::Ok(None),
            OpResult::UnknownTensor => Outcome::Ok(None),
            OpResult::Error(e) => Outcome::Error(e.clone()),
            OpResult::Unknown => Outcome::Unknown,
        };
        if alt.layout.is_none() && matches!(outcome, Outcome::Unknown) {
            unknown_input = true;
        }
        outcomes.push(AltOutcome {
            input: input_alt,
            target,
            outcome,
            copies: transfer.copies,
            copied_numel: transfer.copied_numel.clone(),
            copied_reshape: transfer.copied_reshape.clone(),
            assumptions: d.used(),
            operands,
        });
        results.push(result_value(alt, transfer.result, span, &what));
    }
    record_event(it, spec, span, nspan, outcomes, unknown_input);
    join_all(results)
}

/// Records what the op at `span` did (one outcome per input alternative) for the lints.
fn record_event(
    it: &mut Interpreter,
    spec: &OpSpec,
    span: Span,
    nspan: Span,
    outcomes: Vec<AltOutcome>,
    unknown_input: bool,
) {
    it.events.push(OpEvent {
        span,
        name_span: nspan,
        op: spec.name.clone(),
        kind: spec.kind_name().to_string(),
        tags: spec.tags.clone(),
        outcomes,
        unknown_input,
        divisibility: it.divisibility.clone(),
        assumptions: it.assumptions.clone(),
        semantics: spec.semantics,
        from_caller: it.in_followed_call(),
    });
}

/// How a chain label names the step at `span` (the call) whose op name is at `nspan`: a
/// method call by its own part (`.transpose(1, 2)`, so that the steps of a chain starting at
/// the same receiver read apart), anything else by its text; long texts are cut.
fn step_description(it: &Interpreter, span: Span, nspan: Span) -> String {
    const MAX_CHARS: usize = 60;
    let method_start = (nspan.start as usize).checked_sub(1);
    let is_method = nspan.start > span.start
        && method_start.is_some_and(|dot| it.text(Span::new(dot, dot + 1)) == ".");
    let text = match (is_method, method_start) {
        (true, Some(dot)) => it.text(Span::new(dot, span.end as usize)),
        _ => it.text(span),
    };
    let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() > MAX_CHARS {
        let cut: String = text.chars().take(MAX_CHARS - 1).collect();
        format!("`{cut}…`")
    } else {
        format!("`{text}`")
    }
}

/// A factory call: the op is applied once, without an input tensor; a result it can lay
/// out (`zeros(B, T)` is a contiguous (B, T)) starts a new chain.
fn apply_factory(
    it: &mut Interpreter,
    spec: &'static OpSpec,
    positional: &[Value],
    keywords: &[(String, Value)],
    span: Span,
    nspan: Span,
    what: &str,
) -> Value {
    let (pos_args, kw_args) = convert_args(&spec.params, None, positional, keywords);
    let assumptions = it.assumptions.clone();
    let d = Decider::new(&assumptions);
    let result = match ops::bind(spec, None, pos_args, kw_args) {
        Ok(bound) => ops::apply(spec, &bound, &d).result,
        Err(_) => OpResult::Unknown,
    };
    let outcome = match &result {
        OpResult::Tensor(l) => Outcome::Ok(Some(l.clone())),
        OpResult::Error(e) => Outcome::Error(e.clone()),
        _ => Outcome::Unknown,
    };
    let known = matches!(outcome, Outcome::Ok(Some(_)));
    let nothing = TensorAlt {
        layout: None,
        chain: None,
    };
    let factory_outcome = AltOutcome {
        input: nothing.clone(),
        target: None,
        outcome,
        copies: Tri::No,
        copied_numel: None,
        copied_reshape: None,
        assumptions: d.used(),
        operands: Vec::new(),
    };
    record_event(it, spec, span, nspan, vec![factory_outcome], !known);
    match result {
        OpResult::Tensor(_) | OpResult::Tensors(_) => result_value(&nothing, result, span, what),
        _ => unknown_result(spec),
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

/// Ops on a tensor known only to be contiguous (shape unknown): `view`/`reshape` give a
/// contiguous tensor of the target shape (an unknown `-1` becomes a fresh symbol); ops
/// whose output is contiguous with the input's shape keep "contiguous, shape unknown";
/// anything needing the rank is unknown.
fn contiguous_unknown_shape(
    it: &mut Interpreter,
    spec: &OpSpec,
    bound: &ops::BoundArgs<Dim>,
    span: Span,
) -> (ops::Transfer<Dim>, Option<Vec<Dim>>, Option<SymLayout>) {
    let unknown = ops::Transfer {
        result: OpResult::Unknown,
        copies: Tri::Unknown,
        copied_numel: None,
        copied_reshape: None,
    };
    match spec.kind_name() {
        "view" | "reshape" => {
            let Some(target) = ops::target_shape(spec, bound) else {
                return (unknown, None, None);
            };
            // Errors that do not depend on the element count (two `-1`s, a size < -1).
            let numel = Dim::opaque("numel");
            let assumptions = it.assumptions.clone();
            let d = Decider::new(&assumptions);
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
                return (
                    ops::Transfer {
                        result: OpResult::Error(err),
                        copies: Tri::No,
                        copied_numel: None,
                        copied_reshape: None,
                    },
                    Some(target),
                    None,
                );
            }
            let mut shape = Vec::with_capacity(target.len());
            for (i, d) in target.iter().enumerate() {
                if d.as_lit() == Some(-1) {
                    shape.push(it.mint(&format!(
                        "{}[{i}]",
                        it.text(span).split('.').next().unwrap_or("t")
                    )));
                } else {
                    shape.push(d.clone());
                }
            }
            let l = SymLayout::contiguous(shape);
            (
                ops::Transfer {
                    result: OpResult::Tensor(l),
                    copies: Tri::No,
                    copied_numel: None,
                    copied_reshape: None,
                },
                Some(target),
                None,
            )
        }
        "einops_rearrange" | "einops_reduce" | "einops_repeat" => {
            // The pattern's left side names every axis of a plain `a b c` input: that is
            // the tensor's shape (contiguous, as assumed).
            let Some(ArgValue::Str(pattern)) = bound.get("pattern") else {
                return (unknown, None, None);
            };
            let Some(lhs) = pattern.split("->").next() else {
                return (unknown, None, None);
            };
            let axes: Vec<&str> = lhs.split_whitespace().collect();
            let plain = !axes.is_empty()
                && axes.iter().all(|a| {
                    a.chars().all(|c| c.is_alphanumeric() || c == '_')
                        && !a.chars().all(|c| c.is_ascii_digit())
                });
            if !plain {
                return (unknown, None, None);
            }
            let shape: Vec<Dim> = axes.iter().map(|a| it.mint(a)).collect();
            let layout = SymLayout::contiguous(shape);
            let mut args = bound.clone();
            args.set("input", ArgValue::Tensor(Some(layout.clone())));
            let assumptions = it.assumptions.clone();
            let d = Decider::new(&assumptions);
            (ops::apply(spec, &args, &d), None, Some(layout))
        }
        "size"
            if bound
                .get("dim")
                .is_some_and(|d| matches!(d, ArgValue::Int(_))) =>
        {
            // `x.size(-1)`: one size of a tensor of unknown shape.
            let size = it.mint_for(span);
            (
                ops::Transfer {
                    result: OpResult::Size(ArgValue::Int(size)),
                    copies: Tri::No,
                    copied_numel: None,
                    copied_reshape: None,
                },
                None,
                None,
            )
        }
        _ if spec.preserves_contiguous_shape() => (
            ops::Transfer {
                result: OpResult::UnknownTensor,
                copies: Tri::No,
                copied_numel: None,
                copied_reshape: None,
            },
            None,
            None,
        ),
        _ => (unknown, None, None),
    }
}

/// The value an op produced for one input alternative, with the chain extended by this step.
fn result_value(input: &TensorAlt, r: OpResult<Dim>, span: Span, what: &str) -> Value {
    match r {
        OpResult::Tensor(l) => {
            let chain = if input.layout.as_ref() == Some(&l) {
                input.chain.clone()
            } else if is_contiguous(&l) {
                // A contiguous tensor's history cannot explain a later non-contiguity:
                // the chain restarts here.
                Some(Arc::new(Step {
                    span,
                    what: what.to_string(),
                    layout: Some(l.clone()),
                    prev: None,
                }))
            } else {
                Some(Arc::new(Step {
                    span,
                    what: what.to_string(),
                    layout: Some(l.clone()),
                    prev: input.chain.clone(),
                }))
            };
            Value::Tensor(TensorVal::single(Some(l), chain))
        }
        OpResult::Tensors(ls) => Value::Tuple(
            ls.into_iter()
                .map(|l| {
                    let step = Step {
                        span,
                        what: what.to_string(),
                        layout: Some(l.clone()),
                        prev: input.chain.clone(),
                    };
                    Value::Tensor(TensorVal::single(Some(l), Some(Arc::new(step))))
                })
                .collect(),
        ),
        OpResult::UnknownTensor => {
            if input.layout.is_none() {
                // Kept contiguous with unknown shape (see `contiguous_unknown_shape`).
                Value::Tensor(TensorVal::single(None, input.chain.clone()))
            } else {
                Value::unknown_tensor()
            }
        }
        OpResult::Size(a) => from_arg(a),
        OpResult::Error(_) | OpResult::Unknown => Value::Unknown,
    }
}

fn is_contiguous(l: &SymLayout) -> bool {
    let assumptions = crate::layout::Assumptions::default();
    l.is_contiguous(&Decider::new(&assumptions)).is_yes()
}

fn from_arg(a: ArgValue<Dim>) -> Value {
    match a {
        ArgValue::Int(d) => Value::Int(d),
        ArgValue::IntList(items) => Value::Tuple(items.into_iter().map(from_arg).collect()),
        ArgValue::Bool(b) => Value::Bool(Some(b)),
        ArgValue::Float(_) => Value::Float,
        ArgValue::Str(s) => Value::Str(s),
        ArgValue::None => Value::NoneVal,
        ArgValue::Tensor(l) => Value::Tensor(match l {
            Some(l) => TensorVal::single(Some(l), None),
            None => TensorVal::Unknown,
        }),
        _ => Value::Unknown,
    }
}

fn join_all(results: Vec<Value>) -> Value {
    let mut it = results.into_iter();
    let Some(first) = it.next() else {
        return Value::Unknown;
    };
    it.fold(first, |acc, v| join(&acc, &v))
}

fn is_builtin(name: &str) -> bool {
    matches!(
        name,
        "len" | "int" | "tuple" | "list" | "range" | "max" | "min"
    )
}

/// The few builtins that matter for sizes.
fn builtin(_it: &mut Interpreter, name: &str, a: CallArgs) -> Value {
    match (name, a.positional.as_slice()) {
        ("len", [Value::Tuple(items)]) => Value::int(items.len() as i64),
        ("int", [Value::Int(d)]) => Value::Int(d.clone()),
        ("tuple" | "list", [v @ Value::Tuple(_)]) => v.clone(),
        _ => Value::Unknown,
    }
}
