//! einops patterns (spec §8): [`pattern`] parses one side of `"b (h d) n -> b h d n"` as
//! einops does; [`recipe`] turns a pattern into the reshape → permute → reduce/expand →
//! reshape sequence einops runs, for a concrete or symbolic input shape. The transfer
//! functions (`ops::kinds::einops`) replay that sequence on layouts.

pub mod pattern;
pub mod recipe;

pub use pattern::{parse_expression, parse_pattern, Axis, Composition, EinopsError, Expression};
pub use recipe::{prepare, GroupCheck, Operation, Plan, PlanError, Recipe, Reduction};
