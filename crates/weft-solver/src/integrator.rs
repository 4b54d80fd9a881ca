//! Backward Euler with Newton's method and adaptive time steps (DESIGN §5).
//!
//! Each step solves `M (q̇⁺ - q̇) = h f(q⁺, q̇⁺)`, `q⁺ = q + h q̇⁺` for the
//! velocities `q̇⁺` by Newton's method (one iteration in `one_iteration`
//! mode). Every iteration solves `(M - h ∂f/∂q̇ - h² ∂f/∂q) Δq̇ = -R` with
//! PCG to a relative tolerance `η` (an inexact-Newton forcing term), then a
//! backtracking line search on the merit `|R|₂` accepts the largest
//! `α ∈ {1, ½, …, 2⁻¹²}` with sufficient decrease. The forcing term is
//! never below `0.1·target/|R|₂` (clamped to `[cg_tolerance, 0.5]`): no
//! linear solve is more accurate than the Newton target needs. With
//! [`Settings::adaptive_forcing`] (the default; used with the multigrid
//! preconditioner, see [`CpuBackend`]'s `adaptive_forcing`) it is the larger
//! of that and the Eisenstat–Walker term ([`eisenstat_walker`]): 0.1 in a
//! step's first iteration, then `0.9 (|R_k|₂/|R_{k-1}|₂)²`. Early
//! iterations, whose residual the nonlinearity keeps high whatever the
//! linear solve does, get loose solves; once Newton converges quadratically
//! the solves tighten. An iteration that stalled (its line search
//! backtracked, or it cut `|R|₂` by less than half) sends the next one back
//! to the tight term: a loose direction that Newton cannot use would
//! otherwise stay loose, and a nearly flat start then crawled through 20
//! iterations of 0.5% decrease each. On the 100,489-node `weft bench` step
//! with the multigrid this halved the PCG iterations (132 to 70, same 3
//! Newton iterations; `BENCHMARKS.md`). With adaptive forcing the solve
//! also stops once its residual's largest entry is a tenth of the Newton
//! target ([`PcgTolerance::absolute_inf`]): Newton's test is on `|R|∞`,
//! and the 2-norm floor above must assume the worst ratio of the two norms.
//!
//! Convergence: `|R|∞ / h ≤ newton_tolerance · F`, a residual in force units
//! relative to the force scale `F` of the step (the largest nodal force at the
//! start of the step, at least the gravity on the heaviest node, 1e-10 of the
//! largest stretch stiffness `k_s` and 1e-12 N);
//! or stagnation at the round-off floor (the line search finds no decrease
//! while the residual is inside the stagnation band, or the update changes
//! no velocity by more than 1e-12 of `|v|∞ + |g| h`). The band is
//! `|R|∞ / h ≤ min(1000 · newton_tolerance, STAGNATION_BAND_MAX) · F`
//! ([`STAGNATION_BAND_MAX`] = 1e-3): within 1000x of the target, and never
//! above a thousandth of the force scale, so a loose tolerance (the drape's
//! 1e-3) does not turn a failed line search far from equilibrium into an
//! accepted step (it rejects the step, which is retried at `h/2`). Inside
//! the band, with a Newton update below 1e-6 of `|v|∞ + |g| h`, a full
//! step without decrease is taken as that stagnation at once, without
//! backtracking.
//!
//! A step is rejected, and retried at `h/2`, when Newton does not converge
//! within `newton_max_iterations` (naming the node with the largest
//! residual), the line search finds no decrease, PCG stops without reaching a
//! useful residual, any arc-length difference `Δu` along a yarn becomes
//! non-positive (naming the yarn and nodes), any stretch strain changes by
//! more than `max_strain_change` in one step (naming the segment), or any
//! value is non-finite (naming the node). The reasons are counted in
//! [`Simulation::rejections`]. After `growth_after` accepted steps in a row
//! `h` doubles, up to `dt_max`. Steps are cut to land exactly on requested
//! times. A rejected step below `dt_min` is an error carrying the last reason.
//!
//! Backends: the loop above is written once, against
//! [`crate::step::StepBackend`] ([`Simulation::try_step_with`],
//! [`Simulation::advance_with`]); [`CpuBackend`] is the CPU implementation
//! used by [`Simulation::try_step`] and [`Simulation::advance_to`], and
//! `weft-cuda` implements the same trait on the device.

use crate::assembly::{Assembler, Energies, Tie};
use crate::bsr::B;
use crate::cholesky::SparseCholesky;
use crate::multigrid::{Hierarchy, Multigrid, MultigridOptions};
use crate::par::{inf_norm, norm2, update, worst_node};
use crate::pcg::{BlockJacobi, CpuOps, PcgResult, PcgStatus, PcgTolerance, Preconditioner, pcg_in};
use crate::step::{StepBackend, StepHost};
use nalgebra::Vector3;
use std::borrow::Cow;
use thiserror::Error;
use weft_core::{Fabric, State};

/// Time-step and Newton/PCG settings (scene keys `time_step`, `integrator`).
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Initial (and, without `adaptive`, fixed) time step (s).
    pub dt: f64,
    /// Adapt the step (halve on rejection, grow after successes).
    pub adaptive: bool,
    /// Smallest step before giving up (s).
    pub dt_min: f64,
    /// Largest step (s).
    pub dt_max: f64,
    /// Newton iterations per step.
    pub newton_max_iterations: usize,
    /// Relative residual tolerance of Newton (see module docs).
    pub newton_tolerance: f64,
    /// Relative residual tolerance of PCG (`|r| ≤ tol |b|`): that of every
    /// solve with fixed forcing; with adaptive forcing the lower bound of
    /// the forcing term (module docs).
    pub cg_tolerance: f64,
    /// PCG iteration limit.
    pub cg_max_iterations: usize,
    /// Adaptive inexact-Newton forcing (module docs, [`eisenstat_walker`]):
    /// each Newton system is solved only as accurately as the previous
    /// iteration's residual decrease suggests Newton can use. `false` solves
    /// every system to the tighter of `cg_tolerance` and what the Newton
    /// target alone needs. The Newton convergence test is the same either
    /// way. Applies where the backend takes it
    /// ([`crate::StepBackend::adaptive_forcing`]: the CPU backend with the
    /// multigrid preconditioner); ignored in `one_iteration` mode.
    pub adaptive_forcing: bool,
    /// With the multigrid preconditioner: solve with the hierarchy of an
    /// earlier matrix first, and update it only when PCG with it needs more
    /// than [`MULTIGRID_STALE_SLACK`] times the iterations that the last
    /// freshly updated hierarchy's convergence rate predicts for the
    /// tolerance asked (the solve then goes on from the iterate reached).
    /// The matrix changes little between Newton iterations and steps, and
    /// an update costs several PCG iterations. `false` updates the
    /// hierarchy for every Newton matrix.
    pub multigrid_reuse: bool,
    /// One Newton iteration per step (linearly implicit backward Euler).
    pub one_iteration: bool,
    /// Accepted steps in a row before `h` doubles.
    pub growth_after: usize,
    /// Largest change of any stretch strain in one step.
    pub max_strain_change: f64,
    /// Triangle-mesh self-collision: a step longer than this (s) that makes
    /// a mesh edge newly pass through a face is rejected
    /// ([`Rejection::LayerCrossing`]); shorter steps are accepted as they
    /// are (a layer pressed through by a force the repulsion cannot hold
    /// would otherwise halve the step to `dt_min`). Default 1e-5 s. The
    /// GarmentCode hoody's shell drape at 40 mm (2026-11-28): with steps of
    /// up to 4-5 ms its hood's halves passed through each other while
    /// sewing (5 crossings in one step, 650 a few steps later); with
    /// steps of at most 1 ms, none.
    pub layer_crossing_dt_min: f64,
    /// Preconditioner of the Newton systems.
    pub linear_solver: LinearSolver,
    /// Tuning of the multigrid preconditioner (used with
    /// [`LinearSolver::Multigrid`] and above the Cholesky limit of
    /// [`LinearSolver::Auto`]).
    pub multigrid: MultigridOptions,
    /// Whether the Newton matrix holds the strain-rate dissipation's
    /// clamped position Jacobian [SBO18 §3.4] (default `true`, as SBO18
    /// does). `false` leaves it out: the same forces and converged steps,
    /// one eigen-decomposition less per bending and shear element and
    /// Newton iteration, and on the Cusick specimens about 2-3x fewer
    /// Newton iterations and rejected steps (BENCHMARKS.md, 2026-11-26).
    /// See [`Assembler::dissipation_position_jacobian`].
    pub dissipation_position_jacobian: bool,
}

/// The preconditioner of PCG in each Newton iteration (DESIGN §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinearSolver {
    /// Block-Jacobi on the 5x5 node blocks: cheapest per iteration and
    /// memory-light, but the iteration count grows with the stiffness/mass
    /// ratio and the fabric size (thousands per solve on yarn-scale scenes).
    BlockJacobi,
    /// A sparse Cholesky factor of the system matrix
    /// ([`crate::cholesky::SparseCholesky`]), refreshed lazily: it is reused
    /// across Newton iterations and steps while PCG converges within
    /// [`CHOLESKY_STALE_ITERATIONS`] iterations, and refactored otherwise.
    /// Falls back to block-Jacobi for a solve whose factorisation fails.
    Cholesky,
    /// Aggregation multigrid with yarn-line smoothers
    /// ([`crate::multigrid`]): O(n) memory; its structure is built once per
    /// free mask and its values are recomputed for a Newton matrix when the
    /// hierarchy of an earlier one no longer serves
    /// ([`Settings::multigrid_reuse`]).
    /// Falls back to block-Jacobi for a solve whose coarsest factorisation
    /// fails.
    Multigrid,
    /// Cholesky up to [`CHOLESKY_MAX_DOFS`] free DOFs (where its factor fits
    /// in memory comfortably), multigrid above.
    Auto,
}

/// Largest number of free DOFs for which [`LinearSolver::Auto`] picks the
/// sparse Cholesky preconditioner (its factor of a 2D fabric needs roughly
/// `100·log₂(n)` non-zeros per DOF).
pub const CHOLESKY_MAX_DOFS: usize = 1_500_000;

/// A reused Cholesky factor is refreshed when PCG with it needs more than
/// this many iterations.
pub const CHOLESKY_STALE_ITERATIONS: usize = 20;

/// With [`Settings::multigrid_reuse`], a solve with a reused multigrid
/// hierarchy may take this many times the iterations predicted from the
/// convergence rate of the last solve with a freshly updated one
/// (dimensionless) before the hierarchy is updated.
pub const MULTIGRID_STALE_SLACK: f64 = 1.5;

/// The most PCG iterations a solve with a reused multigrid hierarchy may
/// take before the hierarchy is updated: [`MULTIGRID_STALE_SLACK`] times
/// `ln(eta) / ln(rate)` (the count that a per-iteration residual reduction
/// `rate` needs for the relative tolerance `eta`), plus two.
pub fn multigrid_stale_cap(rate: f64, eta: f64) -> usize {
    if !(rate > 0.0 && rate < 1.0 && eta > 0.0 && eta < 1.0) {
        return 0;
    }
    (MULTIGRID_STALE_SLACK * eta.ln() / rate.ln()).ceil() as usize + 2
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            dt: 1e-3,
            adaptive: true,
            dt_min: 1e-7,
            dt_max: 1e-2,
            newton_max_iterations: 20,
            newton_tolerance: 1e-6,
            cg_tolerance: 1e-8,
            cg_max_iterations: 10_000,
            adaptive_forcing: true,
            multigrid_reuse: true,
            one_iteration: false,
            growth_after: 4,
            max_strain_change: 0.1,
            layer_crossing_dt_min: 1e-5,
            linear_solver: LinearSolver::Auto,
            multigrid: MultigridOptions::default(),
            dissipation_position_jacobian: true,
        }
    }
}

/// Why a step attempt was rejected.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum Rejection {
    /// Newton did not reach the tolerance.
    #[error(
        "Newton did not converge in {iterations} iterations (residual {residual:.3e} N, largest at node {node}; scale {scale:.3e} N)"
    )]
    NewtonNotConverged {
        /// Iterations done.
        iterations: usize,
        /// Final `|R|∞/h` (N).
        residual: f64,
        /// Force scale (N).
        scale: f64,
        /// The node with the largest residual.
        node: usize,
    },
    /// The line search found no decrease of the residual along the Newton
    /// direction (the linearisation is poor at this step size).
    #[error(
        "line search failed at Newton iteration {iteration} (residual {residual:.3e} N, largest at node {node})"
    )]
    LineSearch {
        /// Newton iteration.
        iteration: usize,
        /// `|R|∞/h` (N) where it stopped.
        residual: f64,
        /// The node with the largest residual.
        node: usize,
    },
    /// PCG stopped at its iteration cap far from a solution (relative
    /// residual above 0.5), so the Newton direction is unusable.
    #[error(
        "PCG did not converge at Newton iteration {iteration}: {iterations} iterations left a relative residual of {relative_residual:.3e} (largest Newton residual at node {node})"
    )]
    LinearSolve {
        /// Newton iteration.
        iteration: usize,
        /// PCG iterations of the failed solve.
        iterations: usize,
        /// `|r| / |b|` where PCG stopped.
        relative_residual: f64,
        /// The node with the largest Newton residual.
        node: usize,
    },
    /// A value became NaN or infinite.
    #[error("non-finite value at node {node}")]
    NonFinite {
        /// First node with a non-finite coordinate or velocity.
        node: usize,
    },
    /// Two crossings passed each other along a yarn.
    #[error("arc-length order lost: {0}")]
    ArcLengthOrder(String),
    /// A mesh edge passed through a face of the same triangle-mesh cloth
    /// during the step ([`crate::assembly::SelfContact::check_crossings`]).
    #[error(
        "layer crossing: mesh edge {edge:?} passed through the triangle {face:?} ({count} new crossings)"
    )]
    LayerCrossing {
        /// The first new crossing's edge (end nodes).
        edge: [usize; 2],
        /// Its triangle (corner nodes).
        face: [usize; 3],
        /// Edge–face crossings the step made.
        count: usize,
    },
    /// A stretch strain jumped too far in one step.
    #[error(
        "stretch strain of segment {segment} (nodes {a}-{b}) changed by {change:.3} in one step"
    )]
    StrainJump {
        /// Segment index.
        segment: usize,
        /// Its first node.
        a: usize,
        /// Its second node.
        b: usize,
        /// The change of strain.
        change: f64,
    },
}

impl Rejection {
    /// The global node indices the reason names (the worst node, or a
    /// segment's two nodes); none for [`Rejection::ArcLengthOrder`], whose
    /// message names its yarn and nodes itself.
    pub fn nodes(&self) -> Vec<usize> {
        match *self {
            Rejection::NewtonNotConverged { node, .. }
            | Rejection::LineSearch { node, .. }
            | Rejection::LinearSolve { node, .. }
            | Rejection::NonFinite { node } => vec![node],
            Rejection::StrainJump { a, b, .. } => vec![a, b],
            Rejection::LayerCrossing { edge, face, .. } => {
                edge.iter().chain(face.iter()).copied().collect()
            }
            Rejection::ArcLengthOrder(_) => Vec::new(),
        }
    }

    /// A short key for counting rejections by reason.
    pub fn key(&self) -> &'static str {
        match self {
            Rejection::NewtonNotConverged { .. } => "newton",
            Rejection::NonFinite { .. } => "non_finite",
            Rejection::LineSearch { .. } => "line_search",
            Rejection::LinearSolve { .. } => "pcg",
            Rejection::ArcLengthOrder(_) => "arc_length_order",
            Rejection::StrainJump { .. } => "strain_jump",
            Rejection::LayerCrossing { .. } => "layer_crossing",
        }
    }
}

/// A simulation that could not continue.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum SolverError {
    /// The step fell below `dt_min`.
    #[error("time step fell below dt_min = {dt_min:e} s at t = {t:.6} s: {reason}")]
    StepTooSmall {
        /// Simulated time (s).
        t: f64,
        /// The limit (s).
        dt_min: f64,
        /// The last rejection.
        reason: Rejection,
    },
    /// A step of a fixed-step run (`adaptive: false`) was rejected: there
    /// is no smaller step to retry with.
    #[error(
        "step of {h:e} s rejected at t = {t:.6} s with adaptive stepping off (a smaller dt or adaptive: true may pass): {reason}"
    )]
    FixedStepRejected {
        /// Simulated time (s).
        t: f64,
        /// The step (s).
        h: f64,
        /// Why it was rejected.
        reason: Rejection,
    },
    /// The step backend itself failed (e.g. a CUDA driver call).
    #[error("step backend failed: {0}")]
    Backend(String),
}

impl SolverError {
    /// The rejection that ended the run, for [`SolverError::StepTooSmall`]
    /// and [`SolverError::FixedStepRejected`].
    pub fn rejection(&self) -> Option<&Rejection> {
        match self {
            SolverError::StepTooSmall { reason, .. }
            | SolverError::FixedStepRejected { reason, .. } => Some(reason),
            SolverError::Backend(_) => None,
        }
    }
}

/// One step of size `h0` (s) retried at half the size after each rejection,
/// as the adaptive controller does, at most `retries` times: the benchmark
/// protocol of `weft bench` on every backend. `try_step` attempts one step
/// of the given size (`Simulation::try_step` on the CPU, a device
/// simulation's `try_step` on CUDA); `on_reject` sees each rejected size and
/// reason.
///
/// Returns the last attempt's outcome and its step size.
///
/// # Errors
/// The first error of `try_step` itself (a backend failure).
pub fn step_halving_on_rejection<E>(
    h0: f64,
    retries: usize,
    mut try_step: impl FnMut(f64) -> Result<Result<StepStats, Rejection>, E>,
    mut on_reject: impl FnMut(f64, &Rejection),
) -> Result<(Result<StepStats, Rejection>, f64), E> {
    let mut h = h0;
    let mut rejected = 0;
    loop {
        match try_step(h)? {
            Err(e) if rejected < retries => {
                on_reject(h, &e);
                rejected += 1;
                h *= 0.5;
            }
            outcome => return Ok((outcome, h)),
        }
    }
}

/// Statistics of one accepted step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepStats {
    /// Step size (s).
    pub h: f64,
    /// Newton iterations.
    pub newton_iterations: usize,
    /// PCG iterations summed over Newton iterations.
    pub cg_iterations: usize,
    /// Final `|R|∞/h` (N).
    pub residual: f64,
    /// Assemblies of the residual and system matrix: one at the start of
    /// the step, one for each Newton iteration after the first, and one
    /// more when the first matrix is found indefinite.
    pub assemblies: usize,
    /// Assemblies of the residual alone, without the matrix: the line
    /// search's trials (one per Newton iteration and backtracking halving).
    pub residual_evaluations: usize,
    /// Wall time spent in the assemblies and residual evaluations (s).
    pub assembly_seconds: f64,
    /// Wall time spent in the linear solves, preconditioner set-up
    /// included (s).
    pub solve_seconds: f64,
}

/// Handle: nodes whose positions follow `x0 + d(t)`, `d` piecewise linear in
/// keyframes `(t, d)` (m), held at the last keyframe afterwards.
#[derive(Clone, Debug, PartialEq)]
pub struct Handle {
    /// Global node indices.
    pub nodes: Vec<usize>,
    /// `(time s, displacement m)`, times increasing.
    pub keyframes: Vec<(f64, [f64; 3])>,
}

impl Handle {
    /// Displacement at time `t`.
    pub fn displacement(&self, t: f64) -> Vector3<f64> {
        let k = &self.keyframes;
        if k.is_empty() {
            return Vector3::zeros();
        }
        if t <= k[0].0 {
            return Vector3::from(k[0].1);
        }
        for w in k.windows(2) {
            let ((t0, d0), (t1, d1)) = (w[0], w[1]);
            if t <= t1 {
                let s = if t1 > t0 { (t - t0) / (t1 - t0) } else { 1.0 };
                return Vector3::from(d0) * (1.0 - s) + Vector3::from(d1) * s;
            }
        }
        Vector3::from(k[k.len() - 1].1)
    }
}

/// Everything of a [`Simulation`] that changes as it runs, for checkpoints
/// ([`Simulation::checkpoint`], [`Simulation::restore`]): a simulation
/// built from the same scene and restored from it takes the same steps,
/// bit for bit, as the one it was taken from (with the direct solver or a
/// preconditioner rebuilt per matrix; a multigrid hierarchy reused across
/// steps, [`Settings::multigrid_reuse`], is rebuilt at the restore, which
/// changes the iterates within the PCG tolerance). Flat vectors are
/// `5 n` long (x, y, z, u, v per node).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimCheckpoint {
    /// Simulated time (s).
    pub t: f64,
    /// Natural step size (s).
    pub h: f64,
    /// Generalised coordinates (m).
    pub q: Vec<f64>,
    /// Generalised velocities (m/s).
    pub v: Vec<f64>,
    /// Friction anchors (m, arc length).
    pub anchors: Vec<f64>,
    /// Energy dissipated so far (J).
    pub dissipated: f64,
    /// Rejections so far, by [`Rejection::key`].
    pub rejections: std::collections::BTreeMap<String, usize>,
    /// Accepted steps since the step size last changed (the growth
    /// counter of the adaptive step control).
    pub accepted_in_row: usize,
}

/// Every [`Rejection::key`].
const REJECTION_KEYS: [&str; 7] = [
    "newton",
    "non_finite",
    "line_search",
    "pcg",
    "arc_length_order",
    "strain_jump",
    "layer_crossing",
];

/// A running simulation: the assembler plus the state as flat vectors
/// (`5 n` each: x, y, z, u, v per node).
pub struct Simulation {
    /// The assembler (owns the fabric and the system matrix).
    pub assembler: Assembler,
    /// Settings.
    pub settings: Settings,
    /// Simulated time (s).
    pub t: f64,
    /// Current natural step size (s).
    pub h: f64,
    /// Generalised coordinates.
    pub q: Vec<f64>,
    /// Generalised velocities.
    pub v: Vec<f64>,
    /// Friction anchors.
    pub anchors: Vec<f64>,
    /// Energy dissipated by the damping model so far (J).
    pub dissipated: f64,
    /// Rejections so far, by [`Rejection::key`].
    pub rejections: std::collections::BTreeMap<&'static str, usize>,
    /// Handles (prescribed positions).
    pub handles: Vec<Handle>,
    free: Vec<f64>,
    handle_x0: Vec<Vec<Vector3<f64>>>,
    accepted_in_row: usize,
    gravity_scale: f64,
    residual: Vec<f64>,
    strain_ref: Vec<f64>,
    cpu: CpuBackend,
    /// Number of free DOFs (the free mask is fixed at construction).
    free_dofs: usize,
}

impl Simulation {
    /// A simulation of `fabric` from its initial state under gravity
    /// `gravity` (m/s²) with `settings` and `handles`. Handle nodes become
    /// Dirichlet DOFs (positions).
    pub fn new(
        fabric: Fabric,
        gravity: Vector3<f64>,
        settings: Settings,
        handles: Vec<Handle>,
    ) -> Self {
        Self::with_ties(fabric, gravity, settings, handles, Vec::new())
    }

    /// As [`Simulation::new`], with seam ties in the assembler
    /// ([`Assembler::with_ties`]; set `assembler.tie_stiffness` and
    /// `assembler.tie_damping` to activate them).
    pub fn with_ties(
        fabric: Fabric,
        gravity: Vector3<f64>,
        settings: Settings,
        handles: Vec<Handle>,
        ties: Vec<Tie>,
    ) -> Self {
        let n = fabric.node_count();
        let s = &fabric.initial;
        let mut q = vec![0.0; B * n];
        let mut v = vec![0.0; B * n];
        let mut free = vec![0.0; B * n];
        for i in 0..n {
            q[B * i..B * i + B].copy_from_slice(&s.node_q(i));
            v[B * i..B * i + 3].copy_from_slice(s.x_dot[i].as_slice());
            v[B * i + 3] = s.u_dot[i];
            v[B * i + 4] = s.v_dot[i];
            for k in 0..B {
                free[B * i + k] = if fabric.free[i][k] { 1.0 } else { 0.0 };
            }
        }
        for hd in &handles {
            for &nd in &hd.nodes {
                free[B * nd..B * nd + 3].iter_mut().for_each(|f| *f = 0.0);
            }
        }
        let handle_x0 = handles
            .iter()
            .map(|hd| hd.nodes.iter().map(|&nd| s.x[nd]).collect())
            .collect();
        let anchors = s.anchors.clone();
        let segs = fabric.elements.segments.len();
        // Floor of the Newton force scale (N): the largest gravitational
        // nodal force, and 1e-10 of the largest stretch stiffness (the
        // round-off of yarn tensions is ~1e-16 k_s, so a near-static scene
        // without gravity, such as sewing, still has a reachable target).
        // Membrane triangles count with their larger tensile modulus times
        // their first rest edge, the tension of a unit strain across it.
        let membrane = fabric.elements.triangles.iter().map(|t| {
            let [a, b, _] = t.rest;
            t.stiffness.max_tensile() * (b[0] - a[0]).hypot(b[1] - a[1])
        });
        let stiffness_floor = fabric
            .materials
            .iter()
            .map(|m| m.stretch_stiffness)
            .chain(membrane)
            .fold(0.0f64, f64::max)
            * 1e-10;
        let gravity_scale = (fabric
            .lumped_masses(s)
            .iter()
            .fold(0.0f64, |a, b| a.max(*b))
            * gravity.norm())
        .max(stiffness_floor);
        let h = settings.dt;
        let mut assembler = Assembler::with_ties(fabric, gravity, ties);
        assembler.dissipation_position_jacobian = settings.dissipation_position_jacobian;
        let mut sim = Self {
            assembler,
            settings,
            t: 0.0,
            h,
            q,
            v,
            anchors,
            dissipated: 0.0,
            rejections: Default::default(),
            handles,
            free,
            handle_x0,
            accepted_in_row: 0,
            gravity_scale,
            residual: vec![0.0; B * n],
            strain_ref: vec![0.0; segs],
            cpu: CpuBackend {
                cholesky: None,
                multigrid: None,
                multigrid_rate: None,
                multigrid_updates: 0,
                strains: Vec::new(),
                len: B * n,
            },
            free_dofs: 0,
        };
        sim.free_dofs = sim.free.iter().filter(|&&f| f != 0.0).count();
        sim.strain_ref = stretch_strains(&sim.assembler.fabric, &sim.q);
        sim
    }

    /// The strain reference of the strain-jump check: the stretch strain of
    /// every segment at the last accepted state ([`stretch_strains`] of
    /// `q`, one per `fabric.elements.segments`). A device backend uploads it
    /// once and keeps its own copy.
    pub fn strain_reference(&self) -> &[f64] {
        &self.strain_ref
    }

    /// Mutable access to the strain reference (a device backend writes its
    /// copy back here when it syncs the state).
    pub fn strain_reference_mut(&mut self) -> &mut [f64] {
        &mut self.strain_ref
    }

    /// The state that changes as the simulation runs ([`SimCheckpoint`]).
    pub fn checkpoint(&self) -> SimCheckpoint {
        SimCheckpoint {
            t: self.t,
            h: self.h,
            q: self.q.clone(),
            v: self.v.clone(),
            anchors: self.anchors.clone(),
            dissipated: self.dissipated,
            rejections: self
                .rejections
                .iter()
                .map(|(k, v)| ((*k).to_owned(), *v))
                .collect(),
            accepted_in_row: self.accepted_in_row,
        }
    }

    /// Continues from `c`, taken from a simulation of the same scene: sets
    /// the state, the step control and the counters, and recomputes the
    /// strain reference from `q` (it is the strains of the last accepted
    /// state).
    ///
    /// # Errors
    /// A message naming the field when a vector's length does not match
    /// this simulation (`5 n` for `q` and `v`, one anchor per fabric
    /// anchor), a value is not finite, the step size is not positive, or a
    /// rejection key is unknown; the simulation is then unchanged.
    pub fn restore(&mut self, c: &SimCheckpoint) -> Result<(), String> {
        let n = self.q.len();
        for (name, len, want) in [
            ("q", c.q.len(), n),
            ("v", c.v.len(), n),
            ("anchors", c.anchors.len(), self.anchors.len()),
        ] {
            if len != want {
                return Err(format!(
                    "{name} has {len} entries, the simulation {want} (a checkpoint of another scene?)"
                ));
            }
        }
        let finite = [c.t, c.h, c.dissipated]
            .iter()
            .chain(&c.q)
            .chain(&c.v)
            .chain(&c.anchors)
            .all(|x| x.is_finite());
        if !finite {
            return Err("a value is not finite".into());
        }
        if c.h <= 0.0 {
            return Err(format!("step size h = {} s is not positive", c.h));
        }
        let mut rejections = std::collections::BTreeMap::new();
        for (k, v) in &c.rejections {
            let key = REJECTION_KEYS.iter().find(|r| *r == k).ok_or_else(|| {
                format!("unknown rejection {k:?}; expected one of {REJECTION_KEYS:?}")
            })?;
            rejections.insert(*key, *v);
        }
        self.t = c.t;
        self.h = c.h;
        self.q.clone_from(&c.q);
        self.v.clone_from(&c.v);
        self.anchors.clone_from(&c.anchors);
        self.dissipated = c.dissipated;
        self.rejections = rejections;
        self.accepted_in_row = c.accepted_in_row;
        self.strain_ref = stretch_strains(&self.assembler.fabric, &self.q);
        Ok(())
    }

    /// Makes the next Newton solve refresh the preconditioner the CPU
    /// backend reuses across steps (the sparse Cholesky factor, and a
    /// multigrid hierarchy's values, [`LinearSolver`]) from its own matrix,
    /// as a new simulation does. `weft run` calls it at every output frame,
    /// so a run resumed from a checkpoint taken there continues bit for
    /// bit as the run would have (with the Cholesky or block-Jacobi
    /// preconditioner; a multigrid hierarchy is rebuilt at a resume).
    pub fn forget_reused_preconditioner(&mut self) {
        if let Some(c) = &mut self.cpu.cholesky {
            c.forget_factor();
        }
        self.cpu.multigrid_rate = None;
    }

    /// The DOF mask of the Newton systems (`5 n`): `1.0` for a free DOF,
    /// `0.0` for a fixed one (pinned DOFs of the fabric and the position
    /// DOFs of handle nodes).
    pub fn free_mask(&self) -> &[f64] {
        &self.free
    }

    /// How many times the CPU backend has built or updated its multigrid
    /// hierarchy (once per Newton matrix without
    /// [`Settings::multigrid_reuse`], less often with it); 0 unless the
    /// multigrid preconditioner is in use.
    pub fn multigrid_updates(&self) -> usize {
        self.cpu.multigrid_updates
    }

    /// Assembles the first Newton system of a backward-Euler step of size
    /// `h` (s) from the current state, with projected (SPD) element
    /// Hessians, into [`Assembler::matrix`] and returns its right-hand side
    /// `-R` (length `5 n`, N·s, zero on the fixed DOFs of
    /// [`Simulation::free_mask`]): the system PCG solves for the velocity
    /// update (DESIGN §5). For preconditioner studies and benchmarks; the
    /// step itself does this inside Newton. Leaves the assembler in
    /// projected-Hessian mode.
    pub fn newton_system(&mut self, h: f64) -> Vec<f64> {
        let (q, v) = (self.q.clone(), self.v.clone());
        let mut r = vec![0.0; q.len()];
        self.assembler.exact_hessians = false;
        self.assembler.begin_step(&q, &v, h, self.t + h);
        self.assembler
            .assemble(&q, &v, &v, h, &self.anchors, &mut r, true);
        r.iter().zip(&self.free).map(|(x, f)| -x * f).collect()
    }

    /// The current state in weft-core's struct-of-arrays form.
    pub fn state(&self) -> State {
        let n = self.assembler.fabric.node_count();
        let mut s = self.assembler.fabric.initial.clone();
        for i in 0..n {
            let o = B * i;
            s.x[i] = Vector3::new(self.q[o], self.q[o + 1], self.q[o + 2]);
            s.u[i] = self.q[o + 3];
            s.v[i] = self.q[o + 4];
            s.x_dot[i] = Vector3::new(self.v[o], self.v[o + 1], self.v[o + 2]);
            s.u_dot[i] = self.v[o + 3];
            s.v_dot[i] = self.v[o + 4];
        }
        s.anchors.clone_from(&self.anchors);
        s
    }

    /// Energies at the current state (kinetic with the current mass matrix).
    pub fn energies(&mut self) -> Energies {
        let (q, v) = (self.q.clone(), self.v.clone());
        let mut r = std::mem::take(&mut self.residual);
        self.assembler.time = self.t;
        let (e, _) = self
            .assembler
            .assemble(&q, &v, &v, 0.0, &self.anchors, &mut r, false);
        self.residual = r;
        e
    }

    /// The rejections so far with their reasons as owned keys
    /// ([`Rejection::key`] to count), reasons that never occurred left out:
    /// the form run and drape summaries serialise.
    pub fn rejection_counts(&self) -> std::collections::BTreeMap<String, usize> {
        self.rejections
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| ((*k).to_owned(), *n))
            .collect()
    }

    /// Attempts one backward-Euler step of size `h` on the CPU. On success
    /// the state advances; on rejection it is unchanged.
    ///
    /// # Errors
    /// The [`Rejection`] reason.
    pub fn try_step(&mut self, h: f64) -> Result<StepStats, Rejection> {
        let mut q = std::mem::take(&mut self.q);
        let mut v = std::mem::take(&mut self.v);
        let mut cpu = std::mem::take(&mut self.cpu);
        let res = self.try_step_with(&mut cpu, &mut q, &mut v, h);
        self.q = q;
        self.v = v;
        self.cpu = cpu;
        match res {
            Ok(r) => r,
            Err(never) => match never {},
        }
    }

    /// Attempts one backward-Euler step of size `h` (s) with `backend`, on
    /// the state `(q, v)` held by the backend (`5 n` each); the simulation's
    /// own `q` and `v` are not read. The Newton loop (DESIGN §5, module
    /// docs): inexact Newton with the forcing term `η`, exact Hessians first
    /// and projected ones once the matrix is found indefinite, backtracking
    /// line search on `|R|₂`, convergence in force units, then the
    /// acceptance checks (non-finite values; arc-length order and strain
    /// jumps by [`StepBackend::check_accept`]; then, for triangle-mesh
    /// self-collision, [`layer_crossing`] on the host). On success `q`, `v`, the
    /// time and the dissipated energy advance, and the backend commits the
    /// strain reference and the friction anchors ([`StepBackend::accept`]:
    /// the simulation's own `anchors` for the CPU backend, the device copy
    /// for a device backend); on rejection nothing changes.
    ///
    /// # Errors
    /// `Err(e)` for a failure of the backend itself; `Ok(Err(reason))` for a
    /// rejected step.
    pub fn try_step_with<S: StepBackend>(
        &mut self,
        backend: &mut S,
        q: &mut S::Vector,
        v: &mut S::Vector,
        h: f64,
    ) -> Result<Result<StepStats, Rejection>, S::Error> {
        let Simulation {
            assembler,
            settings,
            anchors,
            handles,
            free,
            handle_x0,
            strain_ref,
            gravity_scale,
            free_dofs,
            t,
            dissipated,
            ..
        } = self;
        let gravity_norm = assembler.gravity.norm();
        let mut host = StepHost {
            assembler,
            settings,
            free,
            free_dofs: *free_dofs,
            anchors,
            strain_ref,
            handles,
            handle_x0,
            t: *t,
        };
        let out = newton_step(&mut host, backend, q, v, h, *gravity_scale, gravity_norm)?;
        let (stats, energies, q_new, v_new) = match out {
            Ok(x) => x,
            Err(reason) => return Ok(Err(reason)),
        };
        // Acceptance checks (arc-length order, strain jumps) and the commit
        // (strain reference, friction anchors) run in the backend, on its
        // own copy of q_new.
        if let Some(reason) = backend.check_accept(&mut host, &q_new)? {
            return Ok(Err(reason));
        }
        // Triangle-mesh self-collision: no mesh edge newly through a face,
        // checked on the host for every backend.
        if needs_layer_check(&host) {
            let q_host = backend.to_host(&q_new)?;
            if let Some(reason) = layer_crossing(&host, &q_host) {
                return Ok(Err(reason));
            }
        }
        backend.accept(&mut host, &q_new, h)?;
        *t += h;
        *dissipated += h * energies.dissipation_power;
        *q = q_new;
        *v = v_new;
        Ok(Ok(stats))
    }

    /// Advances to time `t_end` (s) with adaptive steps on the CPU, landing
    /// exactly on it, calling `on_step` after each accepted step. Returns the
    /// stats of the accepted steps.
    ///
    /// # Errors
    /// [`SolverError::StepTooSmall`] when a step below `dt_min` is rejected;
    /// [`SolverError::FixedStepRejected`] when a step is rejected with
    /// adaptive stepping off.
    pub fn advance_to(
        &mut self,
        t_end: f64,
        on_step: impl FnMut(&Simulation, &StepStats),
    ) -> Result<Vec<StepStats>, SolverError> {
        self.advance_with(
            t_end,
            |s, h| Ok::<_, std::convert::Infallible>(s.try_step(h)),
            on_step,
        )
    }

    /// The adaptive step control of [`Simulation::advance_to`] around any
    /// step function (`try_step(sim, h)`, e.g. [`Simulation::try_step_with`]
    /// on a device backend): steps are cut to land on `t_end`, halved on
    /// rejection (counted in [`Simulation::rejections`]) and doubled after
    /// `growth_after` accepted steps in a row, up to `dt_max`.
    ///
    /// # Errors
    /// [`SolverError::StepTooSmall`] when a step below `dt_min` is rejected;
    /// [`SolverError::FixedStepRejected`] when a step is rejected with
    /// adaptive stepping off; [`SolverError::Backend`] when `try_step`
    /// fails.
    pub fn advance_with<E: std::fmt::Display>(
        &mut self,
        t_end: f64,
        mut try_step: impl FnMut(&mut Simulation, f64) -> Result<Result<StepStats, Rejection>, E>,
        mut on_step: impl FnMut(&Simulation, &StepStats),
    ) -> Result<Vec<StepStats>, SolverError> {
        let mut out = Vec::new();
        while t_end - self.t > 1e-12 * t_end.abs().max(1.0) {
            let remaining = t_end - self.t;
            let cut = remaining < self.h * (1.0 + 1e-9);
            let h = if cut { remaining } else { self.h };
            let attempt = try_step(self, h).map_err(|e| SolverError::Backend(e.to_string()))?;
            match attempt {
                Ok(st) => {
                    if cut {
                        self.t = t_end;
                    }
                    on_step(self, &st);
                    out.push(st);
                    self.accepted_in_row += 1;
                    if self.settings.adaptive && self.accepted_in_row >= self.settings.growth_after
                    {
                        self.h = (self.h * 2.0).min(self.settings.dt_max);
                        self.accepted_in_row = 0;
                    }
                }
                Err(reason) => {
                    *self.rejections.entry(reason.key()).or_insert(0) += 1;
                    self.accepted_in_row = 0;
                    let next = h * 0.5;
                    if !self.settings.adaptive {
                        return Err(SolverError::FixedStepRejected {
                            t: self.t,
                            h,
                            reason,
                        });
                    }
                    if next < self.settings.dt_min {
                        return Err(SolverError::StepTooSmall {
                            t: self.t,
                            dt_min: self.settings.dt_min,
                            reason,
                        });
                    }
                    self.h = next;
                }
            }
        }
        Ok(out)
    }
}

/// Stretch strains `|Δx|/Δu - 1` (dimensionless) of every segment of `f`
/// (one per `f.elements.segments`, in order) at the coordinates `q`
/// (`5 n`; `Δu` the arc-length difference of the segment's family).
pub fn stretch_strains(f: &Fabric, q: &[f64]) -> Vec<f64> {
    let mut out = Vec::new();
    stretch_strains_into(f, q, &mut out);
    out
}

/// [`stretch_strains`] into `out` (replaced; its allocation is reused).
pub fn stretch_strains_into(f: &Fabric, q: &[f64], out: &mut Vec<f64>) {
    out.clear();
    out.extend(f.elements.segments.iter().map(|s| {
        let (a, b, k) = (B * s.a, B * s.b, s.family.slot());
        let dx = Vector3::new(q[b] - q[a], q[b + 1] - q[a + 1], q[b + 2] - q[a + 2]);
        dx.norm() / (q[b + k] - q[a + k]) - 1.0
    }));
}

/// A converged Newton solve: stats, energies at the solution, `q_n + h v`
/// and `v`.
type NewtonOutcome<V> = (StepStats, Energies, V, V);

/// What [`timed`] counts in [`StepStats`]: an assembly with the matrix,
/// a residual-only evaluation (line-search trial) or a linear solve.
#[derive(Clone, Copy)]
enum Work {
    Matrix,
    Residual,
    Solve,
}

/// Runs `f` (one backend call), counts it in `stats` and adds its wall
/// time to the assembly or solve seconds.
fn timed<T>(stats: &mut StepStats, work: Work, f: impl FnOnce() -> T) -> T {
    let start = std::time::Instant::now();
    let out = f();
    let seconds = start.elapsed().as_secs_f64();
    match work {
        Work::Matrix => stats.assemblies += 1,
        Work::Residual => stats.residual_evaluations += 1,
        Work::Solve => {}
    }
    match work {
        Work::Matrix | Work::Residual => stats.assembly_seconds += seconds,
        Work::Solve => stats.solve_seconds += seconds,
    }
    out
}

/// The Newton loop of one step (see [`Simulation::try_step_with`]) up to
/// the non-finite check and `q⁺ = q_n + h v`.
#[allow(clippy::too_many_arguments)]
fn newton_step<S: StepBackend>(
    host: &mut StepHost<'_>,
    be: &mut S,
    q_n: &S::Vector,
    v_n: &S::Vector,
    h: f64,
    gravity_scale: f64,
    gravity_norm: f64,
) -> Result<Result<NewtonOutcome<S::Vector>, Rejection>, S::Error> {
    let settings = host.settings;
    // Collider time and self-collision pairs for this step; every step
    // starts with the exact elastic Hessians (quadratic Newton) and
    // switches to their PSD projections when the matrix is indefinite.
    let mut v = be.begin_step(host, q_n, v_n, h)?;
    let mut stats = StepStats {
        h,
        ..Default::default()
    };
    host.assembler.exact_hessians = true;
    let mut r = be.zeros()?;
    let mut energies = timed(&mut stats, Work::Matrix, || {
        be.assemble(host, q_n, v_n, &v, h, &mut r, true)
    })?;
    // Force scale: at v = v_n the residual is -h f, so |R|∞/h is the
    // largest nodal force of the step; gravity on the heaviest node is a
    // floor for scenes starting at rest and unstrained.
    let r_inf = be.inf_norm(&r)?;
    let scale = (r_inf / h).max(gravity_scale).max(1e-12);
    let mut rnorm = be.norm2(&r)?;
    let mut residual_inf = r_inf / h;
    let max_it = if settings.one_iteration {
        1
    } else {
        settings.newton_max_iterations
    };
    let mut converged = residual_inf <= settings.newton_tolerance * scale;
    // `dv` solves `A dv = R`: the Newton update is `-dv`. Solving with `R`
    // itself instead of `-R` saves a vector of the system's size; PCG's
    // iterates for `-R` are exactly the negated ones (every operation is
    // linear and IEEE rounding is symmetric in sign), so nothing changes.
    let mut dv = be.zeros()?;
    let mut v_try = be.zeros()?;
    let mut r_try = be.zeros()?;
    // Previous |R|₂ for the Eisenstat–Walker term; whether the previous
    // iteration stalled (backtracked, or cut |R|₂ by less than half).
    let mut forcing_prev: Option<f64> = None;
    let mut stalled = false;
    let adaptive = be.adaptive_forcing(host);
    while !converged && stats.newton_iterations < max_it {
        stats.newton_iterations += 1;
        be.set_zero(&mut dv)?;
        // Inexact Newton: solve only as far as the Newton target needs
        // (η ≥ 0.1·target/|R|, within [cg_tolerance, 0.5]) and, with
        // adaptive forcing, only as far as the nonlinearity lets this
        // iteration's residual fall (module docs).
        let target = settings.newton_tolerance * scale * h;
        let floor = (0.1 * target / rnorm.max(1e-300)).clamp(settings.cg_tolerance, 0.5);
        let eta = if adaptive && !settings.one_iteration && !stalled {
            eisenstat_walker(forcing_prev, rnorm).max(floor)
        } else {
            floor
        };
        forcing_prev = Some(rnorm);
        // With adaptive forcing the solve also stops once no residual entry
        // exceeds a tenth of the Newton target: the next residual is the
        // linear one plus the nonlinear remainder, and a linear residual
        // far below the target in Newton's own norm buys nothing.
        let tolerance = PcgTolerance {
            relative: eta,
            absolute_inf: if adaptive && !settings.one_iteration {
                0.1 * target
            } else {
                0.0
            },
        };
        // The line-search buffers are idle during the solve: PCG works in
        // them.
        let spare = [&mut v_try, &mut r_try];
        let (mut res, indefinite) = timed(&mut stats, Work::Solve, || {
            be.solve(host, &r, &mut dv, tolerance, spare)
        })?;
        stats.cg_iterations += res.iterations;
        if indefinite && host.assembler.exact_hessians {
            // Switch this step to the PSD-projected elastic Hessians and
            // solve again at the same iterate.
            host.assembler.exact_hessians = false;
            timed(&mut stats, Work::Matrix, || {
                be.assemble_matrix(host, q_n, v_n, &v, h, &mut r_try)
            })?;
            be.set_zero(&mut dv)?;
            let spare = [&mut v_try, &mut r_try];
            let (again, _) = timed(&mut stats, Work::Solve, || {
                be.solve(host, &r, &mut dv, tolerance, spare)
            })?;
            res = again;
            stats.cg_iterations += res.iterations;
        }
        if res.status == PcgStatus::MaxIterations && res.relative_residual > 0.5 {
            return Ok(Err(Rejection::LinearSolve {
                iteration: stats.newton_iterations,
                iterations: res.iterations,
                relative_residual: res.relative_residual,
                node: be.worst_node(&r)?,
            }));
        }
        // Backtracking line search on |R|₂: the largest α = 2^-k
        // (k ≤ 12) with sufficient decrease; none found rejects the step.
        // Trials evaluate the residual alone: most are either backtracked
        // from or the step's last, so their matrices would go unused (the
        // matrix is built below at the accepted iterate when another Newton
        // iteration follows; BENCHMARKS.md 2026-11-28).
        // Inside the stagnation band and with a Newton update below 1e-6 of
        // the velocity scale, the residual is at the round-off floor of the
        // forces: a full step without decrease means stagnation, and
        // backtracking would only spend assemblies on round-off.
        let dv_inf = be.inf_norm(&dv)?;
        let floor_band = residual_inf <= stagnation_band(settings.newton_tolerance) * scale;
        let mut alpha: f64 = 1.0;
        let mut stagnated = false;
        loop {
            be.combine(&v, -alpha, &dv, &mut v_try)?;
            let e = timed(&mut stats, Work::Residual, || {
                be.assemble(host, q_n, v_n, &v_try, h, &mut r_try, false)
            })?;
            let rn = be.norm2(&r_try)?;
            if rn.is_finite() && (rn <= (1.0 - 1e-4 * alpha) * rnorm || settings.one_iteration) {
                std::mem::swap(&mut v, &mut v_try);
                std::mem::swap(&mut r, &mut r_try);
                stalled = alpha < 1.0 || rn > 0.5 * rnorm;
                rnorm = rn;
                energies = e;
                break;
            }
            if alpha == 1.0 && floor_band {
                let v_scale = be.inf_norm(&v)? + gravity_norm * h + 1e-12;
                if dv_inf <= 1e-6 * v_scale {
                    stagnated = true;
                    break;
                }
            }
            alpha *= 0.5;
            if alpha < 1.0 / 4096.0 {
                // No decrease along the Newton direction: stagnation at
                // round-off counts as converged, anything else rejects.
                if floor_band {
                    stagnated = true;
                    break;
                }
                return Ok(Err(Rejection::LineSearch {
                    iteration: stats.newton_iterations,
                    residual: residual_inf,
                    node: be.worst_node(&r)?,
                }));
            }
        }
        residual_inf = be.inf_norm(&r)? / h;
        // Stagnation at round-off: the update no longer changes v.
        let v_scale = be.inf_norm(&v)? + gravity_norm * h + 1e-12;
        let update = alpha * dv_inf;
        converged = stagnated
            || residual_inf <= settings.newton_tolerance * scale
            || update <= 1e-12 * v_scale;
        if !converged && stats.newton_iterations < max_it {
            // The next solve's matrix at the accepted iterate; its residual
            // and energies are the trial's (`r`, `energies`), so the
            // backend's copy of them goes to the idle `r_try`.
            timed(&mut stats, Work::Matrix, || {
                be.assemble_matrix(host, q_n, v_n, &v, h, &mut r_try)
            })?;
        }
    }
    stats.residual = residual_inf;
    if let Some(i) = be.first_non_finite(&v)? {
        return Ok(Err(Rejection::NonFinite { node: i / B }));
    }
    if !converged && !settings.one_iteration {
        return Ok(Err(Rejection::NewtonNotConverged {
            iterations: stats.newton_iterations,
            residual: residual_inf,
            scale,
            node: be.worst_node(&r)?,
        }));
    }
    let mut q_new = be.zeros()?;
    be.advance(q_n, &v, h, &mut q_new)?;
    Ok(Ok((stats, energies, q_new, v)))
}

/// Largest stagnation band of Newton's convergence test, relative to the
/// step's force scale `F` (dimensionless; module docs). A line search
/// that finds no decrease counts as stagnation at round-off only while
/// `|R|∞ / h ≤ min(1000 · newton_tolerance, STAGNATION_BAND_MAX) · F`;
/// above it the step is rejected.
pub const STAGNATION_BAND_MAX: f64 = 1e-3;

/// The stagnation band for a Newton tolerance, relative to the force
/// scale `F` (dimensionless): `min(1000 · newton_tolerance,`
/// [`STAGNATION_BAND_MAX`]`)`.
fn stagnation_band(newton_tolerance: f64) -> f64 {
    (1e3 * newton_tolerance).min(STAGNATION_BAND_MAX)
}

/// Forcing term of the first Newton iteration of a step with
/// [`Settings::adaptive_forcing`], and the largest one (dimensionless).
pub const FORCING_MAX: f64 = 0.1;

/// The Eisenstat–Walker forcing term, choice 2 with `γ = 0.9`, `α = 2`
/// [Eisenstat & Walker, *SIAM J. Sci. Comput.* 17(1), 1996, eq. 2.6]:
/// `η_k = γ (|R_k| / |R_{k-1}|)²`, at most [`FORCING_MAX`] (their safeguard
/// 2.7 only acts for `η_{k-1}` above 0.33, which the cap excludes). `prev`
/// is the previous iteration's `|R|₂`, `None` in the first iteration of a
/// step (which gets [`FORCING_MAX`]); `rnorm` is the current `|R|₂`
/// (any consistent unit).
pub fn eisenstat_walker(prev: Option<f64>, rnorm: f64) -> f64 {
    match prev {
        None => FORCING_MAX,
        Some(r_prev) => (0.9 * (rnorm / r_prev.max(1e-300)).powi(2)).min(FORCING_MAX),
    }
}

/// The CPU backend of the step: assembly by [`Assembler::assemble`], PCG
/// with the sparse Cholesky, multigrid or block-Jacobi preconditioner
/// ([`LinearSolver`]), vector operations with rayon on host `Vec<f64>`.
#[derive(Default)]
pub struct CpuBackend {
    cholesky: Option<SparseCholesky>,
    multigrid: Option<Hierarchy>,
    /// Per-iteration residual reduction `relres^(1/iterations)` of the last
    /// solve with a freshly updated hierarchy ([`Settings::multigrid_reuse`]).
    multigrid_rate: Option<f64>,
    /// Multigrid hierarchies built or updated so far.
    multigrid_updates: usize,
    /// The strains of the last checked step (`check_accept` to `accept`).
    strains: Vec<f64>,
    /// Vector length `5 n`.
    len: usize,
}

impl CpuBackend {
    /// Whether the Newton systems use the sparse Cholesky preconditioner.
    fn use_cholesky(host: &StepHost<'_>) -> bool {
        match host.settings.linear_solver {
            LinearSolver::BlockJacobi | LinearSolver::Multigrid => false,
            LinearSolver::Cholesky => true,
            LinearSolver::Auto => host.free_dofs <= CHOLESKY_MAX_DOFS,
        }
    }

    /// Whether the Newton systems use the multigrid preconditioner.
    fn use_multigrid(host: &StepHost<'_>) -> bool {
        match host.settings.linear_solver {
            LinearSolver::BlockJacobi | LinearSolver::Cholesky => false,
            LinearSolver::Multigrid => true,
            LinearSolver::Auto => host.free_dofs > CHOLESKY_MAX_DOFS,
        }
    }
}

impl StepBackend for CpuBackend {
    type Vector = Vec<f64>;
    type Error = std::convert::Infallible;

    fn zeros(&mut self) -> Result<Vec<f64>, Self::Error> {
        Ok(vec![0.0; self.len])
    }

    /// Adaptive forcing with the multigrid preconditioner only: there a
    /// PCG iteration costs about a tenth of a Newton iteration's assembly
    /// and hierarchy update, and the tight term spent half the step's
    /// iterations on solves the nonlinearity then discarded. The sparse
    /// Cholesky solves in a few iterations anyway, and block-Jacobi stays
    /// on the tight term, as the CUDA backend (block-Jacobi) does, so the
    /// two keep agreeing step by step.
    fn adaptive_forcing(&self, host: &StepHost<'_>) -> bool {
        host.settings.adaptive_forcing && Self::use_multigrid(host)
    }

    fn begin_step(
        &mut self,
        host: &mut StepHost<'_>,
        q_n: &Vec<f64>,
        v_n: &Vec<f64>,
        h: f64,
    ) -> Result<Vec<f64>, Self::Error> {
        let mut v = v_n.clone();
        // Pinned DOFs 0, handle DOFs (x(t + h) - x_n)/h.
        update(&mut v, |i, v| if host.free[i] == 0.0 { 0.0 } else { v });
        for (i, x) in host.handle_velocities(q_n, h) {
            v[i] = x;
        }
        host.assembler.begin_step(q_n, v_n, h, host.t + h);
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
    ) -> Result<Energies, Self::Error> {
        r.resize(q_n.len(), 0.0);
        let (e, _) = host
            .assembler
            .assemble(q_n, v_n, v, h, host.anchors, r, with_matrix);
        mask(r, host.free);
        Ok(e)
    }

    /// Solves `A dv = rhs` (A = the assembled system matrix) by PCG to
    /// `tolerance`, starting from `dv`. With the Cholesky
    /// preconditioner a factor from an earlier matrix is tried first with
    /// at most [`CHOLESKY_STALE_ITERATIONS`] iterations; if that does not
    /// converge the matrix is refactored and the solve continues from the
    /// iterate reached. The multigrid hierarchy is reused the same way
    /// ([`Settings::multigrid_reuse`], capped by [`multigrid_stale_cap`]).
    /// Returns the PCG result and whether `A` was found
    /// indefinite (a failed factorisation or a negative-curvature direction);
    /// with the projected (SPD) matrix a failed factorisation falls back to
    /// block-Jacobi instead.
    fn solve(
        &mut self,
        host: &mut StepHost<'_>,
        rhs: &Vec<f64>,
        dv: &mut Vec<f64>,
        tolerance: PcgTolerance,
        [spare_p, spare_w]: [&mut Vec<f64>; 2],
    ) -> Result<(PcgResult, bool), Self::Error> {
        dv.resize(rhs.len(), 0.0);
        // PCG's residual is the one work vector not lent by the caller;
        // allocated by each PCG run and freed before a hierarchy or factor
        // update, so it never meets the update's own work memory.
        let mut pcg_r: Vec<f64> = Vec::new();
        spare_p.resize(rhs.len(), 0.0);
        spare_w.resize(rhs.len(), 0.0);
        let max_it = host.settings.cg_max_iterations;
        let exact = host.assembler.exact_hessians;
        let a = &host.assembler.matrix;
        let free = host.free;
        let indefinite = |res: &PcgResult| res.status == PcgStatus::NegativeCurvature;
        // PCG on the masked system with one preconditioner, from `dv`.
        let mut run =
            |pre: &dyn Preconditioner, dv: &mut Vec<f64>, cap: usize, pcg_r: &mut Vec<f64>| {
                let ops = CpuOps {
                    matrix: a,
                    preconditioner: pre,
                    free,
                };
                pcg_r.resize(rhs.len(), 0.0);
                let work = [&mut pcg_r[..], &mut spare_p[..], &mut spare_w[..]];
                pcg_in(&ops, rhs, dv, tolerance, cap, work)
            };
        // A failed factorisation of the exact-Hessian matrix: indefinite.
        let failed = |spent: usize| {
            let res = PcgResult {
                status: PcgStatus::NegativeCurvature,
                iterations: spent,
                relative_residual: 1.0,
            };
            Ok((res, true))
        };
        let mut spent = 0;
        if Self::use_cholesky(host) {
            if !self.cholesky.as_ref().is_some_and(|c| c.matches(free)) {
                self.cholesky = SparseCholesky::new(a, free).ok();
            }
            if let Some(ch) = &mut self.cholesky {
                if ch.is_factored() {
                    let res = run(&*ch, dv, CHOLESKY_STALE_ITERATIONS.min(max_it), &mut pcg_r);
                    if res.status == PcgStatus::Converged || indefinite(&res) {
                        return Ok((res, indefinite(&res)));
                    }
                    spent = res.iterations;
                    pcg_r = Vec::new();
                }
                if ch.factor(a).is_ok() {
                    let mut res = run(&*ch, dv, max_it, &mut pcg_r);
                    res.iterations += spent;
                    return Ok((res, indefinite(&res)));
                } else if exact {
                    return failed(spent);
                }
            }
        }
        if Self::use_multigrid(host) {
            // A hierarchy of an earlier matrix first (same free mask), with
            // an iteration cap from the last fresh solve's rate.
            let reuse = host.settings.multigrid_reuse;
            if let (true, Some(h), Some(rate)) = (reuse, &self.multigrid, self.multigrid_rate)
                && h.matches(free)
            {
                let cap = multigrid_stale_cap(rate, tolerance.relative).min(max_it);
                if cap > 0 {
                    let mg = Multigrid {
                        hierarchy: h,
                        matrix: a,
                    };
                    let res = run(&mg, dv, cap, &mut pcg_r);
                    if res.status == PcgStatus::Converged || indefinite(&res) {
                        return Ok((res, indefinite(&res)));
                    }
                    spent = res.iterations;
                    // The update's transient memory must not meet PCG's
                    // residual: freed here, allocated again after it.
                    pcg_r = Vec::new();
                }
            }
            self.multigrid_updates += 1;
            let ready = match &mut self.multigrid {
                Some(h) if h.matches(free) => h.update(a).is_ok(),
                _ => {
                    self.multigrid = Hierarchy::new(a, free, host.settings.multigrid).ok();
                    self.multigrid.is_some()
                }
            };
            if !ready {
                self.multigrid_rate = None;
            }
            if let (true, Some(h)) = (ready, &self.multigrid) {
                let mg = Multigrid {
                    hierarchy: h,
                    matrix: a,
                };
                let mut res = run(&mg, dv, max_it.saturating_sub(spent), &mut pcg_r);
                // The rate of a solve from dv = 0 (the Newton loop's start;
                // a continuation of a stale solve keeps the earlier rate).
                let rel = res.relative_residual;
                if spent == 0
                    && res.status == PcgStatus::Converged
                    && res.iterations > 0
                    && rel > 0.0
                    && rel < 1.0
                {
                    self.multigrid_rate = Some(rel.powf(1.0 / res.iterations as f64));
                }
                res.iterations += spent;
                return Ok((res, indefinite(&res)));
            } else if exact {
                // A failed coarsest factorisation: indefinite, as with Cholesky.
                return failed(spent);
            }
        }
        let mut res = run(&BlockJacobi::new(a, free), dv, max_it, &mut pcg_r);
        res.iterations += spent;
        Ok((res, indefinite(&res)))
    }

    fn set_zero(&mut self, x: &mut Vec<f64>) -> Result<(), Self::Error> {
        update(x, |_, _| 0.0);
        Ok(())
    }

    fn combine(
        &mut self,
        v: &Vec<f64>,
        alpha: f64,
        dv: &Vec<f64>,
        out: &mut Vec<f64>,
    ) -> Result<(), Self::Error> {
        out.resize(v.len(), 0.0);
        update(out, |i, _| v[i] + alpha * dv[i]);
        Ok(())
    }

    fn norm2(&mut self, x: &Vec<f64>) -> Result<f64, Self::Error> {
        Ok(norm2(x))
    }

    fn inf_norm(&mut self, x: &Vec<f64>) -> Result<f64, Self::Error> {
        Ok(inf_norm(x))
    }

    fn worst_node(&mut self, r: &Vec<f64>) -> Result<usize, Self::Error> {
        Ok(worst_node(r))
    }

    fn first_non_finite(&mut self, x: &Vec<f64>) -> Result<Option<usize>, Self::Error> {
        Ok(x.iter().position(|x| !x.is_finite()))
    }

    fn advance(
        &mut self,
        q_n: &Vec<f64>,
        v: &Vec<f64>,
        h: f64,
        out: &mut Vec<f64>,
    ) -> Result<(), Self::Error> {
        out.clone_from(q_n);
        update(out, |i, q| q + h * v[i]);
        Ok(())
    }

    fn to_host<'v>(&mut self, x: &'v Vec<f64>) -> Result<Cow<'v, [f64]>, Self::Error> {
        Ok(Cow::Borrowed(x))
    }

    /// Today's host checks, in order: the first segment whose `Δu` is not
    /// positive, then the largest `|ε - ε_ref|` (`max_by` with `total_cmp`:
    /// the last of equal maxima).
    fn check_accept(
        &mut self,
        host: &mut StepHost<'_>,
        q_new: &Vec<f64>,
    ) -> Result<Option<Rejection>, Self::Error> {
        let f = &host.assembler.fabric;
        for s in &f.elements.segments {
            let k = s.family.slot();
            if q_new[B * s.b + k] <= q_new[B * s.a + k] {
                let y = &f.yarns[s.yarn];
                return Ok(Some(Rejection::ArcLengthOrder(arc_length_message(
                    &y.label(),
                    s.a,
                    s.b,
                ))));
            }
        }
        // Into the buffer of the previous reference (swapped out by accept).
        stretch_strains_into(f, q_new, &mut self.strains);
        if let Some((i, change)) = self
            .strains
            .iter()
            .zip(host.strain_ref.iter())
            .map(|(a, b)| (a - b).abs())
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            && change > host.settings.max_strain_change
        {
            let s = &f.elements.segments[i];
            return Ok(Some(Rejection::StrainJump {
                segment: i,
                a: s.a,
                b: s.b,
                change,
            }));
        }
        Ok(None)
    }

    fn accept(
        &mut self,
        host: &mut StepHost<'_>,
        q_new: &Vec<f64>,
        _h: f64,
    ) -> Result<(), Self::Error> {
        std::mem::swap(host.strain_ref, &mut self.strains);
        host.assembler.update_anchors(q_new, host.anchors);
        Ok(())
    }
}

/// Whether the step needs [`layer_crossing`]: self-collision with faces
/// (triangle-mesh cloth).
fn needs_layer_check(host: &StepHost<'_>) -> bool {
    host.assembler
        .contact
        .self_collision
        .as_ref()
        .is_some_and(|sc| !sc.detector.faces().is_empty())
}

/// The layer-crossing acceptance check of a step to `q_new` (`5 n`, on
/// the host): [`crate::assembly::SelfContact::check_crossings`] of the
/// assembler's self-collision with [`Settings::layer_crossing_dt_min`];
/// `None` without triangle-mesh self-collision. [`Simulation::try_step_with`]
/// runs it after [`StepBackend::check_accept`] for every backend (a device
/// backend copies `q_new` to the host for it).
pub fn layer_crossing(host: &StepHost<'_>, q_new: &[f64]) -> Option<Rejection> {
    let sc = host.assembler.contact.self_collision.as_ref()?;
    let x: Vec<Vector3<f64>> = q_new
        .chunks(B)
        .map(|c| Vector3::new(c[0], c[1], c[2]))
        .collect();
    sc.check_crossings(&x, host.settings.layer_crossing_dt_min)
}

/// The message of [`Rejection::ArcLengthOrder`] for the segment from node
/// `a` to node `b` (global indices) of the yarn labelled `yarn`.
pub fn arc_length_message(yarn: &str, a: usize, b: usize) -> String {
    format!("{yarn}: nodes {a} and {b} (global) would pass each other")
}

fn mask(r: &mut [f64], free: &[f64]) {
    update(r, |i, r| r * free[i]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejection() -> Rejection {
        Rejection::LinearSolve {
            iteration: 1,
            iterations: 10,
            relative_residual: 2.0,
            node: 0,
        }
    }

    #[test]
    fn a_rejected_step_is_retried_at_half_until_accepted_or_out_of_retries() {
        // Accepted once h <= 0.25 ms: two rejections, then the step.
        let mut seen = Vec::new();
        let (outcome, h) = step_halving_on_rejection(
            1e-3,
            4,
            |h| {
                Ok::<_, ()>(if h > 0.26e-3 {
                    Err(rejection())
                } else {
                    Ok(StepStats::default())
                })
            },
            |h, _| seen.push(h),
        )
        .unwrap();
        assert!(outcome.is_ok());
        assert_eq!(h, 0.25e-3);
        assert_eq!(seen, vec![1e-3, 0.5e-3]);
        // Never accepted: 1 + 4 attempts, the last outcome returned.
        let mut attempts = 0;
        let (outcome, h) = step_halving_on_rejection(
            1e-3,
            4,
            |_| {
                attempts += 1;
                Ok::<_, ()>(Err(rejection()))
            },
            |_, _| {},
        )
        .unwrap();
        assert!(matches!(outcome, Err(Rejection::LinearSolve { .. })));
        assert_eq!((attempts, h), (5, 1e-3 / 16.0));
        // A backend error ends the loop at once.
        let err =
            step_halving_on_rejection(1e-3, 4, |_| Err::<Result<_, _>, _>("device"), |_, _| {});
        assert_eq!(err.unwrap_err(), "device");
    }
}
