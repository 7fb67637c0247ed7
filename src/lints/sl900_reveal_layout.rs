//! SL900 `reveal-layout`: what the analysis holds for a tensor, on request — like mypy's
//! `reveal_type`. Two ways to ask:
//!
//! - `reveal_layout(x)`: a call of a function named `reveal_layout`, imported from
//!   anywhere or not defined at all, reveals its argument (and returns it unchanged);
//! - a trailing comment `# stridelint: reveal` reveals the result of the outermost op call
//!   on its line: for `y = x.transpose(1, 2).reshape(B, -1)  # stridelint: reveal`, the
//!   layout `y` gets.
//!
//! The answer is an info (it never fails a run): each alternative layout with the path it
//! holds on — shape, strides, storage offset, whether it is contiguous — or `unknown`, with
//! the reason the analysis lost it.
//!
//! The runner finds the requests (the call's events, the comment's line) and asks
//! [`reveal`] for the text; this file formats, it never reads the source.

use crate::analysis::event::{AltOutcome, OpEvent, Outcome, UnknownReason};
use crate::analysis::value::{format_shape, SymLayout};
use crate::layout::{Decider, Tri};

use super::Finding;

pub use crate::analysis::event::REVEAL_OP;

/// Can `text` hold a request at all (a `reveal_layout` call or a reveal comment)? A file
/// without the word is not analysed for SL900 alone.
pub fn may_request(text: &str) -> bool {
    memchr::memmem::find(text.as_bytes(), b"reveal").is_some()
}

/// What is revealed of an event: its input (a `reveal_layout(x)` call), or the result of
/// the op (a reveal comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revealed {
    Input,
    Result,
}

/// The info for `subject` (the expression as written) at the event's call.
pub fn reveal<'e>(ev: &'e OpEvent, subject: &str, what: Revealed) -> Finding<'e> {
    let decider = Decider::new(&ev.assumptions);
    let layouts: Vec<String> = ev
        .outcomes
        .iter()
        .map(|o| describe(o, what, ev.unknown_input, &decider))
        .collect();
    let message = match layouts.as_slice() {
        [one] => format!("layout of `{subject}`: {one}"),
        many => format!("layout of `{subject}`: {} alternatives", many.len()),
    };
    let mut finding = Finding::new(ev.span, message, None);
    if layouts.len() > 1 {
        finding.chain = Vec::new();
        finding.help = Some(
            ev.outcomes
                .iter()
                .zip(&layouts)
                .map(|(o, layout)| match &o.input.condition {
                    Some(path) => format!("where {path}: {layout}"),
                    None => format!("on another path: {layout}"),
                })
                .collect::<Vec<_>>()
                .join("\n"),
        );
    }
    finding
}

/// One alternative's layout as the info states it: shape, strides, offset and contiguity,
/// the op's failure, or `unknown: <why>` (also the editor's hover text).
pub fn describe(
    o: &AltOutcome,
    what: Revealed,
    unknown_input: Option<UnknownReason>,
    decider: &Decider,
) -> String {
    let layout = match what {
        Revealed::Input => o.input.layout.as_ref().ok_or(unknown_input),
        Revealed::Result => match &o.outcome {
            Outcome::Ok(Some(layout)) => Ok(layout),
            Outcome::Error(e) => return format!("none: the op fails ({})", e.message),
            _ => Err(unknown_input.or(Some(UnknownReason::UndecidedOp))),
        },
    };
    match layout {
        Ok(layout) => describe_layout(layout, decider),
        // A tensor whose sizes were never read: contiguous is what the analysis assumes.
        Err(None) if what == Revealed::Input => {
            "contiguous, shape unknown (sizes never read)".into()
        }
        Err(reason) => format!(
            "unknown: {}",
            reason.unwrap_or(UnknownReason::Unmodelled).describe()
        ),
    }
}

fn describe_layout(layout: &SymLayout, decider: &Decider) -> String {
    let contiguous = match layout.is_contiguous(decider) {
        Tri::Yes => "contiguous",
        Tri::No => "not contiguous",
        Tri::Unknown => "contiguity undecided",
    };
    format!(
        "{} strides {} offset {}, {contiguous}",
        format_shape(&layout.shape),
        format_shape(&layout.strides),
        layout.offset
    )
}
