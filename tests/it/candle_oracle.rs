//! candle oracle: the layout algebra's candle rules (`stridelint::layout::candle_*`, spec
//! §10) against real candle-core / candle-nn CPU tensors.
//!
//! 600 random op chains (transpose, permute, narrow, t, unsqueeze, squeeze, broadcast_as,
//! an element-wise op, contiguous, reshape with and without the `()` hole) run on real
//! tensors and, side by side, on the predicted [`Layout`]. After every step:
//! - shape, start offset and the strides of every dim of size > 1 agree (the stride of a
//!   size-1 dim is a convention — candle and PyTorch pick different ones for `unsqueeze` —
//!   and nothing reads it);
//! - `tensor.is_contiguous()` agrees with [`candle_is_contiguous`];
//! - for `reshape` and `contiguous`: whether the result still shares the input's storage
//!   agrees with the predicted copy / no-copy (a copy allocates a new storage; a view holds
//!   the same `Arc`, so the storage behind both read guards is the same object);
//! - an invalid reshape (wrong element count, a hole that cannot be filled) fails in both.
//!
//! At the end of every chain the fused candle-nn kernels (`softmax_last_dim`, `rms_norm`,
//! `layer_norm`, `rope`, `rope_i`) must fail exactly when the tensor is not contiguous
//! (spec §10.4), and CPU `matmul` must accept exactly the operands
//! [`candle_matmul_ok`] accepts for the CPU backend (spec §10.3, the batch-dim rule).
//!
//! Finally the Rust fixtures' candle functions are compiled here and run: the lines marked
//! `// expect: SL006` must fail with candle's "has to be contiguous" error, every other
//! function must succeed.

use candle_core::{DType, Device, IndexOp, Tensor, D};
use stridelint::layout::{
    candle_broadcast_as, candle_contiguous_strides, candle_is_contiguous, candle_matmul_ok,
    candle_narrow, candle_reshape, candle_t, permute, squeeze_dim, transpose, unsqueeze,
    CandleBackend, Decider, Layout, Tri,
};

/// A deterministic generator (SplitMix64), so a failure names a reproducible chain.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// One op of a chain, with arguments valid for the tensor it is applied to.
#[derive(Debug, Clone)]
enum Op {
    Transpose(usize, usize),
    T,
    Permute(Vec<usize>),
    Narrow {
        dim: usize,
        start: usize,
        len: usize,
    },
    Unsqueeze(usize),
    Squeeze(usize),
    BroadcastAs(Vec<usize>),
    /// `affine(2, 1)`: an element-wise op.
    Affine,
    Contiguous,
    /// The target shape; `hole` marks the element written as `()`.
    Reshape {
        dims: Vec<usize>,
        hole: Option<usize>,
    },
}

fn random_op(shape: &[usize], rng: &mut Rng) -> Op {
    let rank = shape.len();
    loop {
        match rng.below(10) {
            0 if rank >= 1 => return Op::Transpose(rng.below(rank), rng.below(rank)),
            1 if rank >= 2 => return Op::T,
            2 if rank >= 1 => {
                let mut dims: Vec<usize> = (0..rank).collect();
                for i in (1..rank).rev() {
                    dims.swap(i, rng.below(i + 1));
                }
                return Op::Permute(dims);
            }
            3 if rank >= 1 => {
                let dim = rng.below(rank);
                let start = rng.below(shape[dim] + 1);
                // Mostly non-empty slices; sometimes an empty one (a zero-size dim).
                let max_len = shape[dim] - start;
                let len = if max_len > 0 && rng.chance(90) {
                    1 + rng.below(max_len)
                } else {
                    0
                };
                return Op::Narrow { dim, start, len };
            }
            4 if rank < 5 => return Op::Unsqueeze(rng.below(rank + 1)),
            5 if rank >= 1 => return Op::Squeeze(rng.below(rank)),
            6 => {
                let mut target: Vec<usize> = (0..rng.below(2)).map(|_| 1 + rng.below(3)).collect();
                target.extend(shape.iter().map(|&s| {
                    if s == 1 && rng.chance(50) {
                        2 + rng.below(2)
                    } else {
                        s
                    }
                }));
                if target.len() <= 5 {
                    return Op::BroadcastAs(target);
                }
            }
            7 => return Op::Affine,
            8 => return Op::Contiguous,
            9 => return random_reshape(shape, rng),
            _ => {}
        }
    }
}

/// A reshape target: usually a valid factorisation of the element count, sometimes with
/// one dim written as the hole, and sometimes (1 in 12) a shape with the wrong count.
fn random_reshape(shape: &[usize], rng: &mut Rng) -> Op {
    let numel: usize = shape.iter().product();
    let rank = 1 + rng.below(4);
    let mut dims = Vec::with_capacity(rank);
    let mut rest = numel;
    for i in 0..rank {
        if i + 1 == rank {
            dims.push(rest);
        } else if rest == 0 {
            dims.push(rng.below(3));
        } else {
            let divisors: Vec<usize> = (1..=rest).filter(|d| rest % d == 0).collect();
            let d = divisors[rng.below(divisors.len())];
            dims.push(d);
            rest /= d;
        }
    }
    if rng.below(12) == 0 {
        let i = rng.below(rank);
        dims[i] += 1;
    }
    let hole = (rank <= 4 && rng.chance(30)).then(|| rng.below(rank));
    Op::Reshape { dims, hole }
}

/// The op on a real tensor.
fn run_candle(t: &Tensor, op: &Op) -> candle_core::Result<Tensor> {
    match op {
        Op::Transpose(a, b) => t.transpose(*a, *b),
        Op::T => t.t(),
        Op::Permute(dims) => t.permute(dims.clone()),
        Op::Narrow { dim, start, len } => t.narrow(*dim, *start, *len),
        Op::Unsqueeze(d) => t.unsqueeze(*d),
        Op::Squeeze(d) => t.squeeze(*d),
        Op::BroadcastAs(shape) => t.broadcast_as(shape.clone()),
        Op::Affine => t.affine(2.0, 1.0),
        Op::Contiguous => t.contiguous(),
        Op::Reshape { dims, hole: None } => t.reshape(dims.clone()),
        Op::Reshape {
            dims,
            hole: Some(h),
        } => reshape_with_hole(t, dims, *h),
    }
}

/// candle's `()` hole only type-checks in tuples, so each (rank, position) is spelled out.
fn reshape_with_hole(t: &Tensor, d: &[usize], hole: usize) -> candle_core::Result<Tensor> {
    match (d.len(), hole) {
        (1, _) => t.reshape(((),)),
        (2, 0) => t.reshape(((), d[1])),
        (2, _) => t.reshape((d[0], ())),
        (3, 0) => t.reshape(((), d[1], d[2])),
        (3, 1) => t.reshape((d[0], (), d[2])),
        (3, _) => t.reshape((d[0], d[1], ())),
        (4, 0) => t.reshape(((), d[1], d[2], d[3])),
        (4, 1) => t.reshape((d[0], (), d[2], d[3])),
        (4, 2) => t.reshape((d[0], d[1], (), d[3])),
        (4, _) => t.reshape((d[0], d[1], d[2], ())),
        _ => unreachable!("holes are generated for ranks 1 to 4"),
    }
}

/// What the algebra predicts for one op: the result layout, or an error; and for `reshape`
/// and `contiguous` whether the op copies.
struct Predicted {
    layout: Result<Layout<i64>, String>,
    copies: Option<bool>,
}

fn predict(layout: &Layout<i64>, op: &Op) -> Predicted {
    let d = Decider::concrete();
    let view = |result: Result<Layout<i64>, stridelint::layout::LayoutError>| Predicted {
        layout: result.map_err(|e| e.message),
        copies: None,
    };
    match op {
        Op::Transpose(a, b) => view(transpose(layout, *a as i64, *b as i64)),
        Op::T => view(candle_t(layout)),
        Op::Permute(dims) => view(permute(
            layout,
            &dims.iter().map(|&x| x as i64).collect::<Vec<_>>(),
        )),
        Op::Narrow { dim, start, len } => view(candle_narrow(
            layout,
            *dim as i64,
            &(*start as i64),
            &(*len as i64),
            &d,
        )),
        Op::Unsqueeze(dim) => view(unsqueeze(layout, *dim as i64)),
        Op::Squeeze(dim) => view(squeeze_dim(layout, *dim as i64, &d)),
        Op::BroadcastAs(shape) => {
            let shape: Vec<i64> = shape.iter().map(|&s| s as i64).collect();
            view(candle_broadcast_as(layout, &shape, &d))
        }
        // Spec §10.2: element-wise outputs are fresh contiguous tensors, except that a
        // zero-element input is returned as is.
        Op::Affine if layout.numel() == 0 => view(Ok(layout.clone())),
        Op::Affine => view(Ok(fresh(&layout.shape))),
        // Spec §10.2: `contiguous()` is an alias of a contiguous tensor, else a copy.
        Op::Contiguous => match candle_is_contiguous(layout, &d) {
            Tri::Yes => Predicted {
                layout: Ok(layout.clone()),
                copies: Some(false),
            },
            _ => Predicted {
                layout: Ok(fresh(&layout.shape)),
                copies: Some(true),
            },
        },
        Op::Reshape { dims, hole } => {
            let target: Vec<i64> = dims
                .iter()
                .enumerate()
                .map(|(i, &s)| if Some(i) == *hole { -1 } else { s as i64 })
                .collect();
            match candle_reshape(layout, &target, &d) {
                Ok(outcome) => Predicted {
                    layout: outcome.layout.ok_or_else(|| "undecided".to_string()),
                    copies: outcome.copies.known(),
                },
                Err(e) => Predicted {
                    layout: Err(e.message),
                    copies: None,
                },
            }
        }
    }
}

/// A freshly allocated candle tensor of this shape.
fn fresh(shape: &[i64]) -> Layout<i64> {
    Layout::new(shape.to_vec(), candle_contiguous_strides(shape), 0)
}

/// The layout candle reports for a tensor.
fn actual_layout(t: &Tensor) -> Layout<i64> {
    let layout = t.layout();
    Layout::new(
        layout.dims().iter().map(|&s| s as i64).collect(),
        layout.stride().iter().map(|&s| s as i64).collect(),
        layout.start_offset() as i64,
    )
}

/// candle's error text, without the backtrace it attaches when `RUST_BACKTRACE` is set
/// (rendering one resolves symbols, which would make this test slow).
fn error_text(error: &candle_core::Error) -> String {
    match error {
        candle_core::Error::WithBacktrace { inner, .. } => error_text(inner),
        other => other.to_string(),
    }
}

/// Do two tensors hold the same storage (no copy between them)?
fn shares_storage(a: &Tensor, b: &Tensor) -> bool {
    let (left, _) = a.storage_and_layout();
    let (right, _) = b.storage_and_layout();
    std::ptr::eq(&*left, &*right)
}

/// Same shape and offset, same strides on every dim of size > 1.
fn same_geometry(predicted: &Layout<i64>, actual: &Layout<i64>) -> bool {
    predicted.shape == actual.shape
        && predicted.offset == actual.offset
        && predicted
            .shape
            .iter()
            .zip(predicted.strides.iter().zip(&actual.strides))
            .all(|(&size, (p, a))| size == 1 || p == a)
}

fn start_tensor(rng: &mut Rng, device: &Device) -> Tensor {
    let rank = 1 + rng.below(4);
    let shape: Vec<usize> = (0..rank).map(|_| 1 + rng.below(4)).collect();
    let numel: usize = shape.iter().product();
    Tensor::arange(0f32, numel as f32, device)
        .and_then(|t| t.reshape(shape))
        .expect("a fresh tensor")
}

#[test]
fn random_op_chains_match_real_candle() {
    let device = Device::Cpu;
    let d = Decider::concrete();
    let mut rng = Rng(0x5EED_CA7D_1E00);
    let mut steps = 0;
    let (mut copies_seen, mut views_seen, mut non_contiguous_seen) = (0, 0, 0);
    let (mut kernels, mut matmuls) = (Tally::default(), Tally::default());
    for chain in 0..600 {
        let mut tensor = start_tensor(&mut rng, &device);
        let mut layout = actual_layout(&tensor);
        let mut history = vec![format!("start {:?}", tensor.dims())];
        for _ in 0..1 + rng.below(6) {
            let op = random_op(tensor.dims(), &mut rng);
            history.push(format!("{op:?}"));
            let context = || format!("chain {chain}: {}", history.join(" → "));
            let predicted = predict(&layout, &op);
            let result = run_candle(&tensor, &op);
            let next = match (predicted.layout, result) {
                (Ok(predicted_layout), Ok(next)) => {
                    let actual = actual_layout(&next);
                    assert!(
                        same_geometry(&predicted_layout, &actual),
                        "{}: predicted {predicted_layout:?}, candle {actual:?}",
                        context()
                    );
                    if let Some(copies) = predicted.copies {
                        assert_eq!(
                            !shares_storage(&tensor, &next),
                            copies,
                            "{}: copy",
                            context()
                        );
                        if copies {
                            copies_seen += 1;
                        } else {
                            views_seen += 1;
                        }
                    }
                    layout = predicted_layout;
                    next
                }
                (Err(message), Err(_)) => {
                    assert_ne!(message, "undecided", "{}", context());
                    history.pop();
                    continue;
                }
                (Ok(predicted_layout), Err(e)) => {
                    panic!(
                        "{}: predicted {predicted_layout:?}, candle failed: {}",
                        context(),
                        error_text(&e)
                    )
                }
                (Err(message), Ok(next)) => {
                    panic!(
                        "{}: predicted an error ({message}), candle gave {:?}",
                        context(),
                        next.layout()
                    )
                }
            };
            let contiguous = candle_is_contiguous(&layout, &d);
            assert_eq!(
                contiguous,
                Tri::from_bool(next.is_contiguous()),
                "{}: contiguity",
                context()
            );
            if contiguous == Tri::No {
                non_contiguous_seen += 1;
            }
            tensor = next;
            steps += 1;
        }
        check_fused_kernels(&tensor, &layout, chain, &mut kernels);
        check_matmul(&tensor, &layout, &mut rng, chain, &mut matmuls);
    }
    eprintln!(
        "{steps} steps: {copies_seen} copies, {views_seen} views, {non_contiguous_seen} non-contiguous results; \
         kernels {kernels:?}, matmuls {matmuls:?}"
    );
    assert!(
        kernels.accepted > 100 && kernels.rejected > 100,
        "kernels {kernels:?}"
    );
    assert!(
        matmuls.accepted > 100 && matmuls.rejected > 10,
        "matmuls {matmuls:?}"
    );
    // The generator must actually exercise both outcomes of every question.
    assert!(steps > 1500, "{steps} steps");
    assert!(
        copies_seen > 50 && views_seen > 50,
        "copies {copies_seen}, views {views_seen}"
    );
    assert!(
        non_contiguous_seen > 300,
        "{non_contiguous_seen} non-contiguous results"
    );
}

/// How often candle accepted and rejected a call (both outcomes must be exercised).
#[derive(Debug, Default)]
struct Tally {
    accepted: usize,
    rejected: usize,
}

impl Tally {
    fn count(&mut self, accepted: bool) {
        if accepted {
            self.accepted += 1;
        } else {
            self.rejected += 1;
        }
    }
}

/// Spec §10.4: the fused kernels fail exactly on non-contiguous inputs (an offset is fine).
fn check_fused_kernels(t: &Tensor, layout: &Layout<i64>, chain: usize, tally: &mut Tally) {
    if t.rank() == 0 || t.elem_count() == 0 {
        return;
    }
    let device = t.device();
    let contiguous = candle_is_contiguous(layout, &Decider::concrete()).is_yes();
    let mut verdict = |name: &str, result: candle_core::Result<Tensor>| match result {
        Ok(_) => {
            tally.count(true);
            assert!(
                contiguous,
                "chain {chain}: {name} accepted a non-contiguous {layout:?}"
            );
        }
        Err(e) => {
            tally.count(false);
            let text = error_text(&e);
            assert!(
                !contiguous,
                "chain {chain}: {name} rejected a contiguous {layout:?}: {text}"
            );
            assert!(
                text.contains("has to be contiguous"),
                "chain {chain}: {name}: {text}"
            );
        }
    };
    verdict("softmax_last_dim", candle_nn::ops::softmax_last_dim(t));
    let last = t.dims()[t.rank() - 1];
    let ones = Tensor::ones(last, DType::F32, device).expect("alpha");
    let zeros = Tensor::zeros(last, DType::F32, device).expect("beta");
    verdict("rms_norm", candle_nn::ops::rms_norm(t, &ones, 1e-5));
    verdict(
        "layer_norm",
        candle_nn::ops::layer_norm(t, &ones, &zeros, 1e-5),
    );
    if let &[_, _, seq, embd] = t.dims() {
        if embd % 2 == 0 {
            let cs = Tensor::ones((seq, embd / 2), DType::F32, device).expect("cos/sin");
            verdict("rope", candle_nn::rotary_emb::rope(t, &cs, &cs));
            verdict("rope_i", candle_nn::rotary_emb::rope_i(t, &cs, &cs));
        }
    }
}

/// Spec §10.3: CPU matmul (the `gemm` build) accepts any matrix strides but only mergeable
/// batch dims. The chain's tensor is used as the lhs against a contiguous or transposed
/// rhs, and as the rhs against a contiguous lhs.
fn check_matmul(t: &Tensor, layout: &Layout<i64>, rng: &mut Rng, chain: usize, tally: &mut Tally) {
    let rank = t.rank();
    if rank < 2 {
        return;
    }
    let device = t.device();
    let dims = t.dims();
    let batch = &dims[..rank - 2];
    let (m, k) = (dims[rank - 2], dims[rank - 1]);
    let n = 1 + rng.below(3);
    let with =
        |last_two: [usize; 2]| -> Vec<usize> { batch.iter().copied().chain(last_two).collect() };
    let rhs = if rng.chance(50) {
        Tensor::zeros(with([k, n]), DType::F32, device)
    } else {
        Tensor::zeros(with([n, k]), DType::F32, device)
            .and_then(|r| r.transpose(rank - 2, rank - 1))
    }
    .expect("rhs");
    let lhs = Tensor::zeros(with([n, m]), DType::F32, device).expect("lhs");
    let d = Decider::concrete();
    for (name, a, b) in [("as lhs", t, &rhs), ("as rhs", &lhs, t)] {
        let (la, lb) = if std::ptr::eq(a, t) {
            (layout.clone(), actual_layout(b))
        } else {
            (actual_layout(a), layout.clone())
        };
        let predicted = candle_matmul_ok(&la, &lb, CandleBackend::Cpu, &d);
        let actual = a.matmul(b);
        tally.count(actual.is_ok());
        assert_eq!(
            predicted.ok,
            Tri::from_bool(actual.is_ok()),
            "chain {chain}: matmul {name}: {la:?} × {lb:?}: predicted {:?}, candle {:?}",
            predicted.reason,
            actual.err().map(|e| error_text(&e))
        );
    }
}

// ----- the Rust fixtures, compiled and run against candle -----

// The fixtures' line layout is part of their meaning (a marker sits on the line where its
// call starts), so rustfmt must not reflow them through these module declarations.
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_attention.rs"]
mod candle_attention;
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_narrow_matmul.rs"]
mod candle_narrow_matmul;
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_rope_softmax.rs"]
mod candle_rope_softmax;
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_lm_head.rs"]
mod candle_lm_head;
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_index_kernels.rs"]
mod candle_index_kernels;
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_layer_fields.rs"]
mod candle_layer_fields;
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_get_kv_cache.rs"]
mod candle_get_kv_cache;
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_unknown_scalars.rs"]
mod candle_unknown_scalars;
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_values_operand.rs"]
mod candle_values_operand;
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_field_sizes.rs"]
mod candle_field_sizes;
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_optional_rope.rs"]
mod candle_optional_rope;
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_core_attention.rs"]
mod candle_core_attention;
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_vec_shapes.rs"]
mod candle_vec_shapes;
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_partial_rotary.rs"]
mod candle_partial_rotary;
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_cache_paths.rs"]
mod candle_cache_paths;
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_attention_output.rs"]
mod candle_attention_output;
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_channels_tokens.rs"]
mod candle_channels_tokens;
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_rotary_halves.rs"]
mod candle_rotary_halves;
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_branch_sizes.rs"]
mod candle_branch_sizes;
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_cat_unknown_part.rs"]
mod candle_cat_unknown_part;
#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_size_test_branch.rs"]
mod candle_size_test_branch;

fn input(shape: &[usize]) -> Tensor {
    let numel: usize = shape.iter().product();
    Tensor::arange(0f32, numel as f32, &Device::Cpu)
        .and_then(|t| t.affine(1.0 / numel as f64, 0.0))
        .and_then(|t| t.reshape(shape))
        .expect("input")
}

/// The candle matmul rule on `l` × `r`: each of `rejecting` refuses the operands, and the
/// default CPU build (the gemm crate) takes them.
fn assert_only_cpu_gemm_takes(
    l: &Layout<i64>,
    r: &Layout<i64>,
    rejecting: &[CandleBackend],
    d: &Decider,
) {
    for &backend in rejecting {
        assert_eq!(
            candle_matmul_ok(l, r, backend, d).ok,
            Tri::No,
            "{backend}: {l:?} x {r:?}"
        );
    }
    assert_eq!(
        candle_matmul_ok(l, r, CandleBackend::Cpu, d).ok,
        Tri::Yes,
        "cpu: {l:?} x {r:?}"
    );
}

fn assert_not_contiguous_error(result: candle_core::Result<Tensor>, what: &str) {
    let error = error_text(&result.expect_err(what));
    assert!(error.contains("has to be contiguous"), "{what}: {error}");
}

#[test]
fn sl006_fixture_markers_fail_in_candle_and_the_fixed_versions_run() {
    use candle_rope_softmax::*;
    let (b, t, heads, head_dim) = (2, 5, 3, 4);
    let cs = Tensor::ones((t, head_dim / 2), DType::F32, &Device::Cpu).unwrap();
    let x = input(&[b, t, heads * head_dim]);
    assert_not_contiguous_error(rotate_queries(&x, heads, &cs, &cs), "rotate_queries");
    rotate_keys(&x, heads, &cs, &cs).expect("rotate_keys");
    let scores = input(&[b, heads, t, t + 1]);
    assert_not_contiguous_error(column_softmax(&scores), "column_softmax");
    column_softmax_composed(&scores).expect("column_softmax_composed");
    scaled_column_softmax(&scores, 0.5).expect("scaled_column_softmax");
}

/// `candle_layer_fields.rs`: the block's forward fails in its rotary layer's `rope` on the
/// query it hands over transposed (the marked line), and passes once q is made contiguous.
#[test]
fn sl006_in_a_layer_field_method_fails_in_candle_with_the_callers_layout() {
    use candle_layer_fields::*;
    let (b, t, heads, head_dim) = (2, 5, 3, 4);
    let dev = Device::Cpu;
    let rotary = std::sync::Arc::new(
        RotaryEmbedding::new(DType::F32, head_dim, 16, &dev).expect("RotaryEmbedding::new"),
    );
    let vb = candle_nn::VarBuilder::zeros(DType::F32, &dev);
    let attention =
        Attention::new(rotary.clone(), heads * head_dim, heads, vb).expect("Attention::new");
    let xs = input(&[b, t, heads * head_dim]);
    let error = error_text(&attention.forward(&xs, 0).expect_err("forward"));
    assert!(error.contains("has to be contiguous"), "forward: {error}");
    let q = input(&[b, t, heads, head_dim]).transpose(1, 2).unwrap();
    let k = q.clone();
    assert_not_contiguous_error(
        rotary.apply_rotary_emb_qkv(&q, &k, 0).map(|(q, _)| q),
        "apply_rotary_emb_qkv (transposed q)",
    );
    let q = q.contiguous().unwrap();
    rotary
        .apply_rotary_emb_qkv(&q, &k, 0)
        .expect("apply_rotary_emb_qkv (contiguous q, transposed k)");
    // The projection built by a free function: the marked matmul fails on candle's CPU
    // build too (the lhs batch dims do not merge).
    let vb = candle_nn::VarBuilder::zeros(DType::F32, &dev);
    let scores = SelfScores::load(heads * head_dim, heads, head_dim, vb).expect("load");
    let error = error_text(&scores.forward(&xs).expect_err("SelfScores::forward"));
    assert!(
        error.contains("MatMulNonContiguous") || error.contains("non-contiguous"),
        "{error}"
    );
    // `to_dtype` to the same dtype keeps the transposed view: `values_as`'s copy is real.
    let v = input(&[b, t, heads, head_dim]);
    let same = v.transpose(1, 2).unwrap().to_dtype(DType::F32).unwrap();
    assert!(!same.is_contiguous());
    assert!(values_as(&v, DType::F32).unwrap().is_contiguous());
}

/// `candle_unknown_scalars.rs`: the clipped query keeps its shape and fails in `rope` once
/// transposed (with and without a clip); the scaled weights times the transposed values
/// fail on the CPU build too (their batch dims do not merge).
#[test]
fn unknown_scalar_fixture_markers_fail_in_candle() {
    use candle_unknown_scalars::*;
    let (b, t, heads, head_dim) = (2, 5, 3, 4);
    let dev = Device::Cpu;
    let cs = Tensor::ones((t, head_dim / 2), DType::F32, &dev).unwrap();
    let xs = input(&[b, t, heads * head_dim]);
    for clip in [None, Some(0.5)] {
        let vb = candle_nn::VarBuilder::zeros(DType::F32, &dev);
        let attention = ClippedAttention::new(heads * head_dim, heads, clip, vb)
            .expect("ClippedAttention::new");
        assert_not_contiguous_error(attention.forward(&xs, &cs, &cs), "forward");
        let error = error_text(&attention.attend(&xs, &xs).expect_err("attend"));
        assert!(
            error.contains("MatMulNonContiguous") || error.contains("non-contiguous"),
            "{error}"
        );
    }
    // `clamp` by scalars gives a contiguous tensor of the input's shape.
    let q = input(&[b, heads, t, head_dim]).transpose(1, 2).unwrap();
    let clipped = q.clamp(-0.5, 0.5).unwrap();
    assert_eq!(clipped.dims(), q.dims());
    assert!(clipped.is_contiguous());
}

/// `candle_values_operand.rs`: the transposed values fail the matmul on the CPU build
/// whatever the weights (their batch dims do not merge); made contiguous, they pass.
#[test]
fn values_operand_fixture_markers_fail_in_candle() {
    use candle_values_operand::*;
    let (b, t, heads, head_dim) = (2, 5, 3, 4);
    let v = input(&[b, t, heads * head_dim]);
    let weights = input(&[b, heads, t, t]);
    let batch_error = |result: candle_core::Result<Tensor>, what: &str| {
        let error = error_text(&result.expect_err(what));
        assert!(
            error.contains("MatMulNonContiguous") || error.contains("non-contiguous"),
            "{what}: {error}"
        );
    };
    batch_error(attend(&weights, &v, heads), "attend");
    attend_contiguous(&weights, &v, heads).expect("attend_contiguous");
    let mask = Tensor::ones((b, heads, t, t), DType::U8, &Device::Cpu).unwrap();
    batch_error(attend_masked(&weights, &mask, &v, heads), "attend_masked");
}

/// `candle_field_sizes.rs`: head sizes from the config's fields; the marked rope and
/// matmul fail in candle, and the merged output is reshaped from a non-contiguous product.
#[test]
fn field_sizes_fixture_markers_hold_in_candle() {
    use candle_field_sizes::*;
    let (b, t, heads, head_dim) = (2, 5, 3, 4);
    let heads_from = HeadsFromConfig::new(&Config {
        num_attention_heads: heads,
        head_dim,
    });
    let xs = input(&[b, t, heads * head_dim]);
    let cs = Tensor::ones((t, head_dim / 2), DType::F32, &Device::Cpu).unwrap();
    assert_not_contiguous_error(heads_from.rotate(&xs, &cs, &cs), "rotate");
    let error = error_text(&heads_from.scores(&xs).expect_err("scores"));
    assert!(
        error.contains("MatMulNonContiguous") || error.contains("non-contiguous"),
        "{error}"
    );
    let w = input(&[b * heads * t * t]);
    let merged = heads_from.merge(&w, &xs).expect("merge");
    assert_eq!(merged.dims(), &[b, t, heads * head_dim]);
    // What the marked reshape receives: the product transposed, not contiguous.
    let v = xs
        .reshape((b, t, heads, head_dim))
        .unwrap()
        .transpose(1, 2)
        .unwrap();
    let product = w
        .reshape((b, heads, t, t))
        .unwrap()
        .matmul(&v.contiguous().unwrap())
        .unwrap();
    assert!(!product.transpose(1, 2).unwrap().is_contiguous());
    for head_dim_option in [None, Some(head_dim)] {
        let cfg = OptionalHeadDim {
            hidden_size: heads * head_dim,
            num_attention_heads: heads,
            head_dim: head_dim_option,
        };
        let vb = candle_nn::VarBuilder::zeros(DType::F32, &Device::Cpu);
        let projected = ProjectedHeads::new(&cfg, vb).expect("ProjectedHeads::new");
        assert_not_contiguous_error(projected.rotate(&xs, &cs, &cs), "ProjectedHeads::rotate");
    }
    let kv = KvHeads::new(&KvConfig {
        num_attention_heads: heads,
        num_key_value_heads: None,
        head_dim,
    });
    let weights = input(&[b, heads, t, t]);
    let error = error_text(&kv.attend(&weights, &xs, b, t).expect_err("KvHeads::attend"));
    assert!(
        error.contains("MatMulNonContiguous") || error.contains("non-contiguous"),
        "{error}"
    );
    // The per-head blocks: the CPU build runs them; the BLAS rules reject the lhs.
    let gates = BlockGates::new(&LruConfig {
        hidden_size: heads * head_dim,
        lru_width: None,
        num_attention_heads: heads,
    });
    let w = input(&[heads, head_dim, head_dim]);
    gates
        .gates(&xs, &w)
        .expect("CPU gemm takes the permuted blocks");
    let x = xs
        .reshape((b * t, heads, head_dim))
        .unwrap()
        .permute((1, 0, 2))
        .unwrap();
    let (l, r) = (actual_layout(&x), actual_layout(&w));
    let blas = [
        CandleBackend::Cuda,
        CandleBackend::Mkl,
        CandleBackend::Metal,
    ];
    assert_only_cpu_gemm_takes(&l, &r, &blas, &Decider::concrete());
}

/// `candle_optional_rope.rs`: with the rotary layer, the transposed query fails in its
/// `rope`; skipping it, the matmul fails (the query's batch dims do not merge); without the
/// layer and not skipping, the copies make it run.
#[test]
fn optional_rope_fixture_markers_fail_in_candle() {
    use candle_optional_rope::*;
    let (b, t, heads, head_dim) = (2, 5, 3, 4);
    let dev = Device::Cpu;
    let rope = std::sync::Arc::new(Rope::new(head_dim, 16, &dev).expect("Rope::new"));
    let xs = input(&[b, t, heads * head_dim]);
    let with_rope = Attention::new(Some(rope.clone()), heads, head_dim, false);
    assert_not_contiguous_error(with_rope.forward(&xs, 0), "forward with the rotary layer");
    let skipping = Attention::new(Some(rope), heads, head_dim, true);
    let error = error_text(&skipping.forward(&xs, 0).expect_err("forward skipping it"));
    assert!(
        error.contains("MatMulNonContiguous") || error.contains("non-contiguous"),
        "{error}"
    );
    Attention::new(None, heads, head_dim, false)
        .forward(&xs, 0)
        .expect("forward without the layer");
}

/// `candle_partial_rotary.rs`: the rotated part cut from the transposed query fails in
/// `rope_i`; copied first, it runs, and the query glued back by `cat` is not contiguous, so
/// its product with the keys fails (on the CPU build too: at batch ≥ 2 no matrix stride of
/// the glued query is 1) until it is copied — with part of each head rotated or all of it
/// (the passed part is then empty, and candle's `cat` still takes the transposing path).
#[test]
fn partial_rotary_fixture_markers_fail_in_candle() {
    use candle_partial_rotary::*;
    let (b, t, heads, head_dim) = (2, 5, 3, 8);
    for rotary_dim in [4, head_dim] {
        let cfg = Config {
            hidden_size: heads * head_dim,
            num_heads: heads,
            rotary_dim,
            max_len: 16,
        };
        let vb = candle_nn::VarBuilder::zeros(DType::F32, &Device::Cpu);
        let attention = Attention::new(&cfg, vb).expect("Attention::new");
        let xs = input(&[b, t, heads * head_dim]);
        assert_not_contiguous_error(attention.rotated_query(&xs, 0), "rotated_query");
        let error = error_text(&attention.scores(&xs, 0).expect_err("scores"));
        assert!(
            error.contains("MatMulNonContiguous") || error.contains("non-contiguous"),
            "rotary_dim {rotary_dim}: {error}"
        );
        attention.scores_copied(&xs, 0).expect("scores_copied");
    }
}

#[test]
fn sl002_fixture_functions_run_and_copy_where_marked() {
    use candle_attention::*;
    let cfg = Config {
        hidden_size: 12,
        num_attention_heads: 3,
    };
    let vb = candle_nn::VarBuilder::zeros(DType::F32, &Device::Cpu);
    let attention = Attention::new(&cfg, vb).expect("Attention::new");
    let xs = input(&[2, 5, 12]);
    let good = attention.forward(&xs).expect("forward");
    let marked = attention
        .forward_missing_contiguous(&xs)
        .expect("forward_missing_contiguous");
    assert_eq!(good.dims(), marked.dims());
    // The marked reshapes' inputs are exactly the non-contiguous layouts the markers claim.
    let y = input(&[2, 3, 5, 4]).transpose(1, 2).unwrap();
    assert!(!y.is_contiguous());
    assert!(!shares_storage(&y, &y.reshape((2, 5, ())).unwrap()));
    let tokens = xs.narrow(1, 1, 4).unwrap();
    assert!(!tokens.is_contiguous());
    assert!(!shares_storage(&tokens, &tokens.flatten_from(1).unwrap()));
    assert_eq!(tokens_without_cls(&xs).unwrap().dims(), [2, 48]);
    // The unmarked narrow of the outer dim stays a view.
    let first = xs.narrow(0, 0, 1).unwrap();
    assert!(first.is_contiguous() && shares_storage(&first, &first.reshape((5, 12)).unwrap()));
    assert_eq!(first_items(&xs, 1).unwrap().dims(), [5, 12]);
}

#[test]
fn sl005_fixture_layouts_fail_the_blas_stride_rule_only() {
    use candle_narrow_matmul::*;
    let qkv = input(&[5, 3 * 4]);
    // The default CPU build (gemm) accepts any matrix strides: both versions run.
    let marked = fused_qkv_scores(&qkv).expect("CPU gemm accepts narrowed operands");
    let fixed = fused_qkv_scores_contiguous(&qkv).expect("contiguous operands");
    assert_eq!(
        marked.to_vec2::<f32>().unwrap(),
        fixed.to_vec2::<f32>().unwrap()
    );
    first_rows_times(&qkv, &input(&[12, 2]), 3).expect("row-narrowed operands");
    // The marked operands violate the cuBLAS / mkl rule (spec §10.3); the fixed ones do not.
    let q = actual_layout(&qkv.narrow(1, 0, 4).unwrap());
    let k_t = actual_layout(&qkv.narrow(1, 4, 4).unwrap().t().unwrap());
    let d = Decider::concrete();
    let rejecting = [CandleBackend::Cuda, CandleBackend::Mkl];
    assert_only_cpu_gemm_takes(&q, &k_t, &rejecting, &d);
    for backend in rejecting {
        let fresh_q = fresh(&q.shape);
        let fresh_k_t = actual_layout(
            &qkv.narrow(1, 4, 4)
                .unwrap()
                .contiguous()
                .unwrap()
                .t()
                .unwrap(),
        );
        assert_eq!(
            candle_matmul_ok(&fresh_q, &fresh_k_t, backend, &d).ok,
            Tri::Yes,
            "{backend}"
        );
    }
}

/// `candle_core_attention.rs`: both versions run on the default CPU build and agree; the
/// marked product's lhs fails the cuBLAS, Metal and mkl matrix rule, the fixed one's passes.
#[test]
fn core_attention_fixture_lhs_fails_the_blas_rule_only() {
    use candle_core_attention::*;
    let (sq, b, np, hn) = (5, 2, 3, 4);
    let q = input(&[sq, b, np, hn]);
    let k = input(&[sq, b, np, hn]);
    let marked = core_scores(&q, &k).expect("CPU gemm accepts the strided lhs");
    let fixed = core_scores_contiguous(&q, &k).expect("contiguous operands");
    assert_eq!(
        marked.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
        fixed.flatten_all().unwrap().to_vec1::<f32>().unwrap()
    );
    let lhs = q
        .reshape((sq, b * np, hn))
        .unwrap()
        .transpose(0, 1)
        .unwrap();
    let rhs = k
        .reshape((sq, b * np, hn))
        .unwrap()
        .transpose(0, 1)
        .unwrap()
        .transpose(1, 2)
        .unwrap()
        .contiguous()
        .unwrap();
    let (l, r) = (actual_layout(&lhs), actual_layout(&rhs));
    let d = Decider::concrete();
    let blas = [
        CandleBackend::Cuda,
        CandleBackend::Mkl,
        CandleBackend::Metal,
    ];
    assert_only_cpu_gemm_takes(&l, &r, &blas, &d);
    let fresh_l = fresh(&l.shape);
    for backend in blas {
        assert_eq!(
            candle_matmul_ok(&fresh_l, &r, backend, &d).ok,
            Tri::Yes,
            "{backend}"
        );
    }
}

/// `candle_lm_head.rs`: every function runs on the default CPU build (the gemm crate takes
/// any matrix strides), and the operands the SL005 markers point at are exactly the ones
/// the cuBLAS, Metal and mkl rules reject while the unmarked ones pass them (spec §10.3,
/// §10.5).
#[test]
fn sl005_lm_head_fixture_runs_on_cpu_and_its_marked_operands_fail_the_gpu_rules() {
    use candle_lm_head::*;
    let (b, seq, hidden, vocab) = (2, 5, 4, 7);
    let vb = candle_nn::VarBuilder::zeros(DType::F32, &Device::Cpu);
    let head = Head::new(hidden, vocab, vb).expect("Head::new");
    let xs = input(&[b, seq, hidden]);
    for (name, out) in [
        ("last_logits", head.last_logits(&xs)),
        ("last_logits_contiguous", head.last_logits_contiguous(&xs)),
        ("last_logits_narrow", head.last_logits_narrow(&xs)),
    ] {
        assert_eq!(out.expect(name).dims(), [b, vocab], "{name}");
    }
    head.all_logits(&xs).expect("all_logits");
    head.pooled(&xs).expect("pooled");
    tied_logits(&xs, &input(&[vocab, hidden])).expect("tied_logits");
    stepwise_logits(&xs, &input(&[vocab, hidden])).expect("stepwise_logits");
    halves(&input(&[4, hidden]), &input(&[hidden + 1, 3])).expect("halves");
    unpadded_values(&input(&[3, 4, 5]), &input(&[3, 5, 2])).expect("unpadded_values");
    shared_projection(&xs, &input(&[hidden + 2, 3])).expect("shared_projection");
    let d = Decider::concrete();
    let w_t = |n: usize| actual_layout(&input(&[n, hidden]).t().unwrap());
    // The marked operands: the last row (every step's row has its strides), the first
    // row, the narrowed scores.
    let last = actual_layout(&xs.i((.., seq - 1, ..)).unwrap());
    let first = actual_layout(&xs.get_on_dim(1, 0).unwrap());
    let scores = input(&[3, 4, 5]).narrow(2, 0, 4).unwrap();
    let values = actual_layout(&input(&[3, 5, 2]).narrow(1, 0, 4).unwrap());
    let marked = [
        (last.clone(), w_t(vocab)),
        (first, w_t(hidden)),
        (actual_layout(&scores), values),
    ];
    let blas = [
        CandleBackend::Cuda,
        CandleBackend::Metal,
        CandleBackend::Mkl,
    ];
    for (lhs, rhs) in &marked {
        assert_only_cpu_gemm_takes(lhs, rhs, &blas, &d);
    }
    // The fixed and unmarked ones: a contiguous row, a narrowed 1-row batch against the
    // broadcast weight (Linear's non-contiguous 3-d path).
    let fixed = actual_layout(&xs.i((.., seq - 1, ..)).unwrap().contiguous().unwrap());
    let narrow = actual_layout(&xs.narrow(1, seq - 1, 1).unwrap());
    let broadcast_w = actual_layout(
        &input(&[vocab, hidden])
            .broadcast_left(b)
            .unwrap()
            .t()
            .unwrap(),
    );
    for backend in CandleBackend::ALL {
        assert_eq!(
            candle_matmul_ok(&fixed, &w_t(vocab), backend, &d).ok,
            Tri::Yes
        );
        assert_eq!(
            candle_matmul_ok(&narrow, &broadcast_w, backend, &d).ok,
            Tri::Yes
        );
    }
}

/// `candle_index_kernels.rs`: every `// expect: SL006` function fails on the CPU build with
/// candle's `RequiresContiguous` ("… only supports contiguous tensors"), and the unmarked
/// ones run.
#[test]
fn sl006_index_kernel_fixture_markers_fail_in_candle_and_the_fixed_versions_run() {
    use candle_index_kernels::*;
    let ids = Tensor::new(&[2u32, 0, 1], &Device::Cpu).unwrap();
    let table = input(&[4, 3]);
    let refused = |result: candle_core::Result<Tensor>, what: &str| {
        let error = error_text(&result.expect_err(what));
        assert!(
            error.contains("only supports contiguous tensors"),
            "{what}: {error}"
        );
    };
    refused(columns_by_id(&table, &ids), "columns_by_id");
    columns_by_id_contiguous(&table, &ids).expect("columns_by_id_contiguous");
    let tokens = Tensor::new(&[[1u32, 2, 3, 0], [0, 1, 2, 3]], &Device::Cpu).unwrap();
    refused(
        next_token_logprobs(&input(&[2, 4, 5]), &tokens),
        "next_token_logprobs",
    );
    let rows = Tensor::new(&[1u32, 0], &Device::Cpu).unwrap();
    refused(
        combine_experts(&input(&[3, 4]), &rows, &input(&[4, 2])),
        "combine_experts",
    );
    let scatter_ids = Tensor::new(&[[0u32, 1], [1, 0]], &Device::Cpu).unwrap();
    refused(
        scatter_counts(&input(&[2, 2]), &scatter_ids, &input(&[2, 3])),
        "scatter_counts",
    );
    let one_hot_ids = Tensor::new(&[[0u32, 2, 1], [1, 0, 2]], &Device::Cpu).unwrap();
    refused(
        one_hot_but_last(
            &Tensor::zeros((2, 3), DType::F32, &Device::Cpu).unwrap(),
            &one_hot_ids,
            &Tensor::ones((2, 2), DType::F32, &Device::Cpu).unwrap(),
        ),
        "one_hot_but_last",
    );
    let cache = Tensor::zeros((1, 2, 6, 3), DType::F32, &Device::Cpu).unwrap();
    let k = input(&[1, 2, 2, 3]);
    let error = error_text(&append_keys(&cache, &k, 1).expect_err("append_keys"));
    assert!(
        error.contains("only supports contiguous tensors"),
        "{error}"
    );
    append_keys_contiguous(&cache, &k, 1).expect("append_keys_contiguous");
    refused(
        last_position_order(&input(&[2, 3, 4])),
        "last_position_order",
    );
    let error = error_text(&sorted_columns(&input(&[3, 4])).expect_err("sorted_columns"));
    assert!(
        error.contains("only supports contiguous tensors"),
        "{error}"
    );
    first_sequence_order(&input(&[2, 3, 4])).expect("first_sequence_order");
}

/// `candle_get_kv_cache.rs`: `get` of a non-contiguous tensor returns a contiguous copy (so
/// the matmul after it runs, where a view would fail), of a contiguous one a view;
/// `KvCache::append` of a transposed value fails and the contiguous one runs; a rank-5
/// matmul fails on the CPU build at batch 2 even though its operands are contiguous, and
/// the merged rank-3 one runs.
#[test]
fn get_kv_cache_fixture_markers_hold_in_candle() {
    use candle_get_kv_cache::*;
    let (b, t, hidden, heads) = (2, 3, 8, 2);
    let vb = candle_nn::VarBuilder::zeros(DType::F32, &Device::Cpu);
    let mut attn = Attention::new(hidden, heads, vb).unwrap();
    let xs = input(&[b, t, hidden]);
    // What the fixture's `get` splits: (3, b, h, t, d), not contiguous; each slice comes
    // back contiguous (a copy), where `get_on_dim` keeps the strided view.
    let fused = input(&[b, t, 3 * hidden])
        .reshape((b, t, 3, heads, ()))
        .and_then(|x| x.permute((2, 0, 3, 1, 4)))
        .unwrap();
    assert!(!fused.is_contiguous());
    assert!(fused.get(0).unwrap().is_contiguous());
    assert!(!fused.get_on_dim(0, 0).unwrap().is_contiguous());
    // The view the old `get` row described fails the matmul; the copy runs.
    let view_q = fused.get_on_dim(0, 0).unwrap();
    let view_k = fused.get_on_dim(0, 1).unwrap();
    assert!(view_q.matmul(&view_k.t().unwrap()).is_err());
    attn.scores_by_get(&xs).expect("scores_by_get");
    attn.first_sequence(&xs).expect("first_sequence");
    let error = error_text(
        &attn
            .append_transposed_value(&xs)
            .expect_err("append_transposed_value"),
    );
    assert!(
        error.contains("only supports contiguous tensors"),
        "{error}"
    );
    attn.append_contiguous(&xs).expect("append_contiguous");
    let (n, windows) = (4, 1);
    let qkv = input(&[b, n * windows, 3 * heads * 4]);
    let error = error_text(&windowed_scores(&qkv, heads, windows).expect_err("windowed_scores"));
    assert!(error.contains("MatMulUnexpectedStriding"), "{error}");
    windowed_scores_merged(&qkv, heads, windows).expect("windowed_scores_merged");
}

/// `candle_vec_shapes.rs`: the chunked tensors are 5-d and 4-d, so their permutes run; the
/// marked reshape of the transposed input copies.
#[test]
fn vec_shape_fixture_runs_in_candle_and_its_reshape_copies() {
    use candle_vec_shapes::*;
    let (b, t, heads, head_dim) = (2, 6, 3, 4);
    let x = input(&[b, t, heads, head_dim]);
    let a = input(&[b, t, heads]);
    let (x, a) = Mixer { chunk_size: 2 }.chunked(&x, &a).expect("chunked");
    assert_eq!(x.dims(), &[b, t / 2, heads, 2, head_dim]);
    assert_eq!(a.dims(), &[b, heads, t / 2, 2]);
    let (y, z) = heads_first(&input(&[b, t, heads, head_dim])).expect("heads_first");
    assert!(
        !shares_storage(&y, &z),
        "the reshape of the transposed input copied"
    );
}

/// `candle_cache_paths.rs`: on the first call (empty cache) the transposed key reaches the
/// matmul and candle rejects it, by `match` and by `if let`; made contiguous it runs. The
/// partial rotary's `cat` comes back not contiguous and its matmul fails too. The rotary
/// handed to the constructor runs; without it the matmul fails, the path the analysis
/// leaves unnamed.
#[test]
fn cache_paths_fixture_markers_fail_in_candle() {
    use candle_cache_paths::*;
    let (b, t, heads, head_dim) = (2, 5, 3, 4);
    let cfg = Config {
        hidden_size: heads * head_dim,
        num_attention_heads: heads,
        partial_rotary_factor: 0.5,
        use_qkv_bias: false,
    };
    let vb = || candle_nn::VarBuilder::zeros(DType::F32, &Device::Cpu);
    let xs = input(&[b, t, heads * head_dim]);
    let matmul_error = |result: candle_core::Result<Tensor>, what: &str| {
        let error = error_text(&result.expect_err(what));
        assert!(
            error.contains("MatMulNonContiguous") || error.contains("non-contiguous"),
            "{what}: {error}"
        );
    };
    let mut attention = Attention::new(&cfg, vb()).expect("Attention::new");
    matmul_error(attention.forward(&xs), "forward, empty cache");
    let mut attention = Attention::new(&cfg, vb()).expect("Attention::new");
    matmul_error(attention.forward_if_let(&xs), "forward_if_let, empty cache");
    let mut attention = Attention::new(&cfg, vb()).expect("Attention::new");
    attention.forward_contiguous(&xs).expect("first call");
    attention.forward_contiguous(&xs).expect("second call");
    attention.clear_kv_cache();
    let partial = PartialRotary::new(&cfg, vb()).expect("PartialRotary::new");
    matmul_error(partial.forward(&xs), "partial rotary");
    let rope = std::sync::Arc::new(Rope { scale: 0.5 });
    RopedAttention::new(Some(rope), heads, head_dim)
        .forward(&xs)
        .expect("with the rotary");
    matmul_error(
        RopedAttention::new(None, heads, head_dim).forward(&xs),
        "without the rotary",
    );
}

/// `candle_attention_output.rs`: the attention runs for a prompt and for one decoding
/// step; the heads it merges, `(b, h, q_len, n)` transposed to `(b, q_len, h, n)`, are
/// copied by `reshape` for a prompt and viewed for one token (q_len = 1), the condition
/// the finding states.
#[test]
fn attention_output_fixture_runs_and_its_reshape_copies_for_a_prompt() {
    use candle_attention_output::*;
    let (b, heads, head_dim) = (2, 3, 4);
    let hidden = heads * head_dim;
    let vb = candle_nn::VarBuilder::zeros(DType::F32, &Device::Cpu);
    let mut attention = Attention::new(hidden, heads, vb).expect("Attention::new");
    for (q_len, past) in [(5, 0), (1, 5)] {
        let xs = input(&[b, q_len, hidden]);
        let kv = input(&[b, heads, q_len, head_dim]);
        let y = attention.forward(&xs, &kv, &kv, None).expect("forward");
        assert_eq!(y.dims(), &[b, q_len, hidden]);
        let kv_all = input(&[b, heads, past + q_len, head_dim]);
        attention
            .forward_contiguous(&xs, &kv_all, &kv_all)
            .expect("forward_contiguous");
        let merged = input(&[b, heads, q_len, head_dim]).transpose(1, 2).unwrap();
        let reshaped = merged.reshape((b, q_len, hidden)).unwrap();
        assert_eq!(
            shares_storage(&merged, &reshaped),
            q_len == 1,
            "q_len {q_len}: the reshape copies exactly when q_len >= 2"
        );
    }
    attention.clear_kv_cache();
}

/// `candle_channels_tokens.rs`: every function runs and gives the map back; the token
/// tensor permuted back to (b, c, h·w) is not contiguous, so its reshape copies.
#[test]
fn channels_tokens_fixture_runs_and_its_reshapes_copy() {
    use candle_channels_tokens::*;
    let (b, c, h, w, hidden) = (2, 3, 4, 5, 6);
    let vb = candle_nn::VarBuilder::zeros(DType::F32, &Device::Cpu);
    let ffn = MixFfn::new(c, hidden, vb).expect("MixFfn::new");
    let x = input(&[b, c, h, w]);
    assert_eq!(
        ffn.norm_tokens(&x).expect("norm_tokens").dims(),
        &[b, c, h, w]
    );
    assert_eq!(ffn.forward(&x).expect("forward").dims(), &[b, hidden, h, w]);
    let tokens = input(&[b, h * w, c]);
    let restored = ffn
        .restore(&tokens, &input(&[b, hidden, h, w]))
        .expect("restore");
    assert_eq!(restored.dims(), &[b, hidden, h, w]);
    ffn.forward_contiguous(&x).expect("forward_contiguous");
    let back = input(&[b, h * w, hidden]).permute((0, 2, 1)).unwrap();
    assert!(!back.is_contiguous());
    let map = back.reshape((b, hidden, h, w)).unwrap();
    assert!(!shares_storage(&back, &map), "the reshape copied");
}

/// `candle_rotary_halves.rs`: both functions run on a head twice the rotated width; the
/// rotated part, narrowed out of the head, is not contiguous and its reshape copies.
#[test]
fn rotary_halves_fixture_runs_and_its_narrowed_part_is_copied() {
    use candle_rotary_halves::*;
    let (s, b, np, rot_dim) = (3, 2, 2, 4);
    let xs = input(&[s, b, np, 2 * rot_dim]);
    let cache = input(&[s, rot_dim / 2, 2]);
    let out = rotate_pairs(&xs, &cache).expect("rotate_pairs");
    assert_eq!(out.dims(), &[s, b, np, 2 * rot_dim]);
    rotate_pairs_contiguous(&xs, &cache).expect("rotate_pairs_contiguous");
    let xs_rot = xs.narrow(3, 0, rot_dim).unwrap();
    assert!(!xs_rot.is_contiguous());
    let pairs = xs_rot.reshape((s, b, np, rot_dim / 2, 2)).unwrap();
    assert!(!shares_storage(&xs_rot, &pairs), "the reshape copied");
}

/// `candle_branch_sizes.rs`: each branch runs on the fused width it sizes; the multi-query
/// query, narrowed out of (b, t, h + 2, d), is not contiguous and its reshape copies, the
/// other branch's is contiguous.
#[test]
fn branch_sizes_fixture_runs_and_only_the_multi_query_reshape_copies() {
    use candle_branch_sizes::*;
    let (b, t, h, d) = (2, 3, 2, 4);
    let out = split_query(&input(&[b, t, 3 * h * d]), false, h, d).expect("split_query");
    assert_eq!(out.dims(), &[b, t, h * d]);
    let out = split_query(&input(&[b, t, (h + 2) * d]), true, h, d).expect("split_query mq");
    assert_eq!(out.dims(), &[b, t, h * d]);
    let fused = input(&[b, t, (h + 2) * d])
        .reshape((b, t, h + 2, d))
        .unwrap();
    let q = fused.narrow(2, 0, h).unwrap();
    assert!(!q.is_contiguous());
    let r = q.reshape((b, t, h * d)).unwrap();
    assert!(!shares_storage(&q, &r), "the reshape copied");
}

/// `candle_cat_unknown_part.rs`: with the caller's transposed query the part passed
/// through is neither contiguous nor row-major outside the last dim, so candle's `cat`
/// returns a non-contiguous tensor and the unmarked `contiguous()` copies it; with both
/// parts copied first, `cat` writes a row-major tensor and the marked one returns it.
#[test]
fn cat_unknown_part_fixture_copies_only_where_unmarked() {
    use candle_cat_unknown_part::*;
    let (b, heads, t, head_dim, rotary_dim) = (1, 2, 3, 8, 4);
    let rotary = RotaryEmbedding::new(rotary_dim, 16, &Device::Cpu).expect("new");
    let q = input(&[b, t, heads, head_dim]).transpose(1, 2).unwrap();
    let xs_pass = q
        .i((0, .., .., rotary_dim..))
        .unwrap()
        .unsqueeze(0)
        .unwrap();
    let xs_rot = q
        .i((0, .., .., ..rotary_dim))
        .unwrap()
        .unsqueeze(0)
        .unwrap();
    let glued = Tensor::cat(&[&xs_rot.contiguous().unwrap(), &xs_pass], D::Minus1).unwrap();
    assert!(!glued.is_contiguous(), "cat takes the transposing path");
    let copied = glued.contiguous().unwrap();
    assert!(
        !shares_storage(&glued, &copied),
        "the unmarked contiguous() copies"
    );
    assert_eq!(
        rotary.apply(&q, 0).expect("apply").dims(),
        &[b, heads, t, head_dim]
    );
    let xs_rot = q
        .i((.., .., .., ..rotary_dim))
        .unwrap()
        .contiguous()
        .unwrap();
    let xs_pass = q
        .i((.., .., .., rotary_dim..))
        .unwrap()
        .contiguous()
        .unwrap();
    let glued = Tensor::cat(&[&xs_rot, &xs_pass], D::Minus1).unwrap();
    assert!(glued.is_contiguous());
    assert!(
        shares_storage(&glued, &glued.contiguous().unwrap()),
        "the marked one does not"
    );
    assert_eq!(
        rotary.apply_copied(&q, 0).expect("apply_copied").dims(),
        &[b, heads, t, head_dim]
    );
}

/// `candle_size_test_branch.rs`: the output reshape copies for a prompt (seq_len ≥ 2, the
/// branch that masks) and not for one token, where the transposed output is contiguous by
/// candle's test (the size-1 dim's stride is ignored).
#[test]
fn size_test_branch_fixture_copies_only_when_the_test_is_false() {
    use candle_size_test_branch::*;
    let (b, heads, head_dim) = (2, 3, 4);
    let vb = candle_nn::VarBuilder::zeros(DType::F32, &Device::Cpu);
    let attention = Attention::new(heads * head_dim, heads, vb).expect("Attention::new");
    for seq_len in [1, 5] {
        let out = attention
            .forward(&input(&[b, seq_len, heads * head_dim]))
            .expect("forward");
        assert_eq!(out.dims(), &[b, seq_len, heads * head_dim]);
        let y = input(&[b, heads, seq_len, head_dim])
            .transpose(1, 2)
            .unwrap();
        let r = y.reshape(&[b, seq_len, heads * head_dim]).unwrap();
        assert_eq!(shares_storage(&y, &r), seq_len == 1, "seq_len {seq_len}");
    }
}
