//! Writes whose effect nothing can observe, for SL010 (`write-to-copy`): an in-place method
//! call that is a whole statement (`t.copy_(src)`), a subscript assignment `t[...] = v` and
//! an augmented assignment `t += v`, where `t` is a temporary made within the statement
//! (`w.t().reshape(-1).copy_(src)`) or a local variable that nothing reads. The write's event
//! gets a [`LostWrite`] naming the expressions whose value only the write reaches; the lint
//! decides whether that value is a copy. Only writes into a tensor that a fact watches
//! (`TensorFact::watches_writes`: SL010's copy, put by `analysis::facts::copies`) are
//! looked at.
//!
//! Whether a local is read is decided on the source text, so that what the IR does not
//! model (comprehensions, lambdas, f-strings, macros) still counts: every occurrence of the
//! name in the function must be one the IR shows to be a binding `t = …` or a write.

use std::sync::Arc;

use crate::ir::{BinOp, Expr, ExprKind, Function, Language, Span, Stmt, Target};
use crate::ops::OpKind;

use super::super::env::Env;
use super::super::event::LostWrite;
use super::super::value::{TensorVal, Value};
use super::Interpreter;

impl Interpreter<'_> {
    fn is_in_place(&self, method: &str) -> bool {
        self.tables
            .method(method)
            .is_some_and(|spec| spec.kind == OpKind::InPlace)
    }

    /// After the expression statement `e` (its events recorded from `mark` on): an
    /// in-place method call whose value is discarded.
    pub(super) fn note_discarded_write(&mut self, e: &Expr, mark: usize) {
        let Some((func, _)) = e.kind.as_call() else {
            return;
        };
        let ExprKind::Attr {
            value: target,
            attr,
        } = &func.kind
        else {
            return;
        };
        if !self.is_in_place(attr) {
            return;
        }
        let what = format!("`{attr}`");
        self.flag_write(e.span, mark, target, what);
    }

    /// `target[...] = v` (`aug`: `target[...] op= v`) in Python: the write into `target`.
    pub(super) fn note_item_write(&mut self, target: &Target, aug: Option<BinOp>, env: &mut Env) {
        let Target::Item { value: base, span } = target else {
            return;
        };
        if self.language != Language::Python {
            return;
        }
        let v = match &base.kind {
            ExprKind::Name(n) => self.lookup(n, env),
            _ => self.eval(base, env),
        };
        if !watched(&v) {
            return;
        }
        let mark = self.events.len();
        self.tensor_unary("__setitem__", v, *span, env);
        let what = match aug {
            Some(op) => format!("`[...] {}`", aug_symbol(op)),
            None => "`[...] =`".to_string(),
        };
        self.flag_write(*span, mark, base, what);
    }

    /// `name op= v` on a tensor `cur` (Python runs it in place).
    pub(super) fn note_aug_write(
        &mut self,
        target: &Target,
        op: BinOp,
        cur: &Value,
        env: &mut Env,
    ) {
        let Target::Name(n, name_span) = target else {
            return;
        };
        if self.language != Language::Python || !watched(cur) {
            return;
        }
        // The write is recorded at the name: the statement's span is the `x op y` event's,
        // which other contexts judge on their own.
        let mark = self.events.len();
        self.tensor_unary("__setitem__", cur.clone(), *name_span, env);
        let name = Expr {
            kind: ExprKind::Name(n.clone()),
            span: *name_span,
        };
        self.flag_write(*name_span, mark, &name, format!("`{}`", aug_symbol(op)));
    }

    /// Give the write event at `span` (recorded from `mark` on) its [`LostWrite`], when its
    /// target `target` is unobservable.
    fn flag_write(&mut self, span: Span, mark: usize, target: &Expr, what: String) {
        let mark = mark.min(self.events.len());
        let Some(i) = (mark..self.events.len())
            .rev()
            .find(|&i| self.events[i].span == span)
        else {
            return;
        };
        if !self.events[i]
            .outcomes
            .iter()
            .any(|o| o.input.facts.watch_writes())
        {
            return;
        }
        let (sole, local) = match &target.kind {
            ExprKind::Name(n) => match self.write_only_local(n) {
                Some(sole) => (sole, Some(n.to_string())),
                None => return,
            },
            _ => (chain_spans(target), None),
        };
        self.events[i].write = Some(Arc::new(LostWrite { what, sole, local }));
    }

    /// When every occurrence of `name` in the running function is a binding `name = rhs`
    /// or a write to it: the chains of the right-hand sides (see [`chain_spans`]).
    fn write_only_local(&self, name: &str) -> Option<Vec<Span>> {
        let f: Arc<Function> = self.frame.body_of.clone()?;
        if name == "self" || f.params.iter().any(|p| p.name == name) {
            return None;
        }
        let mut walk = LocalUses {
            interp: self,
            name,
            accounted: 0,
            sole: Vec::new(),
        };
        walk.block(&f.body);
        let total = occurrences(self.text(f.span), name);
        (walk.accounted == total && !walk.sole.is_empty()).then_some(walk.sole)
    }
}

/// `+=`, `*=`, …
fn aug_symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+=",
        BinOp::Sub => "-=",
        BinOp::Mul => "*=",
        BinOp::Div => "/=",
        BinOp::FloorDiv => "//=",
        BinOp::Mod => "%=",
        BinOp::Pow => "**=",
        BinOp::MatMul => "@=",
        BinOp::Other => "op=",
    }
}

/// Does a fact on some alternative of `v` watch writes into it (SL010's: it is a copy)?
fn watched(v: &Value) -> bool {
    matches!(v, Value::Tensor(TensorVal::Alts(alts)) if alts.iter().any(|a| a.facts.watch_writes()))
}

/// The expressions whose value flows, as receiver, into `e`: `e` itself, then the receiver
/// of a method call, the base of a subscript or an attribute, and so on down the chain
/// (`w.t().reshape(-1)[:5]`: the subscript, `w.t().reshape(-1)`, `w.t()`, `w`).
fn chain_spans(e: &Expr) -> Vec<Span> {
    let mut out = Vec::new();
    let mut cur = e;
    loop {
        out.push(cur.span);
        cur = match &cur.kind {
            ExprKind::Call(call) => match &call.func().kind {
                ExprKind::Attr { value, .. } => value,
                _ => break,
            },
            ExprKind::Subscript(subscript) => subscript.value(),
            ExprKind::Attr { value, .. } => value,
            _ => break,
        };
    }
    out
}

/// How often `name` occurs as an identifier in `text`.
fn occurrences(text: &str, name: &str) -> usize {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name)
        .filter(|&(i, _)| {
            let before = text[..i].chars().next_back();
            let after = text[i + name.len()..].chars().next();
            !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
        })
        .count()
}

/// The statements of a function that bind or write a local (see
/// [`Interpreter::write_only_local`]).
struct LocalUses<'i, 'a> {
    interp: &'i Interpreter<'a>,
    name: &'i str,
    /// Occurrences of the name shown to be bindings or writes.
    accounted: usize,
    /// The chains of the bound right-hand sides.
    sole: Vec<Span>,
}

impl LocalUses<'_, '_> {
    fn block(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn is_name(&self, e: &Expr) -> bool {
        matches!(&e.kind, ExprKind::Name(n) if n == self.name)
    }

    /// The name is mentioned once in the statement at `span`.
    fn once(&self, span: Span) -> bool {
        occurrences(self.interp.text(span), self.name) == 1
    }

    /// `name.a_(…).b_(…)`: in-place calls down to the name.
    fn in_place_chain(&self, e: &Expr) -> bool {
        let mut cur = e;
        loop {
            match &cur.kind {
                ExprKind::Call(call) => match &call.func().kind {
                    ExprKind::Attr { value, attr } if self.interp.is_in_place(attr) => cur = value,
                    _ => return false,
                },
                _ => return self.is_name(cur),
            }
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Assign {
                targets,
                value,
                span,
            } if self.once(*span) => match &targets[..] {
                [Target::Name(n, _)] if n == self.name => {
                    self.accounted += 1;
                    self.sole.extend(chain_spans(value));
                }
                [Target::Item { value: base, .. }] if self.is_name(base) => self.accounted += 1,
                _ => {}
            },
            Stmt::AugAssign { target, span, .. } if self.once(*span) => match &**target {
                Target::Name(n, _) if n == self.name => self.accounted += 1,
                Target::Item { value: base, .. } if self.is_name(base) => self.accounted += 1,
                _ => {}
            },
            Stmt::Expr(e) if self.once(e.span) && self.in_place_chain(e) => self.accounted += 1,
            _ => s.for_each_block(|b| self.block(b)),
        }
    }
}
