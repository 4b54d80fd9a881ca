//! # weft-shell
//!
//! Triangle-mesh cloth, the model every cloth user knows, next to weft's
//! yarn-level model: fast previews, and a baseline to compare against.
//!
//! - [`mesh`]: a cloth mesh with a flat 2D rest shape (texture
//!   coordinates, m) and world positions, its edges and its ring
//!   neighbourhoods.
//! - [`springs`]: bending springs: the crossover springs of the mass-spring
//!   literature, and Kim's level-of-detail (LOD) bending springs with the
//!   loose and tight levels of [Kim23 eq. 6-8].
//! - [`sbd`]: strain-based dynamics [SBD14, Kim23 eq. 1-5], a
//!   position-based integrator with Green-strain constraints per triangle.
//!
//! - [`implicit`]: implicit cloth on weft's backward-Euler/Newton/PCG
//!   solver: StVK membrane triangles with strain-rate or Rayleigh damping
//!   [SBO18 §4, eq. 13-16] and discrete-shell bending hinges.
//!
//! The StVK membrane and the discrete-shell hinge are elements in
//! `weft-potentials` (`stvk`, `hinge`); this crate shares their triangle
//! rest shape ([`weft_potentials::stvk::TriangleRest`]).

pub mod implicit;
pub mod mesh;
pub mod sbd;
pub mod springs;

pub use implicit::{Fig3Motion, MembraneDamping, ShellMaterial, shell_fabric};
pub use mesh::ClothMesh;
pub use sbd::{Sbd, SbdOptions, SeamTie, StrainConstraint, TriangleStrain};
pub use springs::{BendingSprings, LodConnection, LodLevels, Spring};

/// Errors of mesh construction and of the strain-based-dynamics set-up.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ShellError {
    /// A triangle names a vertex the mesh does not have.
    #[error("triangle {triangle} names vertex {vertex}, but the mesh has {vertices} vertices")]
    VertexOutOfRange {
        /// Index of the triangle.
        triangle: usize,
        /// The vertex index it names.
        vertex: usize,
        /// Number of vertices.
        vertices: usize,
    },
    /// A triangle's rest shape has (nearly) zero area or repeats a vertex.
    #[error(
        "triangle {triangle} ({vertices:?}) is degenerate in the rest shape: its texture-coordinate area is not above 1e-14 m²"
    )]
    DegenerateTriangle {
        /// Index of the triangle.
        triangle: usize,
        /// Its vertices.
        vertices: [u32; 3],
    },
    /// Rest shape and positions differ in length, or a value is not finite.
    #[error("invalid mesh: {0}")]
    InvalidMesh(String),
    /// An option is outside its documented range.
    #[error("invalid option `{name}`: {message}")]
    InvalidOption {
        /// The option's field name.
        name: &'static str,
        /// What was expected.
        message: String,
    },
}
