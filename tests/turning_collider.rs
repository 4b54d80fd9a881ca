//! A collider turned by its scene keyframes carries the cloth on it by
//! friction (DESIGN §6; the rotation keys of `weft_io`'s collider
//! keyframes): the shipped scene `data/scenes/turntable.json`, the
//! `drape_sphere_small` patch (1 cm, soft yarns) laid 5 cm off the axis on
//! a horizontal plane (friction 0.5) that turns about the vertical axis
//! through its `point` at `ω = 2 rad/s`: the plane under the patch moves at `ω × r`, 0.1 m/s
//! toward `-z`, and the patch rides along the circle of radius 5 cm. On
//! the same plane standing still it stays put. This checks, end to end
//! from the scene file, that a rotating collider's surface velocity
//! `ω × (x - pivot)` reaches the friction force with its sign.
//!
//! Measured (2026-11-26): after 0.1 s the patch's centroid is at
//! `z = -8.9 mm`, `x = 49.2 mm` (the circle gives `5 cm · (cos, -sin)` of
//! the angle turned since it landed), on the still plane it does not move.

use serde_json::{Value, json};

/// Radius of the patch's centre from the turntable's axis (m).
const R: f64 = 0.05;

/// The shipped scene `data/scenes/turntable.json`, its plane turning at
/// `omega` (rad/s) about `y` instead of the file's 2 rad/s.
fn scene(omega: f64) -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/scenes/turntable.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(v["duration"], json!(0.1));
    assert_eq!(v["objects"][0]["center"], json!([R, 0.0004, 0]));
    assert_eq!(v["objects"][1]["type"], "plane");
    v["objects"][1]["keyframes"] = json!([[0, [0, 0, 0]], [1, [0, 0, 0], [0, omega, 0]]]);
    v
}

/// The patch's centroid (m) after the scene's 0.1 s.
fn centroid(omega: f64) -> [f64; 3] {
    let v = scene(omega);
    let scene = weft_io::Scene::from_str(&v.to_string(), "turntable.json").unwrap();
    let mut sim = scene.build().unwrap().simulation(false).unwrap();
    sim.advance_to(0.1, |_, _| {}).unwrap();
    let x = sim.state().x;
    let n = x.len() as f64;
    std::array::from_fn(|i| x.iter().map(|p| p[i]).sum::<f64>() / n)
}

#[test]
fn a_turntable_carries_the_patch_along_its_circle() {
    let (still, turning) = (centroid(0.0), centroid(2.0));
    eprintln!("centroid after 0.1 s: still {still:?} m, turning {turning:?} m");
    // Still: no sideways motion.
    assert!(
        (still[0] - R).abs() < 1e-6 && still[2].abs() < 1e-6,
        "{still:?}"
    );
    // Turning: carried toward -z (ω × r at the patch), at most as fast as
    // the surface (0.1 m/s over 0.1 s) and at least 60 % of it (it lands
    // within the first 10 ms), and along the circle of radius R.
    let (x, z) = (turning[0], turning[2]);
    assert!(
        z < -0.6 * 2.0 * R * 0.1 && z > -2.0 * R * 0.1,
        "{turning:?}"
    );
    let radius = x.hypot(z);
    assert!(
        (radius - R).abs() < 2e-4,
        "off the circle: radius {radius} m"
    );
    // Turned by the angle z says, x follows cos of it.
    let angle = (-z / R).asin();
    assert!((x - R * angle.cos()).abs() < 2e-4, "{turning:?}");
}
