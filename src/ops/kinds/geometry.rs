//! Pure geometry (spec §5): ops that always return a view and only rearrange sizes,
//! strides and the offset. Each reads its arguments and calls `crate::layout::geometry`.

use super::{
    int_arg, ints_arg, layout_outcome, size_arg, sizes_arg, target_shape, tensor_arg, Outcome,
};
use crate::layout::geometry;
use crate::layout::{Decider, Size};
use crate::ops::bind::BoundArgs;
use crate::ops::table::OpSpec;
use crate::ops::transfer::{OpErrorKind, Transfer};
use crate::ops::value::ArgValue;

use OpErrorKind::{ElementCount, InvalidArgument};

pub fn transpose<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    layout_outcome(
        geometry::transpose(input, int_arg(args, "dim0")?, int_arg(args, "dim1")?),
        InvalidArgument,
    )
}

/// `t()`: PyTorch's rank ≤ 2 transpose.
pub fn matrix_transpose<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    layout_outcome(geometry::t(tensor_arg(args, "input")?), InvalidArgument)
}

/// `.T`: reverse every dim.
pub fn reverse_dims<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    Ok(Transfer::tensor(geometry::numpy_t(tensor_arg(
        args, "input",
    )?)))
}

/// `.mT` / `.mH` / `adjoint()`: the last two dims swapped. The error names the spelling.
pub fn batch_transpose<S: Size>(spec: &OpSpec, args: &BoundArgs<S>) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    // Private stopgap, to move into `layout::geometry::mt`: torch 2.15 returns a 0-d
    // tensor itself for `.mT`/`.mH`/`adjoint()` (oracle chains), only 1-d is rejected.
    if input.rank() == 0 {
        return Ok(Transfer::tensor(input.clone()));
    }
    let result = match spec.variant.as_deref() {
        Some("adjoint") => geometry::adjoint(input),
        Some("mH") => geometry::mh(input),
        _ => geometry::mt(input),
    };
    layout_outcome(result, InvalidArgument)
}

pub fn permute<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    layout_outcome(
        geometry::permute(input, &ints_arg(args, "dims")?),
        InvalidArgument,
    )
}

pub fn movedim<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let source = ints_arg(args, "source")?;
    let destination = ints_arg(args, "destination")?;
    layout_outcome(
        geometry::movedim(input, &source, &destination),
        InvalidArgument,
    )
}

/// `squeeze()` (every size-1 dim), `squeeze(d)`, `squeeze((d0, d1))`.
pub fn squeeze<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let result = match args.get("dim") {
        None | Some(ArgValue::None) => geometry::squeeze(input, d),
        Some(ArgValue::IntList(_)) => geometry::squeeze_dims(input, &ints_arg(args, "dim")?, d),
        Some(_) => geometry::squeeze_dim(input, int_arg(args, "dim")?, d),
    };
    layout_outcome(result, InvalidArgument)
}

pub fn unsqueeze<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    layout_outcome(
        geometry::unsqueeze(input, int_arg(args, "dim")?),
        InvalidArgument,
    )
}

/// `torch.view_as_real(z)`: the complex elements' halves become a last dim of size 2 and
/// stride 1, in units of the real dtype, so every other stride and the offset double.
pub fn view_as_real<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let two = S::lit(2);
    let mut out = input.clone();
    out.strides = input.strides.iter().map(|s| s.mul(&two)).collect();
    out.offset = input.offset.mul(&two);
    out.shape.push(two);
    out.strides.push(S::lit(1));
    Ok(Transfer::tensor(out))
}

/// `expand(*sizes)` / `expand_as(other)` / `broadcast_to(shape)`.
pub fn expand<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let sizes = target_shape(args, &["size"])?;
    layout_outcome(geometry::expand(input, &sizes, d), ElementCount)
}

pub fn narrow<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let (dim, start, length) = (
        int_arg(args, "dim")?,
        size_arg(args, "start")?,
        size_arg(args, "length")?,
    );
    layout_outcome(
        geometry::narrow(input, dim, &start, &length, d),
        InvalidArgument,
    )
}

pub fn select<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    layout_outcome(
        geometry::select(input, int_arg(args, "dim")?, &size_arg(args, "index")?, d),
        InvalidArgument,
    )
}

pub fn diagonal<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let (offset, dim1, dim2) = (
        int_arg(args, "offset")?,
        int_arg(args, "dim1")?,
        int_arg(args, "dim2")?,
    );
    layout_outcome(
        geometry::diagonal(input, offset, dim1, dim2, d),
        InvalidArgument,
    )
}

/// `Tensor.unfold(dimension, size, step)`: a sliding-window view.
pub fn unfold<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let (dim, size, step) = (
        int_arg(args, "dimension")?,
        size_arg(args, "size")?,
        size_arg(args, "step")?,
    );
    layout_outcome(
        geometry::unfold(input, dim, &size, &step, d),
        InvalidArgument,
    )
}

pub fn as_strided<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let shape = sizes_arg(args, "size")?;
    let strides = sizes_arg(args, "stride")?;
    let offset = match args.get("storage_offset") {
        None | Some(ArgValue::None) => None,
        Some(_) => Some(size_arg(args, "storage_offset")?),
    };
    layout_outcome(
        geometry::as_strided(input, &shape, &strides, offset.as_ref(), d),
        InvalidArgument,
    )
}

/// `torch.meshgrid(*tensors, indexing="ij" | "xy")`; torch's default (no `indexing`) is "ij".
pub fn meshgrid<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let inputs = super::tensors_arg(args)?;
    let xy = match args.get("indexing") {
        Some(ArgValue::Str(s)) if s == "xy" => true,
        Some(ArgValue::Str(s)) if s == "ij" => false,
        None | Some(ArgValue::None) => false,
        Some(ArgValue::Str(s)) => {
            return Err(Transfer::error(
                InvalidArgument,
                format!(
                    "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {s}"
                ),
            ))
        }
        _ => return Err(Transfer::unknown_tensor()),
    };
    let result = geometry::meshgrid(&inputs, xy, d);
    Ok(Transfer::tensors(
        result.map_err(super::fail(InvalidArgument))?,
    ))
}

#[cfg(test)]
mod tests {
    use crate::layout::Layout;
    use crate::ops::kinds::test_support::{attribute, method, A};
    use crate::ops::OpErrorKind;

    fn l(shape: &[i64], strides: &[i64], offset: i64) -> Layout<i64> {
        Layout::new(shape.to_vec(), strides.to_vec(), offset)
    }

    /// Spec §3.3 / §5 facts.
    #[test]
    fn geometry_facts_from_the_spec() {
        let x = Layout::contiguous(vec![2i64, 4, 3]);
        assert_eq!(
            method("transpose", x.clone(), vec![A::Int(1), A::Int(2)]).layout(),
            Some(&l(&[2, 3, 4], &[12, 1, 3], 0))
        );
        assert_eq!(
            method("swapaxes", x.clone(), vec![A::Int(-1), A::Int(-2)]).layout(),
            Some(&l(&[2, 3, 4], &[12, 1, 3], 0))
        );
        // (2,3,4).unsqueeze(0) → stride 24; (4,3,2)/(1,4,12).unsqueeze(1) → stride 12.
        assert_eq!(
            method(
                "unsqueeze",
                Layout::contiguous(vec![2, 3, 4]),
                vec![A::Int(0)]
            )
            .layout(),
            Some(&l(&[1, 2, 3, 4], &[24, 12, 4, 1], 0))
        );
        assert_eq!(
            method("unsqueeze", l(&[4, 3, 2], &[1, 4, 12], 0), vec![A::Int(1)]).layout(),
            Some(&l(&[4, 1, 3, 2], &[1, 12, 4, 12], 0))
        );
        // (3,1).expand(1,3,4) → (3,1,0); .expand(2,3,4) → (0,1,0).
        assert_eq!(
            method(
                "expand",
                Layout::contiguous(vec![3, 1]),
                vec![A::Int(1), A::Int(3), A::Int(4)]
            )
            .layout(),
            Some(&l(&[1, 3, 4], &[3, 1, 0], 0))
        );
        assert_eq!(
            method(
                "expand",
                Layout::contiguous(vec![3, 1]),
                vec![A::ints(&[2, 3, 4])]
            )
            .layout(),
            Some(&l(&[2, 3, 4], &[0, 1, 0], 0))
        );
        // chunk(rand(4,7), 3, 1) → [4,3], [4,3], [4,1].
        let t = method(
            "chunk",
            Layout::contiguous(vec![4, 7]),
            vec![A::Int(3), A::Int(1)],
        );
        let shapes: Vec<Vec<i64>> = match t.result {
            crate::ops::OpResult::Tensors(v) => v.into_iter().map(|l| l.shape).collect(),
            other => panic!("{other:?}"),
        };
        assert_eq!(shapes, vec![vec![4, 3], vec![4, 3], vec![4, 1]]);
        // t() on 3-D is an error; .T reverses; .mT on 1-D is an error.
        let t = method("t", x.clone(), vec![]);
        assert_eq!(
            t.op_error().map(|e| e.message.as_str()),
            Some("t() expects a tensor with <= 2 dimensions, but self is 3D")
        );
        assert_eq!(
            attribute("T", x.clone()).layout(),
            Some(&l(&[3, 4, 2], &[1, 3, 12], 0))
        );
        let t = attribute("mT", Layout::contiguous(vec![5]));
        assert_eq!(
            t.op_error().map(|e| e.message.as_str()),
            Some("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")
        );
        assert_eq!(
            attribute("mT", x.clone()).layout(),
            Some(&l(&[2, 3, 4], &[12, 1, 3], 0))
        );
    }

    #[test]
    fn dims_and_permutations_are_checked() {
        let x = Layout::contiguous(vec![2i64, 3]);
        let t = method("transpose", x.clone(), vec![A::Int(0), A::Int(2)]);
        assert_eq!(
            t.op_error().map(|e| e.kind),
            Some(OpErrorKind::DimOutOfRange)
        );
        let t = method("permute", x.clone(), vec![A::Int(0), A::Int(0)]);
        assert_eq!(
            t.op_error().map(|e| e.kind),
            Some(OpErrorKind::InvalidPermutation)
        );
        // permute(*dims) and permute(dims) are the same call.
        assert_eq!(
            method("permute", x.clone(), vec![A::ints(&[1, 0])]),
            method("permute", x.clone(), vec![A::Int(1), A::Int(0)])
        );
        // movedim(0, -1) on (2,3,4): (3,4,2).
        let t = method(
            "movedim",
            Layout::contiguous(vec![2, 3, 4]),
            vec![A::Int(0), A::Int(-1)],
        );
        assert_eq!(t.layout(), Some(&l(&[3, 4, 2], &[4, 1, 12], 0)));
        // A symbolic (non-literal) dim cannot be decided.
        let t = method("transpose", x, vec![A::Unknown, A::Int(1)]);
        assert_eq!(t.result, crate::ops::OpResult::Unknown);
    }

    #[test]
    fn narrow_select_and_squeeze_move_the_offset_or_drop_dims() {
        let x = Layout::contiguous(vec![4i64, 6]);
        assert_eq!(
            method("narrow", x.clone(), vec![A::Int(1), A::Int(2), A::Int(3)]).layout(),
            Some(&l(&[4, 3], &[6, 1], 2))
        );
        assert_eq!(
            method("select", x.clone(), vec![A::Int(0), A::Int(-1)]).layout(),
            Some(&l(&[6], &[1], 18))
        );
        let y = l(&[2, 1, 3, 1], &[3, 3, 1, 1], 0);
        assert_eq!(
            method("squeeze", y.clone(), vec![]).layout(),
            Some(&l(&[2, 3], &[3, 1], 0))
        );
        assert_eq!(
            method("squeeze", y.clone(), vec![A::Int(1)]).layout(),
            Some(&l(&[2, 3, 1], &[3, 1, 1], 0))
        );
        assert_eq!(
            method("squeeze", y, vec![A::ints(&[1, 3])]).layout(),
            Some(&l(&[2, 3], &[3, 1], 0))
        );
    }
}
