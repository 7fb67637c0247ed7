//! Statements, blocks, definitions, imports, and error recovery.
//!
//! Every rule follows one discipline for walrus bindings: parse the statement's own
//! expressions, take the bindings they made, parse nested blocks, then emit the bindings
//! followed by the statement.

use std::sync::Arc;

use super::lexer::{Aug, Tok, Token};
use super::{exact, is_invalid_target, to_target, Fail, Mode, PResult, Parser, MAX_DEPTH};
use crate::frontend::python::annotations::{is_int_annotation, shape_annotation};
use crate::ir::{self, BinOp, Class, Expr, ExprKind, Function, Param, Span, Stmt, Target, Targets};

impl Parser<'_> {
    /// The whole file. Definitions directly at module level go to the module's functions and
    /// classes; everything else stays in the body.
    pub(super) fn module(&mut self) -> Vec<Stmt> {
        let mut body = Vec::new();
        loop {
            match self.tok.kind {
                Tok::Eof => break,
                Tok::Newline | Tok::Dedent => self.bump(),
                Tok::Indent => self.stray_block(&mut body, true),
                _ => self.statement(&mut body, true),
            }
        }
        exact(body)
    }

    /// An indented block where none may start (after a broken header, or a stray indent):
    /// its statements are kept where the block is.
    fn stray_block(&mut self, out: &mut Vec<Stmt>, top_level: bool) {
        if !self.recovering {
            let span = self.tok.span();
            self.record_error(span, "unexpected indent".into());
        }
        self.bump();
        self.statements_until_dedent(out, top_level);
    }

    /// Statements up to the `DEDENT` closing the current block; returns where the block ends.
    fn statements_until_dedent(&mut self, out: &mut Vec<Stmt>, top_level: bool) -> u32 {
        loop {
            match self.tok.kind {
                Tok::Dedent => {
                    let end = self.tok.start;
                    self.bump();
                    return end;
                }
                Tok::Eof => return self.prev_end,
                Tok::Newline => self.bump(),
                Tok::Indent => self.stray_block(out, top_level),
                _ => self.statement(out, top_level),
            }
        }
    }

    /// One statement into `out` (walrus bindings first). A statement with a syntax error is
    /// dropped and parsing resumes at the next line that can start one.
    pub(super) fn statement(&mut self, out: &mut Vec<Stmt>, top_level: bool) {
        if !self.enter() {
            self.too_deep();
            let span = self.skim_statement();
            out.push(Stmt::Other { span });
            return;
        }
        let start = self.tok.start;
        let (depth, mode, unevaluated, no_walrus) = (
            self.depth,
            self.mode,
            self.maybe_unevaluated,
            self.no_walrus,
        );
        let walrus_mark = self.walrus.len();
        let out_mark = out.len();
        let result = self.statement_within_limit(out, top_level);
        if result.is_err() {
            self.depth = depth;
            self.mode = mode;
            self.maybe_unevaluated = unevaluated;
            self.no_walrus = no_walrus;
            self.walrus.truncate(walrus_mark);
            out.truncate(out_mark);
            let before = (self.tok.start, self.tok.kind);
            self.recover(start);
            if (self.tok.start, self.tok.kind) == before && self.tok.kind != Tok::Eof {
                // Never stay in place: a caller's loop would meet the same token again.
                self.bump();
            }
        } else {
            self.recovering = false;
        }
        self.leave();
    }

    fn statement_within_limit(&mut self, out: &mut Vec<Stmt>, top_level: bool) -> PResult<()> {
        if self.is_soft_keyword("match") && self.is_match_statement() {
            return self.match_statement(out);
        }
        match self.tok.kind {
            Tok::Def => self.function_statement(out, top_level),
            Tok::Class => self.class_statement(out, top_level),
            Tok::At => self.decorated(out, top_level),
            Tok::Async => match self.peek().kind {
                Tok::Def => self.function_statement(out, top_level),
                Tok::For => self.for_statement(out),
                Tok::With => self.with_statement(out),
                _ => Err(self.unexpected()),
            },
            Tok::If => self.if_statement(out),
            Tok::While => self.while_statement(out),
            Tok::For => self.for_statement(out),
            Tok::Try => self.try_statement(out),
            Tok::With => self.with_statement(out),
            _ => self.simple_statements(out).map(|_| ()),
        }
    }

    // ----- error recovery -----

    /// After a syntax error at the current token: continue at the line of the error if it
    /// is the first token of a later line than the statement's (a bracket left open, then
    /// the next statement), else after the end of the current line.
    fn recover(&mut self, statement_start: u32) {
        self.recovering = true;
        let token = self.tok;
        // A token at the end of a file that ends in `\` can start one past the text.
        let at = (token.start as usize).min(self.text.len());
        let line_start = line_start_of(self.text, at);
        let starts_line = self.text.as_bytes()[line_start..at]
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\x0c'));
        let later_line = line_start > line_start_of(self.text, statement_start as usize);
        if starts_line
            && later_line
            && !matches!(
                token.kind,
                Tok::Newline | Tok::Eof | Tok::Dedent | Tok::Indent
            )
        {
            self.peeked = None;
            self.lexer.restart_at_line(line_start);
            self.tok = self.lexer.next_token();
            return;
        }
        self.skip_rest_of_line();
    }

    /// Skips tokens through the end of the current line, brackets ignored.
    fn skip_rest_of_line(&mut self) {
        self.lexer.start_skipping();
        loop {
            match self.tok.kind {
                Tok::Newline => {
                    self.bump();
                    return;
                }
                Tok::Eof | Tok::Dedent | Tok::Indent => return,
                _ => self.bump(),
            }
        }
    }

    /// Consumes a statement nested beyond the depth limit (its header line, its block, and
    /// any `elif`/`else`/`except`/`finally` clauses) and returns its span.
    fn skim_statement(&mut self) -> Span {
        let start = self.tok.start;
        let mut end = start;
        loop {
            let first = self.tok.kind;
            while !matches!(
                self.tok.kind,
                Tok::Newline | Tok::Eof | Tok::Indent | Tok::Dedent
            ) {
                self.bump();
            }
            end = end.max(self.prev_end);
            if self.at(Tok::Newline) {
                end = end.max(self.tok.start);
                self.bump();
            }
            if self.at(Tok::Indent) {
                let mut level = 0usize;
                loop {
                    match self.tok.kind {
                        Tok::Indent => level += 1,
                        Tok::Dedent => {
                            level -= 1;
                            if level == 0 {
                                end = end.max(self.tok.start);
                                self.bump();
                                break;
                            }
                        }
                        Tok::Eof => break,
                        _ => {}
                    }
                    self.bump();
                }
                end = end.max(self.prev_end.min(end.max(self.prev_end)));
            }
            let continues = match self.tok.kind {
                Tok::Elif | Tok::Else | Tok::Except | Tok::Finally => true,
                Tok::Def | Tok::Class | Tok::Async | Tok::At => first == Tok::At,
                _ => false,
            };
            if !continues {
                break;
            }
        }
        Span { start, end }
    }

    // ----- blocks -----

    /// The block after a `:`: an indented block, or simple statements on the same line.
    /// Returns the statements and where the block ends.
    fn suite(&mut self, top_level: bool) -> PResult<(Vec<Stmt>, u32)> {
        let mut body = Vec::new();
        if self.at(Tok::Newline) {
            let newline = self.tok.start;
            self.bump();
            if !self.at(Tok::Indent) {
                let span = self.tok.span();
                self.record_error(
                    Span {
                        start: span.start,
                        end: span.start,
                    },
                    "expected an indented block".into(),
                );
                return Ok((body, newline));
            }
            self.bump();
            let end = self.statements_until_dedent(&mut body, top_level);
            return Ok((exact(body), end));
        }
        let end = self.simple_statements_into(&mut body)?;
        Ok((exact(body), end))
    }

    /// Simple statements separated by `;` through the end of their line; returns where the
    /// line's last token (or trailing comment) ends.
    fn simple_statements(&mut self, out: &mut Vec<Stmt>) -> PResult<u32> {
        self.simple_statements_into(out)
    }

    fn simple_statements_into(&mut self, out: &mut Vec<Stmt>) -> PResult<u32> {
        loop {
            self.simple_statement(out)?;
            if !self.eat(Tok::Semi) {
                break;
            }
            if matches!(self.tok.kind, Tok::Newline | Tok::Eof) {
                break;
            }
        }
        match self.tok.kind {
            Tok::Newline => {
                let end = self.tok.start;
                self.bump();
                Ok(end)
            }
            Tok::Eof => Ok(self.prev_end),
            _ => Err(self.unexpected()),
        }
    }

    fn simple_statement(&mut self, out: &mut Vec<Stmt>) -> PResult<()> {
        let start = self.tok.start;
        let type_alias = self.is_soft_keyword("type") && self.peek().kind == Tok::Name;
        match self.tok.kind {
            Tok::Pass => {
                self.bump();
                out.push(Stmt::Other {
                    span: self.span_from(start),
                });
            }
            Tok::Break | Tok::Continue => {
                self.bump();
                out.push(Stmt::Jump {
                    span: self.span_from(start),
                });
            }
            Tok::Return => {
                self.bump();
                let value = if self.can_start_expression() {
                    Some(self.child_star_expressions()?.0)
                } else {
                    None
                };
                let span = self.span_from(start);
                self.emit(out, Stmt::Return { value, span });
            }
            Tok::Raise => {
                self.bump();
                self.in_mode(Mode::Ignore, |p| -> PResult<()> {
                    if p.can_start_expression() {
                        p.child(|p| p.expression())?;
                        if p.eat(Tok::From) {
                            p.child(|p| p.expression())?;
                        }
                    }
                    Ok(())
                })?;
                out.push(Stmt::Raise {
                    span: self.span_from(start),
                });
            }
            Tok::Global | Tok::Nonlocal => {
                self.bump();
                loop {
                    self.expect_name()?;
                    if !self.eat(Tok::Comma) {
                        break;
                    }
                }
                out.push(Stmt::Other {
                    span: self.span_from(start),
                });
            }
            Tok::Del => {
                self.bump();
                self.in_mode(Mode::Ignore, |p| p.child_star_expressions())?;
                out.push(Stmt::Other {
                    span: self.span_from(start),
                });
            }
            Tok::Assert => {
                self.bump();
                let test = self.child(|p| p.expression())?;
                if self.eat(Tok::Comma) {
                    self.in_mode(Mode::Ignore, |p| p.child(|p| p.expression()))?;
                }
                let span = self.span_from(start);
                self.emit(out, Stmt::Assert { test, span });
            }
            Tok::Import => self.import_statement(out)?,
            Tok::From => self.import_from_statement(out)?,
            Tok::Name if type_alias => {
                // `type X[T] = ...` (PEP 695): nothing the IR models.
                self.bump();
                self.bump();
                self.in_mode(Mode::Ignore, |p| -> PResult<()> {
                    if p.at(Tok::LBracket) {
                        p.type_parameters()?;
                    }
                    p.expect(Tok::Assign, "=")?;
                    p.child(|p| p.expression())?;
                    Ok(())
                })?;
                out.push(Stmt::Other {
                    span: self.span_from(start),
                });
            }
            _ => self.expression_statement(out)?,
        }
        Ok(())
    }

    /// Assignments, augmented and annotated assignments, and expression statements.
    fn expression_statement(&mut self, out: &mut Vec<Stmt>) -> PResult<()> {
        let start = self.tok.start;
        if self.at(Tok::Yield) {
            let value = self.child(|p| p.yield_expression())?;
            self.emit(out, Stmt::Expr(value));
            return Ok(());
        }
        let mark = self.walrus.len();
        let (first, elements) = self.child_star_expressions()?;
        match self.tok.kind {
            Tok::Assign => {
                let mut targets = vec![first];
                let value = loop {
                    self.bump();
                    let value_mark = self.walrus.len();
                    let value = self.assigned_value()?;
                    if self.at(Tok::Assign) {
                        targets.push(value);
                        continue;
                    }
                    self.reorder_bindings(mark, value_mark);
                    break value;
                };
                let targets = self.targets(targets)?.into();
                let span = self.span_from(start);
                self.emit(
                    out,
                    Stmt::Assign {
                        targets,
                        value,
                        span,
                    },
                );
            }
            Tok::Colon => {
                self.bump();
                self.in_mode(Mode::Ignore, |p| p.child(|p| p.expression()))?;
                if self.eat(Tok::Assign) {
                    let value_mark = self.walrus.len();
                    let value = self.assigned_value()?;
                    self.reorder_bindings(mark, value_mark);
                    let targets = self.targets(vec![first])?.into();
                    let span = self.span_from(start);
                    self.emit(
                        out,
                        Stmt::Assign {
                            targets,
                            value,
                            span,
                        },
                    );
                } else {
                    self.walrus.truncate(mark);
                    out.push(Stmt::Other {
                        span: self.span_from(start),
                    });
                }
            }
            Tok::AugAssign => {
                let op = match self.tok.aug {
                    Aug::Add => BinOp::Add,
                    Aug::Sub => BinOp::Sub,
                    Aug::Mul => BinOp::Mul,
                    Aug::Div => BinOp::Div,
                    Aug::FloorDiv => BinOp::FloorDiv,
                    Aug::Mod => BinOp::Mod,
                    Aug::Pow => BinOp::Pow,
                    Aug::MatMul => BinOp::MatMul,
                    Aug::Other => BinOp::Other,
                };
                self.bump();
                let value_mark = self.walrus.len();
                let value = self.assigned_value()?;
                self.reorder_bindings(mark, value_mark);
                let mut targets = self.targets(vec![first])?;
                let target = targets.pop().unwrap_or(Target::Other(Span::default()));
                let span = self.span_from(start);
                self.emit(
                    out,
                    Stmt::AugAssign {
                        target: Box::new(target),
                        op,
                        value,
                        span,
                    },
                );
            }
            _ => {
                // `a,` as a statement is its one element; `a, b` is a tuple.
                let expr = match (elements, first) {
                    (
                        Some(1),
                        Expr {
                            kind: ExprKind::Tuple(elements),
                            ..
                        },
                    ) if elements.len() == 1 => elements.into_vec().remove(0),
                    (_, first) => first,
                };
                self.emit(out, Stmt::Expr(expr));
            }
        }
        Ok(())
    }

    /// The right side of `=`: expressions, a tuple, or `yield`.
    fn assigned_value(&mut self) -> PResult<Expr> {
        if self.at(Tok::Yield) {
            return self.child(|p| p.yield_expression());
        }
        Ok(self.child_star_expressions()?.0)
    }

    /// Assignment targets from the expressions parsed before `=`.
    fn targets(&mut self, exprs: Vec<Expr>) -> PResult<Vec<Target>> {
        if !self.building() {
            return Ok(Vec::new());
        }
        if let Some(bad) = exprs.iter().find(|e| is_invalid_target(e)) {
            let span = bad.span;
            self.record_error(span, "cannot assign to expression".into());
            return Err(Fail);
        }
        // Not sized to fit: `Targets` keeps one target inline and frees the list.
        Ok(exprs.into_iter().map(to_target).collect())
    }

    fn single_target(&mut self, expr: Expr) -> PResult<Target> {
        let span = expr.span;
        Ok(self
            .targets(vec![expr])?
            .pop()
            .unwrap_or(Target::Other(span)))
    }

    // ----- imports -----

    /// `a.b.c`: the name without whitespace, and where it ends.
    fn dotted_name(&mut self) -> PResult<String> {
        let first = self.expect_name()?;
        let mut name = self.text_of(first).to_string();
        while self.eat(Tok::Dot) {
            name.push('.');
            let part = self.expect_name()?;
            name.push_str(self.text_of(part));
        }
        Ok(name)
    }

    /// `import a.b.c`, `import a.b as c`: one `Import` per name.
    fn import_statement(&mut self, out: &mut Vec<Stmt>) -> PResult<()> {
        self.bump();
        loop {
            let start = self.tok.start;
            let module = self.dotted_name()?;
            let alias = if self.eat(Tok::As) {
                let alias = self.expect_name()?;
                Some(self.text_of(alias).to_string())
            } else {
                None
            };
            out.push(Stmt::Import {
                module: module.into(),
                alias: alias.map(Into::into),
                span: self.span_from(start),
            });
            if !self.eat(Tok::Comma) {
                return Ok(());
            }
        }
    }

    /// `from m import a, b as c` → `Import { "m.a", Some("a") }`, `Import { "m.b", Some("c") }`.
    /// Relative modules keep their dots (`from ..x import y` → `"..x.y"`). A wildcard import
    /// binds names we cannot know and becomes `Other`, and so does `from __future__ import`.
    fn import_from_statement(&mut self, out: &mut Vec<Stmt>) -> PResult<()> {
        let start = self.tok.start;
        self.bump();
        let mut prefix = String::new();
        loop {
            match self.tok.kind {
                Tok::Dot => prefix.push('.'),
                Tok::Ellipsis => prefix.push_str("..."),
                _ => break,
            }
            self.bump();
        }
        if !self.at(Tok::Import) || prefix.is_empty() {
            prefix.push_str(&self.dotted_name()?);
        }
        let future = prefix == "__future__";
        self.expect(Tok::Import, "import")?;
        if self.eat(Tok::Star) {
            out.push(Stmt::Other {
                span: self.span_from(start),
            });
            return Ok(());
        }
        let parenthesized = self.eat(Tok::LParen);
        let mut imports = Vec::new();
        loop {
            let name_start = self.tok.start;
            let name = self.dotted_name()?;
            let alias = if self.eat(Tok::As) {
                let alias = self.expect_name()?;
                self.text_of(alias).to_string()
            } else {
                name.rsplit('.').next().unwrap_or_default().to_string()
            };
            let module = if prefix.is_empty() || prefix.ends_with('.') {
                format!("{prefix}{name}")
            } else {
                format!("{prefix}.{name}")
            };
            imports.push(Stmt::Import {
                module: module.into(),
                alias: Some(alias.into()),
                span: self.span_from(name_start),
            });
            if !self.eat(Tok::Comma) {
                break;
            }
            if parenthesized && self.at(Tok::RParen) {
                break;
            }
        }
        if parenthesized {
            self.expect(Tok::RParen, ")")?;
        }
        if future {
            out.push(Stmt::Other {
                span: self.span_from(start),
            });
        } else {
            out.append(&mut imports);
        }
        Ok(())
    }

    // ----- compound statements -----

    /// `if`/`elif`/`else`: each `elif` becomes an `If` nested in the previous one's `orelse`,
    /// with its own walrus bindings placed inside that `orelse`.
    fn if_statement(&mut self, out: &mut Vec<Stmt>) -> PResult<()> {
        let start = self.tok.start;
        let mut alternatives = Vec::new();
        let mut nested = 0;
        let mut end;
        loop {
            let clause_start = self.tok.start;
            self.bump();
            nested += usize::from(self.nests_in_chain(alternatives.len(), nested));
            let test = self.child(|p| p.named_expression())?;
            self.expect(Tok::Colon, ":")?;
            let bindings = self.take_walrus();
            let (body, body_end) = self.suite(false)?;
            end = body_end;
            alternatives.push(Alternative {
                span: Span {
                    start: clause_start,
                    end,
                },
                bindings,
                test,
                body,
            });
            if !self.at(Tok::Elif) {
                break;
            }
        }
        let mut otherwise = None;
        if self.at(Tok::Else) {
            let else_start = self.tok.start;
            self.bump();
            self.expect(Tok::Colon, ":")?;
            let (body, body_end) = self.suite(false)?;
            end = body_end;
            otherwise = Some((
                Span {
                    start: else_start,
                    end,
                },
                body,
            ));
        }
        if let Some(first) = alternatives.first_mut() {
            first.span = Span { start, end };
        }
        self.leave_chain(nested);
        out.append(&mut chain_alternatives(alternatives, nested, otherwise));
        Ok(())
    }

    /// Whether alternative `index` of a chain nests inside the previous one (`nested` of
    /// them do so far). Nesting stops while half of the depth budget is left, so that the
    /// alternatives lowered flat still have room for their tests and bodies.
    fn nests_in_chain(&mut self, index: usize, nested: usize) -> bool {
        index == nested && (index == 0 || (self.depth_left() > MAX_DEPTH / 2 && self.enter()))
    }

    fn leave_chain(&mut self, nested: usize) {
        for _ in 1..nested {
            self.leave();
        }
    }

    /// The `else:` block of a `for`/`while`, and where the statement ends.
    fn loop_else(&mut self, end: u32) -> PResult<(Vec<Stmt>, u32)> {
        if !self.eat(Tok::Else) {
            return Ok((Vec::new(), end));
        }
        self.expect(Tok::Colon, ":")?;
        self.suite(false)
    }

    /// `while test: body`. The test only matters for the names its walrus expressions bind,
    /// which are re-bound on every iteration: to unknown values before the loop and again at
    /// the start of the body.
    fn while_statement(&mut self, out: &mut Vec<Stmt>) -> PResult<()> {
        let start = self.tok.start;
        self.bump();
        self.in_mode(Mode::Opaque, |p| p.child(|p| p.named_expression()))?;
        self.expect(Tok::Colon, ":")?;
        let bindings = self.take_walrus();
        let (mut block, end) = self.suite(false)?;
        let mut body = bindings.clone();
        body.append(&mut block);
        let (orelse, end) = self.loop_else(end)?;
        out.extend(bindings);
        out.push(Stmt::Loop {
            target: None,
            iter: None,
            body,
            orelse: orelse.into_boxed_slice(),
            span: Span { start, end },
        });
        Ok(())
    }

    fn for_statement(&mut self, out: &mut Vec<Stmt>) -> PResult<()> {
        let start = self.tok.start;
        if self.at(Tok::Async) {
            self.bump();
        }
        self.bump();
        let mark = self.walrus.len();
        let target = self.child(|p| p.target_list())?;
        self.expect(Tok::In, "in")?;
        let iter_mark = self.walrus.len();
        let (iter, _) = self.child_star_expressions()?;
        self.reorder_bindings(mark, iter_mark);
        self.expect(Tok::Colon, ":")?;
        let target = self.single_target(target)?;
        let bindings = self.take_walrus();
        let (body, end) = self.suite(false)?;
        let (orelse, end) = self.loop_else(end)?;
        out.extend(bindings);
        out.push(Stmt::Loop {
            target: Some(Box::new(target)),
            iter: Some(Box::new(iter)),
            body,
            orelse: orelse.into_boxed_slice(),
            span: Span { start, end },
        });
        Ok(())
    }

    fn with_statement(&mut self, out: &mut Vec<Stmt>) -> PResult<()> {
        let start = self.tok.start;
        if self.at(Tok::Async) {
            self.bump();
        }
        self.bump();
        let mut items = Vec::new();
        let parenthesized = self.at(Tok::LParen) && self.parenthesized_with_items();
        if parenthesized {
            self.bump();
        }
        loop {
            let context = self.child(|p| p.expression())?;
            let target = if self.eat(Tok::As) {
                let target = self.child(|p| p.star_target())?;
                Some(self.single_target(target)?)
            } else {
                None
            };
            items.push((context, target));
            if !self.eat(Tok::Comma) {
                break;
            }
            if parenthesized && self.at(Tok::RParen) {
                break;
            }
        }
        if parenthesized {
            self.expect(Tok::RParen, ")")?;
        }
        self.expect(Tok::Colon, ":")?;
        let bindings = self.take_walrus();
        let (body, end) = self.suite(false)?;
        out.extend(bindings);
        out.push(Stmt::With {
            items,
            body,
            span: Span { start, end },
        });
        Ok(())
    }

    /// `with (a as b, c):` lists its items in parentheses when the `)` matching the current
    /// `(` is directly followed by the `:` and what is inside can be items (CPython tries
    /// that reading first); else the parentheses belong to an expression: `with (a, b) as
    /// c:`, and `with (yield):`, `with (a := b):`, `with (x for x in y):`, `with (*a, b):`,
    /// `with ():`, which items cannot be.
    fn parenthesized_with_items(&mut self) -> bool {
        let mut depth = 1usize;
        let mut closed = false;
        let mut item_start = true;
        let mut empty = true;
        self.scan_ahead(|token| {
            if closed {
                return Some(token.kind == Tok::Colon && !empty);
            }
            let at_item_start = std::mem::replace(&mut item_start, false);
            match token.kind {
                Tok::LParen | Tok::LBracket | Tok::LBrace => depth += 1,
                Tok::RParen | Tok::RBracket | Tok::RBrace => {
                    depth -= 1;
                    if depth == 0 {
                        closed = true;
                        return None;
                    }
                }
                Tok::Newline | Tok::Eof | Tok::Error => return Some(false),
                Tok::Comma if depth == 1 => item_start = true,
                Tok::Walrus | Tok::For if depth == 1 => return Some(false),
                Tok::Yield | Tok::Star if at_item_start && depth == 1 => return Some(false),
                _ => {}
            }
            empty = false;
            None
        })
        .unwrap_or(false)
    }

    /// `try`/`except`/`else`/`finally`. A handler `except E as e:` starts by binding `e` to
    /// an unknown value (it may shadow a tensor variable).
    fn try_statement(&mut self, out: &mut Vec<Stmt>) -> PResult<()> {
        let start = self.tok.start;
        self.bump();
        self.expect(Tok::Colon, ":")?;
        let (body, mut end) = self.suite(false)?;
        let mut handlers = Vec::new();
        let mut orelse = Vec::new();
        let mut finalbody = Vec::new();
        let mut has_finally = false;
        // Whether the first handler is `except*`: the others must all be alike.
        let mut first_star = None;
        while self.at(Tok::Except) {
            let clause_start = self.tok.start;
            self.bump();
            let star = self.eat(Tok::Star);
            if *first_star.get_or_insert(star) != star {
                // CPython's error, at the first handler of the other kind; still lowered.
                first_star = Some(!star);
                let at = Span {
                    start: clause_start,
                    end: clause_start,
                };
                self.record_error(
                    at,
                    "cannot have both `except` and `except*` on the same `try`".into(),
                );
            }
            if star && self.at(Tok::Colon) {
                let at = self.tok.span();
                self.record_error(at, "expected one or more exception types".into());
            }
            let mut name: Option<Token> = None;
            if !self.at(Tok::Colon) {
                self.in_mode(Mode::Ignore, |p| -> PResult<()> {
                    let types_start = p.tok.start;
                    p.child(|p| p.expression())?;
                    // `except A, B:` (PEP 758), a trailing comma allowed.
                    let mut several = false;
                    while p.eat(Tok::Comma) {
                        several = true;
                        if p.at(Tok::Colon) {
                            break;
                        }
                        p.child(|p| p.expression())?;
                    }
                    if p.eat(Tok::As) {
                        name = Some(p.expect_name()?);
                        if several {
                            // CPython's error; the handler is still lowered as if the
                            // types were parenthesized.
                            let span = p.span_from(types_start);
                            p.record_error(
                                span,
                                "multiple exception types must be parenthesized when using `as`"
                                    .into(),
                            );
                        }
                    }
                    Ok(())
                })?;
            }
            self.expect(Tok::Colon, ":")?;
            let (mut block, block_end) = self.suite(false)?;
            end = block_end;
            let mut handler = Vec::new();
            if let Some(name) = name {
                let span = Span {
                    start: clause_start,
                    end,
                };
                handler.push(Stmt::Assign {
                    targets: Targets::One(Target::Name(self.name_of(name), name.span())),
                    value: Expr::new(ExprKind::Unknown, span),
                    span,
                });
            }
            handler.append(&mut block);
            handlers.push(handler);
        }
        if self.at(Tok::Else) && !handlers.is_empty() {
            self.bump();
            self.expect(Tok::Colon, ":")?;
            let (block, block_end) = self.suite(false)?;
            orelse = block;
            end = block_end;
        }
        if self.eat(Tok::Finally) {
            has_finally = true;
            self.expect(Tok::Colon, ":")?;
            let (block, block_end) = self.suite(false)?;
            finalbody = block;
            end = block_end;
        }
        if handlers.is_empty() && !has_finally {
            let at = self.tok.start;
            self.record_error(
                Span { start: at, end: at },
                "expected `except` or `finally` block".into(),
            );
            return Err(Fail);
        }
        out.append(&mut self.take_walrus());
        out.push(Stmt::Try(Box::new(ir::Try {
            body,
            handlers,
            orelse,
            finalbody,
            span: Span { start, end },
        })));
        Ok(())
    }

    /// `match` starts a statement when the logical line is `match <subject>:` (a soft
    /// keyword: `match = 1`, `match(x)` and `match.group()` are expressions).
    fn is_match_statement(&mut self) -> bool {
        let next = self.peek();
        if matches!(
            next.kind,
            Tok::Newline
                | Tok::Eof
                | Tok::Assign
                | Tok::AugAssign
                | Tok::Colon
                | Tok::Dot
                | Tok::Comma
                | Tok::Semi
                | Tok::RParen
                | Tok::Walrus
        ) {
            return false;
        }
        let mut depth = 0usize;
        let mut last = Tok::Name;
        self.scan_ahead(|token| {
            match token.kind {
                Tok::LParen | Tok::LBracket | Tok::LBrace => depth += 1,
                Tok::RParen | Tok::RBracket | Tok::RBrace => depth = depth.saturating_sub(1),
                Tok::Newline | Tok::Eof | Tok::Semi | Tok::Error => {
                    return Some(last == Tok::Colon && depth == 0)
                }
                _ => {}
            }
            last = if depth == 0 { token.kind } else { Tok::Name };
            None
        })
        .unwrap_or(false)
    }

    /// `match subject: case ...`. Which case runs is unknown to the interpreter, so the cases
    /// become a chain of `If`s with unknown tests; the last `orelse` is the no-match path,
    /// unless the last case always matches (`case _:`, `case name:`, unguarded), whose body
    /// is then that `orelse`. Each case body starts by binding the pattern's capture names to
    /// unknown values.
    fn match_statement(&mut self, out: &mut Vec<Stmt>) -> PResult<()> {
        let start = self.tok.start;
        self.bump();
        let subject = self.child(|p| p.star_named_expression())?;
        if self.at(Tok::Comma) {
            self.in_mode(Mode::Ignore, |p| -> PResult<()> {
                while p.eat(Tok::Comma) {
                    if p.at(Tok::Colon) {
                        break;
                    }
                    p.child(|p| p.star_named_expression())?;
                }
                Ok(())
            })?;
        }
        self.emit(out, Stmt::Expr(subject));
        self.expect(Tok::Colon, ":")?;
        self.expect(Tok::Newline, "newline")?;
        if !self.at(Tok::Indent) {
            let at = self.tok.start;
            self.record_error(
                Span { start: at, end: at },
                "expected an indented block".into(),
            );
            return Err(Fail);
        }
        self.bump();
        let mut cases = Vec::new();
        let mut nested = 0;
        let mut end = self.prev_end;
        // Whether the last case parsed always matches.
        let mut last_is_irrefutable = false;
        loop {
            match self.tok.kind {
                Tok::Dedent => {
                    end = self.tok.start;
                    self.bump();
                    break;
                }
                Tok::Eof => break,
                Tok::Newline => self.bump(),
                Tok::Name if self.is_soft_keyword("case") => {
                    nested += usize::from(self.nests_in_chain(cases.len(), nested));
                    let clause_start = self.tok.start;
                    self.bump();
                    let mut names = Vec::new();
                    let irrefutable = self.case_patterns(&mut names)?;
                    let guarded = self.eat(Tok::If);
                    if guarded {
                        self.in_mode(Mode::Opaque, |p| p.child(|p| p.named_expression()))?;
                    }
                    last_is_irrefutable = irrefutable && !guarded;
                    self.expect(Tok::Colon, ":")?;
                    let guard_bindings = self.take_walrus();
                    let (mut block, clause_end) = self.suite(false)?;
                    let span = Span {
                        start: clause_start,
                        end: clause_end,
                    };
                    let mut body = Vec::new();
                    for name in names {
                        body.push(Stmt::Assign {
                            targets: Targets::One(Target::Name(self.name_of(name), name.span())),
                            value: Expr::new(ExprKind::Unknown, span),
                            span,
                        });
                    }
                    for mut binding in guard_bindings {
                        if let Stmt::Assign { value, span: s, .. } = &mut binding {
                            *value = Expr::new(ExprKind::Unknown, *s);
                        }
                        body.push(binding);
                    }
                    body.append(&mut block);
                    cases.push(Alternative {
                        span,
                        bindings: Vec::new(),
                        test: Expr::new(ExprKind::Unknown, span),
                        body,
                    });
                }
                _ => return Err(self.unexpected()),
            }
        }
        let otherwise = if last_is_irrefutable {
            cases.pop().map(|case| (case.span, case.body))
        } else {
            None
        };
        self.leave_chain(nested);
        let nested = nested.min(cases.len());
        match (cases.is_empty(), otherwise) {
            (true, None) => out.push(Stmt::Other {
                span: Span { start, end },
            }),
            (true, Some((_, mut body))) => out.append(&mut body),
            (false, otherwise) => {
                out.append(&mut chain_alternatives(cases, nested, otherwise));
            }
        }
        Ok(())
    }

    // ----- patterns -----

    /// The patterns of a `case`, collecting the names they capture (`x`, `*rest`, `**kw`,
    /// `as name`, keyword values), in source order and without `_`. Returns whether the
    /// pattern matches every subject (a wildcard or capture, maybe parenthesized, or an
    /// or-pattern with such an alternative); `case a, b:` is a sequence pattern.
    fn case_patterns(&mut self, names: &mut Vec<Token>) -> PResult<bool> {
        let mut irrefutable = true;
        let mut count = 0;
        loop {
            irrefutable &= self.pattern(names, 0)?;
            count += 1;
            if !self.eat(Tok::Comma) {
                return Ok(irrefutable && count == 1);
            }
            if self.at(Tok::Colon) || self.at(Tok::If) {
                return Ok(false);
            }
        }
    }

    /// `or_pattern ['as' NAME]`; whether it always matches.
    fn pattern(&mut self, names: &mut Vec<Token>, depth: u32) -> PResult<bool> {
        if depth > MAX_DEPTH || !self.enter() {
            return Err(self.unexpected());
        }
        let result = self.pattern_within_limit(names, depth);
        self.leave();
        result
    }

    fn pattern_within_limit(&mut self, names: &mut Vec<Token>, depth: u32) -> PResult<bool> {
        let mut irrefutable = false;
        loop {
            irrefutable |= self.closed_pattern(names, depth)?;
            if !self.eat(Tok::Pipe) {
                break;
            }
        }
        if self.eat(Tok::As) {
            let name = self.expect_name()?;
            self.capture(names, name);
        }
        Ok(irrefutable)
    }

    fn capture(&self, names: &mut Vec<Token>, name: Token) {
        if self.text_of(name) != "_" {
            names.push(name);
        }
    }

    /// One pattern without `|` and `as`; whether it always matches (a capture, `_`, or such
    /// a pattern in parentheses).
    fn closed_pattern(&mut self, names: &mut Vec<Token>, depth: u32) -> PResult<bool> {
        let mut irrefutable = false;
        match self.tok.kind {
            Tok::Star | Tok::DoubleStar => {
                self.bump();
                let name = self.expect_name()?;
                self.capture(names, name);
            }
            Tok::Name => {
                let first = self.tok;
                self.bump();
                let mut dotted = false;
                while self.eat(Tok::Dot) {
                    self.expect_name()?;
                    dotted = true;
                }
                if self.at(Tok::LParen) {
                    // A class pattern: positional and keyword sub-patterns.
                    self.bump();
                    while !self.at(Tok::RParen) {
                        if self.at(Tok::Name) && self.peek().kind == Tok::Assign {
                            self.bump();
                            self.bump();
                        }
                        self.pattern(names, depth + 1)?;
                        if !self.eat(Tok::Comma) {
                            break;
                        }
                    }
                    self.expect(Tok::RParen, ")")?;
                } else if !dotted {
                    self.capture(names, first);
                    irrefutable = true;
                }
            }
            Tok::LParen | Tok::LBracket => {
                let parenthesized = self.at(Tok::LParen);
                let closer = if parenthesized {
                    Tok::RParen
                } else {
                    Tok::RBracket
                };
                self.bump();
                let mut count = 0;
                let mut comma = false;
                while !self.at(closer) {
                    irrefutable = self.pattern(names, depth + 1)?;
                    count += 1;
                    comma = self.eat(Tok::Comma);
                    if !comma {
                        break;
                    }
                }
                // `(p)` is `p`; `(p,)`, `()` and `[p]` are sequence patterns.
                irrefutable &= parenthesized && count == 1 && !comma;
                self.expect(closer, if parenthesized { ")" } else { "]" })?;
            }
            Tok::LBrace => {
                self.bump();
                while !self.at(Tok::RBrace) {
                    if self.eat(Tok::DoubleStar) {
                        // `**rest` comes last (a trailing comma may follow it).
                        let name = self.expect_name()?;
                        self.capture(names, name);
                        self.eat(Tok::Comma);
                        break;
                    }
                    self.in_mode(Mode::Ignore, |p| p.child(|p| p.bitwise(1)))?;
                    self.expect(Tok::Colon, ":")?;
                    self.pattern(names, depth + 1)?;
                    if !self.eat(Tok::Comma) {
                        break;
                    }
                }
                self.expect(Tok::RBrace, "}")?;
            }
            // Literals: numbers (signed, complex), strings, None/True/False.
            _ => {
                self.in_mode(Mode::Ignore, |p| p.child(|p| p.bitwise(5)))?;
            }
        }
        Ok(irrefutable)
    }

    // ----- definitions -----

    /// `@decorator` lines, then the `def` or `class` (decorators are not lowered: they do
    /// not change what the body does to tensors).
    fn decorated(&mut self, out: &mut Vec<Stmt>, top_level: bool) -> PResult<()> {
        self.decorators()?;
        match self.tok.kind {
            Tok::Def | Tok::Async => self.function_statement(out, top_level),
            Tok::Class => self.class_statement(out, top_level),
            _ => Err(self.unexpected()),
        }
    }

    fn decorators(&mut self) -> PResult<()> {
        while self.eat(Tok::At) {
            self.in_mode(Mode::Ignore, |p| p.child(|p| p.named_expression()))?;
            self.expect(Tok::Newline, "newline")?;
        }
        Ok(())
    }

    fn function_statement(&mut self, out: &mut Vec<Stmt>, top_level: bool) -> PResult<()> {
        let function = Arc::new(self.function(false)?);
        out.append(&mut self.take_walrus());
        if top_level {
            self.module_functions.push(function);
        } else {
            out.push(Stmt::FunctionDef(function));
        }
        Ok(())
    }

    fn class_statement(&mut self, out: &mut Vec<Stmt>, top_level: bool) -> PResult<()> {
        let class = Arc::new(self.class(None)?);
        out.append(&mut self.take_walrus());
        if top_level {
            self.module_classes.push(class);
        } else {
            out.push(Stmt::ClassDef(class));
        }
        Ok(())
    }

    /// A `def`. Inside a class, a first parameter named `self` or `cls` makes it a method and
    /// is dropped from `params`; `__init__` is the constructor. After a syntax error in the
    /// header, the block below it is still lowered as the body.
    fn function(&mut self, in_class: bool) -> PResult<Function> {
        let start = self.tok.start;
        if self.at(Tok::Async) {
            self.bump();
        }
        self.expect(Tok::Def, "def")?;
        let name_token = self.expect_name()?;
        let name = self.text_of(name_token).to_string();
        let mut params = Vec::new();
        let header = self.function_header(&mut params);
        let mut params: Vec<Param> = params;
        let has_receiver = params
            .first()
            .is_some_and(|first| !first.variadic && (first.name == "self" || first.name == "cls"));
        let is_method = in_class && has_receiver;
        if is_method {
            params.remove(0);
        }
        // Walrus bindings in defaults belong before the `def`, not in its body.
        let enclosing = self.take_walrus();
        let body = match header {
            Ok(()) => self.suite(false),
            Err(Fail) => self.body_after_broken_header(),
        };
        self.walrus = enclosing;
        let (body, end) = body?;
        Ok(Function {
            is_constructor: is_method && name == "__init__",
            name,
            params,
            body,
            span: Span { start, end },
            name_span: name_token.span(),
            is_method,
        })
    }

    fn function_header(&mut self, params: &mut Vec<Param>) -> PResult<()> {
        if self.at(Tok::LBracket) {
            self.in_mode(Mode::Ignore, |p| p.type_parameters())?;
        }
        self.expect(Tok::LParen, "(")?;
        *params = self.parameters(Tok::RParen, true)?;
        self.expect(Tok::RParen, ")")?;
        if self.eat(Tok::Arrow) {
            self.in_mode(Mode::Ignore, |p| p.child(|p| p.expression()))?;
        }
        self.expect(Tok::Colon, ":")
    }

    /// The body of a definition whose header did not parse: the rest of the header line is
    /// skipped and an indented block below it is the body.
    fn body_after_broken_header(&mut self) -> PResult<(Vec<Stmt>, u32)> {
        self.recovering = true;
        self.skip_rest_of_line();
        let mut body = Vec::new();
        if !self.at(Tok::Indent) {
            return Ok((body, self.prev_end));
        }
        self.bump();
        let end = self.statements_until_dedent(&mut body, false);
        Ok((body, end))
    }

    /// `[T, *Ts, **P, U: int = str]` (PEP 695/696), not lowered. Only a `TypeVar` has a
    /// bound, and only a `TypeVarTuple`'s default may be starred (`*Ts = *tuple[int]`).
    pub(super) fn type_parameters(&mut self) -> PResult<()> {
        self.bump();
        if self.at(Tok::RBracket) {
            let span = self.tok.span();
            self.record_error(span, "type parameter list cannot be empty".into());
            return Err(Fail);
        }
        while !self.at(Tok::RBracket) {
            let kind = match self.tok.kind {
                Tok::Star => Some("TypeVarTuple"),
                Tok::DoubleStar => Some("ParamSpec"),
                _ => None,
            };
            if kind.is_some() {
                self.bump();
            }
            self.expect_name()?;
            if self.at(Tok::Colon) {
                let colon = self.tok.start;
                self.bump();
                let bound_start = self.tok.start;
                self.child(|p| p.expression())?;
                if let Some(kind) = kind {
                    // `*Ts: (int, str)` names constraints, `*Ts: int` a bound (the message
                    // only; the text is enough to tell them apart).
                    let bound = self
                        .text
                        .get(bound_start as usize..self.prev_end as usize)
                        .unwrap_or("");
                    let constraints =
                        bound.starts_with('(') && bound.ends_with(')') && bound.contains(',');
                    let what = if constraints { "constraints" } else { "bound" };
                    let span = self.span_from(colon);
                    self.record_error(span, format!("cannot use {what} with {kind}"));
                    return Err(Fail);
                }
            }
            if self.eat(Tok::Assign) {
                if kind == Some("TypeVarTuple") {
                    self.child(|p| p.star_expression())?;
                } else {
                    self.child(|p| p.expression())?;
                }
            }
            if !self.eat(Tok::Comma) {
                break;
            }
        }
        self.expect(Tok::RBracket, "]")
    }

    /// Parameters up to `closer` (`)` of a `def`, `:` of a lambda). `/` and a bare `*` bind
    /// nothing; annotations are only read for jaxtyping shapes.
    /// A parameter without a default after one with a default (before any `*`) is CPython's
    /// syntax error, recorded at its name; the parameters are still lowered.
    pub(super) fn parameters(&mut self, closer: Tok, annotations: bool) -> PResult<Vec<Param>> {
        let mut params = Vec::new();
        // Whether a positional parameter had a default, and whether `*` came.
        let (mut default_seen, mut keyword_only) = (false, false);
        while !self.at(closer) {
            let start = self.tok.start;
            match self.tok.kind {
                Tok::Slash => self.bump(),
                Tok::Star | Tok::DoubleStar => {
                    keyword_only = true;
                    self.bump();
                    if self.at(Tok::Name) {
                        let name = self.expect_name()?;
                        if annotations && self.eat(Tok::Colon) {
                            self.in_mode(Mode::Ignore, |p| p.child(|p| p.star_expression()))?;
                        }
                        params.push(Param {
                            name: self.text_of(name).to_string(),
                            shape_annotation: None,
                            annotated_int: false,
                            annotated_type: None,
                            default: None,
                            variadic: true,
                            span: self.span_from(start),
                        });
                    }
                }
                Tok::Name => {
                    let name = self.expect_name()?;
                    let mut shape = None;
                    let mut annotated_int = false;
                    if annotations && self.eat(Tok::Colon) {
                        self.no_walrus += 1;
                        let annotation = self.child(|p| p.expression());
                        self.no_walrus -= 1;
                        let annotation = annotation?;
                        if self.building() {
                            shape = shape_annotation(&annotation, self.text);
                            annotated_int = is_int_annotation(&annotation);
                        }
                    }
                    let default = if self.eat(Tok::Assign) {
                        default_seen = true;
                        Some(self.child(|p| p.expression())?)
                    } else {
                        if default_seen && !keyword_only {
                            self.record_error(
                                name.span(),
                                "parameter without a default follows parameter with a default"
                                    .into(),
                            );
                        }
                        None
                    };
                    params.push(Param {
                        name: self.text_of(name).to_string(),
                        shape_annotation: shape,
                        annotated_int,
                        annotated_type: None,
                        default: default.filter(|_| self.building()),
                        variadic: false,
                        span: self.span_from(start),
                    });
                }
                _ => {
                    let what = if closer == Tok::RParen { ")" } else { ":" };
                    self.expect(closer, what)?;
                }
            }
            if !self.eat(Tok::Comma) {
                break;
            }
        }
        Ok(params)
    }

    /// A `class`. Methods are the `def`s directly in its body; classes nested in the body are
    /// lowered too and added to the module's classes as `Outer.Inner`. Other class-level
    /// statements are parsed but not kept: the IR's `Class` has no body.
    fn class(&mut self, outer: Option<&str>) -> PResult<Class> {
        let start = self.tok.start;
        self.bump();
        let name_token = self.expect_name()?;
        let plain_name = self.text_of(name_token);
        let name = match outer {
            Some(outer) => format!("{outer}.{plain_name}"),
            None => plain_name.to_string(),
        };
        let mut bases = Vec::new();
        let header = self.class_header(&mut bases);
        let mut attrs = Vec::new();
        let (methods, end) = match header {
            Ok(()) => self.class_body(&name, &mut attrs)?,
            Err(Fail) => {
                self.recovering = true;
                self.skip_rest_of_line();
                if self.at(Tok::Indent) {
                    self.class_body(&name, &mut attrs)?
                } else {
                    (Vec::new(), self.prev_end)
                }
            }
        };
        Ok(Class {
            name,
            methods,
            bases,
            attrs,
            field_types: Vec::new(),
            span: Span { start, end },
        })
    }

    fn class_header(&mut self, bases: &mut Vec<String>) -> PResult<()> {
        if self.at(Tok::LBracket) {
            self.in_mode(Mode::Ignore, |p| p.type_parameters())?;
        }
        if self.eat(Tok::LParen) {
            self.in_mode(Mode::Ignore, |p| -> PResult<()> {
                while !p.at(Tok::RParen) {
                    if p.eat(Tok::Star) || p.eat(Tok::DoubleStar) {
                        p.child(|p| p.expression())?;
                    } else if p.at(Tok::Name) && p.peek().kind == Tok::Assign {
                        p.bump();
                        p.bump();
                        p.child(|p| p.expression())?;
                    } else if p.can_start_expression() {
                        let start = p.tok.start;
                        p.child(|p| p.named_expression())?;
                        let text = p.text.get(start as usize..p.prev_end as usize);
                        bases.push(text.unwrap_or("").to_string());
                    } else {
                        break;
                    }
                    if !p.eat(Tok::Comma) {
                        break;
                    }
                }
                p.expect(Tok::RParen, ")")
            })?;
        }
        self.expect(Tok::Colon, ":")
    }

    /// The methods of a class body, and where the body ends.
    fn class_body(
        &mut self,
        name: &str,
        attrs: &mut Vec<(String, Expr)>,
    ) -> PResult<(Vec<Arc<Function>>, u32)> {
        let mut methods = Vec::new();
        if self.at(Tok::Indent) || self.at(Tok::Newline) {
            if self.eat(Tok::Newline) && !self.at(Tok::Indent) {
                let at = self.tok.start;
                self.record_error(
                    Span { start: at, end: at },
                    "expected an indented block".into(),
                );
                return Ok((methods, self.prev_end));
            }
            self.bump();
            // Indented blocks where none may start (after a broken line) are read as more of
            // the class body.
            let mut stray_blocks = 0usize;
            loop {
                match self.tok.kind {
                    Tok::Dedent if stray_blocks > 0 => {
                        stray_blocks -= 1;
                        self.bump();
                    }
                    Tok::Dedent => {
                        let end = self.tok.start;
                        self.bump();
                        return Ok((methods, end));
                    }
                    Tok::Eof => return Ok((methods, self.prev_end)),
                    Tok::Newline => self.bump(),
                    Tok::Indent => {
                        if !self.recovering {
                            let span = self.tok.span();
                            self.record_error(span, "unexpected indent".into());
                        }
                        stray_blocks += 1;
                        self.bump();
                    }
                    _ => self.class_member(name, &mut methods, attrs),
                }
            }
        }
        // `class A: pass` — statements on the header's line.
        let mut scratch = Vec::new();
        self.discard += 1;
        let end = self.in_mode(Mode::Ignore, |p| p.simple_statements_into(&mut scratch));
        self.discard -= 1;
        Ok((methods, end?))
    }

    /// One statement of a class body: a method, a nested class, a `name = value` attribute,
    /// or something not kept.
    fn class_member(
        &mut self,
        class_name: &str,
        methods: &mut Vec<Arc<Function>>,
        attrs: &mut Vec<(String, Expr)>,
    ) {
        if !self.enter() {
            self.too_deep();
            self.skim_statement();
            return;
        }
        let start = self.tok.start;
        let (depth, mode) = (self.depth, self.mode);
        let result = (|| -> PResult<()> {
            let is_definition = match self.tok.kind {
                Tok::At => {
                    self.decorators()?;
                    true
                }
                Tok::Def | Tok::Class => true,
                Tok::Async => self.peek().kind == Tok::Def,
                _ => false,
            };
            if !is_definition {
                let attribute = self.at(Tok::Name) && self.peek().kind == Tok::Assign;
                let mode = if attribute { Mode::Build } else { Mode::Ignore };
                let mut scratch = Vec::new();
                self.discard += 1;
                self.in_mode(mode, |p| p.statement(&mut scratch, false));
                self.discard -= 1;
                self.take_walrus();
                if let [Stmt::Assign { targets, value, .. }] = scratch.as_slice() {
                    if let [Target::Name(name, _)] = &targets[..] {
                        attrs.push((name.to_string(), value.clone()));
                    }
                }
                return Ok(());
            }
            match self.tok.kind {
                Tok::Def | Tok::Async => {
                    let method = self.function(true)?;
                    methods.push(Arc::new(method));
                }
                Tok::Class => {
                    let nested = self.class(Some(class_name))?;
                    if self.discard == 0 {
                        self.module_classes.push(Arc::new(nested));
                    }
                }
                _ => return Err(self.unexpected()),
            }
            // Walrus in method defaults bind class attributes, which the IR cannot hold.
            self.take_walrus();
            Ok(())
        })();
        if result.is_err() {
            self.depth = depth;
            self.mode = mode;
            self.take_walrus();
            let before = (self.tok.start, self.tok.kind);
            self.recover(start);
            if (self.tok.start, self.tok.kind) == before && self.tok.kind != Tok::Eof {
                self.bump();
            }
        }
        self.leave();
    }
}

/// The start of the physical line containing `offset`.
fn line_start_of(text: &str, offset: usize) -> usize {
    let bytes = text.as_bytes();
    let offset = offset.min(bytes.len());
    memchr::memrchr2(b'\n', b'\r', &bytes[..offset]).map_or(0, |i| i + 1)
}

/// One branch of an `if`/`elif` chain or a `match`: the walrus bindings its test makes, the
/// test, and the body.
struct Alternative {
    span: Span,
    bindings: Vec<Stmt>,
    test: Expr,
    body: Vec<Stmt>,
}

/// Builds `if a: .. else: (if b: .. else: (.. else: otherwise))` from alternatives that
/// exclude each other. The first `nested` alternatives nest as usual; the rest (past the
/// depth limit) become a flat sequence of `If`s in the innermost `orelse`, with the `else`
/// part under an unknown test. That sequence allows every path of the chain and more, so the
/// interpreter stays sound while the IR's depth stays bounded.
fn chain_alternatives(
    mut alternatives: Vec<Alternative>,
    nested: usize,
    otherwise: Option<(Span, Vec<Stmt>)>,
) -> Vec<Stmt> {
    let flat = alternatives.split_off(nested.min(alternatives.len()));
    let mut tail = if flat.is_empty() {
        otherwise.map(|(_, body)| body).unwrap_or_default()
    } else {
        let mut sequence = Vec::new();
        for Alternative {
            span,
            mut bindings,
            test,
            body,
        } in flat
        {
            sequence.append(&mut bindings);
            sequence.push(Stmt::If {
                test: Box::new(test),
                body,
                orelse: Vec::new(),
                span,
            });
        }
        if let Some((span, body)) = otherwise {
            let test = Expr::new(ExprKind::Unknown, span);
            sequence.push(Stmt::If {
                test: Box::new(test),
                body,
                orelse: Vec::new(),
                span,
            });
        }
        sequence
    };
    for Alternative {
        span,
        mut bindings,
        test,
        body,
    } in alternatives.into_iter().rev()
    {
        bindings.push(Stmt::If {
            test: Box::new(test),
            body,
            orelse: tail,
            span,
        });
        tail = bindings;
    }
    tail
}
