//! `weft run SCENE.json --out DIR` (DESIGN §8): a thin shell over the
//! library's [`weft::run`] (outputs, checkpoints and resume are documented
//! there), with the engine chosen by `--backend`, a progress bar and a
//! one-line summary.

use crate::backend::{BackendChoice, Engine, select};
use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use weft::run::{RunOptions, RunProgress, RunSummary, Stepper, prepare, reasons, run_prepared};
use weft_solver::{Simulation, SolverError, StepStats};

/// Arguments of `weft run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Scene file (JSON, DESIGN §8).
    pub scene: PathBuf,
    /// Output, checkpoint and resume.
    #[command(flatten)]
    pub output: crate::output::OutputArgs,
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

impl Stepper for Engine<'_> {
    fn sim(&self) -> &Simulation {
        Engine::sim(self)
    }
    fn sim_mut(&mut self) -> &mut Simulation {
        Engine::sim_mut(self)
    }
    fn advance_to(
        &mut self,
        t_end: f64,
        on_step: &mut dyn FnMut(&Simulation, &StepStats),
    ) -> Result<(), SolverError> {
        Engine::advance_to(self, t_end, on_step).map(|_| ())
    }
    fn name(&self) -> &'static str {
        match self {
            Engine::Cpu(_) => "cpu",
            Engine::Cuda(_) => "cuda",
        }
    }
}

/// The progress bar, and the wall time in assemblies and linear solves.
struct Bar {
    bar: ProgressBar,
    assemblies: usize,
    residuals: usize,
    assembly_s: f64,
    solve_s: f64,
}

impl RunProgress for Bar {
    fn start(&mut self, frames: usize, first: usize) {
        self.bar.set_length(frames as u64);
        self.bar.set_position(first as u64);
    }
    fn step(&mut self, s: &Simulation, st: &StepStats, steps: usize) {
        self.assemblies += st.assemblies;
        self.residuals += st.residual_evaluations;
        self.assembly_s += st.assembly_seconds;
        self.solve_s += st.solve_seconds;
        let rejected: usize = s.rejections.values().sum();
        self.bar.set_message(format!(
            "t {:.4} s  step {steps} ({rejected} rejected)  h {:.1e} s  newton {}  cg {}",
            s.t, st.h, st.newton_iterations, st.cg_iterations
        ));
    }
    fn frame(&mut self) {
        self.bar.inc(1);
    }
    fn finish(&mut self, ok: bool) {
        if ok {
            self.bar.finish_and_clear();
        } else {
            self.bar.abandon();
        }
    }
}

/// Runs `scene` on the engine `backend` selects, writing into `out`.
///
/// # Errors
/// As [`weft::run::prepare`] and [`weft::run::run_prepared`], plus the
/// backend selection's.
pub fn run_scene(
    scene: &std::path::Path,
    out: &std::path::Path,
    quiet: bool,
    backend: BackendChoice,
    opts: &RunOptions,
) -> Result<RunSummary> {
    let mut prepared = prepare(scene, out, opts)?;
    if let Some(mut engine) = prepared.take_sbd_engine() {
        if matches!(backend, BackendChoice::Cuda) {
            anyhow::bail!(
                "{}: --backend cuda: a triangle_cloth of \"model\": \"sbd\" runs on the CPU only (use --backend cpu or auto)",
                scene.display()
            );
        }
        if !quiet {
            eprintln!(
                "weft run: cpu (sbd): strain-based dynamics of the triangle_cloth in fixed {} ms steps",
                engine.sim().settings.dt * 1e3
            );
        }
        return run_with(prepared, &mut engine, quiet);
    }
    let sim = prepared.take_simulation();
    let selected = select(backend, &sim, "weft run")?;
    if !quiet || matches!(selected, crate::backend::Selected::Cpu { reason: Some(_) }) {
        eprintln!("weft run: {}", selected.describe());
    }
    let mut engine = Engine::new(&selected, sim)?;
    run_with(prepared, &mut engine, quiet)
}

/// Runs `prepared` on `engine` with a progress bar (none when `quiet`)
/// and prints the one-line summary.
fn run_with(
    prepared: weft::run::Prepared,
    engine: &mut dyn Stepper,
    quiet: bool,
) -> Result<RunSummary> {
    let out = prepared.out().to_path_buf();
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(1)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:30} {pos}/{len} frames  {msg}  [{elapsed_precise}, eta {eta}]",
        )
        .expect("valid template"),
    );
    let mut progress = Bar {
        bar,
        assemblies: 0,
        residuals: 0,
        assembly_s: 0.0,
        solve_s: 0.0,
    };
    let summary = run_prepared(prepared, engine, &mut progress)?;
    let steps = summary.steps.max(1) as f64;
    let Bar {
        assemblies,
        residuals,
        assembly_s,
        solve_s,
        ..
    } = progress;
    eprintln!(
        "weft run: {} s simulated on {} in {} steps ({} rejected{}), {:.1} Newton and {:.0} CG iterations per step, {:.2} s wall ({assemblies} assemblies and {residuals} line-search residuals {assembly_s:.2} s, linear solves {solve_s:.2} s) -> {}",
        // Rounded to the nanosecond: fixed steps that add up to the end
        // time print as it (2, not 1.9999999999998896).
        (summary.t * 1e9).round() / 1e9,
        summary.backend,
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

/// `weft run`.
pub fn run(args: &RunArgs) -> Result<()> {
    let out = args.output.dir();
    run_scene(
        &args.scene,
        out,
        args.quiet,
        args.backend,
        &RunOptions {
            one_iteration: args.one_iteration,
            checkpoint_every_s: args.output.checkpoint_every,
            resume: args.output.resume.is_some(),
        },
    )
    .map(|_| ())
}
