//! The device step driver without a GPU: the CPU's Newton loop
//! (`Simulation::try_step_with`) driving the kernels executed on the host
//! ([`weft_cuda::step::EmulatedStep`]: assembly kernels, fused block-Jacobi
//! PCG, the device begin-step masking and handle velocities) against the
//! CPU backend with block-Jacobi PCG; and the up-front refusal of what the
//! CUDA backend does not implement.

mod common;

use common::{
    mesh_box, patch, patch_on_mesh, patch_with_drag_and_attachments, patch_with_ties, rel, scene,
    stacked_patches, with_self_collision,
};
use weft_cuda::plan::AssemblyPlan;
use weft_cuda::step::{EmulatedStep, Unsupported, advance_emulated, check_supported};
use weft_solver::collide::Collider;
use weft_solver::{
    CpuBackend, LinearSolver, Rejection, Settings, Simulation, StepBackend, StepHost,
};

/// The shared scene of the parity tests (two patches, a sliding yarn with
/// point masses, a sphere, a plane and a keyframed capsule) as a
/// simulation, for the refusal tests.
fn simulation(linear_solver: LinearSolver) -> Simulation {
    let mut a = scene();
    let settings = Settings {
        linear_solver,
        ..Default::default()
    };
    let mut sim = Simulation::new(a.fabric.clone(), a.gravity, settings, vec![]);
    sim.assembler.contact.colliders = std::mem::take(&mut a.contact.colliders);
    sim
}

/// The largest step `h0 / 2^k` (`k < halvings`) that the CPU backend
/// rejects with a rejection `kind` accepts, from the state `make()` builds;
/// returns `h`, the CPU's rejection and the emulated device backend's
/// result for the same step from the same state.
///
/// # Panics
/// When no such step size exists.
fn rejected_on_both(
    make: impl Fn() -> Simulation,
    h0: f64,
    halvings: u32,
    kind: impl Fn(&Rejection) -> bool,
) -> (f64, Rejection, Result<weft_solver::StepStats, Rejection>) {
    let (h, rc) = (0..halvings)
        .map(|k| h0 / f64::from(1u32 << k))
        .find_map(|h| match make().try_step(h) {
            Err(r) if kind(&r) => Some((h, r)),
            _ => None,
        })
        .expect("no step size with the expected rejection");
    let mut emu = make();
    let mut be = EmulatedStep::new(&emu).unwrap();
    let (mut q, mut v) = (emu.q.clone(), emu.v.clone());
    let re = emu.try_step_with(&mut be, &mut q, &mut v, h).unwrap();
    (h, rc, re)
}

fn host_build() -> bool {
    let sim = patch();
    let mut be = EmulatedStep::new(&sim).unwrap();
    let mut s = sim;
    match advance_emulated(&mut s, &mut be, 1e-4) {
        Ok(_) => true,
        Err(e) => {
            eprintln!("SKIPPED: no host build of the kernels (no C++ compiler at build time): {e}");
            false
        }
    }
}

/// Runs the patch for `steps` steps of 1 ms with the emulated device backend
/// and with the CPU backend (block-Jacobi PCG, the device's preconditioner)
/// at Newton tolerance `tol`; checks the same accepted steps (and, with
/// `newton_slack`, Newton iterations within it per step). Returns the worst
/// relative differences (`‖a - b‖₂/‖b‖₂`) of positions and velocities over
/// the steps and of the final anchors.
fn compare(tol: f64, newton_slack: Option<usize>, steps: usize) -> [f64; 3] {
    compare_on(patch, tol, newton_slack, steps, |_, _| {})
}

/// [`compare`] on the simulation `make` builds; `observe(k, cpu)` sees the
/// CPU simulation after its step `k` (1-based), so that a test can measure
/// the run it compares instead of running the scene a third time.
fn compare_on(
    make: fn() -> Simulation,
    tol: f64,
    newton_slack: Option<usize>,
    steps: usize,
    mut observe: impl FnMut(usize, &Simulation),
) -> [f64; 3] {
    let mut cpu = make();
    let mut emu = make();
    for s in [&mut cpu, &mut emu] {
        s.settings.newton_tolerance = tol;
    }
    let mut be = EmulatedStep::new(&emu).unwrap();
    let mut worst = [0.0f64; 3];
    let (mut dv_max, mut v_max) = (0.0f64, 0.0f64);
    let norm = |x: &[f64]| x.iter().map(|a| a * a).sum::<f64>().sqrt();
    for k in 1..=steps {
        let t = k as f64 * 1e-3;
        let sc = cpu.advance_to(t, |_, _| {}).unwrap();
        observe(k, &cpu);
        let se = advance_emulated(&mut emu, &mut be, t).unwrap();
        assert_eq!(
            sc.len(),
            se.len(),
            "step {k}: accepted steps differ (rejections CPU {:?}, device {:?}; Newton CPU {:?}, device {:?})",
            cpu.rejections,
            emu.rejections,
            sc.iter().map(|s| s.newton_iterations).collect::<Vec<_>>(),
            se.iter().map(|s| s.newton_iterations).collect::<Vec<_>>()
        );
        for (a, b) in sc.iter().zip(&se) {
            if let Some(slack) = newton_slack {
                assert!(
                    a.newton_iterations.abs_diff(b.newton_iterations) <= slack,
                    "step {k}: Newton iterations {} (CPU) vs {} (device)",
                    a.newton_iterations,
                    b.newton_iterations
                );
            }
        }
        worst[0] = worst[0].max(rel(&emu.q, &cpu.q));
        // Velocities relative to the largest velocity norm of the run (the
        // cloth comes nearly to rest, where a per-step relative measure
        // divides by ~0).
        dv_max = dv_max.max(rel(&emu.v, &cpu.v) * norm(&cpu.v));
        v_max = v_max.max(norm(&cpu.v));
    }
    worst[1] = dv_max / v_max;
    worst[2] = rel(&emu.anchors, &cpu.anchors);
    assert_eq!(emu.t, cpu.t);
    assert!(cpu.dissipated > 0.0);
    assert!(
        (emu.dissipated - cpu.dissipated).abs() <= 1e-6 * cpu.dissipated,
        "dissipated energy: device {:e} J, CPU {:e} J",
        emu.dissipated,
        cpu.dissipated
    );
    eprintln!(
        "emulated device vs CPU, Newton tolerance {tol:e}, {steps} steps: worst relative difference q {:.2e}, v {:.2e}, anchors {:.2e}",
        worst[0], worst[1], worst[2]
    );
    worst
}

/// At the default Newton tolerance (1e-6 of the force scale) both backends
/// take the same steps with Newton iterations within 1 of each other, and
/// stay within 1e-7 relative in positions and 5e-6 in velocities (relative
/// to the run's largest `‖v‖`) over 30 steps (measured: 3.3e-8 and 8.5e-7,
/// the size of two independent inexact Newton solves).
#[test]
fn emulated_device_step_matches_cpu_trajectory() {
    if !host_build() {
        return;
    }
    let [q, v, _] = compare(1e-6, Some(1), 30);
    assert!(q < 1e-7, "positions differ by {q:e}");
    assert!(v < 5e-6, "velocities differ by {v:e}");
}

/// With the Newton tolerance tightened to 1e-8 the differences shrink with
/// it, over 100 steps (the run of tests/gpu.rs): positions < 2e-9,
/// velocities < 5e-7, anchors < 1e-9 (measured 5.4e-10, 9.0e-8, 8.6e-11):
/// they are the solver tolerance, not a difference of the model between
/// the backends. (At 1e-9 the CPU itself rejects a dozen steps near the
/// round-off floor and the two step sequences part.)
#[test]
fn emulated_device_converges_to_the_cpu_solution() {
    if !host_build() {
        return;
    }
    let [q, v, a] = compare(1e-8, None, 100);
    assert!(q < 2e-9, "positions differ by {q:e}");
    assert!(v < 5e-7, "velocities differ by {v:e}");
    assert!(a < 1e-9, "anchors differ by {a:e}");
}

/// Steps that must be rejected are rejected by the device driver for the
/// same reasons as on the CPU: with `max_strain_change` 1e-5 the patch's
/// first steps give strain jumps on both, the adaptive control halves the
/// step identically, and the rejection counts by reason, the final step
/// size and the outcome agree.
#[test]
fn emulated_device_rejects_like_cpu() {
    if !host_build() {
        return;
    }
    let mut cpu = patch();
    let mut emu = patch();
    for s in [&mut cpu, &mut emu] {
        s.settings.max_strain_change = 1e-5;
        s.settings.dt_min = 1e-5;
    }
    let mut be = EmulatedStep::new(&emu).unwrap();
    let rc = cpu.advance_to(5e-3, |_, _| {});
    let re = advance_emulated(&mut emu, &mut be, 5e-3);
    assert!(cpu.rejections.get("strain_jump").copied().unwrap_or(0) > 0);
    assert_eq!(cpu.rejections, emu.rejections);
    assert_eq!(rc.is_ok(), re.is_ok());
    assert_eq!(cpu.h, emu.h);
}

/// Every feature the kernels lack is refused up front with its name.
#[test]
fn unsupported_features_are_refused_by_name() {
    assert_eq!(
        check_supported(&simulation(LinearSolver::BlockJacobi)),
        Ok(())
    );
    assert_eq!(check_supported(&simulation(LinearSolver::Auto)), Ok(()));
    let cases: Vec<(Simulation, &str)> = vec![(simulation(LinearSolver::Cholesky), "cholesky")];
    for (sim, name) in cases {
        let err = check_supported(&sim).expect_err(name);
        let msg = err.to_string();
        assert!(msg.contains(name), "{msg:?} does not name {name:?}");
        assert!(
            EmulatedStep::new(&sim).is_err(),
            "{name}: the emulated backend must refuse too"
        );
        if name == "cholesky" {
            assert_eq!(err, Unsupported::Cholesky);
        }
    }
}

/// A patch falling onto a rising triangle-mesh box (tangent planes taken on
/// the host at every step start, evaluated by the plane kernel): the
/// emulated device step takes the same steps as the CPU (Newton iterations
/// within 1) and stays within 1e-7 relative in positions and 5e-6 in
/// velocities over 40 steps at the default Newton tolerance, like the
/// sphere scene; the box carries the cloth (at least 20 nodes end less than
/// 1 mm above its top face, y = -0.5 mm + 2 mm/s · t, within its footprint,
/// where free fall would have taken them 7 mm lower).
#[test]
fn emulated_device_step_on_a_mesh_collider_matches_cpu() {
    if !host_build() {
        return;
    }
    assert_eq!(check_supported(&patch_on_mesh()), Ok(()));
    // Nodes resting on the box at the end of the CPU run (t = 40 ms).
    let mut touching = 0;
    let on_box = |sim: &Simulation| {
        let top = -0.0005 + 0.002 * sim.t;
        sim.q
            .chunks(5)
            .filter(|x| {
                (-0.002..=0.0065).contains(&x[0])
                    && (-0.002..=0.0065).contains(&x[2])
                    && (top..top + 1e-3).contains(&x[1])
            })
            .count()
    };
    let [q, v, _] = compare_on(patch_on_mesh, 1e-6, Some(1), 40, |k, cpu| {
        if k == 40 {
            touching = on_box(cpu);
            eprintln!(
                "{touching} nodes rest on the mesh box at t = {:.3} s",
                cpu.t
            );
        }
    });
    assert!(touching >= 20, "only {touching} nodes on the box");
    assert!(q < 1e-7, "positions differ by {q:e}");
    assert!(v < 5e-6, "velocities differ by {v:e}");
}

/// Mesh colliders and self-collision are no longer refused: the shared
/// scene with a box mesh collider, then also self-collision, passes
/// `check_supported` and builds an emulated backend.
#[test]
fn mesh_colliders_are_supported() {
    let mut s = simulation(LinearSolver::BlockJacobi);
    s.assembler.contact.colliders.push((
        Collider::new(mesh_box([0.0, -0.01, 0.0], [0.01, 0.0, 0.01]), 10.0, 0.0).unwrap(),
        0.0,
    ));
    assert_eq!(check_supported(&s), Ok(()));
    assert!(EmulatedStep::new(&s).is_ok());
    with_self_collision(&mut s.assembler, 1e-3, 10.0, 2);
    assert_eq!(check_supported(&s), Ok(()));
    assert!(EmulatedStep::new(&s).is_ok());
}

/// Two stacked patches with self-collision (pairs found on the host at
/// every step start, repulsion evaluated by the pair kernel): the emulated
/// device step takes the same steps as the CPU at Newton tolerance 1e-8
/// and stays within 1e-7 relative in positions and 5e-6 in velocities
/// over 30 steps; the repulsion is active (at some step end of the CPU
/// run at least 5 pairs within `d0`; measured 13 at the default Newton
/// tolerance).
#[test]
fn emulated_device_step_with_self_collision_matches_cpu() {
    if !host_build() {
        return;
    }
    assert_eq!(check_supported(&stacked_patches()), Ok(()));
    // The most self-collision pairs within `d0` at a step end of the CPU run.
    let mut active = 0;
    let [q, v, _] = compare_on(stacked_patches, 1e-8, None, 30, |_, sim| {
        let sc = sim.assembler.contact.self_collision.as_ref().unwrap();
        let now = sc
            .contacts
            .iter()
            .filter(|c| {
                let q12 =
                    nalgebra::SVector::<f64, 12>::from_fn(|i, _| sim.q[5 * c.nodes[i / 3] + i % 3]);
                weft_solver::collide::repulsion(&q12, sc.d0, sc.stiffness).is_some()
            })
            .count();
        active = active.max(now);
    });
    eprintln!("at most {active} self-collision pairs within d0 at a step end over 30 ms");
    assert!(active >= 5, "only {active} active pairs");
    assert!(q < 1e-7, "positions differ by {q:e}");
    assert!(v < 5e-6, "velocities differ by {v:e}");
}

/// Drag (20 1/s) and three attachment springs on the falling patch: the
/// emulated device step takes the same steps as the CPU (Newton iterations
/// within 1) and stays within 1e-7 relative in positions and 5e-6 in
/// velocities over 20 steps; both terms are accepted by `check_supported`.
#[test]
fn emulated_device_step_with_drag_and_attachments_matches_cpu() {
    if !host_build() {
        return;
    }
    assert_eq!(check_supported(&patch_with_drag_and_attachments()), Ok(()));
    let [q, v, _] = compare_on(
        patch_with_drag_and_attachments,
        1e-6,
        Some(1),
        20,
        |_, _| {},
    );
    assert!(q < 1e-7, "positions differ by {q:e}");
    assert!(v < 5e-6, "velocities differ by {v:e}");
}

/// Two seam ties on the falling patch at Newton tolerance 1e-8: the
/// emulated device step takes the same steps as the CPU and stays within
/// 1e-7 relative in positions and 5e-6 in velocities over 20 steps
/// (measured 2.0e-8 and 5.6e-7; at 1e-6 the stiff ties leave 5e-6 in
/// positions, which shrinks with the tolerance: two inexact Newton solves,
/// not a model difference); ties are accepted by `check_supported`.
#[test]
fn emulated_device_step_with_seam_ties_matches_cpu() {
    if !host_build() {
        return;
    }
    assert_eq!(check_supported(&patch_with_ties()), Ok(()));
    let [q, v, _] = compare_on(patch_with_ties, 1e-8, None, 20, |_, _| {});
    assert!(q < 1e-7, "positions differ by {q:e}");
    assert!(v < 5e-6, "velocities differ by {v:e}");
}

/// A `StepHost` over `sim` for calling a backend's acceptance operations
/// directly (no handles: they do not enter the checks).
fn host_of<'a>(
    sim: &'a mut Simulation,
    free: &'a [f64],
    anchors: &'a mut Vec<f64>,
    strain_ref: &'a mut Vec<f64>,
) -> StepHost<'a> {
    StepHost {
        assembler: &mut sim.assembler,
        settings: &sim.settings,
        free,
        free_dofs: free.iter().filter(|&&f| f != 0.0).count(),
        anchors,
        strain_ref,
        handles: &[],
        handle_x0: &[],
        t: sim.t,
    }
}

/// The acceptance checks of the CPU backend and of the device kernels
/// (emulated) on the same coordinates: (1) segment 40 stretched by moving
/// its second node 0.3 mm along the yarn direction in space (strain change
/// ~0.3 > `max_strain_change` 0.1): both return the same
/// `Rejection::StrainJump` (segment, nodes, change to 1e-12); (2) two
/// segments (17 and 60) with their arc-length order reversed: both return
/// the same `Rejection::ArcLengthOrder` naming the first (segment 17's yarn
/// and nodes); (3) the unchanged state: both accept.
#[test]
fn acceptance_checks_name_the_same_segment_as_the_cpu() {
    if !host_build() {
        return;
    }
    let mut sim = patch();
    let mut be = EmulatedStep::new(&sim).unwrap();
    let mut cpu = CpuBackend::default();
    let free = sim.free_mask().to_vec();
    let mut anchors = sim.anchors.clone();
    let mut strain_ref = sim.strain_reference().to_vec();
    let segs = sim.assembler.fabric.elements.segments.clone();
    let q0 = sim.q.clone();
    let mut host = host_of(&mut sim, &free, &mut anchors, &mut strain_ref);
    // (3) unchanged: accepted by both.
    assert_eq!(cpu.check_accept(&mut host, &q0).unwrap(), None);
    assert_eq!(be.check_accept(&mut host, &q0).unwrap(), None);
    // (1) a strain jump at segment 40.
    let s = &segs[40];
    let mut q = q0.clone();
    let dir: Vec<f64> = (0..3).map(|c| q0[5 * s.b + c] - q0[5 * s.a + c]).collect();
    let len = dir.iter().map(|d| d * d).sum::<f64>().sqrt();
    for c in 0..3 {
        q[5 * s.b + c] += 3e-4 * dir[c] / len;
    }
    let rc = cpu.check_accept(&mut host, &q).unwrap();
    let re = be.check_accept(&mut host, &q).unwrap();
    match (&rc, &re) {
        (
            Some(Rejection::StrainJump {
                segment: i,
                a,
                b,
                change,
            }),
            Some(Rejection::StrainJump {
                segment: j,
                a: a2,
                b: b2,
                change: c2,
            }),
        ) => {
            assert_eq!((*i, *a, *b), (*j, *a2, *b2));
            assert!(*i == 40 || segs[*i].a == s.b || segs[*i].b == s.b);
            assert!(*change > 0.1, "change {change}");
            assert!((change - c2).abs() <= 1e-12 * change, "{change} vs {c2}");
        }
        _ => panic!("expected strain jumps, got CPU {rc:?}, device {re:?}"),
    }
    // (2) arc-length order lost at segments 17 and 60: the first is named.
    let mut q = q0.clone();
    for e in [60, 17] {
        let s = &segs[e];
        let k = s.family.slot();
        q[5 * s.b + k] = q[5 * s.a + k] - 1e-5;
    }
    let rc = cpu.check_accept(&mut host, &q).unwrap();
    let re = be.check_accept(&mut host, &q).unwrap();
    assert_eq!(rc, re);
    let y = &host.assembler.fabric.yarns[segs[17].yarn];
    let expected = format!(
        "{}: nodes {} and {} (global) would pass each other",
        y.label(),
        segs[17].a,
        segs[17].b
    );
    match rc {
        Some(Rejection::ArcLengthOrder(m)) => {
            assert!(
                m == expected
                    || segs[..17]
                        .iter()
                        .any(|s| m.contains(&format!("nodes {} and {}", s.a, s.b))),
                "{m} vs {expected}"
            );
        }
        other => panic!("expected an arc-length rejection, got {other:?}"),
    }
}

/// Whole steps rejected for a strain jump: from the same state, the first
/// step (the largest of 1 ms / 2^k at which Newton converges) of the falling patch with `max_strain_change` 1e-5 is
/// rejected by the CPU backend and by the emulated device backend with the
/// same segment and nodes, the changes agreeing to 1e-3 relative (two
/// independent Newton solves at the default tolerance).
#[test]
fn a_strain_jump_step_is_rejected_like_on_the_cpu() {
    if !host_build() {
        return;
    }
    // The largest step 1 ms / 2^k at which the CPU's Newton converges
    // and the strain check rejects.
    let make = || {
        let mut s = patch();
        s.settings.max_strain_change = 1e-5;
        s
    };
    let (h, rc, re) =
        rejected_on_both(make, 1e-3, 8, |r| matches!(r, Rejection::StrainJump { .. }));
    let re = re.expect_err("device accepted the step");
    match (&rc, &re) {
        (
            Rejection::StrainJump {
                segment: i,
                a,
                b,
                change,
            },
            Rejection::StrainJump {
                segment: j,
                a: a2,
                b: b2,
                change: c2,
            },
        ) => {
            assert_eq!((i, a, b), (j, a2, b2));
            assert!(*change > 1e-5);
            assert!((change - c2).abs() <= 1e-3 * change, "{change} vs {c2}");
            eprintln!("h = {h:e} s, both reject: {rc}");
        }
        _ => panic!("expected strain jumps, got CPU {rc:?}, device {re:?}"),
    }
}

/// The friction-anchor kernel (emulated) against `Assembler::update_anchors`
/// along the CPU trajectory of the patch for 60 steps of 1 ms: each step
/// the kernel updates its own anchors from the CPU's accepted coordinates;
/// after 60 steps the two anchor vectors agree to 1e-12 relative, and the
/// friction is active (at least 10 anchors slipped away from their initial
/// positions by more than 1e-7 m).
#[test]
fn anchor_kernel_follows_the_cpu_anchor_update() {
    if !host_build() {
        return;
    }
    let mut sim = patch();
    let plan = AssemblyPlan::new(&sim.assembler).unwrap();
    let start = sim.anchors.clone();
    // One kernel update per accepted CPU step, from the CPU's coordinates.
    let mut anchors = start.clone();
    let steps = sim
        .advance_to(0.06, |s, _| {
            weft_cuda::emulate::update_anchors(&plan, &s.q, &mut anchors).unwrap();
        })
        .unwrap()
        .len();
    let e = rel(&anchors, &sim.anchors);
    let slipped = sim
        .anchors
        .iter()
        .zip(&start)
        .filter(|(a, b)| (*a - *b).abs() > 1e-7)
        .count();
    eprintln!(
        "anchor kernel vs CPU after {steps} steps: relative difference {e:.2e}; {slipped} anchors slipped"
    );
    assert!(e <= 1e-12, "anchors differ by {e:e}");
    assert!(slipped >= 10, "only {slipped} anchors slipped");
}

/// Bus traffic of the device step, counted by the emulated backend: on the
/// patch (sphere collider, a handle, no mesh collider, no self-collision)
/// every read is a scalar (the largest 32 B: the four energies), and per
/// accepted step the reads outside PCG total under 1 KB (PCG adds 24 B per
/// iteration; a matrix assembly at an accepted line-search trial reads
/// nothing back, since the trial gave its residual and energies); no whole
/// vector (`40 n` B) is read. With a mesh collider
/// (`patch_on_mesh`) the one remaining per-step transfer shows: `q_n` and
/// `v_n` (`40 n` B each) once per step.
#[test]
fn device_step_downloads_only_scalars_without_mesh_colliders() {
    if !host_build() {
        return;
    }
    let mut sim = patch();
    let n = sim.assembler.fabric.node_count();
    let mut be = EmulatedStep::new(&sim).unwrap();
    let mut steps = 0;
    let mut cg = 0;
    for k in 1..=20 {
        let st = advance_emulated(&mut sim, &mut be, k as f64 * 1e-3).unwrap();
        steps += st.len();
        cg += st.iter().map(|s| s.cg_iterations).sum::<usize>();
    }
    let d = be.downloads;
    let per_step = (d.bytes - d.pcg_bytes) as f64 / steps as f64;
    eprintln!(
        "{steps} steps, {} reads, {} B in all ({:.0} B per step, of which {:.0} B outside PCG; largest read {} B; one q would be {} B)",
        d.reads,
        d.bytes,
        d.bytes as f64 / steps as f64,
        per_step,
        d.largest,
        40 * n
    );
    assert!(d.largest <= 32, "a read of {} B", d.largest);
    assert_eq!(d.vector_bytes, 0);
    assert!(per_step < 1024.0, "{per_step} B per step outside PCG");
    assert!(cg > 0 && d.pcg_bytes >= 24 * cg);
    // A mesh collider: q_n and v_n are read once per step attempt.
    let mut sim = patch_on_mesh();
    let mut be = EmulatedStep::new(&sim).unwrap();
    let st = advance_emulated(&mut sim, &mut be, 5e-3).unwrap();
    let attempts = st.len() + sim.rejections.values().sum::<usize>();
    let n = sim.assembler.fabric.node_count();
    assert!(attempts > 0);
    assert_eq!(be.downloads.vector_bytes, 2 * 40 * n * attempts);
    assert_eq!(be.downloads.largest, 40 * n);
}

/// Whole steps rejected for arc-length order: a crossing of the patch given
/// a sliding speed along its warp yarn (`u̇` = 2 m/s, the strain check off)
/// in the linearly implicit mode (`one_iteration`: a converged Newton
/// solve never lets `Δu` reach 0, the stretch energy grows without bound
/// there, but one linearised iteration overshoots); the first step size of
/// 4 ms / 2^k at which the CPU's order check rejects (4 ms: nodes 38 and 39
/// of warp yarn 4) is rejected by the emulated device backend with the
/// same message (yarn and nodes).
#[test]
fn an_arc_length_step_is_rejected_like_on_the_cpu() {
    if !host_build() {
        return;
    }
    let make = || {
        let mut s = patch();
        s.settings.max_strain_change = f64::INFINITY;
        s.settings.one_iteration = true;
        s.v[5 * 40 + 3] = 2.0;
        s
    };
    let (h, rc, re) = rejected_on_both(make, 4e-3, 10, |r| {
        matches!(r, Rejection::ArcLengthOrder(_))
    });
    eprintln!("h = {h:e} s: CPU {rc:?}, device {re:?}");
    assert_eq!(Err(rc), re);
}

/// Triangle-mesh cloth steps on the emulated device as on the CPU: the
/// same accepted steps, Newton iterations within 1 of each other, positions
/// within 1e-7 and velocities within 5e-6 relative over 30 steps of 1 ms
/// (the bounds of the woven patch above), while the patch stretches and
/// swings under its weight.
#[test]
fn emulated_device_steps_triangle_mesh_cloth_like_the_cpu() {
    if !host_build() {
        return;
    }
    assert_eq!(check_supported(&common::shell_patch()), Ok(()));
    let mut drop = 0.0;
    let [q, v, _] = compare_on(common::shell_patch, 1e-6, Some(1), 30, |_, cpu| {
        drop = -cpu.q.chunks(5).map(|x| x[1]).fold(f64::INFINITY, f64::min);
    });
    assert!(
        drop > 0.3,
        "the patch hangs 0.3 m and stretches: lowest y {}",
        -drop
    );
    assert!(q < 1e-7, "positions differ by {q:e}");
    assert!(v < 5e-6, "velocities differ by {v:e}");
}

/// Triangle-mesh cloth thrown onto itself (`common::thrown_sheets`, 5 m/s,
/// 1 ms steps): the steps that would take an edge through a face are
/// rejected (`layer_crossing`) on the emulated device as on the CPU (the
/// same accepted steps every millisecond, which differ when only one side
/// rejects), and the device's trajectory stays within 1e-6 of the CPU's.
#[test]
fn emulated_device_rejects_layer_crossing_steps_like_the_cpu() {
    if !host_build() {
        return;
    }
    let mut rejected = 0;
    let mut crossings = usize::MAX;
    let [q, _, _] = compare_on(common::thrown_sheets, 1e-6, Some(1), 15, |_, cpu| {
        rejected = cpu.rejections.get("layer_crossing").copied().unwrap_or(0);
        let sc = cpu.assembler.contact.self_collision.as_ref().unwrap();
        crossings = sc.detector.crossings(&cpu.state().x).len();
    });
    // Without the check (on the CPU) the edge goes through and stays.
    let mut unchecked = common::thrown_sheets();
    unchecked.settings.layer_crossing_dt_min = f64::INFINITY;
    unchecked.advance_to(0.015, |_, _| {}).unwrap();
    let sc = unchecked.assembler.contact.self_collision.as_ref().unwrap();
    let through = sc.detector.crossings(&unchecked.state().x).len();
    eprintln!(
        "{rejected} layer-crossing rejections, {crossings} crossings at the end; unchecked {through}"
    );
    assert!(through > 0);
    assert!(rejected > 0);
    assert_eq!(crossings, 0);
    assert!(q < 1e-6, "positions differ by {q:e}");
}

/// Triangle-mesh cloth landing on itself (vertex–face and edge–edge
/// repulsion, cubic law) steps on the emulated device as on the CPU: the
/// same accepted steps, Newton iterations within 1, positions within 1e-7
/// and velocities within 5e-6 relative over 30 steps of 1 ms, while the
/// falling sheet is stopped: every vertex ends more than half `d0` (1 mm)
/// above the held sheet (measured 1.98 mm), where free fall would have
/// taken it 11 mm below.
#[test]
fn emulated_device_steps_triangle_mesh_self_collision_like_the_cpu() {
    if !host_build() {
        return;
    }
    assert_eq!(check_supported(&common::stacked_sheets()), Ok(()));
    let mut lowest = 0.0;
    let mut faces = 0;
    let [q, v, _] = compare_on(common::stacked_sheets, 1e-6, Some(1), 30, |_, cpu| {
        let n0 = 81;
        lowest = cpu
            .q
            .chunks(5)
            .skip(n0)
            .map(|x| x[1])
            .fold(f64::INFINITY, f64::min);
        let sc = cpu.assembler.contact.self_collision.as_ref().unwrap();
        faces = faces.max(sc.face_contacts.len());
    });
    eprintln!("lowest vertex of the falling sheet {lowest} m; up to {faces} vertex-face pairs");
    assert!(faces > 20, "{faces} vertex-face pairs");
    assert!(lowest > 1e-3, "the sheet went through: lowest y {lowest}");
    assert!(q < 1e-7, "positions differ by {q:e}");
    assert!(v < 5e-6, "velocities differ by {v:e}");
}
