//! Choosing which pieces of a file are worth parsing for the layout lints.
//!
//! A file is cut into pieces by its outline (`top_level`): top-level statements, top-level
//! functions, and each top-level class cut into its header, its methods and its other
//! body statements. What the analysis does decides what it needs:
//!
//! - it reports on calls of the ops in the pre-filter's list, so a function or method whose
//!   text names one of them is an entry point worth analysing;
//! - it follows calls into the file's own functions (`f(x)`) and into methods of the same
//!   class (`self.m(x)`), by name: a kept piece keeps every definition it refers to — a
//!   function by its bare name, a method as `self.m` — (the callee decides the layout the
//!   caller sees), and a definition that refers to a kept one is kept too (the caller's
//!   arguments decide the layout the callee sees). Only these two forms count because only
//!   they are followed: a method name in a docstring ("the forward pass") is not a call;
//! - a method is analysed with what the class's `__init__` stored on `self`, minus what any
//!   other method reassigns: a kept class keeps its constructor, its body statements, and
//!   every method that may assign a `self` attribute;
//! - top-level statements (imports, constants, module-level code) are always kept.
//!
//! Everything else — definitions that neither name a layout op nor are connected to one
//! that does — cannot change a finding, and is not parsed.

use std::ops::Range;

use rustc_hash::FxHashMap;

use super::prefilter::layout_op_positions;
use super::top_level::{
    definition_at, identifier_at, is_identifier_byte, scan_outline, skip_blanks, BlockKind,
    IndentedLine,
};

/// A definition (function or method) that may be skipped.
#[derive(Debug)]
struct Definition {
    range: Range<usize>,
    name: Range<usize>,
    /// The index of its class in `Pieces::classes`, for methods.
    class: Option<usize>,
}

/// What a piece is, which decides when it is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A top-level statement: always kept.
    Statement,
    /// A class header or a class body statement that is not a `def`: kept with its class.
    ClassPart(usize),
    /// A function or method: kept when its definition is.
    Definition(usize),
}

#[derive(Debug)]
struct Piece {
    range: Range<usize>,
    role: Role,
}

/// The file cut into pieces, in source order, covering it entirely.
#[derive(Debug, Default)]
struct Pieces {
    pieces: Vec<Piece>,
    definitions: Vec<Definition>,
    /// For each class, the indices of its methods in `definitions`.
    classes: Vec<Vec<usize>>,
}

impl Pieces {
    fn is_kept(&self, piece: &Piece, kept: &Kept) -> bool {
        match piece.role {
            Role::Statement => true,
            Role::ClassPart(class) => kept.classes[class],
            Role::Definition(definition) => kept.definitions[definition],
        }
    }
}

/// The byte ranges of `source` worth parsing, in order and not touching each other, or
/// `None` when the whole file should be parsed: the scanner was unsure of the boundaries,
/// or every piece is kept anyway.
pub(super) fn ranges_worth_parsing(source: &str) -> Option<Vec<Range<usize>>> {
    let pieces = cut_into_pieces(source)?;
    if pieces.definitions.is_empty() {
        return None;
    }
    let kept = Kept::decide(source, &pieces);
    if pieces.pieces.iter().all(|p| pieces.is_kept(p, &kept)) {
        return None;
    }
    let mut ranges: Vec<Range<usize>> = Vec::new();
    for piece in pieces.pieces.iter().filter(|p| pieces.is_kept(p, &kept)) {
        match ranges.last_mut() {
            Some(last) if last.end == piece.range.start => last.end = piece.range.end,
            _ => ranges.push(piece.range.clone()),
        }
    }
    Some(ranges)
}

/// Cuts `source` into pieces; `None` when the outline is unclear.
fn cut_into_pieces(source: &str) -> Option<Pieces> {
    let outline = scan_outline(source)?;
    let bytes = source.as_bytes();
    let mut pieces = Pieces::default();
    for block in &outline.blocks {
        match &block.kind {
            BlockKind::Definition {
                name,
                is_class: false,
            } => {
                let index = pieces.definitions.len();
                pieces.definitions.push(Definition {
                    range: block.range.clone(),
                    name: name.clone(),
                    class: None,
                });
                pieces.pieces.push(Piece {
                    range: block.range.clone(),
                    role: Role::Definition(index),
                });
            }
            BlockKind::Definition { is_class: true, .. } => {
                let lines = lines_within(&outline.indented, &block.range);
                if !cut_class(bytes, block.range.clone(), lines, &mut pieces) {
                    // A class whose body the scanner cannot cut is kept whole.
                    pieces.pieces.push(Piece {
                        range: block.range.clone(),
                        role: Role::Statement,
                    });
                }
            }
            BlockKind::Statement | BlockKind::Decorators => pieces.pieces.push(Piece {
                range: block.range.clone(),
                role: Role::Statement,
            }),
        }
    }
    Some(pieces)
}

/// The indented statement lines that start inside `range`.
fn lines_within<'a>(lines: &'a [IndentedLine], range: &Range<usize>) -> &'a [IndentedLine] {
    let first = lines.partition_point(|line| line.start < range.start);
    let end = lines.partition_point(|line| line.start < range.end);
    &lines[first..end]
}

/// Cuts a class block into its header (decorators, `class` line, up to the first body
/// statement), its methods (with their decorators) and its other body statements. Returns
/// `false`, adding nothing, when the body is not a plain indented block (a one-line class,
/// a dedent inside it, decorators on nothing).
fn cut_class(
    bytes: &[u8],
    block: Range<usize>,
    lines: &[IndentedLine],
    pieces: &mut Pieces,
) -> bool {
    let Some(body_indent) = lines.first().map(|line| line.indent) else {
        return false;
    };
    if lines.iter().any(|line| line.indent < body_indent) {
        return false;
    }
    let class = pieces.classes.len();
    // Each member: (start, what it is), where a method is `Some(name)`.
    let mut members: Vec<(usize, Option<Range<usize>>)> = Vec::new();
    let mut decorators_start: Option<usize> = None;
    for line in lines.iter().filter(|line| line.indent == body_indent) {
        let at = line.start + line.indent;
        if bytes[at] == b'@' {
            decorators_start.get_or_insert(line.start);
            continue;
        }
        // A method is a `def`; a nested class (decorated or not) is an ordinary body
        // statement. Either starts at its first decorator.
        let method_name = match definition_at(bytes, at) {
            Some(Some((name, false))) => Some(name),
            _ => None,
        };
        let start = decorators_start.take().unwrap_or(line.start);
        members.push((start, method_name));
    }
    if decorators_start.is_some() {
        return false;
    }
    let mut methods = Vec::new();
    pieces.pieces.push(Piece {
        range: block.start..members[0].0,
        role: Role::ClassPart(class),
    });
    for (index, (start, name)) in members.iter().enumerate() {
        let end = members.get(index + 1).map_or(block.end, |next| next.0);
        let role = match name {
            Some(name) => {
                let definition = pieces.definitions.len();
                pieces.definitions.push(Definition {
                    range: *start..end,
                    name: name.clone(),
                    class: Some(class),
                });
                methods.push(definition);
                Role::Definition(definition)
            }
            None => Role::ClassPart(class),
        };
        pieces.pieces.push(Piece {
            range: *start..end,
            role,
        });
    }
    pieces.classes.push(methods);
    true
}

/// Which definitions and classes are kept.
struct Kept {
    definitions: Vec<bool>,
    classes: Vec<bool>,
}

/// What keeping one thing implies, as lists to walk once each.
struct References {
    /// The reference key of each definition (see [`reference_key`]).
    key_of: Vec<usize>,
    /// The keys each piece refers to.
    mentions: Vec<Vec<usize>>,
    /// Definitions by key (callees of a piece that mentions the key).
    definitions_by_key: Vec<Vec<usize>>,
    /// Definitions whose piece mentions each key (callers of a definition with the key).
    mentioned_by: Vec<Vec<usize>>,
    /// The piece of each definition.
    piece_of: Vec<usize>,
    /// The class parts of each class.
    class_parts: Vec<Vec<usize>>,
    /// The key of `__init__` as a method: the analysis never calls a constructor by name
    /// (`super().__init__()` is not followed), so it is no reference.
    constructor: Option<usize>,
}

impl References {
    fn find(source: &str, pieces: &Pieces) -> Self {
        let bytes = source.as_bytes();
        let mut ids: FxHashMap<&[u8], usize> = FxHashMap::default();
        let key_of: Vec<usize> = pieces
            .definitions
            .iter()
            .map(|definition| {
                let name = &bytes[definition.name.clone()];
                let next_id = ids.len();
                let id = *ids.entry(name).or_insert(next_id);
                reference_key(id, definition.class.is_some())
            })
            .collect();
        let constructor = ids
            .get(b"__init__".as_slice())
            .map(|&id| reference_key(id, true));
        let keys = 2 * ids.len();
        let mut references = References {
            key_of,
            mentions: Vec::with_capacity(pieces.pieces.len()),
            definitions_by_key: vec![Vec::new(); keys],
            mentioned_by: vec![Vec::new(); keys],
            piece_of: vec![0; pieces.definitions.len()],
            class_parts: vec![Vec::new(); pieces.classes.len()],
            constructor,
        };
        for (definition, &key) in references.key_of.iter().enumerate() {
            references.definitions_by_key[key].push(definition);
        }
        // Most identifiers are no definition's name: rule them out by length and first byte
        // before hashing them.
        let (shortest, longest) = ids.keys().fold((usize::MAX, 0), |(lo, hi), name| {
            (lo.min(name.len()), hi.max(name.len()))
        });
        let mut starts_a_name = [false; 256];
        for name in ids.keys() {
            starts_a_name[usize::from(name[0])] = true;
        }
        for (index, piece) in pieces.pieces.iter().enumerate() {
            let range = piece.range.clone();
            let mut found: Vec<usize> = identifiers(bytes, range)
                .filter(|word| {
                    (shortest..=longest).contains(&word.len())
                        && starts_a_name[usize::from(bytes[word.start])]
                })
                .filter_map(|word| {
                    let id = *ids.get(&bytes[word.clone()])?;
                    reference_at(bytes, word.start, id)
                })
                .filter(|&key| Some(key) != constructor)
                .collect();
            found.sort_unstable();
            found.dedup();
            match piece.role {
                Role::Definition(definition) => {
                    references.piece_of[definition] = index;
                    for &key in &found {
                        references.mentioned_by[key].push(definition);
                    }
                }
                Role::ClassPart(class) => references.class_parts[class].push(index),
                Role::Statement => {}
            }
            references.mentions.push(found);
        }
        references
    }
}

/// [`is_identifier_byte`] as a table, for the scan over every byte of a file.
const IDENTIFIER_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = is_identifier_byte(byte as u8);
        byte += 1;
    }
    table
};

/// The identifiers in `bytes[range]` (maximal runs of identifier bytes not starting with a
/// digit), comments and strings included.
fn identifiers(bytes: &[u8], range: Range<usize>) -> impl Iterator<Item = Range<usize>> + '_ {
    let end = range.end;
    let mut at = range.start;
    std::iter::from_fn(move || {
        while at < end {
            if !IDENTIFIER_BYTE[usize::from(bytes[at])] {
                at += 1;
                continue;
            }
            let start = at;
            while at < end && IDENTIFIER_BYTE[usize::from(bytes[at])] {
                at += 1;
            }
            if !bytes[start].is_ascii_digit() {
                return Some(start..at);
            }
        }
        None
    })
}

impl Kept {
    /// Walks the references from the definitions that name a layout op and from the
    /// top-level statements, keeping everything reached. Each definition, class and key is
    /// expanded once, so the walk is linear in the file's references.
    fn decide(source: &str, pieces: &Pieces) -> Self {
        let references = References::find(source, pieces);
        let definitions = &pieces.definitions;
        let mut kept = Kept {
            definitions: vec![false; definitions.len()],
            classes: vec![false; pieces.classes.len()],
        };
        let mut callers_expanded = vec![false; references.mentioned_by.len()];
        let mut callees_expanded = vec![false; references.definitions_by_key.len()];
        let mut pending: Vec<usize> = Vec::new();
        let keep = |definition: usize, kept: &mut Kept, pending: &mut Vec<usize>| {
            if !kept.definitions[definition] {
                kept.definitions[definition] = true;
                pending.push(definition);
            }
        };
        // Callees of the pieces that are kept whatever happens.
        let mut keep_callees_of = |piece: usize, kept: &mut Kept, pending: &mut Vec<usize>| {
            for &key in &references.mentions[piece] {
                if !std::mem::replace(&mut callees_expanded[key], true) {
                    for &callee in &references.definitions_by_key[key] {
                        keep(callee, kept, pending);
                    }
                }
            }
        };
        for (index, piece) in pieces.pieces.iter().enumerate() {
            if piece.role == Role::Statement {
                keep_callees_of(index, &mut kept, &mut pending);
            }
        }
        // Definitions that name a layout op, from one scan of the whole file.
        let positions = layout_op_positions(source);
        for (index, definition) in definitions.iter().enumerate() {
            let names_an_op = positions.as_ref().is_none_or(|starts| {
                let first = starts.partition_point(|&at| at < definition.range.start);
                starts
                    .get(first)
                    .is_some_and(|&at| at < definition.range.end)
            });
            if names_an_op {
                keep(index, &mut kept, &mut pending);
            }
        }
        while let Some(definition) = pending.pop() {
            keep_callees_of(references.piece_of[definition], &mut kept, &mut pending);
            let key = references.key_of[definition];
            if Some(key) != references.constructor
                && !std::mem::replace(&mut callers_expanded[key], true)
            {
                for &caller in &references.mentioned_by[key] {
                    keep(caller, &mut kept, &mut pending);
                }
            }
            let Some(class) = definitions[definition].class else {
                continue;
            };
            if std::mem::replace(&mut kept.classes[class], true) {
                continue;
            }
            // A newly kept class: its body statements, its constructor, and every method
            // that may reassign what the constructor stored.
            for &part in &references.class_parts[class] {
                keep_callees_of(part, &mut kept, &mut pending);
            }
            for &method in &pieces.classes[class] {
                let is_constructor = Some(references.key_of[method]) == references.constructor;
                if is_constructor || may_assign_self(&source[definitions[method].range.clone()]) {
                    keep(method, &mut kept, &mut pending);
                }
            }
        }
        kept
    }
}

/// Whether a method's text may assign an attribute of `self`: `self.x = …`, `self.x += …`,
/// `self.x: T = …`, a tuple target starting with `self.x,`, or `register_buffer`. A
/// superset of what the analysis counts as a reassignment; only ever keeps more.
fn may_assign_self(text: &str) -> bool {
    if text.contains("register_buffer") {
        return true;
    }
    let bytes = text.as_bytes();
    memchr::memmem::find_iter(bytes, b"self.").any(|at| {
        if at > 0 && is_identifier_byte(bytes[at - 1]) {
            return false;
        }
        let name_end = identifier_at(bytes, at + 5).end;
        let after = skip_blanks(bytes, name_end);
        let rest = &bytes[after.min(bytes.len())..];
        match rest {
            [b'=', next, ..] => *next != b'=',
            [b':', next, ..] => *next != b'=',
            [op, b'=', ..] => b"+-*/%@&|^".contains(op),
            [b'/' | b'*' | b'>' | b'<', _, b'=', ..] => true,
            [b',', ..] => line_starts_with_target(bytes, at),
            _ => false,
        }
    })
}

/// Whether only indentation and opening brackets precede `at` on its line (`self.a, b = …`,
/// `(self.a, b) = …`).
fn line_starts_with_target(bytes: &[u8], at: usize) -> bool {
    bytes[..at]
        .iter()
        .rev()
        .take_while(|&&b| b != b'\n')
        .all(|&b| matches!(b, b' ' | b'\t' | b'(' | b'['))
}

/// The key under which name `id` is referred to: bare (functions) or as `self.name`.
fn reference_key(id: usize, as_method: bool) -> usize {
    2 * id + usize::from(as_method)
}

/// The reference made by the whole identifier `id` found at `start`: a method reference
/// after `self.`, a bare reference when no `.` precedes it, none when it is an attribute of
/// something else.
fn reference_at(bytes: &[u8], start: usize, id: usize) -> Option<usize> {
    match start.checked_sub(1).map(|at| bytes[at]) {
        Some(b'.') => {
            let receiver = &bytes[..start - 1];
            let is_self = receiver.ends_with(b"self")
                && !receiver
                    .len()
                    .checked_sub(5)
                    .is_some_and(|at| is_identifier_byte(receiver[at]));
            is_self.then(|| reference_key(id, true))
        }
        _ => Some(reference_key(id, false)),
    }
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
    fn callees_are_kept_transitively() {
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
    fn callers_are_kept_transitively() {
        // `merge` fails only for the layout `forward` gives it; `forward` names no op.
        let source = concat!(
            "class Block(nn.Module):\n",
            "    def __init__(self, d):\n        super().__init__()\n        self.d = d\n\n",
            "    def forward(self, x):\n        return self.merge(x[:, :, 1:])\n\n",
            "    def extra_repr(self):\n        return f'd={self.d}'\n\n",
            "    def merge(self, x):\n        return x.view(-1)\n",
            "def unrelated(y):\n    return y + 1\n",
        );
        assert_eq!(
            kept_text(source).unwrap(),
            concat!(
                "class Block(nn.Module):\n",
                "    def __init__(self, d):\n        super().__init__()\n        self.d = d\n\n",
                "    def forward(self, x):\n        return self.merge(x[:, :, 1:])\n\n",
                "    def merge(self, x):\n        return x.view(-1)\n",
            )
        );
    }

    #[test]
    fn classes_without_kept_methods_are_skipped_whole() {
        let source = concat!(
            "import torch\n",
            "class Config:\n    \"\"\"Doc.\"\"\"\n    size = 3\n    def __init__(self):\n        self.size = 4\n",
            "def f(x):\n    return x.reshape(-1)\n",
        );
        assert_eq!(
            kept_text(source).unwrap(),
            "import torch\ndef f(x):\n    return x.reshape(-1)\n"
        );
    }

    #[test]
    fn methods_that_may_assign_self_stay_with_their_class() {
        let source = concat!(
            "class A:\n    scale = 2\n",
            "    def __init__(self):\n        self.h = 4\n",
            "    def set_heads(self, h):\n        self.h = h\n",
            "    def pair(self, h):\n        self.h, self.w = h, h\n",
            "    def bump(self):\n        self.h += 1\n",
            "    def reads(self):\n        return self.h == 4\n",
            "    @torch.no_grad()\n    def forward(self, x):\n        return x.view(self.h, -1)\n",
        );
        let kept = kept_text(source).unwrap();
        for part in [
            "scale = 2",
            "def __init__",
            "set_heads",
            "def pair",
            "def bump",
        ] {
            assert!(kept.contains(part), "{part} missing from {kept}");
        }
        assert!(kept.contains("    @torch.no_grad()\n    def forward"));
        assert!(!kept.contains("def reads"), "{kept}");
    }

    #[test]
    fn self_assignment_detection() {
        for text in [
            "self.x = 1",
            "self.x: int = 1",
            "self.x //= 2",
            "self.x **= 2",
            "self.x |= m",
            "    self.a, b = t",
            "    (self.a, b) = t",
            "self.register_buffer('x', t)",
        ] {
            assert!(may_assign_self(text), "{text}");
        }
        for text in [
            "y = self.x == 1",
            "f(a, self.x, b)",
            "self.x(3)",
            "self.x.y = 2",
            "myself.x = 1",
        ] {
            assert!(!may_assign_self(text), "{text}");
        }
    }

    #[test]
    fn only_calls_the_analysis_follows_count_as_references() {
        // A docstring naming `forward`, an attribute of another object named like a
        // module function: neither keeps anything.
        let source = concat!(
            "def helper(x):\n    return x[:, ::2]\n",
            "class A:\n    def forward(self, x):\n        return x + 1\n",
            "class B:\n    def run(self, x):\n        \"\"\"Like forward.\"\"\"\n",
            "        return other.helper(x).view(-1)\n",
        );
        assert_eq!(
            kept_text(source).unwrap(),
            concat!(
                "class B:\n    def run(self, x):\n        \"\"\"Like forward.\"\"\"\n",
                "        return other.helper(x).view(-1)\n",
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

    /// Each definition, class and name is expanded once: a chain of 20 000 calls is walked
    /// in linear time (~20 ms here; a fixed-point loop over all definitions, or an
    /// Aho-Corasick automaton over 20 000 names, takes seconds).
    #[test]
    fn long_call_chains_are_walked_in_linear_time() {
        let count = 20_000;
        let mut source = String::new();
        for i in 0..count {
            source += &format!("def f{i}(x):\n    return f{}(x)\n", i + 1);
        }
        source +=
            &format!("def f{count}(x):\n    return x.view(-1)\ndef unrelated(x):\n    return x\n");
        let started = std::time::Instant::now();
        let kept = kept_text(&source).unwrap();
        let elapsed = started.elapsed();
        assert!(elapsed < std::time::Duration::from_secs(5), "{elapsed:?}");
        assert!(kept.starts_with("def f0(x):\n") && !kept.contains("unrelated"));
    }

    #[test]
    fn whole_file_is_parsed_when_everything_is_kept_or_unclear() {
        assert_eq!(kept_text("import torch\ny = x.view(-1)\n"), None);
        assert_eq!(kept_text("def f(x):\n    return x.view(-1)\n"), None);
        assert_eq!(kept_text("x = (\ndef f(): pass\n"), None);
        // A tab in the indentation: the byte count is not Python's column.
        assert_eq!(
            kept_text("class A:\n\tdef f(self):\n\t\treturn 1\ndef g(x):\n    return x.view(-1)\n"),
            None
        );
    }
}
