//! Statements: assignments, control flow (joins, loops to a fixpoint, unrolled loops over
//! known tuples), `try`, `with`, asserts that teach equalities, definitions.

use std::sync::Arc;

use crate::ir::{self, Expr, ExprKind, Language, Stmt, Target};
use crate::layout::Dim;

use super::super::env::{join_envs_tagged, join_opt, same_env, Env};
use super::super::value::{join, Step, SymLayout, TensorVal, Value};
use super::{Interpreter, MAX_LOOP_ITERATIONS, MAX_UNROLL};

impl Interpreter<'_> {
    pub fn exec_block(&mut self, stmts: &[Stmt], mut env: Option<Env>) -> Option<Env> {
        for s in stmts {
            let e = env?;
            env = self.exec_stmt(s, e);
        }
        env
    }

    fn exec_stmt(&mut self, s: &Stmt, mut env: Env) -> Option<Env> {
        self.burn();
        match s {
            Stmt::Assign { targets, value, .. } => {
                if let Some(refined) = self.try_size_unpacking(targets, value, &mut env) {
                    return Some(refined);
                }
                self.frame.name_hint = match targets.as_slice() {
                    [Target::Name(n, _)] => Some((n.clone(), value.span)),
                    [Target::Attr {
                        value: obj, attr, ..
                    }] if matches!(&obj.kind, ExprKind::Name(s) if s == "self") => {
                        Some((format!("self.{attr}"), value.span))
                    }
                    _ => None,
                };
                let v = self.eval(value, &mut env);
                self.frame.name_hint = None;
                for t in targets {
                    self.assign(t, v.clone(), &mut env);
                    self.note_item_write(t, None, &mut env);
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
                self.note_item_write(target, Some(*op), &mut env);
                let rhs = self.eval(value, &mut env);
                let result = self.binop(*op, cur.clone(), rhs, *span, &mut env);
                self.note_aug_write(target, *op, &cur, &mut env);
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
                let mark = self.events.len();
                self.eval(e, &mut env);
                self.note_discarded_write(e, mark);
                Some(env)
            }
            Stmt::Return { value, .. } => {
                let v = match value {
                    Some(e) => self.eval(e, &mut env),
                    None => Value::NoneVal,
                };
                // The caller has no sizes of this path's tensors of unknown shape.
                let v = super::super::apply::resolve_value(&env.shapes, v);
                // A constructor's own `return` (not one inside a function it calls) leaves
                // the object it built; `return Err(..)` builds none.
                let is_error = value.as_ref().is_some_and(|e| matches!(&e.kind,
                    ExprKind::Call { func, .. } if matches!(&func.kind, ExprKind::Name(n) if n == "Err")));
                if let Some(exits) = self.frame.constructor_exits.as_mut() {
                    if !is_error {
                        exits.push(env);
                        return None;
                    }
                }
                self.frame.returns = Some(match self.frame.returns.take() {
                    Some(r) => join(&r, &v),
                    None => v,
                });
                self.frame.exit_attrs = Some(match self.frame.exit_attrs.take() {
                    Some(a) => super::super::env::join_attrs(&a, &env.self_attrs),
                    None => env.self_attrs.clone(),
                });
                None
            }
            Stmt::If {
                test, body, orelse, ..
            } => {
                let decided = self.eval_condition(test, &mut env);
                match decided {
                    Some(true) => self.exec_block(body, Some(env)),
                    Some(false) => self.exec_block(orelse, Some(env)),
                    None => {
                        let condition = self.nameable_condition(test, &env);
                        let a = self.exec_block(body, Some(env.clone()));
                        let b = self.exec_block(orelse, Some(env));
                        match (a, b, condition) {
                            (Some(a), Some(b), Some(c)) => {
                                let yes = format!("{c} is true");
                                let no = format!("{c} is false");
                                Some(join_envs_tagged(&a, &b, &yes, &no))
                            }
                            (a, b, _) => join_opt(a, b),
                        }
                    }
                }
            }
            Stmt::Loop {
                target,
                iter,
                body,
                orelse,
                ..
            } => {
                let items = iter.as_ref().map(|it| self.eval(it, &mut env));
                if let (Some(t), Some(Value::Tuple(items))) = (target, &items) {
                    if !items.is_empty() && items.len() <= MAX_UNROLL && !has_jump(body) {
                        let after = self.exec_unrolled(t, items.clone(), body, env);
                        return self.exec_block(orelse, after);
                    }
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
                self.learn_from_test(test, &mut env);
                Some(env)
            }
            Stmt::Raise { .. } => None,
            Stmt::Import { module, alias, .. } => {
                let (name, path) = import_binding(module, alias.as_deref());
                env.set(&name, Value::Import(path));
                Some(env)
            }
            Stmt::FunctionDef(f) => {
                env.set(&f.name, Value::Function(f.clone(), None));
                Some(env)
            }
            Stmt::ClassDef(c) => {
                let v = match self.classes.get(&c.name) {
                    Some(def) if Arc::ptr_eq(&def.class, c) => Value::Class(def),
                    _ => Value::Unknown,
                };
                env.set(&c.name, v);
                Some(env)
            }
            // break/continue: the path leaves the straight-line flow; the loop join
            // covers the state (the loop body is re-entered from the joined state).
            Stmt::Jump { .. } => Some(env),
            Stmt::Other { .. } => Some(env),
        }
    }

    /// `assert a == b` (and `a == b and c == d`): the program continues only if it holds.
    fn learn_from_test(&mut self, test: &Expr, env: &mut Env) {
        let ExprKind::Compare { left, op, right } = &test.kind else {
            return;
        };
        match op {
            ir::CmpOp::Eq => {
                let l = self.eval(left, env);
                let r = self.eval(right, env);
                if let (Value::Int(a), Value::Int(b)) = (self.as_size(l), self.as_size(r)) {
                    self.learn_equal(&a, &b, env);
                }
            }
            ir::CmpOp::And => {
                self.learn_from_test(left, env);
                self.learn_from_test(right, env);
            }
            _ => {}
        }
    }

    /// A loop over a tuple of known elements, run once per element in order (each
    /// iteration is a path of its own, so a failure in one iteration is certain).
    fn exec_unrolled(
        &mut self,
        target: &Target,
        items: Vec<Value>,
        body: &[Stmt],
        env: Env,
    ) -> Option<Env> {
        let mut cur = Some(env);
        let outer = self.frame.path.clone();
        let count = items.len();
        for (i, item) in items.into_iter().enumerate() {
            let Some(mut entry) = cur else {
                break;
            };
            self.frame.path = iteration_path(outer.as_deref(), target, &item, i, count);
            self.assign(target, item, &mut entry);
            cur = self.exec_block(body, Some(entry));
        }
        self.frame.path = outer;
        cur
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
                Some(e) => super::super::env::join_envs(&head, e),
                None => head.clone(),
            };
            if same_env(&next, &head) || self.out_of_fuel() {
                return next;
            }
            self.drop_own_events_since(mark);
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
        let (origin, prev) = match &current {
            Value::Named {
                param: Some(origin),
                ..
            } => (Some(*origin), None),
            Value::Tensor(TensorVal::Alts(a)) if a.len() == 1 && a[0].layout.is_none() => {
                (a[0].origin, a[0].chain.clone())
            }
            _ => return None,
        };
        if origin.is_some_and(|o| env.shapes.contains_key(&o)) {
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
        let layout = SymLayout::contiguous(shape.clone());
        if let Some(o) = origin {
            env.shapes.insert(o, layout.clone());
        }
        let what = match &current {
            Value::Named { .. } => format!("parameter `{var}` (assumed contiguous)"),
            _ => format!("`{var}` (contiguous)"),
        };
        let step = Step {
            span: value.span,
            what,
            layout: Some(layout.clone()),
            prev,
        };
        let mut alt = super::super::value::TensorAlt::new(Some(layout), Some(Arc::new(step)));
        alt.origin = origin;
        env.set(var, Value::Tensor(TensorVal::Alts(vec![alt])));
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
}

/// How findings name one iteration of an unrolled loop: "`k` is 5 (iteration 2 of 2)".
fn iteration_path(
    outer: Option<&str>,
    target: &Target,
    item: &Value,
    index: usize,
    count: usize,
) -> Option<std::sync::Arc<str>> {
    let value = match item {
        Value::Int(d) => d.to_string(),
        Value::Str(s) => format!("{s:?}"),
        Value::Bool(Some(b)) => {
            if *b {
                "True".into()
            } else {
                "False".into()
            }
        }
        _ => return outer.map(std::sync::Arc::from),
    };
    let Target::Name(name, _) = target else {
        return outer.map(std::sync::Arc::from);
    };
    let this = format!("`{name}` is {value} (iteration {} of {count})", index + 1);
    Some(std::sync::Arc::from(match outer {
        Some(o) => format!("{o} and {this}"),
        None => this,
    }))
}

/// Does a loop body leave early (`break`/`continue`/`return`/`raise`)? Such a loop is not
/// unrolled: its iterations are not all certain to run.
fn has_jump(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Jump { .. } | Stmt::Return { .. } | Stmt::Raise { .. } => true,
        Stmt::If { body, orelse, .. } => has_jump(body) || has_jump(orelse),
        Stmt::With { body, .. } => has_jump(body),
        Stmt::Try {
            body,
            handlers,
            orelse,
            finalbody,
            ..
        } => {
            has_jump(body)
                || handlers.iter().any(|h| has_jump(h))
                || has_jump(orelse)
                || has_jump(finalbody)
        }
        // A nested loop's `break` leaves only that loop.
        Stmt::Loop { .. } => false,
        _ => false,
    })
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
pub(super) fn size_query_receiver(e: &Expr) -> Option<&Expr> {
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

/// Forget the values a non-converging loop keeps changing.
fn widen(head: &Env, next: &Env) -> Env {
    let mut out = next.clone();
    for (k, v) in next.vars.iter() {
        let stable = head
            .vars
            .get(k)
            .is_some_and(|h| super::super::value::same_value(h, v));
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
            .is_some_and(|h| super::super::value::same_value(h, v));
        if !stable {
            out.self_attrs.insert(k.clone(), Value::Unknown);
        }
    }
    out
}
