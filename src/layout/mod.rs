//! The stride algebra: PyTorch's (and candle's) shape/stride semantics, exactly, over
//! concrete (`i64`) and symbolic ([`dim::Dim`]) sizes.
//!
//! This module depends on nothing else in the crate. See `ARCHITECTURE.md` and
//! `../shared/spec/stride-semantics.md` for the rules it implements.

pub mod dim;
pub mod size;
pub mod tri;


pub use size::{Assumption, Assumptions, Comparison, Decider, Size};
pub use tri::Tri;
