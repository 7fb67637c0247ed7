//! Where the analysed text's bytes are in the client's documents. A file is one document;
//! a notebook is its code cells, each a document of its own, joined into one text (a
//! newline after each cell) so that a name defined in one cell is known in the next, as
//! when the notebook runs top to bottom.

use lsp_types::{Position, Range, Url};

use super::positions::{Encoding, LineIndex};

/// One document's part of the analysed text.
#[derive(Debug, Clone)]
struct Piece {
    uri: Url,
    /// Byte range in the analysed text.
    start: usize,
    end: usize,
    index: LineIndex,
}

#[derive(Debug, Clone)]
pub struct TextMap {
    text: String,
    pieces: Vec<Piece>,
}

impl TextMap {
    /// One document.
    pub fn single(uri: Url, text: String, encoding: Encoding) -> Self {
        let index = LineIndex::new(&text, encoding);
        let end = text.len();
        TextMap {
            pieces: vec![Piece {
                uri,
                start: 0,
                end,
                index,
            }],
            text,
        }
    }

    /// Several documents (a notebook's code cells, in order), joined; IPython lines
    /// (`%time`, `!ls`) become comments of the same length.
    pub fn joined(cells: Vec<(Url, String)>, encoding: Encoding) -> Self {
        let mut text = String::new();
        let mut pieces = Vec::with_capacity(cells.len());
        for (uri, cell) in cells {
            let start = text.len();
            text.push_str(&crate::notebook::comment_out_ipython(&cell));
            let end = text.len();
            if !cell.ends_with('\n') {
                text.push('\n');
            }
            pieces.push(Piece {
                uri,
                start,
                end,
                index: LineIndex::new(&cell, encoding),
            });
        }
        TextMap { text, pieces }
    }

    /// The text the analysis sees.
    pub fn text(&self) -> &str {
        &self.text
    }

    fn piece_of(&self, offset: usize) -> Option<&Piece> {
        let i = self.pieces.partition_point(|p| p.start <= offset);
        let p = self.pieces.get(i.checked_sub(1)?)?;
        // The newline added after a cell belongs to it.
        (offset <= p.end + 1).then_some(p)
    }

    /// The document and range of the analysed bytes `start..end` (an end in a later
    /// document is cut at the first one's end).
    pub fn locate(&self, start: usize, end: usize) -> Option<(Url, Range)> {
        let p = self.piece_of(start)?;
        let own = &self.text[p.start..p.end];
        let local = |offset: usize| offset.clamp(p.start, p.end) - p.start;
        Some((
            p.uri.clone(),
            p.index.range(own, local(start), local(end.max(start))),
        ))
    }

    /// The analysed offset of `position` in document `uri`.
    pub fn offset(&self, uri: &Url, position: Position) -> Option<usize> {
        let p = self.pieces.iter().find(|p| &p.uri == uri)?;
        Some(p.start + p.index.offset(&self.text[p.start..p.end], position))
    }

    /// The analysed byte range of document `uri`.
    pub fn bounds(&self, uri: &Url) -> Option<(usize, usize)> {
        let p = self.pieces.iter().find(|p| &p.uri == uri)?;
        Some((p.start, p.end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn a_notebooks_cells_map_back_to_their_own_documents() {
        let a = url("vscode-notebook-cell:/nb.ipynb#a");
        let b = url("vscode-notebook-cell:/nb.ipynb#b");
        let map = TextMap::joined(
            vec![
                (a.clone(), "x = 1".into()),
                (b.clone(), "y = x.view(-1)\n".into()),
            ],
            Encoding::Utf16,
        );
        assert_eq!(map.text(), "x = 1\ny = x.view(-1)\n");
        let view = map.text().find("view").unwrap();
        let (uri, range) = map.locate(view, view + 4).unwrap();
        assert_eq!(uri, b);
        assert_eq!(range, Range::new(Position::new(0, 6), Position::new(0, 10)));
        assert_eq!(map.offset(&b, Position::new(0, 6)), Some(view));
        assert_eq!(map.locate(0, 1).unwrap().0, a);
    }
}
