//! Parallel-yarn contact, one per segment, one-sided \[CLMMO14\].
//!
//! Two consecutive crossings on one yarn are crossings with two adjacent
//! parallel yarns of the other family; their arc-length distance along this
//! yarn, `Δu = s_b - s_a`, is the distance between the centrelines of those
//! parallel yarns. When it falls below the yarn diameter `d` the parallel
//! yarns are pressed together and this element pushes them apart; it is what
//! keeps crossings from sliding through each other (`Δu > 0` at all times,
//! DESIGN §1).
//!
//! Element coordinates (shape [`DOFS`] = 2): `q = [s_a, s_b]` (m), the
//! arc-length coordinates of the segment's end nodes on its yarn (`u` for warp
//! segments, `v` for weft segments). Positions do not enter.
//!
//! Strain `ε = (Δu - d)/L` where `Δu < d`, else `0` (dimensionless, `d ≈ 2R`
//! the yarn diameter, `L` the rest spacing of adjacent yarns), measure
//! `Ω = L` (constant), stiffness `k_c` (N):
//! `V = ½ L k_c ε² = ½ k_c (d - Δu)² / L` for `Δu < d`, else 0 (J).
//!
//! Continuity: `V` is `C¹` at `Δu = d` (energy and force vanish there from
//! both sides); the stiffness `k_c / L` jumps to 0 (not `C²`), as for any
//! quadratic one-sided penalty. The strain-rate damping
//! `W = ½ L k_d ε̇²` acts only while in contact (zero strain gradient
//! outside), and pure sliding (`ṡ_a = ṡ_b`) never dissipates.

use crate::element::{Measure, Strain};
use nalgebra::{SMatrix, SVector};

/// Number of generalised coordinates of a contact element.
pub const DOFS: usize = 2;

/// Contact strain `ε = (Δu - d)/L` for `Δu = s_b - s_a < d`, else the zero
/// strain; Jacobian `[-1/L, 1/L]` in contact, Hessian zero (the strain is
/// piecewise linear). `diameter` `d` (m, ≈ 2R), `spacing` `L > 0` (m).
/// \[CLMMO14\]
pub fn strain(q: &SVector<f64, DOFS>, diameter: f64, spacing: f64) -> Strain<1, DOFS> {
    let du = q[1] - q[0];
    if du >= diameter {
        return Strain::zero();
    }
    Strain {
        value: SVector::from([(du - diameter) / spacing]),
        jacobian: SMatrix::<f64, 1, DOFS>::new(-1.0 / spacing, 1.0 / spacing),
        hessians: [SMatrix::zeros()],
    }
}

/// Measure `Ω = L` (m), constant (zero gradient).
pub fn measure(spacing: f64) -> Measure<DOFS> {
    Measure::constant(spacing)
}

/// Whether the contact is active, `Δu = s_b - s_a < d`.
pub fn in_contact(q: &SVector<f64, DOFS>, diameter: f64) -> bool {
    q[1] - q[0] < diameter
}
