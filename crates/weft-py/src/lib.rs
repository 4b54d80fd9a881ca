//! # weft-py
//!
//! The native part of the Python package `weft` (PyO3, abi3): thin shells
//! over the library's [`weft::run::run_scene`] and
//! [`weft_garment::drape_to_dir`]. Options come in as the JSON of the
//! library's options structs ([`weft::run::RunOptions`],
//! [`weft_garment::DrapeOptions`]; an unknown key is an error naming it),
//! results go out as JSON and flat float lists that the pure-Python layer
//! (`python/weft/__init__.py`) turns into numpy arrays. Every library error
//! is raised as `weft.WeftError` with the library's message (which names
//! the file and the place in it).

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use std::path::PathBuf;

create_exception!(
    _native,
    WeftError,
    PyException,
    "A weft error: a bad scene, pattern or option (the message names the file and the place), or a failed simulation."
);

fn err(e: impl std::fmt::Display) -> PyErr {
    WeftError::new_err(e.to_string())
}

/// Runs the scene file `scene` on the CPU, writing its outputs
/// (`energy.csv`, `final_state.json`, frames, `run_summary.json`) into
/// `out`; `options` is the JSON of `weft::run::RunOptions`. Returns the
/// run summary as JSON. Raises `WeftError`.
#[pyfunction]
fn run(py: Python<'_>, scene: PathBuf, out: PathBuf, options: &str) -> PyResult<String> {
    let opts: weft::run::RunOptions =
        serde_json::from_str(options).map_err(|e| err(format!("run options: {e}")))?;
    let summary = py
        .detach(|| weft::run::run_scene(&scene, &out, &opts, &mut ()))
        .map_err(err)?;
    serde_json::to_string(&summary).map_err(err)
}

/// Weaves, sews and drapes the pattern file `pattern`; `options` is the
/// JSON of `weft_garment::DrapeOptions`. With `out`, the outputs are
/// written there as `weft drape` writes them. Returns `(summary JSON,
/// positions, curves)`: the final node positions as a flat list
/// `[x0, y0, z0, x1, ...]` (m), and per yarn `(flat point list, radius)`
/// of its smoothed curve (m). Raises `WeftError`.
#[pyfunction]
#[pyo3(signature = (pattern, options, out=None))]
#[allow(clippy::type_complexity)]
fn drape(
    py: Python<'_>,
    pattern: PathBuf,
    options: &str,
    out: Option<PathBuf>,
) -> PyResult<(String, Vec<f64>, Vec<(Vec<f64>, f64)>)> {
    let opts: weft_garment::DrapeOptions =
        serde_json::from_str(options).map_err(|e| err(format!("drape options: {e}")))?;
    let d = py
        .detach(|| match &out {
            Some(dir) => weft_garment::drape_to_dir(&pattern, &opts, dir, &mut ()),
            None => weft_garment::drape(&pattern, &opts, &mut ()),
        })
        .map_err(err)?;
    let summary = serde_json::to_string(&d.summary).map_err(err)?;
    let positions = d.state.x.iter().flat_map(|p| [p.x, p.y, p.z]).collect();
    let curves = weft_io::YarnCurves::from_state(d.fabric(), &d.state, 4)
        .map_err(err)?
        .curves
        .into_iter()
        .map(|c| (c.points.into_iter().flatten().collect(), c.radius))
        .collect();
    Ok((summary, positions, curves))
}

/// The native module `weft._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("WeftError", m.py().get_type::<WeftError>())?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(drape, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
