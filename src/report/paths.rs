//! How reporters name files, following Ruff:
//!
//! - **Relative** (`full`, `concise`, `grouped`, `pylint`): relative to
//!   the current directory when the file lies below it (`src/model.py`), else absolute.
//! - **Repository-relative** (`github`, `gitlab`, the step summary): relative to the
//!   repository root the CI service names — `GITHUB_WORKSPACE` for GitHub, `CI_PROJECT_DIR`
//!   for GitLab's Code Quality report (as Ruff's `gitlab` format) — else (not set, or a
//!   file outside it) as the relative formats. GitHub attaches an annotation to the diff
//!   only by such a path.
//! - **Absolute** (`json`, `json-lines`, `junit`, `azure`, `rdjson`): as Ruff's.
//! - SARIF: a URI relative to the current directory with `uriBaseId` `%SRCROOT%`, whose
//!   absolute value the run's `originalUriBaseIds` gives ([`PathDisplay::uri`]).
//!
//! Every path is first made absolute and normalised lexically (`.` dropped, `..`
//! resolved, no file system access), so `stridelint .` reports `src/model.py`, never
//! `./src/model.py`, in every format. Repository-relative paths use `/` on every
//! platform.

use std::path::{Component, Path, PathBuf};

/// The directories paths are shown relative to. [`PathDisplay::from_env`] reads them
/// from the process; tests build one with fixed directories.
#[derive(Debug, Clone, Default)]
pub struct PathDisplay {
    /// `None` when the current directory cannot be read; paths are then only normalised.
    cwd: Option<PathBuf>,
    /// `GITHUB_WORKSPACE`: the root of the GitHub Actions checkout.
    github_workspace: Option<PathBuf>,
    /// `CI_PROJECT_DIR`: the root of the GitLab CI checkout.
    gitlab_project_dir: Option<PathBuf>,
}

impl PathDisplay {
    /// The current directory, and `GITHUB_WORKSPACE` / `CI_PROJECT_DIR` where set.
    pub fn from_env() -> Self {
        let cwd = std::env::current_dir().ok();
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
        };
        let mut display = PathDisplay {
            cwd,
            ..PathDisplay::default()
        };
        display.github_workspace = var("GITHUB_WORKSPACE").map(|dir| display.absolute(&dir));
        display.gitlab_project_dir = var("CI_PROJECT_DIR").map(|dir| display.absolute(&dir));
        display
    }

    /// Paths relative to `cwd` (an absolute directory); no CI roots.
    pub fn at(cwd: impl Into<PathBuf>) -> Self {
        PathDisplay {
            cwd: Some(normalize(&cwd.into())),
            ..PathDisplay::default()
        }
    }

    /// Annotations relative to this GitHub Actions workspace.
    pub fn with_github_workspace(mut self, dir: impl AsRef<Path>) -> Self {
        self.github_workspace = Some(self.absolute(dir.as_ref()));
        self
    }

    /// The GitLab report relative to this project directory.
    pub fn with_gitlab_project_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.gitlab_project_dir = Some(self.absolute(dir.as_ref()));
        self
    }

    /// The path made absolute (against the current directory) and normalised lexically.
    pub(crate) fn absolute(&self, path: &Path) -> PathBuf {
        match &self.cwd {
            Some(cwd) if !path.is_absolute() => normalize(&cwd.join(path)),
            _ => normalize(path),
        }
    }

    /// Relative to the first of `bases` the file lies below, else absolute (normalised).
    fn relative_to(&self, path: &Path, bases: &[Option<&Path>]) -> PathBuf {
        let absolute = self.absolute(path);
        for base in bases.iter().flatten() {
            if let Ok(relative) = absolute.strip_prefix(base) {
                if !relative.as_os_str().is_empty() {
                    return relative.to_path_buf();
                }
            }
        }
        // Also where the current directory is unknown: the path without `.` components.
        absolute
    }

    /// The path relative to the current directory if it lies below it, else absolute.
    pub(crate) fn display(&self, path: &Path) -> String {
        lossy(&self.relative_to(path, &[self.cwd.as_deref()]))
    }

    /// Absolute and normalised, as Ruff's JSON, JUnit, Azure and rdjson formats show it.
    pub(crate) fn display_absolute(&self, path: &Path) -> String {
        lossy(&self.absolute(path))
    }

    /// For GitHub annotations: relative to `GITHUB_WORKSPACE`, or else (a file outside
    /// the workspace, or no workspace) to the current directory, with `/` separators.
    pub(crate) fn github(&self, path: &Path) -> String {
        let bases = [self.github_workspace.as_deref(), self.cwd.as_deref()];
        slashes(&self.relative_to(path, &bases))
    }

    /// For GitLab's Code Quality report: relative to `CI_PROJECT_DIR`, or else to the
    /// current directory, with `/` separators.
    pub(crate) fn gitlab(&self, path: &Path) -> String {
        let bases = [self.gitlab_project_dir.as_deref(), self.cwd.as_deref()];
        slashes(&self.relative_to(path, &bases))
    }

    /// A URI for SARIF's `artifactLocation.uri`: a relative reference (`src/my%20model.py`,
    /// to be resolved against [`Self::source_root_uri`]) when the file lies below the
    /// current directory, else a `file:///…` URI.
    pub(crate) fn uri(&self, path: &Path) -> String {
        let relative = self.relative_to(path, &[self.cwd.as_deref()]);
        let text = slashes(&relative);
        if relative.is_absolute() {
            file_uri(&text)
        } else {
            percent_encode_path(&text, false)
        }
    }

    /// Whether [`Self::uri`] of this path is relative (to the source root).
    pub(crate) fn uri_is_relative(&self, path: &Path) -> bool {
        !self.relative_to(path, &[self.cwd.as_deref()]).is_absolute()
    }

    /// The current directory as a `file:///…/` URI (with the trailing slash SARIF's
    /// `originalUriBaseIds` requires), if known.
    pub(crate) fn source_root_uri(&self) -> Option<String> {
        let cwd = self.cwd.as_deref()?;
        let mut uri = file_uri(&slashes(cwd));
        if !uri.ends_with('/') {
            uri.push('/');
        }
        Some(uri)
    }
}

/// `/abs/x.py` → `file:///abs/x.py`; `C:/x.py` → `file:///C:/x.py`.
fn file_uri(slashed_absolute: &str) -> String {
    let without_root = slashed_absolute.trim_start_matches('/');
    format!("file:///{}", percent_encode_path(without_root, true))
}

/// Drops `.` components and resolves `..` against the preceding component, without
/// touching the file system (a `..` at the root stays at the root; a leading `..` of a
/// relative path is kept).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                let last_is_normal =
                    matches!(out.components().next_back(), Some(Component::Normal(_)));
                if last_is_normal {
                    out.pop();
                } else if !out.has_root() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn lossy(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// The path as text with `/` separators (non-UTF-8 bytes become U+FFFD).
fn slashes(path: &Path) -> String {
    let text = path.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '\\' {
        text.replace('\\', "/")
    } else {
        text.into_owned()
    }
}

/// Percent-encodes a `/`-separated path so that it is a valid RFC 3986 URI reference.
///
/// Kept as is: unreserved characters, `/`, and the sub-delimiters and `@` that RFC 3986
/// allows in a path segment. Everything else — `%`, spaces, `#`, `?`, non-ASCII (as its
/// UTF-8 bytes) — is encoded. A `:` is encoded too unless `keep_colon`: in a relative
/// reference, `a:b.py` would otherwise read as a URI with scheme `a`.
fn percent_encode_path(path: &str, keep_colon: bool) -> String {
    let mut encoded = String::with_capacity(path.len());
    for byte in path.bytes() {
        let keep = byte.is_ascii_alphanumeric()
            || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/')
            || matches!(
                byte,
                b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=' | b'@'
            )
            || (keep_colon && byte == b':');
        if keep {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_lose_their_dot_prefix_and_dot_dot_is_resolved() {
        let paths = PathDisplay::at("/work/project");
        assert_eq!(paths.display(Path::new("./src/model.py")), "src/model.py");
        assert_eq!(
            paths.display(Path::new("src/./a/../model.py")),
            "src/model.py"
        );
        assert_eq!(
            paths.display(Path::new("../other/x.py")),
            "/work/other/x.py"
        );
        assert_eq!(
            paths.display_absolute(Path::new("./src/model.py")),
            "/work/project/src/model.py"
        );
        assert_eq!(paths.github(Path::new("./src/model.py")), "src/model.py");
        assert_eq!(paths.gitlab(Path::new(".//src/model.py")), "src/model.py");
        assert_eq!(paths.uri(Path::new("./src/model.py")), "src/model.py");
    }

    #[test]
    fn absolute_paths_below_the_current_directory_become_relative() {
        let paths = PathDisplay::at("/work/project");
        assert_eq!(
            paths.display(Path::new("/work/project/src/model.py")),
            "src/model.py"
        );
        assert_eq!(
            paths.display(Path::new("/elsewhere/model.py")),
            "/elsewhere/model.py"
        );
        assert_eq!(paths.display(Path::new("src/model.py")), "src/model.py");
        // A sibling directory sharing a prefix is not "below".
        assert_eq!(
            paths.display(Path::new("/work/project2/x.py")),
            "/work/project2/x.py"
        );
    }

    #[test]
    fn ci_roots_take_precedence_for_their_formats() {
        let paths = PathDisplay::at("/checkout/backend")
            .with_github_workspace("/checkout")
            .with_gitlab_project_dir("/checkout/");
        assert_eq!(paths.github(Path::new("./src/x.py")), "backend/src/x.py");
        assert_eq!(paths.gitlab(Path::new("src/x.py")), "backend/src/x.py");
        assert_eq!(paths.display(Path::new("./src/x.py")), "src/x.py");
        assert_eq!(paths.github(Path::new("/tmp/y.py")), "/tmp/y.py");
        // Outside the workspace but below the current directory: relative to the latter.
        let elsewhere = PathDisplay::at("/tmp/t").with_github_workspace("/checkout");
        assert_eq!(elsewhere.github(Path::new("./pkg/a.py")), "pkg/a.py");
        // Relative CI roots are taken against the current directory.
        let relative = PathDisplay::at("/checkout/backend").with_github_workspace("..");
        assert_eq!(relative.github(Path::new("x.py")), "backend/x.py");
    }

    #[test]
    fn without_a_current_directory_paths_are_only_normalised() {
        let paths = PathDisplay::default();
        assert_eq!(paths.display(Path::new("./a/./b.py")), "a/b.py");
        assert_eq!(paths.display(Path::new("../b.py")), "../b.py");
        assert_eq!(paths.source_root_uri(), None);
    }

    #[test]
    fn uris_encode_what_rfc_3986_does_not_allow() {
        let paths = PathDisplay::at("/work/project");
        assert_eq!(
            paths.uri(Path::new("src/my model%1.py")),
            "src/my%20model%251.py"
        );
        assert_eq!(paths.uri(Path::new("a:b#c?.py")), "a%3Ab%23c%3F.py");
        assert_eq!(paths.uri(Path::new("modèle.py")), "mod%C3%A8le.py");
        assert_eq!(paths.uri(Path::new("/work/project/src/x.py")), "src/x.py");
        assert_eq!(
            paths.uri(Path::new("/other dir/x.py")),
            "file:///other%20dir/x.py"
        );
        assert!(!paths.uri_is_relative(Path::new("/other dir/x.py")));
        assert_eq!(
            PathDisplay::at("/my project").source_root_uri().as_deref(),
            Some("file:///my%20project/")
        );
    }
}
