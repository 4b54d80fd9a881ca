//! Stretch of one yarn segment [SBO17 eq. 12-13].
//!
//! Element coordinates (shape 8, node-major, DESIGN §4 order):
//! `q = [x_a (3), s_a, x_b (3), s_b]`, where `s` is the arc-length coordinate
//! of the segment's yarn at that node (`u` for warp yarns, `v` for weft yarns),
//! in m. Strain `ε = |w| - 1` with `w = Δx / Δu`, `Δx = x_b - x_a`,
//! `Δu = s_b - s_a > 0`; measure `Ω = Δu`; stiffness `k_s = E π R²` (N), the
//! axial rigidity `EA`. Energy `V = ½ k_s Δu (|Δx|/Δu - 1)²` (J).

use crate::element::{
    Dissipation, ElementEval, Hessian, Measure, Strain, dissipation_with_clamp, elastic_projected,
};
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

/// Scatters a symmetric 4x4 matrix over the reduced variables `y = (Δx, Δu)`
/// to the 8 element coordinates: block `(a, b)` is `σ_a σ_b H_y` with
/// `σ = (-1, +1)` for nodes (a, b).
fn scatter_reduced(h_y: &SMatrix<f64, 4, 4>) -> SMatrix<f64, DOFS, DOFS> {
    let mut h = SMatrix::<f64, DOFS, DOFS>::zeros();
    for a in 0..2 {
        for b in 0..2 {
            let sab = SIGN[a] * SIGN[b];
            for i in 0..4 {
                for j in 0..4 {
                    h[(4 * a + i, 4 * b + j)] = sab * h_y[(i, j)];
                }
            }
        }
    }
    h
}

/// The stress-weighted strain Hessian `w ∇²ε` of a stretch element
/// projected to PSD in closed form [SBO18 §3.4], `w` a strain or strain-rate
/// weight (dimensionless or 1/s). In the reduced variables `(Δx, Δu)` the
/// Hessian splits into the two chord-normal directions (eigenvalue
/// `w/(|Δx| Δu)`) and a 2x2 block on (chord direction, `Δu`),
/// `w [[0, -1/Δu²], [-1/Δu², 2|Δx|/Δu³]]`, which always has one eigenvalue
/// of each sign. The reduced map has orthogonal rows of equal norm, so
/// clamping there equals clamping the full 8x8 matrix. Shape 8x8, 1/m²
/// times the unit of `w`.
pub fn clamped_strain_hessian(q: &SVector<f64, DOFS>, w: f64) -> SMatrix<f64, DOFS, DOFS> {
    let dx = Vector3::new(q[4] - q[0], q[5] - q[1], q[6] - q[2]);
    let du = q[7] - q[3];
    let r = dx.norm();
    let n = dx / r;
    let mut h_y = SMatrix::<f64, 4, 4>::zeros();
    let perp = w / (r * du);
    if perp > 0.0 {
        h_y.fixed_view_mut::<3, 3>(0, 0)
            .copy_from(&((Matrix3::identity() - n * n.transpose()) * perp));
    }
    // [[0, b], [b, c]] has eigenvalues c/2 ± sqrt(c²/4 + b²), eigenvector (b, μ).
    let (b, c) = (-1.0 / (du * du), 2.0 * r / (du * du * du));
    let root = (0.25 * c * c + b * b).sqrt();
    let mu = if w > 0.0 {
        0.5 * c + root
    } else {
        0.5 * c - root
    };
    let lambda = w * mu; // the positive eigenvalue of w·block
    if lambda > 0.0 {
        let norm = (b * b + mu * mu).sqrt();
        let (v0, v1) = (b / norm, mu / norm);
        let v = nalgebra::Vector4::new(v0 * n.x, v0 * n.y, v0 * n.z, v1);
        h_y += v * v.transpose() * lambda;
    }
    scatter_reduced(&h_y)
}

/// Strain-rate dissipation of a stretch element [SBO17 eq. 6-11] with the
/// closed-form clamp of the stress-weighted strain Hessian `ε̇ ∇²ε`
/// ([`clamped_strain_hessian`], [SBO18 §3.4]). `k_d` in N·s, `qdot` in m/s
/// (layout in the module docs).
pub fn dissipation(
    k_d: f64,
    q: &SVector<f64, DOFS>,
    qdot: &SVector<f64, DOFS>,
) -> Dissipation<1, DOFS> {
    dissipation_with_jacobian(k_d, q, qdot, true)
}

/// As [`dissipation`]; with `position_jacobian` false its position
/// Jacobian is zero ([`dissipation_with_clamp`]).
pub fn dissipation_with_jacobian(
    k_d: f64,
    q: &SVector<f64, DOFS>,
    qdot: &SVector<f64, DOFS>,
    position_jacobian: bool,
) -> Dissipation<1, DOFS> {
    let s = strain(q);
    let m = measure(q);
    dissipation_with_clamp(k_d, &s, &m, qdot, position_jacobian, |rate| {
        clamped_strain_hessian(q, rate[0])
    })
}

/// Strain-rate dissipation of a stretch element over one backward-Euler
/// step, the form the assembler uses [SBO17 eq. 6-11, 14; DESIGN §3]: the
/// strain rate is the step's strain increment
/// `ε̇ = (ε(q) − ε(q_start)) / h` and the measure the start's,
/// `Ω = Δu(q_start)`, where `q = q_start + h q̇` is the end of the step.
///
/// Both agree with [`dissipation`] at the end of the step to first order in
/// `h`, and the dissipation is the same potential `W = ½ Ω k_d ε̇²`; what
/// differs is the Newton matrix. The backward-Euler residual term
/// `-h f_d = h Ω k_d ∇ε(q)ᵀ ε̇` is here the gradient in `q̇` of `h W`, so its
/// Jacobian `h Ω k_d (∇εᵀ∇ε + h ε̇ ∇²ε)` is symmetric and
/// [`Dissipation::velocity_jacobian`] and
/// [`Dissipation::position_jacobian`] give it exactly
/// (`-h velocity_jacobian - h² position_jacobian`). The rate form
/// `ε̇ = ∇ε(q) q̇` also has the non-symmetric term `∇εᵀ (∇²ε q̇)ᵀ` (the
/// damping force turning with a rotating segment), which a symmetric
/// matrix must drop; for the stiff stretch damping of garment fabrics it
/// outweighs the mass, and Newton's direction then fails to lower the
/// residual (BENCHMARKS.md 2026-11-29). The increment is also exactly zero
/// for any rigid motion of the segment over the step, a finite rotation
/// included.
///
/// `k_d` in N·s; `q`, `q_start` in m (layout in the module docs, both
/// with `Δu > 0`, `|Δx| > 0`); `h ≥ 0` in s; `qdot` (m/s) is used only at
/// `h = 0` (a state's own dissipation, `q = q_start`), where the rate is
/// the increment's limit `∇ε(q) q̇`. `hessian` picks the position
/// Jacobian `-Ω k_d ε̇ ∇²ε`: exact ([`Hessian::Exact`], indefinite when
/// `ε̇ ≠ 0`), with the stress-weighted strain Hessian clamped in closed
/// form ([`Hessian::Projected`], [`clamped_strain_hessian`],
/// [SBO18 §3.4]) or zero ([`Hessian::Skip`]).
pub fn dissipation_over_step(
    k_d: f64,
    q: &SVector<f64, DOFS>,
    q_start: &SVector<f64, DOFS>,
    qdot: &SVector<f64, DOFS>,
    h: f64,
    hessian: Hessian,
) -> Dissipation<1, DOFS> {
    let s = strain(q);
    let c = (q_start[7] - q_start[3]) * k_d;
    let rate = if h > 0.0 {
        (s.value[0] - strain_value(q_start)) / h
    } else {
        (s.jacobian * qdot)[0]
    };
    let g = s.jacobian.transpose();
    let position_jacobian = match hessian {
        Hessian::Exact => s.hessians[0] * (-c * rate),
        Hessian::Projected => clamped_strain_hessian(q, rate) * (-c),
        Hessian::Skip => SMatrix::zeros(),
    };
    Dissipation {
        strain_rate: SVector::from([rate]),
        potential: 0.5 * c * rate * rate,
        force: g * (-c * rate),
        velocity_jacobian: g * g.transpose() * (-c),
        position_jacobian,
    }
}

/// The stretch strain `ε = |Δx|/Δu - 1` alone (dimensionless; layout in
/// the module docs), the value of [`strain`] without its derivatives.
pub fn strain_value(q: &SVector<f64, DOFS>) -> f64 {
    let dx = Vector3::new(q[4] - q[0], q[5] - q[1], q[6] - q[2]);
    dx.norm() / (q[7] - q[3]) - 1.0
}

/// Stretch energy `V = ½ k_s Δu ε²` (J) and gradient (N, shape 8) with the
/// PSD Hessian approximation of [`elastic_projected`] (N/m, 8x8), using the
/// closed-form clamp [`clamped_strain_hessian`]. This is what the system
/// matrix uses; [`crate::elastic`] on [`strain`] gives the exact Hessian.
/// `k_s` in N.
pub fn energy_projected(k_s: f64, q: &SVector<f64, DOFS>) -> ElementEval<DOFS> {
    elastic_projected(k_s, &strain(q), &measure(q), |eps| {
        clamped_strain_hessian(q, eps[0])
    })
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
