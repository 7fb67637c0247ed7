//! Source files: text, path, a line index for byte → (row, column) conversion, and the
//! suppression comments (`# noqa: SL001`, `# stridelint: ignore[SL001]`,
//! `// stridelint: ignore[SL005]`) found on each line.

use std::path::{Path, PathBuf};

use crate::ir::Span;

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
}

impl SourceFile {
    pub fn new(path: impl Into<PathBuf>, text: String) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        SourceFile { path: path.into(), text, line_starts }
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
        let mut end = self.line_starts.get(line + 1).copied().unwrap_or(self.text.len());
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
        let col = self.text[self.line_starts[line]..offset].chars().count();
        Location { row: line + 1, column: col + 1 }
    }

    pub fn span_locations(&self, span: Span) -> (Location, Location) {
        (self.location(span.start as usize), self.location(span.end as usize))
    }
}
