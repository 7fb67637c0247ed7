//! The pre-filter: a text scan that decides whether a file can produce a layout finding at
//! all. Files that cannot are not parsed, which is most of the cost of linting them.
//!
//! The scan looks for the names of layout operations anywhere in the text (comments and
//! strings included) with one Aho-Corasick automaton, so it reads each byte once. It errs
//! on the side of parsing: names are matched as substrings (`view` also matches `review`),
//! so a variant such as `view_as`, `unsqueeze`, `tensor_split` or `unflatten` is covered
//! by the shorter name it contains.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};

/// Tokens whose presence makes a file worth parsing.
///
/// - ops that can fail or copy: `view`, `reshape`, `flatten`, `ravel`, `contiguous`, einops
///   (`rearrange`, any `einops` import), `einsum`;
/// - ops that make a tensor non-contiguous, which a later op may then trip on: transposes
///   and permutations, `narrow`/`split`/`chunk`/`unbind`/`select`/`diagonal`/`unfold`,
///   `expand`/`broadcast`/`repeat`, `squeeze`, `as_strided`, explicit `stride` use;
/// - the attribute forms `.t(`, `.T`, `.mT`, `.H`, `.mH` (the last four only when no
///   identifier character follows, so `.Tensor` does not count).
pub const LAYOUT_OP_TOKENS: &[&str] = &[
    "view",
    "reshape",
    "flatten",
    "ravel",
    "contiguous",
    "rearrange",
    "einops",
    "einsum",
    "transpose",
    "permute",
    "swapaxes",
    "swapdims",
    "movedim",
    "moveaxis",
    "adjoint",
    "narrow",
    "split",
    "chunk",
    "unbind",
    "select",
    "diagonal",
    "unfold",
    "expand",
    "broadcast",
    "repeat",
    "squeeze",
    "as_strided",
    "stride",
    ".t(",
    ".T",
    ".mT",
    ".H",
    ".mH",
];

/// Cheap pre-filter: does `source` contain any token of [`LAYOUT_OP_TOKENS`]? Files without
/// one cannot produce a layout finding and need not be parsed.
pub fn may_contain_layout_ops(source: &str) -> bool {
    let Some(matchers) = matchers() else {
        return true;
    };
    let bytes = source.as_bytes();
    if matchers.names.is_match(bytes) {
        return true;
    }
    matchers.attributes.find_iter(bytes).any(|found| {
        let token = matchers.attribute_tokens[found.pattern().as_usize()];
        !needs_word_end(token)
            || !bytes
                .get(found.end())
                .is_some_and(|&b| is_identifier_byte(b))
    })
}

/// The tokens split in two automata. Searching the names alone lets aho-corasick use its
/// fast (SIMD) prefilter; the two-byte attribute tokens (`.T`) would defeat it, and they
/// need a check after each match anyway. Measured on 7.9 MB of Python without any token
/// (release build, busy machine): one automaton over all tokens 190 MB/s, the split
/// ~600 MB/s; parsing the same text is ~100 times slower than either.
struct Matchers {
    names: AhoCorasick,
    attributes: AhoCorasick,
    attribute_tokens: Vec<&'static str>,
}

/// The short attribute tokens are prefixes of many unrelated names (`.Tensor`, `.Height`),
/// so they only count when the attribute name ends right after them.
fn needs_word_end(token: &str) -> bool {
    token
        .as_bytes()
        .last()
        .is_some_and(|&b| is_identifier_byte(b))
}

fn is_identifier_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || !byte.is_ascii()
}

/// The automata, built once. `None` only if building fails, which the fixed patterns never
/// make happen; the filter then lets every file through.
fn matchers() -> Option<&'static Matchers> {
    static MATCHERS: OnceLock<Option<Matchers>> = OnceLock::new();
    MATCHERS
        .get_or_init(|| {
            let (attribute_tokens, names): (Vec<&'static str>, Vec<&'static str>) =
                LAYOUT_OP_TOKENS
                    .iter()
                    .partition(|token| token.starts_with('.'));
            let build = |tokens: &[&str]| {
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostFirst)
                    .build(tokens)
                    .ok()
            };
            Some(Matchers {
                names: build(&names)?,
                attributes: build(&attribute_tokens)?,
                attribute_tokens,
            })
        })
        .as_ref()
}

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
            "a, b = x.split(64, dim=2)",
            "x = x.unsqueeze(0).expand(4, -1, -1)",
            "y = x.t()",
            "y = x.T",
            "y = x.T[0]",
            "y = x.mT @ w",
            "y = x.mH",
            "y = torch.einsum('bij,bjk->bik', a, b)",
            "y = x.movedim(1, -1)",
            "y = x.unflatten(1, (h, d))",
            "y = x.narrow(0, 1, 2)",
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
        ] {
            assert!(!may_contain_layout_ops(source), "{source}");
        }
    }

    /// Throughput on text without any token, the case where the whole input is scanned.
    /// Measured (release, 2 shared cores under load): ~650 MB/s on 7.9 MB of CPython's
    /// standard library files without a token, ~450 MB/s over all 28 MB of it (files with a
    /// token stop early), ~260 MB/s on this test's text (a rejected `.T`/`.H` candidate
    /// every 30 bytes); tree-sitter parses the same text at ~3-10 MB/s. Timing depends on
    /// the machine, so this only runs on request:
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

    #[test]
    fn short_attribute_tokens_need_the_name_to_end() {
        assert!(may_contain_layout_ops("x.T"));
        assert!(may_contain_layout_ops("x.T)"));
        assert!(!may_contain_layout_ops("x.To"));
        assert!(!may_contain_layout_ops("x.T_"));
        assert!(!may_contain_layout_ops("x.Té"));
        // A rejected `.T` does not hide a later real token.
        assert!(may_contain_layout_ops("x.Tensor; y = x.T"));
    }
}
