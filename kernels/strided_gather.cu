// strided_gather_<unit>: materialise a strided layout, one `unit` (1, 2, 4, 8 or 16 bytes) per
// thread and step.
//
// Two uses, chosen on the host (src/verify/plan.rs):
// * the row gather: the innermost source stride is 1, so the layout is rewritten in units of
//   the widest vector that divides the run length, the offset and every stride (up to 16 bytes,
//   a uint4): one fast division chain then serves 16 bytes instead of one element, and a warp
//   moves 512 contiguous bytes on both sides;
// * the scalar gather for everything else (strided slices, broadcast): unit = element. Writes
//   stay coalesced; reads are as coalesced as the layout allows.
//
// A grid-stride loop over the output (the host caps the grid at the resident block count);
// each thread keeps SL_UNROLL independent loads in flight before storing, which is what lets a
// memory-bound copy approach the memory system's bandwidth.

#define SL_GATHER_THREADS 256
#define SL_UNROLL 4

// Storage offset (in units) of output unit i. The loop is unrolled over SL_MAX_DIMS so that
// every p.sizes[d] / p.src_strides[d] index is a compile-time constant.
__device__ __forceinline__ long long gather_offset(const GatherParams& p, unsigned int i) {
    long long offset = p.src_offset;
#pragma unroll
    for (int d = 0; d < SL_MAX_DIMS; ++d) {
        if (d == (int)p.ndims - 1) {
            offset += (long long)i * p.src_strides[d];
            break;
        }
        const unsigned int q = fast_div(p.sizes[d], i);
        offset += (long long)(i - q * p.sizes[d].divisor) * p.src_strides[d];
        i = q;
    }
    return offset;
}

template <typename Unit>
__device__ __forceinline__ void strided_gather(const Unit* __restrict__ src, Unit* __restrict__ dst,
                                               const GatherParams& p) {
    // step * SL_UNROLL + count < 2^32: count < 2^31 and the grid is at most a few thousand blocks.
    const unsigned int step = gridDim.x * blockDim.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    Unit* out = dst + p.dst_offset;
    for (; i + (SL_UNROLL - 1) * step < p.count; i += SL_UNROLL * step) {
        Unit values[SL_UNROLL];
#pragma unroll
        for (int u = 0; u < SL_UNROLL; ++u) values[u] = src[gather_offset(p, i + u * step)];
#pragma unroll
        for (int u = 0; u < SL_UNROLL; ++u) out[i + u * step] = values[u];
    }
    for (; i < p.count; i += step) out[i] = src[gather_offset(p, i)];
}

// One entry point per unit width; the host picks by name (src/verify/kernel_params.rs).
extern "C" __global__ void __launch_bounds__(SL_GATHER_THREADS)
strided_gather_1(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, const GatherParams p) {
    strided_gather<unsigned char>(src, dst, p);
}

extern "C" __global__ void __launch_bounds__(SL_GATHER_THREADS)
strided_gather_2(const unsigned short* __restrict__ src, unsigned short* __restrict__ dst, const GatherParams p) {
    strided_gather<unsigned short>(src, dst, p);
}

extern "C" __global__ void __launch_bounds__(SL_GATHER_THREADS)
strided_gather_4(const unsigned int* __restrict__ src, unsigned int* __restrict__ dst, const GatherParams p) {
    strided_gather<unsigned int>(src, dst, p);
}

extern "C" __global__ void __launch_bounds__(SL_GATHER_THREADS)
strided_gather_8(const uint2* __restrict__ src, uint2* __restrict__ dst, const GatherParams p) {
    strided_gather<uint2>(src, dst, p);
}

extern "C" __global__ void __launch_bounds__(SL_GATHER_THREADS)
strided_gather_16(const uint4* __restrict__ src, uint4* __restrict__ dst, const GatherParams p) {
    strided_gather<uint4>(src, dst, p);
}
