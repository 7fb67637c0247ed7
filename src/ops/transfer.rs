//! What a transfer function answers: the result of one op call on abstract arguments.

use std::fmt;

use super::value::ArgValue;
use crate::layout::{Layout, LayoutError, LayoutErrorKind, ShapeError, Size, Tri};

/// The effect of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Transfer<S> {
    pub result: OpResult<S>,
    /// Does this call materialise a copy of its input merely to produce the result's
    /// layout (a `reshape`/`flatten`/`ravel`/`contiguous`/`rearrange` that cannot be a
    /// view, `clone`, a dtype conversion…)? Computations whose purpose is new data
    /// (matmul, element-wise ops, `cat`) answer `No`.
    pub copies: Tri,
    /// Elements copied when `copies` is `Yes` (the input's numel), for cost reports.
    pub copied_numel: Option<S>,
    /// For an op made of steps (einops), the step that copies: a reshape of this
    /// intermediate layout to this shape. `None` when the copy is of the input itself.
    pub copied_reshape: Option<(Layout<S>, Vec<S>)>,
}

/// The value a call produces.
#[derive(Debug, Clone, PartialEq)]
pub enum OpResult<S> {
    Tensor(Layout<S>),
    /// `split`/`chunk`/`unbind`/`max(dim)` … when the number of pieces is known.
    Tensors(Vec<Layout<S>>),
    /// A tensor whose layout is unknown (SDPA, conv, einsum, unknown inputs).
    UnknownTensor,
    /// A non-tensor value: `x.size()`, `x.shape`, `x.size(-1)`, `x.dim()`, `x.numel()`,
    /// `x.is_contiguous()`.
    Size(ArgValue<S>),
    /// The call fails for every size satisfying the assumptions.
    Error(OpError),
    /// Could not decide (the call may also fail).
    Unknown,
}

/// A call that certainly fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpError {
    pub kind: OpErrorKind,
    /// The library's exact text for concrete sizes (sizes printed symbolically otherwise).
    pub message: String,
}

/// The family of a failure, for choosing a lint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpErrorKind {
    /// `view` cannot express the shape with strides (E_VIEW).
    ViewIncompatible,
    /// The element count does not fit (a shape argument, split sizes, mismatched matmul dims…).
    ElementCount,
    /// Two `-1` in a shape.
    TwoInferred,
    /// A shape entry below `-1`.
    InvalidShapeDim,
    /// A dim argument outside `[-rank, rank - 1]` (`IndexError`).
    DimOutOfRange,
    /// An index or start outside a dimension (`IndexError`).
    IndexOutOfRange,
    /// `permute`/`movedim` arguments that are not a permutation.
    InvalidPermutation,
    /// Shapes that do not broadcast.
    Broadcast,
    /// Any other rejected argument (wrong rank, negative length, bad pattern…).
    InvalidArgument,
    /// A kernel that only reads contiguous memory got a non-contiguous tensor (candle-nn's
    /// fused `softmax_last_dim`, `rms_norm`, `layer_norm`, `rope*`; spec §10.4).
    NonContiguousInput,
}

impl fmt::Display for OpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl<S: Size> Transfer<S> {
    fn with(result: OpResult<S>) -> Self {
        Transfer {
            result,
            copies: Tri::No,
            copied_numel: None,
            copied_reshape: None,
        }
    }

    /// A tensor result that is not a copy of the input (a view or a computation).
    pub fn tensor(layout: Layout<S>) -> Self {
        Transfer::with(OpResult::Tensor(layout))
    }

    pub fn tensors(layouts: Vec<Layout<S>>) -> Self {
        Transfer::with(OpResult::Tensors(layouts))
    }

    /// A tensor of unknown layout.
    pub fn unknown_tensor() -> Self {
        Transfer::with(OpResult::UnknownTensor)
    }

    /// Nothing could be decided.
    pub fn unknown() -> Self {
        Transfer {
            copies: Tri::Unknown,
            ..Transfer::with(OpResult::Unknown)
        }
    }

    /// A non-tensor value.
    pub fn value(value: ArgValue<S>) -> Self {
        Transfer::with(OpResult::Size(value))
    }

    pub fn error(kind: OpErrorKind, message: impl Into<String>) -> Self {
        Transfer::with(OpResult::Error(OpError {
            kind,
            message: message.into(),
        }))
    }

    /// Record whether the call copied its input of `input_numel` elements.
    pub fn with_copy(mut self, copies: Tri, input_numel: S) -> Self {
        self.copies = copies;
        self.copied_numel = copies.is_yes().then_some(input_numel);
        self
    }

    /// A layout error as this call's outcome. `shape_mismatch` names what a
    /// `ShapeMismatch` means for this op (a broadcast failure, an element count…);
    /// an undecided comparison is an unknown outcome, never an error.
    pub fn from_layout_error(error: LayoutError, shape_mismatch: OpErrorKind) -> Self {
        let kind = match error.kind {
            LayoutErrorKind::Undecided => return Transfer::unknown(),
            LayoutErrorKind::DimOutOfRange => OpErrorKind::DimOutOfRange,
            LayoutErrorKind::IndexOutOfRange => OpErrorKind::IndexOutOfRange,
            LayoutErrorKind::InvalidPermutation => OpErrorKind::InvalidPermutation,
            LayoutErrorKind::ShapeMismatch => shape_mismatch,
            LayoutErrorKind::InvalidArgument => OpErrorKind::InvalidArgument,
            LayoutErrorKind::NotViewable => OpErrorKind::ViewIncompatible,
        };
        Transfer::error(kind, error.message)
    }

    /// A rejected shape argument (`infer_size`) as this call's outcome.
    pub fn from_shape_error(error: ShapeError<S>) -> Self {
        let kind = match &error {
            ShapeError::Undecided => return Transfer::unknown(),
            ShapeError::MultipleInferred => OpErrorKind::TwoInferred,
            ShapeError::InvalidDimension { .. } => OpErrorKind::InvalidShapeDim,
            ShapeError::NumelMismatch { .. } | ShapeError::AmbiguousInferred { .. } => {
                OpErrorKind::ElementCount
            }
        };
        Transfer::error(kind, error.message())
    }

    /// The layout of a single-tensor result, if that is what the call produced.
    pub fn layout(&self) -> Option<&Layout<S>> {
        match &self.result {
            OpResult::Tensor(layout) => Some(layout),
            _ => None,
        }
    }

    /// The error, if the call certainly fails.
    pub fn op_error(&self) -> Option<&OpError> {
        match &self.result {
            OpResult::Error(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undecided_errors_become_unknown_never_errors() {
        let undecided = LayoutError::new(LayoutErrorKind::Undecided, "x");
        assert_eq!(
            Transfer::<i64>::from_layout_error(undecided, OpErrorKind::Broadcast).result,
            OpResult::Unknown
        );
        assert_eq!(
            Transfer::<i64>::from_shape_error(ShapeError::Undecided).result,
            OpResult::Unknown
        );
        let e = Transfer::<i64>::from_shape_error(ShapeError::MultipleInferred);
        assert_eq!(
            e.op_error().map(|e| (e.kind, e.message.as_str())),
            Some((
                OpErrorKind::TwoInferred,
                "only one dimension can be inferred"
            ))
        );
    }

    #[test]
    fn copied_numel_only_when_the_copy_is_certain() {
        let t = Transfer::tensor(Layout::contiguous(vec![2i64, 3]));
        assert_eq!(t.clone().with_copy(Tri::Yes, 6).copied_numel, Some(6));
        assert_eq!(t.with_copy(Tri::Unknown, 6).copied_numel, None);
    }
}
