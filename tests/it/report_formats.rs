//! Output formats (`stridelint::report`): a snapshot per format, escaping edge cases,
//! multi-line spans in GitHub annotations, how each format names files, SARIF validated
//! against the official OASIS schema, and the GitLab Code Quality and reviewdog reports
//! against schemas written from their published specifications (`tests/data/`).
//!
//! Reports are rendered as if run in `/project` ([`PathDisplay::at`]), so the absolute
//! paths of the JSON formats do not depend on where the tests run.
//!
//! The findings are synthetic but self-consistent: a GPT-style attention block whose
//! `.transpose(1, 2)` makes the later `.view(B, T, C)` impossible (ATen's computeStride,
//! spec §3) and the `.reshape(B, T, C)` a hidden copy. The shapes and strides in the chain
//! labels follow from a contiguous `x` of shape (B, T, C).

use std::path::Path;
use std::sync::Arc;

use stridelint::coverage::{OpFamily, SiteCounts};
use stridelint::diagnostic::{Applicability, Claim, Diagnostic, Edit, Fix, Label, Severity};
use stridelint::ir::Span;
use stridelint::report::{
    write_report, write_report_with_paths, write_statistics, write_statistics_json, OutputFormat,
    PathDisplay, ReportContext, RuleInfo,
};
use stridelint::source::SourceFile;

const MODEL: &str = "\
import torch


def forward(x, n_head):
    B, T, C = x.shape
    q = x.view(B, T, n_head, C // n_head).transpose(1, 2)
    y = q.view(B, T, C)
    out = q.reshape(
        B, T, C
    )
    return y + out
";

/// A second file whose path and message contain every character some format must escape.
const ODD_PATH: &str = "odd dir/a,b:c%d/modèle.py";
const ODD_SOURCE: &str = "é = x.view(-1)\n";
const ODD_MESSAGE: &str = "50% off: got (B, T), want 3·C, <&> \"q\" 'r'\nsecond line\r";

const RULES: &[RuleInfo] = &[
    RuleInfo {
        code: "SL001",
        name: "view-incompatible",
        summary: "`view` on a layout it cannot be computed for",
        severity: Severity::Error,
        doc_markdown: "## What it does\nFinds `view` calls that must fail.\n\n## Why is this bad?\n`view` raises at run time.\n",
        claim: Claim::NoView,
    },
    RuleInfo {
        code: "SL002",
        name: "hidden-copy",
        summary: "`reshape` that always copies",
        severity: Severity::Warning,
        doc_markdown: "## What it does\nFinds `reshape` calls that copy.\n",
        claim: Claim::HiddenCopy,
    },
];

fn ctx(color: bool, show_fixes: bool) -> ReportContext<'static> {
    ReportContext {
        rules: RULES,
        version: "0.1.0",
        color,
        show_fixes,
    }
}

/// The span of the only occurrence of `needle` in `text`.
fn span_of(text: &str, needle: &str) -> Span {
    let start = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in the sample"));
    assert_eq!(
        text.rfind(needle),
        Some(start),
        "{needle:?} must occur once"
    );
    Span::new(start, start + needle.len())
}

fn chain() -> Vec<Label> {
    vec![
        Label {
            span: span_of(MODEL, "x.view(B, T, n_head, C // n_head)"),
            message: "after `.view(B, T, n_head, C // n_head)`: (B, T, n_head, C // n_head) strides (T·C, C, C // n_head, 1)"
                .into(),
        },
        Label {
            span: span_of(MODEL, "transpose(1, 2)"),
            message: "after `.transpose(1, 2)`: (B, n_head, T, C // n_head) strides (T·C, C // n_head, C, 1)".into(),
        },
    ]
}

fn notes() -> Vec<String> {
    vec![
        "assumes `x` is contiguous when it enters `forward`".into(),
        "assumes T ≥ 2 and n_head ≥ 2".into(),
    ]
}

fn view_incompatible(file: &Arc<SourceFile>) -> Diagnostic {
    let call = span_of(MODEL, "q.view(B, T, C)");
    Diagnostic {
        code: "SL001",
        severity: Severity::Error,
        message: "`.view(B, T, C)` cannot be computed for strides (T·C, C // n_head, C, 1)".into(),
        file: file.clone(),
        span: call,
        chain: chain(),
        notes: notes(),
        help: Some("call `.contiguous()` first, or use `.reshape(B, T, C)`, which copies".into()),
        fix: Some(Fix {
            message: "Replace `.view` with `.reshape`".into(),
            applicability: Applicability::Unsafe,
            edits: vec![Edit {
                span: Span::new(call.start as usize + 2, call.start as usize + 6),
                content: "reshape".into(),
            }],
        }),
        unsafe_fix: None,
        verify: None,
        copy: None,
        subject: None,
    }
}

fn hidden_copy(file: &Arc<SourceFile>) -> Diagnostic {
    let call = span_of(MODEL, "q.reshape(\n        B, T, C\n    )");
    Diagnostic {
        code: "SL002",
        severity: Severity::Warning,
        message: "`.reshape(B, T, C)` copies: the layout after `.transpose(1, 2)` has no such view"
            .into(),
        file: file.clone(),
        span: call,
        chain: chain()[1..].to_vec(),
        notes: notes(),
        help: None,
        fix: Some(Fix {
            message: "Make the copy explicit with `.contiguous().view`".into(),
            applicability: Applicability::Safe,
            edits: vec![Edit {
                span: Span::new(call.start as usize + 2, call.start as usize + 9),
                content: "contiguous().view".into(),
            }],
        }),
        // Keys in alphabetical order, so the value prints alike with or without
        // serde_json's `preserve_order`.
        unsafe_fix: None,
        verify: Some(serde_json::json!({
            "bytes": 33_554_432,
            "summary": "copies 32.0 MiB at B=16, T=1024, C=512 (float32)",
        })),
        copy: None,
        subject: None,
    }
}

fn odd_finding() -> Diagnostic {
    let file = Arc::new(SourceFile::new(ODD_PATH, ODD_SOURCE.to_owned()));
    Diagnostic {
        code: "SL999",
        severity: Severity::Warning,
        message: ODD_MESSAGE.into(),
        span: span_of(ODD_SOURCE, "x.view(-1)"),
        file,
        chain: vec![],
        notes: vec![],
        help: None,
        fix: None,
        unsafe_fix: None,
        verify: None,
        copy: None,
        subject: None,
    }
}

/// Deliberately out of order: reporters must sort by path and position.
fn sample() -> Vec<Diagnostic> {
    let model = Arc::new(SourceFile::new("models/gpt.py", MODEL.to_owned()));
    vec![
        hidden_copy(&model),
        odd_finding(),
        view_incompatible(&model),
    ]
}

/// The directory reports are rendered in.
const CWD: &str = "/project";

fn render(format: OutputFormat, diagnostics: &[Diagnostic], ctx: &ReportContext) -> String {
    render_in(format, diagnostics, ctx, &PathDisplay::at(CWD))
}

fn render_in(
    format: OutputFormat,
    diagnostics: &[Diagnostic],
    ctx: &ReportContext,
    paths: &PathDisplay,
) -> String {
    let mut out = Vec::new();
    write_report_with_paths(&mut out, format, diagnostics, ctx, paths).unwrap();
    String::from_utf8(out).unwrap()
}

mod snapshots {
    use super::*;

    #[test]
    fn full() {
        insta::assert_snapshot!(
            "full",
            render(OutputFormat::Full, &sample(), &ctx(false, false))
        );
    }

    #[test]
    fn full_with_fixes() {
        insta::assert_snapshot!(
            "full_with_fixes",
            render(OutputFormat::Full, &sample(), &ctx(false, true))
        );
    }

    #[test]
    fn concise() {
        insta::assert_snapshot!(
            "concise",
            render(OutputFormat::Concise, &sample(), &ctx(false, true))
        );
    }

    #[test]
    fn grouped() {
        insta::assert_snapshot!(
            "grouped",
            render(OutputFormat::Grouped, &sample(), &ctx(false, true))
        );
    }

    #[test]
    fn json() {
        insta::assert_snapshot!(
            "json",
            render(OutputFormat::Json, &sample(), &ctx(false, false))
        );
    }

    #[test]
    fn json_lines() {
        insta::assert_snapshot!(
            "json_lines",
            render(OutputFormat::JsonLines, &sample(), &ctx(false, false))
        );
    }

    #[test]
    fn github() {
        insta::assert_snapshot!(
            "github",
            render(OutputFormat::Github, &sample(), &ctx(false, false))
        );
    }

    #[test]
    fn sarif() {
        insta::assert_snapshot!(
            "sarif",
            render(OutputFormat::Sarif, &sample(), &ctx(false, false))
        );
    }

    #[test]
    fn junit() {
        insta::assert_snapshot!(
            "junit",
            render(OutputFormat::Junit, &sample(), &ctx(false, false))
        );
    }

    #[test]
    fn gitlab() {
        insta::assert_snapshot!(
            "gitlab",
            render(OutputFormat::Gitlab, &sample(), &ctx(false, false))
        );
    }

    #[test]
    fn rdjson() {
        insta::assert_snapshot!(
            "rdjson",
            render(OutputFormat::Rdjson, &sample(), &ctx(false, false))
        );
    }

    #[test]
    fn azure() {
        insta::assert_snapshot!(
            "azure",
            render(OutputFormat::Azure, &sample(), &ctx(false, false))
        );
    }

    #[test]
    fn pylint() {
        insta::assert_snapshot!(
            "pylint",
            render(OutputFormat::Pylint, &sample(), &ctx(false, false))
        );
    }

    #[test]
    fn junit_without_findings() {
        insta::assert_snapshot!(
            "junit_empty",
            render(OutputFormat::Junit, &[], &ctx(false, false))
        );
    }

    #[test]
    fn statistics() {
        let mut diagnostics = sample();
        let model = diagnostics[0].file.clone();
        diagnostics.push(hidden_copy(&model));
        let mut sites = SiteCounts::default();
        sites.record(OpFamily::ShapeChange, None);
        sites.record(OpFamily::ShapeChange, Some("input of unknown rank"));
        sites.record(OpFamily::ShapeChange, Some("input of unknown rank"));
        sites.record(OpFamily::ShapeChange, Some("undecided comparison of sizes"));
        sites.record(OpFamily::Matmul, None);
        let mut out = Vec::new();
        write_statistics(&mut out, &diagnostics, &sites, &ctx(false, false)).unwrap();
        insta::assert_snapshot!("statistics", String::from_utf8(out).unwrap());

        let mut out = Vec::new();
        write_statistics_json(&mut out, &diagnostics, &sites, &ctx(false, false)).unwrap();
        insta::assert_snapshot!("statistics_json", String::from_utf8(out).unwrap());
    }
}

mod behaviour {
    use super::*;

    /// An info (what the analysis tells on request) is each format's mildest level, and
    /// never a failure: SARIF `note`, GitHub `::notice`, GitLab `info`, reviewdog `INFO`, a
    /// passing JUnit test case, an Azure log line rather than an issue.
    #[test]
    fn an_info_is_each_formats_mildest_level() {
        let mut info = hidden_copy(&Arc::new(SourceFile::new(
            "models/gpt.py",
            MODEL.to_owned(),
        )));
        info.severity = Severity::Info;
        info.fix = None;
        let one = std::slice::from_ref(&info);
        let sarif: serde_json::Value =
            serde_json::from_str(&render(OutputFormat::Sarif, one, &ctx(false, false))).unwrap();
        assert_eq!(sarif["runs"][0]["results"][0]["level"], "note");
        assert!(render(OutputFormat::Github, one, &ctx(false, false)).starts_with("::notice "));
        let gitlab: serde_json::Value =
            serde_json::from_str(&render(OutputFormat::Gitlab, one, &ctx(false, false))).unwrap();
        assert_eq!(gitlab[0]["severity"], "info");
        let rdjson: serde_json::Value =
            serde_json::from_str(&render(OutputFormat::Rdjson, one, &ctx(false, false))).unwrap();
        assert_eq!(rdjson["diagnostics"][0]["severity"], "INFO");
        let junit = render(OutputFormat::Junit, one, &ctx(false, false));
        assert!(
            junit.contains(r#"failures="0""#) && !junit.contains("<failure"),
            "{junit}"
        );
        assert!(junit.contains("<system-out>"), "{junit}");
        let azure = render(OutputFormat::Azure, one, &ctx(false, false));
        assert!(!azure.contains("##vso[task.logissue"), "{azure}");
        assert!(azure.contains("SL002"), "{azure}");
        let json: serde_json::Value =
            serde_json::from_str(&render(OutputFormat::Json, one, &ctx(false, false))).unwrap();
        assert_eq!(json[0]["severity"], "info");
        assert!(!Severity::Info.fails_run() && Severity::Warning.fails_run());
    }

    #[test]
    fn every_format_accepts_an_empty_list() {
        for format in [
            OutputFormat::Full,
            OutputFormat::Concise,
            OutputFormat::Grouped,
            OutputFormat::JsonLines,
            OutputFormat::Github,
            OutputFormat::Azure,
            OutputFormat::Pylint,
        ] {
            assert_eq!(render(format, &[], &ctx(false, false)), "", "{format:?}");
        }
        assert_eq!(render(OutputFormat::Json, &[], &ctx(false, false)), "[]\n");
        assert_eq!(
            render(OutputFormat::Gitlab, &[], &ctx(false, false)),
            "[]\n"
        );
        let rdjson: serde_json::Value =
            serde_json::from_str(&render(OutputFormat::Rdjson, &[], &ctx(false, false))).unwrap();
        assert_eq!(rdjson["diagnostics"], serde_json::json!([]));
        let sarif: serde_json::Value =
            serde_json::from_str(&render(OutputFormat::Sarif, &[], &ctx(false, false))).unwrap();
        assert_eq!(sarif["runs"][0]["results"], serde_json::json!([]));
        let mut out = Vec::new();
        write_statistics(&mut out, &[], &SiteCounts::default(), &ctx(false, false)).unwrap();
        assert!(out.is_empty());
    }

    #[test]
    fn colour_codes_appear_only_when_asked_for() {
        for format in [
            OutputFormat::Full,
            OutputFormat::Concise,
            OutputFormat::Grouped,
        ] {
            assert!(
                render(format, &sample(), &ctx(true, false)).contains("\u{1b}["),
                "{format:?}"
            );
            assert!(
                !render(format, &sample(), &ctx(false, false)).contains('\u{1b}'),
                "{format:?}"
            );
        }
        assert!(!render(OutputFormat::Json, &sample(), &ctx(true, false)).contains('\u{1b}'));
    }

    #[test]
    fn json_locations_are_one_based_and_count_characters() {
        let json: serde_json::Value =
            serde_json::from_str(&render(OutputFormat::Json, &sample(), &ctx(false, false)))
                .unwrap();
        // `models/gpt.py` sorts before `odd dir/…`; `q.view(B, T, C)` is on row 7, column 9.
        assert_eq!(json[0]["code"], "SL001");
        assert_eq!(
            json[0]["location"],
            serde_json::json!({"row": 7, "column": 9})
        );
        assert_eq!(
            json[0]["end_location"],
            serde_json::json!({"row": 7, "column": 24})
        );
        assert_eq!(json[0]["noqa_row"], 7);
        assert_eq!(json[0]["fix"]["applicability"], "unsafe");
        // Ruff's `name` (the rule's) and `cell` (`null` outside a notebook), on every object.
        assert_eq!(json[0]["name"], "view-incompatible");
        assert_eq!(json[1]["name"], "hidden-copy");
        for finding in json.as_array().unwrap() {
            let object = finding.as_object().unwrap();
            assert!(object["cell"].is_null(), "{finding}");
            assert!(object.contains_key("name"), "{finding}");
        }
        // The multi-line `reshape` ends on row 10 after `)`.
        assert_eq!(
            json[1]["end_location"],
            serde_json::json!({"row": 10, "column": 6})
        );
        // `é` is two bytes but one column.
        assert_eq!(
            json[2]["location"],
            serde_json::json!({"row": 1, "column": 5})
        );
        assert_eq!(json[2]["message"], ODD_MESSAGE);
        // Absolute, as Ruff's JSON.
        assert_eq!(json[2]["filename"], format!("{CWD}/{ODD_PATH}"));
    }

    #[test]
    fn json_lines_holds_one_json_object_per_line() {
        let text = render(OutputFormat::JsonLines, &sample(), &ctx(false, false));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        let array: serde_json::Value =
            serde_json::from_str(&render(OutputFormat::Json, &sample(), &ctx(false, false)))
                .unwrap();
        for (line, expected) in lines.iter().zip(array.as_array().unwrap()) {
            assert_eq!(
                &serde_json::from_str::<serde_json::Value>(line).unwrap(),
                expected
            );
        }
    }

    #[test]
    fn github_escapes_properties_and_data_and_drops_columns_of_multi_line_spans() {
        let text = render(OutputFormat::Github, &sample(), &ctx(false, false));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines.len(),
            3,
            "a message's line breaks must not break the command: {text}"
        );
        assert!(lines[0].starts_with(
            "::error file=models/gpt.py,line=7,col=9,endLine=7,endColumn=24,title=SL001::"
        ));
        assert!(
            lines[1].starts_with("::warning file=models/gpt.py,line=8,endLine=10,title=SL002::"),
            "{}",
            lines[1]
        );
        assert_eq!(
            lines[2],
            "::warning file=odd dir/a%2Cb%3Ac%25d/modèle.py,line=1,col=5,endLine=1,endColumn=15,title=SL999::\
             50%25 off: got (B, T), want 3·C, <&> \"q\" 'r'%0Asecond line%0D"
        );
    }

    #[test]
    fn github_paths_are_relative_to_the_current_directory() {
        // `write_report` reads the current directory (Cargo runs integration tests in the
        // package root) and `GITHUB_WORKSPACE`, which is that root where CI sets it.
        let cwd = std::env::current_dir().unwrap();
        let file = Arc::new(SourceFile::new(
            cwd.join("models").join("abs.py"),
            MODEL.to_owned(),
        ));
        let mut out = Vec::new();
        write_report(
            &mut out,
            OutputFormat::Github,
            &[view_incompatible(&file)],
            &ctx(false, false),
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("::error file=models/abs.py,line=7,"),
            "{text}"
        );
    }

    /// `stridelint .` names files `./src/…`: no format may show that prefix. Each shows
    /// the path relative to the current directory, relative to the CI service's
    /// repository root, or absolute, as Ruff's formats do.
    #[test]
    fn every_format_normalises_paths() {
        let model = Arc::new(SourceFile::new(
            "./models/../models/gpt.py",
            MODEL.to_owned(),
        ));
        let diagnostics = vec![view_incompatible(&model)];
        let paths = PathDisplay::at("/checkout/backend")
            .with_github_workspace("/checkout")
            .with_gitlab_project_dir("/checkout");
        let render = |format| render_in(format, &diagnostics, &ctx(false, false), &paths);
        let expected: &[(OutputFormat, &str)] = &[
            (OutputFormat::Full, "--> models/gpt.py:7:9"),
            (OutputFormat::Concise, "models/gpt.py:7:9: SL001"),
            (OutputFormat::Grouped, "models/gpt.py:\n"),
            (OutputFormat::Pylint, "models/gpt.py:7: [SL001]"),
            (
                OutputFormat::Github,
                "::error file=backend/models/gpt.py,line=7,",
            ),
            (OutputFormat::Gitlab, "\"path\": \"backend/models/gpt.py\""),
            (
                OutputFormat::Json,
                "\"filename\": \"/checkout/backend/models/gpt.py\"",
            ),
            (
                OutputFormat::JsonLines,
                "\"filename\":\"/checkout/backend/models/gpt.py\"",
            ),
            (
                OutputFormat::Junit,
                "<testsuite name=\"/checkout/backend/models/gpt.py\"",
            ),
            (
                OutputFormat::Azure,
                "sourcepath=/checkout/backend/models/gpt.py;",
            ),
            (
                OutputFormat::Rdjson,
                "\"path\": \"/checkout/backend/models/gpt.py\"",
            ),
            (OutputFormat::Sarif, "\"uri\": \"models/gpt.py\""),
            (OutputFormat::Html, "<h2>models/gpt.py</h2>"),
        ];
        use clap::ValueEnum;
        assert_eq!(expected.len(), OutputFormat::value_variants().len());
        for (format, needle) in expected {
            let text = render(*format);
            assert!(text.contains(needle), "{format:?}: {needle}\n{text}");
            assert!(!text.contains("./"), "{format:?}\n{text}");
            assert!(!text.contains(".."), "{format:?}\n{text}");
        }
        assert!(render(OutputFormat::Sarif).contains("\"uri\": \"file:///checkout/backend/\""));
    }

    #[test]
    fn junit_is_well_formed_with_odd_characters() {
        let text = render(OutputFormat::Junit, &sample(), &ctx(false, false));
        assert!(text.contains(
            "<testsuite name=\"/project/odd dir/a,b:c%d/modèle.py\" tests=\"1\" disabled=\"0\" errors=\"0\" failures=\"1\""
        ));
        assert!(text.contains(
            "message=\"50% off: got (B, T), want 3·C, &lt;&amp;&gt; &quot;q&quot; &apos;r&apos;&#10;second line&#13;\""
        ));
        // Nothing but the escapes above may carry `&`, `<`, `>` inside values.
        for line in text.lines() {
            let inner = line.trim().trim_start_matches('<');
            assert!(!inner.contains("<&>"), "{line}");
        }
    }

    #[test]
    fn concise_marks_only_safe_fixes_and_only_when_asked() {
        let with = render(OutputFormat::Concise, &sample(), &ctx(false, true));
        assert!(
            with.contains("models/gpt.py:8:11: SL002 [*] `.reshape"),
            "{with}"
        );
        assert!(with.contains("models/gpt.py:7:9: SL001 `.view"), "{with}");
        let without = render(OutputFormat::Concise, &sample(), &ctx(false, false));
        assert!(!without.contains("[*]"), "{without}");
    }

    #[test]
    fn full_names_the_rule_and_shows_the_chain_notes_and_verify_summary() {
        let text = render(OutputFormat::Full, &sample(), &ctx(false, false));
        assert!(
            text.contains("error: SL001 [view-incompatible] `.view(B, T, C)`"),
            "{text}"
        );
        assert!(text.contains("warning: SL999 50% off"), "{text}");
        assert!(
            text.contains("after `.transpose(1, 2)`: (B, n_head, T, C // n_head) strides"),
            "{text}"
        );
        assert!(text.contains("= note: assumes `x` is contiguous"), "{text}");
        assert!(
            text.contains("= verify: copies 32.0 MiB at B=16, T=1024, C=512 (float32)"),
            "{text}"
        );
        assert!(
            !text.contains("Replace `.view` with `.reshape`"),
            "fixes are hidden without show_fixes"
        );
        // The fix names code the help does not (`.view`): its own line, after the help.
        let with_fixes = render(OutputFormat::Full, &sample(), &ctx(false, true));
        assert!(
            with_fixes.contains(
                "= help: call `.contiguous()` first, or use `.reshape(B, T, C)`, which copies\n  \
                 = fix: Replace `.view` with `.reshape`"
            ),
            "{with_fixes}"
        );
    }

    #[test]
    fn output_format_names_are_ruffs() {
        use clap::ValueEnum;
        let names: Vec<String> = OutputFormat::value_variants()
            .iter()
            .map(|format| format.to_possible_value().unwrap().get_name().to_owned())
            .collect();
        assert_eq!(
            names,
            [
                "full",
                "concise",
                "json",
                "json-lines",
                "github",
                "sarif",
                "junit",
                "grouped",
                "gitlab",
                "rdjson",
                "azure",
                "pylint",
                "html"
            ]
        );
        let from_config: OutputFormat = serde_json::from_str("\"json-lines\"").unwrap();
        assert_eq!(from_config, OutputFormat::JsonLines);
    }
}

mod sarif_schema {
    use super::*;

    /// The `language` pattern of the 2.1.0 schema as first published: the stray `]` is a
    /// typo (SARIF erratum, oasis-tcs/sarif-spec#488) that makes it an invalid ECMA-262
    /// regex, so `jsonschema` refuses to compile the schema.
    const PUBLISHED_LANGUAGE_PATTERN: &str = "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$";
    /// The pattern as corrected by the published errata.
    const ERRATUM_LANGUAGE_PATTERN: &str = "^[a-zA-Z]{2}(-[a-zA-Z]{2})?$";

    /// The official schema from `../shared/data`, or the copy kept in `tests/data` when
    /// the repository is checked out alone, with the `language` erratum applied.
    fn schema() -> serde_json::Value {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let shared = root.join("../shared/data/sarif-schema-2.1.0.json");
        let path = if shared.exists() {
            shared
        } else {
            root.join("tests/data/sarif-schema-2.1.0.json")
        };
        let mut schema = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        apply_language_erratum(&mut schema);
        schema
    }

    fn apply_language_erratum(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, child) in map.iter_mut() {
                    if key == "pattern" && child == PUBLISHED_LANGUAGE_PATTERN {
                        *child = ERRATUM_LANGUAGE_PATTERN.into();
                    } else {
                        apply_language_erratum(child);
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(apply_language_erratum),
            _ => {}
        }
    }

    fn assert_valid(sarif: &str) {
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(&schema())
            .unwrap();
        let instance: serde_json::Value = serde_json::from_str(sarif).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&instance)
            .map(|error| format!("{} at {}", error, error.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "SARIF does not match the schema:\n{}",
            errors.join("\n")
        );
    }

    #[test]
    fn report_with_chains_fixes_and_odd_paths_is_valid() {
        assert_valid(&render(OutputFormat::Sarif, &sample(), &ctx(false, false)));
    }

    #[test]
    fn empty_report_is_valid() {
        assert_valid(&render(OutputFormat::Sarif, &[], &ctx(false, false)));
    }

    #[test]
    fn the_validator_rejects_what_the_schema_forbids() {
        // Guards the test above against a validator that accepts anything.
        let validator = jsonschema::options().build(&schema()).unwrap();
        let mut sarif: serde_json::Value =
            serde_json::from_str(&render(OutputFormat::Sarif, &sample(), &ctx(false, false)))
                .unwrap();
        sarif["runs"][0]["results"][0]["level"] = "fatal".into();
        assert!(!validator.is_valid(&sarif));
    }

    #[test]
    fn results_point_at_their_rule_and_file() {
        let sarif: serde_json::Value =
            serde_json::from_str(&render(OutputFormat::Sarif, &sample(), &ctx(false, false)))
                .unwrap();
        let run = &sarif["runs"][0];
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        assert_eq!(rules.len(), 2, "only rules with findings are described");
        for result in run["results"].as_array().unwrap() {
            match result.get("ruleIndex") {
                Some(index) => assert_eq!(
                    rules[index.as_u64().unwrap() as usize]["id"],
                    result["ruleId"]
                ),
                None => assert_eq!(
                    result["ruleId"], "SL999",
                    "only the unregistered code lacks an index"
                ),
            }
        }
        let odd = &run["results"][2]["locations"][0]["physicalLocation"];
        assert_eq!(
            odd["artifactLocation"]["uri"],
            "odd%20dir/a,b%3Ac%25d/mod%C3%A8le.py"
        );
        assert_eq!(
            odd["region"],
            serde_json::json!({"startLine": 1, "startColumn": 5, "endLine": 1, "endColumn": 15})
        );
    }
}

/// The GitLab and reviewdog reports against schemas written from their published
/// specifications (see each schema's `description`).
mod ci_schemas {
    use super::*;

    fn validator(file: &str) -> jsonschema::Validator {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(file);
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .unwrap()
    }

    fn errors(validator: &jsonschema::Validator, instance: &serde_json::Value) -> Vec<String> {
        validator
            .iter_errors(instance)
            .map(|error| format!("{} at {}", error, error.instance_path()))
            .collect()
    }

    fn report(format: OutputFormat, diagnostics: &[Diagnostic]) -> serde_json::Value {
        serde_json::from_str(&render(format, diagnostics, &ctx(false, false))).unwrap()
    }

    /// The sample plus a second, identical finding in one file (fingerprints must differ).
    fn findings() -> Vec<Diagnostic> {
        let mut diagnostics = sample();
        let model = diagnostics[0].file.clone();
        diagnostics.push(hidden_copy(&model));
        diagnostics
    }

    #[test]
    fn gitlab_report_is_valid_with_unique_fingerprints() {
        let validator = validator("gitlab-codequality.schema.json");
        for diagnostics in [findings(), vec![]] {
            let report = report(OutputFormat::Gitlab, &diagnostics);
            let errors = errors(&validator, &report);
            assert!(errors.is_empty(), "{}", errors.join("\n"));
            let fingerprints: std::collections::HashSet<&str> = report
                .as_array()
                .unwrap()
                .iter()
                .map(|issue| issue["fingerprint"].as_str().unwrap())
                .collect();
            assert_eq!(fingerprints.len(), diagnostics.len());
        }
    }

    #[test]
    fn gitlab_fingerprints_do_not_depend_on_the_line() {
        let moved = format!("\n\n{MODEL}");
        let first = report(
            OutputFormat::Gitlab,
            &[view_incompatible(&Arc::new(SourceFile::new(
                "models/gpt.py",
                MODEL.to_owned(),
            )))],
        );
        let mut diagnostic =
            view_incompatible(&Arc::new(SourceFile::new("models/gpt.py", moved.clone())));
        diagnostic.span = span_of(&moved, "q.view(B, T, C)");
        let second = report(OutputFormat::Gitlab, &[diagnostic]);
        assert_eq!(first[0]["fingerprint"], second[0]["fingerprint"]);
        assert_ne!(first[0]["location"], second[0]["location"]);
    }

    #[test]
    fn gitlab_validator_rejects_what_gitlab_rejects() {
        let validator = validator("gitlab-codequality.schema.json");
        let valid = report(OutputFormat::Gitlab, &sample());
        let mut dotted = valid.clone();
        dotted[0]["location"]["path"] = "./models/gpt.py".into();
        let mut absolute = valid.clone();
        absolute[0]["location"]["path"] = "/project/models/gpt.py".into();
        let mut severity = valid.clone();
        severity[0]["severity"] = "error".into();
        let mut two_lines = valid.clone();
        two_lines[0]["description"] = "a\nb".into();
        let mut no_fingerprint = valid.clone();
        no_fingerprint[0]
            .as_object_mut()
            .unwrap()
            .remove("fingerprint");
        for (what, instance) in [
            ("./ path", dotted),
            ("absolute path", absolute),
            ("severity", severity),
            ("multi-line description", two_lines),
            ("missing fingerprint", no_fingerprint),
        ] {
            assert!(!validator.is_valid(&instance), "{what} accepted");
        }
    }

    #[test]
    fn rdjson_report_is_valid() {
        let validator = validator("reviewdog-rdjson.schema.json");
        for diagnostics in [findings(), vec![]] {
            let report = report(OutputFormat::Rdjson, &diagnostics);
            let errors = errors(&validator, &report);
            assert!(errors.is_empty(), "{}", errors.join("\n"));
        }
        let mut wrong = report(OutputFormat::Rdjson, &sample());
        wrong["diagnostics"][0]["severity"] = "FATAL".into();
        assert!(!validator.is_valid(&wrong));
        let mut unknown = report(OutputFormat::Rdjson, &sample());
        unknown["diagnostics"][0]["location"]["line"] = 3.into();
        assert!(!validator.is_valid(&unknown));
    }

    #[test]
    fn rdjson_columns_are_utf8_bytes_and_fixes_are_suggestions() {
        let report = report(OutputFormat::Rdjson, &sample());
        let diagnostics = report["diagnostics"].as_array().unwrap();
        // `é = x.view(-1)`: `x` is the 5th character but the 6th byte.
        let odd = &diagnostics[2];
        assert_eq!(
            odd["location"]["range"],
            serde_json::json!({"start": {"line": 1, "column": 6}, "end": {"line": 1, "column": 16}})
        );
        assert_eq!(odd["location"]["path"], format!("{CWD}/{ODD_PATH}"));
        let view = &diagnostics[0];
        assert_eq!(view["code"]["value"], "SL001");
        assert_eq!(view["severity"], "ERROR");
        assert_eq!(
            view["suggestions"],
            serde_json::json!([{
                "range": {"start": {"line": 7, "column": 11}, "end": {"line": 7, "column": 15}},
                "text": "reshape"
            }])
        );
    }
}

mod line_formats {
    use super::*;

    #[test]
    fn azure_escapes_properties_and_data() {
        let text = render(OutputFormat::Azure, &sample(), &ctx(false, false));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(
            lines[0].starts_with(
                "##vso[task.logissue type=error;sourcepath=/project/models/gpt.py;linenumber=7;columnnumber=9;code=SL001;]"
            ),
            "{}",
            lines[0]
        );
        assert!(lines[1].starts_with("##vso[task.logissue type=warning;"));
        assert_eq!(
            lines[2],
            "##vso[task.logissue type=warning;sourcepath=/project/odd dir/a,b:c%AZP25d/modèle.py;linenumber=1;columnnumber=5;code=SL999;]\
             50%AZP25 off: got (B, T), want 3·C, <&> \"q\" 'r'%0Asecond line%0D"
        );
    }

    #[test]
    fn pylint_is_one_line_per_finding() {
        let text = render(OutputFormat::Pylint, &sample(), &ctx(false, false));
        assert_eq!(
            text.lines().collect::<Vec<_>>(),
            [
                "models/gpt.py:7: [SL001] `.view(B, T, C)` cannot be computed for strides (T·C, C // n_head, C, 1)",
                "models/gpt.py:8: [SL002] `.reshape(B, T, C)` copies: the layout after `.transpose(1, 2)` has no such view",
                "odd dir/a,b:c%d/modèle.py:1: [SL999] 50% off: got (B, T), want 3·C, <&> \"q\" 'r' second line",
            ]
        );
    }
}
