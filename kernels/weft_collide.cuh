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
// velocity xd against collider c, for offset = yarn radius + margin (m);
// the node was at xs at the step's start, which friction uses where the
// collider is at rest at x (vc zero; else x itself). Returns 0 when the node
// is outside the offset both at x and at that start. Otherwise: energy
// 1/2 k g^2 (J), grad = -k g n (N, add to dV/dx), hess = k n n^T (N/m,
// Gauss-Newton, curvature dropped), all zero when only the start is inside;
// fric = friction force (N) with the normal force k max(0, offset -
// phi(start)) and the normal there (the lagged normal force of penalty.rs),
// damp = -d fric / d xd (N s/m, symmetric PSD), slip = tangential velocity.
WEFT_HD int node_contact(const Collider& c, V3 x, V3 xs, V3 xd, double offset,
                         double* energy, double* grad, double* hess, double* fric, double* damp,
                         double* slip) {
    V3 n;
    double phi = collider_distance(c, x, n);
    double g = offset - phi;
    V3 vc = add(load3(c.lin), cross(load3(c.ang), sub(x, load3(c.origin))));
    if (vc.x != 0.0 || vc.y != 0.0 || vc.z != 0.0) xs = x;
    V3 ns = n;
    double gs = g;
    if (xs.x != x.x || xs.y != x.y || xs.z != x.z) gs = offset - collider_distance(c, xs, ns);
    if (g <= 0.0 && gs <= 0.0) return 0;
    double k = c.stiffness;
    double gp = g > 0.0 ? g : 0.0;
    *energy = 0.5 * k * gp * gp;
    double nn[3] = {n.x, n.y, n.z};
    for (int i = 0; i < 3; ++i) {
        grad[i] = -k * gp * nn[i];
        for (int j = 0; j < 3; ++j) hess[i * 3 + j] = g > 0.0 ? k * nn[i] * nn[j] : 0.0;
    }
    double fn = gs > 0.0 ? k * gs : 0.0;
    double sn[3] = {ns.x, ns.y, ns.z};
    V3 vrel = sub(xd, vc);
    double vr[3] = {vrel.x, vrel.y, vrel.z};
    double p[9];
    double vt[3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) p[i * 3 + j] = (i == j ? 1.0 : 0.0) - sn[i] * sn[j];
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

// The repulsion law V(g) of a self-contact pair at gap g = d0 - d
// (collide/segments.rs RepulsionLaw::eval): law 0 quadratic 1/2 k g^2
// (DESIGN 6), law 1 cubic k g^3 / (3 d0). Writes V, dV/dg, d2V/dg2.
WEFT_HD void repulsion_law(int law, double gap, double d0, double k, double* v, double* vp,
                           double* vpp) {
    if (law == 1) {
        *v = k * gap * gap * gap / (3.0 * d0);
        *vp = k * gap * gap / d0;
        *vpp = 2.0 * k * gap / d0;
    } else {
        *v = 0.5 * k * gap * gap;
        *vp = k * gap;
        *vpp = k;
    }
}

// Energy, gradient and node-diagonal Gauss-Newton blocks of a pair with
// weight vector w = cw[a] n per node a (4 nodes) at distance d < d0.
WEFT_HD void repulsion_of_weights(const double* cw, V3 n, double d, double d0, double k, int law,
                                  double* energy, double* grad, double* hdiag) {
    double v, vp, vpp;
    repulsion_law(law, d0 - d, d0, k, &v, &vp, &vpp);
    *energy = v;
    double nn[3] = {n.x, n.y, n.z};
    for (int a = 0; a < 4; ++a) {
        double w[3];
        for (int i = 0; i < 3; ++i) w[i] = cw[a] * nn[i];
        for (int i = 0; i < 3; ++i) {
            grad[3 * a + i] = -vp * w[i];
            for (int j = 0; j < 3; ++j) hdiag[9 * a + 3 * i + j] = (vpp * w[i]) * w[j];
        }
    }
}

// Self-collision repulsion V(d0 - d) under `law` of segments P = x[0]x[1],
// Q = x[2]x[3] (collide/segments.rs repulsion_with): returns 0 when d >= d0.
// Otherwise energy (J), grad (12, N, layout [p0, p1, q0, q1]) and the
// node-diagonal 3x3 blocks of the Gauss-Newton Hessian V'' w w^T (4 x 9,
// N/m, row-major), w = [(1-s) n, s n, -(1-t) n, -t n].
WEFT_HD int segment_repulsion(const V3* x, double d0, double k, int law, double* energy,
                              double* grad, double* hdiag) {
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
    repulsion_of_weights(cw, n, d, d0, k, law, energy, grad, hdiag);
    return 1;
}

// Closest point of triangle abc to p (collide/faces.rs closest_on_triangle):
// the projection when inside, else the closest point of the closest edge;
// a triangle of relative area below 1e-12 is its edges. Writes the
// barycentric weights w[3], the point and whether it is the projection
// (interior); returns the distance (m).
WEFT_HD double face_closest(V3 p, V3 a, V3 b, V3 c, double* w, V3& point, int& interior) {
    interior = 0;
    V3 ab = sub(b, a), ac = sub(c, a);
    V3 normal = cross(ab, ac);
    double area2 = norm2(normal);
    double longest = fmax(fmax(norm2(ab), norm2(ac)), norm2(sub(c, b)));
    if (area2 > (1e-12 * longest) * (1e-12 * longest)) {
        V3 ap = sub(p, a);
        double beta = dot(cross(ap, ac), normal) / area2;
        double gamma = dot(cross(ab, ap), normal) / area2;
        double alpha = 1.0 - beta - gamma;
        if (alpha >= 0.0 && beta >= 0.0 && gamma >= 0.0) {
            w[0] = alpha;
            w[1] = beta;
            w[2] = gamma;
            point = add(add(a, scale(ab, beta)), scale(ac, gamma));
            interior = 1;
            return norm(sub(p, point));
        }
    }
    V3 corner[3] = {a, b, c};
    double best = 0.0;
    for (int e = 0; e < 3; ++e) {
        int i = e, j = (e + 1) % 3;
        double s, t;
        V3 on_p, on_q;
        double d = segment_closest(p, p, corner[i], corner[j], s, t, on_p, on_q);
        if (e == 0 || d < best) {
            best = d;
            w[0] = w[1] = w[2] = 0.0;
            w[i] = 1.0 - t;
            w[j] = t;
            point = on_q;
        }
    }
    return best;
}

// Vertex-face repulsion V(d0 - d) under `law` of vertex x[0] and triangle
// x[1]x[2]x[3] (collide/faces.rs face_repulsion), the pair oriented so the
// vertex's side is that of (b - a) x (c - a): in the interior region d is
// the signed distance along that unit normal and the push is along it;
// elsewhere d = |p - c_T| along (p - c_T)/d. Returns 0 when d >= d0;
// otherwise as segment_repulsion with w = [n, -alpha n, -beta n, -gamma n].
WEFT_HD int face_repulsion(const V3* x, double d0, double k, int law, double* energy,
                           double* grad, double* hdiag) {
    double bw[3];
    V3 point;
    int interior;
    double d = face_closest(x[0], x[1], x[2], x[3], bw, point, interior);
    V3 ab = sub(x[2], x[1]), ac = sub(x[3], x[1]);
    V3 normal = cross(ab, ac);
    double area = norm(normal);
    V3 n;
    if (interior && area > 0.0) {
        n = divs(normal, area);
        d = dot(n, sub(x[0], point));
    } else {
        // At round-off distance (collide/faces.rs ON_FACE) the vertex is on
        // an edge: the face's normal.
        double size = fmax(fmax(norm(ab), norm(ac)), norm(sub(x[3], x[2])));
        if (d > 1e-12 * size)
            n = divs(sub(x[0], point), d);
        else if (area > 0.0)
            n = divs(normal, area);
        else if (norm(ab) > 0.0)
            n = any_perpendicular(ab);
        else if (norm(ac) > 0.0)
            n = any_perpendicular(ac);
        else
            n = v3(0.0, 1.0, 0.0);
    }
    if (d >= d0) return 0;
    double cw[4] = {1.0, -bw[0], -bw[1], -bw[2]};
    repulsion_of_weights(cw, n, d, d0, k, law, energy, grad, hdiag);
    return 1;
}

}  // namespace weft
