// weft_math.cuh: qualifiers, scalar helpers, small fixed-size matrix helpers
// and the symmetric eigen-solver / PSD projection shared by every kernel.
//
// Compiles three ways:
//   * NVRTC (__CUDACC_RTC__): device code, no standard library, the math
//     functions (sqrt, atan2, asin, fabs, copysign) are NVRTC built-ins;
//   * nvcc (__CUDACC__): host + device;
//   * a plain C++ compiler (g++) for the host parity tests: the CUDA
//     qualifiers are defined away and <cmath> supplies the math.
//
// Layout conventions: every matrix is a flat row-major array of doubles,
// entry (r, c) of an R x C matrix at index r * C + c. Vectors are plain
// arrays. All quantities are SI (see DESIGN.md); the formulas mirror
// crates/weft-potentials (src/element.rs) line by line so that the host
// parity tests agree with it to round-off.
#pragma once

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define WEFT_HD __host__ __device__ __forceinline__
#define WEFT_ON_DEVICE 1
#else
#include <cmath>
#define WEFT_HD inline
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#endif

namespace weft {

// f64::EPSILON of Rust (2^-52).
constexpr double EPS = 2.220446049250313080847263336181640625e-16;
constexpr double PI = 3.14159265358979323846264338327950288;
constexpr double FRAC_PI_2 = 1.57079632679489661923132169163975144;

// True for a finite value (x - x is NaN for NaN and for +-inf); independent
// of the math library so it behaves the same under NVRTC and g++.
WEFT_HD bool is_finite(double x) { return x - x == 0.0; }

// Rust's f64::signum: +1 for +0.0 and positive, -1 for -0.0 and negative.
WEFT_HD double signum(double x) { return copysign(1.0, x); }

// ---------------------------------------------------------------------------
// 3-vectors
// ---------------------------------------------------------------------------

struct V3 {
    double x, y, z;
};

WEFT_HD V3 v3(double x, double y, double z) {
    V3 r;
    r.x = x;
    r.y = y;
    r.z = z;
    return r;
}
WEFT_HD V3 add(V3 a, V3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
WEFT_HD V3 sub(V3 a, V3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
WEFT_HD V3 scale(V3 a, double s) { return v3(a.x * s, a.y * s, a.z * s); }
WEFT_HD V3 divs(V3 a, double s) { return v3(a.x / s, a.y / s, a.z / s); }
WEFT_HD V3 neg(V3 a) { return v3(-a.x, -a.y, -a.z); }
WEFT_HD double dot(V3 a, V3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
WEFT_HD double norm2(V3 a) { return a.x * a.x + a.y * a.y + a.z * a.z; }
WEFT_HD double norm(V3 a) { return sqrt(norm2(a)); }
WEFT_HD V3 cross(V3 a, V3 b) {
    return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
WEFT_HD double comp(V3 a, int i) { return i == 0 ? a.x : (i == 1 ? a.y : a.z); }
// Reads 3 consecutive entries.
WEFT_HD V3 load3(const double* p) { return v3(p[0], p[1], p[2]); }
WEFT_HD void store3(double* p, V3 a) {
    p[0] = a.x;
    p[1] = a.y;
    p[2] = a.z;
}

// Skew matrix [a]x (3x3 row-major) with [a]x b = a x b.
WEFT_HD void skew(V3 a, double* s) {
    s[0] = 0.0;
    s[1] = -a.z;
    s[2] = a.y;
    s[3] = a.z;
    s[4] = 0.0;
    s[5] = -a.x;
    s[6] = -a.y;
    s[7] = a.x;
    s[8] = 0.0;
}

// ---------------------------------------------------------------------------
// Small dense helpers (row-major, compile-time sizes)
// ---------------------------------------------------------------------------

template <int N>
WEFT_HD void zero(double* a) {
    for (int i = 0; i < N; ++i) a[i] = 0.0;
}

template <int N>
WEFT_HD void copy(const double* a, double* out) {
    for (int i = 0; i < N; ++i) out[i] = a[i];
}

// out (R x C) = a (R x K) * b (K x C).
template <int R, int K, int C>
WEFT_HD void matmul(const double* a, const double* b, double* out) {
    for (int i = 0; i < R; ++i)
        for (int j = 0; j < C; ++j) {
            double s = 0.0;
            for (int k = 0; k < K; ++k) s += a[i * K + k] * b[k * C + j];
            out[i * C + j] = s;
        }
}

// out (C x C2) = a^T (C x R) * b (R x C2) for a (R x C), b (R x C2).
template <int R, int C, int C2>
WEFT_HD void matmul_tn(const double* a, const double* b, double* out) {
    for (int i = 0; i < C; ++i)
        for (int j = 0; j < C2; ++j) {
            double s = 0.0;
            for (int k = 0; k < R; ++k) s += a[k * C + i] * b[k * C2 + j];
            out[i * C2 + j] = s;
        }
}

// ---------------------------------------------------------------------------
// Symmetric eigen-solver and PSD projection (mirror of
// weft_potentials::element::{symmetric_eigen, project_psd})
// ---------------------------------------------------------------------------

// Eigenvalues d (N) and orthonormal eigenvectors (columns of z, N x N
// row-major) of the symmetric part of a: Householder tridiagonalisation and
// implicit QL with shifts (tred2/tql2), the same operation sequence as the
// Rust routine. Eigenvalues are not sorted.
template <int N>
WEFT_HD void symmetric_eigen(const double* a, double* d, double* z) {
    double e[N];
    for (int r = 0; r < N; ++r)
        for (int c = 0; c < N; ++c) z[r * N + c] = (a[r * N + c] + a[c * N + r]) * 0.5;
    for (int i = 0; i < N; ++i) {
        d[i] = 0.0;
        e[i] = 0.0;
    }
#define Z(r, c) z[(r) * N + (c)]
    for (int i = N - 1; i >= 1; --i) {
        int l = i - 1;
        double h = 0.0;
        if (l > 0) {
            double scale = 0.0;
            for (int k = 0; k <= l; ++k) scale += fabs(Z(i, k));
            if (scale == 0.0) {
                e[i] = Z(i, l);
            } else {
                for (int k = 0; k <= l; ++k) {
                    Z(i, k) /= scale;
                    h += Z(i, k) * Z(i, k);
                }
                double f = Z(i, l);
                double g = f >= 0.0 ? -sqrt(h) : sqrt(h);
                e[i] = scale * g;
                h -= f * g;
                Z(i, l) = f - g;
                double ff = 0.0;
                for (int j = 0; j <= l; ++j) {
                    Z(j, i) = Z(i, j) / h;
                    double gg = 0.0;
                    for (int k = 0; k <= j; ++k) gg += Z(j, k) * Z(i, k);
                    for (int k = j + 1; k <= l; ++k) gg += Z(k, j) * Z(i, k);
                    e[j] = gg / h;
                    ff += e[j] * Z(i, j);
                }
                double hh = ff / (h + h);
                for (int j = 0; j <= l; ++j) {
                    double f2 = Z(i, j);
                    double g2 = e[j] - hh * f2;
                    e[j] = g2;
                    for (int k = 0; k <= j; ++k) Z(j, k) -= f2 * e[k] + g2 * Z(i, k);
                }
            }
        } else {
            e[i] = Z(i, l);
        }
        d[i] = h;
    }
    d[0] = 0.0;
    e[0] = 0.0;
    for (int i = 0; i < N; ++i) {
        if (d[i] != 0.0) {
            for (int j = 0; j < i; ++j) {
                double g = 0.0;
                for (int k = 0; k < i; ++k) g += Z(i, k) * Z(k, j);
                for (int k = 0; k < i; ++k) Z(k, j) -= g * Z(k, i);
            }
        }
        d[i] = Z(i, i);
        Z(i, i) = 1.0;
        for (int j = 0; j < i; ++j) {
            Z(j, i) = 0.0;
            Z(i, j) = 0.0;
        }
    }
    for (int i = 1; i < N; ++i) e[i - 1] = e[i];
    e[N - 1] = 0.0;
    for (int l = 0; l < N; ++l) {
        int iterations = 0;
        for (;;) {
            int m = l;
            while (m + 1 < N) {
                double dd = fabs(d[m]) + fabs(d[m + 1]);
                if (fabs(e[m]) <= EPS * dd) break;
                m += 1;
            }
            if (m == l || iterations >= 60 || !is_finite(e[l])) break;
            iterations += 1;
            double g = (d[l + 1] - d[l]) / (2.0 * e[l]);
            double r = sqrt(g * g + 1.0);
            g = d[m] - d[l] + e[l] / (g + copysign(r, g));
            double s = 1.0, c = 1.0, p = 0.0;
            int i = m;
            bool deflated = false;
            while (i > l) {
                i -= 1;
                double f = s * e[i];
                double b = c * e[i];
                r = sqrt(f * f + g * g);
                e[i + 1] = r;
                if (r == 0.0) {
                    d[i + 1] -= p;
                    e[m] = 0.0;
                    deflated = true;
                    break;
                }
                s = f / r;
                c = g / r;
                g = d[i + 1] - p;
                r = (d[i] - g) * s + 2.0 * c * b;
                p = s * r;
                d[i + 1] = g + p;
                g = c * r - b;
                for (int k = 0; k < N; ++k) {
                    double f3 = Z(k, i + 1);
                    Z(k, i + 1) = s * Z(k, i) + c * f3;
                    Z(k, i) = c * Z(k, i) - s * f3;
                }
            }
            if (deflated) continue;
            d[l] -= p;
            e[l] = g;
            e[m] = 0.0;
        }
    }
#undef Z
}

// A+ = Q max(L, 0) Q^T, the projection of the symmetric part of a (N x N)
// onto the PSD cone [SBO18 §3.4]; mirror of element::project_psd.
template <int N>
WEFT_HD void project_psd(const double* a, double* out) {
    double values[N];
    double vectors[N * N];
    symmetric_eigen<N>(a, values, vectors);
    bool all_nonneg = true;
    for (int k = 0; k < N; ++k)
        if (!(values[k] >= 0.0)) all_nonneg = false;
    if (all_nonneg) {
        for (int r = 0; r < N; ++r)
            for (int c = 0; c < N; ++c) out[r * N + c] = (a[r * N + c] + a[c * N + r]) * 0.5;
        return;
    }
    zero<N * N>(out);
    for (int k = 0; k < N; ++k) {
        double l = values[k];
        if (l > 0.0) {
            for (int r = 0; r < N; ++r)
                for (int c = 0; c < N; ++c)
                    out[r * N + c] += vectors[r * N + k] * vectors[c * N + k] * l;
        }
    }
}

}  // namespace weft
