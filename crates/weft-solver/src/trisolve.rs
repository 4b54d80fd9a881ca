//! Parallel triangular solves with a supernodal Cholesky factor
//! `P A Pᵀ = L Lᵀ` (faer's layout), for one right-hand side.
//!
//! Why: a PCG iteration with the [`crate::cholesky::SparseCholesky`]
//! preconditioner is dominated by the two triangular solves, which stream
//! the whole factor (780 MB for the 200x200 [SBO17 §6.3] sphere patch) and
//! are memory-bound. faer runs them supernode after supernode; on a two-core
//! machine one thread does not saturate the memory bus.
//!
//! How: the supernodes form an elimination tree (a supernode's parent is the
//! supernode owning the first row of its off-diagonal pattern). Supernodes in
//! disjoint subtrees touch disjoint columns, except for the rows of their
//! common ancestors. [`SolveSchedule`] cuts the tree into a sequential *top*
//! (the ancestors) and [`SOLVE_GROUPS`] groups of whole subtrees, balanced by
//! the number of factor values (the bytes streamed); a fixed number of
//! groups, not one per thread, so that the result does not depend on the
//! thread count. The forward solve runs
//! the groups in parallel, each on its own copy of the vector, adds their
//! updates of the top rows, then finishes the top; the backward solve runs
//! the top first, then the groups. The arithmetic per supernode is the
//! textbook one (a dense triangular solve of the diagonal block, then a
//! matrix-vector product with the block below it), so the result equals the
//! sequential solve up to the order of floating-point additions.

use rayon::prelude::*;

/// Read-only view of a supernodal factor, borrowed from faer's symbolic
/// factorisation: supernode `s` owns the columns `begin[s]..end[s]`, the
/// row pattern below its diagonal block
/// `row_idx[pattern_ptr[s]..][..pattern_len[s]]` (sorted), and the values
/// `values[val_ptr[s]..val_ptr[s + 1]]`, column-major with
/// `ncols + pattern_len` rows (the lower-triangular diagonal block on top).
#[derive(Clone, Copy)]
pub(crate) struct Supernodes<'a> {
    pub begin: &'a [usize],
    pub end: &'a [usize],
    pub pattern_ptr: &'a [usize],
    pub pattern_len: &'a [usize],
    pub row_idx: &'a [usize],
    pub val_ptr: &'a [usize],
    pub values: &'a [f64],
}

impl Supernodes<'_> {
    fn count(&self) -> usize {
        self.pattern_len.len()
    }

    fn pattern(&self, s: usize) -> &[usize] {
        &self.row_idx[self.pattern_ptr[s]..][..self.pattern_len[s]]
    }

    fn columns(&self, s: usize) -> std::ops::Range<usize> {
        self.begin[s]..self.end[s]
    }

    /// Supernode `s`: its columns, row pattern, column count, row count
    /// (diagonal block plus pattern) and column-major values.
    #[allow(clippy::type_complexity)]
    fn supernode(&self, s: usize) -> (std::ops::Range<usize>, &[usize], usize, usize, &[f64]) {
        let cols = self.columns(s);
        let pat = self.pattern(s);
        let nc = cols.len();
        let l = &self.values[self.val_ptr[s]..self.val_ptr[s + 1]];
        (cols, pat, nc, nc + pat.len(), l)
    }

    /// Forward substitution of supernode `s`: `x_s ← L_ss⁻¹ x_s`, then
    /// `x[pattern] -= L_below x_s`. `tmp` is scratch of any length.
    fn forward(&self, s: usize, x: &mut [f64], tmp: &mut Vec<f64>) {
        let (cols, pat, nc, nr, l) = self.supernode(s);
        tmp.clear();
        tmp.resize(pat.len(), 0.0);
        for c in 0..nc {
            let col = &l[c * nr..(c + 1) * nr];
            let xc = x[cols.start + c] / col[c];
            x[cols.start + c] = xc;
            for (xr, &lr) in x[cols.start + c + 1..cols.end]
                .iter_mut()
                .zip(&col[c + 1..nc])
            {
                *xr -= lr * xc;
            }
            for (t, &lr) in tmp.iter_mut().zip(&col[nc..]) {
                *t += lr * xc;
            }
        }
        for (&i, &t) in pat.iter().zip(tmp.iter()) {
            x[i] -= t;
        }
    }

    /// Backward substitution of supernode `s`: `x_s ← L_ssᵀ⁻¹ (x_s −
    /// L_belowᵀ x[pattern])`. `tmp` is scratch of any length.
    fn backward(&self, s: usize, x: &mut [f64], tmp: &mut Vec<f64>) {
        let (cols, pat, nc, nr, l) = self.supernode(s);
        tmp.clear();
        tmp.extend(pat.iter().map(|&i| x[i]));
        for c in (0..nc).rev() {
            let col = &l[c * nr..(c + 1) * nr];
            let below = dot(&col[nc..], tmp);
            let inside = dot(&col[c + 1..nc], &x[cols.start + c + 1..cols.end]);
            x[cols.start + c] = (x[cols.start + c] - below - inside) / col[c];
        }
    }
}

/// Dot product with eight independent accumulators (a single running sum is
/// bound by the latency of the floating-point add, not by memory).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0; 8];
    let mut ca = a.chunks_exact(8);
    let mut cb = b.chunks_exact(8);
    for (x, y) in (&mut ca).zip(&mut cb) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    let tail: f64 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    acc.iter().sum::<f64>() + tail
}

/// Work vectors of [`SolveSchedule::solve`], reused between calls: one copy
/// of the right-hand side and one supernode buffer per worker group.
#[derive(Debug, Default)]
pub(crate) struct SolveScratch {
    copies: Vec<Vec<f64>>,
    tmp: Vec<Vec<f64>>,
}

/// Factors with fewer values than this (16 MB) run their worker groups one
/// after the other on the calling thread: the hand-off to the pool costs
/// more than the stream it splits. The arithmetic, and so every bit of the
/// result, is that of the parallel solve. Measured on the 2-core Xeon
/// (BENCHMARKS.md, 2026-11-28; fully sequential solves): one bench step's
/// solves of a 400-node patch (3.2 x 10^5 values) 5.5 ms on one thread
/// against 11 ms on two, 1,024 nodes (1.1 x 10^6) 33 against 44 ms, 2,500
/// nodes (3.4 x 10^6) 89 against 70 ms.
pub(crate) const PARALLEL_SOLVE_MIN_VALUES: usize = 1 << 21;

/// Worker groups of the solves, whatever the thread count: the groups fix
/// the order of the floating-point additions, so a fixed number makes a
/// run repeat bit for bit on any number of threads (as the reductions of
/// `crate::par`). Four groups keep two to four cores busy; the solves are
/// memory-bound, so more cores gain little.
pub(crate) const SOLVE_GROUPS: usize = 4;

/// The split of the supernodal elimination tree into worker groups of whole
/// subtrees and a sequential top (see the module docs).
#[derive(Clone, Debug, Default)]
pub(crate) struct SolveSchedule {
    /// Supernodes of each worker group, ascending (children before parents).
    groups: Vec<Vec<usize>>,
    /// Columns owned by each group.
    group_columns: Vec<Vec<usize>>,
    /// Supernodes of the top, ascending.
    top: Vec<usize>,
    /// Columns owned by the top.
    top_columns: Vec<usize>,
    /// Whether the groups run on the thread pool (factors of at least
    /// [`PARALLEL_SOLVE_MIN_VALUES`] values) or one after the other.
    parallel: bool,
}

impl SolveSchedule {
    /// Splits the elimination tree of `sn` for `workers` threads. Falls back
    /// to one sequential group when the split would not save at least a
    /// quarter of the streamed values (small or chain-like factors).
    pub(crate) fn new(sn: &Supernodes<'_>, workers: usize) -> Self {
        let ns = sn.count();
        let n = sn.end.last().copied().unwrap_or(0);
        let mut owner = vec![0usize; n];
        for s in 0..ns {
            owner[sn.columns(s)].fill(s);
        }
        let parent: Vec<Option<usize>> = (0..ns)
            .map(|s| sn.pattern(s).iter().min().map(|&i| owner[i]))
            .collect();
        let mut children = vec![Vec::new(); ns];
        let mut work: Vec<f64> = (0..ns)
            .map(|s| (sn.val_ptr[s + 1] - sn.val_ptr[s]) as f64)
            .collect();
        let own = work.clone();
        for s in 0..ns {
            if let Some(p) = parent[s] {
                debug_assert!(p > s, "elimination tree parent after child");
                work[p] += work[s];
                children[p].push(s);
            }
        }
        let total: f64 = own.iter().sum();
        let sequential = Self {
            groups: vec![(0..ns).collect()],
            group_columns: vec![(0..n).collect()],
            top: Vec::new(),
            top_columns: Vec::new(),
            parallel: false,
        };
        if workers < 2 || ns == 0 {
            return sequential;
        }
        // Expand the heaviest subtree root into the top while that lowers
        // the estimated cost (top + largest group after an LPT assignment).
        let mut frontier: Vec<usize> = (0..ns).filter(|&s| parent[s].is_none()).collect();
        let mut top_work = 0.0;
        let mut top_set: Vec<usize> = Vec::new();
        let assign = |frontier: &[usize]| {
            let mut order = frontier.to_vec();
            order.sort_by(|&a, &b| work[b].total_cmp(&work[a]));
            let mut bins = vec![0.0f64; workers];
            let mut bin_of = Vec::with_capacity(order.len());
            for &r in &order {
                let (k, _) = bins
                    .iter()
                    .enumerate()
                    .min_by(|a, b| a.1.total_cmp(b.1))
                    .expect("at least two workers");
                bins[k] += work[r];
                bin_of.push((r, k));
            }
            let makespan = bins.iter().cloned().fold(0.0, f64::max);
            (makespan, bin_of)
        };
        let (mut best_cost, mut best_bins) = assign(&frontier);
        let mut best_top = top_set.clone();
        for _ in 0..256 {
            let Some((pos, &heaviest)) = frontier
                .iter()
                .enumerate()
                .max_by(|a, b| work[*a.1].total_cmp(&work[*b.1]))
            else {
                break;
            };
            frontier.swap_remove(pos);
            top_work += own[heaviest];
            top_set.push(heaviest);
            frontier.extend(&children[heaviest]);
            let (makespan, bins) = assign(&frontier);
            if top_work + makespan < best_cost {
                best_cost = top_work + makespan;
                best_bins = bins;
                best_top = top_set.clone();
            }
        }
        if best_cost > 0.75 * total {
            return sequential;
        }
        // Label every supernode: top, or the group of its frontier ancestor.
        const TOP: usize = usize::MAX;
        let mut label = vec![TOP; ns];
        let mut is_top = vec![false; ns];
        for &s in &best_top {
            is_top[s] = true;
        }
        for &(r, k) in &best_bins {
            label[r] = k;
        }
        for s in (0..ns).rev() {
            if is_top[s] || label[s] != TOP {
                continue;
            }
            let p = parent[s].expect("a root is either top or a frontier root");
            label[s] = label[p];
        }
        let mut groups = vec![Vec::new(); workers];
        let mut group_columns = vec![Vec::new(); workers];
        let mut top = Vec::new();
        let mut top_columns = Vec::new();
        for s in 0..ns {
            if label[s] == TOP {
                top.push(s);
                top_columns.extend(sn.columns(s));
            } else {
                groups[label[s]].push(s);
                group_columns[label[s]].extend(sn.columns(s));
            }
        }
        Self {
            groups,
            group_columns,
            top,
            top_columns,
            parallel: total >= PARALLEL_SOLVE_MIN_VALUES as f64,
        }
    }

    /// `work(copy, tmp, supernodes)` for every worker group, on the pool
    /// when `parallel`, else one after the other (the groups write only
    /// their own vectors, so the results are the same).
    fn for_each_group(
        &self,
        copies: &mut [Vec<f64>],
        tmp: &mut [Vec<f64>],
        work: impl Fn(&mut Vec<f64>, &mut Vec<f64>, &Vec<usize>) + Sync + Send,
    ) {
        if self.parallel {
            (copies.par_iter_mut(), tmp.par_iter_mut(), &self.groups)
                .into_par_iter()
                .for_each(|(c, t, g)| work(c, t, g));
        } else {
            for ((c, t), g) in copies.iter_mut().zip(tmp.iter_mut()).zip(&self.groups) {
                work(c, t, g);
            }
        }
    }

    /// Solves `L Lᵀ x = x` in place (permuted numbering), with work
    /// vectors kept in `scratch` between calls.
    pub(crate) fn solve(&self, sn: &Supernodes<'_>, x: &mut [f64], scratch: &mut SolveScratch) {
        let SolveScratch { copies, tmp } = scratch;
        copies.resize_with(self.groups.len(), Vec::new);
        tmp.resize_with(self.groups.len(), Vec::new);
        if self.groups.len() == 1 {
            let tmp = &mut tmp[0];
            for &s in &self.groups[0] {
                sn.forward(s, x, tmp);
            }
            for &s in self.groups[0].iter().rev() {
                sn.backward(s, x, tmp);
            }
            return;
        }
        // Forward: groups in parallel on private copies whose top rows start
        // at zero, so that they collect only the group's updates of them.
        let xr: &[f64] = x;
        let top_columns = &self.top_columns;
        self.for_each_group(copies, tmp, |c, t, g| {
            c.clear();
            c.extend_from_slice(xr);
            for &j in top_columns {
                c[j] = 0.0;
            }
            for &s in g {
                sn.forward(s, c, t);
            }
        });
        for (c, cols) in copies.iter().zip(&self.group_columns) {
            for &j in cols {
                x[j] = c[j];
            }
            for &j in top_columns {
                x[j] += c[j];
            }
        }
        for &s in &self.top {
            sn.forward(s, x, &mut tmp[0]);
        }
        // Backward: the top, then the groups in parallel.
        for &s in self.top.iter().rev() {
            sn.backward(s, x, &mut tmp[0]);
        }
        let xr: &[f64] = x;
        self.for_each_group(copies, tmp, |c, t, g| {
            c.clear();
            c.extend_from_slice(xr);
            for &s in g.iter().rev() {
                sn.backward(s, c, t);
            }
        });
        for (c, cols) in copies.iter().zip(&self.group_columns) {
            for &j in cols {
                x[j] = c[j];
            }
        }
    }

    /// Number of worker groups (1: sequential).
    #[cfg(test)]
    pub(crate) fn groups(&self) -> usize {
        self.groups.len()
    }

    /// Whether the groups run on the thread pool (tests).
    #[cfg(test)]
    pub(crate) fn is_parallel(&self) -> bool {
        self.parallel
    }

    /// The same schedule with its groups on the pool or not (tests).
    #[cfg(test)]
    pub(crate) fn with_parallel(mut self, parallel: bool) -> Self {
        self.parallel = parallel;
        self
    }
}
