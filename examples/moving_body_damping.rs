//! [SBO17 Fig. 5] on weft's mannequin: the same garment on the same moving
//! body with low, medium and high strain-rate damping. The shipped A-line
//! skirt is sewn and draped at 40 mm on the mannequin, which then walks one
//! cycle in place (`weft_io::mannequin::Motion::Walk`, 1 s) and stands for
//! 0.5 s, with the cotton preset's strain-rate damping times 0.01
//! (underdamped), 1 (the preset) and 100 (overdamped)
//! (`DrapeOptions::damping_scale`). Writes each drape's outputs and
//! `kinetic.svg`, the garment's kinetic energy during and after the walk
//! (log axis), and prints per run the peak kinetic energy while walking,
//! its value when the walk ends and the fraction of that left 0.5 s later.
//!
//! Run: `cargo run --release --example moving_body_damping [-- OUT_DIR]`
//! (default `out/moving_body_damping`; about 7 minutes on 2 cores).

use std::path::PathBuf;
use weft::garment::{Body, DrapeOptions, drape_to_dir};
use weft::io::mannequin::{Motion, write_animation};
use weft_analysis::{EnergyColumns, PlotOptions, plot_kinetic_comparison};

/// Simulated walking time (s) and the standing time after it (s).
const WALK: f64 = 1.0;
const STAND: f64 = 0.5;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "out/moving_body_damping".into()),
    );
    let skirt = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/patterns/a_line_skirt.json");
    let frames = out.join("walk");
    write_animation(&frames, Motion::Walk, 30.0, WALK)?;
    let mut runs: Vec<(String, EnergyColumns)> = Vec::new();
    println!(
        "{:>26} {:>6} {:>8} {:>16} {:>18} {:>16}",
        "damping", "steps", "wall s", "peak KE (walk) J", "KE at walk's end J", "left 0.5 s later"
    );
    for (label, scale) in [
        ("underdamped, 0.01x cotton", 0.01),
        ("cotton preset, 1x", 1.0),
        ("overdamped, 100x cotton", 100.0),
    ] {
        let opts = DrapeOptions {
            spacing_mm: 40.0,
            body: Body::Animation {
                frames: frames.clone(),
                fps: 30.0,
                scale: 1.0,
            },
            damping_scale: scale,
            animation_settle_s: STAND,
            formats: vec!["obj".into()],
            ..DrapeOptions::default()
        };
        let dir = out.join(format!("damping_{scale}"));
        let d = drape_to_dir(&skirt, &opts, &dir, &mut ())?;
        let a = d.summary.animation.expect("an animated body");
        let ke = &a.kinetic_energy_j;
        let peak = ke
            .iter()
            .filter(|p| p[0] <= WALK)
            .map(|p| p[1])
            .fold(0.0, f64::max);
        let at_end = ke.iter().rev().find(|p| p[0] <= WALK).map_or(0.0, |p| p[1]);
        let left = ke.last().map_or(0.0, |p| p[1]) / at_end;
        println!(
            "{label:>26} {:>6} {:>8.1} {peak:>16.3e} {at_end:>18.3e} {left:>16.3}",
            a.steps, a.wall_time_s
        );
        let n = ke.len();
        runs.push((
            label.to_string(),
            EnergyColumns {
                t: ke.iter().map(|p| p[0]).collect(),
                kinetic: ke.iter().map(|p| p[1]).collect(),
                elastic: vec![0.0; n],
                gravity: vec![0.0; n],
                dissipated: vec![0.0; n],
                h: vec![0.0; n],
                newton_iters: vec![0.0; n],
                cg_iters: vec![0.0; n],
            },
        ));
    }
    let refs: Vec<(&str, &EnergyColumns)> = runs.iter().map(|(l, c)| (l.as_str(), c)).collect();
    let plot = out.join("kinetic.svg");
    plot_kinetic_comparison(
        &refs,
        &plot,
        &PlotOptions {
            title: Some(
                "A-line skirt on the walking mannequin (walk ends at 1 s): kinetic energy".into(),
            ),
            log_kinetic: true,
            ..PlotOptions::default()
        },
    )?;
    println!(
        "wrote {} and the drapes in {}",
        plot.display(),
        out.display()
    );
    Ok(())
}
