//! Segment inertia [SJLP11, CLMMO14, DESIGN §4] and the Euler-Lagrange
//! inertia terms [SBO17 eq. 1]: structure of the mass matrix, kinetic energy
//! against analytic rigid motions and an independent quadrature of the
//! material velocity, every derivative against central finite differences,
//! energy bookkeeping of the inertial force, and Rayleigh damping of rigid
//! motion [SBO17 eq. 4].

use nalgebra::{SMatrix, SVector, Vector3};
use proptest::prelude::*;
use weft_potentials::element::{rayleigh_force, symmetric_eigen};
use weft_potentials::inertia::{
    self, inertia_force, inertia_force_jacobians, kinetic_energy, kinetic_energy_gradient,
    lumped_mass, mass_derivative_times_velocity, mass_matrix, momentum,
};
use weft_potentials::testing::{fd_gradient, fd_jacobian, rel_error};
use weft_potentials::{dissipation, elastic, stretch};

type V8 = SVector<f64, 8>;

const DENSITY: f64 = 130.0; // kg/m³ [SBO17 Table 1]

/// Linear density `ρ π R²` (kg/m) for a yarn radius in m.
fn rho_l(radius: f64) -> f64 {
    DENSITY * std::f64::consts::PI * radius * radius
}

/// A segment of rest length `du` (1..4 mm) starting at arc length `s_a`, whose
/// chord along `dir` is `ratio·du` long (so `|w| = ratio`).
fn config(dir: [f64; 3], ratio: f64, du: f64, xa: [f64; 3], s_a: f64) -> V8 {
    let d = Vector3::from(dir).normalize() * ratio * du;
    V8::from([
        xa[0],
        xa[1],
        xa[2],
        s_a,
        xa[0] + d.x,
        xa[1] + d.y,
        xa[2] + d.z,
        s_a + du,
    ])
}

fn w_of(q: &V8) -> Vector3<f64> {
    Vector3::new(q[4] - q[0], q[5] - q[1], q[6] - q[2]) / (q[7] - q[3])
}

/// Kinetic energy by 3-point Gauss-Legendre quadrature over the rest length of
/// the velocity of *material points*, where that velocity is obtained
/// independently of the module's formula: central difference in time
/// (step `ht`) of the position `x(σ, t) = x_a + (σ - s_a)/Δu · Δx` of the
/// fixed material coordinate `σ` along the motion `q(t) = q + t q̇`.
fn kinetic_energy_quadrature(rho_l: f64, q: &V8, qdot: &V8, ht: f64) -> f64 {
    let du = q[7] - q[3];
    let pos = |sigma: f64, t: f64| {
        let qt = q + qdot * t;
        let xa = Vector3::new(qt[0], qt[1], qt[2]);
        let xb = Vector3::new(qt[4], qt[5], qt[6]);
        let xi = (sigma - qt[3]) / (qt[7] - qt[3]);
        xa + (xb - xa) * xi
    };
    let r = (0.6f64).sqrt();
    let nodes = [(-r, 5.0 / 9.0), (0.0, 8.0 / 9.0), (r, 5.0 / 9.0)];
    let mut t = 0.0;
    for (z, wt) in nodes {
        let xi = 0.5 * (z + 1.0);
        let sigma = q[3] + xi * du;
        let v = (pos(sigma, ht) - pos(sigma, -ht)) / (2.0 * ht);
        t += 0.5 * wt * 0.5 * rho_l * v.norm_squared() * du; // dξ = dz/2
    }
    t
}

fn dir_strategy() -> impl Strategy<Value = [f64; 3]> {
    prop::array::uniform3(-1.0f64..1.0).prop_filter("nonzero", |d| Vector3::from(*d).norm() > 0.2)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// `M` is symmetric to round-off and PSD of rank 6: its eigenvalues are
    /// `(ρ_l Δu/6)·{0, 0, 1, 1, 1+|w|², 3, 3, 3(1+|w|²)}` (Kronecker product
    /// of `[[2,1],[1,2]]` with `A = J_wᵀJ_w`), matched to 1e-10 of the
    /// largest; exactly 6 exceed 1e-10 of the largest. The null vectors
    /// `(w α, α, w β, β)` (nodes moving with the material) give `|M k|` below
    /// 1e-12 of `|M| |k|`. Stretch ratios 0.7..1.4 and `Δu` 1..4 mm.
    #[test]
    fn mass_matrix_symmetric_psd_rank6(
        dir in dir_strategy(), ratio in 0.7f64..1.4, du in 1e-3f64..4e-3,
        xa in prop::array::uniform3(-0.01f64..0.01), radius in 0.25e-3f64..1.15e-3,
        alpha in -1.0f64..1.0, beta in -1.0f64..1.0,
    ) {
        let rl = rho_l(radius);
        let q = config(dir, ratio, du, xa, 0.02);
        let m = mass_matrix(rl, &q);
        prop_assert!((m - m.transpose()).norm() <= 1e-15 * m.norm());
        let (vals, _) = symmetric_eigen(&m);
        let mut got: Vec<f64> = vals.iter().copied().collect();
        got.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let c = rl * du / 6.0;
        let ww = w_of(&q).norm_squared();
        let mut want = [0.0, 0.0, c, c, c * (1.0 + ww), 3.0 * c, 3.0 * c, 3.0 * c * (1.0 + ww)];
        want.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let top = want[7];
        for (g, w) in got.iter().zip(want.iter()) {
            prop_assert!((g - w).abs() <= 1e-10 * top, "eigenvalues {:?} vs {:?}", got, want);
        }
        prop_assert!(got[0] >= -1e-12 * top);
        prop_assert_eq!(got.iter().filter(|&&l| l > 1e-10 * top).count(), 6);
        let w = w_of(&q);
        let k = V8::from([w.x * alpha, w.y * alpha, w.z * alpha, alpha, w.x * beta, w.y * beta, w.z * beta, beta]);
        prop_assert!((m * k).norm() <= 1e-12 * m.norm() * k.norm());
    }

    /// Total mass and lumping: for each axis, the sum of the four
    /// translational entries coupling `x_a`/`x_b` along that axis is
    /// `ρ_l Δu` (all 6x6 translational entries sum to `3 ρ_l Δu`), each
    /// translational row sums to [`lumped_mass`] `= ρ_l Δu / 2`, to 1e-14
    /// relative.
    #[test]
    fn total_mass_and_lumped_mass(
        dir in dir_strategy(), ratio in 0.7f64..1.4, du in 1e-3f64..4e-3,
        radius in 0.25e-3f64..1.15e-3,
    ) {
        let rl = rho_l(radius);
        let q = config(dir, ratio, du, [0.001, -0.002, 0.003], 0.0);
        let m = mass_matrix(rl, &q);
        let total = rl * du;
        let tr = [0, 1, 2, 4, 5, 6];
        for i in 0..3 {
            let s = m[(i, i)] + m[(i, 4 + i)] + m[(4 + i, i)] + m[(4 + i, 4 + i)];
            prop_assert!((s - total).abs() <= 1e-14 * total);
        }
        let all: f64 = tr.iter().flat_map(|&i| tr.iter().map(move |&j| (i, j))).map(|ij| m[ij]).sum();
        prop_assert!((all - 3.0 * total).abs() <= 1e-14 * total);
        for &i in &tr {
            let row: f64 = tr.iter().map(|&j| m[(i, j)]).sum();
            prop_assert!((row - lumped_mass(rl, du)).abs() <= 1e-14 * total);
        }
        prop_assert!((2.0 * lumped_mass(rl, du) - total).abs() <= 1e-15 * total);
    }

    /// `T = ½ q̇ᵀ M q̇` to 1e-12 relative, and `T` equals the 3-point
    /// Gauss-Legendre quadrature of `½ ρ_l |material velocity|²` with the
    /// velocity from central differences in time at fixed material coordinate
    /// (step 1e-7 s: truncation ~ (ht·|ṡ|/Δu)² ≲ 1e-8, round-off ~ 1e-10),
    /// to 1e-7 relative with a floor of 1e-3 of the natural scale
    /// `½ ρ_l Δu |q̇|²`. `p = M q̇` to 1e-12 and `p = ∂T/∂q̇` by central
    /// differences (exact for a quadratic up to round-off) to 1e-8.
    #[test]
    fn kinetic_energy_matches_quadrature_of_material_velocity(
        dir in dir_strategy(), ratio in 0.7f64..1.4, du in 1e-3f64..4e-3,
        xa in prop::array::uniform3(-0.01f64..0.01), radius in 0.25e-3f64..1.15e-3,
        qdot in prop::array::uniform8(-1.0f64..1.0),
    ) {
        let rl = rho_l(radius);
        let q = config(dir, ratio, du, xa, 0.01);
        let qdot = V8::from(qdot);
        let t = kinetic_energy(rl, &q, &qdot);
        let quad = 0.5 * qdot.dot(&(mass_matrix(rl, &q) * qdot));
        let scale = 0.5 * rl * du * qdot.norm_squared();
        prop_assert!((t - quad).abs() <= 1e-12 * scale);
        let tq = kinetic_energy_quadrature(rl, &q, &qdot, 1e-7);
        prop_assert!((t - tq).abs() <= 1e-7 * t.max(1e-3 * scale), "T {} vs quadrature {}", t, tq);
        let p = momentum(rl, &q, &qdot);
        prop_assert!(rel_error(&p, &(mass_matrix(rl, &q) * qdot), 1e-3 * rl * du) < 1e-12);
        let p_fd = fd_gradient(|v| kinetic_energy(rl, &q, v), &qdot, 1e-4);
        prop_assert!(rel_error(&p, &p_fd, 1e-3 * rl * du) < 1e-8);
    }

    /// `∇_q T` against central differences of `T` in `q` (step 1e-8 m on a
    /// 1-4 mm segment: truncation ~ (h/Δu)² ≲ 1e-10, round-off ~ 1e-10):
    /// relative error below 1e-6 with the floor `1e-3 ρ_l |q̇|²` (the force
    /// scale). `Ṁ q̇` against the central difference in `t` of
    /// `M(q + t q̇) q̇` (step 1e-8 s), same tolerance and floor. The combined
    /// closed form of `f_in` equals `∇_q T - Ṁ q̇` to 1e-12 of the scale.
    #[test]
    fn gradient_and_mass_rate_match_finite_differences(
        dir in dir_strategy(), ratio in 0.7f64..1.4, du in 1e-3f64..4e-3,
        xa in prop::array::uniform3(-0.01f64..0.01), radius in 0.25e-3f64..1.15e-3,
        qdot in prop::array::uniform8(-1.0f64..1.0),
    ) {
        let rl = rho_l(radius);
        let q = config(dir, ratio, du, xa, 0.01);
        let qdot = V8::from(qdot);
        let floor = 1e-3 * rl * qdot.norm_squared();
        let g = kinetic_energy_gradient(rl, &q, &qdot);
        let g_fd = fd_gradient(|q| kinetic_energy(rl, q, &qdot), &q, 1e-8);
        let eg = rel_error(&g, &g_fd, floor);
        prop_assert!(eg < 1e-6, "grad T err {}: {} vs {}", eg, g, g_fd);
        let r = mass_derivative_times_velocity(rl, &q, &qdot);
        let ht = 1e-8;
        let r_fd = (mass_matrix(rl, &(q + qdot * ht)) * qdot - mass_matrix(rl, &(q - qdot * ht)) * qdot) / (2.0 * ht);
        let er = rel_error(&r, &r_fd, floor);
        prop_assert!(er < 1e-6, "Mdot qdot err {}: {} vs {}", er, r, r_fd);
        let f = inertia_force(rl, &q, &qdot);
        prop_assert!((f - (g - r)).norm() <= 1e-12 * (rl * qdot.norm_squared()));
    }

    /// Jacobians of `f_in` against central differences: `∂f_in/∂q` with step
    /// 1e-8 m, relative error below 1e-6 with floor `1e-3 ρ_l |q̇|²/Δu`;
    /// `∂f_in/∂q̇` with step 1e-4 m/s (`f_in` is quadratic in `q̇`, so the
    /// central difference is exact up to round-off), below 1e-8 with floor
    /// `1e-3 ρ_l |q̇|`. Euler's identity for a quadratic,
    /// `(∂f_in/∂q̇) q̇ = 2 f_in`, holds to 1e-12 of the scale.
    #[test]
    fn inertia_jacobians_match_finite_differences(
        dir in dir_strategy(), ratio in 0.7f64..1.4, du in 1e-3f64..4e-3,
        xa in prop::array::uniform3(-0.01f64..0.01), radius in 0.25e-3f64..1.15e-3,
        qdot in prop::array::uniform8(-1.0f64..1.0),
    ) {
        let rl = rho_l(radius);
        let q = config(dir, ratio, du, xa, 0.01);
        let qdot = V8::from(qdot);
        let (dq, dv) = inertia_force_jacobians(rl, &q, &qdot);
        let dq_fd = fd_jacobian(|q| inertia_force(rl, q, &qdot), &q, 1e-8);
        let eq = rel_error(&dq, &dq_fd, 1e-3 * rl * qdot.norm_squared() / du);
        prop_assert!(eq < 1e-6, "d/dq err {}", eq);
        let dv_fd = fd_jacobian(|v| inertia_force(rl, &q, v), &qdot, 1e-4);
        let ev = rel_error(&dv, &dv_fd, 1e-3 * rl * qdot.norm());
        prop_assert!(ev < 1e-8, "d/dqdot err {}", ev);
        let f = inertia_force(rl, &q, &qdot);
        prop_assert!((dv * qdot - f * 2.0).norm() <= 1e-12 * rl * qdot.norm_squared());
    }

    /// Energy bookkeeping of the Euler-Lagrange terms: `q̇·∇_q T = ½ q̇ᵀṀq̇`
    /// (T is quadratic in q̇ with `M(q)`), hence `q̇·f_in = -½ q̇ᵀṀq̇` and
    /// `dT/dt = q̇·f` along `M q̈ = f + f_in`; to 1e-12 of `ρ_l |q̇|³`.
    #[test]
    fn inertial_force_power(
        dir in dir_strategy(), ratio in 0.7f64..1.4, du in 1e-3f64..4e-3,
        radius in 0.25e-3f64..1.15e-3, qdot in prop::array::uniform8(-1.0f64..1.0),
    ) {
        let rl = rho_l(radius);
        let q = config(dir, ratio, du, [0.0; 3], 0.01);
        let qdot = V8::from(qdot);
        let scale = rl * qdot.norm().powi(3) * (1.0 + ratio).powi(2);
        let g = kinetic_energy_gradient(rl, &q, &qdot);
        let r = mass_derivative_times_velocity(rl, &q, &qdot);
        let f = inertia_force(rl, &q, &qdot);
        prop_assert!((qdot.dot(&g) - 0.5 * qdot.dot(&r)).abs() <= 1e-12 * scale);
        prop_assert!((qdot.dot(&f) + 0.5 * qdot.dot(&r)).abs() <= 1e-12 * scale);
    }
}

/// Analytic kinetic energies of rigid motions (ρ_l for R = 0.5 mm, Δu = 2 mm,
/// chord stretched to |w| = 1.2), each to 1e-12 relative:
/// - rigid translation `V`, no sliding: `½ ρ_l Δu |V|²`;
/// - rigid rotation `ω` about the midpoint, no sliding:
///   `½ ρ_l Δu |ω × ℓ̂|² ℓ²/12`, `ℓ = |Δx|` (the mass is `ρ_l Δu` whatever
///   the stretch);
/// - pure sliding `ẋ = 0`, `ṡ_a = ṡ_b = c`: the material runs along the
///   chord at speed `|w| c`, `T = ½ ρ_l Δu |w|² c²`;
/// - nodes moving with the material (`ẋ = w ṡ`): `T = 0` (≤ 1e-20 J).
#[test]
fn kinetic_energy_of_rigid_motions() {
    let rl = rho_l(0.5e-3);
    let du = 2e-3;
    let q = config([0.3, 0.5, -0.2], 1.2, du, [0.001, 0.002, 0.0], 0.05);
    let xa = Vector3::new(q[0], q[1], q[2]);
    let xb = Vector3::new(q[4], q[5], q[6]);
    let dx = xb - xa;
    let ell = dx.norm();
    let w = w_of(&q);

    let v = Vector3::new(0.4, -1.0, 0.7);
    let qdot = V8::from([v.x, v.y, v.z, 0.0, v.x, v.y, v.z, 0.0]);
    let want = 0.5 * rl * du * v.norm_squared();
    assert!((kinetic_energy(rl, &q, &qdot) - want).abs() <= 1e-12 * want);

    let om = Vector3::new(0.3, 20.0, -10.0);
    let mid = (xa + xb) * 0.5;
    let (va, vb) = (om.cross(&(xa - mid)), om.cross(&(xb - mid)));
    let qdot = V8::from([va.x, va.y, va.z, 0.0, vb.x, vb.y, vb.z, 0.0]);
    let want = 0.5 * rl * du * om.cross(&dx.normalize()).norm_squared() * ell * ell / 12.0;
    let t = kinetic_energy(rl, &q, &qdot);
    assert!((t - want).abs() <= 1e-12 * want, "{t} vs {want}");

    let c = 0.3;
    let qdot = V8::from([0.0, 0.0, 0.0, c, 0.0, 0.0, 0.0, c]);
    let want = 0.5 * rl * du * w.norm_squared() * c * c;
    assert!((kinetic_energy(rl, &q, &qdot) - want).abs() <= 1e-12 * want);
    assert!((w.norm() - 1.2).abs() < 1e-12);

    let (sa, sb) = (0.2, -0.5);
    let qdot = V8::from([
        w.x * sa,
        w.y * sa,
        w.z * sa,
        sa,
        w.x * sb,
        w.y * sb,
        w.z * sb,
        sb,
    ]);
    assert!(kinetic_energy(rl, &q, &qdot).abs() <= 1e-20);
}

/// Without sliding (`ṡ = 0`) the inertial force vanishes on the positions
/// (≤ 1e-14 of `ρ_l |q̇|²`) and its position Jacobian is zero: an ordinary
/// Lagrangian yarn has a constant mass matrix. For a rigid translation `V`
/// the arc-length rows are `∓ ρ_l |V|²/2` (to 1e-12), and at the shared node
/// of two collinear segments of different rest lengths translating together
/// they cancel (≤ 1e-14 of `ρ_l |V|²`): a uniformly translating yarn feels no
/// sliding force.
#[test]
fn no_sliding_no_positional_inertial_force() {
    let rl = rho_l(0.8e-3);
    let q = config([1.0, 0.2, 0.1], 1.1, 3e-3, [0.0; 3], 0.0);
    let qdot = V8::from([0.3, -0.2, 0.5, 0.0, -0.4, 0.1, 0.9, 0.0]);
    let f = inertia_force(rl, &q, &qdot);
    let scale = rl * qdot.norm_squared();
    for i in [0, 1, 2, 4, 5, 6] {
        assert!(f[i].abs() <= 1e-14 * scale, "{f}");
    }
    assert!(inertia_force_jacobians(rl, &q, &qdot).0.norm() == 0.0);

    let v = Vector3::new(0.4, -1.0, 0.7);
    let t8 = V8::from([v.x, v.y, v.z, 0.0, v.x, v.y, v.z, 0.0]);
    let half = 0.5 * rl * v.norm_squared();
    let seg1 = config([1.0, 0.0, 0.0], 1.1, 2e-3, [0.0; 3], 0.0);
    let seg2 = config([1.0, 0.0, 0.0], 0.9, 3.5e-3, [2.2e-3, 0.0, 0.0], 2e-3);
    let f1 = inertia_force(rl, &seg1, &t8);
    let f2 = inertia_force(rl, &seg2, &t8);
    assert!((f1[3] + half).abs() <= 1e-12 * half && (f1[7] - half).abs() <= 1e-12 * half);
    assert!((f1[7] + f2[3]).abs() <= 1e-14 * half * 2.0);
}

/// Dynamics of the Eulerian DOF alone: a straight two-segment yarn with all
/// positions and the end arc lengths fixed, the middle crossing sliding
/// (`s_1` free). Its equation of motion `M_ss s̈ = f_in[s_1]` (assembled from
/// both segments) conserves `T = ½ M_ss(s_1) ṡ²` with
/// `M_ss = (ρ_l/3)(|Δx₁|²/Δu₁ + |Δx₂|²/Δu₂)`. RK4 with 1e-6 s steps over
/// 3 ms of sliding at ~0.2 m/s (segments stretched 1.25 and 0.96): `T` is
/// conserved to 1e-9 relative, while dropping `f_in` (constant `ṡ`) would
/// change it by more than 1e-3 (also asserted).
#[test]
fn sliding_dof_conserves_kinetic_energy() {
    let rl = rho_l(0.5e-3);
    let (x0, x1, x2) = (0.0, 2.5e-3, 5.4e-3);
    let (s0, s2) = (0.0, 5.0e-3);
    let seg = |s1: f64| {
        (
            V8::from([x0, 0.0, 0.0, s0, x1, 0.0, 0.0, s1]),
            V8::from([x1, 0.0, 0.0, s1, x2, 0.0, 0.0, s2]),
        )
    };
    let mss = |s1: f64| {
        let (a, b) = seg(s1);
        mass_matrix(rl, &a)[(7, 7)] + mass_matrix(rl, &b)[(3, 3)]
    };
    let accel = |s1: f64, sd: f64| {
        let (a, b) = seg(s1);
        let fa = inertia_force(rl, &a, &V8::from([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, sd]));
        let fb = inertia_force(rl, &b, &V8::from([0.0, 0.0, 0.0, sd, 0.0, 0.0, 0.0, 0.0]));
        (fa[7] + fb[3]) / mss(s1)
    };
    let (mut s, mut sd) = (2.0e-3, 0.2);
    let m_ref = (rl / 3.0) * ((x1 - x0).powi(2) / (s - s0) + (x2 - x1).powi(2) / (s2 - s));
    assert!((mss(s) - m_ref).abs() <= 1e-14 * m_ref);
    let t0 = 0.5 * mss(s) * sd * sd;
    let h = 1e-6;
    for _ in 0..3000 {
        let (k1x, k1v) = (sd, accel(s, sd));
        let (k2x, k2v) = (
            sd + 0.5 * h * k1v,
            accel(s + 0.5 * h * k1x, sd + 0.5 * h * k1v),
        );
        let (k3x, k3v) = (
            sd + 0.5 * h * k2v,
            accel(s + 0.5 * h * k2x, sd + 0.5 * h * k2v),
        );
        let (k4x, k4v) = (sd + h * k3v, accel(s + h * k3x, sd + h * k3v));
        s += h / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
        sd += h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
    }
    assert!(s > 2.4e-3, "slid to {s}");
    let t1 = 0.5 * mss(s) * sd * sd;
    assert!((t1 - t0).abs() <= 1e-9 * t0, "T {t0} -> {t1}");
    let t_const = 0.5 * mss(s) * 0.2 * 0.2;
    assert!((t_const - t0).abs() > 1e-3 * t0);
}

/// Rayleigh baseline [SBO17 eq. 4] with the consistent mass: for a rigid
/// translation `V` without sliding, the α term pulls on the positions with a
/// total `-α ρ_l Δu V` (to 1e-12) and dissipates `-q̇·f = α ρ_l Δu |V|² =
/// 2αT` (to 1e-12): Rayleigh damps rigid motion. The β term with the stretch
/// Hessian as `K` gives nothing for the translation (≤ 1e-12 of `β k_s |V|`)
/// and neither does strain-rate damping (≤ 1e-12 of `k_d |V|`).
#[test]
fn rayleigh_damps_rigid_translation() {
    let (k_s, k_d, alpha, beta) = (5e2, 3e-7, 2.0, 1e-4);
    let rl = rho_l(0.5e-3);
    let du = 2e-3;
    let q = config([0.3, 0.5, -0.2], 1.05, du, [0.001, 0.002, 0.0], 0.0);
    let v = Vector3::new(0.4, -1.0, 0.7);
    let qdot = V8::from([v.x, v.y, v.z, 0.0, v.x, v.y, v.z, 0.0]);
    let m = mass_matrix(rl, &q);
    let k = elastic(k_s, &stretch::strain(&q), &stretch::measure(&q)).hessian;
    let f = rayleigh_force(alpha, 0.0, &m, &SMatrix::zeros(), &qdot);
    let total = Vector3::new(f[0] + f[4], f[1] + f[5], f[2] + f[6]);
    let want = -v * (alpha * rl * du);
    assert!(
        (total - want).norm() <= 1e-12 * want.norm(),
        "{total} vs {want}"
    );
    let power = -qdot.dot(&f);
    let t = kinetic_energy(rl, &q, &qdot);
    assert!((power - alpha * rl * du * v.norm_squared()).abs() <= 1e-12 * power);
    assert!((power - 2.0 * alpha * t).abs() <= 1e-12 * power);
    let fb = rayleigh_force(0.0, beta, &m, &k, &qdot);
    assert!(fb.norm() <= 1e-12 * beta * k_s * v.norm());
    let d = dissipation(k_d, &stretch::strain(&q), &stretch::measure(&q), &qdot);
    assert!(d.force.norm() <= 1e-12 * k_d * v.norm());
    assert_eq!(inertia::DOFS, 8);
}
