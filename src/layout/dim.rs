//! Symbolic sizes: one exact normal form for the sizes model code names.
//!
//! Model code writes sizes as `B`, `self.n_head`, `C // n_head`, `H * W`, `T - 1`. The
//! layout algorithms ask two questions about them: *are these the same size?* and *which
//! is bigger?* [`Dim`] makes the first one structural and answers the second one soundly.
//!
//! # Normal form
//! A `Dim` is a sum of terms `coeff · monomial`:
//! * `coeff` is a nonzero rational in lowest terms (checked `i128` arithmetic);
//! * `monomial` is a product of *atoms*, sorted, each with a nonzero integer exponent. An
//!   atom is a named symbol (kept exactly as written, `self.n_head`) or an *opaque* atom.
//!
//! Like terms are merged, zero terms dropped and terms kept in one canonical order, so two
//! `Dim`s are equal as data exactly when they are equal as Laurent polynomials: derived
//! `==` and `Hash` are mathematical equality for everything the form expresses.
//!
//! **Exact quotients.** `C // n_head` becomes `C·n_head⁻¹`, so `(C // n_head) * n_head`
//! is `C` again. That is only right when `n_head` divides `C`, so
//! [`Dim::floordiv_with_assumption`] hands the fact back as an [`Assumption`] for the
//! finding to cite. A division that is exact by construction (`(2·T·C) // (2·C)` = `T`)
//! needs none.
//!
//! **Opaque atoms.** What the form cannot express exactly — `T % 2`, `max(a, b)`,
//! `(T + 1) // 2`, `x // (T - 1)`, arithmetic that overflows or outgrows the size bounds —
//! becomes a single atom that keeps its operation and operands. Equal expressions give equal
//! atoms, and [`Dim::eval`] can still compute them.
//!
//! # Display
//! Printing follows the code rather than the normal form: a sum shows the factor its
//! terms share (`b·c·(t - 1)`, `2·(T + 1)`), and symbols print in the order the code
//! introduced them when the caller says what that is ([`with_display_order`]: the
//! finding's shapes, so `B, nh, T, hs = y.shape` prints strides `nh·T·hs`), by name
//! otherwise. Only the text changes, never the form, equality or hashing.
//!
//! # Comparisons
//! [`Dim::compare`] decides the sign of `d = a - b`, and answers *unknown* unless the sign
//! holds for every value the assumptions allow:
//! 1. Every atom gets a lower bound: a symbol is a size (`≥ 0`, or `≥ min_symbolic_size`
//!    on the second try), an atom in a denominator is a divisor (`≥ 1`), an opaque atom is
//!    bounded from its operands (`T % 3 ≥ 0`, `max(a, b) ≥ a`).
//! 2. `d` times its denominators (all positive) is a polynomial `P` with the sign of `d`.
//!    Write each atom as `bound + y` with `y ≥ 0` and expand. If the constant is `> 0` and
//!    every other coefficient `≥ 0`, then `P > 0` everywhere; mirror for `< 0`. For example
//!    `B·T - B` with `B, T ≥ 2` expands to `2 + 2·y_T + y_B + y_B·y_T`: Greater.
//! 3. An answer that needed `min_symbolic_size` lists a `MinSize` assumption for each
//!    symbol of `d`.
//!
//! Every `Dim` denotes an integer whenever its divisibility assumptions hold; the bounds
//! rely on that (a positive integer is `≥ 1`).

use hashbrown::hash_map::RawEntryMut;
use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeSet;
use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher};
use std::rc::Rc;
use std::sync::Arc;

use super::assumption::{Assumption, Comparison};
use super::names::{primed_names_in, unprimed, DisplayNames};

/// `(dividend, divisor)` of an exact quotient of sizes: the dividend a product of symbols
/// (`C`, `H·W`), the divisor any size.
pub type ExactQuotient = (Dim, Dim);

/// A result with more terms than this becomes one opaque atom, so that products of sums
/// cannot grow without bound.
const MAX_TERMS: usize = 64;
/// Largest `|exponent|` of an atom in a monomial; beyond it the result becomes opaque.
const MAX_EXPONENT: i32 = 16;
/// Largest operand tree (nodes counted with repetition) an opaque atom keeps. A bigger
/// one is replaced by a digest, so that no traversal can become exponential on shared
/// sub-expressions.
const MAX_OPAQUE_WEIGHT: u32 = 1024;
/// Largest number of monomials [`Dim::compare`] expands before answering unknown.
const MAX_EXPANSION: usize = 4096;
/// Characters of an oversized expression kept for display.
const PREVIEW_CHARS: usize = 40;

/// A symbolic size or stride in the normal form described in the module documentation.
/// `Clone` is cheap (one `Arc`).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Dim {
    /// Canonical order (see [`canonical_order`]); no zero coefficient; no repeated monomial.
    terms: Arc<[Term]>,
}

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Term {
    coeff: Coeff,
    /// Sorted by atom; exponents nonzero, `|exponent| <= MAX_EXPONENT`.
    mono: Vec<(Atom, i32)>,
}

/// The derived `Ord` only serves to sort atoms canonically; it says nothing about values.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Atom {
    Symbol(Arc<str>),
    Opaque(Arc<Opaque>),
}

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Opaque {
    /// A size given only by its source text ([`Dim::opaque`]).
    Named(String),
    /// `lhs op rhs` where the normal form cannot express the result exactly.
    Op {
        op: OpaqueOp,
        lhs: Operand,
        rhs: Operand,
        weight: u32,
    },
    /// An operation whose operands outgrew [`MAX_OPAQUE_WEIGHT`]: identified by a 128-bit
    /// digest of its structure, no longer evaluable.
    Digest {
        digest: u128,
        preview: String,
        symbols: Vec<String>,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
enum OpaqueOp {
    FloorDiv,
    Mod,
    Max,
    Min,
    /// A sum whose normal form overflowed or had too many terms.
    Sum,
    /// A product whose normal form overflowed or had too many terms.
    Product,
}

/// A `Dim` inside an opaque atom. It orders structurally so that atoms sort canonically;
/// `Dim` itself has no `Ord`, because `a < b` on sizes must go through [`Dim::compare`].
#[derive(Clone, PartialEq, Eq, Hash)]
struct Operand(Dim);

impl Ord for Operand {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.terms.cmp(&other.0.terms)
    }
}

impl PartialOrd for Operand {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A rational in lowest terms with a positive denominator. `i128::MIN` never appears in
/// either part, so negation cannot overflow.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
struct Coeff {
    num: i128,
    den: i128,
}

impl Coeff {
    const ZERO: Coeff = Coeff { num: 0, den: 1 };
    const ONE: Coeff = Coeff { num: 1, den: 1 };

    fn new(num: i128, den: i128) -> Option<Coeff> {
        if den == 0 || num == i128::MIN || den == i128::MIN {
            return None;
        }
        if num == 0 {
            return Some(Coeff::ZERO);
        }
        // Both parts are at most i128::MAX in magnitude, so the gcd fits.
        let g = gcd(num.unsigned_abs(), den.unsigned_abs()) as i128;
        // (An i128 division is a library call: skip it for the usual gcd of 1.)
        let (num, den) = if g == 1 {
            (num, den)
        } else {
            (num / g, den / g)
        };
        Some(if den < 0 {
            Coeff {
                num: -num,
                den: -den,
            }
        } else {
            Coeff { num, den }
        })
    }

    fn int(v: i128) -> Option<Coeff> {
        Coeff::new(v, 1)
    }

    /// [`Coeff::int`] without its gcd: `v / 1` is in lowest terms already.
    fn whole(v: i128) -> Option<Coeff> {
        (v != i128::MIN).then_some(Coeff { num: v, den: 1 })
    }

    fn add(self, other: Coeff) -> Option<Coeff> {
        if self.is_integer() && other.is_integer() {
            // What the general case gives for denominators of 1, without its divisions.
            return Coeff::whole(self.num.checked_add(other.num)?);
        }
        let g = gcd(self.den as u128, other.den as u128) as i128;
        let num = self
            .num
            .checked_mul(other.den / g)?
            .checked_add(other.num.checked_mul(self.den / g)?)?;
        Coeff::new(num, self.den.checked_mul(other.den / g)?)
    }

    fn mul(self, other: Coeff) -> Option<Coeff> {
        if self.num == 0 || other.num == 0 {
            return Some(Coeff::ZERO);
        }
        if self.is_integer() && other.is_integer() {
            return Coeff::whole(self.num.checked_mul(other.num)?);
        }
        let g1 = gcd(self.num.unsigned_abs(), other.den as u128) as i128;
        let g2 = gcd(other.num.unsigned_abs(), self.den as u128) as i128;
        Coeff::new(
            (self.num / g1).checked_mul(other.num / g2)?,
            (self.den / g2).checked_mul(other.den / g1)?,
        )
    }

    fn recip(self) -> Option<Coeff> {
        Coeff::new(self.den, self.num)
    }

    fn neg(self) -> Coeff {
        Coeff {
            num: -self.num,
            den: self.den,
        }
    }

    fn pow(self, exponent: u32) -> Option<Coeff> {
        (0..exponent).try_fold(Coeff::ONE, |acc, _| acc.mul(self))
    }

    fn is_integer(self) -> bool {
        self.den == 1
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    // A u128 remainder is a library call; sizes and strides fit u64.
    if let (Ok(x), Ok(y)) = (u64::try_from(a), u64::try_from(b)) {
        return u128::from(gcd64(x, y));
    }
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn gcd64(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Python's `a // b` (rounds toward negative infinity). `None` for `b == 0` or overflow.
fn python_floordiv(a: i128, b: i128) -> Option<i128> {
    let quotient = a.checked_div_euclid(b)?;
    // `div_euclid` leaves a nonnegative remainder; for a negative divisor that rounds the
    // real quotient up, and Python rounds it down.
    if b < 0 && a.checked_rem_euclid(b)? != 0 {
        quotient.checked_sub(1)
    } else {
        Some(quotient)
    }
}

/// Python's `a % b` (the result has the sign of `b`). `None` for `b == 0`.
fn python_mod(a: i128, b: i128) -> Option<i128> {
    let r = a.checked_rem(b)?;
    Some(if r != 0 && (r < 0) != (b < 0) {
        r + b
    } else {
        r
    })
}

fn degree(mono: &[(Atom, i32)]) -> i64 {
    mono.iter().map(|(_, e)| i64::from(*e)).sum()
}

/// The order terms are kept (and printed) in: higher degree first, constant last, then by
/// atom names. Equal monomials compare equal, so sorting also groups like terms.
fn canonical_order(a: &Term, b: &Term) -> Ordering {
    a.mono
        .is_empty()
        .cmp(&b.mono.is_empty())
        .then_with(|| degree(&b.mono).cmp(&degree(&a.mono)))
        .then_with(|| a.mono.cmp(&b.mono))
}

/// Product of two monomials; `None` when an exponent leaves `±MAX_EXPONENT`.
fn mono_mul(a: &[(Atom, i32)], b: &[(Atom, i32)]) -> Option<Vec<(Atom, i32)>> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let order = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.0.cmp(&y.0),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        let (atom, exponent) = match order {
            Ordering::Less => {
                i += 1;
                (&a[i - 1].0, a[i - 1].1)
            }
            Ordering::Greater => {
                j += 1;
                (&b[j - 1].0, b[j - 1].1)
            }
            Ordering::Equal => {
                i += 1;
                j += 1;
                (&a[i - 1].0, a[i - 1].1.checked_add(b[j - 1].1)?)
            }
        };
        if exponent.abs() > MAX_EXPONENT {
            return None;
        }
        if exponent != 0 {
            out.push((atom.clone(), exponent));
        }
    }
    Some(out)
}

impl Dim {
    /// The constant `v`.
    pub fn lit(v: i64) -> Dim {
        // Small constants (strides of 1, sizes of 2…) are built once per thread and shared.
        if (SMALL_LITERALS.start..SMALL_LITERALS.end).contains(&v) {
            return SMALL_LITERAL_CACHE
                .with(|cache| cache[(v - SMALL_LITERALS.start) as usize].clone());
        }
        Dim::new_lit(v)
    }

    fn new_lit(v: i64) -> Dim {
        let terms = if v == 0 {
            Vec::new()
        } else {
            vec![Term {
                coeff: Coeff {
                    num: v.into(),
                    den: 1,
                },
                mono: Vec::new(),
            }]
        };
        Dim {
            terms: terms.into(),
        }
    }

    /// A named size, kept exactly as written (`B`, `self.n_head`, `config.hidden_size`).
    pub fn sym(name: &str) -> Dim {
        Dim::from_atom(Atom::Symbol(name.into()))
    }

    /// A size the form cannot look into, identified by its text (`len(xs)`, `x.size(0)`):
    /// equal texts are the same size. It is taken to be a nonnegative integer, and
    /// [`Dim::eval`] asks the environment for it by its text.
    pub fn opaque(text: &str) -> Dim {
        Dim::from_atom(Atom::Opaque(Arc::new(Opaque::Named(text.to_string()))))
    }

    /// The name, when this is one symbol (`B`, not `2·B` or `B²`).
    pub fn as_symbol(&self) -> Option<&str> {
        match &self.terms[..] {
            [Term { coeff, mono }] if *coeff == Coeff::ONE => match mono.as_slice() {
                [(Atom::Symbol(name), 1)] => Some(name),
                _ => None,
            },
            _ => None,
        }
    }

    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    fn is_one(&self) -> bool {
        matches!(&*self.terms, [t] if t.mono.is_empty() && t.coeff == Coeff::ONE)
    }

    /// The value when this is an integer constant that fits `i64`.
    pub fn as_lit(&self) -> Option<i64> {
        self.constant()
            .filter(|c| c.is_integer())
            .and_then(|c| i64::try_from(c.num).ok())
    }

    pub fn is_lit(&self) -> bool {
        self.as_lit().is_some()
    }

    pub fn add(&self, other: &Dim) -> Dim {
        if other.is_zero() {
            return self.clone();
        }
        if self.is_zero() {
            return other.clone();
        }
        // (The general case's result for two integers, without building one.)
        if let Some(sum) = self.lit_pair_with(other, i64::checked_add) {
            return sum;
        }
        let terms = self
            .terms
            .iter()
            .chain(other.terms.iter())
            .cloned()
            .collect();
        Dim::from_terms(terms).unwrap_or_else(|| opaque_op(OpaqueOp::Sum, self, other))
    }

    pub fn sub(&self, other: &Dim) -> Dim {
        if let Some(difference) = self.lit_pair_with(other, i64::checked_sub) {
            return difference;
        }
        self.add(&other.neg())
    }

    /// `op` of two integers, as a literal, when both are and it fits `i64`: what the
    /// general arithmetic gives them, built without its term lists.
    fn lit_pair_with(&self, other: &Dim, op: fn(i64, i64) -> Option<i64>) -> Option<Dim> {
        op(self.as_lit()?, other.as_lit()?).map(Dim::lit)
    }

    pub fn neg(&self) -> Dim {
        let terms: Vec<Term> = self
            .terms
            .iter()
            .map(|t| Term {
                coeff: t.coeff.neg(),
                mono: t.mono.clone(),
            })
            .collect();
        // Negation keeps the monomials, hence the canonical order.
        Dim {
            terms: terms.into(),
        }
    }

    pub fn mul(&self, other: &Dim) -> Dim {
        if self.is_zero() || other.is_zero() {
            return Dim::lit(0);
        }
        // Products start from 1 (`numel`, contiguous strides): the other factor as it is.
        if self.is_one() {
            return other.clone();
        }
        if other.is_one() {
            return self.clone();
        }
        if let Some(product) = self.lit_pair_with(other, i64::checked_mul) {
            return product;
        }
        self.checked_mul(other)
            .unwrap_or_else(|| opaque_op(OpaqueOp::Product, self, other))
    }

    /// Python `self // divisor`; see [`Dim::floordiv_with_assumption`]. The caller that
    /// needs to cite the divisibility assumption must use that function instead.
    pub fn floordiv(&self, divisor: &Dim) -> Dim {
        self.floordiv_with_assumption(divisor).0
    }

    /// Python `self // divisor`, and the assumption the result rests on, if any:
    /// * two integer constants: floor division;
    /// * the divisor is one term that divides every term of `self` leaving a polynomial with
    ///   integer coefficients (`(2·T·C) // (2·C)` = `T`): that quotient, no assumption;
    /// * the divisor is a sum that divides `self` leaving an integer polynomial
    ///   (`(n·a + n·b) // (a + b)` = `n`): that quotient, no assumption;
    /// * the divisor is one non-constant term (`C // n_head`): the exact quotient
    ///   `C·n_head⁻¹`, with the assumption `n_head divides C`;
    /// * a constant divisor that divides every coefficient of a `self` that already holds
    ///   quotients (`(2·C/h) // 2`): that quotient, with the assumption that it is exact;
    /// * anything else (`(T + 1) // 2`, `x // (T - 1)`, `x // 0`): an opaque atom.
    pub fn floordiv_with_assumption(&self, divisor: &Dim) -> (Dim, Option<Assumption>) {
        let opaque = || (opaque_op(OpaqueOp::FloorDiv, self, divisor), None);
        if divisor.is_zero() {
            return opaque();
        }
        if let (Some(a), Some(b)) = (self.int_constant(), divisor.int_constant()) {
            return match python_floordiv(a, b).and_then(Dim::from_i128) {
                Some(q) => (q, None),
                None => opaque(),
            };
        }
        let [term] = &divisor.terms[..] else {
            // A sum divides exactly by construction (`(n·a + n·b) // (a + b)` = `n`).
            return match self.exact_quotient(divisor) {
                Some(q) if q.is_integer_polynomial() => (q, None),
                _ => opaque(),
            };
        };
        let Some(quotient) = self.checked_div_term(term) else {
            return opaque();
        };
        if quotient.is_integer_polynomial() {
            return (quotient, None);
        }
        let literal_divisor = term.mono.is_empty();
        if literal_divisor && !quotient.terms.iter().all(|t| t.coeff.is_integer()) {
            return opaque();
        }
        // `T // (2·T)` would be the constant 1/2: the assumption could never hold.
        if quotient.constant().is_some() {
            return opaque();
        }
        let assumption = Assumption::Divides {
            divisor: divisor.to_string(),
            dividend: self.to_string(),
        };
        (quotient, Some(assumption))
    }

    /// Whether an atom of the normal form is opaque (`H % w`, a sum that outgrew the form):
    /// a size the form cannot compare with much.
    pub fn has_opaque(&self) -> bool {
        self.terms
            .iter()
            .any(|t| t.mono.iter().any(|(a, _)| matches!(a, Atom::Opaque(_))))
    }

    /// Python `self % divisor`: a constant for two integer constants, `0` when the divisor
    /// divides `self` by construction (`(2·T) % 2`), otherwise an opaque atom.
    pub fn modulo(&self, divisor: &Dim) -> Dim {
        if !divisor.is_zero() {
            if let (Some(a), Some(b)) = (self.int_constant(), divisor.int_constant()) {
                if let Some(r) = python_mod(a, b).and_then(Dim::from_i128) {
                    return r;
                }
            } else if let [term] = &divisor.terms[..] {
                if self
                    .checked_div_term(term)
                    .is_some_and(|q| q.is_integer_polynomial())
                {
                    return Dim::lit(0);
                }
            }
        }
        opaque_op(OpaqueOp::Mod, self, divisor)
    }

    /// Python `max(self, other)`: one of them when their difference is a constant,
    /// otherwise an opaque atom (the same one for `max(a, b)` and `max(b, a)`).
    pub fn max(&self, other: &Dim) -> Dim {
        match self.sub(other).constant() {
            Some(d) if d.num >= 0 => self.clone(),
            Some(_) => other.clone(),
            None => opaque_op(OpaqueOp::Max, self, other),
        }
    }

    /// Python `min(self, other)`; see [`Dim::max`].
    pub fn min(&self, other: &Dim) -> Dim {
        match self.sub(other).constant() {
            Some(d) if d.num <= 0 => self.clone(),
            Some(_) => other.clone(),
            None => opaque_op(OpaqueOp::Min, self, other),
        }
    }

    /// Replace the symbol `name` by `value` (an equality the analysis learned, e.g. a
    /// `Linear`'s `in_features` equals its input's last size). Negative powers of `name` are
    /// replaced only when `value` is a single term (so the quotient stays exact); otherwise,
    /// and inside opaque atoms, the symbol is kept — still correct, since `name == value`.
    pub fn substitute(&self, name: &str, value: &Dim) -> Dim {
        if !self.terms.iter().any(|t| {
            t.mono
                .iter()
                .any(|(a, _)| matches!(a, Atom::Symbol(s) if &**s == name))
        }) {
            return self.clone();
        }
        let single_term = value.terms.len() == 1;
        let mut out = Dim::lit(0);
        for t in self.terms.iter() {
            let mut factor = Dim {
                terms: vec![Term {
                    coeff: t.coeff,
                    mono: Vec::new(),
                }]
                .into(),
            };
            for (atom, exp) in &t.mono {
                let is_target = matches!(atom, Atom::Symbol(s) if &**s == name);
                let power = if is_target && *exp < 0 && single_term {
                    // value^-k for a single term: invert its coefficient and exponents.
                    match value.inverse_single_term() {
                        Some(inv) => (0..(-*exp)).fold(Dim::lit(1), |acc, _| acc.mul(&inv)),
                        None => return self.clone(),
                    }
                } else if is_target && *exp > 0 {
                    (0..*exp).fold(Dim::lit(1), |acc, _| acc.mul(value))
                } else {
                    Dim {
                        terms: vec![Term {
                            coeff: Coeff { num: 1, den: 1 },
                            mono: vec![(atom.clone(), *exp)],
                        }]
                        .into(),
                    }
                };
                factor = factor.mul(&power);
            }
            out = out.add(&factor);
        }
        out
    }

    /// `1 / self` for a single term with a nonzero coefficient.
    fn inverse_single_term(&self) -> Option<Dim> {
        let [t] = &*self.terms else { return None };
        if t.coeff.num == 0 {
            return None;
        }
        let (num, den) = if t.coeff.num < 0 {
            (-t.coeff.den, -t.coeff.num)
        } else {
            (t.coeff.den, t.coeff.num)
        };
        let mono = t.mono.iter().map(|(a, e)| (a.clone(), -e)).collect();
        Dim::from_terms(vec![Term {
            coeff: Coeff { num, den },
            mono,
        }])
    }

    /// Every named symbol this size mentions, also inside opaque atoms; sorted, unique.
    pub fn symbols(&self) -> Vec<String> {
        let mut out = BTreeSet::new();
        self.collect_symbols(&mut out);
        out.into_iter().collect()
    }

    /// The value under `env` (symbols, and opaque sizes by their text). `None` when a name
    /// is unbound, a quotient is not exact, a divisor is zero, an opaque atom was reduced to
    /// a digest, or the value does not fit `i64`.
    pub fn eval(&self, env: &dyn Fn(&str) -> Option<i64>) -> Option<i64> {
        i64::try_from(self.eval_exact(env)?).ok()
    }

    /// Decide `self` against `other` for every value the assumptions allow (see the module
    /// documentation); `ordering: None` when that cannot be proved.
    pub fn compare(&self, other: &Dim, assumptions: &Assumptions) -> Comparison {
        self.compare_with(other, assumptions, Comparison::clone)
    }

    /// [`Dim::compare`], its answer handed to `f` by reference (a remembered answer is not
    /// copied).
    pub fn compare_with<R>(
        &self,
        other: &Dim,
        assumptions: &Assumptions,
        f: impl FnOnce(&Comparison) -> R,
    ) -> R {
        // Most comparisons are of a size with itself or of two integers.
        if self == other {
            return f(&Comparison::exact(Ordering::Equal));
        }
        if let (Some(a), Some(b)) = (self.as_lit(), other.as_lit()) {
            return f(&Comparison::exact(a.cmp(&b)));
        }
        let quotients = assumptions.exact_quotients.as_slice();
        // With exact quotients the answer names a symbol per quotient, printed as `x/h`:
        // inside a finding's display scope that printing is noted, so it must run. Upper
        // bounds are not part of the memo's key.
        if !assumptions.upper_bounds.is_empty()
            || (!quotients.is_empty() && !outside_display_scope())
        {
            return f(&self.compare_symbolic(other, assumptions));
        }
        // The same sizes are compared again and again (every op refines and checks the
        // layouts it sees). Most answers depend on the two sizes and the floor alone, a
        // cheap key; only those left open are tried again with the exact quotients.
        let floor = assumptions.min_symbolic_size;
        let free = ComparisonKey {
            a: self,
            b: other,
            floor,
            quotients: &[],
        };
        let free_answer = remembered(&FREE_COMPARISONS, &free, || self.compare_free(other, floor));
        match free_answer {
            Some(c) => return f(&c),
            None if quotients.is_empty() => return f(&Comparison::unknown()),
            None => {}
        }
        let key = ComparisonKey { quotients, ..free };
        let answer = remembered(&COMPARISONS, &key, || {
            Some(self.sub(other).compare_open(assumptions))
        });
        f(answer.as_deref().unwrap_or(&Comparison::unknown()))
    }

    /// [`Dim::compare`] of two sizes that are not both integers, worked out.
    fn compare_symbolic(&self, other: &Dim, assumptions: &Assumptions) -> Comparison {
        let floor = assumptions.min_symbolic_size;
        self.compare_free(other, floor)
            .unwrap_or_else(|| self.sub(other).compare_open(assumptions))
    }

    /// The sign of `self`, a difference [`Dim::compare_free`] left open, from the other
    /// assumptions.
    fn compare_open(&self, assumptions: &Assumptions) -> Comparison {
        if assumptions.min_symbolic_size > 0 {
            if let Some(c) = self.compare_by_quotients(assumptions) {
                return c;
            }
        }
        self.compare_within_bounds(assumptions)
            .unwrap_or_else(Comparison::unknown)
    }

    /// The part of [`Dim::compare_symbolic`] that needs no assumption but the floor of
    /// named sizes; `None` when it leaves the comparison open.
    fn compare_free(&self, other: &Dim, floor: i64) -> Option<Comparison> {
        let difference = self.sub(other);
        if let Some(c) = difference.constant() {
            return Some(Comparison::exact(c.num.cmp(&0)));
        }
        if floor < 0 {
            // Named sizes may be negative: no atom has a lower bound.
            return Some(Comparison::unknown());
        }
        if let Some(ordering) = sign_everywhere(&difference, 0) {
            return Some(Comparison::exact(ordering));
        }
        if floor > 0 {
            if let Some(ordering) = sign_everywhere(&difference, floor.into()) {
                return Some(difference.at_floor(ordering, floor));
            }
        }
        None
    }

    /// The sign of `self` (a difference) with the known exact quotients `x // h` written
    /// `x = h·q`, `q = x/h >= floor` a size of its own, which removes the divisor and often
    /// decides the sign. For a product `x = s·r` that is `s = h·q/r`.
    fn compare_by_quotients(&self, assumptions: &Assumptions) -> Option<Comparison> {
        let mut relaxed = self.clone();
        // The symbols of `relaxed`, worked out again only when it changes.
        let mut mentions = BTreeSet::new();
        relaxed.collect_symbols(&mut mentions);
        for (x, h) in &assumptions.exact_quotients {
            let Some((s, rest)) = x.split_symbol_factor() else {
                continue;
            };
            let mentioned = |name: &str| mentions.contains(name);
            if x.every_symbol(&mentioned) && h.every_symbol(&mentioned) {
                let q = Dim::sym(&format!("{x}/{h}"));
                let s_now = h.mul(&q).floordiv_with_assumption(&rest).0;
                relaxed = relaxed.substitute(&s, &s_now);
                mentions.clear();
                relaxed.collect_symbols(&mut mentions);
            }
        }
        if relaxed == *self {
            return None;
        }
        let floor = assumptions.min_symbolic_size;
        let ordering = sign_everywhere(&relaxed, floor.into())?;
        Some(relaxed.at_floor(ordering, floor))
    }

    /// An answer that holds with every symbol of `self` at least `floor`.
    fn at_floor(&self, ordering: Ordering, floor: i64) -> Comparison {
        let used = self
            .symbols()
            .into_iter()
            .map(|name| Assumption::MinSize { name, min: floor })
            .collect();
        Comparison {
            ordering: Some(ordering),
            used,
        }
    }

    /// The sign of `self` (a difference) with each symbol the assumptions bound from above
    /// (`s ≤ n`) written `n - σ`, `σ` a slack `≥ 0` (an opaque size, which the floor of
    /// named sizes never raises): for every value of the symbols with `s ≤ n` the two are
    /// equal, so a sign that holds for every `σ ≥ 0` holds for them. A symbol bound twice
    /// (`narrow(d, 0, r)` then `narrow(d, r, r)`: `r ≤ n`, `r ≤ n/2`) is written with its
    /// first bound, then, if that leaves the sign open, with its last. `None` when no bound
    /// applies or the sign is still open.
    fn compare_within_bounds(&self, assumptions: &Assumptions) -> Option<Comparison> {
        let bounds = &assumptions.upper_bounds;
        self.compare_with_bounds(bounds.iter(), assumptions)
            .or_else(|| self.compare_with_bounds(bounds.iter().rev(), assumptions))
    }

    /// [`Dim::compare_within_bounds`] with the bounds taken in the order given, the first
    /// one of each symbol applied.
    fn compare_with_bounds<'b>(
        &self,
        bounds: impl Iterator<Item = &'b (String, Dim)>,
        assumptions: &Assumptions,
    ) -> Option<Comparison> {
        let mut relaxed = self.clone();
        for (symbol, bound) in bounds {
            let not_symbol = |name: &str| name != symbol;
            if relaxed.every_symbol(&not_symbol) || !bound.every_symbol(&not_symbol) {
                continue;
            }
            let slack = Dim::opaque(&format!("({bound} - {symbol})"));
            relaxed = relaxed.substitute(symbol, &bound.sub(&slack));
        }
        if relaxed == *self {
            return None;
        }
        if let Some(ordering) = sign_everywhere(&relaxed, 0) {
            return Some(Comparison::exact(ordering));
        }
        let floor = assumptions.min_symbolic_size;
        if floor <= 0 {
            return None;
        }
        let ordering = sign_everywhere(&relaxed, floor.into())?;
        Some(relaxed.at_floor(ordering, floor))
    }

    /// `self / k` with rational coefficients (a bound compared as a real number, never a
    /// size itself); `None` when a coefficient would overflow.
    pub fn scaled_down(&self, k: i64) -> Option<Dim> {
        let factor = Coeff::new(1, i128::from(k))?;
        let scale = Dim {
            terms: vec![Term {
                coeff: factor,
                mono: Vec::new(),
            }]
            .into(),
        };
        Some(self.mul(&scale))
    }

    /// `k·s` for a symbol `s` and an integer `k ≥ 1`: `(k, s)`.
    pub fn as_scaled_symbol(&self) -> Option<(i64, &str)> {
        let [Term { coeff, mono }] = &self.terms[..] else {
            return None;
        };
        let [(Atom::Symbol(name), 1)] = mono.as_slice() else {
            return None;
        };
        (coeff.den == 1 && coeff.num >= 1)
            .then(|| i64::try_from(coeff.num).ok())
            .flatten()
            .map(|k| (k, &**name))
    }

    fn from_atom(atom: Atom) -> Dim {
        Dim {
            terms: vec![Term {
                coeff: Coeff::ONE,
                mono: vec![(atom, 1)],
            }]
            .into(),
        }
    }

    fn from_i128(v: i128) -> Option<Dim> {
        let coeff = Coeff::int(v)?;
        let terms = if v == 0 {
            Vec::new()
        } else {
            vec![Term {
                coeff,
                mono: Vec::new(),
            }]
        };
        Some(Dim {
            terms: terms.into(),
        })
    }

    /// Normalise a list of terms; `None` on coefficient overflow or more than `MAX_TERMS`.
    fn from_terms(mut terms: Vec<Term>) -> Option<Dim> {
        terms.sort_by(canonical_order);
        // Like terms are adjacent: merged in place into `terms[..kept]` (a term whose
        // coefficient sums to 0 is dropped), without a second list.
        let mut kept = 0;
        for i in 0..terms.len() {
            if kept > 0 && terms[kept - 1].mono == terms[i].mono {
                let coeff = terms[i].coeff;
                let last = &mut terms[kept - 1];
                last.coeff = last.coeff.add(coeff)?;
                if last.coeff.num == 0 {
                    kept -= 1;
                }
            } else if terms[i].coeff.num != 0 {
                terms.swap(kept, i);
                kept += 1;
            }
        }
        terms.truncate(kept);
        (terms.len() <= MAX_TERMS).then(|| Dim {
            terms: terms.into(),
        })
    }

    fn checked_mul(&self, other: &Dim) -> Option<Dim> {
        let mut terms = Vec::with_capacity(self.terms.len() * other.terms.len());
        for a in self.terms.iter() {
            for b in other.terms.iter() {
                terms.push(Term {
                    coeff: a.coeff.mul(b.coeff)?,
                    mono: mono_mul(&a.mono, &b.mono)?,
                });
            }
        }
        Dim::from_terms(terms)
    }

    /// `q` with `q · divisor == self` exactly, for a divisor of several terms: long
    /// division in the lexicographic order of monomials (an exact quotient's leading term
    /// is the dividend's over the divisor's), bounded, and checked by multiplying back.
    fn exact_quotient(&self, divisor: &Dim) -> Option<Dim> {
        fn lex(a: &[(Atom, i32)], b: &[(Atom, i32)]) -> Ordering {
            let (mut i, mut j) = (0, 0);
            loop {
                let (ea, eb) = match (a.get(i), b.get(j)) {
                    (None, None) => return Ordering::Equal,
                    (Some(x), Some(y)) if x.0 == y.0 => {
                        i += 1;
                        j += 1;
                        (x.1, y.1)
                    }
                    (Some(x), Some(y)) if x.0 < y.0 => {
                        i += 1;
                        (x.1, 0)
                    }
                    (Some(x), None) => {
                        i += 1;
                        (x.1, 0)
                    }
                    (_, Some(y)) => {
                        j += 1;
                        (0, y.1)
                    }
                };
                if ea != eb {
                    return ea.cmp(&eb);
                }
            }
        }
        let leading = |d: &Dim| d.terms.iter().max_by(|a, b| lex(&a.mono, &b.mono)).cloned();
        let lead = leading(divisor)?;
        let mut remainder = self.clone();
        let mut quotient: Vec<Term> = Vec::new();
        while !remainder.is_zero() {
            if quotient.len() == MAX_TERMS {
                return None;
            }
            let top = leading(&remainder)?;
            let step = Dim {
                terms: vec![top].into(),
            }
            .checked_div_term(&lead)?;
            remainder = Dim::from_terms(
                remainder
                    .terms
                    .iter()
                    .cloned()
                    .chain(step.checked_mul(divisor)?.neg().terms.iter().cloned())
                    .collect(),
            )?;
            quotient.extend(step.terms.iter().cloned());
        }
        let quotient = Dim::from_terms(quotient)?;
        (quotient.checked_mul(divisor)? == *self).then_some(quotient)
    }

    /// `self / term` in the Laurent form (exact rational division of every term).
    fn checked_div_term(&self, term: &Term) -> Option<Dim> {
        let coeff = term.coeff.recip()?;
        let mono: Vec<(Atom, i32)> = term.mono.iter().map(|(a, e)| (a.clone(), -e)).collect();
        let divisor_inverse = Dim {
            terms: vec![Term { coeff, mono }].into(),
        };
        self.checked_mul(&divisor_inverse)
    }

    /// The value when this is a constant (zero included), possibly non-integer.
    fn constant(&self) -> Option<Coeff> {
        match &self.terms[..] {
            [] => Some(Coeff::ZERO),
            [t] if t.mono.is_empty() => Some(t.coeff),
            _ => None,
        }
    }

    fn int_constant(&self) -> Option<i128> {
        self.constant().filter(|c| c.is_integer()).map(|c| c.num)
    }

    /// A product of symbols `s·r` (`H·W`, or `C` with `r = 1`): its first symbol of
    /// exponent 1 and the rest.
    pub fn split_symbol_factor(&self) -> Option<(String, Dim)> {
        let [term] = &self.terms[..] else {
            return None;
        };
        if term.coeff != Coeff::ONE {
            return None;
        }
        let mut first = None;
        let mut rest = Dim::lit(1);
        for (atom, exponent) in &term.mono {
            let Atom::Symbol(name) = atom else {
                return None;
            };
            if *exponent <= 0 {
                return None;
            }
            if first.is_none() && *exponent == 1 {
                first = Some(name.to_string());
                continue;
            }
            for _ in 0..*exponent {
                rest = rest.mul(&Dim::sym(name));
            }
        }
        first.map(|s| (s, rest))
    }

    /// `X / h` for a symbol `X` and a product `h` of symbols (`C/n_head`): that split.
    /// A `-1` of a successful `view` solved to such a size says `h` divides `X` exactly.
    pub fn as_symbol_quotient(&self) -> Option<(String, Dim)> {
        let [term] = &self.terms[..] else {
            return None;
        };
        if term.coeff != Coeff::ONE {
            return None;
        }
        let mut numerator = None;
        let mut divisor = Dim::lit(1);
        for (atom, exponent) in &term.mono {
            let Atom::Symbol(name) = atom else {
                return None;
            };
            match *exponent {
                1 if numerator.is_none() => numerator = Some(name.to_string()),
                e if e < 0 => {
                    for _ in 0..-e {
                        divisor = divisor.mul(&Dim::sym(name));
                    }
                }
                _ => return None,
            }
        }
        numerator
            .filter(|_| !divisor.is_lit())
            .map(|n| (n, divisor))
    }

    /// Integer coefficients and no negative exponent: an integer for integer atoms.
    /// Does `self` divide `dividend` for every value of the sizes (`H·W` divides
    /// `B·H·W·C`), so that citing it as an assumption would be a tautology?
    pub fn divides_by_construction(&self, dividend: &Dim) -> bool {
        let [term] = &self.terms[..] else {
            return false;
        };
        dividend
            .checked_div_term(term)
            .is_some_and(|q| q.is_integer_polynomial())
    }

    fn is_integer_polynomial(&self) -> bool {
        self.terms
            .iter()
            .all(|t| t.coeff.is_integer() && t.mono.iter().all(|(_, e)| *e > 0))
    }

    /// Size of the expression tree, counting shared sub-expressions each time they occur.
    fn weight(&self) -> u32 {
        self.terms.iter().fold(0u32, |acc, t| {
            t.mono.iter().fold(acc.saturating_add(1), |acc, (atom, _)| {
                acc.saturating_add(atom.weight())
            })
        })
    }

    /// Does every symbol of `self` (those [`Dim::symbols`] lists) satisfy `holds`? Asks
    /// without collecting them.
    fn every_symbol(&self, holds: &dyn Fn(&str) -> bool) -> bool {
        self.terms
            .iter()
            .flat_map(|t| t.mono.iter())
            .all(|(atom, _)| match atom {
                Atom::Symbol(name) => holds(name),
                Atom::Opaque(opaque) => match &**opaque {
                    Opaque::Named(_) => true,
                    Opaque::Op { lhs, rhs, .. } => {
                        lhs.0.every_symbol(holds) && rhs.0.every_symbol(holds)
                    }
                    Opaque::Digest { symbols, .. } => symbols.iter().all(|name| holds(name)),
                },
            })
    }

    fn collect_symbols(&self, out: &mut BTreeSet<String>) {
        for (atom, _) in self.terms.iter().flat_map(|t| t.mono.iter()) {
            match atom {
                // (Most symbols are in `out` already: look before allocating.)
                Atom::Symbol(name) if !out.contains(&**name) => {
                    out.insert(String::from(&**name));
                }
                Atom::Symbol(_) => {}
                Atom::Opaque(opaque) => match &**opaque {
                    Opaque::Named(_) => {}
                    Opaque::Op { lhs, rhs, .. } => {
                        lhs.0.collect_symbols(out);
                        rhs.0.collect_symbols(out);
                    }
                    Opaque::Digest { symbols, .. } => out.extend(symbols.iter().cloned()),
                },
            }
        }
    }

    fn eval_exact(&self, env: &dyn Fn(&str) -> Option<i64>) -> Option<i128> {
        let mut total = Coeff::ZERO;
        for term in self.terms.iter() {
            let mut value = term.coeff;
            for (atom, exponent) in &term.mono {
                let power = Coeff::int(atom.eval(env)?)?.pow(exponent.unsigned_abs())?;
                value = value.mul(if *exponent > 0 { power } else { power.recip()? })?;
            }
            total = total.add(value)?;
        }
        total.is_integer().then_some(total.num)
    }

    /// A lower bound on the value for every admissible assignment (symbols `>= symbol_floor`),
    /// when one can be proved.
    fn lower_bound(&self, symbol_floor: i128) -> Option<i128> {
        let expansion = ShiftedExpansion::of(self, symbol_floor)?;
        if !expansion.rest_nonnegative {
            return None;
        }
        if expansion.cleared_denominators {
            // Only the sign survives clearing denominators; an integer > 0 is >= 1.
            return match expansion.constant.cmp(&0) {
                Ordering::Greater => Some(1),
                Ordering::Equal => Some(0),
                Ordering::Less => None,
            };
        }
        // self >= constant / scale, and self is an integer.
        let floor = expansion.constant.div_euclid(expansion.scale);
        Some(if expansion.constant.rem_euclid(expansion.scale) != 0 {
            floor + 1
        } else {
            floor
        })
    }
}

impl Atom {
    fn weight(&self) -> u32 {
        match self {
            Atom::Opaque(opaque) => match &**opaque {
                Opaque::Op { weight, .. } => *weight,
                _ => 1,
            },
            Atom::Symbol(_) => 1,
        }
    }

    fn eval(&self, env: &dyn Fn(&str) -> Option<i64>) -> Option<i128> {
        match self {
            Atom::Symbol(name) => env(name).map(i128::from),
            Atom::Opaque(opaque) => match &**opaque {
                Opaque::Named(text) => env(text).map(i128::from),
                Opaque::Op { op, lhs, rhs, .. } => {
                    op.apply(lhs.0.eval_exact(env)?, rhs.0.eval_exact(env)?)
                }
                Opaque::Digest { .. } => None,
            },
        }
    }

    /// A lower bound on the atom's value. `in_denominator`: the atom divides something, so
    /// it is nonzero, and being a size, at least 1.
    fn lower_bound(&self, symbol_floor: i128, in_denominator: bool) -> Option<i128> {
        let divisor_floor = i128::from(in_denominator);
        match self {
            Atom::Symbol(_) => Some(symbol_floor.max(divisor_floor)),
            Atom::Opaque(opaque) => match &**opaque {
                Opaque::Named(_) => Some(divisor_floor),
                Opaque::Op { op, lhs, rhs, .. } => op.lower_bound(&lhs.0, &rhs.0, symbol_floor),
                Opaque::Digest { .. } => None,
            },
        }
    }
}

impl OpaqueOp {
    fn is_commutative(self) -> bool {
        matches!(
            self,
            OpaqueOp::Max | OpaqueOp::Min | OpaqueOp::Sum | OpaqueOp::Product
        )
    }

    /// The operation on values, with Python semantics; `None` on zero divisor or overflow.
    fn apply(self, a: i128, b: i128) -> Option<i128> {
        match self {
            OpaqueOp::FloorDiv => python_floordiv(a, b),
            OpaqueOp::Mod => python_mod(a, b),
            OpaqueOp::Max => Some(a.max(b)),
            OpaqueOp::Min => Some(a.min(b)),
            OpaqueOp::Sum => a.checked_add(b),
            OpaqueOp::Product => a.checked_mul(b),
        }
    }

    fn lower_bound(self, lhs: &Dim, rhs: &Dim, symbol_floor: i128) -> Option<i128> {
        let bound = |d: &Dim| d.lower_bound(symbol_floor);
        match self {
            OpaqueOp::FloorDiv => match rhs.int_constant() {
                // Monotone in the dividend for a positive divisor.
                Some(k) if k > 0 => python_floordiv(bound(lhs)?, k),
                Some(_) => None,
                None => (bound(lhs)? >= 0 && bound(rhs)? >= 1).then_some(0),
            },
            OpaqueOp::Mod => match rhs.int_constant() {
                Some(k) if k > 0 => Some(0),
                Some(k) if k < 0 => Some(k + 1),
                Some(_) => None,
                None => (bound(rhs)? >= 1).then_some(0),
            },
            OpaqueOp::Max => match (bound(lhs), bound(rhs)) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            },
            OpaqueOp::Min => Some(bound(lhs)?.min(bound(rhs)?)),
            OpaqueOp::Sum => bound(lhs)?.checked_add(bound(rhs)?),
            OpaqueOp::Product => {
                let (a, b) = (bound(lhs)?, bound(rhs)?);
                if a >= 0 && b >= 0 {
                    a.checked_mul(b)
                } else {
                    None
                }
            }
        }
    }
}

/// One opaque atom for `lhs op rhs` (operands of commutative operations in canonical order).
fn opaque_op(op: OpaqueOp, lhs: &Dim, rhs: &Dim) -> Dim {
    let (lhs, rhs) = if op.is_commutative() && Operand(rhs.clone()) < Operand(lhs.clone()) {
        (rhs, lhs)
    } else {
        (lhs, rhs)
    };
    let weight = lhs.weight().saturating_add(rhs.weight()).saturating_add(1);
    let opaque = if weight <= MAX_OPAQUE_WEIGHT {
        Opaque::Op {
            op,
            lhs: Operand(lhs.clone()),
            rhs: Operand(rhs.clone()),
            weight,
        }
    } else {
        let half = |salt: u8| {
            let mut hasher = DefaultHasher::new();
            (salt, op, lhs, rhs).hash(&mut hasher);
            hasher.finish()
        };
        let digest = (u128::from(half(0)) << 64) | u128::from(half(1));
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = write_op(&mut text, op, lhs, rhs);
        let preview = text.chars().take(PREVIEW_CHARS).collect();
        let mut symbols = BTreeSet::new();
        lhs.collect_symbols(&mut symbols);
        rhs.collect_symbols(&mut symbols);
        Opaque::Digest {
            digest,
            preview,
            symbols: symbols.into_iter().collect(),
        }
    };
    Dim::from_atom(Atom::Opaque(Arc::new(opaque)))
}

/// Signs already worked out on this thread, by (difference, floor): the analysis asks the
/// same comparisons again and again (every path, every context), and the expansion is the
/// costly part of a comparison. Cleared when it grows past a bound.
const SIGN_CACHE_LIMIT: usize = 1 << 16;

/// The constants [`Dim::lit`] shares instead of allocating each time.
const SMALL_LITERALS: std::ops::Range<i64> = -2..257;

thread_local! {
    static SMALL_LITERAL_CACHE: Vec<Dim> = SMALL_LITERALS.map(Dim::new_lit).collect();
    static SIGN_CACHE: RefCell<SignCache> = RefCell::new(Default::default());
}

type SignCache = hashbrown::HashMap<(Dim, i128), Option<Ordering>, rustc_hash::FxBuildHasher>;

/// The sign of `d` for every admissible assignment, if the shifted expansion proves one.
fn sign_everywhere(d: &Dim, symbol_floor: i128) -> Option<Ordering> {
    let key = (d.clone(), symbol_floor);
    // Hashed once for the lookup and, on a miss, the insertion.
    let hash = SIGN_CACHE.with(|c| c.borrow().hasher().hash_one(&key));
    let known = SIGN_CACHE.with(|c| {
        let c = c.borrow();
        c.raw_entry()
            .from_key_hashed_nocheck(hash, &key)
            .map(|(_, sign)| *sign)
    });
    if let Some(hit) = known {
        return hit;
    }
    let sign = sign_by_expansion(d, symbol_floor);
    SIGN_CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= SIGN_CACHE_LIMIT {
            c.clear();
        }
        if let RawEntryMut::Vacant(slot) = c.raw_entry_mut().from_key_hashed_nocheck(hash, &key) {
            slot.insert_hashed_nocheck(hash, key, sign);
        }
    });
    sign
}

fn sign_by_expansion(d: &Dim, symbol_floor: i128) -> Option<Ordering> {
    let expansion = ShiftedExpansion::of(d, symbol_floor)?;
    if expansion.constant > 0 && expansion.rest_nonnegative {
        Some(Ordering::Greater)
    } else if expansion.constant < 0 && expansion.rest_nonpositive {
        Some(Ordering::Less)
    } else {
        None
    }
}

/// `d` rewritten for sign reasoning: `d · scale · Π xᵢ^kᵢ = constant + Σ c·yᵐ` where each
/// atom is `xᵢ = boundᵢ + yᵢ` with `yᵢ ≥ 0`, `kᵢ` clears its negative exponents and `scale`
/// the coefficient denominators. The multiplier is positive, so the right side has the sign
/// of `d`, and when all its `c` are `≥ 0` it is at least `constant`.
struct ShiftedExpansion {
    constant: i128,
    rest_nonnegative: bool,
    rest_nonpositive: bool,
    /// Some `kᵢ > 0`: `constant` bounds a multiple of `d` by a non-constant, only its sign
    /// carries over.
    cleared_denominators: bool,
    scale: i128,
}

/// What [`ShiftedExpansion::of`] works from: the atoms of `d` in atom order, and for each
/// its `kᵢ` and `boundᵢ`.
struct Shift<'d> {
    atoms: Vec<&'d Atom>,
    lifts: Vec<u32>,
    bounds: Vec<i128>,
    scale: i128,
}

impl ShiftedExpansion {
    fn of(d: &Dim, symbol_floor: i128) -> Option<ShiftedExpansion> {
        let shift = Shift::of(d, symbol_floor)?;
        // Exponents fit a byte per atom for every size the algebra builds (`MAX_EXPONENT`):
        // then a monomial's key is one integer, not an allocation.
        let small_exponents = d
            .terms
            .iter()
            .flat_map(|t| t.mono.iter())
            .all(|(_, e)| e.unsigned_abs() < 1 << (PACKED_KEY_BITS - 1));
        let (constant, rest_nonnegative, rest_nonpositive) =
            if small_exponents && shift.atoms.len() * PACKED_KEY_BITS <= 128 {
                shift.expand::<u128>(d)?
            } else {
                shift.expand::<Box<[u32]>>(d)?
            };
        Some(ShiftedExpansion {
            constant,
            rest_nonnegative,
            rest_nonpositive,
            cleared_denominators: shift.lifts.iter().any(|k| *k > 0),
            scale: shift.scale,
        })
    }
}

impl<'d> Shift<'d> {
    fn of(d: &'d Dim, symbol_floor: i128) -> Option<Shift<'d>> {
        // Each atom with its lowest exponent (at most 0): sorted by atom, then exponent, the
        // first of each atom's run.
        let mut lowest_exponent: Vec<(&Atom, i32)> = d
            .terms
            .iter()
            .flat_map(|t| t.mono.iter())
            .map(|(atom, exponent)| (atom, (*exponent).min(0)))
            .collect();
        lowest_exponent.sort_unstable();
        lowest_exponent.dedup_by(|later, first| later.0.cmp(first.0) == Ordering::Equal);
        let mut lifts = Vec::with_capacity(lowest_exponent.len());
        let mut bounds = Vec::with_capacity(lowest_exponent.len());
        for &(atom, lowest) in &lowest_exponent {
            let in_denominator = lowest < 0;
            let bound = atom.lower_bound(symbol_floor, in_denominator)?;
            if in_denominator && bound < 1 {
                // Clearing a denominator multiplies by it: it must be positive.
                return None;
            }
            lifts.push(lowest.unsigned_abs());
            bounds.push(bound);
        }
        let scale = d.terms.iter().try_fold(1i128, |acc, t| {
            if t.coeff.den == 1 {
                // (What the general case gives, without its library-call division.)
                return Some(acc);
            }
            acc.checked_mul(t.coeff.den / gcd(acc as u128, t.coeff.den as u128) as i128)
        })?;
        Some(Shift {
            atoms: lowest_exponent.into_iter().map(|(atom, _)| atom).collect(),
            lifts,
            bounds,
            scale,
        })
    }

    /// The expansion's constant, and whether its other coefficients are all `≥ 0`, all
    /// `≤ 0`; `None` on overflow or too many monomials.
    fn expand<K: ExponentKey>(&self, d: &Dim) -> Option<(i128, bool, bool)> {
        // Every term's monomials, in the order the terms expand: like ones are summed below.
        let mut monomials: Vec<(K, i128)> = Vec::new();
        let mut scratch = ExpansionScratch::default();
        let mut powers = self.lifts.clone();
        for term in d.terms.iter() {
            let coefficient = if self.scale == 1 {
                term.coeff.num
            } else {
                term.coeff.num.checked_mul(self.scale / term.coeff.den)?
            };
            powers.copy_from_slice(&self.lifts);
            for (atom, exponent) in &term.mono {
                let i = self.atoms.binary_search(&atom).ok()?;
                powers[i] = powers[i].checked_add_signed(*exponent)?;
            }
            expand_shifted_term(
                coefficient,
                &powers,
                &self.bounds,
                &mut scratch,
                &mut monomials,
            )?;
        }
        // A stable sort keeps each monomial's coefficients in the order they were added, so
        // their running sums (and any overflow) are those of adding them one by one.
        monomials.sort_by(|a, b| a.0.cmp(&b.0));
        let zero = K::zero(self.atoms.len());
        let (mut constant, mut nonnegative, mut nonpositive, mut distinct) = (0, true, true, 0);
        for like in monomials.chunk_by(|a, b| a.0 == b.0) {
            let sum = like
                .iter()
                .try_fold(0i128, |sum, (_, c)| sum.checked_add(*c))?;
            distinct += 1;
            if like[0].0 == zero {
                constant = sum;
            } else {
                nonnegative &= sum >= 0;
                nonpositive &= sum <= 0;
            }
        }
        // The count of distinct monomials only grows term by term: bounding the final one
        // bounds them all.
        (distinct <= MAX_EXPANSION).then_some((constant, nonnegative, nonpositive))
    }
}

/// Bits of one atom's exponent in a `u128` [`ExponentKey`].
const PACKED_KEY_BITS: usize = 8;

/// The exponents of the `yᵢ` in a monomial of a [`ShiftedExpansion`], which key its terms.
trait ExponentKey: Clone + Ord {
    /// All exponents 0, for `width` atoms.
    fn zero(width: usize) -> Self;
    /// `self` with the exponent of atom `i`, 0 in `self`, set to `j`.
    fn with(&self, i: usize, j: u32) -> Self;
}

/// A byte per atom: up to 16 atoms, exponents below 256.
impl ExponentKey for u128 {
    fn zero(_: usize) -> Self {
        0
    }
    fn with(&self, i: usize, j: u32) -> Self {
        self | u128::from(j) << (PACKED_KEY_BITS * i)
    }
}

impl ExponentKey for Box<[u32]> {
    fn zero(width: usize) -> Self {
        vec![0; width].into()
    }
    fn with(&self, i: usize, j: u32) -> Self {
        let mut key = self.clone();
        key[i] = j;
        key
    }
}

/// Buffers [`expand_shifted_term`] reuses from one term to the next.
struct ExpansionScratch<K> {
    partial: Vec<(K, i128)>,
    next: Vec<(K, i128)>,
    factors: Vec<(u32, i128)>,
}

impl<K> Default for ExpansionScratch<K> {
    fn default() -> Self {
        ExpansionScratch {
            partial: Vec::new(),
            next: Vec::new(),
            factors: Vec::new(),
        }
    }
}

/// Append `c · Π (boundᵢ + yᵢ)^powersᵢ`, expanded by the binomial theorem, to `out` as
/// monomials keyed by the exponents of the `yᵢ`. `None` on overflow or too many monomials.
fn expand_shifted_term<K: ExponentKey>(
    c: i128,
    powers: &[u32],
    bounds: &[i128],
    scratch: &mut ExpansionScratch<K>,
    out: &mut Vec<(K, i128)>,
) -> Option<()> {
    let ExpansionScratch {
        partial,
        next,
        factors,
    } = scratch;
    partial.clear();
    partial.push((K::zero(powers.len()), c));
    for (i, &n) in powers.iter().enumerate().filter(|(_, n)| **n > 0) {
        binomial_factors(n, bounds[i], factors)?;
        next.clear();
        for (key, value) in partial.iter() {
            for &(j, factor) in factors.iter() {
                next.push((key.with(i, j), value.checked_mul(factor)?));
            }
        }
        if next.len() > MAX_EXPANSION {
            return None;
        }
        std::mem::swap(partial, next);
    }
    out.append(partial);
    Some(())
}

/// The nonzero terms `(j, C(n, j) · bound^(n - j))` of `(bound + y)^n`, by the power `j`
/// of `y`, into `factors`; `None` on overflow.
fn binomial_factors(n: u32, bound: i128, factors: &mut Vec<(u32, i128)>) -> Option<()> {
    factors.clear();
    if bound == 0 && n <= 64 {
        // Only `y^n` is left, and no `C(n, j)` of `n <= 64` overflows on the way.
        factors.push((n, 1));
        return Some(());
    }
    // C(n, j) from C(n, j - 1) by the multiplicative formula, exact at every step.
    let mut binomial = 1i128;
    for j in 0..=n {
        if j > 0 {
            binomial = binomial.checked_mul(i128::from(n - (j - 1)))?;
            if j > 1 {
                binomial /= i128::from(j);
            }
        }
        let factor = binomial.checked_mul(bound.checked_pow(n - j)?)?;
        if factor != 0 {
            factors.push((j, factor));
        }
    }
    Some(())
}

/// Settings that bound what the decider may assume about named sizes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Assumptions {
    /// A named size is assumed `>= min_symbolic_size` unless it is a literal (default 2,
    /// so that no named dimension silently collapses to size 1 or 0).
    pub min_symbolic_size: i64,
    /// Exact quotients the code computed (`C // n_head`, `H * W // area`): the quotient is
    /// an integer size, so it is assumed `>= min_symbolic_size` too (a head dimension of 1
    /// is not a model anyone writes).
    pub exact_quotients: Vec<ExactQuotient>,
    /// Decide an equality of two sizes that differ as expressions (`T` and `C`) as false,
    /// recording [`Assumption::Distinct`]: a finding then holds "unless T == C".
    pub distinct_sizes: bool,
    /// Loop variables of `range(stop)` / `range(start, stop)` with `start ≥ 0`, as
    /// `(symbol, stop)`: the symbol lies in `[0, stop)`, so indexing a dim of size `stop`
    /// with it is in range.
    pub loop_indices: Vec<(String, Dim)>,
    /// Sizes known to be at most a bound, as `(symbol, bound)`: a call that fails on a
    /// range outside its dim (`narrow(d, 0, r)`, candle's `x.i((.., ..r))`) returned, so
    /// `r ≤ size`. A comparison the other rules leave open is tried again with the symbol
    /// written `bound - slack`, the slack a size `≥ 0`.
    pub upper_bounds: Vec<(String, Dim)>,
}

impl Default for Assumptions {
    fn default() -> Self {
        Assumptions {
            min_symbolic_size: 2,
            exact_quotients: Vec::new(),
            distinct_sizes: false,
            loop_indices: Vec::new(),
            upper_bounds: Vec::new(),
        }
    }
}

impl From<i64> for Dim {
    fn from(v: i64) -> Dim {
        Dim::lit(v)
    }
}

impl std::ops::Add for &Dim {
    type Output = Dim;
    fn add(self, rhs: &Dim) -> Dim {
        Dim::add(self, rhs)
    }
}

impl std::ops::Sub for &Dim {
    type Output = Dim;
    fn sub(self, rhs: &Dim) -> Dim {
        Dim::sub(self, rhs)
    }
}

impl std::ops::Mul for &Dim {
    type Output = Dim;
    fn mul(self, rhs: &Dim) -> Dim {
        Dim::mul(self, rhs)
    }
}

impl std::ops::Neg for &Dim {
    type Output = Dim;
    fn neg(self) -> Dim {
        Dim::neg(self)
    }
}

// ---- Display: `T·C - 1`, `C/n_head`, `C/(2·h)`, `(T + 1) // 2`, `max(a, b)` ----

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_dim(f, self)
    }
}

impl fmt::Debug for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Dim({self})")
    }
}

fn write_dim(w: &mut dyn fmt::Write, d: &Dim) -> fmt::Result {
    match &d.terms[..] {
        [] => return w.write_str("0"),
        // A lone atom needs no parentheses: `T % 2`, not `(T % 2)`.
        [Term {
            coeff: Coeff::ONE,
            mono,
        }] if matches!(&mono[..], [(_, 1)]) => return write_atom(w, &mono[0].0, true),
        _ => {}
    }
    if let Some((factor, rest)) = common_factor(&d.terms) {
        return write_factored(w, &factor, &rest);
    }
    write_sum(w, &d.terms)
}

/// The terms with their signs, in display order: `B·T - B`.
fn write_sum(w: &mut dyn fmt::Write, terms: &[Term]) -> fmt::Result {
    for (i, term) in display_terms(terms).into_iter().enumerate() {
        match (i, term.coeff.num < 0) {
            (0, true) => w.write_str("-")?,
            (0, false) => {}
            (_, true) => w.write_str(" - ")?,
            (_, false) => w.write_str(" + ")?,
        }
        write_term_magnitude(w, term)?;
    }
    Ok(())
}

/// The factor every term of a sum shares, when there is one, and the sum divided by it:
/// `b·c·t - b·c` is `b·c` times `t - 1`, `2·T + 2` is `2` times `T + 1`, `T/h - 1/h` is
/// `1/h` times `T - 1`. The factor is the atoms every term has with exponents of one sign
/// (the smallest power), times the gcd of the numerators over the lcm of the denominators,
/// negated when the first term printed is negative. `None` for a single term, and where
/// nothing but `±1` is common (`C/n_head - 1`, `-T + 1` stay as they are).
fn common_factor(terms: &[Term]) -> Option<(Term, Vec<Term>)> {
    let [first, rest @ ..] = terms else {
        return None;
    };
    if rest.is_empty() {
        return None;
    }
    let exponent_in = |term: &Term, atom: &Atom| {
        term.mono
            .iter()
            .find(|(a, _)| a == atom)
            .map_or(0, |(_, e)| *e)
    };
    let mono: Vec<(Atom, i32)> = first
        .mono
        .iter()
        .filter_map(|(atom, e)| {
            let exponents = terms.iter().map(|t| exponent_in(t, atom));
            let common = if *e > 0 {
                exponents.min().filter(|m| *m > 0)
            } else {
                exponents.max().filter(|m| *m < 0)
            };
            common.map(|c| (atom.clone(), c))
        })
        .collect();
    let (mut num, mut den) = (0u128, 1u128);
    for t in terms {
        num = gcd(num, t.coeff.num.unsigned_abs());
        den = den.checked_mul(t.coeff.den as u128 / gcd(den, t.coeff.den as u128))?;
    }
    let mut coeff = Coeff::new(i128::try_from(num).ok()?, i128::try_from(den).ok()?)?;
    if mono.is_empty() && coeff == Coeff::ONE {
        return None;
    }
    if display_terms(terms)[0].coeff.num < 0 {
        coeff = coeff.neg();
    }
    let inverse = Term {
        coeff: coeff.recip()?,
        mono: mono.iter().map(|(a, e)| (a.clone(), -e)).collect(),
    };
    let quotient = terms
        .iter()
        .map(|t| {
            Some(Term {
                coeff: t.coeff.mul(inverse.coeff)?,
                mono: mono_mul(&t.mono, &inverse.mono)?,
            })
        })
        .collect::<Option<Vec<Term>>>()?;
    Some((Term { coeff, mono }, quotient))
}

/// `factor·(sum)`, the factor's denominator last: `b·c·(t - 1)`, `-2·(T + 1)`,
/// `C·(T - 1)/h`, `(T + 1)/2`.
fn write_factored(w: &mut dyn fmt::Write, factor: &Term, sum: &[Term]) -> fmt::Result {
    if factor.coeff.num < 0 {
        w.write_str("-")?;
    }
    let numerator = Term {
        coeff: Coeff {
            num: factor.coeff.num.abs(),
            den: 1,
        },
        mono: factor
            .mono
            .iter()
            .filter(|(_, e)| *e > 0)
            .cloned()
            .collect(),
    };
    if numerator.coeff != Coeff::ONE || !numerator.mono.is_empty() {
        write_term_magnitude(w, &numerator)?;
        w.write_str("·")?;
    }
    w.write_str("(")?;
    write_sum(w, sum)?;
    w.write_str(")")?;
    let denominator = Term {
        coeff: Coeff {
            num: factor.coeff.den,
            den: 1,
        },
        mono: factor
            .mono
            .iter()
            .filter(|(_, e)| *e < 0)
            .map(|(a, e)| (a.clone(), -e))
            .collect(),
    };
    if denominator.coeff != Coeff::ONE || !denominator.mono.is_empty() {
        let grouped = usize::from(denominator.coeff != Coeff::ONE) + denominator.mono.len() > 1;
        w.write_str(if grouped { "/(" } else { "/" })?;
        write_term_magnitude(w, &denominator)?;
        if grouped {
            w.write_str(")")?;
        }
    }
    Ok(())
}

/// The terms in the order they are printed: higher degree first, constant last, then by
/// their atoms in display order (see [`display_cmp`]).
fn display_terms(terms: &[Term]) -> Vec<&Term> {
    let mut sorted: Vec<&Term> = terms.iter().collect();
    sorted.sort_by(|a, b| {
        a.mono
            .is_empty()
            .cmp(&b.mono.is_empty())
            .then_with(|| degree(&b.mono).cmp(&degree(&a.mono)))
            .then_with(|| {
                let (a, b) = (display_mono(&a.mono), display_mono(&b.mono));
                let pairs = a.iter().zip(&b);
                pairs
                    .map(|((x, e), (y, f))| display_cmp(x, y).then(e.cmp(f)))
                    .find(|o| o.is_ne())
                    .unwrap_or_else(|| a.len().cmp(&b.len()))
            })
    });
    sorted
}

/// A monomial's factors in the order they are printed.
fn display_mono(mono: &[(Atom, i32)]) -> Vec<(&Atom, i32)> {
    let mut factors: Vec<(&Atom, i32)> = mono.iter().map(|(a, e)| (a, *e)).collect();
    factors.sort_by(|(a, _), (b, _)| display_cmp(a, b));
    factors
}

/// The order atoms are printed in: symbols in the order [`with_display_order`] gave them,
/// then the other symbols by name, then opaque atoms.
fn display_cmp(a: &Atom, b: &Atom) -> Ordering {
    if let (Atom::Symbol(x), Atom::Symbol(y)) = (a, b) {
        let ranks = DISPLAY.with(|display| {
            let order = &display.borrow().order;
            (order.get(&**x).copied(), order.get(&**y).copied())
        });
        match ranks {
            (Some(p), Some(q)) => return p.cmp(&q),
            (Some(_), None) => return Ordering::Less,
            (None, Some(_)) => return Ordering::Greater,
            (None, None) => {}
        }
    }
    a.cmp(b)
}

/// How many answers each memo of [`Dim::compare`] keeps on a thread (then it forgets them
/// all): a few megabytes at most.
const MAX_REMEMBERED_COMPARISONS: usize = 8192;

/// What a [`Dim::compare`] answer depends on, owned: the key its memo keeps.
#[derive(PartialEq, Eq, Hash)]
struct OwnedComparisonKey {
    a: Dim,
    b: Dim,
    floor: i64,
    quotients: Vec<ExactQuotient>,
}

/// [`OwnedComparisonKey`] borrowed, to look an answer up without copying the quotients.
/// Its derived `Hash` hashes the same fields in the same order (a slice as a `Vec` does).
#[derive(Hash)]
struct ComparisonKey<'a> {
    a: &'a Dim,
    b: &'a Dim,
    floor: i64,
    quotients: &'a [ExactQuotient],
}

impl ComparisonKey<'_> {
    fn to_owned(&self) -> OwnedComparisonKey {
        OwnedComparisonKey {
            a: self.a.clone(),
            b: self.b.clone(),
            floor: self.floor,
            quotients: self.quotients.to_vec(),
        }
    }
}

impl hashbrown::Equivalent<OwnedComparisonKey> for ComparisonKey<'_> {
    fn equivalent(&self, key: &OwnedComparisonKey) -> bool {
        *self.a == key.a
            && *self.b == key.b
            && self.floor == key.floor
            && self.quotients == key.quotients.as_slice()
    }
}

/// Answers by key; `None`: left open (only [`Dim::compare_free`]'s answers are).
type ComparisonMemo =
    hashbrown::HashMap<OwnedComparisonKey, Option<Rc<Comparison>>, rustc_hash::FxBuildHasher>;

/// The answer `memo` keeps for `key`, worked out by `work` when it keeps none.
fn remembered(
    memo: &'static std::thread::LocalKey<RefCell<ComparisonMemo>>,
    key: &ComparisonKey,
    work: impl FnOnce() -> Option<Comparison>,
) -> Option<Rc<Comparison>> {
    // Hashed once for the lookup and, on a miss, the insertion: hashing walks both sizes.
    let (hash, known) = memo.with(|memo| {
        let memo = memo.borrow();
        let hash = memo.hasher().hash_one(key);
        let known = memo.raw_entry().from_key_hashed_nocheck(hash, key);
        (hash, known.map(|(_, answer)| answer.clone()))
    });
    if let Some(known) = known {
        return known;
    }
    let answer = work().map(Rc::new);
    memo.with(|memo| {
        let mut memo = memo.borrow_mut();
        if memo.len() >= MAX_REMEMBERED_COMPARISONS {
            memo.clear();
        }
        if let RawEntryMut::Vacant(slot) = memo.raw_entry_mut().from_key_hashed_nocheck(hash, key) {
            slot.insert_hashed_nocheck(hash, key.to_owned(), answer.clone());
        }
    });
    answer
}

/// Is no [`with_display_order`] scope running on this thread (symbols print as named)?
fn outside_display_scope() -> bool {
    DISPLAY.with(|d| {
        let d = d.borrow();
        d.order.is_empty() && matches!(d.names, Names::AsNamed)
    })
}

thread_local! {
    /// Answers of [`Dim::compare_free`] by (size, size, floor), no quotients.
    static FREE_COMPARISONS: RefCell<ComparisonMemo> = RefCell::new(Default::default());
    /// Answers of [`Dim::compare`] it left open, by (size, size, floor, exact quotients).
    static COMPARISONS: RefCell<ComparisonMemo> = RefCell::new(Default::default());
    /// How symbols print while a [`with_display_order`] scope runs on this thread: their
    /// rank and their names; empty outside one.
    static DISPLAY: std::cell::RefCell<Display> = std::cell::RefCell::new(Default::default());
}

/// The printing of one finding's symbols (see [`with_display_order`]).
#[derive(Default)]
struct Display {
    order: rustc_hash::FxHashMap<Arc<str>, u32>,
    names: Names,
}

#[derive(Default)]
enum Names {
    /// Outside a scope: symbols print as they are named.
    #[default]
    AsNamed,
    /// A first wording: symbols print as they are named, and which are printed is noted.
    Noting(BTreeSet<String>),
    /// The wording shown: under the names chosen for the symbols noted.
    Chosen(DisplayNames),
}

/// Runs `f`, which words a finding, with symbols printed in the order they first occur in
/// `sizes` (taken in turn, each size's symbols by name): the order in which the code
/// introduced them, when the sizes are the shapes of a finding's chain, oldest first. With
/// `B, nh, T, hs = y.shape` first, `nh * hs` prints `nh·hs` and the strides `nh·T·hs`, not
/// `hs·nh` and `T·hs·nh`. Symbols that `sizes` do not mention print after the others, by
/// name; outside any scope all of them do. Each symbol prints under its code's name,
/// without the primes that keep it apart from another of that name, unless the finding
/// prints both ([`DisplayNames`]): `f` runs first to note the symbols it prints, and again
/// under the names chosen when one of them is primed.
/// Only the printing changes: equality, hashing and the normal form stay canonical. The
/// previous scope is restored when `f` returns (or unwinds), so scopes nest and nothing
/// leaks from one finding into the next on the same thread.
pub fn with_display_order<'d, R>(sizes: impl IntoIterator<Item = &'d Dim>, f: impl Fn() -> R) -> R {
    let mut order: rustc_hash::FxHashMap<Arc<str>, u32> = Default::default();
    for d in sizes {
        for name in d.symbols() {
            let rank = order.len() as u32;
            order.entry(name.into()).or_insert(rank);
        }
    }
    let noting = Names::Noting(BTreeSet::new());
    let (first, noted) = in_display_scope(order.clone(), noting, &f);
    let names = match noted {
        // No primed symbol printed: every symbol keeps its name, so the first wording is
        // the one shown (most findings; wording again would only repeat it).
        Names::Noting(printed) if printed.iter().all(|s| unprimed(s).1 == 0) => return first,
        Names::Noting(printed) => DisplayNames::for_symbols(printed.iter().map(|s| s.as_str())),
        _ => DisplayNames::default(),
    };
    in_display_scope(order, Names::Chosen(names), &f).0
}

/// Runs `f` with `order` and `names` printing symbols; the names as `f` left them.
fn in_display_scope<R>(
    order: rustc_hash::FxHashMap<Arc<str>, u32>,
    names: Names,
    f: impl FnOnce() -> R,
) -> (R, Names) {
    struct Restore(Option<Display>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(previous) = self.0.take() {
                DISPLAY.with(|o| *o.borrow_mut() = previous);
            }
        }
    }
    let scope = Display { order, names };
    let mut restore = Restore(Some(DISPLAY.with(|o| o.replace(scope))));
    let out = f();
    let previous = restore.0.take().unwrap_or_default();
    let ended = DISPLAY.with(|o| o.replace(previous));
    (out, ended.names)
}

/// The name `symbol` prints under in the current [`with_display_order`] scope (itself
/// outside one).
pub fn display_name(symbol: &str) -> String {
    let mut shown = String::with_capacity(symbol.len());
    // Writing to a String cannot fail.
    let _ = write_symbol(&mut shown, symbol);
    shown
}

/// Writes `symbol` under its name in the current scope ([`display_name`]), without
/// allocating where the scope keeps the name (every size printed passes here).
fn write_symbol(w: &mut dyn fmt::Write, symbol: &str) -> fmt::Result {
    DISPLAY.with(|d| match &mut d.borrow_mut().names {
        Names::AsNamed => w.write_str(symbol),
        Names::Noting(printed) => {
            if !printed.contains(symbol) {
                printed.insert(symbol.to_string());
            }
            w.write_str(symbol)
        }
        Names::Chosen(names) => w.write_str(&names.name(symbol)),
    })
}

/// `text`, worded before the current scope chose its names (an assumption, a step of a
/// chain), with the primed symbols under those names ([`DisplayNames::rename_in`]).
pub fn display_text(text: &str) -> String {
    DISPLAY.with(|d| match &mut d.borrow_mut().names {
        Names::AsNamed => text.to_string(),
        Names::Noting(printed) => {
            printed.extend(primed_names_in(text).into_iter().map(str::to_string));
            text.to_string()
        }
        Names::Chosen(names) => names.rename_in(text),
    })
}

/// `d` with each symbol named as the current scope prints it, so that it prints the same
/// outside the scope (a finding's structured fields); the symbols renamed, each with its
/// new name. Symbols inside opaque atoms keep their names.
pub fn with_display_names(d: &Dim) -> (Dim, Vec<(String, String)>) {
    let renamed: Vec<(String, String)> = d
        .symbols()
        .into_iter()
        .map(|s| (display_name(&s), s))
        .filter(|(shown, s)| shown != s)
        .map(|(shown, s)| (s, shown))
        .collect();
    // Through placeholders no name spells: `height` → `height₁` and `height′` → `height`
    // at once.
    let placeholder = |i: usize| format!("\u{0}{i}");
    let mut out = d.clone();
    for (i, (s, _)) in renamed.iter().enumerate() {
        out = out.substitute(s, &Dim::sym(&placeholder(i)));
    }
    for (i, (_, shown)) in renamed.iter().enumerate() {
        out = out.substitute(&placeholder(i), &Dim::sym(shown));
    }
    (out, renamed)
}

/// `|coeff| · monomial` as `num·atoms/(den·atoms)`.
fn write_term_magnitude(w: &mut dyn fmt::Write, term: &Term) -> fmt::Result {
    let (num, den) = (term.coeff.num.unsigned_abs(), term.coeff.den.unsigned_abs());
    let factors = display_mono(&term.mono);
    let numerator: Vec<&(&Atom, i32)> = factors.iter().filter(|(_, e)| *e > 0).collect();
    let denominator: Vec<&(&Atom, i32)> = factors.iter().filter(|(_, e)| *e < 0).collect();
    let mut first = true;
    if num != 1 || numerator.is_empty() {
        write!(w, "{num}")?;
        first = false;
    }
    for (atom, e) in numerator {
        if !first {
            w.write_str("·")?;
        }
        first = false;
        write_factor(w, atom, *e)?;
    }
    let denominator_factors = usize::from(den != 1) + denominator.len();
    if denominator_factors == 0 {
        return Ok(());
    }
    w.write_str(if denominator_factors > 1 { "/(" } else { "/" })?;
    let mut first = true;
    if den != 1 {
        write!(w, "{den}")?;
        first = false;
    }
    for (atom, e) in denominator {
        if !first {
            w.write_str("·")?;
        }
        first = false;
        write_factor(w, atom, -e)?;
    }
    if denominator_factors > 1 {
        w.write_str(")")?;
    }
    Ok(())
}

fn write_factor(w: &mut dyn fmt::Write, atom: &Atom, exponent: i32) -> fmt::Result {
    write_atom(w, atom, false)?;
    if exponent != 1 {
        for c in exponent.to_string().chars() {
            let superscript = match c {
                '0' => '⁰',
                '1' => '¹',
                '2' => '²',
                '3' => '³',
                '4' => '⁴',
                '5' => '⁵',
                '6' => '⁶',
                '7' => '⁷',
                '8' => '⁸',
                '9' => '⁹',
                _ => '⁻',
            };
            w.write_char(superscript)?;
        }
    }
    Ok(())
}

/// `bare`: the atom is the whole expression, so it needs no parentheses.
fn write_atom(w: &mut dyn fmt::Write, atom: &Atom, bare: bool) -> fmt::Result {
    match atom {
        Atom::Symbol(name) => write_symbol(w, name),
        Atom::Opaque(opaque) => {
            let parenthesise = !bare && needs_parentheses(atom);
            if parenthesise {
                w.write_str("(")?;
            }
            match &**opaque {
                Opaque::Named(text) => w.write_str(text)?,
                Opaque::Op { op, lhs, rhs, .. } => write_op(w, *op, &lhs.0, &rhs.0)?,
                Opaque::Digest { preview, .. } => write!(w, "⟨{preview}…⟩")?,
            }
            if parenthesise {
                w.write_str(")")?;
            }
            Ok(())
        }
    }
}

/// Whether the atom must be parenthesised as a factor or operand (`C·(T % 2)`, but
/// `C·max(a, b)` and `C·len(xs)`).
fn needs_parentheses(atom: &Atom) -> bool {
    match atom {
        Atom::Symbol(_) => false,
        Atom::Opaque(opaque) => match &**opaque {
            Opaque::Named(text) => !is_atomic_text(text),
            Opaque::Op { op, .. } => !matches!(op, OpaqueOp::Max | OpaqueOp::Min),
            Opaque::Digest { .. } => false,
        },
    }
}

fn write_op(w: &mut dyn fmt::Write, op: OpaqueOp, lhs: &Dim, rhs: &Dim) -> fmt::Result {
    // Dividend: bare when it is one term without a fraction (`2·T // 3`).
    let simple_dividend = matches!(&lhs.terms[..], [] | [Term { .. }])
        && lhs.terms.iter().all(|t| {
            t.coeff.is_integer()
                && (t.coeff.num > 0 || t.mono.is_empty())
                && t.mono.iter().all(|(_, e)| *e > 0)
        });
    // Divisor: bare when it is a nonnegative integer or one plain symbol.
    let simple_divisor = rhs.int_constant().is_some_and(|k| k >= 0)
        || matches!(&rhs.terms[..], [Term { coeff: Coeff::ONE, mono }] if matches!(&mono[..], [(atom, 1)] if !needs_parentheses(atom)));
    let grouped = |w: &mut dyn fmt::Write, d: &Dim, bare: bool| {
        if bare {
            write_dim(w, d)
        } else {
            w.write_str("(")?;
            write_dim(w, d)?;
            w.write_str(")")
        }
    };
    match op {
        OpaqueOp::FloorDiv | OpaqueOp::Mod => {
            grouped(w, lhs, simple_dividend)?;
            w.write_str(if op == OpaqueOp::FloorDiv {
                " // "
            } else {
                " % "
            })?;
            grouped(w, rhs, simple_divisor)
        }
        OpaqueOp::Max | OpaqueOp::Min => {
            write!(w, "{}(", if op == OpaqueOp::Max { "max" } else { "min" })?;
            write_dim(w, lhs)?;
            w.write_str(", ")?;
            write_dim(w, rhs)?;
            w.write_str(")")
        }
        OpaqueOp::Sum | OpaqueOp::Product => {
            grouped(w, lhs, lhs.terms.len() <= 1)?;
            w.write_str(if op == OpaqueOp::Sum { " + " } else { "·" })?;
            grouped(
                w,
                rhs,
                rhs.terms.len() <= 1 && rhs.terms.iter().all(|t| t.coeff.num > 0),
            )
        }
    }
}

/// Source text that reads as one factor without parentheses: a dotted name, a subscript,
/// or a call such as `len(xs)` whose first parenthesis closes at the end.
fn is_atomic_text(text: &str) -> bool {
    let plain = |c: char| c.is_alphanumeric() || matches!(c, '_' | '.' | '[' | ']');
    if text.chars().all(plain) {
        return !text.is_empty();
    }
    let Some(open) = text.find('(') else {
        return false;
    };
    if open == 0 || !text[..open].chars().all(plain) || !text.ends_with(')') {
        return false;
    }
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return open + i == text.len() - 1;
                }
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::layout::size::Size;
    #[test]
    fn substitute_replaces_symbols_and_keeps_quotients_exact() {
        let c = Dim::sym("C");
        let n = Dim::sym("n_embd");
        let h = Dim::sym("h");
        // B·T·C with C := n_embd
        let e = Dim::sym("B").mul(&Dim::sym("T")).mul(&c);
        assert_eq!(
            e.substitute("C", &n),
            Dim::sym("B").mul(&Dim::sym("T")).mul(&n)
        );
        // C/h with C := 3·n → 3·n/h ; with h := 2·k → C/(2·k)
        let q = c.floordiv(&h);
        assert_eq!(
            q.substitute("C", &Dim::lit(3).mul(&n)),
            Dim::lit(3).mul(&n).floordiv(&h)
        );
        let k = Dim::sym("k");
        let two_k = Dim::lit(2).mul(&k);
        assert_eq!(q.substitute("h", &two_k).mul(&two_k), c);
        // A sum cannot be inverted exactly: the quotient is kept as it was.
        let sum = k.add(&Dim::lit(1));
        assert_eq!(q.substitute("h", &sum), q);
        // Untouched when the symbol does not occur.
        assert_eq!(q.substitute("Z", &k), q);
    }

    use super::*;
    use proptest::prelude::*;

    fn s(name: &str) -> Dim {
        Dim::sym(name)
    }
    fn l(v: i64) -> Dim {
        Dim::lit(v)
    }
    fn with_min(min_symbolic_size: i64) -> Assumptions {
        Assumptions {
            min_symbolic_size,
            ..Default::default()
        }
    }
    fn min_size(name: &str, min: i64) -> Assumption {
        Assumption::MinSize {
            name: name.into(),
            min,
        }
    }

    // ---- normal form and display ----

    #[test]
    fn display_reads_like_model_code() {
        assert_eq!(s("B").to_string(), "B");
        assert_eq!(s("T").mul(&s("H")).mul(&s("D")).to_string(), "D·H·T");
        assert_eq!(s("C").floordiv(&s("n_head")).to_string(), "C/n_head");
        assert_eq!(l(3).mul(&s("T")).to_string(), "3·T");
        assert_eq!(s("T").sub(&l(1)).to_string(), "T - 1");
        assert_eq!(s("H").mul(&s("W")).add(&l(2)).to_string(), "H·W + 2");
        assert_eq!(l(-1).to_string(), "-1");
        assert_eq!(l(0).to_string(), "0");
        assert_eq!(l(1).sub(&s("T")).to_string(), "-T + 1");
        assert_eq!(s("T").mul(&s("T")).to_string(), "T²");
        assert_eq!(s("self.n_head").to_string(), "self.n_head");
        assert_eq!(s("C").floordiv(&l(2).mul(&s("h"))).to_string(), "C/(2·h)");
        assert_eq!(s("T").mul(&s("C")).floordiv(&s("h")).to_string(), "C·T/h");
        assert_eq!(l(1).floordiv(&s("h")).to_string(), "1/h");
    }

    #[test]
    fn display_pulls_out_the_factor_every_term_shares() {
        let (b, c, t, h) = (s("b"), s("c"), s("t"), s("h"));
        // As the code wrote it: `b * c * (t - 1)`, `2 * (t + 1)`.
        assert_eq!(b.mul(&c).mul(&t.sub(&l(1))).to_string(), "b·c·(t - 1)");
        assert_eq!(l(2).mul(&t.add(&l(1))).to_string(), "2·(t + 1)");
        assert_eq!(l(6).mul(&t).sub(&l(4)).to_string(), "2·(3·t - 2)");
        assert_eq!(t.mul(&t).mul(&c).add(&t.mul(&c)).to_string(), "c·t·(t + 1)");
        // A negative first term takes the sign along with the factor.
        assert_eq!(l(-2).mul(&t).sub(&l(2)).to_string(), "-2·(t + 1)");
        assert_eq!(b.mul(&c).mul(&l(1).sub(&t)).to_string(), "-b·c·(t - 1)");
        // A shared denominator goes last, a fraction of integers too.
        let per_head = c.floordiv(&h);
        assert_eq!(per_head.mul(&t.sub(&l(1))).to_string(), "c·(t - 1)/h");
        assert_eq!(t.sub(&l(1)).floordiv(&h).to_string(), "(t - 1)/h");
        assert_eq!(
            t.mul(&c).sub(&c).floordiv(&h.mul(&h)).to_string(),
            "c·(t - 1)/h²"
        );
        let half = Dim {
            terms: vec![
                Term {
                    coeff: Coeff::new(1, 2).unwrap(),
                    mono: vec![(Atom::Symbol("t".into()), 1)],
                },
                Term {
                    coeff: Coeff::new(1, 2).unwrap(),
                    mono: Vec::new(),
                },
            ]
            .into(),
        };
        assert_eq!(half.to_string(), "(t + 1)/2");
        assert_eq!(half.mul(&per_head).to_string(), "c·(t + 1)/(2·h)");
        // Nothing to pull out: untouched.
        assert_eq!(t.to_string(), "t");
        assert_eq!(l(2).mul(&b).mul(&c).to_string(), "2·b·c");
        assert_eq!(b.mul(&c).add(&t).to_string(), "b·c + t");
        assert_eq!(per_head.sub(&l(1)).to_string(), "c/h - 1");
        assert_eq!(l(1).sub(&t).to_string(), "-t + 1");
        assert_eq!(
            t.mul(&c).add(&b.mul(&h)).sub(&l(3)).to_string(),
            "b·h + c·t - 3"
        );
        // Inside an opaque atom the operand is factored too.
        assert_eq!(b.mul(&t).add(&b).max(&c).to_string(), "max(b·(t + 1), c)");
    }

    #[test]
    fn display_order_follows_the_sizes_given_and_is_restored() {
        let (b, nh, t, hs) = (s("B"), s("nh"), s("T"), s("hs"));
        let strides = nh.mul(&t).mul(&hs);
        let numel = b.mul(&strides);
        let merged = nh.mul(&hs).add(&t);
        // Outside any scope: by name.
        assert_eq!(strides.to_string(), "T·hs·nh");
        let shape = [b.clone(), nh.clone(), t.clone(), hs.clone()];
        let inside = with_display_order(&shape, || {
            assert_eq!(strides.to_string(), "nh·T·hs");
            assert_eq!(numel.to_string(), "B·nh·T·hs");
            assert_eq!(merged.to_string(), "nh·hs + T");
            assert_eq!(hs.mul(&t).floordiv(&nh).to_string(), "T·hs/nh");
            // A symbol the sizes do not mention comes after, by name.
            assert_eq!(s("C").mul(&s("A")).mul(&hs).to_string(), "hs·A·C");
            // A nested scope has its own order, and gives the outer one back.
            let swapped = [hs.clone(), t.clone()];
            with_display_order(&swapped, || assert_eq!(strides.to_string(), "hs·T·nh"));
            assert_eq!(strides.to_string(), "nh·T·hs");
            strides.to_string()
        });
        // The first occurrence counts; a size's own symbols come by name.
        let first = [t.clone(), numel.clone()];
        with_display_order(&first, || assert_eq!(numel.to_string(), "T·B·hs·nh"));
        assert_eq!(inside, "nh·T·hs");
        // Left behind: nothing, also after a panic inside a scope.
        assert_eq!(strides.to_string(), "T·hs·nh");
        let unwound = std::panic::catch_unwind(|| {
            with_display_order(&shape, || panic!("a lint bug"));
        });
        assert!(unwound.is_err());
        assert_eq!(strides.to_string(), "T·hs·nh");
        // Only the printing changes: the forms are the same values.
        let reordered = with_display_order(&shape, || t.mul(&hs).mul(&nh));
        assert_eq!(reordered, strides);
    }

    #[test]
    fn opaque_atoms_display_their_expression() {
        let t = s("T");
        assert_eq!(t.add(&l(1)).floordiv(&l(2)).to_string(), "(T + 1) // 2");
        assert_eq!(s("x").floordiv(&t.sub(&l(1))).to_string(), "x // (T - 1)");
        assert_eq!(t.modulo(&l(2)).to_string(), "T % 2");
        assert_eq!(t.modulo(&l(2)).mul(&s("C")).to_string(), "C·(T % 2)");
        assert_eq!(s("a").max(&s("b")).to_string(), "max(a, b)");
        assert_eq!(
            l(1).modulo(&s("a").max(&s("b"))).to_string(),
            "1 % max(a, b)"
        );
        assert_eq!(
            s("x").floordiv(&t.modulo(&l(3)).add(&l(1))).to_string(),
            "x // ((T % 3) + 1)"
        );
        assert_eq!(Dim::opaque("len(xs)").mul(&s("B")).to_string(), "B·len(xs)");
        assert_eq!(
            Dim::opaque("a if c else b").mul(&s("B")).to_string(),
            "B·(a if c else b)"
        );
    }

    #[test]
    fn structural_equality_is_mathematical_equality() {
        let (t, c, h) = (s("T"), s("C"), s("h"));
        assert_eq!(t.mul(&c), c.mul(&t));
        assert_eq!(t.add(&c).mul(&t.sub(&c)), t.mul(&t).sub(&c.mul(&c)));
        assert_eq!(c.floordiv(&h).mul(&h), c);
        assert_eq!(t.sub(&t), l(0));
        assert_eq!(s("a").max(&s("b")), s("b").max(&s("a")));
        assert_eq!(t.add(&l(1)).floordiv(&l(2)), t.add(&l(1)).floordiv(&l(2)));
        assert_ne!(s("n"), Dim::opaque("n"));
    }

    #[test]
    fn literal_arithmetic_is_python_arithmetic() {
        // Python: 7 // -2 == -4, -7 // 2 == -4, -7 // -2 == 3, 7 % -2 == -1, -7 % 2 == 1.
        assert_eq!(l(7).floordiv(&l(-2)), l(-4));
        assert_eq!(l(-7).floordiv(&l(2)), l(-4));
        assert_eq!(l(-7).floordiv(&l(-2)), l(3));
        assert_eq!(l(7).modulo(&l(-2)), l(-1));
        assert_eq!(l(-7).modulo(&l(2)), l(1));
        assert_eq!(l(6).mul(&l(7)).as_lit(), Some(42));
        assert!(l(6).is_lit() && !s("T").is_lit());
    }

    #[test]
    fn division_by_zero_stays_opaque_and_unevaluable() {
        let q = l(3).floordiv(&l(0));
        assert_eq!(q.as_lit(), None);
        assert_eq!(q.eval(&|_| None), None);
        assert_eq!(s("T").modulo(&l(0)).eval(&|_| Some(4)), None);
    }

    // ---- floordiv rules ----

    #[test]
    fn structurally_exact_quotients_need_no_assumption() {
        let (t, c) = (s("T"), s("C"));
        let two_tc = l(2).mul(&t).mul(&c);
        assert_eq!(
            two_tc.floordiv_with_assumption(&l(2).mul(&c)),
            (t.clone(), None)
        );
        assert_eq!(
            l(4).mul(&t).add(&l(6)).floordiv_with_assumption(&l(2)),
            (l(2).mul(&t).add(&l(3)), None)
        );
        assert_eq!(l(2).mul(&t).modulo(&l(2)), l(0));
        assert_eq!(t.mul(&c).modulo(&c), l(0));
    }

    #[test]
    fn division_exact_by_construction_is_told_apart() {
        let hw = s("H").mul(&s("W"));
        let bhwc = s("B").mul(&hw).mul(&s("C"));
        assert!(hw.divides_by_construction(&bhwc));
        assert!(!hw.divides_by_construction(&s("B").mul(&s("H"))));
        assert!(!s("H").divides_by_construction(&s("H").add(&l(1))));
        assert!(l(2).divides_by_construction(&l(4).mul(&s("T"))));
        assert!(!l(2).divides_by_construction(&s("T")));
    }

    #[test]
    fn a_sum_that_divides_by_construction_leaves_its_quotient() {
        let (a, b, n) = (s("qk"), s("v"), s("heads"));
        let dividend = s("B").mul(&s("T")).mul(&n.mul(&a).add(&n.mul(&b)));
        let divisor = s("B").mul(&s("T")).mul(&a.add(&b));
        assert_eq!(
            dividend.floordiv_with_assumption(&divisor),
            (n.clone(), None)
        );
        // (a + b)² // (a + b) = a + b; (a² - b²) // (a - b) = a + b.
        let sum = a.add(&b);
        assert_eq!(sum.mul(&sum).floordiv(&sum), sum);
        let squares = a.mul(&a).sub(&b.mul(&b));
        assert_eq!(squares.floordiv(&a.sub(&b)), sum);
        // Not exact, or exact only with a rational quotient: opaque.
        for (dividend, divisor) in [
            (n.mul(&a).add(&b), a.add(&b)),
            (a.add(&b), l(2).mul(&a).add(&l(2).mul(&b))),
        ] {
            let (q, assumption) = dividend.floordiv_with_assumption(&divisor);
            assert!(assumption.is_none());
            assert_ne!(q.mul(&divisor), dividend, "{q}");
        }
    }

    #[test]
    fn quotient_by_a_named_size_records_divisibility() {
        let (q, assumption) = s("C").floordiv_with_assumption(&s("n_head"));
        assert_eq!(q.mul(&s("n_head")), s("C"));
        assert_eq!(
            assumption,
            Some(Assumption::Divides {
                divisor: "n_head".into(),
                dividend: "C".into()
            })
        );
        let (q, assumption) = s("dim").floordiv_with_assumption(&s("num_heads"));
        assert_eq!(q.to_string(), "dim/num_heads");
        assert!(assumption.is_some());
    }

    #[test]
    fn inexact_quotients_become_opaque_atoms() {
        let t = s("T");
        for (dividend, divisor) in [
            (t.add(&l(1)), l(2)),
            (s("x"), t.sub(&l(1))),
            (t.clone(), l(2).mul(&t)),
        ] {
            let (q, assumption) = dividend.floordiv_with_assumption(&divisor);
            assert_eq!(assumption, None, "{dividend} // {divisor}");
            assert!(
                matches!(&q.terms[..], [Term { mono, .. }] if matches!(&mono[..], [(Atom::Opaque(_), 1)])),
                "{q}"
            );
        }
        // A literal divisor of a quotient form is exact only if the quotient is: assumed.
        let head_dim = s("C").floordiv(&s("h"));
        let (q, assumption) = l(2).mul(&head_dim).floordiv_with_assumption(&l(2));
        assert_eq!(q, head_dim);
        assert!(assumption.is_some());
    }

    #[test]
    fn opaque_atoms_evaluate_with_python_semantics() {
        let t = s("T");
        let env = |name: &str| match name {
            "T" => Some(7),
            "len(xs)" => Some(5),
            _ => None,
        };
        assert_eq!(t.add(&l(1)).floordiv(&l(2)).eval(&env), Some(4));
        assert_eq!(t.modulo(&l(-3)).eval(&env), Some(-2));
        assert_eq!(t.max(&Dim::opaque("len(xs)")).eval(&env), Some(7));
        assert_eq!(
            t.min(&Dim::opaque("len(xs)")).mul(&l(2)).eval(&env),
            Some(10)
        );
        assert_eq!(t.mul(&s("unbound")).eval(&env), None);
    }

    #[test]
    fn eval_rejects_inexact_quotients() {
        let q = s("C").floordiv(&s("h"));
        let env = |c: i64, h: i64| move |name: &str| if name == "C" { Some(c) } else { Some(h) };
        assert_eq!(q.eval(&env(12, 4)), Some(3));
        assert_eq!(q.eval(&env(10, 4)), None);
        assert_eq!(q.eval(&env(10, 0)), None);
    }

    #[test]
    fn symbols_include_those_inside_opaque_atoms() {
        let d = s("B")
            .mul(&s("T").add(&l(1)).floordiv(&l(2)))
            .add(&s("self.n_head").modulo(&s("k")));
        assert_eq!(d.symbols(), ["B", "T", "k", "self.n_head"]);
        assert!(Dim::opaque("len(xs)").symbols().is_empty());
    }

    // ---- bounds: overflow and size ----

    #[test]
    fn coefficient_overflow_becomes_opaque_and_still_evaluates_or_refuses() {
        let big = l(i64::MAX);
        let cube = big.mul(&big).mul(&big);
        assert!(!cube.is_lit());
        assert_eq!(cube.eval(&|_| None), None);
        let symbolic = big.mul(&big).mul(&s("T")).mul(&l(4));
        assert_eq!(symbolic.eval(&|_| Some(0)), Some(0));
    }

    #[test]
    fn products_of_sums_are_bounded_in_size() {
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
        let sum = names.iter().fold(l(0), |acc, n| acc.add(&s(n)));
        let product = sum.mul(&sum).mul(&sum);
        assert!(product.terms.len() <= MAX_TERMS);
        let env = |_: &str| Some(2);
        assert_eq!(product.eval(&env), Some(18 * 18 * 18));
        let exponent_limit = (0..=MAX_EXPONENT).fold(l(1), |acc, _| acc.mul(&s("T")));
        assert_eq!(
            exponent_limit.eval(&|_| Some(2)),
            Some(1 << (MAX_EXPONENT + 1))
        );
    }

    #[test]
    fn deep_sharing_cannot_blow_up() {
        let mut x = s("T");
        for _ in 0..200 {
            x = x.max(&x.add(&s("U"))).modulo(&l(7)).add(&x.modulo(&l(5)));
        }
        assert!(x.weight() <= 2 * MAX_OPAQUE_WEIGHT + 16);
        assert!(x.to_string().len() < 64 * 1024);
        assert_eq!(x.symbols(), ["T", "U"]);
        let y = x.clone();
        assert_eq!(x.sub(&y), l(0));
    }

    // ---- compare ----

    #[test]
    fn compare_examples() {
        let (t, c, h, b) = (s("T"), s("C"), s("h"), s("B"));
        let default = Assumptions::default();

        let greater = t.mul(&c).compare(&t.sub(&l(1)).mul(&c), &default);
        assert_eq!(greater.ordering, Some(Ordering::Greater));
        assert_eq!(greater.used, [min_size("C", 2)]);

        let equal = c.floordiv(&h).mul(&h).compare(&c, &default);
        assert_eq!(equal, Comparison::exact(Ordering::Equal));

        assert_eq!(t.compare(&s("S"), &default).ordering, None);

        let bt = b.mul(&t).compare(&b, &default);
        assert_eq!(bt.ordering, Some(Ordering::Greater));
        assert_eq!(bt.used, [min_size("B", 2), min_size("T", 2)]);
        assert_eq!(
            b.compare(&b.mul(&t), &default).ordering,
            Some(Ordering::Less)
        );
    }

    #[test]
    fn compare_needs_no_assumption_when_sizes_being_nonnegative_suffices() {
        let t = s("T");
        assert_eq!(
            t.add(&l(1)).compare(&t, &Assumptions::default()),
            Comparison::exact(Ordering::Greater)
        );
        assert_eq!(
            t.mul(&t).add(&l(1)).compare(&l(0), &Assumptions::default()),
            Comparison::exact(Ordering::Greater)
        );
        // A divisor is nonzero, so the quotient is positive once the dividend is.
        let q = s("C").floordiv(&s("h"));
        assert_eq!(q.compare(&l(0), &with_min(0)).ordering, None);
        let positive = q.compare(&l(0), &Assumptions::default());
        assert_eq!(positive.ordering, Some(Ordering::Greater));
        assert_eq!(positive.used, [min_size("C", 2), min_size("h", 2)]);
        assert_eq!(
            t.add(&l(1))
                .floordiv(&l(2))
                .add(&l(1))
                .compare(&l(0), &with_min(0))
                .ordering,
            Some(Ordering::Greater)
        );
    }

    #[test]
    fn compare_refuses_what_is_not_certain() {
        let (t, c, h) = (s("T"), s("C"), s("h"));
        let default = Assumptions::default();
        // C/h could be 1 or more.
        assert_eq!(c.floordiv(&h).compare(&l(1), &default).ordering, None);
        // T % 2 may be 0 or 1.
        assert_eq!(t.modulo(&l(2)).compare(&l(1), &default).ordering, None);
        assert_eq!(t.modulo(&l(2)).compare(&l(0), &default).ordering, None);
        // With min size 2, T·C vs T + C is still unknown (equal at T = C = 2).
        assert_eq!(t.mul(&c).compare(&t.add(&c), &default).ordering, None);
        // A divisor that may be negative cannot be cleared: C / min(h - 5, T - 5) is
        // negative at h = T = 2, C = 6.
        let maybe_negative = s("h").sub(&l(5)).min(&t.sub(&l(5)));
        let q = c.floordiv(&maybe_negative);
        assert_eq!(q.eval(&|n| Some(if n == "C" { 6 } else { 2 })), Some(-2));
        assert_eq!(q.compare(&l(0), &default).ordering, None);
        // Negative minimum sizes leave nothing to reason with.
        assert_eq!(
            t.add(&l(1)).compare(&t, &with_min(-1)).ordering,
            Some(Ordering::Greater)
        );
        assert_eq!(t.mul(&c).compare(&c, &with_min(-1)).ordering, None);
        assert_eq!(t.mul(&c).compare(&c, &with_min(1)).ordering, None);
    }

    #[test]
    fn compare_clears_denominators() {
        let (t, c, h) = (s("T"), s("C"), s("h"));
        let per_head = t.mul(&c).floordiv(&h);
        let cmp = per_head.compare(&t.floordiv(&h), &Assumptions::default());
        assert_eq!(cmp.ordering, Some(Ordering::Greater));
        assert_eq!(
            cmp.used,
            [min_size("C", 2), min_size("T", 2), min_size("h", 2)]
        );
    }

    #[test]
    fn opaque_lower_bounds_follow_their_operands() {
        let t = s("T");
        let default = Assumptions::default();
        assert_eq!(
            t.max(&s("U")).compare(&l(1), &default).ordering,
            Some(Ordering::Greater)
        );
        assert_eq!(
            t.add(&l(6))
                .floordiv(&l(4))
                .compare(&l(1), &default)
                .ordering,
            Some(Ordering::Greater)
        );
        assert_eq!(
            t.modulo(&s("k")).compare(&l(-1), &default).ordering,
            Some(Ordering::Greater)
        );
        assert_eq!(
            t.modulo(&l(-3)).compare(&l(-3), &default).ordering,
            Some(Ordering::Greater)
        );
    }

    // ---- property tests against a reference evaluator of Python expressions ----

    const SYMBOLS: [&str; 4] = ["B", "T", "C", "h"];
    const NAMED: &str = "len(xs)";

    #[derive(Clone, Copy, Debug)]
    enum Op {
        Add,
        Sub,
        Mul,
        FloorDiv,
        Mod,
        Max,
        Min,
    }

    #[derive(Clone, Debug)]
    enum Expr {
        Lit(i64),
        Sym(&'static str),
        Named,
        Neg(Box<Expr>),
        Bin(Op, Box<Expr>, Box<Expr>),
    }

    fn op_strategy() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => Just(Op::Add),
            3 => Just(Op::Sub),
            4 => Just(Op::Mul),
            4 => Just(Op::FloorDiv),
            1 => Just(Op::Mod),
            1 => Just(Op::Max),
            1 => Just(Op::Min),
        ]
    }

    fn expr_strategy() -> impl Strategy<Value = Expr> {
        let leaf = prop_oneof![
            2 => (-3i64..=6).prop_map(Expr::Lit),
            5 => prop::sample::select(SYMBOLS.to_vec()).prop_map(Expr::Sym),
            1 => Just(Expr::Named),
        ];
        leaf.prop_recursive(4, 24, 2, |inner| {
            prop_oneof![
                1 => inner.clone().prop_map(|e| Expr::Neg(Box::new(e))),
                6 => (op_strategy(), inner.clone(), inner).prop_map(|(op, a, b)| Expr::Bin(op, Box::new(a), Box::new(b))),
            ]
        })
    }

    type Env = rustc_hash::FxHashMap<&'static str, i64>;

    /// Assignments with every symbol `>= min` (values with many divisors are frequent, so
    /// that exact quotients come up) and the opaque size `>= 0`.
    fn envs(min: i64) -> impl Strategy<Value = Vec<Env>> {
        let value = prop_oneof![min..=min + 4, prop::sample::select(vec![6i64, 8, 12, 24])];
        let env =
            (prop::collection::vec(value, SYMBOLS.len()), 0i64..=5).prop_map(|(values, named)| {
                let mut env: Env = SYMBOLS.iter().copied().zip(values).collect();
                env.insert(NAMED, named);
                env
            });
        prop::collection::vec(env, 16)
    }

    /// Python `a // b` written independently of the implementation: truncate, then step
    /// down when the signs differ and the division is inexact.
    fn reference_floordiv(a: i128, b: i128) -> i128 {
        let q = a / b;
        if a % b != 0 && ((a < 0) != (b < 0)) {
            q - 1
        } else {
            q
        }
    }

    /// The normal form of `e`, and the value Python computes for it under `env` — `None`
    /// when the assignment breaks an assumption the form relies on (an inexact quotient
    /// that the form took as exact), divides by zero, or leaves a modest range.
    fn build(e: &Expr, env: &Env) -> (Dim, Option<i128>) {
        match e {
            Expr::Lit(v) => (l(*v), Some((*v).into())),
            Expr::Sym(name) => (s(name), Some(env[name].into())),
            Expr::Named => (Dim::opaque(NAMED), Some(env[NAMED].into())),
            Expr::Neg(inner) => {
                let (d, v) = build(inner, env);
                (d.neg(), v.map(|v| -v))
            }
            Expr::Bin(op, a, b) => {
                let (da, va) = build(a, env);
                let (db, vb) = build(b, env);
                let (d, needs_exact) = match op {
                    Op::Add => (da.add(&db), false),
                    Op::Sub => (da.sub(&db), false),
                    Op::Mul => (da.mul(&db), false),
                    Op::FloorDiv => {
                        let (q, assumption) = da.floordiv_with_assumption(&db);
                        (q, assumption.is_some())
                    }
                    Op::Mod => (da.modulo(&db), false),
                    Op::Max => (da.max(&db), false),
                    Op::Min => (da.min(&db), false),
                };
                let value = va.zip(vb).and_then(|(x, y)| match op {
                    Op::Add => Some(x + y),
                    Op::Sub => Some(x - y),
                    Op::Mul => Some(x * y),
                    Op::FloorDiv | Op::Mod if y == 0 => None,
                    Op::FloorDiv if needs_exact && x % y != 0 => None,
                    Op::FloorDiv => Some(reference_floordiv(x, y)),
                    Op::Mod => Some(x - y * reference_floordiv(x, y)),
                    Op::Max => Some(x.max(y)),
                    Op::Min => Some(x.min(y)),
                });
                (d, value.filter(|v| v.abs() < 1 << 60))
            }
        }
    }

    /// The normal form alone (the values of this environment are never looked at).
    fn form(e: &Expr) -> Dim {
        let env: Env = SYMBOLS.iter().chain([&NAMED]).map(|n| (*n, 3)).collect();
        build(e, &env).0
    }

    fn lookup(env: &Env) -> impl Fn(&str) -> Option<i64> + '_ {
        move |name| env.get(name).copied()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(384))]

        #[test]
        fn eval_agrees_with_python(e in expr_strategy(), envs in envs(0)) {
            for env in &envs {
                let (d, value) = build(&e, env);
                if let Some(value) = value {
                    prop_assert_eq!(d.eval(&lookup(env)).map(i128::from), Some(value), "{:?} = {}, env {:?}", e, d, env);
                }
            }
        }

        #[test]
        fn compare_holds_for_every_admissible_assignment(
            a in expr_strategy(),
            c in expr_strategy(),
            related in prop::option::of(op_strategy()),
            (min, envs) in (0i64..=2).prop_flat_map(|min| (Just(min), envs(min))),
        ) {
            // Comparing an expression with one built from it exercises the decided cases.
            let b = match related {
                Some(op) => Expr::Bin(op, Box::new(a.clone()), Box::new(c)),
                None => c,
            };
            for env in &envs {
                let (da, va) = build(&a, env);
                let (db, vb) = build(&b, env);
                let verdict = da.compare(&db, &with_min(min));
                if let (Some(ordering), Some(va), Some(vb)) = (verdict.ordering, va, vb) {
                    prop_assert_eq!(va.cmp(&vb), ordering, "{} vs {} under {:?}, env {:?}", da, db, verdict.used, env);
                }
            }
        }

        #[test]
        fn ring_laws_hold_structurally(a in expr_strategy(), b in expr_strategy(), c in expr_strategy()) {
            let (a, b, c) = (form(&a), form(&b), form(&c));
            prop_assert_eq!(a.add(&b), b.add(&a));
            prop_assert_eq!(a.mul(&b), b.mul(&a));
            prop_assert_eq!(a.sub(&a), l(0));
            prop_assert_eq!(a.add(&b).sub(&b), a.clone());
            if a.terms.len() * (b.terms.len() + c.terms.len()) <= MAX_TERMS {
                prop_assert_eq!(a.mul(&b.add(&c)), a.mul(&b).add(&a.mul(&c)));
            }
            if a.terms.len() * b.terms.len() * c.terms.len() <= MAX_TERMS {
                prop_assert_eq!(a.mul(&b).mul(&c), a.mul(&b.mul(&c)));
            }
        }

        #[test]
        fn exact_quotient_times_divisor_is_the_dividend(
            e in expr_strategy(),
            divisor in prop::sample::subsequence(SYMBOLS.to_vec(), 1..=2),
            coefficient in 1i64..=3,
        ) {
            let a = form(&e);
            let h = divisor.iter().fold(l(coefficient), |acc, n| acc.mul(&s(n)));
            // The documented exception: `T // (2·T)` is not the constant 1/2 but opaque.
            let laurent = a.checked_div_term(&h.terms[0]).expect("small forms do not overflow");
            prop_assume!(laurent.constant().is_none_or(|c| c.is_integer()));
            prop_assert_eq!(a.floordiv(&h).mul(&h), a);
        }

        #[test]
        fn literal_division_is_python_division(a in -1000i64..=1000, b in -1000i64..=1000) {
            prop_assume!(b != 0);
            // An independent oracle: floats are exact on this range.
            let floor = (a as f64 / b as f64).floor() as i64;
            prop_assert_eq!(l(a).floordiv(&l(b)).as_lit(), Some(floor));
            prop_assert_eq!(l(a).modulo(&l(b)).as_lit(), Some(a - b * floor));
            prop_assert_eq!(<i64 as Size>::floordiv(&a, &b), floor);
        }
    }
}
