//! Discrete-shell bending of a triangle mesh: the hinge element of
//! Grinspun et al.'s discrete shells (`../shared/references/`, the
//! hyperelasticity and bending lecture notes' "Grinspun et al. on
//! bending"), for the triangle-mesh cloth of the StVK membrane
//! ([`crate::stvk`]).
//!
//! A hinge is the interior edge `x₀ x₁` shared by the triangles
//! `(x₀, x₁, x₂)` and `(x₁, x₀, x₃)`; `q = (x₀, x₁, x₂, x₃)` (shape 12, m).
//! With `e = x₁ - x₀`, the unnormalised normals `n_A = e × (x₂ - x₀)` and
//! `n_B = (x₃ - x₀) × e` (parallel when the hinge is flat), the **bending
//! angle** is
//!
//! `θ = atan2((n_A × n_B)·e/|e|, n_A·n_B)`
//!
//! (rad, 0 flat, signed by the turn about `e`; defined for `|θ| < π` and
//! non-degenerate triangles). The energy is
//!
//! `V = ½ B Ω (θ - θ̄)²`, `Ω = 3 |ē|² / (Ā_A + Ā_B)`,
//!
//! with the bending rigidity `B` (N·m, the plate's `D`), the rest angle
//! `θ̄`, the rest edge `ē` and the rest areas `Ā_A, Ā_B`: the squared
//! mean-curvature density `(θ |e| / A_e)²` integrated over the hinge's
//! third `A_e = (Ā_A + Ā_B)/3` of its triangles. It is the generic
//! `V = ½ Ω k |ε|²` of [`crate::element`] with `k = B`, the strain
//! `ε = θ - θ̄` and a constant, dimensionless measure `Ω`, so energy,
//! gradient, exact Hessian and the PSD-projected Hessian come from
//! [`crate::elastic`] and [`crate::elastic_projected`]. The clamps of the
//! projected Hessian and of the dissipation's position Jacobian project the
//! stress-weighted angle Hessian over the 9 edge coordinates, where `θ`
//! lives, and map it back: a 9x9 eigenproblem instead of a 12x12 one, PSD
//! and never softer than the exact term.
//!
//! The edge-based `Ω` depends on the mesh: on a cylinder of radius `R`
//! meshed by rectangles along its axis, each cut by one diagonal, only the
//! axis-parallel edges bend and the energy is `3 × ½ B A / R²`, three
//! times the continuum plate's (tests/hinge.rs). Calibrating `B` to a
//! mesh is the shell model's business, not the element's.
//!
//! The strain's gradient and Hessian are evaluated exactly by second-order
//! forward differentiation (a value, gradient and Hessian carried through
//! each operation) of an equivalent form in the edge vectors ([`angle`]),
//! and checked against finite differences in tests/hinge.rs.

use crate::element::{
    Dissipation, ElementEval, Hessian, Measure, Strain, dissipation_first_order, elastic,
    elastic_projected_first_order, project_psd,
};
use nalgebra::{SMatrix, SVector, Vector3};

/// Coordinates of a hinge: four vertices, 3 each.
pub const DOFS: usize = 12;

type Vec12 = SVector<f64, DOFS>;
type Mat12 = SMatrix<f64, DOFS, DOFS>;

type Vec9 = SVector<f64, 9>;
type Mat9 = SMatrix<f64, 9, 9>;

/// A scalar with its gradient and Hessian over the 9 edge coordinates
/// `z = (e, a, b)`, `e = x₁ - x₀`, `a = x₂ - x₀`, `b = x₃ - x₀` (the angle
/// is translation invariant, so it is a function of these).
#[derive(Clone, Copy)]
struct Jet {
    v: f64,
    g: Vec9,
    h: Mat9,
}

impl Jet {
    /// `z_u · z_w` for the 3-vector blocks `u`, `w` of `z` (0 = e, 1 = a,
    /// 2 = b): gradient `z_w` in block `u` and `z_u` in block `w`,
    /// Hessian `I` in blocks `(u, w)` and `(w, u)`.
    fn dot(z: &Vec9, u: usize, w: usize) -> Jet {
        let (zu, zw) = (z.fixed_rows::<3>(3 * u), z.fixed_rows::<3>(3 * w));
        let mut g = Vec9::zeros();
        let mut h = Mat9::zeros();
        for k in 0..3 {
            g[3 * u + k] += zw[k];
            g[3 * w + k] += zu[k];
            h[(3 * u + k, 3 * w + k)] += 1.0;
            h[(3 * w + k, 3 * u + k)] += 1.0;
        }
        Jet {
            v: zu.dot(&zw),
            g,
            h,
        }
    }

    /// The triple product `T = e · (a × b)`: gradient `(a × b, b × e,
    /// e × a)`, Hessian blocks `∂²T/∂e∂a = -[b]×`, `∂²T/∂e∂b = [a]×`,
    /// `∂²T/∂a∂b = -[e]×` and their transposes.
    fn triple(z: &Vec9) -> Jet {
        let blk = |u: usize| Vector3::new(z[3 * u], z[3 * u + 1], z[3 * u + 2]);
        let (e, a, b) = (blk(0), blk(1), blk(2));
        let mut g = Vec9::zeros();
        g.fixed_rows_mut::<3>(0).copy_from(&a.cross(&b));
        g.fixed_rows_mut::<3>(3).copy_from(&b.cross(&e));
        g.fixed_rows_mut::<3>(6).copy_from(&e.cross(&a));
        let mut h = Mat9::zeros();
        for (u, w, m) in [
            (0, 1, -b.cross_matrix()),
            (0, 2, a.cross_matrix()),
            (1, 2, -e.cross_matrix()),
        ] {
            h.fixed_view_mut::<3, 3>(3 * u, 3 * w).copy_from(&m);
            h.fixed_view_mut::<3, 3>(3 * w, 3 * u)
                .copy_from(&m.transpose());
        }
        Jet {
            v: e.dot(&a.cross(&b)),
            g,
            h,
        }
    }

    /// `f(a)` with `f' = fa`, `f'' = faa` at `a`.
    fn chain1(&self, f: f64, fa: f64, faa: f64) -> Jet {
        Jet {
            v: f,
            g: self.g * fa,
            h: self.h * fa + self.g * self.g.transpose() * faa,
        }
    }

    /// `f(a, b)` with its first and second partial derivatives at `(a, b)`.
    #[allow(clippy::too_many_arguments)]
    fn chain2(a: &Jet, b: &Jet, f: f64, fa: f64, fb: f64, faa: f64, fab: f64, fbb: f64) -> Jet {
        let gab = a.g * b.g.transpose();
        Jet {
            v: f,
            g: a.g * fa + b.g * fb,
            h: a.h * fa
                + b.h * fb
                + a.g * a.g.transpose() * faa
                + (gab + gab.transpose()) * fab
                + b.g * b.g.transpose() * fbb,
        }
    }

    fn mul(&self, o: &Jet) -> Jet {
        Jet::chain2(self, o, self.v * o.v, o.v, self.v, 0.0, 1.0, 0.0)
    }

    /// `self · o - p · r`.
    fn mul_sub(&self, o: &Jet, p: &Jet, r: &Jet) -> Jet {
        let (x, y) = (self.mul(o), p.mul(r));
        Jet {
            v: x.v - y.v,
            g: x.g - y.g,
            h: x.h - y.h,
        }
    }

    fn sqrt(&self) -> Jet {
        let r = self.v.sqrt();
        self.chain1(r, 0.5 / r, -0.25 / (r * r * r))
    }

    /// `atan2(self, x)`: `∂/∂y = x/r²`, `∂/∂x = -y/r²`, `∂²/∂y² = -2xy/r⁴`,
    /// `∂²/∂x² = 2xy/r⁴`, `∂²/∂x∂y = (y² - x²)/r⁴`.
    fn atan2(&self, x: &Jet) -> Jet {
        let (y, xv) = (self.v, x.v);
        let r2 = y * y + xv * xv;
        let r4 = r2 * r2;
        Jet::chain2(
            self,
            x,
            y.atan2(xv),
            xv / r2,
            -y / r2,
            -2.0 * xv * y / r4,
            (y * y - xv * xv) / r4,
            2.0 * xv * y / r4,
        )
    }
}

/// The bending angle `θ` (rad) of the hinge `q` with its gradient (12) and
/// Hessian (12 x 12), module docs. Non-finite for a degenerate triangle
/// (zero normal) or a zero edge.
///
/// With `a = x₂ - x₀`, `b = x₃ - x₀`, the identities
/// `(n_A × n_B)·e = -|e|² e·(a × b)` and (Binet-Cauchy)
/// `n_A·n_B = (e·b)(a·e) - |e|² (a·b)` give
/// `θ = atan2(-|e| e·(a × b), (e·b)(e·a) - |e|² (a·b))`: five scalars
/// whose derivatives in `z = (e, a, b)` are closed forms, four jet
/// operations, and the linear map `z = P q` to the 12 coordinates.
pub fn angle(q: &Vec12) -> Strain<1, DOFS> {
    let th = angle_jet(q);
    Strain {
        value: SVector::from([th.v]),
        jacobian: to_q_gradient(&th.g).transpose(),
        hessians: [to_q_hessian(&th.h)],
    }
}

/// The bending angle of `q` as a jet over the edge coordinates
/// `z = (e, a, b)` ([`angle`]).
fn angle_jet(q: &Vec12) -> Jet {
    let p = |i: usize| Vector3::new(q[3 * i], q[3 * i + 1], q[3 * i + 2]);
    let mut z = Vec9::zeros();
    for k in 0..3 {
        z.fixed_rows_mut::<3>(3 * k).copy_from(&(p(k + 1) - p(0)));
    }
    let ee = Jet::dot(&z, 0, 0);
    let (ea, eb, ab) = (Jet::dot(&z, 0, 1), Jet::dot(&z, 0, 2), Jet::dot(&z, 1, 2));
    let len = ee.sqrt();
    let t = Jet::triple(&z);
    let s = len.mul(&t).chain1(-len.v * t.v, -1.0, 0.0);
    let c = eb.mul_sub(&ea, &ee, &ab);
    s.atan2(&c)
}

/// The coefficient of vertex `vtx`'s position in the edge block `blk` of
/// `z = P q`: `x₁, x₂, x₃` give the `e, a, b` blocks, `x₀` minus their sum.
fn z_coefficient(vtx: usize, blk: usize) -> f64 {
    if vtx == 0 {
        -1.0
    } else if vtx == blk + 1 {
        1.0
    } else {
        0.0
    }
}

/// `Pᵀ g`: a gradient over `z` (shape 9) as one over `q` (shape 12).
fn to_q_gradient(gz: &Vec9) -> Vec12 {
    let mut g = Vec12::zeros();
    for v in 0..4 {
        for u in 0..3 {
            let cv = z_coefficient(v, u);
            if cv != 0.0 {
                for k in 0..3 {
                    g[3 * v + k] += cv * gz[3 * u + k];
                }
            }
        }
    }
    g
}

/// `Pᵀ H P`: a Hessian over `z` (9x9) as one over `q` (12x12).
fn to_q_hessian(hz: &Mat9) -> Mat12 {
    let mut h = Mat12::zeros();
    for v in 0..4 {
        for u in 0..3 {
            let cv = z_coefficient(v, u);
            if cv == 0.0 {
                continue;
            }
            for w in 0..4 {
                for x in 0..3 {
                    let cw = z_coefficient(w, x);
                    if cw == 0.0 {
                        continue;
                    }
                    let blk = hz.fixed_view::<3, 3>(3 * u, 3 * x) * (cv * cw);
                    let mut dst = h.fixed_view_mut::<3, 3>(3 * v, 3 * w);
                    dst += blk;
                }
            }
        }
    }
    h
}

/// The PSD clamp of a stress-weighted angle Hessian `σ ∇²θ` (`σ` the
/// strain or its rate), projected over the edge coordinates:
/// `Pᵀ (σ ∇²_z θ)⁺ P`, a 9x9 eigenproblem instead of a 12x12 one. It is
/// PSD and never softer than the exact term, since
/// `Pᵀ (σ∇²_zθ)⁺ P - σ∇²θ = Pᵀ ((σ∇²_zθ)⁺ - σ∇²_zθ) P ⪰ 0`, and equals it
/// where `σ ∇²_z θ` is PSD [SBO18 §3.4].
fn clamped(hz: &Mat9, sigma: f64) -> Mat12 {
    to_q_hessian(&project_psd(&(hz * sigma)))
}

/// Plain-`f64` bending angle (rad) of `q`, as [`angle`] without
/// derivatives.
pub fn angle_value(q: &Vec12) -> f64 {
    let p = |i: usize| Vector3::new(q[3 * i], q[3 * i + 1], q[3 * i + 2]);
    let e = p(1) - p(0);
    let n_a = e.cross(&(p(2) - p(0)));
    let n_b = (p(3) - p(0)).cross(&e);
    (n_a.cross(&n_b).dot(&e) / e.norm()).atan2(n_a.dot(&n_b))
}

/// Why a hinge cannot be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum HingeError {
    /// A rest triangle with an area not above 1e-14 m², a rest edge not
    /// above 1e-9 m, or a non-finite rest coordinate.
    #[error(
        "degenerate rest hinge: edge {edge} m, triangle areas {area_a} and {area_b} m² \
         (expected an edge above 1e-9 m and areas above 1e-14 m²)"
    )]
    Degenerate {
        /// Rest edge length (m).
        edge: f64,
        /// Rest area of `(x₀, x₁, x₂)` (m²).
        area_a: f64,
        /// Rest area of `(x₁, x₀, x₃)` (m²).
        area_b: f64,
    },
    /// The bending rigidity must be finite and non-negative.
    #[error("bending rigidity {0} N·m: expected a finite value >= 0")]
    Rigidity(f64),
}

/// One hinge with its rest state: bending rigidity `B` (N·m), rest angle
/// `θ̄` (rad) and measure `Ω` (dimensionless), module docs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hinge {
    rigidity: f64,
    rest_angle: f64,
    measure: f64,
}

impl Hinge {
    /// The hinge whose rest vertices are `rest` (`x₀, x₁` the edge, `x₂`
    /// and `x₃` the opposite vertices; m), with bending rigidity
    /// `rigidity` (N·m). The rest angle is the rest geometry's (0 for a
    /// flat rest shape).
    ///
    /// # Errors
    /// [`HingeError::Degenerate`], [`HingeError::Rigidity`].
    pub fn new(rest: [[f64; 3]; 4], rigidity: f64) -> Result<Self, HingeError> {
        if !(rigidity.is_finite() && rigidity >= 0.0) {
            return Err(HingeError::Rigidity(rigidity));
        }
        let p = rest.map(Vector3::from);
        let e = p[1] - p[0];
        let area_a = 0.5 * e.cross(&(p[2] - p[0])).norm();
        let area_b = 0.5 * (p[3] - p[0]).cross(&e).norm();
        let edge = e.norm();
        if !(edge > 1e-9 && area_a > 1e-14 && area_b > 1e-14) {
            return Err(HingeError::Degenerate {
                edge,
                area_a,
                area_b,
            });
        }
        let q = Vec12::from_iterator(rest.iter().flatten().copied());
        Ok(Hinge {
            rigidity,
            rest_angle: angle_value(&q),
            measure: 3.0 * edge * edge / (area_a + area_b),
        })
    }

    /// Bending rigidity `B` (N·m).
    pub fn rigidity(&self) -> f64 {
        self.rigidity
    }

    /// Rest angle `θ̄` (rad).
    pub fn rest_angle(&self) -> f64 {
        self.rest_angle
    }

    /// Measure `Ω = 3 |ē|² / (Ā_A + Ā_B)` (dimensionless).
    pub fn measure(&self) -> f64 {
        self.measure
    }

    /// The strain `ε = θ - θ̄` (rad) with its derivatives.
    pub fn strain(&self, q: &Vec12) -> Strain<1, DOFS> {
        let mut s = angle(q);
        s.value[0] -= self.rest_angle;
        s
    }

    /// Energy (J), gradient (N) and exact Hessian (N/m) at `q` (m).
    pub fn elastic(&self, q: &Vec12) -> ElementEval<DOFS> {
        elastic(
            self.rigidity,
            &self.strain(q),
            &Measure::constant(self.measure),
        )
    }

    /// As [`Hinge::elastic`] with the Hessian's stress-weighted strain
    /// Hessian `ε ∇²θ` projected to PSD over the edge coordinates (a PSD
    /// Hessian for the Newton matrix, never softer than the exact one;
    /// see [`crate::elastic_projected`]).
    pub fn elastic_projected(&self, q: &Vec12) -> ElementEval<DOFS> {
        self.elastic_and_dissipation(0.0, q, &Vec12::zeros(), Hessian::Projected, false)
            .0
    }

    /// Strain-rate dissipation of the bending angle, `W = ½ Ω k_d θ̇²` (W),
    /// at positions `q` (m) and velocities `qdot` (m/s), with the damping
    /// coefficient `k_d` (N·m·s; the Rayleigh analogy [SBO18 eq. 12] is
    /// `k_d = β B`): force (N), velocity Jacobian (N·s/m) and the clamped
    /// position Jacobian (N/m) of [`crate::dissipation`] [SBO18 eq. 9, §3.4],
    /// clamped over the edge coordinates (module docs).
    pub fn dissipation(&self, k_d: f64, q: &Vec12, qdot: &Vec12) -> Dissipation<1, DOFS> {
        let th = angle_jet(q);
        let jacobian = to_q_gradient(&th.g).transpose();
        let m = Measure::constant(self.measure);
        dissipation_first_order(k_d, &jacobian, &m, qdot, true, |rate| {
            clamped(&th.h, rate[0])
        })
    }

    /// [`Hinge::elastic`] ([`Hessian::Exact`]) or [`Hinge::elastic_projected`]
    /// ([`Hessian::Projected`]) and, for `k_d > 0`, [`Hinge::dissipation`]
    /// from one angle evaluation, as the assembler needs both per hinge and
    /// Newton iteration; without `position_jacobian` the dissipation's
    /// position Jacobian is left zero (its eigenproblem skipped).
    /// [`Hessian::Skip`] skips both eigenproblems: the same energy,
    /// gradient, dissipative force and potential, bit for bit, with Hessian
    /// and Jacobians not to be used. Units as in the parts.
    pub fn elastic_and_dissipation(
        &self,
        k_d: f64,
        q: &Vec12,
        qdot: &Vec12,
        hessian: Hessian,
        position_jacobian: bool,
    ) -> (ElementEval<DOFS>, Option<Dissipation<1, DOFS>>) {
        let th = angle_jet(q);
        let value = SVector::from([th.v - self.rest_angle]);
        let jacobian = to_q_gradient(&th.g).transpose();
        let m = Measure::constant(self.measure);
        let k = self.rigidity;
        let ev = match hessian {
            Hessian::Exact => {
                let s = Strain {
                    value,
                    jacobian,
                    hessians: [to_q_hessian(&th.h)],
                };
                elastic(k, &s, &m)
            }
            Hessian::Projected => {
                elastic_projected_first_order(k, &value, &jacobian, &m, |e| clamped(&th.h, e[0]))
            }
            Hessian::Skip => {
                elastic_projected_first_order(k, &value, &jacobian, &m, |_| Mat12::zeros())
            }
        };
        let pj = position_jacobian && hessian != Hessian::Skip;
        let d = (k_d > 0.0).then(|| {
            dissipation_first_order(k_d, &jacobian, &m, qdot, pj, |rate| clamped(&th.h, rate[0]))
        });
        (ev, d)
    }
}
