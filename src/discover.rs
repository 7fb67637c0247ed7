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

/// The ignore files the walk reads in a directory (`.gitignore`, `.ignore`, a repository's
/// `.git/info/exclude`).
const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore", ".git/info/exclude"];

/// An ignore file in `dir` that is not a regular file (a FIFO would make the walk wait for
/// a writer forever, a device never ends), as the error to report.
fn irregular_ignore_file(dir: &Path) -> Option<DiscoverError> {
    IGNORE_FILES.iter().find_map(|name| {
        let path = dir.join(name);
        let kind = crate::fsutil::exists_but_not_regular(&path)?;
        Some(DiscoverError {
            message: format!(
                "{}; the directory {} is not linted",
                crate::fsutil::not_regular(&kind),
                dir.display()
            ),
            path,
        })
    })
}

/// Git's global excludes file and the configuration that may name it, which the walk reads.
fn irregular_global_git_file() -> Option<DiscoverError> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    let candidates = [
        home.map(|h| h.join(".gitconfig")),
        xdg.as_ref().map(|x| x.join("git/config")),
        xdg.map(|x| x.join("git/ignore")),
    ];
    candidates.into_iter().flatten().find_map(|path| {
        let kind = crate::fsutil::exists_but_not_regular(&path)?;
        Some(DiscoverError {
            message: format!(
                "{}; git's global excludes are not used",
                crate::fsutil::not_regular(&kind)
            ),
            path,
        })
    })
}

/// A FIFO, socket or device (not a file, directory or symbolic link).
fn is_special(kind: &std::fs::FileType) -> bool {
    !kind.is_file() && !kind.is_dir() && !kind.is_symlink()
}

/// A FIFO or device met while walking a directory is skipped, as Git skips it, with a
/// warning: a source file was expected under that name, but the run is not wrong for it.
fn warn_special(path: &Path, kind: &std::fs::FileType) {
    eprintln!(
        "warning: {}: {}; skipped",
        path.strip_prefix(".").unwrap_or(path).display(),
        crate::fsutil::not_regular(kind)
    );
}

/// Expand `paths` into the sorted list of files to lint.
pub fn discover(paths: &[PathBuf], opts: &DiscoverOptions) -> (Vec<PathBuf>, Vec<DiscoverError>) {
    let excludes = exclude_matcher(&opts.exclude);
    let mut files = Vec::new();
    let mut errors = Vec::new();
    let global_git = match opts.respect_gitignore {
        true => irregular_global_git_file(),
        false => None,
    };
    let use_global_git = global_git.is_none();
    errors.extend(global_git);
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
        if !meta.is_file() && !meta.is_dir() {
            // Never opened: a FIFO would wait for a writer, a device never ends.
            errors.push(DiscoverError {
                path: root.clone(),
                message: crate::fsutil::not_regular(&meta.file_type()).to_string(),
            });
            continue;
        }
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
        // The walk reads the ignore files of the root and of every directory above it
        // before it starts, and those of each directory it enters (checked in the filter).
        if opts.respect_gitignore {
            let absolute = std::path::absolute(root).unwrap_or_else(|_| root.clone());
            if let Some(error) = absolute.ancestors().find_map(irregular_ignore_file) {
                errors.push(error);
                continue;
            }
        }
        let excludes = excludes.clone();
        let filter_errors = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let respect_gitignore = opts.respect_gitignore;
        let walker = WalkBuilder::new(root)
            .standard_filters(opts.respect_gitignore)
            .git_global(opts.respect_gitignore && use_global_git)
            .hidden(false)
            .require_git(false)
            .filter_entry({
                let filter_errors = filter_errors.clone();
                move |e| {
                    let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                    if excludes.matched(e.path(), is_dir).is_ignore() {
                        return false;
                    }
                    if let Some(error) = respect_gitignore
                        .then(|| is_dir.then(|| irregular_ignore_file(e.path())))
                        .flatten()
                        .flatten()
                    {
                        filter_errors
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(error);
                        return false;
                    }
                    true
                }
            })
            .build();
        for entry in walker {
            match entry {
                Ok(e) if !is_lintable(e.path()) => {}
                Ok(e) => match e.file_type() {
                    Some(t) if t.is_file() => files.push(e.into_path()),
                    Some(t) if is_special(&t) => warn_special(e.path(), &t),
                    _ => {}
                },
                Err(err) => errors.push(DiscoverError {
                    path: root.clone(),
                    message: err.to_string(),
                }),
            }
        }
        errors.append(&mut filter_errors.lock().unwrap_or_else(|p| p.into_inner()));
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
