//! `weft drape`: a thin shell over [`weft_garment::drape_to_dir`] (the
//! garment pipeline, DESIGN §8): flags to [`DrapeOptions`], progress bars,
//! the summary table.

use crate::backend::{BackendChoice, Selected};
use anyhow::{Result, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use weft_garment::{
    Body, DrapeModel, DrapeOptions, DrapeSummary, FabricPreset, Phase, Progress, RelaxOptions,
};
use weft_solver::StepStats;

/// `weft drape --model`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelArg {
    /// Yarn-level cloth.
    Yarn,
    /// Triangle mesh, strain-based dynamics.
    Sbd,
    /// Triangle mesh, implicit StVK membranes and discrete-shell bending.
    Shell,
}

/// Arguments of `weft drape` (defaults: those of [`DrapeOptions`]).
#[derive(Args, Debug)]
pub struct DrapeArgs {
    /// Sewing pattern: GarmentCode (`*_specification.json`) or
    /// Garment-Pattern-Generator JSON.
    pub pattern: PathBuf,
    /// Body mesh (OBJ, closed) used as collider; default: weft's own
    /// mannequin (data/bodies/mannequin.obj, generated in memory).
    #[arg(long)]
    pub body: Option<PathBuf>,
    /// Scale applied to the body OBJ (or the animation's frames) to get
    /// metres (e.g. 0.01 for a file in cm).
    #[arg(long, default_value_t = 1.0)]
    pub body_scale: f64,
    /// An animated body instead of `--body`: a folder of OBJ files, one
    /// per frame of the same closed mesh, read in file-name order. The
    /// garment is sewn and draped on the first frame, then the animation
    /// plays (`--fps` frames per second) and the garment follows it.
    #[arg(long, conflicts_with = "body", requires = "fps")]
    pub body_animation: Option<PathBuf>,
    /// Frames per second of `--body-animation`.
    #[arg(long, requires = "body_animation")]
    pub fps: Option<f64>,
    /// Simulated time (s) the garment keeps running on the animation's last
    /// frame.
    #[arg(long, default_value_t = 0.5)]
    pub settle: f64,
    /// Cloth model: `yarn` (yarn-level, multilevel), `shell` (a triangle
    /// mesh through the woven nodes, implicit StVK membranes with
    /// strain-rate damping and discrete-shell bending, through the yarn
    /// model's pipeline: levels, checkpoints, frames, animated bodies) or
    /// `sbd` (the same mesh at `--spacing`, strain-based dynamics with LOD
    /// bending springs: a fast preview; no checkpoints, frames or animated
    /// bodies).
    #[arg(long, value_enum, default_value = "yarn")]
    pub model: ModelArg,
    /// Factor on the fabric preset's strain-rate damping (all modes): 0.01
    /// underdamped, 100 overdamped (SBO17 Fig. 5).
    #[arg(long, default_value_t = 1.0)]
    pub damping_scale: f64,
    /// Final yarn spacing in millimetres (warp and weft).
    #[arg(long, default_value_t = 20.0)]
    pub spacing: f64,
    /// Coarsest level's spacing (mm, at least): the drape starts at the
    /// spacing doubled until it reaches this and halves it level by level.
    #[arg(long, default_value_t = 16.0)]
    pub coarse_spacing: f64,
    /// Edge labels whose yarn ends are held to the body while sewing
    /// (comma-separated, e.g. `lower_interface`; `none` for none). Default:
    /// GarmentCode's waist labels the pattern has (`lower_interface`),
    /// unless the garment has an upper part that holds it (a dress).
    #[arg(long, value_delimiter = ',')]
    pub attach: Option<Vec<String>>,
    /// Grade factor: every length of the pattern times this (panel outlines
    /// about their origins, panel positions in x and z), for a pattern made
    /// for a smaller or larger body; see `weft_pattern::Pattern::graded`.
    #[arg(long, default_value_t = 1.0)]
    pub grade: f64,
    /// Fabric preset: cotton, denim, silk, wool or polyester.
    #[arg(long, default_value = "cotton", value_parser = parse_preset)]
    pub material: FabricPreset,
    /// Sewing time (s, simulated, gravity off, coarsest level).
    #[arg(long, default_value_t = 0.5)]
    pub sew_duration: f64,
    /// Longest draping time of the coarsest level (s, simulated; refined
    /// levels get half): each level stops earlier once static.
    #[arg(long, default_value_t = 4.0)]
    pub duration: f64,
    /// Shortest draping time per level (s, simulated).
    #[arg(long, default_value_t = 0.2)]
    pub min_duration: f64,
    /// Yarn-yarn self-collision at levels of this spacing (mm) and below
    /// (0: off; the default, 1000, is every level), with a layer distance
    /// of at least 0.6 times the level's spacing (see DrapeOptions).
    #[arg(long, default_value_t = 1000.0)]
    pub self_collision_below: f64,
    /// Turn off the triangle-mesh models' (`shell`, `sbd`) self-collision
    /// between their triangles, on at every level by default (see
    /// `weft_garment::DrapeOptions::shell_self_collision`).
    #[arg(long)]
    pub no_shell_self_collision: bool,
    /// Yarn sliding with friction at levels of this spacing (mm) and below
    /// (0: off).
    #[arg(long, default_value_t = 0.0)]
    pub sliding_below: f64,
    /// Keep only the nodes out of the body, not also the midpoints of
    /// edges (yarn segments, triangle edges), which is the default (see
    /// `weft_garment::DrapeOptions::segment_contact`).
    #[arg(long)]
    pub no_segment_contact: bool,
    /// A garment that slid down the body (highest point and centroid both
    /// more than 10 cm below where it was placed) is an error: non-zero
    /// exit, after the outputs are written.
    #[arg(long)]
    pub strict: bool,
    /// Largest time step (s).
    #[arg(long, default_value_t = 5e-3)]
    pub dt_max: f64,
    /// Newton tolerance relative to the step's force scale.
    #[arg(long, default_value_t = 1e-3)]
    pub newton_tolerance: f64,
    /// Curve formats written for renderers (comma-separated: bcc, mitsuba,
    /// obj, tubes, usda).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "bcc,mitsuba,obj,tubes,usda"
    )]
    pub formats: Vec<String>,
    /// Simulated time between frames (s): with a value > 0 the yarn curves
    /// are also written about every `frame_dt` of sewing and draping as
    /// `DIR/frames/frame_NNNN.*` (frame 0 is the woven, placed garment).
    #[arg(long, default_value_t = 0.0)]
    pub frame_dt: f64,
    /// Output, checkpoint and resume.
    #[command(flatten)]
    pub output: crate::output::OutputArgs,
    /// No progress bars.
    #[arg(short, long)]
    pub quiet: bool,
    /// Engine: `cpu`, `cuda` or `auto` (as `weft run --backend`). The
    /// phases and levels change gravity, drag, colliders and the fabric
    /// between runs, which the CUDA step driver does not follow yet: `cuda`
    /// is refused with that reason, `auto` uses the CPU and says why.
    #[arg(long, value_enum, default_value_t = BackendChoice::Cpu)]
    pub backend: BackendChoice,
}

pub(crate) fn parse_preset(s: &str) -> Result<FabricPreset, String> {
    s.parse()
}

impl DrapeArgs {
    /// The library options these flags stand for.
    pub fn options(&self) -> DrapeOptions {
        DrapeOptions {
            spacing_mm: self.spacing,
            coarse_spacing_mm: self.coarse_spacing,
            body: match (&self.body, &self.body_animation) {
                (Some(path), _) => Body::Obj {
                    path: path.clone(),
                    scale: self.body_scale,
                },
                (None, Some(frames)) => Body::Animation {
                    frames: frames.clone(),
                    fps: self.fps.unwrap_or(f64::NAN),
                    scale: self.body_scale,
                },
                (None, None) => Body::Mannequin,
            },
            animation_settle_s: self.settle,
            damping_scale: self.damping_scale,
            model: match self.model {
                ModelArg::Yarn => DrapeModel::Yarn,
                ModelArg::Sbd => DrapeModel::Sbd,
                ModelArg::Shell => DrapeModel::Shell,
            },
            material: self.material,
            grade: self.grade,
            attach: self.attach.as_ref().map(|l| {
                l.iter()
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty() && s != "none")
                    .collect()
            }),
            sew_duration: self.sew_duration,
            relax: RelaxOptions {
                min_time: self.min_duration.min(self.duration),
                max_time: self.duration,
                ..RelaxOptions::default()
            },
            dt_max: self.dt_max,
            newton_tolerance: self.newton_tolerance,
            self_collision_below_mm: self.self_collision_below,
            shell_self_collision: !self.no_shell_self_collision,
            sliding_below_mm: self.sliding_below,
            segment_contact: !self.no_segment_contact,
            strict: self.strict,
            formats: self.formats.clone(),
            frame_dt: self.frame_dt,
            checkpoint_every_s: self.output.checkpoint_every,
            resume: self.output.resume.is_some(),
            ..DrapeOptions::default()
        }
    }
}

/// Progress bars on stderr (hidden with `--quiet`; notes always shown).
pub(crate) struct Bars {
    quiet: bool,
    command: &'static str,
    level: String,
    bar: Option<ProgressBar>,
}

impl Bars {
    /// Bars for `command` (e.g. `weft drape`).
    pub(crate) fn new(quiet: bool, command: &'static str) -> Self {
        Self {
            quiet,
            command,
            level: String::new(),
            bar: None,
        }
    }
}

impl Progress for Bars {
    fn level(&mut self, level: usize, spacing: f64, nodes: usize) {
        self.level = format!("L{level} {:.0} mm", spacing * 1e3);
        if !self.quiet {
            eprintln!(
                "{}: level {level}, {} mm spacing, {nodes} nodes",
                self.command,
                spacing * 1e3
            );
        }
    }

    fn phase_start(&mut self, phase: Phase, max_time: f64) {
        let b = if self.quiet {
            ProgressBar::hidden()
        } else {
            ProgressBar::new((max_time * 1e3).round() as u64)
        };
        b.set_style(
            ProgressStyle::with_template(&format!(
                "{} {:8} {{bar:30}} {{pos}}/{{len}} ms  {{msg}}  [{{elapsed_precise}}]",
                self.level,
                phase.name()
            ))
            .expect("valid template"),
        );
        self.bar = Some(b);
    }

    fn step(&mut self, t: f64, st: &StepStats) {
        if let Some(b) = &self.bar {
            b.set_position((t * 1e3) as u64);
            b.set_message(format!(
                "h {:.1e} s  newton {}  cg {}",
                st.h, st.newton_iterations, st.cg_iterations
            ));
        }
    }

    fn phase_end(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }

    fn note(&mut self, message: &str) {
        match &self.bar {
            Some(b) => b.suspend(|| eprintln!("{message}")),
            None => eprintln!("{message}"),
        }
    }
}

/// Runs the garment pipeline ([`weft_garment::drape_to_dir`]).
///
/// # Errors
/// The library's [`weft_garment::GarmentError`]s; `--backend cuda`.
pub fn drape(args: &DrapeArgs) -> Result<DrapeSummary> {
    // The CUDA step driver is fixed at upload; the pipeline changes
    // gravity, drag, colliders and (between levels) the fabric.
    const PHASES: &str = "the drape's phases and levels change gravity, drag, colliders and the fabric between runs, which the CUDA step driver (fixed at upload) does not follow yet";
    let selected = match args.backend {
        BackendChoice::Cpu => Selected::Cpu { reason: None },
        BackendChoice::Cuda => bail!("weft drape --backend cuda: {PHASES}; use --backend cpu"),
        BackendChoice::Auto => Selected::Cpu {
            reason: Some(format!("auto: {PHASES}")),
        },
    };
    if !args.quiet || matches!(selected, Selected::Cpu { reason: Some(_) }) {
        eprintln!("weft drape: {}", selected.describe());
    }
    let mut bars = Bars::new(args.quiet, "weft drape");
    let out = args.output.dir();
    let d = weft_garment::drape_to_dir(&args.pattern, &args.options(), out, &mut bars)?;
    if !args.quiet {
        print_summary(&d.summary, out);
    }
    Ok(d.summary)
}

fn print_summary(s: &DrapeSummary, out: &Path) {
    eprintln!(
        "  {:>5} {:>9} {:>7} {:>7} {:>6} {:>8} {:>9} {:>10} {:>8} {:>9} {:>9} {:>7} {:>7} {:>7}",
        "level",
        "spacing",
        "slid mm",
        "nodes",
        "steps",
        "wall s",
        "KE J",
        "residual",
        "static",
        "pen. mm",
        "seam mm",
        "through",
        "hem mm",
        "t s"
    );
    for l in &s.levels {
        eprintln!(
            "  {:>5} {:>6.1} mm {:>7} {:>7} {:>6} {:>8.1} {:>9.1e} {:>10.3} {:>8} {:>9.3} {:>9.2} {:>7} {:>7.0} {:>7.2}",
            l.level,
            l.spacing_m * 1e3,
            if l.sliding {
                format!("{:.2}", l.max_slide_m * 1e3)
            } else {
                "off".into()
            },
            l.nodes,
            l.steps,
            l.wall_time_s,
            l.kinetic_energy_j,
            l.residual,
            l.is_static,
            l.max_segment_penetration_m * 1e3,
            l.max_seam_gap_m * 1e3,
            l.layer_crossings,
            l.hem_height_m * 1e3,
            l.sewing_time_s + l.draping_time_s
        );
    }
    let rows = [
        ("panels", s.panels.to_string()),
        ("yarns", s.yarns.to_string()),
        ("crossings", s.crossings.to_string()),
        ("seams", format!("{} ({} ties)", s.seams, s.seam_ties)),
        ("steps", format!("{} ({} rejected)", s.steps, s.rejected)),
        ("wall time", format!("{:.1} s", s.wall_time_s)),
        (
            "max seam gap",
            format!(
                "{:.2} mm (after sewing {:.2} mm)",
                s.max_seam_gap_m * 1e3,
                s.max_seam_gap_after_sewing_m * 1e3
            ),
        ),
        (
            "max penetration",
            format!(
                "{:.2} mm at nodes, {:.2} mm along segments",
                s.max_penetration_m * 1e3,
                s.max_segment_penetration_m * 1e3
            ),
        ),
        (
            "layers",
            format!(
                "{} yarn segments through the garment's own fabric",
                s.layer_crossings
            ),
        ),
        (
            "drop",
            format!(
                "top {:.1} mm, centroid {:.1} mm{}",
                s.top_drop_m * 1e3,
                s.centroid_drop_m * 1e3,
                match &s.slid_part {
                    Some(p) => format!(
                        " (SLID OFF: {}, top {:.1} mm, centroid {:.1} mm)",
                        p.part,
                        p.top_drop_m * 1e3,
                        p.centroid_drop_m * 1e3
                    ),
                    None => String::new(),
                }
            ),
        ),
        (
            "attached",
            format!(
                "{} yarn ends ({})",
                s.attached_nodes,
                s.attached_labels.join(", ")
            ),
        ),
        (
            "routed",
            format!(
                "{} seam ties sewn over the body (their paths crossed it)",
                s.routed_seam_ties
            ),
        ),
        ("finite", s.finite.to_string()),
        ("backend", s.backend.clone()),
    ];
    let animation = s.animation.as_ref().map(|a| {
        (
            "animation",
            format!(
                "{} frames at {} fps, {:.2} s played in {} steps ({:.1} s wall); deepest inside the moving body {:.2} mm at nodes, {:.2} mm along segments; garment moved ({:.0}, {:.0}, {:.0}) mm, body ({:.0}, {:.0}, {:.0}) mm",
                a.frames,
                a.fps,
                a.played_s,
                a.steps,
                a.wall_time_s,
                a.max_penetration_m * 1e3,
                a.max_segment_penetration_m * 1e3,
                a.centroid_shift_m[0] * 1e3,
                a.centroid_shift_m[1] * 1e3,
                a.centroid_shift_m[2] * 1e3,
                a.body_centroid_shift_m[0] * 1e3,
                a.body_centroid_shift_m[1] * 1e3,
                a.body_centroid_shift_m[2] * 1e3,
            ),
        )
    });
    for (k, v) in rows.into_iter().chain(animation) {
        eprintln!("  {k:16} {v}");
    }
    if let Some(w) = s
        .stitch_gaps
        .iter()
        .max_by(|a, b| a.max_gap_m.total_cmp(&b.max_gap_m))
    {
        eprintln!(
            "  {:16} {} – {} ({:.2} mm)",
            "widest seam",
            w.a,
            w.b,
            w.max_gap_m * 1e3
        );
    }
    eprintln!("  outputs in {}", out.display());
}

/// Entry point of `weft drape`.
///
/// # Errors
/// See [`drape`].
pub fn run(args: &DrapeArgs) -> Result<()> {
    drape(args).map(|_| ())
}
