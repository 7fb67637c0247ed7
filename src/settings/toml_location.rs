//! Where a key of a configuration file is, from the TOML document's spans (`toml_edit`,
//! the parser under `toml`): the full dotted key at a byte offset (`dims.B` for the value
//! of `dims = { B = "x" }`, not `dims`), the offset of a key's value, and 1-based line and
//! column of an offset.

use std::ops::Range;

use toml_edit::{ImDocument, InlineTable, Item, Key, Table, Value};

/// The key whose key or value covers byte `offset` of `text`, innermost first found, as its
/// segments; `None` when `text` is not TOML or no key covers the offset.
pub fn key_at(text: &str, offset: usize) -> Option<Vec<String>> {
    let doc = ImDocument::parse(text).ok()?;
    let mut path = Vec::new();
    in_table(doc.as_table(), offset, &mut path).then_some(path)
}

/// Byte offset of the value of the key `path` (or of its table header), if the key is in
/// `text`.
pub fn offset_of(text: &str, path: &[String]) -> Option<usize> {
    let doc = ImDocument::parse(text).ok()?;
    let mut item = doc.as_item();
    let mut key_span = None;
    for segment in path {
        let (key, next) = match item {
            Item::Table(t) => t.get_key_value(segment)?,
            Item::Value(Value::InlineTable(t)) => t.get_key_value(segment)?,
            _ => return None,
        };
        key_span = key.span();
        item = next;
    }
    item.span().or(key_span).map(|s| s.start)
}

/// 1-based line and column (in characters) of byte `offset` of `text`.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

fn covers(span: Option<Range<usize>>, offset: usize) -> bool {
    span.is_some_and(|s| s.start <= offset && offset < s.end.max(s.start + 1))
}

/// Push the keys down to the one covering `offset`; false (and `path` unchanged) if none.
fn in_table(table: &Table, offset: usize, path: &mut Vec<String>) -> bool {
    for (name, _) in table.iter() {
        let Some((key, item)) = table.get_key_value(name) else {
            continue;
        };
        if in_entry(key, item, offset, path) {
            return true;
        }
    }
    false
}

fn in_inline(table: &InlineTable, offset: usize, path: &mut Vec<String>) -> bool {
    for (name, _) in table.iter() {
        let Some((key, item)) = table.get_key_value(name) else {
            continue;
        };
        if in_entry(key, item, offset, path) {
            return true;
        }
    }
    false
}

fn in_entry(key: &Key, item: &Item, offset: usize, path: &mut Vec<String>) -> bool {
    path.push(key.get().to_string());
    let found = match item {
        // A `[table]` (or a dotted key's implicit table): its entries, else its header.
        Item::Table(t) => in_table(t, offset, path) || covers(t.span(), offset),
        // An inline table: the entry inside it, else the table itself.
        Item::Value(Value::InlineTable(t)) if covers(t.span(), offset) => {
            in_inline(t, offset, path);
            true
        }
        _ => covers(item.span(), offset) || covers(key.span(), offset),
    };
    if !found {
        path.pop();
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, needle: &str) -> Option<String> {
        key_at(text, text.find(needle).unwrap()).map(|p| p.join("."))
    }

    #[test]
    fn the_full_key_of_a_value_is_named() {
        let text = "select = [\"SL001\"]\ndims = { B = \"x\", T = 4 }\n[per-file-ignores]\n\"a.py\" = 3\n[tool.x]\ny.z = true\n";
        assert_eq!(at(text, "[\"SL001\"]").as_deref(), Some("select"));
        assert_eq!(at(text, "\"x\"").as_deref(), Some("dims.B"));
        assert_eq!(at(text, "4 }").as_deref(), Some("dims.T"));
        assert_eq!(at(text, "3\n").as_deref(), Some("per-file-ignores.a.py"));
        assert_eq!(at(text, "true").as_deref(), Some("tool.x.y.z"));
        let path = ["dims".to_string(), "T".to_string()];
        assert_eq!(offset_of(text, &path), text.find("4 }"));
        assert_eq!(line_column(text, text.find("\"x\"").unwrap()), (2, 14));
    }
}
