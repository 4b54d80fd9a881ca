//! Crossing shear element [SBO17 eq. 22-23, §5.3; CLMMO14] with jamming:
//! derivatives against finite differences (scalar and small-angle strains,
//! jammed energy), closed-form strain rate, good damping, the small-angle
//! switch, and the jamming profile.

use nalgebra::{SMatrix, SVector, Vector3};
use proptest::prelude::*;
use std::f64::consts::FRAC_PI_2;
use weft_potentials::element::symmetric_eigen;
use weft_potentials::shear::{
    self, DOFS, Jamming, SMALL_ANGLE_THRESHOLD, Shear, ShearDissipation, ShearParamError,
};
use weft_potentials::testing::{fd_gradient, fd_jacobian, rel_error};
use weft_potentials::{dissipation, elastic, stretch};

type Q = SVector<f64, DOFS>;

/// Illustrative shear stiffness (N) and damping (N·s); the checks are
/// relative, so the values only set the scale.
const K_X: f64 = 0.5;
const K_D: f64 = 1e-4;
/// Yarn radius and spacing in the [SBO17 Table 1] ranges (m).
const R: f64 = 0.25e-3;
const L: f64 = 1.0e-3;

fn element(jam: bool) -> Shear {
    let j = jam.then(|| Jamming::from_geometry(R, L).unwrap());
    Shear::new(K_X, K_D, L, SMALL_ANGLE_THRESHOLD, j).unwrap()
}

/// A crossing at `x0` with warp chord of length `la` along `dir_a`, weft
/// chord of length `lb` at angle `φ = π/2 + eps` from it in the plane spanned
/// by `dir_a` and `dir_p`.
fn config(x0: [f64; 3], dir_a: [f64; 3], dir_p: [f64; 3], la: f64, lb: f64, eps: f64) -> Q {
    let a = Vector3::from(dir_a).normalize();
    let p = Vector3::from(dir_p);
    let p = (p - a * a.dot(&p)).normalize();
    let phi = FRAC_PI_2 + eps;
    let b = a * phi.cos() + p * phi.sin();
    let x0 = Vector3::from(x0);
    let xa = x0 + a * la;
    let xb = x0 + b * lb;
    Q::from([x0.x, x0.y, x0.z, xa.x, xa.y, xa.z, xb.x, xb.y, xb.z])
}

/// Axis-aligned crossing with exactly zero shear (no rounding in φ).
fn exact_right_angle(la: f64, lb: f64) -> Q {
    Q::from([0.0, 0.0, 0.0, la, 0.0, 0.0, 0.0, lb, 0.0])
}

fn well_conditioned(d: &[f64; 3]) -> bool {
    Vector3::from(*d).norm() > 0.2
}

fn independent(a: &[f64; 3], p: &[f64; 3]) -> bool {
    let (a, p) = (Vector3::from(*a), Vector3::from(*p));
    a.cross(&p).norm() > 0.2 * a.norm() * p.norm()
}

/// FD checks of the element energy (gradient) and gradient (Hessian).
/// Floors: the natural scales `L k_x / ℓ · 1e-3` (N) and `L k_x / ℓ² · 1e-3`
/// (N/m). Returns (gradient error, Hessian error).
fn element_fd_errors(el: &Shear, q: &Q, lmin: f64) -> (f64, f64) {
    let e = el.elastic(q);
    let h = 1e-8;
    let g_fd = fd_gradient(|q| el.elastic(q).energy, q, h);
    let h_fd = fd_jacobian(|q| el.elastic(q).gradient, q, h);
    let ge = rel_error(&e.gradient, &g_fd, L * K_X / lmin * 1e-3);
    let he = rel_error(&e.hessian, &h_fd, L * K_X / (lmin * lmin) * 1e-3);
    assert!((e.hessian - e.hessian.transpose()).norm() <= 1e-12 * e.hessian.norm().max(1e-300));
    (ge, he)
}

/// Strain Jacobian vs FD of the strain, each strain Hessian vs FD of the
/// corresponding Jacobian row. Floors `1/ℓ` and `1/ℓ²`.
fn strain_fd_errors<const M: usize>(
    f: impl Fn(&Q) -> weft_potentials::Strain<M, DOFS>,
    q: &Q,
    lmin: f64,
) -> (f64, f64) {
    let h = 1e-8;
    let s = f(q);
    let j_fd = fd_jacobian(|q| f(q).value, q, h);
    let je = rel_error(&s.jacobian, &j_fd, 1.0 / lmin);
    let mut he: f64 = 0.0;
    for i in 0..M {
        let h_fd: SMatrix<f64, DOFS, DOFS> =
            fd_jacobian(|q| f(q).jacobian.row(i).transpose(), q, h);
        he = he.max(rel_error(&s.hessians[i], &h_fd, 1.0 / (lmin * lmin)));
        assert!(
            (s.hessians[i] - s.hessians[i].transpose()).norm()
                <= 1e-12 * s.hessians[i].norm().max(1e-300)
        );
    }
    (je, he)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Scalar strain `φ - π/2` over random crossings (chords 1-4 mm, shear
    /// angle up to ±1.2 rad): the value matches the constructed angle to
    /// 1e-12, the Jacobian and the Hessian match central differences (step
    /// 1e-8 m) to 1e-6 relative (floors 1/ℓ, 1/ℓ²).
    #[test]
    fn scalar_strain_matches_finite_differences(
        x0 in prop::array::uniform3(-0.01f64..0.01),
        da in prop::array::uniform3(-1.0f64..1.0).prop_filter("nz", well_conditioned),
        dp in prop::array::uniform3(-1.0f64..1.0).prop_filter("nz", well_conditioned),
        la in 1e-3f64..4e-3, lb in 1e-3f64..4e-3, eps in -1.2f64..1.2,
    ) {
        prop_assume!(independent(&da, &dp));
        let q = config(x0, da, dp, la, lb, eps);
        let s = shear::scalar_strain(&q);
        prop_assert!((s.value[0] - eps).abs() < 1e-12);
        prop_assert!((shear::shear_angle(&q) - eps).abs() < 1e-12);
        let (je, he) = strain_fd_errors(shear::scalar_strain, &q, la.min(lb));
        prop_assert!(je < 1e-6, "jacobian err {}", je);
        prop_assert!(he < 1e-6, "hessian err {}", he);
    }

    /// Small-angle vector strain over random crossings with shear angle up to
    /// ±0.3 rad: `s = -n̂ tan ε` to 1e-12 (so `|s| = tan|φ - π/2|`), Jacobian
    /// and the three Hessians match central differences to 1e-6 relative
    /// (floors 1/ℓ, 1/ℓ²).
    #[test]
    fn small_angle_strain_matches_finite_differences(
        x0 in prop::array::uniform3(-0.01f64..0.01),
        da in prop::array::uniform3(-1.0f64..1.0).prop_filter("nz", well_conditioned),
        dp in prop::array::uniform3(-1.0f64..1.0).prop_filter("nz", well_conditioned),
        la in 1e-3f64..4e-3, lb in 1e-3f64..4e-3, eps in -0.3f64..0.3,
    ) {
        prop_assume!(independent(&da, &dp));
        let q = config(x0, da, dp, la, lb, eps);
        let s = shear::small_angle_strain(&q);
        let ea = Vector3::new(q[3] - q[0], q[4] - q[1], q[5] - q[2]);
        let eb = Vector3::new(q[6] - q[0], q[7] - q[1], q[8] - q[2]);
        let n = ea.cross(&eb).normalize();
        prop_assert!((s.value - n * (-eps.tan())).norm() < 1e-12);
        let (je, he) = strain_fd_errors(shear::small_angle_strain, &q, la.min(lb));
        prop_assert!(je < 1e-6, "jacobian err {}", je);
        prop_assert!(he < 1e-6, "hessian err {}", he);
    }

    /// Element energy (with the strain selected per the threshold and with
    /// jamming) over shear angles up to ±1.3 rad, i.e. through the jammed
    /// range and past the locking angle (1.065 rad for R/L = 0.25): gradient
    /// and Hessian vs central differences to 1e-6 relative (floors
    /// `L k_x/ℓ·1e-3`, `L k_x/ℓ²·1e-3`). Angles within 1e-4 rad of the
    /// threshold are excluded (the energy switches there, see
    /// `elastic_force_continuous_across_threshold`).
    #[test]
    fn element_derivatives_match_finite_differences(
        x0 in prop::array::uniform3(-0.01f64..0.01),
        da in prop::array::uniform3(-1.0f64..1.0).prop_filter("nz", well_conditioned),
        dp in prop::array::uniform3(-1.0f64..1.0).prop_filter("nz", well_conditioned),
        la in 1e-3f64..4e-3, lb in 1e-3f64..4e-3, eps in -1.3f64..1.3,
        jam in any::<bool>(),
    ) {
        prop_assume!(independent(&da, &dp));
        prop_assume!((eps.abs() - SMALL_ANGLE_THRESHOLD).abs() > 1e-4);
        let q = config(x0, da, dp, la, lb, eps);
        let (ge, he) = element_fd_errors(&element(jam), &q, la.min(lb));
        prop_assert!(ge < 1e-6, "gradient err {}", ge);
        prop_assert!(he < 1e-6, "hessian err {}", he);
    }

    /// `∇ε q̇` of the scalar strain equals the independent closed form
    /// `φ̇ = -d/dt(â·b̂)/sin φ` to 1e-9 relative (floor `|q̇|/ℓ`).
    #[test]
    fn strain_rate_matches_closed_form(
        da in prop::array::uniform3(-1.0f64..1.0).prop_filter("nz", well_conditioned),
        dp in prop::array::uniform3(-1.0f64..1.0).prop_filter("nz", well_conditioned),
        la in 1e-3f64..4e-3, lb in 1e-3f64..4e-3, eps in -1.2f64..1.2,
        qdot in prop::array::uniform9(-1.0f64..1.0),
    ) {
        prop_assume!(independent(&da, &dp));
        let q = config([0.0; 3], da, dp, la, lb, eps);
        let qdot = Q::from(qdot);
        let rate = shear::scalar_strain(&q).rate(&qdot)[0];
        let closed = shear::strain_rate_closed_form(&q, &qdot);
        let scale = closed.abs().max(qdot.norm() / la.min(lb));
        prop_assert!((rate - closed).abs() <= 1e-9 * scale, "{} vs {}", rate, closed);
    }

    /// The clamped position Jacobian of the damping force is negative
    /// semi-definite (largest eigenvalue ≤ 1e-12 of its norm) for both
    /// strains, random configurations and velocities [SBO18 §3.4], through
    /// the generic 9-coordinate path and through `Shear::dissipation`
    /// (clamped in the reduced chord variables); the velocity Jacobian
    /// likewise.
    #[test]
    fn clamped_damping_jacobians_are_nsd(
        da in prop::array::uniform3(-1.0f64..1.0).prop_filter("nz", well_conditioned),
        dp in prop::array::uniform3(-1.0f64..1.0).prop_filter("nz", well_conditioned),
        la in 1e-3f64..4e-3, lb in 1e-3f64..4e-3, eps in -1.0f64..1.0,
        qdot in prop::array::uniform9(-1.0f64..1.0),
    ) {
        prop_assume!(independent(&da, &dp));
        let q = config([0.0; 3], da, dp, la, lb, eps);
        let qdot = Q::from(qdot);
        let m = shear::measure(L);
        let d1 = dissipation(K_D, &shear::scalar_strain(&q), &m, &qdot);
        let d3 = dissipation(K_D, &shear::small_angle_strain(&q), &m, &qdot);
        for j in [d1.position_jacobian, d3.position_jacobian, d1.velocity_jacobian, d3.velocity_jacobian] {
            let (vals, _) = symmetric_eigen(&j);
            prop_assert!(vals.max() <= 1e-12 * j.norm().max(1e-300), "eigenvalues {}", vals);
        }
        // The element's own dissipation (reduced variables, clamp in
        // (e_a, e_b)), on both sides of the threshold: force and velocity
        // Jacobian equal the 9-coordinate ones (1e-12 relative to |V||q̇| and
        // |V|), the clamped position Jacobian is NSD.
        let el = element(false);
        for qq in [q, config([0.0; 3], da, dp, la, lb, 0.08 * eps)] {
            let de = el.dissipation(&qq, &qdot);
            let (f9, v9) = match &de {
                ShearDissipation::Scalar(_) => {
                    let d = dissipation(K_D, &shear::scalar_strain(&qq), &m, &qdot);
                    (d.force, d.velocity_jacobian)
                }
                ShearDissipation::SmallAngle(_) => {
                    let d = dissipation(K_D, &shear::small_angle_strain(&qq), &m, &qdot);
                    (d.force, d.velocity_jacobian)
                }
            };
            // The force is linear in q̇ (f = V q̇ with V the velocity
            // Jacobian), so its round-off is relative to |V||q̇|, not to
            // |f|, which cancels towards 0 when q̇ is nearly orthogonal to
            // the strain gradient.
            let f_scale = f9.norm() + v9.norm() * qdot.norm();
            prop_assert!((de.force() - f9).norm() <= 1e-12 * f_scale.max(1e-300));
            prop_assert!((de.velocity_jacobian() - v9).norm() <= 1e-12 * v9.norm());
            let pj = de.position_jacobian();
            let (vals, _) = symmetric_eigen(&pj);
            prop_assert!(vals.max() <= 1e-12 * pj.norm().max(1e-300), "eigenvalues {}", vals);
            prop_assert!((pj - pj.transpose()).norm() <= 1e-12 * pj.norm().max(1e-300));
            prop_assert!(de.potential() >= 0.0);
        }
        // The clamp is exercised: the unclamped stress-weighted Hessian
        // ε̇ ∇²ε of the angle is indefinite whenever ε̇ ≠ 0.
        let raw = shear::scalar_strain(&q).hessians[0] * d1.strain_rate[0];
        let (rv, _) = symmetric_eigen(&raw);
        if d1.strain_rate[0].abs() > 1e-3 {
            prop_assert!(rv.min() < 0.0 && rv.max() > 0.0, "{}", rv);
        }
    }
}

/// Deterministic special cases: exactly zero shear, just below and above the
/// small-angle threshold, near the jamming onset (below, above), inside the
/// jammed range, at and beyond the locking angle, for both signs of the shear.
/// Element gradient and Hessian vs central differences to 1e-6 (floors as in
/// the proptest), and the strain derivatives of the strain in use.
#[test]
fn derivatives_at_special_angles() {
    let el = element(true);
    let jam = el.jamming.unwrap();
    let t = SMALL_ANGLE_THRESHOLD;
    let mid = 0.5 * (jam.onset + jam.lock);
    let q0 = exact_right_angle(2e-3, 3e-3);
    assert_eq!(shear::shear_angle(&q0), 0.0);
    let (ge, he) = element_fd_errors(&el, &q0, 2e-3);
    assert!(ge < 1e-6 && he < 1e-6, "zero shear: {ge} {he}");
    let (je, hse) = strain_fd_errors(shear::small_angle_strain, &q0, 2e-3);
    assert!(je < 1e-6 && hse < 1e-6, "zero shear strain: {je} {hse}");
    let (je, hse) = strain_fd_errors(shear::scalar_strain, &q0, 2e-3);
    assert!(
        je < 1e-6 && hse < 1e-6,
        "zero shear scalar strain: {je} {hse}"
    );
    for sign in [1.0, -1.0] {
        for psi in [
            t - 1e-3,
            t + 1e-3,
            jam.onset - 1e-3,
            jam.onset + 1e-4,
            jam.onset + 1e-3,
            mid,
            jam.lock,
            jam.lock + 0.1,
        ] {
            let eps = sign * psi;
            let q = config(
                [1e-3, -2e-3, 0.5e-3],
                [0.3, 0.9, -0.2],
                [1.0, 0.1, 0.4],
                1.5e-3,
                2.5e-3,
                eps,
            );
            let (ge, he) = element_fd_errors(&el, &q, 1.5e-3);
            assert!(
                ge < 1e-6 && he < 1e-6,
                "eps {eps}: gradient {ge}, hessian {he}"
            );
            if shear::use_small_angle(&q, t) {
                let (je, hse) = strain_fd_errors(shear::small_angle_strain, &q, 1.5e-3);
                assert!(je < 1e-6 && hse < 1e-6, "eps {eps}: {je} {hse}");
            } else {
                let (je, hse) = strain_fd_errors(shear::scalar_strain, &q, 1.5e-3);
                assert!(je < 1e-6 && hse < 1e-6, "eps {eps}: {je} {hse}");
            }
        }
    }
    // The selector switches exactly at the threshold.
    let below = config(
        [0.0; 3],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        1e-3,
        1e-3,
        t - 1e-9,
    );
    let above = config(
        [0.0; 3],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        1e-3,
        1e-3,
        t + 1e-9,
    );
    assert!(shear::use_small_angle(&below, t));
    assert!(!shear::use_small_angle(&above, t));
    assert!(matches!(
        shear::select_strain(&below, t),
        shear::ShearStrain::SmallAngle(_)
    ));
    assert!(matches!(
        shear::select_strain(&above, t),
        shear::ShearStrain::Scalar(_)
    ));
}

/// Energies in closed form: `½ L k_x tan² ε` below the threshold,
/// `½ L k_x ε²` above it without jamming, `L k_x (½ε² + J(|ε|))` with
/// jamming; jamming changes nothing below its onset (to round-off, 1e-15
/// relative).
#[test]
fn energies_closed_form() {
    let plain = element(false);
    let jammed = element(true);
    let jam = jammed.jamming.unwrap();
    for eps in [-0.05, 0.02, 0.3, -0.4, 0.9, -1.2] {
        let q = config([0.0; 3], [1.0, 2.0, 0.5], [0.0, 1.0, -1.0], 2e-3, 1e-3, eps);
        let psi: f64 = eps.abs();
        let expected = if psi < SMALL_ANGLE_THRESHOLD {
            0.5 * L * K_X * psi.tan().powi(2)
        } else {
            0.5 * L * K_X * eps * eps
        };
        let e = plain.elastic(&q).energy;
        assert!(
            (e - expected).abs() <= 1e-12 * expected,
            "{eps}: {e} vs {expected}"
        );
        let ej = jammed.elastic(&q).energy;
        let (j, _, _) = jam.extra(psi);
        assert!((ej - (expected + L * K_X * j)).abs() <= 1e-12 * ej);
        if psi <= jam.onset {
            assert!((ej - e).abs() <= 1e-15 * e);
        } else {
            assert!(ej > e * 1.0000001, "jamming adds energy above the onset");
        }
    }
}

/// Force continuity across the small-angle switch (DESIGN §2): the elastic
/// force just below (vector strain, `V = ½Ωk tan²ε`) and just above (scalar,
/// `V = ½Ωk ε²`) the threshold differ by the factor
/// `tan ψ sec²ψ / ψ = 1.0102` at 5°; asserted: the relative jump equals this
/// prediction to 1e-5 and is below 1.1 %. The damping force of an in-plane
/// shear velocity jumps by `sec⁴ψ = 1.0154`; asserted to 1e-5 and below 1.6 %.
#[test]
fn forces_continuous_across_threshold() {
    let t = SMALL_ANGLE_THRESHOLD;
    let el = element(false);
    let (da, dp) = ([0.4, -0.3, 0.8], [1.0, 1.0, 0.0]);
    let qb = config([0.0; 3], da, dp, 2e-3, 3e-3, t - 1e-10);
    let qa = config([0.0; 3], da, dp, 2e-3, 3e-3, t + 1e-10);
    assert!(shear::use_small_angle(&qb, t) && !shear::use_small_angle(&qa, t));
    let (fb, fa) = (el.elastic(&qb).gradient, el.elastic(&qa).gradient);
    let jump = (fb - fa).norm() / fa.norm();
    let predicted = t.tan() / (t.cos() * t.cos()) / t - 1.0;
    assert!(
        (jump - predicted).abs() < 1e-5,
        "jump {jump} vs {predicted}"
    );
    assert!(jump < 0.011);
    // In-plane shear velocity: rotate x_b about the normal through x_0.
    let n = {
        let ea = Vector3::new(qb[3], qb[4], qb[5]);
        let eb = Vector3::new(qb[6], qb[7], qb[8]);
        ea.cross(&eb).normalize()
    };
    let vb = n.cross(&Vector3::new(qb[6], qb[7], qb[8])) * 100.0;
    let qdot = Q::from([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, vb.x, vb.y, vb.z]);
    let (db, da_) = (el.dissipation(&qb, &qdot), el.dissipation(&qa, &qdot));
    assert!(matches!(db, ShearDissipation::SmallAngle(_)));
    assert!(matches!(da_, ShearDissipation::Scalar(_)));
    let djump = (db.force() - da_.force()).norm() / da_.force().norm();
    let dpred = 1.0 / t.cos().powi(4) - 1.0;
    assert!(
        (djump - dpred).abs() < 1e-5,
        "damping jump {djump} vs {dpred}"
    );
    assert!(djump < 0.016);
}

/// [`shear::step_threshold`] and [`Shear::over_step`]: a step that starts
/// on one strain keeps it within `[θ_t/2, 2θ_t]`, so the 1.02 % force jump
/// of `forces_continuous_across_threshold` does not occur within a step;
/// the vector strain's band stops at the jamming onset; at `q = q_n` the
/// element selects what the plain threshold selects.
#[test]
fn over_step_holds_the_start_strain_across_the_switch() {
    let t = SMALL_ANGLE_THRESHOLD;
    let deg = std::f64::consts::PI / 180.0;
    let (da, dp) = ([0.4, -0.3, 0.8], [1.0, 1.0, 0.0]);
    let at = |eps: f64| config([0.0; 3], da, dp, 2e-3, 3e-3, eps);
    for jam in [false, true] {
        let el = element(jam);
        // Starts below 5° (either sign): the vector strain holds to 10°.
        for sign in [1.0, -1.0] {
            let held = el.over_step(&at(sign * (t - 0.2 * deg)));
            assert_eq!(held.threshold, 2.0 * t);
            for eps in [t + 1e-9, t + 2.0 * deg, 2.0 * t - 1e-6] {
                assert!(shear::use_small_angle(&at(sign * eps), held.threshold));
            }
            assert!(!shear::use_small_angle(
                &at(sign * (2.0 * t + 1e-6)),
                held.threshold
            ));
            // Starts above 5°: the scalar strain holds down to 2.5°.
            let held = el.over_step(&at(sign * (t + 0.2 * deg)));
            assert_eq!(held.threshold, 0.5 * t);
            for eps in [t - 1e-9, t - 2.0 * deg, 0.5 * t + 1e-6] {
                assert!(!shear::use_small_angle(&at(sign * eps), held.threshold));
            }
            assert!(shear::use_small_angle(
                &at(sign * (0.5 * t - 1e-6)),
                held.threshold
            ));
        }
        // Within the band the force is one strain's, continuous across 5°.
        let held = el.over_step(&at(t - 0.5 * deg));
        let (below, above) = (
            held.elastic(&at(t - 1e-10)).gradient,
            held.elastic(&at(t + 1e-10)).gradient,
        );
        let jump = (above - below).norm() / above.norm();
        assert!(
            jump < 1e-6,
            "jamming {jam}: force changes by {jump:e} across 5°"
        );
        // At q = q_n: the plain selection.
        for i in 0..=300 {
            let q = at(i as f64 * 0.05 * deg - 7.5 * deg);
            assert_eq!(
                shear::use_small_angle(&q, el.over_step(&q).threshold),
                shear::use_small_angle(&q, t)
            );
        }
    }
    // A jamming onset inside the band caps it: the vector strain never
    // meets jamming, as Shear::new requires.
    let early = Jamming::new(7.0 * deg, 30.0 * deg, 100.0).unwrap();
    let el = Shear::new(K_X, K_D, L, t, Some(early)).unwrap();
    assert_eq!(el.over_step(&at(1.0 * deg)).threshold, 7.0 * deg);
    assert_eq!(shear::step_threshold(&at(1.0 * deg), t, None), 2.0 * t);
}

fn rigid_velocities(q: &Q, t: Vector3<f64>, w: Vector3<f64>) -> Q {
    let mut qdot = Q::zeros();
    for k in 0..3 {
        let x = Vector3::new(q[3 * k], q[3 * k + 1], q[3 * k + 2]);
        let v = t + w.cross(&x);
        qdot[3 * k] = v.x;
        qdot[3 * k + 1] = v.y;
        qdot[3 * k + 2] = v.z;
    }
    qdot
}

/// Good damping [SBO18 eq. 1]. Rigid translation: zero force for both strains
/// (below 1e-12 of the force scale `L k_d |v|/ℓ²`). Rigid rotation: zero for
/// the scalar strain. Pure sliding is in the null space by construction (the
/// element has no `u, v` coordinates; nothing to test numerically).
/// Small-angle vector strain under rigid rotation `ω`: spurious rate
/// `ṡ = -(ω × n̂) tan ε` exactly (1e-10), so `|ṡ|/|ω| ≤ tan|ε| < tan 5°`
/// (8.7 %), zero at zero shear; a genuine shear rate of the same angular
/// speed gives `|ṡ|/|ω| = sec²ε ≥ 1`.
#[test]
fn good_damping_and_spurious_rotation_bound() {
    let m = shear::measure(L);
    let ell = 2e-3;
    let scale = L * K_D / (ell * ell);
    let w = Vector3::new(0.3, 2.0, -1.0);
    let t = Vector3::new(0.4, -1.0, 0.7);
    for eps in [0.0, 0.01, -0.04, 0.08, 0.5, -1.0] {
        let q = config(
            [1e-3, 2e-3, -1e-3],
            [0.2, 0.1, 1.0],
            [1.0, -0.5, 0.0],
            ell,
            3e-3,
            eps,
        );
        let s1 = shear::scalar_strain(&q);
        let s3 = shear::small_angle_strain(&q);
        let trans = rigid_velocities(&q, t, Vector3::zeros());
        assert!(dissipation(K_D, &s1, &m, &trans).force.norm() < 1e-12 * scale * t.norm());
        assert!(dissipation(K_D, &s3, &m, &trans).force.norm() < 1e-12 * scale * t.norm());
        let rot = rigid_velocities(&q, Vector3::zeros(), w);
        assert!(s1.rate(&rot)[0].abs() < 1e-12 * w.norm());
        assert!(dissipation(K_D, &s1, &m, &rot).force.norm() < 1e-12 * scale * w.norm() * ell);
        // Vector strain: spurious rate.
        let ea = Vector3::new(q[3] - q[0], q[4] - q[1], q[5] - q[2]);
        let eb = Vector3::new(q[6] - q[0], q[7] - q[1], q[8] - q[2]);
        let n = ea.cross(&eb).normalize();
        let rate = s3.rate(&rot);
        let expected = -w.cross(&n) * eps.tan();
        assert!(
            (rate - expected).norm() < 1e-10 * w.norm(),
            "{rate} vs {expected}"
        );
        assert!(rate.norm() <= w.norm() * (eps.abs().tan() * (1.0 + 1e-9) + 1e-12));
        if eps.abs() < SMALL_ANGLE_THRESHOLD {
            assert!(rate.norm() < w.norm() * SMALL_ANGLE_THRESHOLD.tan());
        }
        if eps == 0.0 {
            assert!(rate.norm() < 1e-12 * w.norm());
        }
        // Genuine in-plane shear at angular speed |ω|: |ṡ| = |ω| sec²ε.
        let shear_v = rigid_velocities(&q, Vector3::zeros(), n * w.norm());
        let mut qdot = Q::zeros();
        for i in 6..9 {
            qdot[i] = shear_v[i] - shear_v[i - 6];
        }
        let r3 = s3.rate(&qdot).norm();
        assert!((r3 - w.norm() / eps.cos().powi(2)).abs() < 1e-9 * w.norm());
    }
}

/// At exactly zero shear with a non-zero shear velocity the damping force is
/// finite, non-zero and well defined: the small-angle force equals the scalar
/// strain's force (to 1e-12) and the limits from ε = ±1e-7 (to 1e-6
/// relative), i.e. it does not depend on the side of approach.
#[test]
fn damping_at_zero_shear_is_well_defined() {
    let el = element(false);
    let q0 = exact_right_angle(2e-3, 2e-3);
    // Shear velocity: x_b moves towards x_a.
    let qdot = Q::from([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.1, 0.0, 0.0]);
    let d0 = el.dissipation(&q0, &qdot);
    assert!(matches!(d0, ShearDissipation::SmallAngle(_)));
    let f0 = d0.force();
    assert!(f0.iter().all(|v| v.is_finite()));
    // φ̇ = -0.1/2e-3 = -50 1/s; |f| on x_b = L k_d |φ̇| / ℓ.
    let expect_xb = L * K_D * 50.0 / 2e-3;
    assert!(
        (f0[6].abs() - expect_xb).abs() < 1e-12 * expect_xb,
        "{}",
        f0
    );
    assert!(
        f0[6] < 0.0,
        "damping opposes the closing motion of x_b (+x)"
    );
    let fs = dissipation(K_D, &shear::scalar_strain(&q0), &shear::measure(L), &qdot).force;
    assert!((f0 - fs).norm() < 1e-12 * fs.norm());
    for eps in [1e-7, -1e-7] {
        let q = config([0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], 2e-3, 2e-3, eps);
        let f = el.dissipation(&q, &qdot).force();
        assert!((f - f0).norm() < 1e-6 * f0.norm(), "eps {eps}: {f} vs {f0}");
    }
}

/// The jamming profile is monotone (`J' ≥ 0`), convex (`J'' ≥ 0`, so
/// `Φ'' ≥ 1`) and C² (checked on a grid of 2000 angles up to 1.5 ψ_lock:
/// `J'` and `J''` match central differences of `J` and `J'` to 1e-6 relative
/// (floor γ·1e-6), and `J, J', J''` are continuous at the onset: below 1e-12
/// at `ψ_on + 1e-9`). The tangent stiffness is `(1 + γ) k_x` at the lock.
#[test]
fn jamming_profile_is_convex_monotone_c2() {
    let jam = Jamming::from_geometry(R, L).unwrap();
    let lock = shear::locking_angle(R, L);
    assert!((lock - (FRAC_PI_2 - 2.0 * 0.25f64.asin())).abs() < 1e-15);
    assert!((lock - 1.065_435_816_5).abs() < 1e-9, "{lock}");
    assert_eq!(jam.lock, lock);
    assert!((jam.onset - 0.5 * lock).abs() < 1e-15);
    assert!(jam.onset > SMALL_ANGLE_THRESHOLD);
    let h = 1e-6;
    let mut prev = (0.0, 0.0, 0.0);
    for i in 0..2000 {
        let psi = 1.5 * lock * (i as f64 + 0.5) / 2000.0;
        let (j, dj, ddj) = jam.extra(psi);
        assert!(dj >= 0.0 && ddj >= 0.0);
        assert!(
            j >= prev.0 && dj >= prev.1 && ddj >= prev.2,
            "monotone at {psi}"
        );
        prev = (j, dj, ddj);
        let fd1 = (jam.extra(psi + h).0 - jam.extra(psi - h).0) / (2.0 * h);
        let fd2 = (jam.extra(psi + h).1 - jam.extra(psi - h).1) / (2.0 * h);
        let floor = jam.gain * 1e-6;
        assert!(
            (fd1 - dj).abs() <= 1e-6 * dj.abs().max(floor),
            "J' at {psi}"
        );
        assert!(
            (fd2 - ddj).abs() <= 1e-6 * ddj.abs().max(floor),
            "J'' at {psi}"
        );
        let (_, dphi, ddphi) = jam.profile(-psi);
        assert!(ddphi >= 1.0);
        assert!(dphi <= -psi, "Φ is even: Φ'(-ψ) = -Φ'(ψ)");
    }
    let (j, dj, ddj) = jam.extra(jam.onset + 1e-9);
    assert!(j < 1e-12 && dj < 1e-12 && ddj < 1e-12);
    assert_eq!(jam.extra(jam.onset), (0.0, 0.0, 0.0));
    assert!((jam.extra(jam.lock).2 - jam.gain).abs() < 1e-12 * jam.gain);
    assert!((jam.profile(jam.lock).2 - (1.0 + jam.gain)).abs() < 1e-12 * jam.gain);
    // Steep: the stiffness at the lock is 101 times the base stiffness, and
    // half-way through the jammed range already 26 times.
    assert!((jam.profile(0.5 * (jam.onset + jam.lock)).2 - 26.0).abs() < 1e-12);
}

/// The generic composition `V = Ω k Φ(ε)` reduces to `½Ωk ε²` for
/// `Φ = ½ε²` (checked on the stretch element, whose measure has a non-zero
/// gradient, to 1e-12), and for a non-quadratic profile
/// `Φ = ½ε² + ε⁴` its gradient and Hessian (including the `∇Ω` terms) match
/// central differences to 1e-6.
#[test]
fn elastic_profile_composition() {
    let q = SVector::<f64, 8>::from([0.0, 0.0, 0.0, 0.01, 2.2e-3, 0.3e-3, -0.1e-3, 0.012]);
    let k = 5e2;
    let s = stretch::strain(&q);
    let m = stretch::measure(&q);
    let e = s.value[0];
    let a = elastic(k, &s, &m);
    let b = shear::elastic_profile(k, &s, &m, (0.5 * e * e, e, 1.0));
    assert!((a.energy - b.energy).abs() <= 1e-12 * a.energy);
    assert!((a.gradient - b.gradient).norm() <= 1e-12 * a.gradient.norm());
    assert!((a.hessian - b.hessian).norm() <= 1e-12 * a.hessian.norm());
    let quartic = |q: &SVector<f64, 8>| {
        let s = stretch::strain(q);
        let e = s.value[0];
        shear::elastic_profile(
            k,
            &s,
            &stretch::measure(q),
            (
                0.5 * e * e + e.powi(4),
                e + 4.0 * e.powi(3),
                1.0 + 12.0 * e * e,
            ),
        )
    };
    let ev = quartic(&q);
    let g_fd = fd_gradient(|q| quartic(q).energy, &q, 1e-8);
    let h_fd = fd_jacobian(|q| quartic(q).gradient, &q, 1e-8);
    assert!(rel_error(&ev.gradient, &g_fd, k * 1e-3) < 1e-6);
    assert!(rel_error(&ev.hessian, &h_fd, k / 2e-3 * 1e-3) < 1e-6);
    assert!(ev.gradient[3].abs() > 0.0 && ev.gradient[7].abs() > 0.0);
}

/// Parameter validation: a jamming onset at or below the small-angle
/// threshold is rejected (jamming must be inactive where the vector strain is
/// used), as are a threshold outside (0, π/2), a non-positive spacing and an
/// impossible geometry (R ≥ L/√2 gives no positive locking angle).
#[test]
fn parameter_validation() {
    let j = Jamming::new(0.05, 1.0, 10.0).unwrap();
    assert_eq!(
        Shear::new(K_X, K_D, L, SMALL_ANGLE_THRESHOLD, Some(j)),
        Err(ShearParamError::OnsetBelowThreshold {
            onset: 0.05,
            threshold: SMALL_ANGLE_THRESHOLD
        })
    );
    assert!(Shear::new(K_X, K_D, L, 0.04, Some(j)).is_ok());
    assert!(matches!(
        Shear::new(K_X, K_D, L, 0.0, None),
        Err(ShearParamError::Threshold(_))
    ));
    assert!(matches!(
        Shear::new(K_X, K_D, L, 2.0, None),
        Err(ShearParamError::Threshold(_))
    ));
    assert_eq!(
        Shear::new(K_X, K_D, 0.0, 0.05, None),
        Err(ShearParamError::Stiffness)
    );
    assert!(Jamming::new(0.5, 0.4, 1.0).is_err());
    assert!(Jamming::from_geometry(0.8e-3, 1e-3).is_err());
    // Densest physical weave in [SBO17 Table 1] ranges: R = 1.15 mm, L = 2.4 mm.
    let dense = Jamming::from_geometry(1.15e-3, 2.4e-3).unwrap();
    assert!(dense.onset > SMALL_ANGLE_THRESHOLD);
    assert!(Shear::new(K_X, K_D, 2.4e-3, SMALL_ANGLE_THRESHOLD, Some(dense)).is_ok());
}
