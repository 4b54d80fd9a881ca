//! # weft-core
//!
//! Fabric topology and generalised coordinates of the mixed
//! Lagrangian-Eulerian yarn model (DESIGN §1, [CLMMO14, SBO17]): yarns as
//! ordered node lists, crossing nodes with `(x, u, v)`, yarn ends with a fixed
//! arc-length coordinate, a per-DOF free mask on a uniform 5-DOF node layout,
//! element lists built once, struct-of-arrays state in f64, materials with
//! physical parameters, and builders for explicit yarns, rectangular woven
//! patches and general woven panels (yarn pieces clipped to an outline).
//!
//! ```
//! use weft_core::{FabricBuilder, Material, WovenPatchSpec};
//! let mut b = FabricBuilder::new(vec![Material::example_cotton()]).unwrap();
//! b.add_woven_patch(&WovenPatchSpec::new("cotton", [0.01, 0.01], [5, 5], [0.0; 3])).unwrap();
//! let fabric = b.build().unwrap();
//! assert_eq!(fabric.node_count(), 25);
//! assert_eq!(fabric.elements.segments.len(), 2 * 5 * 4);
//! ```

pub mod builder;
pub mod error;
pub mod fabric;
pub mod material;
pub mod preset;

pub use builder::{FabricBuilder, PanelNode, Weave, WovenPanelSpec, WovenPatchSpec, YarnSpec};
pub use error::ModelError;
pub use fabric::{
    BendingElement, DOFS_PER_NODE, Elements, Fabric, Family, MembraneModuli, MembraneTriangle,
    NodeSelector, ObjectInfo, ObjectKind, PatchEdge, Segment, ShearElement, ShellHinge,
    SlidingAnchor, State, U_SLOT, V_SLOT, Yarn,
};
pub use material::{Damping, Friction, Material, ModeCoefficients};
pub use preset::{FabricPreset, FabricProperties};
