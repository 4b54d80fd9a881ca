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

use nalgebra::Vector3;
use weft_core::{
    Damping, FabricBuilder, Friction, Material, ModeCoefficients, NodeSelector, WovenPatchSpec,
    YarnSpec,
};
use weft_cuda::emulate::{self, EmulatedOps};
use weft_cuda::host;
use weft_cuda::plan::{AssemblyPlan, colliders_at};
use weft_potentials::testing::xorshift;
use weft_solver::Assembler;
use weft_solver::bsr::Block;
use weft_solver::collide::{Capsule, Collider, Keyframe, Plane, RigidMotion, Sphere};
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

fn rel(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let d: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt();
    let nb: f64 = b.iter().map(|y| y * y).sum::<f64>().sqrt();
    if nb > 0.0 { d / nb } else { d }
}

fn flat(v: &[Block]) -> Vec<f64> {
    v.iter().flatten().flatten().copied().collect()
}

fn full_material() -> Material {
    Material {
        name: "full".into(),
        radius: 0.3e-3,
        density: 130.0,
        stretch_stiffness: 500.0,
        bending_stiffness: 1e-5,
        shear_stiffness: 0.05,
        contact_stiffness: 10.0,
        friction: Friction {
            mu: 0.3,
            anchor_stiffness: 100.0,
        },
        damping: Damping::StrainRate(ModeCoefficients {
            stretch: 3e-4,
            bending: 1e-7,
            shear: 1e-5,
            contact: 1e-3,
        }),
    }
}

fn rayleigh_material() -> Material {
    Material {
        name: "rayleigh".into(),
        damping: Damping::Rayleigh {
            alpha: 2.0,
            beta: 1e-4,
        },
        ..full_material()
    }
}

/// Two woven patches (strain-rate and Rayleigh materials, corners pinned),
/// a sliding yarn whose nodes sit closer than a yarn diameter (parallel
/// contact active) with point masses, and three colliders.
fn scene() -> Assembler {
    let mut b = FabricBuilder::new(vec![full_material(), rayleigh_material()]).unwrap();
    let mut p = WovenPatchSpec::new("full", [0.012, 0.01], [7, 6], [0.0, 0.004, 0.0]);
    p.pinned = vec![NodeSelector::Corner(0), NodeSelector::Corner(2)];
    b.add_woven_patch(&p).unwrap();
    let mut p2 = WovenPatchSpec::new("rayleigh", [0.008, 0.008], [5, 5], [0.03, 0.004, 0.0]);
    p2.pinned = vec![NodeSelector::Corner(1)];
    b.add_woven_patch(&p2).unwrap();
    let nodes: Vec<[f64; 3]> = (0..8)
        .map(|i| [-0.02 + 0.0005 * i as f64, 0.006, 0.01])
        .collect();
    let mut y = YarnSpec::new("full", nodes);
    y.sliding = true;
    y.pinned = vec![0];
    y.point_masses = vec![(7, 1e-4), (3, 2e-5)];
    b.add_yarn(&y).unwrap();
    let fabric = b.build().unwrap();
    let mut a = Assembler::new(fabric, Vector3::new(0.3, -9.81, 0.1));
    let sphere = Collider::new(
        Sphere::new(Vector3::new(0.0, 0.0, 0.0), 0.0041).unwrap(),
        50.0,
        0.4,
    )
    .unwrap();
    let plane = Collider::new(
        Plane::new(
            Vector3::new(0.0, 0.0038, 0.0),
            Vector3::new(0.05, 1.0, 0.02),
        )
        .unwrap(),
        30.0,
        0.2,
    )
    .unwrap();
    let motion = RigidMotion::new(&[
        Keyframe {
            time: 0.0,
            translation: Vector3::new(0.0, 0.0, 0.0),
            rotation: None,
        },
        Keyframe {
            time: 1.0,
            translation: Vector3::new(0.01, 0.002, 0.0),
            rotation: Some(Vector3::new(0.0, 0.3, 0.1)),
        },
    ])
    .unwrap();
    let capsule = Collider::new(
        Capsule::new(
            Vector3::new(0.025, 0.0035, -0.01),
            Vector3::new(0.035, 0.0035, 0.01),
            0.0007,
        )
        .unwrap(),
        80.0,
        0.5,
    )
    .unwrap()
    .with_motion(motion);
    a.contact.colliders = vec![(sphere, 1e-4), (plane, 5e-5), (capsule, 1e-4)];
    a.time = 0.37;
    a
}

struct StepInputs {
    q_n: Vec<f64>,
    v_n: Vec<f64>,
    v: Vec<f64>,
    anchors: Vec<f64>,
    h: f64,
}

/// The initial state, with positions perturbed by ±0.2 mm and arc lengths
/// by ±0.02 mm when `perturb`, velocities ±0.05 m/s (fixed DOFs keep zero
/// velocity).
fn inputs(a: &Assembler, seed: u64, perturb: bool) -> StepInputs {
    let f = &a.fabric;
    let mut r = xorshift(seed);
    let n = f.node_count();
    let mut q_n = Vec::with_capacity(5 * n);
    for i in 0..n {
        q_n.extend(f.initial.node_q(i));
    }
    let free: Vec<bool> = f.free.iter().flatten().copied().collect();
    for (d, q) in q_n.iter_mut().enumerate() {
        if free[d] && perturb {
            *q += if d % 5 < 3 { 2e-4 } else { 2e-5 } * r();
        }
    }
    let mut vel = || -> Vec<f64> {
        (0..5 * n)
            .map(|d| if free[d] { 0.05 * r() } else { 0.0 })
            .collect()
    };
    let (v_n, v) = (vel(), vel());
    let anchors: Vec<f64> = f
        .elements
        .anchors
        .iter()
        .map(|an| q_n[5 * an.node + an.family.slot()] + 1e-5)
        .collect();
    StepInputs {
        q_n,
        v_n,
        v,
        anchors,
        h: 1e-3,
    }
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
    // The elastic Hessians are not (yet) projected to PSD by the CPU
    // assembler, so this matrix is indefinite (PCG stops on negative
    // curvature on both backends). This test is about the linear algebra:
    // make the assembled matrix strictly diagonally dominant (add each
    // row's absolute sum to its diagonal entry), hence SPD, on the same
    // pattern and with the same off-diagonal blocks.
    let m = &mut a.matrix;
    for i in 0..m.n {
        for r in 0..5 {
            let mut sum = 0.0;
            for k in m.row_ptr[i]..m.row_ptr[i + 1] {
                sum += m.values[k][r].iter().map(|x| x.abs()).sum::<f64>();
            }
            let d = m.diag[i];
            m.values[d][r][r] += sum;
        }
    }
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
