//! Property tests: algebraic laws the layout algorithms must obey on random concrete
//! layouts. The strongest is the address law: a view must describe exactly the storage
//! positions of the input, in the same (row-major) order.

use proptest::prelude::*;

use super::geometry::{permute, transpose};
use super::layout::Layout;
use super::reshape::reshape;
use super::size::Decider;
use super::tri::Tri;
use super::view::{view_strides, ViewStrides};

/// Storage positions of every element, in row-major index order.
fn addresses(layout: &Layout<i64>) -> Vec<i64> {
    let mut out = Vec::new();
    let mut index = vec![0i64; layout.rank()];
    if layout.shape.contains(&0) {
        return out;
    }
    loop {
        out.push(
            layout.offset
                + index
                    .iter()
                    .zip(&layout.strides)
                    .map(|(i, s)| i * s)
                    .sum::<i64>(),
        );
        let mut d = layout.rank();
        loop {
            if d == 0 {
                return out;
            }
            d -= 1;
            index[d] += 1;
            if index[d] < layout.shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

/// Whether *some* strides give `new_shape` the same addresses as `layout`: the stride of
/// each dimension is forced by one step along it, then every address must agree.
fn some_strides_exist(layout: &Layout<i64>, new_shape: &[i64]) -> bool {
    let wanted = addresses(layout);
    let mut strides = vec![0i64; new_shape.len()];
    let mut step = 1usize;
    for d in (0..new_shape.len()).rev() {
        if new_shape[d] > 1 {
            strides[d] = wanted[step] - wanted[0];
        }
        step *= new_shape[d].max(1) as usize;
    }
    addresses(&Layout::new(new_shape.to_vec(), strides, layout.offset)) == wanted
}

/// A layout of small sizes with arbitrary non-negative strides.
fn any_layout() -> impl Strategy<Value = Layout<i64>> {
    prop::collection::vec((1i64..4, 0i64..25), 0..5).prop_flat_map(|dims| {
        let shape: Vec<i64> = dims.iter().map(|d| d.0).collect();
        let strides: Vec<i64> = dims.iter().map(|d| d.1).collect();
        (Just(shape), Just(strides), 0i64..5)
            .prop_map(|(shape, strides, offset)| Layout::new(shape, strides, offset))
    })
}

/// A new shape with the same element count: the sizes' prime factors regrouped in order,
/// with size-1 dimensions sprinkled in. Regrouping in order is what makes views possible at all.
fn regrouped(shape: &[i64]) -> impl Strategy<Value = Vec<i64>> {
    let mut factors = Vec::new();
    for &size in shape {
        let mut rest = size;
        for p in [2, 3, 5, 7] {
            while rest % p == 0 {
                factors.push(p);
                rest /= p;
            }
        }
        if rest > 1 {
            factors.push(rest);
        }
    }
    let cuts = factors.len();
    (
        prop::collection::vec(any::<bool>(), cuts),
        prop::collection::vec(0usize..=cuts, 0..3),
        any::<bool>(),
    )
        .prop_map(move |(cut_after, ones, shuffle)| {
            let mut factors = factors.clone();
            if shuffle {
                factors.reverse();
            }
            let mut out = Vec::new();
            let mut group = 1;
            for (i, f) in factors.iter().enumerate() {
                group *= f;
                if cut_after[i] || i + 1 == factors.len() {
                    out.push(group);
                    group = 1;
                }
            }
            for &position in &ones {
                out.insert(position.min(out.len()), 1);
            }
            out
        })
}

fn layout_and_target() -> impl Strategy<Value = (Layout<i64>, Vec<i64>)> {
    any_layout().prop_flat_map(|layout| {
        let target = regrouped(&layout.shape);
        (Just(layout), target)
    })
}

fn any_permutation(rank: usize) -> impl Strategy<Value = Vec<i64>> {
    Just((0..rank as i64).collect::<Vec<_>>()).prop_shuffle()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// computeStride is sound: every view it allows reads exactly the input's elements.
    #[test]
    fn a_view_reads_the_same_addresses((layout, target) in layout_and_target()) {
        if let ViewStrides::Strides(strides) = view_strides(&layout, &target, &Decider::concrete()) {
            let viewed = Layout::new(target.clone(), strides, layout.offset);
            prop_assert_eq!(addresses(&viewed), addresses(&layout));
        }
    }

    /// computeStride is complete on these layouts: when it refuses, no strides exist.
    #[test]
    fn a_refused_view_has_no_strides((layout, target) in layout_and_target()) {
        if view_strides(&layout, &target, &Decider::concrete()) == ViewStrides::NotViewable {
            prop_assert!(!some_strides_exist(&layout, &target), "{} → {:?} has strides", layout, target);
        }
    }

    /// A contiguous tensor can be viewed as any shape of its size, and stays contiguous.
    #[test]
    fn contiguous_tensors_view_to_every_shape((layout, target) in layout_and_target()) {
        let contiguous = Layout::contiguous(layout.shape.clone());
        let dec = Decider::concrete();
        match view_strides(&contiguous, &target, &dec) {
            ViewStrides::Strides(strides) => {
                prop_assert_eq!(Layout::new(target, strides, 0).is_contiguous(&dec), Tri::Yes);
            }
            other => prop_assert!(false, "{} → {:?} gave {:?}", contiguous, target, other),
        }
    }

    /// reshape copies exactly when the input is not contiguous and no view exists; a view
    /// reads the input's addresses, a copy is a fresh contiguous tensor.
    #[test]
    fn reshape_copies_iff_not_viewable((layout, target) in layout_and_target()) {
        let dec = Decider::concrete();
        let result = reshape(&layout, &target, &dec).unwrap();
        let viewable = view_strides(&layout, &target, &dec) != ViewStrides::NotViewable;
        let expected = !layout.is_contiguous(&dec).is_yes() && !viewable;
        prop_assert_eq!(result.copies, Tri::from_bool(expected));
        let out = result.layout.unwrap();
        if expected {
            prop_assert_eq!(out, Layout::contiguous(target));
        } else {
            prop_assert_eq!(addresses(&out), addresses(&layout));
        }
    }

    #[test]
    fn permute_then_inverse_is_identity(
        (layout, perm) in any_layout().prop_flat_map(|l| { let r = l.rank(); (Just(l), any_permutation(r)) })
    ) {
        let mut inverse = vec![0i64; perm.len()];
        for (i, &p) in perm.iter().enumerate() {
            inverse[p as usize] = i as i64;
        }
        let back = permute(&permute(&layout, &perm).unwrap(), &inverse).unwrap();
        prop_assert_eq!(back, layout);
    }

    #[test]
    fn transpose_twice_is_identity(layout in any_layout(), a in -4i64..4, b in -4i64..4) {
        if let Ok(once) = transpose(&layout, a, b) {
            prop_assert_eq!(transpose(&once, a, b).unwrap(), layout);
        }
    }
}
