//! candle's variants of the kinds whose rule differs from PyTorch's (spec §10): entries with
//! `semantics = "candle"` go through [`transfer`]. Kinds whose geometry is the same in
//! both libraries (`transpose`, `permute`, `squeeze`, aliases, size queries) keep PyTorch's
//! transfer function.
//!
//! The differences: contiguity has no zero-element shortcut and `reshape`/`flatten*` copy
//! exactly when the input is not contiguous (no `view`, no chunk logic); element-wise ops,
//! reductions, conversions and fresh tensors are laid out with candle's row-major strides
//! (a zero-size dim zeroes the strides outside it); `t()` swaps the last two dims of any
//! tensor of rank ≥ 2; `unsqueeze` gives the new dim the stride of the dim it lands before;
//! dims may be negative (`D::Minus1`).

use super::{bool_arg, fail, int_arg, size_arg, target_shape, tensor_arg, Outcome};
use crate::layout::{
    broadcast_shapes_succeeding, candle_broadcast_as, candle_chunk, candle_contiguous_strides,
    candle_is_contiguous, candle_narrow, candle_reshape, candle_t, Decider, Layout, MaybeCopy,
    Size, Tri,
};
use crate::ops::bind::BoundArgs;
use crate::ops::kind::OpKind;
use crate::ops::schema::{ParamType, Variadic};
use crate::ops::shape_rules::{cat_shape, product, reduced_shape, torch_list};
use crate::ops::table::OpSpec;
use crate::ops::transfer::{OpErrorKind, Transfer};
use crate::ops::value::ArgValue;

use OpErrorKind::{ElementCount, InvalidArgument};

/// The candle rule of `spec`'s kind, or `None` when PyTorch's rule applies unchanged.
pub fn transfer<S: Size>(spec: &OpSpec, args: &BoundArgs<S>, d: &Decider) -> Option<Outcome<S>> {
    Some(match spec.kind {
        OpKind::Reshape => reshape(args, d),
        OpKind::Flatten => flatten(args, d),
        OpKind::Contiguous => contiguous(args, d),
        OpKind::ContiguousResult if spec.variant.as_deref() == Some("alias_when_unchanged") => {
            converted(args, d)
        }
        OpKind::ContiguousResult => fresh(args),
        OpKind::MatrixTranspose => tensor_arg(args, "input").and_then(|input| {
            candle_t(input)
                .map(Transfer::tensor)
                .map_err(fail(InvalidArgument))
        }),
        OpKind::Narrow => narrow(args, d),
        OpKind::Select if spec.variant.as_deref() == Some("reshape") => select_reshape(args, d),
        OpKind::Unsqueeze => unsqueeze(args),
        OpKind::Chunk => chunk(args, d),
        OpKind::Elementwise => elementwise(spec, args, d),
        OpKind::Reduction => reduction(args),
        OpKind::Create => args
            .get("size")
            .and_then(ArgValue::as_sizes)
            .map(|shape| Transfer::tensor(row_major(shape)))
            .ok_or_else(Transfer::unknown_tensor),
        OpKind::Expand => broadcast_as(args, d),
        OpKind::Matmul => matmul(args, d),
        OpKind::Cat => cat(args, d),
        OpKind::Stack => stack(args, d),
        _ => return None,
    })
}

/// A fresh candle tensor: row-major strides, offset 0.
fn row_major<S: Size>(shape: Vec<S>) -> Layout<S> {
    let strides = candle_contiguous_strides(&shape);
    Layout::new(shape, strides, S::lit(0))
}

fn maybe_copy<S: Size>(result: MaybeCopy<S>, input: &Layout<S>) -> Transfer<S> {
    let numel = input.numel();
    match result.layout {
        Some(layout) => Transfer::tensor(layout).with_copy(result.copies, numel),
        None => Transfer::unknown_tensor().with_copy(result.copies, numel),
    }
}

/// candle's dimension argument: `0..rank`, or negative for `D::Minus(k)`.
///
/// Private stopgap, to be replaced by a public `layout::candle_dim` (the layout module's
/// own helper is private): the message is candle's `DimOutOfRange`.
fn candle_dim<S: Size>(
    layout: &Layout<S>,
    dim: i64,
    op: &str,
    extra: usize,
) -> Result<usize, Transfer<S>> {
    let rank = (layout.rank() + extra) as i64;
    let index = if dim < 0 { rank + dim } else { dim };
    if index < 0 || index >= rank {
        return Err(Transfer::error(
            OpErrorKind::DimOutOfRange,
            format!(
                "{op}: dimension index {dim} out of range for {}",
                torch_list(&layout.shape)
            ),
        ));
    }
    Ok(index as usize)
}

fn reshape<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let shape = args
        .get("shape")
        .and_then(ArgValue::as_sizes)
        .ok_or_else(Transfer::unknown_tensor)?;
    let result = candle_reshape(input, &shape, d).map_err(fail(ElementCount))?;
    Ok(maybe_copy(result, input))
}

/// `flatten(start, end)` and `flatten_from/_to/_all`: rank 0 → `reshape(1)`; `start < end`
/// → `reshape` with the dims merged; otherwise an alias (candle raises no error).
fn flatten<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    if input.rank() == 0 {
        let result = candle_reshape(input, &[S::lit(1)], d).map_err(fail(ElementCount))?;
        return Ok(maybe_copy(result, input));
    }
    let start = candle_dim(input, int_arg(args, "start_dim")?, "flatten", 0)?;
    let end = candle_dim(input, int_arg(args, "end_dim")?, "flatten", 0)?;
    if start >= end {
        return Ok(Transfer::tensor(input.clone()));
    }
    let mut shape = input.shape[..start].to_vec();
    shape.push(product(&input.shape[start..=end]));
    shape.extend_from_slice(&input.shape[end + 1..]);
    let result = candle_reshape(input, &shape, d).map_err(fail(ElementCount))?;
    Ok(maybe_copy(result, input))
}

/// `contiguous()`: an alias when candle-contiguous, else a row-major copy.
fn contiguous<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let numel = input.numel();
    Ok(match candle_is_contiguous(input, d) {
        Tri::Yes => Transfer::tensor(input.clone()),
        Tri::No => Transfer::tensor(row_major(input.shape.clone())).with_copy(Tri::Yes, numel),
        Tri::Unknown => Transfer::unknown_tensor().with_copy(Tri::Unknown, numel),
    })
}

/// A fresh row-major tensor of the input's shape (`softmax`, `to_dtype`, `zeros_like`…).
fn fresh<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    Ok(Transfer::tensor(row_major(
        tensor_arg(args, "input")?.shape.clone(),
    )))
}

/// `to_dtype(t)` / `to_device(d)`: a fresh row-major copy, or the input itself when its
/// dtype (device) is already that one (tensor.rs `to_dtype`: `self.clone()`). Contiguous
/// either way only when the input is.
fn converted<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let numel = input.numel();
    Ok(match candle_is_contiguous(input, d) {
        Tri::Yes => Transfer::tensor(input.clone()).with_copy(Tri::Unknown, numel),
        Tri::No | Tri::Unknown => Transfer::unknown_tensor().with_copy(Tri::Unknown, numel),
    })
}

fn narrow<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let (dim, start, length) = (
        int_arg(args, "dim")?,
        size_arg(args, "start")?,
        size_arg(args, "length")?,
    );
    candle_narrow(input, dim, &start, &length, d)
        .map(Transfer::tensor)
        .map_err(fail(InvalidArgument))
}

/// `get(i)` (variant `reshape`): `narrow(0, i, 1)` then `reshape` to the remaining dims
/// (tensor.rs:2246) — the select's geometry, *copied* when that is not candle-contiguous
/// (candle's test skips size-1 dims, so the narrowed tensor is contiguous exactly when the
/// select is). A rank-0 input comes back as it is.
fn select_reshape<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    if input.rank() == 0 {
        return Ok(Transfer::tensor(input.clone()));
    }
    let selected = super::geometry::select(args, d)?;
    let Some(view) = selected.layout().cloned() else {
        return Ok(selected);
    };
    let result = candle_reshape(&view, &view.shape, d).map_err(fail(ElementCount))?;
    Ok(maybe_copy(result, &view))
}

/// `unsqueeze(d)`: a size-1 dim with the stride of the dim it lands before (1 at the end).
fn unsqueeze<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let d = candle_dim(input, int_arg(args, "dim")?, "unsqueeze", 1)?;
    Ok(Transfer::tensor(unsqueezed(input, d)))
}

/// The layout of candle's `unsqueeze` at index `d` (`0..=rank`).
///
/// Private stopgap, to be replaced by a `layout::candle_unsqueeze` (spec §10.2, `tensor.rs`
/// l.2630); PyTorch's rule uses `size·stride` instead.
fn unsqueezed<S: Size>(input: &Layout<S>, d: usize) -> Layout<S> {
    let stride = input.strides.get(d).cloned().unwrap_or_else(|| S::lit(1));
    let mut out = input.clone();
    out.shape.insert(d, S::lit(1));
    out.strides.insert(d, stride);
    out
}

/// `chunk(chunks, dim)`: candle's `min(chunks, size)` pieces.
fn chunk<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let chunks = usize::try_from(int_arg(args, "chunks")?).map_err(|_| Transfer::unknown())?;
    let pieces =
        candle_chunk(input, chunks, int_arg(args, "dim")?, d).map_err(fail(ElementCount))?;
    Ok(Transfer::tensors(pieces))
}

/// Element-wise ops: a fresh row-major output of the broadcast shape. With the variant
/// `same_shape`, tensor operands must have identical shapes (candle's `binary_op!`,
/// `binary_op_scalar!`), so the output has the input's shape whatever an operand the
/// analysis does not know is. A zero-element input is returned as an alias of itself.
fn elementwise<S: Size>(spec: &OpSpec, args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    // Same-shape ops: any operand the analysis knows gives the shape (`attn(x)? + x`).
    let same_shape_op = spec.variant.as_deref() == Some("same_shape");
    let known_operand = || {
        spec.params
            .iter()
            .filter(|p| p.variadic == Variadic::No && p.name != "input")
            .find_map(|p| match args.get(&p.name) {
                Some(ArgValue::Tensor(Some(layout))) => Some(layout),
                _ => None,
            })
    };
    let input = match tensor_arg(args, "input") {
        Ok(input) => input,
        Err(_) if same_shape_op => known_operand().ok_or_else(Transfer::unknown_tensor)?,
        Err(unknown) => return Err(unknown),
    };
    let mut shape = input.shape.clone();
    for param in spec
        .params
        .iter()
        .filter(|p| p.variadic == Variadic::No && p.name != "input")
    {
        if !matches!(
            param.ty,
            ParamType::Tensor | ParamType::TensorOrScalar | ParamType::TensorOrNumber
        ) {
            continue;
        }
        let same_shape_op = spec.variant.as_deref() == Some("same_shape");
        let other = match args.get(&param.name) {
            Some(ArgValue::Tensor(Some(layout))) => layout,
            Some(v) if v.is_number() || v.is_none() => continue,
            // An operand the analysis does not know (a tensor or a scalar): candle gives
            // the input's shape whatever it is, or fails on a mismatch.
            _ if same_shape_op => continue,
            _ => return Err(Transfer::unknown_tensor()),
        };
        if same_shape_op {
            let same = other.rank() == shape.len()
                && other
                    .shape
                    .iter()
                    .zip(&shape)
                    .all(|(a, b)| d.eq(a, b).is_yes());
            let different = other.rank() != shape.len()
                || other
                    .shape
                    .iter()
                    .zip(&shape)
                    .any(|(a, b)| d.ne(a, b).is_yes());
            if different {
                return Err(Transfer::error(
                    OpErrorKind::Broadcast,
                    format!(
                        "shape mismatch in {}, lhs: {}, rhs: {}",
                        spec.name,
                        torch_list(&input.shape),
                        torch_list(&other.shape)
                    ),
                ));
            }
            if !same {
                return Err(Transfer::unknown_tensor());
            }
        } else {
            shape = broadcast_shapes_succeeding(&shape, &other.shape, d)
                .map_err(fail(OpErrorKind::Broadcast))?;
        }
    }
    if d.eq_lit(&input.numel(), 0).is_yes() {
        return Ok(Transfer::tensor(input.clone()));
    }
    Ok(Transfer::tensor(row_major(shape)))
}

/// Reductions over candle dims (negative = `D::Minus`), row-major output.
fn reduction<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let dims = match args.get("dim") {
        None | Some(ArgValue::None) => None,
        Some(v) => Some(v.as_i64s().ok_or_else(Transfer::unknown_tensor)?),
    };
    if let Some(dims) = &dims {
        for &dim in dims {
            candle_dim(input, dim, "reduce", 0)?;
        }
    }
    let keepdim = bool_arg(args, "keepdim").map_err(|_| Transfer::unknown_tensor())?;
    let shape =
        reduced_shape(&input.shape, dims.as_deref(), keepdim).map_err(fail(InvalidArgument))?;
    Ok(Transfer::tensor(row_major(shape)))
}

/// `broadcast_as(shape)` / `expand(shape)`: stride 0 on new leading dims and on stretched
/// size-1 dims (spec §10.2, `layout::candle_broadcast_as`); no `-1`.
fn broadcast_as<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let shape = target_shape(args, &["size"])?;
    candle_broadcast_as(input, &shape, d)
        .map(Transfer::tensor)
        .map_err(fail(OpErrorKind::Broadcast))
}

/// `matmul` (spec §10.3): the same rank ≥ 2 on both sides, the same `k` and the same number
/// of matrices — no broadcasting (`broadcast_matmul` does that) — giving a fresh row-major
/// `[lhs batch dims…, m, n]`. The backend's stride checks are lint SL005's business: they
/// depend on which candle build runs the code.
fn matmul<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let lhs = tensor_arg(args, "input")?;
    let rhs = tensor_arg(args, "other")?;
    let rank = lhs.rank();
    let mismatch = || {
        Transfer::error(
            ElementCount,
            format!(
                "shape mismatch in matmul, lhs: {}, rhs: {}",
                torch_list(&lhs.shape),
                torch_list(&rhs.shape)
            ),
        )
    };
    if rank < 2 || rhs.rank() != rank {
        return Err(mismatch());
    }
    let agree = d.eq(&lhs.shape[rank - 1], &rhs.shape[rank - 2]).and(d.eq(
        &product(&lhs.shape[..rank - 2]),
        &product(&rhs.shape[..rank - 2]),
    ));
    match agree {
        Tri::Yes => {}
        Tri::No => return Err(mismatch()),
        Tri::Unknown => return Err(Transfer::unknown_tensor()),
    }
    let mut shape = lhs.shape[..rank - 1].to_vec();
    shape.push(rhs.shape[rank - 1].clone());
    Ok(Transfer::tensor(row_major(shape)))
}

/// Every tensor of the `tensors` argument, each with a known layout.
fn tensors_arg<S: Size>(args: &BoundArgs<S>) -> Result<Vec<Layout<S>>, Transfer<S>> {
    match args.get("tensors") {
        Some(ArgValue::TensorList(items)) if !items.is_empty() => items
            .iter()
            .map(|t| t.clone().ok_or_else(Transfer::unknown_tensor))
            .collect(),
        _ => Err(Transfer::unknown_tensor()),
    }
}

/// `Tensor::cat(&[..], dim)`.
fn cat<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let inputs = tensors_arg(args)?;
    let dim = candle_dim(&inputs[0], int_arg(args, "dim")?, "cat", 0)?;
    cat_layouts(&inputs, dim, d)
}

/// `Tensor::stack(&[..], dim)`: every input unsqueezed at `dim`, then `cat` (candle's
/// `tensor.rs` l.2670).
fn stack<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let inputs = tensors_arg(args)?;
    let dim = candle_dim(&inputs[0], int_arg(args, "dim")?, "stack", 1)?;
    let unsqueezed: Vec<Layout<S>> = inputs.iter().map(|l| unsqueezed(l, dim)).collect();
    cat_layouts(&unsqueezed, dim, d)
}

/// candle's `cat` (`tensor_cat.rs` l.21), whose result is *not always contiguous*: one
/// input is returned as it is; when every input is contiguous or has an outer stride for
/// `dim` (a block copy works), or `dim == 0`, the result is a fresh row-major tensor;
/// otherwise candle transposes `dim` to the front, concatenates there and transposes back,
/// so the result has the strides of a row-major tensor with dims 0 and `dim` swapped.
fn cat_layouts<S: Size>(inputs: &[Layout<S>], dim: usize, d: &Decider) -> Outcome<S> {
    if inputs.len() == 1 {
        return Ok(Transfer::tensor(inputs[0].clone()));
    }
    let shapes: Vec<&[S]> = inputs.iter().map(|l| l.shape.as_slice()).collect();
    let shape = cat_shape(&shapes, dim as i64, d).map_err(fail(ElementCount))?;
    let block_copy = inputs.iter().fold(Tri::Yes, |acc, l| {
        acc.and(candle_is_contiguous(l, d).or(has_outer_stride_for_dim(l, dim, d)))
    });
    match (block_copy, dim) {
        (Tri::Yes, _) | (_, 0) => Ok(Transfer::tensor(row_major(shape))),
        (Tri::No, _) => {
            let mut swapped = shape;
            swapped.swap(0, dim);
            let mut out = row_major(swapped);
            out.shape.swap(0, dim);
            out.strides.swap(0, dim);
            Ok(Transfer::tensor(out))
        }
        (Tri::Unknown, _) => Err(Transfer::unknown_tensor()),
    }
}

/// candle's `Layout::outer_stride_for_dim(dim).is_some()`: the dims from `dim` inwards are
/// row-major (exactly: no size-1 exception), and the dims outside `dim` are row-major
/// among themselves over the stride of `dim - 1`.
///
/// Private stopgap, to be replaced by a `layout::candle_outer_stride_for_dim`.
fn has_outer_stride_for_dim<S: Size>(layout: &Layout<S>, dim: usize, d: &Decider) -> Tri {
    let (shape, strides) = (&layout.shape, &layout.strides);
    let mut expected = S::lit(1);
    let mut answer = Tri::Yes;
    for i in (dim..shape.len()).rev() {
        answer = answer.and(d.eq(&strides[i], &expected));
        expected = expected.mul(&shape[i]);
    }
    if dim > 0 {
        let mut expected_outer = strides[dim - 1].clone();
        for k in (0..dim - 1).rev() {
            expected_outer = expected_outer.mul(&shape[k + 1]);
            answer = answer.and(d.eq(&strides[k], &expected_outer));
        }
    }
    answer
}

#[cfg(test)]
mod tests {
    use crate::layout::{Layout, Tri};
    use crate::ops::kinds::test_support::{method_in, A};
    use crate::ops::{OpErrorKind, OpResult, OpTable, Transfer};

    /// The shipped candle table's method `name`, applied to `input`.
    fn method(name: &str, input: Layout<i64>, args: Vec<A>) -> Transfer<i64> {
        method_in(OpTable::candle(), name, input, args, vec![])
    }

    fn l(shape: &[i64], strides: &[i64], offset: i64) -> Layout<i64> {
        Layout::new(shape.to_vec(), strides.to_vec(), offset)
    }

    /// Spec §13 (candle column): a sliced layout that PyTorch views, candle copies (row 52),
    /// and a contiguous input stays a view at its offset.
    #[test]
    fn reshape_copies_whenever_candle_contiguity_fails() {
        let t = method(
            "reshape",
            l(&[2, 3, 4], &[24, 4, 1], 0),
            vec![A::ints(&[2, 12])],
        );
        assert_eq!(
            (t.layout().cloned(), t.copies),
            (Some(l(&[2, 12], &[12, 1], 0)), Tri::Yes)
        );
        let t = method(
            "reshape",
            l(&[2, 3, 4], &[12, 4, 1], 5),
            vec![A::ints(&[6, -1])],
        );
        assert_eq!(
            (t.layout().cloned(), t.copies),
            (Some(l(&[6, 4], &[4, 1], 5)), Tri::No)
        );
        let t = method(
            "flatten_from",
            l(&[2, 3, 4], &[12, 1, 3], 0),
            vec![A::Int(1)],
        );
        assert_eq!(
            (t.layout().cloned(), t.copies),
            (Some(l(&[2, 12], &[12, 1], 0)), Tri::Yes)
        );
        // (2,0,3)/(3,3,1) is contiguous for PyTorch, not for candle (spec §10.1).
        let t = method("contiguous", l(&[2, 0, 3], &[3, 3, 1], 0), vec![]);
        assert_eq!(
            (t.layout().cloned(), t.copies),
            (Some(l(&[2, 0, 3], &[0, 3, 1], 0)), Tri::Yes)
        );
    }

    /// Spec §10.2: `t()` swaps the last two dims; `unsqueeze` keeps the next dim's stride;
    /// `chunk` of 5 in 4 gives 2, 1, 1, 1.
    #[test]
    fn geometry_differences() {
        let x = Layout::contiguous(vec![2i64, 3, 4]);
        assert_eq!(
            method("t", x.clone(), vec![]).layout(),
            Some(&l(&[2, 4, 3], &[12, 1, 4], 0))
        );
        assert_eq!(
            method("unsqueeze", x.clone(), vec![A::Int(1)]).layout(),
            Some(&l(&[2, 1, 3, 4], &[12, 4, 4, 1], 0))
        );
        assert_eq!(
            method("unsqueeze", x, vec![A::Int(-1)]).layout(),
            Some(&l(&[2, 3, 4, 1], &[12, 4, 1, 1], 0))
        );
        let t = method(
            "chunk",
            Layout::contiguous(vec![5, 2]),
            vec![A::Int(4), A::Int(0)],
        );
        match t.result {
            OpResult::Tensors(v) => assert_eq!(
                v.iter().map(|p| p.shape[0]).collect::<Vec<_>>(),
                vec![2, 1, 1, 1]
            ),
            other => panic!("{other:?}"),
        }
    }

    /// Spec §10.2: element-wise outputs are contiguous (PyTorch would keep a transposed
    /// order); same-shape binary ops reject differing shapes.
    #[test]
    fn elementwise_and_reductions_are_row_major() {
        let xt = l(&[2, 4, 3], &[12, 1, 4], 0);
        let t = method("add", xt.clone(), vec![A::tensor(xt.clone())]);
        assert_eq!(t.layout(), Some(&Layout::contiguous(vec![2, 4, 3])));
        let e = method(
            "add",
            xt.clone(),
            vec![A::tensor(Layout::contiguous(vec![4, 3]))],
        );
        assert_eq!(e.op_error().map(|e| e.kind), Some(OpErrorKind::Broadcast));
        let t = method(
            "broadcast_add",
            xt.clone(),
            vec![A::tensor(Layout::contiguous(vec![4, 3]))],
        );
        assert_eq!(t.layout(), Some(&Layout::contiguous(vec![2, 4, 3])));
        let t = method("sum_keepdim", xt, vec![A::Int(-1)]);
        assert_eq!(t.layout(), Some(&Layout::contiguous(vec![2, 4, 1])));
    }
}
