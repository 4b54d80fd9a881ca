//! Parallel helpers that fall back to serial loops on small inputs: rayon
//! hands each call from a non-worker thread to its pool and waits (tens of
//! microseconds), more than the work on a small fabric.

use rayon::prelude::*;

/// Inputs shorter than this run serially.
pub const PARALLEL_MIN: usize = 16_384;

/// Entries per partial sum in [`dot`] and [`norm2`] on long vectors.
/// Parallel reductions add fixed chunks' partial sums in chunk order, so
/// their results do not depend on the number of threads or on how rayon
/// splits the work: a run repeats bit for bit (a tree reduction whose
/// shape follows work stealing rounds differently from run to run, and
/// Newton's line search and PCG amplify that round-off into different
/// iteration counts).
const REDUCTION_CHUNK: usize = 4096;

/// `items.map(f).reduce(identity, op)`, parallel for long inputs (at least
/// `PARALLEL_MIN / 16` items).
pub fn map_reduce<I: Sync, T: Send>(
    items: &[I],
    f: impl Fn(&I) -> T + Sync + Send,
    identity: impl Fn() -> T + Sync + Send,
    op: impl Fn(T, T) -> T + Sync + Send,
) -> T {
    map_reduce_from(PARALLEL_MIN / 16, items, f, identity, op)
}

/// [`map_reduce`], parallel from `min_items` items on: a lower threshold
/// for costly items (a triangle or hinge element with its eigen-
/// decompositions takes microseconds, a yarn segment a fraction of one).
/// In parallel, chunks of `max(min_items / 16, 16)` items are folded
/// serially and their results combined in chunk order, so the result does
/// not depend on the thread count or scheduling (see `REDUCTION_CHUNK`).
pub fn map_reduce_from<I: Sync, T: Send>(
    min_items: usize,
    items: &[I],
    f: impl Fn(&I) -> T + Sync + Send,
    identity: impl Fn() -> T + Sync + Send,
    op: impl Fn(T, T) -> T + Sync + Send,
) -> T {
    if items.len() < min_items {
        items.iter().map(f).fold(identity(), op)
    } else {
        let partial: Vec<T> = items
            .par_chunks((min_items / 16).max(16))
            .map(|chunk| chunk.iter().map(&f).fold(identity(), &op))
            .collect();
        partial.into_iter().fold(identity(), op)
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

/// Greedy colouring of `count` elements over `node_count` nodes: element
/// `e` touches the nodes `nodes(e)`, and no two elements of a colour share a
/// node, so a colour's elements can be processed in parallel. Each element
/// takes the lowest colour none of its nodes has yet; returns the element
/// indices of each colour, in increasing order. Any number of colours.
pub fn greedy_colouring<N: AsRef<[usize]>>(
    count: usize,
    node_count: usize,
    nodes: impl Fn(usize) -> N,
) -> Vec<Vec<u32>> {
    // Per node, a bit set of the colours it has (64 per word).
    let mut used: Vec<Vec<u64>> = vec![Vec::new(); node_count];
    let mut colours: Vec<Vec<u32>> = Vec::new();
    for e in 0..count {
        let ns = nodes(e);
        let ns = ns.as_ref();
        let mut word = 0;
        let c = loop {
            let mask = ns
                .iter()
                .fold(0u64, |m, &n| m | used[n].get(word).copied().unwrap_or(0));
            if mask != u64::MAX {
                break 64 * word + (!mask).trailing_zeros() as usize;
            }
            word += 1;
        };
        for &n in ns {
            if used[n].len() <= c / 64 {
                used[n].resize(c / 64 + 1, 0);
            }
            used[n][c / 64] |= 1 << (c % 64);
        }
        if colours.len() <= c {
            colours.resize(c + 1, Vec::new());
        }
        colours[c].push(e as u32);
    }
    colours
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

/// `|x|₂`, reproducible bit for bit in parallel (as [`dot`]).
pub fn norm2(x: &[f64]) -> f64 {
    dot(x, x).sqrt()
}

/// `aᵀb` (equal lengths), serial on short vectors; on long ones the
/// partial sums of fixed chunks of `REDUCTION_CHUNK` entries are added in
/// chunk order, so the result repeats bit for bit whatever the thread
/// count.
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    let serial = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    if a.len() < PARALLEL_MIN {
        serial(a, b)
    } else {
        let partial: Vec<f64> = a
            .par_chunks(REDUCTION_CHUNK)
            .zip(b.par_chunks(REDUCTION_CHUNK))
            .map(|(a, b)| serial(a, b))
            .collect();
        partial.iter().sum()
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
/// the symmetric SpMV's disjoint row windows, the strain-based-dynamics
/// constraint colouring of `weft-shell`).
#[derive(Clone, Copy)]
pub struct Shared<T>(pub *mut T);
unsafe impl<T> Send for Shared<T> {}
unsafe impl<T> Sync for Shared<T> {}
impl<T> Shared<T> {
    /// The pointer.
    pub fn ptr(self) -> *mut T {
        self.0
    }
}

/// Calls `f(e)` for every element of every colour of `colours`
/// ([`greedy_colouring`]), colour after colour; a colour's elements run in
/// parallel when it has at least `PARALLEL_MIN / 8` of them, serially
/// otherwise. The order within a colour is irrelevant when `f` only writes
/// the nodes of its own element, which the colouring keeps disjoint.
pub fn for_each_coloured(colours: &[Vec<u32>], f: impl Fn(usize) + Sync + Send) {
    for colour in colours {
        if colour.len() < PARALLEL_MIN / 8 {
            colour.iter().for_each(|&e| f(e as usize));
        } else {
            colour
                .par_iter()
                .with_min_len(256)
                .for_each(|&e| f(e as usize));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `dot`, `norm2` and `map_reduce_from` on long inputs give the same
    /// bits on 1, 2, 3 and 8 threads and from call to call (a rayon
    /// `sum` over `par_iter` does not: its tree follows the scheduling),
    /// and agree with the serial sums to round-off.
    #[test]
    fn parallel_reductions_repeat_bit_for_bit_on_any_thread_count() {
        let n = 5 * PARALLEL_MIN + 123;
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        // Magnitudes over 12 decades, so the order of the additions shows.
        let a: Vec<f64> = (0..n)
            .map(|i| next() * 10f64.powi((i % 13) as i32 - 6))
            .collect();
        let b: Vec<f64> = (0..n).map(|_| next()).collect();
        let run = |threads: usize| {
            crate::test_util::in_pool(threads, || {
                let sum = map_reduce_from(64, &a, |x| x * 3.0, || 0.0, |x, y| x + y);
                (dot(&a, &b), norm2(&a), sum)
            })
        };
        let first = run(1);
        for threads in [1, 2, 3, 8, 2] {
            let r = run(threads);
            assert_eq!(r.0.to_bits(), first.0.to_bits(), "dot on {threads}");
            assert_eq!(r.1.to_bits(), first.1.to_bits(), "norm2 on {threads}");
            assert_eq!(r.2.to_bits(), first.2.to_bits(), "map_reduce on {threads}");
        }
        let serial_dot: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let scale: f64 = a.iter().zip(&b).map(|(x, y)| (x * y).abs()).sum();
        assert!((first.0 - serial_dot).abs() <= 1e-13 * scale);
        let serial_sum: f64 = a.iter().map(|x| x * 3.0).sum();
        let scale: f64 = a.iter().map(|x| (x * 3.0).abs()).sum();
        assert!((first.2 - serial_sum).abs() <= 1e-13 * scale);
        assert!(first.1 > 0.0);
    }

    /// Colours are valid (no shared node within one) and not limited to 64:
    /// a star of 100 edges on node 0 needs 100.
    #[test]
    fn greedy_colouring_is_valid_past_64_colours() {
        let edges: Vec<[usize; 2]> = (1..=100)
            .map(|i| [0, i])
            .chain((1..100).map(|i| [i, i + 1]))
            .collect();
        let colours = greedy_colouring(edges.len(), 101, |e| edges[e]);
        assert!(colours.len() >= 100, "{} colours", colours.len());
        let mut seen = vec![false; edges.len()];
        for c in &colours {
            let mut touched = std::collections::HashSet::new();
            for &e in c {
                assert!(!seen[e as usize]);
                seen[e as usize] = true;
                for n in edges[e as usize] {
                    assert!(touched.insert(n), "colour shares node {n}");
                }
            }
        }
        assert!(seen.iter().all(|&s| s));
    }
}
