//! Scene files for the triangle-mesh cloth (issue 22 item 3), implicit
//! and strain-based dynamics (`"model": "sbd"`, the last two tests): a
//! `triangle_cloth` object ([`weft_io::TriangleClothObject`]) is a
//! rectangle of StVK membrane triangles and discrete-shell hinges [SBO18
//! §4] run by `weft run` with the same driver, colliders and outputs as
//! the yarn objects. The shipped scene `data/scenes/triangle_cloth_on_sphere.json`
//! drops a 0.4 m square of cotton-like cloth (`E t` = 1000 N/m, `G` =
//! 5 N/m, `B` = 1e-5 N·m, 0.15 kg/m²) from 3 cm above a 0.1 m sphere.
//!
//! Measured (2026-11-29, at the test's 11 x 11 vertices): after 1 s the
//! centre vertex is at y = 100.95 mm on the pole (radius 100 mm, margin
//! 1 mm), the corners hang at -129.8 mm, below the equator, no vertex is
//! inside the sphere (the nearest 0.95 mm outside), and the kinetic
//! energy is 4.1e-5 J. The shipped 21 x 21 vertices run in 263 steps,
//! 23 s (release build, 2-core Xeon).

mod common;

use serde_json::{Value, json};
use weft_io::Scene;

/// The shipped scene with `vertices` per side and `duration` (s).
fn scene(vertices: usize, duration: f64) -> Value {
    let path = common::scene_path("triangle_cloth_on_sphere.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(v["objects"][0]["type"], "triangle_cloth");
    assert_eq!(v["objects"][0]["size"], json!([0.4, 0.4]));
    assert_eq!(v["objects"][1]["radius"], json!(0.1));
    v["objects"][0]["vertices"] = json!([vertices, vertices]);
    v["duration"] = json!(duration);
    v
}

fn load(v: &Value) -> Result<weft_io::BuiltScene, String> {
    Scene::from_str(&v.to_string(), "triangle_cloth_on_sphere.json")
        .and_then(|s| s.build())
        .map_err(|e| e.to_string())
}

#[test]
fn a_triangle_cloth_drapes_over_the_sphere() {
    // The shipped file itself loads.
    let shipped = common::built_scene("triangle_cloth_on_sphere.json");
    assert_eq!(shipped.fabric.node_count(), 441);
    assert_eq!(shipped.fabric.elements.triangles.len(), 800);

    let n = 11;
    let built = load(&scene(n, 1.0)).unwrap();
    let fabric = built.fabric.clone();
    assert_eq!(fabric.node_count(), n * n);
    assert!(fabric.yarns.is_empty());
    let mass: f64 = fabric.point_mass.iter().sum();
    assert!((mass - 0.15 * 0.16).abs() < 1e-12, "mass {mass} kg");
    let mut sim = built.simulation(false).unwrap();
    sim.advance_to(1.0, |_, _| {}).unwrap();
    let state = sim.state();
    let x = &state.x;
    let centre = x[(n / 2) * n + n / 2];
    let corners = [0, n - 1, n * n - 1, n * (n - 1)].map(|i| x[i]);
    let inside = x.iter().map(|p| 0.1 - p.norm()).fold(f64::MIN, f64::max);
    let ke: f64 = (state.x_dot.iter().zip(&fabric.point_mass))
        .map(|(v, m)| 0.5 * m * v.norm_squared())
        .sum();
    println!(
        "centre {centre:?}, corners y {:?}, deepest {inside:.2e} m, KE {ke:.2e} J",
        corners.map(|c| c.y)
    );
    // Resting on the pole: the sphere's radius plus the 1 mm margin, less
    // what the penalty (1000 N/m) lets the weight sink.
    assert!((centre.y - 0.101).abs() < 1.5e-3, "centre at {centre:?}");
    assert!(
        centre.x.abs() < 5e-3 && centre.z.abs() < 5e-3,
        "slid: {centre:?}"
    );
    for c in corners {
        assert!(c.y < 0.05, "a corner stays up at {c:?}");
    }
    assert!(inside < 1e-3, "a vertex {inside} m inside the sphere");
    // Nearly at rest: under 1 % of the potential energy the fall released.
    let drop = 0.13 - x.iter().map(|p| p.y).sum::<f64>() / x.len() as f64;
    println!("centroid drop {drop:.4} m");
    assert!(ke < 0.01 * mass * 9.81 * drop, "still moving: {ke} J");
}

#[test]
fn triangle_cloth_selectors_pin_and_frames_write_faces() {
    let mut v = scene(5, 0.1);
    v["objects"][0]["pinned"] = json!(["corner:1", "edge:weft_end", 7]);
    v["objects"][0]["initial_velocity"] = json!([0.0, 0.5, 0.0]);
    let built = load(&v).unwrap();
    let fabric = &built.fabric;
    // Vertex (i, j) = 5 j + i: corner 1 = (4, 0), weft end j = 4.
    let pinned: Vec<usize> = (0..25).filter(|&i| !fabric.free[i][0]).collect();
    assert_eq!(pinned, vec![4, 7, 20, 21, 22, 23, 24]);
    assert!(fabric.initial.x_dot.iter().all(|v| v.y == 0.5));
    // The first axis is the warp direction, the second normal × warp.
    let x = &fabric.initial.x;
    assert!((x[1] - x[0] - nalgebra::Vector3::new(0.1, 0.0, 0.0)).norm() < 1e-12);
    assert!((x[5] - x[0] - nalgebra::Vector3::new(0.0, 0.0, -0.1)).norm() < 1e-12);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("frame.obj");
    weft_io::write_obj_frame(&path, fabric, &fabric.initial).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().filter(|l| l.starts_with("v ")).count(), 25);
    assert_eq!(text.lines().filter(|l| l.starts_with("f ")).count(), 32);
    assert_eq!(text.lines().filter(|l| l.starts_with("l ")).count(), 0);
}

/// An edit of the scene's JSON.
type Edit = Box<dyn Fn(&mut Value)>;

/// Asserts that `base` with each case's edit fails to load with an error
/// naming the case's JSON path and containing its expected text.
fn assert_refused(base: &Value, cases: Vec<(Edit, &str, &str)>) {
    for (edit, path, expected) in cases {
        let mut v = base.clone();
        edit(&mut v);
        let err = load(&v).expect_err(path);
        println!("{err}");
        assert!(
            err.contains(path) && err.contains(expected),
            "expected '{expected}' at {path}: {err}"
        );
    }
}

#[test]
fn bad_triangle_cloths_are_refused_by_path() {
    let cases: Vec<(Edit, &str, &str)> = vec![
        (
            Box::new(|v| v["objects"][0]["vertices"] = json!([1, 5])),
            "objects[0].vertices[0]",
            "at least 2 vertices",
        ),
        (
            Box::new(|v| v["objects"][0]["material"]["stretch_modulus"] = json!(-1.0)),
            "objects[0].material.stretch_modulus",
            "> 0",
        ),
        (
            Box::new(|v| v["objects"][0]["material"]["stiffness"] = json!(1.0)),
            "objects[0].material",
            "unknown field `stiffness`",
        ),
        (
            Box::new(|v| v["objects"][0]["warp_direction"] = json!([0.0, 2.0, 0.0])),
            "objects[0].warp_direction",
            "not parallel to the normal",
        ),
        (
            Box::new(|v| v["objects"][0]["pinned"] = json!([25])),
            "objects[0].pinned[0]",
            "out of range",
        ),
        (
            Box::new(|v| {
                v["objects"].as_array_mut().unwrap().push(json!({
                    "type": "yarn", "material": "m", "nodes": [[0, 0, 0], [0.01, 0, 0]]
                }));
                v["materials"] = json!({"m": {"radius": 1e-4, "density": 100.0,
                    "stretch_stiffness": 1.0, "bending_stiffness": 1e-9}});
            }),
            "objects[2]",
            "no other cloth (objects[2] is a yarn)",
        ),
    ];
    assert_refused(&scene(5, 0.1), cases);
}

/// The shipped `data/scenes/sbd_cloth_on_sphere.json`: the same square as
/// strain-based dynamics (`"model": "sbd"`, 5 substeps of one sweep,
/// velocity damping 2/s) for 2 s, through the library's `weft run`.
/// Measured (2026-11-29): the centre vertex at y = 100.98 mm on the pole,
/// the corners at -83 to -93 mm, every vertex 1 mm (the collision
/// thickness) or more from the sphere's centre beyond its radius, kinetic
/// energy 1.2e-5 J; 0.8 s wall (release).
#[test]
fn an_sbd_cloth_scene_runs_through_weft_run() {
    let dir = tempfile::tempdir().unwrap();
    let summary = weft::run::run_scene(
        &common::scene_path("sbd_cloth_on_sphere.json"),
        dir.path(),
        &weft::run::RunOptions::default(),
        &mut (),
    )
    .unwrap();
    assert!(summary.completed);
    assert_eq!(summary.backend, "cpu (sbd)");
    assert_eq!(summary.steps, 400);
    let rows = weft_io::read_energy_csv(dir.path().join("energy.csv")).unwrap();
    assert_eq!(rows.len(), 41);
    assert!(
        (rows[40].t - 2.0).abs() < 1e-9,
        "last row at {}",
        rows[40].t
    );
    // The twin's StVK energy of the sbd cloth's shape: stretched a little.
    assert!(rows[40].elastic > 0.0 && rows[40].newton_iters == 0);
    let frame = std::fs::read_to_string(weft_io::frame_path(dir.path(), 40, "obj")).unwrap();
    assert_eq!(frame.lines().filter(|l| l.starts_with("f ")).count(), 800);
    assert!(dir.path().join("preview.png").is_file());

    let state = weft_io::read_final_state(dir.path().join("final_state.json")).unwrap();
    let x: Vec<nalgebra::Vector3<f64>> = state.x.iter().map(|p| (*p).into()).collect();
    let n = 21;
    let centre = x[(n / 2) * n + n / 2];
    assert!((centre.y - 0.101).abs() < 1e-3, "centre at {centre:?}");
    for i in [0, n - 1, n * n - 1, n * (n - 1)] {
        assert!(x[i].y < 0.0, "corner {i} stays up at {:?}", x[i]);
    }
    let nearest = x.iter().map(|p| p.norm()).fold(f64::INFINITY, f64::min);
    assert!(
        nearest > 0.101 - 1e-6,
        "a vertex {nearest} m from the centre"
    );
    let mass = 0.15 * 0.16;
    let drop = 0.13 - x.iter().map(|p| p.y).sum::<f64>() / x.len() as f64;
    assert!(
        rows[40].kinetic < 0.01 * mass * 9.81 * drop,
        "still moving: {} J",
        rows[40].kinetic
    );

    // It cannot be resumed, so it writes no checkpoints either.
    let resume = weft::run::RunOptions {
        resume: true,
        ..Default::default()
    };
    let scene = common::scene_path("sbd_cloth_on_sphere.json");
    let err = weft::run::prepare(&scene, dir.path(), &resume)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        err.contains("cannot resume") && err.contains("sbd_cloth_on_sphere.json"),
        "{err}"
    );
    let every_frame = weft::run::RunOptions {
        checkpoint_every_s: Some(0.0),
        ..Default::default()
    };
    let again = tempfile::tempdir().unwrap();
    weft::run::run_scene(&scene, again.path(), &every_frame, &mut ()).unwrap();
    assert!(again.path().join("final_state.json").is_file());
    assert!(!again.path().join("checkpoint.json").exists());
}

#[test]
fn bad_sbd_cloths_are_refused_by_path() {
    let cases: Vec<(Edit, &str, &str)> = vec![
        (
            Box::new(|v| v["objects"][0]["model"] = json!("shell")),
            "objects[0].sbd",
            "no `sbd` options",
        ),
        (
            Box::new(|v| v["objects"][0]["sbd"]["substeps"] = json!(0)),
            "objects[0].sbd.substeps",
            "",
        ),
        (
            Box::new(|v| v["objects"][0]["initial_velocity"] = json!([0, 1, 0])),
            "objects[0].initial_velocity",
            "starts at rest",
        ),
        (
            Box::new(|v| {
                v["objects"].as_array_mut().unwrap().push(json!({
                    "type": "handle", "object": 0, "nodes": ["corner:0"],
                    "keyframes": [[0, [0, 0, 0]], [1, [0, 0.1, 0]]]
                }));
            }),
            "objects[2].object",
            "pin its vertices instead",
        ),
    ];
    let path = common::scene_path("sbd_cloth_on_sphere.json");
    let shipped: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(shipped["objects"][0]["model"], "sbd");
    assert_refused(&shipped, cases);
}
