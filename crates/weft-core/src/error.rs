//! Errors raised while building or validating a fabric.

use thiserror::Error;

/// A problem with the model input: every variant names the object, yarn,
/// node or material at fault and says what was expected.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ModelError {
    /// A material parameter is out of range or not finite.
    #[error("material '{material}': {field} must be {expected}, got {value:e}")]
    InvalidMaterial {
        /// Material name.
        material: String,
        /// Parameter name as in the scene file (e.g. `radius`).
        field: &'static str,
        /// What the value must be (e.g. `positive and finite`).
        expected: &'static str,
        /// The offending value.
        value: f64,
    },
    /// An object refers to a material that was not defined.
    #[error("object {object}: unknown material '{material}' (defined: {known})")]
    UnknownMaterial {
        /// Object index in scene order.
        object: usize,
        /// The name that was asked for.
        material: String,
        /// The defined names, comma separated.
        known: String,
    },
    /// A yarn with fewer than two nodes has no segment.
    #[error("{yarn}: has {count} node(s); a yarn needs at least two")]
    TooFewNodes {
        /// Which yarn (object and yarn index).
        yarn: String,
        /// Number of nodes given.
        count: usize,
    },
    /// A position, velocity, mass or length is NaN or infinite.
    #[error("{yarn}, node {node}: {what} is not finite ({value})")]
    NonFinite {
        /// Which yarn.
        yarn: String,
        /// Node index within the yarn.
        node: usize,
        /// Which quantity (e.g. `position`).
        what: &'static str,
        /// The value as text.
        value: String,
    },
    /// Arc-length coordinates must increase strictly along a yarn.
    #[error(
        "{yarn}: arc-length coordinate of node {node} ({value:e} m) must be greater than that of node {prev} ({prev_value:e} m)"
    )]
    NonIncreasingArcLength {
        /// Which yarn.
        yarn: String,
        /// Node index within the yarn.
        node: usize,
        /// Its arc-length coordinate (m).
        value: f64,
        /// The previous node's index.
        prev: usize,
        /// The previous node's arc-length coordinate (m).
        prev_value: f64,
    },
    /// Two consecutive nodes of a yarn at the same position: the segment has
    /// no direction.
    #[error("{yarn}: nodes {prev} and {node} coincide; a segment needs a non-zero chord")]
    CoincidentNodes {
        /// Which yarn.
        yarn: String,
        /// The earlier node.
        prev: usize,
        /// The later node.
        node: usize,
    },
    /// A node with free degrees of freedom has no mass (DESIGN §4).
    #[error(
        "{yarn}, node {node}: has free degrees of freedom but zero mass (material '{material}' has zero density and the node has no point mass); pin it or give it a point mass"
    )]
    ZeroMass {
        /// Which yarn.
        yarn: String,
        /// Node index within the yarn.
        node: usize,
        /// The yarn's material.
        material: String,
    },
    /// A node index (pinned, point mass, velocity) outside the object.
    #[error("object {object}: {what} names node {index}, but the object has {count} nodes")]
    NodeOutOfRange {
        /// Object index.
        object: usize,
        /// Which list (e.g. `pinned`).
        what: &'static str,
        /// The index given.
        index: usize,
        /// Nodes in the object.
        count: usize,
    },
    /// A node selector that does not apply to the object.
    #[error("object {object}: node selector '{selector}' {reason}")]
    BadSelector {
        /// Object index.
        object: usize,
        /// The selector as written.
        selector: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A woven patch with an impossible geometry.
    #[error("object {object} (woven_patch): {field} {reason}")]
    InvalidPatch {
        /// Object index.
        object: usize,
        /// Field name as in the scene file.
        field: &'static str,
        /// What is wrong and what was expected.
        reason: String,
    },
    /// A per-segment or per-node list of the wrong length.
    #[error("object {object}: {what} has {got} entries, expected {expected}")]
    LengthMismatch {
        /// Object index.
        object: usize,
        /// Which list (e.g. `rest_lengths`).
        what: &'static str,
        /// Entries expected.
        expected: usize,
        /// Entries given.
        got: usize,
    },
}
