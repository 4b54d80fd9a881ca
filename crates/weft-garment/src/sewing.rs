//! Sewing around the body: seams whose straight path crosses the body are
//! routed over it.
//!
//! A seam tie pulls its two yarn ends together along the straight line
//! between them. Where the pattern places the two sides of a seam on
//! opposite sides of the body (a dress's shoulder seam: front strap 0.30 m
//! in front of the chest, back strap 0.25 m behind the back, both a few
//! centimetres below the top of the shoulder), that line runs through the
//! body: the straps fold down as they are pulled, reach the body below the
//! shoulder and close under the arm instead of over the shoulder
//! (issue 20). A [`SeamRoute`] gives such a tie a *meeting point* outside
//! the body on the far side of the body from the two panels (over the
//! shoulder for a bodice, under the arm for a sleeve's underarm seam): while
//! sewing, both sides are also pulled to it, so the seam closes there.

use crate::transfer::positions;
use nalgebra::Vector3;
use weft_pattern::Garment;
use weft_solver::collide::Collider;

/// Samples along a tie's straight path tested against the body.
const PATH_SAMPLES: usize = 24;
/// A tie's straight path must pass this deep (m) inside the body to be
/// routed: contact pushes a seam that only grazes the body out of it.
pub const MIN_DEPTH: f64 = 0.01;
/// Step (m) of the march from a tie's midpoint to its meeting point.
const MARCH_STEP: f64 = 2.5e-3;
/// Radius of the neighbourhood of a tie's node whose mean position gives
/// the fabric's side of the seam, in the panel's spacings
/// ([`NEIGHBOURHOOD_MIN`] at least).
const NEIGHBOURHOOD_SPACINGS: f64 = 2.5;
/// Smallest neighbourhood radius (m).
const NEIGHBOURHOOD_MIN: f64 = 0.05;
/// Longest march (m): a meeting point farther than this from the tie's
/// midpoint is not looked for (the tie is left straight).
const MARCH_LIMIT: f64 = 0.5;

/// A seam tie routed around the body while sewing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeamRoute {
    /// Index into [`Garment::seams`].
    pub tie: usize,
    /// Where the two sides meet (m): outside the body by the clearance.
    pub meeting_point: Vector3<f64>,
}

/// Routes for the ties of `garment` whose straight path, at the placed
/// positions `x0` (m, one per node), passes more than [`MIN_DEPTH`] inside
/// the body (`body`, signed distance, negative inside): every other tie
/// gets none.
///
/// The meeting point is found by marching from the tie's midpoint `m`, in
/// steps of 2.5 mm up to 0.5 m, along the direction `d` away from the
/// fabric on both sides: `d` is the sum over the tie's two ends of the end
/// minus the mean position of its panel's nodes within 2.5 spacings (5 cm
/// at least) of it, made perpendicular to the tie's line (and `+y` where
/// that leaves nothing); the first point at least `clearance` outside the
/// body is the meeting point. A tie whose march finds no such point gets no
/// route.
pub fn seam_routes(
    garment: &Garment,
    x0: &[Vector3<f64>],
    body: &Collider,
    clearance: f64,
) -> Vec<SeamRoute> {
    let panel_of = |node: usize| {
        garment
            .panels
            .iter()
            .position(|p| node >= p.first_node && node < p.first_node + p.nodes)
    };
    // Mean position of the nodes of `panel` within the neighbourhood
    // radius of `at`: the fabric's side of the seam near the tie.
    let local_centroid = |panel: usize, at: &Vector3<f64>| {
        let p = &garment.panels[panel];
        let r = (NEIGHBOURHOOD_SPACINGS * p.spacing[0].max(p.spacing[1])).max(NEIGHBOURHOOD_MIN);
        let (sum, n) = x0[p.first_node..p.first_node + p.nodes]
            .iter()
            .filter(|y| (*y - at).norm() <= r)
            .fold((Vector3::zeros(), 0usize), |(s, n), y| (s + y, n + 1));
        if n == 0 { *at } else { sum / n as f64 }
    };
    let outside = |y: &Vector3<f64>| body.distance(y, 0.0).0 >= clearance;
    garment
        .seams
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let a = x0[t.node];
            let b = x0[t.other[0]] * (1.0 - t.t) + x0[t.other[1]] * t.t;
            let deepest = (0..=PATH_SAMPLES)
                .map(|k| {
                    body.distance(&a.lerp(&b, k as f64 / PATH_SAMPLES as f64), 0.0)
                        .0
                })
                .fold(f64::INFINITY, f64::min);
            if deepest > -MIN_DEPTH {
                return None;
            }
            let m = 0.5 * (a + b);
            let pa = panel_of(t.node)?;
            let pb = panel_of(t.other[0])?;
            let mut d = (a - local_centroid(pa, &a)) + (b - local_centroid(pb, &b));
            if let Some(e) = (b - a).try_normalize(1e-12) {
                d -= e * d.dot(&e);
            }
            let d = d
                .try_normalize(1e-9)
                .unwrap_or_else(|| Vector3::new(0.0, 1.0, 0.0));
            let steps = (MARCH_LIMIT / MARCH_STEP) as usize;
            (1..=steps)
                .map(|k| m + d * (k as f64 * MARCH_STEP))
                .find(|y| outside(y))
                .map(|meeting_point| SeamRoute {
                    tie: i,
                    meeting_point,
                })
        })
        .collect()
}

/// The sewing-phase attachments of `routes`: the yarn end of each routed
/// tie held to its meeting point, as `(node, point)` pairs for
/// `weft_solver::Assembler::attachments` (every yarn end on a stitched
/// edge has its own tie, so both sides of a seam are held).
pub fn route_attachments(garment: &Garment, routes: &[SeamRoute]) -> Vec<(usize, Vector3<f64>)> {
    routes
        .iter()
        .map(|r| (garment.seams[r.tie].node, r.meeting_point))
        .collect()
}

/// Whether the garment hangs from the body above its `labels` edges: some
/// panel's highest placed node is more than `reach` (m) above the highest
/// labelled node (a dress's bodice above its waist seam). Such a garment is
/// held by its upper part; attaching its waist seam where the pattern
/// placed it would pin it below where the upper part can reach.
pub fn has_upper_part(garment: &Garment, q: &[f64], labels: &[&str], reach: f64) -> bool {
    let x = positions(q);
    let top_label = labels
        .iter()
        .flat_map(|l| garment.labelled_nodes(l))
        .map(|n| x[n].y)
        .fold(f64::NEG_INFINITY, f64::max);
    if top_label == f64::NEG_INFINITY {
        return false;
    }
    x.iter().any(|p| p.y > top_label + reach)
}
