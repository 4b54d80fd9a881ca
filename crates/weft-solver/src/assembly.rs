//! Assembly of the backward-Euler residual and system matrix (DESIGN §5, §7).
//!
//! For one Newton iterate `v` (generalised velocities at the end of the step,
//! m/s) with `q = q_n + h v`, the assembler computes
//!
//! - the residual `R = M(q_n)(v - v_n) - h f(q, v)` (N·s), where `f` holds
//!   elastic, gravity, strain-rate or Rayleigh damping, friction-anchor and
//!   Euler-Lagrange inertia forces (`∇_q T - Ṁ q̇`, [SBO17 eq. 1]);
//! - the system matrix `A = M(q_n) - h ∂f/∂q̇ - h² ∂f/∂q` in 5x5 block CSR.
//!   Its elastic part is a PSD approximation of the energy Hessian per
//!   element (the stress-weighted strain Hessians projected to PSD and a
//!   second-order Eulerian term dropped, see
//!   [`weft_potentials::elastic_projected`]): the exact Hessian of a
//!   compressed yarn is indefinite, which made PCG break down on negative
//!   curvature and rules out a Cholesky preconditioner. Its damping parts are
//!   the symmetric, clamped Jacobians of \[SBO17 eq. 10-11\]; the stretch
//!   damping takes its strain rate as the step's strain increment over `h`
//!   ([`weft_potentials::stretch::dissipation_over_step`]), whose Jacobian is
//!   symmetric and exact (clamped only with the projected elastic
//!   Hessians). The matrix is
//!   therefore SPD and Newton is a projected Newton method: quadratic where
//!   nothing is projected, linear (with the line search) where yarns are
//!   compressed.
//!
//! The mass matrix is the Eulerian segment mass of DESIGN §4 evaluated at the
//! start of the step, plus lumped point masses on positions, and the
//! Euler-Lagrange inertia terms `∇_q T - Ṁ q̇` are evaluated there too
//! (explicitly, at `(q_n, v_n)`): their Jacobians are not symmetric and are
//! not small for fast rigid motion (the arc-length rows carry `ρ_l|V|²/2`
//! per segment end), so leaving them implicit without their Jacobian made
//! Newton converge only linearly. Treated explicitly, `A = dR/dv` exactly
//! up to the elastic and damping clamps. The terms
//! do no net work (`q̇·f_in = -½ q̇ᵀṀq̇` balances the change of `M`), so the
//! explicit treatment is a consistent first-order splitting.
//!
//! Storage: the matrix is symmetric (up to the node-diagonal blocks of
//! collider friction, which are stored whole), so it is kept in the
//! symmetric mode of [`BlockSparse`]: only the blocks on and above the
//! diagonal. Each element adds the blocks of its node pairs `(a, b)` with
//! `a ≤ b`; its other blocks are their transposes.
//!
//! Triangle-mesh cloth (`weft-shell`) uses the same assembler: its nodes
//! carry positions only (their `u, v` fixed), its mass is the nodes' point
//! masses, and its elements are the StVK membrane triangles with strain-rate
//! or Rayleigh damping [SBO18 §4, eq. 13-16] and the discrete-shell hinges
//! ([`weft_core::MembraneTriangle`], [`weft_core::ShellHinge`]).
//!
//! Parallelism: the elements of each type are coloured once so that no two
//! elements of a colour share a node; each colour is evaluated in parallel
//! and writes straight into its own blocks through a precomputed
//! element-to-block scatter map (no hashing, sorting or atomics per step).

use crate::bsr::{B, Block, BlockSparse};
use crate::collide::{
    Collider, FaceContact, NodeContact, RepulsionLaw, SegmentContact, SelfCollision, TangentPlane,
    face_repulsion, repulsion_with,
};
use crate::integrator::Rejection;
use crate::par::Shared;
use crate::par::{map_reduce, map_reduce_from, update};
use nalgebra::{SMatrix, SVector, Vector3};
use rayon::prelude::*;
use weft_core::{Damping, Fabric, Family, ModeCoefficients};
use weft_potentials::hinge::Hinge;
use weft_potentials::stvk::Stvk;
use weft_potentials::{
    DissipationTerms, Hessian, bending, contact, elastic, elastic_projected, friction, gravity,
    inertia, seam, shear, stretch,
};

/// Per-material constants used by the element loops.
#[derive(Clone, Debug)]
struct MaterialParams {
    k_s: f64,
    k_b: f64,
    k_x: f64,
    k_c: f64,
    k_f: f64,
    mu: f64,
    /// Real thread spacing (m; 0: model yarns are real yarns).
    thread_spacing: f64,
    radius: f64,
    rho_l: f64,
    /// Strain-rate damping coefficients (zero unless the model is strain-rate).
    kd: ModeCoefficients,
    /// Rayleigh `(α, β)` if the material uses Rayleigh damping.
    rayleigh: Option<(f64, f64)>,
}

/// Energies and dissipation at one state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Energies {
    /// Kinetic energy `½ q̇ᵀ M(q) q̇` (J).
    pub kinetic: f64,
    /// Elastic energy: stretch, bending, shear, contact and friction anchors (J).
    pub elastic: f64,
    /// Gravitational potential energy (J), zero at the origin.
    pub gravity: f64,
    /// Dissipated power of the damping model at this state (W):
    /// `Σ 2W` for strain-rate potentials, `q̇ᵀ(αM + βK⁺)q̇` for Rayleigh
    /// (`K⁺` the PSD projection of the elastic stiffness).
    pub dissipation_power: f64,
}

impl std::ops::Add for Energies {
    type Output = Energies;
    fn add(self, o: Energies) -> Energies {
        Energies {
            kinetic: self.kinetic + o.kinetic,
            elastic: self.elastic + o.elastic,
            gravity: self.gravity + o.gravity,
            dissipation_power: self.dissipation_power + o.dissipation_power,
        }
    }
}

/// Largest stretch strain seen in an assembly, and where.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StrainPeak {
    /// `max |ε|` over stretch elements.
    pub value: f64,
    /// Index of that segment in `fabric.elements.segments`.
    pub segment: usize,
}

/// Self-collision between yarn segments that are not neighbours in the weave
/// (DESIGN §6), and for triangle-mesh cloth between vertices and triangles
/// ([`SelfCollision::with_faces`]): repulsion `V(d0 - d)` under
/// [`SelfContact::law`] for closest distance `d < d0`.
pub struct SelfContact {
    /// Broad phase (spatial hash) and neighbour exclusion, built once.
    pub detector: SelfCollision,
    /// Interaction distance `d0 = 2R + margin` (m).
    pub d0: f64,
    /// Repulsion stiffness `k` (N/m).
    pub stiffness: f64,
    /// The repulsion law of every pair (DESIGN §6's quadratic one for
    /// yarns; triangle-mesh cloth uses the C² cubic one).
    pub law: RepulsionLaw,
    /// Candidate pairs found at the start of the current step (within `2 d0`).
    pub contacts: Vec<SegmentContact>,
    /// Candidate vertex–face pairs found at the start of the current step
    /// (as [`SelfContact::contacts`]; empty without faces).
    pub face_contacts: Vec<FaceContact>,
    /// The layer crossings at the start of the current step
    /// ([`SelfCollision::crossings`]; empty without faces).
    start_crossings: Vec<[usize; 2]>,
    /// The current step's size (s), from [`Assembler::begin_step`].
    step: f64,
}

impl SelfContact {
    /// Self-collision by `detector` within `d0` (m) with repulsion
    /// stiffness `stiffness` (N/m) under `law`; no pairs until the first
    /// [`Assembler::begin_step`].
    pub fn new(detector: SelfCollision, d0: f64, stiffness: f64, law: RepulsionLaw) -> Self {
        Self {
            detector,
            d0,
            stiffness,
            law,
            contacts: Vec::new(),
            face_contacts: Vec::new(),
            start_crossings: Vec::new(),
            step: f64::INFINITY,
        }
    }

    /// The layer-crossing acceptance check of a step to the positions `x`
    /// (m) of triangle-mesh cloth: [`Rejection::LayerCrossing`] when some
    /// mesh edge cuts a face of the same cloth ([`SelfCollision::crossings`])
    /// that it did not cut at the step's start, and the step is longer
    /// than `dt_min` (s; [`crate::Settings::layer_crossing_dt_min`]). Pairs
    /// are found once per step, so a layer moving more than `d0` in one
    /// step passes through another without meeting a repulsion; halving
    /// the step lets the repulsion act. The test is of the end state, not
    /// of the motion (no continuous collision detection): a layer that
    /// passes wholly through another within one step, leaving no edge
    /// through a face, is not seen. `None` without faces.
    pub fn check_crossings(&self, x: &[Vector3<f64>], dt_min: f64) -> Option<Rejection> {
        if self.detector.faces().is_empty() || self.step <= dt_min {
            return None;
        }
        let new: Vec<[usize; 2]> = self
            .detector
            .crossings(x)
            .into_iter()
            .filter(|c| self.start_crossings.binary_search(c).is_err())
            .collect();
        let &[e, f] = new.first()?;
        Some(Rejection::LayerCrossing {
            edge: self.detector.segments()[e],
            face: self.detector.faces()[f],
            count: new.len(),
        })
    }
}

/// A seam tie of the garment pipeline: the yarn end `node` is pulled to the
/// point `(1 - t) x[other[0]] + t x[other[1]]` on the other side of the seam
/// by a spring of stiffness [`Assembler::tie_stiffness`] with dissipation
/// [`Assembler::tie_damping`] ([`weft_potentials::seam`]). Global node
/// indices; `t ∈ [0, 1]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tie {
    /// The yarn-end node.
    pub node: usize,
    /// The two nodes spanning the target point.
    pub other: [usize; 2],
    /// Interpolation weight.
    pub t: f64,
}

/// An attachment spring: `node` pulled to the fixed point `point` (m) by
/// `V = ½ k |x - point|²` with its own `stiffness` `k` (N/m); the garment
/// pipeline holds labelled edges to the body, and seams over it, with them
/// while sewing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Attachment {
    /// The node.
    pub node: usize,
    /// The fixed point (m).
    pub point: Vector3<f64>,
    /// Stiffness `k` (N/m), ≥ 0.
    pub stiffness: f64,
}

/// External colliders (each with its margin δ, m) and self-collision.
#[derive(Default)]
pub struct ContactModel {
    /// Colliders and their margins.
    pub colliders: Vec<(Collider, f64)>,
    /// Yarn-yarn repulsion, if enabled.
    pub self_collision: Option<SelfContact>,
    /// The tangent planes of the mesh colliders near each node, taken by
    /// [`Assembler::begin_step`] at the step start; `None` until then (mesh
    /// colliders are then evaluated with the exact `φ`).
    pub planes: Option<NodePlanes>,
    /// Segment contact: besides every node, the midpoint
    /// `p = (x_a + x_b) / 2` of every contact edge
    /// ([`Assembler::contact_edges`]: every yarn segment and every edge of
    /// a membrane triangle) is kept out of the colliders by the same
    /// penalty and held by the same smoothed Coulomb friction, on the
    /// midpoint velocity `ṗ = (ẋ_a + ẋ_b) / 2`; its force is split
    /// equally between the two nodes. A straight edge of length `s` on a
    /// surface of curvature radius `ρ` otherwise sags `s²/(8ρ)` into it
    /// between two nodes in contact (4 mm for 40 mm on a 50 mm hip), and
    /// an edge can straddle a thin collider with both nodes outside.
    /// Default off. The CUDA backend does not implement it.
    pub segments: bool,
    /// Per contact edge, the tangent planes near its midpoint (as
    /// [`ContactModel::planes`], indexed as [`Assembler::contact_edges`]), taken by
    /// [`Assembler::begin_step`] when [`ContactModel::segments`] is on.
    pub segment_planes: Option<NodePlanes>,
}

/// Per node, the tangent planes of the colliders that use them
/// ([`Collider::uses_tangent_planes`]), in compressed rows.
#[derive(Clone, Debug, Default)]
pub struct NodePlanes {
    /// `offsets[i]..offsets[i + 1]` indexes node `i`'s planes (length nodes + 1).
    pub offsets: Vec<usize>,
    /// Collider index (into [`ContactModel::colliders`]) and plane (the
    /// collider's local frame).
    pub planes: Vec<(usize, TangentPlane)>,
}

/// Contacts of a point at `x` (m), which was at `x_start` (m) at the step's
/// start, moving at `xd` (m/s), of yarn radius `radius`
/// with every collider at time `t`: against its tangent planes in `row`
/// (collider index, plane) for the colliders that use them when `row` is
/// given, else against the collider itself; `add` receives each contact.
/// On a still surface friction takes its normal force at `x_start`
/// (`collide::penalty`: the lagged normal force).
#[allow(clippy::too_many_arguments)]
fn point_contacts(
    colliders: &[(Collider, f64)],
    row: Option<&[(usize, TangentPlane)]>,
    x_start: &Vector3<f64>,
    x: &Vector3<f64>,
    xd: &Vector3<f64>,
    t: f64,
    radius: f64,
    mut add: impl FnMut(NodeContact),
) {
    for (ci, (c, margin)) in colliders.iter().enumerate() {
        let offset = radius + margin;
        match row {
            Some(row) if c.uses_tangent_planes() => {
                for (pc, pl) in row {
                    if *pc == ci
                        && let Some(nc) = c.plane_contact_from(pl, x_start, x, xd, t, offset)
                    {
                        add(nc);
                    }
                }
            }
            _ => {
                if let Some(nc) = c.node_contact_from(x_start, x, xd, t, offset) {
                    add(nc);
                }
            }
        }
    }
}

/// The tangent planes `(collider index, plane)` of the colliders that use
/// them within `reach(margin)` of `x` at time `t_end` (`buf`: scratch).
fn planes_near(
    colliders: &[(Collider, f64)],
    x: &Vector3<f64>,
    t_end: f64,
    reach: impl Fn(f64) -> f64,
    buf: &mut Vec<TangentPlane>,
) -> Vec<(usize, TangentPlane)> {
    let mut out = Vec::new();
    for (ci, (c, margin)) in colliders.iter().enumerate() {
        buf.clear();
        c.tangent_planes(x, t_end, reach(*margin), buf);
        out.extend(buf.iter().map(|p| (ci, *p)));
    }
    out
}

impl NodePlanes {
    /// The planes of node (or segment) `i`.
    pub fn row(&self, i: usize) -> &[(usize, TangentPlane)] {
        &self.planes[self.offsets[i]..self.offsets[i + 1]]
    }

    /// Compressed rows from one list of planes per node (or segment).
    pub fn from_rows(rows: Vec<Vec<(usize, TangentPlane)>>) -> Self {
        let mut np = NodePlanes::default();
        np.offsets.push(0);
        for v in rows {
            np.planes.extend(v);
            np.offsets.push(np.planes.len());
        }
        np
    }
}

/// Extra distance (m) beyond `r + δ` within which a node picks up tangent
/// planes at the step start, on top of the distance it can travel in the
/// step (`2 h |v_n| + |g| h²`).
pub const PLANE_REACH: f64 = 1e-3;

/// The assembler: the fabric, per-material parameters, the matrix pattern,
/// the element-to-block scatter maps and the element colourings, all built
/// once.
pub struct Assembler {
    /// The fabric being simulated.
    pub fabric: Fabric,
    params: Vec<MaterialParams>,
    /// Gravitational acceleration (m/s²).
    pub gravity: Vector3<f64>,
    /// Small-angle switch for bending (rad): the strain of each bending
    /// element is chosen from its angle at the step's start `q_n` and held
    /// over the step ([`bending::step_threshold`]).
    pub bending_threshold: f64,
    /// Use the exact elastic Hessians in the matrix instead of their PSD
    /// projections (default `false`). The exact matrix is `dR/dv` (up to the
    /// damping clamps) but indefinite for compressed yarns; it exists to
    /// verify the assembly against finite differences.
    pub exact_hessians: bool,
    /// Put the strain-rate dissipation's clamped position Jacobian
    /// `-Ω k_d (Σᵢ ε̇ᵢ ∇²εᵢ)⁺` [SBO18 §3.4] into the matrix (default
    /// `true`; for stretch the exact `-Ω k_d ε̇ ∇²ε` while the step uses
    /// exact Hessians, see [`stretch::dissipation_over_step`]); `false`
    /// leaves it out and skips its per-element
    /// eigen-decomposition ([`weft_potentials::element::dissipation_with_clamp`]
    /// says why that is consistent). Forces and the converged step do not
    /// depend on it. Set from [`crate::Settings::dissipation_position_jacobian`].
    pub dissipation_position_jacobian: bool,
    /// Colliders and self-collision.
    pub contact: ContactModel,
    /// Seam ties (fixed at construction: they are part of the pattern).
    ties: Vec<Tie>,
    /// Stiffness of every seam tie (N/m); 0 disables them.
    pub tie_stiffness: f64,
    /// Damping coefficient of every seam tie (N·s/m), the dissipation
    /// potential `½ c |ε̇|²` of the tie strain.
    pub tie_damping: f64,
    /// Mass-proportional drag `f = -drag · M q̇` (1/s), default 0. Not a
    /// physical damping model (it damps rigid motion, which the strain-rate
    /// potentials deliberately leave alone): a numerical aid for quasi-static
    /// phases such as sewing a garment, where only the end state matters.
    pub drag: f64,
    /// Attachment springs, each with its own stiffness ([`Attachment`]).
    /// Default empty.
    pub attachments: Vec<Attachment>,
    tie_blocks: Vec<[u32; 6]>,
    /// Time at the end of the step being assembled (s), for moving colliders.
    pub time: f64,
    node_radius: Vec<f64>,
    node_ids: Vec<u32>,
    /// Reused buffer for `q = q_n + h v`.
    q_buf: Vec<f64>,
    /// The system matrix (pattern fixed, values rewritten every assembly).
    pub matrix: BlockSparse,
    /// Scatter maps of the elements' stored blocks ([`element_blocks`]):
    /// 3 entries per segment, 6 per bending and shear element.
    seg_blocks: Vec<[u32; 3]>,
    /// The contact edges ([`Assembler::contact_edges`]) and their scatter maps.
    contact_edges: Vec<[usize; 2]>,
    edge_blocks: Vec<[u32; 3]>,
    bend_blocks: Vec<[u32; 6]>,
    shear_blocks: Vec<[u32; 6]>,
    seg_colours: Vec<Vec<u32>>,
    bend_colours: Vec<Vec<u32>>,
    shear_colours: Vec<Vec<u32>>,
    /// The membrane triangles' and hinges' elements (one per
    /// `fabric.elements.triangles` / `hinges` entry), scatter maps and
    /// colourings.
    membranes: Vec<Stvk>,
    hinges: Vec<Hinge>,
    tri_blocks: Vec<[u32; 6]>,
    hinge_blocks: Vec<[u32; 10]>,
    tri_colours: Vec<Vec<u32>>,
    hinge_colours: Vec<Vec<u32>>,
    /// Position of every node in its warp and weft yarn's node list
    /// (`u32::MAX` off that family), for the anchor update.
    yarn_index: Vec<[u32; 2]>,
}

/// Colour size from which the membrane triangles and hinges, microseconds
/// each, are evaluated in parallel.
const COSTLY_ELEMENTS_PARALLEL: usize = 64;

/// Friction normal force floor (N) used for anchors (weft-potentials default).
const NORMAL_FORCE_FLOOR: f64 = friction::MIN_NORMAL_FORCE;

impl Assembler {
    /// Builds the pattern, scatter maps, colourings and per-element
    /// parameters for `fabric` under gravity `gravity` (m/s²).
    pub fn new(fabric: Fabric, gravity: Vector3<f64>) -> Self {
        Self::with_ties(fabric, gravity, Vec::new())
    }

    /// As [`Assembler::new`], with seam `ties` (their node pairs join the
    /// matrix pattern; stiffness and damping start at zero).
    ///
    /// # Panics
    /// If a tie names a node outside the fabric, or a membrane triangle or
    /// hinge is degenerate or has invalid moduli (`weft-shell` validates
    /// them when it builds the fabric).
    pub fn with_ties(fabric: Fabric, gravity: Vector3<f64>, ties: Vec<Tie>) -> Self {
        let n = fabric.node_count();
        let el = &fabric.elements;
        let mut pairs = Vec::new();
        for t in &ties {
            assert!(
                t.node < n && t.other.iter().all(|&o| o < n),
                "seam tie {t:?} names a node outside the fabric ({n} nodes)"
            );
            pairs.extend([
                (t.node, t.other[0]),
                (t.node, t.other[1]),
                (t.other[0], t.other[1]),
            ]);
        }
        for s in &el.segments {
            pairs.push((s.a, s.b));
        }
        for b in &el.bending {
            pairs.extend([(b.center, b.next), (b.center, b.prev), (b.next, b.prev)]);
        }
        for x in &el.shear {
            pairs.extend([
                (x.crossing, x.warp_neighbor),
                (x.crossing, x.weft_neighbor),
                (x.warp_neighbor, x.weft_neighbor),
            ]);
        }
        for t in &el.triangles {
            let [a, b, c] = t.nodes;
            pairs.extend([(a, b), (a, c), (b, c)]);
        }
        for hg in &el.hinges {
            let ns = hg.nodes;
            for i in 0..4 {
                for j in i + 1..4 {
                    pairs.push((ns[i], ns[j]));
                }
            }
        }
        let matrix = BlockSparse::from_pairs(n, pairs);
        assert!(
            matrix.nnz_blocks() <= BLOCK_INDEX as usize,
            "{} matrix blocks exceed the scatter maps' 30-bit indices",
            matrix.nnz_blocks()
        );
        let blocks2 = |ns: [usize; 2]| -> [u32; 3] { element_blocks(&matrix, &ns) };
        let blocks3 = |ns: [usize; 3]| -> [u32; 6] { element_blocks(&matrix, &ns) };
        let seg_blocks = el.segments.iter().map(|s| blocks2([s.a, s.b])).collect();
        let contact_edges = contact_edges(el);
        let edge_blocks = contact_edges.iter().map(|&e| blocks2(e)).collect();
        let tie_blocks = ties
            .iter()
            .map(|t| blocks3([t.node, t.other[0], t.other[1]]))
            .collect();
        let bend_blocks = el
            .bending
            .iter()
            .map(|b| blocks3([b.center, b.next, b.prev]))
            .collect();
        let shear_blocks = el
            .shear
            .iter()
            .map(|x| blocks3([x.crossing, x.warp_neighbor, x.weft_neighbor]))
            .collect();
        let tri_blocks = el
            .triangles
            .iter()
            .map(|t| element_blocks(&matrix, &t.nodes))
            .collect();
        let hinge_blocks = el
            .hinges
            .iter()
            .map(|hg| element_blocks(&matrix, &hg.nodes))
            .collect();
        let membranes = el
            .triangles
            .iter()
            .enumerate()
            .map(|(i, t)| {
                Stvk::new(t.rest, &t.stiffness.matrix(), &t.damping.matrix()).unwrap_or_else(|| {
                    panic!("membrane triangle {i} ({t:?}) is degenerate or has invalid moduli")
                })
            })
            .collect();
        let hinges = el
            .hinges
            .iter()
            .enumerate()
            .map(|(i, hg)| {
                Hinge::new(hg.rest, hg.rigidity)
                    .unwrap_or_else(|e| panic!("shell hinge {i} ({hg:?}): {e}"))
            })
            .collect();
        let tri_colours =
            crate::par::greedy_colouring(el.triangles.len(), n, |e| el.triangles[e].nodes.to_vec());
        let hinge_colours =
            crate::par::greedy_colouring(el.hinges.len(), n, |e| el.hinges[e].nodes.to_vec());
        let seg_colours = crate::par::greedy_colouring(el.segments.len(), n, |e| {
            vec![el.segments[e].a, el.segments[e].b]
        });
        let bend_colours = crate::par::greedy_colouring(el.bending.len(), n, |e| {
            let b = &el.bending[e];
            vec![b.center, b.next, b.prev]
        });
        let shear_colours = crate::par::greedy_colouring(el.shear.len(), n, |e| {
            let x = &el.shear[e];
            vec![x.crossing, x.warp_neighbor, x.weft_neighbor]
        });
        let params: Vec<MaterialParams> = fabric
            .materials
            .iter()
            .map(|m| MaterialParams {
                k_s: m.stretch_stiffness,
                k_b: m.bending_stiffness,
                k_x: m.shear_stiffness,
                k_c: m.contact_stiffness,
                k_f: m.friction.anchor_stiffness,
                mu: m.friction.mu,
                thread_spacing: m.friction.thread_spacing,
                radius: m.radius,
                rho_l: m.linear_density(),
                kd: m.strain_rate_coefficients(),
                rayleigh: match m.damping {
                    Damping::Rayleigh { alpha, beta } => Some((alpha, beta)),
                    _ => None,
                },
            })
            .collect();
        let mut yarn_index = vec![[u32::MAX; 2]; n];
        for yarn in &fabric.yarns {
            for (i, &node) in yarn.nodes.iter().enumerate() {
                yarn_index[node][yarn.family.index()] = i as u32;
            }
        }
        let node_radius = (0..n)
            .map(|i| {
                fabric.node_yarns[i][0]
                    .or(fabric.node_yarns[i][1])
                    .map_or(0.0, |y| fabric.materials[fabric.yarns[y].material].radius)
            })
            .collect();
        Self {
            fabric,
            params,
            gravity,
            bending_threshold: bending::DEFAULT_THRESHOLD,
            exact_hessians: false,
            dissipation_position_jacobian: true,
            contact: ContactModel::default(),
            ties,
            tie_stiffness: 0.0,
            tie_damping: 0.0,
            drag: 0.0,
            attachments: Vec::new(),
            tie_blocks,
            time: 0.0,
            node_radius,
            node_ids: (0..n as u32).collect(),
            q_buf: Vec::new(),
            matrix,
            seg_blocks,
            contact_edges,
            edge_blocks,
            bend_blocks,
            shear_blocks,
            seg_colours,
            bend_colours,
            shear_colours,
            membranes,
            hinges,
            tri_blocks,
            hinge_blocks,
            tri_colours,
            hinge_colours,
            yarn_index,
        }
    }

    /// Number of generalised coordinates (`5 n`).
    pub fn dofs(&self) -> usize {
        B * self.fabric.node_count()
    }

    /// The seam ties of the pattern (empty without seams).
    pub fn ties(&self) -> &[Tie] {
        &self.ties
    }

    /// The node pairs whose midpoints segment contact keeps out of the
    /// colliders ([`ContactModel::segments`]): every yarn segment
    /// (`fabric.elements.segments`, in order), then every edge of a
    /// membrane triangle that is not a yarn segment, once each.
    pub fn contact_edges(&self) -> &[[usize; 2]] {
        &self.contact_edges
    }

    /// The greedy colouring of the stretch segments (`fabric.elements.segments`):
    /// one list of segment indices per colour, no two segments of a colour
    /// sharing a node. The GPU backend launches the same colours.
    pub fn segment_colours(&self) -> &[Vec<u32>] {
        &self.seg_colours
    }

    /// The greedy colouring of the bending elements (`fabric.elements.bending`),
    /// as [`Assembler::segment_colours`].
    pub fn bending_colours(&self) -> &[Vec<u32>] {
        &self.bend_colours
    }

    /// The greedy colouring of the shear elements (`fabric.elements.shear`),
    /// as [`Assembler::segment_colours`].
    pub fn shear_colours(&self) -> &[Vec<u32>] {
        &self.shear_colours
    }

    /// The greedy colouring of the membrane triangles
    /// (`fabric.elements.triangles`), as [`Assembler::segment_colours`].
    pub fn triangle_colours(&self) -> &[Vec<u32>] {
        &self.tri_colours
    }

    /// The greedy colouring of the discrete-shell hinges
    /// (`fabric.elements.hinges`), as [`Assembler::segment_colours`].
    pub fn hinge_colours(&self) -> &[Vec<u32>] {
        &self.hinge_colours
    }

    /// The StVK elements of the membrane triangles, one per
    /// `fabric.elements.triangles` entry (built once from their rest shapes
    /// and moduli).
    pub fn membranes(&self) -> &[Stvk] {
        &self.membranes
    }

    /// The discrete-shell hinge elements, one per `fabric.elements.hinges`
    /// entry.
    pub fn shell_hinges(&self) -> &[Hinge] {
        &self.hinges
    }

    /// Assembles the residual `R = M(q_n)(v - v_n) - h f(q_n + h v, v)` into
    /// `residual` (length `5 n`, N·s; fixed DOFs not masked) and, if
    /// `with_matrix`, the system matrix into [`Assembler::matrix`].
    /// `anchors` are the friction anchor positions (m), one per
    /// `fabric.elements.anchors` entry. Returns the energies at
    /// `(q_n + h v, v)` (kinetic with `M(q_n)`) and the largest stretch strain.
    #[allow(clippy::too_many_arguments)]
    pub fn assemble(
        &mut self,
        q_n: &[f64],
        v_n: &[f64],
        v: &[f64],
        h: f64,
        anchors: &[f64],
        residual: &mut [f64],
        with_matrix: bool,
    ) -> (Energies, StrainPeak) {
        // q = q_n + h v in a buffer kept across calls (no allocation per
        // assembly); taken out of `self` while the element loops borrow it.
        let mut q = std::mem::take(&mut self.q_buf);
        q.resize(q_n.len(), 0.0);
        update(&mut q, |i, _| q_n[i] + h * v[i]);
        update(residual, |_, _| 0.0);
        if with_matrix {
            self.matrix.set_zero();
        }
        let vals = Shared(self.matrix.values.as_mut_ptr());
        let res = Shared(residual.as_mut_ptr());
        let f = &self.fabric;
        let el = &f.elements;
        let params = &self.params;
        let g = self.gravity;
        let threshold = self.bending_threshold;
        let exact = self.exact_hessians;
        let dx = self.dissipation_position_jacobian && with_matrix;
        // Bending, shear, triangles and hinges, whose clamps are
        // eigenproblems, skip them when no matrix is built (same energies
        // and forces, bit for bit).
        let mode = match (with_matrix, exact) {
            (false, _) => Hessian::Skip,
            (true, true) => Hessian::Exact,
            (true, false) => Hessian::Projected,
        };
        let drag = self.drag;

        // Segments: mass, inertia, stretch, contact, gravity.
        let mut total = Energies::default();
        let mut peak = StrainPeak::default();
        for colour in &self.seg_colours {
            let (e, p) = map_reduce(
                colour,
                |&ei| {
                    let s = &el.segments[ei as usize];
                    let mp = &params[s.material];
                    let slot = s.family.slot();
                    let map = seg_map(slot);
                    let gq = |x: &[f64]| -> SVector<f64, 8> { gather(x, &[s.a, s.b], &map) };
                    let (ve, qne, vne) = (gq(v), gq(q_n), gq(v_n));
                    // Relative coordinates for the translation-invariant
                    // terms (see `gather_relative`); gravity's energy and
                    // arc-length force need absolute positions.
                    let qe = gather_relative(q_n, v, h, &[s.a, s.b], &map);
                    let mut en = Energies::default();
                    let mut fe = SVector::<f64, 8>::zeros();
                    let mut ae = SMatrix::<f64, 8, 8>::zeros();
                    // Mass at q_n: R += M (v - v_n), A += M.
                    let m = inertia::mass_matrix(mp.rho_l, &qne);
                    let mut re = m * (ve - vne);
                    ae += m;
                    en.kinetic += 0.5 * ve.dot(&(m * ve));
                    if drag > 0.0 {
                        let fd = m * ve * drag;
                        re += fd * h;
                        ae += m * (h * drag);
                        en.dissipation_power += ve.dot(&fd);
                    }
                    // Euler-Lagrange inertia terms, explicit at (q_n, v_n).
                    fe += inertia::inertia_force(mp.rho_l, &qne, &vne);
                    // Stretch.
                    let st = stretch::strain(&qe);
                    let sm = stretch::measure(&qe);
                    // PSD Hessian approximation for the matrix (projected
                    // Newton), the exact one while the step uses exact
                    // Hessians.
                    let ev = if exact {
                        elastic(mp.k_s, &st, &sm)
                    } else {
                        elastic_projected(mp.k_s, &st, &sm, |e| {
                            stretch::clamped_strain_hessian(&qe, e[0])
                        })
                    };
                    en.elastic += ev.energy;
                    fe -= ev.gradient;
                    ae += ev.hessian * (h * h);
                    if mp.kd.stretch > 0.0 {
                        // The step's strain increment over h: the exact
                        // symmetric Jacobian (stretch::dissipation_over_step).
                        let qs = gather_relative(q_n, v, 0.0, &[s.a, s.b], &map);
                        let jac = if dx { mode } else { Hessian::Skip };
                        let d =
                            stretch::dissipation_over_step(mp.kd.stretch, &qe, &qs, &ve, h, jac);
                        fe += d.force;
                        ae -= d.velocity_jacobian * h + d.position_jacobian * (h * h);
                        en.dissipation_power += 2.0 * d.potential;
                    }
                    if let Some((alpha, beta)) = mp.rayleigh {
                        // K⁺, the PSD projection: Rayleigh damping with the
                        // exact K of a compressed segment would add energy.
                        let k_plus = if exact {
                            elastic_projected(mp.k_s, &st, &sm, |e| {
                                stretch::clamped_strain_hessian(&qe, e[0])
                            })
                            .hessian
                        } else {
                            ev.hessian
                        };
                        let c = m * alpha + k_plus * beta;
                        let fd = c * ve;
                        fe -= fd;
                        ae += c * h;
                        en.dissipation_power += ve.dot(&fd);
                    }
                    // Parallel-yarn contact on (s_a, s_b).
                    if mp.k_c > 0.0 {
                        let qc = SVector::from([qe[3], qe[7]]);
                        let cs = contact::strain(&qc, 2.0 * mp.radius, s.rest_spacing);
                        let cm = contact::measure(s.rest_spacing);
                        let ec = elastic(mp.k_c, &cs, &cm);
                        en.elastic += ec.energy;
                        let mut fc = -ec.gradient;
                        let mut ac = ec.hessian * (h * h);
                        if mp.kd.contact > 0.0 {
                            let vc = SVector::from([ve[3], ve[7]]);
                            let d = weft_potentials::dissipation(mp.kd.contact, &cs, &cm, &vc);
                            fc += d.force;
                            ac -= d.velocity_jacobian * h + d.position_jacobian * (h * h);
                            en.dissipation_power += 2.0 * d.potential;
                        }
                        for (i, li) in [3usize, 7].into_iter().enumerate() {
                            fe[li] += fc[i];
                            for (j, lj) in [3usize, 7].into_iter().enumerate() {
                                ae[(li, lj)] += ac[(i, j)];
                            }
                        }
                    }
                    // Gravity.
                    let gv = gravity::potential(&gq(&q), mp.rho_l, &g);
                    en.gravity += gv.energy;
                    fe -= gv.gradient;
                    ae += gv.hessian * (h * h);
                    re -= fe * h;
                    // SAFETY: colouring — no other element of this colour
                    // touches nodes a or b.
                    unsafe {
                        scatter_vec(res.ptr(), &[s.a, s.b], &map, &re);
                        if with_matrix {
                            scatter_mat::<8, 2>(
                                vals.ptr(),
                                &self.seg_blocks[ei as usize],
                                &map,
                                &ae,
                            );
                        }
                    }
                    (
                        en,
                        StrainPeak {
                            value: st.value[0].abs(),
                            segment: ei as usize,
                        },
                    )
                },
                || (Energies::default(), StrainPeak::default()),
                |a, b| (a.0 + b.0, if b.1.value > a.1.value { b.1 } else { a.1 }),
            );
            total = total + e;
            if p.value > peak.value {
                peak = p;
            }
        }

        // Bending.
        for colour in &self.bend_colours {
            let e = map_reduce(
                colour,
                |&ei| {
                    let b = &el.bending[ei as usize];
                    let mp = &params[b.material];
                    let map = bend_map(b.family.slot());
                    let nodes = [b.center, b.next, b.prev];
                    let qe: SVector<f64, 12> = gather_relative(q_n, v, h, &nodes, &map);
                    let ve: SVector<f64, 12> = gather(v, &nodes, &map);
                    // The strain chosen at the step's start holds over the
                    // step (bending::step_threshold): the residual is smooth
                    // in v across the switch angle.
                    let qs: SVector<f64, 12> = gather_relative(q_n, v, 0.0, &nodes, &map);
                    let threshold = bending::step_threshold(&qs, threshold);
                    // One strain evaluation for the elastic and the
                    // dissipative terms.
                    let (ev, d) = bending::elastic_and_dissipation(
                        mp.k_b,
                        mp.kd.bending,
                        &qe,
                        &ve,
                        threshold,
                        mode,
                        dx,
                    );
                    let rayleigh = mp.rayleigh.map(|(_, beta)| {
                        let k_plus = if mode != Hessian::Projected {
                            bending::energy_projected(mp.k_b, &qe, threshold).hessian
                        } else {
                            ev.hessian
                        };
                        (beta, k_plus)
                    });
                    let damping = d.as_ref().map(|d| d.terms());
                    let (fe, ae, en) = local_terms(&ev, damping, rayleigh, &ve, h, with_matrix);
                    let re = -fe * h;
                    // SAFETY: colouring, as above.
                    unsafe {
                        scatter_vec(res.ptr(), &nodes, &map, &re);
                        if with_matrix {
                            scatter_mat::<12, 3>(
                                vals.ptr(),
                                &self.bend_blocks[ei as usize],
                                &map,
                                &ae,
                            );
                        }
                    }
                    en
                },
                Energies::default,
                |a, b| a + b,
            );
            total = total + e;
        }

        // Crossing shear (positions only).
        for colour in &self.shear_colours {
            let e = map_reduce(
                colour,
                |&ei| {
                    let x = &el.shear[ei as usize];
                    let mp = &params[x.material];
                    let sh = shear_params(mp, x.rest_spacing);
                    let map = shear_map();
                    let nodes = [x.crossing, x.warp_neighbor, x.weft_neighbor];
                    let qe: SVector<f64, 9> = gather_relative(q_n, v, h, &nodes, &map);
                    let ve: SVector<f64, 9> = gather(v, &nodes, &map);
                    if sh.k == 0.0 && sh.k_d == 0.0 {
                        return Energies::default();
                    }
                    // The strain chosen at the step's start holds over the
                    // step (shear::Shear::over_step), as for bending.
                    let qs: SVector<f64, 9> = gather_relative(q_n, v, 0.0, &nodes, &map);
                    let sh = sh.over_step(&qs);
                    // One strain evaluation for the elastic and the
                    // dissipative terms.
                    let (ev, d) = sh.elastic_and_dissipation(&qe, &ve, mode, dx);
                    let rayleigh = mp.rayleigh.map(|(_, beta)| {
                        let k_plus = if mode != Hessian::Projected {
                            sh.elastic_projected(&qe).hessian
                        } else {
                            ev.hessian
                        };
                        (beta, k_plus)
                    });
                    let damping = d.as_ref().map(|d| d.terms());
                    let (fe, ae, en) = local_terms(&ev, damping, rayleigh, &ve, h, with_matrix);
                    let re = -fe * h;
                    // SAFETY: colouring, as above.
                    unsafe {
                        scatter_vec(res.ptr(), &nodes, &map, &re);
                        if with_matrix {
                            scatter_mat::<9, 3>(
                                vals.ptr(),
                                &self.shear_blocks[ei as usize],
                                &map,
                                &ae,
                            );
                        }
                    }
                    en
                },
                Energies::default,
                |a, b| a + b,
            );
            total = total + e;
        }

        // Membrane triangles (positions only).
        for colour in &self.tri_colours {
            let e = map_reduce_from(
                COSTLY_ELEMENTS_PARALLEL,
                colour,
                |&ei| {
                    let t = &el.triangles[ei as usize];
                    let st = &self.membranes[ei as usize];
                    let map = shear_map();
                    let qe: SVector<f64, 9> = gather_relative(q_n, v, h, &t.nodes, &map);
                    let ve: SVector<f64, 9> = gather(v, &t.nodes, &map);
                    let (ev, dissipation) = st.elastic_and_dissipation(&qe, &ve, mode, dx);
                    // Rayleigh's force needs K⁺ with and without the matrix.
                    let rayleigh = (t.rayleigh_beta > 0.0).then(|| {
                        let k_plus = if mode == Hessian::Projected {
                            ev.hessian
                        } else {
                            st.elastic_projected(&qe).hessian
                        };
                        (t.rayleigh_beta, k_plus)
                    });
                    let zero = SMatrix::zeros();
                    let damping = dissipation.as_ref().map(|d| DissipationTerms {
                        position_jacobian: if dx { &d.position_jacobian } else { &zero },
                        ..d.terms()
                    });
                    let (fe, ae, en) = local_terms(&ev, damping, rayleigh, &ve, h, with_matrix);
                    let re = -fe * h;
                    // SAFETY: colouring, as above.
                    unsafe {
                        scatter_vec(res.ptr(), &t.nodes, &map, &re);
                        if with_matrix {
                            scatter_mat::<9, 3>(
                                vals.ptr(),
                                &self.tri_blocks[ei as usize],
                                &map,
                                &ae,
                            );
                        }
                    }
                    en
                },
                Energies::default,
                |a, b| a + b,
            );
            total = total + e;
        }

        // Discrete-shell hinges (positions only).
        for colour in &self.hinge_colours {
            let e = map_reduce_from(
                COSTLY_ELEMENTS_PARALLEL,
                colour,
                |&ei| {
                    let hg = &el.hinges[ei as usize];
                    let hinge = &self.hinges[ei as usize];
                    let map: [(usize, usize); 12] = std::array::from_fn(|i| (i / 3, i % 3));
                    let qe: SVector<f64, 12> = gather_relative(q_n, v, h, &hg.nodes, &map);
                    let ve: SVector<f64, 12> = gather(v, &hg.nodes, &map);
                    let (ev, dissipation) =
                        hinge.elastic_and_dissipation(hg.damping, &qe, &ve, mode, dx);
                    let zero = SMatrix::zeros();
                    let damping = dissipation.as_ref().map(|d| DissipationTerms {
                        position_jacobian: if dx { &d.position_jacobian } else { &zero },
                        ..d.terms()
                    });
                    let (fe, ae, en) = local_terms(&ev, damping, None, &ve, h, with_matrix);
                    let re = -fe * h;
                    // SAFETY: colouring, as above.
                    unsafe {
                        scatter_vec(res.ptr(), &hg.nodes, &map, &re);
                        if with_matrix {
                            scatter_mat::<12, 4>(
                                vals.ptr(),
                                &self.hinge_blocks[ei as usize],
                                &map,
                                &ae,
                            );
                        }
                    }
                    en
                },
                Energies::default,
                |a, b| a + b,
            );
            total = total + e;
        }

        // Friction anchors (one DOF each; anchors on one node never share a
        // slot, and this loop is serial: it is O(n) and cheap).
        for (k, an) in el.anchors.iter().enumerate() {
            let mp = &params[an.material];
            if mp.k_f == 0.0 {
                continue;
            }
            let d = B * an.node + an.family.slot();
            // `q_n - anchor` first: both are large, their difference small.
            let stretch_ = (q_n[d] - anchors[k]) + h * v[d];
            total.elastic += 0.5 * mp.k_f * stretch_ * stretch_;
            residual[d] += h * mp.k_f * stretch_;
            if with_matrix {
                let blk = &mut self.matrix.values[self.matrix.diag[an.node]];
                let s = an.family.slot();
                blk[s][s] += h * h * mp.k_f;
            }
        }

        // Seam ties (serial: ties of one seam share nodes; O(ties)).
        if self.tie_stiffness > 0.0 || self.tie_damping > 0.0 {
            let map = shear_map();
            let measure = seam::measure();
            for (tie, blocks) in self.ties.iter().zip(&self.tie_blocks) {
                let nodes = [tie.node, tie.other[0], tie.other[1]];
                let qe: SVector<f64, 9> = gather_relative(q_n, v, h, &nodes, &map);
                let ve: SVector<f64, 9> = gather(v, &nodes, &map);
                let st = seam::strain(&qe, tie.t);
                let ev = elastic(self.tie_stiffness, &st, &measure);
                total.elastic += ev.energy;
                let mut fe = -ev.gradient;
                let mut ae = ev.hessian * (h * h);
                if self.tie_damping > 0.0 {
                    let d = weft_potentials::dissipation(self.tie_damping, &st, &measure, &ve);
                    fe += d.force;
                    ae -= d.velocity_jacobian * h;
                    total.dissipation_power += 2.0 * d.potential;
                }
                let re = -fe * h;
                // SAFETY: serial loop; the pointers cover the residual and
                // the matrix values, and the block indices were built from
                // the pattern.
                unsafe {
                    scatter_vec(res.ptr(), &nodes, &map, &re);
                    if with_matrix {
                        scatter_mat::<9, 3>(vals.ptr(), blocks, &map, &ae);
                    }
                }
            }
        }

        // Attachment springs (serial; O(attachments)), node-diagonal blocks.
        for &Attachment {
            node,
            point: p,
            stiffness: k,
        } in &self.attachments
        {
            let o = B * node;
            let d = Vector3::from_fn(|r, _| (q_n[o + r] - p[r]) + h * v[o + r]);
            total.elastic += 0.5 * k * d.norm_squared();
            for r in 0..3 {
                residual[o + r] += h * k * d[r];
                if with_matrix {
                    self.matrix.values[self.matrix.diag[node]][r][r] += h * h * k;
                }
            }
        }

        // Colliders: penalty contact and Coulomb friction per node (each node
        // writes only its own entries, so nodes run in parallel).
        if !self.contact.colliders.is_empty() {
            let colliders = &self.contact.colliders;
            let planes = self.contact.planes.as_ref();
            let radius = &self.node_radius;
            let t = self.time;
            let diag = &self.matrix.diag;
            let e = map_reduce(
                &self.node_ids,
                |&i| {
                    let i = i as usize;
                    let o = B * i;
                    let x = Vector3::new(q[o], q[o + 1], q[o + 2]);
                    let xd = Vector3::new(v[o], v[o + 1], v[o + 2]);
                    let mut en = Energies::default();
                    let add = |nc: NodeContact| {
                        en.elastic += nc.penalty.energy;
                        en.dissipation_power -= nc.friction.force.dot(&nc.friction.slip_velocity);
                        let f = nc.friction.force - nc.penalty.gradient;
                        let a = nc.penalty.hessian * (h * h) + nc.friction.damping * h;
                        // SAFETY: only node i's entries and diagonal block.
                        unsafe {
                            for r in 0..3 {
                                *res.ptr().add(o + r) -= h * f[r];
                                if with_matrix {
                                    let blk = &mut *vals.ptr().add(diag[i]);
                                    for col in 0..3 {
                                        blk[r][col] += a[(r, col)];
                                    }
                                }
                            }
                        }
                    };
                    let x_start = Vector3::new(q_n[o], q_n[o + 1], q_n[o + 2]);
                    point_contacts(
                        colliders,
                        planes.map(|p| p.row(i)),
                        &x_start,
                        &x,
                        &xd,
                        t,
                        radius[i],
                        add,
                    );
                    en
                },
                Energies::default,
                |a, b| a + b,
            );
            total = total + e;
        }

        // Segment contact: the midpoint of every segment against the
        // colliders (serial: segments share nodes; only segments near a
        // collider do more than read their plane offsets).
        if self.contact.segments && !self.contact.colliders.is_empty() {
            let colliders = &self.contact.colliders;
            let planes = self.contact.segment_planes.as_ref();
            let t = self.time;
            let map6: [(usize, usize); 6] = std::array::from_fn(|i| (i / 3, i % 3));
            // With only plane colliders, a segment without planes has no contact.
            let planes_only =
                planes.is_some() && colliders.iter().all(|(c, _)| c.uses_tangent_planes());
            for (e, &[a, b]) in self.contact_edges.iter().enumerate() {
                let row = planes.map(|p| p.row(e));
                if planes_only && row.is_some_and(|r| r.is_empty()) {
                    continue;
                }
                let (oa, ob) = (B * a, B * b);
                let x = Vector3::from_fn(|r, _| 0.5 * (q[oa + r] + q[ob + r]));
                let xd = Vector3::from_fn(|r, _| 0.5 * (v[oa + r] + v[ob + r]));
                let mut energy = 0.0;
                let mut contacts = 0;
                // Force on the midpoint (penalty and friction) and its
                // matrix `h² ∂²V/∂p² + h D`, as for a node.
                let mut force = Vector3::zeros();
                let mut jac = nalgebra::Matrix3::zeros();
                let add = |nc: NodeContact| {
                    contacts += 1;
                    energy += nc.penalty.energy;
                    total.dissipation_power -= nc.friction.force.dot(&nc.friction.slip_velocity);
                    force += nc.friction.force - nc.penalty.gradient;
                    jac += nc.penalty.hessian * (h * h) + nc.friction.damping * h;
                };
                let x_start = Vector3::from_fn(|r, _| 0.5 * (q_n[oa + r] + q_n[ob + r]));
                let r = self.node_radius[a];
                point_contacts(colliders, row, &x_start, &x, &xd, t, r, add);
                if contacts == 0 {
                    continue;
                }
                total.elastic += energy;
                // p = (x_a + x_b)/2, ṗ = (ẋ_a + ẋ_b)/2: each node gets half
                // the force and a quarter of the matrix in each of its four
                // blocks.
                for o in [oa, ob] {
                    for r in 0..3 {
                        residual[o + r] -= h * 0.5 * force[r];
                    }
                }
                if with_matrix {
                    let a = jac * 0.25;
                    let mut ae = SMatrix::<f64, 6, 6>::zeros();
                    for (i, j) in [(0, 0), (0, 3), (3, 0), (3, 3)] {
                        ae.fixed_view_mut::<3, 3>(i, j).copy_from(&a);
                    }
                    // SAFETY: serial loop; the segment's stored blocks.
                    unsafe {
                        scatter_mat::<6, 2>(vals.ptr(), &self.edge_blocks[e], &map6, &ae);
                    }
                }
            }
        }

        // Self-collision: repulsion between the pairs found at the step start.
        // Only the node-diagonal 3x3 blocks of each pair's (PSD, Gauss-Newton)
        // Hessian enter the matrix, since the pattern is fixed; the block
        // diagonal of a PSD matrix is PSD, and Newton is inexact only there.
        if let Some(sc) = &self.contact.self_collision {
            let edge_edge = sc.contacts.iter().map(|c| (c.nodes, false));
            let vertex_face = sc.face_contacts.iter().map(|c| (c.nodes, true));
            for (nodes, face) in edge_edge.chain(vertex_face) {
                let mut q12 = SVector::<f64, 12>::zeros();
                for (k, &nd) in nodes.iter().enumerate() {
                    for r in 0..3 {
                        q12[3 * k + r] = q[B * nd + r];
                    }
                }
                let ev = if face {
                    face_repulsion(&q12, sc.d0, sc.stiffness, sc.law)
                        .map(|e| (e.energy, e.gradient, e.hessian))
                } else {
                    repulsion_with(&q12, sc.d0, sc.stiffness, sc.law)
                        .map(|e| (e.energy, e.gradient, e.hessian))
                };
                let Some((energy, gradient, hessian)) = ev else {
                    continue;
                };
                total.elastic += energy;
                for (k, &nd) in nodes.iter().enumerate() {
                    for r in 0..3 {
                        residual[B * nd + r] += h * gradient[3 * k + r];
                        if with_matrix {
                            let blk = &mut self.matrix.values[self.matrix.diag[nd]];
                            for col in 0..3 {
                                blk[r][col] += h * h * hessian[(3 * k + r, 3 * k + col)];
                            }
                        }
                    }
                }
            }
        }

        // Point masses on positions.
        for (node, &pm) in f.point_mass.iter().enumerate() {
            if pm == 0.0 {
                continue;
            }
            for c in 0..3 {
                let d = B * node + c;
                residual[d] += pm * (v[d] - v_n[d]) - h * pm * g[c];
                total.kinetic += 0.5 * pm * v[d] * v[d];
                total.gravity -= pm * g[c] * q[d];
                if with_matrix {
                    self.matrix.values[self.matrix.diag[node]][c][c] += pm;
                }
                if let Some((alpha, _)) = f.node_yarns[node][0]
                    .or(f.node_yarns[node][1])
                    .and_then(|y| params[f.yarns[y].material].rayleigh)
                {
                    residual[d] += h * alpha * pm * v[d];
                    total.dissipation_power += alpha * pm * v[d] * v[d];
                    if with_matrix {
                        self.matrix.values[self.matrix.diag[node]][c][c] += h * alpha * pm;
                    }
                }
            }
        }
        self.q_buf = q;
        (total, peak)
    }

    /// Prepares a step of size `h` (s) ending at time `t_end` (s) from
    /// coordinates `q_n` and velocities `v_n` (5 per node): sets the collider
    /// time, poses animated bodies at `t_end` ([`Collider::advance_to`]),
    /// takes the mesh colliders' tangent planes near every node (within
    /// `r + δ +` [`PLANE_REACH`] `+ 2 h |v_n| + |g| h²` of `x_n`, see
    /// [`Collider::tangent_planes`]) and refreshes the self-collision pairs
    /// (broad and narrow phase at `q_n`, pairs within `2 d0` kept so that
    /// approaching pairs are seen during the step).
    pub fn begin_step(&mut self, q_n: &[f64], v_n: &[f64], h: f64, t_end: f64) {
        self.time = t_end;
        for (c, _) in &mut self.contact.colliders {
            c.advance_to(t_end);
        }
        let colliders = &self.contact.colliders;
        if colliders.iter().any(|(c, _)| c.uses_tangent_planes()) {
            let travel = self.gravity.norm() * h * h;
            let radius = &self.node_radius;
            // Per node only the nodes near a collider allocate (`out`); the
            // query buffer is one per rayon task.
            let per_node: Vec<Vec<(usize, TangentPlane)>> = (0..radius.len())
                .into_par_iter()
                .map_init(Vec::new, |buf, i| {
                    let o = B * i;
                    let x = Vector3::new(q_n[o], q_n[o + 1], q_n[o + 2]);
                    let speed = Vector3::new(v_n[o], v_n[o + 1], v_n[o + 2]).norm();
                    let reach = |m: f64| radius[i] + m + PLANE_REACH + 2.0 * h * speed + travel;
                    planes_near(colliders, &x, t_end, reach, buf)
                })
                .collect();
            self.contact.planes = Some(NodePlanes::from_rows(per_node));
            if self.contact.segments {
                let per_segment: Vec<Vec<(usize, TangentPlane)>> = self
                    .contact_edges
                    .par_iter()
                    .map_init(Vec::new, |buf, &[a, b]| {
                        let (oa, ob) = (B * a, B * b);
                        let x = Vector3::from_fn(|r, _| 0.5 * (q_n[oa + r] + q_n[ob + r]));
                        let speed =
                            Vector3::from_fn(|r, _| 0.5 * (v_n[oa + r] + v_n[ob + r])).norm();
                        let reach = |m: f64| radius[a] + m + PLANE_REACH + 2.0 * h * speed + travel;
                        planes_near(colliders, &x, t_end, reach, buf)
                    })
                    .collect();
                self.contact.segment_planes = Some(NodePlanes::from_rows(per_segment));
            }
        }
        if let Some(sc) = &mut self.contact.self_collision {
            let x: Vec<Vector3<f64>> = q_n
                .chunks(B)
                .map(|c| Vector3::new(c[0], c[1], c[2]))
                .collect();
            sc.contacts = sc.detector.contacts(&x);
            sc.face_contacts = sc.detector.face_contacts(&x);
            sc.start_crossings = sc.detector.crossings(&x);
            sc.step = h;
        }
    }

    /// Updates the friction anchors after an accepted step (DESIGN §2,
    /// stick/slip): the crossing's normal force is estimated from the
    /// tensions `k_s ε` of the adjacent segments and the plain-weave crimp,
    /// summed over the real crossings the model crossing stands for where
    /// the material has a thread spacing
    /// ([`friction::band_crossing_normal_force`], bands from the segments'
    /// arc-length spacings); nodes off a crossing use the floor force.
    pub fn update_anchors(&self, q: &[f64], anchors: &mut [f64]) {
        let f = &self.fabric;
        let tension = |node: usize, family: Family| -> (f64, f64, f64) {
            // Mean tension, mean chord and mean arc-length spacing (the
            // spacing of the other family's yarns) of the node's segments
            // on that yarn.
            let Some(y) = f.node_yarns[node][family.index()] else {
                return (0.0, 0.0, 0.0);
            };
            let yarn = &f.yarns[y];
            let i = self.yarn_index[node][family.index()] as usize;
            debug_assert_eq!(yarn.nodes[i], node, "node on yarn");
            let k_s = self.params[yarn.material].k_s;
            let (mut t, mut l, mut r, mut c) = (0.0, 0.0, 0.0, 0.0f64);
            for (a, b) in [(i.wrapping_sub(1), i), (i, i + 1)] {
                if a < yarn.nodes.len() && b < yarn.nodes.len() {
                    let (na, nb) = (yarn.nodes[a], yarn.nodes[b]);
                    let dx = Vector3::new(
                        q[B * nb] - q[B * na],
                        q[B * nb + 1] - q[B * na + 1],
                        q[B * nb + 2] - q[B * na + 2],
                    );
                    let du = q[B * nb + family.slot()] - q[B * na + family.slot()];
                    t += k_s * (dx.norm() / du - 1.0);
                    l += dx.norm();
                    r += du;
                    c += 1.0;
                }
            }
            (t / c.max(1.0), l / c.max(1.0), r / c.max(1.0))
        };
        for (k, an) in f.elements.anchors.iter().enumerate() {
            let mp = &self.params[an.material];
            if mp.k_f == 0.0 {
                continue;
            }
            let fn_ = if let [Some(_), Some(_)] = f.node_yarns[an.node] {
                let side = f.crimp[an.node] as f64;
                let (tw, lw, rw) = tension(an.node, Family::Warp);
                let (tf, lf, rf) = tension(an.node, Family::Weft);
                let warp = friction::YarnAtCrossing::plain(tw, side, lw.max(1e-12));
                let weft = friction::YarnAtCrossing::plain(tf, -side, lf.max(1e-12));
                // Real yarns per model yarn: the model warps lie `rf` apart
                // (the weft's arc-length spacing), the wefts `rw`.
                let bands = if mp.thread_spacing > 0.0 {
                    [rf / mp.thread_spacing, rw / mp.thread_spacing]
                } else {
                    [1.0, 1.0]
                };
                friction::band_crossing_normal_force(
                    &warp,
                    &weft,
                    bands,
                    mp.radius,
                    NORMAL_FORCE_FLOOR,
                )
            } else {
                NORMAL_FORCE_FLOOR
            };
            let s = q[B * an.node + an.family.slot()];
            anchors[k] = friction::update_anchor(s, anchors[k], mp.k_f, mp.mu, fn_);
        }
    }
}

/// Shear element parameters for a pair with rest spacing `spacing` (m),
/// with jamming from the yarn geometry (weft-potentials defaults) where the
/// geometry allows it. Built per element on the fly (tens of ns) rather than
/// stored (72 B per pair, four pairs per crossing).
fn shear_params(mp: &MaterialParams, spacing: f64) -> shear::Shear {
    let jam = shear::Jamming::from_geometry(mp.radius, spacing).ok();
    shear::Shear::new(
        mp.k_x,
        mp.kd.shear,
        spacing,
        shear::SMALL_ANGLE_THRESHOLD,
        jam,
    )
    .or_else(|_| {
        shear::Shear::new(
            mp.k_x,
            mp.kd.shear,
            spacing,
            shear::SMALL_ANGLE_THRESHOLD,
            None,
        )
    })
    .expect("validated material gives valid shear parameters")
}

/// The local force `f` (elastic + damping), system-matrix block
/// `h² K⁺ - h ∂f_d/∂q̇ - h² ∂f_d/∂q` and energies of an element with elastic
/// evaluation `ev` (its Hessian `K⁺` the PSD approximation), optional
/// strain-rate `damping`, and optional Rayleigh `(β, K⁺)` with the PSD
/// projection `K⁺` of the element's stiffness (only β acts per element:
/// the force is `-β K⁺ q̇`, its matrix term `h β K⁺`; with the exact `K`, a
/// compressed or buckled element, whose `K` has negative eigenvalues, would
/// gain energy from its damping), at velocity `ve`, step `h`. Without
/// `with_matrix` the block is zero (the force and energies are the same).
fn local_terms<const N: usize>(
    ev: &weft_potentials::ElementEval<N>,
    damping: Option<DissipationTerms<'_, N>>,
    rayleigh: Option<(f64, SMatrix<f64, N, N>)>,
    ve: &SVector<f64, N>,
    h: f64,
    with_matrix: bool,
) -> (SVector<f64, N>, SMatrix<f64, N, N>, Energies) {
    let mut en = Energies {
        elastic: ev.energy,
        ..Energies::default()
    };
    let mut fe = -ev.gradient;
    let mut ae = if with_matrix {
        ev.hessian * (h * h)
    } else {
        SMatrix::zeros()
    };
    if let Some(d) = damping {
        fe += d.force;
        if with_matrix {
            ae -= d.velocity_jacobian * h + d.position_jacobian * (h * h);
        }
        en.dissipation_power += 2.0 * d.potential;
    }
    if let Some((beta, k_plus)) = rayleigh {
        let fd = k_plus * ve * beta;
        fe -= fd;
        if with_matrix {
            ae += k_plus * (beta * h);
        }
        en.dissipation_power += ve.dot(&fd);
    }
    (fe, ae, en)
}

/// Local-to-node map of a segment: `(local node, slot)` for the 8 element
/// coordinates `[x_a, s_a, x_b, s_b]`.
fn seg_map(slot: usize) -> [(usize, usize); 8] {
    [
        (0, 0),
        (0, 1),
        (0, 2),
        (0, slot),
        (1, 0),
        (1, 1),
        (1, 2),
        (1, slot),
    ]
}

/// Local-to-node map of a bending element `[x_0, s_0, x_1, s_1, x_2, s_2]`.
fn bend_map(slot: usize) -> [(usize, usize); 12] {
    std::array::from_fn(|i| (i / 4, if i % 4 == 3 { slot } else { i % 4 }))
}

/// Local-to-node map of a shear element `[x_0, x_a, x_b]`.
fn shear_map() -> [(usize, usize); 9] {
    std::array::from_fn(|i| (i / 3, i % 3))
}

fn gather<const N: usize>(
    x: &[f64],
    nodes: &[usize],
    map: &[(usize, usize); N],
) -> SVector<f64, N> {
    SVector::from_fn(|i, _| {
        let (n, s) = map[i];
        x[B * nodes[n] + s]
    })
}

/// The element coordinates `q = q_n + h v` relative to the element's first
/// node, per DOF kind: entry `i` (node `n`, slot `s` of `map`) is
/// `(q_n[n,s] - q_n[0,s]) + h (v[n,s] - v[0,s])` (m for positions and
/// arc-length coordinates; shape `N`).
///
/// Stretch, bending, shear, contact and seam-tie terms depend on differences
/// of positions and of arc-length coordinates only, so they take these
/// instead of `q`. The difference matters for the residual's round-off
/// floor: `q_n + h v` rounds each coordinate to a unit in the last place of
/// its magnitude `|X|` (the fabric's distance from the origin), and the
/// element then sees its edge `Δx` (about the segment length `l`) with a
/// relative error `ε |X| / l`, 500x the machine epsilon for a 1 mm segment
/// 0.5 m from the origin; the stretch force's error is that times `k_s`,
/// far above the small draping forces. Newton cannot reduce `|R|` below
/// that floor. Here the differences of `q_n` are exact for neighbouring
/// nodes (Sterbenz) and `h Δv` is small, so `Δx` is rounded relative to `l`.
fn gather_relative<const N: usize>(
    q_n: &[f64],
    v: &[f64],
    h: f64,
    nodes: &[usize],
    map: &[(usize, usize); N],
) -> SVector<f64, N> {
    SVector::from_fn(|i, _| {
        let (n, s) = map[i];
        let (j, r) = (B * nodes[n] + s, B * nodes[0] + s);
        (q_n[j] - q_n[r]) + h * (v[j] - v[r])
    })
}

/// Adds `local` into the global vector at `ptr`.
///
/// # Safety
/// `ptr` must point to a vector of length `5 n` covering `nodes`, and no
/// other thread may write these entries concurrently.
unsafe fn scatter_vec<const N: usize>(
    ptr: *mut f64,
    nodes: &[usize],
    map: &[(usize, usize); N],
    local: &SVector<f64, N>,
) {
    for i in 0..N {
        let (n, s) = map[i];
        unsafe { *ptr.add(B * nodes[n] + s) += local[i] };
    }
}

/// Bits of a scatter-map entry that hold the block index.
const BLOCK_INDEX: u32 = (1 << 30) - 1;
/// Scatter-map flag of a node pair `(a, b)`, `a < b` locally: the matrix
/// stores the pair's block as `(b, a)` (node `a` comes after node `b`).
const PAIR_FLIPPED: u32 = 1 << 30;
/// Scatter-map flag of a node pair whose two local nodes are the same node
/// (a degenerate seam tie): both `(a, b)` and `(b, a)` go to that node's
/// diagonal block.
const PAIR_SAME_NODE: u32 = 1 << 31;

/// The contact edges of `el` ([`Assembler::contact_edges`]).
fn contact_edges(el: &weft_core::Elements) -> Vec<[usize; 2]> {
    let key = |a: usize, b: usize| (a.min(b), a.max(b));
    let mut seen: std::collections::HashSet<(usize, usize)> =
        el.segments.iter().map(|s| key(s.a, s.b)).collect();
    let mut edges: Vec<[usize; 2]> = el.segments.iter().map(|s| [s.a, s.b]).collect();
    for t in &el.triangles {
        let [a, b, c] = t.nodes;
        for (i, j) in [(a, b), (b, c), (c, a)] {
            if seen.insert(key(i, j)) {
                edges.push([i, j]);
            }
        }
    }
    edges
}

/// The scatter map of an element on the nodes `nodes` (`K` of them) for the
/// symmetric-mode matrix, which stores only blocks on and above the
/// diagonal. Entries (`P = K (K + 1) / 2` of them): the `K` diagonal blocks
/// `(a, a)`, then one per local node pair `(a, b)`, `a < b`, in the order
/// `(0, 1), (0, 2), …, (1, 2), …`: the index of the stored block with the
/// [`PAIR_FLIPPED`] or [`PAIR_SAME_NODE`] flag. The element matrices are
/// symmetric, so the block a pair does not store is the transpose of the
/// one it does: this map names every stored block once, in 12 bytes per
/// segment and 24 per three-node element instead of 16 and 36 for all
/// `K²` pairs.
///
/// # Panics
/// If a node pair is missing from the pattern of `matrix`.
fn element_blocks<const P: usize>(matrix: &BlockSparse, nodes: &[usize]) -> [u32; P] {
    let k = nodes.len();
    debug_assert_eq!(P, k * (k + 1) / 2);
    let index = |i: usize, j: usize| matrix.index(i, j).expect("pair in pattern") as u32;
    let mut out = [0u32; P];
    let mut t = 0;
    for &i in nodes {
        out[t] = index(i, i);
        t += 1;
    }
    for a in 0..k {
        for b in a + 1..k {
            let (i, j) = (nodes[a], nodes[b]);
            out[t] = match i.cmp(&j) {
                std::cmp::Ordering::Less => index(i, j),
                std::cmp::Ordering::Greater => index(j, i) | PAIR_FLIPPED,
                std::cmp::Ordering::Equal => index(i, i) | PAIR_SAME_NODE,
            };
            t += 1;
        }
    }
    out
}

/// Adds `local` into the blocks of the scatter map `blocks` (see
/// [`element_blocks`]): for node pair `(a, b)` the local block
/// `(a, b)` into the stored block, or `(b, a)` where the pair is flipped,
/// or both where the two nodes coincide.
///
/// `map` must list each node's local DOFs contiguously (`map[i].0 == i /
/// (N / K)`, as all the element maps here do), so the loop visits each
/// stored block once and adds its `(N/K)²` entries; the block's address is
/// computed once per node pair instead of once per entry.
///
/// # Safety
/// `ptr` must point to the matrix values, the block indices must be valid,
/// and no other thread may write these blocks concurrently.
unsafe fn scatter_mat<const N: usize, const K: usize>(
    ptr: *mut Block,
    blocks: &[u32],
    map: &[(usize, usize); N],
    local: &SMatrix<f64, N, N>,
) {
    let m = N / K;
    debug_assert!(map.iter().enumerate().all(|(i, &(n, _))| n == i / m));
    debug_assert_eq!(blocks.len(), K * (K + 1) / 2);
    // Adds the local block (a, b) into the stored block `index`.
    let add = |index: u32, a: usize, b: usize| {
        // SAFETY: a valid block index, written by this thread only.
        let block = unsafe { &mut *ptr.add((index & BLOCK_INDEX) as usize) };
        for q in 0..m {
            let j = b * m + q;
            let sj = map[j].1;
            for p in 0..m {
                let i = a * m + p;
                block[map[i].1][sj] += local[(i, j)];
            }
        }
    };
    let mut t = 0;
    for a in 0..K {
        add(blocks[t], a, a);
        t += 1;
    }
    for a in 0..K {
        for b in a + 1..K {
            let entry = blocks[t];
            t += 1;
            if entry & PAIR_SAME_NODE != 0 {
                add(entry, a, b);
                add(entry, b, a);
            } else if entry & PAIR_FLIPPED != 0 {
                add(entry, b, a);
            } else {
                add(entry, a, b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compact scatter map of [`element_blocks`] adds into each stored
    /// (upper-triangle) block exactly what a dense `5n x 5n` matrix gets
    /// from all `K²` local blocks of a symmetric element matrix: for local
    /// node orders increasing, decreasing and mixed, for a segment, and for
    /// a degenerate element with a repeated node (both orientations of that
    /// pair land on one diagonal block).
    #[test]
    fn scatter_map_adds_each_stored_block_once() {
        let n = 5;
        fn check<const N: usize, const K: usize, const P: usize>(n: usize, nodes: [usize; K]) {
            let pairs = (0..K).flat_map(|a| (0..K).map(move |b| (nodes[a], nodes[b])));
            let mut m = BlockSparse::from_pairs(n, pairs);
            // A symmetric local matrix with distinct entries.
            let local = SMatrix::<f64, N, N>::from_fn(|i, j| {
                let (a, b) = (i.min(j), i.max(j));
                1.0 + (a * N + b) as f64
            });
            let map: [(usize, usize); N] = std::array::from_fn(|i| (i / B, i % B));
            let blocks: [u32; P] = element_blocks(&m, &nodes);
            // SAFETY: the indices come from `m`'s pattern; one thread.
            unsafe { scatter_mat::<N, K>(m.values.as_mut_ptr(), &blocks, &map, &local) };
            let mut dense = vec![[0.0; B]; B * n * n];
            for i in 0..N {
                for j in 0..N {
                    let (gi, gj) = (nodes[i / B], nodes[j / B]);
                    dense[(gi * n + gj) * B + i % B][j % B] += local[(i, j)];
                }
            }
            for gi in 0..n {
                for gj in gi..n {
                    let want: Vec<[f64; B]> =
                        (0..B).map(|r| dense[(gi * n + gj) * B + r]).collect();
                    let got: Vec<[f64; B]> = match m.index(gi, gj) {
                        Some(k) => m.values[k].to_vec(),
                        None => vec![[0.0; B]; B],
                    };
                    assert_eq!(got, want, "nodes {nodes:?}: block ({gi}, {gj})");
                }
            }
        }
        check::<15, 3, 6>(n, [1, 3, 4]);
        check::<15, 3, 6>(n, [4, 3, 1]);
        check::<15, 3, 6>(n, [3, 0, 4]);
        check::<15, 3, 6>(n, [3, 1, 1]);
        check::<10, 2, 3>(n, [2, 0]);
    }
}
