//! Shared scene for the emulation and GPU parity tests: two woven patches
//! (strain-rate and Rayleigh materials), a sliding yarn with active
//! parallel contact and point masses, a sphere, a plane and a moving
//! capsule; plus the relative-error measure.
#![allow(dead_code)]

use nalgebra::Vector3;
use weft_core::{
    Damping, FabricBuilder, Friction, Material, ModeCoefficients, NodeSelector, WovenPatchSpec,
    YarnSpec,
};
use weft_potentials::testing::xorshift;
use weft_solver::bsr::{Block, BlockSparse};
use weft_solver::collide::{
    Capsule, Collider, MeshAnimation, Plane, RigidMotion, Sphere, TriangleMesh,
};
use weft_solver::{Assembler, Handle, LinearSolver, Settings, Simulation};

/// `‖a - b‖₂ / ‖b‖₂` over all entries (`‖a‖₂` when `b = 0`).
pub fn rel(a: &[f64], b: &[f64]) -> f64 {
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

pub fn flat(v: &[Block]) -> Vec<f64> {
    v.iter().flatten().flatten().copied().collect()
}

pub fn full_material() -> Material {
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
            thread_spacing: 0.0,
        },
        damping: Damping::StrainRate(ModeCoefficients {
            stretch: 3e-4,
            bending: 1e-7,
            shear: 1e-5,
            contact: 1e-3,
        }),
    }
}

pub fn rayleigh_material() -> Material {
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
pub fn scene() -> Assembler {
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
    let motion = RigidMotion::from_rest(
        1.0,
        Vector3::new(0.01, 0.002, 0.0),
        Some(Vector3::new(0.0, 0.3, 0.1)),
    )
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

pub struct StepInputs {
    pub q_n: Vec<f64>,
    pub v_n: Vec<f64>,
    pub v: Vec<f64>,
    pub anchors: Vec<f64>,
    pub h: f64,
}

/// The initial state, with positions perturbed by ±0.2 mm and arc lengths
/// by ±0.02 mm when `perturb`, velocities ±0.05 m/s (fixed DOFs keep zero
/// velocity).
pub fn inputs(a: &Assembler, seed: u64, perturb: bool) -> StepInputs {
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

/// `q` (`5 n`) with every position coordinate moved by up to ±0.3 mm and
/// both arc-length coordinates by up to ±0.1 mm (`r` uniform in [-1, 1]):
/// configurations for the acceptance checks, some of them out of order.
pub fn jiggled(q: &[f64], r: &mut impl FnMut() -> f64) -> Vec<f64> {
    let mut q = q.to_vec();
    for x in q.chunks_mut(5) {
        for c in 0..3 {
            x[c] += 3e-4 * r();
        }
        x[3] += 1e-4 * r();
        x[4] += 1e-4 * r();
    }
    q
}

/// Makes `m` strictly diagonally dominant (adds each row's absolute sum to
/// its diagonal entry), hence SPD on the same pattern with the same
/// off-diagonal blocks. Only for matrices assembled with the exact elastic
/// Hessians (`Assembler::exact_hessians = true`), which are indefinite for
/// compressed or bent yarns; the default, projected matrix is SPD as it is.
pub fn make_spd(m: &mut BlockSparse) {
    // Absolute row sums of the whole matrix; in symmetric storage a stored
    // block (i, j), j > i, also stands for its transpose in block row j.
    let mut sums = vec![0.0f64; 5 * m.n];
    for i in 0..m.n {
        for k in m.row_ptr[i]..m.row_ptr[i + 1] {
            let j = m.cols[k] as usize;
            for r in 0..5 {
                for c in 0..5 {
                    let a = m.values[k][r][c].abs();
                    sums[5 * i + r] += a;
                    if m.symmetric && j != i {
                        sums[5 * j + c] += a;
                    }
                }
            }
        }
    }
    for i in 0..m.n {
        let d = m.diag[i];
        for r in 0..5 {
            m.values[d][r][r] += sums[5 * i + r];
        }
    }
}

/// A 9 x 9 woven patch (1 mm spacing, two corners pinned, friction
/// anchors, strain-rate damping) falling onto a sphere while a handle lifts
/// its last node, block-Jacobi PCG, steps of at most 1 ms.
pub fn patch() -> Simulation {
    let mut m = Material::example_cotton();
    m.shear_stiffness = 0.5;
    m.contact_stiffness = 50.0;
    m.friction.anchor_stiffness = 10.0;
    m.damping = Damping::StrainRate(ModeCoefficients::SBO17);
    let mut b = FabricBuilder::new(vec![m]).unwrap();
    let mut spec = WovenPatchSpec::new("cotton", [0.008, 0.008], [9, 9], [0.0; 3]);
    spec.pinned = vec![NodeSelector::Corner(0), NodeSelector::Corner(1)];
    b.add_woven_patch(&spec).unwrap();
    let fabric = b.build().unwrap();
    let n = fabric.node_count();
    let handle = Handle {
        nodes: vec![n - 1],
        keyframes: vec![(0.0, [0.0; 3]), (0.03, [0.0, 0.002, 0.001])],
    };
    let settings = Settings {
        dt: 1e-3,
        dt_max: 1e-3,
        linear_solver: LinearSolver::BlockJacobi,
        ..Default::default()
    };
    let mut sim = Simulation::new(
        fabric,
        Vector3::new(0.0, -9.81, 0.0),
        settings,
        vec![handle],
    );
    let s = Sphere::new(Vector3::new(0.004, -0.003, 0.004), 0.0025).unwrap();
    sim.assembler
        .contact
        .colliders
        .push((Collider::new(s, 200.0, 0.3).unwrap(), 0.05e-3));
    sim
}

/// A closed axis-aligned box mesh from `lo` to `hi` (m), outward-facing
/// triangles.
pub fn mesh_box(lo: [f64; 3], hi: [f64; 3]) -> TriangleMesh {
    let v: Vec<Vector3<f64>> = (0..8)
        .map(|i| {
            Vector3::new(
                if i & 1 == 0 { lo[0] } else { hi[0] },
                if i & 2 == 0 { lo[1] } else { hi[1] },
                if i & 4 == 0 { lo[2] } else { hi[2] },
            )
        })
        .collect();
    let t = [
        [0, 4, 6],
        [0, 6, 2],
        [1, 3, 7],
        [1, 7, 5],
        [0, 1, 5],
        [0, 5, 4],
        [2, 6, 7],
        [2, 7, 3],
        [0, 2, 3],
        [0, 3, 1],
        [4, 5, 7],
        [4, 7, 6],
    ];
    TriangleMesh::from_triangles("box", &v, &t).unwrap()
}

/// [`scene`] with its three analytic colliders plus two triangle-mesh
/// boxes: an animated one (frames at 100 per s sliding it back and forth
/// along its edge by 0.5 mm, 0.05 m/s: `MeshAnimation`, the surface
/// velocity per tangent plane) whose
/// top face and edge run under the first patch (nodes near the edge see two
/// sheets), and a keyframed (translating and rotating) one under the
/// Rayleigh patch.
pub fn mesh_scene() -> Assembler {
    let mut a = scene();
    let still = mesh_box([0.004, -0.01, -0.01], [0.0095, 0.00405, 0.02]);
    let frames: Vec<Vec<Vector3<f64>>> = (0..60)
        .map(|k| {
            let d = Vector3::new(0.0, 0.0, 0.0005 * (k % 2) as f64);
            still.vertices().iter().map(|p| p + d).collect()
        })
        .collect();
    let animation =
        MeshAnimation::from_frames("sliding box", &frames, still.triangles(), 100.0).unwrap();
    let fixed = Collider::animated(std::sync::Arc::new(animation), 60.0, 0.3).unwrap();
    let motion = RigidMotion::from_rest(
        1.0,
        Vector3::new(0.002, -0.0005, 0.001),
        Some(Vector3::new(0.0, 0.3, 0.0)),
    )
    .unwrap();
    let moving = Collider::new(
        mesh_box([0.024, -0.01, -0.008], [0.045, 0.0042, 0.016]),
        40.0,
        0.5,
    )
    .unwrap()
    .with_motion(motion);
    a.contact.colliders.push((fixed, 1e-4));
    a.contact.colliders.push((moving, 5e-5));
    a
}

/// [`patch`] (centred at the origin, 8 mm square) falling onto a slowly
/// rising triangle-mesh box (its top face and two edges under the patch)
/// instead of the sphere.
pub fn patch_on_mesh() -> Simulation {
    let mut sim = patch();
    let motion = RigidMotion::from_rest(1.0, Vector3::new(0.0, 0.002, 0.0), None).unwrap();
    let mesh = mesh_box([-0.002, -0.01, -0.002], [0.0065, -0.0005, 0.0065]);
    sim.assembler.contact.colliders = vec![(
        Collider::new(mesh, 200.0, 0.3).unwrap().with_motion(motion),
        0.05e-3,
    )];
    sim
}

/// Self-collision on `a`'s fabric as the CLI sets it up: interaction
/// distance `d0` (m), stiffness `k` (N/m), broad phase within `2 d0`,
/// pairs within `hops` hops of the yarn graph excluded.
pub fn with_self_collision(a: &mut Assembler, d0: f64, k: f64, hops: usize) {
    let detector =
        weft_solver::collide::SelfCollision::from_fabric(&a.fabric, 2.0 * d0, hops).unwrap();
    a.contact.self_collision = Some(weft_solver::assembly::SelfContact::new(
        detector,
        d0,
        k,
        weft_solver::collide::RepulsionLaw::Quadratic,
    ));
}

/// [`patch`] with a second 9 x 9 patch 0.45 mm above it (shifted by half a
/// spacing, unpinned), both falling onto the sphere, with self-collision
/// (`d0` 0.3 mm, 5 N/m, 2 hops excluded): the upper patch rests on the
/// lower one through the repulsion.
pub fn stacked_patches() -> Simulation {
    let base = patch();
    let m = base.assembler.fabric.materials[0].clone();
    let mut b = FabricBuilder::new(vec![m]).unwrap();
    let mut spec = WovenPatchSpec::new("cotton", [0.008, 0.008], [9, 9], [0.0; 3]);
    spec.pinned = vec![NodeSelector::Corner(0), NodeSelector::Corner(1)];
    b.add_woven_patch(&spec).unwrap();
    let upper = WovenPatchSpec::new("cotton", [0.008, 0.008], [9, 9], [0.0005, 0.00045, 0.0005]);
    b.add_woven_patch(&upper).unwrap();
    let fabric = b.build().unwrap();
    let mut sim = Simulation::new(
        fabric,
        Vector3::new(0.0, -9.81, 0.0),
        base.settings.clone(),
        vec![],
    );
    sim.assembler.contact.colliders = base.assembler.contact.colliders;
    with_self_collision(&mut sim.assembler, 0.3e-3, 5.0, 2);
    sim
}

/// [`patch`] with mass-proportional drag (20 1/s) and three attachment
/// springs (30, 30 and 90 N/m) holding nodes 40, 44 and 50 1 mm above
/// their start.
pub fn patch_with_drag_and_attachments() -> Simulation {
    let mut sim = patch();
    sim.assembler.drag = 20.0;
    for (n, k) in [(40, 30.0), (44, 30.0), (50, 90.0)] {
        let x = sim.assembler.fabric.initial.node_q(n);
        sim.assembler.attachments.push(weft_solver::Attachment {
            node: n,
            point: Vector3::new(x[0], x[1] + 1e-3, x[2]),
            stiffness: k,
        });
    }
    sim
}

/// [`scene`] rebuilt with three seam ties between its two patches (two
/// sharing the target nodes 45, 46; tie stiffness 50 N/m, damping
/// 0.01 N·s/m), its colliders and time kept.
pub fn tie_scene() -> Assembler {
    let mut base = scene();
    let ties = vec![
        weft_solver::Tie {
            node: 0,
            other: [45, 46],
            t: 0.3,
        },
        weft_solver::Tie {
            node: 5,
            other: [45, 46],
            t: 0.7,
        },
        weft_solver::Tie {
            node: 60,
            other: [2, 3],
            t: 0.5,
        },
    ];
    let mut a = Assembler::with_ties(base.fabric.clone(), base.gravity, ties);
    a.contact.colliders = std::mem::take(&mut base.contact.colliders);
    a.time = base.time;
    a.tie_stiffness = 50.0;
    a.tie_damping = 0.01;
    a
}

/// [`patch`] with two seam ties pulling corner-row nodes 8 and 17 to points
/// between nearby nodes (tie stiffness 20 N/m, damping 1e-3 N·s/m).
pub fn patch_with_ties() -> Simulation {
    let base = patch();
    let ties = vec![
        weft_solver::Tie {
            node: 8,
            other: [16, 25],
            t: 0.5,
        },
        weft_solver::Tie {
            node: 17,
            other: [25, 34],
            t: 0.25,
        },
    ];
    let mut sim = Simulation::with_ties(
        base.assembler.fabric.clone(),
        Vector3::new(0.0, -9.81, 0.0),
        base.settings.clone(),
        vec![],
        ties,
    );
    sim.assembler.contact.colliders = base.assembler.contact.colliders;
    sim.assembler.tie_stiffness = 20.0;
    sim.assembler.tie_damping = 1e-3;
    sim
}

/// The SBO18 Fig. 3 hanging patch (`weft_shell::implicit::fig3_patch`) at
/// 9 x 9 vertices with strain-rate membrane damping, released at rest: a
/// triangle-mesh cloth (StVK triangles, discrete-shell hinges) on the
/// device step.
pub fn shell_patch() -> Simulation {
    use weft_shell::implicit::{Fig3Motion, fig3_patch};
    let fabric = fig3_patch(
        Fig3Motion::Hanging,
        9,
        weft_shell::MembraneDamping::StrainRate { beta: 0.01 },
    )
    .unwrap();
    let settings = Settings {
        dt: 1e-3,
        dt_max: 1e-3,
        linear_solver: LinearSolver::BlockJacobi,
        ..Default::default()
    };
    Simulation::new(
        fabric,
        nalgebra::Vector3::new(0.0, -9.81, 0.0),
        settings,
        Vec::new(),
    )
}

/// Triangle-mesh cloth landing on itself: a 7 x 7 sheet (6 cm, turned by
/// 0.3 rad) 2.2 mm above a held 9 x 9 sheet (8 cm), moving down at 0.3 m/s,
/// with vertex–face and edge–edge repulsion under the cubic law (`d0`
/// 2 mm, 100 N/m, a triangle's one-ring excluded), as the `shell` drape
/// sets it up.
pub fn stacked_sheets() -> Simulation {
    stacked_sheets_with(0.0022, 0.0, 0.3)
}

/// [`stacked_sheets`] thrown: the free sheet's low edge 4.5 mm above the
/// held sheet, its far edge raised by a slope of 0.3, moving down at 5 m/s,
/// so that a 1 ms step takes its low edge through the held sheet before
/// the pairs (found within 4 mm at the step's start) meet it.
pub fn thrown_sheets() -> Simulation {
    stacked_sheets_with(0.0045, 0.3, 5.0)
}

/// [`stacked_sheets`] with the free sheet's corner `height` (m) above the
/// held sheet, its first axis raised by the slope `tilt`, moving down at
/// `speed` (m/s).
fn stacked_sheets_with(height: f64, tilt: f64, speed: f64) -> Simulation {
    use weft_shell::ClothMesh;
    use weft_solver::collide::{Exclusion, NodeGraph, RepulsionLaw, SelfCollision};
    let v3 = nalgebra::Vector3::new;
    let below = ClothMesh::rectangle(
        [0.08, 0.08],
        [9, 9],
        v3(0.0, 0.0, 0.0),
        v3(1.0, 0.0, 0.0),
        v3(0.0, 0.0, 1.0),
    )
    .unwrap();
    let (sn, cs) = 0.3f64.sin_cos();
    let above = ClothMesh::rectangle(
        [0.06, 0.06],
        [7, 7],
        v3(0.013, height, 0.007),
        v3(cs, tilt, sn).normalize(),
        v3(-sn, 0.0, cs),
    )
    .unwrap();
    let n0 = below.vertex_count();
    let mesh = below.join(&above);
    let held: Vec<usize> = (0..n0).collect();
    let material =
        weft_shell::implicit::fig3_material(weft_shell::MembraneDamping::StrainRate { beta: 0.01 });
    let mut fabric = weft_shell::shell_fabric(&mesh, &material, &held).unwrap();
    for x in &mut fabric.initial.x_dot[n0..] {
        x.y = -speed;
    }
    let settings = Settings {
        dt: 1e-3,
        dt_max: 1e-3,
        linear_solver: LinearSolver::BlockJacobi,
        ..Default::default()
    };
    let mut sim = Simulation::new(fabric, v3(0.0, -9.81, 0.0), settings, Vec::new());
    let edges: Vec<[usize; 2]> = mesh
        .edges()
        .iter()
        .map(|e| [e[0] as usize, e[1] as usize])
        .collect();
    let graph = NodeGraph::from_edges(mesh.vertex_count(), &edges).unwrap();
    let faces = mesh
        .triangles()
        .iter()
        .map(|t| t.map(|v| v as usize))
        .collect();
    let d0 = 0.002;
    let detector = SelfCollision::new(edges, Exclusion::new(&graph, 1), 2.0 * d0)
        .unwrap()
        .with_faces(faces)
        .unwrap();
    sim.assembler.contact.self_collision = Some(weft_solver::assembly::SelfContact::new(
        detector,
        d0,
        100.0,
        RepulsionLaw::Cubic,
    ));
    sim
}
