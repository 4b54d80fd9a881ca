// weft_reduce.cuh: block-level reductions for the kernels (device only).
// Blocks must have a multiple of 32 threads, at most 1024.
#pragma once
#include "weft_math.cuh"

namespace weft {

__device__ __forceinline__ double warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

// Sum of v over the thread block; the result is valid in thread 0.
__device__ __forceinline__ double block_sum(double v) {
    __shared__ double partial[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    int warps = (blockDim.x + 31) >> 5;
    v = ((int)threadIdx.x < warps) ? partial[lane] : 0.0;
    if (warp == 0) v = warp_sum(v);
    return v;
}

// Adds four per-thread values (kinetic, elastic, gravity, dissipation
// power) over the block and atomically into out[0..4] (order of the
// atomic additions between blocks is not deterministic).
__device__ __forceinline__ void block_add4(const double* e, double* out) {
    for (int k = 0; k < 4; ++k) {
        double s = block_sum(e[k]);
        if (threadIdx.x == 0 && s != 0.0) atomicAdd(out + k, s);
    }
}

}  // namespace weft
