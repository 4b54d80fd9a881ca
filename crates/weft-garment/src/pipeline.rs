//! The multilevel drape: weave → place → sew → drape at the coarsest level,
//! then refine → relax level by level, then the outputs.

use crate::checkpoint::{AnimationCheckpoint, DRAPE_CHECKPOINT_VERSION, DrapeCheckpoint};
use crate::error::GarmentError;
use crate::layers::{LAYER_EXCLUSION_SPACINGS, LayerCrossing, layer_crossings};
use crate::options::{Body, DEFAULT_ATTACH_LABELS, DrapeOptions, level_spacings};
use crate::progress::{Phase, Progress};
use crate::sewing::{has_upper_part, route_attachments, sewing_routes};
use crate::transfer::{carry_state, positions};
use nalgebra::Vector3;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;
use weft_core::{Fabric, State};
use weft_io::{CurveExportOptions, CurveFormat, TriMesh, YarnCurves};
use weft_pattern::{Garment, Pattern, WeaveOptions, weave_garment};
use weft_solver::assembly::SelfContact;
use weft_solver::collide::{Collider, MeshAnimation, RepulsionLaw, SelfCollision, TriangleMesh};
use weft_solver::{Attachment, Settings, Simulation, StepStats, Tie};

/// Self-collision distance as a fraction of the level's spacing: at a
/// coarse level the garment's layers repel within `0.6 s`, so that a yarn
/// cannot thread a cell of another layer (a segment through the middle of a
/// square cell of side `s` passes `s/2` from its sides); from the spacing
/// where `2R + margin` is larger, the yarns' own radius sets it.
pub const LAYER_THICKNESS: f64 = 0.6;

/// Mass-proportional drag during sewing (1/s): a numerical aid that keeps
/// the sewing quasi-static (`weft_solver::Assembler::drag`). A node's
/// velocity relaxes to the force it feels within `1/200 s` = 5 ms, so
/// panels pulled together by the seam ties and pushed out by the body
/// cannot fling themselves along it. At 20/s the README's A-line skirt's
/// hem, placed flat in front of the thighs, shot up 25 cm in the first
/// 50 ms of sewing and stayed crumpled above the hips (BENCHMARKS.md,
/// 2026-11-29); Newton's loose stagnation band had hidden this, by
/// accepting steps with wrong velocities, until the band was bounded
/// (`weft_solver::integrator::STAGNATION_BAND_MAX`).
pub const SEWING_DRAG: f64 = 200.0;

/// A garment with a panel placed more than this (m) above its highest
/// waist-labelled yarn end hangs from its upper part (a dress's bodice):
/// its waist labels are not attached by default
/// ([`crate::sewing::has_upper_part`]).
pub const UPPER_PART_REACH: f64 = 0.15;

/// Gravitational acceleration (m/s², Y up).
pub const GRAVITY: f64 = 9.81;

/// One level of a yarn drape: its spacing and whether its yarns slide.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DrapeLevel {
    /// Yarn spacing (m).
    pub spacing: f64,
    /// Free arc-length coordinates at the crossings, with friction and
    /// parallel-yarn contact ([`DrapeOptions::sliding_below_mm`]).
    pub sliding: bool,
}

/// The levels of a drape, coarsest first: one per [`level_spacings`] entry,
/// sliding at [`DrapeOptions::sliding_below_mm`] and finer (never in the
/// `shell` model, which has no arc-length coordinates). A refined level
/// that slides is preceded by the same spacing without sliding: the state
/// carried from the coarser level is a fit, not a static state, and near a
/// panel's edge its strains along a yarn can differ by tens of percent
/// between neighbouring segments. With the arc-length coordinates fixed
/// the positions relax that away; with them free the crossings race along
/// the yarns to even the tension out (metres per second), and a crossing
/// next to a short end segment runs into the yarn's end (the A-line skirt
/// 40 → 20 mm with sliding at 20 mm: the step fell below `dt_min` 0.2 ms
/// into the level, both with and without the edge crossings held). The
/// sliding level then starts from the relaxed state as it is
/// ([`crate::transfer::carry_state`] copies between equal weaves).
pub fn drape_levels(opts: &DrapeOptions) -> Vec<DrapeLevel> {
    let slides = |s: f64| {
        opts.model != crate::DrapeModel::Shell && s * 1e3 <= opts.sliding_below_mm * (1.0 + 1e-9)
    };
    let mut levels = Vec::new();
    for (k, s) in level_spacings(opts.spacing_mm, opts.coarse_spacing_mm)
        .into_iter()
        .enumerate()
    {
        if k > 0 && slides(s) {
            levels.push(DrapeLevel {
                spacing: s,
                sliding: false,
            });
        }
        levels.push(DrapeLevel {
            spacing: s,
            sliding: slides(s),
        });
    }
    levels
}

/// The largest distance (m) a free arc-length coordinate of `q` (5 per
/// node) lies from the fabric's rest coordinate: how far a yarn slid
/// through a crossing. 0 when none is free.
pub fn max_slide(fabric: &weft_core::Fabric, q: &[f64]) -> f64 {
    let rest = &fabric.initial;
    (0..fabric.node_count())
        .flat_map(|i| {
            [(3, rest.u[i]), (4, rest.v[i])]
                .into_iter()
                .filter(move |&(slot, _)| fabric.free[i][slot])
                .map(move |(slot, r)| (q[5 * i + slot] - r).abs())
        })
        .fold(0.0, f64::max)
}

/// Halvings of the spacing allowed for a narrow panel
/// (`weft_pattern::WeaveOptions::narrow_panel_halvings`): a panel down to
/// 1/64 of the level's spacing wide still gets yarns.
pub const NARROW_PANEL_HALVINGS: u32 = 6;

/// Body collider penalty: a node pressed by 1 % of the yarn's stretch
/// stiffness sinks by at most a yarn radius, `k = 0.01 k_s / R` (N/m).
pub const BODY_PENALTY: f64 = 0.01;
/// Coulomb friction of the garment on the body while draping.
pub const BODY_FRICTION: f64 = 0.5;
/// Seam ties: the largest gap at a level's start pulls with this fraction
/// of a yarn's stretch stiffness, `k = 0.05 k_s / gap`; tie damping is
/// `0.1 s · k` (overdamped).
pub const TIE_FRACTION: f64 = 0.05;

/// What one level of the drape did.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct LevelReport {
    /// Level index (0 = coarsest).
    pub level: usize,
    /// Yarn spacing (m).
    pub spacing_m: f64,
    /// Yarn pieces (warp + weft).
    pub yarns: usize,
    /// Crossing nodes.
    pub crossings: usize,
    /// Nodes.
    pub nodes: usize,
    /// Seam ties.
    pub seam_ties: usize,
    /// Panels woven finer than the level's spacing (narrow panels).
    pub narrow_panels: usize,
    /// Yarn ends held to the body while sewing (level 0 only).
    pub attached_nodes: usize,
    /// Yarn sliding on.
    pub sliding: bool,
    /// How far the yarns slid through their crossings over the level: the
    /// largest `|u - ū|` or `|v - v̄|` at the end, against the weave's rest
    /// coordinates (m; 0 without sliding). Absent from checkpoints written
    /// before it existed.
    #[serde(default)]
    pub max_slide_m: f64,
    /// Self-collision on.
    pub self_collision: bool,
    /// Accepted time steps.
    pub steps: usize,
    /// Rejected step attempts.
    pub rejected: usize,
    /// The rejected attempts by reason (`weft_solver::Rejection::key`:
    /// `newton`, `line_search`, `layer_crossing`, ...); empty for the `sbd`
    /// model, which rejects none. Absent from checkpoints written before it
    /// existed.
    #[serde(default)]
    pub rejections: std::collections::BTreeMap<String, usize>,
    /// Newton iterations, summed over the accepted steps.
    pub newton_iterations: usize,
    /// PCG iterations, summed over the accepted steps.
    pub cg_iterations: usize,
    /// Wall time of the level (s).
    pub wall_time_s: f64,
    /// Simulated sewing time (s, level 0 only).
    pub sewing_time_s: f64,
    /// Simulated draping time (s).
    pub draping_time_s: f64,
    /// Kinetic energy at the end (J).
    pub kinetic_energy_j: f64,
    /// Its threshold `½ M v_tol²` (J).
    pub kinetic_threshold_j: f64,
    /// Force residual at the end: largest net nodal force over nodal weight.
    pub residual: f64,
    /// Its threshold.
    pub residual_threshold: f64,
    /// Where [`Self::residual`] is: the node with the largest net force at
    /// the end, its panel and position. Absent from checkpoints written
    /// before it existed, and for the `sbd` model (no residual).
    #[serde(default)]
    pub residual_at: Option<ResidualSite>,
    /// Both below their thresholds before `relax.max_time`.
    pub is_static: bool,
    /// Largest seam-tie gap at the end (m).
    pub max_seam_gap_m: f64,
    /// Deepest node inside the body at the end (m).
    pub max_penetration_m: f64,
    /// Deepest point of any yarn segment inside the body (m), sampled at
    /// its nodes and 3 interior points.
    pub max_segment_penetration_m: f64,
    /// Yarn segments through the garment's own fabric at the end
    /// ([`crate::layers::layer_crossings`]; for the triangle-mesh models,
    /// mesh edges through its triangles,
    /// [`crate::shell::mesh_layer_crossings`]): 0 when no layer passes
    /// through another.
    pub layer_crossings: usize,
    /// Height of the garment's lowest node at the end (m): the hem, for a
    /// skirt. Compared between levels, it shows whether refinement has
    /// converged.
    pub hem_height_m: f64,
    /// Mean node height at the end (m).
    pub centroid_height_m: f64,
}

/// The node that holds a level's force residual ([`LevelReport::residual_at`]):
/// where a drape that does not settle is still moving.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ResidualSite {
    /// Node index in the level's fabric.
    pub node: usize,
    /// The panel the node belongs to.
    pub panel: String,
    /// Its position at the end (m).
    pub position_m: [f64; 3],
}

impl ResidualSite {
    /// The site of `node` of `garment` at positions `x` (m); `None` for a
    /// node beyond them.
    pub(crate) fn of(garment: &Garment, node: usize, x: &[Vector3<f64>]) -> Option<Self> {
        let p = x.get(node)?;
        let panel = garment
            .panel_of(node)
            .map_or_else(String::new, |k| garment.panels[k].name.clone());
        Some(Self {
            node,
            panel,
            position_m: [p.x, p.y, p.z],
        })
    }
}

/// `DIR/summary.json` (DESIGN §8 garment pipeline keys, plus the levels).
#[derive(Serialize, Debug, Clone)]
pub struct DrapeSummary {
    /// The pattern file.
    pub pattern: String,
    /// Panels woven.
    pub panels: usize,
    /// Yarn pieces (warp + weft) at the final level.
    pub yarns: usize,
    /// Crossing nodes at the final level.
    pub crossings: usize,
    /// Stitches sewn.
    pub seams: usize,
    /// Seam ties at the final level.
    pub seam_ties: usize,
    /// Nodes at the final level.
    pub nodes: usize,
    /// Accepted time steps (all levels).
    pub steps: usize,
    /// Rejected step attempts (all levels).
    pub rejected: usize,
    /// Wall time of the whole drape (s).
    pub wall_time_s: f64,
    /// Largest seam-tie gap at the end (m).
    pub max_seam_gap_m: f64,
    /// Largest seam-tie gap after sewing, before draping (m).
    pub max_seam_gap_after_sewing_m: f64,
    /// How far the garment's centroid sank from the sewn garment's (m, positive
    /// down).
    pub centroid_drop_m: f64,
    /// How far the garment's highest point sank from the sewn garment's
    /// (m, positive down).
    pub top_drop_m: f64,
    /// The garment, or one of its panels, slid down the body
    /// ([`DrapeOptions::slide_limit`]).
    pub slid_off: bool,
    /// What slid, if anything.
    pub slid_part: Option<SlidPart>,
    /// Deepest node inside the body at the end (m, 0 if none).
    pub max_penetration_m: f64,
    /// Deepest yarn-segment point inside the body at the end (m).
    pub max_segment_penetration_m: f64,
    /// Yarn segments through the garment's own fabric at the end (the final
    /// level's [`LevelReport::layer_crossings`]).
    pub layer_crossings: usize,
    /// The first (at most 10) of them, by segment.
    pub layer_crossing_examples: Vec<LayerCrossing>,
    /// Every coordinate finite.
    pub finite: bool,
    /// Final yarn spacing (m).
    pub spacing_m: f64,
    /// Material preset.
    pub material: String,
    /// Grade factor applied to the pattern.
    pub grade: f64,
    /// Yarn ends held to the body while sewing.
    pub attached_nodes: usize,
    /// The labels whose edges were held.
    pub attached_labels: Vec<String>,
    /// Seam ties sewn through a meeting point outside the body: those
    /// whose straight path crossed the body where the garment was placed
    /// ([`crate::sewing::seam_routes`]) and a tube's ties whose path ran
    /// beside it ([`crate::sewing::tube_routes`]).
    pub routed_seam_ties: usize,
    /// Frames of yarn curves written under `frames/`.
    pub frames: usize,
    /// Body used.
    pub body: String,
    /// The final level is static ([`LevelReport::is_static`]).
    pub is_static: bool,
    /// Per level, coarsest first.
    pub levels: Vec<LevelReport>,
    /// Per stitch (file order), at the final level.
    pub stitch_gaps: Vec<StitchGap>,
    /// Per panel (file order), at the final level.
    pub panel_weaves: Vec<PanelWeave>,
    /// The backend that stepped the simulation.
    pub backend: String,
    /// The cloth model (`yarn` or `sbd`, [`crate::DrapeModel`]).
    pub model: crate::DrapeModel,
    /// With an animated body ([`Body::Animation`]): how the garment followed
    /// it; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub animation: Option<AnimationReport>,
}

/// How the garment followed an animated body ([`Body::Animation`]) on the
/// final level.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct AnimationReport {
    /// Frames of the animation.
    pub frames: usize,
    /// Its frames per second.
    pub fps: f64,
    /// When frame 0 was shown, in the time base of the yarn-curve frames
    /// (`frames/`, sewing and draping of every level before it) (s).
    pub start_time_s: f64,
    /// Simulated time played (s): the animation and the settling time after
    /// its last frame ([`DrapeOptions::animation_settle_s`]).
    pub played_s: f64,
    /// Accepted time steps.
    pub steps: usize,
    /// Wall-clock time (s).
    pub wall_time_s: f64,
    /// Deepest node inside the moving body (m), the worst of the checks
    /// every `relax.check_interval` of simulated time and at the end.
    pub max_penetration_m: f64,
    /// Deepest yarn-segment point inside the moving body (m, nodes and 3
    /// interior points per segment), the worst of the same checks.
    pub max_segment_penetration_m: f64,
    /// How far the garment's centroid moved (m, `[x, y, z]`), start to end.
    pub centroid_shift_m: [f64; 3],
    /// How far the body's centroid (mean vertex) moved (m), frame 0 to the
    /// last frame: a garment that follows the body shifts about as much.
    pub body_centroid_shift_m: [f64; 3],
    /// The garment's kinetic energy after every accepted step: `[t, E]`
    /// with `t` (s) since frame 0 was shown and `E` (J) (SBO17 Fig. 5
    /// compares it between damping levels, [`DrapeOptions::damping_scale`]).
    pub kinetic_energy_j: Vec<[f64; 2]>,
}

/// What weaving made of one panel.
#[derive(Serialize, Debug, Clone)]
pub struct PanelWeave {
    /// Panel name.
    pub name: String,
    /// Warp yarn pieces.
    pub warp_yarns: usize,
    /// Weft yarn pieces.
    pub weft_yarns: usize,
    /// Crossings (nodes).
    pub crossings: usize,
    /// Yarn ends on the outline.
    pub ends: usize,
    /// Spacing the panel was woven at (m; finer than the level's for a
    /// narrow panel).
    pub spacing_m: f64,
    /// How far the panel's highest point sank from where the pattern placed
    /// it, flat beside the body, before sewing (m, positive down).
    pub top_drop_from_placed_m: f64,
    /// How far the panel's centroid (mean node height) sank from where it
    /// was placed (m, positive down).
    pub centroid_drop_from_placed_m: f64,
}

/// The state of one stitch at the end of a drape.
#[derive(Serialize, Debug, Clone)]
pub struct StitchGap {
    /// Side a as `panel:edge` (edge index in the panel's edge list).
    pub a: String,
    /// Side b as `panel:edge`.
    pub b: String,
    /// Largest tie gap of the stitch (m).
    pub max_gap_m: f64,
    /// Position of the yarn end with the largest gap (m).
    pub widest_at_m: Option<[f64; 3]>,
    /// The point on the other edge it is tied to (m).
    pub widest_target_m: Option<[f64; 3]>,
    /// How deep the straight line between those two points runs inside the
    /// body (m, the largest penetration of 15 points along it; 0 when it
    /// stays outside). Above [`BODY_BETWEEN_MIN`] the body holds the seam
    /// open, typically in the armpit or crotch of a garment too small for
    /// the body, and draping cannot close it. See [`depth_inside_body`].
    pub body_between_m: f64,
}

/// The depth (m) above which [`StitchGap::body_between_m`] counts as the
/// body lying between a seam's sides: 2 mm, several yarn radii, so a chord
/// that merely grazes the surface does not count.
pub const BODY_BETWEEN_MIN: f64 = 2e-3;

/// How deep the segment from `a` to `b` (m) runs inside the body: the
/// largest penetration (m, 0 when none) of 15 evenly spaced interior
/// points, by the body's signed distance.
pub fn depth_inside_body(body: &Collider, a: &Vector3<f64>, b: &Vector3<f64>) -> f64 {
    (1..16)
        .map(|k| {
            let t = k as f64 / 16.0;
            -body.distance(&(a * (1.0 - t) + b * t), 0.0).0
        })
        .fold(0.0, f64::max)
}

/// The warning for a stitch left open by more than `spacing` (m) at the end
/// of a drape, `None` for a closed one: where it is open and, when the
/// body lies between its sides, the likely cause and the remedy.
fn open_seam_warning(gap: &StitchGap, spacing: f64) -> Option<String> {
    if gap.max_gap_m <= spacing {
        return None;
    }
    let p = gap.widest_at_m.unwrap_or_default();
    let mut w = format!(
        "warning: seam {} – {} is open by {:.0} mm at ({:.3}, {:.3}, {:.3}) m (closed means within one spacing, {:.0} mm)",
        gap.a,
        gap.b,
        gap.max_gap_m * 1e3,
        p[0],
        p[1],
        p[2],
        spacing * 1e3
    );
    if gap.body_between_m > BODY_BETWEEN_MIN {
        w.push_str(&format!(
            "; the body lies between its two sides (the straight line between them runs {:.0} mm inside it), \
             so the garment is probably too small for this body there: grade the pattern up \
             (DrapeOptions::grade, `weft drape --grade 1.1`)",
            gap.body_between_m * 1e3
        ));
    }
    Some(w)
}

/// A finished drape: the final level's garment and state, the body and the
/// summary.
pub struct Drape {
    /// The pattern as read (and graded).
    pub pattern: Pattern,
    /// The final level's woven garment (its fabric's `initial` is the rest
    /// weave).
    pub garment: Garment,
    /// The draped state of the final level.
    pub state: State,
    /// The body (m).
    pub body: TriMesh,
    /// The summary.
    pub summary: DrapeSummary,
}

impl Drape {
    /// The fabric of the final level.
    pub fn fabric(&self) -> &Fabric {
        &self.garment.fabric
    }

    /// Writes `final_state.json`, `summary.json`, the yarn curves
    /// (`yarns.*` in `formats`) and `preview.png` to `out`, each atomically;
    /// with the Mitsuba format also `body.obj` and `scene.xml`
    /// ([`weft_io::write_mitsuba_scene`]: `mitsuba scene.xml` renders the
    /// garment on the body).
    ///
    /// # Errors
    /// [`GarmentError::Io`], [`GarmentError::Output`], [`GarmentError::Export`].
    pub fn write_outputs(&self, out: &Path, formats: &[CurveFormat]) -> Result<(), GarmentError> {
        write_state_outputs(out, self.fabric(), &self.state, formats, Some(&self.body))?;
        if formats.contains(&CurveFormat::Mitsuba) {
            self.write_mitsuba_scene(out)?;
        }
        weft_io::write_json(&out.join("summary.json"), &self.summary)?;
        Ok(())
    }
}

/// Self-collision of a garment's yarn segments with interaction distance
/// `d0` (m), candidates searched within `2 d0`. Segment pairs whose end
/// nodes are within `2 d0` of each other along the fabric at rest (through
/// yarn segments at their rest lengths and seam `ties` at length 0) are
/// neighbours, not layers, and are excluded: a distance rather than a hop
/// count, so a narrow panel woven finer is excluded over the same area as
/// its neighbours, and the two sides of a seam do not push apart.
///
/// # Errors
/// [`weft_solver::collide::CollideError`] from the detector.
pub fn layer_self_collision(
    fabric: &Fabric,
    ties: &[Tie],
    d0: f64,
) -> Result<SelfCollision, weft_solver::collide::CollideError> {
    let exclusion = crate::layers::rest_exclusion(fabric, ties, 2.0 * d0)?;
    let segs = fabric.segment_ends();
    SelfCollision::new(segs, exclusion, 2.0 * d0)
}

/// Per panel of `garment`, the `(highest, mean)` node height (m) in `x`
/// (one position per node of the garment's fabric).
fn panel_heights(garment: &Garment, x: &[Vector3<f64>]) -> Vec<(f64, f64)> {
    garment
        .panels
        .iter()
        .map(|p| {
            let ys = x[p.first_node..p.first_node + p.nodes].iter().map(|x| x.y);
            let top = ys.clone().fold(f64::NEG_INFINITY, f64::max);
            (top, ys.sum::<f64>() / p.nodes.max(1) as f64)
        })
        .collect()
}

impl Drape {
    /// Writes `out/body.obj` (the body, m) and `out/scene.xml`, a Mitsuba 3
    /// scene of `yarns.txt` on it framed on the garment.
    fn write_mitsuba_scene(&self, out: &Path) -> Result<(), GarmentError> {
        self.body
            .write_obj(out.join("body.obj"), "weft drape: the body (m, Y up)", 5)?;
        let x = &self.state.x;
        let frame = x.iter().fold(
            ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]),
            |(lo, hi), p| {
                (
                    std::array::from_fn(|k| lo[k].min(p[k])),
                    std::array::from_fn(|k| hi[k].max(p[k])),
                )
            },
        );
        weft_io::write_mitsuba_scene(
            out.join("scene.xml"),
            &weft_io::MitsubaScene {
                curves_file: "yarns.txt",
                body_file: Some("body.obj"),
                frame,
                size: [800, 1000],
                samples: 64,
            },
        )?;
        Ok(())
    }
}

fn create_dir(d: &Path) -> Result<(), GarmentError> {
    std::fs::create_dir_all(d).map_err(|source| GarmentError::Io {
        path: d.to_path_buf(),
        source,
    })
}

/// Writes `preview.png` of the yarns at `x` on `body` (1200 x 900 with a
/// body, 1200 x 600 without: the yarns alone are wider than tall).
fn write_preview(
    out: &Path,
    fabric: &Fabric,
    x: &[Vector3<f64>],
    body: Option<&TriMesh>,
) -> Result<(), GarmentError> {
    let curves = YarnCurves::from_positions(fabric, x, 4)?;
    let height = if body.is_some() { 900 } else { 600 };
    weft_io::write_preview(out.join("preview.png"), &curves, body, 1200, height)?;
    Ok(())
}

/// The contact margin δ (m) of a fabric of yarn radius `radius` (m)
/// against the colliders of the drape and the Cusick test: `2R`.
pub(crate) fn contact_margin(radius: f64) -> f64 {
    2.0 * radius
}

/// A collider of `shape` for a fabric of stretch stiffness `k_s` (N) and
/// yarn radius `radius` (m), as the drape and the Cusick test use it:
/// penalty stiffness [`BODY_PENALTY`]` k_s / R` (N/m), friction
/// [`BODY_FRICTION`]; used with the margin [`contact_margin`].
///
/// # Errors
/// [`weft_solver::collide::CollideError::InvalidShape`] for a stiffness
/// that is not finite.
pub(crate) fn fabric_collider(
    shape: impl Into<weft_solver::collide::Shape>,
    k_s: f64,
    radius: f64,
) -> Result<Collider, weft_solver::collide::CollideError> {
    Collider::new(shape, BODY_PENALTY * k_s / radius, BODY_FRICTION)
}

/// The body as the solver's collision mesh; errors name the body.
fn body_mesh(body: &TriMesh, name: &str) -> Result<TriangleMesh, GarmentError> {
    let verts: Vec<Vector3<f64>> = body.vertices.iter().map(|v| Vector3::from(*v)).collect();
    TriangleMesh::from_triangles(name, &verts, &body.triangles).map_err(|e| GarmentError::Body {
        body: name.to_string(),
        message: e.to_string(),
    })
}

/// The solver's mesh as an I/O mesh (vertices and triangles), for previews.
pub(crate) fn to_trimesh(m: &TriangleMesh) -> TriMesh {
    TriMesh {
        vertices: m.vertices().iter().map(|v| [v.x, v.y, v.z]).collect(),
        triangles: m.triangles().to_vec(),
    }
}

/// Writes what every finished simulation of the library leaves in `out`
/// (created if missing): `final_state.json`, the yarn curves (`yarns.*` in
/// `formats`) and `preview.png` (on `body` if any), each atomically.
pub(crate) fn write_state_outputs(
    out: &Path,
    fabric: &Fabric,
    state: &State,
    formats: &[CurveFormat],
    body: Option<&TriMesh>,
) -> Result<(), GarmentError> {
    create_dir(out)?;
    weft_io::write_final_state(out.join("final_state.json"), state, fabric)?;
    weft_io::write_curves(
        out,
        "yarns",
        fabric,
        &state.x,
        formats,
        &CurveExportOptions::default(),
    )?;
    write_preview(out, fabric, &state.x, body)
}

/// Drapes the pattern file `pattern` with `opts`, in memory (no files
/// written; [`Drape::write_outputs`] writes them).
///
/// # Errors
/// See [`GarmentError`]: options, the pattern, the body, the solver, and
/// [`GarmentError::SlidOff`] with `strict`.
pub fn drape(
    pattern: &Path,
    opts: &DrapeOptions,
    progress: &mut dyn Progress,
) -> Result<Drape, GarmentError> {
    Run::new(opts, None)?.go(pattern, progress)
}

/// Drapes the pattern file `pattern` with `opts` and writes every output to
/// `out` (created if missing): `final_state.json`, `summary.json`, the yarn
/// curves, `preview.png`, and the frames under `out/frames/` with
/// `frame_dt > 0`. When the solver fails, `final_state.json` and
/// `preview.png` of the last good state are written before the error
/// returns; with `strict`, a garment that slid off is an error after all
/// outputs are written.
///
/// # Errors
/// As [`drape`], and output errors naming the file.
pub fn drape_to_dir(
    pattern: &Path,
    opts: &DrapeOptions,
    out: &Path,
    progress: &mut dyn Progress,
) -> Result<Drape, GarmentError> {
    create_dir(out)?;
    let formats = opts.curve_formats()?;
    let d = Run::new(opts, Some(out.to_path_buf()))?.go(pattern, progress)?;
    d.write_outputs(out, &formats)?;
    if opts.strict && d.summary.slid_off {
        return Err(slid_off_error(&d.summary, opts));
    }
    Ok(d)
}

fn slid_off_error(s: &DrapeSummary, opts: &DrapeOptions) -> GarmentError {
    let p = s.slid_part.clone().unwrap_or(SlidPart {
        part: "the garment".into(),
        top_drop_m: s.top_drop_m,
        centroid_drop_m: s.centroid_drop_m,
    });
    GarmentError::SlidOff {
        part: p.part,
        drop_m: p.top_drop_m,
        limit_m: opts.slide_limit,
        centroid_drop_m: p.centroid_drop_m,
    }
}

/// What slid down the body ([`DrapeOptions::slide_limit`]).
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct SlidPart {
    /// `the garment` or `panel 'NAME'`.
    pub part: String,
    /// Drop of its highest point (m, positive down): from the sewn garment
    /// for the garment, from where it was placed for a panel.
    pub top_drop_m: f64,
    /// Drop of its centroid (m, positive down), from the same reference.
    pub centroid_drop_m: f64,
}

/// The slide-off rule of [`DrapeOptions::slide_limit`] (`limit`, m): the
/// garment, if its highest point and centroid both sank more than `limit`
/// from the sewn garment (`top_drop`, `centroid_drop`, m); else the panel
/// with the largest top drop of those whose highest point sank more than
/// `1.5 limit` and centroid more than `0.5 limit` from where they were
/// placed; else `None`.
fn slid_part(
    top_drop: f64,
    centroid_drop: f64,
    panels: &[PanelWeave],
    limit: f64,
) -> Option<SlidPart> {
    if top_drop > limit && centroid_drop > limit {
        return Some(SlidPart {
            part: "the garment".into(),
            top_drop_m: top_drop,
            centroid_drop_m: centroid_drop,
        });
    }
    panels
        .iter()
        .filter(|p| {
            p.top_drop_from_placed_m > 1.5 * limit && p.centroid_drop_from_placed_m > 0.5 * limit
        })
        .max_by(|a, b| {
            a.top_drop_from_placed_m
                .total_cmp(&b.top_drop_from_placed_m)
        })
        .map(|p| SlidPart {
            part: format!("panel '{}'", p.name),
            top_drop_m: p.top_drop_from_placed_m,
            centroid_drop_m: p.centroid_drop_from_placed_m,
        })
}

/// The solver's seam ties ([`Tie`]) of a woven garment's seams.
pub fn seam_ties(garment: &Garment) -> Vec<Tie> {
    garment
        .seams
        .iter()
        .map(|t| Tie {
            node: t.node,
            other: t.other,
            t: t.t,
        })
        .collect()
}

/// The fabric's state (anchors and everything else from `fabric.initial`)
/// with positions, arc-length coordinates and their rates from the flat
/// vectors `q`, `v` (5 per node: x, y, z, u, v).
fn state_from(fabric: &Fabric, q: &[f64], v: &[f64]) -> State {
    let mut st = fabric.initial.clone();
    for i in 0..fabric.node_count() {
        let o = 5 * i;
        st.x[i] = Vector3::new(q[o], q[o + 1], q[o + 2]);
        st.u[i] = q[o + 3];
        st.v[i] = q[o + 4];
        st.x_dot[i] = Vector3::new(v[o], v[o + 1], v[o + 2]);
        st.u_dot[i] = v[o + 3];
        st.v_dot[i] = v[o + 4];
    }
    st
}

/// Largest seam-tie gap (m) at coordinates `q` (5 per node).
pub fn max_gap(ties: &[Tie], q: &[f64]) -> f64 {
    let x = |i: usize| Vector3::new(q[5 * i], q[5 * i + 1], q[5 * i + 2]);
    ties.iter()
        .map(|t| (x(t.node) - (x(t.other[0]) * (1.0 - t.t) + x(t.other[1]) * t.t)).norm())
        .fold(0.0, f64::max)
}

/// Deepest node and deepest segment point inside the collider (m, 0 if
/// none): the segment depth is the deepest of the nodes and of three
/// interior points per woven segment (at 1/4, 1/2 and 3/4 of its length).
pub fn penetrations(fabric: &Fabric, x: &[Vector3<f64>], body: &Collider) -> (f64, f64) {
    let node = x
        .par_iter()
        .map(|p| (-body.distance(p, 0.0).0).max(0.0))
        .reduce(|| 0.0, f64::max);
    let seg = fabric
        .elements
        .segments
        .par_iter()
        .map(|s| {
            (1..4)
                .map(|k| {
                    let t = k as f64 / 4.0;
                    let p = x[s.a] * (1.0 - t) + x[s.b] * t;
                    (-body.distance(&p, 0.0).0).max(0.0)
                })
                .fold(0.0, f64::max)
        })
        .reduce(|| 0.0, f64::max);
    (node, seg.max(node))
}

struct Run<'a> {
    opts: &'a DrapeOptions,
    out: Option<PathBuf>,
    formats: Vec<CurveFormat>,
    frames: usize,
    next_frame: f64,
    last_frame: f64,
    start: Instant,
}

/// The hook [`Run::run_phase`] calls after a relaxation check: `(run, the
/// level's simulation, the phase's start time, the frame clock at the
/// phase's start)`.
type OnCheck<'f, 'a> = dyn FnMut(&Run<'a>, &LevelSim, f64, f64) -> Result<(), GarmentError> + 'f;

/// The hook [`Run::animate`] calls after a relaxation check: [`OnCheck`]'s
/// arguments and the animation's measures so far.
type OnAnimationCheck<'f, 'a> =
    dyn FnMut(&Run<'a>, &LevelSim, f64, f64, AnimationCheckpoint) -> Result<(), GarmentError> + 'f;

/// What the drape has measured so far (for checkpoints).
#[derive(Default)]
struct Done {
    levels: Vec<LevelReport>,
    gap_sewn: f64,
    sewn_top: f64,
    sewn_centroid: f64,
    sewing_time: f64,
    placed_panels: Vec<(f64, f64)>,
    attached_labels: Vec<String>,
    attached_nodes: usize,
    routed_ties: usize,
}

/// The step control of a relaxation (a drape level, the Cusick test):
/// first step 1 ms, adaptive between 0.1 µs and `dt_max` (s), Newton
/// tolerance `newton_tolerance` relative to the step's force scale.
pub(crate) fn relax_settings(dt_max: f64, newton_tolerance: f64) -> Settings {
    Settings {
        dt: 1e-3,
        dt_max,
        dt_min: 1e-7,
        newton_tolerance,
        ..Settings::default()
    }
}

/// A simulation relaxed toward static equilibrium and its bookkeeping
/// ([`RelaxOptions`](crate::RelaxOptions)' two figures): shared by the
/// drape's levels and the Cusick test.
pub(crate) struct LevelSim {
    pub(crate) sim: Simulation,
    pub(crate) masses: Vec<f64>,
    pub(crate) prev_v: Vec<f64>,
    pub(crate) residual: f64,
    /// The node of [`Self::residual`] (`None` before the first step).
    pub(crate) residual_node: Option<usize>,
    pub(crate) steps: usize,
    pub(crate) newton: usize,
    pub(crate) cg: usize,
    /// When set, `(t, kinetic energy)` (s, J) after every accepted step.
    pub(crate) kinetic_trace: Option<Vec<[f64; 2]>>,
    /// The woven garment's fabric when the simulated one is not it (the
    /// `shell` model's triangles on the same nodes): outputs, frames and
    /// the measures along yarns use it ([`LevelSim::woven`]).
    pub(crate) woven: Option<Fabric>,
}

/// `½ Σ m_i |ẋ_i|²` (J) of lumped node masses `masses` (kg) and velocities
/// `v` (5 per node, m/s for the first three).
fn kinetic_energy(masses: &[f64], v: &[f64]) -> f64 {
    masses
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let v = &v[5 * i..5 * i + 3];
            0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
        })
        .sum()
}

impl LevelSim {
    /// Bookkeeping around `sim` (lumped masses of its fabric's initial
    /// state, no step taken).
    pub(crate) fn new(sim: Simulation) -> Self {
        let fabric = &sim.assembler.fabric;
        let masses = fabric.lumped_masses(&fabric.initial);
        let n = masses.len();
        Self {
            sim,
            masses,
            prev_v: vec![0.0; 5 * n],
            residual: f64::INFINITY,
            residual_node: None,
            steps: 0,
            newton: 0,
            cg: 0,
            kinetic_trace: None,
            woven: None,
        }
    }

    /// The woven fabric on the simulated nodes: [`LevelSim::woven`]'s, or
    /// the simulated fabric itself.
    pub(crate) fn woven(&self) -> &Fabric {
        self.woven.as_ref().unwrap_or(&self.sim.assembler.fabric)
    }

    /// Advances to `t_end` (s), updating the force residual (the worst
    /// node's net force over its weight, `m |Δẋ| / h / (m g)`) and the step
    /// counts, and calling `on_step` after every accepted step.
    pub(crate) fn advance_to(
        &mut self,
        t_end: f64,
        mut on_step: impl FnMut(&Simulation, &StepStats),
    ) -> Result<(), weft_solver::SolverError> {
        self.prev_v.clone_from(&self.sim.v);
        let LevelSim {
            sim,
            masses,
            prev_v,
            residual,
            residual_node,
            steps,
            newton,
            cg,
            kinetic_trace,
            woven: _,
        } = self;
        sim.advance_to(t_end, |s, st| {
            let mut worst = (0.0f64, None);
            for i in 0..masses.len() {
                if masses[i] > 0.0 {
                    let d = Vector3::new(
                        s.v[5 * i] - prev_v[5 * i],
                        s.v[5 * i + 1] - prev_v[5 * i + 1],
                        s.v[5 * i + 2] - prev_v[5 * i + 2],
                    )
                    .norm();
                    if d > worst.0 {
                        worst = (d, Some(i));
                    }
                }
            }
            *residual = worst.0 / (st.h * GRAVITY);
            *residual_node = worst.1;
            prev_v.clone_from(&s.v);
            *steps += 1;
            *newton += st.newton_iterations;
            *cg += st.cg_iterations;
            if let Some(trace) = kinetic_trace {
                trace.push([s.t, kinetic_energy(masses, &s.v)]);
            }
            on_step(s, st);
        })?;
        Ok(())
    }

    /// Whether the last chunk ended static by `r`'s two figures (kinetic
    /// energy below `½ M v_tol²`, residual below its tolerance).
    pub(crate) fn is_static(&self, r: &crate::RelaxOptions) -> bool {
        let total_mass: f64 = self.masses.iter().sum();
        self.kinetic() < 0.5 * total_mass * r.speed_tolerance.powi(2)
            && self.residual < r.residual_tolerance
    }

    pub(crate) fn kinetic(&self) -> f64 {
        kinetic_energy(&self.masses, &self.sim.v)
    }
}

impl<'a> Run<'a> {
    fn new(opts: &'a DrapeOptions, out: Option<PathBuf>) -> Result<Self, GarmentError> {
        opts.validate()?;
        Ok(Self {
            opts,
            out,
            formats: opts.curve_formats()?,
            frames: 0,
            next_frame: 0.0,
            last_frame: 0.0,
            start: Instant::now(),
        })
    }

    /// The checkpoint to resume from (with [`DrapeOptions::resume`]),
    /// checked against the pattern's and the options' digests.
    fn read_resume(
        &self,
        pattern_file: &Path,
        pattern_digest: &str,
        options_digest: &str,
    ) -> Result<Option<DrapeCheckpoint>, GarmentError> {
        if !self.opts.resume {
            return Ok(None);
        }
        let out = self.out.as_ref().ok_or_else(|| GarmentError::Option {
            option: "resume".into(),
            expected: "an output folder holding checkpoint.json (drape_to_dir)".into(),
            found: "none".into(),
        })?;
        let cp: DrapeCheckpoint = weft_io::checkpoint::read_checkpoint(out)?;
        let file = out.join(weft_io::checkpoint::CHECKPOINT_FILE);
        let mismatch = |what: &str, theirs: &str, ours: &str| GarmentError::Option {
            option: "resume".into(),
            expected: format!(
                "a checkpoint of {} with the same {what} ({file} is of {}, {what} digest {theirs}; now {ours})",
                pattern_file.display(),
                cp.pattern,
                file = file.display()
            ),
            found: "another".into(),
        };
        if cp.pattern_digest != pattern_digest {
            return Err(mismatch("pattern file", &cp.pattern_digest, pattern_digest));
        }
        if cp.options_digest != options_digest {
            return Err(mismatch("options", &cp.options_digest, options_digest));
        }
        Ok(Some(cp))
    }

    /// Sets a level's simulation to the checkpoint's state and the frame
    /// clock to its phase's start.
    fn restore(
        &self,
        ls: &mut LevelSim,
        cp: &DrapeCheckpoint,
        t_global: &mut f64,
    ) -> Result<(), GarmentError> {
        ls.sim.restore(&cp.sim).map_err(|e| GarmentError::Option {
            option: "resume".into(),
            expected: "a checkpoint that fits the level's simulation".into(),
            found: e,
        })?;
        ls.steps = cp.steps;
        ls.newton = cp.newton;
        ls.cg = cp.cg;
        *t_global = cp.phase_t_global;
        Ok(())
    }

    /// The body to sew and drape on (an animated body's frame 0), its name,
    /// and an animated body's frames.
    fn load_body(&self) -> Result<(TriMesh, String, Option<MeshAnimation>), GarmentError> {
        let failed = |name: &String, e: &dyn std::fmt::Display| GarmentError::Body {
            body: name.clone(),
            message: e.to_string(),
        };
        match &self.opts.body {
            Body::Obj { path, scale } => {
                let name = path.display().to_string();
                let mut m = TriMesh::from_obj(path).map_err(|e| failed(&name, &e))?;
                for v in &mut m.vertices {
                    for c in v.iter_mut() {
                        *c *= scale;
                    }
                }
                Ok((m, name, None))
            }
            Body::Mannequin => Ok((
                weft_io::mannequin::generate(),
                "weft mannequin (data/bodies/mannequin.obj)".into(),
                None,
            )),
            Body::Animation { frames, fps, scale } => {
                let name = frames.display().to_string();
                let a = MeshAnimation::from_obj_sequence(frames, *fps, *scale, Vector3::zeros())
                    .map_err(|e| failed(&name, &e))?;
                Ok((to_trimesh(a.rest()), name, Some(a)))
            }
        }
    }

    /// Writes a frame of yarn curves if one is due at simulated time `t`
    /// (or, with `phase_end`, if none was written at `t` yet).
    fn frame(
        &mut self,
        t: f64,
        fabric: &Fabric,
        q: &[f64],
        phase_end: bool,
    ) -> Result<(), GarmentError> {
        let (Some(out), true) = (&self.out, self.opts.frame_dt > 0.0) else {
            return Ok(());
        };
        let due = t + 1e-9 >= self.next_frame;
        let written_at_t = self.frames > 0 && (self.last_frame - t).abs() < 1e-9;
        let end_frame = phase_end && !written_at_t;
        if !due && !end_frame {
            return Ok(());
        }
        let dir = out.join("frames");
        create_dir(&dir)?;
        weft_io::write_curves(
            &dir,
            &format!("frame_{:04}", self.frames),
            fabric,
            &positions(q),
            &self.formats,
            &CurveExportOptions::default(),
        )?;
        self.frames += 1;
        self.last_frame = t;
        if due {
            self.next_frame = t + self.opts.frame_dt;
        }
        Ok(())
    }

    /// Runs `sim` under its current settings in chunks until `max_time`
    /// (or, with `relax`, until static after `min_time`), from the phase's
    /// start `phase_t0` (the current time unless resumed). Every chunk
    /// starts with a fresh preconditioner, and `on_check(run, ls, t0,
    /// t_global at the phase start)` is called after each chunk that does
    /// not end the phase (checkpoints). Returns the simulated time and
    /// whether it ended static.
    #[allow(clippy::too_many_arguments)]
    fn run_phase(
        &mut self,
        ls: &mut LevelSim,
        phase: Phase,
        level: usize,
        spacing: f64,
        max_time: f64,
        relax: bool,
        body: &TriMesh,
        t_global: &mut f64,
        phase_t0: Option<f64>,
        on_check: &mut OnCheck<'_, 'a>,
        progress: &mut dyn Progress,
    ) -> Result<(f64, bool), GarmentError> {
        let r = &self.opts.relax;
        // A resumed phase keeps its start time.
        let t0 = phase_t0.unwrap_or(ls.sim.t);
        progress.phase_start(phase, max_time);
        let mut converged = false;
        while ls.sim.t - t0 < max_time - 1e-9 {
            let chunk = if self.opts.frame_dt > 0.0 {
                r.check_interval.min(self.opts.frame_dt)
            } else {
                r.check_interval
            };
            let t_end = (ls.sim.t + chunk).min(t0 + max_time);
            // As a drape resumed here does: the two stay bit-identical.
            ls.sim.forget_reused_preconditioner();
            let res = ls.advance_to(t_end, |s, st| progress.step(s.t - t0, st));
            if let Err(e) = res {
                progress.phase_end();
                if let Some(out) = &self.out {
                    let fabric = ls.woven();
                    let state = state_from(fabric, &ls.sim.q, &ls.sim.v);
                    weft_io::write_final_state(out.join("final_state.json"), &state, fabric)?;
                    write_preview(out, fabric, &state.x, Some(body))?;
                }
                return Err(GarmentError::Solver {
                    phase: phase.name(),
                    level,
                    spacing_mm: spacing * 1e3,
                    t: ls.sim.t,
                    message: e.to_string(),
                    out: self.out.clone(),
                });
            }
            self.frame(*t_global + ls.sim.t - t0, ls.woven(), &ls.sim.q, false)?;
            if relax && ls.sim.t - t0 >= r.min_time - 1e-9 && ls.is_static(r) {
                converged = true;
                break;
            }
            if ls.sim.t - t0 < max_time - 1e-9 {
                on_check(self, ls, t0, *t_global)?;
            }
        }
        progress.phase_end();
        let dt = ls.sim.t - t0;
        self.frame(*t_global + dt, ls.woven(), &ls.sim.q, true)?;
        *t_global += dt;
        Ok((dt, converged))
    }

    /// Plays `animation` on the final level from the current time (or,
    /// with `resume = (t0, measures)`, from a checkpoint taken while it
    /// played, frame 0 shown at simulated time `t0`): the body collider
    /// `still` (its rest pose) is replaced by the animated body with the
    /// same contact parameters, the garment runs for the animation's
    /// duration plus [`DrapeOptions::animation_settle_s`] (frames written
    /// as in the other phases), and the penetration is checked against the
    /// moving body every `relax.check_interval`, after which `on_check` gets
    /// the measures so far (checkpoints). `draping_time_s` is the level's
    /// draping time before it (s, kept in checkpoints). Returns the report
    /// and the collider in its last pose.
    #[allow(clippy::too_many_arguments)]
    fn animate(
        &mut self,
        ls: &mut LevelSim,
        animation: MeshAnimation,
        still: &Collider,
        margin: f64,
        level: usize,
        spacing: f64,
        body: &TriMesh,
        t_global: &mut f64,
        draping_time_s: f64,
        resume: Option<(f64, &AnimationCheckpoint)>,
        on_check: &mut OnAnimationCheck<'_, 'a>,
        progress: &mut dyn Progress,
    ) -> Result<(AnimationReport, Collider), GarmentError> {
        let (frames, fps) = (animation.frame_count(), animation.fps());
        let duration = animation.duration() + self.opts.animation_settle_s;
        let body_shift = {
            let mean = |x: &[Vector3<f64>]| x.iter().sum::<Vector3<f64>>() / x.len().max(1) as f64;
            let (first, _) = animation.state_at(f64::NEG_INFINITY);
            let (last, _) = animation.state_at(f64::INFINITY);
            mean(&last) - mean(&first)
        };
        let shown_at = resume.map_or(ls.sim.t, |(t0, _)| t0);
        let resumed = resume.map(|(_, a)| a);
        let mut moving = Collider::animated(
            std::sync::Arc::new(animation.starting_at(shown_at)),
            still.stiffness,
            still.friction,
        )
        .map_err(|e| GarmentError::Body {
            body: "animation".into(),
            message: e.to_string(),
        })?;
        moving.friction_speed = still.friction_speed;
        ls.sim.assembler.contact.colliders = vec![(moving, margin)];
        let start_time_s = resumed.map_or(*t_global, |a| a.start_time_s);
        let wall = Instant::now();
        let earlier_wall = resumed.map_or(0.0, |a| a.wall_s);
        let steps0 = resumed.map_or(ls.steps, |a| a.steps_before);
        let centroid = |ls: &LevelSim| {
            let x = positions(&ls.sim.q);
            x.iter().sum::<Vector3<f64>>() / x.len().max(1) as f64
        };
        let c0 = resumed.map_or_else(|| centroid(ls), |a| a.centroid_start_m.into());
        let mut worst = resumed.map_or([0.0f64; 2], |a| {
            [a.max_penetration_m, a.max_segment_penetration_m]
        });
        let check = |ls: &LevelSim, worst: &mut [f64; 2]| {
            let x = positions(&ls.sim.q);
            let (n, sg) = penetrations(ls.woven(), &x, &ls.sim.assembler.contact.colliders[0].0);
            *worst = [worst[0].max(n), worst[1].max(sg)];
        };
        ls.kinetic_trace = Some(resumed.map_or_else(Vec::new, |a| a.kinetic_energy_j.clone()));
        let (played, _) = self.run_phase(
            ls,
            Phase::Animating,
            level,
            spacing,
            duration,
            false,
            body,
            t_global,
            resume.map(|(t0, _)| t0),
            &mut |run, ls, t0, tg| {
                check(ls, &mut worst);
                let measures = AnimationCheckpoint {
                    start_time_s,
                    draping_time_s,
                    steps_before: steps0,
                    centroid_start_m: c0.into(),
                    max_penetration_m: worst[0],
                    max_segment_penetration_m: worst[1],
                    kinetic_energy_j: ls.kinetic_trace.clone().unwrap_or_default(),
                    wall_s: earlier_wall + wall.elapsed().as_secs_f64(),
                };
                on_check(run, ls, t0, tg, measures)
            },
            progress,
        )?;
        check(ls, &mut worst);
        let t0 = ls.sim.t - played;
        let kinetic_energy_j = ls
            .kinetic_trace
            .take()
            .unwrap_or_default()
            .into_iter()
            .map(|[t, e]| [t - t0, e])
            .collect();
        let report = AnimationReport {
            frames,
            fps,
            start_time_s,
            played_s: played,
            steps: ls.steps - steps0,
            wall_time_s: earlier_wall + wall.elapsed().as_secs_f64(),
            max_penetration_m: worst[0],
            max_segment_penetration_m: worst[1],
            centroid_shift_m: (centroid(ls) - c0).into(),
            body_centroid_shift_m: body_shift.into(),
            kinetic_energy_j,
        };
        Ok((report, ls.sim.assembler.contact.colliders[0].0.clone()))
    }

    fn go(
        mut self,
        pattern_file: &Path,
        progress: &mut dyn Progress,
    ) -> Result<Drape, GarmentError> {
        let opts = self.opts;
        if opts.model == crate::DrapeModel::Sbd {
            return self.go_sbd(pattern_file, progress);
        }
        let pattern = self.load_pattern(pattern_file)?;
        let (mut body, body_name, mut animation) = self.load_body()?;
        // An animated body's rest pose is already checked and built.
        let mesh = match &animation {
            Some(a) => a.rest().clone(),
            None => body_mesh(&body, &body_name)?,
        };
        let levels = drape_levels(opts);
        let gravity = Vector3::new(0.0, -GRAVITY, 0.0);
        let mut prev: Option<(Garment, Vec<f64>, Vec<f64>)> = None;
        let mut last_crossings = Vec::new();
        let mut t_global = 0.0;
        let pattern_digest = weft_io::checkpoint::file_digest(pattern_file)?;
        let options_digest = opts.digest();
        let mut resume = self.read_resume(pattern_file, &pattern_digest, &options_digest)?;
        let mut earlier_wall = 0.0;
        let mut done = Done::default();
        if let Some(cp) = &resume {
            done = Done {
                levels: cp.levels.clone(),
                gap_sewn: cp.gap_sewn,
                sewn_top: cp.sewn_top,
                sewn_centroid: cp.sewn_centroid,
                sewing_time: cp.sewing_time,
                placed_panels: cp.placed_panels.clone(),
                attached_labels: cp.attached_labels.clone(),
                attached_nodes: cp.attached_nodes,
                routed_ties: cp.routed_ties,
            };
            self.frames = cp.frames;
            self.next_frame = cp.next_frame;
            self.last_frame = cp.last_frame;
            earlier_wall = cp.wall_s;
        }
        let mut last_checkpoint = Instant::now();
        let mut last_collider = None;
        let mut animation_report = None;
        for (
            level,
            &DrapeLevel {
                spacing: s,
                sliding,
            },
        ) in levels.iter().enumerate()
        {
            if resume.as_ref().is_some_and(|cp| level < cp.level) {
                continue;
            }
            // The checkpoint to resume from, if it was taken at this level.
            let here = resume.take_if(|cp| cp.level == level);
            let level_offset = here.as_ref().map_or(0.0, |cp| cp.level_wall_s);
            let level_start = Instant::now();
            let mm = s * 1e3;
            let shell = opts.model == crate::DrapeModel::Shell;
            let self_collision = mm <= opts.self_collision_below_mm * (1.0 + 1e-9)
                || (shell && opts.shell_self_collision);
            let garment = self.weave(&pattern, s, sliding)?;
            let nodes = garment.fabric.node_count();
            progress.level(level, s, nodes);
            let narrow = garment
                .panels
                .iter()
                .filter(|p| p.spacing[0] < s * (1.0 - 1e-9))
                .count();
            let ties = seam_ties(&garment);
            let mat = &garment.fabric.materials[0];
            let (k_s, radius) = (mat.stretch_stiffness, mat.radius);
            let margin = contact_margin(radius);
            let collider =
                fabric_collider(mesh.clone(), k_s, radius).map_err(|e| GarmentError::Body {
                    body: body_name.clone(),
                    message: e.to_string(),
                })?;
            // The simulated fabric: the woven one, or (shell) triangles on
            // its nodes with ties for the nodes no triangle holds.
            let (mut fabric, stray_ties) = if shell {
                crate::shell::implicit_fabric(&pattern, &garment, opts)?
            } else {
                (garment.fabric.clone(), Vec::new())
            };
            // The level's starting state: carried from the coarser level
            // (or, resuming, as the checkpoint recorded it).
            let mut start_state: Option<(Vec<f64>, Vec<f64>)> = None;
            if let Some(cp) = here.as_ref().filter(|_| level > 0) {
                start_state = Some((cp.level_q0.clone(), cp.level_v0.clone()));
            } else if let Some((coarse, q, v)) = &prev {
                let (mut qn, vn) = carry_state(coarse, q, v, &garment);
                // The fit is not an interpolation: lift any node it put
                // into the body back out to the contact distance.
                qn.par_chunks_mut(5).for_each(|c| {
                    let x = Vector3::new(c[0], c[1], c[2]);
                    let (phi, n) = collider.distance(&x, 0.0);
                    if phi < radius + margin {
                        let y = x + n * (radius + margin - phi);
                        c[..3].copy_from_slice(y.as_slice());
                    }
                });
                start_state = Some((qn, vn));
            }
            if let Some((qn, vn)) = &start_state {
                let mut st = state_from(&fabric, qn, vn);
                st.anchors = fabric
                    .elements
                    .anchors
                    .iter()
                    .map(|a| st.arc(a.node, a.family))
                    .collect();
                fabric.initial = st;
            }
            let settings = relax_settings(opts.dt_max, opts.newton_tolerance);
            let sim_ties = ties.iter().cloned().chain(stray_ties).collect();
            let mut sim = Simulation::with_ties(fabric, gravity, settings, vec![], sim_ties);
            sim.assembler.contact.colliders = vec![(collider.clone(), margin)];
            // Segment contact while draping (sewing pulls panels around the
            // body from afar, where midpoints would only snag).
            sim.assembler.contact.segments = opts.segment_contact && level > 0;
            if self_collision {
                let option_error = |e: weft_solver::collide::CollideError| GarmentError::Option {
                    option: "self_collision_below_mm".into(),
                    expected: "a fabric self-collision can be built for".into(),
                    found: e.to_string(),
                };
                let (d0, detector, law) = if shell {
                    // Vertex–face and edge–edge pairs of the triangle mesh.
                    let d0 = (2.0 * radius + margin).max(crate::shell::SHELL_LAYER_THICKNESS * s);
                    let exclusion = crate::shell::SHELL_EXCLUSION_SPACINGS * s;
                    let det = crate::shell::mesh_self_collision(
                        &garment,
                        &sim.assembler.fabric,
                        sim.assembler.ties(),
                        d0,
                        exclusion,
                    );
                    (d0, det.map_err(option_error)?, RepulsionLaw::Cubic)
                } else {
                    // The woven fabric's yarn segments, under the C² cubic
                    // law (DrapeOptions::self_collision_below_mm says why).
                    let d0 = (2.0 * radius + margin).max(LAYER_THICKNESS * s);
                    let det = layer_self_collision(&garment.fabric, &ties, d0);
                    (d0, det.map_err(option_error)?, RepulsionLaw::Cubic)
                };
                sim.assembler.contact.self_collision = Some(SelfContact::new(
                    detector,
                    d0,
                    BODY_PENALTY * k_s / radius,
                    law,
                ));
            }
            let gap0 = max_gap(&ties, &sim.q).max(s);
            sim.assembler.tie_stiffness = TIE_FRACTION * k_s / gap0;
            sim.assembler.tie_damping = 0.1 * sim.assembler.tie_stiffness;
            let mut ls = LevelSim::new(sim);
            if shell {
                ls.woven = Some(garment.fabric.clone());
            }
            let (q0, v0) = start_state.unwrap_or_default();
            // Writes a checkpoint when one is due (after a relaxation check).
            let mut on_check = |run: &Run<'a>,
                                ls: &LevelSim,
                                t0: f64,
                                tg: f64,
                                sewing: bool,
                                done: &Done,
                                animation: Option<AnimationCheckpoint>|
             -> Result<(), GarmentError> {
                let (Some(out), Some(every)) = (&run.out, run.opts.checkpoint_every_s) else {
                    return Ok(());
                };
                if last_checkpoint.elapsed().as_secs_f64() < every {
                    return Ok(());
                }
                let cp = DrapeCheckpoint {
                    version: DRAPE_CHECKPOINT_VERSION,
                    pattern: pattern_file.display().to_string(),
                    pattern_digest: pattern_digest.clone(),
                    options_digest: options_digest.clone(),
                    level,
                    sewing,
                    phase_t0: t0,
                    phase_t_global: tg,
                    level_q0: q0.clone(),
                    level_v0: v0.clone(),
                    sim: ls.sim.checkpoint(),
                    steps: ls.steps,
                    newton: ls.newton,
                    cg: ls.cg,
                    level_wall_s: level_offset + level_start.elapsed().as_secs_f64(),
                    wall_s: earlier_wall + run.start.elapsed().as_secs_f64(),
                    levels: done.levels.clone(),
                    gap_sewn: done.gap_sewn,
                    sewn_top: done.sewn_top,
                    sewn_centroid: done.sewn_centroid,
                    sewing_time: done.sewing_time,
                    placed_panels: done.placed_panels.clone(),
                    attached_labels: done.attached_labels.clone(),
                    attached_nodes: done.attached_nodes,
                    routed_ties: done.routed_ties,
                    frames: run.frames,
                    next_frame: run.next_frame,
                    last_frame: run.last_frame,
                    animation,
                };
                weft_io::checkpoint::write_checkpoint(out, &cp)?;
                last_checkpoint = Instant::now();
                Ok(())
            };
            if level == 0 {
                let x0 = positions(&ls.sim.q);
                done.placed_panels = panel_heights(&garment, &x0);
                // Attachments: labelled edges held to the nearest body point.
                let labels: Vec<String> = match &opts.attach {
                    Some(l) => l.clone(),
                    None if has_upper_part(
                        &garment,
                        &ls.sim.q,
                        &DEFAULT_ATTACH_LABELS,
                        UPPER_PART_REACH,
                    ) =>
                    {
                        Vec::new()
                    }
                    None => DEFAULT_ATTACH_LABELS
                        .iter()
                        .filter(|l| !garment.labelled_nodes(l).is_empty())
                        .map(|l| l.to_string())
                        .collect(),
                };
                let mut attachments = Vec::new();
                for label in &labels {
                    let nodes = garment.labelled_nodes(label.trim());
                    if nodes.is_empty() {
                        let mut known: Vec<&str> = garment
                            .panels
                            .iter()
                            .flat_map(|p| &p.edges)
                            .filter_map(|e| e.label.as_deref())
                            .collect();
                        known.sort_unstable();
                        known.dedup();
                        return Err(GarmentError::UnknownLabel {
                            file: pattern.file.clone(),
                            label: label.clone(),
                            known: if known.is_empty() {
                                "none".into()
                            } else {
                                known.join(", ")
                            },
                        });
                    }
                    // The shell model's membrane joins the held yarn ends,
                    // so it is held more gently
                    // (`shell::SHELL_ATTACHMENT_FRACTION`).
                    let stiffness = ls.sim.assembler.tie_stiffness
                        * if shell {
                            crate::shell::SHELL_ATTACHMENT_FRACTION
                        } else {
                            1.0
                        };
                    for node in nodes {
                        let x = x0[node];
                        let (phi, nrm) = collider.distance(&x, 0.0);
                        attachments.push(Attachment {
                            node,
                            point: x - nrm * (phi - radius - margin),
                            stiffness,
                        });
                    }
                }
                done.attached_nodes = attachments.len();
                // Seams across the body go over it; a tube's seams beside
                // the limb (a sleeve's) close against it.
                let routes = sewing_routes(&garment, &x0, &collider, radius + margin);
                done.routed_ties = routes.len();
                // Routed seams are pulled to their meeting points at the
                // ties' own stiffness, whatever the model.
                attachments.extend(route_attachments(&garment, &routes).into_iter().map(
                    |(node, point)| Attachment {
                        node,
                        point,
                        stiffness: ls.sim.assembler.tie_stiffness,
                    },
                ));
                done.attached_labels = labels;
                ls.sim.assembler.attachments = attachments;
                if here.is_none() {
                    self.frame(0.0, ls.woven(), &ls.sim.q, false)?;
                }
                // Sewing: no gravity, no friction against the body, drag.
                ls.sim.assembler.gravity = Vector3::zeros();
                ls.sim.assembler.drag = SEWING_DRAG;
                let frictionless = Collider::new(collider.shape.clone(), collider.stiffness, 0.0)
                    .map_err(|e| GarmentError::Body {
                    body: body_name.clone(),
                    message: e.to_string(),
                })?;
                ls.sim.assembler.contact.colliders = vec![(frictionless, margin)];
                let sewn = here.as_ref().is_some_and(|cp| !cp.sewing);
                if let Some(cp) = &here {
                    self.restore(&mut ls, cp, &mut t_global)?;
                }
                if !sewn {
                    let (dt, _) = self.run_phase(
                        &mut ls,
                        Phase::Sewing,
                        level,
                        s,
                        opts.sew_duration,
                        false,
                        &body,
                        &mut t_global,
                        here.as_ref().map(|cp| cp.phase_t0),
                        &mut |run, ls, t0, tg| on_check(run, ls, t0, tg, true, &done, None),
                        progress,
                    )?;
                    done.sewing_time = dt;
                    done.gap_sewn = max_gap(&ties, &ls.sim.q);
                    let xs0 = positions(&ls.sim.q);
                    done.sewn_top = xs0.iter().map(|x| x.y).fold(f64::NEG_INFINITY, f64::max);
                    done.sewn_centroid =
                        xs0.iter().map(|x| x.y).sum::<f64>() / xs0.len().max(1) as f64;
                }
                ls.sim.assembler.attachments.clear();
                ls.sim.assembler.gravity = gravity;
                ls.sim.assembler.drag = 0.0;
                ls.sim.assembler.contact.colliders = vec![(collider.clone(), margin)];
                ls.sim.assembler.contact.segments = opts.segment_contact;
            }
            let max_time = if level == 0 {
                opts.relax.max_time
            } else {
                0.5 * opts.relax.max_time
            };
            // Resuming while draping or animating: that phase's start time.
            let phase_t0 = match &here {
                Some(cp) if !cp.sewing => {
                    if level > 0 {
                        self.restore(&mut ls, cp, &mut t_global)?;
                    }
                    Some(cp.phase_t0)
                }
                _ => None,
            };
            // Resuming while the animation played: the drape before it is done.
            let animating = here
                .as_ref()
                .and_then(|cp| cp.animation.as_ref().map(|a| (cp.phase_t0, a)));
            let (draping_time, mut is_static) = match animating {
                Some((_, a)) => (a.draping_time_s, false),
                None => self.run_phase(
                    &mut ls,
                    Phase::Draping,
                    level,
                    s,
                    max_time,
                    true,
                    &body,
                    &mut t_global,
                    phase_t0,
                    &mut |run, ls, t0, tg| on_check(run, ls, t0, tg, false, &done, None),
                    progress,
                )?,
            };
            // The final level plays an animated body's frames; the level's
            // report then measures against its last pose.
            let mut collider = collider;
            if level + 1 == levels.len()
                && let Some(a) = animation.take()
            {
                let (report, posed) = self.animate(
                    &mut ls,
                    a,
                    &collider,
                    margin,
                    level,
                    s,
                    &body,
                    &mut t_global,
                    draping_time,
                    animating,
                    &mut |run, ls, t0, tg, a| on_check(run, ls, t0, tg, false, &done, Some(a)),
                    progress,
                )?;
                is_static = ls.is_static(&opts.relax);
                if let weft_solver::collide::Shape::Mesh(m) = &posed.shape {
                    body = to_trimesh(m);
                }
                collider = posed;
                animation_report = Some(report);
            }
            let x = positions(&ls.sim.q);
            let (pen_node, pen_seg) = penetrations(ls.woven(), &x, &collider);
            let crossings_through = if shell {
                // The mesh's own triangles and edges, not the weave's
                // stencils (see `shell::mesh_layer_crossings`).
                crate::shell::mesh_layer_crossings(
                    &garment,
                    &crate::shell::mesh_triangles(&ls.sim.assembler.fabric),
                    ls.sim.assembler.ties(),
                    &x,
                    LAYER_EXCLUSION_SPACINGS * s,
                )
                .expect("the mesh's triangles and ties name garment nodes")
            } else {
                layer_crossings(ls.woven(), &ties, &x, LAYER_EXCLUSION_SPACINGS * s)
            };
            if !crossings_through.is_empty() {
                let c = &crossings_through[0];
                progress.note(&format!(
                    "warning: level {level} ({mm} mm): {} yarn segments pass through the garment's own fabric (the first at ({:.3}, {:.3}, {:.3}) m)",
                    crossings_through.len(),
                    c.point[0],
                    c.point[1],
                    c.point[2]
                ));
            }
            last_crossings = crossings_through;
            let (yarns, crossings, _) = garment.totals();
            let kinetic = ls.kinetic();
            let total_mass: f64 = ls.masses.iter().sum();
            let report = LevelReport {
                level,
                spacing_m: s,
                yarns,
                crossings,
                nodes,
                seam_ties: ties.len(),
                narrow_panels: narrow,
                attached_nodes: if level == 0 { done.attached_nodes } else { 0 },
                sliding,
                max_slide_m: max_slide(&garment.fabric, &ls.sim.q),
                self_collision,
                steps: ls.steps,
                rejected: ls.sim.rejections.values().sum(),
                rejections: ls.sim.rejection_counts(),
                newton_iterations: ls.newton,
                cg_iterations: ls.cg,
                wall_time_s: level_offset + level_start.elapsed().as_secs_f64(),
                sewing_time_s: if level == 0 { done.sewing_time } else { 0.0 },
                draping_time_s: draping_time,
                kinetic_energy_j: kinetic,
                kinetic_threshold_j: 0.5 * total_mass * opts.relax.speed_tolerance.powi(2),
                residual: ls.residual,
                residual_threshold: opts.relax.residual_tolerance,
                residual_at: ls
                    .residual_node
                    .and_then(|n| ResidualSite::of(&garment, n, &x)),
                is_static,
                max_seam_gap_m: max_gap(&ties, &ls.sim.q),
                max_penetration_m: pen_node,
                max_segment_penetration_m: pen_seg,
                layer_crossings: last_crossings.len(),
                hem_height_m: x.iter().map(|p| p.y).fold(f64::INFINITY, f64::min),
                centroid_height_m: x.iter().map(|p| p.y).sum::<f64>() / x.len().max(1) as f64,
            };
            if !is_static {
                let when = match &animation_report {
                    Some(_) if level + 1 == levels.len() => format!(
                        "{:.2} s after the animation's last frame",
                        opts.animation_settle_s
                    ),
                    _ => format!("after {draping_time:.2} s"),
                };
                let site = report.residual_at.as_ref().map_or_else(String::new, |r| {
                    format!(
                        " at node {} of panel '{}' ({:.3}, {:.3}, {:.3}) m",
                        r.node, r.panel, r.position_m[0], r.position_m[1], r.position_m[2]
                    )
                });
                progress.note(&format!(
                    "warning: level {level} ({mm} mm) is not static {when}: kinetic energy {:.2e} J (threshold {:.2e} J), residual {:.3}{site} (threshold {})",
                    report.kinetic_energy_j,
                    report.kinetic_threshold_j,
                    report.residual,
                    report.residual_threshold
                ));
            }
            done.levels.push(report);
            let q = std::mem::take(&mut ls.sim.q);
            let v = std::mem::take(&mut ls.sim.v);
            prev = Some((garment, q, v));
            last_collider = Some(collider);
        }
        let (garment, q, v) = prev.expect("at least one level");
        let body_collider = last_collider.expect("at least one level");
        let finished = Finished {
            pattern,
            pattern_file,
            garment,
            q,
            v,
            body_collider,
            body,
            body_name,
            done,
            last_crossings,
            spacing: levels.last().expect("a level").spacing,
            earlier_wall,
            animation: animation_report,
            model: opts.model,
        };
        self.finish(finished, progress)
    }

    /// The pattern file, graded by [`DrapeOptions::grade`].
    fn load_pattern(&self, pattern_file: &Path) -> Result<Pattern, GarmentError> {
        let pattern = Pattern::from_file(pattern_file)?;
        Ok(if self.opts.grade != 1.0 {
            pattern.graded(self.opts.grade)
        } else {
            pattern
        })
    }

    /// The pattern woven at spacing `s` (m) with the preset's material
    /// (strain-rate damping scaled by [`DrapeOptions::damping_scale`]),
    /// sliding on or off.
    fn weave(&self, pattern: &Pattern, s: f64, sliding: bool) -> Result<Garment, GarmentError> {
        let mut wopts = WeaveOptions::new(s);
        wopts.material = self.opts.material.material(s, sliding);
        wopts.material.damping = wopts.material.damping.scaled(self.opts.damping_scale);
        wopts.sliding = sliding;
        wopts.narrow_panel_halvings = NARROW_PANEL_HALVINGS;
        Ok(weave_garment(pattern, &wopts)?)
    }

    /// The `sbd` model's drape ([`crate::shell`]): one level at
    /// `spacing_mm`, sewn and draped with strain-based dynamics, summarised
    /// as the yarn drape is.
    fn go_sbd(
        self,
        pattern_file: &Path,
        progress: &mut dyn Progress,
    ) -> Result<Drape, GarmentError> {
        let opts = self.opts;
        let pattern = self.load_pattern(pattern_file)?;
        let (body, body_name, _) = self.load_body()?;
        let body_error = |e: &dyn std::fmt::Display| GarmentError::Body {
            body: body_name.clone(),
            message: e.to_string(),
        };
        let mesh = body_mesh(&body, &body_name)?;
        let s = opts.spacing_mm * 1e-3;
        let garment = self.weave(&pattern, s, false)?;
        let nodes = garment.fabric.node_count();
        progress.level(0, s, nodes);
        let mat = &garment.fabric.materials[0];
        let collider =
            fabric_collider(mesh, mat.stretch_stiffness, mat.radius).map_err(|e| body_error(&e))?;
        let placed_panels = panel_heights(&garment, &garment.fabric.initial.x);
        let level_start = Instant::now();
        let run =
            crate::shell::sew_and_drape(&pattern, &garment, collider.clone(), opts, progress)?;
        let x = run.sim.positions().to_vec();
        let ties = seam_ties(&garment);
        let (pen_node, pen_seg) = penetrations(&garment.fabric, &x, &collider);
        let triangles: Vec<[usize; 3]> = crate::shell::garment_mesh(&pattern, &garment)?
            .triangles()
            .iter()
            .map(|t| t.map(|i| i as usize))
            .collect();
        let crossings_through = crate::shell::mesh_layer_crossings(
            &garment,
            &triangles,
            &ties,
            &x,
            LAYER_EXCLUSION_SPACINGS * s,
        )
        .expect("the mesh's triangles and the seam ties name garment nodes");
        let (q, v) = crate::shell::fabric_state(&garment, &run.sim);
        let (yarns, crossings, _) = garment.totals();
        let total_mass: f64 = run.sim.masses().iter().sum();
        let report = LevelReport {
            level: 0,
            spacing_m: s,
            yarns,
            crossings,
            nodes,
            seam_ties: ties.len(),
            narrow_panels: garment
                .panels
                .iter()
                .filter(|p| p.spacing[0] < s * (1.0 - 1e-9))
                .count(),
            attached_nodes: 0,
            sliding: false,
            max_slide_m: 0.0,
            self_collision: opts.shell_self_collision,
            steps: run.steps,
            rejected: 0,
            rejections: Default::default(),
            newton_iterations: 0,
            cg_iterations: 0,
            wall_time_s: level_start.elapsed().as_secs_f64(),
            sewing_time_s: run.sewing_time,
            draping_time_s: run.draping_time,
            kinetic_energy_j: run.sim.step_kinetic_energy(),
            kinetic_threshold_j: 0.5 * total_mass * opts.relax.speed_tolerance.powi(2),
            // A position-based integrator has no force residual: `null`.
            residual: f64::NAN,
            residual_threshold: opts.relax.residual_tolerance,
            residual_at: None,
            is_static: run.is_static,
            max_seam_gap_m: max_gap(&ties, &q),
            max_penetration_m: pen_node,
            max_segment_penetration_m: pen_seg,
            layer_crossings: crossings_through.len(),
            hem_height_m: x.iter().map(|p| p.y).fold(f64::INFINITY, f64::min),
            centroid_height_m: x.iter().map(|p| p.y).sum::<f64>() / x.len().max(1) as f64,
        };
        if !run.is_static {
            progress.note(&format!(
                "warning: the sbd drape is not static after {:.2} s: RMS vertex speed over a step {:.3} m/s (threshold {})",
                run.draping_time, run.rms_speed, opts.relax.speed_tolerance
            ));
        }
        let done = Done {
            levels: vec![report],
            gap_sewn: run.gap_sewn,
            sewn_top: run.sewn_top,
            sewn_centroid: run.sewn_centroid,
            sewing_time: run.sewing_time,
            placed_panels,
            attached_labels: Vec::new(),
            attached_nodes: 0,
            routed_ties: run.routed_ties,
        };
        let finished = Finished {
            pattern,
            pattern_file,
            garment,
            q,
            v,
            body_collider: collider,
            body,
            body_name,
            done,
            last_crossings: crossings_through,
            spacing: s,
            earlier_wall: 0.0,
            animation: None,
            model: crate::DrapeModel::Sbd,
        };
        self.finish(finished, progress)
    }

    /// The drape's summary, warnings and result from its last level's
    /// state (shared by the yarn and the strain-based-dynamics drapes).
    fn finish(&self, f: Finished<'_>, progress: &mut dyn Progress) -> Result<Drape, GarmentError> {
        let opts = self.opts;
        let Finished {
            pattern,
            pattern_file,
            garment,
            q,
            v,
            body_collider,
            body,
            body_name,
            done,
            last_crossings,
            spacing,
            earlier_wall,
            animation: animation_report,
            model,
        } = f;
        let state = state_from(&garment.fabric, &q, &v);
        let last = done.levels.last().expect("at least one level").clone();
        let xs = &state.x;
        let top = xs.iter().map(|x| x.y).fold(f64::NEG_INFINITY, f64::max);
        let centroid = xs.iter().map(|x| x.y).sum::<f64>() / xs.len().max(1) as f64;
        let top_drop = done.sewn_top - top;
        let edge_name =
            |e: &weft_pattern::EdgeRef| format!("{}:{}", pattern.panels[e.panel].name, e.edge);
        let stitch_gaps = pattern
            .stitches
            .iter()
            .zip(&garment.stitches)
            .map(|(st, rep)| {
                let ties = &garment.seams[rep.ties.clone()];
                let widest = ties.iter().max_by(|a, b| a.gap(xs).total_cmp(&b.gap(xs)));
                let ends = widest.map(|t| {
                    (
                        xs[t.node],
                        xs[t.other[0]] * (1.0 - t.t) + xs[t.other[1]] * t.t,
                    )
                });
                StitchGap {
                    a: edge_name(&st.a),
                    b: edge_name(&st.b),
                    max_gap_m: widest.map_or(0.0, |t| t.gap(xs)),
                    widest_at_m: ends.map(|(a, _)| a.into()),
                    widest_target_m: ends.map(|(_, b)| b.into()),
                    body_between_m: ends
                        .map_or(0.0, |(a, b)| depth_inside_body(&body_collider, &a, &b)),
                }
            })
            .collect::<Vec<_>>();
        for w in stitch_gaps
            .iter()
            .filter_map(|g| open_seam_warning(g, last.spacing_m))
        {
            progress.note(&w);
        }
        let panel_weaves: Vec<PanelWeave> = garment
            .panels
            .iter()
            .zip(panel_heights(&garment, xs))
            .zip(&done.placed_panels)
            .map(|((p, (top, mean)), (top0, mean0))| PanelWeave {
                name: p.name.clone(),
                warp_yarns: p.warp_yarns,
                weft_yarns: p.weft_yarns,
                crossings: p.crossings,
                ends: p.ends,
                spacing_m: p.spacing[0],
                top_drop_from_placed_m: top0 - top,
                centroid_drop_from_placed_m: mean0 - mean,
            })
            .collect();
        let slid = slid_part(
            top_drop,
            done.sewn_centroid - centroid,
            &panel_weaves,
            opts.slide_limit,
        );
        if let Some(p) = &slid {
            progress.note(&format!(
                "warning: {} slid down the body: its highest point ended {:.0} mm below where it was sewn (limit {:.0} mm), its centroid {:.0} mm",
                p.part,
                p.top_drop_m * 1e3,
                opts.slide_limit * 1e3,
                p.centroid_drop_m * 1e3
            ));
        }
        let summary = DrapeSummary {
            pattern: pattern_file.display().to_string(),
            panels: garment.panels.len(),
            yarns: last.yarns,
            crossings: last.crossings,
            seams: pattern.stitches.len(),
            seam_ties: last.seam_ties,
            nodes: last.nodes,
            steps: done.levels.iter().map(|l| l.steps).sum(),
            rejected: done.levels.iter().map(|l| l.rejected).sum(),
            wall_time_s: earlier_wall + self.start.elapsed().as_secs_f64(),
            max_seam_gap_m: last.max_seam_gap_m,
            max_seam_gap_after_sewing_m: done.gap_sewn,
            centroid_drop_m: done.sewn_centroid - centroid,
            top_drop_m: top_drop,
            slid_off: slid.is_some(),
            slid_part: slid,
            max_penetration_m: last.max_penetration_m,
            max_segment_penetration_m: last.max_segment_penetration_m,
            layer_crossings: last.layer_crossings,
            layer_crossing_examples: last_crossings.into_iter().take(10).collect(),
            finite: q.iter().chain(&v).all(|x| x.is_finite()),
            spacing_m: spacing,
            material: opts.material.name().into(),
            grade: opts.grade,
            attached_nodes: done.attached_nodes,
            attached_labels: done.attached_labels,
            routed_seam_ties: done.routed_ties,
            frames: self.frames,
            body: body_name,
            is_static: last.is_static,
            levels: done.levels,
            stitch_gaps,
            panel_weaves,
            backend: "cpu".into(),
            model,
            animation: animation_report,
        };
        if opts.strict && summary.slid_off && self.out.is_none() {
            return Err(slid_off_error(&summary, opts));
        }
        Ok(Drape {
            pattern,
            garment,
            state,
            body,
            summary,
        })
    }
}

/// What [`Run::finish`] needs from a finished drape.
struct Finished<'p> {
    pattern: Pattern,
    pattern_file: &'p Path,
    garment: Garment,
    q: Vec<f64>,
    v: Vec<f64>,
    body_collider: Collider,
    body: TriMesh,
    body_name: String,
    done: Done,
    last_crossings: Vec<LayerCrossing>,
    spacing: f64,
    earlier_wall: f64,
    animation: Option<AnimationReport>,
    model: crate::DrapeModel,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refined level that slides is relaxed first at the same spacing
    /// without sliding; the coarsest level slides from its sewing; the
    /// shell model never slides.
    #[test]
    fn a_refined_sliding_level_is_relaxed_without_sliding_first() {
        let levels = |spacing_mm, coarse_spacing_mm, sliding_below_mm, model| {
            drape_levels(&DrapeOptions {
                spacing_mm,
                coarse_spacing_mm,
                sliding_below_mm,
                model,
                ..DrapeOptions::default()
            })
            .iter()
            .map(|l| ((l.spacing * 1e3).round() as u32, l.sliding))
            .collect::<Vec<_>>()
        };
        use crate::DrapeModel::{Shell, Yarn};
        assert_eq!(
            levels(5.0, 20.0, 10.0, Yarn),
            vec![(20, false), (10, false), (10, true), (5, false), (5, true)]
        );
        assert_eq!(
            levels(5.0, 10.0, 10.0, Yarn),
            vec![(10, true), (5, false), (5, true)]
        );
        assert_eq!(
            levels(5.0, 20.0, 0.0, Yarn),
            vec![(20, false), (10, false), (5, false)]
        );
        assert_eq!(
            levels(5.0, 20.0, 10.0, Shell),
            vec![(20, false), (10, false), (5, false)]
        );
    }

    #[test]
    fn an_open_seam_is_reported_with_the_body_between_its_sides() {
        use weft_solver::collide::Sphere;
        let body = Collider::new(
            Sphere::new(Vector3::new(0.0, 1.3, 0.0), 0.1).unwrap(),
            1.0,
            0.0,
        )
        .unwrap();
        let z = Vector3::z() * 0.11;
        // Front to back of the sphere through its centre: 100 mm deep at
        // t = 1/2, one of the sampled points.
        let c = Vector3::new(0.0, 1.3, 0.0);
        assert!((depth_inside_body(&body, &(c + z), &(c - z)) - 0.1).abs() < 1e-9);
        // Beside it (closest approach 20 mm outside): 0; a chord 95 mm off
        // the centre dips 100 - 95 = 5 mm in.
        let side = Vector3::new(0.12, 1.3, 0.0);
        assert_eq!(depth_inside_body(&body, &(side + z), &(side - z)), 0.0);
        let chord = Vector3::new(0.095, 1.3, 0.0);
        let d = depth_inside_body(&body, &(chord + z), &(chord - z));
        assert!((d - 0.005).abs() < 1e-9, "{d}");
        let gap = |m: f64, depth| StitchGap {
            a: "back:3".into(),
            b: "front:5".into(),
            max_gap_m: m,
            widest_at_m: Some([0.185, 1.309, 0.014]),
            widest_target_m: Some([0.186, 1.296, -0.059]),
            body_between_m: depth,
        };
        assert_eq!(open_seam_warning(&gap(0.039, 0.006), 0.04), None);
        let w = open_seam_warning(&gap(0.074, 0.006), 0.04).unwrap();
        assert!(
            w.contains("back:3 – front:5 is open by 74 mm at (0.185, 1.309, 0.014) m"),
            "{w}"
        );
        assert!(w.contains("runs 6 mm inside it"), "{w}");
        assert!(w.contains("too small for this body"), "{w}");
        let w = open_seam_warning(&gap(0.074, 0.001), 0.04).unwrap();
        assert!(!w.contains("too small"), "{w}");
    }

    fn panel(name: &str, top: f64, centroid: f64) -> PanelWeave {
        PanelWeave {
            name: name.into(),
            warp_yarns: 1,
            weft_yarns: 1,
            crossings: 1,
            ends: 0,
            spacing_m: 0.06,
            top_drop_from_placed_m: top,
            centroid_drop_from_placed_m: centroid,
        }
    }

    /// The slide-off rule on the 60 mm drapes of BENCHMARKS.md (drops from
    /// placement, m): the hoody's hood settles onto the head (top 0.119,
    /// centroid 0.081) and stays on; the pencil dress's bodice and the
    /// jumpsuit's leave the shoulders while the garments' centroids sink
    /// less than 0.04 m; a garment falling after sewing is flagged whole.
    #[test]
    fn slide_off_rule_flags_a_sliding_panel_not_a_settling_hood() {
        let hoody = [
            panel("left_hood", 0.119, 0.079),
            panel("left_btorso", -0.066, -0.095),
        ];
        assert_eq!(slid_part(0.007, 0.003, &hoody, 0.1), None);
        let dress = [
            panel("skirt_back", -0.020, -0.042),
            panel("right_ftorso", 0.152, 0.070),
            panel("right_btorso", 0.214, 0.089),
        ];
        let p = slid_part(0.001, 0.005, &dress, 0.1).expect("the bodice slid");
        assert_eq!(p.part, "panel 'right_btorso'");
        assert_eq!((p.top_drop_m, p.centroid_drop_m), (0.214, 0.089));
        let jumpsuit = [
            panel("pant_b_l", -0.024, -0.033),
            panel("left_btorso", 0.191, 0.122),
        ];
        assert_eq!(
            slid_part(0.02, 0.01, &jumpsuit, 0.1).map(|p| p.part),
            Some("panel 'left_btorso'".into())
        );
        let fell = slid_part(0.44, 0.43, &hoody, 0.1).expect("the garment fell");
        assert_eq!(fell.part, "the garment");
    }
}
