//! Renders `preview.png` of a synthetic flared skirt (a plain-weave patch
//! wrapped around the mannequin's hips) and prints how long each step took:
//! `cargo run --release -p weft-io --example preview_skirt -- SPACING_MM [OUT.png] [WIDTH HEIGHT]`
//! (defaults: 5 mm, `/tmp/preview_skirt.png`, 1200 × 900). No simulation:
//! the yarns are placed on a cone, so this measures the renderer at garment
//! sizes (1 mm gives about 10⁶ nodes) and shows its look.

use nalgebra::Vector3;
use std::time::Instant;
use weft_io::mannequin::{self, Measurements};
use weft_io::{Preview, Scene, YarnCurves};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let spacing = args.first().map_or(Ok(5.0), |s| s.parse::<f64>())? * 1e-3;
    let out = args
        .get(1)
        .cloned()
        .unwrap_or_else(|| "/tmp/preview_skirt.png".into());
    let width = args.get(2).map_or(Ok(1200), |s| s.parse::<u32>())?;
    let height = args.get(3).map_or(Ok(900), |s| s.parse::<u32>())?;

    let m = Measurements::MEAN_ADULT;
    let body = mannequin::generate();
    // Skirt: from the waist down 0.6 m, circumference 1.25 × hips at the
    // waist line flaring to 2.6 m at the hem (the patch's warp runs around).
    let (top, length) = (m.waist_y(), 0.6);
    let (c_top, c_hem) = (1.25 * m.hips, 2.6);
    let nw = ((length / spacing).round() as usize).max(2) + 1; // warp yarns (rows)
    let nf = ((c_hem / spacing).round() as usize).max(2); // weft yarns (columns)
    let t = Instant::now();
    let json = format!(
        r#"{{"duration": 1, "time_step": {{"dt": 1e-3}},
        "output": {{"interval": 0.1, "formats": []}},
        "materials": {{"m": {{"radius": {r}, "density": 130, "stretch_stiffness": 500,
            "bending_stiffness": 1e-5, "shear_stiffness": 0, "contact_stiffness": 0,
            "friction": {{"mu": 0.3, "anchor_stiffness": 0}}, "damping": {{"model": "none"}}}}}},
        "objects": [{{"type": "woven_patch", "material": "m",
            "size": [1, 1], "yarn_counts": [{nw}, {nf}],
            "center": [0.5, 0.5, 0], "normal": [0, 0, 1], "warp_direction": [1, 0, 0],
            "weave": "plain"}}]}}"#,
        r = 0.3 * spacing,
    );
    let fabric = Scene::from_str(&json, "skirt.json")?.build()?.fabric;
    // Patch (u, v) in [0, 1]²: u around from the back (a 2 % gap at the back seam), v up.
    let x: Vec<Vector3<f64>> = fabric
        .initial
        .x
        .iter()
        .map(|p| {
            let (u, v) = (p.x.clamp(0.0, 1.0), p.y.clamp(0.0, 1.0));
            let s = 1.0 - v; // 0 at the waist, 1 at the hem
            let girth = c_top + (c_hem - c_top) * s.powf(1.3);
            let r = girth / (2.0 * std::f64::consts::PI);
            // Folds: a few waves growing toward the hem.
            let a = std::f64::consts::PI * (1.02 + 1.96 * u);
            let r = r * (1.0 + 0.06 * s * (12.0 * a).sin());
            Vector3::new(r * a.sin(), top - length * s, r * a.cos())
        })
        .collect();
    let built = t.elapsed();
    let t = Instant::now();
    let curves = YarnCurves::from_positions(&fabric, &x, 4)?;
    let curved = t.elapsed();
    let t = Instant::now();
    let pv = Preview::fit(&curves, Some(&body), width, height);
    let img = pv.render(&curves, Some(&body));
    let rendered = t.elapsed();
    img.save(&out)?;
    println!(
        "{out}: {} nodes ({nw} x {nf}, {:.1} mm), {} curve points, body {} triangles; \
         fabric {built:.2?}, curves {curved:.2?}, render {width} x {height} {rendered:.2?}",
        fabric.node_count(),
        spacing * 1e3,
        curves.point_count(),
        body.triangles.len(),
    );
    Ok(())
}
