//! The GitHub Action (`action.yml`) without GitHub: its steps' scripts
//! (`scripts/action/*.sh`) run as the runner runs a composite step (`bash -e -o pipefail`,
//! inputs in the environment) in a simulated runner — `GITHUB_WORKSPACE`,
//! `GITHUB_ACTION_PATH`, `RUNNER_TEMP`, `RUNNER_OS`, `RUNNER_ARCH`, `GITHUB_OUTPUT`,
//! `GITHUB_PATH`, `GITHUB_STEP_SUMMARY` — against a release "server" of `file://` URLs
//! that `scripts/release/archive.sh` fills, exactly as the release workflow does.
//!
//! - install: the archive for the runner is downloaded, its checksum verified, the binary
//!   put on `GITHUB_PATH`; a wrong checksum fails the step; no archive (an unknown runner,
//!   an unreleased version) falls back to `cargo install --locked` (a stand-in `cargo`
//!   records the command line).
//! - lint: annotations name files relative to `GITHUB_WORKSPACE` (never `./`), every line
//!   printed is a well-formed workflow command by GitHub's rules ([`check_workflow_command`]),
//!   the step summary is written, `output-format` and `summary` are honoured.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const VIEW_BUG: &str = "\
def merge(x):
    B, H, T, D = x.shape
    y = x.transpose(1, 2)
    return y.view(B, T, H * D)
";

/// A `reshape` whose call spans three lines: a multi-line annotation.
const MULTI_LINE: &str = "\
def merge(x):
    B, H, T, D = x.shape
    y = x.transpose(1, 2)
    return y.reshape(
        B, T, H * D
    )
";

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn stridelint_bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_stridelint"))
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A simulated runner: a workspace (the checkout), the runner's temp directory and the
/// files GitHub collects outputs, PATH additions and the step summary in.
struct Runner {
    root: tempfile::TempDir,
    os: &'static str,
    arch: &'static str,
    release_base_url: Option<String>,
    /// Put first on PATH (a stand-in `cargo`, or an empty directory).
    extra_path: Option<PathBuf>,
    /// Replace PATH altogether but for these system directories (to hide a real cargo).
    hide_cargo: bool,
}

impl Runner {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        for dir in ["workspace", "temp"] {
            std::fs::create_dir(root.path().join(dir)).unwrap();
        }
        Runner {
            root,
            os: "Linux",
            arch: "X64",
            release_base_url: None,
            extra_path: None,
            hide_cargo: false,
        }
    }

    fn workspace(&self) -> PathBuf {
        self.root.path().join("workspace")
    }

    fn temp(&self) -> PathBuf {
        self.root.path().join("temp")
    }

    fn file(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    fn write(&self, rel: &str, content: &str) {
        let path = self.workspace().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    /// Runs `script` (relative to the repository) as a composite step's `run:`.
    fn step(&self, script: &str, cwd: &Path, inputs: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(manifest_dir().join(script))
            .current_dir(cwd)
            .env_clear()
            .env("HOME", self.root.path())
            .env("CI", "true")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_WORKSPACE", self.workspace())
            .env("GITHUB_ACTION_PATH", manifest_dir())
            .env("GITHUB_OUTPUT", self.file("github_output"))
            .env("GITHUB_PATH", self.file("github_path"))
            .env("GITHUB_STEP_SUMMARY", self.file("step_summary.md"))
            .env("RUNNER_OS", self.os)
            .env("RUNNER_ARCH", self.arch)
            .env("RUNNER_TEMP", self.temp())
            .env("STRIDELINT_BIN", stridelint_bin());
        let system_path = std::env::var_os("PATH").unwrap_or_default();
        let mut path: Vec<PathBuf> = self.extra_path.iter().cloned().collect();
        if self.hide_cargo {
            path.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from));
        } else {
            path.extend(std::env::split_paths(&system_path));
        }
        cmd.env("PATH", std::env::join_paths(path).unwrap());
        if let Some(url) = &self.release_base_url {
            cmd.env("STRIDELINT_RELEASE_BASE_URL", url);
        }
        for (key, value) in inputs {
            cmd.env(key, value);
        }
        cmd.output().unwrap()
    }

    fn install(&self, version: &str) -> Output {
        self.step(
            "scripts/action/install.sh",
            &self.workspace(),
            &[("INPUT_VERSION", version)],
        )
    }

    fn lint(&self, cwd: &Path, inputs: &[(&str, &str)]) -> Output {
        self.step("scripts/action/lint.sh", cwd, inputs)
    }

    /// `GITHUB_OUTPUT`'s `key=value` lines.
    fn outputs(&self) -> HashMap<String, String> {
        std::fs::read_to_string(self.file("github_output"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }

    fn installed(&self) -> PathBuf {
        self.temp().join("stridelint/bin/stridelint")
    }
}

/// A release "server": `download/vVERSION/<archive>` (and `latest/download/…`) as
/// `archive.sh` writes them, for `target`. Returns its `file://` base URL.
fn release_server(dir: &Path, version: &str, target: &str) -> String {
    let out = dir.join("download").join(format!("v{version}"));
    let packed = Command::new("bash")
        .arg(manifest_dir().join("scripts/release/archive.sh"))
        .args([
            target.as_ref(),
            stridelint_bin().as_os_str(),
            out.as_os_str(),
        ])
        .output()
        .unwrap();
    assert!(packed.status.success(), "{}", text(&packed));
    let latest = dir.join("latest").join("download");
    std::fs::create_dir_all(&latest).unwrap();
    for entry in std::fs::read_dir(&out).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), latest.join(entry.file_name())).unwrap();
    }
    format!("file://{}", dir.display())
}

/// Whether curl and tar, which the install step uses, are here.
fn can_install() -> bool {
    let ok = have("curl") && have("tar");
    if !ok {
        eprintln!("skipped: the install step needs curl and tar");
    }
    ok
}

#[test]
fn install_downloads_verifies_and_puts_the_release_binary_on_path() {
    if !can_install() {
        return;
    }
    let mut runner = Runner::new();
    let server = tempfile::tempdir().unwrap();
    let version = env!("CARGO_PKG_VERSION");
    runner.release_base_url = Some(release_server(
        server.path(),
        version,
        "x86_64-unknown-linux-gnu",
    ));
    // The default version is the action's own (Cargo.toml at the action's ref).
    let out = runner.install("");
    assert!(out.status.success(), "{}", text(&out));
    let outputs = runner.outputs();
    assert_eq!(outputs["version"], version);
    assert_eq!(outputs["method"], "release");
    let bin = runner.temp().join("stridelint/bin");
    assert_eq!(outputs["bin"], bin.display().to_string());
    assert_eq!(
        std::fs::read_to_string(runner.file("github_path")).unwrap(),
        format!("{}\n", bin.display())
    );
    let installed = Command::new(runner.installed())
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(
        stdout(&installed).trim(),
        format!("stridelint {version}"),
        "{}",
        text(&installed)
    );
    assert!(text(&out).contains("sha256"), "{}", text(&out));

    // `latest` and a `v`-prefixed version resolve to the same archive.
    for version_input in ["latest".to_string(), format!("v{version}")] {
        std::fs::remove_dir_all(runner.temp().join("stridelint")).unwrap();
        let out = runner.install(&version_input);
        assert!(out.status.success(), "{version_input}: {}", text(&out));
        assert!(runner.installed().is_file());
    }
}

#[test]
fn a_wrong_checksum_fails_the_step_without_falling_back() {
    if !can_install() {
        return;
    }
    let mut runner = Runner::new();
    let server = tempfile::tempdir().unwrap();
    let version = env!("CARGO_PKG_VERSION");
    runner.release_base_url = Some(release_server(
        server.path(),
        version,
        "x86_64-unknown-linux-gnu",
    ));
    let sha = server.path().join(format!(
        "download/v{version}/stridelint-x86_64-unknown-linux-gnu.tar.gz.sha256"
    ));
    std::fs::write(
        &sha,
        format!(
            "{}  stridelint-x86_64-unknown-linux-gnu.tar.gz\n",
            "0".repeat(64)
        ),
    )
    .unwrap();
    let cargo_log = fake_cargo(&mut runner);
    let out = runner.install(version);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stdout(&out).contains("::error title=stridelint::checksum mismatch"),
        "{}",
        text(&out)
    );
    assert!(!runner.installed().exists());
    assert!(
        !cargo_log.exists(),
        "a bad checksum must not fall back to cargo"
    );
}

/// A stand-in `cargo` first on PATH: records its arguments and "installs" the real binary
/// into `--root DIR`. Returns the log file.
fn fake_cargo(runner: &mut Runner) -> PathBuf {
    let dir = runner.file("fake-cargo");
    std::fs::create_dir_all(&dir).unwrap();
    let log = runner.file("cargo.log");
    let script = format!(
        "#!/bin/sh\n\
         if [ \"$1\" = --version ]; then echo 'cargo 1.99.0 (stand-in)'; exit 0; fi\n\
         echo \"$@\" >> '{log}'\n\
         root=\n\
         while [ $# -gt 0 ]; do [ \"$1\" = --root ] && root=$2; shift; done\n\
         mkdir -p \"$root/bin\" && cp '{bin}' \"$root/bin/stridelint\"\n",
        log = log.display(),
        bin = stridelint_bin().display()
    );
    let cargo = dir.join("cargo");
    std::fs::write(&cargo, script).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    runner.extra_path = Some(dir);
    log
}

#[test]
fn without_an_archive_it_falls_back_to_cargo_install_locked() {
    if !can_install() {
        return;
    }
    let action_path = manifest_dir().display().to_string();
    // An empty server (the version is not released), and a runner no archive is built for.
    for (os, arch) in [("Linux", "X64"), ("Linux", "ARM"), ("FreeBSD", "X64")] {
        let mut runner = Runner::new();
        runner.os = os;
        runner.arch = arch;
        let server = tempfile::tempdir().unwrap();
        runner.release_base_url = Some(format!("file://{}", server.path().display()));
        let log = fake_cargo(&mut runner);
        let out = runner.install("");
        assert!(out.status.success(), "{os}/{arch}: {}", text(&out));
        assert_eq!(runner.outputs()["method"], "cargo");
        let root = runner.temp().join("stridelint");
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            format!(
                "install --locked --path {action_path} --root {}\n",
                root.display()
            )
        );
        assert!(runner.installed().is_file());
        // A second run finds the (cache-restored) build and does not build again.
        let again = runner.install("");
        assert!(again.status.success(), "{}", text(&again));
        assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);
    }

    // Another version than the checkout's is built from its tag.
    let mut runner = Runner::new();
    let server = tempfile::tempdir().unwrap();
    runner.release_base_url = Some(format!("file://{}", server.path().display()));
    let log = fake_cargo(&mut runner);
    let out = runner.install("0.0.9");
    assert!(out.status.success(), "{}", text(&out));
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.starts_with(
            "install --locked --git https://github.com/stridelint/stridelint --tag v0.0.9 --root "
        ),
        "{logged}"
    );
}

#[test]
fn without_an_archive_or_cargo_the_step_fails_saying_why() {
    if !can_install() {
        return;
    }
    let mut runner = Runner::new();
    let server = tempfile::tempdir().unwrap();
    runner.release_base_url = Some(format!("file://{}", server.path().display()));
    runner.hide_cargo = true;
    if Command::new("bash")
        .args(["-c", "PATH=/usr/local/bin:/usr/bin:/bin command -v cargo"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("skipped: cargo is in a system directory here, it cannot be hidden");
        return;
    }
    let out = runner.install("");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stdout(&out).contains("::error title=stridelint::no release archive"),
        "{}",
        text(&out)
    );
}

// --- the lint step -----------------------------------------------------------------------

/// GitHub's workflow-command rules for `::error`/`::warning`/`::notice` lines, as the
/// runner parses them (`ActionCommand.TryParseV2`) and `@actions/core` writes them:
///
/// - `::NAME key=value,key=value::message`; the command and its properties end at the
///   first `::`, properties are split at `,` and at the first `=`.
/// - Property values encode `%` `\r` `\n` `:` `,` as `%25` `%0D` `%0A` `%3A` `%2C`; the
///   message encodes `%` `\r` `\n`. No other `%` may appear (it would be decoded).
/// - Keys: `title`, `file`, `line`, `endLine`, `col`, `endColumn`; numbers are positive,
///   `endLine ≥ line`; a span over several lines has no columns (GitHub would ignore or
///   misdraw them), on one line `col ≤ endColumn`.
/// - `file` is relative to the workspace — no `./`, no leading `/` — and names a file
///   that exists there.
///
/// Returns the decoded properties and message.
fn check_workflow_command(
    line: &str,
    workspace: &Path,
) -> Result<(HashMap<String, String>, String), String> {
    let rest = line.strip_prefix("::").ok_or("does not start with `::`")?;
    let (head, message) = rest.split_once("::").ok_or("no `::` before the message")?;
    let (name, properties) = head.split_once(' ').unwrap_or((head, ""));
    if !["error", "warning", "notice"].contains(&name) {
        return Err(format!("unknown command `{name}`"));
    }
    if message.contains(['\r', '\n']) {
        return Err("a raw line break in the message".into());
    }
    let message = decode(message, &["%25", "%0D", "%0A"])?;
    let mut props = HashMap::new();
    for property in properties.split(',').filter(|p| !p.is_empty()) {
        let (key, value) = property
            .split_once('=')
            .ok_or_else(|| format!("property `{property}` has no `=`"))?;
        if !["title", "file", "line", "endLine", "col", "endColumn"].contains(&key) {
            return Err(format!("unknown property `{key}`"));
        }
        let value = decode(value, &["%25", "%0D", "%0A", "%3A", "%2C"])?;
        if props.insert(key.to_owned(), value).is_some() {
            return Err(format!("`{key}` twice"));
        }
    }
    let number = |key: &str| -> Result<Option<u64>, String> {
        props
            .get(key)
            .map(|v| {
                v.parse::<u64>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("`{key}={v}` is not a positive number"))
            })
            .transpose()
    };
    let (line_no, end_line) = (number("line")?, number("endLine")?);
    let (col, end_col) = (number("col")?, number("endColumn")?);
    if let (Some(start), Some(end)) = (line_no, end_line) {
        if end < start {
            return Err("endLine before line".into());
        }
        if end > start && (col.is_some() || end_col.is_some()) {
            return Err("columns on a span over several lines".into());
        }
        if let (Some(c), Some(e)) = (col, end_col) {
            if end == start && e < c {
                return Err("endColumn before col".into());
            }
        }
    }
    if line_no.is_none() && (end_line.is_some() || col.is_some()) {
        return Err("a position without `line`".into());
    }
    if let Some(file) = props.get("file") {
        if file.starts_with("./") || file.starts_with('/') || file.contains('\\') {
            return Err(format!("`file={file}` is not relative to the workspace"));
        }
        if !workspace.join(file).is_file() {
            return Err(format!("`file={file}` is not a file in the workspace"));
        }
    }
    Ok((props, message))
}

/// Decodes `%XX` escapes, failing on any `%` not starting one of `allowed`.
fn decode(text: &str, allowed: &[&str]) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let escape = rest.get(at..at + 3).unwrap_or(&rest[at..]);
        if !allowed.contains(&escape) {
            return Err(format!("`{escape}` is not an allowed escape in `{text}`"));
        }
        out.push(match escape {
            "%25" => '%',
            "%0D" => '\r',
            "%0A" => '\n',
            "%3A" => ':',
            _ => ',',
        });
        rest = &rest[at + 3..];
    }
    out.push_str(rest);
    Ok(out)
}

#[test]
fn the_checker_rejects_what_github_would_misread() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("m.py"), "").unwrap();
    let ok = "::error file=m.py,line=1,col=2,endLine=1,endColumn=3,title=SL001::50%25 off";
    assert_eq!(check_workflow_command(ok, ws.path()).unwrap().1, "50% off");
    for bad in [
        "::error file=./m.py,line=1::x",
        "::error file=m.py,line=1,endLine=2,col=1::x",
        "::error file=m.py,line=2,endLine=1::x",
        "::error file=m.py,line=1::50% off",
        "::error file=a,b.py,line=1::x",
        "::error file=missing.py,line=1::x",
        "::error file=m.py,line=0::x",
        "::fatal file=m.py::x",
    ] {
        assert!(check_workflow_command(bad, ws.path()).is_err(), "{bad}");
    }
}

#[test]
fn lint_annotates_with_workspace_relative_paths_and_writes_the_summary() {
    let runner = Runner::new();
    runner.write("src/model.py", VIEW_BUG);
    runner.write("src/multi_line.py", MULTI_LINE);
    runner.write("odd, name: 100%/m.py", VIEW_BUG);
    runner.write("src/ok.py", "x = 1\n");
    let out = runner.lint(
        &runner.workspace(),
        &[
            ("INPUT_SRC", "."),
            ("INPUT_ARGS", "--no-cache"),
            ("INPUT_OUTPUT_FORMAT", "github"),
            ("INPUT_SUMMARY", "true"),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let lines: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 3, "{}", text(&out));
    let mut files = Vec::new();
    for line in &lines {
        let (props, _) = check_workflow_command(line, &runner.workspace())
            .unwrap_or_else(|e| panic!("{e}: {line}"));
        files.push(props["file"].clone());
    }
    assert_eq!(
        files,
        ["odd, name: 100%/m.py", "src/model.py", "src/multi_line.py"]
    );
    assert!(lines[1].starts_with(
        "::error file=src/model.py,line=4,col=12,endLine=4,endColumn=31,title=SL001::"
    ));
    // The multi-line `reshape`: rows 4 to 6, no columns.
    assert!(
        lines[2].starts_with("::warning file=src/multi_line.py,line=4,endLine=6,title=SL002::"),
        "{}",
        lines[2]
    );
    let summary = std::fs::read_to_string(runner.file("step_summary.md")).unwrap();
    assert!(
        summary.contains("| `src/model.py` | SL001 | 1 |"),
        "{summary}"
    );
    assert!(summary.contains("in 4 files."), "{summary}");
}

#[test]
fn annotations_are_relative_to_the_workspace_from_a_subdirectory() {
    let runner = Runner::new();
    runner.write("backend/src/model.py", VIEW_BUG);
    let out = runner.lint(
        &runner.workspace().join("backend"),
        &[
            ("INPUT_SRC", "./src"),
            ("INPUT_ARGS", "--no-cache --exit-zero"),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let line = stdout(&out);
    let (props, _) = check_workflow_command(line.trim_end(), &runner.workspace()).unwrap();
    assert_eq!(props["file"], "backend/src/model.py");
}

#[test]
fn output_format_and_summary_inputs_are_honoured() {
    let runner = Runner::new();
    runner.write("model.py", VIEW_BUG);
    // Another format from the input.
    let out = runner.lint(
        &runner.workspace(),
        &[
            ("INPUT_OUTPUT_FORMAT", "sarif"),
            ("INPUT_ARGS", "--no-cache"),
            ("INPUT_SUMMARY", "false"),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let sarif: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(sarif["runs"][0]["results"][0]["ruleId"], "SL001");
    assert!(
        !runner.file("step_summary.md").exists(),
        "summary: false writes no summary"
    );
    // `--output-format` in `args` wins, without clap's "used multiple times" error.
    let out = runner.lint(
        &runner.workspace(),
        &[
            ("INPUT_OUTPUT_FORMAT", "github"),
            (
                "INPUT_ARGS",
                "--no-cache --output-format concise --exit-zero",
            ),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        stdout(&out).starts_with("model.py:4:12: SL001 "),
        "{}",
        text(&out)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("`output-format` input is not used"));
}

#[test]
fn warnings_pass_the_step_unless_the_fail_on_input_says_warning() {
    let runner = Runner::new();
    runner.write("src/multi_line.py", MULTI_LINE);
    let lint = |inputs: &[(&str, &str)]| {
        let mut all = vec![("INPUT_ARGS", "--no-cache")];
        all.extend_from_slice(inputs);
        runner.lint(&runner.workspace(), &all)
    };
    // A warning (SL002) alone: annotated, and the step passes.
    let out = lint(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(stdout(&out).starts_with("::warning file=src/multi_line.py,"));
    // `fail-on: warning` fails it, as `fail-on = "warning"` in the configuration does.
    let out = lint(&[("INPUT_FAIL_ON", "warning")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(stdout(&out).starts_with("::warning file=src/multi_line.py,"));
    runner.write("stridelint.toml", "fail-on = \"warning\"\n");
    assert_eq!(lint(&[]).status.code(), Some(1));
    // The input wins over the configuration; a value that is no severity is a usage error.
    assert_eq!(lint(&[("INPUT_FAIL_ON", "error")]).status.code(), Some(0));
    let out = lint(&[("INPUT_FAIL_ON", "warnings")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

// --- action.yml itself ----------------------------------------------------------------------

/// The `run:` script of the step with `id: <id>` in `action.yml`: the block indented under
/// `run: |` (the action is small and regular; this is not a YAML parser).
fn action_script(id: &str) -> String {
    let action = std::fs::read_to_string(manifest_dir().join("action.yml")).unwrap();
    let lines: Vec<&str> = action.lines().collect();
    let step = lines
        .iter()
        .position(|l| l.trim() == format!("id: {id}"))
        .expect("the step exists");
    let run = step
        + lines[step..]
            .iter()
            .position(|l| l.trim() == "run: |")
            .expect("the step has a script");
    let indent = lines[run + 1].len() - lines[run + 1].trim_start().len();
    lines[run + 1..]
        .iter()
        .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() >= indent)
        .map(|l| format!("{}\n", l.get(indent..).unwrap_or("")))
        .collect()
}

#[test]
fn action_yml_declares_the_inputs_and_runs_the_tested_scripts() {
    let action = std::fs::read_to_string(manifest_dir().join("action.yml")).unwrap();
    for input in [
        "src:",
        "args:",
        "version:",
        "fail-on:",
        "output-format:",
        "summary:",
    ] {
        assert!(action.contains(&format!("\n  {input}\n")), "input {input}");
    }
    assert!(action.contains("  output-format:\n    description:"));
    assert!(action.contains("    default: github\n"));
    assert!(action.contains("        INPUT_FAIL_ON: ${{ inputs.fail-on }}\n"));
    for script in ["scripts/action/install.sh", "scripts/action/lint.sh"] {
        assert!(
            action.contains(&format!("run: bash \"$GITHUB_ACTION_PATH/{script}\"")),
            "{script}"
        );
        assert!(manifest_dir().join(script).is_file());
    }
    // The resolve step's script, run as the runner would.
    let runner = Runner::new();
    let script = runner.file("resolve.sh");
    std::fs::write(&script, action_script("resolve")).unwrap();
    for (input, expected) in [("", env!("CARGO_PKG_VERSION")), ("v0.2.0", "0.2.0")] {
        let _ = std::fs::remove_file(runner.file("github_output"));
        let out = Command::new("bash")
            .args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&script)
            .env("GITHUB_ACTION_PATH", manifest_dir())
            .env("GITHUB_OUTPUT", runner.file("github_output"))
            .env("INPUT_VERSION", input)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let outputs = runner.outputs();
        assert_eq!(outputs["version"], expected);
        assert!(outputs["lock"].parse::<u64>().is_ok(), "{outputs:?}");
    }
}
