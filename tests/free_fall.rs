//! Good damping [SBO18 eq. 1, SBO17 §6]: strain-rate dissipation does not
//! damp rigid motion, Rayleigh damping with α > 0 does.
//!
//! The experiment is the shipped scene `data/scenes/free_fall_patch.json`:
//! a 1 cm plain-weave patch of 6 x 6 yarns (R = 0.25 mm, ρ = 130 kg/m³,
//! k_s = 500 N) with large strain-rate damping (stretch k_d = 1e-3 N s:
//! damping ratio about 1.6 on its stretch modes, ω ≈ 1.6e6 rad/s) falls
//! from rest for 50 ms. Backward Euler integrates a constant acceleration
//! exactly, so every node's velocity must be `g t` and the kinetic energy
//! `½ M g² t²` (M = 12 yarns x 1 cm x ρπR²), up to Newton's tolerance
//! (1e-6 of the force scale per step); the damping must dissipate nothing.
//! The same scene with Rayleigh damping `α = 5/s` (β = 0) is slowed by its
//! `-αM q̇` term: after 50 ms its speed is about `α t / 2` = 12 % below
//! `g t` (asserted: more than 5 %).
//!
//! Measured: strain rate, velocities within 1.2e-9 of `g t`, kinetic
//! energy 4e-10 below free fall's, dissipated 1e-22 of it; Rayleigh, speed
//! 0.875 of `g t`, kinetic energy 0.77 of free fall's, 21 % of it
//! dissipated.

mod common;

use weft::core::Damping;

const G: f64 = 9.81;

/// Runs the scene with `damping` (the file's own when `None`) for its
/// duration; returns (largest relative deviation of any node velocity from
/// `g t` over all steps, final kinetic energy / ½ M g² T², dissipated
/// energy / final kinetic energy, final mean downward speed / g T).
fn fall(damping: Option<Damping>) -> (f64, f64, f64, f64) {
    let mut built = common::built_scene("free_fall_patch.json");
    assert!(
        matches!(built.fabric.materials[0].damping, Damping::StrainRate(c) if c.stretch >= 1e-3),
        "the shipped scene has large strain-rate damping"
    );
    if let Some(d) = damping {
        built.fabric.materials[0].damping = d;
    }
    let m = &built.fabric.materials[0];
    let mass = 12.0 * 0.01 * m.linear_density();
    let duration = built.duration;
    assert_eq!(built.gravity, [0.0, -G, 0.0]);
    let mut sim = built.simulation(false).unwrap();
    let mut worst = 0.0f64;
    sim.advance_to(duration, |s, _| {
        let v = G * s.t;
        for node in s.v.chunks(5) {
            let dev = (node[0].abs() + (node[1] + v).abs() + node[2].abs()) / v;
            worst = worst.max(dev);
        }
    })
    .unwrap();
    let ke = sim.energies().kinetic;
    let free = 0.5 * mass * (G * duration).powi(2);
    let n = sim.v.len() / 5;
    let mean_speed = -sim.v.chunks(5).map(|c| c[1]).sum::<f64>() / n as f64;
    (
        worst,
        ke / free,
        sim.dissipated / ke,
        mean_speed / (G * duration),
    )
}

#[test]
fn strain_rate_damped_patch_falls_as_a_rigid_body() {
    let (worst, ke, dissipated, speed) = fall(None);
    println!(
        "strain rate: velocity off g t by {worst:.2e}, KE / free fall {ke:.12}, \
         dissipated / KE {dissipated:.2e}, speed / g t {speed:.12}"
    );
    assert!(worst < 1e-6, "a node's velocity is {worst} off g t");
    assert!(
        (ke - 1.0).abs() < 1e-6,
        "kinetic energy {ke} of free fall's"
    );
    assert!(dissipated.abs() < 1e-9, "dissipated {dissipated} of the KE");
    assert!((speed - 1.0).abs() < 1e-6);
}

#[test]
fn rayleigh_damped_patch_falls_slower() {
    let (_, ke, dissipated, speed) = fall(Some(Damping::Rayleigh {
        alpha: 5.0,
        beta: 0.0,
    }));
    println!(
        "Rayleigh α = 5/s: KE / free fall {ke:.4}, dissipated / KE {dissipated:.3}, speed / g t {speed:.4}"
    );
    assert!(speed < 0.95, "speed {speed} of g t");
    assert!(ke < 0.9, "kinetic energy {ke} of free fall's");
    assert!(dissipated > 0.05, "dissipated {dissipated} of the KE");
}
