//! Configuration: `stridelint.toml` (or `.stridelint.toml`), or `[tool.stridelint]` in
//! `pyproject.toml`. As in Ruff, the closest configuration file above a linted file
//! applies to it; `extend = "../base.toml"` inherits from another file; CLI flags
//! override everything; `--config FILE` uses one file for all.
//!
//! Keys are kebab-case. An unknown key or a value of the wrong type is an error that names
//! the file, the key and the expected type.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;

/// The `[tool.stridelint]` table / a `stridelint.toml` file. Every field is optional:
/// unset fields inherit (from `extend`) or take the default.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// Another configuration file this one inherits from (relative to this file).
    pub extend: Option<PathBuf>,
    pub select: Option<Vec<String>>,
    pub extend_select: Option<Vec<String>>,
    pub ignore: Option<Vec<String>>,
    /// Glob (relative to the configuration's directory) → codes ignored in matching files.
    pub per_file_ignores: Option<BTreeMap<String, Vec<String>>>,
    pub exclude: Option<Vec<String>>,
    pub extend_exclude: Option<Vec<String>>,
    pub respect_gitignore: Option<bool>,
    /// Assumption: tensors entering a function as parameters are contiguous (default true).
    pub assume_contiguous_args: Option<bool>,
    /// Assumption: the smallest value of a named size (default 2).
    pub min_symbolic_size: Option<i64>,
    /// Sizes for `--verify`: `{ B = 16, T = 4096 }`.
    pub dims: Option<BTreeMap<String, i64>>,
    /// Element type for `--verify`: `bf16`, `f16`, `f32`, ...
    pub dtype: Option<String>,
    /// Layers per forward pass, for `--verify` totals.
    pub layers: Option<u32>,
    /// Which candle matmul rule applies: `cuda` (default) or `cpu`.
    pub candle_backend: Option<String>,
}

#[derive(Debug, Clone)]
pub struct ConfigError {
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl Config {
    /// `self` on top of `base`: fields set here win; `extend-*` lists accumulate.
    fn over(self, base: Config) -> Config {
        Config {
            extend: None,
            select: self.select.or(base.select),
            extend_select: concat(base.extend_select, self.extend_select),
            ignore: self.ignore.or(base.ignore),
            per_file_ignores: self.per_file_ignores.or(base.per_file_ignores),
            exclude: self.exclude.or(base.exclude),
            extend_exclude: concat(base.extend_exclude, self.extend_exclude),
            respect_gitignore: self.respect_gitignore.or(base.respect_gitignore),
            assume_contiguous_args: self.assume_contiguous_args.or(base.assume_contiguous_args),
            min_symbolic_size: self.min_symbolic_size.or(base.min_symbolic_size),
            dims: self.dims.or(base.dims),
            dtype: self.dtype.or(base.dtype),
            layers: self.layers.or(base.layers),
            candle_backend: self.candle_backend.or(base.candle_backend),
        }
    }
}

fn concat(a: Option<Vec<String>>, b: Option<Vec<String>>) -> Option<Vec<String>> {
    match (a, b) {
        (None, None) => None,
        (x, y) => Some(x.unwrap_or_default().into_iter().chain(y.unwrap_or_default()).collect()),
    }
}

/// Parse one configuration file (not following `extend`). For `pyproject.toml` the
/// `[tool.stridelint]` table is read; `Ok(None)` when it has none.
pub fn parse_config_file(path: &Path) -> Result<Option<Config>, ConfigError> {
    let err = |message: String| ConfigError { path: path.to_path_buf(), message };
    let text = std::fs::read_to_string(path).map_err(|e| err(format!("cannot read: {e}")))?;
    let is_pyproject = path.file_name().is_some_and(|n| n == "pyproject.toml");
    if is_pyproject {
        let doc: toml::Table = toml::from_str(&text).map_err(|e| err(describe_toml_error(&e)))?;
        let Some(section) = doc.get("tool").and_then(|t| t.get("stridelint")) else { return Ok(None) };
        let cfg = Config::deserialize(section.clone()).map_err(|e| err(format!("[tool.stridelint]: {}", describe_toml_error(&e))))?;
        Ok(Some(cfg))
    } else {
        toml::from_str::<Config>(&text).map(Some).map_err(|e| err(describe_toml_error(&e)))
    }
}

fn describe_toml_error(e: &toml::de::Error) -> String {
    e.to_string().trim().replace('\n', " ").replace("  ", " ")
}

/// Load a configuration file and everything it `extend`s (cycles are an error).
pub fn load_config(path: &Path) -> Result<Option<Config>, ConfigError> {
    let mut seen: Vec<PathBuf> = Vec::new();
    load_chain(path, &mut seen)
}

fn load_chain(path: &Path, seen: &mut Vec<PathBuf>) -> Result<Option<Config>, ConfigError> {
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if seen.contains(&canonical) {
        return Err(ConfigError { path: path.to_path_buf(), message: "`extend` forms a cycle".into() });
    }
    seen.push(canonical);
    let Some(cfg) = parse_config_file(path)? else { return Ok(None) };
    match cfg.extend.clone() {
        Some(parent) => {
            let parent_path = path.parent().unwrap_or(Path::new(".")).join(parent);
            let base = load_chain(&parent_path, seen)?.unwrap_or_default();
            Ok(Some(cfg.over(base)))
        }
        None => Ok(Some(cfg)),
    }
}

const CONFIG_NAMES: &[&str] = &["stridelint.toml", ".stridelint.toml", "pyproject.toml"];

/// The closest configuration file at or above `dir` (a `pyproject.toml` counts only if it
/// has a `[tool.stridelint]` table).
pub fn find_config(dir: &Path) -> Option<PathBuf> {
    let mut cur = Some(dir);
    while let Some(d) = cur {
        for name in CONFIG_NAMES {
            let p = d.join(name);
            if p.is_file() {
                if *name == "pyproject.toml" {
                    let has = std::fs::read_to_string(&p).map(|t| t.contains("[tool.stridelint")).unwrap_or(false);
                    if !has {
                        continue;
                    }
                }
                return Some(p);
            }
        }
        cur = d.parent();
    }
    None
}

/// Everything resolved for the files under one configuration.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub config: Config,
    /// Directory the configuration's relative paths are resolved against.
    pub root: PathBuf,
    per_file: Vec<(GlobSet, Vec<String>)>,
}

impl Resolved {
    pub fn new(config: Config, root: PathBuf) -> Result<Resolved, ConfigError> {
        let mut per_file = Vec::new();
        if let Some(map) = &config.per_file_ignores {
            for (pattern, codes) in map {
                let glob = Glob::new(pattern).map_err(|e| ConfigError {
                    path: root.clone(),
                    message: format!("per-file-ignores: invalid glob `{pattern}`: {e}"),
                })?;
                let mut b = GlobSetBuilder::new();
                b.add(glob);
                if !pattern.contains('/') {
                    // A bare file pattern matches at any depth, as in Ruff.
                    if let Ok(g) = Glob::new(&format!("**/{pattern}")) {
                        b.add(g);
                    }
                }
                per_file.push((b.build().unwrap_or_else(|_| GlobSet::empty()), codes.clone()));
            }
        }
        Ok(Resolved { config, root, per_file })
    }

    /// Codes ignored for `file` by `per-file-ignores`.
    pub fn ignored_for(&self, file: &Path) -> Vec<String> {
        let rel = file.strip_prefix(&self.root).unwrap_or(file);
        self.per_file.iter().filter(|(g, _)| g.is_match(rel)).flat_map(|(_, c)| c.iter().cloned()).collect()
    }
}

/// Finds and caches the configuration for each directory.
pub struct ConfigResolver {
    /// `--config FILE`: one configuration for everything.
    fixed: Option<Arc<Resolved>>,
    cache: Mutex<HashMap<PathBuf, Option<Arc<Resolved>>>>,
}

impl ConfigResolver {
    pub fn new(explicit: Option<&Path>) -> Result<ConfigResolver, ConfigError> {
        let fixed = match explicit {
            Some(p) => {
                let cfg = load_config(p)?.unwrap_or_default();
                let root = p.parent().map(Path::to_path_buf).unwrap_or_default();
                Some(Arc::new(Resolved::new(cfg, root)?))
            }
            None => None,
        };
        Ok(ConfigResolver { fixed, cache: Mutex::new(HashMap::new()) })
    }

    /// The configuration that applies to `file` (`None`: defaults only).
    pub fn for_file(&self, file: &Path) -> Result<Option<Arc<Resolved>>, ConfigError> {
        if let Some(f) = &self.fixed {
            return Ok(Some(f.clone()));
        }
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
        if let Some(hit) = self.cache.lock().unwrap_or_else(|e| e.into_inner()).get(&dir) {
            return Ok(hit.clone());
        }
        let resolved = match find_config(&dir) {
            Some(p) => match load_config(&p)? {
                Some(cfg) => Some(Arc::new(Resolved::new(cfg, p.parent().map(Path::to_path_buf).unwrap_or_default())?)),
                None => None,
            },
            None => None,
        };
        self.cache.lock().unwrap_or_else(|e| e.into_inner()).insert(dir, resolved.clone());
        Ok(resolved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_key_and_wrong_type_name_the_file_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("stridelint.toml");
        std::fs::write(&p, "selectt = [\"SL001\"]\n").unwrap();
        let e = load_config(&p).unwrap_err();
        assert!(e.to_string().contains("stridelint.toml") && e.message.contains("selectt"), "{e}");
        std::fs::write(&p, "min-symbolic-size = \"two\"\n").unwrap();
        let e = load_config(&p).unwrap_err();
        assert!(e.message.contains("min-symbolic-size") || e.message.contains("integer"), "{e}");
        assert!(e.message.contains("i64") || e.message.contains("integer"), "{e}");
    }

    #[test]
    fn pyproject_section_and_extend_chain() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("base.toml"), "ignore = [\"SL002\"]\nmin-symbolic-size = 3\nextend-select = [\"SL001\"]\n").unwrap();
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        std::fs::write(
            root.join("pkg/pyproject.toml"),
            "[project]\nname = \"x\"\n[tool.stridelint]\nextend = \"../base.toml\"\nmin-symbolic-size = 4\nextend-select = [\"SL003\"]\n",
        )
        .unwrap();
        let found = find_config(&root.join("pkg")).unwrap();
        assert!(found.ends_with("pkg/pyproject.toml"));
        let cfg = load_config(&found).unwrap().unwrap();
        assert_eq!(cfg.min_symbolic_size, Some(4));
        assert_eq!(cfg.ignore, Some(vec!["SL002".to_string()]));
        assert_eq!(cfg.extend_select, Some(vec!["SL001".to_string(), "SL003".to_string()]));
    }

    #[test]
    fn closest_config_wins_and_per_file_ignores_match() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("stridelint.toml"), "select = [\"SL001\"]\n").unwrap();
        std::fs::write(root.join("a/stridelint.toml"), "select = [\"SL002\"]\n[per-file-ignores]\n\"test_*.py\" = [\"SL002\"]\n").unwrap();
        let r = ConfigResolver::new(None).unwrap();
        let inner = r.for_file(&root.join("a/b/m.py")).unwrap().unwrap();
        assert_eq!(inner.config.select, Some(vec!["SL002".to_string()]));
        let outer = r.for_file(&root.join("m.py")).unwrap().unwrap();
        assert_eq!(outer.config.select, Some(vec!["SL001".to_string()]));
        let canon = std::fs::canonicalize(root.join("a")).unwrap();
        assert_eq!(inner.ignored_for(&canon.join("b/test_x.py")), vec!["SL002".to_string()]);
        assert!(inner.ignored_for(&canon.join("b/x.py")).is_empty());
    }

    #[test]
    fn extend_cycle_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.toml"), "extend = \"b.toml\"\n").unwrap();
        std::fs::write(dir.path().join("b.toml"), "extend = \"a.toml\"\n").unwrap();
        assert!(load_config(&dir.path().join("a.toml")).unwrap_err().message.contains("cycle"));
    }
}
