//! Host-side planning of a strided-to-contiguous copy: canonicalise the layout, then pick the
//! copy strategy. Pure functions of numbers, shared by the CPU and CUDA engines.
//!
//! The output of a copy is always row-major, so two adjacent dimensions can be walked as one
//! exactly when the *source* steps through them as one (`stride[outer] == stride[inner] ·
//! size[inner]`); size-1 dimensions take no part in addressing at all. What is left after
//! that decides how fast the copy can be (see `../shared/spec/cuda-engine.md` §3.3):
//!
//! | what remains                                  | strategy                                     |
//! |-----------------------------------------------|----------------------------------------------|
//! | nothing, or one dimension of stride 1         | [`CopyKind::Dense`]: one `memcpy`            |
//! | innermost stride 1 (runs of `L` elements)     | [`CopyKind::RowGather`]: copy whole runs     |
//! | innermost stride ∉ {0, 1}, another stride is 1 | [`CopyKind::Transpose`]: tiled transpose     |
//! | anything else (strided slices, broadcast, …)  | [`CopyKind::ScalarGather`]: one element each |

use std::fmt;

use super::dtype::DType;
use super::error::VerifyError;
use super::strided::StridedLayout;

/// One dimension of a canonical layout: a size and a source stride in elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dim {
    pub size: u64,
    pub stride: i64,
}

/// A layout with size-1 dimensions dropped and mergeable neighbours merged, outermost first.
/// Its row-major linearisation visits the same storage offsets, in the same order, as the
/// original layout's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanonicalLayout {
    pub dims: Vec<Dim>,
    pub offset: i64,
}

impl CanonicalLayout {
    pub fn numel(&self) -> u64 {
        self.dims.iter().map(|dim| dim.size).product()
    }

    /// Row-major strides of the output (the destination) for these dimensions.
    pub fn output_strides(&self) -> Vec<u64> {
        let mut strides = vec![1u64; self.dims.len()];
        for index in (0..self.dims.len().saturating_sub(1)).rev() {
            strides[index] = strides[index + 1] * self.dims[index + 1].size;
        }
        strides
    }
}

/// Drops size-1 dimensions and merges every outer/inner pair with
/// `stride[outer] == stride[inner] · size[inner]`.
///
/// The layout must be valid ([`StridedLayout::validate`]). An empty layout keeps its size-0
/// dimension, so [`CanonicalLayout::numel`] stays 0; a single element canonicalises to no
/// dimensions at all.
pub fn canonicalize(layout: &StridedLayout) -> CanonicalLayout {
    // Built innermost first, reversed at the end.
    let mut inner_first: Vec<Dim> = Vec::with_capacity(layout.rank());
    for (&size, &stride) in layout.shape.iter().zip(&layout.strides).rev() {
        if size == 1 {
            continue;
        }
        let dim = Dim {
            size: size as u64,
            stride,
        };
        match inner_first.last_mut() {
            Some(inner)
                if dim.size != 0
                    && inner.size != 0
                    && dim.stride as i128 == inner.stride as i128 * inner.size as i128 =>
            {
                inner.size *= dim.size;
            }
            _ => inner_first.push(dim),
        }
    }
    inner_first.reverse();
    CanonicalLayout {
        dims: inner_first,
        offset: layout.offset,
    }
}

/// How a copy is carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyKind {
    /// No elements: nothing to copy.
    Empty,
    /// The source is one contiguous range (PyTorch's `is_contiguous()` holds): a plain
    /// `memcpy`. `.contiguous()` and `reshape` would not copy at all here.
    Dense,
    /// The innermost source stride is 1: the copy is a batch of runs of
    /// `dims.last().size` elements, moved `vector_bytes` at a time.
    RowGather { vector_bytes: usize },
    /// The innermost source stride is neither 0 nor 1 but `dims[unit_dim]` has stride 1: a
    /// transpose of the (`unit_dim`, innermost) plane for every index of the other
    /// dimensions, read along `unit_dim` and written along the innermost dimension. `pack`
    /// elements travel together in one global access on both sides (2 for 1- and 2-byte
    /// elements when the alignment allows it, else 1).
    Transpose { unit_dim: usize, pack: u32 },
    /// Everything else: element by element, writes coalesced.
    ScalarGather,
}

/// A planned copy: the canonical layout, the dtype and the strategy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyPlan {
    pub dtype: DType,
    pub layout: CanonicalLayout,
    pub kind: CopyKind,
}

impl CopyPlan {
    pub fn elem_bytes(&self) -> usize {
        self.dtype.size_bytes()
    }

    pub fn numel(&self) -> u64 {
        self.layout.numel()
    }

    /// Bytes the copy writes (the size of the new contiguous tensor).
    pub fn bytes_written(&self) -> u64 {
        self.numel() * self.elem_bytes() as u64
    }

    /// Distinct source bytes the copy reads: broadcast (stride-0) dimensions re-read the same
    /// bytes, so they do not count. Overlapping non-zero strides (only `as_strided` makes
    /// them) are counted as if distinct.
    pub fn bytes_read(&self) -> u64 {
        self.layout
            .dims
            .iter()
            .filter(|dim| dim.stride != 0)
            .map(|dim| dim.size)
            .product::<u64>()
            * self.elem_bytes() as u64
            * u64::from(self.numel() != 0)
    }

    /// Whether PyTorch's `.contiguous()` / a copying `reshape` would allocate a new buffer.
    pub fn needs_copy(&self) -> bool {
        !matches!(self.kind, CopyKind::Dense | CopyKind::Empty)
    }
}

impl fmt::Display for CopyPlan {
    /// A short description for reports, e.g. `row gather (runs of 256 B, 16-byte vectors)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let esize = self.elem_bytes() as u64;
        match self.kind {
            CopyKind::Empty => write!(f, "empty (no elements)"),
            CopyKind::Dense => write!(f, "memcpy (already contiguous)"),
            CopyKind::RowGather { vector_bytes } => write!(
                f,
                "row gather (runs of {} B, {vector_bytes}-byte vectors)",
                self.layout.dims.last().map_or(0, |dim| dim.size) * esize
            ),
            CopyKind::Transpose { unit_dim, pack } => {
                let rows = self.layout.dims[unit_dim].size;
                let cols = self.layout.dims.last().map_or(0, |dim| dim.size);
                let batch = self.numel() / (rows * cols).max(1);
                write!(f, "tiled transpose ({rows}×{cols}")?;
                if batch > 1 {
                    write!(f, ", batch {batch}")?;
                }
                if pack > 1 {
                    write!(f, ", {pack} elements per access")?;
                }
                write!(f, ")")
            }
            CopyKind::ScalarGather => write!(f, "scalar gather ({esize}-byte elements)"),
        }
    }
}

/// Validates and plans the copy of `layout` (elements of `dtype`) into a new row-major buffer.
pub fn plan_copy(layout: &StridedLayout, dtype: DType) -> Result<CopyPlan, VerifyError> {
    layout.validate()?;
    let canonical = canonicalize(layout);
    let kind = classify(&canonical, dtype.size_bytes());
    Ok(CopyPlan {
        dtype,
        layout: canonical,
        kind,
    })
}

/// Picks the strategy for a canonical layout (see the module table).
pub fn classify(layout: &CanonicalLayout, elem_bytes: usize) -> CopyKind {
    let Some(innermost) = layout.dims.last() else {
        return CopyKind::Dense; // a single element
    };
    if layout.numel() == 0 {
        return CopyKind::Empty;
    }
    if innermost.stride == 1 {
        if layout.dims.len() == 1 {
            return CopyKind::Dense;
        }
        let outer_strides = layout.dims[..layout.dims.len() - 1]
            .iter()
            .map(|dim| dim.stride);
        return CopyKind::RowGather {
            vector_bytes: vector_width(elem_bytes, innermost.size, layout.offset, outer_strides),
        };
    }
    if innermost.stride != 0 {
        // The innermost stride-1 dimension other than the last: the closest one to the
        // output's contiguous dimension keeps the middle dimensions' footprint small.
        if let Some(unit_dim) = layout.dims[..layout.dims.len() - 1]
            .iter()
            .rposition(|dim| dim.stride == 1)
        {
            let pack = transpose_pack(layout, unit_dim, elem_bytes);
            return CopyKind::Transpose { unit_dim, pack };
        }
    }
    CopyKind::ScalarGather
}

/// Widths a row gather may move at once, widest first (16 bytes is a CUDA `uint4`).
pub const VECTOR_WIDTHS: [usize; 5] = [16, 8, 4, 2, 1];

/// The widest vector, in bytes, that divides the run length, the storage offset and every
/// outer stride (all in bytes). Buffers are allocated at least 16-byte aligned, so every run
/// then starts on a vector boundary and holds a whole number of vectors. Stride 0 (broadcast)
/// is divisible by anything; negative strides count by their magnitude.
pub fn vector_width(
    elem_bytes: usize,
    run_elems: u64,
    offset: i64,
    outer_strides: impl IntoIterator<Item = i64>,
) -> usize {
    let esize = elem_bytes as u64;
    let mut byte_quantities = vec![run_elems * esize, offset.unsigned_abs() * esize];
    byte_quantities.extend(
        outer_strides
            .into_iter()
            .map(|stride| stride.unsigned_abs() * esize),
    );
    VECTOR_WIDTHS
        .into_iter()
        .find(|&width| {
            byte_quantities
                .iter()
                .all(|&bytes| bytes % width as u64 == 0)
        })
        .unwrap_or(1)
}

/// Elements per global access in a tiled transpose: 2 for 1- and 2-byte elements when every
/// pair on both sides is whole and aligned (even plane sizes, even offset and strides), so
/// that a warp moves 128 B per access instead of 64 B; 1 otherwise.
pub fn transpose_pack(layout: &CanonicalLayout, unit_dim: usize, elem_bytes: usize) -> u32 {
    if elem_bytes > 2 {
        return 1;
    }
    let last = layout.dims.len() - 1;
    let plane_even = layout.dims[unit_dim].size % 2 == 0 && layout.dims[last].size % 2 == 0;
    // The source address of a pair is offset + Σ batch strides + column·stride(last);
    // the destination one is a multiple of the (even) innermost size.
    let source_even = layout.offset % 2 == 0
        && layout
            .dims
            .iter()
            .enumerate()
            .filter(|&(index, _)| index != unit_dim)
            .all(|(_, dim)| dim.stride % 2 == 0);
    if plane_even && source_even {
        2
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims(pairs: &[(u64, i64)]) -> Vec<Dim> {
        pairs
            .iter()
            .map(|&(size, stride)| Dim { size, stride })
            .collect()
    }

    fn plan(shape: &[i64], strides: &[i64], offset: i64, dtype: DType) -> CopyPlan {
        plan_copy(
            &StridedLayout::new(shape.to_vec(), strides.to_vec(), offset),
            dtype,
        )
        .unwrap()
    }

    #[test]
    fn contiguous_layouts_coalesce_to_one_dimension() {
        let c = canonicalize(&StridedLayout::contiguous(&[4, 16, 2048, 128]));
        assert_eq!(c.dims, dims(&[(4 * 16 * 2048 * 128, 1)]));
        // Size-1 dimensions are dropped whatever their stride.
        let c = canonicalize(&StridedLayout::new(vec![1, 6, 1], vec![999, 1, 7], 3));
        assert_eq!(c.dims, dims(&[(6, 1)]));
        assert_eq!(c.offset, 3);
        // A single element has no dimensions left.
        assert!(canonicalize(&StridedLayout::new(vec![1, 1], vec![5, 5], 0))
            .dims
            .is_empty());
    }

    #[test]
    fn permute_0213_keeps_batch_merged_and_the_head_dim_apart() {
        // (B,S,H,D) -> (B,H,S,D): sizes (4,16,2048,128) strides (S·H·D, D, H·D, 1) for
        // x = empty(4, 2048, 16, 128).transpose(1, 2).
        let x = StridedLayout::contiguous(&[4, 2048, 16, 128])
            .transpose(1, 2)
            .unwrap();
        let c = canonicalize(&x);
        assert_eq!(
            c.dims,
            dims(&[(4, 2048 * 16 * 128), (16, 128), (2048, 16 * 128), (128, 1)])
        );
        // Only the source condition matters: dims (S, D) would merge in the output but the
        // source needs stride_S == D and has H·D.
    }

    #[test]
    fn merges_through_a_sliced_outer_dimension() {
        // x[:, :3] of a (4, 5) tensor: sizes (4, 3) strides (5, 1): nothing merges.
        let c = canonicalize(&StridedLayout::new(vec![4, 3], vec![5, 1], 0));
        assert_eq!(c.dims, dims(&[(4, 5), (3, 1)]));
        // x[::2] of a (6, 4, 5) tensor: (3, 4, 5) strides (40, 5, 1): the inner two merge.
        let c = canonicalize(&StridedLayout::new(vec![3, 4, 5], vec![40, 5, 1], 0));
        assert_eq!(c.dims, dims(&[(3, 40), (20, 1)]));
    }

    #[test]
    fn broadcast_dimensions_merge_with_each_other() {
        let c = canonicalize(&StridedLayout::new(vec![2, 3, 4], vec![0, 0, 1], 0));
        assert_eq!(c.dims, dims(&[(6, 0), (4, 1)]));
        let c = canonicalize(&StridedLayout::new(vec![5, 7], vec![1, 0], 0));
        assert_eq!(c.dims, dims(&[(5, 1), (7, 0)]));
    }

    #[test]
    fn reversed_views_merge_with_negative_strides() {
        let c = canonicalize(&StridedLayout::new(vec![2, 3], vec![-3, -1], 5));
        assert_eq!(c.dims, dims(&[(6, -1)]));
    }

    #[test]
    fn empty_layouts_keep_a_zero_size() {
        let p = plan(&[3, 0, 2], &[2, 2, 1], 0, DType::F32);
        assert_eq!(p.kind, CopyKind::Empty);
        assert_eq!(p.numel(), 0);
        assert_eq!(p.bytes_read(), 0);
        assert!(!p.needs_copy());
    }

    #[test]
    fn classification_follows_the_strategy_table() {
        assert_eq!(plan(&[8, 8], &[8, 1], 4, DType::F32).kind, CopyKind::Dense);
        assert_eq!(plan(&[1], &[1], 0, DType::F32).kind, CopyKind::Dense);
        assert_eq!(
            plan(
                &[4, 2048, 16, 128],
                &[4194304, 128, 262144, 1],
                0,
                DType::BF16
            )
            .kind,
            CopyKind::RowGather { vector_bytes: 16 }
        );
        assert_eq!(
            plan(&[8192, 8192], &[1, 8192], 0, DType::F32).kind,
            CopyKind::Transpose {
                unit_dim: 0,
                pack: 1
            }
        );
        // x[:, ::2]: no stride-1 dimension left.
        assert_eq!(
            plan(&[64, 32], &[64, 2], 0, DType::F32).kind,
            CopyKind::ScalarGather
        );
        // Broadcast along the innermost dimension: a transpose would gain nothing.
        assert_eq!(
            plan(&[64, 32], &[1, 0], 0, DType::F32).kind,
            CopyKind::ScalarGather
        );
        // Broadcast of whole rows is still a row gather.
        assert!(matches!(
            plan(&[64, 32], &[0, 1], 0, DType::F32).kind,
            CopyKind::RowGather { .. }
        ));
    }

    #[test]
    fn transpose_uses_the_stride_one_dimension_closest_to_the_output_run() {
        // permute(0, 3, 2, 1) of (A, B, C, D): strides (BCD, 1, D, CD) -> dims (A, D, C, B).
        let x = StridedLayout::contiguous(&[2, 6, 5, 4])
            .permute(&[0, 3, 2, 1])
            .unwrap();
        let p = plan_copy(&x, DType::F32).unwrap();
        assert_eq!(
            p.kind,
            CopyKind::Transpose {
                unit_dim: 1,
                pack: 1
            }
        );
    }

    #[test]
    fn vector_width_is_the_widest_common_divisor_in_bytes() {
        // bf16 runs of 128 elements = 256 B, strides multiples of 128 elements.
        assert_eq!(vector_width(2, 128, 0, [4194304, 128, 262144]), 16);
        // A run of 6 bf16 = 12 B: 4-byte vectors.
        assert_eq!(vector_width(2, 6, 0, [6]), 4);
        // An odd offset in bf16 forces 2-byte accesses.
        assert_eq!(vector_width(2, 128, 1, [256]), 2);
        // f32 with an outer stride of 5 elements (20 B): 4-byte vectors.
        assert_eq!(vector_width(4, 4, 0, [5]), 4);
        // u8 run of 3: byte accesses.
        assert_eq!(vector_width(1, 3, 0, [16]), 1);
        // f64 run of 2 = 16 B with a broadcast and a negative stride.
        assert_eq!(vector_width(8, 2, 2, [0, -4]), 16);
    }

    #[test]
    fn transpose_packs_pairs_of_narrow_elements_only_when_aligned() {
        let t = |shape: &[i64], strides: &[i64], offset: i64, dtype: DType| {
            plan(shape, strides, offset, dtype).kind
        };
        assert_eq!(
            t(&[64, 64], &[1, 64], 0, DType::BF16),
            CopyKind::Transpose {
                unit_dim: 0,
                pack: 2
            }
        );
        // An odd column count, an odd offset or an odd source stride break the pairs.
        assert_eq!(
            t(&[64, 63], &[1, 64], 0, DType::BF16),
            CopyKind::Transpose {
                unit_dim: 0,
                pack: 1
            }
        );
        assert_eq!(
            t(&[64, 64], &[1, 64], 1, DType::BF16),
            CopyKind::Transpose {
                unit_dim: 0,
                pack: 1
            }
        );
        assert_eq!(
            t(&[64, 64], &[1, 65], 0, DType::U8),
            CopyKind::Transpose {
                unit_dim: 0,
                pack: 1
            }
        );
        // 4-byte elements already fill a warp's 128-byte access.
        assert_eq!(
            t(&[64, 64], &[1, 64], 0, DType::F32),
            CopyKind::Transpose {
                unit_dim: 0,
                pack: 1
            }
        );
    }

    #[test]
    fn byte_counts_and_copy_need() {
        let p = plan(&[16, 8], &[1, 16], 0, DType::BF16);
        assert_eq!(p.bytes_written(), 256);
        assert_eq!(p.bytes_read(), 256);
        assert!(p.needs_copy());
        // expand((16, 8)) of an (8,) vector reads 16 bytes only.
        let p = plan(&[16, 8], &[0, 1], 0, DType::BF16);
        assert_eq!(p.bytes_read(), 16);
        assert_eq!(p.bytes_written(), 256);
        assert!(!plan(&[16, 8], &[8, 1], 0, DType::BF16).needs_copy());
    }

    #[test]
    fn output_strides_are_row_major_over_canonical_dims() {
        let c = CanonicalLayout {
            dims: dims(&[(3, 1), (4, 9), (5, 2)]),
            offset: 0,
        };
        assert_eq!(c.output_strides(), vec![20, 5, 1]);
    }

    #[test]
    fn descriptions_name_the_strategy() {
        let p = plan(
            &[4, 2048, 16, 128],
            &[4194304, 128, 262144, 1],
            0,
            DType::BF16,
        );
        assert_eq!(p.to_string(), "row gather (runs of 256 B, 16-byte vectors)");
        let p = plan(&[4, 64, 64], &[4096, 1, 64], 0, DType::BF16);
        assert_eq!(
            p.to_string(),
            "tiled transpose (64×64, batch 4, 2 elements per access)"
        );
    }
}
