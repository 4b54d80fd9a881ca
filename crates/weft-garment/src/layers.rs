//! Layer pass-through: yarn segments that cut through the garment's own
//! fabric somewhere else (a front panel pushed through the back, a sleeve
//! through the torso).
//!
//! The fabric's surface is taken as the triangles of its crossing-shear
//! stencils, `(crossing, warp neighbour, weft neighbour)` (DESIGN §3, the
//! crossing shear element): together they cover every cell of the weave. A
//! crossing is a yarn segment `[a, b]` that intersects such a triangle
//! `[c, w, f]` while no end of the segment is within `radius` of a corner of
//! the triangle along the fabric at rest (through yarn segments at their
//! rest lengths and seam ties at length 0). Neighbouring stencils of a
//! smooth, sewn fabric meet and overlap by construction, and so do the
//! edge cells of two panels around the seam that joins them (a tie, not a
//! shared node); those are the pairs the exclusion removes. Two spacings
//! ([`LAYER_EXCLUSION_SPACINGS`]) cover both, also where three panels meet. Self-collision (segment against
//! segment) cannot see a segment that threads a cell between yarns, which is
//! what this measure is for.
//!
//! Broad phase: a uniform grid (cell edge twice the median triangle
//! extent), each triangle listed in the cells its box covers, each segment
//! tested against the triangles listed in the cells its box covers; a
//! triangle or segment spanning 8 cells or more along an axis (a stretched
//! outlier) is tested against everything instead, so one node thrown far
//! away costs a linear scan, not a grid of one cell. Narrow phase: the
//! Möller–Trumbore segment–triangle test. Degenerate (zero-area) triangles
//! and non-finite positions are skipped.

use nalgebra::Vector3;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashMap;
use weft_core::Fabric;
use weft_solver::Tie;
use weft_solver::collide::{Exclusion, segment_triangle_intersection};

/// Rest distance along the fabric, in yarn spacings, below which a segment
/// and a triangle are neighbours (in the weave or across a seam) rather
/// than two layers.
pub const LAYER_EXCLUSION_SPACINGS: f64 = 2.0;

/// One yarn segment through the fabric.
#[derive(Serialize, Debug, Clone, Copy, PartialEq)]
pub struct LayerCrossing {
    /// The segment's end nodes (a yarn segment, or a mesh edge for the
    /// triangle-mesh models).
    pub segment: [usize; 2],
    /// The triangle's nodes: `(crossing, warp neighbour, weft neighbour)`
    /// of a shear stencil, or a mesh triangle for the triangle-mesh models.
    pub triangle: [usize; 3],
    /// Where the segment cuts the triangle (m).
    pub point: [f64; 3],
}

/// The node pairs of `fabric` within `radius` (m) of each other along the
/// sewn fabric at rest: through its yarn segments at their rest lengths and
/// the seam `ties` at length 0 ([`Exclusion::within_distance`]).
///
/// # Errors
/// [`weft_solver::collide::CollideError`] for a tie naming a node the
/// fabric lacks, or a negative or non-finite `radius`.
pub fn rest_exclusion(
    fabric: &Fabric,
    ties: &[Tie],
    radius: f64,
) -> Result<Exclusion, weft_solver::collide::CollideError> {
    let mut edges: Vec<([usize; 2], f64)> = fabric
        .elements
        .segments
        .iter()
        .map(|g| ([g.a, g.b], g.rest_spacing))
        .collect();
    for t in ties {
        edges.push(([t.node, t.other[0]], 0.0));
        edges.push(([t.node, t.other[1]], 0.0));
    }
    Exclusion::within_distance(fabric.node_count(), &edges, radius)
}

/// All yarn segments of `fabric` that cut its surface triangles away from
/// their neighbourhood (see the module docs), sorted by segment then
/// triangle. `ties` join seam nodes at length 0; `x` holds one position
/// per node (m); `radius` is the exclusion distance (m; the pipeline uses
/// [`LAYER_EXCLUSION_SPACINGS`] spacings). Empty when no layer passes
/// through another.
pub fn layer_crossings(
    fabric: &Fabric,
    ties: &[Tie],
    x: &[Vector3<f64>],
    radius: f64,
) -> Vec<LayerCrossing> {
    let exclusion =
        rest_exclusion(fabric, ties, radius.max(0.0)).expect("segments and ties name fabric nodes");
    let triangles: Vec<[usize; 3]> = fabric
        .elements
        .shear
        .iter()
        .map(|e| [e.crossing, e.warp_neighbor, e.weft_neighbor])
        .collect();
    surface_crossings(&fabric.segment_ends(), &triangles, &exclusion, x)
}

/// The `segments` (node pairs) that cut one of the surface `triangles`
/// (node triples) while no end of the segment is `exclusion`-near a corner
/// of the triangle, sorted by segment then triangle: the test of
/// [`layer_crossings`] (module docs) on any surface, e.g. a triangle mesh
/// and its edges (`crate::shell::mesh_layer_crossings`). `x` holds one
/// position per node (m). Degenerate triangles and non-finite positions
/// are skipped.
pub fn surface_crossings(
    segments: &[[usize; 2]],
    triangles: &[[usize; 3]],
    exclusion: &Exclusion,
    x: &[Vector3<f64>],
) -> Vec<LayerCrossing> {
    let finite = |ids: &[usize]| ids.iter().all(|&i| x[i].iter().all(|c| c.is_finite()));
    let triangles: Vec<[usize; 3]> = triangles
        .iter()
        .copied()
        .filter(|t| finite(t))
        .filter(|t| {
            let (e1, e2) = (x[t[1]] - x[t[0]], x[t[2]] - x[t[0]]);
            e1.cross(&e2).norm() > 1e-12 * e1.norm_squared().max(e2.norm_squared())
        })
        .collect();
    let bounds = |ids: &[usize]| {
        ids.iter().fold(
            (
                Vector3::repeat(f64::INFINITY),
                Vector3::repeat(f64::NEG_INFINITY),
            ),
            |(lo, hi), &i| (lo.inf(&x[i]), hi.sup(&x[i])),
        )
    };
    // Cell edge: twice the median triangle extent, so that one stretched
    // outlier (a node thrown far away) does not put everything in one cell.
    // Boxes wider than `MAX_SPAN` cells are `big` and tested by every
    // segment (a handful at most in a sane state).
    let mut extents: Vec<f64> = triangles
        .iter()
        .map(|t| {
            let (lo, hi) = bounds(t);
            (hi - lo).max()
        })
        .collect();
    if extents.is_empty() {
        return Vec::new();
    }
    let mid = extents.len() / 2;
    let h = 2.0 * *extents.select_nth_unstable_by(mid, f64::total_cmp).1;
    if h <= 0.0 {
        return Vec::new();
    }
    const MAX_SPAN: i64 = 8;
    let cell_range = |lo: &Vector3<f64>, hi: &Vector3<f64>| {
        let c = |p: &Vector3<f64>| p.map(|v| (v / h).floor() as i64);
        (c(lo), c(hi))
    };
    let wide = |(a, b): &(Vector3<i64>, Vector3<i64>)| (0..3).any(|k| b[k] - a[k] >= MAX_SPAN);
    let cells = |(a, b): (Vector3<i64>, Vector3<i64>)| {
        (a.x..=b.x)
            .flat_map(move |i| (a.y..=b.y).flat_map(move |j| (a.z..=b.z).map(move |k| [i, j, k])))
    };
    let mut grid: HashMap<[i64; 3], Vec<u32>> = HashMap::new();
    let mut big: Vec<u32> = Vec::new();
    for (ti, t) in triangles.iter().enumerate() {
        let (lo, hi) = bounds(t);
        let r = cell_range(&lo, &hi);
        if wide(&r) {
            big.push(ti as u32);
            continue;
        }
        for c in cells(r) {
            grid.entry(c).or_default().push(ti as u32);
        }
    }
    let mut out: Vec<LayerCrossing> = segments
        .par_iter()
        .filter(|s| finite(&s[..]))
        .flat_map_iter(|&s| {
            let (lo, hi) = bounds(&s);
            let r = cell_range(&lo, &hi);
            let mut cand: Vec<u32> = if wide(&r) {
                // A segment across many cells: every triangle whose box
                // meets its box.
                (0..triangles.len() as u32)
                    .filter(|&ti| {
                        let (tl, th) = bounds(&triangles[ti as usize]);
                        (0..3).all(|k| tl[k] <= hi[k] && lo[k] <= th[k])
                    })
                    .collect()
            } else {
                cells(r)
                    .filter_map(|c| grid.get(&c))
                    .flatten()
                    .copied()
                    .collect()
            };
            cand.extend_from_slice(&big);
            cand.sort_unstable();
            cand.dedup();
            let mut hits = Vec::new();
            for ti in cand {
                let t = triangles[ti as usize];
                if s.iter().any(|&a| t.iter().any(|&b| exclusion.near(a, b))) {
                    continue;
                }
                if let Some(p) = segment_triangle_intersection(
                    &x[s[0]],
                    &x[s[1]],
                    [&x[t[0]], &x[t[1]], &x[t[2]]],
                ) {
                    hits.push(LayerCrossing {
                        segment: s,
                        triangle: t,
                        point: p.into(),
                    });
                }
            }
            hits
        })
        .collect();
    out.sort_by_key(|c| (c.segment, c.triangle));
    out
}
