//! Saint-Venant–Kirchhoff membrane triangle with strain-rate dissipation
//! [SBO18 §4, eq. 13-16], for triangle-mesh cloth.
//!
//! A triangle with rest positions `r₀, r₁, r₂` in its flat 2D rest frame
//! (m) and world positions `q = (x₀, x₁, x₂)` (shape 9, m). Its deformation
//! gradient is `F = Dₛ Dₘ⁻¹` (3x2) with `Dₛ = [x₁-x₀, x₂-x₀]`,
//! `Dₘ = [r₁-r₀, r₂-r₀]`, i.e. `F = Σᵢ xᵢ bᵢᵀ` with constant `bᵢ` (2-vectors),
//! and the Green strain `E = ½(FᵀF - I)` [SBO18 §4]. Written as the vector
//! `ε = (E₀₀, E₁₁, √2 E₀₁)` (so `tr(E²) = |ε|²`), each component is quadratic
//! in `q`: `∂E_ab/∂x_k = ½(b_k[a] f_b + b_k[b] f_a)` (`f_a` the columns of
//! `F`) and `∂²E_ab/∂x_k∂x_l = ½(b_k[a] b_l[b] + b_k[b] b_l[a]) I₃`, constant.
//!
//! The StVK energy density [SBO18 eq. 13]
//! `Ψ = λ/2 tr(E)² + μ tr(E²) = ½ εᵀ C ε`, `C = λ (1,1,0)(1,1,0)ᵀ + 2μ I`
//! ([`isotropic`]; any symmetric positive definite `C` is taken, e.g. an
//! orthotropic woven fabric's with its warp and weft along the rest
//! frame's axes), is written with the Cholesky factor `C = L Lᵀ` as `½ |Lᵀ ε|²`, so the
//! element is the generic `V = ½ Ω k |ε'|²` of [`crate::element`] with
//! `ε' = Lᵀ ε`, `k = 1` and the measure `Ω = A` (rest area, m²): energy,
//! gradient, exact Hessian and the PSD-projected Hessian come from
//! [`crate::elastic`] and [`crate::elastic_projected`]. The
//! dissipation potential [SBO18 eq. 15]
//! `Ψ_d = λ_d/2 tr(Ė)² + μ_d tr(Ė²) = ½ ε̇ᵀ C_d ε̇` is the generic `W = ½ Ω |ε̇'_d|²` with
//! `ε'_d = L_dᵀ ε`; its stress `S_d = C_d ε̇` [SBO18 eq. 16] weights the
//! strain Hessians in the position Jacobian, whose negative eigenvalues are
//! clamped [SBO18 §3.4] as in [`crate::dissipation`].
//!
//! Both clamps are closed forms: every strain Hessian is `G ⊗ I₃` with a
//! constant 3x3 `G` over the nodes, so a stress-weighted sum
//! `Σ S_c ∇²ε_c = K ⊗ I₃` projects to `K⁺ ⊗ I₃`: one 3x3 eigenproblem
//! instead of a 9x9 one, the same matrix up to round-off.
//!
//! Units: `λ, μ` are membrane moduli (N/m, energy per area), `λ_d, μ_d` in
//! N·s/m; energies in J, forces in N. SBO18's shirts use `λ_d = 30, μ_d = 20`
//! (medium) and `λ_d = 1.5, μ_d = 1` (low damping) [SBO18 §6].

use crate::element::{
    Dissipation, ElementEval, Hessian, Measure, Strain, dissipation_first_order, elastic,
    elastic_projected_first_order, project_psd,
};
use nalgebra::{Matrix2, Matrix3, SMatrix, SVector, Vector2, Vector3};

/// Degrees of freedom of a triangle: three nodes' positions.
pub const DOFS: usize = 9;

/// The components `(a, b, w)` of the strain vector `ε_c = w E_ab`:
/// `(E₀₀, E₁₁, √2 E₀₁)` (module docs).
const GREEN_COMPONENTS: [(usize, usize, f64); 3] =
    [(0, 0, 1.0), (1, 1, 1.0), (0, 1, std::f64::consts::SQRT_2)];

/// The rest shape of a triangle in its flat 2D rest frame: the constant
/// vectors `bᵢ` of `F = Σᵢ xᵢ bᵢᵀ` (1/m) and the rest area. Shared by the
/// StVK element and the strain-based-dynamics constraints of `weft-shell`
/// \[SBD14\], which both read the deformation gradient `F` from it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriangleRest {
    /// `bᵢ`, the rows of `G Dₘ⁻¹` with `G = [[-1,-1],[1,0],[0,1]]`.
    pub b: [Vector2<f64>; 3],
    /// Rest area `A` (m²).
    pub area: f64,
}

impl TriangleRest {
    /// The rest shape of the triangle with rest vertices `rest` (m, 2D), or
    /// `None` when it is degenerate (area not above 1e-14 m² or
    /// non-finite).
    pub fn new(rest: [[f64; 2]; 3]) -> Option<Self> {
        let r = rest.map(Vector2::from);
        let dm = Matrix2::from_columns(&[r[1] - r[0], r[2] - r[0]]);
        let area = 0.5 * dm.determinant().abs();
        if !(area > 1e-14 && area.is_finite()) {
            return None;
        }
        let dm_inv = dm.try_inverse()?;
        let g = SMatrix::<f64, 3, 2>::new(-1.0, -1.0, 1.0, 0.0, 0.0, 1.0) * dm_inv;
        Some(TriangleRest {
            b: std::array::from_fn(|i| g.row(i).transpose()),
            area,
        })
    }

    /// Deformation gradient `F = Σᵢ xᵢ bᵢᵀ` (3x2, dimensionless) of the
    /// world positions `x` (m).
    pub fn deformation_gradient(&self, x: [Vector3<f64>; 3]) -> SMatrix<f64, 3, 2> {
        x[0] * self.b[0].transpose() + x[1] * self.b[1].transpose() + x[2] * self.b[2].transpose()
    }
}

/// A StVK membrane triangle: rest shape, elastic moduli and damping moduli.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stvk {
    /// Rest shape.
    rest: TriangleRest,
    /// `Lᵀ` with `L Lᵀ = C`.
    lt: Matrix3<f64>,
    /// `L_dᵀ` with `L_d L_dᵀ = C_d`, or `None` without damping.
    lt_d: Option<Matrix3<f64>>,
}

/// `Lᵀ` of the Cholesky factor of `c`, or `None` unless `c` is finite,
/// symmetric and positive definite (smallest eigenvalue above 1e-12 of the
/// largest, so a singular `C` is refused whatever the round-off).
fn factor(c: &Matrix3<f64>) -> Option<Matrix3<f64>> {
    if !(c.iter().all(|v| v.is_finite()) && (c - c.transpose()).amax() <= 1e-12 * c.amax()) {
        return None;
    }
    let eig = c.symmetric_eigenvalues();
    if eig.min() <= 1e-12 * eig.amax() {
        return None;
    }
    c.cholesky().map(|ch| ch.l().transpose())
}

/// `C = λ (1,1,0)(1,1,0)ᵀ + 2μ I` of the isotropic StVK density
/// `λ/2 tr(E)² + μ tr(E²)` [SBO18 eq. 13] in the basis
/// `ε = (E₀₀, E₁₁, √2 E₀₁)`.
pub fn isotropic(lambda: f64, mu: f64) -> Matrix3<f64> {
    let one = Vector3::new(1.0, 1.0, 0.0);
    one * one.transpose() * lambda + Matrix3::identity() * (2.0 * mu)
}

impl Stvk {
    /// A triangle with rest vertices `rest` (m, 2D rest frame), elastic
    /// moduli `c` (N/m) and damping moduli `c_d` (N·s/m; zero for no
    /// damping) as 3x3 matrices in the basis `ε = (E₀₀, E₁₁, √2 E₀₁)`: the
    /// densities `Ψ = ½ εᵀ C ε` [SBO18 eq. 13, generalised to orthotropic
    /// moduli in the rest frame's axes] and `Ψ_d = ½ ε̇ᵀ C_d ε̇` [SBO18
    /// eq. 15] ([`isotropic`] gives SBO18's `C(λ, μ)`).
    ///
    /// Returns `None` for a degenerate rest triangle (area not above
    /// 1e-14 m² or non-finite), `c` not symmetric positive definite, or
    /// `c_d` neither zero nor symmetric positive definite.
    pub fn new(rest: [[f64; 2]; 3], c: &Matrix3<f64>, c_d: &Matrix3<f64>) -> Option<Self> {
        let rest = TriangleRest::new(rest)?;
        let lt = factor(c)?;
        let lt_d = if c_d.iter().all(|&v| v == 0.0) {
            None
        } else {
            Some(factor(c_d)?)
        };
        Some(Stvk { rest, lt, lt_d })
    }

    /// Rest area `A` (m²).
    pub fn area(&self) -> f64 {
        self.rest.area
    }

    /// The rest shape (`bᵢ`, area).
    pub fn rest(&self) -> &TriangleRest {
        &self.rest
    }

    /// `Lᵀ` (3x3, √(N/m)) with `L Lᵀ = C`: the elastic moduli as the CUDA
    /// kernels take them (`kernels/weft_elements.cuh`).
    pub fn stiffness_factor(&self) -> &Matrix3<f64> {
        &self.lt
    }

    /// `L_dᵀ` (3x3, √(N·s/m)) with `L_d L_dᵀ = C_d`, or `None` for a
    /// triangle without strain-rate damping.
    pub fn damping_factor(&self) -> Option<&Matrix3<f64>> {
        self.lt_d.as_ref()
    }

    /// Deformation gradient `F` (3x2) at `q` (shape 9, m).
    pub fn deformation_gradient(&self, q: &SVector<f64, DOFS>) -> SMatrix<f64, 3, 2> {
        self.rest.deformation_gradient(std::array::from_fn(|i| {
            q.fixed_rows::<3>(3 * i).into_owned()
        }))
    }

    /// Green strain `ε = (E₀₀, E₁₁, √2 E₀₁)` (dimensionless) with its
    /// Jacobian (3x9) and constant Hessians (9x9 each), see the module docs.
    pub fn green_strain(&self, q: &SVector<f64, DOFS>) -> Strain<3, DOFS> {
        let (value, jacobian) = self.green_strain_first_order(q);
        let g = self.node_hessians();
        Strain {
            value,
            jacobian,
            hessians: std::array::from_fn(|c| kron_identity(&g[c])),
        }
    }

    /// The value (shape 3) and Jacobian (3x9) of [`Stvk::green_strain`]
    /// without its constant Hessians: the same numbers, bit for bit, for
    /// evaluations that build no strain Hessian.
    fn green_strain_first_order(
        &self,
        q: &SVector<f64, DOFS>,
    ) -> (SVector<f64, 3>, SMatrix<f64, 3, DOFS>) {
        let f = self.deformation_gradient(q);
        let cols = [f.column(0).into_owned(), f.column(1).into_owned()];
        let mut value = SVector::<f64, 3>::zeros();
        let mut jacobian = SMatrix::<f64, 3, DOFS>::zeros();
        for (c, &(a, bb, w)) in GREEN_COMPONENTS.iter().enumerate() {
            let delta = if a == bb { 1.0 } else { 0.0 };
            value[c] = w * 0.5 * (cols[a].dot(&cols[bb]) - delta);
            for k in 0..3 {
                let g = (cols[bb] * self.rest.b[k][a] + cols[a] * self.rest.b[k][bb]) * (0.5 * w);
                for d in 0..3 {
                    jacobian[(c, 3 * k + d)] = g[d];
                }
            }
        }
        (value, jacobian)
    }

    /// The strain Hessians per node pair: `∇²ε_c = G_c ⊗ I₃` with
    /// `G_c[k][l] = ½ w (b_k[a] b_l[b] + b_k[b] b_l[a])` (1/m², 3x3) for the
    /// component `ε_c = w E_ab` (module docs).
    fn node_hessians(&self) -> [Matrix3<f64>; 3] {
        let b = &self.rest.b;
        std::array::from_fn(|c| {
            let (a, bb, w) = GREEN_COMPONENTS[c];
            Matrix3::from_fn(|k, l| 0.5 * w * (b[k][a] * b[l][bb] + b[k][bb] * b[l][a]))
        })
    }

    /// The PSD projection of the stress-weighted strain Hessian
    /// `Σ_c S_c ∇²ε_c` for the stress `S` (shape 3, in the basis of `ε`;
    /// N/m for `C ε`, N·s/m for `C_d ε̇`): the matrix is `K ⊗ I₃` with
    /// `K = Σ_c S_c G_c` (3x3), so its projection is `K⁺ ⊗ I₃`, one 3x3
    /// eigenproblem instead of a 9x9 one (the same matrix up to round-off)
    /// [SBO18 §3.4].
    fn clamped_stress_hessian(&self, stress: &Vector3<f64>) -> SMatrix<f64, DOFS, DOFS> {
        let g = self.node_hessians();
        let k = g[0] * stress[0] + g[1] * stress[1] + g[2] * stress[2];
        kron_identity(&project_psd(&k))
    }

    /// `M ε` as a strain: value `M ε`, Jacobian `M ∇ε`, Hessians
    /// `Σⱼ Mᵢⱼ ∇²εⱼ`.
    fn weighted(m: &Matrix3<f64>, s: &Strain<3, DOFS>) -> Strain<3, DOFS> {
        Strain {
            value: m * s.value,
            jacobian: m * s.jacobian,
            hessians: std::array::from_fn(|i| {
                (0..3).fold(SMatrix::<f64, DOFS, DOFS>::zeros(), |acc, j| {
                    acc + s.hessians[j] * m[(i, j)]
                })
            }),
        }
    }

    /// Elastic energy `A Ψ` (J) [SBO18 eq. 13], gradient (N, shape 9) and
    /// exact Hessian (N/m, 9x9).
    pub fn elastic(&self, q: &SVector<f64, DOFS>) -> ElementEval<DOFS> {
        let s = Self::weighted(&self.lt, &self.green_strain(q));
        elastic(1.0, &s, &Measure::constant(self.rest.area))
    }

    /// As [`Stvk::elastic`] with a positive semi-definite Hessian for the
    /// system matrix: the stress-weighted strain Hessian `Σⱼ Sⱼ ∇²εⱼ`
    /// (`S = C ε`, the second Piola-Kirchhoff stress) projected to PSD
    /// [SBO18 §3.4] ([`crate::elastic_projected`], with the 3x3 closed
    /// form of the projection: the generic 9x9 one up to round-off).
    pub fn elastic_projected(&self, q: &SVector<f64, DOFS>) -> ElementEval<DOFS> {
        let (value, jacobian) = self.green_strain_first_order(q);
        self.elastic_projected_first_order(&value, &jacobian)
    }

    /// [`Stvk::elastic_projected`] from the Green strain's value and
    /// Jacobian.
    fn elastic_projected_first_order(
        &self,
        value: &SVector<f64, 3>,
        jacobian: &SMatrix<f64, 3, DOFS>,
    ) -> ElementEval<DOFS> {
        let area = Measure::constant(self.rest.area);
        elastic_projected_first_order(1.0, &(self.lt * value), &(self.lt * jacobian), &area, |e| {
            self.clamped_stress_hessian(&(self.lt.transpose() * e))
        })
    }

    /// Strain-rate dissipation `W = A Ψ_d(Ė)` (W) [SBO18 eq. 15] at
    /// positions `q` and velocities `qdot` (shape 9, m/s): the dissipative
    /// force `-A ∇εᵀ S_d` with `S_d = C_d ε̇` [SBO18 eq. 16] (N), its
    /// velocity Jacobian (N·s/m) and its position Jacobian with the
    /// negative eigenvalues of `Σⱼ S_d,ⱼ ∇²εⱼ` clamped [SBO18 §3.4] (the
    /// 3x3 closed form of [`Stvk::elastic_projected`]). `None` for a
    /// triangle built without damping.
    pub fn dissipation(
        &self,
        q: &SVector<f64, DOFS>,
        qdot: &SVector<f64, DOFS>,
    ) -> Option<Dissipation<3, DOFS>> {
        let (_, jacobian) = self.green_strain_first_order(q);
        self.dissipation_first_order(&jacobian, qdot, true)
    }

    /// [`Stvk::dissipation`] from the Green strain's Jacobian; without
    /// `position_jacobian` that Jacobian is left zero.
    fn dissipation_first_order(
        &self,
        jacobian: &SMatrix<f64, 3, DOFS>,
        qdot: &SVector<f64, DOFS>,
        position_jacobian: bool,
    ) -> Option<Dissipation<3, DOFS>> {
        let lt_d = self.lt_d.as_ref()?;
        let area = Measure::constant(self.rest.area);
        Some(dissipation_first_order(
            1.0,
            &(lt_d * jacobian),
            &area,
            qdot,
            position_jacobian,
            |rate| self.clamped_stress_hessian(&(lt_d.transpose() * rate)),
        ))
    }

    /// [`Stvk::elastic`] ([`Hessian::Exact`]) or [`Stvk::elastic_projected`]
    /// ([`Hessian::Projected`]) and [`Stvk::dissipation`] from one
    /// Green-strain evaluation, as the assembler needs both per triangle and
    /// Newton iteration; without `position_jacobian` the dissipation's
    /// position Jacobian is left zero (its eigenproblem skipped).
    /// [`Hessian::Skip`] builds neither the strain Hessians nor the two
    /// eigenproblems (elastic clamp, dissipation position Jacobian): the
    /// same energy, gradient, dissipative force and potential, bit for bit,
    /// with Hessian and Jacobians not to be used.
    pub fn elastic_and_dissipation(
        &self,
        q: &SVector<f64, DOFS>,
        qdot: &SVector<f64, DOFS>,
        hessian: Hessian,
        position_jacobian: bool,
    ) -> (ElementEval<DOFS>, Option<Dissipation<3, DOFS>>) {
        let (value, jacobian) = self.green_strain_first_order(q);
        let ev = match hessian {
            Hessian::Exact => {
                let g = self.node_hessians();
                let s = Strain {
                    value,
                    jacobian,
                    hessians: std::array::from_fn(|c| kron_identity(&g[c])),
                };
                elastic(
                    1.0,
                    &Self::weighted(&self.lt, &s),
                    &Measure::constant(self.rest.area),
                )
            }
            Hessian::Projected => self.elastic_projected_first_order(&value, &jacobian),
            Hessian::Skip => elastic_projected_first_order(
                1.0,
                &(self.lt * value),
                &(self.lt * jacobian),
                &Measure::constant(self.rest.area),
                |_| SMatrix::zeros(),
            ),
        };
        let pj = position_jacobian && hessian != Hessian::Skip;
        (ev, self.dissipation_first_order(&jacobian, qdot, pj))
    }
}

/// `K ⊗ I₃` in the triangle's coordinate order `3 k + d` (node `k`,
/// component `d`): entry `(3k+d, 3l+d)` is `K[k][l]` (9x9).
fn kron_identity(k: &Matrix3<f64>) -> SMatrix<f64, DOFS, DOFS> {
    let mut out = SMatrix::<f64, DOFS, DOFS>::zeros();
    for a in 0..3 {
        for b in 0..3 {
            for d in 0..3 {
                out[(3 * a + d, 3 * b + d)] = k[(a, b)];
            }
        }
    }
    out
}
