//! Byte offsets (what the analysis speaks) and LSP positions (line, character), which the
//! client counts in UTF-16 code units unless both sides agreed on UTF-8 at initialize.

use lsp_types::{Position, Range};

/// How a position's `character` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

/// The start offset of every line of one text.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
    encoding: Encoding,
}

impl LineIndex {
    pub fn new(text: &str, encoding: Encoding) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineIndex { starts, encoding }
    }

    /// The position of byte `offset` of `text` (clamped to the text, and back to a
    /// character boundary).
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let before = &text[self.starts[line]..offset];
        let character = match self.encoding {
            Encoding::Utf8 => before.len(),
            Encoding::Utf16 => before.encode_utf16().count(),
        };
        Position::new(line as u32, character as u32)
    }

    pub fn range(&self, text: &str, start: usize, end: usize) -> Range {
        Range::new(self.position(text, start), self.position(text, end))
    }

    /// The byte offset of `position` in `text`: a character past the line's end is its
    /// end (before the newline), a line past the text the text's end, as LSP asks.
    pub fn offset(&self, text: &str, position: Position) -> usize {
        let Some(&start) = self.starts.get(position.line as usize) else {
            return text.len();
        };
        let end = self
            .starts
            .get(position.line as usize + 1)
            .map_or(text.len(), |&next| next - 1);
        let line = &text[start..end];
        let line = line.strip_suffix('\r').unwrap_or(line);
        let wanted = position.character as usize;
        let mut counted = 0;
        for (i, c) in line.char_indices() {
            if counted >= wanted {
                return start + i;
            }
            counted += match self.encoding {
                Encoding::Utf8 => c.len_utf8(),
                Encoding::Utf16 => c.len_utf16(),
            };
        }
        start + line.len()
    }
}

/// Apply one `didChange` edit (a range and its new text, or the whole text when no range).
pub fn apply_change(text: &mut String, range: Option<Range>, new_text: &str, encoding: Encoding) {
    let Some(range) = range else {
        *text = new_text.to_string();
        return;
    };
    let index = LineIndex::new(text, encoding);
    let start = index.offset(text, range.start);
    let end = index.offset(text, range.end).max(start);
    text.replace_range(start..end, new_text);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_positions_count_surrogate_pairs_twice() {
        let text = "a = '😀'\nb = x.view(-1)\n";
        let index = LineIndex::new(text, Encoding::Utf16);
        let quote = text.find("'\n").unwrap();
        assert_eq!(index.position(text, quote), Position::new(0, 7));
        assert_eq!(index.offset(text, Position::new(0, 7)), quote);
        let view = text.find("view").unwrap();
        assert_eq!(index.position(text, view), Position::new(1, 6));
        let utf8 = LineIndex::new(text, Encoding::Utf8);
        assert_eq!(utf8.position(text, quote), Position::new(0, 9));
    }

    #[test]
    fn positions_past_a_line_or_the_text_are_clamped() {
        let text = "ab\r\ncd";
        let index = LineIndex::new(text, Encoding::Utf16);
        assert_eq!(index.offset(text, Position::new(0, 99)), 2);
        assert_eq!(index.offset(text, Position::new(7, 0)), text.len());
        assert_eq!(index.position(text, 99), Position::new(1, 2));
    }

    #[test]
    fn an_incremental_change_replaces_its_range() {
        let mut text = "y = x.view(B, T, C)\n".to_string();
        let range = Range::new(Position::new(0, 6), Position::new(0, 10));
        apply_change(&mut text, Some(range), "reshape", Encoding::Utf16);
        assert_eq!(text, "y = x.reshape(B, T, C)\n");
        apply_change(&mut text, None, "z = 1\n", Encoding::Utf16);
        assert_eq!(text, "z = 1\n");
    }
}
