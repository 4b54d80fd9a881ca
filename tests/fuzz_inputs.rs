//! Structure-aware fuzzing of weft's inputs: the shipped scene files, the
//! shipped and shared pattern files, and OBJ bodies, mutated and fed to the
//! readers and the first stages that use them.
//!
//! Each case takes one input and applies 1-3 mutations chosen by proptest:
//! for JSON, at a random place in the document tree, deleting a key or an
//! element, replacing a value with a wrong type (`null`, a string, a bool,
//! `[]`, `{}`), a huge, tiny, zero, negative or out-of-range number,
//! duplicating an array element, or adding an unknown key; for OBJ, per line,
//! deleting or duplicating it, replacing a number with `nan`, `inf`, `1e308`,
//! `-1`, `0` or an out-of-range index, or adding a degenerate or
//! non-manifold face. Then:
//! - scenes: `Scene::from_str`, `build`, `simulation`, and for fabrics of at
//!   most 2,000 nodes two backward-Euler steps of at most 1 ms;
//! - patterns: `Pattern::from_str` and weaving at 60 mm;
//! - OBJ files: `TriMesh::from_obj` and the collider mesh
//!   (`TriangleMesh::from_obj`) with a signed-distance query.
//!
//! Every case must finish within 20 s without a panic; an accepted step
//! must leave a finite state; every error message must name the file.
//!
//! Runs [`DEFAULT_CASES`] cases per input kind with a fixed seed (CI);
//! `WEFT_FUZZ_CASES=N` runs N per kind and `WEFT_FUZZ_SEED=S` another seed
//! (longer runs on demand).

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// Cases per input kind in CI.
const DEFAULT_CASES: u32 = 48;
/// Wall-clock budget of one case.
const CASE_BUDGET: Duration = Duration::from_secs(20);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn runner() -> TestRunner {
    let cases = std::env::var("WEFT_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_CASES);
    let seed: u64 = std::env::var("WEFT_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261125);
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(
        Config {
            cases,
            max_shrink_iters: 32,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &key),
    )
}

/// One mutation: where (`at`, reduced modulo the number of places), what
/// (`op`), and a value selector.
type Mutation = (u64, u8, u64);

fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    prop::collection::vec((any::<u64>(), 0u8..16, any::<u64>()), 1..4)
}

/// JSON pointers of every value below the root, in document order.
fn places(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                places(c, p, out);
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                places(c, p, out);
            }
        }
        _ => {}
    }
}

fn mutate_json(doc: &mut Value, (at, op, val): Mutation) {
    let mut all = Vec::new();
    places(doc, String::new(), &mut all);
    if all.is_empty() {
        return;
    }
    let place = &all[(at % all.len() as u64) as usize];
    let (parent, last) = place.rsplit_once('/').expect("a pointer below the root");
    let numbers = [1e308, -1e308, 0.0, -1.0, 1e12, 1e-300, -1e-9, 9999.0];
    let replacement = match op {
        1 => Some(Value::Null),
        2 => Some(Value::String("x".into())),
        3 => Some(Value::Bool(true)),
        4..=7 => Some(serde_json::json!(
            numbers[(val % numbers.len() as u64) as usize]
        )),
        8 => Some(serde_json::json!(9999)),
        9 => Some(serde_json::json!([])),
        10 => Some(serde_json::json!({})),
        11 => Some(serde_json::json!(-1)),
        _ => None,
    };
    if let Some(r) = replacement {
        if let Some(t) = doc.pointer_mut(place) {
            *t = r;
        }
        return;
    }
    let Some(p) = doc.pointer_mut(parent) else {
        return;
    };
    match (op, p) {
        (0 | 12, Value::Object(m)) => {
            m.remove(&last.replace("~1", "/").replace("~0", "~"));
        }
        (0 | 12, Value::Array(a)) => {
            if let Some(i) = last.parse::<usize>().ok().filter(|&i| i < a.len()) {
                a.remove(i);
            }
        }
        (13, Value::Array(a)) => {
            if let Some(i) = last.parse::<usize>().ok().filter(|&i| i < a.len()) {
                let c = a[i].clone();
                a.insert(i, c);
            }
        }
        (_, Value::Object(m)) => {
            m.insert("unknown_fuzz_key".into(), serde_json::json!(1));
        }
        (_, Value::Array(a)) => a.push(serde_json::json!(val as f64)),
        _ => {}
    }
}

fn mutate_obj(text: &str, muts: &[Mutation]) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    for &(at, op, val) in muts {
        if lines.is_empty() {
            break;
        }
        let i = (at % lines.len() as u64) as usize;
        let tokens = ["nan", "inf", "1e308", "-1", "0", "999999", "-1e-300", "x"];
        match op % 6 {
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            2 | 3 => {
                let mut parts: Vec<String> =
                    lines[i].split_whitespace().map(String::from).collect();
                if parts.len() > 1 {
                    let k = 1 + (val as usize % (parts.len() - 1));
                    parts[k] = tokens[(val / 7 % tokens.len() as u64) as usize].into();
                    lines[i] = parts.join(" ");
                }
            }
            4 => lines.push("f 1 1 2".into()),
            _ => lines.push("f 1 2 3".into()),
        }
    }
    lines.join("\n") + "\n"
}

/// Runs `work` on a thread; fails the case if it takes longer than the
/// budget (a hang) or panics, with `what` naming the input.
fn within_budget(
    what: String,
    work: impl FnOnce() -> Result<(), String> + Send + 'static,
) -> Result<(), TestCaseError> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
        let _ = tx.send(r);
    });
    match rx.recv_timeout(CASE_BUDGET) {
        Ok(Ok(Ok(()))) => Ok(()),
        Ok(Ok(Err(m))) => Err(TestCaseError::fail(format!("{m}\ninput: {what}"))),
        Ok(Err(_)) => Err(TestCaseError::fail(format!("panicked\ninput: {what}"))),
        Err(_) => Err(TestCaseError::fail(format!(
            "did not finish within {CASE_BUDGET:?}\ninput: {what}"
        ))),
    }
}

fn names_file(msg: &str, file: &str) -> Result<(), String> {
    if msg.contains(file) {
        Ok(())
    } else {
        Err(format!("the error does not name the file {file}: {msg}"))
    }
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The JSON documents of `files`, by file name (unreadable ones skipped).
fn load_json(files: Vec<PathBuf>) -> Vec<(String, Value)> {
    files
        .into_iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            let v = serde_json::from_str(&std::fs::read_to_string(&p).ok()?).ok()?;
            Some((name, v))
        })
        .collect()
}

/// Input `k` of `inputs` with `muts` applied: its text and the file name
/// the readers are given (`fuzz_NAME`).
fn mutated(inputs: &[(String, Value)], k: usize, muts: &[Mutation]) -> (String, String) {
    let (name, doc) = &inputs[k];
    let mut doc = doc.clone();
    for &m in muts {
        mutate_json(&mut doc, m);
    }
    (doc.to_string(), format!("fuzz_{name}"))
}

#[test]
fn mutated_scene_files_are_refused_or_run() {
    let inputs = load_json(json_files(&repo().join("data/scenes")));
    assert!(inputs.len() >= 10);
    let counter = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    runner()
        .run(&(0..inputs.len(), mutations()), |(k, muts)| {
            let (text, file) = mutated(&inputs, k, &muts);
            let name = &inputs[k].0;
            let refusals = counter.clone();
            within_budget(format!("{name} {muts:?}"), move || {
                let scene = match weft_io::Scene::from_str(&text, &file) {
                    Ok(s) => s,
                    Err(e) => {
                        refusals.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        return names_file(&e.to_string(), &file);
                    }
                };
                let built = match scene.build() {
                    Ok(b) => b,
                    Err(e) => {
                        refusals.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        return names_file(&e.to_string(), &file);
                    }
                };
                let nodes = built.fabric.node_count();
                let h = built.time_step.dt.min(1e-3);
                let mut sim = match built.simulation(false) {
                    Ok(s) => s,
                    Err(e) => {
                        refusals.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        return names_file(&e.to_string(), &file);
                    }
                };
                if nodes <= 2000 && h > 0.0 {
                    for _ in 0..2 {
                        if sim.try_step(h).is_ok()
                            && !sim.q.iter().chain(&sim.v).all(|x| x.is_finite())
                        {
                            return Err("an accepted step left a non-finite state".into());
                        }
                    }
                }
                Ok(())
            })
        })
        .unwrap();
    eprintln!(
        "scenes: {} refused with an error naming the file",
        counter.load(std::sync::atomic::Ordering::Relaxed)
    );
}

#[test]
fn mutated_pattern_files_are_refused_or_woven() {
    let mut files = json_files(&repo().join("data/patterns"));
    files.extend(json_files(&repo().join("../shared/data/patterns")));
    let inputs = load_json(files);
    assert!(!inputs.is_empty());
    runner()
        .run(&(0..inputs.len(), mutations()), |(k, muts)| {
            let (text, file) = mutated(&inputs, k, &muts);
            let name = &inputs[k].0;
            within_budget(format!("{name} {muts:?}"), move || {
                let p = match weft_pattern::Pattern::from_str(&text, &file) {
                    Ok(p) => p,
                    Err(e) => return names_file(&e.to_string(), &file),
                };
                let mut o = weft_pattern::WeaveOptions::new(0.06);
                o.narrow_panel_halvings = 6;
                match weft_pattern::weave_garment(&p, &o) {
                    Ok(g) => {
                        if g.fabric
                            .initial
                            .x
                            .iter()
                            .all(|x| x.iter().all(|c| c.is_finite()))
                        {
                            Ok(())
                        } else {
                            Err("a woven garment with non-finite positions".into())
                        }
                    }
                    Err(e) => names_file(&e.to_string(), &file),
                }
            })
        })
        .unwrap();
}

/// A closed octahedron (8 faces) as OBJ text.
fn octahedron() -> String {
    let mut s = String::from("# octahedron\n");
    for v in [
        [0.1, 0.0, 0.0],
        [-0.1, 0.0, 0.0],
        [0.0, 0.1, 0.0],
        [0.0, -0.1, 0.0],
        [0.0, 0.0, 0.1],
        [0.0, 0.0, -0.1],
    ] {
        s += &format!("v {} {} {}\n", v[0], v[1], v[2]);
    }
    for f in [
        [1, 3, 5],
        [3, 2, 5],
        [2, 4, 5],
        [4, 1, 5],
        [3, 1, 6],
        [2, 3, 6],
        [4, 2, 6],
        [1, 4, 6],
    ] {
        s += &format!("f {} {} {}\n", f[0], f[1], f[2]);
    }
    s
}

#[test]
fn mutated_obj_bodies_are_refused_or_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let base = octahedron();
    let dir_path = dir.path().to_path_buf();
    let case = std::sync::atomic::AtomicUsize::new(0);
    runner()
        .run(&mutations(), |muts| {
            let text = mutate_obj(&base, &muts);
            let n = case.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let path = dir_path.join(format!("fuzz_body_{n}.obj"));
            std::fs::write(&path, &text).unwrap();
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            within_budget(format!("{muts:?}\n{text}"), move || {
                match weft_io::TriMesh::from_obj(&path) {
                    // Loaded as written (non-finite coordinates included):
                    // the collider below must refuse what it cannot use.
                    Ok(_) => {}
                    Err(e) => names_file(&e.to_string(), &file)?,
                }
                match weft::solver::collide::TriangleMesh::from_obj(
                    &path,
                    1.0,
                    nalgebra::Vector3::zeros(),
                ) {
                    Ok(mesh) => {
                        let (d, _) = mesh.distance(&nalgebra::Vector3::new(0.0, 0.3, 0.0));
                        if !d.is_finite() {
                            return Err(format!("accepted mesh gives distance {d}"));
                        }
                        Ok(())
                    }
                    Err(e) => names_file(&e.to_string(), &file),
                }
            })
        })
        .unwrap();
}
