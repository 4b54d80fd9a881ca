//! Gravity of one yarn segment \[CLMMO14\], with the Eulerian terms.
//!
//! Element coordinates (shape [`DOFS`] = 8, the stretch layout, DESIGN §4):
//! `q = [x_a (3), s_a, x_b (3), s_b]` (m), `s` the arc-length coordinate of the
//! segment's yarn (`u` warp, `v` weft).
//!
//! The segment carries the mass `ρ_l Δu` of rest yarn, `Δu = s_b - s_a`,
//! `ρ_l = ρ π R²` (kg/m, [`linear_density`]), distributed uniformly along the
//! chord, so its potential energy is
//!
//! `V = -ρ_l Δu g·(x_a + x_b)/2` (J),
//!
//! where **`g` is the gravitational acceleration vector** (m/s², e.g.
//! `[0, -9.81, 0]`, the scene file's `gravity`). DESIGN §2 writes
//! `V = ρ_l Δu g·(x_a + x_b)/2`; with `g` the acceleration vector that has the
//! wrong sign (the energy must rise with height, i.e. against `g`), hence the
//! minus sign here. The force on the positions is `ρ_l Δu g / 2` per node
//! (total `ρ_l Δu g`), and the Eulerian force on `s_b` (`-s_a`) is
//! `ρ_l g·(x_a + x_b)/2`: lengthening the segment in rest length adds mass at
//! its mean height.

use crate::element::ElementEval;
use nalgebra::{SMatrix, SVector, Vector3};

/// Number of generalised coordinates of a gravity element.
pub const DOFS: usize = 8;

/// Linear density `ρ_l = ρ π R²` (kg/m) of a yarn of density `ρ` (kg/m³)
/// and radius `R` (m).
pub fn linear_density(density: f64, radius: f64) -> f64 {
    density * std::f64::consts::PI * radius * radius
}

/// Gravity potential `V = -ρ_l Δu g·(x_a + x_b)/2` (J) of a segment with its
/// exact gradient (N, shape 8) and Hessian (N/m, 8x8) \[CLMMO14\]. `rho_l` in
/// kg/m, `g` the acceleration vector in m/s² (module docs for the sign).
///
/// Gradient: `∂V/∂x_a = ∂V/∂x_b = -ρ_l Δu g/2`,
/// `∂V/∂s_b = -∂V/∂s_a = -ρ_l g·(x_a + x_b)/2`.
/// Hessian: only the constant cross terms
/// `∂²V/∂x_a∂s_b = ∂²V/∂x_b∂s_b = -ρ_l g/2`,
/// `∂²V/∂x_a∂s_a = ∂²V/∂x_b∂s_a = +ρ_l g/2` (and their transposes).
pub fn potential(q: &SVector<f64, DOFS>, rho_l: f64, g: &Vector3<f64>) -> ElementEval<DOFS> {
    let xa = Vector3::new(q[0], q[1], q[2]);
    let xb = Vector3::new(q[4], q[5], q[6]);
    let du = q[7] - q[3];
    let height = g.dot(&(xa + xb)) * 0.5; // g·x̄, m²/s²
    let energy = -rho_l * du * height;
    let mut gradient = SVector::<f64, DOFS>::zeros();
    let mut hessian = SMatrix::<f64, DOFS, DOFS>::zeros();
    let gx = g * (-0.5 * rho_l * du);
    let hx = g * (-0.5 * rho_l); // ∂²V/∂x ∂s_b
    for node in 0..2 {
        let o = 4 * node;
        for i in 0..3 {
            gradient[o + i] = gx[i];
            hessian[(o + i, 7)] = hx[i];
            hessian[(7, o + i)] = hx[i];
            hessian[(o + i, 3)] = -hx[i];
            hessian[(3, o + i)] = -hx[i];
        }
    }
    gradient[7] = -rho_l * height;
    gradient[3] = rho_l * height;
    ElementEval {
        energy,
        gradient,
        hessian,
    }
}
