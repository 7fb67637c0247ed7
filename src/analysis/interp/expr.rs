//! Expressions: names, attributes, subscripts, size arithmetic and tuples, conditions.

use std::sync::Arc;

use crate::ir::{self, BinOp, CmpOp, Expr, ExprKind, Language, Span};
use crate::layout::{Assumption, Decider, Dim, Tri};

use super::super::apply::{param_as_tensor, resolve_alt};
use super::super::env::{join_tagged, Env};
use super::super::prefix;
use super::super::value::{
    bounded_tuple, holds_packed, join, repeated_items, TensorVal, UnknownReason, Value,
};
use super::stmt::size_query_receiver;
use super::{dotted, Interpreter, EXPR_WORK, MAX_EXPR_DEPTH};

impl Interpreter<'_> {
    pub fn lookup(&self, name: &str, env: &Env) -> Value {
        if let Some(v) = env.get(name) {
            return v.clone();
        }
        if let Some(v) = self.globals.get(name) {
            return v.clone();
        }
        if name == "self" || (self.language == Language::Rust && name == "Self") {
            if let Some(this) = &self.frame.this {
                return Value::Instance(this.clone());
            }
        }
        // The Rust frontend lowers `(x as f64 * k) as usize` to Python's `int(…)` (the
        // builtin); no Rust path is named `int`.
        if self.language == Language::Rust && name != "int" {
            // An unbound path root is a crate or a type (`candle_nn::ops::…`,
            // `Tensor::cat`, `D::Minus1`): its dotted path, for the op tables.
            return Value::Import(name.into());
        }
        match name {
            // Conventional aliases, used when a file omits its imports (snippets, notebooks).
            "torch" | "einops" | "math" => Value::Import(name.into()),
            "F" => Value::Import("torch.nn.functional".into()),
            "nn" => Value::Import("torch.nn".into()),
            _ => Value::Unknown(UnknownReason::UnknownObject),
        }
    }

    pub fn eval(&mut self, e: &Expr, env: &mut Env) -> Value {
        // One statement may be long (a list literal of a megabyte) and run many times: each
        // node costs work, and none is evaluated once the file's work is spent.
        if self.expr_depth > MAX_EXPR_DEPTH || !self.spend(EXPR_WORK) {
            return Value::Unknown(UnknownReason::Unmodelled);
        }
        self.expr_depth += 1;
        let mut v = self.eval_inner(e, env);
        self.expr_depth -= 1;
        if !self.frame.subst.is_empty() {
            v = self.apply_subst(v);
        }
        v
    }

    /// One expression, by its kind; the longer kinds have helpers of their own.
    fn eval_inner(&mut self, e: &Expr, env: &mut Env) -> Value {
        match &e.kind {
            ExprKind::Name(n) => {
                let v = self.lookup(n, env);
                self.probed(e.span, v, env)
            }
            ExprKind::Int(v) => Value::int(*v),
            ExprKind::Float(_) => Value::Float,
            ExprKind::Str(s) => Value::Str(s.clone()),
            ExprKind::Bool(b) => Value::Bool(Some(*b)),
            ExprKind::None => Value::NoneVal,
            ExprKind::Ellipsis => Value::Unknown(UnknownReason::Unmodelled),
            ExprKind::Tuple(items) | ExprKind::List(items) => self.eval_sequence(items, env),
            ExprKind::Comprehension(c) => self.eval_comprehension(c, env),
            // Run in place by `map(lambda t: …, xs)`, or when called after an assignment
            // kept it (`Interpreter::lambda_value`); an argument (`key=lambda …`) is not.
            ExprKind::Lambda(lambda) => self.lambda_value(&lambda.params, &lambda.body, env),
            ExprKind::Starred(inner) => self.eval(inner, env),
            ExprKind::Labelled(labelled) => self.eval(&labelled.value, env),
            ExprKind::Attr { value, attr } => {
                let v = self.eval_attr(value, attr, e.span, env);
                self.probed(e.span, v, env)
            }
            ExprKind::Call(call) => {
                let v = self.eval_call(e, call.func(), call.args(), env);
                self.probed(e.span, v, env)
            }
            ExprKind::Subscript(subscript) => {
                let (value, index) = (subscript.value(), subscript.index());
                if let Some(v) = self.size_of_unknown_shape(e, value, index, env) {
                    return v;
                }
                let base = self.eval(value, env);
                self.subscript(e, base, index, env)
            }
            ExprKind::Slice(bounds) => {
                let ir::SliceBounds { lower, upper, step } = &**bounds;
                self.eval_slice([lower, upper, step], env)
            }
            ExprKind::BinOp { op, operands } => {
                let [left, right] = &**operands;
                let l = self.eval(left, env);
                let r = self.eval(right, env);
                self.binop(*op, l, r, e.span, env)
            }
            ExprKind::Neg(inner) => match self.eval(inner, env) {
                Value::Int(d) => Value::Int(Dim::lit(0).sub(&d)),
                Value::Float => Value::Float,
                v @ Value::Tensor(_) => self.tensor_unary("neg", v, e.span, env),
                _ => Value::Unknown(UnknownReason::Unmodelled),
            },
            ExprKind::IfExp(parts) => {
                let [test, body, orelse] = &**parts;
                self.eval_if_exp(e.span, test, body, orelse, env)
            }
            ExprKind::Compare { op, operands } => {
                let [left, right] = &**operands;
                self.eval_compare(e.span, left, *op, right, env)
            }
            ExprKind::Unknown => Value::Unknown(UnknownReason::Unmodelled),
        }
    }

    /// `[element for target in iter if cond]`: the element for each item of `iter` its
    /// filters pass (see [`Interpreter::filtered_element`]).
    fn eval_comprehension(&mut self, c: &ir::Comprehension, env: &mut Env) -> Value {
        let items = self.eval(&c.iter, env);
        let mut kept = Vec::new();
        let values = self.for_each_item(&c.target, items, env, |interp, scope| {
            let (keep, value) = interp.filtered_element(c, scope);
            kept.push(keep);
            value
        });
        let Value::Tuple(values) = values else {
            // One item stood for every item of an unlisted iterable: the filters leave
            // any number of them.
            return match kept[..] {
                [Some(false)] => Value::Unknown(UnknownReason::Unmodelled),
                _ => values,
            };
        };
        if kept.len() != values.len() {
            return Value::Unknown(UnknownReason::Unmodelled);
        }
        if kept.contains(&None) {
            // Which items pass is not known: any number of the items that may.
            let may_pass = (values.iter().zip(&kept)).filter(|(_, k)| **k != Some(false));
            let maybe = Value::Tuple(may_pass.map(|(v, _)| v.clone()).collect());
            return repeated_items([&maybe]).unwrap_or(Value::Unknown(UnknownReason::Unmodelled));
        }
        let passed = values
            .into_iter()
            .zip(kept)
            .filter(|(_, k)| *k == Some(true));
        Value::Tuple(passed.map(|(v, _)| v).collect())
    }

    /// One item of a comprehension, its target bound in `scope`: whether its filters pass
    /// it (unknown: `None`), and its element, evaluated wherever it may pass — under the
    /// filter's branch where the filter can be named, as the body of an `if` is.
    fn filtered_element(
        &mut self,
        c: &ir::Comprehension,
        scope: &mut Env,
    ) -> (Option<bool>, Value) {
        let mark = scope.decisions.len();
        let mut keep = Some(true);
        for test in &c.conditions {
            match self.eval_condition(test, scope) {
                Some(true) => {}
                Some(false) => {
                    keep = Some(false);
                    break;
                }
                None => {
                    keep = None;
                    if let Some(condition) = self.nameable_condition(test, scope) {
                        let [taken, _] = self.branch_names(&condition);
                        scope.decide(taken);
                    }
                }
            }
        }
        let value = match keep {
            Some(false) => Value::Unknown(UnknownReason::Unmodelled),
            _ => self.eval(&c.element, scope),
        };
        scope.decisions.truncate(mark);
        (keep, value)
    }

    /// `v`, the value of the expression at `span`, recorded first where the editor asked
    /// for probes.
    fn probed(&mut self, span: Span, v: Value, env: &mut Env) -> Value {
        if self.probes.is_some() {
            self.probe(span, &v, false, env);
        }
        v
    }

    /// `lower:upper:step`, its parts evaluated in that order.
    fn eval_slice(&mut self, parts: [&Option<Expr>; 3], env: &mut Env) -> Value {
        let parts = parts.map(|part| match part {
            Some(x) => self.eval(x, env),
            None => Value::NoneVal,
        });
        match self.language {
            // A Rust range is a value: `x.i((.., 0..2))` passes it to an op.
            Language::Rust => Value::Slice(Box::new(parts)),
            Language::Python => Value::Unknown(UnknownReason::Unmodelled),
        }
    }

    /// `body if test else orelse` (at `span`): the branch the condition decides, else the
    /// join of both, tagged by the branch where the condition can be named.
    fn eval_if_exp(
        &mut self,
        span: Span,
        test: &Expr,
        body: &Expr,
        orelse: &Expr,
        env: &mut Env,
    ) -> Value {
        match self.eval_condition(test, env) {
            Some(true) => {
                self.hand_name_hint(span, body.span);
                self.eval(body, env)
            }
            Some(false) => {
                self.hand_name_hint(span, orelse.span);
                self.eval(orelse, env)
            }
            None => {
                let condition = self.nameable_condition(test, env);
                let a = self.eval(body, env);
                let b = self.eval(orelse, env);
                let tagged = condition.and_then(|c| {
                    let [yes, no] = self.branch_names(&c);
                    join_tagged(&a, &b, &yes, &no)
                });
                tagged
                    .or_else(|| self.same_layer_constructor(&a, &b))
                    .unwrap_or_else(|| join(&a, &b))
            }
        }
    }

    /// `if bias { linear } else { linear_no_bias }`: two constructors the tables list under
    /// one module build the same layer (its arguments bound alike), so either stands for
    /// both.
    fn same_layer_constructor(&self, a: &Value, b: &Value) -> Option<Value> {
        let (Value::Import(x), Value::Import(y)) = (a, b) else {
            return None;
        };
        let (x_spec, y_spec) = (self.tables.module(x)?, self.tables.module(y)?);
        std::ptr::eq(x_spec, y_spec).then(|| a.clone())
    }

    /// `left op right` of a comparison or boolean operator (at `span`): on a tensor an
    /// element-wise op, otherwise the truth where the analysis knows it.
    fn eval_compare(
        &mut self,
        span: Span,
        left: &Expr,
        op: CmpOp,
        right: &Expr,
        env: &mut Env,
    ) -> Value {
        let l = self.eval(left, env);
        let r = if op == CmpOp::Not {
            Value::Unknown(UnknownReason::Unmodelled)
        } else {
            self.eval(right, env)
        };
        if (l.is_tensor() || r.is_tensor())
            && !matches!(
                op,
                CmpOp::Is | CmpOp::IsNot | CmpOp::And | CmpOp::Or | CmpOp::Not
            )
        {
            // `mask == 0`: an element-wise op producing a bool tensor.
            return self.binop(BinOp::Other, l, r, span, env);
        }
        if matches!(op, CmpOp::And | CmpOp::Or) {
            let truths = [(left, truth_of(&l)), (right, truth_of(&r))];
            let noted = truths.map(|(e, t)| (e as *const Expr, t));
            self.operand_truths.extend(noted);
        }
        Value::Bool(self.compare_values(op, &l, &r))
    }

    /// The truth of a condition when the analysis knows it (`n_rep == 1` with `n_rep`
    /// known, `mask is None` with `mask` a `None` argument), evaluating it once.
    pub fn eval_condition(&mut self, test: &Expr, env: &mut Env) -> Option<bool> {
        let value = self.eval(test, env);
        truth_of(&value)
    }

    /// `a op b` on values whose truth the analysis can decide.
    fn compare_values(&self, op: CmpOp, l: &Value, r: &Value) -> Option<bool> {
        let truth = |v: &Value| -> Option<bool> {
            match v {
                Value::Bool(b) => *b,
                Value::NoneVal => Some(false),
                Value::Int(d) => d.as_lit().map(|v| v != 0),
                _ => None,
            }
        };
        // Rust's `Option` is erased (`Some(x)` is `x`), so a Rust value other than `None`
        // may still be one: a parameter `rope: Option<Rope>` holds a `Rope` to the analysis.
        let erased_option = self.language == Language::Rust;
        let is_none = |v: &Value| -> Option<bool> {
            match v {
                Value::NoneVal => Some(true),
                _ if erased_option => None,
                Value::Tensor(_)
                | Value::Int(_)
                | Value::Float
                | Value::Str(_)
                | Value::Tuple(_)
                | Value::Bool(Some(_))
                | Value::Instance(_)
                | Value::NnModule(_)
                | Value::Function(..)
                | Value::Class(_) => Some(false),
                _ => None,
            }
        };
        match op {
            CmpOp::Not => truth(l).map(|b| !b),
            CmpOp::And => match (truth(l), truth(r)) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            CmpOp::Or => match (truth(l), truth(r)) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            CmpOp::Is | CmpOp::IsNot => {
                let same = match (l, r) {
                    (_, Value::NoneVal) => is_none(l),
                    (Value::NoneVal, _) => is_none(r),
                    (Value::Bool(Some(a)), Value::Bool(Some(b))) => Some(a == b),
                    _ => None,
                }?;
                Some(if op == CmpOp::Is { same } else { !same })
            }
            CmpOp::Eq | CmpOp::NotEq | CmpOp::Lt | CmpOp::LtE | CmpOp::Gt | CmpOp::GtE => {
                let (Value::Int(a), Value::Int(b)) =
                    (self.as_size(l.clone()), self.as_size(r.clone()))
                else {
                    return match (op, l, r) {
                        (CmpOp::Eq, Value::Str(a), Value::Str(b)) => Some(a == b),
                        (CmpOp::NotEq, Value::Str(a), Value::Str(b)) => Some(a != b),
                        (CmpOp::Eq, Value::Bool(Some(a)), Value::Bool(Some(b))) => Some(a == b),
                        _ => None,
                    };
                };
                let d = Decider::new(&self.frame.facts.assumptions);
                let t = match op {
                    CmpOp::Eq => d.eq(&a, &b),
                    CmpOp::NotEq => d.ne(&a, &b),
                    CmpOp::Lt => d.lt(&a, &b),
                    CmpOp::LtE => d.le(&a, &b),
                    CmpOp::Gt => d.lt(&b, &a),
                    _ => d.le(&b, &a),
                };
                // A decision that needed an assumption (`n ≥ 2`) is not a fact about this
                // program: both branches stay possible.
                if !d.used().is_empty() {
                    return None;
                }
                match t {
                    Tri::Yes => Some(true),
                    Tri::No => Some(false),
                    Tri::Unknown => None,
                }
            }
            CmpOp::In | CmpOp::NotIn => None,
        }
    }

    /// How a finding names the branch of `if test:` it happened on, when the test reads no
    /// tensor and calls nothing (`use_cache`, `self.training`, `mask is None`): only such a
    /// test can be taken either way whatever the tensors are.
    pub fn nameable_condition(&self, test: &Expr, env: &Env) -> Option<Arc<str>> {
        // Names that hold tensors make the test depend on them.
        fn reads_tensor(it: &Interpreter, e: &Expr, env: &Env) -> bool {
            match &e.kind {
                ExprKind::Name(n) => it.lookup(n, env).is_tensor(),
                ExprKind::Attr { value, .. } => reads_tensor(it, value, env),
                ExprKind::Compare { operands, .. } => {
                    operands.iter().any(|o| reads_tensor(it, o, env))
                }
                _ => false,
            }
        }
        let text = self.condition_text(test)?;
        (self.option_test(test) || !reads_tensor(self, test, env)).then_some(text)
    }

    /// Rust's `x is None` (a `match`/`if let` on an `Option`, see the Rust frontend): it
    /// asks whether there is a value, not about the tensor it holds.
    fn option_test(&self, test: &Expr) -> bool {
        self.language == Language::Rust
            && matches!(&test.kind, ExprKind::Compare { operands, .. } if matches!(operands[1].kind, ExprKind::None))
    }

    /// The test as a finding spells it (`` `use_cache` ``), when it is plain (names,
    /// attributes, literals and comparisons of them) and short; decided once per test, as
    /// an `if` asks for it several times on every path through it.
    fn condition_text(&self, test: &Expr) -> Option<Arc<str>> {
        fn plain(e: &Expr) -> bool {
            match &e.kind {
                ExprKind::Name(_)
                | ExprKind::Int(_)
                | ExprKind::Str(_)
                | ExprKind::None
                | ExprKind::Bool(_)
                | ExprKind::Float(_) => true,
                ExprKind::Attr { value, .. } => plain(value),
                ExprKind::Compare { op, operands } => {
                    let [left, right] = &**operands;
                    plain(left) && (*op == CmpOp::Not || plain(right))
                }
                _ => false,
            }
        }
        self.condition_texts
            .borrow_mut()
            .entry(test.span)
            .or_insert_with(|| {
                if !plain(test) {
                    return None;
                }
                let text: String = self
                    .spelled_test(test)
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                (!text.is_empty() && text.len() <= 60).then(|| Arc::from(format!("`{text}`")))
            })
            .clone()
    }

    /// The source text of a test; for Rust's `match self.cache { None => … }` (lowered to
    /// `self.cache is None` with no such text in the file), the field's text and the test.
    fn spelled_test(&self, test: &Expr) -> String {
        match &test.kind {
            ExprKind::Compare { operands, op } if self.option_test(test) => {
                let not = if *op == CmpOp::IsNot { "not " } else { "" };
                format!("{} is {not}None", self.text(operands[0].span))
            }
            _ => self.text(test.span).to_string(),
        }
    }

    fn eval_sequence(&mut self, items: &[Expr], env: &mut Env) -> Value {
        let mut out = Vec::with_capacity(items.len());
        for it in items {
            if let ExprKind::Starred(inner) = &it.kind {
                match self.eval(inner, env) {
                    Value::Tuple(vs) => out.extend(vs),
                    _ => return Value::Unknown(UnknownReason::Unmodelled),
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
        bounded_tuple(out)
    }

    pub fn eval_attr(&mut self, value: &Expr, attr: &str, span: Span, env: &mut Env) -> Value {
        let base = self.eval(value, env);
        match base {
            Value::Import(path) => match candle_minus_dim(self.language, &path, attr) {
                Some(dim) => Value::int(dim),
                None if path == "math" && matches!(attr, "pi" | "e" | "tau" | "inf" | "nan") => {
                    Value::Float
                }
                None => Value::Import(dotted(&path, attr).into()),
            },
            Value::Instance(obj) => {
                let own = self
                    .frame
                    .this
                    .as_ref()
                    .is_some_and(|this| Arc::ptr_eq(this, &obj));
                if own {
                    if let Some(v) = env.self_attrs.get(attr) {
                        return v.clone();
                    }
                }
                if let Some(v) = obj.attrs.get(attr) {
                    return v.clone();
                }
                if let Some((f, _)) = obj.class.method(attr) {
                    return Value::Function(f, Some(obj.clone()));
                }
                if let Some(e) = obj.class.class_attr(attr) {
                    if let Some(v) = self.class_constant(&e.clone()) {
                        return v;
                    }
                }
                let receiver = match (&obj.named, own) {
                    (Some(param), _) => param.clone(),
                    (None, true) => "self".to_string(),
                    (None, false) => self.text(value.span).to_string(),
                };
                Value::Named {
                    name: dotted(&receiver, attr).into(),
                    param: None,
                }
            }
            Value::Named { name, param } => {
                if param.is_some() && self.tables.attribute(attr).is_some() {
                    let t = param_as_tensor(&name, param, value.span, self.frame.context.clone());
                    return self.tensor_property(t, attr, span, env);
                }
                Value::Named {
                    name: dotted(&name, attr).into(),
                    param: None,
                }
            }
            t @ Value::Tensor(_) => self.tensor_property(t, attr, span, env),
            Value::Unknown(why) => Value::Unknown(why),
            _ => Value::Unknown(UnknownReason::Unmodelled),
        }
    }

    fn subscript(&mut self, e: &Expr, base: Value, index: &[Expr], env: &mut Env) -> Value {
        match base {
            Value::Tuple(items) if holds_packed(&items) => self.subscript_packed(items, index, env),
            Value::Tuple(items) => {
                if let [ix] = index {
                    if let ExprKind::Slice(bounds) = &ix.kind {
                        let ir::SliceBounds { lower, upper, step } = &**bounds;
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
                Value::Unknown(UnknownReason::Unmodelled)
            }
            // `value_list[level]`: the item of a list of unknown length at a loop's index
            // (one symbol for every iteration, as the item stands for every item); any other
            // index (`pieces[0]`, `pieces[n - 1]`) would make two items one.
            Value::Repeated(item) => {
                let at = match index {
                    [ix] if !matches!(ix.kind, ExprKind::Slice(_)) => self.eval(ix, env),
                    _ => {
                        for ix in index {
                            self.eval(ix, env);
                        }
                        Value::Unknown(UnknownReason::Unmodelled)
                    }
                };
                let loop_index = |i: &Dim| {
                    crate::layout::Size::index_bound(i, &self.frame.facts.assumptions).is_some()
                };
                match at {
                    Value::Int(i) if loop_index(&i) => (*item).clone(),
                    _ => Value::Unknown(UnknownReason::Unmodelled),
                }
            }
            // `window_size[0]` of a parameter that may be a tuple of sizes or a tensor: one
            // element, just as unknown — a size named as written, or a contiguous tensor if it
            // is used as one (an item of a contiguous tensor is contiguous).
            Value::Named {
                name,
                param: Some(_),
            } if matches!(index, [ix] if matches!(ix.kind, ExprKind::Int(_))) => Value::Named {
                name: format!("{name}[{}]", self.text(index[0].span)).into(),
                param: Some(self.fresh_origin()),
            },
            v @ (Value::Tensor(_) | Value::Named { param: Some(_), .. }) => {
                self.tensor_getitem(e, v, index, env)
            }
            Value::Named { name, .. } => {
                // `self.window_size[0]`: one entry of a tuple the analysis does not know, a
                // size named as written.
                for ix in index {
                    self.eval(ix, env);
                }
                match index {
                    [ix] if matches!(ix.kind, ExprKind::Int(_)) => Value::Named {
                        name: format!("{name}[{}]", self.text(ix.span)).into(),
                        param: None,
                    },
                    _ => Value::Unknown(UnknownReason::Unmodelled),
                }
            }
            _ => {
                for ix in index {
                    self.eval(ix, env);
                }
                Value::Unknown(UnknownReason::Unmodelled)
            }
        }
    }

    pub fn binop(&mut self, op: BinOp, l: Value, r: Value, span: Span, env: &mut Env) -> Value {
        if l.is_tensor() || r.is_tensor() {
            return self.tensor_binop(op, l, r, span, env);
        }
        // A parameter next to a float may be a tensor (`x - 0.5`); next to a size it is taken
        // for a size (`n // 2`), as before.
        let floaty = |v: &Value| matches!(v, Value::Float | Value::Unknown(_));
        let (l, r) = match (floaty(&l), floaty(&r)) {
            (false, false) => (self.as_size(l), self.as_size(r)),
            _ => (self.as_number(l), self.as_number(r)),
        };
        match (op, l, r) {
            (BinOp::Add, Value::Tuple(a), Value::Tuple(b)) => {
                bounded_tuple(a.into_iter().chain(b).collect())
            }
            (BinOp::Mul, Value::Tuple(a), Value::Int(n))
            | (BinOp::Mul, Value::Int(n), Value::Tuple(a)) => match n.as_lit() {
                Some(k) if (0..=64).contains(&k) => {
                    bounded_tuple((0..k).flat_map(|_| a.iter().cloned()).collect())
                }
                _ => Value::Unknown(UnknownReason::Unmodelled),
            },
            (_, Value::Int(a), Value::Int(b)) => match op {
                BinOp::Add => Value::Int(a.add(&b)),
                BinOp::Sub => Value::Int(a.sub(&b)),
                BinOp::Mul => Value::Int(a.mul(&b)),
                BinOp::FloorDiv => self.size_quotient(&a, &b, span, env),
                BinOp::Mod => Value::Int(a.modulo(&b)),
                BinOp::Pow => match (a.as_lit(), b.as_lit()) {
                    (Some(x), Some(y)) if (0..63).contains(&y) => x
                        .checked_pow(y as u32)
                        .map(Value::int)
                        .unwrap_or(Value::Unknown(UnknownReason::Unmodelled)),
                    // `embed_dim * scale_factor**2`: a size to a literal power is a product of
                    // sizes (exponents up to 4 only, to keep the polynomial small).
                    (_, Some(y)) if (0..=4).contains(&y) => {
                        Value::Int((0..y).fold(Dim::lit(1), |p, _| p.mul(&a)))
                    }
                    _ => Value::Unknown(UnknownReason::Unmodelled),
                },
                // True division of sizes yields a float in Python.
                BinOp::Div => Value::Float,
                _ => Value::Unknown(UnknownReason::Unmodelled),
            },
            // A float with a number is a float; with anything else (a parameter or a value of
            // unknown type, which may be a tensor) the result is unknown.
            (_, Value::Float | Value::Int(_), Value::Float) | (_, Value::Float, Value::Int(_)) => {
                Value::Float
            }
            _ => Value::Unknown(UnknownReason::Unmodelled),
        }
    }

    /// `a // b` on sizes: the exact quotient, assuming `b` divides `a` (recorded).
    pub fn size_quotient(&mut self, a: &Dim, b: &Dim, span: Span, env: &mut Env) -> Value {
        if let Some(q) = self.literal_quotient(a, b, span, env) {
            return Value::Int(q);
        }
        let (q, assumption) = a.floordiv_with_assumption(b);
        if let Some(asm) = assumption {
            self.frame.facts.add_divisibility(asm);
            if a.split_symbol_factor().is_some() {
                self.frame.facts.add_quotient((a.clone(), b.clone()));
            } else if a.has_opaque() {
                // `(H + pad_h) // window_size` with `pad_h = (-H) % window_size`: nothing can
                // be compared with that quotient, yet it is one exact size the code names,
                // ≥ 2 like `H // window_size`.
                return Value::Int(self.mint_whole_value(span));
            }
        }
        Value::Int(q)
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
        let hint = match &self.frame.name_hint {
            Some((name, s)) if *s == span => Some(name.clone()),
            _ => None,
        };
        if hint.is_some() {
            self.frame.name_hint = None;
        }
        let name = hint.unwrap_or_else(|| format!("({n}/{k})"));
        let quotient = self.mint(&name);
        self.learn_equal(n, &k.mul(&quotient), env);
        self.frame.facts.add_divisibility(Assumption::Divides {
            divisor: k.to_string(),
            dividend: n.to_string(),
        });
        Some(quotient)
    }

    /// `[f(t) for t in items]` and `map(f, items)`: over a tuple of known items, the tuple of
    /// `f` run on each with the target bound to it (and unbound after: it is the
    /// comprehension's own), an item that is a number or a string a path of its own as a
    /// loop's iteration; over anything else, `f` once on an unknown item (its events are
    /// unknown) and an unknown result.
    pub fn for_each_item(
        &mut self,
        target: &crate::ir::Target,
        items: Value,
        env: &mut Env,
        mut f: impl FnMut(&mut Self, &mut Env) -> Value,
    ) -> Value {
        // The target is the comprehension's own: bound in `env` for the body, then the
        // enclosing bindings of its names come back (cloning `env` per item cost
        // quadratic time on nested tuples).
        let Some(names) = target_names(target) else {
            return Value::Unknown(UnknownReason::Unmodelled);
        };
        let saved: Vec<(Arc<str>, Option<Value>)> = names
            .into_iter()
            .map(|n| {
                let old = env.vars.get(n.as_str()).cloned();
                (Arc::from(n), old)
            })
            .collect();
        let result = self.each_item(target, items, env, &mut f);
        for (name, old) in saved {
            match old {
                Some(v) => {
                    env.vars.insert(name, v);
                }
                None => {
                    env.vars.remove(&name);
                }
            }
        }
        result
    }

    fn each_item(
        &mut self,
        target: &crate::ir::Target,
        items: Value,
        env: &mut Env,
        f: &mut impl FnMut(&mut Self, &mut Env) -> Value,
    ) -> Value {
        let unknown = Value::Unknown(UnknownReason::Unmodelled);
        let items = self.iterated(items, target.span(), env);
        let width = match &items {
            Value::Tuple(items) => self.comprehension_items.saturating_mul(items.len()),
            _ => usize::MAX,
        };
        let items = match items {
            Value::Tuple(items)
                if !holds_packed(&items)
                    && items.len() <= super::MAX_UNROLL
                    && width <= super::MAX_COMPREHENSION_ITEMS =>
            {
                items
            }
            // Items the analysis does not list (`range(depth)`): one item of unknown value
            // stands for each; a list of layers built so is any number of that layer.
            _ => {
                self.assign(target, unknown.clone(), env);
                let item = f(self, env);
                return repeated_items([&Value::Tuple(vec![item])]).unwrap_or(unknown);
            }
        };
        let outer = self.frame.path.clone();
        let count = items.len();
        let enclosing = std::mem::replace(&mut self.comprehension_items, width);
        let mut values = Vec::with_capacity(count);
        for (i, item) in items.into_iter().enumerate() {
            // Each item costs fuel: nested comprehensions multiply their items.
            if !self.burn() {
                values.clear();
                break;
            }
            self.frame.path =
                super::stmt::iteration_path(outer.as_deref(), target, &item, i, count);
            // An item the path cannot name (a tensor) is told apart by its position: its
            // calls' outcomes are then one path each, and what holds for one item is
            // reported with it ("`t` is item 1 of 3"), even when another item's is unknown.
            let unnamed = count > 1 && self.frame.path == outer;
            let mark = env.decisions.len();
            if unnamed {
                env.decide(item_decision(target, i, count));
            }
            self.assign(target, item, env);
            values.push(f(self, env));
            env.decisions.truncate(mark);
        }
        self.comprehension_items = enclosing;
        self.frame.path = outer;
        if values.len() == count {
            Value::Tuple(values)
        } else {
            unknown
        }
    }

    /// `lambda params: body`, as assigned to a name or passed on: run when called in this
    /// frame, or in any frame of this module when it reads none of this frame's variables
    /// (`call::call_lambda`).
    pub(super) fn lambda_value(&self, params: &[ir::Name], body: &Expr, env: &Env) -> Value {
        let own = |n: &str| params.iter().any(|p| p.as_str() == n);
        let closed = reads_only(body, &|n| own(n) || (n != "self" && env.get(n).is_none()));
        let captured = match closed {
            true => None,
            false => self.lambda_captures(body, &own, env),
        };
        Value::Lambda(Arc::new(super::super::value::LambdaVal {
            params: params.iter().map(|p| p.to_string()).collect(),
            body: body.clone(),
            frame: self.frame.id,
            closed,
            module: self.current_module,
            captured,
        }))
    }

    /// The values of the variables of the running function that a lambda's body reads,
    /// when each is bound once in that function and not in a loop (a parameter never
    /// rebound, or one assignment) and already bound here: Python's closure sees that value
    /// wherever the lambda is called. `None` when the body reads `self` (its attributes may
    /// change) or another variable.
    fn lambda_captures(
        &self,
        body: &Expr,
        own: &dyn Fn(&str) -> bool,
        env: &Env,
    ) -> Option<Arc<[(String, Value)]>> {
        let function = self.frame.body_of.as_ref()?;
        let bound = super::super::rank::binding_counts(function);
        let read = std::cell::RefCell::new(Vec::new());
        let known = reads_only(body, &|n| {
            if !own(n) && bound.contains_key(n) {
                read.borrow_mut().push(n.to_string());
            }
            true
        });
        let mut read = read.into_inner();
        read.sort();
        read.dedup();
        if !known || read.is_empty() || read.iter().any(|n| n == "self") {
            return None;
        }
        read.into_iter()
            .map(|n| {
                let value = env.get(&n).filter(|_| bound.get(n.as_str()) == Some(&1))?;
                Some((n, value.clone()))
            })
            .collect::<Option<Vec<_>>>()
            .map(Arc::from)
    }

    /// An operand of arithmetic: a name of unknown type that is not a parameter
    /// (`config.n_head`, `self.dim`) is a size, the symbol of that name; a parameter is a size
    /// only next to another size (it may be a tensor: `x * 0.5`).
    fn as_number(&self, v: Value) -> Value {
        match v {
            Value::Named { name, param: None } => Value::Int(Dim::sym(&name)),
            other => other,
        }
    }

    /// Interpret a value as a size when it is used in integer arithmetic: a name of unknown
    /// type (`config.n_head`, an `int` parameter) becomes the symbol of that name.
    pub fn as_size(&self, v: Value) -> Value {
        match v {
            Value::Named { name, .. } => Value::Int(Dim::sym(&name)),
            other => other,
        }
    }

    /// `shape[-1]`, `shape[:-1]`, `shape[-2:]` of a tuple holding packed leading sizes
    /// (`analysis::prefix`): only positions counted from the end, past the packed ones,
    /// are known.
    fn subscript_packed(&mut self, items: Vec<Value>, index: &[Expr], env: &mut Env) -> Value {
        let unknown = Value::Unknown(UnknownReason::UnknownRank);
        let n = items.len() as i64;
        let last_packed = items
            .iter()
            .rposition(|v| matches!(v, Value::PackedSizes(_)))
            .unwrap_or(0) as i64;
        // A literal counted from the end that lands past the packed sizes.
        let from_end = |v: &Value| match v {
            Value::Int(d) => d.as_lit().filter(|&i| i < 0 && n + i > last_packed),
            _ => None,
        };
        let [ix] = index else { return unknown };
        match &ix.kind {
            ExprKind::Slice(bounds) if bounds.step.is_none() => {
                let ir::SliceBounds { lower, upper, .. } = &**bounds;
                let mut bound = |b: &Option<Expr>| match b {
                    None => Some(None),
                    Some(x) => {
                        let v = self.eval(x, env);
                        from_end(&v).map(Some)
                    }
                };
                let (Some(lo), Some(hi)) = (bound(lower), bound(upper)) else {
                    return unknown;
                };
                let (a, b) = (lo.map_or(0, |i| n + i), hi.map_or(n, |i| n + i));
                Value::Tuple(items[a as usize..b.max(a) as usize].to_vec())
            }
            _ => {
                let v = self.eval(ix, env);
                match from_end(&v) {
                    Some(i) => items[(n + i) as usize].clone(),
                    None => unknown,
                }
            }
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
        if let ExprKind::Slice(bounds) = &ix.kind {
            let ir::SliceBounds {
                lower: None,
                upper: Some(upper),
                step: None,
            } = &**bounds
            else {
                return None;
            };
            return match upper.kind {
                ExprKind::Int(k) if k < 0 => self.packed_leading_sizes(e, value, -k, env),
                _ => None,
            };
        }
        if !matches!(ix.kind, ExprKind::Int(_)) {
            return None;
        }
        let recv = size_query_receiver(value)?;
        let ExprKind::Name(var) = &recv.kind else {
            return None;
        };
        if !self.has_unknown_shape(&self.lookup(var, env), env) {
            return None;
        }
        Some(Value::Int(self.mint_for(e.span)))
    }

    /// `input_shape = x.shape[:-k]` of a tensor known only to be contiguous, whose rank
    /// nothing fixes: `x` gets the layout of its leading dims packed into one size
    /// (`*input_shape`, `analysis::prefix`) followed by `k` named sizes, and the value is
    /// the tuple of the packed sizes.
    fn packed_leading_sizes(
        &mut self,
        e: &Expr,
        value: &Expr,
        k: i64,
        env: &mut Env,
    ) -> Option<Value> {
        // Only in the function's own analysis. In a caller's context the packed result
        // flows back into the caller, whose analysis then decides less than from an unknown
        // result in one measured case (a quotient of quotients the decider leaves open,
        // LiLT's shrunk layout heads); a caller's own tensors are mostly known there anyway.
        if self.language != Language::Python || k > 8 || self.frame.context.is_some() {
            return None;
        }
        let recv = size_query_receiver(value)?;
        let ExprKind::Name(var) = &recv.kind else {
            return None;
        };
        let v = self.lookup(var, env);
        if !self.has_unknown_shape(&v, env) {
            return None;
        }
        let origin = match &v {
            Value::Named { param: Some(o), .. } => *o,
            Value::Tensor(TensorVal::Alts(a)) => a.first()?.origin?,
            _ => return None,
        };
        let name = match self.frame.name_hint.take() {
            Some((n, _)) => n,
            None => self.span_name(e.span),
        };
        let packed = self.mint(&prefix::packed_name(&name));
        let mut shape = vec![packed.clone()];
        for i in (1..=k).rev() {
            shape.push(self.mint(&format!("{var}.shape[-{i}]")));
        }
        env.shapes
            .insert(origin, crate::layout::Layout::contiguous(shape));
        Some(Value::Tuple(vec![Value::PackedSizes(packed)]))
    }

    /// Is `v` a tensor known only to be contiguous (a parameter, or a single alternative
    /// without a layout whose origin has not been given sizes)?
    pub fn has_unknown_shape(&self, v: &Value, env: &Env) -> bool {
        match v {
            Value::Named { param: Some(o), .. } => !env.shapes.contains_key(o),
            Value::Tensor(TensorVal::Alts(a)) => {
                a.len() == 1 && resolve_alt(&env.shapes, &a[0]).layout.is_none()
            }
            _ => false,
        }
    }

    /// `h = (a if tracing else b)` with the test decided: `b` is the whole assigned value,
    /// so a size it mints is named `h`.
    fn hand_name_hint(&mut self, whole: Span, part: Span) {
        let Some((name, s)) = self.frame.name_hint.clone() else {
            return;
        };
        let only_parens = |from: u32, to: u32| {
            from <= to
                && self
                    .text(Span::new(from as usize, to as usize))
                    .chars()
                    .all(|c| c == '(' || c == ')' || c.is_whitespace())
        };
        if s.start <= whole.start
            && whole.end <= s.end
            && only_parens(s.start, whole.start)
            && only_parens(whole.end, s.end)
        {
            self.frame.name_hint = Some((name, part));
        }
    }

    /// A fresh size for the expression at `span`, named after the assigned variable only
    /// when the expression is the whole assigned value (`h = int(n ** 0.5)`, not
    /// `h = int(n ** 0.5) * 2`), else after its text.
    pub fn mint_whole_value(&mut self, span: Span) -> Dim {
        if !matches!(&self.frame.name_hint, Some((_, s)) if *s == span) {
            self.frame.name_hint = None;
        }
        self.mint_for(span)
    }

    /// A fresh size for the expression at `span`: named after the assigned variable when
    /// there is one, else after the expression's text.
    pub fn mint_for(&mut self, span: Span) -> Dim {
        let name = match self.frame.name_hint.take() {
            Some((n, _)) => n,
            None => self.span_name(span),
        };
        self.mint(&name)
    }

    /// The expression at `span` as a size's name: its text without spaces, at most 40
    /// characters.
    pub fn span_name(&self, span: Span) -> String {
        self.text(span)
            .chars()
            .filter(|c| !c.is_whitespace())
            .take(40)
            .collect()
    }

    /// The items a loop, comprehension or `map` takes from `v`: a tensor whose dim 0 has a
    /// literal size of at most [`super::MAX_UNROLL`] gives `v[0]`, `v[1]`, … (`map(f,
    /// self.mem_kv)` of a `(2, h, n, d)` parameter); any other value is iterated as it is.
    pub fn iterated(&mut self, v: Value, span: Span, env: &mut Env) -> Value {
        if let Value::Slice(parts) = &v {
            // Rust's `for i in 0..t`: the range's integers, as Python's `range(0, t)`.
            if let [start, stop, Value::NoneVal] = &**parts {
                let start = match start {
                    Value::NoneVal => Value::int(0),
                    other => other.clone(),
                };
                return super::call::literal_range(&[start, stop.clone()]);
            }
        }
        let Value::Tensor(TensorVal::Alts(alts)) = &v else {
            return v;
        };
        let leading = |a: &super::super::value::TensorAlt| {
            a.layout.as_ref().and_then(|l| l.shape.first()?.as_lit())
        };
        let Some(n) = alts.first().and_then(leading) else {
            return v;
        };
        let Some(spec) = self.tables.method("__getitem__") else {
            return v;
        };
        if !(1..=super::MAX_UNROLL as i64).contains(&n)
            || alts.iter().any(|a| leading(a) != Some(n))
        {
            return v;
        }
        let items = (0..n)
            .map(|i| {
                self.with_apply_ctx(env, |ctx| {
                    super::super::apply::apply_op(
                        ctx,
                        spec,
                        Some(v.clone()),
                        vec![Value::int(i)],
                        Vec::new(),
                        span,
                        span,
                    )
                })
            })
            .collect();
        Value::Tuple(items)
    }
}

impl Interpreter<'_> {
    /// A class-level value (`rnn_class = nn.GRU`, `default_act = nn.SiLU()`), read where the
    /// class body runs, at module level: names, attribute paths, literals and tuples of them,
    /// and calls of library callables with such arguments; not calls of the analysed code.
    fn class_constant(&mut self, e: &Expr) -> Option<Value> {
        if is_constant_expr(e) {
            return Some(self.eval(e, &mut Env::default()));
        }
        let (func, args) = e.kind.as_call()?;
        let library = is_constant_expr(func)
            && args.iter().all(|a| is_constant_expr(a.value()))
            && matches!(self.eval(func, &mut Env::default()), Value::Import(_));
        library.then(|| self.eval(e, &mut Env::default()))
    }
}

/// A class-level value the analysis reads without running anything: names, attribute
/// paths, literals and tuples of them (`nn.GRU`, `(0, 2, 3, 1)`), not calls.
fn is_constant_expr(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Name(_)
        | ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Bool(_)
        | ExprKind::None => true,
        ExprKind::Attr { value, .. } => is_constant_expr(value),
        ExprKind::Tuple(items) | ExprKind::List(items) => items.iter().all(is_constant_expr),
        _ => false,
    }
}

/// The names a comprehension's target binds (`t`, `(x, y)`, `*rest`); `None` for a target
/// that is not names only (`for self.x in …`).
fn target_names(target: &crate::ir::Target) -> Option<Vec<String>> {
    use crate::ir::Target;
    match target {
        Target::Name(n, _) => Some(vec![n.to_string()]),
        Target::Starred(inner, _) => target_names(inner),
        Target::Tuple(items, _) => {
            let mut names = Vec::new();
            for t in items {
                names.extend(target_names(t)?);
            }
            Some(names)
        }
        _ => None,
    }
}

/// candle's negative dims: `D::Minus1` / `D::Minus2` (the enum `D`, under any path) are
/// `-1` / `-2`; `D::Minus(k)` is a call, see `call::eval_call`.
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
        return Value::Unknown(UnknownReason::Unmodelled);
    };
    if step != 1 {
        return Value::Unknown(UnknownReason::Unmodelled);
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

/// How a path names the `i`th of `count` items a comprehension or `map` runs on.
fn item_decision(target: &crate::ir::Target, i: usize, count: usize) -> String {
    match target {
        crate::ir::Target::Name(n, _) if !n.starts_with('<') => {
            format!("`{n}` is item {} of {count}", i + 1)
        }
        _ => format!("the `map` runs on item {} of {count}", i + 1),
    }
}

/// A value's truth where the analysis knows it, as `if value:` reads it.
fn truth_of(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => *b,
        Value::NoneVal => Some(false),
        Value::Int(d) => d.as_lit().map(|v| v != 0),
        Value::Str(s) => Some(!s.is_empty()),
        // Packed leading sizes may be none at all (`x.shape[:-1]` of a 1-d `x`).
        Value::Tuple(items) if holds_packed(items) => None,
        Value::Tuple(items) => Some(!items.is_empty()),
        // A tensor's truth is its value; objects and functions are true.
        Value::Instance(_) | Value::Function(..) | Value::Class(_) | Value::NnModule(_) => {
            Some(true)
        }
        _ => None,
    }
}

/// Does `e` read only names that `allowed` accepts? No for any expression whose names this
/// does not look into (a nested lambda or comprehension binds names of its own).
fn reads_only(e: &Expr, allowed: &dyn Fn(&str) -> bool) -> bool {
    let all = |items: &[Expr]| items.iter().all(|i| reads_only(i, allowed));
    match &e.kind {
        ExprKind::Name(n) => allowed(n.as_str()),
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Bool(_)
        | ExprKind::None
        | ExprKind::Ellipsis => true,
        ExprKind::Attr { value, .. } | ExprKind::Starred(value) | ExprKind::Neg(value) => {
            reads_only(value, allowed)
        }
        ExprKind::Labelled(labelled) => reads_only(&labelled.value, allowed),
        ExprKind::Tuple(items) | ExprKind::List(items) => all(items),
        ExprKind::Call(call) => {
            reads_only(call.func(), allowed)
                && (call.args().iter()).all(|a| reads_only(a.value(), allowed))
        }
        ExprKind::Subscript(subscript) => {
            reads_only(subscript.value(), allowed) && all(subscript.index())
        }
        ExprKind::Slice(bounds) => [&bounds.lower, &bounds.upper, &bounds.step]
            .iter()
            .all(|p| p.as_ref().is_none_or(|x| reads_only(x, allowed))),
        ExprKind::BinOp { operands, .. } | ExprKind::Compare { operands, .. } => {
            operands.iter().all(|o| reads_only(o, allowed))
        }
        ExprKind::IfExp(parts) => parts.iter().all(|p| reads_only(p, allowed)),
        ExprKind::Comprehension(_) | ExprKind::Lambda(_) | ExprKind::Unknown => false,
    }
}
