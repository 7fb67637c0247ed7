//! `layout::geometry::meshgrid` against torch: every row of `tests/data/oracle/meshgrid.jsonl`
//! (`scripts/oracle/gen_meshgrid.py`: 600 random calls, 0-d/1-d inputs, strided, offset or
//! expanded, indexing "ij", "xy" or torch's default) must give torch's grids exactly (shape,
//! strides, storage offset), and each grid is a view of its input.

use stridelint::layout::geometry::meshgrid;
use stridelint::layout::{Assumptions, Decider, Layout};

fn ints(v: &serde_json::Value) -> Vec<i64> {
    v.as_array()
        .expect("a list")
        .iter()
        .map(|x| x.as_i64().expect("an integer"))
        .collect()
}

fn layout(v: &serde_json::Value) -> Layout<i64> {
    Layout::new(
        ints(&v["shape"]),
        ints(&v["strides"]),
        v["offset"].as_i64().expect("an offset"),
    )
}

#[test]
fn meshgrid_matches_torch() {
    let text = std::fs::read_to_string("tests/data/oracle/meshgrid.jsonl").expect("the table");
    let assumptions = Assumptions::default();
    let d = Decider::new(&assumptions);
    let mut rows = 0;
    for line in text.lines() {
        let row: serde_json::Value = serde_json::from_str(line).expect("a JSON row");
        rows += 1;
        let inputs: Vec<Layout<i64>> = row["inputs"]
            .as_array()
            .expect("inputs")
            .iter()
            .map(layout)
            .collect();
        let refs: Vec<&Layout<i64>> = inputs.iter().collect();
        let xy = row["indexing"].as_str() == Some("xy");
        let grids = meshgrid(&refs, xy, &d).unwrap_or_else(|e| panic!("{row}: {e:?}"));
        let want = row["grids"].as_array().expect("grids");
        assert_eq!(grids.len(), want.len(), "{row}");
        for (got, want) in grids.iter().zip(want) {
            assert_eq!(got, &layout(want), "{row}");
            assert_eq!(want["shares_storage"], true, "a grid is a view: {row}");
        }
    }
    assert_eq!(rows, 600);
}

#[test]
fn meshgrid_refuses_what_torch_refuses() {
    let assumptions = Assumptions::default();
    let d = Decider::new(&assumptions);
    let matrix = Layout::new(vec![2, 3], vec![3, 1], 0);
    assert!(meshgrid(&[&matrix], false, &d).is_err(), "a 2-d input");
    assert!(meshgrid::<i64>(&[], false, &d).is_err(), "no input");
}
