//! Finite-difference checks shared by the tests of every element (and by the
//! backends' parity tests). Central differences, step `h` (m).

use nalgebra::{SMatrix, SVector};

/// Central finite-difference gradient of `f` at `q` with step `h`, shape `N`.
pub fn fd_gradient<const N: usize>(
    f: impl Fn(&SVector<f64, N>) -> f64,
    q: &SVector<f64, N>,
    h: f64,
) -> SVector<f64, N> {
    SVector::from_fn(|i, _| {
        let mut qp = *q;
        let mut qm = *q;
        qp[i] += h;
        qm[i] -= h;
        (f(&qp) - f(&qm)) / (2.0 * h)
    })
}

/// Central finite-difference Jacobian of a vector function `g: R^N -> R^M` at
/// `q` with step `h`, shape `M x N`.
pub fn fd_jacobian<const M: usize, const N: usize>(
    g: impl Fn(&SVector<f64, N>) -> SVector<f64, M>,
    q: &SVector<f64, N>,
    h: f64,
) -> SMatrix<f64, M, N> {
    let mut out = SMatrix::<f64, M, N>::zeros();
    for j in 0..N {
        let mut qp = *q;
        let mut qm = *q;
        qp[j] += h;
        qm[j] -= h;
        let d = (g(&qp) - g(&qm)) / (2.0 * h);
        out.set_column(j, &d);
    }
    out
}

/// Relative error `|a - b| / max(|b|, floor)` in the Frobenius norm. `floor`
/// keeps the measure meaningful where the reference is (nearly) zero.
pub fn rel_error<const R: usize, const C: usize>(
    a: &SMatrix<f64, R, C>,
    b: &SMatrix<f64, R, C>,
    floor: f64,
) -> f64 {
    (a - b).norm() / b.norm().max(floor)
}

/// A deterministic pseudo-random generator of numbers in `[-1, 1)`
/// (xorshift64), for reproducible random configurations in tests and
/// benchmarks. `seed` must be non-zero.
pub fn xorshift(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}
