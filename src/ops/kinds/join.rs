//! Ops that build a new tensor from pieces of others (spec §5 "Copying ops", torch 2.15):
//! `cat`/`stack`/`hstack`/`vstack`, `repeat`/`tile`/`repeat_interleave`, `index_select`,
//! `gather`. Their outputs are fresh and contiguous (`cat` keeps a channels-last format
//! when every input suggests it).

use super::{int_arg, size_arg, tensor_arg, tensors_arg, Outcome};
use crate::layout::{strides_for_format, Decider, Layout, MemoryFormat, Size};
use crate::ops::bind::BoundArgs;
use crate::ops::shape_rules::{cat_shape, product, stack_shape};
use crate::ops::transfer::{OpErrorKind, Transfer};
use crate::ops::value::ArgValue;

fn shape_error<S: Size>(e: crate::layout::LayoutError) -> Transfer<S> {
    Transfer::from_layout_error(e, OpErrorKind::ElementCount)
}

/// `cat`'s output memory format: channels-last only if every input suggests it.
fn cat_layout<S: Size>(
    inputs: &[&Layout<S>],
    shape: Vec<S>,
    d: &Decider,
) -> Result<Layout<S>, Transfer<S>> {
    let unknown = || Transfer::unknown_tensor();
    let mut common: Option<MemoryFormat> = None;
    for input in inputs {
        let format = input.suggest_memory_format(d).ok_or_else(unknown)?;
        common = match common {
            None => Some(format),
            Some(f) if f == format => Some(f),
            Some(_) => Some(MemoryFormat::Contiguous),
        };
    }
    let format = common.unwrap_or(MemoryFormat::Contiguous);
    let strides = strides_for_format(&shape, format).map_err(|_| unknown())?;
    Ok(Layout::new(shape, strides, S::lit(0)))
}

pub fn cat<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let inputs = tensors_arg(args)?;
    let dim = int_arg(args, "dim")?;
    let shapes: Vec<&[S]> = inputs.iter().map(|l| l.shape.as_slice()).collect();
    let shape = cat_shape(&shapes, dim, d).map_err(shape_error)?;
    Ok(Transfer::tensor(cat_layout(&inputs, shape, d)?))
}

/// `stack`: `cat` of the inputs unsqueezed at `dim` — contiguous (torch 2.15).
pub fn stack<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let inputs = tensors_arg(args)?;
    let dim = int_arg(args, "dim")?;
    let shapes: Vec<&[S]> = inputs.iter().map(|l| l.shape.as_slice()).collect();
    let shape = stack_shape(&shapes, dim, d).map_err(shape_error)?;
    Ok(Transfer::tensor(Layout::contiguous(shape)))
}

/// `hstack`: `atleast_1d`, then `cat` along dim 0 for 1-D inputs and dim 1 otherwise.
pub fn hstack<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let inputs = tensors_arg(args)?;
    let lifted: Vec<Vec<S>> = inputs
        .iter()
        .map(|l| {
            if l.rank() == 0 {
                vec![S::lit(1)]
            } else {
                l.shape.clone()
            }
        })
        .collect();
    let dim = if lifted.first().is_some_and(|s| s.len() == 1) {
        0
    } else {
        1
    };
    let shapes: Vec<&[S]> = lifted.iter().map(Vec::as_slice).collect();
    let shape = cat_shape(&shapes, dim, d).map_err(shape_error)?;
    Ok(Transfer::tensor(Layout::contiguous(shape)))
}

/// `vstack`: `atleast_2d` (a 1-D `(n,)` becomes `(1, n)`), then `cat` along dim 0.
pub fn vstack<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let inputs = tensors_arg(args)?;
    let lifted: Vec<Vec<S>> = inputs
        .iter()
        .map(|l| match l.rank() {
            0 => vec![S::lit(1), S::lit(1)],
            1 => vec![S::lit(1), l.shape[0].clone()],
            _ => l.shape.clone(),
        })
        .collect();
    let shapes: Vec<&[S]> = lifted.iter().map(Vec::as_slice).collect();
    let shape = cat_shape(&shapes, 0, d).map_err(shape_error)?;
    Ok(Transfer::tensor(Layout::contiguous(shape)))
}

/// The shape of `repeat(repeats)` on a tensor of `shape` (repeats at least as long).
fn repeated<S: Size>(shape: &[S], repeats: &[S]) -> Result<Vec<S>, Transfer<S>> {
    if repeats.len() < shape.len() {
        return Err(Transfer::error(
            OpErrorKind::InvalidArgument,
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
        ));
    }
    let padding = repeats.len() - shape.len();
    Ok(repeats
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if i < padding {
                r.clone()
            } else {
                shape[i - padding].mul(r)
            }
        })
        .collect())
}

pub fn repeat<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let repeats = args
        .get("repeats")
        .and_then(ArgValue::as_sizes)
        .ok_or_else(|| Transfer::unknown_tensor())?;
    Ok(Transfer::tensor(Layout::contiguous(repeated(
        &input.shape,
        &repeats,
    )?)))
}

/// `tile(dims)`: `repeat` after padding `dims` with leading ones to the input's rank.
pub fn tile<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let mut dims = args
        .get("dims")
        .and_then(ArgValue::as_sizes)
        .ok_or_else(|| Transfer::unknown_tensor())?;
    if dims.len() < input.rank() {
        let mut padded = vec![S::lit(1); input.rank() - dims.len()];
        padded.append(&mut dims);
        dims = padded;
    }
    Ok(Transfer::tensor(Layout::contiguous(repeated(
        &input.shape,
        &dims,
    )?)))
}

/// `repeat_interleave(int, dim)`: `dim` grows `repeats` times (no dim: flattened first).
pub fn repeat_interleave<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let repeats = size_arg(args, "repeats").map_err(|_| Transfer::unknown_tensor())?;
    let shape = match args.get("dim") {
        None | Some(ArgValue::None) => vec![input.numel().mul(&repeats)],
        Some(_) => {
            let dim = int_arg(args, "dim")?;
            let d = crate::layout::wrap_dim(dim, input.rank()).map_err(shape_error)?;
            let mut shape = input.shape.clone();
            if let Some(size) = shape.get_mut(d) {
                *size = size.mul(&repeats);
            }
            shape
        }
    };
    Ok(Transfer::tensor(Layout::contiguous(shape)))
}

/// `index_select(dim, index)`: `dim` becomes `index.numel()`.
pub fn index_select<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let index = tensor_arg(args, "index")?;
    if index.rank() > 1 {
        return Err(Transfer::error(
            OpErrorKind::InvalidArgument,
            "index_select(): Index is supposed to be a vector",
        ));
    }
    let d = crate::layout::wrap_dim(int_arg(args, "dim")?, input.rank()).map_err(shape_error)?;
    let mut shape = input.shape.clone();
    if let Some(size) = shape.get_mut(d) {
        *size = product(&index.shape);
    }
    Ok(Transfer::tensor(Layout::contiguous(shape)))
}

/// `gather(dim, index)`: the output has the index's shape.
pub fn gather<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let index = tensor_arg(args, "index")?;
    crate::layout::wrap_dim(int_arg(args, "dim")?, input.rank()).map_err(shape_error)?;
    Ok(Transfer::tensor(Layout::contiguous(index.shape.clone())))
}

#[cfg(test)]
mod tests {
    use crate::layout::Layout;
    use crate::ops::kinds::test_support::{function, method, A};
    use crate::ops::Transfer;

    fn l(shape: &[i64], strides: &[i64]) -> Layout<i64> {
        Layout::new(shape.to_vec(), strides.to_vec(), 0)
    }

    fn list(layouts: &[Layout<i64>]) -> A {
        A::TensorList(layouts.iter().cloned().map(Some).collect())
    }

    /// torch 2.15 (spec §5): cat/stack of transposed inputs are contiguous; cat keeps
    /// channels-last when every input is channels-last.
    #[test]
    fn joins_are_fresh_tensors() {
        let xt = l(&[2, 3, 5, 4], &[60, 5, 1, 15]);
        assert_eq!(
            function(
                "torch.cat",
                vec![list(&[xt.clone(), xt.clone()]), A::Int(1)],
                vec![]
            )
            .layout(),
            Some(&Layout::contiguous(vec![2, 6, 5, 4]))
        );
        assert_eq!(
            function(
                "torch.stack",
                vec![list(&[xt.clone(), xt.clone()])],
                vec![("dim", A::Int(1))]
            )
            .layout(),
            Some(&Layout::contiguous(vec![2, 2, 3, 5, 4]))
        );
        let cl = l(&[2, 3, 5, 4], &[60, 1, 12, 3]);
        assert_eq!(
            function("torch.cat", vec![list(&[cl.clone(), cl.clone()])], vec![]).layout(),
            Some(&l(&[4, 3, 5, 4], &[60, 1, 12, 3]))
        );
        assert_eq!(
            function("torch.cat", vec![list(&[cl, xt])], vec![]).layout(),
            Some(&Layout::contiguous(vec![4, 3, 5, 4]))
        );
        assert_eq!(
            function(
                "torch.hstack",
                vec![list(&[
                    Layout::contiguous(vec![3]),
                    Layout::contiguous(vec![4])
                ])],
                vec![]
            )
            .layout(),
            Some(&Layout::contiguous(vec![7]))
        );
        assert_eq!(
            function(
                "torch.hstack",
                vec![list(&[
                    Layout::contiguous(vec![2, 3]),
                    Layout::contiguous(vec![2, 4])
                ])],
                vec![]
            )
            .layout(),
            Some(&Layout::contiguous(vec![2, 7]))
        );
        assert_eq!(
            function(
                "torch.vstack",
                vec![list(&[
                    Layout::contiguous(vec![3]),
                    Layout::contiguous(vec![3])
                ])],
                vec![]
            )
            .layout(),
            Some(&Layout::contiguous(vec![2, 3]))
        );
    }

    /// Shapes observed on torch 2.15.
    #[test]
    fn repeats_and_gathers() {
        let x = Layout::contiguous(vec![2i64, 3]);
        let shape = |t: Transfer<i64>| t.layout().map(|l| l.shape.clone());
        assert_eq!(
            shape(method(
                "repeat",
                x.clone(),
                vec![A::Int(4), A::Int(1), A::Int(2)]
            )),
            Some(vec![4, 2, 6])
        );
        assert_eq!(
            shape(method("tile", x.clone(), vec![A::ints(&[2])])),
            Some(vec![2, 6])
        );
        assert_eq!(
            shape(method(
                "tile",
                x.clone(),
                vec![A::Int(2), A::Int(1), A::Int(1)]
            )),
            Some(vec![2, 2, 3])
        );
        assert_eq!(
            shape(method("repeat_interleave", x.clone(), vec![A::Int(2)])),
            Some(vec![12])
        );
        assert_eq!(
            shape(method(
                "repeat_interleave",
                x.clone(),
                vec![A::Int(2), A::Int(1)]
            )),
            Some(vec![2, 6])
        );
        let e = method("repeat", x.clone(), vec![A::Int(2)]);
        assert_eq!(e.op_error().map(|e| e.message.as_str()), Some("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"));
        assert_eq!(
            shape(method(
                "index_select",
                x.clone(),
                vec![A::Int(1), A::tensor(Layout::contiguous(vec![2]))]
            )),
            Some(vec![2, 2])
        );
        assert_eq!(
            shape(method(
                "gather",
                x,
                vec![A::Int(1), A::tensor(Layout::contiguous(vec![2, 1]))]
            )),
            Some(vec![2, 1])
        );
    }
}
