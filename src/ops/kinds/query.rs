//! Queries whose result is a value, not a tensor: `x.size()`, `x.shape`, `x.size(d)`,
//! `x.dim()`, `x.numel()`, `x.stride()`, `x.is_contiguous()`, `len(x)`. With an unknown
//! layout the value is unknown.

use super::{memory_format_arg, Outcome};
use crate::layout::{Decider, Layout, LayoutError, MemoryFormat, Size, Tri};
use crate::ops::bind::BoundArgs;
use crate::ops::transfer::{OpErrorKind, Transfer};
use crate::ops::value::ArgValue;

/// The input's layout; unknown → an unknown value (not a tensor).
fn input<S: Size>(args: &BoundArgs<S>) -> Result<&Layout<S>, Transfer<S>> {
    args.get("input")
        .and_then(ArgValue::as_layout)
        .ok_or_else(Transfer::unknown)
}

fn ints<S: Size>(values: &[S]) -> ArgValue<S> {
    ArgValue::IntList(values.iter().cloned().map(ArgValue::Int).collect())
}

/// `x.size(d)` on a 0-d tensor: "Dimension specified as 0 but tensor has no dimensions".
fn wrap_existing<S: Size>(dim: i64, rank: usize) -> Result<usize, Transfer<S>> {
    let error = |e: LayoutError| Transfer::from_layout_error(e, OpErrorKind::DimOutOfRange);
    if rank == 0 {
        return Err(Transfer::error(
            OpErrorKind::DimOutOfRange,
            format!("Dimension specified as {dim} but tensor has no dimensions"),
        ));
    }
    crate::layout::wrap_dim(dim, rank).map_err(error)
}

/// A whole list (no `dim`) or one entry of it.
fn list_or_entry<S: Size>(args: &BoundArgs<S>, values: &[S], rank: usize) -> Outcome<S> {
    match args.get("dim") {
        None | Some(ArgValue::None) => Ok(Transfer::value(ints(values))),
        Some(dim) => {
            let dim = dim.as_i64().ok_or_else(Transfer::unknown)?;
            let d = wrap_existing(dim, rank)?;
            Ok(Transfer::value(ArgValue::Int(values[d].clone())))
        }
    }
}

pub fn size<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let layout = input(args)?;
    list_or_entry(args, &layout.shape, layout.rank())
}

pub fn stride<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let layout = input(args)?;
    list_or_entry(args, &layout.strides, layout.rank())
}

pub fn ndim<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    Ok(Transfer::value(ArgValue::Int(S::lit(
        input(args)?.rank() as i64
    ))))
}

pub fn numel<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    Ok(Transfer::value(ArgValue::Int(input(args)?.numel())))
}

pub fn is_contiguous<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let layout = input(args)?;
    let format = memory_format_arg(args)
        .map_err(|()| Transfer::unknown())?
        .unwrap_or(MemoryFormat::Contiguous);
    match layout.is_contiguous_in(format, d) {
        Tri::Unknown => Err(Transfer::unknown()),
        answer => Ok(Transfer::value(ArgValue::Bool(answer.is_yes()))),
    }
}

/// `len(x)`: the size of the first dim.
pub fn len<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let layout = input(args)?;
    match layout.shape.first() {
        Some(first) => Ok(Transfer::value(ArgValue::Int(first.clone()))),
        None => Err(Transfer::error(
            OpErrorKind::InvalidArgument,
            "len() of a 0-d tensor",
        )),
    }
}

#[cfg(test)]
mod tests {
    use crate::layout::{Decider, Layout};
    use crate::ops::kinds::test_support::{attribute, method, A};
    use crate::ops::{apply, bind, OpResult, OpTable};

    #[test]
    fn queries_answer_values() {
        let x = Layout::new(vec![2i64, 3, 4], vec![12, 1, 3], 0);
        assert_eq!(
            method("size", x.clone(), vec![]).result,
            OpResult::Size(A::ints(&[2, 3, 4]))
        );
        assert_eq!(
            attribute("shape", x.clone()).result,
            OpResult::Size(A::ints(&[2, 3, 4]))
        );
        assert_eq!(
            method("size", x.clone(), vec![A::Int(-1)]).result,
            OpResult::Size(A::Int(4))
        );
        assert_eq!(
            method("stride", x.clone(), vec![]).result,
            OpResult::Size(A::ints(&[12, 1, 3]))
        );
        assert_eq!(
            method("dim", x.clone(), vec![]).result,
            OpResult::Size(A::Int(3))
        );
        assert_eq!(
            attribute("ndim", x.clone()).result,
            OpResult::Size(A::Int(3))
        );
        assert_eq!(
            method("numel", x.clone(), vec![]).result,
            OpResult::Size(A::Int(24))
        );
        assert_eq!(
            method("is_contiguous", x.clone(), vec![]).result,
            OpResult::Size(A::Bool(false))
        );
        let e = method("size", Layout::scalar(), vec![A::Int(0)]);
        assert_eq!(
            e.op_error().map(|e| e.message.as_str()),
            Some("Dimension specified as 0 but tensor has no dimensions")
        );
        let len = OpTable::torch().function("len").unwrap();
        let t = apply(
            len,
            &bind(len, None, vec![A::tensor(x)], vec![]).unwrap(),
            &Decider::concrete(),
        );
        assert_eq!(t.result, OpResult::Size(A::Int(2)));
        let t = apply(
            len,
            &bind(len, None, vec![A::tensor(Layout::scalar())], vec![]).unwrap(),
            &Decider::concrete(),
        );
        assert_eq!(
            t.op_error().map(|e| e.message.as_str()),
            Some("len() of a 0-d tensor")
        );
        // Unknown layout: unknown value.
        let spec = OpTable::torch().method("size").unwrap();
        let t = apply(
            spec,
            &bind(spec, Some(A::Tensor(None)), vec![], vec![]).unwrap(),
            &Decider::concrete(),
        );
        assert_eq!(t.result, OpResult::Unknown);
    }
}
