// transpose_tiled_<bytes>[_pack2]: the tiled shared-memory transpose ("An Efficient Matrix
// Transpose in CUDA C/C++", NVIDIA), batched and strided.
//
// The plane being transposed has its rows contiguous in the source (stride 1) and its columns
// contiguous in the destination. A 32x8 thread block stages one TILE x TILE tile in shared
// memory: it reads the tile along rows (coalesced source reads), then writes it along columns
// (coalesced destination writes). The tile is stored tile[column][row] with one element of
// padding per line, so that the column-wise reads of the write phase fall in 32 different
// banks instead of one.
//
// PACK = 2 (1- and 2-byte elements, when the host found every pair aligned): each thread moves
// two neighbouring elements as one 2- or 4-byte word on both sides, so a warp moves 128 bytes
// per access instead of 64 for bf16; the tile grows to 64x64 elements. With the +1 padding a
// 16-bit tile line is 65 elements (130 bytes), and rows 2x and 2x+1 of a column land in bank x
// (mod 32): still conflict-free.
//
// Tiles (column tile fastest, then row tile, then batch) are visited by a grid-stride loop;
// the host caps the grid at the resident block count.

#define SL_TRANSPOSE_THREADS 256
#define SL_TRANSPOSE_ROWS_PER_PASS 8

// The word that carries PACK elements of T.
template <typename T, int PACK> struct PackedWord { typedef T type; };
template <> struct PackedWord<unsigned char, 2> { typedef unsigned short type; };
template <> struct PackedWord<unsigned short, 2> { typedef unsigned int type; };

template <typename T, int PACK>
__device__ __forceinline__ void transpose_tiled(const T* __restrict__ src, T* __restrict__ dst,
                                                const TransposeParams& p) {
    typedef typename PackedWord<T, PACK>::type Word;
    const int TILE = 32 * PACK;
    const int ELEM_BITS = 8 * sizeof(T);
    __shared__ T tile[32 * PACK][32 * PACK + 1];
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;

    for (unsigned int t = blockIdx.x; t < p.tile_count; t += gridDim.x) {
        const unsigned int rest = fast_div(p.col_tiles, t);
        const unsigned int col_tile = t - rest * p.col_tiles.divisor;
        unsigned int batch = fast_div(p.row_tiles, rest);
        const unsigned int row_tile = rest - batch * p.row_tiles.divisor;

        long long src_base = p.src_offset;
        long long dst_base = (long long)p.dst_offset;
#pragma unroll
        for (int d = 0; d < SL_MAX_DIMS; ++d) {
            if (d == (int)p.batch_ndims) break;
            const unsigned int q = fast_div(p.batch_sizes[d], batch);
            const unsigned int index = batch - q * p.batch_sizes[d].divisor;
            src_base += (long long)index * p.batch_src_strides[d];
            dst_base += (long long)index * p.batch_dst_strides[d];
            batch = q;
        }
        const unsigned int r0 = row_tile * TILE;
        const unsigned int c0 = col_tile * TILE;

        // Read phase: thread x takes rows r .. r+PACK-1 (contiguous in the source) of columns
        // c0+ty, c0+ty+8, ... The host guarantees rows % PACK == 0, so a pair is whole or out.
        const unsigned int r = r0 + tx * PACK;
        for (int j = ty; j < TILE; j += SL_TRANSPOSE_ROWS_PER_PASS) {
            const unsigned int c = c0 + j;
            if (r < p.rows && c < p.cols) {
                const T* from = src + src_base + (long long)c * p.src_col_stride + r;
                const Word word = *reinterpret_cast<const Word*>(from);
#pragma unroll
                for (int k = 0; k < PACK; ++k) tile[j][tx * PACK + k] = (T)(word >> (ELEM_BITS * k));
            }
        }
        __syncthreads();

        // Write phase: thread x takes columns c .. c+PACK-1 (contiguous in the destination) of
        // rows r0+ty, r0+ty+8, ...
        const unsigned int c = c0 + tx * PACK;
        for (int j = ty; j < TILE; j += SL_TRANSPOSE_ROWS_PER_PASS) {
            const unsigned int row = r0 + j;
            if (row < p.rows && c < p.cols) {
                Word word = 0;
#pragma unroll
                for (int k = 0; k < PACK; ++k) word |= (Word)tile[tx * PACK + k][j] << (ELEM_BITS * k);
                *reinterpret_cast<Word*>(dst + dst_base + (long long)row * p.dst_row_stride + c) = word;
            }
        }
        __syncthreads();
    }
}

// One entry point per element size (and packing); the host picks by name
// (src/verify/kernel_params.rs).
extern "C" __global__ void __launch_bounds__(SL_TRANSPOSE_THREADS)
transpose_tiled_1(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, const TransposeParams p) {
    transpose_tiled<unsigned char, 1>(src, dst, p);
}

extern "C" __global__ void __launch_bounds__(SL_TRANSPOSE_THREADS)
transpose_tiled_2(const unsigned short* __restrict__ src, unsigned short* __restrict__ dst, const TransposeParams p) {
    transpose_tiled<unsigned short, 1>(src, dst, p);
}

extern "C" __global__ void __launch_bounds__(SL_TRANSPOSE_THREADS)
transpose_tiled_4(const unsigned int* __restrict__ src, unsigned int* __restrict__ dst, const TransposeParams p) {
    transpose_tiled<unsigned int, 1>(src, dst, p);
}

extern "C" __global__ void __launch_bounds__(SL_TRANSPOSE_THREADS)
transpose_tiled_8(const unsigned long long* __restrict__ src, unsigned long long* __restrict__ dst, const TransposeParams p) {
    transpose_tiled<unsigned long long, 1>(src, dst, p);
}

extern "C" __global__ void __launch_bounds__(SL_TRANSPOSE_THREADS)
transpose_tiled_1_pack2(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, const TransposeParams p) {
    transpose_tiled<unsigned char, 2>(src, dst, p);
}

extern "C" __global__ void __launch_bounds__(SL_TRANSPOSE_THREADS)
transpose_tiled_2_pack2(const unsigned short* __restrict__ src, unsigned short* __restrict__ dst, const TransposeParams p) {
    transpose_tiled<unsigned short, 2>(src, dst, p);
}
