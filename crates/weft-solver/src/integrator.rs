//! Backward Euler with Newton's method and adaptive time steps (DESIGN §5).
//!
//! Each step solves `M (q̇⁺ - q̇) = h f(q⁺, q̇⁺)`, `q⁺ = q + h q̇⁺` for the
//! velocities `q̇⁺` by Newton's method (one iteration in `one_iteration`
//! mode). Every iteration solves `(M - h ∂f/∂q̇ - h² ∂f/∂q) Δq̇ = -R` with
//! block-Jacobi PCG to the relative tolerance `η = 0.1·target/|R|` clamped to
//! `[cg_tolerance, 0.5]` (an inexact-Newton forcing term: no linear solve is
//! more accurate than the Newton target needs), then a backtracking line
//! search on the merit `|R|₂` accepts the largest `α ∈ {1, ½, …, 2⁻¹²}` with
//! sufficient decrease.
//!
//! Convergence: `|R|∞ / h ≤ newton_tolerance · F`, a residual in force units
//! relative to the force scale `F` of the step (the largest nodal force at the
//! start of the step, at least the gravity on the heaviest node, 1e-10 of the
//! largest stretch stiffness `k_s` and 1e-12 N);
//! or stagnation at the round-off floor (the line search finds no decrease
//! while the residual is within 1000x of the target, or the update changes no
//! velocity by more than 1e-12 of `|v|∞ + |g| h`).
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

use crate::assembly::{Assembler, Energies, Tie};
use crate::bsr::B;
use crate::cholesky::SparseCholesky;
use crate::multigrid::{Hierarchy, Multigrid, MultigridOptions};
use crate::par::{inf_norm, norm2, update};
use crate::pcg::{BlockJacobi, CpuOps, PcgResult, PcgStatus, pcg};
use nalgebra::Vector3;
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
    /// Relative residual tolerance of PCG (`|r| ≤ tol |b|`).
    pub cg_tolerance: f64,
    /// PCG iteration limit.
    pub cg_max_iterations: usize,
    /// One Newton iteration per step (linearly implicit backward Euler).
    pub one_iteration: bool,
    /// Accepted steps in a row before `h` doubles.
    pub growth_after: usize,
    /// Largest change of any stretch strain in one step.
    pub max_strain_change: f64,
    /// Preconditioner of the Newton systems.
    pub linear_solver: LinearSolver,
    /// Tuning of the multigrid preconditioner (used with
    /// [`LinearSolver::Multigrid`] and above the Cholesky limit of
    /// [`LinearSolver::Auto`]).
    pub multigrid: MultigridOptions,
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
    /// free mask and its values are recomputed for every Newton matrix.
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
            one_iteration: false,
            growth_after: 4,
            max_strain_change: 0.1,
            linear_solver: LinearSolver::Auto,
            multigrid: MultigridOptions::default(),
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
    #[error("line search failed at Newton iteration {iteration} (residual {residual:.3e} N)")]
    LineSearch {
        /// Newton iteration.
        iteration: usize,
        /// `|R|∞/h` (N) where it stopped.
        residual: f64,
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
    /// A short key for counting rejections by reason.
    pub fn key(&self) -> &'static str {
        match self {
            Rejection::NewtonNotConverged { .. } => "newton",
            Rejection::NonFinite { .. } => "non_finite",
            Rejection::LineSearch { .. } => "line_search",
            Rejection::ArcLengthOrder(_) => "arc_length_order",
            Rejection::StrainJump { .. } => "strain_jump",
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
    cholesky: Option<SparseCholesky>,
    multigrid: Option<Hierarchy>,
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
        let stiffness_floor = fabric
            .materials
            .iter()
            .map(|m| m.stretch_stiffness)
            .fold(0.0f64, f64::max)
            * 1e-10;
        let gravity_scale = (fabric
            .lumped_masses(s)
            .iter()
            .fold(0.0f64, |a, b| a.max(*b))
            * gravity.norm())
        .max(stiffness_floor);
        let h = settings.dt;
        let mut sim = Self {
            assembler: Assembler::with_ties(fabric, gravity, ties),
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
            cholesky: None,
            multigrid: None,
            free_dofs: 0,
        };
        sim.free_dofs = sim.free.iter().filter(|&&f| f != 0.0).count();
        sim.strain_ref = sim.stretch_strains(&sim.q.clone());
        sim
    }

    fn stretch_strains(&self, q: &[f64]) -> Vec<f64> {
        let f = &self.assembler.fabric;
        f.elements
            .segments
            .iter()
            .map(|s| {
                let (a, b, k) = (B * s.a, B * s.b, s.family.slot());
                let dx = Vector3::new(q[b] - q[a], q[b + 1] - q[a + 1], q[b + 2] - q[a + 2]);
                dx.norm() / (q[b + k] - q[a + k]) - 1.0
            })
            .collect()
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

    /// Whether the Newton systems use the sparse Cholesky preconditioner.
    fn use_cholesky(&self) -> bool {
        match self.settings.linear_solver {
            LinearSolver::BlockJacobi | LinearSolver::Multigrid => false,
            LinearSolver::Cholesky => true,
            LinearSolver::Auto => self.free_dofs <= CHOLESKY_MAX_DOFS,
        }
    }

    /// Whether the Newton systems use the multigrid preconditioner.
    fn use_multigrid(&self) -> bool {
        match self.settings.linear_solver {
            LinearSolver::BlockJacobi | LinearSolver::Cholesky => false,
            LinearSolver::Multigrid => true,
            LinearSolver::Auto => self.free_dofs > CHOLESKY_MAX_DOFS,
        }
    }

    /// Solves `A dv = rhs` (A = the assembled system matrix) by PCG to the
    /// relative tolerance `eta`, starting from `dv`. With the Cholesky
    /// preconditioner a factor from an earlier matrix is tried first with
    /// at most [`CHOLESKY_STALE_ITERATIONS`] iterations; if that does not
    /// converge the matrix is refactored and the solve continues from the
    /// iterate reached. Returns the PCG result and whether `A` was found
    /// indefinite (a failed factorisation or a negative-curvature direction);
    /// with the projected (SPD) matrix a failed factorisation falls back to
    /// block-Jacobi instead.
    fn solve_linear(&mut self, rhs: &[f64], dv: &mut [f64], eta: f64) -> (PcgResult, bool) {
        let max_it = self.settings.cg_max_iterations;
        let exact = self.assembler.exact_hessians;
        let a = &self.assembler.matrix;
        let indefinite = |res: &PcgResult| res.status == PcgStatus::NegativeCurvature;
        let mut spent = 0;
        if self.use_cholesky() {
            if !self
                .cholesky
                .as_ref()
                .is_some_and(|c| c.matches(&self.free))
            {
                self.cholesky = SparseCholesky::new(a, &self.free).ok();
            }
            if let Some(ch) = &mut self.cholesky {
                if ch.is_factored() {
                    let ops = CpuOps {
                        matrix: a,
                        preconditioner: &*ch,
                        free: &self.free,
                    };
                    let res = pcg(&ops, rhs, dv, eta, CHOLESKY_STALE_ITERATIONS.min(max_it));
                    if res.status == PcgStatus::Converged || indefinite(&res) {
                        return (res, indefinite(&res));
                    }
                    spent = res.iterations;
                }
                if ch.factor(a).is_ok() {
                    let ops = CpuOps {
                        matrix: a,
                        preconditioner: &*ch,
                        free: &self.free,
                    };
                    let mut res = pcg(&ops, rhs, dv, eta, max_it);
                    res.iterations += spent;
                    return (res, indefinite(&res));
                } else if exact {
                    let res = PcgResult {
                        status: PcgStatus::NegativeCurvature,
                        iterations: spent,
                        relative_residual: 1.0,
                    };
                    return (res, true);
                }
            }
        }
        if self.use_multigrid() {
            let ready = match &mut self.multigrid {
                Some(h) if h.matches(&self.free) => h.update(a).is_ok(),
                _ => {
                    self.multigrid = Hierarchy::new(a, &self.free, self.settings.multigrid).ok();
                    self.multigrid.is_some()
                }
            };
            if let (true, Some(h)) = (ready, &self.multigrid) {
                let mg = Multigrid {
                    hierarchy: h,
                    matrix: a,
                };
                let ops = CpuOps {
                    matrix: a,
                    preconditioner: &mg,
                    free: &self.free,
                };
                let res = pcg(&ops, rhs, dv, eta, max_it);
                return (res, indefinite(&res));
            } else if exact {
                let res = PcgResult {
                    status: PcgStatus::NegativeCurvature,
                    iterations: 0,
                    relative_residual: 1.0,
                };
                return (res, true);
            }
        }
        let pre = BlockJacobi::new(a, &self.free);
        let ops = CpuOps {
            matrix: a,
            preconditioner: &pre,
            free: &self.free,
        };
        let mut res = pcg(&ops, rhs, dv, eta, max_it);
        res.iterations += spent;
        (res, indefinite(&res))
    }

    /// Sets the Dirichlet velocities for a step of size `h` from `t`: pinned
    /// DOFs 0, handle DOFs `(x(t + h) - x_n)/h`.
    fn prescribe(&self, v: &mut [f64], h: f64) {
        update(v, |i, v| if self.free[i] == 0.0 { 0.0 } else { v });
        for (hd, x0) in self.handles.iter().zip(&self.handle_x0) {
            let d = hd.displacement(self.t + h);
            for (&nd, x0) in hd.nodes.iter().zip(x0) {
                for c in 0..3 {
                    v[B * nd + c] = (x0[c] + d[c] - self.q[B * nd + c]) / h;
                }
            }
        }
    }

    /// Attempts one backward-Euler step of size `h`. On success the state
    /// advances; on rejection it is unchanged.
    ///
    /// # Errors
    /// The [`Rejection`] reason.
    pub fn try_step(&mut self, h: f64) -> Result<StepStats, Rejection> {
        let n = self.q.len();
        let q_n = self.q.clone();
        let v_n = self.v.clone();
        let mut v = v_n.clone();
        self.prescribe(&mut v, h);
        let mut stats = StepStats {
            h,
            ..Default::default()
        };
        // Collider time and self-collision pairs for this step; every step
        // starts with the exact elastic Hessians (quadratic Newton) and
        // switches to their PSD projections when the matrix is indefinite.
        self.assembler.begin_step(&q_n, self.t + h);
        self.assembler.exact_hessians = true;
        let mut r = vec![0.0; n];
        let (mut energies, _) =
            self.assembler
                .assemble(&q_n, &v_n, &v, h, &self.anchors, &mut r, true);
        mask(&mut r, &self.free);
        // Force scale: at v = v_n the residual is -h f, so |R|∞/h is the
        // largest nodal force of the step; gravity on the heaviest node is a
        // floor for scenes starting at rest and unstrained.
        let scale = (inf_norm(&r) / h).max(self.gravity_scale).max(1e-12);
        let mut rnorm = norm2(&r);
        let mut residual_inf = inf_norm(&r) / h;
        let max_it = if self.settings.one_iteration {
            1
        } else {
            self.settings.newton_max_iterations
        };
        let mut converged = residual_inf <= self.settings.newton_tolerance * scale;
        let mut dv = vec![0.0; n];
        let mut v_try = vec![0.0; n];
        let mut r_try = vec![0.0; n];
        while !converged && stats.newton_iterations < max_it {
            stats.newton_iterations += 1;
            let mut rhs = r.clone();
            update(&mut rhs, |_, x| -x);
            update(&mut dv, |_, _| 0.0);
            // Inexact Newton: solve only as far as the Newton target needs
            // (forcing term η = 0.1·target/|R|, within [cg_tolerance, 0.5]).
            let target = self.settings.newton_tolerance * scale * h;
            let eta = (0.1 * target / rnorm.max(1e-300)).clamp(self.settings.cg_tolerance, 0.5);
            let (mut res, indefinite) = self.solve_linear(&rhs, &mut dv, eta);
            stats.cg_iterations += res.iterations;
            if indefinite && self.assembler.exact_hessians {
                // Switch this step to the PSD-projected elastic Hessians and
                // solve again at the same iterate.
                self.assembler.exact_hessians = false;
                self.assembler
                    .assemble(&q_n, &v_n, &v, h, &self.anchors, &mut r_try, true);
                update(&mut dv, |_, _| 0.0);
                let (again, _) = self.solve_linear(&rhs, &mut dv, eta);
                res = again;
                stats.cg_iterations += res.iterations;
            }
            if res.status == PcgStatus::MaxIterations && res.relative_residual > 0.5 {
                return Err(Rejection::NewtonNotConverged {
                    iterations: stats.newton_iterations,
                    residual: residual_inf,
                    scale,
                    node: worst_node(&r),
                });
            }
            // Backtracking line search on |R|₂: the largest α = 2^-k
            // (k ≤ 12) with sufficient decrease; none found rejects the step.
            let mut alpha: f64 = 1.0;
            let mut stagnated = false;
            loop {
                update(&mut v_try, |i, _| v[i] + alpha * dv[i]);
                let (e, _) =
                    self.assembler
                        .assemble(&q_n, &v_n, &v_try, h, &self.anchors, &mut r_try, true);
                mask(&mut r_try, &self.free);
                let rn = norm2(&r_try);
                if rn.is_finite()
                    && (rn <= (1.0 - 1e-4 * alpha) * rnorm || self.settings.one_iteration)
                {
                    std::mem::swap(&mut v, &mut v_try);
                    std::mem::swap(&mut r, &mut r_try);
                    rnorm = rn;
                    energies = e;
                    break;
                }
                alpha *= 0.5;
                if alpha < 1.0 / 4096.0 {
                    // No decrease along the Newton direction: stagnation at
                    // round-off counts as converged, anything else rejects.
                    if inf_norm(&r) / h <= 1e3 * self.settings.newton_tolerance * scale {
                        stagnated = true;
                        break;
                    }
                    return Err(Rejection::LineSearch {
                        iteration: stats.newton_iterations,
                        residual: inf_norm(&r) / h,
                    });
                }
            }
            residual_inf = inf_norm(&r) / h;
            // Stagnation at round-off: the update no longer changes v.
            let v_scale = inf_norm(&v) + self.assembler.gravity.norm() * h + 1e-12;
            let update = alpha * inf_norm(&dv);
            converged = stagnated
                || residual_inf <= self.settings.newton_tolerance * scale
                || update <= 1e-12 * v_scale;
        }
        stats.residual = residual_inf;
        if let Some(i) = v.iter().position(|x| !x.is_finite()) {
            return Err(Rejection::NonFinite { node: i / B });
        }
        if !converged && !self.settings.one_iteration {
            return Err(Rejection::NewtonNotConverged {
                iterations: stats.newton_iterations,
                residual: residual_inf,
                scale,
                node: worst_node(&r),
            });
        }
        let mut q_new = q_n.clone();
        update(&mut q_new, |i, q| q + h * v[i]);
        // Arc-length order along every yarn.
        let f = &self.assembler.fabric;
        for s in &f.elements.segments {
            let k = s.family.slot();
            if q_new[B * s.b + k] <= q_new[B * s.a + k] {
                let y = &f.yarns[s.yarn];
                return Err(Rejection::ArcLengthOrder(format!(
                    "{}: nodes {} and {} (global) would pass each other",
                    y.label(),
                    s.a,
                    s.b
                )));
            }
        }
        let strains = self.stretch_strains(&q_new);
        if let Some((i, change)) = strains
            .iter()
            .zip(&self.strain_ref)
            .map(|(a, b)| (a - b).abs())
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            && change > self.settings.max_strain_change
        {
            let s = &f.elements.segments[i];
            return Err(Rejection::StrainJump {
                segment: i,
                a: s.a,
                b: s.b,
                change,
            });
        }
        self.q = q_new;
        self.v = v;
        self.strain_ref = strains;
        self.t += h;
        self.dissipated += h * energies.dissipation_power;
        let q = self.q.clone();
        self.assembler.update_anchors(&q, &mut self.anchors);
        Ok(stats)
    }

    /// Advances to time `t_end` (s) with adaptive steps, landing exactly on
    /// it, calling `on_step` after each accepted step. Returns the stats of
    /// the accepted steps.
    ///
    /// # Errors
    /// [`SolverError::StepTooSmall`] when a step below `dt_min` is rejected.
    pub fn advance_to(
        &mut self,
        t_end: f64,
        mut on_step: impl FnMut(&Simulation, &StepStats),
    ) -> Result<Vec<StepStats>, SolverError> {
        let mut out = Vec::new();
        while t_end - self.t > 1e-12 * t_end.abs().max(1.0) {
            let remaining = t_end - self.t;
            let cut = remaining < self.h * (1.0 + 1e-9);
            let h = if cut { remaining } else { self.h };
            match self.try_step(h) {
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
                    if !self.settings.adaptive || next < self.settings.dt_min {
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

/// The node with the largest residual entry.
fn worst_node(r: &[f64]) -> usize {
    r.iter()
        .enumerate()
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
        .map_or(0, |(i, _)| i / B)
}

fn mask(r: &mut [f64], free: &[f64]) {
    update(r, |i, r| r * free[i]);
}
