//! The small-angle strains over a backward-Euler step: the assembler takes
//! each bending and shear element's strain (small-angle vector or scalar)
//! from its angle at the step's start and holds it over the step
//! ([`weft_potentials::bending::step_threshold`],
//! [`weft_potentials::shear::Shear::over_step`]), so the residual that
//! Newton solves is continuous in the iterate where the angle crosses the
//! 5° switch. Chosen per iterate, it jumped there by the switch's 1 % of
//! the element force plus the change between the two strain rates, and a
//! yarn whose equilibrium lay on the switch stalled Newton at every step
//! size.

use nalgebra::{SVector, Vector3};
use weft_core::{FabricBuilder, FabricPreset, WovenPatchSpec, YarnSpec};
use weft_potentials::bending::{self, DEFAULT_THRESHOLD};
use weft_potentials::shear::{self, SMALL_ANGLE_THRESHOLD, Shear};
use weft_solver::Assembler;

/// Segment length (m).
const L: f64 = 1e-3;
/// Step size (s).
const H: f64 = 1e-3;

/// A three-node yarn of cotton (the preset at 1 mm spacing, with its
/// strain-rate bending damping) bent at its centre by `theta` (rad) in the
/// x-y plane: nodes `[-L, 0, 0]`, the origin, `L [cos θ, sin θ, 0]`.
fn bent_yarn(theta: f64) -> Assembler {
    let m = FabricPreset::Cotton.material(L, false);
    let mut b = FabricBuilder::new(vec![m]).unwrap();
    let y = YarnSpec::new(
        "cotton",
        vec![
            [-L, 0.0, 0.0],
            [0.0; 3],
            [L * theta.cos(), L * theta.sin(), 0.0],
        ],
    );
    b.add_yarn(&y).unwrap();
    Assembler::new(b.build().unwrap(), Vector3::zeros())
}

/// `q_n` (5 per node) of the assembler's fabric.
fn start(a: &Assembler) -> Vec<f64> {
    let f = &a.fabric;
    (0..f.node_count())
        .flat_map(|i| f.initial.node_q(i))
        .collect()
}

/// The velocity that turns the last node (of `q_n`, 5 per node) about the
/// origin, the yarn's centre, at `omega` (rad/s):
/// over the step it turns by `H ω` (to first order).
fn turning(q_n: &[f64], omega: f64) -> Vec<f64> {
    let mut v = vec![0.0; q_n.len()];
    let i = q_n.len() - 5;
    let (x, y) = (q_n[i], q_n[i + 1]);
    v[i] = -omega * y;
    v[i + 1] = omega * x;
    v
}

/// The element coordinates `[x_0, s_0, x_1, s_1, x_2, s_2]` of the single
/// bending element at `q` (5 per node).
fn element_q(a: &Assembler, q: &[f64]) -> SVector<f64, 12> {
    let dofs = a.fabric.bending_dofs(&a.fabric.elements.bending[0]);
    SVector::from_fn(|i, _| q[dofs[i]])
}

/// The coordinates `[x_0, x_a, x_b]` of shear element `e` at `q`.
fn shear_q(a: &Assembler, e: usize, q: &[f64]) -> SVector<f64, 9> {
    let dofs = a.fabric.shear_dofs(&a.fabric.elements.shear[e]);
    SVector::from_fn(|i, _| q[dofs[i]])
}

/// `q_n + H v`.
fn iterate(q_n: &[f64], v: &[f64]) -> Vec<f64> {
    q_n.iter().zip(v).map(|(q, v)| q + H * v).collect()
}

/// The iterate's turning angle (rad) at velocity `v`.
fn iterate_angle(a: &Assembler, q_n: &[f64], v: &[f64]) -> f64 {
    bending::angle(&element_q(a, &iterate(q_n, v)))
}

/// The residual's jump where the iterate's `angle` crosses `probe` (rad)
/// along the velocities `v_of(k)`, `k` in `[0, k_max]` (the angle at `k =
/// 0` on the other side of `probe` than at `k_max`): the second difference
/// of `R` over three equally spaced iterates around the crossing, two on
/// one side, which removes `R`'s smooth change (the stretch and inertia
/// terms, O(1e-14) of the spacing) and leaves any jump. Also returns the
/// iterate just before the crossing.
fn jump_where_the_angle_crosses(
    a: &mut Assembler,
    q_n: &[f64],
    v_of: &dyn Fn(f64) -> Vec<f64>,
    angle: &dyn Fn(&Assembler, &[f64]) -> f64,
    probe: f64,
    k_max: f64,
) -> (f64, Vec<f64>) {
    let above = |a: &Assembler, k: f64| angle(a, &iterate(q_n, &v_of(k))) > probe;
    let rising = above(a, k_max);
    assert_ne!(
        above(a, 0.0),
        rising,
        "the angle crosses {probe} within the sweep"
    );
    let (mut lo, mut hi) = (0.0, k_max);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if above(a, mid) == rising {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let k = 0.5 * (lo + hi);
    let ks = [k * (1.0 - 3e-7), k * (1.0 - 1e-7), k * (1.0 + 1e-7)];
    let sides: Vec<bool> = ks.iter().map(|&k| above(a, k) == rising).collect();
    assert_eq!(sides, [false, false, true], "the probes straddle {probe}");
    let r: Vec<Vec<f64>> = ks.iter().map(|&k| residual(a, q_n, &v_of(k))).collect();
    let jump = (0..r[0].len())
        .map(|i| (r[2][i] - 2.0 * r[1][i] + r[0][i]).abs())
        .fold(0.0f64, f64::max);
    (jump, iterate(q_n, &v_of(ks[1])))
}

/// `R(v)` of the step from rest at `q_n`.
fn residual(a: &mut Assembler, q_n: &[f64], v: &[f64]) -> Vec<f64> {
    let zeros = vec![0.0; q_n.len()];
    let mut r = vec![0.0; q_n.len()];
    a.assemble(q_n, &zeros, v, H, &[], &mut r, false);
    r
}

/// Bending: steps that start 0.3° below and above the switch, their
/// iterate crossing it: the residual jumps there by less than 1e-4 of the per-iterate switch's
/// jump (the elastic force alone, `H |∇V_vector - ∇V_scalar|` at the
/// crossing, `tan θ sec²θ / θ - 1` of `H |∇V|`: 1 % at 5°). Past the band `[θ_t/2, 2θ_t]` the
/// other strain takes over and the residual jumps again, by that amount.
#[test]
fn the_step_residual_is_continuous_where_a_bending_angle_crosses_the_switch() {
    let t = DEFAULT_THRESHOLD;
    let deg = std::f64::consts::PI / 180.0;
    // (start angle, angle where the residual is probed, whether the step
    // holds its start strain there)
    for (theta_n, probe, held) in [
        (t - 0.3 * deg, t, true),
        (t + 0.3 * deg, t, true),
        (t - 0.3 * deg, 2.0 * t, false),
        (t + 0.3 * deg, 0.5 * t, false),
    ] {
        let mut a = bent_yarn(theta_n);
        let q_n = start(&a);
        assert!((iterate_angle(&a, &q_n, &vec![0.0; q_n.len()]) - theta_n).abs() < 1e-12);
        let v_of = |k: f64| turning(&q_n, k);
        let (jump, q) = jump_where_the_angle_crosses(
            &mut a,
            &q_n,
            &v_of,
            &|a, q| bending::angle(&element_q(a, q)),
            probe,
            2.0 * (probe - theta_n) / H,
        );
        // The per-iterate switch's elastic jump at the crossing (a threshold
        // above the angle selects the vector strain, 0 the scalar one).
        let qe = element_q(&a, &q);
        let k_b = a.fabric.materials[0].bending_stiffness;
        let g_vector = bending::energy(k_b, &qe, probe + deg).gradient;
        let g_scalar = bending::energy(k_b, &qe, 0.0).gradient;
        let switch_jump = H * (g_vector - g_scalar).amax();
        // The switch's relative force jump, tan θ sec²θ / θ - 1 (1 % at 5°).
        let relative = probe.tan() / (probe * probe.cos().powi(2)) - 1.0;
        assert!(
            switch_jump > 0.9 * relative * H * g_scalar.amax(),
            "the switch jumps by {switch_jump:e}, the force {:e}",
            H * g_scalar.amax()
        );
        if held {
            assert!(
                jump < 1e-4 * switch_jump,
                "start {theta_n}, crossing {probe}: residual jumps by {jump:e} \
                 (switch {switch_jump:e})"
            );
        } else {
            assert!(
                jump > 0.5 * switch_jump,
                "start {theta_n}, leaving the band at {probe}: residual jumps by {jump:e} \
                 (switch {switch_jump:e})"
            );
        }
    }
}

/// A 5 x 5 cotton patch at 2 mm spacing (the preset, with its strain-rate
/// shear damping), horizontal with warp along x and weft along z.
fn patch() -> Assembler {
    let m = FabricPreset::Cotton.material(2e-3, false);
    let mut b = FabricBuilder::new(vec![m]).unwrap();
    let mut spec = WovenPatchSpec::new("cotton", [0.008, 0.008], [5, 5], [0.0; 3]);
    spec.sliding = false;
    b.add_woven_patch(&spec).unwrap();
    Assembler::new(b.build().unwrap(), Vector3::zeros())
}

/// `q` (5 per node) sheared in its plane by `x += gamma z`.
fn sheared(q: &[f64], gamma: f64) -> Vec<f64> {
    let mut q = q.to_vec();
    for x in q.chunks_mut(5) {
        x[0] += gamma * x[2];
    }
    q
}

/// The shear angle `|φ - π/2|` (rad) of shear element `e` at `q`.
fn shear_angle(a: &Assembler, e: usize, q: &[f64]) -> f64 {
    shear::shear_angle(&shear_q(a, e, q)).abs()
}

/// Crossing shear: the patch sheared to 0.3° below and above the switch,
/// the step's iterate shearing it on through 5° at a middle crossing. The
/// residual jumps there by less than 1e-4 of the per-iterate switch's
/// elastic jump (`tan ψ sec²ψ / ψ - 1`, 1.02 % of the crossing's force).
#[test]
fn the_step_residual_is_continuous_where_a_shear_angle_crosses_the_switch() {
    let t = SMALL_ANGLE_THRESHOLD;
    let deg = std::f64::consts::PI / 180.0;
    let mut a = patch();
    let f = &a.fabric;
    let rest: Vec<f64> = (0..f.node_count())
        .flat_map(|i| f.initial.node_q(i))
        .collect();
    // The crossing farthest from the patch's edges.
    let e = (0..f.elements.shear.len())
        .min_by(|&i, &j| {
            let d = |k: usize| {
                let n = f.elements.shear[k].crossing;
                rest[5 * n].abs() + rest[5 * n + 2].abs()
            };
            d(i).total_cmp(&d(j))
        })
        .unwrap();
    for psi_n in [t - 0.3 * deg, t + 0.3 * deg] {
        let q_n = sheared(&rest, psi_n.tan());
        assert!((shear_angle(&a, e, &q_n) - psi_n).abs() < 0.05 * deg);
        // v shears the patch further by k (rad/s of tan ψ).
        let v_of = |k: f64| -> Vec<f64> {
            let mut v = vec![0.0; q_n.len()];
            for (vx, x) in v.chunks_mut(5).zip(q_n.chunks(5)) {
                vx[0] = k * x[2];
            }
            v
        };
        let direction = if psi_n < t { 1.0 } else { -1.0 };
        let (jump, q) = jump_where_the_angle_crosses(
            &mut a,
            &q_n,
            &v_of,
            &|a, q| shear_angle(a, e, q),
            t,
            direction * 2.0 * (0.6 * deg) / H,
        );
        let qe = shear_q(&a, e, &q);
        let x = &a.fabric.elements.shear[e];
        let k_x = a.fabric.materials[0].shear_stiffness;
        let el = |threshold: f64| Shear::new(k_x, 0.0, x.rest_spacing, threshold, None).unwrap();
        let g_vector = el(t + deg).elastic(&qe).gradient;
        let g_scalar = el(1e-9).elastic(&qe).gradient;
        let switch_jump = H * (g_vector - g_scalar).amax();
        let relative = t.tan() / (t * t.cos().powi(2)) - 1.0;
        assert!(
            switch_jump > 0.9 * relative * H * g_scalar.amax(),
            "the switch jumps by {switch_jump:e}, the force {:e}",
            H * g_scalar.amax()
        );
        assert!(
            jump < 1e-4 * switch_jump,
            "start {psi_n}: residual jumps by {jump:e} (switch {switch_jump:e})"
        );
    }
}
