//! Suppression comments: the one place that finds comments and reads the directives in
//! them, for every reader (which findings are hidden, SL100, `--add-noqa`, the warnings
//! about malformed directives).
//!
//! **Comments** come from a lexer that knows the language's strings, so that text that
//! only looks like a comment is never a directive: in Python, strings of every prefix,
//! triple-quoted strings and docstrings, and f-/t-strings with their replacement fields
//! (3.12's nesting of the same quote included); in Rust, string literals with escapes, raw
//! strings (`r#"…"#`, `br`, `cr`), byte and C strings, char literals told apart from
//! lifetimes, and nested block comments. The lexer also records the line breaks that lie
//! inside a string or a block comment or follow a backslash continuation: a comment
//! cannot be appended to such a line.
//!
//! **Directives** follow Ruff's syntax, in any comment (and after a further `#` inside one,
//! as in `# type: ignore  # noqa: E501`):
//! - `# noqa` (any case, optional spaces: `#noqa:SL001`, `# NOQA : SL001`) silences every
//!   rule on its line; `# noqa: SL001, SL002` (codes separated by commas and/or spaces)
//!   only those;
//! - `# stridelint: ignore[SL001, SL002]`: the same for the listed codes (`//` in Rust);
//! - `# stridelint: noqa` on a line of its own skips the whole file, and
//!   `# stridelint: noqa: SL001` suppresses only SL001 in the file.
//!
//! - `# stridelint: reveal` asks for the layout of the line's outermost op call (SL900;
//!   no suppression, but read by this one comment lexer).
//!
//! Any other comment that starts with `stridelint:` — a bare `# stridelint: ignore`, an
//! empty code list, a misspelt directive, a file-level directive after code — is
//! *malformed*: it suppresses nothing and is reported as a warning.

use std::ops::Range;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder};

use crate::ir::Language;

/// Nesting of f-string replacement fields the Python lexer follows (the parser refuses far
/// less); deeper, the rest of the string is plain text.
const MAX_FIELD_DEPTH: u32 = 64;

/// What the lexer found in a file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lexed {
    /// The byte range of every comment, in order: from its marker (`#`, `//`, `/*`) to the
    /// end of its line (without the line break) or past its `*/`.
    pub comments: Vec<Range<usize>>,
    /// Byte offsets of the line breaks inside a string or a block comment, or after a
    /// backslash continuation, in order.
    pub open_breaks: Vec<usize>,
}

/// The comments of `text` and its line breaks that a comment cannot precede.
pub fn lex(text: &str, language: Language) -> Lexed {
    match language {
        Language::Python => {
            let mut lexer = Python {
                b: text.as_bytes(),
                i: 0,
                out: Lexed::default(),
            };
            lexer.code(None, 0);
            lexer.out
        }
        Language::Rust => lex_rust(text.as_bytes()),
    }
}

struct Python<'a> {
    b: &'a [u8],
    i: usize,
    out: Lexed,
}

impl Python<'_> {
    /// Length of the line break at `i` (`\n`, `\r\n`, or a lone `\r`: Python reads source
    /// with universal newlines), if there is one.
    fn line_break(&self, i: usize) -> Option<usize> {
        match self.b.get(i)? {
            b'\n' => Some(1),
            b'\r' if self.b.get(i + 1) == Some(&b'\n') => Some(2),
            b'\r' => Some(1),
            _ => None,
        }
    }

    /// Code, up to the end of the text; or, inside the replacement field of an f-string
    /// quoted by `field` (quote, triple), up to the `}` that closes the field.
    fn code(&mut self, field: Option<(u8, bool)>, depth: u32) {
        let mut brackets = 0u32;
        while self.i < self.b.len() {
            let c = self.b[self.i];
            match c {
                // In a one-line f-string field `#` is a syntax error, not a comment.
                b'#' if field.is_none_or(|(_, triple)| triple) => {
                    let start = self.i;
                    while self.i < self.b.len() && self.line_break(self.i).is_none() {
                        self.i += 1;
                    }
                    self.out.comments.push(start..self.i);
                }
                b'\'' | b'"' => self.string(false, depth),
                b'\\' => {
                    self.i += 1;
                    if let Some(len) = self.line_break(self.i) {
                        self.out.open_breaks.push(self.i);
                        self.i += len;
                    }
                }
                b'\n' | b'\r' => match field {
                    // An unterminated one-line f-string: the parser reports it.
                    Some((_, false)) => return,
                    // A line break inside a triple-quoted f-string's field is inside the string.
                    Some((_, true)) => {
                        self.out.open_breaks.push(self.i);
                        self.i += self.line_break(self.i).unwrap_or(1);
                    }
                    None => self.i += 1,
                },
                b'(' | b'[' | b'{' => {
                    brackets += 1;
                    self.i += 1;
                }
                b')' | b']' => {
                    brackets = brackets.saturating_sub(1);
                    self.i += 1;
                }
                b'}' => {
                    self.i += 1;
                    if field.is_some() && brackets == 0 {
                        return;
                    }
                    brackets = brackets.saturating_sub(1);
                }
                b':' if brackets == 0 => {
                    self.i += 1;
                    if let Some(field) = field {
                        self.format_spec(field, depth);
                        return;
                    }
                }
                c if c == b'_' || c.is_ascii_alphabetic() || c >= 0x80 => {
                    let start = self.i;
                    while self.i < self.b.len()
                        && (self.b[self.i] == b'_'
                            || self.b[self.i].is_ascii_alphanumeric()
                            || self.b[self.i] >= 0x80)
                    {
                        self.i += 1;
                    }
                    let word = &self.b[start..self.i];
                    let quoted = matches!(self.b.get(self.i), Some(b'\'' | b'"'));
                    let is_prefix =
                        word.len() <= 3 && word.iter().all(|c| b"rRbBuUfFtT".contains(c));
                    if quoted && is_prefix {
                        let formatted = word.iter().any(|c| b"fFtT".contains(c));
                        self.string(formatted, depth);
                    }
                }
                _ => self.i += 1,
            }
        }
    }

    /// A string whose opening quote is at `self.i`.
    fn string(&mut self, formatted: bool, depth: u32) {
        let q = self.b[self.i];
        let triple = self.b[self.i..].starts_with(&[q, q, q]);
        self.i += if triple { 3 } else { 1 };
        while self.i < self.b.len() {
            let c = self.b[self.i];
            if c == b'\\' {
                self.i += 1;
                if let Some(len) = self.line_break(self.i) {
                    self.out.open_breaks.push(self.i);
                    self.i += len;
                } else if !(formatted && self.b.get(self.i) == Some(&b'{')) {
                    self.i += 1;
                }
                continue;
            }
            if let Some(len) = self.line_break(self.i) {
                if !triple {
                    return; // unterminated: the parser reports it, the lexer recovers
                }
                self.out.open_breaks.push(self.i);
                self.i += len;
                continue;
            }
            if c == q && (!triple || self.b[self.i..].starts_with(&[q, q, q])) {
                self.i += if triple { 3 } else { 1 };
                return;
            }
            self.i += 1;
            if formatted && c == b'{' {
                if self.b.get(self.i) == Some(&b'{') {
                    self.i += 1;
                } else if depth < MAX_FIELD_DEPTH {
                    self.code(Some((q, triple)), depth + 1);
                }
            }
        }
    }

    /// The format spec of a replacement field (after its `:`): text with nested fields,
    /// up to the `}` that closes the field (or the string's end, left for [`Self::string`]).
    fn format_spec(&mut self, (q, triple): (u8, bool), depth: u32) {
        while self.i < self.b.len() {
            let c = self.b[self.i];
            if c == q && (!triple || self.b[self.i..].starts_with(&[q, q, q])) {
                return;
            }
            if self.line_break(self.i).is_some() && !triple {
                return;
            }
            self.i += 1;
            match c {
                b'}' => return,
                b'{' if depth < MAX_FIELD_DEPTH => self.code(Some((q, triple)), depth + 1),
                _ => {}
            }
        }
    }
}

/// Rust: `//` and nested `/* */` comments; strings, raw strings, byte and C strings, char
/// literals and lifetimes are skipped. Lines end at `\n` only, as rustc counts them.
fn lex_rust(b: &[u8]) -> Lexed {
    let mut out = Lexed::default();
    let mut i = 0;
    let ident = |c: u8| c == b'_' || c.is_ascii_alphanumeric() || c >= 0x80;
    // A quoted string from the opening `"` at `i`: `\` escapes the next byte.
    let string = |mut i: usize, out: &mut Lexed| -> usize {
        i += 1;
        while i < b.len() {
            match b[i] {
                b'\\' => i += 1,
                b'"' => return i + 1,
                b'\n' => out.open_breaks.push(i),
                _ => {}
            }
            i += 1;
        }
        i
    };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let start = i;
                i += memchr::memchr(b'\n', &b[i..]).unwrap_or(b.len() - i);
                let end = if i > start && b[i - 1] == b'\r' {
                    i - 1
                } else {
                    i
                };
                out.comments.push(start..end);
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let start = i;
                let mut depth = 1u32;
                i += 2;
                while i < b.len() && depth > 0 {
                    if b[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if b[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                    } else {
                        if b[i] == b'\n' {
                            out.open_breaks.push(i);
                        }
                        i += 1;
                    }
                }
                out.comments.push(start..i);
            }
            b'"' => i = string(i, &mut out),
            b'\'' => {
                // A char literal (`'x'`, `'\n'`, `'\u{1F600}'`, `'"'`) or a lifetime (`'a`).
                if b.get(i + 1) == Some(&b'\\') {
                    i += 3;
                    while i < b.len() && b[i] != b'\'' && b[i] != b'\n' {
                        i += 1;
                    }
                    i += 1;
                } else {
                    let next = b.get(i + 1).copied().unwrap_or(0);
                    let width = match next {
                        0..0x80 => 1,
                        0xC0..0xE0 => 2,
                        0xE0..0xF0 => 3,
                        _ => 4,
                    };
                    if b.get(i + 1 + width) == Some(&b'\'') {
                        i += 2 + width;
                    } else {
                        i += 1;
                    }
                }
            }
            c if ident(c) => {
                let start = i;
                while i < b.len() && ident(b[i]) {
                    i += 1;
                }
                let word = &b[start..i];
                match (word, b.get(i)) {
                    (b"r" | b"br" | b"cr", Some(b'"' | b'#')) => {
                        let hashes = b[i..].iter().take_while(|&&c| c == b'#').count();
                        if b.get(i + hashes) != Some(&b'"') {
                            continue; // a raw identifier, `r#type`
                        }
                        i += hashes + 1;
                        loop {
                            match b.get(i) {
                                None => break,
                                Some(b'"')
                                    if b.len() > i + hashes
                                        && b[i + 1..=i + hashes].iter().all(|&c| c == b'#') =>
                                {
                                    i += 1 + hashes;
                                    break;
                                }
                                Some(b'\n') => out.open_breaks.push(i),
                                _ => {}
                            }
                            i += 1;
                        }
                    }
                    (b"b" | b"c", Some(b'"')) => i = string(i, &mut out),
                    _ => {}
                }
            }
            _ => i += 1,
        }
    }
    out
}

/// The two spellings of a line suppression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirectiveKind {
    /// `# noqa` / `# noqa: SL001, SL002` (shared with Ruff, flake8, …).
    Noqa,
    /// `# stridelint: ignore[SL001]` (or `//` in Rust).
    Ignore,
}

/// A line suppression, with byte ranges in the file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive {
    pub kind: DirectiveKind,
    /// From its marker (`#`, `//`) to its end: the last code, the `]`, or the word `noqa`
    /// of a blanket noqa.
    pub range: Range<usize>,
    /// The listed codes as written, with their ranges; empty for a blanket `# noqa`.
    pub codes: Vec<(String, Range<usize>)>,
    /// Where a code is inserted to extend the list: after the last code, before `]`, or
    /// after `noqa` (the insertion then needs a `:`).
    pub insert_at: usize,
}

impl Directive {
    /// Does this directive silence `code`? A blanket `# noqa` silences every code.
    pub fn covers(&self, code: &str) -> bool {
        (self.codes.is_empty() && self.kind == DirectiveKind::Noqa)
            || self.codes.iter().any(|(c, _)| c.eq_ignore_ascii_case(code))
    }
}

/// A line directive, where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineDirective {
    /// The 0-based line of its comment.
    pub line: usize,
    /// Whether its comment is alone on its line (in Rust, such a comment also covers the
    /// next line).
    pub own_line: bool,
    pub directive: Directive,
}

/// A comment that starts like a directive but is not one: it suppresses nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    /// From the directive's marker to the end of its comment.
    pub range: Range<usize>,
    pub message: String,
}

/// Every suppression of one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Suppressions {
    /// The line directives, by line.
    pub lines: Vec<LineDirective>,
    /// `# stridelint: noqa`: the whole file is skipped.
    pub file_exempt: bool,
    /// `# stridelint: noqa: SL001`: these codes (upper case) are suppressed in the file.
    pub file_codes: Vec<String>,
    pub malformed: Vec<Malformed>,
    /// 0-based lines with a `# stridelint: reveal` comment (lint SL900), in order.
    pub reveal_lines: Vec<usize>,
    /// 0-based lines that end inside a string or block comment or with a backslash, in
    /// order: a finding on one is covered by a directive on the line its statement goes
    /// on to (where `--add-noqa` puts it), as Ruff does.
    pub continued_lines: Vec<usize>,
}

impl Suppressions {
    /// The suppressions of `text`; `line_of` gives the 0-based line of a byte offset.
    pub fn new(text: &str, language: Language, line_of: impl Fn(usize) -> usize) -> Self {
        let mut found = Suppressions::default();
        // Most files name no directive at all: then there is nothing to lex.
        if !may_hold_directive(text, language) {
            return found;
        }
        let lexed = lex(text, language);
        found.continued_lines = lexed.open_breaks.iter().map(|&b| line_of(b)).collect();
        found.continued_lines.dedup();
        for comment in lexed.comments {
            let own_line = alone_on_line(text, comment.start);
            for parsed in parse_comment(text, comment.clone(), language) {
                match parsed {
                    Parsed::Line(directive) => found.lines.push(LineDirective {
                        line: line_of(directive.range.start),
                        own_line,
                        directive,
                    }),
                    Parsed::File { codes, .. } if codes.is_empty() && own_line => {
                        found.file_exempt = true
                    }
                    Parsed::File { range, .. } if !own_line => found.malformed.push(Malformed {
                        range: range.start..comment.end,
                        message: "a file-level `stridelint: noqa` must be on a line of its own \
                                  (to silence one line, write `# noqa`)"
                            .into(),
                    }),
                    Parsed::File { codes, .. } => found.file_codes.extend(codes),
                    Parsed::Malformed(m) => found.malformed.push(m),
                    Parsed::Reveal { range } => found.reveal_lines.push(line_of(range.start)),
                }
            }
        }
        found
    }

    /// Is `code` suppressed in the whole file (`# stridelint: noqa: SL001`)?
    pub fn file_suppresses(&self, code: &str) -> bool {
        self.file_codes.iter().any(|c| c.eq_ignore_ascii_case(code))
    }

    /// The line of the directive that suppresses `code` for a finding on lines
    /// `first..=last`: a directive on any of those lines or on the lines `last` continues
    /// onto (past a string's line breaks or a backslash), or (in Rust, where `rustfmt`
    /// moves comments above the code) a comment alone on the line above.
    pub fn covering(&self, code: &str, first: usize, last: usize, rust: bool) -> Option<usize> {
        let last = self.continued_to(last);
        let from = if rust { first.saturating_sub(1) } else { first };
        let at = self.lines.partition_point(|d| d.line < from);
        self.lines[at..]
            .iter()
            .take_while(|d| d.line <= last)
            .find(|d| (d.line >= first || d.own_line) && d.directive.covers(code))
            .map(|d| d.line)
    }

    /// The first line from `line` on that is not continued onto the next.
    pub fn continued_to(&self, line: usize) -> usize {
        let mut at = self.continued_lines.partition_point(|&l| l < line);
        let mut end = line;
        while self.continued_lines.get(at) == Some(&end) {
            end += 1;
            at += 1;
        }
        end
    }

    /// The line directives on 0-based `line`.
    pub fn on_line(&self, line: usize) -> impl Iterator<Item = &Directive> {
        let at = self.lines.partition_point(|d| d.line < line);
        self.lines[at..]
            .iter()
            .take_while(move |d| d.line == line)
            .map(|d| &d.directive)
    }
}

/// Does the comment at `start` have only blanks before it on its line?
fn alone_on_line(text: &str, start: usize) -> bool {
    text[..start]
        .bytes()
        .rev()
        .take_while(|&b| b != b'\n' && b != b'\r')
        .all(|b| b == b' ' || b == b'\t' || b == b'\x0c')
}

/// Does `text` name `noqa` or `stridelint` anywhere a comment may be (any case)? Without
/// either it has no directive, and no comment needs to be lexed. A Python comment ends its
/// line, so only the rest of each line after a `#` is searched (most of a file is code and
/// docstrings); Rust's block comments span lines, so a Rust file is searched whole.
pub fn may_hold_directive(text: &str, language: Language) -> bool {
    let bytes = text.as_bytes();
    if language != Language::Python {
        return directive_words().find(bytes).is_some();
    }
    let mut from = 0;
    while let Some(hash) = memchr::memchr(b'#', &bytes[from..]) {
        let start = from + hash;
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |n| start + n);
        if directive_words().find(&bytes[start..end]).is_some() {
            return true;
        }
        from = end;
    }
    false
}

fn directive_words() -> &'static AhoCorasick {
    static WORDS: OnceLock<AhoCorasick> = OnceLock::new();
    WORDS.get_or_init(|| {
        AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .build(["noqa", "stridelint"])
            .expect("fixed patterns build")
    })
}

/// What one directive in a comment says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    Line(Directive),
    /// `stridelint: noqa`, with its codes (upper case; empty: every rule).
    File {
        range: Range<usize>,
        codes: Vec<String>,
    },
    Malformed(Malformed),
    /// `stridelint: reveal`: show the layout of the line's outermost op call (SL900).
    Reveal {
        range: Range<usize>,
    },
}

/// The directives in the comment at `comment` (a range of `text` that [`lex`] found): at
/// its start, and after every further `#` in it.
pub fn parse_comment(text: &str, comment: Range<usize>, language: Language) -> Vec<Parsed> {
    let s = &text[..comment.end];
    let b = s.as_bytes();
    // The comment's own marker and where its body starts.
    let mut starts = Vec::new();
    let body = match language {
        Language::Python => comment.start + 1,
        Language::Rust => {
            let mut i = comment.start + 2;
            if matches!(b.get(i), Some(b'/' | b'!' | b'*')) {
                i += 1;
            }
            i
        }
    };
    starts.push((comment.start, body));
    let end = match language {
        Language::Rust if s[comment.clone()].starts_with("/*") => {
            comment.end - usize::from(s.ends_with("*/")) * 2
        }
        _ => comment.end,
    };
    for i in memchr::memchr_iter(b'#', &b[body..end]).map(|i| i + body) {
        if i != comment.start {
            starts.push((i, i + 1));
        }
    }
    starts
        .into_iter()
        .filter_map(|(marker, body)| parse_at(&s[..end], marker, body))
        .collect()
}

/// Skip spaces and tabs from `i`.
fn blanks(s: &str, mut i: usize) -> usize {
    while matches!(s.as_bytes().get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    i
}

/// Does `s[i..]` start with the word `word` (any case, not followed by a letter or digit)?
fn word_at(s: &str, i: usize, word: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= i + word.len()
        && b[i..i + word.len()].eq_ignore_ascii_case(word.as_bytes())
        && !b
            .get(i + word.len())
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// A rule code: letters, then digits (`SL001`, `E501`), in any case.
pub fn is_code(token: &str) -> bool {
    let letters = token.bytes().take_while(u8::is_ascii_alphabetic).count();
    letters > 0 && token.len() > letters && token[letters..].bytes().all(|b| b.is_ascii_digit())
}

/// Is `code` one of stridelint's (`SL` and digits)? Other tools' codes are never judged.
pub fn is_stridelint_code(code: &str) -> bool {
    code.len() > 2
        && code[..2].eq_ignore_ascii_case("SL")
        && code[2..].bytes().all(|b| b.is_ascii_digit())
}

/// The tokens of `s[range]` separated by commas and/or blanks, with their ranges.
fn tokens(s: &str, range: Range<usize>) -> Vec<(String, Range<usize>)> {
    let mut out = Vec::new();
    let mut start = None;
    let separator = |c: u8| c == b',' || c.is_ascii_whitespace();
    for i in range.clone() {
        match (separator(s.as_bytes()[i]), start) {
            (true, Some(from)) => {
                out.push((s[from..i].to_string(), from..i));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(from) = start {
        out.push((s[from..range.end].to_string(), from..range.end));
    }
    out
}

/// The codes listed from `from`: tokens up to the first that is not a code (a reason
/// written after the list).
fn code_list(s: &str, from: usize) -> Vec<(String, Range<usize>)> {
    tokens(s, from..s.len())
        .into_iter()
        .take_while(|(t, _)| is_code(t))
        .collect()
}

const IGNORE_FORM: &str = "write `stridelint: ignore[SL001]` or `noqa: SL001` to silence a line, \
                           `stridelint: noqa` on a line of its own to skip the file";

/// The directive whose marker is at `marker` and whose text starts at `body`, if any.
fn parse_at(s: &str, marker: usize, body: usize) -> Option<Parsed> {
    let p = blanks(s, body);
    if word_at(s, p, "noqa") {
        let after = p + 4;
        let colon = blanks(s, after);
        if s.as_bytes().get(colon) == Some(&b':') {
            let codes = code_list(s, colon + 1);
            let end = codes.last().map_or(after, |(_, r)| r.end);
            return Some(Parsed::Line(Directive {
                kind: DirectiveKind::Noqa,
                range: marker..end,
                insert_at: end,
                codes,
            }));
        }
        return Some(Parsed::Line(Directive {
            kind: DirectiveKind::Noqa,
            range: marker..after,
            codes: Vec::new(),
            insert_at: after,
        }));
    }
    if !word_at(s, p, "stridelint") {
        return None;
    }
    let colon = blanks(s, p + "stridelint".len());
    if s.as_bytes().get(colon) != Some(&b':') {
        return None; // prose that names the tool: `# stridelint reports this`
    }
    let malformed = |message: String| {
        Some(Parsed::Malformed(Malformed {
            range: marker..s.len(),
            message,
        }))
    };
    let written = s[marker..].trim_end();
    let q = blanks(s, colon + 1);
    if word_at(s, q, "noqa") {
        let after = blanks(s, q + 4);
        if s.as_bytes().get(after) == Some(&b':') {
            let codes = code_list(s, after + 1);
            if codes.is_empty() {
                return malformed(format!(
                    "`{written}` lists no rule code (write `stridelint: noqa: SL001`, or `stridelint: noqa` to skip the file)"
                ));
            }
            return Some(Parsed::File {
                range: marker..codes.last().unwrap().1.end,
                codes: codes
                    .into_iter()
                    .map(|(c, _)| c.to_ascii_uppercase())
                    .collect(),
            });
        }
        if tokens(s, after..s.len())
            .first()
            .is_some_and(|(t, _)| is_code(t))
        {
            return malformed(format!(
                "`{written}` needs a `:` before its codes (`stridelint: noqa: SL001`); without it the directive would skip the whole file"
            ));
        }
        return Some(Parsed::File {
            range: marker..q + 4,
            codes: Vec::new(),
        });
    }
    if word_at(s, q, "reveal") {
        return Some(Parsed::Reveal {
            range: marker..q + "reveal".len(),
        });
    }
    if word_at(s, q, "ignore") {
        let open = blanks(s, q + "ignore".len());
        if s.as_bytes().get(open) != Some(&b'[') {
            return malformed(format!("`{written}` names no rule: {IGNORE_FORM}"));
        }
        let Some(close) = s[open..].find(']').map(|i| open + i) else {
            return malformed(format!("`{written}` has no closing `]`"));
        };
        let codes = tokens(s, open + 1..close);
        if codes.is_empty() {
            return malformed(format!("`{written}` lists no rule code: {IGNORE_FORM}"));
        }
        if let Some((bad, _)) = codes.iter().find(|(t, _)| !is_code(t)) {
            return malformed(format!("`{written}`: `{bad}` is not a rule code"));
        }
        return Some(Parsed::Line(Directive {
            kind: DirectiveKind::Ignore,
            range: marker..close + 1,
            codes,
            insert_at: close,
        }));
    }
    malformed(format!("unknown directive `{written}`: {IGNORE_FORM}"))
}

/// The suppression of a single line of Python (for tests and tools that look at one
/// line): whether it silences `code`, as [`Suppressions::covering`] decides in a file.
pub fn line_covers(line: &str, code: &str) -> bool {
    Suppressions::new(line, Language::Python, |_| 0)
        .covering(code, 0, 0, false)
        .is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comments(text: &str, language: Language) -> Vec<&str> {
        lex(text, language)
            .comments
            .into_iter()
            .map(|r| &text[r])
            .collect()
    }

    fn codes(line: &str) -> Option<Vec<String>> {
        let s = Suppressions::new(line, Language::Python, |_| 0);
        s.lines
            .first()
            .map(|d| d.directive.codes.iter().map(|(c, _)| c.clone()).collect())
    }

    #[test]
    fn python_comments_are_never_inside_strings() {
        let text = "a = '# no'  # yes\ns = \"\"\"\n# noqa: SL001\n\"\"\"  # after\n\
                    t = x \\\n  + 1\nf = f\"{x['#']!r:>{w}} # no\"  # f\nr = rb'\\'# no'  # raw\n\
                    g = f'''{\n  x  # field comment\n}'''\nh = f\"{f\"{'#'}\"}\"  # nested\n";
        assert_eq!(
            comments(text, Language::Python),
            [
                "# yes",
                "# after",
                "# f",
                "# raw",
                "# field comment",
                "# nested"
            ]
        );
        let lexed = lex(text, Language::Python);
        let line_of = |o: usize| text[..o].matches('\n').count();
        let lines: Vec<usize> = lexed.open_breaks.iter().map(|&o| line_of(o)).collect();
        assert_eq!(lines, [1, 2, 4, 8, 9]);
    }

    #[test]
    fn rust_comments_skip_strings_raw_strings_chars_and_nest() {
        let text = "let a = \"// no \\\" // no\"; // yes\nlet r = r##\"// no \"# no\"##; /* a /* b */ c */\n\
                    let c = '\"'; let l: &'a str = \"x\"; // after lifetime\n\
                    let q = '\\''; let b = br\"//no\"; let i = r#type; // raw ident\n";
        assert_eq!(
            comments(text, Language::Rust),
            [
                "// yes",
                "/* a /* b */ c */",
                "// after lifetime",
                "// raw ident"
            ]
        );
    }

    #[test]
    fn noqa_follows_ruffs_syntax() {
        for (line, expected) in [
            ("x  # noqa", Some(vec![])),
            ("x  #noqa:SL001", Some(vec!["SL001"])),
            ("x  # NOQA : SL001", Some(vec!["SL001"])),
            (
                "x  # noqa: SL001,SL002 E501",
                Some(vec!["SL001", "SL002", "E501"]),
            ),
            ("x  # noqa: SL001 because it copies", Some(vec!["SL001"])),
            ("x  # type: ignore  # noqa: E501", Some(vec!["E501"])),
            (
                "x  # stridelint: ignore[SL001, SL002]",
                Some(vec!["SL001", "SL002"]),
            ),
            ("x  # a normal comment", None),
            ("x  # noqant", None),
            ("s = '# noqa: SL001'", None),
        ] {
            let expected = expected.map(|v| v.into_iter().map(String::from).collect::<Vec<_>>());
            assert_eq!(codes(line), expected, "{line}");
        }
        assert!(line_covers("x  # noqa", "SL002"));
        assert!(line_covers("x  # noqa: sl001", "SL001"));
        assert!(!line_covers("x  # noqa: SL001", "SL002"));
    }

    #[test]
    fn a_reveal_comment_is_a_directive_of_its_line() {
        let s = |text: &str| {
            let line_of = |offset: usize| text[..offset].matches('\n').count();
            Suppressions::new(text, Language::Python, line_of)
        };
        let found = s("x = 1\ny = x.t()  # stridelint: reveal\nz = 2  # stridelint: revealed\n");
        assert_eq!(found.reveal_lines, vec![1]);
        assert_eq!(found.malformed.len(), 1, "`revealed` is no directive");
        assert!(s("y = '# stridelint: reveal'\n").reveal_lines.is_empty());
    }

    #[test]
    fn file_level_directives_and_malformed_ones() {
        let s = |text: &str| Suppressions::new(text, Language::Python, |_| 0);
        assert!(s("# stridelint: noqa\nx = 1\n").file_exempt);
        let only = s("# stridelint: noqa: SL001, SL002\n");
        assert!(
            !only.file_exempt && only.file_suppresses("SL002") && !only.file_suppresses("SL003")
        );
        assert!(!s("'''\n# stridelint: noqa\n'''\n").file_exempt);
        for text in [
            "x  # stridelint: ignore\n",
            "x  # stridelint: ignore[]\n",
            "x  # stridelint: ignore[SL001\n",
            "x  # stridelint: ignore[not a code]\n",
            "# stridelint: noqa SL001\n",
            "# stridelint: noqa:\n",
            "x = 1  # stridelint: noqa\n",
            "# stridelint: skip-file\n",
        ] {
            let found = s(text);
            assert_eq!(found.malformed.len(), 1, "{text}");
            assert!(found.lines.is_empty() && !found.file_exempt && found.file_codes.is_empty());
        }
        assert!(s("# stridelint reports these\n").malformed.is_empty());
    }

    #[test]
    fn a_rust_comment_alone_on_the_line_above_covers_the_next() {
        let text = "fn f() {\n    // stridelint: ignore[SL005]\n    let y = a.matmul(&b)?;\n    let z = 1; // noqa: SL006\n    let w = 2;\n}\n";
        let line_of = |o: usize| text[..o].matches('\n').count();
        let s = Suppressions::new(text, Language::Rust, line_of);
        assert_eq!(s.covering("SL005", 2, 2, true), Some(1));
        assert_eq!(s.covering("SL006", 2, 2, true), None);
        assert_eq!(
            s.covering("SL006", 4, 4, true),
            None,
            "a trailing comment covers its own line only"
        );
        assert_eq!(s.covering("SL006", 3, 3, true), Some(3));
    }
}
