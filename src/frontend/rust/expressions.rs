//! Expressions in value position → IR expressions.
//!
//! The mapping (see also `ir.rs`'s conventions):
//! - `a.b(args)` → `Call { func: Attr { a, "b" }, args }` (turbofish dropped);
//!   `a::b::c(args)` → `Call { func: Attr(Attr(Name a, b), c) }`; `D::Minus1` →
//!   `Attr(Name D, Minus1)`; a single-segment path is a local name, resolved through the
//!   block scopes.
//! - Erased, because they do not change a layout: `?`, `.unwrap()`, `.expect(..)`,
//!   `.clone()`, `.as_ref()`, `&x`, `&mut x`, `*x`, `(x)`, `x as T`, and the wrappers
//!   `Ok(x)`, `Some(x)`, `Box::new(x)`, `Arc::new(x)`, `Rc::new(x)`. An erased node takes
//!   the span of what it wraps.
//! - Literals: integers (any suffix or base), floats, bools, strings; `()` and a `()`
//!   element of a tuple (candle's reshape hole in `(b, (), c)`) are `Tuple([])`.
//! - Tuples, arrays and `vec![..]` → `Tuple` / `List`; ranges `a..b`, `..`, `a..`, `..b`
//!   → `Slice`, and `a..=b` → `Slice { a, b + 1 }`; `x[i]` → `Subscript`; `t.0` →
//!   `Subscript { t, [0] }`; `cfg.num_heads` → `Attr`.
//! - Arithmetic maps one to one, except `/`: Rust's `/` on integers truncates, which for
//!   the non-negative integers sizes are is Python's `//`, so it becomes `FloorDiv` —
//!   unless an operand is visibly a float (a float literal, an `as f64` cast, a float
//!   method such as `.sqrt()`), where it is true division `Div`. On tensors the
//!   interpreter treats `/` as an element-wise op whatever the IR operator.
//! - `&&`, `||`, `!` and comparisons → `Compare`; bit operations → `BinOp::Other`;
//!   `x.is_none()` / `x.is_some()` → `x is None` / `x is not None` where a `match` on `x`
//!   would name its path (a variable, a field of `self` the file sets to `None`).
//! - `if c { a } else { b }` whose branches are single expressions → `IfExp`; every other
//!   statement-like expression (`match`, blocks, loops, `if let`, …) is hoisted into
//!   statements that assign a temporary (see `lowerer.rs`).
//! - Closures, `async`, `.await`, struct literals (outside a constructor's result),
//!   `[x; n]` and unknown macros → `Unknown`.

use syn::punctuated::Punctuated;
use syn::{Expr as SynExpr, Member, RangeLimits, UnOp};

use crate::ir::{
    Arg, BinOp, Call, CmpOp, Expr, ExprKind, SliceBounds, Span, Stmt, Subscript, Target,
};

use super::lowerer::{join, unknown, Dest, Lowerer};
use super::patterns::{name_expr, unraw};

impl Lowerer {
    /// Lower an expression in value position. Statements it contains are pushed to
    /// `self.pending`; the caller flushes them before the statement that uses the value.
    pub(super) fn expr(&mut self, expr: &SynExpr) -> Expr {
        if !self.descend() {
            return unknown(self.span_of(expr));
        }
        let lowered = self.expr_at_depth(expr);
        self.ascend();
        lowered
    }

    fn expr_at_depth(&mut self, expr: &SynExpr) -> Expr {
        let expr = peel(expr);
        match expr {
            // What `peel` leaves of a cast changes what the number is.
            SynExpr::Cast(cast) => self.numeric_cast(cast),
            SynExpr::Lit(lit) => self.literal(&lit.lit),
            SynExpr::Path(path) => self.path(path),
            SynExpr::MethodCall(call) => self.method_call(call),
            SynExpr::Call(call) => self.call(call),
            SynExpr::Field(field) => self.field(field),
            SynExpr::Index(index) => {
                let value = self.expr(&index.expr);
                let key = self.expr(&index.index);
                let span = join(value.span, self.span(index.bracket_token.span.close()));
                Expr::new(ExprKind::Subscript(Subscript::new(value, vec![key])), span)
            }
            SynExpr::Tuple(tuple) => {
                let span = self.span(tuple.paren_token.span.join());
                let items = tuple.elems.iter().map(|e| self.expr(e)).collect();
                Expr::new(ExprKind::Tuple(items), span)
            }
            SynExpr::Array(array) => {
                let span = self.span(array.bracket_token.span.join());
                let items = array.elems.iter().map(|e| self.expr(e)).collect();
                Expr::new(ExprKind::List(items), span)
            }
            SynExpr::Binary(binary) => self.binary(binary),
            SynExpr::Unary(unary) => self.unary(unary),
            SynExpr::Range(range) => self.range(range),
            SynExpr::Macro(mac) => self.macro_value(&mac.mac),
            SynExpr::If(branch) => match self.simple_if(branch) {
                Some(lowered) => lowered,
                None => self.hoist(expr),
            },
            SynExpr::Match(_)
            | SynExpr::Block(_)
            | SynExpr::Unsafe(_)
            | SynExpr::Const(_)
            | SynExpr::Loop(_)
            | SynExpr::While(_)
            | SynExpr::ForLoop(_)
            | SynExpr::Return(_)
            | SynExpr::Break(_)
            | SynExpr::Continue(_)
            | SynExpr::Assign(_) => self.hoist(expr),
            SynExpr::Struct(record) if self.is_constructor_result(record) => self.hoist(expr),
            SynExpr::Struct(record) => self.struct_literal(record),
            _ => unknown(self.span_of(expr)),
        }
    }

    /// The casts that change what a number is (any other cast is peeled: `dim as i64` is
    /// the same size): `e as f64` is a float, `e * 1.0` as Python's arithmetic has it (not
    /// a size: `head_dim as f64 * factor` is no product of sizes); a float cast back to an
    /// integer, `(x as f64 * factor) as usize`, is one fixed size the analysis cannot
    /// compute, Python's `int(…)` of a float.
    fn numeric_cast(&mut self, cast: &syn::ExprCast) -> Expr {
        let span = self.span_of(cast);
        if is_float_type(&cast.ty) {
            let value = self.expr(&cast.expr);
            let one = Expr::new(ExprKind::Float(1.0), span);
            let kind = ExprKind::BinOp {
                op: BinOp::Mul,
                operands: Box::new([value, one]),
            };
            return Expr::new(kind, span);
        }
        let value = self.expr(&cast.expr);
        let func = name_expr("int".to_string(), span);
        let kind = ExprKind::Call(crate::ir::Call::new(func, vec![Arg::positional(value)]));
        Expr::new(kind, span)
    }

    /// Lower a statement-like expression to statements that leave its value in a fresh
    /// temporary, push them to `pending`, and return the temporary.
    fn hoist(&mut self, expr: &SynExpr) -> Expr {
        let span = self.statement_like_span(expr);
        let temporary = self.temporary();
        let statements = self.isolated(|lowerer| {
            let mut out = Vec::new();
            let dest = Dest::Assign(Target::Name(temporary.as_str().into(), span));
            lowerer.lower_into(expr, &dest, &mut out);
            out
        });
        self.pending.extend(statements);
        name_expr(temporary, span)
    }

    /// `if c { a } else { b }` with single-expression branches (also `else if` chains):
    /// an `IfExp`. `None` when a branch has statements or the `if` has no `else` (its
    /// value is then `()`), or the condition is an `if let`.
    fn simple_if(&mut self, branch: &syn::ExprIf) -> Option<Expr> {
        if !is_simple_if(branch) {
            return None;
        }
        let test = self.expr(&branch.cond);
        let body = self.expr(single_expression(&branch.then_branch)?);
        let (_, orelse) = branch.else_branch.as_ref()?;
        let orelse = match &**orelse {
            SynExpr::If(nested) => self.simple_if(nested)?,
            SynExpr::Block(block) => self.expr(single_expression(&block.block)?),
            other => self.expr(other),
        };
        let span = join(self.span(branch.if_token.span), orelse.span);
        Some(Expr::new(
            ExprKind::IfExp(Box::new([test, body, orelse])),
            span,
        ))
    }

    pub(super) fn literal(&mut self, lit: &syn::Lit) -> Expr {
        let span = self.span(lit.span());
        let kind = match lit {
            // `1f64` is an integer token with a float suffix.
            syn::Lit::Int(int) if matches!(int.suffix(), "f32" | "f64") => int
                .base10_parse::<f64>()
                .map_or(ExprKind::Unknown, ExprKind::Float),
            syn::Lit::Int(int) => int
                .base10_parse::<i64>()
                .map_or(ExprKind::Unknown, ExprKind::Int),
            syn::Lit::Float(float) => float
                .base10_parse::<f64>()
                .map_or(ExprKind::Unknown, ExprKind::Float),
            syn::Lit::Bool(value) => ExprKind::Bool(value.value),
            syn::Lit::Str(text) => ExprKind::Str(text.value().into()),
            _ => ExprKind::Unknown,
        };
        Expr::new(kind, span)
    }

    /// A path in expression position: a local name, or a chain of `Attr` over its first
    /// segment. Qualified paths (`<T as Trait>::f`) are opaque.
    fn path(&mut self, path: &syn::ExprPath) -> Expr {
        if path.qself.is_some() {
            return unknown(self.span_of(path));
        }
        let segments = &path.path.segments;
        let mut lowered: Option<Expr> = None;
        for segment in segments {
            let span = self.span(segment.ident.span());
            let name = unraw(&segment.ident);
            lowered = Some(match lowered {
                None if segments.len() == 1 => name_expr(self.resolve(&name), span),
                None => name_expr(name, span),
                Some(value) => {
                    let span = join(value.span, span);
                    Expr::new(
                        ExprKind::Attr {
                            value: Box::new(value),
                            attr: name.into(),
                        },
                        span,
                    )
                }
            });
        }
        lowered.unwrap_or_else(|| unknown(self.span_of(path)))
    }

    fn method_call(&mut self, call: &syn::ExprMethodCall) -> Expr {
        let receiver = self.expr(&call.receiver);
        // `x.is_none()` / `x.is_some()`: the test `x is None` / `x is not None` where the
        // analysis can name a path by `x` (see `Lowerer::option_test`), as a `match` arm's.
        if call.args.is_empty() && (call.method == "is_none" || call.method == "is_some") {
            let span = join(receiver.span, self.span(call.paren_token.span.close()));
            return self.option_test(&receiver, call.method == "is_none", span);
        }
        let attr_span = join(receiver.span, self.span(call.method.span()));
        let func = Expr::new(
            ExprKind::Attr {
                value: Box::new(receiver),
                attr: unraw(&call.method).into(),
            },
            attr_span,
        );
        let args = self.arguments(&call.args);
        let span = join(attr_span, self.span(call.paren_token.span.close()));
        Expr::new(ExprKind::Call(Call::new(func, args)), span)
    }

    fn call(&mut self, call: &syn::ExprCall) -> Expr {
        if is_empty_vec_constructor(&call.func) {
            // An empty list, as `vec![]` is: a capacity holds no item.
            return Expr::new(ExprKind::List(Box::default()), self.span_of(call));
        }
        let func = self.expr(&call.func);
        let args = self.arguments(&call.args);
        let span = join(func.span, self.span(call.paren_token.span.close()));
        Expr::new(ExprKind::Call(Call::new(func, args)), span)
    }

    /// `Linear { weight, span }` outside `Linear`'s constructor (a factory function's
    /// result): the call `Linear(weight=weight, span=span)`, which builds an object with
    /// those fields (Rust has no keyword arguments, so only a struct literal has them). A
    /// path of several segments or a `..base` is not lowered (the type or some fields are
    /// unknown).
    fn struct_literal(&mut self, record: &syn::ExprStruct) -> Expr {
        let span = self.span_of(record);
        let type_name = match record.path.get_ident() {
            Some(ident) if record.qself.is_none() && record.rest.is_none() => unraw(ident),
            _ => return unknown(span),
        };
        let mut args = Vec::with_capacity(record.fields.len());
        for field in &record.fields {
            let syn::Member::Named(name) = &field.member else {
                return unknown(span);
            };
            args.push(Arg::keyword(unraw(name).into(), self.expr(&field.expr)));
        }
        let func = name_expr(type_name, self.span_of(&record.path));
        Expr::new(ExprKind::Call(Call::new(func, args)), span)
    }

    fn arguments(&mut self, args: &Punctuated<SynExpr, syn::Token![,]>) -> Vec<Arg> {
        args.iter()
            .map(|arg| Arg::positional(self.expr(arg)))
            .collect()
    }

    /// `cfg.num_heads` → `Attr`; a tuple field `t.0` → `Subscript { t, [0] }`.
    fn field(&mut self, field: &syn::ExprField) -> Expr {
        let value = self.expr(&field.base);
        match &field.member {
            Member::Named(ident) => {
                let span = join(value.span, self.span(ident.span()));
                Expr::new(
                    ExprKind::Attr {
                        value: Box::new(value),
                        attr: unraw(ident).into(),
                    },
                    span,
                )
            }
            Member::Unnamed(index) => {
                let index_span = self.span(index.span);
                let span = join(value.span, index_span);
                let position = Expr::new(ExprKind::Int(i64::from(index.index)), index_span);
                Expr::new(
                    ExprKind::Subscript(Subscript::new(value, vec![position])),
                    span,
                )
            }
        }
    }

    fn binary(&mut self, binary: &syn::ExprBinary) -> Expr {
        use syn::BinOp as B;
        if let Some(op) = compound_assignment(&binary.op) {
            // `x += y` in value position: the assignment happens, the value is `()`.
            let span = self.span_of(binary);
            let target = self.assignment_target(&binary.left);
            let value = self.expr(&binary.right);
            self.pending.push(Stmt::AugAssign {
                target: Box::new(target),
                op,
                value,
                span,
            });
            return Expr::new(ExprKind::Tuple(Box::default()), span);
        }
        enum Operator {
            Arithmetic(BinOp),
            Compare(CmpOp),
        }
        let operator = match binary.op {
            B::Add(_) => Operator::Arithmetic(BinOp::Add),
            B::Sub(_) => Operator::Arithmetic(BinOp::Sub),
            B::Mul(_) => Operator::Arithmetic(BinOp::Mul),
            B::Div(_) if is_float(&binary.left) || is_float(&binary.right) => {
                Operator::Arithmetic(BinOp::Div)
            }
            B::Div(_) => Operator::Arithmetic(BinOp::FloorDiv),
            B::Rem(_) => Operator::Arithmetic(BinOp::Mod),
            B::And(_) => Operator::Compare(CmpOp::And),
            B::Or(_) => Operator::Compare(CmpOp::Or),
            B::Eq(_) => Operator::Compare(CmpOp::Eq),
            B::Ne(_) => Operator::Compare(CmpOp::NotEq),
            B::Lt(_) => Operator::Compare(CmpOp::Lt),
            B::Le(_) => Operator::Compare(CmpOp::LtE),
            B::Gt(_) => Operator::Compare(CmpOp::Gt),
            B::Ge(_) => Operator::Compare(CmpOp::GtE),
            _ => Operator::Arithmetic(BinOp::Other),
        };
        let left = self.expr(&binary.left);
        let right = self.expr(&binary.right);
        let span = join(left.span, right.span);
        let operands = Box::new([left, right]);
        let kind = match operator {
            Operator::Arithmetic(op) => ExprKind::BinOp { op, operands },
            Operator::Compare(op) => ExprKind::Compare { op, operands },
        };
        Expr::new(kind, span)
    }

    /// `-x` is `Neg(x)`, folded into number literals (`-1` is `Int(-1)`); `!x` is
    /// `Compare { x, Not, <nothing> }` as in the Python frontend. (`*x` is peeled.)
    fn unary(&mut self, unary: &syn::ExprUnary) -> Expr {
        let operand = self.expr(&unary.expr);
        let op_span = self.span_of(&unary.op);
        let span = join(op_span, operand.span);
        let kind = match unary.op {
            UnOp::Neg(_) => match operand.kind {
                ExprKind::Int(value) => {
                    value.checked_neg().map_or(ExprKind::Unknown, ExprKind::Int)
                }
                ExprKind::Float(value) => ExprKind::Float(-value),
                _ => ExprKind::Neg(Box::new(operand)),
            },
            UnOp::Not(_) => {
                let nothing = Expr::new(
                    ExprKind::Unknown,
                    Span::new(span.end as usize, span.end as usize),
                );
                ExprKind::Compare {
                    op: CmpOp::Not,
                    operands: Box::new([operand, nothing]),
                }
            }
            _ => return operand,
        };
        Expr::new(kind, span)
    }

    /// `a..b` → `Slice { a, b }`; `a..=b` → `Slice { a, b + 1 }`.
    fn range(&mut self, range: &syn::ExprRange) -> Expr {
        let limits_span = match &range.limits {
            RangeLimits::HalfOpen(dots) => self.span(dots.spans[0]),
            RangeLimits::Closed(dots) => self.span(dots.spans[0]),
        };
        let lower = range.start.as_ref().map(|start| self.expr(start));
        let upper = range.end.as_ref().map(|end| {
            let end = self.expr(end);
            if matches!(range.limits, RangeLimits::Closed(_)) {
                let one = Expr::new(ExprKind::Int(1), end.span);
                let span = end.span;
                Expr::new(
                    ExprKind::BinOp {
                        op: BinOp::Add,
                        operands: Box::new([end, one]),
                    },
                    span,
                )
            } else {
                end
            }
        });
        let mut span = limits_span;
        for part in lower.iter().chain(upper.iter()) {
            span = join(span, part.span);
        }
        let bounds = SliceBounds {
            lower,
            upper,
            step: None,
        };
        Expr::new(ExprKind::Slice(Box::new(bounds)), span)
    }

    /// The target of an assignment expression `lhs = …` (no declaration: `x = …` assigns
    /// whichever `x` is in scope).
    pub(super) fn assignment_target(&mut self, lhs: &SynExpr) -> Target {
        match peel(lhs) {
            SynExpr::Path(path) if path.qself.is_none() && path.path.segments.len() == 1 => {
                let ident = &path.path.segments[0].ident;
                Target::Name(self.resolve(&unraw(ident)).into(), self.span(ident.span()))
            }
            SynExpr::Field(field) => match &field.member {
                Member::Named(ident) => {
                    let value = self.expr(&field.base);
                    let span = join(value.span, self.span(ident.span()));
                    Target::Attr {
                        value: Box::new(value),
                        attr: unraw(ident).into(),
                        span,
                    }
                }
                Member::Unnamed(_) => Target::Other(self.span_of(field)),
            },
            SynExpr::Tuple(tuple) => {
                let span = self.span(tuple.paren_token.span.join());
                let items = tuple
                    .elems
                    .iter()
                    .map(|e| self.assignment_target(e))
                    .collect();
                Target::Tuple(items, span)
            }
            SynExpr::Infer(infer) => {
                Target::Name("_".into(), self.span(infer.underscore_token.span))
            }
            other => Target::Other(self.span_of(other)),
        }
    }

    /// From `if` to the closing brace of the last `else` branch.
    pub(super) fn if_span(&self, branch: &syn::ExprIf) -> Span {
        let end = match &branch.else_branch {
            Some((_, orelse)) => self.statement_like_span(orelse),
            None => self.span(branch.then_branch.brace_token.span.close()),
        };
        join(self.span(branch.if_token.span), end)
    }

    /// The span of an expression that statements are made from (cheaper than
    /// re-tokenizing it: the keyword to the closing brace).
    pub(super) fn statement_like_span(&self, expr: &SynExpr) -> Span {
        match expr {
            SynExpr::If(branch) => self.if_span(branch),
            SynExpr::Match(m) => self.span_between(m.match_token.span, m.brace_token.span.close()),
            SynExpr::Block(block) => self.span(block.block.brace_token.span.join()),
            SynExpr::Unsafe(block) => self.span_between(
                block.unsafe_token.span,
                block.block.brace_token.span.close(),
            ),
            SynExpr::Loop(l) => {
                self.span_between(l.loop_token.span, l.body.brace_token.span.close())
            }
            SynExpr::While(w) => {
                self.span_between(w.while_token.span, w.body.brace_token.span.close())
            }
            SynExpr::ForLoop(f) => {
                self.span_between(f.for_token.span, f.body.brace_token.span.close())
            }
            other => self.span_of(other),
        }
    }
}

/// Strip the wrappers the IR erases (see the module docs), outermost first.
pub(super) fn peel(expr: &SynExpr) -> &SynExpr {
    let mut expr = expr;
    loop {
        expr = match expr {
            SynExpr::Paren(inner) => &inner.expr,
            SynExpr::Group(inner) => &inner.expr,
            SynExpr::Try(inner) => &inner.expr,
            SynExpr::Reference(inner) => &inner.expr,
            SynExpr::Cast(inner) if !changes_number(inner) => &inner.expr,
            SynExpr::Unary(inner) if matches!(inner.op, UnOp::Deref(_)) => &inner.expr,
            SynExpr::MethodCall(call) if is_transparent_method(call) => &call.receiver,
            SynExpr::Call(call)
                if call.args.len() == 1 && is_transparent_constructor(&call.func) =>
            {
                &call.args[0]
            }
            _ => return expr,
        };
    }
}

/// A cast to a float, or of a float to an integer (see `Lowerer::numeric_cast`).
fn changes_number(cast: &syn::ExprCast) -> bool {
    is_float_type(&cast.ty) || (super::items::is_integer_type(&cast.ty) && is_float(&cast.expr))
}

/// `.unwrap()`, `.expect(msg)`, `.clone()`, `.as_ref()`: same tensor, same layout.
fn is_transparent_method(call: &syn::ExprMethodCall) -> bool {
    let method = &call.method;
    match call.args.len() {
        0 => method == "unwrap" || method == "clone" || method == "as_ref",
        1 => method == "expect",
        _ => false,
    }
}

/// `Ok(x)`, `Some(x)`, `Box::new(x)`, `Arc::new(x)`, `Rc::new(x)`.
fn is_transparent_constructor(func: &SynExpr) -> bool {
    let SynExpr::Path(path) = func else {
        return false;
    };
    if path.qself.is_some() {
        return false;
    }
    let mut segments = path.path.segments.iter().rev();
    match segments.next() {
        Some(last) if last.ident == "Ok" || last.ident == "Some" => true,
        Some(last) if last.ident == "new" => segments.next().is_some_and(|owner| {
            owner.ident == "Box" || owner.ident == "Arc" || owner.ident == "Rc"
        }),
        _ => false,
    }
}

/// `x += y` and friends, with the arithmetic they perform.
fn compound_assignment(op: &syn::BinOp) -> Option<BinOp> {
    use syn::BinOp as B;
    Some(match op {
        B::AddAssign(_) => BinOp::Add,
        B::SubAssign(_) => BinOp::Sub,
        B::MulAssign(_) => BinOp::Mul,
        B::DivAssign(_) => BinOp::FloorDiv,
        B::RemAssign(_) => BinOp::Mod,
        B::BitXorAssign(_)
        | B::BitAndAssign(_)
        | B::BitOrAssign(_)
        | B::ShlAssign(_)
        | B::ShrAssign(_) => BinOp::Other,
        _ => return None,
    })
}

/// Is `expr` visibly a floating-point value? Decides whether `/` is true division.
fn is_float(expr: &SynExpr) -> bool {
    match expr {
        SynExpr::Lit(lit) => match &lit.lit {
            syn::Lit::Float(_) => true,
            syn::Lit::Int(int) => matches!(int.suffix(), "f32" | "f64"),
            _ => false,
        },
        SynExpr::Paren(inner) => is_float(&inner.expr),
        SynExpr::Group(inner) => is_float(&inner.expr),
        SynExpr::Unary(unary) => is_float(&unary.expr),
        SynExpr::Cast(cast) => is_float_type(&cast.ty),
        SynExpr::Binary(binary) => is_float(&binary.left) || is_float(&binary.right),
        SynExpr::MethodCall(call) => {
            matches!(
                call.method.to_string().as_str(),
                "sqrt"
                    | "powf"
                    | "powi"
                    | "exp"
                    | "ln"
                    | "log"
                    | "log2"
                    | "log10"
                    | "recip"
                    | "to_f64"
                    | "to_f32"
            ) || is_float(&call.receiver)
        }
        SynExpr::Call(call) => match &*call.func {
            SynExpr::Path(path) => path
                .path
                .segments
                .first()
                .is_some_and(|s| s.ident == "f64" || s.ident == "f32"),
            _ => false,
        },
        SynExpr::Path(path) => path
            .path
            .segments
            .iter()
            .any(|s| s.ident == "f64" || s.ident == "f32"),
        _ => false,
    }
}

fn is_float_type(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Path(path) => path.path.segments.last().is_some_and(|s| {
            matches!(s.ident.to_string().as_str(), "f64" | "f32" | "f16" | "bf16")
        }),
        syn::Type::Paren(inner) => is_float_type(&inner.elem),
        syn::Type::Group(inner) => is_float_type(&inner.elem),
        _ => false,
    }
}

/// See [`Lowerer::simple_if`].
fn is_simple_if(branch: &syn::ExprIf) -> bool {
    if contains_let(&branch.cond) || single_expression(&branch.then_branch).is_none() {
        return false;
    }
    match branch.else_branch.as_ref().map(|(_, e)| &**e) {
        Some(SynExpr::If(nested)) => is_simple_if(nested),
        Some(SynExpr::Block(block)) => single_expression(&block.block).is_some(),
        _ => false,
    }
}

/// The tail expression of a block that has nothing else, when that expression is not
/// statement-like itself.
fn single_expression(block: &syn::Block) -> Option<&SynExpr> {
    match block.stmts.as_slice() {
        [syn::Stmt::Expr(expr, None)] if !is_statement_like(peel(expr)) => Some(expr),
        _ => None,
    }
}

/// Expressions that are lowered to statements rather than to an IR expression.
pub(super) fn is_statement_like(expr: &SynExpr) -> bool {
    matches!(
        expr,
        SynExpr::If(_)
            | SynExpr::Match(_)
            | SynExpr::Block(_)
            | SynExpr::Unsafe(_)
            | SynExpr::Const(_)
            | SynExpr::Loop(_)
            | SynExpr::While(_)
            | SynExpr::ForLoop(_)
            | SynExpr::Return(_)
            | SynExpr::Break(_)
            | SynExpr::Continue(_)
            | SynExpr::Assign(_)
            | SynExpr::Macro(_)
    )
}

/// Does a condition contain an `if let` / let-chain binding?
pub(super) fn contains_let(cond: &SynExpr) -> bool {
    match cond {
        SynExpr::Let(_) => true,
        SynExpr::Binary(binary) => contains_let(&binary.left) || contains_let(&binary.right),
        SynExpr::Paren(inner) => contains_let(&inner.expr),
        SynExpr::Group(inner) => contains_let(&inner.expr),
        _ => false,
    }
}

/// `Vec::new` / `Vec::with_capacity`, the constructors of an empty `Vec` (model code fills
/// the list of its layers with `push` in a loop).
fn is_empty_vec_constructor(func: &SynExpr) -> bool {
    let SynExpr::Path(path) = func else {
        return false;
    };
    let names: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    path.qself.is_none()
        && names.len() == 2
        && names[0] == "Vec"
        && ["new", "with_capacity"].contains(&names[1].as_str())
}
