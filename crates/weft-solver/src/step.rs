//! The backend seam of the backward-Euler step: what differs between the
//! CPU and a device backend (assembly of the residual and system matrix,
//! the linear solve, and the vector operations of the Newton loop and line
//! search) sits behind [`StepBackend`]; the Newton loop itself
//! ([`crate::Simulation::try_step_with`]) and the adaptive step control
//! ([`crate::Simulation::advance_with`]) exist once and drive any backend.
//!
//! The vectors of a backend ([`StepBackend::Vector`]) have `5 n` entries
//! (`x, y, z, u, v` per node): host `Vec<f64>` on the CPU
//! ([`crate::integrator::CpuBackend`]), device buffers for CUDA. Per Newton
//! iteration the loop only reads scalars from the backend (norms, the PCG
//! result, energies); whole vectors cross to the host only through
//! [`StepBackend::to_host`], once per step attempt that passes Newton
//! (the acceptance checks and the friction-anchor update run on the host).

use crate::assembly::{Assembler, Energies};
use crate::integrator::{Handle, Settings};
use crate::pcg::PcgResult;
use nalgebra::Vector3;
use std::borrow::Cow;

/// The host-side parts of a [`crate::Simulation`] a backend may read during
/// a step (borrowed from the simulation for the duration of one attempt).
pub struct StepHost<'a> {
    /// The CPU assembler: fabric, contact model, gravity, and
    /// `exact_hessians`, the switch between the exact elastic Hessians and
    /// their PSD projections that the Newton loop flips (backends read it
    /// before every assembly).
    pub assembler: &'a mut Assembler,
    /// Time-step and Newton/PCG settings.
    pub settings: &'a Settings,
    /// `1.0` for a free DOF, `0.0` for a fixed one (`5 n`; handles fixed).
    pub free: &'a [f64],
    /// Number of free DOFs.
    pub free_dofs: usize,
    /// Friction anchor positions (m), one per fabric anchor.
    pub anchors: &'a [f64],
    /// Handles (prescribed positions).
    pub handles: &'a [Handle],
    /// Positions of the handle nodes at `t = 0` (m), per handle.
    pub handle_x0: &'a [Vec<Vector3<f64>>],
    /// Simulated time at the start of the step (s).
    pub t: f64,
}

impl StepHost<'_> {
    /// The prescribed velocities of a step of size `h` (s) from `q_n`: for
    /// every handle node, `(x(t + h) - x_n)/h` per coordinate (m/s), as
    /// `(DOF index, value)` pairs.
    pub fn handle_velocities(&self, q_n: &[f64], h: f64) -> Vec<(usize, f64)> {
        let mut out = Vec::new();
        for (hd, x0) in self.handles.iter().zip(self.handle_x0) {
            let d = hd.displacement(self.t + h);
            for (&nd, x0) in hd.nodes.iter().zip(x0) {
                for c in 0..3 {
                    let i = 5 * nd + c;
                    out.push((i, (x0[c] + d[c] - q_n[i]) / h));
                }
            }
        }
        out
    }
}

/// The operations of one backward-Euler step that a backend provides. All
/// vectors have `5 n` entries; `Self::Error` is a failure of the backend
/// itself (a device call), not a rejected step.
pub trait StepBackend {
    /// A vector of the backend (host `Vec<f64>`, a device buffer, ...).
    type Vector;
    /// A backend failure (e.g. a CUDA driver error).
    type Error: std::fmt::Display;

    /// A vector of zeros.
    ///
    /// # Errors
    /// A backend failure.
    fn zeros(&mut self) -> Result<Self::Vector, Self::Error>;

    /// Prepares a step of size `h` (s) from `(q_n, v_n)` at `host.t`: the
    /// collider time and self-collision pairs (`Assembler::begin_step` at
    /// `t + h`), and returns the first Newton iterate: `v_n` with pinned
    /// DOFs zero and handle DOFs `(x(t + h) - x_n)/h`.
    ///
    /// # Errors
    /// A backend failure.
    fn begin_step(
        &mut self,
        host: &mut StepHost<'_>,
        q_n: &Self::Vector,
        v_n: &Self::Vector,
        h: f64,
    ) -> Result<Self::Vector, Self::Error>;

    /// Assembles the residual `R = M(q_n)(v - v_n) - h f(q_n + h v, v)`
    /// (N·s) into `r`, fixed DOFs zeroed, and, with `with_matrix`, the system
    /// matrix (exact or projected elastic Hessians as
    /// `host.assembler.exact_hessians` says). Anchors: `host.anchors`.
    /// Returns the energies at the iterate.
    ///
    /// # Errors
    /// A backend failure.
    #[allow(clippy::too_many_arguments)]
    fn assemble(
        &mut self,
        host: &mut StepHost<'_>,
        q_n: &Self::Vector,
        v_n: &Self::Vector,
        v: &Self::Vector,
        h: f64,
        r: &mut Self::Vector,
        with_matrix: bool,
    ) -> Result<Energies, Self::Error>;

    /// Solves `A dv = rhs` with the last assembled matrix by PCG to the
    /// relative tolerance `eta`, from `dv` (zero). Returns the PCG result
    /// and whether `A` was found indefinite.
    ///
    /// # Errors
    /// A backend failure.
    fn solve(
        &mut self,
        host: &mut StepHost<'_>,
        rhs: &Self::Vector,
        dv: &mut Self::Vector,
        eta: f64,
    ) -> Result<(PcgResult, bool), Self::Error>;

    /// `out = -x`.
    ///
    /// # Errors
    /// A backend failure.
    fn negate(&mut self, x: &Self::Vector, out: &mut Self::Vector) -> Result<(), Self::Error>;

    /// `x = 0`.
    ///
    /// # Errors
    /// A backend failure.
    fn set_zero(&mut self, x: &mut Self::Vector) -> Result<(), Self::Error>;

    /// `out = v + alpha dv`.
    ///
    /// # Errors
    /// A backend failure.
    fn combine(
        &mut self,
        v: &Self::Vector,
        alpha: f64,
        dv: &Self::Vector,
        out: &mut Self::Vector,
    ) -> Result<(), Self::Error>;

    /// `|x|₂`.
    ///
    /// # Errors
    /// A backend failure.
    fn norm2(&mut self, x: &Self::Vector) -> Result<f64, Self::Error>;

    /// `max |x_i|` (NaN entries ignored, as `f64::max` does).
    ///
    /// # Errors
    /// A backend failure.
    fn inf_norm(&mut self, x: &Self::Vector) -> Result<f64, Self::Error>;

    /// The node (entry index / 5) with the largest `|r_i|`.
    ///
    /// # Errors
    /// A backend failure.
    fn worst_node(&mut self, r: &Self::Vector) -> Result<usize, Self::Error>;

    /// The index of the first non-finite entry of `x`, if any.
    ///
    /// # Errors
    /// A backend failure.
    fn first_non_finite(&mut self, x: &Self::Vector) -> Result<Option<usize>, Self::Error>;

    /// `out = q_n + h v`.
    ///
    /// # Errors
    /// A backend failure.
    fn advance(
        &mut self,
        q_n: &Self::Vector,
        v: &Self::Vector,
        h: f64,
        out: &mut Self::Vector,
    ) -> Result<(), Self::Error>;

    /// The entries of `x` on the host (borrowed where they already are).
    ///
    /// # Errors
    /// A backend failure.
    fn to_host<'v>(&mut self, x: &'v Self::Vector) -> Result<Cow<'v, [f64]>, Self::Error>;

    /// Called after a step was accepted, with the new coordinates `q` on the
    /// host and `host.anchors` already updated (a device backend uploads the
    /// anchors here).
    ///
    /// # Errors
    /// A backend failure.
    fn accepted(&mut self, host: &StepHost<'_>, q: &[f64]) -> Result<(), Self::Error>;
}
