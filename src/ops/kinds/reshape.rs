//! The view/reshape family and the ops that may return their input or a copy of it
//! (spec §2–§5): `view`, `reshape`, `flatten`, `unflatten`, `ravel`, `contiguous`, `clone`,
//! dtype/device conversions, aliases and in-place ops.

use super::{
    fail, int_arg, layout_outcome, memory_format_arg, sizes_arg, target_shape, tensor_arg, Outcome,
};
use crate::layout::dense::{clone_with_format, to_with_format};
use crate::layout::elementwise::broadcast_shapes;
use crate::layout::{
    self, infer_size, Decider, Layout, MaybeCopy, MemoryFormat, Size, Tri, ViewOutcome, E_VIEW,
};
use crate::ops::bind::BoundArgs;
use crate::ops::shape_rules::torch_list;
use crate::ops::table::OpSpec;
use crate::ops::transfer::{OpErrorKind, Transfer};
use crate::ops::value::ArgValue;

/// A view-or-copy result as a transfer.
fn maybe_copy<S: Size>(result: MaybeCopy<S>, input: &Layout<S>) -> Transfer<S> {
    let numel = input.numel();
    match result.layout {
        Some(layout) => Transfer::tensor(layout).with_copy(result.copies, numel),
        None => Transfer::unknown_tensor().with_copy(result.copies, numel),
    }
}

/// `view(shape)` / `view_as(other)`.
pub fn view<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let shape = target_shape(args, &["size"])?;
    Ok(match layout::view(input, &shape, d) {
        ViewOutcome::View(layout) => Transfer::tensor(layout),
        ViewOutcome::InvalidShape(error) => Transfer::from_shape_error(error),
        ViewOutcome::NotViewable { .. } => Transfer::error(OpErrorKind::ViewIncompatible, E_VIEW),
        ViewOutcome::Unknown => Transfer::unknown(),
    })
}

/// `reshape(shape)` / `reshape_as(other)`: a view when possible, else a contiguous copy.
pub fn reshape<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let shape = target_shape(args, &["shape"])?;
    // Resolve `-1` first so that shape errors keep their precise kind.
    let resolved = infer_size(&shape, &input.numel(), d).map_err(Transfer::from_shape_error)?;
    let result = layout::reshape(input, &resolved, d).map_err(fail(OpErrorKind::ElementCount))?;
    Ok(maybe_copy(result, input))
}

pub fn flatten<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let start = int_arg(args, "start_dim")?;
    let end = int_arg(args, "end_dim")?;
    let result = layout::flatten(input, start, end, d).map_err(fail(OpErrorKind::ElementCount))?;
    Ok(maybe_copy(result, input))
}

pub fn unflatten<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let dim = int_arg(args, "dim")?;
    let sizes = sizes_arg(args, "sizes").map_err(|_| Transfer::unknown_tensor())?;
    layout_outcome(
        layout::unflatten(input, dim, &sizes, d),
        OpErrorKind::ElementCount,
    )
}

pub fn ravel<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    Ok(maybe_copy(layout::ravel(input, d), input))
}

/// `contiguous(memory_format=contiguous_format)`: the input itself or a copy.
pub fn contiguous<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    // A format the linter cannot read may ask for a copy.
    let format = memory_format_arg(args)
        .map_err(|()| Transfer::unknown())?
        .unwrap_or(MemoryFormat::Contiguous);
    let result = layout::contiguous_in_format(input, format, d)
        .map_err(fail(OpErrorKind::InvalidArgument))?;
    Ok(maybe_copy(result, input))
}

/// `clone(memory_format=preserve_format)`: always a new tensor (spec §5 "Copying ops").
pub fn clone<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let numel = input.numel();
    let copy = |t: Transfer<S>| t.with_copy(Tri::Yes, numel.clone());
    let format = memory_format_arg(args)
        .map_err(|()| copy(Transfer::unknown_tensor()))?
        .unwrap_or(MemoryFormat::Preserve);
    match clone_with_format(input, format, d) {
        Ok(layout) => Ok(copy(Transfer::tensor(layout))),
        Err(e) if e.is_undecided() => Ok(copy(Transfer::unknown_tensor())),
        Err(e) => Err(Transfer::from_layout_error(e, OpErrorKind::InvalidArgument)),
    }
}

/// dtype / device conversions (`to`, `float()`, `type_as`, `cuda()`…): the input itself when
/// nothing changes, else a `preserve_format` copy. Whether the dtype or device changes is
/// unknown to a static analysis, so the layout is known exactly when both outcomes agree
/// (a dense input at offset 0); `copy=True` forces the copy.
pub fn convert<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let unknown = || Transfer::unknown_tensor().with_copy(Tri::Unknown, input.numel());
    let format = memory_format_arg(args)
        .map_err(|()| unknown())?
        .unwrap_or(MemoryFormat::Preserve);
    let forced_copy = matches!(args.get("copy"), Some(ArgValue::Bool(true)));
    let if_converting = to_with_format(input, format, true, d);
    let outcome = if forced_copy {
        if_converting
    } else {
        match (to_with_format(input, format, false, d), if_converting) {
            (Ok(same), Ok(converted))
                if same.layout.is_some() && same.layout == converted.layout =>
            {
                let copies = if same.copies == converted.copies {
                    same.copies
                } else {
                    Tri::Unknown
                };
                Ok(MaybeCopy { copies, ..same })
            }
            (Err(e), _) | (_, Err(e)) if !e.is_undecided() => Err(e),
            _ => return Err(unknown()),
        }
    };
    match outcome {
        Ok(result) => Ok(maybe_copy(result, input)),
        Err(e) if e.is_undecided() => Err(unknown()),
        Err(e) => Err(Transfer::from_layout_error(e, OpErrorKind::InvalidArgument)),
    }
}

/// Same geometry (`detach`, `alias`, `nn.Identity`, `x.data`).
pub fn alias<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    Ok(Transfer::tensor(tensor_arg(args, "input")?.clone()))
}

/// The message PyTorch gives when an in-place op writes to overlapping elements.
const E_INTERNAL_OVERLAP: &str = "unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.";

/// In-place ops return their receiver, whose strides do not change. They fail (torch 2.15)
/// when the receiver has overlapping elements — ATen's `has_internal_overlap`: not
/// non-overlapping-and-dense, with a stride-0 dim of size > 1 — unless the variant is
/// `no_overlap_check` (fills), and when a tensor operand does not broadcast to the
/// receiver's own shape.
pub fn in_place<S: Size>(spec: &OpSpec, args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let target = tensor_arg(args, "input")?;
    if spec.variant.as_deref() == Some("indexed") {
        return Ok(Transfer::tensor(target.clone()));
    }
    if spec.variant.as_deref() != Some("no_overlap_check") {
        let expanded_dim = target
            .shape
            .iter()
            .zip(&target.strides)
            .fold(Tri::No, |acc, (size, stride)| {
                acc.or(d.eq_lit(stride, 0).and(d.lt(&S::lit(1), size)))
            });
        match target
            .is_non_overlapping_and_dense(d)
            .not()
            .and(expanded_dim)
        {
            Tri::Yes => {
                return Err(Transfer::error(
                    OpErrorKind::InvalidArgument,
                    E_INTERNAL_OVERLAP,
                ))
            }
            Tri::Unknown => return Err(Transfer::unknown()),
            Tri::No => {}
        }
    }
    let positional = match args.get("args") {
        Some(ArgValue::IntList(items)) => items.as_slice(),
        _ => &[],
    };
    let keywords = args.extra_keywords().iter().map(|(_, v)| v);
    for operand in positional
        .iter()
        .chain(keywords)
        .filter_map(ArgValue::as_layout)
    {
        let shape = broadcast_shapes(&target.shape, &operand.shape, d)
            .map_err(|e| Transfer::from_layout_error(e, OpErrorKind::Broadcast))?;
        let same = if shape.len() != target.rank() {
            Tri::No
        } else {
            shape
                .iter()
                .zip(&target.shape)
                .fold(Tri::Yes, |acc, (a, b)| acc.and(d.eq(a, b)))
        };
        match same {
            Tri::Yes => {}
            Tri::No => {
                return Err(Transfer::error(
                    OpErrorKind::Broadcast,
                    format!(
                        "output with shape {} doesn't match the broadcast shape {}",
                        torch_list(&target.shape),
                        torch_list(&shape)
                    ),
                ))
            }
            Tri::Unknown => return Err(Transfer::unknown()),
        }
    }
    Ok(Transfer::tensor(target.clone()))
}

#[cfg(test)]
mod tests {
    use crate::layout::{Decider, Layout, Tri};
    use crate::ops::{apply, bind, ArgValue, OpErrorKind, OpResult, OpTable};

    type A = ArgValue<i64>;

    fn l(shape: &[i64], strides: &[i64]) -> Layout<i64> {
        Layout::new(shape.to_vec(), strides.to_vec(), 0)
    }

    fn call(method: &str, input: Layout<i64>, args: Vec<A>) -> crate::ops::Transfer<i64> {
        let spec = OpTable::torch().method(method).unwrap();
        let bound = bind(spec, Some(A::tensor(input)), args, vec![]).unwrap();
        apply(spec, &bound, &Decider::concrete())
    }

    /// Conformance rows 38, 50, 52, 17 and 36 (spec §13).
    #[test]
    fn view_and_reshape_follow_the_conformance_table() {
        // row 38: (4,15)/(1,4) view(20,3) → E_VIEW; reshape copies.
        let t = call("view", l(&[4, 15], &[1, 4]), vec![A::Int(20), A::Int(3)]);
        assert_eq!(
            t.op_error().map(|e| e.kind),
            Some(OpErrorKind::ViewIncompatible)
        );
        let t = call("reshape", l(&[4, 15], &[1, 4]), vec![A::ints(&[20, 3])]);
        assert_eq!(
            (t.layout().cloned(), t.copies, t.copied_numel),
            (Some(l(&[20, 3], &[3, 1])), Tri::Yes, Some(60))
        );
        // row 52: sliced (2,3,4)/(24,4,1) view(2,12) → strides (24,1), no copy.
        let t = call(
            "view",
            l(&[2, 3, 4], &[24, 4, 1]),
            vec![A::Int(2), A::Int(12)],
        );
        assert_eq!(t.layout(), Some(&l(&[2, 12], &[24, 1])));
        let t = call(
            "reshape",
            l(&[2, 3, 4], &[24, 4, 1]),
            vec![A::Int(2), A::Int(-1)],
        );
        assert_eq!(
            (t.layout().cloned(), t.copies),
            (Some(l(&[2, 12], &[24, 1])), Tri::No)
        );
        // row 36: two -1.
        let t = call("reshape", l(&[3, 3], &[3, 1]), vec![A::Int(-1), A::Int(-1)]);
        assert_eq!(t.op_error().map(|e| e.kind), Some(OpErrorKind::TwoInferred));
        // row 6: (15).view(7, -1)
        let t = call("view", l(&[15], &[1]), vec![A::Int(7), A::Int(-1)]);
        assert_eq!(
            t.op_error().map(|e| e.message.as_str()),
            Some("shape '[7, -1]' is invalid for input of size 15")
        );
    }

    #[test]
    fn view_as_takes_the_other_tensors_shape() {
        let t = call(
            "view_as",
            l(&[2, 3, 4], &[12, 4, 1]),
            vec![A::tensor(l(&[6, 4], &[4, 1]))],
        );
        assert_eq!(t.layout(), Some(&l(&[6, 4], &[4, 1])));
        let t = call("view_as", l(&[2, 3, 4], &[12, 4, 1]), vec![A::Tensor(None)]);
        assert_eq!(t.result, OpResult::UnknownTensor);
    }

    /// TV test_flatten_nonview / test_flatten_view (spec §13).
    #[test]
    fn flatten_copies_exactly_when_the_merge_crosses_chunks() {
        let t = call(
            "flatten",
            l(&[2, 3, 3, 2], &[18, 6, 1, 3]),
            vec![A::Int(1), A::Int(3)],
        );
        assert_eq!(
            (t.layout().cloned(), t.copies),
            (Some(l(&[2, 18], &[18, 1])), Tri::Yes)
        );
        let t = call(
            "flatten",
            l(&[1, 2, 4, 3], &[24, 12, 1, 4]),
            vec![A::Int(0), A::Int(1)],
        );
        assert_eq!(
            (t.layout().cloned(), t.copies),
            (Some(l(&[2, 4, 3], &[12, 1, 4])), Tri::No)
        );
    }

    /// TV test_ravel: a strided 1-D tensor copies although reshape(-1) would be a view.
    #[test]
    fn ravel_and_contiguous_copy_non_contiguous_inputs() {
        let t = call("ravel", l(&[5], &[2]), vec![]);
        assert_eq!(
            (t.layout().cloned(), t.copies),
            (Some(l(&[5], &[1])), Tri::Yes)
        );
        let t = call("contiguous", l(&[3, 2], &[1, 3]), vec![]);
        assert_eq!(
            (t.layout().cloned(), t.copies),
            (Some(l(&[3, 2], &[2, 1])), Tri::Yes)
        );
        let t = call("contiguous", l(&[3, 2], &[2, 1]), vec![]);
        assert_eq!(t.copies, Tri::No);
    }

    /// Spec §5: clone of non-dense (2,4,3)/(1,12,4) → (1,6,2); `float()` on a dense
    /// transposed tensor keeps its strides whether or not the dtype changes.
    #[test]
    fn clone_and_conversions_preserve_the_memory_format() {
        let t = call("clone", l(&[2, 4, 3], &[1, 12, 4]), vec![]);
        assert_eq!(
            (t.layout().cloned(), t.copies),
            (Some(l(&[2, 4, 3], &[1, 6, 2])), Tri::Yes)
        );
        let t = call("float", l(&[3, 2], &[1, 3]), vec![]);
        assert_eq!(
            (t.layout().cloned(), t.copies),
            (Some(l(&[3, 2], &[1, 3])), Tri::Unknown)
        );
        // Non-dense: `self` keeps its strides, a converted copy is dense — unknown.
        let t = call("half", l(&[2, 4, 3], &[1, 12, 4]), vec![]);
        assert_eq!(t.result, OpResult::UnknownTensor);
        // copy=True always copies.
        let spec = OpTable::torch().method("to").unwrap();
        let bound = bind(
            spec,
            Some(A::tensor(l(&[2, 4, 3], &[1, 12, 4]))),
            vec![],
            vec![("copy".into(), A::Bool(true))],
        )
        .unwrap();
        let t = apply(spec, &bound, &Decider::concrete());
        assert_eq!(
            (t.layout().cloned(), t.copies),
            (Some(l(&[2, 4, 3], &[1, 6, 2])), Tri::Yes)
        );
    }
}
