//! The oracle every engine is checked against: test data with a known value at every storage
//! index, and a naive gather that computes each output element's source index from scratch
//! with plain division — deliberately sharing no code with the engines' fast paths.

use half::{bf16, f16};
use rayon::prelude::*;

use super::dtype::DType;
use super::error::VerifyError;
use super::strided::StridedLayout;

/// An element as a copy sees it: raw bits of a fixed width. Engines are generic over this
/// trait, so `bf16`, `f16` and `i16` share one monomorphised copy (`u16`).
pub trait Element: Copy + Default + PartialEq + Send + Sync + 'static {
    /// The element's low `8 · size_of::<Self>()` bits of `bits`.
    fn from_bits(bits: u64) -> Self;
    fn to_bits(self) -> u64;
}

macro_rules! impl_element {
    ($($ty:ty),*) => {$(
        impl Element for $ty {
            fn from_bits(bits: u64) -> Self {
                bits as $ty
            }
            fn to_bits(self) -> u64 {
                self as u64
            }
        }
    )*};
}
impl_element!(u8, u16, u32, u64);

/// The test value stored at `storage_index`: a hash of the index, never zero, so a
/// destination left at zero or filled from the wrong place shows up as a mismatch.
pub fn pattern_value<T: Element>(storage_index: u64) -> T {
    let mut z = storage_index.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    let value = T::from_bits(z);
    if value == T::default() {
        T::from_bits(1)
    } else {
        value
    }
}

/// Fills `buffer[i]` with [`pattern_value(i)`](pattern_value), in parallel.
pub fn fill_pattern<T: Element>(buffer: &mut [T]) {
    buffer
        .par_iter_mut()
        .enumerate()
        .for_each(|(index, slot)| *slot = pattern_value(index as u64));
}

/// Storage index of the element at row-major position `linear` of `layout`, by repeated
/// division from the innermost dimension outward. The layout must be valid.
pub fn source_index(layout: &StridedLayout, linear: u64) -> u64 {
    let mut rest = linear;
    let mut index = layout.offset;
    for (&size, &stride) in layout.shape.iter().zip(&layout.strides).rev() {
        let size = size as u64;
        index += (rest % size) as i64 * stride;
        rest /= size;
    }
    index as u64
}

/// The naive gather: `out[i] = src[source_index(layout, i)]` for every `i`.
pub fn reference_gather<T: Element>(layout: &StridedLayout, src: &[T]) -> Vec<T> {
    (0..layout.numel())
        .into_par_iter()
        .map(|linear| src[source_index(layout, linear) as usize])
        .collect()
}

/// Which output positions a check compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckCoverage {
    /// Every element.
    All,
    /// About this many positions spread evenly over the output, plus the first and last
    /// thousand (where off-by-one errors in tails and pieces live).
    Sample(u64),
}

/// Compares `dst` (the engine's result for `layout`) with the reference gather of `src`, and
/// on failure names the first wrong position with both values decoded as `dtype`.
pub fn check_copy<T: Element>(
    layout: &StridedLayout,
    dtype: DType,
    src: &[T],
    dst: &[T],
    coverage: CheckCoverage,
) -> Result<(), VerifyError> {
    let numel = layout.numel();
    if dst.len() as u64 != numel {
        return Err(VerifyError::Mismatch(format!(
            "destination holds {} elements, expected {numel}",
            dst.len()
        )));
    }
    let wrong_at = |linear: u64| {
        let expected = src[source_index(layout, linear) as usize];
        (dst[linear as usize] != expected).then_some((linear, expected))
    };
    let first_wrong = match coverage {
        CheckCoverage::All => (0..numel).into_par_iter().find_map_first(wrong_at),
        CheckCoverage::Sample(count) => {
            let step = (numel / count.max(1)).max(1);
            let edges = (0..numel.min(1000)).chain(numel.saturating_sub(1000)..numel);
            let spread: Vec<u64> = edges.chain((0..numel).step_by(step as usize)).collect();
            spread.into_par_iter().find_map_first(wrong_at)
        }
    };
    match first_wrong {
        None => Ok(()),
        Some((linear, expected)) => Err(VerifyError::Mismatch(format!(
            "{layout} ({dtype}): output element {linear} is {}, expected {} from storage index {}",
            describe_bits(dtype, dst[linear as usize].to_bits()),
            describe_bits(dtype, expected.to_bits()),
            source_index(layout, linear)
        ))),
    }
}

/// `0x3f80 (1.0)`: raw bits and, for floating types, the value they encode.
pub fn describe_bits(dtype: DType, bits: u64) -> String {
    let width = dtype.size_bytes() * 2;
    let value = match dtype {
        DType::F64 => format!(" ({})", f64::from_bits(bits)),
        DType::F32 => format!(" ({})", f32::from_bits(bits as u32)),
        DType::F16 => format!(" ({})", f16::from_bits(bits as u16)),
        DType::BF16 => format!(" ({})", bf16::from_bits(bits as u16)),
        _ => String::new(),
    };
    format!("0x{bits:0width$x}{value}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_is_never_zero_and_varies() {
        for index in 0..10_000u64 {
            assert_ne!(pattern_value::<u8>(index), 0);
            assert_ne!(pattern_value::<u16>(index), 0);
        }
        let distinct: std::collections::HashSet<u32> =
            (0..10_000).map(pattern_value::<u32>).collect();
        assert!(distinct.len() > 9_990);
    }

    #[test]
    fn reference_gather_of_a_transpose() {
        // A 2×3 matrix 0..6 transposed: rows of the output are columns of the input.
        let src: Vec<u32> = (0..6).collect();
        let t = StridedLayout::contiguous(&[2, 3]).transpose(0, 1).unwrap();
        assert_eq!(reference_gather(&t, &src), vec![0, 3, 1, 4, 2, 5]);
        let sliced = StridedLayout::new(vec![2, 2], vec![3, 2], 0); // x[:, ::2]
        assert_eq!(reference_gather(&sliced, &src), vec![0, 2, 3, 5]);
        let reversed = StridedLayout::new(vec![3], vec![-1], 5);
        assert_eq!(reference_gather(&reversed, &src), vec![5, 4, 3]);
        let expanded = StridedLayout::new(vec![2, 3], vec![0, 1], 3);
        assert_eq!(reference_gather(&expanded, &src), vec![3, 4, 5, 3, 4, 5]);
    }

    #[test]
    fn check_reports_the_first_wrong_element_with_decoded_values() {
        let layout = StridedLayout::contiguous(&[4]);
        let src: Vec<u16> = vec![0x3f80, 0x4000, 0x4040, 0x4080];
        let mut dst = src.clone();
        assert!(check_copy(&layout, DType::BF16, &src, &dst, CheckCoverage::All).is_ok());
        dst[2] = 0;
        let err = check_copy(&layout, DType::BF16, &src, &dst, CheckCoverage::All).unwrap_err();
        assert_eq!(
            err.to_string(),
            "copy produced wrong data: shape (4,) strides (1,) offset 0 (bf16): \
             output element 2 is 0x0000 (0), expected 0x4040 (3) from storage index 2"
        );
        assert!(check_copy(&layout, DType::BF16, &src, &dst, CheckCoverage::Sample(2)).is_err());
        assert!(check_copy(&layout, DType::BF16, &src, &dst[..3], CheckCoverage::All).is_err());
    }

    #[test]
    fn describes_bits_per_dtype() {
        assert_eq!(describe_bits(DType::F32, 0x3f80_0000), "0x3f800000 (1)");
        assert_eq!(describe_bits(DType::F16, 0x3c00), "0x3c00 (1)");
        assert_eq!(describe_bits(DType::I64, 5), "0x0000000000000005");
    }
}
