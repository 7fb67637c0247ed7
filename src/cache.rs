//! The result cache: a file whose content, settings and stridelint build are unchanged since
//! the last run gets its findings from `.stridelint_cache/` instead of being analysed again.
//!
//! **Keys.** An entry is stored under the file's absolute path and is valid only while three
//! things match: the BLAKE3 hash of the file's bytes (content, not modification time: a
//! checkout or `touch` that leaves the bytes alone keeps the entry), the hash of the
//! file's [`Settings`] (their `Debug` text — every field that can change a finding is in
//! it, and a field added later is covered without touching this file), and the *tool
//! stamp*: the version plus the size and modification time of the running executable, so
//! that a rebuilt stridelint with a changed analysis never serves stale findings.
//!
//! **Storage.** One JSON file per version, `<cache-dir>/<version>/results.json`, read once
//! at start and written once at the end (atomically: an exclusive temporary file under a
//! random name, [`crate::fsutil::TempFile`], then rename) — much faster than one file per
//! source file on trees of thousands of files. Two concurrent runs can only lose each
//! other's new entries, never corrupt the file. Entries of files that no longer exist are
//! dropped when the cache is saved. As with Ruff, the directory holds a `.gitignore` (`*`)
//! and a `CACHEDIR.TAG`, so neither git nor backup tools pick it up (each created only if
//! nothing is at its name: a planted link is never written through).
//!
//! **Checksums.** Each entry carries a [`checksum`] of its path and content keyed by the tool
//! stamp; an entry that fails it (edited by hand into other valid JSON, moved to another
//! path, written by another build) is dropped and its file analysed again, as is an entry
//! naming a code this build does not know.
//!
//! **What is stored.** A serializable copy of each finding without its file: code,
//! severity, message, span, chain labels, notes, help and fix. The symbolic *subject* of a
//! view/copy finding (its layout, for `--verify` and the JSON formats) has no serialized
//! form, so it is not stored; the entry only records that the finding had one, and a run
//! that shows subjects ([`Cache::with_subjects_needed`]) analyses such files again. Findings
//! of `--verify` are never cached (the CLI bypasses the cache then): measurements are the
//! point of that run. Nor are fixes ever applied from the cache: a run with `--fix` or
//! `--diff` analyses every file whose cached findings carry fixes again
//! ([`Cache::with_fixes_needed`]), so a tampered cache cannot make `--fix` write code.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::diagnostic::{Applicability, Diagnostic, Edit, Fix, Label, Severity};
use crate::ir::Span;
use crate::settings::Settings;
use crate::source::SourceFile;

/// The cache directory's default name, in the project root (excluded from discovery).
pub const DEFAULT_DIR: &str = ".stridelint_cache";

/// What identifies one analysis of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheKey {
    content: String,
    settings: String,
}

impl CacheKey {
    /// The key of linting `content` (the file's bytes) with `settings`.
    pub fn new(content: &[u8], settings: &Settings) -> Self {
        CacheKey {
            content: blake3::hash(content).to_hex().to_string(),
            settings: blake3::hash(format!("{settings:?}").as_bytes())
                .to_hex()
                .to_string(),
        }
    }
}

/// The results of one run's worth of files, loaded from and saved to disk.
pub struct Cache {
    file: PathBuf,
    tool: String,
    /// Entries read at start.
    previous: HashMap<PathBuf, Entry>,
    /// Entries used or created in this run.
    current: Mutex<HashMap<PathBuf, Entry>>,
    /// Entries whose findings had subjects are misses (see the module documentation).
    subjects_needed: bool,
    /// Entries whose findings have fixes are misses: `--fix` and `--diff` apply fixes, and a
    /// fix read back from the cache is only as trustworthy as the cache file (anything that
    /// can write there could make `--fix` write arbitrary code), so they are recomputed.
    fixes_needed: bool,
    hits: AtomicUsize,
    misses: AtomicUsize,
    /// Entries stored by `put` in this run (if none and none was dropped, `save` has
    /// nothing to write).
    stored: AtomicUsize,
    /// The current blake3 of each file some entry depends on (`None`: unreadable), read
    /// once per run however many files import it.
    dependency_hashes: Mutex<HashMap<PathBuf, Option<String>>>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    content: String,
    settings: String,
    diagnostics: Vec<CachedDiagnostic>,
    /// Other files whose definitions the analysis used (absolute path, blake3 of their
    /// bytes then): the entry is stale when one of them changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    depends_on: Vec<(String, String)>,
}

#[derive(Serialize, Deserialize)]
struct CacheFile {
    tool: String,
    entries: Vec<StoredEntry>,
}

#[derive(Serialize, Deserialize)]
struct StoredEntry {
    path: String,
    #[serde(flatten)]
    entry: Entry,
    /// [`checksum`] of the path and entry; an entry without a matching one is dropped.
    #[serde(default)]
    checksum: String,
}

impl StoredEntry {
    fn new(tool: &str, path: String, entry: Entry) -> Self {
        let checksum = checksum(tool, &path, &entry);
        StoredEntry {
            path,
            entry,
            checksum,
        }
    }

    /// Was this entry written, as it is, for this path by this build?
    fn is_intact(&self, tool: &str) -> bool {
        self.checksum == checksum(tool, &self.path, &self.entry)
    }
}

/// A BLAKE3 hash, keyed by the tool stamp, of a path and its entry as serialized: any edit
/// of an entry (another message, code, span or fix text, an entry moved to another path)
/// makes it fail. It guards against edits and corruption, not against a forger who
/// recomputes it; fixes are never taken from the cache in any case.
fn checksum(tool: &str, path: &str, entry: &Entry) -> String {
    let key = blake3::derive_key("stridelint results cache entry v1", tool.as_bytes());
    let mut hasher = blake3::Hasher::new_keyed(&key);
    hasher.update(path.as_bytes());
    hasher.update(&[0]);
    hasher.update(&serde_json::to_vec(entry).unwrap_or_default());
    hasher.finalize().to_hex().to_string()
}

/// A finding without its file, as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CachedDiagnostic {
    code: String,
    error: bool,
    /// An info (neither error nor warning); absent in entries written before infos existed.
    #[serde(default)]
    info: bool,
    message: String,
    span: (u32, u32),
    chain: Vec<((u32, u32), String)>,
    notes: Vec<String>,
    help: Option<String>,
    fix: Option<CachedFix>,
    /// The finding had a subject, which was not stored.
    #[serde(default)]
    had_subject: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct CachedFix {
    message: String,
    safe: bool,
    edits: Vec<((u32, u32), String)>,
}

impl CachedDiagnostic {
    fn new(d: &Diagnostic) -> Self {
        CachedDiagnostic {
            code: d.code.to_string(),
            error: d.severity == Severity::Error,
            info: d.severity == Severity::Info,
            message: d.message.clone(),
            span: (d.span.start, d.span.end),
            chain: d
                .chain
                .iter()
                .map(|l| ((l.span.start, l.span.end), l.message.clone()))
                .collect(),
            notes: d.notes.clone(),
            help: d.help.clone(),
            fix: d.fix.as_ref().map(|f| CachedFix {
                message: f.message.clone(),
                safe: f.applicability == Applicability::Safe,
                edits: f
                    .edits
                    .iter()
                    .map(|e| ((e.span.start, e.span.end), e.content.clone()))
                    .collect(),
            }),
            had_subject: d.subject.is_some(),
        }
    }

    /// The finding again, attached to `file`. `None` for a code this build does not know
    /// (the tool stamp makes that unlikely, but a hand-edited cache must not crash a run).
    fn restore(&self, file: &Arc<SourceFile>) -> Option<Diagnostic> {
        let code = static_code(&self.code)?;
        let span = |(start, end): (u32, u32)| Span { start, end };
        Some(Diagnostic {
            code,
            severity: if self.error {
                Severity::Error
            } else if self.info {
                Severity::Info
            } else {
                Severity::Warning
            },
            message: self.message.clone(),
            file: file.clone(),
            span: span(self.span),
            chain: self
                .chain
                .iter()
                .map(|(s, m)| Label {
                    span: span(*s),
                    message: m.clone(),
                })
                .collect(),
            notes: self.notes.clone(),
            help: self.help.clone(),
            fix: self.fix.as_ref().map(|f| Fix {
                message: f.message.clone(),
                applicability: if f.safe {
                    Applicability::Safe
                } else {
                    Applicability::Unsafe
                },
                edits: f
                    .edits
                    .iter()
                    .map(|(s, c)| Edit {
                        span: span(*s),
                        content: c.clone(),
                    })
                    .collect(),
            }),
            unsafe_fix: None,
            verify: None,
            copy: None,
            subject: None,
        })
    }
}

/// Diagnostics carry their code as `&'static str`: find it among the known ones.
fn static_code(code: &str) -> Option<&'static str> {
    crate::settings::known_codes()
        .into_iter()
        .find(|c| *c == code)
}

/// Restores cached findings onto the file they were computed for.
pub fn restore(cached: &[CachedDiagnostic], file: &Arc<SourceFile>) -> Option<Vec<Diagnostic>> {
    cached.iter().map(|c| c.restore(file)).collect()
}

impl Cache {
    /// Open the cache under `dir`. A missing, unreadable, corrupt or other-build cache is
    /// simply empty: the cache is an optimisation and never an error.
    pub fn open(dir: &Path) -> Cache {
        let file = dir.join(env!("CARGO_PKG_VERSION")).join("results.json");
        let tool = tool_stamp();
        let previous = crate::fsutil::read_regular(&file, None)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<CacheFile>(&bytes).ok())
            .filter(|stored| stored.tool == tool)
            .map(|stored| {
                stored
                    .entries
                    .into_iter()
                    .filter(|e| e.is_intact(&tool))
                    .map(|e| (PathBuf::from(e.path), e.entry))
                    .collect()
            })
            .unwrap_or_default();
        Cache {
            file,
            tool,
            previous,
            current: Mutex::new(HashMap::new()),
            subjects_needed: false,
            fixes_needed: false,
            hits: AtomicUsize::new(0),
            misses: AtomicUsize::new(0),
            stored: AtomicUsize::new(0),
            dependency_hashes: Mutex::default(),
        }
    }

    /// For runs whose output shows findings' subjects (the JSON formats): a file whose
    /// cached findings had subjects is analysed again rather than shown without them.
    pub fn with_subjects_needed(mut self, needed: bool) -> Self {
        self.subjects_needed = needed;
        self
    }

    /// For runs that apply or show fixes (`--fix`, `--diff`): a file whose cached findings
    /// carry fixes is analysed again, so that every edit written comes from this run's
    /// analysis of the text on disk, never from the cache file.
    pub fn with_fixes_needed(mut self, needed: bool) -> Self {
        self.fixes_needed = needed;
        self
    }

    /// The findings stored for `path` under `key`, if any.
    pub fn get(&self, path: &Path, key: &CacheKey) -> Option<Vec<CachedDiagnostic>> {
        let path = absolute(path);
        let hit = self.previous.get(&path).filter(|e| {
            e.content == key.content
                && e.settings == key.settings
                && !(self.subjects_needed && e.diagnostics.iter().any(|d| d.had_subject))
                && !(self.fixes_needed && e.diagnostics.iter().any(|d| d.fix.is_some()))
                && e.depends_on
                    .iter()
                    .all(|(dep, hash)| self.unchanged(Path::new(dep), hash))
        });
        match hit {
            Some(entry) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                self.lock().insert(path, entry.clone());
                Some(entry.diagnostics.clone())
            }
            None => {
                self.misses.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// Does the file at `path` still hash to `hash`? (Unreadable: no.)
    fn unchanged(&self, path: &Path, hash: &str) -> bool {
        let mut known = self
            .dependency_hashes
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let now = known.entry(path.to_path_buf()).or_insert_with(|| {
            crate::fsutil::read_regular(path, Some(crate::fsutil::MAX_FILE_BYTES))
                .ok()
                .map(|bytes| blake3::hash(&bytes).to_hex().to_string())
        });
        now.as_deref() == Some(hash)
    }

    /// Remember the findings of `path` under `key`.
    pub fn put(
        &self,
        path: &Path,
        key: CacheKey,
        diagnostics: &[Diagnostic],
        depends_on: &[(Arc<Path>, String)],
    ) {
        let entry = Entry {
            content: key.content,
            settings: key.settings,
            diagnostics: diagnostics.iter().map(CachedDiagnostic::new).collect(),
            depends_on: depends_on
                .iter()
                .map(|(p, h)| (absolute(p).to_string_lossy().into_owned(), h.clone()))
                .collect(),
        };
        self.lock().insert(absolute(path), entry);
        self.stored.fetch_add(1, Ordering::Relaxed);
    }

    /// Files served from the cache so far.
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::Relaxed)
    }

    /// Files that had to be analysed.
    pub fn misses(&self) -> usize {
        self.misses.load(Ordering::Relaxed)
    }

    /// Write the cache back: this run's entries, plus earlier entries of files this run did
    /// not look at that still exist. Nothing is written when nothing changed.
    pub fn save(&self) -> std::io::Result<()> {
        let current = self.lock();
        let kept: Vec<(&PathBuf, &Entry)> = self
            .previous
            .iter()
            .filter(|(p, _)| !current.contains_key(*p) && p.exists())
            .collect();
        let unchanged = self.stored.load(Ordering::Relaxed) == 0
            && kept.len() + current.len() == self.previous.len();
        if unchanged {
            return Ok(());
        }
        let mut entries: Vec<StoredEntry> = current
            .iter()
            .chain(kept)
            .filter_map(|(p, e)| {
                Some(StoredEntry::new(
                    &self.tool,
                    p.to_str()?.to_string(),
                    e.clone(),
                ))
            })
            .collect();
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        let stored = CacheFile {
            tool: self.tool.clone(),
            entries,
        };
        let dir = self
            .file
            .parent()
            .expect("the results file is inside the cache directory");
        std::fs::create_dir_all(dir)?;
        mark_cache_dir(dir.parent().unwrap_or(dir))?;
        // Exclusive and random: a name planted in the cache directory is never opened.
        let mut tmp = crate::fsutil::TempFile::create_in(dir, ".results.")?;
        let mut writer = std::io::BufWriter::new(tmp.file());
        serde_json::to_writer(&mut writer, &stored)?;
        writer.flush()?;
        drop(writer);
        tmp.rename_to(&self.file)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Entry>> {
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The signature line of the `CACHEDIR.TAG` stridelint writes; [`remove`] deletes only a
/// directory that has it.
const TAG_SIGNATURE: &str = "Signature: 8a477f597d28d172789f06886806bc55";

/// `stridelint clean`: delete the cache directory `dir`. `Ok(false)` when there is none;
/// an error, and nothing deleted, when `dir` is not a cache stridelint made (its
/// `CACHEDIR.TAG` is missing or was not written by stridelint), so that `--cache-dir` naming
/// the wrong directory cannot delete it.
pub fn remove(dir: &Path) -> std::io::Result<bool> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
        Ok(meta) if !meta.is_dir() => {
            return Err(std::io::Error::other("not a directory; not removed"))
        }
        Ok(_) => {}
    }
    let tag = crate::fsutil::read_regular_to_string(&dir.join("CACHEDIR.TAG")).unwrap_or_default();
    if !(tag.starts_with(TAG_SIGNATURE) && tag.contains("created by stridelint")) {
        return Err(std::io::Error::other(
            "not a stridelint cache (no CACHEDIR.TAG written by stridelint); not removed",
        ));
    }
    std::fs::remove_dir_all(dir)?;
    Ok(true)
}

/// Every `.stridelint_cache` directory below `root` (not following symbolic links, not
/// looking inside `.git` or inside a cache).
pub fn find_caches(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            let name = entry.file_name();
            if !is_dir || name == ".git" {
                continue;
            }
            if name == DEFAULT_DIR {
                found.push(entry.path());
            } else {
                stack.push(entry.path());
            }
        }
    }
    found.sort();
    found
}

/// Keep the cache out of git and backups, as Ruff does.
fn mark_cache_dir(dir: &Path) -> std::io::Result<()> {
    create_once(
        &dir.join(".gitignore"),
        "# Automatically created by stridelint.\n*\n",
    )?;
    create_once(
        &dir.join("CACHEDIR.TAG"),
        &format!("{TAG_SIGNATURE}\n# This file is a cache directory tag created by stridelint.\n"),
    )
}

/// Writes `text` to `path` if nothing is there: created exclusively, so that whatever is
/// there already (a symbolic link included) is left alone and never written through.
fn create_once(path: &Path, text: &str) -> std::io::Result<()> {
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path);
    match created {
        Ok(mut file) => file.write_all(text.as_bytes()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// The version and the identity of the running executable (size, modification time).
fn tool_stamp() -> String {
    let exe = std::env::current_exe().and_then(std::fs::metadata).ok();
    let (len, modified) = match exe {
        Some(meta) => {
            let modified = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            (meta.len(), modified)
        }
        None => (0, 0),
    };
    format!("{} exe:{len}:{modified}", env!("CARGO_PKG_VERSION"))
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(file: &Arc<SourceFile>) -> Diagnostic {
        Diagnostic {
            code: "SL001",
            severity: Severity::Error,
            message: "`.view(-1)` cannot work".into(),
            file: file.clone(),
            span: Span::new(4, 14),
            chain: vec![Label {
                span: Span::new(0, 3),
                message: "after `.t()`".into(),
            }],
            notes: vec!["assumes `x` enters contiguous".into()],
            help: Some("use `.reshape`".into()),
            fix: Some(Fix {
                message: "insert `.contiguous()`".into(),
                applicability: Applicability::Safe,
                edits: vec![Edit {
                    span: Span::new(5, 5),
                    content: ".contiguous()".into(),
                }],
            }),
            unsafe_fix: None,
            verify: None,
            copy: None,
            subject: None,
        }
    }

    #[test]
    fn findings_survive_a_save_and_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("m.py");
        std::fs::write(&source, "y = x.view(-1)\n").unwrap();
        let file = Arc::new(SourceFile::new(&source, "y = x.view(-1)\n".to_string()));
        let key = CacheKey::new(file.text.as_bytes(), &Settings::default());
        let cache = Cache::open(dir.path());
        assert!(cache.get(&source, &key).is_none());
        cache.put(&source, key.clone(), &[finding(&file)], &[]);
        cache.save().unwrap();
        assert!(
            dir.path().join("CACHEDIR.TAG").is_file() && dir.path().join(".gitignore").is_file()
        );

        let reopened = Cache::open(dir.path());
        let cached = reopened.get(&source, &key).unwrap();
        let restored = restore(&cached, &file).unwrap();
        let original = finding(&file);
        assert_eq!(restored.len(), 1);
        let r = &restored[0];
        assert_eq!(
            (r.code, r.severity, &r.message, r.span),
            (
                original.code,
                original.severity,
                &original.message,
                original.span
            )
        );
        assert_eq!(
            (&r.chain, &r.notes, &r.help, &r.fix),
            (
                &original.chain,
                &original.notes,
                &original.help,
                &original.fix
            )
        );
        assert_eq!((reopened.hits(), reopened.misses()), (1, 0));
    }

    #[test]
    fn other_content_or_settings_miss() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("m.py");
        std::fs::write(&source, "x = 1\n").unwrap();
        let cache = Cache::open(dir.path());
        let key = CacheKey::new(b"x = 1\n", &Settings::default());
        cache.put(&source, key, &[], &[]);
        cache.save().unwrap();
        let reopened = Cache::open(dir.path());
        assert!(reopened
            .get(&source, &CacheKey::new(b"x = 2\n", &Settings::default()))
            .is_none());
        let other = Settings {
            ignore: vec!["SL002".into()],
            ..Settings::default()
        };
        assert!(reopened
            .get(&source, &CacheKey::new(b"x = 1\n", &other))
            .is_none());
        assert_eq!(
            reopened
                .get(&source, &CacheKey::new(b"x = 1\n", &Settings::default()))
                .map(|d| d.len()),
            Some(0)
        );
    }

    #[test]
    fn a_corrupt_cache_is_empty_and_deleted_files_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let results = dir
            .path()
            .join(env!("CARGO_PKG_VERSION"))
            .join("results.json");
        std::fs::create_dir_all(results.parent().unwrap()).unwrap();
        std::fs::write(&results, "{not json").unwrap();
        let cache = Cache::open(dir.path());
        let gone = dir.path().join("gone.py");
        std::fs::write(&gone, "x = 1\n").unwrap();
        cache.put(
            &gone,
            CacheKey::new(b"x = 1\n", &Settings::default()),
            &[],
            &[],
        );
        cache.save().unwrap();
        std::fs::remove_file(&gone).unwrap();
        let kept = dir.path().join("kept.py");
        std::fs::write(&kept, "y = 1\n").unwrap();
        let second = Cache::open(dir.path());
        assert_eq!(second.previous.len(), 1);
        second.put(
            &kept,
            CacheKey::new(b"y = 1\n", &Settings::default()),
            &[],
            &[],
        );
        second.save().unwrap();
        let third = Cache::open(dir.path());
        assert_eq!(
            third.previous.keys().collect::<Vec<_>>(),
            vec![&absolute(&kept)]
        );
    }
}
