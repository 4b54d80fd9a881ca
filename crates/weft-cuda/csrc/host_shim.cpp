// Host shim over the kernel headers for the parity tests: compiled by the
// crate's build.rs with a plain C++ compiler (the CUDA qualifiers are defined
// away in weft_math.cuh) and called from Rust through extern "C". Matrices
// are row-major, layouts as documented in kernels/weft_elements.cuh.
#include "../../../kernels/weft_elements.cuh"
#include "../../../kernels/weft_collide.cuh"

using namespace weft;

extern "C" {

void weft_stretch_elastic(double k, const double* q, double* e, double* g, double* h) {
    stretch_elastic(k, q, e, g, h);
}

void weft_stretch_elastic_projected(double k, const double* q, double* e, double* g, double* h) {
    stretch_elastic_projected(k, q, e, g, h);
}

void weft_stretch_clamped_strain_hessian(const double* q, double w, double* out) {
    stretch_clamped_strain_hessian(q, w, out);
}

void weft_stretch_dissipation(double kd, const double* q, const double* qd, double* rate,
                              double* w, double* f, double* vj, double* pj) {
    stretch_dissipation(kd, q, qd, rate, w, f, vj, pj);
}

void weft_stretch_dissipation_over_step(double kd, const double* q, const double* qs,
                                        const double* qd, double h, int exact, double* rate,
                                        double* w, double* f, double* vj, double* pj) {
    stretch_dissipation_over_step(kd, q, qs, qd, h, exact, rate, w, f, vj, pj);
}

void weft_bend_scalar_strain(const double* q, double* value, double* jac, double* hess) {
    Strain<1, 12> s;
    bend_scalar_strain(q, s);
    copy<1>(s.value, value);
    copy<12>(s.jac, jac);
    copy<144>(s.hess, hess);
}

void weft_bend_vector_strain(const double* q, double* value, double* jac, double* hess) {
    Strain<3, 12> s;
    bend_vector_strain(q, s);
    copy<3>(s.value, value);
    copy<36>(s.jac, jac);
    copy<432>(s.hess, hess);
}

double weft_bend_step_threshold(const double* q_n, double thr) {
    return bend_step_threshold(q_n, thr);
}

int weft_bend_elastic(double k, const double* q, double thr, double* e, double* g, double* h) {
    return bend_elastic(k, q, thr, e, g, h);
}

int weft_bend_elastic_projected(double k, const double* q, double thr, double* e, double* g,
                                double* h) {
    return bend_elastic_projected(k, q, thr, e, g, h);
}

int weft_bend_dissipation(double kd, const double* q, const double* qd, double thr, double* rate,
                          double* w, double* f, double* vj, double* pj) {
    return bend_dissipation(kd, q, qd, thr, rate, w, f, vj, pj);
}

void weft_shear_scalar_strain(const double* q, double* value, double* jac, double* hess) {
    ShearReduced r;
    shear_reduced(q, r);
    Strain<1, 6> s;
    shear_scalar_reduced(r, s);
    value[0] = s.value[0];
    shear_scatter_vector(s.jac, jac);
    shear_scatter_matrix(s.hess, hess);
}

void weft_shear_small_angle_strain(const double* q, double* value, double* jac, double* hess) {
    ShearReduced r;
    shear_reduced(q, r);
    Strain<3, 6> s;
    shear_small_angle_reduced(r, s);
    for (int i = 0; i < 3; ++i) {
        value[i] = s.value[i];
        shear_scatter_vector(s.jac + 6 * i, jac + 9 * i);
        shear_scatter_matrix(s.hess + 36 * i, hess + 81 * i);
    }
}

void weft_shear_jamming_from_geometry(double radius, double spacing, double thr, double* out) {
    Jamming j = shear_jamming_from_geometry(radius, spacing, thr);
    out[0] = j.enabled;
    out[1] = j.onset;
    out[2] = j.lock;
    out[3] = j.gain;
}

double weft_shear_step_threshold(const double* q_n, double thr, int jam, double onset,
                                 double lock, double gain) {
    Jamming j;
    j.enabled = jam;
    j.onset = onset;
    j.lock = lock;
    j.gain = gain;
    return shear_step_threshold(q_n, thr, j);
}

int weft_shear_elastic(double k, double spacing, double thr, int jam, double onset, double lock,
                       double gain, const double* q, double* e, double* g, double* h) {
    Jamming j;
    j.enabled = jam;
    j.onset = onset;
    j.lock = lock;
    j.gain = gain;
    return shear_elastic(k, spacing, thr, j, q, e, g, h);
}

int weft_shear_elastic_projected(double k, double spacing, double thr, int jam, double onset,
                                 double lock, double gain, const double* q, double* e, double* g,
                                 double* h) {
    Jamming j;
    j.enabled = jam;
    j.onset = onset;
    j.lock = lock;
    j.gain = gain;
    return shear_elastic_projected(k, spacing, thr, j, q, e, g, h);
}

int weft_shear_dissipation(double kd, double spacing, double thr, const double* q,
                           const double* qd, double* rate, double* w, double* f, double* vj,
                           double* pj) {
    return shear_dissipation(kd, spacing, thr, q, qd, rate, w, f, vj, pj);
}

void weft_contact_elastic(double k, double d, double l, const double* q, double* e, double* g,
                          double* h) {
    contact_elastic(k, d, l, q, e, g, h);
}

void weft_contact_dissipation(double kd, double d, double l, const double* q, const double* qd,
                              double* rate, double* w, double* f, double* vj, double* pj) {
    contact_dissipation(kd, d, l, q, qd, rate, w, f, vj, pj);
}

void weft_anchor_elastic(double k, double s, double anchor, double* e, double* g, double* h) {
    anchor_elastic(k, s, anchor, e, g, h);
}

double weft_anchor_update(double s, double anchor, double k, double mu, double fn) {
    return anchor_update(s, anchor, k, mu, fn);
}

double weft_segment_strain(const double* q, unsigned a, unsigned b, int slot) {
    return segment_strain(q, a, b, slot);
}

void weft_yarn_tension_at(const double* q, unsigned prev, unsigned node, unsigned next, int slot,
                          double k_s, double* tension, double* chord) {
    yarn_tension_at(q, prev, node, next, slot, k_s, tension, chord);
}

double weft_yarn_normal_pull(double t, double op, double o, double on, double l_in, double l_out,
                             double radius) {
    return yarn_normal_pull(t, op, o, on, l_in, l_out, radius);
}

double weft_plain_crossing_normal_force(double tw, double lw, double tf, double lf, double side,
                                        double radius, double floor) {
    return plain_crossing_normal_force(tw, lw, tf, lf, side, radius, floor);
}

void weft_gravity(const double* q, double rho_l, const double* gv, double* e, double* g,
                  double* h) {
    gravity_potential(q, rho_l, gv, e, g, h);
}

void weft_mass_matrix(double rho_l, const double* q, double* m) { mass_matrix(rho_l, q, m); }

void weft_inertia_force(double rho_l, const double* q, const double* qd, double* out) {
    inertia_force(rho_l, q, qd, out);
}

// PSD projection of an n x n matrix, n in {2, 5, 6, 7, 8, 9, 12}; returns 0
// for an unsupported n.
int weft_project_psd(int n, const double* a, double* out) {
    switch (n) {
        case 2: project_psd<2>(a, out); return 1;
        case 5: project_psd<5>(a, out); return 1;
        case 6: project_psd<6>(a, out); return 1;
        case 7: project_psd<7>(a, out); return 1;
        case 8: project_psd<8>(a, out); return 1;
        case 9: project_psd<9>(a, out); return 1;
        case 12: project_psd<12>(a, out); return 1;
        default: return 0;
    }
}

int weft_node_contact(const Collider* c, const double* x, const double* xd, double offset,
                      double* e, double* g, double* h, double* fric, double* damp, double* slip) {
    // A node that has not moved this step: the normal force at x itself.
    return node_contact(*c, load3(x), load3(x), load3(xd), offset, e, g, h, fric, damp, slip);
}

int weft_segment_repulsion(const double* q, double d0, double k, int law, double* e, double* g,
                           double* hdiag) {
    V3 x[4] = {load3(q), load3(q + 3), load3(q + 6), load3(q + 9)};
    return segment_repulsion(x, d0, k, law, e, g, hdiag);
}

int weft_face_repulsion(const double* q, double d0, double k, int law, double* e, double* g,
                        double* hdiag) {
    V3 x[4] = {load3(q), load3(q + 3), load3(q + 6), load3(q + 9)};
    return face_repulsion(x, d0, k, law, e, g, hdiag);
}

void weft_stvk_elastic(const double* b, double area, const double* lt, const double* q, double* e,
                       double* g, double* h) {
    stvk_elastic(b, area, lt, q, e, g, h);
}

void weft_stvk_elastic_projected(const double* b, double area, const double* lt,
                                 const double* q, double* e, double* g, double* h) {
    stvk_elastic_projected(b, area, lt, q, e, g, h);
}

void weft_stvk_dissipation(const double* b, double area, const double* lt_d, const double* q,
                           const double* qd, double* rate, double* w, double* f, double* vj,
                           double* pj) {
    stvk_dissipation(b, area, lt_d, q, qd, rate, w, f, vj, pj);
}

void weft_hinge_angle(const double* q, double* value, double* jac, double* hess) {
    Jet9 th;
    hinge_angle_jet(q, th);
    Strain<1, 12> s;
    hinge_strain_of(th, 0.0, 1, s);
    value[0] = s.value[0];
    copy<12>(s.jac, jac);
    copy<144>(s.hess, hess);
}

void weft_hinge_elastic(double k, double measure, double rest, int projected, const double* q,
                        double* e, double* g, double* h) {
    Jet9 th;
    hinge_angle_jet(q, th);
    hinge_elastic_of(th, k, measure, rest, projected, e, g, h);
}

void weft_hinge_dissipation(double kd, double measure, const double* q, const double* qd,
                            double* rate, double* w, double* f, double* vj, double* pj) {
    Jet9 th;
    hinge_angle_jet(q, th);
    hinge_dissipation_of(th, kd, measure, qd, rate, w, f, vj, pj);
}
}  // extern "C"
