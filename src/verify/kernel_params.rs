//! The argument blocks of the GPU kernels and the host-side translation of a [`CopyPlan`] into
//! the launches that carry it out.
//!
//! Everything here is plain data: the CUDA engine only uploads it. The structs are
//! `#[repr(C)]` mirrors of the ones in `kernels/strided_common.cuh`; both sides pin their size
//! (a `static_assert` in the `.cuh`, a test here), so a change on one side that is not made on
//! the other fails a test instead of corrupting a launch. The tests below also run every
//! launch through a CPU model of the kernels' index arithmetic and compare the result with the
//! reference gather, so the translation is checked without a GPU.

use super::divider::{FastDivider, MAX_DIVIDEND};
use super::error::VerifyError;
use super::launch::{
    gather_geometry, split_into_pieces, transpose_geometry, transpose_tile, LaunchGeometry,
    MAX_ITEMS_PER_LAUNCH,
};
use super::plan::{CanonicalLayout, CopyKind, CopyPlan, Dim};

/// Dimensions a kernel argument block holds (after canonicalisation; PyTorch's own limit is
/// 25, but merged layouts of real models rarely have more than 5).
pub const MAX_KERNEL_DIMS: usize = 12;

/// Argument of `strided_gather_<unit>`: copy `count` units (vectors or elements) into
/// `dst[dst_offset ..]`, unit `i` coming from `src[src_offset + Σ index_d(i) · src_strides[d]]`
/// where `index_d` is the row-major multi-index of `i` over the dimensions. Offsets and
/// strides are in units.
///
/// Dimensions are stored **innermost first** (`sizes[0]` is the dimension that varies
/// fastest): the kernel's fully unrolled loop then indexes the arrays with compile-time
/// constants, which keeps them in the constant bank instead of spilling the whole block to
/// local memory (PyTorch's `OffsetCalculator` does the same).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GatherParams {
    pub src_offset: i64,
    pub dst_offset: u64,
    pub count: u32,
    pub ndims: u32,
    pub sizes: [FastDivider; MAX_KERNEL_DIMS],
    pub src_strides: [i64; MAX_KERNEL_DIMS],
}

/// Argument of `transpose_tiled_<bytes>[_pack2]`: for every batch index, copy the
/// `rows × cols` plane whose rows are contiguous in the source (stride 1) and whose columns
/// are contiguous in the destination. Element `(batch, r, c)` moves from
/// `src[src_offset + batch_src + r + c · src_col_stride]` to
/// `dst[dst_offset + batch_dst + r · dst_row_stride + c]`. Tiles are numbered column tile
/// fastest, then row tile, then batch (row-major over the batch dimensions, which are stored
/// innermost first like [`GatherParams`]'s).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransposeParams {
    pub src_offset: i64,
    pub dst_offset: u64,
    pub rows: u32,
    pub cols: u32,
    pub src_col_stride: i64,
    pub dst_row_stride: i64,
    pub col_tiles: FastDivider,
    pub row_tiles: FastDivider,
    pub tile_count: u32,
    pub batch_ndims: u32,
    pub batch_sizes: [FastDivider; MAX_KERNEL_DIMS],
    pub batch_src_strides: [i64; MAX_KERNEL_DIMS],
    pub batch_dst_strides: [i64; MAX_KERNEL_DIMS],
}

/// One step of a planned copy on the GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelLaunch {
    /// `cuMemcpyDtoD` of `bytes` starting at byte `src_offset_bytes` of the source.
    Memcpy { src_offset_bytes: u64, bytes: u64 },
    /// `strided_gather_<unit_bytes>`.
    Gather {
        unit_bytes: usize,
        params: GatherParams,
        geometry: LaunchGeometry,
    },
    /// `transpose_tiled_<elem_bytes>` (or `…_pack2`).
    Transpose {
        elem_bytes: usize,
        pack: u32,
        params: TransposeParams,
        geometry: LaunchGeometry,
    },
}

impl KernelLaunch {
    /// The `extern "C"` kernel this launch runs, `None` for a memcpy.
    pub fn kernel_name(&self) -> Option<String> {
        match self {
            KernelLaunch::Memcpy { .. } => None,
            KernelLaunch::Gather { unit_bytes, .. } => Some(format!("strided_gather_{unit_bytes}")),
            KernelLaunch::Transpose {
                elem_bytes, pack, ..
            } => Some(if *pack > 1 {
                format!("transpose_tiled_{elem_bytes}_pack{pack}")
            } else {
                format!("transpose_tiled_{elem_bytes}")
            }),
        }
    }
}

/// Every kernel name [`kernel_launches`] can produce; the NVRTC module must export them all.
pub fn all_kernel_names() -> Vec<String> {
    let mut names: Vec<String> = [1, 2, 4, 8, 16]
        .iter()
        .map(|unit| format!("strided_gather_{unit}"))
        .collect();
    names.extend(
        [1, 2, 4, 8]
            .iter()
            .map(|bytes| format!("transpose_tiled_{bytes}")),
    );
    names.extend(
        [1, 2]
            .iter()
            .map(|bytes| format!("transpose_tiled_{bytes}_pack2")),
    );
    names
}

/// The launches that carry out `plan` on a device with `sm_count` multiprocessors, in order.
pub fn kernel_launches(plan: &CopyPlan, sm_count: u32) -> Result<Vec<KernelLaunch>, VerifyError> {
    launches_with_limit(plan, sm_count, MAX_ITEMS_PER_LAUNCH)
}

/// [`kernel_launches`] with the per-launch item limit as a parameter, so tests can exercise the
/// splitting on small layouts.
fn launches_with_limit(
    plan: &CopyPlan,
    sm_count: u32,
    limit: u64,
) -> Result<Vec<KernelLaunch>, VerifyError> {
    let esize = plan.elem_bytes();
    let layout = &plan.layout;
    match plan.kind {
        CopyKind::Empty => Ok(Vec::new()),
        CopyKind::Dense => Ok(vec![KernelLaunch::Memcpy {
            src_offset_bytes: layout.offset as u64 * esize as u64,
            bytes: plan.bytes_written(),
        }]),
        CopyKind::RowGather { vector_bytes } => gather_launches(
            &in_vector_units(layout, vector_bytes / esize),
            vector_bytes,
            sm_count,
            limit,
        ),
        CopyKind::Transpose { unit_dim, pack } => match transpose_params(layout, unit_dim, pack) {
            Some(params) => Ok(vec![KernelLaunch::Transpose {
                elem_bytes: esize,
                pack,
                geometry: transpose_geometry(params.tile_count as u64, sm_count),
                params,
            }]),
            // Beyond 32-bit tile indexing or the argument block: the gather handles any size.
            None => gather_launches(layout, esize, sm_count, limit),
        },
        CopyKind::ScalarGather => gather_launches(layout, esize, sm_count, limit),
    }
}

/// Rewrites a row-gather layout in units of `elems_per_unit` elements: the innermost run and
/// every stride and the offset are multiples of it (the plan's vector width guarantees that).
fn in_vector_units(layout: &CanonicalLayout, elems_per_unit: usize) -> CanonicalLayout {
    let k = elems_per_unit as i64;
    let mut dims: Vec<Dim> = layout
        .dims
        .iter()
        .map(|dim| Dim {
            size: dim.size,
            stride: dim.stride / k,
        })
        .collect();
    if let Some(innermost) = dims.last_mut() {
        innermost.size /= elems_per_unit as u64;
        innermost.stride = 1;
    }
    CanonicalLayout {
        dims,
        offset: layout.offset / k,
    }
}

fn gather_launches(
    layout: &CanonicalLayout,
    unit_bytes: usize,
    sm_count: u32,
    limit: u64,
) -> Result<Vec<KernelLaunch>, VerifyError> {
    if layout.dims.len() > MAX_KERNEL_DIMS {
        return Err(VerifyError::Unsupported(format!(
            "{} dimensions remain after merging; the GPU kernels take at most {MAX_KERNEL_DIMS}",
            layout.dims.len()
        )));
    }
    split_into_pieces(&layout.dims, layout.offset, limit.min(MAX_ITEMS_PER_LAUNCH))
        .into_iter()
        .map(|piece| {
            let mut params = GatherParams {
                src_offset: piece.src_offset,
                dst_offset: piece.dst_offset,
                count: piece.len() as u32,
                ndims: piece.dims.len() as u32,
                sizes: [FastDivider::default(); MAX_KERNEL_DIMS],
                src_strides: [0; MAX_KERNEL_DIMS],
            };
            for (slot, dim) in piece.dims.iter().rev().enumerate() {
                // A piece has fewer than 2^31 items, so every size is a valid divisor.
                params.sizes[slot] = FastDivider::new(dim.size as u32).ok_or_else(|| {
                    VerifyError::Unsupported(format!(
                        "dimension of size {} in one launch",
                        dim.size
                    ))
                })?;
                params.src_strides[slot] = dim.stride;
            }
            Ok(KernelLaunch::Gather {
                unit_bytes,
                geometry: gather_geometry(piece.len(), sm_count),
                params,
            })
        })
        .collect()
}

/// The transpose argument block, or `None` when the plane or the tile count do not fit the
/// kernel's 32-bit indexing or the batch has too many dimensions.
fn transpose_params(
    layout: &CanonicalLayout,
    unit_dim: usize,
    pack: u32,
) -> Option<TransposeParams> {
    let last = layout.dims.len() - 1;
    let output_strides = layout.output_strides();
    let tile = transpose_tile(pack) as u64;
    let (rows, cols) = (layout.dims[unit_dim].size, layout.dims[last].size);
    let fits = |size: u64| size + tile <= MAX_DIVIDEND as u64;
    if !fits(rows) || !fits(cols) {
        return None;
    }
    let batch: Vec<usize> = (0..last).filter(|&index| index != unit_dim).collect();
    if batch.len() > MAX_KERNEL_DIMS {
        return None;
    }
    let (row_tiles, col_tiles) = (rows.div_ceil(tile), cols.div_ceil(tile));
    let batch_len: u64 = batch.iter().map(|&index| layout.dims[index].size).product();
    let tile_count = row_tiles.checked_mul(col_tiles)?.checked_mul(batch_len)?;
    if tile_count > MAX_DIVIDEND as u64 {
        return None;
    }
    let mut params = TransposeParams {
        src_offset: layout.offset,
        dst_offset: 0,
        rows: rows as u32,
        cols: cols as u32,
        src_col_stride: layout.dims[last].stride,
        dst_row_stride: output_strides[unit_dim] as i64,
        col_tiles: FastDivider::new(col_tiles as u32)?,
        row_tiles: FastDivider::new(row_tiles as u32)?,
        tile_count: tile_count as u32,
        batch_ndims: batch.len() as u32,
        batch_sizes: [FastDivider::default(); MAX_KERNEL_DIMS],
        batch_src_strides: [0; MAX_KERNEL_DIMS],
        batch_dst_strides: [0; MAX_KERNEL_DIMS],
    };
    for (slot, &index) in batch.iter().rev().enumerate() {
        params.batch_sizes[slot] = FastDivider::new(layout.dims[index].size as u32)?;
        params.batch_src_strides[slot] = layout.dims[index].stride;
        params.batch_dst_strides[slot] = output_strides[index] as i64;
    }
    Some(params)
}

#[cfg(test)]
mod tests {
    use std::mem::{offset_of, size_of};

    use super::*;
    use crate::verify::dtype::DType;
    use crate::verify::plan::plan_copy;
    use crate::verify::reference::{fill_pattern, reference_gather, Element};
    use crate::verify::strided::StridedLayout;

    #[test]
    fn argument_blocks_match_the_cuda_header() {
        // kernels/strided_common.cuh static_asserts the same sizes (NVRTC checks them when
        // tests/it/verify_nvrtc.rs compiles the kernels).
        let header = include_str!("../../kernels/strided_common.cuh");
        for pinned in [
            "sizeof(FastDivider) == 12",
            "sizeof(GatherParams) == 264",
            "sizeof(TransposeParams) == 408",
        ] {
            assert!(
                header.contains(pinned),
                "strided_common.cuh no longer pins {pinned}"
            );
        }
        assert_eq!(size_of::<FastDivider>(), 12);
        assert_eq!(size_of::<GatherParams>(), 264);
        assert_eq!(offset_of!(GatherParams, sizes), 24);
        assert_eq!(offset_of!(GatherParams, src_strides), 168);
        assert_eq!(size_of::<TransposeParams>(), 408);
        assert_eq!(offset_of!(TransposeParams, col_tiles), 40);
        assert_eq!(offset_of!(TransposeParams, tile_count), 64);
        assert_eq!(offset_of!(TransposeParams, batch_sizes), 72);
        assert_eq!(offset_of!(TransposeParams, batch_src_strides), 216);
        assert_eq!(offset_of!(TransposeParams, batch_dst_strides), 312);
    }

    #[test]
    fn kernel_sources_define_every_kernel_name() {
        let sources = [
            include_str!("../../kernels/strided_gather.cu"),
            include_str!("../../kernels/transpose_tiled.cu"),
        ]
        .concat();
        for name in all_kernel_names() {
            assert!(
                sources.contains(&format!("\n{name}(")),
                "no kernel `{name}` in kernels/*.cu"
            );
        }
    }

    /// CPU model of `strided_gather` (see kernels/strided_gather.cu): the same fast division,
    /// innermost dimension first.
    fn run_gather(params: &GatherParams, src: &[u128], dst: &mut [u128]) {
        for i in 0..params.count {
            let mut rest = i;
            let mut offset = params.src_offset;
            for d in 0..params.ndims as usize {
                if d == params.ndims as usize - 1 {
                    offset += rest as i64 * params.src_strides[d];
                    break;
                }
                let (quotient, remainder) = params.sizes[d].div_rem(rest);
                offset += remainder as i64 * params.src_strides[d];
                rest = quotient;
            }
            dst[(params.dst_offset + i as u64) as usize] = src[offset as usize];
        }
    }

    /// CPU model of `transpose_tiled` (see kernels/transpose_tiled.cu): tile decomposition,
    /// batch offsets and the plane's bounds, in elements.
    fn run_transpose<T: Element>(params: &TransposeParams, tile: u32, src: &[T], dst: &mut [T]) {
        for t in 0..params.tile_count {
            let (rest, col_tile) = params.col_tiles.div_rem(t);
            let (mut batch, row_tile) = params.row_tiles.div_rem(rest);
            let (mut src_base, mut dst_base) = (params.src_offset, params.dst_offset as i64);
            for d in 0..params.batch_ndims as usize {
                let (quotient, index) = params.batch_sizes[d].div_rem(batch);
                src_base += index as i64 * params.batch_src_strides[d];
                dst_base += index as i64 * params.batch_dst_strides[d];
                batch = quotient;
            }
            for r in row_tile * tile..((row_tile + 1) * tile).min(params.rows) {
                for c in col_tile * tile..((col_tile + 1) * tile).min(params.cols) {
                    let from = src_base + r as i64 + c as i64 * params.src_col_stride;
                    let to = dst_base + r as i64 * params.dst_row_stride + c as i64;
                    dst[to as usize] = src[from as usize];
                }
            }
        }
    }

    /// Runs every launch of `plan` through the CPU models on bytes of pattern data and
    /// compares with the reference gather.
    fn check_launches<T: Element>(
        layout: &StridedLayout,
        dtype: DType,
        limit: u64,
    ) -> Vec<KernelLaunch> {
        let plan = plan_copy(layout, dtype).unwrap();
        let launches = launches_with_limit(&plan, 132, limit).unwrap();
        let mut src = vec![T::default(); layout.footprint_elems().unwrap() as usize];
        fill_pattern(&mut src);
        let mut dst = vec![T::default(); layout.numel() as usize];
        for launch in &launches {
            match launch {
                KernelLaunch::Memcpy {
                    src_offset_bytes,
                    bytes,
                } => {
                    let esize = size_of::<T>() as u64;
                    let start = (src_offset_bytes / esize) as usize;
                    dst.copy_from_slice(&src[start..start + (bytes / esize) as usize]);
                }
                KernelLaunch::Gather {
                    unit_bytes, params, ..
                } => {
                    let unit = *unit_bytes;
                    let widen = |elems: &[T]| -> Vec<u128> {
                        let per_unit = unit / size_of::<T>();
                        let mut units = vec![0u128; elems.len().div_ceil(per_unit)];
                        for (index, value) in elems.iter().enumerate() {
                            let shift = 8 * size_of::<T>() * (index % per_unit);
                            units[index / per_unit] |= (value.to_bits() as u128) << shift;
                        }
                        units
                    };
                    let src_units = widen(&src);
                    let mut dst_units = widen(&dst);
                    run_gather(params, &src_units, &mut dst_units);
                    let per_unit = unit / size_of::<T>();
                    for (index, slot) in dst.iter_mut().enumerate() {
                        let shift = 8 * size_of::<T>() * (index % per_unit);
                        *slot = T::from_bits((dst_units[index / per_unit] >> shift) as u64);
                    }
                }
                KernelLaunch::Transpose { pack, params, .. } => {
                    run_transpose(params, transpose_tile(*pack), &src, &mut dst)
                }
            }
        }
        assert!(
            dst == reference_gather(layout, &src),
            "{layout} {dtype}: {launches:#?}"
        );
        launches
    }

    fn contiguous(shape: &[i64]) -> StridedLayout {
        StridedLayout::contiguous(shape)
    }

    #[test]
    fn launches_reproduce_the_reference_gather() {
        let cases = [
            (contiguous(&[3, 5, 7]), DType::F32),
            (StridedLayout::new(vec![10], vec![1], 6), DType::BF16),
            (
                contiguous(&[2, 12, 3, 16]).transpose(1, 2).unwrap(),
                DType::BF16,
            ), // 32-byte runs
            (contiguous(&[5, 6, 3]).transpose(0, 1).unwrap(), DType::BF16), // 6-byte runs
            (StridedLayout::new(vec![4, 8], vec![9, 1], 1), DType::U8),
            (contiguous(&[70, 45]).transpose(0, 1).unwrap(), DType::F32),
            (
                contiguous(&[2, 66, 3, 130]).permute(&[0, 3, 2, 1]).unwrap(),
                DType::BF16,
            ),
            (
                contiguous(&[2, 66, 3, 130]).permute(&[0, 3, 2, 1]).unwrap(),
                DType::U8,
            ),
            (contiguous(&[65, 33]).transpose(0, 1).unwrap(), DType::F64),
            (StridedLayout::new(vec![40, 30], vec![60, 2], 3), DType::I32),
            (StridedLayout::new(vec![20, 30], vec![1, 0], 0), DType::F16),
            (
                StridedLayout::new(vec![7, 50], vec![-50, 1], 300),
                DType::F32,
            ),
        ];
        for (layout, dtype) in cases {
            match dtype.size_bytes() {
                1 => check_launches::<u8>(&layout, dtype, MAX_ITEMS_PER_LAUNCH),
                2 => check_launches::<u16>(&layout, dtype, MAX_ITEMS_PER_LAUNCH),
                4 => check_launches::<u32>(&layout, dtype, MAX_ITEMS_PER_LAUNCH),
                _ => check_launches::<u64>(&layout, dtype, MAX_ITEMS_PER_LAUNCH),
            };
        }
    }

    #[test]
    fn row_gathers_use_the_widest_vector_kernel() {
        let layout = contiguous(&[2, 12, 3, 16]).transpose(1, 2).unwrap();
        let launches = check_launches::<u16>(&layout, DType::BF16, MAX_ITEMS_PER_LAUNCH);
        assert_eq!(launches.len(), 1);
        assert_eq!(
            launches[0].kernel_name().as_deref(),
            Some("strided_gather_16")
        );
        let packed = contiguous(&[64, 64]).transpose(0, 1).unwrap();
        let launches = check_launches::<u16>(&packed, DType::BF16, MAX_ITEMS_PER_LAUNCH);
        assert_eq!(
            launches[0].kernel_name().as_deref(),
            Some("transpose_tiled_2_pack2")
        );
    }

    #[test]
    fn small_limits_split_gathers_into_correct_pieces() {
        let layout = StridedLayout::new(vec![6, 7, 5], vec![100, 3, 20], 2);
        let launches = check_launches::<u32>(&layout, DType::F32, 8);
        assert!(launches.len() > 1);
        let rows = contiguous(&[9, 4, 8]).transpose(0, 1).unwrap();
        assert!(check_launches::<u64>(&rows, DType::F64, 5).len() > 1);
    }

    #[test]
    fn empty_plans_launch_nothing() {
        let plan = plan_copy(&contiguous(&[0, 3]), DType::F32).unwrap();
        assert!(kernel_launches(&plan, 132).unwrap().is_empty());
    }

    #[test]
    fn too_many_dimensions_is_a_clean_error() {
        // 13 dimensions that cannot merge: every stride is 3× the merged inner extent.
        let shape = vec![2i64; 13];
        let strides: Vec<i64> = (0..13).rev().map(|k| 3i64.pow(k as u32) * 2).collect();
        let plan = plan_copy(&StridedLayout::new(shape, strides, 0), DType::U8).unwrap();
        assert!(matches!(
            kernel_launches(&plan, 132),
            Err(VerifyError::Unsupported(_))
        ));
    }
}
