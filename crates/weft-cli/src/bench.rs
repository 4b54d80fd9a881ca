//! `weft bench`: solver benchmarks on square woven patches (DESIGN §8
//! record layout).
//!
//! Workload per configuration: a plain-weave patch of `⌈√N⌉²` crossings with
//! the [SBO17 §6.3] cloth sizes (0.57 mm spacing, R = 0.16 mm) and the example
//! cotton stiffnesses plus shear (0.05 N) and strain-rate damping in every
//! mode, two corners pinned, under gravity, from rest, h = 1 ms. Measured:
//! one assembly of residual and matrix, PCG iterations (50 iterations, the
//! mean), SpMV and a plain memory copy of the same size, and one full
//! backward-Euler step with Newton to tolerance 1e-6.
//!
//! With `--backend cuda` (default sizes 10^5, 10^6 and 4·10^6 nodes) the
//! rows come from the device ([`weft_cuda::bench::measure`]): time per
//! assembly, per device-resident PCG iteration with its effective bandwidth
//! against a device-to-device copy of the same run, per full step, and the
//! peak device memory per node. Without a usable device it says why and
//! exits non-zero.

use crate::backend::{BackendChoice, Selected, select};
use anyhow::Result;
use clap::Args;
use nalgebra::Vector3;
use serde::Serialize;
use std::time::Instant;
use weft_core::{FabricBuilder, Material, NodeSelector, WovenPatchSpec};
use weft_cuda::cuda::CudaBackend;
use weft_solver::multigrid::{Hierarchy, Multigrid, MultigridOptions};
use weft_solver::pcg::{BlockJacobi, CpuOps, pcg};
use weft_solver::{LinearSolver, Settings, Simulation, step_halving_on_rejection};

/// `--model` of `weft bench`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[value(rename_all = "snake_case")]
pub enum BenchModel {
    /// The yarn-level model on woven patches (the default table).
    #[default]
    Yarn,
    /// Strain-based dynamics \[SBD14\] with LOD bending springs \[Kim23\] on a
    /// triangulated square (`weft-shell`).
    Sbd,
    /// Implicit triangle-mesh cloth on the yarn model's solver: StVK
    /// membrane triangles with strain-rate damping \[SBO18\] and
    /// discrete-shell hinges (`weft_shell::implicit`), on the same square.
    Stvk,
    /// The three models side by side in one run, on the same 1 m square of
    /// the same vertices hanging from its two top corners: `stvk`, `sbd`
    /// and the yarn model (cotton woven at the grid's spacing, sliding
    /// off, backward Euler with adaptive steps of at most 5 ms).
    All,
}

/// `--preconditioner` of `weft bench` (the scene key's values).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
#[value(rename_all = "snake_case")]
pub enum BenchPreconditioner {
    /// Sparse Cholesky up to 1.5e6 free DOFs, multigrid above.
    Auto,
    /// Sparse Cholesky.
    Cholesky,
    /// Aggregation multigrid with yarn-line smoothers.
    Multigrid,
    /// Block-Jacobi.
    BlockJacobi,
}

/// Arguments of `weft bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Cloth model: `yarn` (woven patches, the solver table), `sbd`
    /// (strain-based dynamics on a triangulated 1 m square hanging from two
    /// corners: 5 substeps, 1 iteration, steps of 5 ms) or `stvk` (implicit
    /// StVK and discrete-shell cloth, cotton, on the same square: backward
    /// Euler, Newton, PCG, adaptive steps of at most 5 ms), or `all` (the
    /// two and the yarn model on that square, side by side). For these
    /// `--nodes` are vertices (default 10^4, 4·10^4 and 10^5) and only
    /// the CPU runs them.
    #[arg(long, value_enum, default_value_t = BenchModel::Yarn)]
    pub model: BenchModel,
    /// Woven-patch sizes in nodes (rounded up to a square grid); repeat the
    /// flag for several configurations. Default: 10^4, 10^5 and 10^6 on the
    /// CPU; 10^5, 10^6 and 4·10^6 on CUDA.
    #[arg(long = "nodes")]
    pub nodes: Vec<usize>,
    /// Print a JSON array of records instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Engine: `cpu`; `cuda` (the GPU rows; an error naming why when no
    /// usable device is found); `auto` (CUDA when a device is found, else
    /// the CPU with a one-line message).
    #[arg(long, value_enum, default_value_t = BackendChoice::Cpu)]
    pub backend: BackendChoice,
    /// Largest patch on which a full backward-Euler step (Newton to
    /// tolerance) is timed; larger patches run a one-iteration memory probe
    /// instead (block-Jacobi PCG needs thousands of iterations there).
    /// Default: 10^4 on the CPU, every size on CUDA.
    #[arg(long)]
    pub step_max_nodes: Option<usize>,
    /// Preconditioner of the full step (`integrator.preconditioner`). With
    /// `multigrid` the hierarchy's setup, value update and a solve of the
    /// first system to 1e-8 are timed as well.
    #[arg(long, value_enum, default_value = "auto")]
    pub preconditioner: BenchPreconditioner,
    /// Iteration cap of the timed multigrid solve (the relative residual
    /// reached is reported).
    #[arg(long, default_value_t = 10_000)]
    pub mg_max_iterations: usize,
}

/// One benchmark record (DESIGN §8 `weft bench --json`).
#[derive(Serialize, Debug)]
pub struct Record {
    backend: String,
    nodes: usize,
    dofs: usize,
    blocks: usize,
    matrix_bytes: usize,
    /// Process peak resident memory over the whole record (bytes per node),
    /// benchmark scaffolding (the bandwidth buffers) included.
    peak_bytes_per_node: f64,
    /// Peak resident memory while the simulation steps (bytes per node):
    /// the peak is reset (`/proc/self/clear_refs`) just before the warm-up
    /// and timed step (or the memory probe), so it counts the live
    /// simulation (fabric, matrix, preconditioner with its construction,
    /// Newton/PCG vectors) and what the steps allocate, not the kernel
    /// measurements' buffers (state copies, residual, block-Jacobi
    /// preconditioner, bandwidth buffers, the measured hierarchy), all
    /// dropped before. `None` where the kernel does not support the reset.
    step_peak_bytes_per_node: Option<f64>,
    assembly_s: f64,
    /// Wall time of one block-Jacobi PCG iteration (s).
    pcg_iteration_s: f64,
    spmv_gbps: f64,
    copy_gbps: f64,
    /// Bytes one block-Jacobi PCG iteration must stream at the least: the
    /// SpMV's (`BlockSparse::spmv_bytes`: blocks, indices, `p` read, `A p`
    /// written), the preconditioner's inverse blocks, and 16 passes over a
    /// vector of `dofs` f64 (dots `rᵀr`, `pᵀAp`, `rᵀz`: 5 reads; two axpys:
    /// 6; the preconditioner's `r` read and `z` write: 2; `p = z + βp`: 3).
    pcg_bytes: usize,
    /// `pcg_iteration_s` divided by the time a memory copy at `copy_gbps`
    /// takes for `pcg_bytes`: how far one PCG iteration is from the memory
    /// floor (the solver issue's target is at most 2).
    pcg_floor_ratio: f64,
    /// Wall time of one full step, `None` above `--step-max-nodes`.
    step_s: Option<f64>,
    step_h: Option<f64>,
    newton_iterations: Option<usize>,
    cg_iterations: Option<usize>,
    /// Where the full step's time went: assemblies of residual and matrix,
    /// the line search's residual evaluations (no matrix) and their wall
    /// time together (s), the linear solves' wall time, preconditioner
    /// set-up and multigrid hierarchy updates included (s), and the number
    /// of those updates.
    step_assemblies: Option<usize>,
    step_residual_evaluations: Option<usize>,
    step_assembly_s: Option<f64>,
    step_solve_s: Option<f64>,
    step_multigrid_updates: Option<usize>,
    /// Threads of the parallel loops (`RAYON_NUM_THREADS` or the cores).
    threads: usize,
    preconditioner: String,
    /// Multigrid only: hierarchy construction (s), value update for a new
    /// matrix (s), levels' node counts, PCG iterations and seconds per
    /// iteration of a solve of the first system to 1e-8, hierarchy bytes.
    mg_setup_s: Option<f64>,
    mg_update_s: Option<f64>,
    mg_levels: Option<Vec<usize>>,
    mg_solve_iterations: Option<usize>,
    mg_iteration_s: Option<f64>,
    mg_relative_residual: Option<f64>,
    mg_bytes: Option<usize>,
}

/// Resets the peak resident memory of this process to the current resident
/// memory (`/proc/self/clear_refs`, Linux 4.0 and later); `false` where that
/// is unavailable.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Returns the memory that the allocator holds free to the system
/// (glibc's `malloc_trim`; nothing elsewhere). The kernel measurements drop
/// a whole multigrid hierarchy before the step; some of its small blocks
/// stay resident in the threads' malloc arenas, about 120 MB at 10^6 nodes
/// in some runs and none in others (it depends on how the threads
/// interleaved), which the step's peak would otherwise count as the
/// simulation's.
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Peak resident memory of this process so far (bytes), from
/// `/proc/self/status` (`VmHWM`); 0 where unavailable.
fn peak_rss() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|k| k.parse::<usize>().ok())
            })
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

/// The benchmark patch of about `nodes` nodes (module docs), solved with
/// `preconditioner`.
fn patch_simulation(nodes: usize, preconditioner: BenchPreconditioner) -> Result<Simulation> {
    let side = (nodes as f64).sqrt().ceil() as usize;
    let spacing = 0.57e-3;
    let extent = spacing * (side - 1) as f64;
    let mut b = FabricBuilder::new(vec![Material::sbo17()])?;
    let mut spec = WovenPatchSpec::new("sbo17", [extent, extent], [side, side], [0.0, 0.0, 0.0]);
    spec.pinned = vec![NodeSelector::Corner(0), NodeSelector::Corner(1)];
    b.add_woven_patch(&spec)?;
    let fabric = b.build()?;
    let settings = Settings {
        dt: 1e-3,
        linear_solver: match preconditioner {
            BenchPreconditioner::Auto => LinearSolver::Auto,
            BenchPreconditioner::Cholesky => LinearSolver::Cholesky,
            BenchPreconditioner::Multigrid => LinearSolver::Multigrid,
            BenchPreconditioner::BlockJacobi => LinearSolver::BlockJacobi,
        },
        ..Default::default()
    };
    Ok(Simulation::new(
        fabric,
        Vector3::new(0.0, -9.81, 0.0),
        settings,
        vec![],
    ))
}

fn measure(
    nodes: usize,
    backend: &str,
    full_step: bool,
    preconditioner: BenchPreconditioner,
    mg_max_iterations: usize,
) -> Result<Record> {
    let mut sim = patch_simulation(nodes, preconditioner)?;
    let n = sim.assembler.fabric.node_count();
    let dofs = sim.q.len();

    // The kernel figures. Everything they allocate (state copies, the
    // residual, the block-Jacobi preconditioner, the hierarchy) is dropped
    // at the end of this block, before the step's peak memory is measured:
    // the step peak is the simulation's, not the benchmark's.
    let (assembly_s, pcg_iteration_s, pcg_bytes, spmv_gbps, copy_gbps, mg) = {
        // Assembly (residual + matrix) at the start of a step.
        let (q, v) = (sim.q.clone(), sim.v.clone());
        let mut r = vec![0.0; dofs];
        let anchors = sim.anchors.clone();
        sim.assembler
            .assemble(&q, &v, &v, 1e-3, &anchors, &mut r, true);
        let t0 = Instant::now();
        sim.assembler
            .assemble(&q, &v, &v, 1e-3, &anchors, &mut r, true);
        let assembly_s = t0.elapsed().as_secs_f64();
        drop((q, v, anchors));

        // PCG iterations and SpMV on that matrix.
        let free = sim.free_mask().to_vec();
        let pre = BlockJacobi::new(&sim.assembler.matrix, &free);
        let ops = CpuOps {
            matrix: &sim.assembler.matrix,
            preconditioner: &pre,
            free: &free,
        };
        let mut x = vec![0.0; dofs];
        let iters = 50;
        let t0 = Instant::now();
        let res = pcg(&ops, &r, &mut x, 0.0, iters);
        let pcg_iteration_s = t0.elapsed().as_secs_f64() / res.iterations.max(1) as f64;
        let m = &sim.assembler.matrix;
        let pcg_bytes = m.spmv_bytes() + std::mem::size_of_val(&pre.inverse[..]) + 16 * 8 * dofs;
        // The block-Jacobi inverses (200 B/node) are not needed any more:
        // freed before the copy buffers and the multigrid measurement, the
        // process peak below stays the simulation's plus the measurement's
        // own buffers.
        drop(pre);
        let mut y = vec![0.0; dofs];
        let reps = 10;
        let t0 = Instant::now();
        for _ in 0..reps {
            m.spmv(&r, &mut y);
        }
        let spmv_s = t0.elapsed().as_secs_f64() / reps as f64;
        let spmv_gbps = m.spmv_bytes() as f64 / spmv_s / 1e9;
        // Plain copy (read + write) of a buffer the size of the matrix values, at
        // most 256 MB (enough to defeat the caches without inflating the peak
        // memory), touched once before timing so page faults are not measured.
        let len = (m.values.len() * 25).min(32 << 20);
        let src = vec![1.0f64; len];
        let mut dst = vec![0.0f64; len];
        dst.copy_from_slice(&src);
        let t0 = Instant::now();
        for _ in 0..reps {
            dst.copy_from_slice(&src);
            std::hint::black_box(&mut dst);
        }
        let copy_s = t0.elapsed().as_secs_f64() / reps as f64;
        let copy_gbps = (2 * 8 * src.len()) as f64 / copy_s / 1e9;
        drop((src, dst, y, x));

        let mut mg = (None, None, None, None, None, None, None);
        if preconditioner == BenchPreconditioner::Multigrid {
            let a = &sim.assembler.matrix;
            let t0 = Instant::now();
            let mut h = Hierarchy::new(a, &free, MultigridOptions::default())
                .map_err(|e| anyhow::anyhow!("multigrid setup failed: {e}"))?;
            let setup = t0.elapsed().as_secs_f64();
            let t0 = Instant::now();
            h.update(a)
                .map_err(|e| anyhow::anyhow!("multigrid update failed: {e}"))?;
            let update = t0.elapsed().as_secs_f64();
            let pre = Multigrid {
                hierarchy: &h,
                matrix: a,
            };
            let ops = CpuOps {
                matrix: a,
                preconditioner: &pre,
                free: &free,
            };
            let mut x = vec![0.0; dofs];
            let t0 = Instant::now();
            let res = pcg(&ops, &r, &mut x, 1e-8, mg_max_iterations);
            let per = t0.elapsed().as_secs_f64() / res.iterations.max(1) as f64;
            mg = (
                Some(setup),
                Some(update),
                Some(h.level_nodes(a)),
                Some(res.iterations),
                Some(per),
                Some(h.bytes()),
                Some(res.relative_residual),
            );
        }
        (
            assembly_s,
            pcg_iteration_s,
            pcg_bytes,
            spmv_gbps,
            copy_gbps,
            mg,
        )
    };

    let process_peak = peak_rss();
    release_free_memory();
    let reset = reset_peak_rss();
    let (step_s, step_h, newton, cg, breakdown) = if full_step {
        // Warm up: 2 ms of draping with adaptive steps, so the step measured
        // is a generic deformed state rather than the degenerate flat start;
        // then one full backward-Euler step of the controller's current size.
        sim.settings.adaptive = true;
        sim.advance_to(2e-3, |_, _| {})
            .map_err(|e| anyhow::anyhow!("benchmark warm-up failed: {e}"))?;
        // As the step controller does, a rejected attempt is retried at half
        // the step (small patches hanging from two corners occasionally
        // need it; the time includes the rejected attempts).
        let updates = sim.multigrid_updates();
        let t0 = Instant::now();
        let (outcome, h) = step_halving_on_rejection(
            sim.h,
            4,
            |h| Ok::<_, std::convert::Infallible>(sim.try_step(h)),
            |h, e| eprintln!("weft bench: step of {h:.3e} s rejected ({e}); retrying at half"),
        )
        .unwrap_or_else(|never| match never {});
        let stats =
            outcome.map_err(|e| anyhow::anyhow!("benchmark step rejected 5 times, last: {e}"))?;
        (
            Some(t0.elapsed().as_secs_f64()),
            Some(h),
            Some(stats.newton_iterations),
            Some(stats.cg_iterations),
            Some((
                stats.assemblies,
                stats.assembly_seconds,
                stats.solve_seconds,
                sim.multigrid_updates() - updates,
                stats.residual_evaluations,
            )),
        )
    } else {
        // Memory probe: one Newton iteration with 50 PCG iterations touches
        // every buffer a full step allocates. Whether that capped iteration
        // converges is irrelevant here (it usually does not), so its outcome
        // is not checked.
        sim.settings.one_iteration = true;
        sim.settings.cg_max_iterations = 50;
        let _probe = sim.try_step(1e-4);
        (None, None, None, None, None)
    };
    // One reading for both peaks: reading /proc allocates, so a second
    // reading can be a page above the first.
    let final_peak = peak_rss();
    let m = &sim.assembler.matrix;
    Ok(Record {
        backend: backend.into(),
        nodes: n,
        dofs,
        blocks: m.nnz_blocks(),
        matrix_bytes: m.bytes(),
        peak_bytes_per_node: process_peak.max(final_peak) as f64 / n as f64,
        step_peak_bytes_per_node: reset.then(|| final_peak as f64 / n as f64),
        assembly_s,
        pcg_iteration_s,
        pcg_bytes,
        pcg_floor_ratio: pcg_iteration_s * copy_gbps * 1e9 / pcg_bytes as f64,
        spmv_gbps,
        copy_gbps,
        step_s,
        step_h,
        newton_iterations: newton,
        cg_iterations: cg,
        step_assemblies: breakdown.map(|b| b.0),
        step_residual_evaluations: breakdown.map(|b| b.4),
        step_assembly_s: breakdown.map(|b| b.1),
        step_solve_s: breakdown.map(|b| b.2),
        step_multigrid_updates: breakdown.map(|b| b.3),
        threads: weft_solver::par::threads(),
        preconditioner: format!("{preconditioner:?}"),
        mg_setup_s: mg.0,
        mg_update_s: mg.1,
        mg_levels: mg.2,
        mg_solve_iterations: mg.3,
        mg_iteration_s: mg.4,
        mg_bytes: mg.5,
        mg_relative_residual: mg.6,
    })
}

/// One device benchmark row (`weft bench --backend cuda --json`).
#[derive(Serialize, Debug)]
pub struct GpuRecord {
    backend: &'static str,
    device: String,
    nodes: usize,
    dofs: usize,
    blocks: usize,
    assembly_s: f64,
    pcg_iteration_s: f64,
    /// Bytes one PCG iteration streams at least.
    pcg_bytes: f64,
    /// Effective PCG bandwidth (GB/s).
    pcg_gbps: f64,
    /// Device-to-device copy bandwidth of the same run (GB/s).
    copy_gbps: f64,
    /// `pcg_gbps / copy_gbps`.
    pcg_fraction_of_copy: f64,
    step_s: Option<f64>,
    step_h: Option<f64>,
    newton_iterations: Option<usize>,
    cg_iterations: Option<usize>,
    /// Why the full step was not measured (five rejected attempts).
    step_rejected: Option<String>,
    peak_device_bytes_per_node: f64,
}

fn run_cuda(args: &BenchArgs, backend: &CudaBackend) -> Result<()> {
    let mut sizes = if args.nodes.is_empty() {
        vec![100_000, 1_000_000, 4_000_000]
    } else {
        args.nodes.clone()
    };
    sizes.sort_unstable();
    let step_max = args.step_max_nodes.unwrap_or(usize::MAX);
    if !args.json {
        // Each row is printed when measured, so a long run that is stopped
        // keeps the rows it finished.
        println!(
            "{:>9} {:>10} {:>10} {:>10} {:>9} {:>9} {:>6} {:>9} {:>7} {:>7} {:>9}",
            "nodes",
            "blocks",
            "assembly",
            "pcg iter",
            "pcg",
            "d2d copy",
            "ratio",
            "step",
            "newton",
            "cg",
            "peak"
        );
        println!(
            "{:>9} {:>10} {:>10} {:>10} {:>9} {:>9} {:>6} {:>9} {:>7} {:>7} {:>9}",
            "", "", "ms", "ms", "GB/s", "GB/s", "", "s", "iters", "iters", "B/node"
        );
    }
    let mut records = Vec::new();
    for &n in &sizes {
        if !args.json {
            eprintln!(
                "weft bench: woven patch of {n} nodes on {} ...",
                backend.device.name
            );
        }
        // The device has block-Jacobi PCG only.
        let sim = patch_simulation(n, BenchPreconditioner::BlockJacobi)?;
        let dofs = sim.q.len();
        let b = weft_cuda::bench::measure(backend, sim, n <= step_max)?;
        let r = GpuRecord {
            backend: "cuda",
            device: backend.device.name.clone(),
            nodes: b.nodes,
            dofs,
            blocks: b.blocks,
            assembly_s: b.assembly_s,
            pcg_iteration_s: b.pcg_iteration_s,
            pcg_bytes: b.pcg_bytes,
            pcg_gbps: b.pcg_gbps,
            copy_gbps: b.copy_gbps,
            pcg_fraction_of_copy: b.pcg_gbps / b.copy_gbps,
            step_s: b.step_s,
            step_h: b.step_h,
            newton_iterations: b.newton_iterations,
            cg_iterations: b.cg_iterations,
            step_rejected: b.step_rejected,
            peak_device_bytes_per_node: b.peak_device_bytes as f64 / b.nodes as f64,
        };
        if !args.json {
            println!(
                "{:>9} {:>10} {:>10.3} {:>10.4} {:>9.1} {:>9.1} {:>6.2} {:>9} {:>7} {:>7} {:>9.0}",
                r.nodes,
                r.blocks,
                r.assembly_s * 1e3,
                r.pcg_iteration_s * 1e3,
                r.pcg_gbps,
                r.copy_gbps,
                r.pcg_fraction_of_copy,
                step_cell(r.step_s, r.step_rejected.is_some()),
                r.newton_iterations.map_or("-".into(), |s| s.to_string()),
                r.cg_iterations.map_or("-".into(), |s| s.to_string()),
                r.peak_device_bytes_per_node
            );
            if let Some(why) = &r.step_rejected {
                println!(
                    "{:>9} full step rejected five times (halving the step each time); last: {why}",
                    ""
                );
            }
        }
        records.push(r);
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&records)?);
    }
    Ok(())
}

/// The table's step cell: seconds, `rejected`, or `-` when not measured.
fn step_cell(step_s: Option<f64>, rejected: bool) -> String {
    match step_s {
        Some(s) => format!("{s:.3}"),
        None if rejected => "rejected".into(),
        None => "-".into(),
    }
}

/// Runs the configurations in increasing size (so the process peak memory
/// reported for each is its own) and prints a table or JSON.
///
/// # Errors
/// With `--backend cuda`: no usable device (naming why) or a device
/// failure; a benchmark step that fails.
pub fn run(args: &BenchArgs) -> Result<()> {
    if args.model != BenchModel::Yarn {
        return run_triangle_model(args);
    }
    // The benchmark patch uses only what the CUDA backend implements, so
    // the selection depends on the device alone.
    let probe = patch_simulation(4, args.preconditioner)?;
    let selected = select(args.backend, &probe, "weft bench")?;
    drop(probe);
    if let Selected::Cuda(b) = &selected {
        return run_cuda(args, b);
    }
    if let Selected::Cpu { reason: Some(_) } = &selected {
        eprintln!("weft bench: {}", selected.describe());
    }
    let mut sizes = if args.nodes.is_empty() {
        vec![10_000, 100_000, 1_000_000]
    } else {
        args.nodes.clone()
    };
    sizes.sort_unstable();
    let step_max = args.step_max_nodes.unwrap_or(10_000);
    let mut records = Vec::new();
    for &n in &sizes {
        if !args.json {
            eprintln!("weft bench: woven patch of {n} nodes ...");
        }
        records.push(measure(
            n,
            "cpu",
            n <= step_max,
            args.preconditioner,
            args.mg_max_iterations,
        )?);
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&records)?);
    } else {
        println!(
            "{:>9} {:>9} {:>10} {:>9} {:>9} {:>9} {:>10} {:>11} {:>9} {:>8} {:>8} {:>6} {:>8} {:>7} {:>6}",
            "nodes",
            "dofs",
            "blocks",
            "matrix",
            "peak",
            "step peak",
            "assembly",
            "pcg iter",
            "pcg/floor",
            "spmv",
            "copy",
            "ratio",
            "step",
            "newton",
            "cg"
        );
        println!(
            "{:>9} {:>9} {:>10} {:>9} {:>9} {:>9} {:>10} {:>11} {:>9} {:>8} {:>8} {:>6} {:>8} {:>7} {:>6}",
            "",
            "",
            "",
            "MB",
            "B/node",
            "B/node",
            "s",
            "ms",
            "",
            "GB/s",
            "GB/s",
            "",
            "s",
            "iters",
            "iters"
        );
        for r in &records {
            println!(
                "{:>9} {:>9} {:>10} {:>9.1} {:>9.0} {:>9} {:>10.4} {:>11.3} {:>9.2} {:>8.2} {:>8.2} {:>6.2} {:>8} {:>7} {:>6}",
                r.nodes,
                r.dofs,
                r.blocks,
                r.matrix_bytes as f64 / 1e6,
                r.peak_bytes_per_node,
                r.step_peak_bytes_per_node
                    .map_or("-".into(), |b| format!("{b:.0}")),
                r.assembly_s,
                r.pcg_iteration_s * 1e3,
                r.pcg_floor_ratio,
                r.spmv_gbps,
                r.copy_gbps,
                r.spmv_gbps / r.copy_gbps,
                r.step_s.map_or("-".into(), |s| format!("{s:.3}")),
                r.newton_iterations.map_or("-".into(), |s| s.to_string()),
                r.cg_iterations.map_or("-".into(), |s| s.to_string())
            );
        }
        for r in records.iter().filter(|r| r.step_assemblies.is_some()) {
            println!(
                "step, {} nodes: {} assemblies and {} line-search residuals in {:.3} s, linear solves {:.3} s ({} multigrid hierarchy updates), other {:.3} s",
                r.nodes,
                r.step_assemblies.unwrap_or_default(),
                r.step_residual_evaluations.unwrap_or_default(),
                r.step_assembly_s.unwrap_or_default(),
                r.step_solve_s.unwrap_or_default(),
                r.step_multigrid_updates.unwrap_or_default(),
                r.step_s.unwrap_or_default()
                    - r.step_assembly_s.unwrap_or_default()
                    - r.step_solve_s.unwrap_or_default()
            );
        }
        for r in records.iter().filter(|r| r.mg_setup_s.is_some()) {
            println!(
                "multigrid, {} nodes: levels {:?}, setup {:.3} s, update {:.3} s, {} MB; solve to 1e-8: {} PCG iterations of {:.2} ms, relative residual {:.2e}",
                r.nodes,
                r.mg_levels.as_deref().unwrap_or_default(),
                r.mg_setup_s.unwrap_or_default(),
                r.mg_update_s.unwrap_or_default(),
                r.mg_bytes.unwrap_or_default() / 1_000_000,
                r.mg_solve_iterations.unwrap_or_default(),
                r.mg_iteration_s.unwrap_or_default() * 1e3,
                r.mg_relative_residual.unwrap_or_default()
            );
        }
    }
    Ok(())
}

/// One `weft bench --model sbd|stvk|all` record.
#[derive(Serialize, Debug)]
struct TriangleRecord {
    /// `stvk`, `sbd` or `yarn`.
    model: &'static str,
    /// `cpu` or `cuda` (only `stvk` runs on CUDA).
    backend: &'static str,
    /// Vertices (yarn: crossings, one node each).
    vertices: usize,
    /// Membrane triangles (0 for the yarn model).
    triangles: usize,
    /// Bending springs (sbd), discrete-shell hinges (stvk) or yarn bending
    /// elements (yarn).
    bending_elements: usize,
    threads: usize,
    /// Mesh, bending elements, colouring (and for the implicit models the
    /// matrix pattern) (s).
    setup_s: f64,
    /// Steps measured after the warm-up ([`timed_steps`]).
    steps: usize,
    /// Mean wall time of 5 ms of simulated time (ms).
    step_ms: f64,
    /// `step_ms` per vertex (µs).
    step_us_per_vertex: f64,
    /// Newton iterations per 5 ms (0 for sbd).
    newton_per_step: f64,
}

/// Warm-up and measured steps of 5 ms on a square of `vertices`: 5 and 20
/// up to 2·10^4 vertices, 1 and 3 above (an implicit step of 10^5 vertices
/// takes tens of seconds on two cores).
fn timed_steps(vertices: usize) -> (usize, usize) {
    if vertices <= 20_000 { (5, 20) } else { (1, 3) }
}

/// A model's step of 5 ms, returning its Newton iterations.
type Stepper<'a> = Box<dyn FnMut() -> Result<usize> + 'a>;

/// The implicit simulation of the bench square under gravity, steps of at
/// most 5 ms.
fn implicit_simulation(fabric: weft_core::Fabric) -> Simulation {
    let settings = Settings {
        dt: 0.005,
        dt_max: 0.005,
        ..Settings::default()
    };
    Simulation::new(fabric, Vector3::new(0.0, -9.81, 0.0), settings, Vec::new())
}

/// The implicit simulation's step of 5 ms (adaptive steps of at most 5 ms)
/// on the CPU.
fn implicit_stepper(fabric: weft_core::Fabric) -> Stepper<'static> {
    let mut sim = implicit_simulation(fabric);
    Box::new(move || {
        let t = sim.t + 0.005;
        let stats = sim.advance_to(t, |_, _| {})?;
        Ok(stats.iter().map(|s| s.newton_iterations).sum())
    })
}

/// As [`implicit_stepper`] on the engine `selected` (the CPU or the CUDA
/// device).
///
/// # Errors
/// A device failure while uploading the simulation.
fn engine_stepper<'a>(selected: &'a Selected, sim: Simulation) -> Result<Stepper<'a>> {
    let mut engine = crate::backend::Engine::new(selected, sim)?;
    Ok(Box::new(move || {
        let t = engine.sim().t + 0.005;
        let stats = engine.advance_to(t, |_, _| {})?;
        Ok(stats.iter().map(|s| s.newton_iterations).sum())
    }))
}

/// The yarn model on the benchmark square: cotton
/// ([`weft_core::FabricPreset::Cotton`], homogenised to the spacing
/// `1/(side-1)` m, sliding off) woven as `side x side` crossings in the
/// `x-y` plane from `(0, -1, 0)` to `(1, 0, 0)`, hanging from its two top
/// corners.
fn yarn_square(side: usize) -> Result<weft_core::Fabric> {
    let spacing = 1.0 / (side - 1) as f64;
    let material = weft_core::FabricPreset::Cotton.material(spacing, false);
    let mut spec = WovenPatchSpec::new(&material.name, [1.0, 1.0], [side, side], [0.5, -0.5, 0.0]);
    spec.normal = [0.0, 0.0, 1.0];
    spec.warp_direction = [1.0, 0.0, 0.0];
    spec.sliding = false;
    // Warp yarns run along `warp_direction = x`, weft yarns along
    // `normal × x = y`; corners 2 and 3 are the two ends of the last warp
    // yarn, at the largest weft offset `y = 0`: `(1, 0, 0)` and `(0, 0, 0)`
    // (`weft_core::fabric::NodeSelector::Corner`).
    spec.pinned = vec![NodeSelector::Corner(2), NodeSelector::Corner(3)];
    let mut b = FabricBuilder::new(vec![material])?;
    b.add_woven_patch(&spec)?;
    Ok(b.build()?)
}

/// `weft bench --model sbd|stvk|all`: a 1 m square of `⌈√N⌉²` vertices
/// hanging from its two top corners, with strain-based dynamics (default
/// options, LOD bending springs), the implicit StVK + discrete-shell cloth
/// (default cotton [`weft_shell::ShellMaterial`], steps of at most 5 ms)
/// or, for `all`, those two and the yarn model ([`yarn_square`]) on the
/// same vertices.
fn run_triangle_model(args: &BenchArgs) -> Result<()> {
    use weft_shell::SbdOptions;
    use weft_shell::sbd::hanging_square;
    let models: &[BenchModel] = match args.model {
        BenchModel::All => &[BenchModel::Stvk, BenchModel::Sbd, BenchModel::Yarn],
        BenchModel::Sbd => &[BenchModel::Sbd],
        _ => &[BenchModel::Stvk],
    };
    let name = |m: BenchModel| match m {
        BenchModel::Sbd => "sbd",
        BenchModel::Yarn => "yarn",
        _ => "stvk",
    };
    anyhow::ensure!(
        args.backend != BackendChoice::Cuda || args.model == BenchModel::Stvk,
        "weft bench --model {} runs on the CPU only (strain-based dynamics is a position-based \
         integrator without CUDA kernels; --model stvk runs on CUDA)",
        if args.model == BenchModel::All {
            "all"
        } else {
            name(args.model)
        }
    );
    let sizes = if args.nodes.is_empty() {
        vec![10_000, 40_000, 100_000]
    } else {
        args.nodes.clone()
    };
    let mut records = Vec::new();
    for n in sizes {
        let side = ((n as f64).sqrt().ceil() as usize).max(2);
        for &model in models {
            let name = name(model);
            if !args.json {
                eprintln!("weft bench: {name} on {side} x {side} vertices ...");
            }
            let start = Instant::now();
            // The StVK model's engine (CPU or CUDA), outliving its stepper.
            let selected;
            let mut backend = "cpu";
            let (triangles, bending_elements, mut step): (usize, usize, Stepper) = match model {
                BenchModel::Sbd => {
                    let mut sim = hanging_square(side, SbdOptions::default())?;
                    let counts = (sim.triangle_count(), sim.springs().len());
                    (
                        counts.0,
                        counts.1,
                        Box::new(move || {
                            sim.step(0.005);
                            Ok(0)
                        }),
                    )
                }
                BenchModel::Yarn => {
                    let fabric = yarn_square(side)?;
                    let bending = fabric.elements.bending.len();
                    (0, bending, implicit_stepper(fabric))
                }
                _ => {
                    let mesh = weft_shell::ClothMesh::rectangle(
                        [1.0, 1.0],
                        [side, side],
                        Vector3::new(0.0, -1.0, 0.0),
                        Vector3::x(),
                        Vector3::y(),
                    )?;
                    let fabric = weft_shell::shell_fabric(
                        &mesh,
                        &weft_shell::ShellMaterial::default(),
                        &[(side - 1) * side, side * side - 1],
                    )?;
                    let counts = (
                        fabric.elements.triangles.len(),
                        fabric.elements.hinges.len(),
                    );
                    let sim = implicit_simulation(fabric);
                    selected = select(args.backend, &sim, "weft bench --model stvk")?;
                    if let Selected::Cuda(_) = selected {
                        backend = "cuda";
                    }
                    if !args.json {
                        eprintln!("weft bench: {}", selected.describe());
                    }
                    (counts.0, counts.1, engine_stepper(&selected, sim)?)
                }
            };
            let setup_s = start.elapsed().as_secs_f64();
            let (warm_up, steps) = timed_steps(side * side);
            for _ in 0..warm_up {
                step()?;
            }
            let start = Instant::now();
            let mut newton = 0;
            for _ in 0..steps {
                newton += step()?;
            }
            let step_ms = start.elapsed().as_secs_f64() / steps as f64 * 1e3;
            records.push(TriangleRecord {
                model: name,
                backend,
                vertices: side * side,
                triangles,
                bending_elements,
                threads: weft_solver::par::threads(),
                setup_s,
                steps,
                step_ms,
                step_us_per_vertex: step_ms * 1e3 / (side * side) as f64,
                newton_per_step: newton as f64 / steps as f64,
            });
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&records)?);
    } else {
        println!(
            "{:>5} {:>7} {:>9} {:>9} {:>9} {:>7} {:>8} {:>9} {:>9} {:>7}",
            "model",
            "backend",
            "vertices",
            "triangles",
            "bending",
            "threads",
            "setup s",
            "step ms",
            "us/vertex",
            "newton"
        );
        for r in &records {
            println!(
                "{:>5} {:>7} {:>9} {:>9} {:>9} {:>7} {:>8.3} {:>9.1} {:>9.3} {:>7.1}",
                r.model,
                r.backend,
                r.vertices,
                r.triangles,
                r.bending_elements,
                r.threads,
                r.setup_s,
                r.step_ms,
                r.step_us_per_vertex,
                r.newton_per_step
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The yarn square hangs from its two top corners, like the triangle
    /// models' square: exactly the nodes at `(0, 0, 0)` and `(1, 0, 0)` are
    /// held.
    #[test]
    fn yarn_square_is_pinned_at_its_top_corners() {
        let fabric = super::yarn_square(5).unwrap();
        let held: Vec<[f64; 3]> = (0..fabric.node_count())
            .filter(|&i| !fabric.free[i][0])
            .map(|i| fabric.initial.x[i].into())
            .collect();
        assert_eq!(held.len(), 2, "{held:?}");
        for want in [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]] {
            assert!(
                held.iter()
                    .any(|x| x.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-12)),
                "{want:?} not held: {held:?}"
            );
        }
    }
}
