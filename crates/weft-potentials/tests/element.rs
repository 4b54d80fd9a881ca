//! The generic element framework: eigen-solver, PSD projection [SBO18 §3.4],
//! the composition `V = ½ Ω k |ε|²` [SBO17 eq. 2-3] and the dissipation terms
//! [SBO17 eq. 8-11], on synthetic strains with known derivatives.

use nalgebra::{SMatrix, SVector};
use proptest::prelude::*;
use weft_potentials::element::{project_psd, symmetric_eigen};
use weft_potentials::testing::{fd_gradient, fd_jacobian, rel_error};
use weft_potentials::{Measure, Strain, dissipation, elastic};

fn sym6(v: [f64; 36]) -> SMatrix<f64, 6, 6> {
    let m = SMatrix::<f64, 6, 6>::from_row_slice(&v);
    (m + m.transpose()) * 0.5
}

proptest! {
    /// Jacobi eigen-decomposition reconstructs the matrix to 1e-13 relative,
    /// with orthonormal eigenvectors.
    #[test]
    fn eigen_reconstructs(v in prop::array::uniform32(-1.0f64..1.0), w in prop::array::uniform4(-1.0f64..1.0)) {
        let mut a = [0.0; 36];
        a[..32].copy_from_slice(&v);
        a[32..].copy_from_slice(&w);
        let m = sym6(a);
        let (l, q) = symmetric_eigen(&m);
        let back = q * SMatrix::<f64, 6, 6>::from_diagonal(&l) * q.transpose();
        prop_assert!((back - m).norm() < 1e-13 * m.norm().max(1e-300));
        prop_assert!((q.transpose() * q - SMatrix::<f64, 6, 6>::identity()).norm() < 1e-13);
    }

    /// The projection is PSD (smallest eigenvalue ≥ -1e-13 |A|), leaves a PSD
    /// matrix unchanged, and is the nearest PSD matrix: it differs from A
    /// exactly by the negative eigen-part.
    #[test]
    fn projection_is_psd_and_idempotent(v in prop::array::uniform32(-1.0f64..1.0), w in prop::array::uniform4(-1.0f64..1.0)) {
        let mut a = [0.0; 36];
        a[..32].copy_from_slice(&v);
        a[32..].copy_from_slice(&w);
        let m = sym6(a);
        let p = project_psd(&m);
        let (lp, _) = symmetric_eigen(&p);
        prop_assert!(lp.min() >= -1e-13 * m.norm());
        prop_assert!((project_psd(&p) - p).norm() < 1e-12 * m.norm());
        let (l, _) = symmetric_eigen(&m);
        let neg: f64 = l.iter().filter(|x| **x < 0.0).map(|x| x * x).sum::<f64>().sqrt();
        prop_assert!(((p - m).norm() - neg).abs() < 1e-12 * m.norm());
    }
}

/// A synthetic 2-component strain on 3 coordinates with closed-form
/// derivatives, and an affine measure, to test the composition formulas.
fn synthetic(q: &SVector<f64, 3>) -> (Strain<2, 3>, Measure<3>) {
    let (a, b, c) = (q[0], q[1], q[2]);
    let value = SVector::from([a * b + c.sin(), a * a - c]);
    let jacobian = SMatrix::<f64, 2, 3>::new(b, a, c.cos(), 2.0 * a, 0.0, -1.0);
    let h0 = SMatrix::<f64, 3, 3>::new(0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, -c.sin());
    let h1 = SMatrix::<f64, 3, 3>::new(2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    let measure = Measure {
        value: 1.5 + 0.3 * a - 0.2 * c,
        gradient: SVector::from([0.3, 0.0, -0.2]),
    };
    (
        Strain {
            value,
            jacobian,
            hessians: [h0, h1],
        },
        measure,
    )
}

/// Energy gradient and Hessian of the composition agree with central
/// differences to 1e-7 relative (step 1e-6 on O(1) coordinates), so the ∇Ω
/// terms of [SBO17 eq. 3] are right.
#[test]
fn composition_matches_finite_differences() {
    let k = 7.0;
    for q in [[0.3, -0.7, 0.2], [1.1, 0.4, -0.9], [-0.5, 0.25, 1.3]] {
        let q = SVector::from(q);
        let energy = |q: &SVector<f64, 3>| {
            let (s, m) = synthetic(q);
            elastic(k, &s, &m).energy
        };
        let grad = |q: &SVector<f64, 3>| {
            let (s, m) = synthetic(q);
            elastic(k, &s, &m).gradient
        };
        let (s, m) = synthetic(&q);
        let e = elastic(k, &s, &m);
        assert!(rel_error(&e.gradient, &fd_gradient(energy, &q, 1e-6), 1e-6) < 1e-7);
        assert!(rel_error(&e.hessian, &fd_jacobian(grad, &q, 1e-6), 1e-6) < 1e-7);
    }
}

/// Dissipation: force = -∂W/∂q̇ (checked by differences in q̇), velocity
/// Jacobian = its derivative, and no ∇Ω term (the force vanishes when ε̇ = 0
/// even though ∇Ω ≠ 0); the clamped position Jacobian is symmetric NSD.
#[test]
fn dissipation_terms() {
    let q = SVector::from([0.3, -0.7, 0.2]);
    let (s, m) = synthetic(&q);
    let kd = 0.4;
    let qdot = SVector::from([0.5, -1.0, 2.0]);
    let d = dissipation(kd, &s, &m, &qdot);
    let w = |v: &SVector<f64, 3>| dissipation(kd, &s, &m, v).potential;
    let f = |v: &SVector<f64, 3>| dissipation(kd, &s, &m, v).force;
    assert!(rel_error(&d.force, &(-fd_gradient(w, &qdot, 1e-6)), 1e-9) < 1e-8);
    assert!(rel_error(&d.velocity_jacobian, &fd_jacobian(f, &qdot, 1e-6), 1e-9) < 1e-8);
    // A velocity in the null space of ∇ε: zero force although ∇Ω ≠ 0.
    let null = s
        .jacobian
        .row(0)
        .transpose()
        .cross(&s.jacobian.row(1).transpose());
    let dn = dissipation(kd, &s, &m, &null);
    assert!(dn.force.norm() < 1e-14 * null.norm());
    let pj = d.position_jacobian;
    assert!((pj - pj.transpose()).norm() < 1e-14 * pj.norm().max(1e-300));
    let (l, _) = symmetric_eigen(&pj);
    assert!(l.max() <= 1e-14 * pj.norm());
    // The unclamped stress-weighted Hessian here is indefinite, so clamping did something.
    let raw = s.hessians[0] * d.strain_rate[0] + s.hessians[1] * d.strain_rate[1];
    let (lr, _) = symmetric_eigen(&raw);
    assert!(lr.min() < 0.0 && lr.max() > 0.0);
}

/// Degenerate and structured inputs: zero, diagonal, repeated eigenvalues,
/// rank one, tiny and huge scales, 1x1 and 12x12. Reconstruction to 1e-13
/// relative and orthonormal eigenvectors in every case.
#[test]
fn eigen_structured_cases() {
    fn check<const N: usize>(m: SMatrix<f64, N, N>) {
        let (l, q) = symmetric_eigen(&m);
        let back = q * SMatrix::<f64, N, N>::from_diagonal(&l) * q.transpose();
        assert!((back - m).norm() <= 1e-13 * m.norm().max(1e-300), "{m}");
        assert!((q.transpose() * q - SMatrix::<f64, N, N>::identity()).norm() < 1e-13);
    }
    check(SMatrix::<f64, 6, 6>::zeros());
    check(SMatrix::<f64, 6, 6>::from_diagonal(&SVector::from([
        3.0, -1.0, 0.0, 2.0, 2.0, -5.0,
    ])));
    check(SMatrix::<f64, 6, 6>::identity() * 2.5);
    let v = SVector::<f64, 7>::from([1.0, -2.0, 0.5, 0.0, 3.0, 1e-3, -1.0]);
    check(v * v.transpose());
    check(v * v.transpose() * 1e-20);
    check(v * v.transpose() * 1e20 - SMatrix::<f64, 7, 7>::identity() * 1e19);
    check(SMatrix::<f64, 1, 1>::new(-4.0));
    let mut s = 1u64;
    let mut r = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let a = SMatrix::<f64, 12, 12>::from_fn(|_, _| r());
    check(a + a.transpose());
    // Eigenvalues of a known matrix: [[2, 1], [1, 2]] has 1 and 3.
    let (l, _) = symmetric_eigen(&SMatrix::<f64, 2, 2>::new(2.0, 1.0, 1.0, 2.0));
    let (lo, hi) = (l.min(), l.max());
    assert!((lo - 1.0).abs() < 1e-15 && (hi - 3.0).abs() < 1e-15);
}
