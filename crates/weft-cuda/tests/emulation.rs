//! The `.cu` kernels run serially on the host (`weft_cuda::emulate`) against
//! the CPU backend (`weft_solver::Assembler`, `weft_solver::pcg`), on woven
//! patches and yarns with every term the kernels implement switched on:
//! stretch, bending, shear (with jamming) and parallel contact with
//! strain-rate damping, a Rayleigh-damped material, sliding anchors,
//! gravity, Eulerian mass and inertia, point masses, and a static sphere, a
//! plane and a moving, rotating capsule.
//!
//! Error measure: `‖a - b‖₂ / ‖b‖₂` over all entries (residual vector, all
//! matrix blocks, each energy). Tolerances: 1e-12 for the assembly (the
//! same element formulas; only the summation order of a few terms differs);
//! 1e-10 for the block-Jacobi inverses (a hand-written 5x5 Cholesky against
//! nalgebra's, relative to the blocks' condition); PCG: same iteration
//! count within 2 and solutions within 1e-12 with a CG tolerance of 1e-12.
//!
//! Skips with a visible message without the host build (no C++ compiler).

mod common;

use common::{flat, full_material, inputs, make_spd, rel, scene};
use nalgebra::Vector3;
use weft_cuda::emulate::{self, EmulatedOps};
use weft_cuda::host;
use weft_cuda::plan::{AssemblyPlan, colliders_at};
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

#[test]
fn emulated_assembly_matches_the_cpu_assembler() {
    if skip() {
        return;
    }
    let mut a = scene();
    let plan = AssemblyPlan::new(&a).unwrap();
    let colliders = colliders_at(&a, a.time).unwrap();
    assert_eq!(colliders.len(), 3);
    let mut worst = [0.0f64; 7];
    for seed in 1..=6u64 {
        let s = inputs(&a, 0x9e37_79b9 + seed, true);
        let len = s.q_n.len();
        let mut res_cpu = vec![0.0; len];
        let (e_cpu, p_cpu) = a.assemble(&s.q_n, &s.v_n, &s.v, s.h, &s.anchors, &mut res_cpu, true);
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
            rel(&flat(&vals), &flat(&a.matrix.values)),
            rel(&[e_emu.kinetic], &[e_cpu.kinetic]),
            rel(&[e_emu.elastic], &[e_cpu.elastic]),
            rel(&[e_emu.gravity], &[e_cpu.gravity]),
            rel(&[e_emu.dissipation_power], &[e_cpu.dissipation_power]),
            rel(&[p_emu.value], &[p_cpu.value]),
        ];
        let names = [
            "residual",
            "matrix",
            "kinetic",
            "elastic",
            "gravity",
            "dissipation",
            "peak strain",
        ];
        for (k, e) in errs.iter().enumerate() {
            assert!(
                *e <= 1e-12,
                "seed {seed}: {} relative error {e:.3e}",
                names[k]
            );
            worst[k] = worst[k].max(*e);
        }
        // Every term is exercised: contact, colliders and damping are on.
        assert!(e_cpu.elastic > 0.0 && e_cpu.dissipation_power > 0.0 && e_cpu.kinetic > 0.0);
        // The residual without the matrix is the same.
        let mut res2 = vec![0.0; len];
        let mut vals2 = vals.clone();
        emulate::assemble(
            &plan, &colliders, &s.q_n, &s.v_n, &s.v, s.h, &s.anchors, &mut res2, &mut vals2, false,
        )
        .unwrap();
        assert_eq!(res2, res_emu);
        assert_eq!(
            flat(&vals2),
            flat(&vals),
            "with_matrix = false must not touch the matrix"
        );
    }
    eprintln!(
        "worst relative errors, emulated kernels vs CPU assembler: residual {:.2e}, matrix {:.2e}, \
         kinetic {:.2e}, elastic {:.2e}, gravity {:.2e}, dissipation {:.2e}, peak strain {:.2e}",
        worst[0], worst[1], worst[2], worst[3], worst[4], worst[5], worst[6]
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

#[test]
fn emulated_pcg_matches_the_cpu_pcg() {
    if skip() {
        return;
    }
    let mut a = scene();
    let plan = AssemblyPlan::new(&a).unwrap();
    let s = inputs(&a, 0x1234_5678, true);
    let mut b = vec![0.0; s.q_n.len()];
    a.assemble(&s.q_n, &s.v_n, &s.v, s.h, &s.anchors, &mut b, true);
    // The assembled matrix is indefinite here (elastic Hessians not yet
    // projected); this test is about the linear algebra, so make it SPD.
    make_spd(&mut a.matrix);
    let rhs: Vec<f64> = b.iter().map(|x| -x).collect();
    let free = &plan.free;
    // Preconditioner: kernel setup against BlockJacobi::new.
    let bj = BlockJacobi::new(&a.matrix, free);
    let ops = EmulatedOps::new(&plan, &a.matrix.values).unwrap();
    let e_inv = rel(&ops.inverse, &flat(&bj.inverse));
    eprintln!("block-Jacobi inverse relative difference {e_inv:.2e}");
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
    let (tol, max_it) = (1e-12, 2000);
    let mut x_cpu = vec![0.0; rhs.len()];
    let r_cpu = pcg(&cpu, &rhs, &mut x_cpu, tol, max_it);
    assert_eq!(r_cpu.status, PcgStatus::Converged);
    let mut x_gen = vec![0.0; rhs.len()];
    let r_gen = pcg(&ops, &rhs, &mut x_gen, tol, max_it);
    let mut x_fused = vec![0.0; rhs.len()];
    let r_fused = emulate::fused_pcg(&ops, &rhs, &mut x_fused, tol, max_it).unwrap();
    eprintln!(
        "PCG iterations: cpu {}, emulated generic {}, emulated fused {}; relative residuals \
         {:.2e} {:.2e} {:.2e}",
        r_cpu.iterations,
        r_gen.iterations,
        r_fused.iterations,
        r_cpu.relative_residual,
        r_gen.relative_residual,
        r_fused.relative_residual
    );
    for (name, r, x) in [("generic", r_gen, &x_gen), ("fused", r_fused, &x_fused)] {
        assert_eq!(r.status, PcgStatus::Converged, "{name}");
        assert!(
            r.iterations.abs_diff(r_cpu.iterations) <= 2,
            "{name}: {} iterations against {} on the CPU",
            r.iterations,
            r_cpu.iterations
        );
        let e = rel(x, &x_cpu);
        eprintln!("{name}: solution relative difference {e:.2e}");
        assert!(e <= 1e-12, "{name}: solution relative error {e:.3e}");
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
