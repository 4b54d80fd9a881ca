//! Stretch of one yarn segment [SBO17 eq. 12-13].
//!
//! Element coordinates (shape 8, node-major, DESIGN §4 order):
//! `q = [x_a (3), s_a, x_b (3), s_b]`, where `s` is the arc-length coordinate
//! of the segment's yarn at that node (`u` for warp yarns, `v` for weft yarns),
//! in m. Strain `ε = |w| - 1` with `w = Δx / Δu`, `Δx = x_b - x_a`,
//! `Δu = s_b - s_a > 0`; measure `Ω = Δu`; stiffness `k_s = E π R²` (N), the
//! axial rigidity `EA`. Energy `V = ½ k_s Δu (|Δx|/Δu - 1)²` (J).

use crate::element::{Measure, Strain};
use nalgebra::{Matrix3, SMatrix, SVector, Vector3};

/// Number of generalised coordinates of a stretch element.
pub const DOFS: usize = 8;

/// Sign of each node in `Δx = x_b - x_a`, `Δu = s_b - s_a`.
const SIGN: [f64; 2] = [-1.0, 1.0];

/// Stretch strain `ε = |Δx|/Δu - 1` with its Jacobian and Hessian w.r.t. `q`
/// (layout in the module docs) [SBO17 eq. 12].
///
/// Requires `Δu > 0` and `|Δx| > 0` (a zero-length chord has no direction);
/// the result is non-finite otherwise and the caller's step control rejects
/// it.
pub fn strain(q: &SVector<f64, DOFS>) -> Strain<1, DOFS> {
    let dx = Vector3::new(q[4] - q[0], q[5] - q[1], q[6] - q[2]);
    let du = q[7] - q[3];
    let r = dx.norm();
    let n = dx / r;
    let eps = r / du - 1.0;
    // Derivatives w.r.t. the reduced variables y = (Δx, Δu).
    let g_dx = n / du;
    let g_du = -r / (du * du);
    let h_dxdx = (Matrix3::identity() - n * n.transpose()) / (r * du);
    let h_dxdu = -n / (du * du);
    let h_dudu = 2.0 * r / (du * du * du);

    let mut jac = SMatrix::<f64, 1, DOFS>::zeros();
    let mut hes = SMatrix::<f64, DOFS, DOFS>::zeros();
    for a in 0..2 {
        let (oa, sa) = (4 * a, SIGN[a]);
        for i in 0..3 {
            jac[oa + i] = sa * g_dx[i];
        }
        jac[oa + 3] = sa * g_du;
        for b in 0..2 {
            let (ob, sab) = (4 * b, SIGN[a] * SIGN[b]);
            for i in 0..3 {
                for j in 0..3 {
                    hes[(oa + i, ob + j)] = sab * h_dxdx[(i, j)];
                }
                hes[(oa + i, ob + 3)] = sab * h_dxdu[i];
                hes[(ob + 3, oa + i)] = sab * h_dxdu[i];
            }
            hes[(oa + 3, ob + 3)] = sab * h_dudu;
        }
    }
    Strain {
        value: SVector::from([eps]),
        jacobian: jac,
        hessians: [hes],
    }
}

/// Measure `Ω = Δu = s_b - s_a` (m) with its gradient [SBO17 eq. 13].
pub fn measure(q: &SVector<f64, DOFS>) -> Measure<DOFS> {
    let mut gradient = SVector::zeros();
    gradient[3] = -1.0;
    gradient[7] = 1.0;
    Measure {
        value: q[7] - q[3],
        gradient,
    }
}

/// Closed-form stretch strain rate [SBO17 eq. 14]:
/// `ε̇ = (Δx̂ · Δẋ)/Δu - |Δx| Δu̇ / Δu²` (1/s), written independently of
/// [`strain`] so tests can check `∇ε q̇` against it.
pub fn strain_rate_closed_form(q: &SVector<f64, DOFS>, qdot: &SVector<f64, DOFS>) -> f64 {
    let dx = Vector3::new(q[4] - q[0], q[5] - q[1], q[6] - q[2]);
    let dxd = Vector3::new(qdot[4] - qdot[0], qdot[5] - qdot[1], qdot[6] - qdot[2]);
    let du = q[7] - q[3];
    let dud = qdot[7] - qdot[3];
    dx.normalize().dot(&dxd) / du - dx.norm() * dud / (du * du)
}
