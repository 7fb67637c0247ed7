//! The abstract interpreter: walks IR statements and expressions, keeping an
//! [`Env`] of abstract [`Value`]s per path, joining paths at `if`/`try`/loops, and
//! handing every tensor op to [`super::calls`], which applies the op tables and records
//! an [`OpEvent`](super::event::OpEvent) for the lints.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::Arc;

use crate::ir::{self, BinOp, Expr, ExprKind, Function, Language, Span, Stmt, Target};
use crate::layout::{Assumption, Assumptions, Dim};

use super::env::{join_envs, join_opt, same_env, Env};
use super::event::OpEvent;
use super::tables::OpTables;
use super::value::{join, substitute, Step, SymLayout, TensorVal, Value};

/// How deep calls into the file's own functions are followed.
pub const MAX_CALL_DEPTH: usize = 3;
/// Loop bodies are re-run until the environment is stable, at most this often.
const MAX_LOOP_ITERATIONS: usize = 3;
/// Expressions nested deeper than this are not evaluated (the frontend caps depth too).
const MAX_EXPR_DEPTH: usize = 256;

/// What the interpreter knows about a class: its methods and the attributes its
/// constructor leaves on `self`.
#[derive(Debug, Default)]
pub struct ClassInfo {
    pub methods: HashMap<String, Arc<Function>>,
    /// Attributes after the constructor ran (only those no other method reassigns).
    pub attrs: HashMap<String, Value>,
    /// Exact quotients the constructor computed (`self.head_dim = dim // num_heads`), and
    /// the divisibility they assume: they hold in every method.
    pub exact_quotients: Vec<(String, Dim)>,
    pub divisibility: Vec<Assumption>,
}

pub struct Interpreter<'a> {
    pub source: &'a str,
    /// The settings' assumptions plus the exact quotients learned in this function.
    pub assumptions: Assumptions,
    base_assumptions: &'a Assumptions,
    pub globals: Env,
    pub events: Vec<OpEvent>,
    /// Class of the method being analysed.
    pub class: Option<Arc<ClassInfo>>,
    /// Functions currently being interpreted (recursion guard).
    call_stack: Vec<*const Function>,
    /// Functions (by span start) entered from a caller with its argument values.
    pub reached_from_callers: HashSet<u32>,
    /// How many followed calls (`call_local`) the code being interpreted is nested in.
    followed_calls: usize,
    /// Returned values of the function being interpreted (joined).
    returns: Option<Value>,
    /// Symbols minted for sizes read from tensors of unknown shape, and the tensor they belong to.
    minted: HashSet<String>,
    /// Divisibility assumptions made by `//` on sizes.
    pub divisibility: Vec<Assumption>,
    /// Equalities learned on the way (`symbol := size`), applied to every value read.
    subst: Vec<(String, Dim)>,
    /// The variable an assignment binds (`C = x.shape[-1]` names the size `C`).
    name_hint: Option<String>,
    /// The span of the assigned expression `name_hint` names.
    name_hint_span: Option<Span>,
    expr_depth: usize,
    /// While a constructor runs (see `analysis::class_info`): the environment at each of
    /// its `return`s. A Rust constructor ends with `return Self { .. }` (lowered to
    /// `self.field = …; return`), so its attributes are only found there.
    pub constructor_exits: Option<Vec<Env>>,
    /// The source language: Rust paths, ranges, `()` holes and `D::Minus1` are read here.
    pub language: Language,
    /// The op tables this file's calls resolve against (see [`OpTables`]).
    pub tables: OpTables,
}

impl<'a> Interpreter<'a> {
    pub fn new(source: &'a str, assumptions: &'a Assumptions, globals: Env) -> Self {
        Interpreter {
            source,
            assumptions: assumptions.clone(),
            base_assumptions: assumptions,
            globals,
            events: Vec::new(),
            class: None,
            call_stack: Vec::new(),
            reached_from_callers: HashSet::default(),
            followed_calls: 0,
            returns: None,
            minted: HashSet::default(),
            divisibility: Vec::new(),
            subst: Vec::new(),
            name_hint: None,
            name_hint_span: None,
            expr_depth: 0,
            constructor_exits: None,
            language: Language::Python,
            tables: OpTables::python(),
        }
    }

    /// Forget what was learned in the previous function (minted names, equalities).
    pub fn reset_function_state(&mut self) {
        self.assumptions = self.base_assumptions.clone();
        self.minted.clear();
        self.subst.clear();
        self.divisibility.clear();
        if let Some(class) = &self.class {
            self.assumptions
                .exact_quotients
                .extend(class.exact_quotients.iter().cloned());
            self.divisibility.extend(class.divisibility.iter().cloned());
        }
    }

    /// Record `a == b` (the program only gets past this point if it holds) and rewrite the
    /// environment with it. A single symbol is replaced by the other side; when both are
    /// single symbols, the name minted in this function (`C` from `B, T, C = x.size()`)
    /// gives way to the one the module's configuration uses (`C := n_embd`), so that values
    /// built from the configuration (a `Linear`'s sizes) agree with the input's.
    pub fn learn_equal(&mut self, a: &Dim, b: &Dim, env: &mut Env) {
        if a == b {
            return;
        }
        let single = |d: &Dim| -> Option<String> {
            let syms = d.symbols();
            (syms.len() == 1 && *d == Dim::sym(&syms[0])).then(|| syms[0].clone())
        };
        let (name, with) = match (single(a), single(b)) {
            (Some(x), Some(y)) => {
                if !self.minted.contains(&x) && self.minted.contains(&y) {
                    (y, a.clone())
                } else {
                    (x, b.clone())
                }
            }
            (Some(x), None) if !b.symbols().contains(&x) => (x, b.clone()),
            (None, Some(y)) if !a.symbols().contains(&y) => (y, a.clone()),
            _ => return,
        };
        for v in env.vars.values_mut().chain(env.self_attrs.values_mut()) {
            *v = substitute(v, &name, &with);
        }
        self.subst.push((name, with));
    }

    /// How many equalities have been learned so far in this function (a value read before
    /// a later one was learned must be re-substituted, see [`Interpreter::apply_subst`]).
    pub fn learned_count(&self) -> usize {
        self.subst.len()
    }

    /// Apply the learned equalities to a value.
    pub fn apply_subst(&self, mut v: Value) -> Value {
        for (name, with) in &self.subst {
            v = substitute(&v, name, with);
        }
        v
    }

    /// Source text of a span (for naming minted symbols and steps).
    pub fn text(&self, span: Span) -> &str {
        self.source.get(span.range()).unwrap_or("")
    }

    /// A fresh size symbol named as written in the code; a second, different quantity
    /// with the same name gets primes (`T′`) so the two are never confused.
    pub fn mint(&mut self, name: &str) -> Dim {
        let mut n = name.to_string();
        while self.minted.contains(&n) {
            n.push('′');
        }
        self.minted.insert(n.clone());
        Dim::sym(&n)
    }

    // ---------------------------------------------------------------- functions

    /// Interpret `f` with the given parameter values; returns the joined return value.
    pub fn run_function(&mut self, f: &Arc<Function>, params: Vec<(String, Value)>) -> Value {
        let key = Arc::as_ptr(f);
        if self.call_stack.contains(&key) || self.call_stack.len() > MAX_CALL_DEPTH {
            return Value::Unknown;
        }
        self.call_stack.push(key);
        let saved_returns = self.returns.take();
        let mut env = Env::default();
        for (name, v) in params {
            env.set(&name, v);
        }
        let end = self.exec_block(&f.body, Some(env));
        let mut ret = self.returns.take();
        if end.is_some() {
            // Falling off the end returns None.
            ret = Some(match ret {
                Some(r) => join(&r, &Value::NoneVal),
                None => Value::NoneVal,
            });
        }
        self.returns = saved_returns;
        self.call_stack.pop();
        ret.unwrap_or(Value::Unknown)
    }

    /// Whether the code being interpreted is inside a call followed from another function
    /// (its parameters hold the caller's values, not the standalone assumptions).
    pub fn in_followed_call(&self) -> bool {
        self.followed_calls > 0
    }

    /// Values for the parameters of `f` when it is analysed on its own: tensors that
    /// enter a function are assumed contiguous (assumption 1); jaxtyping annotations name
    /// their sizes.
    pub fn standalone_params(&mut self, f: &Function) -> Vec<(String, Value)> {
        let mut out = Vec::new();
        for p in &f.params {
            let v = if p.variadic {
                Value::Unknown
            } else if let Some(names) = &p.shape_annotation {
                self.annotated_tensor(&p.name, names, p.span)
            } else {
                Value::Named {
                    name: p.name.clone(),
                    is_param: true,
                }
            };
            out.push((p.name.clone(), v));
        }
        out
    }

    fn annotated_tensor(&mut self, param: &str, names: &[String], span: Span) -> Value {
        let variadic = names
            .iter()
            .any(|n| n.starts_with('*') || n == "..." || n.starts_with("#"));
        let layout = if variadic {
            None
        } else {
            let shape: Vec<Dim> = names
                .iter()
                .map(|n| match n.parse::<i64>() {
                    Ok(v) => Dim::lit(v),
                    Err(_) => Dim::sym(n),
                })
                .collect();
            for n in names {
                self.minted.insert(n.clone());
            }
            Some(SymLayout::contiguous(shape))
        };
        let what = format!("parameter `{param}` (assumed contiguous)");
        Value::Tensor(TensorVal::single(
            layout.clone(),
            Some(Arc::new(Step {
                span,
                what,
                layout,
                prev: None,
            })),
        ))
    }

    // ---------------------------------------------------------------- statements

    pub fn exec_block(&mut self, stmts: &[Stmt], mut env: Option<Env>) -> Option<Env> {
        for s in stmts {
            let e = env?;
            env = self.exec_stmt(s, e);
        }
        env
    }

    fn exec_stmt(&mut self, s: &Stmt, mut env: Env) -> Option<Env> {
        match s {
            Stmt::Assign { targets, value, .. } => {
                if let Some(refined) = self.try_size_unpacking(targets, value, &mut env) {
                    return Some(refined);
                }
                self.name_hint = match targets.as_slice() {
                    [Target::Name(n, _)] => Some(n.clone()),
                    _ => None,
                };
                self.name_hint_span = Some(value.span);
                let v = self.eval(value, &mut env);
                self.name_hint = None;
                self.name_hint_span = None;
                for t in targets {
                    self.assign(t, v.clone(), &mut env);
                }
                Some(env)
            }
            Stmt::AugAssign {
                target,
                op,
                value,
                span,
            } => {
                let cur = match target {
                    Target::Name(n, _) => self.lookup(n, &env),
                    Target::Attr {
                        value: obj, attr, ..
                    } => self.eval_attr(obj, attr, *span, &mut env),
                    _ => Value::Unknown,
                };
                let rhs = self.eval(value, &mut env);
                let result = self.binop(*op, cur.clone(), rhs, *span, &mut env);
                // On a tensor, `x op= y` runs in place (`__iadd__`, `__itruediv__`, ...): `x`
                // keeps its storage, shape and strides, whatever the result of `x op y` would be.
                let v = match cur {
                    Value::Tensor(_) => cur,
                    _ => result,
                };
                self.assign(target, v, &mut env);
                Some(env)
            }
            Stmt::Expr(e) => {
                self.eval(e, &mut env);
                Some(env)
            }
            Stmt::Return { value, .. } => {
                let v = match value {
                    Some(e) => self.eval(e, &mut env),
                    None => Value::NoneVal,
                };
                // A constructor's own `return` (not one inside a function it calls) leaves
                // the object it built; `return Err(..)` builds none.
                let is_error = value.as_ref().is_some_and(|e| matches!(&e.kind,
                    ExprKind::Call { func, .. } if matches!(&func.kind, ExprKind::Name(n) if n == "Err")));
                if let Some(exits) = self.constructor_exits.as_mut() {
                    if self.call_stack.is_empty() && !is_error {
                        exits.push(env);
                        return None;
                    }
                }
                self.returns = Some(match self.returns.take() {
                    Some(r) => join(&r, &v),
                    None => v,
                });
                None
            }
            Stmt::If {
                test, body, orelse, ..
            } => {
                self.eval(test, &mut env);
                let a = self.exec_block(body, Some(env.clone()));
                let b = self.exec_block(orelse, Some(env));
                join_opt(a, b)
            }
            Stmt::Loop {
                target,
                iter,
                body,
                orelse,
                ..
            } => {
                if let Some(it) = iter {
                    self.eval(it, &mut env);
                }
                let after = self.exec_loop(target.as_ref(), body, env);
                self.exec_block(orelse, Some(after))
            }
            Stmt::With { items, body, .. } => {
                for (e, t) in items {
                    self.eval(e, &mut env);
                    if let Some(t) = t {
                        self.assign(t, Value::Unknown, &mut env);
                    }
                }
                self.exec_block(body, Some(env))
            }
            Stmt::Try {
                body,
                handlers,
                orelse,
                finalbody,
                ..
            } => {
                let before = env.clone();
                let after_body = self.exec_block(body, Some(env));
                // A handler may start after any prefix of the body: approximate its entry
                // state by the join of the states before and after the body.
                let handler_entry =
                    join_opt(Some(before.clone()), after_body.clone()).unwrap_or(before);
                let mut out = self.exec_block(orelse, after_body);
                for h in handlers {
                    let hend = self.exec_block(h, Some(handler_entry.clone()));
                    out = join_opt(out, hend);
                }
                if finalbody.is_empty() {
                    out
                } else {
                    let fin_entry = out.clone().unwrap_or(handler_entry);
                    let fin = self.exec_block(finalbody, Some(fin_entry));
                    // If every path ended, finally does not revive it.
                    out.and(fin)
                }
            }
            Stmt::Assert { test, .. } => {
                self.eval(test, &mut env);
                // `assert x.shape[-1] == self.dim`: the program continues only if it holds.
                if let ExprKind::Compare {
                    left,
                    op: ir::CmpOp::Eq,
                    right,
                } = &test.kind
                {
                    let l = self.eval(left, &mut env);
                    let r = self.eval(right, &mut env);
                    if let (Value::Int(a), Value::Int(b)) = (self.as_size(l), self.as_size(r)) {
                        self.learn_equal(&a, &b, &mut env);
                    }
                }
                Some(env)
            }
            Stmt::Raise { .. } => None,
            Stmt::Import { module, alias, .. } => {
                let (name, path) = import_binding(module, alias.as_deref());
                env.set(&name, Value::Import(path));
                Some(env)
            }
            Stmt::FunctionDef(f) => {
                env.set(&f.name, Value::Function(f.clone(), false));
                Some(env)
            }
            Stmt::ClassDef(c) => {
                env.set(&c.name, Value::Unknown);
                Some(env)
            }
            // break/continue: the path leaves the straight-line flow; the loop join
            // covers the state (the loop body is re-entered from the joined state).
            Stmt::Jump { .. } => Some(env),
            Stmt::Other { .. } => Some(env),
        }
    }

    /// Run a loop body to a fixpoint. Events are only kept from the final, stable run so
    /// a finding holds for every iteration.
    fn exec_loop(&mut self, target: Option<&Target>, body: &[Stmt], env: Env) -> Env {
        let mut head = env;
        for iteration in 0..=MAX_LOOP_ITERATIONS {
            let mark = self.events.len();
            let mut entry = head.clone();
            if let Some(t) = target {
                self.assign(t, Value::Unknown, &mut entry);
            }
            let end = self.exec_block(body, Some(entry));
            let next = match &end {
                Some(e) => join_envs(&head, e),
                None => head.clone(),
            };
            if same_env(&next, &head) {
                return next;
            }
            self.events.truncate(mark);
            if iteration == MAX_LOOP_ITERATIONS - 1 {
                // Not converging: forget everything the body changes, then run once more.
                head = widen(&head, &next);
            } else {
                head = next;
            }
        }
        head
    }

    /// `B, T, C = x.size()` / `x.shape` on a tensor whose shape is not known yet: the
    /// unpacking tells its rank, and the names become its symbolic sizes.
    fn try_size_unpacking(
        &mut self,
        targets: &[Target],
        value: &Expr,
        env: &mut Env,
    ) -> Option<Env> {
        let [Target::Tuple(items, _)] = targets else {
            return None;
        };
        let recv = match self.language {
            Language::Python => size_query_receiver(value)?,
            Language::Rust => rank_checked_size_query(value, items.len())?,
        };
        let ExprKind::Name(var) = &recv.kind else {
            return None;
        };
        let names: Vec<&str> = items
            .iter()
            .map(|t| match t {
                Target::Name(n, _) => Some(n.as_str()),
                _ => None,
            })
            .collect::<Option<_>>()?;
        let current = self.lookup(var, env);
        let contiguous_unknown = match &current {
            Value::Named { is_param: true, .. } => true,
            Value::Tensor(TensorVal::Alts(a)) => a.len() == 1 && a[0].layout.is_none(),
            _ => false,
        };
        if !contiguous_unknown {
            return None;
        }
        let shape: Vec<Dim> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                if *n == "_" {
                    self.mint(&format!("{var}.shape[{i}]"))
                } else {
                    self.mint(n)
                }
            })
            .collect();
        let layout = Some(SymLayout::contiguous(shape.clone()));
        let prev = match &current {
            Value::Tensor(TensorVal::Alts(a)) => a[0].chain.clone(),
            _ => None,
        };
        let what = match &current {
            Value::Named { .. } => format!("parameter `{var}` (assumed contiguous)"),
            _ => format!("`{var}` (contiguous)"),
        };
        let step = Step {
            span: value.span,
            what,
            layout: layout.clone(),
            prev,
        };
        env.set(
            var,
            Value::Tensor(TensorVal::single(layout, Some(Arc::new(step)))),
        );
        let mut out = env.clone();
        for (t, d) in items.iter().zip(shape) {
            self.assign(t, Value::Int(d), &mut out);
        }
        Some(out)
    }

    pub fn assign(&mut self, t: &Target, v: Value, env: &mut Env) {
        match t {
            Target::Name(n, _) => env.set(n, v),
            Target::Attr { value, attr, .. } => {
                if matches!(value.kind, ExprKind::Name(ref n) if n == "self") {
                    env.self_attrs.insert(attr.clone(), v);
                }
            }
            Target::Tuple(items, _) => self.assign_tuple(items, v, env),
            Target::Starred(inner, _) => self.assign(inner, Value::Unknown, env),
            // `xs[i] = v` changes a list (its value is no longer known); a tensor's item
            // write (`x[:, 0] = v`) keeps its layout.
            Target::Item { value, .. } => {
                if let ExprKind::Name(name) = &value.kind {
                    if matches!(self.lookup(name, env), Value::Tuple(_)) {
                        env.set(name, Value::Unknown);
                    }
                }
            }
            Target::Other(_) => {}
        }
    }

    fn assign_tuple(&mut self, items: &[Target], v: Value, env: &mut Env) {
        let star = items.iter().position(|t| matches!(t, Target::Starred(..)));
        match (v, star) {
            (Value::Tuple(vals), None) if vals.len() == items.len() => {
                for (t, x) in items.iter().zip(vals) {
                    self.assign(t, x, env);
                }
            }
            (Value::Tuple(vals), Some(si)) if vals.len() + 1 >= items.len() => {
                let tail = items.len() - si - 1;
                for (t, x) in items[..si].iter().zip(vals.iter()) {
                    self.assign(t, x.clone(), env);
                }
                let rest: Vec<Value> = vals[si..vals.len() - tail].to_vec();
                if let Target::Starred(inner, _) = &items[si] {
                    self.assign(inner, Value::Tuple(rest), env);
                }
                for (t, x) in items[si + 1..].iter().zip(vals[vals.len() - tail..].iter()) {
                    self.assign(t, x.clone(), env);
                }
            }
            (other, _) => {
                // Unpacking a tensor along dim 0 (`q, k, v = qkv`) or an unknown value.
                let elem = match other {
                    Value::Tensor(_) => Value::unknown_tensor(),
                    _ => Value::Unknown,
                };
                for t in items {
                    self.assign(t, elem.clone(), env);
                }
            }
        }
    }

    // ---------------------------------------------------------------- expressions

    pub fn lookup(&self, name: &str, env: &Env) -> Value {
        if let Some(v) = env.get(name) {
            return v.clone();
        }
        if let Some(v) = self.globals.get(name) {
            return v.clone();
        }
        if self.language == Language::Rust {
            return match name {
                // `Self::helper(..)` names the class's own associated function.
                "self" | "Self" if self.class.is_some() => Value::SelfObj,
                // An unbound path root is a crate or a type (`candle_nn::ops::…`,
                // `Tensor::cat`, `D::Minus1`): its dotted path, for the op tables.
                _ => Value::Import(name.to_string()),
            };
        }
        match name {
            "self" if self.class.is_some() => Value::SelfObj,
            // Conventional aliases, used when a file omits its imports (snippets, notebooks).
            "torch" | "einops" | "math" => Value::Import(name.to_string()),
            "F" => Value::Import("torch.nn.functional".into()),
            "nn" => Value::Import("torch.nn".into()),
            "rearrange" | "reduce" | "repeat" => Value::Unknown,
            _ => Value::Unknown,
        }
    }

    pub fn eval(&mut self, e: &Expr, env: &mut Env) -> Value {
        if self.expr_depth > MAX_EXPR_DEPTH {
            return Value::Unknown;
        }
        self.expr_depth += 1;
        let mut v = self.eval_inner(e, env);
        self.expr_depth -= 1;
        if !self.subst.is_empty() {
            v = self.apply_subst(v);
        }
        v
    }

    fn eval_inner(&mut self, e: &Expr, env: &mut Env) -> Value {
        match &e.kind {
            ExprKind::Name(n) => self.lookup(n, env),
            ExprKind::Int(v) => Value::int(*v),
            ExprKind::Float(_) => Value::Float,
            ExprKind::Str(s) => Value::Str(s.clone()),
            ExprKind::Bool(b) => Value::Bool(Some(*b)),
            ExprKind::None => Value::NoneVal,
            ExprKind::Ellipsis => Value::Unknown,
            ExprKind::Tuple(items) | ExprKind::List(items) => self.eval_sequence(items, env),
            ExprKind::Starred(inner) => self.eval(inner, env),
            ExprKind::Attr { value, attr } => self.eval_attr(value, attr, e.span, env),
            ExprKind::Call { func, args } => self.eval_call(e, func, args, env),
            ExprKind::Subscript { value, index } => {
                if let Some(v) = self.size_of_unknown_shape(e, value, index, env) {
                    return v;
                }
                let base = self.eval(value, env);
                self.subscript(e, base, index, env)
            }
            ExprKind::Slice { lower, upper, step } => {
                let parts = [lower, upper, step].map(|part| match part {
                    Some(x) => self.eval(x, env),
                    None => Value::NoneVal,
                });
                match self.language {
                    // A Rust range is a value: `x.i((.., 0..2))` passes it to an op.
                    Language::Rust => Value::Slice(Box::new(parts)),
                    Language::Python => Value::Unknown,
                }
            }
            ExprKind::BinOp { op, left, right } => {
                let l = self.eval(left, env);
                let r = self.eval(right, env);
                self.binop(*op, l, r, e.span, env)
            }
            ExprKind::Neg(inner) => match self.eval(inner, env) {
                Value::Int(d) => Value::Int(Dim::lit(0).sub(&d)),
                Value::Float => Value::Float,
                v @ Value::Tensor(_) => self.tensor_unary("neg", v, e.span, env),
                _ => Value::Unknown,
            },
            ExprKind::IfExp { test, body, orelse } => {
                self.eval(test, env);
                let a = self.eval(body, env);
                let b = self.eval(orelse, env);
                join(&a, &b)
            }
            ExprKind::Compare { left, right, .. } => {
                let l = self.eval(left, env);
                let r = self.eval(right, env);
                if l.is_tensor() || r.is_tensor() {
                    // `mask == 0`: an element-wise op producing a bool tensor.
                    return self.binop(BinOp::Other, l, r, e.span, env);
                }
                Value::Bool(None)
            }
            ExprKind::Unknown => Value::Unknown,
        }
    }

    /// `x.shape[i]` / `x.size()[i]` on a tensor known only to be contiguous: one size of
    /// it, a fresh symbol named after the variable it is assigned to (or the expression).
    fn size_of_unknown_shape(
        &mut self,
        e: &Expr,
        value: &Expr,
        index: &[Expr],
        env: &mut Env,
    ) -> Option<Value> {
        let [ix] = index else { return None };
        if !matches!(ix.kind, ExprKind::Int(_)) {
            return None;
        }
        let recv = size_query_receiver(value)?;
        let ExprKind::Name(var) = &recv.kind else {
            return None;
        };
        if !self.has_unknown_shape(&self.lookup(var, env)) {
            return None;
        }
        Some(Value::Int(self.mint_for(e.span)))
    }

    /// Is `v` a tensor known only to be contiguous (a parameter, or a single alternative
    /// without a layout)?
    pub fn has_unknown_shape(&self, v: &Value) -> bool {
        match v {
            Value::Named { is_param: true, .. } => true,
            Value::Tensor(TensorVal::Alts(a)) => a.len() == 1 && a[0].layout.is_none(),
            _ => false,
        }
    }

    /// A fresh size for the expression at `span`: named after the assigned variable when
    /// there is one, else after the expression's text.
    pub fn mint_for(&mut self, span: Span) -> Dim {
        let name = match self.name_hint.take() {
            Some(n) => n,
            None => self
                .text(span)
                .chars()
                .filter(|c| !c.is_whitespace())
                .take(40)
                .collect(),
        };
        self.mint(&name)
    }

    fn eval_sequence(&mut self, items: &[Expr], env: &mut Env) -> Value {
        let mut out = Vec::with_capacity(items.len());
        for it in items {
            if let ExprKind::Starred(inner) = &it.kind {
                match self.eval(inner, env) {
                    Value::Tuple(vs) => out.extend(vs),
                    _ => return Value::Unknown,
                }
            } else if self.language == Language::Rust
                && matches!(&it.kind, ExprKind::Tuple(unit) if unit.is_empty())
            {
                // candle's `ShapeWithOneHole`: a `()` element of a shape is the size
                // inferred from the element count, PyTorch's `-1`.
                out.push(Value::int(-1));
            } else {
                out.push(self.eval(it, env));
            }
        }
        Value::Tuple(out)
    }

    pub fn eval_attr(&mut self, value: &Expr, attr: &str, span: Span, env: &mut Env) -> Value {
        let base = self.eval(value, env);
        match base {
            Value::Import(path) => match candle_minus_dim(self.language, &path, attr) {
                Some(dim) => Value::int(dim),
                None => Value::Import(format!("{path}.{attr}")),
            },
            Value::SelfObj => {
                if let Some(v) = env.self_attrs.get(attr) {
                    return v.clone();
                }
                if let Some(class) = &self.class {
                    if let Some(v) = class.attrs.get(attr) {
                        return v.clone();
                    }
                    if let Some(f) = class.methods.get(attr) {
                        return Value::Function(f.clone(), true);
                    }
                }
                Value::Named {
                    name: format!("self.{attr}"),
                    is_param: false,
                }
            }
            Value::Named { name, is_param } => {
                if is_param && super::calls::is_tensor_property(self, attr) {
                    let t = super::calls::param_as_tensor(&name, value.span);
                    return self.tensor_property(t, attr, value, span, env);
                }
                Value::Named {
                    name: format!("{name}.{attr}"),
                    is_param: false,
                }
            }
            t @ Value::Tensor(_) => self.tensor_property(t, attr, value, span, env),
            _ => Value::Unknown,
        }
    }

    fn subscript(&mut self, e: &Expr, base: Value, index: &[Expr], env: &mut Env) -> Value {
        match base {
            Value::Tuple(items) => {
                if let [ix] = index {
                    if let ExprKind::Slice { lower, upper, step } = &ix.kind {
                        let lo = lower.as_ref().map(|x| self.eval(x, env));
                        let hi = upper.as_ref().map(|x| self.eval(x, env));
                        let st = step.as_ref().map(|x| self.eval(x, env));
                        return slice_tuple(items, lo, hi, st);
                    }
                    if let Value::Int(d) = self.eval(ix, env) {
                        if let Some(i) = d.as_lit() {
                            let n = items.len() as i64;
                            let i = if i < 0 { i + n } else { i };
                            if (0..n).contains(&i) {
                                return items[i as usize].clone();
                            }
                        }
                    }
                }
                Value::Unknown
            }
            v @ (Value::Tensor(_) | Value::Named { is_param: true, .. }) => {
                super::calls::tensor_getitem(self, e, v, index, env)
            }
            Value::Named { name, .. } => {
                // `self.bias[:, :T]` on an attribute we know nothing about.
                for ix in index {
                    self.eval(ix, env);
                }
                let _ = name;
                Value::Unknown
            }
            _ => {
                for ix in index {
                    self.eval(ix, env);
                }
                Value::Unknown
            }
        }
    }

    pub fn binop(&mut self, op: BinOp, l: Value, r: Value, span: Span, env: &mut Env) -> Value {
        if l.is_tensor() || r.is_tensor() {
            return super::calls::tensor_binop(self, op, l, r, span, env);
        }
        let l = self.as_size(l);
        let r = self.as_size(r);
        match (op, l, r) {
            (BinOp::Add, Value::Tuple(a), Value::Tuple(b)) => {
                Value::Tuple(a.into_iter().chain(b).collect())
            }
            (BinOp::Mul, Value::Tuple(a), Value::Int(n))
            | (BinOp::Mul, Value::Int(n), Value::Tuple(a)) => match n.as_lit() {
                Some(k) if (0..=64).contains(&k) => {
                    Value::Tuple((0..k).flat_map(|_| a.iter().cloned()).collect())
                }
                _ => Value::Unknown,
            },
            (_, Value::Int(a), Value::Int(b)) => match op {
                BinOp::Add => Value::Int(a.add(&b)),
                BinOp::Sub => Value::Int(a.sub(&b)),
                BinOp::Mul => Value::Int(a.mul(&b)),
                BinOp::FloorDiv => {
                    if let Some(q) = self.literal_quotient(&a, &b, span, env) {
                        return Value::Int(q);
                    }
                    let (q, assumption) = a.floordiv_with_assumption(&b);
                    if let Some(asm) = assumption {
                        if !self.divisibility.contains(&asm) {
                            self.divisibility.push(asm);
                        }
                        let syms = a.symbols();
                        if syms.len() == 1 && a == Dim::sym(&syms[0]) {
                            let fact = (syms[0].clone(), b.clone());
                            if !self.assumptions.exact_quotients.contains(&fact) {
                                self.assumptions.exact_quotients.push(fact);
                            }
                        }
                    }
                    Value::Int(q)
                }
                BinOp::Mod => Value::Int(a.modulo(&b)),
                BinOp::Pow => match (a.as_lit(), b.as_lit()) {
                    (Some(x), Some(y)) if (0..63).contains(&y) => x
                        .checked_pow(y as u32)
                        .map(Value::int)
                        .unwrap_or(Value::Unknown),
                    _ => Value::Unknown,
                },
                // True division of sizes yields a float in Python.
                BinOp::Div => Value::Float,
                _ => Value::Unknown,
            },
            (BinOp::Div, _, _) => Value::Float,
            (_, Value::Float, _) | (_, _, Value::Float) => Value::Float,
            _ => Value::Unknown,
        }
    }

    /// Rust `n / k` of a named size `n` by a literal `k ≥ 2`. Model code divides a size it
    /// laid out in `k` equal parts (a fused QKV width `/ 3`, rotary halves `/ 2`); the
    /// algebra keeps `n // k` opaque (nothing can be compared with it), so instead the
    /// quotient gets a name `q` (the variable it is assigned to, else `(n/k)`) and `n` is
    /// rewritten to `k·q` everywhere, under the recorded assumption "k divides n". `None`
    /// for anything else, and for Python (whose fixtures are pinned to the algebra's rule).
    fn literal_quotient(&mut self, n: &Dim, k: &Dim, span: Span, env: &mut Env) -> Option<Dim> {
        if self.language != Language::Rust || k.as_lit().is_none_or(|k| k < 2) {
            return None;
        }
        let syms = n.symbols();
        let [symbol] = syms.as_slice() else {
            return None;
        };
        if *n != Dim::sym(symbol) {
            return None;
        }
        // `let h = n / 3;` names the quotient `h`; inside a larger expression it is `(n/3)`.
        let hint = if self.name_hint_span == Some(span) {
            self.name_hint.take()
        } else {
            None
        };
        let name = hint.unwrap_or_else(|| format!("({n}/{k})"));
        let quotient = self.mint(&name);
        self.learn_equal(n, &k.mul(&quotient), env);
        let assumption = Assumption::Divides {
            divisor: k.to_string(),
            dividend: n.to_string(),
        };
        if !self.divisibility.contains(&assumption) {
            self.divisibility.push(assumption);
        }
        Some(quotient)
    }

    /// Interpret a value as a size when it is used in integer arithmetic: a name of unknown
    /// type (`config.n_head`, an `int` parameter) becomes the symbol of that name.
    pub fn as_size(&self, v: Value) -> Value {
        match v {
            Value::Named { name, .. } => Value::Int(Dim::sym(&name)),
            other => other,
        }
    }

    fn eval_call(&mut self, call: &Expr, func: &Expr, args: &[ir::Arg], env: &mut Env) -> Value {
        super::calls::eval_call(self, call, func, args, env)
    }

    fn tensor_property(
        &mut self,
        t: Value,
        attr: &str,
        recv: &Expr,
        span: Span,
        env: &mut Env,
    ) -> Value {
        super::calls::tensor_property(self, t, attr, recv, span, env)
    }

    fn tensor_unary(&mut self, method: &str, t: Value, span: Span, env: &mut Env) -> Value {
        super::calls::tensor_method_by_name(self, method, t, Vec::new(), span, env)
    }

    /// Analyse a call into one of the file's own functions with the caller's argument values.
    pub fn call_local(
        &mut self,
        f: &Arc<Function>,
        bound_self: bool,
        args: Vec<(Option<String>, Value)>,
    ) -> Value {
        if self.call_stack.len() > MAX_CALL_DEPTH {
            return Value::Unknown;
        }
        let _ = bound_self;
        let mut params: Vec<(String, Value)> = Vec::new();
        let mut positional = args
            .iter()
            .filter(|(k, _)| k.is_none())
            .map(|(_, v)| v.clone());
        for p in &f.params {
            if p.variadic {
                params.push((p.name.clone(), Value::Unknown));
                continue;
            }
            let v = args
                .iter()
                .find(|(k, _)| k.as_deref() == Some(p.name.as_str()))
                .map(|(_, v)| v.clone())
                .or_else(|| positional.next())
                .unwrap_or_else(|| match &p.default {
                    Some(d) if matches!(d.kind, ExprKind::Int(_)) => {
                        if let ExprKind::Int(v) = d.kind {
                            Value::int(v)
                        } else {
                            Value::Unknown
                        }
                    }
                    Some(d) if matches!(d.kind, ExprKind::None) => Value::NoneVal,
                    _ => Value::Unknown,
                });
            params.push((p.name.clone(), v));
        }
        // The callee sees the file's globals but not the caller's locals.
        self.reached_from_callers.insert(f.span.start);
        self.followed_calls += 1;
        let result = self.run_function(f, params);
        self.followed_calls -= 1;
        result
    }
}

/// `import a.b.c` binds `a` to `a`; `import a.b as x` binds `x` to `a.b`;
/// `from a import b` arrives as module `a.b` with alias `b`.
fn import_binding(module: &str, alias: Option<&str>) -> (String, String) {
    match alias {
        Some(a) => (a.to_string(), module.to_string()),
        None => {
            let first = module.split('.').next().unwrap_or(module);
            (first.to_string(), first.to_string())
        }
    }
}

/// `x.size()`, `x.shape`, `x.size` → the receiver `x`.
fn size_query_receiver(e: &Expr) -> Option<&Expr> {
    match &e.kind {
        ExprKind::Attr { value, attr } if attr == "shape" => Some(value),
        ExprKind::Call { func, args } if args.is_empty() => match &func.kind {
            ExprKind::Attr { value, attr } if attr == "size" => Some(value),
            _ => None,
        },
        _ => None,
    }
}

/// Rust's rank-checked size queries whose tuple result names every size: candle's
/// `x.dims3()?` and tch-rs's `x.size3()` (for `n` targets, `dims{n}` / `size{n}`) → `x`.
fn rank_checked_size_query(e: &Expr, n: usize) -> Option<&Expr> {
    let ExprKind::Call { func, args } = &e.kind else {
        return None;
    };
    let ExprKind::Attr { value, attr } = &func.kind else {
        return None;
    };
    let rank = attr
        .strip_prefix("dims")
        .or_else(|| attr.strip_prefix("size"))?;
    (args.is_empty() && rank.parse::<usize>().ok() == Some(n)).then_some(&**value)
}

/// candle's negative dims: `D::Minus1` / `D::Minus2` (the enum `D`, under any path) are
/// `-1` / `-2`; `D::Minus(k)` is a call, see `calls::eval_call`.
fn candle_minus_dim(language: Language, path: &str, attr: &str) -> Option<i64> {
    if language != Language::Rust || path.rsplit('.').next() != Some("D") {
        return None;
    }
    match attr {
        "Minus1" => Some(-1),
        "Minus2" => Some(-2),
        _ => None,
    }
}

fn slice_tuple(
    items: Vec<Value>,
    lo: Option<Value>,
    hi: Option<Value>,
    st: Option<Value>,
) -> Value {
    let n = items.len() as i64;
    let lit = |v: Option<Value>, default: i64| -> Option<i64> {
        match v {
            None | Some(Value::NoneVal) => Some(default),
            Some(Value::Int(d)) => d.as_lit(),
            _ => None,
        }
    };
    let (Some(mut a), Some(mut b), Some(step)) = (lit(lo, 0), lit(hi, n), lit(st, 1)) else {
        return Value::Unknown;
    };
    if step != 1 {
        return Value::Unknown;
    }
    if a < 0 {
        a += n;
    }
    if b < 0 {
        b += n;
    }
    let a = a.clamp(0, n) as usize;
    let b = b.clamp(0, n) as usize;
    Value::Tuple(if a < b {
        items[a..b].to_vec()
    } else {
        Vec::new()
    })
}

/// Forget the values a non-converging loop keeps changing.
fn widen(head: &Env, next: &Env) -> Env {
    let mut out = next.clone();
    for (k, v) in next.vars.iter() {
        let stable = head
            .vars
            .get(k)
            .is_some_and(|h| super::value::same_value(h, v));
        if !stable {
            let unknown = if v.is_tensor() {
                Value::unknown_tensor()
            } else {
                Value::Unknown
            };
            out.vars.insert(k.clone(), unknown);
        }
    }
    for (k, v) in next.self_attrs.iter() {
        let stable = head
            .self_attrs
            .get(k)
            .is_some_and(|h| super::value::same_value(h, v));
        if !stable {
            out.self_attrs.insert(k.clone(), Value::Unknown);
        }
    }
    out
}
