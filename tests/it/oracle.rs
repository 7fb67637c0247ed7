//! stridelint against real PyTorch.
//!
//! The tables in `tests/data/oracle/` were produced by running torch (see
//! `scripts/oracle/README.md`): random layouts × `view`/`reshape`/`flatten`, the spec's
//! conformance rows, and random chains of up to six ops. These tests replay every row
//! through the layout algebra (`stridelint::layout`) and every chain step through the ops
//! API (`OpTable::torch()` + `bind` + `apply`), and require **zero mismatches**: torch is the
//! reference, so any disagreement is a bug on our side (or a torch change to look at).
//!
//! A chain step is replayed on torch's recorded input for that step, so one wrong step does
//! not cascade into the rest of its chain. Answers the ops API cannot decide (`Unknown`, an
//! unknown-layout tensor) are counted, never held against it; a decided answer must match.

use crate::oracle_support;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use oracle_support::{
    accepted_error_kinds, concrete_number, layout_of, load, run_step, start_layout,
};
use serde_json::Value;
use stridelint::layout::{
    flatten, reshape, view, Decider, Layout, MaybeCopy, Tri, ViewOutcome, E_VIEW,
};
use stridelint::ops::{ArgValue, OpKind, OpResult, OpSpec, Transfer};

/// An "unknown" answer is never held against the ops API, so a change that made it answer
/// "unknown" everywhere would pass the match checks. The number of *decided* answers (match
/// or mismatch) per op kind must therefore stay at or above the floor recorded in
/// `tests/data/oracle/floors/<table>.json`; `ORACLE_BLESS_FLOORS=1` records the current
/// counts (do that only when a table changes, and say why in the commit).
fn check_decided_floors(key: &str, per_kind: &BTreeMap<String, Counts>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/oracle/floors")
        .join(format!("{key}.json"));
    let decided: BTreeMap<String, usize> = per_kind
        .iter()
        .map(|(kind, c)| (kind.clone(), c.matched + c.mismatched))
        .collect();
    if std::env::var_os("ORACLE_BLESS_FLOORS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&decided).unwrap() + "\n",
        )
        .unwrap();
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; record the floors with ORACLE_BLESS_FLOORS=1",
            path.display()
        )
    });
    let floors: BTreeMap<String, usize> = serde_json::from_str(&text).expect("floors are JSON");
    let below: Vec<String> = floors
        .iter()
        .filter_map(|(kind, &floor)| {
            let got = decided.get(kind).copied().unwrap_or(0);
            (got < floor).then(|| format!("{kind}: {got} decided answers, floor {floor}"))
        })
        .collect();
    assert!(
        below.is_empty(),
        "fewer decided answers than before ({}):\n{}",
        path.display(),
        below.join("\n")
    );
}

/// How one check came out.
enum Verdict {
    Match,
    /// The ops API could not decide (allowed; counted).
    Unknown,
    Mismatch(String),
}

#[derive(Default)]
struct Counts {
    checked: usize,
    matched: usize,
    unknown: usize,
    mismatched: usize,
}

/// Per-kind tallies and the details of every mismatch.
#[derive(Default)]
struct Tally {
    per_kind: BTreeMap<String, Counts>,
    mismatches: Vec<String>,
}

impl Tally {
    fn record(&mut self, kind: &str, where_: impl FnOnce() -> String, verdict: Verdict) {
        let counts = self.per_kind.entry(kind.to_string()).or_default();
        counts.checked += 1;
        match verdict {
            Verdict::Match => counts.matched += 1,
            Verdict::Unknown => counts.unknown += 1,
            Verdict::Mismatch(detail) => {
                counts.mismatched += 1;
                self.mismatches.push(format!("{}: {detail}", where_()));
            }
        }
    }

    /// Print the tally and fail with the first 20 mismatches, if any, or when an op kind
    /// has fewer decided answers than its floor (see [`check_decided_floors`]).
    fn finish(self, key: &str, title: &str) {
        let mut report = format!(
            "\n{title}\n{:<52} {:>8} {:>8} {:>8} {:>8}\n",
            "kind", "checked", "match", "unknown", "MISMATCH"
        );
        let mut total = Counts::default();
        for (kind, c) in &self.per_kind {
            let _ = writeln!(
                report,
                "{kind:<52} {:>8} {:>8} {:>8} {:>8}",
                c.checked, c.matched, c.unknown, c.mismatched
            );
            total.checked += c.checked;
            total.matched += c.matched;
            total.unknown += c.unknown;
            total.mismatched += c.mismatched;
        }
        let _ = writeln!(
            report,
            "{:<52} {:>8} {:>8} {:>8} {:>8}",
            "TOTAL", total.checked, total.matched, total.unknown, total.mismatched
        );
        println!("{report}");
        check_decided_floors(key, &self.per_kind);
        if let Some(path) = std::env::var_os("ORACLE_MISMATCHES_TO") {
            // Every mismatch, one per line, for investigating more than the first 20.
            std::fs::write(&path, self.mismatches.join("\n")).expect("write the mismatch list");
        }
        if !self.mismatches.is_empty() {
            let shown: Vec<&str> = self
                .mismatches
                .iter()
                .take(20)
                .map(String::as_str)
                .collect();
            panic!(
                "{} mismatches against torch; the first {}:\n{}",
                self.mismatches.len(),
                shown.len(),
                shown.join("\n")
            );
        }
    }
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|x| x.as_i64().expect("an int"))
        .collect()
}

/// torch's successful result as a layout.
fn torch_layout(result: &Value) -> Layout<i64> {
    layout_of(result, &concrete_number)
}

fn describe(layout: &Layout<i64>) -> String {
    format!("{:?}/{:?}+{}", layout.shape, layout.strides, layout.offset)
}

/// A layout answer against torch's.
fn same_layout(got: &Layout<i64>, want: &Value) -> Verdict {
    let want = torch_layout(want);
    if *got == want {
        Verdict::Match
    } else {
        Verdict::Mismatch(format!(
            "torch {}, stridelint {}",
            describe(&want),
            describe(got)
        ))
    }
}

/// An error answer against torch's message.
fn same_message(got: &str, want: &Value) -> Verdict {
    let message = want["message"].as_str().unwrap_or_default();
    if got == message {
        Verdict::Match
    } else {
        Verdict::Mismatch(format!("torch raised {message:?}, stridelint says {got:?}"))
    }
}

// ---- view / reshape / flatten rows ------------------------------------------------------------

fn check_view(input: &Layout<i64>, target: &[i64], want: &Value) -> Verdict {
    let outcome = view(input, target, &Decider::concrete());
    match (want["ok"].as_bool() == Some(true), &outcome) {
        (true, ViewOutcome::View(got)) => same_layout(got, want),
        (false, ViewOutcome::NotViewable { .. }) if want["error"] == "view_incompatible" => {
            same_message(E_VIEW, want)
        }
        (false, ViewOutcome::InvalidShape(_)) if want["error"] != "view_incompatible" => {
            same_message(&outcome.error_message().unwrap_or_default(), want)
        }
        (_, ViewOutcome::Unknown) => Verdict::Mismatch("undecided on concrete sizes".into()),
        _ => Verdict::Mismatch(format!("torch {}, stridelint {outcome:?}", short(want))),
    }
}

/// `reshape`/`flatten`: a view or a copy, with torch's copy verdict.
fn check_maybe_copy(
    got: Result<MaybeCopy<i64>, stridelint::layout::LayoutError>,
    want: &Value,
) -> Verdict {
    match (want["ok"].as_bool() == Some(true), got) {
        (true, Ok(result)) => {
            let copies = want["copies"].as_bool().expect("copies");
            if result.copies != Tri::from_bool(copies) {
                return Verdict::Mismatch(format!(
                    "torch copies={copies}, stridelint copies={:?}",
                    result.copies
                ));
            }
            match result.layout {
                Some(layout) => same_layout(&layout, want),
                None => Verdict::Mismatch("no layout on concrete sizes".into()),
            }
        }
        (false, Err(error)) => same_message(&error.message, want),
        (_, got) => Verdict::Mismatch(format!("torch {}, stridelint {got:?}", short(want))),
    }
}

fn short(result: &Value) -> String {
    if result["ok"].as_bool() == Some(true) {
        format!("ok {}", describe(&torch_layout(result)))
    } else {
        format!("error {:?}", result["message"].as_str().unwrap_or_default())
    }
}

fn check_contiguity(input: &Layout<i64>, row: &Value) -> Verdict {
    let want = row["contiguous"].as_bool().expect("contiguous");
    let got = input.is_contiguous(&Decider::concrete());
    if got == Tri::from_bool(want) {
        Verdict::Match
    } else {
        Verdict::Mismatch(format!("is_contiguous: torch {want}, stridelint {got:?}"))
    }
}

fn check_layout_rows(rows: &[Value], tally: &mut Tally) {
    let dec = Decider::concrete();
    for row in rows {
        let input = torch_layout(row);
        let name = format!("{} #{}", row["kind"].as_str().unwrap_or("?"), row["id"]);
        let at = |what: &'static str| {
            let (name, input) = (&name, &input);
            move || {
                format!(
                    "{name} {what} of {} (row {})",
                    describe(input),
                    compact(row)
                )
            }
        };
        tally.record(
            "is_contiguous",
            at("is_contiguous"),
            check_contiguity(&input, row),
        );
        if row["kind"] == "flatten" {
            let (start, end) = (
                row["start_dim"].as_i64().unwrap(),
                row["end_dim"].as_i64().unwrap(),
            );
            tally.record(
                "flatten",
                at("flatten"),
                check_maybe_copy(flatten(&input, start, end, &dec), &row["flatten"]),
            );
            continue;
        }
        let target = ints(&row["target"]);
        tally.record(
            "view",
            at("view"),
            check_view(&input, &target, &row["view"]),
        );
        tally.record(
            "reshape",
            at("reshape"),
            check_maybe_copy(reshape(&input, &target, &dec), &row["reshape"]),
        );
    }
}

/// A row without its bulky result fields, for mismatch reports.
fn compact(row: &Value) -> String {
    let mut row = row.clone();
    if let Some(obj) = row.as_object_mut() {
        for key in ["view", "reshape", "flatten", "style", "tag", "src", "note"] {
            obj.remove(key);
        }
    }
    row.to_string()
}

#[test]
fn view_reshape_flatten_match_torch() {
    let rows = load("view_reshape.jsonl");
    assert!(
        rows.len() >= 20_000,
        "the view/reshape table has only {} rows",
        rows.len()
    );
    let mut tally = Tally::default();
    check_layout_rows(&rows, &mut tally);
    tally.finish(
        "view_reshape",
        &format!("view_reshape.jsonl: {} rows", rows.len()),
    );
}

#[test]
fn spec_conformance_rows_match_torch() {
    let rows = load("conformance.jsonl");
    assert_eq!(rows.len(), 80, "the spec's conformance table has 80 rows");
    let mut tally = Tally::default();
    check_layout_rows(&rows, &mut tally);
    tally.finish(
        "conformance",
        "conformance.jsonl: the spec's 80 rows re-run through torch",
    );
}

// ---- chains -------------------------------------------------------------------------------------------

/// Kinds whose result is either a view of the input or a copy of it, so torch's storage
/// check is their copy verdict. (Computations — element-wise, matmul, cat, factories — make
/// new data by design; the ops API answers `copies = No` for them and torch has no verdict.)
fn copy_or_view(kind: OpKind) -> bool {
    use OpKind::*;
    matches!(
        kind,
        View | Reshape
            | Flatten
            | Unflatten
            | Ravel
            | Contiguous
            | Clone
            | Convert
            | Alias
            | InPlace
            | Transpose
            | MatrixTranspose
            | ReverseDims
            | BatchTranspose
            | Permute
            | Movedim
            | Squeeze
            | Unsqueeze
            | Expand
            | Narrow
            | Select
            | Split
            | Chunk
            | TensorSplit
            | Unbind
            | Diagonal
            | Unfold
            | AsStrided
            | Index
            | EinopsRearrange
            | EinopsRepeat
    )
}

fn check_copy(spec: &OpSpec, transfer: &Transfer<i64>, want: &Value) -> Option<String> {
    if !copy_or_view(spec.kind) || transfer.copies == Tri::Unknown {
        return None;
    }
    let copied = !want["shares_storage"].as_bool().expect("shares_storage");
    (transfer.copies != Tri::from_bool(copied)).then(|| {
        format!(
            "torch copied={copied}, stridelint copies={:?}",
            transfer.copies
        )
    })
}

fn check_tensor_step(spec: &OpSpec, step: &Value, transfer: &Transfer<i64>) -> Verdict {
    let want = &step["result"];
    let chosen = match &transfer.result {
        OpResult::Tensor(layout) => layout.clone(),
        OpResult::Tensors(layouts) => {
            let outputs = step["outputs"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            if layouts.len() != outputs.len() {
                return Verdict::Mismatch(format!(
                    "torch returned {} tensors, stridelint {}",
                    outputs.len(),
                    layouts.len()
                ));
            }
            for (i, (got, torch)) in layouts.iter().zip(outputs).enumerate() {
                if let Verdict::Mismatch(detail) = same_layout(got, torch) {
                    return Verdict::Mismatch(format!("output {i}: {detail}"));
                }
            }
            let index = step["output_index"].as_u64().expect("output_index") as usize;
            layouts[index].clone()
        }
        OpResult::UnknownTensor | OpResult::Unknown => return Verdict::Unknown,
        OpResult::Error(e) => {
            return Verdict::Mismatch(format!(
                "torch succeeded ({}), stridelint raises {:?}",
                short(want),
                e.message
            ))
        }
        OpResult::Size(v) => {
            return Verdict::Mismatch(format!("torch returned a tensor, stridelint a value {v:?}"))
        }
    };
    if let Some(detail) = check_copy(spec, transfer, want) {
        return Verdict::Mismatch(detail);
    }
    same_layout(&chosen, want)
}

/// A query's value (`size()`, `stride(d)`, `is_contiguous()`, `len(x)`, ...).
fn check_value_step(transfer: &Transfer<i64>, want: &Value) -> Verdict {
    let value = &want["value"];
    let got = match &transfer.result {
        OpResult::Size(v) => v,
        OpResult::Unknown | OpResult::UnknownTensor => return Verdict::Unknown,
        other => return Verdict::Mismatch(format!("torch returned {value}, stridelint {other:?}")),
    };
    let as_json = |v: &ArgValue<i64>| -> Option<Value> {
        match v {
            ArgValue::Int(n) => Some(Value::from(*n)),
            ArgValue::Bool(b) => Some(Value::from(*b)),
            ArgValue::IntList(items) => items
                .iter()
                .map(|x| x.as_i64().map(Value::from))
                .collect::<Option<Vec<_>>>()
                .map(Value::Array),
            _ => None,
        }
    };
    match as_json(got) {
        Some(v) if v == *value => Verdict::Match,
        Some(v) => Verdict::Mismatch(format!("torch value {value}, stridelint {v}")),
        None => Verdict::Unknown,
    }
}

fn check_error_step(transfer: &Transfer<i64>, want: &Value) -> Verdict {
    match &transfer.result {
        OpResult::Error(e) => {
            let recorded = want["error"].as_str().unwrap_or_default();
            if !accepted_error_kinds(recorded).contains(&e.kind) {
                return Verdict::Mismatch(format!(
                    "torch error kind {recorded} ({:?}), stridelint {:?}",
                    want["message"], e.kind
                ));
            }
            same_message(&e.message, want)
        }
        OpResult::Unknown | OpResult::UnknownTensor => Verdict::Unknown,
        other => Verdict::Mismatch(format!(
            "torch raised {:?}, stridelint returns {}",
            want["message"],
            summarize(other)
        )),
    }
}

fn summarize(result: &OpResult<i64>) -> String {
    match result {
        OpResult::Tensor(l) => format!("a tensor {}", describe(l)),
        OpResult::Tensors(ls) => format!("{} tensors", ls.len()),
        other => format!("{other:?}"),
    }
}

fn check_step(step: &Value, input: &Layout<i64>) -> Verdict {
    let (spec, transfer) =
        match run_step(step, input, &concrete_number, false, &Decider::concrete()) {
            Ok(done) => done,
            Err(why) => return Verdict::Mismatch(why),
        };
    let want = &step["result"];
    if want["ok"].as_bool() != Some(true) {
        check_error_step(&transfer, want)
    } else if want.get("value").is_some() {
        check_value_step(&transfer, want)
    } else {
        check_tensor_step(spec, step, &transfer)
    }
}

#[test]
fn chains_match_torch() {
    let chains = load("chains.jsonl");
    assert!(
        chains.len() >= 5_000,
        "the chain table has only {} chains",
        chains.len()
    );
    let mut tally = Tally::default();
    for chain in &chains {
        let mut input: Layout<i64> = start_layout(chain, &concrete_number, false);
        for (k, step) in chain["steps"].as_array().expect("steps").iter().enumerate() {
            let op = step["op"].as_str().unwrap_or("?");
            let at = || {
                format!(
                    "chain #{} step {k} {op}{} on {}",
                    chain["id"],
                    args_text(step),
                    describe(&input)
                )
            };
            tally.record(op, at, check_step(step, &input));
            let result = &step["result"];
            if result["ok"].as_bool() != Some(true) || result.get("shape").is_none() {
                break;
            }
            input = torch_layout(result);
        }
    }
    tally.finish("chains", &format!("chains.jsonl: {} chains", chains.len()));
}

fn args_text(step: &Value) -> String {
    let mut text = format!(
        "({})",
        step.get("args").map(Value::to_string).unwrap_or_default()
    );
    if let Some(kwargs) = step.get("kwargs") {
        let _ = write!(text, " {kwargs}");
    }
    text
}
