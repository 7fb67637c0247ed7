//! `layout::einsum` against torch: every row of `tests/data/oracle/einsum.jsonl`
//! (`scripts/oracle/gen_einsum.py`) that the rule decides must have torch's shape and
//! strides (and a one-operand result shares its input's storage), and the rule must keep
//! deciding at least as many rows as it does today.

use stridelint::layout::einsum::einsum_layout;
use stridelint::layout::{Assumptions, Decider, Layout};

/// Rows the rule decides today (of 1,500); raise it when the rule learns more.
const MIN_DECIDED: usize = 567;

fn ints(v: &serde_json::Value) -> Vec<i64> {
    v.as_array()
        .expect("a list")
        .iter()
        .map(|x| x.as_i64().expect("an integer"))
        .collect()
}

#[test]
fn decided_einsum_layouts_match_torch() {
    let text = std::fs::read_to_string("tests/data/oracle/einsum.jsonl").expect("the table");
    let assumptions = Assumptions::default();
    let d = Decider::new(&assumptions);
    let (mut rows, mut decided) = (0, 0);
    for line in text.lines() {
        let row: serde_json::Value = serde_json::from_str(line).expect("a JSON row");
        rows += 1;
        let operands: Vec<Layout<i64>> = row["operands"]
            .as_array()
            .expect("operands")
            .iter()
            .map(|o| Layout::new(ints(&o["shape"]), ints(&o["strides"]), 0))
            .collect();
        let refs: Vec<&Layout<i64>> = operands.iter().collect();
        let equation = row["equation"].as_str().expect("an equation");
        let Some(layout) = einsum_layout(equation, &refs, &d) else {
            continue;
        };
        decided += 1;
        assert_eq!(layout.shape, ints(&row["shape"]), "{equation}");
        assert_eq!(layout.strides, ints(&row["strides"]), "{equation}: {row}");
        if operands.len() == 1 {
            assert_eq!(row["shares_storage"], true, "{equation}: a view");
        }
    }
    assert_eq!(rows, 1500);
    assert!(
        decided >= MIN_DECIDED,
        "decided {decided} of {rows} rows, floor {MIN_DECIDED}"
    );
    eprintln!("einsum: decided {decided} of {rows} rows, all as torch");
}
