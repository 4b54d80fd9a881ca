//! 5x5 block compressed-sparse-row matrices (DESIGN §7: one DOF layout per
//! node, uniform 5x5 blocks for both backends).
//!
//! The sparsity pattern is built once from the node pairs that share an
//! element. Values are row-major 5x5 blocks. Two storage modes:
//!
//! - **symmetric** ([`BlockSparse::from_pairs`], the CPU system matrix):
//!   each block row `i` stores only the blocks `(i, j)` with `j ≥ i`; a
//!   block `(j, i)` below the diagonal is the transpose of `(i, j)`.
//!   Diagonal blocks are stored whole (they need not be symmetric). Half the
//!   values of the general mode: 7 instead of 13 blocks per node on a woven
//!   patch, about 1.2 KB per node less. SpMV streams each block once and
//!   applies it twice (`y_i += A_ij x_j`, `y_j += A_ijᵀ x_i`), parallel over
//!   chunks of block rows in two phases whose write windows do not overlap
//!   (see [`BlockSparse::spmv`]).
//! - **general** ([`BlockSparse::from_pairs_general`], the CUDA backend's
//!   device layout): both triangles stored, SpMV parallel over block rows
//!   without any write conflict.
//!
//! The values are f64 ([`BlockSparse`]'s default) or f32
//! (`BlockSparse<f32>`, the multigrid's coarse levels: half the memory and
//! half the bytes a residual streams). Every product and every block handed
//! out ([`BlockSparse::for_each_in_row`], [`BlockSparse::block`]) is in f64.

use rayon::prelude::*;

/// DOFs per node (x, y, z, u, v).
pub const B: usize = 5;
/// One 5x5 block, row-major.
pub type Block = [[f64; B]; B];

/// The storage precision of a [`BlockSparse`]'s values: `f64` or `f32`.
/// Arithmetic is always in f64; an f32 value is widened when read and
/// rounded to nearest when stored.
pub trait Scalar: Copy + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    /// The value in f64 (exact).
    fn to_f64(self) -> f64;
    /// `v` rounded to this precision.
    fn from_f64(v: f64) -> Self;
    /// Calls `f` with `b` as an f64 block: `b` itself for f64 storage, a
    /// widened copy for f32.
    fn with_block<R>(b: &[[Self; B]; B], f: impl FnOnce(&Block) -> R) -> R;
}

impl Scalar for f64 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn with_block<R>(b: &Block, f: impl FnOnce(&Block) -> R) -> R {
        f(b)
    }
}

impl Scalar for f32 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn with_block<R>(b: &[[f32; B]; B], f: impl FnOnce(&Block) -> R) -> R {
        f(&widen(b))
    }
}

/// A block in f64.
#[inline(always)]
pub fn widen<T: Scalar>(b: &[[T; B]; B]) -> Block {
    std::array::from_fn(|r| std::array::from_fn(|c| b[r][c].to_f64()))
}

/// Most block rows per chunk of the symmetric SpMV (a chunk writes a
/// window of two chunks of `y`, at most 320 KB, which stays in the L2
/// cache).
const SPMV_CHUNK_ROWS: usize = 4096;

/// Fewest block rows per chunk of the symmetric SpMV (a chunk is one
/// parallel task).
const SPMV_CHUNK_ROWS_MIN: usize = 256;

/// A square block-sparse matrix with `n` block rows of size 5, values
/// stored in precision `T` (f64 by default; see [`Scalar`]).
#[derive(Clone, Debug)]
pub struct BlockSparse<T: Scalar = f64> {
    /// Number of block rows (nodes).
    pub n: usize,
    /// Start of each block row in `cols`/`values`, length `n + 1`.
    pub row_ptr: Vec<usize>,
    /// Block column of each stored block, sorted within a row.
    pub cols: Vec<u32>,
    /// The blocks (row-major 5x5, in the storage precision).
    pub values: Vec<[[T; B]; B]>,
    /// Index of the diagonal block of each row.
    pub diag: Vec<usize>,
    /// Only the blocks `(i, j)` with `j ≥ i` are stored; the others are the
    /// transposes (see the module docs).
    pub symmetric: bool,
    /// Symmetric mode: the stored blocks `(i, j)` whose transpose lands
    /// beyond the SpMV window of row `i`'s chunk (`j` two chunks or more
    /// past the chunk's first row; seam ties between distant nodes), as
    /// `(i, index into values)`; their transposed products run after the
    /// parallel pass.
    far_blocks: Vec<(u32, u32)>,
    /// Symmetric mode: block rows per SpMV chunk, the smallest power of two
    /// in `[SPMV_CHUNK_ROWS_MIN, SPMV_CHUNK_ROWS]` that covers the reach
    /// `max_j (j - i)` of 99% of the rows, so that a small matrix still
    /// splits into enough chunks to keep every core busy.
    chunk_rows: usize,
}

impl BlockSparse<f64> {
    /// The matrix as a dense `5n x 5n` nalgebra matrix (both triangles),
    /// for tests and small systems.
    pub fn to_dense(&self) -> nalgebra::DMatrix<f64> {
        let a = self.to_general();
        let mut d = nalgebra::DMatrix::zeros(B * a.n, B * a.n);
        for i in 0..a.n {
            for k in a.row_ptr[i]..a.row_ptr[i + 1] {
                let j = a.cols[k] as usize;
                for r in 0..B {
                    for c in 0..B {
                        d[(B * i + r, B * j + c)] = a.values[k][r][c];
                    }
                }
            }
        }
        d
    }
}

impl<T: Scalar> BlockSparse<T> {
    /// The symmetric-mode pattern (upper triangle and diagonal) for the
    /// given node pairs (either order), plus a diagonal block for every row;
    /// values zero.
    pub fn from_pairs(n: usize, pairs: impl IntoIterator<Item = (usize, usize)>) -> Self {
        let mut rows: Vec<Vec<u32>> = (0..n).map(|i| vec![i as u32]).collect();
        for (i, j) in pairs {
            if i != j {
                let (a, b) = (i.min(j), i.max(j));
                rows[a].push(b as u32);
            }
        }
        Self::from_rows(n, rows, true)
    }

    /// The general-mode pattern (both `(i, j)` and `(j, i)` for every given
    /// pair, a diagonal block for every row); values zero.
    pub fn from_pairs_general(n: usize, pairs: impl IntoIterator<Item = (usize, usize)>) -> Self {
        let mut rows: Vec<Vec<u32>> = (0..n).map(|i| vec![i as u32]).collect();
        for (i, j) in pairs {
            if i != j {
                rows[i].push(j as u32);
                rows[j].push(i as u32);
            }
        }
        Self::from_rows(n, rows, false)
    }

    fn from_rows(n: usize, rows: Vec<Vec<u32>>, symmetric: bool) -> Self {
        let (row_ptr, cols, diag) = Self::compress(rows);
        let nnz = cols.len();
        let values = vec![[[T::default(); B]; B]; nnz];
        crate::par::advise_huge_pages(&values);
        let mut m = Self {
            n,
            row_ptr,
            cols,
            values,
            diag,
            symmetric,
            far_blocks: Vec::new(),
            chunk_rows: SPMV_CHUNK_ROWS,
        };
        if symmetric {
            let mut reach: Vec<usize> = (0..n)
                .map(|i| m.cols[m.row_ptr[i + 1] - 1] as usize - i)
                .collect();
            if n > 0 {
                let p99 = (n - 1) * 99 / 100;
                let (_, &mut r, _) = reach.select_nth_unstable(p99);
                m.chunk_rows = r
                    .next_power_of_two()
                    .clamp(SPMV_CHUNK_ROWS_MIN, SPMV_CHUNK_ROWS);
            }
            let chunk = m.chunk_rows;
            for i in 0..n {
                let window_end = (i / chunk + 2) * chunk;
                for k in m.row_ptr[i]..m.row_ptr[i + 1] {
                    if m.cols[k] as usize >= window_end {
                        m.far_blocks.push((i as u32, k as u32));
                    }
                }
            }
        }
        m
    }

    /// Sorts and deduplicates each row; returns `(row_ptr, cols, diag)`.
    fn compress(rows: Vec<Vec<u32>>) -> (Vec<usize>, Vec<u32>, Vec<usize>) {
        let mut row_ptr = Vec::with_capacity(rows.len() + 1);
        let mut cols = Vec::with_capacity(rows.iter().map(Vec::len).sum());
        let mut diag = Vec::with_capacity(rows.len());
        row_ptr.push(0);
        for (i, mut r) in rows.into_iter().enumerate() {
            r.sort_unstable();
            r.dedup();
            let start = cols.len();
            diag.push(start + r.binary_search(&(i as u32)).expect("diagonal present"));
            cols.extend(r);
            row_ptr.push(cols.len());
        }
        (row_ptr, cols, diag)
    }

    /// The general-mode pattern of the same matrix, **without values**
    /// (`values` empty): for building the scatter maps of a backend that
    /// stores both triangles (the CUDA backend).
    pub fn general_pattern(&self) -> Self {
        let mut rows: Vec<Vec<u32>> = (0..self.n)
            .map(|i| self.cols[self.row_ptr[i]..self.row_ptr[i + 1]].to_vec())
            .collect();
        if self.symmetric {
            for i in 0..self.n {
                for k in self.row_ptr[i]..self.row_ptr[i + 1] {
                    let j = self.cols[k] as usize;
                    if j != i {
                        rows[j].push(i as u32);
                    }
                }
            }
        }
        let (row_ptr, cols, diag) = Self::compress(rows);
        Self {
            n: self.n,
            row_ptr,
            cols,
            values: Vec::new(),
            diag,
            symmetric: false,
            far_blocks: Vec::new(),
            chunk_rows: SPMV_CHUNK_ROWS,
        }
    }

    /// The same matrix in general mode, values included (lower blocks the
    /// transposes of the stored upper ones). For tests and for consumers
    /// that need whole rows; costs the full general-mode memory.
    pub fn to_general(&self) -> Self {
        let mut g = self.general_pattern();
        g.values = vec![[[T::default(); B]; B]; g.cols.len()];
        for i in 0..self.n {
            for k in self.row_ptr[i]..self.row_ptr[i + 1] {
                let j = self.cols[k] as usize;
                let blk = self.values[k];
                let at = g
                    .index(i, j)
                    .expect("general pattern holds every stored block");
                g.values[at] = blk;
                if self.symmetric && j != i {
                    let back = g.index(j, i).expect("general pattern is symmetric");
                    g.values[back] = transpose(&blk);
                }
            }
        }
        g
    }

    /// The block `(i, j)` of the matrix (zero where not in the pattern); in
    /// symmetric mode a block below the diagonal is read as the transpose
    /// of the stored one.
    pub fn block(&self, i: usize, j: usize) -> Block {
        if self.symmetric && j < i {
            self.index(j, i)
                .map(|k| transpose(&widen(&self.values[k])))
                .unwrap_or([[0.0; B]; B])
        } else {
            self.index(i, j)
                .map(|k| widen(&self.values[k]))
                .unwrap_or([[0.0; B]; B])
        }
    }

    /// The transposed index of a symmetric-mode matrix (see
    /// [`LowerIndex`]); empty for a general-mode one.
    pub fn lower_index(&self) -> LowerIndex {
        let mut ptr = vec![0usize; self.n + 1];
        if self.symmetric {
            for &j in &self.cols {
                ptr[j as usize + 1] += 1;
            }
            // Diagonal blocks are counted above; they are not lower blocks.
            for i in 0..self.n {
                ptr[i + 1] -= 1;
            }
        }
        for i in 0..self.n {
            ptr[i + 1] += ptr[i];
        }
        let mut fill = ptr.clone();
        let mut entries = vec![(0u32, 0u32); ptr[self.n]];
        if self.symmetric {
            for i in 0..self.n {
                for k in self.row_ptr[i]..self.row_ptr[i + 1] {
                    let j = self.cols[k] as usize;
                    if j != i {
                        entries[fill[j]] = (i as u32, k as u32);
                        fill[j] += 1;
                    }
                }
            }
        }
        LowerIndex { ptr, entries }
    }

    /// Calls `f(j, block, transposed)` for every block `(i, j)` of block row
    /// `i`, both triangles: the stored ones (`transposed` false) and, for a
    /// symmetric-mode matrix, the ones below the diagonal through `lower`
    /// (built by [`BlockSparse::lower_index`]; `block` is then the stored
    /// `(j, i)`, whose transpose is `(i, j)`). Blocks below the diagonal come
    /// first, in increasing `j`.
    ///
    /// # Panics
    /// If the matrix is symmetric-mode and `lower` is `None`.
    pub fn for_each_in_row(
        &self,
        lower: Option<&LowerIndex>,
        i: usize,
        mut f: impl FnMut(usize, &Block, bool),
    ) {
        if self.symmetric {
            let lower = lower.expect("a symmetric-mode matrix needs its LowerIndex");
            for &(j, k) in &lower.entries[lower.ptr[i]..lower.ptr[i + 1]] {
                T::with_block(&self.values[k as usize], |b| f(j as usize, b, true));
            }
        }
        for k in self.row_ptr[i]..self.row_ptr[i + 1] {
            T::with_block(&self.values[k], |b| f(self.cols[k] as usize, b, false));
        }
    }

    /// Index of the stored block `(i, j)` in `values`, if it is in the
    /// pattern (in symmetric mode only `j ≥ i` is stored: `None` below the
    /// diagonal). Used to build scatter maps once; never per step.
    pub fn index(&self, i: usize, j: usize) -> Option<usize> {
        let r = &self.cols[self.row_ptr[i]..self.row_ptr[i + 1]];
        r.binary_search(&(j as u32))
            .ok()
            .map(|k| self.row_ptr[i] + k)
    }

    /// Number of stored blocks.
    pub fn nnz_blocks(&self) -> usize {
        self.cols.len()
    }

    /// Number of blocks of the general-mode form (both triangles): what a
    /// backend storing the whole matrix holds.
    pub fn nnz_blocks_general(&self) -> usize {
        if self.symmetric {
            2 * self.cols.len() - self.n
        } else {
            self.cols.len()
        }
    }

    /// Bytes held by the matrix (values, columns, row pointers, diagonal
    /// indices, SpMV chunk table).
    pub fn bytes(&self) -> usize {
        self.values.len() * std::mem::size_of::<[[T; B]; B]>()
            + self.cols.len() * 4
            + (self.row_ptr.len() + self.diag.len() + 2 * self.far_blocks.len())
                * std::mem::size_of::<usize>()
    }

    /// Sets every value to zero (keeps the pattern).
    pub fn set_zero(&mut self) {
        if self.values.len() < crate::par::PARALLEL_MIN {
            self.values
                .iter_mut()
                .for_each(|b| *b = [[T::default(); B]; B]);
        } else {
            self.values
                .par_iter_mut()
                .for_each(|b| *b = [[T::default(); B]; B]);
        }
    }

    /// `y = A x`. `x`, `y` have length `5 n`.
    ///
    /// General mode: parallel over block rows. Symmetric mode: `y` is
    /// zeroed, then chunks of 256 to 4,096 block rows (the matrix's
    /// `chunk_rows`) run in two phases (even
    /// chunks, then odd ones), in parallel within a phase; a chunk adds its
    /// rows' products and the transposed products of its blocks into the
    /// window of `y` from its first row to two chunks further, which no
    /// other chunk of the phase touches. The few blocks reaching beyond
    /// the window (`far_blocks`) add their transposed products afterwards.
    /// Nothing is allocated.
    pub fn spmv(&self, x: &[f64], y: &mut [f64]) {
        if self.symmetric {
            self.spmv_symmetric(x, y);
            return;
        }
        let row = |(i, yi): (usize, &mut [f64])| {
            let mut acc = [0.0; B];
            for k in self.row_ptr[i]..self.row_ptr[i + 1] {
                let j = self.cols[k] as usize;
                let xj = &x[B * j..B * j + B];
                let blk = &self.values[k];
                for (a, row) in acc.iter_mut().zip(blk) {
                    *a += row[0].to_f64() * xj[0]
                        + row[1].to_f64() * xj[1]
                        + row[2].to_f64() * xj[2]
                        + row[3].to_f64() * xj[3]
                        + row[4].to_f64() * xj[4];
                }
            }
            yi.copy_from_slice(&acc);
        };
        if y.len() < crate::par::PARALLEL_MIN {
            y.chunks_mut(B).enumerate().for_each(row);
        } else {
            y.par_chunks_mut(B).enumerate().for_each(row);
        }
    }

    fn spmv_symmetric(&self, x: &[f64], y: &mut [f64]) {
        let n = self.n;
        let parallel = y.len() >= crate::par::PARALLEL_MIN;
        if parallel {
            y.par_iter_mut().for_each(|v| *v = 0.0);
        } else {
            y.fill(0.0);
        }
        let out = crate::par::Shared(y.as_mut_ptr());
        let rows = self.chunk_rows;
        let chunk = |c: usize| {
            let first = c * rows;
            let end = (first + rows).min(n);
            let window_end = (first + 2 * rows).min(n);
            // SAFETY: within a phase the chunks are two apart, so their
            // windows [first, first + 2 chunks) are disjoint, and the
            // phases run one after the other.
            let win = unsafe {
                std::slice::from_raw_parts_mut(out.ptr().add(B * first), B * (window_end - first))
            };
            for i in first..end {
                let xi: [f64; B] = x[B * i..B * i + B].try_into().expect("5 DOFs");
                let mut acc = [0.0; B];
                for k in self.row_ptr[i]..self.row_ptr[i + 1] {
                    let j = self.cols[k] as usize;
                    let blk = &self.values[k];
                    let xj = &x[B * j..B * j + B];
                    for (a, row) in acc.iter_mut().zip(blk) {
                        *a += row[0].to_f64() * xj[0]
                            + row[1].to_f64() * xj[1]
                            + row[2].to_f64() * xj[2]
                            + row[3].to_f64() * xj[3]
                            + row[4].to_f64() * xj[4];
                    }
                    if j == i || j >= window_end {
                        continue;
                    }
                    // y_j += A_ijᵀ x_i.
                    let target = &mut win[B * (j - first)..B * (j - first) + B];
                    for (r, row) in blk.iter().enumerate() {
                        for (t, &a) in target.iter_mut().zip(row) {
                            *t += a.to_f64() * xi[r];
                        }
                    }
                }
                for (t, a) in win[B * (i - first)..B * (i - first) + B]
                    .iter_mut()
                    .zip(acc)
                {
                    *t += a;
                }
            }
        };
        let chunks = n.div_ceil(rows);
        for phase in 0..2 {
            if parallel {
                (phase..chunks).into_par_iter().step_by(2).for_each(chunk);
            } else {
                (phase..chunks).step_by(2).for_each(chunk);
            }
        }
        for &(i, k) in &self.far_blocks {
            let (i, k) = (i as usize, k as usize);
            let j = self.cols[k] as usize;
            for (r, row) in self.values[k].iter().enumerate() {
                for (c, &a) in row.iter().enumerate() {
                    y[B * j + c] += a.to_f64() * x[B * i + r];
                }
            }
        }
    }

    /// Bytes one [`BlockSparse::spmv`] must stream at the least: every
    /// stored block and column index once, the row pointers, `x` read once
    /// and `y` written once (gathers of `x` that miss the cache, and the
    /// symmetric mode's zeroing of `y`, come on top). Dividing by the time
    /// gives an effective bandwidth comparable with a memory copy.
    pub fn spmv_bytes(&self) -> usize {
        self.values.len() * (std::mem::size_of::<[[T; B]; B]>() + 4)
            + self.row_ptr.len() * std::mem::size_of::<usize>()
            + self.n * B * 8 * 2
    }
}

/// For each block row `i` of a symmetric-mode [`BlockSparse`], the stored
/// blocks `(j, i)` with `j < i` (whose transposes are the row's blocks below
/// the diagonal), as `(j, index into values)`, sorted by `j`: whole block
/// rows without a general-mode copy (12 bytes per stored off-diagonal block
/// and per node).
#[derive(Clone, Debug)]
pub struct LowerIndex {
    ptr: Vec<usize>,
    entries: Vec<(u32, u32)>,
}

impl LowerIndex {
    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.ptr.len() * std::mem::size_of::<usize>() + self.entries.len() * 8
    }
}

/// The transpose of a 5x5 block (in either storage precision).
pub fn transpose<T: Copy>(b: &[[T; B]; B]) -> [[T; B]; B] {
    std::array::from_fn(|r| std::array::from_fn(|c| b[c][r]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Symmetric-mode SpMV (two phases of chunks writing across chunk
    /// boundaries, plus the far blocks beyond a chunk's window) equals the
    /// general-mode SpMV of the same matrix to 1e-13 relative; `to_general`
    /// and `block` agree. Two patterns: one spanning several 4,096-row
    /// chunks with couplings 5,000 rows apart on a third of the rows, and
    /// a narrow one (reach 7) whose chunks shrink to 256 rows, with a few
    /// couplings 1,000 rows apart (far blocks at that chunk size).
    #[test]
    fn symmetric_spmv_matches_general() {
        let n = 3 * SPMV_CHUNK_ROWS + 1234;
        check_symmetric_spmv(n, &banded_pairs(n, 5000, 3), SPMV_CHUNK_ROWS, 11);
        let n = 3000;
        check_symmetric_spmv(n, &banded_pairs(n, 1000, 400), SPMV_CHUNK_ROWS_MIN, 12);
    }

    /// Node pairs of an `n`-row pattern: neighbours 1 and 7 rows apart on
    /// every row, and `far` rows apart on every `every`-th row.
    fn banded_pairs(n: usize, far: usize, every: usize) -> Vec<(usize, usize)> {
        (0..n - 1)
            .map(|i| (i, i + 1))
            .chain((0..n - 7).map(|i| (i + 7, i)))
            .chain((0..n - far).step_by(every).map(|i| (i, i + far)))
            .collect()
    }

    fn check_symmetric_spmv(n: usize, pairs: &[(usize, usize)], chunk_rows: usize, seed: u64) {
        let mut a = BlockSparse::from_pairs(n, pairs.iter().copied());
        let general_pattern = BlockSparse::<f64>::from_pairs_general(n, pairs.iter().copied());
        assert_eq!(a.chunk_rows, chunk_rows);
        assert_eq!(
            2 * a.nnz_blocks() - n,
            general_pattern.nnz_blocks(),
            "upper triangle plus diagonal"
        );
        let mut rnd = crate::test_util::uniform(seed);
        for b in a.values.iter_mut() {
            *b = std::array::from_fn(|_| std::array::from_fn(|_| rnd()));
        }
        assert!(
            !a.far_blocks.is_empty(),
            "the long couplings reach past the window"
        );
        let g = a.to_general();
        assert_eq!(g.cols, general_pattern.cols);
        assert_eq!(g.block(7, 0), transpose(&a.values[a.index(0, 7).unwrap()]));
        assert_eq!(a.block(7, 0), g.block(7, 0));
        // Whole rows through the lower index equal the general rows.
        let lower = a.lower_index();
        for i in [0, 1, 7, 255, 256, 1003, 4095, 4096, 5003, n - 1] {
            if i >= n {
                continue;
            }
            let mut got = Vec::new();
            a.for_each_in_row(Some(&lower), i, |j, blk, t| {
                got.push((j, if t { transpose(blk) } else { *blk }));
            });
            let mut want = Vec::new();
            g.for_each_in_row(None, i, |j, blk, t| {
                assert!(!t);
                want.push((j, *blk));
            });
            assert_eq!(got, want, "block row {i}");
        }
        let x: Vec<f64> = (0..B * n).map(|_| rnd()).collect();
        let (mut ys, mut yg) = (vec![1.0; B * n], vec![0.0; B * n]);
        a.spmv(&x, &mut ys);
        g.spmv(&x, &mut yg);
        let scale = yg.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let err = crate::test_util::max_abs_diff(&ys, &yg);
        assert!(
            err <= 1e-13 * scale,
            "max |y_sym - y_gen| = {err:e} (scale {scale:e})"
        );
    }

    /// An f32 matrix (symmetric mode, spanning several SpMV chunks) reads
    /// and multiplies exactly as the f64 matrix of its rounded values: the
    /// only error of f32 storage is the rounding of each stored entry
    /// (relative 2^-24 ≈ 6e-8), and the products are in f64.
    #[test]
    fn f32_storage_matches_the_f64_matrix_of_its_rounded_values() {
        let n = 2 * SPMV_CHUNK_ROWS + 77;
        let pairs: Vec<(usize, usize)> = (0..n - 1)
            .map(|i| (i, i + 1))
            .chain((0..n - 4500).step_by(5).map(|i| (i, i + 4500)))
            .collect();
        let mut a32 = BlockSparse::<f32>::from_pairs(n, pairs.iter().copied());
        let mut a64 = BlockSparse::<f64>::from_pairs(n, pairs);
        let mut rnd = crate::test_util::uniform(5);
        let mut worst = 0.0f64;
        for (b32, b64) in a32.values.iter_mut().zip(a64.values.iter_mut()) {
            for r in 0..B {
                for c in 0..B {
                    let v = 1.0 + rnd() / 3.0;
                    b32[r][c] = f32::from_f64(v);
                    worst = worst.max((b32[r][c].to_f64() - v).abs() / v.abs());
                    b64[r][c] = b32[r][c].to_f64();
                }
            }
        }
        assert!(worst > 0.0 && worst <= 2f64.powi(-24), "rounding {worst:e}");
        assert_eq!(a32.block(9, 8), a64.block(9, 8));
        assert_eq!(a64.bytes() - a32.bytes(), 25 * 4 * a64.nnz_blocks());
        let x: Vec<f64> = (0..B * n).map(|_| rnd()).collect();
        let (mut y32, mut y64) = (vec![0.0; B * n], vec![0.0; B * n]);
        a32.spmv(&x, &mut y32);
        a64.spmv(&x, &mut y64);
        assert_eq!(y32, y64);
    }
}
