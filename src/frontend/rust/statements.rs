//! Statements, blocks and control flow → IR statements.
//!
//! An expression is lowered *towards a destination* ([`Dest`]): discarded (an expression
//! statement), returned (a function's tail, `return e`), or assigned (a hoisted
//! temporary). Statement-like expressions pass the destination into their branches, so
//! `Ok(if c { a } else { b })` at the end of a function returns `a` on one path and `b` on
//! the other, and `match` arms each assign the temporary.
//!
//! - `let p = e;` → `Assign` (see `patterns.rs` for `p`); `let p = e else { … };` → an
//!   `If` whose else branch diverges, then the binding; `let x;` → `x` unknown.
//! - `if` / `else if` / `else` → `If`; `if let p = e` → an `If` with an unknown test whose
//!   body starts by binding `p` from `e`.
//! - `match e { arms }` → nested `If`s with unknown tests, one per arm, the last arm in the
//!   innermost `else` (a `match` is exhaustive, so exactly one arm runs — and each may).
//! - Except on an `Option` the analysis can name a path by (a variable, or a field the file
//!   sets to `None`): a `None` arm tests `e is None`, a `Some(p)` arm and `if let Some(p) =
//!   e` test `e is not None`, as Python code spells it.
//! - `for p in e`, `while c`, `while let p = e`, `loop` → `Loop` (the body may run any
//!   number of times); `break` / `continue` → `Jump`; `return` → `Return`.
//! - `panic!`, `bail!`, `unreachable!`, `todo!`, `unimplemented!` → `Raise`; `assert!`
//!   and `assert_eq!` → `Assert` (see `macros.rs`).
//! - Nested `fn` items → `FunctionDef`, `use` → `Import`, `const`/`static` → `Assign`.
//! - In a constructor, the returned struct literal `Self { a: e, b, .. }` (also as
//!   `Ok(Self { .. })`, or bound first by `let s = Self { .. }`) becomes `self.a = e;
//!   self.b = b;` — what the interpreter reads from a Python `__init__`.

use syn::{Expr as SynExpr, Stmt as SynStmt};

use crate::ir::{self, CmpOp, Expr, ExprKind, Stmt, Target, Targets};

use super::expressions::peel;
use super::lowerer::{join, unknown, Dest, Lowerer};
use super::patterns::{name_expr, unraw};

impl Lowerer {
    /// Lower `expr` so that its value ends up in `dest`, appending statements to `out`.
    pub(super) fn lower_into(&mut self, expr: &SynExpr, dest: &Dest, out: &mut Vec<Stmt>) {
        if !self.descend() {
            out.push(Stmt::Other {
                span: self.span_of(expr),
            });
            return;
        }
        self.lower_into_at_depth(expr, dest, out);
        self.ascend();
    }

    fn lower_into_at_depth(&mut self, expr: &SynExpr, dest: &Dest, out: &mut Vec<Stmt>) {
        let expr = peel(expr);
        match expr {
            SynExpr::If(branch) => self.lower_if(branch, dest, out),
            SynExpr::Match(m) => self.lower_match(m, dest, out),
            SynExpr::Block(block) => self.lower_block(&block.block, dest, out),
            SynExpr::Unsafe(block) => self.lower_block(&block.block, dest, out),
            SynExpr::Const(block) => self.lower_block(&block.block, dest, out),
            SynExpr::Loop(l) => self.lower_loop(l, out),
            SynExpr::While(w) => self.lower_while(w, out),
            SynExpr::ForLoop(f) => self.lower_for(f, out),
            SynExpr::Return(r) => match &r.expr {
                Some(value) => self.lower_into(value, &Dest::Return, out),
                None => out.push(Stmt::Return {
                    value: None,
                    span: self.span(r.return_token.span),
                }),
            },
            SynExpr::Break(b) => {
                if let Some(value) = &b.expr {
                    self.lower_into(value, &Dest::Discard, out);
                }
                out.push(Stmt::Jump {
                    span: self.span(b.break_token.span),
                });
            }
            SynExpr::Continue(c) => out.push(Stmt::Jump {
                span: self.span(c.continue_token.span),
            }),
            SynExpr::Assign(assign) => {
                let value = self.expr(&assign.right);
                let target = self.assignment_target(&assign.left);
                self.flush(out);
                out.push(Stmt::Assign {
                    targets: Targets::One(target),
                    value,
                    span: self.span_of(assign),
                });
            }
            SynExpr::Binary(binary) if is_compound_assignment(&binary.op) => {
                // Lowered by the expression lowering as a hoisted `AugAssign`.
                let _unit = self.expr(expr);
                self.flush(out);
            }
            SynExpr::Macro(mac) if self.lower_macro_statement(&mac.mac, out) => {}
            SynExpr::Struct(record) if self.is_constructor_result(record) => {
                self.assign_fields(record, out);
                match dest {
                    Dest::Discard => {}
                    Dest::Return => out.push(Stmt::Return {
                        value: None,
                        span: self.span_of(record),
                    }),
                    Dest::Assign(target) => out.push(Stmt::Assign {
                        targets: Targets::One(target.clone()),
                        value: name_expr("self".into(), self.span_of(&record.path)),
                        span: self.span_of(record),
                    }),
                }
            }
            _ => {
                let value = self.expr(expr);
                self.flush(out);
                out.push(match dest {
                    Dest::Discard => Stmt::Expr(value),
                    Dest::Return => Stmt::Return {
                        span: value.span,
                        value: Some(value),
                    },
                    Dest::Assign(target) => Stmt::Assign {
                        targets: Targets::One(target.clone()),
                        span: value.span,
                        value,
                    },
                });
            }
        }
    }

    /// A block in its own scope; its tail expression goes to `dest`.
    pub(super) fn lower_block(&mut self, block: &syn::Block, dest: &Dest, out: &mut Vec<Stmt>) {
        self.push_scope();
        self.lower_statements(&block.stmts, dest, out);
        self.pop_scope();
    }

    /// The statements of a block (in the current scope); a trailing expression without `;`
    /// is the block's value and goes to `dest`.
    pub(super) fn lower_statements(
        &mut self,
        statements: &[SynStmt],
        dest: &Dest,
        out: &mut Vec<Stmt>,
    ) {
        for (i, statement) in statements.iter().enumerate() {
            let is_tail = i + 1 == statements.len();
            match statement {
                SynStmt::Expr(expr, None) if is_tail => self.lower_into(expr, dest, out),
                SynStmt::Expr(expr, _) => self.lower_into(expr, &Dest::Discard, out),
                SynStmt::Local(local) => self.lower_let(local, out),
                SynStmt::Item(item) => self.lower_nested_item(item, out),
                SynStmt::Macro(mac) => {
                    if !self.lower_macro_statement(&mac.mac, out) {
                        let value = self.macro_value(&mac.mac);
                        self.flush(out);
                        out.push(Stmt::Expr(value));
                    }
                }
            }
        }
    }

    fn lower_let(&mut self, local: &syn::Local, out: &mut Vec<Stmt>) {
        let span = self.span_of(local);
        let Some(init) = &local.init else {
            // `let x;`: assigned later on every path that reads it.
            self.bind_to_unknown(&local.pat, out);
            return;
        };
        if let (SynExpr::Struct(record), syn::Pat::Ident(binding)) =
            (peel(&init.expr), super::patterns::strip(&local.pat))
        {
            if self.is_constructor_result(record) && binding.subpat.is_none() {
                // `let s = Self { .. }; …; Ok(s)`: `s` *is* `self`.
                self.assign_fields(record, out);
                self.declare_as(&unraw(&binding.ident), "self");
                return;
            }
        }
        let value = self.expr(&init.expr);
        self.flush(out);
        if let Some((_, diverge)) = &init.diverge {
            // `let Some(x) = e else { return … };`: the else branch never falls through.
            let mut orelse = Vec::new();
            self.lower_into(diverge, &Dest::Discard, &mut orelse);
            out.push(Stmt::If {
                test: Box::new(unknown(span)),
                body: Vec::new(),
                orelse,
                span,
            });
        }
        self.bind_pattern(&local.pat, value, span, out);
    }

    fn lower_if(&mut self, branch: &syn::ExprIf, dest: &Dest, out: &mut Vec<Stmt>) {
        let span = self.if_span(branch);
        let mut body = Vec::new();
        self.push_scope();
        let test = self.condition(&branch.cond, &mut body, out);
        self.lower_statements(&branch.then_branch.stmts, dest, &mut body);
        self.pop_scope();
        let mut orelse = Vec::new();
        if let Some((_, alternative)) = &branch.else_branch {
            self.lower_into(alternative, dest, &mut orelse);
        }
        out.push(Stmt::If {
            test: Box::new(test),
            body,
            orelse,
            span,
        });
    }

    /// The test of an `if`/`while`. Plain conditions are lowered (their hoisted parts go to
    /// `before`); a condition with `let` bindings (`if let`, let-chains) is an unknown test,
    /// and its bindings open `body` (the caller has pushed the body's scope).
    fn condition(&mut self, cond: &SynExpr, body: &mut Vec<Stmt>, before: &mut Vec<Stmt>) -> Expr {
        if !super::expressions::contains_let(cond) {
            let test = self.expr(cond);
            self.flush(before);
            return test;
        }
        let span = self.span_of(cond);
        if let Some(test) = self.option_let(cond, body, before) {
            return test;
        }
        self.bind_condition(cond, body);
        unknown(span)
    }

    /// `if let Some(p) = self.x`: the test `self.x is not None` (see [`Self::option_test`]), its
    /// binding opening `body`; `None` for any other `let` condition.
    fn option_let(
        &mut self,
        cond: &SynExpr,
        body: &mut Vec<Stmt>,
        before: &mut Vec<Stmt>,
    ) -> Option<Expr> {
        let SynExpr::Let(binding) = peel(cond) else {
            return None;
        };
        if option_arm(&binding.pat) != Some(false) {
            return None;
        }
        let span = self.span_of(binding);
        let value = self.expr(&binding.expr);
        let test = self.option_test(&value, false, span);
        // A test reads its value before the branch; an unknown one leaves it to the body,
        // as every other `let` condition does.
        self.flush(if matches!(test.kind, ExprKind::Unknown) {
            body
        } else {
            before
        });
        self.bind_pattern(&binding.pat, value, span, body);
        Some(test)
    }

    /// The bindings of a let-chain, in order; other conjuncts are evaluated for their calls.
    fn bind_condition(&mut self, cond: &SynExpr, body: &mut Vec<Stmt>) {
        match cond {
            SynExpr::Let(binding) => {
                let value = self.expr(&binding.expr);
                self.flush(body);
                let span = self.span_of(binding);
                self.bind_pattern(&binding.pat, value, span, body);
            }
            SynExpr::Binary(binary) if matches!(binary.op, syn::BinOp::And(_)) => {
                self.bind_condition(&binary.left, body);
                self.bind_condition(&binary.right, body);
            }
            SynExpr::Paren(inner) => self.bind_condition(&inner.expr, body),
            other => self.lower_into(other, &Dest::Discard, body),
        }
    }

    fn lower_match(&mut self, m: &syn::ExprMatch, dest: &Dest, out: &mut Vec<Stmt>) {
        let match_span = self.span_between(m.match_token.span, m.brace_token.span.close());
        let scrutinee = self.expr(&m.expr);
        self.flush(out);
        // Arms read the scrutinee once each; a call is evaluated once, into a temporary.
        let scrutinee = match scrutinee.kind {
            ExprKind::Name(_) | ExprKind::Attr { .. } => scrutinee,
            _ => {
                let temporary = self.temporary();
                let span = scrutinee.span;
                out.push(Stmt::Assign {
                    targets: Targets::One(Target::Name(temporary.as_str().into(), span)),
                    value: scrutinee,
                    span,
                });
                name_expr(temporary, span)
            }
        };
        let Some((last, others)) = m.arms.split_last() else {
            // `match never {}`: the path cannot continue.
            out.push(Stmt::Raise { span: match_span });
            return;
        };
        let mut chain = self.lower_arm(last, &scrutinee, dest);
        for arm in others.iter().rev() {
            let pattern_span = self.span_of(&arm.pat);
            let test = self.arm_test(arm, &scrutinee, pattern_span);
            let body = self.lower_arm(arm, &scrutinee, dest);
            let arm_span = join(pattern_span, self.span_of(&*arm.body));
            chain = vec![Stmt::If {
                test: Box::new(test),
                body,
                orelse: chain,
                span: arm_span,
            }];
        }
        out.extend(chain);
    }

    /// The test of a `match` arm: `scrutinee is None` for a `None` arm and `scrutinee is not
    /// None` for an unguarded `Some(p)` arm (see [`Self::option_test`]), so that the
    /// analysis can name the path (a cache empty on the first call), as it does Python's
    /// `if self.kv_cache is None`; an unknown test otherwise.
    fn arm_test(&self, arm: &syn::Arm, scrutinee: &Expr, span: ir::Span) -> Expr {
        match option_arm(&arm.pat) {
            Some(is_none) if arm.guard.is_none() => self.option_test(scrutinee, is_none, span),
            _ => unknown(span),
        }
    }

    /// The test `subject is None` (`is not None`) for an `Option` the analysis can name a
    /// path by: a variable (a parameter `mask: Option<&Tensor>`, as Python's `mask is None`)
    /// or a field of `self` the file sets to `None` (see `options.rs`); an unknown test for
    /// anything else (a hoisted call, another object's field).
    pub(super) fn option_test(&self, subject: &Expr, is_none: bool, span: ir::Span) -> Expr {
        let nameable = match &subject.kind {
            ExprKind::Name(name) => !name.starts_with('$'),
            ExprKind::Attr { value, attr } => {
                matches!(&value.kind, ExprKind::Name(s) if &**s == "self")
                    && self.impl_type.as_ref().is_some_and(|t| {
                        self.none_fields
                            .get(t)
                            .is_some_and(|fields| fields.contains(&**attr))
                    })
            }
            _ => false,
        };
        if nameable {
            option_compare(subject, is_none, span)
        } else {
            unknown(span)
        }
    }

    fn lower_arm(&mut self, arm: &syn::Arm, scrutinee: &Expr, dest: &Dest) -> Vec<Stmt> {
        let mut body = Vec::new();
        self.push_scope();
        let span = self.span_of(&arm.pat);
        match super::patterns::strip(&arm.pat) {
            syn::Pat::Wild(_) => {}
            // `None` binds nothing (syn reads it as a binding named `None`).
            _ if option_arm(&arm.pat) == Some(true) => {}
            _ => match self.target(&arm.pat) {
                Some(target) => body.push(Stmt::Assign {
                    targets: Targets::One(target),
                    value: scrutinee.clone(),
                    span,
                }),
                None => self.bind_to_unknown(&arm.pat, &mut body),
            },
        }
        if let Some((_, guard)) = &arm.guard {
            self.lower_into(guard, &Dest::Discard, &mut body);
        }
        self.lower_into(&arm.body, dest, &mut body);
        self.pop_scope();
        body
    }

    /// `for p in xs { … }` → `Loop { p in xs }`. The loop runs over the items themselves
    /// through `xs.iter()` / `iter_mut()` / `into_iter()`; `for (i, p) in
    /// xs.iter().enumerate()` runs over the items of `xs` with `i` an unknown index.
    fn lower_for(&mut self, f: &syn::ExprForLoop, out: &mut Vec<Stmt>) {
        let span = self.span_between(f.for_token.span, f.body.brace_token.span.close());
        let (items, index, pat) = enumerated(&f.expr, &f.pat);
        let iter = self.expr(items);
        self.flush(out);
        let mut body = Vec::new();
        self.push_scope();
        if let Some(index) = index {
            self.bind_to_unknown(index, &mut body);
        }
        let target = match self.target(pat) {
            Some(target) => Some(target),
            None => {
                self.bind_to_unknown(pat, &mut body);
                None
            }
        };
        self.lower_statements(&f.body.stmts, &Dest::Discard, &mut body);
        self.pop_scope();
        out.push(Stmt::Loop {
            target: target.map(Box::new),
            iter: Some(Box::new(iter)),
            body,
            orelse: Box::default(),
            span,
        });
    }

    /// `while c { … }`: the condition is evaluated before the loop (at least once); a
    /// `while let` binds at the start of every iteration.
    fn lower_while(&mut self, w: &syn::ExprWhile, out: &mut Vec<Stmt>) {
        let span = self.span_between(w.while_token.span, w.body.brace_token.span.close());
        let mut body = Vec::new();
        self.push_scope();
        let test = self.condition(&w.cond, &mut body, out);
        if !matches!(test.kind, ExprKind::Unknown) {
            out.push(Stmt::Expr(test));
        }
        self.lower_statements(&w.body.stmts, &Dest::Discard, &mut body);
        self.pop_scope();
        out.push(Stmt::Loop {
            target: None,
            iter: None,
            body,
            orelse: Box::default(),
            span,
        });
    }

    fn lower_loop(&mut self, l: &syn::ExprLoop, out: &mut Vec<Stmt>) {
        let span = self.span_between(l.loop_token.span, l.body.brace_token.span.close());
        let mut body = Vec::new();
        self.lower_block(&l.body, &Dest::Discard, &mut body);
        out.push(Stmt::Loop {
            target: None,
            iter: None,
            body,
            orelse: Box::default(),
            span,
        });
    }

    /// Is this struct literal the value a constructor builds (`Self { .. }` or
    /// `TypeName { .. }` inside `TypeName`'s constructor)?
    pub(super) fn is_constructor_result(&self, record: &syn::ExprStruct) -> bool {
        let Some(class) = &self.constructor_of else {
            return false;
        };
        record.qself.is_none()
            && record
                .path
                .segments
                .last()
                .is_some_and(|segment| segment.ident == "Self" || segment.ident == class.as_str())
    }

    /// `Self { a: e, b, .. }` → `self.a = e; self.b = b;` (a `..base` contributes fields we
    /// cannot name; they stay unknown).
    fn assign_fields(&mut self, record: &syn::ExprStruct, out: &mut Vec<Stmt>) {
        for field in &record.fields {
            let syn::Member::Named(name) = &field.member else {
                continue;
            };
            let name_span = self.span(name.span());
            let value = self.expr(&field.expr);
            self.flush(out);
            let span = join(name_span, value.span);
            out.push(Stmt::Assign {
                targets: Targets::One(Target::Attr {
                    value: Box::new(name_expr("self".into(), name_span)),
                    attr: unraw(name).into(),
                    span: name_span,
                }),
                value,
                span,
            });
        }
        if let Some(rest) = &record.rest {
            let value = self.expr(rest);
            self.flush(out);
            out.push(Stmt::Expr(value));
        }
    }
}

fn is_compound_assignment(op: &syn::BinOp) -> bool {
    use syn::BinOp as B;
    matches!(
        op,
        B::AddAssign(_)
            | B::SubAssign(_)
            | B::MulAssign(_)
            | B::DivAssign(_)
            | B::RemAssign(_)
            | B::BitXorAssign(_)
            | B::BitAndAssign(_)
            | B::BitOrAssign(_)
            | B::ShlAssign(_)
            | B::ShrAssign(_)
    )
}

/// A loop's items and pattern, seen through `.iter()`, `.iter_mut()`, `.into_iter()` and
/// `.enumerate()` (whose index pattern is returned apart: the loop binds it to an unknown).
fn enumerated<'a>(
    iter: &'a SynExpr,
    pat: &'a syn::Pat,
) -> (&'a SynExpr, Option<&'a syn::Pat>, &'a syn::Pat) {
    let items = |mut e: &'a SynExpr| {
        while let SynExpr::MethodCall(call) = e {
            if !call.args.is_empty()
                || !matches!(
                    call.method.to_string().as_str(),
                    "iter" | "iter_mut" | "into_iter"
                )
            {
                break;
            }
            e = &call.receiver;
        }
        e
    };
    if let (SynExpr::MethodCall(call), syn::Pat::Tuple(pair)) = (iter, super::patterns::strip(pat))
    {
        if call.method == "enumerate" && call.args.is_empty() && pair.elems.len() == 2 {
            return (items(&call.receiver), Some(&pair.elems[0]), &pair.elems[1]);
        }
    }
    (items(iter), None, pat)
}

/// `Some(true)` for a `None` pattern, `Some(false)` for `Some(p)`, `None` for any other.
fn option_arm(pattern: &syn::Pat) -> Option<bool> {
    let last = |path: &syn::Path| path.segments.last().map(|s| s.ident.to_string());
    let name = match super::patterns::strip(pattern) {
        syn::Pat::Ident(binding) if binding.subpat.is_none() => Some(binding.ident.to_string()),
        syn::Pat::Path(path) => last(&path.path),
        syn::Pat::TupleStruct(wrapper) if wrapper.elems.len() == 1 => {
            return (last(&wrapper.path).as_deref() == Some("Some")).then_some(false)
        }
        _ => None,
    };
    (name.as_deref() == Some("None")).then_some(true)
}

/// `subject is None` (`is None` when `is_none`, else `is not None`).
fn option_compare(subject: &Expr, is_none: bool, span: ir::Span) -> Expr {
    let none = Expr::new(ExprKind::None, span);
    let op = if is_none { CmpOp::Is } else { CmpOp::IsNot };
    Expr::new(
        ExprKind::Compare {
            op,
            operands: Box::new([subject.clone(), none]),
        },
        span,
    )
}
