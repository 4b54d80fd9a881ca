// Serial host execution of the .cu kernels for the emulation tests: the
// CUDA built-ins the kernels use, for launches with ONE thread per block
// (blockDim.x == 1), so that every block reduction is the identity and the
// shared-memory reductions need no synchronisation. Each translation unit
// that includes this header gets its own (thread-local) launch indices and
// a setter to drive them from Rust.
#pragma once
#include <cmath>
#include <cstddef>

struct weft_emu_dim3 {
    unsigned x, y, z;
};
static thread_local weft_emu_dim3 threadIdx = {0, 0, 0};
static thread_local weft_emu_dim3 blockIdx = {0, 0, 0};
static thread_local weft_emu_dim3 blockDim = {1, 1, 1};
static thread_local weft_emu_dim3 gridDim = {1, 1, 1};

#define __shared__ static thread_local
inline void __syncthreads() {}
// With one thread per block no other lane exists: the shuffle reads zero.
inline double __shfl_down_sync(unsigned, double, int) { return 0.0; }
inline unsigned atomicMax(unsigned* p, unsigned v) {
    unsigned old = *p;
    if (v > old) *p = v;
    return old;
}
inline double atomicAdd(double* p, double v) {
    double old = *p;
    *p += v;
    return old;
}
