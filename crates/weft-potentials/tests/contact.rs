//! Parallel-yarn contact \[CLMMO14\]: derivatives against finite differences on
//! both sides of the contact threshold `Δu = d`, closed-form energy, `C¹`
//! continuity, the direction of the force, and good damping.

use nalgebra::SVector;
use proptest::prelude::*;
use weft_potentials::contact;
use weft_potentials::testing::{fd_gradient, fd_jacobian, rel_error};
use weft_potentials::{dissipation, elastic};

type Q = SVector<f64, 2>;

/// Illustrative contact stiffness (N) and damping (N·s).
const K_C: f64 = 1e3;
const K_D: f64 = 1e-3;

fn eval(q: &Q, d: f64, l: f64) -> weft_potentials::ElementEval<2> {
    elastic(K_C, &contact::strain(q, d, l), &contact::measure(l))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// Random segments `Δu ∈ (0.1 d, 2 d)`, `d = 2R`, `R ∈ [0.25, 1.15]` mm,
    /// `L ∈ [1, 4]` mm: the energy is `½ k_c (d - Δu)²/L` in contact and 0
    /// outside (1e-12 relative); gradient and Hessian match central
    /// differences (step 1e-9 m) to 1e-6 relative (floors `k_c·1e-3` N and
    /// `k_c/L·1e-3` N/m); the Hessian check skips `|Δu - d| < 1e-7` (the
    /// stiffness jumps there, see `c1_continuity_at_threshold`). The strain
    /// Jacobian matches differences of the strain to 1e-6 (floor `1/L`).
    #[test]
    fn derivatives_match_finite_differences(
        r in 0.25e-3f64..1.15e-3, l in 1e-3f64..4e-3, ratio in 0.1f64..2.0, sa in -0.05f64..0.05,
    ) {
        let d = 2.0 * r;
        let q = Q::new(sa, sa + ratio * d);
        let du = q[1] - q[0];
        let e = eval(&q, d, l);
        let expected = if du < d { 0.5 * K_C * (d - du).powi(2) / l } else { 0.0 };
        prop_assert!((e.energy - expected).abs() <= 1e-12 * expected.max(1e-300));
        let h = 1e-9;
        let g_fd = fd_gradient(|q| eval(q, d, l).energy, &q, h);
        prop_assert!(rel_error(&e.gradient, &g_fd, K_C * 1e-3) < 1e-6);
        if (du - d).abs() > 1e-7 {
            let h_fd = fd_jacobian(|q| eval(q, d, l).gradient, &q, h);
            prop_assert!(rel_error(&e.hessian, &h_fd, K_C / l * 1e-3) < 1e-6);
            let s = contact::strain(&q, d, l);
            let j_fd = fd_jacobian(|q| contact::strain(q, d, l).value, &q, h);
            prop_assert!(rel_error(&s.jacobian, &j_fd, 1.0 / l) < 1e-6);
        }
        prop_assert_eq!(contact::in_contact(&q, d), du < d);
    }
}

/// `C¹` at `Δu = d`: approaching from either side (`Δu = d ∓ δ`, δ = 1e-6 to
/// 1e-12 m) the energy and the force go to zero as `½ k_c δ²/L` and
/// `k_c δ/L` (1e-6 relative; exactly 0 on the open side and at `Δu = d`).
/// The stiffness jumps from `k_c/L` to 0 (documented, not `C²`). Near the
/// threshold the FD gradient matches from both sides (1e-6, floor
/// `k_c·1e-9` N) and the FD Hessian at `d ∓ 1e-6`.
#[test]
fn c1_continuity_at_threshold() {
    let (d, l) = (0.5e-3, 1e-3);
    let at = eval(&Q::new(0.0, d), d, l);
    assert_eq!(at.energy, 0.0);
    assert_eq!(at.gradient.norm(), 0.0);
    for delta in [1e-6, 1e-9, 1e-12] {
        let inside = eval(&Q::new(0.0, d - delta), d, l);
        let outside = eval(&Q::new(0.0, d + delta), d, l);
        assert!((inside.energy - 0.5 * K_C * delta * delta / l).abs() <= 1e-6 * inside.energy);
        // Force on s_b pushes the parallel yarns apart: -∂V/∂s_b > 0.
        let f = -inside.gradient[1];
        assert!((f - K_C * delta / l).abs() <= 1e-6 * f, "{f}");
        assert!((inside.gradient[0] + inside.gradient[1]).abs() <= 1e-15 * f);
        assert!((inside.hessian[(1, 1)] - K_C / l).abs() <= 1e-12 * K_C / l);
        assert_eq!(outside.energy, 0.0);
        assert_eq!(outside.gradient.norm(), 0.0);
        assert_eq!(outside.hessian.norm(), 0.0);
    }
    for du in [d - 1e-6, d + 1e-6, d - 2e-9, d + 2e-9] {
        let q = Q::new(0.01, 0.01 + du);
        let e = eval(&q, d, l);
        let g_fd = fd_gradient(|q| eval(q, d, l).energy, &q, 1e-9);
        assert!(rel_error(&e.gradient, &g_fd, K_C * 1e-9) < 1e-6, "{du}");
        if (du - d).abs() > 1e-7 {
            let h_fd = fd_jacobian(|q| eval(q, d, l).gradient, &q, 1e-9);
            assert!(rel_error(&e.hessian, &h_fd, K_C / l * 1e-3) < 1e-6);
        }
    }
    // Two crossings about to pass through each other (Δu → 0) feel the
    // full repulsion k_c d / L.
    let e = eval(&Q::new(0.0, 1e-12), d, l);
    assert!((-e.gradient[1] - K_C * (d - 1e-12) / l).abs() <= 1e-12 * K_C * d / l);
}

/// Good damping: pure sliding (equal `ṡ` at both ends) gives zero
/// dissipative force in contact; a closing rate `Δu̇ = -v` gives
/// `ε̇ = -v/L` and the force `-L k_d ε̇ ∇ε` = `±k_d v/L` (1e-12 relative);
/// out of contact nothing is damped; the position Jacobian is zero (linear
/// strain).
#[test]
fn good_damping_and_rates() {
    let (d, l) = (0.5e-3, 2e-3);
    let q = Q::new(0.0, 0.4e-3);
    let s = contact::strain(&q, d, l);
    let m = contact::measure(l);
    let slide = Q::new(0.3, 0.3);
    assert_eq!(dissipation(K_D, &s, &m, &slide).force.norm(), 0.0);
    let v = 0.2;
    let close = Q::new(v / 2.0, -v / 2.0);
    let dd = dissipation(K_D, &s, &m, &close);
    assert!((dd.strain_rate[0] + v / l).abs() <= 1e-12 * v / l);
    let f = K_D * v / l;
    assert!((dd.force[1] - f).abs() <= 1e-12 * f && (dd.force[0] + f).abs() <= 1e-12 * f);
    assert!((dd.potential - 0.5 * l * K_D * (v / l).powi(2)).abs() <= 1e-12 * dd.potential);
    assert_eq!(dd.position_jacobian.norm(), 0.0);
    let apart = Q::new(0.0, 0.6e-3);
    let s = contact::strain(&apart, d, l);
    assert_eq!(dissipation(K_D, &s, &m, &close).force.norm(), 0.0);
}
