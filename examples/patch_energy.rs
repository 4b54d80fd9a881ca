//! Builds a plain-weave patch with the [SBO17 §6.3] yarn sizes, deforms it in
//! four ways (uniform stretch, bending into a cylinder, in-plane shear, and
//! sliding of the crossings), and prints, per deformation, the energy of
//! every element type and the largest nodal force. A quick way to see the
//! model's calibration and the relative stiffness of the modes.
//!
//! Run: `cargo run --release --example patch_energy`

use nalgebra::{SVector, Vector3};
use weft::core::{Fabric, FabricBuilder, Material, State, WovenPatchSpec};
use weft::potentials::{bending, contact, elastic, gravity, shear, stretch};

const N: usize = 41; // yarns per direction
const SPACING: f64 = 0.57e-3; // m, [SBO17 §6.3]
const RADIUS: f64 = 0.16e-3; // m

fn main() {
    let mut m = Material::example_cotton();
    m.radius = RADIUS;
    m.shear_stiffness = 0.05;
    m.contact_stiffness = 50.0;
    let side = SPACING * (N - 1) as f64;
    let mut b = FabricBuilder::new(vec![m.clone()]).expect("valid material");
    b.add_woven_patch(&WovenPatchSpec::new(
        "cotton",
        [side, side],
        [N, N],
        [0.0, 0.0, 0.0],
    ))
    .expect("valid patch");
    let f = b.build().expect("valid fabric");

    println!(
        "woven patch {:.1} x {:.1} mm, {} x {} yarns",
        side * 1e3,
        side * 1e3,
        N,
        N
    );
    println!(
        "  nodes {}   DOFs {} ({} free)   segments {}   bending {}   shear {}   anchors {}",
        f.node_count(),
        f.dof_count(),
        f.free_dof_count(),
        f.elements.segments.len(),
        f.elements.bending.len(),
        f.elements.shear.len(),
        f.elements.anchors.len()
    );
    println!(
        "  material: R = {} mm, k_s = {} N, k_b = {:e} N m², k_x = {} N, k_c = {} N; mass {:.3} mg",
        m.radius * 1e3,
        m.stretch_stiffness,
        m.bending_stiffness,
        m.shear_stiffness,
        m.contact_stiffness,
        f.total_mass(&f.initial) * 1e6
    );
    println!();
    println!(
        "{:<28} {:>11} {:>11} {:>11} {:>11} {:>11} {:>12}",
        "deformation", "stretch J", "bending J", "shear J", "contact J", "gravity J", "max |f| N"
    );
    let cases: [(&str, Deformation); 3] = [
        ("2 % stretch along warp", |p| {
            Vector3::new(1.02 * p.x, p.y, p.z)
        }),
        ("cylinder, radius 5 mm", |p| {
            let r = 5e-3;
            Vector3::new(r * (p.x / r).sin(), r * (1.0 - (p.x / r).cos()), p.z)
        }),
        ("in-plane shear, 0.2 rad", |p| {
            Vector3::new(p.x + 0.2 * p.z, p.y, p.z)
        }),
    ];
    for (name, map) in cases {
        let mut s = f.initial.clone();
        for x in s.x.iter_mut() {
            *x = map(x);
        }
        report(name, &f, &m, &s);
    }
    // Sliding: every free crossing moved by 30 % of a spacing along its warp
    // yarn, alternately forwards and backwards, the geometry unchanged.
    let mut s = f.initial.clone();
    for n in 0..f.node_count() {
        if f.free[n][3] {
            s.u[n] += if n % 2 == 0 { 0.3 } else { -0.3 } * SPACING;
        }
    }
    report("crossings slid 30 % (warp)", &f, &m, &s);
}

/// A map from rest positions to deformed positions (m -> m).
type Deformation = fn(&Vector3<f64>) -> Vector3<f64>;

fn report(name: &str, f: &Fabric, m: &Material, s: &State) {
    let mut grad = vec![0.0; f.dof_count()];
    let mut add = |dofs: &[usize], g: &[f64]| {
        for (d, v) in dofs.iter().zip(g) {
            grad[*d] += v;
        }
    };
    let (mut es, mut eb, mut ex, mut ec, mut eg) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let rho_l = m.linear_density();
    let g = Vector3::new(0.0, -9.81, 0.0);
    for seg in &f.elements.segments {
        let q = f.segment_q(s, seg);
        let dofs = f.segment_dofs(seg);
        let e = elastic(
            m.stretch_stiffness,
            &stretch::strain(&q),
            &stretch::measure(&q),
        );
        es += e.energy;
        add(&dofs, e.gradient.as_slice());
        let qc = SVector::from([q[3], q[7]]);
        let e = elastic(
            m.contact_stiffness,
            &contact::strain(&qc, 2.0 * m.radius, seg.rest_spacing),
            &contact::measure(seg.rest_spacing),
        );
        ec += e.energy;
        add(&[dofs[3], dofs[7]], e.gradient.as_slice());
        eg += gravity::potential(&q, rho_l, &g).energy;
    }
    for el in &f.elements.bending {
        let e = bending::energy(
            m.bending_stiffness,
            &f.bending_q(s, el),
            bending::DEFAULT_THRESHOLD,
        );
        eb += e.energy;
        add(&f.bending_dofs(el), e.gradient.as_slice());
    }
    for el in &f.elements.shear {
        let sh = shear::Shear::new(
            m.shear_stiffness,
            0.0,
            el.rest_spacing,
            shear::SMALL_ANGLE_THRESHOLD,
            None,
        )
        .expect("valid shear parameters");
        let e = sh.elastic(&f.shear_q(s, el));
        ex += e.energy;
        add(&f.shear_dofs(el), e.gradient.as_slice());
    }
    let fmax = grad.iter().fold(0.0f64, |a, b| a.max(b.abs()));
    println!(
        "{name:<28} {es:>11.3e} {eb:>11.3e} {ex:>11.3e} {ec:>11.3e} {eg:>11.3e} {fmax:>12.3e}"
    );
}
