//! An animated body from a folder of OBJ frames (scene key `frames`, issue
//! 23 item 6) moves the cloth on it exactly as the same motion given as
//! rigid keyframes does: the turntable scene's soft 1 cm patch
//! (`data/scenes/turntable.json`) on a 20 x 2 x 20 cm slab instead of its
//! plane, the slab sliding 8 mm along x and rising 2 mm in 0.1 s.
//!
//! - As frames (20 per s) and as translation keyframes at the same times
//!   the trajectories agree to within Newton's tolerance (the poses are linear between
//!   frames, their velocity the frames' difference quotient, as the rigid
//!   motion's is between keys): the frames give the solver the same
//!   surface and the same surface velocity.
//! - Friction carries the patch with the slab and the penalty lifts it: its
//!   centroid follows the slab's 8 mm to within its slip, rises by the
//!   slab's 2 mm, and no node ends inside the slab.
//! - On still frames the patch does not move sideways.
//!
//! Measured (2026-11-26): the two runs agree to 6e-11 m (the Newton
//! tolerance: the frames' planes are computed in world coordinates, the
//! keyframes' in the slab's frame); the patch moved 7.5 mm along x and rose
//! 2.0 mm.

use serde_json::{Value, json};
use std::path::Path;

/// The slab's 8 corners moved by `d` (m) as OBJ text.
fn slab_obj(d: [f64; 3]) -> String {
    let (lo, hi) = ([-0.05, -0.02, -0.1], [0.15, 0.0, 0.1]);
    let mut s = String::from("# slab\n");
    for i in 0..8 {
        let c = |k: usize, bit: usize| if i & bit == 0 { lo[k] } else { hi[k] } + d[k];
        s += &format!("v {} {} {}\n", c(0, 1), c(1, 2), c(2, 4));
    }
    // Quads counter-clockwise seen from outside (OBJ indices from 1).
    for f in [
        [1, 5, 7, 3],
        [2, 4, 8, 6],
        [1, 2, 6, 5],
        [3, 7, 8, 4],
        [1, 3, 4, 2],
        [5, 6, 8, 7],
    ] {
        s += &format!("f {} {} {} {}\n", f[0], f[1], f[2], f[3]);
    }
    s
}

/// The slab's displacement at the keys 0, 0.05 and 0.1 s (m).
const KEYS: [[f64; 3]; 3] = [[0.0, 0.0, 0.0], [0.004, 0.002, 0.0], [0.008, 0.002, 0.0]];

/// The turntable scene with the slab instead of the plane: as frames in
/// `dir` (`keys` = displacement per frame at 20 frames per s) or as the
/// still slab with translation keyframes.
fn scene(dir: &Path, keys: &[[f64; 3]], as_frames: bool) -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/scenes/turntable.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut slab = json!({"type": "mesh", "stiffness": 10.0, "friction": 0.5, "margin": 5e-5});
    if as_frames {
        let frames = dir.join("frames");
        std::fs::create_dir_all(&frames).unwrap();
        for (k, d) in keys.iter().enumerate() {
            std::fs::write(frames.join(format!("slab_{k:04}.obj")), slab_obj(*d)).unwrap();
        }
        slab["frames"] = json!(frames);
        slab["fps"] = json!(20.0);
    } else {
        std::fs::write(dir.join("slab.obj"), slab_obj([0.0; 3])).unwrap();
        slab["path"] = json!(dir.join("slab.obj"));
        slab["keyframes"] = json!(
            keys.iter()
                .enumerate()
                .map(|(k, d)| json!([k as f64 / 20.0, d]))
                .collect::<Vec<_>>()
        );
    }
    v["objects"][1] = slab;
    v
}

/// Node positions (m) after the scene's 0.1 s.
fn run(v: &Value) -> Vec<[f64; 3]> {
    let scene = weft_io::Scene::from_str(&v.to_string(), "animated_slab.json").unwrap();
    let mut sim = scene.build().unwrap().simulation(false).unwrap();
    sim.advance_to(0.1, |_, _| {}).unwrap();
    sim.state().x.iter().map(|p| [p.x, p.y, p.z]).collect()
}

fn centroid(x: &[[f64; 3]]) -> [f64; 3] {
    std::array::from_fn(|i| x.iter().map(|p| p[i]).sum::<f64>() / x.len() as f64)
}

#[test]
fn an_animated_body_moves_the_cloth_as_the_same_rigid_motion_does() {
    let dir = tempfile::tempdir().unwrap();
    let start = centroid(&run(&scene(dir.path(), &[[0.0; 3]], false)));
    let frames = run(&scene(dir.path(), &KEYS, true));
    let rigid = run(&scene(dir.path(), &KEYS, false));
    let diff = frames
        .iter()
        .zip(&rigid)
        .flat_map(|(a, b)| (0..3).map(move |i| (a[i] - b[i]).abs()))
        .fold(0.0, f64::max);
    let (c, moved) = (centroid(&frames), |c: [f64; 3], i: usize| c[i] - start[i]);
    eprintln!(
        "frames vs keyframes: max difference {diff:e} m; the patch moved {:.2} mm along x, {:.2} mm up (the still slab's run as reference)",
        moved(c, 0) * 1e3,
        moved(c, 1) * 1e3
    );
    assert!(diff < 1e-9, "frames and keyframes differ by {diff} m");
    // Carried along x by friction (the slab moves 8 mm), at most as far as
    // the slab and at least 70 % of it (it slips while the slab starts).
    assert!(
        moved(c, 0) > 0.7 * 0.008 && moved(c, 0) < 0.008 + 1e-5,
        "{c:?}"
    );
    // Lifted with the slab's 2 mm.
    assert!((moved(c, 1) - 0.002).abs() < 2e-4, "{c:?}");
    // No node inside the slab, whose top is at y = 2 mm at the end.
    let lowest = frames.iter().map(|p| p[1]).fold(f64::MAX, f64::min);
    assert!(lowest > 0.002, "a node at y = {lowest} m, inside the slab");
}

#[test]
fn still_frames_hold_the_patch_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let x = run(&scene(dir.path(), &[[0.0; 3], [0.0; 3]], true));
    let reference = run(&scene(dir.path(), &[[0.0; 3]], false));
    let c = centroid(&x);
    let r = centroid(&reference);
    assert!(
        (c[0] - r[0]).abs() < 1e-9 && (c[2] - r[2]).abs() < 1e-9,
        "{c:?} against {r:?}"
    );
}
