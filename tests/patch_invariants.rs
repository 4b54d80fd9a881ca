//! Cross-crate checks on a whole woven patch (weft-core topology + every
//! weft-potentials element): conservation laws of the internal forces,
//! gravity and mass totals, rest state, and good damping [SBO18 eq. 1] of the
//! whole fabric under rigid motion and pure sliding.

use nalgebra::{Rotation3, SVector, Vector3};
use weft::core::{DOFS_PER_NODE, Fabric, FabricBuilder, Material, State, WovenPatchSpec};
use weft::potentials::testing::xorshift as rng;
use weft::potentials::{bending, contact, elastic, gravity, inertia, shear, stretch};

const K_S: f64 = 500.0;
const K_B: f64 = 1e-5;
const K_X: f64 = 0.5;
const K_C: f64 = 50.0;
const RADIUS: f64 = 0.25e-3;
const SPACING: f64 = 1e-3;

fn patch(n: usize) -> Fabric {
    let mut m = Material::example_cotton();
    m.radius = RADIUS;
    let mut b = FabricBuilder::new(vec![m]).unwrap();
    let side = SPACING * (n - 1) as f64;
    b.add_woven_patch(&WovenPatchSpec::new(
        "cotton",
        [side, side],
        [n, n],
        [0.0, 0.05, 0.0],
    ))
    .unwrap();
    b.build().unwrap()
}

/// A deformed state: bent into a cylinder, sheared, randomly perturbed, and
/// the crossings slid along the yarns (u, v perturbed by 10 % of a spacing,
/// keeping the order), with random velocities.
fn deformed(f: &Fabric) -> State {
    let mut r = rng(7);
    let mut s = f.initial.clone();
    for n in 0..f.node_count() {
        let p = s.x[n];
        let (x, z) = (p.x + 0.15 * p.z, p.z);
        let rad = 0.01;
        s.x[n] = Vector3::new(
            rad * (x / rad).sin(),
            0.05 + rad * (1.0 - (x / rad).cos()),
            z,
        ) + Vector3::new(r(), r(), r()) * 3e-5;
        if f.free[n][3] {
            s.u[n] += 0.1 * SPACING * r();
        }
        if f.free[n][4] {
            s.v[n] += 0.1 * SPACING * r();
        }
        s.x_dot[n] = Vector3::new(r(), r(), r()) * 0.05;
        s.u_dot[n] = if f.free[n][3] { 0.01 * r() } else { 0.0 };
        s.v_dot[n] = if f.free[n][4] { 0.01 * r() } else { 0.0 };
    }
    f.check_state(&s).unwrap();
    s
}

fn add<const N: usize>(out: &mut [f64], dofs: [usize; N], g: &SVector<f64, N>) {
    for (i, d) in dofs.iter().enumerate() {
        out[*d] += g[i];
    }
}

fn shear_element(spacing: f64) -> shear::Shear {
    let jam = shear::Jamming::from_geometry(RADIUS, spacing).unwrap();
    shear::Shear::new(K_X, 1e-4, spacing, shear::SMALL_ANGLE_THRESHOLD, Some(jam)).unwrap()
}

/// Total internal elastic energy (stretch, bending, shear, contact) and its
/// gradient over the 5 DOFs of every node.
fn internal(f: &Fabric, s: &State) -> (f64, Vec<f64>) {
    let mut g = vec![0.0; f.dof_count()];
    let mut e = 0.0;
    for seg in &f.elements.segments {
        let q = f.segment_q(s, seg);
        let ev = elastic(K_S, &stretch::strain(&q), &stretch::measure(&q));
        e += ev.energy;
        add(&mut g, f.segment_dofs(seg), &ev.gradient);
        // Parallel contact on the arc-length coordinates (d = 2R).
        let qc = SVector::from([q[3], q[7]]);
        let d = 2.0 * RADIUS;
        let ec = elastic(
            K_C,
            &contact::strain(&qc, d, seg.rest_spacing),
            &contact::measure(seg.rest_spacing),
        );
        e += ec.energy;
        let dofs = f.segment_dofs(seg);
        add(&mut g, [dofs[3], dofs[7]], &ec.gradient);
    }
    for b in &f.elements.bending {
        let ev = bending::energy(K_B, &f.bending_q(s, b), bending::DEFAULT_THRESHOLD);
        e += ev.energy;
        add(&mut g, f.bending_dofs(b), &ev.gradient);
    }
    for x in &f.elements.shear {
        let ev = shear_element(x.rest_spacing).elastic(&f.shear_q(s, x));
        e += ev.energy;
        add(&mut g, f.shear_dofs(x), &ev.gradient);
    }
    (e, g)
}

/// At rest every internal energy and force vanishes.
#[test]
fn rest_state_has_no_energy_or_force() {
    let f = patch(9);
    let (e, g) = internal(&f, &f.initial);
    assert!(e.abs() < 1e-20, "{e}");
    let gmax = g.iter().fold(0.0f64, |a, b| a.max(b.abs()));
    assert!(gmax < 1e-9 * K_S, "{gmax}");
}

/// Internal forces are translation and rotation invariant, so on a deformed
/// patch their net force and net torque vanish (to 1e-9 of the largest
/// nodal force times the patch size), and shifting every arc-length
/// coordinate of one yarn by a constant changes no energy, so each yarn's
/// arc-length forces sum to zero (same tolerance).
#[test]
fn internal_forces_carry_no_net_force_torque_or_sliding_force() {
    let f = patch(12);
    let s = deformed(&f);
    let (e, g) = internal(&f, &s);
    assert!(e > 0.0);
    let fmax = g.iter().fold(0.0f64, |a, b| a.max(b.abs()));
    let (mut net, mut torque) = (Vector3::zeros(), Vector3::zeros());
    for n in 0..f.node_count() {
        let fx = Vector3::new(g[5 * n], g[5 * n + 1], g[5 * n + 2]);
        net += fx;
        torque += s.x[n].cross(&fx);
    }
    assert!(net.norm() < 1e-9 * fmax, "net force {net} vs max {fmax}");
    assert!(torque.norm() < 1e-9 * fmax * 0.02, "net torque {torque}");
    for yarn in &f.yarns {
        let slot = yarn.family.slot();
        let sum: f64 = yarn
            .nodes
            .iter()
            .map(|&n| g[DOFS_PER_NODE * n + slot])
            .sum();
        assert!(sum.abs() < 1e-9 * fmax, "{}: {sum}", yarn.label());
    }
}

/// Gravity on the whole patch is (total mass) g, the Eulerian segment mass
/// matrices add up to the same total mass, and it equals ρπR² times the total
/// yarn length (1e-12 relative).
#[test]
fn gravity_and_mass_totals() {
    let f = patch(10);
    let s = deformed(&f);
    let rho_l = f.materials[0].linear_density();
    let gvec = Vector3::new(0.0, -9.81, 0.0);
    let mut fg = Vector3::zeros();
    let mut mass = 0.0;
    for seg in &f.elements.segments {
        let q = f.segment_q(&s, seg);
        let ev = gravity::potential(&q, rho_l, &gvec);
        fg -= Vector3::new(
            ev.gradient[0] + ev.gradient[4],
            ev.gradient[1] + ev.gradient[5],
            ev.gradient[2] + ev.gradient[6],
        );
        let m = inertia::mass_matrix(rho_l, &q);
        // Translational mass along x: sum of the (x, x) entries of both nodes.
        mass += m[(0, 0)] + m[(0, 4)] + m[(4, 0)] + m[(4, 4)];
    }
    let total = f.total_mass(&s);
    let length = 2.0 * 10.0 * 9.0 * SPACING;
    assert!((total - rho_l * length).abs() < 1e-12 * total);
    assert!((mass - total).abs() < 1e-12 * total, "{mass} vs {total}");
    assert!((fg - gvec * total).norm() < 1e-12 * total * 9.81, "{fg}");
}

/// Good damping of the whole fabric [SBO18 eq. 1]: a rigid motion (rotation
/// plus translation) of a deformed patch gives no stretch, contact or scalar
/// bending/shear dissipation (1e-10 of the dissipation of the random velocity
/// field), and the small-angle vector strains give at most the bounded
/// spurious rate of DESIGN §3: a vector strain rotates with the body, so its
/// rate is `ω × ε` and `|ε̇| ≤ |ω||ε|`, which vanishes at zero angle and,
/// since `|ε| ≤ tan 5°` times the strain scale below the threshold, stays
/// below tan 5° relative to `|ω|` times that scale.
#[test]
fn rigid_motion_of_a_deformed_patch_is_not_damped() {
    let f = patch(10);
    let mut s = deformed(&f);
    // Reference dissipation for the random velocity field.
    let total = |s: &State| -> (f64, f64) {
        let mut w_exact = 0.0;
        let mut w_small = 0.0;
        for seg in &f.elements.segments {
            w_exact +=
                stretch::dissipation(3e-7, &f.segment_q(s, seg), &f.segment_qdot(s, seg)).potential;
        }
        for b in &f.elements.bending {
            let d = bending::damping(
                1e-9,
                &f.bending_q(s, b),
                &f.bending_qdot(s, b),
                bending::DEFAULT_THRESHOLD,
            );
            if d.is_small_angle() {
                w_small += d.potential()
            } else {
                w_exact += d.potential()
            }
        }
        for x in &f.elements.shear {
            let d =
                shear_element(x.rest_spacing).dissipation(&f.shear_q(s, x), &f.shear_qdot(s, x));
            match d {
                shear::ShearDissipation::Scalar(d) => w_exact += d.potential,
                shear::ShearDissipation::SmallAngle(d) => w_small += d.potential,
            }
        }
        (w_exact, w_small)
    };
    let (w_rand, w_rand_small) = total(&s);
    assert!(w_rand > 0.0 && w_rand_small > 0.0);
    // Rigid motion: ẋ = v + ω × x, no sliding.
    let (v, w) = (Vector3::new(0.3, -0.1, 0.2), Vector3::new(1.0, -2.0, 0.5));
    for n in 0..f.node_count() {
        s.x_dot[n] = v + w.cross(&s.x[n]);
        s.u_dot[n] = 0.0;
        s.v_dot[n] = 0.0;
    }
    let (w_rigid, w_rigid_small) = total(&s);
    assert!(w_rigid < 1e-10 * w_rand, "{w_rigid} vs {w_rand}");
    // Spurious small-angle damping: |ε̇| ≤ |ω||ε| per element, so
    // W ≤ Σ ½Ωk_d|ω|²|ε|². Checked against that bound, and the bound itself
    // is small: below tan²(5°) of the same sum with |ε| at the threshold.
    let mut bound = 0.0;
    for b in &f.elements.bending {
        let q = f.bending_q(&s, b);
        let st = bending::strain(&q, bending::DEFAULT_THRESHOLD);
        if st.is_small_angle() {
            bound += 0.5 * bending::measure(&q).value * 1e-9 * (st.norm() * w.norm()).powi(2);
        }
    }
    for x in &f.elements.shear {
        let q = f.shear_q(&s, x);
        if shear::use_small_angle(&q, shear::SMALL_ANGLE_THRESHOLD) {
            let eps = shear::shear_angle(&q).tan().abs();
            bound += 0.5 * x.rest_spacing * 1e-4 * (eps * w.norm()).powi(2);
        }
    }
    assert!(
        w_rigid_small <= bound * (1.0 + 1e-9),
        "{w_rigid_small} vs bound {bound}"
    );
}

/// A rigid rotation of the undeformed (flat, straight) patch, and pure sliding
/// of every yarn of the flat patch through its crossings, dissipate nothing
/// at all (all strains zero, so even the vector strains give no spurious
/// rate): W < 1e-25 W.
#[test]
fn flat_patch_rotation_and_sliding_are_free() {
    let f = patch(8);
    let mut s = f.initial.clone();
    let rot = Rotation3::from_euler_angles(0.3, -0.2, 0.7);
    let w = Vector3::new(0.5, 1.0, -2.0);
    for n in 0..f.node_count() {
        s.x[n] = rot * s.x[n];
        s.x_dot[n] = w.cross(&s.x[n]);
    }
    let mut wsum = 0.0;
    for b in &f.elements.bending {
        wsum += bending::damping(
            1e-9,
            &f.bending_q(&s, b),
            &f.bending_qdot(&s, b),
            bending::DEFAULT_THRESHOLD,
        )
        .potential();
    }
    for x in &f.elements.shear {
        wsum += shear_element(x.rest_spacing)
            .dissipation(&f.shear_q(&s, x), &f.shear_qdot(&s, x))
            .potential();
    }
    for seg in &f.elements.segments {
        wsum +=
            stretch::dissipation(3e-7, &f.segment_q(&s, seg), &f.segment_qdot(&s, seg)).potential;
    }
    assert!(wsum < 1e-25, "{wsum}");
    // Pure sliding of straight yarns: every free u and v moves at 1 mm/s, the
    // fixed ends do not; only segments at the ends change length, so compare
    // interior segments, bending and shear only.
    let mut s = f.initial.clone();
    for n in 0..f.node_count() {
        s.u_dot[n] = 1e-3;
        s.v_dot[n] = 1e-3;
    }
    let mut wsum = 0.0;
    for seg in &f.elements.segments {
        wsum +=
            stretch::dissipation(3e-7, &f.segment_q(&s, seg), &f.segment_qdot(&s, seg)).potential;
    }
    for b in &f.elements.bending {
        wsum += bending::damping(
            1e-9,
            &f.bending_q(&s, b),
            &f.bending_qdot(&s, b),
            bending::DEFAULT_THRESHOLD,
        )
        .potential();
    }
    assert!(wsum < 1e-25, "{wsum}");
}
