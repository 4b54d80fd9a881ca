//! The triangle-mesh drape models: the woven garment's nodes as the
//! vertices of a triangle mesh, sewn and draped on the same body, with the
//! same seams, summary and outputs as the yarn model.
//! - `sbd` ([`crate::DrapeModel::Sbd`]): strain-based dynamics and LOD
//!   bending springs (`weft_shell`), its own position-based loop;
//! - `shell` ([`crate::DrapeModel::Shell`]): implicit StVK membranes with
//!   strain-rate damping and discrete-shell hinges
//!   ([`weft_shell::implicit`]) in the yarn model's own pipeline and solver
//!   (`implicit_fabric`, on [`shell_material`]): its sewing, attachments, phases, levels and
//!   checkpoints.
//!
//! Each panel is triangulated on its own, in its flat 2D frame (the
//! garment's `local` coordinates, which are also the triangles' rest
//! shape): a Delaunay triangulation of its nodes (crossings and the yarn
//! ends on its outline) keeping the triangles whose edges are all at most
//! [`MAX_EDGE_SPACINGS`] times the panel's spacing (no triangle the convex
//! hull adds across a concave part of the outline), whose area is at least
//! [`MIN_AREA_RATIO`] times their longest edge squared (no slivers), and
//! whose centroid lies inside the panel's outline (none across a dart,
//! which sewing would collapse). A node left in no triangle gets the
//! shortest-edged well-shaped one inside the outline that holds it
//! ([`garment_mesh`]), and nodes the triangulation merged are tied to a
//! neighbour ([`stray_ties`]).

use crate::error::GarmentError;
use crate::options::DrapeOptions;
use crate::progress::{Phase, Progress};
use crate::sewing::{route_attachments, sewing_routes};
use nalgebra::Vector3;
use spade::{DelaunayTriangulation, HasPosition, Point2, Triangulation};
use weft_core::Fabric;
use weft_core::preset::{BETA_BENDING_SHEAR, BETA_STRETCH};
use weft_pattern::geometry::Outline;
use weft_pattern::{Garment, Pattern};
use weft_shell::implicit::{MembraneDamping, ShellMaterial, shell_fabric};
use weft_shell::{ClothMesh, Sbd, SbdOptions, SeamTie};
use weft_solver::collide::Collider;
use weft_solver::{StepStats, Tie};

/// Longest triangle edge kept, in spacings of its panel (a grid cell's
/// diagonal is √2 ≈ 1.41).
pub const MAX_EDGE_SPACINGS: f64 = 1.6;

/// Smallest triangle area kept, over its longest edge squared (a grid
/// cell's half has 0.25): slivers along the outline have tiny rest areas,
/// so huge `F = P Q⁻¹` for small motions, and blow the projection up.
pub const MIN_AREA_RATIO: f64 = 0.05;

/// Flattening tolerance of the panel outlines (m) for the inside test.
pub const OUTLINE_TOLERANCE: f64 = 1e-4;

/// A node of a panel for the triangulation.
struct Node {
    p: Point2<f64>,
    id: u32,
}

impl HasPosition for Node {
    type Scalar = f64;
    fn position(&self) -> Point2<f64> {
        self.p
    }
}

/// The triangle mesh of a garment woven from `pattern`: one vertex per
/// fabric node (same indices; rest shape = the node's 2D panel
/// coordinates turned by the panel's grain, so warp and weft run along the
/// rest frame's axes; positions = the placed garment's), triangles per panel
/// (module docs). A node the
/// filters leave in no triangle gets the shortest-edged well-shaped
/// Delaunay triangle inside the outline that holds it, so no node is left
/// to fall freely (two nodes at the same 2D point can still be).
///
/// # Errors
/// [`GarmentError::Shell`] naming the panel when its nodes cannot be
/// triangulated or a triangle is degenerate.
pub fn garment_mesh(pattern: &Pattern, garment: &Garment) -> Result<ClothMesh, GarmentError> {
    use geo::Contains;
    let fabric = &garment.fabric;
    let mut triangles = Vec::new();
    for (k, panel) in garment.panels.iter().enumerate() {
        let outline = Outline::new(&pattern.panels[k], OUTLINE_TOLERANCE).polygon();
        let range = panel.first_node..panel.first_node + panel.nodes;
        let nodes: Vec<Node> = range
            .clone()
            .map(|i| Node {
                p: Point2::new(garment.local[i][0], garment.local[i][1]),
                id: i as u32,
            })
            .collect();
        let dt = DelaunayTriangulation::<Node>::bulk_load(nodes).map_err(|e| {
            GarmentError::Shell(format!(
                "panel '{}': cannot triangulate its nodes: {e}",
                panel.name
            ))
        })?;
        let limit = MAX_EDGE_SPACINGS * panel.spacing[0].max(panel.spacing[1]);
        let rest = |i: u32| garment.local[i as usize];
        let first = triangles.len();
        // Dropped faces that could still cover a node: (longest edge, ids).
        let mut spare: Vec<(f64, [u32; 3])> = Vec::new();
        for face in dt.inner_faces() {
            let ids = face.vertices().map(|v| v.data().id);
            let p = ids.map(rest);
            let edge = |a: [f64; 2], b: [f64; 2]| (a[0] - b[0]).hypot(a[1] - b[1]);
            let longest = edge(p[0], p[1]).max(edge(p[1], p[2])).max(edge(p[2], p[0]));
            let area = 0.5
                * ((p[1][0] - p[0][0]) * (p[2][1] - p[0][1])
                    - (p[2][0] - p[0][0]) * (p[1][1] - p[0][1]))
                    .abs();
            let centre = geo::Point::new(
                (p[0][0] + p[1][0] + p[2][0]) / 3.0,
                (p[0][1] + p[1][1] + p[2][1]) / 3.0,
            );
            let well_shaped = area >= MIN_AREA_RATIO * longest * longest;
            if longest <= limit && well_shaped && outline.contains(&centre) {
                triangles.push(ids);
            } else if well_shaped && outline.contains(&centre) {
                spare.push((longest, ids));
            }
        }
        // A node no kept triangle holds would fall freely: give it the
        // shortest-edged spare triangle it is in.
        let mut covered = vec![false; panel.nodes];
        for t in &triangles[first..] {
            for &v in t {
                covered[v as usize - panel.first_node] = true;
            }
        }
        spare.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (_, ids) in spare {
            if ids.iter().any(|&v| !covered[v as usize - panel.first_node]) {
                for &v in &ids {
                    covered[v as usize - panel.first_node] = true;
                }
                triangles.push(ids);
            }
        }
    }
    // The rest frame of each panel turned so its weft runs along the rest
    // frame's first axis and its warp along the second (the weave's grain
    // coordinates `(a, b)`, `weft_pattern::weave`): the orthotropic
    // membrane's axes.
    let mut rest = garment.local.clone();
    for panel in &garment.panels {
        let (sn, cs) = panel.grain_deg.to_radians().sin_cos();
        for p in &mut rest[panel.first_node..panel.first_node + panel.nodes] {
            *p = [p[0] * cs + p[1] * sn, -p[0] * sn + p[1] * cs];
        }
    }
    ClothMesh::new(rest, fabric.initial.x.clone(), triangles)
        .map_err(|e| GarmentError::Shell(format!("the garment's triangle mesh: {e}")))
}

/// The garment's seam ties as strain-based-dynamics ties.
pub fn garment_ties(garment: &Garment) -> Vec<SeamTie> {
    garment
        .seams
        .iter()
        .map(|t| SeamTie {
            node: t.node as u32,
            other: t.other.map(|o| o as u32),
            t: t.t,
        })
        .collect()
}

/// Ties holding the nodes no triangle holds (a node at the same 2D point
/// as another, which the triangulation merges) to the nearest node of
/// their panel that a triangle holds, in the rest frame: without them they
/// would fall freely.
pub fn stray_ties(garment: &Garment, mesh: &ClothMesh) -> Vec<SeamTie> {
    let mut held = vec![false; mesh.vertex_count()];
    for t in mesh.triangles() {
        for &v in t {
            held[v as usize] = true;
        }
    }
    let mut ties = Vec::new();
    for panel in &garment.panels {
        let range = panel.first_node..panel.first_node + panel.nodes;
        for i in range.clone().filter(|&i| !held[i]) {
            let nearest = range.clone().filter(|&j| held[j]).min_by(|&a, &b| {
                mesh.rest_distance(i, a)
                    .total_cmp(&mesh.rest_distance(i, b))
            });
            if let Some(j) = nearest {
                ties.push(SeamTie {
                    node: i as u32,
                    other: [j as u32, j as u32],
                    t: 0.0,
                });
            }
        }
    }
    ties
}

/// The `shell` model's stiffness of the labelled edges' attachments while
/// sewing, over the yarn model's (the seam tie stiffness). Seams routed
/// over the body ([`crate::sewing::seam_routes`]) are pulled to their
/// meeting points at the full tie stiffness in both models: at a
/// hundredth the pencil dress's straps were dragged off the shoulders
/// (its bodice slid 228 mm). Labelled edges are held at the
/// nearest body point, which for the A-line skirt's waist is 0.1 m inward
/// and 37 % narrower than the placed panel (0.40 to 0.25 m). The yarn
/// model takes that in its unconnected yarn ends; the membrane joins them,
/// so at full stiffness the waist is yanked in within 2 ms (about 50 m/s)
/// and its momentum rolls each panel up over the waist (hem at 0.93 m
/// instead of 0.6 m, 32-76 segments through the fabric). At a hundredth
/// the waist comes in over about 0.1 s and the skirt sews and drapes:
/// seams 3.1 mm, hem 0.62 m, no layer crossing (40 mm, 2026-11-27).
pub const SHELL_ATTACHMENT_FRACTION: f64 = 0.01;

/// Hinge energy over the continuum plate's for cylindrical bending along
/// the yarns of the woven grid's triangulation: three (`weft_potentials::
/// hinge`, measured in its tests), so the `shell` model's hinges get the
/// preset's bending rigidity over this. Not a calibration of every fold:
/// curvature across the cells' diagonals costs otherwise (a cantilever
/// strip of the square grid sags as a beam of 2.3 plate rigidities,
/// weft-shell's tests/implicit.rs).
pub const HINGE_PLATE_RATIO: f64 = 3.0;

/// The `shell` model's material ([`crate::DrapeModel::Shell`]): the
/// fabric preset as a woven, orthotropic membrane
/// ([`ShellMaterial::from_properties`]: measured areal density, tensile
/// stiffness per width `E t` along warp and weft, shear rigidity `G`,
/// `ν = 0`; the mesh's rest frame is the weave's, [`garment_mesh`]), the
/// bending rigidity over [`HINGE_PLATE_RATIO`], and the preset's
/// strain-rate damping times [`DrapeOptions::damping_scale`], per mode as
/// in the yarn model [SBO18 eq. 12] (`weft_core::preset`): the membrane's
/// tensile moduli times `BETA_STRETCH`, its shear modulus and the hinges
/// times `BETA_BENDING_SHEAR` ([`MembraneDamping::StrainRateModes`]).
pub fn shell_material(opts: &DrapeOptions) -> ShellMaterial {
    let mut m = ShellMaterial::from_properties(&opts.material.properties());
    m.bending_rigidity /= HINGE_PLATE_RATIO;
    m.membrane_damping = MembraneDamping::StrainRateModes {
        stretch: BETA_STRETCH * opts.damping_scale,
        shear: BETA_BENDING_SHEAR * opts.damping_scale,
    };
    m.bending_damping = BETA_BENDING_SHEAR * opts.damping_scale;
    m
}

/// The `shell` model's fabric of a woven garment: StVK membrane triangles
/// and discrete-shell hinges ([`weft_shell::implicit::shell_fabric`] in
/// [`shell_material`]) on the triangle mesh of [`garment_mesh`] (the
/// woven nodes, same indices, placed positions), and the solver ties that
/// hold the nodes no triangle holds ([`stray_ties`]; such a node has no
/// mass of its own).
///
/// # Errors
/// [`GarmentError::Shell`] when a panel cannot be triangulated or the
/// material is out of range.
pub(crate) fn implicit_fabric(
    pattern: &Pattern,
    garment: &Garment,
    opts: &DrapeOptions,
) -> Result<(Fabric, Vec<Tie>), GarmentError> {
    let mesh = garment_mesh(pattern, garment)?;
    let fabric = shell_fabric(&mesh, &shell_material(opts), &[])
        .map_err(|e| GarmentError::Shell(e.to_string()))?;
    let ties = stray_ties(garment, &mesh)
        .into_iter()
        .map(|t| Tie {
            node: t.node as usize,
            other: t.other.map(|o| o as usize),
            t: t.t,
        })
        .collect();
    Ok((fabric, ties))
}

/// What the sewing and draping of an `sbd` drape measured.
pub(crate) struct SbdOutcome {
    pub sim: Sbd,
    pub steps: usize,
    pub sewing_time: f64,
    pub draping_time: f64,
    pub gap_sewn: f64,
    pub sewn_top: f64,
    pub sewn_centroid: f64,
    pub rms_speed: f64,
    pub is_static: bool,
    /// Seam ties sewn over the body through meeting points.
    pub routed_ties: usize,
}

/// A vertex this far from the origin (m) or faster than
/// [`DIVERGED_SPEED`] means the cloth diverged.
pub const DIVERGED_DISTANCE: f64 = 100.0;

/// See [`DIVERGED_DISTANCE`] (m/s).
pub const DIVERGED_SPEED: f64 = 100.0;

/// An error naming the phase, the time and the panel when a vertex is
/// non-finite, beyond [`DIVERGED_DISTANCE`] or faster than
/// [`DIVERGED_SPEED`].
fn check_diverged(garment: &Garment, sim: &Sbd, phase: Phase, t: f64) -> Result<(), GarmentError> {
    let bad = sim
        .positions()
        .iter()
        .zip(sim.velocities())
        .position(|(x, v)| !(x.norm() <= DIVERGED_DISTANCE && v.norm() <= DIVERGED_SPEED));
    let Some(i) = bad else {
        return Ok(());
    };
    let panel = garment
        .panel_of(i)
        .map_or("?", |k| garment.panels[k].name.as_str());
    Err(GarmentError::Shell(format!(
        "the cloth diverged while {} at {t:.3} s: vertex {i} of panel '{panel}' is at {:.3e} m moving {:.3e} m/s (limits {DIVERGED_DISTANCE} m, {DIVERGED_SPEED} m/s); the yarn model (--model yarn) may drape it",
        phase.name(),
        sim.positions()[i].norm(),
        sim.velocities()[i].norm()
    )))
}

/// Iterations per substep while sewing.
pub const SEWING_ITERATIONS: usize = 10;

/// Substeps per step while sewing (draping takes `opts.sbd.substeps`).
/// Sewing is quasi-static and gravity-free, so its substeps set only how
/// fast the ties close ([`SEWING_TIE_STEP_SPACINGS`] per projection), not
/// how stiff the cloth is under load.
pub const SEWING_SUBSTEPS: usize = 5;

/// Largest gap a seam tie closes per projection while sewing, in
/// spacings.
pub const SEWING_TIE_STEP_SPACINGS: f64 = 0.1;

/// The `sbd` model's self-collision thickness in spacings of the level:
/// every vertex is kept at least this far on its side of every triangle
/// of another layer ([`weft_shell::Sbd::with_self_collision`]). The pairs
/// are searched at each substep's start within this plus the most a tie
/// moves a vertex in a sewing substep ([`SEWING_ITERATIONS`] times
/// [`SEWING_TIE_STEP_SPACINGS`] spacings) while sewing, and within twice
/// the thickness while draping. At 20 mm on `mean_all.obj`
/// (2026-11-28) the GarmentCode shirt has 11 mesh edges through its mesh
/// without self-collision and none with it at 0.05, 0.1, 0.2 or 0.3
/// spacings; the graded GPG tee none except 4 at 0.1; the other shared
/// patterns none at 0.2 and 0.3, the hoody's deepest segment 0.26 mm
/// inside the body at 0.3 and 1.83 mm at 0.2 (BENCHMARKS.md).
pub const SBD_LAYER_THICKNESS: f64 = 0.3;

/// Sews and drapes the garment on `body` in steps of `opts.dt_max`:
///
/// - sewing, `opts.sew_duration` without gravity, quasi-static (velocities
///   reset after every substep), [`SEWING_SUBSTEPS`] substeps of
///   [`SEWING_ITERATIONS`] iterations, and the
///   ties at stiffness 1 closing at most [`SEWING_TIE_STEP_SPACINGS`]
///   spacings per projection: panels placed decimetres apart would
///   otherwise be yanked together in one projection, which one sweep of
///   the triangle constraints cannot follow (the cloth blows up);
///   sewing is frictionless on the body (as the yarn model's), and a seam
///   whose straight path crosses the body (a dress's shoulder seam) has
///   both sides also pulled to its meeting point over the body
///   ([`crate::sewing::seam_routes`], attachments at stiffness 1 without
///   the step limit), and so is a sleeve's seam that passes over the arm
///   ([`crate::sewing::tube_routes`]), as in the yarn model's pipeline;
/// - with `opts.shell_self_collision`, through both phases, every vertex
///   kept [`SBD_LAYER_THICKNESS`] spacings on its side of the triangles
///   of other layers (neighbours along the sewn mesh at rest within
///   [`SHELL_EXCLUSION_SPACINGS`] excluded, as in the `shell` model);
/// - draping, with `opts.sbd` as given and gravity, until the RMS vertex
///   speed over a step ([`Sbd::step_velocities`]: the last substep's
///   speeds count the chatter of a vertex pressed between a layer and
///   the body) is below `opts.relax.speed_tolerance` after
///   `relax.min_time`, or `relax.max_time`.
pub(crate) fn sew_and_drape(
    pattern: &Pattern,
    garment: &Garment,
    body: Collider,
    opts: &DrapeOptions,
    progress: &mut dyn Progress,
) -> Result<SbdOutcome, GarmentError> {
    let mesh = garment_mesh(pattern, garment)?;
    let mut options = opts.sbd.clone();
    options.areal_density = opts.material.properties().areal_density;
    options.edge_collisions = opts.segment_contact;
    // Draping releases the routes' attachments. Its vertices travel far
    // less per substep than sewing's: self-collision pairs are searched
    // within twice the thickness.
    let spacing = garment
        .panels
        .iter()
        .map(|p| p.spacing[0].max(p.spacing[1]))
        .fold(f64::INFINITY, f64::min);
    let thickness = SBD_LAYER_THICKNESS * spacing;
    let drape_options = SbdOptions {
        attachment_stiffness: 0.0,
        self_collision_search: options.self_collision_search.or(Some(2.0 * thickness)),
        ..options.clone()
    };
    // Seams whose straight path crosses the body are sewn over it, and a
    // sleeve's seams against the arm, as in the yarn model's pipeline.
    let routes = sewing_routes(
        garment,
        mesh.positions(),
        &body,
        options.collision_thickness,
    );
    // A yarn end with two routed ties (a corner on two seams) is pulled
    // to the first one's meeting point.
    let mut attached = std::collections::HashSet::new();
    let attachments = route_attachments(garment, &routes)
        .into_iter()
        .filter(|(v, _)| attached.insert(*v))
        .map(|(v, p)| (v as u32, p))
        .collect();
    let shell = |e: weft_shell::ShellError| GarmentError::Shell(e.to_string());
    let mut sim = Sbd::new(&mesh, &[], options)
        .map_err(shell)?
        .with_attachments(attachments)
        .map_err(shell)?
        .with_colliders(vec![body])
        .with_ties(
            garment_ties(garment)
                .into_iter()
                .chain(stray_ties(garment, &mesh))
                .collect(),
        )
        .map_err(shell)?;
    if opts.shell_self_collision {
        let triangles: Vec<[usize; 3]> = mesh
            .triangles()
            .iter()
            .map(|t| t.map(|v| v as usize))
            .collect();
        let reach = thickness + SEWING_ITERATIONS as f64 * SEWING_TIE_STEP_SPACINGS * spacing;
        let option_error = |e: &dyn std::fmt::Display| GarmentError::Option {
            option: "shell_self_collision".into(),
            expected: "a self-collision the sbd mesh can be given".into(),
            found: e.to_string(),
        };
        let ties = crate::pipeline::seam_ties(garment);
        let (edges, exclusion) = mesh_rest_exclusion(
            garment,
            &triangles,
            &ties,
            SHELL_EXCLUSION_SPACINGS * spacing,
        )
        .map_err(|e| option_error(&e))?;
        let detector = weft_solver::collide::SelfCollision::new(edges, exclusion, reach)
            .and_then(|d| d.with_faces(triangles))
            .map_err(|e| option_error(&e))?;
        sim = sim
            .with_self_collision(detector, thickness)
            .map_err(|e| option_error(&e))?;
    }
    let dt = opts.dt_max;
    let mut steps = 0;
    let mut run = |sim: &mut Sbd,
                   phase: Phase,
                   max_time: f64,
                   min_time: f64,
                   progress: &mut dyn Progress|
     -> Result<(f64, f64), GarmentError> {
        progress.phase_start(phase, max_time);
        let start = sim.time();
        let mut rms = f64::INFINITY;
        let mut since_check = 0.0;
        while sim.time() - start < max_time - 1e-12 {
            let h = dt.min(max_time - (sim.time() - start));
            sim.step(h);
            steps += 1;
            since_check += h;
            progress.step(
                sim.time() - start,
                &StepStats {
                    h,
                    ..Default::default()
                },
            );
            check_diverged(garment, sim, phase, sim.time() - start)?;
            if phase == Phase::Draping && since_check >= opts.relax.check_interval - 1e-12 {
                since_check = 0.0;
                let v = sim.step_velocities();
                rms = (v.iter().map(|v| v.norm_squared()).sum::<f64>() / v.len() as f64).sqrt();
                if sim.time() - start >= min_time && rms < opts.relax.speed_tolerance {
                    break;
                }
            }
        }
        progress.phase_end();
        Ok((sim.time() - start, rms))
    };
    sim.reconfigure(|o| {
        o.gravity = [0.0; 3];
        o.velocity_damping = 1e12;
        o.iterations = o.iterations.max(SEWING_ITERATIONS);
        o.substeps = SEWING_SUBSTEPS;
        o.tie_stiffness = 1.0;
        o.attachment_stiffness = 1.0;
        o.friction = false;
        o.tie_max_step = Some(SEWING_TIE_STEP_SPACINGS * spacing);
    })
    .map_err(shell)?;
    let (sewing_time, _) = run(&mut sim, Phase::Sewing, opts.sew_duration, 0.0, progress)?;
    let gap_sewn = sim.max_tie_gap();
    let ys = sim.positions().iter().map(|x| x.y);
    let sewn_top = ys.clone().fold(f64::NEG_INFINITY, f64::max);
    let sewn_centroid = ys.sum::<f64>() / sim.positions().len().max(1) as f64;
    sim.reconfigure(|o| *o = drape_options).map_err(shell)?;
    let (draping_time, rms_speed) = run(
        &mut sim,
        Phase::Draping,
        opts.relax.max_time,
        opts.relax.min_time,
        progress,
    )?;
    Ok(SbdOutcome {
        sim,
        steps,
        sewing_time,
        draping_time,
        gap_sewn,
        sewn_top,
        sewn_centroid,
        rms_speed,
        is_static: rms_speed < opts.relax.speed_tolerance,
        routed_ties: routes.len(),
    })
}

/// The flat state vectors `(q, v)` (5 per node: x, y, z, u, v) of the
/// garment's fabric with the mesh's positions and step-averaged velocities
/// ([`Sbd::step_velocities`]) and the fabric's initial arc-length
/// coordinates (at rest).
pub(crate) fn fabric_state(garment: &Garment, sim: &Sbd) -> (Vec<f64>, Vec<f64>) {
    let init = &garment.fabric.initial;
    let n = garment.fabric.node_count();
    let (mut q, mut v) = (vec![0.0; 5 * n], vec![0.0; 5 * n]);
    let velocities = sim.step_velocities();
    for i in 0..n {
        let (x, xd): (Vector3<f64>, Vector3<f64>) = (sim.positions()[i], velocities[i]);
        q[5 * i..5 * i + 3].copy_from_slice(x.as_slice());
        q[5 * i + 3] = init.u[i];
        q[5 * i + 4] = init.v[i];
        v[5 * i..5 * i + 3].copy_from_slice(xd.as_slice());
    }
    (q, v)
}

/// The `shell` model's self-collision distance in spacings of the level
/// (or the yarns' `2R + margin` where that is larger): triangles leave no
/// cells between yarns for a layer to thread (the yarn model needs
/// [`crate::pipeline::LAYER_THICKNESS`]` = 0.6`), but the pairs are found
/// once per step, within twice this, so a node that travels further in a
/// step while sewing is not seen. The GarmentCode hoody at 40 mm
/// (2026-11-28): at 0.1 spacing (4 mm) it collapsed (seams 139 mm, 193
/// segments through, 7,228 steps); at 0.3 it drapes (seams 12.5 mm,
/// nothing through, 687 steps).
pub const SHELL_LAYER_THICKNESS: f64 = 0.3;

/// Exclusion radius of the `shell` model's self-collision, in spacings:
/// node pairs nearer than this along the sewn mesh at rest (its triangle
/// edges at their rest lengths, ties at length 0) are neighbours, not
/// layers. The mesh's longest kept edge ([`MAX_EDGE_SPACINGS`]), so a
/// vertex never repels the triangles of its own one-ring.
pub const SHELL_EXCLUSION_SPACINGS: f64 = MAX_EDGE_SPACINGS;

/// Self-collision of a triangle-mesh fabric (`fabric.elements.triangles`,
/// nodes those of `garment`): vertex–face pairs
/// ([`weft_solver::collide::face_repulsion`]) and edge–edge pairs of its
/// triangle edges ([`weft_solver::collide::repulsion_with`]), interaction
/// distance `d0` (m), candidates searched within `2 d0`. Pairs whose nodes
/// are within `exclusion_radius` (m) of each other along the garment at
/// rest are excluded: through the triangle edges at their rest lengths,
/// the nodes of a panel nearer than the radius in its rest frame (the
/// triangulation drops slivers along the outline, so two nodes 1.6 mm
/// apart at 20 mm can share no edge), and `ties` at length 0.
///
/// # Errors
/// [`weft_solver::collide::CollideError`] from the detector (a tie naming
/// a node the fabric lacks, `d0` not positive).
pub fn mesh_self_collision(
    garment: &Garment,
    fabric: &Fabric,
    ties: &[Tie],
    d0: f64,
    exclusion_radius: f64,
) -> Result<weft_solver::collide::SelfCollision, weft_solver::collide::CollideError> {
    let triangles = mesh_triangles(fabric);
    let (edges, exclusion) = mesh_rest_exclusion(garment, &triangles, ties, exclusion_radius)?;
    weft_solver::collide::SelfCollision::new(edges, exclusion, 2.0 * d0)?.with_faces(triangles)
}

/// The node triples of the triangles of a triangle-mesh fabric
/// (`fabric.elements.triangles`), in element order.
pub fn mesh_triangles(fabric: &Fabric) -> Vec<[usize; 3]> {
    fabric.elements.triangles.iter().map(|t| t.nodes).collect()
}

/// The unique edges `[a, b]` of `triangles` (node triples of `garment`'s
/// nodes), in order of first appearance, and the node pairs within
/// `radius` (m) of each other along the garment at rest: through those
/// edges at their rest lengths (in the panels' frames, `garment.local`),
/// the nodes of a panel nearer than `radius` in its rest frame
/// ([`rest_neighbours`]: the triangulation drops slivers along the outline)
/// and `ties` at length 0. The exclusion of [`mesh_self_collision`] and
/// [`mesh_layer_crossings`].
///
/// # Errors
/// [`weft_solver::collide::CollideError`] for a tie naming a node the
/// garment lacks, or a negative or non-finite `radius`.
pub fn mesh_rest_exclusion(
    garment: &Garment,
    triangles: &[[usize; 3]],
    ties: &[Tie],
    radius: f64,
) -> Result<(Vec<[usize; 2]>, weft_solver::collide::Exclusion), weft_solver::collide::CollideError>
{
    let key = |a: usize, b: usize| (a.min(b), a.max(b));
    let mut seen = std::collections::HashSet::new();
    let mut lengths: Vec<([usize; 2], f64)> = Vec::new();
    for t in triangles {
        for (i, j) in [(0, 1), (1, 2), (2, 0)] {
            let (a, b) = (t[i], t[j]);
            if seen.insert(key(a, b)) {
                let (p, q) = (garment.local[a], garment.local[b]);
                lengths.push(([a, b], (p[0] - q[0]).hypot(p[1] - q[1])));
            }
        }
    }
    let edges: Vec<[usize; 2]> = lengths.iter().map(|e| e.0).collect();
    lengths.extend(rest_neighbours(garment, radius));
    for t in ties {
        lengths.push(([t.node, t.other[0]], 0.0));
        lengths.push(([t.node, t.other[1]], 0.0));
    }
    let exclusion = weft_solver::collide::Exclusion::within_distance(
        garment.fabric.node_count(),
        &lengths,
        radius,
    )?;
    Ok((edges, exclusion))
}

/// The layer pass-through of a triangle-mesh drape: the mesh edges that
/// cut one of its `triangles` (node triples of `garment`'s nodes) away from
/// their neighbourhood, [`crate::layers::surface_crossings`] with the
/// exclusion of [`mesh_rest_exclusion`] at `radius` (m; the pipeline uses
/// [`crate::LAYER_EXCLUSION_SPACINGS`] spacings). The yarn model's measure
/// ([`crate::layer_crossings`]) tests the weave's shear stencils, which
/// overlap and bulge off a folded mesh, so it reports crossings where the
/// mesh's own triangles have none. `x` holds one position per node (m).
///
/// # Errors
/// As [`mesh_rest_exclusion`].
pub fn mesh_layer_crossings(
    garment: &Garment,
    triangles: &[[usize; 3]],
    ties: &[Tie],
    x: &[Vector3<f64>],
    radius: f64,
) -> Result<Vec<crate::LayerCrossing>, weft_solver::collide::CollideError> {
    let (edges, exclusion) = mesh_rest_exclusion(garment, triangles, ties, radius)?;
    Ok(crate::layers::surface_crossings(
        &edges, triangles, &exclusion, x,
    ))
}

/// The node pairs of each panel of `garment` nearer than `radius` (m) in
/// the panel's rest frame (`garment.local`), with that distance: a grid of
/// cell edge `radius` per panel, each node against the nodes of its own and
/// the 8 surrounding cells.
pub fn rest_neighbours(garment: &Garment, radius: f64) -> Vec<([usize; 2], f64)> {
    use std::collections::HashMap;
    let mut out = Vec::new();
    if !(radius > 0.0 && radius.is_finite()) {
        return out;
    }
    for panel in &garment.panels {
        let range = panel.first_node..panel.first_node + panel.nodes;
        let cell = |i: usize| {
            let p = garment.local[i];
            (
                (p[0] / radius).floor() as i64,
                (p[1] / radius).floor() as i64,
            )
        };
        let mut grid: HashMap<(i64, i64), Vec<usize>> = HashMap::new();
        for i in range.clone() {
            grid.entry(cell(i)).or_default().push(i);
        }
        for i in range {
            let (cx, cy) = cell(i);
            let p = garment.local[i];
            for dx in -1..=1 {
                for dy in -1..=1 {
                    for &j in grid.get(&(cx + dx, cy + dy)).into_iter().flatten() {
                        let q = garment.local[j];
                        let d = (p[0] - q[0]).hypot(p[1] - q[1]);
                        if j > i && d <= radius {
                            out.push(([i, j], d));
                        }
                    }
                }
            }
        }
    }
    out
}
