//! `fixtures/rust/candle_kv_cache_block.rs` compiled against candle-core / candle-nn and
//! run on real CPU tensors: every `// expect:` marker is confirmed by candle itself, and
//! every unmarked function runs (and, where its doc says so, stays a view).
//!
//! - SL005 `attend_with_cache`: `Tensor::cat` of a transposed value tensor along dim 2
//!   returns a non-contiguous tensor whose batch dims do not merge, and even the default
//!   CPU build's `matmul` rejects it (the batch rule applies on every backend, spec §10.3).
//! - SL002 `queries_by_index`: the indexed query is not contiguous, so its `reshape`
//!   allocates new storage (a view shares the input's storage).
//! - SL006 `qk_norm`: `ops::rms_norm` fails with "input has to be contiguous".

use candle_core::{DType, Device, IndexOp, Module, Tensor, D};

#[rustfmt::skip]
#[path = "../../fixtures/rust/candle_kv_cache_block.rs"]
mod candle_kv_cache_block;

use candle_kv_cache_block::*;

const HIDDEN: usize = 12;
const HEADS: usize = 3;
const HEAD_DIM: usize = HIDDEN / HEADS;

fn input(shape: &[usize]) -> Tensor {
    let numel: usize = shape.iter().product();
    Tensor::arange(0f32, numel as f32, &Device::Cpu)
        .and_then(|t| t.affine(1.0 / numel as f64, 0.0))
        .and_then(|t| t.reshape(shape))
        .expect("input")
}

fn block() -> Block {
    let cfg = Config {
        hidden_size: HIDDEN,
        num_heads: HEADS,
    };
    let vb = candle_nn::VarBuilder::zeros(DType::F32, &Device::Cpu);
    Block::new(&cfg, vb).expect("Block::new")
}

/// Does `b` use the same storage as `a` (a view), rather than a copy?
fn shares_storage(a: &Tensor, b: &Tensor) -> bool {
    let (sa, _) = a.storage_and_layout();
    let (sb, _) = b.storage_and_layout();
    std::ptr::eq(&*sa, &*sb)
}

#[test]
fn sl005_marker_cat_of_transposed_values_breaks_every_backends_matmul() {
    let (b, t, s) = (2, 5, 4);
    let xs = input(&[b, t, HIDDEN]);
    let cache = input(&[b, HEADS, s, HEAD_DIM]);
    let error = block()
        .attend_with_cache(&xs, &cache, &cache)
        .expect_err("the marked matmul fails even on the default CPU build");
    let text = error.to_string();
    assert!(text.contains("rhs"), "the rhs is rejected: {text}");
    let fixed = block()
        .attend_with_cache_contiguous(&xs, &cache, &cache)
        .expect("contiguous values");
    assert_eq!(fixed.dims(), [b, HEADS, t, HEAD_DIM]);
    // The layout the marker claims: (b, h, s + t, d) with strides (d, b·d, h·b·d, 1).
    let v = input(&[b, t, HEADS, HEAD_DIM]).transpose(1, 2).unwrap();
    let joined = Tensor::cat(&[&cache, &v], 2).unwrap();
    assert_eq!(joined.dims(), [b, HEADS, s + t, HEAD_DIM]);
    assert_eq!(
        joined.stride(),
        [HEAD_DIM, b * HEAD_DIM, HEADS * b * HEAD_DIM, 1]
    );
    assert!(!joined.is_contiguous());
}

#[test]
fn sl002_marker_indexed_query_reshape_copies_and_the_stacked_one_is_a_view() {
    let (b, t) = (2, 5);
    let model = block();
    let xs = input(&[b, t, HIDDEN]);
    assert_eq!(model.queries_by_index(&xs).unwrap().dims(), [b, t, HIDDEN]);
    // The marked reshape's input: (b, t, h, d) strides (3·h·d·t, 3·h·d, d, 1).
    let qkv = input(&[b, t, 3 * HIDDEN])
        .reshape((b, t, 3, HEADS, HEAD_DIM))
        .unwrap();
    let q = qkv.i((.., .., 0)).unwrap();
    assert_eq!(q.stride(), [3 * HIDDEN * t, 3 * HIDDEN, HEAD_DIM, 1]);
    assert!(!q.is_contiguous());
    assert!(!shares_storage(&q, &q.reshape((b, t, HIDDEN)).unwrap()));
    // The unmarked outer-dim split stays contiguous and its reshape is a view.
    let stacked = input(&[3, b, t, HIDDEN]);
    let q = stacked.i(0).unwrap();
    assert!(q.is_contiguous());
    assert!(shares_storage(
        &q,
        &q.reshape((b, t, HEADS, HEAD_DIM)).unwrap()
    ));
    assert_eq!(
        model.queries_from_stacked(&stacked).unwrap().dims(),
        [b, t, HEADS, HEAD_DIM]
    );
}

#[test]
fn sl006_marker_fused_rms_norm_rejects_the_narrowed_query() {
    let (b, t, d) = (2, 5, 4);
    let qk = input(&[b, t, 2 * d]);
    let weight = Tensor::ones(d, DType::F32, &Device::Cpu).unwrap();
    let error = qk_norm(&qk, &weight, &weight).expect_err("the fused kernel refuses");
    assert!(
        error.to_string().contains("has to be contiguous"),
        "{error}"
    );
    // The module form on the same narrowed layout falls back and works.
    let k = qk.narrow(D::Minus1, d, d).unwrap();
    assert!(!k.is_contiguous());
    let normed = candle_nn::RmsNorm::new(weight.clone(), 1e-6)
        .forward(&k)
        .expect("RmsNorm module");
    assert_eq!(normed.dims(), [b, t, d]);
}

#[test]
fn unmarked_rotate_half_gives_a_contiguous_tensor_the_fused_softmax_accepts() {
    let xs = input(&[2, 3, 5, 4]);
    let halves = Tensor::cat(
        &[
            &xs.narrow(D::Minus1, 2, 2).unwrap().neg().unwrap(),
            &xs.narrow(D::Minus1, 0, 2).unwrap(),
        ],
        D::Minus1,
    )
    .unwrap();
    assert!(halves.is_contiguous());
    assert_eq!(rotate_half_softmax(&xs).unwrap().dims(), [2, 3, 5, 4]);
}
