//! 5x5 block compressed-sparse-row matrices (DESIGN §7: one DOF layout per
//! node, uniform 5x5 blocks for both backends).
//!
//! The sparsity pattern is built once from the node pairs that share an
//! element; both triangles are stored so SpMV parallelises over block rows
//! without atomics. Values are row-major 5x5 blocks.

use rayon::prelude::*;

/// DOFs per node (x, y, z, u, v).
pub const B: usize = 5;
/// One 5x5 block, row-major.
pub type Block = [[f64; B]; B];

/// A square block-sparse matrix with `n` block rows of size 5.
#[derive(Clone, Debug)]
pub struct BlockSparse {
    /// Number of block rows (nodes).
    pub n: usize,
    /// Start of each block row in `cols`/`values`, length `n + 1`.
    pub row_ptr: Vec<usize>,
    /// Block column of each stored block, sorted within a row.
    pub cols: Vec<u32>,
    /// The blocks.
    pub values: Vec<Block>,
    /// Index of the diagonal block of each row.
    pub diag: Vec<usize>,
}

impl BlockSparse {
    /// The pattern with a diagonal block for every row plus both `(i, j)` and
    /// `(j, i)` for every given pair; values zero.
    pub fn from_pairs(n: usize, pairs: impl IntoIterator<Item = (usize, usize)>) -> Self {
        let mut rows: Vec<Vec<u32>> = (0..n).map(|i| vec![i as u32]).collect();
        for (i, j) in pairs {
            if i != j {
                rows[i].push(j as u32);
                rows[j].push(i as u32);
            }
        }
        let mut row_ptr = Vec::with_capacity(n + 1);
        let mut cols = Vec::new();
        let mut diag = Vec::with_capacity(n);
        row_ptr.push(0);
        for (i, mut r) in rows.into_iter().enumerate() {
            r.sort_unstable();
            r.dedup();
            let start = cols.len();
            diag.push(start + r.binary_search(&(i as u32)).expect("diagonal present"));
            cols.extend(r);
            row_ptr.push(cols.len());
        }
        let nnz = cols.len();
        let values = vec![[[0.0; B]; B]; nnz];
        crate::par::advise_huge_pages(&values);
        Self {
            n,
            row_ptr,
            cols,
            values,
            diag,
        }
    }

    /// Index of block `(i, j)` in `values`, if it is in the pattern. Used to
    /// build scatter maps once; never per step.
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

    /// Bytes held by the matrix (values, columns, row pointers, diagonal
    /// indices).
    pub fn bytes(&self) -> usize {
        self.values.len() * std::mem::size_of::<Block>()
            + self.cols.len() * 4
            + (self.row_ptr.len() + self.diag.len()) * std::mem::size_of::<usize>()
    }

    /// Sets every value to zero (keeps the pattern).
    pub fn set_zero(&mut self) {
        if self.values.len() < crate::par::PARALLEL_MIN {
            self.values.iter_mut().for_each(|b| *b = [[0.0; B]; B]);
        } else {
            self.values.par_iter_mut().for_each(|b| *b = [[0.0; B]; B]);
        }
    }

    /// `y = A x`, parallel over block rows. `x`, `y` have length `5 n`.
    pub fn spmv(&self, x: &[f64], y: &mut [f64]) {
        let row = |(i, yi): (usize, &mut [f64])| {
            let mut acc = [0.0; B];
            for k in self.row_ptr[i]..self.row_ptr[i + 1] {
                let j = self.cols[k] as usize;
                let xj = &x[B * j..B * j + B];
                let blk = &self.values[k];
                for (a, row) in acc.iter_mut().zip(blk) {
                    *a += row[0] * xj[0]
                        + row[1] * xj[1]
                        + row[2] * xj[2]
                        + row[3] * xj[3]
                        + row[4] * xj[4];
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

    /// Bytes one [`BlockSparse::spmv`] must stream at the least: every block
    /// and column index once, the row pointers, `x` read once and `y` written
    /// once (gathers of `x` that miss the cache come on top). Dividing by the
    /// time gives an effective bandwidth comparable with a memory copy.
    pub fn spmv_bytes(&self) -> usize {
        self.values.len() * (std::mem::size_of::<Block>() + 4)
            + self.row_ptr.len() * std::mem::size_of::<usize>()
            + self.n * B * 8 * 2
    }
}
