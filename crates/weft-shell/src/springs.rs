//! Bending springs for triangle-mesh cloth [Kim23 §III.2-4].
//!
//! A bending spring is a distance constraint `C = |xₐ - x_b| - d` between two
//! vertices that share no edge (`d` their rest distance); it resists folding
//! because a fold shortens it. Two structures:
//!
//! - **Crossover springs** (the baseline of the mass-spring literature,
//!   [Kim23 Fig. 2]): across every interior edge, one spring joins the two
//!   vertices opposite it. They span two edges at any resolution, so the
//!   stiffness they give depends on the resolution.
//! - **LOD bending springs** [Kim23 §III.3]: from the mesh's average edge
//!   length `e_avg` and its bounding box,
//!   `Ω = ‖AABB_min - AABB_max‖ / 2 · 0.5` (eq. 7),
//!   the loose level `m_l = max(Ω / e_avg · 0.1 + 1, 1)` (eq. 6, rounded
//!   down to a ring count) and the tight level `n_l = 2 m_l + 1` (eq. 8).
//!   A free vertex gets springs to the vertices of its `m_l`-ring (those
//!   exactly `m_l` edges away); a *fixed* vertex (pinned, or a neighbour of
//!   a pinned vertex, as Kim fixes the pin's 1-ring too) gets springs to its
//!   rings `m_l ..= n_l`. Because `m_l e_avg ≈ 0.1 Ω + e_avg`, the springs
//!   span about the same physical length at every resolution.
//! - **The LOD connection** [Kim23 §III.4]: a fixed vertex connects only to
//!   its target ring `t_l ∈ [m_l, n_l]` (default `n_l`) instead of all the
//!   rings between, with fewer springs.
//!
//! Our reading of the paper, which gives no pseudo-code: ring distances are
//! graph distances over the mesh edges, and a level below 2 is raised to 2
//! (a 1-ring spring is an edge, which the membrane constraints already
//! hold).

use crate::mesh::{ClothMesh, Rings};
use serde::{Deserialize, Serialize};

/// A distance constraint between two vertices.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spring {
    /// The vertices, `a < b`.
    pub a: u32,
    /// See `a`.
    pub b: u32,
    /// Rest length (m): their distance in the rest frame.
    pub rest_length: f64,
}

/// How fixed vertices connect in the LOD structure [Kim23 §III.4].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LodConnection {
    /// Every ring from `m_l` to `n_l` (§III.3 without §III.4), the
    /// default: in our runs it is the one that stays bounded at 129 x 129
    /// vertices with two corners pinned (`examples/kim23_pinned_corners.rs`).
    #[default]
    Full,
    /// Only the target ring `t_l` (§III.4): 12-31 % fewer springs on a
    /// strip with a pinned edge, but it over-strains at 129 x 129 with two
    /// corners pinned.
    Lod,
}

/// The bending-spring structure of a strain-based-dynamics cloth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum BendingSprings {
    /// No bending springs.
    None,
    /// Crossover springs across every interior edge (the baseline).
    Crossover,
    /// Kim's LOD bending springs.
    Lod {
        /// Rings of fixed vertices (default: all rings, [`LodConnection::Full`]).
        #[serde(default)]
        connection: LodConnection,
        /// Target ring `t_l` of the LOD connection, clamped to
        /// `[m_l, n_l]`; default `n_l`.
        #[serde(default)]
        target_level: Option<usize>,
    },
}

impl Default for BendingSprings {
    fn default() -> Self {
        BendingSprings::Lod {
            connection: LodConnection::Full,
            target_level: None,
        }
    }
}

/// The LOD levels of a mesh [Kim23 eq. 6-8] (ring counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LodLevels {
    /// Loose level `m_l` (free vertices).
    pub loose: usize,
    /// Tight level `n_l = 2 m_l + 1` (fixed vertices).
    pub tight: usize,
    /// Target level `t_l` of the LOD connection.
    pub target: usize,
}

impl LodLevels {
    /// The levels of `mesh` from eq. 6-8 on its world bounding box and
    /// average rest edge length; `target` clamped to `[m_l, n_l]`, default
    /// `n_l`. Levels below 2 are raised to 2 (module docs).
    pub fn of(mesh: &ClothMesh, target: Option<usize>) -> Self {
        let omega = mesh.bounding_box_diagonal() / 2.0 * 0.5;
        let m = (omega / mesh.average_edge_length() * 0.1 + 1.0).max(1.0);
        let loose = (m.floor() as usize).max(2);
        let tight = 2 * loose + 1;
        LodLevels {
            loose,
            tight,
            target: target.unwrap_or(tight).clamp(loose, tight),
        }
    }
}

impl BendingSprings {
    /// The springs of this structure on `mesh`, with `fixed[i]` true for
    /// pinned vertices (their 1-ring counts as fixed too, [Kim23 §III.3]);
    /// sorted by `(a, b)`, no duplicates. Also returns the LOD levels for
    /// [`BendingSprings::Lod`].
    pub fn build(&self, mesh: &ClothMesh, pinned: &[bool]) -> (Vec<Spring>, Option<LodLevels>) {
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        let levels = match *self {
            BendingSprings::None => None,
            BendingSprings::Crossover => {
                // Opposite vertices of each edge, keyed by the edge.
                let mut opposite: Vec<([u32; 2], u32)> = mesh
                    .triangles()
                    .iter()
                    .flat_map(|t| {
                        [
                            ([t[0], t[1]], t[2]),
                            ([t[1], t[2]], t[0]),
                            ([t[2], t[0]], t[1]),
                        ]
                    })
                    .map(|([a, b], o)| ([a.min(b), a.max(b)], o))
                    .collect();
                opposite.sort_unstable();
                for w in opposite.windows(2) {
                    if w[0].0 == w[1].0 {
                        pairs.push((w[0].1, w[1].1));
                    }
                }
                None
            }
            BendingSprings::Lod {
                connection,
                target_level,
            } => {
                let levels = LodLevels::of(mesh, target_level);
                let adjacency = mesh.neighbours();
                let mut fixed = pinned.to_vec();
                for (i, &p) in pinned.iter().enumerate() {
                    if p {
                        for &j in &adjacency[i] {
                            fixed[j as usize] = true;
                        }
                    }
                }
                let mut rings = Rings::new(&adjacency);
                for i in 0..mesh.vertex_count() {
                    let (lo, hi) = match (fixed[i], connection) {
                        (false, _) => (levels.loose, levels.loose),
                        (true, LodConnection::Full) => (levels.loose, levels.tight),
                        (true, LodConnection::Lod) => (levels.target, levels.target),
                    };
                    rings.visit(i as u32, hi, |j, ring| {
                        if ring >= lo {
                            pairs.push((i as u32, j));
                        }
                    });
                }
                Some(levels)
            }
        };
        let mut springs: Vec<(u32, u32)> = pairs
            .into_iter()
            .filter(|(a, b)| a != b)
            .map(|(a, b)| (a.min(b), a.max(b)))
            .collect();
        springs.sort_unstable();
        springs.dedup();
        let springs = springs
            .into_iter()
            .map(|(a, b)| Spring {
                a,
                b,
                rest_length: mesh.rest_distance(a as usize, b as usize),
            })
            .collect();
        (springs, levels)
    }
}
