//! Yarn centreline curves for renderers, built from a simulated state.
//!
//! The simulator keeps one shared position `x` per crossing: the warp and the
//! weft centrelines coincide there (DESIGN §1, the normal separation is not a
//! degree of freedom). For rendering, [`YarnCurves::from_positions`] puts the
//! two yarns back on their sides of the weave:
//!
//! 1. **Fabric normal** at a crossing: `n̂ = (t_warp × t_weft) / |…|`, with
//!    the tangents `t = x_next - x_prev` along each yarn in the direction of
//!    increasing arc-length coordinate (at a yarn end the second-order
//!    one-sided difference `∓(3x₀ - 4x₁ + x₂)`, or the chord on a
//!    two-node yarn). For a woven
//!    patch this is the patch normal (`warp_direction × (normal × warp_direction)
//!    = normal`), the same frame in which `Fabric::crimp` is defined, so the
//!    sign convention is consistent everywhere the warp/weft orientation is.
//!    Where the tangents are nearly parallel (`|t_warp × t_weft| <
//!    10⁻³ |t_warp| |t_weft|`, a fully sheared or collapsed crossing) the
//!    normal is the normalised mean of the normals of the node's neighbours
//!    along both yarns that have one; if none has, the node is not displaced.
//! 2. **Crimp offset**: with `c = Fabric::crimp[node]` (`+1` where the warp
//!    passes over the weft, `-1` under) and the two yarn radii `R_warp`,
//!    `R_weft` (from the yarns' materials), the warp point is
//!    `x + c · (R_warp + R_weft)/2 · n̂` and the weft point
//!    `x - c · (R_warp + R_weft)/2 · n̂`: the centrelines are `R_warp + R_weft`
//!    apart, i.e. the yarns touch, and for equal radii the offset is `±R`.
//!    Nodes with `crimp = 0` (explicit yarns, nodes off a weave) and yarn-end
//!    nodes that carry only one yarn are not displaced.
//! 3. **Smoothing**: uniform Catmull-Rom through the offset points
//!    ([`catmull_rom`]) with `samples_per_segment` points per segment. The
//!    curve passes through every offset point; the end tangents come from
//!    phantom points reflected through the end points (`P₋₁ = 2P₀ - P₁`).
//!
//! 4. **Normals** (for shading, [`crate::preview`]): every point carries the
//!    fabric normal `n̂` of step 1, at a sample between two nodes the
//!    normalised linear blend `(1 - t) n̂ᵢ + t n̂ᵢ₊₁` (`t = k /
//!    samples_per_segment`); where only one of the two nodes has a normal,
//!    that one; where neither has (or the blend vanishes), `[0, 0, 0]`.
//!
//! With `samples_per_segment = 1` the curves are the offset control points
//! themselves: that is what the curve formats evaluated by the renderer
//! (BCC `C0`, USD `catmullRom`) should receive, while polylines, tubes and
//! Mitsuba `linearcurve` files want the smoothed samples (see
//! [`crate::export`]).

use nalgebra::Vector3;
use thiserror::Error;
use weft_core::{Fabric, Family, State};

/// Curves that cannot be built from the given input.
#[derive(Debug, Error, PartialEq)]
pub enum CurveError {
    /// The position array does not have one entry per fabric node.
    #[error("yarn curves: {positions} positions given for a fabric of {nodes} nodes")]
    NodeCount {
        /// Positions given.
        positions: usize,
        /// Nodes of the fabric.
        nodes: usize,
    },
    /// `samples_per_segment` was zero.
    #[error("yarn curves: samples_per_segment must be at least 1, got 0")]
    NoSamples,
    /// A non-finite position on a yarn.
    #[error("yarn curves: {yarn}, node {node}: position {value} is not finite")]
    NonFinite {
        /// The yarn, e.g. `object 0, warp yarn 3`.
        yarn: String,
        /// Index of the node within the yarn.
        node: usize,
        /// The offending position.
        value: String,
    },
}

/// One yarn centreline ready for a renderer.
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    /// Points along the centreline (m), in order of increasing arc length.
    pub points: Vec<[f64; 3]>,
    /// Unit fabric normal at each point (module docs, step 4), `[0, 0, 0]`
    /// where none is known: either one entry per point or empty (no normals,
    /// e.g. for a hand-built curve; the preview then shades the yarn as a
    /// tube). Renderer exports ignore it.
    pub normals: Vec<[f64; 3]>,
    /// Yarn radius (m), from the yarn's material.
    pub radius: f64,
    /// Warp or weft.
    pub family: Family,
    /// Index of the yarn in `Fabric::yarns`.
    pub yarn: usize,
}

/// The centrelines of all yarns of a fabric (one [`Curve`] per yarn with at
/// least two nodes, in `Fabric::yarns` order).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct YarnCurves {
    /// The curves.
    pub curves: Vec<Curve>,
}

impl YarnCurves {
    /// Builds crimped, Catmull-Rom-smoothed yarn curves from node positions
    /// `x` (m, one per fabric node) as the module docs describe. Each yarn of
    /// `n ≥ 2` nodes gives `(n - 1) · samples_per_segment + 1` points; yarns
    /// with fewer than two nodes are skipped.
    ///
    /// # Errors
    /// [`CurveError::NodeCount`] if `x.len()` is not the node count,
    /// [`CurveError::NoSamples`] for `samples_per_segment = 0`,
    /// [`CurveError::NonFinite`] naming the yarn and node of a non-finite
    /// position.
    pub fn from_positions(
        fabric: &Fabric,
        x: &[Vector3<f64>],
        samples_per_segment: usize,
    ) -> Result<Self, CurveError> {
        if x.len() != fabric.node_count() {
            return Err(CurveError::NodeCount {
                positions: x.len(),
                nodes: fabric.node_count(),
            });
        }
        if samples_per_segment == 0 {
            return Err(CurveError::NoSamples);
        }
        for yarn in &fabric.yarns {
            for (i, &n) in yarn.nodes.iter().enumerate() {
                if !x[n].iter().all(|c| c.is_finite()) {
                    return Err(CurveError::NonFinite {
                        yarn: yarn.label(),
                        node: i,
                        value: format!("{:?}", x[n].as_slice()),
                    });
                }
            }
        }
        let normals = fabric_normals(fabric, x);
        let mut curves = Vec::with_capacity(fabric.yarns.len());
        for (yi, yarn) in fabric.yarns.iter().enumerate() {
            if yarn.nodes.len() < 2 {
                continue;
            }
            let sign = match yarn.family {
                Family::Warp => 1.0,
                Family::Weft => -1.0,
            };
            let ctrl: Vec<Vector3<f64>> = yarn
                .nodes
                .iter()
                .map(|&n| {
                    let c = f64::from(fabric.crimp[n]);
                    match (fabric.node_yarns[n], normals[n]) {
                        ([Some(w), Some(f)], Some(nrm)) if c != 0.0 => {
                            let r = 0.5
                                * (fabric.materials[fabric.yarns[w].material].radius
                                    + fabric.materials[fabric.yarns[f].material].radius);
                            x[n] + nrm * (sign * c * r)
                        }
                        _ => x[n],
                    }
                })
                .collect();
            let node_normals: Vec<Option<Vector3<f64>>> =
                yarn.nodes.iter().map(|&n| normals[n]).collect();
            curves.push(Curve {
                points: catmull_rom(&ctrl, samples_per_segment)
                    .into_iter()
                    .map(|p| [p.x, p.y, p.z])
                    .collect(),
                normals: blend_normals(&node_normals, samples_per_segment),
                radius: fabric.materials[yarn.material].radius,
                family: yarn.family,
                yarn: yi,
            });
        }
        Ok(Self { curves })
    }

    /// [`YarnCurves::from_positions`] with the positions of `state`.
    ///
    /// # Errors
    /// As [`YarnCurves::from_positions`].
    pub fn from_state(
        fabric: &Fabric,
        state: &State,
        samples_per_segment: usize,
    ) -> Result<Self, CurveError> {
        Self::from_positions(fabric, &state.x, samples_per_segment)
    }

    /// Total number of points over all curves.
    pub fn point_count(&self) -> usize {
        self.curves.iter().map(|c| c.points.len()).sum()
    }
}

/// Unit fabric normal per node, `n̂ = t_warp × t_weft / |…|` (module docs),
/// `None` where the node does not carry both a warp and a weft yarn or no
/// normal can be found. `x` has one position per fabric node (m).
///
/// # Panics
/// If `x.len()` is smaller than the node count.
pub fn fabric_normals(fabric: &Fabric, x: &[Vector3<f64>]) -> Vec<Option<Vector3<f64>>> {
    let n = fabric.node_count();
    // Position of every node within its warp and weft yarn, for O(1) tangents.
    let mut pos_in = vec![[usize::MAX; 2]; n];
    for yarn in &fabric.yarns {
        for (i, &node) in yarn.nodes.iter().enumerate() {
            pos_in[node][yarn.family.index()] = i;
        }
    }
    let tangent_at = |node: usize, fam: usize| -> Option<Vector3<f64>> {
        let y = fabric.node_yarns[node][fam]?;
        let nodes = &fabric.yarns[y].nodes;
        let i = pos_in[node][fam];
        let m = nodes.len();
        if m < 2 || i == usize::MAX {
            return None;
        }
        Some(if m >= 3 && i == 0 {
            // Second-order one-sided differences at the yarn ends.
            -3.0 * x[nodes[0]] + 4.0 * x[nodes[1]] - x[nodes[2]]
        } else if m >= 3 && i == m - 1 {
            3.0 * x[nodes[m - 1]] - 4.0 * x[nodes[m - 2]] + x[nodes[m - 3]]
        } else {
            x[nodes[(i + 1).min(m - 1)]] - x[nodes[i.saturating_sub(1)]]
        })
    };
    let mut normals: Vec<Option<Vector3<f64>>> = (0..n)
        .map(|node| {
            let (a, b) = (tangent_at(node, 0)?, tangent_at(node, 1)?);
            let c = a.cross(&b);
            let scale = a.norm() * b.norm();
            (scale > 0.0 && c.norm() >= 1e-3 * scale).then(|| c / c.norm())
        })
        .collect();
    // Degenerate crossings: mean of the neighbours' normals along both yarns.
    let fill: Vec<(usize, Vector3<f64>)> = (0..n)
        .filter(|&node| {
            normals[node].is_none() && fabric.node_yarns[node].iter().all(Option::is_some)
        })
        .filter_map(|node| {
            let mut sum = Vector3::zeros();
            for fam in 0..2 {
                let y = fabric.node_yarns[node][fam]?;
                let nodes = &fabric.yarns[y].nodes;
                let i = pos_in[node][fam];
                for j in [i.wrapping_sub(1), i + 1] {
                    if let Some(nb) = nodes.get(j).and_then(|&m| normals[m]) {
                        sum += nb;
                    }
                }
            }
            (sum.norm() > 1e-12).then(|| (node, sum / sum.norm()))
        })
        .collect();
    for (node, v) in fill {
        normals[node] = Some(v);
    }
    normals
}

/// Per-sample normals matching [`catmull_rom`]'s sampling of `n` nodes with
/// node normals `nodes` (module docs, step 4): `(n - 1) · samples_per_segment
/// + 1` entries for `n ≥ 2` and `samples_per_segment > 1`, else one per node.
fn blend_normals(nodes: &[Option<Vector3<f64>>], samples_per_segment: usize) -> Vec<[f64; 3]> {
    let out = |v: Option<Vector3<f64>>| v.map_or([0.0; 3], |v| [v.x, v.y, v.z]);
    let n = nodes.len();
    if n < 2 || samples_per_segment <= 1 {
        return nodes.iter().map(|&v| out(v)).collect();
    }
    let mut normals = Vec::with_capacity((n - 1) * samples_per_segment + 1);
    for w in nodes.windows(2) {
        for k in 0..samples_per_segment {
            let t = k as f64 / samples_per_segment as f64;
            let blend = match (w[0], w[1]) {
                (Some(a), Some(b)) => {
                    let m = a * (1.0 - t) + b * t;
                    let len = m.norm();
                    (len > 1e-9).then(|| m / len)
                }
                (a, b) => a.or(b),
            };
            normals.push(out(blend));
        }
    }
    normals.push(out(nodes[n - 1]));
    normals
}

/// Uniform Catmull-Rom spline through `points`, sampled at
/// `t = k / samples_per_segment` (k = 0..samples_per_segment) on every
/// segment, plus the last point: `(n - 1) · samples_per_segment + 1` points
/// for `n ≥ 2` (the input itself for `n < 2` or `samples_per_segment ≤ 1`).
/// Segment `P₁P₂` with neighbours `P₀`, `P₃` is
/// `½ [2P₁ + (P₂ - P₀) t + (2P₀ - 5P₁ + 4P₂ - P₃) t² + (3P₁ - P₀ - 3P₂ + P₃) t³]`
/// (Catmull & Rom 1974, tension ½); the missing neighbours at the ends are
/// the reflections `2P₀ - P₁` and `2Pₙ₋₁ - Pₙ₋₂`.
pub fn catmull_rom(points: &[Vector3<f64>], samples_per_segment: usize) -> Vec<Vector3<f64>> {
    let n = points.len();
    if n < 2 || samples_per_segment <= 1 {
        return points.to_vec();
    }
    let get = |i: isize| -> Vector3<f64> {
        if i < 0 {
            2.0 * points[0] - points[1]
        } else if i as usize >= n {
            2.0 * points[n - 1] - points[n - 2]
        } else {
            points[i as usize]
        }
    };
    let mut out = Vec::with_capacity((n - 1) * samples_per_segment + 1);
    for s in 0..n - 1 {
        let i = s as isize;
        let (p0, p1, p2, p3) = (get(i - 1), get(i), get(i + 1), get(i + 2));
        for k in 0..samples_per_segment {
            let t = k as f64 / samples_per_segment as f64;
            let (t2, t3) = (t * t, t * t * t);
            out.push(
                0.5 * (2.0 * p1
                    + (p2 - p0) * t
                    + (2.0 * p0 - 5.0 * p1 + 4.0 * p2 - p3) * t2
                    + (3.0 * p1 - p0 - 3.0 * p2 + p3) * t3),
            );
        }
    }
    out.push(points[n - 1]);
    out
}
