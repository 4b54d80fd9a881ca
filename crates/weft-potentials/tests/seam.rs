//! Seam tie [`weft_potentials::seam`]: derivatives against finite
//! differences, the energy closed form, and good damping of translations.

use nalgebra::SVector;
use weft_potentials::testing::{fd_gradient, fd_jacobian, rel_error, xorshift};
use weft_potentials::{dissipation, elastic, seam};

#[test]
fn seam_tie_derivatives_energy_and_good_damping() {
    let mut r = xorshift(77);
    for _ in 0..50 {
        let q = SVector::<f64, 9>::from_fn(|_, _| 0.01 * r());
        let t = 0.5 * (1.0 + r());
        let k = 3.0;
        let e = |q: &SVector<f64, 9>| elastic(k, &seam::strain(q, t), &seam::measure());
        let ev = e(&q);
        // V = ½ k |x_n - (1-t) x_a - t x_b|².
        let d = q.fixed_rows::<3>(0) - q.fixed_rows::<3>(3) * (1.0 - t) - q.fixed_rows::<3>(6) * t;
        assert!((ev.energy - 0.5 * k * d.norm_squared()).abs() <= 1e-15 * ev.energy.max(1e-30));
        let g = fd_gradient(|q| e(q).energy, &q, 1e-6);
        assert!(rel_error(&ev.gradient, &g, 1e-12) < 1e-7);
        let hs = fd_jacobian(|q| e(q).gradient, &q, 1e-6);
        assert!(rel_error(&ev.hessian, &hs, 1e-12) < 1e-7);
        // A common translation of the three nodes is not damped.
        let c = SVector::<f64, 3>::new(r(), r(), r());
        let qdot = SVector::<f64, 9>::from_fn(|i, _| c[i % 3]);
        let dd = dissipation(0.1, &seam::strain(&q, t), &seam::measure(), &qdot);
        assert!(dd.force.norm() < 1e-15, "{}", dd.force.norm());
    }
}
