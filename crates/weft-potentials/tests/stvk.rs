//! StVK membrane triangle [SBO18 §4, eq. 13-16]: derivatives against finite
//! differences, closed forms for stretch and shear, invariance under rigid
//! motion (energy and dissipation), PSD projection, refused inputs; the
//! same for an orthotropic (woven) membrane.

use nalgebra::{Matrix3, Rotation3, SMatrix, SVector, Vector3};
use proptest::prelude::*;
use weft_potentials::stvk::{DOFS, Stvk, isotropic};
use weft_potentials::testing::{fd_gradient, fd_jacobian, rel_error};
use weft_potentials::{Hessian, Measure, Strain, dissipation, elastic_projected_generic};

/// Membrane moduli (N/m), of the order of a woven cotton's tensile rigidity.
const LAMBDA: f64 = 300.0;
const MU: f64 = 500.0;
/// SBO18 §6's medium damping (N·s/m).
const LAMBDA_D: f64 = 30.0;
const MU_D: f64 = 20.0;

const REST: [[f64; 2]; 3] = [[0.0, 0.0], [0.01, 0.0], [0.002, 0.008]];

fn tri() -> Stvk {
    Stvk::new(REST, &isotropic(LAMBDA, MU), &isotropic(LAMBDA_D, MU_D)).unwrap()
}

/// Orthotropic moduli of a woven fabric in the rest frame's axes (N/m):
/// tensile `C11`, `C22`, Poisson coupling `C12`, and a shear stiffness
/// `G` a hundredth of the tensile, as woven cotton's KES-F values have
/// (`weft_core::preset`).
const C11: f64 = 800.0;
const C22: f64 = 600.0;
const C12: f64 = 50.0;
const G: f64 = 8.0;
/// Damping time of the orthotropic triangle's `C_d = β C` (s).
const BETA: f64 = 0.02;

fn ortho_c() -> Matrix3<f64> {
    Matrix3::new(C11, C12, 0.0, C12, C22, 0.0, 0.0, 0.0, 2.0 * G)
}

fn ortho() -> Stvk {
    Stvk::new(REST, &ortho_c(), &(ortho_c() * BETA)).unwrap()
}

fn placed(x: [[f64; 3]; 3]) -> SVector<f64, DOFS> {
    SVector::from_fn(|i, _| x[i / 3][i % 3])
}

/// The rest triangle in the world, deformed by the 3x3 matrix `a` and moved
/// by `t`, plus a perturbation `p` per coordinate (m).
fn config(a: SMatrix<f64, 3, 3>, t: Vector3<f64>, p: &[f64]) -> SVector<f64, DOFS> {
    let mut q = SVector::<f64, DOFS>::zeros();
    for i in 0..3 {
        let x = a * Vector3::new(REST[i][0], REST[i][1], 0.0) + t;
        for d in 0..3 {
            q[3 * i + d] = x[d] + p[3 * i + d];
        }
    }
    q
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]
    /// Strain Jacobian and Hessians, energy gradient and exact Hessian, and
    /// the dissipative force and velocity Jacobian against central
    /// differences (step 1e-8 m on a 1 cm triangle): relative error below
    /// 1e-6 of the element's natural scale.
    #[test]
    fn derivatives_match_finite_differences(
        a in prop::array::uniform9(-0.3f64..0.3),
        p in prop::collection::vec(-1e-3f64..1e-3, 9),
        v in prop::collection::vec(-1.0f64..1.0, 9),
    ) {
        let m = SMatrix::<f64, 3, 3>::identity() + SMatrix::<f64, 3, 3>::from_row_slice(&a);
        let q = config(m, Vector3::new(0.1, 0.2, -0.3), &p);
        let qdot = SVector::<f64, DOFS>::from_column_slice(&v);
        let h = 1e-8;
        for (t, moduli, damping) in [
            (tri(), LAMBDA + MU, LAMBDA_D + MU_D),
            (ortho(), C11, BETA * C11),
        ] {
        let s = t.green_strain(&q);
        let j_fd = fd_jacobian(|q| t.green_strain(q).value, &q, h);
        prop_assert!(rel_error(&s.jacobian, &j_fd, 1.0) < 1e-6);
        for c in 0..3 {
            let h_fd = fd_jacobian(|q| t.green_strain(q).jacobian.row(c).transpose(), &q, h);
            prop_assert!(rel_error(&s.hessians[c], &h_fd, 1e2) < 1e-6, "strain Hessian {c}");
        }
        let e = t.elastic(&q);
        let scale = moduli * t.area() / 0.01;
        let g_fd = fd_gradient(|q| t.elastic(q).energy, &q, h);
        prop_assert!(rel_error(&e.gradient, &g_fd, scale * 1e-2) < 1e-6, "gradient");
        let k_fd = fd_jacobian(|q| t.elastic(q).gradient, &q, h);
        prop_assert!(rel_error(&e.hessian, &k_fd, scale / 0.01 * 1e-2) < 1e-6, "Hessian");
        prop_assert!((e.hessian - e.hessian.transpose()).norm() <= 1e-12 * e.hessian.norm());
        // Dissipation: f = -∂W/∂q̇, ∂f/∂q̇.
        let d = t.dissipation(&q, &qdot).unwrap();
        let f_fd = -fd_gradient(|qd| t.dissipation(&q, qd).unwrap().potential, &qdot, 1e-6);
        let dscale = damping * t.area() / 0.01;
        prop_assert!(rel_error(&d.force, &f_fd, dscale * 1e-2) < 1e-6, "force");
        let jv_fd = fd_jacobian(|qd| t.dissipation(&q, qd).unwrap().force, &qdot, 1e-6);
        prop_assert!(rel_error(&d.velocity_jacobian, &jv_fd, dscale / 0.01 * 1e-2) < 1e-6);
        // Clamped position Jacobian: negative semi-definite.
        let ev = d.position_jacobian.symmetric_eigenvalues();
        prop_assert!(ev.max() <= 1e-9 * d.position_jacobian.norm().max(1e-30));
        // Projected elastic Hessian: PSD, same energy and gradient.
        let ep = t.elastic_projected(&q);
        prop_assert_eq!(ep.energy, e.energy);
        prop_assert_eq!(ep.gradient, e.gradient);
        prop_assert!(ep.hessian.symmetric_eigenvalues().min() >= -1e-9 * ep.hessian.norm());
        }
    }
}

/// Uniaxial stretch by s along the rest x axis: `E₀₀ = (s² - 1)/2`, the
/// rest zero, `Ψ = (λ/2 + μ) E₀₀²`; simple shear by γ: `E₀₁ = γ/2`,
/// `E₁₁ = γ²/2`, `Ψ = λ/2 (γ²/2)² + μ (γ⁴/4 + 2 γ²/4)` [SBO18 eq. 13].
#[test]
fn stretch_and_shear_closed_forms() {
    let t = tri();
    let a = t.area();
    assert!((a - 0.5 * 0.01 * 0.008).abs() < 1e-18);
    for s in [0.9, 1.0, 1.05, 1.3] {
        let q = config(
            SMatrix::<f64, 3, 3>::from_diagonal(&Vector3::new(s, 1.0, 1.0)),
            Vector3::zeros(),
            &[0.0; 9],
        );
        let e00 = 0.5 * (s * s - 1.0);
        let expected = a * (0.5 * LAMBDA + MU) * e00 * e00;
        let got = t.elastic(&q).energy;
        assert!(
            (got - expected).abs() <= 1e-12 * expected.max(1e-20),
            "s {s}: {got} vs {expected}"
        );
    }
    for g in [0.05, 0.2] {
        let mut m = SMatrix::<f64, 3, 3>::identity();
        m[(0, 1)] = g;
        let q = config(m, Vector3::zeros(), &[0.0; 9]);
        let s = t.green_strain(&q).value;
        assert!((s[0]).abs() < 1e-15 && (s[1] - 0.5 * g * g).abs() < 1e-15);
        assert!((s[2] - std::f64::consts::SQRT_2 * 0.5 * g).abs() < 1e-15);
        let (e11, e01) = (0.5 * g * g, 0.5 * g);
        let psi = 0.5 * LAMBDA * e11 * e11 + MU * (e11 * e11 + 2.0 * e01 * e01);
        let got = t.elastic(&q).energy;
        assert!(
            (got - a * psi).abs() <= 1e-12 * a * psi,
            "γ {g}: {got} vs {}",
            a * psi
        );
    }
}

/// The orthotropic membrane: uniaxial stretch by `s` along either axis costs
/// `½ Cᵢᵢ Eᵢᵢ²`, and simple shear by `γ` (`E₀₁ = γ/2`, `E₁₁ = γ²/2`)
/// costs `½ C22 E₁₁² + 2 G E₀₁²`, so the small-angle shear energy is
/// `½ G γ²`, KES-F's `F = G γ` per width.
#[test]
fn orthotropic_closed_forms() {
    let t = ortho();
    let a = t.area();
    for s in [0.9, 1.05, 1.3] {
        let e = 0.5 * (s * s - 1.0);
        for (axis, c) in [(0, C11), (1, C22)] {
            let mut d = Vector3::new(1.0, 1.0, 1.0);
            d[axis] = s;
            let q = config(
                SMatrix::<f64, 3, 3>::from_diagonal(&d),
                Vector3::zeros(),
                &[0.0; 9],
            );
            let expected = a * 0.5 * c * e * e;
            let got = t.elastic(&q).energy;
            assert!(
                (got - expected).abs() <= 1e-12 * expected,
                "axis {axis}, s {s}: {got} vs {expected}"
            );
        }
    }
    for g in [1e-3, 0.05, 0.2] {
        let mut m = SMatrix::<f64, 3, 3>::identity();
        m[(0, 1)] = g;
        let q = config(m, Vector3::zeros(), &[0.0; 9]);
        let (e11, e01) = (0.5 * g * g, 0.5 * g);
        let expected = a * (0.5 * C22 * e11 * e11 + 2.0 * G * e01 * e01);
        let got = t.elastic(&q).energy;
        assert!(
            (got - expected).abs() <= 1e-12 * expected,
            "γ {g}: {got} vs {expected}"
        );
    }
    let mut m = SMatrix::<f64, 3, 3>::identity();
    m[(0, 1)] = 1e-3;
    let q = config(m, Vector3::zeros(), &[0.0; 9]);
    let small = t.elastic(&q).energy / (a * 0.5 * G * 1e-6);
    assert!((small - 1.0).abs() < 1e-3, "small-angle shear: {small}");
}

/// Rigid motion: no energy, no force; a rigidly moving triangle (any
/// rotation rate and translation velocity) dissipates nothing and feels no
/// damping force [SBO18 eq. 1], whatever its deformation.
#[test]
fn rigid_motion_is_neither_strained_nor_damped() {
    let t = tri();
    let r = Rotation3::from_euler_angles(0.4, -1.1, 2.0).into_inner();
    let q = config(r, Vector3::new(1.0, -2.0, 0.5), &[0.0; 9]);
    let e = t.elastic(&q);
    assert!(e.energy.abs() < 1e-20 && e.gradient.norm() < 1e-12);
    // A stretched triangle moving rigidly: ω × x + v.
    let q = config(
        r * SMatrix::<f64, 3, 3>::from_diagonal(&Vector3::new(1.2, 0.9, 1.0)),
        Vector3::zeros(),
        &[0.0; 9],
    );
    let (w, v) = (Vector3::new(0.3, -2.0, 5.0), Vector3::new(1.0, 0.0, -3.0));
    let qdot = SVector::<f64, DOFS>::from_fn(|i, _| {
        let x = Vector3::new(q[3 * (i / 3)], q[3 * (i / 3) + 1], q[3 * (i / 3) + 2]);
        (w.cross(&x) + v)[i % 3]
    });
    let d = t.dissipation(&q, &qdot).unwrap();
    assert!(d.potential.abs() < 1e-12, "W = {}", d.potential);
    assert!(d.force.norm() < 1e-9, "f = {}", d.force.norm());
    // A stretching motion is damped.
    let stretch = SVector::<f64, DOFS>::from_fn(|i, _| if i % 3 == 0 { q[i] } else { 0.0 });
    assert!(t.dissipation(&q, &stretch).unwrap().potential > 1e-6);
}

/// Uniform stretch (positive stress): the projection changes nothing.
#[test]
fn projection_is_exact_under_tension() {
    let t = tri();
    let q = config(
        SMatrix::<f64, 3, 3>::from_diagonal(&Vector3::new(1.1, 1.05, 1.0)),
        Vector3::zeros(),
        &[0.0; 9],
    );
    let (e, p) = (t.elastic(&q), t.elastic_projected(&q));
    assert!((e.hessian - p.hessian).norm() <= 1e-12 * e.hessian.norm());
    // Under compression the exact Hessian is indefinite and the projection
    // is not.
    let q = config(
        SMatrix::<f64, 3, 3>::from_diagonal(&Vector3::new(0.8, 0.8, 1.0)),
        Vector3::zeros(),
        &[0.0; 9],
    );
    let (e, p) = (t.elastic(&q), t.elastic_projected(&q));
    assert!(e.hessian.symmetric_eigenvalues().min() < -1e-6 * e.hessian.norm());
    assert!(p.hessian.symmetric_eigenvalues().min() >= -1e-9 * p.hessian.norm());
}

#[test]
fn degenerate_triangles_and_bad_moduli_are_refused() {
    let (c, zero) = (isotropic(LAMBDA, MU), Matrix3::zeros());
    assert!(Stvk::new([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]], &c, &zero).is_none());
    assert!(Stvk::new([[0.0, 0.0], [f64::NAN, 0.0], [0.0, 1.0]], &c, &zero).is_none());
    assert!(Stvk::new(REST, &isotropic(LAMBDA, 0.0), &zero).is_none());
    assert!(Stvk::new(REST, &isotropic(-MU, MU), &zero).is_none());
    assert!(Stvk::new(REST, &c, &isotropic(1.0, -1.0)).is_none());
    let mut asymmetric = ortho_c();
    asymmetric[(0, 1)] = -C12;
    assert!(Stvk::new(REST, &asymmetric, &zero).is_none());
    let mut nan = ortho_c();
    nan[(2, 2)] = f64::NAN;
    assert!(Stvk::new(REST, &nan, &zero).is_none());
    let undamped = Stvk::new(REST, &c, &zero).unwrap();
    assert!(
        undamped
            .dissipation(&placed([[0.0; 3]; 3]), &SVector::zeros())
            .is_none()
    );
}

/// The assembler's combined evaluation equals the separate ones (every
/// mode and the position Jacobian switch: `tests/projected.rs`).
#[test]
fn combined_evaluation_equals_the_separate_ones() {
    let t = tri();
    let q = SVector::<f64, DOFS>::from_fn(|i, _| {
        0.01 * ((i * 7 % 5) as f64 - 2.0) + if i % 3 == 0 { 0.02 } else { 0.0 }
    });
    let qd = SVector::<f64, DOFS>::from_fn(|i, _| 0.1 * ((i * 3 % 4) as f64 - 1.5));
    for exact in [true, false] {
        let mode = if exact {
            Hessian::Exact
        } else {
            Hessian::Projected
        };
        let (ev, d) = t.elastic_and_dissipation(&q, &qd, mode, true);
        let ev0 = if exact {
            t.elastic(&q)
        } else {
            t.elastic_projected(&q)
        };
        assert_eq!(ev.energy, ev0.energy);
        assert_eq!(ev.gradient, ev0.gradient);
        assert_eq!(ev.hessian, ev0.hessian);
        let (d, d0) = (d.unwrap(), t.dissipation(&q, &qd).unwrap());
        assert_eq!(d.force, d0.force);
        assert_eq!(d.velocity_jacobian, d0.velocity_jacobian);
        assert_eq!(d.position_jacobian, d0.position_jacobian);
    }
}

/// `M ε` of a strain (value, Jacobian and Hessians), as the element weights
/// the Green strain by `Lᵀ`.
fn weighted_strain(m: &Matrix3<f64>, s: &Strain<3, DOFS>) -> Strain<3, DOFS> {
    Strain {
        value: m * s.value,
        jacobian: m * s.jacobian,
        hessians: std::array::from_fn(|i| {
            (0..3).fold(SMatrix::zeros(), |acc, j| acc + s.hessians[j] * m[(i, j)])
        }),
    }
}

/// The clamps' 3x3 closed form (`K⁺ ⊗ I₃`) equals the generic 9x9
/// projection of the stress-weighted strain Hessian (`project_psd` of
/// `Σ S_c ∇²ε_c`) to 1e-12 of its norm, for the elastic Hessian and the
/// dissipation's position Jacobian, on isotropic and orthotropic
/// triangles stretched, compressed and sheared (the clamp active in most).
#[test]
fn closed_form_clamps_equal_the_generic_projection() {
    let mut clamped = 0;
    let mut cases = 0;
    for (t, c, c_d) in [
        (tri(), isotropic(LAMBDA, MU), isotropic(LAMBDA_D, MU_D)),
        (ortho(), ortho_c(), ortho_c() * BETA),
    ] {
        let lt = c.cholesky().expect("SPD").l().transpose();
        let lt_d = c_d.cholesky().expect("SPD").l().transpose();
        let area = Measure::constant(t.area());
        for (i, sx) in [0.7, 0.9, 1.0, 1.1, 1.3].into_iter().enumerate() {
            for (j, sy) in [0.8, 1.0, 1.2].into_iter().enumerate() {
                let shear = 0.3 * (i as f64 - 2.0) / 2.0;
                let a = Matrix3::new(sx, shear, 0.0, 0.1 * shear, sy, 0.0, 0.05, -0.02, 1.0);
                let p: Vec<f64> = (0..9).map(|k| 1e-4 * ((k * 5 + j) % 7) as f64).collect();
                let q = config(a, Vector3::new(0.1, -0.2, 0.3), &p);
                let qd =
                    SVector::<f64, DOFS>::from_fn(|k, _| 0.05 * ((k * 3 + i) % 5) as f64 - 0.1);
                let e = t.green_strain(&q);
                let generic = elastic_projected_generic(1.0, &weighted_strain(&lt, &e), &area);
                let closed = t.elastic_projected(&q);
                assert_eq!(
                    (closed.energy, closed.gradient),
                    (generic.energy, generic.gradient)
                );
                let err = (closed.hessian - generic.hessian).norm() / t.elastic(&q).hessian.norm();
                assert!(err <= 1e-12, "elastic clamp differs by {err:e}");
                let s_d = weighted_strain(&lt_d, &e);
                let gd = dissipation(1.0, &s_d, &area, &qd);
                let cd = t.dissipation(&q, &qd).expect("damped");
                assert_eq!((cd.force, cd.potential), (gd.force, gd.potential));
                // Relative to the unclamped term: a clamp that removes
                // nearly everything leaves round-off of that size.
                let raw = (0..3).fold(SMatrix::<f64, DOFS, DOFS>::zeros(), |acc, k| {
                    acc + s_d.hessians[k] * (gd.strain_rate[k] * t.area())
                });
                let err = (cd.position_jacobian - gd.position_jacobian).norm() / raw.norm();
                assert!(err <= 1e-12, "dissipation clamp differs by {err:e}");
                if closed.hessian != t.elastic(&q).hessian {
                    clamped += 1;
                }
                cases += 1;
            }
        }
    }
    assert!(
        clamped * 2 > cases,
        "the clamp acted in only {clamped} of {cases}"
    );
}
