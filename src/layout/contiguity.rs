//! PyTorch's contiguity predicates (spec §1.1–§1.4) and the strides of each memory format.
//!
//! All predicates answer with a [`Tri`]: with symbolic sizes a stride comparison may be
//! undecidable, and then the answer is `Unknown` rather than a guess.

use super::decided::{known, Undecided};
use super::error::LayoutError;
use super::layout::{contiguous_strides, Layout};
use super::size::{Decider, Size};
use super::tri::Tri;

/// `torch.memory_format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryFormat {
    /// Row-major (`torch.contiguous_format`).
    Contiguous,
    /// NHWC storage of an NCHW tensor (rank 4).
    ChannelsLast,
    /// NDHWC storage of an NCDHW tensor (rank 5).
    ChannelsLast3d,
    /// "Keep the input's layout" (`torch.preserve_format`); only meaningful for copies.
    Preserve,
}

/// Storage order of the channels-last formats, innermost dimension first.
const CHANNELS_LAST_2D_ORDER: [usize; 4] = [1, 3, 2, 0];
const CHANNELS_LAST_3D_ORDER: [usize; 5] = [1, 4, 3, 2, 0];

impl<S: Size> Layout<S> {
    /// `is_contiguous()` (§1.1): row-major once size-1 dimensions are ignored; every
    /// zero-element tensor counts as contiguous whatever its strides. The offset is irrelevant.
    pub fn is_contiguous(&self, dec: &Decider) -> Tri {
        let row_major = dense_in_order(&self.shape, &self.strides, (0..self.rank()).rev(), dec);
        if row_major == Tri::Yes {
            return Tri::Yes;
        }
        dec.eq_lit(&self.numel(), 0).or(row_major)
    }

    /// Contiguous once its broadcast dims (stride 0: a contiguous tensor `expand`ed) are
    /// read as size 1. Convolution, pooling, interpolation and padding write such an input's
    /// output contiguous, as a contiguous input's (torch 2.15,
    /// `scripts/oracle/gen_format_following.py`).
    pub fn is_contiguous_but_broadcast(&self, dec: &Decider) -> Tri {
        let mut shape = self.shape.clone();
        for (size, stride) in shape.iter_mut().zip(&self.strides) {
            match dec.eq_lit(stride, 0) {
                Tri::Yes => *size = S::lit(1),
                Tri::No => {}
                Tri::Unknown => return Tri::Unknown,
            }
        }
        dense_in_order(&shape, &self.strides, (0..self.rank()).rev(), dec)
    }

    /// `is_contiguous(memory_format=torch.channels_last)` (§1.2): rank 4 only, dimensions
    /// visited in the order C, W, H, N. Unlike §1.1 there is no zero-element shortcut.
    pub fn is_channels_last_contiguous(&self, dec: &Decider) -> Tri {
        if self.rank() != 4 {
            return Tri::No;
        }
        dense_in_order(
            &self.shape,
            &self.strides,
            CHANNELS_LAST_2D_ORDER.into_iter(),
            dec,
        )
    }

    /// `is_contiguous(memory_format=torch.channels_last_3d)` (§1.2): rank 5 only.
    pub fn is_channels_last_3d_contiguous(&self, dec: &Decider) -> Tri {
        if self.rank() != 5 {
            return Tri::No;
        }
        dense_in_order(
            &self.shape,
            &self.strides,
            CHANNELS_LAST_3D_ORDER.into_iter(),
            dec,
        )
    }

    /// `is_contiguous(memory_format=…)`. `Preserve` is not a format a tensor can be in;
    /// it answers `No` (PyTorch rejects it before asking).
    pub fn is_contiguous_in(&self, format: MemoryFormat, dec: &Decider) -> Tri {
        match format {
            MemoryFormat::Contiguous => self.is_contiguous(dec),
            MemoryFormat::ChannelsLast => self.is_channels_last_contiguous(dec),
            MemoryFormat::ChannelsLast3d => self.is_channels_last_3d_contiguous(dec),
            MemoryFormat::Preserve => Tri::No,
        }
    }

    /// `is_non_overlapping_and_dense()` as PyTorch's tensors cache it: contiguous, or
    /// channels-last contiguous, or (§1.3) some permutation of the dimensions is contiguous.
    /// The first two matter for zero-element tensors, which §1.3 alone would reject.
    /// `clone`, `empty_like`, `to` and the element-wise fast path all read this flag.
    pub fn is_non_overlapping_and_dense(&self, dec: &Decider) -> Tri {
        let contiguous = self.is_contiguous(dec);
        if contiguous == Tri::Yes {
            return Tri::Yes;
        }
        let channels_last = match self.rank() {
            4 => self.is_channels_last_contiguous(dec),
            5 => self.is_channels_last_3d_contiguous(dec),
            _ => Tri::No,
        };
        if channels_last == Tri::Yes {
            return Tri::Yes;
        }
        let permuted = match permuted_dense(&self.shape, &self.strides, dec) {
            Ok(answer) => Tri::from_bool(answer),
            Err(Undecided) => Tri::Unknown,
        };
        contiguous.or(channels_last).or(permuted)
    }

    /// `suggest_memory_format()` (§1.4): `ChannelsLast` for a rank-4 tensor whose strides
    /// look channels-last, `ChannelsLast3d` likewise for rank 5, else `Contiguous`.
    /// `None` when symbolic sizes prevent deciding.
    pub fn suggest_memory_format(&self, dec: &Decider) -> Option<MemoryFormat> {
        let suggestion = match self.rank() {
            4 => {
                strides_like_channels_last(&self.shape, &self.strides, &CHANNELS_LAST_2D_ORDER, dec)
                    .map(|yes| {
                        if yes {
                            MemoryFormat::ChannelsLast
                        } else {
                            MemoryFormat::Contiguous
                        }
                    })
            }
            5 => {
                strides_like_channels_last(&self.shape, &self.strides, &CHANNELS_LAST_3D_ORDER, dec)
                    .map(|yes| {
                        if yes {
                            MemoryFormat::ChannelsLast3d
                        } else {
                            MemoryFormat::Contiguous
                        }
                    })
            }
            _ => Ok(MemoryFormat::Contiguous),
        };
        suggestion.ok()
    }
}

/// The loop shared by §1.1 and §1.2: walking dimensions innermost first, every dimension of
/// size ≠ 1 must have a stride equal to the product of the sizes already walked.
///
/// A size-1 dimension multiplies that product by 1, so "skip it" and "multiply by it" are
/// the same; only its stride check is waived. That makes each dimension's condition
/// independent (`size == 1 or stride == expected`), and the answer their Kleene conjunction.
fn dense_in_order<S: Size>(
    shape: &[S],
    strides: &[S],
    order: impl Iterator<Item = usize>,
    dec: &Decider,
) -> Tri {
    let mut expected = S::lit(1);
    let mut answer = Tri::Yes;
    for d in order {
        let stride_matches = dec.eq(&strides[d], &expected);
        let dim_ok = if stride_matches == Tri::Yes {
            Tri::Yes
        } else {
            stride_matches.or(dec.eq_lit(&shape[d], 1))
        };
        answer = answer.and(dim_ok);
        if answer == Tri::No {
            return Tri::No;
        }
        expected = expected.mul(&shape[d]);
    }
    answer
}

/// §1.3 `_compute_non_overlapping_and_dense`: the dimensions of size ≥ 2, ordered by
/// stride, must have strides 1, s₀, s₀·s₁, …. PyTorch sorts; equivalently, repeatedly find
/// the dimension whose stride is the next required one. (Strides required grow strictly,
/// so a dimension skipped by this search can never match later, exactly as it would fail
/// the sorted walk.)
fn permuted_dense<S: Size>(shape: &[S], strides: &[S], dec: &Decider) -> Result<bool, Undecided> {
    if shape.len() == 1 {
        return Ok(known(dec.lt(&shape[0], &S::lit(2)))? || known(dec.eq_lit(&strides[0], 1))?);
    }
    let mut pending = Vec::with_capacity(shape.len());
    for (d, size) in shape.iter().enumerate() {
        if !known(dec.lt(size, &S::lit(2)))? {
            pending.push(d);
        }
    }
    let mut required = S::lit(1);
    while !pending.is_empty() {
        let mut found = None;
        for (i, &d) in pending.iter().enumerate() {
            if known(dec.eq(&strides[d], &required))? {
                found = Some(i);
                break;
            }
        }
        let Some(i) = found else { return Ok(false) };
        let d = pending.swap_remove(i);
        required = required.mul(&shape[d]);
    }
    Ok(true)
}

/// `is_channels_last_strides_2d_s4` / `_3d_s5` (§1.4): strides non-decreasing in the
/// channels-last order, with PyTorch's tie-breaks for ambiguous cases (a zero channel
/// stride, any zero size, and the `N111` case where N's stride equals C's).
fn strides_like_channels_last<S: Size>(
    shape: &[S],
    strides: &[S],
    order: &[usize],
    dec: &Decider,
) -> Result<bool, Undecided> {
    if known(dec.eq_lit(&strides[1], 0))? {
        return Ok(false);
    }
    let mut min = S::lit(0);
    for &d in order {
        if known(dec.eq_lit(&shape[d], 0))? {
            return Ok(false);
        }
        if known(dec.lt(&strides[d], &min))? {
            return Ok(false);
        }
        if d == 0 && known(dec.eq(&min, &strides[1]))? {
            return Ok(false);
        }
        min = strides[d].clone();
        if known(dec.lt(&S::lit(1), &shape[d]))? {
            min = min.mul(&shape[d]);
        }
    }
    Ok(true)
}

/// Strides of `torch.empty(shape, memory_format=format)`. Contiguous uses §1.5
/// (`max(size, 1)`); the channels-last formats multiply the plain sizes, as PyTorch's
/// `get_channels_last_strides_2d/3d` do. `Preserve` has no strides of its own.
pub fn strides_for_format<S: Size>(
    shape: &[S],
    format: MemoryFormat,
) -> Result<Vec<S>, LayoutError> {
    match format {
        MemoryFormat::Contiguous => Ok(contiguous_strides(shape)),
        MemoryFormat::ChannelsLast => {
            if shape.len() != 4 {
                return Err(LayoutError::invalid(
                    "required rank 4 tensor to use channels_last format",
                ));
            }
            Ok(strides_in_order(shape, &CHANNELS_LAST_2D_ORDER))
        }
        MemoryFormat::ChannelsLast3d => {
            if shape.len() != 5 {
                return Err(LayoutError::invalid(
                    "required rank 5 tensor to use channels_last_3d format",
                ));
            }
            Ok(strides_in_order(shape, &CHANNELS_LAST_3D_ORDER))
        }
        MemoryFormat::Preserve => Err(LayoutError::invalid(
            "preserve memory format is unsupported by the contiguous operator",
        )),
    }
}

/// Dense strides laying dimensions out in `order` (innermost first), plain products.
fn strides_in_order<S: Size>(shape: &[S], order: &[usize]) -> Vec<S> {
    let mut strides = vec![S::lit(0); shape.len()];
    let mut running = S::lit(1);
    for &d in order {
        strides[d] = running.clone();
        running = running.mul(&shape[d]);
    }
    strides
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(shape: &[i64], strides: &[i64]) -> Layout<i64> {
        Layout::new(shape.to_vec(), strides.to_vec(), 0)
    }

    fn dec() -> Decider<'static> {
        Decider::concrete()
    }

    #[test]
    fn contiguity_ignores_size_one_strides() {
        // TV test_contiguous: (1,16,5,5) with stride[0] changed to 20 is still contiguous.
        assert_eq!(
            layout(&[1, 16, 5, 5], &[20, 25, 5, 1]).is_contiguous(&dec()),
            Tri::Yes
        );
        assert_eq!(layout(&[2, 3], &[1, 2]).is_contiguous(&dec()), Tri::No);
        assert_eq!(layout(&[3, 1], &[1, 100]).is_contiguous(&dec()), Tri::Yes);
    }

    #[test]
    fn zero_element_tensors_are_contiguous() {
        assert_eq!(
            layout(&[2, 0, 3], &[1, 1, 0]).is_contiguous(&dec()),
            Tri::Yes
        );
        assert_eq!(Layout::<i64>::scalar().is_contiguous(&dec()), Tri::Yes);
    }

    #[test]
    fn channels_last_contiguity() {
        // NCHW (2,3,4,5) stored NHWC: strides (60, 1, 15, 3).
        let nhwc = layout(&[2, 3, 4, 5], &[60, 1, 15, 3]);
        assert_eq!(nhwc.is_channels_last_contiguous(&dec()), Tri::Yes);
        assert_eq!(nhwc.is_contiguous(&dec()), Tri::No);
        assert_eq!(
            nhwc.suggest_memory_format(&dec()),
            Some(MemoryFormat::ChannelsLast)
        );
        assert_eq!(
            layout(&[2, 3], &[3, 1]).is_channels_last_contiguous(&dec()),
            Tri::No
        );
        // No zero-element shortcut for channels-last.
        assert_eq!(
            layout(&[2, 0, 4, 5], &[7, 7, 7, 7]).is_channels_last_contiguous(&dec()),
            Tri::No
        );
    }

    #[test]
    fn channels_last_3d_strides_and_predicate() {
        let shape = [2i64, 3, 4, 5, 6];
        let strides = strides_for_format(&shape, MemoryFormat::ChannelsLast3d).unwrap();
        assert_eq!(strides, vec![360, 1, 90, 18, 3]);
        let l = layout(&shape, &strides);
        assert_eq!(l.is_channels_last_3d_contiguous(&dec()), Tri::Yes);
        assert_eq!(
            l.suggest_memory_format(&dec()),
            Some(MemoryFormat::ChannelsLast3d)
        );
    }

    #[test]
    fn suggest_memory_format_tie_breaks() {
        // N111 contiguous: ambiguous, PyTorch falls back to Contiguous.
        assert_eq!(
            layout(&[4, 1, 1, 1], &[1, 1, 1, 1]).suggest_memory_format(&dec()),
            Some(MemoryFormat::Contiguous)
        );
        // Zero channel stride → Contiguous.
        assert_eq!(
            layout(&[2, 3, 4, 5], &[0, 0, 15, 3]).suggest_memory_format(&dec()),
            Some(MemoryFormat::Contiguous)
        );
        assert_eq!(
            layout(&[2, 3, 4], &[1, 2, 6]).suggest_memory_format(&dec()),
            Some(MemoryFormat::Contiguous)
        );
    }

    #[test]
    fn non_overlapping_and_dense() {
        assert_eq!(
            layout(&[2, 3, 4], &[12, 1, 3]).is_non_overlapping_and_dense(&dec()),
            Tri::Yes
        );
        assert_eq!(
            layout(&[2, 4, 3], &[1, 12, 4]).is_non_overlapping_and_dense(&dec()),
            Tri::No
        );
        assert_eq!(
            layout(&[3, 4], &[0, 1]).is_non_overlapping_and_dense(&dec()),
            Tri::No
        );
        assert_eq!(
            layout(&[6], &[2]).is_non_overlapping_and_dense(&dec()),
            Tri::No
        );
        assert_eq!(
            layout(&[1], &[7]).is_non_overlapping_and_dense(&dec()),
            Tri::Yes
        );
        // Zero elements: contiguous, hence dense, although §1.3 alone says no.
        assert_eq!(
            layout(&[2, 0, 3], &[1, 1, 0]).is_non_overlapping_and_dense(&dec()),
            Tri::Yes
        );
    }

    #[test]
    fn strides_for_formats() {
        assert_eq!(
            strides_for_format(&[2i64, 3, 4, 5], MemoryFormat::ChannelsLast).unwrap(),
            vec![60, 1, 15, 3]
        );
        assert_eq!(
            strides_for_format(&[2i64, 0, 3], MemoryFormat::Contiguous).unwrap(),
            vec![3, 3, 1]
        );
        let err = strides_for_format(&[2i64, 3], MemoryFormat::ChannelsLast).unwrap_err();
        assert_eq!(
            err.message,
            "required rank 4 tensor to use channels_last format"
        );
    }
}
