//! Lowering of statements: assignments, control flow, imports, function and class
//! definitions.
//!
//! Every rule follows one discipline for walrus bindings (see `Lowerer::walrus_bindings`):
//! lower the statement's own expressions, take the bindings they made, lower nested blocks,
//! then emit the bindings followed by the statement.

use std::sync::Arc;

use tree_sitter::Node;

use super::lowerer::{Lowerer, MAX_DEPTH};
use crate::ir::{BinOp, Class, Expr, ExprKind, Function, Param, Span, Stmt, Target};

impl<'t> Lowerer<'t> {
    /// Lowers one statement node into `out` (walrus bindings first). `top_level` routes
    /// definitions directly in the module to `Module::functions` / `Module::classes`.
    /// Each rule is its own function so that this frame, which every level of a deeply
    /// nested block passes through, stays small.
    pub(super) fn lower_statement(&mut self, node: Node<'t>, out: &mut Vec<Stmt>, top_level: bool) {
        if !self.enter() {
            out.push(Stmt::Other {
                span: self.span(node),
            });
            return;
        }
        match node.kind() {
            "expression_statement" => self.lower_expression_statement(node, out),
            "return_statement" => self.lower_return(node, out),
            "if_statement" => self.lower_if(node, out),
            "for_statement" => self.lower_for(node, out),
            "while_statement" => self.lower_while(node, out),
            "with_statement" => self.lower_with(node, out),
            "try_statement" => self.lower_try(node, out),
            "match_statement" => self.lower_match(node, out),
            "assert_statement" => self.lower_assert(node, out),
            "raise_statement" => out.push(Stmt::Raise {
                span: self.span(node),
            }),
            "break_statement" | "continue_statement" => out.push(Stmt::Jump {
                span: self.span(node),
            }),
            "import_statement" => self.lower_import(node, out),
            "import_from_statement" => self.lower_import_from(node, out),
            "function_definition" => self.lower_function_definition(node, out, top_level),
            "class_definition" => self.lower_class_definition(node, out, top_level),
            "decorated_definition" => {
                // Decorators are ignored: they do not change what the body does to tensors.
                if let Some(definition) = self.field(node, self.fields.definition) {
                    self.lower_statement(definition, out, top_level);
                }
            }
            // A region tree-sitter could not parse: keep the complete statements inside it.
            "ERROR" => {
                for child in self.named_children(node) {
                    self.lower_statement(child, out, top_level);
                }
            }
            // `pass`, `del`, `global`, `nonlocal`, `print`, `exec`, `type X = ...`, `from
            // __future__ import ...`, and stray expression pieces inside ERROR regions.
            _ => out.push(Stmt::Other {
                span: self.span(node),
            }),
        }
        self.leave();
    }

    fn lower_return(&mut self, node: Node<'t>, out: &mut Vec<Stmt>) {
        let value = self
            .first_named_child(node)
            .map(|value| self.lower_expr(value));
        let span = self.span(node);
        self.emit(out, Stmt::Return { value, span });
    }

    /// `assert test, message`: the message is only evaluated when the assertion fails.
    fn lower_assert(&mut self, node: Node<'t>, out: &mut Vec<Stmt>) {
        let span = self.span(node);
        let test = match self.first_named_child(node) {
            Some(test) => self.lower_expr(test),
            None => Expr::new(ExprKind::Unknown, span),
        };
        self.emit(out, Stmt::Assert { test, span });
    }

    fn lower_function_definition(&mut self, node: Node<'t>, out: &mut Vec<Stmt>, top_level: bool) {
        let function = Arc::new(self.lower_function(node, false));
        out.append(&mut self.take_walrus_bindings());
        if top_level {
            self.module_functions.push(function);
        } else {
            out.push(Stmt::FunctionDef(function));
        }
    }

    fn lower_class_definition(&mut self, node: Node<'t>, out: &mut Vec<Stmt>, top_level: bool) {
        let class = Arc::new(self.lower_class(node, None));
        out.append(&mut self.take_walrus_bindings());
        if top_level {
            self.module_classes.push(class);
        } else {
            out.push(Stmt::ClassDef(class));
        }
    }

    /// Lowers the statements of a `block` (a suite) in order.
    pub(super) fn lower_block(&mut self, block: Option<Node<'t>>) -> Vec<Stmt> {
        let mut statements = Vec::new();
        if let Some(block) = block {
            for statement in self.named_children(block) {
                self.lower_statement(statement, &mut statements, false);
            }
        }
        statements
    }

    /// Pushes the pending walrus bindings, then `statement`.
    fn emit(&mut self, out: &mut Vec<Stmt>, statement: Stmt) {
        out.append(&mut self.take_walrus_bindings());
        out.push(statement);
    }

    fn lower_expression_statement(&mut self, node: Node<'t>, out: &mut Vec<Stmt>) {
        let children = self.named_children(node);
        match children.as_slice() {
            [single] if single.kind() == "assignment" => self.lower_assignment(*single, out),
            [single] if single.kind() == "augmented_assignment" => {
                self.lower_augmented_assignment(*single, out)
            }
            [single] => {
                let expr = self.lower_expr(*single);
                self.emit(out, Stmt::Expr(expr));
            }
            // `a, b` as a statement: a tuple.
            elements => {
                let elements = elements
                    .iter()
                    .map(|&element| self.lower_expr(element))
                    .collect();
                let expr = Expr::new(ExprKind::Tuple(elements), self.span(node));
                self.emit(out, Stmt::Expr(expr));
            }
        }
    }

    /// `a = b = value`, `a, *b = value`, `x: int = 3`. A bare annotation `x: int` binds nothing.
    fn lower_assignment(&mut self, node: Node<'t>, out: &mut Vec<Stmt>) {
        let span = self.span(node);
        let mut target_nodes = Vec::new();
        let mut current = node;
        let value_node = loop {
            if let Some(left) = self.field(current, self.fields.left) {
                target_nodes.push(left);
            }
            match self.field(current, self.fields.right) {
                Some(right) if right.kind() == "assignment" => current = right,
                right => break right,
            }
        };
        let Some(value_node) = value_node else {
            out.push(Stmt::Other { span });
            return;
        };
        // Python evaluates the value first, then assigns the targets left to right.
        let value = if value_node.kind() == "augmented_assignment" {
            self.opaque(value_node)
        } else {
            self.lower_expr(value_node)
        };
        let targets = target_nodes
            .into_iter()
            .map(|target| self.lower_target(target))
            .collect();
        self.emit(
            out,
            Stmt::Assign {
                targets,
                value,
                span,
            },
        );
    }

    fn lower_augmented_assignment(&mut self, node: Node<'t>, out: &mut Vec<Stmt>) {
        let span = self.span(node);
        let (Some(left), Some(right)) = (
            self.field(node, self.fields.left),
            self.field(node, self.fields.right),
        ) else {
            out.push(Stmt::Other { span });
            return;
        };
        let op = match self.field(node, self.fields.operator).map(|op| op.kind()) {
            Some("+=") => BinOp::Add,
            Some("-=") => BinOp::Sub,
            Some("*=") => BinOp::Mul,
            Some("/=") => BinOp::Div,
            Some("//=") => BinOp::FloorDiv,
            Some("%=") => BinOp::Mod,
            Some("**=") => BinOp::Pow,
            Some("@=") => BinOp::MatMul,
            _ => BinOp::Other,
        };
        let value = self.lower_expr(right);
        let target = self.lower_target(left);
        self.emit(
            out,
            Stmt::AugAssign {
                target,
                op,
                value,
                span,
            },
        );
    }

    /// `if`/`elif`/`else`: each `elif` becomes an `If` nested in the previous one's `orelse`,
    /// with its own walrus bindings placed inside that `orelse` (they only happen when the
    /// earlier tests were false). Clauses are lowered in a loop, not by recursion, because
    /// real code has chains of hundreds of `elif`s.
    fn lower_if(&mut self, node: Node<'t>, out: &mut Vec<Stmt>) {
        let mut clauses = vec![(
            node,
            self.field(node, self.fields.condition),
            self.field(node, self.fields.consequence),
        )];
        let mut else_clause = None;
        for (child, field) in self.children_with_fields(node) {
            if field != self.fields.alternative {
                continue;
            }
            if child.kind() == "elif_clause" {
                let condition = self.field(child, self.fields.condition);
                let consequence = self.field(child, self.fields.consequence);
                clauses.push((child, condition, consequence));
            } else {
                else_clause = Some(child);
            }
        }
        let mut alternatives = Vec::with_capacity(clauses.len());
        let mut nested = 0;
        for (index, (clause, condition, consequence)) in clauses.into_iter().enumerate() {
            nested += usize::from(self.nests_in_chain(index, nested));
            let span = self.span(clause);
            let test = match condition {
                Some(condition) => self.lower_expr(condition),
                None => Expr::new(ExprKind::Unknown, span),
            };
            let bindings = self.take_walrus_bindings();
            let body = self.lower_block(consequence);
            alternatives.push(Alternative {
                span,
                bindings,
                test,
                body,
            });
        }
        let otherwise = else_clause.map(|clause| {
            let body = self.lower_block(self.field(clause, self.fields.body));
            (self.span(clause), body)
        });
        self.leave_chain(nested);
        out.append(&mut chain_alternatives(alternatives, nested, otherwise));
    }

    /// Whether alternative `index` of a chain nests inside the previous one (`nested` of
    /// them do so far). Each alternative after the first is one IR level deeper, so it
    /// enters one depth level and is lowered there. Nesting stops while half of the depth
    /// budget is left, so that the alternatives lowered flat still have room for their
    /// tests and bodies.
    fn nests_in_chain(&mut self, index: usize, nested: usize) -> bool {
        index == nested && (index == 0 || (self.depth_left() > MAX_DEPTH / 2 && self.enter()))
    }

    /// Leaves the depth levels entered by [`Lowerer::nests_in_chain`].
    fn leave_chain(&mut self, nested: usize) {
        for _ in 1..nested {
            self.leave();
        }
    }

    fn lower_for(&mut self, node: Node<'t>, out: &mut Vec<Stmt>) {
        let span = self.span(node);
        let iter = self
            .field(node, self.fields.right)
            .map(|iter| self.lower_expr(iter));
        let target = self
            .field(node, self.fields.left)
            .map(|target| self.lower_target(target));
        let bindings = self.take_walrus_bindings();
        let body = self.lower_block(self.field(node, self.fields.body));
        let orelse = self.else_block(node);
        out.extend(bindings);
        out.push(Stmt::Loop {
            target,
            iter,
            body,
            orelse,
            span,
        });
    }

    /// `while test: body`. The IR loop has no test; the test only matters for the names its
    /// walrus expressions bind, which are re-bound on every iteration: they are bound to
    /// unknown values before the loop and again at the start of the body.
    fn lower_while(&mut self, node: Node<'t>, out: &mut Vec<Stmt>) {
        let span = self.span(node);
        if let Some(condition) = self.field(node, self.fields.condition) {
            self.bind_walrus_names_to_unknown(condition);
        }
        let bindings = self.take_walrus_bindings();
        let mut body = bindings.clone();
        body.append(&mut self.lower_block(self.field(node, self.fields.body)));
        let orelse = self.else_block(node);
        out.extend(bindings);
        out.push(Stmt::Loop {
            target: None,
            iter: None,
            body,
            orelse,
            span,
        });
    }

    /// The `else:` block of a `for`/`while`.
    fn else_block(&mut self, node: Node<'t>) -> Vec<Stmt> {
        match self.field(node, self.fields.alternative) {
            Some(else_clause) => self.lower_block(self.field(else_clause, self.fields.body)),
            None => Vec::new(),
        }
    }

    fn lower_with(&mut self, node: Node<'t>, out: &mut Vec<Stmt>) {
        let span = self.span(node);
        let mut items = Vec::new();
        for clause in self.named_children(node) {
            if clause.kind() != "with_clause" {
                continue;
            }
            for item in self.named_children(clause) {
                let Some(value) = self.field(item, self.fields.value) else {
                    continue;
                };
                items.push(self.lower_with_item(value));
            }
        }
        let bindings = self.take_walrus_bindings();
        let body = self.lower_block(self.field(node, self.fields.body));
        out.extend(bindings);
        out.push(Stmt::With { items, body, span });
    }

    /// `ctx` or `ctx as target`.
    fn lower_with_item(&mut self, value: Node<'t>) -> (Expr, Option<Target>) {
        if value.kind() != "as_pattern" {
            return (self.lower_expr(value), None);
        }
        let context = match self.first_named_child(value) {
            Some(context) => self.lower_expr(context),
            None => Expr::new(ExprKind::Unknown, self.span(value)),
        };
        let target = self.as_pattern_target(value);
        (context, target)
    }

    /// The target of an `as_pattern` (`... as target`), if any.
    fn as_pattern_target(&mut self, as_pattern: Node<'t>) -> Option<Target> {
        let alias = self.field(as_pattern, self.fields.alias)?;
        let target = self.first_named_child(alias).unwrap_or(alias);
        Some(self.lower_target(target))
    }

    /// `try`/`except`/`else`/`finally`. A handler `except E as e:` starts by binding `e` to
    /// an unknown value (it may shadow a tensor variable).
    fn lower_try(&mut self, node: Node<'t>, out: &mut Vec<Stmt>) {
        let span = self.span(node);
        let body = self.lower_block(self.field(node, self.fields.body));
        let mut handlers = Vec::new();
        let mut orelse = Vec::new();
        let mut finalbody = Vec::new();
        for clause in self.named_children(node) {
            match clause.kind() {
                "except_clause" | "except_group_clause" => {
                    handlers.push(self.lower_except_clause(clause));
                }
                "else_clause" => orelse = self.lower_block(self.field(clause, self.fields.body)),
                "finally_clause" => {
                    let block = self.child_block(clause);
                    finalbody = self.lower_block(block);
                }
                _ => {}
            }
        }
        // Walrus bindings in `except` type expressions: bound (to unknown) before the `try`.
        out.append(&mut self.take_walrus_bindings());
        out.push(Stmt::Try {
            body,
            handlers,
            orelse,
            finalbody,
            span,
        });
    }

    fn lower_except_clause(&mut self, clause: Node<'t>) -> Vec<Stmt> {
        let mut handler = Vec::new();
        let bound_name = match self.field(clause, self.fields.value) {
            Some(value) if value.kind() == "as_pattern" => self.as_pattern_target(value),
            _ => None,
        }
        // Older grammars put the name in an `alias` field of the clause itself.
        .or_else(|| {
            self.field(clause, self.fields.alias)
                .map(|alias| self.lower_target(alias))
        });
        if let Some(target) = bound_name {
            let span = self.span(clause);
            let value = Expr::new(ExprKind::Unknown, span);
            handler.push(Stmt::Assign {
                targets: vec![target],
                value,
                span,
            });
        }
        let block = self.child_block(clause);
        handler.append(&mut self.lower_block(block));
        handler
    }

    /// The `block` child of a clause that has no `body` field (`except`, `finally`).
    fn child_block(&mut self, clause: Node<'t>) -> Option<Node<'t>> {
        self.named_children(clause)
            .into_iter()
            .find(|child| child.kind() == "block")
    }

    /// `match subject: case ...`. Which case runs is unknown to the interpreter, so the cases
    /// become a chain of `If`s with unknown tests (the last `orelse` is the no-match path).
    /// Each case body starts by binding the pattern's capture names to unknown values.
    fn lower_match(&mut self, node: Node<'t>, out: &mut Vec<Stmt>) {
        let span = self.span(node);
        if let Some(subject) = self.field(node, self.fields.subject) {
            let subject = self.lower_expr(subject);
            self.emit(out, Stmt::Expr(subject));
        }
        let mut cases = Vec::new();
        let mut nested = 0;
        if let Some(block) = self.field(node, self.fields.body) {
            for clause in self.named_children(block) {
                if clause.kind() == "case_clause" {
                    nested += usize::from(self.nests_in_chain(cases.len(), nested));
                    let (span, body) = self.lower_case_clause(clause);
                    let test = Expr::new(ExprKind::Unknown, span);
                    cases.push(Alternative {
                        span,
                        bindings: Vec::new(),
                        test,
                        body,
                    });
                }
            }
        }
        self.leave_chain(nested);
        if cases.is_empty() {
            out.push(Stmt::Other { span });
        } else {
            out.append(&mut chain_alternatives(cases, nested, None));
        }
    }

    fn lower_case_clause(&mut self, clause: Node<'t>) -> (Span, Vec<Stmt>) {
        let span = self.span(clause);
        let mut body = Vec::new();
        for (child, field) in self.children_with_fields(clause) {
            if child.kind() == "case_pattern" {
                for name in self.pattern_capture_names(child) {
                    let value = Expr::new(ExprKind::Unknown, span);
                    let targets = vec![Target::Name(self.text(name).to_string(), self.span(name))];
                    body.push(Stmt::Assign {
                        targets,
                        value,
                        span,
                    });
                }
            } else if field == self.fields.guard {
                self.bind_walrus_names_to_unknown(child);
                body.append(&mut self.take_walrus_bindings());
            }
        }
        body.append(&mut self.lower_block(self.field(clause, self.fields.consequence)));
        (span, body)
    }

    /// Identifiers a case pattern may bind: capture patterns (`case x`), `*rest`, `**rest`,
    /// `as name`, keyword values (`Point(x=a)` binds `a`). Over-approximating is harmless
    /// (the names are bound to unknown values); class names, keywords and dotted value
    /// patterns (`Color.RED`) are skipped because they are read, not bound. Iterative, since
    /// patterns nest.
    fn pattern_capture_names(&mut self, pattern: Node<'t>) -> Vec<Node<'t>> {
        let mut names = Vec::new();
        let mut pending = vec![pattern];
        while let Some(node) = pending.pop() {
            let children = self.named_children(node);
            match node.kind() {
                "dotted_name" => {
                    if let [single] = children.as_slice() {
                        names.push(*single);
                    }
                }
                "identifier" => names.push(node),
                // `Point(...)`: the class name; `x=a`: the keyword.
                "class_pattern" | "keyword_pattern" => pending.extend(children.into_iter().skip(1)),
                _ => pending.extend(children),
            }
        }
        names.retain(|&name| self.text(name) != "_");
        names.sort_by_key(|name| name.start_byte());
        names
    }

    /// `import a.b.c`, `import a.b as c` — one `Import` per imported name.
    fn lower_import(&mut self, node: Node<'t>, out: &mut Vec<Stmt>) {
        for (name, field) in self.children_with_fields(node) {
            if field != self.fields.name {
                continue;
            }
            let span = self.span(name);
            let (module, alias) = self.imported_name(name);
            out.push(Stmt::Import {
                module,
                alias,
                span,
            });
        }
    }

    /// `from m import a, b as c` → `Import { "m.a", Some("a") }`, `Import { "m.b", Some("c") }`.
    /// Relative modules keep their dots (`from ..x import y` → `"..x.y"`). A wildcard import
    /// binds names we cannot know and becomes `Other`.
    fn lower_import_from(&mut self, node: Node<'t>, out: &mut Vec<Stmt>) {
        let span = self.span(node);
        let module_prefix = match self.field(node, self.fields.module_name) {
            Some(module_name) => self.dotted_text(module_name),
            None => String::new(),
        };
        for (child, field) in self.children_with_fields(node) {
            if child.kind() == "wildcard_import" {
                out.push(Stmt::Other { span });
            }
            if field != self.fields.name {
                continue;
            }
            let (name, alias) = self.imported_name(child);
            let last_component = name.rsplit('.').next().unwrap_or_default().to_string();
            let module = if module_prefix.is_empty() || module_prefix.ends_with('.') {
                format!("{module_prefix}{name}")
            } else {
                format!("{module_prefix}.{name}")
            };
            let alias = Some(alias.unwrap_or(last_component));
            out.push(Stmt::Import {
                module,
                alias,
                span: self.span(child),
            });
        }
    }

    /// `(dotted name, alias)` of a `dotted_name` or `aliased_import`.
    fn imported_name(&mut self, node: Node<'t>) -> (String, Option<String>) {
        if node.kind() == "aliased_import" {
            let name = match self.field(node, self.fields.name) {
                Some(name) => self.dotted_text(name),
                None => String::new(),
            };
            let alias = self
                .field(node, self.fields.alias)
                .map(|alias| self.text(alias).to_string());
            (name, alias)
        } else {
            (self.dotted_text(node), None)
        }
    }

    /// A dotted or relative module name without the whitespace Python allows around dots
    /// (`torch . nn` is `torch.nn`).
    fn dotted_text(&self, node: Node<'t>) -> String {
        self.text(node)
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '\\')
            .collect()
    }

    /// A `def`. Inside a class, a first parameter named `self` or `cls` makes it a method and
    /// is dropped from `params`; `__init__` is the constructor.
    pub(super) fn lower_function(&mut self, node: Node<'t>, in_class: bool) -> Function {
        let name_node = self.field(node, self.fields.name);
        let name = name_node
            .map(|name| self.text(name).to_string())
            .unwrap_or_default();
        let name_span = name_node.map_or(self.span(node), |name| self.span(name));
        let mut params = Vec::new();
        if let Some(parameters) = self.field(node, self.fields.parameters) {
            for parameter in self.named_children(parameters) {
                if let Some(param) = self.lower_parameter(parameter) {
                    params.push(param);
                }
            }
        }
        let has_receiver = params
            .first()
            .is_some_and(|first| !first.variadic && (first.name == "self" || first.name == "cls"));
        let is_method = in_class && has_receiver;
        if is_method {
            params.remove(0);
        }
        // Walrus bindings in defaults belong before the `def`, not in its body.
        let body = self.lower_scope_body(self.field(node, self.fields.body));
        Function {
            is_constructor: is_method && name == "__init__",
            name,
            params,
            body,
            span: self.span(node),
            name_span,
            is_method,
        }
    }

    fn lower_parameter(&mut self, node: Node<'t>) -> Option<Param> {
        let span = self.span(node);
        let param = |name: &str, variadic: bool| Param {
            name: name.to_string(),
            shape_annotation: None,
            default: None,
            variadic,
            span,
        };
        match node.kind() {
            "identifier" => Some(param(self.text(node), false)),
            "list_splat_pattern" | "dictionary_splat_pattern" => {
                let name = self
                    .first_named_child(node)
                    .map_or("", |name| self.text(name));
                Some(param(name, true))
            }
            "typed_parameter" => {
                let inner = self.first_named_child(node)?;
                let mut lowered = self.lower_parameter(inner)?;
                lowered.span = span;
                if !lowered.variadic {
                    let annotation = self.field(node, self.fields.type_);
                    lowered.shape_annotation = annotation.and_then(|a| self.shape_annotation(a));
                }
                Some(lowered)
            }
            "default_parameter" | "typed_default_parameter" => {
                let name = self.field(node, self.fields.name)?;
                let mut lowered = param(self.text(name), false);
                lowered.default = self
                    .field(node, self.fields.value)
                    .map(|value| self.lower_expr(value));
                let annotation = self.field(node, self.fields.type_);
                lowered.shape_annotation = annotation.and_then(|a| self.shape_annotation(a));
                Some(lowered)
            }
            // Python 2 tuple parameters `def f((a, b)):` bind one positional argument.
            "tuple_pattern" => Some(param(self.text(node), false)),
            // `*` and `/` separators bind nothing.
            _ => None,
        }
    }

    /// A `class`. Methods are the `def`s directly in its body; classes nested in the body are
    /// lowered too and added to the module's classes as `Outer.Inner`. Other class-level
    /// statements (attributes, docstrings) are not kept: the IR's `Class` has no body.
    pub(super) fn lower_class(&mut self, node: Node<'t>, outer: Option<&str>) -> Class {
        let plain_name = self
            .field(node, self.fields.name)
            .map_or("", |name| self.text(name));
        let name = match outer {
            Some(outer) => format!("{outer}.{plain_name}"),
            None => plain_name.to_string(),
        };
        let mut bases = Vec::new();
        if let Some(superclasses) = self.field(node, self.fields.superclasses) {
            for base in self.named_children(superclasses) {
                if !matches!(
                    base.kind(),
                    "keyword_argument" | "list_splat" | "dictionary_splat"
                ) {
                    bases.push(self.text(base).to_string());
                }
            }
        }
        let mut methods = Vec::new();
        if let Some(body) = self.field(node, self.fields.body) {
            for statement in self.named_children(body) {
                let definition = match statement.kind() {
                    "decorated_definition" => self.field(statement, self.fields.definition),
                    _ => Some(statement),
                };
                let Some(definition) = definition else {
                    continue;
                };
                if !self.enter() {
                    continue;
                }
                match definition.kind() {
                    "function_definition" => {
                        methods.push(Arc::new(self.lower_function(definition, true)));
                    }
                    "class_definition" => {
                        let nested = self.lower_class(definition, Some(&name));
                        self.module_classes.push(Arc::new(nested));
                    }
                    _ => {}
                }
                self.leave();
                // Walrus in method defaults bind class attributes, which the IR cannot hold.
                self.take_walrus_bindings();
            }
        }
        Class {
            name,
            methods,
            bases,
            span: self.span(node),
        }
    }
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
                test,
                body,
                orelse: Vec::new(),
                span,
            });
        }
        if let Some((span, body)) = otherwise {
            let test = Expr::new(ExprKind::Unknown, span);
            sequence.push(Stmt::If {
                test,
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
            test,
            body,
            orelse: tail,
            span,
        });
        tail = bindings;
    }
    tail
}
