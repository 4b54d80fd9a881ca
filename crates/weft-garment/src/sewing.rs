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
//!
//! A tube (a sleeve: two panels sewn along the over-arm and the underarm
//! edges) has the opposite problem: its straight paths pass *beside* the
//! limb, not through it, so nothing routes them. The pattern places the
//! over-arm edges a few centimetres above the arm and the underarm edges
//! further below it; pulled straight, the over-arm seam closes first, as a
//! fin above the arm, and takes up the sleeve's circumference, so the
//! underarm edges stop on the front and the back of the arm, 6 to 8 cm
//! apart (issue 22, the shirt's underarm). [`tube_routes`] gives such ties
//! a meeting point on the body beside their path, so each seam of the tube
//! closes against the limb.

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
/// A tube's tie is routed when its straight path comes this close (m) to
/// the body ([`tube_routes`]): a sleeve's edges are placed 3 to 7 cm from
/// the arm.
pub const TUBE_NEAR: f64 = 0.05;
/// A tube's tie is routed only when its path runs along the body there:
/// `|n · e|` below this, `n` the body's normal at the path's closest point
/// and `e` the tie's direction (a tie pointing at the body closes by
/// itself).
const TUBE_MAX_COSINE: f64 = 0.5;
/// A tube's tie is routed only where the body's surface beside its path
/// faces up or down (`|n_y| ≥` this, `y` up): over or under a limb, or in
/// an armpit. Beside an upright part (a hip, a thigh) the seam hangs
/// along the body once gravity is on, and pulling it in changes the
/// drape: the shipped A-line skirt's side seams, routed at the hips,
/// moved its hem 6 cm between levels and left 27 yarn segments through
/// its fabric at 30 mm.
const TUBE_MIN_VERTICAL: f64 = 0.5;
/// A tube's tie is routed only when another seam of the same two panels
/// lies across the limb from it: a yarn end of that seam within this
/// distance (m) of the path's closest point to the body, in the direction
/// into the body (`-n`, within [`TUBE_ACROSS_COSINE`]). A sleeve's over-arm
/// and underarm seams are 15 to 20 cm apart across the arm; a bodice's
/// side and shoulder seams, or a skirt's two side seams, are farther
/// apart or not across one limb.
const TUBE_ACROSS: f64 = 0.3;
/// Cosine of the largest angle between `-n` and the direction to the
/// other seam's yarn end ([`TUBE_ACROSS`]).
const TUBE_ACROSS_COSINE: f64 = 0.7;

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
            let (a, b) = (x0[t.node], t.target(x0));
            if closest_on_path(body, &a, &b).0 > -MIN_DEPTH {
                return None;
            }
            let m = 0.5 * (a + b);
            let pa = garment.panel_of(t.node)?;
            let pb = garment.panel_of(t.other[0])?;
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

/// Routes for the ties of a tube of `garment` (two panels sewn to each other
/// along two or more stitches: a sleeve's front and back) whose straight
/// path, at the placed positions `x0` (m, one per node), runs beside the
/// body instead of through it: the path's closest sample to the body
/// (`body`, signed distance `φ`) is an interior one, `clearance < φ <`
/// [`TUBE_NEAR`], the body's normal `n` there is within 60° of
/// perpendicular to the tie (`|n · e| < 0.5`) and at least 30° from
/// horizontal (`|n_y| ≥ 0.5`, `y` up: over or under a limb, not beside a
/// hip), a yarn end of another seam of the same two panels lies across the
/// limb (within 0.3 m of the closest sample, within 45.6° of
/// `-n`), and the tie is longer than `2φ`. The meeting point is that
/// closest sample moved along `-n` to `clearance` outside the body, so each
/// seam of the tube closes against the limb instead of pulling straight
/// past it. Ties that [`seam_routes`] routes (paths more than
/// [`MIN_DEPTH`] inside) and ties between panels sewn along one stitch
/// only (a sleeve set into its armhole) get none.
///
/// On the shared patterns on `mean_all.obj` this routes the over-arm ties
/// of GarmentCode's shirt's sleeves (8 and 10 of them at 40 mm) and none of
/// the pencil dress, hoody or skirts (BENCHMARKS, 2026-11-27). Used by
/// both the implicit drape (yarn and shell models) and the SBD drape.
pub fn tube_routes(
    garment: &Garment,
    x0: &[Vector3<f64>],
    body: &Collider,
    clearance: f64,
) -> Vec<SeamRoute> {
    // The ties joining each unordered pair of panels.
    let mut pairs: std::collections::BTreeMap<(usize, usize), Vec<usize>> =
        std::collections::BTreeMap::new();
    for (i, t) in garment.seams.iter().enumerate() {
        if let (Some(pa), Some(pb)) = (garment.panel_of(t.node), garment.panel_of(t.other[0]))
            && pa != pb
        {
            pairs.entry((pa.min(pb), pa.max(pb))).or_default().push(i);
        }
    }
    garment
        .seams
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let (pa, pb) = (garment.panel_of(t.node)?, garment.panel_of(t.other[0])?);
            let pair = pairs.get(&(pa.min(pb), pa.max(pb)))?;
            let (a, b) = (x0[t.node], t.target(x0));
            let (phi, k, n) = closest_on_path(body, &a, &b);
            let e = (b - a).try_normalize(1e-12)?;
            let p = a.lerp(&b, k as f64 / PATH_SAMPLES as f64);
            // The tube's other seam lies across the limb from this one.
            let across = pair.iter().any(|&j| {
                let w = x0[garment.seams[j].node] - p;
                garment.seams[j].stitch != t.stitch
                    && w.norm() < TUBE_ACROSS
                    && -w.dot(&n) > TUBE_ACROSS_COSINE * w.norm()
            });
            (phi > clearance
                && phi < TUBE_NEAR
                && k > 0
                && k < PATH_SAMPLES
                && n.dot(&e).abs() < TUBE_MAX_COSINE
                && n.y.abs() >= TUBE_MIN_VERTICAL
                && across
                && (b - a).norm() > 2.0 * phi)
                .then(|| SeamRoute {
                    tie: i,
                    meeting_point: p - n * (phi - clearance),
                })
        })
        .collect()
}

/// Every sewing route of `garment` at the placed positions `x0`: the ties
/// routed over the body ([`seam_routes`]) and a tube's ties routed onto
/// the limb ([`tube_routes`]), with the same `body` and `clearance` (m).
/// The one policy the implicit and the SBD drapes both sew with.
pub fn sewing_routes(
    garment: &Garment,
    x0: &[Vector3<f64>],
    body: &Collider,
    clearance: f64,
) -> Vec<SeamRoute> {
    let mut routes = seam_routes(garment, x0, body, clearance);
    routes.extend(tube_routes(garment, x0, body, clearance));
    routes
}

/// The smallest signed distance (m) of the body over [`PATH_SAMPLES`] + 1
/// samples of the straight path from `a` to `b`, the sample's index (the
/// first of equal minima) and the body's outward normal there.
fn closest_on_path(
    body: &Collider,
    a: &Vector3<f64>,
    b: &Vector3<f64>,
) -> (f64, usize, Vector3<f64>) {
    (0..=PATH_SAMPLES)
        .map(|k| {
            let (d, n) = body.distance(&a.lerp(b, k as f64 / PATH_SAMPLES as f64), 0.0);
            (d, k, n)
        })
        .fold((f64::INFINITY, 0, Vector3::zeros()), |m, d| {
            if d.0 < m.0 { d } else { m }
        })
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
