//! Calls: what a call expression refers to — a tensor method, a library function or
//! module of the op tables, a function, method or class of the analysed code, a builtin —
//! and handing it to [`super::super::apply`] or [`Interpreter::call_function`].

use std::sync::Arc;

use crate::ir::{self, BinOp, Expr, ExprKind, Language, Span};
use crate::layout::Dim;
use crate::ops::{self, ArgValue, OpKind};

use super::super::apply::{self as applying, as_tensor, param_as_tensor, CallArgs};
use super::super::env::{join_envs, join_tagged, Env};
use super::super::event::REVEAL_OP;
use super::super::value::{
    bounded_tuple, holds_packed, join, producer_of, repeated_items, same_value, with_producer,
    ClassDef, Instance, LambdaVal, NnModuleVal, PartialVal, Producer, TensorAlt, TensorVal,
    UnknownReason, Value,
};
use super::{dotted, Callee, Interpreter};

/// `self.register_buffer("name", value)` → `name`.
pub fn register_buffer_name(e: &Expr) -> Option<String> {
    let (func, args) = e.kind.as_call()?;
    let ExprKind::Attr { value, attr } = &func.kind else {
        return None;
    };
    if attr != "register_buffer" || !matches!(&value.kind, ExprKind::Name(n) if n == "self") {
        return None;
    }
    match &args.first()?.value().kind {
        ExprKind::Str(s) => Some(s.to_string()),
        _ => None,
    }
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

/// `super()` (with or without its two arguments).
fn is_super_call(e: &Expr) -> bool {
    matches!(e.kind.as_call(), Some((func, _)) if matches!(&func.kind, ExprKind::Name(n) if n == "super"))
}

/// Methods of Rust's `f32`/`f64` that return a float.
const RUST_FLOAT_METHODS: &[&str] = &[
    "sqrt", "powf", "powi", "exp", "ln", "log", "log2", "log10", "recip", "sin", "cos", "tanh",
    "to_f32", "to_f64",
];

/// The attribute under which an object whose class subclasses a library layer keeps that
/// layer (`super().__init__(…)` built it); no Python name can collide with it.
const LIBRARY_LAYER: &str = "<library layer>";

/// Methods that change a Python list or a Rust `Vec` in place.
const LIST_MUTATORS: &[&str] = &[
    "append",
    "extend",
    "insert",
    "pop",
    "remove",
    "clear",
    "sort",
    "reverse",
    // Rust's `Vec`
    "push",
    "extend_from_slice",
    "truncate",
    "drain",
    "retain",
    "dedup",
    "resize",
    "swap",
    "split_off",
];

impl Interpreter<'_> {
    fn eval_args(&mut self, args: &[ir::Arg], env: &mut Env) -> CallArgs {
        let mut out = CallArgs::positional(Vec::new());
        let mut positional_spread = false;
        // The positional arguments with each spread list of layers kept as one item (see
        // `CallArgs::layers_spread`), made at the first such spread; `spoiled` once a spread
        // is anything else.
        let mut with_layers: Option<Vec<Value>> = None;
        let mut spoiled = false;
        for a in args {
            let v = self.eval(a.value(), env);
            if a.is_double_star() {
                // An empty `**kwargs` (see `variadics_get_nothing`) passes nothing.
                let empty = matches!(&v, Value::Tuple(items) if items.is_empty());
                out.opaque_spread |= !empty;
                spoiled |= !empty;
            } else if a.is_star() {
                match v {
                    Value::Tuple(items) => {
                        out.packed_spread |= super::super::value::holds_packed(&items);
                        if let Some(w) = with_layers.as_mut() {
                            w.extend(items.iter().cloned());
                        }
                        out.positional.extend(items)
                    }
                    v => {
                        out.opaque_spread = true;
                        positional_spread = true;
                        let layers = matches!(&v, Value::Repeated(_))
                            && super::super::value::is_layer_like(&v);
                        spoiled |= !layers;
                        if layers && !spoiled {
                            let w = with_layers.get_or_insert_with(|| out.positional.clone());
                            w.push(v);
                        }
                    }
                }
            } else if let Some(k) = a.name() {
                out.keywords.push((k.to_string(), v));
            } else {
                if let Some(w) = with_layers.as_mut() {
                    w.push(v.clone());
                }
                out.positional.push(v);
            }
        }
        out.keyword_spread_only = out.opaque_spread && !positional_spread;
        out.layers_spread = with_layers.filter(|_| !spoiled);
        out
    }

    /// A call expression, sorted by the form of its callee: `super().m(…)`, `recv.m(…)`,
    /// `name(…)` or any other expression.
    pub fn eval_call(
        &mut self,
        call: &Expr,
        func: &Expr,
        args: &[ir::Arg],
        env: &mut Env,
    ) -> Value {
        // `self.register_buffer("bias", t)` stores an attribute.
        if let Some(name) = register_buffer_name(call) {
            let a = self.eval_args(args, env);
            if let Some(v) = a.positional.get(1) {
                env.set_self_attr(&name, v.clone());
            }
            return Value::NoneVal;
        }
        let nspan = name_span(func, self.source);
        match &func.kind {
            ExprKind::Attr { value, attr } if is_super_call(value) => {
                let a = self.eval_args(args, env);
                self.call_super(attr, a, call.span, env)
            }
            ExprKind::Attr { value, attr } => {
                self.eval_method_call(call, func, value, attr, args, env)
            }
            ExprKind::Name(n) => self.eval_name_call(call, n, args, nspan, env),
            _ => {
                let target = self.eval(func, env);
                let a = self.eval_args(args, env);
                self.call_value(target, a, call.span, nspan, env)
            }
        }
    }

    /// `recv.attr(…)` (`func` is `recv.attr`): the call goes where the receiver's value
    /// says — a module path, a tensor, a parameter, an object of the analysed code, a layer.
    fn eval_method_call(
        &mut self,
        call: &Expr,
        func: &Expr,
        value: &Expr,
        attr: &str,
        args: &[ir::Arg],
        env: &mut Env,
    ) -> Value {
        let (recv, a) = self.eval_receiver_and_args(value, args, env);
        if let Some(done) = self.method_on_receiver_itself(value, attr, &recv, &a, call.span, env) {
            return done;
        }
        let nspan = name_span(func, self.source);
        match recv {
            Value::Import(path) => {
                self.call_qualified(&dotted(&path, attr), a, call.span, nspan, env)
            }
            Value::Tensor(_) => self.tensor_method(attr, recv, a, call.span, nspan, env),
            Value::Named {
                ref name,
                param: Some(origin),
            } => {
                if self.tables.method(attr).is_some() {
                    let t =
                        param_as_tensor(name, Some(origin), value.span, self.frame.context.clone());
                    self.tensor_method(attr, t, a, call.span, nspan, env)
                } else {
                    Value::Unknown(UnknownReason::UnresolvedCall)
                }
            }
            // A derived `Clone` of a Rust struct (`cfg.clone()`): the same fields.
            Value::Instance(ref obj)
                if self.language == Language::Rust
                    && attr == "clone"
                    && obj.class.method(attr).is_none() =>
            {
                recv
            }
            Value::Instance(_) => {
                let target = self.eval_attr(value, attr, func.span, env);
                self.call_value(target, a, call.span, nspan, env)
            }
            // `RotaryEmbedding::new(cfg, dev)`: a Rust struct of the file built by the
            // constructor the call names; `Attention::helper(x)` (an associated function) or
            // `Attention::forward(&attn, x)` (a method, the receiver passed first) runs as
            // written.
            Value::Class(ref def) if self.language == Language::Rust => {
                let def = def.clone();
                match def.method(attr) {
                    Some((f, _)) if f.is_constructor => {
                        self.construct_with(&def, Some(f), a, call.span, env)
                    }
                    Some((f, _)) => {
                        self.call_value(Value::Function(f, None), a, call.span, nspan, env)
                    }
                    None => Value::Unknown(UnknownReason::UnresolvedCall),
                }
            }
            Value::NnModule(m) if attr == "forward" || attr == "forward_t" => {
                self.call_module(&m, a, call.span, nspan, env)
            }
            // A library object's own method (`kv_cache.append(&k, &v)`, rules/*.toml
            // `method`): its call applied as an op on the arguments.
            Value::NnModule(m) if m.spec.method.as_deref() == Some(attr) => {
                let spec = &m.spec.call;
                self.with_apply_ctx(env, |ctx| {
                    applying::apply_op(ctx, spec, None, a.positional, a.keywords, call.span, nspan)
                })
            }
            // A value the analysis lost (`cache.update(k, v)`) that the code treats as a
            // tensor (`.reshape(...)`, `.transpose(...)`): the call is still reached on this
            // path, with an unknown input, so a finding about the call on another path says
            // which path it is on. An attribute of an object the analysis does not know
            // (`config.table`, `self.cache` of a library base) used as a tensor: the same.
            Value::Named { param: None, .. } | Value::Unknown(_) if self.names_layout_op(attr) => {
                let why = match recv {
                    Value::Unknown(why) => why,
                    _ => UnknownReason::UnknownObject,
                };
                let input = Value::unknown_tensor(why);
                self.tensor_method(attr, input, a, call.span, nspan, env)
            }
            _ => Value::Unknown(UnknownReason::UnresolvedCall),
        }
    }

    /// The receiver of a method call, then its arguments.
    fn eval_receiver_and_args(
        &mut self,
        receiver: &Expr,
        args: &[ir::Arg],
        env: &mut Env,
    ) -> (Value, CallArgs) {
        let recv = self.eval(receiver, env);
        let learned = self.learned_count();
        let a = self.eval_args(args, env);
        // An argument may teach a size (`x.narrow(D::Minus1, 0, d / 2)` rewrites `d` as
        // `2·q`): the receiver, read first, must see it too.
        let recv = if self.learned_count() > learned {
            self.apply_subst(recv)
        } else {
            recv
        };
        (recv, a)
    }

    /// The method calls decided before the receiver's kind is: a Rust float method, a
    /// list changed in place, an in-place tensor method no table knows. `None` for others.
    fn method_on_receiver_itself(
        &mut self,
        receiver: &Expr,
        attr: &str,
        recv: &Value,
        a: &CallArgs,
        span: Span,
        env: &mut Env,
    ) -> Option<Value> {
        if self.language == Language::Rust {
            if let Some(v) = self.rust_special_call(recv, attr, a, span, env) {
                return Some(v);
            }
        }
        if matches!(
            recv,
            Value::Tuple(_) | Value::Sequential(_) | Value::Repeated(_)
        ) && LIST_MUTATORS.contains(&attr)
        {
            // A Rust `shape.pop()` of a known `Vec` (`xs.dims().to_vec()`): the list
            // without its last item, which the call returns.
            if let (Language::Rust, "pop", Value::Tuple(items), []) =
                (self.language, attr, recv, a.positional.as_slice())
            {
                if let Some((last, rest)) = items.split_last().filter(|_| !holds_packed(items)) {
                    set_list(receiver, Value::Tuple(rest.to_vec()), env);
                    return Some(last.clone());
                }
            }
            // `self.layers.append(Block(dim))`: the list with one more item; any other
            // change (or one the analysis cannot follow) makes it unknown.
            let changed = appended(recv, attr, a);
            set_list(receiver, changed, env);
            return Some(Value::NoneVal);
        }
        if let (Value::Str(text), [], "upper" | "lower") = (recv, a.positional.as_slice(), attr) {
            // `cell.upper()` of a known string: `getattr(nn, cell.upper())` names a layer.
            let cased = if attr == "upper" {
                text.to_uppercase()
            } else {
                text.to_lowercase()
            };
            return Some(Value::Str(cased.into()));
        }
        if self.is_unknown_in_place(attr)
            && (recv.is_tensor() || matches!(recv, Value::Named { param: Some(_), .. }))
        {
            // `x.t_()`, `x.unsqueeze_(0)`, `x.set_(...)`: the receiver's layout may have
            // changed in place; forget it.
            forget_receiver(receiver, env);
            return Some(Value::unknown_tensor(UnknownReason::Unmodelled));
        }
        None
    }

    /// `name(…)`: an exact `int(a / b)`, `map(f, items)`, `reveal_layout(x)`, a builtin, or
    /// whatever the name holds.
    fn eval_name_call(
        &mut self,
        call: &Expr,
        n: &str,
        args: &[ir::Arg],
        nspan: Span,
        env: &mut Env,
    ) -> Value {
        if n == "int" {
            if let Some(q) = self.int_of_size_division(args, call.span, env) {
                return q;
            }
        }
        let target = self.lookup(n, env);
        if n == "isinstance" && matches!(target, Value::Unknown(_)) {
            if let Some(answer) = self.isinstance_call(args, env) {
                return answer;
            }
        }
        if n == "map" && matches!(target, Value::Unknown(_)) {
            if let Some(mapped) = self.map_call(args, call.span, nspan, env) {
                return mapped;
            }
        }
        // The arguments may use the assigned variable's name for sizes of their own.
        let hint = self.frame.name_hint.clone();
        let a = self.eval_args(args, env);
        if n == "int" {
            self.frame.name_hint = hint;
        }
        // `reveal_layout(x)` of no function of the analysed code: SL900's request.
        if n == REVEAL_OP && matches!(target, Value::Unknown(_) | Value::Import(_)) {
            return self.reveal(a, call.span, nspan, env);
        }
        match target {
            Value::Unknown(_) if is_builtin(n) => self.builtin(n, a, call.span),
            other => self.call_value(other, a, call.span, nspan, env),
        }
    }

    /// `int(a / b)` (one plain argument, a division): on sizes the exact quotient, as model
    /// code computes a head size as `int(hidden / heads)` after checking the division is
    /// exact; otherwise unknown. `None` when the argument is no division.
    fn int_of_size_division(
        &mut self,
        args: &[ir::Arg],
        span: Span,
        env: &mut Env,
    ) -> Option<Value> {
        let [arg] = args else {
            return None;
        };
        let ExprKind::BinOp {
            op: BinOp::Div,
            operands,
        } = &arg.value().kind
        else {
            return None;
        };
        let [left, right] = &**operands;
        if arg.name().is_some() || arg.is_star() || arg.is_double_star() {
            return None;
        }
        let l = self.eval(left, env);
        let r = self.eval(right, env);
        if let (Value::Int(a), Value::Int(b)) = (self.as_size(l), self.as_size(r)) {
            return Some(self.size_quotient(&a, &b, span, env));
        }
        Some(Value::Unknown(UnknownReason::Unmodelled))
    }

    fn call_value(
        &mut self,
        target: Value,
        a: CallArgs,
        span: Span,
        nspan: Span,
        env: &mut Env,
    ) -> Value {
        match target {
            Value::Import(path) => self.call_qualified(&path, a, span, nspan, env),
            Value::NnModule(m) => self.call_module(&m, a, span, nspan, env),
            // Positions after packed sizes are unknown: only table ops take them.
            Value::Function(..) | Value::Class(_) | Value::Instance(_) if a.packed_spread => {
                Value::Unknown(UnknownReason::UnknownRank)
            }
            Value::Function(f, bound) => {
                if a.opaque_spread {
                    return Value::Unknown(UnknownReason::Unmodelled);
                }
                let mut a = a;
                // Rust's `Self::method(self, x)`: the receiver is passed explicitly, but the
                // IR lists a method's parameters without it.
                let mut bound = bound;
                if self.language == Language::Rust && f.is_method {
                    if let Some(Value::Instance(i)) = a.positional.first() {
                        bound = Some(i.clone());
                        a.positional.remove(0);
                    }
                }
                let class = bound.as_ref().map(|i| defining_class(&i.class, &f.name));
                let own = self.is_own(&bound);
                let args = ordered(a);
                let callee = Callee {
                    function: f,
                    this: bound,
                    class,
                    share_attrs: own,
                };
                self.call_function(callee, args, span, env)
            }
            Value::Class(def) => self.construct(&def, a, span, env),
            Value::Sequential(layers) => self.call_chain(&layers, a, span, nspan, env),
            Value::Either(layers) => self.call_either(&layers, a, span, nspan, env),
            Value::Lambda(l) => self.call_lambda(&l, a, env),
            Value::Partial(p) => {
                let mut positional = p.positional.clone();
                positional.extend(a.positional);
                // A keyword of the call replaces the partial's.
                let mut keywords: Vec<(String, Value)> = p
                    .keywords
                    .iter()
                    .filter(|(k, _)| !a.keywords.iter().any(|(n, _)| n == k))
                    .cloned()
                    .collect();
                keywords.extend(a.keywords);
                let a = CallArgs {
                    positional,
                    keywords,
                    ..a
                };
                self.call_value(p.func.clone(), a, span, nspan, env)
            }
            Value::Instance(obj) => {
                // Calling an object runs its `__call__`, for a module its `forward`.
                let method = obj
                    .class
                    .method("__call__")
                    .or_else(|| obj.class.method("forward"));
                match method {
                    Some((f, owner)) if !a.opaque_spread => {
                        let owner = find_class(&obj.class, owner);
                        let own = self.is_own(&Some(obj.clone()));
                        let callee = Callee {
                            function: f,
                            this: Some(obj),
                            class: Some(owner),
                            share_attrs: own,
                        };
                        self.call_function(callee, ordered(a), span, env)
                    }
                    _ => Value::Unknown(UnknownReason::UnresolvedCall),
                }
            }
            _ => Value::Unknown(UnknownReason::UnresolvedCall),
        }
    }

    /// A call of a layer that differs by path ([`Value::Either`]): each alternative runs on
    /// a path of its own, and the results and paths join.
    fn call_either(
        &mut self,
        layers: &[Value],
        a: CallArgs,
        span: Span,
        nspan: Span,
        env: &mut Env,
    ) -> Value {
        let mut joined: Option<(Value, Env)> = None;
        for layer in layers {
            let mut path = env.clone();
            let out = self.call_value(layer.clone(), a.clone(), span, nspan, &mut path);
            joined = Some(match joined {
                None => (out, path),
                Some((v, e)) => (join(&v, &out), join_envs(&e, &path)),
            });
        }
        let Some((out, path)) = joined else {
            return Value::Unknown(UnknownReason::UnresolvedCall);
        };
        *env = path;
        out
    }

    /// Is `bound` the object `self` stands for in the running method?
    fn is_own(&self, bound: &Option<Arc<Instance>>) -> bool {
        match (bound, &self.frame.this) {
            (Some(b), Some(this)) => Arc::ptr_eq(b, this),
            _ => false,
        }
    }

    /// `super().name(…)` in a method: the first base after the method's class that defines
    /// `name`, run on the same object.
    fn call_super(&mut self, name: &str, a: CallArgs, span: Span, env: &mut Env) -> Value {
        let (Some(class), Some(this)) = (self.frame.class.clone(), self.frame.this.clone()) else {
            return Value::Unknown(UnknownReason::UnresolvedCall);
        };
        let Some((f, owner)) = class.super_method(name) else {
            // A library base: a layer of the tables (`class Router(nn.Linear)`) is built by
            // `super().__init__(…)` and applied by `super().forward(x)`; anything else
            // (`nn.Module.__init__`) is nothing the analysis follows.
            return self.call_library_base(&class, name, a, span, env);
        };
        if (a.opaque_spread && !a.keyword_spread_only) || a.packed_spread {
            return Value::Unknown(UnknownReason::Unmodelled);
        }
        let owner = find_class(&class, owner);
        let callee = Callee {
            function: f,
            this: Some(this),
            class: Some(owner),
            share_attrs: true,
        };
        self.call_function(callee, ordered(a), span, env)
    }

    /// `super().__init__(…)` / `super().forward(x)` where the base is a library layer of the
    /// tables: the constructor builds that layer, kept on the object under
    /// [`LIBRARY_LAYER`], and `forward` applies it.
    fn call_library_base(
        &mut self,
        class: &Arc<ClassDef>,
        name: &str,
        a: CallArgs,
        span: Span,
        env: &mut Env,
    ) -> Value {
        let unresolved = Value::Unknown(UnknownReason::UnresolvedCall);
        match name {
            "__init__" => {
                // Only a class whose one base is the layer: with several, which base's
                // constructor runs is the MRO's business.
                let [base] = class.class.bases.as_slice() else {
                    return unresolved;
                };
                let mut parts = base.split('.');
                let Some(root) = parts.next() else {
                    return unresolved;
                };
                let Value::Import(path) = self.lookup(root, env) else {
                    return unresolved;
                };
                let dotted = std::iter::once(path.as_str())
                    .chain(parts)
                    .collect::<Vec<_>>()
                    .join(".");
                // A layer constructor only: `class T(torch.Tensor)` must not apply an op.
                if self.tables.module(&dotted).is_none() {
                    return unresolved;
                }
                let layer = self.call_qualified(&dotted, a, span, span, env);
                if matches!(layer, Value::NnModule(_)) {
                    env.self_attrs.insert(LIBRARY_LAYER.into(), layer);
                }
                Value::NoneVal
            }
            "forward" | "__call__" => {
                let layer = env.self_attrs.get(LIBRARY_LAYER).cloned().or_else(|| {
                    self.frame
                        .this
                        .as_ref()
                        .and_then(|t| t.attrs.get(LIBRARY_LAYER).cloned())
                });
                match layer {
                    Some(Value::NnModule(m)) => self.call_module(&m, a, span, span, env),
                    _ => unresolved,
                }
            }
            _ => unresolved,
        }
    }

    /// A call of a dotted library name: an op of the tables, or an `nn.Module` constructor.
    fn call_qualified(
        &mut self,
        path: &str,
        a: CallArgs,
        span: Span,
        nspan: Span,
        env: &mut Env,
    ) -> Value {
        if path.rsplit('.').next() == Some(REVEAL_OP) {
            return self.reveal(a, span, nspan, env);
        }
        if let Some(spec) = self.tables.function(path) {
            if a.opaque_spread {
                return applying::unknown_result(spec, UnknownReason::Unmodelled);
            }
            return self.with_apply_ctx(env, |ctx| {
                applying::apply_op(ctx, spec, None, a.positional, a.keywords, span, nspan)
            });
        }
        if path == "functools.partial" {
            return partial_of(a);
        }
        if let Some(name) = path.strip_prefix("math.") {
            // `math.ceil(H / p)`: an integer the analysis cannot compute is one fixed size.
            if matches!(name, "ceil" | "floor" | "trunc" | "isqrt") && a.positional.len() == 1 {
                return match self.as_size(a.positional[0].clone()) {
                    Value::Int(d) if name != "isqrt" => Value::Int(d),
                    _ => Value::Int(self.mint_whole_value(span)),
                };
            }
            return math_call(name, &a);
        }
        let last = path.rsplit('.').next().unwrap_or(path);
        if let (Some(n), [x]) = (ops::helpers::ntuple_helper(last), a.positional.as_slice()) {
            return self.ntuple(n, x.clone(), span);
        }
        if let Some(container) = ops::helpers::container(path) {
            return container_of(container, a);
        }
        if let Some(mspec) = self.tables.module(path) {
            let (positional, keywords) =
                applying::convert_args(&env.shapes, &mspec.init, None, &a.positional, &a.keywords);
            return match ops::bind_module(mspec, positional, keywords) {
                Ok(args) => Value::NnModule(Arc::new(NnModuleVal { spec: mspec, args })),
                Err(_) => Value::Unknown(UnknownReason::Unmodelled),
            };
        }
        // A function or class of another file of the tree.
        match self.foreign_value(path, &a) {
            Some(target) => self.call_value(target, a, span, nspan, env),
            None => Value::Unknown(UnknownReason::UnresolvedCall),
        }
    }

    /// `to_2tuple(x)` (rules/helpers.toml): `x` itself when it is a tuple, `n` times `x`
    /// when it is a size, `n` fresh sizes when the analysis cannot read it (an int or a
    /// tuple, so the items may differ).
    fn ntuple(&mut self, n: usize, x: Value, span: Span) -> Value {
        match x {
            Value::Tuple(_) => x,
            Value::NoneVal | Value::Int(_) => Value::Tuple(vec![x; n]),
            _ => {
                let base = self.span_name(span);
                self.frame.name_hint = None;
                Value::Tuple(
                    (0..n)
                        .map(|i| Value::Int(self.mint(&format!("{base}[{i}]"))))
                        .collect(),
                )
            }
        }
    }

    /// `reveal_layout(x)`: records what the path holds for `x` and returns it.
    fn reveal(&mut self, a: CallArgs, span: Span, nspan: Span, env: &mut Env) -> Value {
        let arg = a
            .positional
            .into_iter()
            .next()
            .unwrap_or(Value::Unknown(UnknownReason::Unmodelled));
        self.with_apply_ctx(env, |ctx| applying::reveal(ctx, arg, span, nspan))
    }

    /// A layer called on its input (`self.proj(x)`, `layer.forward(x)`): the layer's
    /// transfer applied to each alternative of the input, the results joined.
    fn call_module(
        &mut self,
        m: &Arc<NnModuleVal>,
        a: CallArgs,
        span: Span,
        nspan: Span,
        env: &mut Env,
    ) -> Value {
        let Some(input) = a.positional.first().cloned() else {
            return Value::Unknown(UnknownReason::Unmodelled);
        };
        if let Some(result) = self.call_einops_layer(m, &input, span, nspan, env) {
            return result;
        }
        let input =
            applying::resolve_value(&env.shapes, as_tensor(input, span, &self.frame.context));
        let input = self.learn_fixed_input_sizes(m, input, env);
        let fresh = m.spec.call.kind.output_always_contiguous();
        let Value::Tensor(TensorVal::Alts(alts)) = &input else {
            let result = if fresh {
                self.contiguous_unknown(span)
            } else {
                Value::unknown_tensor(applying::input_unknown_reason(Some(&input)))
            };
            // The dataflow goes on through a tensor of unknown layout.
            let producer = Producer::new(&m.spec.call, span, vec![producer_of(&input)], true, None);
            return with_producer(result, &Arc::new(producer));
        };
        let mut results = Vec::new();
        let mut applied = Vec::new();
        for alt in alts {
            let (value, transfer) = self.module_on_alt(m, alt, fresh, span, env);
            results.push(value);
            applied.extend(transfer.map(|t| (alt.clone(), t)));
        }
        if !m.spec.call.contract.is_empty() && applied.len() == alts.len() {
            let spec = &m.spec.call;
            self.with_apply_ctx(env, |ctx| {
                applying::record_module_call(ctx, spec, span, nspan, applied);
                Value::Unknown(UnknownReason::Unmodelled)
            });
        }
        lstm_states(m, applying::join_all(results))
    }

    /// A module whose constructor fixes sizes of its input (`nn.Linear(in_features, …)`,
    /// `nn.LayerNorm(normalized_shape)`, rules/*.toml `input_sizes`) tells us those sizes
    /// of an input of one known layout (the call fails otherwise): the input with them.
    fn learn_fixed_input_sizes(
        &mut self,
        m: &Arc<NnModuleVal>,
        input: Value,
        env: &mut Env,
    ) -> Value {
        let Value::Tensor(TensorVal::Alts(alts)) = &input else {
            return input;
        };
        let [TensorAlt {
            layout: Some(l), ..
        }] = alts.as_slice()
        else {
            return input;
        };
        let pairs = fixed_input_sizes(m, &l.shape);
        if pairs.is_empty() {
            return input;
        }
        for (have, want) in &pairs {
            self.learn_equal(have, want, env);
        }
        self.apply_subst(input)
    }

    /// The layer applied to one alternative of its input, with the layer as the op that
    /// computed the result (`self.attn_drop(attn)`). `fresh`: the layer's output is always
    /// a new contiguous tensor.
    fn module_on_alt(
        &mut self,
        m: &Arc<NnModuleVal>,
        alt: &TensorAlt,
        fresh: bool,
        span: Span,
        env: &mut Env,
    ) -> (Value, Option<ops::Transfer<Dim>>) {
        if alt
            .layout
            .as_ref()
            .is_some_and(|l| super::super::prefix::unsafe_layer_on_packed(m.spec.call.kind, l))
        {
            return (Value::unknown_tensor(UnknownReason::UnknownRank), None);
        }
        let d = crate::layout::Decider::new(&self.frame.facts.assumptions);
        let arg = ArgValue::Tensor(alt.layout.clone());
        let transfer = ops::apply_module(m.spec, &m.args, arg, &d);
        // Only a layer with a backend contract records its call (see `call_module`).
        let kept = (!m.spec.call.contract.is_empty()).then(|| transfer.clone());
        let value = self.module_result(m, alt, transfer.result, fresh, span, env);
        let producer = Producer::new(&m.spec.call, span, vec![alt.made_by.clone()], true, None);
        (with_producer(value, &Arc::new(producer)), kept)
    }

    /// The value of a layer's transfer `result` on the input alternative `alt`.
    fn module_result(
        &mut self,
        m: &Arc<NnModuleVal>,
        alt: &TensorAlt,
        result: ops::OpResult<Dim>,
        fresh: bool,
        span: Span,
        env: &mut Env,
    ) -> Value {
        let what = format!("`{}(…)`", m.spec.name);
        let keeps_shape = matches!(
            m.spec.call.kind,
            OpKind::Elementwise | OpKind::ContiguousResult | OpKind::Alias
        ) || (m.spec.call.kind == OpKind::Dropout
            && m.spec.call.variant.is_none());
        match result {
            ops::OpResult::Unknown | ops::OpResult::UnknownTensor
                if alt.layout.is_none() && keeps_shape =>
            {
                // A contiguous tensor of unknown shape in, the same shape out.
                let mut out = TensorAlt::new(None, alt.chain.clone());
                out.origin = alt.origin;
                Value::Tensor(TensorVal::Alts(vec![out]))
            }
            // A convolution or pooling layer writes its output in its input's memory
            // format: contiguous in, contiguous out (as `F.conv2d`).
            ops::OpResult::UnknownTensor
                if applying::follows_contiguous_input(&self.frame.facts, &m.spec.call, alt) =>
            {
                let out =
                    applying::contiguous_from_input(&mut self.apply_ctx(env), alt, span, &what);
                self.size_layer_output(m, alt, &out, env);
                out
            }
            ops::OpResult::Unknown | ops::OpResult::UnknownTensor if fresh => {
                self.contiguous_unknown(span)
            }
            r => applying::result_value(
                &mut self.apply_ctx(env),
                alt,
                r,
                span,
                &what,
                applying::ResultOf {
                    same_shape: false,
                    writes_new_tensor: fresh,
                },
                applying::result_unknown(&m.spec.call),
            ),
        }
    }

    /// An einops layer (`Rearrange(pattern, **lengths)`, `Reduce(…)`) called on a tensor:
    /// the call `einops.rearrange(x, pattern, **lengths)` it runs, decided and reported at
    /// the layer's call like the function's.
    fn call_einops_layer(
        &mut self,
        m: &Arc<NnModuleVal>,
        input: &Value,
        span: Span,
        nspan: Span,
        env: &mut Env,
    ) -> Option<Value> {
        let function = match m.spec.call.kind {
            OpKind::EinopsRearrange => "einops.rearrange",
            OpKind::EinopsReduce => "einops.reduce",
            OpKind::EinopsRepeat => "einops.repeat",
            _ => return None,
        };
        let spec = self.tables.function(function)?;
        let as_value = |v: &ArgValue<Dim>| match v {
            ArgValue::Str(s) => Value::Str(s.into()),
            ArgValue::Int(d) => Value::Int(d.clone()),
            _ => Value::Unknown(UnknownReason::Unmodelled),
        };
        let mut positional = vec![input.clone(), as_value(m.args.get("pattern")?)];
        if let Some(reduction) = m.args.get("reduction") {
            positional.push(as_value(reduction));
        }
        let keywords = m
            .args
            .extra_keywords()
            .iter()
            .map(|(name, v)| (name.clone(), as_value(v)))
            .collect();
        Some(self.with_apply_ctx(env, |ctx| {
            applying::apply_op(ctx, spec, None, positional, keywords, span, nspan)
        }))
    }

    /// The builtin `map(f, items)`: `f` called on each item (`Interpreter::for_each_item`);
    /// a literal `lambda t: body` runs its body in place. `None` for any other `map` call.
    fn map_call(
        &mut self,
        args: &[ir::Arg],
        span: Span,
        nspan: Span,
        env: &mut Env,
    ) -> Option<Value> {
        let [function, items] = args else {
            return None;
        };
        if [function, items]
            .iter()
            .any(|a| a.name().is_some() || a.is_star() || a.is_double_star())
        {
            return None;
        }
        if let ExprKind::Lambda(lambda) = &function.value().kind {
            let ir::Lambda { params, body } = &**lambda;
            let [param] = &params[..] else {
                return None;
            };
            let target = ir::Target::Name(param.clone(), function.value().span);
            let items = self.eval(items.value(), env);
            return Some(self.for_each_item(&target, items, env, |interp, scope| {
                interp.eval(body, scope)
            }));
        }
        // `map(partial(torch.cat, dim=-2), ((mk, k), (mv, v)))`, `map(self.norm, xs)`. Only
        // a name, an attribute or a `partial(…)` is evaluated here: any other call would be
        // evaluated again, with its events, when this returns `None`.
        let plain = match &function.value().kind {
            ExprKind::Name(_) | ExprKind::Attr { .. } => true,
            ExprKind::Call(call) => matches!(
                &call.func().kind,
                ExprKind::Name(n) | ExprKind::Attr { attr: n, .. } if n == "partial"
            ),
            _ => false,
        };
        if !plain {
            return None;
        }
        let callee = self.eval(function.value(), env);
        if !matches!(
            callee,
            Value::Partial(_)
                | Value::Lambda(_)
                | Value::Function(..)
                | Value::NnModule(_)
                | Value::Instance(_)
                | Value::Sequential(_)
        ) {
            return None;
        }
        const ITEM: &str = "<map item>";
        let target = ir::Target::Name(ITEM.into(), function.value().span);
        let items = self.eval(items.value(), env);
        Some(self.for_each_item(&target, items, env, |interp, scope| {
            let item = scope.get(ITEM).cloned().unwrap_or(Value::NoneVal);
            interp.call_value(
                callee.clone(),
                CallArgs::positional(vec![item]),
                span,
                nspan,
                scope,
            )
        }))
    }

    /// A lambda called in the frame that made it: its body, in this frame's variables with
    /// its parameters bound (then unbound again). Elsewhere it is not followed.
    fn call_lambda(&mut self, l: &LambdaVal, a: CallArgs, env: &mut Env) -> Value {
        let plain = a.keywords.is_empty() && !a.opaque_spread && !a.packed_spread;
        let ptr: *const LambdaVal = l;
        let here = l.frame != 0 && l.frame == self.frame.id;
        let anywhere = l.closed || l.captured.is_some();
        if !(here || (anywhere && l.module == self.current_module))
            || !plain
            || self.lambda_stack.contains(&ptr)
            || !self.burn()
        {
            return Value::Unknown(UnknownReason::UnresolvedCall);
        }
        if a.positional.len() != l.params.len() {
            return Value::Unknown(UnknownReason::UnresolvedCall);
        }
        // Elsewhere, the variables it closes over are the values it captured.
        let captured = l.captured.as_deref().filter(|_| !here).unwrap_or_default();
        let names = captured.iter().map(|(n, _)| n).chain(&l.params);
        let saved: Vec<(String, Option<Value>)> =
            names.map(|p| (p.clone(), env.get(p).cloned())).collect();
        for (n, v) in captured {
            env.set(n, v.clone());
        }
        for (p, v) in l.params.iter().zip(a.positional) {
            env.set(p, v);
        }
        self.lambda_stack.push(ptr);
        let result = self.eval(&l.body, env);
        self.lambda_stack.pop();
        for (p, old) in saved {
            match old {
                Some(v) => env.set(&p, v),
                None => {
                    env.vars.remove(p.as_str());
                }
            }
        }
        result
    }

    /// `nn.Sequential(…)(x)`: each layer called on the output of the one before, each
    /// call's events at this call.
    fn call_chain(
        &mut self,
        layers: &[Value],
        a: CallArgs,
        span: Span,
        nspan: Span,
        env: &mut Env,
    ) -> Value {
        let [input] = a.positional.as_slice() else {
            return Value::Unknown(UnknownReason::Unmodelled);
        };
        if !a.keywords.is_empty() || a.opaque_spread || a.packed_spread {
            return Value::Unknown(UnknownReason::Unmodelled);
        }
        let mut x = input.clone();
        for layer in layers {
            x = match layer {
                Value::Repeated(one) => self.call_repeated(one, x, span, nspan, env),
                _ => self.call_value(
                    layer.clone(),
                    CallArgs::positional(vec![x]),
                    span,
                    nspan,
                    env,
                ),
            };
        }
        x
    }

    /// Any number of copies of `layer` called one after another (`nn.Sequential(*blocks)`
    /// of a list built in a loop), as a loop over that list runs (`exec_repeated`): the
    /// input after none, joined with what the calls settle on after one or more, each
    /// layout told apart by the list's emptiness where they differ.
    fn call_repeated(
        &mut self,
        layer: &Value,
        input: Value,
        span: Span,
        nspan: Span,
        env: &mut Env,
    ) -> Value {
        let call = |me: &mut Self, x: Value, env: &mut Env| {
            me.call_value(
                layer.clone(),
                CallArgs::positional(vec![x]),
                span,
                nspan,
                env,
            )
        };
        let mut head = call(self, input.clone(), env);
        for iteration in 0..=super::MAX_LOOP_ITERATIONS {
            let mark = self.events.len();
            let out = call(self, head.clone(), env);
            let next = join(&head, &out);
            if same_value(&next, &head) || self.out_of_fuel() || self.halted() {
                head = next;
                break;
            }
            self.drop_own_events_since(mark);
            head = match iteration + 1 == super::MAX_LOOP_ITERATIONS {
                // Not converging: a tensor remade each time, else nothing known.
                true => super::stmt::contiguous_any_shape(&head, &next)
                    .unwrap_or_else(|| Value::unknown_tensor(UnknownReason::PathsDisagree)),
                false => next,
            };
        }
        let list = self.text(nspan);
        let (none, some) = if list.chars().count() <= 40 {
            (
                format!("`{list}` repeats no layer"),
                format!("`{list}` repeats its layer"),
            )
        } else {
            (
                "the repeated layers run no time".into(),
                "the repeated layers run".into(),
            )
        };
        join_tagged(&input, &head, &none, &some).unwrap_or_else(|| join(&input, &head))
    }

    /// A new contiguous tensor of unknown shape, made at `span`.
    fn contiguous_unknown(&mut self, span: Span) -> Value {
        let mut alt = TensorAlt::new(None, None);
        alt.origin = Some(self.fresh_origin());
        let _ = span;
        Value::Tensor(TensorVal::Alts(vec![alt]))
    }

    /// A method call on a tensor value.
    fn tensor_method(
        &mut self,
        method: &str,
        recv: Value,
        a: CallArgs,
        span: Span,
        nspan: Span,
        env: &mut Env,
    ) -> Value {
        let Some(spec) = self.tables.method(method) else {
            return Value::Unknown(UnknownReason::Unmodelled);
        };
        if a.opaque_spread {
            return applying::unknown_result(spec, UnknownReason::Unmodelled);
        }
        let mut positional = a.positional;
        // Rust's `IndexOp::i` takes one index per dim as a single tuple, `x.i((.., 0..2))`:
        // its elements are the entries of a Python subscript `x[:, 0:2]`.
        if self.language == Language::Rust && spec.kind == OpKind::Index {
            if let [Value::Tuple(entries)] = positional.as_slice() {
                positional = entries.clone();
            }
        }
        self.with_apply_ctx(env, |ctx| {
            applying::apply_op(ctx, spec, Some(recv), positional, a.keywords, span, nspan)
        })
    }

    /// Rust calls that are not table ops but change what the value is:
    /// - `D::Minus(k)`: candle's dim `-k`;
    /// - `xs.apply(&m)`: candle's and tch-rs's `Module::forward` called through the tensor,
    ///   `m.forward(xs)`;
    /// - float math on a number, `(head_dim as f64).sqrt()` (the cast is erased): a float, so
    ///   that `(scores / scale)?` is known to be a tensor-by-scalar op.
    fn rust_special_call(
        &mut self,
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
            (Value::Import(path), "Minus", [Value::Int(k)])
                if path.rsplit('.').next() == Some("D") =>
            {
                Some(Value::Int(Dim::lit(0).sub(k)))
            }
            // `cfg.head_dim.unwrap_or(hidden / heads)`: an `Option` of the default's type,
            // so an integer — one fixed size, the default itself when the option is one.
            (_, "unwrap_or", [Value::Int(default)]) if !recv.is_tensor() => match recv {
                Value::Int(d) if d == default => Some(recv.clone()),
                _ => Some(Value::Int(self.unwrapped_size(recv, span))),
            },
            // `cfg.lru_width.unwrap_or(cfg.hidden_size)`: a default of unknown type gives a
            // value of that type, one fixed value — a size of its own where it is used as
            // one, like the default itself.
            (_, "unwrap_or", [Value::Named { .. }]) if !recv.is_tensor() => {
                let size = self.unwrapped_size(recv, span);
                match size.symbols().as_slice() {
                    [name] if Dim::sym(name) == size => Some(Value::Named {
                        name: name.into(),
                        param: None,
                    }),
                    _ => None,
                }
            }
            // `v.len()`: a tuple's length; of a collection the analysis does not hold
            // (`inv_freq.len()` of a collected `Vec`), one fixed size, named after the
            // variable it is assigned to.
            (Value::Tuple(items), "len", []) if !super::super::value::holds_packed(items) => {
                Some(Value::int(items.len() as i64))
            }
            (Value::Unknown(_) | Value::Named { param: None, .. }, "len", []) => {
                Some(Value::Int(self.mint_whole_value(span)))
            }
            (
                Value::Tensor(_) | Value::Named { param: Some(_), .. },
                "apply" | "apply_t",
                [Value::NnModule(m), ..],
            ) => {
                let m = m.clone();
                let args = CallArgs::positional(vec![recv.clone()]);
                Some(self.call_module(&m, args, span, span, env))
            }
            (
                Value::Tensor(_) | Value::Named { param: Some(_), .. },
                "apply" | "apply_t",
                [obj @ Value::Instance(_), ..],
            ) => {
                let obj = obj.clone();
                let args = CallArgs::positional(vec![recv.clone()]);
                Some(self.call_value(obj, args, span, span, env))
            }
            _ => None,
        }
    }

    /// The fresh size `opt.unwrap_or(..)` at `span` is: named after the variable it is
    /// assigned to, else after the option (`cfg.lru_width`).
    fn unwrapped_size(&mut self, recv: &Value, span: Span) -> Dim {
        if matches!(&self.frame.name_hint, Some((_, s)) if *s == span) {
            return self.mint_whole_value(span);
        }
        self.frame.name_hint = None;
        let name = match recv {
            Value::Named { name, .. } => name.to_string(),
            _ => {
                let text = self.span_name(span);
                text.split(".unwrap_or").next().unwrap_or(&text).to_string()
            }
        };
        self.mint(&name)
    }

    /// An in-place method (`name_`) the tables do not list: it may rewrite the layout.
    fn is_unknown_in_place(&self, method: &str) -> bool {
        method.ends_with('_') && !method.starts_with("__") && self.tables.method(method).is_none()
    }

    /// `x.T`, `x.mT`, `x.shape`, `x.ndim` ...
    pub fn tensor_property(&mut self, t: Value, attr: &str, span: Span, env: &mut Env) -> Value {
        let Some(spec) = self.tables.attribute(attr) else {
            return Value::Unknown(UnknownReason::Unmodelled);
        };
        self.with_apply_ctx(env, |ctx| {
            applying::apply_op(ctx, spec, Some(t), Vec::new(), Vec::new(), span, span)
        })
    }

    pub fn tensor_unary(&mut self, method: &str, t: Value, span: Span, env: &mut Env) -> Value {
        self.tensor_method(method, t, CallArgs::positional(Vec::new()), span, span, env)
    }

    /// `x[...]`: basic indexing through the `__getitem__` entry of the table; each
    /// comma-separated entry is one positional argument.
    pub fn tensor_getitem(&mut self, e: &Expr, v: Value, index: &[Expr], env: &mut Env) -> Value {
        let t = as_tensor(v, e.span, &self.frame.context);
        let mut items = Vec::with_capacity(index.len());
        for ix in index {
            items.push(self.index_item(ix, env));
        }
        let Some(spec) = self.tables.method("__getitem__") else {
            return Value::unknown_tensor(UnknownReason::Unmodelled);
        };
        self.with_apply_ctx(env, |ctx| {
            applying::apply_op(ctx, spec, Some(t), items, Vec::new(), e.span, e.span)
        })
    }

    /// One index entry as a value: ints, `None`, `...`, slices.
    fn index_item(&mut self, ix: &Expr, env: &mut Env) -> Value {
        match &ix.kind {
            ExprKind::Slice(bounds) => {
                let ir::SliceBounds { lower, upper, step } = &**bounds;
                let mut part = |p: &Option<Expr>| match p {
                    Some(x) => self.eval(x, env),
                    None => Value::NoneVal,
                };
                let (a, b, c) = (part(lower), part(upper), part(step));
                Value::Slice(Box::new([a, b, c]))
            }
            ExprKind::Ellipsis => Value::Ellipsis,
            _ => self.eval(ix, env),
        }
    }

    /// Python operators on tensors map to the table's dunder entries (`__add__`, `__matmul__`).
    pub fn tensor_binop(
        &mut self,
        op: BinOp,
        l: Value,
        r: Value,
        span: Span,
        env: &mut Env,
    ) -> Value {
        let swapped = !l.is_tensor();
        // `a - x` with a tensor only on the right is `x.__rsub__(a)`: the right operand is the
        // receiver, and the reflected method keeps the order.
        let method = match (op, swapped) {
            (BinOp::Add, false) => "__add__",
            (BinOp::Add, true) => "__radd__",
            (BinOp::Sub, false) => "__sub__",
            (BinOp::Sub, true) => "__rsub__",
            (BinOp::Mul, false) => "__mul__",
            (BinOp::Mul, true) => "__rmul__",
            (BinOp::Div, false) => "__truediv__",
            (BinOp::Div, true) => "__rtruediv__",
            (BinOp::FloorDiv, false) => "__floordiv__",
            (BinOp::FloorDiv, true) => "__rfloordiv__",
            (BinOp::Mod, false) => "__mod__",
            (BinOp::Mod, true) => "__rmod__",
            (BinOp::Pow, false) => "__pow__",
            (BinOp::Pow, true) => "__rpow__",
            (BinOp::MatMul, false) => "__matmul__",
            (BinOp::MatMul, true) => "__rmatmul__",
            (BinOp::Other, _) => "__eq__",
        };
        // `layer(x) + x` with `layer` unknown: Python calls the reflected method only when
        // the left operand is not a tensor, but it may well be one, and then it is the
        // first operand TensorIterator asks about the output's memory order. (A matmul
        // writes a new tensor whatever the order, and so does every candle op: `attn(x)? +
        // x` has `x`'s shape, row-major.)
        let left_may_be_tensor = swapped
            && op != BinOp::MatMul
            && self.language != Language::Rust
            && matches!(l, Value::Unknown(_) | Value::Named { .. });
        let (recv, other) = if swapped { (r, l) } else { (l, r) };
        let other = match other {
            Value::Named {
                name,
                param: Some(origin),
            } => param_as_tensor(&name, Some(origin), span, self.frame.context.clone()),
            Value::Named { .. } => Value::unknown_tensor(UnknownReason::NotATensor),
            x => x,
        };
        let out = self.tensor_method(
            method,
            recv,
            CallArgs::positional(vec![other]),
            span,
            span,
            env,
        );
        if left_may_be_tensor && out.is_tensor() {
            return Value::unknown_tensor(UnknownReason::UnknownOperand);
        }
        out
    }

    /// `isinstance(value, types)` where the value's kind decides it (`isinstance::isinstance`),
    /// an unknown bool otherwise: builtin type names are read as written, other types as the
    /// paths they evaluate to; `None` (the call as any other) when a type is neither.
    fn isinstance_call(&mut self, args: &[ir::Arg], env: &mut Env) -> Option<Value> {
        use super::isinstance::{isinstance, TypeRef};
        let [value, types] = args else { return None };
        if !value.is_positional() || !types.is_positional() {
            return None;
        }
        let entries: Vec<&Expr> = match &types.value().kind {
            ExprKind::Tuple(items) => items.iter().collect(),
            _ => vec![types.value()],
        };
        let mut refs = Vec::with_capacity(entries.len());
        for e in entries {
            refs.push(match &e.kind {
                ExprKind::Name(n)
                    if BUILTIN_TYPES.contains(&n.as_str()) && env.get(n).is_none() =>
                {
                    TypeRef::Builtin(n.to_string())
                }
                _ => match self.eval(e, env) {
                    Value::Import(path) => TypeRef::Path(path.to_string()),
                    _ => return None,
                },
            });
        }
        // Once the value is evaluated the answer is given, decided or not, so the call's
        // arguments are never evaluated a second time.
        let v = self.eval(value.value(), env);
        Some(Value::Bool(isinstance(&v, &refs)))
    }

    /// The few builtins that matter for sizes.
    fn builtin(&mut self, name: &str, a: CallArgs, span: Span) -> Value {
        match (name, a.positional.as_slice()) {
            ("len", [Value::Tuple(items)]) if !super::super::value::holds_packed(items) => {
                Value::int(items.len() as i64)
            }
            ("int", [Value::Int(d)]) => Value::Int(d.clone()),
            // `height = int(n ** 0.5)`: an integer the analysis cannot compute is still one
            // fixed size, named after the variable (like a size read from `x.shape`).
            ("int", [Value::Float | Value::Unknown(_) | Value::Tensor(_)]) => {
                Value::Int(self.mint_whole_value(span))
            }
            ("tuple" | "list", [v @ Value::Tuple(_)]) => v.clone(),
            ("list", [v @ Value::Repeated(_)]) => v.clone(),
            // `enumerate(feats)` of a known tuple, as a comprehension reads it (a `for`
            // statement over it is unrolled by `exec_enumerated`).
            ("enumerate", [Value::Tuple(items)]) if !super::super::value::holds_packed(items) => {
                let pair = |(i, item): (usize, &Value)| {
                    Value::Tuple(vec![Value::int(i as i64), item.clone()])
                };
                Value::Tuple(items.iter().enumerate().map(pair).collect())
            }
            // `list(xs)` of something else: a list, of items and length not known (what
            // einops stacks, `rearrange(list(xs), …)`).
            ("list", [_]) => Value::Repeated(Arc::new(Value::Unknown(UnknownReason::Unmodelled))),
            // `for _ in range(2)`, `range(1, depth)` with literal bounds: a loop that can
            // be unrolled (it builds `depth` layers, one per item).
            ("range", bounds) => literal_range(bounds),
            ("max" | "min", args) if !args.is_empty() => {
                let items: &[Value] = match args {
                    [Value::Tuple(items)] => items,
                    many => many,
                };
                let sizes: Option<Vec<Dim>> = items
                    .iter()
                    .map(|v| match self.as_size(v.clone()) {
                        Value::Int(d) => Some(d),
                        _ => None,
                    })
                    .collect();
                match sizes {
                    Some(sizes) if !sizes.is_empty() => {
                        let pick = |acc: Dim, d: &Dim| {
                            if name == "max" {
                                acc.max(d)
                            } else {
                                acc.min(d)
                            }
                        };
                        let first = sizes[0].clone();
                        Value::Int(sizes[1..].iter().fold(first, pick))
                    }
                    _ => Value::Unknown(UnknownReason::Unmodelled),
                }
            }
            // `getattr(nn, "GRU")`: the class `nn.GRU`, as the attribute reads it.
            ("getattr", [Value::Import(path), Value::Str(attr)]) if is_identifier(attr) => {
                Value::Import(dotted(path, attr).into())
            }
            ("getattr", [_, Value::Str(_), Value::Int(_)]) => {
                // The attribute or the default: some size, fixed for the object.
                Value::Int(self.mint_for(span))
            }
            _ => Value::Unknown(UnknownReason::Unmodelled),
        }
    }
}

/// `range(n)` / `range(a, b)` with literal bounds, as a tuple of at most [`MAX_UNROLL`]
/// integers (a loop over it is unrolled); with bounds that are sizes, integers of unknown
/// count ([`Value::IntRange`]); unknown otherwise.
pub(super) fn literal_range(bounds: &[Value]) -> Value {
    let lit = |v: &Value| match v {
        Value::Int(d) => d.as_lit(),
        _ => None,
    };
    let (start, stop) = match bounds {
        [stop] => (Some(0), lit(stop)),
        [start, stop] => (lit(start), lit(stop)),
        _ => (None, None),
    };
    match (start, stop) {
        (Some(a), Some(b)) if b.saturating_sub(a) <= super::MAX_UNROLL as i64 => {
            Value::Tuple((a..b.max(a)).map(Value::int).collect())
        }
        _ if !bounds.is_empty()
            && bounds
                .iter()
                .all(|b| matches!(b, Value::Int(_) | Value::Named { .. })) =>
        {
            Value::IntRange(range_bound(bounds))
        }
        _ => Value::Unknown(UnknownReason::Unmodelled),
    }
}

/// The bound below which every integer of `range(bounds…)` lies, when they are all at
/// least 0: `range(stop)` and `range(start, stop[, step])` with a literal start ≥ 0 and a
/// step that is a literal ≥ 1 or a size (`range(0, t, self.window)`: a window of ≥ 2
/// steps, as every named size is taken to be).
fn range_bound(bounds: &[Value]) -> Option<Dim> {
    let lit = |v: &Value| match v {
        Value::Int(d) => d.as_lit(),
        _ => None,
    };
    let forward = |step: &Value| match step {
        Value::Int(d) => d.as_lit().is_none_or(|v| v >= 1),
        Value::Named { .. } => true,
        _ => false,
    };
    let stop = match bounds {
        [stop] => stop,
        [start, stop] if lit(start)? >= 0 => stop,
        [start, stop, step] if lit(start)? >= 0 && forward(step) => stop,
        _ => return None,
    };
    match stop {
        Value::Int(d) => Some(d.clone()),
        _ => None,
    }
}

fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `math.sqrt(d)` and friends: floats; `math.prod(sizes)` a size.
fn math_call(name: &str, a: &CallArgs) -> Value {
    match name {
        "sqrt" | "log" | "log2" | "log10" | "log1p" | "exp" | "expm1" | "pow" | "cos" | "sin"
        | "tan" | "tanh" | "atan" | "atan2" | "erf" | "fabs" | "hypot" => Value::Float,
        "prod" => match a.positional.as_slice() {
            [Value::Tuple(items)] => items
                .iter()
                .try_fold(Dim::lit(1), |acc, v| match v {
                    Value::Int(d) => Some(acc.mul(d)),
                    _ => None,
                })
                .map(Value::Int)
                .unwrap_or(Value::Unknown(UnknownReason::Unmodelled)),
            _ => Value::Unknown(UnknownReason::Unmodelled),
        },
        _ => Value::Unknown(UnknownReason::Unmodelled),
    }
}

/// A call's arguments in order, positional then keyword.
fn ordered(a: CallArgs) -> Vec<(Option<String>, Value)> {
    let spread = spread_marker(&a).map(|(k, v)| (Some(k), v));
    a.positional
        .into_iter()
        .map(|v| (None, v))
        .chain(a.keywords.into_iter().map(|(k, v)| (Some(k), v)))
        .chain(spread)
        .collect()
}

/// The keyword under which a `**kwargs` spread of unknown contents reaches the binding of
/// a function of the analysed code (`Interpreter::bind_params` reads it).
pub(super) const KEYWORD_SPREAD: &str = "**";

/// The keyword argument that stands for the call's unknown `**kwargs` spread, if it has one.
pub(super) fn spread_marker(a: &CallArgs) -> Option<(String, Value)> {
    a.opaque_spread.then(|| {
        (
            KEYWORD_SPREAD.to_string(),
            Value::Unknown(UnknownReason::Unmodelled),
        )
    })
}

/// The class in `class`'s hierarchy whose body defines method `name` (for `super()` inside
/// that method), `class` itself when none does.
fn defining_class(class: &Arc<ClassDef>, name: &str) -> Arc<ClassDef> {
    match class.method(name) {
        Some((_, owner)) => find_class(class, owner),
        None => class.clone(),
    }
}

/// The `Arc` of `owner`, found in `class`'s hierarchy.
fn find_class(class: &Arc<ClassDef>, owner: &ClassDef) -> Arc<ClassDef> {
    if std::ptr::eq(Arc::as_ptr(class), owner) {
        return class.clone();
    }
    for b in &class.bases {
        let found = find_class(b, owner);
        if std::ptr::eq(Arc::as_ptr(&found), owner) {
            return found;
        }
    }
    class.clone()
}

fn forget_receiver(recv: &Expr, env: &mut Env) {
    match &recv.kind {
        ExprKind::Name(n) => env.set(n, Value::unknown_tensor(UnknownReason::Unmodelled)),
        ExprKind::Attr { value, attr } if matches!(&value.kind, ExprKind::Name(s) if s == "self") =>
        {
            env.set_self_attr(attr, Value::unknown_tensor(UnknownReason::Unmodelled));
        }
        _ => {}
    }
}

/// `list.append(item)` / `list.extend((a, b))` of a list (or layer container) with known
/// items: the list after the call; unknown after any other change in place.
fn appended(list: &Value, method: &str, a: &CallArgs) -> Value {
    let unknown = Value::Unknown(UnknownReason::Unmodelled);
    if !a.keywords.is_empty() || a.opaque_spread || a.packed_spread {
        return unknown;
    }
    let more: Vec<Value> = match (method, a.positional.as_slice()) {
        ("append" | "push", [item]) => vec![item.clone()],
        ("extend" | "extend_from_slice", [Value::Tuple(items)]) if !holds_packed(items) => {
            items.clone()
        }
        _ => return unknown,
    };
    match list {
        Value::Tuple(items) if !holds_packed(items) => {
            bounded_tuple(items.iter().cloned().chain(more).collect())
        }
        Value::Sequential(layers) => {
            Value::Sequential(layers.iter().cloned().chain(more).collect())
        }
        Value::Repeated(_) => repeated_items([list, &Value::Tuple(more)]).unwrap_or(unknown),
        _ => unknown,
    }
}

/// Bind the list held in a name or an attribute of `self` to its value after a change in
/// place (an alias elsewhere keeps the old value: lists built by `append` in model code
/// are not shared before they are complete).
fn set_list(list: &Expr, now: Value, env: &mut Env) {
    match &list.kind {
        ExprKind::Name(n) => env.set(n, now),
        ExprKind::Attr { value, attr } if matches!(&value.kind, ExprKind::Name(s) if s == "self") =>
        {
            env.set_self_attr(attr, now);
        }
        _ => {}
    }
}

/// Builtin types `isinstance` reads by name.
const BUILTIN_TYPES: [&str; 6] = ["int", "float", "bool", "str", "tuple", "list"];

fn is_builtin(name: &str) -> bool {
    matches!(
        name,
        "len" | "int" | "tuple" | "list" | "range" | "max" | "min" | "getattr" | "enumerate"
    )
}

impl Interpreter<'_> {
    /// A tensor method whose name no other common Python value has: views, reshapes and
    /// layout changes (`split`, `index`, `copy` and the like are also str/list methods).
    fn names_layout_op(&self, attr: &str) -> bool {
        use crate::ops::OpKind;
        self.tables.method(attr).is_some_and(|spec| {
            matches!(
                spec.kind,
                OpKind::View
                    | OpKind::Reshape
                    | OpKind::Flatten
                    | OpKind::Unflatten
                    | OpKind::Ravel
                    | OpKind::Transpose
                    | OpKind::Permute
                    | OpKind::Contiguous
                    | OpKind::Expand
            )
        })
    }
}

impl Interpreter<'_> {
    /// Give the contiguous output `out` of a convolution, pooling or resampling layer its
    /// sizes (`output_shape` in rules/*.toml), when its arguments fix them.
    fn size_layer_output(
        &mut self,
        m: &NnModuleVal,
        input: &TensorAlt,
        out: &Value,
        env: &mut Env,
    ) {
        let (Some(rule), Some(input)) = (m.spec.output_shape, input.layout.as_ref()) else {
            return;
        };
        let Value::Tensor(TensorVal::Alts(alts)) = out else {
            return;
        };
        let Some(origin) = alts.first().and_then(|a| a.origin) else {
            return;
        };
        if let Some(shape) = rule.output(&|name| m.args.get(name), &input.shape) {
            env.shapes
                .insert(origin, crate::layout::Layout::contiguous(shape));
        }
    }
}

/// The (input size, constructor size) pairs a module's call needs equal, from its table's
/// `input_sizes`; sizes the constructor did not give a readable value are skipped.
fn fixed_input_sizes(m: &NnModuleVal, shape: &[Dim]) -> Vec<(Dim, Dim)> {
    let mut pairs = Vec::new();
    for fixed in &m.spec.input_sizes {
        let Some(arg) = m.args.get(&fixed.param) else {
            continue;
        };
        let wanted: Vec<Dim> = match arg {
            ArgValue::Int(d) => vec![d.clone()],
            ArgValue::IntList(items) => match items.iter().map(ArgValue::as_size).collect() {
                Some(sizes) => sizes,
                None => continue,
            },
            _ => continue,
        };
        let first = match fixed.at {
            ops::InputDims::Trailing => shape.len().checked_sub(wanted.len()),
            ops::InputDims::Dim(d) if wanted.len() == 1 && !shape.is_empty() => {
                crate::layout::wrap_dim::wrap_dim(d, shape.len()).ok()
            }
            ops::InputDims::Dim(_) => None,
        };
        let Some(first) = first else {
            continue;
        };
        // With packed leading dims (`analysis::prefix`), only sizes counted from the end
        // are known dims, and a packed one is no single size.
        let is_packed = super::super::prefix::is_packed;
        let from_end = matches!(fixed.at, ops::InputDims::Trailing)
            || matches!(fixed.at, ops::InputDims::Dim(d) if d < 0);
        if shape.iter().any(is_packed)
            && (!from_end || shape[first..first + wanted.len()].iter().any(is_packed))
        {
            continue;
        }
        for (i, want) in wanted.into_iter().enumerate() {
            pairs.push((shape[first + i].clone(), want));
        }
    }
    pairs
}

/// `functools.partial(f, *args, **kwargs)`: `f` with those arguments bound first.
fn partial_of(a: CallArgs) -> Value {
    if a.opaque_spread || a.packed_spread || a.positional.is_empty() {
        return Value::Unknown(UnknownReason::Unmodelled);
    }
    let mut positional = a.positional;
    let func = positional.remove(0);
    Value::Partial(Arc::new(PartialVal {
        func,
        positional,
        keywords: a.keywords,
    }))
}

/// `nn.Sequential(a, b)` / `nn.ModuleList([a, b])`: the container of those layers.
fn container_of(container: ops::helpers::Container, a: CallArgs) -> Value {
    if let (ops::helpers::Container::Chain, Some(layers), true) =
        (container, &a.layers_spread, a.keywords.is_empty())
    {
        return Value::Sequential(layers.as_slice().into());
    }
    if !a.keywords.is_empty() || a.opaque_spread || a.packed_spread {
        return Value::Unknown(UnknownReason::Unmodelled);
    }
    match (container, a.positional.as_slice()) {
        (ops::helpers::Container::Chain, layers) => Value::Sequential(layers.into()),
        (ops::helpers::Container::List, []) => Value::Tuple(Vec::new()),
        (ops::helpers::Container::List, [Value::Tuple(layers)]) => Value::Tuple(layers.clone()),
        (ops::helpers::Container::List, [list @ Value::Repeated(_)]) => list.clone(),
        (ops::helpers::Container::List, _) => Value::Unknown(UnknownReason::Unmodelled),
    }
}

/// `nn.LSTM(…)(x)` returns `(output, (h_n, c_n))`: the table's kind gives `(output, h_n)`,
/// and `c_n` is laid out as `h_n`.
fn lstm_states(m: &NnModuleVal, result: Value) -> Value {
    match (m.spec.call.variant.as_deref(), result) {
        (Some("lstm"), Value::Tuple(items)) if items.len() == 2 => {
            let state = items[1].clone();
            Value::Tuple(vec![
                items[0].clone(),
                Value::Tuple(vec![state.clone(), state]),
            ])
        }
        (_, result) => result,
    }
}
