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

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
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

/// An identifier or string of the source (`x`, `transpose`, `"b t c"`), shared: the parser
/// interns each distinct text once per file, so a name repeated on every line of a large
/// file costs a pointer, not an allocation. One word (the text sits behind a second
/// pointer), so the expressions that hold one stay small. Reads as a `str`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Name(Arc<Box<str>>);

impl Name {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Name {
    fn new(text: Box<str>) -> Self {
        Name(Arc::new(text))
    }
}

impl Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Name {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Name {
    fn from(text: &str) -> Self {
        Name::new(text.into())
    }
}

impl From<String> for Name {
    fn from(text: String) -> Self {
        Name::new(text.into_boxed_str())
    }
}

impl From<&String> for Name {
    fn from(text: &String) -> Self {
        Name::new(text.as_str().into())
    }
}

impl From<Name> for String {
    fn from(name: Name) -> Self {
        name.as_str().to_string()
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Name {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<Name> for str {
    fn eq(&self, other: &Name) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Name> for &str {
    fn eq(&self, other: &Name) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<Name> for String {
    fn eq(&self, other: &Name) -> bool {
        self.as_str() == other.as_str()
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl serde::Serialize for Name {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
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
    /// Class-level `name = value` statements (`rnn_class = nn.GRU`), in order; a subclass
    /// overrides them (`ClassDef::class_attr`).
    pub attrs: Vec<(String, Expr)>,
    /// Rust: the fields whose declared type names a struct of the file, as `(field, type,
    /// list)` (`rotary_emb: Arc<RotaryEmbedding>` → `("rotary_emb", "RotaryEmbedding",
    /// false)`, `blocks: Vec<Block>` → `("blocks", "Block", true)`); empty for Python.
    pub field_types: Vec<(String, String, bool)>,
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
    /// The struct a Rust parameter holds (`rotary_emb: Arc<RotaryEmbedding>`,
    /// `&RotaryEmbedding`): an object of that class when the file defines it. Python's
    /// annotations are not read for it: measured on the first tree, objects for them cost
    /// 2 % of the analysis and changed no finding.
    pub annotated_type: Option<String>,
    pub default: Option<Expr>,
    /// `*args` / `**kwargs`
    pub variadic: bool,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum Stmt {
    /// `a = b = value`, `a, b = value`, `self.x = value`, Rust `let (a, b) = value;`.
    Assign {
        targets: Targets,
        value: Expr,
        span: Span,
    },
    /// `x += y` and friends: the interpreter treats it as `x = x <op> y`.
    AugAssign {
        // Boxed, as the larger parts of other statements: every statement of a body is as
        // large as the largest kind, and large files hold a statement per line.
        target: Box<Target>,
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
        test: Box<Expr>,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
        span: Span,
    },
    /// `for`/`while`/Rust `loop`: the body may run zero or more times.
    Loop {
        target: Option<Box<Target>>,
        iter: Option<Box<Expr>>,
        body: Vec<Stmt>,
        // A boxed slice, not a list: the largest kind sets the size of every statement.
        orelse: Box<[Stmt]>,
        span: Span,
    },
    /// `with ctx as t: body` (the context expressions are kept for backend pinning).
    With {
        items: Vec<(Expr, Option<Target>)>,
        body: Vec<Stmt>,
        span: Span,
    },
    /// `try: body except: handlers finally: finalbody` — handlers may run after any prefix of body.
    Try(Box<Try>),
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
        module: Name,
        alias: Option<Name>,
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

/// `try: body except: handlers else: orelse finally: finalbody` — handlers may run after
/// any prefix of body.
#[derive(Debug, Clone)]
pub struct Try {
    pub body: Vec<Stmt>,
    pub handlers: Vec<Vec<Stmt>>,
    pub orelse: Vec<Stmt>,
    pub finalbody: Vec<Stmt>,
    pub span: Span,
}

/// The targets of an assignment, in order. Nearly always one, held inline: a large file
/// holds an assignment per line, and a list would cost each an allocation for its one
/// target. `a = b = value` holds several. Reads as a slice.
#[derive(Debug, Clone)]
pub enum Targets {
    One(Target),
    Many(Box<[Target]>),
}

impl From<Target> for Targets {
    fn from(target: Target) -> Self {
        Targets::One(target)
    }
}

impl From<Vec<Target>> for Targets {
    fn from(mut targets: Vec<Target>) -> Self {
        match targets.pop() {
            Some(target) if targets.is_empty() => Targets::One(target),
            Some(last) => {
                targets.push(last);
                Targets::Many(targets.into_boxed_slice())
            }
            None => Targets::Many(Box::default()),
        }
    }
}

impl Deref for Targets {
    type Target = [Target];
    fn deref(&self) -> &[Target] {
        match self {
            Targets::One(target) => std::slice::from_ref(target),
            Targets::Many(targets) => targets,
        }
    }
}

impl std::ops::DerefMut for Targets {
    fn deref_mut(&mut self) -> &mut [Target] {
        match self {
            Targets::One(target) => std::slice::from_mut(target),
            Targets::Many(targets) => targets,
        }
    }
}

impl<'a> IntoIterator for &'a Targets {
    type Item = &'a Target;
    type IntoIter = std::slice::Iter<'a, Target>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[derive(Debug, Clone)]
pub enum Target {
    Name(Name, Span),
    /// `obj.attr = ...` (mostly `self.x = ...`)
    Attr {
        value: Box<Expr>,
        attr: Name,
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

// Every variant's fields fit in two words, so that an expression is four: a large file
// holds a few per line. A variant with more parts keeps them in one allocation, and a call
// or subscript keeps its callee or value in the slice of its arguments or index.
#[derive(Debug, Clone)]
pub enum ExprKind {
    Name(Name),
    Attr {
        value: Box<Expr>,
        attr: Name,
    },
    Int(i64),
    Float(f64),
    Str(Name),
    Bool(bool),
    None,
    Ellipsis,
    Tuple(Box<[Expr]>),
    List(Box<[Expr]>),
    /// `*x` in a call or tuple.
    Starred(Box<Expr>),
    /// `func(args)`.
    Call(Call),
    /// `value[i]`, `value[a:b, ..., None]`: one entry per comma-separated index.
    Subscript(Subscript),
    /// A slice `a:b:c` (Python subscripts) or a range `a..b` / `..` (Rust); missing parts are `None`.
    Slice(Box<SliceBounds>),
    BinOp {
        op: BinOp,
        /// Left and right.
        operands: Box<[Expr; 2]>,
    },
    Neg(Box<Expr>),
    /// `body if test else orelse`: test, body and orelse.
    IfExp(Box<[Expr; 3]>),
    /// Comparisons and boolean operators: only kept so tests can be recognised.
    Compare {
        op: CmpOp,
        /// Left and right.
        operands: Box<[Expr; 2]>,
    },
    /// `[element for target in iter if cond]`, `(element for target in iter)`: one `for`
    /// clause with any number of `if` filters (others are `Unknown`). The target is local to
    /// the comprehension.
    Comprehension(Box<Comprehension>),
    /// `lambda a, b: body` with plain positional parameters (others are `Unknown`).
    Lambda(Box<Lambda>),
    /// A keyword or spread argument of a call (only inside an [`Arg`]).
    Labelled(Box<Labelled>),
    /// Something the frontend does not model (dicts, sets, f-strings, ...).
    Unknown,
}

impl ExprKind {
    /// A call's callee and arguments.
    pub fn as_call(&self) -> Option<(&Expr, &[Arg])> {
        match self {
            ExprKind::Call(call) => Some((call.func(), call.args())),
            _ => None,
        }
    }
    /// A subscript's value and index entries.
    pub fn as_subscript(&self) -> Option<(&Expr, &[Expr])> {
        match self {
            ExprKind::Subscript(subscript) => Some((subscript.value(), subscript.index())),
            _ => None,
        }
    }
}

/// A call's callee and arguments, in one slice: the callee first, as a positional argument.
#[derive(Debug, Clone)]
pub struct Call(Box<[Arg]>);

impl Call {
    pub fn new(func: Expr, args: Vec<Arg>) -> Self {
        let mut parts = Vec::with_capacity(args.len() + 1);
        parts.push(Arg(func));
        parts.extend(args);
        Call(parts.into_boxed_slice())
    }
    /// The called expression (`x.view` of `x.view(B, -1)`).
    pub fn func(&self) -> &Expr {
        &self.0[0].0
    }
    pub fn args(&self) -> &[Arg] {
        &self.0[1..]
    }
    pub fn func_mut(&mut self) -> &mut Expr {
        &mut self.0[0].0
    }
    fn parts_mut(&mut self) -> impl Iterator<Item = &mut Expr> {
        self.0.iter_mut().map(|a| &mut a.0)
    }
}

/// A subscript's value and index entries, in one slice: the value first.
#[derive(Debug, Clone)]
pub struct Subscript(Box<[Expr]>);

impl Subscript {
    pub fn new(value: Expr, index: Vec<Expr>) -> Self {
        let mut parts = Vec::with_capacity(index.len() + 1);
        parts.push(value);
        parts.extend(index);
        Subscript(parts.into_boxed_slice())
    }
    /// The subscripted expression (`x` of `x[0]`).
    pub fn value(&self) -> &Expr {
        &self.0[0]
    }
    pub fn index(&self) -> &[Expr] {
        &self.0[1..]
    }
    pub fn value_mut(&mut self) -> &mut Expr {
        &mut self.0[0]
    }
    pub fn into_value(self) -> Expr {
        let mut parts = self.0.into_vec();
        parts.swap_remove(0)
    }
}

#[derive(Debug, Clone)]
pub struct SliceBounds {
    pub lower: Option<Expr>,
    pub upper: Option<Expr>,
    pub step: Option<Expr>,
}

#[derive(Debug, Clone)]
pub struct Comprehension {
    pub element: Expr,
    pub target: Target,
    pub iter: Expr,
    /// The clause's `if` filters, all of which an item must pass.
    pub conditions: Vec<Expr>,
}

#[derive(Debug, Clone)]
pub struct Lambda {
    pub params: Box<[Name]>,
    pub body: Expr,
}

#[derive(Debug, Clone)]
pub struct Labelled {
    pub label: ArgLabel,
    pub value: Expr,
}

/// One argument of a call: `x`, `dim=1`, `*xs` or `**kw`. Held as its expression, a keyword
/// or spread wrapping the value ([`ExprKind::Labelled`]), so a positional argument, by far
/// the most common, costs no more than its expression (a call on each line of a large file
/// keeps thousands).
#[derive(Debug, Clone)]
pub struct Arg(Expr);

/// What a keyword or spread argument says besides its value.
#[derive(Debug, Clone)]
pub enum ArgLabel {
    /// `dim=1`
    Keyword(Name),
    /// `*args`
    Star,
    /// `**kwargs`
    DoubleStar,
}

impl Arg {
    pub fn positional(value: Expr) -> Self {
        Arg(value)
    }
    pub fn keyword(name: Name, value: Expr) -> Self {
        Arg::labelled(ArgLabel::Keyword(name), value)
    }
    pub fn star(value: Expr) -> Self {
        Arg::labelled(ArgLabel::Star, value)
    }
    pub fn double_star(value: Expr) -> Self {
        Arg::labelled(ArgLabel::DoubleStar, value)
    }
    fn labelled(label: ArgLabel, value: Expr) -> Self {
        let span = value.span;
        Arg(Expr::new(
            ExprKind::Labelled(Box::new(Labelled { label, value })),
            span,
        ))
    }
    /// The argument's value (of `dim=1`, `1`; of `*xs`, `xs`).
    pub fn value(&self) -> &Expr {
        match &self.0.kind {
            ExprKind::Labelled(labelled) => &labelled.value,
            _ => &self.0,
        }
    }
    fn label(&self) -> Option<&ArgLabel> {
        match &self.0.kind {
            ExprKind::Labelled(labelled) => Some(&labelled.label),
            _ => None,
        }
    }
    /// The keyword of `dim=1`; `None` for the other kinds.
    pub fn name(&self) -> Option<&Name> {
        match self.label() {
            Some(ArgLabel::Keyword(name)) => Some(name),
            _ => None,
        }
    }
    /// `*args` spread.
    pub fn is_star(&self) -> bool {
        matches!(self.label(), Some(ArgLabel::Star))
    }
    /// `**kwargs` spread.
    pub fn is_double_star(&self) -> bool {
        matches!(self.label(), Some(ArgLabel::DoubleStar))
    }
    /// Neither a keyword nor a spread.
    pub fn is_positional(&self) -> bool {
        self.label().is_none()
    }
}

// The sizes a large file's memory rests on (about 13 bytes per byte of source, most of it
// these nodes): a field that grows one of them grows every expression or statement. The
// allocator rounds a block of five words up to six, so a boxed expression of five words
// cost as much as one of six.
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(std::mem::size_of::<Name>() == 8);
    assert!(std::mem::size_of::<Expr>() == 32);
    assert!(std::mem::size_of::<Arg>() == 32);
    assert!(std::mem::size_of::<Target>() == 32);
    assert!(std::mem::size_of::<Targets>() == 32);
    assert!(std::mem::size_of::<Stmt>() == 72);
};

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
            Stmt::If { body, orelse, .. } => {
                f(body);
                f(orelse);
            }
            Stmt::Loop { body, orelse, .. } => {
                f(body);
                f(orelse);
            }
            Stmt::With { body, .. } => f(body),
            Stmt::Try(t) => {
                f(&t.body);
                t.handlers.iter().for_each(|h| f(h));
                f(&t.orelse);
                f(&t.finalbody);
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
            ExprKind::Name(n) => Some(n.to_string()),
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
        Stmt::Try(t) => {
            shift_block(&mut t.body, by);
            t.handlers.iter_mut().for_each(|h| shift_block(h, by));
            shift_block(&mut t.orelse, by);
            shift_block(&mut t.finalbody, by);
            shift(&mut t.span, by);
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
        ExprKind::Labelled(labelled) => shift_expr(&mut labelled.value, by),
        ExprKind::Tuple(items) | ExprKind::List(items) | ExprKind::Subscript(Subscript(items)) => {
            items.iter_mut().for_each(|i| shift_expr(i, by))
        }
        ExprKind::Call(call) => call.parts_mut().for_each(|p| shift_expr(p, by)),
        ExprKind::Slice(bounds) => {
            let SliceBounds { lower, upper, step } = &mut **bounds;
            for part in [lower, upper, step].into_iter().flatten() {
                shift_expr(part, by);
            }
        }
        ExprKind::BinOp { operands, .. } | ExprKind::Compare { operands, .. } => {
            operands.iter_mut().for_each(|o| shift_expr(o, by))
        }
        ExprKind::IfExp(parts) => parts.iter_mut().for_each(|p| shift_expr(p, by)),
        ExprKind::Comprehension(c) => {
            shift_expr(&mut c.element, by);
            shift_target(&mut c.target, by);
            shift_expr(&mut c.iter, by);
            c.conditions.iter_mut().for_each(|x| shift_expr(x, by));
        }
        ExprKind::Lambda(lambda) => shift_expr(&mut lambda.body, by),
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

/// `text` split at each `sep` outside brackets and strings.
pub fn split_top_level(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None, 0);
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth -= 1,
            (None, c) if c == sep && depth == 0 => {
                parts.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}
