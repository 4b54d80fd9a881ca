//! Carrying a draped state from one weave of a pattern to a finer one
//! (multilevel draping).
//!
//! Every node of a woven garment has a place in its panel's flat 2D frame
//! (`weft_pattern::Garment::local`), and the simulated state is a field over
//! that frame: the position `x`, the arc-length displacements `u - ū`,
//! `v - v̄` from the rest weave (yarns that slid) and the velocities. A finer
//! weave of the same pattern has its grid lines through the same origin
//! (every other line of a level at half the spacing is a line of the coarser
//! level), and its nodes are placed by evaluating that field at their 2D
//! positions.
//!
//! The field is evaluated by a moving least-squares fit (MLS, quadratic in
//! the two panel coordinates) over the coarse nodes of the same panel
//! within `2.1` coarse spacings, weighted by `(1 - (d/ρ)²)³`. The fit is
//! smooth (twice differentiable, as the weight), so the refined yarns have
//! no kinks at the old nodes, and it reproduces any quadratic field exactly
//! (a test checks it). Near a panel's outline, where fewer coarse nodes are
//! in reach, the radius grows (×1.5, up to four times) until the fit is
//! well posed, then the fit drops to linear, then to the nearest node.

use nalgebra::{SMatrix, SVector, Vector3};
use rayon::prelude::*;
use std::collections::HashMap;
use weft_pattern::Garment;

/// Fields carried per node: `x` (3), `u - ū`, `v - v̄`, velocities (5).
pub const FIELDS: usize = 10;

/// Search radius of the fit, in coarse spacings.
pub const RADIUS: f64 = 2.1;

/// The coarse nodes of one panel in a uniform grid of their 2D positions.
struct PanelIndex {
    first: usize,
    h: f64,
    cells: HashMap<(i64, i64), Vec<u32>>,
}

impl PanelIndex {
    fn new(local: &[[f64; 2]], first: usize, count: usize, h: f64) -> Self {
        let mut cells: HashMap<(i64, i64), Vec<u32>> = HashMap::new();
        for k in 0..count {
            let p = local[first + k];
            cells
                .entry(((p[0] / h).floor() as i64, (p[1] / h).floor() as i64))
                .or_default()
                .push(k as u32);
        }
        Self { first, h, cells }
    }

    /// Global indices of the nodes within `r` of `p`.
    fn within(&self, local: &[[f64; 2]], p: [f64; 2], r: f64, out: &mut Vec<(usize, f64)>) {
        out.clear();
        let c = |v: f64| (v / self.h).floor() as i64;
        for i in c(p[0] - r)..=c(p[0] + r) {
            for j in c(p[1] - r)..=c(p[1] + r) {
                if let Some(ks) = self.cells.get(&(i, j)) {
                    for &k in ks {
                        let n = self.first + k as usize;
                        let q = local[n];
                        let d2 = (q[0] - p[0]).powi(2) + (q[1] - p[1]).powi(2);
                        if d2 < r * r {
                            out.push((n, d2.sqrt()));
                        }
                    }
                }
            }
        }
    }

    /// The node nearest to `p` (searching outwards ring by ring).
    fn nearest(&self, local: &[[f64; 2]], p: [f64; 2]) -> usize {
        let mut r = self.h;
        let mut buf = Vec::new();
        loop {
            self.within(local, p, r, &mut buf);
            if let Some(&(n, _)) = buf.iter().min_by(|a, b| a.1.total_cmp(&b.1)) {
                return n;
            }
            r *= 2.0;
        }
    }
}

/// MLS weights `α_k` (one per neighbour, summing to 1) of the value at
/// `p`: `f(p) ≈ Σ α_k f_k`. `None` if the fit is ill-posed.
fn mls_weights(
    local: &[[f64; 2]],
    p: [f64; 2],
    nb: &[(usize, f64)],
    r: f64,
    quadratic: bool,
) -> Option<Vec<f64>> {
    let m = if quadratic { 6 } else { 3 };
    if nb.len() < m + 1 {
        return None;
    }
    let basis = |n: usize| -> SVector<f64, 6> {
        let (x, y) = ((local[n][0] - p[0]) / r, (local[n][1] - p[1]) / r);
        if quadratic {
            SVector::from([1.0, x, y, x * x, x * y, y * y])
        } else {
            SVector::from([1.0, x, y, 0.0, 0.0, 0.0])
        }
    };
    let weight = |d: f64| (1.0 - (d / r).powi(2)).max(0.0).powi(3);
    let mut a = SMatrix::<f64, 6, 6>::zeros();
    for &(n, d) in nb {
        let b = basis(n);
        a += weight(d) * b * b.transpose();
    }
    if !quadratic {
        for k in 3..6 {
            a[(k, k)] = 1.0;
        }
    }
    let eig = a.symmetric_eigenvalues();
    let (lo, hi) = (eig.min(), eig.max());
    if lo.is_nan() || lo <= 1e-7 * hi {
        return None;
    }
    let e0 = a
        .cholesky()?
        .solve(&SVector::<f64, 6>::from([1.0, 0.0, 0.0, 0.0, 0.0, 0.0]));
    Some(
        nb.iter()
            .map(|&(n, d)| weight(d) * e0.dot(&basis(n)))
            .collect(),
    )
}

/// Per node of `fine`, the [`FIELDS`] fields evaluated from the per-node
/// `fields` of `coarse` (same pattern, any spacings; see the module docs).
/// Panels are matched by index (both garments weave the same pattern).
///
/// # Panics
/// If the garments do not have the same panels or `fields` does not have
/// one entry per coarse node.
pub fn carry_fields(
    coarse: &Garment,
    fields: &[[f64; FIELDS]],
    fine: &Garment,
) -> Vec<[f64; FIELDS]> {
    assert_eq!(coarse.panels.len(), fine.panels.len(), "same pattern");
    assert_eq!(fields.len(), coarse.local.len());
    let mut out = vec![[0.0; FIELDS]; fine.local.len()];
    for (cp, fp) in coarse.panels.iter().zip(&fine.panels) {
        let h = cp.spacing[0].min(cp.spacing[1]);
        let index = PanelIndex::new(&coarse.local, cp.first_node, cp.nodes, h);
        out[fp.first_node..fp.first_node + fp.nodes]
            .par_iter_mut()
            .enumerate()
            .for_each_init(Vec::new, |buf, (k, o)| {
                let p = fine.local[fp.first_node + k];
                let mut fit = None;
                'search: for quadratic in [true, false] {
                    let mut r = RADIUS * h;
                    for _ in 0..5 {
                        index.within(&coarse.local, p, r, buf);
                        if let Some(w) = mls_weights(&coarse.local, p, buf, r, quadratic) {
                            fit = Some(w);
                            break 'search;
                        }
                        r *= 1.5;
                    }
                }
                match fit {
                    Some(w) => {
                        for (&(n, _), a) in buf.iter().zip(w) {
                            for (o, f) in o.iter_mut().zip(&fields[n]) {
                                *o += a * f;
                            }
                        }
                    }
                    None => *o = fields[index.nearest(&coarse.local, p)],
                }
            });
    }
    out
}

/// The state `(q, v)` (5 per node) of `fine` carried from the state of
/// `coarse`: positions and velocities from the fit; arc-length coordinates
/// at `fine`'s rest values plus the fitted displacement `u - ū` where the
/// coordinate is free (a yarn end keeps its rest value, with zero rate). A
/// yarn whose carried coordinates would not increase strictly along it
/// keeps its rest coordinates.
///
/// Between two weaves of the same nodes (the same pattern at the same
/// spacing, sliding or not: `crate::pipeline::drape_levels`) the state is
/// copied as it is, positions and velocities exactly, the arc-length
/// coordinates as above.
pub fn carry_state(coarse: &Garment, q: &[f64], v: &[f64], fine: &Garment) -> (Vec<f64>, Vec<f64>) {
    let rest = &coarse.fabric.initial;
    if coarse.local == fine.local
        && fine.fabric.initial.u == rest.u
        && fine.fabric.initial.v == rest.v
    {
        let (mut qn, mut vn) = (q.to_vec(), v.to_vec());
        for (i, free) in fine.fabric.free.iter().enumerate() {
            for slot in [3, 4] {
                if !free[slot] {
                    qn[5 * i + slot] = if slot == 3 { rest.u[i] } else { rest.v[i] };
                    vn[5 * i + slot] = 0.0;
                }
            }
        }
        return (qn, vn);
    }
    let fields: Vec<[f64; FIELDS]> = (0..coarse.local.len())
        .map(|i| {
            let o = 5 * i;
            [
                q[o],
                q[o + 1],
                q[o + 2],
                q[o + 3] - rest.u[i],
                q[o + 4] - rest.v[i],
                v[o],
                v[o + 1],
                v[o + 2],
                v[o + 3],
                v[o + 4],
            ]
        })
        .collect();
    let f = carry_fields(coarse, &fields, fine);
    let fab = &fine.fabric;
    let n = fab.node_count();
    let (mut qn, mut vn) = (vec![0.0; 5 * n], vec![0.0; 5 * n]);
    for i in 0..n {
        let o = 5 * i;
        qn[o..o + 3].copy_from_slice(&f[i][0..3]);
        vn[o..o + 3].copy_from_slice(&f[i][5..8]);
        for (slot, rest_arc) in [(3, fab.initial.u[i]), (4, fab.initial.v[i])] {
            if fab.free[i][slot] {
                qn[o + slot] = rest_arc + f[i][slot];
                vn[o + slot] = f[i][5 + slot];
            } else {
                qn[o + slot] = rest_arc;
            }
        }
    }
    for yarn in &fab.yarns {
        let slot = yarn.family.slot();
        let ok = yarn
            .nodes
            .windows(2)
            .all(|w| qn[5 * w[1] + slot] > qn[5 * w[0] + slot]);
        if !ok {
            for &i in &yarn.nodes {
                qn[5 * i + slot] = fab.initial.arc(i, yarn.family);
                vn[5 * i + slot] = 0.0;
            }
        }
    }
    (qn, vn)
}

/// Positions of `q` (5 per node) as vectors.
pub fn positions(q: &[f64]) -> Vec<Vector3<f64>> {
    q.chunks_exact(5)
        .map(|c| Vector3::new(c[0], c[1], c[2]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MLS with the quadratic basis reproduces a quadratic field exactly,
    /// also where the search radius had to grow near the outline.
    #[test]
    fn quadratic_fields_are_reproduced() {
        let h = 0.01;
        let mut local = vec![];
        for i in 0..8 {
            for j in 0..5 {
                local.push([i as f64 * h, j as f64 * h]);
            }
        }
        let f = |p: [f64; 2]| {
            3.0 + 2.0 * p[0] - p[1] + 40.0 * p[0] * p[0] + 15.0 * p[0] * p[1] - 7.0 * p[1] * p[1]
        };
        let index = PanelIndex::new(&local, 0, local.len(), h);
        let mut buf = vec![];
        for p in [
            [0.035, 0.015],
            [0.0, 0.0],
            [0.07, 0.04],
            [0.002, 0.039],
            [0.05, 0.0049],
        ] {
            let mut r = RADIUS * h;
            let w = loop {
                index.within(&local, p, r, &mut buf);
                if let Some(w) = mls_weights(&local, p, &buf, r, true) {
                    break w;
                }
                r *= 1.5;
            };
            let v: f64 = buf.iter().zip(&w).map(|(&(n, _), a)| a * f(local[n])).sum();
            assert!((v - f(p)).abs() < 1e-10, "{p:?}: {v} vs {}", f(p));
            let sum: f64 = w.iter().sum();
            assert!((sum - 1.0).abs() < 1e-12);
        }
    }
}
