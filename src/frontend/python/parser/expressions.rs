//! Expressions, by precedence from the loosest (`lambda`, conditional) to atoms, as in
//! CPython's grammar. Every function returns the IR of what it parsed in [`Mode::Build`]
//! and an unknown placeholder (no allocation) otherwise.

use super::lexer::{Tok, Token};
use super::{exact, Fail, Mode, PResult, Parser};
use crate::frontend::python::literals::{decode_string_body, parse_float, parse_int, StringPrefix};
use crate::ir::{
    Arg, BinOp, Call, CmpOp, Comprehension, Expr, ExprKind, Lambda, SliceBounds, Span, Subscript,
};

/// What a string literal is, for the rules on concatenating them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StringKind {
    Text,
    Bytes,
    Template,
}

/// Which child of a chain node continues the chain (the left operand, the called or
/// subscripted value): the spine that [`Parser::keep_chain_bounded`] shortens.
fn spine_child(expr: &mut Expr) -> Option<&mut Expr> {
    match &mut expr.kind {
        ExprKind::BinOp { operands, .. } | ExprKind::Compare { operands, .. } => {
            Some(&mut operands[0])
        }
        ExprKind::Call(call) => Some(call.func_mut()),
        ExprKind::Subscript(subscript) => Some(subscript.value_mut()),
        ExprKind::Attr { value, .. } => Some(value),
        _ => None,
    }
}

impl Parser<'_> {
    /// Parses a subexpression one level deeper; beyond `MAX_DEPTH` it is skimmed.
    pub(super) fn child(&mut self, f: impl FnOnce(&mut Self) -> PResult<Expr>) -> PResult<Expr> {
        if !self.enter() {
            self.too_deep();
            return self.skim_expression();
        }
        let result = f(self);
        self.leave();
        result
    }

    /// A left-nested chain (`a + b + ...`, `x.f().g()...`) built in a loop has grown to
    /// `*length` levels: when that reaches the depth left, the innermost quarter is folded
    /// into one unknown value (spanning from the chain's start), so the IR stays bounded
    /// while its outer levels are kept.
    fn keep_chain_bounded(&self, chain: &mut Expr, length: &mut u32, start: u32) {
        let budget = self.depth_left().max(8);
        if *length < budget {
            return;
        }
        let keep = budget * 3 / 4;
        let mut node = chain;
        for _ in 0..keep {
            match spine_child(node) {
                Some(child) => node = child,
                None => return,
            }
        }
        let end = node.span.end;
        *node = Expr::new(ExprKind::Unknown, Span { start, end });
        *length = keep + 1;
    }

    /// Consumes the rest of an expression nested beyond the depth limit with a flat token
    /// scan: up to a `,`, `:`, `=`, closing bracket, `for`, ... at its own bracket level.
    fn skim_expression(&mut self) -> PResult<Expr> {
        let start = self.tok.start;
        let mut depth = 0usize;
        let mut pending_lambdas = 0usize;
        let mut pending_ifs = 0usize;
        let mut consumed = false;
        loop {
            let kind = self.tok.kind;
            match kind {
                Tok::Newline | Tok::Eof | Tok::Indent | Tok::Dedent | Tok::Error => break,
                Tok::LParen | Tok::LBracket | Tok::LBrace | Tok::FieldStart | Tok::FStart => {
                    depth += 1
                }
                Tok::RParen | Tok::RBracket | Tok::RBrace | Tok::FieldEnd | Tok::FEnd => {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                }
                _ if depth > 0 => {}
                Tok::Lambda => pending_lambdas += 1,
                Tok::Colon if pending_lambdas > 0 => pending_lambdas -= 1,
                Tok::If => pending_ifs += 1,
                Tok::Else if pending_ifs > 0 => pending_ifs -= 1,
                Tok::Comma
                | Tok::Colon
                | Tok::Assign
                | Tok::AugAssign
                | Tok::Walrus
                | Tok::Semi
                | Tok::For
                | Tok::Async
                | Tok::As
                | Tok::From
                | Tok::Else
                | Tok::Exclaim => break,
                _ => {}
            }
            if kind == Tok::Name && self.mode != Mode::Ignore && self.no_walrus == 0 {
                let name = self.tok;
                if self.peek().kind == Tok::Walrus {
                    self.bind(name, Expr::new(ExprKind::Unknown, name.span()), name.span());
                }
            }
            consumed = true;
            self.bump();
        }
        if !consumed {
            return Err(self.unexpected());
        }
        Ok(self.unknown_from(start))
    }

    /// Whether the current token can start an expression.
    pub(super) fn can_start_expression(&self) -> bool {
        matches!(
            self.tok.kind,
            Tok::Name
                | Tok::Int
                | Tok::Float
                | Tok::Str
                | Tok::FStart
                | Tok::LParen
                | Tok::LBracket
                | Tok::LBrace
                | Tok::Minus
                | Tok::Plus
                | Tok::Tilde
                | Tok::Not
                | Tok::Lambda
                | Tok::Await
                | Tok::None
                | Tok::True
                | Tok::False
                | Tok::Ellipsis
                | Tok::Star
        )
    }

    // ----- lists of expressions -----

    /// `a, *b, c` (a tuple without parentheses) or a single expression. The second value is
    /// the number of elements when there was a comma.
    pub(super) fn star_expressions(&mut self) -> PResult<(Expr, Option<usize>)> {
        let start = self.tok.start;
        let first = self.star_expression()?;
        if !self.at(Tok::Comma) {
            return Ok((first, None));
        }
        let building = self.building();
        let mut elements = Vec::new();
        if building {
            elements.push(first);
        }
        let mut count = 1;
        while self.eat(Tok::Comma) {
            if !self.can_start_expression() {
                break;
            }
            let element = self.child(|p| p.star_expression())?;
            count += 1;
            if building {
                elements.push(element);
            }
        }
        let span = self.span_from(start);
        let tuple = if building {
            Expr::new(ExprKind::Tuple(exact(elements).into_boxed_slice()), span)
        } else {
            Expr::new(ExprKind::Unknown, span)
        };
        Ok((tuple, Some(count)))
    }

    /// [`Parser::star_expressions`] one level deeper, as a statement's value.
    pub(super) fn child_star_expressions(&mut self) -> PResult<(Expr, Option<usize>)> {
        if !self.enter() {
            self.too_deep();
            return Ok((self.skim_expression()?, None));
        }
        let result = self.star_expressions();
        self.leave();
        result
    }

    /// `*x` or an expression.
    pub(super) fn star_expression(&mut self) -> PResult<Expr> {
        if self.at(Tok::Star) {
            return self.starred();
        }
        self.expression()
    }

    /// `*x` or a named expression.
    pub(super) fn star_named_expression(&mut self) -> PResult<Expr> {
        if self.at(Tok::Star) {
            return self.starred();
        }
        self.named_expression()
    }

    /// `*x` with `x` a `bitwise_or` (in displays, targets and statement values).
    fn starred(&mut self) -> PResult<Expr> {
        self.starred_with(|p| p.bitwise(1))
    }

    /// `*` and the operand `operand` parses.
    fn starred_with(&mut self, operand: impl FnOnce(&mut Self) -> PResult<Expr>) -> PResult<Expr> {
        let start = self.tok.start;
        self.bump();
        let inner = self.child(operand)?;
        let span = self.span_from(start);
        Ok(if self.building() {
            Expr::new(ExprKind::Starred(Box::new(inner)), span)
        } else {
            Expr::new(ExprKind::Unknown, span)
        })
    }

    /// An assignment target list up to `in` / `=`: `a, (b, *c)` (comprehension and `for`
    /// targets).
    pub(super) fn target_list(&mut self) -> PResult<Expr> {
        let start = self.tok.start;
        let first = self.star_target()?;
        if !self.at(Tok::Comma) {
            return Ok(first);
        }
        let building = self.building();
        let mut elements = Vec::new();
        if building {
            elements.push(first);
        }
        while self.eat(Tok::Comma) {
            if self.at(Tok::In) || self.at(Tok::Assign) || !self.can_start_expression() {
                break;
            }
            let element = self.child(|p| p.star_target())?;
            if building {
                elements.push(element);
            }
        }
        let span = self.span_from(start);
        Ok(if building {
            Expr::new(ExprKind::Tuple(exact(elements).into_boxed_slice()), span)
        } else {
            Expr::new(ExprKind::Unknown, span)
        })
    }

    /// One target: `*x` or an expression without comparisons (so `in` ends it).
    pub(super) fn star_target(&mut self) -> PResult<Expr> {
        if self.at(Tok::Star) {
            return self.starred();
        }
        self.bitwise(1)
    }

    // ----- named expressions, lambda, conditional -----

    /// `name := value` or an expression. Any other target of `:=` (`(x.a := 1)`) is
    /// CPython's syntax error, recorded at the target; the value is parsed and the whole is
    /// unknown.
    pub(super) fn named_expression(&mut self) -> PResult<Expr> {
        if self.at(Tok::Name) && self.peek().kind == Tok::Walrus {
            return self.walrus();
        }
        let start = self.tok.start;
        let expr = self.expression()?;
        if !self.at(Tok::Walrus) {
            return Ok(expr);
        }
        let at = Span { start, end: start };
        self.record_error(
            at,
            "cannot use assignment expressions with anything but a name".into(),
        );
        self.bump();
        self.child(|p| p.expression())?;
        Ok(self.unknown_from(start))
    }

    /// `name := value`: when it surely runs, the statement is preceded by `name = value` and
    /// the walrus reads `name`; when it may not run, `name` is bound to an unknown value and
    /// the walrus stands for `value`. In an opaque expression the name is bound to an unknown
    /// value where the walrus starts.
    fn walrus(&mut self) -> PResult<Expr> {
        let name = self.tok;
        let start = name.start;
        self.bump();
        self.bump();
        let binds = self.no_walrus == 0;
        match self.mode {
            Mode::Build => {
                let value = self.child(|p| p.expression())?;
                let span = self.span_from(start);
                if !binds {
                    return Ok(value);
                }
                if self.maybe_unevaluated > 0 {
                    self.bind(name, Expr::new(ExprKind::Unknown, span), span);
                    Ok(value)
                } else {
                    self.bind(name, value, span);
                    let text = self.name_of(name);
                    Ok(Expr::new(ExprKind::Name(text), span))
                }
            }
            Mode::Opaque => {
                let slot = self.walrus.len();
                if binds {
                    self.bind(name, Expr::new(ExprKind::Unknown, name.span()), name.span());
                }
                self.child(|p| p.expression())?;
                let span = self.span_from(start);
                if let Some(crate::ir::Stmt::Assign { value, span: s, .. }) =
                    self.walrus.get_mut(slot)
                {
                    *value = Expr::new(ExprKind::Unknown, span);
                    *s = span;
                }
                Ok(self.unknown_from(start))
            }
            Mode::Ignore => {
                self.child(|p| p.expression())?;
                Ok(self.unknown_from(start))
            }
        }
    }

    /// `lambda`, or `body if test else orelse`, or a disjunction.
    pub(super) fn expression(&mut self) -> PResult<Expr> {
        if self.at(Tok::Lambda) {
            return self.lambda();
        }
        let start = self.tok.start;
        let mark = self.walrus.len();
        let body = self.disjunction()?;
        if !self.at(Tok::If) {
            return Ok(body);
        }
        self.bump();
        // The body was parsed before it was known to be conditional: its walrus bindings may
        // not happen, and come after the test's.
        if self.building() {
            self.make_bindings_unknown(mark);
        }
        let test_mark = self.walrus.len();
        let test = self.child(|p| p.disjunction())?;
        self.reorder_bindings(mark, test_mark);
        if !self.at(Tok::Else) {
            let span = self.span_from(start);
            self.record_error(span, "expected `else` after `if` expression".into());
            return Err(Fail);
        }
        self.bump();
        self.maybe_unevaluated += 1;
        let orelse = self.child(|p| p.expression());
        self.maybe_unevaluated -= 1;
        let orelse = orelse?;
        let span = self.span_from(start);
        Ok(if self.building() {
            Expr::new(ExprKind::IfExp(Box::new([test, body, orelse])), span)
        } else {
            Expr::new(ExprKind::Unknown, span)
        })
    }

    /// A lambda has its own scope: a walrus in it binds nothing outside. One with plain
    /// positional parameters is a `Lambda` (the interpreter applies it where it is called,
    /// `map(lambda t: …, xs)`); any other is opaque.
    fn lambda(&mut self) -> PResult<Expr> {
        let start = self.tok.start;
        self.bump();
        if !self.building() {
            self.in_mode(Mode::Ignore, |p| -> PResult<()> {
                p.parameters(Tok::Colon, false)?;
                p.expect(Tok::Colon, ":")?;
                p.child(|p| p.expression())?;
                Ok(())
            })?;
            return Ok(self.unknown_from(start));
        }
        let params = self.parameters(Tok::Colon, false)?;
        self.expect(Tok::Colon, ":")?;
        let mark = self.walrus.len();
        let body = self.child(|p| p.expression())?;
        // A walrus names the lambda's own variable: its body would read it from outside.
        let binds = self.walrus.len() > mark;
        self.walrus.truncate(mark);
        let plain = !binds && params.iter().all(|p| !p.variadic && p.default.is_none());
        let span = self.span_from(start);
        Ok(if plain {
            let params = params.into_iter().map(|p| p.name.into()).collect();
            Expr::new(ExprKind::Lambda(Box::new(Lambda { params, body })), span)
        } else {
            Expr::new(ExprKind::Unknown, span)
        })
    }

    // ----- boolean operators, comparisons -----

    fn disjunction(&mut self) -> PResult<Expr> {
        self.boolean_chain(Tok::Or)
    }

    fn conjunction(&mut self) -> PResult<Expr> {
        self.boolean_chain(Tok::And)
    }

    /// `a or b or c` / `a and b`: left-nested `Compare`s; the right operands may not run.
    fn boolean_chain(&mut self, operator: Tok) -> PResult<Expr> {
        let start = self.tok.start;
        let operand = |p: &mut Self| {
            if operator == Tok::Or {
                p.conjunction()
            } else {
                p.inversion()
            }
        };
        let mut left = operand(self)?;
        let op = if operator == Tok::Or {
            CmpOp::Or
        } else {
            CmpOp::And
        };
        let mut length = 1;
        while self.at(operator) {
            self.bump();
            self.maybe_unevaluated += 1;
            let right = self.child(operand);
            self.maybe_unevaluated -= 1;
            let right = right?;
            if self.building() {
                let kind = ExprKind::Compare {
                    op,
                    operands: Box::new([left, right]),
                };
                left = Expr::new(kind, self.span_from(start));
                length += 1;
                self.keep_chain_bounded(&mut left, &mut length, start);
            } else {
                left = self.unknown_from(start);
            }
        }
        Ok(left)
    }

    /// `not x` is `Compare { x, Not, <nothing> }`, with an empty unknown operand at its end.
    fn inversion(&mut self) -> PResult<Expr> {
        if !self.at(Tok::Not) {
            return self.comparison();
        }
        let start = self.tok.start;
        self.bump();
        let operand = self.child(|p| p.inversion())?;
        let span = self.span_from(start);
        Ok(if self.building() {
            let nothing = Expr::new(
                ExprKind::Unknown,
                Span {
                    start: span.end,
                    end: span.end,
                },
            );
            Expr::new(
                ExprKind::Compare {
                    op: CmpOp::Not,
                    operands: Box::new([operand, nothing]),
                },
                span,
            )
        } else {
            Expr::new(ExprKind::Unknown, span)
        })
    }

    /// The comparison operator at the current token (consuming nothing).
    fn comparison_operator(&mut self) -> Option<(CmpOp, usize)> {
        let kind = self.tok.kind;
        let next = if matches!(kind, Tok::Is | Tok::Not) {
            self.peek().kind
        } else {
            Tok::Eof
        };
        Some(match kind {
            Tok::EqEq => (CmpOp::Eq, 1),
            Tok::NotEq => (CmpOp::NotEq, 1),
            Tok::Lt => (CmpOp::Lt, 1),
            Tok::LtE => (CmpOp::LtE, 1),
            Tok::Gt => (CmpOp::Gt, 1),
            Tok::GtE => (CmpOp::GtE, 1),
            Tok::In => (CmpOp::In, 1),
            Tok::Is if next == Tok::Not => (CmpOp::IsNot, 2),
            Tok::Is => (CmpOp::Is, 1),
            Tok::Not if next == Tok::In => (CmpOp::NotIn, 2),
            _ => return None,
        })
    }

    /// `a < b` is one `Compare`; a chain `a < b <= c` is `a < b and b <= c` with `b`'s
    /// lowering shared. Each link nests the IR one level deeper, so a chain that does not
    /// fit in the depth left is opaque.
    fn comparison(&mut self) -> PResult<Expr> {
        let start = self.tok.start;
        let first = self.bitwise(1)?;
        let Some((op, tokens)) = self.comparison_operator() else {
            return Ok(first);
        };
        let building = self.building();
        // (operator, operand, operand's start including parentheses, operand's end)
        let mut operands: Vec<(Expr, u32, u32)> = Vec::new();
        let mut operators = Vec::new();
        if building {
            operands.push((first, start, self.prev_end));
        }
        let mut next = Some((op, tokens));
        while let Some((op, tokens)) = next {
            for _ in 0..tokens {
                self.bump();
            }
            let operand_start = self.tok.start;
            let later = !operators.is_empty();
            if later {
                self.maybe_unevaluated += 1;
            }
            let operand = self.child(|p| p.bitwise(1));
            if later {
                self.maybe_unevaluated -= 1;
            }
            let operand = operand?;
            if building {
                operands.push((operand, operand_start, self.prev_end));
            }
            operators.push(op);
            next = self.comparison_operator();
        }
        let span = self.span_from(start);
        if !building {
            return Ok(Expr::new(ExprKind::Unknown, span));
        }
        let extra_levels = operators.len() as u32 - 1;
        if extra_levels >= self.depth_left() {
            return Ok(Expr::new(ExprKind::Unknown, span));
        }
        let mut chain: Option<Expr> = None;
        for (position, op) in operators.into_iter().enumerate() {
            let (left, left_start, _) = &operands[position];
            let (right, _, right_end) = &operands[position + 1];
            let pair = Span {
                start: *left_start,
                end: *right_end,
            };
            let comparison = Expr::new(
                ExprKind::Compare {
                    op,
                    operands: Box::new([left.clone(), right.clone()]),
                },
                pair,
            );
            chain = Some(match chain {
                None => comparison,
                Some(previous) => {
                    let span = Span {
                        start,
                        end: comparison.span.end,
                    };
                    Expr::new(
                        ExprKind::Compare {
                            op: CmpOp::And,
                            operands: Box::new([previous, comparison]),
                        },
                        span,
                    )
                }
            });
        }
        Ok(chain.unwrap_or_else(|| Expr::new(ExprKind::Unknown, span)))
    }

    // ----- arithmetic -----

    fn binary_operator(&self) -> Option<(BinOp, u8)> {
        Some(match self.tok.kind {
            Tok::Pipe => (BinOp::Other, 1),
            Tok::Caret => (BinOp::Other, 2),
            Tok::Amp => (BinOp::Other, 3),
            Tok::LShift | Tok::RShift => (BinOp::Other, 4),
            Tok::Plus => (BinOp::Add, 5),
            Tok::Minus => (BinOp::Sub, 5),
            Tok::Star => (BinOp::Mul, 6),
            Tok::Slash => (BinOp::Div, 6),
            Tok::DoubleSlash => (BinOp::FloorDiv, 6),
            Tok::Percent => (BinOp::Mod, 6),
            Tok::At => (BinOp::MatMul, 6),
            _ => return None,
        })
    }

    /// Binary operators binding at least as tightly as `min_precedence` (1 is `|`, 6 is
    /// `*`), all left-associative.
    pub(super) fn bitwise(&mut self, min_precedence: u8) -> PResult<Expr> {
        let start = self.tok.start;
        let mut left = self.factor()?;
        let mut length = 1;
        while let Some((op, precedence)) = self.binary_operator() {
            if precedence < min_precedence {
                break;
            }
            self.bump();
            let right = self.child(|p| p.bitwise(precedence + 1))?;
            if self.building() {
                let kind = ExprKind::BinOp {
                    op,
                    operands: Box::new([left, right]),
                };
                left = Expr::new(kind, self.span_from(start));
                length += 1;
                self.keep_chain_bounded(&mut left, &mut length, start);
            } else {
                left = self.unknown_from(start);
            }
        }
        Ok(left)
    }

    /// `-x` is `Neg(x)`, folded into number literals (`-1` is `Int(-1)`); `+x` is `x`
    /// spanning the `+`; `~x` is unknown.
    fn factor(&mut self) -> PResult<Expr> {
        let start = self.tok.start;
        match self.tok.kind {
            Tok::Minus => {
                self.bump();
                let operand = self.child(|p| p.factor())?;
                let span = self.span_from(start);
                if !self.building() {
                    return Ok(Expr::new(ExprKind::Unknown, span));
                }
                let kind = match operand.kind {
                    ExprKind::Int(value) if value.checked_neg().is_some() => ExprKind::Int(-value),
                    ExprKind::Float(value) => ExprKind::Float(-value),
                    _ => ExprKind::Neg(Box::new(operand)),
                };
                Ok(Expr::new(kind, span))
            }
            Tok::Plus => {
                self.bump();
                let operand = self.child(|p| p.factor())?;
                Ok(Expr::new(operand.kind, self.span_from(start)))
            }
            Tok::Tilde => {
                self.bump();
                self.in_mode(Mode::Opaque, |p| p.child(|p| p.factor()))?;
                Ok(self.unknown_from(start))
            }
            _ => self.power(),
        }
    }

    /// `base ** exponent` (right-associative, binding tighter than a unary minus on its left).
    fn power(&mut self) -> PResult<Expr> {
        let start = self.tok.start;
        let base = if self.at(Tok::Await) {
            self.bump();
            self.in_mode(Mode::Opaque, |p| p.child(|p| p.primary()))?;
            self.unknown_from(start)
        } else {
            self.primary()?
        };
        if !self.eat(Tok::DoubleStar) {
            return Ok(base);
        }
        let exponent = self.child(|p| p.factor())?;
        let span = self.span_from(start);
        Ok(if self.building() {
            Expr::new(
                ExprKind::BinOp {
                    op: BinOp::Pow,
                    operands: Box::new([base, exponent]),
                },
                span,
            )
        } else {
            Expr::new(ExprKind::Unknown, span)
        })
    }

    // ----- primaries -----

    /// An atom followed by `.name`, `(args)` and `[index]` trailers.
    fn primary(&mut self) -> PResult<Expr> {
        let start = self.tok.start;
        let mut expr = self.atom()?;
        let mut length = 1;
        loop {
            match self.tok.kind {
                Tok::Dot => {
                    self.bump();
                    let name = self.expect_name()?;
                    if self.building() {
                        let attr = self.name_of(name);
                        let value = Box::new(expr);
                        expr = Expr::new(ExprKind::Attr { value, attr }, self.span_from(start));
                    } else {
                        expr = self.unknown_from(start);
                    }
                }
                Tok::LParen => {
                    let args = self.arguments()?;
                    if self.building() {
                        let call = Call::new(expr, args);
                        expr = Expr::new(ExprKind::Call(call), self.span_from(start));
                    } else {
                        expr = self.unknown_from(start);
                    }
                }
                Tok::LBracket => {
                    let index = self.subscript_index()?;
                    if self.building() {
                        let kind = ExprKind::Subscript(Subscript::new(expr, index));
                        expr = Expr::new(kind, self.span_from(start));
                    } else {
                        expr = self.unknown_from(start);
                    }
                }
                _ => break,
            }
            length += 1;
            if self.building() {
                self.keep_chain_bounded(&mut expr, &mut length, start);
            }
        }
        Ok(expr)
    }

    /// `(args)` of a call: positional, `*xs`, `name=value`, `**kw`, or one generator.
    /// A positional argument after a keyword one, or `*x` after `**y`, is CPython's syntax
    /// error, recorded where CPython reports it (the `)`, the `,` before the `*`); the call is
    /// still lowered.
    fn arguments(&mut self) -> PResult<Vec<Arg>> {
        let open = self.tok.start;
        self.bump();
        let building = self.building();
        let mut args = Vec::new();
        // Whether a keyword argument came, and whether one was `**`.
        let (mut keyword, mut keyword_unpacking) = (false, false);
        let mut misplaced_positional = false;
        let mut comma_before = None;
        loop {
            if self.at(Tok::RParen) {
                if misplaced_positional {
                    let message = if keyword_unpacking {
                        "positional argument follows keyword argument unpacking"
                    } else {
                        "positional argument follows keyword argument"
                    };
                    let at = self.tok.start;
                    self.record_error(Span { start: at, end: at }, message.into());
                }
                self.bump();
                break;
            }
            let (star, double_star) = (self.at(Tok::Star), self.at(Tok::DoubleStar));
            if star && keyword_unpacking {
                if let Some(at) = comma_before {
                    self.record_error(
                        Span { start: at, end: at },
                        "iterable argument unpacking follows keyword argument unpacking".into(),
                    );
                }
            }
            keyword |= double_star;
            keyword_unpacking |= double_star;
            let named = self.at(Tok::Name) && self.peek().kind == Tok::Assign;
            let positional = !(star || double_star || named);
            misplaced_positional |= positional && keyword && self.can_start_expression();
            keyword |= !positional && !star;
            let arg = if star || double_star {
                self.bump();
                let value = self.child(|p| p.expression())?;
                if star {
                    Arg::star(value)
                } else {
                    Arg::double_star(value)
                }
            } else if self.at(Tok::Name) && self.peek().kind == Tok::Assign {
                let name = self.tok;
                self.bump();
                self.bump();
                let value = self.child(|p| p.expression())?;
                if building {
                    Arg::keyword(self.name_of(name), value)
                } else {
                    Arg::positional(value)
                }
            } else if self.can_start_expression() {
                let mark = self.walrus.len();
                let first = args.is_empty() && comma_before.is_none();
                let element = self.tok.start;
                let value = self.child(|p| p.named_expression())?;
                if self.at(Tok::For) || (self.at(Tok::Async) && self.peek().kind == Tok::For) {
                    // `f(x for x in xs)`: one generator argument, spanning the parentheses.
                    let generator = self.comprehension(element, value, mark)?;
                    if !first || !self.at(Tok::RParen) {
                        let span = self.span_from(element);
                        self.record_error(
                            span,
                            "generator expression must be parenthesized".into(),
                        );
                        return Err(Fail);
                    }
                    self.bump();
                    if building {
                        let generator = generator.with_span(self.span_from(open));
                        args.push(Arg::positional(generator));
                    }
                    break;
                }
                Arg::positional(value)
            } else {
                self.expect(Tok::RParen, ")")?;
                break;
            };
            if building {
                args.push(arg);
            }
            comma_before = Some(self.tok.start);
            if !self.eat(Tok::Comma) && !self.at(Tok::RParen) {
                self.expect(Tok::RParen, ")")?;
            }
        }
        // Not sized to fit: `Call::new` copies them into a slice after the callee.
        Ok(args)
    }

    /// `[i]`, `[a:b, ..., None]`: one entry per comma-separated item (a trailing comma adds
    /// none).
    fn subscript_index(&mut self) -> PResult<Vec<Expr>> {
        self.bump();
        let building = self.building();
        let mut index = Vec::new();
        loop {
            let item = self.child(|p| p.slice_item())?;
            if building {
                index.push(item);
            }
            if !self.eat(Tok::Comma) || self.at(Tok::RBracket) {
                break;
            }
        }
        self.expect(Tok::RBracket, "]")?;
        // Not sized to fit: `Subscript::new` copies them into a slice after the value.
        Ok(index)
    }

    /// `expr`, `*expr`, or a slice `lower:upper:step` with any part missing. A star takes a
    /// whole expression (`x[*a or b]`) and cannot start a slice.
    fn slice_item(&mut self) -> PResult<Expr> {
        let start = self.tok.start;
        if self.at(Tok::Star) {
            return self.starred_with(|p| p.expression());
        }
        let lower = if self.at(Tok::Colon) {
            None
        } else {
            Some(self.named_expression()?)
        };
        if !self.at(Tok::Colon) {
            return lower.ok_or(Fail);
        }
        self.bump();
        let ends_part = |p: &Self| matches!(p.tok.kind, Tok::Colon | Tok::Comma | Tok::RBracket);
        let upper = if ends_part(self) {
            None
        } else {
            Some(self.child(|p| p.expression())?)
        };
        let mut step = None;
        if self.eat(Tok::Colon) && !matches!(self.tok.kind, Tok::Comma | Tok::RBracket) {
            step = Some(self.child(|p| p.expression())?);
        }
        let span = self.span_from(start);
        if !self.building() {
            return Ok(Expr::new(ExprKind::Unknown, span));
        }
        Ok(Expr::new(
            ExprKind::Slice(Box::new(SliceBounds { lower, upper, step })),
            span,
        ))
    }

    /// A name, interned.
    fn name_leaf(&mut self) -> Expr {
        self.token_leaf(|p, token| ExprKind::Name(p.name_of(token)))
    }

    fn leaf(&mut self, kind: impl FnOnce(&str) -> ExprKind) -> Expr {
        self.token_leaf(|p, token| kind(p.text_of(token)))
    }

    /// The current token as one expression, `kind` of it when building.
    fn token_leaf(&mut self, kind: impl FnOnce(&mut Self, Token) -> ExprKind) -> Expr {
        let token = self.tok;
        self.bump();
        let kind = if self.building() {
            kind(self, token)
        } else {
            ExprKind::Unknown
        };
        Expr::new(kind, token.span())
    }

    fn atom(&mut self) -> PResult<Expr> {
        Ok(match self.tok.kind {
            Tok::Name => self.name_leaf(),
            Tok::Int => self.leaf(|text| parse_int(text).map_or(ExprKind::Unknown, ExprKind::Int)),
            Tok::Float => {
                self.leaf(|text| parse_float(text).map_or(ExprKind::Unknown, ExprKind::Float))
            }
            Tok::True => self.leaf(|_| ExprKind::Bool(true)),
            Tok::False => self.leaf(|_| ExprKind::Bool(false)),
            Tok::None => self.leaf(|_| ExprKind::None),
            Tok::Ellipsis => self.leaf(|_| ExprKind::Ellipsis),
            Tok::Str | Tok::FStart => self.strings()?,
            Tok::LParen => self.parenthesized()?,
            Tok::LBracket => self.list()?,
            Tok::LBrace => self.in_mode(Mode::Opaque, |p| p.dict_or_set())?,
            _ => return Err(self.unexpected()),
        })
    }

    /// `( ... )`: a parenthesized expression (its value, with the inner span), a tuple, a
    /// generator (opaque), or a parenthesized `yield` (opaque).
    fn parenthesized(&mut self) -> PResult<Expr> {
        let start = self.tok.start;
        self.bump();
        if self.eat(Tok::RParen) {
            let span = self.span_from(start);
            let kind = if self.building() {
                ExprKind::Tuple(Box::default())
            } else {
                ExprKind::Unknown
            };
            return Ok(Expr::new(kind, span));
        }
        if self.at(Tok::Yield) {
            let inner = self.child(|p| p.yield_expression())?;
            self.expect(Tok::RParen, ")")?;
            return Ok(inner);
        }
        let mark = self.walrus.len();
        let first = self.child(|p| p.star_named_expression())?;
        if self.at(Tok::For) || (self.at(Tok::Async) && self.peek().kind == Tok::For) {
            let generator = self.comprehension(start, first, mark)?;
            self.expect(Tok::RParen, ")")?;
            return Ok(generator.with_span(self.span_from(start)));
        }
        if !self.at(Tok::Comma) {
            self.expect(Tok::RParen, ")")?;
            return Ok(first);
        }
        let elements = self.rest_of_elements(first, Tok::RParen, ")")?;
        let span = self.span_from(start);
        Ok(match elements {
            Some(elements) => Expr::new(ExprKind::Tuple(elements.into_boxed_slice()), span),
            None => Expr::new(ExprKind::Unknown, span),
        })
    }

    /// `, b, *c ]` after the first element of a display, through the closing bracket.
    fn rest_of_elements(
        &mut self,
        first: Expr,
        closer: Tok,
        closer_text: &str,
    ) -> PResult<Option<Vec<Expr>>> {
        let building = self.building();
        let mut elements = Vec::new();
        if building {
            elements.push(first);
        }
        while self.eat(Tok::Comma) {
            if self.at(closer) {
                break;
            }
            let element = self.child(|p| p.star_named_expression())?;
            if building {
                elements.push(element);
            }
        }
        self.expect(closer, closer_text)?;
        Ok(building.then(|| exact(elements)))
    }

    /// `[a, *b]`, or a list comprehension (opaque).
    fn list(&mut self) -> PResult<Expr> {
        let start = self.tok.start;
        self.bump();
        if self.eat(Tok::RBracket) {
            let kind = if self.building() {
                ExprKind::List(Box::default())
            } else {
                ExprKind::Unknown
            };
            return Ok(Expr::new(kind, self.span_from(start)));
        }
        let mark = self.walrus.len();
        let first = self.child(|p| p.star_named_expression())?;
        if self.at(Tok::For) || (self.at(Tok::Async) && self.peek().kind == Tok::For) {
            let list = self.comprehension(start, first, mark)?;
            self.expect(Tok::RBracket, "]")?;
            return Ok(list.with_span(self.span_from(start)));
        }
        let elements = self.rest_of_elements(first, Tok::RBracket, "]")?;
        let span = self.span_from(start);
        Ok(match elements {
            Some(elements) => Expr::new(ExprKind::List(elements.into_boxed_slice()), span),
            None => Expr::new(ExprKind::Unknown, span),
        })
    }

    /// `{...}`: dicts, sets and their comprehensions, all opaque (parsed in a mode that
    /// builds nothing).
    fn dict_or_set(&mut self) -> PResult<Expr> {
        let start = self.tok.start;
        self.bump();
        if self.eat(Tok::RBrace) {
            return Ok(self.unknown_from(start));
        }
        let is_dict = if self.eat(Tok::DoubleStar) {
            self.child(|p| p.bitwise(1))?;
            true
        } else {
            self.child(|p| p.star_named_expression())?;
            if self.eat(Tok::Colon) {
                self.child(|p| p.expression())?;
                true
            } else {
                false
            }
        };
        if self.at(Tok::For) || (self.at(Tok::Async) && self.peek().kind == Tok::For) {
            self.comprehension_clauses()?;
            self.expect(Tok::RBrace, "}")?;
            return Ok(self.unknown_from(start));
        }
        while self.eat(Tok::Comma) {
            if self.at(Tok::RBrace) {
                break;
            }
            if is_dict {
                if self.eat(Tok::DoubleStar) {
                    self.child(|p| p.bitwise(1))?;
                } else {
                    self.child(|p| p.expression())?;
                    self.expect(Tok::Colon, ":")?;
                    self.child(|p| p.expression())?;
                }
            } else {
                self.child(|p| p.star_named_expression())?;
            }
        }
        self.expect(Tok::RBrace, "}")?;
        Ok(self.unknown_from(start))
    }

    /// The clauses after a comprehension's `element`, up to its closing bracket: a
    /// `Comprehension` for one `for` clause with its `if` filters, otherwise opaque.
    /// Bindings made by a walrus since `mark` bind unknown values (they run once per
    /// element, or never).
    fn comprehension(&mut self, start: u32, element: Expr, mark: usize) -> PResult<Expr> {
        let simple = self.building() && self.at(Tok::For);
        if !simple {
            if self.building() {
                self.make_bindings_unknown(mark);
            }
            self.in_mode(Mode::Opaque, |p| p.comprehension_clauses())?;
            return Ok(self.unknown_from(start));
        }
        self.bump();
        let target = self.child(|p| p.target_list())?;
        self.expect(Tok::In, "in")?;
        let iter = self.child(|p| p.disjunction())?;
        let mut conditions = Vec::new();
        while self.eat(Tok::If) {
            conditions.push(self.child(|p| p.disjunction())?);
        }
        let one_clause = !(self.at(Tok::For) || self.at(Tok::Async));
        if !one_clause {
            self.in_mode(Mode::Opaque, |p| p.comprehension_clauses())?;
        }
        self.make_bindings_unknown(mark);
        let span = self.span_from(start);
        if !one_clause {
            return Ok(Expr::new(ExprKind::Unknown, span));
        }
        let kind = ExprKind::Comprehension(Box::new(Comprehension {
            element,
            target: super::to_target(target),
            iter,
            conditions,
        }));
        Ok(Expr::new(kind, span))
    }

    /// `for targets in iterable [if cond]...` clauses of a comprehension.
    pub(super) fn comprehension_clauses(&mut self) -> PResult<()> {
        while self.at(Tok::For) || (self.at(Tok::Async) && self.peek().kind == Tok::For) {
            if self.at(Tok::Async) {
                self.bump();
            }
            self.bump();
            self.child(|p| p.target_list())?;
            self.expect(Tok::In, "in")?;
            self.child(|p| p.disjunction())?;
            while self.eat(Tok::If) {
                self.child(|p| p.disjunction())?;
            }
        }
        Ok(())
    }

    /// `yield`, `yield x, y`, `yield from x`: opaque.
    pub(super) fn yield_expression(&mut self) -> PResult<Expr> {
        let start = self.tok.start;
        self.bump();
        self.in_mode(Mode::Opaque, |p| -> PResult<()> {
            if p.eat(Tok::From) {
                p.child(|p| p.expression())?;
            } else if p.can_start_expression() {
                p.star_expressions()?;
            }
            Ok(())
        })?;
        Ok(self.unknown_from(start))
    }

    // ----- strings -----

    /// One string literal or several implicitly concatenated ones: a constant `Str`, or
    /// opaque when any part has no constant `str` value (fields, bytes, t-strings, ...).
    /// Concatenating a t-string with another kind of string, or bytes with a `str`, is
    /// CPython's syntax error, recorded where CPython reports it; the expression is then
    /// opaque and parsing goes on.
    fn strings(&mut self) -> PResult<Expr> {
        let start = self.tok.start;
        let building = self.building();
        let mut value = building.then(String::new);
        // The kind of the first part and of the last one, and where the last one starts.
        let mut first_kind = None;
        let mut last: Option<(StringKind, u32)> = None;
        let mut mixes_templates = None;
        let mut mixes_bytes = false;
        loop {
            if matches!(self.tok.kind, Tok::Str | Tok::FStart) {
                let kind = self.string_kind(self.tok);
                if let Some((previous, previous_start)) = last {
                    let templates = |k: StringKind| k == StringKind::Template;
                    if templates(previous) != templates(kind) && mixes_templates.is_none() {
                        mixes_templates = Some(previous_start);
                    }
                }
                first_kind.get_or_insert(kind);
                mixes_bytes |= first_kind.is_some_and(|first| {
                    (first == StringKind::Bytes) != (kind == StringKind::Bytes)
                });
                last = Some((kind, self.tok.start));
            }
            match self.tok.kind {
                Tok::Str => {
                    let token = self.tok;
                    self.bump();
                    if let Some(joined) = &mut value {
                        match self.literal_value(token, token.end) {
                            Some(part) => joined.push_str(&part),
                            None => value = None,
                        }
                    }
                }
                Tok::FStart => {
                    let opening = self.tok;
                    let (has_field, closing_start) = self.fstring()?;
                    if let Some(joined) = &mut value {
                        let part = if has_field {
                            None
                        } else {
                            self.fstring_value(opening, closing_start)
                        };
                        match part {
                            Some(part) => joined.push_str(&part),
                            None => value = None,
                        }
                    }
                }
                _ => break,
            }
        }
        if let Some(at) = mixes_templates {
            // At the last string before the switch (CPython spans it and the next).
            let span = Span { start: at, end: at };
            self.record_error(
                span,
                "cannot mix t-string literals with string or bytes literals".into(),
            );
            value = None;
        } else if mixes_bytes {
            // At the token after the strings, as CPython reports it.
            let at = self.line_end_position(self.tok);
            let span = Span { start: at, end: at };
            self.record_error(span, "cannot mix bytes and nonbytes literals".into());
            value = None;
        }
        let span = self.span_from(start);
        Ok(match value {
            Some(value) => Expr::new(ExprKind::Str(self.intern(&value)), span),
            None => Expr::new(ExprKind::Unknown, span),
        })
    }

    /// Whether a string token (`Str` or `FStart`) is a bytes literal, a t-string, or a `str`.
    fn string_kind(&self, token: Token) -> StringKind {
        let prefix = self
            .text_of(token)
            .bytes()
            .take_while(|b| b.is_ascii_alphabetic());
        let mut kind = StringKind::Text;
        for letter in prefix {
            match letter | 0x20 {
                b'b' => kind = StringKind::Bytes,
                b't' => return StringKind::Template,
                _ => {}
            }
        }
        kind
    }

    /// The value of a complete (non-f) string token.
    fn literal_value(&self, token: Token, end: u32) -> Option<String> {
        let text = self.text.get(token.start as usize..end as usize)?;
        let quote_at = text.find(['"', '\''])?;
        let quote = text.as_bytes()[quote_at];
        let triple = text.as_bytes().get(quote_at..quote_at + 3) == Some(&[quote; 3][..]);
        let quotes = if triple { 3 } else { 1 };
        let body = text.get(quote_at + quotes..text.len().checked_sub(quotes)?)?;
        let prefix = StringPrefix::from_string_start(&text[..quote_at + quotes]);
        decode_string_body(prefix, body)
    }

    /// The value of an f-string without fields, from its opening token to its closing quotes.
    fn fstring_value(&self, opening: Token, closing_start: u32) -> Option<String> {
        let prefix = StringPrefix::from_string_start(self.text_of(opening));
        let body = self
            .text
            .get(opening.end as usize..closing_start as usize)?;
        decode_string_body(prefix, body)
    }

    /// An f-string or t-string from `FStart` to `FEnd`; its fields are opaque. Returns
    /// whether it has any field, and where its closing quotes start.
    fn fstring(&mut self) -> PResult<(bool, u32)> {
        self.bump();
        let mut has_field = false;
        loop {
            match self.tok.kind {
                Tok::FEnd => {
                    let closing = self.tok.start;
                    self.bump();
                    return Ok((has_field, closing));
                }
                Tok::FieldStart => {
                    has_field = true;
                    self.bump();
                    self.in_mode(Mode::Opaque, |p| p.child(|p| p.replacement_field()))?;
                }
                _ => return Err(self.unexpected()),
            }
        }
    }

    /// `{expr[=][!conv][:spec]}` after its `{`, through its `}`.
    fn replacement_field(&mut self) -> PResult<Expr> {
        let start = self.tok.start;
        if self.at(Tok::Lambda) {
            // CPython's error: the `:` of a bare lambda would start the format spec.
            let at = self.tok.span();
            self.record_error(
                at,
                "f-string: lambda expressions are not allowed without parentheses".into(),
            );
            return Err(Fail);
        }
        if self.at(Tok::Yield) {
            self.yield_expression()?;
        } else if self.can_start_expression() {
            self.star_expressions()?;
        } else {
            return Err(self.unexpected());
        }
        self.eat(Tok::Assign);
        if self.eat(Tok::Exclaim) {
            let conversion = self.expect_name()?;
            let letter = self.text_of(conversion);
            if !matches!(letter, "s" | "r" | "a") {
                let message = format!(
                    "f-string: invalid conversion character `{letter}`: expected `s`, `r`, or `a`"
                );
                self.record_error(conversion.span(), message);
            }
        }
        if self.eat(Tok::Colon) {
            loop {
                match self.tok.kind {
                    Tok::FieldStart => {
                        self.bump();
                        self.child(|p| p.replacement_field())?;
                    }
                    Tok::FieldEnd => break,
                    _ => return Err(self.unexpected()),
                }
            }
        }
        self.expect(Tok::FieldEnd, "}")?;
        Ok(self.unknown_from(start))
    }
}
