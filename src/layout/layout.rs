//! [`Layout`]: where the elements of a strided tensor live in its storage.
//!
//! A tensor of shape `s` with strides `t` and storage offset `o` keeps element
//! `[i0, i1, …]` at storage position `o + i0·t0 + i1·t1 + …`. Every question the linter
//! asks ("is it contiguous?", "can `view` express this?", "does `reshape` copy?") is a
//! question about these three pieces, so they are all this type holds.

use std::fmt;

use super::decided::product;
use super::size::Size;

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Layout<S> {
    /// Size of each dimension, outermost first.
    pub shape: Vec<S>,
    /// Distance in storage elements between neighbours along each dimension.
    pub strides: Vec<S>,
    /// Storage position of element `[0, 0, …]`.
    pub offset: S,
}

impl<S: Size> Layout<S> {
    /// A layout from its parts. Panics if `shape` and `strides` differ in length: that is a
    /// bug in the caller, never a property of user code.
    pub fn new(shape: Vec<S>, strides: Vec<S>, offset: S) -> Self {
        assert_eq!(
            shape.len(),
            strides.len(),
            "a layout needs one stride per dimension"
        );
        Layout {
            shape,
            strides,
            offset,
        }
    }

    /// A freshly allocated tensor (`torch.empty(shape)`): row-major strides, offset 0.
    /// See [`contiguous_strides`] for how zero-size dimensions are treated.
    pub fn contiguous(shape: Vec<S>) -> Self {
        let strides = contiguous_strides(&shape);
        Layout {
            shape,
            strides,
            offset: S::lit(0),
        }
    }

    /// A 0-d tensor, which is also how a Python scalar operand behaves in element-wise ops.
    pub fn scalar() -> Self {
        Layout {
            shape: Vec::new(),
            strides: Vec::new(),
            offset: S::lit(0),
        }
    }

    pub fn with_offset(mut self, offset: S) -> Self {
        self.offset = offset;
        self
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements (1 for a 0-d tensor).
    pub fn numel(&self) -> S {
        product(&self.shape)
    }
}

/// PyTorch's strides for a new contiguous tensor (spec §1.5): row-major, with zero-size
/// dimensions counted as size 1, so `empty(2, 0, 3)` has strides `(3, 3, 1)`.
///
/// A symbolic size is never literally 0, so it is used as is: this treats every named
/// size as ≥ 1. If it were 0 at run time the tensor would hold no elements, and no rule
/// of the algebra depends on the strides of an empty tensor (they are all contiguous and
/// all viewable), so the answers stay right.
pub fn contiguous_strides<S: Size>(shape: &[S]) -> Vec<S> {
    let mut strides = vec![S::lit(1); shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        let inner = &shape[d + 1];
        strides[d] = if inner.as_lit() == Some(0) {
            strides[d + 1].clone()
        } else {
            strides[d + 1].mul(inner)
        };
    }
    strides
}

/// `(B, T, H, D) strides (T·H·D, D, H·D, 1)`, plus ` offset o` when the offset is not 0.
impl<S: Size> fmt::Display for Layout<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_tuple(f, &self.shape)?;
        f.write_str(" strides ")?;
        write_tuple(f, &self.strides)?;
        if self.offset.as_lit() != Some(0) {
            write!(f, " offset {}", self.offset)?;
        }
        Ok(())
    }
}

fn write_tuple<S: Size>(f: &mut fmt::Formatter<'_>, values: &[S]) -> fmt::Result {
    f.write_str("(")?;
    for (i, value) in values.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{value}")?;
    }
    f.write_str(")")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_strides_count_zero_sizes_as_one() {
        // (E) torch.empty(2, 0, 3).stride() == (3, 3, 1)
        assert_eq!(contiguous_strides(&[2i64, 0, 3]), vec![3, 3, 1]);
        assert_eq!(contiguous_strides(&[2i64, 3, 4]), vec![12, 4, 1]);
        assert_eq!(contiguous_strides::<i64>(&[]), Vec::<i64>::new());
    }

    #[test]
    fn numel_and_rank() {
        let layout = Layout::contiguous(vec![2i64, 3, 4]);
        assert_eq!(layout.numel(), 24);
        assert_eq!(layout.rank(), 3);
        assert_eq!(Layout::<i64>::scalar().numel(), 1);
    }

    #[test]
    fn display_shows_shape_strides_and_nonzero_offset() {
        let layout = Layout::contiguous(vec![2i64, 3]);
        assert_eq!(layout.to_string(), "(2, 3) strides (3, 1)");
        assert_eq!(
            layout.with_offset(4).to_string(),
            "(2, 3) strides (3, 1) offset 4"
        );
        assert_eq!(Layout::<i64>::scalar().to_string(), "() strides ()");
    }

    #[test]
    #[should_panic(expected = "one stride per dimension")]
    fn new_rejects_mismatched_lengths() {
        Layout::new(vec![2i64, 3], vec![1], 0);
    }
}
