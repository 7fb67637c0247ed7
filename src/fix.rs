//! Applying fixes: `--fix` (safe fixes), `--unsafe-fixes` (unsafe ones too) and `--diff`.
//!
//! Edits of one file are applied together, non-overlapping, in order. A file is written
//! only if its content on disk is still exactly the content that was linted (so an editor
//! saving in between never loses data), through a temporary file in the same directory and
//! an atomic exchange or rename ([`write_fixed`] has the protocol and what it cannot
//! prevent). A symbolic link is fixed where it points; a read-only file is refused, and a
//! replaced file keeps its owner and mode.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::diagnostic::{Applicability, Diagnostic, Edit};

/// Which fixes to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixMode {
    Safe,
    /// Safe and unsafe fixes.
    Unsafe,
}

fn wanted(app: Applicability, mode: FixMode) -> bool {
    app == Applicability::Safe || mode == FixMode::Unsafe
}

/// The fix `--fix` applies to `d` in `mode`: under `--unsafe-fixes` its unsafe
/// alternative when it has one, else its fix if that is wanted.
pub fn chosen_fix(d: &Diagnostic, mode: FixMode) -> Option<&crate::diagnostic::Fix> {
    let alternative = d.unsafe_fix.as_ref().filter(|_| mode == FixMode::Unsafe);
    alternative
        .or(d.fix.as_ref())
        .filter(|fix| wanted(fix.applicability, mode))
}

/// The fixed text of each file that has applicable fixes: (path, original, fixed, fixes applied).
pub fn plan_fixes(
    diagnostics: &[Diagnostic],
    mode: FixMode,
) -> Vec<(PathBuf, String, String, usize)> {
    let mut by_file: BTreeMap<PathBuf, (&str, Vec<&Edit>, usize)> = BTreeMap::new();
    for d in diagnostics {
        let Some(fix) = chosen_fix(d, mode) else {
            continue;
        };
        let entry =
            by_file
                .entry(d.file.path.clone())
                .or_insert((d.file.text.as_str(), Vec::new(), 0));
        entry.1.extend(fix.edits.iter());
        entry.2 += 1;
    }
    by_file
        .into_iter()
        .filter_map(|(path, (text, edits, n))| {
            let fixed = apply_edits(text, &edits)?;
            (fixed != text).then(|| (path, text.to_string(), fixed, n))
        })
        .collect()
}

/// The edits that are applied together: in order, repeats dropped, and each one that
/// overlaps an earlier one skipped (a second `--fix` run picks it up).
pub fn non_overlapping<'e>(edits: &[&'e Edit]) -> Vec<&'e Edit> {
    let mut sorted: Vec<&Edit> = edits.to_vec();
    sorted.sort_by_key(|e| (e.span.start, e.span.end));
    sorted.dedup_by(|a, b| a.span == b.span && a.content == b.content);
    let mut end = 0;
    sorted.retain(|e| {
        let keep = e.span.start >= end;
        if keep {
            end = e.span.end.max(e.span.start);
        }
        keep
    });
    sorted
}

/// Apply edits to `text` ([`non_overlapping`] ones). `None` if an edit is outside the text.
pub fn apply_edits(text: &str, edits: &[&Edit]) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 64);
    let mut pos = 0usize;
    for e in non_overlapping(edits) {
        let (s, t) = (e.span.start as usize, e.span.end as usize);
        if t > text.len() || !text.is_char_boundary(s) || !text.is_char_boundary(t) {
            return None;
        }
        out.push_str(&text[pos..s]);
        out.push_str(&e.content);
        pos = t;
    }
    out.push_str(&text[pos..]);
    Some(out)
}

#[derive(Debug)]
pub enum WriteOutcome {
    Written,
    /// The file changed on disk since it was read; nothing was written.
    ChangedOnDisk,
}

/// Replace `path`'s content with `fixed`, atomically, if it still holds `original`.
///
/// A symbolic link is followed, as Ruff does: the file it points to is fixed and the link
/// stays a link (it is never replaced by a regular file).
///
/// **Never a file it should not touch.** A read-only file is refused
/// ([`crate::fsutil::refuse_read_only`]); the replacement gets the file's owner, group and
/// mode, or the file is refused when its owner cannot be kept; the temporary file is a
/// [`crate::fsutil::TempFile`] (exclusive, random name, a planted link never followed),
/// and a SIGINT/SIGTERM waits until it is renamed or removed.
///
/// **Compare and swap.** The OS has no "rename if the target still holds these bytes", so
/// the check is made as close to the swap as it can be, and undone when it was beaten:
/// 1. the file is opened, and its content compared with `original` through that descriptor;
/// 2. the fixed text is written to a temporary file next to it and synced;
/// 3. right before the swap, the path must still name the same file (device and inode)
///    with the same size and modification time (an editor that saved in the meantime,
///    in place or by renaming a new file over it, changed one of them);
/// 4. the swap: on Linux `renameat2(RENAME_EXCHANGE)` exchanges the two names atomically,
///    and the file that was swapped out is checked again — the same inode, unchanged size
///    and modification time, and still `original` byte for byte. If not, whatever an
///    editor put there in the instant between step 3 and the swap is exchanged back, and
///    the fix is reported as [`WriteOutcome::ChangedOnDisk`]. Elsewhere (or on a file
///    system without the exchange) a plain `rename` is used, and an in-place write that
///    landed on the old file in that instant is still seen through the open descriptor
///    and written back.
///
/// The remaining window: a write *after* the swapped-out file was checked, through a
/// descriptor opened before the swap (an editor writing in place very slowly), goes to the
/// old file, which is then removed; and without the exchange, a new file renamed over the
/// path between step 3 and the `rename` (a few microseconds) is replaced. An editor that
/// saves by renaming — nearly all do — cannot lose data with the exchange.
pub fn write_fixed(path: &Path, original: &str, fixed: &str) -> std::io::Result<WriteOutcome> {
    write_fixed_racing(path, original, fixed, &mut || {})
}

/// [`write_fixed`], running `before_swap` between the last check and the swap (tests put
/// a concurrent edit there).
fn write_fixed_racing(
    path: &Path,
    original: &str,
    fixed: &str,
    before_swap: &mut dyn FnMut(),
) -> std::io::Result<WriteOutcome> {
    // Also over the restore after a plain rename: an interrupt never splits the two.
    let _signals = crate::fsutil::SignalsDeferred::new();
    let target = std::fs::canonicalize(path)?;
    let mut file = crate::fsutil::open_regular(&target)?;
    let meta = file.metadata()?;
    let stamp = Stamp::of(&meta);
    if !holds(&mut file, original)? {
        return Ok(WriteOutcome::ChangedOnDisk);
    }
    crate::fsutil::refuse_read_only(&target, &meta)?;
    // Dropping `tmp` removes the temporary name unless it was renamed away, or a swap put
    // another file there (which `swap_in` removes when it is the checked original, and
    // keeps when it is not).
    let tmp = staged(&target, fixed.as_bytes(), &meta)?;
    if Stamp::of(&std::fs::metadata(&target)?) != stamp {
        return Ok(WriteOutcome::ChangedOnDisk);
    }
    before_swap();
    swap_in(tmp, &target, &mut file, stamp, original)
}

/// A temporary file beside `target` holding `bytes`, synced, with `like`'s owner and mode.
fn staged(
    target: &Path,
    bytes: &[u8],
    like: &std::fs::Metadata,
) -> std::io::Result<crate::fsutil::TempFile> {
    let mut tmp = crate::fsutil::TempFile::beside(target)?;
    crate::fsutil::copy_owner_and_mode(tmp.file(), like)?;
    tmp.file().write_all(bytes)?;
    tmp.file().sync_all()?;
    Ok(tmp)
}

/// What identifies one version of a file: device, inode, size, modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        let (dev, ino) = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let (dev, ino) = (0, 0);
        Stamp {
            dev,
            ino,
            len: meta.len(),
            modified: meta.modified().ok(),
        }
    }
}

/// Does `file` (read from its start) hold exactly `expected`?
fn holds(file: &mut std::fs::File, expected: &str) -> std::io::Result<bool> {
    use std::io::{Read, Seek};
    file.seek(std::io::SeekFrom::Start(0))?;
    let mut current = Vec::with_capacity(expected.len() + 1);
    file.take(expected.len() as u64 + 1)
        .read_to_end(&mut current)?;
    Ok(current == expected.as_bytes())
}

/// Puts `tmp` (the fixed text) at `target`, whose checked version is `file` / `stamp`
/// holding `original`; see [`write_fixed`] for the protocol.
fn swap_in(
    tmp: crate::fsutil::TempFile,
    target: &Path,
    file: &mut std::fs::File,
    stamp: Stamp,
    original: &str,
) -> std::io::Result<WriteOutcome> {
    // Is the file that was at `target` (now at `at`) still the version that was checked?
    let unchanged = |file: &mut std::fs::File, at: &Path| -> std::io::Result<bool> {
        let there = Stamp::of(&std::fs::symlink_metadata(at)?);
        Ok(there == stamp && Stamp::of(&file.metadata()?) == stamp && holds(file, original)?)
    };
    if exchange(tmp.path(), target)? {
        if unchanged(file, tmp.path())? {
            // The temporary name now names the checked original: done with it.
            let _ = std::fs::remove_file(tmp.path());
            return Ok(WriteOutcome::Written);
        }
        // Beaten in the instant before the swap: put back what is theirs.
        let back_in_place = exchange(tmp.path(), target)? && tmp.still_ours();
        if !back_in_place {
            return Err(std::io::Error::other(format!(
                "{} changed while the fix was written; the fixed text was left in place, the other version at {}",
                target.display(),
                tmp.path().display()
            )));
        }
        return Ok(WriteOutcome::ChangedOnDisk);
    }
    tmp.rename_to(target)?;
    if Stamp::of(&file.metadata()?) == stamp && holds(file, original)? {
        return Ok(WriteOutcome::Written);
    }
    // Someone wrote into the old file in place just before the rename: restore their text.
    use std::io::{Read, Seek};
    file.seek(std::io::SeekFrom::Start(0))?;
    let mut theirs = Vec::new();
    file.read_to_end(&mut theirs)?;
    staged(target, &theirs, &file.metadata()?)?.rename_to(target)?;
    Ok(WriteOutcome::ChangedOnDisk)
}

/// Exchanges the names `a` and `b` atomically (`renameat2(RENAME_EXCHANGE)`); `false`
/// where the OS or the file system cannot.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<bool> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::other("a path holds a NUL byte"))
    };
    let (a, b) = (c(a)?, c(b)?);
    // SAFETY: two valid NUL-terminated paths, relative to the current directory.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if rc == 0 {
        return Ok(true);
    }
    let error = std::io::Error::last_os_error();
    match error.raw_os_error() {
        Some(libc::EINVAL | libc::ENOSYS | libc::ENOTSUP) => Ok(false),
        _ => Err(error),
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> std::io::Result<bool> {
    Ok(false)
}

/// A unified diff of one file (for `--diff`): only the changed lines, in hunks with 3 lines
/// of context as `diff -u` makes them (two edits far apart are two hunks).
pub fn unified_diff(path: &Path, original: &str, fixed: &str) -> String {
    let name = path.display().to_string();
    similar::TextDiff::from_lines(original, fixed)
        .unified_diff()
        .context_radius(3)
        .header(&name, &name)
        .to_string()
}

/// A planned rewrite of one file: (path, text linted, text after the edits, edits applied),
/// as [`plan_fixes`] and `noqa::plan_add_noqa` produce them.
pub type Plan = (std::path::PathBuf, String, String, usize);

/// Plans over linted text turned into plans over file contents: a notebook's plan becomes
/// (its JSON as read, the JSON with the edited cells); other plans pass through. A
/// notebook whose edit cannot be written back is returned as an error instead.
pub fn plans_on_disk(
    diagnostics: &[crate::diagnostic::Diagnostic],
    plans: Vec<Plan>,
) -> (Vec<Plan>, Vec<crate::FileError>) {
    let mut on_disk = Vec::with_capacity(plans.len());
    let mut errors = Vec::new();
    for (path, original, fixed, count) in plans {
        let notebook = diagnostics
            .iter()
            .find(|d| d.file.path == path)
            .and_then(|d| d.file.notebook.as_ref());
        match notebook {
            None => on_disk.push((path, original, fixed, count)),
            Some(notebook) => match notebook.with_python(&fixed) {
                Ok(json) => on_disk.push((path, notebook.raw().to_string(), json, count)),
                Err(e) => errors.push(crate::FileError {
                    location: None,
                    path,
                    message: e.to_string(),
                }),
            },
        }
    }
    (on_disk, errors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Span;

    #[test]
    fn edits_apply_in_order_and_skip_overlaps() {
        let text = "y = x.view(2, 3)\nz = w.view(6)\n";
        let e1 = Edit {
            span: Span::new(5, 5),
            content: ".contiguous()".into(),
        };
        let e2 = Edit {
            span: Span::new(22, 22),
            content: ".contiguous()".into(),
        };
        let out = apply_edits(text, &[&e2, &e1]).unwrap();
        assert_eq!(
            out,
            "y = x.contiguous().view(2, 3)\nz = w.contiguous().view(6)\n"
        );
        // The edit that starts first wins; the overlapping later one waits for the next run.
        let overlapping = Edit {
            span: Span::new(4, 6),
            content: "X".into(),
        };
        let out = apply_edits(text, &[&e1, &overlapping]).unwrap();
        assert_eq!(out, "y = Xview(2, 3)\nz = w.view(6)\n");
    }

    #[test]
    fn write_refuses_when_file_changed_and_is_atomic_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.py");
        std::fs::write(&p, "a\n").unwrap();
        assert!(matches!(
            write_fixed(&p, "b\n", "c\n").unwrap(),
            WriteOutcome::ChangedOnDisk
        ));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a\n");
        assert!(matches!(
            write_fixed(&p, "a\n", "c\n").unwrap(),
            WriteOutcome::Written
        ));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "c\n");
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_is_fixed_where_it_points_and_stays_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.py");
        let link = dir.path().join("link.py");
        std::fs::write(&real, "a\n").unwrap();
        std::os::unix::fs::symlink("real.py", &link).unwrap();
        assert!(matches!(
            write_fixed(&link, "a\n", "b\n").unwrap(),
            WriteOutcome::Written
        ));
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "b\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    /// An editor saving in the instant between the last check and the swap — by writing in
    /// place, or by renaming a new file over the path — keeps its text: the fix is undone
    /// and reported as `ChangedOnDisk`.
    #[test]
    fn an_edit_racing_the_swap_is_never_lost() {
        type Edit = fn(&Path);
        let in_place: Edit = |p| {
            let mut f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
            // Same length: only the content (and perhaps not even the time stamp) differs.
            f.write_all(b"e\n").unwrap();
        };
        let by_rename: Edit = |p| {
            let tmp = p.with_extension("editor-tmp");
            std::fs::write(&tmp, "edited\n").unwrap();
            std::fs::rename(&tmp, p).unwrap();
        };
        for (name, edit, expected) in [
            ("in place", in_place, "e\n"),
            ("rename", by_rename, "edited\n"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("m.py");
            std::fs::write(&p, "a\n").unwrap();
            let outcome = write_fixed_racing(&p, "a\n", "fixed\n", &mut || edit(&p)).unwrap();
            assert!(
                matches!(outcome, WriteOutcome::ChangedOnDisk),
                "{name}: {outcome:?}"
            );
            assert_eq!(std::fs::read_to_string(&p).unwrap(), expected, "{name}");
            assert_eq!(
                std::fs::read_dir(dir.path()).unwrap().count(),
                1,
                "{name}: no temporary file is left"
            );
        }
    }

    #[test]
    fn diff_shows_changed_lines_with_context() {
        let d = unified_diff(Path::new("m.py"), "a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(d, "--- m.py\n+++ m.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
        // Two edits 20 lines apart: two hunks of 3 lines of context, nothing in between.
        let lines: Vec<String> = (0..30).map(|i| format!("l{i}\n")).collect();
        let original = lines.concat();
        let fixed = original.replace("l5\n", "L5\n").replace("l25\n", "L25\n");
        let d = unified_diff(Path::new("m.py"), &original, &fixed);
        assert_eq!(
            d,
            "--- m.py\n+++ m.py\n@@ -3,7 +3,7 @@\n l2\n l3\n l4\n-l5\n+L5\n l6\n l7\n l8\n\
             @@ -23,7 +23,7 @@\n l22\n l23\n l24\n-l25\n+L25\n l26\n l27\n l28\n"
        );
        // A last line without a newline says so, as diff does.
        let d = unified_diff(Path::new("m.py"), "a\nb", "a\nB");
        assert!(
            d.ends_with("-b\n\\ No newline at end of file\n+B\n\\ No newline at end of file\n"),
            "{d}"
        );
    }
}
