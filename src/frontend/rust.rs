//! The Rust frontend: candle and tch-rs model code, parsed by syn → [`ir::Module`].
//!
//! It produces the same IR as the Python frontend (see `ir.rs` for the shared
//! conventions), so the interpreter, the op tables (`rules/candle.toml`,
//! `rules/tch.toml`) and the lints work on both. The lowering is split by concern:
//! - [`items`]: functions, `impl` blocks (→ classes), constructors, `use`, constants;
//! - [`statements`]: blocks, `let`, `if`/`match`/loops, constructor results;
//! - [`expressions`]: expressions (what is erased: `?`, `.unwrap()`, `&x`, `Ok(x)`, …);
//! - [`patterns`]: `let`/`match`/`for` patterns → assignment targets;
//! - [`macros`]: `vec!`, `bail!`/`panic!`, `assert_eq!`, formatting macros;
//! - [`lowerer`]: spans, block scopes (shadowing), hoisted statements, the depth guard;
//! - [`nesting`]: the pre-scan that refuses input too deeply nested for syn;
//! - [`options`]: the fields a type sets to `None` (which `match`es on them name a path);
//!
//! Unlike the Python parser, syn is not error tolerant: a file that does not parse yields an
//! empty module and one [`SyntaxError`] at the place syn gave up.
//!
//! Robustness contract: [`parse_rust`] never panics and never overflows the stack. syn
//! and the lowering recurse, so the nesting pre-scan first refuses input whose nesting
//! could exceed fixed bounds, and the parse itself runs on a thread with a large stack
//! (syn's recursion on legal, deep-but-bounded input needs more than the 2 MiB a rayon or
//! test thread has). That thread also owns proc-macro2's span table, which grows with
//! every file parsed on a thread and is freed when the thread ends.

mod expressions;
mod items;
mod lowerer;
mod macros;
mod nesting;
mod options;
mod patterns;
mod statements;
#[cfg(test)]
mod tests;

pub use super::python::{ParseOutcome, SyntaxError};

use crate::ir;

/// Stack of the parser thread. Input at the nesting pre-scan's limits needs between 4 and
/// 16 MiB in a debug build (measured with the limit tests in `tests.rs`); this leaves a
/// wide margin. It is virtual memory: only the pages a parse touches are committed.
const PARSER_STACK_BYTES: usize = 64 << 20;

/// Parses Rust source into the IR. Never panics; see the module docs.
pub fn parse_rust(source: &str) -> ParseOutcome {
    if u32::try_from(source.len()).is_err() {
        return failed(0, "file is too large to parse (over 4 GiB)".into());
    }
    if let Err(too_deep) = nesting::check_nesting(source) {
        return failed(too_deep.offset, too_deep.message);
    }
    let parsed = std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("stridelint-rust-parser".into())
            .stack_size(PARSER_STACK_BYTES)
            .spawn_scoped(scope, || parse_on_this_thread(source));
        match worker {
            Ok(handle) => handle.join().ok(),
            Err(_) => None,
        }
    });
    parsed.unwrap_or_else(|| {
        failed(
            0,
            "internal error: the Rust parser thread could not run".into(),
        )
    })
}

/// Parse and lower on the current thread (the caller provides the stack).
fn parse_on_this_thread(source: &str) -> ParseOutcome {
    let (base, text) = strip_preamble(source);
    match syn::parse_str::<syn::File>(text) {
        Ok(file) => {
            let mut lowerer = lowerer::Lowerer::new(base);
            lowerer.none_fields = options::fields_set_to_none(&file);
            let mut module = items::ModuleBuilder::new();
            lowerer.lower_items(&file.items, &mut module);
            ParseOutcome {
                module: module.finish(),
                errors: Vec::new(),
            }
        }
        Err(error) => {
            let range = error.span().byte_range();
            // syn reports "unexpected end of input" with an empty span; point at the end.
            let offset = if range.is_empty() && range.start == 0 {
                source.len()
            } else {
                base + range.start
            };
            let end = (base + range.end).max(offset).min(source.len());
            let mut outcome = failed(offset, error.to_string());
            if let Some(first) = outcome.errors.first_mut() {
                first.span = ir::Span::new(offset, end);
            }
            outcome
        }
    }
}

/// What `syn::parse_file` strips before tokenizing: a byte-order mark and a `#!` line
/// (but not an inner attribute `#![...]`). Returns the offset of the rest and the rest.
fn strip_preamble(source: &str) -> (usize, &str) {
    let mut base = 0;
    if source.starts_with('\u{feff}') {
        base = '\u{feff}'.len_utf8();
    }
    let rest = &source[base..];
    if let Some(after) = rest.strip_prefix("#!") {
        if !after.trim_start().starts_with('[') {
            let line_end = rest.find('\n').unwrap_or(rest.len());
            base += line_end;
        }
    }
    (base, &source[base..])
}

/// An empty module and one error at `offset`.
fn failed(offset: usize, message: String) -> ParseOutcome {
    ParseOutcome {
        module: ir::Module {
            language: ir::Language::Rust,
            body: Vec::new(),
            functions: Vec::new(),
            classes: Vec::new(),
        },
        errors: vec![SyntaxError {
            span: ir::Span::new(offset, offset),
            message,
        }],
    }
}
