//! The nesting pre-scan: a linear pass over the source text that bounds how deep syn's
//! recursive-descent parser (and the syntax tree it builds) can get, *before* syn runs.
//!
//! syn recurses once per nested bracket, per prefix operator (`- - - x`, `&&&x`), per
//! `else if`, per `return return x`, and it builds a tree as deep as a method chain or a
//! sum is long (`a + a + … + a` is a left-leaning tree of that many levels, which is also
//! dropped recursively). On pathological input (a fuzzer's 100 000 nested parentheses, a
//! generated 200 000-term sum) that overflows the stack, and a stack overflow aborts the
//! whole process — no `catch_unwind` can stop it. So the frontend first measures:
//!
//! - the bracket depth (`(`, `[`, `{`), limited to [`MAX_BRACKET_DEPTH`];
//! - an estimate of expression depth: at each bracket level, the number of tokens that can
//!   add a tree level (operators, `.`, `?`, closing `)`/`]` of call and index chains, and
//!   the keywords `as`, `else`, `return`, `break`, `yield`, `box`, `move`), counted since
//!   the last `,`, `;` or `=>` of that level, summed over all open levels plus the bracket
//!   depth. It over-approximates (a path `a::b::c` is flat but its `:` are not counted at
//!   all, a comparison `a < b` counts though it nests only once), which is fine: real
//!   model code stays far below [`MAX_EXPRESSION_DEPTH`].
//!
//! Comments, string, byte-string, raw-string and character literals are skipped, so a
//! docstring full of parentheses does not count. The scan never fails: malformed text
//! (an unterminated string) just ends it, and syn reports the syntax error.

/// Brackets nested deeper than this are refused (no real model file comes close; the
/// deepest nesting in candle-transformers is about 12).
pub(super) const MAX_BRACKET_DEPTH: usize = 256;

/// The expression-depth estimate above this is refused. Chosen so that syn's recursion
/// plus the lowering's stays far inside the parser thread's stack (see `rust.rs`), while a
/// statement of real code (a few dozen operators) never comes near it.
pub(super) const MAX_EXPRESSION_DEPTH: usize = 2_000;

/// Why a file is refused, and where the limit was crossed (a byte offset).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TooDeep {
    pub offset: usize,
    pub message: String,
}

/// Scan `source` and report the first place where a nesting limit is crossed.
pub(super) fn check_nesting(source: &str) -> Result<(), TooDeep> {
    let mut scan = Scan {
        bytes: source.as_bytes(),
        at: 0,
        levels: vec![0],
        chain_total: 0,
    };
    scan.run()
}

struct Scan<'s> {
    bytes: &'s [u8],
    at: usize,
    /// Counted tokens since the last separator, per open bracket level (index 0 is the
    /// file's top level).
    levels: Vec<usize>,
    /// Sum of `levels`, kept up to date so each token costs O(1).
    chain_total: usize,
}

impl Scan<'_> {
    fn run(&mut self) -> Result<(), TooDeep> {
        while let Some(&byte) = self.bytes.get(self.at) {
            match byte {
                b'/' if self.peek(1) == Some(b'/') => self.skip_line_comment(),
                b'/' if self.peek(1) == Some(b'*') => self.skip_block_comment(),
                b'"' => self.skip_quoted(self.at + 1),
                b'\'' => self.skip_char_or_lifetime(),
                b'(' | b'[' | b'{' => {
                    self.open()?;
                    self.at += 1;
                }
                b')' | b']' | b'}' => {
                    self.close(byte != b'}')?;
                    self.at += 1;
                    if byte == b'}' && self.next_token_starts_anew() {
                        self.separate();
                    }
                }
                b',' | b';' => {
                    self.separate();
                    self.at += 1;
                }
                b'=' if self.peek(1) == Some(b'>') => {
                    self.separate();
                    self.at += 2;
                }
                b'.' | b'+' | b'-' | b'*' | b'/' | b'%' | b'!' | b'&' | b'|' | b'^' | b'<'
                | b'>' | b'=' | b'?' | b'@' => {
                    self.count()?;
                    self.at += 1;
                }
                b if is_identifier_start(b) => self.word()?,
                _ => self.at += 1,
            }
        }
        Ok(())
    }

    /// Does the token after a closing `}` begin a new item or statement rather than continue
    /// an expression? A word other than `as` and `else` (`fn`, `pub`, `impl`, `let`, a
    /// name) or an attribute (`#`) cannot continue one, so syn's recursion ends at the `}`:
    /// the items of an `impl` block (the 400-odd methods of tch's `tensor_generated.rs`)
    /// then count as separate, as statements ended by `;` do. Operators, `.`, `?`, `(`,
    /// `[`, `as` and `else` after a `}` keep counting (`{a} + {b} + …` nests).
    fn next_token_starts_anew(&self) -> bool {
        let mut at = self.at;
        loop {
            match self.bytes.get(at) {
                Some(b) if b.is_ascii_whitespace() => at += 1,
                Some(b'/') if self.bytes.get(at + 1) == Some(&b'/') => {
                    at = memchr::memchr(b'\n', &self.bytes[at..])
                        .map_or(self.bytes.len(), |p| at + p + 1);
                }
                Some(b'/') if self.bytes.get(at + 1) == Some(&b'*') => {
                    let mut inner = Scan {
                        bytes: self.bytes,
                        at,
                        levels: Vec::new(),
                        chain_total: 0,
                    };
                    inner.skip_block_comment();
                    at = inner.at;
                }
                Some(b'#') => return true,
                Some(&b) if is_identifier_start(b) => {
                    let end = self.bytes[at..]
                        .iter()
                        .position(|&b| !is_identifier_continue(b))
                        .map_or(self.bytes.len(), |p| at + p);
                    return !matches!(&self.bytes[at..end], b"as" | b"else");
                }
                _ => return false,
            }
        }
    }

    fn peek(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.at + ahead).copied()
    }

    fn open(&mut self) -> Result<(), TooDeep> {
        if self.levels.len() > MAX_BRACKET_DEPTH {
            return Err(TooDeep {
                offset: self.at,
                message: format!(
                    "nesting too deep: brackets nested more than {MAX_BRACKET_DEPTH} levels; the file is not analysed"
                ),
            });
        }
        self.levels.push(0);
        self.check_expression_depth()
    }

    /// Close a bracket level. A closing `)` or `]` continues the enclosing expression
    /// (`f(a)(b)`, `x[0][1]` nest one level per group), so it counts there; a closing `}`
    /// usually ends a statement (`if a {} if b {}` is flat), and the chains a block can
    /// take part in (`else if`, operators after it) are counted by their own tokens.
    fn close(&mut self, continues_expression: bool) -> Result<(), TooDeep> {
        if self.levels.len() > 1 {
            if let Some(count) = self.levels.pop() {
                self.chain_total -= count;
            }
        }
        if continues_expression {
            self.count()?;
        }
        Ok(())
    }

    fn separate(&mut self) {
        if let Some(count) = self.levels.last_mut() {
            self.chain_total -= *count;
            *count = 0;
        }
    }

    fn count(&mut self) -> Result<(), TooDeep> {
        if let Some(count) = self.levels.last_mut() {
            *count += 1;
            self.chain_total += 1;
        }
        self.check_expression_depth()
    }

    fn check_expression_depth(&self) -> Result<(), TooDeep> {
        if self.chain_total + self.levels.len() > MAX_EXPRESSION_DEPTH {
            return Err(TooDeep {
                offset: self.at,
                message: format!(
                    "expression nested too deeply (more than {MAX_EXPRESSION_DEPTH} operators and brackets in one expression); the file is not analysed"
                ),
            });
        }
        Ok(())
    }

    /// An identifier or keyword; raw strings (`r"…"`, `r#"…"#`, `br"…"`, `cr"…"`) and byte
    /// or C strings (`b"…"`, `c"…"`) start like identifiers and are skipped here too.
    fn word(&mut self) -> Result<(), TooDeep> {
        let start = self.at;
        let prefix_end = self.bytes[start..]
            .iter()
            .position(|&b| !matches!(b, b'r' | b'b' | b'c'))
            .map_or(self.bytes.len(), |p| start + p);
        let prefix = &self.bytes[start..prefix_end];
        if matches!(prefix, b"r" | b"br" | b"cr") {
            let hashes = self.bytes[prefix_end..]
                .iter()
                .take_while(|&&b| b == b'#')
                .count();
            if self.bytes.get(prefix_end + hashes) == Some(&b'"') {
                self.skip_raw(prefix_end + hashes + 1, hashes);
                return Ok(());
            }
        }
        if matches!(prefix, b"b" | b"c") {
            match self.bytes.get(prefix_end) {
                Some(b'"') => {
                    self.skip_quoted(prefix_end + 1);
                    return Ok(());
                }
                Some(b'\'') if prefix == b"b" => {
                    self.at = prefix_end;
                    self.skip_char_or_lifetime();
                    return Ok(());
                }
                _ => {}
            }
        }
        let end = self.bytes[start..]
            .iter()
            .position(|&b| !is_identifier_continue(b))
            .map_or(self.bytes.len(), |p| start + p);
        self.at = end;
        match &self.bytes[start..end] {
            b"as" | b"else" | b"return" | b"break" | b"yield" | b"box" | b"move" => self.count(),
            _ => Ok(()),
        }
    }

    fn skip_line_comment(&mut self) {
        self.at = memchr::memchr(b'\n', &self.bytes[self.at..])
            .map_or(self.bytes.len(), |p| self.at + p + 1);
    }

    /// Block comments nest in Rust: `/* a /* b */ c */` is one comment.
    fn skip_block_comment(&mut self) {
        let mut depth = 0usize;
        while self.at < self.bytes.len() {
            match (self.bytes[self.at], self.peek(1)) {
                (b'/', Some(b'*')) => {
                    depth += 1;
                    self.at += 2;
                }
                (b'*', Some(b'/')) => {
                    depth -= 1;
                    self.at += 2;
                    if depth == 0 {
                        return;
                    }
                }
                _ => self.at += 1,
            }
        }
    }

    /// A `"…"` literal whose body starts at `body`; backslash escapes skip one byte.
    fn skip_quoted(&mut self, body: usize) {
        let mut at = body;
        while let Some(&b) = self.bytes.get(at) {
            match b {
                b'\\' => at += 2,
                b'"' => {
                    self.at = at + 1;
                    return;
                }
                _ => at += 1,
            }
        }
        self.at = self.bytes.len();
    }

    /// A raw string body starting at `body`, closed by `"` and `hashes` `#`s.
    fn skip_raw(&mut self, body: usize, hashes: usize) {
        let mut at = body;
        while let Some(offset) = memchr::memchr(b'"', &self.bytes[at..]) {
            let quote = at + offset;
            let closing = &self.bytes[quote + 1..];
            if closing.len() >= hashes && closing[..hashes].iter().all(|&b| b == b'#') {
                self.at = quote + 1 + hashes;
                return;
            }
            at = quote + 1;
        }
        self.at = self.bytes.len();
    }

    /// `'x'`, `'\n'`, `'\u{1F600}'`, `'日'` are characters; `'a` and `'outer:` are lifetimes
    /// and labels (no closing quote right after one character).
    fn skip_char_or_lifetime(&mut self) {
        let body = self.at + 1;
        match self.bytes.get(body) {
            Some(b'\\') => {
                // The escaped character itself may be a quote (`'\''`): search after it.
                let close = self
                    .bytes
                    .get(body + 2..)
                    .and_then(|rest| memchr::memchr(b'\'', rest))
                    .map(|p| body + 2 + p);
                // An escape is at most `\u{10FFFF}`; a quote further away is not ours.
                self.at = match close {
                    Some(close) if close - body <= 10 => close + 1,
                    _ => body,
                };
            }
            Some(&first) => {
                let width = utf8_width(first);
                if self.bytes.get(body + width) == Some(&b'\'') {
                    self.at = body + width + 1;
                } else {
                    self.at = body;
                }
            }
            None => self.at = body,
        }
    }
}

fn is_identifier_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_identifier_continue(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Length of the UTF-8 sequence that starts with `first`.
fn utf8_width(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_code_passes() {
        let source = r#"
            fn forward(&self, xs: &Tensor) -> Result<Tensor> {
                let (b, t, _) = xs.dims3()?;
                let q = self.q.forward(xs)?.reshape((b, t, self.h, ()))?.transpose(1, 2)?;
                let s = "((((((((( not counted";
                let c = '(';
                // ))))))) ((((((
                Ok(q)
            }
        "#;
        assert_eq!(check_nesting(source), Ok(()));
    }

    #[test]
    fn deep_brackets_are_refused_at_the_first_bracket_too_many() {
        let ok = format!(
            "{}{}",
            "(".repeat(MAX_BRACKET_DEPTH),
            ")".repeat(MAX_BRACKET_DEPTH)
        );
        assert_eq!(check_nesting(&ok), Ok(()));
        let deep = format!("fn f() {{ {} }}", "[".repeat(MAX_BRACKET_DEPTH));
        let err = check_nesting(&deep).unwrap_err();
        assert!(err.message.starts_with("nesting too deep"), "{err:?}");
        // `fn f() { ` is 9 bytes, then the 256th `[` is the 257th open bracket.
        assert_eq!(err.offset, 9 + MAX_BRACKET_DEPTH - 1);
    }

    #[test]
    fn long_operator_chains_are_refused() {
        let sum = format!(
            "fn f() {{ let x = {}a; }}",
            "a + ".repeat(MAX_EXPRESSION_DEPTH)
        );
        assert!(check_nesting(&sum).is_err());
        let calls = format!("fn f() {{ g{}; }}", "()".repeat(MAX_EXPRESSION_DEPTH));
        assert!(check_nesting(&calls).is_err());
        let returns = format!("fn f() {{ {} 1 }}", "return ".repeat(MAX_EXPRESSION_DEPTH));
        assert!(check_nesting(&returns).is_err());
        // Separators reset the count: a long array literal is flat.
        let array = format!("const A: [i32; 5000] = [{}];", "-1, ".repeat(5000));
        assert_eq!(check_nesting(&array), Ok(()));
        // Statements are separated by `;`.
        let body = format!("fn f() {{ {} }}", "x = x + 1; ".repeat(5000));
        assert_eq!(check_nesting(&body), Ok(()));
    }

    /// Items in a block are separate: tch's `tensor_generated.rs` has some 1 700 methods
    /// like these in one `impl`, each with a `->` and `&`s that used to add up.
    #[test]
    fn items_after_a_block_start_a_new_count() {
        // No `,` or `;` at the impl's level between the methods' `->` and `<…>`s.
        let method = "pub fn internal_and_<S: Into<Scalar>>(&mut self, other: S) -> Tensor { self.f_internal_and_(other).unwrap() }\n";
        for separator in [
            "",
            "#[allow(clippy::all)]\n",
            "// a comment\n",
            "/* one */ ",
        ] {
            let source = format!(
                "impl Tensor {{\n{}}}\n",
                format!("{separator}{method}").repeat(3_000)
            );
            assert_eq!(check_nesting(&source), Ok(()), "{separator:?}");
        }
        let fns = "fn f() -> i32 { 1 }\n".repeat(5_000);
        assert_eq!(check_nesting(&fns), Ok(()));
        // A chain of blocks joined by operators, `.` or `else` still counts.
        for joint in [" + ", ".", " else "] {
            let chain = format!(
                "fn f() {{ let x = {}{{1}}; }}",
                format!("{{1}}{joint}").repeat(MAX_EXPRESSION_DEPTH)
            );
            assert!(check_nesting(&chain).is_err(), "{joint:?}");
        }
    }

    #[test]
    fn literals_and_comments_are_skipped() {
        let junk = "(".repeat(1000);
        for source in [
            format!("// {junk}\nfn f() {{}}"),
            format!("/* /* {junk} */ {junk} */ fn f() {{}}"),
            format!("const S: &str = \"\\\" {junk}\";"),
            format!("const S: &str = r#\"\" {junk}\"#;"),
            format!("const S: &[u8] = br\"{junk}\";"),
            format!("const S: &[u8] = b\"{junk}\";"),
        ] {
            assert_eq!(check_nesting(&source), Ok(()), "{source}");
        }
        // A lifetime is not a character literal: the `(` after it is real.
        let lifetimes = format!("fn f<'a>(x: &'a str) {{ {} }}", "(".repeat(300));
        assert!(check_nesting(&lifetimes).is_err());
        // Multi-byte character literals.
        assert_eq!(check_nesting("const C: char = '日'; fn f() {}"), Ok(()));
        assert_eq!(
            check_nesting("const C: char = '\\u{1F600}'; fn f() {}"),
            Ok(())
        );
    }

    #[test]
    fn unterminated_literals_end_the_scan_quietly() {
        for source in ["\"abc", "r#\"abc", "/* abc", "'", "b'", "'\\"] {
            assert_eq!(check_nesting(source), Ok(()), "{source}");
        }
    }
}
