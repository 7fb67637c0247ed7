//! Facts the interpreter records for the lints: one [`OpEvent`] per tensor-op call site
//! reached, with the outcome of the op for every alternative layout of its input.

use std::sync::Arc;

use crate::ir::Span;
use crate::layout::{Assumption, Assumptions};
use crate::ops::Semantics;

use super::frame::CallContext;
// Defined beside the layouts they carry (an outcome holds its input alternative), so that
// `value` needs nothing from here.
pub use super::value::{AltOutcome, Outcome, Producer, UnknownReason};

/// The op name of the event a `reveal_layout(x)` call records (lint SL900).
pub const REVEAL_OP: &str = "reveal_layout";

/// The op name of a probe: the layout a tensor name held where it was read (kind
/// [`PROBE_READ`]) or bound (kind [`PROBE_BIND`]), recorded for the editor.
pub const PROBE_OP: &str = "probe";
pub const PROBE_READ: &str = "read";
pub const PROBE_BIND: &str = "bind";

#[derive(Debug, Clone)]
pub struct OpEvent {
    /// The whole call expression.
    pub span: Span,
    /// The method name (`view` in `x.view(...)`), or the function expression; fixes edit here.
    pub name_span: Span,
    /// The op's table name (`view`, `reshape`, `einops.rearrange`, ...).
    pub op: &'static str,
    /// The op's transfer-function kind, as named in the tables.
    pub kind: &'static str,
    /// Lint tags the op table gives this op (e.g. `hidden-copy`).
    pub tags: &'static [String],
    /// One entry per input alternative.
    pub outcomes: Vec<AltOutcome>,
    /// Some analysis reached this call with an input whose layout is unknown, and why: no
    /// certain finding can be made here.
    pub unknown_input: Option<UnknownReason>,
    /// Divisibility assumptions (`h divides C`) made by `//` in the analysed function.
    pub divisibility: Arc<Vec<Assumption>>,
    /// The assumptions the decisions were made under (settings + exact quotients), so a
    /// lint can ask further questions (e.g. to explain a finding) under the same ones.
    pub assumptions: Arc<Assumptions>,
    /// Sizes the path unified, each under the name that went (see `Facts::aliases`).
    pub aliases: Arc<Vec<(String, crate::layout::Dim)>>,
    /// The library rules the op follows (its table's `semantics`): the same name can
    /// behave differently (candle's `reshape` copies every non-contiguous input).
    pub semantics: Semantics,
    /// Recorded inside a call the interpreter followed, with the caller's arguments; false
    /// in the body of the function being analysed on its own (parameters assumed contiguous).
    pub from_caller: bool,
    /// The call that led here, when `from_caller` (findings name the caller).
    pub context: Option<Arc<CallContext>>,
    /// The path the call was made on when the interpreter ran it apart from the others:
    /// one iteration of a loop over known values (`` `k` is 5 ``).
    pub path: Option<Arc<str>>,
    /// Set by the interpreter on a write (an in-place method, `t[...] = v`, `t += v`) whose
    /// effect only the written tensor's own references could observe; see [`LostWrite`].
    pub write: Option<Arc<LostWrite>>,
    /// The producers of the op's arguments besides its input that are not numbers, in the
    /// order passed (`key`, `value` of SDPA; SL009 looks for a `.contiguous()` among them).
    /// The input's is its alternatives' `made_by`.
    pub arguments: Vec<Option<Arc<Producer>>>,
}

/// A write whose target no later code reads except through the spans listed: the write is
/// a whole statement, and its target is a temporary made within it or a local variable
/// that nothing reads (SL010 reads it).
#[derive(Debug, Clone)]
pub struct LostWrite {
    /// How the write is spelled (`copy_`, `[...] =`, `+=`).
    pub what: String,
    /// The expressions whose value reaches the target and nothing else: the links of the
    /// target's chain (`w.t().reshape(-1)` in `w.t().reshape(-1).copy_(src)`), or of the
    /// right-hand sides bound to the local it writes.
    pub sole: Vec<Span>,
    /// The local variable written, when the target is one.
    pub local: Option<String>,
}

impl OpEvent {
    /// True when every alternative satisfies `pred` (and there is at least one).
    pub fn all(&self, pred: impl Fn(&AltOutcome) -> bool) -> bool {
        self.unknown_input.is_none() && !self.outcomes.is_empty() && self.outcomes.iter().all(pred)
    }

    /// Does an alternative's shown history begin at a layout the analysis assumed rather
    /// than received (a tensor parameter, or an argument of unknown shape, taken to be
    /// contiguous)? Only the steps since the chain last restarted count: a caller that makes
    /// a contiguous view of its own parameter and transposes it (Longformer's sequence-first
    /// buffers) shows what the callee gets, and its context may contradict the callee's open
    /// one. What a layout rests on in full is [`super::value::basis_of`].
    pub fn rests_on_assumed_layout(&self) -> bool {
        self.outcomes.iter().any(|o| {
            super::value::chain_steps(&o.input.chain).any(|s| s.what.contains("assumed contiguous"))
        })
    }

    /// Did a caller context reach this call with an input layout that rests on no
    /// assumption it shows (every alternative known, none from a parameter assumed
    /// contiguous, see [`Self::rests_on_assumed_layout`]) and decide what the op does there?
    /// Such a context shows what the function really gets.
    pub fn known_from_caller(&self) -> bool {
        self.from_caller
            && self.unknown_input.is_none()
            && !self.outcomes.is_empty()
            && self.outcomes.iter().all(|o| {
                o.input.layout.is_some()
                    && matches!(o.outcome, Outcome::Ok(Some(_)) | Outcome::Error(_))
                    && o.copies != crate::layout::Tri::Unknown
            })
            && !self.rests_on_assumed_layout()
    }

    /// Where a finding about `pred` holds: on every path that reaches the call, or on one
    /// path whose branch conditions can be named (`channels_first` is true). A failure on
    /// one feasible path is a failure whenever that path runs, whatever the others do.
    pub fn holds(&self, pred: impl Fn(&AltOutcome) -> bool) -> Option<Holds<'_>> {
        if self.all(&pred) {
            return Some(Holds::Always(&self.outcomes[0]));
        }
        self.outcomes
            .iter()
            .find(|o| o.input.condition.is_some() && o.input.layout.is_some() && pred(o))
            .map(Holds::OnPath)
    }
}

/// See [`OpEvent::holds`].
#[derive(Debug, Clone, Copy)]
pub enum Holds<'a> {
    Always(&'a AltOutcome),
    /// On the path of this alternative (its `input.condition`).
    OnPath(&'a AltOutcome),
}

impl<'a> Holds<'a> {
    /// The alternative a finding describes.
    pub fn outcome(self) -> &'a AltOutcome {
        match self {
            Holds::Always(o) | Holds::OnPath(o) => o,
        }
    }
}
