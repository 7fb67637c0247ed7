//! The pre-filter: a text scan that decides whether a file can produce a layout finding at
//! all. What cannot is not parsed.
//!
//! The scan looks for the names of the operations the lints report on, anywhere in the text
//! (comments and strings included), with one Aho-Corasick automaton, so it reads each byte
//! once. It errs on the side of parsing: names are matched as substrings (`view` also
//! matches `review`), so a variant such as `view_as`, `reshape_as` or `unflatten` is covered
//! by the shorter name it contains.

use crate::frontend::token_filter::TokenFilter;

/// Names of the operations a finding is reported on; a text without any of them cannot
/// produce a finding.
///
/// - SL001/SL003: `view`, `view_as`, `reshape`;
/// - SL002: `reshape`, `reshape_as`, `flatten`, `ravel`, einops `rearrange` (and any
///   `einops` import);
/// - SL004: the permutations `permute`, `transpose`, `swapaxes`/`swapdims`,
///   `movedim`/`moveaxis` (wrong or duplicate dims), and the ops above.
///
/// Operations that only make a tensor non-contiguous (`split`, `narrow`, `expand`, `.T`,
/// slicing, ...) are not listed: they matter only when a listed op follows, and then that
/// op's name is in the text. The cost is that SL004 is not checked on them (say
/// `x.squeeze(7)`) in a file that has none of these names.
pub const LAYOUT_OP_TOKENS: &[&str] = &[
    "view",
    "reshape",
    "flatten",
    "ravel",
    "rearrange",
    "einops",
    "transpose",
    "permute",
    "swapaxes",
    "swapdims",
    "movedim",
    "moveaxis",
];

/// Cheap pre-filter: does `source` contain any token of [`LAYOUT_OP_TOKENS`]? Text without
/// one cannot produce a layout finding and need not be parsed.
pub fn may_contain_layout_ops(source: &str) -> bool {
    FILTER.matches(source)
}

// `prefilter_throughput`: ~500 MB/s on text without a token.
static FILTER: TokenFilter = TokenFilter::new(LAYOUT_OP_TOKENS);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_with_layout_ops_are_parsed() {
        for source in [
            "y = x.view(B, T, C)",
            "y = x.reshape_as(z)",
            "y = torch.flatten(x, 1)",
            "from einops import rearrange",
            "import einops",
            "q = q.transpose(1, 2)",
            "x = x.permute(0, 2, 1)",
            "y = x.movedim(1, -1)",
            "y = x.unflatten(1, (h, d))",
            "y = x.view_as(z)",
            "y = x.swapaxes(0, 1)",
        ] {
            assert!(may_contain_layout_ops(source), "{source}");
        }
    }

    #[test]
    fn files_without_layout_ops_are_skipped() {
        for source in [
            "",
            "import os\nprint(os.getcwd())\n",
            "def add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:\n    return a + b\n",
            "x = self.Tensor; y = cfg.Height; z = m.Type; w = n.mTime",
            "loss = F.cross_entropy(logits, targets)",
            "x = torch.zeros(3, 4)\ny = x @ w.to(device)",
            // Ops that only make a tensor non-contiguous cannot fail or copy on their own.
            "a, b = x.split(64, dim=2)\ny = a.T.contiguous()",
            "x = x.unsqueeze(0).expand(4, -1, -1)[:, ::2]",
            "y = torch.einsum('bij,bjk->bik', a, b.mT)",
        ] {
            assert!(!may_contain_layout_ops(source), "{source}");
        }
    }

    /// Throughput on text without any token, the case where the whole input is scanned.
    /// Measured (release, 2 cores, session 2, after the token list became the reported
    /// ops): 502 MB/s on this test's text; tree-sitter parsed the real model tree at ~8 MB/s
    /// per core (86 MB in 10.8 CPU-seconds, whole files). Timing depends on the machine, so
    /// this only runs on request:
    /// `cargo test --release --lib prefilter_throughput -- --ignored --nocapture`.
    #[test]
    #[ignore = "timing benchmark; run on request"]
    fn prefilter_throughput() {
        let line = "def add(a: torch.Tensor, b) -> Tensor:  # returns a.Type + b.Height\n    return a + b\n";
        let text = line.repeat(100_000);
        assert!(!may_contain_layout_ops(&text));
        let started = std::time::Instant::now();
        let rounds = 20;
        for _ in 0..rounds {
            assert!(!may_contain_layout_ops(std::hint::black_box(&text)));
        }
        let megabytes_per_second =
            (text.len() * rounds) as f64 / 1e6 / started.elapsed().as_secs_f64();
        println!("prefilter: {megabytes_per_second:.0} MB/s");
        assert!(
            megabytes_per_second > 100.0,
            "{megabytes_per_second:.0} MB/s"
        );
    }
}
