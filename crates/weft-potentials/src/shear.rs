//! Crossing shear [SBO17 eq. 22-23, §5.3; CLMMO14], with shear jamming.
//!
//! One element per crossing and per adjacent (warp neighbour, weft neighbour)
//! pair, so an interior crossing carries four of them.
//!
//! # Coordinates
//!
//! Element coordinates (shape [`DOFS`] = 9, node-major):
//! `q = [x_0 (3), x_a (3), x_b (3)]` in m, where `x_0` is the crossing,
//! `x_a` a neighbour node on its warp yarn and `x_b` a neighbour node on its
//! weft yarn. The tangents are the chord directions `e_a = x_a - x_0`
//! (warp) and `e_b = x_b - x_0` (weft). They do not depend on the
//! arc-length coordinates `u, v` of any of the three nodes, so **the
//! derivatives of the shear strain and energy w.r.t. `u, v` are identically
//! zero** and are not part of the element: the caller scatters the 9x9
//! blocks onto the `x` slots of the three nodes only. In particular pure
//! sliding of the yarns through the crossings (`ẋ = 0`, `u̇, v̇ ≠ 0`) is in the
//! null space of every shear strain by construction (good damping,
//! [SBO18 eq. 1]).
//!
//! # Strains
//!
//! * Scalar strain ([`scalar_strain`]): `ε = φ - π/2`, `φ ∈ (0, π)` the angle
//!   between `e_a` and `e_b`, computed as `φ = atan2(|e_a × e_b|, e_a·e_b)`
//!   (never `acos`) [SBO17 eq. 22-23, CLMMO14]. Dimensionless.
//! * Small-angle vector strain ([`small_angle_strain`], DESIGN §2 by analogy
//!   with [SBO17 eq. 19], §5.3): with unit tangents `a, b`,
//!   `s = (a × b)(a·b) / |a × b|²`, shape 3, `|s| = |cot φ| = tan|φ - π/2|`,
//!   and in fact `s = -n̂ tan ε` with `n̂ = (a × b)/|a × b|` the fabric normal.
//!   `s` is invariant to the lengths of `e_a, e_b`, so it equals
//!   `(e_a × e_b)(e_a·e_b)/|e_a × e_b|²`, which is what is differentiated.
//!
//! Unlike bending, the scalar shear strain *is* smooth at zero shear (its
//! singularities are at `φ = 0, π`, two collapsed yarns, which jamming keeps
//! far away), so both strains have a well-defined gradient at `ε = 0`; there
//! they even give the same gradient and the same damping force. The vector
//! strain is used below [`SMALL_ANGLE_THRESHOLD`] as DESIGN §2 prescribes; see
//! [`select_strain`]. Its elastic energy `½ Ω k tan² ε` agrees with
//! `½ Ω k ε²` to `O(ε⁴)`: at the 5° threshold the elastic force jumps by the
//! factor `tan ψ sec² ψ / ψ = 1.0102` (1.02 %).
//!
//! Within a backward-Euler step the assembler holds the strain chosen at
//! the step's start ([`Shear::over_step`], [`step_threshold`]) while the
//! iterate's angle stays within `[θ_t/2, 2θ_t]`, as bending does
//! ([`crate::bending::step_threshold`]), so the residual Newton solves
//! does not jump where an iterate crosses the threshold.
//!
//! Spurious rotation damping of the vector strain (DESIGN §3): `s = -n̂ tan ε`
//! rotates with the fabric normal, so a rigid rotation with angular velocity
//! `ω` gives `ṡ = -(ω × n̂) tan ε`, `|ṡ| ≤ |ω| tan|ε| < |ω| tan(threshold)`,
//! while a genuine shear rate of the same angular speed gives
//! `|ṡ| = |ω| sec² ε ≥ |ω|`. The spurious part vanishes at zero shear and is
//! below `tan 5° = 8.7 %` relative. The scalar strain is exactly
//! rotation-invariant.
//!
//! # Energy
//!
//! Measure `Ω = L`, the rest spacing of adjacent yarns (m), a constant
//! ([`measure`], zero gradient); stiffness `k_x` (N); `V = ½ L k_x |ε|²` (J).
//! With shear jamming ([`Jamming`]) the energy above the small-angle threshold
//! is `V = L k_x Φ(ε)`, `Φ(ε) = ½ε² + J(|ε|)`, see [`Jamming`] and
//! [`elastic_profile`]. Jamming modifies only the elastic energy, never the
//! dissipation `W = ½ L k_d |ε̇|²` [SBO17 eq. 6].
//!
//! # Evaluation
//!
//! The strains depend on `q` only through `y = (e_a, e_b) = P q` (shape 6).
//! [`Shear::elastic`] and [`Shear::dissipation`] work in `y` and map the
//! results back exactly (`∇_q = Pᵀ∇_y`, `∇²_q = Pᵀ∇²_y P`); the public strain
//! functions return the 9-coordinate strains for checks and other callers.

use crate::element::{
    Dissipation, DissipationTerms, ElementEval, Hessian, Measure, Strain,
    dissipation_with_jacobian as generic_dissipation, elastic, elastic_projected,
    elastic_projected_generic, project_psd,
};
use nalgebra::{Matrix3, SMatrix, SVector, Vector3};
use std::f64::consts::FRAC_PI_2;
use std::fmt;

/// Number of generalised coordinates of a shear element (positions only).
pub const DOFS: usize = 9;

/// Default threshold on `|φ - π/2|` below which the small-angle vector strain
/// is used: 5° in radians (DESIGN §2).
pub const SMALL_ANGLE_THRESHOLD: f64 = 5.0 * std::f64::consts::PI / 180.0;

/// Default jamming onset as a fraction of the locking angle:
/// `ψ_on = 0.5 ψ_lock` (a modelling choice; DESIGN §2 leaves it open).
pub const DEFAULT_ONSET_FRACTION: f64 = 0.5;

/// Default jamming gain `γ`: the shear stiffness at the locking angle is
/// `(1 + γ) k_x` (a modelling choice; DESIGN §2 leaves it open).
pub const DEFAULT_JAMMING_GAIN: f64 = 100.0;

type Vec6 = SVector<f64, 6>;
type Mat6 = SMatrix<f64, 6, 6>;

/// Shared reduced quantities of the two tangents `y = (e_a, e_b) ∈ R⁶`.
struct Reduced {
    ea: Vector3<f64>,
    eb: Vector3<f64>,
    /// `c = e_a·e_b`.
    c: f64,
    /// `n = e_a × e_b`.
    n: Vector3<f64>,
    /// `S² = |n|²`.
    s2: f64,
    /// `∂c/∂y = [e_b; e_a]`.
    dc: Vec6,
    /// `∂S²/∂y`.
    ds2: Vec6,
}

impl Reduced {
    fn new(q: &SVector<f64, DOFS>) -> Self {
        let x0 = Vector3::new(q[0], q[1], q[2]);
        let ea = Vector3::new(q[3], q[4], q[5]) - x0;
        let eb = Vector3::new(q[6], q[7], q[8]) - x0;
        let c = ea.dot(&eb);
        let n = ea.cross(&eb);
        let s2 = n.norm_squared();
        let (la2, lb2) = (ea.norm_squared(), eb.norm_squared());
        let mut dc = Vec6::zeros();
        let mut ds2 = Vec6::zeros();
        for i in 0..3 {
            dc[i] = eb[i];
            dc[3 + i] = ea[i];
            ds2[i] = 2.0 * lb2 * ea[i] - 2.0 * c * eb[i];
            ds2[3 + i] = 2.0 * la2 * eb[i] - 2.0 * c * ea[i];
        }
        Self {
            ea,
            eb,
            c,
            n,
            s2,
            dc,
            ds2,
        }
    }

    /// `∂²c/∂y² = [[0, I], [I, 0]]`.
    fn hc() -> Mat6 {
        let mut h = Mat6::zeros();
        for i in 0..3 {
            h[(i, 3 + i)] = 1.0;
            h[(3 + i, i)] = 1.0;
        }
        h
    }

    /// `∂²S²/∂y²`: blocks `aa = 2|e_b|² I - 2 e_b e_bᵀ`,
    /// `bb = 2|e_a|² I - 2 e_a e_aᵀ`, `ab = 4 e_a e_bᵀ - 2 e_b e_aᵀ - 2c I`.
    fn hs2(&self) -> Mat6 {
        let (ea, eb, c) = (&self.ea, &self.eb, self.c);
        let i3 = Matrix3::identity();
        let aa = i3 * (2.0 * eb.norm_squared()) - eb * eb.transpose() * 2.0;
        let bb = i3 * (2.0 * ea.norm_squared()) - ea * ea.transpose() * 2.0;
        let ab = ea * eb.transpose() * 4.0 - eb * ea.transpose() * 2.0 - i3 * (2.0 * c);
        let mut h = Mat6::zeros();
        h.fixed_view_mut::<3, 3>(0, 0).copy_from(&aa);
        h.fixed_view_mut::<3, 3>(3, 3).copy_from(&bb);
        h.fixed_view_mut::<3, 3>(0, 3).copy_from(&ab);
        h.fixed_view_mut::<3, 3>(3, 0).copy_from(&ab.transpose());
        h
    }
}

/// `ẏ = P q̇`: reduced velocities `(ė_a, ė_b)` from `q̇` (shape 9 → 6).
fn reduce(qdot: &SVector<f64, DOFS>) -> Vec6 {
    let mut y = Vec6::zeros();
    for i in 0..3 {
        y[i] = qdot[3 + i] - qdot[i];
        y[3 + i] = qdot[6 + i] - qdot[i];
    }
    y
}

/// `Pᵀ g`: a reduced gradient (shape 6) as a gradient w.r.t. `q` (shape 9),
/// `e_a = x_a - x_0`, `e_b = x_b - x_0`.
fn scatter_vector(g: &Vec6) -> SVector<f64, DOFS> {
    let mut out = SVector::<f64, DOFS>::zeros();
    for i in 0..3 {
        out[i] = -g[i] - g[3 + i];
        out[3 + i] = g[i];
        out[6 + i] = g[3 + i];
    }
    out
}

/// `Pᵀ H P`: a reduced Hessian (6x6) as a Hessian w.r.t. `q` (9x9). With
/// the blocks `H_aa, H_ab, H_ba, H_bb`: node blocks `(a, a) = H_aa`,
/// `(a, b) = H_ab`, `(0, a) = -(H_aa + H_ba)`, `(0, b) = -(H_ab + H_bb)`,
/// `(0, 0) = H_aa + H_ab + H_ba + H_bb`, and the transposes.
fn scatter_matrix(h: &Mat6) -> SMatrix<f64, DOFS, DOFS> {
    let mut out = SMatrix::<f64, DOFS, DOFS>::zeros();
    for i in 0..3 {
        for j in 0..3 {
            let (aa, ab) = (h[(i, j)], h[(i, 3 + j)]);
            let (ba, bb) = (h[(3 + i, j)], h[(3 + i, 3 + j)]);
            out[(3 + i, 3 + j)] = aa;
            out[(3 + i, 6 + j)] = ab;
            out[(6 + i, 3 + j)] = ba;
            out[(6 + i, 6 + j)] = bb;
            out[(i, 3 + j)] = -(aa + ba);
            out[(i, 6 + j)] = -(ab + bb);
            out[(3 + i, j)] = -(aa + ab);
            out[(6 + i, j)] = -(ba + bb);
            out[(i, j)] = aa + ab + ba + bb;
        }
    }
    out
}

fn scatter_strain<const M: usize>(s: &Strain<M, 6>) -> Strain<M, DOFS> {
    let mut jacobian = SMatrix::<f64, M, DOFS>::zeros();
    let mut hessians = [SMatrix::<f64, DOFS, DOFS>::zeros(); M];
    for (i, h) in hessians.iter_mut().enumerate() {
        let g: Vec6 = s.jacobian.row(i).transpose();
        jacobian.set_row(i, &scatter_vector(&g).transpose());
        *h = scatter_matrix(&s.hessians[i]);
    }
    Strain {
        value: s.value,
        jacobian,
        hessians,
    }
}

fn scatter_eval(e: &ElementEval<6>) -> ElementEval<DOFS> {
    ElementEval {
        energy: e.energy,
        gradient: scatter_vector(&e.gradient),
        hessian: scatter_matrix(&e.hessian),
    }
}

fn scatter_dissipation<const M: usize>(d: &Dissipation<M, 6>) -> Dissipation<M, DOFS> {
    Dissipation {
        strain_rate: d.strain_rate,
        potential: d.potential,
        force: scatter_vector(&d.force),
        velocity_jacobian: scatter_matrix(&d.velocity_jacobian),
        position_jacobian: scatter_matrix(&d.position_jacobian),
    }
}

/// The scalar shear angle `ε = φ - π/2` (rad), `φ = atan2(|e_a × e_b|, e_a·e_b)`
/// [SBO17 eq. 22]. Positive when the yarns open beyond a right angle.
/// `q` shape 9 (module docs).
pub fn shear_angle(q: &SVector<f64, DOFS>) -> f64 {
    Reduced::new(q).angle()
}

impl Reduced {
    fn angle(&self) -> f64 {
        self.s2.sqrt().atan2(self.c) - FRAC_PI_2
    }

    /// Value and gradient of the scalar strain w.r.t. `(e_a, e_b)`, with
    /// `S` and `∇S` (the first-order part of [`Reduced::scalar`]).
    fn scalar_first_order(&self) -> (f64, Vec6, f64, Vec6) {
        let s = self.s2.sqrt();
        let c = self.c;
        let rho = self.s2 + c * c;
        let ds = self.ds2 / (2.0 * s);
        let g = (ds * c - self.dc * s) / rho;
        (s.atan2(c) - FRAC_PI_2, g, s, ds)
    }

    /// Scalar strain w.r.t. the reduced variables `(e_a, e_b)`.
    fn scalar(&self) -> Strain<1, 6> {
        let (value, g, s, ds) = self.scalar_first_order();
        let c = self.c;
        let rho = self.s2 + c * c;
        let hs = (self.hs2() * 0.5 - ds * ds.transpose()) / s;
        let a = self.dc * ds.transpose();
        let h = (hs * c - Self::hc() * s + (a + a.transpose()) * ((self.s2 - c * c) / rho)
            - (ds * ds.transpose() - self.dc * self.dc.transpose()) * (2.0 * c * s / rho))
            / rho;
        Strain {
            value: SVector::from([value]),
            jacobian: g.transpose(),
            hessians: [h],
        }
    }

    /// Value (3) and Jacobian (3 x 6) of the small-angle vector strain
    /// w.r.t. `(e_a, e_b)`, with `f = c/S²`, `∇f` and `∂n/∂y` (the
    /// first-order part of [`Reduced::small_angle`]).
    fn small_angle_first_order(&self) -> SmallAngleFirstOrder {
        let (c, s2) = (self.c, self.s2);
        let f = c / s2;
        let s4 = s2 * s2;
        let df = self.dc / s2 - self.ds2 * (c / s4);
        // ∂n/∂y = [-[e_b]×, [e_a]×], shape 3x6.
        let mut jn = SMatrix::<f64, 3, 6>::zeros();
        jn.fixed_view_mut::<3, 3>(0, 0)
            .copy_from(&(-self.eb.cross_matrix()));
        jn.fixed_view_mut::<3, 3>(0, 3)
            .copy_from(&self.ea.cross_matrix());
        let jacobian = jn * f + self.n * df.transpose();
        SmallAngleFirstOrder {
            value: self.n * f,
            jacobian,
            f,
            df,
            jn,
        }
    }

    /// Small-angle vector strain w.r.t. the reduced variables `(e_a, e_b)`.
    fn small_angle(&self) -> Strain<3, 6> {
        let (c, s2) = (self.c, self.s2);
        let s4 = s2 * s2;
        let SmallAngleFirstOrder {
            value,
            jacobian,
            f,
            df,
            jn,
        } = self.small_angle_first_order();
        let hf = Self::hc() / s2
            - (self.dc * self.ds2.transpose() + self.ds2 * self.dc.transpose()) / s4
            - self.hs2() * (c / s4)
            + self.ds2 * self.ds2.transpose() * (2.0 * c / (s4 * s2));
        let mut hessians = [Mat6::zeros(); 3];
        for (i, h) in hessians.iter_mut().enumerate() {
            let jni: Vec6 = jn.row(i).transpose();
            *h = df * jni.transpose() + jni * df.transpose() + hf * self.n[i];
            // f ∂²n_i: ab block entries ε_ijk (and the transpose in ba).
            for j in 0..3 {
                for k in 0..3 {
                    let e = levi_civita(i, j, k);
                    if e != 0.0 {
                        h[(j, 3 + k)] += f * e;
                        h[(3 + k, j)] += f * e;
                    }
                }
            }
        }
        Strain {
            value,
            jacobian,
            hessians,
        }
    }
}

/// The first-order part of the small-angle vector strain
/// ([`Reduced::small_angle_first_order`]).
struct SmallAngleFirstOrder {
    value: Vector3<f64>,
    jacobian: SMatrix<f64, 3, 6>,
    /// `f = c/S²`.
    f: f64,
    /// `∇f`, shape 6.
    df: Vec6,
    /// `∂n/∂y`, shape 3 x 6.
    jn: SMatrix<f64, 3, 6>,
}

/// Scalar shear strain `ε = φ - π/2` with its exact Jacobian (1x9) and Hessian
/// (9x9) w.r.t. `q` [SBO17 eq. 22-23, CLMMO14].
///
/// With `c = e_a·e_b`, `S = |e_a × e_b|`, `ρ = S² + c² = |e_a|²|e_b|²`:
/// `∇φ = (c ∇S - S ∇c)/ρ` and
/// `∇²φ = [c ∇²S - S ∇²c + (S² - c²)/ρ (∇c∇Sᵀ + ∇S∇cᵀ)
///        - 2cS/ρ (∇S∇Sᵀ - ∇c∇cᵀ)] / ρ`,
/// computed w.r.t. `y = (e_a, e_b)` and mapped to `q` by `y = P q`
/// (`∇_q = Pᵀ∇_y`, `∇²_q = Pᵀ∇²_y P`).
///
/// Requires non-degenerate tangents, `e_a, e_b ≠ 0` and not parallel
/// (`φ ∈ (0, π)`); the result is non-finite otherwise. At zero shear the
/// gradient is well defined (`∇_{e_a} φ = -e_b/(|e_a||e_b|)`).
pub fn scalar_strain(q: &SVector<f64, DOFS>) -> Strain<1, DOFS> {
    scatter_strain(&Reduced::new(q).scalar())
}

/// Small-angle vector shear strain `s = (a × b)(a·b)/|a × b|²` (shape 3,
/// dimensionless) with its Jacobian (3x9) and Hessians (3 of 9x9) w.r.t. `q`
/// (DESIGN §2, [SBO17 §5.3] by analogy with [SBO17 eq. 19]).
///
/// `|s| = |cot φ| = tan|φ - π/2|`; `s = -n̂ tan ε`. Written as `s = f n` with
/// `n = e_a × e_b`, `f = c/S²`:
/// `∇s_i = f ∇n_i + n_i ∇f`,
/// `∇²s_i = f ∇²n_i + ∇f ∇n_iᵀ + ∇n_i ∇fᵀ + n_i ∇²f`, where `∇n_i` is
/// bilinear (`∂²n_i/∂e_a_j ∂e_b_k = ε_ijk`) and
/// `∇²f = ∇²c/S² - (∇c∇S²ᵀ + ∇S²∇cᵀ)/S⁴ - c∇²S²/S⁴ + 2c ∇S²∇S²ᵀ/S⁶`
/// (w.r.t. `y = (e_a, e_b)`, mapped to `q` as in [`scalar_strain`]).
///
/// Requires `e_a × e_b ≠ 0` (non-finite otherwise). Well defined and smooth at
/// zero shear, where `∇s = n̂ ∇cᵀ/S`.
pub fn small_angle_strain(q: &SVector<f64, DOFS>) -> Strain<3, DOFS> {
    scatter_strain(&Reduced::new(q).small_angle())
}

fn levi_civita(i: usize, j: usize, k: usize) -> f64 {
    match (i, j, k) {
        (0, 1, 2) | (1, 2, 0) | (2, 0, 1) => 1.0,
        (0, 2, 1) | (2, 1, 0) | (1, 0, 2) => -1.0,
        _ => 0.0,
    }
}

/// Measure `Ω = L` (m), the rest spacing of adjacent yarns, a constant:
/// zero gradient [SBO17 eq. 23].
pub fn measure(spacing: f64) -> Measure<DOFS> {
    Measure::constant(spacing)
}

/// The switch angle (rad) that keeps, over one backward-Euler step, the
/// shear strain chosen at the step's start `q_n` (shape 9, m), as
/// [`crate::bending::step_threshold`] does for bending: on the vector
/// strain at `q_n` (`|ε(q_n)| < θ_t`) it is `min(2 θ_t, (θ_t + π/2)/2)`,
/// and no more than the jamming onset (jamming acts on the scalar strain
/// only, so the vector strain must stop below it); on the scalar strain
/// `θ_t / 2`. Used as [`Shear::threshold`] by [`Shear::over_step`];
/// `threshold` (rad) in `(0, π/2)`. At `q = q_n` it selects what
/// `threshold` selects.
pub fn step_threshold(q_n: &SVector<f64, DOFS>, threshold: f64, jamming: Option<&Jamming>) -> f64 {
    let small = use_small_angle(q_n, threshold);
    let t = crate::element::held_threshold(small, threshold);
    match jamming {
        Some(j) if small => t.min(j.onset),
        _ => t,
    }
}

/// The selection predicate: `true` when `|φ - π/2| < threshold` (rad), i.e.
/// when the small-angle vector strain is to be used (DESIGN §2).
pub fn use_small_angle(q: &SVector<f64, DOFS>, threshold: f64) -> bool {
    shear_angle(q).abs() < threshold
}

/// The shear strain chosen for a configuration: the scalar angle strain or
/// the small-angle vector strain (their dimensions differ, hence the enum).
// The variants differ in size (3 Hessians against 1) but boxing would
// allocate in the per-element hot path; this is a short-lived value.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ShearStrain {
    /// `ε = φ - π/2`, used where `|ε| ≥ threshold` ([`scalar_strain`]).
    Scalar(Strain<1, DOFS>),
    /// `s = (a × b)(a·b)/|a × b|²`, used where `|ε| < threshold`
    /// ([`small_angle_strain`]).
    SmallAngle(Strain<3, DOFS>),
}

/// Selects the strain per DESIGN §2: the vector strain when
/// [`use_small_angle`]`(q, threshold)`, else the scalar strain. `threshold` in
/// rad, usually [`SMALL_ANGLE_THRESHOLD`].
pub fn select_strain(q: &SVector<f64, DOFS>, threshold: f64) -> ShearStrain {
    if use_small_angle(q, threshold) {
        ShearStrain::SmallAngle(small_angle_strain(q))
    } else {
        ShearStrain::Scalar(scalar_strain(q))
    }
}

/// Dissipation of a shear element with the strain chosen by
/// [`select_strain`] (see [`Dissipation`] for the fields).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ShearDissipation {
    /// From the scalar strain.
    Scalar(Dissipation<1, DOFS>),
    /// From the small-angle vector strain.
    SmallAngle(Dissipation<3, DOFS>),
}

impl ShearDissipation {
    /// Dissipative force `-Ω k_d ∇εᵀ ε̇` (N), shape 9 [SBO17 eq. 8].
    pub fn force(&self) -> SVector<f64, DOFS> {
        match self {
            Self::Scalar(d) => d.force,
            Self::SmallAngle(d) => d.force,
        }
    }
    /// Velocity Jacobian `-Ω k_d ∇εᵀ∇ε` (N·s/m), 9x9 [SBO17 eq. 10].
    pub fn velocity_jacobian(&self) -> SMatrix<f64, DOFS, DOFS> {
        match self {
            Self::Scalar(d) => d.velocity_jacobian,
            Self::SmallAngle(d) => d.velocity_jacobian,
        }
    }
    /// Clamped position Jacobian (N/m), 9x9, negative semi-definite
    /// [SBO17 eq. 11, SBO18 §3.4].
    pub fn position_jacobian(&self) -> SMatrix<f64, DOFS, DOFS> {
        match self {
            Self::Scalar(d) => d.position_jacobian,
            Self::SmallAngle(d) => d.position_jacobian,
        }
    }

    /// Force, Jacobians and potential, borrowed
    /// ([`crate::element::Dissipation::terms`]).
    pub fn terms(&self) -> DissipationTerms<'_, DOFS> {
        match self {
            Self::Scalar(d) => d.terms(),
            Self::SmallAngle(d) => d.terms(),
        }
    }
    /// Dissipation potential `W = ½ Ω k_d |ε̇|²` (W) [SBO17 eq. 6].
    pub fn potential(&self) -> f64 {
        match self {
            Self::Scalar(d) => d.potential,
            Self::SmallAngle(d) => d.potential,
        }
    }
}

/// Locking angle of shear jamming, `ψ_lock = π/2 - 2 asin(R/L)` (rad), with
/// `R` the yarn radius (m) and `L` the rest spacing of adjacent yarns (m)
/// (DESIGN §2, "about"; adjacent parallel yarns touch side by side).
///
/// For comparison the trellis estimate `acos(2R/L)` (perpendicular distance
/// `L cos ψ` equal to the diameter) gives 1.047 rad against 1.065 rad here at
/// `R/L = 0.25`; the two differ more as `R/L → ½`. Requires
/// `0 < R < L/√2` for a positive angle (NaN if `R > L`).
pub fn locking_angle(radius: f64, spacing: f64) -> f64 {
    FRAC_PI_2 - 2.0 * (radius / spacing).asin()
}

/// Invalid shear or jamming parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ShearParamError {
    /// The small-angle threshold must lie in `(0, π/2)`.
    Threshold(f64),
    /// Jamming needs `0 < onset < lock` (rad) and `gain ≥ 0`, all finite.
    Jamming {
        /// `ψ_on` (rad).
        onset: f64,
        /// `ψ_lock` (rad).
        lock: f64,
        /// `γ`.
        gain: f64,
    },
    /// The jamming onset must lie above the small-angle threshold so that
    /// jamming is inactive wherever the vector strain is used.
    OnsetBelowThreshold {
        /// `ψ_on` (rad).
        onset: f64,
        /// Threshold (rad).
        threshold: f64,
    },
    /// Stiffnesses and spacing must be finite, `k ≥ 0`, `k_d ≥ 0`, `L > 0`.
    Stiffness,
}

impl fmt::Display for ShearParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Threshold(t) => write!(f, "small-angle threshold {t} rad not in (0, pi/2)"),
            Self::Jamming { onset, lock, gain } => write!(
                f,
                "jamming needs 0 < onset < lock and gain >= 0, got onset {onset}, lock {lock}, gain {gain}"
            ),
            Self::OnsetBelowThreshold { onset, threshold } => write!(
                f,
                "jamming onset {onset} rad must exceed the small-angle threshold {threshold} rad"
            ),
            Self::Stiffness => write!(
                f,
                "shear stiffness, damping and spacing must be finite, k >= 0, k_d >= 0, L > 0"
            ),
        }
    }
}

impl std::error::Error for ShearParamError {}

/// Shear jamming: a smooth, convex, monotone stiffening of the shear energy in
/// the shear angle `ψ = |φ - π/2|` (DESIGN §2).
///
/// The energy density becomes `Φ(ε) = ½ε² + J(|ε|)` (so `V = Ω k_x Φ`) with
///
/// `J(ψ) = γ Δ² t⁴ / 12`, `t = (ψ - ψ_on)/Δ`, `Δ = ψ_lock - ψ_on`, for
/// `ψ > ψ_on`, and `J = 0` below the onset `ψ_on`;
///
/// hence `J'(ψ) = γ Δ t³ / 3`, `J''(ψ) = γ t²`, and the tangent shear
/// stiffness is `Φ'' = 1 + γ t²` times `k_x`: `k_x` up to the onset, rising
/// smoothly to `(1 + γ) k_x` at the locking angle and growing further
/// (quadratically in `ψ`, finite everywhere) beyond it, so a Newton step past
/// the lock stays finite and is pushed back. `J` is `C³` (`J''' = 2γt/Δ` is
/// continuous, only `J''''` jumps at the onset), `J'' ≥ 0` (convex) and
/// `J' ≥ 0` (monotone); `Φ` is an even `C³` function of `ε` because `J` vanishes near `ψ = 0`.
///
/// Parameters: `onset` `ψ_on` (rad), `lock` `ψ_lock` (rad, e.g.
/// [`locking_angle`]), `gain` `γ` (dimensionless). Defaults
/// ([`Jamming::from_geometry`]): `ψ_on = 0.5 ψ_lock`, `γ = 100`.
/// Jamming changes only the elastic energy, not the dissipation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Jamming {
    /// Onset angle `ψ_on` (rad).
    pub onset: f64,
    /// Locking angle `ψ_lock` (rad).
    pub lock: f64,
    /// Gain `γ`: the stiffness at `ψ_lock` is `(1 + γ) k_x`.
    pub gain: f64,
}

impl Jamming {
    /// Jamming with explicit parameters.
    ///
    /// # Errors
    /// [`ShearParamError::Jamming`] unless `0 < onset < lock` and `gain ≥ 0`,
    /// all finite.
    pub fn new(onset: f64, lock: f64, gain: f64) -> Result<Self, ShearParamError> {
        let ok = onset.is_finite()
            && lock.is_finite()
            && gain.is_finite()
            && onset > 0.0
            && lock > onset
            && gain >= 0.0;
        if ok {
            Ok(Self { onset, lock, gain })
        } else {
            Err(ShearParamError::Jamming { onset, lock, gain })
        }
    }

    /// Default jamming for yarn radius `R` (m) and spacing `L` (m):
    /// `ψ_lock = `[`locking_angle`]`(R, L)`,
    /// `ψ_on = `[`DEFAULT_ONSET_FRACTION`]` ψ_lock`,
    /// `γ = `[`DEFAULT_JAMMING_GAIN`].
    ///
    /// # Errors
    /// [`ShearParamError::Jamming`] when the locking angle is not positive
    /// (`R ≥ L/√2`) or not finite.
    pub fn from_geometry(radius: f64, spacing: f64) -> Result<Self, ShearParamError> {
        let lock = locking_angle(radius, spacing);
        Self::new(DEFAULT_ONSET_FRACTION * lock, lock, DEFAULT_JAMMING_GAIN)
    }

    /// `(J, J', J'')` at the shear angle `psi = ψ ≥ 0` (rad): the extra
    /// dimensionless energy density and its first two derivatives.
    pub fn extra(&self, psi: f64) -> (f64, f64, f64) {
        if psi <= self.onset {
            return (0.0, 0.0, 0.0);
        }
        let d = self.lock - self.onset;
        let t = (psi - self.onset) / d;
        let t2 = t * t;
        (
            self.gain * d * d * t2 * t2 / 12.0,
            self.gain * d * t2 * t / 3.0,
            self.gain * t2,
        )
    }

    /// `(Φ, Φ', Φ'')` at the signed strain `eps = ε` (rad):
    /// `Φ = ½ε² + J(|ε|)`, `Φ' = ε + sign(ε) J'(|ε|)`, `Φ'' = 1 + J''(|ε|)`.
    pub fn profile(&self, eps: f64) -> (f64, f64, f64) {
        let (j, dj, ddj) = self.extra(eps.abs());
        (0.5 * eps * eps + j, eps + eps.signum() * dj, 1.0 + ddj)
    }
}

/// Elastic potential `V = Ω k Φ(ε)` of a scalar strain with a general
/// profile `Φ` (generic composition, used for jamming; `Φ = ½ε²` gives
/// [`elastic`]). `profile = (Φ(ε), Φ'(ε), Φ''(ε))` at the strain's value.
///
/// `∇V = Ω k Φ' ∇ε + k Φ ∇Ω`,
/// `∇²V = Ω k (Φ'' ∇εᵀ∇ε + Φ' ∇²ε) + k Φ' (∇εᵀ∇Ωᵀ + ∇Ω∇ε)`
/// (`∇²Ω = 0`: every measure is affine). Units as in [`elastic`].
pub fn elastic_profile<const N: usize>(
    k: f64,
    strain: &Strain<1, N>,
    measure: &Measure<N>,
    profile: (f64, f64, f64),
) -> ElementEval<N> {
    let (p, dp, ddp) = profile;
    let om = measure.value;
    let je: SVector<f64, N> = strain.jacobian.transpose();
    let gradient = je * (om * k * dp) + measure.gradient * (k * p);
    let mut h = je * je.transpose() * (om * k * ddp) + strain.hessians[0] * (om * k * dp);
    let cross = je * measure.gradient.transpose() * (k * dp);
    h += cross + cross.transpose();
    ElementEval {
        energy: om * k * p,
        gradient,
        hessian: h,
    }
}

/// Parameters of a shear element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shear {
    /// Shear stiffness `k_x` (N).
    pub k: f64,
    /// Shear damping coefficient `k_d` (N·s) [SBO17 eq. 6].
    pub k_d: f64,
    /// Rest spacing `L` of adjacent yarns (m), the measure `Ω`.
    pub spacing: f64,
    /// Small-angle threshold on `|φ - π/2|` (rad): the vector strain is
    /// used below it. [`Shear::over_step`] replaces it for one step.
    pub threshold: f64,
    /// Optional shear jamming (elastic energy only).
    pub jamming: Option<Jamming>,
}

impl Shear {
    /// A validated shear element.
    ///
    /// # Errors
    /// [`ShearParamError::Stiffness`] for a negative or non-finite `k`, `k_d`
    /// or non-positive `spacing`; [`ShearParamError::Threshold`] unless
    /// `0 < threshold < π/2`; [`ShearParamError::OnsetBelowThreshold`] when
    /// the jamming onset does not exceed the threshold (jamming must be
    /// inactive wherever the vector strain is used).
    pub fn new(
        k: f64,
        k_d: f64,
        spacing: f64,
        threshold: f64,
        jamming: Option<Jamming>,
    ) -> Result<Self, ShearParamError> {
        if !(k.is_finite() && k_d.is_finite() && spacing.is_finite())
            || k < 0.0
            || k_d < 0.0
            || spacing <= 0.0
        {
            return Err(ShearParamError::Stiffness);
        }
        if !(threshold > 0.0 && threshold < FRAC_PI_2) {
            return Err(ShearParamError::Threshold(threshold));
        }
        if let Some(j) = jamming
            && j.onset <= threshold
        {
            return Err(ShearParamError::OnsetBelowThreshold {
                onset: j.onset,
                threshold,
            });
        }
        Ok(Self {
            k,
            k_d,
            spacing,
            threshold,
            jamming,
        })
    }

    /// This element over one backward-Euler step from `q_n` (shape 9, m):
    /// its [`Shear::threshold`] replaced by [`step_threshold`], so that the
    /// strain chosen at `q_n` holds while the iterate's shear angle stays
    /// within `[θ_t/2, 2θ_t]` (below the jamming onset): the step's
    /// residual is smooth across the switch, where the force jumps by
    /// 1.02 % (module docs). Keeps [`Shear::new`]'s invariant that jamming
    /// is inactive wherever the vector strain is used.
    pub fn over_step(&self, q_n: &SVector<f64, DOFS>) -> Self {
        Self {
            threshold: step_threshold(q_n, self.threshold, self.jamming.as_ref()),
            ..*self
        }
    }

    /// Elastic energy (J), gradient (N, shape 9) and exact Hessian (N/m, 9x9):
    /// `½ L k_x |s|²` with the vector strain below the threshold,
    /// `L k_x Φ(ε)` with the scalar strain above it (`Φ = ½ε²` without
    /// jamming) [SBO17 eq. 2, 22-23].
    pub fn elastic(&self, q: &SVector<f64, DOFS>) -> ElementEval<DOFS> {
        let r = Reduced::new(q);
        let m = Measure::<6>::constant(self.spacing);
        let eps = r.angle();
        let e = if eps.abs() < self.threshold {
            elastic(self.k, &r.small_angle(), &m)
        } else {
            self.scalar_exact(&r.scalar(), &m, eps)
        };
        scatter_eval(&e)
    }

    /// The scalar-strain branch of [`Shear::elastic`] in the reduced
    /// variables, for the strain `s` of shear angle `eps` (rad).
    fn scalar_exact(&self, s: &Strain<1, 6>, m: &Measure<6>, eps: f64) -> ElementEval<6> {
        match &self.jamming {
            Some(j) => elastic_profile(self.k, s, m, j.profile(eps)),
            None => elastic(self.k, s, m),
        }
    }

    /// Energy and gradient as [`Shear::elastic`] with a PSD Hessian
    /// approximation (N/m, 9x9) for the system matrix: the stress-weighted
    /// strain Hessian (`Σᵢ εᵢ ∇²εᵢ`, or `Φ'(ε) ∇²ε` with jamming) is projected
    /// to PSD in the 6 reduced variables [SBO18 §3.4]; the measure `L` is
    /// constant, so the rest of the Hessian (`L k Φ'' ∇εᵀ∇ε`, `Φ'' ≥ 1`) is
    /// already PSD (see [`crate::elastic_projected`]).
    pub fn elastic_projected(&self, q: &SVector<f64, DOFS>) -> ElementEval<DOFS> {
        let r = Reduced::new(q);
        let m = Measure::<6>::constant(self.spacing);
        let eps = r.angle();
        let e = if eps.abs() < self.threshold {
            elastic_projected_generic(self.k, &r.small_angle(), &m)
        } else {
            self.scalar_projected(&r.scalar(), eps, true)
        };
        scatter_eval(&e)
    }

    /// The scalar-strain branch of [`Shear::elastic_projected`] in the
    /// reduced variables, for the strain `s` of shear angle `eps` (rad).
    /// Without `clamp` the Hessian is left zero (no eigenproblem).
    fn scalar_projected(&self, s: &Strain<1, 6>, eps: f64, clamp: bool) -> ElementEval<6> {
        let (p, dp, ddp) = match &self.jamming {
            Some(j) => j.profile(eps),
            None => (0.5 * eps * eps, eps, 1.0),
        };
        let c = self.spacing * self.k;
        let je: Vec6 = s.jacobian.transpose();
        let hessian = if clamp {
            (je * je.transpose() * ddp + project_psd(&(s.hessians[0] * dp))) * c
        } else {
            Mat6::zeros()
        };
        ElementEval {
            energy: c * p,
            gradient: je * (c * dp),
            hessian,
        }
    }

    /// [`Shear::elastic_projected`] (or [`Shear::elastic`] for
    /// [`Hessian::Exact`]) and, for `k_d > 0`,
    /// [`Shear::dissipation_with_jacobian`] from one evaluation of the
    /// strain, as the assembler needs both per crossing and Newton
    /// iteration: the numbers of the separate functions, bit for bit, at
    /// about half the cost [SBO17 eq. 2, 6-11, 22-23; SBO18 §3.4].
    /// [`Hessian::Skip`] skips both 6 x 6 eigenproblems (the elastic clamp
    /// and the dissipation's position Jacobian): energy, gradient and the
    /// dissipative force are those of the other modes, the Hessian and the
    /// dissipation's Jacobians are not to be used. `q`, `qdot` shape 9 (m,
    /// m/s); energy J, force N, Hessian N/m; `None` for `k_d = 0`.
    pub fn elastic_and_dissipation(
        &self,
        q: &SVector<f64, DOFS>,
        qdot: &SVector<f64, DOFS>,
        hessian: Hessian,
        position_jacobian: bool,
    ) -> (ElementEval<DOFS>, Option<ShearDissipation>) {
        let r = Reduced::new(q);
        let m = Measure::<6>::constant(self.spacing);
        let eps = r.angle();
        let damped = self.k_d > 0.0;
        let ydot = reduce(qdot);
        let pj = position_jacobian && hessian != Hessian::Skip;
        // Without a matrix the strain Hessians are not needed (zero here).
        let skip = hessian == Hessian::Skip;
        if eps.abs() < self.threshold {
            let s = if skip {
                let fo = r.small_angle_first_order();
                Strain {
                    value: fo.value,
                    jacobian: fo.jacobian,
                    hessians: [Mat6::zeros(); 3],
                }
            } else {
                r.small_angle()
            };
            let e = match hessian {
                Hessian::Exact => elastic(self.k, &s, &m),
                Hessian::Projected => elastic_projected_generic(self.k, &s, &m),
                Hessian::Skip => elastic_projected(self.k, &s, &m, |_| Mat6::zeros()),
            };
            let d = damped.then(|| {
                let d = generic_dissipation(self.k_d, &s, &m, &ydot, pj);
                ShearDissipation::SmallAngle(scatter_dissipation(&d))
            });
            (scatter_eval(&e), d)
        } else {
            let s = if skip {
                let (value, g, _, _) = r.scalar_first_order();
                Strain {
                    value: SVector::from([value]),
                    jacobian: g.transpose(),
                    hessians: [Mat6::zeros()],
                }
            } else {
                r.scalar()
            };
            let e = match hessian {
                Hessian::Exact => self.scalar_exact(&s, &m, eps),
                Hessian::Projected => self.scalar_projected(&s, eps, true),
                Hessian::Skip => self.scalar_projected(&s, eps, false),
            };
            let d = damped.then(|| {
                let d = generic_dissipation(self.k_d, &s, &m, &ydot, pj);
                ShearDissipation::Scalar(scatter_dissipation(&d))
            });
            (scatter_eval(&e), d)
        }
    }

    /// Strain-rate dissipation `W = ½ L k_d |ε̇|²` with the selected strain,
    /// `qdot` shape 9 (m/s) [SBO17 eq. 6-11]. Not affected by jamming.
    ///
    /// Evaluated in the reduced variables `y = (e_a, e_b)` and mapped to `q`
    /// (`f = Pᵀ f_y`, `J = Pᵀ J_y P`): force and velocity Jacobian equal
    /// [`crate::element::dissipation`] applied to the 9-coordinate strain;
    /// the negative eigenvalues of the stress-weighted strain Hessian are
    /// clamped in `y` [SBO18 §3.4] (`Pᵀ S_y⁺ P`, negative semi-definite; a
    /// 6x6 instead of a 9x9 eigenproblem, and translations, which the strain
    /// ignores, stay out of it).
    pub fn dissipation(
        &self,
        q: &SVector<f64, DOFS>,
        qdot: &SVector<f64, DOFS>,
    ) -> ShearDissipation {
        self.dissipation_with_jacobian(q, qdot, true)
    }

    /// As [`Shear::dissipation`]; with `position_jacobian` false its
    /// position Jacobian is zero and the 6 x 6 clamp is skipped
    /// ([`crate::element::dissipation_with_clamp`]).
    pub fn dissipation_with_jacobian(
        &self,
        q: &SVector<f64, DOFS>,
        qdot: &SVector<f64, DOFS>,
        position_jacobian: bool,
    ) -> ShearDissipation {
        let r = Reduced::new(q);
        let m = Measure::<6>::constant(self.spacing);
        let ydot = reduce(qdot);
        let pj = position_jacobian;
        if r.angle().abs() < self.threshold {
            let d = generic_dissipation(self.k_d, &r.small_angle(), &m, &ydot, pj);
            ShearDissipation::SmallAngle(scatter_dissipation(&d))
        } else {
            let d = generic_dissipation(self.k_d, &r.scalar(), &m, &ydot, pj);
            ShearDissipation::Scalar(scatter_dissipation(&d))
        }
    }
}

/// Closed-form shear strain rate `ε̇ = φ̇` (1/s), written independently of
/// [`scalar_strain`] for tests: from `cos φ = â·b̂`,
/// `φ̇ = -(d/dt (â·b̂)) / sin φ` with `d/dt â = (I - ââᵀ) ė_a / |e_a|` (and
/// likewise for `b̂`), `sin φ = |â × b̂|`. Requires `φ ∈ (0, π)`.
pub fn strain_rate_closed_form(q: &SVector<f64, DOFS>, qdot: &SVector<f64, DOFS>) -> f64 {
    let x0 = Vector3::new(q[0], q[1], q[2]);
    let ea = Vector3::new(q[3], q[4], q[5]) - x0;
    let eb = Vector3::new(q[6], q[7], q[8]) - x0;
    let v0 = Vector3::new(qdot[0], qdot[1], qdot[2]);
    let ea_dot = Vector3::new(qdot[3], qdot[4], qdot[5]) - v0;
    let eb_dot = Vector3::new(qdot[6], qdot[7], qdot[8]) - v0;
    let (a, b) = (ea.normalize(), eb.normalize());
    let a_dot = (ea_dot - a * a.dot(&ea_dot)) / ea.norm();
    let b_dot = (eb_dot - b * b.dot(&eb_dot)) / eb.norm();
    -(a_dot.dot(&b) + a.dot(&b_dot)) / a.cross(&b).norm()
}
