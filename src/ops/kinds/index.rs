//! Basic indexing `x[i, a:b:c, None, ...]` (PyTorch's `applySlicing`): each entry selects
//! (an int), slices (a slice), inserts a size-1 dim (`None`) or skips dims (`...`), left
//! to right, on the result so far. A list, tensor or bool entry is advanced indexing,
//! which gathers into a new tensor whose layout the linter does not model.
//!
//! With the variant `checked_bounds` (candle's `x.i((.., ..n))`, a `narrow` per range) a
//! range outside the dimension is an error, not clamped: bounds the analysis cannot place
//! against the size are taken as written, since the call returns only when they lie within.

use super::{tensor_arg, Outcome};
use crate::layout::geometry;
use crate::layout::{Decider, Layout, LayoutErrorKind, Size};
use crate::ops::bind::BoundArgs;
use crate::ops::transfer::{OpErrorKind, Transfer};
use crate::ops::value::{ArgValue, SliceArg};

pub fn index<S: Size>(args: &BoundArgs<S>, checked_bounds: bool, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let entries: &[ArgValue<S>] = match args.get("indices") {
        Some(ArgValue::IntList(entries)) => entries,
        _ => return Err(Transfer::unknown_tensor()),
    };
    let rank = input.rank();
    let mut consumed = 0;
    let mut ellipses = 0;
    for entry in entries {
        match entry {
            ArgValue::None => {}
            ArgValue::Ellipsis => ellipses += 1,
            ArgValue::Int(_) | ArgValue::Slice(_) => consumed += 1,
            // Advanced indexing, or an entry whose kind is unknown.
            _ => return Err(Transfer::unknown_tensor()),
        }
    }
    if ellipses > 1 {
        // PyTorch accepts some repeated ellipses with surprising results; not modelled.
        return Err(Transfer::unknown_tensor());
    }
    if rank == 0 && entries.iter().any(|e| matches!(e, ArgValue::Int(_))) {
        return Err(index_error(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number",
        ));
    }
    if consumed > rank {
        return Err(index_error(format!(
            "too many indices for tensor of dimension {rank}"
        )));
    }

    let mut result = input.clone();
    let mut dim = 0usize;
    for entry in entries {
        match entry {
            ArgValue::Int(index) => result = select(&result, dim, index, d)?,
            ArgValue::Slice(parts) => {
                result = slice(&result, dim, parts, checked_bounds, d)?;
                dim += 1;
            }
            ArgValue::None => {
                result = geometry::unsqueeze(&result, dim as i64)
                    .map_err(|e| Transfer::from_layout_error(e, OpErrorKind::IndexOutOfRange))?;
                dim += 1;
            }
            ArgValue::Ellipsis => dim += rank - consumed,
            _ => unreachable!("entries were checked above"),
        }
    }
    Ok(Transfer::tensor(result))
}

fn index_error<S: Size>(message: impl Into<String>) -> Transfer<S> {
    Transfer::error(OpErrorKind::IndexOutOfRange, message)
}

/// An int entry: `select`, with indexing's own out-of-bounds message.
fn select<S: Size>(
    layout: &Layout<S>,
    dim: usize,
    index: &S,
    d: &Decider,
) -> Result<Layout<S>, Transfer<S>> {
    geometry::select(layout, dim as i64, index, d).map_err(|e| {
        if e.kind == LayoutErrorKind::IndexOutOfRange {
            index_error(format!(
                "index {index} is out of bounds for dimension {dim} with size {}",
                layout.shape[dim]
            ))
        } else {
            Transfer::from_layout_error(e, OpErrorKind::IndexOutOfRange)
        }
    })
}

/// A slice entry; the step must be a literal (Python raises `ValueError` for steps ≤ 0).
fn slice<S: Size>(
    layout: &Layout<S>,
    dim: usize,
    parts: &SliceArg<S>,
    checked_bounds: bool,
    d: &Decider,
) -> Result<Layout<S>, Transfer<S>> {
    let bound = |part: &ArgValue<S>| -> Result<Option<S>, Transfer<S>> {
        match part {
            ArgValue::None => Ok(None),
            other => other
                .as_size()
                .map(Some)
                .ok_or_else(|| Transfer::unknown_tensor()),
        }
    };
    let step = match &parts.step {
        ArgValue::None => 1,
        other => other.as_i64().ok_or_else(|| Transfer::unknown_tensor())?,
    };
    if step == 0 {
        return Err(Transfer::error(
            OpErrorKind::InvalidArgument,
            "slice step cannot be zero",
        ));
    }
    if step < 0 {
        return Err(Transfer::error(
            OpErrorKind::InvalidArgument,
            "step must be greater than zero",
        ));
    }
    let (start, stop) = (bound(&parts.start)?, bound(&parts.stop)?);
    if checked_bounds && step == 1 {
        if let Some(within) = geometry::checked_range(layout, dim, start.as_ref(), stop.as_ref(), d)
        {
            return Ok(within);
        }
    }
    geometry::slice(layout, dim as i64, start.as_ref(), stop.as_ref(), step, d)
        .map_err(|e| Transfer::from_layout_error(e, OpErrorKind::IndexOutOfRange))
}

#[cfg(test)]
mod tests {
    use crate::layout::{Decider, Layout};
    use crate::ops::{apply, bind, ArgValue, OpResult, OpTable, Transfer};

    type A = ArgValue<i64>;

    fn get(input: Layout<i64>, index: Vec<A>) -> Transfer<i64> {
        let spec = OpTable::torch().method("__getitem__").unwrap();
        apply(
            spec,
            &bind(spec, Some(A::tensor(input)), index, vec![]).unwrap(),
            &Decider::concrete(),
        )
    }

    fn s(start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> A {
        A::slice(start, stop, step)
    }

    /// Observed on torch 2.15 with y = randn(4, 5): shape, strides and storage offset.
    #[test]
    fn basic_indexing_matches_torch() {
        let y = Layout::contiguous(vec![4i64, 5]);
        let case = |index: Vec<A>| {
            get(y.clone(), index)
                .layout()
                .map(|l| (l.shape.clone(), l.strides.clone(), l.offset))
        };
        assert_eq!(
            case(vec![s(Some(1), Some(3), None), s(None, None, Some(2))]),
            Some((vec![2, 3], vec![5, 2], 5))
        );
        assert_eq!(case(vec![A::Int(-1)]), Some((vec![5], vec![1], 15)));
        assert_eq!(
            case(vec![s(None, None, None), s(Some(-3), None, None)]),
            Some((vec![4, 3], vec![5, 1], 2))
        );
        assert_eq!(
            case(vec![s(Some(10), None, None)]),
            Some((vec![0, 5], vec![5, 1], 20))
        );
        assert_eq!(
            case(vec![s(None, None, None), s(Some(2), Some(1), None)]),
            Some((vec![4, 0], vec![5, 1], 2))
        );
        assert_eq!(
            case(vec![A::Ellipsis, A::Int(1)]),
            Some((vec![4], vec![5], 1))
        );
        assert_eq!(
            case(vec![A::None, s(None, None, None), A::None, A::Int(1)]),
            Some((vec![1, 4, 1], vec![20, 5, 5], 1))
        );
        assert_eq!(
            case(vec![A::Int(1), A::Ellipsis, A::Int(2)]),
            Some((vec![], vec![], 7))
        );
    }

    #[test]
    fn indexing_errors_match_torch() {
        let x = Layout::contiguous(vec![2i64, 3]);
        let msg = |index: Vec<A>| get(x.clone(), index).op_error().map(|e| e.message.clone());
        assert_eq!(
            msg(vec![A::Int(0), A::Int(0), A::Int(0)]).as_deref(),
            Some("too many indices for tensor of dimension 2")
        );
        assert_eq!(
            msg(vec![A::Int(5)]).as_deref(),
            Some("index 5 is out of bounds for dimension 0 with size 2")
        );
        assert_eq!(
            msg(vec![A::Int(-5)]).as_deref(),
            Some("index -5 is out of bounds for dimension 0 with size 2")
        );
        assert_eq!(
            msg(vec![s(None, None, None), A::Int(5)]).as_deref(),
            Some("index 5 is out of bounds for dimension 1 with size 3")
        );
        assert_eq!(
            msg(vec![s(None, None, Some(-1))]).as_deref(),
            Some("step must be greater than zero")
        );
        assert_eq!(
            msg(vec![s(None, None, Some(0))]).as_deref(),
            Some("slice step cannot be zero")
        );
        let scalar = get(Layout::scalar(), vec![A::Int(0)]);
        assert!(scalar
            .op_error()
            .unwrap()
            .message
            .starts_with("invalid index of a 0-dim tensor."));
        assert_eq!(
            get(Layout::scalar(), vec![A::None])
                .layout()
                .map(|l| l.shape.clone()),
            Some(vec![1])
        );
        // Advanced indexing: a fresh tensor whose layout is not modelled.
        assert_eq!(
            get(x, vec![A::ints(&[0, 1])]).result,
            OpResult::UnknownTensor
        );
    }
}
