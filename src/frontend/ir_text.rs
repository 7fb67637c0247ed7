//! A compact text of the IR for the frontends' tests (Python-like, every operator
//! parenthesised, unknown values as `?`): one rendering for both frontends, so that their
//! tests spell the same IR the same way.

use crate::ir::{Arg, BinOp, CmpOp, Expr, ExprKind, Target};

/// How the IR is spelled.
pub(super) struct IrText {
    /// Spell a keyword or starred argument as written (`dim=1`, `*xs`); the Rust tests
    /// show values only.
    pub arg_names: bool,
}

impl IrText {
    pub(super) fn show(&self, expr: &Expr) -> String {
        match &expr.kind {
            ExprKind::Name(name) => name.to_string(),
            ExprKind::Attr { value, attr } => format!("{}.{attr}", self.show(value)),
            ExprKind::Int(value) => value.to_string(),
            ExprKind::Float(value) => format!("{value:?}"),
            ExprKind::Str(value) => format!("{value:?}"),
            ExprKind::Bool(true) => "True".into(),
            ExprKind::Bool(false) => "False".into(),
            ExprKind::None => "None".into(),
            ExprKind::Ellipsis => "...".into(),
            ExprKind::Tuple(elements) if elements.len() == 1 => {
                format!("({},)", self.show(&elements[0]))
            }
            ExprKind::Tuple(elements) => format!("({})", self.show_list(elements)),
            ExprKind::List(elements) => format!("[{}]", self.show_list(elements)),
            ExprKind::Starred(inner) => format!("*{}", self.show(inner)),
            // Only inside an argument, which `show_arg` spells.
            ExprKind::Labelled(labelled) => self.show(&labelled.value),
            ExprKind::Call(call) => {
                let args: Vec<String> = call.args().iter().map(|a| self.show_arg(a)).collect();
                format!("{}({})", self.show(call.func()), args.join(", "))
            }
            ExprKind::Subscript(subscript) => format!(
                "{}[{}]",
                self.show(subscript.value()),
                self.show_list(subscript.index())
            ),
            ExprKind::Slice(bounds) => {
                let crate::ir::SliceBounds { lower, upper, step } = &**bounds;
                let part = |p: &Option<Expr>| p.as_ref().map(|e| self.show(e)).unwrap_or_default();
                match step {
                    Some(_) => format!("{}:{}:{}", part(lower), part(upper), part(step)),
                    None => format!("{}:{}", part(lower), part(upper)),
                }
            }
            ExprKind::BinOp { op, operands } => {
                let [left, right] = &**operands;
                let op = match op {
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    BinOp::Mul => "*",
                    BinOp::Div => "/",
                    BinOp::FloorDiv => "//",
                    BinOp::Mod => "%",
                    BinOp::Pow => "**",
                    BinOp::MatMul => "@",
                    BinOp::Other => "<op>",
                };
                format!("({} {op} {})", self.show(left), self.show(right))
            }
            ExprKind::Neg(inner) => format!("-{}", self.show(inner)),
            ExprKind::IfExp(parts) => {
                let [test, body, orelse] = &**parts;
                format!(
                    "({} if {} else {})",
                    self.show(body),
                    self.show(test),
                    self.show(orelse)
                )
            }
            ExprKind::Compare {
                op: CmpOp::Not,
                operands,
            } => format!("(not {})", self.show(&operands[0])),
            ExprKind::Compare { op, operands } => {
                let [left, right] = &**operands;
                let op = match op {
                    CmpOp::Eq => "==",
                    CmpOp::NotEq => "!=",
                    CmpOp::Lt => "<",
                    CmpOp::LtE => "<=",
                    CmpOp::Gt => ">",
                    CmpOp::GtE => ">=",
                    CmpOp::Is => "is",
                    CmpOp::IsNot => "is not",
                    CmpOp::In => "in",
                    CmpOp::NotIn => "not in",
                    CmpOp::And => "and",
                    CmpOp::Or => "or",
                    CmpOp::Not => unreachable!("handled above"),
                };
                format!("({} {op} {})", self.show(left), self.show(right))
            }
            ExprKind::Comprehension(c) => format!(
                "[{} for {} in {}{}]",
                self.show(&c.element),
                self.show_target(&c.target),
                self.show(&c.iter),
                (c.conditions.iter())
                    .map(|x| format!(" if {}", self.show(x)))
                    .collect::<String>()
            ),
            ExprKind::Lambda(lambda) => {
                format!(
                    "(lambda {}: {})",
                    lambda.params.join(", "),
                    self.show(&lambda.body)
                )
            }
            ExprKind::Unknown => "?".into(),
        }
    }

    pub(super) fn show_list(&self, exprs: &[Expr]) -> String {
        exprs
            .iter()
            .map(|e| self.show(e))
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub(super) fn show_arg(&self, arg: &Arg) -> String {
        let value = self.show(arg.value());
        if !self.arg_names {
            return value;
        }
        match (arg.name(), arg.is_star(), arg.is_double_star()) {
            (Some(name), _, _) => format!("{name}={value}"),
            (None, true, _) => format!("*{value}"),
            (None, _, true) => format!("**{value}"),
            (None, false, false) => value,
        }
    }

    pub(super) fn show_target(&self, target: &Target) -> String {
        match target {
            Target::Name(name, _) => name.to_string(),
            Target::Attr { value, attr, .. } => format!("{}.{attr}", self.show(value)),
            Target::Tuple(elements, _) => {
                format!(
                    "({})",
                    elements
                        .iter()
                        .map(|t| self.show_target(t))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
            Target::Starred(inner, _) => format!("*{}", self.show_target(inner)),
            Target::Item { value, .. } => format!("{}[…]", self.show(value)),
            Target::Other(_) => "<other>".into(),
        }
    }
}
