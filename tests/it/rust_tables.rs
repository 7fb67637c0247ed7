//! The candle and tch-rs op tables (`rules/candle.toml`, `rules/tch.toml`) load, spell the
//! ops the Rust frontend produces, and carry the facts of spec §9–§10 that do not depend
//! on a kind's candle variant: which ops reject non-contiguous inputs (and with which
//! message), which copies are tagged for SL002, and that tch-rs's `view` fails exactly
//! like PyTorch's.

use stridelint::layout::{CandleBackend, Decider, Layout, MatmulRules};
use stridelint::ops::{
    apply, bind, ArgValue, ContractCheck, OpErrorKind, OpKind, OpTable, Semantics,
};

const CANDLE: (&str, &str) = ("rules/candle.toml", include_str!("../../rules/candle.toml"));
const TCH: (&str, &str) = ("rules/tch.toml", include_str!("../../rules/tch.toml"));

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

/// Spec §10.5: the contract rows. matmul's rows give each backend exactly the checks the
/// stride algebra's `MatmulRules::of` builds in (candle 0.11.1), `Linear`'s are matmul's
/// applied to what `Linear::forward` runs, every row cites `crate version path:line`, and
/// every op that checks tensors per backend is in the table with rows for the backends
/// the sources show.
#[test]
fn candle_contract_rows_agree_with_the_algebra_and_cite_the_sources() {
    let table = candle();
    let matmul = table.op("matmul").unwrap();
    let linear = &table.module("candle_nn.linear").unwrap().call;
    for backend in CandleBackend::ALL {
        let (rules, how) = matmul.matmul_rules(backend).unwrap();
        assert_eq!(
            (rules, how),
            (MatmulRules::of(backend), "matmul"),
            "{backend}"
        );
        let (rules, how) = linear.matmul_rules(backend).unwrap();
        assert_eq!(
            (rules, how),
            (MatmulRules::of(backend), "linear"),
            "{backend}"
        );
    }
    for spec in table
        .all()
        .iter()
        .chain(table.modules().iter().map(|m| &m.call))
    {
        for row in &spec.contract {
            let mut words = row.at.split_whitespace();
            let (krate, version, place) = (words.next(), words.next(), words.next());
            assert!(
                krate.is_some_and(|k| k.starts_with("candle-"))
                    && version == Some("0.11.1")
                    && place.is_some_and(|p| p.starts_with("src/") && p.contains(".rs:")),
                "{}: {}",
                spec.name,
                row.at
            );
        }
    }
    // The ops whose kernels check layouts, and the backends that reject a non-contiguous
    // tensor in each (index_select and gather: Metal reads a strided source).
    let rejecting = |name: &str, param: &str| -> Vec<CandleBackend> {
        let spec = table.op(name).unwrap_or_else(|| panic!("{name}"));
        let mut on: Vec<CandleBackend> = spec
            .contract
            .iter()
            .filter(|c| c.check == ContractCheck::Contiguous && c.params.iter().any(|p| p == param))
            .flat_map(|c| c.backends.iter().copied())
            .collect();
        on.sort();
        on
    };
    let mut cpu_cuda = vec![CandleBackend::Cuda, CandleBackend::Mkl, CandleBackend::Cpu];
    cpu_cuda.sort();
    let mut all = CandleBackend::ALL.to_vec();
    all.sort();
    assert_eq!(rejecting("index_select", "input"), cpu_cuda);
    assert_eq!(rejecting("index_select", "index"), [CandleBackend::Metal]);
    assert_eq!(rejecting("gather", "input"), cpu_cuda);
    for (op, param) in [
        ("gather", "index"),
        ("scatter", "index"),
        ("scatter", "source"),
        ("scatter_add", "source"),
        ("index_add", "source"),
        ("index_add", "index"),
        ("slice_set", "input"),
        ("slice_set", "src"),
        ("arg_sort_last_dim", "input"),
        ("sort_last_dim", "input"),
        ("softmax_last_dim", "input"),
        ("rms_norm", "alpha"),
        ("layer_norm", "beta"),
        ("rope", "cos"),
        ("rope_i", "input"),
        ("rope_thd", "sin"),
    ] {
        assert_eq!(rejecting(op, param), all, "{op} {param}");
    }
    // Scatter's self is copied before the kernel: it may have any layout.
    assert!(rejecting("scatter", "input").is_empty());
    let flash = table.op("flash_attn").unwrap();
    assert_eq!(flash.contract[0].backends, [CandleBackend::Cuda]);
    assert_eq!(flash.contract[0].check, ContractCheck::LastDimStride1);
    // No error, a cost: the norms' slow path, cat's transposed route, conv's kernel copy.
    for (name, check) in [
        ("cat", ContractCheck::SlowPath),
        ("conv", ContractCheck::SilentCopy),
        ("broadcast_matmul", ContractCheck::SilentCopy),
    ] {
        let spec = table.op(name).unwrap();
        assert!(
            spec.contract
                .iter()
                .all(|c| c.check == check && !c.check.rejects()),
            "{name}"
        );
        assert!(!spec.requires_contiguous, "{name}");
    }
    let norm = &table.module("candle_nn.rms_norm").unwrap().call;
    assert_eq!(norm.contract[0].check, ContractCheck::SlowPath);
}

/// A contract row that names an unknown backend, check or parameter is a table error.
#[test]
fn malformed_contract_rows_are_table_errors() {
    let entry = |row: &str| {
        format!(
            "[table]\nlibrary = 'candle'\nsemantics = 'candle'\n[[op]]\nname = 'k'\nkind = 'contiguous_result'\nmethods = ['k']\nparams = ['input: tensor']\ncontract = [{row}]\n"
        )
    };
    for (row, wanted) in [
        ("{ backends = ['tpu'], check = 'contiguous', params = ['input'], at = 'candle-core 0.11.1 src/x.rs:1' }", "unknown backend `tpu`"),
        ("{ backends = ['cpu'], check = 'fast', params = ['input'], at = 'candle-core 0.11.1 src/x.rs:1' }", "unknown check `fast`"),
        ("{ backends = ['cpu'], check = 'contiguous', params = ['ids'], at = 'candle-core 0.11.1 src/x.rs:1' }", "`ids` is not a parameter"),
        ("{ backends = ['cpu'], check = 'contiguous', at = 'candle-core 0.11.1 src/x.rs:1' }", "needs the tensors it checks"),
        ("{ backends = ['cpu'], check = 'contiguous', params = ['input'], at = 'x.rs:1' }", "expected `crate version path:line`"),
    ] {
        let text: &'static str = Box::leak(entry(row).into_boxed_str());
        let error = OpTable::from_sources(&[("t.toml", text)]).unwrap_err();
        assert!(error.to_string().contains(wanted), "{row}: {error}");
    }
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
