//! Which rules are on for a file: Ruff's layered `select` / `extend-select` / `ignore`.
//!
//! Every source of settings is one *layer*, applied in order: the base of an `extend`
//! chain first, then each configuration that extends it, then the command line, then the
//! `per-file-ignores` that match the file. Within a layer:
//!
//! - `select` (when present) starts over from nothing — a later layer's `select` replaces
//!   everything before it, as a user who writes `--select SL001` expects;
//! - the layer's selectors are applied from the least to the most specific (`ALL`, then
//!   `SL`, then `SL00`, then `SL001`), so `select = ["SL"]` with `ignore = ["SL002"]`
//!   keeps everything but SL002, and `ignore = ["SL00"]` with `extend-select = ["SL001"]`
//!   keeps SL001;
//! - at equal specificity, `ignore` wins (it is applied after the selects).
//!
//! The result is an explicit set of codes, computed once per configuration, so checking
//! whether a finding is enabled never re-walks the layers.

use std::collections::BTreeSet;

/// The selectors one source of settings contributes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SelectionLayer {
    /// `select`: when present, the selection restarts from these.
    pub select: Option<Vec<String>>,
    pub extend_select: Vec<String>,
    pub ignore: Vec<String>,
}

impl SelectionLayer {
    /// A layer that only ignores `codes` (what `per-file-ignores` contributes).
    pub fn ignoring(codes: Vec<String>) -> Self {
        SelectionLayer {
            select: None,
            extend_select: Vec::new(),
            ignore: codes,
        }
    }

    fn is_empty(&self) -> bool {
        self.select.is_none() && self.extend_select.is_empty() && self.ignore.is_empty()
    }
}

/// The selector that matches every rule.
pub const ALL: &str = "ALL";

/// How specific a selector is: `ALL` least, then longer prefixes more.
fn specificity(selector: &str) -> usize {
    if selector == ALL {
        0
    } else {
        selector.len()
    }
}

fn matches(selector: &str, code: &str) -> bool {
    selector == ALL || code.starts_with(selector)
}

/// The codes among `known` that are enabled after applying `layers` in order. With no
/// layer at all, every known rule is on (stridelint has no opt-in rules).
pub fn enabled_codes<'c>(known: &[&'c str], layers: &[SelectionLayer]) -> BTreeSet<&'c str> {
    let mut enabled: BTreeSet<&'c str> = known.iter().copied().collect();
    for layer in layers.iter().filter(|l| !l.is_empty()) {
        if layer.select.is_some() {
            enabled.clear();
        }
        // (specificity, is_ignore, selector): sorting puts selects before ignores of the
        // same specificity, so the ignore is applied last and wins.
        let mut actions: Vec<(usize, bool, &str)> = layer
            .select
            .iter()
            .flatten()
            .chain(&layer.extend_select)
            .map(|s| (specificity(s), false, s.as_str()))
            .chain(
                layer
                    .ignore
                    .iter()
                    .map(|s| (specificity(s), true, s.as_str())),
            )
            .collect();
        actions.sort_by_key(|&(spec, is_ignore, _)| (spec, is_ignore));
        for (_, is_ignore, selector) in actions {
            for &code in known.iter().filter(|c| matches(selector, c)) {
                if is_ignore {
                    enabled.remove(code);
                } else {
                    enabled.insert(code);
                }
            }
        }
    }
    enabled
}

/// Upper-case a selector as written by a user (`sl001` → `SL001`, ` SL00 ` → `SL00`).
pub fn normalize_selector(selector: &str) -> String {
    selector.trim().to_ascii_uppercase()
}

/// A selector that matches no known rule is a typo worth an error (as in Ruff), not a
/// silently empty selection.
pub fn check_selector(selector: &str, known: &[&str]) -> Result<(), String> {
    if selector == ALL || known.iter().any(|code| matches(selector, code)) {
        Ok(())
    } else {
        Err(format!(
            "unknown rule selector `{selector}` (see `stridelint rules`)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[&str] = &["SL001", "SL002", "SL003", "SL100", "SL999"];

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn enabled(layers: &[SelectionLayer]) -> Vec<&'static str> {
        enabled_codes(KNOWN, layers).into_iter().collect()
    }

    #[test]
    fn no_layers_enable_everything() {
        assert_eq!(enabled(&[]), KNOWN.to_vec());
    }

    #[test]
    fn more_specific_selectors_win_within_a_layer() {
        let layer = SelectionLayer {
            select: Some(strings(&["SL"])),
            extend_select: strings(&["SL001"]),
            ignore: strings(&["SL00"]),
        };
        assert_eq!(enabled(&[layer]), vec!["SL001", "SL100", "SL999"]);
    }

    #[test]
    fn ignore_wins_at_equal_specificity() {
        let layer = SelectionLayer {
            select: Some(strings(&["SL002"])),
            extend_select: vec![],
            ignore: strings(&["SL002"]),
        };
        assert!(enabled(&[layer]).is_empty());
    }

    #[test]
    fn a_later_select_starts_over_and_a_later_extend_select_reenables() {
        let config = SelectionLayer {
            select: None,
            extend_select: vec![],
            ignore: strings(&["SL002"]),
        };
        let cli = SelectionLayer {
            select: None,
            extend_select: strings(&["SL002"]),
            ignore: vec![],
        };
        assert_eq!(enabled(&[config.clone(), cli]), KNOWN.to_vec());
        let cli_select = SelectionLayer {
            select: Some(strings(&["SL003"])),
            extend_select: vec![],
            ignore: vec![],
        };
        assert_eq!(enabled(&[config, cli_select]), vec!["SL003"]);
    }

    #[test]
    fn per_file_ignores_apply_last() {
        let layers = [
            SelectionLayer {
                select: Some(strings(&["ALL"])),
                extend_select: vec![],
                ignore: vec![],
            },
            SelectionLayer::ignoring(strings(&["SL1"])),
        ];
        assert_eq!(enabled(&layers), vec!["SL001", "SL002", "SL003", "SL999"]);
    }

    #[test]
    fn unknown_selectors_are_reported() {
        assert!(check_selector("SL00", KNOWN).is_ok());
        assert!(check_selector("ALL", KNOWN).is_ok());
        let e = check_selector("SL0001", KNOWN).unwrap_err();
        assert!(e.contains("`SL0001`"), "{e}");
        assert_eq!(normalize_selector(" sl001 "), "SL001");
    }
}
