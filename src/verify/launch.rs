//! How a planned copy maps onto GPU launches: grid geometry, and splitting work so that every
//! index a kernel divides stays below 2^31 (the range of [`FastDivider`]).
//!
//! Pure functions with CPU tests; the CUDA engine only feeds them the device's multiprocessor
//! count.
//!
//! [`FastDivider`]: super::divider::FastDivider

use super::divider::MAX_DIVIDEND;
use super::plan::Dim;

/// Threads per block of the gather kernels (`kernels/strided_gather.cu`).
pub const GATHER_BLOCK_THREADS: u32 = 256;
/// Units each gather thread keeps in flight per loop step (the kernel's `UNROLL`).
pub const GATHER_UNROLL: u32 = 4;
/// Resident blocks per multiprocessor aimed for: 8 × 256 threads fills the 2048 threads of a
/// Hopper (or Ampere) SM. Beyond that, extra blocks only queue; the grid-stride loop covers
/// the rest of the work.
pub const BLOCKS_PER_SM: u32 = 8;
/// Thread block of the tiled transpose: 32 × 8 threads move a 32·pack × 32·pack tile
/// (`kernels/transpose_tiled.cu`).
pub const TRANSPOSE_BLOCK: (u32, u32) = (32, 8);
/// Side of a transpose tile in elements, for `pack` elements per access.
pub fn transpose_tile(pack: u32) -> u32 {
    32 * pack
}

/// Grid and block sizes of one launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchGeometry {
    pub grid: u32,
    pub block: (u32, u32),
}

/// A grid-stride gather over `units` items: enough blocks for one pass when that is fewer
/// than `sm_count × BLOCKS_PER_SM`, else exactly that many (each thread then loops).
pub fn gather_geometry(units: u64, sm_count: u32) -> LaunchGeometry {
    let per_block = (GATHER_BLOCK_THREADS * GATHER_UNROLL) as u64;
    let wanted = units.div_ceil(per_block).max(1);
    LaunchGeometry {
        grid: wanted.min(resident_blocks(sm_count) as u64) as u32,
        block: (GATHER_BLOCK_THREADS, 1),
    }
}

/// A grid-stride transpose over `tiles` tiles: one block per tile up to the resident limit.
pub fn transpose_geometry(tiles: u64, sm_count: u32) -> LaunchGeometry {
    LaunchGeometry {
        grid: tiles.clamp(1, resident_blocks(sm_count) as u64) as u32,
        block: TRANSPOSE_BLOCK,
    }
}

fn resident_blocks(sm_count: u32) -> u32 {
    sm_count.max(1).saturating_mul(BLOCKS_PER_SM)
}

/// A slice of a canonical layout that one launch handles: its own dimensions and where it
/// starts in the source (elements or units, signed) and in the destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    pub dims: Vec<Dim>,
    pub src_offset: i64,
    pub dst_offset: u64,
}

impl Piece {
    pub fn len(&self) -> u64 {
        self.dims.iter().map(|dim| dim.size).product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Largest number of items one gather launch indexes: every linear index stays a valid
/// [`FastDivider`](super::divider::FastDivider) dividend.
pub const MAX_ITEMS_PER_LAUNCH: u64 = MAX_DIVIDEND as u64;

/// Splits the row-major walk over `dims` into pieces of at most `limit` items, in output
/// order, cutting along the outermost dimensions only. A layout that fits is one piece.
pub fn split_into_pieces(dims: &[Dim], src_offset: i64, limit: u64) -> Vec<Piece> {
    let mut pieces = Vec::new();
    split_recursive(dims, src_offset, 0, limit.max(1), &mut pieces);
    pieces
}

fn split_recursive(
    dims: &[Dim],
    src_offset: i64,
    dst_offset: u64,
    limit: u64,
    out: &mut Vec<Piece>,
) {
    let total: u64 = dims.iter().map(|dim| dim.size).product();
    if total <= limit {
        out.push(Piece {
            dims: dims.to_vec(),
            src_offset,
            dst_offset,
        });
        return;
    }
    let outer = dims[0];
    let inner_len = total / outer.size;
    if inner_len <= limit {
        // Whole blocks of the outer dimension per piece.
        let per_piece = limit / inner_len;
        let mut start = 0;
        while start < outer.size {
            let size = per_piece.min(outer.size - start);
            let mut piece_dims = dims.to_vec();
            piece_dims[0].size = size;
            out.push(Piece {
                dims: piece_dims,
                src_offset: src_offset + start as i64 * outer.stride,
                dst_offset: dst_offset + start * inner_len,
            });
            start += size;
        }
    } else {
        for index in 0..outer.size {
            split_recursive(
                &dims[1..],
                src_offset + index as i64 * outer.stride,
                dst_offset + index * inner_len,
                limit,
                out,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dim(size: u64, stride: i64) -> Dim {
        Dim { size, stride }
    }

    #[test]
    fn gather_grid_covers_small_work_in_one_pass_and_caps_large_work() {
        // 1000 units / (256 threads × 4) -> one block.
        assert_eq!(gather_geometry(1000, 132).grid, 1);
        assert_eq!(gather_geometry(0, 132).grid, 1);
        assert_eq!(gather_geometry(5 * 1024, 132).grid, 5);
        // 2^25 units on a 132-SM H200: capped at 132 × 8 resident blocks.
        let g = gather_geometry(1 << 25, 132);
        assert_eq!(g.grid, 132 * 8);
        assert_eq!(g.block, (256, 1));
    }

    #[test]
    fn transpose_grid_is_one_block_per_tile_up_to_the_resident_limit() {
        assert_eq!(transpose_geometry(10, 132).grid, 10);
        assert_eq!(
            transpose_geometry((16384 / 32) * (16384 / 32), 132).grid,
            1056
        );
        assert_eq!(transpose_geometry(0, 0).grid, 1);
        assert_eq!(transpose_tile(2), 64);
    }

    /// Every piece's items, in order, must be exactly the row-major walk of the whole layout.
    fn walk(dims: &[Dim], src_offset: i64) -> Vec<i64> {
        let mut offsets = vec![src_offset];
        for d in dims {
            offsets = offsets
                .into_iter()
                .flat_map(|base| (0..d.size as i64).map(move |i| base + i * d.stride))
                .collect();
        }
        offsets
    }

    fn check_split(dims: &[Dim], offset: i64, limit: u64) -> Vec<Piece> {
        let pieces = split_into_pieces(dims, offset, limit);
        let mut stitched = Vec::new();
        let mut expected_dst = 0;
        for piece in &pieces {
            assert!(piece.len() <= limit, "{piece:?} exceeds {limit}");
            assert_eq!(piece.dst_offset, expected_dst);
            expected_dst += piece.len();
            stitched.extend(walk(&piece.dims, piece.src_offset));
        }
        assert_eq!(stitched, walk(dims, offset));
        pieces
    }

    #[test]
    fn a_layout_that_fits_is_one_piece() {
        let pieces = check_split(&[dim(4, 100), dim(5, 1)], 7, 20);
        assert_eq!(pieces.len(), 1);
    }

    #[test]
    fn splits_along_the_outer_dimension_in_whole_rows() {
        let pieces = check_split(&[dim(10, 8), dim(3, 2)], 1, 7);
        // Two rows of 3 per piece: 5 pieces.
        assert_eq!(pieces.len(), 5);
    }

    #[test]
    fn recurses_when_one_outer_index_is_already_too_large() {
        check_split(&[dim(3, -40), dim(4, 10), dim(5, 1)], 200, 6);
        check_split(&[dim(2, 0), dim(17, 3)], 0, 4);
        // A single dimension longer than the limit is cut into runs.
        let pieces = check_split(&[dim(10, 1)], 0, 3);
        assert_eq!(pieces.len(), 4);
    }

    #[test]
    fn real_limit_keeps_common_layouts_in_one_launch() {
        // 16×4096×32×128 bf16 in 16-byte units: 2^25 units.
        let dims = [dim(16, 1 << 21), dim(32, 16), dim(4096, 512), dim(16, 1)];
        assert_eq!(split_into_pieces(&dims, 0, MAX_ITEMS_PER_LAUNCH).len(), 1);
        // 2^32 f32 elements of a strided slice need several launches.
        let big = [dim(1 << 16, 1 << 17), dim(1 << 16, 2)];
        let pieces = split_into_pieces(&big, 0, MAX_ITEMS_PER_LAUNCH);
        assert_eq!(pieces.len(), 3);
        assert!(pieces.iter().all(|p| p.len() <= MAX_ITEMS_PER_LAUNCH));
        assert_eq!(pieces.iter().map(Piece::len).sum::<u64>(), 1 << 32);
    }
}
