//! `gitlab`: GitLab's Code Quality report (`artifacts:reports:codequality`), the subset
//! of the Code Climate issue spec that GitLab reads, shown in the merge request widget
//! and diff. One JSON array; each finding is a Code Climate `issue`:
//!
//! ```json
//! {"type": "issue", "check_name": "SL001", "description": "SL001: `.view(B, T, C)` …",
//!  "categories": ["Bug Risk"], "severity": "major", "fingerprint": "…",
//!  "location": {"path": "src/model.py", "lines": {"begin": 7, "end": 7}}}
//! ```
//!
//! - `location.path` is relative to the repository (`CI_PROJECT_DIR`, else the current
//!   directory), without `./`, as GitLab requires; rows are the file's lines (in a
//!   notebook, within the cell the description names: `cell 3: …`).
//! - `description` is one line (Code Climate's rule), prefixed with the code, as Ruff's.
//! - `severity`: errors are `major`, warnings `minor`. `categories`: hidden copies
//!   (SL002) are `Performance`, unused suppressions (SL100) `Style`, the rest `Bug Risk`.
//! - `fingerprint` identifies a finding across pipelines without its line, so that moving
//!   code does not make GitLab report it as fixed and new: BLAKE3 of the path, the code
//!   and the message, and a counter that tells identical findings in one file apart.

use std::collections::HashMap;
use std::io::{self, Write};

use serde::Serialize;

use super::paths::PathDisplay;
use super::pylint::one_line;
use super::ReportContext;
use crate::diagnostic::{Claim, Diagnostic, Severity};

pub(super) fn write(
    w: &mut dyn Write,
    diagnostics: &[&Diagnostic],
    paths: &PathDisplay,
    ctx: &ReportContext,
) -> io::Result<()> {
    let mut seen: HashMap<(String, &str, String), usize> = HashMap::new();
    let issues: Vec<Issue> = diagnostics
        .iter()
        .map(|diagnostic| {
            let path = paths.gitlab(diagnostic.file.path());
            let (start, end) = diagnostic.file.cell_span_locations(diagnostic.span);
            let message = match diagnostic.file.cell_at(diagnostic.span.start as usize) {
                Some(cell) => format!("cell {cell}: {}", diagnostic.message),
                None => diagnostic.message.clone(),
            };
            let message = one_line(&message);
            let occurrence = seen
                .entry((path.clone(), diagnostic.code, message.clone()))
                .or_insert(0);
            let fingerprint = fingerprint(&path, diagnostic.code, &message, *occurrence);
            *occurrence += 1;
            Issue {
                kind: "issue",
                check_name: diagnostic.code,
                description: format!("{}: {message}", diagnostic.code),
                categories: [category(ctx.claim(diagnostic.code))],
                severity: match diagnostic.severity {
                    Severity::Error => "major",
                    Severity::Warning => "minor",
                    Severity::Info => "info",
                },
                fingerprint,
                location: Location {
                    path,
                    lines: Lines {
                        begin: start.row,
                        end: end.row.max(start.row),
                    },
                },
            }
        })
        .collect();
    serde_json::to_writer_pretty(&mut *w, &issues)?;
    writeln!(w)
}

/// The Code Climate category of a rule's findings, by what they claim.
fn category(claim: Claim) -> &'static str {
    match claim {
        Claim::HiddenCopy => "Performance",
        Claim::UnusedSuppression => "Style",
        _ => "Bug Risk",
    }
}

/// 32 hex digits of BLAKE3 over the fields, each length-prefixed so that no two
/// different tuples hash the same input.
fn fingerprint(path: &str, code: &str, message: &str, occurrence: usize) -> String {
    let mut hasher = blake3::Hasher::new();
    for field in [path.as_bytes(), code.as_bytes(), message.as_bytes()] {
        hasher.update(&(field.len() as u64).to_le_bytes());
        hasher.update(field);
    }
    hasher.update(&(occurrence as u64).to_le_bytes());
    hasher.finalize().to_hex()[..32].to_owned()
}

#[derive(Serialize)]
struct Issue<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    check_name: &'a str,
    description: String,
    categories: [&'static str; 1],
    severity: &'static str,
    fingerprint: String,
    location: Location,
}

#[derive(Serialize)]
struct Location {
    path: String,
    lines: Lines,
}

#[derive(Serialize)]
struct Lines {
    begin: usize,
    end: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_differ_by_every_field() {
        let base = fingerprint("a.py", "SL001", "m", 0);
        assert_eq!(base.len(), 32);
        assert_eq!(base, fingerprint("a.py", "SL001", "m", 0));
        for other in [
            fingerprint("b.py", "SL001", "m", 0),
            fingerprint("a.py", "SL002", "m", 0),
            fingerprint("a.py", "SL001", "n", 0),
            fingerprint("a.py", "SL001", "m", 1),
            // Length prefixes: moving a character from one field to the next changes it.
            fingerprint("a.p", "ySL001", "m", 0),
        ] {
            assert_ne!(base, other);
        }
    }
}
