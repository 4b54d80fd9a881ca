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

// (value, index) maximum over the thread block of the per-thread pairs
// (best, bi), by a shared-memory tree (blockDim.x a power of two, at most
// 256): a pair replaces the current one when its value is larger, or, with
// ties_to_larger_index, equal with a larger index. The result is valid in
// thread 0 (returned in best, bi).
__device__ __forceinline__ void block_argmax(double& best, unsigned& bi,
                                             bool ties_to_larger_index) {
    __shared__ double sv[256];
    __shared__ unsigned si[256];
    sv[threadIdx.x] = best;
    si[threadIdx.x] = bi;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            double v = sv[threadIdx.x + s];
            unsigned i = si[threadIdx.x + s];
            if (v > sv[threadIdx.x] ||
                (ties_to_larger_index && v == sv[threadIdx.x] && i > si[threadIdx.x])) {
                sv[threadIdx.x] = v;
                si[threadIdx.x] = i;
            }
        }
        __syncthreads();
    }
    best = sv[0];
    bi = si[0];
}

}  // namespace weft
