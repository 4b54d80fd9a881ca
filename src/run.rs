//! Running a scene file (DESIGN §8) as a library: `weft run` and the Python
//! module's `weft.run` are thin shells over [`run_scene`] (or [`prepare`]
//! and [`run_prepared`] with another engine, e.g. the CLI's CUDA one).
//!
//! Outputs in `out`: `energy.csv` (one row per output frame), `energy.svg`
//! (the energy curves), `final_state.json`, `preview.png` (the yarns of
//! the state reached, front and side, or a `triangle_cloth` as a shaded
//! surface), per-frame geometry under `frames/`
//! and `run_summary.json` (steps, rejected steps by reason, iterations,
//! wall time). They are written atomically (energy rows are
//! appended and flushed one by one), so a failed run keeps every frame it
//! finished; on a solver failure the last good state is still written to
//! `final_state.json`, and the counts to `run_summary.json`.
//!
//! Checkpoints ([`RunOptions::checkpoint_every_s`],
//! [`RunOptions::resume`], `weft_io::checkpoint`): at output frames; every
//! frame starts with a freshly built preconditioner
//! (`Simulation::forget_reused_preconditioner`), so a run resumed from a
//! checkpoint ends bit for bit where the uninterrupted run ends.
//!
//! A scene whose cloth is a `triangle_cloth` of `"model": "sbd"` runs on
//! its own engine, [`SbdStepper`] ([`Prepared::take_sbd_engine`]), and
//! cannot be resumed.

use std::path::{Path, PathBuf};
use std::time::Instant;
use thiserror::Error;
use weft_io::checkpoint::{CHECKPOINT_FILE, CHECKPOINT_VERSION, RunCheckpoint};
use weft_io::{EnergyCsv, EnergyRow, OutputError, Scene, SceneError};
use weft_solver::{Simulation, SolverError, StepStats};

/// Options of a scene run (`weft run`'s flags).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunOptions {
    /// One Newton iteration per step (linearly implicit backward Euler).
    /// Default false.
    pub one_iteration: bool,
    /// Write a checkpoint (`out/checkpoint.json`, the one before kept as
    /// `checkpoint.prev.json`) at the first output frame after every this
    /// many seconds of wall time (0: every frame). Default `None`: none.
    /// A scene whose `triangle_cloth` has `"model": "sbd"` writes none
    /// (it cannot be resumed: a checkpoint holds the implicit twin's
    /// state only).
    pub checkpoint_every_s: Option<f64>,
    /// Resume from `out/checkpoint.json` (a checkpoint of the same scene
    /// file: its digest is checked); outputs continue after its frame.
    /// Default false.
    pub resume: bool,
}

/// Summary of a run, written as `out/run_summary.json` (also after a
/// failed run, with `completed: false`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunSummary {
    /// The scene file.
    pub scene: String,
    /// Whether the run reached the scene's duration.
    pub completed: bool,
    /// Simulated time reached (s).
    pub t: f64,
    /// Accepted steps.
    pub steps: usize,
    /// Rejected step attempts.
    pub rejected: usize,
    /// Rejected attempts by reason (DESIGN §5: `newton`, `non_finite`,
    /// `arc_length_order`, `strain_jump`, ...).
    pub rejections: std::collections::BTreeMap<String, usize>,
    /// Newton iterations over all accepted steps.
    pub newton_iterations: usize,
    /// PCG iterations over all accepted steps.
    pub cg_iterations: usize,
    /// Output frames written (including t = 0).
    pub frames: usize,
    /// Wall time (s), including the parts before a resume.
    pub wall_s: f64,
    /// The backend used (`"cpu"` or `"cuda"`).
    pub backend: String,
}

/// Why a run could not start or finish. Every message names the file.
#[derive(Debug, Error)]
pub enum RunError {
    /// The scene file (reading, JSON, an unknown key, a bad value).
    #[error(transparent)]
    Scene(#[from] SceneError),
    /// Writing or reading an output or checkpoint file.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// A bad option, or a checkpoint that does not fit the scene.
    #[error("{0}")]
    Invalid(String),
    /// The engine could not step (e.g. a device failure).
    #[error("{0}")]
    Engine(String),
    /// The simulation failed; the outputs up to the failure are kept.
    #[error("{message}")]
    Solver {
        /// What failed, where (nodes named as the scene file numbers
        /// them), and where the outputs are.
        message: String,
        /// The counts up to the failure (also in `run_summary.json`).
        summary: Box<RunSummary>,
    },
}

/// An engine that steps a [`Simulation`]: the CPU simulation itself, or a
/// device engine mirroring it.
pub trait Stepper {
    /// The host simulation (current after every [`Stepper::advance_to`]).
    fn sim(&self) -> &Simulation;
    /// Mutable access to the host simulation.
    fn sim_mut(&mut self) -> &mut Simulation;
    /// Advances to `t_end` (s) with adaptive steps, calling `on_step` after
    /// each accepted one.
    ///
    /// # Errors
    /// As `Simulation::advance_to`.
    fn advance_to(
        &mut self,
        t_end: f64,
        on_step: &mut dyn FnMut(&Simulation, &StepStats),
    ) -> Result<(), SolverError>;
    /// The engine's name (`"cpu"`, `"cuda"`).
    fn name(&self) -> &'static str;
    /// Whether the host simulation's checkpoint holds the engine's whole
    /// state, so that a run can resume from it (default true;
    /// [`SbdStepper`]'s does not, and it writes none).
    fn resumable(&self) -> bool {
        true
    }
}

/// The engine of a scene whose cloth is a `triangle_cloth` of `"model":
/// "sbd"` (`weft_io::ClothModel::Sbd`): the strain-based-dynamics cloth
/// ([`weft_shell::Sbd`]) in fixed steps of the scene's `time_step.dt`,
/// mirrored after every step into the implicit twin [`Simulation`] of
/// the same mesh (positions, step-averaged velocities
/// [`weft_shell::Sbd::step_velocities`], time), which the run's outputs
/// read: `energy.csv`'s elastic energy is that of the StVK membrane and
/// hinges of the scene's material at the sbd cloth's shape, its
/// `dissipated` column 0, Newton and CG iterations 0.
pub struct SbdStepper {
    sim: Simulation,
    sbd: weft_shell::Sbd,
    dt: f64,
}

impl SbdStepper {
    /// Copies the sbd cloth's state into the twin simulation.
    fn mirror(&mut self, h: f64) {
        let v = self.sbd.step_velocities();
        for (i, (x, v)) in self.sbd.positions().iter().zip(&v).enumerate() {
            let o = weft_core::DOFS_PER_NODE * i;
            self.sim.q[o..o + 3].copy_from_slice(x.as_slice());
            self.sim.v[o..o + 3].copy_from_slice(v.as_slice());
        }
        self.sim.t = self.sbd.time();
        self.sim.h = h;
    }
}

impl Stepper for SbdStepper {
    fn sim(&self) -> &Simulation {
        &self.sim
    }
    fn sim_mut(&mut self) -> &mut Simulation {
        &mut self.sim
    }
    fn advance_to(
        &mut self,
        t_end: f64,
        on_step: &mut dyn FnMut(&Simulation, &StepStats),
    ) -> Result<(), SolverError> {
        // Within a billionth of a step of `t_end` (the substeps' sums
        // round) the frame is reached.
        while t_end - self.sbd.time() > 1e-9 * self.dt {
            let h = self.dt.min(t_end - self.sbd.time());
            self.sbd.step(h);
            let bad = self
                .sbd
                .positions()
                .iter()
                .position(|x| !x.iter().all(|c| c.is_finite()));
            if let Some(i) = bad {
                return Err(SolverError::Backend(format!(
                    "the sbd cloth diverged at t = {:.6} s: vertex {i} is not finite",
                    self.sbd.time()
                )));
            }
            self.mirror(h);
            on_step(
                &self.sim,
                &StepStats {
                    h,
                    ..Default::default()
                },
            );
        }
        Ok(())
    }
    fn name(&self) -> &'static str {
        "cpu (sbd)"
    }
    fn resumable(&self) -> bool {
        false
    }
}

impl Stepper for Simulation {
    fn sim(&self) -> &Simulation {
        self
    }
    fn sim_mut(&mut self) -> &mut Simulation {
        self
    }
    fn advance_to(
        &mut self,
        t_end: f64,
        on_step: &mut dyn FnMut(&Simulation, &StepStats),
    ) -> Result<(), SolverError> {
        Simulation::advance_to(self, t_end, on_step).map(|_| ())
    }
    fn name(&self) -> &'static str {
        "cpu"
    }
}

/// Progress of a run (a progress bar in the CLI); every method defaults
/// to nothing.
pub trait RunProgress {
    /// The run starts at frame `first` of `frames` (0 unless resumed).
    fn start(&mut self, _frames: usize, _first: usize) {}
    /// An accepted step; `steps` counts them over the whole run.
    fn step(&mut self, _sim: &Simulation, _st: &StepStats, _steps: usize) {}
    /// An output frame was written.
    fn frame(&mut self) {}
    /// The run ended (`ok` false on a failure).
    fn finish(&mut self, _ok: bool) {}
}

impl RunProgress for () {}

/// A scene read and built into a simulation (restored from the checkpoint
/// when resuming), ready for [`run_prepared`] on an engine of the caller's
/// choice.
pub struct Prepared {
    /// The simulation to step (take it with [`Prepared::take_simulation`]
    /// to wrap it in an engine).
    pub simulation: Option<Simulation>,
    scene_path: PathBuf,
    scene_name: String,
    digest: String,
    out: PathBuf,
    opts: RunOptions,
    resumed: Option<RunCheckpoint>,
    duration: f64,
    interval: f64,
    write_obj: bool,
    owners: Vec<(usize, std::ops::Range<usize>)>,
    start: Instant,
    /// The sbd cloth of the scene, if it has one.
    sbd: Option<weft_shell::Sbd>,
}

impl Prepared {
    /// The simulation (once).
    ///
    /// # Panics
    /// If taken twice.
    pub fn take_simulation(&mut self) -> Simulation {
        self.simulation
            .take()
            .expect("the simulation is taken once")
    }

    /// The output folder.
    pub fn out(&self) -> &Path {
        &self.out
    }

    /// For a scene whose cloth is a `triangle_cloth` of `"model": "sbd"`,
    /// its engine ([`SbdStepper`], CPU only), taking the simulation;
    /// `None` for any other scene.
    ///
    /// # Panics
    /// If the simulation was taken already.
    pub fn take_sbd_engine(&mut self) -> Option<SbdStepper> {
        let sbd = self.sbd.take()?;
        let sim = self.take_simulation();
        let dt = sim.settings.dt;
        Some(SbdStepper { sim, sbd, dt })
    }
}

/// Reads and builds `scene` for a run into `out` with `opts` (reading and
/// checking the checkpoint when resuming).
///
/// # Errors
/// [`RunError::Scene`]; [`RunError::Invalid`] for a bad option or a
/// checkpoint of another scene; [`RunError::Output`] for a missing,
/// truncated or corrupt checkpoint.
pub fn prepare(scene: &Path, out: &Path, opts: &RunOptions) -> Result<Prepared, RunError> {
    let start = Instant::now();
    if let Some(e) = opts.checkpoint_every_s
        && !(e >= 0.0 && e.is_finite())
    {
        return Err(RunError::Invalid(format!(
            "checkpoint_every_s: expected a finite number of seconds >= 0, got {e}"
        )));
    }
    let parsed = Scene::from_path(scene)?;
    let mut built = parsed.build()?;
    let sbd_cloth = built.sbd.take();
    if sbd_cloth.is_some() && opts.resume {
        return Err(RunError::Invalid(format!(
            "{}: cannot resume a scene whose triangle_cloth has \"model\": \"sbd\" (its checkpoints hold the implicit twin's state only); run it again",
            scene.display()
        )));
    }
    let digest = weft_io::checkpoint::file_digest(scene)?;
    let resumed = if opts.resume {
        let cp: RunCheckpoint = weft_io::checkpoint::read_checkpoint(out)?;
        if cp.scene_digest != digest {
            return Err(RunError::Invalid(format!(
                "{}: cannot resume from {}: it is a checkpoint of {} (digest {}), and {} has digest {} (another scene, or edited since)",
                scene.display(),
                out.join(CHECKPOINT_FILE).display(),
                cp.scene,
                cp.scene_digest,
                scene.display(),
                digest
            )));
        }
        Some(cp)
    } else {
        None
    };
    let (duration, interval) = (built.duration, built.output.interval);
    let write_obj = !built.output.formats.is_empty();
    // (scene object, its global nodes) per fabric object, to name the nodes
    // of a failure as the scene file numbers them.
    let owners = (0..parsed.objects.len())
        .filter_map(|s| built.node_range(s).map(|r| (s, r)))
        .collect();
    let mut sim = built.simulation(opts.one_iteration)?;
    if let Some(cp) = &resumed {
        sim.restore(&cp.sim).map_err(|e| {
            RunError::Invalid(format!(
                "{}: cannot resume from it: {e}",
                out.join(CHECKPOINT_FILE).display()
            ))
        })?;
    }
    let sbd = match sbd_cloth {
        Some(c) => {
            let colliders = sim.assembler.contact.colliders.iter();
            let colliders = colliders.map(|(c, _)| c.clone()).collect();
            let cloth = weft_shell::Sbd::new(&c.mesh, &c.pinned, c.options).map_err(|e| {
                RunError::Invalid(format!("{}: triangle_cloth: {e}", scene.display()))
            })?;
            Some(cloth.with_colliders(colliders))
        }
        None => None,
    };
    Ok(Prepared {
        sbd,
        simulation: Some(sim),
        scene_path: scene.to_path_buf(),
        scene_name: parsed.file_name(),
        digest,
        out: out.to_path_buf(),
        opts: *opts,
        resumed,
        duration,
        interval,
        write_obj,
        owners,
        start,
    })
}

/// Runs `scene` on the CPU and writes its outputs into `out` (see the
/// module docs).
///
/// # Errors
/// As [`prepare`] and [`run_prepared`].
pub fn run_scene(
    scene: &Path,
    out: &Path,
    opts: &RunOptions,
    progress: &mut dyn RunProgress,
) -> Result<RunSummary, RunError> {
    let mut p = prepare(scene, out, opts)?;
    if let Some(mut engine) = p.take_sbd_engine() {
        return run_prepared(p, &mut engine, progress);
    }
    let mut sim = p.take_simulation();
    run_prepared(p, &mut sim, progress)
}

fn row(sim: &mut Simulation, h: f64, newton: usize, cg: usize) -> EnergyRow {
    let e = sim.energies();
    EnergyRow {
        t: sim.t,
        kinetic: e.kinetic,
        elastic: e.elastic,
        gravity: e.gravity,
        dissipated: sim.dissipated,
        h,
        newton_iters: newton as u64,
        cg_iters: cg as u64,
    }
}

/// `"newton 3, strain_jump 1"`, or `"none"`.
pub fn reasons(summary: &RunSummary) -> String {
    if summary.rejections.is_empty() {
        return "none".into();
    }
    summary
        .rejections
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs a [`prepare`]d scene on `engine` (which steps the prepared
/// simulation) and writes the outputs.
///
/// # Errors
/// [`RunError::Output`]; [`RunError::Solver`] when the simulation fails
/// (the outputs up to the failure are kept, `final_state.json` holding
/// the last good state).
pub fn run_prepared(
    p: Prepared,
    engine: &mut dyn Stepper,
    progress: &mut dyn RunProgress,
) -> Result<RunSummary, RunError> {
    let out = p.out.as_path();
    let io = |e: std::io::Error, what: &Path| OutputError::Io {
        path: what.to_path_buf(),
        source: e,
    };
    let frames_dir = out.join("frames");
    std::fs::create_dir_all(&frames_dir).map_err(|e| io(e, &frames_dir))?;
    let first_frame = p.resumed.as_ref().map_or(0, |cp| cp.frame);
    remove_stale_frames(out, p.resumed.as_ref().map(|cp| cp.frame))?;
    let mut csv = match &p.resumed {
        Some(cp) => EnergyCsv::resume(out.join("energy.csv"), cp.frame + 1)?,
        None => EnergyCsv::create(out.join("energy.csv"))?,
    };
    let frames = (p.duration / p.interval - 1e-9).ceil().max(1.0) as usize;
    progress.start(frames, first_frame);
    if p.resumed.is_none() {
        let h0 = engine.sim().h;
        let first = row(engine.sim_mut(), h0, 0, 0);
        csv.append(&first)?;
        if p.write_obj {
            weft_io::write_obj_frame(
                weft_io::frame_path(out, 0, "obj"),
                &engine.sim().assembler.fabric,
                &engine.sim().state(),
            )?;
        }
    }
    let mut summary = RunSummary {
        scene: p.scene_name.clone(),
        completed: false,
        t: 0.0,
        steps: p.resumed.as_ref().map_or(0, |cp| cp.steps),
        rejected: 0,
        rejections: Default::default(),
        newton_iterations: p.resumed.as_ref().map_or(0, |cp| cp.newton_iterations),
        cg_iterations: p.resumed.as_ref().map_or(0, |cp| cp.cg_iterations),
        frames: first_frame + 1,
        wall_s: 0.0,
        backend: engine.name().into(),
    };
    // Wall time of the run's parts before a resume.
    let earlier_s = p.resumed.as_ref().map_or(0.0, |cp| cp.wall_s);
    let start = p.start;
    let mut last_checkpoint = Instant::now();
    // Writes the state reached (final_state.json) and the summary with the
    // simulation's counters (run_summary.json), at the end or on a failure.
    let write_end = |summary: &mut RunSummary, sim: &Simulation| -> Result<(), OutputError> {
        let state = sim.state();
        let fabric = &sim.assembler.fabric;
        weft_io::write_final_state(out.join("final_state.json"), &state, fabric)?;
        // A picture of the yarns in the state reached (a non-finite state
        // has none), or of triangle-mesh cloth as a shaded surface.
        if fabric.yarns.is_empty() && !fabric.elements.triangles.is_empty() {
            let cloth = weft_io::TriMesh {
                vertices: state.x.iter().map(|p| [p.x, p.y, p.z]).collect(),
                triangles: (fabric.elements.triangles.iter())
                    .map(|t| t.nodes.map(|n| n as u32))
                    .collect(),
            };
            if cloth.vertices.iter().flatten().all(|c| c.is_finite()) {
                let none = weft_io::YarnCurves::default();
                weft_io::write_preview(out.join("preview.png"), &none, Some(&cloth), 1200, 600)?;
            }
        } else if let Ok(curves) = weft_io::YarnCurves::from_positions(fabric, &state.x, 4) {
            weft_io::write_preview(out.join("preview.png"), &curves, None, 1200, 600)?;
        }
        summary.t = sim.t;
        summary.rejections = sim.rejection_counts();
        summary.rejected = sim.rejections.values().sum();
        summary.wall_s = earlier_s + start.elapsed().as_secs_f64();
        weft_io::write_json(&out.join("run_summary.json"), &*summary)
    };
    for k in first_frame + 1..=frames {
        let t_k = if k == frames {
            p.duration
        } else {
            k as f64 * p.interval
        };
        // Every frame starts with a fresh preconditioner, as a run resumed
        // from a checkpoint at a frame does: the two stay bit-identical.
        engine.sim_mut().forget_reused_preconditioner();
        let (mut newton, mut cg, mut last_h) = (0usize, 0usize, engine.sim().h);
        let mut steps = summary.steps;
        let result = engine.advance_to(t_k, &mut |s, st| {
            newton += st.newton_iterations;
            cg += st.cg_iterations;
            last_h = st.h;
            steps += 1;
            progress.step(s, st, steps);
        });
        summary.steps = steps;
        summary.newton_iterations += newton;
        summary.cg_iterations += cg;
        if let Err(e) = result {
            progress.finish(false);
            let sim = engine.sim();
            write_end(&mut summary, sim)?;
            let located: Vec<String> = e
                .rejection()
                .map(|r| r.nodes())
                .unwrap_or_default()
                .into_iter()
                .filter_map(|n| {
                    p.owners
                        .iter()
                        .find(|(_, r)| r.contains(&n))
                        .map(|(s, r)| format!("node {n} is objects[{s}] node {}", n - r.start))
                })
                .collect();
            let located = if located.is_empty() {
                String::new()
            } else {
                format!("\n  in the scene file: {}", located.join(", "))
            };
            let message = format!(
                "{}: simulation failed: {e}{located}\n  after {} accepted steps and {} rejected ({}); outputs up to t = {:.6} s are in {} (final_state.json holds the last good state, run_summary.json the counts)",
                summary.scene,
                summary.steps,
                summary.rejected,
                reasons(&summary),
                sim.t,
                out.display()
            );
            return Err(RunError::Solver {
                message,
                summary: Box::new(summary),
            });
        }
        let r = row(engine.sim_mut(), last_h, newton, cg);
        csv.append(&r)?;
        if p.write_obj {
            weft_io::write_obj_frame(
                weft_io::frame_path(out, k, "obj"),
                &engine.sim().assembler.fabric,
                &engine.sim().state(),
            )?;
        }
        summary.frames += 1;
        progress.frame();
        if let Some(every) = p.opts.checkpoint_every_s
            && engine.resumable()
            && k < frames
            && last_checkpoint.elapsed().as_secs_f64() >= every
        {
            csv.sync()?;
            weft_io::checkpoint::write_checkpoint(
                out,
                &RunCheckpoint {
                    version: CHECKPOINT_VERSION,
                    scene: p.scene_path.display().to_string(),
                    scene_digest: p.digest.clone(),
                    frame: k,
                    steps: summary.steps,
                    newton_iterations: summary.newton_iterations,
                    cg_iterations: summary.cg_iterations,
                    wall_s: earlier_s + start.elapsed().as_secs_f64(),
                    sim: engine.sim().checkpoint(),
                },
            )?;
            last_checkpoint = Instant::now();
        }
    }
    progress.finish(true);
    csv.sync()?;
    // The energy curves as a picture next to the numbers.
    let columns = weft_analysis::read_energy_csv(out.join("energy.csv"))
        .map_err(|e| RunError::Invalid(e.to_string()))?;
    weft_analysis::plot_energy(
        &columns,
        out.join("energy.svg"),
        &weft_analysis::PlotOptions::default(),
    )
    .map_err(|e| RunError::Invalid(e.to_string()))?;
    summary.completed = true;
    write_end(&mut summary, engine.sim())?;
    Ok(summary)
}

/// Removes the frame files (`frames/frame_NNNNNN.*`) of an earlier run in
/// `out`, so that the folder holds this run's frames only (with `keep =
/// Some(k)`, a resumed run's, frames `0..=k` are kept); other files are
/// left alone.
fn remove_stale_frames(out: &Path, keep: Option<usize>) -> Result<(), OutputError> {
    let dir = out.join("frames");
    let io = |e: std::io::Error, p: &Path| OutputError::Io {
        path: p.to_path_buf(),
        source: e,
    };
    for entry in std::fs::read_dir(&dir).map_err(|e| io(e, &dir))? {
        let path = entry.map_err(|e| io(e, &dir))?.path();
        let ours = path
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.strip_prefix("frame_"))
            .filter(|n| n.len() == 6 && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<usize>().ok())
            .is_some_and(|i| keep.is_none_or(|k| i > k));
        if ours && path.is_file() {
            std::fs::remove_file(&path).map_err(|e| io(e, &path))?;
        }
    }
    Ok(())
}
