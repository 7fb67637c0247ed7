//! One fuzz input, per target: what `fuzz/fuzz_targets/*.rs` run under libFuzzer and what
//! `tests/it/fuzz_regressions.rs` replays on every past crash in `tests/data/fuzz/<target>/`.
//! Each function must return normally on every input: a panic, an abort, a hang or
//! unbounded memory is a bug (libFuzzer reports the input; add it to the regression
//! corpus once fixed).
#![allow(dead_code)]

use std::path::Path;

// The `replay` op parser lives in the binary; its two modules only use the library.
#[path = "../../../src/cli/replay_chain.rs"]
#[allow(clippy::all)]
pub mod replay_chain;
#[path = "../../../src/cli/replay_syntax.rs"]
#[allow(clippy::all)]
pub mod replay_syntax;

use stridelint::frontend::{python, rust};
use stridelint::ir::Language;
use stridelint::lints::prefilter::ReportedOps;
use stridelint::notebook::Notebook;
use stridelint::source::SourceFile;

/// A target: its name and the function that runs one input.
pub type Target = (&'static str, fn(&[u8]));

/// The targets, by name (the directory names under `tests/data/fuzz/`).
pub const TARGETS: &[Target] = &[
    ("python", python_frontend),
    ("rust", rust_frontend),
    ("notebook", notebook_reader),
    ("config", config_loader),
    ("replay", replay_ops),
    ("pipeline", pipeline),
];

/// Fuzzed bytes as the text a file would give (lossy: the UTF-8 check is not the subject).
fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

/// The Python frontend: the whole-file parse or (for inputs of odd length, so that each
/// run parses once) the partial parse with its outline scan, and the locations of every
/// error reported.
pub fn python_frontend(data: &[u8]) {
    let text = text(data);
    let outcome = match data.len() % 2 {
        0 => python::parse_python(&text),
        _ => python::parse_python_for_lint(&text),
    };
    let file = SourceFile::new("fuzz.py", text);
    for error in &outcome.errors {
        assert!(error.span.start <= error.span.end, "{error:?}");
        let _ = file.span_locations(error.span);
    }
    let _ = ReportedOps::get(Language::Python).may_report(&file.text);
}

/// The Rust frontend (the nesting pre-scan, syn, the lowering).
pub fn rust_frontend(data: &[u8]) {
    let text = text(data);
    let outcome = rust::parse_rust(&text);
    let file = SourceFile::new("fuzz.rs", text);
    for error in &outcome.errors {
        let _ = file.span_locations(error.span);
    }
    let _ = ReportedOps::get(Language::Rust).may_report(&file.text);
}

/// The notebook reader: parsing, the cell map, and the write-back, which must give the
/// file back byte for byte when nothing changed.
pub fn notebook_reader(data: &[u8]) {
    let text = text(data);
    let Ok((notebook, python)) = Notebook::parse(text.clone()) else {
        return;
    };
    assert_eq!(notebook.with_python(&python).as_deref(), Ok(text.as_str()));
    let rows = python.split_inclusive('\n').count();
    for row in 0..=rows {
        let _ = notebook.cell_row(row);
    }
    // An edit that keeps the line count is written back and read again.
    let edited = python.replace("view", "reshape");
    if let Ok(written) = notebook.with_python(&edited) {
        let (_, again) = Notebook::parse(written).expect("the written notebook parses");
        assert_eq!(again.split_inclusive('\n').count(), rows);
    }
    let file = SourceFile::from_notebook("fuzz.ipynb", notebook, python);
    for row in 0..file.line_count() {
        let start = file.line_range(row).start;
        let _ = file.display_location(file.location(start));
    }
}

/// The configuration loader: `stridelint.toml` or `pyproject.toml` text (by the first
/// byte), validated and resolved (exclude patterns compiled, settings built).
pub fn config_loader(data: &[u8]) {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    let text = text(rest);
    let Ok(Some(config)) = stridelint::settings::parse_config_text(&text, kind & 1 == 1) else {
        return;
    };
    let root = std::env::temp_dir();
    if let Ok(resolved) = stridelint::settings::Resolved::new(config, root.clone()) {
        let _ = resolved.excludes(&root.join("a/b.py"));
        let _ = resolved.ignored_for(&root.join("tests/t.py"));
    }
}

thread_local! {
    /// One meter per thread, renewed now and then: it keeps every measured layout.
    static METER: std::cell::RefCell<(usize, Option<replay_chain::Meter>)> =
        const { std::cell::RefCell::new((0, None)) };
}

/// Starting shapes for the replay target, chosen by the first byte.
const SHAPES: &[&[i64]] = &[
    &[2, 3, 4],
    &[4, 6],
    &[2, 3, 4, 5],
    &[1, 5, 1],
    &[0, 3],
    &[7],
    &[],
    &[3, 1, 4, 1, 5],
];

/// The `replay` op parser and the chain replay: each line after the first byte is one
/// argument; the copies are measured on the CPU, with tiny buffers.
pub fn replay_ops(data: &[u8]) {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    let text = text(rest);
    let mut steps = Vec::new();
    for argument in text.split('\n').take(8) {
        match replay_syntax::parse_chain(argument) {
            Ok(parsed) => steps.extend(parsed),
            Err(error) => {
                let _ = error.to_string();
                return;
            }
        }
    }
    if steps
        .iter()
        .any(|step| replay_chain::resolve(step).is_err())
    {
        return;
    }
    let shape = SHAPES[kind as usize % SHAPES.len()];
    let start = stridelint::layout::Layout::contiguous(shape.to_vec());
    METER.with(|cell| {
        let mut cell = cell.borrow_mut();
        cell.0 += 1;
        if cell.0 % 4096 == 0 || cell.1.is_none() {
            let options = stridelint::verify::MeasureOptions {
                warmup_runs: 0,
                timed_runs: 1,
                threads: Some(1),
                check: true,
                max_bytes: Some(1 << 16),
            };
            cell.1 = Some(replay_chain::Meter::new(
                stridelint::verify::EngineChoice::Cpu,
                stridelint::verify::DType::F32,
                options,
            ));
        }
        let meter = cell.1.as_mut().expect("set above");
        let _ = replay_chain::replay_chain(
            &start,
            &steps.iter().take(16).cloned().collect::<Vec<_>>(),
            meter,
        );
    });
}

/// The whole pipeline on one file (frontend, interpreter, lints, suppressions): Python,
/// Rust or a notebook by the first byte.
pub fn pipeline(data: &[u8]) {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    let name = match kind % 3 {
        0 => "fuzz.py",
        1 => "fuzz.rs",
        _ => "fuzz.ipynb",
    };
    let settings = stridelint::Settings::default();
    let _ = stridelint::check_bytes(Path::new(name), rest.to_vec(), &settings);
}
