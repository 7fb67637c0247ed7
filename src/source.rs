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
    /// For a Jupyter notebook: the notebook, whose code cells `text` joins. Locations are
    /// then reported per cell ([`SourceFile::cell_relative`]) and fixes written back into
    /// the notebook JSON.
    pub notebook: Option<crate::notebook::Notebook>,
}

impl SourceFile {
    pub fn new(path: impl Into<PathBuf>, text: String) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        SourceFile {
            path: path.into(),
            text,
            line_starts,
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
        let col = self.text[self.line_starts[line]..offset].chars().count();
        Location {
            row: line + 1,
            column: col + 1,
        }
    }

    pub fn span_locations(&self, span: Span) -> (Location, Location) {
        (
            self.location(span.start as usize),
            self.location(span.end as usize),
        )
    }
}

/// A suppression comment found on one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suppression {
    /// Blanket `# noqa` without codes.
    pub all: bool,
    pub codes: Vec<String>,
}

impl Suppression {
    pub fn covers(&self, code: &str) -> bool {
        self.all || self.codes.iter().any(|c| c.eq_ignore_ascii_case(code))
    }
}

/// Parse the suppression comment of one line, if any:
/// `# noqa`, `# noqa: SL001, SL002`, `# stridelint: ignore[SL001]`, `// stridelint: ignore[SL005, SL006]`.
pub fn parse_suppression(line: &str) -> Option<Suppression> {
    let bytes = line.as_bytes();
    // Quick reject: most lines carry no comment marker at all.
    memchr::memchr2(b'#', b'/', bytes)?;
    if let Some(pos) = find_ascii_ci(line, "stridelint: ignore[") {
        let rest = &line[pos + "stridelint: ignore[".len()..];
        let end = rest.find(']')?;
        let codes = split_codes(&rest[..end]);
        return Some(Suppression {
            all: codes.is_empty(),
            codes,
        });
    }
    let pos = find_ascii_ci(line, "# noqa")?;
    let rest = &line[pos + "# noqa".len()..];
    let rest_trim = rest.trim_start();
    if let Some(list) = rest_trim.strip_prefix(':') {
        let codes: Vec<String> = list
            .split(|c: char| c == ',' || c.is_whitespace())
            .map(str::trim)
            .filter(|c| {
                !c.is_empty()
                    && c.chars().next().is_some_and(|ch| ch.is_ascii_alphabetic())
                    && c.chars().all(|ch| ch.is_ascii_alphanumeric())
            })
            .map(str::to_string)
            .collect();
        return Some(Suppression {
            all: codes.is_empty(),
            codes,
        });
    }
    Some(Suppression {
        all: true,
        codes: Vec::new(),
    })
}

fn split_codes(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect()
}

fn find_ascii_ci(hay: &str, needle: &str) -> Option<usize> {
    let h = hay.as_bytes();
    let n = needle.as_bytes();
    if n.len() > h.len() {
        return None;
    }
    (0..=h.len() - n.len()).find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
}

impl SourceFile {
    /// File-level opt-out: a line `# stridelint: noqa` (or `// stridelint: noqa`) anywhere.
    pub fn is_file_exempt(&self) -> bool {
        self.text.lines().any(|l| {
            let t = l.trim();
            (t.starts_with('#') || t.starts_with("//"))
                && find_ascii_ci(t, "stridelint: noqa").is_some()
        })
    }

    /// Is `code` suppressed for a finding at `span`? A comment on any line of the span counts;
    /// in Rust files a comment on the line above counts too (syn drops comments, so they are
    /// read from the text).
    pub fn suppression_for(&self, code: &str, span: Span) -> Option<usize> {
        let first = self.line_index(span.start as usize);
        let last = self.line_index((span.end as usize).max(span.start as usize));
        let is_rust = self.path.extension().is_some_and(|e| e == "rs");
        let from = if is_rust && first > 0 {
            first - 1
        } else {
            first
        };
        (from..=last).find(|&line| {
            let text = &self.text[self.line_range(line)];
            if line < first && !text.trim_start().starts_with("//") {
                return false;
            }
            parse_suppression(text).is_some_and(|s| s.covers(code))
        })
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
    fn suppression_forms() {
        assert_eq!(
            parse_suppression("x = 1  # noqa"),
            Some(Suppression {
                all: true,
                codes: vec![]
            })
        );
        let s = parse_suppression("y = x.view(2)  # noqa: SL001, SL003").unwrap();
        assert!(s.covers("SL001") && s.covers("SL003") && !s.covers("SL002"));
        let s = parse_suppression("y = x.view(2)  # stridelint: ignore[SL001]").unwrap();
        assert!(s.covers("SL001") && !s.covers("SL002"));
        let s = parse_suppression("let y = x.matmul(&w)?; // stridelint: ignore[SL005, SL006]")
            .unwrap();
        assert!(s.covers("SL005") && s.covers("SL006"));
        assert_eq!(parse_suppression("z = 3  # a normal comment"), None);
        assert_eq!(parse_suppression("z = 3"), None);
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
