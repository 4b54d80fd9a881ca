//! The sphere drop [SBO17 §6.3, Fig. 4] under matched damping: strain-rate
//! dissipation and Rayleigh damping with one β [SBO18 eq. 12], against no
//! damping.
//!
//! The scene is the shipped coarse sphere drop
//! (`data/scenes/sbo17_sphere_drop_coarse.json`: the cotton preset, an 11.5 cm
//! patch dropped from 1 cm above a 3 cm sphere) on 16 x 16 yarns (7.7 mm
//! apart) for its first 0.25 s, the fall, the contact and the first swing
//! of the overhang. Only the fabric's damping changes between the runs:
//! - none;
//! - strain-rate with `k_d = β k` in every mode (stretch, bending, shear);
//! - Rayleigh `f = -β K⁺ q̇` (α = 0),
//!
//! with β = 2 ms, the presets' stretch damping time
//! ([`weft_core::preset::BETA_STRETCH`]). Rayleigh damping also resists the
//! rotation of stretched and bent elements (the `∇²ε` term of SBO18
//! eq. 10–11), which the overhang's swing is made of; strain-rate damping
//! does not, so the cloth keeps more of its kinetic energy.
//!
//! Measured (2-core Xeon, 2026-11-26): `∫ KE dt` over 0.25 s is 3.37e-5 J s
//! undamped, 2.84e-5 with strain-rate damping and 2.29e-5 with Rayleigh
//! (strain-rate keeps 24 % more); the three runs have the same kinetic
//! energy to 1e-15 relative until the cloth touches the sphere.

use serde_json::{Value, json};
use weft_core::preset::BETA_STRETCH;

mod common;

/// Yarns per direction in the CI runs.
const YARNS: usize = 16;
/// Simulated time (s).
const DURATION: f64 = 0.25;
/// Sampling interval of the kinetic energy (s).
const INTERVAL: f64 = 0.01;

/// The shipped coarse scene on `YARNS x YARNS` yarns with the fabric's
/// damping replaced by `damping`.
fn scene(damping: Value) -> Value {
    let text =
        std::fs::read_to_string(common::scene_path("sbo17_sphere_drop_coarse.json")).unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    let patch = v["objects"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|o| o["type"] == "woven_patch")
        .unwrap();
    let side = patch["size"][0].as_f64().unwrap();
    patch["yarn_counts"] = json!([YARNS, YARNS]);
    let fabric = &mut v["fabrics"]["cotton"];
    fabric["spacing"] = json!(side / (YARNS - 1) as f64);
    fabric["damping"] = damping;
    v["duration"] = json!(DURATION);
    v["output"] = json!({"interval": INTERVAL, "formats": []});
    v
}

/// The kinetic energy (J) at every `INTERVAL`, from t = 0.
fn kinetic_energies(v: &Value) -> Vec<f64> {
    let scene = weft_io::Scene::from_str(&v.to_string(), "sphere_damping.json").unwrap();
    let mut sim = scene.build().unwrap().simulation(false).unwrap();
    let frames = (DURATION / INTERVAL).round() as usize;
    let mut out = vec![sim.energies().kinetic];
    for f in 1..=frames {
        sim.advance_to(f as f64 * INTERVAL, |_, _| {}).unwrap();
        out.push(sim.energies().kinetic);
    }
    out
}

/// `∫ KE dt` (J s), trapezoids.
fn integral(ke: &[f64]) -> f64 {
    ke.windows(2).map(|w| 0.5 * (w[0] + w[1]) * INTERVAL).sum()
}

#[test]
fn strain_rate_damping_keeps_more_kinetic_energy_than_matched_rayleigh() {
    let beta = BETA_STRETCH;
    // The three runs are independent (and serial at this size): one thread each.
    let [none, strain_rate, rayleigh] = std::thread::scope(|s| {
        [
            json!({"model": "none"}),
            json!({"model": "strain_rate", "beta": {"stretch": beta, "bending": beta, "shear": beta}}),
            json!({"model": "rayleigh", "beta": beta}),
        ]
        .map(|damping| s.spawn(move || kinetic_energies(&scene(damping))))
        .map(|h| h.join().unwrap())
    });
    let [i_none, i_sr, i_r] = [&none, &strain_rate, &rayleigh].map(|k| integral(k));
    eprintln!(
        "∫KE dt over {DURATION} s: none {i_none:.4e}, strain-rate {i_sr:.4e}, Rayleigh {i_r:.4e} J s \
         (strain-rate / Rayleigh {:.3})",
        i_sr / i_r
    );
    // Free fall (the patch starts 1 cm above the sphere: contact after
    // √(2 · 0.01 / g) = 45 ms): no model damps a rigid translation.
    let fall = (0.03 / INTERVAL).round() as usize;
    let mut worst: f64 = 0.0;
    for k in 1..=fall {
        for (name, ke) in [("strain-rate", &strain_rate), ("Rayleigh", &rayleigh)] {
            let rel = (ke[k] - none[k]).abs() / none[k];
            worst = worst.max(rel);
            assert!(
                rel < 1e-6,
                "{name} damps the free fall at t = {} s: {rel:e}",
                k as f64 * INTERVAL
            );
        }
    }
    eprintln!("free fall: kinetic energies agree to {worst:.1e} relative");
    // On the sphere: both damp, Rayleigh more (it also damps the rotation
    // of the overhang's elements).
    assert!(
        i_sr < 0.95 * i_none,
        "strain-rate {i_sr} against none {i_none}"
    );
    assert!(
        i_sr > 1.1 * i_r,
        "strain-rate {i_sr} against Rayleigh {i_r}"
    );
}
