//! Bending element [SBO17 eq. 15-21, CLMMO14]: derivatives against finite
//! differences (including the arc-length coordinates), closed-form strain
//! rates, good damping, the small-angle switch, and beam-theory calibration.

use nalgebra::{SMatrix, SVector, Vector3};
use proptest::prelude::*;
use std::f64::consts::PI;
use weft_potentials::bending::{self, BendingDissipation, BendingStrain, DEFAULT_THRESHOLD};
use weft_potentials::element::symmetric_eigen;
use weft_potentials::testing::{fd_gradient, fd_jacobian, rel_error};
use weft_potentials::{Strain, dissipation, elastic};

type Q = SVector<f64, 12>;

const K_B: f64 = 1e-4; // [SBO17 Table 1] bending stiffness range 1e-5..1e-3
const K_D: f64 = 1e-6;
const TH: f64 = DEFAULT_THRESHOLD;
/// Finite-difference step (m). On segments of 1-4 mm it changes θ by at most
/// ~1e-5 rad.
const H: f64 = 1e-8;

/// A bending element with turning angle `theta` at node 0: segment lengths
/// `l1` (to the next node) and `l2` (to the previous node), rest lengths
/// `r1·l1`, `r2·l2`, incoming tangent `t`, bending plane spanned by `t`, `b`,
/// centre `x0`, arc-length coordinate of the centre `s0`.
#[allow(clippy::too_many_arguments)]
fn config(
    theta: f64,
    l1: f64,
    l2: f64,
    r1: f64,
    r2: f64,
    t: [f64; 3],
    b: [f64; 3],
    x0: [f64; 3],
    s0: f64,
) -> Q {
    let t = Vector3::from(t).normalize();
    let b = Vector3::from(b);
    let b = (b - t * t.dot(&b)).normalize();
    let x0 = Vector3::from(x0);
    let x1 = x0 + (t * theta.cos() + b * theta.sin()) * l1;
    let x2 = x0 - t * l2;
    Q::from([
        x0.x,
        x0.y,
        x0.z,
        s0,
        x1.x,
        x1.y,
        x1.z,
        s0 + r1 * l1,
        x2.x,
        x2.y,
        x2.z,
        s0 - r2 * l2,
    ])
}

/// A 2 mm / 3 mm element in the xy-plane, bent towards +y.
fn planar(theta: f64) -> Q {
    config(
        theta,
        2e-3,
        3e-3,
        1.0,
        1.0,
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0; 3],
        0.01,
    )
}

fn x(q: &Q, node: usize) -> Vector3<f64> {
    Vector3::new(q[4 * node], q[4 * node + 1], q[4 * node + 2])
}

fn sel_energy(q: &Q) -> f64 {
    bending::energy(K_B, q, TH).energy
}
fn sel_gradient(q: &Q) -> Q {
    bending::energy(K_B, q, TH).gradient
}

/// Relative errors of one strain `s` at `q` against central differences:
/// (Jacobian vs differences of the value, each Hessian vs differences of the
/// Jacobian row), relative to the larger of the reference and the natural
/// scale (1e-3 / ℓ² for the Jacobian, 1e-3 / ℓ³ for the Hessian, ℓ the
/// shorter segment).
fn strain_fd_errors<const M: usize>(f: impl Fn(&Q) -> Strain<M, 12>, q: &Q, l: f64) -> (f64, f64) {
    let s = f(q);
    let j_fd = fd_jacobian(|q| f(q).value, q, H);
    let jerr = rel_error(&s.jacobian, &j_fd, 1e-3 / (l * l));
    let mut herr: f64 = 0.0;
    for k in 0..M {
        let h_fd = fd_jacobian(|q| f(q).jacobian.row(k).transpose(), q, H);
        herr = herr.max(rel_error(&s.hessians[k], &h_fd, 1e-3 / (l * l * l)));
        let asym = (s.hessians[k] - s.hessians[k].transpose()).norm();
        assert!(
            asym <= 1e-12 * s.hessians[k].norm().max(1.0),
            "asymmetric {asym}"
        );
    }
    (jerr, herr)
}

/// Relative errors of the energy of strain `f` with stiffness `K_B`:
/// (gradient vs differences of the energy, Hessian vs differences of the
/// gradient), floors `K_B·1e-3/ℓ²` (N) and `K_B·1e-3/ℓ³` (N/m).
fn energy_fd_errors<const M: usize>(f: impl Fn(&Q) -> Strain<M, 12>, q: &Q, l: f64) -> (f64, f64) {
    let eval = |q: &Q| elastic(K_B, &f(q), &bending::measure(q));
    let e = eval(q);
    let g_fd = fd_gradient(|q| eval(q).energy, q, H);
    let gerr = rel_error(&e.gradient, &g_fd, K_B * 1e-3 / (l * l));
    let h_fd = fd_jacobian(|q| eval(q).gradient, q, H);
    let herr = rel_error(&e.hessian, &h_fd, K_B * 1e-3 / (l * l * l));
    assert!((e.hessian - e.hessian.transpose()).norm() <= 1e-12 * e.hessian.norm());
    (gerr, herr)
}

/// Same for the selected strain ([`bending::energy`]).
fn selected_fd_errors(q: &Q, l: f64) -> (f64, f64) {
    let e = bending::energy(K_B, q, TH);
    let g_fd = fd_gradient(sel_energy, q, H);
    let gerr = rel_error(&e.gradient, &g_fd, K_B * 1e-3 / (l * l));
    let h_fd = fd_jacobian(sel_gradient, q, H);
    let herr = rel_error(&e.hessian, &h_fd, K_B * 1e-3 / (l * l * l));
    (gerr, herr)
}

fn dir() -> impl Strategy<Value = [f64; 3]> {
    prop::array::uniform3(-1.0f64..1.0).prop_filter("nonzero", |d| Vector3::from(*d).norm() > 0.2)
}

/// Bending plane vectors `(t, b)` with `b` well away from `t`.
fn frame() -> impl Strategy<Value = ([f64; 3], [f64; 3])> {
    (dir(), dir()).prop_filter("independent", |(t, b)| {
        let t = Vector3::from(*t).normalize();
        let b = Vector3::from(*b);
        (b - t * t.dot(&b)).norm() > 0.2
    })
}

prop_compose! {
    /// A well-conditioned element: segments 1-4 mm, rest/chord ratios
    /// 0.8-1.25, centre within 1 cm of the origin, angle in `lo..hi` (deg).
    fn element(lo: f64, hi: f64)(
        theta_deg in lo..hi,
        l1 in 1e-3f64..4e-3,
        l2 in 1e-3f64..4e-3,
        r1 in 0.8f64..1.25,
        r2 in 0.8f64..1.25,
        (t, b) in frame(),
        x0 in prop::array::uniform3(-0.01f64..0.01),
        s0 in 0.0f64..0.1,
    ) -> (Q, f64) {
        (config(theta_deg.to_radians(), l1, l2, r1, r2, t, b, x0, s0), l1.min(l2))
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Scalar strain, θ in 3°..150°: strain Jacobian (all 12 coordinates) vs
    /// differences of the strain, strain Hessian vs differences of the
    /// Jacobian, energy gradient vs differences of the energy and energy
    /// Hessian vs differences of the gradient, all with relative error below
    /// 1e-6 (floors on the natural scale, see the helpers; observed ≲ 1e-8
    /// over 6000 cases). Step 1e-8 m: truncation O((h/(ℓ sin θ))²) ≲ 1e-8,
    /// round-off ~1e-16·ℓ/h ~ 1e-11.
    #[test]
    fn scalar_strain_derivatives_match_fd((q, l) in element(3.0, 150.0)) {
        let (je, he) = strain_fd_errors(bending::scalar_strain, &q, l);
        prop_assert!(je < 1e-6 && he < 1e-6, "strain jac {je}, hess {he}");
        let (ge, he) = energy_fd_errors(bending::scalar_strain, &q, l);
        prop_assert!(ge < 1e-6 && he < 1e-6, "energy grad {ge}, hess {he}");
    }

    /// Vector strain, θ in 0°..60°: same checks and bound (1e-6) as the
    /// scalar strain.
    #[test]
    fn vector_strain_derivatives_match_fd((q, l) in element(0.0, 60.0)) {
        let (je, he) = strain_fd_errors(bending::vector_strain, &q, l);
        prop_assert!(je < 1e-6 && he < 1e-6, "strain jac {je}, hess {he}");
        let (ge, he) = energy_fd_errors(bending::vector_strain, &q, l);
        prop_assert!(ge < 1e-6 && he < 1e-6, "energy grad {ge}, hess {he}");
    }

    /// The selected energy ([`bending::energy`]), θ in 0°..150° but at least
    /// 1e-4 rad from the switch angle (the stencil moves θ by ≤ 1e-5 rad):
    /// gradient and Hessian vs differences, relative error below 1e-6.
    #[test]
    fn selected_energy_derivatives_match_fd(
        (q, l) in element(0.0, 150.0).prop_filter("off the switch", |(q, _)| (bending::angle(q) - TH).abs() > 1e-4)
    ) {
        let (ge, he) = selected_fd_errors(&q, l);
        prop_assert!(ge < 1e-6 && he < 1e-6, "energy grad {ge}, hess {he}");
    }

    /// `∇ε q̇` equals the closed forms (scalar, θ in 3°..150°; vector, θ in
    /// 0°..60°) to round-off: `|Δ| ≤ 1e-10 |∇ε| |q̇|`.
    #[test]
    fn strain_rates_match_closed_forms(
        (q, _l) in element(3.0, 150.0),
        (qv, _lv) in element(0.0, 60.0),
        qdot in prop::array::uniform12(-1.0f64..1.0),
    ) {
        let qdot = Q::from(qdot);
        let s = bending::scalar_strain(&q);
        let rate = s.rate(&qdot)[0];
        let closed = bending::scalar_strain_rate_closed_form(&q, &qdot);
        prop_assert!((rate - closed).abs() <= 1e-10 * s.jacobian.norm() * qdot.norm(), "{rate} vs {closed}");
        let v = bending::vector_strain(&qv);
        let rate = v.rate(&qdot);
        let closed = bending::vector_strain_rate_closed_form(&qv, &qdot);
        prop_assert!((rate - closed).norm() <= 1e-10 * v.jacobian.norm() * qdot.norm(), "{rate} vs {closed}");
    }

    /// Clamped position Jacobian and velocity Jacobian of the damping force
    /// are symmetric (to 1e-12 relative) and negative semi-definite:
    /// eigenvalues ≤ 1e-12 times the matrix norm. θ in 0°..150°, random
    /// velocities.
    #[test]
    fn damping_jacobians_symmetric_nsd(
        (q, _l) in element(0.0, 150.0),
        qdot in prop::array::uniform12(-1.0f64..1.0),
    ) {
        let d = bending::damping(K_D, &q, &Q::from(qdot), TH);
        for m in [d.position_jacobian(), d.velocity_jacobian()] {
            let scale = m.norm();
            prop_assert!((m - m.transpose()).norm() <= 1e-12 * scale);
            let (ev, _) = symmetric_eigen(&m);
            prop_assert!(ev.max() <= 1e-12 * scale, "eigenvalues {ev}");
        }
    }
}

/// Special configurations, each in three orientations: θ = 0 exactly (vector
/// strain; selected energy), nearly straight θ = 1e-6 rad (vector), the
/// switch angle θ_t exactly (both strains on their own), θ_t ∓ 1e-4 rad
/// (selected energy, vector below / scalar above), nearly folded θ = 170°
/// and 175° (scalar). Strain Jacobian/Hessian and energy gradient/Hessian vs
/// central differences: relative error below 1e-6 (observed ≲ 1e-8).
#[test]
fn derivatives_match_fd_at_special_angles() {
    let frames = [
        ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
        ([0.3, -0.7, 0.2], [0.5, 0.5, 0.9]),
        ([-0.2, 0.1, 1.0], [1.0, 0.4, -0.3]),
    ];
    for (t, b) in frames {
        let q_of = |theta: f64| {
            config(
                theta,
                1.5e-3,
                3.5e-3,
                1.1,
                0.9,
                t,
                b,
                [1e-3, 2e-3, -3e-3],
                0.02,
            )
        };
        let l = 1.5e-3;
        for theta in [0.0, 1e-6, TH] {
            let q = q_of(theta);
            let (je, he) = strain_fd_errors(bending::vector_strain, &q, l);
            let (ge, ee) = energy_fd_errors(bending::vector_strain, &q, l);
            assert!(
                je.max(he).max(ge).max(ee) < 1e-6,
                "vector θ={theta}: {je} {he} {ge} {ee}"
            );
        }
        for theta in [TH, 170f64.to_radians(), 175f64.to_radians()] {
            let q = q_of(theta);
            let (je, he) = strain_fd_errors(bending::scalar_strain, &q, l);
            let (ge, ee) = energy_fd_errors(bending::scalar_strain, &q, l);
            assert!(
                je.max(he).max(ge).max(ee) < 1e-6,
                "scalar θ={theta}: {je} {he} {ge} {ee}"
            );
        }
        for theta in [0.0, TH - 1e-4, TH + 1e-4, 170f64.to_radians()] {
            let q = q_of(theta);
            assert_eq!(bending::uses_small_angle(&q, TH), theta < TH);
            let (ge, he) = selected_fd_errors(&q, l);
            assert!(ge.max(he) < 1e-6, "selected θ={theta}: {ge} {he}");
        }
    }
}

/// Angle, strain and energy values: θ from atan2 matches the construction to
/// 1e-12 rad over 0..179°; `ε_s = 2θ/D`, `|ε_v| = 2 tan θ / D`,
/// `V = k_b θ²/D` to 1e-12 relative; the strain does not depend on `s_0`.
#[test]
fn values_match_definitions() {
    for deg in [0.0, 1e-4, 2.0, 5.0, 30.0, 89.0, 120.0, 179.0] {
        let theta = f64::to_radians(deg);
        let q = planar(theta);
        let dd = q[7] - q[11];
        assert!((bending::angle(&q) - theta).abs() < 1e-12);
        let s = bending::scalar_strain(&q);
        assert!((s.value[0] - 2.0 * theta / dd).abs() <= 1e-12 * (1.0 / dd));
        let e = elastic(K_B, &s, &bending::measure(&q)).energy;
        assert!((e - K_B * theta * theta / dd).abs() <= 1e-12 * K_B / dd);
        if deg < 89.5 {
            let v = bending::vector_strain(&q);
            assert!(
                (v.value.norm() - 2.0 * theta.tan() / dd).abs() <= 1e-12 * (1.0 + theta.tan()) / dd
            );
        }
        // s_0 does not enter: its Jacobian column is exactly zero.
        assert_eq!(s.jacobian[3], 0.0);
        let mut q2 = q;
        q2[3] += 1e-4;
        assert_eq!(bending::scalar_strain(&q2).value, s.value);
    }
    assert_eq!(bending::angle(&planar(0.0)), 0.0);
}

/// Calibration against [SBO17 eq. 15-16]: with `k_b =
/// bending_stiffness_from_sbo17(k_paper) = k_paper/2` our energy equals the
/// paper's `½ (Δu_1-Δu_2) k_paper (θ/(Δu_1-Δu_2))²` to 1e-12 relative, for
/// both strain regimes' scalar form (checked at 30° and 120°). Also
/// `k_b = E π R⁴/4`.
#[test]
fn sbo17_stiffness_factor() {
    let k_paper = 3e-4;
    assert_eq!(bending::bending_stiffness_from_sbo17(k_paper), 1.5e-4);
    for deg in [30.0, 120.0] {
        let theta = f64::to_radians(deg);
        let q = planar(theta);
        let dd = q[7] - q[11];
        let ours = bending::energy(bending::bending_stiffness_from_sbo17(k_paper), &q, TH).energy;
        let paper = 0.5 * dd * k_paper * (theta / dd).powi(2);
        assert!((ours - paper).abs() <= 1e-12 * paper, "{ours} vs {paper}");
    }
    // E = 1 GPa, R = 0.25 mm: I = π R⁴/4 = 3.0680e-15 m⁴.
    let kb = bending::bending_stiffness_from_material(1e9, 2.5e-4);
    assert!((kb - 3.067_961_575_771_282e-6).abs() < 1e-18);
}

/// Good damping [SBO18 eq. 1]: rigid translation and pure sliding (equal ṡ at
/// all three nodes) of a straight yarn give zero strain rate and zero
/// dissipative force for both strains (straight: vector strain, and the
/// scalar strain with its zero subgradient at θ = 0; also a 30° bend for
/// both); rigid rotation gives zero for the scalar strain at 10°, 30°, 120°.
/// "Zero" is `|f| ≤ 1e-10 Ω k_d |∇ε|² |q̇|` (round-off of the contraction).
#[test]
fn good_damping_rigid_motion_and_sliding() {
    let omega = Vector3::new(0.3, 2.0, -1.0);
    let trans = Vector3::new(0.4, -1.0, 0.7);
    let check = |q: &Q, qdot: &Q, s_scalar: bool, s_vector: bool| {
        let m = bending::measure(q);
        if s_scalar {
            let s = bending::scalar_strain(q);
            let d = dissipation(K_D, &s, &m, qdot);
            let scale = m.value * K_D * s.jacobian.norm_squared() * qdot.norm();
            assert!(
                d.force.norm() <= 1e-10 * scale,
                "scalar {} vs {scale}",
                d.force.norm()
            );
            assert!(d.strain_rate[0].abs() <= 1e-10 * s.jacobian.norm() * qdot.norm());
        }
        if s_vector {
            let s = bending::vector_strain(q);
            let d = dissipation(K_D, &s, &m, qdot);
            let scale = m.value * K_D * s.jacobian.norm_squared() * qdot.norm();
            assert!(
                d.force.norm() <= 1e-10 * scale,
                "vector {} vs {scale}",
                d.force.norm()
            );
        }
    };
    for q in [
        config(
            0.0,
            2e-3,
            3e-3,
            1.0,
            1.0,
            [0.3, 0.5, -0.2],
            [1.0, 0.0, 0.0],
            [1e-3, 2e-3, 0.0],
            0.01,
        ),
        config(
            30f64.to_radians(),
            2e-3,
            3e-3,
            1.1,
            0.9,
            [0.3, 0.5, -0.2],
            [1.0, 0.0, 0.0],
            [1e-3, 2e-3, 0.0],
            0.01,
        ),
    ] {
        let mut qdot = Q::zeros();
        for a in 0..3 {
            qdot.fixed_rows_mut::<3>(4 * a).copy_from(&trans);
        }
        check(&q, &qdot, true, true);
        let mut qdot = Q::zeros();
        for a in 0..3 {
            qdot[4 * a + 3] = 0.3;
        }
        check(&q, &qdot, true, true);
        // Translation and sliding together, through `damping`.
        for a in 0..3 {
            qdot.fixed_rows_mut::<3>(4 * a).copy_from(&trans);
        }
        let jn = match bending::strain(&q, TH) {
            BendingStrain::Scalar(s) => s.jacobian.norm(),
            BendingStrain::Vector(s) => s.jacobian.norm(),
        };
        let scale = bending::measure(&q).value * K_D * jn * jn * qdot.norm();
        assert!(bending::damping(K_D, &q, &qdot, TH).force().norm() <= 1e-10 * scale);
    }
    for deg in [10.0, 30.0, 120.0] {
        let q = config(
            f64::to_radians(deg),
            2e-3,
            3e-3,
            1.0,
            1.2,
            [0.3, 0.5, -0.2],
            [1.0, 0.0, 0.0],
            [1e-3, 2e-3, 0.0],
            0.01,
        );
        let mut qdot = Q::zeros();
        for a in 0..3 {
            qdot.fixed_rows_mut::<3>(4 * a)
                .copy_from(&omega.cross(&x(&q, a)));
        }
        check(&q, &qdot, true, false);
    }
}

/// Spurious rotation damping of the small-angle vector strain: under a rigid
/// rotation `ẋ_i = ω × x_i` its rate is exactly `ε̇ = ω × ε` (asserted to
/// 1e-10 relative), so `|ε̇| ≤ |ω| |ε| = |ω| (2/D) tan θ`. Asserted: it is
/// zero at θ = 0; for θ up to the threshold the ratio
/// `|ε̇| / (|ω| · 2/D)` (spurious rate over the rate of a genuine bending
/// motion at the same angular speed) is ≤ tan θ (+1e-12) ≤ tan(5°) ≈ 0.0875,
/// below 1e-14 at θ = 0 (round-off of an exactly zero rate), below 1e-12 for
/// ω along the bending normal (ω ∥ ε), and equal to tan θ (to 1e-9) when ω
/// is perpendicular to the bending normal; the
/// dissipated power is then `W ≤ ½ Ω k_d |ω|² (2/D)² tan²θ` (+1e-24 relative
/// for round-off at θ = 0).
#[test]
fn small_angle_spurious_rotation_damping_is_bounded() {
    let omegas = [
        Vector3::new(0.3, 2.0, -1.0),
        Vector3::new(0.0, 0.0, 1.0), // along the bending normal of `planar` (ε ∥ -z)
        Vector3::new(1.0, 0.0, 0.0), // in the bending plane, ⟂ ε
    ];
    for deg in [0.0, 0.5, 2.0, 4.99] {
        let theta = f64::to_radians(deg);
        let q = planar(theta);
        let dd = q[7] - q[11];
        let s = bending::vector_strain(&q);
        for (i, w) in omegas.iter().enumerate() {
            let mut qdot = Q::zeros();
            for a in 0..3 {
                qdot.fixed_rows_mut::<3>(4 * a)
                    .copy_from(&w.cross(&x(&q, a)));
            }
            let d = bending::damping(K_D, &q, &qdot, TH);
            assert!(d.is_small_angle());
            let rate = s.rate(&qdot);
            let expected = w.cross(&s.value);
            assert!((rate - expected).norm() <= 1e-10 * (w.norm() * 2.0 / dd));
            let ratio = rate.norm() / (w.norm() * 2.0 / dd);
            if deg == 0.0 {
                assert!(ratio <= 1e-14, "θ = 0: ratio {ratio}");
            }
            assert!(
                ratio <= theta.tan() + 1e-12 && ratio <= TH.tan(),
                "ratio {ratio}"
            );
            if i == 1 {
                // ω ∥ ε (both along z for the planar element): no spurious rate.
                assert!(ratio <= 1e-12);
            }
            if i == 2 {
                assert!((ratio - theta.tan()).abs() <= 1e-9 * theta.tan().max(1e-300));
            }
            let w_bound = 0.5
                * (dd / 2.0)
                * K_D
                * (w.norm() * 2.0 / dd).powi(2)
                * (theta.tan().powi(2) + 1e-24);
            assert!(d.potential() <= w_bound * (1.0 + 1e-9));
        }
    }
}

/// Damping at θ = 0 exactly with a bending velocity (x_1 moving along +y at
/// 0.1 m/s, straight yarn along x): the force is finite and equals the
/// analytic expectation: `ε̇ = 2ċ/(dD)`, `ċ = e_2 × ė_1 = -ℓ_2 w ẑ`, so
/// `ε̇ = -(2w/(ℓ_1 D)) ẑ` and `f = -Ω k_d ∇εᵀ ε̇` with
/// `f_{x_1} = -Ω k_d (2/D)² (w/ℓ_1²) ŷ`, `f_{x_2} = -Ω k_d (2/D)² (w/(ℓ_1ℓ_2)) ŷ`,
/// `f_{x_0} = -(f_{x_1} + f_{x_2})` (the bending mode: ends down, centre up), zero on `s` (to 1e-12 relative). Its
/// direction agrees with the scalar-strain damping at θ = 1e-4 rad bent
/// towards +y (cosine ≥ 1 - 1e-6) and with the vector strain at θ = ±1e-4
/// rad (cosine ≥ 1 - 1e-6, so the direction is continuous from both sides).
#[test]
fn damping_at_zero_angle_is_well_defined() {
    let (l1, l2, w) = (2e-3, 3e-3, 0.1);
    let mut qdot = Q::zeros();
    qdot[5] = w;
    let q = planar(0.0);
    let dd = q[7] - q[11];
    let omega_kd = 0.5 * dd * K_D;
    let d = bending::damping(K_D, &q, &qdot, TH);
    assert!(d.is_small_angle());
    let f = d.force();
    assert!(f.iter().all(|v| v.is_finite()));
    let c = omega_kd * (2.0 / dd).powi(2);
    let mut expected = Q::zeros();
    expected[5] = -c * w / (l1 * l1);
    expected[9] = -c * w / (l1 * l2);
    expected[1] = -(expected[5] + expected[9]);
    assert!(rel_error(&f, &expected, 0.0) <= 1e-12, "{f} vs {expected}");
    assert!((d.strain_rate_norm() - 2.0 * w / (l1 * dd)).abs() <= 1e-12 * w / (l1 * dd));

    let cosine = |a: &Q, b: &Q| a.dot(b) / (a.norm() * b.norm());
    let q_s = planar(1e-4);
    let m = bending::measure(&q_s);
    let fs = dissipation(K_D, &bending::scalar_strain(&q_s), &m, &qdot).force;
    assert!(
        cosine(&f, &fs) >= 1.0 - 1e-6,
        "scalar cosine {}",
        cosine(&f, &fs)
    );
    for th in [1e-4, -1e-4] {
        let fv = bending::damping(K_D, &planar(th), &qdot, TH).force();
        assert!(cosine(&f, &fv) >= 1.0 - 1e-6);
    }
}

/// Force continuity across the switch: just below (θ_t - 1e-9) and just above
/// (θ_t + 1e-9) the 5° threshold, the selected elastic force jumps by
/// `|Δf|/|f_below| ≤ tan θ_t sec²θ_t / θ_t - 1` (= 1.022e-2 at 5°, the bound
/// derived in the module docs) and by at least `tan²θ_t/θ_t² - 1`
/// (= 5.1e-3, the smaller of the two per-part ratios), in three orientations
/// and with unequal rest lengths (so the Eulerian part is non-zero). The
/// energy jumps by `tan²θ_t/θ_t² - 1` to 1e-6 relative.
#[test]
fn elastic_force_continuous_across_threshold() {
    let t = TH;
    let upper = t.tan() * (1.0 + t.tan().powi(2)) / t - 1.0;
    let lower = t.tan().powi(2) / (t * t) - 1.0;
    assert!(upper < 1.03e-2 && lower > 5.0e-3);
    for (tt, b) in [
        ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
        ([0.3, -0.7, 0.2], [0.5, 0.5, 0.9]),
        ([-0.2, 0.1, 1.0], [1.0, 0.4, -0.3]),
    ] {
        let below = config(t - 1e-9, 1.5e-3, 3.5e-3, 1.2, 0.85, tt, b, [0.0; 3], 0.0);
        let above = config(t + 1e-9, 1.5e-3, 3.5e-3, 1.2, 0.85, tt, b, [0.0; 3], 0.0);
        assert!(bending::uses_small_angle(&below, t) && !bending::uses_small_angle(&above, t));
        let eb = bending::energy(K_B, &below, t);
        let ea = bending::energy(K_B, &above, t);
        // The vector branch (below) is the stiffer one.
        let jump = (ea.gradient - eb.gradient).norm() / ea.gradient.norm();
        assert!(
            jump <= upper + 1e-6 && jump >= lower - 1e-6,
            "jump {jump}, [{lower}, {upper}]"
        );
        assert!(((eb.energy / ea.energy - 1.0) - lower).abs() <= 1e-6);
    }
}

/// [`bending::step_threshold`]: a step that starts on one strain keeps it
/// while the iterate's angle stays within `[θ_t/2, 2θ_t]` (so the 1 % jump
/// of `elastic_force_continuous_across_threshold` does not occur within a
/// step), takes the other strain outside that band, and at `q = q_n`
/// selects what the plain threshold selects.
#[test]
fn step_threshold_holds_the_start_strain_across_the_switch() {
    let deg = PI / 180.0;
    let small = |q: &Q, q_n: &Q| bending::uses_small_angle(q, bending::step_threshold(q_n, TH));
    // Starts below 5°: the vector strain holds up to 10°.
    let start = planar(TH - 0.01 * deg);
    assert_eq!(bending::step_threshold(&start, TH), 2.0 * TH);
    for theta in [TH + 1e-9, TH + 1.0 * deg, 2.0 * TH - 1e-6] {
        assert!(
            small(&planar(theta), &start),
            "vector strain lost at {theta}"
        );
    }
    assert!(!small(&planar(2.0 * TH + 1e-6), &start));
    // Starts above 5°: the scalar strain holds down to 2.5°.
    let start = planar(TH + 0.01 * deg);
    assert_eq!(bending::step_threshold(&start, TH), 0.5 * TH);
    for theta in [TH - 1e-9, TH - 1.0 * deg, 0.5 * TH + 1e-6] {
        assert!(
            !small(&planar(theta), &start),
            "scalar strain lost at {theta}"
        );
    }
    assert!(small(&planar(0.5 * TH - 1e-6), &start));
    // Within the band the step's force is that of one strain, continuous:
    // across 5° it changes by the angle's change, not by the switch's 1 %.
    let start = planar(TH - 0.5 * deg);
    let th = bending::step_threshold(&start, TH);
    let below = bending::energy(K_B, &planar(TH - 1e-9), th).gradient;
    let above = bending::energy(K_B, &planar(TH + 1e-9), th).gradient;
    let jump = (above - below).norm() / above.norm();
    assert!(jump < 1e-6, "force changes by {jump:e} across 5 degrees");
    // A large threshold keeps the vector strain below 90°; none stays none.
    let wide = 80.0 * deg;
    let t = bending::step_threshold(&planar(10.0 * deg), wide);
    assert!((t - 85.0 * deg).abs() < 1e-12, "{t}");
    assert_eq!(bending::step_threshold(&planar(10.0 * deg), 0.0), 0.0);
    // At q = q_n the plain threshold's selection, on a sweep of angles.
    for i in 0..=400 {
        let q = planar(i as f64 * 0.05 * deg);
        assert_eq!(
            small(&q, &q),
            bending::uses_small_angle(&q, TH),
            "angle {} deg",
            i as f64 * 0.05
        );
    }
}

/// Beam-theory calibration on circular arcs: nodes on a circle of radius ρ
/// with equal chords ℓ and rest lengths ℓ (an inextensibly bent straight
/// yarn), so the turning angle is `α = 2 asin(ℓ/(2ρ))`. The selected strain
/// is `ε ρ = αρ/ℓ ≈ 1 + ℓ²/(24ρ²)` (scalar) or `2ρ tan α/(2ℓ) ≈ 1 + 3ℓ²/(8ρ²)`
/// (vector); asserted: `|ε ρ - 1| ≤ ℓ²/(2ρ²)` and equality with those exact
/// expressions to 1e-9 (θ recovered from node coordinates loses ~1e-16/α), for ℓ in 1..4 mm, ρ in 5 mm..1 m (both branches).
/// Total energy of a rod of length L = 10 cm bent to radius ρ (all interior
/// nodes): `E = ½ k_b (L - ℓ) ε²` exactly (Voronoi lengths cover L less half a
/// segment at each end), so `|E / (½ k_b L/ρ²) - 1| ≤ ℓ/L + ℓ²/ρ²`.
#[test]
fn beam_theory_calibration_on_arcs() {
    let rod_len = 0.1;
    for l in [1e-3f64, 2e-3, 4e-3] {
        for rho in [5e-3f64, 1e-2, 5e-2, 0.2, 1.0] {
            let alpha: f64 = 2.0 * (l / (2.0 * rho)).asin();
            let node = |i: i64| {
                Vector3::new(
                    rho * (i as f64 * alpha).sin(),
                    rho * (1.0 - (i as f64 * alpha).cos()),
                    0.0,
                )
            };
            let q_at = |i: i64| {
                let (x0, x1, x2) = (node(i), node(i + 1), node(i - 1));
                Q::from([
                    x0.x,
                    x0.y,
                    x0.z,
                    i as f64 * l,
                    x1.x,
                    x1.y,
                    x1.z,
                    (i + 1) as f64 * l,
                    x2.x,
                    x2.y,
                    x2.z,
                    (i - 1) as f64 * l,
                ])
            };
            let q = q_at(0);
            let s = bending::strain(&q, TH);
            let er = s.norm() * rho;
            let exact = if s.is_small_angle() {
                rho * alpha.tan() / l
            } else {
                alpha * rho / l
            };
            assert_eq!(s.is_small_angle(), alpha < TH);
            assert!((er - exact).abs() <= 1e-9 * exact, "{er} vs {exact}");
            assert!(
                (er - 1.0).abs() <= (l / rho).powi(2) / 2.0,
                "ℓ={l} ρ={rho}: ερ = {er}"
            );
            // Uniformly bent rod (only where it does not wrap around).
            let n = (rod_len / l).round() as i64;
            if n as f64 * alpha < PI {
                let total: f64 = (1..n)
                    .map(|i| bending::energy(K_B, &q_at(i), TH).energy)
                    .sum();
                let eps = s.norm();
                let expected = 0.5 * K_B * (rod_len - l) * eps * eps;
                assert!((total - expected).abs() <= 1e-9 * expected);
                let beam = 0.5 * K_B * rod_len / (rho * rho);
                assert!(
                    (total / beam - 1.0).abs() <= l / rod_len + (l / rho).powi(2),
                    "ℓ={l} ρ={rho}: {total} vs {beam}"
                );
            }
        }
    }
}

/// The selector and the wrappers agree with the underlying strains:
/// [`bending::strain`] picks the vector strain strictly below the threshold,
/// [`bending::energy`] equals `elastic` of that strain exactly, and
/// [`bending::damping`] equals `dissipation` of it in strain rate, potential,
/// force and velocity Jacobian exactly. Its position Jacobian is clamped in the
/// 7 reduced variables instead of the 12 coordinates, so it is checked by what
/// any valid clamp must satisfy: `-PJ/(Ω k_d)` is PSD and differs from the raw
/// stress-weighted Hessian `Σ ε̇_k ∇²ε_k` by a PSD matrix (the clamp only
/// removes negative curvature), eigenvalues ≥ -1e-10 of the scale.
#[test]
fn selector_and_wrappers() {
    let qdot = Q::from([
        0.1, -0.2, 0.3, 0.01, 0.2, 0.1, -0.1, 0.02, -0.3, 0.2, 0.1, 0.0,
    ]);
    fn check<const M: usize>(
        got: &weft_potentials::Dissipation<M, 12>,
        s: &weft_potentials::Strain<M, 12>,
        m: &weft_potentials::Measure<12>,
        qdot: &Q,
    ) {
        let want = dissipation(K_D, s, m, qdot);
        assert_eq!(got.strain_rate, want.strain_rate);
        assert_eq!(got.potential, want.potential);
        assert_eq!(got.force, want.force);
        assert_eq!(got.velocity_jacobian, want.velocity_jacobian);
        let c = m.value * K_D;
        let clamped = -got.position_jacobian / c;
        let mut raw = SMatrix::<f64, 12, 12>::zeros();
        for k in 0..M {
            raw += s.hessians[k] * want.strain_rate[k];
        }
        let scale = raw.norm().max(1e-300);
        assert!((clamped - clamped.transpose()).norm() <= 1e-12 * scale);
        let (l, _) = weft_potentials::element::symmetric_eigen(&clamped);
        assert!(l.min() >= -1e-10 * scale, "clamped not PSD: {}", l.min());
        let (l, _) = weft_potentials::element::symmetric_eigen(&(clamped - raw));
        assert!(
            l.min() >= -1e-10 * scale,
            "clamp added negative curvature: {}",
            l.min()
        );
    }
    for deg in [0.0, 4.0, 5.001, 6.0, 100.0] {
        let q = planar(f64::to_radians(deg));
        let m = bending::measure(&q);
        let e = bending::energy(K_B, &q, TH);
        let d = bending::damping(K_D, &q, &qdot, TH);
        match (bending::strain(&q, TH), d) {
            (BendingStrain::Vector(s), BendingDissipation::Vector(d)) => {
                assert!(deg < 5.0);
                assert_eq!(e, elastic(K_B, &s, &m));
                check(&d, &s, &m, &qdot);
            }
            (BendingStrain::Scalar(s), BendingDissipation::Scalar(d)) => {
                assert!(deg >= 5.0);
                assert_eq!(e, elastic(K_B, &s, &m));
                check(&d, &s, &m, &qdot);
            }
            _ => panic!("strain and damping selected different forms at {deg}°"),
        }
    }
    let _: SMatrix<f64, 12, 12> =
        bending::damping(K_D, &planar(0.3), &qdot, TH).velocity_jacobian();
}
