//! The CPU engine against the naive reference gather on random layouts: every view that
//! `permute`, slicing with steps, `expand` and storage offsets can produce, for every element
//! size.

use proptest::prelude::*;
use stridelint::verify::plan::plan_copy;
use stridelint::verify::reference::{fill_pattern, reference_gather, Element};
use stridelint::verify::{CopyKind, CpuEngine, DType, Engine, MeasureOptions, StridedLayout};

/// A random view: a contiguous base tensor, sliced with random starts and steps, expanded
/// along some size-1 dimensions, then permuted.
fn views() -> impl Strategy<Value = StridedLayout> {
    (1usize..=5)
        .prop_flat_map(|rank| {
            (
                proptest::collection::vec((1i64..=12, 0i64..3, 1i64..=3, any::<bool>()), rank),
                Just((0..rank).collect::<Vec<usize>>()).prop_shuffle(),
            )
        })
        .prop_map(|(dims, order)| {
            let base_shape: Vec<i64> = dims.iter().map(|&(size, ..)| size).collect();
            let base = StridedLayout::contiguous(&base_shape);
            let mut shape = Vec::new();
            let mut strides = Vec::new();
            let mut offset = 0;
            for (axis, &(size, start, step, broadcast)) in dims.iter().enumerate() {
                let start = start.min(size - 1);
                offset += start * base.strides[axis];
                let len = (size - start + step - 1) / step;
                if broadcast && len == 1 {
                    // expand a size-1 dimension: stride 0.
                    shape.push(3);
                    strides.push(0);
                } else {
                    shape.push(len);
                    strides.push(base.strides[axis] * step);
                }
            }
            StridedLayout::new(shape, strides, offset)
                .permute(&order)
                .unwrap()
        })
}

fn copies_like_the_reference<T: Element>(engine: &CpuEngine, layout: &StridedLayout, dtype: DType) {
    let plan = plan_copy(layout, dtype).unwrap();
    let mut src = vec![T::default(); layout.footprint_elems().unwrap() as usize];
    fill_pattern(&mut src);
    let mut dst = vec![T::default(); layout.numel() as usize];
    engine.copy(&plan, &src, &mut dst);
    assert!(
        dst == reference_gather(layout, &src),
        "{layout} as {dtype} ({plan})"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_views_copy_exactly(layout in views()) {
        let engine = CpuEngine::new(Some(2)).unwrap();
        copies_like_the_reference::<u8>(&engine, &layout, DType::U8);
        copies_like_the_reference::<u16>(&engine, &layout, DType::BF16);
        copies_like_the_reference::<u32>(&engine, &layout, DType::F32);
        copies_like_the_reference::<u64>(&engine, &layout, DType::I64);
    }
}

#[test]
fn large_views_cross_many_parallel_chunks() {
    // Big enough that every strategy splits its output over many tasks, with sizes that are
    // not multiples of the tile or chunk sizes.
    let engine = CpuEngine::new(Some(2)).unwrap();
    let cases = [
        StridedLayout::contiguous(&[3, 517, 9, 70])
            .transpose(1, 2)
            .unwrap(),
        StridedLayout::contiguous(&[1000, 333])
            .transpose(0, 1)
            .unwrap(),
        StridedLayout::contiguous(&[5, 130, 3, 67])
            .permute(&[0, 3, 2, 1])
            .unwrap(),
        StridedLayout::new(vec![700, 900], vec![2000, 2], 11),
        StridedLayout::new(vec![400_001], vec![3], 0),
    ];
    for layout in &cases {
        copies_like_the_reference::<u16>(&engine, layout, DType::F16);
        copies_like_the_reference::<u32>(&engine, layout, DType::I32);
    }
}

#[test]
fn measure_copy_checks_every_strategy() {
    let engine = CpuEngine::new(None).unwrap();
    let opts = MeasureOptions::quick();
    let cases = [
        (StridedLayout::contiguous(&[64, 64]), CopyKind::Dense),
        (
            StridedLayout::contiguous(&[2, 64, 4, 32])
                .transpose(1, 2)
                .unwrap(),
            CopyKind::RowGather { vector_bytes: 16 },
        ),
        (
            StridedLayout::contiguous(&[96, 80])
                .transpose(0, 1)
                .unwrap(),
            CopyKind::Transpose {
                unit_dim: 0,
                pack: 2,
            },
        ),
        (
            StridedLayout::new(vec![64, 40], vec![100, 2], 1),
            CopyKind::ScalarGather,
        ),
    ];
    for (layout, kind) in cases {
        assert_eq!(plan_copy(&layout, DType::BF16).unwrap().kind, kind);
        let m = engine.measure_copy(&layout, DType::BF16, &opts).unwrap();
        assert!(m.checked, "{layout}");
        assert_eq!(m.bytes_copied, layout.numel() * 2);
    }
}

#[test]
fn a_different_thread_count_per_measurement_is_honoured() {
    let engine = CpuEngine::new(Some(1)).unwrap();
    let opts = MeasureOptions {
        threads: Some(2),
        ..MeasureOptions::quick()
    };
    let layout = StridedLayout::contiguous(&[128, 96])
        .transpose(0, 1)
        .unwrap();
    assert!(
        engine
            .measure_copy(&layout, DType::F32, &opts)
            .unwrap()
            .checked
    );
}
