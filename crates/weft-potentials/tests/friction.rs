//! Sliding anchor and stick/slip friction [CLMMO14, DESIGN §2]: anchor
//! element derivatives, the Coulomb update in both directions, and the
//! crossing normal force estimate on hand-computed cases.

use nalgebra::SVector;
use proptest::prelude::*;
use weft_potentials::elastic;
use weft_potentials::friction::{
    self, MIN_NORMAL_FORCE, YarnAtCrossing, band_crossing_normal_force, crossing_normal_force,
    update_anchor, yarn_normal_pull,
};
use weft_potentials::testing::{fd_gradient, fd_jacobian, rel_error};

type Q = SVector<f64, 1>;
const K_F: f64 = 100.0; // N/m, the scene example's anchor_stiffness

fn eval(q: &Q, anchor: f64) -> weft_potentials::ElementEval<1> {
    elastic(K_F, &friction::strain(q, anchor), &friction::measure())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// `V = ½ k_f (s - s̄)²`: energy to 1e-12, gradient `k_f (s - s̄)` and
    /// Hessian `k_f` against central differences (step 1e-8 m) to 1e-6
    /// (floors `k_f·1e-6` N, `k_f` N/m), including `s = s̄` exactly.
    #[test]
    fn derivatives_match_finite_differences(s in -0.01f64..0.01, off in -1e-3f64..1e-3, same in any::<bool>()) {
        let anchor = if same { s } else { s - off };
        let q = Q::new(s);
        let e = eval(&q, anchor);
        prop_assert!((e.energy - 0.5 * K_F * (s - anchor).powi(2)).abs() <= 1e-12 * e.energy.max(1e-300));
        let g_fd = fd_gradient(|q| eval(q, anchor).energy, &q, 1e-8);
        prop_assert!(rel_error(&e.gradient, &g_fd, K_F * 1e-6) < 1e-6);
        let h_fd = fd_jacobian(|q| eval(q, anchor).gradient, &q, 1e-8);
        prop_assert!(rel_error(&e.hessian, &h_fd, K_F) < 1e-6);
        let j_fd = fd_jacobian(|q| friction::strain(q, anchor).value, &q, 1e-8);
        prop_assert!((friction::strain(&q, anchor).jacobian - j_fd).norm() < 1e-6);
        if same {
            prop_assert_eq!(e.gradient[0], 0.0);
        }
    }

    /// Stick/slip in both directions: below the Coulomb limit the anchor is
    /// unchanged (bitwise); above it the anchor slips so that
    /// `|k_f (s - s̄')| = μ F_n` (1e-9 relative), staying on the same side of
    /// `s` (the force keeps its direction) and moving towards `s`.
    #[test]
    fn update_anchor_stick_and_slip(s in -0.01f64..0.01, off in -1e-2f64..1e-2, mu in 0.05f64..1.0, fnorm in 1e-4f64..0.5) {
        let anchor = s - off;
        let limit = mu * fnorm;
        let new = update_anchor(s, anchor, K_F, mu, fnorm);
        if (K_F * off).abs() <= limit {
            prop_assert_eq!(new, anchor);
        } else {
            prop_assert!(((K_F * (s - new)).abs() - limit).abs() <= 1e-9 * limit);
            prop_assert_eq!((s - new).signum(), off.signum());
            prop_assert!((s - new).abs() < off.abs());
        }
    }
}

/// Hand-computed update: `k_f = 100 N/m`, `μ = 0.3`, `F_n = 0.5 N` → limit
/// 0.15 N, i.e. 1.5 mm of anchor stretch. `s - s̄ = +1 mm` sticks, `+4 mm`
/// slips to `s̄' = s - 1.5 mm`, `-4 mm` to `s̄' = s + 1.5 mm` (1e-15 m);
/// exactly at the limit it sticks; with `μ F_n = 0` the anchor follows `s`.
#[test]
fn update_anchor_hand_computed() {
    let s = 0.010;
    assert_eq!(update_anchor(s, s - 1e-3, K_F, 0.3, 0.5), s - 1e-3);
    assert!((update_anchor(s, s - 4e-3, K_F, 0.3, 0.5) - (s - 1.5e-3)).abs() < 1e-15);
    assert!((update_anchor(s, s + 4e-3, K_F, 0.3, 0.5) - (s + 1.5e-3)).abs() < 1e-15);
    assert_eq!(update_anchor(s, 0.0, K_F, 1.0, K_F * s), 0.0);
    assert_eq!(update_anchor(s, 0.004, K_F, 0.0, 0.5), s);
}

/// Normal force, plain weave, `R = 0.25 mm`, warp segments `ℓ = 1 mm`
/// (`tan β = 0.5`, `sin β = 1/√5`), weft segments 2 mm (`tan β = 0.25`,
/// `sin β = 1/√17`), `T_warp = 2 N`, `T_weft = 1 N`:
/// `F_n = 2/√5 + 1/√17 = 1.1369628160362488 N` (1e-12). Compression
/// contributes nothing (`T_weft = -5 N` gives `2/√5`), the floor applies when
/// both are slack, the side of the yarn does not matter, and a non-plain
/// weave: mid-float `P = 0`, float end `P = T sin β = 2/√5 = 0.894427191 N`.
#[test]
fn crossing_normal_force_hand_computed() {
    let r = 0.25e-3;
    let warp = YarnAtCrossing::plain(2.0, 1.0, 1e-3);
    let weft = YarnAtCrossing::plain(1.0, -1.0, 2e-3);
    let f = crossing_normal_force(&warp, &weft, r, MIN_NORMAL_FORCE);
    let hand = 2.0 / 5f64.sqrt() + 1.0 / 17f64.sqrt();
    assert!((hand - 1.136_962_816_036_248_8).abs() < 1e-15);
    assert!((f - hand).abs() < 1e-12, "{f}");
    // Individual pulls 2 T sin β.
    assert!((yarn_normal_pull(&warp, r) - 4.0 / 5f64.sqrt()).abs() < 1e-12);
    assert!(
        (yarn_normal_pull(&YarnAtCrossing::plain(2.0, -1.0, 1e-3), r) - 4.0 / 5f64.sqrt()).abs()
            < 1e-12
    );
    // Compression contributes nothing.
    let slack = YarnAtCrossing::plain(-5.0, -1.0, 2e-3);
    assert_eq!(yarn_normal_pull(&slack, r), 0.0);
    let f = crossing_normal_force(&warp, &slack, r, MIN_NORMAL_FORCE);
    assert!((f - 2.0 / 5f64.sqrt()).abs() < 1e-12);
    // Floor.
    let slack2 = YarnAtCrossing::plain(0.0, 1.0, 1e-3);
    assert_eq!(
        crossing_normal_force(&slack2, &slack, r, MIN_NORMAL_FORCE),
        MIN_NORMAL_FORCE
    );
    assert_eq!(crossing_normal_force(&slack2, &slack, r, 1e-3), 1e-3);
    // Twill-like crossings: mid-float and float end.
    let mid = YarnAtCrossing {
        tension: 2.0,
        sides: [1.0, 1.0, 1.0],
        segments: [1e-3, 1e-3],
    };
    assert_eq!(yarn_normal_pull(&mid, r), 0.0);
    let end = YarnAtCrossing {
        tension: 2.0,
        sides: [-1.0, 1.0, 1.0],
        segments: [1e-3, 1e-3],
    };
    assert!((yarn_normal_pull(&end, r) - 0.894_427_190_999_915_9).abs() < 1e-12);
}

/// A model crossing between bands of real yarns, hand computed: real
/// threads 1 mm apart, `R = 0.25 mm`; the model warp stands for 5 real
/// warps (the model wefts' segments are 5 mm) with `T = 20 N`, the model
/// weft for 10 real wefts (the warps' segments 10 mm) with `T = 10 N`. One
/// real crossing: warp 4 N, weft 1 N, both over 1 mm segments
/// (`sin β = 1/√5`), `F_n = 5/√5 = √5 N`; the model crossing stands for 50
/// of them: `50 √5 = 111.803398874989 N` (1e-9), 56 times the model
/// crossing's own estimate (`1.99379 N`). Bands of 1 (or less) are the
/// model crossing itself.
#[test]
fn band_crossing_normal_force_hand_computed() {
    let r = 0.25e-3;
    let warp = YarnAtCrossing::plain(20.0, 1.0, 10e-3);
    let weft = YarnAtCrossing::plain(10.0, -1.0, 5e-3);
    let f = band_crossing_normal_force(&warp, &weft, [5.0, 10.0], r, MIN_NORMAL_FORCE);
    assert!((f - 50.0 * 5f64.sqrt()).abs() < 1e-9, "{f}");
    let own = crossing_normal_force(&warp, &weft, r, MIN_NORMAL_FORCE);
    let hand_own = 20.0 * 0.05 / 1.0025f64.sqrt() + 10.0 * 0.1 / 1.01f64.sqrt();
    assert!((own - hand_own).abs() < 1e-12, "{own}");
    assert!((f / own - 56.08).abs() < 0.01, "ratio {}", f / own);
    for bands in [[1.0, 1.0], [0.5, 1.0], [0.0, 0.2]] {
        assert_eq!(
            band_crossing_normal_force(&warp, &weft, bands, r, MIN_NORMAL_FORCE),
            own
        );
    }
    // The floor applies per real crossing.
    let slack = YarnAtCrossing::plain(0.0, 1.0, 10e-3);
    let f = band_crossing_normal_force(&slack, &slack, [5.0, 10.0], r, 1e-3);
    assert!((f - 50.0 * 1e-3).abs() < 1e-15);
}
