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
pub mod sl010_write_to_copy;
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
        code: "SL010",
        name: "write-to-copy",
        summary: "in-place write into a hidden copy (`reshape(...).copy_(...)`): the original is unchanged",
        severity: Severity::Error,
        doc: include_str!("../../rules/lints/SL010.md"),
        check: Some(sl010_write_to_copy::check),
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
///
/// The same call can be reached in several contexts: in the function analysed on its own
/// (the *open* context, its tensor parameters assumed contiguous) and through calls with the
/// callers' values. Each context is a separate fact — a failure certain in one context is a
/// real failure when that context occurs — so a finding of any context is reported, with one
/// exception: a finding of the open context is dropped when some caller reaches the call
/// with a known layout (resting on no assumption) and gets no such finding there. The
/// callers then show what the function really receives (a helper given a transposed tensor,
/// say), and the assumption alone would contradict them — unless the finding is about one
/// named path of the function, which such a caller need not take. A caller's finding that rests
/// on an assumed layout (an argument of unknown shape) counts as an open one. Where both give the
/// finding, the open context's (symbolic, for every caller) is the one reported.
/// Does a caller context's event rest on a layout the analysis assumed rather than
/// received (a tensor of unknown shape that the callee's parameter gave contiguous sizes)?
/// Such a finding knows no more than the open context's, and is contradicted like it.
fn rests_on_assumed_layout(ev: &OpEvent) -> bool {
    ev.outcomes.iter().any(|o| {
        crate::analysis::value::chain_steps(&o.input.chain)
            .any(|s| s.what.contains("assumed contiguous"))
    })
}

pub fn run_lints(events: &[OpEvent], ctx: &LintContext) -> Vec<Diagnostic> {
    use std::collections::{HashMap, HashSet};
    type Site = (&'static str, crate::ir::Span);
    // The open context's finding at a site, and whether a caller can contradict it: a finding
    // on one named path (`channels_first` is true) is not contradicted by a caller that
    // takes another path.
    let mut open: HashMap<Site, (Diagnostic, bool)> = HashMap::new();
    let mut from_callers: HashMap<Site, Diagnostic> = HashMap::new();
    let mut contradicted: HashSet<Site> = HashSet::new();
    for ev in events {
        for r in RULES {
            let Some(check) = r.check else { continue };
            let site = (r.code, ev.span);
            match check(ev, ctx) {
                Some(d) if ev.from_caller && !rests_on_assumed_layout(ev) => {
                    from_callers.entry(site).or_insert(d);
                }
                Some(d) => {
                    let unconditional = ev.outcomes.iter().all(|o| o.input.condition.is_none());
                    open.entry(site).or_insert((d, unconditional));
                }
                None if ev.known_from_caller() => {
                    contradicted.insert(site);
                }
                None => {}
            }
        }
    }
    let mut out: Vec<Diagnostic> = Vec::with_capacity(open.len() + from_callers.len());
    for (site, (d, contradictable)) in open {
        if !(contradictable && contradicted.contains(&site)) {
            from_callers.remove(&site);
            out.push(d);
        }
    }
    out.extend(from_callers.into_values());
    out.sort_by(|a, b| (a.span.start, a.code, &a.message).cmp(&(b.span.start, b.code, &b.message)));
    out
}
