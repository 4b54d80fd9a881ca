//! Segment contact (`ContactModel::segments`): the midpoint of every yarn
//! segment is kept out of the colliders. Its residual is the derivative of
//! its energy and its matrix the derivative of its residual (finite
//! differences), and a single long segment dropped across a thin sphere,
//! with both nodes beside it, is caught by it instead of falling through.

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

/// Segment-contact residual and energy of a yarn zig-zagging through the
/// contact band of a tilted plane (nodes in and out of it).
#[test]
fn segment_contact_derivatives_match_finite_differences() {
    let nodes: Vec<[f64; 3]> = (0..6)
        .map(|i| {
            let x = i as f64 * 0.004;
            [x, if i % 2 == 0 { 0.0002 } else { 0.0009 }, 0.001 * x]
        })
        .collect();
    let mut b = FabricBuilder::new(vec![yarn_material()]).unwrap();
    b.add_yarn(&YarnSpec::new("y", nodes)).unwrap();
    let fabric = b.build().unwrap();
    let plane = Collider::new(
        Plane::new(Vector3::zeros(), Vector3::new(0.05, 1.0, 0.02)).unwrap(),
        2e3,
        0.0,
    )
    .unwrap();
    let assembler = |segments: bool| {
        let mut a = Assembler::new(fabric.clone(), Vector3::zeros());
        a.contact.colliders = vec![(plane.clone(), 0.0004)];
        a.contact.segments = segments;
        a.exact_hessians = true;
        a
    };
    let n = B * fabric.node_count();
    let q_n: Vec<f64> = (0..fabric.node_count())
        .flat_map(|i| fabric.initial.node_q(i))
        .collect();
    let v_n = vec![0.0; n];
    let h = 1e-3;
    let anchors = fabric.initial.anchors.clone();
    // Segment-only residual, energy and matrix: (on) - (off).
    let eval = |v: &[f64], with_matrix: bool| {
        let mut out = Vec::new();
        for seg in [true, false] {
            let mut a = assembler(seg);
            a.begin_step(&q_n, &v_n, h, h);
            let mut r = vec![0.0; n];
            let (e, _) = a.assemble(&q_n, &v_n, v, h, &anchors, &mut r, with_matrix);
            let m = with_matrix.then(|| a.matrix.to_dense());
            out.push((e.elastic, DVector::from_vec(r), m));
        }
        let (on, off) = (&out[0], &out[1]);
        (
            on.0 - off.0,
            &on.1 - &off.1,
            on.2.as_ref().map(|m| m - off.2.as_ref().unwrap()),
        )
    };
    let v0 = vec![0.0; n];
    let (e0, r0, a0) = eval(&v0, true);
    let a0 = a0.unwrap();
    assert!(e0 > 0.0, "some midpoints are in contact");
    assert!(r0.norm() > 0.0);
    let eps = 1e-7;
    for k in 0..3 {
        let dir = DVector::from_fn(n, |i, _| ((i * 7 + k * 13) % 11) as f64 / 11.0 - 0.45);
        let vp: Vec<f64> = (&dir * eps).iter().copied().collect();
        let vm: Vec<f64> = (&dir * -eps).iter().copied().collect();
        let (ep, rp, _) = eval(&vp, false);
        let (em, rm, _) = eval(&vm, false);
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

/// A 40 mm segment (two nodes) falls centred across a sphere of radius
/// 5 mm. Node contact alone lets it fall through (both nodes pass beside
/// the sphere); with segment contact it comes to rest on top, its midpoint
/// at the contact distance `R + r + δ` above the centre.
#[test]
fn a_long_segment_rests_on_a_thin_sphere() {
    let drop = |segments: bool| {
        let mut b = FabricBuilder::new(vec![yarn_material()]).unwrap();
        b.add_yarn(&YarnSpec::new(
            "y",
            vec![[-0.02, 0.008, 0.0], [0.02, 0.008, 0.0]],
        ))
        .unwrap();
        let fabric = b.build().unwrap();
        let settings = Settings {
            dt: 1e-3,
            dt_max: 2e-3,
            ..Settings::default()
        };
        let mut sim = Simulation::new(fabric, Vector3::new(0.0, -9.81, 0.0), settings, vec![]);
        let sphere =
            Collider::new(Sphere::new(Vector3::zeros(), 0.005).unwrap(), 50.0, 0.0).unwrap();
        sim.assembler.contact.colliders = vec![(sphere, 0.0005)];
        sim.assembler.contact.segments = segments;
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
