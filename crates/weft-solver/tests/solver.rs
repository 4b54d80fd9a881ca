//! Solver core: block-sparse matrix, PCG, assembly consistency (matrix =
//! derivative of residual), and simple dynamics with closed-form answers.

use nalgebra::{DVector, Vector3};
use weft_core::{
    Damping, FabricBuilder, Material, ModeCoefficients, NodeSelector, WovenPatchSpec, YarnSpec,
};
use weft_potentials::testing::xorshift as rng;
use weft_solver::bsr::{B, BlockSparse};
use weft_solver::cholesky::SparseCholesky;
use weft_solver::par::inf_norm;
use weft_solver::pcg::{BlockJacobi, CpuOps, PcgStatus, PcgTolerance, pcg};
use weft_solver::{Assembler, LinearSolver, Settings, Simulation, Tie};

/// SpMV equals the dense product to round-off; PCG solves an SPD system to
/// the requested tolerance and leaves fixed DOFs at zero.
#[test]
fn spmv_and_pcg() {
    let n = 30;
    let mut r = rng(3);
    let pairs: Vec<(usize, usize)> = (0..n - 1)
        .map(|i| (i, i + 1))
        .chain((0..n - 3).map(|i| (i, i + 3)))
        .collect();
    // Symmetric storage (upper triangle), as the assembler builds it.
    let mut a = BlockSparse::from_pairs(n, pairs);
    assert!(a.symmetric);
    // SPD: random off-diagonal blocks (their transposes below the
    // diagonal), dominant diagonal.
    for i in 0..n {
        for k in a.row_ptr[i]..a.row_ptr[i + 1] {
            let j = a.cols[k] as usize;
            assert!(j >= i, "only the upper triangle is stored");
            if j > i {
                a.values[k] = std::array::from_fn(|_| std::array::from_fn(|_| r()));
            }
        }
        let d = a.diag[i];
        for p in 0..B {
            a.values[d][p][p] = 30.0;
        }
    }
    let x: Vec<f64> = (0..B * n).map(|_| r()).collect();
    let mut y = vec![0.0; B * n];
    a.spmv(&x, &mut y);
    let yd = a.to_dense() * DVector::from_vec(x.clone());
    assert!((DVector::from_vec(y) - yd).norm() < 1e-12);
    let mut free = vec![1.0; B * n];
    for d in [0, 1, 2, 17, 40] {
        free[d] = 0.0;
    }
    let pre = BlockJacobi::new(&a, &free);
    let ops = CpuOps {
        matrix: &a,
        preconditioner: &pre,
        free: &free,
    };
    let b: Vec<f64> = (0..B * n).map(|i| r() * free[i]).collect();
    let mut sol = vec![0.0; B * n];
    let res = pcg(&ops, &b, &mut sol, 1e-10, 500);
    assert_eq!(res.status, PcgStatus::Converged);
    assert!(res.iterations < 100, "{}", res.iterations);
    let mut ax = vec![0.0; B * n];
    a.spmv(&sol, &mut ax);
    let err: f64 = (0..B * n)
        .filter(|&i| free[i] != 0.0)
        .map(|i| (ax[i] - b[i]).powi(2))
        .sum::<f64>()
        .sqrt();
    let bn: f64 = b.iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!(err <= 1e-9 * bn, "{err}");
    for d in [0, 1, 2, 17, 40] {
        assert_eq!(sol[d], 0.0);
    }
    // The absolute ∞-norm stop: PCG ends as soon as no free residual entry
    // exceeds the bound, before the (unreachable here) relative tolerance.
    let residual_inf = |x: &[f64]| {
        let mut ax = vec![0.0; B * n];
        a.spmv(x, &mut ax);
        (0..B * n)
            .filter(|&i| free[i] != 0.0)
            .fold(0.0f64, |m, i| m.max((ax[i] - b[i]).abs()))
    };
    let b_inf = inf_norm(&b);
    let bound = 1e-6 * b_inf;
    let tol = PcgTolerance {
        relative: 1e-300,
        absolute_inf: bound,
    };
    let mut sol_abs = vec![0.0; B * n];
    let res_abs = pcg(&ops, &b, &mut sol_abs, tol, 500);
    assert_eq!(res_abs.status, PcgStatus::Converged);
    assert!(
        residual_inf(&sol_abs) <= 1.001 * bound,
        "{:e}",
        residual_inf(&sol_abs)
    );
    // One iteration fewer does not meet the bound: it stopped at once.
    let mut sol_short = vec![0.0; B * n];
    let short = pcg(&ops, &b, &mut sol_short, 1e-300, res_abs.iterations - 1);
    assert_eq!(short.status, PcgStatus::MaxIterations);
    assert!(residual_inf(&sol_short) > bound);
    assert!(
        res_abs.iterations < res.iterations,
        "{res_abs:?} vs {res:?}"
    );
}

fn material(damping: Damping) -> Material {
    let mut m = Material::example_cotton();
    m.shear_stiffness = 0.5;
    m.contact_stiffness = 50.0;
    m.friction.anchor_stiffness = 10.0;
    m.damping = damping;
    m
}

/// [`material`] with light stretch damping and no friction anchors, for
/// yarns that lie or hang without sliding.
fn yarn_material() -> Material {
    let mut m = material(Damping::StrainRate(ModeCoefficients {
        stretch: 3e-7,
        ..Default::default()
    }));
    m.friction.anchor_stiffness = 0.0;
    m
}

/// The assembler of a 4 mm x 3 mm woven patch (4 x 5 nodes) of
/// [`material`] with `damping`, under gravity.
fn small_patch_assembler(damping: Damping) -> Assembler {
    let mut b = FabricBuilder::new(vec![material(damping)]).unwrap();
    b.add_woven_patch(&WovenPatchSpec::new(
        "cotton",
        [0.004, 0.003],
        [4, 5],
        [0.0; 3],
    ))
    .unwrap();
    Assembler::new(b.build().unwrap(), Vector3::new(0.0, -9.81, 0.0))
}

/// Assembles the matrix `A` at `v` and checks it against central
/// differences of the residual, `A d ≈ (R(v + εd) - R(v - εd)) / 2ε`
/// (ε = 1e-7 m/s), in 5 random directions `d` drawn from `r`: relative
/// error below 1e-6. Returns `A` (dense).
#[allow(clippy::too_many_arguments)]
fn assert_matrix_is_derivative(
    asm: &mut Assembler,
    q_n: &[f64],
    v_n: &[f64],
    v: &[f64],
    h: f64,
    anchors: &[f64],
    r: &mut impl FnMut() -> f64,
) -> nalgebra::DMatrix<f64> {
    let n = v.len();
    let mut res = vec![0.0; n];
    asm.assemble(q_n, v_n, v, h, anchors, &mut res, true);
    let a = asm.matrix.to_dense();
    for trial in 0..5 {
        let dir: Vec<f64> = (0..n).map(|_| r()).collect();
        let eps = 1e-7;
        let mut plus = vec![0.0; n];
        let mut minus = vec![0.0; n];
        let vp: Vec<f64> = v.iter().zip(&dir).map(|(v, d)| v + eps * d).collect();
        let vm: Vec<f64> = v.iter().zip(&dir).map(|(v, d)| v - eps * d).collect();
        asm.assemble(q_n, v_n, &vp, h, anchors, &mut plus, false);
        asm.assemble(q_n, v_n, &vm, h, anchors, &mut minus, false);
        let fd = (DVector::from_vec(plus) - DVector::from_vec(minus)) / (2.0 * eps);
        let ad = &a * DVector::from_vec(dir);
        let err = (&fd - &ad).norm() / ad.norm();
        assert!(err < 1e-6, "trial {trial}: relative error {err}");
    }
    a
}

/// With only stretch damping, `A = dR/dv` also away from `v = 0`: on the
/// deformed 5 x 4 patch moving at up to 0.5 m/s, its segments stretching
/// and turning, with exact Hessians, central differences in random
/// directions agree to 1e-6 relative. The stretch damping's strain rate is
/// the step's strain increment (`stretch::dissipation_over_step`), whose
/// Jacobian is symmetric; with the rate `∇ε(q) q̇` the matrix lacked
/// `∇εᵀ(∇²ε q̇)ᵀ` and missed here by 0.14 relative (k_d = 1 N·s).
#[test]
fn stretch_damping_matrix_is_exact_in_motion() {
    let mut asm = small_patch_assembler(Damping::StrainRate(ModeCoefficients {
        stretch: 1.0,
        bending: 0.0,
        shear: 0.0,
        contact: 0.0,
    }));
    asm.exact_hessians = true;
    let n = asm.dofs();
    let mut r = rng(23);
    let mut q_n = vec![0.0; n];
    let s = &asm.fabric.initial;
    for i in 0..asm.fabric.node_count() {
        let x = s.x[i] + Vector3::new(r(), r(), r()) * 1e-4;
        q_n[B * i..B * i + 5].copy_from_slice(&[x.x, x.y, x.z, s.u[i], s.v[i]]);
    }
    let anchors = asm.fabric.initial.anchors.clone();
    let v_n = vec![0.0; n];
    let h = 1e-3;
    let v: Vec<f64> = (0..n)
        .map(|i| if i % B < 3 { 0.5 * r() } else { 0.0 })
        .collect();
    assert_matrix_is_derivative(&mut asm, &q_n, &v_n, &v, h, &anchors, &mut r);
    // A state's own dissipation (h = 0, as `Simulation::energies` asks
    // for it) takes the rate `∇ε q̇`, the increment's limit: finite and
    // positive for this stretching motion.
    let mut res = vec![0.0; n];
    let (e, _) = asm.assemble(&q_n, &v, &v, 0.0, &anchors, &mut res, false);
    assert!(
        e.dissipation_power.is_finite() && e.dissipation_power > 0.0,
        "dissipation power at h = 0: {} W",
        e.dissipation_power
    );
}

/// The assembled matrix is the derivative of the assembled residual,
/// `A = dR/dv`, checked by central differences in random directions on a
/// deformed 5 x 4 patch with every element type active (stretch, bending,
/// shear, contact, anchors, gravity, inertia, strain-rate damping) at
/// `v = 0`, where the clamped damping position Jacobian and the inertia
/// terms vanish and A is exact. Relative error < 1e-6. Also with Rayleigh
/// damping. This uses the exact elastic Hessians; the default (projected)
/// matrix is then checked to be SPD, never softer than the exact one
/// (`A⁺ - A ⪰ 0`), and close to it.
#[test]
fn matrix_is_derivative_of_residual() {
    for damping in [
        Damping::StrainRate(ModeCoefficients {
            stretch: 1e-3,
            bending: 1e-7,
            shear: 1e-3,
            contact: 1e-3,
        }),
        Damping::Rayleigh {
            alpha: 0.5,
            beta: 1e-3,
        },
    ] {
        let mut asm = small_patch_assembler(damping);
        asm.exact_hessians = true;
        let n = asm.dofs();
        let mut r = rng(11);
        let mut q_n = vec![0.0; n];
        let s = &asm.fabric.initial;
        for i in 0..asm.fabric.node_count() {
            let x = s.x[i] + Vector3::new(r(), r(), r()) * 1e-4;
            q_n[B * i..B * i + 5].copy_from_slice(&[
                x.x,
                x.y,
                x.z,
                s.u[i] + 1e-5 * r(),
                s.v[i] + 1e-5 * r(),
            ]);
        }
        // Compress one warp segment into the contact range: move the u of
        // node 1 close to node 0 (d = 0.5 mm, spacing 1.33 mm).
        q_n[B + 3] = q_n[3] + 0.4e-3;
        let v_n: Vec<f64> = (0..n).map(|_| 0.01 * r()).collect();
        let anchors: Vec<f64> = asm
            .fabric
            .initial
            .anchors
            .iter()
            .map(|a| a + 1e-5)
            .collect();
        let h = 1e-3;
        let v0 = vec![0.0; n];
        let a = assert_matrix_is_derivative(&mut asm, &q_n, &v_n, &v0, h, &anchors, &mut r);
        assert!(
            (&a - a.transpose()).norm() <= 1e-10 * a.norm(),
            "matrix not symmetric"
        );
        let mut res = vec![0.0; n];
        // The default matrix: PSD element Hessians.
        asm.exact_hessians = false;
        asm.assemble(&q_n, &v_n, &v0, h, &anchors, &mut res, true);
        let ap = asm.matrix.to_dense();
        let min_exact = a.clone().symmetric_eigenvalues().min();
        let min_proj = ap.clone().symmetric_eigenvalues().min();
        let min_diff = (&ap - &a).symmetric_eigenvalues().min();
        let rel = (&ap - &a).norm() / a.norm();
        eprintln!(
            "min eig: exact {min_exact:e}, projected {min_proj:e}; min eig of difference {min_diff:e}; |A⁺-A|/|A| = {rel:e}"
        );
        assert!(
            min_exact < 0.0,
            "the exact matrix of this state is indefinite"
        );
        assert!(min_proj > 0.0, "projected matrix not positive definite");
        assert!(
            min_diff >= -1e-10 * a.norm(),
            "projected matrix softer than the exact one"
        );
        assert!(rel < 0.5, "projection changed the matrix by {rel}");
    }
}

/// The residual's round-off does not grow with the fabric's distance from
/// the origin. A patch 64 m away (in x and z, across gravity; arc-length
/// coordinates and friction anchors shifted by 64 m too) is the same state
/// as the one at the origin: its coordinates are put on a 2⁻⁴⁶ m grid, so the
/// shift is exact in floating point. The elements see only differences of
/// coordinates, so the residual must agree to round-off of the element size.
/// When the elements took `q = q_n + h v` absolute, each coordinate was
/// rounded to a unit in the last place of 64 m (1.4e-14 m), a relative
/// error of 1e-11 in a 1 mm edge: 1e-5 of the forces of strains near 1e-6,
/// the floor below which Newton could not reduce the residual.
#[test]
fn residual_does_not_depend_on_distance_from_origin() {
    let mut asm = small_patch_assembler(Damping::StrainRate(ModeCoefficients {
        stretch: 1e-3,
        bending: 1e-7,
        shear: 1e-3,
        contact: 1e-3,
    }));
    let n = asm.dofs();
    let grid = |x: f64| (x * 2f64.powi(46)).round() / 2f64.powi(46);
    let mut r = rng(5);
    let s = &asm.fabric.initial;
    // Strains near 1e-6: position noise of 1 nm on 1 mm segments.
    let mut q_n = vec![0.0; n];
    for i in 0..asm.fabric.node_count() {
        let x = s.x[i] + Vector3::new(r(), r(), r()) * 1e-9;
        q_n[B * i..B * i + 5].copy_from_slice(&[x.x, x.y, x.z, s.u[i], s.v[i]].map(grid));
    }
    let v_n: Vec<f64> = (0..n).map(|_| 1e-6 * r()).collect();
    let v: Vec<f64> = (0..n).map(|_| 1e-6 * r()).collect();
    let anchors: Vec<f64> = s.anchors.iter().map(|&a| grid(a + 1e-9)).collect();
    let h = 1e-3;
    let mut near = vec![0.0; n];
    asm.assemble(&q_n, &v_n, &v, h, &anchors, &mut near, true);
    let shift = 64.0;
    let far_q: Vec<f64> = q_n
        .iter()
        .enumerate()
        .map(|(d, &x)| if d % B == 1 { x } else { x + shift })
        .collect();
    let far_anchors: Vec<f64> = anchors.iter().map(|a| a + shift).collect();
    for (a, b) in far_q.iter().zip(&q_n) {
        let back = if a == b { *a } else { a - shift };
        assert_eq!(back, *b, "the shift is not exact");
    }
    let mut far = vec![0.0; n];
    asm.assemble(&far_q, &v_n, &v, h, &far_anchors, &mut far, true);
    let scale = inf_norm(&near);
    let diff = inf_norm(
        &near
            .iter()
            .zip(&far)
            .map(|(a, b)| a - b)
            .collect::<Vec<_>>(),
    );
    eprintln!("|R|inf = {scale:e}, |R_far - R_near|inf = {diff:e}");
    assert!(scale > 0.0);
    assert!(
        diff <= 1e-12 * scale,
        "residual changed by {diff:e} (|R| {scale:e}) when the patch moved {shift} m"
    );
}

/// Free fall of an unstrained patch with very strong strain-rate damping
/// (k_d = 1 N·s, 10⁷ times the yarn mass per second): backward Euler
/// integrates a constant acceleration exactly, v_N = g t and
/// x_N = x_0 + g h² N(N+1)/2, and the damping does nothing to the rigid
/// motion (dissipated energy 0 to round-off). Asserted to 1e-6 relative:
/// Newton stops at the round-off floor of the residual, ~1e-11 N for 500 N
/// stretch and 1 N·s damping forces on 5e-8 kg nodes, which bounds the
/// velocity error by N h R/m ≈ 2e-5 relative (observed ~7e-8). Any damping of
/// the rigid motion would be orders of magnitude larger.
#[test]
fn free_fall_is_exact() {
    let mut b = FabricBuilder::new(vec![material(Damping::StrainRate(ModeCoefficients {
        stretch: 1.0,
        bending: 1e-3,
        shear: 1.0,
        contact: 1.0,
    }))])
    .unwrap();
    b.add_woven_patch(&WovenPatchSpec::new(
        "cotton",
        [0.01, 0.01],
        [6, 6],
        [0.0; 3],
    ))
    .unwrap();
    let f = b.build().unwrap();
    let x0 = f.initial.x.clone();
    let settings = Settings {
        dt: 1e-3,
        adaptive: false,
        ..Default::default()
    };
    let mut sim = Simulation::new(f, Vector3::new(0.0, -9.81, 0.0), settings, vec![]);
    let steps = sim.advance_to(0.05, |_, _| {}).unwrap();
    assert_eq!(steps.len(), 50);
    // Free fall is linear: Newton reaches the round-off floor within a few
    // iterations, and at the floor the line search does not backtrack, so a
    // step evaluates one residual per Newton iteration (the twelve halvings
    // tried at the floor used to add up to 12 more) and builds a matrix at
    // the start and before every Newton iteration after the first.
    for st in &steps {
        assert!(st.newton_iterations <= 3, "{st:?}");
        assert_eq!(st.residual_evaluations, st.newton_iterations, "{st:?}");
        assert_eq!(st.assemblies, st.newton_iterations.max(1), "{st:?}");
        assert!(
            st.assembly_seconds > 0.0 && st.solve_seconds > 0.0,
            "{st:?}"
        );
    }
    let s = sim.state();
    let nsteps = 50.0;
    let h = 1e-3;
    for i in 0..x0.len() {
        assert!((s.x_dot[i].y + 9.81 * 0.05).abs() < 1e-6 * 0.49);
        let expected = x0[i].y - 9.81 * h * h * nsteps * (nsteps + 1.0) / 2.0;
        assert!(
            (s.x[i].y - expected).abs() < 1e-6 * 0.0125,
            "{} vs {}",
            s.x[i].y,
            expected
        );
        assert!((s.x[i].x - x0[i].x).abs() < 1e-8 * 0.0125);
    }
    assert!(sim.dissipated.abs() < 1e-15, "{}", sim.dissipated);
}

/// A spring-mass system from a one-segment yarn of zero density with a point
/// mass: k = k_s / L. Its period from zero crossings of the velocity matches
/// 2π√(m/k) within 1 % at h = T/400 (backward Euler's period error is
/// O((ωh)²) ≈ 1e-4 here), and the amplitude decays by backward Euler's
/// numerical damping factor (1 + ω²h²)^(-1/2) per step, to 1e-3 relative.
#[test]
fn spring_mass_period_and_numerical_damping() {
    let mut m = Material::example_cotton();
    m.density = 0.0;
    m.damping = Damping::None;
    m.stretch_stiffness = 200.0; // L = 2 m -> k = 100 N/m
    let mut b = FabricBuilder::new(vec![m]).unwrap();
    let mut y = YarnSpec::new("cotton", vec![[0.0; 3], [2.0, 0.0, 0.0]]);
    y.pinned = vec![0];
    y.point_masses = vec![(1, 1.0)];
    y.initial_velocities = vec![(1, [0.1, 0.0, 0.0])];
    b.add_yarn(&y).unwrap();
    let f = b.build().unwrap();
    let omega = 10.0f64; // sqrt(k/m)
    let period = 2.0 * std::f64::consts::PI / omega;
    let h = period / 400.0;
    let settings = Settings {
        dt: h,
        adaptive: false,
        newton_tolerance: 1e-10,
        ..Default::default()
    };
    let mut sim = Simulation::new(f, Vector3::zeros(), settings, vec![]);
    let mut crossings = vec![];
    let mut prev = 0.1;
    let mut peaks = vec![];
    let mut t_prev = 0.0;
    sim.advance_to(3.0 * period, |s, _| {
        let vx = s.v[B];
        if prev > 0.0 && vx <= 0.0 {
            // Linear interpolation of the crossing time.
            crossings.push(t_prev + h * prev / (prev - vx));
        }
        if prev < 0.0 && vx >= 0.0 {
            peaks.push(s.q[B] - 2.0);
        }
        prev = vx;
        t_prev = s.t;
    })
    .unwrap();
    assert!(crossings.len() >= 3);
    let measured = (crossings[2] - crossings[0]) / 2.0;
    assert!(
        (measured / period - 1.0).abs() < 0.01,
        "period {measured} vs {period}"
    );
    // Velocity after 3 periods vs BE's amplification factor.
    let decay = (1.0 + (omega * h).powi(2)).powf(-0.5 * 1200.0);
    let vx = sim.v[B];
    assert!(
        ((vx / 0.1) - decay).abs() < 1e-2 * decay,
        "v {vx} vs {}",
        0.1 * decay
    );
}

/// An 11 x 11 patch (1 cm, R = 0.25 mm, soft bending so it drapes) dropped
/// from 2 mm above a sphere of radius 3 mm, centred over the pole. Penalty
/// contact (k = 10 N/m, margin 0.05 mm) with Coulomb friction μ = 0.5.
/// Checked at every accepted step: no node is ever inside the sphere by more
/// than the yarn radius (the penalty keeps it out; a node resting under its
/// share of the weight compresses the penalty layer by ~1e-7 m). At the end
/// (80 ms) the pole node rests on the sphere at the contact offset
/// `r + δ` (within 20 %) and the cloth is draping: the corners, still falling,
/// are more than 0.5 mm below the pole (measured 0.9 mm).
#[test]
fn patch_drapes_over_a_sphere() {
    use weft_solver::collide::{Collider, Sphere};
    let mut m = material(Damping::StrainRate(ModeCoefficients {
        stretch: 3e-7,
        bending: 0.0,
        shear: 1e-6,
        contact: 0.0,
    }));
    m.stretch_stiffness = 5.0;
    m.bending_stiffness = 1e-10;
    m.shear_stiffness = 0.05;
    m.friction.anchor_stiffness = 0.0;
    let mut b = FabricBuilder::new(vec![m]).unwrap();
    let top = 3e-3;
    b.add_woven_patch(&WovenPatchSpec::new(
        "cotton",
        [0.01, 0.01],
        [11, 11],
        [0.0, top + 2e-3, 0.0],
    ))
    .unwrap();
    let f = b.build().unwrap();
    let settings = Settings {
        dt: 1e-4,
        dt_max: 1e-3,
        ..Default::default()
    };
    let mut sim = Simulation::new(f, Vector3::new(0.0, -9.81, 0.0), settings, vec![]);
    let sphere = Sphere::new(Vector3::zeros(), top).unwrap();
    let margin = 0.05e-3;
    sim.assembler
        .contact
        .colliders
        .push((Collider::new(sphere, 10.0, 0.5).unwrap(), margin));
    let r = 0.25e-3;
    let mut deepest = f64::INFINITY;
    sim.advance_to(0.08, |s, _| {
        for c in s.q.chunks(5) {
            deepest = deepest.min(Vector3::new(c[0], c[1], c[2]).norm() - top);
        }
    })
    .unwrap();
    assert!(deepest > -r, "a node went {deepest} m into the sphere");
    let s = sim.state();
    let pole = 5 * 11 + 5;
    assert!(
        s.x[pole].x.abs() < 1e-6 && s.x[pole].z.abs() < 1e-6,
        "pole node moved sideways: {}",
        s.x[pole]
    );
    let gap = s.x[pole].y - top;
    assert!(
        (gap - (r + margin)).abs() < 0.2 * (r + margin),
        "pole node {gap} m above the sphere"
    );
    let corner_y = [0, 10, 110, 120]
        .iter()
        .map(|&i| s.x[i].y)
        .fold(f64::NEG_INFINITY, f64::max);
    assert!(
        corner_y < s.x[pole].y - 0.5e-3,
        "corners at {corner_y}, pole at {}",
        s.x[pole].y
    );
}

/// The contrast of [SBO17 §6] for free fall: with Rayleigh damping α = 5/s
/// the same patch does not fall like a rigid body; its mass-proportional term
/// `-α M q̇` drags it, so after 50 ms its speed is below the rigid-body g t
/// by about α t / 2 ≈ 12 % (asserted: more than 5 % slower), while strain-rate
/// damping leaves it exact (`free_fall_is_exact`).
#[test]
fn rayleigh_damping_slows_free_fall() {
    let mut b = FabricBuilder::new(vec![material(Damping::Rayleigh {
        alpha: 5.0,
        beta: 0.0,
    })])
    .unwrap();
    b.add_woven_patch(&WovenPatchSpec::new(
        "cotton",
        [0.01, 0.01],
        [6, 6],
        [0.0; 3],
    ))
    .unwrap();
    let settings = Settings {
        dt: 1e-3,
        adaptive: false,
        ..Default::default()
    };
    let mut sim = Simulation::new(
        b.build().unwrap(),
        Vector3::new(0.0, -9.81, 0.0),
        settings,
        vec![],
    );
    sim.advance_to(0.05, |_, _| {}).unwrap();
    let vy = sim.state().x_dot[0].y;
    assert!(
        vy > -0.95 * 9.81 * 0.05,
        "fell at {vy} m/s, rigid body {}",
        -9.81 * 0.05
    );
    assert!(sim.dissipated > 0.0);
}

/// A moving collider: a plane rising 5 mm in 50 ms (keyframed translation)
/// lifts a short yarn lying on it. At the end the yarn rests on the plane's
/// final position at the contact offset `r + δ` (within 20 %), so the
/// collider was evaluated at the current time, not at t = 0.
#[test]
fn keyframed_plane_lifts_a_yarn() {
    use weft_solver::collide::{Collider, Plane, RigidMotion};
    let m = yarn_material();
    let mut b = FabricBuilder::new(vec![m]).unwrap();
    let r = 0.25e-3;
    let margin = 0.05e-3;
    b.add_yarn(&YarnSpec::new(
        "cotton",
        vec![
            [0.0, r + margin, 0.0],
            [0.002, r + margin, 0.0],
            [0.004, r + margin, 0.0],
        ],
    ))
    .unwrap();
    let settings = Settings {
        dt: 1e-4,
        dt_max: 1e-3,
        ..Default::default()
    };
    let mut sim = Simulation::new(
        b.build().unwrap(),
        Vector3::new(0.0, -9.81, 0.0),
        settings,
        vec![],
    );
    let plane = Plane::new(Vector3::zeros(), Vector3::y()).unwrap();
    let motion =
        RigidMotion::from_translations(&[(0.0, [0.0, 0.0, 0.0]), (0.05, [0.0, 0.005, 0.0])])
            .unwrap();
    sim.assembler.contact.colliders.push((
        Collider::new(plane, 100.0, 0.0)
            .unwrap()
            .with_motion(motion),
        margin,
    ));
    sim.advance_to(0.08, |_, _| {}).unwrap();
    for x in sim.state().x {
        let gap = x.y - 0.005;
        assert!(
            (gap - (r + margin)).abs() < 0.2 * (r + margin),
            "node at {} above the plane",
            gap
        );
    }
}

/// A hanging 12 x 12 patch (1 mm spacing, two corners pinned) with the
/// [SBO17 §6.3]-like stiffness of `material`, after 5 ms of motion.
fn hanging_patch(linear_solver: LinearSolver, adaptive: bool, dt: f64) -> Simulation {
    let settings = Settings {
        dt,
        dt_max: 1e-3,
        adaptive,
        linear_solver,
        ..Default::default()
    };
    hanging_patch_of(
        material(Damping::StrainRate(ModeCoefficients::SBO17)),
        12,
        settings,
    )
}

/// An `n` x `n` patch of `m` (1 mm spacing) hanging from two corners
/// under gravity.
fn hanging_patch_of(m: Material, n: usize, settings: Settings) -> Simulation {
    let mut b = FabricBuilder::new(vec![m]).unwrap();
    let side = 1e-3 * (n - 1) as f64;
    let mut spec = WovenPatchSpec::new("cotton", [side, side], [n, n], [0.0; 3]);
    spec.pinned = vec![NodeSelector::Corner(0), NodeSelector::Corner(1)];
    b.add_woven_patch(&spec).unwrap();
    Simulation::new(
        b.build().unwrap(),
        Vector3::new(0.0, -9.81, 0.0),
        settings,
        vec![],
    )
}

/// The sparse Cholesky preconditioner on the system matrix of a deformed,
/// corner-pinned woven patch: PCG with the fresh factor converges to 1e-10 in
/// at most 2 iterations, block-Jacobi PCG needs over 100 on the same
/// system, the two solutions agree to 1e-7 relative, and the fixed DOFs stay
/// zero. The factor needs the projected (SPD) matrix.
#[test]
fn cholesky_preconditioner_solves_patch_system() {
    let mut sim = hanging_patch(LinearSolver::BlockJacobi, true, 1e-3);
    sim.advance_to(5e-3, |_, _| {}).unwrap();
    let b = sim.newton_system(1e-3);
    let free = sim.free_mask().to_vec();
    let n = b.len();
    let a = &sim.assembler.matrix;
    let mut chol = SparseCholesky::new(a, &free).unwrap();
    chol.factor(a).unwrap();
    let ops = CpuOps {
        matrix: a,
        preconditioner: &chol,
        free: &free,
    };
    let mut x_ch = vec![0.0; n];
    let res_ch = pcg(&ops, &b, &mut x_ch, 1e-10, 100);
    let jac = BlockJacobi::new(a, &free);
    let ops = CpuOps {
        matrix: a,
        preconditioner: &jac,
        free: &free,
    };
    let mut x_bj = vec![0.0; n];
    let res_bj = pcg(&ops, &b, &mut x_bj, 1e-10, 100_000);
    eprintln!("Cholesky: {res_ch:?}; block-Jacobi: {res_bj:?}");
    assert_eq!(res_ch.status, PcgStatus::Converged);
    assert!(res_ch.iterations <= 2, "{res_ch:?}");
    assert_eq!(res_bj.status, PcgStatus::Converged);
    assert!(res_bj.iterations > 100, "{res_bj:?}");
    let diff: f64 = x_ch.iter().zip(&x_bj).map(|(a, b)| (a - b).powi(2)).sum();
    let norm: f64 = x_bj.iter().map(|a| a * a).sum();
    assert!(
        diff.sqrt() <= 1e-7 * norm.sqrt(),
        "{}",
        (diff / norm).sqrt()
    );
    for d in 0..n {
        if free[d] == 0.0 {
            assert_eq!(x_ch[d], 0.0);
        }
    }
}

/// The same 40 fixed steps (10 ms) of a hanging patch with the Cholesky and
/// the block-Jacobi preconditioner: both follow the same trajectory (positions agree to 1e-6
/// of the displacement; each Newton solve stops at the Newton tolerance, so
/// they differ at that level), and Cholesky needs under a tenth of the CG
/// iterations.
#[test]
fn cholesky_and_block_jacobi_trajectories_agree() {
    let mut runs = Vec::new();
    for ls in [LinearSolver::Cholesky, LinearSolver::BlockJacobi] {
        let mut sim = hanging_patch(ls, false, 2.5e-4);
        let q0 = sim.q.clone();
        let steps = sim.advance_to(0.01, |_, _| {}).unwrap();
        let cg: usize = steps.iter().map(|s| s.cg_iterations).sum();
        runs.push((q0, sim.q.clone(), cg));
    }
    let (q0, qc, cg_c) = &runs[0];
    let (_, qj, cg_j) = &runs[1];
    let disp: f64 = qc
        .iter()
        .zip(q0)
        .map(|(a, b)| (a - b).powi(2))
        .sum::<f64>()
        .sqrt();
    let diff: f64 = qc
        .iter()
        .zip(qj)
        .map(|(a, b)| (a - b).powi(2))
        .sum::<f64>()
        .sqrt();
    eprintln!("displacement {disp:e}, difference {diff:e}, CG {cg_c} vs {cg_j}");
    assert!(disp > 1e-4, "the patch moved ({disp})");
    assert!(diff <= 1e-6 * disp, "trajectories differ by {diff:e}");
    assert!(10 * cg_c < *cg_j, "CG iterations {cg_c} vs {cg_j}");
}

/// Two 4 x 4 patches 5 mm apart, the right edge of the first tied to the
/// left edge of the second (the ties of [`weft_solver::Tie`], targets given
/// as end points t = 0 and t = 1 of edge segments), without gravity. The
/// tie terms of the matrix are the derivative of the residual (central
/// differences, 1e-6 relative, with a random start velocity so the tie
/// damping acts); after 0.3 s of sewing every tie
/// gap is below 0.1 mm, and the tie forces are internal: the total momentum
/// stays zero.
#[test]
fn seam_ties_sew_two_patches() {
    let mut b = FabricBuilder::new(vec![material(Damping::StrainRate(ModeCoefficients {
        stretch: 1e-3,
        bending: 1e-7,
        shear: 1e-3,
        contact: 0.0,
    }))])
    .unwrap();
    let size = 0.003;
    b.add_woven_patch(&WovenPatchSpec::new(
        "cotton",
        [size, size],
        [4, 4],
        [0.0; 3],
    ))
    .unwrap();
    b.add_woven_patch(&WovenPatchSpec::new(
        "cotton",
        [size, size],
        [4, 4],
        [size + 0.005, 0.0, 0.0],
    ))
    .unwrap();
    let f = b.build().unwrap();
    // Row-major crossings: node k*4 + l; warp along x, so l = 3 is the right
    // edge of patch A and l = 0 the left edge of patch B (offset 16).
    let mut ties = Vec::new();
    for k in 0..4usize {
        let (a_end, b_end) = (4 * k + 3, 16 + 4 * k);
        // A's end k meets B's end k, written as the point t = 0 of B's
        // edge segment (k, k+1), or t = 1 of (k-1, k) for the last end.
        let (other, t) = if k < 3 {
            ([b_end, b_end + 4], 0.0)
        } else {
            ([b_end - 4, b_end], 1.0)
        };
        ties.push(Tie {
            node: a_end,
            other,
            t,
        });
        ties.push(Tie {
            node: b_end,
            other: [a_end, a_end],
            t: 0.0,
        });
    }
    let settings = Settings {
        dt: 1e-3,
        dt_max: 2e-3,
        ..Default::default()
    };
    let mut sim = Simulation::with_ties(f, Vector3::zeros(), settings, vec![], ties.clone());
    sim.assembler.tie_stiffness = 0.5;
    sim.assembler.tie_damping = 2e-3;
    // Matrix = dR/dv with the ties (exact Hessians, v = 0 except a random
    // start velocity).
    let n = sim.q.len();
    let mut r = rng(5);
    let q_n = sim.q.clone();
    let v_n: Vec<f64> = (0..n).map(|_| 0.01 * r()).collect();
    let anchors = sim.anchors.clone();
    sim.assembler.exact_hessians = true;
    let mut res = vec![0.0; n];
    let v0 = vec![0.0; n];
    sim.assembler
        .assemble(&q_n, &v_n, &v0, 1e-3, &anchors, &mut res, true);
    let a = sim.assembler.matrix.to_dense();
    let dir: Vec<f64> = (0..n).map(|_| r()).collect();
    let eps = 1e-7;
    let (mut plus, mut minus) = (vec![0.0; n], vec![0.0; n]);
    let vp: Vec<f64> = dir.iter().map(|d| eps * d).collect();
    let vm: Vec<f64> = dir.iter().map(|d| -eps * d).collect();
    sim.assembler
        .assemble(&q_n, &v_n, &vp, 1e-3, &anchors, &mut plus, false);
    sim.assembler
        .assemble(&q_n, &v_n, &vm, 1e-3, &anchors, &mut minus, false);
    let fd = (DVector::from_vec(plus) - DVector::from_vec(minus)) / (2.0 * eps);
    let ad = &a * DVector::from_vec(dir);
    let err = (&fd - &ad).norm() / ad.norm();
    assert!(err < 1e-6, "matrix vs FD with ties: {err:e}");

    let gap = |sim: &Simulation| {
        ties.iter()
            .map(|t| {
                let x = |i: usize| Vector3::new(sim.q[B * i], sim.q[B * i + 1], sim.q[B * i + 2]);
                (x(t.node) - (x(t.other[0]) * (1.0 - t.t) + x(t.other[1]) * t.t)).norm()
            })
            .fold(0.0f64, f64::max)
    };
    let before = gap(&sim);
    sim.advance_to(0.3, |_, _| {}).unwrap();
    let after = gap(&sim);
    let s = sim.state();
    let mass = sim.assembler.fabric.lumped_masses(&s);
    let momentum: Vector3<f64> = (0..mass.len()).map(|i| s.x_dot[i] * mass[i]).sum();
    let speed: f64 = (0..mass.len())
        .map(|i| s.x_dot[i].norm())
        .fold(0.0, f64::max);
    eprintln!("gap {before:e} -> {after:e}; momentum {momentum:?}; max speed {speed:e}");
    assert!(before > 4e-3);
    assert!(after < 1e-4, "seam gap after sewing {after:e} m");
    let total_mass: f64 = mass.iter().sum();
    assert!(momentum.norm() < 1e-6 * total_mass, "{momentum:?}");
}

#[test]
fn attachment_springs_hold_nodes_to_points() {
    let mut b = FabricBuilder::new(vec![material(Damping::StrainRate(ModeCoefficients {
        stretch: 1e-3,
        bending: 1e-7,
        shear: 1e-3,
        contact: 0.0,
    }))])
    .unwrap();
    b.add_woven_patch(&WovenPatchSpec::new(
        "cotton",
        [0.003, 0.003],
        [4, 4],
        [0.0; 3],
    ))
    .unwrap();
    let f = b.build().unwrap();
    let settings = Settings {
        dt: 1e-3,
        dt_max: 5e-3,
        ..Default::default()
    };
    let mut sim = Simulation::new(f, Vector3::zeros(), settings, vec![]);
    // Two corners held 2 mm above their start.
    let lift = Vector3::new(0.0, 0.0, 2e-3);
    let x =
        |sim: &Simulation, i: usize| Vector3::new(sim.q[B * i], sim.q[B * i + 1], sim.q[B * i + 2]);
    let targets: Vec<weft_solver::Attachment> = [(0usize, 2.0), (15, 5.0)]
        .iter()
        .map(|&(i, k)| weft_solver::Attachment {
            node: i,
            point: x(&sim, i) + lift,
            stiffness: k,
        })
        .collect();
    sim.assembler.attachments = targets.clone();
    // Residual = h ∇V (at v = v_n = 0, h = 1 ms) against finite differences
    // of the energy, and the matrix against finite differences of the
    // residual.
    let n = sim.q.len();
    let h = 1e-3;
    let q_n = sim.q.clone();
    let zero = vec![0.0; n];
    let anchors = sim.anchors.clone();
    let mut res = vec![0.0; n];
    sim.assembler.exact_hessians = true;
    sim.assembler
        .assemble(&q_n, &zero, &zero, h, &anchors, &mut res, true);
    let a = sim.assembler.matrix.to_dense();
    let mut r = rng(11);
    let dir: Vec<f64> = (0..n).map(|_| r()).collect();
    let eps = 1e-6;
    let mut buf = vec![0.0; n];
    let mut energy = |s: f64| {
        let v: Vec<f64> = dir.iter().map(|d| s * d).collect();
        let (e, _) = sim
            .assembler
            .assemble(&q_n, &zero, &v, h, &anchors, &mut buf, false);
        (e.elastic, buf.clone())
    };
    let ((_, rp), (_, rm)) = (energy(eps), energy(-eps));
    // d/ds V(q_n + h s dir) = h ∇V·dir; the residual's elastic part is h ∇V
    // (no inertia at v = v_n). A smaller step for the energy: the yarns'
    // own energies are cubic at 1e-6.
    let ((ep, _), (em, _)) = (energy(1e-8), energy(-1e-8));
    let fd = (ep - em) / 2e-8;
    let an: f64 = res.iter().zip(&dir).map(|(r, d)| r * d).sum();
    assert!(
        (fd - an).abs() < 1e-6 * an.abs().max(1e-12),
        "energy FD {fd:e} vs residual {an:e}"
    );
    let fd_r = (DVector::from_vec(rp) - DVector::from_vec(rm)) / (2.0 * eps);
    let ad = &a * DVector::from_vec(dir.clone());
    assert!(
        (&fd_r - &ad).norm() < 1e-6 * ad.norm(),
        "matrix vs FD with attachments"
    );
    // Dynamics: with a drag the patch settles with both corners at their
    // points (the patch is free otherwise, so they meet them exactly).
    sim.assembler.drag = 20.0;
    sim.advance_to(1.0, |_, _| {}).unwrap();
    for a in &targets {
        let (i, p) = (a.node, a.point);
        let off = (x(&sim, i) - p).norm();
        assert!(
            off < 2e-5,
            "node {i} is {off:e} m from its attachment point"
        );
    }
}

/// Handles (DESIGN §8 `handle`): the handle nodes of a yarn follow
/// `x0 + d(t)` with `d` piecewise linear through the keyframes, at every
/// accepted step (to round-off), and drag the rest of the yarn along: a
/// 4 mm yarn whose two ends are lifted 10 mm in 50 ms and then moved 10 mm
/// sideways in the next 50 ms ends with its middle node near the handles'
/// final height (within 1 mm; the yarn sags under gravity between them).
#[test]
fn handle_nodes_follow_their_keyframes() {
    use weft_solver::Handle;
    let m = yarn_material();
    let mut b = FabricBuilder::new(vec![m]).unwrap();
    let x0: Vec<[f64; 3]> = (0..5).map(|i| [0.001 * i as f64, 0.0, 0.0]).collect();
    b.add_yarn(&YarnSpec::new("cotton", x0.clone())).unwrap();
    let keyframes = vec![
        (0.0, [0.0, 0.0, 0.0]),
        (0.05, [0.0, 0.01, 0.0]),
        (0.1, [0.01, 0.01, 0.0]),
    ];
    let handle = Handle {
        nodes: vec![0, 4],
        keyframes: keyframes.clone(),
    };
    let d = |t: f64| -> Vector3<f64> {
        let s = |a: f64, b: f64, t0: f64| a + (b - a) * ((t - t0) / 0.05).clamp(0.0, 1.0);
        if t <= 0.05 {
            Vector3::new(0.0, s(0.0, 0.01, 0.0), 0.0)
        } else {
            Vector3::new(s(0.0, 0.01, 0.05), 0.01, 0.0)
        }
    };
    let settings = Settings {
        dt: 1e-3,
        dt_max: 2e-3,
        ..Default::default()
    };
    let mut sim = Simulation::new(
        b.build().unwrap(),
        Vector3::new(0.0, -9.81, 0.0),
        settings,
        vec![handle],
    );
    let mut checked = 0;
    let mut worst = 0.0f64;
    sim.advance_to(0.1, |s, _| {
        for &i in &[0usize, 4] {
            let x = Vector3::new(s.q[5 * i], s.q[5 * i + 1], s.q[5 * i + 2]);
            let want = Vector3::from(x0[i]) + d(s.t);
            worst = worst.max((x - want).norm());
            checked += 1;
        }
    })
    .unwrap();
    assert!(checked >= 2 * 50, "{checked} checks");
    assert!(worst < 1e-12, "handle node off its path by {worst} m");
    let mid = sim.state().x[2];
    assert!(
        (mid.x - 0.012).abs() < 1e-3 && (mid.y - 0.01).abs() < 1e-3,
        "middle node at {mid}"
    );
}

/// Sliding friction, stick/slip (DESIGN §2) on a hanging 8 x 8 patch whose
/// crossings slide under its weight, over 10 ms:
/// - `μ` = 0: every anchor follows its arc-length coordinate after every
///   accepted step (free sliding: `ū = u`);
/// - `μ` = 1e6: no anchor ever moves (stick);
/// - `μ` = 0.03: after every accepted step the anchors lie within the
///   Coulomb limit, so updating them once more with the same state moves
///   none by more than 1e-12 of the spacing (a fixed point of the update),
///   and over the run some anchors slipped while others stuck (measured 46
///   of 96 slipped; the patch's small weight leaves most crossings at the
///   normal-force floor, and at μ = 0.1 none slips in 10 ms).
#[test]
fn friction_anchors_stick_and_slip() {
    let run = |mu: f64| {
        let mut m = material(Damping::StrainRate(ModeCoefficients::SBO17));
        m.friction.mu = mu;
        let settings = Settings {
            dt: 1e-3,
            dt_max: 1e-3,
            ..Default::default()
        };
        let mut sim = hanging_patch_of(m, 8, settings);
        let initial = sim.anchors.clone();
        assert!(!initial.is_empty());
        let (mut steps, mut worst_fixed_point, mut worst_follow) = (0, 0.0f64, 0.0f64);
        sim.advance_to(0.01, |s, _| {
            steps += 1;
            let mut again = s.anchors.clone();
            s.assembler.update_anchors(&s.q, &mut again);
            for (a, b) in again.iter().zip(&s.anchors) {
                worst_fixed_point = worst_fixed_point.max((a - b).abs());
            }
            for (k, an) in s.assembler.fabric.elements.anchors.iter().enumerate() {
                let u = s.q[5 * an.node + an.family.slot()];
                worst_follow = worst_follow.max((u - s.anchors[k]).abs());
            }
        })
        .unwrap();
        assert!(steps >= 10);
        let moved = sim
            .anchors
            .iter()
            .zip(&initial)
            .filter(|(a, b)| a != b)
            .count();
        (moved, initial.len(), worst_fixed_point, worst_follow)
    };
    let (_, _, _, follow) = run(0.0);
    assert!(
        follow < 1e-15,
        "μ = 0: anchors lag their coordinates by {follow} m"
    );
    let (moved, _, _, _) = run(1e6);
    assert_eq!(moved, 0, "μ = 1e6: anchors moved");
    let (moved, total, fixed, follow) = run(0.03);
    assert!(
        fixed < 1e-12 * 1e-3,
        "μ = 0.03: anchors off the Coulomb limit by {fixed} m"
    );
    assert!(
        moved > 0 && moved < total,
        "μ = 0.03: {moved} of {total} anchors slipped"
    );
    assert!(
        follow > 0.0,
        "μ = 0.03: every anchor followed its coordinate"
    );
}

/// A linear solve that stops at PCG's iteration cap far from a solution
/// rejects the step with its own reason (`pcg`, DESIGN §5 "CG fails to
/// converge"), naming the Newton iteration, the PCG iterations and the
/// residual reached: a deformed hanging patch whose block-Jacobi PCG may
/// run a single iteration.
#[test]
fn pcg_failure_is_its_own_rejection() {
    use weft_solver::Rejection;
    let mut sim = hanging_patch(LinearSolver::BlockJacobi, true, 1e-3);
    sim.advance_to(5e-3, |_, _| {}).unwrap();
    sim.settings.cg_max_iterations = 1;
    let before = sim.q.clone();
    let r = sim.try_step(1e-3).expect_err("one PCG iteration passed");
    let Rejection::LinearSolve {
        iteration,
        iterations,
        relative_residual,
        ..
    } = &r
    else {
        panic!("expected a PCG rejection, got {r:?}")
    };
    assert_eq!((*iteration, *iterations), (1, 1), "{r}");
    assert!(*relative_residual > 0.5, "{r}");
    assert_eq!(r.key(), "pcg");
    assert!(
        r.to_string()
            .starts_with("PCG did not converge at Newton iteration 1")
    );
    assert_eq!(sim.q, before, "a rejected step leaves the state");
}

/// Rayleigh damping never adds energy: a straight yarn compressed to 80 %
/// of its rest length, its middle node moving sideways. The exact stiffness
/// of a compressed segment is negative sideways (`k_s ε / L`, ε = -0.2), so
/// `-β K q̇` with it would push the node along (dissipation power -25 W
/// for these numbers, measured with the exact K); with the PSD projection
/// `K⁺` of every
/// element the power is never negative. Without bending stiffness the
/// sideways motion meets no positive stiffness at all and the power is 0.
#[test]
fn rayleigh_damping_of_a_compressed_yarn_adds_no_energy() {
    for k_b in [0.0, 1e-9] {
        let mut m = material(Damping::Rayleigh {
            alpha: 0.0,
            beta: 0.01,
        });
        m.bending_stiffness = k_b;
        m.friction.anchor_stiffness = 0.0;
        let mut b = FabricBuilder::new(vec![m]).unwrap();
        let mut yarn = YarnSpec::new(
            "cotton",
            vec![[0.0; 3], [0.8e-3, 0.0, 0.0], [1.6e-3, 0.0, 0.0]],
        );
        yarn.rest_lengths = Some(vec![1e-3, 1e-3]);
        yarn.pinned = vec![0, 2];
        yarn.initial_velocities = vec![(1, [0.0, 0.1, 0.0])];
        b.add_yarn(&yarn).unwrap();
        let mut sim = Simulation::new(
            b.build().unwrap(),
            Vector3::zeros(),
            Settings::default(),
            vec![],
        );
        let p = sim.energies().dissipation_power;
        assert!(p >= 0.0, "k_b = {k_b}: dissipation power {p} W");
        if k_b == 0.0 {
            assert!(
                p.abs() < 1e-12,
                "no positive stiffness sideways, power {p} W"
            );
        } else {
            assert!(p > 0.0, "bending resists the sideways motion, power {p} W");
        }
    }
}
