//! Jupyter notebooks (`.ipynb`): linted as the Python of their code cells, reported per cell,
//! fixed in place.
//!
//! **Joining.** The code cells' sources are concatenated, each cell contributing exactly its
//! own lines (a newline is added after a cell's last line), so row `r` of the joined text is
//! always one line of one cell. IPython syntax that is not Python — line magics (`%time x`),
//! cell magics (`%%bash` cells), shell escapes (`!pip install`, `files = !ls`) and help
//! (`obj?`) — is *masked*: the line is replaced by a placeholder (`pass` at the same
//! indentation, so an indented magic still leaves its block non-empty; an empty line in a
//! `%%` cell) that keeps the row count, and the original line is put back on write.
//!
//! **Locations.** Diagnostics are computed on the joined text; reporters translate a row
//! into (cell number, row in cell) with [`Notebook::cell_row`]. Cells are numbered from 1
//! over *all* cells, markdown included, as Jupyter shows them and as Ruff reports them
//! (`nb.ipynb:cell 3:4:12`).
//!
//! **Writing back.** [`Notebook::with_python`] splices only the `source` values of the cells
//! whose lines changed into the original JSON text: outputs, metadata, key order, indentation
//! and the escaping of untouched strings stay byte-for-byte as they were. A changed cell's
//! `source` is written in the style it had (a list of lines as nbformat writes, or one
//! string), reusing the original text of its unchanged lines.

use std::ops::Range;

use serde::Deserialize;
use serde_json::value::RawValue;

/// Why a notebook could not be read or written back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotebookError(pub String);

impl std::fmt::Display for NotebookError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotebookError {}

/// A parsed notebook: the original JSON and where each code cell's lines are.
#[derive(Debug, Clone)]
pub struct Notebook {
    /// The file as read.
    raw: String,
    /// How the file writes strings, kept for the cells written back.
    escapes: Escapes,
    cells: Vec<CodeCell>,
    /// For each row (0-based) of the joined text: the index into `cells`.
    row_to_cell: Vec<u32>,
}

#[derive(Debug, Clone)]
struct CodeCell {
    /// 1-based position among all cells.
    number: usize,
    /// Byte range of the cell's `source` value in `raw`.
    source_span: Range<usize>,
    /// The cell's lines as in the notebook, each with its `\n` except perhaps the last.
    lines: Vec<String>,
    /// Which lines were replaced by a placeholder in the joined text.
    masked: Vec<bool>,
    /// First row (0-based) of this cell in the joined text.
    first_row: usize,
    style: SourceStyle,
}

/// How a cell's `source` was written.
#[derive(Debug, Clone)]
enum SourceStyle {
    /// One JSON string.
    Text,
    /// A list of strings. `element_raw` holds each element's original JSON text when the
    /// elements are exactly the lines (nbformat's convention), so unchanged lines are
    /// written back verbatim.
    Lines { element_raw: Option<Vec<String>> },
}

/// How a notebook's JSON writes non-ASCII characters: as they are (nbformat's default) or
/// as `\u00e9` escapes (Python's `json.dump` default, `ensure_ascii=True`), in lower or
/// upper case hex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escapes {
    Raw,
    Ascii { upper: bool },
}

impl Escapes {
    /// The file's style: escaped when it holds `\u` escapes of non-ASCII characters and no
    /// raw non-ASCII text.
    fn of(raw: &str) -> Escapes {
        if !raw.is_ascii() {
            return Escapes::Raw;
        }
        let escape = raw.match_indices("\\u").find_map(|(at, _)| {
            // An escaped backslash before it (`\\u`) is not an escape.
            let backslashes = raw[..at].bytes().rev().take_while(|&b| b == b'\\').count();
            let hex = raw.get(at + 2..at + 6)?;
            let code = u32::from_str_radix(hex, 16).ok()?;
            (backslashes % 2 == 0 && code >= 0x80).then_some(hex)
        });
        match escape {
            Some(hex) => Escapes::Ascii {
                upper: hex.bytes().any(|b| b.is_ascii_uppercase()),
            },
            None => Escapes::Raw,
        }
    }

    /// `text` as a JSON string in this style.
    fn quote(self, text: &str) -> String {
        let json = serde_json::to_string(text).expect("a string serializes");
        let Escapes::Ascii { upper } = self else {
            return json;
        };
        let mut out = String::with_capacity(json.len());
        for c in json.chars() {
            if c.is_ascii() {
                out.push(c);
                continue;
            }
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                match upper {
                    true => out.push_str(&format!("\\u{unit:04X}")),
                    false => out.push_str(&format!("\\u{unit:04x}")),
                }
            }
        }
        out
    }
}

#[derive(Deserialize)]
struct RawNotebook<'a> {
    #[serde(borrow)]
    cells: Vec<&'a RawValue>,
    #[serde(default)]
    metadata: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct RawCell<'a> {
    cell_type: String,
    #[serde(borrow)]
    source: &'a RawValue,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Source {
    Text(String),
    Lines(Vec<String>),
}

impl Notebook {
    /// Parse a notebook (nbformat 4). Returns it with the joined Python of its code cells.
    /// A notebook whose kernel is not Python yields no code cells.
    pub fn parse(raw: String) -> Result<(Notebook, String), NotebookError> {
        let mut cells = Vec::new();
        {
            let doc: RawNotebook = serde_json::from_str(&raw).map_err(|e| {
                NotebookError(format!(
                    "not a Jupyter notebook (nbformat 4 JSON with `cells`): {e}"
                ))
            })?;
            if is_python(doc.metadata.as_ref()) {
                for (index, cell_raw) in doc.cells.iter().enumerate() {
                    let cell: RawCell = serde_json::from_str(cell_raw.get())
                        .map_err(|e| NotebookError(format!("cell {}: {e}", index + 1)))?;
                    if cell.cell_type != "code" {
                        continue;
                    }
                    cells.push(code_cell(&raw, index + 1, cell.source)?);
                }
            }
        }
        let mut python = String::new();
        let mut row_to_cell = Vec::new();
        for (i, cell) in cells.iter_mut().enumerate() {
            cell.first_row = row_to_cell.len();
            cell.masked = mask_ipython(&cell.lines, &mut python);
            row_to_cell.extend(std::iter::repeat_n(i as u32, cell.lines.len()));
        }
        Ok((
            Notebook {
                escapes: Escapes::of(&raw),
                raw,
                cells,
                row_to_cell,
            },
            python,
        ))
    }

    /// The notebook file's text as read.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// Number of code cells linted.
    pub fn code_cell_count(&self) -> usize {
        self.cells.len()
    }

    /// (cell number, 1-based row in that cell) of a 0-based row of the joined text. The row
    /// after the last line (an end-of-file offset) counts as one past the last cell's end.
    pub fn cell_row(&self, row: usize) -> Option<(usize, usize)> {
        match self.row_to_cell.get(row) {
            Some(&i) => {
                let cell = &self.cells[i as usize];
                Some((cell.number, row - cell.first_row + 1))
            }
            None => {
                let cell = self.cells.last()?;
                Some((cell.number, row - cell.first_row + 1))
            }
        }
    }

    /// The notebook JSON with its code cells replaced by `python`, an edited version of the
    /// joined text. Edits may change lines but not their number (fixes never add or remove
    /// lines), and masked lines keep their original content.
    pub fn with_python(&self, python: &str) -> Result<String, NotebookError> {
        let new_lines: Vec<&str> = python.split_inclusive('\n').collect();
        if new_lines.len() != self.row_to_cell.len() {
            return Err(NotebookError(format!(
                "the edited code has {} lines where the notebook's code cells have {}; not written",
                new_lines.len(),
                self.row_to_cell.len()
            )));
        }
        let mut out = String::with_capacity(self.raw.len() + 64);
        let mut pos = 0;
        for cell in &self.cells {
            let rows = &new_lines[cell.first_row..cell.first_row + cell.lines.len()];
            let lines: Vec<String> = cell
                .lines
                .iter()
                .zip(rows)
                .zip(&cell.masked)
                .map(|((old, new), &masked)| {
                    if masked {
                        old.clone()
                    } else {
                        with_ending_of(new, old)
                    }
                })
                .collect();
            if lines == cell.lines {
                continue;
            }
            out.push_str(&self.raw[pos..cell.source_span.start]);
            out.push_str(&cell.serialize(&self.raw, &lines, self.escapes));
            pos = cell.source_span.end;
        }
        out.push_str(&self.raw[pos..]);
        Ok(out)
    }
}

/// `new` (a joined-text line, always ending in `\n`) with the line ending `old` had: the
/// last line of a cell usually has none.
fn with_ending_of(new: &str, old: &str) -> String {
    let body = new.strip_suffix('\n').unwrap_or(new);
    let body = body.strip_suffix('\r').unwrap_or(body);
    let ending = &old[old.trim_end_matches(['\n', '\r']).len()..];
    format!("{body}{ending}")
}

/// Is the notebook's kernel Python? Notebooks without language metadata are assumed to be.
fn is_python(metadata: Option<&serde_json::Value>) -> bool {
    let language = metadata.and_then(|m| {
        m.pointer("/language_info/name")
            .or_else(|| m.pointer("/kernelspec/language"))
            .and_then(|v| v.as_str())
    });
    language.is_none_or(|l| l.eq_ignore_ascii_case("python"))
}

fn code_cell(raw: &str, number: usize, source: &RawValue) -> Result<CodeCell, NotebookError> {
    let text = source.get();
    // `source` borrows from `raw`, so its offset is a pointer difference.
    let start = text.as_ptr() as usize - raw.as_ptr() as usize;
    let source_span = start..start + text.len();
    let parsed: Source = serde_json::from_str(text).map_err(|e| {
        NotebookError(format!(
            "cell {number}: `source` is neither a string nor a list of strings: {e}"
        ))
    })?;
    let (joined, style) = match parsed {
        Source::Text(s) => (s, SourceStyle::Text),
        Source::Lines(elements) => {
            let joined = elements.concat();
            let one_line_each = elements.iter().enumerate().all(|(i, e)| {
                let is_last = i + 1 == elements.len();
                !e.is_empty()
                    && e.find('\n').is_none_or(|p| p + 1 == e.len())
                    && (is_last || e.ends_with('\n'))
            });
            let element_raw = if one_line_each {
                let raws: Vec<&RawValue> =
                    serde_json::from_str(text).map_err(|e| NotebookError(e.to_string()))?;
                Some(raws.iter().map(|r| r.get().to_string()).collect())
            } else {
                None
            };
            (joined, SourceStyle::Lines { element_raw })
        }
    };
    let lines = joined.split_inclusive('\n').map(str::to_string).collect();
    Ok(CodeCell {
        number,
        source_span,
        lines,
        masked: Vec::new(),
        first_row: 0,
        style,
    })
}

impl CodeCell {
    /// The JSON of `source` holding `lines`, in the cell's original style and the file's
    /// escapes and line breaks.
    fn serialize(&self, raw: &str, lines: &[String], escapes: Escapes) -> String {
        let quote = |s: &str| escapes.quote(s);
        match &self.style {
            SourceStyle::Text => quote(&lines.concat()),
            SourceStyle::Lines { element_raw } => {
                let original = &raw[self.source_span.clone()];
                let elements: Vec<String> = lines
                    .iter()
                    .enumerate()
                    .map(|(i, line)| match element_raw {
                        Some(raws) if self.lines.get(i) == Some(line) => raws[i].clone(),
                        _ => quote(line),
                    })
                    .collect();
                match list_layout(original) {
                    Some((element_indent, closing_indent, newline)) => {
                        let separator = format!(",{newline}{element_indent}");
                        format!(
                            "[{newline}{element_indent}{}{newline}{closing_indent}]",
                            elements.join(&separator)
                        )
                    }
                    None => {
                        let separator = if original.contains("\", \"") {
                            ", "
                        } else {
                            ","
                        };
                        format!("[{}]", elements.join(separator))
                    }
                }
            }
        }
    }
}

/// For a list written over several lines, the indentation of its elements and of its
/// closing bracket (`indent=1` notebooks: four and three spaces), and its line break
/// (`\r\n` in a notebook saved on Windows).
fn list_layout(original: &str) -> Option<(String, String, &'static str)> {
    let after_open = original.strip_prefix('[')?;
    let first_break = after_open.find('\n')?;
    let newline = match after_open[..first_break].ends_with('\r') {
        true => "\r\n",
        false => "\n",
    };
    let element_indent: String = after_open[first_break + 1..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let before_close = original.strip_suffix(']')?;
    let closing_indent = &before_close[before_close.rfind('\n')? + 1..];
    if !closing_indent.chars().all(|c| c == ' ' || c == '\t') {
        return None;
    }
    Some((element_indent, closing_indent.to_string(), newline))
}

/// Append the Python view of `lines` to `python` (one row per line) and return which lines
/// were masked.
fn mask_ipython(lines: &[String], python: &mut String) -> Vec<bool> {
    let first_code = lines.iter().map(|l| l.trim_start()).find(|l| !l.is_empty());
    let cell_magic = first_code.is_some_and(|l| l.starts_with("%%"));
    let mut masked = Vec::with_capacity(lines.len());
    let mut continues = false;
    for line in lines {
        let body = line.trim_end_matches(['\n', '\r']);
        let is_masked = cell_magic || continues || is_ipython_line(body);
        if is_masked {
            if !cell_magic {
                let indent = &body[..body.len() - body.trim_start().len()];
                python.push_str(indent);
                python.push_str("pass");
            }
            // A magic continued with a trailing backslash masks the next line too.
            continues = body.ends_with('\\');
        } else {
            python.push_str(body);
        }
        python.push('\n');
        masked.push(is_masked);
    }
    masked
}

/// A cell's source with its IPython lines made comments of the same length (the first
/// character of each masked line becomes `#`), so that every offset of the cell is the
/// same offset of the Python the analysis reads: what the language server lints, where
/// findings must land on the cell's own text.
pub fn comment_out_ipython(cell: &str) -> String {
    let first_code = cell.lines().map(str::trim_start).find(|l| !l.is_empty());
    let cell_magic = first_code.is_some_and(|l| l.starts_with("%%"));
    let mut out = String::with_capacity(cell.len());
    let mut continues = false;
    for line in cell.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let masked = cell_magic || continues || is_ipython_line(body);
        let code = body.trim_start();
        if masked && !code.is_empty() {
            let indent = body.len() - code.len();
            out.push_str(&line[..indent]);
            out.push('#');
            out.push_str(&line[indent + code.chars().next().map_or(0, char::len_utf8)..]);
        } else {
            out.push_str(line);
        }
        continues = masked && body.ends_with('\\');
    }
    out
}

/// A line that IPython, not Python, understands: `%magic`, `!shell`, `x = !shell`,
/// `x = %magic`, `?obj`, `obj?`, `obj??`.
fn is_ipython_line(body: &str) -> bool {
    let code = body.trim_start();
    if code.starts_with('#') || code.is_empty() {
        return false;
    }
    if code.starts_with(['%', '!', '?']) {
        return true;
    }
    if code.ends_with('?') && !code.contains('#') {
        return true;
    }
    // `name = !cmd` / `a, b = %magic`: an assignment whose value is IPython syntax.
    let Some(eq) = code.find('=') else {
        return false;
    };
    let target = &code[..eq];
    let value = code[eq + 1..].trim_start();
    let is_plain_target = !target.trim().is_empty()
        && target
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == ',' || c == ' ' || c == '.');
    is_plain_target && value.starts_with(['!', '%'])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A notebook as nbformat writes it (`indent=1`, sorted keys), with a markdown cell,
    /// magics, a shell escape and an output.
    const NOTEBOOK: &str = r##"{
 "cells": [
  {
   "cell_type": "markdown",
   "metadata": {},
   "source": [
    "# Attention"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 1,
   "metadata": {},
   "outputs": [],
   "source": [
    "%matplotlib inline\n",
    "import torch\n",
    "!pip install einops"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 2,
   "metadata": {},
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "caf\u00e9\n"
     ]
    }
   ],
   "source": [
    "def f(q):\n",
    "    y = q.transpose(1, 2)\n",
    "    return y.view(-1)"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": null,
   "metadata": {},
   "outputs": [],
   "source": "%%bash\necho hi\n"
  }
 ],
 "metadata": {
  "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
"##;

    #[test]
    fn code_cells_are_joined_with_magics_masked() {
        let (nb, python) = Notebook::parse(NOTEBOOK.to_string()).unwrap();
        assert_eq!(
            python,
            "pass\nimport torch\npass\ndef f(q):\n    y = q.transpose(1, 2)\n    return y.view(-1)\n\n\n"
        );
        assert_eq!(nb.code_cell_count(), 3);
        // Row 4 (0-based) is `y = q.transpose(1, 2)`: cell 3 (the markdown cell is cell 1), row 2.
        assert_eq!(nb.cell_row(4), Some((3, 2)));
        assert_eq!(nb.cell_row(0), Some((2, 1)));
        assert_eq!(nb.cell_row(6), Some((4, 1)));
    }

    #[test]
    fn unchanged_python_gives_back_the_file_byte_for_byte() {
        let (nb, python) = Notebook::parse(NOTEBOOK.to_string()).unwrap();
        assert_eq!(nb.with_python(&python).unwrap(), NOTEBOOK);
    }

    #[test]
    fn an_edit_changes_only_that_cells_source() {
        let (nb, python) = Notebook::parse(NOTEBOOK.to_string()).unwrap();
        let fixed = python.replace("y.view(-1)", "y.contiguous().view(-1)");
        let written = nb.with_python(&fixed).unwrap();
        let expected = NOTEBOOK.replace(
            "\"    return y.view(-1)\"",
            "\"    return y.contiguous().view(-1)\"",
        );
        assert_eq!(written, expected);
        // Still a notebook, and reading it again gives the edited code.
        let (_, again) = Notebook::parse(written).unwrap();
        assert_eq!(again, fixed);
    }

    #[test]
    fn masked_lines_are_restored_and_line_counts_must_match() {
        let (nb, python) = Notebook::parse(NOTEBOOK.to_string()).unwrap();
        let edited = python.replacen("pass\nimport torch", "pass\nimport torch  # noqa: SL001", 1);
        let written = nb.with_python(&edited).unwrap();
        assert!(written.contains("\"%matplotlib inline\\n\",\n    \"import torch  # noqa: SL001\\n\",\n    \"!pip install einops\""));
        assert!(nb.with_python(&format!("{python}extra\n")).is_err());
    }

    #[test]
    fn string_sources_and_inline_lists_keep_their_style() {
        let raw = r#"{"cells": [{"cell_type": "code", "source": "x = a.view(2)\ny = 1"}, {"cell_type": "code", "source": ["z = b.view(3)\n", "w = 2"]}], "metadata": {}}"#;
        let (nb, python) = Notebook::parse(raw.to_string()).unwrap();
        assert_eq!(python, "x = a.view(2)\ny = 1\nz = b.view(3)\nw = 2\n");
        let written = nb
            .with_python(&python.replace(".view(", ".reshape("))
            .unwrap();
        assert_eq!(
            written,
            r#"{"cells": [{"cell_type": "code", "source": "x = a.reshape(2)\ny = 1"}, {"cell_type": "code", "source": ["z = b.reshape(3)\n", "w = 2"]}], "metadata": {}}"#
        );
    }

    /// A notebook saved on Windows (CRLF between the JSON's lines, CRLF in its cells) and
    /// written by Python's `json.dump` (non-ASCII as `\u00e9`) keeps both when a cell is
    /// written back.
    #[test]
    fn crlf_files_and_ascii_escapes_keep_their_style() {
        let raw = "{\r\n \"cells\": [\r\n  {\r\n   \"cell_type\": \"code\",\r\n   \"source\": [\r\n    \"x = 'caf\\u00e9'\\r\\n\",\r\n    \"y = x.view(2)  # \\u00e9\\r\\n\",\r\n    \"z = '\\ud83d\\ude00'\"\r\n   ]\r\n  }\r\n ],\r\n \"metadata\": {}\r\n}\r\n";
        let (nb, python) = Notebook::parse(raw.to_string()).unwrap();
        assert_eq!(python, "x = 'café'\ny = x.view(2)  # é\nz = '😀'\n");
        let written = nb
            .with_python(&python.replace("view(2)", "reshape(2)"))
            .unwrap();
        assert_eq!(written, raw.replace("view(2)", "reshape(2)"));
        // Every other line, and even the edited one's escapes, are as they were.
        let edited = python.replace("view(2)", "reshape(2)").replace("😀", "😀!");
        let written = nb.with_python(&edited).unwrap();
        assert!(
            written.contains("\"z = '\\ud83d\\ude00!'\"\r\n   ]"),
            "{written}"
        );
        assert!(!written.contains("é") && !written.replace("\r\n", "").contains('\n'));
        // A file with raw UTF-8 keeps raw UTF-8.
        let raw = r#"{"cells": [{"cell_type": "code", "source": "x = 'é'\ny = x.view(2)"}], "metadata": {}}"#;
        let (nb, python) = Notebook::parse(raw.to_string()).unwrap();
        let written = nb.with_python(&python.replace("view", "reshape")).unwrap();
        assert_eq!(written, raw.replace("view", "reshape"));
        assert_eq!(
            Escapes::of(r#"{"a": "\\u00e9"}"#),
            Escapes::Raw,
            "an escaped backslash"
        );
        assert_eq!(
            Escapes::of(r#"{"a": "\u00E9"}"#),
            Escapes::Ascii { upper: true }
        );
    }

    #[test]
    fn ipython_lines_become_comments_of_the_same_length() {
        let cell = "%time y = x.view(-1)\nfiles = !ls\ny = x.t()\n";
        let masked = comment_out_ipython(cell);
        assert_eq!(masked, "#time y = x.view(-1)\n#iles = !ls\ny = x.t()\n");
        assert_eq!(masked.len(), cell.len());
        let magic = comment_out_ipython("%%bash\necho é\n");
        assert_eq!(magic, "#%bash\n#cho é\n");
    }

    #[test]
    fn ipython_lines_are_recognised() {
        for line in [
            "%time f()",
            "!ls",
            "files = !ls",
            "a, b = %who",
            "?torch.view",
            "torch.view??",
            "    %timeit x",
        ] {
            assert!(is_ipython_line(line), "{line}");
        }
        for line in [
            "x = a % b",
            "y != z",
            "# %magic in a comment",
            "s = 'what?'  # really",
            "x == !y",
        ] {
            assert!(!is_ipython_line(line), "{line}");
        }
    }

    #[test]
    fn other_kernels_and_broken_json() {
        let r = r#"{"cells": [{"cell_type": "code", "source": "x <- 1"}], "metadata": {"kernelspec": {"language": "R"}}}"#;
        let (nb, python) = Notebook::parse(r.to_string()).unwrap();
        assert_eq!((nb.code_cell_count(), python.as_str()), (0, ""));
        assert!(Notebook::parse("{\"worksheets\": []}".to_string()).is_err());
        assert!(Notebook::parse("not json".to_string()).is_err());
    }
}
