//! Weaving one panel: a plain-weave yarn grid clipped to the panel outline,
//! in the panel's own 2D frame.
//!
//! Grain frame: for a grain angle `θ` (counter-clockwise from the panel's
//! local y axis) the warp runs along `w = (-sin θ, cos θ)` and the weft along
//! `f = (cos θ, sin θ)`; `θ = 0` puts the warp along local y and the weft
//! along local x. A point `p` has grain coordinates `a = p·f` (across the
//! warp yarns) and `b = p·w` (along them). Warp yarn lines are `a = i·s_warp`
//! and weft lines `b = j·s_weft` for all integers `i`, `j` that meet the
//! panel: the grid passes through the panel's local origin, so a straight
//! outline edge on a grid line (e.g. a centre-front edge at x = 0) carries a
//! yarn along it, as the edge of a rectangular woven patch does.
//!
//! Each grid line is cut against the closed outline (every crossing of the
//! line with the flattened outline is a candidate cut, and each stretch
//! between candidates whose mid-point is inside or on the outline belongs to
//! a yarn piece), so a concave panel gives several pieces per line. Every
//! piece starts and ends on the outline: there a yarn-end node sits, unless
//! a grid point lies within the merge tolerance of the cut, in which case
//! that grid point is the end (the patch case), or the cut lies on a free
//! (unsewn) edge less than the shortest end segment past the grid point (see
//! [`weave_outline`]), in which case the grid point is the end too. Interior
//! grid points covered by a warp piece and a weft piece are crossings; with
//! the plain weave the warp passes over the weft (`crimp = +1`) where `i + j`
//! is even. A piece that crosses no yarn of the other family (a sliver cut
//! off a corner) is dropped: nothing would hold it in the cloth.
//!
//! Rest arc-length coordinates: `u = b - b_min` along warp pieces and
//! `v = a - a_min` along weft pieces (m), `a_min`, `b_min` the outline's
//! lower bounds, so `u, v ≥ 0` and segments are at rest in the flat panel.

use crate::geometry::{Outline, point_segment};
use std::collections::HashMap;

/// Tolerance for a point on a grid line or on the outline (m).
const EPS: f64 = 1e-9;

/// A cut grid point and a piece end closer than this fraction of the smaller
/// spacing are one node.
pub const MERGE_FRACTION: f64 = 1e-3;

/// One panel woven in its own 2D frame.
#[derive(Clone, Debug, PartialEq)]
pub struct PanelWeave {
    /// Node positions in panel coordinates (m).
    pub nodes: Vec<[f64; 2]>,
    /// Rest `u` per node (m).
    pub u: Vec<f64>,
    /// Rest `v` per node (m).
    pub v: Vec<f64>,
    /// Crimp per node (`±1` at crossings, `0` elsewhere).
    pub crimp: Vec<i8>,
    /// Warp pieces (node lists, `u` increasing).
    pub warp: Vec<Vec<usize>>,
    /// Grid line index `i` of each warp piece.
    pub warp_line: Vec<i64>,
    /// Weft pieces (node lists, `v` increasing).
    pub weft: Vec<Vec<usize>>,
    /// Grid line index `j` of each weft piece.
    pub weft_line: Vec<i64>,
    /// Per node, if it is the end of some yarn piece, the arc-length position
    /// (m) of the closest outline point (the node lies on the outline, or on a
    /// free edge's side of it less than the shortest end segment away), else
    /// `None`.
    pub outline_pos: Vec<Option<f64>>,
    /// Pieces dropped because they cross no yarn of the other family.
    pub dropped_stubs: usize,
}

impl PanelWeave {
    /// Nodes that carry both a warp and a weft yarn.
    pub fn crossings(&self) -> usize {
        let mut on = vec![[false; 2]; self.nodes.len()];
        for p in &self.warp {
            for &n in p {
                on[n][0] = true;
            }
        }
        for p in &self.weft {
            for &n in p {
                on[n][1] = true;
            }
        }
        on.iter().filter(|o| o[0] && o[1]).count()
    }

    /// Nodes that end at least one yarn piece (on or next to the outline).
    pub fn end_nodes(&self) -> usize {
        self.outline_pos.iter().filter(|p| p.is_some()).count()
    }

    /// Shortest rest segment over all pieces (m).
    pub fn shortest_segment(&self) -> f64 {
        let mut m = f64::INFINITY;
        for p in &self.warp {
            for w in p.windows(2) {
                m = m.min(self.u[w[1]] - self.u[w[0]]);
            }
        }
        for p in &self.weft {
            for w in p.windows(2) {
                m = m.min(self.v[w[1]] - self.v[w[0]]);
            }
        }
        m
    }
}

/// The stretches `[y0, y1]` of the line `X = c` inside or on a closed polygon
/// given by points `(X, Y)`, in increasing `Y`, each longer than `min_len`.
pub fn cut_line(poly: &[[f64; 2]], c: f64, min_len: f64) -> Vec<[f64; 2]> {
    let n = poly.len();
    let mut ys = vec![];
    for k in 0..n {
        let (p, q) = (poly[k], poly[(k + 1) % n]);
        let (dp, dq) = (p[0] - c, q[0] - c);
        let (zp, zq) = (dp.abs() <= EPS, dq.abs() <= EPS);
        if zp {
            ys.push(p[1]);
        }
        if zq {
            ys.push(q[1]);
        }
        if !zp && !zq && (dp < 0.0) != (dq < 0.0) {
            ys.push(p[1] + (q[1] - p[1]) * dp / (dp - dq));
        }
    }
    ys.sort_by(f64::total_cmp);
    ys.dedup_by(|a, b| (*a - *b).abs() <= EPS);
    let mut out: Vec<[f64; 2]> = vec![];
    let mut open: Option<[f64; 2]> = None;
    for w in ys.windows(2) {
        let inside = inside_or_on(poly, [c, 0.5 * (w[0] + w[1])]);
        match (inside, open.as_mut()) {
            (true, Some(iv)) => iv[1] = w[1],
            (true, None) => open = Some([w[0], w[1]]),
            (false, Some(_)) => out.extend(open.take()),
            (false, None) => {}
        }
    }
    out.extend(open);
    out.retain(|iv| iv[1] - iv[0] > min_len);
    out
}

/// Point in closed polygon (crossing number), counting points within `EPS`
/// of the boundary as inside.
fn inside_or_on(poly: &[[f64; 2]], p: [f64; 2]) -> bool {
    let n = poly.len();
    let mut inside = false;
    for k in 0..n {
        let (a, b) = (poly[k], poly[(k + 1) % n]);
        if point_segment(p, a, b).0 <= EPS {
            return true;
        }
        if (a[1] > p[1]) != (b[1] > p[1]) {
            let x = a[0] + (p[1] - a[1]) * (b[0] - a[0]) / (b[1] - a[1]);
            if p[0] < x {
                inside = !inside;
            }
        }
    }
    inside
}

/// Where a piece's end lies within `min_end` (m) of its last grid point
/// (but not within `mtol` of it, where the grid point *is* the end), the
/// piece is shortened so that no end segment is shorter than `min_end`: on a
/// stitched end the grid point is taken off the piece (the end stays on the
/// outline, where the seam ties it); on a free end (`free(k)`, an unstitched
/// edge such as a hem) the short stub past the grid point is cut off and the
/// grid point becomes the end, so the crossing stays on both yarns.
///
/// `grid`: indices `g` of the piece's grid points, at `g·s` along the line,
/// increasing; `iv`: the piece's `[start, end]` along the line. Returns the
/// grid points kept and, per end, whether it gets its own end node.
fn trim_piece(
    grid: &[i64],
    iv: [f64; 2],
    s: f64,
    mtol: f64,
    min_end: f64,
    free: impl Fn(usize) -> bool,
) -> (&[i64], [bool; 2]) {
    let mut g = grid;
    let mut own = [true; 2];
    for k in 0..2 {
        while let (Some(&first), Some(&last)) = (g.first(), g.last()) {
            let d = if k == 0 {
                first as f64 * s - iv[0]
            } else {
                iv[1] - last as f64 * s
            };
            if d <= mtol || (d < min_end && free(k)) {
                // The grid point is the end.
                own[k] = false;
                break;
            }
            if d >= min_end {
                break;
            }
            g = if k == 0 { &g[1..] } else { &g[..g.len() - 1] };
        }
    }
    (g, own)
}

/// The node keys of a piece through the grid points `grid` (increasing): an
/// end node at each end `k` with `own[k]` (see [`trim_piece`]); empty when
/// no grid point is left (the piece crosses no other yarn).
fn piece_keys(
    grid: &[i64],
    own: [bool; 2],
    end: impl Fn(u8) -> Key,
    point: impl Fn(i64) -> Key,
) -> Vec<Key> {
    if grid.is_empty() {
        return vec![];
    }
    let mut out = Vec::with_capacity(grid.len() + 2);
    if own[0] {
        out.push(end(0));
    }
    out.extend(grid.iter().map(|&g| point(g)));
    if own[1] {
        out.push(end(1));
    }
    out
}

/// Identity of a node while weaving: a grid point `(i, j)` or the start (0)
/// / end (1) of a warp or weft piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Key {
    Grid(i64, i64),
    WarpEnd(usize, u8),
    WeftEnd(usize, u8),
}

/// Weaves `outline` at `spacing = [warp, weft]` (m: distance between
/// neighbouring warp yarns, between neighbouring weft yarns) with the grain
/// rotated by `grain` radians (see the module docs).
///
/// `min_end` (fraction of the spacing across the yarn's path, in `[0, 1)`):
/// no segment next to a yarn end is shorter than `min_end · s`. Where a yarn
/// end lies closer than that (but not within the merge tolerance) to the
/// last crossing before it:
/// - on an edge with `free_edges[k]` (not sewn: a hem, a neckline, a
///   specimen's rim) the short stub is cut off and the crossing becomes the
///   yarn's end, so the yarn running along that edge keeps its crossings
///   (taking them off it would leave it held at a few points and hanging
///   below the edge);
/// - on any other edge (sewn; `free_edges` shorter than the outline's edge
///   count counts the missing ones as sewn) that crossing is taken off this
///   yarn (the grid point stays on the other yarn) and the end stays on the
///   outline, where a seam ties it.
///
/// An end at a corner is free only if every edge meeting there is. 0 keeps
/// every crossing and every end.
pub fn weave_outline(
    outline: &Outline,
    spacing: [f64; 2],
    grain: f64,
    min_end: f64,
    free_edges: &[bool],
) -> PanelWeave {
    let (sn, cs) = grain.sin_cos();
    let f = [cs, sn];
    let w = [-sn, cs];
    let to_ab = |p: [f64; 2]| [p[0] * f[0] + p[1] * f[1], p[0] * w[0] + p[1] * w[1]];
    let from_ab = |a: f64, b: f64| [a * f[0] + b * w[0], a * f[1] + b * w[1]];
    let ab: Vec<[f64; 2]> = outline.points.iter().map(|&p| to_ab(p)).collect();
    let ba: Vec<[f64; 2]> = ab.iter().map(|p| [p[1], p[0]]).collect();
    let (mut amin, mut amax, mut bmin, mut bmax) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for p in &ab {
        amin = amin.min(p[0]);
        amax = amax.max(p[0]);
        bmin = bmin.min(p[1]);
        bmax = bmax.max(p[1]);
    }
    let [sw, sf] = spacing;
    let mtol = MERGE_FRACTION * sw.min(sf);
    let lines =
        |lo: f64, hi: f64, s: f64| ((lo - EPS) / s).ceil() as i64..=((hi + EPS) / s).floor() as i64;
    // Pieces: (line index, [start, end]) along the line.
    let mut warp_p: Vec<(i64, [f64; 2])> = vec![];
    for i in lines(amin, amax, sw) {
        for iv in cut_line(&ab, i as f64 * sw, mtol) {
            warp_p.push((i, iv));
        }
    }
    let mut weft_p: Vec<(i64, [f64; 2])> = vec![];
    let mut weft_of_line: HashMap<i64, Vec<usize>> = HashMap::new();
    for j in lines(bmin, bmax, sf) {
        for iv in cut_line(&ba, j as f64 * sf, mtol) {
            weft_of_line.entry(j).or_default().push(weft_p.len());
            weft_p.push((j, iv));
        }
    }
    // Grid nodes covered by a warp piece and a weft piece.
    let mut warp_grid: Vec<Vec<i64>> = vec![vec![]; warp_p.len()];
    let mut weft_grid: Vec<Vec<i64>> = vec![vec![]; weft_p.len()];
    for (wp, &(i, [t0, t1])) in warp_p.iter().enumerate() {
        let a = i as f64 * sw;
        let j0 = ((t0 - mtol) / sf).ceil() as i64;
        let j1 = ((t1 + mtol) / sf).floor() as i64;
        for j in j0..=j1 {
            let hit = weft_of_line.get(&j).and_then(|ps| {
                ps.iter().copied().find(|&q| {
                    let [s0, s1] = weft_p[q].1;
                    a >= s0 - mtol && a <= s1 + mtol
                })
            });
            if let Some(q) = hit {
                warp_grid[wp].push(j);
                weft_grid[q].push(i);
            }
        }
    }
    // Whether a piece end (panel coordinates) lies on free edges only.
    let is_free = |p: [f64; 2]| {
        let s = outline.locate(p).1;
        let tol = 1e-7;
        outline.edge_range.iter().enumerate().all(|(k, r)| {
            let on = [s, s - outline.length, s + outline.length]
                .iter()
                .any(|&q| q >= r[0] - tol && q <= r[1] + tol);
            !on || free_edges.get(k).copied().unwrap_or(false)
        })
    };
    let mut dropped = 0;
    let mut warp_keys: Vec<(i64, Vec<Key>)> = vec![];
    for (wp, &(i, iv)) in warp_p.iter().enumerate() {
        let a = i as f64 * sw;
        // Whether an end is free is asked only where it lies near a crossing.
        let free = |k: usize| is_free(from_ab(a, iv[k]));
        let (grid, own) = trim_piece(&warp_grid[wp], iv, sf, mtol, min_end * sf, free);
        let ks = piece_keys(grid, own, |e| Key::WarpEnd(wp, e), |j| Key::Grid(i, j));
        if ks.len() >= 2 {
            warp_keys.push((i, ks));
        } else {
            dropped += 1;
        }
    }
    let mut weft_keys: Vec<(i64, Vec<Key>)> = vec![];
    for (q, &(j, iv)) in weft_p.iter().enumerate() {
        let mut g = weft_grid[q].clone();
        g.sort_unstable();
        let b = j as f64 * sf;
        let free = |k: usize| is_free(from_ab(iv[k], b));
        let (grid, own) = trim_piece(&g, iv, sw, mtol, min_end * sw, free);
        let ks = piece_keys(grid, own, |e| Key::WeftEnd(q, e), |i| Key::Grid(i, j));
        if ks.len() >= 2 {
            weft_keys.push((j, ks));
        } else {
            dropped += 1;
        }
    }
    // Trimming is per family, so a piece may keep a grid point that the
    // crossing piece dropped; a piece that crosses no piece of the other
    // family would hang free (and fall away from the garment): drop it, and
    // repeat, since that can leave other pieces without a crossing.
    loop {
        let grid_of = |pieces: &[(i64, Vec<Key>)]| -> std::collections::HashSet<Key> {
            pieces
                .iter()
                .flat_map(|(_, ks)| ks.iter().copied())
                .filter(|k| matches!(k, Key::Grid(..)))
                .collect()
        };
        let (on_warp, on_weft) = (grid_of(&warp_keys), grid_of(&weft_keys));
        let before = warp_keys.len() + weft_keys.len();
        warp_keys.retain(|(_, ks)| ks.iter().any(|k| on_weft.contains(k)));
        weft_keys.retain(|(_, ks)| ks.iter().any(|k| on_warp.contains(k)));
        let after = warp_keys.len() + weft_keys.len();
        dropped += before - after;
        if after == before {
            break;
        }
    }
    // Allocate nodes.
    let mut id: HashMap<Key, usize> = HashMap::new();
    let mut keys: Vec<Key> = vec![];
    let mut on = vec![];
    for (fam, pieces) in [&warp_keys, &weft_keys].into_iter().enumerate() {
        for (_, ks) in pieces {
            for k in ks {
                let n = *id.entry(*k).or_insert_with(|| {
                    keys.push(*k);
                    on.push([false; 2]);
                    keys.len() - 1
                });
                on[n][fam] = true;
            }
        }
    }
    let mut out = PanelWeave {
        nodes: Vec::with_capacity(keys.len()),
        u: Vec::with_capacity(keys.len()),
        v: Vec::with_capacity(keys.len()),
        crimp: Vec::with_capacity(keys.len()),
        warp: vec![],
        warp_line: vec![],
        weft: vec![],
        weft_line: vec![],
        outline_pos: vec![None; keys.len()],
        dropped_stubs: dropped,
    };
    for (n, k) in keys.iter().enumerate() {
        let (a, b, crimp) = match *k {
            Key::Grid(i, j) => {
                let c = if on[n][0] && on[n][1] {
                    if (i + j).rem_euclid(2) == 0 { 1 } else { -1 }
                } else {
                    0
                };
                (i as f64 * sw, j as f64 * sf, c)
            }
            Key::WarpEnd(p, e) => (warp_p[p].0 as f64 * sw, warp_p[p].1[e as usize], 0),
            Key::WeftEnd(q, e) => (weft_p[q].1[e as usize], weft_p[q].0 as f64 * sf, 0),
        };
        out.nodes.push(from_ab(a, b));
        out.u.push(b - bmin);
        out.v.push(a - amin);
        out.crimp.push(crimp);
    }
    for (line, ks) in warp_keys {
        out.warp.push(ks.iter().map(|k| id[k]).collect());
        out.warp_line.push(line);
    }
    for (line, ks) in weft_keys {
        out.weft.push(ks.iter().map(|k| id[k]).collect());
        out.weft_line.push(line);
    }
    for piece in out.warp.iter().chain(&out.weft) {
        for n in [piece[0], piece[piece.len() - 1]] {
            if out.outline_pos[n].is_none() {
                out.outline_pos[n] = Some(outline.locate(out.nodes[n]).1);
            }
        }
    }
    debug_assert!(out.nodes.iter().all(|p| p.iter().all(|c| c.is_finite())));
    out
}
