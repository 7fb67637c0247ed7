//! Source files: text, path, a line index for byte → (row, column) conversion, and the
//! suppression comments of the file (read by [`crate::suppression`]).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::ir::Span;
use crate::suppression::Suppressions;

/// A 1-based row and 1-based column (counted in Unicode scalar values, as Ruff does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Location {
    pub row: usize,
    pub column: usize,
}

#[derive(Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
    /// Byte offset of the start of every line.
    line_starts: Vec<usize>,
    /// Characters before every [`CHAR_CHECKPOINT`]-th byte, built on the first column asked
    /// for far into a long line (so a 10 MB one-line file does not cost a count per finding).
    char_checkpoints: OnceLock<Vec<u32>>,
    /// The suppression comment of every line that has one, sorted by line, parsed on the
    /// first question (one pass over the text instead of one per finding).
    suppressions: OnceLock<Suppressions>,
    /// For a Jupyter notebook: the notebook, whose code cells `text` joins. Locations are
    /// then reported per cell ([`SourceFile::cell_relative`]) and fixes written back into
    /// the notebook JSON.
    pub notebook: Option<crate::notebook::Notebook>,
}

impl SourceFile {
    /// A file's text. Lines end at `\n`, `\r\n` and, except in Rust files, a lone `\r`
    /// (Python reads source with universal newlines; rustc counts only `\n`).
    pub fn new(path: impl Into<PathBuf>, text: String) -> Self {
        let path = path.into();
        let lone_cr_ends_lines = path.extension().is_none_or(|e| e != "rs");
        let line_starts = line_starts(&text, lone_cr_ends_lines);
        SourceFile {
            path,
            text,
            line_starts,
            char_checkpoints: OnceLock::new(),
            suppressions: OnceLock::new(),
            notebook: None,
        }
    }

    /// A notebook's source file: `python` is the joined code of its cells (see
    /// [`crate::notebook::Notebook::parse`]).
    pub fn from_notebook(
        path: impl Into<PathBuf>,
        notebook: crate::notebook::Notebook,
        python: String,
    ) -> Self {
        SourceFile {
            notebook: Some(notebook),
            ..SourceFile::new(path, python)
        }
    }

    /// A location as the user counts it: in a notebook, the 1-based cell number and the
    /// location within that cell; elsewhere `(None, location)` unchanged.
    pub fn cell_relative(&self, location: Location) -> (Option<usize>, Location) {
        match self
            .notebook
            .as_ref()
            .and_then(|nb| nb.cell_row(location.row - 1))
        {
            Some((cell, row)) => (
                Some(cell),
                Location {
                    row,
                    column: location.column,
                },
            ),
            None => (None, location),
        }
    }

    /// [`Self::span_locations`] as the user counts them: within the cell in a notebook.
    pub fn cell_span_locations(&self, span: Span) -> (Location, Location) {
        let (start, end) = self.span_locations(span);
        (self.cell_relative(start).1, self.cell_relative(end).1)
    }

    /// The 1-based notebook cell holding byte `offset` (`None` outside notebooks).
    pub fn cell_at(&self, offset: usize) -> Option<usize> {
        self.notebook.as_ref()?;
        self.cell_relative(self.location(offset)).0
    }

    /// How reporters name a location: `row:column`, or `cell 3:row:column` in a notebook
    /// (Ruff's notation, so that the same problem matchers work).
    pub fn display_location(&self, location: Location) -> String {
        match self.cell_relative(location) {
            (Some(cell), l) => format!("cell {cell}:{}:{}", l.row, l.column),
            (None, l) => format!("{}:{}", l.row, l.column),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// 0-based line index containing byte `offset`.
    pub fn line_index(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    /// Byte range of 0-based line `line` without its terminator.
    pub fn line_range(&self, line: usize) -> std::ops::Range<usize> {
        let start = self.line_starts[line];
        let mut end = self
            .line_starts
            .get(line + 1)
            .copied()
            .unwrap_or(self.text.len());
        let bytes = self.text.as_bytes();
        while end > start && (bytes[end - 1] == b'\n' || bytes[end - 1] == b'\r') {
            end -= 1;
        }
        start..end
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// 1-based row/column of a byte offset (clamped to the text, snapped to a char boundary).
    pub fn location(&self, offset: usize) -> Location {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_index(offset);
        let col = self.chars_between(self.line_starts[line], offset);
        Location {
            row: line + 1,
            column: col + 1,
        }
    }

    /// Characters in `text[start..end]` (both char boundaries): counted directly over short
    /// distances, through the checkpoints over long ones, so each call is O(checkpoint).
    fn chars_between(&self, start: usize, end: usize) -> usize {
        if end - start <= 4 * CHAR_CHECKPOINT {
            return self.text[start..end].chars().count();
        }
        self.chars_before(end) - self.chars_before(start)
    }

    /// Characters that start before byte `offset` (any offset: a char counts where its
    /// first byte is).
    fn chars_before(&self, offset: usize) -> usize {
        let bytes = self.text.as_bytes();
        let checkpoints = self.char_checkpoints.get_or_init(|| {
            let mut total = 0u32;
            let mut counts = Vec::with_capacity(bytes.len() / CHAR_CHECKPOINT + 1);
            for chunk in bytes.chunks(CHAR_CHECKPOINT) {
                counts.push(total);
                total += count_char_starts(chunk) as u32;
            }
            counts.push(total);
            counts
        });
        let block = offset / CHAR_CHECKPOINT;
        checkpoints[block] as usize + count_char_starts(&bytes[block * CHAR_CHECKPOINT..offset])
    }

    pub fn span_locations(&self, span: Span) -> (Location, Location) {
        (
            self.location(span.start as usize),
            self.location(span.end as usize),
        )
    }
}

/// Bytes between two character-count checkpoints of a long line.
const CHAR_CHECKPOINT: usize = 1024;

/// UTF-8 characters starting in `bytes` (bytes that are not continuation bytes).
fn count_char_starts(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b as i8) >= -0x40).count()
}

/// Byte offsets of the line starts of `text`: after every `\n`, and with
/// `lone_cr_ends_lines` after every `\r` not followed by `\n`.
fn line_starts(text: &str, lone_cr_ends_lines: bool) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut starts = vec![0];
    if lone_cr_ends_lines {
        starts.extend(
            memchr::memchr2_iter(b'\n', b'\r', bytes)
                .filter(|&i| bytes[i] == b'\n' || bytes.get(i + 1) != Some(&b'\n'))
                .map(|i| i + 1),
        );
    } else {
        starts.extend(memchr::memchr_iter(b'\n', bytes).map(|i| i + 1));
    }
    starts
}

/// Python source as tree-sitter-python must see it: every lone `\r` (old Mac line end)
/// made a `\n`. Python reads source with universal newlines, but tree-sitter-python's
/// scanner only ends lines at `\n` (a lone `\r` merely resets the indentation), so a
/// CR-only file would be one line to it. The replacement keeps every byte offset.
pub fn python_newlines(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let lone = |i: usize| bytes.get(i + 1) != Some(&b'\n');
    if !memchr::memchr_iter(b'\r', bytes).any(lone) {
        return Cow::Borrowed(text);
    }
    let mut out = bytes.to_vec();
    for i in memchr::memchr_iter(b'\r', bytes).filter(|&i| lone(i)) {
        out[i] = b'\n';
    }
    // Only an ASCII byte was replaced by another.
    Cow::Owned(String::from_utf8(out).expect("still UTF-8"))
}

/// A file's language, by extension: `.rs` is Rust (candle, tch-rs), the rest Python.
pub fn language_of(path: &std::path::Path) -> crate::ir::Language {
    match path.extension().is_some_and(|e| e == "rs") {
        true => crate::ir::Language::Rust,
        false => crate::ir::Language::Python,
    }
}

impl SourceFile {
    /// The file's language, by extension (see [`language_of`]).
    pub fn language(&self) -> crate::ir::Language {
        language_of(&self.path)
    }

    /// The suppression comments of the file (see [`crate::suppression`]), read on the
    /// first question.
    pub fn suppressions(&self) -> &Suppressions {
        self.suppressions.get_or_init(|| {
            Suppressions::new(&self.text, self.language(), |offset| {
                self.line_index(offset)
            })
        })
    }

    /// File-level opt-out: a comment `# stridelint: noqa` (`// stridelint: noqa`) alone on
    /// its line, anywhere.
    pub fn is_file_exempt(&self) -> bool {
        self.suppressions().file_exempt
    }

    /// Is `code` suppressed for a finding at `span`? Returns the line of the directive that
    /// suppresses it: a comment on any line of the span, or in Rust files a comment alone
    /// on the line above.
    pub fn suppression_for(&self, code: &str, span: Span) -> Option<usize> {
        let first = self.line_index(span.start as usize);
        let last = self.line_index((span.end as usize).max(span.start as usize));
        let rust = self.language() == crate::ir::Language::Rust;
        self.suppressions().covering(code, first, last, rust)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_are_one_based_and_count_chars() {
        let f = SourceFile::new("a.py", "ab\nçd = 1\n".to_string());
        assert_eq!(f.location(0), Location { row: 1, column: 1 });
        assert_eq!(f.location(3), Location { row: 2, column: 1 });
        // 'ç' is two bytes but one column.
        assert_eq!(f.location(5), Location { row: 2, column: 2 });
    }

    #[test]
    fn a_lone_carriage_return_ends_a_python_line_but_not_a_rust_one() {
        let text = "a = 1\rb = 2\r\nc = 3\nd\r".to_string();
        let f = SourceFile::new("m.py", text.clone());
        assert_eq!(f.line_count(), 5);
        assert_eq!(f.location(6), Location { row: 2, column: 1 });
        assert_eq!(&f.text[f.line_range(1)], "b = 2");
        assert_eq!(f.location(13), Location { row: 3, column: 1 });
        let rust = SourceFile::new("m.rs", text.clone());
        assert_eq!(rust.line_count(), 3);
        assert_eq!(python_newlines(&text), "a = 1\nb = 2\r\nc = 3\nd\n");
        assert!(matches!(python_newlines("a\r\nb\n"), Cow::Borrowed(_)));
        // A `# noqa` after a lone `\r` is on its own line.
        let f = SourceFile::new("m.py", "x = 1\ry = 2  # noqa: SL001\r".to_string());
        assert!(f.suppression_for("SL001", Span::new(6, 7)).is_some());
        assert!(f.suppression_for("SL001", Span::new(0, 1)).is_none());
    }

    /// A generated file can be one 10 MB line with a finding every few bytes: each column
    /// and suppression lookup must not rescan the line (it used to, which made such a
    /// file quadratic).
    #[test]
    fn columns_and_suppressions_on_one_long_line_are_cheap_and_exact() {
        let statement = "y = x.view(-1); z = 'é'; ";
        let line = statement.repeat(80_000);
        let f = SourceFile::new("m.py", format!("{line}# noqa: SL002\n"));
        let start = std::time::Instant::now();
        for k in (0..80_000).step_by(4) {
            let offset = k * statement.len() + 4;
            let expected = k * statement.chars().count() + 5;
            assert_eq!(
                f.location(offset),
                Location {
                    row: 1,
                    column: expected
                }
            );
            assert!(f
                .suppression_for("SL002", Span::new(offset, offset + 1))
                .is_some());
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(3),
            "{:?}",
            start.elapsed()
        );
        // Offsets inside a character and at the very end snap and count as before.
        let naive = |offset: usize| f.text[..offset].chars().count() + 1;
        let end = f.line_range(0).end;
        for offset in [0, 1, 4095, 4096, 4097, end - 1, end] {
            let mut at = offset;
            while !f.text.is_char_boundary(at) {
                at -= 1;
            }
            assert_eq!(f.location(offset).column, naive(at), "{offset}");
        }
    }

    #[test]
    fn rust_comment_on_previous_line_suppresses() {
        let text = "fn f() {\n    // stridelint: ignore[SL005]\n    let y = a.matmul(&b)?;\n}\n"
            .to_string();
        let f = SourceFile::new("m.rs", text.clone());
        let start = text.find("a.matmul").unwrap();
        let span = Span::new(start, start + 11);
        assert!(f.suppression_for("SL005", span).is_some());
        assert!(f.suppression_for("SL006", span).is_none());
    }
}
