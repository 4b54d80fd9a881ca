//! Device benchmarks for `weft bench --backend cuda` (issue 5 §7): time per
//! assembly, per PCG iteration with its effective bandwidth against a
//! device-to-device copy measured in the same run, per full backward-Euler
//! step, and peak device memory per node.
//!
//! First run on a GPU (an H100) on 2026-11-26: BENCHMARKS.md.

use crate::cuda::{CudaBackend, CudaError};
use crate::step::{CudaSimulation, CudaStepError};
use std::time::Instant;
use weft_solver::{Simulation, step_halving_on_rejection};

/// One benchmark row of the device backend.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuBench {
    /// Nodes of the fabric.
    pub nodes: usize,
    /// Non-zero 5x5 blocks of the system matrix.
    pub blocks: usize,
    /// Wall time of one assembly of residual and matrix (s, mean of 5,
    /// synchronised).
    pub assembly_s: f64,
    /// Wall time of one iteration of the device-resident PCG (s, mean over
    /// 50 iterations, including the per-iteration scalar reads).
    pub pcg_iteration_s: f64,
    /// Bytes one PCG iteration streams at least ([`pcg_iteration_bytes`]).
    pub pcg_bytes: f64,
    /// Effective PCG bandwidth `pcg_bytes / pcg_iteration_s` (GB/s).
    pub pcg_gbps: f64,
    /// Device-to-device copy bandwidth, read + write (GB/s).
    pub copy_gbps: f64,
    /// Wall time of one full backward-Euler step (Newton to tolerance; the
    /// second step from rest), `None` when not measured.
    pub step_s: Option<f64>,
    /// Its step size (s).
    pub step_h: Option<f64>,
    /// Its Newton iterations.
    pub newton_iterations: Option<usize>,
    /// Its PCG iterations.
    pub cg_iterations: Option<usize>,
    /// Why the step was not measured although asked for: the last of five
    /// rejected attempts (each retried at half the step).
    pub step_rejected: Option<String>,
    /// Peak device memory used by this simulation (bytes: device use at the
    /// fullest point of a step, or after the PCG benchmark, minus the use
    /// before the upload).
    pub peak_device_bytes: usize,
}

/// The bytes one iteration of the fused device PCG reads and writes at
/// least, for `nodes` nodes and `blocks` matrix blocks: SpMV (values 200 B
/// and a column index 4 B per block, row pointers, and `p`, the mask and
/// `Ap`), the `x`/`r` update (reads `p, Ap, x, r`, writes `x, r`), the
/// block-Jacobi apply (200 B of inverse per node, reads `r`, writes `z`) and
/// the `p` update (reads `z, p`, writes `p`); vectors 40 B per node. Gathers
/// of `p` are counted once (perfect caching), so this is a floor.
pub fn pcg_iteration_bytes(nodes: usize, blocks: usize) -> f64 {
    let vectors = 3 + 6 + 2 + 3;
    (204 * blocks + 4 * (nodes + 1) + 40 * vectors * nodes + 200 * nodes) as f64
}

fn used_memory(backend: &CudaBackend) -> Result<usize, CudaError> {
    backend.context().bind_to_thread()?;
    let (free, total) = cudarc::driver::result::mem_get_info()?;
    Ok(total - free)
}

/// Benchmarks `sim` on the device (see the module docs); with `full_step`
/// also two steps from its state, the second one timed, each retried at
/// half the step after a rejection, at most four times
/// ([`weft_solver::step_halving_on_rejection`], as on the CPU). A step still
/// rejected is reported in [`GpuBench::step_rejected`], not as an error, so
/// the row keeps its assembly and PCG figures.
///
/// # Errors
/// [`CudaStepError::Unsupported`] for a scene the backend refuses, and
/// device failures.
pub fn measure(
    backend: &CudaBackend,
    sim: Simulation,
    full_step: bool,
) -> Result<GpuBench, CudaStepError> {
    let nodes = sim.assembler.fabric.node_count();
    let blocks = sim.assembler.matrix.nnz_blocks_general();
    let used0 = used_memory(backend)?;
    let mut cs = CudaSimulation::new(backend, sim)?;
    let h = cs.sim.h;
    // Assembly at the start of a step (residual + matrix).
    let sys = &mut cs.step.sys;
    sys.load_step_state(&cs.q, &cs.v)?;
    let mut r = sys.zeros()?;
    sys.assemble_into(&cs.v, h, &mut r, true)?;
    backend.synchronize()?;
    let reps = 5;
    let t0 = Instant::now();
    for _ in 0..reps {
        sys.assemble_into(&cs.v, h, &mut r, true)?;
    }
    backend.synchronize()?;
    let assembly_s = t0.elapsed().as_secs_f64() / reps as f64;
    // PCG iterations on that matrix (tolerance 0: all 50 run).
    let mut dv = sys.zeros()?;
    sys.solve_into(&r, &mut dv, 0.0, 2)?;
    backend.synchronize()?;
    sys.setup_preconditioner()?;
    let t0 = Instant::now();
    let res = sys.solve_into(&r, &mut dv, 0.0, 50)?;
    backend.synchronize()?;
    let pcg_iteration_s = t0.elapsed().as_secs_f64() / res.iterations.max(1) as f64;
    let pcg_bytes = pcg_iteration_bytes(nodes, blocks);
    let mut peak = used_memory(backend)?.saturating_sub(used0);
    drop((r, dv));
    // Device-to-device copy of a buffer the size of the matrix values (at
    // most 2 GiB).
    let len = (25 * blocks).min(1 << 28);
    let src = sys.upload_raw(&vec![1.0f64; len])?;
    let mut dst = sys.upload_raw(&vec![0.0f64; len])?;
    sys.copy(&src, &mut dst)?;
    backend.synchronize()?;
    let t0 = Instant::now();
    for _ in 0..reps {
        sys.copy(&src, &mut dst)?;
    }
    backend.synchronize()?;
    let copy_gbps = (2 * 8 * len * reps) as f64 / t0.elapsed().as_secs_f64() / 1e9;
    drop((src, dst));
    let (mut step_s, mut step_h, mut newton, mut cg) = (None, None, None, None);
    let mut step_rejected = None;
    if full_step {
        let quiet = |_: f64, _: &weft_solver::Rejection| {};
        let (first, h) = step_halving_on_rejection(h, 4, |h| cs.try_step(h), quiet)?;
        backend.synchronize()?;
        let timed = match first {
            Ok(_) => {
                let t0 = Instant::now();
                let (st, h) = step_halving_on_rejection(h, 4, |h| cs.try_step(h), quiet)?;
                backend.synchronize()?;
                st.map(|st| (st, h, t0.elapsed().as_secs_f64()))
            }
            Err(e) => Err(e),
        };
        match timed {
            Ok((st, h, s)) => {
                step_s = Some(s);
                step_h = Some(h);
                newton = Some(st.newton_iterations);
                cg = Some(st.cg_iterations);
            }
            Err(e) => step_rejected = Some(e.to_string()),
        }
        peak = peak.max(cs.step.peak_used.saturating_sub(used0));
    }
    Ok(GpuBench {
        nodes,
        blocks,
        assembly_s,
        pcg_iteration_s,
        pcg_bytes,
        pcg_gbps: pcg_bytes / pcg_iteration_s / 1e9,
        copy_gbps,
        step_s,
        step_h,
        newton_iterations: newton,
        cg_iterations: cg,
        step_rejected,
        peak_device_bytes: peak,
    })
}
