//! Locating and describing syntax errors in a tree-sitter tree.
//!
//! tree-sitter marks what it could not parse in two ways: an `ERROR` node wraps tokens that
//! fit nowhere ("unexpected token"), and a zero-width `MISSING` node stands for a token it
//! had to invent to continue ("expected `)`"). Only subtrees flagged `has_error` are visited,
//! so a clean file costs one check of the root.

use tree_sitter::Node;

use super::lowerer::advance_to_next_in_preorder;
use super::SyntaxError;
use crate::ir::Span;

/// Longest token text quoted in a message.
const MAX_QUOTED_CHARS: usize = 24;

/// The first `limit` syntax errors under `root`, in source order. An `ERROR` node counts
/// once: what is inside it is not examined further.
pub(super) fn collect(root: Node<'_>, source: &str, limit: usize) -> Vec<SyntaxError> {
    let mut errors = Vec::new();
    if !root.has_error() {
        return errors;
    }
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        let mut descend = false;
        if node.is_error() {
            errors.push(unexpected(node, source));
        } else if node.is_missing() {
            errors.push(missing(node));
        } else {
            descend = node.has_error();
        }
        if errors.len() >= limit {
            break;
        }
        if descend && cursor.goto_first_child() {
            continue;
        }
        if !advance_to_next_in_preorder(&mut cursor) {
            break;
        }
    }
    errors.sort_by_key(|error| (error.span.start, error.span.end));
    errors
}

/// Describes an `ERROR` node by the most likely culprit among its tokens. tree-sitter often
/// wraps a whole statement in the ERROR node, so its first token is rarely the problem; in
/// order of preference the culprit is an invalid character, an unterminated string, an
/// unmatched or unclosed bracket, the end of the file, or else the last token skipped.
fn unexpected(node: Node<'_>, source: &str) -> SyntaxError {
    if node.child_count() == 0 {
        let text = quote(node, source);
        let message = if text.is_empty() {
            "invalid syntax".to_string()
        } else {
            format!("unexpected character `{text}`")
        };
        return at(node, message);
    }
    let mut open_brackets: Vec<Node<'_>> = Vec::new();
    let mut last_token = None;
    let mut cursor = node.walk();
    loop {
        let current = cursor.node();
        if current.child_count() == 0 && current.id() != node.id() {
            if current.is_error() {
                return at(
                    current,
                    format!("unexpected character `{}`", quote(current, source)),
                );
            }
            // A string start directly in the ERROR node is a string that never ends.
            if current.kind() == "string_start" && cursor.depth() == 1 {
                return at(current, "unterminated string literal".to_string());
            }
            match current.kind() {
                "(" | "[" | "{" => open_brackets.push(current),
                closer @ (")" | "]" | "}") => {
                    let opener = open_brackets.pop().map(|opener| opener.kind());
                    if opener != Some(matching_opener(closer)) {
                        return at(current, format!("unmatched `{closer}`"));
                    }
                }
                _ => {}
            }
            if current.end_byte() > current.start_byte() {
                last_token = Some(current);
            }
        }
        if cursor.goto_first_child() {
            continue;
        }
        if !advance_to_next_in_preorder(&mut cursor) {
            break;
        }
    }
    if let Some(opener) = open_brackets.pop() {
        return at(opener, format!("`{}` was never closed", opener.kind()));
    }
    let rest = source.get(node.end_byte()..).unwrap_or("");
    if rest.trim().is_empty() {
        let end = source.len();
        return SyntaxError {
            span: Span::new(end, end),
            message: "unexpected end of file".into(),
        };
    }
    match last_token {
        Some(token) => at(
            token,
            format!("unexpected token `{}`", quote(token, source)),
        ),
        None => at(node, "invalid syntax".to_string()),
    }
}

fn at(node: Node<'_>, message: String) -> SyntaxError {
    SyntaxError {
        span: Span::new(node.start_byte(), node.end_byte()),
        message,
    }
}

fn matching_opener(closer: &str) -> &'static str {
    match closer {
        ")" => "(",
        "]" => "[",
        _ => "{",
    }
}

/// The text of a token, shortened to one line for a message.
fn quote(node: Node<'_>, source: &str) -> String {
    let text = source.get(node.byte_range()).unwrap_or("").trim();
    let first_line = text.lines().next().unwrap_or(text);
    let mut quoted: String = first_line.chars().take(MAX_QUOTED_CHARS).collect();
    if quoted.len() < first_line.len() {
        quoted.push('…');
    }
    quoted
}

fn missing(node: Node<'_>) -> SyntaxError {
    let span = Span::new(node.start_byte(), node.start_byte());
    let kind = node.kind();
    let message = if !node.is_named() {
        format!("expected `{kind}`")
    } else {
        let description = match kind {
            "identifier" => "a name".to_string(),
            "_newline" | "" => "a newline".to_string(),
            "_indent" => "an indented block".to_string(),
            other => {
                let words = other.trim_start_matches('_').replace('_', " ");
                let article = if words.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                };
                format!("{article} {words}")
            }
        };
        format!("expected {description}")
    };
    SyntaxError { span, message }
}
