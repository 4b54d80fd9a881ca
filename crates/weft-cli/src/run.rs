//! `weft run SCENE.json --out DIR` (DESIGN §8): simulates a scene file and
//! writes `energy.csv` (one row per output frame), `energy.svg` (the energy
//! curves), `final_state.json`, per-frame geometry under `frames/` and
//! `run_summary.json` (steps, rejected steps by reason, iterations, wall
//! time), with a progress bar and a one-line summary. Outputs are written
//! atomically (energy rows are appended and flushed one by one), so a failed
//! run keeps every frame it finished; on a solver failure the last good
//! state is still written to `final_state.json`, and the counts to
//! `run_summary.json`.

use crate::backend::{BackendChoice, Engine, select};
use anyhow::{Context, Result, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::time::Instant;
use weft_io::{EnergyCsv, EnergyRow, Scene};
use weft_solver::Simulation;

/// Arguments of `weft run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Scene file (JSON, DESIGN §8).
    pub scene: PathBuf,
    /// Output directory (created if missing; existing outputs are replaced).
    #[arg(
        long,
        short,
        required_unless_present = "resume",
        conflicts_with = "resume"
    )]
    pub out: Option<PathBuf>,
    /// Write a checkpoint (`DIR/checkpoint.json`, the one before kept as
    /// `checkpoint.prev.json`) at the first output frame after every this
    /// many seconds of wall time (0: at every frame). Off by default.
    #[arg(long, value_name = "SECONDS")]
    pub checkpoint_every: Option<f64>,
    /// Resume the run whose output directory is DIR from its checkpoint:
    /// the same scene file (its digest is checked), outputs continue in DIR
    /// after the checkpoint's frame. With the direct solver the result
    /// equals an uninterrupted run's bit for bit.
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// No progress bar and no engine line (the one-line summary at the end,
    /// and errors, are still printed).
    #[arg(long, short)]
    pub quiet: bool,
    /// One Newton iteration per step (linearly implicit backward Euler).
    #[arg(long)]
    pub one_iteration: bool,
    /// Engine: `cpu`; `cuda` (block-Jacobi PCG on the GPU; an error naming
    /// why when no usable device is found or the scene uses a feature the
    /// CUDA backend lacks:
    /// the Cholesky preconditioner); `auto` (CUDA when possible, else the
    /// CPU with a one-line message saying why). The CUDA path has not yet
    /// been verified on a GPU, hence the default `cpu`.
    #[arg(long, value_enum, default_value_t = BackendChoice::Cpu)]
    pub backend: BackendChoice,
}

/// Summary of a run, written as `DIR/run_summary.json` (also after a
/// failed run, with `completed: false`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
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
    /// Newton and PCG iterations over all accepted steps.
    pub newton_iterations: usize,
    /// PCG iterations over all accepted steps.
    pub cg_iterations: usize,
    /// Output frames written (including t = 0).
    pub frames: usize,
    /// Wall time (s).
    pub wall_s: f64,
    /// The backend used (`"cpu"` or `"cuda"`).
    pub backend: &'static str,
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

/// Checkpoints of a run: how often, and whether to resume from the one
/// in the output directory.
#[derive(Clone, Copy, Debug, Default)]
pub struct Checkpoints {
    /// Wall time between checkpoints (s); `None`: none written.
    pub every_s: Option<f64>,
    /// Resume from `out/checkpoint.json`.
    pub resume: bool,
}

/// Runs `scene` and writes its outputs into `out`.
///
/// # Errors
/// Scene errors (file, JSON path, expectation), collider errors, output
/// errors, and a solver failure (the step fell below `dt_min`, naming the
/// reason and element); in the last case the outputs up to the failure are
/// kept and `final_state.json` holds the last good state.
pub fn run_scene(
    scene: &Path,
    out: &Path,
    quiet: bool,
    one_iteration: bool,
    backend: BackendChoice,
    checkpoints: Checkpoints,
) -> Result<RunSummary> {
    let start = Instant::now();
    if let Some(e) = checkpoints.every_s
        && !(e >= 0.0 && e.is_finite())
    {
        bail!("--checkpoint-every: expected a finite number of seconds >= 0, got {e}");
    }
    let scene_path = scene;
    let digest = weft_io::checkpoint::scene_digest(scene_path)?;
    let resumed = if checkpoints.resume {
        let cp = weft_io::checkpoint::read_checkpoint(out)?;
        if cp.scene_digest != digest {
            bail!(
                "{}: cannot resume from {}: it is a checkpoint of {} (digest {}), and {} has digest {} (another scene, or edited since)",
                scene_path.display(),
                out.join(weft_io::checkpoint::CHECKPOINT_FILE).display(),
                cp.scene,
                cp.scene_digest,
                scene_path.display(),
                digest
            );
        }
        Some(cp)
    } else {
        None
    };
    let scene = Scene::from_path(scene)?;
    let built = scene.build()?;
    let (duration, interval) = (built.duration, built.output.interval);
    let write_obj = !built.output.formats.is_empty();
    // (scene object, its global nodes) per fabric object, to name the nodes
    // of a failure as the scene file numbers them.
    let owners: Vec<(usize, std::ops::Range<usize>)> = (0..scene.objects.len())
        .filter_map(|s| built.node_range(s).map(|r| (s, r)))
        .collect();
    let mut sim = built.simulation(one_iteration)?;
    if let Some(cp) = &resumed {
        sim.restore(&cp.sim).map_err(|e| {
            anyhow::anyhow!(
                "{}: cannot resume from it: {e}",
                out.join(weft_io::checkpoint::CHECKPOINT_FILE).display()
            )
        })?;
    }
    let selected = select(backend, &sim, "weft run")?;
    let engine_name = selected.name();
    if !quiet || matches!(selected, crate::backend::Selected::Cpu { reason: Some(_) }) {
        eprintln!("weft run: {}", selected.describe());
    }
    let mut engine = Engine::new(&selected, sim)?;
    std::fs::create_dir_all(out.join("frames"))
        .with_context(|| format!("cannot create {}", out.display()))?;
    let first_frame = resumed.as_ref().map_or(0, |cp| cp.frame);
    remove_stale_frames(out, resumed.as_ref().map(|cp| cp.frame))?;
    let mut csv = match &resumed {
        Some(cp) => EnergyCsv::resume(out.join("energy.csv"), cp.frame + 1)?,
        None => EnergyCsv::create(out.join("energy.csv"))?,
    };
    let frames = (duration / interval - 1e-9).ceil().max(1.0) as usize;
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(frames as u64)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:30} {pos}/{len} frames  {msg}  [{elapsed_precise}, eta {eta}]",
        )
        .expect("valid template"),
    );
    if resumed.is_none() {
        let h0 = engine.sim().h;
        let first = row(engine.sim_mut(), h0, 0, 0);
        csv.append(&first)?;
        if write_obj {
            weft_io::write_obj_frame(
                weft_io::frame_path(out, 0, "obj"),
                &engine.sim().assembler.fabric,
                &engine.sim().state(),
            )?;
        }
    }
    bar.set_position(first_frame as u64);
    let mut summary = RunSummary {
        scene: scene.file_name(),
        completed: false,
        t: 0.0,
        steps: resumed.as_ref().map_or(0, |cp| cp.steps),
        rejected: 0,
        rejections: Default::default(),
        newton_iterations: resumed.as_ref().map_or(0, |cp| cp.newton_iterations),
        cg_iterations: resumed.as_ref().map_or(0, |cp| cp.cg_iterations),
        frames: first_frame + 1,
        wall_s: 0.0,
        backend: engine_name,
    };
    // Wall time of the run's earlier parts (before the resume).
    let earlier_s = resumed.as_ref().map_or(0.0, |cp| cp.wall_s);
    let mut last_checkpoint = Instant::now();
    // Writes the state reached (final_state.json) and the summary with the
    // simulation's counters (run_summary.json), at the end or on a failure.
    let write_end = |summary: &mut RunSummary, sim: &Simulation| -> Result<()> {
        weft_io::write_final_state(
            out.join("final_state.json"),
            &sim.state(),
            &sim.assembler.fabric,
        )?;
        summary.t = sim.t;
        summary.rejections = sim
            .rejections
            .iter()
            .map(|(k, v)| ((*k).to_owned(), *v))
            .collect();
        summary.rejected = sim.rejections.values().sum();
        summary.wall_s = earlier_s + start.elapsed().as_secs_f64();
        weft_io::atomic_write(&out.join("run_summary.json"), |w| {
            serde_json::to_writer_pretty(&mut *w, &*summary).map_err(std::io::Error::other)
        })?;
        Ok(())
    };
    // Wall time in assemblies and in linear solves, over all steps.
    let (mut assemblies, mut assembly_s, mut solve_s) = (0usize, 0.0f64, 0.0f64);
    for k in first_frame + 1..=frames {
        let t_k = if k == frames {
            duration
        } else {
            k as f64 * interval
        };
        // Every frame starts with a fresh preconditioner, as a run resumed
        // from a checkpoint at a frame does: the two stay bit-identical.
        engine.sim_mut().forget_reused_preconditioner();
        let (mut newton, mut cg, mut last_h) = (0usize, 0usize, engine.sim().h);
        let mut steps = summary.steps;
        let result = engine.advance_to(t_k, |s, st| {
            newton += st.newton_iterations;
            cg += st.cg_iterations;
            last_h = st.h;
            steps += 1;
            assemblies += st.assemblies;
            assembly_s += st.assembly_seconds;
            solve_s += st.solve_seconds;
            let rejected: usize = s.rejections.values().sum();
            bar.set_message(format!(
                "t {:.4} s  step {steps} ({rejected} rejected)  h {:.1e} s  newton {}  cg {}",
                s.t, st.h, st.newton_iterations, st.cg_iterations
            ));
        });
        summary.steps = steps;
        summary.newton_iterations += newton;
        summary.cg_iterations += cg;
        if let Err(e) = result {
            bar.abandon();
            let sim = engine.sim();
            write_end(&mut summary, sim)?;
            let located: Vec<String> = e
                .rejection()
                .map(|r| r.nodes())
                .unwrap_or_default()
                .into_iter()
                .filter_map(|n| {
                    owners
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
            bail!(
                "{}: simulation failed: {e}{located}\n  after {} accepted steps and {} rejected ({}); outputs up to t = {:.6} s are in {} (final_state.json holds the last good state, run_summary.json the counts)",
                summary.scene,
                summary.steps,
                summary.rejected,
                reasons(&summary),
                sim.t,
                out.display()
            );
        }
        let r = row(engine.sim_mut(), last_h, newton, cg);
        csv.append(&r)?;
        if write_obj {
            weft_io::write_obj_frame(
                weft_io::frame_path(out, k, "obj"),
                &engine.sim().assembler.fabric,
                &engine.sim().state(),
            )?;
        }
        summary.frames += 1;
        bar.inc(1);
        if let Some(every) = checkpoints.every_s
            && k < frames
            && last_checkpoint.elapsed().as_secs_f64() >= every
        {
            csv.sync()?;
            let sim = engine.sim();
            weft_io::checkpoint::write_checkpoint(
                out,
                &weft_io::checkpoint::RunCheckpoint {
                    version: weft_io::checkpoint::CHECKPOINT_VERSION,
                    scene: scene_path.display().to_string(),
                    scene_digest: digest.clone(),
                    frame: k,
                    steps: summary.steps,
                    newton_iterations: summary.newton_iterations,
                    cg_iterations: summary.cg_iterations,
                    wall_s: earlier_s + start.elapsed().as_secs_f64(),
                    sim: sim.checkpoint(),
                },
            )?;
            last_checkpoint = Instant::now();
        }
    }
    bar.finish_and_clear();
    csv.sync()?;
    // The energy curves as a picture next to the numbers.
    let columns = weft_analysis::read_energy_csv(out.join("energy.csv"))?;
    weft_analysis::plot_energy(
        &columns,
        out.join("energy.svg"),
        &weft_analysis::PlotOptions::default(),
    )?;
    summary.completed = true;
    write_end(&mut summary, engine.sim())?;
    let steps = summary.steps.max(1) as f64;
    eprintln!(
        "weft run: {duration} s simulated on {engine_name} in {} steps ({} rejected{}), {:.1} Newton and {:.0} CG iterations per step, {:.2} s wall ({assemblies} assemblies {assembly_s:.2} s, linear solves {solve_s:.2} s) -> {}",
        summary.steps,
        summary.rejected,
        if summary.rejections.is_empty() {
            String::new()
        } else {
            format!(": {}", reasons(&summary))
        },
        summary.newton_iterations as f64 / steps,
        summary.cg_iterations as f64 / steps,
        summary.wall_s,
        out.display()
    );
    Ok(summary)
}

/// `"newton 3, strain_jump 1"`, or `"none"`.
fn reasons(summary: &RunSummary) -> String {
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

/// Removes the frame files (`frames/frame_NNNNNN.*`) of an earlier run in
/// `out`, so that the folder holds this run's frames only (with `keep =
/// Some(k)`, a resumed run's, frames `0..=k` are kept); other files are
/// left alone.
fn remove_stale_frames(out: &Path, keep: Option<usize>) -> Result<()> {
    let dir = out.join("frames");
    for entry in
        std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?
    {
        let path = entry?.path();
        let ours = path
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.strip_prefix("frame_"))
            .filter(|n| n.len() == 6 && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<usize>().ok())
            .is_some_and(|i| keep.is_none_or(|k| i > k));
        if ours && path.is_file() {
            std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove the old frame {}", path.display()))?;
        }
    }
    Ok(())
}

/// `weft run`.
pub fn run(args: &RunArgs) -> Result<()> {
    let out = args
        .resume
        .as_ref()
        .or(args.out.as_ref())
        .expect("clap requires --out or --resume");
    run_scene(
        &args.scene,
        out,
        args.quiet,
        args.one_iteration,
        args.backend,
        Checkpoints {
            every_s: args.checkpoint_every,
            resume: args.resume.is_some(),
        },
    )
    .map(|_| ())
}
