//! [`GarmentError`]: what can go wrong in the garment pipeline, each with
//! the file, option or phase it concerns.

use std::path::PathBuf;

/// An error of the garment pipeline.
#[derive(Debug, thiserror::Error)]
pub enum GarmentError {
    /// The `sbd` model's triangle mesh or options (names the panel or
    /// option).
    #[error("sbd drape: {0}")]
    Shell(String),
    /// An option out of range ([`crate::DrapeOptions::validate`]).
    #[error("option {option}: expected {expected}, got {found}")]
    Option {
        /// The option's name (as in the serde struct, e.g. `relax.max_time`).
        option: String,
        /// What was expected.
        expected: String,
        /// What was found.
        found: String,
    },
    /// A pattern file that cannot be read, woven or sewn (names the file,
    /// the JSON path and what was expected).
    #[error(transparent)]
    Pattern(#[from] weft_pattern::PatternError),
    /// An attachment label that no edge of the pattern carries.
    #[error("{file}: no edge is labelled {label:?} (attach); its edge labels are: {known}")]
    UnknownLabel {
        /// The pattern file.
        file: String,
        /// The label asked for.
        label: String,
        /// The labels the pattern has, comma-separated (or `none`).
        known: String,
    },
    /// A body mesh that cannot be read or is not a closed surface.
    #[error("body {body}: {message}")]
    Body {
        /// The body (file name or `weft mannequin`).
        body: String,
        /// What is wrong with it.
        message: String,
    },
    /// The solver failed in a phase; `out` holds the last good state when
    /// the drape was writing to a directory.
    #[error(
        "{phase} of level {level} ({spacing_mm} mm) failed at t = {t:.4} s: {message}{}",
        out.as_ref().map(|o| format!("\n  final_state.json and preview.png in {} show the last good state", o.display())).unwrap_or_default()
    )]
    Solver {
        /// `sewing`, `draping` or `cusick`.
        phase: &'static str,
        /// Level index (0 = coarsest).
        level: usize,
        /// The level's spacing (mm).
        spacing_mm: f64,
        /// Simulated time (s).
        t: f64,
        /// The solver's message.
        message: String,
        /// Output directory with the last good state, if any.
        out: Option<PathBuf>,
    },
    /// The garment slid down the body and [`crate::DrapeOptions::strict`] is
    /// set (all outputs are written first).
    #[error(
        "the garment slid off the body: {part}'s highest point ended {drop_m:.3} m below where it was sewn (limit {limit_m} m), its centroid {centroid_drop_m:.3} m"
    )]
    SlidOff {
        /// What slid: `the garment` or `panel 'NAME'`.
        part: String,
        /// Drop of the part's highest point (m).
        drop_m: f64,
        /// The limit (m).
        limit_m: f64,
        /// Drop of the part's centroid (m).
        centroid_drop_m: f64,
    },
    /// Writing an output failed (names the file).
    #[error(transparent)]
    Output(#[from] weft_io::OutputError),
    /// Exporting yarn curves failed (names the file).
    #[error(transparent)]
    Export(#[from] weft_io::ExportError),
    /// Building yarn curves failed.
    #[error(transparent)]
    Curves(#[from] weft_io::CurveError),
    /// Creating the output directory failed.
    #[error("cannot create {path}: {source}")]
    Io {
        /// The directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}
