//! The `weft` binary end to end: every shipped scene runs and writes the
//! output contract of DESIGN §8; bad scenes fail with file, JSON path and
//! expectation; plot, analyze and bench work.

use std::path::{Path, PathBuf};
use std::process::Command;

fn weft() -> Command {
    Command::new(env!("CARGO_BIN_EXE_weft"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The JSON document in `path`.
fn read_json(path: impl AsRef<Path>) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `weft run -q SCENE --out OUT`: its exit status and output.
fn run_quiet(scene: &Path, out: &Path) -> std::process::Output {
    weft()
        .args(["run", "-q"])
        .arg(scene)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

/// Scenes too large for CI (run from the CLI; see README), and the coarse
/// sphere drop, which its own test runs through the CLI and checks for the
/// same outputs and more (`sphere_drop_coarse_falls_freely_and_rests_on_the_pole`).
const LARGE: &[&str] = &[
    "sbo17_sphere_drop.json",
    "sbo18_hanging.json",
    "sbo18_flapping.json",
    "sbo17_sphere_drop_coarse.json",
];

fn energy_rows(dir: &Path) -> Vec<Vec<f64>> {
    let text = std::fs::read_to_string(dir.join("energy.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("t,kinetic,elastic,gravity,dissipated,h,newton_iters,cg_iters")
    );
    lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect()
}

#[test]
fn every_shipped_scene_runs_and_writes_the_contract_outputs() {
    let scenes = repo().join("data/scenes");
    let mut ran = 0;
    for entry in std::fs::read_dir(&scenes).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.ends_with(".json") || LARGE.contains(&name.as_str()) {
            continue;
        }
        let out = tempfile::tempdir().unwrap();
        let o = run_quiet(&path, out.path());
        assert!(
            o.status.success(),
            "{name} failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let scene = read_json(&path);
        let duration = scene["duration"].as_f64().unwrap();
        let interval = scene["output"]["interval"].as_f64().unwrap();
        let frames = (duration / interval - 1e-9).ceil() as usize;
        let rows = energy_rows(out.path());
        assert_eq!(
            rows.len(),
            frames + 1,
            "{name}: one row per frame plus t = 0"
        );
        assert!(
            (rows.last().unwrap()[0] - duration).abs() < 1e-12,
            "{name}: last frame at the duration"
        );
        // Every frame lands on its output time (steps are cut to it).
        for (k, row) in rows.iter().enumerate() {
            let t_k = (k as f64 * interval).min(duration);
            assert!(
                (row[0] - t_k).abs() <= 1e-9 * interval,
                "{name}: frame {k} at t = {}, expected {t_k}",
                row[0]
            );
        }
        assert!(rows.iter().flatten().all(|v| v.is_finite()));
        let state = read_json(out.path().join("final_state.json"));
        let n = state["x"].as_array().unwrap().len();
        assert_eq!(state["u"].as_array().unwrap().len(), n);
        assert_eq!(state["v"].as_array().unwrap().len(), n);
        let svg = std::fs::read_to_string(out.path().join("energy.svg")).unwrap();
        assert!(
            svg.contains("<svg") && svg.contains("kinetic"),
            "{name}: energy.svg"
        );
        let objs = std::fs::read_dir(out.path().join("frames"))
            .unwrap()
            .count();
        assert_eq!(objs, frames + 1, "{name}: one OBJ per frame");
        let png = std::fs::read(out.path().join("preview.png")).unwrap();
        assert!(png.starts_with(b"\x89PNG"), "{name}: preview.png");
        if name == "stacked_patches_self_collision.json" {
            // Self-collision keeps the upper patch on the lower one: their
            // centrelines end d0 = 2R + margin = 0.55 mm apart (within 10 %);
            // without it the upper patch falls through to the plane.
            let y: Vec<f64> = state["x"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p[1].as_f64().unwrap())
                .collect();
            let lower_max = y[..36].iter().cloned().fold(f64::MIN, f64::max);
            let upper_min = y[36..].iter().cloned().fold(f64::MAX, f64::min);
            assert!(
                (upper_min - lower_max - 0.55e-3).abs() < 0.055e-3,
                "gap {}",
                upper_min - lower_max
            );
        }
        ran += 1;
    }
    assert!(ran >= 5, "only {ran} scenes ran");
}

/// Through the CLI, the strain-rate rotating spring ends in circular motion
/// with the kinetic energy of the analytic steady state (83.93 J for the
/// initial angular momentum, within the 2 % that backward Euler's own
/// angular-momentum loss at h = 1e-4 s allows; see tests/rotating_spring.rs),
/// and the energy balance KE + elastic + dissipated stays within 1 % of the
/// initial 200 J. The Rayleigh run, with the same β = 0.2 s, ends below
/// 10 J.
#[test]
fn rotating_spring_scenes_reproduce_sbo18() {
    let dir = repo().join("data/scenes");
    let out = tempfile::tempdir().unwrap();
    let sr = out.path().join("sr");
    assert!(
        run_quiet(&dir.join("rotating_spring_strain_rate.json"), &sr)
            .status
            .success()
    );
    let last = energy_rows(&sr).pop().unwrap();
    assert!((last[1] / 83.93 - 1.0).abs() < 0.02, "KE {}", last[1]);
    assert!(((last[1] + last[2] + last[4]) / 200.0 - 1.0).abs() < 0.01);
    let ray = out.path().join("ray");
    assert!(
        run_quiet(&dir.join("rotating_spring_rayleigh.json"), &ray)
            .status
            .success()
    );
    assert!(energy_rows(&ray).pop().unwrap()[1] < 10.0);
    // Plot and damping analysis of the undamped run.
    let un = out.path().join("un");
    assert!(
        run_quiet(&dir.join("rotating_spring_undamped.json"), &un)
            .status
            .success()
    );
    let svg = out.path().join("cmp.svg");
    let st = weft()
        .arg("plot")
        .arg(sr.join("energy.csv"))
        .arg(ray.join("energy.csv"))
        .arg(un.join("energy.csv"))
        .arg("-o")
        .arg(&svg)
        .status()
        .unwrap();
    assert!(st.success());
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    let o = weft()
        .args(["analyze", "damping"])
        .arg(un.join("energy.csv"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    let zeta: f64 = text
        .lines()
        .find(|l| l.starts_with("damping ratio"))
        .unwrap()
        .split_whitespace()
        .last()
        .unwrap()
        .parse()
        .unwrap();
    // Undamped: only backward Euler's numerical damping (≈ 2 %/s of the radial mode).
    assert!(zeta.abs() < 0.005, "ζ = {zeta}");
}

/// The cloth dropped on a sphere of \[SBO17 §6.3, Fig. 4\] (11.5 cm, cotton
/// shirting from the preset, a 3 cm sphere: the paper gives no size, and at
/// 3 cm the 5.75 cm half-width reaches past the sphere's quarter
/// circumference of 4.7 cm; dropped 1 cm above the pole, off centre by
/// (2, 1) mm as no real drop is centred), checked on the outputs of
/// `weft run SCENE --out OUT` (energy.csv, every OBJ frame,
/// final_state.json) with the numbers of the scene file, so the same checks
/// hold the CI run of `sbo17_sphere_drop_coarse.json` (40 x 40 yarns) and
/// the full `sbo17_sphere_drop.json` (200 x 200, run from the CLI; see
/// `full_sphere_drop_outputs`):
///
/// 1. Free fall is exact until contact (strain-rate damping does not damp
///    rigid motion, and backward Euler integrates a constant acceleration
///    exactly): every frame before the contact time
///    `t_c = √(2 (y₀ - 2R - r_s - δ)/g)` (the crimp puts nodes R below the
///    centre plane, and contact acts at `R + δ`) has `KE = ½ M g² t²`, M
///    the yarns' total mass `ρ_A · side² · n/(n-1)`, to 1e-6 relative.
/// 2. No node centre ever comes within `R` of the sphere: the penalty
///    layer (offset `R + δ`) keeps the yarns out (checked in every frame).
/// 3. The cloth comes to rest: the last frame's kinetic energy is below
///    1e-3 of the largest (measured 3.5e-4 coarse at 0.4 s: the folds
///    still creep on the sphere's friction).
/// 4. It rests on the pole: the node nearest the sphere's axis sits
///    `R + δ` from the sphere's surface (within 10 %).
/// 5. The overhang falls past the equator: the lowest node is more than a
///    third of the sphere's radius below its centre (cotton's bending
///    length, 1.5 cm, is a quarter of the overhang; measured 2.5 cm below
///    on 40 x 40).
/// 6. It drapes in folds, as SBO17 Fig. 4 shows: the shadow seen from
///    above (the farthest point of the yarn segments from the sphere's
///    vertical axis in 720 directions, `weft_garment::cusick::shadow_radii`)
///    has at least the 4 folds of the hanging corners and at most 12
///    (`cusick::count_folds`), and its drape coefficient
///    `(A_shadow - π r_s²) / (side² - π r_s²)` (1 for the flat square)
///    lies in [0.45, 0.80]: the corners and flaps hang (cotton's bending
///    length is half the flaps' 2.75 cm), but stiff cotton does not fall
///    straight down either. Measured on 40 x 40: 4 folds, 0.64.
fn check_sphere_drop(scene: &Path, out: &Path) {
    let v = read_json(scene);
    let fabric = v["fabrics"].as_object().unwrap().values().next().unwrap();
    let preset: weft_core::FabricPreset = fabric["preset"].as_str().unwrap().parse().unwrap();
    let props = preset.properties();
    let r = props.radius;
    let patch = &v["objects"][0];
    let sphere = &v["objects"][1];
    let n = patch["yarn_counts"][0].as_u64().unwrap() as usize;
    assert_eq!(patch["yarn_counts"][1].as_u64().unwrap() as usize, n);
    let side = patch["size"][0].as_f64().unwrap();
    let y0 = patch["center"][1].as_f64().unwrap();
    let r_s = sphere["radius"].as_f64().unwrap();
    let c = [0, 1, 2].map(|k| sphere["center"][k].as_f64().unwrap());
    let delta = sphere["margin"].as_f64().unwrap();
    let g = 9.81;
    let mass = props.areal_density * side * side * n as f64 / (n - 1) as f64;
    let t_c = (2.0 * (y0 - 2.0 * r - r_s - delta - c[1]) / g).sqrt();
    let dist =
        |p: &[f64]| ((p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2) + (p[2] - c[2]).powi(2)).sqrt();

    let rows = energy_rows(out);
    let ke_max = rows.iter().map(|r| r[1]).fold(0.0, f64::max);
    let mut free = 0;
    for row in rows.iter().filter(|r| r[0] > 0.0 && r[0] < t_c) {
        let expect = 0.5 * mass * g * g * row[0] * row[0];
        assert!(
            (row[1] / expect - 1.0).abs() < 1e-6,
            "t = {}: KE {} vs free fall {expect}",
            row[0],
            row[1]
        );
        free += 1;
    }
    assert!(free >= 2, "{free} frames before contact at {t_c} s");
    let last = rows.last().unwrap();
    assert!(
        last[1] < 1e-3 * ke_max,
        "KE at the end {} of {ke_max}",
        last[1]
    );

    let mut closest = f64::INFINITY;
    let mut frames = 0;
    for entry in std::fs::read_dir(out.join("frames")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for line in text.lines().filter(|l| l.starts_with("v ")) {
            let p: Vec<f64> = line[2..].split(' ').map(|c| c.parse().unwrap()).collect();
            closest = closest.min(dist(&p));
        }
        frames += 1;
    }
    assert_eq!(frames, rows.len());
    assert!(
        closest > r_s + r,
        "a node centre came {} m from the sphere",
        closest - r_s
    );

    let state = read_json(out.join("final_state.json"));
    let x: Vec<[f64; 3]> = state["x"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| [0, 1, 2].map(|c| p[c].as_f64().unwrap()))
        .collect();
    assert_eq!(x.len(), n * n);
    let axis = |p: &[f64; 3]| (p[0] - c[0]).hypot(p[2] - c[2]);
    let pole = x.iter().min_by(|a, b| axis(a).total_cmp(&axis(b))).unwrap();
    let gap = dist(pole) - r_s;
    assert!(
        (gap / (r + delta) - 1.0).abs() < 0.1,
        "pole node {gap} m from the surface, contact offset {}",
        r + delta
    );
    // 6. Folds and drape coefficient of the shadow about the vertical axis.
    let rel: Vec<nalgebra::Vector3<f64>> = x
        .iter()
        .map(|p| nalgebra::Vector3::new(p[0] - c[0], p[1] - c[1], p[2] - c[2]))
        .collect();
    let grid: Vec<[usize; 2]> = (0..n)
        .flat_map(|i| (0..n).map(move |j| i * n + j))
        .flat_map(|k| {
            let right = (k % n + 1 < n).then_some([k, k + 1]);
            let down = (k + n < n * n).then_some([k, k + n]);
            right.into_iter().chain(down)
        })
        .collect();
    let radii = weft_garment::cusick::shadow_radii(&rel, &grid, 720, r_s);
    let folds = weft_garment::cusick::count_folds(&radii);
    let disc = std::f64::consts::PI * r_s * r_s;
    let dc = (weft_garment::cusick::star_area(&radii) - disc) / (side * side - disc);
    assert!((4..=12).contains(&folds), "{folds} folds");
    assert!((0.45..=0.80).contains(&dc), "drape coefficient {dc}");
    let lowest = x.iter().map(|p| p[1]).fold(f64::INFINITY, f64::min);
    assert!(
        lowest < c[1] - r_s / 3.0,
        "lowest node at {lowest} m: the overhang did not fall a third of the radius below the equator at {} m",
        c[1]
    );
    eprintln!(
        "sphere drop ({n} x {n}): free fall to {t_c:.4} s exact over {free} frames, closest node \
         centre {:.3e} m from the surface, final KE {:.2e} of {ke_max:.2e} J, pole node {gap:.3e} m \
         off the surface, lowest node {:.1} mm below the equator, {folds} folds, drape \
         coefficient {dc:.3}",
        closest - r_s,
        last[1],
        (c[1] - lowest) * 1e3
    );
}

/// The CI version of the sphere drop: the full scene's fabric, sphere,
/// patch size and drop height on a 40 x 40 grid, 0.4 s (101 s on one core).
#[test]
fn sphere_drop_coarse_falls_freely_and_rests_on_the_pole() {
    let scene = repo().join("data/scenes/sbo17_sphere_drop_coarse.json");
    let full = read_json(repo().join("data/scenes/sbo17_sphere_drop.json"));
    let mut coarse = read_json(&scene);
    // The same experiment but for the grid and the duration.
    assert_eq!(
        coarse["objects"][0]["yarn_counts"],
        serde_json::json!([40, 40])
    );
    coarse["objects"][0]["yarn_counts"] = full["objects"][0]["yarn_counts"].clone();
    coarse["duration"] = full["duration"].clone();
    coarse["fabrics"]["cotton"]["spacing"] = full["fabrics"]["cotton"]["spacing"].clone();
    assert_eq!(coarse, full);
    let out = tempfile::tempdir().unwrap();
    assert!(run_quiet(&scene, out.path()).status.success());
    check_sphere_drop(&scene, out.path());
}

/// The same checks on the outputs of the full scene, which takes about an
/// hour on 2 cores: `weft run data/scenes/sbo17_sphere_drop.json --out DIR`,
/// then `WEFT_SPHERE_OUT=DIR cargo test -p weft-cli --test cli
/// full_sphere_drop_outputs -- --ignored`.
#[test]
#[ignore = "needs the outputs of the full sphere run (WEFT_SPHERE_OUT)"]
fn full_sphere_drop_outputs() {
    let out = std::env::var_os("WEFT_SPHERE_OUT")
        .expect("set WEFT_SPHERE_OUT to the --out folder of the full sphere run");
    check_sphere_drop(
        &repo().join("data/scenes/sbo17_sphere_drop.json"),
        Path::new(&out),
    );
}

fn run_bad(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("bad_scene.json");
    std::fs::write(&scene, text).unwrap();
    let o = run_quiet(&scene, &dir.path().join("out"));
    assert!(!o.status.success());
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn bad_scenes_name_file_path_and_expectation() {
    let base = std::fs::read_to_string(repo().join("data/scenes/free_fall_patch.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&base).unwrap();
    v["objects"][0]["colour"] = "red".into();
    let msg = run_bad(&v.to_string());
    assert!(
        msg.contains("bad_scene.json") && msg.contains("objects[0]") && msg.contains("colour"),
        "{msg}"
    );
    let mut v: serde_json::Value = serde_json::from_str(&base).unwrap();
    v["objects"][0]["yarn_counts"] = serde_json::json!(["a", 6]);
    let msg = run_bad(&v.to_string());
    assert!(
        msg.contains("bad_scene.json")
            && msg.contains("objects[0].yarn_counts")
            && msg.contains("expected"),
        "{msg}"
    );
    let mut v: serde_json::Value = serde_json::from_str(&base).unwrap();
    v["objects"][0]["material"] = "silk".into();
    let msg = run_bad(&v.to_string());
    assert!(msg.contains("unknown material 'silk'"), "{msg}");
    let msg = run_bad("{ not json");
    assert!(
        msg.contains("bad_scene.json") && msg.contains("line 1"),
        "{msg}"
    );
}

/// A scene whose step cannot pass (after a far plane and a pinned yarn, so
/// that scene and global node numbers differ): a one-segment yarn (1 mm, so soft that
/// its end moves freely for milliseconds: `k_s` = 1 nN, ω ≈ 9 rad/s) whose
/// free end is launched at 1000 m/s, so its stretch strain changes by
/// about 1000 · h / 1 mm per step, far above the 0.1 a step may change it
/// (DESIGN §5), even at `dt_min`.
fn runaway_scene(time_step: serde_json::Value) -> String {
    serde_json::json!({
        "duration": 0.01,
        "time_step": time_step,
        "output": {"interval": 0.005, "formats": ["obj"]},
        "gravity": [0.0, 0.0, 0.0],
        "materials": {"yarn": {"radius": 0.00025, "density": 130.0,
            "stretch_stiffness": 1e-9, "bending_stiffness": 0.0}},
        "objects": [
            {"type": "plane", "point": [0, -1, 0], "normal": [0, 1, 0], "stiffness": 10.0},
            {"type": "yarn", "material": "yarn",
             "nodes": [[0, 0.01, 0], [0.001, 0.01, 0]], "pinned": [0, 1]},
            {"type": "yarn", "material": "yarn",
             "nodes": [[0, 0, 0], [0.001, 0, 0]], "pinned": [0],
             "initial_velocities": {"1": [1000.0, 0.0, 0.0]}}]
    })
    .to_string()
}

/// A run whose step falls below `dt_min` fails with the reason and the
/// element (segment and nodes), keeps the last good state in
/// `final_state.json` and the rejection counts in `run_summary.json`; with
/// adaptive stepping off the message says so instead of blaming `dt_min`.
#[test]
fn failing_step_names_reason_and_element_and_keeps_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, ts: serde_json::Value| {
        let scene = dir.path().join(format!("{name}.json"));
        std::fs::write(&scene, runaway_scene(ts)).unwrap();
        let out = dir.path().join(name);
        let o = run_quiet(&scene, &out);
        assert!(!o.status.success(), "{name}: the runaway step passed");
        (String::from_utf8_lossy(&o.stderr).into_owned(), out)
    };
    let (msg, out) = run(
        "adaptive",
        serde_json::json!({"dt": 1e-3, "adaptive": true, "dt_min": 1e-4}),
    );
    assert!(
        msg.contains("adaptive.json: simulation failed: time step fell below dt_min = 1e-4 s at t = 0.000000 s")
            && msg.contains("stretch strain of segment 1 (nodes 2-3) changed by")
            && msg.contains(
                "in the scene file: node 2 is objects[2] node 0, node 3 is objects[2] node 1"
            ),
        "{msg}"
    );
    // 1 ms, 0.5 ms, 0.25 ms and 0.125 ms were tried; 62.5 µs is below dt_min.
    assert!(
        msg.contains("after 0 accepted steps and 4 rejected (strain_jump 4)"),
        "{msg}"
    );
    let state = read_json(out.join("final_state.json"));
    assert_eq!(
        state["x"][3],
        serde_json::json!([0.001, 0.0, 0.0]),
        "last good state"
    );
    let summary = read_json(out.join("run_summary.json"));
    assert_eq!(summary["completed"], false);
    assert_eq!(summary["steps"], 0);
    assert_eq!(summary["rejected"], 4);
    assert_eq!(summary["rejections"]["strain_jump"], 4);
    assert!(out.join("frames/frame_000000.obj").is_file());

    let (msg, _) = run("fixed", serde_json::json!({"dt": 1e-3, "adaptive": false}));
    assert!(
        msg.contains("step of 1e-3 s rejected at t = 0.000000 s with adaptive stepping off")
            && msg.contains("segment 1 (nodes 2-3)")
            && msg.contains("node 3 is objects[2] node 1")
            && !msg.contains("dt_min"),
        "{msg}"
    );
}

/// A finished run writes `run_summary.json` with its counts, prints the
/// one-line summary even with `-q`, and a second run into the same folder
/// leaves only its own frames.
#[test]
fn run_summary_and_frames_of_a_rerun() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let scene = repo().join("data/scenes/rotating_spring_undamped.json");
    let run = |scene: &Path| {
        let o = run_quiet(scene, &out);
        assert!(o.status.success());
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let msg = run(&scene);
    assert!(
        msg.contains("weft run: 3 s simulated on cpu in 30000 steps (0 rejected)"),
        "{msg}"
    );
    let summary = read_json(out.join("run_summary.json"));
    assert_eq!(summary["completed"], true);
    assert_eq!(summary["steps"], 30000);
    assert_eq!(summary["rejected"], 0);
    assert_eq!(summary["frames"], 301);
    assert!(summary["newton_iterations"].as_u64().unwrap() >= 30000);
    assert_eq!(std::fs::read_dir(out.join("frames")).unwrap().count(), 301);
    // The same folder, a scene with fewer frames: the old frames are gone,
    // a file of the user's is kept.
    std::fs::write(out.join("frames/notes.txt"), "mine").unwrap();
    let short = dir.path().join("short.json");
    let mut v = read_json(&scene);
    v["duration"] = serde_json::json!(0.05);
    std::fs::write(&short, v.to_string()).unwrap();
    run(&short);
    let mut names: Vec<String> = std::fs::read_dir(out.join("frames"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 7, "{names:?}");
    assert_eq!(names.last().unwrap(), "notes.txt");
    assert_eq!(names[5], "frame_000005.obj");
}

/// `weft bench ARGS --json`, which must succeed: its records.
fn bench_json(args: &[&str]) -> serde_json::Value {
    let o = weft()
        .arg("bench")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `weft bench --model sbd` times strain-based dynamics: a 20 x 20 square
/// has 400 vertices, 722 triangles and LOD bending springs; the CUDA
/// backend is refused with a reason.
#[test]
fn bench_sbd_reports_a_timed_row() {
    let v = bench_json(&["--model", "sbd", "--nodes", "400"]);
    let r = &v[0];
    assert_eq!(r["model"], "sbd");
    assert_eq!(r["vertices"], 400);
    assert_eq!(r["triangles"], 722);
    assert!(r["bending_elements"].as_u64().unwrap() > 722);
    let ms = r["step_ms"].as_f64().unwrap();
    assert!(ms > 0.0 && ms.is_finite(), "step_ms = {ms}");
    let o = weft()
        .args(["bench", "--model", "sbd", "--backend", "cuda"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("CPU only"));
}

/// `weft bench --model stvk` times the implicit StVK + discrete-shell
/// cloth on the same square: 10 x 10 vertices have 162 triangles and one
/// hinge per interior edge (261 edges, 36 on the boundary: 225), and the
/// steps take Newton iterations.
#[test]
fn bench_stvk_reports_a_timed_row() {
    let v = bench_json(&["--model", "stvk", "--nodes", "100"]);
    let r = &v[0];
    assert_eq!(r["model"], "stvk");
    assert_eq!(r["triangles"], 162);
    assert_eq!(r["bending_elements"], 225);
    assert!(r["newton_per_step"].as_f64().unwrap() >= 1.0);
    assert!(r["step_ms"].as_f64().unwrap() > 0.0);
}

/// `weft bench --model all` times the three models in one run on the same
/// 10 x 10 vertices: stvk (162 triangles, 225 hinges), sbd (162
/// triangles) and the yarn model (no triangles; 10 yarns each way with 8
/// bending elements each: 160), the implicit two with Newton iterations.
#[test]
fn bench_all_reports_three_models_on_the_same_square() {
    let v = bench_json(&["--model", "all", "--nodes", "100"]);
    let rows = v.as_array().unwrap();
    let models: Vec<&str> = rows.iter().map(|r| r["model"].as_str().unwrap()).collect();
    assert_eq!(models, ["stvk", "sbd", "yarn"]);
    for r in rows {
        assert_eq!(r["vertices"], 100, "{r}");
        assert!(r["step_ms"].as_f64().unwrap() > 0.0, "{r}");
    }
    assert_eq!(rows[0]["bending_elements"], 225);
    assert_eq!(rows[1]["triangles"], 162);
    assert_eq!(rows[2]["triangles"], 0);
    assert_eq!(rows[2]["bending_elements"], 160);
    for r in [&rows[0], &rows[2]] {
        assert!(r["newton_per_step"].as_f64().unwrap() >= 1.0, "{r}");
    }
}

#[test]
fn bench_json_has_the_design_record_layout() {
    let v = bench_json(&["--nodes", "100"]);
    let r = &v[0];
    for key in [
        "backend",
        "nodes",
        "dofs",
        "blocks",
        "matrix_bytes",
        "peak_bytes_per_node",
        "assembly_s",
        "pcg_iteration_s",
        "spmv_gbps",
        "copy_gbps",
        "step_s",
        "newton_iterations",
        "cg_iterations",
    ] {
        assert!(r.get(key).is_some(), "missing {key}");
    }
    assert_eq!(r["nodes"], 100);
    assert_eq!(r["dofs"], 500);
    assert!(r["spmv_gbps"].as_f64().unwrap() > 0.0 && r["copy_gbps"].as_f64().unwrap() > 0.0);
    // Every figure is measured, none left null: the full step runs at this
    // size (the default --step-max-nodes is 10^4).
    for key in [
        "blocks",
        "matrix_bytes",
        "assembly_s",
        "pcg_iteration_s",
        "pcg_floor_ratio",
        "step_s",
    ] {
        let x = r[key]
            .as_f64()
            .unwrap_or_else(|| panic!("{key} = {}", r[key]));
        assert!(x > 0.0 && x.is_finite(), "{key} = {x}");
    }
    assert!(r["newton_iterations"].as_u64().unwrap() >= 1);
    assert!(r["cg_iterations"].as_u64().unwrap() >= 1);
    // The floor ratio is the PCG time over the copy time of pcg_bytes.
    let ratio = r["pcg_iteration_s"].as_f64().unwrap() * r["copy_gbps"].as_f64().unwrap() * 1e9
        / r["pcg_bytes"].as_f64().unwrap();
    assert!((ratio / r["pcg_floor_ratio"].as_f64().unwrap() - 1.0).abs() < 1e-9);
    // The step's own peak (reset before the probe) holds at least the
    // matrix and at most the process peak.
    if let Some(step_peak) = r["step_peak_bytes_per_node"].as_f64() {
        let matrix = r["matrix_bytes"].as_f64().unwrap() / 100.0;
        let process = r["peak_bytes_per_node"].as_f64().unwrap();
        assert!(
            step_peak >= matrix && step_peak <= process,
            "{step_peak} vs matrix {matrix}, process {process}"
        );
    } else {
        eprintln!("NOTE: this kernel cannot reset the peak RSS; step peak not checked");
    }
}

/// `weft doctor` never fails: it reports the driver/device and NVRTC state
/// (found or why not) on any machine, GPU or not.
#[test]
fn doctor_reports_driver_and_nvrtc() {
    let out = weft().arg("doctor").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("driver/device:"), "{text}");
    assert!(text.contains("nvrtc:"), "{text}");
}

/// `weft mannequin`: the rest pose as one OBJ, a motion as an OBJ sequence
/// (frames at 0, 1/fps, ..., duration), bad motions and rates refused with
/// what was expected, and `weft drape --body-animation` requiring `--fps`.
#[test]
fn mannequin_writes_the_body_and_its_animations() {
    let dir = tempfile::tempdir().unwrap();
    let ok = weft()
        .args([
            "mannequin",
            "--motion",
            "walk",
            "--fps",
            "20",
            "--duration",
            "0.1",
        ])
        .arg("--out")
        .arg(dir.path().join("walk"))
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let mut names: Vec<String> = std::fs::read_dir(dir.path().join("walk"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["frame_0000.obj", "frame_0001.obj", "frame_0002.obj"]
    );
    let rest = weft()
        .args(["mannequin", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(rest.status.success());
    let a = std::fs::read_to_string(dir.path().join("mannequin.obj")).unwrap();
    let b = std::fs::read_to_string(dir.path().join("walk/frame_0000.obj")).unwrap();
    let vertices = |s: &str| {
        s.lines()
            .filter(|l| !l.starts_with('#'))
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        vertices(&a),
        vertices(&b),
        "frame 0 is not the rest mannequin"
    );
    for (args, says) in [
        (
            vec!["mannequin", "--motion", "dance", "--out", "x"],
            "raise-arms, turn-torso or walk",
        ),
        (
            vec!["mannequin", "--fps", "0", "--out", "x"],
            "--fps: expected frames per second > 0",
        ),
        (vec!["drape", "p.json", "--body-animation", "walk"], "--fps"),
    ] {
        let o = weft().args(&args).current_dir(dir.path()).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(says), "{args:?}: {err}");
    }
}
