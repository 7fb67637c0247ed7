//! The Python syntax corpus, `fixtures/python/syntax/`: model code written with the syntax of
//! Python 3.8 to 3.14 (PEP 695 generics, PEP 696 defaults, PEP 701 f-strings, PEP 758
//! `except A, B:`, PEP 750 t-strings, `match`, walrus, async comprehensions, PEP 614
//! decorators, PEP 646 star subscripts, `global`/`nonlocal`), and `invalid/`: files CPython
//! rejects. Every file names the oldest Python it is written for in a
//! `# requires-python: 3.X` line and marks its findings with `# expect:` as the other
//! fixtures do (`SL999` on the line where CPython reports the syntax error).
//!
//! - Always: every file reports exactly its marked findings, so no valid file gets an
//!   SL999, and the partial parse and `STRIDELINT_FULL_PARSE=1` agree on every file.
//! - Against CPython 3.12, 3.13 and 3.14's verdicts, committed in
//!   `fixtures/python/syntax/verdicts/cpython-3.X.jsonl` (written by
//!   `scripts/syntax/update_verdicts.sh`, so no CPython is needed here): each table covers
//!   the whole corpus; CPython accepts every valid file written for its version and rejects
//!   the ones written for a newer Python; on every invalid file written for it, it reports
//!   its syntax error exactly where stridelint reports its one SL999 (same line and column).
//! - Where a CPython 3.12, 3.13 or 3.14 is found (see [`interpreters`]): its verdicts are
//!   the committed ones, so a table cannot go stale. A missing interpreter is skipped with a
//!   message.
//!
//! `--nocapture` prints what was checked against which table and interpreter.

use crate::fixture_support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The versions checked against a real CPython, when one is found.
const VERSIONS: [(u32, u32); 3] = [(3, 12), (3, 13), (3, 14)];

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn valid_files() -> Vec<PathBuf> {
    fixture_support::fixture_paths("python/syntax", "py")
}

fn invalid_files() -> Vec<PathBuf> {
    fixture_support::fixture_paths("python/syntax/invalid", "py")
}

/// The `(major, minor)` of a file's `# requires-python: 3.X` line.
fn required_version(path: &Path) -> (u32, u32) {
    let text = std::fs::read_to_string(path).expect("corpus file is UTF-8");
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix("# requires-python: "))
        .unwrap_or_else(|| panic!("{} has no `# requires-python: 3.X` line", path.display()));
    let (major, minor) = line.trim().split_once('.').expect("a version like 3.12");
    (major.parse().unwrap(), minor.parse().unwrap())
}

#[test]
fn valid_corpus_reports_exactly_its_expected_findings_and_no_syntax_error() {
    let paths = valid_files();
    assert!(paths.len() >= 10, "the corpus has {} files", paths.len());
    fixture_support::assert_every_fixture_matches(
        &paths,
        &fixture_support::PYTHON,
        "syntax corpus files",
    );
}

#[test]
fn invalid_corpus_reports_its_syntax_error_and_the_findings_after_it() {
    let paths = invalid_files();
    for path in &paths {
        let text = std::fs::read_to_string(path).unwrap();
        let markers = fixture_support::expected_findings(&text, &fixture_support::PYTHON);
        assert_eq!(
            markers.iter().filter(|(_, code)| code == "SL999").count(),
            1,
            "{} must mark exactly one SL999",
            path.display()
        );
    }
    fixture_support::assert_every_fixture_matches(
        &paths,
        &fixture_support::PYTHON,
        "invalid syntax corpus files",
    );
}

/// (line, code, column) of every finding, from a JSON report.
fn findings_of_report(report: &str) -> BTreeMap<String, Vec<(u64, String, u64)>> {
    let findings: Vec<Value> = serde_json::from_str(report).expect("a JSON report");
    let mut by_file: BTreeMap<String, Vec<(u64, String, u64)>> = BTreeMap::new();
    for finding in findings {
        let file = Path::new(finding["filename"].as_str().unwrap());
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        by_file.entry(name).or_default().push((
            finding["location"]["row"].as_u64().unwrap(),
            finding["code"].as_str().unwrap().to_string(),
            finding["location"]["column"].as_u64().unwrap(),
        ));
    }
    for findings in by_file.values_mut() {
        findings.sort();
    }
    by_file
}

fn run_stridelint(paths: &[PathBuf], full_parse: bool) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_stridelint"));
    command
        .args([
            "check",
            "--output-format",
            "json",
            "--exit-zero",
            "--no-cache",
        ])
        .args(paths);
    if full_parse {
        command.env("STRIDELINT_FULL_PARSE", "1");
    } else {
        command.env_remove("STRIDELINT_FULL_PARSE");
    }
    let output = command.output().expect("the binary runs");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn partial_and_full_parse_agree_on_the_corpus() {
    let paths: Vec<PathBuf> = valid_files().into_iter().chain(invalid_files()).collect();
    let partial = findings_of_report(&run_stridelint(&paths, false));
    let full = findings_of_report(&run_stridelint(&paths, true));
    assert_eq!(partial, full);
    assert_eq!(partial.len(), paths.len(), "every corpus file has findings");
}

/// The corpus path of a file as the tables write it: relative to the repository, with `/`.
fn corpus_path(path: &Path) -> String {
    let relative = path
        .strip_prefix(repo())
        .expect("a corpus file is in the repository");
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// One committed table: CPython's header line and its verdict on each corpus path.
struct Table {
    version: (u32, u32),
    implementation: String,
    verdicts: BTreeMap<String, Value>,
}

/// The committed `fixtures/python/syntax/verdicts/cpython-3.X.jsonl` of each of [`VERSIONS`].
fn committed_tables() -> Vec<Table> {
    VERSIONS
        .iter()
        .map(|&version| {
            let path = repo().join(format!(
                "fixtures/python/syntax/verdicts/cpython-{}.{}.jsonl",
                version.0, version.1
            ));
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                panic!(
                    "{}: {e} (run scripts/syntax/update_verdicts.sh)",
                    path.display()
                )
            });
            let (header, verdicts) = parse_verdicts(&text)
                .unwrap_or_else(|| panic!("{} is not a verdict table", path.display()));
            let table_version = header_version(&header);
            assert_eq!(table_version, Some(version), "{}", path.display());
            Table {
                version,
                implementation: header["implementation"].as_str().unwrap_or("?").to_string(),
                verdicts,
            }
        })
        .collect()
}

/// `(major, minor)` of a verdict header line.
fn header_version(header: &Value) -> Option<(u32, u32)> {
    let version = header["version"].as_array()?;
    Some((version[0].as_u64()? as u32, version[1].as_u64()? as u32))
}

/// The header line and the verdicts by path of `scripts/syntax/cpython_verdicts.py`'s output.
fn parse_verdicts(text: &str) -> Option<(Value, BTreeMap<String, Value>)> {
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next()?).ok()?;
    let mut by_path = BTreeMap::new();
    for line in lines {
        let verdict: Value = serde_json::from_str(line).ok()?;
        by_path.insert(verdict["path"].as_str()?.to_string(), verdict);
    }
    Some((header, by_path))
}

#[test]
fn stridelint_reports_cpythons_syntax_errors_per_the_committed_verdicts() {
    let valid = valid_files();
    let invalid = invalid_files();
    let reported = findings_of_report(&run_stridelint(&invalid, false));
    let mut failures = Vec::new();
    for table in committed_tables() {
        let implementation = &table.implementation;
        let corpus: Vec<String> = valid
            .iter()
            .chain(&invalid)
            .map(|p| corpus_path(p))
            .collect();
        let unlisted: Vec<&String> = corpus
            .iter()
            .filter(|path| !table.verdicts.contains_key(*path))
            .collect();
        let stale: Vec<&String> = table
            .verdicts
            .keys()
            .filter(|path| !corpus.contains(path))
            .collect();
        if !unlisted.is_empty() || !stale.is_empty() {
            failures.push(format!(
                "{implementation}: the table lacks {unlisted:?} and lists {stale:?}, not in the corpus (run scripts/syntax/update_verdicts.sh)"
            ));
            continue;
        }
        let (mut accepted, mut rejected, mut located, mut newer) = (0, 0, 0, 0);
        for path in &valid {
            let verdict = &table.verdicts[&corpus_path(path)];
            let ok = verdict["ok"].as_bool() == Some(true);
            let written_for_it = required_version(path) <= table.version;
            if ok != written_for_it {
                failures.push(format!(
                    "{implementation}: {} (requires-python {:?}) is {}: {verdict}",
                    corpus_path(path),
                    required_version(path),
                    if ok { "accepted" } else { "rejected" },
                ));
            }
            if ok {
                accepted += 1;
            } else {
                rejected += 1;
            }
        }
        for path in &invalid {
            if required_version(path) > table.version {
                newer += 1;
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let verdict = &table.verdicts[&corpus_path(path)];
            let cpython = match (verdict["line"].as_u64(), verdict["column"].as_u64()) {
                (Some(line), Some(column)) if verdict["ok"] == false => (line, column),
                _ => {
                    failures.push(format!("{implementation}: {name} is accepted"));
                    continue;
                }
            };
            let stridelint: Vec<(u64, u64)> = reported
                .get(&name)
                .into_iter()
                .flatten()
                .filter(|(_, code, _)| code == "SL999")
                .map(|(line, _, column)| (*line, *column))
                .collect();
            if stridelint == [cpython] {
                located += 1;
            } else {
                failures.push(format!(
                    "{implementation}: {name}: CPython reports {} at {cpython:?}, stridelint's SL999 is at {stridelint:?}",
                    verdict["message"]
                ));
            }
        }
        println!(
            "{implementation} (committed): {accepted} valid files accepted, {rejected} rejected as written for a newer Python; {located} invalid files with CPython's syntax error where stridelint's SL999 is, {newer} written for a newer Python"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A CPython found on this machine.
struct Interpreter {
    version: (u32, u32),
    /// The command that runs a Python script: the interpreter, or Node.js with
    /// `scripts/syntax/pyodide_python.mjs` and the Pyodide package.
    command: Vec<String>,
}

/// The CPython of each version in [`VERSIONS`] that can be found, looked for in order (as
/// `scripts/syntax/update_verdicts.sh` does):
/// - `$STRIDELINT_PYTHON3_12` (`…3_13`, `…3_14`): a command, e.g. a wrapper script;
/// - `python3.12` on `PATH`, if it runs and is that version (pyenv shims may not);
/// - pyenv's `$PYENV_ROOT/versions/3.12.*/bin/python3.12` (default root `~/.pyenv`);
/// - for 3.14 only, Pyodide (CPython 3.14 compiled to WebAssembly) run by Node.js:
///   `$STRIDELINT_PYODIDE`, or `.ci-tools/node_modules/pyodide` (not committed; `npm
///   install --prefix .ci-tools pyodide@314.0.7`).
fn interpreters() -> Vec<Interpreter> {
    let mut found = Vec::new();
    for version in VERSIONS {
        let name = format!("python{}.{}", version.0, version.1);
        let mut candidates: Vec<Vec<String>> = Vec::new();
        if let Ok(command) = std::env::var(format!("STRIDELINT_PYTHON{}_{}", version.0, version.1))
        {
            candidates.push(vec![command]);
        }
        candidates.push(vec![name.clone()]);
        let pyenv_root = std::env::var_os("PYENV_ROOT")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".pyenv")));
        if let Some(root) = pyenv_root {
            let prefix = format!("{}.{}.", version.0, version.1);
            let mut installs: Vec<PathBuf> = std::fs::read_dir(root.join("versions"))
                .into_iter()
                .flatten()
                .flatten()
                .filter(|entry| entry.file_name().to_string_lossy().starts_with(&prefix))
                .map(|entry| entry.path().join("bin").join(&name))
                .collect();
            installs.sort();
            candidates.extend(
                installs
                    .into_iter()
                    .rev()
                    .map(|path| vec![path.display().to_string()]),
            );
        }
        if version == (3, 14) {
            let pyodide = std::env::var_os("STRIDELINT_PYODIDE")
                .map(PathBuf::from)
                .unwrap_or_else(|| repo().join(".ci-tools/node_modules/pyodide"));
            if pyodide.join("pyodide.mjs").is_file() {
                candidates.push(vec![
                    "node".into(),
                    repo()
                        .join("scripts/syntax/pyodide_python.mjs")
                        .display()
                        .to_string(),
                    pyodide.display().to_string(),
                ]);
            }
        }
        let working = candidates
            .into_iter()
            .find(|command| version_of(command) == Some(version));
        match working {
            Some(command) => found.push(Interpreter { version, command }),
            None => eprintln!(
                "skipped: no CPython {}.{} found (set STRIDELINT_PYTHON{}_{} to one)",
                version.0, version.1, version.0, version.1
            ),
        }
    }
    found
}

/// The `(major, minor)` a Python command reports, if it runs at all.
fn version_of(command: &[String]) -> Option<(u32, u32)> {
    let (header, _) = verdicts(command, &[])?;
    header_version(&header)
}

/// Runs `scripts/syntax/cpython_verdicts.py` on `paths` (relative to the repository, where it
/// runs): its header line and one verdict per path.
fn verdicts(command: &[String], paths: &[String]) -> Option<(Value, BTreeMap<String, Value>)> {
    let output = Command::new(&command[0])
        .args(&command[1..])
        .arg(repo().join("scripts/syntax/cpython_verdicts.py"))
        .args(paths)
        .current_dir(repo())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    parse_verdicts(&String::from_utf8(output.stdout).ok()?)
}

#[test]
fn committed_verdicts_are_what_cpython_reports_here() {
    let interpreters = interpreters();
    if interpreters.is_empty() {
        eprintln!("skipped: no CPython 3.12, 3.13 or 3.14 on this machine");
        return;
    }
    let corpus: Vec<String> = valid_files()
        .iter()
        .chain(&invalid_files())
        .map(|p| corpus_path(p))
        .collect();
    let tables = committed_tables();
    let mut failures = Vec::new();
    for interpreter in &interpreters {
        let table = tables
            .iter()
            .find(|table| table.version == interpreter.version)
            .unwrap();
        let (header, live) = verdicts(&interpreter.command, &corpus)
            .unwrap_or_else(|| panic!("{:?} failed on the corpus", interpreter.command));
        let implementation = header["implementation"].as_str().unwrap_or("?");
        let mut same = 0;
        for path in &corpus {
            match (live.get(path), table.verdicts.get(path)) {
                (Some(live), Some(committed)) if live == committed => same += 1,
                (live, committed) => failures.push(format!(
                    "{implementation}: {path}: CPython says {live:?}, {} committed {committed:?} (run scripts/syntax/update_verdicts.sh)",
                    table.implementation
                )),
            }
        }
        println!(
            "{implementation} ({}): {same} of {} verdicts as committed from {}",
            interpreter.command.join(" "),
            corpus.len(),
            table.implementation
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
