//! Stretch element [SBO17 eq. 12-14]: derivatives against finite differences
//! (including the Eulerian coordinates), closed-form strain rate, good damping.

use nalgebra::{SVector, Vector3};
use proptest::prelude::*;
use weft_potentials::testing::{fd_gradient, fd_jacobian, rel_error};
use weft_potentials::{Hessian, dissipation, elastic, stretch};

const K_S: f64 = 5e2; // [SBO17 Table 1] stretch stiffness range 5e2..1e6
const K_D: f64 = 3e-7;

fn energy(q: &SVector<f64, 8>) -> f64 {
    elastic(K_S, &stretch::strain(q), &stretch::measure(q)).energy
}
fn gradient(q: &SVector<f64, 8>) -> SVector<f64, 8> {
    elastic(K_S, &stretch::strain(q), &stretch::measure(q)).gradient
}

/// A segment of rest length `du` (1..4 mm) whose chord is stretched by `ratio`.
fn config(dir: [f64; 3], ratio: f64, du: f64, xa: [f64; 3]) -> SVector<f64, 8> {
    let d = Vector3::from(dir).normalize() * ratio * du;
    SVector::from([
        xa[0],
        xa[1],
        xa[2],
        0.01,
        xa[0] + d.x,
        xa[1] + d.y,
        xa[2] + d.z,
        0.01 + du,
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// Gradient vs central differences of the energy, Hessian vs central
    /// differences of the gradient: relative error below 1e-6 (step 1e-8 m on a
    /// 1-4 mm element: truncation O((h/Δu)²) ~ 1e-10, round-off ~ 1e-8).
    /// Errors are relative to the larger of the reference norm and the
    /// element's natural scale (k_s·1e-3 N for forces, k_s/Δu·1e-3 for
    /// stiffness), so near-zero strain does not divide by ~0.
    #[test]
    fn derivatives_match_finite_differences(
        dir in prop::array::uniform3(-1.0f64..1.0).prop_filter("nonzero", |d| Vector3::from(*d).norm() > 0.2),
        ratio in 0.7f64..1.4,
        du in 1e-3f64..4e-3,
        xa in prop::array::uniform3(-0.01f64..0.01),
    ) {
        let q = config(dir, ratio, du, xa);
        let e = elastic(K_S, &stretch::strain(&q), &stretch::measure(&q));
        let h = 1e-8;
        let g_fd = fd_gradient(energy, &q, h);
        prop_assert!(rel_error(&e.gradient, &g_fd, K_S * 1e-3) < 1e-6, "gradient {} vs {}", e.gradient, g_fd);
        let h_fd = fd_jacobian(gradient, &q, h);
        let herr = rel_error(&e.hessian, &h_fd, K_S / du * 1e-3);
        prop_assert!(herr < 1e-6, "hessian err {}", herr);
        prop_assert!((e.hessian - e.hessian.transpose()).norm() <= 1e-12 * e.hessian.norm());
        // Strain Jacobian against differences of the strain itself.
        let s = stretch::strain(&q);
        let j_fd = fd_jacobian(|q| stretch::strain(q).value, &q, h);
        prop_assert!(rel_error(&s.jacobian, &j_fd, 1.0 / du) < 1e-6);
    }

    /// `∇ε q̇` equals the closed form [SBO17 eq. 14] to round-off.
    #[test]
    fn strain_rate_matches_sbo17_eq14(
        dir in prop::array::uniform3(-1.0f64..1.0).prop_filter("nonzero", |d| Vector3::from(*d).norm() > 0.2),
        ratio in 0.7f64..1.4,
        du in 1e-3f64..4e-3,
        qdot in prop::array::uniform8(-1.0f64..1.0),
    ) {
        let q = config(dir, ratio, du, [0.0; 3]);
        let qdot = SVector::from(qdot);
        let rate = stretch::strain(&q).rate(&qdot)[0];
        let closed = stretch::strain_rate_closed_form(&q, &qdot);
        prop_assert!((rate - closed).abs() <= 1e-10 * closed.abs().max(1.0));
    }
}

/// The Eulerian term of the force: a straight segment at rest length with its
/// arc-length coordinates both shifted feels no force, but stretched by 10 %
/// the force on `s_b` is `-∂V/∂s_b = k_s (ε + ½ε²)·... ` evaluated in closed form.
#[test]
fn eulerian_force_closed_form() {
    let du = 2e-3;
    let q = config([1.0, 0.0, 0.0], 1.1, du, [0.0; 3]);
    let e = elastic(K_S, &stretch::strain(&q), &stretch::measure(&q));
    // V = ½ k (r - Δu)² / Δu, r = 1.1 Δu: ∂V/∂Δu = -k (r-Δu)/Δu - ½ k (r-Δu)²/Δu²
    //   = -k ε - ½ k ε² with ε = 0.1.
    let expected = -K_S * 0.1 - 0.5 * K_S * 0.01;
    assert!(
        (e.gradient[7] - expected).abs() < 1e-9 * K_S,
        "{}",
        e.gradient[7]
    );
    assert!((e.gradient[3] + expected).abs() < 1e-9 * K_S);
    assert!((e.energy - 0.5 * K_S * du * 0.01).abs() < 1e-12);
}

/// Good damping [SBO18 eq. 1]: rigid translation, rigid rotation and pure
/// sliding (equal u̇ at both ends of a straight segment) give exactly zero
/// dissipative force.
#[test]
fn good_damping_rigid_and_sliding() {
    let q = config([0.3, 0.5, -0.2], 1.05, 2e-3, [0.001, 0.002, 0.0]);
    let s = stretch::strain(&q);
    let m = stretch::measure(&q);
    let scale = (K_D * 2e-3) * 1.0 / 2e-3; // |f| scale for a unit strain rate
    // Translation.
    let t = Vector3::new(0.4, -1.0, 0.7);
    let qdot = SVector::from([t.x, t.y, t.z, 0.0, t.x, t.y, t.z, 0.0]);
    assert!(dissipation(K_D, &s, &m, &qdot).force.norm() < 1e-12 * scale);
    // Rotation about an arbitrary axis through the origin: ẋ = ω × x.
    let w = Vector3::new(0.3, 2.0, -1.0);
    let xa = Vector3::new(q[0], q[1], q[2]);
    let xb = Vector3::new(q[4], q[5], q[6]);
    let (va, vb) = (w.cross(&xa), w.cross(&xb));
    let qdot = SVector::from([va.x, va.y, va.z, 0.0, vb.x, vb.y, vb.z, 0.0]);
    assert!(dissipation(K_D, &s, &m, &qdot).force.norm() < 1e-12 * scale);
    // Pure sliding of the yarn through both end nodes.
    let qdot = SVector::from([0.0, 0.0, 0.0, 0.3, 0.0, 0.0, 0.0, 0.3]);
    assert!(dissipation(K_D, &s, &m, &qdot).force.norm() < 1e-12 * scale);
    // A stretching velocity does dissipate: W = ½ Ω k_d ε̇², ε̇ = 1/s here.
    let du = 2e-3;
    let dir = xb - xa;
    let v = dir.normalize() * du; // |Δẋ| = Δu per second -> ε̇ = 1
    let qdot = SVector::from([0.0, 0.0, 0.0, 0.0, v.x, v.y, v.z, 0.0]);
    let d = dissipation(K_D, &s, &m, &qdot);
    assert!((d.strain_rate[0] - 1.0).abs() < 1e-12);
    assert!((d.potential - 0.5 * du * K_D).abs() < 1e-20);
}

proptest! {
    /// The closed-form clamp equals the generic eigen-projection of the full
    /// 8x8 stress-weighted Hessian to 1e-9 relative, and is NSD; the forces
    /// agree to 1e-12 of |f| + |V||q̇| (V the velocity Jacobian).
    #[test]
    fn closed_form_clamp_equals_generic(
        dir in prop::array::uniform3(-1.0f64..1.0).prop_filter("nonzero", |d| Vector3::from(*d).norm() > 0.2),
        ratio in 0.7f64..1.4,
        du in 1e-3f64..4e-3,
        qdot in prop::array::uniform8(-1.0f64..1.0),
    ) {
        let q = config(dir, ratio, du, [0.0; 3]);
        let qdot = SVector::from(qdot);
        let fast = stretch::dissipation(K_D, &q, &qdot);
        let generic = dissipation(K_D, &stretch::strain(&q), &stretch::measure(&q), &qdot);
        let scale = generic.position_jacobian.norm().max(1e-30);
        prop_assert!((fast.position_jacobian - generic.position_jacobian).norm() <= 1e-9 * scale);
        // f = V q̇: round-off relative to |V||q̇| (|f| cancels towards 0
        // when q̇ is nearly orthogonal to the strain gradient).
        let f_scale = generic.force.norm() + generic.velocity_jacobian.norm() * qdot.norm();
        prop_assert!((fast.force - generic.force).norm() <= 1e-12 * f_scale.max(1e-30));
        let (l, _) = weft_potentials::element::symmetric_eigen(&fast.position_jacobian);
        prop_assert!(l.max() <= 1e-12 * scale);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// The dissipation over a step (`dissipation_over_step`, the assembler's
    /// form): the backward-Euler residual term `-h f_d(q_s + h v)` has the
    /// Jacobian in `v` that the function returns,
    /// `-h velocity_jacobian - h² position_jacobian` with the exact position
    /// Jacobian, against central differences in every coordinate (the
    /// arc-length ones included) to 1e-6 relative; that matrix is
    /// symmetric; the clamped position Jacobian is negative semi-definite.
    #[test]
    fn dissipation_over_step_jacobian_matches_finite_differences(
        dir in prop::array::uniform3(-1.0f64..1.0),
        ratio in 0.8f64..1.2,
        du in 1e-3f64..4e-3,
        vel in prop::array::uniform8(-0.5f64..0.5),
        log_h in -5.0f64..-2.0,
    ) {
        prop_assume!(dir.iter().map(|d| d * d).sum::<f64>() > 0.01);
        let h = 10f64.powf(log_h);
        let qs = config(dir, ratio, du, [0.1, 0.2, 0.3]);
        // Velocities that move the nodes by at most a tenth of the
        // segment over the step (up to 0.5 m/s).
        let v = SVector::<f64, 8>::from(vel) * (0.2 * du / h).min(1.0);
        let term = |v: &SVector<f64, 8>| -> SVector<f64, 8> {
            let q = qs + v * h;
            -stretch::dissipation_over_step(K_D, &q, &qs, v, h, Hessian::Skip).force * h
        };
        let d = stretch::dissipation_over_step(K_D, &(qs + v * h), &qs, &v, h, Hessian::Exact);
        let analytic = -d.velocity_jacobian * h - d.position_jacobian * (h * h);
        // A velocity step that moves the nodes by 1e-9 m over the step.
        let fd = fd_jacobian(term, &v, 1e-9 / h);
        let scale = K_D * h / du;
        prop_assert!(rel_error(&fd, &analytic, scale) < 1e-6,
            "{}", rel_error(&fd, &analytic, scale));
        prop_assert!((analytic - analytic.transpose()).norm() <= 1e-12 * analytic.norm());
        let p =
            stretch::dissipation_over_step(K_D, &(qs + v * h), &qs, &v, h, Hessian::Projected);
        let lmax = p.position_jacobian.symmetric_eigenvalues().max();
        prop_assert!(lmax <= 1e-9 * p.position_jacobian.norm().max(1e-300), "{lmax}");
    }
}

/// The step increment is zero for any rigid motion of the segment over the
/// step (a finite rotation of 40° and a translation, and sliding of the
/// yarn through both ends), where the rate form `∇ε(q) q̇` at the end of
/// the step is not (it sees the finite rotation's chord velocity); for a
/// stretching motion both forms agree to first order in `h`.
#[test]
fn dissipation_over_step_is_zero_for_rigid_motion_and_first_order_in_h() {
    let qs = config([0.3, 0.5, -0.2], 1.05, 2e-3, [0.001, 0.002, 0.0]);
    let h = 1e-2;
    let axis = nalgebra::Unit::new_normalize(Vector3::new(0.3, 2.0, -1.0));
    let rot = nalgebra::Rotation3::from_axis_angle(&axis, 40f64.to_radians());
    let t = Vector3::new(0.4, -1.0, 0.7) * 1e-3;
    let mut q = qs;
    for a in 0..2 {
        let x = rot * Vector3::new(qs[4 * a], qs[4 * a + 1], qs[4 * a + 2]) + t;
        for i in 0..3 {
            q[4 * a + i] = x[i];
        }
        q[4 * a + 3] += 0.3e-3; // sliding by 0.3 mm
    }
    let qdot = (q - qs) / h;
    let d = stretch::dissipation_over_step(K_D, &q, &qs, &qdot, h, Hessian::Exact);
    let scale = K_D * 2e-3 / 2e-3; // |f| for a unit strain rate
    assert!(d.strain_rate[0].abs() < 1e-12, "{}", d.strain_rate[0]);
    assert!(d.force.norm() < 1e-12 * scale);
    let rate_form = dissipation(K_D, &stretch::strain(&q), &stretch::measure(&q), &qdot);
    assert!(
        rate_form.strain_rate[0].abs() > 1.0,
        "{}",
        rate_form.strain_rate[0]
    );
    // Stretching at 2/s along the chord while turning at 3 rad/s: the two
    // rates differ by O(h).
    let chord = Vector3::new(qs[4] - qs[0], qs[5] - qs[1], qs[6] - qs[2]);
    let perp = chord.cross(&Vector3::z()).normalize() * chord.norm();
    let vb = chord * 2.0 + perp * 3.0;
    let qdot = SVector::from([0.0, 0.0, 0.0, 0.0, vb.x, vb.y, vb.z, 0.0]);
    let gap = |h: f64| {
        let q = qs + qdot * h;
        let a =
            stretch::dissipation_over_step(K_D, &q, &qs, &qdot, h, Hessian::Skip).strain_rate[0];
        let b = dissipation(K_D, &stretch::strain(&q), &stretch::measure(&q), &qdot).strain_rate[0];
        (a - b).abs()
    };
    let (g1, g2) = (gap(1e-3), gap(1e-4));
    assert!(g1 > 0.0 && (g1 / g2 - 10.0).abs() < 0.5, "{g1} {g2}");
    // At h = 0 (a state's own dissipation) it is the rate form at q.
    let at = stretch::dissipation_over_step(K_D, &qs, &qs, &qdot, 0.0, Hessian::Skip);
    let rate_form = dissipation(K_D, &stretch::strain(&qs), &stretch::measure(&qs), &qdot);
    assert_eq!(at.strain_rate, rate_form.strain_rate);
    assert!((at.force - rate_form.force).norm() <= 1e-15 * rate_form.force.norm());
    assert!((at.potential - rate_form.potential).abs() <= 1e-15 * rate_form.potential);
}
