//! The tree around a linted file, for calls across files: which module a file is
//! (`timm/models/vit.py` under a directory without `__init__.py` is `timm.models.vit`), and
//! what an absolute dotted name is defined as (`timm.layers.Mlp` → the class `Mlp` of
//! `timm/layers/mlp.py`, through the `from .mlp import Mlp` of `timm/layers/__init__.py`).
//!
//! One index serves a whole run, shared by the threads. Names resolve through module
//! outlines (`outline.rs`: read once per file, never parsed); a module is parsed only when
//! one of its definitions is followed, on first use, and kept within [`KEPT_SOURCE_BYTES`]
//! (one dropped is parsed again if needed). Resolution is bounded: a few re-exports deep,
//! files up to [`MAX_FOREIGN_BYTES`]. Python only.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use rustc_hash::FxHashMap as HashMap;

use crate::analysis::foreign::{
    ForeignDefs, ForeignItem, ForeignKind, ForeignModule, Lookup, Project,
};
use crate::ir;

mod outline;

use outline::{Def, Outline};

/// Files larger than this are not read for their definitions.
pub const MAX_FOREIGN_BYTES: u64 = 2 * 1024 * 1024;
/// Re-exports followed at most (`__init__.py` → `mlp.py` is one).
const MAX_REEXPORTS: usize = 6;

/// Source bytes of parsed modules the index keeps at most (their IR is about ten times
/// larger); beyond it, the modules used least recently are dropped and parsed again when
/// needed. An analysis keeps the modules it loaded until its file is done.
const KEPT_SOURCE_BYTES: usize = 4 * 1024 * 1024;

/// A file a resolution read, with the blake3 of its bytes then.
type Dep = (Arc<Path>, Arc<str>);

/// What a dotted name resolved to, and the files read to know it (a cached result that
/// rests on the answer is stale when one of them changes, also when the answer was "not
/// in the tree").
#[derive(Clone)]
struct Resolution {
    found: Option<Arc<Found>>,
    files: Arc<[Dep]>,
}

/// Where a resolution ended: a file and the name of a top-level definition in it (the
/// module itself may have been dropped and parsed again since).
#[derive(Clone)]
struct Found {
    file: PathBuf,
    module: String,
    is_package: bool,
    name: String,
    /// `None`: a class that is not a layer (not followed).
    kind: Option<ForeignKind>,
}

/// One file's outline, read once.
type OutlineCell = Arc<OnceLock<Option<Arc<Outline>>>>;

/// One file's parsed module, parsed once while kept.
struct Slot {
    module: Arc<OnceLock<Option<Arc<ForeignModule>>>>,
    bytes: usize,
    last_used: u64,
}

/// The modules of the tree, parsed on demand (see the module docs).
pub struct ProjectIndex {
    /// The parsed modules kept (see [`KEPT_SOURCE_BYTES`]).
    modules: Mutex<HashMap<PathBuf, Slot>>,
    /// Resolutions by root, then dotted name.
    resolved: Mutex<HashMap<PathBuf, HashMap<String, Resolution>>>,
    /// The outline of each module file asked about (`None`: unreadable).
    outlines: Mutex<HashMap<PathBuf, OutlineCell>>,
    /// The directories asked about, listed.
    directories: Mutex<HashMap<PathBuf, Arc<Entries>>>,
    /// Where the next module's spans start.
    next_base: AtomicU32,
    /// A clock for "least recently used".
    uses: AtomicU64,
}

impl Default for ProjectIndex {
    fn default() -> Self {
        ProjectIndex {
            modules: Default::default(),
            resolved: Default::default(),
            outlines: Default::default(),
            directories: Default::default(),
            next_base: AtomicU32::new(ir::OTHER_FILE_SPANS),
            uses: AtomicU64::new(0),
        }
    }
}

/// Which module a file is: the directory its imports are resolved from (the first
/// ancestor without an `__init__.py`) and its dotted name there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModulePlace {
    pub root: PathBuf,
    pub name: String,
    pub is_package: bool,
}

impl ProjectIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// The place of the Python file `path` in its tree (`None` for other files).
    pub fn place_of(&self, path: &Path) -> Option<ModulePlace> {
        if path.extension().is_none_or(|e| e != "py") {
            return None;
        }
        let path = std::path::absolute(path).ok()?;
        let stem = path.file_stem()?.to_str()?.to_string();
        let is_package = stem == "__init__";
        let mut parts = if is_package { Vec::new() } else { vec![stem] };
        let mut dir = path.parent()?.to_path_buf();
        while self.is_package_dir(&dir) {
            parts.push(dir.file_name()?.to_str()?.to_string());
            match dir.parent() {
                Some(p) => dir = p.to_path_buf(),
                None => break,
            }
        }
        parts.reverse();
        Some(ModulePlace {
            root: dir,
            name: parts.join("."),
            is_package,
        })
    }

    /// The [`Project`] the analysis of a file at `place` sees.
    pub fn project<'a>(&'a self, place: &'a ModulePlace) -> Project<'a> {
        Project {
            defs: self,
            module_name: &place.name,
            is_package: place.is_package,
            root: &place.root,
        }
    }

    fn is_package_dir(&self, dir: &Path) -> bool {
        self.entries(dir).files.contains("__init__.py")
    }

    /// What a directory holds, listed once per run: resolving names asks about the same
    /// few directories thousands of times (a `stat` per question cost more than the rest
    /// of resolution).
    fn entries(&self, dir: &Path) -> Arc<Entries> {
        if let Some(e) = lock(&self.directories).get(dir) {
            return e.clone();
        }
        let mut entries = Entries::default();
        if let Ok(list) = std::fs::read_dir(dir) {
            for entry in list.flatten() {
                let Ok(name) = entry.file_name().into_string() else {
                    continue;
                };
                match entry.file_type() {
                    Ok(t) if t.is_dir() => {
                        entries.dirs.insert(name);
                    }
                    Ok(t) if t.is_file() && name.ends_with(".py") => {
                        entries.files.insert(name);
                    }
                    _ => {}
                }
            }
        }
        let entries = Arc::new(entries);
        lock(&self.directories).insert(dir.to_path_buf(), entries.clone());
        entries
    }

    /// The file of the module `parts` under `root` (`a/b.py` or `a/b/__init__.py`).
    fn module_file(&self, root: &Path, parts: &[&str]) -> Option<PathBuf> {
        let mut dir = root.to_path_buf();
        for p in &parts[..parts.len() - 1] {
            dir.push(p);
        }
        let last = parts.last()?;
        let here = self.entries(&dir);
        let file = format!("{last}.py");
        if here.files.contains(&file) {
            return Some(dir.join(file));
        }
        let package = dir.join(last);
        (here.dirs.contains(*last) && self.is_package_dir(&package))
            .then(|| package.join("__init__.py"))
    }

    /// Is `parts` under `root` a directory (a namespace package, or a package)?
    fn is_dir(&self, root: &Path, parts: &[&str]) -> bool {
        let (last, parent) = match parts.split_last() {
            Some(split) => split,
            None => return true,
        };
        let mut dir = root.to_path_buf();
        parent.iter().for_each(|p| dir.push(p));
        self.entries(&dir).dirs.contains(*last)
    }

    /// The parsed module of `file`, read and parsed on first use (or again after it was
    /// dropped).
    fn load(&self, file: &Path, name: &str, is_package: bool) -> Option<Arc<ForeignModule>> {
        let now = self.uses.fetch_add(1, Ordering::Relaxed);
        let (cell, fresh) = {
            let mut modules = lock(&self.modules);
            match modules.get_mut(file) {
                Some(slot) => {
                    slot.last_used = now;
                    (slot.module.clone(), false)
                }
                None => {
                    let cell = Arc::new(OnceLock::new());
                    modules.insert(
                        file.to_path_buf(),
                        Slot {
                            module: cell.clone(),
                            bytes: 0,
                            last_used: now,
                        },
                    );
                    (cell, true)
                }
            }
        };
        let module = cell
            .get_or_init(|| self.parse(file, name, is_package))
            .clone();
        if fresh {
            let bytes = module.as_ref().map_or(0, |m| m.text.len());
            self.keep_within_budget(file, bytes);
        }
        module
    }

    /// Record `file`'s size and drop the modules used least recently while the kept ones
    /// exceed [`KEPT_SOURCE_BYTES`].
    fn keep_within_budget(&self, file: &Path, bytes: usize) {
        let mut modules = lock(&self.modules);
        if let Some(slot) = modules.get_mut(file) {
            slot.bytes = bytes;
        }
        let mut total: usize = modules.values().map(|s| s.bytes).sum();
        if total <= KEPT_SOURCE_BYTES {
            return;
        }
        let mut by_age: Vec<(u64, PathBuf, usize)> = modules
            .iter()
            .filter(|(p, s)| p.as_path() != file && s.module.get().is_some())
            .map(|(p, s)| (s.last_used, p.clone(), s.bytes))
            .collect();
        by_age.sort();
        for (_, path, bytes) in by_age {
            if total <= KEPT_SOURCE_BYTES {
                break;
            }
            modules.remove(&path);
            total -= bytes;
        }
    }

    fn parse(&self, file: &Path, name: &str, is_package: bool) -> Option<Arc<ForeignModule>> {
        let text = read_text(file)?;
        let len = u32::try_from(text.len()).ok()?;
        // A range of spans of its own; a run that has read 2 GiB of definitions reads no more.
        let base = self
            .next_base
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                b.checked_add(len)?.checked_add(1)
            })
            .ok()?;
        let mut module = crate::frontend::python::parse_python(&text).module;
        ir::shift_spans(&mut module, base);
        let hash = blake3::hash(text.as_bytes()).to_hex().to_string();
        Some(Arc::new(ForeignModule::new(
            name.to_string(),
            is_package,
            Arc::from(file),
            base,
            Arc::from(text),
            module,
            hash,
        )))
    }

    /// The outline of `file`, read on first use (kept for the run: it is small).
    fn outline(&self, file: &Path) -> Option<Arc<Outline>> {
        let cell = lock(&self.outlines)
            .entry(file.to_path_buf())
            .or_default()
            .clone();
        cell.get_or_init(|| {
            let text = read_text(file)?;
            let mut outline = outline::outline(&text);
            outline.hash = Arc::from(blake3::hash(text.as_bytes()).to_hex().as_str());
            Some(Arc::new(outline))
        })
        .clone()
    }

    /// What `path` resolves to under `root`, with the files read on the way (recorded for
    /// the run).
    fn resolution(&self, root: &Path, path: &str) -> Resolution {
        if let Some(r) = self.recorded(root, path) {
            return r;
        }
        let mut files = Vec::new();
        let found = self.find(root, path, 0, &mut files).map(Arc::new);
        let r = Resolution {
            found,
            files: files.into(),
        };
        lock(&self.resolved)
            .entry(root.to_path_buf())
            .or_default()
            .insert(path.to_string(), r.clone());
        r
    }

    /// The resolution of `path` under `root` as recorded (`None`: not resolved yet).
    fn recorded(&self, root: &Path, path: &str) -> Option<Resolution> {
        lock(&self.resolved)
            .get(root)
            .and_then(|by_name| by_name.get(path))
            .cloned()
    }

    /// The longest prefix of `path` that is a module of the tree, then the rest looked up
    /// in it; the outlines read are added to `files`.
    fn find(&self, root: &Path, path: &str, depth: usize, files: &mut Vec<Dep>) -> Option<Found> {
        if depth > MAX_REEXPORTS {
            return None;
        }
        let parts: Vec<&str> = path.split('.').collect();
        if parts.len() < 2 || parts.iter().any(|p| p.is_empty()) {
            return None;
        }
        let mut best = None;
        for k in 1..parts.len() {
            match self.module_file(root, &parts[..k]) {
                Some(f) => best = Some((k, f)),
                None if !self.is_dir(root, &parts[..k]) => break,
                None => {}
            }
        }
        let (k, file) = best?;
        let place = Place {
            is_package: file.file_name().is_some_and(|n| n == "__init__.py"),
            name: parts[..k].join("."),
            file,
        };
        self.lookup(root, &place, &parts[k..], depth, files)
    }

    /// `names` (`["Mlp"]`) in a module: a definition, or an import or alias to follow.
    fn lookup(
        &self,
        root: &Path,
        place: &Place,
        names: &[&str],
        depth: usize,
        files: &mut Vec<Dep>,
    ) -> Option<Found> {
        if depth > MAX_REEXPORTS {
            return None;
        }
        let outline = self.outline(&place.file)?;
        files.push((Arc::from(place.file.as_path()), outline.hash.clone()));
        let (first, rest) = names.split_first()?;
        if rest.is_empty() {
            if let Some(def) = outline.def(first) {
                let kind = match def {
                    Def::Function {
                        rearranges,
                        returns: true,
                    } => Some(ForeignKind::Function {
                        rearranges: *rearranges,
                    }),
                    Def::Function { returns: false, .. } => None,
                    Def::Class { .. } => outline.is_layer(first, 0).then_some(ForeignKind::Layer),
                };
                return Some(Found {
                    file: place.file.clone(),
                    module: place.name.clone(),
                    is_package: place.is_package,
                    name: first.to_string(),
                    kind,
                });
            }
        }
        let import = outline.import(first)?;
        if import.alias {
            let mut again = vec![import.target.as_str()];
            again.extend_from_slice(rest);
            return self.lookup(root, place, &again, depth + 1, files);
        }
        let mut full = import.target.clone();
        for r in rest {
            full.push('.');
            full.push_str(r);
        }
        let full = crate::analysis::foreign::absolute_import(&place.name, place.is_package, &full)?;
        self.find(root, &full, depth + 1, files)
    }
}

/// A directory's subdirectories and Python files, by name.
#[derive(Default)]
struct Entries {
    dirs: rustc_hash::FxHashSet<String>,
    files: rustc_hash::FxHashSet<String>,
}

/// A module file and its dotted name.
struct Place {
    file: PathBuf,
    name: String,
    is_package: bool,
}

impl ForeignDefs for ProjectIndex {
    fn kind(&self, root: &Path, path: &str) -> Lookup {
        let r = self.resolution(root, path);
        Lookup {
            kind: r.found.and_then(|f| f.kind),
            files: r.files,
        }
    }

    fn resolve(&self, root: &Path, path: &str) -> Option<(Arc<ForeignModule>, ForeignItem)> {
        let found = self.resolution(root, path).found?;
        let module = self.load(&found.file, &found.module, found.is_package)?;
        let item = definition(&module, &found.name)?;
        Some((module, item))
    }
}

/// The top-level function or class `name` of a module (the last one, as Python binds it).
fn definition(module: &ForeignModule, name: &str) -> Option<ForeignItem> {
    if let Some(f) = module
        .module
        .functions
        .iter()
        .rev()
        .find(|f| f.name == name)
    {
        return Some(ForeignItem::Function(f.clone()));
    }
    module
        .module
        .classes
        .iter()
        .rev()
        .find(|c| c.name == name)
        .map(|c| ForeignItem::Class(c.clone()))
}

/// A file's text, if it is a regular UTF-8 file of at most [`MAX_FOREIGN_BYTES`].
fn read_text(file: &Path) -> Option<String> {
    let bytes = crate::fsutil::read_regular(file, Some(MAX_FOREIGN_BYTES)).ok()?;
    if bytes.len() as u64 > MAX_FOREIGN_BYTES {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// A lock of the index's maps; a panic of another thread while it held one left the map
/// as consistent as any entry is on its own.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn a_file_is_named_from_the_first_directory_without_init() {
        let dir = tree(&[
            ("pkg/__init__.py", ""),
            ("pkg/models/__init__.py", ""),
            ("pkg/models/vit.py", ""),
            ("train.py", ""),
        ]);
        let index = ProjectIndex::new();
        let vit = index
            .place_of(&dir.path().join("pkg/models/vit.py"))
            .unwrap();
        assert_eq!(vit.name, "pkg.models.vit");
        assert_eq!(vit.root, dir.path());
        assert!(!vit.is_package);
        let init = index
            .place_of(&dir.path().join("pkg/models/__init__.py"))
            .unwrap();
        assert_eq!((init.name.as_str(), init.is_package), ("pkg.models", true));
        let script = index.place_of(&dir.path().join("train.py")).unwrap();
        assert_eq!(script.name, "train");
    }

    #[test]
    fn names_resolve_through_reexports_and_aliases() {
        let dir = tree(&[
            ("pkg/__init__.py", ""),
            (
                "pkg/layers/__init__.py",
                "from .mlp import Mlp\ntry:\n    from .norm import LayerNorm2d\nexcept ImportError:\n    pass\n",
            ),
            ("pkg/layers/mlp.py", "class Mlp:\n    pass\nConvMlp = Mlp\n"),
            ("pkg/layers/norm.py", "def LayerNorm2d(x):\n    return x\n"),
        ]);
        let index = ProjectIndex::new();
        let root = dir.path();
        let class = |path: &str| match index.resolve(root, path) {
            Some((m, ForeignItem::Class(c))) => Some((m.name.clone(), c.name.clone())),
            _ => None,
        };
        assert_eq!(
            class("pkg.layers.Mlp"),
            Some(("pkg.layers.mlp".into(), "Mlp".into()))
        );
        assert_eq!(
            class("pkg.layers.mlp.ConvMlp"),
            Some(("pkg.layers.mlp".into(), "Mlp".into()))
        );
        assert!(matches!(
            index.resolve(root, "pkg.layers.LayerNorm2d"),
            Some((_, ForeignItem::Function(_)))
        ));
        assert!(index.resolve(root, "pkg.layers.Missing").is_none());
        assert!(index.resolve(root, "torch.nn.Linear").is_none());
        // Spans of each module are past the base, in ranges of their own.
        let (m, _) = index.resolve(root, "pkg.layers.Mlp").unwrap();
        assert!(m.base >= ir::OTHER_FILE_SPANS);
        assert!(m.module.classes[0].span.in_other_file());
    }
}
