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
//! result, energies). The acceptance checks of a converged step (arc-length
//! order, strain jumps: [`StepBackend::check_accept`]) and the commit of an
//! accepted one (strain reference, friction anchors: [`StepBackend::accept`])
//! are backend operations too, so a device backend keeps the coordinates,
//! the strain reference and the anchors on the device and returns only the
//! few scalars that name a rejection. The loop itself never downloads a
//! whole vector ([`StepBackend::to_host`] is for callers outside it).
//!
//! The one per-step transfer of whole vectors left to a device backend is
//! in [`StepBackend::begin_step`] when the scene has mesh colliders or
//! self-collision: [`Assembler::begin_step`] takes the mesh colliders'
//! tangent planes and finds the self-collision pairs on the host from the
//! start-of-step `q_n`, `v_n`, so those two vectors are downloaded once per
//! step (not per Newton iteration) and the planes and pairs uploaded.

use crate::assembly::{Assembler, Energies};
use crate::integrator::{Handle, Rejection, Settings};
use crate::pcg::{PcgResult, PcgTolerance};
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
    /// Friction anchor positions (m), one per fabric anchor. The CPU
    /// backend reads and updates these; a device backend keeps its own copy
    /// on the device (uploaded once, updated by [`StepBackend::accept`]) and
    /// leaves these stale until its owner syncs them back.
    pub anchors: &'a mut Vec<f64>,
    /// The stretch strain of every segment (`|Δx|/Δu - 1`, one per
    /// `fabric.elements.segments`) at the last accepted state, the reference
    /// of the strain-jump check. As `anchors`: the CPU backend's; a device
    /// backend keeps its own on the device.
    pub strain_ref: &'a mut Vec<f64>,
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
        let q_handles: Vec<f64> = self.handle_dofs().iter().map(|&i| q_n[i]).collect();
        self.handle_velocities_from(&q_handles, h)
    }

    /// The DOF indices of the handle nodes' positions, in the order of
    /// [`StepHost::handle_velocities`] (per handle, per node, `x, y, z`);
    /// a node in two handles appears twice.
    pub fn handle_dofs(&self) -> Vec<usize> {
        handle_dofs(self.handles)
    }

    /// As [`StepHost::handle_velocities`], from the handle DOFs' values only:
    /// `q_handles[j]` (m) is `q_n` at `handle_dofs()[j]`. Same arithmetic,
    /// so the same numbers.
    ///
    /// # Panics
    /// When `q_handles` is shorter than [`StepHost::handle_dofs`].
    pub fn handle_velocities_from(&self, q_handles: &[f64], h: f64) -> Vec<(usize, f64)> {
        let mut out = Vec::new();
        let mut j = 0;
        for (hd, x0) in self.handles.iter().zip(self.handle_x0) {
            let d = hd.displacement(self.t + h);
            for (&nd, x0) in hd.nodes.iter().zip(x0) {
                for c in 0..3 {
                    out.push((5 * nd + c, (x0[c] + d[c] - q_handles[j]) / h));
                    j += 1;
                }
            }
        }
        out
    }
}

/// The DOF indices of the position entries of every handle node (`5 n`
/// layout), per handle, per node, `x, y, z` (the order of
/// [`StepHost::handle_velocities`]).
pub fn handle_dofs(handles: &[Handle]) -> Vec<usize> {
    handles
        .iter()
        .flat_map(|hd| {
            hd.nodes
                .iter()
                .flat_map(|&nd| (0..3).map(move |c| 5 * nd + c))
        })
        .collect()
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

    /// Assembles the system matrix at the iterate `v`, whose residual and
    /// energies the Newton loop already has from an [`StepBackend::assemble`]
    /// without the matrix (an accepted line-search trial: elements give the
    /// same forces with and without their Hessians, bit for bit). `scratch`
    /// (length `5 n`) may receive that residual again; its contents on
    /// return are unspecified. The default calls [`StepBackend::assemble`]
    /// with the matrix into `scratch`; a device backend overrides it to skip
    /// reading the energies back.
    ///
    /// # Errors
    /// A backend failure.
    #[allow(clippy::too_many_arguments)]
    fn assemble_matrix(
        &mut self,
        host: &mut StepHost<'_>,
        q_n: &Self::Vector,
        v_n: &Self::Vector,
        v: &Self::Vector,
        h: f64,
        scratch: &mut Self::Vector,
    ) -> Result<(), Self::Error> {
        self.assemble(host, q_n, v_n, v, h, scratch, true)
            .map(|_| ())
    }

    /// Solves `A dv = rhs` with the last assembled matrix by PCG to
    /// `tolerance`, from `dv` (zero). A backend may ignore
    /// [`PcgTolerance::absolute_inf`] (the CUDA backends do: their device
    /// PCG reads back only dot products), which only makes its solves more
    /// accurate than asked; the Newton loop sets it only with
    /// [`StepBackend::adaptive_forcing`]. Returns the PCG result
    /// and whether `A` was found indefinite. `spare` are two vectors the
    /// Newton loop does not need during the solve (its line-search
    /// buffers): the backend may use them as PCG work vectors (contents
    /// on return unspecified), so a solve need not allocate its own.
    ///
    /// # Errors
    /// A backend failure.
    fn solve(
        &mut self,
        host: &mut StepHost<'_>,
        rhs: &Self::Vector,
        dv: &mut Self::Vector,
        tolerance: PcgTolerance,
        spare: [&mut Self::Vector; 2],
    ) -> Result<(PcgResult, bool), Self::Error>;

    /// Whether Newton takes the adaptive (Eisenstat–Walker) forcing term
    /// for this backend's solves of `host`'s systems
    /// ([`crate::Settings::adaptive_forcing`]). The default, `false`, keeps
    /// the tight forcing term: right where a solve is cheap next to a Newton
    /// iteration, and where step-by-step agreement with another backend
    /// matters more than the PCG iterations saved.
    fn adaptive_forcing(&self, host: &StepHost<'_>) -> bool {
        let _ = host;
        false
    }

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

    /// The acceptance checks of a Newton-converged step's coordinates
    /// `q_new` (`5 n`), after the non-finite check: `Some(ArcLengthOrder)`
    /// for the first segment of `fabric.elements.segments` whose arc-length
    /// difference `Δu` (or `Δv`) is not positive (naming its yarn and
    /// nodes), else `Some(StrainJump)` for the segment whose stretch strain
    /// changed most against the strain reference (ties: the last one) when
    /// that change exceeds `settings.max_strain_change`, else `None`. Keeps
    /// the new strains for [`StepBackend::accept`]. Only the segment indices
    /// and the change need to reach the host.
    ///
    /// # Errors
    /// A backend failure.
    fn check_accept(
        &mut self,
        host: &mut StepHost<'_>,
        q_new: &Self::Vector,
    ) -> Result<Option<Rejection>, Self::Error>;

    /// Commits an accepted step whose [`StepBackend::check_accept`] returned
    /// `None`: the strain reference becomes the strains of `q_new`, and the
    /// friction anchors are updated from `q_new` as
    /// [`Assembler::update_anchors`] does (stick/slip with the crossing's
    /// normal force from the yarn tensions). `h` (s) is the step size. The
    /// CPU backend updates `host.anchors` and `host.strain_ref`; a device
    /// backend its device copies.
    ///
    /// # Errors
    /// A backend failure.
    fn accept(
        &mut self,
        host: &mut StepHost<'_>,
        q_new: &Self::Vector,
        h: f64,
    ) -> Result<(), Self::Error>;
}
