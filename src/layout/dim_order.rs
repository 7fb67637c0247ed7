//! The dimension order PyTorch gives new tensors that "keep the input's layout": the
//! insertion sort shared by TensorIterator (element-wise outputs, spec §6) and
//! `infer_dense_strides` (`clone`/`empty_like`/`to` of non-dense tensors, spec §5).

/// Where dimension `a` belongs relative to dimension `b` in memory order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// `a` is inner to `b` (smaller stride).
    Inner,
    /// `a` is outer to `b`: the sort swaps them.
    Outer,
    /// Nothing decides (a zero stride, or a tie PyTorch does not break).
    Ambiguous,
}

/// Dimensions ordered innermost first, starting from the row-major order `[n-1, …, 0]`.
///
/// This is PyTorch's insertion sort *including its quirk*: an ambiguous comparison does not
/// stop the inner loop (as it would in a textbook insertion sort), so an element keeps
/// moving left past ambiguous neighbours until a definite "inner" answer stops it. The
/// comparison is not a total order, so only this exact procedure reproduces PyTorch.
/// `place(a, b)` may fail (an undecidable symbolic comparison); the error is passed on.
pub(crate) fn sort_innermost_first<E>(
    rank: usize,
    mut place: impl FnMut(usize, usize) -> Result<Placement, E>,
) -> Result<Vec<usize>, E> {
    let mut perm: Vec<usize> = (0..rank).rev().collect();
    for i in 1..rank {
        let mut moving = i;
        for other in (0..i).rev() {
            match place(perm[other], perm[moving])? {
                Placement::Outer => {
                    perm.swap(other, moving);
                    moving = other;
                }
                Placement::Inner => break,
                Placement::Ambiguous => {}
            }
        }
    }
    Ok(perm)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_stride(strides: &[i64]) -> Vec<usize> {
        sort_innermost_first::<()>(strides.len(), |a, b| {
            Ok(if strides[a] == 0 || strides[b] == 0 {
                Placement::Ambiguous
            } else if strides[a] < strides[b] {
                Placement::Inner
            } else if strides[a] > strides[b] {
                Placement::Outer
            } else {
                Placement::Ambiguous
            })
        })
        .unwrap()
    }

    #[test]
    fn sorts_by_stride_and_keeps_zero_strides_in_place() {
        assert_eq!(by_stride(&[12, 4, 1]), vec![2, 1, 0]);
        assert_eq!(by_stride(&[12, 1, 3]), vec![1, 2, 0]);
        // The example of PyTorch's infer_dense_strides comment: (6,5,4,3,2)/(6,0,120,0,1)
        // sorts to (4, 3, 0, 1, 2).
        assert_eq!(by_stride(&[6, 0, 120, 0, 1]), vec![4, 3, 0, 1, 2]);
    }
}
