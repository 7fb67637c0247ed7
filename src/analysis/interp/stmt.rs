//! Statements: assignments, control flow, `try`, `with`, asserts that teach equalities,
//! definitions.
//!
//! # Paths
//! A block runs on a set of *paths* (environments). An `if` whose test the analysis cannot
//! decide but can name (`mask is None` is true) splits each path in two, each remembering
//! the branch it took; the paths stay apart afterwards, so the sizes and layouts on one path
//! stay consistent with each other (`x.size()` of the tensor on that path) — up to
//! [`MAX_PATHS`], beyond which they are joined. Paths whose states become the same are one
//! again. A test that cannot be named (it reads a tensor, calls something) does not split:
//! nothing is reported on such a path alone, so its branches join where they meet. Loops run to a fixpoint on the join of
//! their entry paths; a loop over a tuple of known elements is unrolled.

use std::sync::Arc;

use crate::ir::{self, CmpOp, Expr, ExprKind, Language, Stmt, Target};
use crate::layout::Dim;

use super::super::apply as applying;
use super::super::env::{join_all_envs, join_envs, join_opt, same_env, Env, SettledTest};
use super::super::prefix;
use super::super::value::{holds_packed, join, Step, SymLayout, TensorVal, UnknownReason, Value};
use super::{dotted, substitute_in_env, Interpreter, MAX_LOOP_ITERATIONS, MAX_UNROLL};

impl Interpreter<'_> {
    /// How this path already decided `test` (see [`Env::settled`]): itself, or through its
    /// parts (`a and b` is false once `a` was, true once both were).
    fn settled_truth(&self, test: &Expr, env: &Env) -> Option<bool> {
        if let ExprKind::Compare {
            op: op @ (ir::CmpOp::And | ir::CmpOp::Or),
            operands,
        } = &test.kind
        {
            let [left, right] = &**operands;
            let decisive = *op == ir::CmpOp::Or;
            let (l, r) = (
                self.settled_truth(left, env),
                self.settled_truth(right, env),
            );
            return match (l, r) {
                (Some(v), _) | (_, Some(v)) if v == decisive => Some(decisive),
                (Some(_), Some(_)) => Some(!decisive),
                _ => None,
            };
        }
        let c = self.nameable_condition(test, env)?;
        env.settled_truth(&c)
    }

    /// Remember on this path that `test` was `truth`, and what that says of its parts.
    fn settle(&self, test: &Expr, truth: bool, env: &mut Env) {
        if let ExprKind::Compare {
            op: op @ (ir::CmpOp::And | ir::CmpOp::Or),
            operands,
        } = &test.kind
        {
            let [left, right] = &**operands;
            // `a and b` true: both are; `a or b` false: neither is.
            if truth == (*op == ir::CmpOp::And) {
                self.settle(left, truth, env);
                self.settle(right, truth, env);
            }
            return;
        }
        let (Some(c), Some(names)) = (self.nameable_condition(test, env), settleable_names(test))
        else {
            return;
        };
        let at_least_two = self.size_shown_at_least_two(test, truth, env);
        env.settled.push(SettledTest {
            condition: c,
            truth,
            names,
            at_least_two,
        });
        self.pin_size_to_literal(test, truth, env);
    }

    /// On the branch where `size == literal` holds (`seq_len == 1` true, `seq_len != 1`
    /// false) the size is that literal: the path's values are rewritten with it, so its
    /// layouts are the ones that branch runs on and no finding there needs `seq_len ≥ 2`.
    /// Only this path's values: the other branch keeps the symbol.
    fn pin_size_to_literal(&self, test: &Expr, truth: bool, env: &mut Env) {
        let ExprKind::Compare { op, operands } = &test.kind else {
            return;
        };
        if !matches!((op, truth), (CmpOp::Eq, true) | (CmpOp::NotEq, false)) {
            return;
        }
        let [left, right] = &**operands;
        let (size, literal) = match (&left.kind, &right.kind) {
            (_, ExprKind::Int(v)) => (left, *v),
            (ExprKind::Int(v), _) => (right, *v),
            _ => return,
        };
        // Only a variable holding a size this analysis named (`seq_len` of `x.dims3()`): an
        // attribute's size also sizes the object's layers, which the path does not hold
        // (`self.kv_repeat != 1` would leave `k_proj` sized by `kv_repeat`).
        let symbol = match (&size.kind, self.size_named_by(size, env)) {
            (ExprKind::Name(_), Some(Value::Int(d))) => d.as_symbol().map(str::to_string),
            _ => None,
        };
        if let Some(symbol) = symbol.filter(|s| self.root.minted.contains(s)) {
            substitute_in_env(env, &symbol, &Dim::lit(literal));
        }
    }

    /// The value of a size a test names: a variable or an attribute of `self`.
    fn size_named_by<'e>(&'e self, size: &Expr, env: &'e Env) -> Option<&'e Value> {
        match &size.kind {
            ExprKind::Name(n) => env.get(n),
            ExprKind::Attr { value, attr } if matches!(&value.kind, ExprKind::Name(s) if s == "self") => {
                env.self_attrs
                    .get(attr.as_str())
                    .or_else(|| self.frame.this.as_ref()?.attrs.get(attr.as_str()))
            }
            _ => None,
        }
    }

    /// The size symbol a comparison with a literal shows to be ≥ 2 on its `truth` branch
    /// (`self.area > 1` true, `heads <= 1` false): a parameter defaulting to 1 is then no
    /// longer possibly 1 on this path.
    fn size_shown_at_least_two(&self, test: &Expr, truth: bool, env: &Env) -> Option<String> {
        let ExprKind::Compare { op, operands } = &test.kind else {
            return None;
        };
        let [size, bound] = &**operands;
        let ExprKind::Int(bound) = bound.kind else {
            return None;
        };
        let shown = match (op, truth) {
            (CmpOp::Gt, true) | (CmpOp::LtE, false) => bound >= 1,
            (CmpOp::GtE, true) | (CmpOp::Lt, false) => bound >= 2,
            _ => false,
        };
        if !shown {
            return None;
        }
        match self.size_named_by(size, env)? {
            Value::Int(d) => d.as_symbol().map(str::to_string),
            Value::Named { name, .. } => Some(name.to_string()),
            _ => None,
        }
    }
}

/// The plain names and `self` attributes a test reads (`cache is not None`, `not
/// use_cache`, `self.area > 1`), as `self.area` for an attribute; `None` for tests on other
/// attributes or calls, which could change unseen. A configuration attribute of `self` is
/// assigned in `__init__`; the path forgets the test where it assigns one or calls a method
/// of `self`.
fn settleable_names(test: &Expr) -> Option<Vec<String>> {
    fn read(name: String, out: &mut Vec<String>) -> bool {
        if !out.contains(&name) {
            out.push(name);
        }
        true
    }
    fn walk(e: &Expr, out: &mut Vec<String>) -> bool {
        match &e.kind {
            ExprKind::Name(n) => read(n.to_string(), out),
            ExprKind::Attr { value, attr } if matches!(&value.kind, ExprKind::Name(s) if s == "self") => {
                read(dotted("self", attr), out)
            }
            ExprKind::None | ExprKind::Bool(_) | ExprKind::Int(_) | ExprKind::Str(_) => true,
            // `not x` keeps an empty operand on its right.
            ExprKind::Compare {
                op: ir::CmpOp::Not,
                operands,
            } => walk(&operands[0], out),
            ExprKind::Compare { operands, .. } => operands.iter().all(|o| walk(o, out)),
            _ => false,
        }
    }
    let mut names = Vec::new();
    (walk(test, &mut names) && !names.is_empty()).then_some(names)
}

impl Interpreter<'_> {
    /// The operand of an undecided `a and b` (`a or b`) that decides it when the other's
    /// truth is known to leave it so: `q_global is not None` of `self.use_global and
    /// q_global is not None` with `use_global` true, so that a path is named by it.
    fn deciding_part<'t>(&mut self, test: &'t Expr, env: &Env) -> &'t Expr {
        let ExprKind::Compare { op, operands } = &test.kind else {
            return test;
        };
        let [left, right] = &**operands;
        let neutral = match op {
            CmpOp::And => true,
            CmpOp::Or => false,
            _ => return test,
        };
        let noted = |e: &Expr| {
            let at = e as *const Expr;
            self.operand_truths
                .iter()
                .rev()
                .find(|(o, _)| *o == at)
                .map(|(_, t)| *t)
        };
        let truths = match (noted(left), noted(right)) {
            (Some(l), Some(r)) => (l, r),
            // A call inside the test ran an `if` of its own, which cleared them.
            _ => {
                let mut scratch = env.clone();
                let l = self.eval_condition(left, &mut scratch);
                (l, self.eval_condition(right, &mut scratch))
            }
        };
        match truths {
            (Some(t), None) if t == neutral => self.deciding_part(right, env),
            (None, Some(t)) if t == neutral => self.deciding_part(left, env),
            _ => test,
        }
    }
}

/// How a path that took one branch of the test `condition` (in backticks) is named:
/// `` `mask` is None `` for the false branch of `mask is not None`, `` `cached` is false ``.
pub(super) fn branch_taken(condition: &str, truth: bool) -> String {
    let text = condition.trim_matches('`');
    let none_test = |name: &str, is_none: bool| {
        format!("`{name}` is {}None", if is_none { "" } else { "not " })
    };
    // Only for one name (`a and b is None` is not a test of `a and b`).
    let one_name = |name: &str| !name.contains(char::is_whitespace);
    if let Some(name) = text.strip_suffix(" is not None").filter(|n| one_name(n)) {
        return none_test(name, !truth);
    }
    if let Some(name) = text.strip_suffix(" is None").filter(|n| one_name(n)) {
        return none_test(name, truth);
    }
    if let Some(name) = text.strip_prefix("not ") {
        if !name.contains(' ') {
            return format!("`{name}` is {}", if truth { "false" } else { "true" });
        }
    }
    format!("{condition} is {}", if truth { "true" } else { "false" })
}

impl Interpreter<'_> {
    /// Before the first branch of an `if`: how far the frame's learned equalities went.
    /// Rust only for now: in Python the second branch still sees the first's equalities
    /// (keeping them apart there renames a size in a finding on the real-code trees, a
    /// change to be measured on its own).
    fn branch_start(&self) -> Option<BranchStart> {
        (self.language == Language::Rust).then(|| BranchStart {
            subst: self.frame.subst.len(),
            aliases: self.frame.facts.aliases.clone(),
        })
    }

    /// Between the branches: the equalities the first branch learned (a reshape there
    /// sizing an unknown dim) hold only on its paths, so the second branch runs without
    /// them (falcon's `if !self.multi_query { reshape(.., 3, ..) } else { reshape(.., n + 2,
    /// ..) }`, whose second branch otherwise saw the first's size and failed). Returns them.
    fn branch_switch(&mut self, start: &Option<BranchStart>) -> Option<BranchLearned> {
        let start = start.as_ref()?;
        Some(BranchLearned {
            subst: self.frame.subst.split_off(start.subst),
            aliases: std::mem::replace(&mut self.frame.facts.aliases, start.aliases.clone()),
        })
    }

    /// After both branches: the frame holds what both learned, in the order it always
    /// did (the first branch's equalities, then the second's), as values read later on
    /// the first branch's paths need its own.
    fn branch_end(&mut self, start: &Option<BranchStart>, first: Option<BranchLearned>) {
        let (Some(start), Some(first)) = (start, first) else {
            return;
        };
        let second = self.frame.subst.split_off(start.subst);
        self.frame.subst.extend(first.subst);
        self.frame.subst.extend(second);
        let second = std::mem::replace(&mut self.frame.facts.aliases, first.aliases);
        for (name, now) in second.iter().skip(start.aliases.len()) {
            self.frame.facts.add_alias(name, now);
        }
    }

    /// [`branch_taken`] of `condition`, true then false, spelled once per file (the same
    /// tests are run on every path and in every context).
    pub(super) fn branch_names(&mut self, condition: &Arc<str>) -> [Arc<str>; 2] {
        self.branch_names
            .entry(condition.clone())
            .or_insert_with(|| [true, false].map(|truth| Arc::from(branch_taken(condition, truth))))
            .clone()
    }
}

/// The frame's learned equalities before the branches of an `if`.
struct BranchStart {
    subst: usize,
    aliases: Arc<Vec<(String, Dim)>>,
}

/// The equalities one branch of an `if` learned.
struct BranchLearned {
    subst: Vec<(String, Dim)>,
    aliases: Arc<Vec<(String, Dim)>>,
}

/// Can running `s` turn one path into several?
fn splits_paths(s: &Stmt) -> bool {
    matches!(s, Stmt::If { .. } | Stmt::Loop { .. } | Stmt::With { .. })
}

/// Paths whose states are the same (the branches of `if output_attentions:` that only
/// differ in what they left unchanged) are one path from here on: the rest of the block
/// runs once for them, on the branches both took.
fn join_identical_paths(paths: Vec<Env>) -> Vec<Env> {
    let mut out: Vec<Env> = Vec::with_capacity(paths.len());
    for env in paths {
        match out.iter_mut().find(|kept| same_env(kept, &env)) {
            Some(kept) => *kept = join_envs(kept, &env),
            None => out.push(env),
        }
    }
    out
}

/// Paths one function keeps apart at most (see the module docs).
pub const MAX_PATHS: usize = 8;

impl Interpreter<'_> {
    /// Run a block from one state; the join of the paths that reach its end (`None` when
    /// every path returned or raised).
    pub fn exec_block(&mut self, stmts: &[Stmt], env: Option<Env>) -> Option<Env> {
        let paths = self.exec_paths(stmts, env.into_iter().collect());
        join_all_envs(paths)
    }

    /// Run a block on a set of paths; the paths that reach its end.
    pub fn exec_paths(&mut self, stmts: &[Stmt], mut paths: Vec<Env>) -> Vec<Env> {
        for s in stmts {
            // Once the file's work is spent, the rest is not run (see `Interpreter::spend`).
            if paths.is_empty() || self.halted() {
                break;
            }
            let mut next = Vec::with_capacity(paths.len());
            for env in paths {
                next.extend(self.exec_stmt(s, env));
            }
            if next.len() > 1 {
                // Comparing or joining the paths reads every binding of each.
                self.spend_on_paths(next.iter().map(Env::weight).sum());
            }
            if next.len() > MAX_PATHS || (next.len() > 1 && self.out_of_fuel()) {
                next = join_all_envs(next).into_iter().collect();
            } else if next.len() > 1 && splits_paths(s) {
                next = join_identical_paths(next);
            }
            paths = next;
        }
        paths
    }

    /// An `if`: the branch its test decides, or both, each path told by the test's name
    /// where it has one (joined where it has none).
    fn exec_if(&mut self, test: &Expr, body: &[Stmt], orelse: &[Stmt], env: Env) -> Vec<Env> {
        let mut env = env;
        self.burn();
        self.operand_truths.clear();
        match self.eval_condition(test, &mut env) {
            Some(true) => self.exec_paths(body, vec![env]),
            Some(false) => self.exec_paths(orelse, vec![env]),
            None => {
                let deciding = self.deciding_part(test, &env);
                let condition = self.nameable_condition(deciding, &env);
                if let Some(truth) = self.settled_truth(test, &env) {
                    let branch = if truth { body } else { orelse };
                    return self.exec_paths(branch, vec![env]);
                }
                self.spend_on_paths(env.weight());
                let (mut yes, mut no) = (env.clone(), env);
                match &condition {
                    Some(c) => {
                        let [taken, not_taken] = self.branch_names(c);
                        yes.decide(taken);
                        no.decide(not_taken);
                        self.settle(test, true, &mut yes);
                        self.settle(test, false, &mut no);
                    }
                    None => {
                        // A path that differs from others only by a test that
                        // cannot be named is never reported on its own: the
                        // branches join where they meet.
                        let start = self.branch_start();
                        let from_body = self.exec_block(body, Some(yes));
                        let learned = self.branch_switch(&start);
                        let from_orelse = self.exec_block(orelse, Some(no));
                        self.branch_end(&start, learned);
                        let joined = join_opt(from_body, from_orelse);
                        return joined.into_iter().collect();
                    }
                }
                let start = self.branch_start();
                let mut out = self.exec_paths(body, vec![yes]);
                let learned = self.branch_switch(&start);
                out.extend(self.exec_paths(orelse, vec![no]));
                self.branch_end(&start, learned);
                out
            }
        }
    }

    fn exec_stmt(&mut self, s: &Stmt, env: Env) -> Vec<Env> {
        match s {
            Stmt::If {
                test, body, orelse, ..
            } => self.exec_if(test, body, orelse, env),
            Stmt::Loop {
                target,
                iter,
                body,
                orelse,
                ..
            } => {
                let mut env = env;
                self.burn();
                if let Some((index, list)) =
                    self.enumerated(target.as_deref(), iter.as_deref(), &env)
                {
                    let target = target.as_deref().expect("an enumerated loop has a target");
                    let after = self.exec_enumerated(target, index, list, body, env);
                    return self.exec_paths(orelse, after);
                }
                let items = iter.as_ref().map(|it| {
                    let v = self.eval(it, &mut env);
                    self.iterated(v, it.span, &mut env)
                });
                if let (Some(t), Some(Value::Tuple(items))) = (target, &items) {
                    if self.unrollable(items, body) {
                        let after = self.exec_unrolled(t, items.clone(), body, env);
                        return self.exec_paths(orelse, after);
                    }
                }
                if let (Some(Value::Repeated(item)), Some(it)) = (&items, iter.as_ref()) {
                    let list = self.text(it.span).to_string();
                    let after = self.exec_repeated(&list, target.as_deref(), item, body, env);
                    return self.exec_paths(orelse, vec![after]);
                }
                let item = match (target.as_deref(), &items) {
                    (Some(t), Some(Value::IntRange(stop))) => self.loop_index(t, stop.clone()),
                    _ => Value::Unknown(UnknownReason::Unmodelled),
                };
                let after = self.exec_loop(target.as_deref(), item, body, env);
                self.exec_paths(orelse, vec![after])
            }
            Stmt::With { items, body, .. } => {
                let mut env = env;
                self.burn();
                for (e, t) in items {
                    self.eval(e, &mut env);
                    if let Some(t) = t {
                        self.assign(t, Value::Unknown(UnknownReason::Unmodelled), &mut env);
                    }
                }
                self.exec_paths(body, vec![env])
            }
            other => self.exec_simple(other, env).into_iter().collect(),
        }
    }

    /// A statement that does not split paths: the path after it, `None` where it ends the
    /// path (`return`, `raise`).
    fn exec_simple(&mut self, s: &Stmt, mut env: Env) -> Option<Env> {
        self.burn();
        match s {
            Stmt::Assign { targets, value, .. } => self.exec_assign(targets, value, env),
            Stmt::AugAssign {
                target,
                op,
                value,
                span,
            } => self.exec_aug_assign(target, *op, value, *span, env),
            Stmt::Expr(e) => {
                let mark = self.events.len();
                self.eval(e, &mut env);
                self.note_discarded_write(e, mark);
                Some(env)
            }
            Stmt::If { .. } | Stmt::Loop { .. } | Stmt::With { .. } => {
                unreachable!("split by exec_stmt")
            }
            Stmt::Return { value, .. } => self.exec_return(value.as_ref(), env),
            Stmt::Try(t) => self.exec_try(t, env),
            Stmt::Assert { test, .. } => {
                self.eval(test, &mut env);
                self.learn_from_test(test, &mut env);
                Some(env)
            }
            Stmt::Raise { .. } => None,
            Stmt::Import { module, alias, .. } => {
                let (name, path) = import_binding(module, alias.as_deref());
                env.set(&name, Value::Import(self.absolute_import(path).into()));
                Some(env)
            }
            Stmt::FunctionDef(f) => {
                env.set(&f.name, Value::Function(f.clone(), None));
                Some(env)
            }
            Stmt::ClassDef(c) => {
                let v = match self.classes.get(&c.name) {
                    Some(def) if Arc::ptr_eq(&def.class, c) => Value::Class(def),
                    _ => Value::Unknown(UnknownReason::Unmodelled),
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

    /// `a = b = value`: an unpacking of sizes refines the path; otherwise the value,
    /// named after its first target, is assigned to each target.
    fn exec_assign(&mut self, targets: &[Target], value: &Expr, mut env: Env) -> Option<Env> {
        if let Some(refined) = self.try_size_unpacking(targets, value, &mut env) {
            return Some(refined);
        }
        if let Some(refined) = self.try_mixed_size_unpacking(targets, value, &mut env) {
            return Some(refined);
        }
        self.frame.name_hint = match targets {
            // `height = width = …` names the value after the first.
            [Target::Name(n, _), ..] => Some((n.to_string(), value.span)),
            [Target::Attr {
                value: obj, attr, ..
            }] if matches!(&obj.kind, ExprKind::Name(s) if s == "self") => {
                Some((dotted("self", attr), value.span))
            }
            _ => None,
        };
        // `norm_fn = lambda d: …` is a lambda kept under a name, to be called.
        let v = self.eval(value, &mut env);
        self.frame.name_hint = None;
        for t in targets {
            self.assign(t, v.clone(), &mut env);
            self.note_item_write(t, None, &mut env);
        }
        Some(env)
    }

    /// `target op= value`.
    fn exec_aug_assign(
        &mut self,
        target: &Target,
        op: ir::BinOp,
        value: &Expr,
        span: ir::Span,
        mut env: Env,
    ) -> Option<Env> {
        let cur = match target {
            Target::Name(n, _) => self.lookup(n, &env),
            Target::Attr {
                value: obj, attr, ..
            } => self.eval_attr(obj, attr, span, &mut env),
            _ => Value::Unknown(UnknownReason::Unmodelled),
        };
        self.note_item_write(target, Some(op), &mut env);
        let rhs = self.eval(value, &mut env);
        let result = self.binop(op, cur.clone(), rhs, span, &mut env);
        self.note_aug_write(target, op, &cur, &mut env);
        // On a tensor, `x op= y` runs in place (`__iadd__`, `__itruediv__`, ...): `x` keeps
        // its storage, shape and strides, whatever the result of `x op y` would be.
        let v = match cur {
            Value::Tensor(_) => cur,
            _ => result,
        };
        self.assign(target, v, &mut env);
        Some(env)
    }

    /// `return value`: the path ends; its value joins the function's result and its `self`
    /// attributes the function's exit attributes (a constructor keeps the path instead).
    fn exec_return(&mut self, value: Option<&Expr>, mut env: Env) -> Option<Env> {
        let v = match value {
            Some(e) => self.eval(e, &mut env),
            None => Value::NoneVal,
        };
        // The caller has no sizes of this path's tensors of unknown shape.
        let v = super::super::apply::resolve_value(&env.shapes, v);
        // A constructor's own `return` (not one inside a function it calls) leaves the
        // object it built; `return Err(..)` builds none.
        let is_error = value.is_some_and(|e| {
            matches!(&e.kind,
            ExprKind::Call(call) if matches!(&call.func().kind, ExprKind::Name(n) if n == "Err"))
        });
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

    /// `try: … except: … else: … finally: …`.
    fn exec_try(&mut self, t: &ir::Try, env: Env) -> Option<Env> {
        let ir::Try {
            body,
            handlers,
            orelse,
            finalbody,
            ..
        } = t;
        let before = env.clone();
        let after_body = self.exec_block(body, Some(env));
        // A handler may start after any prefix of the body: approximate its entry state by
        // the join of the states before and after the body.
        let handler_entry = join_opt(Some(before.clone()), after_body.clone()).unwrap_or(before);
        let mut out = self.exec_block(orelse, after_body);
        for h in handlers {
            let hend = self.exec_block(h, Some(handler_entry.clone()));
            out = join_opt(out, hend);
        }
        if finalbody.is_empty() {
            return out;
        }
        let fin_entry = out.clone().unwrap_or(handler_entry);
        let fin = self.exec_block(finalbody, Some(fin_entry));
        // If every path ended, finally does not revive it.
        out.and(fin)
    }

    /// `assert a == b` (and `a == b and c == d`): the program continues only if it holds.
    fn learn_from_test(&mut self, test: &Expr, env: &mut Env) {
        let ExprKind::Compare { op, operands } = &test.kind else {
            return;
        };
        let [left, right] = &**operands;
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
    ) -> Vec<Env> {
        let mut paths = vec![env];
        let outer = self.frame.path.clone();
        let count = items.len();
        for (i, item) in items.into_iter().enumerate() {
            if paths.is_empty() {
                break;
            }
            self.frame.path = iteration_path(outer.as_deref(), target, &item, i, count);
            for entry in paths.iter_mut() {
                self.assign(target, item.clone(), entry);
            }
            paths = self.exec_paths(body, paths);
        }
        self.frame.path = outer;
        paths
    }

    /// The integer a loop over `range(...)` of unknown bounds binds to its target: one
    /// symbol named after it, the same in every iteration (so the loop converges).
    /// With the range's bound, the symbol is known to lie below it (`Facts::add_loop_index`).
    /// Can a loop over these items run once per item?
    fn unrollable(&self, items: &[Value], body: &[Stmt]) -> bool {
        !items.is_empty()
            && !holds_packed(items)
            && items.len() <= MAX_UNROLL
            && !has_jump(body)
            && !self.out_of_fuel()
    }

    /// `for i, item in enumerate(items)` (the builtin): the index's target and the list.
    fn enumerated<'e>(
        &self,
        target: Option<&'e Target>,
        iter: Option<&'e Expr>,
        env: &Env,
    ) -> Option<(&'e Target, &'e Expr)> {
        let Some(Target::Tuple(parts, _)) = target else {
            return None;
        };
        let [index, _item] = parts.as_slice() else {
            return None;
        };
        let (func, args) = iter?.kind.as_call()?;
        let builtin = matches!(&func.kind, ExprKind::Name(n) if n == "enumerate")
            && matches!(self.lookup("enumerate", env), Value::Unknown(_));
        match args {
            [list] if builtin && list.name().is_none() && !list.is_star() => {
                Some((index, list.value()))
            }
            _ => None,
        }
    }

    /// A loop over `enumerate(list)`: over a known tuple, once per pair `(i, item)`; over a
    /// list of unknown length, `i` is one integer symbol in every iteration, a loop index
    /// below the list's length (as in `for i in range(len(list))`), and the item the list's
    /// item where it is [`Value::Repeated`] of sizes or tensors, else unknown (layers too).
    fn exec_enumerated(
        &mut self,
        target: &Target,
        index: &Target,
        list: &Expr,
        body: &[Stmt],
        mut env: Env,
    ) -> Vec<Env> {
        let v = self.eval(list, &mut env);
        let items = self.iterated(v, list.span, &mut env);
        if let Value::Tuple(items) = &items {
            if self.unrollable(items, body) {
                let pairs = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| Value::Tuple(vec![Value::int(i as i64), item.clone()]))
                    .collect();
                return self.exec_unrolled(target, pairs, body, env);
            }
        }
        let text = self.text(list.span).to_string();
        let length = match &items {
            Value::Tuple(items) if !holds_packed(items) => Dim::lit(items.len() as i64),
            _ => self.mint(&format!("len({text})")),
        };
        let i = self.loop_index(index, Some(length));
        match items {
            // A list of layers (`for i, layer in enumerate(self.layers)`) is left unknown:
            // running every layer stack in its caller's context costs more than it finds.
            Value::Repeated(item) if !super::super::value::is_layer_like(&item) => {
                let pair = Value::Tuple(vec![i, (*item).clone()]);
                vec![self.exec_repeated(&text, Some(target), &pair, body, env)]
            }
            _ => {
                let pair = Value::Tuple(vec![i, Value::Unknown(UnknownReason::Unmodelled)]);
                vec![self.exec_loop(Some(target), pair, body, env)]
            }
        }
    }

    fn loop_index(&mut self, target: &Target, stop: Option<Dim>) -> Value {
        let Target::Name(name, _) = target else {
            return Value::Unknown(UnknownReason::Unmodelled);
        };
        let index = self.mint(name);
        if let (Some(stop), Some(symbol)) = (stop, index.as_symbol()) {
            self.frame.facts.add_loop_index(symbol, stop);
        }
        Value::Int(index)
    }

    /// Run a loop body to a fixpoint, its target bound to `item` each time. Events are only
    /// kept from the final, stable run so a finding holds for every iteration.
    fn exec_loop(&mut self, target: Option<&Target>, item: Value, body: &[Stmt], env: Env) -> Env {
        let mut head = env;
        for iteration in 0..=MAX_LOOP_ITERATIONS {
            let mark = self.events.len();
            // Each iteration copies, joins and compares the path state.
            self.spend_on_paths(3 * head.weight());
            let mut entry = head.clone();
            if let Some(t) = target {
                self.assign(t, item.clone(), &mut entry);
            }
            let end = self.exec_block(body, Some(entry));
            let next = match &end {
                Some(e) => super::super::env::join_envs(&head, e),
                None => head.clone(),
            };
            if same_env(&next, &head) || self.out_of_fuel() || self.halted() {
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

    /// A loop over a list of unknown length (`for attn, ff in self.layers`): its values
    /// after no iteration and after one or more, told apart by the list's emptiness where
    /// a tensor's layout differs (the list is built from a size the analysis does not know:
    /// `depth` may be 0).
    fn exec_repeated(
        &mut self,
        list: &str,
        target: Option<&Target>,
        item: &Value,
        body: &[Stmt],
        env: Env,
    ) -> Env {
        let mut entry = env.clone();
        if let Some(t) = target {
            self.assign(t, item.clone(), &mut entry);
        }
        let learned = self.learned_count();
        let Some(first) = self.exec_block(body, Some(entry)) else {
            return env;
        };
        let more = self.exec_loop(target, item.clone(), body, first);
        // Sizes the body learned equal (a layer's input width is its `in_features`) are
        // the frame's from here on: the path without an iteration is read with them too.
        let mut env = env;
        if self.learned_count() != learned {
            for v in env.vars.values_mut().chain(env.self_attrs.values_mut()) {
                *v = self.apply_subst(std::mem::replace(v, Value::NoneVal));
            }
        }
        let list = if list.chars().count() <= 40 {
            list
        } else {
            "the list"
        };
        super::super::env::join_envs_tagged(
            &env,
            &more,
            &format!("`{list}` is empty"),
            &format!("`{list}` is not empty"),
        )
    }

    /// `B, T, C = x.size()` / `x.shape` on a tensor whose shape is not known yet: the
    /// unpacking tells its rank, and the names become its symbolic sizes.
    /// `B, T, H, D = x.shape` of a tensor laid out with packed leading dims
    /// (`analysis::prefix`): the names say how many dims are packed; `x` gets them as dims
    /// of its own, named as unpacked (see `prefix::unpack`).
    fn unpack_packed_shape(
        &mut self,
        var: &str,
        current: &Value,
        items: &[Target],
        names: &[&str],
        env: &mut Env,
    ) -> Option<Env> {
        let Value::Tensor(TensorVal::Alts(alts)) = current else {
            return None;
        };
        let [alt] = alts.as_slice() else { return None };
        let layout = alt.layout.as_ref()?;
        let count = prefix::packed_count(layout, names.len())?;
        let sizes: Vec<Dim> = names[..count]
            .iter()
            .enumerate()
            .map(|(i, n)| match *n {
                "_" => self.mint(&format!("{var}.shape[{i}]")),
                n => self.mint(n),
            })
            .collect();
        let (split, learned) = prefix::unpack(layout, sizes);
        let mut alt = alt.clone();
        alt.layout = Some(split.clone());
        env.set(var, Value::Tensor(TensorVal::Alts(vec![alt])));
        if let Some((packed, one)) = learned {
            self.learn_equal(&packed, &one, env);
        }
        let mut out = env.clone();
        for (t, d) in items.iter().zip(split.shape) {
            self.assign(t, Value::Int(d), &mut out);
        }
        Some(out)
    }

    /// `res, b, c, h, w = x, *x.shape`: the names the spread covers unpack the shape (as
    /// `b, c, h, w = x.shape` does, which fixes the rank), the others take their values.
    fn try_mixed_size_unpacking(
        &mut self,
        targets: &[Target],
        value: &Expr,
        env: &mut Env,
    ) -> Option<Env> {
        let [Target::Tuple(items, span)] = targets else {
            return None;
        };
        let ExprKind::Tuple(elems) = &value.kind else {
            return None;
        };
        let star = elems
            .iter()
            .position(|e| matches!(&e.kind, ExprKind::Starred(_)))?;
        let ExprKind::Starred(shape) = &elems[star].kind else {
            return None;
        };
        let (before, after) = (&elems[..star], &elems[star + 1..]);
        if elems[star + 1..]
            .iter()
            .any(|e| matches!(&e.kind, ExprKind::Starred(_)))
            || items.iter().any(|t| matches!(t, Target::Starred(..)))
            || items.len() <= before.len() + after.len()
        {
            return None;
        }
        size_query_receiver(shape)?;
        let heads: Vec<Value> = before.iter().map(|e| self.eval(e, env)).collect();
        let spread = &items[before.len()..items.len() - after.len()];
        let spread = [Target::Tuple(spread.to_vec(), *span)];
        let mut out = self.try_size_unpacking(&spread, shape, env)?;
        for (t, v) in items.iter().zip(heads) {
            self.assign(t, v, &mut out);
        }
        let tails: Vec<Value> = after.iter().map(|e| self.eval(e, &mut out)).collect();
        for (t, v) in items[items.len() - after.len()..].iter().zip(tails) {
            self.assign(t, v, &mut out);
        }
        Some(out)
    }

    fn try_size_unpacking(
        &mut self,
        targets: &[Target],
        value: &Expr,
        env: &mut Env,
    ) -> Option<Env> {
        let (recv, names) = match (self.language, targets) {
            (Language::Python, [Target::Tuple(items, _)]) => (
                size_query_receiver(value)?,
                super::super::rank::plain_names(items)?,
            ),
            (Language::Rust, [Target::Tuple(items, _)]) => {
                let (recv, rank) = rank_checked_size_query(value)?;
                (rank == items.len()).then_some(())?;
                (recv, super::super::rank::plain_names(items)?)
            }
            // `let shape = x.dims4()?`: the rank, and the tuple held as one value.
            (Language::Rust, [Target::Name(..)]) => {
                let (recv, rank) = rank_checked_size_query(value)?;
                (recv, vec!["_"; rank])
            }
            _ => return None,
        };
        let ExprKind::Name(var) = &recv.kind else {
            return None;
        };
        let current = self.lookup(var, env);
        if let [Target::Tuple(items, _)] = targets {
            if let Some(out) = self.unpack_packed_shape(var, &current, items, &names, env) {
                return Some(out);
            }
        }
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
        let step = match &current {
            Value::Named { .. } => Step::parameter(
                value.span,
                format!("parameter `{var}` (assumed contiguous)"),
                Some(layout.clone()),
                self.frame.context.clone(),
            ),
            _ => Step::after(
                value.span,
                format!("`{var}` (contiguous)"),
                Some(layout.clone()),
                prev,
                self.frame.context.clone(),
            ),
        };
        let mut alt = super::super::value::TensorAlt::new(Some(layout), Some(Arc::new(step)));
        alt.origin = origin;
        env.set(var, Value::Tensor(TensorVal::Alts(vec![alt])));
        let mut out = env.clone();
        match targets {
            [Target::Tuple(items, _)] => {
                for (t, d) in items.iter().zip(shape) {
                    self.assign(t, Value::Int(d), &mut out);
                }
            }
            [t] => self.assign(
                t,
                Value::Tuple(shape.into_iter().map(Value::Int).collect()),
                &mut out,
            ),
            _ => {}
        }
        Some(out)
    }

    pub fn assign(&mut self, t: &Target, v: Value, env: &mut Env) {
        match t {
            Target::Name(n, span) => {
                if self.probes.is_some() {
                    self.probe(*span, &v, true, env);
                }
                env.set(n, v)
            }
            Target::Attr { value, attr, .. } => {
                if matches!(value.kind, ExprKind::Name(ref n) if n == "self") {
                    env.set_self_attr(attr, v);
                }
            }
            Target::Tuple(items, _) => self.assign_tuple(items, v, env),
            Target::Starred(inner, _) => {
                self.assign(inner, Value::Unknown(UnknownReason::Unmodelled), env)
            }
            // `xs[i] = v` changes a list (its value is no longer known); a tensor's item
            // write (`x[:, 0] = v`) keeps its layout.
            Target::Item { value, .. } => {
                if let ExprKind::Name(name) = &value.kind {
                    if matches!(self.lookup(name, env), Value::Tuple(_)) {
                        env.set(name, Value::Unknown(UnknownReason::Unmodelled));
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
                // The unpacking succeeds only if each packed element is one size.
                for (t, x) in items.iter().zip(vals) {
                    let x = match x {
                        Value::PackedSizes(d) => Value::Int(d),
                        x => x,
                    };
                    self.assign(t, x, env);
                }
            }
            (Value::Tuple(vals), Some(si))
                if vals.len() + 1 >= items.len() && !holds_packed(&vals) =>
            {
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
            // `H, W = img_size` of a value of unknown type: its elements, named as written
            // (the unpacking succeeds only with exactly that many).
            (Value::Named { name, param }, None) => {
                for (i, t) in items.iter().enumerate() {
                    let elem = Value::Named {
                        name: format!("{name}[{i}]").into(),
                        param: param.map(|_| self.fresh_origin()),
                    };
                    self.assign(t, elem, env);
                }
            }
            // `q, k, v = qkv`: a tensor unpacks along dim 0, each name one item (`qkv[i]`;
            // the statement only succeeds when dim 0 has exactly that many).
            (Value::Tensor(TensorVal::Alts(alts)), None)
                if self.tables.method("__getitem__").is_some() =>
            {
                let spec = self.tables.method("__getitem__").expect("checked above");
                for (i, t) in items.iter().enumerate() {
                    let span = t.span();
                    let tensor = Value::Tensor(TensorVal::Alts(alts.clone()));
                    let item = self.with_apply_ctx(env, |ctx| {
                        applying::apply_op(
                            ctx,
                            spec,
                            Some(tensor),
                            vec![Value::int(i as i64)],
                            Vec::new(),
                            span,
                            span,
                        )
                    });
                    self.assign(t, item, env);
                }
            }
            (other, _) => {
                // Unpacking an unknown value (or a tensor the tables cannot index).
                let elem = match &other {
                    Value::Tensor(TensorVal::Unknown(why, _)) => Value::unknown_tensor(*why),
                    Value::Unknown(why) => Value::Unknown(*why),
                    Value::Tensor(_) => Value::unknown_tensor(UnknownReason::Unmodelled),
                    _ => Value::Unknown(UnknownReason::Unmodelled),
                };
                for t in items {
                    self.assign(t, elem.clone(), env);
                }
            }
        }
    }
}

/// How findings name one iteration of an unrolled loop: "`k` is 5 (iteration 2 of 2)".
pub(super) fn iteration_path(
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
        Stmt::Try(t) => {
            has_jump(&t.body)
                || t.handlers.iter().any(|h| has_jump(h))
                || has_jump(&t.orelse)
                || has_jump(&t.finalbody)
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
        ExprKind::Call(call) if call.args().is_empty() => match &call.func().kind {
            ExprKind::Attr { value, attr } if attr == "size" => Some(value),
            _ => None,
        },
        _ => None,
    }
}

/// Rust's rank-checked size queries whose tuple result names every size: candle's
/// `x.dims3()?` (also on its shape, `x.shape().dims3()?`) and tch-rs's `x.size3()` → `x`
/// and the rank they check.
fn rank_checked_size_query(e: &Expr) -> Option<(&Expr, usize)> {
    let (func, args) = e.kind.as_call()?;
    let ExprKind::Attr { value, attr } = &func.kind else {
        return None;
    };
    let rank = attr
        .strip_prefix("dims")
        .or_else(|| attr.strip_prefix("size"))?;
    let rank = rank.parse::<usize>().ok().filter(|_| args.is_empty())?;
    let tensor = match value.kind.as_call().map(|(f, args)| (&f.kind, args)) {
        Some((ExprKind::Attr { value: t, attr }, [])) if attr == "shape" => &**t,
        _ => &**value,
    };
    Some((tensor, rank))
}

/// A tensor a loop makes afresh each time it runs (`x = block(x)` through convolutions):
/// contiguous with a shape not known on the loop's entry and after each run, but another
/// tensor each time. Widened to a contiguous tensor of unknown shape that is no tensor in
/// particular (no origin, so no sizes revealed on one run hold on the next): joins with it
/// are it again, so the loop settles and its findings hold on every run.
pub(super) fn contiguous_any_shape(head: &Value, next: &Value) -> Option<Value> {
    let single_unshaped = |v: &Value| match v {
        Value::Tensor(TensorVal::Alts(alts)) => match &alts[..] {
            [alt] if alt.layout.is_none() && alt.facts == Default::default() => Some(alt.clone()),
            _ => None,
        },
        _ => None,
    };
    single_unshaped(head)?;
    let mut alt = single_unshaped(next)?;
    alt.origin = None;
    alt.condition = None;
    alt.made_by = None;
    Some(Value::Tensor(TensorVal::Alts(vec![alt])))
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
            let widened = match head.vars.get(k).and_then(|h| contiguous_any_shape(h, v)) {
                Some(contiguous) => contiguous,
                None if v.is_tensor() => Value::unknown_tensor(UnknownReason::PathsDisagree),
                None => Value::Unknown(UnknownReason::PathsDisagree),
            };
            out.vars.insert(k.clone(), widened);
        }
    }
    for (k, v) in next.self_attrs.iter() {
        let stable = head
            .self_attrs
            .get(k)
            .is_some_and(|h| super::super::value::same_value(h, v));
        if !stable {
            out.self_attrs
                .insert(k.clone(), Value::Unknown(UnknownReason::PathsDisagree));
        }
    }
    out
}
