//! The flat arrays the assembly kernels read, built once from a CPU
//! [`Assembler`]: element node lists, arc-length slots, materials, the
//! element-to-block scatter maps (built on the general-mode form, both
//! triangles, of the assembler's own matrix pattern, so both backends write
//! the same blocks; the CPU stores only the upper ones), the element colourings
//! (the CPU assembler's own, taken over unchanged), and the node data of colliders, anchors and
//! point masses. The layouts are those documented in
//! `kernels/weft_assembly.cu` and `kernels/weft_pcg.cu`.
//!
//! The same plan feeds the host execution of the kernels ([`crate::emulate`],
//! tested against the CPU assembler) and the device path
//! (the `cuda` module).

use crate::host::GpuCollider;
use nalgebra::Vector3;
use thiserror::Error;
use weft_core::{Damping, Fabric};
use weft_solver::bsr::BlockSparse;
use weft_solver::collide::{Collider, Shape};
use weft_solver::{Assembler, Energies};

/// Per-material constants of the kernels (`struct GpuMaterial` of
/// `kernels/weft_assembly.cu`, same layout); the CPU assembler's
/// per-material parameters.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GpuMaterial {
    /// Stretch stiffness `k_s` (N).
    pub k_s: f64,
    /// Bending stiffness `k_b` (N·m²).
    pub k_b: f64,
    /// Shear stiffness `k_x` (N).
    pub k_x: f64,
    /// Parallel-contact stiffness `k_c` (N).
    pub k_c: f64,
    /// Anchor stiffness `k_f` (N/m).
    pub k_f: f64,
    /// Coulomb coefficient of the anchors.
    pub mu: f64,
    /// Yarn radius (m).
    pub radius: f64,
    /// Linear density `ρ π R²` (kg/m).
    pub rho_l: f64,
    /// Strain-rate damping of stretch (N·s).
    pub kd_stretch: f64,
    /// Strain-rate damping of bending (N·m²·s).
    pub kd_bending: f64,
    /// Strain-rate damping of shear (N·s).
    pub kd_shear: f64,
    /// Strain-rate damping of parallel contact (N·s).
    pub kd_contact: f64,
    /// 1 when the material uses Rayleigh damping.
    pub rayleigh: i32,
    /// Padding.
    pub pad: i32,
    /// Rayleigh `α` (1/s).
    pub alpha: f64,
    /// Rayleigh `β` (s).
    pub beta: f64,
}

/// What the kernels cannot take over from a CPU assembler.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum PlanError {
    /// A triangle-mesh collider without the tangent planes of
    /// [`Assembler::begin_step`] (the kernels take a mesh only through them).
    #[error(
        "collider {0} is a triangle mesh and the assembler holds no tangent planes (call \
         Assembler::begin_step first)"
    )]
    MeshCollider(usize),
    /// An index does not fit the kernels' 32-bit indices.
    #[error("{0} exceeds the kernels' 32-bit index range")]
    TooLarge(&'static str),
}

/// One element type's colouring: element indices grouped by colour, with
/// `offsets[c]..offsets[c + 1]` the range of colour `c` in `elements`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Colouring {
    /// Element indices, colour after colour.
    pub elements: Vec<u32>,
    /// Colour ranges, length `colours + 1`.
    pub offsets: Vec<usize>,
}

impl Colouring {
    /// The element indices of colour `c`.
    pub fn colour(&self, c: usize) -> &[u32] {
        &self.elements[self.offsets[c]..self.offsets[c + 1]]
    }

    /// Number of colours.
    pub fn colours(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }
}

impl Colouring {
    /// Flattens per-colour element lists (as [`Assembler::segment_colours`]
    /// returns them) into one array with colour ranges.
    pub fn from_colours(colours: &[Vec<u32>]) -> Self {
        let mut out = Colouring {
            elements: Vec::with_capacity(colours.iter().map(Vec::len).sum()),
            offsets: vec![0],
        };
        for c in colours {
            out.elements.extend_from_slice(c);
            out.offsets.push(out.elements.len());
        }
        out
    }
}

/// The kernels' energy accumulator `en = [kinetic, elastic, gravity,
/// dissipation power]` (J, J, J, W; `energies` of `weft_assembly.cu`) as
/// [`Energies`], for both the device and the emulated path.
pub(crate) fn energies_from(en: &[f64]) -> Energies {
    Energies {
        kinetic: en[0],
        elastic: en[1],
        gravity: en[2],
        dissipation_power: en[3],
    }
}

/// "No node" (and "no material") in the plan's `u32` index arrays.
pub const NO_NODE: u32 = u32::MAX;

/// Everything the assembly and PCG kernels read that does not change during
/// a run (see the module docs). Index arrays are `u32`, slots `i32`.
#[derive(Clone, Debug, PartialEq)]
pub struct AssemblyPlan {
    /// Number of nodes `n` (vectors have `5 n` entries).
    pub nodes: usize,
    /// Per-material constants.
    pub materials: Vec<GpuMaterial>,
    /// Segment end nodes `(a, b)`, 2 per segment.
    pub seg_nodes: Vec<u32>,
    /// Arc-length slot per segment (3 warp `u`, 4 weft `v`).
    pub seg_slot: Vec<i32>,
    /// Material per segment.
    pub seg_material: Vec<u32>,
    /// Rest spacing `L` per segment (m).
    pub seg_spacing: Vec<f64>,
    /// Block indices per segment, 4 (pairs aa, ab, ba, bb).
    pub seg_blocks: Vec<u32>,
    /// Segment colouring.
    pub seg_colours: Colouring,
    /// Bending nodes `(centre, next, prev)`, 3 per element.
    pub bend_nodes: Vec<u32>,
    /// Arc-length slot per bending element.
    pub bend_slot: Vec<i32>,
    /// Material per bending element.
    pub bend_material: Vec<u32>,
    /// Block indices per bending element, 9 (node pairs row-major).
    pub bend_blocks: Vec<u32>,
    /// Bending colouring.
    pub bend_colours: Colouring,
    /// Shear nodes `(crossing, warp neighbour, weft neighbour)`, 3 each.
    pub shear_nodes: Vec<u32>,
    /// Material per shear element.
    pub shear_material: Vec<u32>,
    /// Rest spacing per shear element (m).
    pub shear_spacing: Vec<f64>,
    /// Block indices per shear element, 9.
    pub shear_blocks: Vec<u32>,
    /// Shear colouring.
    pub shear_colours: Colouring,
    /// Membrane-triangle nodes, 3 per triangle (`fabric.elements.triangles`).
    pub tri_nodes: Vec<u32>,
    /// Per triangle [`TRI_DATA`] values: the rest vectors `b_0, b_1, b_2`
    /// (6, 1/m), the rest area (m²), `Lᵀ` of the moduli (9, row-major,
    /// √(N/m)), `L_dᵀ` of the damping moduli (9, √(N·s/m); zero without
    /// strain-rate damping) and the Rayleigh `β` (s; 0 for none)
    /// (`weft_potentials::stvk::Stvk`).
    pub tri_data: Vec<f64>,
    /// Block indices per triangle, 9 (node pairs row-major).
    pub tri_blocks: Vec<u32>,
    /// Triangle colouring.
    pub tri_colours: Colouring,
    /// Hinge nodes `(x_0, x_1, x_2, x_3)`, 4 per hinge
    /// (`fabric.elements.hinges`).
    pub hinge_nodes: Vec<u32>,
    /// Per hinge [`HINGE_DATA`] values: rigidity `B` (N·m), rest angle
    /// (rad), measure `Ω`, strain-rate damping `k_d` (N·m·s; 0 for none)
    /// (`weft_potentials::hinge::Hinge`).
    pub hinge_data: Vec<f64>,
    /// Block indices per hinge, 16 (node pairs row-major).
    pub hinge_blocks: Vec<u32>,
    /// Hinge colouring.
    pub hinge_colours: Colouring,
    /// Seam-tie nodes `(yarn end, a, b)`, 3 per tie ([`Assembler::ties`]).
    pub tie_nodes: Vec<u32>,
    /// Interpolation weight `t` per tie.
    pub tie_t: Vec<f64>,
    /// Block indices per tie, 9 (node pairs row-major).
    pub tie_blocks: Vec<u32>,
    /// Tie stiffness (N/m), [`Assembler::tie_stiffness`]; refreshed from
    /// the assembler before each assembly by the step backends.
    pub tie_stiffness: f64,
    /// Tie damping (N·s/m), [`Assembler::tie_damping`]; refreshed likewise.
    pub tie_damping: f64,
    /// Anchor nodes.
    pub anchor_node: Vec<u32>,
    /// Anchor slots.
    pub anchor_slot: Vec<i32>,
    /// Anchor materials.
    pub anchor_material: Vec<u32>,
    /// Per anchor, the neighbours of its node along its warp and its weft
    /// yarn, 4 each: warp previous, warp next, weft previous, weft next
    /// (global node indices, [`NO_NODE`] where the yarn ends or the node
    /// has no yarn of that family). Precomputed here (the first position
    /// of the node on the yarn, as `Assembler::update_anchors` takes it) so
    /// that the anchor-update kernel needs no search.
    pub anchor_nbrs: Vec<u32>,
    /// Per anchor, the materials of its node's warp and weft yarns (2 each,
    /// whose `k_s` gives the yarn tensions), or [`NO_NODE`] twice when the
    /// node is not on a yarn of both families (normal force = the floor).
    pub anchor_yarn_material: Vec<u32>,
    /// Per anchor, the crimp side of its node (`fabric.crimp`, `±1`).
    pub anchor_side: Vec<f64>,
    /// The floor of the crossing normal force (N),
    /// `weft_potentials::friction::MIN_NORMAL_FORCE`.
    pub normal_force_floor: f64,
    /// Yarn radius per node (m), for collider offsets.
    pub node_radius: Vec<f64>,
    /// Lumped point mass per node (kg).
    pub point_mass: Vec<f64>,
    /// Rayleigh `α` of the node's material (1/s; 0 without Rayleigh).
    pub node_alpha: Vec<f64>,
    /// `1.0` for a free DOF, `0.0` for a fixed one (`5 n`).
    pub free: Vec<f64>,
    /// Block-row starts of the matrix, `n + 1`.
    pub row_ptr: Vec<u32>,
    /// Block columns.
    pub cols: Vec<u32>,
    /// Index of each row's diagonal block.
    pub diag: Vec<u32>,
    /// Gravitational acceleration (m/s²).
    pub gravity: [f64; 3],
    /// Small-angle switch of bending (rad).
    pub bending_threshold: f64,
    /// Small-angle switch of shear (rad).
    pub shear_threshold: f64,
    /// Put the exact elastic Hessians into the matrix instead of their PSD
    /// projections (the kernels' `exact_hessians` argument), mirroring
    /// [`Assembler::exact_hessians`]: copied from the assembler by
    /// [`AssemblyPlan::new`]; set it before each assembly as the integrator
    /// sets the assembler's (exact first, projected once the matrix is found
    /// indefinite). Residual and energies do not depend on it.
    pub exact_hessians: bool,
    /// Put the strain-rate dissipation's clamped position Jacobian into the
    /// matrix, mirroring [`Assembler::dissipation_position_jacobian`]
    /// (bit 1 of the kernels' `jacobian_flags`): copied by
    /// [`AssemblyPlan::new`] and refreshed from the assembler before each
    /// assembly, as `exact_hessians` is.
    pub dissipation_position_jacobian: bool,
    /// Mass-proportional drag (1/s), [`Assembler::drag`]: copied by
    /// [`AssemblyPlan::new`]; the step backends refresh it from the
    /// assembler before each assembly (the garment pipeline changes it
    /// between phases).
    pub drag: f64,
}

/// Values per membrane triangle in [`AssemblyPlan::tri_data`]
/// (`WEFT_TRI_DATA` of `kernels/weft_assembly.cu`).
pub const TRI_DATA: usize = 26;

/// Values per hinge in [`AssemblyPlan::hinge_data`] (`WEFT_HINGE_DATA`).
pub const HINGE_DATA: usize = 4;

/// The kernels' `jacobian_flags` argument (`kernels/weft_assembly.cu`):
/// bit 0 `exact_hessians`, bit 1 `dissipation_position_jacobian`, which an
/// assembly without the matrix leaves out (as the CPU assembler does: the
/// forces do not depend on it, its clamps are eigenproblems).
pub fn jacobian_flags(
    exact_hessians: bool,
    dissipation_position_jacobian: bool,
    with_matrix: bool,
) -> i32 {
    i32::from(exact_hessians) | i32::from(dissipation_position_jacobian && with_matrix) << 1
}

fn u32_of(x: usize, what: &'static str) -> Result<u32, PlanError> {
    u32::try_from(x).map_err(|_| PlanError::TooLarge(what))
}

impl AssemblyPlan {
    /// Builds the plan of `assembler` (its fabric, matrix pattern, gravity,
    /// bending threshold and `exact_hessians`).
    ///
    /// # Errors
    /// [`PlanError::TooLarge`] beyond 32-bit indices.
    pub fn new(assembler: &Assembler) -> Result<Self, PlanError> {
        let f: &Fabric = &assembler.fabric;
        // The device stores both triangles (its SpMV runs one thread per
        // block row without write conflicts); the CPU matrix stores the
        // upper one.
        let general: BlockSparse = assembler.matrix.general_pattern();
        let m = &general;
        let n = f.node_count();
        let el = &f.elements;
        let idx = |i: usize, j: usize| -> Result<u32, PlanError> {
            u32_of(
                m.index(i, j)
                    .expect("element node pair in the assembler's pattern"),
                "block index",
            )
        };
        let materials = f
            .materials
            .iter()
            .map(|mt| {
                let kd = mt.strain_rate_coefficients();
                let (rayleigh, alpha, beta) = match mt.damping {
                    Damping::Rayleigh { alpha, beta } => (1, alpha, beta),
                    _ => (0, 0.0, 0.0),
                };
                GpuMaterial {
                    k_s: mt.stretch_stiffness,
                    k_b: mt.bending_stiffness,
                    k_x: mt.shear_stiffness,
                    k_c: mt.contact_stiffness,
                    k_f: mt.friction.anchor_stiffness,
                    mu: mt.friction.mu,
                    radius: mt.radius,
                    rho_l: mt.linear_density(),
                    kd_stretch: kd.stretch,
                    kd_bending: kd.bending,
                    kd_shear: kd.shear,
                    kd_contact: kd.contact,
                    rayleigh,
                    pad: 0,
                    alpha,
                    beta,
                }
            })
            .collect();
        let mut p = AssemblyPlan {
            nodes: n,
            materials,
            seg_nodes: Vec::with_capacity(2 * el.segments.len()),
            seg_slot: Vec::new(),
            seg_material: Vec::new(),
            seg_spacing: Vec::new(),
            seg_blocks: Vec::new(),
            seg_colours: Colouring::from_colours(assembler.segment_colours()),
            bend_nodes: Vec::new(),
            bend_slot: Vec::new(),
            bend_material: Vec::new(),
            bend_blocks: Vec::new(),
            bend_colours: Colouring::from_colours(assembler.bending_colours()),
            shear_nodes: Vec::new(),
            shear_material: Vec::new(),
            shear_spacing: Vec::new(),
            shear_blocks: Vec::new(),
            shear_colours: Colouring::from_colours(assembler.shear_colours()),
            tri_nodes: Vec::new(),
            tri_data: Vec::with_capacity(TRI_DATA * el.triangles.len()),
            tri_blocks: Vec::new(),
            tri_colours: Colouring::from_colours(assembler.triangle_colours()),
            hinge_nodes: Vec::new(),
            hinge_data: Vec::with_capacity(HINGE_DATA * el.hinges.len()),
            hinge_blocks: Vec::new(),
            hinge_colours: Colouring::from_colours(assembler.hinge_colours()),
            tie_nodes: Vec::new(),
            tie_t: Vec::new(),
            tie_blocks: Vec::new(),
            tie_stiffness: assembler.tie_stiffness,
            tie_damping: assembler.tie_damping,
            anchor_node: Vec::new(),
            anchor_slot: Vec::new(),
            anchor_material: Vec::new(),
            anchor_nbrs: Vec::new(),
            anchor_yarn_material: Vec::new(),
            anchor_side: Vec::new(),
            normal_force_floor: weft_potentials::friction::MIN_NORMAL_FORCE,
            node_radius: (0..n)
                .map(|i| {
                    f.node_yarns[i][0]
                        .or(f.node_yarns[i][1])
                        .map_or(0.0, |y| f.materials[f.yarns[y].material].radius)
                })
                .collect(),
            point_mass: f.point_mass.clone(),
            node_alpha: (0..n)
                .map(|i| {
                    f.node_yarns[i][0]
                        .or(f.node_yarns[i][1])
                        .and_then(|y| match f.materials[f.yarns[y].material].damping {
                            Damping::Rayleigh { alpha, .. } => Some(alpha),
                            _ => None,
                        })
                        .unwrap_or(0.0)
                })
                .collect(),
            free: f
                .free
                .iter()
                .flatten()
                .map(|&b| if b { 1.0 } else { 0.0 })
                .collect(),
            row_ptr: m
                .row_ptr
                .iter()
                .map(|&x| u32_of(x, "row pointer"))
                .collect::<Result<_, _>>()?,
            cols: m.cols.clone(),
            diag: m
                .diag
                .iter()
                .map(|&x| u32_of(x, "diagonal index"))
                .collect::<Result<_, _>>()?,
            gravity: assembler.gravity.into(),
            bending_threshold: assembler.bending_threshold,
            shear_threshold: weft_potentials::shear::SMALL_ANGLE_THRESHOLD,
            exact_hessians: assembler.exact_hessians,
            dissipation_position_jacobian: assembler.dissipation_position_jacobian,
            drag: assembler.drag,
        };
        for s in &el.segments {
            p.seg_nodes
                .extend([u32_of(s.a, "node")?, u32_of(s.b, "node")?]);
            p.seg_slot.push(s.family.slot() as i32);
            p.seg_material.push(s.material as u32);
            p.seg_spacing.push(s.rest_spacing);
            for (i, j) in [(s.a, s.a), (s.a, s.b), (s.b, s.a), (s.b, s.b)] {
                p.seg_blocks.push(idx(i, j)?);
            }
        }
        for b in &el.bending {
            let ns = [b.center, b.next, b.prev];
            for &x in &ns {
                p.bend_nodes.push(u32_of(x, "node")?);
            }
            p.bend_slot.push(b.family.slot() as i32);
            p.bend_material.push(b.material as u32);
            for k in 0..9 {
                p.bend_blocks.push(idx(ns[k / 3], ns[k % 3])?);
            }
        }
        for x in &el.shear {
            let ns = [x.crossing, x.warp_neighbor, x.weft_neighbor];
            for &y in &ns {
                p.shear_nodes.push(u32_of(y, "node")?);
            }
            p.shear_material.push(x.material as u32);
            p.shear_spacing.push(x.rest_spacing);
            for k in 0..9 {
                p.shear_blocks.push(idx(ns[k / 3], ns[k % 3])?);
            }
        }
        for (t, st) in el.triangles.iter().zip(assembler.membranes()) {
            for &y in &t.nodes {
                p.tri_nodes.push(u32_of(y, "node")?);
            }
            let rest = st.rest();
            p.tri_data.extend(rest.b.iter().flat_map(|b| [b[0], b[1]]));
            p.tri_data.push(rest.area);
            // Lᵀ and L_dᵀ row-major: the column-major entries of their
            // transposes.
            p.tri_data.extend(st.stiffness_factor().transpose().iter());
            match st.damping_factor() {
                Some(m) => p.tri_data.extend(m.transpose().iter()),
                None => p.tri_data.extend([0.0; 9]),
            }
            p.tri_data.push(t.rayleigh_beta);
            for k in 0..9 {
                p.tri_blocks.push(idx(t.nodes[k / 3], t.nodes[k % 3])?);
            }
        }
        for (hg, hinge) in el.hinges.iter().zip(assembler.shell_hinges()) {
            for &y in &hg.nodes {
                p.hinge_nodes.push(u32_of(y, "node")?);
            }
            p.hinge_data.extend([
                hinge.rigidity(),
                hinge.rest_angle(),
                hinge.measure(),
                hg.damping,
            ]);
            for k in 0..16 {
                p.hinge_blocks.push(idx(hg.nodes[k / 4], hg.nodes[k % 4])?);
            }
        }
        for t in assembler.ties() {
            let ns = [t.node, t.other[0], t.other[1]];
            for &y in &ns {
                p.tie_nodes.push(u32_of(y, "node")?);
            }
            p.tie_t.push(t.t);
            for k in 0..9 {
                p.tie_blocks.push(idx(ns[k / 3], ns[k % 3])?);
            }
        }
        // First position of every node on each of its yarns (one pass over
        // the yarns instead of a search per anchor).
        let mut pos = vec![[usize::MAX; 2]; n];
        for (yi, y) in f.yarns.iter().enumerate() {
            let fam = y.family.index();
            for (i, &nd) in y.nodes.iter().enumerate() {
                if f.node_yarns[nd][fam] == Some(yi) && pos[nd][fam] == usize::MAX {
                    pos[nd][fam] = i;
                }
            }
        }
        for a in &el.anchors {
            p.anchor_node.push(u32_of(a.node, "node")?);
            p.anchor_slot.push(a.family.slot() as i32);
            p.anchor_material.push(a.material as u32);
            let yarns = f.node_yarns[a.node];
            for (fam, y) in yarns.iter().enumerate() {
                let (prev, next) = match y {
                    Some(y) if pos[a.node][fam] != usize::MAX => {
                        let nodes = &f.yarns[*y].nodes;
                        let i = pos[a.node][fam];
                        let at = |j: Option<usize>| -> Result<u32, PlanError> {
                            match j.and_then(|j| nodes.get(j)) {
                                Some(&nd) => u32_of(nd, "node"),
                                None => Ok(NO_NODE),
                            }
                        };
                        (at(i.checked_sub(1))?, at(Some(i + 1))?)
                    }
                    _ => (NO_NODE, NO_NODE),
                };
                p.anchor_nbrs.extend([prev, next]);
            }
            if let [Some(w), Some(t)] = yarns {
                p.anchor_yarn_material
                    .extend([f.yarns[w].material as u32, f.yarns[t].material as u32]);
            } else {
                p.anchor_yarn_material.extend([NO_NODE, NO_NODE]);
            }
            p.anchor_side.push(f64::from(f.crimp[a.node]));
        }
        Ok(p)
    }
}

/// The contacts of one step in the kernels' form (uploaded once per step):
/// the analytic colliders (plane, sphere, capsule), per node the tangent
/// planes of the triangle-mesh colliders, and the self-collision segment
/// and vertex–face pairs, the last two found by [`Assembler::begin_step`] at the step start.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepColliders {
    /// Plane, sphere and capsule colliders at the step's end time
    /// (`weft_assemble_colliders`).
    pub analytic: Vec<GpuCollider>,
    /// `plane_offsets[i]..plane_offsets[i + 1]` indexes node `i`'s planes
    /// (length nodes + 1; empty when there is no mesh collider).
    pub plane_offsets: Vec<u32>,
    /// Tangent planes as plane colliders (`kind` 0) in the world frame at the
    /// step's end time, each with its mesh collider's stiffness, friction,
    /// margin and rigid velocity field (`weft_assemble_planes`).
    pub planes: Vec<GpuCollider>,
    /// Self-collision pairs, 4 nodes per pair (`weft_assemble_repulsion`):
    /// the segment pairs `[p0, p1, q0, q1]`, then from pair
    /// [`StepColliders::face_from`] on the vertex–face pairs `[p, a, b, c]`
    /// of triangle-mesh cloth; empty without self-collision.
    pub pairs: Vec<u32>,
    /// Index of the first vertex–face pair in [`StepColliders::pairs`].
    pub face_from: u32,
    /// The repulsion law's kernel code ([`crate::host::law_code`]).
    pub repulsion_law: i32,
    /// Self-collision interaction distance `d0` (m).
    pub d0: f64,
    /// Self-collision stiffness `k` (N/m).
    pub repulsion_stiffness: f64,
    /// Attachment spring nodes ([`Assembler::attachments`], those of
    /// stiffness above 0).
    pub attach_nodes: Vec<u32>,
    /// Attachment points, 3 per spring (m).
    pub attach_points: Vec<f64>,
    /// Attachment stiffnesses, one per spring (N/m).
    pub attach_stiffness: Vec<f64>,
}

impl StepColliders {
    /// Whether the step has no collider and no self-collision pair.
    pub fn is_empty(&self) -> bool {
        self.analytic.is_empty()
            && self.planes.is_empty()
            && self.pairs.is_empty()
            && self.attach_nodes.is_empty()
    }
}

/// The colliders of `assembler` in the kernels' form at time `t` (s): each
/// plane, sphere or capsule moved to its world pose at `t` (exact for these
/// rigid shapes) with its rigid velocity field and margin, and the tangent
/// planes of the mesh colliders that [`Assembler::begin_step`] took
/// (`assembler.contact.planes`, local frame) moved to their world pose at
/// `t`, as [`weft_solver::collide::Collider::plane_contact`] does; and the
/// self-collision pairs of `assembler.contact.self_collision` with its `d0`
/// and stiffness; and the attachment springs of stiffness above 0, each
/// with its own.
///
/// # Errors
/// [`PlanError::MeshCollider`] for a triangle-mesh collider when the
/// assembler holds no tangent planes (`begin_step` not called yet; the CPU
/// then evaluates the exact mesh distance, which the kernels do not);
/// [`PlanError::TooLarge`] beyond 32-bit plane offsets or node indices.
pub fn colliders_at(assembler: &Assembler, t: f64) -> Result<StepColliders, PlanError> {
    let colliders = &assembler.contact.colliders;
    let mut out = StepColliders::default();
    let mut world = Vec::with_capacity(colliders.len());
    for (i, (c, margin)) in colliders.iter().enumerate() {
        let g = gpu_collider(c, *margin, t);
        if c.uses_tangent_planes() {
            if assembler.contact.planes.is_none() {
                return Err(PlanError::MeshCollider(i));
            }
        } else {
            out.analytic.push(g);
        }
        world.push(g);
    }
    if let Some(np) = &assembler.contact.planes
        && colliders.iter().any(|(c, _)| c.uses_tangent_planes())
    {
        out.plane_offsets = np
            .offsets
            .iter()
            .map(|&x| u32_of(x, "plane offset"))
            .collect::<Result<_, _>>()?;
        out.planes = np
            .planes
            .iter()
            .map(|(ci, pl)| {
                let g = &world[*ci];
                let (pt, rot) = match &colliders[*ci].0.motion {
                    None => (Vector3::zeros(), nalgebra::UnitQuaternion::identity()),
                    Some(m) => {
                        let iso = m.transform(t);
                        (iso.translation.vector, iso.rotation)
                    }
                };
                // An animated body's surface velocity at the plane adds to
                // the collider's rigid velocity field.
                GpuCollider {
                    kind: 0,
                    a: (rot * pl.point + pt).into(),
                    b: (rot * pl.normal).into(),
                    radius: 0.0,
                    lin: (Vector3::from(g.lin) + rot * pl.velocity).into(),
                    ..*g
                }
            })
            .collect();
    }
    if let Some(sc) = &assembler.contact.self_collision {
        out.d0 = sc.d0;
        out.repulsion_stiffness = sc.stiffness;
        out.repulsion_law = crate::host::law_code(sc.law);
        out.face_from = u32_of(sc.contacts.len(), "self-collision pairs")?;
        out.pairs = sc
            .contacts
            .iter()
            .map(|c| c.nodes)
            .chain(sc.face_contacts.iter().map(|c| c.nodes))
            .flatten()
            .map(|n| u32_of(n, "node"))
            .collect::<Result<_, _>>()?;
    }
    for a in assembler.attachments.iter().filter(|a| a.stiffness > 0.0) {
        out.attach_nodes.push(u32_of(a.node, "node")?);
        out.attach_points.extend_from_slice(a.point.as_slice());
        out.attach_stiffness.push(a.stiffness);
    }
    Ok(out)
}

/// The kernels' form of `c` at time `t`; for a mesh only the common fields
/// (stiffness, friction, margin, velocity field; `kind` -1).
fn gpu_collider(c: &Collider, margin: f64, t: f64) -> GpuCollider {
    let (pt, rot, lin, ang) = match &c.motion {
        None => (
            Vector3::zeros(),
            nalgebra::UnitQuaternion::identity(),
            Vector3::zeros(),
            Vector3::zeros(),
        ),
        Some(m) => {
            let iso = m.transform(t);
            (
                iso.translation.vector,
                iso.rotation,
                m.linear_velocity(t),
                m.angular_velocity(t),
            )
        }
    };
    let place = |x: &Vector3<f64>| -> [f64; 3] { (rot * x + pt).into() };
    let mut g = GpuCollider {
        stiffness: c.stiffness,
        friction: c.friction,
        friction_speed: c.friction_speed,
        margin,
        lin: lin.into(),
        ang: ang.into(),
        origin: pt.into(),
        ..GpuCollider::default()
    };
    match &c.shape {
        Shape::Plane(p) => {
            g.kind = 0;
            g.a = place(&p.point);
            g.b = (rot * p.normal.into_inner()).into();
        }
        Shape::Sphere(s) => {
            g.kind = 1;
            g.a = place(&s.center);
            g.radius = s.radius;
        }
        Shape::Capsule(s) => {
            g.kind = 2;
            g.a = place(&s.a);
            g.b = place(&s.b);
            g.radius = s.radius;
        }
        Shape::Mesh(_) => g.kind = -1,
    }
    g
}

/// The acceptance scalars of a converged step (the three numbers the device
/// backend reads back): `first_bad` is `0` when every segment keeps its
/// arc-length order, else `count - e` for the first segment `e` that does
/// not; `change` the largest `|ε - ε_ref|` over segments (the last of equal
/// maxima) at segment `segment` (`change = -1` without segments).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AcceptScalars {
    /// `count - e` of the first segment `e` with `Δs ≤ 0`, or `0`.
    pub first_bad: u32,
    /// Largest change of a stretch strain (dimensionless).
    pub change: f64,
    /// Its segment index.
    pub segment: usize,
}

impl AcceptScalars {
    /// The scalars from the kernel's `result` triple
    /// `[first_bad, change, segment]`.
    pub fn from_result(r: [f64; 3]) -> Self {
        Self {
            first_bad: r[0] as u32,
            change: r[1],
            segment: r[2] as usize,
        }
    }

    /// The first segment that lost its arc-length order, if any, of
    /// `count` segments.
    pub fn first_bad_segment(&self, count: usize) -> Option<usize> {
        (self.first_bad > 0).then(|| count - self.first_bad as usize)
    }
}
