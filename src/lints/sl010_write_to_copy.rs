//! SL010 `write-to-copy`: an in-place write (`copy_`, `add_`, `zero_`, `t[...] = v`,
//! `t += v`, …) into the result of an op that certainly copied its input (`reshape` /
//! `flatten` / `ravel` / `rearrange` where no view exists, `.contiguous()` of a
//! non-contiguous tensor), where nothing can observe the write: the target is a temporary
//! made within the statement, or a local variable nothing reads. The write lands in the
//! copy, the original is unchanged, and the write is lost.
//!
//! The interpreter marks such writes ([`LostWrite`]), and the pass
//! `analysis::facts::copies` the copies ([`CopiedBy`] on the target's alternatives); the finding needs every alternative that
//! reaches the write to be such a copy, made by the expression the write alone can see,
//! and decided without a condition (not "unless `T == C`").

use crate::analysis::event::{Holds, LostWrite, OpEvent};
use crate::analysis::facts::copies::CopiedBy;
use crate::analysis::value::format_shape;
use crate::diagnostic::Label;
use crate::layout::{Assumption, Tri};
use crate::ops::Semantics;

use super::explain::describe_non_contiguous;
use super::{describe_non_adjacent, Finding, LintContext};

/// Is the copy certain: decided outright for a known input (only the standing assumptions:
/// sizes ≥ the minimum, exact quotients), not up to an equality of sizes?
fn certain(c: &CopiedBy) -> bool {
    c.outcome.copies == Tri::Yes
        && c.outcome.input.layout.is_some()
        && !c
            .outcome
            .assumptions
            .iter()
            .any(|a| matches!(a, Assumption::Distinct { .. }))
}

/// The copy every alternative of the write's target is, when the write is lost.
fn lost_copy<'e>(ev: &'e OpEvent, write: &LostWrite) -> Option<&'e CopiedBy> {
    if ev.unknown_input.is_some() || ev.outcomes.is_empty() {
        return None;
    }
    let mut first = None;
    for o in &ev.outcomes {
        let c = o.input.facts.get::<CopiedBy>()?;
        if !write.sole.contains(&c.span) || !certain(c) {
            return None;
        }
        first.get_or_insert(c);
    }
    first
}

pub fn check<'e>(ev: &'e OpEvent, _ctx: &LintContext) -> Option<Finding<'e>> {
    let write = ev.write.as_deref()?;
    let copy = lost_copy(ev, write)?;
    let alt = &copy.outcome;
    let input = alt.input.layout.as_ref()?;
    let why = if copy.op == "contiguous" || copy.semantics == Semantics::Candle {
        describe_non_contiguous(input, &copy.assumptions)
    } else {
        describe_non_adjacent(input, alt.target.as_deref(), &copy.assumptions)
    };
    let original = copy
        .input_text
        .as_ref()
        .map(|t| format!("`{t}`"))
        .unwrap_or_else(|| "its input".to_string());
    let target = alt
        .target
        .as_ref()
        .map(|t| format!(" to {}", format_shape(t)))
        .unwrap_or_default();
    let into = match &write.local {
        Some(name) => format!(
            "`{name}`, a copy `{}` made that nothing reads afterwards",
            copy.op
        ),
        None => format!("a temporary copy `{}` made", copy.op),
    };
    // The first line says that the write is lost; which copy, of what layout and why it
    // copied are notes.
    let message = format!("{} writes into {into}: the write is lost", write.what);
    let mut finding = Finding::new(ev.span, message, Some(Holds::Always(alt)));
    finding.details = std::iter::once(format!(
        "`{}`{target} copied {original}, {} strides {}, so {original} is unchanged",
        copy.op,
        format_shape(&input.shape),
        format_shape(&input.strides),
    ))
    .chain(why)
    .collect();
    finding.chain.push(Label {
        span: copy.span,
        message: format!("`{}` copies here: the write goes into this copy", copy.op),
    });
    finding.help = Some(format!(
        "write into the original instead: `view(...)` in place of `{}` returns a view or raises, so a write through it is never lost; or bring the source to the original's shape and write into the original (`dst.copy_(src.reshape(dst.shape))`)",
        copy.op
    ));
    Some(finding)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::{check_source, Settings};

    fn findings(source: &str) -> Vec<(usize, String)> {
        check_source(Path::new("m.py"), source.to_string(), &Settings::default())
            .into_iter()
            .filter(|d| d.code == "SL010")
            .map(|d| {
                let row = d.file.location(d.span.start as usize).row;
                // The first line and the notes: what the finding says.
                let said = std::iter::once(d.message)
                    .chain(d.notes)
                    .collect::<Vec<_>>();
                (row, said.join("\n"))
            })
            .collect()
    }

    #[test]
    fn a_write_into_a_temporary_copy_is_reported() {
        let found = findings(
            "import torch\n\ndef load(w, src):\n    a, b = w.shape\n    w.t().reshape(-1).copy_(src)\n    return w\n",
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, 5);
        let m = &found[0].1;
        assert!(
            m.starts_with("`copy_` writes into a temporary copy `reshape` made: the write is lost"),
            "{m}"
        );
        assert!(m.contains("`w.t()` is unchanged"), "{m}");
    }

    #[test]
    fn a_view_or_an_observed_copy_is_not() {
        // A contiguous target: `reshape` is a view, the write reaches `w`.
        let view =
            "def load(w, src):\n    a, b = w.shape\n    w.reshape(-1).copy_(src)\n    return w\n";
        assert!(findings(view).is_empty());
        // The copy is kept and returned: the write is seen.
        let kept = "def load(w, src):\n    a, b = w.shape\n    flat = w.t().reshape(-1)\n    flat.copy_(src)\n    return flat\n";
        assert!(findings(kept).is_empty(), "{:?}", findings(kept));
        // The same local, never read: lost.
        let lost = "def load(w, src):\n    a, b = w.shape\n    flat = w.t().reshape(-1)\n    flat.copy_(src)\n    return w\n";
        let found = findings(lost);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0]
                .1
                .contains("`flat`, a copy `reshape` made that nothing reads afterwards"),
            "{}",
            found[0].1
        );
    }

    #[test]
    fn a_copy_on_one_path_only_is_not_reported() {
        // Only where `use_t` is true is `y` transposed (SL002 there); the write reaches `x`
        // on the other path.
        let maybe = "def g(x, src, use_t):\n    a, b = x.shape\n    y = x.t() if use_t else x\n    y.reshape(-1).copy_(src)\n    return x\n";
        assert!(findings(maybe).is_empty(), "{:?}", findings(maybe));
    }

    /// A read the IR does not model (an f-string, a comprehension) or an alias still
    /// observes the copy; a loop that only writes does not.
    #[test]
    fn any_other_mention_of_the_local_observes_the_write() {
        let head = "def k(x, src):\n    a, b = x.shape\n    flat = x.t().reshape(-1)\n";
        for tail in [
            "    flat.copy_(src)\n    print(f\"{flat}\")\n    return x\n",
            "    flat.copy_(src)\n    return [v for v in flat]\n",
            "    alias = flat\n    flat.copy_(src)\n    return alias\n",
        ] {
            let source = format!("{head}{tail}");
            assert!(
                findings(&source).is_empty(),
                "{source}: {:?}",
                findings(&source)
            );
        }
        let looped = format!("{head}    for i in range(3):\n        flat.add_(1)\n    return x\n");
        assert_eq!(findings(&looped).len(), 1, "{looped}");
    }
}
