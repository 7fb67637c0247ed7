//! Dimension arguments: PyTorch's `maybe_wrap_dim` and its `IndexError`s.

use super::error::{LayoutError, LayoutErrorKind};

/// Resolve a (possibly negative) dimension argument of a tensor of rank `rank`.
///
/// Valid values are `[-rank, rank - 1]`; a 0-d tensor accepts `0` and `-1` as if it had
/// one dimension (PyTorch's `wrap_scalar`). Ops that insert a dimension (`unsqueeze`) pass
/// `rank + 1`.
pub fn wrap_dim(dim: i64, rank: usize) -> Result<usize, LayoutError> {
    let effective_rank = rank.max(1) as i64;
    let (min, max) = (-effective_rank, effective_rank - 1);
    if dim < min || dim > max {
        return Err(LayoutError::new(
            LayoutErrorKind::DimOutOfRange,
            format!(
                "Dimension out of range (expected to be in range of [{min}, {max}], but got {dim})"
            ),
        ));
    }
    Ok(if dim < 0 {
        (dim + effective_rank) as usize
    } else {
        dim as usize
    })
}

/// Like [`wrap_dim`] but for reading a size: a 0-d tensor has no size to read
/// (`tensor.size(0)` on a 0-d tensor), the error of `unbind`/`unflatten`/`split` there.
pub(crate) fn wrap_existing_dim(dim: i64, rank: usize) -> Result<usize, LayoutError> {
    if rank == 0 {
        return Err(LayoutError::new(
            LayoutErrorKind::DimOutOfRange,
            format!("Dimension specified as {dim} but tensor has no dimensions"),
        ));
    }
    wrap_dim(dim, rank)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_negative_dims() {
        assert_eq!(wrap_dim(-1, 3), Ok(2));
        assert_eq!(wrap_dim(-3, 3), Ok(0));
        assert_eq!(wrap_dim(2, 3), Ok(2));
    }

    #[test]
    fn out_of_range_is_an_index_error_with_torch_text() {
        let err = wrap_dim(3, 3).unwrap_err();
        assert_eq!(
            err.message,
            "Dimension out of range (expected to be in range of [-3, 2], but got 3)"
        );
        assert_eq!(err.kind.python_exception(), "IndexError");
        assert!(wrap_dim(-4, 3).is_err());
    }

    #[test]
    fn zero_d_tensors_wrap_like_rank_one() {
        assert_eq!(wrap_dim(0, 0), Ok(0));
        assert_eq!(wrap_dim(-1, 0), Ok(0));
        assert_eq!(
            wrap_dim(1, 0).unwrap_err().message,
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
        );
        assert!(wrap_existing_dim(0, 0).is_err());
    }
}
