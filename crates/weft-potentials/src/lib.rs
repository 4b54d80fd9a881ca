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
//! Units are SI. Arc-length coordinates (`u` on warp yarns, `v` on weft yarns)
//! are metres of rest yarn length. Sources are cited by the keys of
//! `DESIGN.md` (e.g. [SBO17 eq. 12]).

pub mod bending;
pub mod contact;
pub mod element;
pub mod friction;
pub mod gravity;
pub mod inertia;
pub mod shear;
pub mod stretch;
pub mod testing;

pub use element::{Dissipation, ElementEval, Measure, Strain, dissipation, elastic};
