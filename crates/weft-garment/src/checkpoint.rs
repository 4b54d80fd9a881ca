//! Checkpoints of a drape ([`crate::DrapeOptions::checkpoint_every_s`],
//! [`crate::DrapeOptions::resume`]): `out/checkpoint.json`, written
//! atomically after a relaxation check (the one before kept as
//! `checkpoint.prev.json`, `weft_io::checkpoint`).
//!
//! A checkpoint holds the level and phase it was taken in, the level's
//! starting state (carried from the coarser level), the simulation's
//! changing state ([`weft_solver::SimCheckpoint`]), the reports of the
//! levels already finished, what sewing measured, and the frame counters.
//! Everything else of a level (the weave, seam ties, colliders,
//! attachments) is rebuilt from the pattern and the options, which must be
//! the same (their digests are checked). A checkpoint taken while an
//! animated body plays ([`crate::Body::Animation`]) also holds the
//! animation's measures so far ([`AnimationCheckpoint`]); the moving body
//! is rebuilt from its frames, posed by the simulated time. Every relaxation check starts
//! with a freshly built preconditioner, so a resumed drape equals the
//! uninterrupted one bit for bit.

use crate::pipeline::LevelReport;
use serde::{Deserialize, Serialize};
use weft_solver::SimCheckpoint;

/// Format version of [`DrapeCheckpoint`].
pub const DRAPE_CHECKPOINT_VERSION: u32 = 1;

/// A checkpoint of a drape (see the module docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DrapeCheckpoint {
    /// [`DRAPE_CHECKPOINT_VERSION`].
    pub version: u32,
    /// The pattern file as given.
    pub pattern: String,
    /// Digest of the pattern file's bytes (`weft_io::checkpoint::digest`).
    pub pattern_digest: String,
    /// [`crate::DrapeOptions::digest`].
    pub options_digest: String,
    /// The level (0 is the coarsest).
    pub level: usize,
    /// Taken while sewing (level 0) rather than draping.
    pub sewing: bool,
    /// Simulated time at the start of the phase (s).
    pub phase_t0: f64,
    /// Simulated time over all levels and phases at the phase's start (s,
    /// the frames' clock).
    pub phase_t_global: f64,
    /// The level's starting coordinates and velocities (`5 n` each), as
    /// carried from the coarser level; empty at level 0.
    pub level_q0: Vec<f64>,
    /// See [`DrapeCheckpoint::level_q0`].
    pub level_v0: Vec<f64>,
    /// The simulation's state.
    pub sim: SimCheckpoint,
    /// Accepted steps, Newton and PCG iterations of the level so far.
    pub steps: usize,
    /// See [`DrapeCheckpoint::steps`].
    pub newton: usize,
    /// See [`DrapeCheckpoint::steps`].
    pub cg: usize,
    /// Wall time of the level so far (s).
    pub level_wall_s: f64,
    /// Wall time of the whole drape so far (s).
    pub wall_s: f64,
    /// Reports of the finished levels.
    pub levels: Vec<LevelReport>,
    /// Largest seam gap after sewing (m; 0 while sewing).
    pub gap_sewn: f64,
    /// Highest point of the sewn garment (m).
    pub sewn_top: f64,
    /// Centroid height of the sewn garment (m).
    pub sewn_centroid: f64,
    /// Simulated sewing time (s).
    pub sewing_time: f64,
    /// Per panel, the highest point and centroid height where it was placed (m).
    pub placed_panels: Vec<(f64, f64)>,
    /// The labels held while sewing, their yarn ends, and the seam ties
    /// routed over the body (as in the summary).
    pub attached_labels: Vec<String>,
    /// See [`DrapeCheckpoint::attached_labels`].
    pub attached_nodes: usize,
    /// See [`DrapeCheckpoint::attached_labels`].
    pub routed_ties: usize,
    /// Frames written, and the frame clock.
    pub frames: usize,
    /// See [`DrapeCheckpoint::frames`].
    pub next_frame: f64,
    /// See [`DrapeCheckpoint::frames`].
    pub last_frame: f64,
    /// Taken while an animated body plays (on the final level, after its
    /// drape): the animation's measures so far. Its phase start
    /// ([`DrapeCheckpoint::phase_t0`]) is when frame 0 was shown. Absent
    /// from checkpoints of the other phases and from those written before
    /// it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub animation: Option<AnimationCheckpoint>,
}

/// The animation phase's measures so far, in a [`DrapeCheckpoint`] taken
/// while an animated body plays; a resumed drape continues them, so its
/// [`crate::AnimationReport`] equals the uninterrupted one's (but the wall time).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnimationCheckpoint {
    /// When frame 0 was shown, on the frames' clock (s;
    /// [`crate::AnimationReport::start_time_s`]).
    pub start_time_s: f64,
    /// Simulated time the final level draped before the animation (s).
    pub draping_time_s: f64,
    /// Accepted steps of the level before the animation.
    pub steps_before: usize,
    /// The garment's centroid when frame 0 was shown (m, `[x, y, z]`).
    pub centroid_start_m: [f64; 3],
    /// Deepest node inside the moving body so far (m).
    pub max_penetration_m: f64,
    /// Deepest yarn-segment point inside the moving body so far (m).
    pub max_segment_penetration_m: f64,
    /// `[t, E]` after every accepted step so far (s of simulated time, J).
    pub kinetic_energy_j: Vec<[f64; 2]>,
    /// Wall-clock time of the animation so far (s).
    pub wall_s: f64,
}

impl weft_io::checkpoint::Checkpoint for DrapeCheckpoint {
    const VERSION: u32 = DRAPE_CHECKPOINT_VERSION;
    fn version(&self) -> u32 {
        self.version
    }
}
