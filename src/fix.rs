//! Applying fixes: `--fix` (safe fixes), `--unsafe-fixes` (unsafe ones too) and `--diff`.
//!
//! Edits of one file are applied together, non-overlapping, in order. A file is written
//! only if its content on disk is still exactly the content that was linted (so an editor
//! saving in between never loses data), through a temporary file in the same directory and
//! an atomic rename.

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

/// The fixed text of each file that has applicable fixes: (path, original, fixed, fixes applied).
pub fn plan_fixes(
    diagnostics: &[Diagnostic],
    mode: FixMode,
) -> Vec<(PathBuf, String, String, usize)> {
    let mut by_file: BTreeMap<PathBuf, (&str, Vec<&Edit>, usize)> = BTreeMap::new();
    for d in diagnostics {
        let Some(fix) = &d.fix else { continue };
        if !wanted(fix.applicability, mode) {
            continue;
        }
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

/// Apply edits to `text`; overlapping edits after the first are skipped (a second
/// `--fix` run picks them up). `None` if an edit is outside the text.
pub fn apply_edits(text: &str, edits: &[&Edit]) -> Option<String> {
    let mut sorted: Vec<&Edit> = edits.to_vec();
    sorted.sort_by_key(|e| (e.span.start, e.span.end));
    sorted.dedup_by(|a, b| a.span == b.span && a.content == b.content);
    let mut out = String::with_capacity(text.len() + 64);
    let mut pos = 0usize;
    for e in sorted {
        let (s, t) = (e.span.start as usize, e.span.end as usize);
        if s < pos {
            continue;
        }
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
pub fn write_fixed(path: &Path, original: &str, fixed: &str) -> std::io::Result<WriteOutcome> {
    let current = std::fs::read(path)?;
    if current != original.as_bytes() {
        return Ok(WriteOutcome::ChangedOnDisk);
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.stridelint-{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(fixed.as_bytes())?;
        f.sync_all()?;
        if let Ok(meta) = std::fs::metadata(path) {
            let _ = std::fs::set_permissions(&tmp, meta.permissions());
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map(|_| WriteOutcome::Written)
}

/// A unified diff of one file (for `--diff`), with 3 lines of context.
pub fn unified_diff(path: &Path, original: &str, fixed: &str) -> String {
    let a: Vec<&str> = original.split_inclusive('\n').collect();
    let b: Vec<&str> = fixed.split_inclusive('\n').collect();
    // Fixes change few lines: diff the region between the common prefix and suffix.
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a_end, b_end) = (a.len() - suffix, b.len() - suffix);
    let ctx_start = prefix.saturating_sub(3);
    let a_ctx_end = (a_end + 3).min(a.len());
    let b_ctx_end = (b_end + 3).min(b.len());
    let mut out = format!("--- {}\n+++ {}\n", path.display(), path.display());
    out.push_str(&format!(
        "@@ -{},{} +{},{} @@\n",
        ctx_start + 1,
        a_ctx_end - ctx_start,
        ctx_start + 1,
        b_ctx_end - ctx_start
    ));
    let line = |prefix: char, l: &str, out: &mut String| {
        out.push(prefix);
        out.push_str(l);
        if !l.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    };
    for l in &a[ctx_start..prefix] {
        line(' ', l, &mut out);
    }
    for l in &a[prefix..a_end] {
        line('-', l, &mut out);
    }
    for l in &b[prefix..b_end] {
        line('+', l, &mut out);
    }
    for l in &a[a_end..a_ctx_end] {
        line(' ', l, &mut out);
    }
    out
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

    #[test]
    fn diff_shows_changed_lines_with_context() {
        let d = unified_diff(Path::new("m.py"), "a\nb\nc\n", "a\nB\nc\n");
        assert!(d.contains("-b\n+B\n"), "{d}");
        assert!(
            d.starts_with("--- m.py\n+++ m.py\n@@ -1,3 +1,3 @@\n"),
            "{d}"
        );
    }
}
