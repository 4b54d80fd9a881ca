//! `--backend auto|cpu|cuda` of `weft run`, `weft drape` and `weft bench`
//! without a GPU: `cuda` fails with a message naming why, `auto` falls back
//! to the CPU with a one-line reason and writes the same outputs as `cpu`,
//! and a scene with a feature the CUDA backend lacks is refused by name.
//! Tests that assume no device skip with a message where one is present.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn weft() -> Command {
    Command::new(env!("CARGO_BIN_EXE_weft"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scene(name: &str) -> PathBuf {
    repo().join("data/scenes").join(name)
}

/// `true` (after printing why) when a usable CUDA device is present, so the
/// no-device expectations do not apply.
fn device_present(test: &str) -> bool {
    match weft_cuda::Device::detect() {
        Ok(d) => {
            eprintln!("SKIPPED: {test}: a CUDA device is present ({})", d.name);
            true
        }
        Err(_) => false,
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn run(scene: &Path, out: &Path, backend: &str) -> Output {
    weft()
        .args(["run", "-q", "--backend", backend])
        .arg(scene)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

/// `weft run --backend cuda` without a device exits non-zero and says that
/// no usable CUDA device was found, and why (the driver's reason), before
/// writing any output.
#[test]
fn run_backend_cuda_without_device_fails_clearly() {
    if device_present("run --backend cuda without a device") {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let o = run(&scene("free_fall_patch.json"), out.path(), "cuda");
    let err = stderr(&o);
    assert!(!o.status.success(), "must fail: {err}");
    assert!(
        err.contains("weft run --backend cuda: no usable CUDA device: "),
        "{err}"
    );
    assert!(
        err.contains("libcuda") || err.contains("driver") || err.contains("device"),
        "the reason: {err}"
    );
    assert!(!out.path().join("energy.csv").exists());
}

/// `weft run --backend auto` without a device runs on the CPU, prints one
/// line saying so and why, and writes energy.csv and final_state.json
/// identical to `--backend cpu` (6 rows for 0.05 s at 0.01 s).
#[test]
fn run_backend_auto_falls_back_to_cpu() {
    if device_present("run --backend auto fallback") {
        return;
    }
    let (a, c) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let oa = run(&scene("free_fall_patch.json"), a.path(), "auto");
    let oc = run(&scene("free_fall_patch.json"), c.path(), "cpu");
    assert!(oa.status.success(), "{}", stderr(&oa));
    assert!(oc.status.success(), "{}", stderr(&oc));
    let err = stderr(&oa);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("backend: cpu")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("auto: no usable CUDA device"), "{err}");
    let read = |d: &Path, f: &str| std::fs::read_to_string(d.join(f)).unwrap();
    let csv = read(a.path(), "energy.csv");
    assert_eq!(csv.lines().count(), 7, "header + 6 frames");
    assert_eq!(csv, read(c.path(), "energy.csv"));
    assert_eq!(
        read(a.path(), "final_state.json"),
        read(c.path(), "final_state.json")
    );
}

/// A scene with a feature the CUDA backend lacks (the sparse Cholesky
/// preconditioner: `free_fall_patch.json` with `integrator.preconditioner`
/// set to "cholesky") is refused by name with `cuda` (device or not), and
/// runs on the CPU with `auto`, saying why.
#[test]
fn unsupported_scene_is_refused_by_name() {
    let out = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(scene("free_fall_patch.json")).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let obj = json.as_object_mut().unwrap();
    let integ = obj
        .entry("integrator")
        .or_insert_with(|| serde_json::json!({}));
    integ["preconditioner"] = serde_json::json!("cholesky");
    let sc = out.path().join("cholesky_patch.json");
    std::fs::write(&sc, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    let o = run(&sc, out.path(), "cuda");
    let err = stderr(&o);
    assert!(!o.status.success());
    assert!(
        err.contains(
            "the CUDA backend does not support this scene: integrator.preconditioner is \"cholesky\""
        ),
        "{err}"
    );
    // auto: the CPU, with the reason on one line (a short run suffices).
    let o = weft()
        .args(["run", "-q", "--backend", "auto", "--one-iteration"])
        .arg(&sc)
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(
            "backend: cpu (auto: the scene needs the CPU: integrator.preconditioner is \"cholesky\""
        ),
        "{err}"
    );
}

/// `weft drape --backend cuda` is refused naming why (the phases), with or
/// without a device.
#[test]
fn drape_backend_cuda_is_refused_by_name() {
    let out = tempfile::tempdir().unwrap();
    let o = weft()
        .args(["drape", "-q", "--spacing", "80", "--backend", "cuda"])
        .arg(repo().join("data/patterns/a_line_skirt.json"))
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(!o.status.success());
    assert!(
        err.contains(
            "weft drape --backend cuda: the drape's phases and levels change gravity, drag, colliders and the fabric"
        ),
        "{err}"
    );
}

/// `weft bench --backend cuda` without a device exits non-zero saying why;
/// `--backend auto` runs the CPU rows and says why.
#[test]
fn bench_backend_cuda_without_device_fails_clearly() {
    if device_present("bench --backend cuda without a device") {
        return;
    }
    let o = weft()
        .args(["bench", "--backend", "cuda", "--nodes", "100"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(!o.status.success());
    assert!(
        err.contains("weft bench --backend cuda: no usable CUDA device: "),
        "{err}"
    );
    let o = weft()
        .args([
            "bench",
            "--backend",
            "auto",
            "--json",
            "--nodes",
            "100",
            "--step-max-nodes",
            "0",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("backend: cpu (auto: no usable CUDA device"));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["backend"], "cpu");
    assert_eq!(v[0]["nodes"], 100);
}

/// `--help` of run, drape and bench documents the three choices.
#[test]
fn help_documents_backend() {
    for cmd in ["run", "drape", "bench"] {
        let o = weft().args([cmd, "--help"]).output().unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains("--backend <BACKEND>"), "{cmd}: {text}");
        for v in ["auto", "cpu", "cuda"] {
            assert!(text.contains(v), "{cmd} --help lacks {v}");
        }
    }
}
