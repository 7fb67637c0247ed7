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
//! - `top_level` and `relevant_ranges`: the text scan that cuts a file into statements,
//!   functions and methods, and picks the ones [`parse_python_for_lint`] parses.
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
#[cfg(test)]
mod differential_tests;
mod expressions;
mod fields;
mod literals;
mod lowerer;
mod parser;
#[cfg(test)]
mod partial_parse_tests;
mod prefilter;
mod relevant_ranges;
mod statements;
mod syntax_errors;
#[cfg(test)]
mod tests;
mod top_level;

use std::cell::RefCell;

use tree_sitter::{Parser, Point, Range, Tree};

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
    match parse_tree(source) {
        Some(tree) => lower_tree(&tree, source),
        None => failed_outcome("the Python parser could not be initialised"),
    }
}

/// Parses Python source into the IR with the hand-written parser (`parser`).
pub fn parse_python_handwritten(source: &str) -> ParseOutcome {
    if u32::try_from(source.len()).is_err() {
        return failed_outcome("file is too large to parse (over 4 GiB)");
    }
    parser::parse(source)
}

/// The syntax errors and the IR of a parsed (whole or partial) tree.
fn lower_tree(tree: &Tree, source: &str) -> ParseOutcome {
    let root = tree.root_node();
    let errors = syntax_errors::collect(root, source, MAX_REPORTED_ERRORS);
    let module = lowerer::Lowerer::new(source).lower_module(root);
    ParseOutcome { module, errors }
}

/// Like [`parse_python`], but parses only the pieces of the file that can matter to the
/// layout lints: top-level statements, the functions and methods that name a layout op,
/// and the definitions connected to those by calls (see `relevant_ranges`). Parsing is
/// most of the cost of linting, and most methods of a model file never touch a layout op.
///
/// The kept pieces are lowered exactly as a whole-file parse lowers them (spans are in the
/// file's byte offsets); skipped definitions are simply absent from the module, and syntax
/// errors are only reported inside kept pieces. Whenever the outline scan is unsure of the
/// boundaries, this parses the whole file.
pub fn parse_python_for_lint(source: &str) -> ParseOutcome {
    if u32::try_from(source.len()).is_err() {
        return failed_outcome("file is too large to parse (over 4 GiB)");
    }
    let Some(byte_ranges) = relevant_ranges::ranges_worth_parsing(source) else {
        return parse_python(source);
    };
    let included = included_ranges(source, &byte_ranges);
    match parse_tree_in_ranges(source, &included) {
        Some(tree) => lower_tree(&tree, source),
        None => parse_python(source),
    }
}

/// tree-sitter ranges (bytes plus row/column points) for sorted, disjoint byte ranges.
fn included_ranges(source: &str, byte_ranges: &[std::ops::Range<usize>]) -> Vec<Range> {
    let bytes = source.as_bytes();
    // Points are computed in one pass: rows counted from the previous boundary onwards.
    let mut row = 0;
    let mut counted_to = 0;
    let mut last_line_start = 0;
    let mut point_at = |offset: usize| {
        for newline in memchr::memchr_iter(b'\n', &bytes[counted_to..offset]) {
            row += 1;
            last_line_start = counted_to + newline + 1;
        }
        counted_to = offset;
        Point::new(row, offset - last_line_start)
    };
    byte_ranges
        .iter()
        .map(|range| Range {
            start_byte: range.start,
            start_point: point_at(range.start),
            end_byte: range.end,
            end_point: point_at(range.end),
        })
        .collect()
}

/// Runs tree-sitter with this thread's parser (or a fresh one if it is somehow in use).
fn parse_tree(source: &str) -> Option<Tree> {
    parse_tree_in_ranges(source, &[])
}

/// Parses only the `included` ranges of `source` (all of it when `included` is empty). The
/// cached parser is always left set to parse whole documents, as [`parse_tree`] expects.
fn parse_tree_in_ranges(source: &str, included: &[Range]) -> Option<Tree> {
    let parse = |parser: &mut Parser| {
        if included.is_empty() {
            return parser.parse(source, None);
        }
        parser.set_included_ranges(included).ok()?;
        let tree = parser.parse(source, None);
        // An empty list means "the whole document"; it cannot be rejected.
        let _ = parser.set_included_ranges(&[]);
        tree
    };
    let parse_with_cached = |cell: &RefCell<Option<Parser>>| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            *slot = Some(new_parser()?);
        }
        parse(slot.as_mut()?)
    };
    PARSER
        .try_with(parse_with_cached)
        .ok()
        .flatten()
        .or_else(|| parse(&mut new_parser()?))
}

fn new_parser() -> Option<Parser> {
    use_mimalloc_for_tree_sitter();
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .ok()?;
    Some(parser)
}

/// Routes tree-sitter's C allocations through mimalloc, the allocator the rest of the
/// program uses: parsing allocates and frees a node per token, and glibc's malloc took ~18%
/// of the time of linting real model code. Runs once, before the first parser exists, so
/// no tree-sitter object is ever freed by an allocator other than the one that made it.
fn use_mimalloc_for_tree_sitter() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: called before any tree-sitter object is allocated (this is the only place
        // parsers are made and `Once` orders it before every use), with a complete, matching
        // set of C allocation functions.
        unsafe {
            tree_sitter::set_allocator(Some(tree_sitter::Allocator {
                malloc: libmimalloc_sys::mi_malloc,
                calloc: libmimalloc_sys::mi_calloc,
                realloc: libmimalloc_sys::mi_realloc,
                free: libmimalloc_sys::mi_free,
            }));
        }
    });
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
