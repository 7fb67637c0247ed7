//! The transfer functions: one per [`OpKind`](super::OpKind), grouped by family.
//!
//! Every transfer function has the shape
//! `fn(spec, args, decider) -> Result<Transfer<S>, Transfer<S>>`: the `Err` side is an early
//! exit carrying the final answer (an unknown input, a non-literal dim, a layout error), so
//! the happy path reads top to bottom with `?`. [`super::apply`] unwraps both sides.
//!
//! Transfer functions never re-implement the stride algebra: they read arguments, call
//! `crate::layout`, and translate its answers (errors, undecidable comparisons, copies).

pub(super) mod candle;
pub(super) mod creation;
pub(super) mod einops;
pub(super) mod elementwise;
pub(super) mod fresh;
pub(super) mod geometry;
pub(super) mod index;
pub(super) mod join;
pub(super) mod matmul;
pub(super) mod query;
pub(super) mod reduction;
pub(super) mod reshape;
pub(super) mod split;
#[cfg(test)]
mod test_support;

use super::bind::BoundArgs;
use super::transfer::{OpErrorKind, Transfer};
use super::value::ArgValue;
use crate::layout::{Layout, LayoutError, MemoryFormat, Size};

/// A transfer function's answer; `Err` is an early exit with the final answer.
pub(super) type Outcome<S> = Result<Transfer<S>, Transfer<S>>;

/// The known layout of tensor parameter `name`; any other value ends the call with an
/// unknown tensor (the op still produces a tensor, whose layout cannot be known).
pub(super) fn tensor_arg<'a, S: Size>(
    args: &'a BoundArgs<S>,
    name: &str,
) -> Result<&'a Layout<S>, Transfer<S>> {
    match args.get(name) {
        Some(ArgValue::Tensor(Some(layout))) => Ok(layout),
        _ => Err(Transfer::unknown_tensor()),
    }
}

/// A literal integer argument (dims, counts, steps); anything else is undecidable.
pub(super) fn int_arg<S: Size>(args: &BoundArgs<S>, name: &str) -> Result<i64, Transfer<S>> {
    args.get(name)
        .and_then(ArgValue::as_i64)
        .ok_or_else(Transfer::unknown)
}

/// A size argument (may be symbolic).
pub(super) fn size_arg<S: Size>(args: &BoundArgs<S>, name: &str) -> Result<S, Transfer<S>> {
    args.get(name)
        .and_then(ArgValue::as_size)
        .ok_or_else(Transfer::unknown)
}

/// A sequence of sizes whose every element is known.
pub(super) fn sizes_arg<S: Size>(args: &BoundArgs<S>, name: &str) -> Result<Vec<S>, Transfer<S>> {
    args.get(name)
        .and_then(ArgValue::as_sizes)
        .ok_or_else(Transfer::unknown)
}

/// A sequence of literal ints (a lone int counts as one element).
pub(super) fn ints_arg<S: Size>(args: &BoundArgs<S>, name: &str) -> Result<Vec<i64>, Transfer<S>> {
    args.get(name)
        .and_then(ArgValue::as_i64s)
        .ok_or_else(Transfer::unknown)
}

/// A literal bool argument.
pub(super) fn bool_arg<S: Size>(args: &BoundArgs<S>, name: &str) -> Result<bool, Transfer<S>> {
    args.get(name)
        .and_then(ArgValue::as_bool)
        .ok_or_else(Transfer::unknown)
}

/// The target shape of `view`/`reshape`/`expand`: the `other` tensor's shape for the
/// `*_as` forms, else the sizes in `shape_param`.
pub(super) fn target_shape<S: Size>(
    args: &BoundArgs<S>,
    shape_params: &[&str],
) -> Result<Vec<S>, Transfer<S>> {
    if let Some(other) = args.get("other") {
        return match other {
            ArgValue::Tensor(Some(layout)) => Ok(layout.shape.clone()),
            _ => Err(Transfer::unknown_tensor()),
        };
    }
    let name = shape_params
        .iter()
        .find(|n| args.get(n).is_some())
        .ok_or_else(Transfer::unknown)?;
    sizes_arg(args, name).map_err(|_| Transfer::unknown_tensor())
}

/// A `memory_format` argument: `None` when absent or `None` (the op's default applies),
/// `Err` when it is not a constant the linter recognises.
pub(super) fn memory_format_arg<S: Size>(args: &BoundArgs<S>) -> Result<Option<MemoryFormat>, ()> {
    match args.get("memory_format") {
        None | Some(ArgValue::None) => Ok(None),
        Some(ArgValue::Str(name)) => {
            let last = name.rsplit('.').next().unwrap_or(name);
            match last {
                "contiguous_format" => Ok(Some(MemoryFormat::Contiguous)),
                "channels_last" => Ok(Some(MemoryFormat::ChannelsLast)),
                "channels_last_3d" => Ok(Some(MemoryFormat::ChannelsLast3d)),
                "preserve_format" => Ok(Some(MemoryFormat::Preserve)),
                _ => Err(()),
            }
        }
        Some(_) => Err(()),
    }
}

/// A layout computation as the call's answer.
pub(super) fn layout_outcome<S: Size>(
    result: Result<Layout<S>, LayoutError>,
    shape_mismatch: OpErrorKind,
) -> Outcome<S> {
    result
        .map(Transfer::tensor)
        .map_err(|e| Transfer::from_layout_error(e, shape_mismatch))
}

/// Every tensor of a `tensors` argument (`cat`, `stack`, `meshgrid`), each with a known
/// layout; an unknown one makes the outcome unknown.
pub(super) fn tensors_arg<S: Size>(args: &BoundArgs<S>) -> Result<Vec<&Layout<S>>, Transfer<S>> {
    match args.get("tensors") {
        Some(ArgValue::TensorList(items)) => items
            .iter()
            .map(|t| t.as_ref().ok_or_else(|| Transfer::unknown_tensor()))
            .collect(),
        _ => Err(Transfer::unknown_tensor()),
    }
}

/// Early exit for a layout error inside a longer computation.
pub(super) fn fail<S: Size>(shape_mismatch: OpErrorKind) -> impl Fn(LayoutError) -> Transfer<S> {
    move |e| Transfer::from_layout_error(e, shape_mismatch)
}
