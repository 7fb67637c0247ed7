//! What a decision about sizes rested on: the [`Assumption`]s an answer used and the
//! [`Comparison`] it gives. (The [`Assumptions`] a decider is given hold symbolic sizes
//! and live with them, in `dim.rs`.)
//!
//! Architecture invariant: this module depends on nothing; `dim.rs` knows nothing of the
//! [`Size`] trait (`size.rs`), which is implemented for `Dim` there: `size` depends on
//! `dim`, never the other way round.
//!
//! [`Size`]: super::size::Size
//! [`Assumptions`]: super::dim::Assumptions

use std::cmp::Ordering;
use std::fmt;

/// One assumption a decision rested on. Rendered in diagnostics' notes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Assumption {
    /// `name >= min`
    MinSize { name: String, min: i64 },
    /// `divisor` divides `dividend` exactly (from `a // b` on sizes).
    Divides { divisor: String, dividend: String },
    /// Two sizes that differ as expressions are assumed to differ in value
    /// ([`Assumptions::distinct_sizes`](super::dim::Assumptions::distinct_sizes)).
    Distinct { a: String, b: String },
    /// A target size the analysis could not relate to the input is the one value the
    /// element count allows (any other value makes the call fail on the element count).
    SolvedSize { name: String, value: String },
    /// A view/reshape target whose element count the analysis cannot compare with the
    /// input's has the same count (with any other count the call fails on the count).
    ElementCountMatches,
    /// A constructor switch (a parameter defaulting to `None`, `True`/`False` or a string,
    /// read by one of its tests) has its default: a method analysed on its own sees the
    /// object the default arguments build.
    DefaultArgument {
        class: String,
        name: String,
        value: String,
    },
    /// Slice bounds the analysis cannot clamp (`x[i:i + n]`, `i` a loop index) lie within
    /// their dimension, `0 ≤ start ≤ end ≤ size`, and are taken as written (near the end
    /// of the dimension the slice is shorter).
    SliceWithin {
        start: String,
        end: String,
        size: String,
    },
}

impl fmt::Display for Assumption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Assumption::MinSize { name, min } => write!(f, "{name} ≥ {min}"),
            Assumption::Divides { divisor, dividend } => write!(f, "{divisor} divides {dividend}"),
            Assumption::Distinct { a, b } => write!(f, "{a} ≠ {b}"),
            Assumption::SolvedSize { name, value } => write!(f, "{name} = {value}"),
            Assumption::ElementCountMatches => {
                write!(f, "the target has the input's element count")
            }
            Assumption::DefaultArgument { class, name, value } => {
                write!(f, "`{class}` built with its default `{name}={value}`")
            }
            Assumption::SliceWithin { start, end, size } => {
                write!(
                    f,
                    "the slice `{start}:{end}` lies within its dim of size {size}"
                )
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
