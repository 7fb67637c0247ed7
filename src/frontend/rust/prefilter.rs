//! The pre-filter for Rust files: a text scan that decides whether a file can produce a
//! layout finding at all, so that the (much costlier) syn parse only runs on files that can.
//!
//! Like the Python pre-filter it errs on the side of parsing: tokens match as substrings
//! anywhere (comments and strings included), so `reshape` also covers `reshape_as`,
//! `flatten` covers `flatten_all`/`flatten_from`/`flatten_to`, `squeeze` covers `unsqueeze`,
//! and `rope` covers `rope_i`/`rope_thd`.

use crate::frontend::token_filter::TokenFilter;

/// Tokens whose presence makes a Rust file worth parsing.
///
/// - ops that can fail or copy: `view` and `reshape` (tch-rs), `reshape`/`flatten`
///   (candle), `contiguous`, `matmul` (candle's stride checks), and candle-nn's ops that
///   require a contiguous input (`softmax_last_dim` via `softmax`, `rms_norm`,
///   `layer_norm`, `rope`);
/// - ops that make a tensor non-contiguous, which a later op may then trip on:
///   `transpose`, `permute`, `narrow`, `chunk`, `split`, `squeeze`, `broadcast`, `expand`,
///   `as_strided`, and the short method forms `.t(` (candle), `.tr(` / `.mt(` (tch-rs) and
///   `.i(` (candle's `IndexOp`).
pub const RUST_LAYOUT_OP_TOKENS: &[&str] = &[
    "view",
    "reshape",
    "flatten",
    "contiguous",
    "matmul",
    "softmax",
    "rms_norm",
    "layer_norm",
    "rope",
    "transpose",
    "permute",
    "narrow",
    "chunk",
    "split",
    "squeeze",
    "broadcast",
    "expand",
    "as_strided",
    ".t(",
    ".tr(",
    ".mt(",
    ".i(",
];

/// Cheap pre-filter: does `source` contain any token of [`RUST_LAYOUT_OP_TOKENS`]?
pub fn may_contain_layout_ops_rust(source: &str) -> bool {
    static FILTER: TokenFilter = TokenFilter::new(RUST_LAYOUT_OP_TOKENS);
    FILTER.matches(source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_code_passes() {
        for source in [
            "let x = xs.reshape((b, t, ()))?;",
            "let y = xs.t()?;",
            "let y = xs.tr();",
            "let y = xs.i((.., 0..2))?;",
            "let a = candle_nn::ops::softmax_last_dim(&a)?;",
            "let q = candle_nn::rotary_emb::rope_i(&q, &cos, &sin)?;",
            "let v = xs.view([-1, 4]);",
            "let z = xs.unsqueeze(0)?.broadcast_as((2, 3))?;",
            "let w = xs.flatten_all()?;",
        ] {
            assert!(may_contain_layout_ops_rust(source), "{source}");
        }
    }

    #[test]
    fn code_without_layout_ops_is_skipped() {
        for source in [
            "fn main() { println!(\"hello\"); }",
            "let total = items.iter().map(|i| i.cost).sum::<u64>();",
            "let t = Tensor::new(&[1f32, 2.], &dev)?; let u = (t + 1.0)?;",
            "struct Config { hidden_size: usize, num_heads: usize }",
        ] {
            assert!(!may_contain_layout_ops_rust(source), "{source}");
        }
    }
}
