//! What a lint reports: a [`Diagnostic`] with its primary span, the chain of earlier
//! steps that produced the offending layout (rendered as secondary labels), notes
//! (assumptions), a help line and an optional [`Fix`]. Reporters in `report/` only
//! format these; they compute nothing about tensors.

use std::sync::Arc;

use serde::Serialize;

use crate::ir::Span;
use crate::source::SourceFile;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// What the analysis tells on request (`reveal_layout`): never a failure of the run.
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }

    /// Is a finding of this severity a failure where a report has failures (JUnit's
    /// failing test cases)? Infos are not. The run's exit code is `--fail-on`'s (the CLI
    /// decides it): by default errors only.
    pub fn fails_run(self) -> bool {
        self != Severity::Info
    }
}

/// One step of the layout chain behind a finding: "after `.transpose(1, 2)`: (B, T, H, D) strides (…)".
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// Ruff's notion: a safe fix keeps the program's meaning; an unsafe one may change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Applicability {
    Safe,
    Unsafe,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Edit {
    /// Byte range replaced (empty for an insertion).
    pub span: Span,
    pub content: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fix {
    pub message: String,
    pub applicability: Applicability,
    pub edits: Vec<Edit>,
}

#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// Rule code, e.g. `SL001`.
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub file: Arc<SourceFile>,
    /// The offending call.
    pub span: Span,
    /// Earlier steps that changed the layout, in source order.
    pub chain: Vec<Label>,
    /// Assumptions the finding rests on and other context.
    pub notes: Vec<String>,
    pub help: Option<String>,
    pub fix: Option<Fix>,
    /// An unsafe alternative to `fix`, applied instead of it under `--unsafe-fixes` (SL001:
    /// `view` → `reshape` rather than inserting `.contiguous()`).
    pub unsafe_fix: Option<Fix>,
    /// Filled by `--verify`: measured cost of the copy (at least a `summary` string).
    pub verify: Option<serde_json::Value>,
    /// The size of the copy a hidden-copy finding makes (SL002), or of the score matrix
    /// hand-written attention stores (SL008), when every size it needs is known (literals,
    /// `dims`/`--dim`), stated without `--verify`.
    pub copy: Option<CopySize>,
    /// The layout a view/copy finding is about, symbolically, so `--verify` can bind the
    /// sizes (`--dim B=16`) and replay it.
    pub subject: Option<Subject>,
}

/// What a rule's findings claim about the code, as its entry in the registry
/// (`lints::Rule::claim`) says. `--verify`, the copy sizes, `--add-noqa` and the report
/// formats treat a finding by its claim, never by its code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// The op fails at run time: no strides express the view. `--verify` re-checks it and
    /// measures the `.contiguous()` that would make it work.
    NoView,
    /// The op copies its input without saying so. `--verify` re-checks it and measures the
    /// copy, whose size [`Diagnostic::copy`] states at known sizes; a cost, not a bug.
    HiddenCopy,
    /// The code stores memory a fused kernel never would (hand-written attention's score
    /// matrix), whose size [`Diagnostic::copy`] states: written once, not copied.
    StoredMemory,
    /// A suppression comment that suppresses nothing: a matter of style, and a suppression
    /// would only hide it.
    UnusedSuppression,
    /// The file does not parse: a suppression cannot fix it.
    SyntaxError,
    /// Anything else.
    Other,
}

impl Claim {
    /// Does `--verify` re-check and replay findings of this claim (given their subject)?
    pub fn verifiable(self) -> bool {
        matches!(self, Claim::NoView | Claim::HiddenCopy)
    }

    /// Does [`Diagnostic::copy`] state memory the code stores rather than copies?
    pub fn states_stored_memory(self) -> bool {
        self == Claim::StoredMemory
    }

    /// Can a `noqa` comment sensibly suppress such a finding (`--add-noqa`, the editor's
    /// "suppress" action)?
    pub fn suppressible(self) -> bool {
        !matches!(self, Claim::UnusedSuppression | Claim::SyntaxError)
    }
}

/// The size of a copy at the sizes bound (see [`Diagnostic::copy`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CopySize {
    /// The symbolic sizes it needed, with the values they were bound to (`B = 16`).
    pub at: std::collections::BTreeMap<String, i64>,
    pub elements: u64,
    pub bytes: u64,
    pub dtype: String,
    /// The configured number of layers the copy repeats in (1 when not given).
    pub layers: u64,
    /// `bytes × layers`.
    pub bytes_per_forward_pass: Option<u64>,
}

/// The tensor a finding is about: its layout before the op, and the op's target shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Subject {
    pub op: String,
    pub layout: crate::layout::Layout<crate::layout::Dim>,
    /// The target shape as written (may hold `-1`), when the op has one.
    pub target: Option<Vec<crate::layout::Dim>>,
    /// The library rules the op follows (candle's `reshape` copies on every non-contiguous
    /// input; PyTorch's and tch-rs's only where no view exists).
    pub semantics: crate::ops::Semantics,
    /// Names the analysis unified with a size of the layout (`C`, now `n_embd`): a value
    /// given for one (`--dim C=4096`) sizes the other.
    pub aliases: Vec<(String, crate::layout::Dim)>,
}

impl Diagnostic {
    /// Documentation URL of the rule.
    pub fn url(&self) -> String {
        rule_url(self.code)
    }
}

pub fn rule_url(code: &str) -> String {
    format!("https://github.com/stridelint/stridelint/blob/main/rules/lints/{code}.md")
}
