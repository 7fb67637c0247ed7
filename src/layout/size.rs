//! The [`Size`] trait lets every algorithm of the algebra run unchanged on concrete
//! sizes (`i64`) and on symbolic ones ([`Dim`](super::dim::Dim)).
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

/// Settings that bound what the decider may assume about named sizes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Assumptions {
    /// A named size is assumed `>= min_symbolic_size` unless it is a literal (default 2,
    /// so that no named dimension silently collapses to size 1 or 0).
    pub min_symbolic_size: i64,
    /// Exact quotients the code computed (`C // n_head`), as `(dividend symbol, divisor)`:
    /// the quotient is an integer size, so it is assumed `>= min_symbolic_size` too (a head
    /// dimension of 1 is not a model anyone writes). Only symbols are rewritten with this.
    pub exact_quotients: Vec<(String, super::dim::Dim)>,
    /// Decide an equality of two sizes that differ as expressions (`T` and `C`) as false,
    /// recording [`Assumption::Distinct`]: a finding then holds "unless T == C".
    pub distinct_sizes: bool,
}

impl Default for Assumptions {
    fn default() -> Self {
        Assumptions {
            min_symbolic_size: 2,
            exact_quotients: Vec::new(),
            distinct_sizes: false,
        }
    }
}

/// One assumption a decision rested on. Rendered in diagnostics' notes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Assumption {
    /// `name >= min`
    MinSize { name: String, min: i64 },
    /// `divisor` divides `dividend` exactly (from `a // b` on sizes).
    Divides { divisor: String, dividend: String },
    /// Two sizes that differ as expressions are assumed to differ in value
    /// ([`Assumptions::distinct_sizes`]).
    Distinct { a: String, b: String },
    /// A target size the analysis could not relate to the input is the one value the
    /// element count allows (any other value makes the call fail on the element count).
    SolvedSize { name: String, value: String },
    /// A constructor switch (a parameter defaulting to `None`, `True`/`False` or a string,
    /// read by one of its tests) has its default: a method analysed on its own sees the
    /// object the default arguments build.
    DefaultArgument {
        class: String,
        name: String,
        value: String,
    },
}

impl fmt::Display for Assumption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Assumption::MinSize { name, min } => write!(f, "{name} ≥ {min}"),
            Assumption::Divides { divisor, dividend } => write!(f, "{divisor} divides {dividend}"),
            Assumption::Distinct { a, b } => write!(f, "{a} ≠ {b}"),
            Assumption::SolvedSize { name, value } => write!(f, "{name} = {value}"),
            Assumption::DefaultArgument { class, name, value } => {
                write!(f, "`{class}` built with its default `{name}={value}`")
            }
        }
    }
}

/// Result of comparing two sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison {
    /// `None` when the ordering cannot be decided under the assumptions.
    pub ordering: Option<Ordering>,
    /// Assumptions the answer depends on (empty when it holds for all values).
    pub used: Vec<Assumption>,
}

impl Comparison {
    pub fn exact(ordering: Ordering) -> Self {
        Comparison {
            ordering: Some(ordering),
            used: Vec::new(),
        }
    }
    pub fn unknown() -> Self {
        Comparison {
            ordering: None,
            used: Vec::new(),
        }
    }
}

/// A size or stride value: `i64` or a symbolic [`Dim`](super::dim::Dim).
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
}

/// Decides comparisons and remembers every assumption it used, so a finding can list them.
#[derive(Debug)]
pub struct Decider<'a> {
    assumptions: &'a Assumptions,
    used: RefCell<BTreeSet<Assumption>>,
}

static CONCRETE: Assumptions = Assumptions {
    min_symbolic_size: 2,
    exact_quotients: Vec::new(),
    distinct_sizes: false,
};

impl<'a> Decider<'a> {
    pub fn new(assumptions: &'a Assumptions) -> Self {
        Decider {
            assumptions,
            used: RefCell::new(BTreeSet::new()),
        }
    }

    /// A decider for concrete (`i64`) work: no assumption is ever needed.
    pub fn concrete() -> Decider<'static> {
        Decider::new(&CONCRETE)
    }

    pub fn assumptions(&self) -> &Assumptions {
        self.assumptions
    }

    pub fn cmp<S: Size>(&self, a: &S, b: &S) -> Option<Ordering> {
        let c = a.compare(b, self.assumptions);
        if c.ordering.is_some() && !c.used.is_empty() {
            self.used.borrow_mut().extend(c.used);
        }
        c.ordering
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
