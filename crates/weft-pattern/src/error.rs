//! Errors of pattern reading, weaving and sewing. Every variant that comes
//! from a file names the file, the JSON path of the offending value (e.g.
//! `pattern.panels.left_ftorso.edges[3]`) and what was expected.

use thiserror::Error;

/// A problem with a pattern file or with the weaving options.
#[derive(Debug, Error)]
pub enum PatternError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Io {
        /// File name.
        file: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The text is not JSON.
    #[error("{file}: line {line}, column {column}: malformed JSON: {message}")]
    Json {
        /// File name.
        file: String,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the JSON parser expected.
        message: String,
    },
    /// A value is missing or has the wrong type or range.
    #[error("{file}: {path}: expected {expected}, found {found}")]
    Schema {
        /// File name.
        file: String,
        /// JSON path of the value (or of the object that lacks it).
        path: String,
        /// What was expected.
        expected: String,
        /// What was found.
        found: String,
    },
    /// A `curvature.type` other than `quadratic`, `cubic` or `circle`.
    #[error(
        "{file}: {path}: unknown curvature type '{found}'; expected \"quadratic\", \"cubic\" or \"circle\""
    )]
    UnknownCurvature {
        /// File name.
        file: String,
        /// JSON path of the `type` value.
        path: String,
        /// The type given.
        found: String,
    },
    /// An edge does not start where the previous edge of the loop ends.
    #[error(
        "{file}: {path}: edge loop is not closed: expected the edge to start at vertex {expected} (where the previous edge ends), found vertex {found}"
    )]
    OpenLoop {
        /// File name.
        file: String,
        /// JSON path of the edge that does not connect.
        path: String,
        /// The vertex it should start at.
        expected: usize,
        /// The vertex it starts at.
        found: usize,
    },
    /// An edge whose end coincides with its start (no direction, no length).
    #[error(
        "{file}: {path}: zero-length edge (from vertex {start} to vertex {end}, length {length:e} m); expected distinct endpoints"
    )]
    ZeroLengthEdge {
        /// File name.
        file: String,
        /// JSON path of the edge.
        path: String,
        /// Start vertex.
        start: usize,
        /// End vertex.
        end: usize,
        /// Its length (m).
        length: f64,
    },
    /// Two edges of a panel outline cross (or overlap).
    #[error(
        "{file}: {path}: panel outline intersects itself: edges[{first}] and edges[{second}] cross near ({x:.4}, {y:.4}) m; expected a simple closed outline"
    )]
    SelfIntersecting {
        /// File name.
        file: String,
        /// JSON path of the panel.
        path: String,
        /// One crossing edge.
        first: usize,
        /// The other.
        second: usize,
        /// Panel-local x of the crossing (m).
        x: f64,
        /// Panel-local y of the crossing (m).
        y: f64,
    },
    /// A stitch names a panel that does not exist.
    #[error(
        "{file}: {path}: stitch names panel '{panel}', which is not in pattern.panels (known: {known})"
    )]
    StitchMissingPanel {
        /// File name.
        file: String,
        /// JSON path of the stitch side.
        path: String,
        /// The name given.
        panel: String,
        /// Defined panel names, comma separated.
        known: String,
    },
    /// A stitch names an edge index past the panel's edges.
    #[error(
        "{file}: {path}: stitch names edge {edge} of panel '{panel}', which has {count} edges (expected 0..{count})"
    )]
    StitchMissingEdge {
        /// File name.
        file: String,
        /// JSON path of the stitch side.
        path: String,
        /// Panel name.
        panel: String,
        /// Edge index given.
        edge: usize,
        /// Edges of the panel.
        count: usize,
    },
    /// One edge appears in two stitches (or twice in one).
    #[error(
        "{file}: {path}: edge {edge} of panel '{panel}' is already stitched at {first}; expected each edge in at most one stitch"
    )]
    EdgeStitchedTwice {
        /// File name.
        file: String,
        /// JSON path of the second use.
        path: String,
        /// Panel name.
        panel: String,
        /// Edge index.
        edge: usize,
        /// JSON path of the first use.
        first: String,
    },
    /// A weaving option is out of range.
    #[error("weave option {option}: expected {expected}, found {found}")]
    Option {
        /// Option name (e.g. `spacing`).
        option: String,
        /// What was expected.
        expected: String,
        /// What was given.
        found: String,
    },
    /// A panel's outline is wider or taller than
    /// [`crate::garment::MAX_PANEL_SIZE`].
    #[error(
        "{file}: {path}: the panel's outline spans up to {size_m:.3e} m; expected at most {limit_m} m (check the vertices and `units_in_meter`)"
    )]
    PanelTooLarge {
        /// File name.
        file: String,
        /// JSON path of the panel.
        path: String,
        /// Its largest extent (m).
        size_m: f64,
        /// The limit (m).
        limit_m: f64,
    },
    /// A panel produced no yarn at the requested spacing.
    #[error(
        "{file}: {path}: no yarn crossing fits in the panel at spacing {spacing:?} m; expected a spacing smaller than the panel"
    )]
    EmptyPanel {
        /// File name.
        file: String,
        /// JSON path of the panel.
        path: String,
        /// `[warp, weft]` spacing (m).
        spacing: [f64; 2],
    },
    /// The woven garment failed fabric validation (weft-core).
    #[error("{file}: building the fabric: {source}")]
    Fabric {
        /// File name.
        file: String,
        /// The fabric error.
        source: weft_core::ModelError,
    },
}
