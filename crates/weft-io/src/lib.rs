//! # weft-io
//!
//! Scene files and run outputs (DESIGN §8).
//!
//! - [`Scene`]: serde types mirroring the scene-file keys (a public
//!   contract: never renamed; unknown keys are errors), loaded with
//!   [`Scene::from_path`] / [`Scene::from_str`] with errors that name the
//!   file, the JSON path and what was expected, and built with
//!   [`Scene::build`] into a [`BuiltScene`]: the [`weft_core::Fabric`],
//!   plain-data colliders ([`ColliderSpec`]), handles resolved to global
//!   nodes ([`HandleSpec`]) and the typed settings, and from there with
//!   [`BuiltScene::simulation`] into the `weft_solver::Simulation` that
//!   `weft run` steps.
//! - Outputs: [`EnergyCsv`] (`energy.csv`), [`write_final_state`]
//!   (`final_state.json`), [`write_obj_frame`] (OBJ polylines), all written
//!   atomically or append-only (see [`output`]), and their readers
//!   [`read_energy_csv`], [`read_final_state`].
//! - Renderer exports ([`curves`], [`export`]): [`YarnCurves`] puts warp and
//!   weft back on their sides of the weave (±R along the fabric normal, per
//!   `Fabric::crimp`) and smooths them (Catmull-Rom); [`write_curves`] writes
//!   BCC, Mitsuba 3 curve text, OBJ polylines, OBJ tube meshes and USD
//!   BasisCurves files.
//! - [`write_preview`] ([`preview`]): `preview.png`, shaded front and side
//!   views of the yarns on the body (a z-buffered software rasteriser).
//! - Bodies ([`mesh`], [`mannequin`]): [`TriMesh`] (OBJ in and out,
//!   closedness, girths) and the project's own mannequin,
//!   [`mannequin::generate`], committed as `data/bodies/mannequin.obj`.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use weft_io::{EnergyCsv, EnergyRow, Scene, read_energy_csv};
//! let scene = Scene::from_str(r#"{"duration": 1, "time_step": {"dt": 1e-3},
//!     "output": {"interval": 0.1, "formats": []},
//!     "objects": [{"type": "plane", "point": [0, 0, 0], "normal": [0, 2, 0], "stiffness": 1e3}]}"#,
//!     "floor.json")?;
//! let built = scene.build()?;
//! assert_eq!(built.fabric.node_count(), 0);
//! assert_eq!(built.colliders.len(), 1);
//!
//! let dir = tempfile::tempdir()?;
//! let mut csv = EnergyCsv::create(dir.path().join("energy.csv"))?;
//! let row = EnergyRow { t: 0.1, kinetic: 1.5, elastic: 0.25, gravity: -3.0,
//!     dissipated: 0.0, h: 1e-3, newton_iters: 200, cg_iters: 4000 };
//! csv.append(&row)?;
//! assert_eq!(read_energy_csv(dir.path().join("energy.csv"))?, vec![row]);
//! # Ok(()) }
//! ```

mod build;
pub mod checkpoint;
pub mod curves;
mod de;
mod error;
pub mod export;
pub mod mannequin;
pub mod mesh;
pub mod output;
pub mod preview;
pub mod scene;
mod simulate;

pub use build::{
    BuiltScene, ColliderShape, ColliderSpec, HandleSpec, SbdCloth, TimeStepSettings,
    interpolate_keyframes,
};
pub use curves::{Curve, CurveError, YarnCurves, catmull_rom, fabric_normals};
pub use de::{ColliderKeyframe, Selector, SelectorMap};
pub use error::SceneError;
pub use export::{
    CurveExportOptions, CurveFormat, ExportError, MitsubaScene, write_bcc, write_curves,
    write_mitsuba_curves, write_mitsuba_scene, write_obj_polylines, write_obj_tubes,
    write_usda_curves,
};
pub use mesh::{MeshError, TriMesh};
pub use output::{
    ENERGY_HEADER, EnergyCsv, EnergyRow, FinalState, OutputError, atomic_write, frame_path,
    read_energy_csv, read_final_state, write_final_state, write_json, write_obj_frame,
};
pub use preview::{Preview, View, write_preview};
pub use scene::{
    CapsuleObject, ClothModel, DampingSpec, FabricSpec, FrictionSpec, HandleObject, Integrator,
    MaterialSpec, MeshObject, ModeSpec, OBJECT_TYPES, Output, OutputFormat, PlaneObject,
    PreconditionerChoice, Scene, SceneObject, SelfCollisionSpec, SphereObject, TimeStep,
    TriangleClothObject, WeaveSpec, WovenPatchObject, YarnObject,
};
pub use simulate::collider;
