// Definitions shared by the stridelint copy kernels.
//
// Compiled at run time by NVRTC (no nvcc at build time, no system headers: only built-in types
// such as uint4). The Rust side (src/verify/cuda/nvrtc.rs) prepends this file to each kernel
// file. The argument blocks mirror src/verify/kernel_params.rs and src/verify/divider.rs
// field by field; the static_asserts below and a Rust test pin the same sizes, so the two
// sides cannot drift apart silently.

#define SL_MAX_DIMS 12

// Division by a run-time constant d (1 <= d <= 2^31) for dividends n < 2^31, by one
// multiply-high, one add and one shift (Granlund & Montgomery; PyTorch's IntDivider):
// q = (umulhi(n, multiplier) + n) >> shift. The magic numbers are computed on the host.
struct FastDivider {
    unsigned int divisor;
    unsigned int multiplier;
    unsigned int shift;
};

__device__ __forceinline__ unsigned int fast_div(const FastDivider& d, unsigned int n) {
    return (__umulhi(n, d.multiplier) + n) >> d.shift;
}

// Copy `count` units into dst[dst_offset..]; unit i comes from
// src[src_offset + sum_d index_d(i) * src_strides[d]]. Dimensions innermost first.
struct GatherParams {
    long long src_offset;
    unsigned long long dst_offset;
    unsigned int count;
    unsigned int ndims;
    FastDivider sizes[SL_MAX_DIMS];
    long long src_strides[SL_MAX_DIMS];
};

// For every batch index, transpose the rows x cols plane whose rows are contiguous in the
// source and whose columns are contiguous in the destination. Batch dimensions innermost first.
struct TransposeParams {
    long long src_offset;
    unsigned long long dst_offset;
    unsigned int rows;
    unsigned int cols;
    long long src_col_stride;
    long long dst_row_stride;
    FastDivider col_tiles;
    FastDivider row_tiles;
    unsigned int tile_count;
    unsigned int batch_ndims;
    FastDivider batch_sizes[SL_MAX_DIMS];
    long long batch_src_strides[SL_MAX_DIMS];
    long long batch_dst_strides[SL_MAX_DIMS];
};

static_assert(sizeof(FastDivider) == 12, "FastDivider must match src/verify/divider.rs");
static_assert(sizeof(GatherParams) == 264, "GatherParams must match src/verify/kernel_params.rs");
static_assert(sizeof(TransposeParams) == 408, "TransposeParams must match src/verify/kernel_params.rs");
