//! Strain-based dynamics \[SBD14\], with the notation of [Kim23 §III.1-2]:
//! a position-based integrator whose constraints are the entries of each
//! triangle's Green-St Venant strain tensor instead of edge lengths.
//!
//! For a triangle with rest shape `Q` (2x2, from texture coordinates) and
//! world edge matrix `P` (3x2), `F = P Q⁻¹ = Σₖ xₖ bₖᵀ`
//! ([`weft_potentials::stvk::TriangleRest`]) and `S = FᵀF` [Kim23 eq. 1].
//! With `f₀, f₁` the columns of `F`, the constraints are
//!
//! - stretch along the two rest axes: `C_a = √S_aa - 1 = |f_a| - 1`,
//!   `∇ₖC_a = bₖ[a] f̂_a`;
//! - shear: `C₀₁ = S₀₁ / √(S₀₀ S₁₁) = f̂₀·f̂₁`,
//!   `∇ₖC₀₁ = bₖ[0] (f̂₁ - C₀₁ f̂₀)/|f₀| + bₖ[1] (f̂₀ - C₀₁ f̂₁)/|f₁|`;
//!
//! and the bending springs ([`crate::springs`]) are distance constraints.
//! Each constraint moves its vertices by the projection of [Kim23 eq. 3-5],
//! `Δxᵢ = -s k wᵢ ∇ᵢC`, `s = C / Σⱼ wⱼ |∇ⱼC|²`, with the stiffness
//! `k ∈ [0, 1]` and the inverse masses `wᵢ = 1/mᵢ` (0 for pinned vertices).
//!
//! A step of length `Δt` runs `substeps` substeps of `h = Δt / substeps`
//! [Kim23 §IV]: predict `p = x + h v` (with gravity in `v`), run
//! `iterations` Gauss-Seidel sweeps over the triangles and then the
//! springs, set `v = (p - x) / h`, `x = p`, and scale `v` by
//! `max(0, 1 - c h)` for the velocity damping `c` (1/s). Kim names a
//! damping technique without giving it; this plain velocity damping is
//! ours.
//!
//! **Colliders** ([`Sbd::with_colliders`]) are the solver's
//! ([`weft_solver::collide::Collider`]: planes, spheres, capsules, meshes,
//! moving and animated bodies), queried through their signed distance `φ`
//! and outward normal `n`. At the end of every sweep a vertex with
//! `φ(p) < δ` (the collision thickness) moves out to `φ = δ` along `n`;
//! its displacement in the substep relative to the collider's surface,
//! `Δ = p - x - h v_c`, loses its tangential part up to `μ (δ - φ)`
//! (Coulomb friction as a position limit, with `μ` the collider's
//! friction coefficient): static friction below it, sliding above.
//! With [`SbdOptions::edge_collisions`] (default off) the midpoint
//! `m = (p_a + p_b)/2` of every mesh edge is then kept out as well: the
//! constraint `C = φ(m) - δ ≥ 0`, `∇_a C = ∇_b C = n/2`, projected as the
//! others (`Δp_a = -C w_a n / (2 (w_a + w_b) / 4)`; equal masses move both
//! ends out by `δ - φ`), and the midpoint's displacement relative to the
//! surface loses its tangential part up to `μ (δ - φ)` as a vertex's does,
//! shared by the two ends in proportion to their inverse masses (without
//! it, a cloth held up by its edges has its vertices just off the surface
//! and slides off a sphere frictionless). An edge of length `s` resting on
//! a surface of curvature radius `ρ` otherwise sags `s²/(8ρ)` into it
//! between its vertices.
//!
//! **Self-collision** ([`Sbd::with_self_collision`], vertex–face pairs
//! only): at each substep's start a [`SelfCollision`] detector finds the
//! pairs of a vertex and a triangle of another layer within its distance,
//! each oriented with the vertex on the side of the triangle's right-hand
//! normal. In every sweep, after the ties and attachments and before the
//! colliders, a pair closer than the thickness `δ_s` is projected onto
//! `C = d - δ_s ≥ 0`, `d` the signed distance of
//! [`weft_solver::collide::face_separation`] (signed along the normal
//! where the closest point is the projection onto the face, so a vertex
//! that has passed through is pulled back to its side), with the
//! barycentric weights held fixed. Edge–edge pairs and friction between
//! layers are not modelled; the colliders act last, so the body wins over
//! a layer.

use crate::ShellError;
use crate::mesh::ClothMesh;
use crate::springs::{BendingSprings, LodLevels, Spring};
use nalgebra::Vector3;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use weft_potentials::stvk::TriangleRest;
use weft_solver::collide::{Collider, SelfCollision, face_separation};
use weft_solver::par::{PARALLEL_MIN, Shared, for_each_coloured, greedy_colouring};

/// Options of a strain-based-dynamics cloth (all have documented
/// defaults; unknown keys are errors when read from JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SbdOptions {
    /// Substeps per step (default 5, as in the 40,000-vertex
    /// target).
    pub substeps: usize,
    /// Gauss-Seidel sweeps per substep (default 1).
    pub iterations: usize,
    /// Stiffness `k ∈ [0, 1]` of the two stretch constraints (default 1).
    pub stretch_stiffness: f64,
    /// Stiffness `k ∈ [0, 1]` of the shear constraint (default 1).
    pub shear_stiffness: f64,
    /// The shear constraint: normalised `f̂₀·f̂₁` \[SBD14\] (default
    /// `true`) or `f₀·f₁`. The normalised one's gradient vanishes on a
    /// collapsed triangle, which blows the cloth up where a pin or a seam
    /// tie pulls hard (\[Kim23\] Fig. 1; the sewing of a dress with darts);
    /// the garment drape uses `false`.
    pub normalised_shear: bool,
    /// Bending-spring structure (default: LOD springs, every ring from
    /// `m_l` to `n_l` at fixed vertices).
    pub bending: BendingSprings,
    /// Stiffness `k ∈ [0, 1]` of the bending springs (default 0.5).
    pub bending_stiffness: f64,
    /// Areal density (kg/m²); default the `cotton` preset's 0.15.
    pub areal_density: f64,
    /// Gravitational acceleration (m/s²), default `(0, -9.81, 0)`.
    pub gravity: [f64; 3],
    /// Velocity damping `c` (1/s, default 0): `v ← max(0, 1 - c h) v` after
    /// every substep.
    pub velocity_damping: f64,
    /// Collision thickness `δ` (m, default 1 mm): vertices are kept at
    /// least this far outside every collider.
    pub collision_thickness: f64,
    /// Stiffness `k ∈ [0, 1]` of the seam ties ([`Sbd::with_ties`];
    /// default 0.5).
    pub tie_stiffness: f64,
    /// Largest gap (m) a tie closes in one projection (default `None`: no
    /// limit).
    /// Sewing panels placed far apart needs it: a tie that pulls its
    /// vertex a long way in one projection stretches the triangles around
    /// it beyond what one sweep restores, and the cloth blows up.
    pub tie_max_step: Option<f64>,
    /// Stiffness `k ∈ [0, 1]` of the attachments ([`Sbd::with_attachments`]:
    /// vertices pulled to fixed points); default 0, which releases them (a
    /// drape holds its routed seams while sewing only). Unlike the ties
    /// they are not limited by [`SbdOptions::tie_max_step`]: a limited
    /// pull loses to the triangles of the panel behind the vertex (the
    /// GarmentCode pencil dress's straps, pulled 2 mm per projection to
    /// their meeting points over the shoulders, were dragged 6 cm down
    /// the chest instead).
    pub attachment_stiffness: f64,
    /// Coulomb friction against the colliders (default true; each
    /// collider's own `μ`). A drape's sewing turns it off, as the yarn
    /// model's does: pieces pulled over the body must slide on it.
    pub friction: bool,
    /// Keep every edge's midpoint out of the colliders too (module docs).
    /// Default false. In the garment drapes at 20 mm (BENCHMARKS.md) it
    /// takes the deepest edge point from up to 4.8 mm inside the body to
    /// at most 0.3 mm. On a sharp ridge (the trapezius at the neck) the
    /// two edges that meet at a seam are pushed out along different
    /// normals, which parts the seam's two sides: with ties at stiffness
    /// 0.5, which leave half a gap after each projection, the graded GPG
    /// tee's shoulder seams opened to 23 mm (12 mm without edges); at
    /// stiffness 1 they stay at 13 mm.
    pub edge_collisions: bool,
    /// Distance (m) within which the self-collision pairs
    /// ([`Sbd::with_self_collision`]) are searched at each substep's start,
    /// kept between the thickness and the detector's own distance; default
    /// `None`: the detector's. The search costs more the further it
    /// reaches, and the reach needed is the thickness plus what a vertex
    /// travels in a substep: a drape searches a spacing further while
    /// sewing, when ties move vertices that far in a substep, than while
    /// draping.
    pub self_collision_search: Option<f64>,
}

impl Default for SbdOptions {
    fn default() -> Self {
        SbdOptions {
            substeps: 5,
            iterations: 1,
            stretch_stiffness: 1.0,
            shear_stiffness: 1.0,
            normalised_shear: true,
            bending: BendingSprings::default(),
            bending_stiffness: 0.5,
            areal_density: weft_core::FabricPreset::Cotton.properties().areal_density,
            gravity: [0.0, -9.81, 0.0],
            velocity_damping: 0.0,
            collision_thickness: 1e-3,
            tie_stiffness: 0.5,
            tie_max_step: None,
            attachment_stiffness: 0.0,
            friction: true,
            edge_collisions: false,
            self_collision_search: None,
        }
    }
}

impl SbdOptions {
    /// Checks every option against its documented range.
    ///
    /// # Errors
    /// [`ShellError::InvalidOption`] naming the first bad field.
    pub fn validate(&self) -> Result<(), ShellError> {
        let bad = |name: &'static str, message: &str| {
            Err(ShellError::InvalidOption {
                name,
                message: message.to_string(),
            })
        };
        if self.substeps == 0 {
            return bad("substeps", "expected at least 1");
        }
        if self.iterations == 0 {
            return bad("iterations", "expected at least 1");
        }
        for (name, k) in [
            ("stretch_stiffness", self.stretch_stiffness),
            ("shear_stiffness", self.shear_stiffness),
            ("bending_stiffness", self.bending_stiffness),
            ("tie_stiffness", self.tie_stiffness),
            ("attachment_stiffness", self.attachment_stiffness),
        ] {
            if !(0.0..=1.0).contains(&k) {
                return bad(name, &format!("expected a stiffness in [0, 1], got {k}"));
            }
        }
        if !self.gravity.iter().all(|g| g.is_finite()) {
            return bad("gravity", "expected finite components (m/s²)");
        }
        let positive = [
            ("areal_density", Some(self.areal_density), "kg/m²"),
            ("tie_max_step", self.tie_max_step, "m"),
            ("self_collision_search", self.self_collision_search, "m"),
        ];
        for (name, value, unit) in positive {
            if let Some(v) = value
                && !(v > 0.0 && v.is_finite())
            {
                return bad(
                    name,
                    &format!("expected a finite value > 0 ({unit}), got {v}"),
                );
            }
        }
        for (name, v, unit) in [
            ("velocity_damping", self.velocity_damping, "1/s"),
            ("collision_thickness", self.collision_thickness, "m"),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                return bad(
                    name,
                    &format!("expected a finite value >= 0 ({unit}), got {v}"),
                );
            }
        }
        Ok(())
    }
}

/// The strain of one triangle (dimensionless).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriangleStrain {
    /// `|f₀| - 1`, stretch along the rest frame's first axis.
    pub stretch_u: f64,
    /// `|f₁| - 1`, along the second axis.
    pub stretch_v: f64,
    /// Shear angle `asin(f̂₀·f̂₁)` (rad).
    pub shear: f64,
    /// Largest principal stretch minus one, `√λ_max(FᵀF) - 1`.
    pub principal: f64,
}

/// A strain-based-dynamics cloth: mesh, constraints and state.
pub struct Sbd {
    options: SbdOptions,
    triangles: Vec<[u32; 3]>,
    rest: Vec<TriangleRest>,
    springs: Vec<Spring>,
    triangle_colours: Vec<Vec<u32>>,
    /// The mesh's edges and their colouring (no two of a colour share a
    /// vertex), for the edge collisions.
    edges: Vec<[u32; 2]>,
    edge_colours: Vec<Vec<u32>>,
    spring_colours: Vec<Vec<u32>>,
    levels: Option<LodLevels>,
    inverse_mass: Vec<f64>,
    mass: Vec<f64>,
    x: Vec<Vector3<f64>>,
    v: Vec<Vector3<f64>>,
    p: Vec<Vector3<f64>>,
    time: f64,
    colliders: Vec<Collider>,
    /// Per vertex and collider, the last signed distance queried.
    clearance: Vec<Clearance>,
    /// Per edge and collider, the last signed distance queried at its
    /// midpoint.
    edge_clearance: Vec<Clearance>,
    ties: Vec<SeamTie>,
    tie_colours: Vec<Vec<u32>>,
    /// `(vertex, fixed point)` pairs ([`Sbd::with_attachments`]).
    attachments: Vec<(u32, Vector3<f64>)>,
    /// Vertex–face self-collision ([`Sbd::with_self_collision`]): the
    /// detector and the thickness `δ_s` (m).
    self_collision: Option<(SelfCollision, f64)>,
    /// The oriented vertex–face pairs `[p, a, b, c]` found at the current
    /// substep's start.
    face_pairs: Vec<[usize; 4]>,
    /// Positions at the last step's start (m) and that step's length
    /// `dt` (s; 0 before the first step), for [`Sbd::step_velocities`].
    step_start: Vec<Vector3<f64>>,
    step_dt: f64,
}

/// A point's last queried signed distance `phi` (m) to a collider and its
/// outward normal, taken at the point `at` (m) and time `t` (s).
#[derive(Clone, Copy, Debug)]
struct Clearance {
    at: Vector3<f64>,
    phi: f64,
    normal: Vector3<f64>,
    t: f64,
}

/// Within this fraction of the collision thickness of its last query, a
/// point against a still collider takes `φ` from that query's tangent
/// plane instead of a new one ([`Clearance::contact`]).
const LINEARISED_REACH: f64 = 0.25;

impl Clearance {
    /// Nothing known: the next projection queries.
    const UNKNOWN: Clearance = Clearance {
        at: Vector3::new(0.0, 0.0, 0.0),
        phi: f64::NEG_INFINITY,
        normal: Vector3::new(0.0, 0.0, 0.0),
        t: f64::NAN,
    };

    /// `(φ, n)` of collider `c` at the point `p` (m) at time `t` (s) when
    /// `φ < δ` (`delta`, m), `None` when it is not. Without a query where
    /// the last one answers: `φ` is 1-Lipschitz, so a point that has not
    /// moved closer than its last clearance allows is still outside (a
    /// moving collider's clearance holds only at the time it was taken);
    /// and a point within [`LINEARISED_REACH`]` δ` of its last query
    /// against a still collider takes `φ` from that query's tangent plane
    /// (its error, `d²/2ρ` for a surface of curvature radius `ρ`, is 3 µm
    /// at 0.25 mm on a 1 cm radius), which makes resting contact cheap.
    fn contact(
        &mut self,
        c: &Collider,
        p: &Vector3<f64>,
        t: f64,
        delta: f64,
    ) -> Option<(f64, Vector3<f64>)> {
        let still = c.motion.is_none() && c.animation().is_none();
        let d = (p - self.at).norm();
        if still || self.t == t {
            if self.phi - d >= delta {
                return None;
            }
            if still && self.phi.is_finite() && d <= LINEARISED_REACH * delta {
                let phi = self.phi + self.normal.dot(&(p - self.at));
                return (phi < delta).then_some((phi, self.normal));
            }
        }
        let (phi, n) = c.distance(p, t);
        *self = Clearance {
            at: *p,
            phi,
            normal: n,
            t,
        };
        (phi < delta).then_some((phi, n))
    }
}

/// Coulomb friction as a position limit (module docs): the part of the
/// displacement `moved` (m, relative to the collider's surface) tangent to
/// the unit normal `n` to take back, all of it up to `limit` (m, `μ` times
/// the penetration depth: static friction), `limit` along it above.
fn friction_correction(moved: &Vector3<f64>, n: &Vector3<f64>, limit: f64) -> Vector3<f64> {
    let tangential = moved - n * n.dot(moved);
    let slip = tangential.norm();
    if slip <= limit {
        tangential
    } else {
        tangential * (limit / slip)
    }
}

/// A seam tie: vertex `node` is pulled onto the point `(1 - t) x_a + t x_b`
/// of the other side's outline (`other = [a, b]`), the zero-length
/// constraint `C = |x_node - ((1 - t) x_a + t x_b)|`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeamTie {
    /// The tied vertex.
    pub node: u32,
    /// The two vertices its target lies between.
    pub other: [u32; 2],
    /// Interpolation weight in `[0, 1]`.
    pub t: f64,
}

impl SeamTie {
    /// The gap `|x_node - ((1 - t) x_a + t x_b)|` (m) in positions `x`.
    pub fn gap(&self, x: &[Vector3<f64>]) -> f64 {
        let [a, b] = self.other.map(|i| x[i as usize]);
        (x[self.node as usize] - (a * (1.0 - self.t) + b * self.t)).norm()
    }
}

impl Sbd {
    /// A cloth on `mesh` at rest in its world positions, with the vertices
    /// `pinned` held where they are.
    ///
    /// # Errors
    /// [`ShellError::InvalidOption`] for options out of range (naming
    /// `pinned` for a vertex the mesh lacks).
    pub fn new(
        mesh: &ClothMesh,
        pinned: &[usize],
        options: SbdOptions,
    ) -> Result<Self, ShellError> {
        options.validate()?;
        let n = mesh.vertex_count();
        let mut is_pinned = vec![false; n];
        for &i in pinned {
            if i >= n {
                return Err(ShellError::InvalidOption {
                    name: "pinned",
                    message: format!("vertex {i} does not exist (the mesh has {n})"),
                });
            }
            is_pinned[i] = true;
        }
        let mut mass = mesh.lumped_masses(options.areal_density);
        // A vertex in no triangle (a garment's stray yarn end) gets the
        // mean vertex mass, so it moves (with its seam tie) instead of
        // acting as a pin.
        let mean = mass.iter().sum::<f64>() / n.max(1) as f64;
        for m in mass.iter_mut().filter(|m| **m <= 0.0) {
            *m = mean;
        }
        let inverse_mass = (0..n)
            .map(|i| {
                if is_pinned[i] || mass[i] <= 0.0 {
                    0.0
                } else {
                    1.0 / mass[i]
                }
            })
            .collect();
        let rest = (0..mesh.triangles().len())
            .map(|t| {
                mesh.triangle_rest(t)
                    .expect("ClothMesh::new checked every triangle")
            })
            .collect();
        let (springs, levels) = options.bending.build(mesh, &is_pinned);
        let triangle_colours = greedy_colouring(mesh.triangles().len(), n, |t| {
            mesh.triangles()[t].map(|v| v as usize)
        });
        let spring_colours = greedy_colouring(springs.len(), n, |e| {
            [springs[e].a as usize, springs[e].b as usize]
        });
        let edges = mesh.edges();
        let edge_colours = greedy_colouring(edges.len(), n, |e| edges[e].map(|v| v as usize));
        Ok(Sbd {
            triangle_colours,
            edges,
            edge_colours,
            spring_colours,
            triangles: mesh.triangles().to_vec(),
            rest,
            springs,
            levels,
            inverse_mass,
            mass,
            x: mesh.positions().to_vec(),
            v: vec![Vector3::zeros(); n],
            p: mesh.positions().to_vec(),
            time: 0.0,
            colliders: Vec::new(),
            clearance: Vec::new(),
            edge_clearance: Vec::new(),
            ties: Vec::new(),
            tie_colours: Vec::new(),
            attachments: Vec::new(),
            self_collision: None,
            face_pairs: Vec::new(),
            step_start: Vec::new(),
            step_dt: 0.0,
            options,
        })
    }

    /// The same cloth with seam `ties` (their vertices must exist).
    ///
    /// # Errors
    /// [`ShellError::InvalidOption`] naming `ties` for a vertex out of
    /// range or a weight outside `[0, 1]`.
    pub fn with_ties(mut self, ties: Vec<SeamTie>) -> Result<Self, ShellError> {
        let n = self.x.len();
        if let Some((i, t)) = ties.iter().enumerate().find(|(_, t)| {
            !(0.0..=1.0).contains(&t.t)
                || t.node as usize >= n
                || t.other.iter().any(|&o| o as usize >= n)
        }) {
            return Err(ShellError::InvalidOption {
                name: "ties",
                message: format!(
                    "tie {i} ({t:?}) names a vertex outside 0..{n} or a weight outside [0, 1]"
                ),
            });
        }
        self.tie_colours = greedy_colouring(ties.len(), n, |e| {
            [
                ties[e].node as usize,
                ties[e].other[0] as usize,
                ties[e].other[1] as usize,
            ]
        });
        self.ties = ties;
        Ok(self)
    }

    /// The same cloth with `attachments`: each `(vertex, point)` pulls the
    /// vertex to the fixed point (m) while
    /// [`SbdOptions::attachment_stiffness`] is above 0, the zero-length
    /// constraint `C = |x - p|` of an immovable partner: `Δx = -k C n`
    /// \[Kim23 eq. 3-5\]. A garment's seams whose straight
    /// path crosses the body are sewn over it this way (the meeting points
    /// of `weft_garment::sewing::seam_routes`).
    ///
    /// # Errors
    /// [`ShellError::InvalidOption`] naming `attachments` for a vertex out
    /// of range, a vertex listed twice or a non-finite point.
    pub fn with_attachments(
        mut self,
        attachments: Vec<(u32, Vector3<f64>)>,
    ) -> Result<Self, ShellError> {
        let n = self.x.len();
        let mut seen = vec![false; n];
        for (i, (v, p)) in attachments.iter().enumerate() {
            let v = *v as usize;
            let problem = if v >= n {
                Some(format!("names vertex {v}, outside 0..{n}"))
            } else if std::mem::replace(&mut seen[v], true) {
                Some(format!("attaches vertex {v} a second time"))
            } else if !p.iter().all(|c| c.is_finite()) {
                Some(format!("has the non-finite point {p:?}"))
            } else {
                None
            };
            if let Some(message) = problem {
                return Err(ShellError::InvalidOption {
                    name: "attachments",
                    message: format!("attachment {i} {message}"),
                });
            }
        }
        self.attachments = attachments;
        Ok(self)
    }

    /// The same cloth with vertex–face self-collision (module docs): at
    /// every substep's start `detector` finds the vertex–face pairs within
    /// its distance ([`SelfCollision::face_contacts`], oriented: the vertex
    /// on the side of its face's right-hand normal), and every sweep keeps
    /// each pair's vertex at least `thickness` (m) on its side of the face,
    /// `C = d - δ_s ≥ 0` with the signed distance of
    /// [`weft_solver::collide::face_separation`]. The detector's distance
    /// (or [`SbdOptions::self_collision_search`]) should exceed `thickness`
    /// by what a vertex travels in a substep.
    ///
    /// # Errors
    /// [`ShellError::InvalidOption`] naming `self_collision` when the
    /// detector has no faces, is built for another number of vertices, or
    /// its distance is not above `thickness`, or `thickness` is not a
    /// finite value above 0.
    pub fn with_self_collision(
        mut self,
        detector: SelfCollision,
        thickness: f64,
    ) -> Result<Self, ShellError> {
        let n = self.x.len();
        let problem = if detector.faces().is_empty() {
            Some("the detector has no faces".to_string())
        } else if detector.exclusion().node_count() != n {
            Some(format!(
                "the detector is built for {} vertices, the cloth has {n}",
                detector.exclusion().node_count()
            ))
        } else if !(thickness > 0.0 && thickness.is_finite()) {
            Some(format!(
                "expected a finite thickness > 0 (m), got {thickness}"
            ))
        } else if detector.d0() <= thickness {
            Some(format!(
                "the detector's distance {} m must exceed the thickness {thickness} m",
                detector.d0()
            ))
        } else {
            None
        };
        if let Some(message) = problem {
            return Err(ShellError::InvalidOption {
                name: "self_collision",
                message,
            });
        }
        self.self_collision = Some((detector, thickness));
        Ok(self)
    }

    /// The largest seam-tie gap (m), 0 without ties.
    pub fn max_tie_gap(&self) -> f64 {
        self.ties.iter().map(|t| t.gap(&self.x)).fold(0.0, f64::max)
    }

    /// Changes the options for the steps to come (the phases of a drape:
    /// sewing without gravity, with more iterations and a limited tie step,
    /// then draping). The structure (`bending`, `areal_density`) is fixed
    /// at construction.
    ///
    /// # Errors
    /// [`ShellError::InvalidOption`] for an option out of range or a
    /// changed `bending` or `areal_density`; the options are then unchanged.
    pub fn reconfigure(&mut self, change: impl FnOnce(&mut SbdOptions)) -> Result<(), ShellError> {
        let mut o = self.options.clone();
        change(&mut o);
        o.validate()?;
        if o.bending != self.options.bending || o.areal_density != self.options.areal_density {
            return Err(ShellError::InvalidOption {
                name: "bending",
                message: "the bending springs and the areal density are fixed at construction"
                    .into(),
            });
        }
        self.options = o;
        Ok(())
    }

    /// The same cloth with external `colliders` (module docs); an animated
    /// body is posed at the end of every substep.
    pub fn with_colliders(mut self, colliders: Vec<Collider>) -> Self {
        self.clearance = vec![Clearance::UNKNOWN; self.x.len() * colliders.len()];
        self.edge_clearance = vec![Clearance::UNKNOWN; self.edges.len() * colliders.len()];
        self.colliders = colliders;
        self
    }

    /// The colliders.
    pub fn colliders(&self) -> &[Collider] {
        &self.colliders
    }

    /// The smallest signed distance of any vertex to any collider (m;
    /// negative inside), `+∞` without colliders.
    pub fn min_clearance(&self) -> f64 {
        self.colliders
            .iter()
            .flat_map(|c| self.x.iter().map(move |x| c.distance(x, self.time).0))
            .fold(f64::INFINITY, f64::min)
    }

    /// The options it was built with.
    pub fn options(&self) -> &SbdOptions {
        &self.options
    }

    /// Vertex positions (m).
    pub fn positions(&self) -> &[Vector3<f64>] {
        &self.x
    }

    /// Vertex velocities (m/s).
    pub fn velocities(&self) -> &[Vector3<f64>] {
        &self.v
    }

    /// Step-averaged vertex velocities `(x(t) - x(t - dt)) / dt` (m/s)
    /// over the last [`Sbd::step`] of length `dt`; zero before the first.
    ///
    /// [`Sbd::velocities`] are the last substep's, `(p - x) / h`: a vertex
    /// held between constraints that fight (pressed between a layer and
    /// the body in an armpit) moves back and forth by a fraction of a
    /// millimetre from substep to substep, at up to 1 m/s with 20
    /// substeps of 0.25 ms, while it stays in place over the step. These
    /// velocities do not count that chatter; a drape judges its rest by
    /// them (BENCHMARKS.md, 2026-11-29).
    pub fn step_velocities(&self) -> Vec<Vector3<f64>> {
        if self.step_dt <= 0.0 {
            return vec![Vector3::zeros(); self.x.len()];
        }
        self.x
            .iter()
            .zip(&self.step_start)
            .map(|(x, x0)| (x - x0) / self.step_dt)
            .collect()
    }

    /// Kinetic energy of the step-averaged velocities
    /// ([`Sbd::step_velocities`]), `½ Σ mᵢ |vᵢ|²` (J).
    pub fn step_kinetic_energy(&self) -> f64 {
        self.step_velocities()
            .iter()
            .zip(&self.mass)
            .map(|(v, m)| 0.5 * m * v.norm_squared())
            .sum()
    }

    /// Lumped vertex masses (kg).
    pub fn masses(&self) -> &[f64] {
        &self.mass
    }

    /// Simulated time (s).
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.triangles.len()
    }

    /// The bending springs.
    pub fn springs(&self) -> &[Spring] {
        &self.springs
    }

    /// The LOD levels, for [`BendingSprings::Lod`].
    pub fn lod_levels(&self) -> Option<LodLevels> {
        self.levels
    }

    /// Kinetic energy `½ Σ mᵢ |vᵢ|²` (J), pinned vertices included (at rest).
    pub fn kinetic_energy(&self) -> f64 {
        self.v
            .iter()
            .zip(&self.mass)
            .map(|(v, m)| 0.5 * m * v.norm_squared())
            .sum()
    }

    /// The strain of every triangle at the current positions.
    pub fn strains(&self) -> Vec<TriangleStrain> {
        self.triangles
            .iter()
            .zip(&self.rest)
            .map(|(t, r)| {
                let f = r.deformation_gradient(t.map(|i| self.x[i as usize]));
                let (l0, l1) = (f.column(0).norm(), f.column(1).norm());
                let c = f.column(0).dot(&f.column(1)) / (l0 * l1);
                let s = f.transpose() * f;
                let half_trace = 0.5 * (s[(0, 0)] + s[(1, 1)]);
                let half_gap = 0.5 * (s[(0, 0)] - s[(1, 1)]);
                let lambda_max = half_trace + half_gap.hypot(s[(0, 1)]);
                TriangleStrain {
                    stretch_u: l0 - 1.0,
                    stretch_v: l1 - 1.0,
                    shear: c.clamp(-1.0, 1.0).asin(),
                    principal: lambda_max.sqrt() - 1.0,
                }
            })
            .collect()
    }

    /// The largest [`TriangleStrain::principal`] over the triangles;
    /// infinite if any is not finite (a diverged cloth).
    pub fn max_principal_stretch(&self) -> f64 {
        self.strains()
            .iter()
            .map(|t| {
                if t.principal.is_finite() {
                    t.principal
                } else {
                    f64::INFINITY
                }
            })
            .fold(0.0, f64::max)
    }

    /// Advances by `dt` (s) in [`SbdOptions::substeps`] substeps.
    pub fn step(&mut self, dt: f64) {
        let h = dt / self.options.substeps as f64;
        let g = Vector3::from(self.options.gravity);
        let keep = (1.0 - self.options.velocity_damping * h).max(0.0);
        self.step_start.clone_from(&self.x);
        self.step_dt = dt;
        for _ in 0..self.options.substeps {
            for i in 0..self.x.len() {
                if self.inverse_mass[i] > 0.0 {
                    self.v[i] += g * h;
                }
                self.p[i] = self.x[i] + self.v[i] * h;
            }
            let t_end = self.time + h;
            for c in &mut self.colliders {
                c.advance_to(t_end);
            }
            if let Some((detector, thickness)) = &self.self_collision {
                self.face_pairs.clear();
                let reach = self
                    .options
                    .self_collision_search
                    .map_or(detector.d0(), |s| s.clamp(*thickness, detector.d0()));
                let pairs = detector.face_contacts_within(&self.x, reach);
                self.face_pairs.extend(pairs.iter().map(|c| c.nodes));
            }
            for _ in 0..self.options.iterations {
                self.project_triangles();
                self.project_springs();
                self.project_ties();
                self.project_attachments();
                self.project_self_collisions();
                self.project_collisions(h, t_end);
                if self.options.edge_collisions {
                    self.project_edge_collisions(h, t_end);
                }
            }
            for i in 0..self.x.len() {
                self.v[i] = (self.p[i] - self.x[i]) * (keep / h);
                self.x[i] = self.p[i];
            }
            self.time += h;
        }
    }

    /// One Gauss-Seidel sweep over the triangles' strain constraints, a
    /// colour at a time (a colour's triangles share no vertex, so they run
    /// in parallel and the result does not depend on the thread count).
    fn project_triangles(&mut self) {
        let (ks, kx) = (self.options.stretch_stiffness, self.options.shear_stiffness);
        let shear = if self.options.normalised_shear {
            StrainConstraint::Shear
        } else {
            StrainConstraint::ShearUnnormalised
        };
        let p = Shared(self.p.as_mut_ptr());
        let (tris, rest, w) = (&self.triangles, &self.rest, &self.inverse_mass);
        for_each_coloured(&self.triangle_colours, |t| {
            let idx = tris[t].map(|i| i as usize);
            // SAFETY: `idx` are in bounds (checked by `ClothMesh::new`) and
            // no other triangle of this colour touches them.
            let mut x = idx.map(|i| unsafe { *p.ptr().add(i) });
            project_triangle(&rest[t], idx.map(|i| w[i]), &mut x, ks, kx, shear);
            for k in 0..3 {
                unsafe { *p.ptr().add(idx[k]) = x[k] };
            }
        });
    }

    /// Moves every free vertex out of every collider and applies friction
    /// (module docs), at the substep's end time `t` (s).
    fn project_collisions(&mut self, h: f64, t: f64) {
        if self.colliders.is_empty() {
            return;
        }
        let delta = self.options.collision_thickness;
        let friction = self.options.friction;
        let (x, w, colliders) = (&self.x, &self.inverse_mass, &self.colliders);
        let project = |i: usize, p: &mut Vector3<f64>, cache: &mut [Clearance]| {
            if w[i] == 0.0 {
                return;
            }
            for (c, known) in colliders.iter().zip(cache.iter_mut()) {
                let Some((phi, n)) = known.contact(c, p, t, delta) else {
                    continue;
                };
                let depth = delta - phi;
                *p += n * depth;
                if !friction {
                    continue;
                }
                let moved = *p - x[i] - c.velocity_at(p, t) * h;
                *p -= friction_correction(&moved, &n, c.friction * depth);
            }
        };
        let k = colliders.len();
        if self.p.len() < PARALLEL_MIN / 8 {
            self.p
                .iter_mut()
                .zip(self.clearance.chunks_mut(k))
                .enumerate()
                .for_each(|(i, (p, cache))| project(i, p, cache));
        } else {
            self.p
                .par_iter_mut()
                .zip(self.clearance.par_chunks_mut(k))
                .enumerate()
                .with_min_len(256)
                .for_each(|(i, (p, cache))| project(i, p, cache));
        }
    }

    /// Moves every edge's midpoint out of every collider (module docs), at
    /// the substep's end time `t` (s), a colour of edges at a time, with
    /// each edge's own clearance cache ([`Clearance::contact`]).
    fn project_edge_collisions(&mut self, h: f64, t: f64) {
        if self.colliders.is_empty() {
            return;
        }
        let delta = self.options.collision_thickness;
        let friction = self.options.friction;
        let k = self.colliders.len();
        let p = Shared(self.p.as_mut_ptr());
        let cache = Shared(self.edge_clearance.as_mut_ptr());
        let (x, edges, w, colliders) = (&self.x, &self.edges, &self.inverse_mass, &self.colliders);
        for_each_coloured(&self.edge_colours, |e| {
            let [a, b] = edges[e].map(|v| v as usize);
            let (wa, wb) = (w[a], w[b]);
            if wa + wb == 0.0 {
                return;
            }
            // SAFETY: `a, b` are vertices of the mesh and no other edge of
            // this colour touches them; edge `e`'s cache entries are its own.
            let (mut pa, mut pb) = unsafe { (*p.ptr().add(a), *p.ptr().add(b)) };
            for (ci, c) in colliders.iter().enumerate() {
                let known = unsafe { &mut *cache.ptr().add(e * k + ci) };
                let Some((phi, n)) = known.contact(c, &(0.5 * (pa + pb)), t, delta) else {
                    continue;
                };
                // s = -C / (|∇_a C|² w_a + |∇_b C|² w_b), |∇C|² = 1/4.
                let depth = delta - phi;
                let s = depth / (0.25 * (wa + wb));
                pa += n * (0.5 * s * wa);
                pb += n * (0.5 * s * wb);
                if !friction {
                    continue;
                }
                let m = 0.5 * (pa + pb);
                let moved = m - 0.5 * (x[a] + x[b]) - c.velocity_at(&m, t) * h;
                let undo = friction_correction(&moved, &n, c.friction * depth);
                // Each end moves by 2 w_i / (w_a + w_b) of `undo`: the
                // midpoint by `undo`.
                pa -= undo * (2.0 * wa / (wa + wb));
                pb -= undo * (2.0 * wb / (wa + wb));
            }
            unsafe {
                *p.ptr().add(a) = pa;
                *p.ptr().add(b) = pb;
            }
        });
    }

    /// One Gauss-Seidel sweep over the seam ties, coloured as the
    /// triangles: `Δx = -s k w ∇C` with `∇C = (n, -(1-t) n, -t n)`,
    /// `s = min(C, tie_max_step) / (w_node + (1-t)² w_a + t² w_b)`
    /// \[Kim23 eq. 3-5\].
    fn project_ties(&mut self) {
        let k = self.options.tie_stiffness;
        let cap = self.options.tie_max_step.unwrap_or(f64::INFINITY);
        let p = Shared(self.p.as_mut_ptr());
        let (ties, w) = (&self.ties, &self.inverse_mass);
        for_each_coloured(&self.tie_colours, |e| {
            let tie = &ties[e];
            let idx = [
                tie.node as usize,
                tie.other[0] as usize,
                tie.other[1] as usize,
            ];
            // SAFETY: as in `project_triangles`, for the tie colouring.
            let x = idx.map(|i| unsafe { *p.ptr().add(i) });
            let d = x[0] - (x[1] * (1.0 - tie.t) + x[2] * tie.t);
            let len = d.norm();
            // Coefficients of `∇C / n` per distinct vertex: a tie whose
            // node is also an end of its target segment (a dart's tip)
            // moves that vertex once, by the sum.
            let mut coef = [1.0, -(1.0 - tie.t), -tie.t];
            for j in 1..3 {
                if let Some(k) = (0..j).find(|&k| idx[k] == idx[j]) {
                    coef[k] += coef[j];
                    coef[j] = 0.0;
                }
            }
            let denom: f64 = (0..3).map(|j| w[idx[j]] * coef[j] * coef[j]).sum();
            if len < 1e-12 || denom <= 1e-12 * (w[idx[0]] + w[idx[1]] + w[idx[2]]) {
                return;
            }
            let n = d / len;
            let s = len.min(cap) / denom * k;
            for j in 0..3 {
                if coef[j] != 0.0 {
                    unsafe { *p.ptr().add(idx[j]) = x[j] - n * (s * w[idx[j]] * coef[j]) };
                }
            }
        });
    }

    /// One sweep over the vertex–face pairs of the substep (serial, in the
    /// detector's order: pairs share vertices): a pair closer than the
    /// thickness `δ_s`, `C = d - δ_s < 0` with `∇C = (n, -α n, -β n, -γ n)`
    /// (the barycentric weights held fixed), moves by `Δx_i = -s w_i ∇_i C`,
    /// `s = C / (w_p + α² w_a + β² w_b + γ² w_c)` \[Kim23 eq. 3-5\] at
    /// stiffness 1.
    fn project_self_collisions(&mut self) {
        let Some((_, delta)) = &self.self_collision else {
            return;
        };
        let w = &self.inverse_mass;
        for nodes in &self.face_pairs {
            let [p, a, b, c] = nodes.map(|i| self.p[i]);
            let sep = face_separation(&p, &a, &b, &c);
            let constraint = sep.distance - delta;
            if constraint >= 0.0 {
                continue;
            }
            let [al, be, ga] = sep.closest.weights;
            let coef = [1.0, -al, -be, -ga];
            let denom: f64 = (0..4).map(|k| w[nodes[k]] * coef[k] * coef[k]).sum();
            if denom <= 0.0 {
                continue;
            }
            let s = constraint / denom;
            for k in 0..4 {
                self.p[nodes[k]] -= sep.direction * (s * w[nodes[k]] * coef[k]);
            }
        }
    }

    /// One sweep over the attachments (each moves its own vertex; serial,
    /// as there are few): `Δx = -k C n` for `C = |x - p| > 0`, pinned
    /// vertices left alone.
    fn project_attachments(&mut self) {
        let k = self.options.attachment_stiffness;
        if k == 0.0 {
            return;
        }
        for (v, target) in &self.attachments {
            let v = *v as usize;
            if self.inverse_mass[v] == 0.0 {
                continue;
            }
            let d = self.p[v] - target;
            let len = d.norm();
            if len > 1e-12 {
                self.p[v] -= d * k;
            }
        }
    }

    /// One Gauss-Seidel sweep over the bending springs, coloured as the
    /// triangles.
    fn project_springs(&mut self) {
        let k = self.options.bending_stiffness;
        let p = Shared(self.p.as_mut_ptr());
        let (springs, w) = (&self.springs, &self.inverse_mass);
        for_each_coloured(&self.spring_colours, |e| {
            let s = &springs[e];
            let idx = [s.a as usize, s.b as usize];
            // SAFETY: as in `project_triangles`, for the spring colouring.
            let mut x = idx.map(|i| unsafe { *p.ptr().add(i) });
            project_spring(&mut x, idx.map(|i| w[i]), s.rest_length, k);
            for j in 0..2 {
                unsafe { *p.ptr().add(idx[j]) = x[j] };
            }
        });
    }
}

/// One strain constraint of a triangle \[SBD14\] (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrainConstraint {
    /// `C = |f₀| - 1`, stretch along the rest frame's first axis.
    StretchU,
    /// `C = |f₁| - 1`, along the second axis.
    StretchV,
    /// `C = f̂₀·f̂₁`, shear (normalised, \[SBD14\]).
    Shear,
    /// `C = f₀·f₁ = S₀₁`, shear without the normalisation: its gradient
    /// `bₖ[0] f₁ + bₖ[1] f₀` does not blow up on a collapsed triangle.
    ShearUnnormalised,
}

/// The value of constraint `which` of the triangle with rest shape `r` at
/// positions `x` (m), and its gradient with respect to each vertex
/// (1/m); `None` where the gradient is undefined (an edge of `F` shorter
/// than 1e-12).
pub fn strain_constraint(
    r: &TriangleRest,
    x: &[Vector3<f64>; 3],
    which: StrainConstraint,
) -> Option<(f64, [Vector3<f64>; 3])> {
    let f = r.deformation_gradient(*x);
    let (f0, f1) = (f.column(0).into_owned(), f.column(1).into_owned());
    let (l0, l1) = (f0.norm(), f1.norm());
    let stretch = |fa: Vector3<f64>, la: f64, a: usize| {
        (la >= 1e-12).then(|| (la - 1.0, std::array::from_fn(|k| fa * (r.b[k][a] / la))))
    };
    match which {
        StrainConstraint::StretchU => stretch(f0, l0, 0),
        StrainConstraint::StretchV => stretch(f1, l1, 1),
        StrainConstraint::ShearUnnormalised => Some((
            f0.dot(&f1),
            std::array::from_fn(|k| f1 * r.b[k][0] + f0 * r.b[k][1]),
        )),
        StrainConstraint::Shear => {
            if l0 < 1e-12 || l1 < 1e-12 {
                return None;
            }
            let (n0, n1) = (f0 / l0, f1 / l1);
            let c = n0.dot(&n1);
            let d0 = (n1 - n0 * c) / l0;
            let d1 = (n0 - n1 * c) / l1;
            Some((c, std::array::from_fn(|k| d0 * r.b[k][0] + d1 * r.b[k][1])))
        }
    }
}

/// Projects the three strain constraints of one triangle in turn
/// (stretch along each rest axis, then shear; module docs) on its
/// positions `x` (m) with inverse masses `w` (1/kg) and stiffnesses `ks`,
/// `kx` ∈ [0, 1], the shear constraint `shear` ([`StrainConstraint::Shear`]
/// or [`StrainConstraint::ShearUnnormalised`]): `Δxₖ = -s k wₖ ∇ₖC`, `s = C / Σⱼ wⱼ |∇ⱼC|²`
/// [SBD14; Kim23 eq. 3-5]. A constraint whose gradient vanishes (a
/// collapsed triangle) is skipped.
pub fn project_triangle(
    r: &TriangleRest,
    w: [f64; 3],
    x: &mut [Vector3<f64>; 3],
    ks: f64,
    kx: f64,
    shear: StrainConstraint,
) {
    for (which, k) in [
        (StrainConstraint::StretchU, ks),
        (StrainConstraint::StretchV, ks),
        (shear, kx),
    ] {
        let Some((c, grad)) = strain_constraint(r, x, which) else {
            continue;
        };
        let denom: f64 = (0..3).map(|j| w[j] * grad[j].norm_squared()).sum();
        if denom <= 1e-24 {
            continue;
        }
        let s = c / denom;
        for j in 0..3 {
            x[j] -= grad[j] * (s * k * w[j]);
        }
    }
}

/// Projects the distance constraint `|x₁ - x₀| - d` of a spring (rest
/// length `d`, m) on `x` with inverse masses `w` and stiffness `k ∈ [0, 1]`
/// [Kim23 eq. 3-5].
pub fn project_spring(x: &mut [Vector3<f64>; 2], w: [f64; 2], d: f64, k: f64) {
    let ws = w[0] + w[1];
    let delta = x[1] - x[0];
    let len = delta.norm();
    if ws <= 0.0 || len < 1e-12 {
        return;
    }
    let corr = delta * ((len - d) / (len * ws) * k);
    x[0] += corr * w[0];
    x[1] -= corr * w[1];
}

/// The set-up of \[Kim23\] Fig. 5 and of `weft bench --model sbd`: a 1 m
/// square of `n x n` vertices (`n ≥ 2`) hanging in the `x-y` plane from
/// its two top corners (the top edge at `y = 0`, the bottom at `y = -1`
/// m), at rest, with `options`.
///
/// # Errors
/// As [`ClothMesh::rectangle`] and [`Sbd::new`].
pub fn hanging_square(n: usize, options: SbdOptions) -> Result<Sbd, ShellError> {
    let mesh = ClothMesh::rectangle(
        [1.0, 1.0],
        [n, n],
        Vector3::new(0.0, -1.0, 0.0),
        Vector3::x(),
        Vector3::y(),
    )?;
    Sbd::new(&mesh, &[(n - 1) * n, n * n - 1], options)
}
