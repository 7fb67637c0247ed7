//! `html` (and `stridelint report`): one self-contained page about what the copies cost —
//! no network: CSS and the chart (SVG) are inline, the one script only marks the page as
//! rendered (`data-rendered` on `<html>`: the number of chart bars), which the browser
//! test reads back.
//!
//! The page: a summary (files, findings per rule, the bytes the sized copies move per
//! forward pass); a bar chart of the costliest copy sites; then per file and per function
//! every finding, copy sites first by bytes per forward pass, each with the four ways to
//! write it side by side — `view`, `.contiguous()` + `view`, `reshape`, and the zero-copy
//! alternative the help gives — and the measured time when `--verify` ran.

use std::collections::BTreeMap;
use std::io::{self, Write};

use super::junit::escape_xml as escape;
use super::paths::PathDisplay;
use super::ReportContext;
use crate::diagnostic::{Claim, Diagnostic};
use crate::verify::replay::{format_bytes, format_ms};

/// Bars in the chart: the costliest functions.
const CHART_SITES: usize = 12;

/// What one copy costs: bytes per forward pass (known sizes), and the measured time per
/// forward pass (`--verify`); for hand-written attention (SL008), the bytes of the score
/// matrices it stores per forward pass, which are not a copy.
struct Cost {
    bytes: Option<u64>,
    ms: Option<f64>,
    scores: Option<u64>,
}

fn cost(d: &Diagnostic, claim: Claim) -> Cost {
    let measured = d.verify.as_ref().and_then(|v| v.get("per_forward"));
    let stated = d.copy.as_ref().and_then(|c| c.bytes_per_forward_pass);
    let (copied, scores) = if claim.states_stored_memory() {
        (None, stated)
    } else {
        (stated, None)
    };
    Cost {
        bytes: copied.or_else(|| {
            measured
                .and_then(|m| m["bytes_copied"].as_u64())
                .filter(|&b| b > 0)
        }),
        ms: measured.and_then(|m| m["ms"].as_f64()),
        scores,
    }
}

/// The function a finding is in: the closest `def`/`fn` above it that is indented less
/// than its line (`<module>` at the top level).
fn enclosing_function(d: &Diagnostic) -> String {
    let text = &d.file.text;
    let start = (d.span.start as usize).min(text.len());
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let indent_of = |line: &str| line.len() - line.trim_start().len();
    let mut indent = indent_of(&text[line_start..]);
    let mut names: Vec<String> = Vec::new();
    for line in text[..line_start].lines().rev() {
        let code = line.trim_start();
        if code.is_empty() || code.starts_with('#') || indent_of(line) >= indent {
            continue;
        }
        let word = |prefixes: &[&str]| {
            prefixes
                .iter()
                .find_map(|p| code.strip_prefix(p))
                .map(|rest| {
                    rest.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect::<String>()
                })
        };
        if let Some(name) = word(&["def ", "async def ", "fn ", "pub fn ", "pub(crate) fn "]) {
            names.push(name);
        } else if let Some(name) = word(&["class ", "impl ", "impl<"]) {
            names.push(name);
        }
        indent = indent_of(line);
        if indent == 0 {
            break;
        }
    }
    if names.is_empty() {
        return "<module>".into();
    }
    names.reverse();
    names.join(".")
}

/// The four ways to write the site, as the seed table compares them.
fn comparison(d: &Diagnostic, c: &Cost, claim: Claim) -> [String; 4] {
    let copy = match (c.bytes, c.ms) {
        (Some(b), Some(ms)) => format!("copies {} ({} per pass)", format_bytes(b), format_ms(ms)),
        (Some(b), None) => format!("copies {} per pass", format_bytes(b)),
        (None, Some(ms)) => format!("copies ({} per pass)", format_ms(ms)),
        (None, None) => "copies every element".into(),
    };
    let alternative = d
        .help
        .clone()
        .unwrap_or_else(|| "see the rule's page".into());
    match claim {
        Claim::NoView => [
            "fails at run time".into(),
            copy.clone(),
            format!("{copy}, silently"),
            alternative,
        ],
        Claim::HiddenCopy => [
            "fails at run time (no view exists)".into(),
            format!("{copy}, explicitly"),
            format!("{copy}, silently (this line)"),
            alternative,
        ],
        _ => [String::new(), String::new(), String::new(), alternative],
    }
}

/// The codes of the rules whose findings make this claim, as a list in words.
fn rules_claiming(ctx: &ReportContext, claim: Claim) -> String {
    let codes: Vec<&str> = ctx
        .rules
        .iter()
        .filter(|rule| rule.claim == claim)
        .map(|rule| rule.code)
        .collect();
    codes.join(", ")
}

pub(super) fn write(
    w: &mut dyn Write,
    diagnostics: &[&Diagnostic],
    ctx: &ReportContext,
    paths: &PathDisplay,
) -> io::Result<()> {
    let files: std::collections::BTreeSet<String> = diagnostics
        .iter()
        .map(|d| paths.display(d.file.path()))
        .collect();
    let mut per_rule: BTreeMap<&str, usize> = BTreeMap::new();
    for d in diagnostics {
        *per_rule.entry(d.code).or_default() += 1;
    }
    let costs: Vec<Cost> = diagnostics
        .iter()
        .map(|d| cost(d, ctx.claim(d.code)))
        .collect();
    let total: u64 = costs.iter().filter_map(|c| c.bytes).sum();
    let sized = costs.iter().filter(|c| c.bytes.is_some()).count();
    let measured_ms: f64 = costs.iter().filter_map(|c| c.ms).sum();
    let scores: Vec<u64> = costs.iter().filter_map(|c| c.scores).collect();

    writeln!(
        w,
        "<!DOCTYPE html>\n<html lang=\"en\" data-rendered=\"no\">\n<head>"
    )?;
    writeln!(
        w,
        "<meta charset=\"utf-8\">\n<title>stridelint: what the copies cost</title>"
    )?;
    writeln!(w, "<style>{STYLE}</style>\n</head>\n<body>")?;
    writeln!(w, "<h1>What the copies cost</h1>")?;
    write!(
        w,
        "<p class=\"summary\">stridelint {}: {} finding{} in {} file{}",
        escape(ctx.version),
        diagnostics.len(),
        plural(diagnostics.len()),
        files.len(),
        plural(files.len())
    )?;
    for (code, n) in &per_rule {
        let name = ctx.rule(code).map_or("", |r| r.name);
        write!(w, " · <b>{n}</b> {code} <span class=\"name\">{name}</span>")?;
    }
    writeln!(w, "</p>")?;
    if sized > 0 {
        write!(
            w,
            "<p class=\"total\">{sized} {} of known size {} <b>{}</b> per forward pass",
            if sized == 1 { "copy" } else { "copies" },
            if sized == 1 { "moves" } else { "move" },
            format_bytes(total)
        )?;
        if measured_ms > 0.0 {
            write!(w, ", measured <b>{}</b>", format_ms(measured_ms))?;
        }
        writeln!(w, ".</p>")?;
    } else {
        writeln!(
            w,
            "<p class=\"total\">No copy has every size known: give them with <code>--dim NAME=SIZE</code> (and <code>--dtype</code>, <code>--layers</code>) to rank the copies by bytes.</p>"
        )?;
    }
    if !scores.is_empty() {
        let n = scores.len();
        writeln!(
            w,
            "<p class=\"total\">{n} hand-written attention{} of known size {} <b>{}</b> of score matrices per forward pass that <code>F.scaled_dot_product_attention</code> never stores ({}).</p>",
            plural(n),
            if n == 1 { "stores" } else { "store" },
            format_bytes(scores.iter().sum()),
            rules_claiming(ctx, Claim::StoredMemory)
        )?;
    }

    let shown = ShownPaths::of(diagnostics, paths);
    let places = ranked_places(diagnostics, &costs, &shown);
    write_chart(w, &places)?;
    let mut current_file = None;
    for place in &places {
        if current_file != Some(&place.file) {
            let file_bytes: u64 = places
                .iter()
                .filter(|p| p.file == place.file)
                .map(|p| p.bytes)
                .sum();
            writeln!(
                w,
                "<h2>{}{}</h2>",
                escape(&place.file),
                per_pass(file_bytes)
            )?;
            current_file = Some(&place.file);
        }
        writeln!(
            w,
            "<h3><code>{}</code>{}</h3>",
            escape(&place.function),
            per_pass(place.bytes)
        )?;
        write_sites(w, &place.sites, diagnostics, &costs, ctx)?;
    }
    writeln!(
        w,
        "<script>const page = document.documentElement; page.dataset.rendered = String(document.querySelectorAll('#chart rect.bar').length); page.dataset.overflow = String(Math.max(0, page.scrollWidth - page.clientWidth));</script>"
    )?;
    writeln!(w, "</body>\n</html>")
}

/// One function's findings, with the bytes its sized copies move per forward pass.
struct Place {
    file: String,
    function: String,
    sites: Vec<usize>,
    bytes: u64,
    scores: u64,
}

/// Files as the page names them: relative to the current directory, or else to the
/// directory every reported file lies below (the tree linted), never cut off absolute.
struct ShownPaths {
    names: Vec<String>,
}

impl ShownPaths {
    fn of(diagnostics: &[&Diagnostic], paths: &PathDisplay) -> Self {
        let names: Vec<String> = diagnostics
            .iter()
            .map(|d| paths.display(d.file.path()))
            .collect();
        let absolute: Vec<&str> = names
            .iter()
            .filter(|n| n.starts_with('/'))
            .map(|n| n.as_str())
            .collect();
        let root = common_directory(&absolute);
        let names = names
            .iter()
            .map(|n| match n.strip_prefix(root.as_str()) {
                Some(rest) if !root.is_empty() => rest.to_string(),
                _ => n.clone(),
            })
            .collect();
        ShownPaths { names }
    }
}

/// The longest directory (ending in `/`) that every path starts with.
fn common_directory(paths: &[&str]) -> String {
    let Some(first) = paths.first() else {
        return String::new();
    };
    let mut len = first.rfind('/').map_or(0, |i| i + 1);
    for p in &paths[1..] {
        while !p.starts_with(&first[..len]) {
            len = first[..len.saturating_sub(1)]
                .rfind('/')
                .map_or(0, |i| i + 1);
        }
    }
    first[..len].to_string()
}

/// The findings per file and function, costliest first: files by the bytes their copies
/// move per forward pass, their functions alike, then by the score matrices they store;
/// the sites of a function likewise.
fn ranked_places(diagnostics: &[&Diagnostic], costs: &[Cost], shown: &ShownPaths) -> Vec<Place> {
    let mut by_place: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (i, d) in diagnostics.iter().enumerate() {
        by_place
            .entry((shown.names[i].clone(), enclosing_function(d)))
            .or_default()
            .push(i);
    }
    let mut places: Vec<Place> = by_place
        .into_iter()
        .map(|((file, function), mut sites)| {
            sites.sort_by(|&a, &b| {
                (costs[b].bytes, costs[b].scores)
                    .cmp(&(costs[a].bytes, costs[a].scores))
                    .then(a.cmp(&b))
            });
            let bytes = sites.iter().filter_map(|&i| costs[i].bytes).sum();
            let scores = sites.iter().filter_map(|&i| costs[i].scores).sum();
            Place {
                file,
                function,
                sites,
                bytes,
                scores,
            }
        })
        .collect();
    let mut per_file: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for p in &places {
        let total = per_file.entry(p.file.clone()).or_default();
        *total = (total.0 + p.bytes, total.1 + p.scores);
    }
    places.sort_by(|a, b| {
        let key = |p: &Place| (per_file[&p.file], p.bytes, p.scores);
        key(b)
            .cmp(&key(a))
            .then_with(|| (&a.file, &a.function).cmp(&(&b.file, &b.function)))
    });
    places
}

/// ` · 2.0 GiB per forward pass` after a heading, when its copies have a known size.
fn per_pass(bytes: u64) -> String {
    match bytes {
        0 => String::new(),
        b => format!(
            " <span class=\"cost\">{} per forward pass</span>",
            format_bytes(b)
        ),
    }
}

/// The table of one function's findings, each with the four ways to write it.
fn write_sites(
    w: &mut dyn Write,
    sites: &[usize],
    diagnostics: &[&Diagnostic],
    costs: &[Cost],
    ctx: &ReportContext,
) -> io::Result<()> {
    writeln!(
        w,
        "<table><tr><th>line</th><th>finding</th><th>per forward pass</th><th><code>view</code></th><th><code>.contiguous()</code> + <code>view</code></th><th><code>reshape</code></th><th>zero-copy alternative</th></tr>"
    )?;
    for &i in sites {
        let d = diagnostics[i];
        let at = d.file.location(d.span.start as usize);
        let [view, contiguous, reshape, alternative] = comparison(d, &costs[i], ctx.claim(d.code));
        let price = match (costs[i].bytes, costs[i].ms) {
            (Some(b), Some(ms)) => format!("{} · {}", format_bytes(b), format_ms(ms)),
            (Some(b), None) => format_bytes(b),
            (None, Some(ms)) => format_ms(ms),
            (None, None) => match costs[i].scores {
                Some(b) => format!("stores {} of scores", format_bytes(b)),
                None => "size unknown".into(),
            },
        };
        writeln!(
            w,
            "<tr class=\"{}\"><td>{}:{}</td><td><b>{}</b> {}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            d.severity.as_str(),
            at.row,
            at.column,
            d.code,
            inline_code(&d.message),
            escape(&price),
            inline_code(&view),
            inline_code(&contiguous),
            inline_code(&reshape),
            inline_code(&alternative)
        )?;
    }
    writeln!(w, "</table>")?;
    Ok(())
}

/// `text` escaped, with each `` `code` `` span set as code.
fn inline_code(text: &str) -> String {
    let parts: Vec<&str> = text.split('`').collect();
    if parts.len() % 2 == 0 {
        return escape(text);
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, part)| match i % 2 {
            1 => format!("<code>{}</code>", escape(part)),
            _ => escape(part),
        })
        .collect()
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A horizontal bar per function name, its length the bytes its copies move per forward
/// pass in every file that defines it (`repeat_kv`, copied into each model, is one bar),
/// labelled with the file, or the number of files; the costliest [`CHART_SITES`].
fn write_chart(w: &mut dyn Write, places: &[Place]) -> io::Result<()> {
    const ROW: usize = 26;
    const LABEL: usize = 330;
    const BAR: usize = 460;
    const LABEL_CHARS: usize = 48;
    let mut by_name: BTreeMap<&str, (u64, Vec<&str>)> = BTreeMap::new();
    for p in places.iter().filter(|p| p.bytes > 0) {
        let entry = by_name.entry(&p.function).or_default();
        entry.0 += p.bytes;
        entry.1.push(&p.file);
    }
    let mut ranked: Vec<(String, u64)> = by_name
        .into_iter()
        .map(|(function, (bytes, files))| match files.as_slice() {
            [file] => (format!("{file} · {function}"), bytes),
            _ => (format!("{function} · {} files", files.len()), bytes),
        })
        .collect();
    ranked.sort_by_key(|(_, bytes)| std::cmp::Reverse(*bytes));
    ranked.truncate(CHART_SITES);
    let height = ROW * ranked.len().max(1) + 10;
    let width = LABEL + BAR + 110;
    writeln!(
        w,
        "<svg id=\"chart\" role=\"img\" aria-label=\"bytes per forward pass of the costliest functions\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\">"
    )?;
    let largest = ranked.first().map_or(1, |(_, b)| (*b).max(1));
    for (row, (label, bytes)) in ranked.iter().enumerate() {
        let count = label.chars().count();
        let shown = match count > LABEL_CHARS {
            true => format!(
                "…{}",
                label
                    .chars()
                    .skip(count + 1 - LABEL_CHARS)
                    .collect::<String>()
            ),
            false => label.clone(),
        };
        let y = 5 + row * ROW;
        let length = ((*bytes as f64 / largest as f64) * BAR as f64).max(2.0) as usize;
        writeln!(
            w,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><rect class=\"bar\" x=\"{LABEL}\" y=\"{y}\" width=\"{length}\" height=\"{}\"><title>{}</title></rect><text x=\"{}\" y=\"{}\">{}</text>",
            LABEL - 8,
            y + 16,
            escape(&shown),
            ROW - 8,
            escape(label),
            LABEL + length + 6,
            y + 16,
            format_bytes(*bytes)
        )?;
    }
    if ranked.is_empty() {
        writeln!(w, "<text x=\"10\" y=\"20\">no copy of known size</text>")?;
    }
    writeln!(w, "</svg>")
}

const STYLE: &str = "
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #1d1d1f; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: .2em; }
h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; }
h3 { font-size: 1em; margin: 1.2em 0 .4em; }
.summary .name { color: #666; }
.total b { color: #b3261e; }
svg text { font: 12px system-ui, sans-serif; fill: #333; }
rect.bar { fill: #d9534f; }
table { border-collapse: collapse; width: 100%; font-size: 13px; table-layout: fixed; }
th, td { border: 1px solid #e2e2e2; padding: 4px 6px; vertical-align: top; text-align: left; overflow-wrap: break-word; }
th:first-child { width: 5em; }
th:nth-child(2) { width: 26%; }
th:nth-child(3) { width: 7em; }
h2, h3, code { overflow-wrap: anywhere; }
svg { max-width: 100%; height: auto; }
.cost { color: #b3261e; font-weight: normal; font-size: .9em; }
th { background: #f6f6f6; }
td.num { text-align: right; }
tr.error td:first-child { border-left: 3px solid #b3261e; }
tr.warning td:first-child { border-left: 3px solid #e0a100; }
code { font: 12px ui-monospace, monospace; }
";
