//! The interpreter's own tests: Python source in, op events and layouts out.
//!
//! Each test is `check(source, expected)`: the source is parsed, [`super::analyze_module`]
//! runs on it with the default settings, and its events are rendered as text (see
//! [`render`]), one block per event:
//!
//! ```text
//! x.transpose(1, 2).view(B, -1): view
//!   (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B, -1)
//! ```
//!
//! The first line is the call as written and the op's table name, then what is known of
//! the context: ``[from caller `f(y)`]`` when the call ran inside a helper followed from a
//! caller (the call that led there), `[path …]` for one iteration of a loop run apart,
//! `[unknown input: …]` when some analysis reached it with an input of unknown layout, and
//! `[write]` for a write only its own target could observe. Then one line per input
//! alternative: `[if …]` its path condition when there is one, its layout (shape and
//! strides, as findings print them), and the outcome: the result layout (`ok` when the
//! result is no tensor of known layout), `fails <kind>` or `undecided`, followed by
//! `copies` (or `may copy`) when the op materialises its input.
//!
//! Adding a test: pick the file of the behaviour (views, reshapes, control flow, calls,
//! classes, copies, einops, unknowns, values), write a few lines of model code as it is
//! written in the wild, and an empty expectation `check(src, "")`. Run
//! `cargo test --release --lib analysis::tests::<file>::<name>`: the failure prints the
//! actual rendering. Check it against PyTorch (by hand, or with torch) before pasting it in:
//! the test states what the interpreter *should* do. A case the interpreter gets wrong is
//! written with the correct expectation and `#[ignore = "interpreter bug: …"]`.
//!
//! Updating an expectation after a deliberate change of the interpreter: the failure shows
//! the expected and the actual text line by line (`-` expected, `+` actual); paste the
//! actual one in once it is checked to be right.
//!
//! Sizes: a parameter is assumed contiguous, its sizes named after the code that reads
//! them (`B, T, C = x.shape`); sizes never read leave the layout "contiguous, shape
//! unknown". A named size is assumed to be at least 2 (the default assumptions), which is
//! why `x.transpose(1, 2).view(B, -1)` fails rather than being undecided.

mod calls;
mod classes;
mod control_flow;
mod copies;
mod einops;
mod reshapes;
mod unknowns;
mod values;
mod views;

use std::fmt::Write as _;

use super::event::OpEvent;
use super::value::{format_layout, format_shape, Outcome};
use super::{analyze_module, AnalysisSettings};
use crate::layout::Tri;

// Only the tests parse Python here; the analysis itself never names the frontend.
use crate::frontend::python::parse_python;

/// The events of `src`, rendered as described in the module docs.
pub(crate) fn events(src: &str) -> String {
    let parsed = parse_python(src);
    assert!(
        parsed.errors.is_empty(),
        "the test's source does not parse: {:?}",
        parsed.errors
    );
    let analysis = analyze_module(&parsed.module, src, &AnalysisSettings::default(), None);
    assert!(
        analysis.budget_exhausted.is_none(),
        "the analysis ran out of its budget"
    );
    render(src, &analysis.events)
}

/// One block per event: the call and op, then one line per input alternative.
pub(crate) fn render(src: &str, events: &[OpEvent]) -> String {
    let mut out = String::new();
    for ev in events {
        let _ = write!(out, "{}: {}", text(src, ev.span), ev.op);
        if let Some(c) = &ev.context {
            let _ = write!(out, " [from caller `{}`]", text(src, c.call_span));
        }
        if let Some(p) = &ev.path {
            let _ = write!(out, " [path {p}]");
        }
        if let Some(r) = ev.unknown_input {
            let _ = write!(out, " [unknown input: {}]", r.describe());
        }
        if ev.write.is_some() {
            out.push_str(" [write]");
        }
        out.push('\n');
        for o in &ev.outcomes {
            out.push_str("  ");
            if let Some(c) = &o.input.condition {
                let _ = write!(out, "[if {c}] ");
            }
            let _ = write!(out, "{} -> ", format_layout(&o.input.layout));
            match &o.outcome {
                Outcome::Ok(Some(l)) => out.push_str(&format_layout(&Some(l.clone()))),
                Outcome::Ok(None) => out.push_str("ok"),
                Outcome::Error(e) => {
                    let _ = write!(out, "fails {:?}", e.kind);
                    if let Some(t) = &o.target {
                        let _ = write!(out, ", target {}", format_shape(t));
                    }
                }
                Outcome::Unknown => out.push_str("undecided"),
            }
            match o.copies {
                Tri::Yes => out.push_str(", copies"),
                Tri::Unknown => out.push_str(", may copy"),
                Tri::No => {}
            }
            out.push('\n');
        }
    }
    out
}

/// The source text of a span, on one line.
fn text(src: &str, span: crate::ir::Span) -> String {
    src.get(span.range())
        .unwrap_or("?")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Assert that the events of `src` render as `expected` (both trimmed, and each line's
/// indentation in `expected` beyond that of its first line kept).
#[track_caller]
pub(crate) fn check(src: &str, expected: &str) {
    let actual = events(&dedent(src));
    let expected = dedent(expected);
    let (a, e) = (actual.trim(), expected.trim());
    if a != e {
        // Both end in a newline, so that an equal last line compares equal.
        let (e, a) = (format!("{e}\n"), format!("{a}\n"));
        let diff = similar::TextDiff::from_lines(&e, &a);
        let mut shown = String::new();
        for change in diff.iter_all_changes() {
            let sign = match change.tag() {
                similar::ChangeTag::Delete => '-',
                similar::ChangeTag::Insert => '+',
                similar::ChangeTag::Equal => ' ',
            };
            let _ = write!(shown, "{sign}{change}");
        }
        panic!(
            "the events differ from the expectation (- expected, + actual):\n{shown}\n\
             actual, to paste once checked:\n{a}\n"
        );
    }
}

/// Remove the indentation common to every non-blank line, so that sources and
/// expectations can be indented like the test code around them.
fn dedent(s: &str) -> String {
    let s = s.strip_prefix('\n').unwrap_or(s);
    let indent = s
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    s.lines()
        .map(|l| l.get(indent..).unwrap_or("").trim_end())
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}
