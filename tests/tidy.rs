//! Tidy checks in the spirit of rust-analyzer's `tidy.rs`: the module boundaries
//! ARCHITECTURE.md states hold in the code.
//!
//! - Every `crate::<module>` a source file names (in `use` lines and paths, test modules
//!   excluded) is allowed by the `boundaries` block of ARCHITECTURE.md.
//! - No two modules (files) import each other, directly or through others: a module may
//!   only use its ancestors' items (`super::…`), never the reverse circle.
//! - ARCHITECTURE.md's module map names every top-level module of `src/` and no other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The source files of the library (not the CLI's `main.rs`/`cli/`, not `src/bin/`), with
/// their module path (`layout::dim`).
fn library_files() -> Vec<(String, PathBuf)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let src = Path::new(REPO).join("src");
    let mut paths = Vec::new();
    walk(&src, &mut paths);
    let mut files = Vec::new();
    for path in paths {
        let rel = path.strip_prefix(&src).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().to_string())
            .collect();
        if ["bin", "main", "cli"].contains(&parts[0].as_str()) {
            continue;
        }
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        if parts == ["lib"] {
            parts.clear();
        }
        files.push((parts.join("::"), path));
    }
    files.sort();
    files
}

/// The code of a file, up to its test module, without `//` comments.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path `prefix::a::b` written in `code` (as segments after the prefix).
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut from = 0;
    while let Some(i) = code[from..].find(prefix) {
        let start = from + i;
        from = start + prefix.len();
        let boundary =
            start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_');
        if !boundary || !code[from..].starts_with("::") {
            continue;
        }
        let mut segments = Vec::new();
        let mut rest = &code[from..];
        while let Some(after) = rest.strip_prefix("::") {
            let len = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            if len == 0 {
                // `crate::{a, b}`: each item of the group.
                if let Some(group) = after.strip_prefix('{') {
                    let end = group.find('}').unwrap_or(group.len());
                    for item in group[..end].split(',') {
                        let name: String = item
                            .trim()
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                            .collect();
                        if !name.is_empty() {
                            let mut s = segments.clone();
                            s.push(name);
                            out.push(s);
                        }
                    }
                }
                segments.clear();
                break;
            }
            segments.push(after[..len].to_string());
            rest = &after[len..];
        }
        if !segments.is_empty() {
            out.push(segments);
        }
    }
    out
}

/// The `boundaries` block of ARCHITECTURE.md: module → the modules it may use.
fn boundaries() -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(Path::new(REPO).join("ARCHITECTURE.md")).unwrap();
    let start = text
        .find("```text boundaries")
        .expect("ARCHITECTURE.md has a ```text boundaries block");
    let block = &text[start..];
    let block = &block[block.find('\n').unwrap() + 1..];
    let block = &block[..block.find("```").unwrap()];
    let mut rules = BTreeMap::new();
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        let (module, uses) = line
            .split_once(':')
            .unwrap_or_else(|| panic!("bad line `{line}`"));
        let uses = uses.split('#').next().unwrap();
        let allowed: BTreeSet<String> = uses
            .split_whitespace()
            .filter(|u| *u != "-")
            .map(str::to_string)
            .collect();
        rules.insert(module.trim().to_string(), allowed);
    }
    rules
}

#[test]
fn every_module_uses_only_what_architecture_md_allows() {
    let rules = boundaries();
    let files = library_files();
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|(m, _)| {
            m.split("::")
                .next()
                .filter(|t| !t.is_empty())
                .map(str::to_string)
        })
        .collect();
    for module in &modules {
        assert!(
            rules.contains_key(module),
            "ARCHITECTURE.md's boundaries block has no line for `{module}`"
        );
    }
    let mut violations = Vec::new();
    for (module, path) in &files {
        let Some(top) = module.split("::").next().filter(|t| !t.is_empty()) else {
            continue;
        };
        for segments in paths_after(&code(path), "crate") {
            let used = &segments[0];
            // Items of the crate root (`crate::Settings`) count as `crate`.
            let used = if modules.contains(used) {
                used.as_str()
            } else {
                "crate"
            };
            if used != top && !rules[top].contains(used) {
                violations.push(format!(
                    "{}: `{top}` uses `crate::{}`, which ARCHITECTURE.md does not allow",
                    path.strip_prefix(REPO).unwrap().display(),
                    segments.join("::")
                ));
            }
        }
    }
    violations.sort();
    violations.dedup();
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

/// The module a path names: the longest prefix of it that is a file module.
fn resolve(segments: &[String], modules: &BTreeSet<String>) -> Option<String> {
    (1..=segments.len())
        .rev()
        .map(|k| segments[..k].join("::"))
        .find(|m| modules.contains(m))
}

#[test]
fn no_import_cycle_between_modules() {
    let files = library_files();
    let modules: BTreeSet<String> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, path) in &files {
        let code = code(path);
        let own: Vec<String> = module.split("::").map(str::to_string).collect();
        let mut targets = Vec::new();
        for segments in paths_after(&code, "crate") {
            targets.extend(resolve(&segments, &modules));
        }
        for segments in paths_after(&code, "super") {
            let mut base = own[..own.len().saturating_sub(1)].to_vec();
            let mut rest = segments.as_slice();
            while let Some(("super", tail)) = rest.split_first().map(|(h, t)| (h.as_str(), t)) {
                base.pop();
                rest = tail;
            }
            base.extend(rest.iter().cloned());
            targets.extend(resolve(&base, &modules));
        }
        let entry = edges.entry(module.clone()).or_default();
        for target in targets {
            // A module may use what its ancestors define (and re-export).
            let ancestor = target.is_empty() || module.starts_with(&format!("{target}::"));
            if target != *module && !ancestor {
                entry.insert(target);
            }
        }
    }
    // Depth-first search for a back edge; report the circle it closes.
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
        cycles: &mut Vec<String>,
    ) {
        if done.contains(node) {
            return;
        }
        if let Some(i) = stack.iter().position(|n| n == node) {
            let mut circle = stack[i..].to_vec();
            circle.push(node.to_string());
            cycles.push(circle.join(" → "));
            return;
        }
        stack.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            visit(next, edges, stack, done, cycles);
        }
        stack.pop();
        done.insert(node.to_string());
    }
    let mut cycles = Vec::new();
    let mut done = BTreeSet::new();
    for module in edges.keys() {
        visit(module, &edges, &mut Vec::new(), &mut done, &mut cycles);
    }
    assert!(cycles.is_empty(), "import circles:\n{}", cycles.join("\n"));
}

#[test]
fn architecture_md_maps_every_top_level_module() {
    let text = std::fs::read_to_string(Path::new(REPO).join("ARCHITECTURE.md")).unwrap();
    let map = &text[text.find("## Module map").expect("a module map")..];
    let map = &map[..map[3..].find("\n## ").map_or(map.len(), |i| i + 3)];
    let mut on_disk = BTreeSet::new();
    for entry in std::fs::read_dir(Path::new(REPO).join("src")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        on_disk.insert(match name.strip_suffix(".rs") {
            Some(stem) => format!("src/{stem}.rs"),
            None => format!("src/{name}/"),
        });
    }
    for path in &on_disk {
        assert!(
            map.contains(&format!("`{path}`")),
            "ARCHITECTURE.md's module map lacks `{path}`"
        );
    }
    // And names nothing that is gone.
    let mut rest = map;
    while let Some(i) = rest.find("`src/") {
        let tail = &rest[i + 1..];
        let end = tail.find('`').unwrap();
        let path = &tail[..end];
        assert!(
            Path::new(REPO).join(path.trim_end_matches('/')).exists(),
            "ARCHITECTURE.md's module map names `{path}`, which does not exist"
        );
        rest = &tail[end..];
    }
}

#[test]
fn the_path_scanner_reads_groups_and_nested_paths() {
    let paths = paths_after(
        "use crate::a::b::{C, d};\nlet x = crate::e::f(1);\nuse crate::{g, h::i};\nfn mycrate() {}",
        "crate",
    );
    let flat: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
    assert_eq!(flat, ["a::b::C", "a::b::d", "e::f", "g", "h"]);
}
