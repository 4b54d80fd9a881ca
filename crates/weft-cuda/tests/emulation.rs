//! The `.cu` kernels run serially on the host (`weft_cuda::emulate`) against
//! the CPU backend (`weft_solver::Assembler`, `weft_solver::pcg`), on woven
//! patches and yarns with every term the kernels implement switched on:
//! stretch, bending, shear (with jamming) and parallel contact with
//! strain-rate damping, a Rayleigh-damped material, sliding anchors,
//! gravity, Eulerian mass and inertia, point masses, and a static sphere, a
//! plane and a moving, rotating capsule; and triangle-mesh colliders (a
//! static and a keyframed box) through the per-node tangent planes taken at
//! the step start; and triangle-mesh cloth (StVK membrane triangles with
//! strain-rate or Rayleigh damping, discrete-shell hinges with strain-rate
//! damping).
//!
//! Both matrix modes are compared: the PSD-projected elastic Hessians (the
//! default of `Assembler::exact_hessians = false`) and the exact ones, the
//! flag set explicitly on the assembler and on the plan.
//!
//! Error measure: `‖a - b‖₂ / ‖b‖₂` over all entries (residual vector, all
//! matrix blocks, each energy). Tolerances: 1e-12 for the assembly (the
//! same element formulas; only the summation order of a few terms differs);
//! 1e-10 for the block-Jacobi inverses (a hand-written 5x5 Cholesky against
//! nalgebra's, relative to the blocks' condition); PCG: same iteration
//! count within 2 and solutions within 1e-12 with a CG tolerance of 1e-14.
//!
//! Skips with a visible message without the host build (no C++ compiler).

mod common;

use common::{
    StepInputs, flat, full_material, inputs, make_spd, mesh_scene, rel, scene, tie_scene,
    with_self_collision,
};
use nalgebra::{DMatrix, Vector3};
use weft_cuda::emulate::{self, EmulatedOps};
use weft_cuda::host;
use weft_cuda::plan::{AssemblyPlan, StepColliders, colliders_at};
use weft_solver::Attachment;
use weft_solver::par::inf_norm;
use weft_solver::pcg::{BlockJacobi, CpuOps, PcgStatus, pcg};

fn skip() -> bool {
    if !host::AVAILABLE {
        eprintln!(
            "SKIPPED: weft-cuda kernel emulation: the kernels were not compiled for the host \
             (no C++ compiler at build time)"
        );
        return true;
    }
    false
}

/// Both matrix modes of `Assembler::exact_hessians`, set explicitly on the
/// CPU assembler and on the plan: the kernels' residual, matrix, energies
/// and peak strain equal the CPU's to 1e-12 in each mode; the residual and
/// energies do not depend on the mode, and the two matrices differ (the
/// projection is exercised: compressed and bent yarns in the perturbed
/// scene, and the Rayleigh material, whose damping takes K⁺ in both modes).
#[test]
fn emulated_assembly_matches_the_cpu_assembler_in_both_modes() {
    if skip() {
        return;
    }
    let mut a = scene();
    let mut plan = AssemblyPlan::new(&a).unwrap();
    assert!(!plan.exact_hessians, "the default is the projected matrix");
    let colliders = colliders_at(&a, a.time).unwrap();
    assert_eq!(colliders.analytic.len(), 3);
    assert!(colliders.planes.is_empty());
    let names = [
        "residual",
        "matrix",
        "kinetic",
        "elastic",
        "gravity",
        "dissipation",
        "peak strain",
    ];
    let mut worst = [[0.0f64; 7]; 2];
    let mut min_mode_change = f64::INFINITY;
    for seed in 1..=6u64 {
        let s = inputs(&a, 0x9e37_79b9 + seed, true);
        let len = s.q_n.len();
        let mut per_mode = Vec::new();
        for (m, exact) in [false, true].into_iter().enumerate() {
            a.exact_hessians = exact;
            plan.exact_hessians = exact;
            let mut res_cpu = vec![0.0; len];
            let (e_cpu, p_cpu) =
                a.assemble(&s.q_n, &s.v_n, &s.v, s.h, &s.anchors, &mut res_cpu, true);
            let mut res_emu = vec![0.0; len];
            let mut vals = vec![[[0.0; 5]; 5]; plan.cols.len()];
            let (e_emu, p_emu) = emulate::assemble(
                &plan,
                &colliders,
                &s.q_n,
                &s.v_n,
                &s.v,
                s.h,
                &s.anchors,
                &mut res_emu,
                &mut vals,
                true,
            )
            .unwrap();
            let errs = [
                rel(&res_emu, &res_cpu),
                rel(&flat(&vals), &flat(&a.matrix.to_general().values)),
                rel(&[e_emu.kinetic], &[e_cpu.kinetic]),
                rel(&[e_emu.elastic], &[e_cpu.elastic]),
                rel(&[e_emu.gravity], &[e_cpu.gravity]),
                rel(&[e_emu.dissipation_power], &[e_cpu.dissipation_power]),
                rel(&[p_emu.value], &[p_cpu.value]),
            ];
            for (k, e) in errs.iter().enumerate() {
                assert!(
                    *e <= 1e-12,
                    "seed {seed}, exact_hessians = {exact}: {} relative error {e:.3e}",
                    names[k]
                );
                worst[m][k] = worst[m][k].max(*e);
            }
            // Every term is exercised: contact, colliders and damping are on.
            assert!(e_cpu.elastic > 0.0 && e_cpu.dissipation_power > 0.0 && e_cpu.kinetic > 0.0);
            // The residual without the matrix is the same.
            let mut res2 = vec![0.0; len];
            let mut vals2 = vals.clone();
            emulate::assemble(
                &plan, &colliders, &s.q_n, &s.v_n, &s.v, s.h, &s.anchors, &mut res2, &mut vals2,
                false,
            )
            .unwrap();
            assert_eq!(res2, res_emu);
            assert_eq!(
                flat(&vals2),
                flat(&vals),
                "with_matrix = false must not touch the matrix"
            );
            per_mode.push((res_emu, flat(&vals), e_emu));
        }
        // Residual and energies are those of the same energy and forces
        // (only the rounding of the shear scalar branch's energy differs).
        let (proj, exact) = (&per_mode[0], &per_mode[1]);
        let e_res = rel(&proj.0, &exact.0);
        assert!(
            e_res <= 1e-13,
            "seed {seed}: residual differs by {e_res:.2e}"
        );
        let (ep, ee) = (&proj.2, &exact.2);
        let e_en = rel(
            &[ep.kinetic, ep.elastic, ep.gravity, ep.dissipation_power],
            &[ee.kinetic, ee.elastic, ee.gravity, ee.dissipation_power],
        );
        assert!(e_en <= 1e-13, "seed {seed}: energies differ by {e_en:.2e}");
        let change = rel(&proj.1, &exact.1);
        assert!(
            change > 1e-9,
            "seed {seed}: projected and exact matrices agree to {change:.2e}"
        );
        min_mode_change = min_mode_change.min(change);
    }
    for (m, mode) in ["projected", "exact"].iter().enumerate() {
        let w = &worst[m];
        eprintln!(
            "{mode} Hessians: worst relative errors, emulated kernels vs CPU assembler: residual \
             {:.2e}, matrix {:.2e}, kinetic {:.2e}, elastic {:.2e}, gravity {:.2e}, dissipation \
             {:.2e}, peak strain {:.2e}",
            w[0], w[1], w[2], w[3], w[4], w[5], w[6]
        );
    }
    eprintln!("smallest ‖A⁺ - A‖/‖A‖ between the modes: {min_mode_change:.2e}");
}

/// `Assembler::dissipation_position_jacobian = false` (bit 1 of the
/// kernels' `jacobian_flags` cleared), in both elastic modes: the kernels'
/// residual, matrix and energies equal the CPU's to 1e-12
/// ([`assert_both_modes_match`]); the residual is the one with the position
/// Jacobian (forces do not depend on it) and the matrix is not (the
/// strain-rate damping's clamped term is exercised).
#[test]
fn emulated_assembly_without_the_dissipation_position_jacobian_matches_the_cpu() {
    if skip() {
        return;
    }
    let mut a = scene();
    let mut plan = AssemblyPlan::new(&a).unwrap();
    assert!(plan.dissipation_position_jacobian, "the default keeps it");
    let colliders = colliders_at(&a, a.time).unwrap();
    let mut worst = [0.0f64; 4];
    let mut min_change = f64::INFINITY;
    for seed in 1..=4u64 {
        let s = inputs(&a, 0x5bd1_e995 + seed, true);
        for dx in [true, false] {
            a.dissipation_position_jacobian = dx;
            plan.dissipation_position_jacobian = dx;
            assert_both_modes_match(&mut a, &mut plan, &colliders, &s, seed, &mut worst);
        }
        for exact in [false, true] {
            a.exact_hessians = exact;
            let mut out = Vec::new();
            for dx in [true, false] {
                a.dissipation_position_jacobian = dx;
                let mut res = vec![0.0; s.q_n.len()];
                a.assemble(&s.q_n, &s.v_n, &s.v, s.h, &s.anchors, &mut res, true);
                out.push((res, flat(&a.matrix.to_general().values)));
            }
            assert_eq!(out[0].0, out[1].0, "the residual must not depend on it");
            let change = rel(&out[1].1, &out[0].1);
            assert!(
                change > 1e-9,
                "seed {seed}, exact {exact}: the matrices agree to {change:.2e}"
            );
            min_change = min_change.min(change);
        }
    }
    eprintln!(
        "with and without the dissipation position Jacobian: worst relative errors, emulated \
         vs CPU: residual {:.2e}, matrix {:.2e}; smallest matrix change {min_change:.2e}",
        worst[0], worst[1]
    );
}

#[test]
fn scene_exercises_contact_and_colliders() {
    // Guards the scene above: parallel contact must be active somewhere and
    // at least two colliders must touch nodes, or the parity test would not
    // cover those kernels' branches.
    let a = scene();
    let s = inputs(&a, 0x9e37_79b9 + 1, true);
    let f = &a.fabric;
    let d = 2.0 * full_material().radius;
    let active = f
        .elements
        .segments
        .iter()
        .filter(|sg| {
            let slot = sg.family.slot();
            s.q_n[5 * sg.b + slot] - s.q_n[5 * sg.a + slot] < d
        })
        .count();
    assert!(active >= 3, "{active} contact segments active");
    let mut touching = 0;
    for (c, margin) in &a.contact.colliders {
        let hits = (0..f.node_count())
            .filter(|&i| {
                let x = Vector3::new(s.q_n[5 * i], s.q_n[5 * i + 1], s.q_n[5 * i + 2]);
                let xd = Vector3::new(s.v[5 * i], s.v[5 * i + 1], s.v[5 * i + 2]);
                c.node_contact(&x, &xd, a.time, full_material().radius + margin)
                    .is_some()
            })
            .count();
        if hits > 0 {
            touching += 1;
        }
    }
    assert!(touching >= 2, "only {touching} colliders touch the fabric");
}

/// Smallest eigenvalue of the free-DOF block of `m` (dense symmetric part).
fn min_free_eigenvalue(m: &weft_solver::bsr::BlockSparse, free: &[f64]) -> f64 {
    let m = &m.to_general();
    let dofs: Vec<usize> = (0..free.len()).filter(|&d| free[d] != 0.0).collect();
    let mut pos = vec![usize::MAX; free.len()];
    for (k, &d) in dofs.iter().enumerate() {
        pos[d] = k;
    }
    let mut a = DMatrix::<f64>::zeros(dofs.len(), dofs.len());
    for i in 0..m.n {
        for k in m.row_ptr[i]..m.row_ptr[i + 1] {
            let j = m.cols[k] as usize;
            for r in 0..5 {
                for c in 0..5 {
                    let (pr, pc) = (pos[5 * i + r], pos[5 * j + c]);
                    if pr != usize::MAX && pc != usize::MAX {
                        a[(pr, pc)] = m.values[k][r][c];
                    }
                }
            }
        }
    }
    let s = (&a + a.transpose()) * 0.5;
    s.symmetric_eigenvalues().min()
}

/// PCG over the emulated kernels (the generic loop over [`EmulatedOps`] and
/// the fused device loop) against the CPU PCG, with block-Jacobi, on the
/// assembled system of the scene in both matrix modes:
///
/// - projected Hessians (the default): the assembled matrix is used as it
///   is; the test asserts it is positive definite on the free DOFs.
/// - exact Hessians: this matrix is indefinite here (asserted: compressed
///   and bent yarns give negative curvature, and CG would stop on it), so
///   for this mode only the matrix is made strictly diagonally dominant
///   (`make_spd`) first; the test is about the linear algebra.
///
/// Block-Jacobi inverses within 1e-10 of `BlockJacobi::new`, iteration
/// counts within 2 of the CPU's, solutions within 1e-12, and
/// `‖A x - b‖ ≤ 1e-10 ‖b‖` on the free DOFs. CG tolerance 1e-14: the
/// projected matrix is SPD but not diagonally dominant (free-DOF
/// eigenvalues 2.8e-4 to 16.5, condition ~6e4, ~300 iterations), and two
/// CG runs that differ only in summation order agree to about condition x
/// tolerance (2e-12 at a tolerance of 1e-12, 9e-14 at 1e-14).
#[test]
fn emulated_pcg_matches_the_cpu_pcg_in_both_modes() {
    if skip() {
        return;
    }
    for exact in [false, true] {
        let mut a = scene();
        a.exact_hessians = exact;
        let mut plan = AssemblyPlan::new(&a).unwrap();
        plan.exact_hessians = exact;
        let s = inputs(&a, 0x1234_5678, true);
        let mut b = vec![0.0; s.q_n.len()];
        a.assemble(&s.q_n, &s.v_n, &s.v, s.h, &s.anchors, &mut b, true);
        let lmin = min_free_eigenvalue(&a.matrix, &plan.free);
        eprintln!("exact_hessians = {exact}: smallest free eigenvalue {lmin:.3e}");
        if exact {
            assert!(lmin < 0.0, "the exact matrix of this state is indefinite");
            make_spd(&mut a.matrix);
        } else {
            assert!(lmin > 0.0, "the projected matrix is positive definite");
        }
        pcg_parity(&a, &plan, &b, exact);
    }
}

fn pcg_parity(a: &weft_solver::Assembler, plan: &AssemblyPlan, b: &[f64], exact: bool) {
    let rhs: Vec<f64> = b.iter().map(|x| -x).collect();
    let free = &plan.free;
    // Preconditioner: kernel setup against BlockJacobi::new.
    let bj = BlockJacobi::new(&a.matrix, free);
    let general = a.matrix.to_general();
    let ops = EmulatedOps::new(plan, &general.values).unwrap();
    let e_inv = rel(&ops.inverse, &flat(&bj.inverse));
    eprintln!("exact_hessians = {exact}: block-Jacobi inverse relative difference {e_inv:.2e}");
    assert!(
        e_inv <= 1e-10,
        "block-Jacobi inverse relative error {e_inv:.3e}"
    );
    // CPU PCG, the generic PCG over the emulated kernels, and the fused loop.
    let cpu = CpuOps {
        matrix: &a.matrix,
        preconditioner: &bj,
        free,
    };
    let (tol, max_it) = (1e-14, 2000);
    let mut x_cpu = vec![0.0; rhs.len()];
    let r_cpu = pcg(&cpu, &rhs, &mut x_cpu, tol, max_it);
    assert_eq!(
        r_cpu.status,
        PcgStatus::Converged,
        "exact_hessians = {exact}"
    );
    let mut x_gen = vec![0.0; rhs.len()];
    let r_gen = pcg(&ops, &rhs, &mut x_gen, tol, max_it);
    let mut x_fused = vec![0.0; rhs.len()];
    let r_fused = emulate::fused_pcg(&ops, &rhs, &mut x_fused, tol, max_it).unwrap();
    eprintln!(
        "exact_hessians = {exact}: PCG iterations: cpu {}, emulated generic {}, emulated fused \
         {}; relative residuals {:.2e} {:.2e} {:.2e}",
        r_cpu.iterations,
        r_gen.iterations,
        r_fused.iterations,
        r_cpu.relative_residual,
        r_gen.relative_residual,
        r_fused.relative_residual
    );
    for (name, r, x) in [("generic", r_gen, &x_gen), ("fused", r_fused, &x_fused)] {
        assert_eq!(r.status, PcgStatus::Converged, "{name}, exact = {exact}");
        assert!(
            r.iterations.abs_diff(r_cpu.iterations) <= 2,
            "{name}, exact = {exact}: {} iterations against {} on the CPU",
            r.iterations,
            r_cpu.iterations
        );
        let e = rel(x, &x_cpu);
        eprintln!("exact_hessians = {exact}, {name}: solution relative difference {e:.2e}");
        assert!(
            e <= 1e-12,
            "{name}, exact = {exact}: solution relative error {e:.3e}"
        );
    }
    // The solution solves the system: ‖A x - b‖ small on the free DOFs.
    let mut ax = vec![0.0; rhs.len()];
    a.matrix.spmv(&x_fused, &mut ax);
    let res: Vec<f64> = ax
        .iter()
        .zip(&rhs)
        .zip(free)
        .map(|((p, q), f)| (p - q) * f)
        .collect();
    let bm: Vec<f64> = rhs.iter().zip(free).map(|(q, f)| q * f).collect();
    assert!(rel(&res, &vec![0.0; res.len()]) <= 1e-10 * rel(&bm, &vec![0.0; bm.len()]));
}

/// Triangle-mesh colliders on the device: after `Assembler::begin_step`
/// (tangent planes per node at the step start), `colliders_at` hands the
/// kernels the analytic colliders plus every node's planes moved to the
/// collider's pose at `t` (an animated box, `MeshAnimation`, whose edge
/// runs under the first patch and whose planes carry its surface velocity
/// into the friction; a translating and rotating box under the Rayleigh
/// patch). The
/// emulated kernels' residual, matrix (both modes) and energies equal the
/// CPU assembler's to 1e-12; the mesh term is active (its energy,
/// summed with `Collider::plane_contact`, is > 0 and changes the CPU
/// residual by more than 1e-5 relative; the mesh term alone, R with minus
/// R without the boxes, agrees to 1e-10), some nodes carry two sheets of the
/// static box, and the host build of the contact (`host::node_contact` on
/// each uploaded plane) equals `Collider::plane_contact` to 1e-13.
#[test]
fn emulated_mesh_colliders_match_the_cpu_assembler() {
    if skip() {
        return;
    }
    let mut worst = [0.0f64; 4];
    let mut worst_host = 0.0f64;
    let mut worst_term = 0.0f64;
    for seed in 1..=4u64 {
        let mut a = mesh_scene();
        let mut plan = AssemblyPlan::new(&a).unwrap();
        let s = inputs(&a, 0x5eed_0000 + seed, true);
        let len = s.q_n.len();
        // Without the planes the kernels cannot take a mesh.
        assert!(colliders_at(&a, a.time).is_err());
        let t_end = a.time + s.h;
        a.begin_step(&s.q_n, &s.v_n, s.h, t_end);
        let colliders = colliders_at(&a, a.time).unwrap();
        assert_eq!(colliders.analytic.len(), 3);
        assert_eq!(colliders.plane_offsets.len(), plan.nodes + 1);
        let np = a.contact.planes.as_ref().unwrap();
        assert_eq!(colliders.planes.len(), np.planes.len());
        let two_sheets = (0..plan.nodes)
            .filter(|&i| {
                np.planes[np.offsets[i]..np.offsets[i + 1]]
                    .iter()
                    .filter(|(c, _)| *c == 3)
                    .count()
                    >= 2
            })
            .count();
        assert!(two_sheets >= 1, "no node sees two sheets of the box");
        // The mesh contact energy on the CPU, and the host build of the
        // kernels' contact on each uploaded plane.
        let q: Vec<f64> = s.q_n.iter().zip(&s.v).map(|(q, v)| q + s.h * v).collect();
        let mut e_mesh = [0.0f64; 2];
        for i in 0..plan.nodes {
            let x = Vector3::new(q[5 * i], q[5 * i + 1], q[5 * i + 2]);
            let xd = Vector3::new(s.v[5 * i], s.v[5 * i + 1], s.v[5 * i + 2]);
            for k in np.offsets[i]..np.offsets[i + 1] {
                let (ci, pl) = &np.planes[k];
                let (c, margin) = &a.contact.colliders[*ci];
                let offset = plan.node_radius[i] + margin;
                let cpu = c.plane_contact(pl, &x, &xd, a.time, offset);
                let dev = host::node_contact(&colliders.planes[k], &x.into(), &xd.into(), offset)
                    .unwrap();
                assert_eq!(cpu.is_some(), dev.is_some(), "node {i}, plane {k}");
                if let (Some(cpu), Some(dev)) = (cpu, dev) {
                    e_mesh[*ci - 3] += cpu.penalty.energy;
                    let f_cpu: Vec<f64> = cpu
                        .penalty
                        .gradient
                        .iter()
                        .chain(cpu.friction.force.iter())
                        .chain(cpu.penalty.hessian.transpose().iter())
                        .chain(cpu.friction.damping.transpose().iter())
                        .chain([cpu.penalty.energy].iter())
                        .copied()
                        .collect();
                    let f_dev: Vec<f64> = dev
                        .gradient
                        .iter()
                        .chain(dev.friction.iter())
                        .chain(dev.hessian.iter())
                        .chain(dev.damping.iter())
                        .chain([dev.energy].iter())
                        .copied()
                        .collect();
                    let e = rel(&f_dev, &f_cpu);
                    assert!(
                        e <= 1e-13,
                        "node {i}, plane {k}: host contact error {e:.3e}"
                    );
                    worst_host = worst_host.max(e);
                }
            }
        }
        assert!(
            e_mesh[0] > 0.0 && e_mesh[1] > 0.0,
            "both mesh colliders must touch the fabric: energies {e_mesh:?}"
        );
        // The mesh term matters in the CPU residual.
        let mut res_cpu = vec![0.0; len];
        a.assemble(&s.q_n, &s.v_n, &s.v, s.h, &s.anchors, &mut res_cpu, false);
        let mut without = mesh_scene();
        without.contact.colliders.truncate(3);
        without.time = a.time;
        let mut res_without = vec![0.0; len];
        without.assemble(
            &s.q_n,
            &s.v_n,
            &s.v,
            s.h,
            &s.anchors,
            &mut res_without,
            false,
        );
        let change = rel(&res_without, &res_cpu);
        assert!(
            change > 1e-5,
            "seed {seed}: mesh term changes R by {change:.2e}"
        );
        // The mesh term alone (R with it minus R without it) on both sides,
        // so that its parity is not hidden in the other terms' size.
        let mut res_emu = vec![0.0; len];
        let mut res_emu_without = vec![0.0; len];
        let mut vals = vec![[[0.0; 5]; 5]; plan.cols.len()];
        let analytic_only = weft_cuda::plan::StepColliders {
            analytic: colliders.analytic.clone(),
            ..Default::default()
        };
        for (c, r) in [
            (&colliders, &mut res_emu),
            (&analytic_only, &mut res_emu_without),
        ] {
            emulate::assemble(
                &plan, c, &s.q_n, &s.v_n, &s.v, s.h, &s.anchors, r, &mut vals, false,
            )
            .unwrap();
        }
        let diff =
            |a: &[f64], b: &[f64]| -> Vec<f64> { a.iter().zip(b).map(|(x, y)| x - y).collect() };
        let e_term = rel(
            &diff(&res_emu, &res_emu_without),
            &diff(&res_cpu, &res_without),
        );
        assert!(
            e_term <= 1e-10,
            "seed {seed}: mesh term of R relative error {e_term:.3e}"
        );
        worst_term = worst_term.max(e_term);
        assert_both_modes_match(&mut a, &mut plan, &colliders, &s, seed, &mut worst);
    }
    eprintln!(
        "mesh colliders, emulated kernels vs CPU assembler: worst relative errors residual \
         {:.2e}, matrix {:.2e}, elastic {:.2e}, dissipation {:.2e}; mesh term of R alone \
         {worst_term:.2e}; host contact vs plane_contact {worst_host:.2e}",
        worst[0], worst[1], worst[2], worst[3]
    );
}

/// Self-collision on the device: the pairs `Assembler::begin_step` finds
/// (broad phase within `2 d0`) are handed to the repulsion kernel as
/// 4 nodes per pair. On the shared scene with its mesh boxes and
/// self-collision (`d0` 2.5 mm, so neighbouring parallel yarns of the 2 mm
/// patch repel, 60 N/m, 1 hop excluded), the emulated residual, matrix
/// (both modes) and energies equal the CPU's to 1e-12, and the repulsion
/// term alone (R with minus R without self-collision) to 1e-10; at least
/// 10 pairs are active.
#[test]
fn emulated_self_collision_matches_the_cpu_assembler() {
    if skip() {
        return;
    }
    let mut worst = [0.0f64; 4];
    let mut worst_term = 0.0f64;
    for seed in 1..=4u64 {
        let mut a = mesh_scene();
        with_self_collision(&mut a, 2.5e-3, 60.0, 1);
        let mut plan = AssemblyPlan::new(&a).unwrap();
        let s = inputs(&a, 0xc0ff_ee00 + seed, true);
        let t_end = a.time + s.h;
        a.begin_step(&s.q_n, &s.v_n, s.h, t_end);
        let colliders = colliders_at(&a, a.time).unwrap();
        let sc = a.contact.self_collision.as_ref().unwrap();
        assert_eq!(colliders.pairs.len(), 4 * sc.contacts.len());
        assert_eq!(
            (colliders.d0, colliders.repulsion_stiffness),
            (2.5e-3, 60.0)
        );
        let q: Vec<f64> = s.q_n.iter().zip(&s.v).map(|(q, v)| q + s.h * v).collect();
        let active = sc
            .contacts
            .iter()
            .filter(|c| {
                let q12 =
                    nalgebra::SVector::<f64, 12>::from_fn(|i, _| q[5 * c.nodes[i / 3] + i % 3]);
                weft_solver::collide::repulsion(&q12, sc.d0, sc.stiffness).is_some()
            })
            .count();
        assert!(active >= 10, "seed {seed}: only {active} active pairs");
        // The repulsion term alone, on both sides.
        let (e_term, _) = repulsion_term(&mut a, &plan, &colliders, &s, &format!("seed {seed}"));
        worst_term = worst_term.max(e_term);
        assert_both_modes_match(&mut a, &mut plan, &colliders, &s, seed, &mut worst);
    }
    eprintln!(
        "self-collision, emulated kernels vs CPU assembler: worst relative errors residual \
         {:.2e}, matrix {:.2e}, elastic {:.2e}, dissipation {:.2e}; repulsion term alone \
         {worst_term:.2e}",
        worst[0], worst[1], worst[2], worst[3]
    );
}

/// The host build of the repulsion (`host::segment_repulsion` and
/// `host::face_repulsion`, the kernels' `segment_repulsion` and
/// `face_repulsion`) against `weft_solver::collide::repulsion_with` and
/// `face_repulsion`, under both laws, on random pairs (general position
/// within `d0`), exactly parallel segments (middle of the overlap), crossing
/// ones (`d = 0`, normal from the cross product), vertices on their face
/// (`d = 0`, the face normal) and degenerate (collinear) faces: same contact
/// decision, energy, gradient and the 4 node-diagonal 3x3 Hessian blocks
/// within 1e-13 relative.
#[test]
fn host_repulsion_matches_weft_solver() {
    use weft_solver::collide::RepulsionLaw;
    if skip() {
        return;
    }
    let mut r = weft_potentials::testing::xorshift(0xabcd);
    let (d0, k) = (1e-3, 70.0);
    let mut worst = 0.0f64;
    let mut hits = [0; 2];
    for case in 0..1200 {
        let face = case % 2 == 1;
        let law = if case % 4 < 2 {
            RepulsionLaw::Quadratic
        } else {
            RepulsionLaw::Cubic
        };
        let mut q = [0.0f64; 12];
        for x in q.iter_mut() {
            *x = 1e-3 * r();
        }
        match (face, (case / 4) % 3) {
            (false, 1) => {
                // Q parallel to P, offset.
                for i in 0..3 {
                    q[6 + i] = q[i] + 0.3e-3 * r();
                    q[9 + i] = q[6 + i] + 0.7 * (q[3 + i] - q[i]);
                }
            }
            (false, 2) => {
                // Q through the middle of P: d = 0.
                for i in 0..3 {
                    let m = 0.5 * (q[i] + q[3 + i]);
                    q[9 + i] = 2.0 * m - q[6 + i];
                }
            }
            (true, 1) => {
                // The vertex on its face: d = 0.
                for i in 0..3 {
                    q[i] = 0.2 * q[3 + i] + 0.3 * q[6 + i] + 0.5 * q[9 + i];
                }
            }
            (true, 2) => {
                // A collinear face: its edges.
                for i in 0..3 {
                    q[9 + i] = 2.0 * q[6 + i] - q[3 + i];
                }
            }
            _ => {}
        }
        let qv = nalgebra::SVector::<f64, 12>::from_column_slice(&q);
        let (cpu, dev) = if face {
            (
                weft_solver::collide::face_repulsion(&qv, d0, k, law)
                    .map(|c| (c.energy, c.gradient, c.hessian)),
                host::face_repulsion(&q, d0, k, law).unwrap(),
            )
        } else {
            (
                weft_solver::collide::repulsion_with(&qv, d0, k, law)
                    .map(|c| (c.energy, c.gradient, c.hessian)),
                host::segment_repulsion(&q, d0, k, law).unwrap(),
            )
        };
        assert_eq!(cpu.is_some(), dev.is_some(), "case {case}");
        if let (Some((energy, gradient, hessian)), Some(d)) = (cpu, dev) {
            hits[usize::from(face)] += 1;
            let mut hc = Vec::new();
            for a in 0..4 {
                for i in 0..3 {
                    for j in 0..3 {
                        hc.push(hessian[(3 * a + i, 3 * a + j)]);
                    }
                }
            }
            let want: Vec<f64> = [energy]
                .iter()
                .chain(gradient.iter())
                .chain(hc.iter())
                .copied()
                .collect();
            let got: Vec<f64> = [d.energy]
                .iter()
                .chain(d.gradient.iter())
                .chain(d.hessian_diagonal.iter())
                .copied()
                .collect();
            let e = rel(&got, &want);
            assert!(e <= 1e-13, "case {case}: relative error {e:.3e}");
            worst = worst.max(e);
        }
    }
    assert!(
        hits.iter().all(|&h| h >= 150),
        "only {hits:?} of 600 segment and 600 vertex-face pairs in contact"
    );
    eprintln!(
        "host repulsion vs weft_solver: {hits:?} segment and vertex-face contacts, worst relative error {worst:.2e}"
    );
}

/// Mass-proportional drag (in the segment kernel) and attachment springs
/// (their own kernel, node-diagonal blocks) against the CPU assembler on
/// the shared scene (drag 3 1/s; 5 springs of 40 N/m, two on the same
/// node): residual, matrix (both modes) and energies within 1e-12, and
/// the drag-plus-attachment term alone (R with minus R without) within
/// 1e-10 while it changes R by more than 1e-5 relative.
#[test]
fn emulated_drag_and_attachments_match_the_cpu_assembler() {
    if skip() {
        return;
    }
    let mut worst = [0.0f64; 4];
    let mut worst_term = 0.0f64;
    for seed in 1..=4u64 {
        let mut a = scene();
        let s = inputs(&a, 0xd4a9_0000 + seed, true);
        let len = s.q_n.len();
        let bare = (
            AssemblyPlan::new(&a).unwrap(),
            colliders_at(&a, a.time).unwrap(),
        );
        let mut res_cpu_without = vec![0.0; len];
        a.assemble(
            &s.q_n,
            &s.v_n,
            &s.v,
            s.h,
            &s.anchors,
            &mut res_cpu_without,
            false,
        );
        a.drag = 3.0;
        // Each spring its own stiffness (N/m), one of them 0 (left out).
        for (n, dy, k) in [
            (3usize, 1e-3, 40.0),
            (10, -2e-3, 40.0),
            (10, 5e-4, 0.4),
            (31, 1e-3, 0.0),
            (55, 0.0, 400.0),
        ] {
            let p = Vector3::new(s.q_n[5 * n], s.q_n[5 * n + 1] + dy, s.q_n[5 * n + 2] + 3e-4);
            a.attachments.push(Attachment {
                node: n,
                point: p,
                stiffness: k,
            });
        }
        let mut plan = AssemblyPlan::new(&a).unwrap();
        assert_eq!(plan.drag, 3.0);
        let colliders = colliders_at(&a, a.time).unwrap();
        // The spring of stiffness 0 is left out.
        assert_eq!(colliders.attach_nodes.len(), 4);
        assert_eq!(colliders.attach_stiffness, [40.0, 40.0, 0.4, 400.0]);
        let mut res_cpu = vec![0.0; len];
        a.assemble(&s.q_n, &s.v_n, &s.v, s.h, &s.anchors, &mut res_cpu, false);
        let mut res_emu = vec![0.0; len];
        let mut res_emu_without = vec![0.0; len];
        let mut vals = vec![[[0.0; 5]; 5]; plan.cols.len()];
        emulate::assemble(
            &plan,
            &colliders,
            &s.q_n,
            &s.v_n,
            &s.v,
            s.h,
            &s.anchors,
            &mut res_emu,
            &mut vals,
            false,
        )
        .unwrap();
        emulate::assemble(
            &bare.0,
            &bare.1,
            &s.q_n,
            &s.v_n,
            &s.v,
            s.h,
            &s.anchors,
            &mut res_emu_without,
            &mut vals,
            false,
        )
        .unwrap();
        let diff =
            |a: &[f64], b: &[f64]| -> Vec<f64> { a.iter().zip(b).map(|(x, y)| x - y).collect() };
        let term_cpu = diff(&res_cpu, &res_cpu_without);
        let change = rel(&res_cpu_without, &res_cpu);
        assert!(
            change > 1e-5,
            "seed {seed}: drag and attachments change R by {change:.2e}"
        );
        let e_term = rel(&diff(&res_emu, &res_emu_without), &term_cpu);
        assert!(
            e_term <= 1e-10,
            "seed {seed}: drag/attachment term relative error {e_term:.3e}"
        );
        worst_term = worst_term.max(e_term);
        assert_both_modes_match(&mut a, &mut plan, &colliders, &s, seed, &mut worst);
    }
    eprintln!(
        "drag and attachments, emulated kernels vs CPU assembler: worst relative errors residual \
         {:.2e}, matrix {:.2e}, elastic {:.2e}, dissipation {:.2e}; term alone {worst_term:.2e}",
        worst[0], worst[1], worst[2], worst[3]
    );
}

/// Seam ties (their own kernel, atomic scatter into the 9 blocks of each
/// tie) against the CPU assembler on the shared scene with three ties
/// (two sharing their target nodes): residual, matrix (both modes) and
/// energies within 1e-12; the tie term alone (tie stiffness and damping
/// set vs 0) within 1e-10 while it changes R by more than 1e-5 relative.
#[test]
fn emulated_seam_ties_match_the_cpu_assembler() {
    if skip() {
        return;
    }
    let mut worst = [0.0f64; 4];
    let mut worst_term = 0.0f64;
    for seed in 1..=4u64 {
        let mut a = tie_scene();
        let mut plan = AssemblyPlan::new(&a).unwrap();
        assert_eq!(plan.tie_t.len(), 3);
        let colliders = colliders_at(&a, a.time).unwrap();
        let s = inputs(&a, 0x71e5_0000 + seed, true);
        let len = s.q_n.len();
        let mut vals = vec![[[0.0; 5]; 5]; plan.cols.len()];
        let mut res = [
            vec![0.0; len],
            vec![0.0; len],
            vec![0.0; len],
            vec![0.0; len],
        ];
        for (m, on) in [true, false].into_iter().enumerate() {
            let (k, kd) = if on { (50.0, 0.01) } else { (0.0, 0.0) };
            a.tie_stiffness = k;
            a.tie_damping = kd;
            plan.tie_stiffness = k;
            plan.tie_damping = kd;
            a.assemble(
                &s.q_n,
                &s.v_n,
                &s.v,
                s.h,
                &s.anchors,
                &mut res[2 * m],
                false,
            );
            emulate::assemble(
                &plan,
                &colliders,
                &s.q_n,
                &s.v_n,
                &s.v,
                s.h,
                &s.anchors,
                &mut res[2 * m + 1],
                &mut vals,
                false,
            )
            .unwrap();
        }
        let diff =
            |a: &[f64], b: &[f64]| -> Vec<f64> { a.iter().zip(b).map(|(x, y)| x - y).collect() };
        let change = rel(&res[2], &res[0]);
        assert!(change > 1e-5, "seed {seed}: ties change R by {change:.2e}");
        let e_term = rel(&diff(&res[1], &res[3]), &diff(&res[0], &res[2]));
        assert!(
            e_term <= 1e-10,
            "seed {seed}: tie term relative error {e_term:.3e}"
        );
        worst_term = worst_term.max(e_term);
        (a.tie_stiffness, a.tie_damping) = (50.0, 0.01);
        (plan.tie_stiffness, plan.tie_damping) = (50.0, 0.01);
        assert_both_modes_match(&mut a, &mut plan, &colliders, &s, seed, &mut worst);
    }
    eprintln!(
        "seam ties, emulated kernels vs CPU assembler: worst relative errors residual {:.2e}, \
         matrix {:.2e}, elastic {:.2e}, dissipation {:.2e}; tie term alone {worst_term:.2e}",
        worst[0], worst[1], worst[2], worst[3]
    );
}

/// Assembles `s` with the CPU assembler and with the emulated kernels, in
/// both Hessian modes, and asserts that residual, matrix and energies agree
/// to 1e-12 relative; the errors (residual, matrix, elastic, dissipation)
/// are folded into `worst`.
fn assert_both_modes_match(
    a: &mut weft_solver::Assembler,
    plan: &mut AssemblyPlan,
    colliders: &StepColliders,
    s: &StepInputs,
    seed: u64,
    worst: &mut [f64; 4],
) {
    let len = s.q_n.len();
    for exact in [false, true] {
        a.exact_hessians = exact;
        plan.exact_hessians = exact;
        let mut res_cpu = vec![0.0; len];
        let (e_cpu, _) = a.assemble(&s.q_n, &s.v_n, &s.v, s.h, &s.anchors, &mut res_cpu, true);
        let mut res_emu = vec![0.0; len];
        let mut vals = vec![[[0.0; 5]; 5]; plan.cols.len()];
        let (e_emu, _) = emulate::assemble(
            plan,
            colliders,
            &s.q_n,
            &s.v_n,
            &s.v,
            s.h,
            &s.anchors,
            &mut res_emu,
            &mut vals,
            true,
        )
        .unwrap();
        let errs = [
            rel(&res_emu, &res_cpu),
            rel(&flat(&vals), &flat(&a.matrix.to_general().values)),
            rel(&[e_emu.elastic], &[e_cpu.elastic]),
            rel(&[e_emu.dissipation_power], &[e_cpu.dissipation_power]),
        ];
        for (k, e) in errs.iter().enumerate() {
            assert!(
                *e <= 1e-12,
                "seed {seed}, exact = {exact}: {} relative error {e:.3e}",
                ["residual", "matrix", "elastic", "dissipation"][k]
            );
            worst[k] = worst[k].max(*e);
        }
    }
}

/// The kernels' residual does not depend on the fabric's distance from the
/// origin, as the CPU assembler's does not (weft-solver's
/// `residual_does_not_depend_on_distance_from_origin`): [`tie_scene`]
/// without colliders, with its anchors, seam ties, point masses and three
/// attachment springs, at strains near 1e-6 (1 nm position noise on the
/// initial state, velocities of 1 µm/s), is moved 64 m in x, z and both
/// arc-length coordinates (across gravity, turned to -y), on a 2⁻⁴⁶ m grid
/// so that the shift is exact.
/// The emulated residual far away equals the one at the origin to 1e-12 of
/// its largest entry, and the CPU's there to 1e-12 relative. Kernels that
/// took the absolute `q = q_n + h v` rounded every coordinate to a unit in
/// the last place of 64 m, an error ~1e-5 of these forces.
#[test]
fn emulated_residual_does_not_depend_on_distance_from_origin() {
    if skip() {
        return;
    }
    let grid = |x: f64| (x * 2f64.powi(46)).round() / 2f64.powi(46);
    let shift = 64.0;
    // The scene with its attachment points moved by `by` in x and z.
    let scene_at = |by: f64| {
        let mut a = tie_scene();
        a.contact.colliders.clear();
        // Across gravity: its arc-length force ρ g·x depends on the height.
        a.gravity = Vector3::new(0.0, -9.81, 0.0);
        for n in [10, 20, 50] {
            let x = a.fabric.initial.node_q(n);
            let p = Vector3::new(grid(x[0]) + by, grid(x[1] + 1e-9), grid(x[2]) + by);
            a.attachments.push(Attachment {
                node: n,
                point: p,
                stiffness: 30.0,
            });
        }
        a
    };
    let (a, mut far_asm) = (scene_at(0.0), scene_at(shift));
    let plan = AssemblyPlan::new(&a).unwrap();
    let base = inputs(&a, 0x5eed, false);
    let mut r = weft_potentials::testing::xorshift(17);
    let q_n: Vec<f64> = base.q_n.iter().map(|&x| grid(x + 1e-9 * r())).collect();
    let small = |r: &mut dyn FnMut() -> f64| -> Vec<f64> {
        base.v
            .iter()
            .map(|&v| if v == 0.0 { 0.0 } else { 1e-6 * r() })
            .collect()
    };
    let (v_n, v) = (small(&mut r), small(&mut r));
    let anchors: Vec<f64> = base.anchors.iter().map(|&x| grid(x)).collect();
    let h = 1e-3;
    let moved = |x: f64| x + shift;
    let far_q: Vec<f64> = q_n
        .iter()
        .enumerate()
        .map(|(d, &x)| if d % 5 == 1 { x } else { moved(x) })
        .collect();
    for (d, (a_, b_)) in far_q.iter().zip(&q_n).enumerate() {
        let back = if d % 5 == 1 { *a_ } else { a_ - shift };
        assert_eq!(back, *b_, "the shift is not exact");
    }
    let far_anchors: Vec<f64> = anchors.iter().map(|&x| moved(x)).collect();
    let emulated = |asm: &weft_solver::Assembler, q: &[f64], anchors: &[f64]| -> Vec<f64> {
        let colliders = colliders_at(asm, asm.time).unwrap();
        assert_eq!(colliders.attach_nodes.len(), 3);
        let mut res = vec![0.0; q.len()];
        let mut vals = vec![[[0.0; 5]; 5]; plan.cols.len()];
        emulate::assemble(
            &plan, &colliders, q, &v_n, &v, h, anchors, &mut res, &mut vals, true,
        )
        .unwrap();
        res
    };
    let near = emulated(&a, &q_n, &anchors);
    let far = emulated(&far_asm, &far_q, &far_anchors);
    let mut cpu_far = vec![0.0; far_q.len()];
    far_asm.assemble(&far_q, &v_n, &v, h, &far_anchors, &mut cpu_far, true);
    let scale = inf_norm(&near);
    let diff = inf_norm(
        &near
            .iter()
            .zip(&far)
            .map(|(x, y)| x - y)
            .collect::<Vec<_>>(),
    );
    let e_cpu = rel(&far, &cpu_far);
    eprintln!(
        "|R|inf = {scale:.3e}, |R_far - R_near|inf = {diff:.3e}, far: emulated vs CPU {e_cpu:.2e}"
    );
    assert!(scale > 0.0);
    assert!(
        diff <= 1e-12 * scale,
        "emulated residual changed by {diff:.3e} (|R| {scale:.3e}) when the patch moved {shift} m"
    );
    assert!(e_cpu <= 1e-12, "far away: emulated vs CPU {e_cpu:.3e}");
}

/// A small triangle-mesh cloth (`weft_shell::shell_fabric`: 6 x 5 vertices,
/// 25 x 20 mm, pinned at two corners) in `damping`, with strain-rate
/// damping of the hinges' bending, at the rest shape displaced by up to
/// 1.5 mm per coordinate: stretched, compressed and folded triangles and
/// hinges, so that both clamps act.
fn shell_scene(damping: weft_shell::MembraneDamping) -> (weft_solver::Assembler, StepInputs) {
    let mesh = weft_shell::ClothMesh::rectangle(
        [0.025, 0.02],
        [6, 5],
        Vector3::new(0.01, 0.02, -0.01),
        Vector3::new(1.0, 0.0, 0.2).normalize(),
        Vector3::new(0.0, -1.0, 0.1).normalize(),
    )
    .unwrap();
    let material = weft_shell::ShellMaterial {
        bending_damping: 0.05,
        ..weft_shell::implicit::fig3_material(damping)
    };
    let fabric = weft_shell::shell_fabric(&mesh, &material, &[0, 5]).unwrap();
    let a = weft_solver::Assembler::new(fabric, Vector3::new(0.3, -9.81, 0.1));
    let mut s = inputs(&a, 0x51e1_1000, false);
    let mut r = weft_potentials::testing::xorshift(0x51e1_1001);
    for (d, q) in s.q_n.iter_mut().enumerate() {
        if d % 5 < 3 && !(d / 5 == 0 || d / 5 == 5) {
            *q += 1.5e-3 * r();
        }
    }
    (a, s)
}

/// Triangle-mesh cloth on the kernels (`weft_assemble_triangles`,
/// `weft_assemble_hinges`): StVK membrane triangles with strain-rate or
/// Rayleigh damping and discrete-shell hinges with strain-rate damping.
/// Residual, matrix and energies equal the CPU assembler's to 1e-12
/// relative in both Hessian modes, with and without the dissipation's
/// position Jacobian; the exact and projected matrices differ (the
/// triangles' and hinges' clamps act).
#[test]
fn emulated_triangle_mesh_cloth_matches_the_cpu_assembler() {
    if skip() {
        return;
    }
    use weft_shell::MembraneDamping;
    let mut worst = [0.0f64; 4];
    for damping in [
        MembraneDamping::StrainRate { beta: 0.01 },
        MembraneDamping::Rayleigh { beta: 0.01 },
    ] {
        let (mut a, s) = shell_scene(damping);
        let mut plan = AssemblyPlan::new(&a).unwrap();
        assert_eq!(
            plan.tri_nodes.len(),
            3 * 40,
            "5 x 4 quads, 2 triangles each"
        );
        assert!(
            plan.hinge_nodes.len() / 4 > 40,
            "{} hinges",
            plan.hinge_nodes.len() / 4
        );
        let colliders = colliders_at(&a, a.time).unwrap();
        for dx in [true, false] {
            a.dissipation_position_jacobian = dx;
            plan.dissipation_position_jacobian = dx;
            assert_both_modes_match(&mut a, &mut plan, &colliders, &s, 1, &mut worst);
        }
        let mut matrices = Vec::new();
        for exact in [false, true] {
            a.exact_hessians = exact;
            let mut res = vec![0.0; s.q_n.len()];
            a.assemble(&s.q_n, &s.v_n, &s.v, s.h, &s.anchors, &mut res, true);
            matrices.push(flat(&a.matrix.to_general().values));
        }
        let change = rel(&matrices[1], &matrices[0]);
        assert!(
            change > 1e-6,
            "{damping:?}: the two modes agree to {change:.2e}"
        );
        eprintln!("{damping:?}: exact vs projected matrix change {change:.2e}");
    }
    eprintln!(
        "triangle-mesh cloth: worst relative errors, emulated vs CPU: residual {:.2e}, matrix \
         {:.2e}, elastic {:.2e}, dissipation {:.2e}",
        worst[0], worst[1], worst[2], worst[3]
    );
}

/// Triangle-mesh cloth's self-collision on the kernels: the vertex–face
/// pairs `Assembler::begin_step` finds are handed to the repulsion kernel
/// after the segment pairs (`StepColliders::face_from`). On the crumpled
/// shell patch with vertex–face and edge–edge repulsion (`d0` 4 mm, 80 N/m,
/// only a pair's own shared nodes excluded, so neighbouring triangles
/// repel), under both laws: the emulated residual, matrix (both modes) and
/// energies equal the CPU's to 1e-12, the repulsion term alone to 1e-10,
/// with at least 20 vertex–face pairs active.
#[test]
fn emulated_vertex_face_repulsion_matches_the_cpu_assembler() {
    use weft_solver::collide::{Exclusion, NodeGraph, RepulsionLaw, SelfCollision};
    if skip() {
        return;
    }
    let mut worst = [0.0f64; 4];
    let mut worst_term = 0.0f64;
    for law in [RepulsionLaw::Quadratic, RepulsionLaw::Cubic] {
        let (mut a, s) = shell_scene(weft_shell::MembraneDamping::StrainRate { beta: 0.01 });
        let edges = a.contact_edges().to_vec();
        let faces: Vec<[usize; 3]> = a
            .fabric
            .elements
            .triangles
            .iter()
            .map(|t| t.nodes)
            .collect();
        let graph = NodeGraph::from_edges(a.fabric.node_count(), &edges).unwrap();
        let d0 = 4e-3;
        let detector = SelfCollision::new(edges, Exclusion::new(&graph, 0), 2.0 * d0)
            .unwrap()
            .with_faces(faces)
            .unwrap();
        a.contact.self_collision = Some(weft_solver::assembly::SelfContact::new(
            detector, d0, 80.0, law,
        ));
        let mut plan = AssemblyPlan::new(&a).unwrap();
        let len = s.q_n.len();
        let t_end = a.time + s.h;
        a.begin_step(&s.q_n, &s.v_n, s.h, t_end);
        let colliders = colliders_at(&a, a.time).unwrap();
        let sc = a.contact.self_collision.as_ref().unwrap();
        assert_eq!(colliders.face_from as usize, sc.contacts.len());
        assert_eq!(
            colliders.pairs.len(),
            4 * (sc.contacts.len() + sc.face_contacts.len())
        );
        let q: Vec<f64> = s.q_n.iter().zip(&s.v).map(|(q, v)| q + s.h * v).collect();
        let active = sc
            .face_contacts
            .iter()
            .filter(|c| {
                let q12 =
                    nalgebra::SVector::<f64, 12>::from_fn(|i, _| q[5 * c.nodes[i / 3] + i % 3]);
                weft_solver::collide::face_repulsion(&q12, sc.d0, sc.stiffness, law).is_some()
            })
            .count();
        assert!(
            active >= 20,
            "{law:?}: only {active} active vertex-face pairs"
        );
        let (e_term, res_emu) = repulsion_term(&mut a, &plan, &colliders, &s, &format!("{law:?}"));
        worst_term = worst_term.max(e_term);
        // The kernel tells the kinds apart: the same pairs all read as
        // segment pairs give another residual.
        let as_segments = weft_cuda::plan::StepColliders {
            face_from: (colliders.pairs.len() / 4) as u32,
            ..colliders.clone()
        };
        let mut res_wrong = vec![0.0; len];
        let mut vals = vec![[[0.0; 5]; 5]; plan.cols.len()];
        emulate::assemble(
            &plan,
            &as_segments,
            &s.q_n,
            &s.v_n,
            &s.v,
            s.h,
            &s.anchors,
            &mut res_wrong,
            &mut vals,
            false,
        )
        .unwrap();
        assert!(rel(&res_wrong, &res_emu) > 1e-6);
        assert_both_modes_match(&mut a, &mut plan, &colliders, &s, 1, &mut worst);
    }
    eprintln!(
        "vertex-face repulsion, emulated kernels vs CPU assembler: worst relative errors \
         residual {:.2e}, matrix {:.2e}, elastic {:.2e}, dissipation {:.2e}; repulsion term \
         alone {worst_term:.2e}",
        worst[0], worst[1], worst[2], worst[3]
    );
}

/// The self-collision repulsion's term of the residual alone (with minus
/// without `a.contact.self_collision`, and without the pairs in
/// `colliders` on the emulated side): asserts that it changes the CPU
/// residual by more than 1e-4 relative and that the emulated term equals
/// the CPU's to 1e-10; returns that error and the emulated residual.
fn repulsion_term(
    a: &mut weft_solver::Assembler,
    plan: &AssemblyPlan,
    colliders: &weft_cuda::plan::StepColliders,
    s: &StepInputs,
    what: &str,
) -> (f64, Vec<f64>) {
    let len = s.q_n.len();
    let mut res_cpu = vec![0.0; len];
    a.assemble(&s.q_n, &s.v_n, &s.v, s.h, &s.anchors, &mut res_cpu, false);
    let saved = a.contact.self_collision.take();
    let mut res_cpu_without = vec![0.0; len];
    a.assemble(
        &s.q_n,
        &s.v_n,
        &s.v,
        s.h,
        &s.anchors,
        &mut res_cpu_without,
        false,
    );
    a.contact.self_collision = saved;
    let without = weft_cuda::plan::StepColliders {
        pairs: Vec::new(),
        ..colliders.clone()
    };
    let mut res_emu = vec![0.0; len];
    let mut res_emu_without = vec![0.0; len];
    let mut vals = vec![[[0.0; 5]; 5]; plan.cols.len()];
    for (c, r) in [(colliders, &mut res_emu), (&without, &mut res_emu_without)] {
        emulate::assemble(
            plan, c, &s.q_n, &s.v_n, &s.v, s.h, &s.anchors, r, &mut vals, false,
        )
        .unwrap();
    }
    let diff = |a: &[f64], b: &[f64]| -> Vec<f64> { a.iter().zip(b).map(|(x, y)| x - y).collect() };
    let term_cpu = diff(&res_cpu, &res_cpu_without);
    assert!(rel(&term_cpu, &vec![0.0; len]) > 1e-4 * rel(&res_cpu, &vec![0.0; len]));
    let e_term = rel(&diff(&res_emu, &res_emu_without), &term_cpu);
    assert!(
        e_term <= 1e-10,
        "{what}: repulsion term relative error {e_term:.3e}"
    );
    (e_term, res_emu)
}

/// The bending strain chosen at the step's start and held over the step
/// (`weft_potentials::bending::step_threshold`, the kernels'
/// `bend_step_threshold`): a 10-node cotton yarn (the preset at 2 mm
/// spacing) bent by 4.6° to 5.4° at its interior nodes, alternately, turned
/// so that over the step every interior angle crosses 5° (the ones below
/// rise, the ones above fall). Every element then uses its start strain,
/// not the one its iterate's angle would select, and the kernels'
/// residual, matrix and energies equal the CPU's to 1e-12 in both Hessian
/// modes.
#[test]
fn emulated_bending_holds_the_start_strain_over_the_step_as_the_cpu_does() {
    use weft_core::{FabricBuilder, FabricPreset, YarnSpec};
    use weft_potentials::bending;
    if skip() {
        return;
    }
    let deg = std::f64::consts::PI / 180.0;
    let (l, nodes) = (2e-3, 10);
    // Positions from turning angles: angle i at node i (interior nodes).
    let angle_at = |i: usize, delta: f64| {
        let below = i % 2 == 1;
        (if below { 4.6 } else { 5.4 }) * deg + if below { delta } else { -delta }
    };
    let polyline = |delta: f64| -> Vec<[f64; 3]> {
        let (mut x, mut dir) = ([0.0f64; 3], 0.0f64);
        let mut out = vec![x];
        for i in 1..nodes {
            if i > 1 {
                dir += angle_at(i - 1, delta);
            }
            x = [x[0] + l * dir.cos(), x[1] + l * dir.sin(), 0.0];
            out.push(x);
        }
        out
    };
    let mut b = FabricBuilder::new(vec![FabricPreset::Cotton.material(l, false)]).unwrap();
    b.add_yarn(&YarnSpec::new("cotton", polyline(0.0))).unwrap();
    let mut a = weft_solver::Assembler::new(b.build().unwrap(), Vector3::new(0.0, -9.81, 0.0));
    let f = &a.fabric;
    let q_n: Vec<f64> = (0..f.node_count())
        .flat_map(|i| f.initial.node_q(i))
        .collect();
    // v moves every node to the polyline with each angle 0.8° further.
    let h = 1e-3;
    let target = polyline(0.8 * deg);
    let mut v = vec![0.0; q_n.len()];
    for (i, x) in target.iter().enumerate() {
        for r in 0..3 {
            v[5 * i + r] = (x[r] - q_n[5 * i + r]) / h;
        }
    }
    // Every element crosses the switch between q_n and q_n + h v.
    let element_angle = |q: &[f64], e: &weft_core::BendingElement| {
        let dofs = a.fabric.bending_dofs(e);
        bending::angle(&nalgebra::SVector::from_fn(|i, _| q[dofs[i]]))
    };
    let q: Vec<f64> = q_n.iter().zip(&v).map(|(q, v)| q + h * v).collect();
    let elements = &a.fabric.elements.bending;
    assert_eq!(elements.len(), nodes - 2);
    let t = bending::DEFAULT_THRESHOLD;
    for e in elements {
        let (before, after) = (element_angle(&q_n, e), element_angle(&q, e));
        assert!(
            (before - t) * (after - t) < 0.0 && (after - t).abs() > 0.1 * deg,
            "element at node {}: {before} -> {after}",
            e.center
        );
    }
    assert_step_from_rest_matches(&mut a, q_n, v, h, "bending across the switch");
}

/// The shear strain chosen at the step's start and held over the step
/// (`weft_potentials::shear::Shear::over_step`, the kernels'
/// `shear_step_threshold`): a 6 x 6 cotton patch (the preset at 2 mm
/// spacing, with jamming from its geometry) sheared in its plane to 4.6° at
/// the step's start and on to 5.4° over the step, so that the crossings'
/// angles cross 5°; the kernels' residual, matrix and energies equal the
/// CPU's to 1e-12 in both Hessian modes.
#[test]
fn emulated_shear_holds_the_start_strain_over_the_step_as_the_cpu_does() {
    use weft_core::{FabricBuilder, FabricPreset, WovenPatchSpec};
    use weft_potentials::shear;
    if skip() {
        return;
    }
    let deg = std::f64::consts::PI / 180.0;
    let mut b = FabricBuilder::new(vec![FabricPreset::Cotton.material(2e-3, false)]).unwrap();
    let mut spec = WovenPatchSpec::new("cotton", [0.01, 0.01], [6, 6], [0.0; 3]);
    spec.sliding = false;
    b.add_woven_patch(&spec).unwrap();
    let mut a = weft_solver::Assembler::new(b.build().unwrap(), Vector3::new(0.0, -9.81, 0.0));
    let f = &a.fabric;
    // Horizontal, warp along x, weft along z: x += tan(ψ) z shears by ψ.
    let shear_by = |psi: f64| -> Vec<f64> {
        (0..f.node_count())
            .flat_map(|i| {
                let mut q = f.initial.node_q(i);
                q[0] += psi.tan() * q[2];
                q
            })
            .collect()
    };
    let h = 1e-3;
    let q_n = shear_by(4.6 * deg);
    let q_end = shear_by(5.4 * deg);
    let v: Vec<f64> = q_end.iter().zip(&q_n).map(|(e, s)| (e - s) / h).collect();
    let q: Vec<f64> = q_n.iter().zip(&v).map(|(q, v)| q + h * v).collect();
    let angle = |q: &[f64], x: &weft_core::ShearElement| {
        let dofs = f.shear_dofs(x);
        shear::shear_angle(&nalgebra::SVector::from_fn(|i, _| q[dofs[i]])).abs()
    };
    let t = shear::SMALL_ANGLE_THRESHOLD;
    let elements = &f.elements.shear;
    let total = elements.len();
    let crossing = elements
        .iter()
        .filter(|x| angle(&q_n, x) < t && angle(&q, x) > t)
        .count();
    assert!(
        crossing * 2 > total,
        "{crossing} of {total} crossings cross 5 degrees within the step"
    );
    let label = format!("shear across the switch ({crossing} of {total} crossings)");
    assert_step_from_rest_matches(&mut a, q_n, v, h, &label);
}

/// [`assert_both_modes_match`] for a step of size `h` (s) from rest at
/// `q_n` to the iterate `v` (no anchors, colliders at the assembler's
/// time); prints the worst errors under `label`.
fn assert_step_from_rest_matches(
    a: &mut weft_solver::Assembler,
    q_n: Vec<f64>,
    v: Vec<f64>,
    h: f64,
    label: &str,
) {
    let s = StepInputs {
        q_n,
        v_n: vec![0.0; v.len()],
        v,
        anchors: vec![],
        h,
    };
    let mut plan = AssemblyPlan::new(a).unwrap();
    let colliders = colliders_at(a, a.time).unwrap();
    let mut worst = [0.0; 4];
    assert_both_modes_match(a, &mut plan, &colliders, &s, 0, &mut worst);
    eprintln!(
        "{label}: worst relative errors residual {:.2e}, matrix {:.2e}, elastic {:.2e}, \
         dissipation {:.2e}",
        worst[0], worst[1], worst[2], worst[3]
    );
}
