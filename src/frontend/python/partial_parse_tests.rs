//! [`parse_python_for_lint`] must lower every kept piece exactly as a whole-file parse does.
//! These tests parse files both ways and compare the lowered IR (as `Debug` text, spans
//! included) of the top-level statements and of every kept function, class and method.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::relevant_ranges::ranges_worth_parsing;
use super::{parse_python, parse_python_for_lint};
use crate::ir::{Class, Function};

fn assert_same_function(partial: &Function, full: &[Arc<Function>], what: &str) {
    let Some(full) = full.iter().find(|f| f.span.start == partial.span.start) else {
        panic!("{what}: `{}` is not in the full parse", partial.name);
    };
    assert_eq!(
        format!("{partial:?}"),
        format!("{full:?}"),
        "{what}: `{}` differs",
        partial.name
    );
}

fn assert_same_class(partial: &Class, full: &[Arc<Class>], what: &str) {
    let Some(full) = full.iter().find(|c| c.span.start == partial.span.start) else {
        panic!("{what}: class `{}` is not in the full parse", partial.name);
    };
    assert_eq!(
        (&partial.name, &partial.bases),
        (&full.name, &full.bases),
        "{what}"
    );
    for method in &partial.methods {
        assert_same_function(method, &full.methods, what);
    }
}

/// Parses `source` both ways and checks that everything the partial parse holds is lowered
/// exactly as in the full parse: the same top-level statements, and each kept function,
/// class and method equal to its counterpart. Returns whether anything was skipped.
fn assert_partial_parse_matches_full(source: &str, what: &str) -> bool {
    let partial = parse_python_for_lint(source);
    let full = parse_python(source);
    assert_eq!(
        format!("{:?}", partial.module.body),
        format!("{:?}", full.module.body),
        "{what}: top-level statements differ"
    );
    for function in &partial.module.functions {
        assert_same_function(function, &full.module.functions, what);
    }
    for class in &partial.module.classes {
        assert_same_class(class, &full.module.classes, what);
    }
    for error in &partial.errors {
        assert!(
            full.errors.contains(error),
            "{what}: {error:?} is not in the full parse"
        );
    }
    let skipped = ranges_worth_parsing(source).is_some();
    if !skipped {
        assert_eq!(
            format!("{:?}", partial.module),
            format!("{:?}", full.module),
            "{what}"
        );
        assert_eq!(partial.errors, full.errors, "{what}");
    }
    skipped
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
        // Methods: a skipped helper, a comment and a decorated kept method, a body statement.
        concat!(
            "class Net(nn.Module):\n    \"\"\"Doc.\"\"\"\n",
            "    def helper(self):\n        return 1\n\n    # comment\n",
            "    @torch.no_grad()\n    def forward(self, x):\n        return x.view(-1)\n",
            "    size = 3\n",
            "class Other:\n    def f(self):\n        return 2\n",
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
    let broken_method = "class A:\n    def helper(self, x):\n        y = = x\n    def f(self, x):\n        return x.view(-1)\n";
    assert!(!parse_python(broken_method).errors.is_empty());
    assert!(parse_python_for_lint(broken_method).errors.is_empty());
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
    let (mut total, mut kept) = (0usize, 0usize);
    for path in python_files(Path::new("/work/realcode/src")) {
        let Ok(source) = std::fs::read_to_string(&path) else {
            continue;
        };
        if !super::may_contain_layout_ops(&source) {
            continue;
        }
        total += source.len();
        kept += ranges_worth_parsing(&source)
            .map_or(source.len(), |ranges| ranges.iter().map(|r| r.len()).sum());
    }
    println!("kept {kept} of {total} bytes that pass the pre-filter");
}

/// The fixture model files, to edit in the property test below.
fn fixture_sources() -> Vec<String> {
    python_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/python"))
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .collect()
}

/// Lines inserted by the property test: definitions, calls, `self` assignments, blocks.
const INSERTED_LINES: &[&str] = &[
    "def helper(self, x):",
    "def helper(x):",
    "return x.view(-1)",
    "return helper(x)[:, ::2]",
    "return self.helper(x)",
    "self.n_head = 4",
    "x = x.transpose(1, 2)",
    "y = x.reshape(2, -1)",
    "pass",
    "@torch.no_grad()",
    "class Extra(nn.Module):",
    "'''doc'''",
    "# view",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 96, ..Default::default() })]

    /// Edited model files (lines removed, duplicated, inserted at the indentation of their
    /// neighbour) that still parse: every kept piece lowers as in a full parse, and the
    /// parsed ranges are sorted, disjoint and made of whole lines.
    #[test]
    fn partial_parse_of_edited_fixtures_matches_full(
        which in 0usize..64,
        edits in proptest::collection::vec((0usize..10_000, 0u8..3, 0usize..64), 1..6),
    ) {
        let sources = fixture_sources();
        let mut lines: Vec<String> = sources[which % sources.len()].lines().map(String::from).collect();
        for (at, kind, pick) in edits {
            let index = at % (lines.len() + 1);
            match kind {
                0 if index < lines.len() => {
                    lines.remove(index);
                }
                1 if index < lines.len() => lines.insert(index, lines[index].clone()),
                _ => {
                    let neighbour = lines.get(index).or(lines.last()).map_or("", String::as_str);
                    let indent: String = neighbour.chars().take_while(|c| *c == ' ').collect();
                    let line = INSERTED_LINES[pick % INSERTED_LINES.len()];
                    lines.insert(index, format!("{indent}{line}"));
                }
            }
        }
        let source = lines.join("\n") + "\n";
        proptest::prop_assume!(parse_python(&source).errors.is_empty());
        assert_partial_parse_matches_full(&source, "edited fixture");
        if let Some(ranges) = ranges_worth_parsing(&source) {
            let bytes = source.as_bytes();
            for pair in ranges.windows(2) {
                assert!(pair[0].end < pair[1].start, "{ranges:?}");
            }
            for range in &ranges {
                assert!(!range.is_empty());
                assert!(range.start == 0 || bytes[range.start - 1] == b'\n', "{range:?}");
                assert!(range.end == bytes.len() || bytes[range.end - 1] == b'\n', "{range:?}");
            }
        }
    }
}
