//! Frontends: turn source text into the language-neutral [`crate::ir`].
//!
//! Each frontend is a pure function from text to [`crate::ir::Module`] plus the syntax
//! errors it met. Frontends know nothing about layouts, lints or output formats; they keep
//! what the abstract interpreter needs (bindings, calls, subscripts, integer arithmetic,
//! control flow, spans) and lower everything else to opaque IR nodes.

#[cfg(test)]
mod ir_text;
pub mod python;
pub mod rust;
