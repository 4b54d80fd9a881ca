// weft_assembly.cu: per-element evaluation of the backward-Euler residual
//   R = M(q_n)(v - v_n) - h f(q_n + h v, v)
// and system matrix A = M(q_n) - h df/dv - h^2 df/dq, scattered into the 5x5
// block CSR matrix through the same precomputed element-to-block map the CPU
// assembler uses (crates/weft-solver/src/assembly.rs), one launch per
// element type and colour (no two elements of a colour share a node, so the
// scatter needs no atomics). Mirrors Assembler::assemble term by term.
//
// Conventions: node DOFs (x, y, z, u, v), vector entry 5*node + slot; a
// matrix block is 25 doubles row-major (Rust `[[f64; 5]; 5]`). `elems` is
// the list of element indices of one colour (length `count`). `energies`
// points to 4 doubles (kinetic, elastic, gravity, dissipation power), added
// atomically. Triangle-mesh colliders enter through the tangent planes the
// host takes at the step start (weft_assemble_planes), self-collision
// through the segment pairs it finds there (weft_assemble_repulsion).
//
// jacobian_flags (segments, bending, shear): bit 0, exact_hessians
// (Assembler::exact_hessians): 0 puts the PSD-projected elastic Hessians K+
// (elastic_projected, the default) into the matrix, 1 the exact ones K.
// Bit 1 (Assembler::dissipation_position_jacobian): 1 puts the strain-rate
// dissipation's clamped position Jacobian into the matrix, 0 leaves it out
// and skips its clamp. Energies, forces and the residual depend on
// neither. With Rayleigh damping the force is
// -beta K+ qdot with the PSD projection K+ in both modes (with the exact K a
// compressed element would gain energy), and its matrix term h beta K+.
#include "weft_elements.cuh"
#include "weft_collide.cuh"
#include "weft_reduce.cuh"

using namespace weft;

// Per-material constants (assembly.rs MaterialParams), same layout as the
// Rust #[repr(C)] mirror in weft-cuda.
struct GpuMaterial {
    double k_s, k_b, k_x, k_c, k_f, mu, radius, rho_l;
    double kd_stretch, kd_bending, kd_shear, kd_contact;
    int rayleigh;  // 1 when the material uses Rayleigh damping
    int pad;
    double alpha, beta;
};

#define WEFT_B 5

// Element coordinate i of node n (local) with slot s: the CPU maps
// seg_map / bend_map / shear_map.
__device__ __forceinline__ void seg_map(int slot, int i, int& n, int& s) {
    n = i / 4;
    int k = i % 4;
    s = k == 3 ? slot : k;
}
__device__ __forceinline__ void shear_map(int i, int& n, int& s) {
    n = i / 3;
    s = i % 3;
}

// Node (local) n and slot s of element coordinate i: 3 positions per node
// for the positions-only elements (N = 3 K: shear, membrane triangles,
// hinges), otherwise seg_map's 4 per node (segments, bending).
template <int N, int K>
__device__ __forceinline__ void element_map(int slot, int i, int& n, int& s) {
    if (N == 3 * K)
        shear_map(i, n, s);
    else
        seg_map(slot, i, n, s);
}

template <int N, int K>
__device__ __forceinline__ void gather(const double* x, const unsigned* nodes, int slot,
                                       double* out) {
    for (int i = 0; i < N; ++i) {
        int n, s;
        element_map<N, K>(slot, i, n, s);
        out[i] = x[WEFT_B * nodes[n] + s];
    }
}

// Element coordinates relative to the element's first node at the step's
// end, (q_n[n,s] - q_n[0,s]) + h (v[n,s] - v[0,s]) (assembly.rs
// gather_relative): the translation-invariant terms (stretch, bending,
// shear, contact, seam ties) take these, so a short element far from the
// origin is not rounded to the ulp of its absolute coordinates.
template <int N, int K>
__device__ __forceinline__ void gather_relative(const double* q_n, const double* v, double h,
                                                const unsigned* nodes, int slot, double* out) {
    for (int i = 0; i < N; ++i) {
        int n, s;
        element_map<N, K>(slot, i, n, s);
        size_t j = WEFT_B * (size_t)nodes[n] + s, r = WEFT_B * (size_t)nodes[0] + s;
        out[i] = (q_n[j] - q_n[r]) + h * (v[j] - v[r]);
    }
}

template <int N, int K>
__device__ __forceinline__ void scatter(double* res, double* vals, const unsigned* nodes,
                                        const unsigned* blocks, int slot, const double* re,
                                        const double* ae, int with_matrix) {
    for (int i = 0; i < N; ++i) {
        int ni, si;
        element_map<N, K>(slot, i, ni, si);
        res[WEFT_B * nodes[ni] + si] += re[i];
        if (!with_matrix) continue;
        for (int j = 0; j < N; ++j) {
            int nj, sj;
            element_map<N, K>(slot, j, nj, sj);
            vals[25 * (size_t)blocks[ni * K + nj] + si * WEFT_B + sj] += ae[i * N + j];
        }
    }
}

// Segments: mass at q_n, explicit Euler-Lagrange inertia force at
// (q_n, v_n), stretch (+ strain-rate or Rayleigh damping), parallel-yarn
// contact (+ damping), gravity. seg_nodes: 2 per segment (a, b); seg_slot:
// 3 (warp, u) or 4 (weft, v); seg_blocks: 4 per segment (pairs aa, ab, ba,
// bb). seg_strain[e] receives |stretch strain| (for the step control).
// drag: mass-proportional drag (1/s, Assembler::drag; 0 for none).
// jacobian_flags: see the top of this file.
extern "C" __global__ void weft_assemble_segments(
    const unsigned* elems, int count, const unsigned* seg_nodes, const int* seg_slot,
    const unsigned* seg_material, const double* seg_spacing, const unsigned* seg_blocks,
    const GpuMaterial* materials, const double* q, const double* v, const double* q_n,
    const double* v_n, double h, double gx, double gy, double gz, double drag, double* residual,
    double* values, int with_matrix, int jacobian_flags, double* energies, double* seg_strain) {
    const int exact_hessians = jacobian_flags & 1, dx = (jacobian_flags >> 1) & 1;
    double en[4] = {0.0, 0.0, 0.0, 0.0};
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < count) {
        unsigned ei = elems[t];
        const unsigned* nodes = seg_nodes + 2 * ei;
        int slot = seg_slot[ei];
        const GpuMaterial mp = materials[seg_material[ei]];
        double qe[8], ve[8], qne[8], vne[8];
        gather_relative<8, 2>(q_n, v, h, nodes, slot, qe);
        gather<8, 2>(v, nodes, slot, ve);
        gather<8, 2>(q_n, nodes, slot, qne);
        gather<8, 2>(v_n, nodes, slot, vne);
        double fe[8], re[8], ae[64], m[64];
        mass_matrix(mp.rho_l, qne, m);
        double mv[8];
        for (int i = 0; i < 8; ++i) {
            double a = 0.0, b = 0.0;
            for (int j = 0; j < 8; ++j) {
                a += m[i * 8 + j] * (ve[j] - vne[j]);
                b += m[i * 8 + j] * ve[j];
            }
            re[i] = a;
            mv[i] = b;
        }
        double kin = 0.0;
        for (int i = 0; i < 8; ++i) kin += ve[i] * mv[i];
        en[0] += 0.5 * kin;
        for (int i = 0; i < 64; ++i) ae[i] = m[i];
        if (drag > 0.0) {
            // Mass-proportional drag f = -drag M v (Assembler::drag).
            double dp = 0.0;
            for (int i = 0; i < 8; ++i) {
                double fd = mv[i] * drag;
                re[i] += fd * h;
                dp += ve[i] * fd;
            }
            for (int i = 0; i < 64; ++i) ae[i] += m[i] * (h * drag);
            en[3] += dp;
        }
        inertia_force(mp.rho_l, qne, vne, fe);
        // Stretch.
        Strain<1, 8> st;
        stretch_strain(qe, st);
        double gom[8];
        double om = stretch_measure(qe, gom);
        // k: the matrix's stiffness (PSD projection unless exact_hessians).
        double e, g[8], k[64];
        if (exact_hessians) {
            elastic<1, 8>(mp.k_s, st, om, gom, &e, g, k);
        } else {
            double clamp[64];
            stretch_clamped_strain_hessian(qe, st.value[0], clamp);
            elastic_projected<1, 8>(mp.k_s, st, om, gom, clamp, &e, g, k);
        }
        en[1] += e;
        for (int i = 0; i < 8; ++i) fe[i] -= g[i];
        for (int i = 0; i < 64; ++i) ae[i] += k[i] * (h * h);
        if (mp.kd_stretch > 0.0) {
            // The step's strain increment over h (stretch.rs
            // dissipation_over_step): the exact symmetric Jacobian.
            double qs[8], rate[1], w, f[8], vj[64], pj[64];
            gather_relative<8, 2>(q_n, v, 0.0, nodes, slot, qs);
            stretch_dissipation_over_step(mp.kd_stretch, qe, qs, ve, h, exact_hessians, rate, &w,
                                          f, vj, dx ? pj : nullptr);
            if (!dx) zero<64>(pj);
            for (int i = 0; i < 8; ++i) fe[i] += f[i];
            for (int i = 0; i < 64; ++i) ae[i] -= vj[i] * h + pj[i] * (h * h);
            en[3] += 2.0 * w;
        }
        if (mp.rayleigh) {
            // Force and matrix term with K+, the PSD projection (k unless
            // exact_hessians): with the exact K a compressed segment would
            // gain energy from its damping.
            double kx[64];
            if (exact_hessians) {
                double ex, gex[8], clamp[64];
                stretch_clamped_strain_hessian(qe, st.value[0], clamp);
                elastic_projected<1, 8>(mp.k_s, st, om, gom, clamp, &ex, gex, kx);
            }
            const double* kf = exact_hessians ? kx : k;
            double dp = 0.0;
            for (int i = 0; i < 8; ++i) {
                double fd = 0.0;
                for (int j = 0; j < 8; ++j)
                    fd += (m[i * 8 + j] * mp.alpha + kf[i * 8 + j] * mp.beta) * ve[j];
                fe[i] -= fd;
                dp += ve[i] * fd;
            }
            for (int i = 0; i < 64; ++i) ae[i] += (m[i] * mp.alpha + kf[i] * mp.beta) * h;
            en[3] += dp;
        }
        // Parallel-yarn contact on (s_a, s_b).
        if (mp.k_c > 0.0) {
            double qc[2] = {qe[3], qe[7]};
            double spacing = seg_spacing[ei];
            double ec, gc[2], hc[4];
            contact_elastic(mp.k_c, 2.0 * mp.radius, spacing, qc, &ec, gc, hc);
            en[1] += ec;
            double fc[2] = {-gc[0], -gc[1]};
            double ac[4];
            for (int i = 0; i < 4; ++i) ac[i] = hc[i] * (h * h);
            if (mp.kd_contact > 0.0) {
                double vc[2] = {ve[3], ve[7]};
                double rate[1], w, f[2], vj[4], pj[4];
                contact_dissipation(mp.kd_contact, 2.0 * mp.radius, spacing, qc, vc, rate, &w, f,
                                    vj, pj);
                for (int i = 0; i < 2; ++i) fc[i] += f[i];
                for (int i = 0; i < 4; ++i) ac[i] -= vj[i] * h + pj[i] * (h * h);
                en[3] += 2.0 * w;
            }
            const int li[2] = {3, 7};
            for (int i = 0; i < 2; ++i) {
                fe[li[i]] += fc[i];
                for (int j = 0; j < 2; ++j) ae[li[i] * 8 + li[j]] += ac[i * 2 + j];
            }
        }
        // Gravity.
        double gv[3] = {gx, gy, gz};
        double eg, gg[8], hg[64], qa[8];
        gather<8, 2>(q, nodes, slot, qa);
        gravity_potential(qa, mp.rho_l, gv, &eg, gg, hg);
        en[2] += eg;
        for (int i = 0; i < 8; ++i) fe[i] -= gg[i];
        for (int i = 0; i < 64; ++i) ae[i] += hg[i] * (h * h);
        for (int i = 0; i < 8; ++i) re[i] -= fe[i] * h;
        scatter<8, 2>(residual, values, nodes, seg_blocks + 4 * ei, slot, re, ae, with_matrix);
        seg_strain[ei] = fabs(st.value[0]);
    }
    block_add4(en, energies);
}

// Local force, matrix block and energies of a bending or shear element
// (assembly.rs local_terms): elastic (energy e, gradient g, matrix
// stiffness k: the projected K+ or the exact K), optional strain-rate
// damping, optional Rayleigh beta with the PSD projection kr = K+ and
// kv = K+ ve (force -beta K+ ve, matrix term h beta K+: with the exact K a
// compressed element would gain energy from its damping).
template <int N>
__device__ __forceinline__ void local_terms(double e, const double* g, const double* k,
                                            int has_damping, const double* df,
                                            const double* vj, const double* pj, double w,
                                            const GpuMaterial& mp, const double* kr,
                                            const double* kv, const double* ve, double h,
                                            double* re, double* ae, double* en) {
    double fe[N];
    en[1] += e;
    for (int i = 0; i < N; ++i) fe[i] = -g[i];
    for (int i = 0; i < N * N; ++i) ae[i] = k[i] * (h * h);
    if (has_damping) {
        for (int i = 0; i < N; ++i) fe[i] += df[i];
        for (int i = 0; i < N * N; ++i) ae[i] -= vj[i] * h + pj[i] * (h * h);
        en[3] += 2.0 * w;
    }
    if (mp.rayleigh) {
        double dp = 0.0;
        for (int i = 0; i < N; ++i) {
            double fd = kv[i] * mp.beta;
            fe[i] -= fd;
            dp += ve[i] * fd;
        }
        for (int i = 0; i < N * N; ++i) ae[i] += kr[i] * (mp.beta * h);
        en[3] += dp;
    }
    for (int i = 0; i < N; ++i) re[i] = -fe[i] * h;
}

// kv = K ve (N) for the Rayleigh force.
template <int N>
__device__ __forceinline__ void mat_vec(const double* k, const double* ve, double* kv) {
    for (int i = 0; i < N; ++i) {
        double a = 0.0;
        for (int j = 0; j < N; ++j) a += k[i * N + j] * ve[j];
        kv[i] = a;
    }
}

// Elastic energy e, gradient g and matrix stiffness k (N x N) of one
// element: exact(e, g, k) writes the exact Hessian, projected(e, g, k) its
// PSD projection; k is the exact one when exact_hessians. Returns K+, the
// Rayleigh damping's stiffness: k itself unless exact_hessians, else the
// projection evaluated into kr (not written otherwise); with Rayleigh
// damping kv = K+ ve.
template <int N, class Exact, class Projected>
__device__ __forceinline__ const double* elastic_terms(int exact_hessians, int rayleigh,
                                                       Exact exact, Projected projected,
                                                       const double* ve, double* e, double* g,
                                                       double* k, double* kr, double* kv) {
    const double* k_plus = k;
    if (exact_hessians) {
        exact(e, g, k);
        if (rayleigh) {
            double e2, g2[N];
            projected(&e2, g2, kr);
            k_plus = kr;
        }
    } else {
        projected(e, g, k);
    }
    if (rayleigh) mat_vec<N>(k_plus, ve, kv);
    return k_plus;
}

// Bending: bend_nodes 3 per element (centre, next, prev), bend_slot the
// yarn's arc-length slot, bend_blocks 9 per element (node pairs row-major
// over (centre, next, prev)); threshold: small-angle switch (rad), applied
// to each element's angle at q_n and held over the step
// (bend_step_threshold); jacobian_flags: see the top of this file.
extern "C" __global__ void weft_assemble_bending(
    const unsigned* elems, int count, const unsigned* bend_nodes, const int* bend_slot,
    const unsigned* bend_material, const unsigned* bend_blocks, const GpuMaterial* materials,
    const double* q_n, const double* v, double h, double threshold, double* residual,
    double* values, int with_matrix, int jacobian_flags, double* energies) {
    const int exact_hessians = jacobian_flags & 1, dx = (jacobian_flags >> 1) & 1;
    double en[4] = {0.0, 0.0, 0.0, 0.0};
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < count) {
        unsigned ei = elems[t];
        const unsigned* nodes = bend_nodes + 3 * ei;
        int slot = bend_slot[ei];
        const GpuMaterial mp = materials[bend_material[ei]];
        double qe[12], ve[12];
        gather_relative<12, 3>(q_n, v, h, nodes, slot, qe);
        gather<12, 3>(v, nodes, slot, ve);
        double qs[12];
        gather_relative<12, 3>(q_n, v, 0.0, nodes, slot, qs);
        const double th = bend_step_threshold(qs, threshold);
        double e, g[12], k[144], kr[144], kv[12];
        const double* kp = elastic_terms<12>(
            exact_hessians, mp.rayleigh,
            [&](double* e_, double* g_, double* k_) {
                bend_elastic(mp.k_b, qe, th, e_, g_, k_);
            },
            [&](double* e_, double* g_, double* k_) {
                bend_elastic_projected(mp.k_b, qe, th, e_, g_, k_);
            },
            ve, &e, g, k, kr, kv);
        double rate[3], w = 0.0, df[12], vj[144], pj[144];
        int damp = mp.kd_bending > 0.0;
        if (damp) {
            bend_dissipation(mp.kd_bending, qe, ve, th, rate, &w, df, vj,
                             dx ? pj : nullptr);
            if (!dx) zero<144>(pj);
        }
        double re[12], ae[144];
        local_terms<12>(e, g, k, damp, df, vj, pj, w, mp, kp, kv, ve, h, re, ae, en);
        scatter<12, 3>(residual, values, nodes, bend_blocks + 9 * ei, slot, re, ae, with_matrix);
    }
    block_add4(en, energies);
}

// Crossing shear (positions only): shear_nodes 3 per element (crossing,
// warp neighbour, weft neighbour), shear_blocks 9 per element; jamming from
// the geometry as the CPU does; threshold: small-angle switch (rad), applied
// to each element's angle at q_n and held over the step
// (shear_step_threshold); jacobian_flags: see the top of this file.
extern "C" __global__ void weft_assemble_shear(
    const unsigned* elems, int count, const unsigned* shear_nodes, const unsigned* shear_material,
    const double* shear_spacing, const unsigned* shear_blocks, const GpuMaterial* materials,
    const double* q_n, const double* v, double h, double threshold, double* residual,
    double* values, int with_matrix, int jacobian_flags, double* energies) {
    const int exact_hessians = jacobian_flags & 1, dx = (jacobian_flags >> 1) & 1;
    double en[4] = {0.0, 0.0, 0.0, 0.0};
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < count) {
        unsigned ei = elems[t];
        const GpuMaterial mp = materials[shear_material[ei]];
        if (!(mp.k_x == 0.0 && mp.kd_shear == 0.0)) {
            const unsigned* nodes = shear_nodes + 3 * ei;
            double spacing = shear_spacing[ei];
            double qe[9], ve[9];
            gather_relative<9, 3>(q_n, v, h, nodes, 0, qe);
            gather<9, 3>(v, nodes, 0, ve);
            Jamming jm = shear_jamming_from_geometry(mp.radius, spacing, threshold);
            // The strain chosen at q_n holds over the step.
            double qs[9];
            gather_relative<9, 3>(q_n, v, 0.0, nodes, 0, qs);
            const double th = shear_step_threshold(qs, threshold, jm);
            double e, g[9], k[81], kr[81], kv[9];
            const double* kp = elastic_terms<9>(
                exact_hessians, mp.rayleigh,
                [&](double* e_, double* g_, double* k_) {
                    shear_elastic(mp.k_x, spacing, th, jm, qe, e_, g_, k_);
                },
                [&](double* e_, double* g_, double* k_) {
                    shear_elastic_projected(mp.k_x, spacing, th, jm, qe, e_, g_, k_);
                },
                ve, &e, g, k, kr, kv);
            double rate[3], w = 0.0, df[9], vj[81], pj[81];
            int damp = mp.kd_shear > 0.0;
            if (damp) {
                shear_dissipation(mp.kd_shear, spacing, th, qe, ve, rate, &w, df, vj,
                                  dx ? pj : nullptr);
                if (!dx) zero<81>(pj);
            }
            double re[9], ae[81];
            local_terms<9>(e, g, k, damp, df, vj, pj, w, mp, kp, kv, ve, h, re, ae, en);
            scatter<9, 3>(residual, values, nodes, shear_blocks + 9 * ei, 0, re, ae, with_matrix);
        }
    }
    block_add4(en, energies);
}

// Membrane triangles (StVK, positions only) [SBO18 §4, eq. 13-16]:
// tri_nodes 3 per triangle; tri_data WEFT_TRI_DATA per triangle: b_0, b_1,
// b_2 (6, 1/m), rest area (m^2), L^T of the moduli (9), L_d^T of the
// damping moduli (9, zero without strain-rate damping) and the Rayleigh
// beta (s, 0 for none), as AssemblyPlan::tri_data; tri_blocks 9 per
// triangle (node pairs row-major); jacobian_flags: see the top of this
// file.
#define WEFT_TRI_DATA 26
extern "C" __global__ void weft_assemble_triangles(
    const unsigned* elems, int count, const unsigned* tri_nodes, const double* tri_data,
    const unsigned* tri_blocks, const double* q_n, const double* v, double h, double* residual,
    double* values, int with_matrix, int jacobian_flags, double* energies) {
    const int exact_hessians = jacobian_flags & 1, dx = (jacobian_flags >> 1) & 1;
    double en[4] = {0.0, 0.0, 0.0, 0.0};
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < count) {
        unsigned ei = elems[t];
        const unsigned* nodes = tri_nodes + 3 * ei;
        const double* d = tri_data + WEFT_TRI_DATA * (size_t)ei;
        const double *b = d, *lt = d + 7, *lt_d = d + 16;
        const double area = d[6];
        GpuMaterial mp = {};
        mp.beta = d[25];
        mp.rayleigh = mp.beta > 0.0;
        double qe[9], ve[9];
        gather_relative<9, 3>(q_n, v, h, nodes, 0, qe);
        gather<9, 3>(v, nodes, 0, ve);
        double e, g[9], k[81], kr[81], kv[9];
        const double* kp = elastic_terms<9>(
            exact_hessians, mp.rayleigh,
            [&](double* e_, double* g_, double* k_) { stvk_elastic(b, area, lt, qe, e_, g_, k_); },
            [&](double* e_, double* g_, double* k_) {
                stvk_elastic_projected(b, area, lt, qe, e_, g_, k_);
            },
            ve, &e, g, k, kr, kv);
        double rate[3], w = 0.0, df[9], vj[81], pj[81];
        // A Cholesky factor's diagonal is positive: L_d^T[0] = 0 means none.
        int damp = lt_d[0] != 0.0;
        if (damp) {
            stvk_dissipation(b, area, lt_d, qe, ve, rate, &w, df, vj, dx ? pj : nullptr);
            if (!dx) zero<81>(pj);
        }
        double re[9], ae[81];
        local_terms<9>(e, g, k, damp, df, vj, pj, w, mp, kp, kv, ve, h, re, ae, en);
        scatter<9, 3>(residual, values, nodes, tri_blocks + 9 * ei, 0, re, ae, with_matrix);
    }
    block_add4(en, energies);
}

// Discrete-shell hinges (positions only): hinge_nodes 4 per hinge (x_0, x_1
// the shared edge, x_2, x_3 the opposite vertices); hinge_data
// WEFT_HINGE_DATA per hinge: rigidity B (N m), rest angle (rad), measure
// Omega, strain-rate damping k_d (N m s; 0 for none), as
// AssemblyPlan::hinge_data; hinge_blocks 16 per hinge; jacobian_flags: see
// the top of this file. One angle evaluation serves elasticity and damping.
#define WEFT_HINGE_DATA 4
extern "C" __global__ void weft_assemble_hinges(
    const unsigned* elems, int count, const unsigned* hinge_nodes, const double* hinge_data,
    const unsigned* hinge_blocks, const double* q_n, const double* v, double h, double* residual,
    double* values, int with_matrix, int jacobian_flags, double* energies) {
    const int exact_hessians = jacobian_flags & 1, dx = (jacobian_flags >> 1) & 1;
    double en[4] = {0.0, 0.0, 0.0, 0.0};
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < count) {
        unsigned ei = elems[t];
        const unsigned* nodes = hinge_nodes + 4 * ei;
        const double* d = hinge_data + WEFT_HINGE_DATA * (size_t)ei;
        double qe[12], ve[12];
        gather_relative<12, 4>(q_n, v, h, nodes, 0, qe);
        gather<12, 4>(v, nodes, 0, ve);
        Jet9 th;
        hinge_angle_jet(qe, th);
        double e, g[12], k[144];
        hinge_elastic_of(th, d[0], d[2], d[1], !exact_hessians, &e, g, k);
        GpuMaterial mp = {};  // no Rayleigh damping on hinges
        double rate[1], w = 0.0, df[12], vj[144], pj[144];
        int damp = d[3] > 0.0;
        if (damp) {
            hinge_dissipation_of(th, d[3], d[2], ve, rate, &w, df, vj, dx ? pj : nullptr);
            if (!dx) zero<144>(pj);
        }
        double re[12], ae[144];
        local_terms<12>(e, g, k, damp, df, vj, pj, w, mp, k, nullptr, ve, h, re, ae, en);
        scatter<12, 4>(residual, values, nodes, hinge_blocks + 16 * ei, 0, re, ae, with_matrix);
    }
    block_add4(en, energies);
}

// Friction anchors: anchor k on node anchor_node[k], slot anchor_slot[k],
// anchor position anchors[k] (m). Anchors of one node use distinct slots,
// so one launch covers all of them. diag[n]: index of node n's diagonal
// block.
extern "C" __global__ void weft_assemble_anchors(
    int count, const unsigned* anchor_node, const int* anchor_slot,
    const unsigned* anchor_material, const double* anchors, const GpuMaterial* materials,
    const unsigned* diag, const double* q_n, const double* v, double h, double* residual,
    double* values, int with_matrix, double* energies) {
    double en[4] = {0.0, 0.0, 0.0, 0.0};
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < count) {
        const GpuMaterial mp = materials[anchor_material[k]];
        if (mp.k_f != 0.0) {
            unsigned node = anchor_node[k];
            int s = anchor_slot[k];
            size_t d = WEFT_B * (size_t)node + s;
            // q_n - anchor first: both are large, their difference small.
            double st = (q_n[d] - anchors[k]) + h * v[d];
            en[1] += 0.5 * mp.k_f * st * st;
            residual[d] += h * mp.k_f * st;
            if (with_matrix) values[25 * (size_t)diag[node] + s * WEFT_B + s] += h * h * mp.k_f;
        }
    }
    block_add4(en, energies);
}

// Adds one node's penalty contact and friction against col (offset = yarn
// radius + margin, m) to its residual entries o..o+2 and its diagonal block
// dblock; returns nothing when there is no contact. The node was at xs at
// the step's start (friction's lagged normal force on a still collider).
WEFT_HD void add_node_contact(const Collider& col, V3 x, V3 xs, V3 xd, double offset, size_t o,
                              size_t dblock, double h, double* residual, double* values,
                              int with_matrix, double* en) {
    double e, g[3], hs[9], fr[3], dm[9], sl[3];
    if (!node_contact(col, x, xs, xd, offset, &e, g, hs, fr, dm, sl)) return;
    en[1] += e;
    en[3] -= fr[0] * sl[0] + fr[1] * sl[1] + fr[2] * sl[2];
    for (int r = 0; r < 3; ++r) {
        residual[o + r] -= h * (fr[r] - g[r]);
        if (with_matrix)
            for (int cc = 0; cc < 3; ++cc)
                values[25 * dblock + r * WEFT_B + cc] +=
                    hs[r * 3 + cc] * (h * h) + dm[r * 3 + cc] * h;
    }
}

// Colliders (plane, sphere, capsule; world frame at the step's end time):
// penalty contact and Coulomb friction per node, node_radius[i] the yarn
// radius of node i. Each node writes only its own entries.
extern "C" __global__ void weft_assemble_colliders(
    int nodes, const Collider* colliders, int collider_count, const double* node_radius,
    const unsigned* diag, const double* q_n, const double* q, const double* v, double h, double* residual,
    double* values, int with_matrix, double* energies) {
    double en[4] = {0.0, 0.0, 0.0, 0.0};
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nodes) {
        size_t o = WEFT_B * (size_t)i;
        V3 x = load3(q + o), xs = load3(q_n + o), xd = load3(v + o);
        for (int c = 0; c < collider_count; ++c) {
            const Collider col = colliders[c];
            add_node_contact(col, x, xs, xd, node_radius[i] + col.margin, o, diag[i], h, residual,
                             values, with_matrix, en);
        }
    }
    block_add4(en, energies);
}

// Tangent planes of triangle-mesh colliders (Assembler::begin_step,
// Collider::plane_contact): node i's planes are planes[plane_offsets[i] ..
// plane_offsets[i + 1]], each a COLLIDER_PLANE in the world frame at the
// step's end time carrying its mesh collider's stiffness, friction, margin
// and rigid velocity field. Same penalty and friction as an analytic plane
// (phi = n . (x - p)); each node writes only its own entries.
extern "C" __global__ void weft_assemble_planes(
    int nodes, const unsigned* plane_offsets, const Collider* planes, const double* node_radius,
    const unsigned* diag, const double* q_n, const double* q, const double* v, double h, double* residual,
    double* values, int with_matrix, double* energies) {
    double en[4] = {0.0, 0.0, 0.0, 0.0};
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nodes) {
        size_t o = WEFT_B * (size_t)i;
        V3 x = load3(q + o), xs = load3(q_n + o), xd = load3(v + o);
        for (unsigned k = plane_offsets[i]; k < plane_offsets[i + 1]; ++k) {
            const Collider col = planes[k];
            add_node_contact(col, x, xs, xd, node_radius[i] + col.margin, o, diag[i], h, residual,
                             values, with_matrix, en);
        }
    }
    block_add4(en, energies);
}

// Self-collision repulsion between the pairs found on the host at the step
// start (Assembler::begin_step): pair_nodes holds 4 nodes per pair, segment
// pairs [p0, p1, q0, q1] first, then from pair face_from on vertex-face
// pairs [p, a, b, c] (triangle-mesh cloth). Interaction distance d0 (m),
// stiffness k (N/m), law 0 quadratic / 1 cubic (RepulsionLaw). Only the
// node-diagonal 3x3 blocks of each pair's Gauss-Newton Hessian enter the
// matrix (the pattern is fixed), exactly as on the CPU. Pairs share nodes,
// so the scatter is atomic.
extern "C" __global__ void weft_assemble_repulsion(int count, const unsigned* pair_nodes,
                                                   int face_from, int law, double d0, double k,
                                                   const unsigned* diag,
                                                   const double* q, double h, double* residual,
                                                   double* values, int with_matrix,
                                                   double* energies) {
    double en[4] = {0.0, 0.0, 0.0, 0.0};
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < count) {
        unsigned nd[4];
        V3 x[4];
        for (int a = 0; a < 4; ++a) {
            nd[a] = pair_nodes[4 * (size_t)p + a];
            x[a] = load3(q + WEFT_B * (size_t)nd[a]);
        }
        double e, g[12], hd[36];
        int hit = p < face_from ? segment_repulsion(x, d0, k, law, &e, g, hd)
                                : face_repulsion(x, d0, k, law, &e, g, hd);
        if (hit) {
            en[1] += e;
            for (int a = 0; a < 4; ++a) {
                size_t o = WEFT_B * (size_t)nd[a];
                size_t blk = 25 * (size_t)diag[nd[a]];
                for (int r = 0; r < 3; ++r) {
                    atomicAdd(residual + o + r, h * g[3 * a + r]);
                    if (with_matrix)
                        for (int c = 0; c < 3; ++c)
                            atomicAdd(values + blk + r * WEFT_B + c, h * h * hd[9 * a + 3 * r + c]);
                }
            }
        }
    }
    block_add4(en, energies);
}

// Seam ties (Assembler::ties, weft_potentials::seam): node tie_nodes[3j]
// pulled to (1 - t) x_a + t x_b (a, b = tie_nodes[3j + 1, 3j + 2], t =
// tie_t[j]) by V = 1/2 k |eps|^2, eps = x_n - p, with dissipation
// W = 1/2 kd |eps_dot|^2. The strain is linear: K = k J^T J, -df/dv =
// kd J^T J, J = [I, -(1-t) I, -t I]. tie_blocks: 9 per tie (node pairs
// row-major). Ties of one seam share nodes: the scatter is atomic.
extern "C" __global__ void weft_assemble_ties(int count, const unsigned* tie_nodes,
                                              const double* tie_t, const unsigned* tie_blocks,
                                              double k, double kd, const double* q_n,
                                              const double* v, double h, double* residual,
                                              double* values, int with_matrix,
                                              double* energies) {
    double en[4] = {0.0, 0.0, 0.0, 0.0};
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < count) {
        double t = tie_t[j];
        double w[3] = {1.0, -(1.0 - t), -t};
        unsigned nd[3];
        double eps[3] = {0.0, 0.0, 0.0}, epsd[3] = {0.0, 0.0, 0.0};
        for (int a = 0; a < 3; ++a) nd[a] = tie_nodes[3 * (size_t)j + a];
        // Positions relative to the tied node (gather_relative; the
        // weights sum to 0, so eps is unchanged).
        size_t o0 = WEFT_B * (size_t)nd[0];
        for (int a = 0; a < 3; ++a) {
            size_t o = WEFT_B * (size_t)nd[a];
            for (int i = 0; i < 3; ++i) {
                double rel = (q_n[o + i] - q_n[o0 + i]) + h * (v[o + i] - v[o0 + i]);
                eps[i] += w[a] * rel;
                epsd[i] += w[a] * v[o + i];
            }
        }
        en[1] += 0.5 * k * (eps[0] * eps[0] + eps[1] * eps[1] + eps[2] * eps[2]);
        en[3] += kd * (epsd[0] * epsd[0] + epsd[1] * epsd[1] + epsd[2] * epsd[2]);
        for (int a = 0; a < 3; ++a) {
            size_t o = WEFT_B * (size_t)nd[a];
            // R = -h f, f = -k w_a eps - kd w_a eps_dot.
            for (int i = 0; i < 3; ++i)
                atomicAdd(residual + o + i, h * (k * w[a] * eps[i] + kd * w[a] * epsd[i]));
            if (with_matrix)
                for (int b = 0; b < 3; ++b) {
                    double c = (k * h * h + kd * h) * w[a] * w[b];
                    size_t blk = 25 * (size_t)tie_blocks[9 * (size_t)j + 3 * a + b];
                    for (int i = 0; i < 3; ++i) atomicAdd(values + blk + i * WEFT_B + i, c);
                }
        }
    }
    block_add4(en, energies);
}

// Attachment springs V = 1/2 k |x - p|^2 (Assembler::attachments): node
// attach_node[j] pulled to the fixed point attach_point[3j..3j+3] (m),
// stiffness attach_k[j] (N/m). Node-diagonal blocks; a node may carry
// several attachments, so the scatter is atomic.
extern "C" __global__ void weft_assemble_attachments(int count, const unsigned* attach_node,
                                                     const double* attach_point,
                                                     const double* attach_k,
                                                     const unsigned* diag, const double* q_n,
                                                     const double* v, double h, double* residual,
                                                     double* values, int with_matrix,
                                                     double* energies) {
    double en[4] = {0.0, 0.0, 0.0, 0.0};
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < count) {
        unsigned node = attach_node[j];
        double k = attach_k[j];
        size_t o = WEFT_B * (size_t)node;
        // (q_n - p) + h v: the large terms cancel before the small one.
        V3 d = add(sub(load3(q_n + o), load3(attach_point + 3 * (size_t)j)), scale(load3(v + o), h));
        en[1] += 0.5 * k * norm2(d);
        double dd[3] = {d.x, d.y, d.z};
        for (int r = 0; r < 3; ++r) {
            atomicAdd(residual + o + r, h * k * dd[r]);
            if (with_matrix) atomicAdd(values + 25 * (size_t)diag[node] + r * WEFT_B + r, h * h * k);
        }
    }
    block_add4(en, energies);
}

// Lumped point masses on positions (kg), with the node's Rayleigh alpha
// (1/s, 0 when none).
extern "C" __global__ void weft_assemble_point_masses(
    int nodes, const double* point_mass, const double* node_alpha, const unsigned* diag,
    const double* q, const double* v, const double* v_n, double h, double gx, double gy,
    double gz, double* residual, double* values, int with_matrix, double* energies) {
    double en[4] = {0.0, 0.0, 0.0, 0.0};
    int node = blockIdx.x * blockDim.x + threadIdx.x;
    if (node < nodes && point_mass[node] != 0.0) {
        double pm = point_mass[node];
        double alpha = node_alpha[node];
        double g[3] = {gx, gy, gz};
        for (int c = 0; c < 3; ++c) {
            size_t d = WEFT_B * (size_t)node + c;
            residual[d] += pm * (v[d] - v_n[d]) - h * pm * g[c];
            en[0] += 0.5 * pm * v[d] * v[d];
            en[2] -= pm * g[c] * q[d];
            double* blk = values + 25 * (size_t)diag[node];
            if (with_matrix) blk[c * WEFT_B + c] += pm;
            if (alpha != 0.0) {
                residual[d] += h * alpha * pm * v[d];
                en[3] += alpha * pm * v[d] * v[d];
                if (with_matrix) blk[c * WEFT_B + c] += h * alpha * pm;
            }
        }
    }
    block_add4(en, energies);
}

// q = q_n + h v over n entries.
extern "C" __global__ void weft_advance(int n, const double* q_n, const double* v, double h,
                                        double* q) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) q[i] = q_n[i] + h * v[i];
}

// Largest |x_i| over n entries (idx_in: the index reported for each entry,
// or null for i itself): per-block (value, index) partials written to
// part_val/part_idx (one per block); the host or a second launch with the
// partials as input finishes.
extern "C" __global__ void weft_max_abs(int n, const double* x, const unsigned* idx_in,
                                        double* part_val, unsigned* part_idx) {
    double best = -1.0;
    unsigned bi = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        double a = fabs(x[i]);
        if (a > best) {
            best = a;
            bi = idx_in ? idx_in[i] : (unsigned)i;
        }
    }
    block_argmax(best, bi, false);
    if (threadIdx.x == 0) {
        part_val[blockIdx.x] = best;
        part_idx[blockIdx.x] = bi;
    }
}

// (value, index) ordering of the acceptance reduction: the larger value,
// and of equal values the larger index (Iterator::max_by keeps the last of
// equal maxima), so the result does not depend on the launch shape.
__device__ __forceinline__ bool accept_better(double v, unsigned i, double bv, unsigned bi) {
    return v > bv || (v == bv && i > bi);
}

// Acceptance checks of a converged step (Simulation::try_step_with), pass 1
// over the `count` segments (seg_nodes: a, b per segment; seg_slot 3 or 4):
// strain_new[e] = stretch strain at q; a segment with s_b <= s_a raises
// first_bad[0] to at least count - e (atomicMax; 0 = none, so the first
// failing segment is count - first_bad[0]); per block the (|strain_new -
// strain_ref|, segment) maximum goes to part_val/part_idx (one per block,
// blockDim.x <= 256).
extern "C" __global__ void weft_accept_segments(int count, const unsigned* seg_nodes,
                                                const int* seg_slot, const double* q,
                                                const double* strain_ref, double* strain_new,
                                                unsigned* first_bad, double* part_val,
                                                unsigned* part_idx) {
    double best = -1.0;
    unsigned bi = 0;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < count; e += gridDim.x * blockDim.x) {
        unsigned a = seg_nodes[2 * e], b = seg_nodes[2 * e + 1];
        int k = seg_slot[e];
        if (q[WEFT_B * (size_t)b + k] <= q[WEFT_B * (size_t)a + k])
            atomicMax(first_bad, (unsigned)(count - e));
        double st = segment_strain(q, a, b, k);
        strain_new[e] = st;
        double ch = fabs(st - strain_ref[e]);
        if (accept_better(ch, (unsigned)e, best, bi)) {
            best = ch;
            bi = (unsigned)e;
        }
    }
    block_argmax(best, bi, true);
    if (threadIdx.x == 0) {
        part_val[blockIdx.x] = best;
        part_idx[blockIdx.x] = bi;
    }
}

// Pass 2 (one block): reduces the `blocks` partials of pass 1 and writes the
// three scalars the host reads back, result = [first_bad[0], largest strain
// change, its segment] (the first and the last as doubles, exact below 2^53).
extern "C" __global__ void weft_accept_finish(int blocks, const double* part_val,
                                              const unsigned* part_idx,
                                              const unsigned* first_bad, double* result) {
    double best = -1.0;
    unsigned bi = 0;
    for (int i = threadIdx.x; i < blocks; i += blockDim.x) {
        if (accept_better(part_val[i], part_idx[i], best, bi)) {
            best = part_val[i];
            bi = part_idx[i];
        }
    }
    block_argmax(best, bi, true);
    if (threadIdx.x == 0) {
        result[0] = (double)first_bad[0];
        result[1] = best;
        result[2] = (double)bi;
    }
}

// Friction-anchor update after an accepted step (Assembler::update_anchors),
// one thread per anchor k (node anchor_node[k], slot anchor_slot[k],
// material anchor_material[k]; skipped when its k_f is 0). The crossing's
// normal force comes from the mean tensions and chords of the node's warp
// and weft yarns (neighbours anchor_nbrs[4k..4k+4]: warp previous, warp
// next, weft previous, weft next; yarn materials anchor_yarn_material[2k],
// [2k+1], 0xffffffff when the node is not on both families: force = floor),
// crimp side anchor_side[k]; anchors[k] (m) is updated in place.
extern "C" __global__ void weft_update_anchors(int count, const unsigned* anchor_node,
                                               const int* anchor_slot,
                                               const unsigned* anchor_material,
                                               const unsigned* anchor_nbrs,
                                               const unsigned* anchor_yarn_material,
                                               const double* anchor_side,
                                               const GpuMaterial* materials, double floor,
                                               const double* q, double* anchors) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    const GpuMaterial mp = materials[anchor_material[k]];
    if (mp.k_f == 0.0) return;
    unsigned node = anchor_node[k];
    double fn = floor;
    unsigned mw = anchor_yarn_material[2 * k], mf = anchor_yarn_material[2 * k + 1];
    if (mw != 0xffffffffu && mf != 0xffffffffu) {
        const unsigned* nb = anchor_nbrs + 4 * (size_t)k;
        double tw, lw, tf, lf;
        yarn_tension_at(q, nb[0], node, nb[1], 3, materials[mw].k_s, &tw, &lw);
        yarn_tension_at(q, nb[2], node, nb[3], 4, materials[mf].k_s, &tf, &lf);
        fn = plain_crossing_normal_force(tw, lw, tf, lf, anchor_side[k], mp.radius, floor);
    }
    double s = q[WEFT_B * (size_t)node + anchor_slot[k]];
    anchors[k] = anchor_update(s, anchors[k], mp.k_f, mp.mu, fn);
}
