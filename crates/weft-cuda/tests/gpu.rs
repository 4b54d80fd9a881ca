//! CPU/GPU parity on a device (issue 5 §6): forces and matrix blocks of one
//! assembly against the CPU assembler in both matrix modes (projected and
//! exact elastic Hessians, `exact_hessians` set on the assembler and the
//! device system, the scene with two triangle-mesh colliders taken as
//! tangent planes and self-collision pairs; 1e-10 relative, `‖a - b‖₂/‖b‖₂` over all entries), and
//! PCG on the default (projected, SPD) matrix (block-Jacobi inverses 1e-10; device-resident
//! fused PCG and the host PCG over `CudaOps`: iterations within 2 of the
//! CPU, solutions within 1e-10) on the scene of tests/common; and a
//! 100-step trajectory of the device step driver against the CPU
//! (positions 1e-8 relative, velocities 1e-6 of the largest, Newton
//! tolerance 1e-8); the acceptance and anchor-update kernels against the
//! CPU checks and `Assembler::update_anchors` (same segments, 1e-12).
//!
//! Every test skips with a visible message when no CUDA device (or no
//! NVRTC) is available. First run on a GPU (an H100) on 2026-11-26:
//! BENCHMARKS.md has the figures.

mod common;

use common::{flat, inputs, mesh_scene, rel, scene, with_self_collision};
use weft_cuda::cuda::{CudaBackend, CudaOps, DeviceSystem};
use weft_cuda::plan::{AssemblyPlan, colliders_at};
use weft_solver::pcg::{BlockJacobi, CpuOps, PcgStatus, pcg};

fn backend(test: &str) -> Option<CudaBackend> {
    match CudaBackend::new() {
        Ok(b) => {
            eprintln!("{test}: running on {} ({})", b.device.name, b.arch);
            Some(b)
        }
        Err(e) => {
            eprintln!("SKIPPED: {test}: no CUDA device ({e})");
            None
        }
    }
}

#[test]
fn gpu_assembly_matches_the_cpu_assembler() {
    let Some(b) = backend("GPU assembly parity") else {
        return;
    };
    // The shared scene plus two triangle-mesh boxes (static and keyframed),
    // taken as per-node tangent planes at each step start.
    let mut a = mesh_scene();
    with_self_collision(&mut a, 2.5e-3, 60.0, 1);
    let t0 = a.time;
    let plan = AssemblyPlan::new(&a).unwrap();
    let mut sys = DeviceSystem::new(&b, &plan).unwrap();
    for (seed, exact) in (1..=3u64).flat_map(|s| [(s, false), (s, true)]) {
        a.exact_hessians = exact;
        sys.exact_hessians = exact;
        let s = inputs(&a, 0x9e37_79b9 + seed, true);
        a.begin_step(&s.q_n, &s.v_n, s.h, t0 + s.h);
        let colliders = colliders_at(&a, a.time).unwrap();
        assert!(!colliders.planes.is_empty() && !colliders.pairs.is_empty());
        let mut res_cpu = vec![0.0; s.q_n.len()];
        let (e_cpu, p_cpu) = a.assemble(&s.q_n, &s.v_n, &s.v, s.h, &s.anchors, &mut res_cpu, true);
        sys.upload_step(&s.q_n, &s.v_n, &s.anchors, &colliders)
            .unwrap();
        sys.set_velocity(&s.v).unwrap();
        let (e_gpu, p_gpu) = sys.assemble(s.h, true).unwrap();
        let res_gpu = sys.residual().unwrap();
        let vals = sys.matrix_values().unwrap();
        let errs = [
            ("residual", rel(&res_gpu, &res_cpu)),
            (
                "matrix",
                rel(&flat(&vals), &flat(&a.matrix.to_general().values)),
            ),
            ("kinetic", rel(&[e_gpu.kinetic], &[e_cpu.kinetic])),
            ("elastic", rel(&[e_gpu.elastic], &[e_cpu.elastic])),
            ("gravity", rel(&[e_gpu.gravity], &[e_cpu.gravity])),
            (
                "dissipation",
                rel(&[e_gpu.dissipation_power], &[e_cpu.dissipation_power]),
            ),
            ("peak strain", rel(&[p_gpu.value], &[p_cpu.value])),
        ];
        for (name, e) in errs {
            eprintln!("seed {seed}, exact {exact}: {name} relative error {e:.3e}");
            assert!(
                e <= 1e-10,
                "seed {seed}, exact {exact}: {name} relative error {e:.3e}"
            );
        }
    }
}

#[test]
fn gpu_pcg_matches_the_cpu_pcg() {
    let Some(b) = backend("GPU PCG parity") else {
        return;
    };
    let mut a = scene();
    let plan = AssemblyPlan::new(&a).unwrap();
    let s = inputs(&a, 0x1234_5678, true);
    let mut res = vec![0.0; s.q_n.len()];
    // The default (projected) matrix is SPD; no diagonal shift needed.
    assert!(!a.exact_hessians);
    a.assemble(&s.q_n, &s.v_n, &s.v, s.h, &s.anchors, &mut res, true);
    let rhs: Vec<f64> = res.iter().map(|x| -x).collect();
    let bj = BlockJacobi::new(&a.matrix, &plan.free);
    let cpu = CpuOps {
        matrix: &a.matrix,
        preconditioner: &bj,
        free: &plan.free,
    };
    let (tol, max_it) = (1e-12, 2000);
    let mut x_cpu = vec![0.0; rhs.len()];
    let r_cpu = pcg(&cpu, &rhs, &mut x_cpu, tol, max_it);
    assert_eq!(r_cpu.status, PcgStatus::Converged);

    let mut sys = DeviceSystem::new(&b, &plan).unwrap();
    sys.upload_matrix(&a.matrix.to_general().values).unwrap();
    sys.setup_preconditioner().unwrap();
    let e_inv = rel(&sys.preconditioner().unwrap(), &flat(&bj.inverse));
    assert!(
        e_inv <= 1e-10,
        "block-Jacobi inverse relative error {e_inv:.3e}"
    );
    let (r_dev, x_dev) = sys.solve(&rhs, tol, max_it).unwrap();
    eprintln!(
        "device PCG: {} iterations (CPU {}), solution relative difference {:.3e}",
        r_dev.iterations,
        r_cpu.iterations,
        rel(&x_dev, &x_cpu)
    );
    assert_eq!(r_dev.status, PcgStatus::Converged);
    assert!(r_dev.iterations.abs_diff(r_cpu.iterations) <= 2);
    assert!(rel(&x_dev, &x_cpu) <= 1e-10);

    let ops = CudaOps::new(&mut sys);
    let mut x_ops = vec![0.0; rhs.len()];
    let r_ops = pcg(&ops, &rhs, &mut x_ops, tol, max_it);
    assert!(ops.take_error().is_none());
    assert_eq!(r_ops.status, PcgStatus::Converged);
    assert!(r_ops.iterations.abs_diff(r_cpu.iterations) <= 2);
    assert!(
        rel(&x_ops, &x_cpu) <= 1e-10,
        "CudaOps solution {:.3e}",
        rel(&x_ops, &x_cpu)
    );
}

/// 100 steps of the device step driver (`CudaSimulation`: the CPU's Newton
/// loop on the kernels) against the CPU backend with block-Jacobi PCG on
/// one of the scenes of tests/common, Newton tolerance 1e-8: the same
/// accepted steps and rejections, positions within `tol_q` relative
/// (`‖a - b‖₂/‖b‖₂`) at every step and velocities within `tol_v` of the
/// run's largest `‖v‖₂`. Each scene's tolerances are those its emulated
/// kernels meet against the CPU in tests/step.rs (1e-8 and 1e-6 where the
/// emulation gives 5.4e-10 and 9.0e-8). One test per scene, so that a
/// device run can give each its own time limit (`scripts/gpu_check.sh`): on
/// the first H100 run the sphere scene alone took 53 s.
fn trajectory_parity(name: &str, make: fn() -> weft_solver::Simulation, tol_q: f64, tol_v: f64) {
    use weft_cuda::step::CudaSimulation;
    let Some(b) = backend("GPU 100-step trajectory parity") else {
        return;
    };
    let mut cpu = make();
    cpu.settings.newton_tolerance = 1e-8;
    let mut start = make();
    start.settings.newton_tolerance = 1e-8;
    let mut gpu = CudaSimulation::new(&b, start).unwrap();
    let norm = |x: &[f64]| x.iter().map(|a| a * a).sum::<f64>().sqrt();
    let (mut worst_q, mut dv_max, mut v_max) = (0.0f64, 0.0f64, 0.0f64);
    let (mut cpu_s, mut gpu_s, mut steps) = (0.0, 0.0, 0);
    for k in 1..=100 {
        let t = k as f64 * 1e-3;
        let t0 = std::time::Instant::now();
        let sc = cpu.advance_to(t, |_, _| {}).unwrap();
        let t1 = std::time::Instant::now();
        let sg = gpu.advance_to(t, |_, _| {}).unwrap();
        cpu_s += (t1 - t0).as_secs_f64();
        gpu_s += t1.elapsed().as_secs_f64();
        steps += sg.len();
        assert_eq!(
            sc.len(),
            sg.len(),
            "{name}, step {k}: accepted steps differ (rejections CPU {:?}, GPU {:?})",
            cpu.rejections,
            gpu.sim.rejections
        );
        let eq = rel(&gpu.sim.q, &cpu.q);
        worst_q = worst_q.max(eq);
        assert!(eq < tol_q, "{name}, step {k}: positions differ by {eq:e}");
        dv_max = dv_max.max(rel(&gpu.sim.v, &cpu.v) * norm(&cpu.v));
        v_max = v_max.max(norm(&cpu.v));
    }
    assert_eq!(gpu.sim.rejections, cpu.rejections);
    let wv = dv_max / v_max;
    eprintln!(
        "{name}: GPU vs CPU over 100 steps: worst relative difference q {worst_q:.2e}, v {wv:.2e} \
         ({steps} accepted steps; CPU {cpu_s:.1} s, GPU {gpu_s:.1} s)"
    );
    assert!(
        wv < tol_v,
        "{name}: velocities differ by {wv:e} of the largest |v|"
    );
}

/// [`trajectory_parity`] of the patch on its sphere.
#[test]
fn gpu_trajectory_patch_on_a_sphere() {
    trajectory_parity("patch on a sphere", common::patch, 1e-8, 1e-6);
}

/// [`trajectory_parity`] of triangle-mesh cloth (StVK triangles and
/// discrete-shell hinges: the SBO18 Fig. 3 hanging patch at 9 x 9
/// vertices), at the tolerances of the woven patch (the emulated kernels
/// give 1.2e-17 and 8.8e-15 over 30 steps at the default tolerance,
/// tests/step.rs).
#[test]
fn gpu_trajectory_triangle_mesh_cloth() {
    trajectory_parity("triangle-mesh cloth", common::shell_patch, 1e-8, 1e-6);
}

/// [`trajectory_parity`] of the patch under a rising triangle-mesh box.
#[test]
fn gpu_trajectory_patch_on_a_moving_mesh_box() {
    trajectory_parity(
        "patch on a moving mesh box",
        common::patch_on_mesh,
        1e-8,
        1e-6,
    );
}

/// [`trajectory_parity`] of two stacked patches with self-collision.
#[test]
fn gpu_trajectory_stacked_patches_self_collision() {
    trajectory_parity(
        "stacked patches, self-collision",
        common::stacked_patches,
        1e-8,
        1e-6,
    );
}

/// [`trajectory_parity`] with drag and attachment springs.
#[test]
fn gpu_trajectory_drag_and_attachments() {
    trajectory_parity(
        "drag and attachments",
        common::patch_with_drag_and_attachments,
        1e-8,
        1e-6,
    );
}

/// [`trajectory_parity`] with seam ties, at the tolerances of the emulated
/// test of the same scene (`emulated_device_step_with_seam_ties_matches_cpu`
/// in tests/step.rs: 1e-7 and 5e-6). The stiff ties leave two inexact
/// Newton solves about 2e-8 apart: the emulated kernels give 2.0e-8 over 20
/// steps and 2.33e-8 in positions, 8.7e-7 in velocities over these 100
/// steps; the H100 run of 2026-11-27 stopped at step 19 on the former 1e-8
/// bound with 1.43e-8, the same size.
#[test]
fn gpu_trajectory_seam_ties() {
    trajectory_parity("seam ties", common::patch_with_ties, 1e-7, 5e-6);
}

/// The acceptance and anchor-update kernels on the device against the CPU
/// on random configurations of the 9 x 9 patch (positions moved by up to
/// 0.3 mm, arc-length coordinates by up to 0.1 mm; in every other one two
/// segments get their arc-length order reversed): the first segment out of
/// order and the segment of the largest strain change are those of the
/// CPU's checks (`stretch_strains`, `max_by` keeping the last of equal
/// maxima), the change agrees to 1e-12 relative; the anchors updated by
/// `weft_update_anchors` agree with `Assembler::update_anchors` to 1e-12
/// relative.
#[test]
fn gpu_acceptance_and_anchor_kernels_match_the_cpu() {
    let Some(b) = backend("GPU acceptance/anchor parity") else {
        return;
    };
    let sim = common::patch();
    let f = &sim.assembler.fabric;
    let segs = &f.elements.segments;
    let plan = AssemblyPlan::new(&sim.assembler).unwrap();
    let mut sys = DeviceSystem::new(&b, &plan).unwrap();
    let strain_ref = weft_solver::integrator::stretch_strains(f, &sim.q);
    let mut r = weft_potentials::testing::xorshift(0x5eed_0a11);
    for trial in 0..20 {
        let mut q = common::jiggled(&sim.q, &mut r);
        if trial % 2 == 1 {
            for e in [3 * trial + 50, 2 * trial] {
                let s = &segs[e];
                let k = s.family.slot();
                q[5 * s.b + k] = q[5 * s.a + k] - 1e-5;
            }
        }
        let first_bad = segs.iter().position(|s| {
            let k = s.family.slot();
            q[5 * s.b + k] <= q[5 * s.a + k]
        });
        let strains = weft_solver::integrator::stretch_strains(f, &q);
        let (worst, change) = strains
            .iter()
            .zip(&strain_ref)
            .map(|(a, b)| (a - b).abs())
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap();
        sys.set_strain_reference(&strain_ref).unwrap();
        let qd = sys.upload(&q).unwrap();
        let sc = sys.accept_segments(&qd).unwrap();
        assert_eq!(sc.first_bad_segment(segs.len()), first_bad, "trial {trial}");
        if first_bad.is_none() {
            assert_eq!(sc.segment, worst, "trial {trial}");
            assert!(
                (sc.change - change).abs() <= 1e-12 * change,
                "trial {trial}"
            );
        }
        let mut cpu = sim.anchors.clone();
        sim.assembler.update_anchors(&q, &mut cpu);
        sys.set_anchors(&sim.anchors).unwrap();
        sys.update_anchors(&qd).unwrap();
        let (gpu, _) = sys.download_anchors_strains().unwrap();
        let e = rel(&gpu, &cpu);
        assert!(e <= 1e-12, "trial {trial}: anchors differ by {e:e}");
    }
}

/// [`trajectory_parity`] of triangle-mesh cloth landing on itself
/// (vertex–face and edge–edge repulsion under the cubic law).
#[test]
fn gpu_trajectory_triangle_mesh_self_collision() {
    trajectory_parity(
        "triangle-mesh self-collision",
        common::stacked_sheets,
        1e-8,
        1e-6,
    );
}
