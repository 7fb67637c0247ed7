//! The tensor-op IR: a small, language-neutral tree that both frontends produce
//! (`frontend::python` from its own Python parser, `frontend::rust` from syn) and the
//! abstract interpreter in `analysis` walks.
//!
//! It keeps only what layout reasoning needs: bindings, calls, attribute access,
//! subscripts, integer arithmetic, control flow, and byte spans into the source for
//! every expression. Everything else is lowered to [`ExprKind::Unknown`] /
//! [`Stmt::Other`], so the interpreter can stay sound by treating it as opaque.
//!
//! Conventions shared by both frontends:
//! - A method call `x.transpose(1, 2)` is `Call { func: Attr { value: x, attr: "transpose" } }`.
//! - A qualified function `torch.nn.functional.softmax` / `Tensor::cat` / `candle_nn::ops::rms_norm`
//!   is a chain of `Attr` over a `Name` (`Tensor::cat` becomes `Attr(Name("Tensor"), "cat")`).
//! - Rust's `?`, `.unwrap()`, `.expect(..)`, `&x`, `&mut x`, `*x` and `.clone()` on a
//!   tensor are erased by the Rust frontend (they do not change a layout).
//! - A Rust constructor (`fn new`/`fn load` returning `Self { field: expr, .. }`) is
//!   lowered to a method with `is_constructor = true` whose body assigns `self.field = expr`,
//!   exactly like a Python `__init__`.

use std::sync::Arc;

/// Byte range `[start, end)` into the source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord, serde::Serialize)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
    /// Is this a span of another file of the tree (see [`OTHER_FILE_SPANS`])?
    pub fn in_other_file(self) -> bool {
        self.start >= OTHER_FILE_SPANS
    }
}

/// Spans at or past this offset address another file of the tree than the one analysed
/// (`analysis::foreign` shifts such a module's spans into a range of its own); the files
/// linted themselves are smaller (larger ones are refused before parsing).
pub const OTHER_FILE_SPANS: u32 = 1 << 31;

/// Source language a module came from; selects the op tables the analysis uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    Python,
    Rust,
}

/// One source file, lowered.
#[derive(Debug, Clone)]
pub struct Module {
    pub language: Language,
    /// Top-level statements (imports are kept as [`Stmt::Import`]).
    pub body: Vec<Stmt>,
    /// Free functions, in source order.
    pub functions: Vec<Arc<Function>>,
    /// Classes (Python) / structs with `impl` blocks (Rust).
    pub classes: Vec<Arc<Class>>,
}

#[derive(Debug, Clone)]
pub struct Class {
    pub name: String,
    pub methods: Vec<Arc<Function>>,
    /// Names of base classes as written (`nn.Module`, `torch.nn.Module`), for information.
    pub bases: Vec<String>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Function {
    pub name: String,
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
    pub span: Span,
    /// Span of the function's name, for diagnostics that point at a definition.
    pub name_span: Span,
    /// A method (first parameter is the receiver `self`; it is *not* listed in `params`).
    pub is_method: bool,
    /// Python `__init__`, or a Rust `new`/`load`/... lowered to `self.field = ...` assignments.
    pub is_constructor: bool,
}

#[derive(Debug, Clone)]
pub struct Param {
    pub name: String,
    /// Dimension names from a shape annotation, e.g. jaxtyping `Float[Tensor, "b t c"]`
    /// gives `["b", "t", "c"]`. `*batch` / `...` entries are kept as written.
    pub shape_annotation: Option<Vec<String>>,
    /// Annotated `int` (`key_dim: int`): a number, never a tensor.
    pub annotated_int: bool,
    pub default: Option<Expr>,
    /// `*args` / `**kwargs`
    pub variadic: bool,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum Stmt {
    /// `a = b = value`, `a, b = value`, `self.x = value`, Rust `let (a, b) = value;`.
    Assign {
        targets: Vec<Target>,
        value: Expr,
        span: Span,
    },
    /// `x += y` and friends: the interpreter treats it as `x = x <op> y`.
    AugAssign {
        target: Target,
        op: BinOp,
        value: Expr,
        span: Span,
    },
    Expr(Expr),
    Return {
        value: Option<Expr>,
        span: Span,
    },
    If {
        test: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
        span: Span,
    },
    /// `for`/`while`/Rust `loop`: the body may run zero or more times.
    Loop {
        target: Option<Target>,
        iter: Option<Expr>,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
        span: Span,
    },
    /// `with ctx as t: body` (the context expressions are kept for backend pinning).
    With {
        items: Vec<(Expr, Option<Target>)>,
        body: Vec<Stmt>,
        span: Span,
    },
    /// `try: body except: handlers finally: finalbody` — handlers may run after any prefix of body.
    Try {
        body: Vec<Stmt>,
        handlers: Vec<Vec<Stmt>>,
        orelse: Vec<Stmt>,
        finalbody: Vec<Stmt>,
        span: Span,
    },
    Assert {
        test: Expr,
        span: Span,
    },
    /// `raise` / `panic!` / `bail!`: the path ends.
    Raise {
        span: Span,
    },
    /// `import torch.nn.functional as F` → `Import { module: "torch.nn.functional", alias: Some("F") }`;
    /// `from einops import rearrange` → `Import { module: "einops.rearrange", alias: Some("rearrange") }`.
    Import {
        module: String,
        alias: Option<String>,
        span: Span,
    },
    /// A nested function or class definition inside a body.
    FunctionDef(Arc<Function>),
    ClassDef(Arc<Class>),
    /// `break` / `continue`
    Jump {
        span: Span,
    },
    /// Anything else (`pass`, `del`, `global`, ...): no effect on layouts.
    Other {
        span: Span,
    },
}

#[derive(Debug, Clone)]
pub enum Target {
    Name(String, Span),
    /// `obj.attr = ...` (mostly `self.x = ...`)
    Attr {
        value: Box<Expr>,
        attr: String,
        span: Span,
    },
    Tuple(Vec<Target>, Span),
    /// `*rest` inside a tuple target
    Starred(Box<Target>, Span),
    /// `x[i] = ...`: an item of `value` is written. On a list the list changes; on a tensor
    /// the data does, in place, never its layout.
    Item {
        value: Box<Expr>,
        span: Span,
    },
    /// Anything else that cannot be tracked (`x.y.z = ...` on other objects, ...).
    Other(Span),
}

impl Target {
    /// The target as written.
    pub fn span(&self) -> Span {
        match self {
            Target::Name(_, span)
            | Target::Attr { span, .. }
            | Target::Tuple(_, span)
            | Target::Starred(_, span)
            | Target::Item { span, .. }
            | Target::Other(span) => *span,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum ExprKind {
    Name(String),
    Attr {
        value: Box<Expr>,
        attr: String,
    },
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
    None,
    Ellipsis,
    Tuple(Vec<Expr>),
    List(Vec<Expr>),
    /// `*x` in a call or tuple.
    Starred(Box<Expr>),
    Call {
        func: Box<Expr>,
        args: Vec<Arg>,
    },
    /// `value[i]`, `value[a:b, ..., None]`: one entry per comma-separated index.
    Subscript {
        value: Box<Expr>,
        index: Vec<Expr>,
    },
    /// A slice `a:b:c` (Python subscripts) or a range `a..b` / `..` (Rust); missing parts are `None`.
    Slice {
        lower: Option<Box<Expr>>,
        upper: Option<Box<Expr>>,
        step: Option<Box<Expr>>,
    },
    BinOp {
        op: BinOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    Neg(Box<Expr>),
    /// `body if test else orelse`
    IfExp {
        test: Box<Expr>,
        body: Box<Expr>,
        orelse: Box<Expr>,
    },
    /// Comparisons and boolean operators: only kept so tests can be recognised.
    Compare {
        left: Box<Expr>,
        op: CmpOp,
        right: Box<Expr>,
    },
    /// `[element for target in iter]`, `(element for target in iter)`: one `for` clause and
    /// no `if` (others are `Unknown`). The target is local to the comprehension.
    Comprehension {
        element: Box<Expr>,
        // Boxed: every expression is as large as the largest variant.
        target: Box<Target>,
        iter: Box<Expr>,
    },
    /// `lambda a, b: body` with plain positional parameters (others are `Unknown`).
    Lambda {
        params: Vec<String>,
        body: Box<Expr>,
    },
    /// Something the frontend does not model (dicts, sets, f-strings, ...).
    Unknown,
}

#[derive(Debug, Clone)]
pub struct Arg {
    /// Keyword name for `f(dim=1)`, `None` for positional. Boxed: most arguments have
    /// none, and an argument list of two then fits a smaller block (a call on each line of
    /// a large file keeps thousands).
    pub name: Option<Box<String>>,
    pub value: Expr,
    /// `*args` spread.
    pub star: bool,
    /// `**kwargs` spread.
    pub double_star: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// `/` (true division in Python; integer division on Rust integers)
    Div,
    FloorDiv,
    Mod,
    Pow,
    MatMul,
    /// `&`, `|`, `^`, shifts, `and`/`or`: no size meaning.
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    NotEq,
    Lt,
    LtE,
    Gt,
    GtE,
    Is,
    IsNot,
    In,
    NotIn,
    And,
    Or,
    Not,
}

impl Stmt {
    /// Run `f` on each block of statements nested directly in this statement (the bodies
    /// of `if`, loops, `with`, and every part of a `try`); definitions are not blocks.
    pub fn for_each_block<'s>(&'s self, mut f: impl FnMut(&'s [Stmt])) {
        match self {
            Stmt::If { body, orelse, .. } | Stmt::Loop { body, orelse, .. } => {
                f(body);
                f(orelse);
            }
            Stmt::With { body, .. } => f(body),
            Stmt::Try {
                body,
                handlers,
                orelse,
                finalbody,
                ..
            } => {
                f(body);
                handlers.iter().for_each(|h| f(h));
                f(orelse);
                f(finalbody);
            }
            _ => {}
        }
    }
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Self {
        Expr { kind, span }
    }
    /// The same expression, spanning `span` (a comprehension's brackets).
    pub fn with_span(self, span: Span) -> Self {
        Expr { span, ..self }
    }
    /// Dotted name of a `Name`/`Attr` chain (`torch.nn.functional.softmax`), if it is one.
    pub fn dotted_name(&self) -> Option<String> {
        match &self.kind {
            ExprKind::Name(n) => Some(n.clone()),
            ExprKind::Attr { value, attr } => value.dotted_name().map(|b| format!("{b}.{attr}")),
            _ => None,
        }
    }
}

/// Move every span of `module` by `by` bytes (a module of another file placed in a span
/// range of its own, see [`OTHER_FILE_SPANS`]).
pub fn shift_spans(module: &mut Module, by: u32) {
    for f in &mut module.functions {
        shift_function(Arc::make_mut(f), by);
    }
    for c in &mut module.classes {
        shift_class(Arc::make_mut(c), by);
    }
    shift_block(&mut module.body, by);
}

fn shift(s: &mut Span, by: u32) {
    s.start = s.start.saturating_add(by);
    s.end = s.end.saturating_add(by);
}

fn shift_class(c: &mut Class, by: u32) {
    shift(&mut c.span, by);
    for m in &mut c.methods {
        shift_function(Arc::make_mut(m), by);
    }
}

fn shift_function(f: &mut Function, by: u32) {
    shift(&mut f.span, by);
    shift(&mut f.name_span, by);
    for p in &mut f.params {
        shift(&mut p.span, by);
        if let Some(d) = &mut p.default {
            shift_expr(d, by);
        }
    }
    shift_block(&mut f.body, by);
}

fn shift_block(body: &mut [Stmt], by: u32) {
    for s in body {
        shift_stmt(s, by);
    }
}

fn shift_stmt(s: &mut Stmt, by: u32) {
    match s {
        Stmt::Assign {
            targets,
            value,
            span,
        } => {
            targets.iter_mut().for_each(|t| shift_target(t, by));
            shift_expr(value, by);
            shift(span, by);
        }
        Stmt::AugAssign {
            target,
            value,
            span,
            ..
        } => {
            shift_target(target, by);
            shift_expr(value, by);
            shift(span, by);
        }
        Stmt::Expr(e) => shift_expr(e, by),
        Stmt::Return { value, span } => {
            if let Some(v) = value {
                shift_expr(v, by);
            }
            shift(span, by);
        }
        Stmt::If {
            test,
            body,
            orelse,
            span,
        } => {
            shift_expr(test, by);
            shift_block(body, by);
            shift_block(orelse, by);
            shift(span, by);
        }
        Stmt::Loop {
            target,
            iter,
            body,
            orelse,
            span,
        } => {
            if let Some(t) = target {
                shift_target(t, by);
            }
            if let Some(i) = iter {
                shift_expr(i, by);
            }
            shift_block(body, by);
            shift_block(orelse, by);
            shift(span, by);
        }
        Stmt::With { items, body, span } => {
            for (e, t) in items {
                shift_expr(e, by);
                if let Some(t) = t {
                    shift_target(t, by);
                }
            }
            shift_block(body, by);
            shift(span, by);
        }
        Stmt::Try {
            body,
            handlers,
            orelse,
            finalbody,
            span,
        } => {
            shift_block(body, by);
            handlers.iter_mut().for_each(|h| shift_block(h, by));
            shift_block(orelse, by);
            shift_block(finalbody, by);
            shift(span, by);
        }
        Stmt::Assert { test, span } => {
            shift_expr(test, by);
            shift(span, by);
        }
        Stmt::Raise { span }
        | Stmt::Import { span, .. }
        | Stmt::Jump { span }
        | Stmt::Other { span } => shift(span, by),
        Stmt::FunctionDef(f) => shift_function(Arc::make_mut(f), by),
        Stmt::ClassDef(c) => shift_class(Arc::make_mut(c), by),
    }
}

fn shift_target(t: &mut Target, by: u32) {
    match t {
        Target::Name(_, span) | Target::Other(span) => shift(span, by),
        Target::Attr { value, span, .. } | Target::Item { value, span } => {
            shift_expr(value, by);
            shift(span, by);
        }
        Target::Tuple(items, span) => {
            items.iter_mut().for_each(|i| shift_target(i, by));
            shift(span, by);
        }
        Target::Starred(inner, span) => {
            shift_target(inner, by);
            shift(span, by);
        }
    }
}

fn shift_expr(e: &mut Expr, by: u32) {
    shift(&mut e.span, by);
    match &mut e.kind {
        ExprKind::Attr { value, .. } | ExprKind::Starred(value) | ExprKind::Neg(value) => {
            shift_expr(value, by)
        }
        ExprKind::Tuple(items) | ExprKind::List(items) => {
            items.iter_mut().for_each(|i| shift_expr(i, by))
        }
        ExprKind::Call { func, args } => {
            shift_expr(func, by);
            args.iter_mut().for_each(|a| shift_expr(&mut a.value, by));
        }
        ExprKind::Subscript { value, index } => {
            shift_expr(value, by);
            index.iter_mut().for_each(|i| shift_expr(i, by));
        }
        ExprKind::Slice { lower, upper, step } => {
            for part in [lower, upper, step].into_iter().flatten() {
                shift_expr(part, by);
            }
        }
        ExprKind::BinOp { left, right, .. } | ExprKind::Compare { left, right, .. } => {
            shift_expr(left, by);
            shift_expr(right, by);
        }
        ExprKind::IfExp { test, body, orelse } => {
            shift_expr(test, by);
            shift_expr(body, by);
            shift_expr(orelse, by);
        }
        ExprKind::Comprehension {
            element,
            target,
            iter,
        } => {
            shift_expr(element, by);
            shift_target(target, by);
            shift_expr(iter, by);
        }
        ExprKind::Lambda { body, .. } => shift_expr(body, by),
        ExprKind::Name(_)
        | ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Bool(_)
        | ExprKind::None
        | ExprKind::Ellipsis
        | ExprKind::Unknown => {}
    }
}
