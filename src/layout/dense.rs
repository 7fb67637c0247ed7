//! Layouts of PyTorch's copying ops that "preserve the memory format" (spec §5,
//! "Copying ops"): `clone()`, `empty_like()`, `to(dtype/device)`.

use super::contiguity::{strides_for_format, MemoryFormat};
use super::decided::{known, Undecided};
use super::dim_order::{sort_innermost_first, Placement};
use super::error::LayoutError;
use super::layout::Layout;
use super::reshape::MaybeCopy;
use super::size::{Decider, Size};

/// `infer_dense_strides`: dense strides with the *same dimension order* as `strides`.
/// Dimensions are sorted as TensorIterator sorts them for one operand (a zero stride
/// compares as ambiguous, equal strides put the larger dimension outside); then strides are
/// assigned innermost first, size-0 and size-1 dimensions not multiplying.
pub fn infer_dense_strides<S: Size>(
    shape: &[S],
    strides: &[S],
    dec: &Decider,
) -> Result<Vec<S>, LayoutError> {
    match shape.len() {
        0 => return Ok(Vec::new()),
        1 => return Ok(vec![S::lit(1)]),
        _ => {}
    }
    let perm = sort_innermost_first(shape.len(), |a, b| place(shape, strides, a, b, dec))?;
    let mut out = vec![S::lit(0); shape.len()];
    let mut running = S::lit(1);
    for &d in &perm {
        out[d] = running.clone();
        if known(dec.lt(&S::lit(1), &shape[d]))? {
            running = running.mul(&shape[d]);
        }
    }
    Ok(out)
}

fn place<S: Size>(
    shape: &[S],
    strides: &[S],
    a: usize,
    b: usize,
    dec: &Decider,
) -> Result<Placement, Undecided> {
    let (stride_a, stride_b) = (&strides[a], &strides[b]);
    if known(dec.eq_lit(stride_a, 0).or(dec.eq_lit(stride_b, 0)))? {
        return Ok(Placement::Ambiguous);
    }
    if known(dec.lt(stride_a, stride_b))? {
        return Ok(Placement::Inner);
    }
    if known(dec.lt(stride_b, stride_a))? || known(dec.lt(&shape[b], &shape[a]))? {
        return Ok(Placement::Outer);
    }
    Ok(Placement::Ambiguous)
}

/// `x.clone(memory_format=format)` (also `empty_like`, `*_like`): a new tensor, offset 0.
/// `Preserve` keeps the strides of a non-overlapping-and-dense input and otherwise uses
/// [`infer_dense_strides`]; an explicit format lays the tensor out in that format.
pub fn clone_with_format<S: Size>(
    layout: &Layout<S>,
    format: MemoryFormat,
    dec: &Decider,
) -> Result<Layout<S>, LayoutError> {
    let strides = match format {
        MemoryFormat::Preserve => {
            if known(layout.is_non_overlapping_and_dense(dec))? {
                layout.strides.clone()
            } else {
                infer_dense_strides(&layout.shape, &layout.strides, dec)?
            }
        }
        explicit => strides_for_format(&layout.shape, explicit)?,
    };
    Ok(Layout::new(layout.shape.clone(), strides, S::lit(0)))
}

/// `x.to(dtype / device, memory_format=format)`. `converts` is whether the dtype or device
/// changes (or `copy=True`). Nothing to do — no conversion, and `Preserve` or the format
/// the tensor already *suggests* — returns the input itself; otherwise a copy as
/// [`clone_with_format`] lays it out.
///
/// Read in source (`to_will_alias`), not checked against torch: the no-op test compares
/// with `suggest_memory_format`, so `x.t().to(memory_format=torch.contiguous_format)` on a
/// 2-d tensor returns `x.t()` itself, still not contiguous.
pub fn to_with_format<S: Size>(
    layout: &Layout<S>,
    format: MemoryFormat,
    converts: bool,
    dec: &Decider,
) -> Result<MaybeCopy<S>, LayoutError> {
    if !converts {
        let already = format == MemoryFormat::Preserve
            || layout.suggest_memory_format(dec).ok_or(Undecided)? == format;
        if already {
            return Ok(MaybeCopy::alias(layout.clone()));
        }
    }
    Ok(MaybeCopy::copy(clone_with_format(layout, format, dec)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::tri::Tri;

    fn layout(shape: &[i64], strides: &[i64]) -> Layout<i64> {
        Layout::new(shape.to_vec(), strides.to_vec(), 0)
    }

    fn dec() -> Decider<'static> {
        Decider::concrete()
    }

    #[test]
    fn dense_strides_keep_the_dimension_order() {
        // (E) clone of (2,4,3)/(1,12,4) (non-dense) → (1,6,2).
        assert_eq!(
            infer_dense_strides(&[2i64, 4, 3], &[1, 12, 4], &dec()).unwrap(),
            vec![1, 6, 2]
        );
        // (E) broadcast (3,4)/(1,0) → contiguous (4,1).
        assert_eq!(
            infer_dense_strides(&[3i64, 4], &[1, 0], &dec()).unwrap(),
            vec![4, 1]
        );
        assert_eq!(infer_dense_strides(&[5i64], &[3], &dec()).unwrap(), vec![1]);
    }

    #[test]
    fn clone_preserves_dense_strides_and_drops_the_offset() {
        let transposed = Layout::new(vec![3i64, 2], vec![1, 3], 7);
        assert_eq!(
            clone_with_format(&transposed, MemoryFormat::Preserve, &dec()).unwrap(),
            layout(&[3, 2], &[1, 3])
        );
        let strided = layout(&[2, 4, 3], &[1, 12, 4]);
        assert_eq!(
            clone_with_format(&strided, MemoryFormat::Preserve, &dec())
                .unwrap()
                .strides,
            vec![1, 6, 2]
        );
        assert_eq!(
            clone_with_format(&strided, MemoryFormat::Contiguous, &dec())
                .unwrap()
                .strides,
            vec![12, 3, 1]
        );
    }

    #[test]
    fn to_returns_self_when_nothing_changes() {
        // (E) xt.float() is xt when xt is already float.
        let xt = layout(&[3, 2], &[1, 3]);
        let same = to_with_format(&xt, MemoryFormat::Preserve, false, &dec()).unwrap();
        assert_eq!((same.copies, same.layout), (Tri::No, Some(xt.clone())));
        let converted = to_with_format(&xt, MemoryFormat::Preserve, true, &dec()).unwrap();
        assert_eq!(
            (converted.copies, converted.layout),
            (Tri::Yes, Some(layout(&[3, 2], &[1, 3])))
        );
        let cl = to_with_format(
            &Layout::contiguous(vec![2i64, 3, 4, 5]),
            MemoryFormat::ChannelsLast,
            false,
            &dec(),
        )
        .unwrap();
        assert_eq!(cl.layout.unwrap().strides, vec![60, 1, 15, 3]);
    }
}
