//! Facts about tensors that some rules need beyond their layouts, each made by one pass.
//!
//! The interpreter knows layouts; a rule that needs to know more about a tensor (SL010:
//! whether it is a copy an op made) gets it from a pass of [`PASSES`]. Where an op gives a
//! tensor, the interpreter calls every pass ([`FactPass::after_op`]) with the call, the
//! input alternative, its outcome and the result; a pass may put its fact on the result's
//! alternatives ([`TensorFacts`](super::value::TensorFacts), one fact per type), which the
//! interpreter then carries with them (through bindings, paths and joins) without knowing
//! what it says. The rule reads it from the alternatives of an event's outcomes
//! (`o.input.facts.get::<T>()`).
//!
//! So a rule that needs a new fact about tensors adds a pass here (its file and its line
//! in [`PASSES`]) and reads it: the interpreter, the values and the events stay as they are.

pub mod copies;

use crate::ir::Span;
use crate::layout::Assumptions;
use crate::ops::OpSpec;

use super::event::AltOutcome;
use super::foreign::SourceText;
use super::value::{TensorAlt, Value};

/// The call an op was applied at, as a pass sees it.
#[derive(Clone, Copy)]
pub struct OpSite<'a> {
    /// The file's text, to quote the code (never to decide a fact).
    pub source: SourceText<'a>,
    pub spec: &'static OpSpec,
    /// The whole call expression.
    pub span: Span,
    /// The method name (`reshape` in `x.reshape(-1)`), or the function expression.
    pub name_span: Span,
    /// The assumptions the op was decided under.
    pub assumptions: &'a Assumptions,
}

/// One pass: what it learns about tensors as the interpreter applies ops.
pub trait FactPass: Sync {
    /// The op at `site` applied to the alternative `input` decided `outcome` and gave
    /// `value`: the value, with this pass's fact put on its alternatives where it holds.
    fn after_op(
        &self,
        site: &OpSite,
        input: &TensorAlt,
        outcome: &AltOutcome,
        value: Value,
    ) -> Value;
}

/// Every pass, in the order they run.
pub static PASSES: &[&dyn FactPass] = &[&copies::Copies];

/// `value`, the result of one alternative of an op, with what every pass found.
pub fn after_op(site: &OpSite, input: &TensorAlt, outcome: &AltOutcome, value: Value) -> Value {
    PASSES.iter().fold(value, |value, pass| {
        pass.after_op(site, input, outcome, value)
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::value::{TensorFact, TensorFacts};

    #[derive(Debug)]
    struct Made(u64);
    #[derive(Debug)]
    struct Other(u64);

    impl TensorFact for Made {
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
        fn identity(&self) -> u64 {
            self.0
        }
    }
    impl TensorFact for Other {
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
        fn identity(&self) -> u64 {
            self.0
        }
    }

    fn hash(f: &TensorFacts) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        f.hash(&mut h);
        h.finish()
    }

    #[test]
    fn a_fact_is_read_back_by_its_type_and_replaced_by_one_of_the_same_type() {
        let mut facts = TensorFacts::default();
        assert!(facts.get::<Made>().is_none() && facts.is_empty());
        facts.put(Arc::new(Made(1)));
        facts.put(Arc::new(Other(7)));
        facts.put(Arc::new(Made(2)));
        assert_eq!(facts.get::<Made>().map(|m| m.0), Some(2));
        assert_eq!(facts.get::<Other>().map(|o| o.0), Some(7));
        let shared = facts.shared::<Other>().unwrap().clone();
        let mut elsewhere = TensorFacts::default();
        elsewhere.put(shared);
        assert_eq!(elsewhere.get::<Other>().map(|o| o.0), Some(7));
    }

    #[test]
    fn facts_are_the_same_by_type_and_identity_in_any_order() {
        let mut a = TensorFacts::default();
        a.put(Arc::new(Made(1)));
        a.put(Arc::new(Other(1)));
        let mut b = TensorFacts::default();
        b.put(Arc::new(Other(1)));
        b.put(Arc::new(Made(1)));
        assert_eq!(a, b);
        assert_eq!(hash(&a), hash(&b));
        let mut c = TensorFacts::default();
        c.put(Arc::new(Made(1)));
        c.put(Arc::new(Other(2)));
        assert_ne!(a, c);
        let mut only = TensorFacts::default();
        only.put(Arc::new(Made(1)));
        assert_ne!(a, only);
        assert_ne!(only, TensorFacts::default());
    }
}
