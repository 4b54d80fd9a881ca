//! Batch runs (issue 21, item 2) as a library: a manifest with a sweep
//! over gravity, split in two shards, gives one folder per job and a merged
//! index; the sweep's kinetic energies scale with g² (free fall: ½ M (g t)²);
//! a rerun skips finished jobs; a job left `running` with a checkpoint is
//! resumed and ends bit for bit as it did; a bad manifest names the JSON
//! path and a bad shard is refused.

use std::path::{Path, PathBuf};
use weft::batch::{BatchError, Index, parse_shard, run_batch};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn manifest(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("manifest.json");
    std::fs::write(&path, body).unwrap();
    path
}

fn index(out: &Path) -> Index {
    serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap()
}

#[test]
fn shards_sweeps_index_skip_and_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = repo().join("data/scenes/free_fall_patch.json");
    let m = manifest(
        tmp.path(),
        &format!(
            r#"{{"checkpoint_every_s": 0, "jobs": [
                {{"kind": "run", "name": "fall", "scene": "{}",
                  "sweep": {{"gravity": [[0, -9.81, 0], [0, -4.905, 0], [0, -2.4525, 0]]}}}}]}}"#,
            scene.display()
        ),
    );
    let out = tmp.path().join("out");
    let mut seen = Vec::new();
    let a = run_batch(&m, &out, (0, 2), &mut |s| seen.push(s.name.clone())).unwrap();
    assert_eq!((a.jobs, a.in_shard, a.done), (3, 2, 2));
    // Before shard 1 runs, its job is pending in the index.
    let i = index(&out);
    assert_eq!(i.jobs[1].status, "pending");
    let b = run_batch(&m, &out, (1, 2), &mut |s| seen.push(s.name.clone())).unwrap();
    assert_eq!((b.in_shard, b.done), (1, 1));
    let i = index(&out);
    assert_eq!(i.jobs.len(), 3);
    assert!(i.jobs.iter().all(|j| j.status == "done"), "{:?}", i.jobs);
    assert!(seen[0].starts_with("fall-gravity="));
    // Kinetic energy ½ M (g t)²: each halving of g quarters it.
    let ke: Vec<f64> = i
        .jobs
        .iter()
        .map(|j| j.figures["kinetic_energy_j"].as_f64().unwrap())
        .collect();
    for k in 1..3 {
        let r = ke[k] / ke[k - 1];
        assert!((r - 0.25).abs() < 1e-3, "energy ratio {r}");
    }
    for j in &i.jobs {
        assert!(out.join(&j.dir).join("final_state.json").is_file());
        assert!(out.join(&j.dir).join("scene.json").is_file());
    }

    // A rerun skips them all.
    let again = run_batch(&m, &out, (0, 1), &mut |_| {}).unwrap();
    assert_eq!((again.skipped, again.done), (3, 0));

    // A job left running (killed after a checkpoint) is resumed, and ends
    // where it ended before, bit for bit.
    let dir = out.join(&i.jobs[0].dir);
    let before = std::fs::read(dir.join("final_state.json")).unwrap();
    assert!(dir.join("checkpoint.json").is_file());
    let status = dir.join("status.json");
    let text = std::fs::read_to_string(&status)
        .unwrap()
        .replace("\"done\"", "\"running\"");
    std::fs::write(&status, text).unwrap();
    std::fs::remove_file(dir.join("final_state.json")).unwrap();
    let r = run_batch(&m, &out, (0, 1), &mut |_| {}).unwrap();
    assert_eq!((r.resumed, r.done, r.skipped), (1, 1, 2));
    assert!(std::fs::read(dir.join("final_state.json")).unwrap() == before);
}

#[test]
fn bad_manifests_and_shards_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let m = manifest(
        tmp.path(),
        r#"{"jobs": [{"kind": "drape", "name": "x", "pattern": "p.json", "options": {"spacing_mm": "ten"}}]}"#,
    );
    let e = run_batch(&m, &tmp.path().join("o"), (0, 1), &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("manifest.json") && e.contains("jobs[0].options.spacing_mm"),
        "{e}"
    );
    let m = manifest(tmp.path(), r#"{"jobs": [{"kind": "render", "name": "x"}]}"#);
    let e = run_batch(&m, &tmp.path().join("o"), (0, 1), &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("jobs[0]") && e.contains("render"), "{e}");
    for bad in ["2/2", "1", "a/b", "0/0"] {
        assert!(
            matches!(parse_shard(bad), Err(BatchError::Shard(_))),
            "{bad}"
        );
    }
    assert_eq!(parse_shard("3/4").unwrap(), (3, 4));
}
