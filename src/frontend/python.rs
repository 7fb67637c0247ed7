//! The Python frontend: tree-sitter-python syntax tree → [`ir::Module`].
//!
//! Parsing is done by tree-sitter, which is error tolerant: a file with syntax errors still
//! yields a tree in which the broken regions are `ERROR` / `MISSING` nodes. We lower every
//! well-formed part of that tree and report where the first broken part is, so one typo
//! does not hide the findings in the rest of a file.
//!
//! The lowering is split by concern:
//! - `lowerer`: the walk's state (walrus bindings, depth limit, cursor pool) and tree helpers;
//! - `fields`: grammar field ids, resolved once;
//! - `statements`: statements, function and class definitions, imports;
//! - `expressions`: expressions and assignment targets;
//! - `literals`: numbers and strings decoded from their source text;
//! - `annotations`: jaxtyping shape annotations on parameters;
//! - `syntax_errors`: locating and describing `ERROR` / `MISSING` nodes;
//! - `prefilter`: the cheap text scan that decides whether a file is worth parsing at all;
//!
//! Robustness contract: [`parse_python`] never panics and never recurses deeper than a fixed
//! bound, whatever the input (fuzzed bytes, 100 000-term sums, 10 000 nested parentheses);
//! nesting beyond the bound is lowered to opaque nodes. The IR it returns is at most about
//! `lowerer::MAX_DEPTH` (200) levels deep, so consumers may walk it recursively.
//!
//! Lowering conventions beyond those of [`crate::ir`]:
//! - definitions directly at module level go to `Module::functions` / `Module::classes`;
//!   definitions anywhere else (in a function, or in a top-level `if`/`try`) are
//!   `Stmt::FunctionDef` / `Stmt::ClassDef` where they occur; a class nested in a class body
//!   is added to `Module::classes` as `Outer.Inner`;
//! - a walrus `(n := e)` becomes `n = e` just before its statement (or `n = <unknown>` where it
//!   may not run), since the IR has no assignment expression;
//! - `match` becomes a chain of `If`s with unknown tests; `not x` is `Compare { x, Not, ? }`;
//!   `-1` is `Int(-1)`;
//! - `from m import *` is `Other`; relative imports keep their dots (`"..m.x"`).

mod annotations;
mod expressions;
mod fields;
mod literals;
mod lowerer;
mod prefilter;
mod statements;
mod syntax_errors;
#[cfg(test)]
mod tests;

use std::cell::RefCell;

use tree_sitter::{Parser, Tree};

use crate::ir;

pub use prefilter::{may_contain_layout_ops, LAYOUT_OP_TOKENS};

/// The result of parsing one Python file: the lowered module and the syntax errors found.
#[derive(Debug)]
pub struct ParseOutcome {
    pub module: ir::Module,
    /// Syntax errors in source order; empty for a well-formed file. The module still holds
    /// everything that parsed.
    pub errors: Vec<SyntaxError>,
}

/// One syntax error: where tree-sitter found a broken (`ERROR`) or missing (`MISSING`) node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub span: ir::Span,
    /// Short description, e.g. ``expected `)` `` or ``unexpected token `+` ``.
    pub message: String,
}

/// At most this many syntax errors are reported per file: after the first few, further
/// errors are mostly consequences of the first, and fuzzed junk can have thousands.
const MAX_REPORTED_ERRORS: usize = 32;

thread_local! {
    /// One parser per thread: creating a parser allocates its stacks and lexer buffers, and
    /// files are parsed on rayon worker threads, so reusing it saves that work per file.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Parses Python source into the IR. Never panics; see the module docs.
pub fn parse_python(source: &str) -> ParseOutcome {
    // tree-sitter addresses bytes with `u32`, and so do `ir::Span`s.
    if u32::try_from(source.len()).is_err() {
        return failed_outcome("file is too large to parse (over 4 GiB)");
    }
    let Some(tree) = parse_tree(source) else {
        return failed_outcome("the Python parser could not be initialised");
    };
    let root = tree.root_node();
    let errors = syntax_errors::collect(root, source, MAX_REPORTED_ERRORS);
    let module = lowerer::Lowerer::new(source).lower_module(root);
    ParseOutcome { module, errors }
}

fn parse_tree(source: &str) -> Option<Tree> {
    let parse_with_cached = |cell: &RefCell<Option<Parser>>| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            *slot = Some(new_parser()?);
        }
        slot.as_mut()?.parse(source, None)
    };
    PARSER
        .try_with(parse_with_cached)
        .ok()
        .flatten()
        .or_else(|| new_parser()?.parse(source, None))
}

fn new_parser() -> Option<Parser> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .ok()?;
    Some(parser)
}

fn failed_outcome(message: &str) -> ParseOutcome {
    ParseOutcome {
        module: ir::Module {
            language: ir::Language::Python,
            body: Vec::new(),
            functions: Vec::new(),
            classes: Vec::new(),
        },
        errors: vec![SyntaxError {
            span: ir::Span::default(),
            message: message.to_string(),
        }],
    }
}
