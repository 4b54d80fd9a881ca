//! `weft`: the command-line front end of the yarn-level cloth engine.
//!
//! Subcommands: `run` (simulate a scene file), `drape` (the garment
//! pipeline), `plot` and `analyze damping` (look at a run's energy curves),
//! `bench` (solver benchmarks), `mannequin` (weft's body and its
//! animations), `doctor` (the CUDA environment).

mod analyze;
mod backend;
mod batch;
mod bench;
mod cusick;
mod drape;
mod mannequin;
mod output;
mod run;

use clap::{Parser, Subcommand};

/// Yarn-level woven cloth simulation.
#[derive(Parser, Debug)]
#[command(name = "weft", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Simulate a scene file and write energy.csv, final_state.json and frames.
    Run(run::RunArgs),
    /// Plot energy curves of one run, or kinetic energy of several, as SVG.
    Plot(analyze::PlotArgs),
    /// Analyse a run's outputs.
    #[command(subcommand)]
    Analyze(analyze::AnalyzeCommand),
    /// Benchmark assembly, PCG and full backward-Euler steps on woven patches.
    Bench(bench::BenchArgs),
    /// Run the jobs of a batch manifest (scene runs, drapes, sweeps), or
    /// one shard of them; skips finished jobs and resumes interrupted ones.
    Batch(batch::BatchArgs),
    /// Weave a sewing pattern, sew it around a body and drape it; writes
    /// summary.json, final_state.json, yarn curves and preview.png.
    Drape(Box<drape::DrapeArgs>),
    /// The Cusick drape test of a fabric preset: drape coefficient and
    /// folds of a 30 cm specimen on an 18 cm disc; writes summary.json,
    /// yarn curves and preview.png.
    Cusick(cusick::CusickArgs),
    /// Write weft's own mannequin as OBJ, or an animation of it (raise the
    /// arms, turn the torso, walk) as an OBJ sequence for `weft drape
    /// --body-animation`.
    Mannequin(mannequin::MannequinArgs),
    /// Report the CUDA driver, device and NVRTC found (or why none), and
    /// whether the kernels compile.
    Doctor,
}

/// Refuses to run a binary built for x86-64-v3 (`.cargo/config.toml`:
/// AVX2 and FMA) on a CPU without those instructions, with the way out,
/// instead of dying on an illegal instruction inside a kernel.
fn check_cpu() -> anyhow::Result<()> {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    if !(std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma"))
    {
        anyhow::bail!(
            "this weft binary was built for x86-64-v3 CPUs (AVX2 and FMA, see .cargo/config.toml) \
             and this CPU lacks them; rebuild with RUSTFLAGS=\"-C target-cpu=x86-64\""
        );
    }
    Ok(())
}

/// glibc's allocator raises its mmap threshold (up to 32 MiB) each time a
/// block served by mmap is freed; the solver's per-step vectors and
/// coarse-level buffers (128 KiB to 32 MiB) then come from the heap
/// arena, and once freed they stay resident in the process there. A fixed
/// threshold of 128 KiB (glibc's default starting value) returns them to
/// the system: the step's peak resident memory falls from 6,181 to 5,921
/// bytes per node at 10^5 nodes and from 5,245 to 5,075 at 10^6
/// (`BENCHMARKS.md`, seventh session).
fn fix_mmap_threshold() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; it is called
    // before any thread is started.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

fn main() -> anyhow::Result<()> {
    check_cpu()?;
    fix_mmap_threshold();
    let cli = Cli::parse();
    match cli.command {
        Command::Run(args) => run::run(&args),
        Command::Batch(args) => batch::run(&args),
        Command::Plot(args) => analyze::plot(&args),
        Command::Analyze(cmd) => analyze::analyze(&cmd),
        Command::Bench(args) => bench::run(&args),
        Command::Drape(args) => drape::run(&args),
        Command::Cusick(args) => cusick::run(&args),
        Command::Mannequin(args) => mannequin::run(&args),
        Command::Doctor => {
            print!("{}", weft_cuda::doctor());
            Ok(())
        }
    }
}
