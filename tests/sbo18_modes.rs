//! [SBO18 §5, Fig. 3 right]: on a yarn-level square patch, the stretch
//! damping β_s decides the 'hanging' motion and the bending damping β_b the
//! 'flapping' motion (strain-rate dissipation parameterised by the Rayleigh
//! analogy `k_d = β k`, SBO18 eq. 12).
//!
//! The patch is 10 cm of denim (`fabrics`, the preset homogenised at the
//! yarn spacing), shear damped with β_b too:
//! - **hanging** (`data/scenes/sbo18_hanging.json`): vertical, its top
//!   edge pinned, released unstretched under gravity; it bounces in
//!   stretch (the fundamental at `√(E_w/ρ_A) / 4L` ≈ 660 Hz), 10 ms at
//!   20 µs steps;
//! - **flapping** (`data/scenes/sbo18_flapping.json`): horizontal, its
//!   first two weft yarns pinned (a clamp), released under gravity; it
//!   droops and swings in bending, 0.4 s at 1 ms steps.
//!
//! The shipped scenes have the paper's resolution, 101 x 101 yarns (10,201
//! crossings, 1 mm apart; SBO18 counts 20,402 nodes, which we read as one
//! node per yarn at each crossing) and run from the CLI; CI runs the same
//! experiments on 21 x 21 yarns (5 mm) with the same assertions. For each
//! motion, the time integral of the kinetic energy is compared between
//! (β_s, β_b) = (1e-5, 1e-3) s and each β raised alone (β_s to 1e-4,
//! β_b to 3e-2): the motion's own mode changes the integral by a large
//! factor, the other mode barely.
//!
//! Measured on 21 x 21 (2026-11-26): hanging, raising β_s lowers the
//! integral by 75 % and raising β_b changes it by 1.2 %; flapping, raising
//! β_b lowers it by 12.8 % and raising β_s changes it by 0.6 %.

mod common;

use serde_json::{Value, json};

/// Grid of the shipped scenes (the paper's patch).
const FULL: usize = 101;
/// Grid of the CI runs.
const COARSE: usize = 21;
/// Patch side (m).
const SIDE: f64 = 0.1;
/// The low damping times (s): β_s, β_b.
const LOW: (f64, f64) = (1e-5, 1e-3);
/// The raised ones.
const HIGH: (f64, f64) = (1e-4, 3e-2);

#[derive(Clone, Copy, PartialEq)]
enum Motion {
    Hanging,
    Flapping,
}

/// The scene of `motion` on `n x n` yarns with damping times `beta`.
fn scene(motion: Motion, n: usize, beta: (f64, f64)) -> Value {
    let s = SIDE / (n - 1) as f64;
    let (patch, duration, dt, interval) = match motion {
        Motion::Hanging => (
            json!({"type": "woven_patch", "material": "denim", "size": [SIDE, SIDE],
                   "yarn_counts": [n, n], "center": [0.0, 0.0, 0.0], "normal": [0.0, 0.0, 1.0],
                   "warp_direction": [0.0, -1.0, 0.0], "sliding": false,
                   "pinned": ["edge:warp_start"]}),
            0.01,
            2e-5,
            2e-4,
        ),
        Motion::Flapping => {
            // Node (k, l) = warp yarn k, weft yarn l is k·n + l: the clamp
            // is weft yarns 0 and 1.
            let clamp: Vec<usize> = (0..n).flat_map(|k| [k * n, k * n + 1]).collect();
            (
                json!({"type": "woven_patch", "material": "denim", "size": [SIDE, SIDE],
                       "yarn_counts": [n, n], "center": [0.0, 0.0, 0.0],
                       "normal": [0.0, 1.0, 0.0], "warp_direction": [0.0, 0.0, 1.0],
                       "sliding": false, "pinned": clamp}),
                0.4,
                1e-3,
                5e-3,
            )
        }
    };
    json!({
        "duration": duration,
        "time_step": {"dt": dt, "adaptive": true, "dt_max": dt},
        "output": {"interval": interval, "formats": []},
        "gravity": [0.0, -9.81, 0.0],
        "fabrics": {"denim": {"preset": "denim", "spacing": s, "damping": {
            "model": "strain_rate",
            "beta": {"stretch": beta.0, "bending": beta.1, "shear": beta.1}}}},
        "objects": [patch]
    })
}

/// `∫ KE dt` (J·s) over the scene's duration, sampled at its output
/// interval (trapezoids).
fn kinetic_integral(v: &Value) -> f64 {
    let scene = weft_io::Scene::from_str(&v.to_string(), "sbo18_modes.json").unwrap();
    let (duration, interval) = (scene.duration, scene.output.interval);
    let mut sim = scene.build().unwrap().simulation(false).unwrap();
    let frames = (duration / interval).round() as usize;
    let mut prev = sim.energies().kinetic;
    let mut integral = 0.0;
    for f in 1..=frames {
        sim.advance_to(f as f64 * interval, |_, _| {}).unwrap();
        let ke = sim.energies().kinetic;
        integral += 0.5 * (prev + ke) * interval;
        prev = ke;
    }
    integral
}

/// The shipped scenes are the experiments at the paper's resolution.
#[test]
fn shipped_scenes_are_the_papers_patch() {
    for (motion, file) in [
        (Motion::Hanging, "sbo18_hanging.json"),
        (Motion::Flapping, "sbo18_flapping.json"),
    ] {
        let text = serde_json::to_string_pretty(&scene(motion, FULL, LOW)).unwrap() + "\n";
        common::check_scene_file(file, &text);
        assert_eq!(common::built_scene(file).fabric.node_count(), FULL * FULL);
    }
}

#[test]
fn stretch_damping_decides_hanging_and_bending_damping_flapping() {
    for motion in [Motion::Hanging, Motion::Flapping] {
        // The three runs are independent (and serial at this size): one
        // thread each.
        let [base, stretch, bending] = std::thread::scope(|s| {
            [LOW, (HIGH.0, LOW.1), (LOW.0, HIGH.1)]
                .map(|betas| s.spawn(move || kinetic_integral(&scene(motion, COARSE, betas))))
                .map(|h| h.join().unwrap())
        });
        let (by_stretch, by_bending) = ((stretch / base - 1.0).abs(), (bending / base - 1.0).abs());
        eprintln!(
            "{}: ∫KE dt {base:.4e} J s; raising β_s changes it by {:.2} %, β_b by {:.2} %",
            if motion == Motion::Hanging {
                "hanging"
            } else {
                "flapping"
            },
            100.0 * by_stretch,
            100.0 * by_bending
        );
        match motion {
            Motion::Hanging => {
                // The stretch bounce: β_s cuts it by more than half, β_b
                // moves it by less than a tenth of that.
                assert!(stretch < 0.5 * base, "β_s: {stretch} against {base}");
                assert!(
                    by_bending < 0.1 * by_stretch,
                    "β_b moved hanging by {by_bending}"
                );
            }
            Motion::Flapping => {
                // The bending swing: β_b takes more than 5 % off, β_s moves
                // it by less than a tenth of that.
                assert!(bending < 0.95 * base, "β_b: {bending} against {base}");
                assert!(
                    by_stretch < 0.1 * by_bending,
                    "β_s moved flapping by {by_stretch}"
                );
            }
        }
    }
}
