//! The rules, and their registry.
//!
//! [`RULES`] below is the one place a rule's identity is declared: code, name, severity,
//! summary, documentation (`rules/lints/<code>.md`, embedded at build time), the ops it
//! reports on, whether it has a fix, how torch confirms it, and its check. Everything
//! else is derived from it: `stridelint rules` / `stridelint rule CODE`, the rule codes
//! configuration accepts, SARIF's `rules`, the names `--statistics` prints, what
//! `--verify`, the copy sizes, `--add-noqa` and the formats treat a finding by
//! ([`Rule::claim`]; no code outside this module names a rule by its code, `tests/it/tidy.rs`
//! checks), the frontends' pre-filter ([`prefilter`]) and the rule → fixtures index
//! (`tests/it/rules.rs` compares them), and the torch judges of
//! `scripts/oracle/check_fixtures.py` (which reads the `judge:` lines of this file).
//!
//! A rule's check (one file per rule, `slNNN_name.rs`) turns the interpreter's
//! [`OpEvent`]s into [`Finding`]s: span, message, chain, help, fix. It never looks at
//! syntax or source text; the runner ([`run_lints`]) adds the code, severity and the notes
//! on what the finding rests on, and `crate::runner` makes the diagnostic.
//!
//! Adding a rule: its file here, its doc in `rules/lints/`, a fixture with `# expect:`
//! markers, and one entry in [`RULES`] (with its `pub mod` line). `tests/it/rules.rs` names
//! whatever is missing.
//!
//! Architecture invariant: this module depends on `analysis` (events), `layout`, `ops`,
//! `ir` and `diagnostic`'s value types, never on `settings`, `noqa`, `source` or the crate
//! root.

use crate::analysis::event::{Holds, OpEvent};
use crate::diagnostic::{Claim, Fix, Label, Severity, Subject};
use crate::ir::{Language, Span};
use crate::layout::{Assumption, CandleBackend};
use crate::ops::OpKind;

pub mod coverage;
mod explain;
mod fixes;
pub mod prefilter;
mod run;
pub mod sl001_view_incompatible;
pub mod sl002_hidden_copy;
pub mod sl003_element_count;
pub mod sl004_invalid_dim;
pub mod sl005_candle_matmul_strides;
pub mod sl006_requires_contiguous;
pub mod sl007_contiguous_discarded;
pub mod sl008_unfused_attention;
pub mod sl009_avoidable_contiguous;
pub mod sl010_write_to_copy;
pub mod sl011_view_of_gradient;
pub mod sl900_reveal_layout;

pub use explain::{chain_labels, describe_non_adjacent, in_source_order, notes_for};
pub use run::{run_lints, Reported};

/// A rule: identity, documentation and the check that produces its findings.
pub struct Rule {
    pub code: &'static str,
    /// kebab-case name, as Ruff names rules.
    pub name: &'static str,
    pub severity: Severity,
    /// One line, for `stridelint rules` and SARIF's `shortDescription`.
    pub summary: &'static str,
    /// The full documentation (what / why / example / fix), Markdown, and its path.
    pub doc: RuleDoc,
    /// The ops the rule reports on. The pre-filter parses a file only when it names one of
    /// them, and the runner offers a rule only the events of these ops.
    pub reports_on: &'static [Reports],
    pub fix: FixAvailability,
    /// How a finding is confirmed by running the library for real.
    pub judge: Judge,
    /// What its findings claim: how `--verify`, the copy sizes, `--add-noqa` and the report
    /// formats treat them.
    pub claim: Claim,
    pub check: Check,
}

/// A rule's documentation file.
pub struct RuleDoc {
    /// Relative to the repository root (`rules/lints/SL001.md`); the docs URL points here.
    pub path: &'static str,
    pub text: &'static str,
}

macro_rules! rule_doc {
    ($code:literal) => {
        RuleDoc {
            path: concat!("rules/lints/", $code, ".md"),
            text: include_str!(concat!("../../rules/lints/", $code, ".md")),
        }
    };
}

/// Which ops a rule reports on, by what the op tables (`rules/*.toml`) say of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reports {
    /// Ops of this kind.
    Kind(OpKind),
    /// Ops the tables give this tag (`tags = ["hidden-copy"]`).
    Tag(&'static str),
    /// Ops the tables mark `requires_contiguous = true`.
    RequiresContiguous,
    /// Ops with a dimension argument (a parameter of type `dim` or `dims`).
    DimArgument,
    /// In-place writes (`copy_`, `t[...] = v`, `t += v`): the events that carry a write.
    Write,
    /// Nothing an op does: the rule is about the file (its syntax, its comments).
    File,
}

/// Whether `--fix` can repair a finding (Ruff's fix availability).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixAvailability {
    None,
    /// Every finding has a safe fix.
    Always,
    /// Some findings have a safe fix (when the code has the shape the fix needs).
    Sometimes,
}

impl FixAvailability {
    pub fn as_str(self) -> &'static str {
        match self {
            FixAvailability::None => "none",
            FixAvailability::Always => "always",
            FixAvailability::Sometimes => "sometimes",
        }
    }
}

/// How the claim of a finding is confirmed against the real library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judge {
    /// `scripts/oracle/check_fixtures.py` runs the Python fixtures under torch and judges
    /// each call: `("raises", needle)` — the call raises an error whose message contains
    /// `needle`; `("copies", ops)` — one of these ops (space-separated) returns a tensor that
    /// does not share its input's storage; `("discarded", ops)` — a call of one of these ops
    /// whose result the statement throws away, leaving its receiver as it was;
    /// `("writes", methods)` — an in-place write by one of these methods into a copy that
    /// leaves the copied tensor unchanged, the copy dropped once the writer returns;
    /// `("returns-input", ops)` — a call of one of these ops returns its input itself (one
    /// way: markers are confirmed, unmarked no-ops are not asked for).
    Torch(&'static [(&'static str, &'static str)]),
    /// A Rust test runs candle itself on the finding's layouts (named here).
    Candle(&'static str),
    /// Nothing to run: the finding is about the file, not about a tensor.
    NotApplicable,
}

/// What produces a rule's findings.
#[derive(Clone, Copy)]
pub enum Check {
    /// A lint on the interpreter's op events.
    Events(EventLint),
    /// A lint on the op events of each function analysed on its own (the open context),
    /// for claims about what the function's own code guarantees: what a caller passes
    /// neither adds findings nor contradicts them.
    OwnCodeEvents(EventLint),
    /// Reported by the runner itself, not from op events.
    Runner(RunnerCheck),
}

/// The findings the runner makes itself, each by a function outside this module (which
/// must not import the runner or the crate root).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunnerCheck {
    /// `runner::syntax_error`: the first syntax error of a file.
    SyntaxError,
    /// `runner::reveals`: the layouts `reveal_layout(x)` and `# stridelint: reveal` ask for.
    Reveals,
    /// `unused_suppression::check`: suppression comments that suppress nothing, after the
    /// other rules ran.
    UnusedSuppression,
}

/// A lint's check of one op event.
pub type EventLint = for<'e> fn(&'e OpEvent, &LintContext<'_>) -> Option<Finding<'e>>;

impl Check {
    /// The check of an event lint, and whether it reads only the open context's events.
    pub fn event_lint(&self) -> Option<(EventLint, bool)> {
        match *self {
            Check::Events(check) => Some((check, false)),
            Check::OwnCodeEvents(check) => Some((check, true)),
            Check::Runner(_) => None,
        }
    }
}

/// The code of the rule under which syntax errors are reported.
pub const SYNTAX_ERROR: &str = "SL999";
/// The code of the rule that reports suppression comments suppressing nothing.
pub const UNUSED_SUPPRESSION: &str = "SL100";
/// The code of the rule that shows the layout `reveal_layout(x)` asks for.
pub const REVEAL_LAYOUT: &str = "SL900";

/// The registry. One entry per rule, in code order.
pub static RULES: &[Rule] = &[
    Rule {
        code: "SL001",
        name: "view-incompatible",
        severity: Severity::Error,
        summary: "`view` on a layout where no view exists: fails at run time",
        doc: rule_doc!("SL001"),
        reports_on: &[Reports::Kind(OpKind::View)],
        fix: FixAvailability::Sometimes,
        judge: Judge::Torch(&[("raises", "view size is not compatible")]),
        claim: Claim::NoView,
        check: Check::Events(sl001_view_incompatible::check),
    },
    Rule {
        code: "SL002",
        name: "hidden-copy",
        severity: Severity::Warning,
        summary: "`reshape`/`flatten`/`ravel`/`rearrange` silently copies a non-contiguous tensor",
        doc: rule_doc!("SL002"),
        reports_on: &[Reports::Tag(sl002_hidden_copy::HIDDEN_COPY_TAG)],
        fix: FixAvailability::None,
        judge: Judge::Torch(&[("copies", "reshape reshape_as flatten ravel rearrange")]),
        claim: Claim::HiddenCopy,
        check: Check::Events(sl002_hidden_copy::check),
    },
    Rule {
        code: "SL003",
        name: "element-count-mismatch",
        severity: Severity::Error,
        summary: "`view`/`reshape` target shape cannot hold the tensor's elements",
        doc: rule_doc!("SL003"),
        reports_on: sl003_element_count::REPORTS_ON,
        fix: FixAvailability::None,
        judge: Judge::Torch(&[
            ("raises", "is invalid for input of size"),
            ("raises", "only one dimension can be inferred"),
            ("raises", "invalid shape dimension"),
        ]),
        claim: Claim::Other,
        check: Check::Events(sl003_element_count::check),
    },
    Rule {
        code: "SL004",
        name: "invalid-dim",
        severity: Severity::Error,
        summary: "dimension out of range, or an invalid `permute`",
        doc: rule_doc!("SL004"),
        reports_on: &[
            Reports::DimArgument,
            Reports::Kind(OpKind::Permute),
            Reports::Kind(OpKind::Movedim),
        ],
        fix: FixAvailability::None,
        judge: Judge::Torch(&[
            ("raises", "Dimension out of range"),
            ("raises", "duplicate dims are not allowed"),
            (
                "raises",
                "number of dimensions in the tensor input does not match",
            ),
        ]),
        claim: Claim::Other,
        check: Check::Events(sl004_invalid_dim::check),
    },
    Rule {
        code: "SL005",
        name: "candle-matmul-strides",
        severity: Severity::Error,
        summary: "candle `matmul` operand strides that cuBLAS/MKL (or every backend) reject",
        doc: rule_doc!("SL005"),
        reports_on: &[Reports::Tag(sl005_candle_matmul_strides::CANDLE_MATMUL_TAG)],
        fix: FixAvailability::None,
        judge: Judge::Candle("tests/it/candle_block_fixture.rs"),
        claim: Claim::Other,
        check: Check::Events(sl005_candle_matmul_strides::check),
    },
    Rule {
        code: "SL006",
        name: "requires-contiguous",
        severity: Severity::Error,
        summary:
            "fused kernel (`softmax_last_dim`, `rms_norm`, `rope`, …) on a non-contiguous tensor",
        doc: rule_doc!("SL006"),
        reports_on: &[Reports::RequiresContiguous],
        fix: FixAvailability::None,
        judge: Judge::Candle("tests/it/candle_block_fixture.rs"),
        claim: Claim::Other,
        check: Check::Events(sl006_requires_contiguous::check),
    },
    Rule {
        code: "SL007",
        name: "contiguous-discarded",
        severity: Severity::Warning,
        summary: "`x.contiguous()` as a statement: the result is thrown away and `x` is unchanged",
        doc: rule_doc!("SL007"),
        reports_on: &[Reports::Kind(OpKind::Contiguous)],
        fix: FixAvailability::Sometimes,
        judge: Judge::Torch(&[("discarded", "contiguous")]),
        claim: Claim::Other,
        check: Check::Events(sl007_contiguous_discarded::check),
    },
    Rule {
        code: "SL008",
        name: "unfused-attention",
        severity: Severity::Warning,
        summary: "attention written out as `softmax(q @ kᵀ) @ v`: `F.scaled_dot_product_attention` computes it without the weight matrix",
        doc: rule_doc!("SL008"),
        reports_on: &[Reports::Tag(sl008_unfused_attention::OUTPUT_TAG)],
        fix: FixAvailability::None,
        judge: Judge::Torch(&[("attention", "matmul __matmul__ bmm")]),
        claim: Claim::StoredMemory,
        check: Check::Events(sl008_unfused_attention::check),
    },
    Rule {
        code: "SL009",
        name: "avoidable-contiguous",
        severity: Severity::Warning,
        summary: "`.contiguous()` that does nothing, or copies only for `F.scaled_dot_product_attention`",
        doc: rule_doc!("SL009"),
        reports_on: &[Reports::Kind(OpKind::Contiguous)],
        fix: FixAvailability::Sometimes,
        judge: Judge::Torch(&[
            ("returns-input", "contiguous"),
            ("copy-for-sdpa", "contiguous"),
        ]),
        claim: Claim::Other,
        check: Check::OwnCodeEvents(sl009_avoidable_contiguous::check),
    },
    Rule {
        code: "SL010",
        name: "write-to-copy",
        severity: Severity::Error,
        summary: "in-place write into a hidden copy (`reshape(...).copy_(...)`): the original is unchanged",
        doc: rule_doc!("SL010"),
        reports_on: &[Reports::Write],
        fix: FixAvailability::None,
        judge: Judge::Torch(&[(
            "writes",
            "copy_ add_ sub_ mul_ div_ zero_ fill_ clamp_ masked_fill_ index_put_ scatter_ __setitem__ __iadd__ __isub__ __imul__ __itruediv__",
        )]),
        claim: Claim::Other,
        check: Check::Events(sl010_write_to_copy::check),
    },
    Rule {
        code: "SL011",
        name: "view-of-gradient",
        severity: Severity::Warning,
        summary: "`grad_output.view(...)` in an autograd `Function.backward`: autograd may hand over a non-contiguous gradient",
        doc: rule_doc!("SL011"),
        reports_on: &[Reports::Kind(OpKind::View)],
        fix: FixAvailability::Always,
        judge: Judge::Torch(&[("raises-in-backward", "view size is not compatible")]),
        claim: Claim::Other,
        check: Check::OwnCodeEvents(sl011_view_of_gradient::check),
    },
    Rule {
        code: UNUSED_SUPPRESSION,
        name: "unused-suppression",
        severity: Severity::Warning,
        summary: "`# noqa: SL…` / `# stridelint: ignore[SL…]` that suppresses no finding",
        doc: rule_doc!("SL100"),
        reports_on: &[Reports::File],
        fix: FixAvailability::Always,
        judge: Judge::NotApplicable,
        claim: Claim::UnusedSuppression,
        check: Check::Runner(RunnerCheck::UnusedSuppression),
    },
    Rule {
        code: REVEAL_LAYOUT,
        name: "reveal-layout",
        severity: Severity::Info,
        summary: "`reveal_layout(x)` / `# stridelint: reveal`: the layout the analysis holds there (an info)",
        doc: rule_doc!("SL900"),
        reports_on: &[Reports::File],
        fix: FixAvailability::None,
        judge: Judge::NotApplicable,
        claim: Claim::Other,
        check: Check::Runner(RunnerCheck::Reveals),
    },
    Rule {
        code: SYNTAX_ERROR,
        name: "syntax-error",
        severity: Severity::Error,
        summary: "the file does not parse: part or all of it is not analysed",
        doc: rule_doc!("SL999"),
        reports_on: &[Reports::File],
        fix: FixAvailability::None,
        judge: Judge::NotApplicable,
        claim: Claim::SyntaxError,
        check: Check::Runner(RunnerCheck::SyntaxError),
    },
];

/// The rule with this code (case-insensitive).
pub fn rule(code: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.code.eq_ignore_ascii_case(code))
}

/// The rule with this code, for codes the program itself names (`SL999`, `SL100`).
pub fn registered(code: &str) -> &'static Rule {
    rule(code).unwrap_or_else(|| panic!("rule {code} is not in lints::RULES"))
}

/// What findings with this code claim ([`Claim::Other`] for a code not registered).
pub fn claim(code: &str) -> Claim {
    rule(code).map_or(Claim::Other, |r| r.claim)
}

/// What a lint found at one call: everything but the rule's identity, which the runner adds.
#[derive(Debug, Clone)]
pub struct Finding<'e> {
    /// The offending call.
    pub span: Span,
    /// One line, in the code's words: what happens and, briefly, why.
    pub message: String,
    /// What the first line leaves out (the layout, the arithmetic that decides it), as
    /// notes before the ones on what the finding rests on.
    pub details: Vec<String>,
    /// Earlier steps that changed the layout, in source order.
    pub chain: Vec<Label>,
    /// The alternative the finding describes, for the notes on what it rests on (the
    /// caller it was found through, the path, the assumptions); `None` when it rests on
    /// nothing.
    pub holds: Option<Holds<'e>>,
    /// Assumptions the lint's own decisions used, besides the interpreter's.
    pub extra_assumptions: Vec<Assumption>,
    pub help: Option<String>,
    pub fix: Option<Fix>,
    /// An unsafe alternative to `fix`, preferred under `--unsafe-fixes`.
    pub unsafe_fix: Option<Fix>,
    /// The layout a view/copy finding is about, for `--verify`.
    pub subject: Option<Subject>,
}

impl<'e> Finding<'e> {
    pub fn new(span: Span, message: String, holds: Option<Holds<'e>>) -> Self {
        Finding {
            span,
            message,
            details: Vec::new(),
            chain: match holds {
                Some(h) => chain_labels(h.outcome()),
                None => Vec::new(),
            },
            holds,
            extra_assumptions: Vec::new(),
            help: None,
            fix: None,
            unsafe_fix: None,
            subject: None,
        }
    }
}

/// Everything a lint needs besides the event.
pub struct LintContext<'a> {
    /// Which candle build's matmul stride rule SL005 checks (config `candle-backend`).
    pub candle_backend: CandleBackend,
    pub language: Language,
    /// Facts about the file's text and statements, answered by the runner.
    pub source: &'a dyn SourceFacts,
    /// Every event of the file, for a rule about how calls relate (SL008 stays silent in a
    /// function that also calls the fused kernel).
    pub events: &'a [OpEvent],
}

/// What a lint may ask about the file besides its events. The runner answers from the
/// source text and the IR; lints never read either themselves.
pub trait SourceFacts {
    /// 1-based line of a byte offset.
    fn line(&self, offset: u32) -> usize;
    /// When `name_span` is the name of a method call written `receiver.name(…)`: the byte
    /// offset of the `.` before the name, and the name as written.
    fn method_call(&self, name_span: Span) -> Option<(u32, String)>;
    /// When the call at `span` is a whole expression statement (its value is thrown
    /// away): the receiver of the method call as written, if it is a (dotted) name.
    fn discarded_call(&self, span: Span) -> Option<Discarded>;
    /// The span of the innermost function definition around a byte offset.
    fn function_of(&self, offset: u32) -> Option<Span>;
    /// The code at `span` as written, on one line and shortened, for a message.
    fn written(&self, span: Span) -> Option<String>;
    /// The calls at `calls` (all in one function) form one dataflow chain, each one's value
    /// an input of the next: does each value reach nothing but the next call? Either it is
    /// a temporary inside a later call, or the local name it is bound to is read only
    /// inside later calls of the chain until the name is bound again. False when a value
    /// may be read elsewhere (returned, stored, aliased, passed to another call).
    fn flows_only_along(&self, calls: &[Span]) -> bool;
    /// Inside the `backward` of a `torch.autograd.Function` subclass: the names of its
    /// gradient parameters (those after `ctx`); empty anywhere else.
    fn autograd_gradients(&self, offset: u32) -> Vec<String>;
    /// The `n` tensor operands of the call at `span` as written, on one line: `a` and `b`
    /// of `a @ b`, `torch.matmul(a, b)` or `a.matmul(b)` (keyword arguments left out);
    /// `None` when the text does not show `n`.
    fn operands(&self, span: Span, n: usize) -> Option<Vec<String>>;
}

/// A call whose value its statement throws away (see [`SourceFacts::discarded_call`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discarded {
    /// `x` in `x.contiguous()`, `self.cache` in `self.cache.contiguous()`.
    pub receiver: Option<String>,
    /// Assigning to the receiver (`x = …`) changes no scope: it is an attribute, or a name
    /// the enclosing function binds anyway. (Assigning to a name the function only reads
    /// would make it local, and its earlier reads fail.)
    pub rebinding_is_local: bool,
}

/// No source at all: for unit tests of a lint on hand-made events.
pub struct NoSource;

impl SourceFacts for NoSource {
    fn line(&self, _: u32) -> usize {
        0
    }
    fn method_call(&self, _: Span) -> Option<(u32, String)> {
        None
    }
    fn discarded_call(&self, _: Span) -> Option<Discarded> {
        None
    }
    fn function_of(&self, _: u32) -> Option<Span> {
        None
    }
    fn written(&self, _: Span) -> Option<String> {
        None
    }
    fn flows_only_along(&self, _: &[Span]) -> bool {
        false
    }
    fn autograd_gradients(&self, _: u32) -> Vec<String> {
        Vec::new()
    }
    fn operands(&self, _: Span, _: usize) -> Option<Vec<String>> {
        None
    }
}
