//! Reading files that must be regular files: sources, configuration (`extend` targets
//! included), `.gitignore`s, the cache.
//!
//! `std::fs::read` on a FIFO waits for a writer forever, and on a character device
//! (`/dev/zero`) it never ends. So every file stridelint reads is opened with `O_NONBLOCK`
//! (opening a FIFO then returns at once instead of waiting for a writer), checked with
//! `fstat` *on the opened descriptor* (no window between the check and the read), and
//! refused with a message naming what it is when it is not a regular file. `O_NONBLOCK`
//! has no effect on reads of regular files.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Opens `path` for reading if it is a regular file (symbolic links are followed).
pub fn open_regular(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta.file_type()));
    }
    Ok(file)
}

/// The error for a path that is not a regular file, naming what it is.
pub fn not_regular(kind: &std::fs::FileType) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("not a regular file ({})", describe(kind)),
    )
}

/// Is `path` something other than a regular file (a FIFO, socket, device, directory)?
/// `false` when it does not exist. Uses `stat`, which never blocks.
pub fn exists_but_not_regular(path: &Path) -> Option<std::fs::FileType> {
    let meta = std::fs::metadata(path).ok()?;
    (!meta.is_file()).then(|| meta.file_type())
}

/// `a FIFO`, `a directory`, … for messages.
pub fn describe(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "not a plain file"
    }
}

/// The bytes of the regular file `path`; with `limit`, a file that grows past it while
/// being read is refused (its size was checked before, but it may be growing).
pub fn read_regular(path: &Path, limit: Option<u64>) -> io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let expected = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut bytes = Vec::with_capacity(usize::try_from(expected).unwrap_or(0).min(1 << 30));
    match limit {
        Some(limit) => {
            file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
            if bytes.len() as u64 > limit {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "file grew past the {} MiB limit while it was read",
                        limit >> 20
                    ),
                ));
            }
        }
        None => {
            let mut file = file;
            file.read_to_end(&mut bytes)?;
        }
    }
    Ok(bytes)
}

/// [`read_regular`] as UTF-8 text.
pub fn read_regular_to_string(path: &Path) -> io::Result<String> {
    String::from_utf8(read_regular(path, None)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not valid UTF-8"))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn mkfifo(path: &Path) {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    }

    #[test]
    fn fifos_and_directories_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        mkfifo(&fifo);
        let start = std::time::Instant::now();
        let err = read_regular(&fifo, None).unwrap_err();
        assert!(err.to_string().contains("a FIFO"), "{err}");
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
        let err = read_regular(dir.path(), None).unwrap_err();
        assert!(err.to_string().contains("directory"), "{err}");
        assert!(exists_but_not_regular(&fifo).is_some());
        assert!(exists_but_not_regular(&dir.path().join("missing")).is_none());
        let file = dir.path().join("f");
        std::fs::write(&file, "abc").unwrap();
        assert_eq!(read_regular(&file, Some(3)).unwrap(), b"abc");
        assert!(read_regular(&file, Some(2)).is_err());
        assert!(exists_but_not_regular(&file).is_none());
    }
}
