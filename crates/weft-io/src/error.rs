//! Errors of scene loading and building.

use thiserror::Error;
use weft_core::ModelError;

/// A scene file that cannot be used. Every variant names the file; all but
/// [`SceneError::Io`] and [`SceneError::Syntax`] also name the JSON path of
/// the offending value (`objects[1].yarn_counts`, `materials.cotton.radius`,
/// `time_step`) and say what was expected. The `Display` form is
/// `FILE: PATH: MESSAGE`.
#[derive(Debug, Error)]
pub enum SceneError {
    /// The file could not be read.
    #[error("{file}: cannot read the scene file: {source}")]
    Io {
        /// The scene file as given.
        file: String,
        /// The operating-system error.
        source: std::io::Error,
    },
    /// The text is not JSON.
    #[error("{file}: line {line}, column {column}: {message}")]
    Syntax {
        /// The scene file.
        file: String,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// What the JSON parser expected.
        message: String,
    },
    /// A value of the wrong type or shape, an unknown or missing key, or a
    /// value out of range.
    #[error("{file}: {path}: {message}")]
    Invalid {
        /// The scene file.
        file: String,
        /// JSON path of the value, e.g. `objects[1].yarn_counts`
        /// (`(top level)` for the document itself).
        path: String,
        /// What is wrong and what was expected.
        message: String,
    },
    /// weft-core rejected an object while building the fabric (e.g.
    /// coincident consecutive nodes, a zero-mass node). Object numbers in
    /// the message are scene object numbers.
    #[error("{file}: {path}: {error}")]
    Model {
        /// The scene file.
        file: String,
        /// JSON path of the object (and field where known), e.g. `objects[2]`.
        path: String,
        /// The model error, with object numbers mapped to scene numbering.
        error: ModelError,
    },
    /// The solver rejected a collider or the self-collision settings while
    /// the simulation was set up (e.g. an unreadable or malformed OBJ mesh).
    #[error("{file}: {path}: {error}")]
    Collider {
        /// The scene file.
        file: String,
        /// JSON path of the object, e.g. `objects[1]`, or `self_collision`.
        path: String,
        /// The solver's error (names the shape, file or parameter); boxed
        /// to keep `SceneError` small.
        error: Box<weft_solver::collide::CollideError>,
    },
}

impl SceneError {
    /// The scene file the error is about.
    pub fn file(&self) -> &str {
        match self {
            SceneError::Io { file, .. }
            | SceneError::Syntax { file, .. }
            | SceneError::Invalid { file, .. }
            | SceneError::Model { file, .. }
            | SceneError::Collider { file, .. } => file,
        }
    }

    /// The JSON path of the offending value, where there is one.
    pub fn path(&self) -> Option<&str> {
        match self {
            SceneError::Invalid { path, .. }
            | SceneError::Model { path, .. }
            | SceneError::Collider { path, .. } => Some(path),
            SceneError::Io { .. } | SceneError::Syntax { .. } => None,
        }
    }
}
