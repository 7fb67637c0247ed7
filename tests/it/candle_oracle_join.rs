//! candle oracle for the ops that combine tensors: `Tensor::cat`, `Tensor::stack`,
//! `broadcast_as` and `matmul`, as the analysis applies them — the entries of
//! `rules/candle.toml` through `stridelint::ops::apply` — against real candle-core CPU
//! tensors.
//!
//! The inputs are real tensors made non-contiguous in the ways model code does (transposed,
//! narrowed on an inner or an outer dim, broadcast); their actual layouts are handed to the
//! op table, and the predicted result must match candle's: shape, start offset, the stride
//! of every dim of size > 1, and `is_contiguous()`. This pins candle's surprising cases:
//! `cat` of a transposed tensor along a dim other than 0 returns a *non-contiguous* result
//! (spec §10.2), `matmul` does not broadcast, `broadcast_as` gives new dims stride 0.

use candle_core::{DType, Device, Tensor, D};
use stridelint::layout::{candle_is_contiguous, Decider, Layout, Tri};
use stridelint::ops::{apply, bind, ArgValue, OpResult, OpSpec, OpTable};

type Arg = ArgValue<i64>;

/// A contiguous `shape` tensor of distinct values.
fn tensor(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    Tensor::arange(0f32, n as f32, &Device::Cpu)
        .and_then(|t| t.reshape(shape))
        .expect("arange reshapes")
}

fn layout_of(t: &Tensor) -> Layout<i64> {
    let as_i64 = |v: &[usize]| v.iter().map(|&x| x as i64).collect::<Vec<_>>();
    Layout::new(
        as_i64(t.dims()),
        as_i64(t.stride()),
        t.layout().start_offset() as i64,
    )
}

/// The inputs: one contiguous tensor and four non-contiguous views of the same shape
/// (2, 3, 4), each made the way model code makes them.
fn inputs() -> Vec<(&'static str, Tensor)> {
    let run = || -> candle_core::Result<Vec<(&'static str, Tensor)>> {
        Ok(vec![
            ("contiguous", tensor(&[2, 3, 4])),
            ("transposed(1,2)", tensor(&[2, 4, 3]).transpose(1, 2)?),
            ("t()", tensor(&[2, 4, 3]).t()?),
            ("narrowed last dim", tensor(&[2, 3, 8]).narrow(2, 2, 4)?),
            ("narrowed middle dim", tensor(&[2, 5, 4]).narrow(1, 1, 3)?),
            ("permuted", tensor(&[4, 2, 3]).permute((1, 2, 0))?),
        ])
    };
    run().expect("the views are valid")
}

/// Shape, offset and the strides of dims of size > 1 (the stride of a size-1 dim is never
/// read) agree, and so does contiguity.
fn assert_same(predicted: &Layout<i64>, real: &Tensor, what: &str) {
    let actual = layout_of(real);
    assert_eq!(predicted.shape, actual.shape, "{what}: shape");
    assert_eq!(predicted.offset, actual.offset, "{what}: offset");
    for (i, size) in actual.shape.iter().enumerate() {
        if *size > 1 {
            assert_eq!(
                predicted.strides[i], actual.strides[i],
                "{what}: stride {i} (predicted {predicted:?}, real {actual:?})"
            );
        }
    }
    let contiguous = candle_is_contiguous(predicted, &Decider::concrete());
    assert_eq!(
        contiguous,
        Tri::from_bool(real.is_contiguous()),
        "{what}: contiguity"
    );
}

fn run(spec: &OpSpec, receiver: Option<Arg>, args: Vec<Arg>) -> OpResult<i64> {
    let bound = bind(spec, receiver, args, vec![]).expect("the arguments bind");
    apply(spec, &bound, &Decider::concrete()).result
}

fn predicted(result: OpResult<i64>, what: &str) -> Layout<i64> {
    match result {
        OpResult::Tensor(layout) => layout,
        other => panic!("{what}: predicted {other:?}"),
    }
}

#[test]
fn cat_and_stack_match_candle_including_non_contiguous_results() {
    let table = OpTable::candle();
    let cat = table.function("Tensor.cat").expect("cat");
    let stack = table.function("Tensor.stack").expect("stack");
    let inputs = inputs();
    let mut non_contiguous_results = 0;
    for (a_name, a) in &inputs {
        for (b_name, b) in &inputs {
            let list = Arg::TensorList(vec![Some(layout_of(a)), Some(layout_of(b))]);
            for dim in 0..3 {
                let what = format!("cat([{a_name}, {b_name}], {dim})");
                let real = Tensor::cat(&[a, b], dim).expect("cat runs");
                let layout = predicted(
                    run(cat, None, vec![list.clone(), Arg::Int(dim as i64)]),
                    &what,
                );
                assert_same(&layout, &real, &what);
                non_contiguous_results += usize::from(!real.is_contiguous());
            }
            for dim in 0..4 {
                let what = format!("stack([{a_name}, {b_name}], {dim})");
                let real = Tensor::stack(&[a, b], dim).expect("stack runs");
                let layout = predicted(
                    run(stack, None, vec![list.clone(), Arg::Int(dim as i64)]),
                    &what,
                );
                assert_same(&layout, &real, &what);
            }
        }
        // A single input is returned as it is.
        let real = Tensor::cat(&[a], 1).expect("cat runs");
        let one = Arg::TensorList(vec![Some(layout_of(a))]);
        let layout = predicted(run(cat, None, vec![one, Arg::Int(1)]), a_name);
        assert_same(&layout, &real, &format!("cat([{a_name}], 1)"));
    }
    assert!(
        non_contiguous_results > 0,
        "the inputs must exercise candle's non-contiguous cat"
    );
    // `D::Minus1` is dim -1.
    let (a, b) = (&inputs[1].1, &inputs[0].1);
    let real = Tensor::cat(&[a, b], D::Minus1).expect("cat runs");
    let list = Arg::TensorList(vec![Some(layout_of(a)), Some(layout_of(b))]);
    let layout = predicted(
        run(cat, None, vec![list, Arg::Int(-1)]),
        "cat(.., D::Minus1)",
    );
    assert_same(&layout, &real, "cat(.., D::Minus1)");
}

#[test]
fn broadcast_as_matches_candle() {
    let spec = OpTable::candle()
        .method("broadcast_as")
        .expect("broadcast_as");
    let cases: Vec<(Tensor, Vec<usize>)> = vec![
        (tensor(&[3, 1]), vec![2, 3, 4]),
        (tensor(&[1, 4]), vec![3, 4]),
        (tensor(&[4]), vec![1, 2, 4]),
        (
            tensor(&[2, 4, 3]).transpose(1, 2).unwrap(),
            vec![5, 2, 3, 4],
        ),
        (tensor(&[2, 3, 8]).narrow(2, 0, 1).unwrap(), vec![2, 3, 6]),
    ];
    for (input, target) in cases {
        let what = format!("{:?}.broadcast_as({target:?})", input.dims());
        let real = input
            .broadcast_as(target.as_slice())
            .expect("broadcast_as runs");
        let shape = Arg::IntList(target.iter().map(|&s| Arg::Int(s as i64)).collect());
        let layout = predicted(
            run(spec, Some(Arg::tensor(layout_of(&input))), vec![shape]),
            &what,
        );
        // candle gives *every* broadcast dim stride 0, size 1 or not: compare all strides.
        assert_eq!(layout, layout_of(&real), "{what}");
    }
    // Sizes that do not broadcast fail in both.
    let input = tensor(&[3, 2]);
    assert!(input.broadcast_as((3, 4)).is_err());
    let shape = Arg::IntList(vec![Arg::Int(3), Arg::Int(4)]);
    assert!(matches!(
        run(spec, Some(Arg::tensor(layout_of(&input))), vec![shape]),
        OpResult::Error(_)
    ));
}

#[test]
fn matmul_shapes_match_candle_without_broadcasting() {
    let spec = OpTable::candle().method("matmul").expect("matmul");
    let cases: Vec<(Vec<usize>, Vec<usize>)> = vec![
        (vec![3, 4], vec![4, 5]),
        (vec![2, 3, 4], vec![2, 4, 5]),
        (vec![2, 2, 3, 4], vec![4, 4, 5]),
        // Equal numbers of matrices under different batch shapes are accepted by candle.
        (vec![2, 3, 3, 4], vec![3, 2, 4, 5]),
        // Broadcasting is not: a batch of 1 against a batch of 2 fails.
        (vec![2, 3, 4], vec![1, 4, 5]),
        (vec![3, 4], vec![5, 6]),
    ];
    for (lhs_shape, rhs_shape) in cases {
        let what = format!("{lhs_shape:?} x {rhs_shape:?}");
        let (lhs, rhs) = (
            Tensor::zeros(lhs_shape.as_slice(), DType::F32, &Device::Cpu).unwrap(),
            Tensor::zeros(rhs_shape.as_slice(), DType::F32, &Device::Cpu).unwrap(),
        );
        let result = run(
            spec,
            Some(Arg::tensor(layout_of(&lhs))),
            vec![Arg::tensor(layout_of(&rhs))],
        );
        match lhs.matmul(&rhs) {
            Ok(real) => assert_same(&predicted(result, &what), &real, &what),
            Err(_) => assert!(matches!(result, OpResult::Error(_)), "{what}: {result:?}"),
        }
    }
    // A transposed operand: the output is still a fresh row-major tensor.
    let lhs = tensor(&[2, 4, 3]).transpose(1, 2).unwrap();
    let rhs = tensor(&[2, 4, 5]);
    let real = lhs.matmul(&rhs).expect("CPU matmul takes a transposed lhs");
    let result = run(
        spec,
        Some(Arg::tensor(layout_of(&lhs))),
        vec![Arg::tensor(layout_of(&rhs))],
    );
    assert_same(
        &predicted(result, "transposed lhs"),
        &real,
        "transposed lhs",
    );
}
