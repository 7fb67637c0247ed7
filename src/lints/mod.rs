//! The lints. One file per rule; each turns the interpreter's [`OpEvent`]s into
//! [`Diagnostic`]s and never looks at syntax. The registry below lists every rule with
//! its documentation (`rules/lints/<code>.md`, embedded at build time).

use std::sync::Arc;

use crate::analysis::event::OpEvent;
use crate::diagnostic::{Diagnostic, Severity};
use crate::layout::CandleBackend;
use crate::source::SourceFile;

mod explain;
pub mod sl001_view_incompatible;
pub mod sl002_hidden_copy;
pub mod sl003_element_count;
pub mod sl004_invalid_dim;
pub mod sl005_candle_matmul_strides;
pub mod sl006_requires_contiguous;
pub mod sl100_unused_suppression;

pub use explain::{chain_labels, describe_non_adjacent, notes_for};

/// Everything a lint needs besides the event.
pub struct LintContext {
    pub file: Arc<SourceFile>,
    /// Which candle build's matmul stride rule SL005 checks (config `candle-backend`).
    pub candle_backend: CandleBackend,
}

/// A rule: identity, documentation and the check that produces its diagnostics.
pub struct Rule {
    pub code: &'static str,
    /// kebab-case name, as Ruff names rules.
    pub name: &'static str,
    pub summary: &'static str,
    pub severity: Severity,
    /// The full documentation (what / why / example / fix), Markdown.
    pub doc: &'static str,
    /// `None` for rules checked elsewhere (e.g. the unused-suppression rule).
    pub check: Option<fn(&OpEvent, &LintContext) -> Option<Diagnostic>>,
}

pub static RULES: &[Rule] = &[
    Rule {
        code: "SL001",
        name: "view-incompatible",
        summary: "`view` on a layout where no view exists: fails at run time",
        severity: Severity::Error,
        doc: include_str!("../../rules/lints/SL001.md"),
        check: Some(sl001_view_incompatible::check),
    },
    Rule {
        code: "SL002",
        name: "hidden-copy",
        summary: "`reshape`/`flatten`/`ravel`/`rearrange` silently copies a non-contiguous tensor",
        severity: Severity::Warning,
        doc: include_str!("../../rules/lints/SL002.md"),
        check: Some(sl002_hidden_copy::check),
    },
    Rule {
        code: "SL003",
        name: "element-count-mismatch",
        summary: "`view`/`reshape` target shape cannot hold the tensor's elements",
        severity: Severity::Error,
        doc: include_str!("../../rules/lints/SL003.md"),
        check: Some(sl003_element_count::check),
    },
    Rule {
        code: "SL004",
        name: "invalid-dim",
        summary: "dimension out of range, or an invalid `permute`",
        severity: Severity::Error,
        doc: include_str!("../../rules/lints/SL004.md"),
        check: Some(sl004_invalid_dim::check),
    },
    Rule {
        code: "SL005",
        name: "candle-matmul-strides",
        summary: "candle `matmul` operand strides that cuBLAS/MKL (or every backend) reject",
        severity: Severity::Error,
        doc: include_str!("../../rules/lints/SL005.md"),
        check: Some(sl005_candle_matmul_strides::check),
    },
    Rule {
        code: "SL006",
        name: "requires-contiguous",
        summary:
            "fused kernel (`softmax_last_dim`, `rms_norm`, `rope`, …) on a non-contiguous tensor",
        severity: Severity::Error,
        doc: include_str!("../../rules/lints/SL006.md"),
        check: Some(sl006_requires_contiguous::check),
    },
    Rule {
        code: "SL100",
        name: "unused-suppression",
        summary: "`# noqa: SL…` / `# stridelint: ignore[SL…]` that suppresses no finding",
        severity: Severity::Warning,
        doc: include_str!("../../rules/lints/SL100.md"),
        // Checked after the other rules, on the comments and what they suppressed.
        check: None,
    },
];

pub fn rule(code: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.code.eq_ignore_ascii_case(code))
}

/// Run every rule on every event of a file; one diagnostic per (rule, call site).
pub fn run_lints(events: &[OpEvent], ctx: &LintContext) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    // One finding per (rule, call site): a set, since generated files can hold 100k findings.
    let mut seen = std::collections::HashSet::new();
    for ev in events {
        for r in RULES {
            let Some(check) = r.check else { continue };
            if let Some(d) = check(ev, ctx) {
                if seen.insert((d.code, d.span)) {
                    out.push(d);
                }
            }
        }
    }
    out.sort_by_key(|d| (d.span.start, d.code));
    out
}
