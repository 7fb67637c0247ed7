//! Rust fixture tests: every `fixtures/rust/*.rs` file is candle or tch-rs model code whose
//! lines that must produce a finding end with `// expect: SL005` (or `// expect: SL001,
//! SL002`). The linter must report exactly those (line, code) pairs — a missing finding and
//! an extra one both fail — and the failure message lists every disagreement at once.
//!
//! The markers come from the spec (§9 tch-rs = libtorch, §10 candle, read in candle's
//! source and checked against candle-core 0.11 by `tests/it/candle_oracle.rs`); each fixture's
//! doc comments derive every marked layout step by step.
//!
//! Run `cargo test --test it rust_fixtures:: -- --nocapture` for the per-fixture table.

use crate::fixture_support;
use fixture_support::Finding;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use stridelint::layout::CandleBackend;
use stridelint::Settings;

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("rust")
}

fn fixture_paths() -> Vec<PathBuf> {
    fixture_support::fixture_paths("rust", "rs")
}

fn expected_codes(line: &str) -> Vec<String> {
    fixture_support::expected_codes(line, &fixture_support::RUST)
}

fn expected_findings(text: &str) -> BTreeSet<Finding> {
    fixture_support::expected_findings(text, &fixture_support::RUST)
}

fn findings(path: &Path, text: &str, settings: &Settings) -> BTreeSet<Finding> {
    fixture_support::reported_findings(path, text, settings)
}

#[test]
fn every_rust_fixture_reports_exactly_its_expected_findings() {
    fixture_support::assert_every_fixture_matches(
        &fixture_paths(),
        &fixture_support::RUST,
        "Rust fixtures",
    );
}

/// The fixtures exercise every lint that applies to Rust code.
#[test]
fn rust_fixtures_cover_the_rust_lints() {
    let mut seen = BTreeSet::new();
    for path in fixture_paths() {
        let text = std::fs::read_to_string(&path).expect("fixture is UTF-8");
        seen.extend(expected_findings(&text).into_iter().map(|(_, code)| code));
    }
    for code in ["SL001", "SL002", "SL005", "SL006", "SL010"] {
        assert!(seen.contains(code), "no Rust fixture expects {code}");
    }
}

/// `candle-backend = "cpu"`: candle's default CPU build takes any matrix strides, so the
/// narrowed-operand matmul of `candle_narrow_matmul.rs` is fine there (spec §10.3) and
/// SL005 disappears; nothing else changes.
#[test]
fn the_cpu_backend_only_checks_the_batch_rule() {
    let path = fixture_dir().join("candle_narrow_matmul.rs");
    let text = std::fs::read_to_string(&path).expect("fixture exists");
    let cuda = findings(&path, &text, &Settings::default());
    assert!(cuda.iter().any(|(_, code)| code == "SL005"), "{cuda:?}");
    let cpu = Settings {
        candle_backend: CandleBackend::Cpu,
        ..Settings::default()
    };
    let on_cpu = findings(&path, &text, &cpu);
    let without_sl005: BTreeSet<Finding> = cuda
        .into_iter()
        .filter(|(_, code)| code != "SL005")
        .collect();
    assert_eq!(on_cpu, without_sl005);
}

/// A Rust file syn cannot parse is reported once (SL999) and skipped.
#[test]
fn a_rust_syntax_error_is_reported_and_the_file_skipped() {
    let text =
        "use candle_core::Tensor;\nfn f(x: &Tensor) -> Tensor {\n    x.t()?.reshape((2, ()))\n";
    let found = findings(Path::new("broken.rs"), text, &Settings::default());
    assert_eq!(
        found
            .iter()
            .map(|(_, code)| code.as_str())
            .collect::<Vec<_>>(),
        ["SL999"]
    );
}

/// `// stridelint: ignore[SL006]` on the line above a finding suppresses it (syn drops
/// comments; they are read from the text).
#[test]
fn a_suppression_on_the_line_above_hides_the_finding() {
    let text = "use candle_core::{Result, Tensor};\n\
                pub fn f(scores: &Tensor) -> Result<Tensor> {\n\
                \x20   let (_b, _s, _t) = scores.dims3()?;\n\
                \x20   let columns = scores.t()?;\n\
                \x20   candle_nn::ops::softmax_last_dim(&columns)\n\
                }\n";
    let path = Path::new("suppressed.rs");
    let found = findings(path, text, &Settings::default());
    assert_eq!(found, BTreeSet::from([(5, "SL006".to_string())]));
    let suppressed = text.replace(
        "    candle_nn::ops::softmax_last_dim",
        "    // stridelint: ignore[SL006]\n    candle_nn::ops::softmax_last_dim",
    );
    assert!(findings(path, &suppressed, &Settings::default()).is_empty());
}

#[test]
fn expect_markers_are_read_up_to_the_next_comment() {
    assert_eq!(
        expected_codes("q.matmul(&k.t()?) // expect: SL005"),
        ["SL005"]
    );
    assert_eq!(
        expected_codes("x // expect: SL001, SL002 // stridelint: ignore[SL003]"),
        ["SL001", "SL002"]
    );
    assert!(expected_codes("x // stridelint: ignore[SL005]").is_empty());
}

/// Rust idioms the analysis must see through to reach the op, each in a snippet whose
/// only finding is on the marked line: `Self::helper(..)` calls, `xs.apply(&module)`,
/// `D::Minus(k)` dims, `IndexOp::i` with a tuple of ranges, and a literal division of a
/// size (`d / 2`) whose quotient must be comparable with the size.
#[test]
fn rust_idioms_reach_the_ops() {
    let cases: &[(&str, &str)] = &[
        (
            "Self::helper",
            "use candle_core::{Result, Tensor};\n\
             pub struct A;\n\
             impl A {\n\
             \x20   fn merge(y: &Tensor, b: usize, t: usize) -> Result<Tensor> {\n\
             \x20       y.reshape((b, t, ())) // expect: SL002\n\
             \x20   }\n\
             \x20   pub fn forward(&self, xs: &Tensor, h: usize) -> Result<Tensor> {\n\
             \x20       let (b, t, c) = xs.dims3()?;\n\
             \x20       let y = xs.reshape((b, t, h, c / h))?.transpose(1, 2)?;\n\
             \x20       Self::merge(&y, b, t)\n\
             \x20   }\n\
             }\n",
        ),
        (
            "xs.apply(&module)",
            "use candle_core::{Module, Result, Tensor};\n\
             use candle_nn::{linear, Linear, VarBuilder};\n\
             pub struct A { proj: Linear }\n\
             impl A {\n\
             \x20   pub fn new(n: usize, vb: VarBuilder) -> Result<Self> {\n\
             \x20       Ok(Self { proj: linear(n, n, vb)? })\n\
             \x20   }\n\
             \x20   pub fn forward(&self, xs: &Tensor) -> Result<Tensor> {\n\
             \x20       let (b, t, _) = xs.dims3()?;\n\
             \x20       let y = xs.apply(&self.proj)?.transpose(1, 2)?;\n\
             \x20       y.reshape((b, t, ())) // expect: SL002\n\
             \x20   }\n\
             }\n",
        ),
        (
            "D::Minus(k)",
            "use candle_core::{Result, Tensor, D};\n\
             pub fn f(scores: &Tensor) -> Result<Tensor> {\n\
             \x20   let (_b, _s, _t) = scores.dims3()?;\n\
             \x20   let columns = scores.transpose(D::Minus(2), D::Minus1)?;\n\
             \x20   candle_nn::ops::softmax_last_dim(&columns) // expect: SL006\n\
             }\n",
        ),
        (
            "x.i((.., .., a..b))",
            "use candle_core::{IndexOp, Result, Tensor};\n\
             pub fn f(x: &Tensor) -> Result<Tensor> {\n\
             \x20   let (_b, _t, c) = x.dims3()?;\n\
             \x20   let head = x.i((.., .., 0..c - 1))?;\n\
             \x20   candle_nn::ops::softmax_last_dim(&head) // expect: SL006\n\
             }\n",
        ),
        (
            "literal division",
            "use candle_core::{Result, Tensor, D};\n\
             pub fn f(x: &Tensor) -> Result<Tensor> {\n\
             \x20   let (_b, _t, d) = x.dims3()?;\n\
             \x20   let half = x.narrow(D::Minus1, 0, d / 2)?;\n\
             \x20   candle_nn::ops::softmax_last_dim(&half) // expect: SL006\n\
             }\n",
        ),
    ];
    for (idiom, text) in cases {
        let expected = expected_findings(text);
        let actual = findings(Path::new("idiom.rs"), text, &Settings::default());
        assert_eq!(actual, expected, "{idiom}");
    }
}
