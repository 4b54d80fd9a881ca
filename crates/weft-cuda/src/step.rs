//! The backward-Euler step on the device: [`CudaStep`] implements
//! [`weft_solver::StepBackend`], so the CPU's own Newton loop
//! ([`Simulation::try_step_with`]: convergence test in force units, forcing
//! term, exact-then-projected Hessians, line search on `|R|₂`, the same
//! rejection reasons) and adaptive step control
//! ([`Simulation::advance_with`]) drive the kernels. [`CudaSimulation`]
//! owns the device state.
//!
//! What crosses the bus: the state `(q, v)`, the friction anchors and the
//! strain reference are uploaded once ([`CudaSimulation::new`]). The whole
//! Newton/PCG loop of a step stays on the device: per Newton iteration only
//! scalars are read back (norms, the PCG result, 4 energies, `pᵀAp`, `|r|²`
//! and `rᵀz` per PCG iteration); per step attempt that passes Newton the
//! acceptance kernels (arc-length order, strain jumps) read back 3 scalars
//! (24 B), and an accepted step updates the strain reference and the
//! anchors on the device (nothing read). Uploaded per step: the collider
//! data of the step and the handle velocities (8 B per handle DOF, computed
//! from a host mirror of the handle nodes' coordinates, kept exactly: a
//! handle DOF is fixed in the Newton systems, so the device advances it by
//! `q_n + h v_h` with the `v_h` the host wrote, and the host repeats that
//! operation).
//! `q`, `v`, the anchors and the strain reference are downloaded only by
//! [`CudaSimulation::sync`], at the end of every
//! [`CudaSimulation::advance_to`] (output frames).
//!
//! The remaining per-step downloads of whole vectors: with mesh
//! colliders or self-collision, `begin_step` downloads `q_n` and `v_n`
//! (`80 n` B) once per step, because the tangent planes of the mesh
//! colliders and the self-collision pairs are found on the host
//! (`weft_solver::Assembler::begin_step`, BVH queries against the mesh and
//! between yarn segments), and uploads the planes and pairs. Triangle-mesh
//! self-collision also downloads `q_new` (`40 n` B) after `check_accept`,
//! for the integrator's layer-crossing check on the host
//! (`weft_solver::integrator::layer_crossing`).
//!
//! [`check_supported`] refuses, before any device work, what the kernels do
//! not implement, naming it. [`EmulatedStep`] runs the same backend logic
//! with the kernels executed on the host ([`crate::emulate`]), so the
//! device step is tested against the CPU without a GPU (tests/step.rs).
//!
//! Run on a GPU once (an H100, 2026-11-26; see the crate docs): it follows
//! the CPU trajectory there, but small scenes step about 7x slower than on
//! the CPU (BENCHMARKS.md).

use crate::cuda::{CudaBackend, CudaError, DeviceSystem};
use crate::emulate::{self, EmulatedOps};
use crate::host::HostError;
use crate::plan::{AcceptScalars, AssemblyPlan, PlanError, StepColliders, colliders_at};
use cudarc::driver::CudaSlice;
use std::borrow::Cow;
use thiserror::Error;
use weft_solver::bsr::Block;
use weft_solver::integrator::arc_length_message;
use weft_solver::par::{inf_norm, norm2, update, worst_node};
use weft_solver::pcg::{PcgResult, PcgStatus, PcgTolerance};
use weft_solver::step::handle_dofs;
use weft_solver::{
    Energies, LinearSolver, Rejection, Simulation, SolverError, StepBackend, StepHost, StepStats,
};

/// A feature of the CPU backend that the CUDA backend does not implement;
/// the CUDA backend refuses such a simulation up front.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum Unsupported {
    /// A triangle-mesh collider without tangent planes (only when the
    /// kernels' collider form is built before [`weft_solver::Assembler::begin_step`]).
    #[error(
        "collider {0} is a triangle mesh and no tangent planes were taken for it (call \
         Assembler::begin_step first)"
    )]
    MeshCollider(usize),
    /// The sparse Cholesky preconditioner.
    #[error(
        "integrator.preconditioner is \"cholesky\" (the CUDA backend has block-Jacobi PCG only; use \"block_jacobi\" or \"auto\")"
    )]
    Cholesky,
    /// Segment contact against colliders
    /// (`weft_solver::assembly::ContactModel::segments`).
    #[error("segment contact against colliders is not implemented by the CUDA kernels")]
    SegmentContact,
    /// Indices beyond the kernels' 32-bit range.
    #[error("{0} exceeds the kernels' 32-bit index range")]
    TooLarge(&'static str),
}

/// Checks, without a device, that the CUDA backend implements everything
/// `sim` uses. `LinearSolver::Auto` is accepted and means block-Jacobi on
/// the device (the CPU picks the sparse Cholesky factor up to
/// `CHOLESKY_MAX_DOFS`, so PCG iteration counts differ from a CPU run of
/// the same scene; the Newton solution agrees to the Newton tolerance).
///
/// # Errors
/// The first [`Unsupported`] feature found.
pub fn check_supported(sim: &Simulation) -> Result<(), Unsupported> {
    let a = &sim.assembler;
    if sim.settings.linear_solver == LinearSolver::Cholesky {
        return Err(Unsupported::Cholesky);
    }
    if a.contact.segments {
        return Err(Unsupported::SegmentContact);
    }
    if 5 * a.fabric.node_count() > i32::MAX as usize {
        return Err(Unsupported::TooLarge("5 x node count"));
    }
    Ok(())
}

/// Whether [`weft_solver::Assembler::begin_step`] needs the real start-of-step
/// state (mesh colliders' tangent planes, self-collision pairs); otherwise
/// it only sets the collider time and the device backend skips the
/// download.
fn needs_step_state(a: &weft_solver::Assembler) -> bool {
    a.contact.self_collision.is_some()
        || a.contact
            .colliders
            .iter()
            .any(|(c, _)| c.uses_tangent_planes())
}

fn plan_error(e: PlanError) -> Unsupported {
    match e {
        PlanError::MeshCollider(i) => Unsupported::MeshCollider(i),
        PlanError::TooLarge(w) => Unsupported::TooLarge(w),
    }
}

/// The plan of `sim`'s assembler with the simulation's DOF mask (handle
/// nodes fixed, as in the CPU's Newton systems).
fn step_plan(sim: &Simulation) -> Result<AssemblyPlan, Unsupported> {
    let mut plan = AssemblyPlan::new(&sim.assembler).map_err(plan_error)?;
    plan.free = sim.free_mask().to_vec();
    Ok(plan)
}

/// Why a [`CudaSimulation`] could not be set up or stepped.
#[derive(Debug, Error)]
pub enum CudaStepError {
    /// The simulation uses a feature the CUDA backend lacks.
    #[error("the CUDA backend does not support this scene: {0}")]
    Unsupported(#[from] Unsupported),
    /// A device failure.
    #[error(transparent)]
    Cuda(#[from] CudaError),
    /// A step was rejected where one had to be accepted (benchmarks).
    #[error("step rejected: {0}")]
    Rejected(Rejection),
    /// The adaptive step control gave up (benchmarks).
    #[error(transparent)]
    Solver(#[from] SolverError),
}

/// The rejection named by the device's acceptance scalars, with the same
/// naming data as the CPU's host checks (`CpuBackend::check_accept`).
fn rejection_of(host: &StepHost<'_>, sc: AcceptScalars) -> Option<Rejection> {
    let f = &host.assembler.fabric;
    let segs = &f.elements.segments;
    if let Some(e) = sc.first_bad_segment(segs.len()) {
        let s = &segs[e];
        return Some(Rejection::ArcLengthOrder(arc_length_message(
            &f.yarns[s.yarn].label(),
            s.a,
            s.b,
        )));
    }
    if !segs.is_empty() && sc.change > host.settings.max_strain_change {
        let s = &segs[sc.segment];
        return Some(Rejection::StrainJump {
            segment: sc.segment,
            a: s.a,
            b: s.b,
            change: sc.change,
        });
    }
    None
}

/// The host mirror of the handle nodes' coordinates, for the handle
/// velocities of [`StepBackend::begin_step`] without downloading `q`.
///
/// It is kept exactly, not approximately: a handle DOF is fixed in the
/// Newton systems (masked residual and preconditioner), so the Newton
/// update never changes the velocity `v_h` that `begin_step` writes there,
/// and the device's `weft_advance` computes `q_n + h v_h` with the same
/// IEEE operations as [`HandleMirror::accept`] (NVRTC runs with
/// `fmad = false`, so no fused multiply-add rounds differently). The
/// emulated backend asserts the equality with the real coordinates after
/// every accepted step (debug builds), and the emulated trajectory tests
/// compare with the CPU, which reads the full `q_n`.
#[derive(Clone, Debug, Default)]
struct HandleMirror {
    /// DOF index per entry ([`handle_dofs`]).
    dofs: Vec<usize>,
    /// `q` at those DOFs (m).
    q: Vec<f64>,
    /// The velocities written by the last `begin_step` (DOF, m/s).
    pending: Vec<(usize, f64)>,
}

impl HandleMirror {
    fn new(sim: &Simulation) -> Self {
        let dofs = handle_dofs(&sim.handles);
        let q = dofs.iter().map(|&i| sim.q[i]).collect();
        Self {
            dofs,
            q,
            pending: Vec::new(),
        }
    }

    /// The handle velocities of a step of size `h` (kept for `accept`).
    fn velocities(&mut self, host: &StepHost<'_>, h: f64) -> &[(usize, f64)] {
        self.pending = host.handle_velocities_from(&self.q, h);
        &self.pending
    }

    /// Advances the mirror as the device advances `q = q_n + h v` (the
    /// last write of a DOF wins, as in the device vector).
    fn accept(&mut self, h: f64) {
        let last: std::collections::HashMap<usize, f64> = self.pending.iter().copied().collect();
        for (q, i) in self.q.iter_mut().zip(&self.dofs) {
            *q += h * last[i];
        }
    }
}

/// The device backend of the step: the plan and buffers of a
/// [`DeviceSystem`] (with the strain reference and the friction anchors),
/// block-Jacobi PCG on the device, and the host mirror of the handle nodes'
/// coordinates (for handle velocities).
pub struct CudaStep<'b> {
    pub(crate) sys: DeviceSystem<'b>,
    handles: HandleMirror,
    /// Largest device memory in use (bytes, whole device, `cuMemGetInfo`)
    /// seen when the Newton vectors of a step are all allocated.
    pub(crate) peak_used: usize,
}

impl CudaStep<'_> {
    /// Copies the assembler's per-call settings (Hessian mode, dissipation
    /// position Jacobian, drag, tie stiffness and damping) into the system.
    fn sync_assembler(&mut self, host: &StepHost<'_>) {
        self.sys.exact_hessians = host.assembler.exact_hessians;
        self.sys.dissipation_position_jacobian = host.assembler.dissipation_position_jacobian;
        self.sys.drag = host.assembler.drag;
        self.sys.tie_stiffness = host.assembler.tie_stiffness;
        self.sys.tie_damping = host.assembler.tie_damping;
    }
}

impl StepBackend for CudaStep<'_> {
    type Vector = CudaSlice<f64>;
    type Error = CudaError;

    fn zeros(&mut self) -> Result<CudaSlice<f64>, CudaError> {
        self.sys.zeros()
    }

    fn begin_step(
        &mut self,
        host: &mut StepHost<'_>,
        q_n: &CudaSlice<f64>,
        v_n: &CudaSlice<f64>,
        h: f64,
    ) -> Result<CudaSlice<f64>, CudaError> {
        if needs_step_state(host.assembler) {
            // The one remaining per-step transfer of whole vectors: mesh
            // colliders' tangent planes and self-collision pairs are found
            // on the host from q_n, v_n (once per step, not per Newton
            // iteration; see the module docs).
            let q = self.sys.download(q_n)?;
            let vn = self.sys.download(v_n)?;
            host.assembler.begin_step(&q, &vn, h, host.t + h);
        } else {
            host.assembler.begin_step(&[], &[], h, host.t + h);
        }
        let colliders = colliders_at(host.assembler, host.t + h)
            .expect("begin_step took the mesh colliders' tangent planes");
        self.sys.set_colliders(&colliders)?;
        self.sys.load_step_state(q_n, v_n)?;
        let mut v = self.sys.zeros()?;
        self.sys.copy(v_n, &mut v)?;
        self.sys.mask(&mut v)?;
        let handles = self.handles.velocities(host, h);
        self.sys.set_entries(&mut v, handles)?;
        Ok(v)
    }

    fn assemble(
        &mut self,
        host: &mut StepHost<'_>,
        _q_n: &CudaSlice<f64>,
        _v_n: &CudaSlice<f64>,
        v: &CudaSlice<f64>,
        h: f64,
        r: &mut CudaSlice<f64>,
        with_matrix: bool,
    ) -> Result<Energies, CudaError> {
        // q_n and v_n were loaded into the system by begin_step.
        self.sync_assembler(host);
        self.sys.assemble_into(v, h, r, with_matrix)
    }

    fn assemble_matrix(
        &mut self,
        host: &mut StepHost<'_>,
        _q_n: &CudaSlice<f64>,
        _v_n: &CudaSlice<f64>,
        v: &CudaSlice<f64>,
        h: f64,
        scratch: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        self.sync_assembler(host);
        self.sys.assemble_matrix_into(v, h, scratch)
    }

    fn solve(
        &mut self,
        host: &mut StepHost<'_>,
        rhs: &CudaSlice<f64>,
        dv: &mut CudaSlice<f64>,
        tolerance: PcgTolerance,
        _spare: [&mut CudaSlice<f64>; 2],
    ) -> Result<(PcgResult, bool), CudaError> {
        let eta = tolerance.relative;
        let res = self
            .sys
            .solve_into(rhs, dv, eta, host.settings.cg_max_iterations)?;
        Ok((res, res.status == PcgStatus::NegativeCurvature))
    }

    fn set_zero(&mut self, x: &mut CudaSlice<f64>) -> Result<(), CudaError> {
        self.sys.set_zero(x)
    }

    fn combine(
        &mut self,
        v: &CudaSlice<f64>,
        alpha: f64,
        dv: &CudaSlice<f64>,
        out: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        self.sys.copy(v, out)?;
        self.sys.axpy(alpha, dv, out)
    }

    fn norm2(&mut self, x: &CudaSlice<f64>) -> Result<f64, CudaError> {
        Ok(self.sys.dot_dev(x, x)?.sqrt())
    }

    fn inf_norm(&mut self, x: &CudaSlice<f64>) -> Result<f64, CudaError> {
        Ok(self.sys.max_abs(x)?.0)
    }

    fn worst_node(&mut self, r: &CudaSlice<f64>) -> Result<usize, CudaError> {
        Ok(self.sys.max_abs(r)?.1 / 5)
    }

    fn first_non_finite(&mut self, x: &CudaSlice<f64>) -> Result<Option<usize>, CudaError> {
        // A finite sum of squares means every entry is finite; otherwise
        // (rare: the step is rejected) find the entry on the host.
        if self.sys.dot_dev(x, x)?.is_finite() {
            return Ok(None);
        }
        Ok(self.sys.download(x)?.iter().position(|a| !a.is_finite()))
    }

    fn advance(
        &mut self,
        q_n: &CudaSlice<f64>,
        v: &CudaSlice<f64>,
        h: f64,
        out: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        self.sys.advance_into(q_n, v, h, out)
    }

    fn to_host<'v>(&mut self, x: &'v CudaSlice<f64>) -> Result<Cow<'v, [f64]>, CudaError> {
        Ok(Cow::Owned(self.sys.download(x)?))
    }

    fn check_accept(
        &mut self,
        host: &mut StepHost<'_>,
        q_new: &CudaSlice<f64>,
    ) -> Result<Option<Rejection>, CudaError> {
        // Every Newton vector of the step is alive here: sample the memory.
        if let Ok((free, total)) = cudarc::driver::result::mem_get_info() {
            self.peak_used = self.peak_used.max(total - free);
        }
        let sc = self.sys.accept_segments(q_new)?;
        Ok(rejection_of(host, sc))
    }

    fn accept(
        &mut self,
        _host: &mut StepHost<'_>,
        q_new: &CudaSlice<f64>,
        h: f64,
    ) -> Result<(), CudaError> {
        self.sys.commit_strains();
        self.sys.update_anchors(q_new)?;
        self.handles.accept(h);
        Ok(())
    }
}

/// A [`Simulation`] stepped on the device. `sim` holds the settings, the
/// fabric and contact model, time, step size, rejections and dissipated
/// energy as on the CPU, current after every step; its state (`q`, `v`,
/// `anchors` and the strain reference) lives on the device and is copied
/// into `sim` only by [`CudaSimulation::sync`], which
/// [`CudaSimulation::advance_to`] calls at its end (the output frames of
/// the callers). Between syncs `sim.q`, `sim.v` and `sim.anchors` hold the
/// state of the last sync.
pub struct CudaSimulation<'b> {
    /// The host side of the simulation (see the type docs).
    pub sim: Simulation,
    pub(crate) step: CudaStep<'b>,
    pub(crate) q: CudaSlice<f64>,
    pub(crate) v: CudaSlice<f64>,
}

impl<'b> CudaSimulation<'b> {
    /// Checks support ([`check_supported`]), builds the plan, allocates
    /// every device buffer and uploads the state, the anchors and the strain
    /// reference (once).
    ///
    /// # Errors
    /// [`CudaStepError::Unsupported`] naming the missing feature (before
    /// any device call), [`CudaStepError::Cuda`] for a device failure.
    pub fn new(backend: &'b CudaBackend, sim: Simulation) -> Result<Self, CudaStepError> {
        check_supported(&sim)?;
        let plan = step_plan(&sim)?;
        let mut sys = DeviceSystem::new(backend, &plan)?;
        sys.set_anchors(&sim.anchors)?;
        sys.set_strain_reference(sim.strain_reference())?;
        let q = sys.upload(&sim.q)?;
        let v = sys.upload(&sim.v)?;
        Ok(Self {
            step: CudaStep {
                sys,
                handles: HandleMirror::new(&sim),
                peak_used: 0,
            },
            sim,
            q,
            v,
        })
    }

    /// One step attempt of size `h` (s) on the device (see
    /// [`Simulation::try_step_with`]). Only scalars cross the bus (plus
    /// `q_n`, `v_n` for mesh colliders or self-collision); `sim.q`, `sim.v`
    /// and `sim.anchors` are not updated (call [`CudaSimulation::sync`]).
    ///
    /// # Errors
    /// A device failure; `Ok(Err(reason))` for a rejected step.
    pub fn try_step(&mut self, h: f64) -> Result<Result<StepStats, Rejection>, CudaError> {
        self.sim
            .try_step_with(&mut self.step, &mut self.q, &mut self.v, h)
    }

    /// Advances to `t_end` (s) with the CPU's adaptive step control
    /// ([`Simulation::advance_with`]), then syncs ([`CudaSimulation::sync`])
    /// so that `sim` holds the whole state. `on_step` sees `sim` with the
    /// current time, step statistics and rejections, but `q`, `v` and
    /// `anchors` as of the last sync (stale within the call).
    ///
    /// # Errors
    /// [`SolverError::StepTooSmall`] and [`SolverError::FixedStepRejected`]
    /// as on the CPU, [`SolverError::Backend`] for a device failure.
    pub fn advance_to(
        &mut self,
        t_end: f64,
        on_step: impl FnMut(&Simulation, &StepStats),
    ) -> Result<Vec<StepStats>, SolverError> {
        let Self { sim, step, q, v } = self;
        let res = sim.advance_with(t_end, |s, h| s.try_step_with(step, q, v, h), on_step);
        self.sync()
            .map_err(|e| SolverError::Backend(e.to_string()))?;
        res
    }

    /// Downloads `q`, `v`, the friction anchors and the strain reference
    /// into `sim` (`40 n` B each for `q` and `v`, `8` B per anchor and per
    /// segment).
    ///
    /// # Errors
    /// A device failure.
    pub fn sync(&mut self) -> Result<(), CudaError> {
        self.sim.q = self.step.sys.download(&self.q)?;
        self.sim.v = self.step.sys.download(&self.v)?;
        let (anchors, strains) = self.step.sys.download_anchors_strains()?;
        self.sim.anchors = anchors;
        self.sim.strain_reference_mut().copy_from_slice(&strains);
        Ok(())
    }
}

/// Bytes the device backend reads back from the device for the operations
/// [`EmulatedStep`] ran (what [`CudaStep`] reads for the same calls), so
/// that the bus traffic of a step can be checked without a GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Downloads {
    /// Total bytes read back.
    pub bytes: usize,
    /// Number of reads (device-to-host copies).
    pub reads: usize,
    /// The largest single read (bytes).
    pub largest: usize,
    /// Bytes of those read by PCG (`8 (2 + 3 k)` per solve of `k`
    /// iterations: `|b|²`, `rᵀz`, then `pᵀAp`, `|r|²`, `rᵀz` per iteration).
    pub pcg_bytes: usize,
    /// Bytes of those read as whole vectors (`40 n` B each).
    pub vector_bytes: usize,
}

impl Downloads {
    fn read(&mut self, bytes: usize) {
        self.bytes += bytes;
        self.reads += 1;
        self.largest = self.largest.max(bytes);
    }

    fn read_vector(&mut self, len: usize) {
        self.read(8 * len);
        self.vector_bytes += 8 * len;
    }
}

/// The device step backend with the kernels executed serially on the host
/// ([`crate::emulate`]): the same plan, kernel launch sequence for assembly
/// and fused block-Jacobi PCG ([`emulate::fused_pcg`]), the same begin-step
/// masking and handle velocities (from the handle mirror), the acceptance
/// and anchor-update kernels with the strain reference and anchors kept in
/// the backend, as [`CudaStep`] keeps them on the device; host vectors, with
/// the reductions as the device computes them (`max |x|` ignoring NaN).
/// Counts the bytes the device backend would read back ([`Downloads`]).
/// For tests of the device step without a GPU: slow (serial), small scenes
/// only.
pub struct EmulatedStep {
    plan: AssemblyPlan,
    values: Vec<Block>,
    colliders: StepColliders,
    anchors: Vec<f64>,
    strain_ref: Vec<f64>,
    strain_new: Vec<f64>,
    handles: HandleMirror,
    /// What [`CudaStep`] would have read back for the calls so far.
    pub downloads: Downloads,
}

impl EmulatedStep {
    /// The emulated backend of `sim` (checked as [`CudaSimulation::new`]),
    /// with `sim`'s anchors and strain reference as its "device" copies.
    ///
    /// # Errors
    /// [`Unsupported`] naming the missing feature.
    pub fn new(sim: &Simulation) -> Result<Self, Unsupported> {
        check_supported(sim)?;
        let plan = step_plan(sim)?;
        Ok(Self {
            values: vec![[[0.0; 5]; 5]; plan.cols.len()],
            plan,
            colliders: StepColliders::default(),
            anchors: sim.anchors.clone(),
            strain_ref: sim.strain_reference().to_vec(),
            strain_new: vec![0.0; sim.strain_reference().len()],
            handles: HandleMirror::new(sim),
            downloads: Downloads::default(),
        })
    }

    /// The friction anchors (m) the backend holds (its "device" copy,
    /// updated by the anchor kernel).
    pub fn anchors(&self) -> &[f64] {
        &self.anchors
    }

    /// The strain reference the backend holds (one per segment).
    pub fn strain_reference(&self) -> &[f64] {
        &self.strain_ref
    }

    /// The device assembly's launch sequence ([`emulate::assemble`]) at
    /// `state = (q_n, v_n, v)` with the assembler's per-call settings; the
    /// masked residual into `r`. Counts no download.
    fn assemble_on_device(
        &mut self,
        host: &StepHost<'_>,
        (q_n, v_n, v): (&[f64], &[f64], &[f64]),
        h: f64,
        r: &mut [f64],
        with_matrix: bool,
    ) -> Result<Energies, HostError> {
        self.plan.exact_hessians = host.assembler.exact_hessians;
        self.plan.dissipation_position_jacobian = host.assembler.dissipation_position_jacobian;
        self.plan.drag = host.assembler.drag;
        self.plan.tie_stiffness = host.assembler.tie_stiffness;
        self.plan.tie_damping = host.assembler.tie_damping;
        let (e, _) = emulate::assemble(
            &self.plan,
            &self.colliders,
            q_n,
            v_n,
            v,
            h,
            &self.anchors,
            r,
            &mut self.values,
            with_matrix,
        )?;
        r.iter_mut().zip(&self.plan.free).for_each(|(r, f)| *r *= f);
        Ok(e)
    }
}

impl StepBackend for EmulatedStep {
    type Vector = Vec<f64>;
    type Error = HostError;

    fn zeros(&mut self) -> Result<Vec<f64>, HostError> {
        Ok(vec![0.0; 5 * self.plan.nodes])
    }

    fn begin_step(
        &mut self,
        host: &mut StepHost<'_>,
        q_n: &Vec<f64>,
        v_n: &Vec<f64>,
        h: f64,
    ) -> Result<Vec<f64>, HostError> {
        if needs_step_state(host.assembler) {
            self.downloads.read_vector(q_n.len());
            self.downloads.read_vector(v_n.len());
            host.assembler.begin_step(q_n, v_n, h, host.t + h);
        } else {
            host.assembler.begin_step(&[], &[], h, host.t + h);
        }
        self.colliders = colliders_at(host.assembler, host.t + h)
            .expect("begin_step took the mesh colliders' tangent planes");
        let mut v: Vec<f64> = v_n
            .iter()
            .zip(&self.plan.free)
            .map(|(v, f)| v * f)
            .collect();
        for &(i, x) in self.handles.velocities(host, h) {
            v[i] = x;
        }
        Ok(v)
    }

    fn assemble(
        &mut self,
        host: &mut StepHost<'_>,
        q_n: &Vec<f64>,
        v_n: &Vec<f64>,
        v: &Vec<f64>,
        h: f64,
        r: &mut Vec<f64>,
        with_matrix: bool,
    ) -> Result<Energies, HostError> {
        let e = self.assemble_on_device(host, (q_n, v_n, v), h, r, with_matrix)?;
        // The 4 energies.
        self.downloads.read(32);
        Ok(e)
    }

    fn assemble_matrix(
        &mut self,
        host: &mut StepHost<'_>,
        q_n: &Vec<f64>,
        v_n: &Vec<f64>,
        v: &Vec<f64>,
        h: f64,
        scratch: &mut Vec<f64>,
    ) -> Result<(), HostError> {
        // The device reads nothing back here.
        self.assemble_on_device(host, (q_n, v_n, v), h, scratch, true)
            .map(|_| ())
    }

    fn solve(
        &mut self,
        host: &mut StepHost<'_>,
        rhs: &Vec<f64>,
        dv: &mut Vec<f64>,
        tolerance: PcgTolerance,
        _spare: [&mut Vec<f64>; 2],
    ) -> Result<(PcgResult, bool), HostError> {
        let ops = EmulatedOps::new(&self.plan, &self.values)?;
        dv.iter_mut().for_each(|x| *x = 0.0);
        let eta = tolerance.relative;
        let res = emulate::fused_pcg(&ops, rhs, dv, eta, host.settings.cg_max_iterations)?;
        // The device PCG reads |b|² and rᵀz at the start, then pᵀAp, |r|²
        // and rᵀz per iteration.
        for _ in 0..2 + 3 * res.iterations {
            self.downloads.read(8);
        }
        self.downloads.pcg_bytes += 8 * (2 + 3 * res.iterations);
        Ok((res, res.status == PcgStatus::NegativeCurvature))
    }

    // The host vector operations are the CPU backend's (weft_solver::par).
    fn set_zero(&mut self, x: &mut Vec<f64>) -> Result<(), HostError> {
        update(x, |_, _| 0.0);
        Ok(())
    }

    fn combine(
        &mut self,
        v: &Vec<f64>,
        alpha: f64,
        dv: &Vec<f64>,
        out: &mut Vec<f64>,
    ) -> Result<(), HostError> {
        out.resize(v.len(), 0.0);
        update(out, |i, _| v[i] + alpha * dv[i]);
        Ok(())
    }

    fn norm2(&mut self, x: &Vec<f64>) -> Result<f64, HostError> {
        self.downloads.read(8);
        Ok(norm2(x))
    }

    fn inf_norm(&mut self, x: &Vec<f64>) -> Result<f64, HostError> {
        // max_abs reads the value and its index.
        self.downloads.read(8);
        self.downloads.read(4);
        Ok(inf_norm(x))
    }

    fn worst_node(&mut self, r: &Vec<f64>) -> Result<usize, HostError> {
        self.downloads.read(8);
        self.downloads.read(4);
        Ok(worst_node(r))
    }

    fn first_non_finite(&mut self, x: &Vec<f64>) -> Result<Option<usize>, HostError> {
        self.downloads.read(8);
        let found = x.iter().position(|a| !a.is_finite());
        if found.is_some() {
            self.downloads.read_vector(x.len());
        }
        Ok(found)
    }

    fn advance(
        &mut self,
        q_n: &Vec<f64>,
        v: &Vec<f64>,
        h: f64,
        out: &mut Vec<f64>,
    ) -> Result<(), HostError> {
        out.clone_from(q_n);
        update(out, |i, q| q + h * v[i]);
        Ok(())
    }

    fn to_host<'v>(&mut self, x: &'v Vec<f64>) -> Result<Cow<'v, [f64]>, HostError> {
        self.downloads.read_vector(x.len());
        Ok(Cow::Borrowed(x))
    }

    fn check_accept(
        &mut self,
        host: &mut StepHost<'_>,
        q_new: &Vec<f64>,
    ) -> Result<Option<Rejection>, HostError> {
        let sc =
            emulate::accept_segments(&self.plan, q_new, &self.strain_ref, &mut self.strain_new)?;
        if !self.strain_ref.is_empty() {
            self.downloads.read(24);
        }
        Ok(rejection_of(host, sc))
    }

    fn accept(
        &mut self,
        _host: &mut StepHost<'_>,
        q_new: &Vec<f64>,
        h: f64,
    ) -> Result<(), HostError> {
        std::mem::swap(&mut self.strain_ref, &mut self.strain_new);
        emulate::update_anchors(&self.plan, q_new, &mut self.anchors)?;
        self.handles.accept(h);
        debug_assert!(
            self.handles
                .dofs
                .iter()
                .zip(&self.handles.q)
                .all(|(&i, &q)| q == q_new[i]),
            "the handle mirror left the device coordinates"
        );
        Ok(())
    }
}

/// Advances `sim` to `t_end` (s) with the [`EmulatedStep`] backend and the
/// CPU's adaptive step control; the coordinates stay in `sim.q`, `sim.v`
/// (the emulated "device" vectors), the anchors and strain reference in the
/// backend ([`EmulatedStep::anchors`]) and are copied into `sim` at the end,
/// as [`CudaSimulation::advance_to`] syncs.
///
/// # Errors
/// [`SolverError::StepTooSmall`] and [`SolverError::FixedStepRejected`] as
/// on the CPU; [`SolverError::Backend`] when the host build of the kernels
/// is unavailable.
pub fn advance_emulated(
    sim: &mut Simulation,
    backend: &mut EmulatedStep,
    t_end: f64,
) -> Result<Vec<StepStats>, SolverError> {
    let out = sim.advance_with(
        t_end,
        |s, h| {
            let mut q = std::mem::take(&mut s.q);
            let mut v = std::mem::take(&mut s.v);
            let out = s.try_step_with(backend, &mut q, &mut v, h);
            s.q = q;
            s.v = v;
            out
        },
        |_, _| {},
    );
    sim.anchors.clone_from(&backend.anchors);
    sim.strain_reference_mut()
        .copy_from_slice(&backend.strain_ref);
    out
}
