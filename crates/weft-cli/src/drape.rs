//! `weft drape`: a sewing pattern woven, sewn around a body and draped
//! (the garment pipeline, DESIGN §8).
//!
//! Phases: (1) weave every panel at the yarn spacing and place it in 3D
//! (`weft-pattern`); (2) sew: gravity off, seam ties pull the yarn ends of
//! every stitched edge to their partner points on the other edge, against
//! the body collider; (3) drape: gravity on, the ties keep holding the seams.
//! Then the outputs: `final_state.json`, `summary.json`, yarn curves for
//! renderers (BCC, Mitsuba, OBJ polylines, OBJ tubes, USD) and `preview.png`.
//!
//! Coarse yarn grids: at garment scale a model yarn stands for a strip of
//! fabric one spacing `s` wide, so the material presets give fabric
//! properties per unit width and area and are converted per yarn:
//! `k_s = E_w s`, `k_b = B_w s`, shear `k_x = G s / 4` (four warp/weft
//! pairs per crossing, each with measure `s`), linear density
//! `ρ_l = ρ_A s / 2` (warp and weft share the areal density).

use crate::backend::{BackendChoice, Selected};
use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use nalgebra::Vector3;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;
use weft_core::{Damping, Friction, Material, ModeCoefficients};
use weft_io::{CurveExportOptions, CurveFormat, TriMesh, YarnCurves};
use weft_pattern::{Pattern, WeaveOptions, weave_garment};
use weft_solver::collide::{Collider, TriangleMesh};
use weft_solver::{Settings, Simulation, Tie};

/// Fabric presets for `weft drape --material` (per unit width/area values,
/// converted per yarn as the module docs say).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Preset {
    /// Cotton shirting: 0.15 kg/m², tensile 2e4 N/m, bending 5e-6 N·m,
    /// shear 50 N/m, yarn radius 0.3 mm.
    Cotton,
    /// Denim: 0.35 kg/m², tensile 5e4 N/m, bending 3e-5 N·m, shear 200 N/m,
    /// yarn radius 0.5 mm.
    Denim,
    /// Silk: 0.06 kg/m², tensile 1e4 N/m, bending 5e-7 N·m, shear 20 N/m,
    /// yarn radius 0.15 mm.
    Silk,
}

/// Physical values of a [`Preset`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FabricProperties {
    /// Areal density ρ_A (kg/m²).
    pub areal_density: f64,
    /// Tensile stiffness per width E_w (N/m).
    pub tensile: f64,
    /// Bending rigidity per width B_w (N·m).
    pub bending: f64,
    /// In-plane shear stiffness G (N/m).
    pub shear: f64,
    /// Yarn radius R (m), used for crimp, exports and the contact margin.
    pub radius: f64,
}

impl Preset {
    /// The preset's fabric properties.
    pub fn properties(self) -> FabricProperties {
        let (areal_density, tensile, bending, shear, radius) = match self {
            Preset::Cotton => (0.15, 2e4, 5e-6, 50.0, 0.3e-3),
            Preset::Denim => (0.35, 5e4, 3e-5, 200.0, 0.5e-3),
            Preset::Silk => (0.06, 1e4, 5e-7, 20.0, 0.15e-3),
        };
        FabricProperties {
            areal_density,
            tensile,
            bending,
            shear,
            radius,
        }
    }

    /// The per-yarn material for yarn spacing `s` (m), with strain-rate
    /// damping `k_d = β k` [SBO18 eq. 12] (β = 2 ms in stretch, 20 ms in
    /// bending and shear).
    pub fn material(self, s: f64) -> Material {
        let p = self.properties();
        let name = format!("{self:?}").to_lowercase();
        let rho_l = p.areal_density * s / 2.0;
        let (k_s, k_b, k_x) = (p.tensile * s, p.bending * s, p.shear * s / 4.0);
        Material {
            name,
            radius: p.radius,
            density: rho_l / (std::f64::consts::PI * p.radius * p.radius),
            stretch_stiffness: k_s,
            bending_stiffness: k_b,
            shear_stiffness: k_x,
            contact_stiffness: 0.0,
            friction: Friction {
                mu: 0.3,
                anchor_stiffness: 0.0,
            },
            damping: Damping::StrainRate(ModeCoefficients {
                stretch: 2e-3 * k_s,
                bending: 2e-2 * k_b,
                shear: 2e-2 * k_x,
                contact: 0.0,
            }),
        }
    }
}

/// Mass-proportional drag during sewing (1/s): a numerical aid that keeps
/// the sewing quasi-static (`weft_solver::Assembler::drag`).
pub const SEWING_DRAG: f64 = 20.0;

/// Arguments of `weft drape`.
#[derive(Args, Debug)]
pub struct DrapeArgs {
    /// Sewing pattern: GarmentCode (`*_specification.json`) or
    /// Garment-Pattern-Generator JSON.
    pub pattern: PathBuf,
    /// Body mesh (OBJ, closed) used as collider; default: weft's own
    /// mannequin (data/bodies/mannequin.obj, generated in memory).
    #[arg(long)]
    pub body: Option<PathBuf>,
    /// Scale applied to the body OBJ to get metres (e.g. 0.01 for a file
    /// in cm).
    #[arg(long, default_value_t = 1.0)]
    pub body_scale: f64,
    /// Yarn spacing in millimetres (warp and weft).
    #[arg(long, default_value_t = 20.0)]
    pub spacing: f64,
    /// Edge labels whose yarn ends are held to the body while sewing
    /// (comma-separated, e.g. `lower_interface`): each is pulled by a spring
    /// as stiff as a seam tie to the body point nearest to where it starts
    /// (one yarn radius plus the contact margin out), as GarmentCode's
    /// simulator holds attachment edges; released for draping.
    #[arg(long, value_delimiter = ',')]
    pub attach: Vec<String>,
    /// Grade factor: every length of the pattern times this (panel outlines
    /// about their origins, panel positions in x and z), for a pattern made
    /// for a smaller or larger body; see `weft_pattern::Pattern::graded`.
    #[arg(long, default_value_t = 1.0)]
    pub grade: f64,
    /// Fabric preset.
    #[arg(long, value_enum, default_value_t = Preset::Cotton)]
    pub material: Preset,
    /// Sewing time (s, simulated, gravity off).
    #[arg(long, default_value_t = 0.5)]
    pub sew_duration: f64,
    /// Draping time (s, simulated, gravity on).
    #[arg(long, default_value_t = 1.0)]
    pub duration: f64,
    /// Largest time step (s).
    #[arg(long, default_value_t = 5e-3)]
    pub dt_max: f64,
    /// Newton tolerance relative to the step's force scale (the scene
    /// runner's default is 1e-6; a drape only needs visual accuracy).
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
    /// are also written every `frame_dt` of sewing and draping, in every
    /// chosen format, as `DIR/frames/frame_NNNN.*` (frame 0 is the woven,
    /// placed garment); 0 writes the final state only.
    #[arg(long, default_value_t = 0.0)]
    pub frame_dt: f64,
    /// Output directory.
    #[arg(short, long)]
    pub out: PathBuf,
    /// No progress bars.
    #[arg(short, long)]
    pub quiet: bool,
    /// Engine: `cpu`, `cuda` or `auto` (as `weft run --backend`). The
    /// sewing and draping phases change gravity, drag and colliders between
    /// phases, which the CUDA step driver does not follow: `cuda` is
    /// refused with that reason, `auto` uses the CPU and says why.
    #[arg(long, value_enum, default_value_t = BackendChoice::Cpu)]
    pub backend: BackendChoice,
}

/// `DIR/summary.json` (DESIGN §8 garment pipeline keys, plus the phases'
/// details).
#[derive(Serialize, Debug, Clone)]
pub struct DrapeSummary {
    /// The pattern file.
    pub pattern: String,
    /// Panels woven.
    pub panels: usize,
    /// Yarn pieces (warp + weft).
    pub yarns: usize,
    /// Crossing nodes.
    pub crossings: usize,
    /// Stitches sewn.
    pub seams: usize,
    /// Seam ties (one per yarn end on a stitched edge).
    pub seam_ties: usize,
    /// Nodes of the fabric.
    pub nodes: usize,
    /// Accepted time steps (sewing + draping).
    pub steps: usize,
    /// Rejected step attempts.
    pub rejected: usize,
    /// Wall time of the whole command (s).
    pub wall_time_s: f64,
    /// Largest seam-tie gap at the end (m).
    pub max_seam_gap_m: f64,
    /// Largest seam-tie gap after sewing, before draping (m).
    pub max_seam_gap_after_sewing_m: f64,
    /// How far the garment's centroid sank from its placement to the end
    /// (m, positive down): a garment that slides off the body shows here.
    pub centroid_drop_m: f64,
    /// Deepest node inside the body at the end (m, 0 if none).
    pub max_penetration_m: f64,
    /// Every coordinate finite.
    pub finite: bool,
    /// Yarn spacing (m).
    pub spacing_m: f64,
    /// Material preset.
    pub material: String,
    /// Grade factor applied to the pattern.
    pub grade: f64,
    /// Yarn ends held to the body while sewing (`--attach`).
    pub attached_nodes: usize,
    /// Frames of yarn curves written under `frames/` (`--frame-dt`).
    pub frames: usize,
    /// Body used.
    pub body: String,
    /// Per stitch (file order): the two sewn edges and the largest tie gap
    /// at the end.
    pub stitch_gaps: Vec<StitchGap>,
    /// Per panel (file order): what weaving made of it.
    pub panel_weaves: Vec<PanelWeave>,
    /// The backend that stepped the simulation (`"cpu"` or `"cuda"`).
    pub backend: String,
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
    /// Position of the yarn end with the largest gap (m); `None` for a
    /// stitch without ties (no yarn end on its edges at this spacing).
    pub widest_at_m: Option<[f64; 3]>,
    /// The point on the other edge it is tied to (m).
    pub widest_target_m: Option<[f64; 3]>,
}

fn bar(quiet: bool, len: u64, what: &str) -> ProgressBar {
    let b = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(len)
    };
    b.set_style(
        ProgressStyle::with_template(&format!(
            "{what:8} {{bar:30}} {{pos}}/{{len}} ms  {{msg}}  [{{elapsed_precise}}]"
        ))
        .expect("valid template"),
    );
    b
}

/// Largest seam-tie gap (m) at coordinates `q` (5 per node).
pub fn max_gap(ties: &[Tie], q: &[f64]) -> f64 {
    let x = |i: usize| Vector3::new(q[5 * i], q[5 * i + 1], q[5 * i + 2]);
    ties.iter()
        .map(|t| (x(t.node) - (x(t.other[0]) * (1.0 - t.t) + x(t.other[1]) * t.t)).norm())
        .fold(0.0, f64::max)
}

fn load_body(args: &DrapeArgs) -> Result<(TriMesh, String)> {
    match &args.body {
        Some(p) => {
            let mut m = TriMesh::from_obj(p)?;
            for v in &mut m.vertices {
                for c in v.iter_mut() {
                    *c *= args.body_scale;
                }
            }
            Ok((m, p.display().to_string()))
        }
        None => Ok((
            weft_io::mannequin::generate(),
            "weft mannequin (data/bodies/mannequin.obj)".into(),
        )),
    }
}

/// Runs the garment pipeline; see the module docs.
///
/// # Errors
/// Pattern errors (file, JSON path, expectation), a body mesh that is not a
/// closed surface, an unknown curve format, a solver failure (the outputs of
/// the last good state are written first), output errors.
pub fn drape(args: &DrapeArgs) -> Result<DrapeSummary> {
    let start = Instant::now();
    let formats: Vec<CurveFormat> = args
        .formats
        .iter()
        .map(|f| {
            CurveFormat::ALL
                .into_iter()
                .find(|c| c.name() == f.trim())
                .with_context(|| {
                    format!("--formats: unknown curve format {f:?}; expected bcc, mitsuba, obj, tubes or usda")
                })
        })
        .collect::<Result<_>>()?;
    if !(args.spacing > 0.0 && args.spacing.is_finite()) {
        bail!(
            "--spacing: expected a yarn spacing > 0 mm, got {}",
            args.spacing
        );
    }
    let s = args.spacing * 1e-3;
    // Weave and place.
    if !(args.grade > 0.0 && args.grade.is_finite()) {
        bail!("--grade: expected a factor > 0, got {}", args.grade);
    }
    let mut pattern = Pattern::from_file(&args.pattern)?;
    if args.grade != 1.0 {
        pattern = pattern.graded(args.grade);
    }
    let mut opts = WeaveOptions::new(s);
    opts.material = args.material.material(s);
    opts.sliding = false;
    let garment = weave_garment(&pattern, &opts)?;
    let (yarns, crossings, _ends) = garment.totals();
    let ties: Vec<Tie> = garment
        .seams
        .iter()
        .map(|t| Tie {
            node: t.node,
            other: t.other,
            t: t.t,
        })
        .collect();
    let nodes = garment.fabric.node_count();
    let panel_weaves: Vec<PanelWeave> = garment
        .panels
        .iter()
        .map(|p| PanelWeave {
            name: p.name.clone(),
            warp_yarns: p.warp_yarns,
            weft_yarns: p.weft_yarns,
            crossings: p.crossings,
            ends: p.ends,
        })
        .collect();
    if !args.quiet {
        eprintln!(
            "weft drape: {} panels, {yarns} yarns, {crossings} crossings, {nodes} nodes, {} stitches, {} seam ties",
            garment.panels.len(),
            pattern.stitches.len(),
            ties.len()
        );
        eprintln!(
            "  {:24} {:>6} {:>6} {:>9} {:>6}",
            "panel", "warp", "weft", "crossings", "ends"
        );
        for p in &panel_weaves {
            eprintln!(
                "  {:24} {:>6} {:>6} {:>9} {:>6}",
                p.name, p.warp_yarns, p.weft_yarns, p.crossings, p.ends
            );
        }
    }
    if !args.quiet {
        for (st, rep) in pattern.stitches.iter().zip(&garment.stitches) {
            if rep.ends.contains(&0) {
                let name = |e: &weft_pattern::EdgeRef| {
                    format!("{}:{}", pattern.panels[e.panel].name, e.edge)
                };
                eprintln!(
                    "note: stitch {} – {} holds no yarn end on one side at {} mm spacing; that side is sewn at its middle only (a finer --spacing sews it along its length)",
                    name(&st.a),
                    name(&st.b),
                    args.spacing
                );
            }
        }
    }
    // Body collider.
    let (body, body_name) = load_body(args)?;
    let verts: Vec<Vector3<f64>> = body.vertices.iter().map(|v| Vector3::from(*v)).collect();
    let mesh = TriangleMesh::from_triangles(&body_name, &verts, &body.triangles)
        .with_context(|| format!("body {body_name}"))?;
    let mat = &garment.fabric.materials[0];
    let k_s = mat.stretch_stiffness;
    let radius = mat.radius;
    // Penalty: a node pressed by a force of 1 % of the yarn stiffness sinks
    // by at most a yarn radius.
    let collider = Collider::new(mesh, 0.01 * k_s / radius, 0.5)?;
    let margin = 2.0 * radius;
    let settings = Settings {
        dt: 1e-3,
        dt_max: args.dt_max,
        dt_min: 1e-7,
        newton_tolerance: args.newton_tolerance,
        ..Settings::default()
    };
    let gravity = Vector3::new(0.0, -9.81, 0.0);
    let mut sim = Simulation::with_ties(
        garment.fabric.clone(),
        gravity,
        settings,
        vec![],
        ties.clone(),
    );
    sim.assembler.contact.colliders = vec![(collider.clone(), margin)];
    // The kernels cover every term of a garment (mesh body, ties, drag,
    // attachments), but the phases change gravity, drag and colliders
    // between runs, which the CUDA step driver (fixed at upload) does not
    // follow: drape stays on the CPU, checked before looking for a device.
    const PHASES: &str = "the sewing and draping phases change gravity, drag and colliders between phases, which the CUDA step driver (fixed at upload) does not follow";
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
    // Seam ties: the largest initial gap pulls with 5 % of a yarn's axial
    // stiffness; overdamped (time constant ~0.1 s).
    let gap0 = max_gap(&ties, &sim.q).max(s);
    sim.assembler.tie_stiffness = 0.05 * k_s / gap0;
    sim.assembler.tie_damping = 0.1 * sim.assembler.tie_stiffness;
    // Attachments: labelled edges held to the nearest body point.
    let mut attachments = Vec::new();
    for label in &args.attach {
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
            bail!(
                "--attach: no edge of {} is labelled {label:?}; its edge labels are: {}",
                args.pattern.display(),
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            );
        }
        for node in nodes {
            let x = Vector3::new(sim.q[5 * node], sim.q[5 * node + 1], sim.q[5 * node + 2]);
            let (phi, n) = collider.distance(&x, 0.0);
            attachments.push((node, x - n * (phi - radius - margin)));
        }
    }
    let attached_nodes = attachments.len();
    sim.assembler.attachments = attachments;
    sim.assembler.attachment_stiffness = sim.assembler.tie_stiffness;
    let centroid_y = |q: &[f64]| q.chunks(5).map(|c| c[1]).sum::<f64>() / nodes.max(1) as f64;
    let y_placed = centroid_y(&sim.q);
    let out = &args.out;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;

    if !(args.frame_dt >= 0.0 && args.frame_dt.is_finite()) {
        bail!("--frame-dt: expected a time >= 0 s, got {}", args.frame_dt);
    }
    let frames_dir = out.join("frames");
    let mut frame = 0usize;
    let mut write_frame = |sim: &Simulation| -> Result<()> {
        if args.frame_dt > 0.0 {
            std::fs::create_dir_all(&frames_dir)
                .with_context(|| format!("cannot create {}", frames_dir.display()))?;
            let x = sim.state().x;
            weft_io::write_curves(
                &frames_dir,
                &format!("frame_{frame:04}"),
                &sim.assembler.fabric,
                &x,
                &formats,
                &CurveExportOptions::default(),
            )?;
            frame += 1;
        }
        Ok(())
    };
    write_frame(&sim)?;
    let mut steps = 0usize;
    let mut run_phase = |sim: &mut Simulation, duration: f64, what: &str| -> Result<()> {
        let b = bar(args.quiet, (duration * 1e3).round() as u64, what);
        let t0 = sim.t;
        // Advance frame by frame (the integrator lands exactly on each
        // frame time), or in one go without frames.
        let mut res = Ok(Vec::new());
        let mut t_next = t0;
        while res.is_ok() && t_next < t0 + duration - 1e-12 {
            t_next = if args.frame_dt > 0.0 {
                (t_next + args.frame_dt).min(t0 + duration)
            } else {
                t0 + duration
            };
            res = sim
                .advance_to(t_next, |s, st| {
                    b.set_position(((s.t - t0) * 1e3) as u64);
                    b.set_message(format!(
                        "h {:.1e} s  newton {}  cg {}",
                        st.h, st.newton_iterations, st.cg_iterations
                    ));
                })
                .map_err(anyhow::Error::from)
                .and_then(|st| {
                    steps += st.len();
                    write_frame(sim)?;
                    Ok(st)
                });
        }
        b.finish_and_clear();
        match res {
            Ok(_) => Ok(()),
            Err(e) => {
                let state = sim.state();
                let fabric = &sim.assembler.fabric;
                weft_io::write_final_state(out.join("final_state.json"), &state, fabric)?;
                // A picture of the last good state helps to see what went wrong.
                let curves = YarnCurves::from_positions(fabric, &state.x, 4)?;
                weft_io::write_preview(out.join("preview.png"), &curves, Some(&body), 1200, 900)?;
                bail!(
                    "{what} failed at t = {:.4} s: {e}\n  final_state.json and preview.png in {} show the last good state",
                    sim.t,
                    out.display()
                )
            }
        }
    };
    // Sewing: no gravity, no friction against the body, and a drag of
    // 20 /s that keeps the motion quasi-static; then draping with gravity,
    // friction and no drag.
    sim.assembler.gravity = Vector3::zeros();
    sim.assembler.drag = SEWING_DRAG;
    let frictionless = Collider::new(collider.shape.clone(), collider.stiffness, 0.0)?;
    sim.assembler.contact.colliders = vec![(frictionless, margin)];
    run_phase(&mut sim, args.sew_duration, "sewing")?;
    let gap_sewn = max_gap(&ties, &sim.q);
    sim.assembler.attachment_stiffness = 0.0;
    sim.assembler.gravity = gravity;
    sim.assembler.drag = 0.0;
    sim.assembler.contact.colliders = vec![(collider.clone(), margin)];
    run_phase(&mut sim, args.duration, "draping")?;

    // Outputs.
    let state = sim.state();
    let fabric = &sim.assembler.fabric;
    weft_io::write_final_state(out.join("final_state.json"), &state, fabric)?;
    weft_io::write_curves(
        out,
        "yarns",
        fabric,
        &state.x,
        &formats,
        &CurveExportOptions::default(),
    )?;
    let curves = YarnCurves::from_positions(fabric, &state.x, 4)?;
    weft_io::write_preview(out.join("preview.png"), &curves, Some(&body), 1200, 900)?;
    let finite = sim.q.iter().chain(&sim.v).all(|v| v.is_finite());
    let max_penetration_m = state
        .x
        .iter()
        .map(|x| (-collider.distance(x, sim.t).0).max(0.0))
        .fold(0.0, f64::max);
    let xs = &state.x;
    let edge_name =
        |e: &weft_pattern::EdgeRef| format!("{}:{}", pattern.panels[e.panel].name, e.edge);
    let stitch_gaps = pattern
        .stitches
        .iter()
        .zip(&garment.stitches)
        .map(|(st, rep)| {
            let ties = &garment.seams[rep.ties.clone()];
            let widest = ties.iter().max_by(|a, b| a.gap(xs).total_cmp(&b.gap(xs)));
            StitchGap {
                a: edge_name(&st.a),
                b: edge_name(&st.b),
                max_gap_m: widest.map_or(0.0, |t| t.gap(xs)),
                widest_at_m: widest.map(|t| xs[t.node].into()),
                widest_target_m: widest
                    .map(|t| (xs[t.other[0]] * (1.0 - t.t) + xs[t.other[1]] * t.t).into()),
            }
        })
        .collect();
    let summary = DrapeSummary {
        pattern: args.pattern.display().to_string(),
        panels: garment.panels.len(),
        yarns,
        crossings,
        seams: pattern.stitches.len(),
        seam_ties: ties.len(),
        nodes,
        steps,
        rejected: sim.rejections.values().sum(),
        wall_time_s: start.elapsed().as_secs_f64(),
        max_seam_gap_m: max_gap(&ties, &sim.q),
        max_seam_gap_after_sewing_m: gap_sewn,
        max_penetration_m,
        centroid_drop_m: y_placed - centroid_y(&sim.q),
        finite,
        spacing_m: s,
        material: format!("{:?}", args.material).to_lowercase(),
        grade: args.grade,
        attached_nodes,
        frames: frame,
        body: body_name,
        stitch_gaps,
        panel_weaves,
        backend: selected.name().into(),
    };
    weft_io::atomic_write(&out.join("summary.json"), |w| {
        serde_json::to_writer_pretty(&mut *w, &summary).map_err(std::io::Error::other)
    })?;
    if !args.quiet {
        print_summary(&summary, out);
    }
    Ok(summary)
}

fn print_summary(s: &DrapeSummary, out: &Path) {
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
            format!("{:.2} mm", s.max_penetration_m * 1e3),
        ),
        (
            "centroid drop",
            format!("{:.1} mm", s.centroid_drop_m * 1e3),
        ),
        ("finite", s.finite.to_string()),
        ("backend", s.backend.clone()),
    ];
    for (k, v) in rows {
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
