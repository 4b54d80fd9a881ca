//! # weft-solver
//!
//! Implicit time integration of yarn-level woven cloth (DESIGN §5-§6):
//! assembly of forces and the system matrix `M - h ∂f/∂q̇ - h² ∂f/∂q` into a
//! 5x5 block compressed-sparse-row matrix, preconditioned conjugate gradients
//! with a block-Jacobi preconditioner, backward Euler with Newton's method and
//! a line search, adaptive time steps, colliders and self-collision.

pub mod assembly;
pub mod bsr;
pub mod cholesky;
pub mod collide;
pub mod integrator;
pub mod multigrid;
pub mod par;
pub mod pcg;
pub mod step;
#[cfg(test)]
mod test_util;
mod trisolve;

pub use assembly::{Assembler, Attachment, Energies, Tie};
pub use integrator::{
    CpuBackend, Handle, LinearSolver, Rejection, Settings, SimCheckpoint, Simulation, SolverError,
    StepStats, step_halving_on_rejection,
};
pub use step::{StepBackend, StepHost};
