//! Parsing one side of an einops pattern (`"b (h d) n"`), exactly as einops'
//! `ParsedExpression` does it (spec §8, einops `parsing.py`).
//!
//! A side is a list of *compositions*, one per tensor dimension: a bare axis `b` is a
//! one-axis group, `(h d)` a group of two elementary axes, `1` or `()` an empty group (a
//! dimension of size 1), and `...` stands for any number of dimensions. Numbers other than
//! 1 are *anonymous* axes of that length; every anonymous axis is distinct, even when two
//! have the same length (einops compares them by identity).

use std::collections::BTreeSet;
use std::fmt;

/// An elementary axis inside a composition.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Axis {
    Named(String),
    /// A literal length ≥ 2 (or 0); `id` makes each occurrence distinct.
    Anonymous {
        length: u64,
        id: usize,
    },
    /// `...` written inside parentheses, `(...)`: only legal on the right-hand side.
    Ellipsis,
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Axis::Named(n) => f.write_str(n),
            Axis::Anonymous { length, .. } => write!(f, "{length}"),
            Axis::Ellipsis => f.write_str("..."),
        }
    }
}

/// One dimension of a side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Composition {
    /// A top-level `...` (any number of dimensions, each kept whole).
    Ellipsis,
    /// A group of elementary axes merged into one dimension (empty = a size-1 dimension).
    Group(Vec<Axis>),
}

/// A parsed side of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expression {
    pub composition: Vec<Composition>,
    pub has_ellipsis: bool,
    /// `Some(true)` when the ellipsis sits inside parentheses.
    pub ellipsis_parenthesized: Option<bool>,
    /// Every elementary axis mentioned (named, anonymous, and `Axis::Ellipsis` for `...`).
    pub identifiers: BTreeSet<Axis>,
    pub has_non_unitary_anonymous_axes: bool,
}

/// The error einops raises, with its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EinopsError(pub String);

impl fmt::Display for EinopsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The single character einops substitutes for `...` while parsing.
const ELLIPSIS_CHAR: char = '…';

/// Source of distinct ids for anonymous axes, shared by both sides of one pattern.
#[derive(Debug, Default)]
pub struct AnonymousIds(usize);

impl AnonymousIds {
    fn next(&mut self) -> usize {
        self.0 += 1;
        self.0
    }
}

/// Split `"left -> right"` and parse both sides.
pub fn parse_pattern(pattern: &str) -> Result<(Expression, Expression), EinopsError> {
    let parts: Vec<&str> = pattern.split("->").collect();
    if parts.len() != 2 {
        // Python's tuple unpacking of `pattern.split("->")` fails with a ValueError.
        return Err(EinopsError(format!(
            "pattern must contain exactly one `->`, got {} parts: {pattern:?}",
            parts.len()
        )));
    }
    let mut ids = AnonymousIds::default();
    let left = parse_expression(parts[0], &mut ids)?;
    let right = parse_expression(parts[1], &mut ids)?;
    Ok((left, right))
}

/// Parse one side (einops `ParsedExpression(expression)` with default flags).
pub fn parse_expression(
    expression: &str,
    ids: &mut AnonymousIds,
) -> Result<Expression, EinopsError> {
    let mut expr = Expression {
        composition: Vec::new(),
        has_ellipsis: false,
        ellipsis_parenthesized: None,
        identifiers: BTreeSet::new(),
        has_non_unitary_anonymous_axes: false,
    };
    let mut text = expression.to_string();
    if text.contains('.') {
        if !text.contains("...") {
            return Err(EinopsError(
                "Expression may contain dots only inside ellipsis (...)".into(),
            ));
        }
        if text.matches("...").count() != 1 || text.matches('.').count() != 3 {
            return Err(EinopsError(
                "Expression may contain dots only inside ellipsis (...); only one ellipsis for tensor ".into(),
            ));
        }
        text = text.replace("...", &ELLIPSIS_CHAR.to_string());
        expr.has_ellipsis = true;
    }

    let mut group: Option<Vec<Axis>> = None;
    let mut current = String::new();
    for ch in text.chars() {
        if ch == '(' || ch == ')' || ch == ' ' {
            if !current.is_empty() {
                add_axis_name(&mut expr, &mut group, &std::mem::take(&mut current), ids)?;
            }
            if ch == '(' {
                if group.is_some() {
                    return Err(EinopsError(
                        "Axis composition is one-level (brackets inside brackets not allowed)"
                            .into(),
                    ));
                }
                group = Some(Vec::new());
            } else if ch == ')' {
                match group.take() {
                    Some(g) => expr.composition.push(Composition::Group(g)),
                    None => return Err(EinopsError("Brackets are not balanced".into())),
                }
            }
        } else if ch.is_alphanumeric() || ch == '_' || ch == ELLIPSIS_CHAR {
            current.push(ch);
        } else {
            return Err(EinopsError(format!("Unknown character '{ch}'")));
        }
    }
    if group.is_some() {
        return Err(EinopsError(format!(
            "Imbalanced parentheses in expression: \"{text}\""
        )));
    }
    if !current.is_empty() {
        add_axis_name(&mut expr, &mut group, &current, ids)?;
    }
    Ok(expr)
}

fn add_axis_name(
    expr: &mut Expression,
    group: &mut Option<Vec<Axis>>,
    name: &str,
    ids: &mut AnonymousIds,
) -> Result<(), EinopsError> {
    let is_ellipsis = name == ELLIPSIS_CHAR.to_string();
    let already = if is_ellipsis {
        expr.identifiers.contains(&Axis::Ellipsis)
    } else {
        expr.identifiers.contains(&Axis::Named(name.to_string()))
    };
    if already {
        let shown = if is_ellipsis { "…" } else { name };
        return Err(EinopsError(format!(
            "Indexing expression contains duplicate dimension \"{shown}\""
        )));
    }
    if is_ellipsis {
        expr.identifiers.insert(Axis::Ellipsis);
        match group {
            None => {
                expr.composition.push(Composition::Ellipsis);
                expr.ellipsis_parenthesized = Some(false);
            }
            Some(g) => {
                g.push(Axis::Ellipsis);
                expr.ellipsis_parenthesized = Some(true);
            }
        }
    } else if name == "1" {
        // A length-1 axis: an empty composition outside brackets, nothing inside them.
        if group.is_none() {
            expr.composition.push(Composition::Group(Vec::new()));
        }
    } else if name.chars().all(|c| c.is_ascii_digit()) {
        let length: u64 = name.parse().map_err(|_| {
            EinopsError(format!("Invalid axis identifier: {name}\nnumber too large"))
        })?;
        if length == 1 {
            return Err(EinopsError(
                "No need to create anonymous axis of length 1. Report this as an issue".into(),
            ));
        }
        let axis = Axis::Anonymous {
            length,
            id: ids.next(),
        };
        expr.has_non_unitary_anonymous_axes = true;
        expr.identifiers.insert(axis.clone());
        match group {
            None => expr.composition.push(Composition::Group(vec![axis])),
            Some(g) => g.push(axis),
        }
    } else {
        if let Err(reason) = check_axis_name(name) {
            return Err(EinopsError(format!(
                "Invalid axis identifier: {name}\n{reason}"
            )));
        }
        let axis = Axis::Named(name.to_string());
        expr.identifiers.insert(axis.clone());
        match group {
            None => expr.composition.push(Composition::Group(vec![axis])),
            Some(g) => g.push(axis),
        }
    }
    Ok(())
}

/// einops' axis-name rule: a Python identifier that neither starts nor ends with `_`.
pub fn check_axis_name(name: &str) -> Result<(), &'static str> {
    let mut chars = name.chars();
    let is_identifier = matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_');
    if !is_identifier {
        return Err("not a valid python identifier");
    }
    if name.starts_with('_') || name.ends_with('_') {
        return Err("axis name should should not start or end with underscore");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(n: &str) -> Axis {
        Axis::Named(n.into())
    }

    fn groups(e: &Expression) -> Vec<String> {
        e.composition
            .iter()
            .map(|c| match c {
                Composition::Ellipsis => "...".to_string(),
                Composition::Group(g) => {
                    let inner: Vec<String> = g.iter().map(|a| a.to_string()).collect();
                    format!("({})", inner.join(" "))
                }
            })
            .collect()
    }

    #[test]
    fn parses_groups_ellipsis_and_anonymous_axes() {
        let (l, r) = parse_pattern("b c (h p1) (w p2) -> b (h w) (p1 p2 c)").unwrap();
        assert_eq!(groups(&l), ["(b)", "(c)", "(h p1)", "(w p2)"]);
        assert_eq!(groups(&r), ["(b)", "(h w)", "(p1 p2 c)"]);
        assert!(l.identifiers.contains(&named("p1")));

        let (l, r) = parse_pattern("... (h d) -> ... h d").unwrap();
        assert_eq!(groups(&l), ["...", "(h d)"]);
        assert_eq!(groups(&r), ["...", "(h)", "(d)"]);
        assert!(l.has_ellipsis && l.ellipsis_parenthesized == Some(false));

        let (_, r) = parse_pattern("b ... -> b (...)").unwrap();
        assert_eq!(r.ellipsis_parenthesized, Some(true));

        let (l, _) = parse_pattern("b 1 (n 1) () -> b n").unwrap();
        assert_eq!(groups(&l), ["(b)", "()", "(n)", "()"]);

        let (l, _) = parse_pattern("b (c 2) -> b c").unwrap();
        assert!(l.has_non_unitary_anonymous_axes);
    }

    #[test]
    fn anonymous_axes_of_equal_length_are_distinct() {
        let (l, r) = parse_pattern("(a 2) -> a 2").unwrap();
        let left_anon: Vec<&Axis> = l
            .identifiers
            .iter()
            .filter(|a| matches!(a, Axis::Anonymous { .. }))
            .collect();
        let right_anon: Vec<&Axis> = r
            .identifiers
            .iter()
            .filter(|a| matches!(a, Axis::Anonymous { .. }))
            .collect();
        assert_eq!(left_anon.len(), 1);
        assert_ne!(left_anon[0], right_anon[0]);
    }

    #[test]
    fn malformed_sides_give_einops_messages() {
        let mut ids = AnonymousIds::default();
        let err = |s: &str, ids: &mut AnonymousIds| parse_expression(s, ids).unwrap_err().0;
        assert_eq!(
            err("b h h", &mut ids),
            "Indexing expression contains duplicate dimension \"h\""
        );
        assert_eq!(
            err("b ((h d))", &mut ids),
            "Axis composition is one-level (brackets inside brackets not allowed)"
        );
        assert_eq!(err("b h)", &mut ids), "Brackets are not balanced");
        assert_eq!(
            err("b (h", &mut ids),
            "Imbalanced parentheses in expression: \"b (h\""
        );
        assert_eq!(
            err("b . c", &mut ids),
            "Expression may contain dots only inside ellipsis (...)"
        );
        assert!(err("... ...", &mut ids)
            .starts_with("Expression may contain dots only inside ellipsis (...); only one"));
        assert_eq!(err("b-c", &mut ids), "Unknown character '-'");
        assert_eq!(
            err("_b", &mut ids),
            "Invalid axis identifier: _b\naxis name should should not start or end with underscore"
        );
        assert_eq!(
            err("2b", &mut ids),
            "Invalid axis identifier: 2b\nnot a valid python identifier"
        );
        assert!(parse_pattern("a b").is_err());
        assert!(parse_pattern("a -> b -> c").is_err());
    }
}
