// weft_elements.cuh: the per-element math of the yarn-level model, shared by
// every kernel and compiled on the host for the parity tests.
//
// Mirror of crates/weft-potentials (element.rs, stretch.rs, bending.rs,
// shear.rs, contact.rs, friction.rs, gravity.rs, inertia.rs, and stvk.rs,
// hinge.rs of the triangle-mesh cloth): same strains,
// same operation order where it matters, same layouts of the element
// coordinates (documented per element below; matrices row-major, see
// weft_math.cuh). Sources: [SBO17], [SBO18], [CLMMO14], [SJLP11] as in
// DESIGN.md.
#pragma once
#include "weft_math.cuh"

namespace weft {

// ===========================================================================
// Generic element (element.rs)
// ===========================================================================

// A strain eps(q) in R^M with Jacobian (M x N) and the Hessian of each
// component (N x N).
template <int M, int N>
struct Strain {
    double value[M];
    double jac[M * N];
    double hess[M * N * N];
};

template <int M, int N>
WEFT_HD void strain_zero(Strain<M, N>& s) {
    zero<M>(s.value);
    zero<M * N>(s.jac);
    zero<M * N * N>(s.hess);
}

// V = 1/2 om k |eps|^2 [SBO17 eq. 2] with gradient
// om k J^T eps + 1/2 k |eps|^2 grad(om) [SBO17 eq. 3] and exact Hessian
// om k (J^T J + sum eps_i H_i) + k (J^T eps gom^T + gom eps^T J)
// (affine measure). gom: measure gradient (N). Outputs energy (J), grad (N),
// hess (N x N).
template <int M, int N>
WEFT_HD void elastic(double k, const Strain<M, N>& s, double om, const double* gom,
                     double* energy, double* grad, double* hess) {
    double eps2 = 0.0;
    for (int i = 0; i < M; ++i) eps2 += s.value[i] * s.value[i];
    double je[N];
    for (int c = 0; c < N; ++c) {
        double a = 0.0;
        for (int i = 0; i < M; ++i) a += s.jac[i * N + c] * s.value[i];
        je[c] = a;
    }
    *energy = 0.5 * om * k * eps2;
    for (int c = 0; c < N; ++c) grad[c] = je[c] * (om * k) + gom[c] * (0.5 * k * eps2);
    matmul_tn<M, N, N>(s.jac, s.jac, hess);
    for (int i = 0; i < M; ++i)
        for (int r = 0; r < N * N; ++r) hess[r] += s.hess[i * N * N + r] * s.value[i];
    for (int r = 0; r < N * N; ++r) hess[r] *= om * k;
    for (int r = 0; r < N; ++r)
        for (int c = 0; c < N; ++c) {
            double cross_rc = je[r] * gom[c] * k;
            double cross_cr = je[c] * gom[r] * k;
            hess[r * N + c] += cross_rc + cross_cr;
        }
}

// V = 1/2 om k |eps|^2 as elastic (same energy and gradient) with a PSD
// approximation of the Hessian for the system matrix (element.rs
// elastic_projected): om k J^T J + om k clamp + k (a gom^T + gom a^T)
// + (k |eps|^2 / om) gom gom^T, a = J^T eps, where clamp (N x N) is the PSD
// projection of the stress-weighted strain Hessian sum_i eps_i H_i (an
// element-specific closed form or project_psd), supplied by the caller. The
// result is PSD and never softer than the exact Hessian. Requires om > 0.
// Same operation order as the Rust routine.
template <int M, int N>
WEFT_HD void elastic_projected(double k, const Strain<M, N>& s, double om, const double* gom,
                               const double* clamp, double* energy, double* grad,
                               double* hess) {
    double eps2 = 0.0;
    for (int i = 0; i < M; ++i) eps2 += s.value[i] * s.value[i];
    double je[N];
    for (int c = 0; c < N; ++c) {
        double a = 0.0;
        for (int i = 0; i < M; ++i) a += s.jac[i * N + c] * s.value[i];
        je[c] = a;
    }
    *energy = 0.5 * om * k * eps2;
    for (int c = 0; c < N; ++c) grad[c] = je[c] * (om * k) + gom[c] * (0.5 * k * eps2);
    matmul_tn<M, N, N>(s.jac, s.jac, hess);
    double omk = om * k;
    for (int r = 0; r < N * N; ++r) hess[r] = hess[r] * omk + clamp[r] * omk;
    double w = k * eps2 / om;
    for (int r = 0; r < N; ++r)
        for (int c = 0; c < N; ++c) {
            double cross_rc = je[r] * gom[c] * k;
            double cross_cr = je[c] * gom[r] * k;
            hess[r * N + c] += cross_rc + cross_cr;
            hess[r * N + c] += gom[r] * gom[c] * w;
        }
}

// elastic_projected with the generic clamp: project_psd of sum_i eps_i H_i
// (element.rs elastic_projected_generic).
template <int M, int N>
WEFT_HD void elastic_projected_generic(double k, const Strain<M, N>& s, double om,
                                       const double* gom, double* energy, double* grad,
                                       double* hess) {
    double sh[N * N], clamp[N * N];
    zero<N * N>(sh);
    for (int i = 0; i < M; ++i)
        for (int r = 0; r < N * N; ++r) sh[r] += s.hess[i * N * N + r] * s.value[i];
    project_psd<N>(sh, clamp);
    elastic_projected<M, N>(k, s, om, gom, clamp, energy, grad, hess);
}

// Elastic potential of a scalar strain with a general profile
// V = om k Phi(eps), profile = (Phi, Phi', Phi'') (shear.rs elastic_profile).
template <int N>
WEFT_HD void elastic_profile(double k, const Strain<1, N>& s, double om, const double* gom,
                             double p, double dp, double ddp, double* energy, double* grad,
                             double* hess) {
    for (int c = 0; c < N; ++c) grad[c] = s.jac[c] * (om * k * dp) + gom[c] * (k * p);
    for (int r = 0; r < N; ++r)
        for (int c = 0; c < N; ++c)
            hess[r * N + c] =
                s.jac[r] * s.jac[c] * (om * k * ddp) + s.hess[r * N + c] * (om * k * dp);
    for (int r = 0; r < N; ++r)
        for (int c = 0; c < N; ++c) {
            double cross_rc = s.jac[r] * gom[c] * (k * dp);
            double cross_cr = s.jac[c] * gom[r] * (k * dp);
            hess[r * N + c] += cross_rc + cross_cr;
        }
    *energy = om * k * p;
}

// Strain-rate dissipation W = 1/2 om kd |rate|^2, rate = J qdot [SBO17 eq.
// 6-11]: rate (M), potential W (W), force -om kd J^T rate (N), velocity
// Jacobian -om kd J^T J (N x N). The position Jacobian is set separately
// (clamped stress-weighted strain Hessian, [SBO18 §3.4]).
template <int M, int N>
WEFT_HD void dissipation_common(double kd, const Strain<M, N>& s, double om, const double* qdot,
                                double* rate, double* potential, double* force,
                                double* vjac) {
    double c = om * kd;
    double rr = 0.0;
    for (int i = 0; i < M; ++i) {
        double a = 0.0;
        for (int j = 0; j < N; ++j) a += s.jac[i * N + j] * qdot[j];
        rate[i] = a;
        rr += a * a;
    }
    for (int j = 0; j < N; ++j) {
        double a = 0.0;
        for (int i = 0; i < M; ++i) a += s.jac[i * N + j] * rate[i];
        force[j] = a * (-c);
    }
    matmul_tn<M, N, N>(s.jac, s.jac, vjac);
    for (int r = 0; r < N * N; ++r) vjac[r] *= -c;
    *potential = 0.5 * c * rr;
}

// Generic dissipation (element::dissipation): position Jacobian
// -om kd (sum rate_i H_i)+ with the generic project_psd; pjac null skips it
// (element::dissipation_with_clamp's position_jacobian false).
template <int M, int N>
WEFT_HD void dissipation(double kd, const Strain<M, N>& s, double om, const double* qdot,
                         double* rate, double* potential, double* force, double* vjac,
                         double* pjac) {
    dissipation_common<M, N>(kd, s, om, qdot, rate, potential, force, vjac);
    if (!pjac) return;
    double sh[N * N];
    zero<N * N>(sh);
    for (int i = 0; i < M; ++i)
        for (int r = 0; r < N * N; ++r) sh[r] += s.hess[i * N * N + r] * rate[i];
    project_psd<N>(sh, pjac);
    double c = om * kd;
    for (int r = 0; r < N * N; ++r) pjac[r] *= -c;
}

// ===========================================================================
// Stretch (stretch.rs): q = [x_a (3), s_a, x_b (3), s_b], eps = |dx|/du - 1,
// measure du, k_s = E pi R^2 (N) [SBO17 eq. 12-13].
// ===========================================================================

WEFT_HD void stretch_strain(const double* q, Strain<1, 8>& s) {
    V3 dx = v3(q[4] - q[0], q[5] - q[1], q[6] - q[2]);
    double du = q[7] - q[3];
    double r = norm(dx);
    V3 n = divs(dx, r);
    double eps = r / du - 1.0;
    V3 g_dx = divs(n, du);
    double g_du = -r / (du * du);
    double nn[3] = {n.x, n.y, n.z};
    double h_dxdx[9];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            h_dxdx[i * 3 + j] = ((i == j ? 1.0 : 0.0) - nn[i] * nn[j]) / (r * du);
    V3 h_dxdu = divs(neg(n), du * du);
    double h_dudu = 2.0 * r / (du * du * du);
    const double sign[2] = {-1.0, 1.0};
    s.value[0] = eps;
    zero<64>(s.hess);
    for (int a = 0; a < 2; ++a) {
        int oa = 4 * a;
        double sa = sign[a];
        for (int i = 0; i < 3; ++i) s.jac[oa + i] = sa * comp(g_dx, i);
        s.jac[oa + 3] = sa * g_du;
        for (int b = 0; b < 2; ++b) {
            int ob = 4 * b;
            double sab = sign[a] * sign[b];
            for (int i = 0; i < 3; ++i) {
                for (int j = 0; j < 3; ++j) s.hess[(oa + i) * 8 + ob + j] = sab * h_dxdx[i * 3 + j];
                s.hess[(oa + i) * 8 + ob + 3] = sab * comp(h_dxdu, i);
                s.hess[(ob + 3) * 8 + oa + i] = sab * comp(h_dxdu, i);
            }
            s.hess[(oa + 3) * 8 + ob + 3] = sab * h_dudu;
        }
    }
}

// Measure du = s_b - s_a and its gradient (8).
WEFT_HD double stretch_measure(const double* q, double* gom) {
    zero<8>(gom);
    gom[3] = -1.0;
    gom[7] = 1.0;
    return q[7] - q[3];
}

// Stretch elastic energy (J), gradient (N, 8), Hessian (N/m, 8x8).
WEFT_HD void stretch_elastic(double k_s, const double* q, double* energy, double* grad,
                             double* hess) {
    Strain<1, 8> s;
    stretch_strain(q, s);
    double gom[8];
    double om = stretch_measure(q, gom);
    elastic<1, 8>(k_s, s, om, gom, energy, grad, hess);
}

// The stress-weighted strain Hessian w * Hess(eps) of a stretch element
// projected to PSD in closed form [SBO18 §3.4] (stretch.rs
// clamped_strain_hessian), w a strain or strain-rate weight: in the reduced
// variables (dx, du) the two chord-normal directions carry w / (|dx| du) and
// the 2x2 block on (chord direction, du) is w [[0, -1/du^2], [-1/du^2,
// 2|dx|/du^3]] (one eigenvalue of each sign). out: 8x8, 1/m^2 times the unit
// of w.
WEFT_HD void stretch_clamped_strain_hessian(const double* q, double w, double* out) {
    V3 dx = v3(q[4] - q[0], q[5] - q[1], q[6] - q[2]);
    double du = q[7] - q[3];
    double r = norm(dx);
    V3 n = divs(dx, r);
    double nn[3] = {n.x, n.y, n.z};
    double h_y[16];
    zero<16>(h_y);
    double perp = w / (r * du);
    if (perp > 0.0) {
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                h_y[i * 4 + j] = ((i == j ? 1.0 : 0.0) - nn[i] * nn[j]) * perp;
    }
    // [[0, b], [b, c]] has eigenvalues c/2 +- sqrt(c^2/4 + b^2), eigenvector (b, mu).
    double b = -1.0 / (du * du);
    double c = 2.0 * r / (du * du * du);
    double root = sqrt(0.25 * c * c + b * b);
    double mu = w > 0.0 ? 0.5 * c + root : 0.5 * c - root;
    double lambda = w * mu;  // the positive eigenvalue of w * block
    if (lambda > 0.0) {
        double nr = sqrt(b * b + mu * mu);
        double v0 = b / nr, v1 = mu / nr;
        double v[4] = {v0 * n.x, v0 * n.y, v0 * n.z, v1};
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) h_y[i * 4 + j] += v[i] * v[j] * lambda;
    }
    const double sign[2] = {-1.0, 1.0};
    for (int a = 0; a < 2; ++a)
        for (int bb = 0; bb < 2; ++bb) {
            double sab = sign[a] * sign[bb];
            for (int i = 0; i < 4; ++i)
                for (int j = 0; j < 4; ++j)
                    out[(4 * a + i) * 8 + 4 * bb + j] = sab * h_y[i * 4 + j];
        }
}

// Stretch elastic energy (J) and gradient (N, 8) as stretch_elastic with the
// PSD Hessian approximation (N/m, 8x8) of elastic_projected, using the
// closed-form clamp (stretch.rs energy_projected).
WEFT_HD void stretch_elastic_projected(double k_s, const double* q, double* energy, double* grad,
                                       double* hess) {
    Strain<1, 8> s;
    stretch_strain(q, s);
    double gom[8];
    double om = stretch_measure(q, gom);
    double clamp[64];
    stretch_clamped_strain_hessian(q, s.value[0], clamp);
    elastic_projected<1, 8>(k_s, s, om, gom, clamp, energy, grad, hess);
}

// Stretch dissipation over one backward-Euler step (stretch.rs
// dissipation_over_step): rate = (eps(q) - eps(q_start)) / h, measure
// du(q_start); rate (1), potential, force (8) and velocity Jacobian (8x8)
// as dissipation_common; qdot used only at h = 0 (rate J qdot, the limit);
// pjac (null: none) -om kd rate Hess(eps), exact when exact != 0, else with
// the closed-form clamp.
WEFT_HD void stretch_dissipation_over_step(double kd, const double* q, const double* q_start,
                                           const double* qdot, double h, int exact, double* rate,
                                           double* potential, double* force, double* vjac,
                                           double* pjac) {
    Strain<1, 8> s;
    stretch_strain(q, s);
    V3 dxs = v3(q_start[4] - q_start[0], q_start[5] - q_start[1], q_start[6] - q_start[2]);
    double du = q_start[7] - q_start[3];
    double eps_start = norm(dxs) / du - 1.0;
    double c = du * kd;
    double r = 0.0;
    if (h > 0.0) {
        r = (s.value[0] - eps_start) / h;
    } else {
        for (int j = 0; j < 8; ++j) r += s.jac[j] * qdot[j];
    }
    rate[0] = r;
    for (int j = 0; j < 8; ++j) force[j] = s.jac[j] * (-c * r);
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j) vjac[i * 8 + j] = s.jac[i] * s.jac[j] * (-c);
    *potential = 0.5 * c * r * r;
    if (!pjac) return;
    if (exact) {
        for (int i = 0; i < 64; ++i) pjac[i] = s.hess[i] * (-c * r);
    } else {
        stretch_clamped_strain_hessian(q, r, pjac);
        for (int i = 0; i < 64; ++i) pjac[i] *= -c;
    }
}

// Stretch dissipation with the closed-form clamp of the stress-weighted
// strain Hessian (stretch.rs dissipation): outputs as dissipation<1,8>
// (pjac null: no position Jacobian).
WEFT_HD void stretch_dissipation(double kd, const double* q, const double* qdot, double* rate,
                                 double* potential, double* force, double* vjac,
                                 double* pjac) {
    Strain<1, 8> s;
    stretch_strain(q, s);
    double gom[8];
    double om = stretch_measure(q, gom);
    dissipation_common<1, 8>(kd, s, om, qdot, rate, potential, force, vjac);
    if (!pjac) return;
    stretch_clamped_strain_hessian(q, rate[0], pjac);
    double cc = om * kd;
    for (int i = 0; i < 64; ++i) pjac[i] *= -cc;
}

// ===========================================================================
// Bending (bending.rs): q = [x_0, s_0, x_1, s_1, x_2, s_2] (12), node 0 the
// centre, 1 next, 2 previous; e_i = x_i - x_0, D = s_1 - s_2; scalar strain
// 2 theta / D, small-angle vector strain 2 v / D, v = (e_2 x e_1)/(-e_2.e_1)
// [SBO17 eq. 15-21]; measure D/2; k_b = E I (N m^2).
// ===========================================================================

// One strain component f(e_1, e_2) with gradient (6) and Hessian (6x6)
// w.r.t. y = (e_1, e_2).
struct BendParts {
    double f;
    double gf[6];
    double hf[36];
};

struct Bilinear {
    V3 c;
    double jc[18];  // 3 x 6
    double d;
    double gd[6];
};

WEFT_HD void bilinear(V3 e1, V3 e2, Bilinear& b) {
    double s2[9], s1[9];
    skew(e2, s2);
    skew(e1, s1);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            b.jc[i * 6 + j] = s2[i * 3 + j];
            b.jc[i * 6 + 3 + j] = -s1[i * 3 + j];
        }
    b.gd[0] = -e2.x;
    b.gd[1] = -e2.y;
    b.gd[2] = -e2.z;
    b.gd[3] = -e1.x;
    b.gd[4] = -e1.y;
    b.gd[5] = -e1.z;
    b.c = cross(e2, e1);
    b.d = -dot(e2, e1);
}

// hess_wc(w) = [[0, [w]x], [-[w]x, 0]] (6x6).
WEFT_HD void hess_wc(V3 w, double* h) {
    double s[9];
    skew(w, s);
    zero<36>(h);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            h[i * 6 + 3 + j] = s[i * 3 + j];
            h[(3 + i) * 6 + j] = -s[i * 3 + j];
        }
}

// hess_d = [[0, -I], [-I, 0]] (6x6).
WEFT_HD double hess_d(int i, int j) {
    if ((i < 3 && j == i + 3) || (i >= 3 && j == i - 3)) return -1.0;
    return 0.0;
}

WEFT_HD void bend_reduced(const double* q, V3& e1, V3& e2, double& dd) {
    e1 = v3(q[4] - q[0], q[5] - q[1], q[6] - q[2]);
    e2 = v3(q[8] - q[0], q[9] - q[1], q[10] - q[2]);
    dd = q[7] - q[11];
}

// Turning angle theta = atan2(|e_2 x e_1|, -e_2.e_1) (rad).
WEFT_HD double bend_angle(const double* q) {
    V3 e1, e2;
    double dd;
    bend_reduced(q, e1, e2, dd);
    return atan2(norm(cross(e2, e1)), -dot(e2, e1));
}

// The switch angle (rad) that keeps, over one backward-Euler step, the
// strain chosen at the step's start q_n (12): min(2 t, (t + pi/2)/2) when it
// starts on the vector strain (theta(q_n) < t), t/2 on the scalar strain
// (weft_potentials::bending::step_threshold, the same operations);
// held_threshold is weft_potentials::element::held_threshold, shared with
// shear_step_threshold.
WEFT_HD double held_threshold(int small_at_start, double threshold) {
    if (small_at_start) return fmin(2.0 * threshold, 0.5 * (threshold + FRAC_PI_2));
    return 0.5 * threshold;
}

WEFT_HD double bend_step_threshold(const double* q_n, double threshold) {
    return held_threshold(bend_angle(q_n) < threshold, threshold);
}

WEFT_HD void bend_scalar_parts(V3 e1, V3 e2, BendParts& p) {
    Bilinear b;
    bilinear(e1, e2, b);
    double sigma = norm(b.c);
    double d = b.d;
    p.f = atan2(sigma, d);
    double r2 = sigma * sigma + d * d;
    if (sigma > 0.0) {
        V3 n = divs(b.c, sigma);
        double nn[3] = {n.x, n.y, n.z};
        double gs[6];
        for (int j = 0; j < 6; ++j) {
            double a = 0.0;
            for (int i = 0; i < 3; ++i) a += b.jc[i * 6 + j] * nn[i];
            gs[j] = a;
        }
        double jtj[36], hwc[36], hs[36];
        matmul_tn<3, 6, 6>(b.jc, b.jc, jtj);
        hess_wc(n, hwc);
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j)
                hs[i * 6 + j] = (jtj[i * 6 + j] - gs[i] * gs[j]) / sigma + hwc[i * 6 + j];
        for (int i = 0; i < 6; ++i) p.gf[i] = (gs[i] * d - b.gd[i] * sigma) / r2;
        double r4 = r2 * r2;
        double c1 = (sigma * sigma - d * d) / r4;
        double c2 = 2.0 * sigma * d / r4;
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j) {
                double sd = gs[i] * b.gd[j];
                double sdt = gs[j] * b.gd[i];
                p.hf[i * 6 + j] = (hs[i * 6 + j] * d - hess_d(i, j) * sigma) / r2 +
                                  (sd + sdt) * c1 + (b.gd[i] * b.gd[j] - gs[i] * gs[j]) * c2;
            }
    } else {
        zero<6>(p.gf);
        zero<36>(p.hf);
    }
}

WEFT_HD void bend_vector_parts(V3 e1, V3 e2, BendParts* parts) {
    Bilinear b;
    bilinear(e1, e2, b);
    double d = b.d;
    double id = 1.0 / d, id2 = 1.0 / (d * d), id3 = 1.0 / (d * d * d);
    for (int k = 0; k < 3; ++k) {
        double ck = comp(b.c, k);
        double gck[6];
        for (int j = 0; j < 6; ++j) gck[j] = b.jc[k * 6 + j];
        BendParts& p = parts[k];
        for (int j = 0; j < 6; ++j) p.gf[j] = gck[j] * id - b.gd[j] * (ck * id2);
        double hck[36];
        hess_wc(v3(k == 0 ? 1.0 : 0.0, k == 1 ? 1.0 : 0.0, k == 2 ? 1.0 : 0.0), hck);
        double a2 = ck * id2, a3 = 2.0 * ck * id3;
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j)
                p.hf[i * 6 + j] = hck[i * 6 + j] * id -
                                  (gck[i] * b.gd[j] + b.gd[i] * gck[j]) * id2 +
                                  a3 * b.gd[i] * b.gd[j] - a2 * hess_d(i, j);
        p.f = ck * id;
    }
}

// eps = 2 f / D from f and its y-derivatives: Jacobian (12) and Hessian
// (12x12, must be zero on entry) w.r.t. q (bending.rs finish).
WEFT_HD double bend_finish(const BendParts& p, double dd, double* jac, double* hes) {
    const int X0 = 0, X1 = 4, X2 = 8, S1 = 7, S2 = 11;
    double g = 2.0 / dd;
    double g2 = g / dd;
    double gdd = -g2 * p.f;
#define H(r, c) hes[(r) * 12 + (c)]
    for (int i = 0; i < 3; ++i) {
        double a = g * p.gf[i], b = g * p.gf[3 + i];
        jac[X0 + i] = -(a + b);
        jac[X1 + i] = a;
        jac[X2 + i] = b;
    }
    jac[X0 + 3] = 0.0;
    jac[S1] = gdd;
    jac[S2] = -gdd;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            double a = g * p.hf[i * 6 + j];
            double b = g * p.hf[i * 6 + 3 + j];
            double bt = g * p.hf[(3 + i) * 6 + j];
            double c = g * p.hf[(3 + i) * 6 + 3 + j];
            H(X1 + i, X1 + j) = a;
            H(X1 + i, X2 + j) = b;
            H(X2 + i, X1 + j) = bt;
            H(X2 + i, X2 + j) = c;
            H(X0 + i, X1 + j) = -(a + bt);
            H(X1 + j, X0 + i) = -(a + bt);
            H(X0 + i, X2 + j) = -(b + c);
            H(X2 + j, X0 + i) = -(b + c);
            H(X0 + i, X0 + j) = a + b + bt + c;
        }
    for (int i = 0; i < 3; ++i) {
        double a = -g2 * p.gf[i], b = -g2 * p.gf[3 + i];
        int ps[3] = {X0 + i, X1 + i, X2 + i};
        double vs[3] = {-(a + b), a, b};
        for (int t = 0; t < 3; ++t) {
            H(ps[t], S1) = vs[t];
            H(S1, ps[t]) = vs[t];
            H(ps[t], S2) = -vs[t];
            H(S2, ps[t]) = -vs[t];
        }
    }
    double h = 2.0 * g2 * p.f / dd;
    H(S1, S1) = h;
    H(S2, S2) = h;
    H(S1, S2) = -h;
    H(S2, S1) = -h;
#undef H
    return g * p.f;
}

WEFT_HD void bend_scalar_strain(const double* q, Strain<1, 12>& s) {
    V3 e1, e2;
    double dd;
    bend_reduced(q, e1, e2, dd);
    BendParts p;
    bend_scalar_parts(e1, e2, p);
    zero<144>(s.hess);
    s.value[0] = bend_finish(p, dd, s.jac, s.hess);
}

WEFT_HD void bend_vector_strain(const double* q, Strain<3, 12>& s) {
    V3 e1, e2;
    double dd;
    bend_reduced(q, e1, e2, dd);
    BendParts parts[3];
    bend_vector_parts(e1, e2, parts);
    zero<3 * 144>(s.hess);
    for (int k = 0; k < 3; ++k) s.value[k] = bend_finish(parts[k], dd, s.jac + 12 * k, s.hess + 144 * k);
}

// Measure D/2 and its gradient (12).
WEFT_HD double bend_measure(const double* q, double* gom) {
    zero<12>(gom);
    gom[7] = 0.5;
    gom[11] = -0.5;
    return 0.5 * (q[7] - q[11]);
}

// Bending energy (J), gradient (12) and exact Hessian (12x12) of the strain
// selected by the angle: vector strain for theta < threshold (rad).
// Returns 1 when the small-angle vector strain was used, else 0.
WEFT_HD int bend_elastic(double k_b, const double* q, double threshold, double* energy,
                         double* grad, double* hess) {
    double gom[12];
    double om = bend_measure(q, gom);
    if (bend_angle(q) < threshold) {
        Strain<3, 12> s;
        bend_vector_strain(q, s);
        elastic<3, 12>(k_b, s, om, gom, energy, grad, hess);
        return 1;
    }
    Strain<1, 12> s;
    bend_scalar_strain(q, s);
    elastic<1, 12>(k_b, s, om, gom, energy, grad, hess);
    return 0;
}

// Stress-weighted strain Hessian clamped in the reduced variables
// z = (e_1, e_2, D) and mapped back as P^T (H_z)+ P (bending.rs).
template <int M>
WEFT_HD void bend_clamped_stress_hessian(const BendParts* parts, const double* rate, double dd,
                                         double* out) {
    double hz[49];
    zero<49>(hz);
    for (int k = 0; k < M; ++k) {
        const BendParts& p = parts[k];
        double r = rate[k];
        double g = 2.0 * r / dd;
        double gd = -2.0 * r / (dd * dd);
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j) hz[i * 7 + j] += p.hf[i * 6 + j] * g;
        for (int i = 0; i < 6; ++i) {
            hz[i * 7 + 6] += gd * p.gf[i];
            hz[6 * 7 + i] += gd * p.gf[i];
        }
        hz[48] += 4.0 * r * p.f / (dd * dd * dd);
    }
    double pz[49];
    project_psd<7>(hz, pz);
    double pm[7 * 12];
    zero<84>(pm);
    for (int i = 0; i < 3; ++i) {
        pm[i * 12 + 4 + i] = 1.0;
        pm[i * 12 + i] = -1.0;
        pm[(3 + i) * 12 + 8 + i] = 1.0;
        pm[(3 + i) * 12 + i] = -1.0;
    }
    pm[6 * 12 + 7] = 1.0;
    pm[6 * 12 + 11] = -1.0;
    double tmp[7 * 12];
    matmul<7, 7, 12>(pz, pm, tmp);
    matmul_tn<7, 12, 12>(pm, tmp, out);
}

// Bending energy (J) and gradient (12) as bend_elastic with the PSD Hessian
// approximation of elastic_projected (N/m, 12x12): the stress-weighted
// strain Hessian sum_k eps_k Hess(eps_k) clamped in the 7 reduced variables
// as the bending damping does (bending.rs energy_projected). Returns 1 when
// the small-angle vector strain was used, else 0.
WEFT_HD int bend_elastic_projected(double k_b, const double* q, double threshold, double* energy,
                                   double* grad, double* hess) {
    double gom[12];
    double om = bend_measure(q, gom);
    V3 e1, e2;
    double dd;
    bend_reduced(q, e1, e2, dd);
    double clamp[144];
    if (bend_angle(q) < threshold) {
        Strain<3, 12> s;
        bend_vector_strain(q, s);
        BendParts parts[3];
        bend_vector_parts(e1, e2, parts);
        bend_clamped_stress_hessian<3>(parts, s.value, dd, clamp);
        elastic_projected<3, 12>(k_b, s, om, gom, clamp, energy, grad, hess);
        return 1;
    }
    Strain<1, 12> s;
    bend_scalar_strain(q, s);
    BendParts parts[1];
    bend_scalar_parts(e1, e2, parts[0]);
    bend_clamped_stress_hessian<1>(parts, s.value, dd, clamp);
    elastic_projected<1, 12>(k_b, s, om, gom, clamp, energy, grad, hess);
    return 0;
}

// Bending strain-rate damping with the selected strain (bending.rs damping);
// outputs: rate (3 entries; only rate[0] for the scalar strain), W, force
// (12), velocity and clamped position Jacobians (12x12; pjac null skips
// the latter). Returns 1 for the small-angle vector strain, else 0.
WEFT_HD int bend_dissipation(double kd, const double* q, const double* qdot, double threshold,
                             double* rate, double* potential, double* force, double* vjac,
                             double* pjac) {
    double gom[12];
    double om = bend_measure(q, gom);
    V3 e1, e2;
    double dd;
    bend_reduced(q, e1, e2, dd);
    double c = om * kd;
    if (bend_angle(q) < threshold) {
        Strain<3, 12> s;
        bend_vector_strain(q, s);
        dissipation_common<3, 12>(kd, s, om, qdot, rate, potential, force, vjac);
        if (!pjac) return 1;
        BendParts parts[3];
        bend_vector_parts(e1, e2, parts);
        bend_clamped_stress_hessian<3>(parts, rate, dd, pjac);
        for (int r = 0; r < 144; ++r) pjac[r] *= -c;
        return 1;
    }
    Strain<1, 12> s;
    bend_scalar_strain(q, s);
    dissipation_common<1, 12>(kd, s, om, qdot, rate, potential, force, vjac);
    if (!pjac) return 0;
    BendParts parts[1];
    bend_scalar_parts(e1, e2, parts[0]);
    bend_clamped_stress_hessian<1>(parts, rate, dd, pjac);
    for (int r = 0; r < 144; ++r) pjac[r] *= -c;
    return 0;
}

// ===========================================================================
// Crossing shear (shear.rs): q = [x_0, x_a, x_b] (9, positions only),
// e_a = x_a - x_0 (warp), e_b = x_b - x_0 (weft); scalar strain phi - pi/2,
// small-angle vector strain s = (e_a x e_b)(e_a.e_b)/|e_a x e_b|^2 below the
// threshold, jamming on the scalar branch [SBO17 eq. 22-23, §5.3].
// ===========================================================================

struct ShearReduced {
    V3 ea, eb;
    double c;
    V3 n;
    double s2;
    double dc[6];
    double ds2[6];
};

WEFT_HD void shear_reduced(const double* q, ShearReduced& r) {
    V3 x0 = load3(q);
    r.ea = sub(load3(q + 3), x0);
    r.eb = sub(load3(q + 6), x0);
    r.c = dot(r.ea, r.eb);
    r.n = cross(r.ea, r.eb);
    r.s2 = norm2(r.n);
    double la2 = norm2(r.ea), lb2 = norm2(r.eb);
    for (int i = 0; i < 3; ++i) {
        double eai = comp(r.ea, i), ebi = comp(r.eb, i);
        r.dc[i] = ebi;
        r.dc[3 + i] = eai;
        r.ds2[i] = 2.0 * lb2 * eai - 2.0 * r.c * ebi;
        r.ds2[3 + i] = 2.0 * la2 * ebi - 2.0 * r.c * eai;
    }
}

WEFT_HD double shear_hc(int i, int j) {
    if ((i < 3 && j == i + 3) || (i >= 3 && j == i - 3)) return 1.0;
    return 0.0;
}

WEFT_HD void shear_hs2(const ShearReduced& r, double* h) {
    double ea[3] = {r.ea.x, r.ea.y, r.ea.z};
    double eb[3] = {r.eb.x, r.eb.y, r.eb.z};
    double lb2 = norm2(r.eb), la2 = norm2(r.ea);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            double id = i == j ? 1.0 : 0.0;
            double aa = id * (2.0 * lb2) - eb[i] * eb[j] * 2.0;
            double bb = id * (2.0 * la2) - ea[i] * ea[j] * 2.0;
            double ab = ea[i] * eb[j] * 4.0 - eb[i] * ea[j] * 2.0 - id * (2.0 * r.c);
            double abt = ea[j] * eb[i] * 4.0 - eb[j] * ea[i] * 2.0 - id * (2.0 * r.c);
            h[i * 6 + j] = aa;
            h[(3 + i) * 6 + 3 + j] = bb;
            h[i * 6 + 3 + j] = ab;
            h[(3 + i) * 6 + j] = abt;
        }
}

WEFT_HD double shear_angle_of(const ShearReduced& r) { return atan2(sqrt(r.s2), r.c) - FRAC_PI_2; }

// Scalar strain phi - pi/2 w.r.t. y = (e_a, e_b).
WEFT_HD void shear_scalar_reduced(const ShearReduced& r, Strain<1, 6>& st) {
    double s = sqrt(r.s2);
    double c = r.c;
    double rho = r.s2 + c * c;
    double ds[6];
    for (int i = 0; i < 6; ++i) ds[i] = r.ds2[i] / (2.0 * s);
    double hs2[36], hs[36];
    shear_hs2(r, hs2);
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) hs[i * 6 + j] = (hs2[i * 6 + j] * 0.5 - ds[i] * ds[j]) / s;
    for (int i = 0; i < 6; ++i) st.jac[i] = (ds[i] * c - r.dc[i] * s) / rho;
    double k1 = (r.s2 - c * c) / rho;
    double k2 = 2.0 * c * s / rho;
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) {
            double a = r.dc[i] * ds[j];
            double at = r.dc[j] * ds[i];
            st.hess[i * 6 + j] = (hs[i * 6 + j] * c - shear_hc(i, j) * s + (a + at) * k1 -
                                  (ds[i] * ds[j] - r.dc[i] * r.dc[j]) * k2) /
                                 rho;
        }
    st.value[0] = atan2(s, c) - FRAC_PI_2;
}

WEFT_HD double levi_civita(int i, int j, int k) {
    if ((i == 0 && j == 1 && k == 2) || (i == 1 && j == 2 && k == 0) || (i == 2 && j == 0 && k == 1))
        return 1.0;
    if ((i == 0 && j == 2 && k == 1) || (i == 2 && j == 1 && k == 0) || (i == 1 && j == 0 && k == 2))
        return -1.0;
    return 0.0;
}

// Small-angle vector strain w.r.t. y = (e_a, e_b).
WEFT_HD void shear_small_angle_reduced(const ShearReduced& r, Strain<3, 6>& st) {
    double c = r.c, s2 = r.s2;
    double f = c / s2;
    double s4 = s2 * s2;
    double df[6];
    for (int i = 0; i < 6; ++i) df[i] = r.dc[i] / s2 - r.ds2[i] * (c / s4);
    double hs2[36], hf[36];
    shear_hs2(r, hs2);
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j)
            hf[i * 6 + j] = shear_hc(i, j) / s2 -
                            (r.dc[i] * r.ds2[j] + r.ds2[i] * r.dc[j]) / s4 -
                            hs2[i * 6 + j] * (c / s4) +
                            r.ds2[i] * r.ds2[j] * (2.0 * c / (s4 * s2));
    double sb[9], sa[9], jn[18];
    skew(r.eb, sb);
    skew(r.ea, sa);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            jn[i * 6 + j] = -sb[i * 3 + j];
            jn[i * 6 + 3 + j] = sa[i * 3 + j];
        }
    double nn[3] = {r.n.x, r.n.y, r.n.z};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 6; ++j) st.jac[i * 6 + j] = jn[i * 6 + j] * f + nn[i] * df[j];
    for (int i = 0; i < 3; ++i) {
        double* h = st.hess + 36 * i;
        const double* jni = jn + 6 * i;
        for (int a = 0; a < 6; ++a)
            for (int b = 0; b < 6; ++b)
                h[a * 6 + b] = df[a] * jni[b] + jni[a] * df[b] + hf[a * 6 + b] * nn[i];
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 3; ++k) {
                double e = levi_civita(i, j, k);
                if (e != 0.0) {
                    h[j * 6 + 3 + k] += f * e;
                    h[(3 + k) * 6 + j] += f * e;
                }
            }
    }
    for (int i = 0; i < 3; ++i) st.value[i] = nn[i] * f;
}

// P^T g: reduced gradient (6) to q (9).
WEFT_HD void shear_scatter_vector(const double* g, double* out) {
    for (int i = 0; i < 3; ++i) {
        out[i] = -g[i] - g[3 + i];
        out[3 + i] = g[i];
        out[6 + i] = g[3 + i];
    }
}

// P^T H P: reduced Hessian (6x6) to q (9x9).
WEFT_HD void shear_scatter_matrix(const double* h, double* out) {
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            double aa = h[i * 6 + j], ab = h[i * 6 + 3 + j];
            double ba = h[(3 + i) * 6 + j], bb = h[(3 + i) * 6 + 3 + j];
            out[(3 + i) * 9 + 3 + j] = aa;
            out[(3 + i) * 9 + 6 + j] = ab;
            out[(6 + i) * 9 + 3 + j] = ba;
            out[(6 + i) * 9 + 6 + j] = bb;
            out[i * 9 + 3 + j] = -(aa + ba);
            out[i * 9 + 6 + j] = -(ab + bb);
            out[(3 + i) * 9 + j] = -(aa + ab);
            out[(6 + i) * 9 + j] = -(ba + bb);
            out[i * 9 + j] = aa + ab + ba + bb;
        }
}

// Shear jamming parameters (shear.rs Jamming); enabled = 0 for none.
struct Jamming {
    int enabled;
    double onset, lock, gain;
};

// Jamming as the CPU assembly builds it: Jamming::from_geometry(R, L)
// (lock = pi/2 - 2 asin(R/L), onset = 0.5 lock, gain 100) when valid and
// when its onset exceeds the small-angle threshold, else none.
WEFT_HD Jamming shear_jamming_from_geometry(double radius, double spacing, double threshold) {
    Jamming j;
    double lock = FRAC_PI_2 - 2.0 * asin(radius / spacing);
    double onset = 0.5 * lock;
    double gain = 100.0;
    bool ok = is_finite(onset) && is_finite(lock) && onset > 0.0 && lock > onset &&
              onset > threshold;
    j.enabled = ok ? 1 : 0;
    j.onset = onset;
    j.lock = lock;
    j.gain = gain;
    return j;
}

// (Phi, Phi', Phi'') of the jammed profile at the signed strain eps.
WEFT_HD void jamming_profile(const Jamming& jm, double eps, double* p, double* dp, double* ddp) {
    double psi = fabs(eps);
    double j = 0.0, dj = 0.0, ddj = 0.0;
    if (psi > jm.onset) {
        double d = jm.lock - jm.onset;
        double t = (psi - jm.onset) / d;
        double t2 = t * t;
        j = jm.gain * d * d * t2 * t2 / 12.0;
        dj = jm.gain * d * t2 * t / 3.0;
        ddj = jm.gain * t2;
    }
    *p = 0.5 * eps * eps + j;
    *dp = eps + signum(eps) * dj;
    *ddp = 1.0 + ddj;
}

// The switch angle (rad) that keeps, over one backward-Euler step, the
// shear strain chosen at the step's start q_n (9): min(2 t, (t + pi/2)/2),
// and at most the jamming onset when jm.enabled, on the vector strain
// (|phi - pi/2| < t at q_n); t/2 on the scalar strain
// (weft_potentials::shear::step_threshold, the same operations).
WEFT_HD double shear_step_threshold(const double* q_n, double threshold, const Jamming& jm) {
    ShearReduced r;
    shear_reduced(q_n, r);
    int small = fabs(shear_angle_of(r)) < threshold;
    double t = held_threshold(small, threshold);
    return small && jm.enabled ? fmin(t, jm.onset) : t;
}

// Shear elastic energy (J), gradient (9), Hessian (9x9) (Shear::elastic):
// vector strain for |phi - pi/2| < threshold, else scalar strain with the
// jamming profile when jm.enabled. spacing L (m) is the measure.
// Returns 1 for the small-angle strain, else 0.
WEFT_HD int shear_elastic(double k, double spacing, double threshold, const Jamming& jm,
                          const double* q, double* energy, double* grad, double* hess) {
    ShearReduced r;
    shear_reduced(q, r);
    double gom[6];
    zero<6>(gom);
    double g6[6], h6[36];
    double eps = shear_angle_of(r);
    int small = fabs(eps) < threshold ? 1 : 0;
    if (small) {
        Strain<3, 6> s;
        shear_small_angle_reduced(r, s);
        elastic<3, 6>(k, s, spacing, gom, energy, g6, h6);
    } else {
        Strain<1, 6> s;
        shear_scalar_reduced(r, s);
        if (jm.enabled) {
            double p, dp, ddp;
            jamming_profile(jm, eps, &p, &dp, &ddp);
            elastic_profile<6>(k, s, spacing, gom, p, dp, ddp, energy, g6, h6);
        } else {
            elastic<1, 6>(k, s, spacing, gom, energy, g6, h6);
        }
    }
    shear_scatter_vector(g6, grad);
    shear_scatter_matrix(h6, hess);
    return small;
}

// Shear energy (J) and gradient (9) as shear_elastic with the PSD Hessian
// approximation for the system matrix (Shear::elastic_projected): below the
// threshold elastic_projected_generic of the vector strain (clamp by
// project_psd in the 6 reduced variables); above it, with
// (Phi, Phi', Phi'') the jammed profile or (eps^2/2, eps, 1),
// L k (Phi'' J^T J + (Phi' Hess(eps))+). Returns 1 for the small-angle
// strain, else 0.
WEFT_HD int shear_elastic_projected(double k, double spacing, double threshold, const Jamming& jm,
                                    const double* q, double* energy, double* grad,
                                    double* hess) {
    ShearReduced r;
    shear_reduced(q, r);
    double g6[6], h6[36];
    double eps = shear_angle_of(r);
    int small = fabs(eps) < threshold ? 1 : 0;
    if (small) {
        double gom[6];
        zero<6>(gom);
        Strain<3, 6> s;
        shear_small_angle_reduced(r, s);
        elastic_projected_generic<3, 6>(k, s, spacing, gom, energy, g6, h6);
    } else {
        Strain<1, 6> s;
        shear_scalar_reduced(r, s);
        double p, dp, ddp;
        if (jm.enabled) {
            jamming_profile(jm, eps, &p, &dp, &ddp);
        } else {
            p = 0.5 * eps * eps;
            dp = eps;
            ddp = 1.0;
        }
        double c = spacing * k;
        double sh[36], clamp[36];
        for (int i = 0; i < 36; ++i) sh[i] = s.hess[i] * dp;
        project_psd<6>(sh, clamp);
        *energy = c * p;
        for (int i = 0; i < 6; ++i) g6[i] = s.jac[i] * (c * dp);
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j)
                h6[i * 6 + j] = (s.jac[i] * s.jac[j] * ddp + clamp[i * 6 + j]) * c;
    }
    shear_scatter_vector(g6, grad);
    shear_scatter_matrix(h6, hess);
    return small;
}

// Shear dissipation (Shear::dissipation), evaluated in y and scattered.
// Returns 1 for the small-angle strain.
WEFT_HD int shear_dissipation(double kd, double spacing, double threshold, const double* q,
                              const double* qdot, double* rate, double* potential,
                              double* force, double* vjac, double* pjac) {
    ShearReduced r;
    shear_reduced(q, r);
    double ydot[6];
    for (int i = 0; i < 3; ++i) {
        ydot[i] = qdot[3 + i] - qdot[i];
        ydot[3 + i] = qdot[6 + i] - qdot[i];
    }
    double f6[6], vj6[36], pj6[36];
    double* pj = pjac ? pj6 : nullptr;
    int small = fabs(shear_angle_of(r)) < threshold ? 1 : 0;
    if (small) {
        Strain<3, 6> s;
        shear_small_angle_reduced(r, s);
        dissipation<3, 6>(kd, s, spacing, ydot, rate, potential, f6, vj6, pj);
    } else {
        Strain<1, 6> s;
        shear_scalar_reduced(r, s);
        dissipation<1, 6>(kd, s, spacing, ydot, rate, potential, f6, vj6, pj);
    }
    shear_scatter_vector(f6, force);
    shear_scatter_matrix(vj6, vjac);
    if (pjac) shear_scatter_matrix(pj6, pjac);
    return small;
}

// ===========================================================================
// Parallel-yarn contact (contact.rs): q = [s_a, s_b], eps = (du - d)/L for
// du < d else 0, measure L, k_c (N) [CLMMO14].
// ===========================================================================

WEFT_HD void contact_strain(const double* q, double diameter, double spacing, Strain<1, 2>& s) {
    strain_zero<1, 2>(s);
    double du = q[1] - q[0];
    if (du >= diameter) return;
    s.value[0] = (du - diameter) / spacing;
    s.jac[0] = -1.0 / spacing;
    s.jac[1] = 1.0 / spacing;
}

WEFT_HD void contact_elastic(double k_c, double diameter, double spacing, const double* q,
                             double* energy, double* grad, double* hess) {
    Strain<1, 2> s;
    contact_strain(q, diameter, spacing, s);
    double gom[2] = {0.0, 0.0};
    elastic<1, 2>(k_c, s, spacing, gom, energy, grad, hess);
}

WEFT_HD void contact_dissipation(double kd, double diameter, double spacing, const double* q,
                                 const double* qdot, double* rate, double* potential,
                                 double* force, double* vjac, double* pjac) {
    Strain<1, 2> s;
    contact_strain(q, diameter, spacing, s);
    dissipation<1, 2>(kd, s, spacing, qdot, rate, potential, force, vjac, pjac);
}

// ===========================================================================
// Sliding anchor (friction.rs): q = [s], eps = s - anchor (m), measure 1,
// k_f (N/m): V = 1/2 k_f (s - anchor)^2.
// ===========================================================================

WEFT_HD void anchor_elastic(double k_f, double s, double anchor, double* energy, double* grad,
                            double* hess) {
    Strain<1, 1> st;
    st.value[0] = s - anchor;
    st.jac[0] = 1.0;
    st.hess[0] = 0.0;
    double gom[1] = {0.0};
    elastic<1, 1>(k_f, st, 1.0, gom, energy, grad, hess);
}

// Stick/slip anchor update after an accepted step (friction::update_anchor).
WEFT_HD double anchor_update(double s, double anchor, double k_f, double mu, double fn) {
    double limit = mu * fn;
    double d = s - anchor;
    if (fabs(k_f * d) > limit) return s - signum(d) * limit / k_f;
    return anchor;
}

// ===========================================================================
// Acceptance of a step and the friction-anchor update (integrator.rs
// stretch_strains / try_step_with, assembly.rs Assembler::update_anchors,
// friction.rs). Node DOFs (x, y, z, u, v); q the 5 n coordinates.
// ===========================================================================

// Stretch strain |x_b - x_a| / (s_b - s_a) - 1 of the segment from node a to
// node b, s the arc-length coordinate in `slot` (3 warp u, 4 weft v).
WEFT_HD double segment_strain(const double* q, unsigned a, unsigned b, int slot) {
    const double* qa = q + 5 * (size_t)a;
    const double* qb = q + 5 * (size_t)b;
    double dx = qb[0] - qa[0], dy = qb[1] - qa[1], dz = qb[2] - qa[2];
    return sqrt(dx * dx + dy * dy + dz * dz) / (qb[slot] - qa[slot]) - 1.0;
}

// Mean tension k_s (|dx|/du - 1) (N) and mean chord |dx| (m) of the (up to
// two) segments of one yarn at `node`: prev..node and node..next, skipped
// where prev/next is 0xffffffff (the yarn ends); both 0 without a segment.
WEFT_HD void yarn_tension_at(const double* q, unsigned prev, unsigned node, unsigned next,
                             int slot, double k_s, double* tension, double* chord) {
    double t = 0.0, l = 0.0, c = 0.0;
    unsigned ends[2][2] = {{prev, node}, {node, next}};
    for (int p = 0; p < 2; ++p) {
        unsigned na = ends[p][0], nb = ends[p][1];
        if (na == 0xffffffffu || nb == 0xffffffffu) continue;
        const double* qa = q + 5 * (size_t)na;
        const double* qb = q + 5 * (size_t)nb;
        double dx = qb[0] - qa[0], dy = qb[1] - qa[1], dz = qb[2] - qa[2];
        double len = sqrt(dx * dx + dy * dy + dz * dz);
        double du = qb[slot] - qa[slot];
        t += k_s * (len / du - 1.0);
        l += len;
        c += 1.0;
    }
    double cc = c > 1.0 ? c : 1.0;
    *tension = t / cc;
    *chord = l / cc;
}

// friction::yarn_normal_pull: P = max(-o T (d_out - d_in).n, 0) of a yarn
// with tension T (< 0 counts as 0), normal offsets op, o, on (units of the
// radius R, m) of the previous crossing, this one and the next, chords
// l_in, l_out (m) to them.
WEFT_HD double yarn_normal_pull(double tension, double op, double o, double on, double l_in,
                                double l_out, double radius) {
    double t = fmax(tension, 0.0);
    double yi = radius * (o - op), yo = radius * (on - o);
    double din_y = yi / sqrt(l_in * l_in + yi * yi);
    double dout_y = yo / sqrt(l_out * l_out + yo * yo);
    return fmax(-o * t * (dout_y - din_y), 0.0);
}

// friction::crossing_normal_force of a plain-weave crossing as
// Assembler::update_anchors builds it: warp with tension tw and mean chord
// lw on side `side` (+-1), weft with tf, lf on -side (chords floored at
// 1e-12 m), radius R (m) of the anchor's material; at least `floor` (N).
WEFT_HD double plain_crossing_normal_force(double tw, double lw, double tf, double lf,
                                           double side, double radius, double floor) {
    double lw1 = fmax(lw, 1e-12), lf1 = fmax(lf, 1e-12);
    double pw = yarn_normal_pull(tw, -side, side, -side, lw1, lw1, radius);
    double pf = yarn_normal_pull(tf, side, -side, side, lf1, lf1, radius);
    return fmax(0.5 * (pw + pf), floor);
}

// ===========================================================================
// Gravity (gravity.rs): q = [x_a, s_a, x_b, s_b], V = -rho_l du g.(x_a+x_b)/2
// with g the acceleration vector (m/s^2).
// ===========================================================================

WEFT_HD void gravity_potential(const double* q, double rho_l, const double* g, double* energy,
                               double* grad, double* hess) {
    V3 xa = load3(q), xb = load3(q + 4);
    V3 gv = load3(g);
    double du = q[7] - q[3];
    double height = dot(gv, add(xa, xb)) * 0.5;
    *energy = -rho_l * du * height;
    zero<8>(grad);
    zero<64>(hess);
    V3 gx = scale(gv, -0.5 * rho_l * du);
    V3 hx = scale(gv, -0.5 * rho_l);
    for (int node = 0; node < 2; ++node) {
        int o = 4 * node;
        for (int i = 0; i < 3; ++i) {
            grad[o + i] = comp(gx, i);
            hess[(o + i) * 8 + 7] = comp(hx, i);
            hess[7 * 8 + o + i] = comp(hx, i);
            hess[(o + i) * 8 + 3] = -comp(hx, i);
            hess[3 * 8 + o + i] = -comp(hx, i);
        }
    }
    grad[7] = -rho_l * height;
    grad[3] = rho_l * height;
}

// ===========================================================================
// Inertia (inertia.rs): Eulerian segment mass matrix
// M = (rho_l du/6) [[2A, A], [A, 2A]], A = [[I, -w], [-w^T, w^T w]]
// [SJLP11, CLMMO14, DESIGN §4] and the Euler-Lagrange force
// f_in = grad_q T - Mdot qdot [SBO17 eq. 1].
// ===========================================================================

WEFT_HD void mass_matrix(double rho_l, const double* q, double* m) {
    double du = q[7] - q[3];
    V3 w = divs(v3(q[4] - q[0], q[5] - q[1], q[6] - q[2]), du);
    double a[16];
    for (int i = 0; i < 16; ++i) a[i] = 0.0;
    a[0] = a[5] = a[10] = 1.0;
    a[15] = 1.0;
    for (int i = 0; i < 3; ++i) {
        a[i * 4 + 3] = -comp(w, i);
        a[3 * 4 + i] = -comp(w, i);
    }
    a[15] = norm2(w);
    double c = rho_l * du / 6.0;
    const int bi[4] = {0, 0, 4, 4}, bj[4] = {0, 4, 0, 4};
    const double f[4] = {2.0, 1.0, 1.0, 2.0};
    for (int t = 0; t < 4; ++t)
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) m[(bi[t] + i) * 8 + bj[t] + j] = a[i * 4 + j] * (c * f[t]);
}

WEFT_HD void inertia_force(double rho_l, const double* q, const double* qdot, double* out) {
    double du = q[7] - q[3];
    V3 w = divs(v3(q[4] - q[0], q[5] - q[1], q[6] - q[2]), du);
    double sa = qdot[3], sb = qdot[7];
    V3 xa = load3(qdot), xb = load3(qdot + 4);
    V3 va = sub(xa, scale(w, sa));
    V3 vb = sub(xb, scale(w, sb));
    double delta = sb - sa;
    V3 na = add(scale(va, 2.0), vb);
    V3 nb = add(va, scale(vb, 2.0));
    V3 e = sub(sub(xb, xa), scale(w, delta));
    double ka = 2.0 * sa + sb, kb = sa + 2.0 * sb;
    double p = norm2(va) + dot(va, vb) + norm2(vb);
    double c = rho_l / 6.0;
    V3 g = add(scale(na, sa), scale(nb, sb));
    V3 phi_a = add(sub(g, scale(na, delta)), scale(e, ka));
    V3 phi_b = add(sub(neg(g), scale(nb, delta)), scale(e, kb));
    double psi_a = -p + dot(e, na);
    double psi_b = p + dot(e, nb);
    store3(out, scale(phi_a, c));
    out[3] = c * (psi_a - dot(w, phi_a));
    store3(out + 4, scale(phi_b, c));
    out[7] = c * (psi_b - dot(w, phi_b));
}

// ===========================================================================
// StVK membrane triangle (stvk.rs) [SBO18 §4, eq. 13-16]: q = [x_0, x_1,
// x_2] (9, positions only). The rest shape is the 2-vectors b_k of
// F = sum_k x_k b_k^T (b: 6 doubles, b_k = (b[2k], b[2k+1]), 1/m) and the
// rest area (m^2, the constant measure); the moduli enter as L^T with
// L L^T = C (lt, 3x3 row-major, sqrt(N/m)) and L_d^T with L_d L_d^T = C_d
// (lt_d, sqrt(N s/m)). Strain eps = (E00, E11, sqrt2 E01), energy
// A 1/2 eps^T C eps = 1/2 A |L^T eps|^2, so the generic element applies to
// the weighted strain L^T eps with k = 1 (stvk.rs Stvk::weighted).
// ===========================================================================

// Component c of eps is w E_ab: (a, b, w) per component.
WEFT_HD void stvk_component(int c, int& a, int& b, double& w) {
    a = c == 1 ? 1 : 0;
    b = c == 0 ? 0 : 1;
    w = c == 2 ? 1.4142135623730951 : 1.0;
}

// Green strain value (3) and Jacobian (3 x 9) at q (stvk.rs
// green_strain_first_order).
WEFT_HD void stvk_green_first_order(const double* b, const double* q, double* value,
                                    double* jac) {
    V3 x0 = load3(q), x1 = load3(q + 3), x2 = load3(q + 6);
    V3 col[2];
    for (int a = 0; a < 2; ++a)
        col[a] = add(add(scale(x0, b[a]), scale(x1, b[2 + a])), scale(x2, b[4 + a]));
    for (int c = 0; c < 3; ++c) {
        int a, bb;
        double w;
        stvk_component(c, a, bb, w);
        double delta = a == bb ? 1.0 : 0.0;
        value[c] = w * 0.5 * (dot(col[a], col[bb]) - delta);
        for (int k = 0; k < 3; ++k) {
            V3 g = scale(add(scale(col[bb], b[2 * k + a]), scale(col[a], b[2 * k + bb])), 0.5 * w);
            jac[c * 9 + 3 * k + 0] = g.x;
            jac[c * 9 + 3 * k + 1] = g.y;
            jac[c * 9 + 3 * k + 2] = g.z;
        }
    }
}

// The constant strain Hessians per node pair, grad^2 eps_c = G_c (x) I_3 with
// G_c[k][l] = 1/2 w (b_k[a] b_l[b] + b_k[b] b_l[a]) (3 x 3x3, 1/m^2).
WEFT_HD void stvk_node_hessians(const double* b, double* g) {
    for (int c = 0; c < 3; ++c) {
        int a, bb;
        double w;
        stvk_component(c, a, bb, w);
        for (int k = 0; k < 3; ++k)
            for (int l = 0; l < 3; ++l)
                g[9 * c + 3 * k + l] =
                    0.5 * w * (b[2 * k + a] * b[2 * l + bb] + b[2 * k + bb] * b[2 * l + a]);
    }
}

// K (x) I_3 in the coordinate order 3 k + d (9x9 row-major).
WEFT_HD void kron_identity3(const double* k, double* out) {
    zero<81>(out);
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
            for (int d = 0; d < 3; ++d) out[(3 * a + d) * 9 + 3 * b + d] = k[3 * a + b];
}

// The PSD projection of sum_c S_c grad^2 eps_c for the stress S (3):
// (sum_c S_c G_c)+ (x) I_3, one 3x3 eigenproblem (stvk.rs
// clamped_stress_hessian).
WEFT_HD void stvk_clamped_stress_hessian(const double* b, const double* stress, double* out) {
    double g[27], k[9], kp[9];
    stvk_node_hessians(b, g);
    for (int r = 0; r < 9; ++r) k[r] = g[r] * stress[0] + g[9 + r] * stress[1] + g[18 + r] * stress[2];
    project_psd<3>(k, kp);
    kron_identity3(kp, out);
}

// The weighted strain m eps: value m eps, Jacobian m J (m 3x3 row-major).
WEFT_HD void stvk_weighted_first_order(const double* m, const double* value, const double* jac,
                                       Strain<3, 9>& s) {
    matmul<3, 3, 1>(m, value, s.value);
    matmul<3, 3, 9>(m, jac, s.jac);
}

// S = m^T e (3) for m 3x3 row-major.
WEFT_HD void stvk_transpose_apply(const double* m, const double* e, double* out) {
    for (int i = 0; i < 3; ++i) out[i] = m[i] * e[0] + m[3 + i] * e[1] + m[6 + i] * e[2];
}

// Energy A Psi (J), gradient (N, 9) and exact Hessian (N/m, 9x9)
// (Stvk::elastic).
WEFT_HD void stvk_elastic(const double* b, double area, const double* lt, const double* q,
                          double* energy, double* grad, double* hess) {
    double value[3], jac[27], g[27];
    stvk_green_first_order(b, q, value, jac);
    stvk_node_hessians(b, g);
    Strain<3, 9> s;
    stvk_weighted_first_order(lt, value, jac, s);
    for (int i = 0; i < 3; ++i) {
        double k[9];
        for (int r = 0; r < 9; ++r)
            k[r] = g[r] * lt[3 * i] + g[9 + r] * lt[3 * i + 1] + g[18 + r] * lt[3 * i + 2];
        kron_identity3(k, s.hess + 81 * i);
    }
    double gom[9];
    zero<9>(gom);
    elastic<3, 9>(1.0, s, area, gom, energy, grad, hess);
}

// As stvk_elastic with the PSD-projected Hessian: the stress-weighted
// strain Hessian clamped in closed form (Stvk::elastic_projected).
WEFT_HD void stvk_elastic_projected(const double* b, double area, const double* lt,
                                    const double* q, double* energy, double* grad,
                                    double* hess) {
    double value[3], jac[27];
    stvk_green_first_order(b, q, value, jac);
    Strain<3, 9> s;
    stvk_weighted_first_order(lt, value, jac, s);
    double stress[3], clamp[81], gom[9];
    stvk_transpose_apply(lt, s.value, stress);
    stvk_clamped_stress_hessian(b, stress, clamp);
    zero<9>(gom);
    elastic_projected<3, 9>(1.0, s, area, gom, clamp, energy, grad, hess);
}

// Strain-rate dissipation A 1/2 eps_dot^T C_d eps_dot [SBO18 eq. 15-16]
// (Stvk::dissipation): rate (3, the weighted rate L_d^T eps_dot), potential
// (W), force (N, 9), velocity Jacobian (N s/m, 9x9) and, unless pjac is
// null, the clamped position Jacobian (N/m, 9x9) [SBO18 §3.4].
WEFT_HD void stvk_dissipation(const double* b, double area, const double* lt_d,
                              const double* q, const double* qdot, double* rate,
                              double* potential, double* force, double* vjac, double* pjac) {
    double value[3], jac[27];
    stvk_green_first_order(b, q, value, jac);
    Strain<3, 9> s;
    stvk_weighted_first_order(lt_d, value, jac, s);
    dissipation_common<3, 9>(1.0, s, area, qdot, rate, potential, force, vjac);
    if (!pjac) return;
    double stress[3];
    stvk_transpose_apply(lt_d, rate, stress);
    stvk_clamped_stress_hessian(b, stress, pjac);
    for (int r = 0; r < 81; ++r) pjac[r] *= -area;
}

// ===========================================================================
// Discrete-shell hinge (hinge.rs): q = [x_0, x_1, x_2, x_3] (12, positions
// only), x_0 x_1 the shared edge; the bending angle theta and its exact
// derivatives by second-order forward differentiation over the edge
// coordinates z = (e, a, b) = (x_1 - x_0, x_2 - x_0, x_3 - x_0); energy
// 1/2 B Omega (theta - theta_rest)^2 with the constant measure Omega.
// ===========================================================================

// A scalar with gradient (9) and Hessian (9x9 row-major) over z.
struct Jet9 {
    double v;
    double g[9];
    double h[81];
};

// z_u . z_w for the 3-blocks u, w of z.
WEFT_HD void jet_dot(const double* z, int u, int w, Jet9& out) {
    zero<9>(out.g);
    zero<81>(out.h);
    for (int k = 0; k < 3; ++k) {
        out.g[3 * u + k] += z[3 * w + k];
        out.g[3 * w + k] += z[3 * u + k];
        out.h[(3 * u + k) * 9 + 3 * w + k] += 1.0;
        out.h[(3 * w + k) * 9 + 3 * u + k] += 1.0;
    }
    out.v = dot(load3(z + 3 * u), load3(z + 3 * w));
}

// The triple product e . (a x b) (hinge.rs Jet::triple).
WEFT_HD void jet_triple(const double* z, Jet9& out) {
    V3 e = load3(z), a = load3(z + 3), b = load3(z + 6);
    store3(out.g, cross(a, b));
    store3(out.g + 3, cross(b, e));
    store3(out.g + 6, cross(e, a));
    zero<81>(out.h);
    V3 blocks[3] = {neg(b), a, neg(e)};
    int us[3] = {0, 0, 1}, ws[3] = {1, 2, 2};
    for (int t = 0; t < 3; ++t) {
        double m[9];
        skew(blocks[t], m);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                out.h[(3 * us[t] + i) * 9 + 3 * ws[t] + j] = m[3 * i + j];
                out.h[(3 * ws[t] + j) * 9 + 3 * us[t] + i] = m[3 * i + j];
            }
    }
    out.v = dot(e, cross(a, b));
}

// f(a) with f' = fa, f'' = faa (Jet::chain1).
WEFT_HD void jet_chain1(const Jet9& a, double f, double fa, double faa, Jet9& out) {
    for (int i = 0; i < 9; ++i)
        for (int j = 0; j < 9; ++j) out.h[i * 9 + j] = a.h[i * 9 + j] * fa + a.g[i] * a.g[j] * faa;
    for (int i = 0; i < 9; ++i) out.g[i] = a.g[i] * fa;
    out.v = f;
}

// f(a, b) with its first and second partials (Jet::chain2).
WEFT_HD void jet_chain2(const Jet9& a, const Jet9& b, double f, double fa, double fb, double faa,
                        double fab, double fbb, Jet9& out) {
    for (int i = 0; i < 9; ++i)
        for (int j = 0; j < 9; ++j)
            out.h[i * 9 + j] = a.h[i * 9 + j] * fa + b.h[i * 9 + j] * fb +
                               a.g[i] * a.g[j] * faa + (a.g[i] * b.g[j] + a.g[j] * b.g[i]) * fab +
                               b.g[i] * b.g[j] * fbb;
    for (int i = 0; i < 9; ++i) out.g[i] = a.g[i] * fa + b.g[i] * fb;
    out.v = f;
}

WEFT_HD void jet_mul(const Jet9& a, const Jet9& b, Jet9& out) {
    jet_chain2(a, b, a.v * b.v, b.v, a.v, 0.0, 1.0, 0.0, out);
}

// The bending angle of q as a jet over z (hinge.rs angle_jet):
// theta = atan2(-|e| e.(a x b), (e.b)(e.a) - |e|^2 (a.b)).
WEFT_HD void hinge_angle_jet(const double* q, Jet9& th) {
    double z[9];
    for (int k = 0; k < 3; ++k)
        for (int d = 0; d < 3; ++d) z[3 * k + d] = q[3 * (k + 1) + d] - q[d];
    Jet9 ee, ea, eb, ab, len, t, tmp, s, c, tmp2;
    jet_dot(z, 0, 0, ee);
    jet_dot(z, 0, 1, ea);
    jet_dot(z, 0, 2, eb);
    jet_dot(z, 1, 2, ab);
    double r = sqrt(ee.v);
    jet_chain1(ee, r, 0.5 / r, -0.25 / (r * r * r), len);
    jet_triple(z, t);
    jet_mul(len, t, tmp);
    jet_chain1(tmp, -len.v * t.v, -1.0, 0.0, s);
    jet_mul(eb, ea, tmp);
    jet_mul(ee, ab, tmp2);
    c.v = tmp.v - tmp2.v;
    for (int i = 0; i < 9; ++i) c.g[i] = tmp.g[i] - tmp2.g[i];
    for (int i = 0; i < 81; ++i) c.h[i] = tmp.h[i] - tmp2.h[i];
    double y = s.v, x = c.v;
    double r2 = y * y + x * x, r4 = r2 * r2;
    jet_chain2(s, c, atan2(y, x), x / r2, -y / r2, -2.0 * x * y / r4, (y * y - x * x) / r4,
               2.0 * x * y / r4, th);
}

// Coefficient of vertex vtx's position in the edge block blk of z = P q.
WEFT_HD double hinge_z_coefficient(int vtx, int blk) {
    return vtx == 0 ? -1.0 : (vtx == blk + 1 ? 1.0 : 0.0);
}

// P^T g: a gradient over z (9) as one over q (12).
WEFT_HD void hinge_to_q_gradient(const double* gz, double* g) {
    zero<12>(g);
    for (int v = 0; v < 4; ++v)
        for (int u = 0; u < 3; ++u) {
            double cv = hinge_z_coefficient(v, u);
            if (cv != 0.0)
                for (int k = 0; k < 3; ++k) g[3 * v + k] += cv * gz[3 * u + k];
        }
}

// P^T H P: a Hessian over z (9x9) as one over q (12x12).
WEFT_HD void hinge_to_q_hessian(const double* hz, double* h) {
    zero<144>(h);
    for (int v = 0; v < 4; ++v)
        for (int u = 0; u < 3; ++u) {
            double cv = hinge_z_coefficient(v, u);
            if (cv == 0.0) continue;
            for (int w = 0; w < 4; ++w)
                for (int x = 0; x < 3; ++x) {
                    double cw = hinge_z_coefficient(w, x);
                    if (cw == 0.0) continue;
                    for (int i = 0; i < 3; ++i)
                        for (int j = 0; j < 3; ++j)
                            h[(3 * v + i) * 12 + 3 * w + j] +=
                                hz[(3 * u + i) * 9 + 3 * x + j] * (cv * cw);
                }
        }
}

// P^T (sigma grad^2_z theta)+ P (hinge.rs clamped): PSD, never softer
// than the exact term [SBO18 §3.4].
WEFT_HD void hinge_clamped(const Jet9& th, double sigma, double* out) {
    double hz[81], hp[81];
    for (int i = 0; i < 81; ++i) hz[i] = th.h[i] * sigma;
    project_psd<9>(hz, hp);
    hinge_to_q_hessian(hp, out);
}

// The strain theta - rest_angle (rad) of the angle jet th, with Jacobian
// (1 x 12) and, when with_hessian, Hessian (12x12).
WEFT_HD void hinge_strain_of(const Jet9& th, double rest_angle, int with_hessian,
                             Strain<1, 12>& s) {
    s.value[0] = th.v - rest_angle;
    hinge_to_q_gradient(th.g, s.jac);
    if (with_hessian) hinge_to_q_hessian(th.h, s.hess);
}

// Elastic energy 1/2 B Omega (theta - rest)^2 (J), gradient (N, 12) and the
// exact (projected = 0) or PSD-projected (projected = 1) Hessian (N/m,
// 12x12) from the angle jet (Hinge::elastic_and_dissipation).
WEFT_HD void hinge_elastic_of(const Jet9& th, double rigidity, double measure,
                              double rest_angle, int projected, double* energy, double* grad,
                              double* hess) {
    Strain<1, 12> s;
    hinge_strain_of(th, rest_angle, !projected, s);
    double gom[12];
    zero<12>(gom);
    if (projected) {
        double clamp[144];
        hinge_clamped(th, s.value[0], clamp);
        elastic_projected<1, 12>(rigidity, s, measure, gom, clamp, energy, grad, hess);
    } else {
        elastic<1, 12>(rigidity, s, measure, gom, energy, grad, hess);
    }
}

// Strain-rate dissipation 1/2 Omega k_d theta_dot^2 (Hinge::dissipation):
// rate (1), potential (W), force (N, 12), velocity Jacobian (N s/m) and,
// unless pjac is null, the clamped position Jacobian (N/m).
WEFT_HD void hinge_dissipation_of(const Jet9& th, double kd, double measure, const double* qdot,
                                  double* rate, double* potential, double* force, double* vjac,
                                  double* pjac) {
    Strain<1, 12> s;
    hinge_strain_of(th, 0.0, 0, s);
    dissipation_common<1, 12>(kd, s, measure, qdot, rate, potential, force, vjac);
    if (!pjac) return;
    hinge_clamped(th, rate[0], pjac);
    double c = measure * kd;
    for (int r = 0; r < 144; ++r) pjac[r] *= -c;
}

}  // namespace weft
