//! `StridedLayout`: a concrete view into a flat buffer (shape, strides and storage offset, all
//! in elements), the only input the verify engine accepts.
//!
//! The analysis works with symbolic sizes; by the time a finding is replayed every size is a
//! number, so this type is deliberately plain: public fields, `i64` like PyTorch's
//! `IntArrayRef`, and an explicit [`StridedLayout::validate`] that every engine calls first.

use std::fmt;

use super::error::VerifyError;

/// A strided view: element `(i0, …, in-1)` lives at `offset + Σ ik·strides[k]` in storage.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StridedLayout {
    pub shape: Vec<i64>,
    pub strides: Vec<i64>,
    pub offset: i64,
}

impl StridedLayout {
    pub fn new(shape: Vec<i64>, strides: Vec<i64>, offset: i64) -> Self {
        StridedLayout {
            shape,
            strides,
            offset,
        }
    }

    /// The layout of a freshly allocated tensor: row-major, where a zero-size dimension counts
    /// as size 1 when computing the strides (PyTorch's `empty`, spec §1.5).
    pub fn contiguous(shape: &[i64]) -> Self {
        let mut strides = vec![1i64; shape.len()];
        for dim in (0..shape.len().saturating_sub(1)).rev() {
            strides[dim] = strides[dim + 1] * shape[dim + 1].max(1);
        }
        StridedLayout::new(shape.to_vec(), strides, 0)
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// `x.permute(order)`: dimension `k` of the result is dimension `order[k]` of `self`.
    pub fn permute(&self, order: &[usize]) -> Result<Self, VerifyError> {
        let mut seen = vec![false; self.rank()];
        if order.len() != self.rank() {
            return Err(VerifyError::InvalidLayout(format!(
                "permutation {order:?} has {} entries for a rank-{} layout",
                order.len(),
                self.rank()
            )));
        }
        for &dim in order {
            if dim >= self.rank() || std::mem::replace(&mut seen[dim], true) {
                return Err(VerifyError::InvalidLayout(format!(
                    "{order:?} is not a permutation of 0..{}",
                    self.rank()
                )));
            }
        }
        Ok(StridedLayout::new(
            order.iter().map(|&d| self.shape[d]).collect(),
            order.iter().map(|&d| self.strides[d]).collect(),
            self.offset,
        ))
    }

    /// `x.transpose(a, b)`.
    pub fn transpose(&self, a: usize, b: usize) -> Result<Self, VerifyError> {
        let mut order: Vec<usize> = (0..self.rank()).collect();
        if a >= order.len() || b >= order.len() {
            return Err(VerifyError::InvalidLayout(format!(
                "transpose({a}, {b}) on a rank-{} layout",
                self.rank()
            )));
        }
        order.swap(a, b);
        self.permute(&order)
    }

    /// Checks the invariants every engine relies on: equal ranks, non-negative sizes and
    /// offset, every reachable index inside `0..=i64::MAX`, and an element count that fits
    /// in 64 bits.
    pub fn validate(&self) -> Result<(), VerifyError> {
        self.storage_bounds().map(|_| ())
    }

    /// Number of elements (product of the shape). Call [`Self::validate`] first: on an
    /// invalid layout this saturates instead of failing.
    pub fn numel(&self) -> u64 {
        self.shape
            .iter()
            .fold(1u64, |acc, &size| acc.saturating_mul(size.max(0) as u64))
    }

    /// The storage a buffer must hold for this view: `max index + 1` elements, or 0 for an
    /// empty view. Broadcast (stride-0) dimensions need no storage beyond their first element.
    pub fn footprint_elems(&self) -> Result<u64, VerifyError> {
        Ok(match self.storage_bounds()? {
            Some((_, highest)) => highest as u64 + 1,
            None => 0,
        })
    }

    /// PyTorch's `is_contiguous()` (spec §1.1): size-1 dimensions are ignored, an empty view is
    /// contiguous, the storage offset does not matter.
    pub fn is_contiguous(&self) -> bool {
        if self.numel() == 0 {
            return true;
        }
        let mut expected = 1i64;
        for (&size, &stride) in self.shape.iter().zip(&self.strides).rev() {
            if size == 1 {
                continue;
            }
            if stride != expected {
                return false;
            }
            expected = expected.saturating_mul(size);
        }
        true
    }

    /// Lowest and highest storage index reached, `None` for an empty view.
    fn storage_bounds(&self) -> Result<Option<(i64, i64)>, VerifyError> {
        let invalid = |why: String| Err(VerifyError::InvalidLayout(format!("{self}: {why}")));
        if self.shape.len() != self.strides.len() {
            return invalid(format!(
                "{} sizes but {} strides",
                self.shape.len(),
                self.strides.len()
            ));
        }
        if let Some(size) = self.shape.iter().find(|&&size| size < 0) {
            return invalid(format!("negative size {size}"));
        }
        if self.offset < 0 {
            return invalid("negative storage offset".to_string());
        }
        let mut numel = 1u64;
        for &size in &self.shape {
            numel = match numel.checked_mul(size as u64) {
                Some(product) => product,
                None => return invalid("more than 2^64 elements".to_string()),
            };
        }
        if numel == 0 {
            return Ok(None);
        }
        let (mut lowest, mut highest) = (self.offset as i128, self.offset as i128);
        for (&size, &stride) in self.shape.iter().zip(&self.strides) {
            let reach = (size as i128 - 1) * stride as i128;
            if reach < 0 {
                lowest += reach;
            } else {
                highest += reach;
            }
        }
        if lowest < 0 {
            return invalid(format!("reaches storage index {lowest}, before the buffer"));
        }
        if highest > i64::MAX as i128 {
            return invalid("reaches a storage index beyond 2^63".to_string());
        }
        Ok(Some((lowest as i64, highest as i64)))
    }
}

impl fmt::Display for StridedLayout {
    /// `shape (4, 16) strides (1, 4) offset 0`, the form used in reports.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tuple = |values: &[i64]| {
            let items: Vec<String> = values.iter().map(i64::to_string).collect();
            if items.len() == 1 {
                format!("({},)", items[0])
            } else {
                format!("({})", items.join(", "))
            }
        };
        write!(
            f,
            "shape {} strides {} offset {}",
            tuple(&self.shape),
            tuple(&self.strides),
            self.offset
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_strides_follow_torch_empty() {
        // torch.empty(2, 0, 3).stride() == (3, 3, 1)
        assert_eq!(StridedLayout::contiguous(&[2, 0, 3]).strides, vec![3, 3, 1]);
        assert_eq!(
            StridedLayout::contiguous(&[4, 16, 2048, 128]).strides,
            vec![16 * 2048 * 128, 2048 * 128, 128, 1]
        );
        assert!(StridedLayout::contiguous(&[]).strides.is_empty());
    }

    #[test]
    fn permute_and_transpose_move_sizes_and_strides_together() {
        let x = StridedLayout::contiguous(&[2, 3, 4]);
        let p = x.permute(&[2, 0, 1]).unwrap();
        assert_eq!(p.shape, vec![4, 2, 3]);
        assert_eq!(p.strides, vec![1, 12, 4]);
        assert_eq!(x.transpose(0, 2).unwrap().strides, vec![1, 4, 12]);
        assert!(x.permute(&[0, 0, 1]).is_err());
        assert!(x.permute(&[0, 1]).is_err());
        assert!(x.transpose(0, 3).is_err());
    }

    #[test]
    fn footprint_covers_the_highest_index_and_ignores_broadcast() {
        let x = StridedLayout::contiguous(&[4, 5]);
        assert_eq!(x.footprint_elems().unwrap(), 20);
        assert_eq!(x.transpose(0, 1).unwrap().footprint_elems().unwrap(), 20);
        // x[:, ::2] of a (4, 6) tensor with offset 1: highest index 1 + 3*6 + 2*2 = 24.
        let sliced = StridedLayout::new(vec![4, 3], vec![6, 2], 1);
        assert_eq!(sliced.footprint_elems().unwrap(), 24);
        // expand((8, 5)) of a (1, 5) row: stride 0 along the broadcast dimension.
        let expanded = StridedLayout::new(vec![8, 5], vec![0, 1], 0);
        assert_eq!(expanded.footprint_elems().unwrap(), 5);
        let empty = StridedLayout::new(vec![3, 0], vec![7, 1], 9);
        assert_eq!(empty.footprint_elems().unwrap(), 0);
    }

    #[test]
    fn validation_rejects_malformed_layouts() {
        let bad = [
            StridedLayout::new(vec![2, 3], vec![1], 0),
            StridedLayout::new(vec![-1], vec![1], 0),
            StridedLayout::new(vec![2], vec![1], -1),
            StridedLayout::new(vec![4], vec![-1], 2), // reaches index -1
            StridedLayout::new(vec![i64::MAX, 4], vec![1, 1], 0),
            StridedLayout::new(vec![1 << 62, 1 << 62], vec![1, 1], 0),
        ];
        for layout in bad {
            assert!(
                matches!(layout.validate(), Err(VerifyError::InvalidLayout(_))),
                "{layout} should be rejected"
            );
        }
        // A reversed view whose offset keeps it inside the buffer is fine.
        assert!(StridedLayout::new(vec![4], vec![-1], 3).validate().is_ok());
    }

    #[test]
    fn contiguity_is_torchs_rule() {
        assert!(StridedLayout::contiguous(&[3, 4]).is_contiguous());
        // (1,16,5,5) with stride[0] changed to 20 is still contiguous (spec §1.1, test_contiguous).
        assert!(StridedLayout::new(vec![1, 16, 5, 5], vec![20, 25, 5, 1], 0).is_contiguous());
        assert!(!StridedLayout::contiguous(&[3, 4])
            .transpose(0, 1)
            .unwrap()
            .is_contiguous());
        assert!(StridedLayout::new(vec![0, 4], vec![1, 9], 0).is_contiguous());
    }

    #[test]
    fn display_matches_python_tuples() {
        let x = StridedLayout::new(vec![5], vec![2], 1);
        assert_eq!(x.to_string(), "shape (5,) strides (2,) offset 1");
    }
}
