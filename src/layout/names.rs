//! How size symbols are spelled: inside the analysis and in what a user reads.
//!
//! The analysis keeps two different quantities that the code calls by one name apart by
//! primes (`height`, `height′` after `height = height // p`): [`primed`]. A finding never
//! shows them: within one finding each symbol prints as the code's name
//! ([`DisplayNames`]), and only two quantities of one name in the same finding are told
//! apart, by subscripts in the order they were minted (`height₁`, `height₂`), which no code
//! spells, so they never collide with a name of the code.

use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// The mark that tells a minted symbol from an earlier one of the same name.
const PRIME: char = '′';

/// Primes spelled out up to this many; beyond, counted (`T′17`), so that a name minted
/// thousands of times (one `view(…, -1)` per line) stays short.
const MAX_SPELLED_PRIMES: usize = 16;

/// `name` with `primes` primes: `T′′` for two, `T′17` beyond [`MAX_SPELLED_PRIMES`].
pub fn primed(name: &str, primes: usize) -> String {
    if primes > MAX_SPELLED_PRIMES {
        return format!("{name}{PRIME}{primes}");
    }
    let mut n = String::with_capacity(name.len() + primes * PRIME.len_utf8());
    n.push_str(name);
    n.extend(std::iter::repeat_n(PRIME, primes));
    n
}

/// The code's name of a minted symbol and how many primes it took: `("T", 2)` for `T′′`.
pub fn unprimed(name: &str) -> (&str, usize) {
    let counted = name.rfind(PRIME).and_then(|i| {
        let count = &name[i + PRIME.len_utf8()..];
        let n = count.parse::<usize>().ok()?;
        Some((&name[..i], n))
    });
    if let Some(found) = counted {
        return found;
    }
    let base = name.trim_end_matches(PRIME);
    (base, (name.len() - base.len()) / PRIME.len_utf8())
}

/// The names one finding prints its symbols under: a symbol the code named prints as
/// written; a primed one under its code's name (`batch_size′′′` as `batch_size`), unless
/// another symbol of that name is printed in the finding too: then with a subscript, in
/// minting order from 2 (`height`, `height₂`). Symbols first seen while printing get a
/// name then.
#[derive(Debug, Default, Clone)]
pub struct DisplayNames {
    shown: FxHashMap<Arc<str>, Arc<str>>,
    taken: FxHashSet<Arc<str>>,
}

impl DisplayNames {
    /// Names for `symbols`, the ones a finding prints (each once; any order).
    pub fn for_symbols<'s>(symbols: impl IntoIterator<Item = &'s str>) -> Self {
        let mut by_base: FxHashMap<&str, Vec<(usize, &str)>> = FxHashMap::default();
        for s in symbols {
            let (base, primes) = unprimed(s);
            let group = by_base.entry(base).or_default();
            if !group.iter().any(|(_, other)| *other == s) {
                group.push((primes, s));
            }
        }
        let mut names = DisplayNames::default();
        let mut groups: Vec<Vec<(usize, &str)>> = by_base.into_values().collect();
        for group in &mut groups {
            group.sort();
            for (_, symbol) in group.iter().filter(|(primes, _)| *primes == 0) {
                names.insert(symbol, symbol);
            }
        }
        groups.sort();
        for group in groups {
            let alone = group.len() == 1;
            for (_, symbol) in group.into_iter().filter(|(primes, _)| *primes > 0) {
                let shown = names.free_name(unprimed(symbol).0, alone);
                names.insert(symbol, &shown);
            }
        }
        names
    }

    /// The name `symbol` prints under, chosen now if it has none yet.
    pub fn name(&mut self, symbol: &str) -> Arc<str> {
        if let Some(shown) = self.shown.get(symbol) {
            return shown.clone();
        }
        let (base, primes) = unprimed(symbol);
        let shown = match primes {
            0 => symbol.to_string(),
            _ => self.free_name(base, true),
        };
        self.insert(symbol, &shown);
        self.shown[symbol].clone()
    }

    /// Every symbol whose printed name differs from its own, with that name.
    pub fn renamed(&self) -> impl Iterator<Item = (&str, &str)> {
        self.shown
            .iter()
            .filter(|(s, n)| s != n)
            .map(|(s, n)| (&**s, &**n))
    }

    /// `text`, worded before these names were chosen (an assumption, a step of a chain),
    /// with each primed symbol under its name, where it stands as a whole (`T′` in
    /// `(B, T′)`, not in `T′′` or `x.T′`).
    pub fn rename_in(&mut self, text: &str) -> String {
        for symbol in primed_names_in(text) {
            self.name(symbol);
        }
        let mut renamed: Vec<(&str, &str)> = self.renamed().collect();
        renamed.sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        'scan: while let Some(c) = rest.chars().next() {
            let before = out.chars().next_back();
            for (symbol, shown) in &renamed {
                if rest.starts_with(symbol) && stands_alone(before, &rest[symbol.len()..]) {
                    out.push_str(shown);
                    rest = &rest[symbol.len()..];
                    continue 'scan;
                }
            }
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
        out
    }

    /// `base` if `alone` and no symbol prints under it, else the first free subscript.
    fn free_name(&self, base: &str, alone: bool) -> String {
        let plain = alone.then(|| base.to_string());
        plain
            .into_iter()
            .chain((2..).map(|i| subscripted(base, i)))
            .find(|n| !self.taken.contains(n.as_str()))
            .unwrap_or_default()
    }

    fn insert(&mut self, symbol: &str, shown: &str) {
        let shown: Arc<str> = shown.into();
        self.taken.insert(shown.clone());
        self.shown.insert(symbol.into(), shown);
    }
}

/// The primed symbols `text` names (worded before a finding chose its names): each prime
/// with the name before it, brackets and calls included (`x[4]′`, `int(h)′`).
pub fn primed_names_in(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut search = 0;
    while let Some(at) = text[search..].find(PRIME).map(|i| i + search) {
        let mut end = at;
        while text[end..].starts_with(PRIME) {
            end += PRIME.len_utf8();
        }
        if end == at + PRIME.len_utf8() {
            end += text[end..].len()
                - text[end..]
                    .trim_start_matches(|c: char| c.is_ascii_digit())
                    .len();
        }
        let start = name_start(&text[..at]);
        if start < at {
            out.push(&text[start..end]);
        }
        search = end;
    }
    out
}

/// Where the name that ends `text` starts: name characters and dots, and whatever stands
/// inside balanced brackets.
fn name_start(text: &str) -> usize {
    let mut depth = 0usize;
    let mut start = text.len();
    for (i, c) in text.char_indices().rev() {
        match c {
            ')' | ']' => depth += 1,
            '(' | '[' if depth > 0 => depth -= 1,
            _ if depth > 0 => {}
            c if c.is_alphanumeric() || c == '_' || c == '.' || c == '*' => {}
            _ => break,
        }
        start = i;
    }
    if depth > 0 {
        return text.len();
    }
    start
}

/// Whether a name between `before` and `after` is whole: not part of a longer name, an
/// attribute (`x.T`), an indexing or a call (`T.shape[0]`, `T(…)`), nor primed further.
fn stands_alone(before: Option<char>, after: &str) -> bool {
    let name_char = |c: char| c.is_alphanumeric() || c == '_';
    let mut next = after.chars();
    let continues = match next.next() {
        Some(c) if name_char(c) || c == PRIME || c == '[' || c == '(' => true,
        Some('.') => next.next().is_some_and(name_char),
        _ => false,
    };
    !continues && !before.is_some_and(|c| name_char(c) || c == '.' || c == PRIME)
}

/// `base` with `i` in subscript digits: `height₂`.
fn subscripted(base: &str, i: usize) -> String {
    let digits = i.to_string();
    let subscript = |c: char| char::from_u32('₀' as u32 + c.to_digit(10).unwrap_or(0));
    let mut out = base.to_string();
    out.extend(digits.chars().filter_map(subscript));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primes_are_spelled_then_counted_and_read_back() {
        assert_eq!(primed("T", 0), "T");
        assert_eq!(primed("T", 2), "T′′");
        assert_eq!(primed("T", 17), "T′17");
        for (name, primes) in [("T", 0), ("T", 2), ("int(h)", 3), ("x2", 17), ("n", 40)] {
            assert_eq!(unprimed(&primed(name, primes)), (name, primes));
        }
    }

    #[test]
    fn a_finding_shows_the_code_name_unless_two_symbols_share_it() {
        let mut names = DisplayNames::for_symbols(["batch_size′′′", "num_frames′", "C"]);
        assert_eq!(&*names.name("batch_size′′′"), "batch_size");
        assert_eq!(&*names.name("num_frames′"), "num_frames");
        assert_eq!(&*names.name("C"), "C");
        let mut names = DisplayNames::for_symbols(["height′′", "height", "w′", "w′′"]);
        assert_eq!(&*names.name("height"), "height");
        assert_eq!(&*names.name("height′′"), "height₂");
        assert_eq!(&*names.name("w′"), "w₂");
        assert_eq!(&*names.name("w′′"), "w₃");
        // Printed later, not listed: a free name, never one taken.
        assert_eq!(&*names.name("k′′"), "k");
        assert_eq!(&*names.name("k′"), "k₂");
        assert_eq!(&*names.name("height′"), "height₃");
    }

    #[test]
    fn text_worded_before_is_renamed_where_a_symbol_stands_whole() {
        let mut names = DisplayNames::for_symbols(["T′", "tensor", "x"]);
        assert_eq!(
            names.rename_in(
                "the tensor: T′ ≥ 2, self.h′′ divides T′·x, x.T′, (T′), x[4]′, int(h)′/2"
            ),
            "the tensor: T ≥ 2, self.h divides T·x, x.T, (T), x[4], int(h)/2"
        );
        assert_eq!(
            primed_names_in("a′′, (B, c.d[0]′17), T′2 f(x)′"),
            ["a′′", "c.d[0]′17", "T′2", "f(x)′"]
        );
    }
}
