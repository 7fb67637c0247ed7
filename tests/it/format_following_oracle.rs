//! The ops of kind `format_following` (convolution, pooling, interpolation, padding) give a
//! contiguous output for a contiguous input, and for a contiguous input expanded along some
//! dims (the rows with an `input` field): every function and module class of that kind in
//! rules/torch.toml has rows in `tests/data/oracle/format_following.jsonl`
//! (`scripts/oracle/gen_format_following.py`, real torch), and every row says so.

use std::collections::BTreeMap;

use stridelint::ops::{OpKind, OpTable};

#[test]
fn every_format_following_op_is_contiguous_for_a_contiguous_input_in_torch() {
    let text =
        std::fs::read_to_string("tests/data/oracle/format_following.jsonl").expect("the table");
    let mut rows: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for line in text.lines() {
        let row: serde_json::Value = serde_json::from_str(line).expect("a JSON row");
        let name = row["name"].as_str().expect("a name").to_string();
        let contiguous = row["output_contiguous"].as_bool().expect("a bool");
        let entry = rows.entry(name).or_default();
        entry.0 += 1;
        entry.1 += usize::from(contiguous);
    }
    let table = OpTable::torch();
    let mut names: Vec<String> = table
        .all()
        .iter()
        .filter(|op| op.kind == OpKind::FormatFollowing)
        .flat_map(|op| op.functions.iter().chain(&op.methods).cloned())
        .collect();
    names.extend(
        table
            .modules()
            .iter()
            .filter(|m| m.call.kind == OpKind::FormatFollowing)
            .flat_map(|m| m.classes.iter().filter(|c| c.contains('.')).cloned()),
    );
    assert!(names.len() >= 40, "only {} names of the kind", names.len());
    for name in &names {
        let Some(&(calls, contiguous)) = rows.get(name) else {
            panic!("{name} is `format_following` in rules/torch.toml but has no torch rows");
        };
        assert_eq!(
            contiguous,
            calls,
            "{name}: {} of {calls} torch calls gave a non-contiguous output",
            calls - contiguous
        );
    }
}
