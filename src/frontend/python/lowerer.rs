//! The state of one syntax-tree → IR walk, and the small tree helpers every part of the
//! lowering uses. The statement and expression rules live in `statements.rs` and
//! `expressions.rs` as further `impl Lowerer` blocks.

use std::sync::Arc;

use tree_sitter::{Node, TreeCursor};

use super::fields::{field_ids, FieldIds};
use crate::ir::{self, Expr, ExprKind, Span, Stmt, Target};

/// How many syntax levels (statements and expressions together) are lowered before the rest
/// of a subtree becomes opaque. The lowering recurses once per level, so this bounds its
/// stack use: 200 levels fit comfortably in a 2 MiB thread stack even in a debug build, and
/// real code never comes close (CPython itself refuses ~200 nested parentheses).
pub(super) const MAX_DEPTH: u32 = 200;

pub(super) struct Lowerer<'t> {
    source: &'t str,
    pub(super) fields: &'static FieldIds,
    /// Current syntax depth, see [`MAX_DEPTH`].
    depth: u32,
    /// Assignments made by walrus expressions (`n := x.size(0)`) inside the statement being
    /// lowered. The IR has no assignment expression, so the statement that contains them is
    /// emitted after these bindings; see [`Lowerer::take_walrus_bindings`].
    walrus_bindings: Vec<Stmt>,
    /// Greater than zero while lowering an expression that may not be evaluated at all (the
    /// right side of `and`/`or`, a branch of `a if c else b`): a walrus there may or may not
    /// bind, so its name is bound to an unknown value rather than to the expression.
    pub(super) maybe_unevaluated: u32,
    /// Cursors for iterating children. `Node::child(i)` walks from the first child each time,
    /// so index loops are quadratic on long blocks; a cursor is linear. Reusing them avoids an
    /// allocation per visited node.
    cursor_pool: Vec<TreeCursor<'t>>,
    /// Free functions defined directly at module level, in source order.
    pub(super) module_functions: Vec<Arc<ir::Function>>,
    /// Classes defined directly at module level, plus classes nested in class bodies (named
    /// `Outer.Inner`, the IR's `Class` has no place for them).
    pub(super) module_classes: Vec<Arc<ir::Class>>,
}

impl<'t> Lowerer<'t> {
    pub(super) fn new(source: &'t str) -> Self {
        Lowerer {
            source,
            fields: field_ids(),
            depth: 0,
            walrus_bindings: Vec::new(),
            maybe_unevaluated: 0,
            cursor_pool: Vec::new(),
            module_functions: Vec::new(),
            module_classes: Vec::new(),
        }
    }

    /// Lowers a `module` root node. Definitions directly at module level go to
    /// `Module::functions` / `Module::classes`; everything else (including definitions
    /// nested in a top-level `if`/`try`) stays in `Module::body`.
    pub(super) fn lower_module(mut self, root: Node<'t>) -> ir::Module {
        let mut body = Vec::new();
        if root.kind() == "module" {
            for statement in self.named_children(root) {
                self.lower_statement(statement, &mut body, true);
            }
        } else {
            // A file so broken that the root itself is an ERROR node: salvage its statements.
            self.lower_statement(root, &mut body, true);
        }
        ir::Module {
            language: ir::Language::Python,
            body,
            functions: self.module_functions,
            classes: self.module_classes,
        }
    }

    // ----- depth limit -----

    /// Enters one syntax level; `false` when the depth limit is reached (the caller then
    /// lowers the node as opaque and must not call [`Lowerer::leave`]).
    pub(super) fn enter(&mut self) -> bool {
        if self.depth >= MAX_DEPTH {
            return false;
        }
        self.depth += 1;
        true
    }

    pub(super) fn leave(&mut self) {
        self.depth -= 1;
    }

    /// How many more levels can be entered.
    pub(super) fn depth_left(&self) -> u32 {
        MAX_DEPTH - self.depth
    }

    // ----- walrus bindings -----

    /// Records the binding made by a walrus expression in the current statement.
    pub(super) fn bind_walrus(&mut self, name: Node<'t>, value: Expr, span: Span) {
        let target = Target::Name(self.text(name).to_string(), self.span(name));
        self.walrus_bindings.push(Stmt::Assign {
            targets: vec![target],
            value,
            span,
        });
    }

    /// The walrus bindings made by the expressions lowered since the last call. Statement
    /// lowering calls this right after lowering a statement's own expressions (before any
    /// nested block), and emits the bindings just before the statement.
    pub(super) fn take_walrus_bindings(&mut self) -> Vec<Stmt> {
        std::mem::take(&mut self.walrus_bindings)
    }

    /// Lowers the body of a nested scope (a `def`), keeping the walrus bindings pending for
    /// the enclosing statement out of it.
    pub(super) fn lower_scope_body(&mut self, block: Option<Node<'t>>) -> Vec<Stmt> {
        let enclosing = self.take_walrus_bindings();
        let body = self.lower_block(block);
        self.walrus_bindings = enclosing;
        body
    }

    /// A node the IR does not model: an unknown value. Walrus expressions inside it (say in a
    /// comprehension) still rebind names in the enclosing scope, so those names are bound to
    /// unknown values to keep the interpreter sound. Lambdas have their own scope and are
    /// skipped.
    pub(super) fn opaque(&mut self, node: Node<'t>) -> Expr {
        self.bind_walrus_names_to_unknown(node);
        Expr::new(ExprKind::Unknown, self.span(node))
    }

    /// Binds every name assigned by a walrus inside `node` to an unknown value. Iterative,
    /// so it is safe on arbitrarily deep subtrees.
    pub(super) fn bind_walrus_names_to_unknown(&mut self, node: Node<'t>) {
        // Cheap text check first: most opaque subtrees contain no `:=` at all.
        if memchr::memmem::find(self.text(node).as_bytes(), b":=").is_none() {
            return;
        }
        let mut cursor = self.take_cursor(node);
        loop {
            let current = cursor.node();
            if current.kind() == "named_expression" {
                if let Some(name) = current.child_by_field_id(self.fields.name) {
                    let span = self.span(current);
                    self.bind_walrus(name, Expr::new(ExprKind::Unknown, span), span);
                }
            }
            let descend = current.kind() != "lambda";
            if descend && cursor.goto_first_child() {
                continue;
            }
            if !advance_to_next_in_preorder(&mut cursor) {
                break;
            }
        }
        self.cursor_pool.push(cursor);
    }

    // ----- tree helpers -----

    pub(super) fn span(&self, node: Node<'_>) -> Span {
        Span::new(node.start_byte(), node.end_byte())
    }

    /// Source text of a node (empty if the range is somehow not on char boundaries).
    pub(super) fn text(&self, node: Node<'_>) -> &'t str {
        self.source.get(node.byte_range()).unwrap_or("")
    }

    pub(super) fn field(&self, node: Node<'t>, field_id: u16) -> Option<Node<'t>> {
        node.child_by_field_id(field_id)
    }

    /// Named children of `node` in order, without comments.
    pub(super) fn named_children(&mut self, node: Node<'t>) -> Vec<Node<'t>> {
        let mut children = Vec::new();
        let mut cursor = self.take_cursor(node);
        if cursor.goto_first_child() {
            loop {
                let child = cursor.node();
                if child.is_named() && !child.is_extra() {
                    children.push(child);
                }
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        self.cursor_pool.push(cursor);
        children
    }

    /// All children of `node` (tokens included, comments excluded) with their field id
    /// (0 when the child has no field).
    pub(super) fn children_with_fields(&mut self, node: Node<'t>) -> Vec<(Node<'t>, u16)> {
        let mut children = Vec::new();
        let mut cursor = self.take_cursor(node);
        if cursor.goto_first_child() {
            loop {
                let child = cursor.node();
                if !child.is_extra() {
                    children.push((child, cursor.field_id().map_or(0, |id| id.get())));
                }
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        self.cursor_pool.push(cursor);
        children
    }

    /// First named, non-comment child.
    pub(super) fn first_named_child(&mut self, node: Node<'t>) -> Option<Node<'t>> {
        let mut cursor = self.take_cursor(node);
        let mut found = None;
        if cursor.goto_first_child() {
            loop {
                let child = cursor.node();
                if child.is_named() && !child.is_extra() {
                    found = Some(child);
                    break;
                }
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        self.cursor_pool.push(cursor);
        found
    }

    fn take_cursor(&mut self, node: Node<'t>) -> TreeCursor<'t> {
        match self.cursor_pool.pop() {
            Some(mut cursor) => {
                cursor.reset(node);
                cursor
            }
            None => node.walk(),
        }
    }
}

/// Moves `cursor` to the next node in preorder that is not below the current one (its next
/// sibling, or the next sibling of the nearest ancestor that has one), never leaving the
/// subtree the cursor was reset to. Returns `false` when the walk is over.
pub(super) fn advance_to_next_in_preorder(cursor: &mut TreeCursor<'_>) -> bool {
    loop {
        if cursor.goto_next_sibling() {
            return true;
        }
        if !cursor.goto_parent() {
            return false;
        }
    }
}
