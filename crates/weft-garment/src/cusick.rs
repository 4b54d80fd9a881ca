//! The Cusick drape test, the textile industry's standard drape measurement
//! (Cusick 1968, *The measurement of fabric drape*, J. Text. Inst.
//! 59(6):253-260; BS 5058, ISO 9073-9): a circular specimen (30 cm across)
//! is held between two horizontal discs (18 cm across) and hangs into folds
//! under its own weight. Lit from above, it casts a shadow of area `S`; the
//! **drape coefficient** is the shadow's share of the unsupported annulus,
//!
//! `DC = (S - A_d) / (A_s - A_d)`, `A_d = π r_d²`, `A_s = π r_s²`
//!
//! (0 for a specimen hanging straight down, 1 for one that stays flat), and
//! the **node count** is the number of folds around it.
//!
//! Here the specimen is the preset's fabric woven at the test's spacing
//! ([`weft_pattern::weave::weave_outline`] of a circular outline, warp along
//! `x`), the clamped disc is the yarn nodes within `r_d` of the centre held
//! fixed, a solid **pedestal** under it ([`pedestal`], one spacing plus
//! the contact reach narrower than the disc, inside its ragged rim of
//! clamped nodes) keeps the hanging fabric from swinging in under the
//! disc, and the specimen relaxes under gravity to static equilibrium
//! by [`RelaxOptions`]' two figures. A small random ripple (deterministic,
//! [`CusickOptions::ripple`]) breaks the weave's four-fold symmetry, as a
//! real specimen's imperfections do, without choosing a fold count.
//!
//! The shadow is the union of the yarns' projections on the horizontal
//! plane: in each of [`SHADOW_BINS`] directions from the centre, the
//! farthest point of any yarn segment, so the shadow is taken as
//! star-shaped from the centre (true of a Cusick drape, whose folds hang
//! outward from the disc).

use crate::error::GarmentError;
use crate::options::RelaxOptions;
use crate::pipeline::{
    GRAVITY, LevelSim, contact_margin, fabric_collider, relax_settings, write_state_outputs,
};
use crate::progress::{Phase, Progress};
use nalgebra::Vector3;
use serde::{Deserialize, Serialize};
use std::f64::consts::{PI, TAU};
use std::path::Path;
use std::time::Instant;
use weft_core::{FabricBuilder, FabricPreset, PanelNode, State, WovenPanelSpec};
use weft_io::{CurveFormat, TriMesh};
use weft_pattern::geometry::Outline;
use weft_pattern::weave::weave_outline;
use weft_solver::Simulation;
use weft_solver::collide::{CollideError, TriangleMesh};

/// Directions in which the shadow's radius is measured (one per 0.5°).
pub const SHADOW_BINS: usize = 720;

/// Depth below the disc (m) from which a node counts as hanging in
/// [`CusickSummary::hanging_min_radius_m`].
pub const UNDER_DISC_DEPTH: f64 = 0.01;

/// Sides of the pedestal's polygon: its flats lie within
/// `r (1 - cos(π/256))` (7 µm at a 90 mm radius) of the circle.
pub const PEDESTAL_SIDES: usize = 256;

/// The pedestal under the disc as a closed triangle mesh (m, `y` up): a
/// prism of [`PEDESTAL_SIDES`] sides around the `y` axis, inscribed in the
/// circle of `radius` (its edges on the circle, so no part of it lies
/// outside), from `top` down to `top - depth`. [`cusick`] stands it under
/// the disc, narrower than it (module docs): a static Cusick drape hangs
/// from the rim, and the pedestal only stops fabric that swings in under
/// the disc while it falls. `2 + 2 sides` vertices, `4 sides` triangles,
/// counter-clockwise seen from outside.
///
/// # Errors
/// [`CollideError::InvalidShape`] for a non-finite `top`, or a `radius` or
/// `depth` that is not finite and positive.
pub fn pedestal(radius: f64, top: f64, depth: f64) -> Result<TriangleMesh, CollideError> {
    let positive = |x: f64| x.is_finite() && x > 0.0;
    if !(positive(radius) && positive(depth) && top.is_finite()) {
        return Err(CollideError::InvalidShape {
            shape: "Cusick pedestal",
            reason: format!(
                "expected a finite top and positive radius and depth (m), got top {top}, \
                 radius {radius}, depth {depth}"
            ),
        });
    }
    let n = PEDESTAL_SIDES;
    let mut v = Vec::with_capacity(2 * n + 2);
    for y in [top, top - depth] {
        for k in 0..n {
            let a = TAU * k as f64 / n as f64;
            v.push(Vector3::new(radius * a.cos(), y, -radius * a.sin()));
        }
    }
    v.push(Vector3::new(0.0, top, 0.0));
    v.push(Vector3::new(0.0, top - depth, 0.0));
    let (ct, cb) = (2 * n as u32, 2 * n as u32 + 1);
    let mut t = Vec::with_capacity(4 * n);
    for k in 0..n as u32 {
        let k1 = (k + 1) % n as u32;
        let (a, b, c, d) = (k, k1, n as u32 + k, n as u32 + k1);
        t.push([ct, a, b]);
        t.push([cb, d, c]);
        t.push([a, c, d]);
        t.push([a, d, b]);
    }
    TriangleMesh::from_triangles("Cusick pedestal", &v, &t)
}

/// Options of [`cusick`] (serde; every key optional, unknown keys errors).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CusickOptions {
    /// Fabric preset. Default cotton.
    pub material: FabricPreset,
    /// Yarn spacing (mm, > 0), warp and weft. Default 5.
    pub spacing_mm: f64,
    /// Specimen diameter (m). Default 0.30 (BS 5058).
    pub specimen_diameter: f64,
    /// Supporting disc diameter (m), below the specimen's. Default 0.18.
    pub disc_diameter: f64,
    /// Amplitude of the initial out-of-plane ripple (m, ≥ 0): each free
    /// node starts this much times a pseudo-random number in `[-1, 1]`
    /// (fixed seed) times its distance from the disc over the overhang.
    /// Default 0.5 mm.
    pub ripple: f64,
    /// Relaxation to static equilibrium. Default: `min_time` 0.5 s,
    /// `max_time` 4 s, the drape's tolerances.
    pub relax: RelaxOptions,
    /// Largest time step (s). Default 5e-3.
    pub dt_max: f64,
    /// Newton tolerance relative to the step's force scale. Default 1e-3.
    pub newton_tolerance: f64,
    /// Whether a solid pedestal stands under the disc ([`pedestal`]).
    /// Default true. Without it the disc is only its clamped nodes, and a
    /// fine specimen still swinging can pass in under the disc (the 5 mm
    /// silk run of the sixteenth session, BENCHMARKS.md).
    pub pedestal: bool,
    /// Whether the Newton matrix holds the strain-rate dissipation's clamped
    /// position Jacobian ([`weft_solver::Settings::dissipation_position_jacobian`]).
    /// Default false: the same forces and converged steps, and on the
    /// specimens measured (BENCHMARKS.md, 2026-11-26) cotton at 10 mm and
    /// denim at 15 mm took 2.5-3x fewer Newton iterations, 4-20x fewer
    /// rejected steps and 2.5-3.3x less wall time, silk at 5 mm 1.9x less
    /// wall time per simulated second.
    pub dissipation_position_jacobian: bool,
}

impl Default for CusickOptions {
    fn default() -> Self {
        Self {
            material: FabricPreset::Cotton,
            spacing_mm: 5.0,
            specimen_diameter: 0.30,
            disc_diameter: 0.18,
            ripple: 0.5e-3,
            relax: RelaxOptions {
                min_time: 0.5,
                max_time: 4.0,
                ..RelaxOptions::default()
            },
            dt_max: 5e-3,
            newton_tolerance: 1e-3,
            pedestal: true,
            dissipation_position_jacobian: false,
        }
    }
}

impl CusickOptions {
    fn validate(&self) -> Result<(), GarmentError> {
        let bad = |option: &str, expected: &str, found: f64| {
            Err(GarmentError::Option {
                option: option.into(),
                expected: expected.into(),
                found: found.to_string(),
            })
        };
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if !positive(self.spacing_mm) {
            return bad("spacing_mm", "a positive spacing (mm)", self.spacing_mm);
        }
        if !positive(self.specimen_diameter) {
            return bad(
                "specimen_diameter",
                "a positive diameter (m)",
                self.specimen_diameter,
            );
        }
        if !positive(self.disc_diameter) || self.disc_diameter >= self.specimen_diameter {
            return bad(
                "disc_diameter",
                "a positive diameter (m) below the specimen's",
                self.disc_diameter,
            );
        }
        let overhang = 0.5 * (self.specimen_diameter - self.disc_diameter);
        if self.spacing_mm * 1e-3 > overhang / 4.0 {
            return bad(
                "spacing_mm",
                &format!(
                    "at most a quarter of the overhang ({:.1} mm), so the folds are resolved",
                    overhang / 4.0 * 1e3
                ),
                self.spacing_mm,
            );
        }
        if !(self.ripple.is_finite() && self.ripple >= 0.0) {
            return bad("ripple", "a non-negative amplitude (m)", self.ripple);
        }
        if !positive(self.dt_max) {
            return bad("dt_max", "a positive time step (s)", self.dt_max);
        }
        Ok(())
    }
}

/// The measured drape ([`Cusick::summary`], `summary.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CusickSummary {
    /// Preset name.
    pub material: String,
    /// Yarn spacing (m).
    pub spacing_m: f64,
    /// Specimen and disc diameters (m).
    pub specimen_diameter_m: f64,
    /// Supporting disc diameter (m).
    pub disc_diameter_m: f64,
    /// The fabric's bending length `(B_w / ρ_A g)^(1/3)` (m).
    pub bending_length_m: f64,
    /// Yarn nodes and crossings of the specimen.
    pub nodes: usize,
    /// Warp/weft crossings.
    pub crossings: usize,
    /// Drape coefficient (module docs), dimensionless.
    pub drape_coefficient: f64,
    /// Folds (drape nodes) around the specimen.
    pub folds: usize,
    /// Shadow radius per direction (m), [`SHADOW_BINS`] directions from
    /// `+x` (warp) toward `+z`.
    pub shadow_radius_m: Vec<f64>,
    /// Lowest point of the specimen below the disc (m).
    pub drop_m: f64,
    /// Smallest horizontal distance from the axis (m) of a node more than
    /// [`UNDER_DISC_DEPTH`] below the disc: at least about the disc radius
    /// for fabric hanging from the rim, less where it has swung in under
    /// the disc. `None` if no node hangs that low.
    pub hanging_min_radius_m: Option<f64>,
    /// Whether it ended static ([`RelaxOptions`]).
    pub is_static: bool,
    /// Final kinetic energy (J) and force residual (net over weight).
    pub kinetic_energy_j: f64,
    /// Final force residual.
    pub residual: f64,
    /// Simulated time (s), accepted steps and wall time (s).
    pub simulated_time_s: f64,
    /// Accepted steps.
    pub steps: usize,
    /// Newton iterations and PCG iterations over all steps.
    pub newton_iterations: usize,
    /// PCG iterations over all steps.
    pub cg_iterations: usize,
    /// Rejected step attempts by reason ([`weft_solver::Rejection::key`]).
    pub rejected: std::collections::BTreeMap<String, usize>,
    /// Wall time (s).
    pub wall_time_s: f64,
}

/// A finished Cusick test: the specimen's fabric, its draped state and the
/// measurement.
pub struct Cusick {
    /// The specimen (its `initial` state is the flat, rippled start).
    pub fabric: weft_core::Fabric,
    /// The draped state.
    pub state: State,
    /// The measurement.
    pub summary: CusickSummary,
    /// The pedestal's surface, when there is one (drawn in `preview.png`).
    pub pedestal: Option<TriMesh>,
}

impl Cusick {
    /// Writes `summary.json`, `final_state.json`, the yarn curves
    /// (`yarns.*` in `formats`), `preview.png` and `shadow.svg` (the view
    /// from above: the specimen's flat outline in grey, the disc in dark
    /// grey, the shadow in blue) to `out` (created if missing), each
    /// atomically.
    ///
    /// # Errors
    /// [`GarmentError::Io`], [`GarmentError::Output`], [`GarmentError::Export`].
    pub fn write_outputs(&self, out: &Path, formats: &[CurveFormat]) -> Result<(), GarmentError> {
        write_state_outputs(
            out,
            &self.fabric,
            &self.state,
            formats,
            self.pedestal.as_ref(),
        )?;
        let svg = shadow_svg(&self.summary);
        let path = out.join("shadow.svg");
        weft_io::output::atomic_write(&path, |w| w.write_all(svg.as_bytes()))?;
        weft_io::write_json(&out.join("summary.json"), &self.summary)?;
        Ok(())
    }
}

/// The view from above as an SVG document (500 x 500 px): the flat
/// specimen, the disc and the shadow outline.
fn shadow_svg(s: &CusickSummary) -> String {
    use plotters::prelude::*;
    let mut svg = String::new();
    {
        let px = 500i32;
        let root = SVGBackend::with_string(&mut svg, (px as u32, px as u32)).into_drawing_area();
        let scale = 0.45 * px as f64 / (0.5 * s.specimen_diameter_m);
        let at = |r: f64, phi: f64| {
            (
                (0.5 * px as f64 + scale * r * phi.cos()).round() as i32,
                (0.5 * px as f64 - scale * r * phi.sin()).round() as i32,
            )
        };
        let circle = |r: f64| -> Vec<(i32, i32)> {
            (0..360).map(|k| at(r, TAU * k as f64 / 360.0)).collect()
        };
        let n = s.shadow_radius_m.len();
        let outline: Vec<(i32, i32)> = s
            .shadow_radius_m
            .iter()
            .enumerate()
            .map(|(k, &r)| at(r, TAU * (k as f64 + 0.5) / n as f64))
            .collect();
        // Drawing into a String cannot fail.
        let _ = root.fill(&WHITE);
        let _ = root.draw(&Polygon::new(
            circle(0.5 * s.specimen_diameter_m),
            RGBColor(225, 225, 225).filled(),
        ));
        let _ = root.draw(&Polygon::new(outline, RGBColor(140, 165, 235).filled()));
        let _ = root.draw(&Polygon::new(
            circle(0.5 * s.disc_diameter_m),
            RGBColor(90, 90, 90).filled(),
        ));
        let _ = root.present();
    }
    svg
}

/// A pseudo-random number in `[-1, 1]` from `i` (splitmix64).
fn noise(i: u64) -> f64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

/// The farthest point of the segments' horizontal projections (x, z) from
/// the origin in each of `bins` directions (angle from `+x` toward `+z`),
/// never less than `floor` (m): the radius of a star-shaped shadow.
pub fn shadow_radii(
    x: &[Vector3<f64>],
    segments: &[[usize; 2]],
    bins: usize,
    floor: f64,
) -> Vec<f64> {
    let mut r = vec![floor; bins];
    let dphi = TAU / bins as f64;
    let bin_of = |phi: f64| ((phi.rem_euclid(TAU) / dphi) as usize).min(bins - 1);
    for &[a, b] in segments {
        let (p, q) = ([x[a].x, x[a].z], [x[b].x, x[b].z]);
        let (pa, pb) = (p[1].atan2(p[0]), q[1].atan2(q[0]));
        for (pt, phi) in [(p, pa), (q, pb)] {
            let k = bin_of(phi);
            r[k] = r[k].max(pt[0].hypot(pt[1]));
        }
        let mut span = pb - pa;
        if span > PI {
            span -= TAU;
        } else if span < -PI {
            span += TAU;
        }
        let e = [q[0] - p[0], q[1] - p[1]];
        let cross = |u: [f64; 2], w: [f64; 2]| u[0] * w[1] - u[1] * w[0];
        let (lo, hi) = if span >= 0.0 {
            (pa, pa + span)
        } else {
            (pa + span, pa)
        };
        // Bin centres within [lo, hi]: the ray meets the segment there.
        let first = ((lo / dphi) - 0.5).ceil() as i64;
        let last = ((hi / dphi) - 0.5).floor() as i64;
        for j in first..=last {
            let phi = (j as f64 + 0.5) * dphi;
            let d = [phi.cos(), phi.sin()];
            let den = cross(d, e);
            if den.abs() < 1e-300 {
                continue;
            }
            let rr = cross(p, e) / den;
            if rr > 0.0 {
                let k = j.rem_euclid(bins as i64) as usize;
                r[k] = r[k].max(rr);
            }
        }
    }
    r
}

/// The area (m²) of a star-shaped region with radius `r[k]` in each of
/// `r.len()` equal directions: `Σ ½ r² Δφ`.
pub fn star_area(r: &[f64]) -> f64 {
    let dphi = TAU / r.len() as f64;
    r.iter().map(|x| 0.5 * x * x * dphi).sum()
}

/// Folds around a shadow profile `r` (one radius per direction, closed):
/// the upward crossings of its mean with hysteresis of a quarter of its
/// half-range, so ripples smaller than that are not folds. 0 for a flat
/// profile (half-range below 1 mm).
pub fn count_folds(r: &[f64]) -> usize {
    let n = r.len();
    let (lo, hi) = r
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let (mean, half) = (r.iter().sum::<f64>() / n as f64, 0.5 * (hi - lo));
    if half < 1e-3 {
        return 0;
    }
    let (up, down) = (mean + 0.25 * half, mean - 0.25 * half);
    let start = (0..n).min_by(|&a, &b| r[a].total_cmp(&r[b])).unwrap_or(0);
    let mut high = false;
    let mut folds = 0;
    for k in 0..n {
        let x = r[(start + k) % n];
        if !high && x > up {
            high = true;
            folds += 1;
        } else if high && x < down {
            high = false;
        }
    }
    folds
}

/// Runs the Cusick test of `opts` (module docs): weaves the specimen,
/// clamps the disc, relaxes under gravity and measures the shadow.
///
/// # Errors
/// [`GarmentError::Option`] for an option out of range (a spacing too
/// coarse for the overhang: more than a quarter of it), the fabric
/// builder's errors, and [`GarmentError::Solver`] if a step fails.
pub fn cusick(opts: &CusickOptions, progress: &mut dyn Progress) -> Result<Cusick, GarmentError> {
    opts.validate()?;
    let start = Instant::now();
    let s = opts.spacing_mm * 1e-3;
    let (rs, rd) = (0.5 * opts.specimen_diameter, 0.5 * opts.disc_diameter);
    // The outline: a polygon whose chords deviate from the circle by less
    // than 1 % of the spacing.
    let sides = ((PI / (2.0 * (0.01 * s / rs)).sqrt()).ceil() as usize).max(64);
    let outline = Outline::from_polygon(
        (0..sides)
            .map(|k| {
                let a = TAU * k as f64 / sides as f64;
                [rs * a.cos(), rs * a.sin()]
            })
            .collect(),
    );
    let w = weave_outline(&outline, [s, s], 0.0, 0.25, &[true]);
    let material = opts.material.material(s, false);
    let overhang = rs - rd;
    let nodes: Vec<PanelNode> = w
        .nodes
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let r = p[0].hypot(p[1]);
            let lift = opts.ripple * noise(i as u64) * ((r - rd) / overhang).clamp(0.0, 1.0);
            PanelNode {
                x: [p[0], lift, p[1]],
                u: w.u[i],
                v: w.v[i],
                crimp: w.crimp[i],
            }
        })
        .collect();
    let pinned: Vec<usize> = (0..w.nodes.len())
        .filter(|&i| w.nodes[i][0].hypot(w.nodes[i][1]) <= rd)
        .collect();
    let fabric_err = |e: weft_core::ModelError| GarmentError::Option {
        option: "spacing_mm".into(),
        expected: "a specimen the fabric builder accepts".into(),
        found: e.to_string(),
    };
    let mut builder = FabricBuilder::new(vec![material]).map_err(fabric_err)?;
    builder
        .add_woven_panel(&WovenPanelSpec {
            material: opts.material.name().into(),
            nodes,
            warp: w.warp.clone(),
            weft: w.weft.clone(),
            sliding: false,
            pinned,
        })
        .map_err(fabric_err)?;
    let fabric = builder.build().map_err(fabric_err)?;
    let (nodes, crossings) = (fabric.node_count(), w.crossings());
    progress.level(0, s, nodes);
    let settings = weft_solver::Settings {
        dissipation_position_jacobian: opts.dissipation_position_jacobian,
        ..relax_settings(opts.dt_max, opts.newton_tolerance)
    };
    let mat = &fabric.materials[0];
    let (k_s, radius) = (mat.stretch_stiffness, mat.radius);
    let mut sim = Simulation::new(fabric, Vector3::new(0.0, -GRAVITY, 0.0), settings, vec![]);
    // The pedestal: the clamped disc's rim is ragged (its outermost nodes
    // lie up to one spacing inside `r_d`), so the pedestal is one spacing
    // plus the contact reach (yarn radius and margin) narrower than the
    // disc, and its top 1 mm below that reach: fabric hanging from the rim
    // does not touch it, fabric swinging in under the disc does. It
    // reaches 1.5 overhangs down, below anything the specimen can reach.
    let pedestal_mesh = if opts.pedestal {
        let option_err = |option: &str, expected: &str, e: CollideError| GarmentError::Option {
            option: option.into(),
            expected: expected.into(),
            found: e.to_string(),
        };
        let margin = contact_margin(radius);
        let reach = radius + margin;
        let mesh = pedestal(rd - s - reach, -(reach + 1e-3), 1.5 * (rs - rd)).map_err(|e| {
            option_err(
                "disc_diameter",
                "a disc wider than one spacing, so a pedestal fits under it",
                e,
            )
        })?;
        let collider = fabric_collider(mesh.clone(), k_s, radius)
            .map_err(|e| option_err("material", "a fabric with a finite stiffness", e))?;
        sim.assembler.contact.colliders = vec![(collider, margin)];
        Some(mesh)
    } else {
        None
    };
    let mut ls = LevelSim::new(sim);
    let r = &opts.relax;
    progress.phase_start(Phase::Draping, r.max_time);
    let mut is_static = false;
    while ls.sim.t < r.max_time - 1e-9 {
        let t_end = (ls.sim.t + r.check_interval).min(r.max_time);
        ls.sim.forget_reused_preconditioner();
        let res = ls.advance_to(t_end, |sim, st| progress.step(sim.t, st));
        if let Err(e) = res {
            progress.phase_end();
            return Err(GarmentError::Solver {
                phase: "cusick",
                level: 0,
                spacing_mm: opts.spacing_mm,
                t: ls.sim.t,
                message: e.to_string(),
                out: None,
            });
        }
        if ls.sim.t >= r.min_time - 1e-9 && ls.is_static(r) {
            is_static = true;
            break;
        }
    }
    progress.phase_end();
    let state = ls.sim.state();
    let fabric = ls.sim.assembler.fabric.clone();
    let radii = shadow_radii(&state.x, &fabric.segment_ends(), SHADOW_BINS, rd);
    let hanging_min_radius_m = state
        .x
        .iter()
        .filter(|p| p.y < -UNDER_DISC_DEPTH)
        .map(|p| p.x.hypot(p.z))
        .min_by(f64::total_cmp);
    let (a_d, a_s) = (PI * rd * rd, PI * rs * rs);
    let summary = CusickSummary {
        material: opts.material.name().into(),
        spacing_m: s,
        specimen_diameter_m: opts.specimen_diameter,
        disc_diameter_m: opts.disc_diameter,
        bending_length_m: opts.material.bending_length(),
        nodes,
        crossings,
        drape_coefficient: (star_area(&radii) - a_d) / (a_s - a_d),
        folds: count_folds(&radii),
        drop_m: -state.x.iter().map(|p| p.y).fold(f64::INFINITY, f64::min),
        hanging_min_radius_m,
        is_static,
        kinetic_energy_j: ls.kinetic(),
        residual: ls.residual,
        simulated_time_s: ls.sim.t,
        steps: ls.steps,
        newton_iterations: ls.newton,
        cg_iterations: ls.cg,
        rejected: ls.sim.rejection_counts(),
        wall_time_s: start.elapsed().as_secs_f64(),
        shadow_radius_m: radii,
    };
    Ok(Cusick {
        fabric,
        state,
        summary,
        pedestal: pedestal_mesh.as_ref().map(crate::pipeline::to_trimesh),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_disc_casts_its_own_area_and_no_folds() {
        // A polygon of 64 chords of a 0.1 m circle: the shadow is the
        // polygon, area ½ n r² sin(2π/n).
        let n = 64;
        let x: Vec<Vector3<f64>> = (0..n)
            .map(|k| {
                let a = TAU * k as f64 / n as f64;
                Vector3::new(0.1 * a.cos(), 0.0, 0.1 * a.sin())
            })
            .collect();
        let segs: Vec<[usize; 2]> = (0..n).map(|k| [k, (k + 1) % n]).collect();
        let r = shadow_radii(&x, &segs, SHADOW_BINS, 0.0);
        let exact = 0.5 * n as f64 * 0.01 * (TAU / n as f64).sin();
        approx::assert_relative_eq!(star_area(&r), exact, max_relative = 1e-4);
        assert_eq!(count_folds(&r), 0);
    }

    #[test]
    fn the_pedestal_is_a_closed_prism_around_its_circle() {
        let (r, top, depth) = (0.08, -0.002, 0.09);
        let m = pedestal(r, top, depth).unwrap();
        assert_eq!(m.vertex_count(), 2 * PEDESTAL_SIDES + 2);
        assert_eq!(m.triangle_count(), 4 * PEDESTAL_SIDES);
        // Inscribed polygon: area ½ n r² sin(2π/n), volume that times depth.
        let n = PEDESTAL_SIDES as f64;
        let volume = 0.5 * n * r * r * (TAU / n).sin() * depth;
        approx::assert_relative_eq!(m.volume(), volume, max_relative = 1e-9);
        let phi = |x: f64, y: f64, z: f64| m.distance(&Vector3::new(x, y, z)).0;
        // Inside: 1 cm in from the wall, halfway down, φ ≈ -1 cm.
        approx::assert_relative_eq!(
            phi(r - 0.01, top - 0.5 * depth, 0.0),
            -0.01,
            max_relative = 1e-3
        );
        // Every point of the circle is on or outside the wall; 1 cm out is
        // 1 cm away (within the flats' 7 µm), and above the top is outside.
        for k in 0..97 {
            let a = TAU * k as f64 / 97.0;
            let (c, s) = (a.cos(), a.sin());
            assert!(phi(r * c, top - 0.03, r * s) >= -1e-12);
            approx::assert_abs_diff_eq!(
                phi((r + 0.01) * c, top - 0.03, (r + 0.01) * s),
                0.01,
                epsilon = 1e-5
            );
        }
        approx::assert_relative_eq!(phi(0.0, top + 0.004, 0.0), 0.004, max_relative = 1e-9);
        for (r, top, depth) in [(0.0, 0.0, 0.1), (0.1, f64::NAN, 0.1), (0.1, 0.0, -1.0)] {
            let Err(e) = pedestal(r, top, depth) else {
                panic!("pedestal({r}, {top}, {depth}) was accepted")
            };
            assert!(e.to_string().contains("positive radius and depth"), "{e}");
        }
    }

    #[test]
    fn folds_are_counted_once_each() {
        for k in [3usize, 5, 7, 9] {
            let r: Vec<f64> = (0..SHADOW_BINS)
                .map(|i| {
                    let a = TAU * i as f64 / SHADOW_BINS as f64;
                    // Ripples of a tenth of the fold amplitude are no folds.
                    0.12 + 0.02 * (k as f64 * a).cos() + 0.002 * (40.0 * a).sin()
                })
                .collect();
            assert_eq!(count_folds(&r), k);
        }
    }
}
