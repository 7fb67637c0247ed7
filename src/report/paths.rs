//! How reporters name files. Like Ruff, the human and CI formats show a path relative
//! to the current directory when the file lies below it (`src/model.py`, not
//! `/home/me/project/src/model.py`): GitHub annotations and SARIF results must be
//! relative to the repository root to attach to the right file, and short paths read
//! better. JSON keeps the path exactly as the diagnostic carries it.

use std::path::{Path, PathBuf};

pub(crate) struct PathDisplay {
    /// `None` when the current directory cannot be read; paths are then shown as given.
    cwd: Option<PathBuf>,
}

impl PathDisplay {
    pub(crate) fn from_current_dir() -> Self {
        PathDisplay {
            cwd: std::env::current_dir().ok(),
        }
    }

    /// The path relative to the current directory if it lies below it, else as given.
    pub(crate) fn relative<'p>(&self, path: &'p Path) -> &'p Path {
        match &self.cwd {
            Some(cwd) if path.is_absolute() => path.strip_prefix(cwd).unwrap_or(path),
            _ => path,
        }
    }

    /// [`Self::relative`] as text (non-UTF-8 bytes become U+FFFD).
    pub(crate) fn display(&self, path: &Path) -> String {
        self.relative(path).to_string_lossy().into_owned()
    }

    /// A URI for SARIF's `artifactLocation.uri`: a relative reference (`src/my%20model.py`)
    /// when the file lies below the current directory, else a `file:///…` URI.
    pub(crate) fn uri(&self, path: &Path) -> String {
        let relative = self.relative(path);
        let text = relative.to_string_lossy();
        let text = if std::path::MAIN_SEPARATOR == '\\' {
            text.replace('\\', "/")
        } else {
            text.into_owned()
        };
        if relative.is_absolute() {
            // `/abs/x.py` → `file:///abs/x.py`; `C:/x.py` → `file:///C:/x.py`.
            let without_root = text.trim_start_matches('/');
            format!("file:///{}", percent_encode_path(without_root, true))
        } else {
            percent_encode_path(&text, false)
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn at(cwd: &str) -> PathDisplay {
        PathDisplay {
            cwd: Some(PathBuf::from(cwd)),
        }
    }

    #[test]
    fn absolute_paths_below_the_current_directory_become_relative() {
        let paths = at("/work/project");
        assert_eq!(
            paths.display(Path::new("/work/project/src/model.py")),
            "src/model.py"
        );
        assert_eq!(
            paths.display(Path::new("/elsewhere/model.py")),
            "/elsewhere/model.py"
        );
        assert_eq!(paths.display(Path::new("src/model.py")), "src/model.py");
    }

    #[test]
    fn uris_encode_what_rfc_3986_does_not_allow() {
        let paths = at("/work/project");
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
    }
}
