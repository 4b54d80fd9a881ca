//! Segment contact (`ContactModel::segments`): the midpoint of every yarn
//! segment is kept out of the colliders. Its residual is the derivative of
//! its energy and its matrix the derivative of its residual (finite
//! differences), and a single long segment dropped across a thin sphere,
//! with both nodes beside it, is caught by it instead of falling through.
//! Its Coulomb friction: the matrix is the derivative of the residual
//! along tangential velocity changes, and it stops that segment sliding
//! along the sphere where the frictionless one slides off.

use nalgebra::{DVector, Vector3};
use weft_core::{Damping, FabricBuilder, Material, YarnSpec};
use weft_solver::collide::{Collider, Plane, Sphere};
use weft_solver::{Assembler, Settings, Simulation};

const B: usize = 5;

fn yarn_material() -> Material {
    let mut m = Material::from_young_modulus("y", 1e8, 0.25e-3, 1000.0);
    m.damping = Damping::None;
    m
}

/// A yarn zig-zagging through the contact band of a tilted plane (nodes in
/// and out of it) and that plane (normal `PLANE_NORMAL`), with Coulomb
/// coefficient `mu`.
fn zigzag_on_plane(mu: f64) -> (weft_core::Fabric, Collider) {
    let nodes: Vec<[f64; 3]> = (0..6)
        .map(|i| {
            let x = i as f64 * 0.004;
            [x, if i % 2 == 0 { 0.0002 } else { 0.0009 }, 0.001 * x]
        })
        .collect();
    let mut b = FabricBuilder::new(vec![yarn_material()]).unwrap();
    b.add_yarn(&YarnSpec::new("y", nodes)).unwrap();
    let plane = Collider::new(
        Plane::new(Vector3::zeros(), Vector3::from(PLANE_NORMAL)).unwrap(),
        2e3,
        mu,
    )
    .unwrap();
    (b.build().unwrap(), plane)
}

const PLANE_NORMAL: [f64; 3] = [0.05, 1.0, 0.02];

/// Elastic energy, residual and matrix (with `with_matrix`) of the fabric
/// against the plane (margin 0.4 mm, exact Hessians), segment contact on or
/// off, at velocities `v` (q = q_n + h v), from rest at the fabric's
/// initial state, h = 1 ms.
fn system(
    fabric: &weft_core::Fabric,
    plane: &Collider,
    v: &[f64],
    with_matrix: bool,
    segments: bool,
) -> (f64, DVector<f64>, Option<nalgebra::DMatrix<f64>>) {
    let n = B * fabric.node_count();
    let q_n: Vec<f64> = (0..fabric.node_count())
        .flat_map(|i| fabric.initial.node_q(i))
        .collect();
    let v_n = vec![0.0; n];
    let h = 1e-3;
    let mut a = Assembler::new(fabric.clone(), Vector3::zeros());
    a.contact.colliders = vec![(plane.clone(), 0.0004)];
    a.contact.segments = segments;
    a.exact_hessians = true;
    a.begin_step(&q_n, &v_n, h, h);
    let mut r = vec![0.0; n];
    let (e, _) = a.assemble(
        &q_n,
        &v_n,
        v,
        h,
        &fabric.initial.anchors,
        &mut r,
        with_matrix,
    );
    let m = with_matrix.then(|| a.matrix.to_dense());
    (e.elastic, DVector::from_vec(r), m)
}

/// The segment-contact part (with it minus without) of the elastic energy,
/// residual and matrix of [`system`].
fn segment_part(
    fabric: &weft_core::Fabric,
    plane: &Collider,
    v: &[f64],
    with_matrix: bool,
) -> (f64, DVector<f64>, Option<nalgebra::DMatrix<f64>>) {
    let on = system(fabric, plane, v, with_matrix, true);
    let off = system(fabric, plane, v, with_matrix, false);
    (
        on.0 - off.0,
        &on.1 - &off.1,
        on.2.as_ref().map(|m| m - off.2.as_ref().unwrap()),
    )
}

/// Segment-contact residual and energy of the zig-zag yarn on the plane
/// (frictionless): the residual is `h ∂E/∂q` and the matrix its
/// derivative (finite differences).
#[test]
fn segment_contact_derivatives_match_finite_differences() {
    let (fabric, plane) = zigzag_on_plane(0.0);
    let n = B * fabric.node_count();
    let v0 = vec![0.0; n];
    let (e0, r0, a0) = segment_part(&fabric, &plane, &v0, true);
    let a0 = a0.unwrap();
    assert!(e0 > 0.0, "some midpoints are in contact");
    assert!(r0.norm() > 0.0);
    let eps = 1e-7;
    for k in 0..3 {
        let dir = DVector::from_fn(n, |i, _| ((i * 7 + k * 13) % 11) as f64 / 11.0 - 0.45);
        let vp: Vec<f64> = (&dir * eps).iter().copied().collect();
        let vm: Vec<f64> = (&dir * -eps).iter().copied().collect();
        let (ep, rp, _) = segment_part(&fabric, &plane, &vp, false);
        let (em, rm, _) = segment_part(&fabric, &plane, &vm, false);
        // Residual = h ∂E/∂q = ∂E/∂v (q = q_n + h v).
        let de = (ep - em) / (2.0 * eps);
        let rd = r0.dot(&dir);
        assert!(
            (de - rd).abs() <= 1e-6 * rd.abs().max(1e-12),
            "energy derivative {de} vs residual {rd}"
        );
        let fd = (rp - rm) / (2.0 * eps);
        let ad = &a0 * &dir;
        let err = (&fd - &ad).norm() / ad.norm();
        assert!(err < 1e-6, "matrix vs FD of residual: relative error {err}");
    }
}

/// Segment friction (μ = 0.5) on the zig-zag yarn sliding over the plane:
/// along velocity changes tangent to the plane (which leave every normal
/// force unchanged) the matrix is the derivative of the residual (finite
/// differences), and the friction opposes the midpoints' slip.
#[test]
fn segment_friction_matrix_matches_finite_differences() {
    let (fabric, plane) = zigzag_on_plane(0.5);
    let n = B * fabric.node_count();
    let normal = Vector3::from(PLANE_NORMAL).normalize();
    // Tangential velocities per node (position slots only, m/s).
    let tangential = |k: usize, scale: f64| -> Vec<f64> {
        let mut v = vec![0.0; n];
        for i in 0..fabric.node_count() {
            let w = Vector3::from_fn(|r, _| ((i * 5 + r * 3 + k * 7) % 11) as f64 / 11.0 - 0.45);
            let t = (w - normal * normal.dot(&w)) * scale;
            v[B * i..B * i + 3].copy_from_slice(t.as_slice());
        }
        v
    };
    // Slipping at about 2 cm/s, several times the regularisation speed.
    let v0 = tangential(0, 0.04);
    let (_, r0, a0) = segment_part(&fabric, &plane, &v0, true);
    let a0 = a0.unwrap();
    // Friction dissipates: the residual's friction part h (-f) is along
    // the slip, so r · v > 0 for a pure tangential velocity.
    let (_, r_still, _) = segment_part(&fabric, &plane, &vec![0.0; n], false);
    let friction = &r0 - &r_still;
    let power = friction.dot(&DVector::from_vec(v0.clone()));
    assert!(power > 0.0, "friction power {power}");
    let eps = 1e-7;
    for k in 1..4 {
        let dir = DVector::from_vec(tangential(k, 1.0));
        let shifted =
            |s: f64| -> Vec<f64> { v0.iter().zip(dir.iter()).map(|(a, d)| a + s * d).collect() };
        let (_, rp, _) = segment_part(&fabric, &plane, &shifted(eps), false);
        let (_, rm, _) = segment_part(&fabric, &plane, &shifted(-eps), false);
        let fd = (rp - rm) / (2.0 * eps);
        let ad = &a0 * &dir;
        let err = (&fd - &ad).norm() / ad.norm();
        assert!(err < 1e-6, "matrix vs FD of residual: relative error {err}");
    }
}

/// With friction's normal force taken at the step's start
/// (`weft_solver::collide::penalty`), the matrix is the derivative of the
/// residual along any velocity change, normal ones included, for the
/// zig-zag yarn sliding over the plane with node and segment contact:
/// Newton's matrix is exact there. Taken at the iterate, the normal force
/// moved the friction with the depth, a derivative the matrix leaves out
/// (relative error 0.07 along the first direction).
#[test]
fn friction_matrix_matches_finite_differences_along_any_direction() {
    let (fabric, plane) = zigzag_on_plane(0.5);
    let n = B * fabric.node_count();
    let normal = Vector3::from(PLANE_NORMAL).normalize();
    // Slipping at about 2 cm/s along the plane, and sinking 1 mm/s into it.
    let mut v0 = vec![0.0; n];
    for i in 0..fabric.node_count() {
        let w = Vector3::from_fn(|r, _| ((i * 5 + r * 3) % 11) as f64 / 11.0 - 0.45);
        let t = (w - normal * normal.dot(&w)) * 0.04 - normal * 1e-3;
        v0[B * i..B * i + 3].copy_from_slice(t.as_slice());
    }
    let (_, _, a0) = system(&fabric, &plane, &v0, true, true);
    let a0 = a0.unwrap();
    let eps = 1e-7;
    for k in 0..4 {
        // Positions only (the arc-length slots carry no contact).
        let dir = DVector::from_fn(n, |i, _| {
            if i % B < 3 {
                ((i * 7 + k * 13) % 11) as f64 / 11.0 - 0.45
            } else {
                0.0
            }
        });
        let shifted =
            |s: f64| -> Vec<f64> { v0.iter().zip(dir.iter()).map(|(a, d)| a + s * d).collect() };
        let (_, rp, _) = system(&fabric, &plane, &shifted(eps), false, true);
        let (_, rm, _) = system(&fabric, &plane, &shifted(-eps), false, true);
        let fd = (rp - rm) / (2.0 * eps);
        let ad = &a0 * &dir;
        let err = (&fd - &ad).norm() / ad.norm();
        assert!(
            err < 1e-6,
            "direction {k}: matrix vs FD of residual, relative error {err}"
        );
    }
}

/// A 40 mm yarn segment (two nodes at x = ±20 mm) lying straight at
/// height `y` (m) across a 5 mm sphere at the origin (penalty 50 N/m,
/// Coulomb `mu`, margin 0.5 mm), under gravity, steps of 1-2 ms, segment
/// contact on or off.
fn segment_over_sphere(y: f64, mu: f64, segments: bool) -> Simulation {
    let mut b = FabricBuilder::new(vec![yarn_material()]).unwrap();
    b.add_yarn(&YarnSpec::new("y", vec![[-0.02, y, 0.0], [0.02, y, 0.0]]))
        .unwrap();
    let settings = Settings {
        dt: 1e-3,
        dt_max: 2e-3,
        ..Settings::default()
    };
    let fabric = b.build().unwrap();
    let mut sim = Simulation::new(fabric, Vector3::new(0.0, -9.81, 0.0), settings, vec![]);
    let sphere = Collider::new(Sphere::new(Vector3::zeros(), 0.005).unwrap(), 50.0, mu).unwrap();
    sim.assembler.contact.colliders = vec![(sphere, 0.0005)];
    sim.assembler.contact.segments = segments;
    sim
}

/// A 40 mm segment (two nodes) falls centred across a sphere of radius
/// 5 mm. Node contact alone lets it fall through (both nodes pass beside
/// the sphere); with segment contact it comes to rest on top, its midpoint
/// at the contact distance `R + r + δ` above the centre.
#[test]
fn a_long_segment_rests_on_a_thin_sphere() {
    let drop = |segments: bool| {
        let mut sim = segment_over_sphere(0.008, 0.0, segments);
        sim.advance_to(0.3, |_, _| {}).unwrap();
        0.5 * (sim.q[1] + sim.q[B + 1])
    };
    let through = drop(false);
    let caught = drop(true);
    eprintln!(
        "midpoint height after 0.3 s: node contact only {through} m, with segments {caught} m"
    );
    assert!(through < -0.2, "fell through: {through} m");
    // R + r + δ = 5.75 mm; the penalty lets it sink by m g / k ≈ 0.4 mm.
    assert!(
        (caught - 0.00575).abs() < 0.001,
        "midpoint {caught} m, expected about 5.75 mm"
    );
}

/// The same 40 mm segment resting across the 5 mm sphere, launched along
/// its axis at 5 cm/s. Only its midpoint touches the sphere, so only
/// segment friction can stop it: with μ = 0.5 it stops after about
/// v² / (2 μ g) = 0.25 mm (more as the sphere's slope grows under it) and
/// stays on top; frictionless, it slides its midpoint off the sphere and
/// falls.
#[test]
fn segment_friction_stops_a_segment_sliding_across_a_thin_sphere() {
    let slide = |mu: f64| {
        let mut sim = segment_over_sphere(0.00575, mu, true);
        sim.v[0] = 0.05;
        sim.v[B] = 0.05;
        sim.advance_to(0.3, |_, _| {}).unwrap();
        let mid = |c: usize| 0.5 * (sim.q[c] + sim.q[B + c]);
        (mid(0), mid(1))
    };
    let (x_held, y_held) = slide(0.5);
    let (x_free, y_free) = slide(0.0);
    eprintln!(
        "after 0.3 s: with friction midpoint at x {x_held} m, y {y_held} m; \
         frictionless x {x_free} m, y {y_free} m"
    );
    assert!(
        (0.00015..0.0005).contains(&x_held),
        "stopped after {x_held} m, expected about 0.25 mm"
    );
    assert!(
        (y_held - 0.00575).abs() < 0.0003,
        "midpoint height {y_held} m"
    );
    assert!(y_free < -0.1, "frictionless segment still at {y_free} m");
}
