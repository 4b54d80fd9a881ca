//! The PSD Hessian approximations used by the system matrix
//! (`elastic_projected`, `stretch::energy_projected`,
//! `bending::energy_projected`, `Shear::elastic_projected`): same energy and
//! gradient as the exact elements, a Hessian that is positive semi-definite,
//! never softer than the exact one (`H⁺ - H ⪰ 0`), and equal to it where
//! nothing needs projecting.

use nalgebra::{SMatrix, SVector, Vector3};
use weft_potentials::element::{elastic_projected_generic, symmetric_eigen};
use weft_potentials::shear::{Jamming, SMALL_ANGLE_THRESHOLD, Shear};
use weft_potentials::testing::{rel_error, xorshift};
use weft_potentials::{Hessian, bending, elastic, stretch};

/// Smallest eigenvalue of a symmetric matrix.
fn min_eig<const N: usize>(a: &SMatrix<f64, N, N>) -> f64 {
    symmetric_eigen(a).0.min()
}

fn unit(rng: &mut impl FnMut() -> f64) -> Vector3<f64> {
    loop {
        let v = Vector3::new(rng(), rng(), rng());
        if v.norm() > 0.2 && v.norm() < 1.0 {
            return v.normalize();
        }
    }
}

/// Checks the three properties on one element; returns (min eigenvalue of
/// H⁺ / |H⁺|, min eigenvalue of (H⁺ - H) / |H|).
fn check<const N: usize>(
    exact: &weft_potentials::ElementEval<N>,
    proj: &weft_potentials::ElementEval<N>,
    what: &str,
) -> (f64, f64) {
    assert!(
        (proj.energy - exact.energy).abs() <= 1e-14 * exact.energy.abs().max(1e-300),
        "{what}: energy differs"
    );
    let ge = rel_error(&proj.gradient, &exact.gradient, 1e-300);
    assert!(ge <= 1e-13, "{what}: gradient differs by {ge:e}");
    let scale = proj.hessian.norm().max(1e-300);
    let psd = min_eig(&proj.hessian) / scale;
    let stiffer = min_eig(&(proj.hessian - exact.hessian)) / exact.hessian.norm().max(1e-300);
    assert!(psd >= -1e-12, "{what}: projected Hessian not PSD ({psd:e})");
    assert!(
        stiffer >= -1e-12,
        "{what}: projected Hessian softer than the exact one ({stiffer:e})"
    );
    (psd, stiffer)
}

#[test]
fn stretch_projection_is_psd_stiffer_and_matches_generic_clamp() {
    let mut rng = xorshift(0x5eed_1234);
    let k_s = 500.0;
    let mut indefinite = 0;
    for _ in 0..500 {
        let du = 1e-3 * (1.0 + 0.5 * rng());
        let ratio = 1.0 + 0.4 * rng(); // compressed and stretched chords
        let xa = Vector3::new(rng(), rng(), rng()) * 1e-2;
        let xb = xa + unit(&mut rng) * (du * ratio);
        let ua = 0.01 * rng();
        let q = SVector::<f64, 8>::from([xa.x, xa.y, xa.z, ua, xb.x, xb.y, xb.z, ua + du]);
        let exact = elastic(k_s, &stretch::strain(&q), &stretch::measure(&q));
        if min_eig(&exact.hessian) < -1e-9 * exact.hessian.norm() {
            indefinite += 1;
        }
        let proj = stretch::energy_projected(k_s, &q);
        check(&exact, &proj, "stretch");
        // The closed-form clamp equals the generic eigen-projection.
        let generic =
            elastic_projected_generic(k_s, &stretch::strain(&q), &stretch::measure(&q)).hessian;
        let e = rel_error(&proj.hessian, &generic, 1e-300);
        assert!(
            e <= 1e-9,
            "closed-form clamp differs from eigen clamp by {e:e}"
        );
    }
    // The exact Hessian really is indefinite for compressed segments (so the
    // projection does something).
    assert!(
        indefinite > 100,
        "only {indefinite} indefinite exact Hessians"
    );
}

#[test]
fn stretch_projection_of_a_taut_aligned_segment_adds_only_second_order_terms() {
    // Straight segment along x stretched by ε: the exact Hessian's chord-normal
    // directions are PSD, the (chord, Δu) block is clamped and k ε²/Ω ∇Ω∇Ωᵀ
    // added; both changes vanish as ε → 0, so H⁺ → H.
    let k_s = 500.0;
    let du = 1e-3;
    let mut last = f64::INFINITY;
    for eps in [1e-1, 1e-2, 1e-3, 1e-4] {
        let q = SVector::<f64, 8>::from([0.0, 0.0, 0.0, 0.0, du * (1.0 + eps), 0.0, 0.0, du]);
        let exact = elastic(k_s, &stretch::strain(&q), &stretch::measure(&q));
        let proj = stretch::energy_projected(k_s, &q);
        let d = rel_error(&proj.hessian, &exact.hessian, 1e-300);
        assert!(d < 2.0 * eps, "ε = {eps}: |H⁺ - H|/|H| = {d:e}");
        assert!(d < last, "difference does not shrink with the strain");
        last = d;
    }
}

fn bending_config(rng: &mut impl FnMut() -> f64, max_angle: f64) -> SVector<f64, 12> {
    let t = unit(rng);
    let p = unit(rng).cross(&t).normalize();
    let theta = max_angle * 0.5 * (1.0 + rng());
    let l1 = 1e-3 * (1.0 + 0.3 * rng());
    let l2 = 1e-3 * (1.0 + 0.3 * rng());
    let x0 = Vector3::new(rng(), rng(), rng()) * 1e-2;
    let x1 = x0 + t * l1;
    let x2 = x0 - (t * theta.cos() + p * theta.sin()) * l2;
    let s0 = 0.01 * rng();
    // Rest lengths between 0.7 and 1.3 times the chords (compressed and
    // stretched).
    let s1 = s0 + l1 * (1.0 + 0.3 * rng());
    let s2 = s0 - l2 * (1.0 + 0.3 * rng());
    SVector::from([
        x0.x, x0.y, x0.z, s0, x1.x, x1.y, x1.z, s1, x2.x, x2.y, x2.z, s2,
    ])
}

#[test]
fn bending_projection_is_psd_and_stiffer_in_both_regimes() {
    let mut rng = xorshift(0xbead_5eed);
    let k_b = 1e-5;
    let th = bending::DEFAULT_THRESHOLD;
    let (mut small, mut large, mut indefinite) = (0, 0, 0);
    for i in 0..400 {
        let max_angle = if i % 2 == 0 { 0.08 } else { 1.5 };
        let q = bending_config(&mut rng, max_angle);
        let exact = bending::energy(k_b, &q, th);
        if min_eig(&exact.hessian) < -1e-9 * exact.hessian.norm() {
            indefinite += 1;
        }
        let proj = bending::energy_projected(k_b, &q, th);
        check(&exact, &proj, "bending");
        if bending::uses_small_angle(&q, th) {
            small += 1;
        } else {
            large += 1;
        }
    }
    assert!(small > 50 && large > 50, "small {small}, large {large}");
    assert!(
        indefinite > 50,
        "only {indefinite} indefinite exact Hessians"
    );
}

fn shear_config(rng: &mut impl FnMut() -> f64, psi: f64) -> SVector<f64, 9> {
    let a = unit(rng);
    let p = unit(rng).cross(&a).normalize();
    let phi = std::f64::consts::FRAC_PI_2 + psi;
    let b = a * phi.cos() + p * phi.sin();
    let l = 1e-3;
    let x0 = Vector3::new(rng(), rng(), rng()) * 1e-2;
    let xa = x0 + a * l * (1.0 + 0.2 * rng());
    let xb = x0 + b * l * (1.0 + 0.2 * rng());
    SVector::from([x0.x, x0.y, x0.z, xa.x, xa.y, xa.z, xb.x, xb.y, xb.z])
}

#[test]
fn shear_projection_is_psd_and_stiffer_with_and_without_jamming() {
    let mut rng = xorshift(0x0dd_ba11);
    let spacing = 1e-3;
    let jam = Jamming::from_geometry(0.25e-3, spacing).expect("valid geometry");
    let plain = Shear::new(0.05, 0.0, spacing, SMALL_ANGLE_THRESHOLD, None).expect("valid");
    let jammed = Shear::new(0.05, 0.0, spacing, SMALL_ANGLE_THRESHOLD, Some(jam)).expect("valid");
    let mut indefinite = 0;
    for i in 0..400 {
        // Shear angles from 0 to past the jamming onset.
        let psi = match i % 3 {
            0 => 0.08 * rng(),
            1 => 0.6 * rng(),
            _ => (jam.onset + 0.5 * (jam.lock - jam.onset) * (1.0 + rng())) * rng().signum(),
        };
        let q = shear_config(&mut rng, psi);
        for el in [&plain, &jammed] {
            let exact = el.elastic(&q);
            if min_eig(&exact.hessian) < -1e-9 * exact.hessian.norm() {
                indefinite += 1;
            }
            check(&exact, &el.elastic_projected(&q), "shear");
        }
    }
    assert!(
        indefinite > 50,
        "only {indefinite} indefinite exact Hessians"
    );
}

/// A random generalised velocity of shape `N` (m/s), up to 0.1 m/s.
fn velocity<const N: usize>(rng: &mut impl FnMut() -> f64) -> SVector<f64, N> {
    SVector::from_fn(|_, _| 0.1 * rng())
}

/// The assembler's fused bending path (`bending::elastic_and_dissipation`,
/// one strain evaluation; without the 12 x 12 strain Hessians when
/// projected) returns the numbers of `energy_projected` (or `energy`) and
/// `damping_with_jacobian`, bit for bit, below and above the small-angle
/// threshold, with and without the position Jacobian; and no dissipation
/// for `k_d = 0`.
#[test]
fn fused_bending_terms_equal_the_separate_ones_bit_for_bit() {
    let mut rng = xorshift(0xf00d_cafe);
    let (k_b, k_d) = (1e-5, 3e-7);
    let th = bending::DEFAULT_THRESHOLD;
    let (mut small, mut large) = (0, 0);
    for i in 0..400 {
        let max_angle = if i % 2 == 0 { 0.08 } else { 1.5 };
        let q = bending_config(&mut rng, max_angle);
        let qdot = velocity::<12>(&mut rng);
        let pj = i % 4 < 2;
        let damping = Some(bending::damping_with_jacobian(k_d, &q, &qdot, th, pj));
        for (mode, ev) in [
            (Hessian::Projected, bending::energy_projected(k_b, &q, th)),
            (Hessian::Exact, bending::energy(k_b, &q, th)),
        ] {
            let fused = bending::elastic_and_dissipation(k_b, k_d, &q, &qdot, th, mode, pj);
            assert_eq!(fused, (ev, damping));
            let undamped = bending::elastic_and_dissipation(k_b, 0.0, &q, &qdot, th, mode, pj);
            assert_eq!(undamped, (ev, None));
            // Without the matrix: the same energy, gradient, dissipative
            // force and potential, bit for bit.
            let (es, ds) =
                bending::elastic_and_dissipation(k_b, k_d, &q, &qdot, th, Hessian::Skip, pj);
            let d = damping.as_ref().expect("damped");
            let ds = ds.expect("damped");
            assert_eq!((es.energy, es.gradient), (ev.energy, ev.gradient));
            assert_eq!((ds.force(), ds.potential()), (d.force(), d.potential()));
        }
        if bending::uses_small_angle(&q, th) {
            small += 1;
        } else {
            large += 1;
        }
    }
    assert!(small > 50 && large > 50, "small {small}, large {large}");
}

/// The same for the crossing shear (`Shear::elastic_and_dissipation`
/// against `elastic_projected` or `elastic` and
/// `dissipation_with_jacobian`), in the small-angle, scalar and jammed
/// regimes.
#[test]
fn fused_shear_terms_equal_the_separate_ones_bit_for_bit() {
    let mut rng = xorshift(0x5ca1_ab1e);
    let spacing = 1e-3;
    let jam = Jamming::from_geometry(0.25e-3, spacing).expect("valid geometry");
    let damped = Shear::new(0.05, 2e-4, spacing, SMALL_ANGLE_THRESHOLD, Some(jam)).expect("valid");
    let undamped = Shear::new(0.05, 0.0, spacing, SMALL_ANGLE_THRESHOLD, None).expect("valid");
    let (mut small, mut large) = (0, 0);
    for i in 0..300 {
        let psi = match i % 3 {
            0 => 0.08 * rng(),
            1 => 0.6 * rng(),
            _ => (jam.onset + 0.5 * (jam.lock - jam.onset) * (1.0 + rng())) * rng().signum(),
        };
        let q = shear_config(&mut rng, psi);
        let qdot = velocity::<9>(&mut rng);
        let pj = i % 2 == 0;
        let damping = Some(damped.dissipation_with_jacobian(&q, &qdot, pj));
        for mode in [Hessian::Projected, Hessian::Exact] {
            let (ev, ev0) = if mode == Hessian::Exact {
                (damped.elastic(&q), undamped.elastic(&q))
            } else {
                (damped.elastic_projected(&q), undamped.elastic_projected(&q))
            };
            assert_eq!(
                damped.elastic_and_dissipation(&q, &qdot, mode, pj),
                (ev, damping)
            );
            assert_eq!(
                undamped.elastic_and_dissipation(&q, &qdot, mode, pj),
                (ev0, None)
            );
            // Without the matrix: the same energy, gradient, dissipative
            // force and potential, bit for bit.
            let (es, ds) = damped.elastic_and_dissipation(&q, &qdot, Hessian::Skip, pj);
            let d = damping.as_ref().expect("damped");
            let ds = ds.expect("damped");
            assert_eq!((es.energy, es.gradient), (ev.energy, ev.gradient));
            assert_eq!((ds.force(), ds.potential()), (d.force(), d.potential()));
        }
        if weft_potentials::shear::shear_angle(&q).abs() < SMALL_ANGLE_THRESHOLD {
            small += 1;
        } else {
            large += 1;
        }
    }
    assert!(small > 50 && large > 50, "small {small}, large {large}");
}

/// The same for the StVK membrane triangle (`Stvk::elastic_and_dissipation`
/// against `elastic`, `elastic_projected` and `dissipation`) and the
/// discrete-shell hinge (`Hinge::elastic_and_dissipation` against its
/// parts), on stretched, compressed and sheared triangles and folded
/// hinges: every mode gives the separate functions' energy, gradient,
/// dissipative force and potential bit for bit; `Exact` and `Projected`
/// also their Hessians and velocity Jacobians, and the position Jacobian
/// when asked for (zero when not).
#[test]
fn fused_triangle_and_hinge_terms_equal_the_separate_ones_bit_for_bit() {
    use weft_potentials::hinge::Hinge;
    use weft_potentials::stvk::{Stvk, isotropic};
    let mut rng = xorshift(0x7e1a_b0b5);
    let rest = [[0.0, 0.0], [0.01, 0.0], [0.002, 0.008]];
    let tri = Stvk::new(rest, &isotropic(300.0, 500.0), &isotropic(30.0, 20.0)).expect("valid");
    let hinge_rest = [
        [0.0, 0.0, 0.0],
        [0.01, 0.0, 0.0],
        [0.004, 0.008, 0.0],
        [0.006, -0.009, 0.0],
    ];
    let hinge = Hinge::new(hinge_rest, 1e-5).expect("valid");
    let zero9 = SMatrix::<f64, 9, 9>::zeros();
    let zero12 = SMatrix::<f64, 12, 12>::zeros();
    let mut compressed = 0;
    for i in 0..200 {
        let pj = i % 2 == 0;
        // A triangle deformed by up to ±40 % per axis, turned and moved.
        let a = SMatrix::<f64, 3, 3>::identity() + SMatrix::from_fn(|_, _| 0.4 * rng());
        let q = SVector::<f64, 9>::from_fn(|k, _| {
            let x = a * Vector3::new(rest[k / 3][0], rest[k / 3][1], 0.0);
            x[k % 3] + 0.01 * rng()
        });
        let qdot = velocity::<9>(&mut rng);
        if tri.green_strain(&q).value.iter().any(|&e| e < 0.0) {
            compressed += 1;
        }
        let d = tri.dissipation(&q, &qdot).expect("damped");
        for (mode, ev) in [
            (Hessian::Exact, tri.elastic(&q)),
            (Hessian::Projected, tri.elastic_projected(&q)),
        ] {
            let (ef, df) = tri.elastic_and_dissipation(&q, &qdot, mode, pj);
            let df = df.expect("damped");
            assert_eq!(ef, ev);
            assert_eq!((df.force, df.potential), (d.force, d.potential));
            assert_eq!(df.velocity_jacobian, d.velocity_jacobian);
            let pj_expected = if pj { d.position_jacobian } else { zero9 };
            assert_eq!(df.position_jacobian, pj_expected);
            let (es, ds) = tri.elastic_and_dissipation(&q, &qdot, Hessian::Skip, pj);
            let ds = ds.expect("damped");
            assert_eq!((es.energy, es.gradient), (ev.energy, ev.gradient));
            assert_eq!((ds.force, ds.potential), (d.force, d.potential));
        }
        // A hinge folded by up to ±1.5 rad about its edge, moved.
        let fold = 1.5 * rng();
        let (s, c) = fold.sin_cos();
        let p3 = hinge_rest[3];
        let moved = [
            hinge_rest[0],
            hinge_rest[1],
            hinge_rest[2],
            [p3[0], c * p3[1], s * p3[1]],
        ];
        let qh = SVector::<f64, 12>::from_fn(|k, _| moved[k / 3][k % 3] + 0.001 * rng());
        let qhdot = velocity::<12>(&mut rng);
        let k_d = 3e-7;
        let dh = hinge.dissipation(k_d, &qh, &qhdot);
        for (mode, ev) in [
            (Hessian::Exact, hinge.elastic(&qh)),
            (Hessian::Projected, hinge.elastic_projected(&qh)),
        ] {
            let (ef, df) = hinge.elastic_and_dissipation(k_d, &qh, &qhdot, mode, pj);
            let df = df.expect("damped");
            assert_eq!(ef, ev);
            assert_eq!((df.force, df.potential), (dh.force, dh.potential));
            assert_eq!(df.velocity_jacobian, dh.velocity_jacobian);
            let pj_expected = if pj { dh.position_jacobian } else { zero12 };
            assert_eq!(df.position_jacobian, pj_expected);
            let (es, ds) = hinge.elastic_and_dissipation(k_d, &qh, &qhdot, Hessian::Skip, pj);
            let ds = ds.expect("damped");
            assert_eq!((es.energy, es.gradient), (ev.energy, ev.gradient));
            assert_eq!((ds.force, ds.potential), (dh.force, dh.potential));
            let (_, none) = hinge.elastic_and_dissipation(0.0, &qh, &qhdot, mode, pj);
            assert!(none.is_none());
        }
    }
    assert!(compressed > 20, "only {compressed} compressed triangles");
}
