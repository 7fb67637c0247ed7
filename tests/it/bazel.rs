//! The Bazel aspect of `bazel/` on the example workspace of `examples/bazel/` (copied to a
//! temporary directory, with the binary under test): one lint action per target whose report
//! holds the cross-file finding with repository-relative paths; a rerun after `bazel clean`
//! executes no lint action with the disk cache, nor with an HTTP cache on localhost
//! (`scripts/bazel_cache_server.py`); an edit re-lints only the targets that depend on the
//! file; `bazel test` fails on the target with the error and passes once it is fixed.
//!
//! Needs `bazel` (Debian's `bazel-bootstrap`, Bazel 4.2.3) and `python3`. Without them the
//! test prints why and passes, unless `CI` is set: then it fails.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use crate::cli_support;
use crate::tool_support;
use cli_support::binary;

/// The lint targets `bazel build //... //model:block_test` visits, by the name of their
/// reports (`bazel-bin/<package>/<name>.stridelint.json`).
const ALL: [&str; 7] = [
    "attention/attention",
    "candle/srcs",
    "mlp/mlp",
    "model/block",
    "model/block_test",
    "model/train",
    "ops/ops",
];

/// The targets that depend on `mlp/mlp.py`.
const MLP_DEPENDENTS: [&str; 4] = ["mlp/mlp", "model/block", "model/block_test", "model/train"];

const LINT_TESTS: [&str; 5] = [
    "//attention:attention_lint",
    "//candle:candle_lint",
    "//mlp:mlp_lint",
    "//model:model_lint",
    "//ops:ops_lint",
];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn available(tool: &str, arg: &str) -> bool {
    Command::new(tool)
        .arg(arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Copies a tree of regular files (Bazel's `bazel-*` links of an earlier run are left out).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target);
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The HTTP cache server, stopped when dropped.
struct CacheServer {
    child: Child,
    url: String,
}

impl CacheServer {
    fn start(dir: &Path) -> CacheServer {
        let mut child = Command::new("python3")
            .arg(repo().join("scripts/bazel_cache_server.py"))
            .arg("--dir")
            .arg(dir)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the cache server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("the cache server's first line: {line:?}"))
            .to_string();
        CacheServer { child, url }
    }

    /// The server's counts (`ac_hit`, `ac_miss`, `ac_put`, …), read with Bazel's own
    /// protocol-free client: a plain HTTP/1.0 GET.
    fn stats(&self) -> serde_json::Value {
        use std::io::{Read, Write};
        let addr = self.url.strip_prefix("http://").unwrap();
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        write!(stream, "GET /_stats HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let body = answer.split("\r\n\r\n").nth(1).unwrap();
        serde_json::from_str(body).unwrap()
    }
}

impl Drop for CacheServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Bazel in the copied workspace, with its own output root; the server is shut down when
/// dropped.
struct Bazel {
    root: PathBuf,
    workspace: PathBuf,
    logs: PathBuf,
    runs: usize,
}

impl Bazel {
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new("bazel");
        command
            .current_dir(&self.workspace)
            .arg(format!("--output_user_root={}", self.root.display()))
            .args(["--nohome_rc", "--max_idle_secs=300"])
            .args(args)
            .env_remove("STRIDELINT_CACHE_DIR");
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("bazel runs")
    }

    /// The flags of every build and test: the binary under test, and the stand-ins of
    /// `bazel/offline/` for the repositories Bazel 4 would download.
    fn flags(&self) -> Vec<String> {
        let offline = self.workspace.join("../../bazel/offline");
        let offline = offline.canonicalize().unwrap();
        let mut flags = vec![
            "--color=no".to_string(),
            "--curses=no".to_string(),
            format!("--repo_env=STRIDELINT_BIN={}", binary().display()),
        ];
        for repo in ["rules_cc", "rules_java", "remote_coverage_tools"] {
            flags.push(format!(
                "--override_repository={repo}={}",
                offline.join(repo).display()
            ));
        }
        flags
    }

    /// Lints every target (`--config=lint` of the example's `.bazelrc`) with `cache_flags`;
    /// returns the lint actions' report names and whether each was a cache hit.
    fn lint(&mut self, cache_flags: &[String]) -> Vec<(String, bool)> {
        self.runs += 1;
        let log = self.logs.join(format!("exec-{}.json", self.runs));
        let mut args: Vec<String> = vec!["build".into(), "--config=lint".into()];
        args.extend(self.flags());
        args.extend(cache_flags.iter().cloned());
        args.push(format!("--execution_log_json_file={}", log.display()));
        args.extend(["//...".to_string(), "//model:block_test".to_string()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = self.run(&args);
        assert!(
            output.status.success(),
            "bazel build failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        lint_spawns(&std::fs::read_to_string(&log).unwrap())
    }

    fn test(&self, targets: &[&str]) -> Output {
        let mut args: Vec<String> = vec!["test".into(), "--test_output=errors".into()];
        args.extend(self.flags());
        args.extend(targets.iter().map(|t| t.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.run(&args)
    }

    fn clean(&self) {
        assert!(self.run(&["clean"]).status.success());
    }

    fn bin(&self, report: &str) -> String {
        std::fs::read_to_string(self.workspace.join("bazel-bin").join(report)).unwrap()
    }
}

impl Drop for Bazel {
    fn drop(&mut self) {
        let _ = self.run(&["shutdown"]);
    }
}

/// The `StridelintLint` spawns of an execution log (`--execution_log_json_file`: one JSON
/// object per spawn, one after the other): the report name of each and whether it came from
/// a cache.
fn lint_spawns(log: &str) -> Vec<(String, bool)> {
    let mut spawns = Vec::new();
    for spawn in serde_json::Deserializer::from_str(log).into_iter::<serde_json::Value>() {
        let spawn = spawn.unwrap();
        if spawn["mnemonic"] != "StridelintLint" {
            continue;
        }
        let outputs = spawn["listedOutputs"].as_array().unwrap();
        let json = outputs
            .iter()
            .filter_map(|o| o.as_str())
            .find(|o| o.ends_with(".stridelint.json"))
            .unwrap();
        let name = json
            .split_once("/bin/")
            .unwrap()
            .1
            .strip_suffix(".stridelint.json")
            .unwrap()
            .to_string();
        spawns.push((name, spawn["remoteCacheHit"] == true));
    }
    spawns.sort();
    spawns
}

/// The targets whose lint action ran (not from a cache).
fn executed(spawns: &[(String, bool)]) -> BTreeSet<&str> {
    spawns
        .iter()
        .filter(|(_, hit)| !hit)
        .map(|(name, _)| name.as_str())
        .collect()
}

fn hits(spawns: &[(String, bool)]) -> usize {
    spawns.iter().filter(|(_, hit)| *hit).count()
}

fn names(list: &[&'static str]) -> BTreeSet<&'static str> {
    list.iter().copied().collect()
}

/// Test summary lines (`//attention:attention_lint   FAILED in 0.1s`) by target.
fn test_results(output: &Output) -> Vec<(String, String)> {
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    let mut results: Vec<(String, String)> = text
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let target = words.next()?;
            let status = words.find(|w| !w.starts_with('('))?;
            (target.starts_with("//") && target.ends_with("_lint"))
                .then(|| (target.to_string(), status.to_string()))
        })
        .collect();
    results.sort();
    results.dedup();
    results
}

#[test]
fn the_aspect_lints_each_target_once_and_caches_across_runs() {
    for (tool, arg) in [("bazel", "--version"), ("python3", "--version")] {
        if !available(tool, arg) {
            tool_support::missing(tool, "does not run", "Debian's bazel-bootstrap");
            return;
        }
    }
    let started = std::time::Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("bazel"), &tmp.path().join("bazel"));
    let workspace = tmp.path().join("examples/bazel");
    copy_tree(&repo().join("examples/bazel"), &workspace);
    let disk = tmp.path().join("disk-cache");
    let logs = tmp.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let server = CacheServer::start(&tmp.path().join("http-cache"));
    let mut bazel = Bazel {
        root: tmp.path().join("output-root"),
        workspace: workspace.clone(),
        logs,
        runs: 0,
    };
    let disk_cache = vec![format!("--disk_cache={}", disk.display())];
    let remote_cache = vec![format!("--remote_cache={}", server.url)];
    let both: Vec<String> = disk_cache.iter().chain(&remote_cache).cloned().collect();

    // 1. One lint action per target; the report of //attention holds the view error of the
    // call into //ops, with paths relative to the workspace.
    let first = bazel.lint(&both);
    assert_eq!(executed(&first), names(&ALL), "first run: {first:?}");
    assert_eq!(first.len(), ALL.len());
    let report: serde_json::Value =
        serde_json::from_str(&bazel.bin("attention/attention.stridelint.json")).unwrap();
    let found: Vec<(&str, &str, &str, u64)> = report
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap(),
                f["severity"].as_str().unwrap(),
                f["filename"].as_str().unwrap(),
                f["location"]["row"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(
        found.contains(&("SL001", "error", "attention/attention.py", 27)),
        "the attention report: {found:?}"
    );
    let sarif = bazel.bin("attention/attention.stridelint.sarif");
    let parsed: serde_json::Value = serde_json::from_str(&sarif).unwrap();
    assert_eq!(parsed["version"], "2.1.0");
    assert!(
        sarif.contains("\"uri\": \"attention/attention.py\""),
        "{sarif}"
    );
    assert!(sarif.contains("\"ruleId\": \"SL001\""), "{sarif}");
    let text = bazel.bin("attention/attention.stridelint.txt");
    assert!(
        text.contains("attention/attention.py:27:43: SL001"),
        "{text}"
    );
    let tmp_path = tmp.path().canonicalize().unwrap();
    for name in ALL {
        for ext in ["txt", "json", "sarif"] {
            let report = bazel.bin(&format!("{name}.stridelint.{ext}"));
            assert!(
                !report.contains(tmp_path.to_str().unwrap()) && !report.contains("file:///"),
                "an absolute path in {name}.stridelint.{ext}:\n{report}"
            );
        }
        if name != "attention/attention" {
            let report = bazel.bin(&format!("{name}.stridelint.json"));
            assert!(!report.contains("\"SL001\""), "{name}: {report}");
        }
    }
    let stats = server.stats();
    assert_eq!(
        stats["ac_put"],
        ALL.len(),
        "the HTTP cache after the first run: {stats}"
    );

    // 2. After `bazel clean`, the same disk cache: no lint action runs; then the HTTP cache
    // alone: none either.
    bazel.clean();
    let from_disk = bazel.lint(&disk_cache);
    assert_eq!(
        executed(&from_disk),
        BTreeSet::new(),
        "disk cache: {from_disk:?}"
    );
    assert_eq!(hits(&from_disk), ALL.len());
    bazel.clean();
    let before = server.stats();
    let from_http = bazel.lint(&remote_cache);
    assert_eq!(
        executed(&from_http),
        BTreeSet::new(),
        "HTTP cache: {from_http:?}"
    );
    assert_eq!(hits(&from_http), ALL.len());
    let after = server.stats();
    let ac_hits = after["ac_hit"].as_u64().unwrap() - before["ac_hit"].as_u64().unwrap_or(0);
    assert_eq!(ac_hits, ALL.len() as u64, "{before} -> {after}");

    // 3. An edit of mlp/mlp.py re-lints the targets that depend on it, and only those.
    let mlp = workspace.join("mlp/mlp.py");
    let edited = std::fs::read_to_string(&mlp).unwrap().replace(
        "return h.view(b, t, c)",
        "return h.view(b, t, c)  # (B, T, C) again",
    );
    std::fs::write(&mlp, edited).unwrap();
    let after_edit = bazel.lint(&remote_cache);
    assert_eq!(
        executed(&after_edit),
        names(&MLP_DEPENDENTS),
        "after the edit: {after_edit:?}"
    );
    // The others were not even looked up in a cache: their actions were up to date.
    assert_eq!(after_edit.len(), MLP_DEPENDENTS.len(), "{after_edit:?}");

    // 4. `bazel test` fails on //attention (the error) and passes the others; once the view
    // is fixed, every lint test passes (SL008's warning is below the default severity).
    let failing = bazel.test(&LINT_TESTS);
    let results = test_results(&failing);
    assert_eq!(failing.status.code(), Some(3), "{results:?}");
    for (target, status) in &results {
        let expected = if target == "//attention:attention_lint" {
            "FAILED"
        } else {
            "PASSED"
        };
        assert_eq!(status, expected, "{target}: {results:?}");
    }
    assert_eq!(results.len(), LINT_TESTS.len(), "{results:?}");
    let log =
        std::fs::read_to_string(workspace.join("bazel-testlogs/attention/attention_lint/test.log"))
            .unwrap();
    assert!(log.contains("attention/attention.py:27:43: SL001"), "{log}");

    let attention = workspace.join("attention/attention.py");
    let fixed = std::fs::read_to_string(&attention)
        .unwrap()
        .replace("v.view(B, T, C)", "merge_heads(v)");
    std::fs::write(&attention, fixed).unwrap();
    let passing = bazel.test(&LINT_TESTS);
    let results = test_results(&passing);
    assert!(passing.status.success(), "{results:?}");
    assert!(results.iter().all(|(_, s)| s == "PASSED"), "{results:?}");

    eprintln!(
        "lint actions executed: first run {}, disk cache after clean {} ({} hits), HTTP cache after clean {} ({} hits), after editing mlp/mlp.py {} {:?}; {:.0} s",
        executed(&first).len(),
        executed(&from_disk).len(),
        hits(&from_disk),
        executed(&from_http).len(),
        hits(&from_http),
        executed(&after_edit).len(),
        executed(&after_edit),
        started.elapsed().as_secs_f64()
    );
}
