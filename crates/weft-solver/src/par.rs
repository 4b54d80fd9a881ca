//! Parallel helpers that fall back to serial loops on small inputs: rayon
//! hands each call from a non-worker thread to its pool and waits (tens of
//! microseconds), more than the work on a small fabric.

use rayon::prelude::*;

/// Inputs shorter than this run serially.
pub const PARALLEL_MIN: usize = 16_384;

/// `items.map(f).reduce(identity, op)`, parallel for long inputs.
pub fn map_reduce<I: Sync, T: Send>(
    items: &[I],
    f: impl Fn(&I) -> T + Sync + Send,
    identity: impl Fn() -> T + Sync + Send,
    op: impl Fn(T, T) -> T + Sync + Send,
) -> T {
    if items.len() < PARALLEL_MIN / 16 {
        items.iter().map(f).fold(identity(), op)
    } else {
        items
            .par_iter()
            .with_min_len(64)
            .map(f)
            .reduce(identity, op)
    }
}

/// `out[i] = f(i, out[i])`-style elementwise update, parallel for long
/// vectors.
pub fn update(out: &mut [f64], f: impl Fn(usize, f64) -> f64 + Sync + Send) {
    if out.len() < PARALLEL_MIN {
        out.iter_mut().enumerate().for_each(|(i, o)| *o = f(i, *o));
    } else {
        out.par_iter_mut()
            .enumerate()
            .for_each(|(i, o)| *o = f(i, *o));
    }
}

/// The number of threads the parallel loops run on (rayon's global pool:
/// the machine's cores, or `RAYON_NUM_THREADS`).
pub fn threads() -> usize {
    rayon::current_num_threads()
}

/// `max |x_i|`.
pub fn inf_norm(x: &[f64]) -> f64 {
    if x.len() < PARALLEL_MIN {
        x.iter().fold(0.0, |a, b| a.max(b.abs()))
    } else {
        x.par_iter().map(|a| a.abs()).reduce(|| 0.0, f64::max)
    }
}

/// `|x|₂`.
pub fn norm2(x: &[f64]) -> f64 {
    if x.len() < PARALLEL_MIN {
        x.iter().map(|a| a * a).sum::<f64>().sqrt()
    } else {
        x.par_iter().map(|a| a * a).sum::<f64>().sqrt()
    }
}

/// Asks the kernel to back `v` with transparent huge pages (Linux
/// `madvise(MADV_HUGEPAGE)`; a no-op elsewhere and where THP is disabled).
/// Element assembly scatters into the system matrix in a pattern that jumps
/// by a whole yarn row between neighbouring weft nodes; with 4 KiB pages
/// nearly every block write is a TLB miss. Call it right after allocating,
/// before the pages are first touched.
pub fn advise_huge_pages<T>(v: &[T]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = std::mem::size_of_val(v);
        if bytes < 2 * HUGE {
            return;
        }
        let start = v.as_ptr() as usize;
        let page = 4096;
        let aligned = start.div_ceil(page) * page;
        let len = (start + bytes).saturating_sub(aligned) / page * page;
        // SAFETY: the range lies inside the allocation of `v`; MADV_HUGEPAGE
        // only changes how the kernel backs the pages, not their contents.
        unsafe {
            libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        }
    }
}

/// The node (5 DOFs per node) holding the entry of `r` largest in
/// magnitude; 0 for an empty vector.
pub fn worst_node(r: &[f64]) -> usize {
    r.iter()
        .enumerate()
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
        .map_or(0, |(i, _)| i / 5)
}

/// A raw pointer that rayon closures may share. Safety rests on the caller:
/// no two tasks write the same element (the assembly's element colouring,
/// the symmetric SpMV's disjoint row windows).
#[derive(Clone, Copy)]
pub(crate) struct Shared<T>(pub(crate) *mut T);
unsafe impl<T> Send for Shared<T> {}
unsafe impl<T> Sync for Shared<T> {}
impl<T> Shared<T> {
    pub(crate) fn ptr(self) -> *mut T {
        self.0
    }
}
