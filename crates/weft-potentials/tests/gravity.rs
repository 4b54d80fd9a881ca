//! Gravity of a segment \[CLMMO14\]: exact derivatives including the Eulerian
//! part, total force, lifting energy, sign convention.

use nalgebra::{SVector, Vector3};
use proptest::prelude::*;
use weft_potentials::gravity::{self, linear_density};
use weft_potentials::testing::{fd_gradient, fd_jacobian, rel_error};

type Q = SVector<f64, 8>;
const G: [f64; 3] = [0.0, -9.81, 0.0];

fn q_of(xa: [f64; 3], sa: f64, xb: [f64; 3], du: f64) -> Q {
    Q::from([xa[0], xa[1], xa[2], sa, xb[0], xb[1], xb[2], sa + du])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// Random segments (rest length 1-4 mm, R 0.25-1.15 mm, ρ = 130 kg/m³,
    /// random g direction of magnitude 9.81): gradient and Hessian against
    /// central differences (step 1e-6 m; the energy is bilinear so the
    /// differences are exact up to round-off) to 1e-6 relative (floors
    /// `ρ_l |g|·1e-3` N, same in N/m); the Hessian is constant (identical at
    /// a second configuration) and symmetric.
    #[test]
    fn derivatives_match_finite_differences(
        xa in prop::array::uniform3(-0.1f64..0.1), xb in prop::array::uniform3(-0.1f64..0.1),
        sa in -0.05f64..0.05, du in 1e-3f64..4e-3, r in 0.25e-3f64..1.15e-3,
        gdir in prop::array::uniform3(-1.0f64..1.0).prop_filter("nz", |d| Vector3::from(*d).norm() > 0.2),
    ) {
        let rho_l = linear_density(130.0, r);
        let g = Vector3::from(gdir).normalize() * 9.81;
        let q = q_of(xa, sa, xb, du);
        let e = gravity::potential(&q, rho_l, &g);
        let g_fd = fd_gradient(|q| gravity::potential(q, rho_l, &g).energy, &q, 1e-6);
        let scale = rho_l * 9.81;
        prop_assert!(rel_error(&e.gradient, &g_fd, scale * 1e-3) < 1e-6, "{} vs {}", e.gradient, g_fd);
        let h_fd = fd_jacobian(|q| gravity::potential(q, rho_l, &g).gradient, &q, 1e-6);
        prop_assert!(rel_error(&e.hessian, &h_fd, scale * 1e-3) < 1e-6);
        prop_assert_eq!(e.hessian, e.hessian.transpose());
        let other = gravity::potential(&q_of(xb, sa + 0.3, xa, 2.0 * du), rho_l, &g);
        prop_assert_eq!(e.hessian, other.hessian);
        // Total force on the positions is ρ_l Δu g.
        let f = -(Vector3::new(e.gradient[0], e.gradient[1], e.gradient[2])
            + Vector3::new(e.gradient[4], e.gradient[5], e.gradient[6]));
        prop_assert!((f - g * (rho_l * du)).norm() <= 1e-12 * rho_l * du * 9.81);
    }
}

/// Hand-computed: ρ = 130 kg/m³, R = 0.25 mm → ρ_l = 2.55254403e-5 kg/m;
/// a 2 mm segment weighs `ρ_l Δu |g|` = 5.00809e-7 N, all of it pointing
/// along g (-y), half per node (1e-12 relative). Lifted by h = 0.3 m (both
/// nodes), its energy rises by `ρ_l Δu |g| h` (1e-12 relative); moving it
/// sideways (⊥ g) changes nothing. The Eulerian force on `s_b` is
/// `-∂V/∂s_b = ρ_l g·x̄` = -ρ_l |g| ȳ: lengthening a raised segment costs
/// energy.
#[test]
fn weight_lift_and_eulerian_force() {
    let rho_l = linear_density(130.0, 0.25e-3);
    assert!((rho_l - 2.552_544_031_041_706_8e-5).abs() < 1e-18);
    let g = Vector3::from(G);
    let du = 2e-3;
    let q = q_of([0.0, 0.1, 0.0], 0.0, [1.5e-3, 0.1, 1e-3], du);
    let e = gravity::potential(&q, rho_l, &g);
    let w = rho_l * du * 9.81;
    assert!((w - 5.008_091_388_903_829e-7).abs() < 1e-18, "{w}");
    for o in [0, 4] {
        assert!((-e.gradient[o + 1] - (-w / 2.0)).abs() <= 1e-12 * w);
        assert_eq!(e.gradient[o], 0.0);
        assert_eq!(e.gradient[o + 2], 0.0);
    }
    let h = 0.3;
    let mut lifted = q;
    lifted[1] += h;
    lifted[5] += h;
    let el = gravity::potential(&lifted, rho_l, &g);
    assert!((el.energy - e.energy - w * h).abs() <= 1e-12 * w * h);
    let mut side = q;
    side[0] += h;
    side[6] -= h;
    assert!(
        (gravity::potential(&side, rho_l, &g).energy - e.energy).abs() <= 1e-15 * e.energy.abs()
    );
    // Eulerian force: y̅ = 0.1 m.
    assert!((-e.gradient[7] - (-rho_l * 9.81 * 0.1)).abs() <= 1e-12 * rho_l * 9.81 * 0.1);
    assert!((e.gradient[3] + e.gradient[7]).abs() <= 1e-18);
    assert!((e.energy - rho_l * du * 9.81 * 0.1).abs() <= 1e-12 * e.energy);
}
