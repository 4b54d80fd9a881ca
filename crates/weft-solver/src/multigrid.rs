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
//! - **Lines** on the fine level, per family: the warp family links each
//!   node to the (at most two) neighbours with the largest `|A_ij[u][u]|`
//!   coupling (the arc-length coordinate `u` is only coupled along its warp
//!   yarn), the weft family the same with `v`; only mutual links are kept,
//!   so the links form disjoint paths (cycles, e.g. a yarn closed around a
//!   tube, are cut once). Purely algebraic: it works on garments too.
//! - **Linear-mode aggregates** (the default,
//!   [`MultigridOptions::linear_modes`]). Plain aggregation (piecewise
//!   constant coarse fields) cannot represent a rigid rotation of the cloth
//!   without kinks, and a kink costs bending energy: bending is a
//!   fourth-order operator. So the coarse space also holds fields that are
//!   linear across each aggregate:
//!   - a walk over the lines gives every crossing its grid position
//!     (warp index, weft index) per connected piece of fabric;
//!   - the aggregates are square blocks of `aggregate_size`² crossings, and
//!     each carries three coarse nodes of 5 DOFs: the constant field and the
//!     fields linear along the warp and along the weft;
//!   - a crossing at offset `d` from its aggregate's centroid takes
//!     `const + d·slope` (scalar weights times the 5x5 identity).
//!
//!   Coarser levels join 2 x 2 cells the same way: a child cell's constant
//!   node takes its parent's linear field at the child's centroid, and its
//!   slope nodes take the parent's slopes. Every level therefore reproduces
//!   a global linear field exactly, in the spirit of smoothed aggregation
//!   with rotations in the near-null space [Vaněk, Mandel, Brezina,
//!   *Computing* 56, 1996]. Coarse lines are the rows and columns of cells.
//!   A coarse DOF whose column depends on its cell's earlier columns on the
//!   free DOFs (a linear field over fixed crossings, say) is fixed, so the
//!   coarse matrices stay definite.
//! - **Plain aggregation** (`linear_modes: false`): about 2 x 2 nodes per
//!   aggregate; consecutive nodes of each warp line are paired, then the
//!   pairs are matched greedily along the weft links, one coarse node each;
//!   lines on every level come from the matrix.
//! - **Prolongator smoothing**: with
//!   [`MultigridOptions::prolongator_self_weight`] below 1, each row of `P`
//!   is averaged with the rows of the node's four line neighbours. This
//!   removes the jumps at aggregate borders, and keeps linear fields exact
//!   away from the fabric's edges. The coarse operator `Pᵀ A P` is again a
//!   5x5 block-sparse matrix whose pattern is built once; it is stored in
//!   symmetric mode (blocks on and above the diagonal), which halves its
//!   memory, its Galerkin products and the bytes its residuals stream, and
//!   in f32 (each block summed in f64 and rounded once), which halves them
//!   again. The rounding is a relative perturbation of about 6e-8 per
//!   entry: the cycle stays a symmetric positive definite preconditioner
//!   (every product with a coarse matrix is computed in f64, and the
//!   coarsest factor is f64), only a slightly different one (one more PCG
//!   iteration at 10^5 and 10^6 nodes, `BENCHMARKS.md`).
//! - Levels are added until at most `coarse_nodes` nodes remain (or
//!   coarsening stalls); the coarsest matrix is factored with
//!   [`SparseCholesky`].
//!
//! Per matrix ([`Hierarchy::update`]):
//! - the Galerkin coarse matrices are recomputed in their fixed patterns
//!   (parallel over coarse block rows);
//! - each line's principal submatrix (free DOFs, identity on fixed ones) is
//!   factored by a banded Cholesky (parallel over lines);
//! - the coarsest matrix is refactored.
//!
//! The integrator need not update for every Newton matrix
//! ([`crate::Settings::multigrid_reuse`]): the cycle of an earlier matrix's
//! hierarchy is still a symmetric preconditioner, and it stays positive
//! definite for nearby matrices (the sweeps' damping keeps a margin); the
//! Newton matrices of a step, and of neighbouring steps, differ little. A
//! solve that the stale hierarchy slows down hits an iteration cap, and the
//! hierarchy is updated.
//!
//! Cycle ([`Multigrid`]). Pre-smoothing is a damped line-Jacobi sweep along
//! the warp lines followed by one along the weft lines. The coarse
//! correction runs [`MultigridOptions::coarse_cycles`] cycles on the next
//! level (2 by default: a W-cycle). Post-smoothing applies the two sweeps in
//! reverse order, so the cycle is a symmetric operator. It is positive
//! definite on the free DOFs when each damped sweep is a contraction in the
//! `A`-norm (`ω λ_max(W⁻¹A) < 2`, `W` the line-block diagonal). `ω` is
//! chosen per level and family from a power-iteration estimate of
//! `λ_max(W⁻¹A)` made at construction (`ω = 1.6 / λ`, a margin for the
//! estimate's error).
//!
//! Memory per fine node:
//! - the fine line factors: `25 w + 15` f32 per node and family in
//!   envelope storage, with `w` the line bandwidth in nodes (2 with bending
//!   elements), so 260 bytes per family;
//! - the prolongator: 8 bytes per entry (u32 column, f32 weight), twice
//!   (rows and transpose), about 5 entries per fine node;
//! - the coarse matrices: with 6 x 6 aggregates a level-1 node couples
//!   with the 27 nodes of the 3 x 3 cells around it (about 14 stored
//!   blocks per row in symmetric mode, 1.15 per fine node); the smoothed
//!   coarser prolongators widen that to about 30 per row on level 2, so
//!   all coarse levels hold about 2 blocks (200 bytes in f32) per fine
//!   node;
//! - a few work vectors.
//!
//! See `BENCHMARKS.md` for the totals and the measured PCG iterations.
use crate::bsr::{B, Block, BlockSparse, LowerIndex, Scalar};
use crate::cholesky::{NotPositiveDefinite, SparseCholesky};
use crate::par::{PARALLEL_MIN, Shared, dot};
use crate::pcg::Preconditioner;
use rayon::prelude::*;
use std::sync::Mutex;

/// Tuning of [`Hierarchy::new`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MultigridOptions {
    /// Coarsening stops once a level has at most this many nodes; that level
    /// is solved by sparse Cholesky. A larger value trades memory for time.
    /// On the 10^6-node patch of `weft bench` (first system to 1e-8, and one
    /// full step after 2 ms of draping; 2-core AMD EPYC, 2026-11-25,
    /// `BENCHMARKS.md`):
    ///
    /// | `coarse_nodes` | factored level | PCG iterations | first solve | step | step peak per node |
    /// |---:|---:|---:|---:|---:|---:|
    /// | 2,000 (default) | 1,323 nodes | 87 | 53.7 s | 81.3 s | 3,933 B |
    /// | 6,000 | 5,292 nodes | 78 | 47.9 s | 78.2 s | 4,180 B |
    ///
    /// The default keeps the 10^6-node step under 4 KB per node: the
    /// 5,292-node factor alone is about 240 MB. (The step times are those
    /// of the eighth session's code; with the residual's round-off floor
    /// lowered since, the default's step takes one Newton iteration less.)
    pub coarse_nodes: usize,
    /// At most this many levels including the fine one.
    pub max_levels: usize,
    /// A link is a line candidate when its `|A_ij[c][c]|` is at least this
    /// fraction of `sqrt(|A_ii[c][c]| |A_jj[c][c]|)` (dimensionless).
    pub line_threshold: f64,
    /// Power iterations for the `λ_max(W⁻¹A)` estimate that sets the damping.
    pub power_iterations: usize,
    /// Weight of a node's own prolongator row; the rest is shared equally
    /// by the rows of its four line neighbours (warp and weft, before and
    /// after; a missing neighbour counts as the node itself). 1 leaves the
    /// prolongator unsmoothed; below 1 it is smoothed along the yarns, which
    /// the bending (fourth-order) terms need (dimensionless, in `[0, 1]`).
    pub prolongator_self_weight: f64,
    /// Damping of each line sweep is `damping / λ` with `λ` that estimate;
    /// must stay below 2 for a positive definite cycle.
    pub damping: f64,
    /// Linear-mode aggregation (module docs): aggregates are square blocks
    /// of the crossing grid, each with three coarse nodes (the constant
    /// field and the fields linear along the warp and along the weft), so
    /// the coarse space holds rigid rotations and linear bending profiles.
    /// `false` is plain aggregation (2 x 2 crossings, one coarse node each).
    pub linear_modes: bool,
    /// With `linear_modes`: side of the fine aggregates in crossings;
    /// coarser levels join 2 x 2 aggregates.
    pub aggregate_size: usize,
    /// Cycles on each coarse level per visit: 1 is a V-cycle, 2 a W-cycle.
    pub coarse_cycles: usize,
    /// With `linear_modes`: smoothing passes over each level's prolongator
    /// (with `prolongator_self_weight` below 1).
    pub prolongator_smoothing: usize,
}

impl Default for MultigridOptions {
    fn default() -> Self {
        Self {
            coarse_nodes: 2_000,
            max_levels: 12,
            line_threshold: 0.05,
            power_iterations: 12,
            damping: 1.6,
            prolongator_self_weight: 0.2,
            linear_modes: true,
            aggregate_size: 6,
            coarse_cycles: 2,
            prolongator_smoothing: 1,
        }
    }
}

/// The components whose couplings define the two line families: the warp
/// arc-length coordinate `u` and the weft one `v`.
const FAMILY_COMPONENT: [usize; 2] = [3, 4];

thread_local! {
    /// Each thread's gather buffer of [`Lines::smooth`]: four lines of a
    /// level (160 KB on the fine level of a 1000 x 1000 patch), reused by
    /// every sweep instead of allocated per rayon job (above glibc's mmap
    /// threshold that would be an mmap and its page faults each time).
    static SWEEP_BUFFER: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
}

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
    /// Row-major lower envelope storage (see [`row_start_col`]): row `i`
    /// of a line holds columns `row_start_col(i, band) ..= i`, rows one
    /// after the other, the diagonal entry last. The band of a line is
    /// whole 5x5 blocks (`band = 5 w + 4` for nodes `w` apart), so the
    /// first rows of each block row reach fewer columns than `band`:
    /// 65 instead of 75 values per node on the fine level (`w = 2`).
    /// Factored in f64 and stored rounded to f32 (half the memory; the
    /// rounded factor `L̃` still defines the SPD smoother `(L̃ L̃ᵀ)⁻¹`,
    /// which is all the cycle needs).
    factor: Vec<f32>,
    /// Damping factor of the sweep.
    omega: f64,
}

impl Lines {
    /// Finds the lines of `a` along component `comp` (see module docs).
    /// `lower` is `a`'s [`LowerIndex`] when `a` is symmetric-mode.
    fn detect(a: LevelMatrix<'_>, lower: Option<&LowerIndex>, comp: usize, threshold: f64) -> Self {
        let n = a.n();
        let diag = |i: usize| a.diag_entry(i, comp).abs();
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
        Self::from_paths(a, lower, start, nodes)
    }

    /// Lines given as paths: line `l` is `nodes[start[l]..start[l + 1]]`,
    /// every node of `a` on exactly one line. Computes each line's band and
    /// allocates its factor.
    fn from_paths(
        a: LevelMatrix<'_>,
        lower: Option<&LowerIndex>,
        start: Vec<usize>,
        nodes: Vec<u32>,
    ) -> Self {
        let n = a.n();
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
            factor_start.push(factor_start[l] + envelope_len(m, band[l]));
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
    fn factor(&mut self, a: LevelMatrix<'_>, lower: Option<&LowerIndex>, free: &[f64]) {
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
            // The factorisation runs in full band storage (one line's worth).
            let mut f = vec![0.0f64; B * (start[l + 1] - start[l]) * w1];
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
            store_factor(&f, bw, out);
        };
        if nodes.len() < PARALLEL_MIN / B {
            chunks.iter_mut().for_each(work);
        } else {
            chunks.par_iter_mut().with_min_len(8).for_each(work);
        }
    }

    /// `x += ω W⁻¹ r` on the free DOFs (`W` the line-block diagonal).
    ///
    /// Lines go four by four: each group gathers its lines' part of `r` into
    /// a per-thread buffer (line order; kept across sweeps in
    /// [`SWEEP_BUFFER`]), solves them (a group of the
    /// same length and band, most lines of a woven patch, in lockstep,
    /// others one by one) and adds the result into `x`. No vector of the
    /// level's size is needed; groups write disjoint nodes of `x`, since
    /// every node lies on exactly one line.
    fn smooth(&self, r: &[f64], x: &mut [f64], free: &[f64]) {
        let lines = self.count();
        let groups = lines.div_ceil(4);
        let omega = self.omega;
        assert_eq!(x.len(), B * self.slot.len(), "x has one block per node");
        let xs = Shared(x.as_mut_ptr());
        let factor = |l: usize| &self.factor[self.factor_start[l]..self.factor_start[l + 1]];
        let work = |buf: &mut Vec<f64>, g: usize| {
            let (l0, l1) = (4 * g, (4 * g + 4).min(lines));
            let (s0, s1) = (self.start[l0], self.start[l1]);
            buf.clear();
            buf.extend(self.nodes[s0..s1].iter().flat_map(|&i| {
                let i = i as usize;
                (0..B).map(move |c| r[B * i + c] * free[B * i + c])
            }));
            let len = |l: usize| B * (self.start[l + 1] - self.start[l]);
            let band = &self.band[l0..l1];
            if l1 - l0 == 4 && (1..4).all(|k| len(l0 + k) == len(l0) && band[k] == band[0]) {
                let mut parts = buf.chunks_exact_mut(len(l0));
                let mut next = || parts.next().expect("four equal lines");
                band_solve_many(
                    [factor(l0), factor(l0 + 1), factor(l0 + 2), factor(l0 + 3)],
                    band[0],
                    [next(), next(), next(), next()],
                );
            } else {
                let mut rest = &mut buf[..];
                for l in l0..l1 {
                    let (head, tail) = rest.split_at_mut(len(l));
                    band_solve(factor(l), self.band[l], head);
                    rest = tail;
                }
            }
            for (t, yb) in (s0..s1).zip(buf.chunks_exact(B)) {
                let i = self.nodes[t] as usize;
                for c in 0..B {
                    let d = B * i + c;
                    // SAFETY: `d < x.len()` (asserted above: every node is
                    // below `slot.len()`), and node `i` lies on one line
                    // only, so no other group reads or writes `x[d]`.
                    unsafe { *xs.ptr().add(d) += omega * yb[c] * free[d] };
                }
            }
        };
        let with_buffer = |g: usize| SWEEP_BUFFER.with_borrow_mut(|buf| work(buf, g));
        if self.nodes.len() < PARALLEL_MIN / B {
            (0..groups).for_each(with_buffer);
        } else {
            (0..groups)
                .into_par_iter()
                .with_min_len(2)
                .for_each(with_buffer);
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

/// First column of row `i`'s envelope in a band matrix of whole 5x5 blocks
/// with half-bandwidth `bw = 5 w + 4` (block rows couple up to `w` block
/// rows away): the first column of block row `i / 5 - w`. Cholesky fill
/// stays inside this envelope.
fn row_start_col(i: usize, bw: usize) -> usize {
    debug_assert_eq!((bw + 1) % B, 0, "band of whole blocks");
    B * (i / B).saturating_sub((bw + 1) / B - 1)
}

/// Values in the envelope storage of `m` rows with half-bandwidth `bw`.
fn envelope_len(m: usize, bw: usize) -> usize {
    (0..m).map(|i| i + 1 - row_start_col(i, bw)).sum()
}

/// Rounds the f64 factor of [`band_cholesky`] (full band storage) to the f32
/// envelope storage that [`band_solve`] reads (see [`Lines`]): off-diagonal
/// entries as they are, each diagonal entry replaced by its reciprocal (the
/// solves multiply instead of divide). Entries left of the envelope are zero
/// in the factor and are not stored.
fn store_factor(f: &[f64], bw: usize, out: &mut [f32]) {
    let w1 = bw + 1;
    let mut off = 0;
    for (i, row) in f.chunks_exact(w1).enumerate() {
        let lo = row_start_col(i, bw);
        let len = i + 1 - lo;
        let row_out = &mut out[off..off + len];
        for (o, v) in row_out[..len - 1].iter_mut().zip(&row[lo + bw - i..bw]) {
            *o = *v as f32;
        }
        row_out[len - 1] = (1.0 / row[bw]) as f32;
        off += len;
    }
    debug_assert_eq!(off, out.len());
}

/// Solves `L Lᵀ x = b` in place with the factor of [`band_cholesky`] as
/// [`store_factor`] stores it (reciprocal diagonal).
fn band_solve(f: &[f32], bw: usize, x: &mut [f64]) {
    band_solve_many([f], bw, [x]);
}

/// [`band_solve`] for `K` lines of the same length and band at once, in
/// lockstep: each line's solve is one long chain of dependent operations,
/// and `K` independent chains overlap in the core's pipeline. Every line
/// gets exactly the arithmetic of [`band_solve`] (same results, bit for
/// bit).
///
/// The forward dot products run on four partial sums: only the last term
/// depends on the value just computed, so the others overlap with it
/// instead of forming one chain of `bw` dependent multiply-adds per row.
fn band_solve_many<const K: usize>(f: [&[f32]; K], bw: usize, x: [&mut [f64]; K]) {
    let m = x[0].len();
    debug_assert!(x.iter().all(|x| x.len() == m));
    let mut off = 0;
    for i in 0..m {
        let lo = row_start_col(i, bw);
        let len = i + 1 - lo;
        for k in 0..K {
            let row = &f[k][off..off + len];
            let coef = &row[..len - 1];
            let xs = &x[k][lo..i];
            let mut acc = [0.0f64; 4];
            let (cc, cr) = (coef.chunks_exact(4), coef.chunks_exact(4).remainder());
            let xr = xs.chunks_exact(4).remainder();
            for (c4, x4) in cc.zip(xs.chunks_exact(4)) {
                for t in 0..4 {
                    acc[t] += f64::from(c4[t]) * x4[t];
                }
            }
            for (c, xv) in cr.iter().zip(xr) {
                acc[0] += f64::from(*c) * xv;
            }
            x[k][i] = (x[k][i] - ((acc[0] + acc[1]) + (acc[2] + acc[3]))) * f64::from(row[len - 1]);
        }
        off += len;
    }
    for i in (0..m).rev() {
        let lo = row_start_col(i, bw);
        let len = i + 1 - lo;
        off -= len;
        for k in 0..K {
            let row = &f[k][off..off + len];
            let xi = x[k][i] * f64::from(row[len - 1]);
            x[k][i] = xi;
            for (xk, c) in x[k][lo..i].iter_mut().zip(&row[..len - 1]) {
                *xk -= f64::from(*c) * xi;
            }
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
    /// 5x5 identity, masked by both levels' free masks). The weights are
    /// rounded to f32 once (the prolongator is any full-rank map; `P` and
    /// `Pᵀ` use the same rounded weights, so the cycle stays symmetric) and
    /// every product with them is in f64.
    p_ptr: Vec<usize>,
    p_col: Vec<u32>,
    p_w: Vec<f32>,
    /// The same entries by coarse node (the restriction `Pᵀ`).
    t_ptr: Vec<usize>,
    t_row: Vec<u32>,
    t_w: Vec<f32>,
    /// Free mask of the next level.
    coarse_free: Vec<f64>,
}

/// The multigrid hierarchy of one matrix pattern and free mask: structure
/// built once by [`Hierarchy::new`], values refreshed per matrix by
/// [`Hierarchy::update`]. Apply it through [`Multigrid`].
#[derive(Debug)]
pub struct Hierarchy {
    options: MultigridOptions,
    /// The free mask of the fine level this was built for, when the fine
    /// level is the coarsest (no levels); otherwise empty, the mask being
    /// `levels[0].free` (one copy instead of two: 40 bytes per node).
    fine_free: Vec<f64>,
    levels: Vec<Level>,
    /// Matrices of levels 1.. (level 0 is the caller's matrix).
    matrices: Vec<BlockSparse<f32>>,
    /// The transposed index of each level's matrix (the line factors and
    /// the Galerkin products read whole block rows). The coarse matrices
    /// are symmetric-mode (only blocks on and above the diagonal are
    /// stored, computed and streamed), so theirs are present. Entry 0, the
    /// fine matrix's, is always `None`: [`Hierarchy::update`] builds it for
    /// its own use and drops it (the cycle never needs it; 56 bytes per
    /// node that the PCG iterations need not hold).
    lowers: Vec<Option<LowerIndex>>,
    coarse: SparseCholesky,
    /// Work vectors of the cycle, one set per level above the coarsest,
    /// allocated once (a cycle runs in every PCG iteration; at 10^6 nodes
    /// fresh vectors would be hundreds of MB of new pages per cycle).
    scratch: Vec<Mutex<CycleScratch>>,
}

/// Work vectors of one level of the cycle: `r` (length `5 n` of the level)
/// and `bc`, `xc`, `rc`, `dc` (length `5 n` of the next level).
#[derive(Debug, Default)]
struct CycleScratch {
    r: Vec<f64>,
    bc: Vec<f64>,
    xc: Vec<f64>,
    rc: Vec<f64>,
    dc: Vec<f64>,
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

/// Grid coordinates of every node (in nodes: `[warp, weft]` position) and
/// its connected component, from a breadth-first walk over the warp and weft
/// lines: a step along a warp line moves the warp position by one (its sign
/// from the line's node order) and keeps the weft position, and the other
/// way round; a node with a link of the other family to a node already
/// placed takes that node's position along the family of the step, so lines
/// whose nodes are ordered in opposite directions still get consistent
/// positions. On a woven patch this recovers the crossing grid exactly.
fn grid_coordinates(warp: &Lines, weft: &Lines, n: usize) -> (Vec<[f64; 2]>, Vec<u32>) {
    let mut coords = vec![[0.0f64; 2]; n];
    let mut comp = vec![u32::MAX; n];
    let mut components = 0u32;
    let mut queue = std::collections::VecDeque::new();
    for first in 0..n {
        if comp[first] != u32::MAX {
            continue;
        }
        comp[first] = components;
        queue.push_back(first);
        while let Some(i) = queue.pop_front() {
            let nb = line_neighbours(warp, weft, i);
            for f in 0..2 {
                for k in 0..2 {
                    let j = nb[2 * f + k];
                    if j == i || comp[j] != u32::MAX {
                        continue;
                    }
                    let mut c = coords[i];
                    c[f] += if k == 0 { -1.0 } else { 1.0 };
                    let across = line_neighbours(warp, weft, j);
                    for &o in &across[2 * (1 - f)..2 * (1 - f) + 2] {
                        if o != j && comp[o] == components {
                            c[f] = coords[o][f];
                        }
                    }
                    coords[j] = c;
                    comp[j] = components;
                    queue.push_back(j);
                }
            }
        }
        components += 1;
    }
    (coords, comp)
}

/// A group of nodes of one level of a linear-mode hierarchy
/// ([`MultigridOptions::linear_modes`]): on the fine level one node, on a
/// coarse level the (up to) three coarse nodes of one aggregate.
#[derive(Clone, Debug)]
struct Cell {
    /// Centroid in grid coordinates (nodes), `[warp, weft]`.
    pos: [f64; 2],
    /// Connected component of the fabric.
    comp: u32,
    /// Fine nodes below (weight of the centroid).
    count: usize,
    /// Nodes of the level: the constant one, then the warp-linear and the
    /// weft-linear one (`u32::MAX` where absent).
    nodes: [u32; 3],
}

impl Cell {
    /// The fine level's cells: one per node `i`, at its grid position
    /// `coords[i]` in component `comp[i]` ([`grid_coordinates`]).
    fn fine(coords: &[[f64; 2]], comp: &[u32]) -> Vec<Self> {
        (0..coords.len())
            .map(|i| Cell {
                pos: coords[i],
                comp: comp[i],
                count: 1,
                nodes: [i as u32, u32::MAX, u32::MAX],
            })
            .collect()
    }

    /// Number of level nodes in the cell (1 to 3).
    fn node_count(&self) -> usize {
        self.nodes.iter().filter(|&&c| c != u32::MAX).count()
    }
}

/// Offsets from a centroid below this (in crossings) are round-off of the
/// centroid sums (a centroid like 1/3 is not exact) and count as zero, so
/// no linear field gets a column of round-off-sized weights.
const OFFSET_EPS: f64 = 1e-9;

/// Cells of the next level, with the prolongator rows of this level's
/// nodes (`(coarse node, weight)`, each weight times the 5x5 identity).
/// Cells are bucketed by `floor(pos / size)` per component; a child cell
/// at offset `d` from its parent's centroid prolongates as the linear field
/// `const + d·slope`, and its own slopes take the parent's slopes.
fn coarsen_cells(cells: &[Cell], n: usize, size: f64) -> (Vec<Cell>, Vec<Vec<(u32, f64)>>) {
    let key = |c: &Cell| {
        (
            c.comp,
            (c.pos[0] / size).floor() as i64,
            (c.pos[1] / size).floor() as i64,
        )
    };
    let mut order: Vec<usize> = (0..cells.len()).collect();
    order.sort_by_key(|&k| key(&cells[k]));
    let mut parent_of = vec![0usize; cells.len()];
    let mut parents: Vec<Cell> = Vec::new();
    let mut prev = None;
    for &k in &order {
        let kk = key(&cells[k]);
        if prev != Some(kk) {
            parents.push(Cell {
                pos: [0.0; 2],
                comp: kk.0,
                count: 0,
                nodes: [u32::MAX; 3],
            });
            prev = Some(kk);
        }
        let p = parents.len() - 1;
        parent_of[k] = p;
        let c = &cells[k];
        let par = &mut parents[p];
        par.pos[0] += c.pos[0] * c.count as f64;
        par.pos[1] += c.pos[1] * c.count as f64;
        par.count += c.count;
    }
    for p in &mut parents {
        p.pos[0] /= p.count as f64;
        p.pos[1] /= p.count as f64;
    }
    // Which linear fields each parent carries.
    let mut has = vec![[true, false, false]; parents.len()];
    for (k, c) in cells.iter().enumerate() {
        let p = parent_of[k];
        for f in 0..2 {
            if c.nodes[f + 1] != u32::MAX || (c.pos[f] - parents[p].pos[f]).abs() > OFFSET_EPS {
                has[p][f + 1] = true;
            }
        }
    }
    let mut next = 0u32;
    for (p, h) in parents.iter_mut().zip(&has) {
        for t in 0..3 {
            if h[t] {
                p.nodes[t] = next;
                next += 1;
            }
        }
    }
    let mut rows = vec![Vec::new(); n];
    for (k, c) in cells.iter().enumerate() {
        let p = &parents[parent_of[k]];
        let mut row = vec![(p.nodes[0], 1.0)];
        for f in 0..2 {
            let d = c.pos[f] - p.pos[f];
            if p.nodes[f + 1] != u32::MAX && d.abs() > OFFSET_EPS {
                row.push((p.nodes[f + 1], d));
            }
        }
        rows[c.nodes[0] as usize] = row;
        for f in 0..2 {
            if c.nodes[f + 1] != u32::MAX {
                rows[c.nodes[f + 1] as usize] = vec![(p.nodes[f + 1], 1.0)];
            }
        }
    }
    (parents, rows)
}

/// One smoothing pass over prolongator rows: row `i` becomes `own` times
/// itself plus `(1 - own) / 4` times each row of `neighbours(i)` (its four
/// line neighbours; a missing neighbour is given as `i` itself).
fn smooth_rows(
    rows: &[Vec<(u32, f64)>],
    neighbours: impl Fn(usize) -> [usize; 4] + Sync,
    own: f64,
) -> Vec<Vec<(u32, f64)>> {
    let nbw = (1.0 - own) / 4.0;
    (0..rows.len())
        .into_par_iter()
        .map(|i| {
            let mut entries: Vec<(u32, f64)> = rows[i].iter().map(|&(g, w)| (g, own * w)).collect();
            for j in neighbours(i) {
                entries.extend(rows[j].iter().map(|&(g, w)| (g, nbw * w)));
            }
            entries.sort_unstable_by_key(|e| e.0);
            let mut row: Vec<(u32, f64)> = Vec::with_capacity(entries.len());
            for (g, w) in entries {
                match row.last_mut() {
                    Some(last) if last.0 == g => last.1 += w,
                    _ => row.push((g, w)),
                }
            }
            row.retain(|e| e.1 != 0.0);
            row
        })
        .collect()
}

/// The four line neighbours of node `i` (itself where a line ends).
fn line_neighbours(warp: &Lines, weft: &Lines, i: usize) -> [usize; 4] {
    let mut out = [i; 4];
    for (f, lines) in [warp, weft].into_iter().enumerate() {
        let t = lines.slot[i] as usize;
        let l = lines.line_of[i] as usize;
        if t > lines.start[l] {
            out[2 * f] = lines.nodes[t - 1] as usize;
        }
        if t + 1 < lines.start[l + 1] {
            out[2 * f + 1] = lines.nodes[t + 1] as usize;
        }
    }
    out
}

/// Lines of a coarse linear-mode level: the cells of one bucket row (same
/// component and weft bucket for the warp family, warp bucket for the
/// weft family) in order of position, each cell's nodes in turn.
fn cell_lines(
    a: LevelMatrix<'_>,
    lower: Option<&LowerIndex>,
    cells: &[Cell],
    size: f64,
    family: usize,
    adjacent: &mut [[u32; 4]],
) -> Lines {
    let across = 1 - family;
    let mut order: Vec<usize> = (0..cells.len()).collect();
    let key = |c: &Cell| (c.comp, (c.pos[across] / size).floor() as i64);
    order.sort_by(|&x, &y| {
        key(&cells[x])
            .cmp(&key(&cells[y]))
            .then(cells[x].pos[family].total_cmp(&cells[y].pos[family]))
    });
    let mut start = vec![0];
    let mut nodes = Vec::with_capacity(a.n());
    let mut prev = None;
    let mut last = usize::MAX;
    for &k in &order {
        let kk = key(&cells[k]);
        if prev.is_some() && prev != Some(kk) {
            start.push(nodes.len());
        } else if last != usize::MAX {
            adjacent[k][2 * family] = last as u32;
            adjacent[last][2 * family + 1] = k as u32;
        }
        last = k;
        prev = Some(kk);
        nodes.extend(cells[k].nodes.iter().filter(|&&i| i != u32::MAX));
    }
    start.push(nodes.len());
    Lines::from_paths(a, lower, start, nodes)
}

/// Fixes the coarse DOFs whose prolongator column, restricted to the free
/// fine DOFs, depends on the columns of the same component that come
/// before it in its cell (`groups`: the coarse nodes of each cell), e.g. a
/// linear field on an aggregate whose free DOFs of that component lie on
/// one line, so the coarse matrix stays definite.
fn drop_dependent_columns(
    groups: &[[u32; 3]],
    t_ptr: &[usize],
    t_row: &[u32],
    t_w: &[f32],
    free: &[f64],
    coarse_free: &mut [f64],
) {
    for g in groups {
        let mut rows: Vec<u32> = g
            .iter()
            .filter(|&&c| c != u32::MAX)
            .flat_map(|&c| {
                t_row[t_ptr[c as usize]..t_ptr[c as usize + 1]]
                    .iter()
                    .copied()
            })
            .collect();
        rows.sort_unstable();
        rows.dedup();
        for comp in 0..B {
            let mut basis: Vec<Vec<f64>> = Vec::new();
            for &c in g.iter().filter(|&&c| c != u32::MAX) {
                let c = c as usize;
                let mut v = vec![0.0; rows.len()];
                for t in t_ptr[c]..t_ptr[c + 1] {
                    let i = t_row[t] as usize;
                    let pos = rows.binary_search(&t_row[t]).expect("row of the cell");
                    v[pos] = f64::from(t_w[t]) * free[B * i + comp];
                }
                let n0: f64 = v.iter().map(|x| x * x).sum();
                for e in &basis {
                    let d: f64 = v.iter().zip(e).map(|(x, y)| x * y).sum();
                    v.iter_mut().zip(e).for_each(|(x, y)| *x -= d * y);
                }
                let n1: f64 = v.iter().map(|x| x * x).sum();
                if n0 == 0.0 || n1 <= 1e-10 * n0 {
                    coarse_free[B * c + comp] = 0.0;
                } else {
                    let s = n1.sqrt();
                    basis.push(v.iter().map(|x| x / s).collect());
                }
            }
        }
    }
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
        let mut lowers = vec![a.symmetric.then(|| a.lower_index())];
        let mut levels = Vec::new();
        let mut matrices: Vec<BlockSparse<f32>> = Vec::new();
        let mut level_free = free.to_vec();
        // Linear-mode cells of the current level and their bucket size.
        let mut cells: Vec<Cell> = Vec::new();
        let mut cell_size = 1.0;
        let mut adjacent: Vec<[u32; 4]> = Vec::new();
        loop {
            let cur = level_matrix(a, &matrices, levels.len());
            let cur_lower = lowers[levels.len()].as_ref();
            let n = cur.n();
            if n <= options.coarse_nodes || levels.len() + 1 >= options.max_levels {
                break;
            }
            // Lines: from the matrix, except on the coarse levels of a
            // linear-mode hierarchy (the rows and columns of cells there).
            let from_matrix = !options.linear_modes || levels.is_empty();
            let (warp, weft) = if from_matrix {
                let t = options.line_threshold;
                (
                    Lines::detect(cur, cur_lower, FAMILY_COMPONENT[0], t),
                    Lines::detect(cur, cur_lower, FAMILY_COMPONENT[1], t),
                )
            } else {
                adjacent = (0..cells.len()).map(|k| [k as u32; 4]).collect();
                (
                    cell_lines(cur, cur_lower, &cells, cell_size, 0, &mut adjacent),
                    cell_lines(cur, cur_lower, &cells, cell_size, 1, &mut adjacent),
                )
            };
            // Unsmoothed prolongator rows and the coarse node count.
            let (mut rows, nc, parents) = if options.linear_modes {
                if levels.is_empty() {
                    let (coords, comp) = grid_coordinates(&warp, &weft, n);
                    cells = Cell::fine(&coords, &comp);
                }
                let size = if levels.is_empty() {
                    options.aggregate_size as f64
                } else {
                    2.0 * cell_size
                };
                let (parents, rows) = coarsen_cells(&cells, n, size);
                let nc = parents.iter().map(Cell::node_count).sum::<usize>();
                (rows, nc, Some((parents, size)))
            } else {
                let (agg, nc) = aggregate(&warp, &weft, n);
                let rows: Vec<Vec<(u32, f64)>> = agg.iter().map(|&g| vec![(g, 1.0)]).collect();
                (rows, nc, None)
            };
            if 10 * nc > 7 * n {
                break;
            }
            if options.prolongator_self_weight < 1.0 {
                let own = options.prolongator_self_weight.max(0.0);
                let passes = if options.linear_modes {
                    options.prolongator_smoothing
                } else {
                    1
                };
                if from_matrix {
                    for _ in 0..passes {
                        rows = smooth_rows(&rows, |i| line_neighbours(&warp, &weft, i), own);
                    }
                } else {
                    // Neighbours: the node of the same kind in each adjacent
                    // cell.
                    let mut node_cell = vec![(0u32, 0u8); n];
                    for (c, cell) in cells.iter().enumerate() {
                        for (t, &i) in cell.nodes.iter().enumerate() {
                            if i != u32::MAX {
                                node_cell[i as usize] = (c as u32, t as u8);
                            }
                        }
                    }
                    let neighbours = |i: usize| {
                        let (c, t) = node_cell[i];
                        adjacent[c as usize].map(|d| {
                            let j = cells[d as usize].nodes[t as usize];
                            if j == u32::MAX { i } else { j as usize }
                        })
                    };
                    for _ in 0..passes {
                        rows = smooth_rows(&rows, neighbours, own);
                    }
                }
            }
            let groups = parents.map(|(parents, size)| {
                let groups: Vec<[u32; 3]> = parents.iter().map(|p| p.nodes).collect();
                cells = parents;
                cell_size = size;
                groups
            });
            let mut p_ptr = Vec::with_capacity(n + 1);
            let mut p_col: Vec<u32> = Vec::with_capacity(n);
            let mut p_w: Vec<f32> = Vec::with_capacity(n);
            p_ptr.push(0);
            for row in &rows {
                for &(g, w) in row {
                    p_col.push(g);
                    p_w.push(w as f32);
                }
                p_ptr.push(p_col.len());
            }
            drop(rows);
            let mut t_ptr = vec![0usize; nc + 1];
            for &g in &p_col {
                t_ptr[g as usize + 1] += 1;
            }
            for c in 0..nc {
                t_ptr[c + 1] += t_ptr[c];
            }
            let mut fill = t_ptr.clone();
            let mut t_row = vec![0u32; p_col.len()];
            let mut t_w = vec![0.0f32; p_col.len()];
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
            let coarse = BlockSparse::<f32>::from_pairs(nc, pairs);
            // A coarse DOF is free when one of its aggregate's DOFs is.
            let mut coarse_free = vec![0.0; B * nc];
            for i in 0..n {
                for &g in &p_col[p_ptr[i]..p_ptr[i + 1]] {
                    for c in 0..B {
                        if level_free[B * i + c] != 0.0 {
                            coarse_free[B * g as usize + c] = 1.0;
                        }
                    }
                }
            }
            if let Some(groups) = &groups {
                drop_dependent_columns(groups, &t_ptr, &t_row, &t_w, &level_free, &mut coarse_free);
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
            lowers.push(Some(coarse.lower_index()));
            levels.push(level);
            matrices.push(coarse);
        }
        let coarse = match matrices.last() {
            Some(m) => SparseCholesky::new(m, &level_free)?,
            None => SparseCholesky::new(a, &level_free)?,
        };
        let scratch = levels
            .iter()
            .map(|lv| {
                let (len, clen) = (lv.free.len(), lv.coarse_free.len());
                Mutex::new(CycleScratch {
                    r: vec![0.0; len],
                    bc: vec![0.0; clen],
                    xc: vec![0.0; clen],
                    rc: vec![0.0; clen],
                    dc: vec![0.0; clen],
                })
            })
            .collect();
        // The fine index goes to the first update, which drops it.
        let fine_lower = lowers[0].take();
        let mut h = Self {
            options,
            fine_free: if levels.is_empty() {
                free.to_vec()
            } else {
                Vec::new()
            },
            levels,
            matrices,
            lowers,
            coarse,
            scratch,
        };
        h.update_with(a, fine_lower)?;
        h.estimate_damping(a);
        Ok(h)
    }

    /// Whether this hierarchy was built for the free mask `free`.
    pub fn matches(&self, free: &[f64]) -> bool {
        self.fine_free() == free
    }

    /// The free mask of the fine level (length `5 n`).
    fn fine_free(&self) -> &[f64] {
        self.levels.first().map_or(&self.fine_free, |l| &l.free)
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

    /// Bytes held by the hierarchy: coarse matrices and their transposed
    /// indices, line factors, maps, the cycle's work vectors and the
    /// coarsest level's Cholesky factor ([`SparseCholesky::bytes`]); not
    /// the fine matrix.
    pub fn bytes(&self) -> usize {
        let lv: usize = self
            .levels
            .iter()
            .map(|l| {
                8 * (l.free.len() + l.coarse_free.len() + l.p_ptr.len() + l.t_ptr.len())
                    + 4 * (l.p_col.len() + l.p_w.len() + l.t_row.len() + l.t_w.len())
                    + l.lines[0].bytes()
                    + l.lines[1].bytes()
            })
            .sum();
        let scratch: usize = self
            .scratch
            .iter()
            .map(|m| {
                let s = m.lock().unwrap_or_else(|e| e.into_inner());
                8 * (s.r.len() + s.bc.len() + s.xc.len() + s.rc.len() + s.dc.len())
            })
            .sum();
        lv + scratch
            + self.coarse.bytes()
            + self
                .matrices
                .iter()
                .map(BlockSparse::<f32>::bytes)
                .sum::<usize>()
            + self
                .lowers
                .iter()
                .flatten()
                .map(LowerIndex::bytes)
                .sum::<usize>()
    }

    /// Recomputes every value from a new matrix `a` with the pattern the
    /// hierarchy was built for: Galerkin coarse matrices, line factors, the
    /// coarsest factor. The damping factors are kept.
    ///
    /// # Errors
    /// [`NotPositiveDefinite`] when the coarsest matrix cannot be factored.
    pub fn update(&mut self, a: &BlockSparse) -> Result<(), NotPositiveDefinite> {
        let fine_lower = (!self.levels.is_empty() && a.symmetric).then(|| a.lower_index());
        self.update_with(a, fine_lower)
    }

    /// [`Hierarchy::update`] with the fine matrix's transposed index
    /// `fine_lower` already built (`None` for a general-mode matrix or a
    /// hierarchy without levels); it is dropped before the coarsest
    /// factorisation.
    fn update_with(
        &mut self,
        a: &BlockSparse,
        fine_lower: Option<LowerIndex>,
    ) -> Result<(), NotPositiveDefinite> {
        let lowers = &self.lowers;
        let lower = |l: usize| match l {
            0 => fine_lower.as_ref(),
            _ => lowers[l].as_ref(),
        };
        for l in 0..self.levels.len() {
            let (done, rest) = self.matrices.split_at_mut(l);
            let fine = level_matrix(a, done, l);
            galerkin(&self.levels[l], fine, lower(l), &mut rest[0]);
        }
        for l in 0..self.levels.len() {
            let m = level_matrix(a, &self.matrices, l);
            let lower = lower(l);
            let level = &mut self.levels[l];
            let [warp, weft] = &mut level.lines;
            warp.factor(m, lower, &level.free);
            weft.factor(m, lower, &level.free);
        }
        // Freed before the coarsest factorisation and its workspace.
        drop(fine_lower);
        match self.matrices.last() {
            Some(m) => self.coarse.factor(m),
            None => self.coarse.factor(a),
        }
    }

    /// Sets the damping of every line sweep to `1.6 / λ` with `λ` a power
    /// iteration estimate of `λ_max(W⁻¹ A)` on that level's free DOFs.
    fn estimate_damping(&mut self, a: &BlockSparse) {
        let its = self.options.power_iterations;
        for l in 0..self.levels.len() {
            let m = level_matrix(a, &self.matrices, l);
            let level = &mut self.levels[l];
            let len = B * m.n();
            // The cycle's level-l residual vector serves as `A x` (one
            // vector of the level's size fewer).
            let mut guard = self.scratch[l].lock().unwrap_or_else(|e| e.into_inner());
            let CycleScratch { r: ax, .. } = &mut *guard;
            for fam in 0..2 {
                let lines = &mut level.lines[fam];
                lines.omega = 1.0;
                let mut x: Vec<f64> = (0..len)
                    .map(|d| (1.0 + ((d * 7919) % 97) as f64 / 97.0) * level.free[d])
                    .collect();
                let mut z = vec![0.0; len];
                let mut lambda: f64 = 1.0;
                for _ in 0..its {
                    let norm = dot(&x, &x).sqrt();
                    if norm == 0.0 {
                        break;
                    }
                    x.iter_mut().for_each(|v| *v /= norm);
                    m.spmv(&x, ax);
                    z.fill(0.0);
                    lines.smooth(ax, &mut z, &level.free);
                    // Rayleigh quotient in the W-inner product: xᵀAx / xᵀWx
                    // is bounded by the power iterate's growth.
                    lambda = dot(&z, &z).sqrt();
                    std::mem::swap(&mut x, &mut z);
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

/// The matrix of one level: the caller's f64 fine matrix or an f32 coarse
/// one. Every value it hands out is in f64.
#[derive(Clone, Copy)]
enum LevelMatrix<'m> {
    Fine(&'m BlockSparse),
    Coarse(&'m BlockSparse<f32>),
}

impl LevelMatrix<'_> {
    /// Block rows.
    fn n(&self) -> usize {
        match self {
            Self::Fine(a) => a.n,
            Self::Coarse(a) => a.n,
        }
    }

    /// Diagonal entry `(comp, comp)` of block row `i`.
    fn diag_entry(&self, i: usize, comp: usize) -> f64 {
        match self {
            Self::Fine(a) => a.values[a.diag[i]][comp][comp],
            Self::Coarse(a) => a.values[a.diag[i]][comp][comp].to_f64(),
        }
    }

    /// See [`BlockSparse::for_each_in_row`].
    fn for_each_in_row(
        &self,
        lower: Option<&LowerIndex>,
        i: usize,
        f: impl FnMut(usize, &Block, bool),
    ) {
        match self {
            Self::Fine(a) => a.for_each_in_row(lower, i, f),
            Self::Coarse(a) => a.for_each_in_row(lower, i, f),
        }
    }

    /// `y = A x` (see [`BlockSparse::spmv`]).
    fn spmv(&self, x: &[f64], y: &mut [f64]) {
        match self {
            Self::Fine(a) => a.spmv(x, y),
            Self::Coarse(a) => a.spmv(x, y),
        }
    }
}

/// The matrix of level `l`: the caller's fine matrix `a` on level 0, the
/// coarse matrix `coarse[l - 1]` above it.
fn level_matrix<'m>(
    a: &'m BlockSparse,
    coarse: &'m [BlockSparse<f32>],
    l: usize,
) -> LevelMatrix<'m> {
    if l == 0 {
        LevelMatrix::Fine(a)
    } else {
        LevelMatrix::Coarse(&coarse[l - 1])
    }
}

/// Computes the Galerkin coarse matrix `coarse = Pᵀ A P` of `level`'s
/// prolongator (both sides masked by the free masks), parallel over coarse
/// block rows; the pattern of `coarse` was built for it. A symmetric-mode
/// `coarse` gets only its blocks on and above the diagonal.
fn galerkin(
    level: &Level,
    fine: LevelMatrix<'_>,
    fine_lower: Option<&LowerIndex>,
    coarse: &mut BlockSparse<f32>,
) {
    let free = &level.free;
    let cfree = &level.coarse_free;
    let mut rows: Vec<(usize, &mut [[[f32; B]; B]])> = Vec::with_capacity(coarse.n);
    let mut rest: &mut [[[f32; B]; B]] = &mut coarse.values;
    for c in 0..coarse.n {
        let (head, tail) = rest.split_at_mut(coarse.row_ptr[c + 1] - coarse.row_ptr[c]);
        rows.push((c, head));
        rest = tail;
    }
    let (row_ptr, cols, symmetric) = (&coarse.row_ptr, &coarse.cols, coarse.symmetric);
    // Each row is summed in f64 and rounded once.
    let work = |acc: &mut Vec<Block>, (c, out): &mut (usize, &mut [[[f32; B]; B]])| {
        let c = *c;
        let ccols = &cols[row_ptr[c]..row_ptr[c + 1]];
        acc.clear();
        acc.resize(out.len(), [[0.0; B]; B]);
        for t in level.t_ptr[c]..level.t_ptr[c + 1] {
            let i = level.t_row[t] as usize;
            let wi = f64::from(level.t_w[t]);
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
                    if symmetric && d < c {
                        continue;
                    }
                    let wj = f64::from(level.p_w[p]);
                    let pos = ccols
                        .binary_search(&(d as u32))
                        .expect("coarse pattern holds every Galerkin block");
                    let o = &mut acc[pos];
                    for r in 0..B {
                        for q in 0..B {
                            o[r][q] += m[r][q] * wj * cfree[B * d + q];
                        }
                    }
                }
            });
        }
        for (o, a) in out.iter_mut().zip(acc.iter()) {
            *o = a.map(|row| row.map(f32::from_f64));
        }
    };
    if fine.n() < PARALLEL_MIN / B {
        let mut acc = Vec::new();
        rows.iter_mut().for_each(|row| work(&mut acc, row));
    } else {
        rows.par_iter_mut()
            .with_min_len(16)
            .for_each_init(Vec::new, |acc, row| work(acc, row));
    }
}

/// `r = b - A x` with the fixed DOFs of `r` zero.
fn residual(a: LevelMatrix<'_>, free: &[f64], b: &[f64], x: &[f64], r: &mut [f64]) {
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
        let a = level_matrix(self.matrix, &h.matrices, l);
        let level = &h.levels[l];
        let free = &level.free;
        let mut guard = h.scratch[l].lock().unwrap_or_else(|e| e.into_inner());
        let CycleScratch { r, bc, xc, rc, dc } = &mut *guard;
        x.iter_mut().for_each(|v| *v = 0.0);
        let [warp, weft] = &level.lines;
        warp.smooth(b, x, free);
        residual(a, free, b, x, r);
        weft.smooth(r, x, free);
        residual(a, free, b, x, r);
        // Coarse correction.
        let cfree = &level.coarse_free;
        let restrict = |(c, bcc): (usize, &mut [f64])| {
            bcc.iter_mut().for_each(|v| *v = 0.0);
            for t in level.t_ptr[c]..level.t_ptr[c + 1] {
                let i = level.t_row[t] as usize;
                let w = f64::from(level.t_w[t]);
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
        self.cycle(l + 1, bc, xc);
        if l + 1 < h.levels.len() {
            // W-cycle: further cycles on the coarse residual.
            let ac = LevelMatrix::Coarse(&h.matrices[l]);
            let cf = &h.levels[l + 1].free;
            for _ in 1..h.options.coarse_cycles {
                residual(ac, cf, bc, xc, rc);
                self.cycle(l + 1, rc, dc);
                xc.iter_mut().zip(dc.iter()).for_each(|(x, d)| *x += d);
            }
        }
        let prolong = |(i, xi): (usize, &mut [f64])| {
            for p in level.p_ptr[i]..level.p_ptr[i + 1] {
                let g = level.p_col[p] as usize;
                let w = f64::from(level.p_w[p]);
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
        residual(a, free, b, x, r);
        weft.smooth(r, x, free);
        residual(a, free, b, x, r);
        warp.smooth(r, x, free);
    }
}

impl Preconditioner for Multigrid<'_> {
    /// One symmetric cycle (V or W, [`MultigridOptions::coarse_cycles`])
    /// from a zero initial guess: `z = M⁻¹ r`. The fixed DOFs of `r` are
    /// ignored (the level-0 smoothers, residuals and restriction all mask
    /// by the free mask) and those of `z` are zero.
    fn apply(&self, r: &[f64], z: &mut [f64]) {
        self.cycle(0, r, z);
        let free = self.hierarchy.fine_free();
        z.iter_mut().zip(free).for_each(|(z, f)| *z *= f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Settings, Simulation};
    use nalgebra::Vector3;
    use weft_core::{FabricBuilder, Material, WovenPatchSpec};

    /// The assembled matrix of a `warps` x `wefts` patch at rest.
    fn patch_matrix(warps: usize, wefts: usize) -> BlockSparse {
        let mut b = FabricBuilder::new(vec![Material::sbo17()]).unwrap();
        let extent = [0.57e-3 * (warps - 1) as f64, 0.57e-3 * (wefts - 1) as f64];
        b.add_woven_patch(&WovenPatchSpec::new(
            "sbo17",
            extent,
            [warps, wefts],
            [0.0; 3],
        ))
        .unwrap();
        let mut sim = Simulation::new(
            b.build().unwrap(),
            Vector3::new(0.0, -9.81, 0.0),
            Settings::default(),
            vec![],
        );
        let (q, v) = (sim.q.clone(), sim.v.clone());
        let anchors = sim.anchors.clone();
        let mut r = vec![0.0; q.len()];
        sim.assembler.begin_step(&q, &v, 1e-3, 1e-3);
        sim.assembler
            .assemble(&q, &v, &v, 1e-3, &anchors, &mut r, true);
        sim.assembler.matrix.clone()
    }

    fn lines(a: &BlockSparse) -> (Lines, Lines) {
        let lower = a.symmetric.then(|| a.lower_index());
        let t = MultigridOptions::default().line_threshold;
        (
            Lines::detect(LevelMatrix::Fine(a), lower.as_ref(), FAMILY_COMPONENT[0], t),
            Lines::detect(LevelMatrix::Fine(a), lower.as_ref(), FAMILY_COMPONENT[1], t),
        )
    }

    /// The banded Cholesky, its f32 envelope storage with reciprocal pivots
    /// and the four-accumulator solve together invert an SPD band matrix of
    /// 5x5 blocks (40 rows, block rows coupled two apart as on the fine
    /// level, half-bandwidth 14; a short line of 3 rows; a block-diagonal
    /// one): `A x = b` holds to 1e-5 relative, the f32 rounding of the
    /// factor. The envelope holds 65 values per block row instead of the
    /// band's 75. Four lines solved in lockstep ([`band_solve_many`]) equal
    /// four single solves bit for bit.
    #[test]
    fn band_solve_inverts_the_band_matrix_one_line_or_four() {
        assert_eq!(envelope_len(40, 14), 15 + 40 + 6 * 65);
        assert_eq!(envelope_len(25, 4), 5 * 15);
        for (m, bw) in [(40usize, 14usize), (3, 14), (25, 4)] {
            let w1 = bw + 1;
            let w = (bw + 1) / B - 1;
            // A symmetric, diagonally dominant matrix of 5x5 blocks, block
            // rows coupled up to w apart (off-diagonal row sums below
            // 0.5 · 2 · H(14) ≈ 3.3 < 4).
            let a = |i: usize, j: usize| -> f64 {
                let d = i.abs_diff(j);
                if (i / B).abs_diff(j / B) > w {
                    0.0
                } else if d == 0 {
                    4.0 + (i % 3) as f64
                } else {
                    let (p, q) = (i.min(j), i.max(j));
                    0.25 * (((p + 2 * q) % 5) as f64 - 2.0) / d as f64
                }
            };
            let mut f = vec![0.0; m * w1];
            for i in 0..m {
                for j in i.saturating_sub(bw)..=i {
                    f[i * w1 + j + bw - i] = a(i, j);
                }
            }
            band_cholesky(&mut f, bw);
            let mut stored = vec![0.0f32; envelope_len(m, bw)];
            store_factor(&f, bw, &mut stored);
            let b: Vec<f64> = (0..m).map(|i| 1.0 + (i * 7 % 11) as f64).collect();
            let mut x = b.clone();
            band_solve(&stored, bw, &mut x);
            let bnorm = dot(&b, &b).sqrt();
            let err: f64 = (0..m)
                .map(|i| {
                    let ax: f64 = (0..m).map(|j| a(i, j) * x[j]).sum();
                    (ax - b[i]).powi(2)
                })
                .sum::<f64>()
                .sqrt();
            assert!(err <= 1e-5 * bnorm, "m {m} bw {bw}: |Ax - b| = {err:.3e}");
            // Four lines in lockstep (different factors and right-hand
            // sides) give exactly what one at a time gives.
            let factors: Vec<Vec<f32>> = (0..4)
                .map(|k| {
                    stored
                        .iter()
                        .map(|v| v * (1.0 + 0.125 * k as f32))
                        .collect()
                })
                .collect();
            let rhs: Vec<Vec<f64>> = (0..4)
                .map(|k| b.iter().map(|v| v - k as f64).collect())
                .collect();
            let mut single = rhs.clone();
            for (x, f) in single.iter_mut().zip(&factors) {
                band_solve(f, bw, x);
            }
            let mut many = rhs.clone();
            let [x0, x1, x2, x3] = &mut many[..] else {
                unreachable!("four right-hand sides")
            };
            band_solve_many(
                [&factors[0][..], &factors[1], &factors[2], &factors[3]],
                bw,
                [&mut x0[..], x1, x2, x3],
            );
            assert_eq!(many, single, "m {m} bw {bw}");
            assert_ne!(many[0], many[1]);
        }
    }

    /// On a 13 x 9 patch the walk recovers the crossing grid: one component,
    /// every warp link moves the warp position by exactly one and keeps the
    /// weft position, every weft link the other way round, and the 117 nodes
    /// get 117 distinct positions.
    #[test]
    fn grid_coordinates_recover_the_crossing_grid() {
        let a = patch_matrix(13, 9);
        let (warp, weft) = lines(&a);
        let (coords, comp) = grid_coordinates(&warp, &weft, a.n);
        assert!(comp.iter().all(|&c| c == 0));
        for (f, fam) in [&warp, &weft].into_iter().enumerate() {
            for l in 0..fam.count() {
                for w in fam.nodes[fam.start[l]..fam.start[l + 1]].windows(2) {
                    let (p, q) = (coords[w[0] as usize], coords[w[1] as usize]);
                    assert_eq!((p[f] - q[f]).abs(), 1.0, "family {f}: {p:?} {q:?}");
                    assert_eq!(p[1 - f], q[1 - f], "family {f}: {p:?} {q:?}");
                }
            }
        }
        let mut keys: Vec<(i64, i64)> = coords.iter().map(|c| (c[0] as i64, c[1] as i64)).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), 117);
    }

    /// Prolongating a linear field `1 + 2a + 3b` given on two levels of
    /// cells down to the crossings reproduces it exactly (to round-off)
    /// everywhere with the plain rows, and at every interior node (all four
    /// line neighbours present, and theirs) with the smoothed rows.
    #[test]
    fn cells_reproduce_linear_fields() {
        let a = patch_matrix(23, 17);
        let (warp, weft) = lines(&a);
        let (coords, comp) = grid_coordinates(&warp, &weft, a.n);
        let f = |p: [f64; 2]| 1.0 + 2.0 * p[0] + 3.0 * p[1];
        let cells0 = Cell::fine(&coords, &comp);
        let (cells1, rows0) = coarsen_cells(&cells0, a.n, 4.0);
        let n1: usize = cells1.iter().map(Cell::node_count).sum();
        let (cells2, rows1) = coarsen_cells(&cells1, n1, 8.0);
        let n2: usize = cells2.iter().map(Cell::node_count).sum();
        assert!(n2 < n1 && n1 < a.n, "{} {n1} {n2}", a.n);
        // The coarse values of the field: constant = f at the centroid,
        // slopes 2 and 3.
        let mut v2 = vec![0.0; n2];
        for c in &cells2 {
            v2[c.nodes[0] as usize] = f(c.pos);
            for (t, s) in [(1, 2.0), (2, 3.0)] {
                if c.nodes[t] != u32::MAX {
                    v2[c.nodes[t] as usize] = s;
                }
            }
        }
        let apply = |rows: &[Vec<(u32, f64)>], v: &[f64]| -> Vec<f64> {
            rows.iter()
                .map(|r| r.iter().map(|&(g, w)| w * v[g as usize]).sum())
                .collect()
        };
        let v1 = apply(&rows1, &v2);
        let v0 = apply(&rows0, &v1);
        for i in 0..a.n {
            assert!(
                (v0[i] - f(coords[i])).abs() < 1e-9,
                "node {i}: {} vs {}",
                v0[i],
                f(coords[i])
            );
        }
        let smooth = smooth_rows(&rows0, |i| line_neighbours(&warp, &weft, i), 0.2);
        let v0s = apply(&smooth, &v1);
        let mut interior = 0;
        for i in 0..a.n {
            let nb = line_neighbours(&warp, &weft, i);
            if nb.contains(&i) {
                continue;
            }
            interior += 1;
            assert!(
                (v0s[i] - f(coords[i])).abs() < 1e-9,
                "node {i}: {} vs {}",
                v0s[i],
                f(coords[i])
            );
        }
        assert_eq!(interior, 21 * 15);
    }
}
