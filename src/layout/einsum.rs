//! The layout of `torch.einsum`'s result, where torch 2.15 decides it by a rule the linter
//! can state (checked on random equations and operand layouts by
//! `scripts/oracle/einsum_layouts.py`; the table is `tests/data/oracle/einsum.jsonl`).
//!
//! * One operand, the output a reordering of its letters (`"nhwpqc->nchpwq"`): a view,
//!   the input's dims permuted.
//! * Two operands, every letter either kept or contracted between both (none summed
//!   within one operand), at least one contracted: torch contracts with one batched
//!   matrix product whose result is laid out as the kept letters of both operands first,
//!   then those of one operand alone, then those of the other, and permutes that to the
//!   output's order. When the letters of each operand alone are together in the output
//!   (`"bnij,bnjd->bind"`: `i` then `d`), that memory order is the output's letters in the
//!   order shared-then-alone, whatever the operands' own layouts: the result is a fresh
//!   tensor in that order. Other equations are not decided here.

use super::{Decider, Layout, Size};

/// The result layout of `einsum(equation, *operands)`, when the rule above decides it.
pub fn einsum_layout<S: Size>(
    equation: &str,
    operands: &[&Layout<S>],
    d: &Decider,
) -> Option<Layout<S>> {
    let equation: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
    let (lhs, out) = equation.split_once("->")?;
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != operands.len() || !plain_letters(out) {
        return None;
    }
    for (term, operand) in terms.iter().zip(operands) {
        if !plain_letters(term) || term.chars().count() != operand.rank() {
            return None;
        }
    }
    match (terms.as_slice(), operands) {
        ([term], [input]) => permuted(term, out, input),
        ([a, b], [left, right]) => contracted(a, b, out, left, right, d),
        _ => None,
    }
}

/// Letters only, each once.
fn plain_letters(term: &str) -> bool {
    let mut seen = std::collections::HashSet::new();
    term.chars()
        .all(|c| c.is_ascii_alphabetic() && seen.insert(c))
}

fn permuted<S: Size>(term: &str, out: &str, input: &Layout<S>) -> Option<Layout<S>> {
    if out.len() != term.len() {
        return None;
    }
    let mut shape = Vec::with_capacity(out.len());
    let mut strides = Vec::with_capacity(out.len());
    for c in out.chars() {
        let i = term.find(c)?;
        shape.push(input.shape[i].clone());
        strides.push(input.strides[i].clone());
    }
    Some(Layout::new(shape, strides, input.offset.clone()))
}

fn contracted<S: Size>(
    a: &str,
    b: &str,
    out: &str,
    left: &Layout<S>,
    right: &Layout<S>,
    d: &Decider,
) -> Option<Layout<S>> {
    let memory_order = contraction_memory_order(a, b, out)?;
    // A kept letter both operands have must have one size in both (no broadcasting of a
    // size 1); a contracted one need not be compared: torch raises if they differ. Two
    // sizes neither of which is 1 must be equal, or torch raises: past the call they are
    // (`b` of `"bid,bjd->bij"` on operands from two parameters).
    let size_of = |c: char| -> Option<S> {
        match (a.find(c), b.find(c)) {
            (Some(i), Some(j)) => {
                let (x, y) = (&left.shape[i], &right.shape[j]);
                let same = d.eq(x, y);
                let must_match = || d.ne(x, &S::lit(1)).is_yes() && d.ne(y, &S::lit(1)).is_yes();
                (same.is_yes() || (same.known().is_none() && must_match())).then(|| x.clone())
            }
            (Some(i), None) => Some(left.shape[i].clone()),
            (None, Some(j)) => Some(right.shape[j].clone()),
            (None, None) => None,
        }
    };
    let sizes: Vec<S> = memory_order
        .iter()
        .map(|&c| size_of(c))
        .collect::<Option<_>>()?;
    let dense = Layout::contiguous(sizes);
    let mut shape = Vec::with_capacity(out.len());
    let mut strides = Vec::with_capacity(out.len());
    for c in out.chars() {
        let k = memory_order.iter().position(|&m| m == c)?;
        shape.push(dense.shape[k].clone());
        strides.push(dense.strides[k].clone());
    }
    Some(Layout::new(shape, strides, S::lit(0)))
}

/// The output letters in the order of the result's memory (outermost first) for a
/// two-operand contraction the rule decides, from the letters alone.
fn contraction_memory_order(a: &str, b: &str, out: &str) -> Option<Vec<char>> {
    let in_a = |c: char| a.contains(c);
    let in_b = |c: char| b.contains(c);
    // Every letter is kept or contracted between both; at least one is contracted.
    let summed_alone = a.chars().any(|c| !out.contains(c) && !in_b(c))
        || b.chars().any(|c| !out.contains(c) && !in_a(c));
    let contracts = a.chars().any(|c| !out.contains(c) && in_b(c));
    if summed_alone || !contracts || out.chars().any(|c| !in_a(c) && !in_b(c)) {
        return None;
    }
    let shared: Vec<char> = out.chars().filter(|&c| in_a(c) && in_b(c)).collect();
    let rest: Vec<char> = out.chars().filter(|c| !shared.contains(c)).collect();
    let alone_a: Vec<char> = rest.iter().copied().filter(|&c| in_a(c)).collect();
    let alone_b: Vec<char> = rest.iter().copied().filter(|&c| in_b(c)).collect();
    let grouped =
        rest == [alone_a.clone(), alone_b.clone()].concat() || rest == [alone_b, alone_a].concat();
    grouped.then(|| shared.into_iter().chain(rest).collect())
}

/// A two-operand `equation` whose result the rule lays out in the output's own order
/// (`"bhlt,bhtv->bhlv"`): the result is contiguous whatever the operands' layouts and
/// sizes are, so it is known even when the operands are not (their ranks must match the
/// terms, or torch raises).
/// Returns the output's rank.
pub fn contiguous_from_letters(equation: &str) -> Option<usize> {
    let equation: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
    let (lhs, out) = equation.split_once("->")?;
    let terms: Vec<&str> = lhs.split(',').collect();
    let [a, b] = terms.as_slice() else {
        return None;
    };
    if !(plain_letters(a) && plain_letters(b) && plain_letters(out)) {
        return None;
    }
    contraction_memory_order(a, b, out)
        .filter(|order| order.iter().copied().eq(out.chars()))
        .map(|order| order.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Assumptions;

    fn contiguous(shape: &[i64]) -> Layout<i64> {
        Layout::contiguous(shape.to_vec())
    }

    fn einsum(equation: &str, operands: &[&Layout<i64>]) -> Option<(Vec<i64>, Vec<i64>)> {
        let assumptions = Assumptions::default();
        einsum_layout(equation, operands, &Decider::new(&assumptions))
            .map(|l| (l.shape.clone(), l.strides.clone()))
    }

    #[test]
    fn attention_products_are_contiguous() {
        let (p, v) = (contiguous(&[2, 3, 5, 7]), contiguous(&[2, 3, 7, 4]));
        assert_eq!(
            einsum("bhlt,bhtv->bhlv", &[&p, &v]),
            Some((vec![2, 3, 5, 4], vec![60, 20, 4, 1]))
        );
    }

    #[test]
    fn kept_letters_first_then_each_operand_alone() {
        // torch 2.15: (2, 5, 3, 4) strides (60, 4, 20, 1).
        let (p, v) = (contiguous(&[2, 3, 5, 7]), contiguous(&[2, 3, 7, 4]));
        assert_eq!(
            einsum("bnij,bnjd->bind", &[&p, &v]),
            Some((vec![2, 5, 3, 4], vec![60, 4, 20, 1]))
        );
        // torch 2.15: (2, 3, 5, 6) strides (18, 6, 36, 1).
        let (q, r) = (contiguous(&[2, 3, 5, 7]), contiguous(&[5, 6, 7]));
        assert_eq!(
            einsum("bhld,lrd->bhlr", &[&q, &r]),
            Some((vec![2, 3, 5, 6], vec![18, 6, 36, 1]))
        );
    }

    #[test]
    fn one_operand_is_a_permuted_view() {
        let x = Layout::new(vec![2, 3, 4], vec![1, 2, 6], 5);
        let l = einsum_layout("abc->cab", &[&x], &Decider::new(&Assumptions::default())).unwrap();
        assert_eq!(
            (l.shape, l.strides, l.offset),
            (vec![4, 2, 3], vec![6, 1, 2], 5)
        );
    }

    #[test]
    fn other_equations_are_not_decided() {
        let (a, b) = (contiguous(&[3, 2]), contiguous(&[3, 4]));
        // Letters of one operand alone interleaved with the other's in the output.
        let (x, y) = (contiguous(&[2, 4, 2]), contiguous(&[4, 2, 4]));
        assert_eq!(einsum("adb,efd->eafb", &[&x, &y]), None);
        // A letter summed within one operand, an outer product, an ellipsis.
        assert_eq!(einsum("ac,ad->d", &[&a, &b]), None);
        assert_eq!(
            einsum("i,j->ij", &[&contiguous(&[2]), &contiguous(&[3])]),
            None
        );
        assert_eq!(einsum("...ij,...jk->...ik", &[&a, &b]), None);
        // A kept letter whose sizes disagree.
        let (x, y) = (contiguous(&[2, 3, 4]), contiguous(&[5, 4, 6]));
        assert_eq!(einsum("bij,bjk->bik", &[&x, &y]), None);
    }

    #[test]
    fn contiguity_from_the_letters_alone() {
        assert_eq!(contiguous_from_letters("bhlt,bhtv->bhlv"), Some(4));
        assert_eq!(contiguous_from_letters("BHNKG,BHGF->BHNKF"), Some(5));
        assert_eq!(contiguous_from_letters("bhlk, bhtk -> bhlt"), Some(4));
        // The letters of the second operand alone may come first.
        assert_eq!(contiguous_from_letters("bhlt,bhtv->bhvl"), Some(4));
        // One operand's letters not together: not decided.
        assert_eq!(contiguous_from_letters("bhij,bhjkl->bhkil"), None);
        // Shared letters not first.
        assert_eq!(contiguous_from_letters("bhlt,bhtv->lbhv"), None);
        // One operand: a permuted view of it, which depends on its layout.
        assert_eq!(contiguous_from_letters("bhld->bdhl"), None);
        // A letter summed within one operand.
        assert_eq!(contiguous_from_letters("bhlt,bhv->bhlv"), None);
    }
}
