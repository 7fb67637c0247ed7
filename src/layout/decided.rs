//! Small helpers for turning three-valued answers into control flow.
//!
//! The algorithms of this module are written once and run over concrete and symbolic
//! sizes. With symbolic sizes a comparison may be undecidable; the rule of the algebra is
//! *never guess*. Each algorithm therefore asks `known(dec.eq(a, b))?` at every branch: the
//! `?` abandons the computation with [`Undecided`] as soon as a branch depends on something
//! the [`Decider`](super::size::Decider) cannot settle, and the public function turns that
//! into its own "unknown" answer (`ViewStrides::Unknown`, `LayoutErrorKind::Undecided`, …).

use super::size::{Assumption, Decider, Size};
use super::tri::Tri;

/// Marker: a comparison between symbolic sizes could not be decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Undecided;

/// The boolean behind a [`Tri`], or [`Undecided`] for `Tri::Unknown`.
pub(crate) fn known(answer: Tri) -> Result<bool, Undecided> {
    answer.known().ok_or(Undecided)
}

/// Product of sizes (`1` for an empty list), exact for symbolic sizes.
pub(crate) fn product<S: Size>(sizes: &[S]) -> S {
    sizes.iter().fold(S::lit(1), |acc, size| acc.mul(size))
}

/// `-value`, for printing ranges such as `[-size, size]` and for wrapping negative indices.
pub(crate) fn negate<S: Size>(value: &S) -> S {
    S::lit(0).sub(value)
}

/// Cite the assumption that `divisor` divides `dividend`, made when a symbolic quotient
/// is used as exact (`x.view(B, T, H, -1)` gives `C/H`), unless the division is exact by
/// construction (`(B·T·C) // (B·C)`: citing it would be a tautology). A literal divisor
/// needs nothing — its quotient is either a computed number or an opaque size.
pub(crate) fn cite_exact_division<S: Size>(divisor: &S, dividend: &S, dec: &Decider) {
    if divisor.as_lit().is_none() && !divisor.divides_by_construction(dividend) {
        dec.record(Assumption::Divides {
            divisor: divisor.to_string(),
            dividend: dividend.to_string(),
        });
    }
}

/// The smaller of two sizes, when the decider can tell which one it is.
pub(crate) fn smaller<S: Size>(a: &S, b: &S, dec: &Decider) -> Result<S, Undecided> {
    Ok(if known(dec.le(a, b))? {
        a.clone()
    } else {
        b.clone()
    })
}

/// `max(value, 0)`, when the decider can tell the sign.
pub(crate) fn at_least_zero<S: Size>(value: &S, dec: &Decider) -> Result<S, Undecided> {
    Ok(if known(dec.lt(value, &S::lit(0)))? {
        S::lit(0)
    } else {
        value.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_maps_unknown_to_undecided() {
        assert_eq!(known(Tri::Yes), Ok(true));
        assert_eq!(known(Tri::No), Ok(false));
        assert_eq!(known(Tri::Unknown), Err(Undecided));
    }

    #[test]
    fn product_of_empty_list_is_one() {
        assert_eq!(product::<i64>(&[]), 1);
        assert_eq!(product(&[2i64, 3, 4]), 24);
        assert_eq!(negate(&5i64), -5);
    }

    #[test]
    fn min_and_clamp() {
        let dec = Decider::concrete();
        assert_eq!(smaller(&3i64, &2, &dec), Ok(2));
        assert_eq!(at_least_zero(&-3i64, &dec), Ok(0));
        assert_eq!(at_least_zero(&4i64, &dec), Ok(4));
    }
}
