//! The Python tokenizer, pulled one token at a time by the parser: no token list is ever
//! built, and tokens carry only their kind and byte range (names and literals are read
//! back from the source text when they are kept).
//!
//! It follows CPython's tokenizer: `INDENT`/`DEDENT` from a stack of indentation columns
//! (tabs to the next multiple of 8, a form feed resets the column), newlines inside
//! brackets and after `\` are not `NEWLINE`s, `\r\n`, `\n` and a lone `\r` all end lines, a
//! leading BOM is skipped. f-strings and t-strings (PEP 701/750) are split into a start,
//! replacement fields (tokenized as ordinary code, with `:` at the field's own level
//! opening the format spec) and an end; their literal text produces no tokens.
//!
//! Positions of `NEWLINE` and `DEDENT` tokens are zero-width and mark where the statement
//! or block they close ends: after the last token of the line, or after a trailing comment
//! on it; a block also keeps the comment lines that follow it at (at least) its own
//! indentation. These are the extents the lowering has always given compound statements.

use super::super::SyntaxError;
use crate::ir::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tok {
    Name,
    Int,
    Float,
    /// A complete string or bytes literal without replacement fields.
    Str,
    /// `f"` / `t'''` (prefix and opening quotes).
    FStart,
    /// `{` opening a replacement field.
    FieldStart,
    /// `}` closing a replacement field.
    FieldEnd,
    /// The closing quotes of an f-string.
    FEnd,
    Newline,
    Indent,
    Dedent,
    Eof,
    /// Something the tokenizer rejects; the message is in [`Lexer::error_message`].
    Error,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Colon,
    Comma,
    Semi,
    Dot,
    Ellipsis,
    Arrow,
    Assign,
    Walrus,
    /// `!` before a conversion in a replacement field.
    Exclaim,
    Plus,
    Minus,
    Star,
    DoubleStar,
    Slash,
    DoubleSlash,
    Percent,
    At,
    Tilde,
    Amp,
    Pipe,
    Caret,
    LShift,
    RShift,
    EqEq,
    NotEq,
    Lt,
    Gt,
    LtE,
    GtE,
    /// `+=` and friends; which one is in [`Token::aug`].
    AugAssign,
    False,
    None,
    True,
    And,
    As,
    Assert,
    Async,
    Await,
    Break,
    Class,
    Continue,
    Def,
    Del,
    Elif,
    Else,
    Except,
    Finally,
    For,
    From,
    Global,
    If,
    Import,
    In,
    Is,
    Lambda,
    Nonlocal,
    Not,
    Or,
    Pass,
    Raise,
    Return,
    Try,
    While,
    With,
    Yield,
}

/// Augmented assignment operators, in [`Token::aug`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Aug {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    MatMul,
    Other,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Token {
    pub kind: Tok,
    pub start: u32,
    pub end: u32,
    pub aug: Aug,
}

impl Token {
    pub fn span(&self) -> Span {
        Span {
            start: self.start,
            end: self.end,
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    /// In the literal text of an f-string.
    FString { quote: u8, triple: bool, raw: bool },
    /// In a replacement field whose `{` is `brackets[level]`.
    Field { level: usize },
    /// In the format spec of the field whose `{` is `brackets[level]`.
    Spec {
        level: usize,
        quote: u8,
        triple: bool,
    },
}

/// The most nesting CPython accepts (checked against CPython 3.11): 200 open brackets
/// (201 is `too many nested parentheses`) and 99 levels of indentation (100 is
/// `IndentationError: too many levels of indentation`).
const MAX_BRACKETS: usize = 200;
const MAX_INDENT_LEVELS: usize = 99;

#[derive(Clone)]
pub(super) struct Lexer<'s> {
    src: &'s [u8],
    text: &'s str,
    pos: usize,
    indents: Vec<u32>,
    /// Open brackets: the opening byte and its offset.
    brackets: Vec<(u8, u32)>,
    modes: Vec<Mode>,
    at_line_start: bool,
    /// The current logical line has tokens, so a `NEWLINE` is owed.
    line_has_tokens: bool,
    /// End of the last token or trailing comment of the current logical line.
    last_end: u32,
    /// Where the last `NEWLINE` was (the end of the last logical line).
    newline_pos: u32,
    /// Ends of `DEDENT`s still to emit, last first.
    pending_dedents: Vec<u32>,
    /// An error to emit after the pending dedents (an unindent to no known level).
    pending_error: Option<(Span, &'static str)>,
    /// Comment-only lines since the last logical line: (column, end).
    comments: Vec<(u32, u32)>,
    /// Recovering from a syntax error: brackets are not tracked until the next line end.
    skipping: bool,
    pub error_message: String,
    /// Errors found while tokenizing that do not stop the token stream.
    pub side_errors: Vec<SyntaxError>,
}

impl<'s> Lexer<'s> {
    pub fn new(text: &'s str) -> Self {
        let src = text.as_bytes();
        let pos = if src.starts_with("\u{feff}".as_bytes()) {
            3
        } else {
            0
        };
        Lexer {
            src,
            text,
            pos,
            indents: vec![0],
            brackets: Vec::new(),
            modes: Vec::new(),
            at_line_start: true,
            line_has_tokens: false,
            last_end: 0,
            newline_pos: 0,
            pending_dedents: Vec::new(),
            pending_error: None,
            comments: Vec::new(),
            skipping: false,
            error_message: String::new(),
            side_errors: Vec::new(),
        }
    }

    /// The innermost bracket still open, if any.
    pub fn innermost_open_bracket(&self) -> Option<(u8, u32)> {
        self.brackets.last().copied()
    }

    /// Error recovery: forget open brackets and f-strings, and skip tokens without tracking
    /// brackets until the end of the current physical line.
    pub fn start_skipping(&mut self) {
        self.brackets.clear();
        self.modes.clear();
        self.skipping = true;
    }

    /// Error recovery: continue at `line_start` (the start of a physical line) as at the
    /// start of a new logical line, with no brackets open.
    pub fn restart_at_line(&mut self, line_start: usize) {
        self.brackets.clear();
        self.modes.clear();
        self.skipping = false;
        self.pos = line_start;
        self.at_line_start = true;
        self.line_has_tokens = false;
        self.pending_dedents.clear();
        self.pending_error = None;
        self.newline_pos = self.last_end;
    }

    fn peek_byte(&self, ahead: usize) -> u8 {
        self.src.get(self.pos + ahead).copied().unwrap_or(0)
    }

    fn at_end(&self) -> bool {
        self.pos >= self.src.len()
    }

    fn token(&mut self, kind: Tok, start: usize) -> Token {
        self.line_has_tokens = true;
        self.last_end = self.pos as u32;
        Token {
            kind,
            start: start as u32,
            end: self.pos as u32,
            aug: Aug::Other,
        }
    }

    fn zero_width(kind: Tok, at: u32) -> Token {
        Token {
            kind,
            start: at,
            end: at,
            aug: Aug::Other,
        }
    }

    fn error(&mut self, start: usize, message: String) -> Token {
        self.error_message = message;
        self.token(Tok::Error, start)
    }

    fn side_error(&mut self, span: Span, message: &str) {
        if self.side_errors.len() < super::super::MAX_REPORTED_ERRORS {
            self.side_errors.push(SyntaxError {
                span,
                message: message.to_string(),
            });
        }
    }

    /// The next token.
    pub fn next_token(&mut self) -> Token {
        loop {
            if let Some(end) = self.pending_dedents.pop() {
                return Self::zero_width(Tok::Dedent, end);
            }
            if let Some((span, message)) = self.pending_error.take() {
                self.error_message = message.to_string();
                return Token {
                    kind: Tok::Error,
                    start: span.start,
                    end: span.end,
                    aug: Aug::Other,
                };
            }
            match self.modes.last().copied() {
                Some(Mode::FString { quote, triple, raw }) if !self.skipping => {
                    return self.fstring_literal(quote, triple, raw)
                }
                Some(Mode::Spec {
                    level,
                    quote,
                    triple,
                }) if !self.skipping => return self.format_spec(level, quote, triple),
                _ => {}
            }
            if self.at_line_start {
                self.at_line_start = false;
                if let Some(token) = self.line_start() {
                    return token;
                }
            }
            // Whitespace, comments, line continuations.
            let c = self.peek_byte(0);
            match c {
                b' ' | b'\t' | b'\x0c' => {
                    self.pos += 1;
                    continue;
                }
                b'#' => {
                    let end = self.comment_end();
                    if self.line_has_tokens && self.brackets.is_empty() {
                        self.last_end = end as u32;
                    }
                    self.pos = end;
                    continue;
                }
                b'\\' => {
                    match self.peek_byte(1) {
                        b'\n' => self.pos += 2,
                        b'\r' if self.peek_byte(2) == b'\n' => self.pos += 3,
                        b'\r' => self.pos += 2,
                        0 if self.pos + 1 >= self.src.len() => self.pos += 1,
                        _ => {
                            // At the character after the `\`, as CPython reports it.
                            self.pos += 1;
                            let start = self.pos;
                            return self.error(
                                start,
                                "unexpected character after line continuation character".into(),
                            );
                        }
                    }
                    continue;
                }
                b'\n' | b'\r' => {
                    self.pos += if c == b'\r' && self.peek_byte(1) == b'\n' {
                        2
                    } else {
                        1
                    };
                    if !self.brackets.is_empty() && !self.skipping {
                        continue;
                    }
                    self.skipping = false;
                    self.at_line_start = true;
                    if self.line_has_tokens {
                        self.line_has_tokens = false;
                        self.newline_pos = self.last_end;
                        return Self::zero_width(Tok::Newline, self.last_end);
                    }
                    continue;
                }
                _ => {}
            }
            if self.at_end() {
                return self.end_of_file();
            }
            return self.lex_token();
        }
    }

    /// Where a comment starting at `pos` ends: before the `\n` (a `\r` before it is part of
    /// the comment, as tree-sitter always had it), or before a lone `\r`.
    fn comment_end(&self) -> usize {
        let rest = &self.src[self.pos..];
        match memchr::memchr2(b'\n', b'\r', rest) {
            None => self.src.len(),
            Some(i) => {
                let at = self.pos + i;
                if rest[i] == b'\r' && self.src.get(at + 1) == Some(&b'\n') {
                    at + 1
                } else {
                    at
                }
            }
        }
    }

    fn end_of_file(&mut self) -> Token {
        self.skipping = false;
        if !self.brackets.is_empty() || !self.modes.is_empty() {
            // The file ends inside brackets: nothing but the end can come.
            return Self::zero_width(Tok::Eof, self.src.len() as u32);
        }
        if self.line_has_tokens {
            self.line_has_tokens = false;
            self.newline_pos = self.last_end;
            return Self::zero_width(Tok::Newline, self.last_end);
        }
        if self.indents.len() > 1 {
            self.queue_dedents(0);
            if let Some(end) = self.pending_dedents.pop() {
                return Self::zero_width(Tok::Dedent, end);
            }
        }
        Self::zero_width(Tok::Eof, self.src.len() as u32)
    }

    /// At the start of a physical line outside brackets: skips blank and comment-only
    /// lines, then measures the indentation of the next code line.
    fn line_start(&mut self) -> Option<Token> {
        if !self.brackets.is_empty() {
            return None;
        }
        self.comments.clear();
        loop {
            let mut column: u32 = 0;
            loop {
                match self.peek_byte(0) {
                    b' ' => column += 1,
                    b'\t' => column = (column / 8 + 1) * 8,
                    b'\x0c' => column = 0,
                    _ => break,
                }
                self.pos += 1;
            }
            match self.peek_byte(0) {
                b'#' => {
                    let end = self.comment_end();
                    self.comments.push((column, end as u32));
                    self.pos = end;
                    self.skip_newline();
                }
                b'\n' | b'\r' => self.skip_newline(),
                _ if self.at_end() => return None,
                _ => {
                    let token = self.indentation(column);
                    self.comments.clear();
                    return token;
                }
            }
        }
    }

    fn skip_newline(&mut self) {
        match self.peek_byte(0) {
            b'\r' if self.peek_byte(1) == b'\n' => self.pos += 2,
            b'\r' | b'\n' => self.pos += 1,
            _ => {}
        }
    }

    fn indentation(&mut self, column: u32) -> Option<Token> {
        let current = *self.indents.last().unwrap_or(&0);
        if column > current {
            self.indents.push(column);
            // `indents` holds column 0 below the levels.
            if self.indents.len() == MAX_INDENT_LEVELS + 2 {
                let at = self.pos as u32;
                self.side_error(
                    Span { start: at, end: at },
                    "too many levels of indentation",
                );
            }
            return Some(Self::zero_width(Tok::Indent, self.pos as u32));
        }
        if column < current {
            self.queue_dedents(column);
            if *self.indents.last().unwrap_or(&0) != column {
                let at = self.pos as u32;
                self.pending_error = Some((
                    Span { start: at, end: at },
                    "unindent does not match any outer indentation level",
                ));
            }
            if let Some(end) = self.pending_dedents.pop() {
                return Some(Self::zero_width(Tok::Dedent, end));
            }
        }
        None
    }

    /// Pops indentation levels above `column`, each giving a `DEDENT` whose position is the
    /// end of the block: the last logical line, or the last of the comment lines after it
    /// that are indented at least as far as the block.
    fn queue_dedents(&mut self, column: u32) {
        let mut end = self.newline_pos;
        let mut next_comment = 0;
        let mut ends = Vec::new();
        while self.indents.len() > 1 && *self.indents.last().unwrap_or(&0) > column {
            let level = self.indents.pop().unwrap_or(0);
            while let Some(&(comment_column, comment_end)) = self.comments.get(next_comment) {
                if comment_column < level {
                    break;
                }
                end = end.max(comment_end);
                next_comment += 1;
            }
            ends.push(end);
        }
        ends.reverse();
        self.pending_dedents = ends;
    }

    fn lex_token(&mut self) -> Token {
        let start = self.pos;
        let c = self.peek_byte(0);
        if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            return self.name_or_string(start);
        }
        if c.is_ascii_digit() || (c == b'.' && self.peek_byte(1).is_ascii_digit()) {
            return self.number(start);
        }
        if c == b'"' || c == b'\'' {
            return self.string(start, start);
        }
        self.operator(start)
    }

    fn name_or_string(&mut self, start: usize) -> Token {
        // A string prefix: distinct letters of `bruft` directly followed by a quote (with a
        // letter repeated, CPython reads a name and then a string).
        let mut seen = [false; 5];
        let mut prefix_len = 0;
        while let Some(letter) = PREFIX_LETTERS
            .iter()
            .position(|&l| self.peek_byte(prefix_len).eq_ignore_ascii_case(&l))
            .filter(|&letter| !seen[letter])
        {
            seen[letter] = true;
            prefix_len += 1;
        }
        if prefix_len > 0 && matches!(self.peek_byte(prefix_len), b'"' | b'\'') {
            let quote_at = start + prefix_len;
            self.pos = quote_at;
            if let Some((first, second)) = incompatible_prefix(seen) {
                // CPython 3.14's error; the string itself is lexed next.
                let message = format!("`{first}` and `{second}` prefixes are incompatible");
                return self.error(start, message);
            }
            return self.string(start, quote_at);
        }
        // An identifier.
        loop {
            let b = self.peek_byte(0);
            if b.is_ascii_alphanumeric() || b == b'_' {
                self.pos += 1;
            } else if b >= 0x80 {
                let Some(ch) = self.text[self.pos..].chars().next() else {
                    break;
                };
                let ok = if self.pos == start {
                    unicode_ident::is_xid_start(ch)
                } else {
                    unicode_ident::is_xid_continue(ch)
                };
                if !ok {
                    break;
                }
                self.pos += ch.len_utf8();
            } else {
                break;
            }
        }
        if self.pos == start {
            // A non-ASCII character that cannot start a name.
            let ch = self.text[start..].chars().next().unwrap_or('\u{fffd}');
            self.pos += ch.len_utf8().max(1);
            let message = if ch.is_whitespace() || ch.is_control() || is_invisible(ch) {
                format!("invalid non-printable character U+{:04X}", ch as u32)
            } else {
                format!("unexpected character `{ch}`")
            };
            return self.error(start, message);
        }
        let kind = keyword(&self.src[start..self.pos]).unwrap_or(Tok::Name);
        self.token(kind, start)
    }

    /// A number, checked as CPython's tokenizer checks it: digits of the radix, `_` only
    /// between digits, no leading zeros on a decimal integer, and no name directly after it
    /// (but `1if x else y` is still accepted). Errors are where CPython puts them.
    fn number(&mut self, start: usize) -> Token {
        let first = self.peek_byte(0);
        if first == b'0' {
            let radix = match self.peek_byte(1) | 0x20 {
                b'x' => Some((16, "hexadecimal")),
                b'o' => Some((8, "octal")),
                b'b' => Some((2, "binary")),
                _ => None,
            };
            if let Some((radix, name)) = radix {
                return self.radix_number(start, radix, name);
            }
        }
        let mut float = false;
        if first == b'.' {
            // `.5`
            self.pos += 1;
            float = true;
            if let Err(at) = self.decimal_tail() {
                return self.error_at(at, "invalid decimal literal");
            }
        } else if first == b'0' {
            // Zeros, then maybe more digits: only a float or an imaginary number may have them.
            self.pos += 1;
            loop {
                if self.peek_byte(0) == b'_' {
                    self.pos += 1;
                    if !self.peek_byte(0).is_ascii_digit() {
                        return self.error_at(self.pos - 1, "invalid decimal literal");
                    }
                }
                if self.peek_byte(0) != b'0' {
                    break;
                }
                self.pos += 1;
            }
            if self.peek_byte(0).is_ascii_digit() {
                if let Err(at) = self.decimal_tail() {
                    return self.error_at(at, "invalid decimal literal");
                }
                let exponent = self.peek_byte(0) | 0x20 == b'e' && {
                    let sign = usize::from(matches!(self.peek_byte(1), b'+' | b'-'));
                    self.peek_byte(1 + sign).is_ascii_digit()
                };
                if !matches!(self.peek_byte(0), b'.' | b'j' | b'J') && !exponent {
                    return self.error_at(
                        start,
                        "leading zeros in decimal integer literals are not permitted; \
                         use an 0o prefix for octal integers",
                    );
                }
            }
        } else if let Err(at) = self.decimal_tail() {
            return self.error_at(at, "invalid decimal literal");
        }
        if !float && self.peek_byte(0) == b'.' {
            self.pos += 1;
            float = true;
            if self.peek_byte(0).is_ascii_digit() {
                if let Err(at) = self.decimal_tail() {
                    return self.error_at(at, "invalid decimal literal");
                }
            }
        }
        if self.peek_byte(0) | 0x20 == b'e' {
            let sign = usize::from(matches!(self.peek_byte(1), b'+' | b'-'));
            if self.peek_byte(1 + sign).is_ascii_digit() {
                float = true;
                self.pos += 1 + sign;
                if let Err(at) = self.decimal_tail() {
                    return self.error_at(at, "invalid decimal literal");
                }
            } else if sign == 1 {
                // `1e+` with no digit: at the sign.
                self.pos += 2;
                return self.error_at(self.pos - 1, "invalid decimal literal");
            }
        }
        let mut what = "decimal";
        if self.peek_byte(0) | 0x20 == b'j' {
            self.pos += 1;
            what = "imaginary";
        }
        self.end_of_number(start, if float { Tok::Float } else { Tok::Int }, what)
    }

    /// Decimal digits with single `_` between them; on a misplaced `_`, its offset.
    fn decimal_tail(&mut self) -> Result<(), usize> {
        loop {
            while self.peek_byte(0).is_ascii_digit() {
                self.pos += 1;
            }
            if self.peek_byte(0) != b'_' {
                return Ok(());
            }
            self.pos += 1;
            if !self.peek_byte(0).is_ascii_digit() {
                return Err(self.pos - 1);
            }
        }
    }

    /// `0x…`, `0o…`, `0b…` from the `0`.
    fn radix_number(&mut self, start: usize, radix: u32, name: &str) -> Token {
        self.pos += 2;
        let is_digit = |b: u8| (b as char).is_digit(radix);
        loop {
            if self.peek_byte(0) == b'_' {
                self.pos += 1;
            }
            let b = self.peek_byte(0);
            if !is_digit(b) {
                if radix != 16 && b.is_ascii_digit() {
                    return self.error_at(
                        self.pos,
                        &format!("invalid digit '{}' in {name} literal", b as char),
                    );
                }
                return self.error_at(self.pos - 1, &format!("invalid {name} literal"));
            }
            while is_digit(self.peek_byte(0)) {
                self.pos += 1;
            }
            if self.peek_byte(0) != b'_' {
                break;
            }
        }
        let b = self.peek_byte(0);
        if radix != 16 && b.is_ascii_digit() {
            return self.error_at(
                self.pos,
                &format!("invalid digit '{}' in {name} literal", b as char),
            );
        }
        self.end_of_number(start, Tok::Int, name)
    }

    /// The end of a number: a name may not follow it directly, except the keywords that
    /// can follow a number in valid code (`1if x else 2`, `[0x1for x in y]`).
    fn end_of_number(&mut self, start: usize, kind: Tok, what: &str) -> Token {
        let next = self.peek_byte(0);
        if next.is_ascii_alphanumeric() || next == b'_' {
            let rest = &self.src[self.pos..];
            let keyword_follows = match next {
                b'a' => rest.starts_with(b"and"),
                b'e' => rest.starts_with(b"else"),
                b'f' => rest.starts_with(b"for"),
                b'i' => matches!(rest.get(1), Some(b'f' | b'n' | b's')),
                b'o' => rest.starts_with(b"or"),
                b'n' => rest.starts_with(b"not"),
                _ => false,
            };
            if !keyword_follows {
                // At the number's last character, as CPython reports it.
                return self.error_at(self.pos - 1, &format!("invalid {what} literal"));
            }
        }
        self.token(kind, start)
    }

    /// An error token starting at `at` (a character of a number) that swallows the rest of
    /// the number and any name glued to it.
    fn error_at(&mut self, at: usize, message: &str) -> Token {
        self.pos = self.pos.max(at + 1);
        while self.peek_byte(0).is_ascii_alphanumeric() || self.peek_byte(0) == b'_' {
            self.pos += 1;
        }
        self.error_message = message.to_string();
        let mut token = self.token(Tok::Error, at);
        token.start = at as u32;
        token
    }

    /// A string literal whose prefix starts at `start` and whose first quote is at `quote_at`.
    fn string(&mut self, start: usize, quote_at: usize) -> Token {
        let prefix = &self.src[start..quote_at];
        let formatted = prefix.iter().any(|b| matches!(b | 0x20, b'f' | b't'));
        let raw = prefix.iter().any(|b| b | 0x20 == b'r');
        let quote = self.src[quote_at];
        let triple = self.peek_byte(1) == quote && self.peek_byte(2) == quote;
        self.pos = quote_at + if triple { 3 } else { 1 };
        if formatted && !self.skipping {
            self.modes.push(Mode::FString { quote, triple, raw });
            return self.token(Tok::FStart, start);
        }
        // Scan to the closing quote.
        loop {
            let Some(&b) = self.src.get(self.pos) else {
                return self.unterminated(start, quote_at, triple);
            };
            if b != quote && b != b'\\' && b != b'\n' && b != b'\r' {
                let rest = &self.src[self.pos..];
                match memchr::memchr3(quote, b'\\', b'\n', rest) {
                    Some(i) => {
                        // A lone `\r` also ends a line.
                        match memchr::memchr(b'\r', &rest[..i]) {
                            Some(j) => self.pos += j,
                            None => self.pos += i,
                        }
                    }
                    None => match memchr::memchr(b'\r', rest) {
                        Some(j) => self.pos += j,
                        None => {
                            self.pos = self.src.len();
                            return self.unterminated(start, quote_at, triple);
                        }
                    },
                }
                continue;
            }
            match b {
                b'\\' => {
                    self.pos += if self.peek_byte(1) == b'\r' && self.peek_byte(2) == b'\n' {
                        3
                    } else {
                        2
                    }
                }
                b'\n' | b'\r' => {
                    if triple {
                        self.pos += 1;
                    } else {
                        return self.unterminated(start, quote_at, triple);
                    }
                }
                _ => {
                    if !triple {
                        self.pos += 1;
                        break;
                    }
                    if self.peek_byte(1) == quote && self.peek_byte(2) == quote {
                        self.pos += 3;
                        break;
                    }
                    self.pos += 1;
                }
            }
        }
        self.pos = self.pos.min(self.src.len());
        self.token(Tok::Str, start)
    }

    fn unterminated(&mut self, start: usize, quote_at: usize, triple: bool) -> Token {
        let end = self.pos;
        self.pos = quote_at + if triple { 3 } else { 1 };
        let message = if triple {
            "unterminated triple-quoted string literal"
        } else {
            "unterminated string literal"
        };
        let token = self.error(start, message.into());
        // Continue after the broken literal.
        self.pos = end;
        token
    }

    /// In the literal text of an f-string: the next replacement field or the closing quotes.
    fn fstring_literal(&mut self, quote: u8, triple: bool, raw: bool) -> Token {
        loop {
            let Some(&b) = self.src.get(self.pos) else {
                return self.unterminated_fstring();
            };
            match b {
                b'\\' => {
                    let next = self.peek_byte(1);
                    if !raw && next == b'N' && self.peek_byte(2) == b'{' {
                        // `\N{NAME}` is an escape, not a field.
                        match memchr::memchr(b'}', &self.src[self.pos..]) {
                            Some(i) => self.pos += i + 1,
                            None => self.pos = self.src.len(),
                        }
                    } else if next == b'{' || next == b'}' {
                        self.pos += 1;
                    } else if next == b'\r' && self.peek_byte(2) == b'\n' {
                        self.pos += 3;
                    } else {
                        self.pos += 2;
                    }
                }
                b'{' if self.peek_byte(1) == b'{' => self.pos += 2,
                b'}' if self.peek_byte(1) == b'}' => self.pos += 2,
                b'{' => {
                    let start = self.pos;
                    self.pos += 1;
                    self.open_bracket(b'{', start);
                    let level = self.brackets.len() - 1;
                    self.modes.push(Mode::Field { level });
                    return self.token(Tok::FieldStart, start);
                }
                b'}' => {
                    let start = self.pos;
                    self.pos += 1;
                    return self.error(start, "f-string: single `}` is not allowed".into());
                }
                b'\n' | b'\r' if !triple => return self.unterminated_fstring(),
                _ if b == quote => {
                    if !triple {
                        let start = self.pos;
                        self.pos += 1;
                        self.modes.pop();
                        return self.token(Tok::FEnd, start);
                    }
                    if self.peek_byte(1) == quote && self.peek_byte(2) == quote {
                        let start = self.pos;
                        self.pos += 3;
                        self.modes.pop();
                        return self.token(Tok::FEnd, start);
                    }
                    self.pos += 1;
                }
                _ => self.pos += 1,
            }
        }
    }

    fn unterminated_fstring(&mut self) -> Token {
        let start = self.pos;
        self.modes.pop();
        self.error(start, "unterminated f-string literal".into())
    }

    /// In a format spec: a nested field, or the `}` that ends the spec and its field.
    fn format_spec(&mut self, level: usize, quote: u8, triple: bool) -> Token {
        loop {
            let Some(&b) = self.src.get(self.pos) else {
                return self.unterminated_fstring();
            };
            match b {
                b'{' => {
                    let start = self.pos;
                    self.pos += 1;
                    self.open_bracket(b'{', start);
                    let level = self.brackets.len() - 1;
                    self.modes.push(Mode::Field { level });
                    return self.token(Tok::FieldStart, start);
                }
                b'}' => {
                    let start = self.pos;
                    self.pos += 1;
                    self.brackets.truncate(level);
                    self.modes.pop();
                    return self.token(Tok::FieldEnd, start);
                }
                b'\\' => self.pos += 2,
                b'\n' | b'\r' if !triple => return self.unterminated_fstring(),
                _ if b == quote
                    && (!triple || (self.peek_byte(1) == quote && self.peek_byte(2) == quote)) =>
                {
                    let start = self.pos;
                    self.modes.pop();
                    return self.error(start, "f-string: expecting `}`".into());
                }
                _ => self.pos += 1,
            }
        }
    }

    fn open_bracket(&mut self, byte: u8, at: usize) {
        if self.skipping {
            return;
        }
        self.brackets.push((byte, at as u32));
        if self.brackets.len() == MAX_BRACKETS + 1 {
            let at = at as u32;
            self.side_error(
                Span {
                    start: at,
                    end: at + 1,
                },
                "too many nested parentheses",
            );
        }
    }

    /// The field mode whose own level of brackets we are directly in, if any.
    fn field_at_top(&self) -> Option<usize> {
        match self.modes.last() {
            Some(Mode::Field { level }) if *level + 1 == self.brackets.len() => Some(*level),
            _ => None,
        }
    }

    fn close_bracket(&mut self, byte: u8, start: usize, kind: Tok) -> Token {
        self.pos += 1;
        if self.skipping {
            return self.token(kind, start);
        }
        let opener = match byte {
            b')' => b'(',
            b']' => b'[',
            _ => b'{',
        };
        match self.brackets.last().copied() {
            Some((open, _)) if open == opener => {
                self.brackets.pop();
                self.token(kind, start)
            }
            Some((open, _)) => {
                // `(]`: CPython names both brackets.
                let message = format!(
                    "closing parenthesis `{}` does not match opening parenthesis `{}`",
                    byte as char, open as char
                );
                self.error(start, message)
            }
            None => self.error(start, format!("unmatched `{}`", byte as char)),
        }
    }

    fn operator(&mut self, start: usize) -> Token {
        let c = self.peek_byte(0);
        let c1 = self.peek_byte(1);
        let c2 = self.peek_byte(2);
        let (kind, len) = match (c, c1, c2) {
            (b'(', _, _) => {
                self.open_bracket(b'(', start);
                (Tok::LParen, 1)
            }
            (b'[', _, _) => {
                self.open_bracket(b'[', start);
                (Tok::LBracket, 1)
            }
            (b'{', _, _) => {
                self.open_bracket(b'{', start);
                (Tok::LBrace, 1)
            }
            (b')', _, _) => return self.close_bracket(b')', start, Tok::RParen),
            (b']', _, _) => return self.close_bracket(b']', start, Tok::RBracket),
            (b'}', _, _) => {
                if let Some(level) = self.field_at_top() {
                    self.pos += 1;
                    self.brackets.truncate(level);
                    self.modes.pop();
                    return self.token(Tok::FieldEnd, start);
                }
                return self.close_bracket(b'}', start, Tok::RBrace);
            }
            (b':', _, _) if self.field_at_top().is_some() => {
                // The format spec starts: its text is literal until `{` or `}`.
                let level = self.field_at_top().unwrap_or(0);
                let (quote, triple) = self.enclosing_fstring_quote();
                if let Some(mode) = self.modes.last_mut() {
                    *mode = Mode::Spec {
                        level,
                        quote,
                        triple,
                    };
                }
                (Tok::Colon, 1)
            }
            (b'!', b'=', _) => (Tok::NotEq, 2),
            (b'!', _, _) if self.field_at_top().is_some() => (Tok::Exclaim, 1),
            (b':', b'=', _) => (Tok::Walrus, 2),
            (b':', _, _) => (Tok::Colon, 1),
            (b',', _, _) => (Tok::Comma, 1),
            (b';', _, _) => (Tok::Semi, 1),
            (b'.', b'.', b'.') => (Tok::Ellipsis, 3),
            (b'.', _, _) => (Tok::Dot, 1),
            (b'-', b'>', _) => (Tok::Arrow, 2),
            (b'=', b'=', _) => (Tok::EqEq, 2),
            (b'=', _, _) => (Tok::Assign, 1),
            (b'<', b'<', b'=') | (b'>', b'>', b'=') => {
                return self.aug(start, 3, Aug::Other);
            }
            (b'*', b'*', b'=') => return self.aug(start, 3, Aug::Pow),
            (b'/', b'/', b'=') => return self.aug(start, 3, Aug::FloorDiv),
            (b'<', b'<', _) => (Tok::LShift, 2),
            (b'>', b'>', _) => (Tok::RShift, 2),
            (b'<', b'=', _) => (Tok::LtE, 2),
            (b'>', b'=', _) => (Tok::GtE, 2),
            (b'<', _, _) => (Tok::Lt, 1),
            (b'>', _, _) => (Tok::Gt, 1),
            (b'*', b'*', _) => (Tok::DoubleStar, 2),
            (b'/', b'/', _) => (Tok::DoubleSlash, 2),
            (b'+', b'=', _) => return self.aug(start, 2, Aug::Add),
            (b'-', b'=', _) => return self.aug(start, 2, Aug::Sub),
            (b'*', b'=', _) => return self.aug(start, 2, Aug::Mul),
            (b'/', b'=', _) => return self.aug(start, 2, Aug::Div),
            (b'%', b'=', _) => return self.aug(start, 2, Aug::Mod),
            (b'@', b'=', _) => return self.aug(start, 2, Aug::MatMul),
            (b'&' | b'|' | b'^', b'=', _) => return self.aug(start, 2, Aug::Other),
            (b'+', _, _) => (Tok::Plus, 1),
            (b'-', _, _) => (Tok::Minus, 1),
            (b'*', _, _) => (Tok::Star, 1),
            (b'/', _, _) => (Tok::Slash, 1),
            (b'%', _, _) => (Tok::Percent, 1),
            (b'@', _, _) => (Tok::At, 1),
            (b'~', _, _) => (Tok::Tilde, 1),
            (b'&', _, _) => (Tok::Amp, 1),
            (b'|', _, _) => (Tok::Pipe, 1),
            (b'^', _, _) => (Tok::Caret, 1),
            _ => {
                let ch = self.text[start..].chars().next().unwrap_or('\u{fffd}');
                self.pos += ch.len_utf8().max(1);
                let message = if ch.is_control() {
                    format!("invalid non-printable character U+{:04X}", ch as u32)
                } else {
                    format!("unexpected character `{ch}`")
                };
                return self.error(start, message);
            }
        };
        self.pos += len;
        self.token(kind, start)
    }

    fn enclosing_fstring_quote(&self) -> (u8, bool) {
        for mode in self.modes.iter().rev() {
            if let Mode::FString { quote, triple, .. } = mode {
                return (*quote, *triple);
            }
        }
        (b'"', false)
    }

    fn aug(&mut self, start: usize, len: usize, aug: Aug) -> Token {
        self.pos += len;
        let mut token = self.token(Tok::AugAssign, start);
        token.aug = aug;
        token
    }
}

/// The letters of string prefixes, in the order of [`incompatible_prefix`]'s `seen`.
const PREFIX_LETTERS: &[u8; 5] = b"burft";

/// The two letters CPython 3.14 names for a prefix it refuses (`ub`, `ft`, `rbf`, ...), in
/// its order; `None` for the prefixes it accepts (`r`, `b`, `u`, `f`, `t`, `rb`, `rf`, `rt`
/// in any order and case).
fn incompatible_prefix(seen: [bool; 5]) -> Option<(char, char)> {
    let [b, u, r, f, t] = seen;
    [
        (u && b, ('u', 'b')),
        (u && r, ('u', 'r')),
        (u && f, ('u', 'f')),
        (u && t, ('u', 't')),
        (b && f, ('b', 'f')),
        (b && t, ('b', 't')),
        (f && t, ('f', 't')),
    ]
    .into_iter()
    .find_map(|(clash, letters)| clash.then_some(letters))
}

/// Zero-width and other invisible characters CPython calls non-printable.
fn is_invisible(ch: char) -> bool {
    matches!(
        ch,
        '\u{200b}'..='\u{200f}' | '\u{2060}' | '\u{feff}' | '\u{00a0}'
    )
}

fn keyword(word: &[u8]) -> Option<Tok> {
    Some(match word {
        b"False" => Tok::False,
        b"None" => Tok::None,
        b"True" => Tok::True,
        b"and" => Tok::And,
        b"as" => Tok::As,
        b"assert" => Tok::Assert,
        b"async" => Tok::Async,
        b"await" => Tok::Await,
        b"break" => Tok::Break,
        b"class" => Tok::Class,
        b"continue" => Tok::Continue,
        b"def" => Tok::Def,
        b"del" => Tok::Del,
        b"elif" => Tok::Elif,
        b"else" => Tok::Else,
        b"except" => Tok::Except,
        b"finally" => Tok::Finally,
        b"for" => Tok::For,
        b"from" => Tok::From,
        b"global" => Tok::Global,
        b"if" => Tok::If,
        b"import" => Tok::Import,
        b"in" => Tok::In,
        b"is" => Tok::Is,
        b"lambda" => Tok::Lambda,
        b"nonlocal" => Tok::Nonlocal,
        b"not" => Tok::Not,
        b"or" => Tok::Or,
        b"pass" => Tok::Pass,
        b"raise" => Tok::Raise,
        b"return" => Tok::Return,
        b"try" => Tok::Try,
        b"while" => Tok::While,
        b"with" => Tok::With,
        b"yield" => Tok::Yield,
        _ => return None,
    })
}
