//! Shape annotations on parameters, in the jaxtyping notation:
//! `x: Float[Tensor, "b t c"]` names the dimensions of `x` `b`, `t`, `c`.
//!
//! The analysis uses these names as the symbolic sizes of a parameter, which lets it relate
//! the sizes of different parameters (two tensors both annotated `"b t c"` have the same `t`).
//! Recognised forms: `Dtype[ArrayType, "dims"]` where `Dtype` is a jaxtyping dtype
//! (`Float`, `Int`, `Float32`, `jaxtyping.Shaped`, ...), optionally wrapped in `Optional[...]`
//! or `... | None`. The dims string is split on whitespace and each entry is kept as written
//! (`*batch`, `...`, `#b`, `_`, `3` included), so the analysis decides what they mean.

use tree_sitter::Node;

use super::lowerer::Lowerer;
use crate::ir::ExprKind;

/// How many `Optional[...]` / `| None` / parenthesis wrappers are looked through.
const MAX_WRAPPERS: usize = 8;

impl<'t> Lowerer<'t> {
    /// The dimension names of a jaxtyping annotation (`type` node or expression), if it is one.
    pub(super) fn shape_annotation(&mut self, annotation: Node<'t>) -> Option<Vec<String>> {
        let mut node = annotation;
        for _ in 0..MAX_WRAPPERS {
            match node.kind() {
                "type" | "parenthesized_expression" => node = self.first_named_child(node)?,
                // `X | None` / `None | X`
                "binary_operator" => {
                    let left = self.field(node, self.fields.left)?;
                    let right = self.field(node, self.fields.right)?;
                    node = match (left.kind(), right.kind()) {
                        (_, "none") => left,
                        ("none", _) => right,
                        _ => return None,
                    };
                }
                // `Float[Tensor, "b t"]` parses as a `generic_type` in annotations and as a
                // `subscript` when the head is dotted (`jaxtyping.Float[...]`).
                "generic_type" | "subscript" => {
                    let (head, arguments) = self.generic_head_and_arguments(node)?;
                    if head == "Optional" && arguments.len() == 1 {
                        node = arguments[0];
                    } else if is_jaxtyping_dtype(head) && arguments.len() == 2 {
                        return self.dims_string(arguments[1]);
                    } else {
                        return None;
                    }
                }
                _ => return None,
            }
        }
        None
    }

    /// `(last component of the head name, type arguments)` of `Head[a, b]`.
    fn generic_head_and_arguments(&mut self, node: Node<'t>) -> Option<(&'t str, Vec<Node<'t>>)> {
        if node.kind() == "generic_type" {
            let children = self.named_children(node);
            let head = children.iter().find(|child| child.kind() == "identifier")?;
            let parameters = children
                .iter()
                .find(|child| child.kind() == "type_parameter")?;
            let arguments = self.named_children(*parameters);
            return Some((self.text(*head), arguments));
        }
        let value = self.field(node, self.fields.value)?;
        let head = match value.kind() {
            "identifier" => value,
            "attribute" => self.field(value, self.fields.attribute)?,
            _ => return None,
        };
        let mut arguments = Vec::new();
        for (child, field) in self.children_with_fields(node) {
            if field == self.fields.subscript {
                arguments.push(child);
            }
        }
        Some((self.text(head), arguments))
    }

    /// The whitespace-separated entries of a constant dims string; `""` is a 0-d tensor.
    fn dims_string(&mut self, node: Node<'t>) -> Option<Vec<String>> {
        let node = if node.kind() == "type" {
            self.first_named_child(node)?
        } else {
            node
        };
        if !matches!(node.kind(), "string" | "concatenated_string") {
            return None;
        }
        match self.lower_expr(node).kind {
            ExprKind::Str(dims) => Some(dims.split_whitespace().map(str::to_string).collect()),
            _ => None,
        }
    }
}

/// jaxtyping's dtype annotations: the generic ones and the sized ones (`Float32`, `Int8`,
/// `UInt16`, `Complex64`, `BFloat16`, ...).
fn is_jaxtyping_dtype(name: &str) -> bool {
    const GENERIC: &[&str] = &[
        "Shaped", "Num", "Real", "Inexact", "Float", "Complex", "Integer", "UInt", "Int", "Bool",
        "Key",
    ];
    const SIZED_PREFIXES: &[&str] = &["Float", "BFloat", "Int", "UInt", "Complex"];
    GENERIC.contains(&name)
        || SIZED_PREFIXES.iter().any(|prefix| {
            name.strip_prefix(prefix)
                .is_some_and(|size| size.starts_with(|c: char| c.is_ascii_digit()))
        })
}

#[cfg(test)]
mod tests {
    use super::is_jaxtyping_dtype;

    #[test]
    fn jaxtyping_dtype_names() {
        for name in [
            "Float",
            "Int",
            "Shaped",
            "Bool",
            "Float32",
            "BFloat16",
            "UInt8",
            "Complex64",
            "Float8e4m3fn",
        ] {
            assert!(is_jaxtyping_dtype(name), "{name}");
        }
        for name in ["Optional", "Tensor", "List", "Floaty", "Interval", "float"] {
            assert!(!is_jaxtyping_dtype(name), "{name}");
        }
    }
}

/// [`Lowerer::shape_annotation`] on an annotation already lowered to IR (the hand-written
/// parser's): `Dtype[Array, "dims"]`, through `Optional[...]` and `... | None`.
pub(in crate::frontend::python) fn shape_annotation(
    annotation: &crate::ir::Expr,
    source: &str,
) -> Option<Vec<String>> {
    let mut node = annotation;
    for _ in 0..MAX_WRAPPERS {
        match &node.kind {
            ExprKind::BinOp {
                op: crate::ir::BinOp::Other,
                left,
                right,
            } => {
                // The operator is the first character between the operands that is not a
                // bracket or blank: only `X | None` / `None | X` count.
                let between = source.get(left.span.end as usize..right.span.start as usize)?;
                let operator = between
                    .chars()
                    .find(|c| !c.is_whitespace() && !matches!(c, '(' | ')' | '\\'))?;
                if operator != '|' {
                    return None;
                }
                node = match (&left.kind, &right.kind) {
                    (_, ExprKind::None) => left,
                    (ExprKind::None, _) => right,
                    _ => return None,
                };
            }
            ExprKind::Subscript { value, index } => {
                let head = match &value.kind {
                    ExprKind::Name(name) => name.as_str(),
                    ExprKind::Attr { attr, .. } => attr.as_str(),
                    _ => return None,
                };
                if head == "Optional" && index.len() == 1 {
                    node = &index[0];
                } else if is_jaxtyping_dtype(head) && index.len() == 2 {
                    return match &index[1].kind {
                        ExprKind::Str(dims) => {
                            Some(dims.split_whitespace().map(str::to_string).collect())
                        }
                        _ => None,
                    };
                } else {
                    return None;
                }
            }
            _ => return None,
        }
    }
    None
}
