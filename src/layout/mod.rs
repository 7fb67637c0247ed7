//! The stride algebra: PyTorch's (and candle's) shape/stride semantics, exactly, over
//! concrete (`i64`) and symbolic ([`dim::Dim`]) sizes.
//!
//! This module depends on nothing else in the crate. See `ARCHITECTURE.md` and
//! `docs/stride-semantics.md` for the rules it implements.

pub mod assumption;
pub mod candle;
pub mod contiguity;
mod decided;
pub mod dense;
pub mod dim;
mod dim_order;
pub mod einsum;
pub mod elementwise;
pub mod error;
pub mod geometry;
pub mod infer_size;
#[cfg(test)]
mod laws;
// The file is named after the type it defines, as the architecture map says.
#[allow(clippy::module_inception)]
pub mod layout;
pub mod names;
pub mod reshape;
pub mod sdpa;
pub mod size;
pub mod split;
#[cfg(test)]
mod symbolic;
pub mod tri;
pub mod view;
pub mod wrap_dim;

pub use dim::Dim;
pub use size::{Assumption, Assumptions, Comparison, Decider, Size};
pub use tri::Tri;

pub use candle::{
    candle_broadcast_as, candle_chunk, candle_contiguous_strides, candle_is_contiguous,
    candle_linear_operands, candle_matmul_check, candle_matmul_ok, candle_matmul_operand_check,
    candle_narrow, candle_reshape, candle_t, CandleBackend, MatmulCheck, MatmulRules, MatrixRule,
};
pub use contiguity::{strides_for_format, MemoryFormat};
pub use dense::{clone_with_format, infer_dense_strides, to_with_format};
pub use elementwise::{broadcast_shapes, broadcast_shapes_succeeding, elementwise_output};
pub use error::{LayoutError, LayoutErrorKind};
pub use geometry::{
    adjoint, alias, as_strided, diagonal, expand, mh, movedim, mt, narrow, numpy_t, permute,
    select, slice, squeeze, squeeze_dim, squeeze_dims, t, transpose, unfold, unsqueeze,
};
pub use infer_size::{infer_size, ShapeError};
pub use layout::{contiguous_strides, Layout};
pub use reshape::{
    contiguous, contiguous_in_format, flatten, ravel, reshape, unflatten, view, MaybeCopy,
    ViewOutcome, E_VIEW,
};
pub use split::{
    chunk, split, split_with_sizes, tensor_split_indices, tensor_split_sections, unbind,
};
pub use view::{blocks_of_two_or_more, too_few_dims_for_blocks, view_strides, ViewStrides};
pub use wrap_dim::wrap_dim;
