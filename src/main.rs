//! The command line: parse arguments, build settings, call the library, print, and set
//! the exit code (0 clean, 1 findings, 2 usage or I/O error) — Ruff's conventions.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use stridelint::diagnostic::Severity;
use stridelint::lints::RULES;
use stridelint::report::{self, OutputFormat, ReportContext, RuleInfo};
use stridelint::fix::{plan_fixes, unified_diff, write_fixed, FixMode, WriteOutcome};
use stridelint::{check_paths, Settings};

#[derive(Parser)]
#[command(name = "stridelint", version, about = "Find tensor view errors, hidden copies and shape errors in PyTorch, candle and tch-rs model code")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Lint files and directories (the default command).
    Check(CheckArgs),
    /// Print the documentation of one rule.
    Rule {
        /// Rule code, e.g. SL001.
        code: String,
    },
    /// List all rules.
    Rules,
}

#[derive(Args)]
struct CheckArgs {
    /// Files or directories to lint (directories are searched recursively).
    #[arg(default_value = ".")]
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "full")]
    output_format: OutputFormat,
    /// Only report these rules (codes or prefixes, comma-separated).
    #[arg(long, value_delimiter = ',')]
    select: Vec<String>,
    /// Add rules to the selection.
    #[arg(long, value_delimiter = ',')]
    extend_select: Vec<String>,
    /// Do not report these rules (codes or prefixes, comma-separated).
    #[arg(long, value_delimiter = ',')]
    ignore: Vec<String>,
    /// Exclude files matching these gitignore-style patterns.
    #[arg(long, value_delimiter = ',')]
    exclude: Vec<String>,
    /// Apply exclusions to paths passed on the command line too (for pre-commit).
    #[arg(long)]
    force_exclude: bool,
    /// Lint files that `.gitignore` ignores.
    #[arg(long)]
    no_respect_gitignore: bool,
    /// Print a count of findings per rule instead of the findings.
    #[arg(long)]
    statistics: bool,
    /// Exit with 0 even when there are findings.
    #[arg(long)]
    exit_zero: bool,
    /// Smallest value a named size is assumed to have (default 2).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(i64).range(1..))]
    min_symbolic_size: i64,
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
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

const SUBCOMMANDS: &[&str] = &["check", "rule", "rules", "help", "-h", "--help", "-V", "--version"];

fn main() -> ExitCode {
    // `stridelint src/` means `stridelint check src/`, as with Ruff.
    let mut argv: Vec<String> = std::env::args().collect();
    if argv.len() == 1 || !SUBCOMMANDS.contains(&argv[1].as_str()) {
        argv.insert(1, "check".into());
    }
    let cli = match Cli::try_parse_from(&argv) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    match cli.command {
        Command::Rule { code } => match stridelint::lints::rule(&code) {
            Some(r) => {
                println!("{}", r.doc.trim_end());
                ExitCode::SUCCESS
            }
            None => {
                eprintln!("error: unknown rule `{code}` (see `stridelint rules`)");
                ExitCode::from(2)
            }
        },
        Command::Rules => {
            for r in RULES {
                println!("{:<7} {:<24} {:<8} {}", r.code, r.name, r.severity.as_str(), r.summary);
            }
            ExitCode::SUCCESS
        }
        Command::Check(args) => run_check(args),
    }
}

fn rule_infos() -> Vec<RuleInfo> {
    RULES
        .iter()
        .map(|r| RuleInfo { code: r.code, name: r.name, summary: r.summary, severity: r.severity, doc_markdown: r.doc })
        .collect()
}

fn run_check(args: CheckArgs) -> ExitCode {
    let mut settings = Settings::default();
    settings.select = args.select.iter().chain(&args.extend_select).map(|s| s.trim().to_uppercase()).collect();
    if !args.extend_select.is_empty() && args.select.is_empty() {
        // --extend-select adds to the default (all) selection.
        settings.select.clear();
    }
    settings.ignore = args.ignore.iter().map(|s| s.trim().to_uppercase()).collect();
    settings.discover.exclude = args.exclude.clone();
    settings.discover.force_exclude = args.force_exclude;
    settings.discover.respect_gitignore = !args.no_respect_gitignore;
    settings.analysis.assumptions.min_symbolic_size = args.min_symbolic_size;

    let mut result = check_paths(&args.paths, &settings);
    if args.fix || args.diff {
        let mode = if args.unsafe_fixes { FixMode::Unsafe } else { FixMode::Safe };
        let plans = plan_fixes(&result.diagnostics, mode);
        if args.diff {
            let mut out = std::io::stdout().lock();
            for (path, original, fixed, _) in &plans {
                let _ = write!(out, "{}", unified_diff(path, original, fixed));
            }
            let n: usize = plans.iter().map(|p| p.3).sum();
            eprintln!("Would fix {n} findings in {} files.", plans.len());
            return if plans.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) };
        }
        let mut fixed_count = 0;
        for (path, original, fixed, n) in &plans {
            match write_fixed(path, original, fixed) {
                Ok(WriteOutcome::Written) => fixed_count += n,
                Ok(WriteOutcome::ChangedOnDisk) => {
                    eprintln!("warning: {} changed while it was being linted; not fixed", path.display())
                }
                Err(e) => result.errors.push(stridelint::FileError { path: path.clone(), message: format!("cannot write fix: {e}") }),
            }
        }
        if fixed_count > 0 {
            // Report what remains after fixing.
            let again = check_paths(&args.paths, &settings);
            result.diagnostics = again.diagnostics;
            if !args.quiet {
                eprintln!("Fixed {fixed_count} findings.");
            }
        }
    }
    let mut diagnostics = result.diagnostics;
    diagnostics.sort_by(|a, b| a.file.path.cmp(&b.file.path).then(a.span.start.cmp(&b.span.start)).then(a.code.cmp(b.code)));

    let stdout = std::io::stdout();
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => stdout.is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    let rules = rule_infos();
    let version = env!("CARGO_PKG_VERSION");
    let ctx = ReportContext { rules: &rules, version, color, show_fixes: true };
    let mut out = stdout.lock();
    let written = if args.statistics {
        report::write_statistics(&mut out, &diagnostics, &ctx)
    } else {
        report::write_report(&mut out, args.output_format, &diagnostics, &ctx)
    };
    if let Err(e) = written {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("error: cannot write output: {e}");
            return ExitCode::from(2);
        }
    }
    let human = matches!(args.output_format, OutputFormat::Full | OutputFormat::Concise | OutputFormat::Grouped);
    if human && !args.quiet && !args.statistics {
        let errors = diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
        let warnings = diagnostics.len() - errors;
        let _ = if diagnostics.is_empty() {
            writeln!(out, "All checks passed! ({})", plural(result.files_checked, "file"))
        } else {
            writeln!(
                out,
                "Found {} ({}, {}) in {}.",
                plural(diagnostics.len(), "finding"),
                plural(errors, "error"),
                plural(warnings, "warning"),
                plural(result.files_checked, "file")
            )
        };
    }
    drop(out);
    for e in &result.errors {
        eprintln!("error: {}: {}", e.path.display(), e.message);
    }
    if !result.errors.is_empty() {
        ExitCode::from(2)
    } else if !diagnostics.is_empty() && !args.exit_zero {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}
