//! [`DrapeOptions`]: everything a drape is configured by, in one serde
//! struct with documented defaults (unknown keys are errors when read from
//! JSON).

use crate::error::GarmentError;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use weft_core::FabricPreset;

/// The body the garment is sewn around and draped on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Body {
    /// weft's own mannequin (`data/bodies/mannequin.obj`, generated in
    /// memory by `weft_io::mannequin::generate`).
    #[default]
    Mannequin,
    /// A closed triangle mesh from an OBJ file, scaled by `scale` to metres
    /// (0.01 for a file in cm). Y up, feet at y = 0.
    Obj {
        /// The OBJ file.
        path: PathBuf,
        /// Factor to metres.
        scale: f64,
    },
    /// An animated body: a folder of OBJ files, one per frame of the same
    /// closed mesh (read in file-name order, `fps` per second), each scaled
    /// by `scale` to metres. The garment is sewn and draped on frame 0 (the
    /// rest pose); then the animation plays on the final level and the
    /// garment follows it (`weft_solver::collide::MeshAnimation`: vertices
    /// linear between frames, friction against the surface's velocity),
    /// for [`DrapeOptions::animation_settle_s`] more after its last frame.
    Animation {
        /// The folder of OBJ frames.
        frames: PathBuf,
        /// Frames per second.
        fps: f64,
        /// Factor to metres.
        scale: f64,
    },
}

/// When a level counts as static ([`DrapeOptions::relax`]): the drape of
/// each level runs in chunks of `check_interval` of simulated time, at least
/// `min_time` and at most `max_time`, and stops after the first chunk that
/// ends with
/// - the kinetic energy below `½ M v_tol²` (M the garment's mass: an RMS
///   speed below `speed_tolerance`), and
/// - the force residual below `residual_tolerance`: the largest net force
///   on a node (its mass times its acceleration over the last step,
///   `m |Δẋ| / h`, the backward-Euler force balance) over the node's weight
///   `m g`.
///
/// A level that reaches `max_time` first is reported as not static
/// (`LevelReport::is_static`), with both figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RelaxOptions {
    /// Shortest simulated draping time per level (s). Default 0.2.
    pub min_time: f64,
    /// Longest simulated draping time per level (s). Default 4.0 for the
    /// coarsest level, and `max_time / 2` for the refined ones (they start
    /// near their equilibrium). A level stops earlier once static; with
    /// segment contact the README's skirt at 40 mm needs 2.35 s (2 s, the
    /// default before, ended it still settling; BENCHMARKS.md).
    pub max_time: f64,
    /// Simulated time between checks (s). Default 0.05.
    pub check_interval: f64,
    /// RMS speed threshold v_tol (m/s). Default 0.01.
    pub speed_tolerance: f64,
    /// Largest net nodal force over nodal weight. Default 0.1.
    pub residual_tolerance: f64,
}

impl Default for RelaxOptions {
    fn default() -> Self {
        Self {
            min_time: 0.2,
            max_time: 4.0,
            check_interval: 0.05,
            speed_tolerance: 0.01,
            residual_tolerance: 0.1,
        }
    }
}

/// The cloth model of a drape ([`DrapeOptions::model`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DrapeModel {
    /// Yarn-level cloth (the multilevel drape).
    #[default]
    Yarn,
    /// A triangle mesh with strain-based dynamics \[SBD14\] and LOD bending
    /// springs \[Kim23\].
    Sbd,
    /// A triangle mesh with implicit StVK membranes, strain-rate damping
    /// \[SBO18 §4\] and discrete-shell bending, through the yarn model's
    /// pipeline and solver (`crate::shell::shell_material`).
    Shell,
}

/// Options of [`crate::drape`] and [`crate::drape_to_dir`]. Lengths the user
/// types are in millimetres where the CLI takes millimetres (`spacing_mm`),
/// everything else SI.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DrapeOptions {
    /// Final yarn spacing (mm, warp and weft). Default 20 (a 5 mm drape of
    /// a skirt is hours on 2 cores today; see BENCHMARKS.md).
    pub spacing_mm: f64,
    /// Multilevel drape: the garment is sewn and draped first at the
    /// coarsest spacing `spacing_mm · 2^k` that is at least this (mm), then
    /// refined level by level, halving the spacing, down to `spacing_mm`
    /// (see [`crate::level_spacings`]). A `spacing_mm` at or above it is a
    /// single level. Default 16.
    pub coarse_spacing_mm: f64,
    /// The body. Default: weft's mannequin.
    pub body: Body,
    /// Cloth model: `yarn` (the default, everything below); `shell`: a
    /// triangle mesh through the woven nodes with implicit StVK membranes
    /// and discrete-shell hinges (`crate::shell::shell_material`), run by
    /// the yarn model's pipeline (levels, sewing, attachments, relaxation,
    /// checkpoints; no sliding); or `sbd`: a
    /// triangle mesh through the woven nodes at `spacing_mm` (one level),
    /// simulated with strain-based dynamics (`weft_shell`, the options in
    /// [`DrapeOptions::sbd`]), sewn for `sew_duration` without gravity and
    /// draped until `relax`'s speed criterion or time limit. A fast preview
    /// and the baseline every cloth user knows.
    pub model: DrapeModel,
    /// Options of the `sbd` model; its areal density is replaced by the
    /// fabric preset's and its `edge_collisions` by
    /// [`DrapeOptions::segment_contact`]. Default `SbdOptions::default()`
    /// with velocity damping 2/s, the unnormalised shear constraint (the
    /// normalised one blows up while sewing GarmentCode's pencil dress)
    /// and seam ties at stiffness 1 (0.5 leaves a tie half open after
    /// each substep's projection, which the edges' collisions then widen:
    /// the graded GPG tee's shoulder seams 22.9 mm open at 20 mm, 12.8 mm
    /// at 1; BENCHMARKS.md), and 20 substeps while draping (sewing takes
    /// [`crate::shell::SEWING_SUBSTEPS`]): with 5 the constraints leave
    /// the cloth stretchy enough that GPG's 8-panel skirt at 20 mm slid
    /// 214 mm down the hips (107 mm with 10 substeps, 110 mm with 5
    /// substeps of 4 iterations), with 20 its top stays 68 mm below where
    /// it was sewn.
    pub sbd: weft_shell::SbdOptions,
    /// Fabric preset. Default cotton.
    pub material: FabricPreset,
    /// Grade factor: every length of the pattern times this
    /// (`weft_pattern::Pattern::graded`). Default 1.
    pub grade: f64,
    /// Edge labels whose yarn ends are held to the body while sewing.
    /// `None` (the default) holds GarmentCode's waist labels that the
    /// pattern has ([`DEFAULT_ATTACH_LABELS`]), except on a garment with an
    /// upper part more than `pipeline::UPPER_PART_REACH` above them (a
    /// dress: [`crate::sewing::has_upper_part`]); `Some(vec![])` holds none;
    /// a label given explicitly must exist in the pattern.
    pub attach: Option<Vec<String>>,
    /// Sewing time (s, simulated, gravity off, drag on). Default 0.5.
    pub sew_duration: f64,
    /// Factor on the fabric preset's strain-rate damping coefficients (all
    /// modes, `k_d = β k` with the preset's β [SBO18 eq. 12]): 0.01 is an
    /// underdamped and 100 an overdamped fabric (SBO17 Fig. 5 compares such
    /// levels on a moving body). Default 1.
    pub damping_scale: f64,
    /// With an animated body ([`Body::Animation`]): simulated time (s) the
    /// garment keeps running on the last frame after the animation ends.
    /// Default 0.5.
    pub animation_settle_s: f64,
    /// Equilibrium criteria and time limits of the drape of each level.
    pub relax: RelaxOptions,
    /// Largest time step (s). Default 5 ms.
    pub dt_max: f64,
    /// Newton tolerance relative to the step's force scale (a drape needs
    /// visual accuracy; the scene runner's default is 1e-6). Default 1e-3.
    pub newton_tolerance: f64,
    /// Yarn-yarn self-collision at levels with a spacing at or below this
    /// (mm): front/back layers, sleeve/torso. Its distance is the larger of
    /// the yarns' `2R + margin` and [`crate::pipeline::LAYER_THICKNESS`]
    /// times the level's spacing, so that a yarn cannot thread a cell of
    /// another layer ([`crate::pipeline::layer_self_collision`]), repelling
    /// under the C² cubic law ([`weft_solver::collide::RepulsionLaw::Cubic`]).
    /// Under the quadratic law it cost many more time steps at coarse
    /// levels (the A-line skirt at 40 mm: 2,476 steps against 541); under
    /// the cubic law 386, and the skirt refined to 20 mm ends with no
    /// segment through its own fabric, against 20 without (BENCHMARKS.md).
    /// A level that turns it on inherits the coarser levels' state, layers
    /// already through each other included, so it is on at every level by
    /// default: the five shared patterns at 40 mm end with nothing through
    /// (the shirt: 6 without), and the skirt drawn 40 → 20 → 10 mm ends
    /// static with nothing through (174 segments with it on at 4 mm and
    /// below only) since the small-angle strains are held over a step
    /// (`weft_potentials::bending::step_threshold`). The GarmentCode
    /// hoody's 20 mm level with it on did not settle until the body's
    /// tangent planes stopped reaching past their triangles
    /// (`weft_solver::collide::TriangleMesh::tangent_planes`; BENCHMARKS.md,
    /// 2026-12-07). Default 1000 (every level); 0 turns it off.
    pub self_collision_below_mm: f64,
    /// The `shell` model's self-collision at every level, whatever
    /// [`Self::self_collision_below_mm`]: vertex–face and edge–edge
    /// repulsion between its triangles under the C² cubic law, within
    /// [`crate::shell::SHELL_LAYER_THICKNESS`] times the level's spacing
    /// ([`crate::shell::mesh_self_collision`]). Triangles leave no cells for
    /// a layer to thread, so this costs little: the GarmentCode hoody at
    /// 40 mm drapes in 687 steps (seams 12.5 mm, nothing through), where
    /// without it it takes 1,895 and collapses through itself (seams 284 mm,
    /// 4,289 segments through; BENCHMARKS.md). The `sbd` model's too:
    /// every vertex kept [`crate::shell::SBD_LAYER_THICKNESS`] spacings on
    /// its side of the triangles of other layers (the GarmentCode shirt at
    /// 20 mm: no mesh edge through the mesh, 11 without). Default true.
    pub shell_self_collision: bool,
    /// Yarn sliding (free `u, v` at crossings, Coulomb friction, parallel
    /// contact; [`weft_core::preset`]) at levels with a spacing at or below this
    /// (mm). A refined level that slides is relaxed first without sliding
    /// ([`crate::pipeline::drape_levels`] says why), so it appears twice in
    /// the reports. Default 0 (off: see the crate docs for its state).
    pub sliding_below_mm: f64,
    /// Segment contact: the midpoint of every edge, the yarn segments or
    /// the membrane triangles' edges, is kept out of the body as the nodes
    /// are: while draping in the `yarn` and `shell` models
    /// (`weft_solver::assembly::ContactModel::segments`), while sewing and
    /// draping in the `sbd` model (`weft_shell::SbdOptions::edge_collisions`;
    /// at 20 mm on the shared patterns the deepest edge point from up to
    /// 4.8 mm inside the body to at most 0.3 mm). On the shirt at 40 mm
    /// it takes the deepest segment point from 7.4 to 1.2 mm (yarn) and
    /// from 7.9 to 1.1 mm (shell), and on the five shared patterns at
    /// 60 mm from 4.9-14.4 mm to 0.3-2.4 mm, with every seam still within
    /// the spacing and no layer crossing (BENCHMARKS.md, "Edges kept out
    /// of the body"). The midpoints carry the body's friction too:
    /// without it a hoop of yarn under tension slid up the hips (the
    /// A-line skirt's top 83 mm above where it was sewn at 30 mm, 10 mm
    /// with it). Default true.
    pub segment_contact: bool,
    /// A drape whose garment slid down the body is an error
    /// ([`GarmentError::SlidOff`]) instead of a warning. Default false.
    pub strict: bool,
    /// Slide-off limit (m). A drape counts as slid off when the garment's
    /// highest point and its centroid both end more than this below the
    /// sewn garment's (sewing runs without gravity, so anything that sinks
    /// that far afterwards slid), or when one panel's highest point ends
    /// more than 1.5 times this, and its centroid more than half this,
    /// below where the pattern placed it. Sewing wraps the flat panels
    /// around the body and moves them a lot: the hoody's hood, placed
    /// upright above the head, settles 119 mm onto it (centroid 81 mm) and
    /// stays on, while the pencil dress's and GarmentCode's jumpsuit's
    /// bodices leave the shoulders, their tops 150-214 mm down (centroids
    /// 63-122 mm), with the garments' centroids sinking under 40 mm
    /// (60 mm spacing, BENCHMARKS.md). Default 0.1.
    pub slide_limit: f64,
    /// Curve formats written for renderers: `bcc`, `mitsuba`, `obj`,
    /// `tubes`, `usda`. Default all.
    pub formats: Vec<String>,
    /// Simulated time between frames of yarn curves under `DIR/frames/`
    /// (s; 0: none). Default 0.
    pub frame_dt: f64,
    /// Write a checkpoint (`out/checkpoint.json`, the one before kept as
    /// `checkpoint.prev.json`) after the first relaxation check
    /// (`relax.check_interval` of simulated time) after every this many
    /// seconds of wall time (0: at every check). Needs an output folder
    /// ([`crate::drape_to_dir`]). Default `None`: none.
    pub checkpoint_every_s: Option<f64>,
    /// Resume from `out/checkpoint.json`, written by a drape of the same
    /// pattern file with the same options (both digests are checked): the
    /// levels it finished are not run again, and the result equals the
    /// uninterrupted drape's bit for bit. Needs an output folder. Default
    /// false.
    pub resume: bool,
}

/// GarmentCode edge labels held to the body while sewing by default: the
/// waistband of skirts and pants (`lower_interface`), as GarmentCode's own
/// simulator attaches it.
pub const DEFAULT_ATTACH_LABELS: [&str; 1] = ["lower_interface"];

impl Default for DrapeOptions {
    fn default() -> Self {
        Self {
            spacing_mm: 20.0,
            coarse_spacing_mm: 16.0,
            body: Body::Mannequin,
            model: DrapeModel::Yarn,
            sbd: weft_shell::SbdOptions {
                velocity_damping: 2.0,
                normalised_shear: false,
                tie_stiffness: 1.0,
                substeps: 20,
                ..Default::default()
            },
            material: FabricPreset::Cotton,
            grade: 1.0,
            attach: None,
            sew_duration: 0.5,
            damping_scale: 1.0,
            animation_settle_s: 0.5,
            relax: RelaxOptions::default(),
            dt_max: 5e-3,
            newton_tolerance: 1e-3,
            self_collision_below_mm: 1000.0,
            shell_self_collision: true,
            sliding_below_mm: 0.0,
            segment_contact: true,
            strict: false,
            slide_limit: 0.1,
            formats: ["bcc", "mitsuba", "obj", "tubes", "usda"]
                .map(String::from)
                .to_vec(),
            frame_dt: 0.0,
            checkpoint_every_s: None,
            resume: false,
        }
    }
}

impl DrapeOptions {
    /// Checks every value.
    ///
    /// # Errors
    /// [`GarmentError::Option`] naming the option, what was expected and
    /// what was found.
    pub fn validate(&self) -> Result<(), GarmentError> {
        if self.model == DrapeModel::Sbd {
            self.sbd.validate().map_err(|e| match e {
                weft_shell::ShellError::InvalidOption { name, message } => GarmentError::Option {
                    option: format!("sbd.{name}"),
                    expected: message,
                    found: "(see expected)".into(),
                },
                other => GarmentError::Option {
                    option: "sbd".into(),
                    expected: "valid strain-based-dynamics options".into(),
                    found: other.to_string(),
                },
            })?;
            if self.resume || self.checkpoint_every_s.is_some() || self.frame_dt > 0.0 {
                return Err(GarmentError::Option {
                    option: "model".into(),
                    expected: "the yarn model for checkpoints, resume and frames (the sbd model writes the final state only)".into(),
                    found: "sbd".into(),
                });
            }
            if matches!(self.body, Body::Animation { .. }) {
                return Err(GarmentError::Option {
                    option: "model".into(),
                    expected: "the yarn model for an animated body (the sbd model drapes on still bodies only)".into(),
                    found: "sbd".into(),
                });
            }
        }
        let bad = |name: &str, expected: &str, found: f64| {
            Err(GarmentError::Option {
                option: name.into(),
                expected: expected.into(),
                found: found.to_string(),
            })
        };
        let positive = [
            ("spacing_mm", self.spacing_mm),
            ("coarse_spacing_mm", self.coarse_spacing_mm),
            ("grade", self.grade),
            ("dt_max", self.dt_max),
            ("newton_tolerance", self.newton_tolerance),
            ("relax.max_time", self.relax.max_time),
            ("relax.check_interval", self.relax.check_interval),
            ("relax.speed_tolerance", self.relax.speed_tolerance),
            ("relax.residual_tolerance", self.relax.residual_tolerance),
            ("slide_limit", self.slide_limit),
        ];
        for (name, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return bad(name, "a finite value > 0", v);
            }
        }
        let non_negative = [
            ("sew_duration", self.sew_duration),
            ("animation_settle_s", self.animation_settle_s),
            ("damping_scale", self.damping_scale),
            ("relax.min_time", self.relax.min_time),
            ("self_collision_below_mm", self.self_collision_below_mm),
            ("sliding_below_mm", self.sliding_below_mm),
            ("frame_dt", self.frame_dt),
            ("checkpoint_every_s", self.checkpoint_every_s.unwrap_or(0.0)),
        ];
        for (name, v) in non_negative {
            if !(v.is_finite() && v >= 0.0) {
                return bad(name, "a finite value >= 0", v);
            }
        }
        if let Body::Obj { scale, .. } | Body::Animation { scale, .. } = &self.body
            && !(scale.is_finite() && *scale > 0.0)
        {
            return bad("body.scale", "a finite factor > 0", *scale);
        }
        if let Body::Animation { fps, .. } = &self.body
            && !(fps.is_finite() && *fps > 0.0)
        {
            return bad("body.fps", "finite frames per second > 0", *fps);
        }
        if self.spacing_mm < 0.25 {
            return bad(
                "spacing_mm",
                "a spacing of at least 0.25 mm",
                self.spacing_mm,
            );
        }
        self.curve_formats().map(|_| ())
    }

    /// A digest of the options that decide a drape's result (all but
    /// [`DrapeOptions::checkpoint_every_s`] and [`DrapeOptions::resume`]):
    /// a checkpoint is resumed only with the same.
    pub fn digest(&self) -> String {
        let mut o = self.clone();
        o.checkpoint_every_s = None;
        o.resume = false;
        weft_io::checkpoint::digest(
            serde_json::to_string(&o)
                .expect("options serialise")
                .as_bytes(),
        )
    }

    /// The curve formats of [`DrapeOptions::formats`].
    ///
    /// # Errors
    /// [`GarmentError::Option`] for an unknown name.
    pub fn curve_formats(&self) -> Result<Vec<weft_io::CurveFormat>, GarmentError> {
        self.formats
            .iter()
            .map(|f| {
                weft_io::CurveFormat::ALL
                    .into_iter()
                    .find(|c| c.name() == f.trim())
                    .ok_or_else(|| GarmentError::Option {
                        option: "formats".into(),
                        expected: "bcc, mitsuba, obj, tubes or usda".into(),
                        found: format!("{f:?}"),
                    })
            })
            .collect()
    }
}

/// The spacings (m) of the levels of a multilevel drape, coarsest first:
/// `s · 2^k, …, 2s, s` with `s = spacing_mm / 1000` and `k` the smallest
/// count for which `s · 2^k ≥ coarse_spacing_mm / 1000` (0 when `s` is
/// already that coarse). E.g. 5 mm from 16 mm: 20, 10, 5 mm; 1 mm: 16, 8,
/// 4, 2, 1 mm; 40 mm: 40 mm.
pub fn level_spacings(spacing_mm: f64, coarse_spacing_mm: f64) -> Vec<f64> {
    let mut s = vec![spacing_mm * 1e-3];
    while s[0] < coarse_spacing_mm * 1e-3 * (1.0 - 1e-9) && s.len() < 16 {
        s.insert(0, 2.0 * s[0]);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_halve_down_to_the_spacing() {
        let mm = |v: Vec<f64>| {
            v.iter()
                .map(|s| (s * 1e3 * 1e6).round() / 1e6)
                .collect::<Vec<_>>()
        };
        assert_eq!(mm(level_spacings(5.0, 16.0)), vec![20.0, 10.0, 5.0]);
        assert_eq!(
            mm(level_spacings(1.0, 16.0)),
            vec![16.0, 8.0, 4.0, 2.0, 1.0]
        );
        assert_eq!(mm(level_spacings(40.0, 16.0)), vec![40.0]);
        assert_eq!(mm(level_spacings(16.0, 16.0)), vec![16.0]);
    }

    #[test]
    fn options_round_trip_and_refuse_unknown_keys() {
        let o = DrapeOptions::default();
        let j = serde_json::to_string(&o).unwrap();
        let back: DrapeOptions = serde_json::from_str(&j).unwrap();
        assert_eq!(back, o);
        let partial: DrapeOptions =
            serde_json::from_str(r#"{"spacing_mm": 2, "material": "denim"}"#).unwrap();
        assert_eq!(partial.spacing_mm, 2.0);
        assert_eq!(partial.material, FabricPreset::Denim);
        let e = serde_json::from_str::<DrapeOptions>(r#"{"spacing": 2}"#).unwrap_err();
        assert!(e.to_string().contains("unknown field `spacing`"), "{e}");
        let mut bad = DrapeOptions::default();
        bad.relax.speed_tolerance = f64::NAN;
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("relax.speed_tolerance"), "{e}");
        bad = DrapeOptions {
            formats: vec!["ply".into()],
            ..DrapeOptions::default()
        };
        assert!(bad.validate().unwrap_err().to_string().contains("ply"));
    }
}
