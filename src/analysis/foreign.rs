//! Definitions from other files of the tree: a call of an imported name
//! (`from .layers import Mlp`, `from models.attention import Block`) runs the definition
//! found in the file the import names, with the caller's argument values, like a call of a
//! function of the same file.
//!
//! The analysis does not read or parse files: the composition root hands it a
//! [`ForeignDefs`] (`crate::project::ProjectIndex`) that resolves absolute dotted names to
//! parsed modules. A foreign module's spans are shifted past [`ir::OTHER_FILE_SPANS`] (each module
//! has its own range), so a span tells which file it is in without a file field on every
//! node. Nothing recorded in foreign code is reported in the importing file: its events are
//! dropped and a value that comes back keeps one step for the call (see
//! [`collapse_foreign_steps`]).

use std::path::Path;
use std::sync::Arc;

use crate::ir::{self, Function, Span};

use super::value::{Basis, CallContext, Step, TensorAlt, TensorVal, Value};

/// A parsed file of the tree other than the one being analysed.
#[derive(Debug)]
pub struct ForeignModule {
    /// Its dotted module name (`timm.layers.mlp`).
    pub name: String,
    /// An `__init__.py`: relative imports start from the module itself.
    pub is_package: bool,
    pub path: Arc<Path>,
    /// The offset its spans start at (past [`ir::OTHER_FILE_SPANS`]).
    pub base: u32,
    pub text: Arc<str>,
    /// The module, spans shifted by `base`.
    pub module: ir::Module,
    /// Its classes, nested ones included (what `ClassTable::build` takes).
    pub classes: Vec<Arc<ir::Class>>,
    /// The statements of its top level that bind names (see [`binding_statements`]): what
    /// an analysis that loads the module runs.
    pub top_level: Vec<ir::Stmt>,
    /// blake3 of its bytes: a cached result of a file that used it is stale when it changes.
    pub hash: String,
}

impl ForeignModule {
    /// A module of `text` whose spans were shifted by `base`.
    pub fn new(
        name: String,
        is_package: bool,
        path: Arc<Path>,
        base: u32,
        text: Arc<str>,
        module: ir::Module,
        hash: String,
    ) -> ForeignModule {
        let classes = super::all_classes(&module);
        let top_level = binding_statements(&super::module_body_without_defs(&module.body), 0);
        ForeignModule {
            name,
            is_package,
            path,
            base,
            text,
            module,
            classes,
            top_level,
            hash,
        }
    }

    pub fn contains(&self, span: Span) -> bool {
        span.start >= self.base && ((span.start - self.base) as usize) <= self.text.len()
    }

    /// The text from byte `start` to `end` of this module's span range.
    fn get(&self, start: u32, end: u32) -> Option<&str> {
        let start = start.checked_sub(self.base)? as usize;
        let end = end.checked_sub(self.base)? as usize;
        self.text.get(start..end)
    }

    /// The text of a span of this module.
    pub fn text_of(&self, span: Span) -> &str {
        self.get(span.start, span.end).unwrap_or("")
    }
}

/// The statements of a module's top level that bind names (imports, assignments), with the
/// `if`/`try` blocks that hold such statements. A loaded module runs only these: no call is
/// followed there anyway, and the rest (registrations, checks) binds nothing used.
pub fn binding_statements(body: &[ir::Stmt], depth: usize) -> Vec<ir::Stmt> {
    use ir::Stmt;
    let mut out = Vec::new();
    for s in body {
        match s {
            Stmt::Import { .. } | Stmt::Assign { .. } => out.push(s.clone()),
            Stmt::If {
                test,
                body,
                orelse,
                span,
            } if depth < 4 => out.push(Stmt::If {
                test: test.clone(),
                body: binding_statements(body, depth + 1),
                orelse: binding_statements(orelse, depth + 1),
                span: *span,
            }),
            Stmt::Try(t) if depth < 4 => out.push(Stmt::Try(Box::new(ir::Try {
                body: binding_statements(&t.body, depth + 1),
                handlers: t
                    .handlers
                    .iter()
                    .map(|h| binding_statements(h, depth + 1))
                    .collect(),
                orelse: binding_statements(&t.orelse, depth + 1),
                finalbody: binding_statements(&t.finalbody, depth + 1),
                span: t.span,
            }))),
            _ => {}
        }
    }
    out
}

/// The text the analysis reads names and spellings from: the analysed file's, or for a
/// foreign span the module it is in.
#[derive(Clone, Copy)]
pub struct SourceText<'a> {
    pub own: &'a str,
    pub foreign: &'a [Arc<ForeignModule>],
}

impl<'a> SourceText<'a> {
    /// The text from byte `start` to `end` (`None` when out of range).
    pub fn get(&self, start: u32, end: u32) -> Option<&'a str> {
        if start < ir::OTHER_FILE_SPANS {
            return self.own.get(start as usize..end as usize);
        }
        let span = Span { start, end };
        self.foreign
            .iter()
            .find(|m| m.contains(span))?
            .get(start, end)
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForeignKind {
    /// A class with a `forward` (or `__call__`), itself or through a base of its module.
    Layer,
    /// A function that returns a value; whether its text names an op that rearranges a
    /// tensor ([`rearranges_tensors`]).
    Function { rearranges: bool },
}

/// The answer of [`ForeignDefs::kind`].
#[derive(Debug, Clone)]
pub struct Lookup {
    /// `None`: nothing to follow (not in the tree, a class that is not a layer, a function
    /// that returns no value).
    pub kind: Option<ForeignKind>,
    /// The files read to know it, with the blake3 of their bytes: a result that rests on
    /// the answer is stale when one of them changes.
    pub files: Arc<[(Arc<Path>, Arc<str>)]>,
}

/// Resolves names to definitions in other files (see the module docs).
pub trait ForeignDefs: Sync {
    /// What the absolute dotted name `path` (`timm.layers.Mlp`) is, following re-exports
    /// (`from .mlp import Mlp` in a package's `__init__.py`): a layer class or a function;
    /// nothing for anything else (other classes are not followed).
    fn kind(&self, root: &Path, path: &str) -> Lookup;
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
/// permutation, a split). Helpers that name none of them (masks, sampling, padding,
/// logging, checks) return values that findings rarely rest on: on the corpus, following
/// every helper given a tensor ran 15 002 foreign calls (0.79 s of analysis), this list
/// 7 365 (0.35 s).
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
/// in the foreign module become one step at the call (`` `Mlp.forward` (timm.layers.mlp) ``),
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
    if ran_here(&head) {
        return alt;
    }
    // The caller's own history: the first step that ran in its code.
    let mut prev = head.prev.clone();
    while let Some(p) = prev.clone() {
        if ran_here(&p) {
            break;
        }
        prev = p.prev.clone();
    }
    let basis = match head.basis {
        Basis::NewTensor(s) if s.in_other_file() => Basis::NewTensor(call_span),
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

/// Did a step run in the analysed file's own code (not in a foreign module, not in a call
/// made from one)?
fn ran_here(step: &Step) -> bool {
    !step.span.in_other_file() && step.context.as_deref().is_none_or(|c| !in_foreign(c))
}

/// Did the call that leads to `c` (or one of its parents) happen in a foreign module?
pub fn in_foreign(c: &CallContext) -> bool {
    c.call_span.in_other_file() || c.parent.as_deref().is_some_and(in_foreign)
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
    fn each_span_reads_the_text_of_its_own_file() {
        let empty = || ir::Module {
            language: ir::Language::Python,
            body: Vec::new(),
            functions: Vec::new(),
            classes: Vec::new(),
        };
        let base = ir::OTHER_FILE_SPANS + 100;
        let layers = Arc::new(ForeignModule::new(
            "pkg.layers".into(),
            false,
            Arc::from(Path::new("pkg/layers.py")),
            base,
            Arc::from("def split(x):\n"),
            empty(),
            String::new(),
        ));
        let foreign = [layers];
        let text = SourceText {
            own: "y = split(x)\n",
            foreign: &foreign,
        };
        assert_eq!(text.text(Span::new(4, 9)), "split");
        assert_eq!(
            text.text(Span {
                start: base + 4,
                end: base + 9
            }),
            "split"
        );
        // A span of no loaded module, or past its text, reads nothing.
        assert_eq!(
            text.text(Span {
                start: base - 50,
                end: base - 40
            }),
            ""
        );
        assert_eq!(text.get(base + 4, base + 99), None);
    }
}
