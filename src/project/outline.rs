//! A module's outline: its top-level definitions and imports, read line by line without
//! parsing. Resolving a name (`transformers.utils.logging`) goes through many modules
//! whose definitions are then never followed; parsing each of them cost more than the
//! rest of the feature. The outline may be wrong on odd layouts (a `def` at column 0 inside
//! a string): that only makes a name resolve where the parsed module then has no such
//! definition (nothing is followed), or not resolve (nothing is followed either).

use crate::analysis::foreign::rearranges_tensors;

/// What a top-level name of a module is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Def {
    /// `returns`: some `return` in it gives a value (a function that gives none cannot hand
    /// a layout back: `requires_backends(self, ["torch"])`).
    Function { rearranges: bool, returns: bool },
    Class {
        bases: Vec<String>,
        has_forward: bool,
    },
}

#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outline {
    /// Definitions, in source order (the last one of a name is the one bound).
    pub defs: Vec<(String, Def)>,
    /// Names bound by imports: (bound name, import path as written, dots kept), and
    /// `A = B` aliases as (A, B) with `alias` set.
    pub imports: Vec<Import>,
    /// blake3 of the text it was read from (set by the reader).
    pub hash: std::sync::Arc<str>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    pub name: String,
    pub target: String,
    /// `name = target` of a name of the same module.
    pub alias: bool,
}

impl Outline {
    pub fn def(&self, name: &str) -> Option<&Def> {
        self.defs
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, d)| d)
    }

    pub fn import(&self, name: &str) -> Option<&Import> {
        self.imports.iter().rev().find(|i| i.name == name)
    }

    /// Is the class `name` a layer: a `forward`/`__call__` of its own or of a base of this
    /// module?
    pub fn is_layer(&self, name: &str, depth: usize) -> bool {
        match self.def(name) {
            Some(Def::Class { bases, has_forward }) => {
                *has_forward || (depth < 8 && bases.iter().any(|b| self.is_layer(b, depth + 1)))
            }
            _ => false,
        }
    }
}

/// What kind of top-level block a line is in.
#[derive(PartialEq)]
enum Block {
    /// A `def` or `class`: its indented lines are its own.
    Definition,
    /// `if`/`try`/`with`/…: imports in it count (`try: from .x import y`).
    Compound,
    None,
}

/// The outline of a module's text.
pub fn outline(text: &str) -> Outline {
    let mut out = Outline::default();
    let lines: Vec<&str> = text.lines().collect();
    let mut block = Block::None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        let indented = trimmed.len() < line.len();
        i += 1;
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if indented {
            if block == Block::Compound {
                i = import_statement(trimmed, &lines, i, &mut out);
            }
            continue;
        }
        block = Block::None;
        if let Some(rest) = trimmed
            .strip_prefix("def ")
            .or_else(|| trimmed.strip_prefix("async def "))
        {
            block = Block::Definition;
            let end = block_end(&lines, i);
            let body = lines[i - 1..end].join("\n");
            let returns = lines[i..end].iter().any(|l| {
                let t = l.trim_start();
                t.strip_prefix("return").is_some_and(|r| {
                    let r = r.trim();
                    !r.is_empty() && r != "None" && !r.starts_with('#')
                }) || t.starts_with("yield")
            });
            out.defs.push((
                ident(rest),
                Def::Function {
                    rearranges: rearranges_tensors(&body),
                    returns,
                },
            ));
        } else if let Some(rest) = trimmed.strip_prefix("class ") {
            block = Block::Definition;
            let name = ident(rest);
            let bases = rest[name.len()..]
                .trim_start()
                .strip_prefix('(')
                .and_then(|b| b.split(')').next())
                .map(|b| {
                    b.split(',')
                        .map(str::trim)
                        .filter(|b| !b.is_empty() && !b.contains('='))
                        .map(|b| b.rsplit('.').next().unwrap_or(b).to_string())
                        .collect()
                })
                .unwrap_or_default();
            let end = block_end(&lines, i);
            let has_forward = lines[i..end].iter().any(|l| {
                let t = l.trim_start();
                let t = t.strip_prefix("async ").unwrap_or(t);
                t.starts_with("def forward(") || t.starts_with("def __call__(")
            });
            out.defs.push((name, Def::Class { bases, has_forward }));
        } else if trimmed.starts_with("from ") || trimmed.starts_with("import ") {
            i = import_statement(trimmed, &lines, i, &mut out);
        } else if trimmed.ends_with(':') {
            block = Block::Compound;
        } else if let Some((lhs, rhs)) = trimmed.split_once('=') {
            let (lhs, rhs) = (lhs.trim(), rhs.trim());
            if is_ident(lhs) && is_ident(rhs) && lhs != rhs {
                out.imports.push(Import {
                    name: lhs.to_string(),
                    target: rhs.to_string(),
                    alias: true,
                });
            }
        }
    }
    out
}

/// Record an `import`/`from … import …` statement starting at `first` (its continuation
/// lines follow `next`); returns the index of the line after it.
fn import_statement(first: &str, lines: &[&str], mut next: usize, out: &mut Outline) -> usize {
    let mut text = strip_comment(first).to_string();
    // A parenthesised name list runs over several lines.
    if text.contains('(') {
        while !text.contains(')') && next < lines.len() {
            text.push(' ');
            text.push_str(strip_comment(lines[next]));
            next += 1;
        }
    }
    while text.ends_with('\\') && next < lines.len() {
        text.pop();
        text.push(' ');
        text.push_str(strip_comment(lines[next]));
        next += 1;
    }
    if let Some(rest) = text.strip_prefix("from ") {
        let Some((module, names)) = rest.split_once(" import ") else {
            return next;
        };
        let module = module.trim();
        let names = names.replace(['(', ')'], " ");
        for item in names.split(',') {
            let mut parts = item.split_whitespace();
            let Some(name) = parts.next() else { continue };
            if name == "*" {
                continue;
            }
            let bound = match (parts.next(), parts.next()) {
                (Some("as"), Some(alias)) => alias,
                _ => name,
            };
            let sep = if module.ends_with('.') { "" } else { "." };
            out.imports.push(Import {
                name: bound.to_string(),
                target: format!("{module}{sep}{name}"),
                alias: false,
            });
        }
    } else if let Some(rest) = text.strip_prefix("import ") {
        for item in rest.split(',') {
            let mut parts = item.split_whitespace();
            let Some(module) = parts.next() else { continue };
            let (name, target) = match (parts.next(), parts.next()) {
                (Some("as"), Some(alias)) => (alias.to_string(), module.to_string()),
                _ => {
                    let first = module.split('.').next().unwrap_or(module);
                    (first.to_string(), first.to_string())
                }
            };
            out.imports.push(Import {
                name,
                target,
                alias: false,
            });
        }
    }
    next
}

/// The line after the indented block that follows line `start - 1`.
fn block_end(lines: &[&str], start: usize) -> usize {
    let mut end = start;
    while end < lines.len() {
        let l = lines[end];
        let t = l.trim_start();
        if !t.is_empty() && t.len() == l.len() && !t.starts_with('#') && !t.starts_with(')') {
            break;
        }
        end += 1;
    }
    end
}

fn strip_comment(line: &str) -> &str {
    line.split('#').next().unwrap_or(line).trim()
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outline_lists_definitions_imports_and_aliases() {
        let o = outline(
            "from .mlp import Mlp, GluMlp as Glu\n\
             from ..helpers import (\n    to_2tuple,  # pairs\n    make_divisible,\n)\n\
             import torch.nn as nn\n\
             try:\n    from .norm import LayerNorm2d\nexcept ImportError:\n    pass\n\
             \n\
             def split(x, h):\n    \"\"\"doc\"\"\"\n    return x.view(2, h, -1)\n\
             \n\
             @register\n\
             class Block(Base):\n    def __init__(self):\n        from .x import y\n\n    def forward(self, x):\n        return x\n\
             class Base(nn.Module):\n    pass\n\
             ConvBlock = Block\n",
        );
        assert_eq!(
            o.import("Glu").map(|i| i.target.as_str()),
            Some(".mlp.GluMlp")
        );
        assert_eq!(
            o.import("make_divisible").map(|i| i.target.as_str()),
            Some("..helpers.make_divisible")
        );
        assert_eq!(o.import("nn").map(|i| i.target.as_str()), Some("torch.nn"));
        assert_eq!(
            o.import("LayerNorm2d").map(|i| i.target.as_str()),
            Some(".norm.LayerNorm2d")
        );
        // An import inside a method is the method's.
        assert!(o.import("y").is_none());
        assert_eq!(
            o.def("split"),
            Some(&Def::Function {
                rearranges: true,
                returns: true
            })
        );
        let checks = outline("def requires(obj, backends):\n    if not ok:\n        raise ImportError(obj)\n    return\n");
        assert_eq!(
            checks.def("requires"),
            Some(&Def::Function {
                rearranges: false,
                returns: false
            })
        );
        assert!(o.is_layer("Block", 0));
        assert!(!o.is_layer("Base", 0));
        let alias = o.import("ConvBlock").unwrap();
        assert!(alias.alias && alias.target == "Block");
    }
}
