//! Seam tie: a yarn end sewn to a point on the other side of a seam
//! (garment pipeline, DESIGN §8 `weft drape`).
//!
//! Element coordinates (shape 9): `q = [x_n (3), x_a (3), x_b (3)]`, the
//! yarn-end node `n` and two consecutive yarn ends `a`, `b` of the other
//! panel's edge. The tie pulls `x_n` to the interpolated point
//! `p = (1 - t) x_a + t x_b`, `t ∈ [0, 1]` fixed (normalised arc length
//! along the edge). Strain (vector, m) `ε = x_n - p`, measure `Ω = 1`, so
//! with stiffness `k` (N/m) the generic composition gives the spring
//! `V = ½ k |x_n - p|²` (J) and with `k_d` (N·s/m) the dissipation
//! `W = ½ k_d |ẋ_n - ṗ|²` ([SBO17 eq. 2, 6] with a linear strain). The strain
//! is linear in `q`, so its Hessians vanish, the elastic Hessian
//! `k JᵀJ` is PSD and the damping is good: a rigid translation of the
//! three nodes has `ε̇ = 0`.

use crate::element::{Measure, Strain};
use nalgebra::{SMatrix, SVector};

/// Number of generalised coordinates of a seam tie.
pub const DOFS: usize = 9;

/// The tie strain `ε = x_n - ((1 - t) x_a + t x_b)` (m, shape 3) with its
/// constant Jacobian `[I, -(1-t) I, -t I]` (3x9) and zero Hessians.
pub fn strain(q: &SVector<f64, DOFS>, t: f64) -> Strain<3, DOFS> {
    let w = [1.0, -(1.0 - t), -t];
    let mut jacobian = SMatrix::<f64, 3, DOFS>::zeros();
    let mut value = SVector::<f64, 3>::zeros();
    for (k, wk) in w.iter().enumerate() {
        for i in 0..3 {
            jacobian[(i, 3 * k + i)] = *wk;
            value[i] += wk * q[3 * k + i];
        }
    }
    Strain {
        value,
        jacobian,
        hessians: [SMatrix::zeros(); 3],
    }
}

/// The measure `Ω = 1` (the stiffness carries the units).
pub fn measure() -> Measure<DOFS> {
    Measure::constant(1.0)
}
