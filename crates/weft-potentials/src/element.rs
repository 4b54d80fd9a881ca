//! The generic element: a strain `ε(q)`, a measure `Ω(q)` and the potentials
//! built from them.
//!
//! Every elastic potential of the model has the form `V = ½ Ω k |ε|²`
//! [SBO17 eq. 2] and every dissipation potential the form `W = ½ Ω k_d |ε̇|²`
//! [SBO17 eq. 6] with the strain rate `ε̇ = ∇ε q̇`. An element type therefore
//! only has to supply its strain with Jacobian and Hessians ([`Strain`]) and
//! its measure with gradient ([`Measure`]); the energies, forces and
//! Jacobians are assembled here once for all element types.
//!
//! Shapes: `M` is the strain dimension (1 for scalar strains, 3 for the
//! small-angle vector strains), `N` the number of generalised coordinates of
//! the element (its layout is documented by each element module).

use nalgebra::{SMatrix, SVector};

/// A strain `ε(q) ∈ R^M` with its first and second derivatives with respect to
/// the element's `N` generalised coordinates (positions in m, arc-length
/// coordinates in m).
///
/// Strains are dimensionless, except the sliding anchor strain (m) and the
/// bending curvature (1/m); see each element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Strain<const M: usize, const N: usize> {
    /// `ε`, shape `M`.
    pub value: SVector<f64, M>,
    /// `∇ε = ∂ε/∂q`, shape `M x N`.
    pub jacobian: SMatrix<f64, M, N>,
    /// `∂²ε_i/∂q²` for each component `i`, each `N x N` and symmetric.
    pub hessians: [SMatrix<f64, N, N>; M],
}

impl<const M: usize, const N: usize> Strain<M, N> {
    /// The zero strain (used where an element is inactive, e.g. one-sided
    /// contact out of range).
    pub fn zero() -> Self {
        Self {
            value: SVector::zeros(),
            jacobian: SMatrix::zeros(),
            hessians: [SMatrix::zeros(); M],
        }
    }

    /// Strain rate `ε̇ = ∇ε q̇` (shape `M`), [SBO17 eq. 6]; `qdot` in m/s.
    pub fn rate(&self, qdot: &SVector<f64, N>) -> SVector<f64, M> {
        self.jacobian * qdot
    }
}

/// An element measure `Ω(q)` (m) with its gradient. Every measure of the model
/// (segment rest length `Δu`, Voronoi length `(Δu₁ - Δu₂)/2`, constant rest
/// spacing `L`) is affine in `q`, so its Hessian is zero and is not stored.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measure<const N: usize> {
    /// `Ω` in m.
    pub value: f64,
    /// `∇Ω`, shape `N` (dimensionless).
    pub gradient: SVector<f64, N>,
}

impl<const N: usize> Measure<N> {
    /// A constant measure `Ω = value` (m), zero gradient.
    pub fn constant(value: f64) -> Self {
        Self {
            value,
            gradient: SVector::zeros(),
        }
    }
}

/// Energy (J), gradient (N or N·m/m = N, shape `N`) and Hessian (N/m, shape
/// `N x N`, symmetric) of one element. The force on the element's coordinates
/// is `-gradient`, the stiffness matrix `K = hessian`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ElementEval<const N: usize> {
    /// Potential energy `V` in J.
    pub energy: f64,
    /// `∇V`, shape `N`.
    pub gradient: SVector<f64, N>,
    /// `∇²V`, shape `N x N`, symmetric.
    pub hessian: SMatrix<f64, N, N>,
}

impl<const N: usize> ElementEval<N> {
    /// The zero element (no energy, no force, no stiffness).
    pub fn zero() -> Self {
        Self {
            energy: 0.0,
            gradient: SVector::zeros(),
            hessian: SMatrix::zeros(),
        }
    }
}

/// Elastic potential `V = ½ Ω k |ε|²` [SBO17 eq. 2] with its gradient
/// `∇V = Ω k ∇εᵀε + ½ k |ε|² ∇Ω` [SBO17 eq. 3, as `f = -∇V`] and its exact
/// Hessian
/// `∇²V = Ω k (∇εᵀ∇ε + Σᵢ εᵢ ∇²εᵢ) + k (∇εᵀε ∇Ωᵀ + ∇Ω εᵀ∇ε)`
/// (the `∇²Ω` term vanishes because every measure is affine).
///
/// `k` is the element stiffness in the units that make `V` joules (see each
/// element). The `∇Ω` terms exist only because of the Eulerian coordinates.
pub fn elastic<const M: usize, const N: usize>(
    k: f64,
    strain: &Strain<M, N>,
    measure: &Measure<N>,
) -> ElementEval<N> {
    let mut s = SMatrix::<f64, N, N>::zeros();
    for i in 0..M {
        s += strain.hessians[i] * strain.value[i];
    }
    compose(k, &strain.value, &strain.jacobian, measure, &s, 0.0)
}

/// The shared composition of [`elastic`] and [`elastic_projected`]:
/// `V = ½ Ω k |ε|²`, `∇V = Ω k ∇εᵀε + ½ k |ε|² ∇Ω` and the Hessian
/// `Ω k (∇εᵀ∇ε + S) + k (∇εᵀε ∇Ωᵀ + ∇Ω εᵀ∇ε) + w ∇Ω∇Ωᵀ` for a given
/// stress-weighted strain Hessian `S` (exact or projected) and weight `w`.
/// The strain enters through its value `ε` (shape `M`) and Jacobian `∇ε`
/// (`M x N`) only.
#[inline]
fn compose<const M: usize, const N: usize>(
    k: f64,
    value: &SVector<f64, M>,
    jacobian: &SMatrix<f64, M, N>,
    measure: &Measure<N>,
    stress_hessian: &SMatrix<f64, N, N>,
    measure_weight: f64,
) -> ElementEval<N> {
    let eps2 = value.norm_squared();
    let om = measure.value;
    let je = jacobian.transpose() * value; // ∇εᵀ ε, shape N
    let energy = 0.5 * om * k * eps2;
    let gradient = je * (om * k) + measure.gradient * (0.5 * k * eps2);
    let mut h = (jacobian.transpose() * jacobian + stress_hessian) * (om * k);
    let cross = je * measure.gradient.transpose() * k;
    h += cross + cross.transpose();
    if measure_weight != 0.0 {
        h += measure.gradient * measure.gradient.transpose() * measure_weight;
    }
    ElementEval {
        energy,
        gradient,
        hessian: h,
    }
}

/// Elastic potential `V = ½ Ω k |ε|²` as [`elastic`] (same energy and
/// gradient) with a positive semi-definite approximation of its Hessian, for
/// the system matrix of Newton's method (projected Newton; DESIGN §5 needs an
/// SPD matrix for PCG and Cholesky).
///
/// The exact Hessian splits as
/// `Ω k ∇εᵀ∇ε + k (a ∇Ωᵀ + ∇Ω aᵀ) + Ω k Σᵢ εᵢ ∇²εᵢ` with `a = ∇εᵀε`. The
/// first two terms equal `Ω k (∇εᵀ∇ε - aaᵀ/|ε|²) + (k/(Ω|ε|²)) c cᵀ -
/// (k|ε|²/Ω) ∇Ω∇Ωᵀ` with `c = Ω a + |ε|² ∇Ω`, i.e. a PSD matrix minus a
/// rank-one term of second order in the strain; that term is dropped (the
/// `(k|ε|²/Ω) ∇Ω∇Ωᵀ` added here). The stress-weighted strain Hessian
/// `Σᵢ εᵢ ∇²εᵢ` is replaced by its PSD projection, supplied by
/// `clamped_stress_hessian(ε)` (an element-specific closed form or
/// [`project_psd`]), as the damping Jacobians do [SBO18 §3.4]. The result is
/// PSD and never softer than the exact Hessian (`H⁺ - H ⪰ 0`); it equals the
/// exact Hessian wherever the strain Hessian term is PSD and `∇Ω = 0`.
/// Requires `Ω > 0`. Shapes and units as in [`elastic`].
pub fn elastic_projected<const M: usize, const N: usize>(
    k: f64,
    strain: &Strain<M, N>,
    measure: &Measure<N>,
    clamped_stress_hessian: impl FnOnce(&SVector<f64, M>) -> SMatrix<f64, N, N>,
) -> ElementEval<N> {
    elastic_projected_first_order(
        k,
        &strain.value,
        &strain.jacobian,
        measure,
        clamped_stress_hessian,
    )
}

/// [`elastic_projected`] from the strain's value `ε` (shape `M`) and
/// Jacobian `∇ε` (`M x N`) alone: the projected Hessian needs the strain
/// Hessians only through `clamped_stress_hessian(ε)`, so an element whose
/// clamp is a closed form in fewer variables (bending: 7 reduced variables)
/// never builds its `N x N` strain Hessians. The same numbers as
/// [`elastic_projected`], bit for bit [SBO17 eq. 2-3, SBO18 §3.4]. Units as
/// in [`elastic`].
#[inline]
pub fn elastic_projected_first_order<const M: usize, const N: usize>(
    k: f64,
    value: &SVector<f64, M>,
    jacobian: &SMatrix<f64, M, N>,
    measure: &Measure<N>,
    clamped_stress_hessian: impl FnOnce(&SVector<f64, M>) -> SMatrix<f64, N, N>,
) -> ElementEval<N> {
    let clamp = clamped_stress_hessian(value);
    let w = k * value.norm_squared() / measure.value;
    compose(k, value, jacobian, measure, &clamp, w)
}

/// [`elastic_projected`] with the generic clamp: the stress-weighted strain
/// Hessian `Σᵢ εᵢ ∇²εᵢ` projected by [`project_psd`] (an `N x N`
/// eigenproblem). Elements with a cheaper closed form pass it to
/// [`elastic_projected`] instead.
pub fn elastic_projected_generic<const M: usize, const N: usize>(
    k: f64,
    strain: &Strain<M, N>,
    measure: &Measure<N>,
) -> ElementEval<N> {
    elastic_projected(k, strain, measure, |eps| {
        let mut s = SMatrix::<f64, N, N>::zeros();
        for i in 0..M {
            s += strain.hessians[i] * eps[i];
        }
        project_psd(&s)
    })
}

/// Strain-rate dissipation of one element [SBO17 eq. 6-11, SBO18 eq. 9, 19].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dissipation<const M: usize, const N: usize> {
    /// Strain rate `ε̇ = ∇ε q̇`, shape `M` (1/s for dimensionless strains).
    pub strain_rate: SVector<f64, M>,
    /// Dissipation potential `W = ½ Ω k_d |ε̇|²` in W (J/s) [SBO17 eq. 6].
    pub potential: f64,
    /// Dissipative force `f_d = -Ω k_d ∇εᵀ ε̇` (N), shape `N` [SBO17 eq. 8].
    /// There is no `∇Ω` term.
    pub force: SVector<f64, N>,
    /// Velocity Jacobian `∂f_d/∂q̇ = -Ω k_d ∇εᵀ∇ε` (N·s/m), `N x N`, symmetric
    /// negative semi-definite [SBO17 eq. 10].
    pub velocity_jacobian: SMatrix<f64, N, N>,
    /// Position Jacobian, the symmetric part `-Ω k_d Σᵢ ε̇ᵢ ∇²εᵢ` kept by
    /// [SBO17 eq. 11, SBO18 eq. 9, 19], with the negative eigenvalues of the
    /// stress-weighted strain Hessian `Σᵢ ε̇ᵢ ∇²εᵢ` clamped to zero so the result
    /// is negative semi-definite [SBO18 §3.4]; zero when the caller asked
    /// for none ([`dissipation_with_clamp`]). `N x N`, N/m.
    pub position_jacobian: SMatrix<f64, N, N>,
}

impl<const M: usize, const N: usize> Dissipation<M, N> {
    /// The terms the assembler adds, borrowed (no copy of the `N x N`
    /// Jacobians).
    pub fn terms(&self) -> DissipationTerms<'_, N> {
        DissipationTerms {
            force: &self.force,
            velocity_jacobian: &self.velocity_jacobian,
            position_jacobian: &self.position_jacobian,
            potential: self.potential,
        }
    }
}

/// The fields of a [`Dissipation`] that do not depend on the strain's
/// dimension, borrowed: force (N, shape `N`), velocity Jacobian (N·s/m,
/// `N x N`), clamped position Jacobian (N/m, `N x N`), potential `W` (W)
/// [SBO17 eq. 6-11].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DissipationTerms<'a, const N: usize> {
    /// [`Dissipation::force`].
    pub force: &'a SVector<f64, N>,
    /// [`Dissipation::velocity_jacobian`].
    pub velocity_jacobian: &'a SMatrix<f64, N, N>,
    /// [`Dissipation::position_jacobian`].
    pub position_jacobian: &'a SMatrix<f64, N, N>,
    /// [`Dissipation::potential`].
    pub potential: f64,
}

/// Strain-rate dissipation `W = ½ Ω k_d |ε̇|²` of an element with strain
/// `strain`, measure `measure`, damping coefficient `k_d` (same units as the
/// element's `k`, times seconds) and generalised velocity `qdot` (m/s, shape
/// `N`). See [`Dissipation`] for what is returned. [SBO17 eq. 6-11]
///
/// The stress-weighted strain Hessian `Σᵢ ε̇ᵢ ∇²εᵢ` is clamped by the generic
/// [`project_psd`]; elements with a closed-form clamp use
/// [`dissipation_with_clamp`] instead.
pub fn dissipation<const M: usize, const N: usize>(
    k_d: f64,
    strain: &Strain<M, N>,
    measure: &Measure<N>,
    qdot: &SVector<f64, N>,
) -> Dissipation<M, N> {
    dissipation_with_jacobian(k_d, strain, measure, qdot, true)
}

/// As [`dissipation`]; with `position_jacobian` false the position
/// Jacobian is left zero and its eigen-decomposition skipped (see
/// [`dissipation_with_clamp`]).
pub fn dissipation_with_jacobian<const M: usize, const N: usize>(
    k_d: f64,
    strain: &Strain<M, N>,
    measure: &Measure<N>,
    qdot: &SVector<f64, N>,
    position_jacobian: bool,
) -> Dissipation<M, N> {
    dissipation_with_clamp(k_d, strain, measure, qdot, position_jacobian, |rate| {
        let mut s = SMatrix::<f64, N, N>::zeros();
        for i in 0..M {
            s += strain.hessians[i] * rate[i];
        }
        project_psd(&s)
    })
}

/// As [`dissipation`], with the PSD projection of the stress-weighted strain
/// Hessian `(Σᵢ ε̇ᵢ ∇²εᵢ)⁺` supplied by `clamped_stress_hessian(ε̇)` (an
/// element-specific closed form). The position Jacobian is
/// `-Ω k_d (Σᵢ ε̇ᵢ ∇²εᵢ)⁺` [SBO18 eq. 9, 19, §3.4] when `position_jacobian`,
/// else zero (`clamped_stress_hessian` is then not called).
///
/// Why leaving it out is a consistent linearisation: SBO18 §3.4 already
/// drops the other half of `∂f_d/∂q`, the non-symmetric
/// `-Ω k_d ∇εᵀ (∇²ε q̇)`. Against the velocity term `h Ω k_d ∇εᵀ∇ε` of the
/// backward-Euler matrix both halves are of relative size `h |ε̇| ‖∇²ε‖ /
/// ‖∇ε‖²` (about the strain's change in one step), so keeping one of them
/// does not make the Newton matrix exact to a higher order. Forces,
/// potentials and velocity Jacobians, and therefore the converged step, do
/// not depend on the choice.
pub fn dissipation_with_clamp<const M: usize, const N: usize>(
    k_d: f64,
    strain: &Strain<M, N>,
    measure: &Measure<N>,
    qdot: &SVector<f64, N>,
    position_jacobian: bool,
    clamped_stress_hessian: impl FnOnce(&SVector<f64, M>) -> SMatrix<f64, N, N>,
) -> Dissipation<M, N> {
    dissipation_first_order(
        k_d,
        &strain.jacobian,
        measure,
        qdot,
        position_jacobian,
        clamped_stress_hessian,
    )
}

/// [`dissipation_with_clamp`] from the strain's Jacobian `∇ε` (`M x N`)
/// alone (see [`elastic_projected_first_order`]): the same numbers, bit for
/// bit, for an element that never builds its `N x N` strain Hessians
/// [SBO17 eq. 6-11, SBO18 §3.4]. `qdot` shape `N` (m/s); units as in
/// [`Dissipation`].
#[inline]
pub fn dissipation_first_order<const M: usize, const N: usize>(
    k_d: f64,
    jacobian: &SMatrix<f64, M, N>,
    measure: &Measure<N>,
    qdot: &SVector<f64, N>,
    position_jacobian: bool,
    clamped_stress_hessian: impl FnOnce(&SVector<f64, M>) -> SMatrix<f64, N, N>,
) -> Dissipation<M, N> {
    let c = measure.value * k_d;
    let rate = jacobian * qdot;
    let force = jacobian.transpose() * rate * (-c);
    let velocity_jacobian = jacobian.transpose() * jacobian * (-c);
    let position_jacobian = if position_jacobian {
        clamped_stress_hessian(&rate) * (-c)
    } else {
        SMatrix::zeros()
    };
    Dissipation {
        strain_rate: rate,
        potential: 0.5 * c * rate.norm_squared(),
        force,
        velocity_jacobian,
        position_jacobian,
    }
}

/// The switch angle (rad) that holds a small-angle strain choice over one
/// backward-Euler step (bending and shear, [`crate::bending::step_threshold`],
/// [`crate::shear::step_threshold`]): `min(2 θ_t, (θ_t + π/2)/2)` when the
/// step started on the small-angle vector strain (`small_at_start`), `θ_t/2`
/// when it started on the scalar strain; `threshold` `θ_t` in rad.
pub fn held_threshold(small_at_start: bool, threshold: f64) -> f64 {
    if small_at_start {
        (2.0 * threshold).min(0.5 * (threshold + std::f64::consts::FRAC_PI_2))
    } else {
        0.5 * threshold
    }
}

/// The Rayleigh-analogy parameterisation of strain-rate damping
/// [SBO18 eq. 12]: `k_d = β k`, with `β` in seconds.
pub fn damping_from_beta(beta: f64, k: f64) -> f64 {
    beta * k
}

/// Rayleigh damping force of one element, `f = -(α M + β K) q̇` [SBO17 eq. 4],
/// the baseline the strain-rate model is compared against. `mass` is the
/// element's mass matrix (kg), `stiffness` its elastic stiffness `K = ∇²V`
/// (N/m), `alpha` in 1/s, `beta` in s, `qdot` in m/s; returns N, shape `N`.
/// Its velocity Jacobian is `-(α M + β K)`, see [`rayleigh_velocity_jacobian`].
pub fn rayleigh_force<const N: usize>(
    alpha: f64,
    beta: f64,
    mass: &SMatrix<f64, N, N>,
    stiffness: &SMatrix<f64, N, N>,
    qdot: &SVector<f64, N>,
) -> SVector<f64, N> {
    rayleigh_velocity_jacobian(alpha, beta, mass, stiffness) * qdot
}

/// Velocity Jacobian of the Rayleigh damping force, `-(α M + β K)` (N·s/m,
/// `N x N`) [SBO17 eq. 4]. Not projected: `K` may be indefinite; the solver
/// decides how to keep the system matrix SPD.
pub fn rayleigh_velocity_jacobian<const N: usize>(
    alpha: f64,
    beta: f64,
    mass: &SMatrix<f64, N, N>,
    stiffness: &SMatrix<f64, N, N>,
) -> SMatrix<f64, N, N> {
    -(mass * alpha + stiffness * beta)
}

/// The second derivatives an element evaluation builds for the Newton
/// matrix (the assembler's choice per step and evaluation, DESIGN §5).
///
/// The energy, gradient, dissipative force and dissipation potential do not
/// depend on it: an element gives the same numbers, bit for bit, in every
/// mode (`tests/projected.rs`), so a line search may evaluate its trial
/// residuals with [`Hessian::Skip`] and build the matrix only where it is
/// used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hessian {
    /// The exact Hessian (quadratic Newton convergence; may be indefinite).
    Exact,
    /// The PSD approximation: stress-weighted strain Hessians with their
    /// negative eigenvalues clamped [SBO18 §3.4].
    Projected,
    /// No Newton matrix: the eigen-decompositions of the clamps (elastic
    /// and the dissipation's position Jacobian) are skipped and the Hessian
    /// and Jacobian fields of the result must not be used.
    Skip,
}

/// Projects a symmetric matrix onto the positive semi-definite cone by
/// clamping its negative eigenvalues to zero (`A⁺ = Q max(Λ, 0) Qᵀ`)
/// [SBO18 §3.4]. Uses [`symmetric_eigen`], allocation-free, so the same
/// routine runs in the CUDA kernels. `a` must be symmetric (only its
/// symmetric part is used); shape `N x N`.
pub fn project_psd<const N: usize>(a: &SMatrix<f64, N, N>) -> SMatrix<f64, N, N> {
    let (values, vectors) = symmetric_eigen(a);
    if values.iter().all(|&l| l >= 0.0) {
        return (a + a.transpose()) * 0.5;
    }
    let mut out = SMatrix::<f64, N, N>::zeros();
    for k in 0..N {
        let l = values[k];
        if l > 0.0 {
            let q = vectors.column(k);
            out += q * q.transpose() * l;
        }
    }
    out
}

/// Eigenvalues (shape `N`) and orthonormal eigenvectors (columns, `N x N`) of
/// the symmetric part of `a`: Householder reduction to tridiagonal form
/// followed by the implicit QL algorithm with Wilkinson-type shifts (the
/// classic `tred2`/`tql2` pair), allocation-free and generic over `N` so the
/// CUDA kernels can run the same routine. Eigenvalues are not sorted. A
/// matrix with non-finite entries gives non-finite output. Plane rotations use
/// `sqrt(f² + g²)` rather than `hypot` (several times faster; entries beyond
/// 1e150 in magnitude would overflow, far outside any element's range).
pub fn symmetric_eigen<const N: usize>(
    a: &SMatrix<f64, N, N>,
) -> (SVector<f64, N>, SMatrix<f64, N, N>) {
    let mut z = (a + a.transpose()) * 0.5;
    let mut d = SVector::<f64, N>::zeros();
    let mut e = SVector::<f64, N>::zeros();
    if N == 0 {
        return (d, z);
    }
    // Householder tridiagonalisation; z accumulates the transformation.
    for i in (1..N).rev() {
        let l = i - 1;
        let mut h = 0.0;
        if l > 0 {
            let scale: f64 = (0..=l).map(|k| z[(i, k)].abs()).sum();
            if scale == 0.0 {
                e[i] = z[(i, l)];
            } else {
                for k in 0..=l {
                    z[(i, k)] /= scale;
                    h += z[(i, k)] * z[(i, k)];
                }
                let f = z[(i, l)];
                let g = if f >= 0.0 { -h.sqrt() } else { h.sqrt() };
                e[i] = scale * g;
                h -= f * g;
                z[(i, l)] = f - g;
                let mut f = 0.0;
                for j in 0..=l {
                    z[(j, i)] = z[(i, j)] / h;
                    let mut g = 0.0;
                    for k in 0..=j {
                        g += z[(j, k)] * z[(i, k)];
                    }
                    for k in (j + 1)..=l {
                        g += z[(k, j)] * z[(i, k)];
                    }
                    e[j] = g / h;
                    f += e[j] * z[(i, j)];
                }
                let hh = f / (h + h);
                for j in 0..=l {
                    let f = z[(i, j)];
                    let g = e[j] - hh * f;
                    e[j] = g;
                    for k in 0..=j {
                        z[(j, k)] -= f * e[k] + g * z[(i, k)];
                    }
                }
            }
        } else {
            e[i] = z[(i, l)];
        }
        d[i] = h;
    }
    d[0] = 0.0;
    e[0] = 0.0;
    for i in 0..N {
        if d[i] != 0.0 {
            for j in 0..i {
                let mut g = 0.0;
                for k in 0..i {
                    g += z[(i, k)] * z[(k, j)];
                }
                for k in 0..i {
                    z[(k, j)] -= g * z[(k, i)];
                }
            }
        }
        d[i] = z[(i, i)];
        z[(i, i)] = 1.0;
        for j in 0..i {
            z[(j, i)] = 0.0;
            z[(i, j)] = 0.0;
        }
    }
    // Implicit QL on the tridiagonal matrix (diagonal d, off-diagonal e).
    for i in 1..N {
        e[i - 1] = e[i];
    }
    e[N - 1] = 0.0;
    for l in 0..N {
        let mut iterations = 0;
        loop {
            let mut m = l;
            while m + 1 < N {
                let dd = d[m].abs() + d[m + 1].abs();
                if e[m].abs() <= f64::EPSILON * dd {
                    break;
                }
                m += 1;
            }
            if m == l || iterations >= 60 || !e[l].is_finite() {
                break;
            }
            iterations += 1;
            let mut g = (d[l + 1] - d[l]) / (2.0 * e[l]);
            let mut r = (g * g + 1.0).sqrt();
            g = d[m] - d[l] + e[l] / (g + r.copysign(g));
            let (mut s, mut c, mut p) = (1.0, 1.0, 0.0);
            let mut i = m;
            let mut deflated = false;
            while i > l {
                i -= 1;
                let f = s * e[i];
                let b = c * e[i];
                r = (f * f + g * g).sqrt();
                e[i + 1] = r;
                if r == 0.0 {
                    d[i + 1] -= p;
                    e[m] = 0.0;
                    deflated = true;
                    break;
                }
                s = f / r;
                c = g / r;
                g = d[i + 1] - p;
                r = (d[i] - g) * s + 2.0 * c * b;
                p = s * r;
                d[i + 1] = g + p;
                g = c * r - b;
                for k in 0..N {
                    let f = z[(k, i + 1)];
                    z[(k, i + 1)] = s * z[(k, i)] + c * f;
                    z[(k, i)] = c * z[(k, i)] - s * f;
                }
            }
            if deflated {
                continue;
            }
            d[l] -= p;
            e[l] = g;
            e[m] = 0.0;
        }
    }
    (d, z)
}
