//! Progress reporting: the pipeline calls a [`Progress`] as it goes, so a
//! CLI can draw bars and a library user can log or stay silent (`()`).

use weft_solver::StepStats;

/// A phase of the drape of one level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Gravity off, drag on: seam ties close the seams around the body
    /// (coarsest level only).
    Sewing,
    /// Gravity on: the garment settles to static equilibrium.
    Draping,
    /// An animated body moves and the garment follows it (final level
    /// only, [`crate::Body::Animation`]).
    Animating,
}

impl Phase {
    /// `sewing`, `draping` or `animating`.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Sewing => "sewing",
            Phase::Draping => "draping",
            Phase::Animating => "animating",
        }
    }
}

/// Receives the pipeline's progress. Every method has an empty default.
pub trait Progress {
    /// A level was woven: its index (0 = coarsest), spacing (m) and nodes.
    fn level(&mut self, _level: usize, _spacing: f64, _nodes: usize) {}
    /// A phase starts; it runs at most `max_time` of simulated time (s).
    fn phase_start(&mut self, _phase: Phase, _max_time: f64) {}
    /// An accepted step, at simulated time `t` since the phase started (s).
    fn step(&mut self, _t: f64, _stats: &StepStats) {}
    /// The phase ended.
    fn phase_end(&mut self) {}
    /// A note or warning for the user (one line).
    fn note(&mut self, _message: &str) {}
}

impl Progress for () {}
