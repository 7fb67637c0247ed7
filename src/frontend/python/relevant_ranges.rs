//! Choosing which top-level blocks of a file are worth parsing for the layout lints.
//!
//! Kept: every top-level statement that is not a definition (imports, constants and
//! module-level code feed the analysis of everything else), every `def`/`class` whose text
//! contains a layout-op token of the pre-filter, and, transitively, every definition whose
//! name is mentioned in a kept block. The last rule matters because the analysis follows
//! calls into the file's own functions and instantiations of its own classes: a token-free
//! helper such as `def half(x): return x[:, ::2]` decides the layout that a kept caller's
//! `view` sees. Skipped blocks are definitions nothing kept refers to, so they cannot change
//! any finding in the kept ones.

use std::collections::HashMap;
use std::ops::Range;

use aho_corasick::{AhoCorasick, MatchKind};

use super::prefilter::may_contain_layout_ops;
use super::top_level::{scan_top_level_blocks, BlockKind, TopLevelBlock};

/// The byte ranges of `source` worth parsing, in order and not touching each other, or
/// `None` when the whole file should be parsed: the scanner was unsure of the block
/// boundaries, or every block is kept anyway.
pub(super) fn ranges_worth_parsing(source: &str) -> Option<Vec<Range<usize>>> {
    let blocks = scan_top_level_blocks(source)?;
    let mut kept: Vec<bool> = blocks
        .iter()
        .map(|block| {
            !matches!(block.kind, BlockKind::Definition { .. })
                || may_contain_layout_ops(&source[block.range.clone()])
        })
        .collect();
    if kept.iter().all(|&k| k) {
        return None;
    }
    keep_referenced_definitions(source, &blocks, &mut kept)?;
    if kept.iter().all(|&k| k) {
        return None;
    }
    Some(merge_kept_ranges(&blocks, &kept))
}

/// Marks as kept every skipped definition whose name occurs as a whole word in a kept block,
/// until nothing changes. Each block's text is searched at most once. `None` only if the
/// name automaton cannot be built.
fn keep_referenced_definitions(
    source: &str,
    blocks: &[TopLevelBlock],
    kept: &mut [bool],
) -> Option<()> {
    // Skipped definitions by name (a name may be defined twice, e.g. under `if`/`else`).
    let mut skipped_by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, block) in blocks.iter().enumerate() {
        if let (false, BlockKind::Definition { name }) = (kept[index], &block.kind) {
            skipped_by_name
                .entry(&source[name.clone()])
                .or_default()
                .push(index);
        }
    }
    let names: Vec<&str> = skipped_by_name.keys().copied().collect();
    // Overlapping matches: `Block` must still be found inside `Block(` when `BlockConfig`
    // is also a name.
    let automaton = AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .build(&names)
        .ok()?;
    let bytes = source.as_bytes();
    let mut to_search: Vec<usize> = (0..blocks.len()).filter(|&i| kept[i]).collect();
    while let Some(index) = to_search.pop() {
        let range = blocks[index].range.clone();
        for found in automaton.find_overlapping_iter(&bytes[range.clone()]) {
            let (start, end) = (range.start + found.start(), range.start + found.end());
            if !is_whole_word(bytes, start, end) {
                continue;
            }
            for &defined in &skipped_by_name[names[found.pattern().as_usize()]] {
                if !kept[defined] {
                    kept[defined] = true;
                    to_search.push(defined);
                }
            }
        }
    }
    Some(())
}

/// Is `bytes[start..end]` not part of a longer identifier?
fn is_whole_word(bytes: &[u8], start: usize, end: usize) -> bool {
    let is_identifier_byte = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_' || !b.is_ascii();
    let before = start.checked_sub(1).and_then(|at| bytes.get(at));
    !before.is_some_and(is_identifier_byte) && !bytes.get(end).is_some_and(is_identifier_byte)
}

/// The ranges of the kept blocks, with neighbouring kept blocks merged into one range.
fn merge_kept_ranges(blocks: &[TopLevelBlock], kept: &[bool]) -> Vec<Range<usize>> {
    let mut ranges: Vec<Range<usize>> = Vec::new();
    for (block, _) in blocks.iter().zip(kept).filter(|(_, &k)| k) {
        match ranges.last_mut() {
            Some(last) if last.end == block.range.start => last.end = block.range.end,
            _ => ranges.push(block.range.clone()),
        }
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept_text(source: &str) -> Option<String> {
        let ranges = ranges_worth_parsing(source)?;
        Some(ranges.into_iter().map(|r| &source[r]).collect())
    }

    #[test]
    fn definitions_without_layout_tokens_are_skipped() {
        let source = "import torch\ndef loss(a, b):\n    return (a - b).abs()\ndef attend(q):\n    return q.transpose(1, 2)\n";
        assert_eq!(
            kept_text(source).unwrap(),
            "import torch\ndef attend(q):\n    return q.transpose(1, 2)\n"
        );
    }

    #[test]
    fn definitions_named_in_kept_blocks_are_kept_transitively() {
        let source = concat!(
            "def inner(x):\n    return x[:, ::2]\n",
            "def middle(x):\n    return inner(x) + 1\n",
            "def middle_unused(x):\n    return x\n",
            "def top(x):\n    return middle(x).view(-1)\n",
        );
        assert_eq!(
            kept_text(source).unwrap(),
            concat!(
                "def inner(x):\n    return x[:, ::2]\n",
                "def middle(x):\n    return inner(x) + 1\n",
                "def top(x):\n    return middle(x).view(-1)\n",
            )
        );
    }

    #[test]
    fn only_whole_words_count_as_references() {
        let source = "def norm(x):\n    return x\ndef f(x):\n    return normalize(x).view(-1)\n";
        assert_eq!(
            kept_text(source).unwrap(),
            "def f(x):\n    return normalize(x).view(-1)\n"
        );
    }

    #[test]
    fn whole_file_is_parsed_when_everything_is_kept_or_unclear() {
        assert_eq!(kept_text("import torch\ny = x.view(-1)\n"), None);
        assert_eq!(kept_text("def f(x):\n    return x.t()\n"), None);
        assert_eq!(kept_text("x = (\ndef f(): pass\n"), None);
    }
}
