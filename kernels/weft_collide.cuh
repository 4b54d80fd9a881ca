// weft_collide.cuh: analytic colliders (plane, sphere, capsule) with penalty
// contact and smoothed Coulomb friction per node, mirror of
// crates/weft-solver/src/collide/{shapes,penalty}.rs (DESIGN §6).
//
// Triangle-mesh colliders (BVH signed distance) are not evaluated here: the
// host linearises them once per step into per-node tangent planes
// (Assembler::begin_step), which the kernels take as COLLIDER_PLANE. Moving colliders are given in world coordinates at
// the evaluation time t (the host applies the keyframed rigid transform to
// the shape, which is exact for these three shapes) with the rigid velocity
// field v(x) = lin + ang x (x - origin).
#pragma once
#include "weft_math.cuh"

namespace weft {

enum ColliderKind { COLLIDER_PLANE = 0, COLLIDER_SPHERE = 1, COLLIDER_CAPSULE = 2 };

// A collider at the current time, world frame. Plane: a = point, b = unit
// outward normal. Sphere: a = centre, radius. Capsule: axis a..b, radius.
// stiffness k (N/m), friction mu, friction_speed eps_v (m/s), margin delta
// (m). Velocity field: lin + ang x (x - origin) (m/s).
struct Collider {
    int kind;
    int pad;
    double a[3];
    double b[3];
    double radius;
    double stiffness;
    double friction;
    double friction_speed;
    double margin;
    double lin[3];
    double ang[3];
    double origin[3];
};

// A unit vector perpendicular to v (shapes.rs any_perpendicular).
WEFT_HD V3 any_perpendicular(V3 v) {
    double ax = fabs(v.x), ay = fabs(v.y), az = fabs(v.z);
    V3 e;
    if (ax <= ay && ax <= az)
        e = v3(1.0, 0.0, 0.0);
    else if (ay <= az)
        e = v3(0.0, 1.0, 0.0);
    else
        e = v3(0.0, 0.0, 1.0);
    V3 c = cross(v, e);
    return divs(c, norm(c));
}

// Signed distance phi (m, negative inside) and unit outward normal at x.
WEFT_HD double collider_distance(const Collider& c, V3 x, V3& n) {
    if (c.kind == COLLIDER_PLANE) {
        n = load3(c.b);
        return dot(n, sub(x, load3(c.a)));
    }
    if (c.kind == COLLIDER_SPHERE) {
        V3 d = sub(x, load3(c.a));
        double len = norm(d);
        if (len > 0.0) {
            n = divs(d, len);
            return len - c.radius;
        }
        n = v3(0.0, 1.0, 0.0);
        return -c.radius;
    }
    V3 a = load3(c.a);
    V3 ab = sub(load3(c.b), a);
    double l2 = norm2(ab);
    double s = 0.0;
    if (l2 > 0.0) {
        s = dot(sub(x, a), ab) / l2;
        s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
    }
    V3 cp = add(a, scale(ab, s));
    V3 d = sub(x, cp);
    double len = norm(d);
    if (len > 0.0) {
        n = divs(d, len);
        return len - c.radius;
    }
    n = l2 > 0.0 ? any_perpendicular(ab) : v3(0.0, 1.0, 0.0);
    return -c.radius;
}

// Penalty contact plus smoothed Coulomb friction of one node at x with
// velocity xd against collider c, for offset = yarn radius + margin (m).
// Returns 0 when there is no contact (phi >= offset). Otherwise:
// energy 1/2 k g^2 (J), grad = -k g n (N, add to dV/dx), hess = k n n^T
// (N/m, Gauss-Newton, curvature dropped), fric = friction force (N),
// damp = -d fric / d xd (N s/m, symmetric PSD), slip = tangential velocity.
WEFT_HD int node_contact(const Collider& c, V3 x, V3 xd, double offset, double* energy,
                         double* grad, double* hess, double* fric, double* damp, double* slip) {
    V3 n;
    double phi = collider_distance(c, x, n);
    double g = offset - phi;
    if (g <= 0.0) return 0;
    double k = c.stiffness;
    *energy = 0.5 * k * g * g;
    double nn[3] = {n.x, n.y, n.z};
    for (int i = 0; i < 3; ++i) {
        grad[i] = -k * g * nn[i];
        for (int j = 0; j < 3; ++j) hess[i * 3 + j] = k * nn[i] * nn[j];
    }
    double fn = k * g;
    V3 vc = add(load3(c.lin), cross(load3(c.ang), sub(x, load3(c.origin))));
    V3 vrel = sub(xd, vc);
    double vr[3] = {vrel.x, vrel.y, vrel.z};
    double p[9];
    double vt[3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) p[i * 3 + j] = (i == j ? 1.0 : 0.0) - nn[i] * nn[j];
    for (int i = 0; i < 3; ++i) vt[i] = p[i * 3] * vr[0] + p[i * 3 + 1] * vr[1] + p[i * 3 + 2] * vr[2];
    double eps_v = c.friction_speed;
    double s = sqrt(vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2] + eps_v * eps_v);
    double cc = c.friction * fn;
    for (int i = 0; i < 3; ++i) {
        fric[i] = -cc / s * vt[i];
        slip[i] = vt[i];
        for (int j = 0; j < 3; ++j) damp[i * 3 + j] = cc * (p[i * 3 + j] / s - vt[i] * vt[j] / (s * s * s));
    }
    return 1;
}

}  // namespace weft

namespace weft {

WEFT_HD double clamp01(double x) { return x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x); }

// Closest points of segments p0p1 and q0q1 (collide/segments.rs
// closest_points, Ericson 5.1.9; parallel segments: the middle of the
// overlap). Parameters s, t in [0, 1]; returns the distance (m).
WEFT_HD double segment_closest(V3 p0, V3 p1, V3 q0, V3 q1, double& s, double& t, V3& on_p,
                               V3& on_q) {
    V3 d1 = sub(p1, p0), d2 = sub(q1, q0), r = sub(p0, q0);
    double a = norm2(d1), e = norm2(d2), f = dot(d2, r);
    const double tiny = 2.2250738585072014e-308;  // f64::MIN_POSITIVE
    if (a <= tiny && e <= tiny) {
        s = 0.0;
        t = 0.0;
    } else if (a <= tiny) {
        s = 0.0;
        t = clamp01(f / e);
    } else {
        double c = dot(d1, r);
        if (e <= tiny) {
            s = clamp01(-c / a);
            t = 0.0;
        } else {
            double b = dot(d1, d2);
            double denom = a * e - b * b;
            double ss;
            if (denom > 1e-12 * a * e) {
                ss = clamp01((b * f - c * e) / denom);
            } else {
                double sa = -c / a, sb = (b - c) / a;
                double lo = fmax(fmin(sa, sb), 0.0);
                double hi = fmin(fmax(sa, sb), 1.0);
                ss = lo <= hi ? 0.5 * (lo + hi) : 0.0;
            }
            double tt = (b * ss + f) / e;
            if (tt < 0.0) {
                s = clamp01(-c / a);
                t = 0.0;
            } else if (tt > 1.0) {
                s = clamp01((b - c) / a);
                t = 1.0;
            } else {
                s = ss;
                t = tt;
            }
        }
    }
    on_p = add(p0, scale(d1, s));
    on_q = add(q0, scale(d2, t));
    return norm(sub(on_p, on_q));
}

// Self-collision repulsion V = 1/2 k (d0 - d)^2 of segments P = x[0]x[1],
// Q = x[2]x[3] (collide/segments.rs repulsion): returns 0 when d >= d0.
// Otherwise energy (J), grad (12, N, layout [p0, p1, q0, q1]) and the
// node-diagonal 3x3 blocks of the Gauss-Newton Hessian k w w^T (4 x 9,
// N/m, row-major), w = [(1-s) n, s n, -(1-t) n, -t n].
WEFT_HD int segment_repulsion(const V3* x, double d0, double k, double* energy, double* grad,
                              double* hdiag) {
    double s, t;
    V3 on_p, on_q;
    double d = segment_closest(x[0], x[1], x[2], x[3], s, t, on_p, on_q);
    if (d >= d0) return 0;
    V3 n;
    if (d > 0.0) {
        n = divs(sub(on_p, on_q), d);
    } else {
        V3 d1 = sub(x[1], x[0]), d2 = sub(x[3], x[2]);
        V3 c = cross(d1, d2);
        if (norm(c) > 0.0)
            n = divs(c, norm(c));
        else if (norm(d1) > 0.0)
            n = any_perpendicular(d1);
        else if (norm(d2) > 0.0)
            n = any_perpendicular(d2);
        else
            n = v3(0.0, 1.0, 0.0);
    }
    double cw[4] = {1.0 - s, s, -(1.0 - t), -t};
    double nn[3] = {n.x, n.y, n.z};
    double gap = d0 - d;
    *energy = 0.5 * k * gap * gap;
    double kg = -k * gap;
    for (int a = 0; a < 4; ++a) {
        double w[3];
        for (int i = 0; i < 3; ++i) w[i] = cw[a] * nn[i];
        for (int i = 0; i < 3; ++i) {
            grad[3 * a + i] = kg * w[i];
            for (int j = 0; j < 3; ++j) hdiag[9 * a + 3 * i + j] = (k * w[i]) * w[j];
        }
    }
    return 1;
}

}  // namespace weft
