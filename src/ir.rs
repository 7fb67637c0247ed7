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
}

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
    /// Something the frontend does not model (lambdas, comprehensions, f-strings, ...).
    Unknown,
}

#[derive(Debug, Clone)]
pub struct Arg {
    /// Keyword name for `f(dim=1)`, `None` for positional.
    pub name: Option<String>,
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
    /// Dotted name of a `Name`/`Attr` chain (`torch.nn.functional.softmax`), if it is one.
    pub fn dotted_name(&self) -> Option<String> {
        match &self.kind {
            ExprKind::Name(n) => Some(n.clone()),
            ExprKind::Attr { value, attr } => value.dotted_name().map(|b| format!("{b}.{attr}")),
            _ => None,
        }
    }
}
