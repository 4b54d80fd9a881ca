// weft_pcg.cu: the linear algebra of PCG on the device (DESIGN §5), mirror
// of crates/weft-solver/src/{bsr.rs, pcg.rs}: 5x5 block CSR SpMV, block-
// Jacobi (inverse diagonal blocks, set up on the device), dot products with
// block reductions, axpy / xpby / masking, and fused updates that save
// passes over memory. Vectors have length 5 n; `free` holds 1.0 for a free
// DOF and 0.0 for a fixed one; matrix blocks are 25 doubles row-major.
//
// Reductions: a kernel named *_partial writes one partial sum per thread
// block into `partial[blockIdx.x]`; weft_sum_partials adds them (launch it
// with one block) so no scalar crosses to the host until the final value.
#include "weft_reduce.cuh"

using namespace weft;

#define WEFT_B 5

// acc = (A x) restricted to block row i (WEFT_B entries).
__device__ __forceinline__ void bsr_row(int i, const unsigned* row_ptr, const unsigned* cols,
                                        const double* values, const double* x, double* acc) {
    for (int r = 0; r < WEFT_B; ++r) acc[r] = 0.0;
    for (unsigned k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
        const double* xj = x + WEFT_B * (size_t)cols[k];
        const double* blk = values + 25 * (size_t)k;
        double x0 = xj[0], x1 = xj[1], x2 = xj[2], x3 = xj[3], x4 = xj[4];
        for (int r = 0; r < WEFT_B; ++r)
            acc[r] += blk[r * 5] * x0 + blk[r * 5 + 1] * x1 + blk[r * 5 + 2] * x2 +
                      blk[r * 5 + 3] * x3 + blk[r * 5 + 4] * x4;
    }
}

// y = A x, then y masked by `free` when free != 0 (LinearOps::apply). One
// thread per block row.
extern "C" __global__ void weft_bsr_spmv(int n, const unsigned* row_ptr, const unsigned* cols,
                                         const double* values, const double* x,
                                         const double* free, double* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double acc[WEFT_B];
    bsr_row(i, row_ptr, cols, values, x, acc);
    for (int r = 0; r < WEFT_B; ++r) {
        size_t d = WEFT_B * (size_t)i + r;
        y[d] = free ? acc[r] * free[d] : acc[r];
    }
}

// Fused SpMV + dot: y = mask(A x) and partial[block] = sum over the block of
// x . y (the p^T A p of a PCG iteration).
extern "C" __global__ void weft_bsr_spmv_dot(int n, const unsigned* row_ptr, const unsigned* cols,
                                             const double* values, const double* x,
                                             const double* free, double* y, double* partial) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double local = 0.0;
    if (i < n) {
        double acc[WEFT_B];
        bsr_row(i, row_ptr, cols, values, x, acc);
        for (int r = 0; r < WEFT_B; ++r) {
            size_t d = WEFT_B * (size_t)i + r;
            double yr = acc[r] * free[d];
            y[d] = yr;
            local += x[d] * yr;
        }
    }
    double s = block_sum(local);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// Block-Jacobi setup (BlockJacobi::new): inverse of each diagonal block
// restricted to the free DOFs (fixed rows/columns replaced by the identity
// before inversion, zeroed after); a block whose Cholesky factorisation
// fails falls back to the inverse of its |diagonal| floored at 1e-12 of
// the largest. inverse: 25 doubles per node.
extern "C" __global__ void weft_block_jacobi_setup(int n, const unsigned* diag,
                                                   const double* values, const double* free,
                                                   double* inverse) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const double* blk = values + 25 * (size_t)diag[i];
    const double* fr = free + WEFT_B * (size_t)i;
    double m[25];
    for (int r = 0; r < 5; ++r)
        for (int c = 0; c < 5; ++c)
            m[r * 5 + c] = (fr[r] != 0.0 && fr[c] != 0.0) ? blk[r * 5 + c] : (r == c ? 1.0 : 0.0);
    // Cholesky m = L L^T.
    double l[25];
    bool ok = true;
    for (int j = 0; j < 5 && ok; ++j) {
        double s = m[j * 5 + j];
        for (int k = 0; k < j; ++k) s -= l[j * 5 + k] * l[j * 5 + k];
        if (!(s > 0.0)) {
            ok = false;
            break;
        }
        double d = sqrt(s);
        l[j * 5 + j] = d;
        for (int r = j + 1; r < 5; ++r) {
            double t = m[r * 5 + j];
            for (int k = 0; k < j; ++k) t -= l[r * 5 + k] * l[j * 5 + k];
            l[r * 5 + j] = t / d;
        }
        for (int c = j + 1; c < 5; ++c) l[j * 5 + c] = 0.0;
    }
    double inv[25];
    if (ok) {
        // inv = L^-T L^-1, column by column.
        for (int c = 0; c < 5; ++c) {
            double y[5];
            for (int r = 0; r < 5; ++r) {
                double t = (r == c) ? 1.0 : 0.0;
                for (int k = 0; k < r; ++k) t -= l[r * 5 + k] * y[k];
                y[r] = t / l[r * 5 + r];
            }
            for (int r = 4; r >= 0; --r) {
                double t = y[r];
                for (int k = r + 1; k < 5; ++k) t -= l[k * 5 + r] * inv[k * 5 + c];
                inv[r * 5 + c] = t / l[r * 5 + r];
            }
        }
    } else {
        double scale = 0.0;
        for (int r = 0; r < 5; ++r) scale = fmax(scale, fabs(m[r * 5 + r]));
        scale = fmax(scale, 1e-300);
        for (int r = 0; r < 5; ++r)
            for (int c = 0; c < 5; ++c)
                inv[r * 5 + c] = (r == c) ? 1.0 / fmax(fabs(m[r * 5 + r]), 1e-12 * scale) : 0.0;
    }
    double* out = inverse + 25 * (size_t)i;
    for (int r = 0; r < 5; ++r)
        for (int c = 0; c < 5; ++c)
            out[r * 5 + c] = (fr[r] != 0.0 && fr[c] != 0.0) ? inv[r * 5 + c] : 0.0;
}

// z = P^-1 r (block-Jacobi apply; fixed DOFs come out zero because the
// stored inverse blocks are zero there) and partial[block] = sum r . z.
extern "C" __global__ void weft_block_jacobi_apply_dot(int n, const double* inverse,
                                                       const double* r, double* z,
                                                       double* partial) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double local = 0.0;
    if (i < n) {
        const double* inv = inverse + 25 * (size_t)i;
        const double* ri = r + WEFT_B * (size_t)i;
        for (int a = 0; a < 5; ++a) {
            double s = 0.0;
            for (int b = 0; b < 5; ++b) s += inv[a * 5 + b] * ri[b];
            z[WEFT_B * (size_t)i + a] = s;
            local += ri[a] * s;
        }
    }
    double s = block_sum(local);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// z = P^-1 r without the dot (LinearOps::precondition).
extern "C" __global__ void weft_block_jacobi_apply(int n, const double* inverse, const double* r,
                                                   double* z) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const double* inv = inverse + 25 * (size_t)i;
    const double* ri = r + WEFT_B * (size_t)i;
    for (int a = 0; a < 5; ++a) {
        double s = 0.0;
        for (int b = 0; b < 5; ++b) s += inv[a * 5 + b] * ri[b];
        z[WEFT_B * (size_t)i + a] = s;
    }
}

// partial[block] = sum a . b over a grid-stride loop (len entries).
extern "C" __global__ void weft_dot_partial(int len, const double* a, const double* b,
                                            double* partial) {
    double local = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < len; i += gridDim.x * blockDim.x)
        local += a[i] * b[i];
    double s = block_sum(local);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// out[0] = sum of partial[0..count] (launch with one block).
extern "C" __global__ void weft_sum_partials(int count, const double* partial, double* out) {
    double local = 0.0;
    for (int i = threadIdx.x; i < count; i += blockDim.x) local += partial[i];
    double s = block_sum(local);
    if (threadIdx.x == 0) out[0] = s;
}

// y += a x.
extern "C" __global__ void weft_axpy(int len, double a, const double* x, double* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) y[i] += a * x[i];
}

// y = x + b y.
extern "C" __global__ void weft_xpby(int len, const double* x, double b, double* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) y[i] = x[i] + b * y[i];
}

// v *= free (zeroes the fixed DOFs).
extern "C" __global__ void weft_mask(int len, const double* free, double* v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) v[i] *= free[i];
}

// Fused PCG update with the step length read on the device
// (alpha = scalars[0] / scalars[1], i.e. r.z / p.A p): x += alpha p,
// r -= alpha Ap, and partial[block] = sum r . r of the new residual.
extern "C" __global__ void weft_pcg_update_xr(int len, const double* scalars, const double* p,
                                              const double* ap, double* x, double* r,
                                              double* partial) {
    double alpha = scalars[0] / scalars[1];
    double local = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < len; i += gridDim.x * blockDim.x) {
        x[i] += alpha * p[i];
        double ri = r[i] - alpha * ap[i];
        r[i] = ri;
        local += ri * ri;
    }
    double s = block_sum(local);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// p = z + beta p with beta = rz_new / rz_old read on the device.
extern "C" __global__ void weft_pcg_update_p(int len, const double* rz_new, const double* rz_old,
                                             const double* z, double* p) {
    double beta = rz_new[0] / rz_old[0];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) p[i] = z[i] + beta * p[i];
}

// r = mask(b) - mask(A x) start of PCG: r = free * (b - ax).
extern "C" __global__ void weft_residual_start(int len, const double* b, const double* ax,
                                               const double* free, double* r) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) r[i] = free[i] * b[i] - ax[i];
}
