//! Which ops the rules report on, by language, and the pre-filter built from them: a text
//! scan that decides whether a file can produce a finding at all. What cannot is not
//! parsed.
//!
//! Both come from the registry: each rule declares the ops it reports on
//! ([`super::Reports`]), the op tables say which ops those are and how they are spelled,
//! and the scan looks for those spellings. So a rule is never gated by another rule's
//! tokens: SL004 on `x.select(5, 0)` is checked in a file that names no `view`.
//!
//! The scan looks for the names anywhere in the text (comments and strings included), with
//! one Aho-Corasick automaton, so it reads each byte once. It errs on the
//! side of parsing: names are matched as substrings (`view` also matches `review`). Names
//! of one or two letters (`t`, `mT`, candle's `i`) are looked for as `.t(` / `.mT`, so a
//! bare `t(x)` imported from torch is not seen (no model code writes it).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::BTreeSet;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

use crate::ir::Language;
use crate::ops::{OpKind, OpSpec, OpTable, ParamType};

use super::{Reports, Rule, RULES};

/// The ops (by table name) each rule reports on, for one language.
pub struct ReportedOps {
    by_rule: HashMap<&'static str, HashSet<String>>,
    tokens: Vec<String>,
    filter: TokenFilter,
}

impl ReportedOps {
    /// The ops of the tables a file of `language` is analysed with.
    pub fn get(language: Language) -> &'static ReportedOps {
        static PYTHON: OnceLock<ReportedOps> = OnceLock::new();
        static RUST: OnceLock<ReportedOps> = OnceLock::new();
        match language {
            Language::Python => PYTHON.get_or_init(|| ReportedOps::new(&[OpTable::torch()])),
            Language::Rust => {
                RUST.get_or_init(|| ReportedOps::new(&[OpTable::candle(), OpTable::tch()]))
            }
        }
    }

    fn new(tables: &[&OpTable]) -> ReportedOps {
        let specs: Vec<(&OpSpec, Vec<&str>)> = tables
            .iter()
            .flat_map(|t| {
                let ops = t.all().iter().map(|s| (s, Vec::new()));
                let modules = t.modules().iter().map(|m| {
                    let classes = m.classes.iter().map(|c| last_segment(c)).collect();
                    (&m.call, classes)
                });
                ops.chain(modules).collect::<Vec<_>>()
            })
            .collect();
        let mut by_rule: HashMap<&'static str, HashSet<String>> = HashMap::default();
        let mut tokens = BTreeSet::new();
        for rule in RULES {
            let names = by_rule.entry(rule.code).or_default();
            for (spec, classes) in &specs {
                if rule.reports_on.iter().any(|r| selects(*r, spec)) {
                    names.insert(spec.name.clone());
                    tokens.extend(spellings(spec, classes));
                }
            }
        }
        let tokens: Vec<String> = tokens.into_iter().collect();
        let filter = TokenFilter::new(tokens.clone());
        ReportedOps {
            by_rule,
            tokens,
            filter,
        }
    }

    /// Does `rule` report on the op named `op` (its table name)?
    pub fn reports(&self, rule: &Rule, op: &str) -> bool {
        self.by_rule
            .get(rule.code)
            .is_some_and(|ops| ops.contains(op))
    }

    /// The table names of the ops `rule` reports on.
    pub fn ops_of(&self, rule: &Rule) -> Vec<&str> {
        let mut ops: Vec<&str> = self
            .by_rule
            .get(rule.code)
            .map(|ops| ops.iter().map(String::as_str).collect())
            .unwrap_or_default();
        ops.sort_unstable();
        ops
    }

    /// The spellings the pre-filter looks for.
    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    /// Cheap pre-filter: does `text` name any op a rule reports on? Text without one cannot
    /// produce an op finding and need not be parsed.
    pub fn may_report(&self, text: &str) -> bool {
        self.filter.matches(text)
    }
}

/// A fixed token list and its automaton.
struct TokenFilter {
    /// `None` if the automaton could not be built (fixed literals never make that happen):
    /// then every text passes, parsing it being the safe answer.
    automaton: Option<AhoCorasick>,
}

impl TokenFilter {
    fn new(tokens: Vec<String>) -> Self {
        TokenFilter {
            automaton: AhoCorasick::new(tokens).ok(),
        }
    }

    fn matches(&self, text: &str) -> bool {
        match &self.automaton {
            Some(automaton) => automaton.is_match(text.as_bytes()),
            None => true,
        }
    }
}

/// Does the selector pick this op?
fn selects(selector: Reports, spec: &OpSpec) -> bool {
    match selector {
        Reports::Kind(kind) => spec.kind == kind,
        Reports::Tag(tag) => spec.tags.iter().any(|t| t == tag),
        Reports::RequiresContiguous => spec.requires_contiguous,
        Reports::DimArgument => spec
            .params
            .iter()
            .any(|p| matches!(p.ty, ParamType::Dim | ParamType::Dims)),
        // `t += v` is recorded on the Python operator's event.
        Reports::Write => {
            spec.kind == OpKind::InPlace
                || (spec.kind == OpKind::Elementwise && spec.name.starts_with("python "))
        }
        Reports::File => false,
    }
}

/// How an op appears in source text: its method names, the last segment of its function
/// names (`softmax` for `torch.nn.functional.softmax`), its property names and, for a
/// module, its class names.
fn spellings<'a>(spec: &'a OpSpec, classes: &'a [&'a str]) -> impl Iterator<Item = String> + 'a {
    let short = |name: &str, call: bool| {
        if name.chars().count() <= 2 {
            format!(".{name}{}", if call { "(" } else { "" })
        } else {
            name.to_string()
        }
    };
    let methods = spec.methods.iter().map(move |m| short(m, true));
    let functions = spec
        .functions
        .iter()
        .map(move |f| short(last_segment(f), true));
    let attributes = spec.attributes.iter().map(move |a| short(a, false));
    let classes = classes.iter().map(|c| c.to_string());
    methods.chain(functions).chain(attributes).chain(classes)
}

fn last_segment(dotted: &str) -> &str {
    dotted.rsplit('.').next().unwrap_or(dotted)
}

/// Whether a file of `language` with this text can produce an op finding.
pub fn may_report(language: Language, text: &str) -> bool {
    ReportedOps::get(language).may_report(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn python(source: &str) -> bool {
        may_report(Language::Python, source)
    }

    fn rust(source: &str) -> bool {
        may_report(Language::Rust, source)
    }

    #[test]
    fn python_files_with_reported_ops_are_parsed() {
        for source in [
            "y = x.view(B, T, C)",
            "y = x.reshape_as(z)",
            "y = torch.flatten(x, 1)",
            "from einops import rearrange",
            "q = q.transpose(1, 2)",
            "x = x.permute(0, 2, 1)",
            "y = x.movedim(1, -1)",
            "y = x.unflatten(1, (h, d))",
            "y = x.view_as(z)",
            "y = x.swapaxes(0, 1)",
            // SL004 reports on every op with a dimension argument.
            "y = x.select(5, 0)",
            "y = x.squeeze(7)",
            "a, b = x.split(64, dim=2)",
        ] {
            assert!(python(source), "{source}");
        }
    }

    #[test]
    fn python_files_without_reported_ops_are_skipped() {
        for source in [
            "",
            "import os\nprint(os.getcwd())\n",
            "def add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:\n    return a + b\n",
            "x = self.Tensor; y = cfg.Height; z = m.Type; w = n.mTime",
            "x = torch.zeros(3, 4)\ny = x @ w.to(device)",
        ] {
            assert!(!python(source), "{source}");
        }
    }

    #[test]
    fn rust_files_with_reported_ops_are_parsed() {
        for source in [
            "let y = x.reshape((b, t * c))?;",
            "let y = x.flatten_all()?;",
            "let y = q.matmul(&k.t()?)?;",
            "let y = candle_nn::ops::softmax_last_dim(&x)?;",
            "let y = candle_nn::ops::rms_norm(&x, &w, 1e-5)?;",
            "let y = candle_nn::rotary_emb::rope(&x, &cos, &sin)?;",
            "let y = x.view([b, -1]);",
            "let y = x.transpose(1, 2)?;",
            "let y = x.narrow(2, 0, 4)?;",
        ] {
            assert!(rust(source), "{source}");
        }
    }

    #[test]
    fn rust_files_without_reported_ops_are_skipped() {
        for source in ["", "fn main() { println!(\"hello\"); }"] {
            assert!(!rust(source), "{source}");
        }
    }

    /// Every rule that reports on ops finds some in the tables of a language it is for.
    #[test]
    fn every_op_rule_reports_on_some_op() {
        for rule in RULES {
            if matches!(rule.check, super::super::Check::Runner(_)) {
                continue;
            }
            let python = ReportedOps::get(Language::Python).ops_of(rule);
            let rust = ReportedOps::get(Language::Rust).ops_of(rule);
            assert!(
                !python.is_empty() || !rust.is_empty(),
                "{} reports on no op of any table",
                rule.code
            );
        }
    }

    /// Throughput on text without any token, the case where the whole input is scanned.
    /// Timing depends on the machine, so this only runs on request:
    /// `cargo test --release --lib prefilter_throughput -- --ignored --nocapture`.
    #[test]
    #[ignore = "timing benchmark; run on request"]
    fn prefilter_throughput() {
        let line = "def add(a: torch.Tensor, b) -> Tensor:  # returns a.Type + b.Height\n    return a + b\n";
        let text = line.repeat(100_000);
        assert!(!python(&text));
        let started = std::time::Instant::now();
        let rounds = 20;
        for _ in 0..rounds {
            assert!(!python(std::hint::black_box(&text)));
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
