//! The algorithms over symbolic sizes ([`Dim`]), on the layouts real model code builds:
//! multi-head attention's head split, transposes and merges. These check that certain
//! answers come with the assumptions they rest on, and that an undecidable question gives
//! "unknown" rather than a guess.

use super::dim::Dim;
use super::elementwise::elementwise_output;
use super::geometry::{expand, select, slice, transpose};
use super::layout::Layout;
use super::reshape::{contiguous, reshape, view, ViewOutcome};
use super::size::{Assumption, Assumptions, Decider};
use super::tri::Tri;
use super::view::{view_strides, ViewStrides};

fn sym(name: &str) -> Dim {
    Dim::sym(name)
}

fn dims(names: &str) -> Vec<Dim> {
    names.split_whitespace().map(sym).collect()
}

fn product(names: &str) -> Dim {
    dims(names).iter().fold(Dim::lit(1), |acc, d| acc.mul(d))
}

#[test]
fn head_split_of_a_contiguous_tensor_is_a_view_citing_divisibility() {
    let assumptions = Assumptions::default();
    let dec = Decider::new(&assumptions);
    let x = Layout::contiguous(dims("B T C"));
    let target = [sym("B"), sym("T"), sym("H"), Dim::lit(-1)];
    let ViewOutcome::View(q) = view(&x, &target, &dec) else {
        panic!("the head split must be a view")
    };
    let head_dim = sym("C").floordiv(&sym("H"));
    assert_eq!(
        q.shape,
        vec![sym("B"), sym("T"), sym("H"), head_dim.clone()]
    );
    assert_eq!(
        q.strides,
        vec![product("T C"), sym("C"), head_dim, Dim::lit(1)]
    );
    assert!(
        dec.used()
            .iter()
            .any(|a| matches!(a, Assumption::Divides { .. })),
        "{:?}",
        dec.used()
    );
}

#[test]
fn merging_heads_of_a_transposed_attention_output_fails_for_certain() {
    let assumptions = Assumptions::default();
    let dec = Decider::new(&assumptions);
    // y = softmax(q @ kᵀ) @ v is a contiguous (B, H, T, D); y.transpose(1, 2).view(B, T, H·D).
    let y = Layout::contiguous(dims("B H T D"));
    let yt = transpose(&y, 1, 2).unwrap();
    assert_eq!(yt.to_string(), "(B, T, H, D) strides (D·H·T, D, D·T, 1)");
    assert_eq!(yt.is_contiguous(&dec), Tri::No);
    let merged = [sym("B"), sym("T"), product("H D")];
    assert!(matches!(
        view(&yt, &merged, &dec),
        ViewOutcome::NotViewable { .. }
    ));
    assert!(dec.used().contains(&Assumption::MinSize {
        name: "H".into(),
        min: 2
    }));
    assert_eq!(reshape(&yt, &merged, &dec).unwrap().copies, Tri::Yes);
    // The usual fix: .contiguous() copies, then the view works.
    let fixed = contiguous(&yt, &dec);
    assert_eq!(fixed.copies, Tri::Yes);
    assert!(matches!(
        view(fixed.layout.as_ref().unwrap(), &merged, &dec),
        ViewOutcome::View(_)
    ));
}

#[test]
fn bshd_storage_merges_heads_without_a_copy() {
    // Conformance row 79 with names: an output stored (B, S, H, D) and handed out transposed.
    let assumptions = Assumptions::default();
    let dec = Decider::new(&assumptions);
    let stored = Layout::contiguous(dims("B S H D"));
    let handed_out = transpose(&stored, 1, 2).unwrap();
    let back = transpose(&handed_out, 1, 2).unwrap();
    let merged = [sym("B"), sym("S"), product("H D")];
    let ViewOutcome::View(out) = view(&back, &merged, &dec) else {
        panic!("BSHD storage must merge")
    };
    assert_eq!(
        out.strides,
        vec![product("S H D"), product("H D"), Dim::lit(1)]
    );
}

#[test]
fn weaker_assumptions_turn_certainty_into_unknown() {
    // If H or T may be 1, the transposed output might be viewable: never guess.
    let assumptions = Assumptions {
        min_symbolic_size: 1,
        ..Default::default()
    };
    let dec = Decider::new(&assumptions);
    let yt = transpose(&Layout::contiguous(dims("B H T D")), 1, 2).unwrap();
    let merged = [sym("B"), sym("T"), product("H D")];
    assert_eq!(view_strides(&yt, &merged, &dec), ViewStrides::Unknown);
    assert_eq!(reshape(&yt, &merged, &dec).unwrap().copies, Tri::Unknown);
}

#[test]
fn unrelated_sizes_are_undecidable() {
    let assumptions = Assumptions::default();
    let dec = Decider::new(&assumptions);
    // Row stride X against row length N: contiguous only if X == N, which nothing says.
    let x = Layout::new(dims("M N"), vec![sym("X"), Dim::lit(1)], Dim::lit(0));
    assert_eq!(x.is_contiguous(&dec), Tri::Unknown);
    assert_eq!(
        view_strides(&x, &[product("M N")], &dec),
        ViewStrides::Unknown
    );
}

#[test]
fn elementwise_output_keeps_a_symbolic_transpose() {
    let assumptions = Assumptions::default();
    let dec = Decider::new(&assumptions);
    let yt = transpose(&Layout::contiguous(dims("B H T D")), 1, 2).unwrap();
    let out = elementwise_output(&[&yt, &Layout::scalar()], &dec).unwrap();
    assert_eq!(out.strides, yt.strides);
}

#[test]
fn expand_slice_and_select_with_symbolic_sizes() {
    let assumptions = Assumptions::default();
    let dec = Decider::new(&assumptions);
    let mask = Layout::contiguous(vec![Dim::lit(1), sym("T")]);
    let expanded = expand(&mask, &[sym("B"), Dim::lit(-1)], &dec).unwrap();
    assert_eq!(expanded.strides, vec![Dim::lit(0), Dim::lit(1)]);
    // x[:, :-1] on (B, T): (B, T - 1), same strides and offset.
    let x = Layout::contiguous(dims("B T"));
    let shifted = slice(&x, 1, None, Some(&Dim::lit(-1)), 1, &dec).unwrap();
    assert_eq!(shifted.shape, vec![sym("B"), sym("T").sub(&Dim::lit(1))]);
    assert_eq!(shifted.strides, x.strides);
    // x[:, T - 1]: the last column, offset T - 1.
    let last = select(&x, 1, &sym("T").sub(&Dim::lit(1)), &dec).unwrap();
    assert_eq!(last.offset, sym("T").sub(&Dim::lit(1)));
    assert!(select(&x, 1, &sym("T"), &dec).is_err());
}
