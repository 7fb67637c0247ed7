//! Macro invocations. A macro's body is just tokens to syn; the few macros whose meaning
//! matters for layouts are recognised by their last path segment (so `candle::bail!`,
//! `anyhow::bail!` and `bail!` are all `bail`) and their bodies parsed as expressions:
//!
//! - `vec![a, b, c]` → `List` (a shape written as a `Vec`); `vec![x; n]` → `Unknown`;
//! - `panic!`, `bail!`, `unreachable!`, `todo!`, `unimplemented!` → `Raise` (the path ends);
//! - `assert!(c)`, `assert_eq!(a, b)`, `assert_ne!(a, b)` and their `debug_` forms →
//!   `Assert` (a checked size relation the interpreter can use, e.g. divisibility);
//! - formatting and logging macros (`println!`, `format!`, `write!`, `dbg!`, `info!`, …):
//!   their argument expressions are evaluated (a `reshape` inside a `println!` still runs),
//!   the value is unknown;
//! - anything else → `Unknown`.

use syn::punctuated::Punctuated;
use syn::{Expr as SynExpr, Macro, Token};

use crate::ir::{CmpOp, Expr, ExprKind, Stmt};

use super::lowerer::{unknown, Lowerer};

/// What a macro means to the lowering.
enum MacroMeaning {
    Vec,
    Raise,
    Assert(Option<CmpOp>),
    Formatting,
    Opaque,
}

fn meaning(mac: &Macro) -> MacroMeaning {
    let Some(name) = mac.path.segments.last().map(|s| s.ident.to_string()) else {
        return MacroMeaning::Opaque;
    };
    match name.as_str() {
        "vec" => MacroMeaning::Vec,
        "panic" | "bail" | "unreachable" | "todo" | "unimplemented" => MacroMeaning::Raise,
        "assert" | "debug_assert" => MacroMeaning::Assert(None),
        "assert_eq" | "debug_assert_eq" => MacroMeaning::Assert(Some(CmpOp::Eq)),
        "assert_ne" | "debug_assert_ne" => MacroMeaning::Assert(Some(CmpOp::NotEq)),
        "format" | "print" | "println" | "eprint" | "eprintln" | "write" | "writeln" | "dbg"
        | "trace" | "debug" | "info" | "warn" | "error" | "log" => MacroMeaning::Formatting,
        _ => MacroMeaning::Opaque,
    }
}

/// The comma-separated expressions of a macro body, if it is one.
fn arguments(mac: &Macro) -> Option<Punctuated<SynExpr, Token![,]>> {
    mac.parse_body_with(Punctuated::<SynExpr, Token![,]>::parse_terminated)
        .ok()
}

impl Lowerer {
    /// Lower a macro in statement position when it is a statement (`Raise`, `Assert`, or
    /// evaluated formatting arguments); `false` for macros that are values.
    pub(super) fn lower_macro_statement(&mut self, mac: &Macro, out: &mut Vec<Stmt>) -> bool {
        let span = self.span_of(mac);
        match meaning(mac) {
            MacroMeaning::Raise => {
                out.push(Stmt::Raise { span });
                true
            }
            MacroMeaning::Assert(op) => {
                let Some(args) = arguments(mac) else {
                    out.push(Stmt::Other { span });
                    return true;
                };
                let test = match (op, args.first(), args.iter().nth(1)) {
                    (None, Some(condition), _) => self.expr(condition),
                    (Some(op), Some(left), Some(right)) => {
                        let left = self.expr(left);
                        let right = self.expr(right);
                        Expr::new(
                            ExprKind::Compare {
                                op,
                                operands: Box::new([left, right]),
                            },
                            span,
                        )
                    }
                    _ => unknown(span),
                };
                self.flush(out);
                out.push(Stmt::Assert { test, span });
                true
            }
            MacroMeaning::Formatting => {
                // Only the arguments' evaluation matters; `macro_value` hoists it.
                let _unknown = self.macro_value(mac);
                self.flush(out);
                true
            }
            MacroMeaning::Vec | MacroMeaning::Opaque => false,
        }
    }

    /// A macro in value position. Statement macros are hoisted (a `panic!()` used as a
    /// value still ends the path).
    pub(super) fn macro_value(&mut self, mac: &Macro) -> Expr {
        let span = self.span_of(mac);
        match meaning(mac) {
            MacroMeaning::Vec => match arguments(mac) {
                Some(items) => {
                    let items: Vec<Expr> = items.iter().map(|item| self.expr(item)).collect();
                    Expr::new(ExprKind::List(items.into_boxed_slice()), span)
                }
                // `vec![x; n]`
                None => unknown(span),
            },
            MacroMeaning::Raise | MacroMeaning::Assert(_) => {
                let mut statements = Vec::new();
                self.lower_macro_statement(mac, &mut statements);
                self.pending.extend(statements);
                Expr::new(ExprKind::Tuple(Box::default()), span)
            }
            MacroMeaning::Formatting => {
                // The format string is a literal; the other arguments may be tensor code.
                for argument in arguments(mac).iter().flatten() {
                    if !matches!(argument, SynExpr::Lit(_)) {
                        let value = self.expr(argument);
                        self.pending.push(Stmt::Expr(value));
                    }
                }
                unknown(span)
            }
            MacroMeaning::Opaque => unknown(span),
        }
    }
}
