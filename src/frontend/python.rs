//! The Python frontend: Python source → [`ir::Module`], by a hand-written tokenizer and
//! recursive-descent parser (`parser`) that builds the IR directly, without a syntax tree.
//!
//! The parser follows CPython's grammar (3.8 to 3.14) and is error tolerant: after a syntax
//! error it reports where CPython would and resumes at the next statement, so one typo does
//! not hide the findings in the rest of a file.
//!
//! - `parser`: tokenizer (`parser/lexer.rs`), statements and definitions, expressions;
//! - `literals`: numbers and strings decoded from their source text;
//! - `annotations`: jaxtyping shape annotations on parameters;
//!
//! Robustness contract: [`parse_python`] never panics and never recurses deeper than a fixed
//! bound, whatever the input (fuzzed bytes, 100 000-term sums, 10 000 nested parentheses);
//! nesting beyond the bound is lowered to opaque nodes. The IR it returns is at most about
//! `parser::MAX_DEPTH` (300) levels deep, so consumers may walk it recursively. Time is
//! linear in the input and memory follows the IR (tokens are pulled one at a time).
//!
//! Lowering conventions beyond those of [`crate::ir`]:
//! - definitions directly at module level go to `Module::functions` / `Module::classes`;
//!   definitions anywhere else (in a function, or in a top-level `if`/`try`) are
//!   `Stmt::FunctionDef` / `Stmt::ClassDef` where they occur; a class nested in a class body
//!   is added to `Module::classes` as `Outer.Inner`;
//! - a walrus `(n := e)` becomes `n = e` just before its statement (or `n = <unknown>` where it
//!   may not run), since the IR has no assignment expression;
//! - `match` becomes a chain of `If`s with unknown tests (a last `case _:` or `case name:`
//!   is the final `else`); `not x` is `Compare { x, Not, ? }`; `-1` is `Int(-1)`;
//! - `from m import *` is `Other`; relative imports keep their dots (`"..m.x"`).

mod annotations;
mod literals;
mod parser;
#[cfg(test)]
mod tests;

use crate::ir;

/// The result of parsing one Python file: the lowered module and the syntax errors found.
#[derive(Debug)]
pub struct ParseOutcome {
    pub module: ir::Module,
    /// Syntax errors in source order; empty for a well-formed file. The module still holds
    /// everything that parsed.
    pub errors: Vec<SyntaxError>,
}

/// One syntax error: where the parser found a token the grammar does not allow there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub span: ir::Span,
    /// Short description, e.g. ``expected `)` `` or ``unexpected token `+` ``.
    pub message: String,
}

/// At most this many syntax errors are reported per file: after the first few, further
/// errors are mostly consequences of the first, and fuzzed junk can have thousands.
const MAX_REPORTED_ERRORS: usize = 32;

/// Parses Python source into the IR. Never panics; see the module docs.
pub fn parse_python(source: &str) -> ParseOutcome {
    // `ir::Span`s address bytes with `u32`.
    if u32::try_from(source.len()).is_err() {
        return failed_outcome("file is too large to parse (over 4 GiB)");
    }
    parser::parse(source)
}

/// What linting parses: the whole file, as [`parse_python`].
pub fn parse_python_for_lint(source: &str) -> ParseOutcome {
    parse_python(source)
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
