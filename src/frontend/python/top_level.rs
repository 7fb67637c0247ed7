//! A text scanner that splits a Python file into its top-level statements without parsing it,
//! and records where every indented statement starts (to split classes into their methods).
//!
//! Parsing dominates the cost of linting, and most methods of a model file never touch a
//! layout op. Finding where each statement starts lets the caller hand tree-sitter only the
//! pieces that matter (see `relevant_ranges`).
//!
//! A statement starts on a line whose first non-blank byte is not `#`, while the scanner is
//! outside any string, outside any bracket and not after a backslash continuation. At the
//! top level, lines starting with `else`/`elif`/`except`/`finally` continue the previous
//! statement, and decorators belong to the `def`/`class` that follows them.
//!
//! Correctness comes first: whenever the text looks odd (an unterminated string, unbalanced
//! brackets, a quote inside an f-string replacement field that Python 3.12 and earlier
//! versions would read differently, a stray `\r`, ...) the scanner gives up with `None`, and
//! the caller parses the whole file.

use std::ops::Range;

/// A file's outline: its top-level blocks, and the start of every indented statement line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Outline {
    pub blocks: Vec<TopLevelBlock>,
    /// Indented lines that start a statement, in order (blank and comment lines excluded).
    pub indented: Vec<IndentedLine>,
}

/// An indented line that starts a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct IndentedLine {
    /// Byte offset of the line start.
    pub start: usize,
    /// Width of the indentation in bytes (spaces only: a tab gives up the scan).
    pub indent: usize,
}

/// One top-level statement (with its decorators, its `else`/`except` clauses, and the blank
/// and comment lines after it). Blocks are contiguous, start at line starts and together
/// cover the whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TopLevelBlock {
    pub range: Range<usize>,
    pub kind: BlockKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum BlockKind {
    /// A `def`, `async def` or `class` (with its decorators); `name` is the byte range of the
    /// defined name.
    Definition { name: Range<usize>, is_class: bool },
    /// Any other statement: imports, assignments, `if`/`try` blocks, module-level code.
    Statement,
    /// Decorators whose `def`/`class` has not been seen yet; never in the scanner's output.
    Decorators,
}

/// How deeply strings may nest inside f-string replacement fields before the scanner gives
/// up; real code nests one or two levels, and the bound keeps the recursion shallow.
const MAX_STRING_NESTING: u32 = 8;

/// Splits `source` into its top-level blocks, or `None` when the scanner cannot be sure of
/// the boundaries (the caller then parses the whole file).
#[cfg(test)]
pub(super) fn scan_top_level_blocks(source: &str) -> Option<Vec<TopLevelBlock>> {
    scan_outline(source).map(|outline| outline.blocks)
}

/// The outline of `source`, or `None` when the scanner cannot be sure of the boundaries
/// (the caller then parses the whole file).
pub(super) fn scan_outline(source: &str) -> Option<Outline> {
    let bytes = source.as_bytes();
    let mut blocks: Vec<TopLevelBlock> = Vec::new();
    let mut indented: Vec<IndentedLine> = Vec::new();
    let mut current = TopLevelBlock {
        range: 0..0,
        kind: BlockKind::Statement,
    };
    let mut bracket_depth: usize = 0;
    let mut at_line_start = true;
    let mut after_continuation = false;
    let mut i = 0;
    while i < bytes.len() {
        if at_line_start {
            at_line_start = false;
            if bracket_depth == 0 && !after_continuation {
                start_statement_if_any(bytes, i, &mut current, &mut blocks)?;
                note_indented_statement(bytes, i, &mut indented)?;
            }
            after_continuation = false;
        }
        match bytes[i] {
            b'\n' => {
                at_line_start = true;
                i += 1;
            }
            b'\r' => {
                // Only `\r\n` line ends; a lone `\r` is an old Mac line end that we do not model.
                if bytes.get(i + 1) != Some(&b'\n') {
                    return None;
                }
                i += 1;
            }
            b'#' => i = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |at| i + at),
            b'\\' => {
                let line_end = match bytes.get(i + 1..i + 3) {
                    Some([b'\r', b'\n']) => 3,
                    _ if bytes.get(i + 1) == Some(&b'\n') => 2,
                    // A backslash outside a string must end the line.
                    _ => return None,
                };
                i += line_end;
                at_line_start = true;
                after_continuation = true;
            }
            b'(' | b'[' | b'{' => {
                bracket_depth += 1;
                i += 1;
            }
            b')' | b']' | b'}' => {
                bracket_depth = bracket_depth.checked_sub(1)?;
                i += 1;
            }
            b'\'' | b'"' => i = skip_string(bytes, i, 0)?,
            _ => i += 1,
        }
    }
    if bracket_depth != 0 || after_continuation || current.kind == BlockKind::Decorators {
        return None;
    }
    current.range.end = bytes.len();
    if !current.range.is_empty() {
        blocks.push(current);
    }
    Some(Outline { blocks, indented })
}

/// At the start of a line outside strings and brackets: records the line if it is an
/// indented statement. `None` when its indentation holds a tab or form feed, which the
/// byte count would not measure as Python does.
fn note_indented_statement(
    bytes: &[u8],
    line_start: usize,
    indented: &mut Vec<IndentedLine>,
) -> Option<()> {
    let indent = bytes[line_start..]
        .iter()
        .take_while(|&&b| matches!(b, b' ' | b'\t' | b'\x0c'))
        .count();
    let first = bytes.get(line_start + indent);
    if indent == 0 || matches!(first, None | Some(b'#' | b'\n' | b'\r')) {
        return Some(());
    }
    if bytes[line_start..line_start + indent]
        .iter()
        .any(|&b| b != b' ')
    {
        return None;
    }
    indented.push(IndentedLine {
        start: line_start,
        indent,
    });
    Some(())
}

/// At the start of a line outside strings and brackets: if the line starts a new top-level
/// statement, closes `current` and starts the next block. `None` when the line is odd.
fn start_statement_if_any(
    bytes: &[u8],
    line_start: usize,
    current: &mut TopLevelBlock,
    blocks: &mut Vec<TopLevelBlock>,
) -> Option<()> {
    match bytes[line_start] {
        // Indented lines, comments and blank lines belong to the current block.
        b' ' | b'\t' | b'#' | b'\n' | b'\r' => return Some(()),
        // A form feed resets Python's indentation count; too rare to model.
        b'\x0c' => return None,
        _ => {}
    }
    let word = identifier_at(bytes, line_start);
    let kind = match &bytes[word.clone()] {
        b"else" | b"elif" | b"except" | b"finally" => {
            // A clause of the current compound statement, which cannot be a definition.
            return (current.kind == BlockKind::Statement).then_some(());
        }
        _ if bytes[line_start] == b'@' => BlockKind::Decorators,
        // A `def`/`class` keyword without a name is odd: give up.
        _ => match definition_at(bytes, line_start) {
            Some(Some((name, is_class))) => BlockKind::Definition { name, is_class },
            Some(None) => return None,
            None => BlockKind::Statement,
        },
    };
    if current.kind == BlockKind::Decorators {
        match kind {
            // More decorators, or the decorated definition: still the same block.
            BlockKind::Decorators => return Some(()),
            BlockKind::Definition { .. } => {
                current.kind = kind;
                return Some(());
            }
            // Decorators on anything else are a syntax error.
            BlockKind::Statement => return None,
        }
    }
    current.range.end = line_start;
    let finished = std::mem::replace(
        current,
        TopLevelBlock {
            range: line_start..line_start,
            kind,
        },
    );
    if !finished.range.is_empty() {
        blocks.push(finished);
    }
    Some(())
}

/// What the statement starting at `at` defines: `None` when it does not start with `def`,
/// `async def` or `class`; otherwise the defined name and whether it is a class, or
/// `Some(None)` when the keyword has no name after it.
pub(super) fn definition_at(bytes: &[u8], at: usize) -> Option<Option<(Range<usize>, bool)>> {
    let word = identifier_at(bytes, at);
    let (keyword_end, is_class) = match &bytes[word.clone()] {
        b"def" => (word.end, false),
        b"class" => (word.end, true),
        b"async" => {
            let after = skip_blanks(bytes, word.end);
            let next = identifier_at(bytes, after);
            if after == word.end || &bytes[next.clone()] != b"def" {
                return None;
            }
            (next.end, false)
        }
        _ => return None,
    };
    Some(defined_name(bytes, keyword_end).map(|name| (name, is_class)))
}

/// The name after `def`/`class` (which end at `keyword_end`), or `None` if there is none.
fn defined_name(bytes: &[u8], keyword_end: usize) -> Option<Range<usize>> {
    let start = skip_blanks(bytes, keyword_end);
    let name = identifier_at(bytes, start);
    (start > keyword_end && !name.is_empty()).then_some(name)
}

pub(super) fn skip_blanks(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t')) {
        at += 1;
    }
    at
}

/// The identifier starting at `start` (empty if none). Non-ASCII bytes count as identifier
/// bytes, as in the pre-filter, so `café` is one word.
pub(super) fn identifier_at(bytes: &[u8], start: usize) -> Range<usize> {
    let length = bytes[start.min(bytes.len())..]
        .iter()
        .take_while(|&&b| is_identifier_byte(b))
        .count();
    start..start + length
}

pub(super) const fn is_identifier_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || !byte.is_ascii()
}

/// Skips the string literal whose opening quote is at `quote_at`; returns the index just
/// after its closing quote, or `None` if it is unterminated or anything is unclear.
fn skip_string(bytes: &[u8], quote_at: usize, nesting: u32) -> Option<usize> {
    if nesting > MAX_STRING_NESTING {
        return None;
    }
    let formatted = string_prefix_is_formatted(bytes, quote_at)?;
    let quote = bytes[quote_at];
    let triple = bytes.get(quote_at..quote_at + 3) == Some(&[quote; 3]);
    let mut i = quote_at + if triple { 3 } else { 1 };
    loop {
        let byte = *bytes.get(i)?;
        match byte {
            b'\\' => {
                // In f-strings `\{` is read differently by different Python versions.
                if formatted && matches!(bytes.get(i + 1), Some(b'{' | b'}')) {
                    return None;
                }
                // A backslash also keeps a quote from ending a raw string (`r"\""`).
                i += 2;
            }
            b'\n' if !triple => return None,
            _ if byte == quote => {
                if !triple {
                    return Some(i + 1);
                }
                if bytes.get(i..i + 3) == Some(&[quote; 3]) {
                    return Some(i + 3);
                }
                i += 1;
            }
            b'{' if formatted => {
                if bytes.get(i + 1) == Some(&b'{') {
                    i += 2;
                } else {
                    i = skip_replacement_field(bytes, i + 1, quote, triple, nesting)?;
                }
            }
            _ => i += 1,
        }
    }
}

/// Skips an f-string replacement field whose `{` was just before `start`; returns the index
/// after its closing `}`. Gives up on anything Python versions disagree on: the enclosing
/// quote inside the field (legal only from 3.12), backslashes and comments.
fn skip_replacement_field(
    bytes: &[u8],
    start: usize,
    enclosing_quote: u8,
    enclosing_is_triple: bool,
    nesting: u32,
) -> Option<usize> {
    let mut depth: usize = 1;
    let mut i = start;
    loop {
        let byte = *bytes.get(i)?;
        match byte {
            b'{' | b'(' | b'[' => depth += 1,
            b'}' | b')' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return (byte == b'}').then_some(i + 1);
                }
            }
            b'\'' | b'"' if byte == enclosing_quote => return None,
            b'\'' | b'"' => {
                i = skip_string(bytes, i, nesting + 1)?;
                continue;
            }
            b':' if depth == 1 => {
                return skip_format_spec(
                    bytes,
                    i + 1,
                    enclosing_quote,
                    enclosing_is_triple,
                    nesting,
                )
            }
            b'\\' | b'#' => return None,
            b'\n' if !enclosing_is_triple => return None,
            _ => {}
        }
        i += 1;
    }
}

/// Skips the format spec of a replacement field (after its top-level `:`, as in
/// `{x:>{width}}` or `{n:#x}`); returns the index after the field's closing `}`. The spec is
/// literal text except for nested `{...}` fields.
fn skip_format_spec(
    bytes: &[u8],
    start: usize,
    enclosing_quote: u8,
    enclosing_is_triple: bool,
    nesting: u32,
) -> Option<usize> {
    let mut i = start;
    loop {
        match *bytes.get(i)? {
            b'}' => return Some(i + 1),
            b'{' => {
                if nesting >= MAX_STRING_NESTING {
                    return None;
                }
                i = skip_replacement_field(
                    bytes,
                    i + 1,
                    enclosing_quote,
                    enclosing_is_triple,
                    nesting + 1,
                )?;
            }
            byte if byte == enclosing_quote => return None,
            b'\\' => return None,
            b'\n' if !enclosing_is_triple => return None,
            _ => i += 1,
        }
    }
}

/// Whether the string opening at `quote_at` is an f-string (or a 3.14 t-string, which has
/// the same replacement fields), judged from its prefix; `None` if the letters before the
/// quote are not a string prefix at all (`foo"x"`).
fn string_prefix_is_formatted(bytes: &[u8], quote_at: usize) -> Option<bool> {
    let prefix_start = bytes[..quote_at]
        .iter()
        .rposition(|&b| !is_identifier_byte(b))
        .map_or(0, |at| at + 1);
    let prefix = &bytes[prefix_start..quote_at];
    if prefix.len() > 2 {
        return None;
    }
    let mut formatted = false;
    for &letter in prefix {
        match letter.to_ascii_lowercase() {
            b'f' | b't' => formatted = true,
            b'r' | b'b' | b'u' => {}
            _ => return None,
        }
    }
    Some(formatted)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The blocks as (text, is a definition) pairs, for readable assertions.
    fn blocks_of(source: &str) -> Option<Vec<(&str, bool)>> {
        let blocks = scan_top_level_blocks(source)?;
        let mut end = 0;
        for block in &blocks {
            assert_eq!(block.range.start, end, "blocks must be contiguous");
            end = block.range.end;
        }
        assert_eq!(end, source.len(), "blocks must cover the file");
        Some(
            blocks
                .iter()
                .map(|b| {
                    let is_definition = matches!(b.kind, BlockKind::Definition { .. });
                    (&source[b.range.clone()], is_definition)
                })
                .collect(),
        )
    }

    #[test]
    fn splits_statements_and_definitions() {
        let source =
            "import torch\n\nX = 1\ndef f(x):\n    return x\n\n# note\nclass A:\n    pass\n";
        assert_eq!(
            blocks_of(source).unwrap(),
            vec![
                ("import torch\n\n", false),
                ("X = 1\n", false),
                ("def f(x):\n    return x\n\n# note\n", true),
                ("class A:\n    pass\n", true),
            ]
        );
    }

    #[test]
    fn definition_names_are_found() {
        let source = "async  def run():\n    pass\nclass Net(nn.Module):\n    pass\n";
        let names: Vec<&str> = scan_top_level_blocks(source)
            .unwrap()
            .into_iter()
            .filter_map(|b| match b.kind {
                BlockKind::Definition { name, .. } => Some(&source[name]),
                _ => None,
            })
            .collect();
        assert_eq!(names, vec!["run", "Net"]);
    }

    #[test]
    fn decorators_and_clauses_join_their_statement() {
        let source = "@torch.no_grad()\n@cache\ndef f():\n    pass\ntry:\n    import x\nexcept ImportError:\n    x = None\nelse:\n    pass\nfinally:\n    pass\n";
        assert_eq!(
            blocks_of(source).unwrap(),
            vec![
                ("@torch.no_grad()\n@cache\ndef f():\n    pass\n", true),
                (
                    "try:\n    import x\nexcept ImportError:\n    x = None\nelse:\n    pass\nfinally:\n    pass\n",
                    false
                ),
            ]
        );
    }

    #[test]
    fn column_zero_lines_inside_strings_brackets_and_continuations_do_not_split() {
        let source = concat!(
            "DOC = \"\"\"\nclass NotAClass:\n\"\"\"\n",
            "T = (\n1,\n)\n",
            "S = 1 + \\\n2\n",
            "R = r'\\'' + b\"x\" + Rb'''\ndef g(): '''\n",
            "def f():\n    return f\"{x!r:>{width}} {d['k']} {{literal}} {n:#x}\"\n",
        );
        assert_eq!(
            blocks_of(source).unwrap(),
            vec![
                ("DOC = \"\"\"\nclass NotAClass:\n\"\"\"\n", false),
                ("T = (\n1,\n)\n", false),
                ("S = 1 + \\\n2\n", false),
                ("R = r'\\'' + b\"x\" + Rb'''\ndef g(): '''\n", false),
                (
                    "def f():\n    return f\"{x!r:>{width}} {d['k']} {{literal}} {n:#x}\"\n",
                    true
                ),
            ]
        );
    }

    #[test]
    fn crlf_line_ends_are_handled() {
        let source = "x = 1\r\ndef f():\r\n    pass\r\n";
        assert_eq!(
            blocks_of(source).unwrap(),
            vec![("x = 1\r\n", false), ("def f():\r\n    pass\r\n", true)]
        );
    }

    #[test]
    fn nested_f_strings_of_other_quotes_are_followed() {
        let source = "def f():\n    return f\"{f'{x}'}\"\nY = 1\n";
        assert_eq!(
            blocks_of(source).unwrap(),
            vec![
                ("def f():\n    return f\"{f'{x}'}\"\n", true),
                ("Y = 1\n", false)
            ]
        );
    }

    #[test]
    fn gives_up_on_anything_unclear() {
        for source in [
            // Unterminated strings and brackets.
            "x = '\ndef f(): pass\n",
            "x = \"\"\"\ndef f(): pass\n",
            "x = (\ndef f(): pass\n",
            "x = )\n",
            // Python 3.12 lets an f-string field reuse the enclosing quote.
            "x = f\"{d[\"k\"]}\"\ndef f(): pass\n",
            // Backslashes and comments in fields, `\\{` in f-strings.
            "x = f'{a\\\n}'\n",
            "x = f'\\{a}'\n",
            // A continuation at the end of the file; a lone carriage return.
            "x = 1 + \\\n",
            "x = 1\rdef f(): pass\n",
            // Decorators on nothing, clauses after a definition, odd prefixes.
            "@dec\nx = 1\n",
            "@dec\n",
            "def f(): pass\nelse:\n    pass\n",
            "x = foo\"bar\"\n",
            "x = 1 \\ 2\n",
        ] {
            assert_eq!(blocks_of(source), None, "{source:?}");
        }
    }

    #[test]
    fn the_empty_file_has_no_blocks() {
        assert_eq!(blocks_of("").unwrap(), vec![]);
    }
}
