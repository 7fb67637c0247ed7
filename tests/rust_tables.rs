//! The candle and tch-rs op tables (`rules/candle.toml`, `rules/tch.toml`) load, spell the
//! ops the Rust frontend produces, and carry the facts of spec §9–§10 that do not depend
//! on a kind's candle variant: which ops reject non-contiguous inputs (and with which
//! message), which copies are tagged for SL002, and that tch-rs's `view` fails exactly
//! like PyTorch's.

use stridelint::layout::{Decider, Layout};
use stridelint::ops::{apply, bind, ArgValue, OpErrorKind, OpKind, OpTable, Semantics};

const CANDLE: (&str, &str) = ("rules/candle.toml", include_str!("../rules/candle.toml"));
const TCH: (&str, &str) = ("rules/tch.toml", include_str!("../rules/tch.toml"));

fn candle() -> OpTable {
    OpTable::from_sources(&[CANDLE]).unwrap_or_else(|e| panic!("{e}"))
}

fn tch() -> OpTable {
    OpTable::from_sources(&[TCH]).unwrap_or_else(|e| panic!("{e}"))
}

/// A contiguous (2, 3, 4, 5) tensor after `transpose(1, 2)`: (2, 4, 3, 5), not contiguous.
fn transposed() -> Layout<i64> {
    Layout::new(vec![2, 4, 3, 5], vec![60, 5, 20, 1], 0)
}

#[test]
fn both_tables_load() {
    let candle = candle();
    let tch = tch();
    assert_eq!(candle.libraries(), ["candle"]);
    assert_eq!(tch.libraries(), ["tch"]);
    assert!(candle.all().len() > 30 && tch.all().len() > 30);
}

#[test]
fn candle_spellings_the_frontend_produces_resolve() {
    let table = candle();
    for method in [
        "reshape",
        "flatten",
        "flatten_from",
        "flatten_to",
        "flatten_all",
        "contiguous",
        "transpose",
        "t",
        "permute",
        "narrow",
        "squeeze",
        "unsqueeze",
        "broadcast_as",
        "expand",
        "chunk",
        "i",
        "matmul",
        "broadcast_matmul",
        "broadcast_add",
        "add",
        "exp",
        "silu",
        "gelu",
        "affine",
        "to_dtype",
        "sum_keepdim",
        "max",
        "dims",
        "dims3",
        "dims4",
        "dim",
        "elem_count",
        "rank",
        "__mul__",
        "__floordiv__",
    ] {
        assert!(table.method(method).is_some(), "method `{method}`");
    }
    // Functions as written with the crate's usual paths and aliases.
    for function in [
        "candle_nn.ops.softmax_last_dim",
        "ops.softmax_last_dim",
        "candle_nn.ops.rms_norm",
        "candle_nn.ops.layer_norm",
        "candle_nn.rotary_emb.rope",
        "rotary_emb.rope_i",
        "candle_nn.rotary_emb.rope_thd",
        "Tensor.cat",
        "candle.Tensor.cat",
        "candle_core.Tensor.stack",
        "Tensor.zeros",
        "candle.Tensor.arange",
        "Tensor.reshape",
    ] {
        assert!(table.function(function).is_some(), "function `{function}`");
    }
    for module in [
        "candle_nn.linear",
        "candle_nn.linear_no_bias",
        "nn.Linear.new",
        "candle_nn.rms_norm",
        "candle_nn.layer_norm",
    ] {
        assert!(table.module(module).is_some(), "module `{module}`");
    }
    // The crate-level `rms_norm` is the module constructor; `ops::rms_norm` is the fused op.
    assert!(table.function("candle_nn.rms_norm").is_none());
}

#[test]
fn tch_spellings_the_frontend_produces_resolve() {
    let table = tch();
    for method in [
        "view",
        "f_view",
        "reshape",
        "f_reshape",
        "transpose",
        "permute",
        "contiguous",
        "flatten",
        "narrow",
        "tr",
        "mt",
        "unsqueeze",
        "squeeze_dim",
        "matmul",
        "softmax",
        "size",
        "size2",
        "size3",
        "size4",
        "i",
        "__add__",
    ] {
        assert!(table.method(method).is_some(), "method `{method}`");
    }
    for function in [
        "Tensor.cat",
        "tch.Tensor.stack",
        "Tensor.zeros",
        "Tensor.arange_start",
    ] {
        assert!(table.function(function).is_some(), "function `{function}`");
    }
    assert!(table.module("nn.linear").is_some());
    assert!(table
        .all()
        .iter()
        .all(|op| op.semantics == Semantics::Torch));
}

#[test]
fn candle_reshape_family_is_candle_semantics_and_tagged_as_hidden_copies() {
    let table = candle();
    for method in [
        "reshape",
        "flatten",
        "flatten_from",
        "flatten_to",
        "flatten_all",
    ] {
        let op = table.method(method).unwrap();
        assert_eq!(op.semantics, Semantics::Candle, "{method}");
        assert!(op.tags.iter().any(|t| t == "hidden-copy"), "{method}");
    }
    // `contiguous()` is explicit: never a *hidden* copy.
    assert!(table.method("contiguous").unwrap().tags.is_empty());
    assert!(table
        .method("matmul")
        .unwrap()
        .tags
        .iter()
        .any(|t| t == "candle-matmul"));
    // Every entry on PyTorch's rules says why in its doc.
    for op in table
        .all()
        .iter()
        .filter(|op| op.semantics == Semantics::Torch)
    {
        assert!(
            !op.doc.is_empty(),
            "`{}` uses PyTorch semantics without saying why",
            op.name
        );
    }
}

/// Spec §10.4: the fused candle-nn ops fail on a non-contiguous input and give a fresh
/// contiguous tensor of the input's shape otherwise.
#[test]
fn candle_fused_ops_require_contiguous_inputs() {
    let table = candle();
    let d = Decider::concrete();
    let other = || ArgValue::tensor(Layout::contiguous(vec![3i64, 5]));
    for (function, extra) in [
        ("candle_nn.ops.softmax_last_dim", vec![]),
        (
            "candle_nn.ops.rms_norm",
            vec![other(), ArgValue::Float(1e-5)],
        ),
        (
            "candle_nn.ops.layer_norm",
            vec![other(), other(), ArgValue::Float(1e-5)],
        ),
        ("candle_nn.rotary_emb.rope", vec![other(), other()]),
        ("candle_nn.rotary_emb.rope_i", vec![other(), other()]),
        ("candle_nn.rotary_emb.rope_thd", vec![other(), other()]),
    ] {
        let spec = table.function(function).unwrap();
        assert!(spec.requires_contiguous, "{function}");
        let run = |input: Layout<i64>| {
            let mut args = vec![ArgValue::tensor(input)];
            args.extend(extra.iter().cloned());
            apply(spec, &bind(spec, None, args, vec![]).unwrap(), &d)
        };
        let error = run(transposed());
        let error = error
            .op_error()
            .unwrap_or_else(|| panic!("{function} accepted a transposed input"));
        assert!(
            error.message.ends_with("input has to be contiguous"),
            "{function}: {}",
            error.message
        );
        let fine = run(Layout::contiguous(vec![2, 4, 3, 5]).with_offset(7));
        assert_eq!(
            fine.layout(),
            Some(&Layout::contiguous(vec![2, 4, 3, 5])),
            "{function}"
        );
    }
    // The composed softmax and the RmsNorm/LayerNorm modules accept any layout.
    assert!(
        !table
            .function("candle_nn.ops.softmax")
            .unwrap()
            .requires_contiguous
    );
    assert!(
        !table
            .module("candle_nn.rms_norm")
            .unwrap()
            .call
            .requires_contiguous
    );
}

/// Spec §9: tch-rs's `view` is libtorch's, so it fails on a transposed tensor whose merged
/// dims are not adjacent in memory, and `reshape` copies there.
#[test]
fn tch_view_and_reshape_follow_pytorch() {
    let table = tch();
    let d = Decider::concrete();
    let shape = ArgValue::ints(&[2, 4, 15]);
    let view = table.method("view").unwrap();
    let outcome = apply(
        view,
        &bind(
            view,
            Some(ArgValue::tensor(transposed())),
            vec![shape.clone()],
            vec![],
        )
        .unwrap(),
        &d,
    );
    assert_eq!(
        outcome.op_error().map(|e| e.kind),
        Some(OpErrorKind::ViewIncompatible)
    );
    let reshape = table.method("f_reshape").unwrap();
    assert_eq!(reshape.kind, OpKind::Reshape);
    let outcome = apply(
        reshape,
        &bind(
            reshape,
            Some(ArgValue::tensor(transposed())),
            vec![shape],
            vec![],
        )
        .unwrap(),
        &d,
    );
    assert!(outcome.copies.is_yes());
    assert_eq!(outcome.layout(), Some(&Layout::contiguous(vec![2, 4, 15])));
}
