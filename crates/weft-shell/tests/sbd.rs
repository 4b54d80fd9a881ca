//! Strain-based dynamics [SBD14] and Kim's LOD bending springs [Kim23]:
//! constraint gradients against finite differences, the projections'
//! conservation laws, the spring structures, and Kim23 Fig. 5 (a patch
//! pinned at two corners at increasing resolution).

mod common;

use approx::assert_relative_eq;
use nalgebra::Vector3;
use weft_potentials::stvk::TriangleRest;
use weft_shell::sbd::{hanging_square, project_spring, project_triangle, strain_constraint};
use weft_shell::springs::LodLevels;
use weft_shell::*;

fn triangle() -> (TriangleRest, [Vector3<f64>; 3]) {
    let r = TriangleRest::new([[0.0, 0.0], [0.012, 0.001], [0.002, 0.011]]).unwrap();
    let x = [
        Vector3::new(0.001, 0.0, 0.0005),
        Vector3::new(0.0135, 0.0012, -0.001),
        Vector3::new(0.0015, 0.0128, 0.0022),
    ];
    (r, x)
}

/// Every constraint's gradient matches central differences of its value.
#[test]
fn constraint_gradients_match_finite_differences() {
    let (r, x) = triangle();
    for which in [
        StrainConstraint::StretchU,
        StrainConstraint::StretchV,
        StrainConstraint::Shear,
        StrainConstraint::ShearUnnormalised,
    ] {
        let (c, grad) = strain_constraint(&r, &x, which).unwrap();
        assert!(c.abs() > 1e-3, "{which:?}: the test state must be strained");
        let h = 1e-8;
        for k in 0..3 {
            for d in 0..3 {
                let (mut xp, mut xm) = (x, x);
                xp[k][d] += h;
                xm[k][d] -= h;
                let fd = (strain_constraint(&r, &xp, which).unwrap().0
                    - strain_constraint(&r, &xm, which).unwrap().0)
                    / (2.0 * h);
                assert!(
                    (fd - grad[k][d]).abs() <= 1e-6 * grad[k].norm().max(1.0),
                    "{which:?} vertex {k} axis {d}: analytic {} vs FD {fd}",
                    grad[k][d]
                );
            }
        }
    }
}

/// With stiffness 1 the stretch projection is exact (`|f_a|` is linear
/// along its gradient), and projections move the centre of mass by
/// nothing: internal constraints conserve linear momentum.
#[test]
fn projections_satisfy_stretch_and_keep_the_centre_of_mass() {
    let (r, mut x) = triangle();
    let w = [1.0 / 0.002, 1.0 / 0.003, 1.0 / 0.0025];
    let centre = |x: &[Vector3<f64>; 3]| (0..3).map(|k| x[k] / w[k]).sum::<Vector3<f64>>();
    let before = centre(&x);
    project_triangle(&r, w, &mut x, 1.0, 0.0, StrainConstraint::Shear);
    let u = strain_constraint(&r, &x, StrainConstraint::StretchU)
        .unwrap()
        .0;
    let v = strain_constraint(&r, &x, StrainConstraint::StretchV)
        .unwrap()
        .0;
    assert!(v.abs() < 1e-12, "the last stretch projected is exact: {v}");
    assert!(
        u.abs() < 0.02,
        "the first one nearly so after the second: {u}"
    );
    let sheared = strain_constraint(&r, &x, StrainConstraint::Shear)
        .unwrap()
        .0;
    project_triangle(&r, w, &mut x, 1.0, 1.0, StrainConstraint::Shear);
    let shear = strain_constraint(&r, &x, StrainConstraint::Shear)
        .unwrap()
        .0;
    // The shear constraint is not linear along its gradient: one
    // projection removes most of it (measured: 0.13 to 0.006).
    assert!(
        shear.abs() < 0.1 * sheared.abs(),
        "shear {sheared} -> {shear}"
    );
    assert!((centre(&x) - before).norm() < 1e-15, "centre of mass moved");
    let mut pair = [Vector3::zeros(), Vector3::new(0.03, 0.0, 0.04)];
    project_spring(&mut pair, [2.0, 1.0], 0.04, 1.0);
    assert_relative_eq!((pair[1] - pair[0]).norm(), 0.04, max_relative = 1e-12);
    assert!((pair[0] / 2.0 + pair[1] / 1.0 - Vector3::new(0.03, 0.0, 0.04)).norm() < 1e-15);
}

/// Without pins the cloth falls freely: substepped symplectic Euler moves
/// the centre of mass by `g h² N(N+1)/2` after `N` substeps of `h`, and the
/// constraints (at rest length) add nothing.
#[test]
fn unpinned_cloth_falls_freely() {
    let mesh = ClothMesh::rectangle(
        [0.3, 0.2],
        [13, 9],
        Vector3::zeros(),
        Vector3::x(),
        Vector3::z(),
    )
    .unwrap();
    let mut s = Sbd::new(&mesh, &[], SbdOptions::default()).unwrap();
    assert!(s.step_velocities().iter().all(|v| v.norm() == 0.0));
    for _ in 0..20 {
        s.step(0.005);
    }
    let n = 100.0;
    let h = 0.001;
    let expected = -9.81 * h * h * n * (n + 1.0) / 2.0;
    for p in s.positions() {
        assert_relative_eq!(p.y, expected, max_relative = 1e-9);
    }
    // Substep k's velocity is -g k h; the last step (substeps 96-100)
    // moves by -g h² (96 + ... + 100) = -g h² 490 in 5 ms.
    let last = -9.81 * n * h;
    let over_step = -9.81 * h * h * 490.0 / 0.005;
    for (v, w) in s.velocities().iter().zip(s.step_velocities()) {
        assert_relative_eq!(v.y, last, max_relative = 1e-9);
        assert_relative_eq!(w.y, over_step, max_relative = 1e-9);
        assert!(w.x.abs() + w.z.abs() < 1e-12);
    }
    let mass: f64 = s.masses().iter().sum();
    assert_relative_eq!(
        s.step_kinetic_energy(),
        0.5 * mass * over_step * over_step,
        max_relative = 1e-9
    );
    assert_relative_eq!(s.time(), 0.1, max_relative = 1e-12);
    let strain = s
        .strains()
        .iter()
        .map(|t| t.principal.abs())
        .fold(0.0, f64::max);
    assert!(strain < 1e-12, "free fall strained the cloth: {strain}");
}

/// The spring structures: crossover springs join the two vertices opposite
/// each interior edge; LOD springs of free vertices reach exactly the
/// `m_l`-ring; the levels follow Kim23 eq. 6-8.
#[test]
fn spring_structures_follow_their_definitions() {
    let quad = ClothMesh::new(
        vec![[0.0, 0.0], [0.01, 0.0], [0.01, 0.01], [0.0, 0.01]],
        vec![
            Vector3::zeros(),
            Vector3::new(0.01, 0.0, 0.0),
            Vector3::new(0.01, 0.01, 0.0),
            Vector3::new(0.0, 0.01, 0.0),
        ],
        vec![[0, 1, 2], [0, 2, 3]],
    )
    .unwrap();
    let (springs, _) = BendingSprings::Crossover.build(&quad, &[false; 4]);
    assert_eq!(springs.len(), 1);
    assert_eq!((springs[0].a, springs[0].b), (1, 3));
    assert_relative_eq!(
        springs[0].rest_length,
        0.01 * 2f64.sqrt(),
        max_relative = 1e-12
    );

    for (n, expected) in [(17usize, (2usize, 5usize)), (129, (4, 9))] {
        let mesh = ClothMesh::rectangle(
            [1.0, 1.0],
            [n, n],
            Vector3::zeros(),
            Vector3::x(),
            Vector3::y(),
        )
        .unwrap();
        // Eq. 6-8 by hand: the grid's edges are (n-1)n horizontal and as many
        // vertical of length e, and (n-1)² diagonals of length e√2.
        let e = 1.0 / (n - 1) as f64;
        let (axis, diag) = (2.0 * ((n - 1) * n) as f64, ((n - 1) * (n - 1)) as f64);
        let e_avg = (axis * e + diag * e * 2f64.sqrt()) / (axis + diag);
        let omega = 2f64.sqrt() / 2.0 * 0.5;
        let m_l = ((omega / e_avg * 0.1 + 1.0).floor() as usize).max(2);
        assert_eq!((m_l, 2 * m_l + 1), expected);
        let levels = LodLevels::of(&mesh, None);
        assert_eq!(
            (levels.loose, levels.tight, levels.target),
            (m_l, 2 * m_l + 1, 2 * m_l + 1)
        );
    }

    let mesh = ClothMesh::rectangle(
        [0.2, 0.2],
        [21, 21],
        Vector3::zeros(),
        Vector3::x(),
        Vector3::y(),
    )
    .unwrap();
    let adjacency = mesh.neighbours();
    let distance = |a: u32, b: u32| {
        let mut rings = weft_shell::mesh::Rings::new(&adjacency);
        let mut d = usize::MAX;
        rings.visit(a, 20, |v, r| {
            if v == b {
                d = r;
            }
        });
        d
    };
    let mut pinned = vec![false; mesh.vertex_count()];
    pinned[0] = true;
    let full = BendingSprings::Lod {
        connection: LodConnection::Full,
        target_level: None,
    };
    let (springs, levels) = full.build(&mesh, &pinned);
    let levels = levels.unwrap();
    let fixed = |v: u32| v == 0 || adjacency[0].contains(&v);
    for s in &springs {
        let d = distance(s.a, s.b);
        if fixed(s.a) || fixed(s.b) {
            assert!(
                (levels.loose..=levels.tight).contains(&d),
                "{s:?} at ring {d}"
            );
        } else {
            assert_eq!(d, levels.loose, "{s:?}");
        }
        assert_relative_eq!(
            s.rest_length,
            mesh.rest_distance(s.a as usize, s.b as usize),
            max_relative = 1e-12
        );
    }
    let lod = BendingSprings::Lod {
        connection: LodConnection::Lod,
        target_level: None,
    };
    let (fewer, _) = lod.build(&mesh, &pinned);
    assert!(fewer.len() < springs.len());
}

/// Options are validated, and JSON options reject unknown keys.
#[test]
fn options_are_checked() {
    let mesh = ClothMesh::rectangle(
        [0.1, 0.1],
        [3, 3],
        Vector3::zeros(),
        Vector3::x(),
        Vector3::y(),
    )
    .unwrap();
    let bad = SbdOptions {
        bending_stiffness: 1.5,
        ..Default::default()
    };
    let err = Sbd::new(&mesh, &[], bad).err().unwrap();
    assert!(err.to_string().contains("bending_stiffness"), "{err}");
    let err = Sbd::new(&mesh, &[9], SbdOptions::default()).err().unwrap();
    assert!(err.to_string().contains("vertex 9"), "{err}");
    let err = serde_json::from_str::<SbdOptions>(r#"{"substeps": 5, "stiffnes": 1}"#).unwrap_err();
    assert!(err.to_string().contains("stiffnes"), "{err}");
    // Every default survives a JSON round trip (no infinities, which JSON
    // writes as null).
    let defaults = SbdOptions::default();
    let back: SbdOptions =
        serde_json::from_str(&serde_json::to_string(&defaults).unwrap()).unwrap();
    assert_eq!(back, defaults);
    let opts: SbdOptions =
        serde_json::from_str(r#"{"bending": {"kind": "crossover"}, "substeps": 10}"#).unwrap();
    assert_eq!(opts.bending, BendingSprings::Crossover);
    assert_eq!(opts.substeps, 10);
    let err = ClothMesh::new(
        vec![[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]],
        vec![Vector3::zeros(); 3],
        vec![[0, 1, 2]],
    )
    .unwrap_err();
    assert!(
        matches!(err, ShellError::DegenerateTriangle { triangle: 0, .. }),
        "{err}"
    );
}

/// Runs Kim23 Fig. 5's set-up: a 1 m square hanging in its plane from its
/// two top corners under gravity, `n x n` vertices, 2 s in steps of 5 ms
/// (5 substeps, 1 iteration, velocity damping 1/s). Returns the largest
/// principal stretch over the run's end state (infinite when non-finite)
/// and the lowest point (m; the cloth's rest bottom is at -1).
fn pinned_corners(n: usize, bending: BendingSprings) -> (f64, f64) {
    let options = SbdOptions {
        bending,
        velocity_damping: 1.0,
        ..Default::default()
    };
    let mut s = hanging_square(n, options).unwrap();
    for _ in 0..400 {
        s.step(0.005);
    }
    let lowest = s
        .positions()
        .iter()
        .map(|p| p.y)
        .fold(f64::INFINITY, f64::min);
    (s.max_principal_stretch(), lowest)
}

/// Kim23 Fig. 5: crossover springs work at low resolution but over-strain
/// and blow up near the pins as the resolution grows; LOD bending springs
/// stay bounded at every resolution. Measured (2-core Xeon, 2026-11-26):
/// crossover 0.017 / 0.15 / >1e9 at 17² / 33² / 65²; LOD 0.0024 / 0.019 /
/// 0.17, lowest point -1.0004 / -1.0024 / -1.0147 m.
#[test]
fn kim23_lod_springs_stay_bounded_where_crossover_springs_blow_up() {
    let lod = BendingSprings::default();
    let (x17, _) = pinned_corners(17, BendingSprings::Crossover);
    let (x33, _) = pinned_corners(33, BendingSprings::Crossover);
    let (x65, _) = pinned_corners(65, BendingSprings::Crossover);
    assert!(x17 < 0.05, "crossover at 17²: {x17}");
    assert!(x33 > 0.08, "crossover at 33² over-strains: {x33}");
    assert!(x65 > 1.0, "crossover at 65² blows up: {x65}");
    let mut last = 0.0;
    for n in [17, 33, 65] {
        let (strain, lowest) = pinned_corners(n, lod);
        assert!(strain < 0.3, "LOD at {n}²: principal stretch {strain}");
        assert!(lowest > -1.03, "LOD at {n}²: lowest point {lowest} m");
        last = strain;
        if n == 33 {
            assert!(x33 > 3.0 * strain, "crossover {x33} vs LOD {strain} at 33²");
        }
    }
    assert!(last.is_finite());
}

/// A square dropped on a sphere (the solver's collider) drapes over it:
/// no vertex ends inside (the collision projection keeps the thickness),
/// the centre rests on the pole, the corners hang below it, and it comes
/// to rest.
#[test]
fn cloth_drapes_over_a_sphere_collider() {
    use weft_solver::collide::{Collider, Sphere};
    let n = 31;
    let mesh = ClothMesh::rectangle(
        [0.6, 0.6],
        [n, n],
        Vector3::new(-0.3, 0.25, -0.3),
        Vector3::x(),
        Vector3::z(),
    )
    .unwrap();
    let sphere = Collider::new(Sphere::new(Vector3::zeros(), 0.2).unwrap(), 0.0, 0.3).unwrap();
    let options = SbdOptions {
        velocity_damping: 1.0,
        ..Default::default()
    };
    let mut s = Sbd::new(&mesh, &[], options)
        .unwrap()
        .with_colliders(vec![sphere]);
    for _ in 0..600 {
        s.step(0.005);
    }
    let clearance = s.min_clearance();
    let centre = s.positions()[(n / 2) * n + n / 2];
    let corner = s.positions()[0];
    println!(
        "clearance {clearance:.5} m, centre y {:.4}, corner y {:.4}, KE {:.2e} J",
        centre.y,
        corner.y,
        s.kinetic_energy()
    );
    assert!(
        clearance > 0.0,
        "a vertex is inside the sphere: {clearance} m"
    );
    assert!(
        (centre.y - 0.201).abs() < 2e-3,
        "centre at {} m, the pole at 0.201",
        centre.y
    );
    assert!(
        centre.x.abs() < 0.01 && centre.z.abs() < 0.01,
        "the cloth slid off: {centre:?}"
    );
    assert!(
        corner.y < 0.0,
        "the corner stays above the equator: {} m",
        corner.y
    );
    assert!(
        s.kinetic_energy() < 1e-4,
        "still moving: {} J",
        s.kinetic_energy()
    );
}

/// Attachments ([`Sbd::with_attachments`]): with stiffness 1 and no
/// collider the attached vertex sits on its fixed point after every step
/// (the attachment is projected after the triangles), the rest of the
/// cloth follows it; at stiffness 0 (the default) it is released and the
/// cloth falls freely. Bad attachments are refused by name.
#[test]
fn attachments_hold_vertices_at_fixed_points() {
    let n = 9;
    let mesh = ClothMesh::rectangle(
        [0.2, 0.2],
        [n, n],
        Vector3::zeros(),
        Vector3::x(),
        Vector3::z(),
    )
    .unwrap();
    let corner = (n * n - 1) as u32;
    let target = mesh.positions()[corner as usize] + Vector3::new(0.0, 0.1, 0.05);
    let options = SbdOptions {
        attachment_stiffness: 1.0,
        velocity_damping: 5.0,
        ..Default::default()
    };
    let mut s = Sbd::new(&mesh, &[], options)
        .unwrap()
        .with_attachments(vec![(corner, target)])
        .unwrap();
    for _ in 0..100 {
        s.step(0.005);
        let gap = (s.positions()[corner as usize] - target).norm();
        assert!(gap < 1e-12, "attached vertex {gap} m from its point");
    }
    // The cloth hangs from the point: every vertex below it.
    let highest = s.positions().iter().map(|p| p.y).fold(f64::MIN, f64::max);
    assert_relative_eq!(highest, target.y, max_relative = 1e-12);
    let lowest = s.positions().iter().map(|p| p.y).fold(f64::MAX, f64::min);
    assert!(lowest < target.y - 0.15, "lowest vertex at {lowest} m");
    // Released: the next step is free fall from rest-ish, so the
    // attached vertex moves away from its point.
    s.reconfigure(|o| o.attachment_stiffness = 0.0).unwrap();
    for _ in 0..10 {
        s.step(0.005);
    }
    let gap = (s.positions()[corner as usize] - target).norm();
    assert!(gap > 0.01, "released vertex still {gap} m from its point");

    let fresh = || Sbd::new(&mesh, &[], SbdOptions::default()).unwrap();
    let nan = Vector3::new(f64::NAN, 0.0, 0.0);
    for bad in [
        vec![(n as u32 * n as u32, target)],
        vec![(0, target), (0, target)],
        vec![(0, nan)],
    ] {
        match fresh().with_attachments(bad.clone()) {
            Err(ShellError::InvalidOption { name, .. }) => assert_eq!(name, "attachments"),
            other => panic!("{bad:?}: {:?}", other.map(|_| ())),
        }
    }
    let bad = SbdOptions {
        attachment_stiffness: 1.5,
        ..Default::default()
    };
    assert!(matches!(
        bad.validate(),
        Err(ShellError::InvalidOption {
            name: "attachment_stiffness",
            ..
        })
    ));
}

/// `friction: false` drops the Coulomb limit: a square resting on a plane
/// tilted by 20° with `μ = 0.8` (above `tan 20° = 0.36`) stays put with
/// friction and slides down the slope without it.
#[test]
fn frictionless_contact_lets_cloth_slide() {
    use weft_solver::collide::{Collider, Plane};
    let angle = 20f64.to_radians();
    let normal = Vector3::new(-angle.sin(), angle.cos(), 0.0);
    let down_slope = Vector3::new(-angle.cos(), -angle.sin(), 0.0);
    let across = Vector3::z();
    let plane = || Collider::new(Plane::new(Vector3::zeros(), normal).unwrap(), 0.0, 0.8).unwrap();
    // The square lies on the slope, 1 mm (the collision thickness) above it.
    let mesh =
        ClothMesh::rectangle([0.1, 0.1], [6, 6], normal * 1e-3, -down_slope, across).unwrap();
    let slide = |friction: bool| {
        let options = SbdOptions {
            friction,
            ..Default::default()
        };
        let mut s = Sbd::new(&mesh, &[], options)
            .unwrap()
            .with_colliders(vec![plane()]);
        for _ in 0..40 {
            s.step(0.005);
        }
        let moved: Vector3<f64> = s
            .positions()
            .iter()
            .zip(mesh.positions())
            .map(|(p, q)| p - q)
            .sum::<Vector3<f64>>()
            / mesh.positions().len() as f64;
        moved.dot(&down_slope)
    };
    let (held, free) = (slide(true), slide(false));
    // Without friction: a = g sin 20° = 3.36 m/s² for 0.2 s, 67 mm
    // (symplectic substeps add a little).
    let expected = 0.5 * 9.81 * angle.sin() * 0.2 * 0.2;
    assert!(held.abs() < 1e-3, "slid {held} m with μ = 0.8");
    assert!(
        (free - expected).abs() < 0.05 * expected,
        "slid {free} m without friction, expected about {expected}"
    );
}

/// Edge collisions ([`SbdOptions::edge_collisions`]): a 0.1 m square of
/// two triangles dropped flat and centred over a sphere of radius 5 mm,
/// every vertex 71 mm from the sphere's axis, rests on the pole by its
/// diagonal's midpoint at the collision thickness (`R + δ` = 6 mm above
/// the centre) and stays there; with vertex collisions only it falls past.
#[test]
fn a_coarse_square_rests_on_a_thin_sphere_by_its_edges() {
    let mesh = common::square_over_thin_sphere();
    let drop = |edge_collisions: bool| {
        let options = SbdOptions {
            edge_collisions,
            ..Default::default()
        };
        let sphere = common::thin_sphere(0.0, 0.3);
        let mut s = Sbd::new(&mesh, &[], options)
            .unwrap()
            .with_colliders(vec![sphere]);
        for _ in 0..30 {
            s.step(0.005);
        }
        // Vertices 0 (-x,-z) and 3 (+x,+z) span the diagonal.
        0.5 * (s.positions()[0].y + s.positions()[3].y)
    };
    let (through, caught) = (drop(false), drop(true));
    eprintln!("diagonal midpoint after 0.15 s: vertices only {through} m, with edges {caught} m");
    assert!(
        through < -0.05,
        "vertex collisions alone: midpoint at {through} m"
    );
    assert!(
        (caught - 0.006).abs() < 2e-4,
        "midpoint {caught} m, expected 6 mm"
    );
}

/// Vertex–face self-collision ([`Sbd::with_self_collision`]): the free
/// sheet of `common::stacked_sheets` dropped onto the held one (5 mm
/// steps, 5 substeps). Without it the sheet falls through (below -0.1 m
/// after 0.4 s: -0.59 m); with a thickness of 2 mm, pairs searched within
/// 4 mm, every vertex over the held sheet rests between 1 and 1.25 times
/// the thickness above it (measured 2.00-2.35 mm), and none is ever seen
/// nearer than the thickness after a step.
#[test]
fn a_sheet_lands_on_another_with_self_collision() {
    let (mesh, n0) = common::stacked_sheets(0.0);
    let held: Vec<usize> = (0..n0).collect();
    let thickness = 0.002;
    let options = SbdOptions {
        velocity_damping: 2.0,
        ..Default::default()
    };
    let drop = |collide: bool| {
        let mut s = Sbd::new(&mesh, &held, options.clone()).unwrap();
        if collide {
            let detector = common::sheet_self_collision(&mesh, 2.0 * thickness);
            s = s.with_self_collision(detector, thickness).unwrap();
        }
        let mut lowest = f64::INFINITY;
        for _ in 0..80 {
            s.step(0.005);
            let over = |p: &&Vector3<f64>| (0.0..=0.1).contains(&p.x) && (0.0..=0.1).contains(&p.z);
            let lo = s.positions()[n0..]
                .iter()
                .filter(over)
                .map(|p| p.y)
                .fold(f64::INFINITY, f64::min);
            lowest = lowest.min(lo);
        }
        let over = |p: &&Vector3<f64>| (0.0..=0.1).contains(&p.x) && (0.0..=0.1).contains(&p.z);
        let ys: Vec<f64> = s.positions()[n0..]
            .iter()
            .filter(over)
            .map(|p| p.y)
            .collect();
        (
            ys.iter().copied().fold(f64::INFINITY, f64::min),
            ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            lowest,
        )
    };
    let (through, ..) = drop(false);
    let (lo, hi, lowest) = drop(true);
    println!(
        "free sheet after 0.4 s: alone {through} m; with self-collision {lo}..{hi} m (lowest ever {lowest} m)"
    );
    assert!(through < -0.1, "without self-collision: {through} m");
    assert!(
        lo > 0.999 * thickness && hi < 1.25 * thickness,
        "with self-collision: {lo}..{hi} m"
    );
    assert!(
        lowest > 0.0,
        "a vertex went below the held sheet: {lowest} m"
    );
}

/// Bad self-collision set-ups are refused by name.
#[test]
fn self_collision_is_checked() {
    let (mesh, _) = common::stacked_sheets(0.0);
    let sbd = || Sbd::new(&mesh, &[], SbdOptions::default()).unwrap();
    let detector = common::sheet_self_collision(&mesh, 0.004);
    for (detector, thickness) in [
        (detector.clone(), 0.0),
        (detector.clone(), f64::NAN),
        (detector.clone(), 0.004),
    ] {
        let err = sbd()
            .with_self_collision(detector, thickness)
            .err()
            .unwrap();
        assert!(err.to_string().contains("self_collision"), "{err}");
    }
    let small = ClothMesh::rectangle(
        [0.1, 0.1],
        [3, 3],
        Vector3::zeros(),
        Vector3::x(),
        Vector3::z(),
    )
    .unwrap();
    let other = common::sheet_self_collision(&small, 0.004);
    let err = sbd().with_self_collision(other, 0.002).err().unwrap();
    assert!(err.to_string().contains("built for 9 vertices"), "{err}");
}
