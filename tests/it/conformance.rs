//! Conformance of the layout algebra with real torch (and candle's rule): every row of the
//! spec's conformance table (`shared/spec/conformance.json`, produced with torch 2.15 on
//! CPU) must give the same `view` result or error text, the same `reshape` copy verdict
//! and strides, and the same contiguity; every row of the table's candle column the same
//! `reshape` copy verdict.
//!
//! The files are read from `../shared/spec/` when the shared tree is present, otherwise
//! from the copies in `tests/data/`.

use std::path::PathBuf;

use serde::Deserialize;
use stridelint::layout::{candle_reshape, reshape, view, Decider, Layout, Tri, ViewOutcome};

/// One row of `conformance.json`. `view` is `"ok"` or `"error"`; `reshape` is `"error"`
/// when the shape itself is invalid (then `reshape_copies` is absent).
#[derive(Debug, Deserialize)]
struct Row {
    src: String,
    shape: Vec<i64>,
    strides: Vec<i64>,
    target: Vec<i64>,
    contiguous: bool,
    view: String,
    view_shape: Option<Vec<i64>>,
    view_strides: Option<Vec<i64>>,
    msg: Option<String>,
    reshape: Option<String>,
    reshape_copies: Option<bool>,
    reshape_strides: Option<Vec<i64>>,
}

impl Row {
    fn layout(&self) -> Layout<i64> {
        Layout::new(self.shape.clone(), self.strides.clone(), 0)
    }

    fn describe(&self, number: usize) -> String {
        format!(
            "row {number} ({}) {:?}/{:?} → {:?}",
            self.src, self.shape, self.strides, self.target
        )
    }
}

fn spec_file(name: &str, fallback: &str) -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let shared = manifest.join("../shared/spec").join(name);
    if shared.exists() {
        shared
    } else {
        manifest.join("tests/data").join(fallback)
    }
}

fn rows() -> Vec<Row> {
    let path = spec_file("conformance.json", "conformance.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let rows: Vec<Row> = serde_json::from_str(&text).expect("conformance.json parses");
    assert!(!rows.is_empty(), "{} holds no rows", path.display());
    rows
}

fn assert_no_mismatches(what: &str, checked: usize, mismatches: Vec<String>) {
    assert!(checked > 0, "no row exercised {what}");
    assert!(
        mismatches.is_empty(),
        "{} of {checked} rows disagree with torch on {what}:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

#[test]
fn view_matches_torch_on_every_row() {
    let dec = Decider::concrete();
    let rows = rows();
    let mut mismatches = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let outcome = view(&row.layout(), &row.target, &dec);
        let agrees = match (row.view.as_str(), &outcome) {
            ("ok", ViewOutcome::View(result)) => {
                Some(&result.shape) == row.view_shape.as_ref()
                    && Some(&result.strides) == row.view_strides.as_ref()
            }
            ("error", _) => outcome.error_message().is_some() && outcome.error_message() == row.msg,
            _ => false,
        };
        if !agrees {
            mismatches.push(format!(
                "{}: torch {} {:?} {:?}, ours {outcome:?}",
                row.describe(i + 1),
                row.view,
                row.view_strides,
                row.msg
            ));
        }
    }
    assert_no_mismatches("view", rows.len(), mismatches);
}

#[test]
fn reshape_copies_match_torch_on_every_row() {
    let dec = Decider::concrete();
    let rows = rows();
    let mut mismatches = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let result = reshape(&row.layout(), &row.target, &dec);
        let agrees = match (&result, row.reshape.as_deref(), row.reshape_copies) {
            (Err(error), Some("error"), _) => Some(&error.message) == row.msg.as_ref(),
            (Ok(out), None, Some(copies)) => {
                out.copies == Tri::from_bool(copies)
                    && out.layout.as_ref().map(|l| &l.strides) == row.reshape_strides.as_ref()
            }
            _ => false,
        };
        if !agrees {
            mismatches.push(format!(
                "{}: torch copies {:?} strides {:?}, ours {result:?}",
                row.describe(i + 1),
                row.reshape_copies,
                row.reshape_strides
            ));
        }
    }
    assert_no_mismatches("reshape", rows.len(), mismatches);
}

#[test]
fn contiguity_matches_torch_on_every_row() {
    let dec = Decider::concrete();
    let rows = rows();
    let mismatches: Vec<String> = rows
        .iter()
        .enumerate()
        .filter(|(_, row)| row.layout().is_contiguous(&dec) != Tri::from_bool(row.contiguous))
        .map(|(i, row)| {
            format!(
                "{}: torch is_contiguous() = {}",
                row.describe(i + 1),
                row.contiguous
            )
        })
        .collect();
    assert_no_mismatches("is_contiguous", rows.len(), mismatches);
}

/// One row of the markdown table: its shape, strides, target and candle column.
struct CandleRow {
    number: usize,
    shape: Vec<i64>,
    strides: Vec<i64>,
    target: Vec<i64>,
    /// `Some(copies)`, or `None` for "error (shape)".
    copies: Option<bool>,
}

fn parse_list(cell: &str) -> Vec<i64> {
    let inner = cell.trim().trim_start_matches('[').trim_end_matches(']');
    inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().expect("an integer"))
        .collect()
}

fn candle_rows() -> Vec<CandleRow> {
    let path = spec_file("stride-semantics.md", "conformance_table.md");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut rows = Vec::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // `| # | source | shape | strides | target | view | result | reshape | candle | note |`
        let Some(number) = cells.get(1).and_then(|c| c.parse::<usize>().ok()) else {
            continue;
        };
        if cells.len() < 10 || !cells[3].starts_with('[') {
            continue;
        }
        let candle = cells[9].trim_matches('*');
        let copies = match candle {
            "yes" => Some(true),
            "no" => Some(false),
            "error (shape)" => None,
            other => panic!("row {number}: unexpected candle cell {other:?}"),
        };
        rows.push(CandleRow {
            number,
            shape: parse_list(cells[3]),
            strides: parse_list(cells[4]),
            target: parse_list(cells[5]),
            copies,
        });
    }
    rows
}

#[test]
fn candle_reshape_copies_match_the_spec_table() {
    let dec = Decider::concrete();
    let table = candle_rows();
    let json = rows();
    assert_eq!(
        table.len(),
        json.len(),
        "the markdown table and conformance.json list different rows"
    );
    let mut mismatches = Vec::new();
    for row in &table {
        let same_input = &json[row.number - 1];
        assert_eq!(
            (&row.shape, &row.strides, &row.target),
            (&same_input.shape, &same_input.strides, &same_input.target),
            "row {} differs between the table and conformance.json",
            row.number
        );
        let layout = Layout::new(row.shape.clone(), row.strides.clone(), 0);
        let ours = candle_reshape(&layout, &row.target, &dec);
        let agrees = match (row.copies, &ours) {
            (None, Err(_)) => true,
            (Some(copies), Ok(out)) => out.copies == Tri::from_bool(copies),
            _ => false,
        };
        if !agrees {
            mismatches.push(format!(
                "row {}: table says {:?}, ours {ours:?}",
                row.number, row.copies
            ));
        }
    }
    assert_no_mismatches("candle reshape", table.len(), mismatches);
}
