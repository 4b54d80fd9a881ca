//! Fabric topology and generalised coordinates (DESIGN §1).
//!
//! A fabric is a set of yarns, each an ordered list of nodes. Every node has
//! the same five generalised coordinates `(x, y, z, u, v)` ([`DOFS_PER_NODE`])
//! with a per-DOF free mask, so every backend works on uniform 5x5 blocks:
//!
//! - `x` (m) is the node position, the Lagrangian part;
//! - `u` (m of rest yarn length) is the arc-length coordinate of the node
//!   along its **warp** yarn, `v` along its **weft** yarn: the Eulerian part.
//!   Yarns slide through a crossing when `u` or `v` changes.
//!
//! Node kinds:
//!
//! - a **crossing** of a warp and a weft yarn has `x`, `u`, `v` free (5 DOF);
//! - a **yarn end** has a constant arc-length coordinate along the yarn that
//!   ends there. In a woven patch the boundary nodes are the ends of the yarns
//!   that stop at the boundary, but the perpendicular boundary yarn runs
//!   *through* them, so they keep that yarn's arc-length coordinate free: a
//!   node on the `warp_start`/`warp_end` edges has `u` fixed and `v` free, a
//!   node on the `weft_start`/`weft_end` edges has `v` fixed and `u` free, the
//!   four corners have both fixed (a single free arc-length coordinate where
//!   a yarn can still slide, as DESIGN §1 allows);
//! - a **woven panel** ([`crate::WovenPanelSpec`], yarn pieces clipped to a
//!   panel outline) follows the same rule node by node: a node's `u` is free
//!   exactly when it is an interior node of its warp piece, `v` exactly when
//!   it is an interior node of its weft piece. A yarn end on the outline
//!   therefore has the arc-length coordinate of the yarn that ends there
//!   fixed; where a grid line runs along a straight stretch of the outline,
//!   the yarn on it runs *through* the ends of the perpendicular yarns and
//!   keeps its own coordinate free there (as on a patch edge). A node that
//!   lies on one yarn only (an end not on a grid point) has the other slot
//!   unused and fixed;
//! - nodes of an explicit `yarn` object lie on one yarn, which uses the `u`
//!   slot (it counts as a warp yarn); their `v` is unused and fixed. With
//!   `sliding: true` the interior nodes' `u` is free, the two ends' fixed.
//!
//! Elements are built once: segments (stretch, gravity, inertia, parallel
//! contact), bending triplets, crossing shear pairs and sliding anchors. The
//! `*_q` gather functions produce the element coordinate vectors in the
//! layouts documented by `weft-potentials`.

use crate::error::ModelError;
use crate::material::Material;
use nalgebra::{SVector, Vector3};

/// Generalised coordinates per node: `x, y, z` (m), `u`, `v` (m).
pub const DOFS_PER_NODE: usize = 5;
/// Index of `u` within a node's five coordinates.
pub const U_SLOT: usize = 3;
/// Index of `v` within a node's five coordinates.
pub const V_SLOT: usize = 4;

/// Which family a yarn belongs to. Warp yarns use the `u` slot, weft yarns the
/// `v` slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// Warp yarn (arc-length coordinate `u`).
    Warp,
    /// Weft yarn (arc-length coordinate `v`).
    Weft,
}

impl Family {
    /// The node slot of this family's arc-length coordinate ([`U_SLOT`] or
    /// [`V_SLOT`]).
    pub fn slot(self) -> usize {
        match self {
            Family::Warp => U_SLOT,
            Family::Weft => V_SLOT,
        }
    }

    /// 0 for warp, 1 for weft (index into per-family arrays).
    pub fn index(self) -> usize {
        self.slot() - U_SLOT
    }
}

/// One yarn: an ordered list of node indices (arc-length increasing).
#[derive(Clone, Debug, PartialEq)]
pub struct Yarn {
    /// Warp or weft.
    pub family: Family,
    /// Index into [`Fabric::materials`].
    pub material: usize,
    /// The scene object the yarn belongs to.
    pub object: usize,
    /// Index of the yarn within its object (warp and weft numbered separately).
    pub index_in_object: usize,
    /// Global node indices, in order of increasing arc-length coordinate.
    pub nodes: Vec<usize>,
}

impl Yarn {
    /// A human-readable name for error messages, e.g. `object 1, warp yarn 3`.
    pub fn label(&self) -> String {
        let f = match self.family {
            Family::Warp => "warp",
            Family::Weft => "weft",
        };
        format!("object {}, {f} yarn {}", self.object, self.index_in_object)
    }
}

/// A segment between consecutive nodes `a`, `b` of one yarn (`s_a < s_b`).
/// Carries stretch, gravity, inertia and parallel-yarn contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    /// First node (smaller arc-length coordinate).
    pub a: usize,
    /// Second node.
    pub b: usize,
    /// Yarn index.
    pub yarn: usize,
    /// Family of the yarn (selects the `u` or `v` slot).
    pub family: Family,
    /// Material index.
    pub material: usize,
    /// Rest spacing `L` (m): the segment's rest length at construction, used
    /// as the measure of the parallel-contact element \[CLMMO14\].
    pub rest_spacing: f64,
}

/// A bending element at `center` with its next and previous node on the same
/// yarn [SBO17 eq. 15-16].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BendingElement {
    /// Centre node 0.
    pub center: usize,
    /// Next node 1 (larger arc-length coordinate).
    pub next: usize,
    /// Previous node 2 (smaller arc-length coordinate).
    pub prev: usize,
    /// Yarn index.
    pub yarn: usize,
    /// Family (selects the `u` or `v` slot).
    pub family: Family,
    /// Material index.
    pub material: usize,
}

/// A crossing shear element: the crossing with one neighbour on its warp yarn
/// and one on its weft yarn [SBO17 eq. 22-23]. Up to four per crossing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShearElement {
    /// The crossing node.
    pub crossing: usize,
    /// A neighbour along the warp yarn.
    pub warp_neighbor: usize,
    /// A neighbour along the weft yarn.
    pub weft_neighbor: usize,
    /// Material index (of the warp yarn).
    pub material: usize,
    /// Measure `L` (m): the mean of the two adjacent rest segment lengths.
    pub rest_spacing: f64,
}

/// A sliding anchor on one free arc-length coordinate (DESIGN §2, friction).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlidingAnchor {
    /// The node.
    pub node: usize,
    /// Which coordinate (`u` for warp, `v` for weft).
    pub family: Family,
    /// Material index of the yarn sliding through the node.
    pub material: usize,
}

/// Plane-stress moduli of a membrane in its rest frame's axes (N/m for
/// stiffness, N·s/m for damping), for the Green strain written as
/// `ε = (E₀₀, E₁₁, √2 E₀₁)`: the energy (or dissipation) density is
/// `½ εᵀ C ε` with
/// `C = [[c11, c12, 0], [c12, c22, 0], [0, 0, 2 shear]]`, i.e.
/// `½ (c11 E₀₀² + 2 c12 E₀₀ E₁₁ + c22 E₁₁²) + 2 shear E₀₁²`.
///
/// The isotropic StVK density `λ/2 tr(E)² + μ tr(E²)` [SBO18 eq. 13] is
/// [`MembraneModuli::isotropic`]; a woven fabric, whose warp and weft run
/// along the rest frame's axes and whose in-plane shear rigidity is a few
/// thousandths of its tensile rigidity, is
/// [`MembraneModuli::orthotropic`] (no isotropic membrane can have that:
/// `E ≤ 4μ` in 2D).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MembraneModuli {
    /// Tensile modulus along the rest frame's first axis.
    pub c11: f64,
    /// Tensile modulus along the rest frame's second axis.
    pub c22: f64,
    /// Coupling (Poisson) modulus between the two axes.
    pub c12: f64,
    /// In-plane shear modulus: `σ₀₁ = shear · γ` with the engineering shear
    /// strain `γ = 2 E₀₁` (KES-F's `G`, shear force per width over the
    /// shear angle).
    pub shear: f64,
}

impl MembraneModuli {
    /// No stiffness (or no damping).
    pub const ZERO: Self = MembraneModuli {
        c11: 0.0,
        c22: 0.0,
        c12: 0.0,
        shear: 0.0,
    };

    /// The isotropic StVK moduli of Lamé parameters `λ, μ` [SBO18 eq. 13]:
    /// `c11 = c22 = λ + 2μ`, `c12 = λ`, `shear = μ`.
    pub fn isotropic(lambda: f64, mu: f64) -> Self {
        MembraneModuli {
            c11: lambda + 2.0 * mu,
            c22: lambda + 2.0 * mu,
            c12: lambda,
            shear: mu,
        }
    }

    /// Plane-stress orthotropic moduli from the tensile stiffnesses per
    /// width `e1`, `e2` along the two axes (N/m), the Poisson ratio `nu12`
    /// (strain along axis 2 over strain along axis 1 under a stress along
    /// axis 1; `ν₂₁ = ν₁₂ e2 / e1`) and the shear stiffness `g` (N/m):
    /// `c11 = e1 / d`, `c22 = e2 / d`, `c12 = ν₁₂ e2 / d` with
    /// `d = 1 - ν₁₂ ν₂₁`, `shear = g`.
    pub fn orthotropic(e1: f64, e2: f64, nu12: f64, g: f64) -> Self {
        let d = 1.0 - nu12 * nu12 * e2 / e1;
        MembraneModuli {
            c11: e1 / d,
            c22: e2 / d,
            c12: nu12 * e2 / d,
            shear: g,
        }
    }

    /// Every modulus times `beta` (the strain-rate damping of the
    /// Rayleigh analogy [SBO18 eq. 12], `C_d = β C`).
    pub fn scaled(self, beta: f64) -> Self {
        self.scaled_per_mode(beta, beta)
    }

    /// The tensile moduli (`c11, c22, c12`) times `stretch` and the shear
    /// modulus times `shear` (both in s): the Rayleigh analogy [SBO18
    /// eq. 12] applied per deformation mode, as the yarn model's
    /// `β_s` (stretch) and `β_b` (bending and crossing shear) are (DESIGN
    /// §2). Woven cloth's in-plane shear is its slow, soft mode, and one
    /// `β` tuned for stretch leaves it nearly undamped.
    pub fn scaled_per_mode(self, stretch: f64, shear: f64) -> Self {
        MembraneModuli {
            c11: stretch * self.c11,
            c22: stretch * self.c22,
            c12: stretch * self.c12,
            shear: shear * self.shear,
        }
    }

    /// Whether every modulus is zero (no damping).
    pub fn is_zero(&self) -> bool {
        *self == Self::ZERO
    }

    /// The larger tensile modulus, `max(c11, c22)`.
    pub fn max_tensile(&self) -> f64 {
        self.c11.max(self.c22)
    }

    /// `C` (3x3) in the basis `ε = (E₀₀, E₁₁, √2 E₀₁)` (type docs).
    pub fn matrix(&self) -> nalgebra::Matrix3<f64> {
        nalgebra::Matrix3::new(
            self.c11,
            self.c12,
            0.0,
            self.c12,
            self.c22,
            0.0,
            0.0,
            0.0,
            2.0 * self.shear,
        )
    }
}

/// A Saint-Venant–Kirchhoff membrane triangle of triangle-mesh cloth with
/// strain-rate dissipation [SBO18 §4, eq. 13-16] (the element is
/// `weft_potentials::stvk::Stvk`), isotropic or orthotropic in its rest
/// frame's axes ([`MembraneModuli`]). Its nodes carry positions only.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MembraneTriangle {
    /// The three nodes.
    pub nodes: [usize; 3],
    /// Rest positions of the nodes in the flat 2D rest frame (m); an
    /// orthotropic membrane's axes are this frame's.
    pub rest: [[f64; 2]; 3],
    /// Elastic moduli (N/m) [SBO18 eq. 13]; `C` positive definite.
    pub stiffness: MembraneModuli,
    /// Strain-rate damping moduli (N·s/m) of the dissipation potential
    /// [SBO18 eq. 15]; [`MembraneModuli::ZERO`] for none, else `C_d`
    /// positive definite. The Rayleigh analogy [SBO18 eq. 12] is
    /// `stiffness.scaled(β)`.
    pub damping: MembraneModuli,
    /// Rayleigh stiffness-proportional damping `β` (s) on the membrane,
    /// `f = -β K⁺ q̇` with the PSD-projected membrane Hessian: the baseline
    /// of [SBO18 §3.5, Fig. 3]; 0 for none.
    pub rayleigh_beta: f64,
}

/// A discrete-shell bending hinge of triangle-mesh cloth (the element is
/// `weft_potentials::hinge::Hinge`): the edge `nodes[0] nodes[1]` shared by
/// the triangles `(n₀, n₁, n₂)` and `(n₁, n₀, n₃)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShellHinge {
    /// The edge's two nodes, then the two opposite vertices.
    pub nodes: [usize; 4],
    /// Rest positions of the four nodes (m); their dihedral angle is the
    /// rest angle.
    pub rest: [[f64; 3]; 4],
    /// Bending rigidity `B` (N·m).
    pub rigidity: f64,
    /// Strain-rate damping coefficient `k_d` of the bending angle (N·m·s):
    /// the dissipation potential `½ Ω k_d θ̇²` [SBO18 eq. 12 with
    /// `k_d = β B`]; 0 for none.
    pub damping: f64,
}

/// All element lists, built once per fabric.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Elements {
    /// Segments (stretch, gravity, inertia, contact).
    pub segments: Vec<Segment>,
    /// Bending triplets.
    pub bending: Vec<BendingElement>,
    /// Crossing shear pairs.
    pub shear: Vec<ShearElement>,
    /// Sliding anchors, one per free arc-length coordinate.
    pub anchors: Vec<SlidingAnchor>,
    /// Membrane triangles of triangle-mesh cloth (empty for woven fabric).
    pub triangles: Vec<MembraneTriangle>,
    /// Discrete-shell bending hinges of triangle-mesh cloth.
    pub hinges: Vec<ShellHinge>,
}

/// Simulation state as a struct of arrays, f64, one entry per node.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Positions `x` (m).
    pub x: Vec<Vector3<f64>>,
    /// Warp arc-length coordinates `u` (m).
    pub u: Vec<f64>,
    /// Weft arc-length coordinates `v` (m).
    pub v: Vec<f64>,
    /// Velocities `ẋ` (m/s).
    pub x_dot: Vec<Vector3<f64>>,
    /// `u̇` (m/s).
    pub u_dot: Vec<f64>,
    /// `v̇` (m/s).
    pub v_dot: Vec<f64>,
    /// Friction anchor positions `ū`, one per [`Elements::anchors`] entry (m).
    pub anchors: Vec<f64>,
}

impl State {
    /// The arc-length coordinate of `node` along a yarn of `family` (m).
    #[inline]
    pub fn arc(&self, node: usize, family: Family) -> f64 {
        match family {
            Family::Warp => self.u[node],
            Family::Weft => self.v[node],
        }
    }

    /// Its rate of change (m/s).
    #[inline]
    pub fn arc_dot(&self, node: usize, family: Family) -> f64 {
        match family {
            Family::Warp => self.u_dot[node],
            Family::Weft => self.v_dot[node],
        }
    }

    /// The five generalised coordinates of a node `(x, y, z, u, v)`.
    pub fn node_q(&self, node: usize) -> [f64; DOFS_PER_NODE] {
        let x = self.x[node];
        [x.x, x.y, x.z, self.u[node], self.v[node]]
    }
}

/// What a scene object turned into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectKind {
    /// An explicit yarn.
    Yarn,
    /// A rectangular woven patch with `n_warp` warp and `n_weft` weft yarns
    /// (node `(k, l)` of warp yarn `k` and weft yarn `l` is
    /// `first_node + k * n_weft + l`, row-major over the crossing grid).
    WovenPatch {
        /// Warp yarn count.
        n_warp: usize,
        /// Weft yarn count.
        n_weft: usize,
    },
    /// A general woven panel ([`crate::WovenPanelSpec`]): yarn pieces of any
    /// length clipped to an outline; nodes numbered as the spec lists them.
    WovenPanel {
        /// Warp yarn pieces.
        warp_yarns: usize,
        /// Weft yarn pieces.
        weft_yarns: usize,
    },
    /// A triangle mesh of membrane triangles and hinges
    /// ([`MembraneTriangle`], [`ShellHinge`]): triangle-mesh cloth, whose
    /// nodes carry positions only (their `u, v` are fixed).
    TriangleMesh {
        /// Triangle count.
        triangles: usize,
        /// `Some([n_v, n_u])` for a rectangle of `n_u` vertices along its
        /// first side and `n_v` along its second, vertex `(i, j)` (`i`
        /// along the first side) at `first_node + j n_u + i`: the corner
        /// and edge selectors then pick its vertices as a woven patch's
        /// with `n_warp = n_v`, `n_weft = n_u` (same node numbering).
        /// `None` for any other mesh (vertex indices only).
        grid: Option<[usize; 2]>,
    },
}

/// Node and yarn ranges of one scene object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectInfo {
    /// Kind and grid size.
    pub kind: ObjectKind,
    /// Global index of the object's first node.
    pub first_node: usize,
    /// Number of nodes.
    pub node_count: usize,
}

/// A woven fabric (or set of yarns): topology, materials, free mask, lumped
/// point masses, element lists and the initial state.
#[derive(Clone, Debug, PartialEq)]
pub struct Fabric {
    /// Materials, referenced by index.
    pub materials: Vec<Material>,
    /// Yarns.
    pub yarns: Vec<Yarn>,
    /// Scene objects that made the nodes, in order.
    pub objects: Vec<ObjectInfo>,
    /// Per node, which of its five coordinates are free (`false`: Dirichlet).
    pub free: Vec<[bool; DOFS_PER_NODE]>,
    /// Extra lumped mass per node (kg), DESIGN §8 `point_masses`.
    pub point_mass: Vec<f64>,
    /// Per node, the warp yarn and the weft yarn through it (if any).
    pub node_yarns: Vec<[Option<usize>; 2]>,
    /// Per node, `+1` where the warp yarn passes over the weft (offset `+R`
    /// along the fabric normal), `-1` where it passes under, `0` off a weave.
    pub crimp: Vec<i8>,
    /// Element lists.
    pub elements: Elements,
    /// The initial state (rest configuration plus initial velocities).
    pub initial: State,
}

impl Fabric {
    /// The end nodes `[a, b]` of every yarn segment, in `elements.segments`
    /// order.
    pub fn segment_ends(&self) -> Vec<[usize; 2]> {
        self.elements.segments.iter().map(|s| [s.a, s.b]).collect()
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.free.len()
    }

    /// Number of generalised coordinates, `5 * nodes` (free or not).
    pub fn dof_count(&self) -> usize {
        DOFS_PER_NODE * self.node_count()
    }

    /// Number of free generalised coordinates.
    pub fn free_dof_count(&self) -> usize {
        self.free.iter().flatten().filter(|f| **f).count()
    }

    /// Lumped mass per node (kg): half the rest-length mass `ρ_l Δu` of each
    /// adjacent segment, plus the node's point mass.
    pub fn lumped_masses(&self, state: &State) -> Vec<f64> {
        let mut m = self.point_mass.clone();
        for s in &self.elements.segments {
            let rho_l = self.materials[s.material].linear_density();
            let du = state.arc(s.b, s.family) - state.arc(s.a, s.family);
            m[s.a] += 0.5 * rho_l * du;
            m[s.b] += 0.5 * rho_l * du;
        }
        m
    }

    /// Total mass (kg): `Σ ρ_l Δu` over segments plus point masses.
    pub fn total_mass(&self, state: &State) -> f64 {
        self.lumped_masses(state).iter().sum()
    }

    /// Global DOF indices of a segment in the stretch layout
    /// `[x_a (3), s_a, x_b (3), s_b]`.
    pub fn segment_dofs(&self, s: &Segment) -> [usize; 8] {
        let (a, b, k) = (s.a * DOFS_PER_NODE, s.b * DOFS_PER_NODE, s.family.slot());
        [a, a + 1, a + 2, a + k, b, b + 1, b + 2, b + k]
    }

    /// Coordinates of a segment, layout `[x_a (3), s_a, x_b (3), s_b]`
    /// (weft-potentials `stretch`, `gravity`, `inertia`).
    pub fn segment_q(&self, state: &State, s: &Segment) -> SVector<f64, 8> {
        gather_x_s(&state.x, |n| state.arc(n, s.family), [s.a, s.b])
    }

    /// Velocities of a segment in the same layout.
    pub fn segment_qdot(&self, state: &State, s: &Segment) -> SVector<f64, 8> {
        gather_x_s(&state.x_dot, |n| state.arc_dot(n, s.family), [s.a, s.b])
    }

    /// Global DOF indices of a bending element, layout
    /// `[x_0, s_0, x_1, s_1, x_2, s_2]` (centre, next, previous).
    pub fn bending_dofs(&self, e: &BendingElement) -> [usize; 12] {
        let k = e.family.slot();
        let mut out = [0; 12];
        for (i, n) in [e.center, e.next, e.prev].into_iter().enumerate() {
            let o = n * DOFS_PER_NODE;
            out[4 * i..4 * i + 4].copy_from_slice(&[o, o + 1, o + 2, o + k]);
        }
        out
    }

    /// Coordinates of a bending element, layout `[x_0, s_0, x_1, s_1, x_2, s_2]`.
    pub fn bending_q(&self, state: &State, e: &BendingElement) -> SVector<f64, 12> {
        gather_x_s(
            &state.x,
            |n| state.arc(n, e.family),
            [e.center, e.next, e.prev],
        )
    }

    /// Velocities of a bending element in the same layout.
    pub fn bending_qdot(&self, state: &State, e: &BendingElement) -> SVector<f64, 12> {
        gather_x_s(
            &state.x_dot,
            |n| state.arc_dot(n, e.family),
            [e.center, e.next, e.prev],
        )
    }

    /// Global DOF indices of a shear element, layout `[x_0, x_a, x_b]`
    /// (crossing, warp neighbour, weft neighbour; positions only).
    pub fn shear_dofs(&self, e: &ShearElement) -> [usize; 9] {
        let mut out = [0; 9];
        for (i, n) in [e.crossing, e.warp_neighbor, e.weft_neighbor]
            .into_iter()
            .enumerate()
        {
            let o = n * DOFS_PER_NODE;
            out[3 * i..3 * i + 3].copy_from_slice(&[o, o + 1, o + 2]);
        }
        out
    }

    /// Coordinates of a shear element, layout `[x_0, x_a, x_b]`.
    pub fn shear_q(&self, state: &State, e: &ShearElement) -> SVector<f64, 9> {
        gather_x(&state.x, [e.crossing, e.warp_neighbor, e.weft_neighbor])
    }

    /// Velocities of a shear element, layout `[ẋ_0, ẋ_a, ẋ_b]`.
    pub fn shear_qdot(&self, state: &State, e: &ShearElement) -> SVector<f64, 9> {
        gather_x(&state.x_dot, [e.crossing, e.warp_neighbor, e.weft_neighbor])
    }

    /// Nodes of object `object` chosen by `selector` (DESIGN §8 node
    /// selectors), as global node indices.
    ///
    /// # Errors
    /// [`ModelError::BadSelector`] for an out-of-range index, a corner or edge
    /// selector on an explicit yarn, or an unknown object.
    pub fn select(&self, object: usize, selector: &NodeSelector) -> Result<Vec<usize>, ModelError> {
        let bad = |reason: String| ModelError::BadSelector {
            object,
            selector: selector.to_string(),
            reason,
        };
        let info = self.objects.get(object).ok_or_else(|| {
            bad(format!(
                "names a missing object (there are {})",
                self.objects.len()
            ))
        })?;
        select_in(info, selector).map_err(bad)
    }

    /// Checks that a state is usable: every value finite and the arc-length
    /// coordinates strictly increasing along every yarn (DESIGN §1).
    ///
    /// # Errors
    /// [`ModelError::NonFinite`] or [`ModelError::NonIncreasingArcLength`]
    /// naming the yarn and the node (index within the yarn).
    pub fn check_state(&self, state: &State) -> Result<(), ModelError> {
        for yarn in &self.yarns {
            for (i, &n) in yarn.nodes.iter().enumerate() {
                let vals = [
                    (
                        "position",
                        state.x[n].iter().all(|c| c.is_finite()),
                        format!("{:?}", state.x[n].as_slice()),
                    ),
                    (
                        "velocity",
                        state.x_dot[n].iter().all(|c| c.is_finite()),
                        format!("{:?}", state.x_dot[n].as_slice()),
                    ),
                    (
                        "arc-length coordinate",
                        state.arc(n, yarn.family).is_finite(),
                        state.arc(n, yarn.family).to_string(),
                    ),
                    (
                        "arc-length rate",
                        state.arc_dot(n, yarn.family).is_finite(),
                        state.arc_dot(n, yarn.family).to_string(),
                    ),
                ];
                for (what, ok, value) in vals {
                    if !ok {
                        return Err(ModelError::NonFinite {
                            yarn: yarn.label(),
                            node: i,
                            what,
                            value,
                        });
                    }
                }
                if i > 0 {
                    let (p, c) = (
                        state.arc(yarn.nodes[i - 1], yarn.family),
                        state.arc(n, yarn.family),
                    );
                    if c <= p {
                        return Err(ModelError::NonIncreasingArcLength {
                            yarn: yarn.label(),
                            node: i,
                            value: c,
                            prev: i - 1,
                            prev_value: p,
                        });
                    }
                }
            }
        }
        Ok(())
    }
}

fn gather_x_s<const N: usize, const K: usize>(
    x: &[Vector3<f64>],
    s: impl Fn(usize) -> f64,
    nodes: [usize; K],
) -> SVector<f64, N> {
    let mut q = SVector::<f64, N>::zeros();
    for (i, &n) in nodes.iter().enumerate() {
        q.fixed_rows_mut::<3>(4 * i).copy_from(&x[n]);
        q[4 * i + 3] = s(n);
    }
    q
}

fn gather_x<const N: usize, const K: usize>(
    x: &[Vector3<f64>],
    nodes: [usize; K],
) -> SVector<f64, N> {
    let mut q = SVector::<f64, N>::zeros();
    for (i, &n) in nodes.iter().enumerate() {
        q.fixed_rows_mut::<3>(3 * i).copy_from(&x[n]);
    }
    q
}

/// An edge of a woven patch (DESIGN §8 selectors `edge:NAME`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchEdge {
    /// Where the warp yarns start: weft yarn 0 (nodes `(k, 0)`).
    WarpStart,
    /// Where the warp yarns end: the last weft yarn (nodes `(k, n_weft-1)`).
    WarpEnd,
    /// Where the weft yarns start: warp yarn 0 (nodes `(0, l)`).
    WeftStart,
    /// Where the weft yarns end: the last warp yarn (nodes `(n_warp-1, l)`).
    WeftEnd,
}

/// A node selector (DESIGN §8): an index within the object, a patch corner
/// `corner:K` (K = 0..3 counter-clockwise about the normal from the warp/weft
/// origin: 0 = (warp 0, weft 0), 1 = (warp 0, last weft), 2 = (last, last),
/// 3 = (last warp, weft 0)) or a patch edge `edge:warp_start|warp_end|weft_start|weft_end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeSelector {
    /// Node index within the object.
    Index(usize),
    /// Patch corner 0..3.
    Corner(u8),
    /// All nodes of a patch edge.
    Edge(PatchEdge),
}

impl std::fmt::Display for NodeSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NodeSelector::Index(i) => write!(f, "{i}"),
            NodeSelector::Corner(k) => write!(f, "corner:{k}"),
            NodeSelector::Edge(e) => write!(
                f,
                "edge:{}",
                match e {
                    PatchEdge::WarpStart => "warp_start",
                    PatchEdge::WarpEnd => "warp_end",
                    PatchEdge::WeftStart => "weft_start",
                    PatchEdge::WeftEnd => "weft_end",
                }
            ),
        }
    }
}

impl std::str::FromStr for NodeSelector {
    type Err = String;

    /// Parses `"12"`, `"corner:2"` or `"edge:weft_end"`; the error says what
    /// was expected.
    fn from_str(s: &str) -> Result<Self, String> {
        let expected =
            "expected a node index, corner:0..3 or edge:warp_start|warp_end|weft_start|weft_end";
        if let Ok(i) = s.parse::<usize>() {
            return Ok(NodeSelector::Index(i));
        }
        if let Some(k) = s.strip_prefix("corner:") {
            return match k.parse::<u8>() {
                Ok(k) if k < 4 => Ok(NodeSelector::Corner(k)),
                _ => Err(format!("'{s}': {expected}")),
            };
        }
        let edge = match s {
            "edge:warp_start" => PatchEdge::WarpStart,
            "edge:warp_end" => PatchEdge::WarpEnd,
            "edge:weft_start" => PatchEdge::WeftStart,
            "edge:weft_end" => PatchEdge::WeftEnd,
            _ => return Err(format!("'{s}': {expected}")),
        };
        Ok(NodeSelector::Edge(edge))
    }
}

pub(crate) fn select_in(info: &ObjectInfo, sel: &NodeSelector) -> Result<Vec<usize>, String> {
    match (*sel, info.kind) {
        (NodeSelector::Index(i), _) => {
            if i < info.node_count {
                Ok(vec![info.first_node + i])
            } else {
                Err(format!(
                    "is out of range: the object has {} nodes",
                    info.node_count
                ))
            }
        }
        (
            NodeSelector::Corner(k),
            ObjectKind::WovenPatch { n_warp, n_weft }
            | ObjectKind::TriangleMesh {
                grid: Some([n_warp, n_weft]),
                ..
            },
        ) => {
            let (kk, ll) = match k {
                0 => (0, 0),
                1 => (0, n_weft - 1),
                2 => (n_warp - 1, n_weft - 1),
                _ => (n_warp - 1, 0),
            };
            Ok(vec![info.first_node + kk * n_weft + ll])
        }
        (
            NodeSelector::Edge(e),
            ObjectKind::WovenPatch { n_warp, n_weft }
            | ObjectKind::TriangleMesh {
                grid: Some([n_warp, n_weft]),
                ..
            },
        ) => {
            let f = info.first_node;
            Ok(match e {
                PatchEdge::WarpStart => (0..n_warp).map(|k| f + k * n_weft).collect(),
                PatchEdge::WarpEnd => (0..n_warp).map(|k| f + k * n_weft + n_weft - 1).collect(),
                PatchEdge::WeftStart => (0..n_weft).map(|l| f + l).collect(),
                PatchEdge::WeftEnd => (0..n_weft).map(|l| f + (n_warp - 1) * n_weft + l).collect(),
            })
        }
        (_, ObjectKind::Yarn) => {
            Err("applies only to woven patches; use a node index on a yarn".into())
        }
        (_, ObjectKind::WovenPanel { .. }) => Err(
            "applies only to rectangular woven patches; use a node index on a woven panel".into(),
        ),
        (_, ObjectKind::TriangleMesh { .. }) => {
            Err("applies only to rectangular patches; use a vertex index on a triangle mesh".into())
        }
    }
}
