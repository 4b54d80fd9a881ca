//! The strain-rate dissipation without its position Jacobian
//! (`*_with_jacobian(.., false)`, `element::dissipation_with_clamp`): the
//! same potential, force and velocity Jacobian as with it, bit for bit, and
//! a zero position Jacobian, for stretch, bending (both strains) and shear
//! (both strains), on random configurations where the clamped term is not
//! zero.

use nalgebra::SVector;
use proptest::prelude::*;
use weft_potentials::shear::{SMALL_ANGLE_THRESHOLD, Shear};
use weft_potentials::{bending, stretch};

/// A coordinate vector of length `N` from `seed`: `base` plus ±`amp`
/// (positions in m, arc lengths in m).
fn coords<const N: usize>(base: [f64; N], amp: f64, seed: &[f64]) -> SVector<f64, N> {
    SVector::from_fn(|i, _| base[i] + amp * seed[i % seed.len()])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn only_the_position_jacobian_changes(
        s in prop::collection::vec(-1.0f64..1.0, 12),
        w in prop::collection::vec(-1.0f64..1.0, 12),
        bend_deg in prop::sample::select(vec![2.0f64, 30.0]),
    ) {
        // Stretch: a segment of about 1 mm, stretched and moving.
        let q = coords([0.0, 0.0, 0.0, 0.0, 1e-3, 0.0, 0.0, 1e-3], 1e-4, &s);
        let qd = coords([0.0; 8], 0.05, &w);
        let (a, b) = (
            stretch::dissipation_with_jacobian(2e-3, &q, &qd, true),
            stretch::dissipation_with_jacobian(2e-3, &q, &qd, false),
        );
        prop_assert_eq!(a.force, b.force);
        prop_assert_eq!(a.velocity_jacobian, b.velocity_jacobian);
        prop_assert_eq!(a.potential, b.potential);
        prop_assert_eq!(b.position_jacobian.norm(), 0.0);
        // Bending: a centre node, its next and previous nodes 1 mm away,
        // bent by about `bend_deg` (the small-angle vector strain at 2°,
        // the scalar one at 30°).
        let t = bend_deg.to_radians();
        let base = [
            0.0, 0.0, 0.0, 0.0,
            1e-3, 0.0, 0.0, 1e-3,
            -1e-3 * t.cos(), 1e-3 * t.sin(), 0.0, -1e-3,
        ];
        let q = coords(base, 2e-5, &s);
        let qd = coords([0.0; 12], 0.05, &w);
        let th = bending::DEFAULT_THRESHOLD;
        let (a, b) = (
            bending::damping_with_jacobian(1e-6, &q, &qd, th, true),
            bending::damping_with_jacobian(1e-6, &q, &qd, th, false),
        );
        prop_assert_eq!(a.is_small_angle(), b.is_small_angle());
        prop_assert_eq!(a.force(), b.force());
        prop_assert_eq!(a.velocity_jacobian(), b.velocity_jacobian());
        prop_assert_eq!(a.potential(), b.potential());
        prop_assert!(a.position_jacobian().norm() > 0.0);
        prop_assert_eq!(b.position_jacobian().norm(), 0.0);
        // Shear: a crossing with warp and weft chords of 1 mm, sheared by
        // about `bend_deg`.
        let base = [
            0.0, 0.0, 0.0,
            1e-3, 0.0, 0.0,
            1e-3 * t.sin(), 1e-3 * t.cos(), 0.0,
        ];
        let q = coords(base, 2e-5, &s);
        let qd = coords([0.0; 9], 0.05, &w);
        let sh = Shear::new(0.5, 1e-4, 1e-3, SMALL_ANGLE_THRESHOLD, None).unwrap();
        let (a, b) = (
            sh.dissipation_with_jacobian(&q, &qd, true),
            sh.dissipation_with_jacobian(&q, &qd, false),
        );
        prop_assert_eq!(a.force(), b.force());
        prop_assert_eq!(a.velocity_jacobian(), b.velocity_jacobian());
        prop_assert_eq!(a.potential(), b.potential());
        prop_assert!(a.position_jacobian().norm() > 0.0);
        prop_assert_eq!(b.position_jacobian().norm(), 0.0);
    }
}
