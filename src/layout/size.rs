//! The [`Size`] trait lets every algorithm of the algebra run unchanged on concrete
//! sizes (`i64`) and on symbolic ones ([`Dim`]).
//!
//! Arithmetic is exact and total; *comparisons* go through a [`Decider`], which answers
//! with a [`Tri`] and records the [`Assumption`]s it needed (e.g. "`B` ≥ 2"). For `i64`
//! every comparison is decided and no assumption is ever used.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::fmt;
use std::hash::Hash;

use super::tri::Tri;

pub use super::assumption::{Assumption, Comparison};
pub use super::dim::Assumptions;
use super::dim::Dim;

/// A size or stride value: `i64` or a symbolic [`Dim`].
pub trait Size:
    Clone + PartialEq + Eq + Hash + fmt::Debug + fmt::Display + Send + Sync + 'static
{
    fn lit(v: i64) -> Self;
    /// The literal value, when the size is a known constant.
    fn as_lit(&self) -> Option<i64>;
    fn add(&self, other: &Self) -> Self;
    fn sub(&self, other: &Self) -> Self;
    fn mul(&self, other: &Self) -> Self;
    /// Python `a // b` on sizes. Concrete: floor division. Symbolic: the exact quotient
    /// when the normal form can express it (see `Dim::floordiv`).
    fn floordiv(&self, other: &Self) -> Self;
    /// Compare under assumptions.
    fn compare(&self, other: &Self, assumptions: &Assumptions) -> Comparison;
    /// [`Size::compare`]'s ordering, adding the assumptions a decided answer used to `used`.
    fn decide(
        &self,
        other: &Self,
        assumptions: &Assumptions,
        used: &mut BTreeSet<Assumption>,
    ) -> Option<Ordering> {
        let c = self.compare(other, assumptions);
        if c.ordering.is_some() {
            used.extend(c.used);
        }
        c.ordering
    }
    /// Does `self` divide `dividend` whatever the sizes are (`2` divides `4`, `H·W` divides
    /// `B·H·W·C`)? `false` when that is not certain.
    fn divides_by_construction(&self, dividend: &Self) -> bool;
    /// For a loop index the assumptions bound (`b` of `for b in range(B)`): the bound it
    /// stays below, `B`. Never for a concrete size.
    fn index_bound(&self, _assumptions: &Assumptions) -> Option<Self> {
        None
    }
    /// `self ≤ bound` as a fact the assumptions can hold (`k·s ≤ n` is `s ≤ n // k`), when
    /// `self` is a multiple of one symbol. Never for a concrete size.
    fn upper_bound_fact(&self, _bound: &Self) -> Option<(String, Dim)> {
        None
    }
}

thread_local! {
    /// Set when concrete (`i64`) size arithmetic overflowed on this thread (see
    /// [`detect_overflow`]).
    static OVERFLOWED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The wrapped result of a concrete operation, noting an overflow.
fn noting_overflow((value, overflowed): (i64, bool)) -> i64 {
    if overflowed {
        OVERFLOWED.with(|flag| flag.set(true));
    }
    value
}

/// Runs `f` and says whether any concrete size arithmetic in it overflowed `i64`. The
/// concrete algebra wraps (as it must not panic), so a result computed with an overflow is
/// meaningless: `--verify` and `stridelint replay` refuse it rather than report it.
pub fn detect_overflow<R>(f: impl FnOnce() -> R) -> (R, bool) {
    let before = OVERFLOWED.with(|flag| flag.replace(false));
    let result = f();
    let overflowed = OVERFLOWED.with(|flag| flag.replace(before));
    (result, overflowed)
}

impl Size for i64 {
    fn lit(v: i64) -> Self {
        v
    }
    fn as_lit(&self) -> Option<i64> {
        Some(*self)
    }
    fn add(&self, other: &Self) -> Self {
        noting_overflow(self.overflowing_add(*other))
    }
    fn sub(&self, other: &Self) -> Self {
        noting_overflow(self.overflowing_sub(*other))
    }
    fn mul(&self, other: &Self) -> Self {
        noting_overflow(self.overflowing_mul(*other))
    }
    fn floordiv(&self, other: &Self) -> Self {
        if *other == 0 {
            return 0;
        }
        if *self == i64::MIN && *other == -1 {
            return noting_overflow((i64::MIN, true));
        }
        // Python rounds toward negative infinity. `div_euclid` does not for a negative
        // divisor (`7.div_euclid(-2)` is -3, Python's `7 // -2` is -4), and `/` truncates.
        let quotient = self.wrapping_div(*other);
        if self.wrapping_rem(*other) != 0 && ((*self < 0) != (*other < 0)) {
            quotient - 1
        } else {
            quotient
        }
    }
    fn compare(&self, other: &Self, _: &Assumptions) -> Comparison {
        Comparison::exact(self.cmp(other))
    }
    fn divides_by_construction(&self, dividend: &Self) -> bool {
        *self != 0 && dividend % self == 0
    }
}

/// The symbolic sizes: [`Dim`]'s own arithmetic and comparisons.
impl Size for Dim {
    fn lit(v: i64) -> Self {
        Dim::lit(v)
    }
    fn as_lit(&self) -> Option<i64> {
        Dim::as_lit(self)
    }
    fn add(&self, other: &Self) -> Self {
        Dim::add(self, other)
    }
    fn sub(&self, other: &Self) -> Self {
        Dim::sub(self, other)
    }
    fn mul(&self, other: &Self) -> Self {
        Dim::mul(self, other)
    }
    fn floordiv(&self, other: &Self) -> Self {
        Dim::floordiv(self, other)
    }
    fn compare(&self, other: &Self, assumptions: &Assumptions) -> Comparison {
        Dim::compare(self, other, assumptions)
    }
    /// Copies only the assumptions `used` lacks: most answers are remembered ones, whose
    /// assumptions were noted before.
    fn decide(
        &self,
        other: &Self,
        assumptions: &Assumptions,
        used: &mut BTreeSet<Assumption>,
    ) -> Option<Ordering> {
        Dim::compare_with(self, other, assumptions, |c| {
            if c.ordering.is_some() {
                for a in &c.used {
                    if !used.contains(a) {
                        used.insert(a.clone());
                    }
                }
            }
            c.ordering
        })
    }
    fn divides_by_construction(&self, dividend: &Self) -> bool {
        Dim::divides_by_construction(self, dividend)
    }
    fn upper_bound_fact(&self, bound: &Self) -> Option<(String, Dim)> {
        let (k, name) = self.as_scaled_symbol()?;
        let bound = if k == 1 {
            bound.clone()
        } else {
            bound.scaled_down(k)?
        };
        Some((name.to_string(), bound))
    }
    fn index_bound(&self, assumptions: &Assumptions) -> Option<Self> {
        let name = self.as_symbol()?;
        let (_, stop) = assumptions.loop_indices.iter().find(|(n, _)| n == name)?;
        Some(stop.clone())
    }
}
/// Decides comparisons and remembers every assumption it used, so a finding can list them.
#[derive(Debug)]
pub struct Decider<'a> {
    assumptions: &'a Assumptions,
    used: RefCell<BTreeSet<Assumption>>,
    /// Upper bounds a call showed (see [`Decider::learn_upper_bound`]).
    learned_bounds: RefCell<Vec<(String, Dim)>>,
}

static CONCRETE: Assumptions = Assumptions {
    min_symbolic_size: 2,
    exact_quotients: Vec::new(),
    distinct_sizes: false,
    loop_indices: Vec::new(),
    upper_bounds: Vec::new(),
};

impl<'a> Decider<'a> {
    pub fn new(assumptions: &'a Assumptions) -> Self {
        Decider {
            assumptions,
            used: RefCell::new(BTreeSet::new()),
            learned_bounds: RefCell::new(Vec::new()),
        }
    }

    /// `value ≤ bound` holds past the call being decided (it fails otherwise: a range
    /// outside its dim), though the decider cannot show it: the caller may keep it as a
    /// fact of the path ([`Assumptions::upper_bounds`]).
    pub fn learn_upper_bound<S: Size>(&self, value: &S, bound: &S) {
        if self.le(value, bound).is_yes() {
            return;
        }
        if let Some(fact) = value.upper_bound_fact(bound) {
            let mut learned = self.learned_bounds.borrow_mut();
            if !learned.contains(&fact) {
                learned.push(fact);
            }
        }
    }

    /// The upper bounds learned so far, taken.
    pub fn take_learned_bounds(&self) -> Vec<(String, Dim)> {
        std::mem::take(&mut *self.learned_bounds.borrow_mut())
    }

    /// A decider for concrete (`i64`) work: no assumption is ever needed.
    pub fn concrete() -> Decider<'static> {
        Decider::new(&CONCRETE)
    }

    pub fn assumptions(&self) -> &Assumptions {
        self.assumptions
    }

    /// Is `index` a loop index known to lie in `[0, size)` (`pred[b]` in `for b in
    /// range(B)` where `pred` has `B` rows)?
    pub fn index_in_range<S: Size>(&self, index: &S, size: &S) -> bool {
        index
            .index_bound(self.assumptions)
            .is_some_and(|stop| self.le(&stop, size) == Tri::Yes)
    }

    pub fn cmp<S: Size>(&self, a: &S, b: &S) -> Option<Ordering> {
        a.decide(b, self.assumptions, &mut self.used.borrow_mut())
    }

    // Sizes are integers, so when `a` vs `b` has no strict answer (`B` vs `2` with `B ≥ 2`),
    // comparing against `b ± 1` can still decide a non-strict question: `a > b - 1` means
    // `a ≥ b`, i.e. `a < b` is false.

    pub fn eq<S: Size>(&self, a: &S, b: &S) -> Tri {
        match self.cmp(a, b) {
            Some(o) => Tri::from_bool(o == Ordering::Equal),
            None => {
                let one = S::lit(1);
                if self
                    .cmp(a, &b.add(&one))
                    .is_some_and(|o| o != Ordering::Less)
                    || self
                        .cmp(a, &b.sub(&one))
                        .is_some_and(|o| o != Ordering::Greater)
                {
                    Tri::No
                } else if self.assumptions.distinct_sizes && a.sub(b).as_lit().is_none() {
                    self.record(Assumption::Distinct {
                        a: a.to_string(),
                        b: b.to_string(),
                    });
                    Tri::No
                } else {
                    Tri::Unknown
                }
            }
        }
    }
    pub fn ne<S: Size>(&self, a: &S, b: &S) -> Tri {
        self.eq(a, b).not()
    }
    pub fn lt<S: Size>(&self, a: &S, b: &S) -> Tri {
        match self.cmp(a, b) {
            Some(o) => Tri::from_bool(o == Ordering::Less),
            None => match self.cmp(a, &b.sub(&S::lit(1))) {
                // a > b - 1  ⇔  a ≥ b
                Some(Ordering::Greater) => Tri::No,
                // a ≤ b - 1  ⇔  a < b
                Some(Ordering::Less | Ordering::Equal) => Tri::Yes,
                None => Tri::Unknown,
            },
        }
    }
    pub fn le<S: Size>(&self, a: &S, b: &S) -> Tri {
        match self.cmp(a, b) {
            Some(o) => Tri::from_bool(o != Ordering::Greater),
            None => match self.cmp(a, &b.add(&S::lit(1))) {
                // a < b + 1  ⇔  a ≤ b
                Some(Ordering::Less) => Tri::Yes,
                // a ≥ b + 1  ⇔  a > b
                Some(Ordering::Greater | Ordering::Equal) => Tri::No,
                None => Tri::Unknown,
            },
        }
    }
    pub fn eq_lit<S: Size>(&self, a: &S, v: i64) -> Tri {
        self.eq(a, &S::lit(v))
    }

    /// Record an assumption made outside a comparison (e.g. exact division).
    pub fn record(&self, a: Assumption) {
        self.used.borrow_mut().insert(a);
    }

    /// Every assumption used so far, sorted.
    pub fn used(&self) -> Vec<Assumption> {
        self.used.borrow().iter().cloned().collect()
    }

    /// Forget recorded assumptions (reuse the decider for an unrelated question).
    pub fn take_used(&self) -> Vec<Assumption> {
        std::mem::take(&mut *self.used.borrow_mut())
            .into_iter()
            .collect()
    }
}
