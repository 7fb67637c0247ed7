//! The command line: parse arguments, build settings, call the library, print, and set
//! the exit code (0 clean, 1 findings at the `--fail-on` severity — errors by default, as
//! ESLint's and Clippy's gates —, 2 usage or I/O error) — Ruff's conventions otherwise.

use std::io::{IsTerminal, Write};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

mod cli;

use stridelint::fix::{unified_diff, FixMode};
use stridelint::lints::RULES;
use stridelint::pipeline::{self, plural};
use stridelint::report::{self, OutputFormat, ReportContext};
use stridelint::settings::{Config, FailOn, SettingsResolver};
use stridelint::CheckResult;

#[derive(Parser)]
#[command(
    name = "stridelint",
    version,
    about = "Find tensor view errors, hidden copies and shape errors in PyTorch, candle and tch-rs model code"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Lint files and directories (the default command).
    Check(Box<CheckArgs>),
    /// Print the documentation of one rule (or of all, `--all`).
    Rule {
        /// Rule code, e.g. SL001.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        code: Option<String>,
        /// Every rule.
        #[arg(long)]
        all: bool,
        /// `text` (the Markdown documentation) or `json`.
        #[arg(long, value_enum, default_value = "text")]
        output_format: RuleFormat,
    },
    /// List all rules: code, name, severity and summary (`--output-format json`: an array
    /// of objects with those keys, `fix` and `url`).
    Rules {
        /// `text` (one rule a line) or `json`.
        #[arg(long, value_enum, default_value = "text")]
        output_format: RuleFormat,
    },
    /// Remove the result cache: the project's (or `--cache-dir`'s) and every
    /// `.stridelint_cache` below the current directory.
    Clean {
        /// The cache directory to remove (default `.stridelint_cache` in the project root;
        /// environment: STRIDELINT_CACHE_DIR).
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<PathBuf>,
    },
    /// Replay a chain of tensor ops on concrete sizes and measure every copy it makes.
    Replay(cli::replay::ReplayArgs),
    /// Write the cost report: one self-contained HTML page (default
    /// `stridelint-report.html`) ranking the copies by bytes per forward pass, with a chart
    /// and each site's zero-copy alternative. Takes `check`'s options: give the sizes with
    /// `--dim`, `--dtype`, `--layers` (and `--verify` to measure); exits 0 unless it fails.
    Report(Box<CheckArgs>),
    /// Run the language server (LSP over standard input and output) for editors:
    /// diagnostics as you type, fixes, and the layout of a tensor on hover.
    Server,
}

#[derive(Args, Clone)]
struct CheckArgs {
    /// Files or directories to lint (directories are searched recursively); `-` reads one
    /// file from standard input (name it with `--stdin-filename`).
    #[arg(default_value = ".")]
    paths: Vec<PathBuf>,
    /// The name of the file read from standard input (`-`): where findings are reported,
    /// which configuration applies, and its language (`.rs` is Rust). Default `stdin.py`.
    #[arg(long, value_name = "PATH")]
    stdin_filename: Option<PathBuf>,
    /// Write the report to FILE instead of standard output (e.g. `-o results.sarif`).
    #[arg(short = 'o', long, value_name = "FILE")]
    output_file: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "full")]
    output_format: OutputFormat,
    /// Only report these rules (codes or prefixes, comma-separated).
    #[arg(long, value_delimiter = ',')]
    select: Option<Vec<String>>,
    /// Add rules to the selection.
    #[arg(long, value_delimiter = ',')]
    extend_select: Vec<String>,
    /// Do not report these rules (codes or prefixes, comma-separated).
    #[arg(long, value_delimiter = ',')]
    ignore: Vec<String>,
    /// Exclude files matching these gitignore-style patterns.
    #[arg(long, value_delimiter = ',')]
    exclude: Vec<String>,
    /// Exclude these patterns too (added to the configuration's `exclude`).
    #[arg(long, value_delimiter = ',')]
    extend_exclude: Vec<String>,
    /// Use this configuration file for every file, instead of the closest
    /// `stridelint.toml` / `.stridelint.toml` / `pyproject.toml` `[tool.stridelint]`.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Apply exclusions to paths passed on the command line too (for pre-commit).
    #[arg(long)]
    force_exclude: bool,
    /// Lint files that `.gitignore` ignores.
    #[arg(long)]
    no_respect_gitignore: bool,
    /// Print a count of findings per rule instead of the findings (a JSON array with
    /// `--output-format json`).
    #[arg(long)]
    statistics: bool,
    /// Print the settings the first file found is linted with, and lint nothing.
    #[arg(long, conflicts_with_all = ["show_files", "fix", "diff", "add_noqa"])]
    show_settings: bool,
    /// Print the files that would be linted, one a line, and lint nothing.
    #[arg(long, conflicts_with_all = ["fix", "diff", "add_noqa"])]
    show_files: bool,
    /// Exit with 0 even when there are findings.
    #[arg(long)]
    exit_zero: bool,
    /// Lint, then lint again whenever a file under the paths (or a configuration file)
    /// changes, until interrupted; a terminal shows the latest run only.
    #[arg(long, conflicts_with_all = ["diff", "add_noqa", "show_files", "show_settings"])]
    watch: bool,
    /// The least severity that fails the run (exit 1): `error` (the default: warnings and
    /// infos are reported but exit 0), `warning`, or `info` (every finding). Overrides the
    /// configuration's `fail-on`.
    #[arg(long, value_enum, value_name = "SEVERITY")]
    fail_on: Option<FailOn>,
    /// Smallest value a named size is assumed to have (default 2; 1 to 65536).
    #[arg(
        long,
        value_parser = clap::value_parser!(i64).range(1..=stridelint::settings::MAX_MIN_SYMBOLIC_SIZE)
    )]
    min_symbolic_size: Option<i64>,
    /// Follow calls of names imported from other files of the tree (`follow-imports`).
    #[arg(long)]
    follow_imports: bool,
    /// When to use colours.
    #[arg(long, value_enum, default_value = "auto")]
    color: ColorChoice,
    /// Print only the findings (no summary line).
    #[arg(short, long)]
    quiet: bool,
    /// Apply safe fixes in place (only files unchanged since they were read; atomic writes).
    #[arg(long)]
    fix: bool,
    /// Also apply unsafe fixes (they may change behaviour, e.g. `view` -> `reshape`).
    #[arg(long)]
    unsafe_fixes: bool,
    /// Print the fixes as a unified diff instead of writing them.
    #[arg(long)]
    diff: bool,
    /// With `--fix`: list the fixes applied, per file and rule.
    #[arg(long)]
    show_fixes: bool,
    /// With `--fix`: exit with 1 when a file was fixed, even if no finding remains.
    /// Contradicts `--exit-zero` (a usage error, as in Ruff).
    #[arg(long, conflicts_with = "exit_zero")]
    exit_non_zero_on_fix: bool,
    /// Ignore every suppression comment (`# noqa`, `# stridelint: ignore[…]`, file-level
    /// `# stridelint: noqa`): report everything.
    #[arg(long)]
    ignore_noqa: bool,
    /// Append `# noqa: SLxxx` to every line with findings (merged into an existing
    /// directive), to adopt stridelint on an existing code base.
    #[arg(long, conflicts_with_all = ["fix", "diff"])]
    add_noqa: bool,
    /// Do not read or write the result cache.
    #[arg(long)]
    no_cache: bool,
    /// The result cache's directory (default `.stridelint_cache` in the project root;
    /// environment: STRIDELINT_CACHE_DIR).
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Also append a Markdown summary of the findings (per rule and file) to FILE, e.g.
    /// `$GITHUB_STEP_SUMMARY`.
    #[arg(long, value_name = "FILE")]
    summary: Option<PathBuf>,
    #[command(flatten)]
    verify: cli::verify::VerifyArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum RuleFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

const SUBCOMMANDS: &[&str] = &[
    "check",
    "rule",
    "rules",
    "clean",
    "replay",
    "report",
    "server",
    "help",
    "-h",
    "--help",
    "-V",
    "--version",
];

/// mimalloc: linting allocates many small short-lived objects (IR, layouts, findings)
/// from two threads, where it is markedly faster than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc commits its arena eagerly where the OS overcommits (Linux), and then keeps the
/// pages it frees resident: a large file's peak memory was a sixth higher, the real-code
/// tree's a half, for the same CPU time. The option is read when the allocator starts,
/// before `main`, so it is set by a constructor that runs before the default-priority ones
/// (mimalloc's own). `mi_option_set` and the option's number are those of `mimalloc.h`
/// (v2 and v3), which the mimalloc crate builds.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array.00101"]
static COMMIT_ALLOCATOR_MEMORY_LAZILY: extern "C" fn() = commit_allocator_memory_lazily;

#[cfg(target_os = "linux")]
extern "C" fn commit_allocator_memory_lazily() {
    extern "C" {
        fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    }
    const MI_OPTION_ARENA_EAGER_COMMIT: std::ffi::c_int = 4;
    // SAFETY: sets one option of the allocator linked in; any value is valid for it.
    unsafe { mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0) }
}

/// Does `arg`, the first argument, mean `stridelint check arg …`? `stridelint src/` does, as
/// with Ruff: an option (`--select`, `-`), a path that exists, or text that looks like a
/// path (`model.py`, `./src`, `a/b`, not UTF-8). A bare word that names nothing (`chek`)
/// is left to the subcommand parser, which reports it as an unrecognized subcommand.
fn means_check(arg: &std::ffi::OsStr) -> bool {
    let Some(text) = arg.to_str() else {
        return true;
    };
    if SUBCOMMANDS.contains(&text) {
        return false;
    }
    text.starts_with('-')
        || text.contains(['/', '\\', '.'])
        || std::fs::symlink_metadata(arg).is_ok()
}

fn main() -> ExitCode {
    let (cli, matches) = match parse_arguments() {
        Ok(parsed) => parsed,
        Err(code) => return code,
    };
    if let Some(error) = writes_to_stdout(&cli.command)
        .then(cli::streams::stdout_error)
        .flatten()
    {
        eprintln!("error: {error}");
        return ExitCode::from(2);
    }
    match cli.command {
        Command::Rule {
            code,
            all,
            output_format,
        } => rule(code, all, output_format),
        Command::Clean { cache_dir } => clean(cache_dir),
        Command::Rules { output_format } => list_rules(output_format),
        Command::Check(args) if args.watch => watch(*args),
        Command::Check(args) => run_check(*args),
        Command::Report(args) => cost_report(*args, &matches),
        Command::Replay(args) => cli::replay::run(args),
        Command::Server => match serve() {
            Ok(stridelint::server::Ended::Shutdown) => ExitCode::SUCCESS,
            Ok(stridelint::server::Ended::Abandoned) => ExitCode::from(1),
            Err(e) => {
                eprintln!("error: stridelint server: {e:#}");
                ExitCode::from(2)
            }
        },
    }
}

/// The command line, `check` put first where the first argument means it (see
/// [`means_check`]); on `--help`, `--version` or an error, what clap printed and the exit
/// code.
fn parse_arguments() -> Result<(Cli, clap::ArgMatches), ExitCode> {
    // Arguments are read as `OsString`s: a path need not be UTF-8 (clap rejects non-UTF-8
    // text where it needs it).
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.len() == 1 || means_check(&argv[1]) {
        argv.insert(1, "check".into());
    }
    let parsed = <Cli as clap::CommandFactory>::command()
        .try_get_matches_from(&argv)
        .and_then(|matches| {
            let cli = <Cli as clap::FromArgMatches>::from_arg_matches(&matches)?;
            Ok((cli, matches))
        });
    parsed.map_err(|e| {
        let _ = e.print();
        if e.use_stderr() {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        }
    })
}

/// `stridelint rule CODE` / `stridelint rule --all`.
fn rule(code: Option<String>, all: bool, output_format: RuleFormat) -> ExitCode {
    let rules: Vec<&stridelint::lints::Rule> = match &code {
        _ if all => RULES.iter().collect(),
        Some(code) => match stridelint::lints::rule(code) {
            Some(r) => vec![r],
            None => {
                eprintln!("error: unknown rule `{code}` (see `stridelint rules`)");
                return ExitCode::from(2);
            }
        },
        None => unreachable!("clap requires a code or --all"),
    };
    print_rules(&rules, output_format, all)
}

/// `stridelint rules`: one rule a line, or a JSON array.
fn list_rules(output_format: RuleFormat) -> ExitCode {
    let text: String = match output_format {
        RuleFormat::Text => RULES
            .iter()
            .map(|r| {
                let severity = r.severity.as_str();
                format!("{:<7} {:<24} {severity:<8} {}\n", r.code, r.name, r.summary)
            })
            .collect(),
        RuleFormat::Json => {
            let rules: Vec<serde_json::Value> = RULES.iter().map(|r| rule_json(r, false)).collect();
            let json =
                serde_json::to_string_pretty(&rules).expect("a JSON value always serialises");
            format!("{json}\n")
        }
    };
    cli::streams::print(&text)
        .err()
        .unwrap_or(ExitCode::SUCCESS)
}

/// `stridelint report`: `check` writing the HTML cost report to a file, exiting 0 unless
/// it fails.
fn cost_report(mut args: CheckArgs, matches: &clap::ArgMatches) -> ExitCode {
    // `report` shares `check`'s options; an `--output-format` other than `html`
    // would silently write HTML, so it is refused before anything is written.
    let given = matches
        .subcommand_matches("report")
        .and_then(|m| m.value_source("output_format"))
        == Some(clap::parser::ValueSource::CommandLine);
    if given && args.output_format != OutputFormat::Html {
        let name = clap::ValueEnum::to_possible_value(&args.output_format)
            .map_or_else(String::new, |v| v.get_name().to_string());
        eprintln!(
            "error: `stridelint report` writes the HTML cost report only \
             (`--output-format html`); for `--output-format {name}` use `stridelint check`"
        );
        return ExitCode::from(2);
    }
    args.output_format = OutputFormat::Html;
    args.output_file
        .get_or_insert_with(|| PathBuf::from("stridelint-report.html"));
    args.exit_zero = true;
    let written = args.output_file.clone();
    let code = run_check(args);
    if let Some(path) = written.filter(|p| p.is_file()) {
        eprintln!("wrote {}", path.display());
    }
    code
}

/// Does `command` print its result on standard output (so a closed one is an error)?
fn writes_to_stdout(command: &Command) -> bool {
    match command {
        Command::Rule { .. } | Command::Rules { .. } | Command::Replay(_) => true,
        Command::Check(args) => args.output_file.is_none(),
        Command::Report(_) | Command::Clean { .. } | Command::Server => false,
    }
}

/// `stridelint server`. Its client going away (a closed pipe) ends the process, as it
/// always has; the other commands see the closed pipe as an error and end quietly.
fn serve() -> anyhow::Result<stridelint::server::Ended> {
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    stridelint::server::run()
}

/// `stridelint rule`: the documentation of `rules`, as Markdown or as JSON (an object, or
/// with `--all` an array).
fn print_rules(rules: &[&stridelint::lints::Rule], format: RuleFormat, all: bool) -> ExitCode {
    let mut out = std::io::stdout().lock();
    let written = match format {
        RuleFormat::Text => {
            let docs: Vec<&str> = rules.iter().map(|r| r.doc.text.trim_end()).collect();
            writeln!(out, "{}", docs.join("\n\n"))
        }
        RuleFormat::Json => {
            let objects: Vec<serde_json::Value> =
                rules.iter().map(|r| rule_json(r, true)).collect();
            let value = match all {
                true => serde_json::Value::Array(objects),
                false => objects.into_iter().next().unwrap_or_default(),
            };
            serde_json::to_writer_pretty(&mut out, &value)
                .map_err(std::io::Error::from)
                .and_then(|()| writeln!(out))
        }
    };
    match written.and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("error: cannot write output: {e}");
            ExitCode::from(2)
        }
        _ => ExitCode::SUCCESS,
    }
}

/// A rule as JSON: `code`, `name`, `severity`, `summary`, `fix` (`none`, `sometimes`,
/// `always`), `url`, and with `explanation` its documentation (`stridelint rule`).
fn rule_json(r: &stridelint::lints::Rule, explanation: bool) -> serde_json::Value {
    let mut value = serde_json::json!({
        "code": r.code,
        "name": r.name,
        "severity": r.severity.as_str(),
        "summary": r.summary,
        "fix": r.fix.as_str(),
        "url": stridelint::diagnostic::rule_url(r.code),
    });
    if explanation {
        value["explanation"] = r.doc.text.into();
    }
    value
}

/// `stridelint clean`: remove the project's cache directory (or `--cache-dir`'s) and every
/// `.stridelint_cache` below the current directory, saying which.
fn clean(cache_dir: Option<PathBuf>) -> ExitCode {
    let mut failed = false;
    for dir in pipeline::caches_to_clean(cache_dir) {
        match stridelint::cache::remove(&dir) {
            Ok(true) => eprintln!(
                "Removing cache at: {}",
                stridelint::settings::display_path(&dir)
            ),
            Ok(false) => {}
            Err(e) => {
                eprintln!("error: {}: {e}", dir.display());
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

/// The command line's settings, as the top configuration layer (unset flags stay `None`).
fn cli_overrides(args: &CheckArgs) -> Config {
    let list = |v: &Vec<String>| (!v.is_empty()).then(|| v.clone());
    Config {
        select: args.select.clone(),
        extend_select: list(&args.extend_select),
        ignore: list(&args.ignore),
        exclude: list(&args.exclude),
        extend_exclude: list(&args.extend_exclude),
        respect_gitignore: args.no_respect_gitignore.then_some(false),
        min_symbolic_size: args.min_symbolic_size,
        follow_imports: args.follow_imports.then_some(true),
        fail_on: args.fail_on,
        ..Config::default()
    }
}

/// `check --watch`: [`run_check`] now and after each change (see `cli::watch`).
fn watch(args: CheckArgs) -> ExitCode {
    if args.paths.iter().any(|p| pipeline::is_stdin(p)) {
        eprintln!("error: --watch watches files; it cannot be used with `-` (standard input)");
        return ExitCode::from(2);
    }
    let paths = args.paths.clone();
    cli::watch::watch(&paths, || run_check(args.clone()))
}

/// `stridelint check`: lint, then `--add-noqa`, `--fix` or `--diff` where asked, verify
/// where asked, and print the report.
fn run_check(args: CheckArgs) -> ExitCode {
    let resolver = match check_settings(&args) {
        Ok(resolver) => resolver,
        Err(code) => return code,
    };
    // Cached findings carry no subject layout, so `--verify` always analyses afresh; nor
    // what the analysis reached, so `--statistics` does too.
    let cache = (!args.no_cache && args.verify.verify.is_none() && !args.statistics).then(|| {
        // JSON shows each finding's symbolic subject, which the cache does not store, and
        // every format but the concise one shows the notes, where a copy whose sizes are
        // known states its size (computed from the subject after linting). Fix edits are
        // recomputed, never taken from the cache file.
        let subjects_needed = !matches!(args.output_format, OutputFormat::Concise);
        let dir = args.cache_dir.clone();
        pipeline::open_cache(dir, &resolver, subjects_needed, args.fix || args.diff)
    });
    if args.show_files || args.show_settings {
        return show_files_or_settings(&args, &resolver);
    }
    let stdin_filename = args.stdin_filename.as_deref();
    // A progress bar on a terminal, for long runs in a human format.
    let progress = is_human(args.output_format) && !args.statistics;
    let mut result = pipeline::lint(
        &args.paths,
        stdin_filename,
        &resolver,
        cache.as_ref(),
        progress,
    );
    if let Some(cache) = &cache {
        if let Err(e) = cache.save() {
            eprintln!("warning: cannot write the cache: {e}");
        }
    }
    if args.add_noqa {
        return add_noqa(&result);
    }
    let mut fixed_fails = false;
    if args.fix || args.diff {
        match fix(&args, &resolver, cache.as_ref(), &mut result) {
            ControlFlow::Continue(fails) => fixed_fails = fails,
            ControlFlow::Break(code) => return code,
        }
    }
    let mut diagnostics = std::mem::take(&mut result.diagnostics);
    pipeline::sort_findings(&mut diagnostics);
    match cli::verify::verify_check_findings(&mut diagnostics, &args.verify, &|path| {
        resolver.settings_for(path).ok()
    }) {
        Ok(refused) => result.errors.extend(refused),
        Err(code) => return code,
    }
    print_check_report(&args, &resolver, &diagnostics, result, fixed_fails)
}

/// Is `format` one for people (so a progress bar and the summary line go with it)?
fn is_human(format: OutputFormat) -> bool {
    matches!(
        format,
        OutputFormat::Full | OutputFormat::Concise | OutputFormat::Grouped
    )
}

/// The settings of a check run, after refusing what standard input cannot do.
fn check_settings(args: &CheckArgs) -> Result<SettingsResolver, ExitCode> {
    let reads_stdin = args.paths.iter().any(|p| pipeline::is_stdin(p));
    if reads_stdin && (args.fix || args.diff || args.add_noqa) {
        eprintln!("error: --fix, --diff and --add-noqa edit files; they cannot be used with `-` (standard input)");
        return Err(ExitCode::from(2));
    }
    if let Some(error) = reads_stdin.then(cli::streams::stdin_error).flatten() {
        eprintln!("error: {error}");
        return Err(ExitCode::from(2));
    }
    let overrides = cli_overrides(args);
    match SettingsResolver::from_cli(overrides, args.config.as_deref(), args.force_exclude) {
        Ok(resolver) => Ok(resolver.with_ignore_noqa(args.ignore_noqa)),
        Err(e) => {
            eprintln!("error: {e}");
            Err(ExitCode::from(2))
        }
    }
}

/// `--fix` / `--diff` on `result`: the diff printed (the run ends: `Break`), or the fixes
/// written and the files linted again; `Continue(true)` when the fixes fail the run
/// (`--exit-non-zero-on-fix`).
fn fix(
    args: &CheckArgs,
    resolver: &SettingsResolver,
    cache: Option<&stridelint::cache::Cache>,
    result: &mut CheckResult,
) -> ControlFlow<ExitCode, bool> {
    let mode = if args.unsafe_fixes {
        FixMode::Unsafe
    } else {
        FixMode::Safe
    };
    let plans = pipeline::plan_fixes(result, mode);
    if args.diff {
        return ControlFlow::Break(print_diff(&plans, &result.errors, args.exit_zero));
    }
    let fixed = pipeline::write_plans(&plans, &mut result.errors, "cannot write fix");
    for path in &fixed.changed_on_disk {
        eprintln!(
            "warning: {} changed while it was being linted; not fixed",
            path.display()
        )
    }
    if fixed.count == 0 {
        if args.show_fixes && !args.quiet {
            eprintln!("No fixes applied.");
        }
        return ControlFlow::Continue(false);
    }
    // Report what remains after fixing.
    let applied =
        pipeline::lint_again_after_fixing(result, &fixed, mode, &args.paths, resolver, cache);
    if !args.quiet {
        eprintln!(
            "Fixed {}{}",
            plural(fixed.count, "finding"),
            if args.show_fixes { ":" } else { "." }
        );
    }
    if args.show_fixes {
        eprint!("{applied}");
    }
    ControlFlow::Continue(args.exit_non_zero_on_fix)
}

/// Print the report of a check run in its format (to `--output-file` or standard output),
/// the summary line, the `--summary` file and the errors; the run's exit code.
fn print_check_report(
    args: &CheckArgs,
    resolver: &SettingsResolver,
    diagnostics: &[stridelint::diagnostic::Diagnostic],
    mut result: CheckResult,
    fixed_fails: bool,
) -> ExitCode {
    let stdout = std::io::stdout();
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            args.output_file.is_none()
                && stdout.is_terminal()
                && std::env::var_os("NO_COLOR").is_none()
        }
    };
    let fail_on = resolver.fail_on();
    let rules = pipeline::rule_infos();
    let ctx = ReportContext {
        rules: &rules,
        version: env!("CARGO_PKG_VERSION"),
        color,
        show_fixes: true,
    };
    if let Some(path) = &args.summary {
        let files = result.files_checked;
        if let Err(e) = pipeline::append_summary(path, diagnostics, &ctx, files) {
            result.errors.push(stridelint::FileError {
                location: None,
                path: path.clone(),
                message: format!("cannot write the summary: {e}"),
            });
        }
    }
    let mut out: Box<dyn Write> = match &args.output_file {
        Some(path) => match std::fs::File::create(path) {
            Ok(file) => Box::new(std::io::BufWriter::new(file)),
            Err(e) => {
                eprintln!("error: cannot write {}: {e}", path.display());
                return ExitCode::from(2);
            }
        },
        None => Box::new(stdout.lock()),
    };
    if let Err(e) = write_check_report(&mut out, args, diagnostics, &result, &ctx, fail_on) {
        return cli::streams::write_failed(&e);
    }
    drop(out);
    for e in &result.errors {
        eprintln!("error: {}: {}", e.place(), e.message);
    }
    let status = pipeline::exit_status(&result, diagnostics, fail_on, args.exit_zero, fixed_fails);
    ExitCode::from(status)
}

/// The report (or the statistics) in `args`' format, then the summary line of a human
/// format, flushed.
fn write_check_report(
    out: &mut dyn Write,
    args: &CheckArgs,
    diagnostics: &[stridelint::diagnostic::Diagnostic],
    result: &CheckResult,
    ctx: &ReportContext,
    fail_on: FailOn,
) -> std::io::Result<()> {
    let json = matches!(
        args.output_format,
        OutputFormat::Json | OutputFormat::JsonLines
    );
    if args.statistics && json {
        report::write_statistics_json(out, diagnostics, &result.sites, ctx)?;
    } else if args.statistics {
        report::write_statistics(out, diagnostics, &result.sites, ctx)?;
    } else {
        report::write_report(out, args.output_format, diagnostics, ctx)?;
    }
    if is_human(args.output_format) && !args.quiet && !args.statistics {
        let line = pipeline::summary_line(diagnostics, result, fail_on);
        out.write_all(line.as_bytes())?;
    }
    out.flush()
}

/// `--diff`: the fixes as a unified diff; exit 1 when there is one (unless `exit_zero`),
/// 2 after an error.
fn print_diff(
    plans: &[stridelint::fix::Plan],
    errors: &[stridelint::FileError],
    exit_zero: bool,
) -> ExitCode {
    let diff: String = plans
        .iter()
        .map(|(path, original, fixed, _)| unified_diff(path, original, fixed))
        .collect();
    if let Err(code) = cli::streams::print(&diff) {
        return code;
    }
    let n: usize = plans.iter().map(|p| p.3).sum();
    eprintln!(
        "Would fix {} in {}.",
        plural(n, "finding"),
        plural(plans.len(), "file")
    );
    for e in errors {
        eprintln!("error: {}: {}", e.place(), e.message);
    }
    if !errors.is_empty() {
        ExitCode::from(2)
    } else if plans.is_empty() || exit_zero {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `--show-files` (the files a run would lint) and `--show-settings` (what the first of
/// them is linted with); exit 2 if a path or a configuration cannot be read.
fn show_files_or_settings(args: &CheckArgs, resolver: &SettingsResolver) -> ExitCode {
    let stdin_filename = args.stdin_filename.as_deref();
    let (files, mut errors) = pipeline::files_to_lint(&args.paths, stdin_filename, resolver);
    let mut text = String::new();
    if args.show_files {
        for file in &files {
            // As the reports name files: `src/model.py`, never `./src/model.py`.
            let file = file.strip_prefix(".").unwrap_or(file);
            text.push_str(&format!("{}\n", stridelint::settings::display_path(file)));
        }
    } else if let Some(file) = files.first() {
        match resolver.describe_settings(file) {
            Ok(description) => text = description,
            Err(e) => errors.push(e.into()),
        }
    } else {
        errors.push(stridelint::FileError {
            location: None,
            path: PathBuf::from("--show-settings"),
            message: "no file to lint under the given paths".into(),
        });
    }
    if let Err(code) = cli::streams::print(&text) {
        return code;
    }
    for e in &errors {
        eprintln!("error: {}: {}", e.place(), e.message);
    }
    if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    }
}

/// `--add-noqa`: write a suppression for every finding, atomically, and report how many.
fn add_noqa(result: &CheckResult) -> ExitCode {
    let (added, errors) = pipeline::add_noqa(result);
    for path in &added.changed_on_disk {
        eprintln!(
            "warning: {} changed while it was being linted; no directive added",
            path.display()
        )
    }
    eprintln!(
        "Added {} {}.",
        added.count,
        if added.count == 1 {
            "noqa directive"
        } else {
            "noqa directives"
        }
    );
    for e in &errors {
        eprintln!("error: {}: {}", e.place(), e.message);
    }
    if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    }
}
