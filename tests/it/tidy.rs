//! Tidy checks in the spirit of rust-analyzer's `tidy.rs`: the module boundaries
//! ARCHITECTURE.md states hold in the code.
//!
//! Every source file of `src/` is read whole — the library, the CLI (`main.rs`, `cli/`) and
//! `src/bin/` — with only its comments and its `#[cfg(test)]` items (found by matching
//! braces) left out, and files that only a `#[cfg(test)] mod name;` declares skipped.
//!
//! - Every edge from one module (file) to another — `crate::…`, `super::…`, `self::…`, a
//!   crate root's own `child::…` paths, and the binaries' `stridelint::…` paths, in `use`
//!   trees and in code — is allowed by the `boundaries` block of ARCHITECTURE.md. An edge
//!   to an item of `lib.rs` itself is an edge to the crate root (`crate`), which is never
//!   exempt; a module's edges to its own descendants are (the root's children, the files
//!   of a directory module), and so are edges to its ancestors below the root.
//! - No import circle between modules (files), the crate root included; only an edge to an
//!   ancestor below the root (a directory's `mod.rs`) may close one.
//! - ARCHITECTURE.md's module map names every top-level module of `src/` and no other.
//! - No rule code (`"SL001"`) is written in a string outside `src/lints/`: a rule's
//!   identity and what its findings claim live in the registry.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// Which crate a file belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Crate {
    /// The library, `src/lib.rs` and its modules.
    Lib,
    /// The `stridelint` binary: `src/main.rs` and `src/cli/`.
    Main,
    /// A binary of `src/bin/`.
    Bin,
}

/// A source file: its crate, its module path inside that crate (`layout::dim`; empty for
/// a crate root) and its code.
#[derive(Debug)]
struct SourceModule {
    krate: Crate,
    /// For `src/bin/x.rs`, `x`.
    bin: String,
    module: Vec<String>,
    path: PathBuf,
    code: Code,
}

impl SourceModule {
    /// The name ARCHITECTURE.md gives the module: `analysis::interp::call`, `crate` for
    /// `lib.rs`, `main` for `main.rs`, `cli::verify`, `bin::bench_engine`.
    fn name(&self) -> String {
        name_of(self.krate, &self.bin, &self.module)
    }

    fn display(&self) -> String {
        self.path.strip_prefix(REPO).unwrap().display().to_string()
    }
}

fn name_of(krate: Crate, bin: &str, module: &[String]) -> String {
    let joined = module.join("::");
    match krate {
        Crate::Lib if module.is_empty() => "crate".to_string(),
        Crate::Lib => joined,
        Crate::Main if module.is_empty() => "main".to_string(),
        Crate::Main => joined,
        Crate::Bin if module.is_empty() => format!("bin::{bin}"),
        Crate::Bin => format!("bin::{bin}::{joined}"),
    }
}

/// A file's code without comments and `#[cfg(test)]` items, string literals blanked (their
/// quotes kept), and the string literals themselves with their line.
#[derive(Debug, Default)]
struct Code {
    text: String,
    strings: Vec<(usize, String)>,
    /// `name` of each `#[cfg(test)] mod name;`: a file only the tests compile.
    test_module_files: Vec<String>,
    /// The whole file is `#![cfg(test)]`.
    test_only: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Code,
    Comment,
    /// Inside a string or char literal (its delimiters are `Code`).
    Literal,
}

/// Classifies each char of Rust source as code, comment or literal contents.
fn classify(chars: &[char]) -> Vec<Class> {
    let n = chars.len();
    let mut class = vec![Class::Code; n];
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < n {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < n && chars[i] != '\n' {
                class[i] = Class::Comment;
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < n {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    class[i] = Class::Comment;
                    class[i + 1] = Class::Comment;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    class[i] = Class::Comment;
                    class[i + 1] = Class::Comment;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    class[i] = Class::Comment;
                    i += 1;
                }
            }
        } else if (c == 'r' || (c == 'b' && next == Some('r')))
            && (i == 0 || !ident(chars[i - 1]))
            && {
                let mut j = i + if c == 'b' { 2 } else { 1 };
                while j < n && chars[j] == '#' {
                    j += 1;
                }
                j < n && chars[j] == '"'
            }
        {
            // A raw string: `r#"…"#`.
            let mut j = i + if c == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while chars[j] == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            while j < n {
                if chars[j] == '"' && (0..hashes).all(|k| chars.get(j + 1 + k) == Some(&'#')) {
                    break;
                }
                class[j] = Class::Literal;
                j += 1;
            }
            i = j + 1 + hashes;
        } else if c == '"' {
            let mut j = i + 1;
            while j < n && chars[j] != '"' {
                class[j] = Class::Literal;
                if chars[j] == '\\' && j + 1 < n {
                    class[j + 1] = Class::Literal;
                    j += 1;
                }
                j += 1;
            }
            i = j + 1;
        } else if c == '\'' {
            // A char literal (`'{'`, `'\''`, `'\u{7f}'`) or a lifetime (`'a`).
            if next == Some('\\') {
                let mut j = i + 2;
                class[i + 1] = Class::Literal;
                while j < n && chars[j] != '\'' {
                    class[j] = Class::Literal;
                    j += 1;
                }
                if j < n && j > i + 2 && chars[j - 1] == '\\' && chars[i + 2] == '\'' {
                    // `'\''`
                    class[j] = Class::Literal;
                    j += 1;
                }
                i = j + 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                class[i + 1] = Class::Literal;
                i += 3;
            } else {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    class
}

/// The index after the item starting at `i` (attributes first): the `;` that ends it at
/// depth 0, or the `}` that brings it back to depth 0 (and a `;` right after).
fn item_end(chars: &[char], class: &[Class], mut i: usize) -> usize {
    let n = chars.len();
    let mut depth = 0i32;
    while i < n {
        if class[i] != Class::Code {
            i += 1;
            continue;
        }
        match chars[i] {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' => depth -= 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    let mut j = i + 1;
                    while j < n && (chars[j].is_whitespace() || class[j] == Class::Comment) {
                        j += 1;
                    }
                    return if j < n && chars[j] == ';' {
                        j + 1
                    } else {
                        i + 1
                    };
                }
            }
            ';' if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    n
}

/// The attribute starting at `i` (`#[…]` or `#![…]`): its end and its text without blanks.
fn attribute(chars: &[char], class: &[Class], i: usize) -> Option<(usize, String)> {
    if chars[i] != '#' || class[i] != Class::Code {
        return None;
    }
    let mut j = i + 1;
    if chars.get(j) == Some(&'!') {
        j += 1;
    }
    if chars.get(j) != Some(&'[') {
        return None;
    }
    let mut depth = 0;
    let mut text = String::new();
    for (k, &c) in chars.iter().enumerate().skip(i) {
        if !c.is_whitespace() {
            text.push(c);
        }
        if class[k] == Class::Code {
            if c == '[' {
                depth += 1;
            } else if c == ']' {
                depth -= 1;
                if depth == 0 {
                    return Some((k + 1, text));
                }
            }
        }
    }
    None
}

/// Is this attribute (without blanks) a `cfg` that holds only under test?
fn is_test_cfg(attr: &str) -> bool {
    let inner = attr
        .trim_start_matches("#!")
        .trim_start_matches('#')
        .trim_start_matches('[');
    inner.starts_with("cfg(test)") || inner.starts_with("cfg(all(test,")
}

fn read_code(path: &Path) -> Code {
    let text = std::fs::read_to_string(path).unwrap();
    let chars: Vec<char> = text.chars().collect();
    let class = classify(&chars);
    let mut keep = vec![true; chars.len()];
    let mut code = Code::default();
    let mut i = 0;
    while i < chars.len() {
        let Some((end, attr)) = attribute(&chars, &class, i) else {
            i += 1;
            continue;
        };
        if !is_test_cfg(&attr) {
            i = end;
            continue;
        }
        if attr.starts_with("#!") {
            code.test_only = true;
            return code;
        }
        // Skip the other attributes of the item, then the item.
        let mut j = end;
        loop {
            while j < chars.len() && (chars[j].is_whitespace() || class[j] == Class::Comment) {
                j += 1;
            }
            match attribute(&chars, &class, j) {
                Some((e, _)) => j = e,
                None => break,
            }
        }
        let item_end = item_end(&chars, &class, j);
        let item: String = chars[j..item_end].iter().collect();
        let words: Vec<&str> = item
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ';'))
            .filter(|w| !w.is_empty())
            .collect();
        let words: Vec<&str> = words.into_iter().skip_while(|w| *w == "pub").collect();
        if words.len() == 2 && words[0] == "mod" && words[1].ends_with(';') {
            code.test_module_files
                .push(words[1].trim_end_matches(';').to_string());
        }
        for k in &mut keep[i..item_end] {
            *k = false;
        }
        i = item_end;
    }
    let mut line = 1;
    let mut literal: Option<String> = None;
    for (k, &c) in chars.iter().enumerate() {
        let kept = keep[k];
        match class[k] {
            Class::Literal => {
                if kept {
                    literal.get_or_insert_with(String::new).push(c);
                }
                code.text.push(if c == '\n' { '\n' } else { ' ' });
            }
            _ => {
                if let Some(s) = literal.take() {
                    code.strings.push((line, s));
                }
                let visible = kept && class[k] == Class::Code;
                code.text.push(if visible || c == '\n' { c } else { ' ' });
            }
        }
        if c == '\n' {
            line += 1;
        }
    }
    code
}

/// Every source file of `src/`, test-only files left out.
fn source_modules() -> Vec<SourceModule> {
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
    paths.sort();
    let mut modules = Vec::new();
    for path in paths {
        let rel = path.strip_prefix(&src).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().to_string())
            .collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        let (krate, bin, module) = match parts[0].as_str() {
            "lib" if parts.len() == 1 => (Crate::Lib, String::new(), Vec::new()),
            "main" if parts.len() == 1 => (Crate::Main, String::new(), Vec::new()),
            "cli" => (Crate::Main, String::new(), parts),
            "bin" => (Crate::Bin, parts[1].clone(), parts[2..].to_vec()),
            _ => (Crate::Lib, String::new(), parts),
        };
        let code = read_code(&path);
        modules.push(SourceModule {
            krate,
            bin,
            module,
            path,
            code,
        });
    }
    // Files only the tests compile: `#[cfg(test)] mod name;`, and everything below them.
    let mut test_only: BTreeSet<(Crate, String, Vec<String>)> = BTreeSet::new();
    for m in &modules {
        for name in &m.code.test_module_files {
            let mut child = m.module.clone();
            child.push(name.clone());
            test_only.insert((m.krate, m.bin.clone(), child));
        }
    }
    modules.retain(|m| {
        !m.code.test_only
            && !test_only.iter().any(|(krate, bin, module)| {
                *krate == m.krate && *bin == m.bin && m.module.starts_with(module)
            })
    });
    modules
}

/// Every path `prefix::a::b` written in `code` (as segments after the prefix), `use`
/// groups expanded (`prefix::{a, b::{c, d}}` is `a`, `b::c`, `b::d`; `self` in a group is
/// the group's path).
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    fn word(s: &str) -> usize {
        s.find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(s.len())
    }
    /// Parses the path tree at `s` (after a `::`) under `base`; returns the rest.
    fn tree<'a>(mut s: &'a str, base: Vec<String>, out: &mut Vec<Vec<String>>) -> &'a str {
        let mut segments = base;
        loop {
            s = s.trim_start();
            if let Some(group) = s.strip_prefix('{') {
                s = group;
                loop {
                    s = s.trim_start();
                    if let Some(rest) = s.strip_prefix('}') {
                        return rest;
                    }
                    if s.is_empty() {
                        return s;
                    }
                    s = tree(s, segments.clone(), out);
                    s = s.trim_start();
                    if let Some(rest) = s.strip_prefix(',') {
                        s = rest;
                    } else if let Some(rest) = s.strip_prefix('}') {
                        return rest;
                    } else {
                        return s;
                    }
                }
            }
            let len = word(s);
            if len == 0 {
                // `*`, or the end of the path.
                out.push(segments);
                return s;
            }
            let name = &s[..len];
            s = &s[len..];
            if name != "self" {
                segments.push(name.to_string());
            }
            let after = s.trim_start();
            match after.strip_prefix("::") {
                Some(rest) => s = rest,
                None => {
                    // `a as b`: the alias names nothing new.
                    let after = after
                        .strip_prefix("as ")
                        .map(|r| {
                            let r = r.trim_start();
                            &r[word(r)..]
                        })
                        .unwrap_or(s);
                    out.push(segments);
                    return after;
                }
            }
        }
    }
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut from = 0;
    while let Some(i) = code[from..].find(prefix) {
        let start = from + i;
        from = start + prefix.len();
        let before = &code[..start];
        let boundary = start == 0
            || !(bytes[start - 1].is_ascii_alphanumeric()
                || bytes[start - 1] == b'_'
                || before.trim_end().ends_with("::"));
        let after_prefix = &code[from..];
        if !boundary
            || after_prefix
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let Some(rest) = after_prefix.trim_start().strip_prefix("::") else {
            continue;
        };
        let mut found = Vec::new();
        tree(rest, Vec::new(), &mut found);
        out.extend(found.into_iter().filter(|s| !s.is_empty()));
    }
    out
}

/// A module of some crate, named by its path there.
type Target = (Crate, String, Vec<String>);

/// The file modules a source file's paths lead to (each the longest prefix of the path
/// that is a file module; the crate root for an item of the root itself).
fn edges_of(m: &SourceModule, files: &BTreeSet<Target>) -> BTreeSet<Target> {
    let resolve = |krate: Crate, bin: &str, segments: &[String]| -> Target {
        let module = (0..=segments.len())
            .rev()
            .map(|k| segments[..k].to_vec())
            .find(|p| files.contains(&(krate, bin.to_string(), p.clone())))
            .unwrap_or_default();
        (krate, bin.to_string(), module)
    };
    let code = &m.code.text;
    let mut targets = BTreeSet::new();
    let own = &m.module;
    for segments in paths_after(code, "crate") {
        targets.insert(resolve(m.krate, &m.bin, &segments));
    }
    // `self::` and `super::` are relative to the file's module (a `mod.rs` is its
    // directory's module).
    for (prefix, up) in [("self", 0), ("super", 1)] {
        for segments in paths_after(code, prefix) {
            let mut base = own[..own.len().saturating_sub(up)].to_vec();
            let mut rest = segments.as_slice();
            while let Some(("super", tail)) = rest.split_first().map(|(h, t)| (h.as_str(), t)) {
                base.pop();
                rest = tail;
            }
            base.extend(rest.iter().cloned());
            targets.insert(resolve(m.krate, &m.bin, &base));
        }
    }
    // A module names its children without `crate::` or `self::`.
    {
        let children: BTreeSet<String> = files
            .iter()
            .filter(|(k, b, p)| {
                *k == m.krate && *b == m.bin && p.len() == own.len() + 1 && p.starts_with(own)
            })
            .map(|(_, _, p)| p[own.len()].clone())
            .collect();
        for child in &children {
            for segments in paths_after(code, child) {
                let mut full = own.clone();
                full.push(child.clone());
                full.extend(segments);
                targets.insert(resolve(m.krate, &m.bin, &full));
            }
        }
    }
    if m.krate != Crate::Lib {
        for segments in paths_after(code, "stridelint") {
            targets.insert(resolve(Crate::Lib, "", &segments));
        }
    }
    targets.remove(&(m.krate, m.bin.clone(), own.clone()));
    targets
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
        let line = line.split('#').next().unwrap();
        if line.trim().is_empty() {
            continue;
        }
        let (module, uses) = line
            .split_once(": ")
            .unwrap_or_else(|| panic!("bad line `{line}`"));
        let allowed: BTreeSet<String> = uses
            .split_whitespace()
            .filter(|u| *u != "-")
            .map(str::to_string)
            .collect();
        let previous = rules.insert(module.trim().to_string(), allowed);
        assert!(previous.is_none(), "two lines for `{}`", module.trim());
    }
    rules
}

/// Every source file with the modules its code uses.
fn module_graph() -> (Vec<SourceModule>, Vec<BTreeSet<Target>>) {
    let modules = source_modules();
    let files: BTreeSet<Target> = modules
        .iter()
        .map(|m| (m.krate, m.bin.clone(), m.module.clone()))
        .collect();
    let edges = modules.iter().map(|m| edges_of(m, &files)).collect();
    (modules, edges)
}

fn is_ancestor(ancestor: &str, of: &str) -> bool {
    of.starts_with(&format!("{ancestor}::"))
}

#[test]
fn every_module_uses_only_what_architecture_md_allows() {
    let rules = boundaries();
    let (modules, edges) = module_graph();
    let mut violations = Vec::new();
    for (m, targets) in modules.iter().zip(&edges) {
        let name = m.name();
        let top = name.split("::").next().unwrap().to_string();
        if name != "crate" && !rules.contains_key(&top) {
            violations.push(format!(
                "{}: ARCHITECTURE.md's boundaries block has no line for `{top}`",
                m.display()
            ));
            continue;
        }
        let split = rules.keys().any(|k| is_ancestor(&top, k));
        if split && name != top && !rules.contains_key(&part(&name)) {
            violations.push(format!(
                "{}: ARCHITECTURE.md's boundaries block has lines for parts of `{top}` but none for `{}`",
                m.display(),
                part(&name)
            ));
            continue;
        }
        for (krate, bin, module) in targets {
            let target = name_of(*krate, bin, module);
            let allowed = if *krate == Crate::Lib && m.krate != Crate::Lib {
                // The binaries use the library by its name.
                let target_top = match target.as_str() {
                    "crate" => "stridelint".to_string(),
                    t => format!("stridelint::{}", t.split("::").next().unwrap()),
                };
                if !rules[&top].contains(&target_top) {
                    violations.push(format!(
                        "{}: `{name}` uses `{target_top}`, which ARCHITECTURE.md does not allow",
                        m.display()
                    ));
                }
                continue;
            } else if name == "crate" || name == "main" || is_ancestor(&name, &target) {
                // A module uses its descendants: the crate root its children, a directory
                // module its files.
                true
            } else if target.split("::").next() != Some(top.as_str()) {
                // Another top-level module, or the crate root (`crate`, `main`).
                let target_top = target.split("::").next().unwrap();
                rules[&top].contains(target_top)
            } else {
                // Inside one top-level module: checked where the block has lines for its
                // parts (`analysis::interp: …`), one for each child of its directory.
                let (from, to) = (part(&name), part(&target));
                !split || from == to || to == top || rules[&from].contains(&to)
            };
            if !allowed {
                violations.push(format!(
                    "{}: `{name}` uses `{target}`, which ARCHITECTURE.md does not allow",
                    m.display()
                ));
            }
        }
    }
    // And names nothing that is gone.
    let names: BTreeSet<String> = modules.iter().map(SourceModule::name).collect();
    for line in rules.keys() {
        let exists = names.iter().any(|n| n == line || is_ancestor(line, n));
        if !exists {
            violations.push(format!(
                "ARCHITECTURE.md's boundaries block has a line for `{line}`, which is no module"
            ));
        }
    }
    violations.sort();
    violations.dedup();
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

/// The part of a top-level module a module is in: its first two segments
/// (`analysis::interp` for `analysis::interp::call`).
fn part(name: &str) -> String {
    name.split("::").take(2).collect::<Vec<_>>().join("::")
}

#[test]
fn no_import_cycle_between_modules() {
    let (modules, edges) = module_graph();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, targets) in modules.iter().zip(&edges) {
        let name = m.name();
        let entry = graph.entry(name.clone()).or_default();
        for (krate, bin, module) in targets {
            let target = name_of(*krate, bin, module);
            // A module may use what its ancestors below the crate root define (and
            // re-export); an edge to the root itself counts like any other.
            if !module.is_empty() && is_ancestor(&target, &name) {
                continue;
            }
            entry.insert(target);
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
    for module in graph.keys() {
        visit(module, &graph, &mut Vec::new(), &mut done, &mut cycles);
    }
    assert!(cycles.is_empty(), "import circles:\n{}", cycles.join("\n"));
}

#[test]
fn no_rule_code_outside_the_registry() {
    let mut found = Vec::new();
    for m in source_modules() {
        if m.krate == Crate::Lib && m.module.first().is_some_and(|t| t == "lints") {
            continue;
        }
        for (line, literal) in &m.code.strings {
            let bytes = literal.as_bytes();
            // A code quoted in backticks is an example of what a user writes
            // (`noqa: SL001`), not a rule's identity.
            let code = (0..bytes.len()).find(|&i| {
                bytes[..i].iter().filter(|&&b| b == b'`').count() % 2 == 0
                    && bytes[i..].starts_with(b"SL")
                    && bytes.len() >= i + 5
                    && bytes[i + 2..i + 5].iter().all(u8::is_ascii_digit)
                    && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric())
                    && bytes.get(i + 5).is_none_or(|b| !b.is_ascii_alphanumeric())
            });
            if let Some(i) = code {
                found.push(format!(
                    "{}:{line}: `{}` (a rule's identity and what its findings claim live in `src/lints/mod.rs`)",
                    m.display(),
                    &literal[i..i + 5]
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "rule codes outside src/lints/:\n{}",
        found.join("\n")
    );
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
        "use crate::a::b::{C, d};\nlet x = crate::e::f(1);\nuse crate::{g, h::{i, self}, j as k};\nfn mycrate() {}\nuse other::crate::z;",
        "crate",
    );
    let flat: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
    assert_eq!(flat, ["a::b::C", "a::b::d", "e::f", "g", "h::i", "h", "j"]);
}

#[test]
fn the_reader_skips_comments_and_test_items_by_their_braces() {
    let dir = std::env::temp_dir().join(format!("stridelint-tidy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.rs");
    std::fs::write(
        &path,
        "use crate::a; // crate::b\n/* crate::c /* nested */ crate::d */\n\
         #[cfg(test)]\nmod tests {\n    fn f() { let c = '}'; let s = \"}\"; crate::e(); }\n}\n\
         #[cfg(test)] mod helpers;\n#[cfg(test)]\n#[allow(dead_code)]\nfn g() { crate::f(); }\n\
         fn h() { let s = r#\"\"}\"# ; crate::g(\"SL001\"); }\n",
    )
    .unwrap();
    let code = read_code(&path);
    std::fs::remove_dir_all(&dir).unwrap();
    let flat: Vec<String> = paths_after(&code.text, "crate")
        .iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(flat, ["a", "g"]);
    assert_eq!(code.test_module_files, ["helpers"]);
    let strings: Vec<&str> = code.strings.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(strings, ["\"}", "SL001"]);
}

/// The integration tests are one binary, `tests/it/` (and `tests/wheel/`, whose maturin
/// build relinks the stridelint binary and so must not run beside the others): a file or
/// another directory with a `main.rs` directly under `tests/` would be a test binary of
/// its own, linked on every run, and a file of `tests/it/` that `main.rs` does not declare
/// would never run.
#[test]
fn the_integration_tests_are_one_binary_that_declares_every_file() {
    let tests = Path::new(REPO).join("tests");
    let binaries: Vec<PathBuf> = std::fs::read_dir(&tests)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "rs")
                || (p.join("main.rs").is_file() && !p.ends_with("it") && !p.ends_with("wheel"))
        })
        .collect();
    assert!(
        binaries.is_empty(),
        "test binaries besides tests/it/ and tests/wheel/: {binaries:?}; make each a module of tests/it/main.rs"
    );
    let main = std::fs::read_to_string(tests.join("it/main.rs")).unwrap();
    let declared: BTreeSet<&str> = main
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .collect();
    let mut undeclared = Vec::new();
    for entry in std::fs::read_dir(tests.join("it")).unwrap() {
        let path = entry.unwrap().path();
        let name = match path.extension() {
            Some(e) if e == "rs" => path.file_stem().unwrap().to_str().unwrap().to_string(),
            _ if path.join("mod.rs").is_file() => {
                path.file_name().unwrap().to_str().unwrap().to_string()
            }
            _ => continue,
        };
        if name != "main" && !declared.contains(name.as_str()) {
            undeclared.push(name);
        }
    }
    assert!(
        undeclared.is_empty(),
        "tests/it/main.rs declares no `mod` for {undeclared:?}"
    );
}

/// Production functions of `analysis/`, `main.rs` and `lib.rs` fit in 100 lines (issue 34):
/// from a `fn` line to the `}` at its indentation, in rustfmt's layout, test modules (from a
/// column-0 `#[cfg(test)]` on) and `analysis/tests/` left out.
#[test]
fn no_production_function_over_100_lines() {
    const MAX_LINES: usize = 100;
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![src.join("main.rs"), src.join("lib.rs")];
    let mut dirs = vec![src.join("analysis")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() && !path.ends_with("tests") {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    let mut long = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().take_while(|l| *l != "#[cfg(test)]").collect();
        for (i, line) in lines.iter().enumerate() {
            let code = line.trim_start();
            let indent = &line[..line.len() - code.len()];
            let signature = code
                .trim_start_matches("pub ")
                .trim_start_matches("pub(crate) ");
            let signature = signature.trim_start_matches("pub(super) ");
            if !signature.starts_with("fn ") {
                continue;
            }
            let close = format!("{indent}}}");
            let Some(end) = lines[i + 1..].iter().position(|l| *l == close) else {
                continue;
            };
            if end + 2 > MAX_LINES {
                long.push(format!("{}:{} ({} lines)", file.display(), i + 1, end + 2));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}
