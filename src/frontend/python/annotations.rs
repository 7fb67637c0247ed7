//! Annotations on parameters the analysis reads: plain `int` (a number), and shapes in the
//! jaxtyping notation:
//! `x: Float[Tensor, "b t c"]` names the dimensions of `x` `b`, `t`, `c`.
//!
//! The analysis uses these names as the symbolic sizes of a parameter, which lets it relate
//! the sizes of different parameters (two tensors both annotated `"b t c"` have the same `t`).
//! Recognised forms: `Dtype[ArrayType, "dims"]` where `Dtype` is a jaxtyping dtype
//! (`Float`, `Int`, `Float32`, `jaxtyping.Shaped`, ...), optionally wrapped in `Optional[...]`
//! or `... | None`. The dims string is split on whitespace and each entry is kept as written
//! (`*batch`, `...`, `#b`, `_`, `3` included), so the analysis decides what they mean.

use crate::ir::{BinOp, Expr, ExprKind};

/// How many `Optional[...]` / `| None` wrappers are looked through.
const MAX_WRAPPERS: usize = 8;

/// Is the annotation plain `int` (`key_dim: int`)? Such a parameter is a number, never a
/// tensor.
pub(in crate::frontend::python) fn is_int_annotation(annotation: &Expr) -> bool {
    matches!(&annotation.kind, ExprKind::Name(n) if n == "int")
}

/// The dimension names of a jaxtyping annotation (already lowered to IR), if it is one:
/// `Dtype[Array, "dims"]`, through `Optional[...]` and `... | None` (`source` tells `|`
/// from the other operators the IR merges into `BinOp::Other`).
pub(in crate::frontend::python) fn shape_annotation(
    annotation: &Expr,
    source: &str,
) -> Option<Vec<String>> {
    let mut node = annotation;
    for _ in 0..MAX_WRAPPERS {
        match &node.kind {
            ExprKind::BinOp {
                op: BinOp::Other,
                operands,
            } => {
                let [left, right] = &**operands;
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
            ExprKind::Subscript(subscript) => {
                let index = subscript.index();
                let head = match &subscript.value().kind {
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
