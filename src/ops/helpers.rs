//! `rules/helpers.toml`: helpers of model libraries known by their name (`to_2tuple`).

use std::sync::OnceLock;

use rustc_hash::FxHashMap as HashMap;
use serde::Deserialize;

const HELPER_RULES: &str = include_str!("../../rules/helpers.toml");

#[derive(Deserialize)]
struct RawHelpers {
    #[serde(default)]
    ntuple: Vec<RawNtuple>,
}

#[derive(Deserialize)]
struct RawNtuple {
    names: Vec<String>,
    n: usize,
}

/// How many items the helper `name` makes of one value (`to_2tuple` → 2), if it is one.
pub fn ntuple_helper(name: &str) -> Option<usize> {
    static TABLE: OnceLock<HashMap<String, usize>> = OnceLock::new();
    TABLE
        .get_or_init(|| {
            let raw: RawHelpers =
                toml::from_str(HELPER_RULES).unwrap_or_else(|e| panic!("rules/helpers.toml: {e}"));
            raw.ntuple
                .into_iter()
                .flat_map(|t| t.names.into_iter().map(move |n| (n, t.n)))
                .collect()
        })
        .get(name)
        .copied()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_table_loads() {
        assert_eq!(super::ntuple_helper("to_2tuple"), Some(2));
        assert_eq!(super::ntuple_helper("_triple"), Some(3));
        assert_eq!(super::ntuple_helper("view"), None);
    }
}
