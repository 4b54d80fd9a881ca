//! # weft-garment
//!
//! The garment pipeline as a library (`weft drape` is a thin CLI over it):
//! a sewing pattern (GarmentCode or Garment-Pattern-Generator JSON) is
//! woven, placed around a body, sewn and draped, level by level from a
//! coarse yarn spacing down to the requested one.
//!
//! 1. **Levels** ([`level_spacings`]): the coarsest level's spacing is the
//!    requested spacing doubled until it is at least
//!    [`DrapeOptions::coarse_spacing_mm`] (16 mm); each later level halves it.
//! 2. **Coarsest level**: every panel is woven (`weft-pattern`; a panel
//!    narrower than the spacing is woven finer, see
//!    [`pipeline::NARROW_PANEL_HALVINGS`], so waistbands and cuffs are never
//!    lost), placed in 3D and **sewn**: gravity off, a drag of
//!    [`pipeline::SEWING_DRAG`] keeps it quasi-static, seam ties pull every
//!    yarn end of a stitched edge to its partner point, GarmentCode's waist
//!    labels ([`DEFAULT_ATTACH_LABELS`]) hold the waistband to the body
//!    (unless the garment has an upper part that holds it, as a dress's
//!    bodice: [`sewing::has_upper_part`]). A seam whose straight path runs
//!    deep through the body (a shoulder seam placed below the shoulder) is
//!    sewn through a meeting point outside the body on the far side from
//!    its fabric ([`sewing::seam_routes`]), so it closes over the shoulder,
//!    not under the arm; a tube's seams whose paths pass over or under a
//!    limb (a sleeve's over-arm seam) are pulled onto it
//!    ([`sewing::tube_routes`]).
//!    Then it is **draped**: gravity, friction on the body, until static.
//! 3. **Refined levels**: the pattern is woven again at half the spacing
//!    (the grid lines pass through the panel origin, so every coarse yarn
//!    is a yarn of the finer weave), the draped state is carried over by a
//!    smooth fit in the panels' flat coordinates ([`transfer`]), the
//!    per-yarn material is homogenised anew for the new spacing
//!    ([`weft_core::preset`]: per-width and per-area values fixed), seam ties,
//!    colliders and self-collision are rebuilt, and the level is draped
//!    until static.
//! 4. **Static** means the kinetic energy and the force residual are below
//!    the thresholds of [`RelaxOptions`], checked every
//!    `relax.check_interval`; both figures and thresholds are reported per
//!    level ([`LevelReport`]), and a level that hits `relax.max_time` first
//!    is reported as not static.
//! 5. **Outputs** ([`Drape::write_outputs`]): `final_state.json`,
//!    `summary.json` ([`DrapeSummary`], per level), the yarn curves and
//!    `preview.png`. A garment that sank after sewing, or a panel that left
//!    where it was placed ([`DrapeOptions::slide_limit`]), slid off the
//!    body: a warning, or [`GarmentError::SlidOff`] with
//!    [`DrapeOptions::strict`].
//!
//! Physics policy lives here, not in the CLI: the fabric presets and their
//! conversion per yarn ([`weft_core::preset`]), the body penalty
//! ([`pipeline::BODY_PENALTY`]), tie stiffness ([`pipeline::TIE_FRACTION`])
//! and the phases.
//!
//! Self-collision is on at spacings of [`DrapeOptions::self_collision_below_mm`]
//! and below (by default at every level), with a layer distance of at least
//! [`pipeline::LAYER_THICKNESS`] times the spacing. Every level reports the
//! yarn segments that pass through the garment's own fabric
//! ([`layers::layer_crossings`]). Yarn sliding (free `u, v`, friction, parallel contact)
//! is available per level with [`DrapeOptions::sliding_below_mm`] and off by
//! default; a refined level that slides is first relaxed at the same
//! spacing without sliding, then slides from that state copied as it is
//! ([`drape_levels`]), and each level reports how far its yarns
//! slid ([`LevelReport::max_slide_m`]). Body contact (penalty and Coulomb friction) acts on the nodes
//! and, with [`DrapeOptions::segment_contact`] (default on), on the
//! midpoint of every yarn segment or triangle edge while draping (`weft_solver::assembly::ContactModel::segments`:
//! a straight segment of length `s` on a body of curvature radius `ρ`
//! otherwise sags `s²/(8ρ)` into it, 4 mm at 40 mm on a 50 mm hip); the
//! deepest point of any segment is always reported.
//!
//! ```no_run
//! use std::path::Path;
//! use weft_garment::{DrapeOptions, drape};
//! let opts = DrapeOptions { spacing_mm: 10.0, ..DrapeOptions::default() };
//! let d = drape(Path::new("data/patterns/a_line_skirt.json"), &opts, &mut ()).unwrap();
//! for level in &d.summary.levels {
//!     println!("{} mm: {} nodes, static {}", level.spacing_m * 1e3, level.nodes, level.is_static);
//! }
//! d.write_outputs(Path::new("out/skirt"), &opts.curve_formats().unwrap()).unwrap();
//! ```

pub mod checkpoint;
pub mod cusick;
pub mod error;
pub mod layers;
pub mod options;
pub mod pipeline;
pub mod progress;
pub mod sewing;
pub mod shell;
pub mod transfer;

pub use cusick::{Cusick, CusickOptions, CusickSummary, cusick};
pub use error::GarmentError;
pub use layers::{
    LAYER_EXCLUSION_SPACINGS, LayerCrossing, layer_crossings, rest_exclusion, surface_crossings,
};
pub use options::{
    Body, DEFAULT_ATTACH_LABELS, DrapeModel, DrapeOptions, RelaxOptions, level_spacings,
};
pub use pipeline::{
    AnimationReport, Drape, DrapeLevel, DrapeSummary, LevelReport, PanelWeave, ResidualSite,
    SlidPart, StitchGap, drape, drape_levels, drape_to_dir, layer_self_collision, max_gap,
    max_slide, penetrations, seam_ties,
};
pub use progress::{Phase, Progress};
pub use weft_core::{FabricPreset, FabricProperties};
