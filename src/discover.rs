//! Which files to lint: walk the given paths (directories recursively), respecting
//! `.gitignore`/`.ignore` files and the exclude patterns, and keep Python, Rust and
//! notebook sources. Paths given explicitly are always linted unless `force_exclude`.

use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::WalkBuilder;

/// Directories never worth walking (Ruff's defaults, plus Rust's `target`).
pub const DEFAULT_EXCLUDES: &[&str] = &[
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pytype",
    ".ruff_cache",
    ".stridelint_cache",
    ".svn",
    ".tox",
    ".venv",
    "__pypackages__",
    "_build",
    "buck-out",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
    "target",
];

#[derive(Debug, Clone, Default)]
pub struct DiscoverOptions {
    /// Extra gitignore-style patterns to exclude (`--exclude`).
    pub exclude: Vec<String>,
    pub respect_gitignore: bool,
    /// Apply excludes to paths passed explicitly too.
    pub force_exclude: bool,
}

/// A path that could not be walked.
#[derive(Debug, Clone)]
pub struct DiscoverError {
    pub path: PathBuf,
    pub message: String,
}

pub fn is_lintable(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("py" | "pyi" | "rs" | "ipynb")
    )
}

fn exclude_matcher(patterns: &[String]) -> Gitignore {
    let mut b = GitignoreBuilder::new("");
    for p in DEFAULT_EXCLUDES
        .iter()
        .map(|s| s.to_string())
        .chain(patterns.iter().cloned())
    {
        let _ = b.add_line(None, &p);
    }
    b.build().unwrap_or_else(|_| Gitignore::empty())
}

/// Expand `paths` into the sorted list of files to lint.
pub fn discover(paths: &[PathBuf], opts: &DiscoverOptions) -> (Vec<PathBuf>, Vec<DiscoverError>) {
    let excludes = exclude_matcher(&opts.exclude);
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for root in paths {
        let meta = match std::fs::metadata(root) {
            Ok(m) => m,
            Err(e) => {
                errors.push(DiscoverError {
                    path: root.clone(),
                    message: e.to_string(),
                });
                continue;
            }
        };
        if meta.is_file() {
            let excluded = opts.force_exclude
                && excludes
                    .matched_path_or_any_parents(root, false)
                    .is_ignore();
            if !excluded {
                files.push(root.clone());
            }
            continue;
        }
        let excludes = excludes.clone();
        let walker = WalkBuilder::new(root)
            .standard_filters(opts.respect_gitignore)
            .hidden(false)
            .require_git(false)
            .filter_entry(move |e| {
                let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                !excludes.matched(e.path(), is_dir).is_ignore()
            })
            .build();
        for entry in walker {
            match entry {
                Ok(e) => {
                    if e.file_type().is_some_and(|t| t.is_file()) && is_lintable(e.path()) {
                        files.push(e.into_path());
                    }
                }
                Err(err) => errors.push(DiscoverError {
                    path: root.clone(),
                    message: err.to_string(),
                }),
            }
        }
    }
    files.sort();
    files.dedup();
    (files, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_directories_and_respects_excludes_and_gitignore() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("pkg/sub")).unwrap();
        std::fs::create_dir_all(root.join(".venv/lib")).unwrap();
        std::fs::create_dir_all(root.join("gen")).unwrap();
        std::fs::write(root.join("pkg/a.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("pkg/sub/b.rs"), "fn main() {}\n").unwrap();
        std::fs::write(root.join("pkg/readme.md"), "# no\n").unwrap();
        std::fs::write(root.join(".venv/lib/c.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("gen/d.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("skipme.py"), "x = 1\n").unwrap();
        std::fs::write(root.join(".gitignore"), "gen/\n").unwrap();
        let opts = DiscoverOptions {
            exclude: vec!["skipme.py".into()],
            respect_gitignore: true,
            force_exclude: false,
        };
        let (files, errors) = discover(&[root.to_path_buf()], &opts);
        assert!(errors.is_empty(), "{errors:?}");
        let rel: Vec<String> = files
            .iter()
            .map(|f| {
                f.strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .collect();
        assert_eq!(rel, vec!["pkg/a.py", "pkg/sub/b.rs"]);
    }

    #[test]
    fn missing_path_is_an_error_not_a_panic() {
        let (files, errors) = discover(
            &[PathBuf::from("/definitely/not/here.py")],
            &DiscoverOptions::default(),
        );
        assert!(files.is_empty());
        assert_eq!(errors.len(), 1);
    }
}
