#![allow(clippy::single_range_in_vec_init)]
//! [`parse_python_for_lint`] must lower every kept block exactly as a whole-file parse does.
//! These tests parse files both ways and compare the lowered IR (as `Debug` text, spans
//! included) of every top-level item that lies in a kept block.

use std::ops::Range;
use std::path::{Path, PathBuf};

use super::relevant_ranges::ranges_worth_parsing;
use super::{parse_python, parse_python_for_lint};
use crate::ir::{self, Stmt};

/// Where a top-level statement starts, to tell which block it came from.
fn statement_start(statement: &Stmt) -> u32 {
    match statement {
        Stmt::Assign { span, .. }
        | Stmt::AugAssign { span, .. }
        | Stmt::Return { span, .. }
        | Stmt::If { span, .. }
        | Stmt::Loop { span, .. }
        | Stmt::With { span, .. }
        | Stmt::Try { span, .. }
        | Stmt::Assert { span, .. }
        | Stmt::Raise { span }
        | Stmt::Import { span, .. }
        | Stmt::Jump { span }
        | Stmt::Other { span } => span.start,
        Stmt::Expr(expr) => expr.span.start,
        Stmt::FunctionDef(function) => function.span.start,
        Stmt::ClassDef(class) => class.span.start,
    }
}

/// The module's top-level items that start inside `ranges`, as comparable `Debug` lines.
fn items_in(module: &ir::Module, ranges: &[Range<usize>]) -> Vec<String> {
    let inside = |start: u32| ranges.iter().any(|r| r.contains(&(start as usize)));
    let body = module
        .body
        .iter()
        .filter(|s| inside(statement_start(s)))
        .map(|s| format!("{s:?}"));
    let functions = module
        .functions
        .iter()
        .filter(|f| inside(f.span.start))
        .map(|f| format!("{f:?}"));
    let classes = module
        .classes
        .iter()
        .filter(|c| inside(c.span.start))
        .map(|c| format!("{c:?}"));
    body.chain(functions).chain(classes).collect()
}

/// Parses `source` both ways and checks that the partial parse holds exactly the full
/// parse's items of the kept blocks. Returns whether any block was skipped.
fn assert_partial_parse_matches_full(source: &str, what: &str) -> bool {
    let partial = parse_python_for_lint(source);
    let full = parse_python(source);
    let Some(ranges) = ranges_worth_parsing(source) else {
        let everything = [0..source.len() + 1];
        assert_eq!(
            items_in(&partial.module, &everything),
            items_in(&full.module, &everything),
            "{what}: whole-file parse differs"
        );
        return false;
    };
    let everything = [0..source.len() + 1];
    assert_eq!(
        items_in(&partial.module, &everything),
        items_in(&full.module, &ranges),
        "{what}: kept blocks lowered differently"
    );
    let full_errors_in_kept: Vec<_> = full
        .errors
        .iter()
        .filter(|e| ranges.iter().any(|r| r.contains(&(e.span.start as usize))))
        .collect();
    assert_eq!(
        partial.errors.iter().collect::<Vec<_>>(),
        full_errors_in_kept,
        "{what}: syntax errors differ"
    );
    true
}

#[test]
fn kept_blocks_of_tricky_files_lower_as_in_a_full_parse() {
    let sources = [
        // Decorators, a skipped helper between kept definitions, module code after them.
        concat!(
            "import torch\nfrom einops import rearrange\n\n",
            "@torch.no_grad()\n@other\ndef attend(q, k):\n    return q.transpose(1, 2) @ k\n\n",
            "def loss(a, b):\n    return (a - b).abs().mean()\n\n",
            "class Block(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n",
            "        self.proj = nn.Linear(d, 3 * d)\n\n",
            "    def forward(self, x):\n        b, t, c = x.shape\n",
            "        return self.proj(x).view(b, t, 3, c)\n\n",
            "WIDTH = 4\nif WIDTH > 2:\n    y = torch.zeros(2, 3).t()\nelse:\n    y = None\n",
        ),
        // Strings, continuations and f-strings that hide column-0 lines.
        concat!(
            "DOC = \"\"\"\ndef not_a_function():\n    pass\n\"\"\"\n",
            "TOTAL = 1 + \\\n2\n",
            "def fmt(x, width):\n    return f\"{x!r:>{width}} {x['k']} {{}} {f'{x}'}\"\n",
            "def shape(x):\n    return x.reshape(-1, \"\"\"\nclass Fake:\n\"\"\".count('x'))\n",
            "PAIRS = [\n(1, 2),\n]\n",
            "async def run(x):\n    return x.flatten()\n",
            "def tail(x):\n    return x  # view in a comment keeps it\n",
            "def skipped(x):\n    return x + 1\n",
        ),
        // CRLF line ends.
        "import torch\r\ndef f(x):\r\n    return x + 1\r\ndef g(x):\r\n    return x.view(-1)\r\n",
        // A token-free helper used by a kept function stays, transitively.
        concat!(
            "def inner(x):\n    return x[:, ::2]\n",
            "def middle(x):\n    return inner(x)\n",
            "def unused(x):\n    return x\n",
            "def top(x):\n    return middle(x).view(-1)\n",
        ),
    ];
    for (index, source) in sources.iter().enumerate() {
        assert!(
            assert_partial_parse_matches_full(source, &format!("source {index}")),
            "source {index}: expected some block to be skipped"
        );
    }
}

#[test]
fn syntax_errors_are_reported_only_in_kept_blocks() {
    let broken_skipped = "import torch\ndef helper(x):\n    y = = x\n    return y\ndef f(x):\n    return x.view(-1)\n";
    assert!(!parse_python(broken_skipped).errors.is_empty());
    assert!(parse_python_for_lint(broken_skipped).errors.is_empty());
    assert!(assert_partial_parse_matches_full(
        broken_skipped,
        "error in a skipped block"
    ));

    let broken_kept = "import torch\ndef helper(x):\n    return x\ndef f(x):\n    y = = x\n    return x.view(-1)\n";
    let errors = parse_python_for_lint(broken_kept).errors;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(broken_kept[errors[0].span.range()].contains('='));
    assert!(assert_partial_parse_matches_full(
        broken_kept,
        "error in a kept block"
    ));
}

/// Python files under `dir`, sorted so that the sample is the same on every run.
fn python_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "py") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Real model code (transformers, timm, diffusers) where it has been downloaded: every 60th
/// file, about 70 of them. Skipped when the tree is absent.
#[test]
fn kept_blocks_of_real_files_lower_as_in_a_full_parse() {
    let tree = Path::new("/work/realcode/src");
    if !tree.is_dir() {
        eprintln!("skipped: {} is absent", tree.display());
        return;
    }
    let mut partially_parsed = 0;
    for path in python_files(tree).iter().step_by(60) {
        let Ok(source) = std::fs::read_to_string(path) else {
            continue;
        };
        if assert_partial_parse_matches_full(&source, &path.display().to_string()) {
            partially_parsed += 1;
        }
    }
    assert!(
        partially_parsed > 10,
        "only {partially_parsed} files had blocks skipped"
    );
}

/// How much of the real tree the partial parse skips (run on request, with `--nocapture`).
#[test]
#[ignore = "measurement; run on request"]
fn skipped_share_of_real_tree() {
    let (mut total, mut kept, mut with_tokens) = (0usize, 0usize, 0usize);
    for path in python_files(Path::new("/work/realcode/src")) {
        let Ok(source) = std::fs::read_to_string(&path) else {
            continue;
        };
        if !super::may_contain_layout_ops(&source) {
            continue;
        }
        total += source.len();
        with_tokens +=
            super::top_level::scan_top_level_blocks(&source).map_or(source.len(), |blocks| {
                blocks
                    .iter()
                    .filter(|b| {
                        !matches!(b.kind, super::top_level::BlockKind::Definition { .. })
                            || super::may_contain_layout_ops(&source[b.range.clone()])
                    })
                    .map(|b| b.range.len())
                    .sum()
            });
        kept += ranges_worth_parsing(&source)
            .map_or(source.len(), |ranges| ranges.iter().map(|r| r.len()).sum());
    }
    println!("kept {kept} of {total} bytes that pass the pre-filter; {with_tokens} in blocks with tokens or not definitions");
}
