//! Which op tables a file's calls resolve against.
//!
//! The same spelling means different things in different libraries: `x.reshape(..)` copies
//! whenever the input is not contiguous in candle but only when no view exists in PyTorch
//! and tch-rs, and `x.t()` swaps the last two dims in candle but needs rank ≤ 2 in
//! PyTorch. So every file gets the tables of the library it is written against, chosen
//! once from its language and the crates it names:
//!
//! - Python: `rules/torch.toml` (which embeds `rules/einops.toml`), then einops alone.
//! - Rust that names candle (`candle::`, `candle_core::`, `candle_nn::`,
//!   `candle_transformers::`, `extern crate candle…`): candle only.
//! - Rust that names tch (`tch::`, `extern crate tch`): tch only.
//! - Rust that names both, or neither: candle first, then tch. A spelling that only one
//!   library has (`view` is tch's, `broadcast_as` candle's) then resolves to that one;
//!   a shared spelling takes candle's rule, because candle model code (candle-transformers
//!   and the crates built on it) is by far the larger body of Rust model code, and a file
//!   that names no crate at all is most often a module of such a crate that imports
//!   through `super::` or `crate::`.

use crate::ir::Language;
use crate::ops::{ModuleSpec, OpSpec, OpTable};

/// The op tables of one file, in lookup order: the first table that knows a spelling
/// answers for it.
#[derive(Debug, Clone)]
pub struct OpTables {
    tables: Vec<&'static OpTable>,
}

impl OpTables {
    /// PyTorch and einops, for Python files.
    pub fn python() -> OpTables {
        OpTables {
            tables: vec![OpTable::torch(), OpTable::einops()],
        }
    }

    /// The tables for a Rust file, from the crates its text names (see the module docs).
    pub fn rust(source: &str) -> OpTables {
        let candle = CANDLE_CRATES.iter().any(|name| names_crate(source, name));
        let tch = names_crate(source, TCH_CRATE);
        let tables = match (candle, tch) {
            (true, false) => vec![OpTable::candle()],
            (false, true) => vec![OpTable::tch()],
            _ => vec![OpTable::candle(), OpTable::tch()],
        };
        OpTables { tables }
    }

    /// The tables for a file of `language` whose text is `source`.
    pub fn for_language(language: Language, source: &str) -> OpTables {
        match language {
            Language::Python => OpTables::python(),
            Language::Rust => OpTables::rust(source),
        }
    }

    /// The libraries consulted, in order (`["candle", "tch"]`).
    pub fn libraries(&self) -> Vec<&'static str> {
        self.tables
            .iter()
            .flat_map(|t| t.libraries().iter().map(String::as_str))
            .collect()
    }

    /// The op of a method call `x.name(…)`.
    pub fn method(&self, name: &str) -> Option<&'static OpSpec> {
        self.tables.iter().find_map(|t| t.method(name))
    }

    /// The op of a call of a dotted library name (`torch.cat`, `candle_nn.ops.rms_norm`).
    pub fn function(&self, dotted: &str) -> Option<&'static OpSpec> {
        self.tables.iter().find_map(|t| t.function(dotted))
    }

    /// The op of a property read `x.name` (`x.T`, `x.shape`).
    pub fn attribute(&self, name: &str) -> Option<&'static OpSpec> {
        self.tables.iter().find_map(|t| t.attribute(name))
    }

    /// The module class constructed by a call of a dotted name (`nn.Linear`,
    /// `candle_nn.linear`).
    pub fn module(&self, dotted: &str) -> Option<&'static ModuleSpec> {
        self.tables.iter().find_map(|t| t.module(dotted))
    }
}

impl Default for OpTables {
    fn default() -> Self {
        OpTables::python()
    }
}

/// The names under which candle's crates appear in code: the crates themselves, and the
/// `candle` alias that candle-transformers and most downstream crates give candle-core in
/// their `Cargo.toml`.
const CANDLE_CRATES: &[&str] = &["candle", "candle_core", "candle_nn", "candle_transformers"];

const TCH_CRATE: &str = "tch";

/// Does `source` name the crate `name` as a path root (`name::…`) or in `extern crate
/// name`? Whole identifiers only: `stretch::` does not name `tch`.
fn names_crate(source: &str, name: &str) -> bool {
    let bytes = source.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut from = 0;
    while let Some(found) = source[from..].find(name) {
        let start = from + found;
        let end = start + name.len();
        from = end;
        if start > 0 && is_ident(bytes[start - 1]) {
            continue;
        }
        if bytes.get(end).is_some_and(|&b| is_ident(b)) {
            continue;
        }
        let after = source[end..].trim_start();
        let before = source[..start].trim_end();
        if after.starts_with("::") || before.ends_with("extern crate") {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_files_get_the_tables_of_the_crates_they_name() {
        let candle = "use candle::{Module, Tensor};\nfn f() {}";
        assert_eq!(OpTables::rust(candle).libraries(), ["candle"]);
        let candle_nn = "fn f(x: &Tensor) { candle_nn::ops::softmax_last_dim(x) }";
        assert_eq!(OpTables::rust(candle_nn).libraries(), ["candle"]);
        let tch = "use tch::{nn, Tensor};";
        assert_eq!(OpTables::rust(tch).libraries(), ["tch"]);
        assert_eq!(OpTables::rust("extern crate tch;").libraries(), ["tch"]);
        let neither = "use super::with_tracing::Linear;";
        assert_eq!(OpTables::rust(neither).libraries(), ["candle", "tch"]);
        let both = "use tch::Tensor; use candle_core::Tensor as C;";
        assert_eq!(OpTables::rust(both).libraries(), ["candle", "tch"]);
    }

    #[test]
    fn crate_names_match_whole_identifiers_only() {
        assert!(!names_crate("let a = stretch::b();", "tch"));
        assert!(!names_crate("let a = tch_like::b();", "tch"));
        assert!(!names_crate("// we use tch here", "tch"));
        assert!(names_crate("let t = tch :: Tensor::zeros(&[2], k);", "tch"));
        assert!(names_crate(
            "extern crate candle_core as candle;",
            "candle_core"
        ));
        assert!(!names_crate("my_candle::x()", "candle"));
    }

    #[test]
    fn shared_spellings_resolve_in_lookup_order() {
        let both = OpTables::rust("");
        // `view` is tch's only; `broadcast_as` candle's only; `reshape` is candle's first.
        assert_eq!(
            both.method("view").map(|s| s.source),
            Some("rules/tch.toml")
        );
        assert_eq!(
            both.method("broadcast_as").map(|s| s.source),
            Some("rules/candle.toml")
        );
        assert_eq!(
            both.method("reshape").map(|s| s.source),
            Some("rules/candle.toml")
        );
        assert!(OpTables::python().function("einops.rearrange").is_some());
    }
}
