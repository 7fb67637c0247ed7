//! Definitions from other files of the tree: a call of an imported name
//! (`from .layers import Mlp`, `from models.attention import Block`) runs the definition
//! found in the file the import names, with the caller's argument values, like a call of a
//! function of the same file.
//!
//! The analysis does not read or parse files: the composition root hands it a
//! [`ForeignDefs`] (`crate::project::ProjectIndex`) that resolves absolute dotted names to
//! parsed modules. A foreign module's spans are shifted past [`FOREIGN_BASE`] (each module
//! has its own range), so a span tells which file it is in without a file field on every
//! node. Nothing recorded in foreign code is reported in the importing file: its events are
//! dropped and a value that comes back keeps one step for the call (see
//! [`collapse_foreign_steps`]).

use std::path::Path;
use std::sync::Arc;

use crate::ir::{self, Function, Span};

use super::value::{Basis, CallContext, Step, TensorAlt, TensorVal, Value};

/// Spans at or past this offset are in a foreign module.
pub const FOREIGN_BASE: u32 = ir::OTHER_FILE_SPANS;

/// Is `span` in a foreign module?
pub fn is_foreign(span: Span) -> bool {
    span.in_other_file()
}

/// A parsed file of the tree other than the one being analysed.
#[derive(Debug)]
pub struct ForeignModule {
    /// Its dotted module name (`timm.layers.mlp`).
    pub name: String,
    /// An `__init__.py`: relative imports start from the module itself.
    pub is_package: bool,
    pub path: Arc<Path>,
    /// The offset its spans start at (past [`FOREIGN_BASE`]).
    pub base: u32,
    pub text: Arc<str>,
    /// The module, spans shifted by `base`.
    pub module: ir::Module,
    /// blake3 of its bytes: a cached result of a file that used it is stale when it changes.
    pub hash: String,
}

impl ForeignModule {
    pub fn contains(&self, span: Span) -> bool {
        span.start >= self.base && ((span.start - self.base) as usize) <= self.text.len()
    }

    /// The text of a span of this module.
    pub fn text_of(&self, span: Span) -> &str {
        let start = (span.start.saturating_sub(self.base)) as usize;
        let end = (span.end.saturating_sub(self.base)) as usize;
        self.text.get(start..end).unwrap_or("")
    }
}

/// The text the analysis reads names and spellings from: the analysed file's, or for a
/// foreign span the module it is in.
#[derive(Clone, Copy)]
pub struct SourceText<'a> {
    pub own: &'a str,
    pub foreign: &'a [Arc<ForeignModule>],
}

impl<'a> SourceText<'a> {
    /// The text from byte `start` to `end` (empty when out of range).
    pub fn get(&self, start: u32, end: u32) -> Option<&'a str> {
        if start < FOREIGN_BASE {
            return self.own.get(start as usize..end as usize);
        }
        let span = Span { start, end };
        let m = self.foreign.iter().find(|m| m.contains(span))?;
        let (s, e) = (
            (start - m.base) as usize,
            (end.saturating_sub(m.base)) as usize,
        );
        m.text.get(s..e)
    }

    pub fn text(&self, span: Span) -> &'a str {
        self.get(span.start, span.end).unwrap_or("")
    }
}

/// What an absolute dotted name is defined as in a foreign module.
#[derive(Debug, Clone)]
pub enum ForeignItem {
    Function(Arc<Function>),
    Class(Arc<ir::Class>),
}

/// What a dotted name of another file is, known without keeping that file's module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForeignKind {
    /// A class with a `forward` (or `__call__`), itself or through a base of its module.
    Layer,
    /// A function; whether its text names an op that rearranges a tensor
    /// ([`rearranges_tensors`]).
    Function { rearranges: bool },
}

/// Resolves names to definitions in other files (see the module docs).
pub trait ForeignDefs: Sync {
    /// What the absolute dotted name `path` (`timm.layers.Mlp`) is, following re-exports
    /// (`from .mlp import Mlp` in a package's `__init__.py`): a layer class or a function;
    /// `None` for anything else (other classes are not followed).
    fn kind(&self, root: &Path, path: &str) -> Option<ForeignKind>;
    /// The definition itself, with its module.
    fn resolve(&self, root: &Path, path: &str) -> Option<(Arc<ForeignModule>, ForeignItem)>;
}

/// The file being analysed, as the tree's imports see it.
#[derive(Clone, Copy)]
pub struct Project<'a> {
    pub defs: &'a dyn ForeignDefs,
    /// Its dotted module name (`timm.models.mobilevit`), when it is in a package root.
    pub module_name: &'a str,
    pub is_package: bool,
    /// The directory absolute imports start from (the first ancestor without an
    /// `__init__.py`).
    pub root: &'a Path,
}

/// The absolute form of an import path written in module `module` (`..layers.Mlp` in
/// `timm.models.vit` is `timm.layers.Mlp`); `None` when the dots climb past the root.
pub fn absolute_import(module: &str, is_package: bool, path: &str) -> Option<String> {
    let dots = path.chars().take_while(|&c| c == '.').count();
    if dots == 0 {
        return Some(path.to_string());
    }
    let mut parts: Vec<&str> = if module.is_empty() {
        Vec::new()
    } else {
        module.split('.').collect()
    };
    // One dot is the module's package: the module itself for an `__init__.py`.
    let climb = if is_package { dots - 1 } else { dots };
    if climb > parts.len() {
        return None;
    }
    parts.truncate(parts.len() - climb);
    let rest = &path[dots..];
    if !rest.is_empty() {
        parts.push(rest);
    }
    (!parts.is_empty()).then(|| parts.join("."))
}

/// What a helper of another file must name to be followed when it is called with a
/// tensor (outside a constructor): an op that makes or undoes a strided view (a view, a
/// permutation, a split, a broadcast). Helpers that name none of them (masks, sampling,
/// padding, logging, checks) return values that findings rarely rest on, and following
/// every helper given a tensor cost a third more analysis time on the corpus.
const REARRANGING: &[&str] = &[
    ".view(",
    ".reshape(",
    ".transpose(",
    ".permute(",
    ".flatten(",
    ".unflatten(",
    "rearrange(",
    ".movedim(",
    ".swapaxes(",
    ".split(",
    ".chunk(",
    ".unbind(",
    ".t()",
    ".mT",
    ".narrow(",
    ".unfold(",
];

/// Does the text of a function name an op that rearranges a tensor (see [`REARRANGING`])?
pub fn rearranges_tensors(text: &str) -> bool {
    REARRANGING.iter().any(|t| text.contains(t))
}

/// A value coming back from a foreign call into `caller`'s code: each tensor's steps taken
/// in the foreign module become one step at the call (`` `Mlp(…)` in timm/layers/mlp.py ``),
/// after the steps the caller's own code took; what the layout rests on is kept (a tensor
/// the foreign code wrote anew is new at the call).
pub fn collapse_foreign_steps(
    v: Value,
    call_span: Span,
    what: &str,
    context: &Option<Arc<CallContext>>,
) -> Value {
    match v {
        Value::Tensor(TensorVal::Alts(alts)) => Value::Tensor(TensorVal::Alts(
            alts.into_iter()
                .map(|alt| collapse_alt(alt, call_span, what, context))
                .collect(),
        )),
        Value::Tuple(items) => Value::Tuple(
            items
                .into_iter()
                .map(|i| collapse_foreign_steps(i, call_span, what, context))
                .collect(),
        ),
        other => other,
    }
}

fn collapse_alt(
    mut alt: TensorAlt,
    call_span: Span,
    what: &str,
    context: &Option<Arc<CallContext>>,
) -> TensorAlt {
    let Some(head) = alt.chain.clone() else {
        return alt;
    };
    if !is_foreign(head.span) && head.context.as_ref().is_none_or(|c| !in_foreign(c)) {
        return alt;
    }
    // The caller's own history: the first step that ran in its code.
    let mut prev = head.prev.clone();
    while let Some(p) = prev.clone() {
        if !is_foreign(p.span) && p.context.as_ref().is_none_or(|c| !in_foreign(c)) {
            break;
        }
        prev = p.prev.clone();
    }
    let basis = match head.basis {
        Basis::NewTensor(s) if is_foreign(s) => Basis::NewTensor(call_span),
        b => b,
    };
    alt.chain = Some(Arc::new(Step {
        span: call_span,
        what: what.to_string(),
        layout: head.layout.clone(),
        prev,
        basis,
        context: context.clone(),
    }));
    alt
}

/// Did the call that leads to `c` (or one of its parents) happen in a foreign module?
pub fn in_foreign(c: &CallContext) -> bool {
    is_foreign(c.call_span) || c.parent.as_deref().is_some_and(in_foreign)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_imports_climb_from_the_package() {
        let abs = |m, p, path| absolute_import(m, p, path);
        assert_eq!(
            abs("timm.models.vit", false, "..layers.Mlp").as_deref(),
            Some("timm.layers.Mlp")
        );
        assert_eq!(
            abs("timm.layers", true, ".mlp.Mlp").as_deref(),
            Some("timm.layers.mlp.Mlp")
        );
        assert_eq!(abs("a.b", false, ".c").as_deref(), Some("a.c"));
        assert_eq!(abs("a", false, "..c"), None);
        assert_eq!(abs("m", false, "torch.nn").as_deref(), Some("torch.nn"));
    }

    #[test]
    fn foreign_spans_are_past_the_base() {
        assert!(!is_foreign(Span::new(0, 10)));
        assert!(is_foreign(Span {
            start: FOREIGN_BASE + 3,
            end: FOREIGN_BASE + 9
        }));
    }
}
