//! # weft
//!
//! Yarn-level simulation of woven cloth with the mixed Lagrangian-Eulerian
//! model: every warp/weft crossing carries a position `x` (m) and two sliding
//! arc-length coordinates `u, v` (m of rest yarn length) [CLMMO14, SBO17].
//!
//! This facade re-exports the workspace crates:
//!
//! - [`core`] (`weft-core`): fabric topology, generalised coordinates, materials.
//! - [`potentials`] (`weft-potentials`): per-element strains, energies,
//!   gradients, Hessians, strain-rate dissipation and the Eulerian mass matrix.
//! - [`solver`] (`weft-solver`): assembly, PCG, backward Euler with Newton,
//!   adaptive time steps.
//! - [`shell`] (`weft-shell`): triangle-mesh cloth, strain-based dynamics
//!   with LOD bending springs.
//! - [`garment`] (`weft-garment`): the garment pipeline as a library
//!   (pattern → woven panels → sewn → draped level by level down to yarn
//!   spacing), with [`drape`], [`DrapeOptions`] and the fabric presets.
//!
//! - [`batch`]: many runs and drapes from a manifest, with sweeps,
//!   shards (Slurm arrays), an index and resume ([`batch::run_batch`]).
//! - [`run`]: running a scene file (DESIGN §8) with its outputs,
//!   checkpoints and resume ([`run::run_scene`], [`run::RunOptions`]).
//!
//! See `README.md` for the references and the architecture.

pub use weft_core as core;
pub use weft_potentials as potentials;
pub use weft_solver as solver;

pub use weft_garment as garment;
pub use weft_io as io;
pub use weft_shell as shell;

pub mod batch;
pub mod run;
pub use weft_garment::{DrapeOptions, drape, drape_to_dir};
