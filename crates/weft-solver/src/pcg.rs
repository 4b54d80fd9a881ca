//! Preconditioned conjugate gradients with a block-Jacobi preconditioner
//! (DESIGN §5), written against [`LinearOps`] so the CUDA backend can supply
//! the same operations. Fixed DOFs are Dirichlet rows: the solver works in the
//! subspace of free DOFs by masking residuals and search directions.

use crate::bsr::{B, Block, BlockSparse};
use crate::par::PARALLEL_MIN;
use nalgebra::{SMatrix, SVector};
use rayon::prelude::*;

/// The vector and matrix operations PCG needs. Vectors have length `5 n`.
pub trait LinearOps {
    /// `y = A x`, then fixed DOFs of `y` set to zero.
    fn apply(&self, x: &[f64], y: &mut [f64]);
    /// `z = P⁻¹ r`, fixed DOFs of `z` zero.
    fn precondition(&self, r: &[f64], z: &mut [f64]);
    /// Dot product.
    fn dot(&self, a: &[f64], b: &[f64]) -> f64;
    /// `y += a x`.
    fn axpy(&self, a: f64, x: &[f64], y: &mut [f64]);
    /// `y = x + b y`.
    fn xpby(&self, x: &[f64], b: f64, y: &mut [f64]);
    /// Zeroes the fixed DOFs of `v`.
    fn mask(&self, v: &mut [f64]);
    /// `max_k |a_k|` (0 for an empty vector); used only by a
    /// [`PcgTolerance::absolute_inf`] stop. The default is the CPU's
    /// [`crate::par::inf_norm`].
    fn max_abs(&self, a: &[f64]) -> f64 {
        crate::par::inf_norm(a)
    }
}

/// A preconditioner `P⁻¹` for [`pcg`]: `z = P⁻¹ r` with the fixed DOFs of
/// `z` zero. Implemented by [`BlockJacobi`] and
/// [`crate::cholesky::SparseCholesky`].
pub trait Preconditioner {
    /// `z = P⁻¹ r` (vectors of length `5 n`).
    fn apply(&self, r: &[f64], z: &mut [f64]);
}

/// Inverse diagonal blocks of a [`BlockSparse`] matrix restricted to the
/// free DOFs (fixed rows/columns replaced by the identity before inversion).
#[derive(Clone, Debug)]
pub struct BlockJacobi {
    /// One inverse 5x5 block per node.
    pub inverse: Vec<Block>,
}

impl BlockJacobi {
    /// Inverts the diagonal blocks of `a`; `free[d]` is 1.0 for a free DOF and
    /// 0.0 for a fixed one. A singular or non-SPD free block falls back to the
    /// inverse of its diagonal (absolute values, floored), so the
    /// preconditioner stays SPD.
    pub fn new(a: &BlockSparse, free: &[f64]) -> Self {
        let invert = |i: usize| {
            let blk = &a.values[a.diag[i]];
            let mut m = SMatrix::<f64, B, B>::zeros();
            for r in 0..B {
                for c in 0..B {
                    let fr = free[B * i + r] != 0.0;
                    let fc = free[B * i + c] != 0.0;
                    m[(r, c)] = if fr && fc {
                        blk[r][c]
                    } else if r == c {
                        1.0
                    } else {
                        0.0
                    };
                }
            }
            let inv = match m.cholesky() {
                Some(ch) => ch.inverse(),
                None => {
                    let scale = m.diagonal().abs().max().max(1e-300);
                    SMatrix::from_diagonal(&SVector::<f64, B>::from_fn(|r, _| {
                        1.0 / m[(r, r)].abs().max(1e-12 * scale)
                    }))
                }
            };
            let mut out = [[0.0; B]; B];
            for r in 0..B {
                for c in 0..B {
                    out[r][c] = if free[B * i + r] != 0.0 && free[B * i + c] != 0.0 {
                        inv[(r, c)]
                    } else {
                        0.0
                    };
                }
            }
            out
        };
        let inverse = if a.n < PARALLEL_MIN / B {
            (0..a.n).map(invert).collect()
        } else {
            (0..a.n).into_par_iter().map(invert).collect()
        };
        Self { inverse }
    }
}

impl Preconditioner for BlockJacobi {
    fn apply(&self, r: &[f64], z: &mut [f64]) {
        let block = |(i, zi): (usize, &mut [f64])| {
            let inv = &self.inverse[i];
            let ri = &r[B * i..B * i + B];
            for (zr, row) in zi.iter_mut().zip(inv) {
                *zr = row.iter().zip(ri).map(|(a, b)| a * b).sum();
            }
        };
        if z.len() < PARALLEL_MIN {
            z.chunks_mut(B).enumerate().for_each(block);
        } else {
            z.par_chunks_mut(B).enumerate().for_each(block);
        }
    }
}

/// CPU implementation of [`LinearOps`] with rayon.
pub struct CpuOps<'a> {
    /// The system matrix.
    pub matrix: &'a BlockSparse,
    /// Its preconditioner (block-Jacobi or sparse Cholesky).
    pub preconditioner: &'a dyn Preconditioner,
    /// 1.0 for free DOFs, 0.0 for fixed ones.
    pub free: &'a [f64],
}

impl LinearOps for CpuOps<'_> {
    fn apply(&self, x: &[f64], y: &mut [f64]) {
        self.matrix.spmv(x, y);
        self.mask(y);
    }
    fn precondition(&self, r: &[f64], z: &mut [f64]) {
        self.preconditioner.apply(r, z);
    }
    fn dot(&self, a: &[f64], b: &[f64]) -> f64 {
        crate::par::dot(a, b)
    }
    fn axpy(&self, a: f64, x: &[f64], y: &mut [f64]) {
        if y.len() < PARALLEL_MIN {
            y.iter_mut().zip(x).for_each(|(y, x)| *y += a * x);
        } else {
            y.par_iter_mut().zip(x).for_each(|(y, x)| *y += a * x);
        }
    }
    fn xpby(&self, x: &[f64], b: f64, y: &mut [f64]) {
        if y.len() < PARALLEL_MIN {
            y.iter_mut().zip(x).for_each(|(y, x)| *y = x + b * *y);
        } else {
            y.par_iter_mut().zip(x).for_each(|(y, x)| *y = x + b * *y);
        }
    }
    fn mask(&self, v: &mut [f64]) {
        if v.len() < PARALLEL_MIN {
            v.iter_mut().zip(self.free).for_each(|(v, f)| *v *= f);
        } else {
            v.par_iter_mut().zip(self.free).for_each(|(v, f)| *v *= f);
        }
    }
}

/// When PCG stops: `|r|₂ ≤ relative |b|₂`, or, with `absolute_inf > 0`,
/// `|r|∞ ≤ absolute_inf`, whichever comes first (`r = b - A x` on the free
/// DOFs). A plain `f64` converts to a relative tolerance alone.
///
/// The absolute stop is for Newton's systems: the next Newton residual is
/// the linear residual plus the nonlinear remainder, and Newton converges
/// on `|R|∞` (`crate::integrator`), so a linear residual far below that
/// target in the same norm buys nothing. The relative tolerance alone
/// cannot say so without comparing a 2-norm with an ∞-norm.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PcgTolerance {
    /// Relative tolerance on the 2-norm of the residual (dimensionless).
    pub relative: f64,
    /// Absolute tolerance on the largest residual entry, in the units of
    /// `b`; 0 disables it.
    pub absolute_inf: f64,
}

impl From<f64> for PcgTolerance {
    fn from(relative: f64) -> Self {
        Self {
            relative,
            absolute_inf: 0.0,
        }
    }
}

impl PcgTolerance {
    /// Whether a residual `r` with 2-norm `rn` meets the tolerance for a
    /// right-hand side of 2-norm `b_norm`. The ∞-norm needs a pass over
    /// `r` of its own, so it is read only where the stop can hold: since
    /// `|r|₂ ≤ √n |r|∞`, a 2-norm above `√n · absolute_inf` rules it out.
    fn met<O: LinearOps>(&self, ops: &O, r: &[f64], rn: f64, b_norm: f64) -> bool {
        rn <= self.relative * b_norm
            || (self.absolute_inf > 0.0
                && rn <= self.absolute_inf * (r.len() as f64).sqrt()
                && ops.max_abs(r) <= self.absolute_inf)
    }
}

/// How a PCG solve ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PcgStatus {
    /// `|r| ≤ tolerance · |b|`.
    Converged,
    /// Hit the iteration limit.
    MaxIterations,
    /// A search direction with `pᵀ A p ≤ 0` (the system matrix is not SPD
    /// there); the iterate so far is returned.
    NegativeCurvature,
}

/// Result of [`pcg`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PcgResult {
    /// Why it stopped.
    pub status: PcgStatus,
    /// Iterations done.
    pub iterations: usize,
    /// Final `|r| / |b|` (0 when `b = 0`).
    pub relative_residual: f64,
}

/// Solves `A x = b` on the free DOFs by preconditioned conjugate gradients,
/// starting from `x` (fixed DOFs of `x` are kept as given, so pass zeros
/// there). Converges when `|r|₂ ≤ tolerance |b|₂` (a relative tolerance as
/// `f64`), or as a [`PcgTolerance`] says. Allocates the three work vectors
/// of [`pcg_in`] (length `b.len()` each).
pub fn pcg<O: LinearOps>(
    ops: &O,
    b: &[f64],
    x: &mut [f64],
    tolerance: impl Into<PcgTolerance>,
    max_iterations: usize,
) -> PcgResult {
    let n = b.len();
    let mut work = vec![0.0; 3 * n];
    let (r, rest) = work.split_at_mut(n);
    let (p, w) = rest.split_at_mut(n);
    pcg_in(ops, b, x, tolerance, max_iterations, [r, p, w])
}

/// [`pcg`] in caller-owned work vectors `[r, p, w]` (each of length
/// `b.len()`; their contents on entry are ignored and on return
/// unspecified). `r` is the residual, `p` the search direction and `w`
/// holds the preconditioned residual `z` and then `A p` in turn: `z` is
/// folded into `p` before `A p` is needed, so one vector serves both and
/// the solve streams the same data as the textbook four-vector loop. A
/// caller with idle vectors (the Newton loop's line-search buffers) lends
/// them here so a solve at 10^6 nodes allocates nothing.
///
/// # Panics
/// If a work vector's length differs from `b.len()`.
pub fn pcg_in<O: LinearOps>(
    ops: &O,
    b: &[f64],
    x: &mut [f64],
    tolerance: impl Into<PcgTolerance>,
    max_iterations: usize,
    [r, p, w]: [&mut [f64]; 3],
) -> PcgResult {
    let tolerance: PcgTolerance = tolerance.into();
    let n = b.len();
    assert!(
        r.len() == n && p.len() == n && w.len() == n,
        "PCG work vectors must have the system's length {n}"
    );
    r.copy_from_slice(b);
    ops.mask(r);
    let b_norm = ops.dot(r, r).sqrt();
    if b_norm == 0.0 {
        x.iter_mut().for_each(|v| *v = 0.0);
        return PcgResult {
            status: PcgStatus::Converged,
            iterations: 0,
            relative_residual: 0.0,
        };
    }
    ops.apply(x, w);
    ops.axpy(-1.0, w, r);
    // w = z = M⁻¹ r; p = z.
    ops.precondition(r, w);
    p.copy_from_slice(w);
    let mut rz = ops.dot(r, w);
    for it in 0..max_iterations {
        let rn = ops.dot(r, r).sqrt();
        if tolerance.met(ops, r, rn, b_norm) {
            return PcgResult {
                status: PcgStatus::Converged,
                iterations: it,
                relative_residual: rn / b_norm,
            };
        }
        // w = A p (z is no longer needed: p holds it, rᵀz is kept).
        ops.apply(p, w);
        let pap = ops.dot(p, w);
        if pap <= 0.0 || !pap.is_finite() {
            if it == 0 {
                // Fall back to the preconditioned steepest-descent
                // direction (the first p is z).
                x.copy_from_slice(p);
            }
            return PcgResult {
                status: PcgStatus::NegativeCurvature,
                iterations: it,
                relative_residual: rn / b_norm,
            };
        }
        let alpha = rz / pap;
        ops.axpy(alpha, p, x);
        ops.axpy(-alpha, w, r);
        ops.precondition(r, w);
        let rz_new = ops.dot(r, w);
        let beta = rz_new / rz;
        rz = rz_new;
        ops.xpby(w, beta, p);
    }
    let rn = ops.dot(r, r).sqrt();
    let status = if tolerance.met(ops, r, rn, b_norm) {
        PcgStatus::Converged
    } else {
        PcgStatus::MaxIterations
    };
    PcgResult {
        status,
        iterations: max_iterations,
        relative_residual: rn / b_norm,
    }
}
