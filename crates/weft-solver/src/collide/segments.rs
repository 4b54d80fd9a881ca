//! Narrow phase of yarn self-collision: closest points of two segments and
//! their repulsion (DESIGN §6; \[SBO18 §6\] uses repulsive forces).
//!
//! Element coordinates (shape 12): `q = [p0, p1, q0, q1]`, the end points
//! (m) of segment P and segment Q. Closest points `c_P = (1-s) p0 + s p1`,
//! `c_Q = (1-t) q0 + t q1` with `s, t ∈ [0, 1]`, distance `d = |c_P - c_Q|`.
//!
//! Repulsion `V = ½ k (d0 - d)²` for `d < d0`, else 0 (J), `k` in N/m,
//! `d0 = 2R + margin` (m). With `n = (c_P - c_Q)/d` and the weight vector
//! `w = [(1-s) n, s n, -(1-t) n, -t n]` (12):
//!
//! - gradient `∇V = -k (d0 - d) w`. It is computed with `s, t` held fixed,
//!   which is the exact gradient wherever the closest points are unique
//!   (Danskin's theorem: `s, t` minimise the distance, so their own
//!   variation does not change `d` to first order);
//! - Hessian, Gauss-Newton with `s, t` held fixed: `k w wᵀ` (12x12,
//!   symmetric PSD, rank 1). Dropped: `-k (d0 - d) ∇²d`, which is
//!   indefinite, vanishes as `d → d0`, and includes the variation of `s, t`.
//!
//! Degenerate cases: at `d = 0` (segments intersecting) `n` is the unit
//! normal of the two directions `(p1 - p0) × (q1 - q0)` (or any unit vector
//! perpendicular to P when they are parallel), so the force stays bounded,
//! `|∇V| ≤ k d0 |w|`. For (near-)parallel segments the closest points are not
//! unique; the middle of the overlap of the two segments' projections is
//! used, which spreads the force evenly on the end points.

use super::shapes::any_perpendicular;
use nalgebra::{SMatrix, SVector, Vector3};

/// Closest points of two segments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClosestPoints {
    /// Parameter on P, `c_P = (1-s) p0 + s p1`, `s ∈ [0, 1]`.
    pub s: f64,
    /// Parameter on Q, `c_Q = (1-t) q0 + t q1`, `t ∈ [0, 1]`.
    pub t: f64,
    /// Closest point on P (m).
    pub on_p: Vector3<f64>,
    /// Closest point on Q (m).
    pub on_q: Vector3<f64>,
    /// Distance `|c_P - c_Q|` (m).
    pub distance: f64,
}

/// Closest points between segments `p0 p1` and `q0 q1` (after Ericson,
/// *Real-Time Collision Detection* §5.1.9), robust for zero-length and
/// parallel segments (parallel: the middle of the overlap, see the module
/// docs).
pub fn closest_points(
    p0: &Vector3<f64>,
    p1: &Vector3<f64>,
    q0: &Vector3<f64>,
    q1: &Vector3<f64>,
) -> ClosestPoints {
    let d1 = p1 - p0;
    let d2 = q1 - q0;
    let r = p0 - q0;
    let a = d1.norm_squared();
    let e = d2.norm_squared();
    let f = d2.dot(&r);
    let tiny = f64::MIN_POSITIVE;
    let (s, t) = if a <= tiny && e <= tiny {
        (0.0, 0.0)
    } else if a <= tiny {
        (0.0, (f / e).clamp(0.0, 1.0))
    } else {
        let c = d1.dot(&r);
        if e <= tiny {
            ((-c / a).clamp(0.0, 1.0), 0.0)
        } else {
            let b = d1.dot(&d2);
            let denom = a * e - b * b;
            let s = if denom > 1e-12 * a * e {
                ((b * f - c * e) / denom).clamp(0.0, 1.0)
            } else {
                // Parallel: middle of the overlap of Q's projection on P.
                let (sa, sb) = (-c / a, (b - c) / a);
                let lo = sa.min(sb).max(0.0);
                let hi = sa.max(sb).min(1.0);
                if lo <= hi { 0.5 * (lo + hi) } else { 0.0 }
            };
            let t = (b * s + f) / e;
            if t < 0.0 {
                ((-c / a).clamp(0.0, 1.0), 0.0)
            } else if t > 1.0 {
                (((b - c) / a).clamp(0.0, 1.0), 1.0)
            } else {
                (s, t)
            }
        }
    };
    let on_p = p0 + s * d1;
    let on_q = q0 + t * d2;
    ClosestPoints {
        s,
        t,
        on_p,
        on_q,
        distance: (on_p - on_q).norm(),
    }
}

/// The repulsion law `V(g)` of a self-contact pair as a function of the gap
/// `g = d0 - d ∈ (0, d0]` (`d` the closest distance, `d0` the interaction
/// distance, `k` the stiffness in N/m); `V = 0` for `d ≥ d0`. Both laws
/// reach the force `k d0` at contact.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RepulsionLaw {
    /// `V = ½ k g²` \[DESIGN §6\]: force `k g`, stiffness `k`, which jumps
    /// from 0 to `k` at `d0`.
    #[default]
    Quadratic,
    /// `V = k g³ / (3 d0)`: force `k g² / d0`, stiffness `2 k g / d0`, both
    /// vanishing at `d0` (C² across it). With the quadratic law's stiffness
    /// jump, a sheet resting on another sits at the kink and Newton
    /// switches contacts on and off at every iteration (weft-shell's
    /// tests/implicit.rs: a 9 x 9 sheet landing on a held one took 4,151
    /// Newton iterations over 389 steps; see the triangle-mesh drape).
    Cubic,
}

impl RepulsionLaw {
    /// `(V, dV/dg, d²V/dg²)` at gap `gap` (m) for interaction distance `d0`
    /// (m) and stiffness `k` (N/m): J, N, N/m.
    pub fn eval(self, gap: f64, d0: f64, k: f64) -> (f64, f64, f64) {
        match self {
            RepulsionLaw::Quadratic => (0.5 * k * gap * gap, k * gap, k),
            RepulsionLaw::Cubic => (
                k * gap.powi(3) / (3.0 * d0),
                k * gap * gap / d0,
                2.0 * k * gap / d0,
            ),
        }
    }
}

/// Energy, gradient and Gauss-Newton Hessian of one segment pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RepulsionEval {
    /// `V = ½ k (d0 - d)²` (J).
    pub energy: f64,
    /// `∇V` (N), layout `[p0, p1, q0, q1]`.
    pub gradient: SVector<f64, 12>,
    /// `k w wᵀ` (N/m), symmetric PSD, `s, t` fixed.
    pub hessian: SMatrix<f64, 12, 12>,
    /// The closest points used.
    pub closest: ClosestPoints,
}

fn ends(q: &SVector<f64, 12>) -> [Vector3<f64>; 4] {
    std::array::from_fn(|i| q.fixed_rows::<3>(3 * i).into_owned())
}

/// Repulsion energy of the pair `q = [p0, p1, q0, q1]`: `½ k (d0 - d)²` for
/// `d < d0`, else 0 (J).
pub fn repulsion_energy(q: &SVector<f64, 12>, d0: f64, stiffness: f64) -> f64 {
    repulsion_energy_with(q, d0, stiffness, RepulsionLaw::Quadratic)
}

/// [`repulsion_energy`] under `law`.
pub fn repulsion_energy_with(
    q: &SVector<f64, 12>,
    d0: f64,
    stiffness: f64,
    law: RepulsionLaw,
) -> f64 {
    let [p0, p1, q0, q1] = ends(q);
    let d = closest_points(&p0, &p1, &q0, &q1).distance;
    if d < d0 {
        law.eval(d0 - d, d0, stiffness).0
    } else {
        0.0
    }
}

/// Self-collision repulsion \[DESIGN §6, SBO18 §6\] of segments P and Q with
/// `q = [p0, p1, q0, q1]` (m), interaction distance `d0` (m) and stiffness
/// `k` (N/m): `None` when `d ≥ d0`. See the module docs for the formulas and
/// what the Hessian drops.
pub fn repulsion(q: &SVector<f64, 12>, d0: f64, stiffness: f64) -> Option<RepulsionEval> {
    repulsion_with(q, d0, stiffness, RepulsionLaw::Quadratic)
}

/// [`repulsion`] under `law`: gradient `-V'(g) w`, Gauss-Newton Hessian
/// `V''(g) w wᵀ` with `g = d0 - d`.
pub fn repulsion_with(
    q: &SVector<f64, 12>,
    d0: f64,
    stiffness: f64,
    law: RepulsionLaw,
) -> Option<RepulsionEval> {
    let [p0, p1, q0, q1] = ends(q);
    let cp = closest_points(&p0, &p1, &q0, &q1);
    if cp.distance >= d0 {
        return None;
    }
    let diff = cp.on_p - cp.on_q;
    let n = if cp.distance > 0.0 {
        diff / cp.distance
    } else {
        let c = (p1 - p0).cross(&(q1 - q0));
        if c.norm() > 0.0 {
            c.normalize()
        } else if (p1 - p0).norm() > 0.0 {
            any_perpendicular(&(p1 - p0))
        } else if (q1 - q0).norm() > 0.0 {
            any_perpendicular(&(q1 - q0))
        } else {
            Vector3::y()
        }
    };
    let mut w = SVector::<f64, 12>::zeros();
    for (i, c) in [1.0 - cp.s, cp.s, -(1.0 - cp.t), -cp.t]
        .into_iter()
        .enumerate()
    {
        w.fixed_rows_mut::<3>(3 * i).copy_from(&(c * n));
    }
    let (energy, force, curvature) = law.eval(d0 - cp.distance, d0, stiffness);
    Some(RepulsionEval {
        energy,
        gradient: -force * w,
        hessian: curvature * w * w.transpose(),
        closest: cp,
    })
}
