//! SL007 `contiguous-discarded`: `x.contiguous()` as a statement of its own.
//!
//! `contiguous` never works in place: it returns a contiguous tensor (a copy, or `x`
//! itself when `x` already is one) and leaves `x` as it was. A statement that throws the
//! result away therefore does nothing, and the code after it still sees the
//! non-contiguous `x` — typically the `view` the call was meant to make valid. candle's
//! `x.contiguous()?;` and tch-rs's `x.contiguous();` are the same no-op.
//!
//! Certain by construction: only a call whose value its statement discards is reported
//! (the runner tells which, from the IR and the text around the call), never
//! `y = x.contiguous()`, `return x.contiguous()` or an argument. The fix (safe, Python
//! only) assigns the result back, `x = x.contiguous()`, when the receiver is a name or
//! attribute whose rebinding changes no scope; in Rust, shadowing `x` could change its
//! type (`&Tensor` to `Tensor`), so there the help says what to write.

use crate::analysis::event::OpEvent;
use crate::diagnostic::{Applicability, Edit, Fix};
use crate::ir::{Language, Span};

use super::{Finding, LintContext};

pub fn check<'e>(ev: &'e OpEvent, ctx: &LintContext) -> Option<Finding<'e>> {
    if ev.kind != "contiguous" {
        return None;
    }
    let discarded = ctx.source.discarded_call(ev.span)?;
    let receiver = discarded.receiver.as_deref();
    let named = receiver.map_or("the tensor".to_string(), |r| format!("`{r}`"));
    let message = format!(
        "the result of `{}()` is discarded: it returns a contiguous tensor and leaves {named} unchanged, so this statement does nothing",
        ev.op
    );
    let mut finding = Finding::new(ev.span, message, None);
    let assign = match (receiver, ctx.language) {
        (Some(r), Language::Python) => format!("`{r} = {r}.{}()`", ev.op),
        (Some(r), Language::Rust) => format!(
            "`let {r} = {r}.{}()?;` (candle) or `let {r} = {r}.{}();` (tch-rs)",
            ev.op, ev.op
        ),
        (None, _) => "it".to_string(),
    };
    finding.help = Some(format!("assign the result: {assign}"));
    if let (Some(r), Language::Python, true) =
        (receiver, ctx.language, discarded.rebinding_is_local)
    {
        finding.fix = Some(Fix {
            message: format!("Assign the result to `{r}`"),
            applicability: Applicability::Safe,
            edits: vec![Edit {
                span: Span {
                    start: ev.span.start,
                    end: ev.span.start,
                },
                content: format!("{r} = "),
            }],
        });
    }
    Some(finding)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    fn sl007(path: &str, source: &str) -> Vec<(usize, String, bool)> {
        let settings = crate::Settings::default();
        crate::check_source(Path::new(path), source.to_string(), &settings)
            .into_iter()
            .filter(|d| d.code == "SL007")
            .map(|d| {
                let row = d.file.location(d.span.start as usize).row;
                (row, d.message, d.fix.is_some())
            })
            .collect()
    }

    #[test]
    fn only_a_discarded_result_is_reported() {
        let found = sl007(
            "m.py",
            "def f(x):\n    B, T, C = x.shape\n    x = x.transpose(1, 2)\n    x.contiguous()\n    y = x.contiguous()\n    return x.contiguous()\n",
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, 4);
        assert!(
            found[0].1.contains("leaves `x` unchanged"),
            "{}",
            found[0].1
        );
        assert!(found[0].2, "a parameter can be rebound");
    }

    #[test]
    fn a_global_receiver_gets_no_fix() {
        // `x = x.contiguous()` would make `x` local to `f` and the read fail.
        let found = sl007(
            "m.py",
            "import torch\nx = torch.zeros(2, 3)\ndef f():\n    x.contiguous()\n    return x.view(-1)\n",
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(!found[0].2);
    }

    #[test]
    fn candle_and_tch_statements_are_reported() {
        let candle = sl007(
            "m.rs",
            "use candle_core::Tensor;\nfn f(x: &Tensor) -> candle_core::Result<Tensor> {\n    let (b, t, c) = x.dims3()?;\n    let y = x.transpose(1, 2)?;\n    y.contiguous()?;\n    let z = y.contiguous()?;\n    Ok(z)\n}\n",
        );
        assert_eq!(
            candle.iter().map(|f| f.0).collect::<Vec<_>>(),
            [5],
            "{candle:?}"
        );
        let tch = sl007(
            "m.rs",
            "use tch::Tensor;\nfn f(x: &Tensor) -> Tensor {\n    let (b, t, c) = x.size3().unwrap();\n    let y = x.transpose(1, 2);\n    y.contiguous();\n    y.contiguous()\n}\n",
        );
        assert_eq!(tch.iter().map(|f| f.0).collect::<Vec<_>>(), [5], "{tch:?}");
    }
}
