//! Lowering of expressions and assignment targets.

use tree_sitter::Node;

use super::literals::{decode_string_body, parse_float, parse_int, StringPrefix};
use super::lowerer::Lowerer;
use crate::ir::{Arg, BinOp, CmpOp, Expr, ExprKind, Span, Target};

impl<'t> Lowerer<'t> {
    /// Lowers an expression node. Beyond the depth limit the node is opaque.
    pub(super) fn lower_expr(&mut self, node: Node<'t>) -> Expr {
        if !self.enter() {
            return self.opaque(node);
        }
        let expr = self.lower_expr_within_limit(node);
        self.leave();
        expr
    }

    /// Lowers an expression that may not be evaluated (see `Lowerer::maybe_unevaluated`).
    fn lower_maybe_unevaluated(&mut self, node: Node<'t>) -> Expr {
        self.maybe_unevaluated += 1;
        let expr = self.lower_expr(node);
        self.maybe_unevaluated -= 1;
        expr
    }

    /// Dispatches on the node kind. Each rule is its own function so that this frame, which
    /// every level of a deep expression passes through, stays small.
    fn lower_expr_within_limit(&mut self, node: Node<'t>) -> Expr {
        if node.is_missing() {
            return Expr::new(ExprKind::Unknown, self.span(node));
        }
        match node.kind() {
            "identifier" => self.leaf(node, ExprKind::Name(self.text(node).to_string())),
            "attribute" => self.lower_attribute(node),
            "call" => self.lower_call(node),
            "subscript" => self.lower_subscript(node),
            "slice" => self.lower_slice(node),
            "integer" => self.leaf(
                node,
                parse_int(self.text(node)).map_or(ExprKind::Unknown, ExprKind::Int),
            ),
            "float" => self.leaf(
                node,
                parse_float(self.text(node)).map_or(ExprKind::Unknown, ExprKind::Float),
            ),
            "string" | "concatenated_string" => self.lower_string(node),
            "true" => self.leaf(node, ExprKind::Bool(true)),
            "false" => self.leaf(node, ExprKind::Bool(false)),
            "none" => self.leaf(node, ExprKind::None),
            "ellipsis" => self.leaf(node, ExprKind::Ellipsis),
            "tuple" | "expression_list" | "pattern_list" => {
                let elements = self.lower_elements(node);
                self.leaf(node, ExprKind::Tuple(elements))
            }
            "list" => {
                let elements = self.lower_elements(node);
                self.leaf(node, ExprKind::List(elements))
            }
            "list_splat" | "list_splat_pattern" => self.lower_starred(node),
            // Parentheses do not change a value; `type` wraps annotations; `(*a)` is `*a`;
            // `ctx as name` outside a `with`/`except` header has the value of `ctx`.
            "parenthesized_expression" | "type" | "parenthesized_list_splat" | "as_pattern" => {
                self.lower_first_named_child(node)
            }
            "binary_operator" => self.lower_binary_operator(node),
            "unary_operator" => self.lower_unary_operator(node),
            "not_operator" => self.lower_not(node),
            "boolean_operator" => self.lower_boolean_operator(node),
            "comparison_operator" => self.lower_comparison(node),
            "conditional_expression" => self.lower_conditional(node),
            "named_expression" => self.lower_walrus(node),
            // Lambdas, comprehensions, dicts, sets, `await`, `yield`, ERROR regions, ...
            _ => self.opaque(node),
        }
    }

    fn leaf(&self, node: Node<'t>, kind: ExprKind) -> Expr {
        Expr::new(kind, self.span(node))
    }

    fn lower_first_named_child(&mut self, node: Node<'t>) -> Expr {
        match self.first_named_child(node) {
            Some(inner) => self.lower_expr(inner),
            None => self.opaque(node),
        }
    }

    fn lower_attribute(&mut self, node: Node<'t>) -> Expr {
        let object = self.field(node, self.fields.object);
        let attribute = self.field(node, self.fields.attribute);
        match (object, attribute) {
            (Some(object), Some(attribute)) if !attribute.is_missing() => {
                let value = Box::new(self.lower_expr(object));
                let attr = self.text(attribute).to_string();
                self.leaf(node, ExprKind::Attr { value, attr })
            }
            _ => self.opaque(node),
        }
    }

    /// A string, or implicitly concatenated strings (`"ab" 'cd'`): a constant `Str`, or
    /// opaque when any part has no constant value (f-string interpolation, bytes, ...).
    fn lower_string(&mut self, node: Node<'t>) -> Expr {
        let parts = if node.kind() == "string" {
            vec![node]
        } else {
            self.named_children(node)
        };
        let mut joined = String::new();
        for part in parts {
            match self.string_value(part) {
                Some(value) => joined.push_str(&value),
                None => return self.opaque(node),
            }
        }
        self.leaf(node, ExprKind::Str(joined))
    }

    fn lower_starred(&mut self, node: Node<'t>) -> Expr {
        match self.first_named_child(node) {
            Some(inner) => {
                let inner = Box::new(self.lower_expr(inner));
                self.leaf(node, ExprKind::Starred(inner))
            }
            None => self.opaque(node),
        }
    }

    /// The IR's `Compare` is binary; `not x` is `Compare { x, Not, <nothing> }`, with an empty
    /// unknown operand at the end of the expression.
    fn lower_not(&mut self, node: Node<'t>) -> Expr {
        let Some(argument) = self.field(node, self.fields.argument) else {
            return self.opaque(node);
        };
        let left = Box::new(self.lower_expr(argument));
        let nothing = Expr::new(
            ExprKind::Unknown,
            Span::new(node.end_byte(), node.end_byte()),
        );
        self.leaf(
            node,
            ExprKind::Compare {
                left,
                op: CmpOp::Not,
                right: Box::new(nothing),
            },
        )
    }

    fn lower_boolean_operator(&mut self, node: Node<'t>) -> Expr {
        let op = match self.field(node, self.fields.operator).map(|op| op.kind()) {
            Some("and") => CmpOp::And,
            _ => CmpOp::Or,
        };
        let (Some(left), Some(right)) = (
            self.field(node, self.fields.left),
            self.field(node, self.fields.right),
        ) else {
            return self.opaque(node);
        };
        let left = Box::new(self.lower_expr(left));
        // Short-circuit: the right operand may not be evaluated.
        let right = Box::new(self.lower_maybe_unevaluated(right));
        self.leaf(node, ExprKind::Compare { left, op, right })
    }

    /// `body if test else orelse`
    fn lower_conditional(&mut self, node: Node<'t>) -> Expr {
        let &[body, test, orelse] = self.named_children(node).as_slice() else {
            return self.opaque(node);
        };
        let test = Box::new(self.lower_expr(test));
        let body = Box::new(self.lower_maybe_unevaluated(body));
        let orelse = Box::new(self.lower_maybe_unevaluated(orelse));
        self.leaf(node, ExprKind::IfExp { test, body, orelse })
    }

    /// `name := value`. When the walrus surely runs, the statement is preceded by
    /// `name = value` and the walrus itself reads `name`; when it may not run, `name` is bound
    /// to an unknown value and the walrus stands for `value` itself.
    fn lower_walrus(&mut self, node: Node<'t>) -> Expr {
        let span = self.span(node);
        let (Some(name), Some(value)) = (
            self.field(node, self.fields.name),
            self.field(node, self.fields.value),
        ) else {
            return self.opaque(node);
        };
        let value = self.lower_expr(value);
        if self.maybe_unevaluated > 0 {
            self.bind_walrus(name, Expr::new(ExprKind::Unknown, span), span);
            value
        } else {
            self.bind_walrus(name, value, span);
            Expr::new(ExprKind::Name(self.text(name).to_string()), span)
        }
    }

    /// Elements of a tuple or list display.
    fn lower_elements(&mut self, node: Node<'t>) -> Vec<Expr> {
        let children = self.named_children(node);
        children
            .into_iter()
            .map(|child| self.lower_expr(child))
            .collect()
    }

    fn lower_call(&mut self, node: Node<'t>) -> Expr {
        let span = self.span(node);
        let Some(function) = self.field(node, self.fields.function) else {
            return self.opaque(node);
        };
        let func = Box::new(self.lower_expr(function));
        let mut args = Vec::new();
        if let Some(arguments) = self.field(node, self.fields.arguments) {
            if arguments.kind() == "argument_list" {
                for argument in self.named_children(arguments) {
                    args.push(self.lower_argument(argument));
                }
            } else {
                // `f(x for x in xs)`: one generator argument.
                args.push(Arg {
                    name: None,
                    value: self.opaque(arguments),
                    star: false,
                    double_star: false,
                });
            }
        }
        Expr::new(ExprKind::Call { func, args }, span)
    }

    fn lower_argument(&mut self, argument: Node<'t>) -> Arg {
        let positional = |value| Arg {
            name: None,
            value,
            star: false,
            double_star: false,
        };
        match argument.kind() {
            "keyword_argument" => {
                let name = self
                    .field(argument, self.fields.name)
                    .map(|name| self.text(name).to_string());
                let value = match self.field(argument, self.fields.value) {
                    Some(value) => self.lower_expr(value),
                    None => self.opaque(argument),
                };
                Arg {
                    name,
                    value,
                    star: false,
                    double_star: false,
                }
            }
            "list_splat" | "dictionary_splat" => {
                let value = match self.first_named_child(argument) {
                    Some(inner) => self.lower_expr(inner),
                    None => self.opaque(argument),
                };
                let star = argument.kind() == "list_splat";
                Arg {
                    name: None,
                    value,
                    star,
                    double_star: !star,
                }
            }
            _ => positional(self.lower_expr(argument)),
        }
    }

    /// `value[i]`, `value[a:b, ..., None]`: one index entry per comma-separated item.
    fn lower_subscript(&mut self, node: Node<'t>) -> Expr {
        let span = self.span(node);
        let Some(value) = self.field(node, self.fields.value) else {
            return self.opaque(node);
        };
        let value = Box::new(self.lower_expr(value));
        let mut index = Vec::new();
        for (child, field) in self.children_with_fields(node) {
            if field == self.fields.subscript {
                index.push(self.lower_expr(child));
            }
        }
        Expr::new(ExprKind::Subscript { value, index }, span)
    }

    /// `lower:upper:step` with any part missing. The parts are told apart by how many colons
    /// precede them.
    fn lower_slice(&mut self, node: Node<'t>) -> Expr {
        let mut parts: [Option<Box<Expr>>; 3] = [None, None, None];
        let mut colons_seen = 0;
        for (child, _) in self.children_with_fields(node) {
            if child.kind() == ":" {
                colons_seen += 1;
            } else if child.is_named() && colons_seen < 3 {
                parts[colons_seen] = Some(Box::new(self.lower_expr(child)));
            }
        }
        let [lower, upper, step] = parts;
        self.leaf(node, ExprKind::Slice { lower, upper, step })
    }

    fn lower_binary_operator(&mut self, node: Node<'t>) -> Expr {
        let (Some(left), Some(right)) = (
            self.field(node, self.fields.left),
            self.field(node, self.fields.right),
        ) else {
            return self.opaque(node);
        };
        let op = match self.field(node, self.fields.operator).map(|op| op.kind()) {
            Some("+") => BinOp::Add,
            Some("-") => BinOp::Sub,
            Some("*") => BinOp::Mul,
            Some("/") => BinOp::Div,
            Some("//") => BinOp::FloorDiv,
            Some("%") => BinOp::Mod,
            Some("**") => BinOp::Pow,
            Some("@") => BinOp::MatMul,
            _ => BinOp::Other,
        };
        let left = Box::new(self.lower_expr(left));
        let right = Box::new(self.lower_expr(right));
        Expr::new(ExprKind::BinOp { op, left, right }, self.span(node))
    }

    /// `-x` is `Neg(x)`, folded into the literal for numbers (`-1` is `Int(-1)`); `+x` is `x`
    /// (spanning the `+`); `~x` is unknown.
    fn lower_unary_operator(&mut self, node: Node<'t>) -> Expr {
        let span = self.span(node);
        let Some(argument) = self.field(node, self.fields.argument) else {
            return self.opaque(node);
        };
        match self.field(node, self.fields.operator).map(|op| op.kind()) {
            Some("-") => {
                let operand = self.lower_expr(argument);
                let kind = match operand.kind {
                    ExprKind::Int(value) if value.checked_neg().is_some() => ExprKind::Int(-value),
                    ExprKind::Float(value) => ExprKind::Float(-value),
                    _ => ExprKind::Neg(Box::new(operand)),
                };
                Expr::new(kind, span)
            }
            Some("+") => Expr::new(self.lower_expr(argument).kind, span),
            _ => self.opaque(node),
        }
    }

    /// `a < b` is one `Compare`; a chain `a < b <= c` means `a < b and b <= c` (with `b`
    /// evaluated once; its lowering is shared by both comparisons). Each link of a chain
    /// nests the IR one level deeper, so a chain is opaque if it does not fit in the depth
    /// limit.
    fn lower_comparison(&mut self, node: Node<'t>) -> Expr {
        let mut operands = Vec::new();
        let mut operators = Vec::new();
        for (child, field) in self.children_with_fields(node) {
            if field == self.fields.operators {
                operators.push(comparison_operator(child.kind()));
            } else if child.is_named() {
                operands.push(child);
            }
        }
        let well_formed = !operators.is_empty()
            && operands.len() == operators.len() + 1
            && operators.iter().all(Option::is_some);
        if !well_formed {
            return self.opaque(node);
        }
        let extra_levels = operators.len() - 1;
        for entered in 0..extra_levels {
            if !self.enter() {
                (0..entered).for_each(|_| self.leave());
                return self.opaque(node);
            }
        }
        let mut lowered = Vec::with_capacity(operands.len());
        for (position, operand) in operands.iter().enumerate() {
            // Operands after the second are only evaluated if the earlier comparisons held.
            lowered.push(if position < 2 {
                self.lower_expr(*operand)
            } else {
                self.lower_maybe_unevaluated(*operand)
            });
        }
        (0..extra_levels).for_each(|_| self.leave());
        let mut chain: Option<Expr> = None;
        for (position, op) in operators.into_iter().flatten().enumerate() {
            let left = Box::new(lowered[position].clone());
            let right = Box::new(lowered[position + 1].clone());
            let span = Span::new(
                operands[position].start_byte(),
                operands[position + 1].end_byte(),
            );
            let comparison = Expr::new(ExprKind::Compare { left, op, right }, span);
            chain = Some(match chain {
                None => comparison,
                Some(previous) => {
                    let span = Span::new(node.start_byte(), comparison.span.end as usize);
                    let (left, right) = (Box::new(previous), Box::new(comparison));
                    Expr::new(
                        ExprKind::Compare {
                            left,
                            op: CmpOp::And,
                            right,
                        },
                        span,
                    )
                }
            });
        }
        chain.unwrap_or_else(|| self.opaque(node))
    }

    /// The constant value of one `string` node, `None` for f-strings with interpolations,
    /// bytes, and escapes without a decodable value.
    fn string_value(&mut self, node: Node<'t>) -> Option<String> {
        if node.kind() != "string" {
            return None;
        }
        let mut prefix = None;
        let mut body = String::new();
        for (child, _) in self.children_with_fields(node) {
            match child.kind() {
                "string_start" => prefix = Some(StringPrefix::from_string_start(self.text(child))),
                "string_content" => body.push_str(self.text(child)),
                "interpolation" => return None,
                _ => {}
            }
        }
        decode_string_body(prefix?, &body)
    }

    /// Lowers an assignment target (`pattern` nodes, and expressions used as targets in
    /// `with ... as t` and walrus). Subscripts and anything else untrackable are `Other`.
    pub(super) fn lower_target(&mut self, node: Node<'t>) -> Target {
        let span = self.span(node);
        if node.is_missing() || !self.enter() {
            return Target::Other(span);
        }
        let target = match node.kind() {
            "identifier" => Target::Name(self.text(node).to_string(), span),
            "attribute" => match (
                self.field(node, self.fields.object),
                self.field(node, self.fields.attribute),
            ) {
                (Some(object), Some(attribute)) => Target::Attr {
                    value: Box::new(self.lower_expr(object)),
                    attr: self.text(attribute).to_string(),
                    span,
                },
                _ => Target::Other(span),
            },
            "pattern_list" | "tuple_pattern" | "list_pattern" | "tuple" | "list"
            | "expression_list" => {
                let elements = self.named_children(node);
                Target::Tuple(
                    elements
                        .into_iter()
                        .map(|element| self.lower_target(element))
                        .collect(),
                    span,
                )
            }
            "subscript" => match self.field(node, self.fields.value) {
                Some(value) => Target::Item {
                    value: Box::new(self.lower_expr(value)),
                    span,
                },
                None => Target::Other(span),
            },
            "list_splat_pattern" | "list_splat" => match self.first_named_child(node) {
                Some(inner) => Target::Starred(Box::new(self.lower_target(inner)), span),
                None => Target::Other(span),
            },
            "parenthesized_expression" | "as_pattern_target" => {
                match self.first_named_child(node) {
                    Some(inner) => self.lower_target(inner),
                    None => Target::Other(span),
                }
            }
            _ => Target::Other(span),
        };
        self.leave();
        target
    }
}

/// The comparison a `comparison_operator` token stands for.
fn comparison_operator(token: &str) -> Option<CmpOp> {
    Some(match token {
        "==" => CmpOp::Eq,
        "!=" | "<>" => CmpOp::NotEq,
        "<" => CmpOp::Lt,
        "<=" => CmpOp::LtE,
        ">" => CmpOp::Gt,
        ">=" => CmpOp::GtE,
        "is" => CmpOp::Is,
        "is not" => CmpOp::IsNot,
        "in" => CmpOp::In,
        "not in" => CmpOp::NotIn,
        _ => return None,
    })
}
