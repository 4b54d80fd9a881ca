//! Errors of the collision module.

use std::path::PathBuf;

/// What can go wrong when building colliders or loading collider meshes.
///
/// Every variant names the offending input (the file, the keyframe, the
/// parameter) and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum CollideError {
    /// A shape parameter is out of range, e.g. a zero plane normal or a
    /// non-positive radius.
    #[error("invalid {shape}: {reason}")]
    InvalidShape {
        /// Which shape (`plane`, `sphere`, `capsule`, `triangle mesh`).
        shape: &'static str,
        /// What is wrong and what was expected.
        reason: String,
    },
    /// The OBJ file could not be opened or read.
    #[error("cannot read OBJ file {}: {reason}", path.display())]
    ObjRead {
        /// The file.
        path: PathBuf,
        /// The operating-system error.
        reason: String,
    },
    /// The OBJ file is malformed.
    #[error("malformed OBJ file {}, line {line}: {reason}", path.display())]
    ObjParse {
        /// The file.
        path: PathBuf,
        /// 1-based line number of the offending line.
        line: usize,
        /// What was wrong (the parser's message) and what was expected.
        reason: String,
    },
    /// The mesh has no triangles, or its triangles enclose no volume.
    #[error("triangle mesh {name}: {reason}")]
    EmptyMesh {
        /// The file name (or the name given to an in-memory mesh).
        name: String,
        /// What was found.
        reason: String,
    },
    /// The mesh is not closed: some edges do not have exactly two incident
    /// triangles with opposite orientation, so inside and outside are
    /// undefined.
    #[error(
        "triangle mesh {name} is not closed: {count} edge(s) are not shared by exactly two \
         consistently oriented triangles, e.g. the edge from vertex {example_from:?} to \
         {example_to:?} ({example_reason}); a collider mesh must be a closed, consistently \
         oriented (watertight) surface"
    )]
    MeshNotClosed {
        /// The file name (or the name given to an in-memory mesh).
        name: String,
        /// Number of bad edges.
        count: usize,
        /// Position of one end of an example bad edge (after scale and
        /// translation, m).
        example_from: [f64; 3],
        /// Position of its other end (m).
        example_to: [f64; 3],
        /// Why that edge is bad (boundary, non-manifold, flipped neighbour).
        example_reason: String,
    },
    /// Keyframes of a moving collider are invalid.
    #[error("invalid keyframes: keyframe {index}: {reason}")]
    Keyframes {
        /// Index of the offending keyframe.
        index: usize,
        /// What is wrong and what was expected.
        reason: String,
    },
    /// A self-collision parameter is out of range.
    #[error("invalid self-collision setup: {0}")]
    SelfCollision(String),
}
