//! The op-chain syntax of `stridelint replay`: the tail of a PyTorch expression, with
//! numbers where the code has names.
//!
//! ```text
//! chain     := step+                              permute(0, 2, 1, 3).reshape(16, 32, -1)
//! step      := "."? NAME ( "(" arguments? ")" )?  transpose(1,2)   .t()   T   contiguous
//!            | "[" index ("," index)* "]"         [:, :3]   [0]   [..., None, ::2]
//! arguments := argument ("," argument)* ","?
//! argument  := NAME "=" value | value             flatten(start_dim=2)
//! value     := INT | FLOAT | True | False | None | "..." | 'text' | "text"
//!            | DOTTED.NAME                        memory_format=torch.channels_last
//!            | "(" values ")" | "[" values "]"    permute((0, 2, 1, 3))
//! index     := value | value? ":" value? (":" value?)?
//! ```
//!
//! Parsing only builds [`ArgValue`]s; which names exist and how arguments bind is the op
//! table's business (`rules/torch.toml`), so every torch method the table knows replays.

use std::fmt;

use stridelint::ops::{ArgValue, SliceArg};

/// One call in a chain.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The step as written, for reports (`permute(0,2,1,3)`, `[:, :3]`).
    pub text: String,
    pub call: Call,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    /// `x.name(…)`, or `x.name` without parentheses (an attribute such as `T`, or a call
    /// with no arguments).
    Method {
        name: String,
        parenthesized: bool,
        positional: Vec<ArgValue<i64>>,
        keywords: Vec<(String, ArgValue<i64>)>,
    },
    /// `x[…]`: one positional argument per comma-separated entry (`__getitem__`).
    Subscript(Vec<ArgValue<i64>>),
}

/// A chain that does not parse; `column` is 1-based, in characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub message: String,
    pub column: usize,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at column {})", self.message, self.column)
    }
}

impl std::error::Error for SyntaxError {}

/// Parses one command-line argument into its steps.
pub fn parse_chain(text: &str) -> Result<Vec<Step>, SyntaxError> {
    let mut parser = Parser {
        chars: text.chars().collect(),
        pos: 0,
        depth: 0,
    };
    let mut steps = Vec::new();
    parser.skip_space();
    while !parser.at_end() {
        let start = parser.pos;
        let call = parser.step()?;
        let text: String = parser.chars[start..parser.pos].iter().collect();
        steps.push(Step {
            text: text.trim().trim_start_matches('.').to_string(),
            call,
        });
        parser.skip_space();
    }
    if steps.is_empty() {
        return Err(parser.error("expected an op such as `transpose(1, 2)`"));
    }
    Ok(steps)
}

/// Brackets nested deeper than this are refused (the parser recurses per level), as
/// Python refuses them: `too many nested parentheses`.
const MAX_NESTING: usize = 200;

struct Parser {
    chars: Vec<char>,
    pos: usize,
    /// Brackets open around the current position.
    depth: usize,
}

impl Parser {
    fn at_end(&self) -> bool {
        self.pos >= self.chars.len()
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_is(&self, text: &str) -> bool {
        text.chars()
            .enumerate()
            .all(|(i, c)| self.chars.get(self.pos + i) == Some(&c))
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_space();
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<(), SyntaxError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.error(&format!("expected `{c}`")))
        }
    }

    fn error(&self, message: &str) -> SyntaxError {
        let found = match self.peek() {
            Some(c) => format!(", found `{c}`"),
            None => ", found the end".to_string(),
        };
        SyntaxError {
            message: format!("{message}{found}"),
            column: self.pos + 1,
        }
    }

    fn step(&mut self) -> Result<Call, SyntaxError> {
        if self.eat('[') {
            let entries = self.comma_list(']', Parser::index)?;
            return Ok(Call::Subscript(entries));
        }
        self.eat('.');
        self.skip_space();
        let name = self
            .name()
            .ok_or_else(|| self.error("expected an op name or `[`"))?;
        if !self.eat('(') {
            return Ok(Call::Method {
                name,
                parenthesized: false,
                positional: Vec::new(),
                keywords: Vec::new(),
            });
        }
        let mut positional = Vec::new();
        let mut keywords = Vec::new();
        loop {
            if self.eat(')') {
                break;
            }
            if let Some(keyword) = self.keyword() {
                keywords.push((keyword, self.value()?));
            } else if !keywords.is_empty() {
                return Err(self.error("positional argument after a keyword argument"));
            } else {
                positional.push(self.value()?);
            }
            if !self.eat(',') {
                self.expect(')')?;
                break;
            }
        }
        Ok(Call::Method {
            name,
            parenthesized: true,
            positional,
            keywords,
        })
    }

    /// `NAME =` (not `==`), consumed only when it is there.
    fn keyword(&mut self) -> Option<String> {
        let start = self.pos;
        self.skip_space();
        if let Some(name) = self.name() {
            if self.eat('=') && self.peek() != Some('=') {
                return Some(name);
            }
        }
        self.pos = start;
        None
    }

    fn name(&mut self) -> Option<String> {
        let start = self.pos;
        if !self.peek().is_some_and(|c| c.is_alphabetic() || c == '_') {
            return None;
        }
        while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            self.pos += 1;
        }
        Some(self.chars[start..self.pos].iter().collect())
    }

    /// `items` up to `close`, comma-separated, trailing comma allowed.
    fn comma_list(
        &mut self,
        close: char,
        item: fn(&mut Parser) -> Result<ArgValue<i64>, SyntaxError>,
    ) -> Result<Vec<ArgValue<i64>>, SyntaxError> {
        let mut items = Vec::new();
        loop {
            if self.eat(close) {
                return Ok(items);
            }
            items.push(item(self)?);
            if !self.eat(',') {
                self.expect(close)?;
                return Ok(items);
            }
        }
    }

    /// A subscript entry: a value or a slice `start:stop:step` with parts optional.
    fn index(&mut self) -> Result<ArgValue<i64>, SyntaxError> {
        self.skip_space();
        let start = if self.peek() == Some(':') {
            ArgValue::None
        } else {
            self.value()?
        };
        if !self.eat(':') {
            return Ok(start);
        }
        let stop = self.slice_part()?;
        let step = if self.eat(':') {
            self.slice_part()?
        } else {
            ArgValue::None
        };
        Ok(ArgValue::Slice(Box::new(SliceArg { start, stop, step })))
    }

    fn slice_part(&mut self) -> Result<ArgValue<i64>, SyntaxError> {
        self.skip_space();
        match self.peek() {
            Some(':' | ',' | ']') => Ok(ArgValue::None),
            _ => self.value(),
        }
    }

    fn value(&mut self) -> Result<ArgValue<i64>, SyntaxError> {
        self.skip_space();
        if self.peek_is("...") {
            self.pos += 3;
            return Ok(ArgValue::Ellipsis);
        }
        match self.peek() {
            Some(open @ ('(' | '[')) => {
                let close = if open == '(' { ')' } else { ']' };
                self.nested(|p| Ok(ArgValue::IntList(p.comma_list(close, Parser::value)?)))
            }
            Some(quote @ ('\'' | '"')) => self.string(quote),
            Some(c) if c.is_ascii_digit() || c == '-' || c == '+' || c == '.' => self.number(),
            Some(c) if c.is_alphabetic() || c == '_' => self.word(),
            _ => Err(self.error("expected a value")),
        }
    }

    /// Parses a bracketed value one level deeper, at most [`MAX_NESTING`] levels.
    fn nested(
        &mut self,
        inner: impl FnOnce(&mut Parser) -> Result<ArgValue<i64>, SyntaxError>,
    ) -> Result<ArgValue<i64>, SyntaxError> {
        if self.depth >= MAX_NESTING {
            return Err(SyntaxError {
                message: format!("brackets nested more than {MAX_NESTING} deep"),
                column: self.pos + 1,
            });
        }
        self.depth += 1;
        self.pos += 1;
        let value = inner(self);
        self.depth -= 1;
        value
    }

    fn string(&mut self, quote: char) -> Result<ArgValue<i64>, SyntaxError> {
        let start = self.pos;
        self.pos += 1;
        while let Some(c) = self.peek() {
            self.pos += 1;
            if c == quote {
                let text = self.chars[start + 1..self.pos - 1].iter().collect();
                return Ok(ArgValue::Str(text));
            }
        }
        self.pos = start;
        Err(self.error("unterminated string"))
    }

    fn number(&mut self) -> Result<ArgValue<i64>, SyntaxError> {
        let start = self.pos;
        if matches!(self.peek(), Some('-' | '+')) {
            self.pos += 1;
        }
        let mut is_float = false;
        while let Some(c) = self.peek() {
            let exponent_sign =
                matches!(c, '-' | '+') && matches!(self.chars.get(self.pos - 1), Some('e' | 'E'));
            if c.is_ascii_digit() || c == '_' || exponent_sign {
                self.pos += 1;
            } else if matches!(c, '.' | 'e' | 'E') {
                is_float = true;
                self.pos += 1;
            } else {
                break;
            }
        }
        let text: String = self.chars[start..self.pos]
            .iter()
            .filter(|&&c| c != '_')
            .collect();
        let parsed = if is_float {
            text.parse::<f64>().ok().map(ArgValue::Float)
        } else {
            text.parse::<i64>().ok().map(ArgValue::Int)
        };
        parsed.ok_or_else(|| {
            self.pos = start;
            self.error(&format!("`{text}` is not a number"))
        })
    }

    /// `True`, `False`, `None`, or a dotted constant such as `torch.channels_last`.
    fn word(&mut self) -> Result<ArgValue<i64>, SyntaxError> {
        let start = self.pos;
        let mut dotted = self.name().unwrap_or_default();
        while self.peek() == Some('.')
            && self
                .chars
                .get(self.pos + 1)
                .is_some_and(|c| c.is_alphabetic() || *c == '_')
        {
            self.pos += 1;
            dotted.push('.');
            dotted.push_str(&self.name().unwrap_or_default());
        }
        Ok(match dotted.as_str() {
            "True" => ArgValue::Bool(true),
            "False" => ArgValue::Bool(false),
            "None" => ArgValue::None,
            _ if dotted.contains('.') => ArgValue::Str(dotted),
            _ => {
                return Err(SyntaxError {
                    message: format!(
                        "`{dotted}` is a name; replay needs numbers (sizes come from --shape)"
                    ),
                    column: start + 1,
                });
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn method(name: &str, positional: Vec<ArgValue<i64>>) -> Call {
        Call::Method {
            name: name.into(),
            parenthesized: true,
            positional,
            keywords: Vec::new(),
        }
    }

    #[test]
    fn single_calls_parse_into_positional_arguments() {
        let steps = parse_chain("permute(0,2,1,3)").unwrap();
        assert_eq!(steps.len(), 1);
        assert_eq!(steps[0].text, "permute(0,2,1,3)");
        assert_eq!(
            steps[0].call,
            method(
                "permute",
                vec![
                    ArgValue::Int(0),
                    ArgValue::Int(2),
                    ArgValue::Int(1),
                    ArgValue::Int(3)
                ]
            )
        );
        assert_eq!(
            parse_chain("reshape(16, 32, -1)").unwrap()[0].call,
            method(
                "reshape",
                vec![ArgValue::Int(16), ArgValue::Int(32), ArgValue::Int(-1)]
            )
        );
    }

    #[test]
    fn chains_split_into_steps_with_their_text() {
        let steps = parse_chain(".transpose(1, 2).contiguous() .view((16, 32, -1))").unwrap();
        let texts: Vec<&str> = steps.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(
            texts,
            ["transpose(1, 2)", "contiguous()", "view((16, 32, -1))"]
        );
        assert_eq!(
            steps[2].call,
            method("view", vec![ArgValue::ints(&[16, 32, -1])])
        );
    }

    #[test]
    fn keywords_constants_and_attributes() {
        let steps =
            parse_chain("flatten(start_dim=2).contiguous(memory_format=torch.channels_last).T")
                .unwrap();
        assert_eq!(
            steps[0].call,
            Call::Method {
                name: "flatten".into(),
                parenthesized: true,
                positional: vec![],
                keywords: vec![("start_dim".into(), ArgValue::Int(2))],
            }
        );
        match &steps[1].call {
            Call::Method { keywords, .. } => {
                assert_eq!(keywords[0].1, ArgValue::Str("torch.channels_last".into()))
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            steps[2].call,
            Call::Method {
                name: "T".into(),
                parenthesized: false,
                positional: vec![],
                keywords: vec![]
            }
        );
    }

    #[test]
    fn subscripts_hold_slices_ellipsis_and_none() {
        let steps = parse_chain("[:, :3][..., None, ::2, 1:-1]").unwrap();
        let full = ArgValue::slice(None, None, None);
        assert_eq!(
            steps[0].call,
            Call::Subscript(vec![full, ArgValue::slice(None, Some(3), None)])
        );
        assert_eq!(
            steps[1].call,
            Call::Subscript(vec![
                ArgValue::Ellipsis,
                ArgValue::None,
                ArgValue::slice(None, None, Some(2)),
                ArgValue::slice(Some(1), Some(-1), None),
            ])
        );
    }

    #[test]
    fn numbers_floats_and_strings() {
        let steps = parse_chain("mul(2.5e-1).pow(2).to('cpu')").unwrap();
        assert_eq!(steps[0].call, method("mul", vec![ArgValue::Float(0.25)]));
        assert_eq!(steps[1].call, method("pow", vec![ArgValue::Int(2)]));
        assert_eq!(
            steps[2].call,
            method("to", vec![ArgValue::Str("cpu".into())])
        );
    }

    #[test]
    fn errors_point_at_the_problem() {
        let e = parse_chain("view(B, -1)").unwrap_err();
        assert!(e.message.contains("`B` is a name"), "{e}");
        assert_eq!(e.column, 6);
        assert_eq!(
            parse_chain("view(2, 3").unwrap_err().message,
            "expected `)`, found the end"
        );
        assert!(parse_chain("").is_err());
        assert!(parse_chain("view(dim=1, 2)")
            .unwrap_err()
            .message
            .contains("after a keyword"));
        assert!(parse_chain("to('cpu)")
            .unwrap_err()
            .message
            .contains("unterminated"));
    }
}
