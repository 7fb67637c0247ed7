//! Patterns (`let`, `for`, `match` arms, `if let`, parameters) → assignment targets.
//!
//! The IR's targets are names, attributes and (nested) tuples, so the patterns that
//! destructure a value into those are lowered exactly:
//! `x`, `mut x`, `ref x`, `_`, `(b, t, c)`, `(b, .., c)`, `[b, t, c]`, `&p`, `(p)`,
//! `p: Type`, and `Some(p)` / `Ok(p)` — the IR erases `Option`/`Result` wrappers (`?`,
//! `.unwrap()`, `Some(x)` are all just `x`), so unwrapping them in a pattern is the
//! identity too.
//!
//! Any other pattern (struct and enum patterns, `a | b`, `x @ p`, literals, ranges) binds
//! its names to *unknown* values: the value is still evaluated (its calls are events), but
//! nothing is claimed about what the names hold. Leaving a shadowed old binding in place
//! instead would be unsound.

use syn::Pat;

use crate::ir::{Expr, ExprKind, Span, Stmt, Target, Targets};

use super::lowerer::{unknown, Lowerer};

impl Lowerer {
    /// Bind `pattern` to `value` (already lowered, before the pattern's names are declared,
    /// so that `let x = x.t()?` reads the old `x`).
    pub(super) fn bind_pattern(
        &mut self,
        pattern: &Pat,
        value: Expr,
        span: Span,
        out: &mut Vec<Stmt>,
    ) {
        if matches!(strip(pattern), Pat::Wild(_)) {
            out.push(Stmt::Expr(value));
            return;
        }
        match self.target(pattern) {
            Some(target) => out.push(Stmt::Assign {
                targets: Targets::One(target),
                value,
                span,
            }),
            None => {
                out.push(Stmt::Expr(value));
                self.bind_to_unknown(pattern, out);
            }
        }
    }

    /// Declare every name `pattern` binds and assign it an unknown value.
    pub(super) fn bind_to_unknown(&mut self, pattern: &Pat, out: &mut Vec<Stmt>) {
        let mut names = Vec::new();
        collect_names(pattern, &mut names);
        for ident in names {
            let span = self.span(ident.span());
            let name = self.declare(&ident.to_string());
            out.push(Stmt::Assign {
                targets: Targets::One(Target::Name(name.into(), span)),
                value: unknown(span),
                span,
            });
        }
    }

    /// The target of a destructuring pattern, declaring its names; `None` when the pattern
    /// is not one the IR can express (see the module docs).
    pub(super) fn target(&mut self, pattern: &Pat) -> Option<Target> {
        match strip(pattern) {
            Pat::Ident(binding) if binding.subpat.is_none() => {
                let span = self.span(binding.ident.span());
                Some(Target::Name(
                    self.declare(&unraw(&binding.ident)).into(),
                    span,
                ))
            }
            Pat::Wild(wild) => Some(Target::Name(
                "_".into(),
                self.span(wild.underscore_token.span),
            )),
            Pat::Tuple(tuple) => {
                let span = self.span(tuple.paren_token.span.join());
                let items = tuple
                    .elems
                    .iter()
                    .map(|p| self.element_target(p))
                    .collect::<Option<_>>()?;
                Some(Target::Tuple(items, span))
            }
            Pat::Slice(slice) => {
                let span = self.span(slice.bracket_token.span.join());
                let items = slice
                    .elems
                    .iter()
                    .map(|p| self.element_target(p))
                    .collect::<Option<_>>()?;
                Some(Target::Tuple(items, span))
            }
            Pat::TupleStruct(wrapper)
                if is_transparent_wrapper(&wrapper.path) && wrapper.elems.len() == 1 =>
            {
                self.target(&wrapper.elems[0])
            }
            _ => None,
        }
    }

    /// An element of a tuple or slice pattern: `..` becomes a starred `_` (Python's
    /// `a, *_, b`), so the elements after it still line up from the end.
    fn element_target(&mut self, pattern: &Pat) -> Option<Target> {
        match strip(pattern) {
            Pat::Rest(rest) => {
                let span = self.span(rest.dot2_token.spans[0]);
                Some(Target::Starred(
                    Box::new(Target::Name("_".into(), span)),
                    span,
                ))
            }
            _ => self.target(pattern),
        }
    }
}

/// Remove the layers of a pattern that do not change what it binds: `(p)`, `&p`, `&mut p`,
/// `p: Type`.
pub(super) fn strip(pattern: &Pat) -> &Pat {
    let mut pattern = pattern;
    loop {
        pattern = match pattern {
            Pat::Paren(inner) => &inner.pat,
            Pat::Reference(inner) => &inner.pat,
            Pat::Type(inner) => &inner.pat,
            _ => return pattern,
        };
    }
}

/// `Some(p)` and `Ok(p)`: wrappers the IR erases.
fn is_transparent_wrapper(path: &syn::Path) -> bool {
    path.segments
        .last()
        .is_some_and(|segment| segment.ident == "Some" || segment.ident == "Ok")
}

/// Every identifier a pattern binds, in source order.
pub(super) fn collect_names<'p>(pattern: &'p Pat, out: &mut Vec<&'p syn::Ident>) {
    match pattern {
        Pat::Ident(binding) => {
            out.push(&binding.ident);
            if let Some((_, sub)) = &binding.subpat {
                collect_names(sub, out);
            }
        }
        Pat::Or(or) => {
            // Every alternative binds the same names; the first one lists them.
            if let Some(first) = or.cases.first() {
                collect_names(first, out);
            }
        }
        Pat::Paren(inner) => collect_names(&inner.pat, out),
        Pat::Reference(inner) => collect_names(&inner.pat, out),
        Pat::Type(inner) => collect_names(&inner.pat, out),
        Pat::Slice(slice) => slice.elems.iter().for_each(|p| collect_names(p, out)),
        Pat::Tuple(tuple) => tuple.elems.iter().for_each(|p| collect_names(p, out)),
        Pat::TupleStruct(tuple) => tuple.elems.iter().for_each(|p| collect_names(p, out)),
        Pat::Struct(record) => record
            .fields
            .iter()
            .for_each(|f| collect_names(&f.pat, out)),
        _ => {}
    }
}

/// An identifier as the IR names it: `r#type` is the variable `type`.
pub(super) fn unraw(ident: &syn::Ident) -> String {
    let text = ident.to_string();
    match text.strip_prefix("r#") {
        Some(bare) => bare.to_string(),
        None => text,
    }
}

/// An expression that reads the IR name `name`.
pub(super) fn name_expr(name: String, span: Span) -> Expr {
    Expr::new(ExprKind::Name(name.into()), span)
}
