//! Op knowledge: which library calls exist, how their arguments bind, and what each does to
//! tensor layouts. The knowledge is *data* in `rules/*.toml`; this module loads it into an
//! [`OpTable`], [`bind`]s a call's arguments, and [`apply`]s the op's *transfer function*.
//!
//! ```text
//! OpTable::torch().method("transpose")  →  &OpSpec { kind: Transpose, params, … }
//! bind(spec, Some(x), [1, 2], [])        →  BoundArgs { input: x, dim0: 1, dim1: 2 }
//! apply(spec, &bound, &decider)          →  Transfer { result: Tensor(layout), copies: No, … }
//! ```
//!
//! # The table format (`rules/torch.toml`, `rules/einops.toml`, later `candle.toml`, `tch.toml`)
//!
//! ```toml
//! [table]
//! library = "torch"
//! semantics = "torch"                      # default conventions of the entries: torch | candle
//! method_namespaces = ["torch.Tensor"]     # torch.Tensor.view(x, …) finds the method `view`
//! [table.namespaces]
//! F = "torch.nn.functional"                # F.softmax ≡ torch.nn.functional.softmax
//!
//! [[op]]
//! name = "transpose"                       # unique in the table
//! kind = "transpose"                       # the transfer function (see `OpKind`)
//! methods = ["transpose", "swapdims"]      # x.transpose(…)
//! functions = ["torch.transpose"]          # dotted function spellings
//! attributes = []                          # property spellings: x.T, x.shape
//! params = ["input: tensor", "dim0: dim", "dim1: dim"]
//! receiver = "input"                       # optional: the param a method's receiver binds
//! variant = "…"                            # optional kind-specific option (`OpKind::variants`)
//! semantics = "candle"                     # optional per-entry override
//! requires_contiguous = true               # optional: the op rejects non-contiguous input
//! tags = ["attention"]                     # optional labels lints may select ops by
//! doc = "…"
//!
//! [[module]]                               # nn.Module-like classes
//! name = "Linear"
//! classes = ["torch.nn.Linear"]
//! init = ["in_features: int", "out_features: int", "bias: bool = True"]
//! forward = ["input: tensor"]
//! kind = "linear_module"                   # what calling the module does; it may read init params
//! method = "append"                        # optional: the call is `obj.append(…)` with every
//!                                          # `forward` param positional (candle-nn's KvCache)
//! ```
//!
//! Parameters are written like Python signatures: `"name|alias: type? = default"`,
//! `"*size: shape"` for varargs (`view(2, 3)` ≡ `view((2, 3))`), `"**axes_lengths: int"`
//! for extra keywords, and a bare `"*"` before keyword-only parameters (see [`schema`] for
//! the types). The transfer function of a kind reads its arguments *by parameter name*; the
//! loader checks every entry declares the names its kind reads ([`OpKind::required_params`]),
//! that kinds and variants exist, that spellings are unique, and reports the file, entry and
//! field of any mistake. A unit test loads every table.
//!
//! # Adding an op
//! * Same behaviour as an existing kind (`torch.moveaxis` is `movedim`, `F.silu` is an
//!   element-wise op): add the spelling to an entry, or a new `[[op]]` entry with that kind
//!   and the parameter names the kind reads. Nothing else.
//! * New behaviour: add a variant to [`OpKind`] (in `kind.rs`, with the parameters it
//!   reads), one transfer function in `kinds/`, and one arm in [`apply`]. The compiler
//!   insists on the arm; the table test insists the table and the kind agree.
//!
//! Transfer functions call the stride algebra in `crate::layout`; they never duplicate it.
//! Every layout fact encoded here comes from `docs/stride-semantics.md` or was
//! observed on real torch 2.15 (the entries' `doc` strings say which, where surprising).

pub mod bind;
pub mod einops;
pub mod helpers;
pub mod kind;
mod kinds;
pub use kinds::fresh::einsum_equation;
pub mod layer_shape;
pub mod schema;
pub mod shape_rules;
pub mod table;
pub mod transfer;
pub mod value;

pub use crate::layout::{Decider, Layout, Size, Tri};
pub use bind::{bind, bind_module_call, bind_module_init, BindError, BoundArgs};
pub use kind::{OpKind, Semantics};
pub use schema::{DefaultValue, ParamSpec, ParamType, Variadic};
pub use table::{
    ContractCheck, ContractClause, InputDims, InputSize, ModuleSpec, OpSpec, OpTable, TableError,
};
pub use transfer::{OpError, OpErrorKind, OpResult, Transfer};
pub use value::{ArgValue, SliceArg};

use kinds::einops::Flavor;
use kinds::{
    creation, elementwise, fresh, geometry, index, join, matmul, query, reduction, reshape, split,
};

/// Run the transfer function of `spec`'s kind on bound arguments.
///
/// Never panics and never guesses: a comparison the decider cannot settle yields
/// [`OpResult::Unknown`] (or an unknown tensor), never an error.
pub fn apply<S: Size>(spec: &OpSpec, args: &BoundArgs<S>, d: &Decider) -> Transfer<S> {
    if spec.requires_contiguous {
        if let Some(early) = reject_non_contiguous(spec, args, d) {
            return early;
        }
    }
    if spec.semantics == Semantics::Candle {
        if let Some(outcome) = kinds::candle::transfer(spec, args, d) {
            return outcome.unwrap_or_else(|early| early);
        }
    }
    let outcome = match spec.kind {
        OpKind::View => reshape::view(args, d),
        OpKind::Reshape => reshape::reshape(args, d),
        OpKind::Flatten => reshape::flatten(args, d),
        OpKind::Unflatten => reshape::unflatten(args, d),
        OpKind::Ravel => reshape::ravel(args, d),
        OpKind::Contiguous => reshape::contiguous(args, d),
        OpKind::Clone => reshape::clone(args, d),
        OpKind::Convert => reshape::convert(args, d),
        OpKind::Alias => reshape::alias(args),
        OpKind::InPlace => reshape::in_place(spec, args, d),
        OpKind::Transpose => geometry::transpose(args),
        OpKind::MatrixTranspose => geometry::matrix_transpose(args),
        OpKind::ReverseDims => geometry::reverse_dims(args),
        OpKind::BatchTranspose => geometry::batch_transpose(spec, args),
        OpKind::Permute => geometry::permute(args),
        OpKind::Movedim => geometry::movedim(args),
        OpKind::Squeeze => geometry::squeeze(args, d),
        OpKind::Unsqueeze => geometry::unsqueeze(args),
        OpKind::ViewAsReal => geometry::view_as_real(args),
        OpKind::Expand => geometry::expand(args, d),
        OpKind::Narrow => geometry::narrow(args, d),
        OpKind::Select => geometry::select(args, d),
        OpKind::Split => split::split(args, d),
        OpKind::Chunk => split::chunk(args, d),
        OpKind::TensorSplit => split::tensor_split(args, d),
        OpKind::Unbind => split::unbind(args, d),
        OpKind::Meshgrid => geometry::meshgrid(args, d),
        OpKind::EagerModeTest => Ok(Transfer::value(ArgValue::Bool(false))),
        OpKind::Diagonal => geometry::diagonal(args, d),
        OpKind::Unfold => geometry::unfold(args, d),
        OpKind::AsStrided => geometry::as_strided(args, d),
        OpKind::Index => index::index(args, spec.variant.as_deref() == Some("checked_bounds"), d),
        OpKind::Elementwise => elementwise::elementwise(spec, args, d),
        OpKind::Dropout => elementwise::dropout(spec, args, d),
        OpKind::ContiguousResult => fresh::contiguous_result(spec, args, d),
        OpKind::SuggestedFormatResult => fresh::suggested_format_result(spec, args, d),
        OpKind::Reduction => reduction::reduction(args),
        OpKind::ReductionWithIndices => reduction::reduction_with_indices(args, d),
        OpKind::Topk => reduction::topk(args),
        OpKind::Matmul => matmul::matmul(args, d),
        OpKind::Mm => matmul::mm(args, d),
        OpKind::Bmm => matmul::bmm(args, d),
        OpKind::Addmm => matmul::addmm(args, d),
        OpKind::Baddbmm => matmul::baddbmm(args, d),
        OpKind::Linear => matmul::linear(args, d),
        OpKind::LinearModule => matmul::linear_module(args, d),
        OpKind::Recurrent => matmul::recurrent(args),
        OpKind::Embedding => matmul::embedding(args),
        OpKind::EmbeddingModule => matmul::embedding_module(args),
        OpKind::UnknownLayout => fresh::unknown_layout(spec),
        // The shape is not modelled; the analysis knows the output is contiguous when the
        // input is (it mints the output's sizes).
        OpKind::FormatFollowing => Ok(Transfer::unknown_tensor()),
        OpKind::Einsum => fresh::einsum(args, d),
        OpKind::EinopsEinsum => fresh::einops_einsum(args, d),
        OpKind::Sdpa => Ok(Transfer::unknown_tensor()),
        OpKind::Cat => join::cat(args, d),
        OpKind::Stack => join::stack(args, d),
        OpKind::Hstack => join::hstack(args, d),
        OpKind::Vstack => join::vstack(args, d),
        OpKind::Repeat => join::repeat(args),
        OpKind::Tile => join::tile(args),
        OpKind::RepeatInterleave => join::repeat_interleave(args),
        OpKind::IndexSelect => join::index_select(args),
        OpKind::Gather => join::gather(args),
        OpKind::Create => creation::create(args),
        OpKind::CreateLike => creation::create_like(args, d),
        OpKind::Arange => creation::arange(args),
        OpKind::Linspace => creation::linspace(args),
        OpKind::Eye => creation::eye(args),
        OpKind::TensorLiteral => creation::tensor_literal(args),
        OpKind::Size => query::size(args),
        OpKind::Ndim => query::ndim(args),
        OpKind::Numel => query::numel(args),
        OpKind::Stride => query::stride(args),
        OpKind::IsContiguous => query::is_contiguous(args, d),
        OpKind::Len => query::len(args),
        OpKind::EinopsRearrange => kinds::einops::einops(Flavor::Rearrange, args, d),
        OpKind::EinopsReduce => kinds::einops::einops(Flavor::Reduce, args, d),
        OpKind::EinopsRepeat => kinds::einops::einops(Flavor::Repeat, args, d),
    };
    outcome.unwrap_or_else(|early| early)
}

/// For an einops op: the input dims whose keyword lengths it checks and the decider cannot,
/// as `(the dim's size, the product of the lengths, the check)`; empty otherwise.
pub fn einops_undecided_groups<S: Size>(
    spec: &OpSpec,
    args: &BoundArgs<S>,
    d: &Decider,
) -> Vec<(S, S, einops::GroupCheck)> {
    let flavor = match spec.kind {
        OpKind::EinopsRearrange => Flavor::Rearrange,
        OpKind::EinopsReduce => Flavor::Reduce,
        OpKind::EinopsRepeat => Flavor::Repeat,
        _ => return Vec::new(),
    };
    kinds::einops::undecided_groups(flavor, args, d)
}

/// Bind a module constructor call (`nn.Linear(768, 3072)`); same as [`bind_module_init`].
pub fn bind_module<S: Size>(
    module: &ModuleSpec,
    positional: Vec<ArgValue<S>>,
    keywords: Vec<(String, ArgValue<S>)>,
) -> Result<BoundArgs<S>, BindError> {
    bind_module_init(module, positional, keywords)
}

/// Call a constructed module on one input tensor (`self.fc(x)`): binds `input` as the
/// call's single positional argument next to the constructor's `init` arguments, then
/// [`apply`]s the module's kind. A call that does not bind is an unknown outcome.
pub fn apply_module<S: Size>(
    module: &ModuleSpec,
    init: &BoundArgs<S>,
    input: ArgValue<S>,
    d: &Decider,
) -> Transfer<S> {
    match bind_module_call(module, init, vec![input], Vec::new()) {
        Ok(bound) => apply(&module.call, &bound, d),
        Err(_) => Transfer::unknown(),
    }
}

/// The shape argument of a `view` / `reshape` / `expand` call as written (with any `-1`
/// unresolved), or the `other` tensor's shape for the `*_as` forms. `None` for other kinds
/// or when the argument is not fully known.
pub fn target_shape<S: Size>(spec: &OpSpec, args: &BoundArgs<S>) -> Option<Vec<S>> {
    let params: &[&str] = match spec.kind {
        OpKind::View | OpKind::Expand => &["size"],
        OpKind::Reshape => &["shape"],
        _ => return None,
    };
    kinds::target_shape(args, params).ok()
}

/// `requires_contiguous` ops (candle's `softmax_last_dim`, `rope`, …) fail when a tensor
/// argument is not contiguous by their library's test: `rope` checks `xs`, `cos` and `sin`,
/// `rms_norm` its `alpha` too (spec §10.4). Any certainly non-contiguous one is a failure;
/// an undecidable `input` makes the outcome undecidable.
fn reject_non_contiguous<S: Size>(
    spec: &OpSpec,
    args: &BoundArgs<S>,
    d: &Decider,
) -> Option<Transfer<S>> {
    if spec.contract.iter().any(|c| c.check.is_tensor_check()) {
        let (rejections, input_undecided) =
            tensor_rejections(spec, |name| args.get(name).and_then(ArgValue::as_layout), d);
        if let Some(first) = rejections.first() {
            return Some(Transfer::error(
                OpErrorKind::NonContiguousInput,
                format!(
                    "{}: {} has to be {}",
                    spec.name,
                    first.param,
                    first.clause.check.requirement(),
                ),
            ));
        }
        return input_undecided.then(Transfer::unknown);
    }
    let contiguous = |layout: &Layout<S>| spec.is_contiguous(layout, d);
    let tensors = spec.params.iter().filter(|p| {
        p.variadic == Variadic::No && matches!(p.ty, ParamType::Tensor | ParamType::TensorOrScalar)
    });
    let mut input_undecided = false;
    for param in tensors {
        let Some(layout) = args.get(&param.name).and_then(ArgValue::as_layout) else {
            continue;
        };
        match contiguous(layout) {
            Tri::Yes => {}
            Tri::No => {
                return Some(Transfer::error(
                    OpErrorKind::NonContiguousInput,
                    format!("{}: {} has to be contiguous", spec.name, param.name),
                ))
            }
            Tri::Unknown => input_undecided |= param.answers_to("input"),
        }
    }
    input_undecided.then(Transfer::unknown)
}

/// One backend's refusal of a call by its contract (`rules/candle.toml`): `param` fails the
/// row `clause`, which `backend` checks.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection<'s> {
    pub backend: crate::layout::CandleBackend,
    pub param: &'s str,
    pub clause: &'s ContractClause,
}

/// The rows of `spec`'s contract that check named tensors (contiguity, a unit last
/// stride), decided on the layouts `layout_of` gives by parameter name: every backend that
/// certainly rejects the call and for which tensor, in the contract's order; and whether
/// an undecidable `input` leaves the answer open.
pub fn tensor_rejections<'s, 'l, S: Size + 'l>(
    spec: &'s OpSpec,
    layout_of: impl Fn(&str) -> Option<&'l Layout<S>>,
    d: &Decider,
) -> (Vec<Rejection<'s>>, bool) {
    let mut rejections = Vec::new();
    let mut input_undecided = false;
    for clause in spec
        .contract
        .iter()
        .filter(|c| c.check.is_tensor_check() && c.check.rejects())
    {
        for param in &clause.params {
            let Some(layout) = layout_of(param) else {
                continue;
            };
            let holds = match clause.check {
                ContractCheck::LastDimStride1 => match layout.strides.last() {
                    Some(stride) => d.eq_lit(stride, 1),
                    None => Tri::Yes,
                },
                _ => crate::layout::candle_is_contiguous(layout, d),
            };
            match holds {
                Tri::Yes => {}
                Tri::No => {
                    for &backend in &clause.backends {
                        if !rejections
                            .iter()
                            .any(|r: &Rejection| r.backend == backend && r.param == param)
                        {
                            rejections.push(Rejection {
                                backend,
                                param,
                                clause,
                            });
                        }
                    }
                }
                Tri::Unknown => input_undecided |= param == "input",
            }
        }
    }
    (rejections, input_undecided)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Every kind is used by some table entry (so none is dead), and every kind's transfer
    /// function runs on all-unknown arguments without panicking.
    #[test]
    fn every_kind_is_reachable_and_total() {
        let table = OpTable::torch();
        let used: HashSet<OpKind> = table
            .all()
            .iter()
            .map(|o| o.kind)
            .chain(table.modules().iter().map(|m| m.call.kind))
            .collect();
        for kind in OpKind::ALL {
            assert!(
                used.contains(kind),
                "kind `{kind}` is used by no table entry"
            );
        }
        for spec in table
            .all()
            .iter()
            .chain(table.modules().iter().map(|m| &m.call))
        {
            let required = |p: &&ParamSpec| {
                p.default.is_none()
                    && !p.optional
                    && !p.keyword_only
                    && p.variadic != Variadic::Keywords
            };
            let positional: Vec<ArgValue<i64>> = spec
                .params
                .iter()
                .filter(required)
                .map(|_| ArgValue::Unknown)
                .collect();
            let bound = bind(spec, None, positional, vec![])
                .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
            let t = apply(spec, &bound, &Decider::concrete());
            assert!(
                !matches!(t.result, OpResult::Error(_)),
                "{}: unknown arguments cannot prove an error",
                spec.name
            );
        }
    }

    /// The spellings the oracle's recorded chains use resolve as methods.
    #[test]
    fn torch_method_names_resolve() {
        let table = OpTable::torch();
        for m in [
            "view",
            "view_as",
            "reshape",
            "reshape_as",
            "flatten",
            "unflatten",
            "ravel",
            "contiguous",
            "clone",
            "to",
            "float",
            "half",
            "double",
            "bfloat16",
            "type_as",
            "transpose",
            "swapaxes",
            "swapdims",
            "t",
            "permute",
            "movedim",
            "moveaxis",
            "narrow",
            "select",
            "split",
            "split_with_sizes",
            "chunk",
            "tensor_split",
            "unbind",
            "unsqueeze",
            "squeeze",
            "expand",
            "expand_as",
            "broadcast_to",
            "diagonal",
            "unfold",
            "detach",
            "exp",
            "log",
            "relu",
            "sigmoid",
            "tanh",
            "neg",
            "abs",
            "sqrt",
            "rsqrt",
            "sin",
            "cos",
            "pow",
            "masked_fill",
            "add",
            "sub",
            "mul",
            "div",
            "where",
            "maximum",
            "minimum",
            "softmax",
            "log_softmax",
            "sum",
            "mean",
            "amax",
            "max",
            "var",
            "std",
            "norm",
            "prod",
            "argmax",
            "matmul",
            "bmm",
            "mm",
            "repeat",
            "repeat_interleave",
            "tile",
            "index_select",
            "gather",
            "size",
            "dim",
            "numel",
            "__getitem__",
            "__add__",
            "__radd__",
            "__sub__",
            "__rsub__",
            "__mul__",
            "__rmul__",
            "__truediv__",
            "__rtruediv__",
            "__matmul__",
            "__pow__",
            "__neg__",
            "new_zeros",
            "new_ones",
            "new_empty",
            "adjoint",
            "stride",
            "is_contiguous",
        ] {
            assert!(
                table.method(m).is_some(),
                "method `{m}` is not in the torch table"
            );
        }
        for a in ["T", "mT", "mH", "shape", "ndim", "data"] {
            assert!(
                table.attribute(a).is_some(),
                "attribute `{a}` is not in the torch table"
            );
        }
        for f in [
            "torch.transpose",
            "torch.swapaxes",
            "F.softmax",
            "torch.nn.functional.softmax",
            "torch.softmax",
            "nn.functional.gelu",
            "torch.cat",
            "torch.concat",
            "torch.concatenate",
            "torch.stack",
            "torch.hstack",
            "torch.einsum",
            "F.scaled_dot_product_attention",
            "F.conv2d",
            "F.interpolate",
            "F.pad",
            "torch.randn",
            "torch.zeros_like",
            "torch.arange",
            "torch.linspace",
            "torch.tensor",
            "einops.rearrange",
            "einops.reduce",
            "einops.repeat",
            "F.linear",
            "torch.baddbmm",
            "torch.addmm",
            "F.dropout",
            "F.layer_norm",
            "F.rms_norm",
            "F.group_norm",
            "F.normalize",
            "torch.movedim",
            "torch.moveaxis",
            "torch.Tensor.view",
        ] {
            assert!(
                table.function(f).is_some(),
                "function `{f}` is not in the torch table"
            );
        }
        for m in [
            "nn.Linear",
            "torch.nn.LayerNorm",
            "nn.RMSNorm",
            "nn.GroupNorm",
            "nn.BatchNorm1d",
            "nn.BatchNorm2d",
            "nn.Dropout",
            "nn.GELU",
            "nn.ReLU",
            "nn.SiLU",
            "nn.Identity",
            "nn.Embedding",
            "nn.Conv2d",
            "nn.MultiheadAttention",
            "nn.Softmax",
            "nn.Flatten",
            "Rearrange",
            "Reduce",
            "einops.layers.torch.Rearrange",
        ] {
            assert!(
                table.module(m).is_some(),
                "module `{m}` is not in the torch table"
            );
        }
    }

    /// nanoGPT's attention over symbolic sizes: splitting `C` into heads is a view; after
    /// `y = att @ v` the head merge `y.transpose(1, 2).view(B, T, C)` fails for every size
    /// (spec §3, conformance row 80), `.contiguous()` copies first, `reshape` copies silently.
    #[test]
    fn symbolic_attention_head_split_and_merge() {
        use crate::layout::{Assumptions, Dim};
        let assumptions = Assumptions::default();
        let d = Decider::new(&assumptions);
        let table = OpTable::torch();
        // A literal head size: with `hs = C // n_head` the comparisons involve a quotient
        // (`T·C/n_head` vs `C/n_head`) that the symbolic algebra leaves undecided.
        let (b, t, nh, hs) = (
            Dim::sym("B"),
            Dim::sym("T"),
            Dim::sym("n_head"),
            Dim::lit(64),
        );
        let c = nh.mul(&hs);
        let call = |name: &str, input: Layout<Dim>, args: Vec<ArgValue<Dim>>| {
            let spec = table.method(name).unwrap();
            apply(
                spec,
                &bind(spec, Some(ArgValue::tensor(input)), args, vec![]).unwrap(),
                &d,
            )
        };
        let int = |v: &Dim| ArgValue::Int(v.clone());
        let one_two = || vec![ArgValue::Int(Dim::lit(1)), ArgValue::Int(Dim::lit(2))];

        let x = Layout::contiguous(vec![b.clone(), t.clone(), c.clone()]);
        let heads = call("view", x, vec![int(&b), int(&t), int(&nh), int(&hs)]);
        let q = call(
            "transpose",
            heads.layout().cloned().expect("a view"),
            one_two(),
        );
        let q = q.layout().cloned().unwrap();
        assert_eq!(q.shape, vec![b.clone(), nh.clone(), t.clone(), hs.clone()]);
        // att = q @ k.transpose(-2, -1); y = att @ v: fresh contiguous tensors.
        let k_t = Layout::contiguous(vec![b.clone(), nh.clone(), hs.clone(), t.clone()]);
        let att = call("__matmul__", q.clone(), vec![ArgValue::tensor(k_t)]);
        let v = ArgValue::tensor(Layout::contiguous(q.shape.clone()));
        let y = call("__matmul__", att.layout().cloned().unwrap(), vec![v]);
        let y = y.layout().cloned().unwrap();
        assert_eq!(y, Layout::contiguous(q.shape.clone()));

        let back = call("transpose", y, one_two()).layout().cloned().unwrap();
        let merge = vec![int(&b), int(&t), int(&c)];
        let failed = call("view", back.clone(), merge.clone());
        assert_eq!(
            failed.op_error().map(|e| e.kind),
            Some(OpErrorKind::ViewIncompatible)
        );
        let copied = call("reshape", back.clone(), merge.clone());
        let merged_layout = Layout::contiguous(vec![b, t, c]);
        assert_eq!(
            (copied.layout(), copied.copies),
            (Some(&merged_layout), Tri::Yes)
        );
        let fixed = call("contiguous", back, vec![]);
        assert_eq!(fixed.copies, Tri::Yes);
        let merged = call("view", fixed.layout().cloned().unwrap(), merge);
        assert_eq!(merged.layout(), Some(&merged_layout));
        assert!(
            !d.used().is_empty(),
            "the answers rest on recorded assumptions"
        );
    }

    #[test]
    fn requires_contiguous_rejects_non_contiguous_inputs() {
        let table = OpTable::from_sources(&[(
            "rules/test.toml",
            "[table]\nlibrary = 't'\n[[op]]\nname = 'softmax_last_dim'\nkind = 'contiguous_result'\nfunctions = ['softmax_last_dim']\nrequires_contiguous = true\nparams = ['input: tensor']\n",
        )])
        .unwrap();
        let spec = table.function("softmax_last_dim").unwrap();
        let run = |l: Layout<i64>| {
            apply(
                spec,
                &bind(spec, None, vec![ArgValue::tensor(l)], vec![]).unwrap(),
                &Decider::concrete(),
            )
        };
        assert!(run(Layout::contiguous(vec![2, 3])).layout().is_some());
        let e = run(Layout::new(vec![3, 2], vec![1, 3], 0));
        assert_eq!(
            e.op_error().map(|e| e.message.as_str()),
            Some("softmax_last_dim: input has to be contiguous")
        );
    }
}
