//! Reductions (spec §6.2: contiguous outputs; torch 2.15 also for permuted inputs):
//! `sum`/`mean`/`amax`/`argmax`/`var`/`norm`… over `dim` with `keepdim`, and the
//! `max`/`min`/`median`/`mode` family that returns `(values, indices)` when given a dim.

use super::{bool_arg, tensor_arg, Outcome};
use crate::layout::elementwise::elementwise_output;
use crate::layout::{Decider, Layout, Size};
use crate::ops::bind::BoundArgs;
use crate::ops::shape_rules::reduced_shape;
use crate::ops::transfer::{OpErrorKind, Transfer};
use crate::ops::value::ArgValue;

/// The reduced dims: `None` = every dim (also for `dim=()`).
fn dims_arg<S: Size>(args: &BoundArgs<S>) -> Result<Option<Vec<i64>>, Transfer<S>> {
    match args.get("dim") {
        None | Some(ArgValue::None) => Ok(None),
        Some(v) => v
            .as_i64s()
            .map(Some)
            .ok_or_else(|| Transfer::unknown_tensor()),
    }
}

fn reduced<S: Size>(
    input: &Layout<S>,
    dims: Option<&[i64]>,
    keepdim: bool,
) -> Result<Layout<S>, Transfer<S>> {
    let shape = reduced_shape(&input.shape, dims, keepdim)
        .map_err(|e| Transfer::from_layout_error(e, OpErrorKind::InvalidArgument))?;
    Ok(Layout::contiguous(shape))
}

pub fn reduction<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let dims = dims_arg(args)?;
    let keepdim = bool_arg(args, "keepdim").map_err(|_| Transfer::unknown_tensor())?;
    Ok(Transfer::tensor(reduced(input, dims.as_deref(), keepdim)?))
}

/// `x.max()` → a 0-d tensor; `x.max(dim)` → `(values, indices)`; `x.max(other)` →
/// element-wise `maximum`.
pub fn reduction_with_indices<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    match args.get("dim") {
        None | Some(ArgValue::None) => Ok(Transfer::tensor(Layout::contiguous(Vec::new()))),
        Some(ArgValue::Tensor(other)) => {
            let other = other.as_ref().ok_or_else(|| Transfer::unknown_tensor())?;
            // Element-wise `maximum(input, other)`, operands in that order.
            let output = elementwise_output(&[input, other], d)
                .map_err(|e| Transfer::from_layout_error(e, OpErrorKind::Broadcast))?;
            Ok(Transfer::tensor(output))
        }
        Some(v) => {
            let dim = v.as_i64().ok_or_else(|| Transfer::unknown_tensor())?;
            let keepdim = bool_arg(args, "keepdim").map_err(|_| Transfer::unknown_tensor())?;
            let values = reduced(input, Some(&[dim]), keepdim)?;
            Ok(Transfer::tensors(vec![values.clone(), values]))
        }
    }
}

/// `topk(k, dim)`: values and indices are new contiguous tensors whose `dim` has size `k`.
pub fn topk<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let k = args
        .get("k")
        .and_then(ArgValue::as_size)
        .ok_or_else(|| Transfer::unknown_tensor())?;
    let dim = args
        .get("dim")
        .and_then(ArgValue::as_i64)
        .ok_or_else(|| Transfer::unknown_tensor())?;
    let d = crate::layout::wrap_dim(dim, input.rank())
        .map_err(|e| Transfer::from_layout_error(e, OpErrorKind::DimOutOfRange))?;
    let mut shape = input.shape.clone();
    if shape.is_empty() {
        return Ok(Transfer::tensors(vec![
            Layout::contiguous(shape.clone()),
            Layout::contiguous(shape),
        ]));
    }
    shape[d] = k;
    let out = Layout::contiguous(shape);
    Ok(Transfer::tensors(vec![out.clone(), out]))
}

#[cfg(test)]
mod tests {
    use crate::layout::Layout;
    use crate::ops::kinds::test_support::{method_kw, A};
    use crate::ops::{OpResult, Transfer};

    fn shape(t: &Transfer<i64>) -> Vec<i64> {
        t.layout().unwrap().shape.clone()
    }

    /// Shapes observed on torch 2.15 (outputs contiguous, also for permuted inputs).
    #[test]
    fn reduction_shapes_match_torch() {
        let x = Layout::new(vec![2i64, 3, 5, 4], vec![60, 5, 1, 15], 0);
        assert_eq!(
            method_kw("sum", x.clone(), vec![A::Int(1)], vec![]).layout(),
            Some(&Layout::contiguous(vec![2, 5, 4]))
        );
        assert_eq!(
            method_kw(
                "sum",
                x.clone(),
                vec![A::Int(-1)],
                vec![("keepdim", A::Bool(true))]
            )
            .layout(),
            Some(&Layout::contiguous(vec![2, 3, 5, 1]))
        );
        assert_eq!(
            shape(&method_kw(
                "mean",
                x.clone(),
                vec![A::ints(&[1, 2])],
                vec![]
            )),
            vec![2, 4]
        );
        assert_eq!(
            shape(&method_kw(
                "norm",
                x.clone(),
                vec![],
                vec![("dim", A::Int(-1))]
            )),
            vec![2, 3, 5]
        );
        assert_eq!(
            shape(&method_kw("var", x.clone(), vec![A::Int(1)], vec![])),
            vec![2, 5, 4]
        );
        let y = Layout::contiguous(vec![2i64, 3]);
        assert_eq!(
            shape(&method_kw("sum", y.clone(), vec![], vec![])),
            Vec::<i64>::new()
        );
        assert_eq!(
            shape(&method_kw("sum", y.clone(), vec![A::ints(&[])], vec![])),
            Vec::<i64>::new()
        );
        assert_eq!(
            shape(&method_kw("amax", y.clone(), vec![], vec![])),
            Vec::<i64>::new()
        );
        assert_eq!(
            shape(&method_kw(
                "argmax",
                y.clone(),
                vec![],
                vec![("keepdim", A::Bool(true))]
            )),
            vec![1, 1]
        );
        assert_eq!(
            shape(&method_kw("max", y.clone(), vec![], vec![])),
            Vec::<i64>::new()
        );
        let t = method_kw(
            "max",
            y.clone(),
            vec![A::Int(1)],
            vec![("keepdim", A::Bool(true))],
        );
        match t.result {
            OpResult::Tensors(v) => assert_eq!(v, vec![Layout::contiguous(vec![2, 1]); 2]),
            other => panic!("{other:?}"),
        }
        let t = method_kw(
            "max",
            y.clone(),
            vec![A::tensor(Layout::new(vec![2, 3], vec![1, 2], 0))],
            vec![],
        );
        assert_eq!(t.layout(), Some(&Layout::contiguous(vec![2, 3])));
        let t = method_kw("sum", y, vec![A::ints(&[0, 0])], vec![]);
        assert_eq!(
            t.op_error().map(|e| e.message.as_str()),
            Some("dim 0 appears multiple times in the list of dims")
        );
    }
}
