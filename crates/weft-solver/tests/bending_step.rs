//! The bending strain over a backward-Euler step: the assembler takes each
//! element's strain from its angle at the step's start and holds it over the
//! step ([`weft_potentials::bending::step_threshold`]), so the residual that
//! Newton solves is continuous in the iterate where the angle crosses the
//! 5° switch. Chosen per iterate, it jumped there by the switch's 1 % of the
//! bending force plus the change between the two strain rates, and a yarn
//! whose equilibrium lay on the switch stalled Newton at every step size.

use nalgebra::{SVector, Vector3};
use weft_core::{FabricBuilder, FabricPreset, YarnSpec};
use weft_potentials::bending::{self, DEFAULT_THRESHOLD};
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

/// The velocity that turns the last node about the centre at `omega` (rad/s):
/// over the step it turns by `H ω` (to first order).
fn turning(a: &Assembler, q_n: &[f64], omega: f64) -> Vec<f64> {
    let mut v = vec![0.0; q_n.len()];
    let i = 5 * (a.fabric.node_count() - 1);
    let (x, y) = (q_n[i], q_n[i + 1]);
    v[i] = -omega * y;
    v[i + 1] = omega * x;
    v
}

/// The element coordinates `[x_0, s_0, x_1, s_1, x_2, s_2]` of the single
/// bending element at `q` (5 per node).
fn element_q(a: &Assembler, q: &[f64]) -> SVector<f64, 12> {
    let b = &a.fabric.elements.bending[0];
    let slot = b.family.slot();
    let mut out = SVector::zeros();
    for (k, &node) in [b.center, b.next, b.prev].iter().enumerate() {
        for r in 0..3 {
            out[4 * k + r] = q[5 * node + r];
        }
        out[4 * k + 3] = q[5 * node + slot];
    }
    out
}

/// The iterate's turning angle (rad) at velocity `v`.
fn iterate_angle(a: &Assembler, q_n: &[f64], v: &[f64]) -> f64 {
    let q: Vec<f64> = q_n.iter().zip(v).map(|(q, v)| q + H * v).collect();
    bending::angle(&element_q(a, &q))
}

/// The angular speed (rad/s) at which the step's iterate reaches
/// `target` (rad), by bisection between 0 and `omega_max`.
fn omega_to(a: &Assembler, q_n: &[f64], target: f64, omega_max: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, omega_max);
    let rising = iterate_angle(a, q_n, &turning(a, q_n, omega_max)) > target;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        let above = iterate_angle(a, q_n, &turning(a, q_n, mid)) > target;
        if above == rising {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    0.5 * (lo + hi)
}

/// `R(v)` of the step from rest at `q_n`.
fn residual(a: &mut Assembler, q_n: &[f64], v: &[f64]) -> Vec<f64> {
    let zeros = vec![0.0; q_n.len()];
    let mut r = vec![0.0; q_n.len()];
    a.assemble(q_n, &zeros, v, H, &[], &mut r, false);
    r
}

/// Steps that start 0.3° below and above the switch, their iterate crossing
/// it: the residual jumps there by less than 1e-4 of the per-iterate switch's
/// jump (the elastic force alone, `H |∇V_vector - ∇V_scalar|` at the
/// crossing, `tan θ sec²θ / θ - 1` of `H |∇V|`: 1 % at 5°). Past the band `[θ_t/2, 2θ_t]` the
/// other strain takes over and the residual jumps again, by that amount.
#[test]
fn the_step_residual_is_continuous_where_an_iterate_crosses_the_switch() {
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
        let omega = omega_to(&a, &q_n, probe, 2.0 * (probe - theta_n) / H);
        // Three equally spaced iterates, two on one side of the probed
        // angle: the residual's second difference removes its smooth change
        // (the stretch and inertia terms, O(1e-14) of the probe spacing) and
        // leaves any jump.
        let v_at = |k: f64| turning(&a, &q_n, omega * (1.0 + k * 1e-7));
        let (v_lo2, v_lo, v_hi) = (v_at(-3.0), v_at(-1.0), v_at(1.0));
        let (th_lo, th_hi) = (
            iterate_angle(&a, &q_n, &v_lo),
            iterate_angle(&a, &q_n, &v_hi),
        );
        assert!(
            (th_lo - probe) * (th_hi - probe) < 0.0,
            "the probes straddle {probe}: {th_lo}, {th_hi}"
        );
        assert!((iterate_angle(&a, &q_n, &v_lo2) - probe) * (th_lo - probe) > 0.0);
        let (r_lo2, r_lo, r_hi) = (
            residual(&mut a, &q_n, &v_lo2),
            residual(&mut a, &q_n, &v_lo),
            residual(&mut a, &q_n, &v_hi),
        );
        let jump = (0..r_lo.len())
            .map(|i| (r_hi[i] - 2.0 * r_lo[i] + r_lo2[i]).abs())
            .fold(0.0f64, f64::max);
        // The per-iterate switch's elastic jump at the crossing (a threshold
        // above the angle selects the vector strain, 0 the scalar one).
        let q: Vec<f64> = q_n.iter().zip(&v_lo).map(|(q, v)| q + H * v).collect();
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
