//! A hand-written Python parser that produces the IR directly: a tokenizer pulled one
//! token at a time (`lexer`), and recursive descent over statements (`statements`) and
//! expressions (`expressions`), following CPython's grammar (3.8 to 3.14: walrus, `match`,
//! PEP 695/696 type parameters, PEP 701 f-strings, PEP 750 t-strings, PEP 758 `except A, B:`).
//!
//! The IR is built while parsing; there is no syntax tree. Subexpressions the IR does not
//! model (comprehensions, lambdas, dicts, f-strings with fields, ...) are parsed without
//! building anything (see [`Mode`]), so memory follows the IR, not the tokens.
//!
//! Robustness: nothing panics, and recursion is bounded by one depth counter shared by
//! statements and expressions ([`MAX_DEPTH`]); deeper syntax is consumed by a flat token
//! scan and lowered as opaque, and the first such place in a file is reported as a syntax
//! error (SL999), so the loss is never silent. Chains that do not recurse (`a + b + ...`, `x.f().g()...`,
//! `elif`s) keep their outer levels and fold the inner ones into one opaque node, so the IR
//! stays at most about `MAX_DEPTH` levels deep. After a syntax error the parser records it
//! and goes on at the next line that can start a statement (or, for a broken `def`/`class`
//! header, with the block below it), so everything else in the file is still lowered.

mod expressions;
mod lexer;
mod statements;

use rustc_hash::FxHashSet as HashSet;
use std::sync::Arc;

use lexer::{Lexer, Tok, Token};

use super::{ParseOutcome, SyntaxError, MAX_REPORTED_ERRORS};
use crate::ir::{self, Expr, ExprKind, Span, Stmt, Target, Targets};

/// How many syntax levels (statements and expressions together) are parsed by recursion;
/// deeper ones are skimmed and lowered as opaque. CPython refuses 201 nested brackets and
/// 100 levels of indentation (the lexer reports both, as it does), and its parser's stack
/// holds 200 brackets inside up to 64 blocks: with room for that, whatever CPython accepts
/// in brackets and blocks parses in full. Each level costs one parser frame and one frame
/// of each consumer walking the IR: 300 stay well inside a 2 MiB worker stack.
pub(super) const MAX_DEPTH: u32 = 300;

/// What parsing an expression produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Mode {
    /// The IR of the expression.
    Build,
    /// Nothing (the expression is opaque), but every walrus inside binds its name to an
    /// unknown value.
    Opaque,
    /// Nothing at all (lambda bodies, decorators, annotations, class-level statements).
    Ignore,
}

/// A syntax error was recorded; the statement being parsed is abandoned.
struct Fail;

type PResult<T> = Result<T, Fail>;

pub(super) fn parse(source: &str) -> ParseOutcome {
    let mut parser = Parser::new(source);
    let body = parser.module();
    let mut errors = std::mem::take(&mut parser.lexer.side_errors);
    errors.sort_by_key(|error| (error.span.start, error.span.end));
    errors.truncate(MAX_REPORTED_ERRORS);
    ParseOutcome {
        module: ir::Module {
            language: ir::Language::Python,
            body,
            functions: parser.module_functions,
            classes: parser.module_classes,
        },
        errors,
    }
}

struct Parser<'s> {
    text: &'s str,
    lexer: Lexer<'s>,
    tok: Token,
    peeked: Option<Token>,
    /// End of the last token consumed (spans end here).
    prev_end: u32,
    depth: u32,
    mode: Mode,
    /// Walrus expressions are not bound while this is above zero (annotations).
    no_walrus: u32,
    /// Greater than zero inside an expression that may not be evaluated (right side of
    /// `and`/`or`, branches of `a if c else b`, later links of a comparison chain).
    maybe_unevaluated: u32,
    /// Above zero while parsing class-level statements the IR does not keep: nothing they
    /// define may reach the module.
    discard: u32,
    /// Bindings made by walrus expressions in the statement being parsed; emitted just
    /// before it (the IR has no assignment expression).
    walrus: Vec<Stmt>,
    module_functions: Vec<Arc<ir::Function>>,
    module_classes: Vec<Arc<ir::Class>>,
    /// Set after error recovery, so the consequences (an unexpected indent) are not
    /// reported as errors of their own.
    recovering: bool,
    /// Whether the depth limit was reached (reported once per file, see [`Parser::too_deep`]).
    reported_too_deep: bool,
    /// Every identifier and string seen so far, each stored once (see [`ir::Name`]).
    names: HashSet<ir::Name>,
}

impl<'s> Parser<'s> {
    fn new(text: &'s str) -> Self {
        let mut lexer = Lexer::new(text);
        let tok = lexer.next_token();
        Parser {
            text,
            lexer,
            tok,
            peeked: None,
            prev_end: 0,
            depth: 0,
            mode: Mode::Build,
            no_walrus: 0,
            maybe_unevaluated: 0,
            discard: 0,
            walrus: Vec::new(),
            module_functions: Vec::new(),
            module_classes: Vec::new(),
            recovering: false,
            reported_too_deep: false,
            names: HashSet::default(),
        }
    }

    // ----- tokens -----

    fn bump(&mut self) {
        if !matches!(
            self.tok.kind,
            Tok::Newline | Tok::Indent | Tok::Dedent | Tok::Eof
        ) {
            self.prev_end = self.tok.end;
        }
        self.tok = match self.peeked.take() {
            Some(token) => token,
            None => self.lexer.next_token(),
        };
    }

    fn peek(&mut self) -> Token {
        if let Some(token) = self.peeked {
            return token;
        }
        let token = self.lexer.next_token();
        self.peeked = Some(token);
        token
    }

    fn at(&self, kind: Tok) -> bool {
        self.tok.kind == kind
    }

    fn eat(&mut self, kind: Tok) -> bool {
        if self.at(kind) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn text_of(&self, token: Token) -> &'s str {
        self.text
            .get(token.start as usize..token.end as usize)
            .unwrap_or("")
    }

    /// `text` as a shared [`ir::Name`], allocated only the first time it is seen.
    fn intern(&mut self, text: &str) -> ir::Name {
        if let Some(name) = self.names.get(text) {
            return name.clone();
        }
        let name = ir::Name::from(text);
        self.names.insert(name.clone());
        name
    }

    /// The text of `token`, interned.
    fn name_of(&mut self, token: Token) -> ir::Name {
        let text = self.text_of(token);
        self.intern(text)
    }

    fn tok_text(&self) -> &'s str {
        self.text_of(self.tok)
    }

    fn is_soft_keyword(&self, word: &str) -> bool {
        self.at(Tok::Name) && self.tok_text() == word
    }

    fn span_from(&self, start: u32) -> Span {
        Span {
            start,
            end: self.prev_end.max(start),
        }
    }

    fn unknown_from(&self, start: u32) -> Expr {
        Expr::new(ExprKind::Unknown, self.span_from(start))
    }

    /// Scans the tokens after the current one (the peeked one first) without consuming
    /// them, until `visit` returns a verdict; `None` at the end of the file.
    fn scan_ahead<R>(&mut self, mut visit: impl FnMut(Token) -> Option<R>) -> Option<R> {
        if let Some(token) = self.peeked {
            if let Some(verdict) = visit(token) {
                return Some(verdict);
            }
        }
        let mut lexer = self.lexer.clone();
        loop {
            let token = lexer.next_token();
            if let Some(verdict) = visit(token) {
                return Some(verdict);
            }
            if token.kind == Tok::Eof {
                return None;
            }
        }
    }

    // ----- errors -----

    fn record_error(&mut self, span: Span, message: String) {
        let errors = &mut self.lexer.side_errors;
        if errors.len() < MAX_REPORTED_ERRORS && !errors.iter().any(|e| e.span == span) {
            errors.push(SyntaxError { span, message });
        }
    }

    /// Whether another error would still be reported (describing one costs a scan of the
    /// text around it, which must not happen for every error of a file of junk).
    fn reports_errors(&self) -> bool {
        self.lexer.side_errors.len() < MAX_REPORTED_ERRORS
    }

    /// Records that the current token is not what the grammar allows here.
    fn unexpected(&mut self) -> Fail {
        let token = self.tok;
        if !self.reports_errors() {
            return Fail;
        }
        if token.kind == Tok::Error {
            let message = std::mem::take(&mut self.lexer.error_message);
            self.record_error(token.span(), message);
            return Fail;
        }
        if let Some(fail) = self.unclosed_bracket(token) {
            return fail;
        }
        if let Some(fail) = self.legacy_statement() {
            return fail;
        }
        let (span, message) = match token.kind {
            Tok::Eof => (token.span(), "unexpected end of file".to_string()),
            Tok::Newline => {
                let rest = self.text.get(token.start as usize..).unwrap_or("");
                let at = self.line_end_position(token);
                let span = Span { start: at, end: at };
                if rest.trim().is_empty() {
                    (span, "unexpected end of file".to_string())
                } else {
                    (span, "unexpected end of line".to_string())
                }
            }
            Tok::Indent => (token.span(), "unexpected indent".to_string()),
            Tok::Dedent => (token.span(), "unexpected end of block".to_string()),
            _ => (
                token.span(),
                format!("unexpected token `{}`", quote(self.text_of(token))),
            ),
        };
        self.record_error(span, message);
        Fail
    }

    /// Where CPython reports an error at `token`: a line's end starts at its comment, if it
    /// has one (`x = 1 +  # note` is reported at the `#`).
    fn line_end_position(&self, token: Token) -> u32 {
        if token.kind != Tok::Newline {
            return token.start;
        }
        let between = self
            .text
            .get(self.prev_end as usize..token.start as usize)
            .unwrap_or("");
        let blank = between.len() - between.trim_start_matches([' ', '\t', '\x0c']).len();
        if between[blank..].starts_with('#') {
            self.prev_end + blank as u32
        } else {
            token.start
        }
    }

    /// An error at `token` while a bracket opened on an earlier line is still open is most
    /// likely that bracket's fault (as CPython reports it).
    fn unclosed_bracket(&mut self, token: Token) -> Option<Fail> {
        let (open, at) = self.lexer.innermost_open_bracket()?;
        let earlier_line = self
            .text
            .as_bytes()
            .get(at as usize..token.start as usize)
            .is_some_and(|between| between.iter().any(|&b| b == b'\n' || b == b'\r'));
        if token.kind != Tok::Eof && !earlier_line {
            return None;
        }
        let span = Span {
            start: at,
            end: at + 1,
        };
        self.record_error(span, format!("`{}` was never closed", open as char));
        Some(Fail)
    }

    /// Python 2's `print x` / `exec code`: an expression where the name `print` or `exec`
    /// just ended one is reported at the name, with CPython's hint.
    fn legacy_statement(&mut self) -> Option<Fail> {
        let starts_expression = self.can_start_expression()
            && !matches!(self.tok.kind, Tok::LParen | Tok::LBracket)
            || self.at(Tok::Tilde);
        if !starts_expression {
            return None;
        }
        let before = self.text.get(..self.prev_end as usize)?;
        let name = ["print", "exec"]
            .into_iter()
            .find(|name| before.ends_with(name))?;
        let start = before.len() - name.len();
        let preceding = before[..start].trim_end_matches([' ', '\t', '\x0c']);
        let part_of_name = preceding
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.');
        let between = self
            .text
            .get(self.prev_end as usize..self.tok.start as usize)?;
        if part_of_name || between.contains(['\n', '\r']) {
            return None;
        }
        let span = Span {
            start: start as u32,
            end: self.prev_end,
        };
        self.record_error(
            span,
            format!("missing parentheses in call to `{name}`; did you mean `{name}(...)`?"),
        );
        Some(Fail)
    }

    /// Consumes `kind`, or records ``expected `what` `` at the current token.
    fn expect(&mut self, kind: Tok, what: &str) -> PResult<()> {
        if self.eat(kind) {
            return Ok(());
        }
        let token = self.tok;
        if !self.reports_errors() {
            return Err(Fail);
        }
        if matches!(token.kind, Tok::Error | Tok::Eof) {
            return Err(self.unexpected());
        }
        if let Some(fail) = self.unclosed_bracket(token) {
            return Err(fail);
        }
        let at = Span {
            start: token.start,
            end: token.start,
        };
        self.record_error(at, format!("expected `{what}`"));
        Err(Fail)
    }

    fn expect_name(&mut self) -> PResult<Token> {
        if self.at(Tok::Name) {
            let token = self.tok;
            self.bump();
            Ok(token)
        } else {
            Err(self.unexpected())
        }
    }

    // ----- depth -----

    fn enter(&mut self) -> bool {
        if self.depth >= MAX_DEPTH {
            return false;
        }
        self.depth += 1;
        true
    }

    /// Called where [`Parser::enter`] refused a level and the syntax is skimmed: the first
    /// time in a file, records an error there, so that the skipped part is not silently
    /// unanalysed (CPython refuses such nesting too: `too many nested parentheses`, or
    /// "too complex" and a recursion error for thousands of prefix operators or lambdas).
    fn too_deep(&mut self) {
        if self.reported_too_deep {
            return;
        }
        self.reported_too_deep = true;
        let span = self.tok.span();
        self.record_error(
            span,
            format!(
                "nested too deeply (more than {MAX_DEPTH} levels of statements and \
                 expressions); the part beyond is not analysed"
            ),
        );
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn depth_left(&self) -> u32 {
        MAX_DEPTH.saturating_sub(self.depth)
    }

    // ----- modes -----

    fn building(&self) -> bool {
        self.mode == Mode::Build
    }

    /// Runs `f` in `mode`, or in the current mode if that builds less.
    fn in_mode<T>(&mut self, mode: Mode, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = self.mode;
        self.mode = saved.max(mode);
        let result = f(self);
        self.mode = saved;
        result
    }

    // ----- walrus bindings -----

    fn bind(&mut self, name: Token, value: Expr, span: Span) {
        let target = Target::Name(self.name_of(name), name.span());
        self.walrus.push(Stmt::Assign {
            targets: Targets::One(target),
            value,
            span,
        });
    }

    fn take_walrus(&mut self) -> Vec<Stmt> {
        std::mem::take(&mut self.walrus)
    }

    /// The bindings made since `mark` turn out to be in an opaque expression (a generator
    /// whose first element was parsed as a plain expression): their values are unknown.
    fn make_bindings_unknown(&mut self, mark: usize) {
        for binding in self.walrus.iter_mut().skip(mark) {
            if let Stmt::Assign { value, span, .. } = binding {
                *value = Expr::new(ExprKind::Unknown, *span);
            }
        }
    }

    /// Moves the bindings made in `[mark, second)` after those made since `second`: Python
    /// evaluates what was parsed second first (an assignment's value before its targets).
    fn reorder_bindings(&mut self, mark: usize, second: usize) {
        if mark < second && second < self.walrus.len() {
            self.walrus[mark..].rotate_left(second - mark);
        }
    }

    fn emit(&mut self, out: &mut Vec<Stmt>, statement: Stmt) {
        out.append(&mut self.walrus);
        out.push(statement);
    }
}

/// `items` in an allocation of exactly their number, when they are few. A list grown by
/// pushes keeps room for four or more, and the allocator keeps a block that shrinks by half
/// or less in place; most argument lists and blocks hold one or two, kept for the whole
/// analysis. A long list wastes less than a copy of it would cost at the peak.
pub(super) fn exact<T>(mut items: Vec<T>) -> Vec<T> {
    const FEW: usize = 16;
    if items.capacity() == items.len() || items.len() > FEW {
        return items;
    }
    let mut fitted = Vec::with_capacity(items.len());
    fitted.append(&mut items);
    fitted
}

/// A token's text shortened to one line for a message.
fn quote(text: &str) -> String {
    const MAX_QUOTED_CHARS: usize = 24;
    let text = text.trim();
    let first_line = text.lines().next().unwrap_or(text);
    let mut quoted: String = first_line.chars().take(MAX_QUOTED_CHARS).collect();
    if quoted.len() < first_line.len() {
        quoted.push('…');
    }
    quoted
}

/// Converts an expression parsed before an `=` (or `in`, `as`) into an assignment target.
fn to_target(expr: Expr) -> Target {
    let span = expr.span;
    match expr.kind {
        ExprKind::Name(name) => Target::Name(name, span),
        ExprKind::Attr { value, attr } => Target::Attr { value, attr, span },
        ExprKind::Subscript(subscript) => Target::Item {
            value: Box::new(subscript.into_value()),
            span,
        },
        ExprKind::Tuple(elements) | ExprKind::List(elements) => Target::Tuple(
            elements.into_vec().into_iter().map(to_target).collect(),
            span,
        ),
        ExprKind::Starred(inner) => Target::Starred(Box::new(to_target(*inner)), span),
        _ => Target::Other(span),
    }
}

/// Whether an expression can never be assigned to (CPython: "cannot assign to ...").
fn is_invalid_target(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Name(_) | ExprKind::Attr { .. } | ExprKind::Subscript(_) | ExprKind::Unknown => {
            false
        }
        ExprKind::Tuple(elements) | ExprKind::List(elements) => {
            elements.iter().any(is_invalid_target)
        }
        ExprKind::Starred(inner) => is_invalid_target(inner),
        _ => true,
    }
}
