//! Shared by the validation tests: the shipped scene files they run.
//!
//! Each validation experiment is a scene file under `data/scenes/`
//! (DESIGN §8). A test defines its scene by formulas (the text the file
//! must hold), checks the shipped file against them with
//! [`check_scene_file`], and simulates the file itself through
//! [`built_scene`], the way `weft run` does.

#![allow(dead_code)] // each test binary uses its own subset

use std::path::{Path, PathBuf};
use weft_io::{BuiltScene, Scene};

/// `data/scenes/<name>`.
pub fn scene_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/scenes")
        .join(name)
}

/// Loads and builds `data/scenes/<name>` (panics with the scene error).
pub fn built_scene(name: &str) -> BuiltScene {
    let scene = Scene::from_path(scene_path(name))
        .unwrap_or_else(|e| panic!("{e} (WEFT_BLESS_SCENES=1 regenerates the validation scenes)"));
    scene.build().unwrap_or_else(|e| panic!("{e}"))
}

/// Asserts that `data/scenes/<name>` holds the JSON document `text` (the
/// test's definition of the scene), numbers to a relative 1e-12. With the
/// environment variable `WEFT_BLESS_SCENES` set it first writes `text` to
/// the file (after a deliberate change of the scene's definition).
pub fn check_scene_file(name: &str, text: &str) {
    let path = scene_path(name);
    if std::env::var_os("WEFT_BLESS_SCENES").is_some() {
        std::fs::write(&path, text).unwrap();
    }
    let shipped = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (WEFT_BLESS_SCENES=1 writes it)", path.display()));
    let expected: serde_json::Value = serde_json::from_str(text).unwrap();
    let got: serde_json::Value = serde_json::from_str(&shipped).unwrap();
    if let Err(e) = same_json(&got, &expected, name) {
        panic!("{e} (WEFT_BLESS_SCENES=1 regenerates the file)");
    }
}

/// Numbers in two JSON documents agree to a relative 1e-12 (the mode
/// shapes go through `sin`/`cosh`, whose last bit may differ between C
/// libraries); everything else is equal.
fn same_json(a: &serde_json::Value, b: &serde_json::Value, path: &str) -> Result<(), String> {
    use serde_json::Value as V;
    match (a, b) {
        (V::Number(x), V::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            if (x - y).abs() <= 1e-12 * x.abs().max(y.abs()) {
                Ok(())
            } else {
                Err(format!("{path}: {x} vs {y}"))
            }
        }
        (V::Array(x), V::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .try_for_each(|(i, (x, y))| same_json(x, y, &format!("{path}[{i}]"))),
        (V::Object(x), V::Object(y)) if x.len() == y.len() => x.iter().try_for_each(|(k, xv)| {
            let yv = y.get(k).ok_or_else(|| format!("{path}.{k} missing"))?;
            same_json(xv, yv, &format!("{path}.{k}"))
        }),
        _ if a == b => Ok(()),
        _ => Err(format!("{path}: {a} vs {b}")),
    }
}
