//! The lowering walk's state: where spans point, which Rust binding each name means, the
//! statements hoisted out of expressions, and the depth guard.
//!
//! **Spans.** proc-macro2 (with `span-locations`) numbers the characters of every string
//! it tokenizes; [`proc_macro2::Span::byte_range`] turns a span back into byte offsets of
//! the text syn was given. The frontend strips a byte-order mark and a shebang line before
//! parsing (as `syn::parse_file` does), so every offset is shifted by `base` to point into
//! the original source.
//!
//! **Scopes.** The IR has one flat namespace per function, but Rust scopes bindings to
//! blocks: in
//! ```text
//! let x = a.t()?;
//! if c { let x = b; }
//! x.reshape(..)?      // still the transposed `a`
//! ```
//! the inner `x` must not overwrite the outer one. A `let` that shadows a binding of an
//! *enclosing* block therefore gets a fresh IR name (`x#1`); a `let` that shadows one of
//! its own block reuses that block's name (the old binding is dead from there on). Uses
//! of a name resolve through the block stack, innermost first; names bound nowhere (consts,
//! functions, globals) keep their spelling.
//!
//! **Hoisting.** Rust expressions contain statements (`foo(match m { … })`, `(if c { … }
//! else { … })?.t()`); the IR's expressions do not. Such an expression is lowered to
//! statements that assign a temporary (`$t0`), pushed to [`Lowerer::pending`], and the
//! temporary stands in for it; the enclosing statement flushes `pending` before itself.

use std::collections::HashMap;

use proc_macro2::Span as SynSpan;

use crate::ir::{Expr, ExprKind, Span, Stmt, Target};

/// Where the value of a lowered expression goes.
#[derive(Debug, Clone)]
pub(super) enum Dest {
    /// An expression statement: the value is dropped.
    Discard,
    /// The function's result.
    Return,
    /// Assigned to a target (a hoisted temporary).
    Assign(Target),
}

/// How deep the lowering recurses into expressions and blocks before it stops and lowers
/// the rest as opaque. The nesting pre-scan keeps real input far below this; it guards the
/// lowering's own stack independently of that estimate.
pub(super) const MAX_LOWERING_DEPTH: u32 = 3_000;

pub(super) struct Lowerer {
    /// Byte offset of the text syn parsed within the original source.
    base: usize,
    /// Block scopes of the function being lowered: Rust name → IR name.
    scopes: Vec<HashMap<String, String>>,
    /// Counter for fresh IR names (renamed shadowing bindings and temporaries).
    fresh: usize,
    /// Statements hoisted out of the expression being lowered (see the module docs).
    pub(super) pending: Vec<Stmt>,
    depth: u32,
    /// While lowering a constructor: the name of its type (struct literals of `Self` or of
    /// this name become `self.field = …` assignments).
    pub(super) constructor_of: Option<String>,
    /// The fields each type of the file sets to `None` (see `options.rs`).
    pub(super) none_fields: super::options::NoneFields,
    /// The type whose `impl` block is being lowered.
    pub(super) impl_type: Option<String>,
}

impl Lowerer {
    pub(super) fn new(base: usize) -> Self {
        Lowerer {
            base,
            scopes: vec![HashMap::new()],
            fresh: 0,
            pending: Vec::new(),
            depth: 0,
            constructor_of: None,
            none_fields: Default::default(),
            impl_type: None,
        }
    }

    // ----- spans -----

    /// The source span of one syn span.
    pub(super) fn span(&self, span: SynSpan) -> Span {
        let range = span.byte_range();
        Span::new(self.base + range.start, self.base + range.end)
    }

    /// From the start of `first` to the end of `last`.
    pub(super) fn span_between(&self, first: SynSpan, last: SynSpan) -> Span {
        join(self.span(first), self.span(last))
    }

    /// The span of any syntax node. This re-tokenizes the node, so the expression lowering
    /// builds spans from its parts instead and uses this only for small or rare nodes.
    pub(super) fn span_of(&self, node: &impl syn::spanned::Spanned) -> Span {
        self.span(node.span())
    }

    // ----- scopes -----

    /// Start a function: a fresh root scope, nothing pending.
    pub(super) fn enter_function(&mut self) -> FunctionState {
        FunctionState {
            scopes: std::mem::replace(&mut self.scopes, vec![HashMap::new()]),
            pending: std::mem::take(&mut self.pending),
            constructor_of: self.constructor_of.take(),
        }
    }

    pub(super) fn leave_function(&mut self, saved: FunctionState) {
        self.scopes = saved.scopes;
        self.pending = saved.pending;
        self.constructor_of = saved.constructor_of;
    }

    pub(super) fn push_scope(&mut self) {
        self.scopes.push(HashMap::new());
    }

    pub(super) fn pop_scope(&mut self) {
        if self.scopes.len() > 1 {
            self.scopes.pop();
        }
    }

    /// Bind the Rust name `name` in the innermost scope and return its IR name.
    pub(super) fn declare(&mut self, name: &str) -> String {
        if name == "_" {
            return name.to_string();
        }
        let innermost = self.scopes.len() - 1;
        if let Some(ir_name) = self.scopes[innermost].get(name) {
            return ir_name.clone();
        }
        let shadows_enclosing = self.scopes[..innermost]
            .iter()
            .any(|scope| scope.contains_key(name));
        let ir_name = if shadows_enclosing {
            self.fresh += 1;
            format!("{name}#{}", self.fresh)
        } else {
            name.to_string()
        };
        self.scopes[innermost].insert(name.to_string(), ir_name.clone());
        ir_name
    }

    /// Bind `name` to a given IR name (a constructor's `let s = Self { … }` makes `s` mean
    /// `self`).
    pub(super) fn declare_as(&mut self, name: &str, ir_name: &str) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name.to_string(), ir_name.to_string());
        }
    }

    /// The IR name a use of the Rust name `name` refers to.
    pub(super) fn resolve(&self, name: &str) -> String {
        self.scopes
            .iter()
            .rev()
            .find_map(|scope| scope.get(name))
            .cloned()
            .unwrap_or_else(|| name.to_string())
    }

    /// A fresh temporary name; `$` cannot occur in a Rust identifier, so it never clashes.
    pub(super) fn temporary(&mut self) -> String {
        self.fresh += 1;
        format!("$t{}", self.fresh)
    }

    // ----- hoisting -----

    /// Move the statements hoisted so far to `out` (before the statement that needs them).
    pub(super) fn flush(&mut self, out: &mut Vec<Stmt>) {
        out.append(&mut self.pending);
    }

    /// Lower a nested statement list (a branch of a hoisted `if`) without mixing its
    /// hoisted statements with those of the expression around it.
    pub(super) fn isolated<T>(&mut self, lower: impl FnOnce(&mut Self) -> T) -> T {
        let outer = std::mem::take(&mut self.pending);
        let result = lower(self);
        debug_assert!(
            self.pending.is_empty(),
            "a nested block left statements pending"
        );
        self.pending = outer;
        result
    }

    // ----- depth guard -----

    /// Enter one level; `false` when the limit is reached (the caller lowers opaquely).
    pub(super) fn descend(&mut self) -> bool {
        if self.depth >= MAX_LOWERING_DEPTH {
            return false;
        }
        self.depth += 1;
        true
    }

    pub(super) fn ascend(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
}

/// What [`Lowerer::enter_function`] saves of the enclosing function (for nested `fn`s).
pub(super) struct FunctionState {
    scopes: Vec<HashMap<String, String>>,
    pending: Vec<Stmt>,
    constructor_of: Option<String>,
}

/// The smallest span covering both.
pub(super) fn join(a: Span, b: Span) -> Span {
    Span {
        start: a.start.min(b.start),
        end: a.end.max(b.end),
    }
}

/// An opaque expression at `span`.
pub(super) fn unknown(span: Span) -> Expr {
    Expr::new(ExprKind::Unknown, span)
}
