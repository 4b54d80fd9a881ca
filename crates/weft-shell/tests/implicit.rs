//! Implicit triangle-mesh cloth (`weft_shell::implicit`) on weft's solver:
//! the assembled Newton matrix against finite differences of the residual,
//! the hinge layout, free fall, SBO18 Fig. 3 (left), a cantilever strip
//! against the beam's closed form, and a sheet landing on another (vertex–
//! face self-collision).

mod common;

use nalgebra::{DVector, Vector3};
use weft_shell::{ClothMesh, Fig3Motion, MembraneDamping, ShellMaterial, implicit, shell_fabric};
use weft_solver::{Assembler, LinearSolver, Settings, Simulation};

const G: Vector3<f64> = Vector3::new(0.0, -9.81, 0.0);

/// A square patch of side `side` (m) with `n x n` vertices, spanned by
/// `axis_u` and `axis_v` from the origin.
fn patch(side: f64, n: usize, axis_v: Vector3<f64>) -> ClothMesh {
    ClothMesh::rectangle([side, side], [n, n], Vector3::zeros(), Vector3::x(), axis_v).unwrap()
}

fn material(damping: MembraneDamping) -> ShellMaterial {
    implicit::fig3_material(damping)
}

fn settings(dt: f64) -> Settings {
    Settings {
        dt,
        adaptive: false,
        linear_solver: LinearSolver::Auto,
        ..Settings::default()
    }
}

/// `xorshift` noise in [-1, 1].
fn rng(seed: u64) -> impl FnMut() -> f64 {
    weft_potentials::testing::xorshift(seed)
}

/// On a crumpled 4 x 4 patch with every element active (isotropic membrane
/// with strain-rate or Rayleigh damping, the orthotropic woven membrane
/// with strain-rate damping, one β or one per mode, hinges with bending
/// damping, point
/// masses, gravity) the assembled matrix is the derivative of the residual
/// at `v = 0` (exact Hessians), checked by central differences in random
/// directions: relative error < 1e-6.
#[test]
fn matrix_is_derivative_of_residual() {
    for (damping, shear) in [
        (MembraneDamping::StrainRate { beta: 0.01 }, None),
        (MembraneDamping::Rayleigh { beta: 0.01 }, None),
        (MembraneDamping::StrainRate { beta: 0.01 }, Some(0.5)),
        (
            MembraneDamping::StrainRateModes {
                stretch: 0.01,
                shear: 0.1,
            },
            Some(0.5),
        ),
    ] {
        let mut m = material(damping);
        m.bending_damping = 0.05;
        m.shear_modulus = shear;
        let fabric = shell_fabric(&patch(0.03, 4, Vector3::z()), &m, &[]).unwrap();
        assert_eq!(fabric.elements.triangles.len(), 18);
        let mut asm = Assembler::new(fabric, G);
        asm.exact_hessians = true;
        let n = asm.dofs();
        let mut r = rng(5);
        let mut q_n = vec![0.0; n];
        for (i, x) in asm.fabric.initial.x.iter().enumerate() {
            for c in 0..3 {
                q_n[5 * i + c] = x[c] + 3e-3 * r();
            }
        }
        let v_n: Vec<f64> = (0..n)
            .map(|i| if i % 5 < 3 { 0.1 * r() } else { 0.0 })
            .collect();
        let h = 1e-3;
        let v0 = vec![0.0; n];
        let mut res = vec![0.0; n];
        asm.assemble(&q_n, &v_n, &v0, h, &[], &mut res, true);
        let a = asm.matrix.to_dense();
        assert!((&a - a.transpose()).norm() <= 1e-10 * a.norm());
        for trial in 0..5 {
            let dir: Vec<f64> = (0..n).map(|i| if i % 5 < 3 { r() } else { 0.0 }).collect();
            let eps = 1e-7;
            let (mut plus, mut minus) = (vec![0.0; n], vec![0.0; n]);
            let vp: Vec<f64> = dir.iter().map(|d| eps * d).collect();
            let vm: Vec<f64> = dir.iter().map(|d| -eps * d).collect();
            asm.assemble(&q_n, &v_n, &vp, h, &[], &mut plus, false);
            asm.assemble(&q_n, &v_n, &vm, h, &[], &mut minus, false);
            let fd = (DVector::from_vec(plus) - DVector::from_vec(minus)) / (2.0 * eps);
            let ad = &a * DVector::from_vec(dir);
            let err = (&fd - &ad).norm() / ad.norm();
            assert!(
                err < 1e-6,
                "{damping:?}, trial {trial}: relative error {err}"
            );
        }
        // The default (projected) matrix is SPD on the free DOFs.
        asm.exact_hessians = false;
        asm.assemble(&q_n, &v_n, &v0, h, &[], &mut res, true);
        let ap = asm.matrix.to_dense();
        let free: Vec<usize> = (0..n).filter(|i| i % 5 < 3).collect();
        let sub = nalgebra::DMatrix::from_fn(free.len(), free.len(), |i, j| ap[(free[i], free[j])]);
        assert!(sub.symmetric_eigenvalues().min() > 0.0);
    }
}

/// Cotton as the woven membrane of its KES-F values
/// (`ShellMaterial::from_properties`: orthotropic, warp and weft along the
/// rest frame's axes): a flat patch stretched by 1 % along either axis
/// stores `A ½ E t E₀₀²`, and sheared by a small angle `γ` stores
/// `A (½ E t E₁₁² + 2 G E₀₁²)` (`E₀₁ = γ/2`, `E₁₁ = γ²/2`), i.e. about
/// `A ½ G γ²`: about 150 times less than an isotropic membrane of the same
/// `E t` (`μ = E t / 2` at `ν = 0`), which cannot wrap a body.
#[test]
fn woven_membrane_is_soft_in_shear() {
    let p = weft_core::FabricPreset::Cotton.properties();
    let cotton = ShellMaterial::from_properties(&p);
    let side = 0.1;
    let area = side * side;
    let mesh = patch(side, 6, Vector3::y());
    let energy = |m: &ShellMaterial, map: &dyn Fn(Vector3<f64>) -> Vector3<f64>| {
        let fabric = shell_fabric(&mesh, m, &[]).unwrap();
        let mut q = vec![0.0; 5 * fabric.initial.x.len()];
        for (i, x) in fabric.initial.x.iter().enumerate() {
            q[5 * i..5 * i + 3].copy_from_slice(map(*x).as_slice());
        }
        let mut asm = Assembler::new(fabric, Vector3::zeros());
        let (zero, mut res) = (vec![0.0; q.len()], vec![0.0; q.len()]);
        asm.assemble(&q, &zero, &zero, 1e-3, &[], &mut res, false)
            .0
            .elastic
    };
    let s = 1.01;
    let e00 = 0.5 * (s * s - 1.0);
    let stretch = area * 0.5 * p.tensile * e00 * e00;
    for axis in [0, 1] {
        let got = energy(&cotton, &|mut x| {
            x[axis] *= s;
            x
        });
        assert!(
            (got - stretch).abs() < 1e-9 * stretch,
            "axis {axis}: {got} vs {stretch}"
        );
    }
    // Small enough that the fibre stretch of simple shear (`E₁₁`) adds
    // under 1 %: `E t γ² / (4 G)` = 0.25 %.
    let g = 0.005;
    let shear = |x: Vector3<f64>| Vector3::new(x[0] + g * x[1], x[1], x[2]);
    let (e11, e01) = (0.5 * g * g, 0.5 * g);
    let expected = area * (0.5 * p.tensile * e11 * e11 + 2.0 * p.shear * e01 * e01);
    let got = energy(&cotton, &shear);
    assert!(
        (got - expected).abs() < 1e-9 * expected,
        "{got} vs {expected}"
    );
    assert!((got / (area * 0.5 * p.shear * g * g) - 1.0).abs() < 0.01);
    let isotropic = ShellMaterial {
        shear_modulus: None,
        ..cotton
    };
    let ratio = energy(&isotropic, &shear) / got;
    assert!(ratio > 100.0, "isotropic over woven shear energy {ratio}");
}

/// A rectangle of `nu x nv` vertices has one hinge per interior edge:
/// `3 (nu-1)(nv-1) + (nu-1) + (nv-1) - 2 (nu-1) - 2 (nv-1)`, each with its
/// two triangles counter-clockwise in the rest frame (flat rest angle 0).
#[test]
fn every_interior_edge_is_a_hinge() {
    let mesh = ClothMesh::rectangle(
        [0.05, 0.03],
        [6, 4],
        Vector3::zeros(),
        Vector3::x(),
        Vector3::y(),
    )
    .unwrap();
    let (nu, nv) = (6usize, 4usize);
    let edges = (nu - 1) * nv + nu * (nv - 1) + (nu - 1) * (nv - 1);
    let boundary = 2 * (nu - 1) + 2 * (nv - 1);
    let hinges = implicit::hinges(&mesh);
    assert_eq!(hinges.len(), edges - boundary);
    let rest = mesh.rest();
    let cross = |a: usize, b: usize, c: usize| {
        let (p, q, r) = (rest[a], rest[b], rest[c]);
        (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    };
    for [a, b, c, d] in hinges {
        assert!(cross(a, b, c) > 0.0 && cross(b, a, d) > 0.0);
    }
}

/// An unpinned patch falls as a rigid body: backward Euler's exact
/// discrete free fall `y_n = -g h² n(n+1)/2` for every vertex, with no
/// strain (to 1e-9 m).
#[test]
fn free_fall_is_rigid() {
    let fabric = shell_fabric(
        &patch(0.1, 5, Vector3::z()),
        &material(MembraneDamping::StrainRate { beta: 0.1 }),
        &[],
    )
    .unwrap();
    let y0: Vec<f64> = fabric.initial.x.iter().map(|x| x.y).collect();
    let h = 0.01;
    let mut sim = Simulation::new(fabric, G, settings(h), Vec::new());
    let steps = 20;
    for _ in 0..steps {
        sim.try_step(h).unwrap();
    }
    let expect = -9.81 * h * h * (steps * (steps + 1)) as f64 / 2.0;
    for (x, y0) in sim.state().x.iter().zip(y0) {
        assert!((x.y - y0 - expect).abs() < 1e-9, "{} vs {expect}", x.y - y0);
    }
}

/// SBO18 Fig. 3 (left) in our reading ([`implicit::fig3_patch`]): the StVK
/// square patch pinned along its top edge, damped in the membrane only
/// with none, Rayleigh `β = 0.15 s`, and strain-rate damping tuned to it by
/// [SBO18 eq. 12] (`λ_d = β λ`, `μ_d = β μ`). CI runs 13 x 13 vertices;
/// the paper's 33 x 33 (1,089) runs as the `sbo18_fig3` example.
///
/// - Hanging (0.15 s, 1 ms steps): strain-rate and Rayleigh damping both
///   overdamp the stretch oscillation, alike: their kinetic energies
///   integrated over the run are within 15 % of each other and below half
///   of the undamped run's (measured: 4.27e-9 and 4.27e-9
///   against 6.97e-7 J·s).
/// - Swinging (1 s, 4 ms steps): strain-rate damping leaves the swing, a
///   rigid rotation of the stressed membrane, nearly alone: the first
///   half's kinetic-energy peak within 10 % of the undamped run's, and the
///   share of the run's integrated kinetic energy in its second half at
///   least 90 % of the undamped run's (measured: 0.715 against 0.730).
///   That Rayleigh damping damps the swing, SBO18's other half of the
///   claim, is not asserted: it does not show at 13 x 13 (0.752, 84 s of
///   CPU); the example at 33 x 33 shows it (0.538 against 0.723 undamped
///   and 0.731 strain-rate).
#[test]
fn sbo18_fig3_strain_rate_damps_hanging_like_rayleigh_but_leaves_swinging() {
    let n = 13;
    let run = |motion, d, dt, t_end| {
        let fabric = implicit::fig3_patch(motion, n, d).unwrap();
        implicit::kinetic_energy_history(fabric, dt, t_end).unwrap()
    };
    let hanging: Vec<f64> = [
        MembraneDamping::None,
        MembraneDamping::Rayleigh { beta: 0.15 },
        MembraneDamping::StrainRate { beta: 0.15 },
    ]
    .iter()
    .map(|&d| run(Fig3Motion::Hanging, d, 1e-3, 0.15).iter().sum::<f64>() * 1e-3)
    .collect();
    eprintln!("hanging ∫KE dt (J·s): none / Rayleigh / strain-rate {hanging:?}");
    let (none, rayleigh, strain_rate) = (hanging[0], hanging[1], hanging[2]);
    assert!((strain_rate - rayleigh).abs() < 0.15 * rayleigh);
    assert!(rayleigh < 0.5 * none && strain_rate < 0.5 * none);

    let swing = |d| {
        let ke = run(Fig3Motion::Swinging, d, 4e-3, 1.0);
        let half = ke.len() / 2;
        let peak = ke[..half].iter().cloned().fold(0.0, f64::max);
        let share = ke[half..].iter().sum::<f64>() / ke[..half].iter().sum::<f64>();
        (peak, share)
    };
    let (none, strain_rate) = (
        swing(MembraneDamping::None),
        swing(MembraneDamping::StrainRate { beta: 0.15 }),
    );
    eprintln!(
        "swinging (first-half KE peak J, second/first half ∫KE): none {none:?}, strain-rate {strain_rate:?}"
    );
    assert!((strain_rate.0 - none.0).abs() < 0.1 * none.0);
    assert!(strain_rate.1 >= 0.9 * none.1);
}

/// Discrete-shell bending against the beam closed form: a strip 45 mm x
/// 6 mm (31 x 5 vertices, square cells), clamped by its first two columns
/// of vertices, sags under its weight like the cantilever
/// `δ = q ℓ⁴ / (8 EI)` (`q = ρ_A g w`, `ℓ` the free length), with the
/// mesh's bending rigidity between two bounds. Bent to a cylinder about
/// the grid's axis, the hinge energy is three times the plate's
/// (`weft_potentials::hinge`; 2.9x on this mesh), so `EI = 3 B w` is the
/// stiff bound. The strip is softer than that: its static shape is not a
/// cylinder, part of the curvature goes into folds along the cells'
/// diagonals (16 % of the hinge energy here; 46 % on a 61 x 3 mesh of
/// 4:1 cells, which sags 1.9x the stiff bound). Measured: 2.84 mm against
/// 2.20 mm, 1.29x. Asserted: between 1.0x and 1.5x. The discrete shell's
/// bending is mesh-dependent; calibrating it per mesh is not done.
/// The static state is reached by backward Euler with 20 ms steps and
/// bending damping.
#[test]
fn cantilever_strip_sags_like_the_beam() {
    let (length, width, nu, nv) = (0.045, 0.006, 31, 5);
    let mesh = ClothMesh::rectangle(
        [length, width],
        [nu, nv],
        Vector3::zeros(),
        Vector3::x(),
        Vector3::z(),
    )
    .unwrap();
    let m = ShellMaterial {
        areal_density: 0.15,
        stretch_modulus: 1e3,
        poisson_ratio: 0.0,
        shear_modulus: None,
        bending_rigidity: 1e-4,
        membrane_damping: MembraneDamping::StrainRate { beta: 0.01 },
        bending_damping: 0.05,
    };
    let clamp: Vec<usize> = (0..nv).flat_map(|j| [j * nu, j * nu + 1]).collect();
    let fabric = shell_fabric(&mesh, &m, &clamp).unwrap();
    let h = 0.02;
    let adaptive = Settings {
        dt_max: h,
        ..settings(h)
    };
    let mut sim = Simulation::new(
        fabric,
        G,
        Settings {
            adaptive: true,
            ..adaptive
        },
        Vec::new(),
    );
    sim.advance_to(3.0, |_, _| {}).unwrap();
    let state = sim.state();
    let tip = (0..nv).map(|j| state.x[j * nu + nu - 1].y).sum::<f64>() / nv as f64;
    let speed = state.x_dot.iter().map(|v| v.norm()).fold(0.0, f64::max);
    let free_length = length * (nu - 2) as f64 / (nu - 1) as f64;
    let q = m.areal_density * 9.81 * width;
    let expect = q * free_length.powi(4) / (8.0 * 3.0 * m.bending_rigidity * width);
    eprintln!(
        "tip deflection {:.4} mm, beam {:.4} mm, speed {speed:e} m/s",
        -tip * 1e3,
        expect * 1e3
    );
    assert!(speed < 1e-5);
    assert!(
        expect / free_length > 0.03,
        "a small but visible deflection"
    );
    assert!(-tip > expect && -tip < 1.5 * expect);
}

/// A woven membrane's shear stiffness must be finite and positive; the
/// error names the field. `None` (isotropic) is valid.
#[test]
fn bad_shear_modulus_is_refused() {
    let ok = ShellMaterial::default();
    assert!(ok.validate().is_ok());
    assert!(
        ShellMaterial {
            shear_modulus: None,
            ..ok
        }
        .validate()
        .is_ok()
    );
    for g in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let err = ShellMaterial {
            shear_modulus: Some(g),
            ..ok
        }
        .validate()
        .unwrap_err();
        assert!(
            matches!(
                err,
                weft_shell::ShellError::InvalidOption {
                    name: "shear_modulus",
                    ..
                }
            ),
            "{g}: {err}"
        );
    }
}

/// Per-mode strain-rate damping of the woven membrane
/// ([`MembraneDamping::StrainRateModes`]): at rest, a uniform stretch rate
/// `ε̇` along either yarn dissipates `A β_s E t ε̇²` and a simple shear
/// rate `γ̇` dissipates `A β_shear G γ̇²` (`W = A (½ β_s E t Ė₀₀² +
/// 2 β_shear G Ė₀₁²)`, power `2W`, `Ė₀₁ = γ̇/2`) [SBO18 eq. 12, 15]; one
/// `β` (`StrainRate`) damps shear with `β_s` instead.
#[test]
fn per_mode_damping_damps_shear_with_its_own_beta() {
    let p = weft_core::FabricPreset::Cotton.properties();
    let (beta_s, beta_shear) = (2e-3, 2e-2);
    let side = 0.1;
    let area = side * side;
    let mesh = patch(side, 6, Vector3::y());
    let power = |damping: MembraneDamping, rate: &dyn Fn(Vector3<f64>) -> Vector3<f64>| {
        let m = ShellMaterial {
            membrane_damping: damping,
            ..ShellMaterial::from_properties(&p)
        };
        let fabric = shell_fabric(&mesh, &m, &[]).unwrap();
        let n = 5 * fabric.initial.x.len();
        let (mut q, mut v) = (vec![0.0; n], vec![0.0; n]);
        for (i, x) in fabric.initial.x.iter().enumerate() {
            q[5 * i..5 * i + 3].copy_from_slice(x.as_slice());
            v[5 * i..5 * i + 3].copy_from_slice(rate(*x).as_slice());
        }
        let mut asm = Assembler::new(fabric, Vector3::zeros());
        let mut res = vec![0.0; n];
        // A step of 1 ns: the state stays at rest to 1e-9.
        asm.assemble(&q, &v, &v, 1e-9, &[], &mut res, false)
            .0
            .dissipation_power
    };
    let modes = MembraneDamping::StrainRateModes {
        stretch: beta_s,
        shear: beta_shear,
    };
    let one = MembraneDamping::StrainRate { beta: beta_s };
    let eps_rate = 0.3;
    for axis in [0, 1] {
        let stretch = |x: Vector3<f64>| {
            let mut r = Vector3::zeros();
            r[axis] = eps_rate * x[axis];
            r
        };
        let expected = area * beta_s * p.tensile * eps_rate * eps_rate;
        for d in [modes, one] {
            let got = power(d, &stretch);
            assert!(
                (got - expected).abs() < 1e-6 * expected,
                "{d:?}, axis {axis}: {got} vs {expected} W"
            );
        }
    }
    let gamma_rate = 0.3;
    let shear = |x: Vector3<f64>| Vector3::new(gamma_rate * x[1], 0.0, 0.0);
    let expected = area * beta_shear * p.shear * gamma_rate * gamma_rate;
    let got = power(modes, &shear);
    assert!(
        (got - expected).abs() < 1e-6 * expected,
        "{got} vs {expected} W"
    );
    let ratio = got / power(one, &shear);
    assert!((ratio - 10.0).abs() < 1e-6, "per-mode over one β: {ratio}");
}

/// Per-mode damping wants both `β` positive (or both 0, none): one of them
/// 0 would make `C_d` singular, and the error names the field.
#[test]
fn per_mode_damping_is_validated() {
    let with = |stretch: f64, shear: f64| ShellMaterial {
        membrane_damping: MembraneDamping::StrainRateModes { stretch, shear },
        ..ShellMaterial::default()
    };
    assert!(with(2e-3, 2e-2).validate().is_ok());
    assert!(with(0.0, 0.0).validate().is_ok());
    for (stretch, shear, field) in [
        (0.0, 2e-2, "membrane_damping"),
        (2e-3, 0.0, "membrane_damping"),
        (-1.0, -1.0, "membrane_damping.stretch"),
        (2e-3, f64::NAN, "membrane_damping.shear"),
    ] {
        match with(stretch, shear).validate() {
            Err(weft_shell::ShellError::InvalidOption { name, .. }) => {
                assert_eq!(name, field, "{stretch}, {shear}")
            }
            other => panic!("{stretch}, {shear}: {other:?}"),
        }
    }
}

/// Segment contact on a triangle mesh (`ContactModel::segments`): the
/// contact edges are the triangles' edges, each once (a 2 x 2 patch: four
/// sides and one diagonal), and a 0.1 m square of two triangles dropped
/// flat and centred over a sphere of radius 5 mm, every vertex 71 mm from
/// the sphere's axis, is caught by its diagonal's midpoint: it rests on
/// the pole at the contact distance `R + δ` = 5.5 mm (the shell's nodes
/// have no yarn radius), where node contact alone lets it fall past.
#[test]
fn a_coarse_square_rests_on_a_thin_sphere_by_its_edges() {
    let mesh = common::square_over_thin_sphere();
    let fabric = shell_fabric(
        &mesh,
        &material(MembraneDamping::StrainRate { beta: 0.01 }),
        &[],
    )
    .unwrap();
    let mut edges: Vec<[usize; 2]> = Assembler::new(fabric.clone(), G)
        .contact_edges()
        .iter()
        .map(|&[a, b]| [a.min(b), a.max(b)])
        .collect();
    edges.sort();
    // Vertices 0 (-x,-z), 1 (+x,-z), 2 (-x,+z), 3 (+x,+z); diagonal 0-3.
    assert_eq!(edges, vec![[0, 1], [0, 2], [0, 3], [1, 3], [2, 3]]);
    let drop = |segments: bool| {
        let s = Settings {
            dt: 1e-3,
            dt_max: 2e-3,
            ..Settings::default()
        };
        let mut sim = Simulation::new(fabric.clone(), G, s, Vec::new());
        sim.assembler.contact.colliders = vec![(common::thin_sphere(50.0, 0.0), 0.0005)];
        sim.assembler.contact.segments = segments;
        sim.advance_to(0.15, |_, _| {}).unwrap();
        let x = sim.state().x;
        0.5 * (x[0].y + x[3].y)
    };
    let through = drop(false);
    let caught = drop(true);
    eprintln!("diagonal midpoint after 0.15 s: nodes only {through} m, with edges {caught} m");
    assert!(
        through < -0.05,
        "node contact alone: midpoint at {through} m"
    );
    assert!(
        (caught - 0.0055).abs() < 0.001,
        "midpoint {caught} m, expected about 5.5 mm"
    );
}

/// The sheets of `common::stacked_sheets` and their fabric (strain-rate
/// damping, the held sheet's vertices fixed).
fn stacked_sheets(tilt: f64) -> (ClothMesh, usize, weft_core::Fabric) {
    let (mesh, n0) = common::stacked_sheets(tilt);
    let held: Vec<usize> = (0..n0).collect();
    let fabric = shell_fabric(
        &mesh,
        &material(MembraneDamping::StrainRate { beta: 0.01 }),
        &held,
    )
    .unwrap();
    (mesh, n0, fabric)
}

/// Vertex–face and edge–edge self-collision of `mesh` within `d0` (m)
/// (`common::sheet_self_collision`, pairs searched within `2 d0`),
/// stiffness `k` (N/m), the cubic law.
fn sheet_self_contact(mesh: &ClothMesh, d0: f64, k: f64) -> weft_solver::assembly::SelfContact {
    use weft_solver::collide::RepulsionLaw;
    let detector = common::sheet_self_collision(mesh, 2.0 * d0);
    weft_solver::assembly::SelfContact::new(detector, d0, k, RepulsionLaw::Cubic)
}

/// The sheets of `stacked_sheets`: the upper one dropped onto the held one.
/// Without self-collision it falls through (below the held sheet after
/// 0.3 s); with vertex–face and edge–edge repulsion
/// (`SelfCollision::with_faces`, `d0` = 2 mm) it comes to rest on it, every
/// vertex between 0.5 `d0` and 1.5 `d0` above, in under 2,000 Newton
/// iterations (the C² cubic law, `RepulsionLaw::Cubic`).
#[test]
fn a_sheet_lands_on_another_with_vertex_face_repulsion() {
    let (mesh, n0, fabric) = stacked_sheets(0.0);
    let d0 = 0.002;
    let drop = |repel: bool| {
        let s = Settings {
            dt: 1e-3,
            dt_max: 2e-3,
            ..Settings::default()
        };
        let mut sim = Simulation::new(fabric.clone(), G, s, Vec::new());
        if repel {
            sim.assembler.contact.self_collision = Some(sheet_self_contact(&mesh, d0, 100.0));
        }
        let st = sim.advance_to(0.3, |_, _| {}).unwrap();
        let x = sim.state().x;
        let ys: Vec<f64> = x[n0..].iter().map(|p| p.y).collect();
        (
            ys.iter().copied().fold(f64::INFINITY, f64::min),
            ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            st.len(),
            st.iter().map(|s| s.newton_iterations).sum::<usize>(),
        )
    };
    let (through, ..) = drop(false);
    let (lo, hi, steps, newton) = drop(true);
    eprintln!(
        "upper sheet after 0.3 s: alone lowest {through} m; repelled {lo}..{hi} m ({steps} steps, {newton} Newton iterations)"
    );
    // The cubic law keeps Newton away from the quadratic law's stiffness
    // jump at d0 (measured 154 steps, 863 iterations; 389 and 4,151 with
    // the quadratic law).
    assert!(newton < 2000, "{newton} Newton iterations in {steps} steps");
    assert!(
        through < -0.01,
        "without self-collision: lowest at {through} m"
    );
    assert!(
        lo > 0.5 * d0 && hi < 1.5 * d0,
        "with self-collision: {lo}..{hi} m, expected within [{}, {}]",
        0.5 * d0,
        1.5 * d0
    );
}

/// The sheets of `stacked_sheets`, the upper one tilted (slope 0.3, its
/// far edge 2.4 cm higher) and thrown down at 3 m/s with steps of 4 ms
/// (12 mm a step, more than the 4 mm within which the pairs are found once
/// per step): the repulsion never meets its low edge, which passes through
/// the held sheet, and the rest follows, unless steps that make a mesh
/// edge pass through a face are rejected
/// (`Settings::layer_crossing_dt_min`, on by default): then it comes to
/// rest on the held sheet, every vertex over it within 0.5 to 1.5 `d0`
/// above it (none higher), after a few `layer_crossing` rejections.
#[test]
fn a_thrown_sheet_does_not_tunnel_through_another() {
    let (mesh, n0, fabric) = stacked_sheets(0.3);
    let d0 = 0.002;
    let throw = |check: bool| {
        let s = Settings {
            dt: 4e-3,
            dt_max: 4e-3,
            layer_crossing_dt_min: if check { 1e-5 } else { f64::INFINITY },
            ..Settings::default()
        };
        let mut sim = Simulation::new(fabric.clone(), G, s, Vec::new());
        sim.assembler.contact.self_collision = Some(sheet_self_contact(&mesh, d0, 100.0));
        for i in n0..mesh.vertex_count() {
            sim.v[5 * i + 1] = -3.0;
        }
        sim.advance_to(0.3, |_, _| {}).unwrap();
        let x = sim.state().x;
        // Heights of the vertices over the held sheet ([0, 0.1] m in x
        // and z; a corner of the turned sheet overhangs its edge).
        let over = |p: &&Vector3<f64>| (0.0..=0.1).contains(&p.x) && (0.0..=0.1).contains(&p.z);
        let ys: Vec<f64> = x[n0..].iter().filter(over).map(|p| p.y).collect();
        let top = x[n0..]
            .iter()
            .map(|p| p.y)
            .fold(f64::NEG_INFINITY, f64::max);
        (
            ys.iter().copied().fold(f64::INFINITY, f64::min),
            top,
            sim.rejections.get("layer_crossing").copied().unwrap_or(0),
        )
    };
    let (through, _, unchecked) = throw(false);
    let (lo, hi, rejected) = throw(true);
    eprintln!(
        "thrown sheet after 0.3 s: unchecked lowest {through} m; checked {lo}..{hi} m after {rejected} layer-crossing rejections"
    );
    assert_eq!(unchecked, 0);
    // Measured: lowest -15.9 mm (-1.33 m when a vertex pressed past a face
    // was pushed on through it, before pairs kept their side).
    assert!(through < -2.0 * d0, "unchecked: lowest at {through} m");
    assert!(rejected > 0);
    assert!(
        lo > 0.5 * d0 && hi < 1.5 * d0,
        "checked: {lo}..{hi} m, expected within [{}, {}]",
        0.5 * d0,
        1.5 * d0
    );
}

/// The sheets of `stacked_sheets` (parallel), the upper one moved down to
/// `d0` = 2 mm above the held one and thrown at it at 1 and 2 m/s (1 to 2
/// `d0` per 2 ms step), the layer-crossing check off. Each vertex–face
/// pair keeps, within a step, the side it was found on at the step's start
/// (`weft_solver::collide::face_repulsion`'s signed distance): a vertex
/// driven past the face meets a force that grows on, and the sheet stays
/// above the held one (lowest vertex over it at 0.05 s: 1.86 and 1.92 mm).
/// Along the unsigned distance the push flips once a vertex is past the
/// face, and the sheet went through (measured: lowest -0.084 and -0.111 m).
#[test]
fn a_sheet_thrown_from_within_d0_stays_on_its_side() {
    let d0 = 0.002;
    let (mesh, n0, fabric) = stacked_sheets(0.0);
    for v0 in [-1.0, -2.0] {
        let s = Settings {
            dt: 2e-3,
            dt_max: 2e-3,
            layer_crossing_dt_min: f64::INFINITY,
            ..Settings::default()
        };
        let mut sim = Simulation::new(fabric.clone(), G, s, Vec::new());
        sim.assembler.contact.self_collision = Some(sheet_self_contact(&mesh, d0, 100.0));
        for i in n0..mesh.vertex_count() {
            sim.v[5 * i + 1] = v0;
            sim.q[5 * i + 1] += d0 - 0.02;
        }
        sim.advance_to(0.05, |_, _| {}).unwrap();
        let x = sim.state().x;
        let over = |p: &&Vector3<f64>| (0.0..=0.1).contains(&p.x) && (0.0..=0.1).contains(&p.z);
        let lo = x[n0..]
            .iter()
            .filter(over)
            .map(|p| p.y)
            .fold(f64::INFINITY, f64::min);
        eprintln!("sheet thrown at {v0} m/s from d0 above: lowest {lo} m after 0.05 s");
        assert!(
            lo > 0.5 * d0,
            "thrown at {v0} m/s: lowest vertex at {lo} m, below 0.5 d0"
        );
    }
}
