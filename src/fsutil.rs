//! Reading files that must be regular files: sources, configuration (`extend` targets
//! included), `.gitignore`s, the cache.
//!
//! `std::fs::read` on a FIFO waits for a writer forever, and on a character device
//! (`/dev/zero`) it never ends. So every file stridelint reads is opened with `O_NONBLOCK`
//! (opening a FIFO then returns at once instead of waiting for a writer), checked with
//! `fstat` *on the opened descriptor* (no window between the check and the read), and
//! refused with a message naming what it is when it is not a regular file. `O_NONBLOCK`
//! has no effect on reads of regular files.
//!
//! Writing is the other half: every file stridelint writes (`--fix`, `--add-noqa`,
//! notebooks, the cache) is first written to a [`TempFile`] beside it and then renamed
//! over it. A temporary file is created exclusively under a random name (`O_CREAT |
//! O_EXCL | O_NOFOLLOW`, mode 0600), so a name planted in advance, a symbolic link
//! included, is never opened: its creation fails and another name is tried. While one
//! exists, SIGINT, SIGTERM and SIGHUP are deferred ([`SignalsDeferred`]) until it has been
//! renamed or removed, so an interrupted run leaves no temporary file behind.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicU64, AtomicUsize, Ordering};

/// Files larger than this are reported and skipped. The parser and the interpreter are
/// linear, but the IR and the analysis of a file take about 130× its size in memory (a
/// 16 MiB file about 2 GB), and a larger generated file is not model code.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

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

/// A temporary file created exclusively under a random name; removed when dropped unless
/// it was renamed away (a file someone else put at its name is never removed).
pub struct TempFile {
    path: PathBuf,
    file: File,
    /// The inode created, to tell it from whatever else may later have this name.
    ino: u64,
    /// Dropped after the file is gone (fields drop after `Drop::drop`).
    _signals: SignalsDeferred,
}

/// How many random names [`TempFile::create_in`] tries before giving up.
const TEMP_NAME_TRIES: usize = 32;

impl TempFile {
    /// A new empty file `dir/{prefix}{random}.tmp`, mode 0600, opened for reading and
    /// writing. Never follows or truncates anything that is already there.
    pub fn create_in(dir: &Path, prefix: &str) -> io::Result<TempFile> {
        let signals = SignalsDeferred::new();
        for _ in 0..TEMP_NAME_TRIES {
            let path = dir.join(format!("{prefix}{}.tmp", random_hex()));
            match create_exclusive(&path) {
                Ok(file) => {
                    let ino = match file.metadata() {
                        Ok(meta) => inode(&meta),
                        Err(e) => {
                            let _ = std::fs::remove_file(&path);
                            return Err(e);
                        }
                    };
                    return Ok(TempFile {
                        path,
                        file,
                        ino,
                        _signals: signals,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("no free temporary name in {}", dir.display()),
        ))
    }

    /// A temporary file beside `target` (`.{name}.stridelint-{random}.tmp`).
    pub fn beside(target: &Path) -> io::Result<TempFile> {
        let dir = target
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        TempFile::create_in(dir, &format!(".{name}.stridelint-"))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn file(&mut self) -> &mut File {
        &mut self.file
    }

    /// The inode of the file created.
    pub fn ino(&self) -> u64 {
        self.ino
    }

    /// Does the temporary name still name the file created?
    pub fn still_ours(&self) -> bool {
        std::fs::symlink_metadata(&self.path).is_ok_and(|meta| inode(&meta) == self.ino)
    }

    /// Rename the file over `target` (which, if it is a symbolic link, is replaced, never
    /// followed).
    pub fn rename_to(self, target: &Path) -> io::Result<()> {
        std::fs::rename(&self.path, target)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if self.still_ours() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// `path` opened as a new file: fails if anything, a dangling link included, is there.
fn create_exclusive(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    }
    options.open(path)
}

/// 64 unpredictable bits as hex: `RandomState` is seeded from the OS's random source.
fn random_hex() -> String {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    format!("{:016x}", hasher.finish())
}

fn inode(meta: &std::fs::Metadata) -> u64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        0
    }
}

/// Refuses to replace a read-only file. As root, which may write any file, "read-only"
/// means no write bit at all (`chmod a-w` is how a file is marked so); otherwise the
/// kernel's own answer for the effective user (`faccessat(W_OK, AT_EACCESS)`) decides.
#[cfg(unix)]
pub fn refuse_read_only(path: &Path, meta: &std::fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o7777;
    // SAFETY: `geteuid` has no preconditions.
    let writable = if unsafe { libc::geteuid() } == 0 {
        mode & 0o222 != 0
    } else {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| io::Error::other("a path holds a NUL byte"))?;
        // SAFETY: a valid NUL-terminated path.
        unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) == 0 }
    };
    if writable {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("the file is read-only (mode {mode:04o}); it was left unchanged"),
    ))
}

#[cfg(not(unix))]
pub fn refuse_read_only(_: &Path, meta: &std::fs::Metadata) -> io::Result<()> {
    if meta.permissions().readonly() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "the file is read-only; it was left unchanged",
        ));
    }
    Ok(())
}

/// Gives the temporary file `tmp` the owner, group and mode of `original` before it takes
/// its place; an error when the owner cannot be kept (only root may give a file away), so
/// that replacing a file never hands it to another user.
#[cfg(unix)]
pub fn copy_owner_and_mode(tmp: &File, original: &std::fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let ours = tmp.metadata()?;
    if (ours.uid(), ours.gid()) != (original.uid(), original.gid()) {
        std::os::unix::fs::fchown(tmp, Some(original.uid()), Some(original.gid())).map_err(
            |e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "cannot keep the file's owner {}:{} ({e}); it was left unchanged",
                        original.uid(),
                        original.gid()
                    ),
                )
            },
        )?;
    }
    // After the owner: changing the owner clears set-user-ID and set-group-ID bits.
    tmp.set_permissions(std::fs::Permissions::from_mode(
        original.permissions().mode() & 0o7777,
    ))
}

#[cfg(not(unix))]
pub fn copy_owner_and_mode(tmp: &File, original: &std::fs::Metadata) -> io::Result<()> {
    tmp.set_permissions(original.permissions())
}

/// [`SignalsDeferred`] guards alive (writes under way); while any is, termination signals wait.
static WRITES_IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
/// A termination signal that arrived while files were in flight (0: none).
static PENDING_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// While one of these lives, SIGINT, SIGTERM and SIGHUP are held back: the handler only
/// notes the signal, and the last guard dropped re-raises it with its default action (so
/// the exit status is still "killed by SIGINT"). With no guard alive the handler re-raises
/// at once. The wait is bounded by one file's write. A disposition other than the default
/// (a signal ignored under `nohup`) is left alone.
pub struct SignalsDeferred(());

impl SignalsDeferred {
    pub fn new() -> Self {
        install_handler();
        WRITES_IN_FLIGHT.fetch_add(1, Ordering::SeqCst);
        SignalsDeferred(())
    }
}

impl Default for SignalsDeferred {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for SignalsDeferred {
    fn drop(&mut self) {
        // Either this sees the handler's signal, or the handler sees the count at zero.
        if WRITES_IN_FLIGHT.fetch_sub(1, Ordering::SeqCst) == 1 {
            let signal = PENDING_SIGNAL.load(Ordering::SeqCst);
            if signal != 0 {
                die_of(signal);
            }
        }
    }
}

#[cfg(unix)]
const DEFERRED_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

#[cfg(unix)]
fn install_handler() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        for signal in DEFERRED_SIGNALS {
            // SAFETY: `sigaction` with a zeroed (empty-mask) struct and a handler that only
            // touches atomics and calls async-signal-safe functions.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, std::ptr::null(), &mut old) != 0
                    || old.sa_sigaction != libc::SIG_DFL
                {
                    continue;
                }
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_termination_signal as extern "C" fn(libc::c_int) as usize;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
    });
}

#[cfg(unix)]
extern "C" fn on_termination_signal(signal: libc::c_int) {
    PENDING_SIGNAL.store(signal, Ordering::SeqCst);
    if WRITES_IN_FLIGHT.load(Ordering::SeqCst) == 0 {
        die_of(signal);
    }
}

/// Ends the process by `signal` with its default action. Async-signal-safe.
#[cfg(unix)]
fn die_of(signal: libc::c_int) {
    // SAFETY: resetting a disposition and raising a signal are async-signal-safe. Inside
    // the handler the signal stays blocked until it returns, then ends the process.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

#[cfg(not(unix))]
fn install_handler() {}

#[cfg(not(unix))]
fn die_of(_: i32) {}

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

    #[test]
    fn temporary_files_never_open_what_is_there_and_clean_up() {
        let dir = tempfile::tempdir().unwrap();
        let planted = dir.path().join("planted.tmp");
        std::os::unix::fs::symlink(dir.path().join("victim"), &planted).unwrap();
        let err = create_exclusive(&planted).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert!(!dir.path().join("victim").exists());
        let dropped = TempFile::create_in(dir.path(), ".t.").unwrap();
        let path = dropped.path().to_path_buf();
        assert!(path.is_file());
        drop(dropped);
        assert!(!path.exists());
        let kept = TempFile::create_in(dir.path(), ".t.").unwrap();
        kept.rename_to(&dir.path().join("kept")).unwrap();
        assert!(dir.path().join("kept").is_file());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
