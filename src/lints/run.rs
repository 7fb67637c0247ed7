//! Running the event rules of the registry over a file's events.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::analysis::event::OpEvent;
use crate::diagnostic::{Fix, Label, Subject};
use crate::ir::Span;
use crate::layout::dim::{display_name, display_text, with_display_names};
use crate::layout::Dim;

use super::explain::place_steps;
use super::prefilter::ReportedOps;
use super::{in_source_order, notes_for, LintContext, Rule, RULES};

/// A finding with the identity of its rule and the notes on what it rests on: all a
/// diagnostic needs but the file.
#[derive(Debug, Clone)]
pub struct Reported {
    pub rule: &'static Rule,
    pub span: Span,
    pub message: String,
    pub chain: Vec<Label>,
    pub notes: Vec<String>,
    pub help: Option<String>,
    pub fix: Option<Fix>,
    pub unsafe_fix: Option<Fix>,
    pub subject: Option<Subject>,
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code)
    }
}

/// Run every event rule on the events of its ops; one finding per (rule, call site).
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
pub fn run_lints(events: &[OpEvent], ctx: &LintContext) -> Vec<Reported> {
    type Site = (&'static str, Span);
    // The open context's finding at a site, and whether a caller can contradict it: a finding
    // on one named path (`channels_first` is true) is not contradicted by a caller that
    // takes another path.
    let mut open: HashMap<Site, (Reported, bool)> = HashMap::default();
    let mut from_callers: HashMap<Site, Reported> = HashMap::default();
    let mut contradicted: HashSet<Site> = HashSet::default();
    let ops = ReportedOps::get(ctx.language);
    for ev in events {
        for r in RULES {
            let Some((check, own_code_only)) = r.check.event_lint() else {
                continue;
            };
            if own_code_only && ev.from_caller {
                continue;
            }
            if !ops.reports(r, ev.op) {
                continue;
            }
            let site = (r.code, ev.span);
            if check(ev, ctx).is_none() {
                if ev.known_from_caller() {
                    contradicted.insert(site);
                }
                continue;
            }
            // The first finding at a site is the one kept: a later one is not worded.
            let of_caller = ev.from_caller && !ev.rests_on_assumed_layout();
            let kept = if of_caller {
                from_callers.contains_key(&site)
            } else {
                open.contains_key(&site)
            };
            if kept {
                continue;
            }
            // A finding is worded again with its sizes in the order the code introduced
            // them (findings are few; most checks return `None` at once).
            let worded = in_source_order(ev, || check(ev, ctx).map(|f| reported(r, ev, f, ctx)));
            let Some(d) = worded else { continue };
            if of_caller {
                from_callers.insert(site, d);
            } else {
                let unconditional = ev.outcomes.iter().all(|o| o.input.condition.is_none());
                open.insert(site, (d, unconditional));
            }
        }
    }
    let mut out: Vec<Reported> = Vec::with_capacity(open.len() + from_callers.len());
    for (site, (d, contradictable)) in open {
        if !(contradictable && contradicted.contains(&site)) {
            from_callers.remove(&site);
            out.push(d);
        }
    }
    out.extend(from_callers.into_values());
    out.sort_by(|a, b| {
        (a.span.start, a.rule.code, &a.message).cmp(&(b.span.start, b.rule.code, &b.message))
    });
    out
}

fn reported(
    rule: &'static Rule,
    ev: &OpEvent,
    finding: super::Finding<'_>,
    ctx: &LintContext,
) -> Reported {
    let mut chain = finding.chain;
    let mut notes = finding.details;
    if let Some(holds) = finding.holds {
        place_steps(&mut chain, ev, holds.outcome(), ctx);
        notes.extend(notes_for(ev, holds, &finding.extra_assumptions, ctx));
    }
    let text = |t: String| display_text(&t);
    Reported {
        rule,
        span: finding.span,
        message: text(finding.message),
        chain: chain
            .into_iter()
            .map(|l| Label {
                message: text(l.message),
                ..l
            })
            .collect(),
        notes: notes.into_iter().map(text).collect(),
        help: finding.help.map(text),
        fix: finding.fix,
        unsafe_fix: finding.unsafe_fix,
        subject: finding.subject.map(|s| displayed_subject(s, &ev.aliases)),
    }
}

/// The subject with its sizes named as the finding prints them (`batch_size`, not the
/// analysis's `batch_size′′`), so that `--dim batch_size=16` binds what the user read; a
/// name kept inside an opaque size is given the value too (an alias).
fn displayed_subject(mut s: Subject, aliases: &[(String, Dim)]) -> Subject {
    let mut renamed = Vec::new();
    let mut shown = |d: &Dim| {
        let (d, r) = with_display_names(d);
        renamed.extend(r);
        d
    };
    let layout = &mut s.layout;
    layout.shape = layout.shape.iter().map(&mut shown).collect();
    layout.strides = layout.strides.iter().map(&mut shown).collect();
    layout.offset = shown(&layout.offset);
    s.target = s.target.map(|t| t.iter().map(&mut shown).collect());
    s.aliases = aliases
        .iter()
        .map(|(name, now)| (display_name(name), shown(now)))
        .collect();
    for (symbol, name) in renamed {
        if !s.aliases.iter().any(|(n, _)| *n == name) {
            s.aliases.push((name, Dim::sym(&symbol)));
        }
    }
    s
}
