//! # weft-potentials
//!
//! Per-element math of the yarn-level woven cloth model: strains, energies,
//! gradients, Hessians, strain-rate dissipation, and the Eulerian segment mass
//! matrix, as pure functions of small fixed-size nalgebra arrays (no
//! containers, no allocation), so the CPU backend can map them over elements
//! and the CUDA kernels can mirror them formula by formula.
//!
//! Every elastic element is `V = ½ Ω k |ε|²` [SBO17 eq. 2]; each element module
//! supplies `strain(q)` and `measure(q)` and the generic functions in
//! [`element`] build the energy, gradient, exact Hessian ([`element::elastic`])
//! and the strain-rate dissipation ([`element::dissipation`]).
//!
//! # Calibration (DESIGN §2)
//!
//! Stiffnesses are chosen so that a straight yarn obeys beam theory:
//!
//! | mode | our `k` | relation to \[SBO17\] | to reproduce its tables |
//! |---|---|---|---|
//! | stretch | `k_s = EπR²` (axial rigidity EA, N) | same strain `|w|-1` and measure `Δu` [SBO17 eq. 12-13] | use Table 1 values unchanged |
//! | bending | `k_b = EπR⁴/4` (flexural rigidity EI, N·m²) | strain `2θ/D`, measure `D/2` vs the paper's `θ/D` and `D` (`D = Δu₁-Δu₂`) | `k_b = k_paper / 2` ([`bending::bending_stiffness_from_sbo17`]) |
//! | shear | `k_x` (N) per warp/weft segment pair, measure `L` | [SBO17 eq. 22-23] | see [`shear`] |
//! | damping | `k_d` per mode, same strain and measure as the mode | [SBO17 eq. 6] | same factor as the mode's `k` (½ for bending) |
//!
//! Gravity uses the acceleration vector `g` (e.g. `[0, -9.81, 0]`) and
//! `V = -ρ_l Δu g·(x_a + x_b)/2`, so potential energy rises with height
//! ([`gravity`]).
//!
//! Units are SI. Arc-length coordinates (`u` on warp yarns, `v` on weft yarns)
//! are metres of rest yarn length. Sources are cited by the keys of
//! `DESIGN.md` (e.g. [SBO17 eq. 12]).

pub mod bending;
pub mod contact;
pub mod element;
pub mod friction;
pub mod gravity;
pub mod hinge;
pub mod inertia;
pub mod seam;
pub mod shear;
pub mod stretch;
pub mod stvk;
pub mod testing;

pub use element::{
    Dissipation, DissipationTerms, ElementEval, Hessian, Measure, Strain, dissipation, elastic,
    elastic_projected, elastic_projected_generic,
};
