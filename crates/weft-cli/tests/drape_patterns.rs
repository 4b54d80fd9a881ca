//! Every third-party pattern of `../shared/data/patterns` draped on
//! `../shared/data/bodies/mean_all.obj` from the CLI (issue 4's check, at a
//! coarse 60 mm spacing with 0.4 s of sewing and 0.3 s of draping so it runs
//! in CI): the run succeeds, every coordinate is finite, no node is inside
//! the body by more than the yarn radius (0.3 mm, cotton), it is not
//! reported as slid off, every seam is
//! closed to within one yarn spacing, the garment's bounding box overlaps
//! the body's torso, and its centroid has not slid down the body.
//!
//! `gpg_tee.json` is made for a smaller body: its chest is 0.87 m round
//! against the body's 1.00 m bust, so its side seams cannot close without a
//! 15 % stretch that woven cotton does not have (they stay 62 mm open); it is
//! draped graded by 1.15 (`--grade`).
//!
//! Skipped with a visible message when `../shared/data` is absent.

mod common;

use common::{drape_ok, repo};
use std::path::PathBuf;

const SPACING_M: f64 = 0.06;
const RADIUS_M: f64 = 0.3e-3;

fn shared() -> Option<PathBuf> {
    let d = repo().join("../shared/data");
    if d.join("patterns").is_dir() && d.join("bodies/mean_all.obj").is_file() {
        Some(d)
    } else {
        eprintln!(
            "SKIPPED: {} not found (shared pattern data absent)",
            d.display()
        );
        None
    }
}

/// Bounding box `[min, max]` of the body's torso: the vertices between 52 %
/// and 80 % of the body height within 12 % of the height from the mid-plane
/// x = 0 (which leaves out the arms held away from the body).
fn torso_box(body: &weft_io::TriMesh) -> [[f64; 3]; 2] {
    let h = body.vertices.iter().map(|v| v[1]).fold(f64::MIN, f64::max);
    let mut b = [[f64::MAX; 3], [f64::MIN; 3]];
    for v in &body.vertices {
        if v[1] >= 0.52 * h && v[1] <= 0.80 * h && v[0].abs() <= 0.12 * h {
            for c in 0..3 {
                b[0][c] = b[0][c].min(v[c]);
                b[1][c] = b[1][c].max(v[c]);
            }
        }
    }
    b
}

fn drape(pattern: &str, extra: &[&str]) {
    let Some(data) = shared() else { return };
    let out = tempfile::tempdir().unwrap();
    let body = data.join("bodies/mean_all.obj");
    let pattern_file = data.join("patterns").join(pattern);
    let args = [
        "--spacing",
        "60",
        "--formats",
        "obj",
        "--sew-duration",
        "0.4",
        "--duration",
        "0.3",
    ];
    let summary = drape_ok(
        pattern,
        args.iter().chain(extra).map(|a| a.as_ref()).chain([
            pattern_file.as_os_str(),
            "--body".as_ref(),
            body.as_os_str(),
        ]),
        out.path(),
    );
    let num = |k: &str| summary[k].as_f64().unwrap();
    eprintln!(
        "{pattern}: {} nodes, {} steps, {:.1} s, seam gap {:.1} mm (after sewing {:.1} mm), penetration {:.3} mm, centroid drop {:.1} mm, {} segments through the fabric, slid: {}",
        summary["nodes"],
        summary["steps"],
        num("wall_time_s"),
        num("max_seam_gap_m") * 1e3,
        num("max_seam_gap_after_sewing_m") * 1e3,
        num("max_penetration_m") * 1e3,
        num("centroid_drop_m") * 1e3,
        summary["layer_crossings"],
        summary["slid_part"],
    );
    assert_eq!(summary["finite"], true, "{pattern}: non-finite state");
    assert!(
        num("max_penetration_m") <= RADIUS_M,
        "{pattern}: a node is {} m inside the body",
        num("max_penetration_m")
    );
    // Not reported as slid off (`DrapeOptions::slide_limit`: the garment
    // sinking after sewing, or a panel leaving where it was placed).
    assert_eq!(summary["slid_off"], false, "{pattern}: slid off");
    // No layer passes through another: no yarn segment cuts the garment's
    // own fabric more than two spacings away along it (layer_crossings).
    assert_eq!(
        summary["layer_crossings"], 0,
        "{pattern}: yarns through the fabric, e.g. {}",
        summary["layer_crossing_examples"]
    );
    let widest = summary["stitch_gaps"]
        .as_array()
        .unwrap()
        .iter()
        .max_by(|a, b| {
            a["max_gap_m"]
                .as_f64()
                .unwrap()
                .total_cmp(&b["max_gap_m"].as_f64().unwrap())
        })
        .unwrap()
        .clone();
    assert!(
        num("max_seam_gap_m") <= SPACING_M,
        "{pattern}: seam open by {} m (> one spacing): {widest}",
        num("max_seam_gap_m")
    );
    // It did not slide down the body after sewing: a shirt that slips off
    // the shoulders to the hips sinks by about 0.4 m.
    assert!(
        num("centroid_drop_m").abs() < 0.15,
        "{pattern}: centroid moved {} m down",
        num("centroid_drop_m")
    );
    // The garment stays on the body: its box overlaps the torso's.
    let fs: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("final_state.json")).unwrap(),
    )
    .unwrap();
    let mut g = [[f64::MAX; 3], [f64::MIN; 3]];
    for p in fs["x"].as_array().unwrap() {
        for c in 0..3 {
            let v = p[c].as_f64().unwrap();
            g[0][c] = g[0][c].min(v);
            g[1][c] = g[1][c].max(v);
        }
    }
    let t = torso_box(&weft_io::TriMesh::from_obj(&body).unwrap());
    for c in 0..3 {
        assert!(
            g[0][c] < t[1][c] && g[1][c] > t[0][c],
            "{pattern}: garment box {g:?} misses the torso box {t:?} along axis {c}"
        );
    }
}

#[test]
fn drape_gc_shirt_mean() {
    drape("gc_shirt_mean.json", &[]);
}

#[test]
fn drape_gc_hoody_mean() {
    drape("gc_hoody_mean.json", &[]);
}

/// The pencil dress: its shoulder seams are placed 4-6 cm below the top of
/// the body's shoulders, so their straight paths cross the body; they are
/// sewn over the shoulders through meeting points
/// (`weft_garment::sewing::seam_routes`), and its waist seam is not
/// attached because its bodice holds it (issue 20: before both, its bodice
/// slid off the shoulders while sewing).
#[test]
fn drape_gc_dress_pencil() {
    drape("gc_dress_pencil.json", &[]);
}

#[test]
fn drape_gpg_skirt_2_panels() {
    drape("gpg_skirt_2_panels.json", &[]);
}

#[test]
fn drape_gpg_tee_graded() {
    drape("gpg_tee.json", &["--grade", "1.15"]);
}
