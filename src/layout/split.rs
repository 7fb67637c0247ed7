//! PyTorch's multi-output view ops (spec §5): `split`, `split_with_sizes`, `chunk`,
//! `tensor_split`, `unbind`. Each piece is a view of the input.
//!
//! The number of pieces must be a known number to return a `Vec`; when it depends on a
//! symbolic size (`x.unbind(1)` on a dimension of size `T`) the answer is `Undecided`.

use super::decided::{known, Undecided};
use super::error::{torch_list, LayoutError};
use super::geometry::{select, slice, take_range};
use super::layout::Layout;
use super::size::{Decider, Size};
use super::wrap_dim::{wrap_dim, wrap_existing_dim};

/// `split(split_size, dim)`: pieces of `split_size` along `dim`, the last one holding the
/// remainder. At least one piece, even when `split_size` exceeds the dimension.
pub fn split<S: Size>(
    layout: &Layout<S>,
    split_size: &S,
    dim: i64,
    dec: &Decider,
) -> Result<Vec<Layout<S>>, LayoutError> {
    if layout.rank() == 0 {
        return Err(LayoutError::invalid(
            "split expects at least a 1-dimensional tensor",
        ));
    }
    let zero = S::lit(0);
    if known(dec.lt(split_size, &zero))? {
        return Err(LayoutError::invalid(format!(
            "split expects split_size be non-negative, but got split_size={split_size}"
        )));
    }
    let d = wrap_existing_dim(dim, layout.rank())?;
    let dim_size = &layout.shape[d];
    let split_is_zero = known(dec.eq(split_size, &zero))?;
    if split_is_zero && !known(dec.eq(dim_size, &zero))? {
        return Err(LayoutError::invalid(format!(
            "split_size can only be 0 if dimension size is 0, but got dimension size of {dim_size}"
        )));
    }
    let count = if split_is_zero {
        1
    } else {
        // max(ceil(dim_size / split_size), 1). When the quotient is exact (`3·C` split by
        // `C`), it is the count itself; the `+ split_size - 1` form would hide that from
        // the symbolic normal form.
        let exact = dim_size.floordiv(split_size);
        let pieces = if dec.eq(&exact.mul(split_size), dim_size).is_yes() {
            exact
        } else {
            dim_size
                .add(split_size)
                .sub(&S::lit(1))
                .floordiv(split_size)
        };
        literal_count(&pieces)?.max(1)
    };
    let mut pieces = Vec::with_capacity(count);
    let mut start = zero;
    for i in 0..count {
        let length = if i + 1 < count {
            split_size.clone()
        } else {
            dim_size.sub(&start)
        };
        pieces.push(take_range(layout, d, &start, length, 1));
        start = start.add(split_size);
    }
    Ok(pieces)
}

/// `split(sizes, dim)` / `split_with_sizes(sizes, dim)`: consecutive pieces of the given
/// sizes, which must add up to the dimension's size.
pub fn split_with_sizes<S: Size>(
    layout: &Layout<S>,
    sizes: &[S],
    dim: i64,
    dec: &Decider,
) -> Result<Vec<Layout<S>>, LayoutError> {
    if layout.rank() == 0 {
        return Err(LayoutError::invalid(
            "split expects at least a 1-dimensional tensor",
        ));
    }
    let d = wrap_existing_dim(dim, layout.rank())?;
    let dim_size = &layout.shape[d];
    let mut pieces = Vec::with_capacity(sizes.len());
    let mut start = S::lit(0);
    for size in sizes {
        if known(dec.lt(size, &S::lit(0)))? {
            return Err(LayoutError::invalid(format!(
                "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes={}",
                torch_list(sizes)
            )));
        }
        pieces.push(take_range(layout, d, &start, size.clone(), 1));
        start = start.add(size);
    }
    if !known(dec.eq(&start, dim_size))? {
        return Err(LayoutError::shape_mismatch(format!(
            "split_with_sizes expects split_sizes to sum exactly to {dim_size} (input tensor's size at dimension {dim}), but got split_sizes={}",
            torch_list(sizes)
        )));
    }
    Ok(pieces)
}

/// `chunk(chunks, dim)`: `split` with `ceil(size / chunks)`, so it may return *fewer* than
/// `chunks` pieces (5 rows in 4 chunks → 2, 2, 1). A zero-size dimension gives `chunks`
/// empty pieces.
pub fn chunk<S: Size>(
    layout: &Layout<S>,
    chunks: i64,
    dim: i64,
    dec: &Decider,
) -> Result<Vec<Layout<S>>, LayoutError> {
    if layout.rank() == 0 {
        return Err(LayoutError::invalid(
            "chunk expects at least a 1-dimensional tensor",
        ));
    }
    if chunks <= 0 {
        return Err(LayoutError::invalid(format!(
            "chunk expects `chunks` to be greater than 0, got: {chunks}"
        )));
    }
    let d = wrap_existing_dim(dim, layout.rank())?;
    let dim_size = &layout.shape[d];
    // ceil(size / chunks); when `chunks` divides the size exactly (`3·C` in 3 chunks) the
    // plain quotient keeps the symbolic form exact.
    let exact = dim_size.floordiv(&S::lit(chunks));
    let split_size = if dec.eq(&exact.mul(&S::lit(chunks)), dim_size).is_yes() {
        exact
    } else {
        dim_size.add(&S::lit(chunks - 1)).floordiv(&S::lit(chunks))
    };
    if known(dec.eq_lit(dim_size, 0))? {
        let sizes = vec![S::lit(0); chunks as usize];
        return split_with_sizes(layout, &sizes, dim, dec);
    }
    split(layout, &split_size, dim, dec)
}

/// `tensor_split(sections, dim)` (numpy `array_split`): exactly `sections` pieces, the first
/// `size % sections` one element longer. With a symbolic size the remainder must come out
/// as a number (`(2·K) // 2`), otherwise the piece sizes are undecided.
pub fn tensor_split_sections<S: Size>(
    layout: &Layout<S>,
    sections: i64,
    dim: i64,
) -> Result<Vec<Layout<S>>, LayoutError> {
    let d = tensor_split_dim(layout, dim)?;
    if sections <= 0 {
        return Err(LayoutError::invalid(format!(
            "number of sections must be larger than 0, got {sections}"
        )));
    }
    let dim_size = &layout.shape[d];
    let sections_size = S::lit(sections);
    let base = dim_size.floordiv(&sections_size);
    let longer = literal_count(&dim_size.sub(&base.mul(&sections_size)))?;
    let mut pieces = Vec::with_capacity(sections as usize);
    let mut start = S::lit(0);
    for i in 0..sections as usize {
        let length = if i < longer {
            base.add(&S::lit(1))
        } else {
            base.clone()
        };
        pieces.push(take_range(layout, d, &start, length.clone(), 1));
        start = start.add(&length);
    }
    Ok(pieces)
}

/// `tensor_split(indices, dim)`: pieces between consecutive indices, each a `slice` (so
/// indices are wrapped and clamped, and may produce empty pieces).
pub fn tensor_split_indices<S: Size>(
    layout: &Layout<S>,
    indices: &[S],
    dim: i64,
    dec: &Decider,
) -> Result<Vec<Layout<S>>, LayoutError> {
    let d = tensor_split_dim(layout, dim)? as i64;
    let mut pieces = Vec::with_capacity(indices.len() + 1);
    let mut start = S::lit(0);
    for end in indices {
        pieces.push(slice(layout, d, Some(&start), Some(end), 1, dec)?);
        start = end.clone();
    }
    pieces.push(slice(layout, d, Some(&start), None, 1, dec)?);
    Ok(pieces)
}

fn tensor_split_dim<S: Size>(layout: &Layout<S>, dim: i64) -> Result<usize, LayoutError> {
    if layout.rank() == 0 {
        return Err(LayoutError::invalid(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims",
        ));
    }
    wrap_dim(dim, layout.rank())
}

/// `unbind(dim)`: one `select` per index of `dim`.
pub fn unbind<S: Size>(
    layout: &Layout<S>,
    dim: i64,
    dec: &Decider,
) -> Result<Vec<Layout<S>>, LayoutError> {
    let d = wrap_dim(dim, layout.rank())?;
    let d = wrap_existing_dim(d as i64, layout.rank())?;
    let count = literal_count(&layout.shape[d])?;
    (0..count)
        .map(|i| select(layout, d as i64, &S::lit(i as i64), dec))
        .collect()
}

/// A number of pieces, which must be a known non-negative number.
fn literal_count<S: Size>(count: &S) -> Result<usize, Undecided> {
    count
        .as_lit()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or(Undecided)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contiguous(shape: &[i64]) -> Layout<i64> {
        Layout::contiguous(shape.to_vec())
    }

    fn sizes_along(pieces: &[Layout<i64>], d: usize) -> Vec<i64> {
        pieces.iter().map(|p| p.shape[d]).collect()
    }

    fn dec() -> Decider<'static> {
        Decider::concrete()
    }

    #[test]
    fn split_by_size() {
        let x = contiguous(&[7, 2]);
        let pieces = split(&x, &3, 0, &dec()).unwrap();
        assert_eq!(sizes_along(&pieces, 0), vec![3, 3, 1]);
        assert_eq!(
            pieces.iter().map(|p| p.offset).collect::<Vec<_>>(),
            vec![0, 6, 12]
        );
        assert_eq!(sizes_along(&split(&x, &10, 0, &dec()).unwrap(), 0), vec![7]);
        assert_eq!(
            sizes_along(&split(&contiguous(&[0, 2]), &0, 0, &dec()).unwrap(), 0),
            vec![0]
        );
        assert_eq!(
            split(&x, &0, 0, &dec()).unwrap_err().message,
            "split_size can only be 0 if dimension size is 0, but got dimension size of 7"
        );
        assert_eq!(
            split(&x, &-1, 0, &dec()).unwrap_err().message,
            "split expects split_size be non-negative, but got split_size=-1"
        );
    }

    #[test]
    fn split_with_sizes_must_sum() {
        let x = contiguous(&[1, 6, 4, 4]);
        let pieces = split_with_sizes(&x, &[4, 2], 1, &dec()).unwrap();
        assert_eq!(sizes_along(&pieces, 1), vec![4, 2]);
        assert_eq!(pieces[1].offset, 64);
        assert_eq!(
            split_with_sizes(&x, &[4, 2, 2, 1], 1, &dec()).unwrap_err().message,
            "split_with_sizes expects split_sizes to sum exactly to 6 (input tensor's size at dimension 1), but got split_sizes=[4, 2, 2, 1]"
        );
    }

    #[test]
    fn chunk_may_return_fewer_pieces() {
        // TV test_chunk: rand(4,7).chunk(3,1) → [4,3],[4,3],[4,1].
        assert_eq!(
            sizes_along(&chunk(&contiguous(&[4, 7]), 3, 1, &dec()).unwrap(), 1),
            vec![3, 3, 1]
        );
        // (E) 5 rows in 4 chunks → 2, 2, 1.
        assert_eq!(
            sizes_along(&chunk(&contiguous(&[5]), 4, 0, &dec()).unwrap(), 0),
            vec![2, 2, 1]
        );
        assert_eq!(
            sizes_along(&chunk(&contiguous(&[0, 3]), 3, 0, &dec()).unwrap(), 0),
            vec![0, 0, 0]
        );
        assert_eq!(
            chunk(&contiguous(&[4]), 0, 0, &dec()).unwrap_err().message,
            "chunk expects `chunks` to be greater than 0, got: 0"
        );
    }

    #[test]
    fn tensor_split_forms() {
        let x = contiguous(&[7]);
        assert_eq!(
            sizes_along(&tensor_split_sections(&x, 3, 0).unwrap(), 0),
            vec![3, 2, 2]
        );
        let pieces = tensor_split_indices(&x, &[1, 5, 20], 0, &dec()).unwrap();
        assert_eq!(sizes_along(&pieces, 0), vec![1, 4, 2, 0]);
        assert_eq!(pieces[2].offset, 5);
    }

    #[test]
    fn unbind_selects_each_index() {
        let pieces = unbind(&contiguous(&[2, 3]), 1, &dec()).unwrap();
        assert_eq!(pieces.len(), 3);
        assert_eq!(pieces[2], Layout::new(vec![2], vec![3], 2));
        assert_eq!(
            unbind(&Layout::<i64>::scalar(), 0, &dec())
                .unwrap_err()
                .message,
            "Dimension specified as 0 but tensor has no dimensions"
        );
    }
}
