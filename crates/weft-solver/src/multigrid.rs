//! Aggregation multigrid preconditioner with yarn-line smoothers for the
//! 5x5 block-sparse Newton systems (O(n) memory, tens of PCG iterations).
//!
//! Why not point smoothing: in the backward-Euler matrix of a woven fabric
//! the yarn stretch couplings (`h² k_s / l` ≈ 0.9 kg at the benchmark
//! settings) are about 10⁴ times the shear couplings between neighbouring
//! yarns and 10⁸ times the node masses. The displacement along a warp yarn
//! (and the warp arc-length coordinate `u`) is therefore strongly coupled
//! along the warp and weakly across it, and the weft direction the other way
//! round: a strongly anisotropic operator whose anisotropy direction differs
//! per DOF. Block-Jacobi (point) smoothing leaves errors that are smooth
//! along a yarn but oscillate across yarns, which no node aggregation can
//! represent, and PCG then needs thousands of iterations. The classical cure
//! [Trottenberg, Oosterlee, Schüller, *Multigrid*, 2001, §5.1] is line
//! relaxation along the strong direction with standard coarsening; here it is
//! done along *both* yarn families in turn, so every DOF is relaxed along its
//! strong direction.
//!
//! Construction ([`Hierarchy::new`], once per matrix pattern and free mask):
//! - **Lines** (per level, per family): the warp family links each node to
//!   the (at most two) neighbours with the largest `|A_ij[u][u]|` coupling
//!   (the arc-length coordinate `u` is only coupled along its warp yarn), the
//!   weft family the same with `v`; only mutual links are kept, so the links
//!   form disjoint paths (cycles, e.g. a yarn closed around a tube, are cut
//!   once). Purely algebraic: it works on coarse levels and on garments.
//! - **Aggregates** of about 2 x 2 nodes: consecutive nodes of each warp
//!   line are paired, then the pairs are matched greedily along the weft
//!   links. The prolongator `P` maps a coarse node's 5 DOFs to the same 5
//!   DOFs of its member nodes (a 5x5 identity block, zero on fixed DOFs):
//!   plain aggregation [Vaněk, Mandel, Brezina, *Computing* 56, 1996]. With
//!   [`MultigridOptions::prolongator_self_weight`] below 1 each row is
//!   instead spread over the aggregates of the node's four line neighbours
//!   (a smoothing of `P` along the yarns). The coarse operator `Pᵀ A P` is
//!   again a 5x5 block-sparse matrix whose pattern is built once. A coarse
//!   DOF is fixed when all its aggregate's DOFs are.
//! - Levels are added until at most `coarse_nodes` nodes remain (or
//!   coarsening stalls); the coarsest matrix is factored with
//!   [`SparseCholesky`].
//!
//! Per matrix ([`Hierarchy::update`]): the Galerkin coarse matrices are
//! recomputed in their fixed patterns (parallel over coarse block rows), each
//! line's principal submatrix (free DOFs, identity on fixed ones) is factored
//! by a banded Cholesky (parallel over lines), and the coarsest matrix is
//! refactored.
//!
//! Cycle ([`Multigrid`], a symmetric V-cycle): pre-smoothing is a damped
//! line-Jacobi sweep along the warp lines followed by one along the weft
//! lines; the post-smoothing applies the same two sweeps in reverse order,
//! so the cycle is a symmetric operator; it is positive definite on the free
//! DOFs when each damped sweep is a contraction in the `A`-norm
//! (`ω λ_max(W⁻¹A) < 2`, `W` the line-block diagonal). `ω` is chosen per
//! level and family from a power-iteration estimate of `λ_max(W⁻¹A)` made
//! at construction (`ω = 1.6 / λ`, margin for the estimate's error).
//!
//! Memory per fine node: the line factors (`5 (5w + 5)` f32 per node and
//! family, `w` the line bandwidth in nodes: 2 with bending elements, so 300
//! bytes per family), the prolongator (12 bytes per entry, twice), the coarse
//! matrices (about a third of the fine matrix with plain aggregation) and a
//! few work vectors: about 1.4 KB per node in all on a woven patch.
//!
//! Measured (`tests/multigrid.rs`, `weft bench`): on the benchmark patches
//! the cycle cuts the block-Jacobi PCG iterations by 15-20x, but the count
//! still grows with the patch size (294 at 60 x 60, 559 at 100 x 100,
//! 2,067 at 317 x 317, to 1e-8), and one cycle costs about 9 block-Jacobi
//! iterations (four line solves and four residuals on the fine level). The remaining slow modes are smooth out-of-plane and in-plane
//! bending modes: bending is a fourth-order operator, which piecewise-constant
//! (and the line-smoothed) prolongators approximate poorly; smoothing `P` with
//! the matrix (smoothed aggregation) or adding rotations to the coarse space
//! is the next step.

use crate::bsr::{B, Block, BlockSparse, LowerIndex};
use crate::cholesky::{NotPositiveDefinite, SparseCholesky};
use crate::par::PARALLEL_MIN;
use crate::pcg::Preconditioner;
use rayon::prelude::*;

/// Tuning of [`Hierarchy::new`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MultigridOptions {
    /// Coarsening stops once a level has at most this many nodes; that level
    /// is solved by sparse Cholesky.
    pub coarse_nodes: usize,
    /// At most this many levels including the fine one.
    pub max_levels: usize,
    /// A link is a line candidate when its `|A_ij[c][c]|` is at least this
    /// fraction of `sqrt(|A_ii[c][c]| |A_jj[c][c]|)` (dimensionless).
    pub line_threshold: f64,
    /// Power iterations for the `λ_max(W⁻¹A)` estimate that sets the damping.
    pub power_iterations: usize,
    /// Weight of a node's own aggregate in the prolongator; the rest is
    /// shared equally by the aggregates of its four line neighbours (warp
    /// and weft, before and after; a missing neighbour counts as the own
    /// aggregate). 1 is plain aggregation; below 1 the prolongator is
    /// smoothed along the yarns, which the bending (fourth-order) terms need.
    pub prolongator_self_weight: f64,
    /// Damping of each line sweep is `damping / λ` with `λ` that estimate;
    /// must stay below 2 for a positive definite cycle.
    pub damping: f64,
}

impl Default for MultigridOptions {
    fn default() -> Self {
        Self {
            coarse_nodes: 2_000,
            max_levels: 12,
            line_threshold: 0.05,
            power_iterations: 12,
            damping: 1.6,
            prolongator_self_weight: 1.0,
        }
    }
}

/// The components whose couplings define the two line families: the warp
/// arc-length coordinate `u` and the weft one `v`.
const FAMILY_COMPONENT: [usize; 2] = [3, 4];

/// One family of disjoint node lines with their banded Cholesky factors.
#[derive(Clone, Debug)]
struct Lines {
    /// Start of each line in `nodes` (length lines + 1).
    start: Vec<usize>,
    /// Nodes of all lines, concatenated in line order.
    nodes: Vec<u32>,
    /// Position of each node in the concatenated order (`start[line] + pos`).
    slot: Vec<u32>,
    /// Line of each node.
    line_of: Vec<u32>,
    /// Scalar half-bandwidth of each line's matrix.
    band: Vec<usize>,
    /// Start of each line's factor in `factor`.
    factor_start: Vec<usize>,
    /// Row-major lower band storage: row `i` of a line holds columns
    /// `i - band ..= i` at `i (band + 1) + (col + band - i)`. Factored in
    /// f64 and stored rounded to f32 (half the memory; the rounded factor
    /// `L̃` still defines the SPD smoother `(L̃ L̃ᵀ)⁻¹`, which is all the
    /// cycle needs).
    factor: Vec<f32>,
    /// Damping factor of the sweep.
    omega: f64,
}

impl Lines {
    /// Finds the lines of `a` along component `comp` (see module docs).
    /// `lower` is `a`'s [`LowerIndex`] when `a` is symmetric-mode.
    fn detect(a: &BlockSparse, lower: Option<&LowerIndex>, comp: usize, threshold: f64) -> Self {
        let n = a.n;
        let diag = |i: usize| a.values[a.diag[i]][comp][comp].abs();
        let pick = |i: usize| -> [u32; 2] {
            let mut best = [(0.0f64, u32::MAX); 2];
            let di = diag(i);
            // A diagonal entry of a block is the same in its transpose.
            a.for_each_in_row(lower, i, |j, blk, _| {
                if j == i {
                    return;
                }
                let s = blk[comp][comp].abs();
                // NaN strengths fail this test too.
                let strong = s > threshold * (di * diag(j)).sqrt();
                if !strong {
                    return;
                }
                if s > best[0].0 {
                    best[1] = best[0];
                    best[0] = (s, j as u32);
                } else if s > best[1].0 {
                    best[1] = (s, j as u32);
                }
            });
            [best[0].1, best[1].1]
        };
        let picks: Vec<[u32; 2]> = if n < PARALLEL_MIN {
            (0..n).map(pick).collect()
        } else {
            (0..n).into_par_iter().map(pick).collect()
        };
        // Mutual links only: every node keeps at most two, so the link graph
        // is a union of paths and cycles.
        let mut adj = vec![[u32::MAX; 2]; n];
        for i in 0..n {
            let mut d = 0;
            for &j in &picks[i] {
                if j != u32::MAX && picks[j as usize].contains(&(i as u32)) {
                    adj[i][d] = j;
                    d += 1;
                }
            }
        }
        let degree = |l: &[u32; 2]| l.iter().filter(|&&j| j != u32::MAX).count();
        let mut visited = vec![false; n];
        let mut start = vec![0];
        let mut nodes = Vec::with_capacity(n);
        let walk = |first: usize, visited: &mut Vec<bool>, nodes: &mut Vec<u32>| {
            let mut cur = first;
            loop {
                visited[cur] = true;
                nodes.push(cur as u32);
                match adj[cur]
                    .iter()
                    .find(|&&j| j != u32::MAX && !visited[j as usize])
                {
                    Some(&j) => cur = j as usize,
                    None => break,
                }
            }
        };
        // Paths from their ends (isolated nodes are lines of one), then what
        // is left lies on cycles, each cut at its first node.
        for pass in 0..2 {
            for i in 0..n {
                if !visited[i] && (pass == 1 || degree(&adj[i]) <= 1) {
                    walk(i, &mut visited, &mut nodes);
                    start.push(nodes.len());
                }
            }
        }
        let lines = start.len() - 1;
        let mut slot = vec![0u32; n];
        let mut line_of = vec![0u32; n];
        for l in 0..lines {
            for t in start[l]..start[l + 1] {
                slot[nodes[t] as usize] = t as u32;
                line_of[nodes[t] as usize] = l as u32;
            }
        }
        // Bandwidth of each line's principal submatrix, in nodes.
        let mut width = vec![0usize; lines];
        for i in 0..n {
            let l = line_of[i];
            a.for_each_in_row(lower, i, |j, _, _| {
                if line_of[j] == l {
                    let d = (slot[i] as i64 - slot[j] as i64).unsigned_abs() as usize;
                    width[l as usize] = width[l as usize].max(d);
                }
            });
        }
        let band: Vec<usize> = width.iter().map(|&w| B * w + B - 1).collect();
        let mut factor_start = Vec::with_capacity(lines + 1);
        factor_start.push(0);
        for l in 0..lines {
            let m = B * (start[l + 1] - start[l]);
            factor_start.push(factor_start[l] + m * (band[l] + 1));
        }
        let factor = vec![0.0f32; factor_start[lines]];
        Self {
            start,
            nodes,
            slot,
            line_of,
            band,
            factor_start,
            factor,
            omega: 1.0,
        }
    }

    fn count(&self) -> usize {
        self.start.len() - 1
    }

    /// Gathers and factors every line's principal submatrix of `a` (free
    /// DOFs; identity rows and columns on fixed DOFs). A pivot that is not
    /// clearly positive (an indefinite matrix) is replaced by the magnitude of
    /// the original diagonal entry, so the factor stays SPD.
    fn factor(&mut self, a: &BlockSparse, lower: Option<&LowerIndex>, free: &[f64]) {
        let Self {
            start,
            nodes,
            slot,
            line_of,
            band,
            factor_start,
            factor,
            ..
        } = self;
        let mut chunks: Vec<(usize, &mut [f32])> = Vec::with_capacity(start.len() - 1);
        let mut rest: &mut [f32] = factor;
        for l in 0..start.len() - 1 {
            let (head, tail) = rest.split_at_mut(factor_start[l + 1] - factor_start[l]);
            chunks.push((l, head));
            rest = tail;
        }
        let work = |(l, out): &mut (usize, &mut [f32])| {
            let l = *l;
            let bw = band[l];
            let w1 = bw + 1;
            let mut f = vec![0.0f64; out.len()];
            let s0 = start[l];
            for t in s0..start[l + 1] {
                let i = nodes[t] as usize;
                let p = t - s0;
                a.for_each_in_row(lower, i, |j, blk, transposed| {
                    if line_of[j] as usize != l {
                        return;
                    }
                    let q = slot[j] as usize - s0;
                    if q > p {
                        return;
                    }
                    for r in 0..B {
                        let row = B * p + r;
                        for c in 0..B {
                            let col = B * q + c;
                            if col > row {
                                continue;
                            }
                            let fr = free[B * i + r] != 0.0;
                            let fc = free[B * j + c] != 0.0;
                            let v = if transposed { blk[c][r] } else { blk[r][c] };
                            f[row * w1 + col + bw - row] = if fr && fc {
                                v
                            } else if row == col {
                                1.0
                            } else {
                                0.0
                            };
                        }
                    }
                });
            }
            band_cholesky(&mut f, bw);
            out.iter_mut().zip(&f).for_each(|(o, v)| *o = *v as f32);
        };
        if nodes.len() < PARALLEL_MIN / B {
            chunks.iter_mut().for_each(work);
        } else {
            chunks.par_iter_mut().with_min_len(8).for_each(work);
        }
    }

    /// `x += ω W⁻¹ r` on the free DOFs (`W` the line-block diagonal); `y` is
    /// a work vector of length `5 n`.
    fn smooth(&self, r: &[f64], x: &mut [f64], free: &[f64], y: &mut [f64]) {
        // Gather r into line order, solve each line in place, scatter back.
        let mut chunks: Vec<(usize, &mut [f64])> = Vec::with_capacity(self.count());
        let mut rest: &mut [f64] = y;
        for l in 0..self.count() {
            let (head, tail) = rest.split_at_mut(B * (self.start[l + 1] - self.start[l]));
            chunks.push((l, head));
            rest = tail;
        }
        let work = |(l, yl): &mut (usize, &mut [f64])| {
            let l = *l;
            let s0 = self.start[l];
            for (p, yb) in yl.chunks_mut(B).enumerate() {
                let i = self.nodes[s0 + p] as usize;
                for c in 0..B {
                    yb[c] = r[B * i + c] * free[B * i + c];
                }
            }
            let f = &self.factor[self.factor_start[l]..self.factor_start[l + 1]];
            band_solve(f, self.band[l], yl);
        };
        if self.nodes.len() < PARALLEL_MIN / B {
            chunks.iter_mut().for_each(work);
        } else {
            chunks.par_iter_mut().with_min_len(8).for_each(work);
        }
        let omega = self.omega;
        let scatter = |(i, xi): (usize, &mut [f64])| {
            let t = self.slot[i] as usize;
            for c in 0..B {
                xi[c] += omega * y[B * t + c] * free[B * i + c];
            }
        };
        if x.len() < PARALLEL_MIN {
            x.chunks_mut(B).enumerate().for_each(scatter);
        } else {
            x.par_chunks_mut(B).enumerate().for_each(scatter);
        }
    }

    /// Bytes held.
    fn bytes(&self) -> usize {
        8 * (self.start.len() + self.band.len() + self.factor_start.len())
            + 4 * (self.factor.len() + self.nodes.len() + self.slot.len() + self.line_of.len())
    }
}

/// In-place Cholesky `A = L Lᵀ` of a symmetric band matrix in row-major lower
/// band storage with half-bandwidth `bw` (see [`Lines`]).
fn band_cholesky(f: &mut [f64], bw: usize) {
    let w1 = bw + 1;
    let m = f.len() / w1;
    for i in 0..m {
        let j0 = i.saturating_sub(bw);
        for j in j0..=i {
            let k0 = j0.max(j.saturating_sub(bw));
            let mut s = f[i * w1 + j + bw - i];
            for k in k0..j {
                s -= f[i * w1 + k + bw - i] * f[j * w1 + k + bw - j];
            }
            if j == i {
                let orig = f[i * w1 + bw].abs();
                let floor = 1e-12 * orig;
                let pivot = if s > floor {
                    s
                } else if orig > 0.0 {
                    orig
                } else {
                    1.0
                };
                f[i * w1 + bw] = pivot.sqrt();
            } else {
                f[i * w1 + j + bw - i] = s / f[j * w1 + bw];
            }
        }
    }
}

/// Solves `L Lᵀ x = b` in place with the factor of [`band_cholesky`].
fn band_solve(f: &[f32], bw: usize, x: &mut [f64]) {
    let w1 = bw + 1;
    let m = x.len();
    for i in 0..m {
        let mut s = x[i];
        let row = &f[i * w1..i * w1 + w1];
        for k in i.saturating_sub(bw)..i {
            s -= f64::from(row[k + bw - i]) * x[k];
        }
        x[i] = s / f64::from(row[bw]);
    }
    for i in (0..m).rev() {
        let row = &f[i * w1..i * w1 + w1];
        let xi = x[i] / f64::from(row[bw]);
        x[i] = xi;
        for k in i.saturating_sub(bw)..i {
            x[k] -= f64::from(row[k + bw - i]) * xi;
        }
    }
}

/// One level of the hierarchy: its smoothers and the map to the next level.
#[derive(Clone, Debug)]
struct Level {
    /// Free mask of this level (length `5 n`).
    free: Vec<f64>,
    /// Warp and weft line families.
    lines: [Lines; 2],
    /// Prolongator rows: fine node `i` takes `p_w[k]` times coarse node
    /// `p_col[k]` for `k` in `p_ptr[i]..p_ptr[i + 1]` (each weight times the
    /// 5x5 identity, masked by both levels' free masks).
    p_ptr: Vec<usize>,
    p_col: Vec<u32>,
    p_w: Vec<f64>,
    /// The same entries by coarse node (the restriction `Pᵀ`).
    t_ptr: Vec<usize>,
    t_row: Vec<u32>,
    t_w: Vec<f64>,
    /// Free mask of the next level.
    coarse_free: Vec<f64>,
}

/// The multigrid hierarchy of one matrix pattern and free mask: structure
/// built once by [`Hierarchy::new`], values refreshed per matrix by
/// [`Hierarchy::update`]. Apply it through [`Multigrid`].
#[derive(Debug)]
pub struct Hierarchy {
    options: MultigridOptions,
    /// The free mask of the fine level this was built for.
    fine_free: Vec<f64>,
    levels: Vec<Level>,
    /// Matrices of levels 1.. (level 0 is the caller's matrix).
    matrices: Vec<BlockSparse>,
    /// The transposed index of a symmetric-mode fine matrix (the smoothers
    /// and the Galerkin products read whole block rows); `None` when the
    /// caller's matrix is general-mode. Coarse levels are general-mode.
    fine_lower: Option<LowerIndex>,
    coarse: SparseCholesky,
}

impl std::fmt::Debug for SparseCholesky {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseCholesky")
            .field("matrix_nnz", &self.matrix_nnz())
            .finish_non_exhaustive()
    }
}

/// Pairs consecutive nodes of each warp line, then matches the pairs
/// greedily along the weft links (heaviest link first, in pair order).
/// Returns the aggregate of every node and the aggregate count.
fn aggregate(warp: &Lines, weft: &Lines, n: usize) -> (Vec<u32>, usize) {
    let mut pair = vec![0u32; n];
    let mut pairs = 0u32;
    for l in 0..warp.count() {
        let line = &warp.nodes[warp.start[l]..warp.start[l + 1]];
        let m = line.len();
        for (p, &i) in line.iter().enumerate() {
            // An odd last node joins the pair before it.
            let id = if m % 2 == 1 && p == m - 1 && m > 1 {
                pairs - 1
            } else {
                if p % 2 == 0 {
                    pairs += 1;
                }
                pairs - 1
            };
            pair[i as usize] = id;
        }
    }
    let np = pairs as usize;
    // Weft links between different pairs, both directions, counted.
    let mut edges: Vec<(u32, u32)> = Vec::new();
    for l in 0..weft.count() {
        let line = &weft.nodes[weft.start[l]..weft.start[l + 1]];
        for w in line.windows(2) {
            let (a, b) = (pair[w[0] as usize], pair[w[1] as usize]);
            if a != b {
                edges.push((a, b));
                edges.push((b, a));
            }
        }
    }
    edges.par_sort_unstable();
    let mut edge_ptr = vec![0usize; np + 1];
    for &(a, _) in &edges {
        edge_ptr[a as usize + 1] += 1;
    }
    for p in 0..np {
        edge_ptr[p + 1] += edge_ptr[p];
    }
    let mut group = vec![u32::MAX; np];
    let mut groups = 0u32;
    for p in 0..np {
        if group[p] != u32::MAX {
            continue;
        }
        // Heaviest unmatched neighbour (runs of equal targets are counted).
        let nb = &edges[edge_ptr[p]..edge_ptr[p + 1]];
        let mut best = (0usize, u32::MAX);
        let mut k = 0;
        while k < nb.len() {
            let q = nb[k].1;
            let mut run = 0;
            while k < nb.len() && nb[k].1 == q {
                run += 1;
                k += 1;
            }
            if group[q as usize] == u32::MAX && run > best.0 {
                best = (run, q);
            }
        }
        group[p] = groups;
        if best.1 != u32::MAX {
            group[best.1 as usize] = groups;
        }
        groups += 1;
    }
    let agg = pair.iter().map(|&p| group[p as usize]).collect();
    (agg, groups as usize)
}

impl Hierarchy {
    /// Builds the hierarchy for the pattern of `a` (block rows `n`) and the
    /// free mask `free` (length `5 n`, 1.0 free, 0.0 fixed), using the values
    /// of `a` to find the lines, then computes its values with
    /// [`Hierarchy::update`].
    ///
    /// # Errors
    /// [`NotPositiveDefinite`] when the coarsest matrix cannot be factored
    /// (the matrix is not SPD on the free DOFs).
    pub fn new(
        a: &BlockSparse,
        free: &[f64],
        options: MultigridOptions,
    ) -> Result<Self, NotPositiveDefinite> {
        let fine_lower = a.symmetric.then(|| a.lower_index());
        let mut levels = Vec::new();
        let mut matrices: Vec<BlockSparse> = Vec::new();
        let mut level_free = free.to_vec();
        loop {
            let (cur, cur_lower) = match matrices.last() {
                Some(m) => (m, None),
                None => (a, fine_lower.as_ref()),
            };
            let n = cur.n;
            if n <= options.coarse_nodes || levels.len() + 1 >= options.max_levels {
                break;
            }
            let warp = Lines::detect(cur, cur_lower, FAMILY_COMPONENT[0], options.line_threshold);
            let weft = Lines::detect(cur, cur_lower, FAMILY_COMPONENT[1], options.line_threshold);
            let (agg, nc) = aggregate(&warp, &weft, n);
            if 10 * nc > 7 * n {
                break;
            }
            // Prolongator: own aggregate plus, with smoothing, the
            // aggregates of the line neighbours.
            let own = options.prolongator_self_weight.clamp(0.0, 1.0);
            let nbw = (1.0 - own) / 4.0;
            let mut p_ptr = Vec::with_capacity(n + 1);
            let mut p_col: Vec<u32> = Vec::with_capacity(n);
            let mut p_w: Vec<f64> = Vec::with_capacity(n);
            p_ptr.push(0);
            for i in 0..n {
                let mut entries: Vec<(u32, f64)> = vec![(agg[i], own)];
                for lines in [&warp, &weft] {
                    let t = lines.slot[i] as usize;
                    let l = lines.line_of[i] as usize;
                    for nb in [t.wrapping_sub(1), t + 1] {
                        let inside = nb >= lines.start[l] && nb < lines.start[l + 1];
                        let g = if inside {
                            agg[lines.nodes[nb] as usize]
                        } else {
                            agg[i]
                        };
                        entries.push((g, nbw));
                    }
                }
                entries.sort_unstable_by_key(|e| e.0);
                let start = p_col.len();
                for (g, w) in entries {
                    if w == 0.0 {
                        continue;
                    }
                    if p_col.len() > start && *p_col.last().expect("non-empty") == g {
                        *p_w.last_mut().expect("non-empty") += w;
                    } else {
                        p_col.push(g);
                        p_w.push(w);
                    }
                }
                p_ptr.push(p_col.len());
            }
            let mut t_ptr = vec![0usize; nc + 1];
            for &g in &p_col {
                t_ptr[g as usize + 1] += 1;
            }
            for c in 0..nc {
                t_ptr[c + 1] += t_ptr[c];
            }
            let mut fill = t_ptr.clone();
            let mut t_row = vec![0u32; p_col.len()];
            let mut t_w = vec![0.0; p_col.len()];
            for i in 0..n {
                for k in p_ptr[i]..p_ptr[i + 1] {
                    let g = p_col[k] as usize;
                    t_row[fill[g]] = i as u32;
                    t_w[fill[g]] = p_w[k];
                    fill[g] += 1;
                }
            }
            // Coarse pattern of Pᵀ A P.
            let mut pairs: Vec<(usize, usize)> = Vec::new();
            for c in 0..nc {
                let mut row: Vec<u32> = Vec::new();
                for t in t_ptr[c]..t_ptr[c + 1] {
                    let i = t_row[t] as usize;
                    cur.for_each_in_row(cur_lower, i, |j, _, _| {
                        row.extend_from_slice(&p_col[p_ptr[j]..p_ptr[j + 1]]);
                    });
                }
                row.sort_unstable();
                row.dedup();
                pairs.extend(
                    row.into_iter()
                        .filter(|&d| d as usize > c)
                        .map(|d| (c, d as usize)),
                );
            }
            let coarse = BlockSparse::from_pairs_general(nc, pairs);
            // A coarse DOF is free when one of its aggregate's DOFs is.
            let mut coarse_free = vec![0.0; B * nc];
            for (i, &g) in agg.iter().enumerate() {
                for c in 0..B {
                    if level_free[B * i + c] != 0.0 {
                        coarse_free[B * g as usize + c] = 1.0;
                    }
                }
            }
            let mut coarse = coarse;
            let level = Level {
                free: std::mem::replace(&mut level_free, coarse_free.clone()),
                lines: [warp, weft],
                p_ptr,
                p_col,
                p_w,
                t_ptr,
                t_row,
                t_w,
                coarse_free,
            };
            galerkin(&level, cur, cur_lower, &mut coarse);
            levels.push(level);
            matrices.push(coarse);
        }
        let coarsest = matrices.last().unwrap_or(a);
        let coarse = SparseCholesky::new(coarsest, &level_free)?;
        let mut h = Self {
            options,
            fine_free: free.to_vec(),
            levels,
            matrices,
            fine_lower,
            coarse,
        };
        h.update(a)?;
        h.estimate_damping(a);
        Ok(h)
    }

    /// Whether this hierarchy was built for the free mask `free`.
    pub fn matches(&self, free: &[f64]) -> bool {
        self.fine_free == free
    }

    /// Number of levels including the fine one and the coarsest.
    pub fn level_count(&self) -> usize {
        self.levels.len() + 1
    }

    /// Nodes per level, fine first.
    pub fn level_nodes(&self, a: &BlockSparse) -> Vec<usize> {
        std::iter::once(a.n)
            .chain(self.matrices.iter().map(|m| m.n))
            .collect()
    }

    /// Bytes held by the hierarchy (coarse matrices, line factors, maps,
    /// the fine matrix's transposed index;
    /// not the fine matrix and not the coarsest Cholesky factor, which faer
    /// does not report).
    pub fn bytes(&self) -> usize {
        let lv: usize = self
            .levels
            .iter()
            .map(|l| {
                8 * (l.free.len()
                    + l.coarse_free.len()
                    + l.p_ptr.len()
                    + l.p_w.len()
                    + l.t_ptr.len()
                    + l.t_w.len())
                    + 4 * (l.p_col.len() + l.t_row.len())
                    + l.lines[0].bytes()
                    + l.lines[1].bytes()
            })
            .sum();
        lv + self.matrices.iter().map(BlockSparse::bytes).sum::<usize>()
            + self.fine_lower.as_ref().map_or(0, LowerIndex::bytes)
    }

    /// Recomputes every value from a new matrix `a` with the pattern the
    /// hierarchy was built for: Galerkin coarse matrices, line factors, the
    /// coarsest factor. The damping factors are kept.
    ///
    /// # Errors
    /// [`NotPositiveDefinite`] when the coarsest matrix cannot be factored.
    pub fn update(&mut self, a: &BlockSparse) -> Result<(), NotPositiveDefinite> {
        for l in 0..self.levels.len() {
            let (done, rest) = self.matrices.split_at_mut(l);
            let (fine, lower) = if l == 0 {
                (a, self.fine_lower.as_ref())
            } else {
                (&done[l - 1], None)
            };
            let coarse = &mut rest[0];
            galerkin(&self.levels[l], fine, lower, coarse);
        }
        for l in 0..self.levels.len() {
            let (m, lower) = if l == 0 {
                (a, self.fine_lower.as_ref())
            } else {
                (&self.matrices[l - 1], None)
            };
            let level = &mut self.levels[l];
            let [warp, weft] = &mut level.lines;
            warp.factor(m, lower, &level.free);
            weft.factor(m, lower, &level.free);
        }
        let coarsest = self.matrices.last().unwrap_or(a);
        self.coarse.factor(coarsest)
    }

    /// Sets the damping of every line sweep to `1.6 / λ` with `λ` a power
    /// iteration estimate of `λ_max(W⁻¹ A)` on that level's free DOFs.
    fn estimate_damping(&mut self, a: &BlockSparse) {
        let its = self.options.power_iterations;
        for l in 0..self.levels.len() {
            let m = if l == 0 { a } else { &self.matrices[l - 1] };
            let level = &mut self.levels[l];
            let len = B * m.n;
            for fam in 0..2 {
                let lines = &mut level.lines[fam];
                lines.omega = 1.0;
                let mut x: Vec<f64> = (0..len)
                    .map(|d| (1.0 + ((d * 7919) % 97) as f64 / 97.0) * level.free[d])
                    .collect();
                let mut ax = vec![0.0; len];
                let mut y = vec![0.0; len];
                let mut lambda: f64 = 1.0;
                for _ in 0..its {
                    let norm = dot(&x, &x).sqrt();
                    if norm == 0.0 {
                        break;
                    }
                    x.iter_mut().for_each(|v| *v /= norm);
                    m.spmv(&x, &mut ax);
                    let mut z = vec![0.0; len];
                    lines.smooth(&ax, &mut z, &level.free, &mut y);
                    // Rayleigh quotient in the W-inner product: xᵀAx / xᵀWx
                    // is bounded by the power iterate's growth.
                    lambda = dot(&z, &z).sqrt();
                    x = z;
                }
                lines.omega = self.options.damping / lambda.max(1.0);
                if std::env::var_os("WEFT_MG_DEBUG").is_some() {
                    eprintln!(
                        "level {l} family {fam}: lambda {lambda:.3}, omega {:.3}",
                        lines.omega
                    );
                }
            }
        }
    }
}

/// Computes the Galerkin coarse matrix `coarse = Pᵀ A P` of `level`'s
/// prolongator (both sides masked by the free masks), parallel over coarse
/// block rows; the pattern of `coarse` was built for it.
fn galerkin(
    level: &Level,
    fine: &BlockSparse,
    fine_lower: Option<&LowerIndex>,
    coarse: &mut BlockSparse,
) {
    let free = &level.free;
    let cfree = &level.coarse_free;
    let mut rows: Vec<(usize, &mut [Block])> = Vec::with_capacity(coarse.n);
    let mut rest: &mut [Block] = &mut coarse.values;
    for c in 0..coarse.n {
        let (head, tail) = rest.split_at_mut(coarse.row_ptr[c + 1] - coarse.row_ptr[c]);
        rows.push((c, head));
        rest = tail;
    }
    let (row_ptr, cols) = (&coarse.row_ptr, &coarse.cols);
    let work = |(c, out): &mut (usize, &mut [Block])| {
        let c = *c;
        let ccols = &cols[row_ptr[c]..row_ptr[c + 1]];
        out.iter_mut().for_each(|b| *b = [[0.0; B]; B]);
        for t in level.t_ptr[c]..level.t_ptr[c + 1] {
            let i = level.t_row[t] as usize;
            let wi = level.t_w[t];
            fine.for_each_in_row(fine_lower, i, |j, blk, transposed| {
                let mut m = [[0.0; B]; B];
                for r in 0..B {
                    let fr = free[B * i + r] * cfree[B * c + r] * wi;
                    for q in 0..B {
                        let v = if transposed { blk[q][r] } else { blk[r][q] };
                        m[r][q] = fr * v * free[B * j + q];
                    }
                }
                for p in level.p_ptr[j]..level.p_ptr[j + 1] {
                    let d = level.p_col[p] as usize;
                    let wj = level.p_w[p];
                    let pos = ccols
                        .binary_search(&(d as u32))
                        .expect("coarse pattern holds every Galerkin block");
                    let o = &mut out[pos];
                    for r in 0..B {
                        for q in 0..B {
                            o[r][q] += m[r][q] * wj * cfree[B * d + q];
                        }
                    }
                }
            });
        }
    };
    if fine.n < PARALLEL_MIN / B {
        rows.iter_mut().for_each(work);
    } else {
        rows.par_iter_mut().with_min_len(16).for_each(work);
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    if a.len() < PARALLEL_MIN {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    } else {
        a.par_iter().zip(b).map(|(x, y)| x * y).sum()
    }
}

/// `r = b - A x` with the fixed DOFs of `r` zero.
fn residual(a: &BlockSparse, free: &[f64], b: &[f64], x: &[f64], r: &mut [f64]) {
    a.spmv(x, r);
    let f = |(d, r): (usize, &mut f64)| *r = (b[d] - *r) * free[d];
    if r.len() < PARALLEL_MIN {
        r.iter_mut().enumerate().for_each(f);
    } else {
        r.par_iter_mut().enumerate().for_each(f);
    }
}

/// The V-cycle of a [`Hierarchy`] on the fine matrix it was last updated
/// with, as a PCG [`Preconditioner`]: `z = M⁻¹ r` with `M⁻¹` symmetric
/// positive definite on the free DOFs and zero on the fixed ones.
pub struct Multigrid<'a> {
    /// The hierarchy.
    pub hierarchy: &'a Hierarchy,
    /// The fine matrix (the one passed to the last [`Hierarchy::update`]).
    pub matrix: &'a BlockSparse,
}

impl Multigrid<'_> {
    fn cycle(&self, l: usize, b: &[f64], x: &mut [f64]) {
        let h = self.hierarchy;
        if l == h.levels.len() {
            h.coarse.apply(b, x);
            return;
        }
        let a = if l == 0 {
            self.matrix
        } else {
            &h.matrices[l - 1]
        };
        let level = &h.levels[l];
        let free = &level.free;
        let len = b.len();
        let mut r = vec![0.0; len];
        let mut y = vec![0.0; len];
        x.iter_mut().for_each(|v| *v = 0.0);
        let [warp, weft] = &level.lines;
        warp.smooth(b, x, free, &mut y);
        residual(a, free, b, x, &mut r);
        weft.smooth(&r, x, free, &mut y);
        residual(a, free, b, x, &mut r);
        // Coarse correction.
        let nc = level.t_ptr.len() - 1;
        let mut bc = vec![0.0; B * nc];
        let cfree = &level.coarse_free;
        let restrict = |(c, bcc): (usize, &mut [f64])| {
            for t in level.t_ptr[c]..level.t_ptr[c + 1] {
                let i = level.t_row[t] as usize;
                let w = level.t_w[t];
                for k in 0..B {
                    bcc[k] += w * r[B * i + k] * free[B * i + k];
                }
            }
            for k in 0..B {
                bcc[k] *= cfree[B * c + k];
            }
        };
        if bc.len() < PARALLEL_MIN {
            bc.chunks_mut(B).enumerate().for_each(restrict);
        } else {
            bc.par_chunks_mut(B).enumerate().for_each(restrict);
        }
        let mut xc = vec![0.0; B * nc];
        self.cycle(l + 1, &bc, &mut xc);
        let prolong = |(i, xi): (usize, &mut [f64])| {
            for p in level.p_ptr[i]..level.p_ptr[i + 1] {
                let g = level.p_col[p] as usize;
                let w = level.p_w[p];
                for k in 0..B {
                    xi[k] += w * xc[B * g + k] * cfree[B * g + k] * free[B * i + k];
                }
            }
        };
        if x.len() < PARALLEL_MIN {
            x.chunks_mut(B).enumerate().for_each(prolong);
        } else {
            x.par_chunks_mut(B).enumerate().for_each(prolong);
        }
        drop((bc, xc));
        residual(a, free, b, x, &mut r);
        weft.smooth(&r, x, free, &mut y);
        residual(a, free, b, x, &mut r);
        warp.smooth(&r, x, free, &mut y);
    }
}

impl Preconditioner for Multigrid<'_> {
    /// One symmetric V-cycle from a zero initial guess: `z = M⁻¹ r`.
    fn apply(&self, r: &[f64], z: &mut [f64]) {
        let free = &self.hierarchy.fine_free;
        let b: Vec<f64> = r.iter().zip(free).map(|(r, f)| r * f).collect();
        self.cycle(0, &b, z);
        z.iter_mut().zip(free).for_each(|(z, f)| *z *= f);
    }
}
