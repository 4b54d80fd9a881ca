//! Penalty contact of a node against a collider, and smoothed Coulomb
//! friction (DESIGN §6).
//!
//! **Penalty.** With `g = r + δ - φ(x)` (m; `r` the yarn radius, `δ` the
//! margin, `φ` the collider's signed distance), the per-node energy is
//! `V = ½ k g²` for `g > 0`, else 0 (J; `k` in N/m). Gradient
//! `∇V = -k g n` with `n = ∇φ` the unit outward normal; the force
//! `-∇V = k g n` pushes the node out along the normal with magnitude
//! `F_n = k g`. The exact Hessian is `k n nᵀ - k g ∇²φ`. We keep only the
//! Gauss-Newton part `k n nᵀ` (symmetric, PSD, rank 1) and **drop the
//! curvature term** `-k g ∇²φ`: for a convex collider `∇²φ` is PSD so the
//! term is negative semi-definite (it would make the system matrix
//! indefinite for deep contacts), it is exactly zero for planes and flat
//! mesh faces, and it vanishes as `g → 0`. `V` is `C¹` at `g = 0`; its
//! stiffness jumps from 0 to `k`.
//!
//! **Friction.** With `v_rel = ẋ - v_c(x, t)` (node velocity minus the
//! collider's velocity at the node) and its tangential part
//! `v_t = (I - n nᵀ) v_rel`, the smoothed Coulomb force is
//! `f = -μ F_n v_t / s`, `s = sqrt(|v_t|² + ε_v²)`: magnitude `μ F_n` for
//! `|v_t| ≫ ε_v` (kinetic Coulomb friction), linear viscous
//! `-μ F_n v_t / ε_v` for `|v_t| ≪ ε_v` (sticking is approximated by
//! creeping at a speed of order `ε_v` times the ratio of tangential load to
//! `μ F_n`). Its Jacobian with respect to the node velocity, at fixed
//! position, is `∂f/∂ẋ = -D` with
//! `D = μ F_n (P / s - v_t v_tᵀ / s³)`, `P = I - n nᵀ`: symmetric and
//! positive semi-definite (for any `w`, `wᵀ D w ≥ μ F_n |P w|² ε_v² / s³`),
//! so the implicit solver can add `h D` to its matrix like a damping term.
//!
//! **The lagged normal force.** Within a time step the assembler
//! (`Collider::plane_contact_from`, `Collider::node_contact_from`) takes
//! `F_n` and the normal at the point's position at the step's start,
//! `F_n = k max(0, r + δ - φ(x_n))`, not at the Newton iterate, wherever the
//! collider's surface is at rest at the point, as incremental-potential
//! contact does with its lagged contact forces [Li et al., *Incremental
//! Potential Contact*, ACM TOG 39(4), 2020, §5]. Taken at the iterate,
//! `F_n(x)` makes the force depend on the position with a non-symmetric
//! derivative `μ k (v_t / s) nᵀ`, as large as half the penalty stiffness at
//! `μ = 0.5`, which the matrix leaves out: Newton then converged linearly on
//! garments lying on a body (BENCHMARKS.md, 2026-12-07). Lagged, and with
//! the tangent planes fixed over the step, the friction depends on the
//! velocity alone and `h D` is its exact Jacobian. It then acts on the
//! points in contact at the step's start, whether or not they are at the
//! iterate (else it would jump where a point crosses the contact offset); a
//! point that reaches the body during a step feels friction from the next
//! step on, and a point at rest on the body has the same `F_n` either way.
//! On a moving surface (`v_c ≠ 0` at the point) `F_n` and `n` stay at the
//! iterate and their position derivatives are dropped, as before: lagged
//! there, the A-line skirt on the walking mannequin took 4-8x the kinetic
//! energy while walking (not understood yet; BENCHMARKS.md, 2026-12-07).

use nalgebra::{Matrix3, Vector3};

/// Default regularisation speed `ε_v` of the smoothed friction (m/s): below
/// about 1 mm/s of tangential slip, friction acts as a viscous drag.
pub const DEFAULT_FRICTION_SPEED: f64 = 1e-3;

/// Penalty energy, gradient and Gauss-Newton Hessian of one node in contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PenaltyEval {
    /// `V = ½ k g²` (J).
    pub energy: f64,
    /// `∇_x V = -k g n` (N); the force on the node is its negative.
    pub gradient: Vector3<f64>,
    /// `k n nᵀ` (N/m), symmetric PSD (curvature term dropped).
    pub hessian: Matrix3<f64>,
    /// Normal force magnitude `F_n = k g ≥ 0` (N), for friction.
    pub normal_force: f64,
    /// Penetration `g = r + δ - φ > 0` (m).
    pub gap: f64,
}

/// Penalty energy `½ k (offset - φ)²` for `φ < offset`, else 0 (J).
/// `offset = r + δ` (m), `stiffness` `k` (N/m).
pub fn penalty_energy(phi: f64, offset: f64, stiffness: f64) -> f64 {
    let g = offset - phi;
    if g > 0.0 {
        0.5 * stiffness * g * g
    } else {
        0.0
    }
}

/// Penalty contact \[DESIGN §6\]: `None` when `φ ≥ offset` (no contact),
/// else energy, gradient and PSD Hessian. `phi` (m) and unit `normal` are the
/// collider's signed distance and gradient at the node, `offset = r + δ`
/// (m), `stiffness` `k` (N/m).
pub fn penalty(
    phi: f64,
    normal: &Vector3<f64>,
    offset: f64,
    stiffness: f64,
) -> Option<PenaltyEval> {
    let g = offset - phi;
    if g <= 0.0 {
        return None;
    }
    Some(PenaltyEval {
        energy: 0.5 * stiffness * g * g,
        gradient: -stiffness * g * normal,
        hessian: stiffness * normal * normal.transpose(),
        normal_force: stiffness * g,
        gap: g,
    })
}

/// Smoothed Coulomb friction force and its damping matrix.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrictionEval {
    /// `f = -μ F_n v_t / sqrt(|v_t|² + ε_v²)` (N).
    pub force: Vector3<f64>,
    /// `D = -∂f/∂ẋ = μ F_n (P/s - v_t v_tᵀ/s³)` (N s/m), symmetric PSD.
    pub damping: Matrix3<f64>,
    /// Tangential relative velocity `v_t` (m/s).
    pub slip_velocity: Vector3<f64>,
}

/// Smoothed Coulomb friction \[DESIGN §6\] for a node pressed with
/// `normal_force` `F_n ≥ 0` (N) against a surface with unit `normal`, moving
/// with `relative_velocity` `v_rel = ẋ - v_c` (m/s) with respect to it;
/// coefficient `mu` `μ ≥ 0`, regularisation speed `eps_v > 0` (m/s).
pub fn friction(
    normal_force: f64,
    normal: &Vector3<f64>,
    relative_velocity: &Vector3<f64>,
    mu: f64,
    eps_v: f64,
) -> FrictionEval {
    let p = Matrix3::identity() - normal * normal.transpose();
    let vt = p * relative_velocity;
    let s = (vt.norm_squared() + eps_v * eps_v).sqrt();
    let c = mu * normal_force;
    FrictionEval {
        force: -c / s * vt,
        damping: c * (p / s - vt * vt.transpose() / (s * s * s)),
        slip_velocity: vt,
    }
}
