//! `rules/helpers.toml`: helpers of model libraries known by their name (`to_2tuple`).

use std::sync::OnceLock;

use rustc_hash::FxHashMap as HashMap;
use serde::Deserialize;

const HELPER_RULES: &str = include_str!("../../rules/helpers.toml");

#[derive(Deserialize)]
struct RawHelpers {
    #[serde(default)]
    ntuple: Vec<RawNtuple>,
    #[serde(default)]
    container: Vec<RawContainer>,
}

#[derive(Deserialize)]
struct RawContainer {
    classes: Vec<String>,
    call: Container,
}

/// What a module container does with its items (`rules/helpers.toml` `[[container]]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Container {
    /// Called, it calls each item in turn (`nn.Sequential`).
    Chain,
    /// It is the list of its items (`nn.ModuleList`).
    List,
}

fn raw_helpers() -> RawHelpers {
    toml::from_str(HELPER_RULES).unwrap_or_else(|e| panic!("rules/helpers.toml: {e}"))
}

/// The container the class of dotted name `path` is (`torch.nn.Sequential`), if it is one.
pub fn container(path: &str) -> Option<Container> {
    static TABLE: OnceLock<HashMap<String, Container>> = OnceLock::new();
    TABLE
        .get_or_init(|| {
            raw_helpers()
                .container
                .into_iter()
                .flat_map(|c| c.classes.into_iter().map(move |n| (n, c.call)))
                .collect()
        })
        .get(path)
        .copied()
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
            raw_helpers()
                .ntuple
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
        assert_eq!(
            super::container("torch.nn.Sequential"),
            Some(super::Container::Chain)
        );
        assert_eq!(
            super::container("torch.nn.ModuleList"),
            Some(super::Container::List)
        );
        assert_eq!(super::ntuple_helper("view"), None);
    }
}
