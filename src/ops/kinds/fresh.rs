//! Ops that allocate a fresh output of the input's shape: contiguous (softmax, layer_norm,
//! rms_norm, masked_fill, cumsum…; spec §6.2 and checks on torch 2.15), or in the input's
//! suggested memory format (batch_norm, group_norm), or of a layout the linter does not
//! model (conv, interpolate…); `einsum` where `layout::einsum` decides it.

use super::{tensor_arg, Outcome};
use crate::layout::dense::clone_with_format;
use crate::layout::elementwise::broadcast_shapes;
use crate::layout::{strides_for_format, wrap_dim, Decider, Layout, MemoryFormat, Size, Tri};
use crate::ops::bind::BoundArgs;
use crate::ops::shape_rules::torch_list;
use crate::ops::table::OpSpec;
use crate::ops::transfer::{OpErrorKind, Transfer};
use crate::ops::value::ArgValue;

/// A contiguous tensor of the input's shape. A literal `dim` argument is range-checked and
/// `normalized_shape` (layer_norm, rms_norm) must match the input's trailing dims.
/// Variants: `broadcast_mask` (masked_fill: the shape is the broadcast of mask and input),
/// `only_row_major` (rms_norm: a contiguous, non-empty input keeps its exact
/// strides; any other input's layout depends on the kernel torch picks, so it is unknown).
pub fn contiguous_result<S: Size>(spec: &OpSpec, args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    if let Some(dim) = args.get("dim").and_then(ArgValue::as_i64) {
        wrap_dim(dim, input.rank())
            .map_err(|e| Transfer::from_layout_error(e, OpErrorKind::InvalidArgument))?;
    }
    if let Some(normalized) = args.get("normalized_shape") {
        check_normalized_shape(spec, input, normalized, d)?;
    }
    match spec.variant.as_deref() {
        Some("broadcast_mask") => {
            let mask = tensor_arg(args, "mask")?;
            let shape = broadcast_shapes(&mask.shape, &input.shape, d)
                .map_err(|e| Transfer::from_layout_error(e, OpErrorKind::Broadcast))?;
            Ok(Transfer::tensor(Layout::contiguous(shape)))
        }
        Some("only_row_major") => {
            let row_major = Layout::contiguous(input.shape.clone());
            let same = input
                .strides
                .iter()
                .zip(&row_major.strides)
                .fold(Tri::Yes, |acc, (a, b)| acc.and(d.eq(a, b)));
            if same.is_yes() {
                Ok(Transfer::tensor(row_major))
            } else {
                Err(Transfer::unknown_tensor())
            }
        }
        _ => Ok(Transfer::tensor(Layout::contiguous(input.shape.clone()))),
    }
}

/// `layer_norm` / `rms_norm`: the input's trailing dims must equal `normalized_shape`.
fn check_normalized_shape<S: Size>(
    spec: &OpSpec,
    input: &Layout<S>,
    normalized: &ArgValue<S>,
    d: &Decider,
) -> Result<(), Transfer<S>> {
    let Some(normalized) = normalized
        .as_size()
        .map(|s| vec![s])
        .or_else(|| normalized.as_sizes())
    else {
        return Ok(());
    };
    let rank = input.rank();
    let fits = if normalized.len() > rank {
        Some(false)
    } else {
        input.shape[rank - normalized.len()..]
            .iter()
            .zip(&normalized)
            .try_fold(true, |acc, (a, b)| d.eq(a, b).known().map(|eq| acc && eq))
    };
    match fits {
        Some(true) => Ok(()),
        None => Err(Transfer::unknown_tensor()),
        Some(false) => {
            let list = torch_list(&normalized);
            let inner = &list[1..list.len() - 1];
            // rms_norm prints `[*3, 5]`, layer_norm `[*, 3, 5]` (torch 2.15).
            let expected = if spec.functions.iter().any(|f| f.ends_with("rms_norm"))
                || spec.name.contains("RMSNorm")
            {
                format!("[*{inner}]")
            } else {
                format!("[*, {inner}]")
            };
            Err(Transfer::error(
                OpErrorKind::ElementCount,
                format!(
                    "Given normalized_shape={list}, expected input with shape {expected}, but got input of size{}",
                    torch_list(&input.shape)
                ),
            ))
        }
    }
}

/// batch_norm / group_norm / roll: the output is laid out in `input.suggest_memory_format()`
/// (a channels-last input stays channels-last; checked in training and eval). With the
/// variant `clone_if_empty` an empty input is returned as `clone()` (batch_norm, roll).
pub fn suggested_format_result<S: Size>(
    spec: &OpSpec,
    args: &BoundArgs<S>,
    d: &Decider,
) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    if let Some(dims) = args.get("dims").and_then(ArgValue::as_i64s) {
        for dim in dims {
            wrap_dim(dim, input.rank())
                .map_err(|e| Transfer::from_layout_error(e, OpErrorKind::InvalidArgument))?;
        }
    }
    if spec.variant.as_deref() == Some("clone_if_empty") {
        match d.eq_lit(&input.numel(), 0) {
            Tri::Yes => {
                return clone_with_format(input, MemoryFormat::Preserve, d)
                    .map(Transfer::tensor)
                    .map_err(|_| Transfer::unknown_tensor())
            }
            Tri::No => {}
            Tri::Unknown => return Err(Transfer::unknown_tensor()),
        }
    }
    let format = input
        .suggest_memory_format(d)
        .ok_or_else(Transfer::unknown_tensor)?;
    let strides =
        strides_for_format(&input.shape, format).map_err(|_| Transfer::unknown_tensor())?;
    Ok(Transfer::tensor(Layout::new(
        input.shape.clone(),
        strides,
        S::lit(0),
    )))
}

/// Layouts the linter does not model (a tensor of unknown layout); the variant
/// `not_a_tensor` marks calls that return something else (a tuple): an unknown value.
pub fn unknown_layout<S: Size>(spec: &OpSpec) -> Outcome<S> {
    match spec.variant.as_deref() {
        Some("not_a_tensor") => Ok(Transfer::unknown()),
        _ => Ok(Transfer::unknown_tensor()),
    }
}

/// `torch.einsum(equation, *operands)` (or one list of operands): the layout
/// [`crate::layout::einsum::einsum_layout`] decides, else an unknown tensor.
pub fn einsum<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let Some(ArgValue::Str(equation)) = args.get("equation") else {
        return Err(Transfer::unknown_tensor());
    };
    let Some(ArgValue::TensorList(operands)) = args.get("operands") else {
        return Err(Transfer::unknown_tensor());
    };
    let operands: Vec<&Layout<S>> = operands
        .iter()
        .map(|o| o.as_ref().ok_or_else(Transfer::unknown_tensor))
        .collect::<Result<_, _>>()?;
    crate::layout::einsum::einsum_layout(equation, &operands, d)
        .map(Transfer::tensor)
        .ok_or_else(Transfer::unknown_tensor)
}

/// `einops.einsum(*tensors, pattern)`: the same layout as `torch.einsum` on the equation the
/// pattern spells.
pub fn einops_einsum<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let Some(ArgValue::IntList(items)) = args.get("tensors_and_pattern") else {
        return Err(Transfer::unknown_tensor());
    };
    let Some((ArgValue::Str(pattern), tensors)) = items.split_last() else {
        return Err(Transfer::unknown_tensor());
    };
    let equation = einsum_equation(pattern).ok_or_else(Transfer::unknown_tensor)?;
    let operands: Vec<&Layout<S>> = tensors
        .iter()
        .map(|t| match t {
            ArgValue::Tensor(Some(l)) => Ok(l),
            _ => Err(Transfer::unknown_tensor()),
        })
        .collect::<Result<_, _>>()?;
    crate::layout::einsum::einsum_layout(&equation, &operands, d)
        .map(Transfer::tensor)
        .ok_or_else(Transfer::unknown_tensor)
}

/// einops' einsum pattern as a `torch.einsum` equation: each axis name a letter, in order of
/// first appearance (`"b i d, b j d -> b i j"` → `"abc,adc->abd"`), as einops itself
/// rewrites it. `None` for `...`, parentheses or more names than letters.
pub fn einsum_equation<'p>(pattern: &'p str) -> Option<String> {
    let (inputs, output) = pattern.split_once("->")?;
    let mut letters: Vec<&'p str> = Vec::new();
    let mut spell = |side: &'p str| -> Option<String> {
        let mut out = String::new();
        for name in side.split_whitespace() {
            if !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                return None;
            }
            let i = match letters.iter().position(|n| *n == name) {
                Some(i) => i,
                None => {
                    letters.push(name);
                    letters.len() - 1
                }
            };
            out.push(*b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".get(i)? as char);
        }
        Some(out)
    };
    let mut terms = Vec::new();
    for term in inputs.split(',') {
        terms.push(spell(term)?);
    }
    let output = spell(output)?;
    Some(format!("{}->{output}", terms.join(",")))
}

#[cfg(test)]
mod tests {
    use crate::layout::{Decider, Layout};
    use crate::ops::kinds::test_support::{function, A};
    use crate::ops::{apply, bind_module_call, bind_module_init, OpResult, OpTable};

    fn l(shape: &[i64], strides: &[i64]) -> Layout<i64> {
        Layout::new(shape.to_vec(), strides.to_vec(), 0)
    }

    /// Spec §6.2 (E): softmax and layer_norm of a transposed input are contiguous.
    #[test]
    fn normalisations_are_contiguous() {
        let xt = l(&[2, 3, 4], &[12, 1, 3]);
        let contiguous = Some(Layout::contiguous(vec![2, 3, 4]));
        assert_eq!(
            function("F.softmax", vec![A::tensor(xt.clone()), A::Int(-1)], vec![])
                .layout()
                .cloned(),
            contiguous
        );
        assert_eq!(
            function(
                "F.layer_norm",
                vec![A::tensor(xt.clone()), A::ints(&[4])],
                vec![]
            )
            .layout()
            .cloned(),
            contiguous
        );
        // rms_norm (torch 2.15): row-major in, row-major out; a contiguous input with odd
        // size-1 strides may keep or lose them ((1,)/(2,) → (1,)/(1,)): unknown.
        let row_major = Layout::contiguous(vec![1, 1, 3, 2, 2, 1]);
        let t = function(
            "F.rms_norm",
            vec![A::tensor(row_major.clone()), A::ints(&[2, 1])],
            vec![],
        );
        assert_eq!(t.layout(), Some(&row_major));
        let odd = function(
            "F.rms_norm",
            vec![A::tensor(l(&[1], &[2])), A::ints(&[1])],
            vec![],
        );
        assert_eq!(odd.result, OpResult::UnknownTensor);
        let t = function("F.rms_norm", vec![A::tensor(xt.clone()), A::Int(4)], vec![]);
        assert_eq!(t.result, OpResult::UnknownTensor);
        let e = function("F.softmax", vec![A::tensor(xt.clone()), A::Int(3)], vec![]);
        assert_eq!(
            e.op_error().map(|e| e.message.as_str()),
            Some("Dimension out of range (expected to be in range of [-3, 2], but got 3)")
        );
    }

    /// torch 2.15 messages for a normalized_shape that does not match.
    #[test]
    fn normalized_shape_mismatch_messages() {
        let x = A::tensor(Layout::contiguous(vec![2, 3, 4]));
        let msg = |f: &str, shape: &[i64]| {
            function(f, vec![x.clone(), A::ints(shape)], vec![])
                .op_error()
                .map(|e| e.message.clone())
        };
        assert_eq!(msg("F.layer_norm", &[5]).as_deref(), Some("Given normalized_shape=[5], expected input with shape [*, 5], but got input of size[2, 3, 4]"));
        assert_eq!(msg("F.layer_norm", &[3, 5]).as_deref(), Some("Given normalized_shape=[3, 5], expected input with shape [*, 3, 5], but got input of size[2, 3, 4]"));
        assert_eq!(msg("F.rms_norm", &[5]).as_deref(), Some("Given normalized_shape=[5], expected input with shape [*5], but got input of size[2, 3, 4]"));
        assert_eq!(msg("F.rms_norm", &[3, 5]).as_deref(), Some("Given normalized_shape=[3, 5], expected input with shape [*3, 5], but got input of size[2, 3, 4]"));
    }

    /// torch 2.15: BatchNorm/GroupNorm keep channels-last, make anything else contiguous.
    #[test]
    fn batch_norm_follows_the_suggested_memory_format() {
        let table = OpTable::torch();
        let bn = table.module("nn.BatchNorm2d").unwrap();
        let init = bind_module_init::<i64>(bn, vec![A::Int(3)], vec![]).unwrap();
        let call = |x: Layout<i64>| {
            apply(
                &bn.call,
                &bind_module_call(bn, &init, vec![A::tensor(x)], vec![]).unwrap(),
                &Decider::concrete(),
            )
        };
        let channels_last = l(&[2, 3, 5, 4], &[60, 1, 12, 3]);
        assert_eq!(call(channels_last.clone()).layout(), Some(&channels_last));
        assert_eq!(
            call(l(&[2, 3, 5, 4], &[60, 5, 1, 15])).layout(),
            Some(&Layout::contiguous(vec![2, 3, 5, 4]))
        );
        let gn = function(
            "F.group_norm",
            vec![A::tensor(channels_last.clone()), A::Int(1)],
            vec![],
        );
        assert_eq!(gn.layout(), Some(&channels_last));
    }

    #[test]
    fn unmodelled_layouts() {
        let x = l(&[2, 3, 4], &[12, 4, 1]);
        assert_eq!(
            function(
                "F.conv1d",
                vec![A::tensor(x.clone()), A::Tensor(None)],
                vec![]
            )
            .result,
            OpResult::UnknownTensor
        );
        // `F.normalize` is laid out as a one-operand element-wise op, except that a size-1
        // dim leaves it unknown (scripts/oracle/check_normalize.py).
        let t = l(&[2, 3, 4], &[1, 8, 2]);
        assert_eq!(
            function("F.normalize", vec![A::tensor(t.clone())], vec![]).result,
            OpResult::Tensor(t)
        );
        let unit = l(&[2, 1, 4], &[4, 4, 1]);
        assert_eq!(
            function("F.normalize", vec![A::tensor(unit)], vec![]).result,
            OpResult::UnknownTensor
        );
        let q = A::tensor(Layout::contiguous(vec![2, 4, 5, 8]));
        assert_eq!(
            function(
                "F.scaled_dot_product_attention",
                vec![q.clone(), q.clone(), q],
                vec![]
            )
            .result,
            OpResult::UnknownTensor
        );
    }

    #[test]
    fn einops_patterns_spell_torch_equations() {
        assert_eq!(
            super::einsum_equation("b i d, b j d -> b i j").as_deref(),
            Some("abc,adc->abd")
        );
        assert_eq!(
            super::einsum_equation("batch head i, batch head j -> batch head i j").as_deref(),
            Some("abc,abd->abcd")
        );
        assert_eq!(super::einsum_equation("b ... d, b d -> b ..."), None);
    }

    /// einops 0.8.2 on torch 2.15: `einsum(q, k, "b i d, b j d -> b i j")` of contiguous
    /// operands is a contiguous (b, i, j) tensor, as `torch.einsum("bid,bjd->bij")`.
    #[test]
    fn einops_einsum_lays_out_as_torch_einsum() {
        let spec = OpTable::torch().function("einops.einsum").unwrap();
        let q = A::tensor(Layout::contiguous(vec![2, 3, 4]));
        let k = A::tensor(Layout::contiguous(vec![2, 5, 4]));
        let args = crate::ops::bind(
            spec,
            None,
            vec![q, k, A::Str("b i d, b j d -> b i j".into())],
            vec![],
        )
        .unwrap();
        let t = apply(spec, &args, &Decider::concrete());
        assert_eq!(t.layout().cloned(), Some(Layout::contiguous(vec![2, 3, 5])));
    }
}
