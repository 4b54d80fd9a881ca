//! Broad phase of yarn self-collision: a uniform spatial hash grid written as
//! a data-parallel algorithm (DESIGN §6, §7), and the exclusion of segment
//! pairs that are neighbours in the weave.
//!
//! **Algorithm** (every step is a map, a sort or a scan, so a GPU runs the
//! same steps with a radix sort and prefix sums):
//!
//! 1. *map*: per segment, its axis-aligned box grown by `d0/2` on every side
//!    (two segments closer than `d0` have overlapping boxes) and the range of
//!    grid cells (edge `h ≥ d0`) the box covers;
//! 2. *map + scan + scatter*: one `(cell key, segment)` entry per covered
//!    cell (count per segment, exclusive prefix sum for the offsets, write);
//!    the key packs the integer cell coordinates, 21 bits each, wrapping
//!    (i.e. a hash: two distinct cells may share a key, which only adds
//!    candidates that the exact box test removes);
//! 3. *sort* the entries by `(key, segment)`;
//! 4. *scan* for the starts of runs of equal keys;
//! 5. *map over runs*: every pair `i < j` of distinct segments in a run whose
//!    boxes overlap, that is not excluded, and for which this run's key is
//!    the key of the cell holding the minimum corner of the two boxes'
//!    intersection (that cell is covered by both boxes, so each pair is
//!    produced by exactly one run: no duplicates, no global hash set);
//! 6. *sort* the pairs: the output is ordered by `(i, j)`, identical on every
//!    run and for any number of threads.
//!
//! With the default cell size, `h = d0 + ` the largest coordinate extent of
//! any segment, a box covers at most 2 cells per axis (8 entries per
//! segment). Non-finite positions produce no candidates.
//!
//! **Exclusion.** Pairs of segments that are neighbours in the weave are not
//! self-collisions: their geometry is held by the elastic elements (stretch,
//! bending, shear, parallel contact) and at rest they are closer than `d0`.
//! A pair is excluded when some end node of one segment is at most `k` hops
//! from some end node of the other in the fabric graph (nodes joined by
//! segments); `k = 0` excludes only segments sharing a node.
//! The default [`DEFAULT_EXCLUSION_HOPS`] `= 2` excludes segments sharing a
//! node, consecutive and next-but-one segments along a yarn, and segments of
//! adjacent and next-adjacent parallel yarns near a common crossing, which
//! covers every element stencil (a bending triplet spans 2 hops, a shear
//! element 2 hops) with one crossing to spare.

use super::error::CollideError;
use super::faces::{FaceClosest, closest_on_triangle, on_normal_side};
use super::segments::{ClosestPoints, closest_points};
use nalgebra::{SVector, Vector3};
use rayon::prelude::*;
use weft_core::Fabric;

/// Default hop distance of the neighbour exclusion (see the module docs).
pub const DEFAULT_EXCLUSION_HOPS: usize = 2;

/// An undirected graph on nodes, compressed-row (the fabric's yarn graph).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeGraph {
    offsets: Vec<usize>,
    neighbors: Vec<u32>,
}

impl NodeGraph {
    /// Graph on `node_count` nodes with an undirected edge per `[a, b]`
    /// (duplicates and self-loops ignored).
    ///
    /// # Errors
    /// [`CollideError::SelfCollision`] for a node index `≥ node_count`.
    pub fn from_edges(node_count: usize, edges: &[[usize; 2]]) -> Result<Self, CollideError> {
        let mut lists = vec![Vec::new(); node_count];
        for (k, &[a, b]) in edges.iter().enumerate() {
            if a >= node_count || b >= node_count {
                return Err(CollideError::SelfCollision(format!(
                    "edge {k} [{a}, {b}] names a node beyond the {node_count} nodes"
                )));
            }
            if a != b {
                lists[a].push(b);
                lists[b].push(a);
            }
        }
        Self::from_adjacency(&lists)
    }

    /// Graph from per-node neighbour lists (symmetrised: an edge listed at
    /// either end counts).
    ///
    /// # Errors
    /// [`CollideError::SelfCollision`] for a neighbour index out of range.
    pub fn from_adjacency(lists: &[Vec<usize>]) -> Result<Self, CollideError> {
        let n = lists.len();
        let mut sym: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (a, l) in lists.iter().enumerate() {
            for &b in l {
                if b >= n {
                    return Err(CollideError::SelfCollision(format!(
                        "node {a} lists neighbour {b} beyond the {n} nodes"
                    )));
                }
                if a != b {
                    sym[a].push(b as u32);
                    sym[b].push(a as u32);
                }
            }
        }
        let mut offsets = Vec::with_capacity(n + 1);
        let mut neighbors = Vec::new();
        offsets.push(0);
        for mut l in sym {
            l.sort_unstable();
            l.dedup();
            neighbors.extend(l);
            offsets.push(neighbors.len());
        }
        Ok(NodeGraph { offsets, neighbors })
    }

    /// The yarn graph of a fabric: its nodes joined by its segments
    /// (`elements.segments`, warp and weft).
    pub fn from_fabric(fabric: &Fabric) -> Self {
        let edges: Vec<[usize; 2]> = fabric.segment_ends();
        Self::from_edges(fabric.node_count(), &edges).expect("fabric segments name fabric nodes")
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Sorted neighbours of `node`.
    pub fn neighbors(&self, node: usize) -> &[u32] {
        &self.neighbors[self.offsets[node]..self.offsets[node + 1]]
    }
}

/// Per node, the sorted set of nodes at most `k` hops away (itself
/// included): the neighbour exclusion of self-collision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exclusion {
    hops: usize,
    offsets: Vec<usize>,
    near: Vec<u32>,
}

impl Exclusion {
    /// Exclusion sets within `hops` hops of every node of `graph`
    /// (breadth-first search per node, in parallel).
    pub fn new(graph: &NodeGraph, hops: usize) -> Self {
        let sets: Vec<Vec<u32>> = (0..graph.node_count())
            .into_par_iter()
            .map(|start| {
                let mut set = vec![start as u32];
                let mut frontier = vec![start as u32];
                for _ in 0..hops {
                    let mut next = Vec::new();
                    for &v in &frontier {
                        for &w in graph.neighbors(v as usize) {
                            if !set.contains(&w) && !next.contains(&w) {
                                next.push(w);
                            }
                        }
                    }
                    set.extend_from_slice(&next);
                    frontier = next;
                }
                set.sort_unstable();
                set
            })
            .collect();
        Self::from_sets(hops, sets)
    }

    /// The exclusion from per-node sorted sets (flattened compressed-row).
    fn from_sets(hops: usize, sets: Vec<Vec<u32>>) -> Self {
        let mut offsets = Vec::with_capacity(sets.len() + 1);
        let mut near = Vec::new();
        offsets.push(0);
        for s in sets {
            near.extend(s);
            offsets.push(near.len());
        }
        Exclusion {
            hops,
            offsets,
            near,
        }
    }

    /// Exclusion sets by rest distance: per node, the nodes whose shortest
    /// path through `edges` (`([a, b], length)`, lengths ≥ 0 in m, e.g. rest
    /// segment lengths, and 0 for a seam tie) is at most `radius` (m).
    /// Bounded Dijkstra per node, in parallel. Unlike hops, the set covers
    /// the same fabric area on a panel woven finer than its neighbours (a
    /// narrow panel), which a thickness tied to the garment's spacing needs.
    /// [`Self::hops`] is `usize::MAX` for such an exclusion.
    ///
    /// # Errors
    /// [`CollideError::SelfCollision`] for a node index `≥ node_count`, or a
    /// length or `radius` negative or not finite.
    pub fn within_distance(
        node_count: usize,
        edges: &[([usize; 2], f64)],
        radius: f64,
    ) -> Result<Self, CollideError> {
        if !(radius >= 0.0 && radius.is_finite()) {
            return Err(CollideError::SelfCollision(format!(
                "expected an exclusion radius >= 0 m, got {radius}"
            )));
        }
        let mut lists: Vec<Vec<(u32, f64)>> = vec![Vec::new(); node_count];
        for (k, &([a, b], w)) in edges.iter().enumerate() {
            if a >= node_count || b >= node_count || !(w >= 0.0 && w.is_finite()) {
                return Err(CollideError::SelfCollision(format!(
                    "edge {k} [{a}, {b}] of length {w} m: expected nodes below {node_count} and a finite length >= 0"
                )));
            }
            if a != b {
                lists[a].push((b as u32, w));
                lists[b].push((a as u32, w));
            }
        }
        let sets: Vec<Vec<u32>> = (0..node_count)
            .into_par_iter()
            .map(|start| {
                // Dijkstra with a small linear-scan frontier: the sets are a
                // few dozen nodes.
                let mut done: Vec<u32> = Vec::new();
                let mut open: Vec<(u32, f64)> = vec![(start as u32, 0.0)];
                while let Some(k) = (0..open.len()).min_by(|&i, &j| open[i].1.total_cmp(&open[j].1))
                {
                    let (v, d) = open.swap_remove(k);
                    done.push(v);
                    for &(w, len) in &lists[v as usize] {
                        let dw = d + len;
                        if dw > radius || done.contains(&w) {
                            continue;
                        }
                        match open.iter_mut().find(|e| e.0 == w) {
                            Some(e) => e.1 = e.1.min(dw),
                            None => open.push((w, dw)),
                        }
                    }
                }
                done.sort_unstable();
                done
            })
            .collect();
        Ok(Self::from_sets(usize::MAX, sets))
    }

    /// The hop distance `k` (`usize::MAX` for [`Self::within_distance`]).
    pub fn hops(&self) -> usize {
        self.hops
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether nodes `a` and `b` are at most `k` hops apart.
    pub fn near(&self, a: usize, b: usize) -> bool {
        self.near[self.offsets[a]..self.offsets[a + 1]]
            .binary_search(&(b as u32))
            .is_ok()
    }

    /// Whether the segment pair `p = [a, b]`, `q = [c, d]` (end nodes) is
    /// excluded: some end of `p` within `k` hops of some end of `q`.
    pub fn excludes(&self, p: [usize; 2], q: [usize; 2]) -> bool {
        p.iter().any(|&a| q.iter().any(|&b| self.near(a, b)))
    }
}

/// A segment pair closer than `d0`, found by [`SelfCollision::contacts`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SegmentContact {
    /// Segment indices `[i, j]`, `i < j` (into [`SelfCollision::segments`]).
    pub segments: [usize; 2],
    /// End nodes `[p0, p1, q0, q1]` (segment `i`'s then segment `j`'s): the
    /// node layout of [`super::repulsion`]'s 12 coordinates.
    pub nodes: [usize; 4],
    /// Closest points at detection.
    pub closest: ClosestPoints,
}

impl SegmentContact {
    /// The 12 coordinates `[p0, p1, q0, q1]` gathered from positions `x`.
    pub fn coords(&self, x: &[Vector3<f64>]) -> SVector<f64, 12> {
        let mut q = SVector::<f64, 12>::zeros();
        for (k, &n) in self.nodes.iter().enumerate() {
            q.fixed_rows_mut::<3>(3 * k).copy_from(&x[n]);
        }
        q
    }
}

/// A vertex and a triangle closer than `d0`, found by
/// [`SelfCollision::face_contacts`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FaceContact {
    /// The face's index (into [`SelfCollision::faces`]).
    pub face: usize,
    /// Nodes `[p, a, b, c]` (the vertex, then the face's corners): the node
    /// layout of [`super::face_repulsion`]'s 12 coordinates, oriented so
    /// that at detection the vertex is on the side of `(b - a) × (c - a)`
    /// ([`super::faces::on_normal_side`]; the face's second and third
    /// corners swapped when not), the side the repulsion keeps it on.
    pub nodes: [usize; 4],
    /// Closest point at detection, its weights in the order of `nodes`'
    /// corners.
    pub closest: FaceClosest,
}

/// Self-collision detection for a fixed set of segments (edge–edge pairs)
/// and, for triangle-mesh cloth, faces (vertex–face pairs): built once per
/// fabric, queried per Newton iteration or per step.
#[derive(Clone, Debug)]
pub struct SelfCollision {
    segments: Vec<[usize; 2]>,
    faces: Vec<[usize; 3]>,
    exclusion: Exclusion,
    d0: f64,
    cell_size: Option<f64>,
}

impl SelfCollision {
    /// Detection for `segments` (end-node pairs) with interaction distance
    /// `d0 = 2R + margin` (m) and the neighbour `exclusion`.
    ///
    /// # Errors
    /// [`CollideError::SelfCollision`] for `d0` not finite and > 0, or a
    /// segment naming a node the exclusion does not know.
    pub fn new(
        segments: Vec<[usize; 2]>,
        exclusion: Exclusion,
        d0: f64,
    ) -> Result<Self, CollideError> {
        if !(d0 > 0.0 && d0.is_finite()) {
            return Err(CollideError::SelfCollision(format!(
                "expected an interaction distance d0 > 0 m, got {d0}"
            )));
        }
        let n = exclusion.node_count();
        if let Some((k, s)) = segments
            .iter()
            .enumerate()
            .find(|(_, s)| s[0] >= n || s[1] >= n)
        {
            return Err(CollideError::SelfCollision(format!(
                "segment {k} {s:?} names a node beyond the {n} nodes of the graph"
            )));
        }
        Ok(SelfCollision {
            segments,
            faces: Vec::new(),
            exclusion,
            d0,
            cell_size: None,
        })
    }

    /// Adds vertex–face detection against the triangles `faces` (corner
    /// nodes): every node of the exclusion's graph against every face, but
    /// for a face's own corners and the nodes the exclusion joins to one
    /// of them.
    ///
    /// # Errors
    /// [`CollideError::SelfCollision`] for a face naming a node the
    /// exclusion does not know.
    pub fn with_faces(mut self, faces: Vec<[usize; 3]>) -> Result<Self, CollideError> {
        let n = self.exclusion.node_count();
        if let Some((k, f)) = faces
            .iter()
            .enumerate()
            .find(|(_, f)| f.iter().any(|&c| c >= n))
        {
            return Err(CollideError::SelfCollision(format!(
                "face {k} {f:?} names a node beyond the {n} nodes of the graph"
            )));
        }
        self.faces = faces;
        Ok(self)
    }

    /// The faces of vertex–face detection (empty unless
    /// [`Self::with_faces`]).
    pub fn faces(&self) -> &[[usize; 3]] {
        &self.faces
    }

    /// Detection over all segments of `fabric` (in `elements.segments`
    /// order), excluding pairs within `hops` hops in its yarn graph.
    ///
    /// # Errors
    /// As [`Self::new`].
    pub fn from_fabric(fabric: &Fabric, d0: f64, hops: usize) -> Result<Self, CollideError> {
        let exclusion = Exclusion::new(&NodeGraph::from_fabric(fabric), hops);
        let segs = fabric.segment_ends();
        Self::new(segs, exclusion, d0)
    }

    /// Fixes the grid cell edge (m) instead of the default (see the module
    /// docs); values below `d0` are raised to `d0`. A cell much smaller than
    /// the segments makes each segment cover many cells.
    pub fn with_cell_size(mut self, cell_size: f64) -> Self {
        self.cell_size = Some(cell_size.max(self.d0));
        self
    }

    /// The segments, as end-node pairs.
    pub fn segments(&self) -> &[[usize; 2]] {
        &self.segments
    }

    /// The interaction distance `d0` (m).
    pub fn d0(&self) -> f64 {
        self.d0
    }

    /// The neighbour exclusion.
    pub fn exclusion(&self) -> &Exclusion {
        &self.exclusion
    }

    /// Broad phase: all non-excluded segment pairs `[i, j]`, `i < j`, whose
    /// boxes grown by `d0/2` overlap, sorted; a superset of the pairs closer
    /// than `d0`. `x` are the node positions (m).
    pub fn candidates(&self, x: &[Vector3<f64>]) -> Vec<[usize; 2]> {
        broad_phase(x, &self.segments, self.d0, self.cell_size, &self.exclusion)
    }

    /// Narrow phase on [`Self::candidates`]: the pairs whose closest
    /// distance is below `d0`, in the same sorted order.
    pub fn contacts(&self, x: &[Vector3<f64>]) -> Vec<SegmentContact> {
        self.candidates(x)
            .par_iter()
            .filter_map(|&[i, j]| {
                let ([a, b], [c, d]) = (self.segments[i], self.segments[j]);
                let cp = closest_points(&x[a], &x[b], &x[c], &x[d]);
                (cp.distance < self.d0).then_some(SegmentContact {
                    segments: [i, j],
                    nodes: [a, b, c, d],
                    closest: cp,
                })
            })
            .collect()
    }

    /// Vertex–face narrow phase on [`face_broad_phase`] over all nodes of
    /// `x` (m) and [`Self::faces`]: the pairs whose distance is below `d0`,
    /// sorted by vertex then face. Empty without faces.
    pub fn face_contacts(&self, x: &[Vector3<f64>]) -> Vec<FaceContact> {
        self.face_contacts_within(x, self.d0)
    }

    /// [`Self::face_contacts`] within `distance` (m) instead of `d0`: a
    /// caller whose nodes move less at times searches less (the broad
    /// phase's cost grows with the distance).
    pub fn face_contacts_within(&self, x: &[Vector3<f64>], distance: f64) -> Vec<FaceContact> {
        if self.faces.is_empty() {
            return Vec::new();
        }
        face_broad_phase(x, &self.faces, distance, self.cell_size, &self.exclusion)
            .par_iter()
            .filter_map(|&[v, f]| {
                let [a, b, c] = self.faces[f];
                let mut cl = closest_on_triangle(&x[v], &x[a], &x[b], &x[c]);
                if cl.distance >= distance {
                    return None;
                }
                // Swapping the corners swaps their weights with them.
                let nodes = if on_normal_side(&x[v], &x[a], &x[b], &x[c]) {
                    [v, a, b, c]
                } else {
                    cl.weights.swap(1, 2);
                    [v, a, c, b]
                };
                Some(FaceContact {
                    face: f,
                    nodes,
                    closest: cl,
                })
            })
            .collect()
    }

    /// Layer pass-through: the pairs `[segment, face]` (indices into
    /// [`Self::segments`] and [`Self::faces`]) where the segment cuts the
    /// face ([`super::segment_triangle_intersection`]) and no end of the
    /// segment is a corner of the face or excluded from one, sorted. `x`
    /// are the node positions (m). Empty without faces. Broad phase: the
    /// segments' and faces' boxes in one spatial hash ([`broad_phase`]'s
    /// steps).
    pub fn crossings(&self, x: &[Vector3<f64>]) -> Vec<[usize; 2]> {
        if self.faces.is_empty() {
            return Vec::new();
        }
        let ns = self.segments.len();
        let boxes: Vec<(Vector3<f64>, Vector3<f64>)> = self
            .segments
            .par_iter()
            .map(|&[a, b]| (x[a].inf(&x[b]), x[a].sup(&x[b])))
            .chain(
                self.faces
                    .par_iter()
                    .map(|&[a, b, c]| (x[a].inf(&x[b]).inf(&x[c]), x[a].sup(&x[b]).sup(&x[c]))),
            )
            .collect();
        // Segments come first, so a segment–face pair is `(e, ns + f)`.
        let near = |e: usize, f: usize| {
            self.segments[e]
                .iter()
                .any(|&v| self.faces[f].iter().any(|&c| self.exclusion.near(v, c)))
        };
        box_pairs(&boxes, self.d0, self.cell_size, Some(ns), |i, j| {
            i < ns && j >= ns && !near(i, j - ns)
        })
        .into_par_iter()
        .filter(|&[e, f]| {
            let ([a, b], [c0, c1, c2]) = (self.segments[e], self.faces[f - ns]);
            super::segment_triangle_intersection(&x[a], &x[b], [&x[c0], &x[c1], &x[c2]]).is_some()
        })
        .map(|[e, f]| [e, f - ns])
        .collect()
    }
}

type Cell = [i64; 3];

fn cell_of(p: &Vector3<f64>, h: f64) -> Cell {
    [
        (p.x / h).floor() as i64,
        (p.y / h).floor() as i64,
        (p.z / h).floor() as i64,
    ]
}

fn key(c: Cell) -> u64 {
    const M: u64 = (1 << 21) - 1;
    (c[0] as u64 & M) | ((c[1] as u64 & M) << 21) | ((c[2] as u64 & M) << 42)
}

/// The spatial-hash broad phase (see the module docs): sorted non-excluded
/// pairs `[i, j]`, `i < j`, of `segments` (end-node pairs into `x`) whose
/// boxes grown by `d0/2` overlap. `cell_size` `None` picks the default.
pub fn broad_phase(
    x: &[Vector3<f64>],
    segments: &[[usize; 2]],
    d0: f64,
    cell_size: Option<f64>,
    exclusion: &Exclusion,
) -> Vec<[usize; 2]> {
    let r = Vector3::repeat(0.5 * d0);
    let boxes: Vec<(Vector3<f64>, Vector3<f64>)> = segments
        .par_iter()
        .map(|&[a, b]| (x[a].inf(&x[b]) - r, x[a].sup(&x[b]) + r))
        .collect();
    box_pairs(&boxes, d0, cell_size, None, |i, j| {
        !exclusion.excludes(segments[i], segments[j])
    })
}

/// The vertex–face broad phase: sorted pairs `[v, f]` of a vertex `v`
/// (index into `x`) and a face `f` (index into `faces`, corner nodes into
/// `x`) whose boxes grown by `d0/2` overlap, where `v` is no corner of the
/// face and `exclusion` does not join `v` to any corner. The same steps as
/// [`broad_phase`] over the vertices' and faces' boxes together.
pub fn face_broad_phase(
    x: &[Vector3<f64>],
    faces: &[[usize; 3]],
    d0: f64,
    cell_size: Option<f64>,
    exclusion: &Exclusion,
) -> Vec<[usize; 2]> {
    let r = Vector3::repeat(0.5 * d0);
    let nv = x.len();
    let boxes: Vec<(Vector3<f64>, Vector3<f64>)> = x
        .par_iter()
        .map(|p| (p - r, p + r))
        .chain(faces.par_iter().map(|&[a, b, c]| {
            (
                x[a].inf(&x[b]).inf(&x[c]) - r,
                x[a].sup(&x[b]).sup(&x[c]) + r,
            )
        }))
        .collect();
    // Vertices come first, so a vertex–face pair is `(v, nv + f)`.
    box_pairs(&boxes, d0, cell_size, Some(nv), |i, j| {
        i < nv && j >= nv && !faces[j - nv].iter().any(|&c| exclusion.near(i, c))
    })
    .into_iter()
    .map(|[v, f]| [v, f - nv])
    .collect()
}

/// Steps 2–6 of the broad phase (module docs) on given boxes: the sorted
/// pairs `[i, j]`, `i < j`, of overlapping boxes that `accept`. With
/// `split = Some(s)` only pairs `i < s ≤ j` are considered (two sets of
/// boxes, e.g. vertices then faces: a cell's boxes of one set are never
/// tested against each other).
fn box_pairs(
    boxes: &[(Vector3<f64>, Vector3<f64>)],
    d0: f64,
    cell_size: Option<f64>,
    split: Option<usize>,
    accept: impl Fn(usize, usize) -> bool + Sync,
) -> Vec<[usize; 2]> {
    let h = cell_size.unwrap_or_else(|| {
        let ext = boxes
            .par_iter()
            .map(|(lo, hi)| (hi - lo).max())
            .filter(|e| e.is_finite())
            .reduce(|| 0.0, f64::max);
        ext.max(d0)
    });
    // 2. (key, segment) entries; rayon's ordered collect is the count /
    // exclusive-scan / scatter of the GPU version.
    let mut entries: Vec<(u64, u32)> = boxes
        .par_iter()
        .enumerate()
        .flat_map_iter(|(i, (lo, hi))| {
            let finite = lo.iter().chain(hi.iter()).all(|c| c.is_finite());
            let (cl, ch) = if finite {
                (cell_of(lo, h), cell_of(hi, h))
            } else {
                ([0; 3], [-1; 3])
            };
            (cl[0]..=ch[0]).flat_map(move |cx| {
                (cl[1]..=ch[1]).flat_map(move |cy| {
                    (cl[2]..=ch[2]).map(move |cz| (key([cx, cy, cz]), i as u32))
                })
            })
        })
        .collect();
    // 3. Sort by (key, segment).
    entries.par_sort_unstable();
    // 4. Run starts.
    let starts: Vec<usize> = (0..entries.len())
        .into_par_iter()
        .filter(|&k| k == 0 || entries[k].0 != entries[k - 1].0)
        .collect();
    // 5. Pairs per run, each produced by exactly one run.
    let mut pairs: Vec<[usize; 2]> = (0..starts.len())
        .into_par_iter()
        .flat_map_iter(|ri| {
            let begin = starts[ri];
            let end = starts.get(ri + 1).copied().unwrap_or(entries.len());
            let run_key = entries[begin].0;
            let mut segs: Vec<usize> = entries[begin..end].iter().map(|e| e.1 as usize).collect();
            segs.dedup();
            let mut out = Vec::new();
            // `segs` is sorted: with a split, the second set starts at
            // `second` and only the first set's boxes pair, with it.
            let (firsts, second) = match split {
                Some(s) => {
                    let second = segs.partition_point(|&i| i < s);
                    (second, second)
                }
                None => (segs.len(), 0),
            };
            for (ia, &i) in segs[..firsts].iter().enumerate() {
                let (lo_i, hi_i) = &boxes[i];
                for &j in &segs[second.max(ia + 1)..] {
                    let (lo_j, hi_j) = &boxes[j];
                    let overlap = (0..3).all(|k| lo_i[k] <= hi_j[k] && lo_j[k] <= hi_i[k]);
                    if overlap && key(cell_of(&lo_i.sup(lo_j), h)) == run_key && accept(i, j) {
                        out.push([i, j]);
                    }
                }
            }
            out
        })
        .collect();
    // 6. Deterministic order.
    pairs.par_sort_unstable();
    pairs
}
