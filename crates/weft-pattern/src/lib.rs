//! # weft-pattern
//!
//! Sewing patterns to placed, woven garments (DESIGN §7, §9):
//!
//! 1. [`Pattern::from_file`] reads a GarmentCode specification (`gc_*.json`)
//!    or an older Garment-Pattern-Generator file (`gpg_*.json`): lengths in
//!    metres, curves (relative Bézier, `circle` arcs, GPG bare quadratic
//!    control points), 3D placement, stitches, labels; bad files give a
//!    [`PatternError`] that names the file, the JSON path and what was
//!    expected ([`spec`]).
//! 2. [`weave::weave_outline`] turns a panel outline ([`geometry::Outline`],
//!    curves flattened with kurbo) into a plain-weave yarn grid clipped to
//!    the outline, with yarn ends on the outline.
//! 3. [`weave_garment`] places every woven panel in 3D, builds one
//!    [`weft_core::Fabric`] and turns the stitches into [`SeamTie`]s between
//!    yarn ends; [`Garment`] reports counts per panel, the yarn ends per
//!    edge and the nodes on labelled edges.
//!
//! ```no_run
//! use weft_pattern::{Pattern, WeaveOptions, weave_garment};
//! let pattern = Pattern::from_file("../shared/data/patterns/gc_shirt_mean.json").unwrap();
//! let garment = weave_garment(&pattern, &WeaveOptions::new(0.01)).unwrap();
//! println!("{} nodes, {} seam ties", garment.fabric.node_count(), garment.seams.len());
//! ```

pub mod error;
pub mod garment;
pub mod geometry;
pub mod spec;
pub mod weave;

pub use error::PatternError;
pub use garment::{
    EdgeReport, GPG_ORIGIN_HEIGHT_MEAN_BODY, Garment, MEAN_BODY_ARM_POSE_DEG, PanelReport,
    PanelTurn, SeamTie, StitchReport, VerticalOffset, WeaveOptions, sleeve_rotations,
    weave_garment,
};
pub use spec::{Curve, Edge, EdgeRef, Panel, Pattern, Stitch};
