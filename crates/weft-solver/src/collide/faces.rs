//! Narrow phase of triangle-mesh self-collision: the closest point of a
//! triangle to a vertex, and their repulsion (DESIGN §6; the vertex–face
//! half of the vertex–face and edge–edge pairs of triangle-mesh cloth
//! contact, the edge–edge half being [`super::segments`]).
//!
//! Element coordinates (shape 12): `q = [p, a, b, c]`, the vertex `p` and
//! the triangle's corners `a, b, c` (m). Closest point `c_T = α a + β b +
//! γ c` with barycentric weights `α, β, γ ≥ 0`, `α + β + γ = 1`, distance
//! `d = |p - c_T|`.
//!
//! Repulsion `V(g)` of the gap `g = d0 - d` for `d < d0`, else 0 (J), under
//! a [`RepulsionLaw`] as for segment pairs: `½ k g²` (DESIGN §6) or the C²
//! `k g³ / (3 d0)` that triangle-mesh cloth uses (on a 9 x 9 sheet landing
//! on a held one, weft-shell's tests/implicit.rs, vertex–face pairs alone
//! took 3,819 Newton iterations over 325 steps with the quadratic law and
//! 885 over 154 with the cubic one).
//!
//! **Sides.** A pair is oriented: the vertex's side of the face is the side
//! of the right-hand normal `n̂ = (b - a) × (c - a) / |…|`
//! ([`super::SelfCollision::face_contacts`] orders the corners so at the
//! step's start). Where the closest point is the projection onto the
//! face's interior, `d` is the *signed* distance `n̂ · (p - a)` and the
//! push is along `n̂`: a vertex pressed onto the face, or through it, is
//! pushed back to its side with a force that grows on through `d = 0`
//! (`V` is C² there), where the unsigned distance's direction `(p -
//! c_T)/|p - c_T|` would flip and the force jump by `2 V'(d0)`, which no
//! step size smooths and Newton cannot converge across. Off the interior
//! (closest point on an edge or a corner) `d = |p - c_T|` is unsigned,
//! with `n = (p - c_T)/d`: a vertex may pass round a panel's free edge.
//! A vertex that has passed through the interior and then leaves it
//! sideways meets the unsigned law there, a jump the layer-crossing check
//! ([`crate::assembly::SelfContact::check_crossings`]) rejects steps before.
//!
//! With the weight vector `w = [n, -α n, -β n, -γ n]` (12):
//!
//! - gradient `∇V = -V'(g) w`, computed with `α, β, γ` held fixed: exact
//!   wherever the closest point is unique (Danskin's theorem, as for
//!   segments; in the interior the signed distance's gradient is the same
//!   expression, on either side of the face);
//! - Hessian, Gauss-Newton with the weights held fixed: `V''(g) w wᵀ`
//!   (12x12, symmetric PSD, rank 1); dropped: `-V'(g) ∇²d`.
//!
//! Degenerate cases: off the interior at `d ≤` [`ON_FACE`] times the
//! longest edge (the vertex on an edge) `n` is the triangle's unit normal,
//! so the force stays bounded; a triangle of (near-)zero area is treated as
//! its three edges (the closest point of the closest edge), unsigned.

use super::segments::{RepulsionLaw, closest_points};
use super::shapes::any_perpendicular;
use nalgebra::{SMatrix, SVector, Vector3};

/// Closest point of a triangle to a vertex.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FaceClosest {
    /// Barycentric weights `[α, β, γ]` of the corners `a, b, c`, each in
    /// `[0, 1]`, summing to 1.
    pub weights: [f64; 3],
    /// The closest point `c_T` on the triangle (m).
    pub point: Vector3<f64>,
    /// Distance `|p - c_T|` (m).
    pub distance: f64,
    /// Whether `c_T` is the orthogonal projection of `p` onto the plane of
    /// a non-degenerate triangle (the interior region, where
    /// [`face_repulsion`] uses the signed distance), not a point of an
    /// edge's closest-point search.
    pub interior: bool,
}

/// Relative area below which a triangle is treated as its edges:
/// `|(b - a) × (c - a)|` below this times its longest edge squared.
pub const DEGENERATE_AREA: f64 = 1e-12;

/// A vertex within this many times the face's longest edge of its closest
/// point is on the face: [`face_repulsion`] pushes it along the face's
/// normal (`p - c_T` is round-off there).
pub const ON_FACE: f64 = 1e-12;

/// The closest point of triangle `a b c` to `p`: the orthogonal projection
/// when it falls inside the triangle, otherwise the closest point of the
/// closest edge ([`closest_points`] with the vertex as a zero-length
/// segment). Degenerate triangles (see [`DEGENERATE_AREA`]) are their
/// edges.
pub fn closest_on_triangle(
    p: &Vector3<f64>,
    a: &Vector3<f64>,
    b: &Vector3<f64>,
    c: &Vector3<f64>,
) -> FaceClosest {
    let (ab, ac) = (b - a, c - a);
    let normal = ab.cross(&ac);
    let area2 = normal.norm_squared();
    let longest = ab
        .norm_squared()
        .max(ac.norm_squared())
        .max((c - b).norm_squared());
    if area2 > (DEGENERATE_AREA * longest).powi(2) {
        // Barycentric weights of the projection: signed sub-areas.
        let ap = p - a;
        let beta = ap.cross(&ac).dot(&normal) / area2;
        let gamma = ab.cross(&ap).dot(&normal) / area2;
        let alpha = 1.0 - beta - gamma;
        if alpha >= 0.0 && beta >= 0.0 && gamma >= 0.0 {
            let point = a + beta * ab + gamma * ac;
            return FaceClosest {
                weights: [alpha, beta, gamma],
                point,
                distance: (p - point).norm(),
                interior: true,
            };
        }
    }
    // The closest of the three edges (k, k+1).
    let corners = [a, b, c];
    (0..3)
        .map(|k| {
            let (i, j) = (k, (k + 1) % 3);
            let cp = closest_points(p, p, corners[i], corners[j]);
            let mut weights = [0.0; 3];
            weights[i] = 1.0 - cp.t;
            weights[j] = cp.t;
            FaceClosest {
                weights,
                point: cp.on_q,
                distance: cp.distance,
                interior: false,
            }
        })
        .min_by(|x, y| x.distance.total_cmp(&y.distance))
        .expect("three edges")
}

/// Energy, gradient and Gauss-Newton Hessian of one vertex–face pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FaceRepulsionEval {
    /// `V(d0 - d)` (J).
    pub energy: f64,
    /// `∇V` (N), layout `[p, a, b, c]`.
    pub gradient: SVector<f64, 12>,
    /// `V'' w wᵀ` (N/m), symmetric PSD, barycentric weights fixed.
    pub hessian: SMatrix<f64, 12, 12>,
    /// The closest point used.
    pub closest: FaceClosest,
}

fn corners(q: &SVector<f64, 12>) -> [Vector3<f64>; 4] {
    std::array::from_fn(|i| q.fixed_rows::<3>(3 * i).into_owned())
}

/// The triangle's right-hand unit normal `(b - a) × (c - a) / |…|`, or
/// `None` when it has no area.
fn unit_normal(a: &Vector3<f64>, b: &Vector3<f64>, c: &Vector3<f64>) -> Option<Vector3<f64>> {
    let normal = (b - a).cross(&(c - a));
    let len = normal.norm();
    (len > 0.0).then(|| normal / len)
}

/// The separation of a vertex from a triangle as the repulsion sees it
/// ([`face_separation`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FaceSeparation {
    /// Distance `d` (m): signed along the right-hand unit normal where the
    /// closest point is the projection onto the face's interior (negative
    /// once the vertex has passed through), `|p - c_T|` elsewhere.
    pub distance: f64,
    /// Unit direction `n` that increases `d` when the vertex moves along it
    /// (the face's corners move along `-α n, -β n, -γ n`).
    pub direction: Vector3<f64>,
    /// The closest point and its barycentric weights.
    pub closest: FaceClosest,
}

/// The separation of vertex `p` from the triangle `a b c` of an oriented
/// vertex–face pair (module docs: the vertex's side is that of `(b - a) ×
/// (c - a)`): the distance and direction of [`face_repulsion`], which
/// weft-shell's strain-based dynamics also projects on (`C = d - δ ≥ 0`).
/// Positions in m.
pub fn face_separation(
    p: &Vector3<f64>,
    a: &Vector3<f64>,
    b: &Vector3<f64>,
    c: &Vector3<f64>,
) -> FaceSeparation {
    let cl = closest_on_triangle(p, a, b, c);
    if cl.interior
        && let Some(normal) = unit_normal(a, b, c)
    {
        return FaceSeparation {
            distance: normal.dot(&(p - cl.point)),
            direction: normal,
            closest: cl,
        };
    }
    // A distance at round-off level of the face's size has no direction:
    // the vertex is on an edge.
    let size = (b - a).norm().max((c - a).norm()).max((c - b).norm());
    let direction = if cl.distance > ON_FACE * size {
        (p - cl.point) / cl.distance
    } else if let Some(normal) = unit_normal(a, b, c) {
        normal
    } else if (b - a).norm() > 0.0 {
        any_perpendicular(&(b - a))
    } else if (c - a).norm() > 0.0 {
        any_perpendicular(&(c - a))
    } else {
        Vector3::y()
    };
    FaceSeparation {
        distance: cl.distance,
        direction,
        closest: cl,
    }
}

fn face_gap(q: &SVector<f64, 12>) -> FaceSeparation {
    let [p, a, b, c] = corners(q);
    face_separation(&p, &a, &b, &c)
}

/// Whether the vertex `p` is on the side of triangle `a b c`'s right-hand
/// normal `(b - a) × (c - a)` (or on its plane): the orientation
/// [`super::SelfCollision::face_contacts`] gives a pair, swapping `b` and
/// `c` when not.
pub fn on_normal_side(
    p: &Vector3<f64>,
    a: &Vector3<f64>,
    b: &Vector3<f64>,
    c: &Vector3<f64>,
) -> bool {
    (b - a).cross(&(c - a)).dot(&(p - a)) >= 0.0
}

/// Repulsion energy of the oriented pair `q = [p, a, b, c]` under `law`:
/// `V(d0 - d)` for `d < d0` (`d` signed in the interior region, module
/// docs), else 0 (J).
pub fn face_repulsion_energy(
    q: &SVector<f64, 12>,
    d0: f64,
    stiffness: f64,
    law: RepulsionLaw,
) -> f64 {
    let d = face_gap(q).distance;
    if d < d0 {
        law.eval(d0 - d, d0, stiffness).0
    } else {
        0.0
    }
}

/// Self-collision repulsion \[DESIGN §6\] of vertex `p` and triangle
/// `a b c` with `q = [p, a, b, c]` (m; oriented, the vertex's side being
/// that of `(b - a) × (c - a)`), interaction distance `d0` (m), stiffness
/// `k` (N/m) and `law`: `None` when `d ≥ d0`. See the module docs for the
/// signed distance, the formulas and what the Hessian drops.
pub fn face_repulsion(
    q: &SVector<f64, 12>,
    d0: f64,
    stiffness: f64,
    law: RepulsionLaw,
) -> Option<FaceRepulsionEval> {
    let FaceSeparation {
        distance: d,
        direction: n,
        closest: cl,
    } = face_gap(q);
    if d >= d0 {
        return None;
    }
    let mut w = SVector::<f64, 12>::zeros();
    let [al, be, ga] = cl.weights;
    for (i, s) in [1.0, -al, -be, -ga].into_iter().enumerate() {
        w.fixed_rows_mut::<3>(3 * i).copy_from(&(s * n));
    }
    let (energy, force, curvature) = law.eval(d0 - d, d0, stiffness);
    Some(FaceRepulsionEval {
        energy,
        gradient: -force * w,
        hessian: curvature * w * w.transpose(),
        closest: cl,
    })
}

/// Where the segment `p q` meets the triangle `t` (m; Möller–Trumbore,
/// closed: touching an edge or ending on the face counts), or `None`; also
/// `None` for a segment parallel to the triangle's plane and for a
/// degenerate triangle. The narrow phase of a layer passing through
/// another ([`super::SelfCollision::crossings`] and weft-garment's layer
/// measure).
pub fn segment_triangle_intersection(
    p: &Vector3<f64>,
    q: &Vector3<f64>,
    t: [&Vector3<f64>; 3],
) -> Option<Vector3<f64>> {
    let d = q - p;
    let (e1, e2) = (t[1] - t[0], t[2] - t[0]);
    let pv = d.cross(&e2);
    let det = e1.dot(&pv);
    if det.abs() <= 1e-14 * d.norm() * e1.norm() * e2.norm() {
        return None; // parallel to the triangle's plane
    }
    let s = p - t[0];
    let bu = s.dot(&pv) / det;
    if !(0.0..=1.0).contains(&bu) {
        return None;
    }
    let qv = s.cross(&e1);
    let bv = d.dot(&qv) / det;
    if bv < 0.0 || bu + bv > 1.0 {
        return None;
    }
    let tt = e2.dot(&qv) / det;
    (0.0..=1.0).contains(&tt).then(|| p + d * tt)
}
