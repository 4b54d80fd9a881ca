//! Bending of a yarn at one node, per pair of consecutive segments
//! [SBO17 eq. 15-21, CLMMO14].
//!
//! # Element coordinates
//!
//! Shape 12, node-major like [`crate::stretch`]:
//! `q = [x_0 (3), s_0, x_1 (3), s_1, x_2 (3), s_2]`. Node 0 is the centre,
//! node 1 the next node on the yarn (`s_1 > s_0`), node 2 the previous one
//! (`s_2 < s_0`); `s` is the yarn's arc-length coordinate (`u` on warp yarns,
//! `v` on weft yarns), in m. With `e_i = x_i - x_0` and `Δu_i = s_i - s_0`
//! the element depends on the reduced variables `(e_1, e_2, D)`,
//! `D = Δu_1 - Δu_2 = s_1 - s_2 > 0`. It does **not** depend on `s_0`: the
//! bending element exerts no force on the centre's arc-length coordinate
//! (sliding of the centre couples through the neighbouring stretch elements).
//!
//! # Strains
//!
//! With `c = e_2 × e_1`, `σ = |c|`, `d = -e_2·e_1` the turning angle at node 0
//! is `θ = atan2(σ, d) ∈ [0, π]` (never `acos`); `θ = 0` for a straight yarn.
//!
//! * Scalar strain (curvature, 1/m) [SBO17 eq. 15-16, CLMMO14]:
//!   `ε = 2θ / D`. Its gradient does not exist at `θ = 0` (nor at `θ = π`),
//!   see [`scalar_strain`].
//! * Small-angle vector strain (1/m, `M = 3`) [SBO17 eq. 19]:
//!   `ε = 2v / D`, `v = c / d`, so `|v| = tan θ`. Smooth at `θ = 0`; defined
//!   for `θ < π/2` (`d > 0`).
//!
//! [`strain`] selects the vector strain when `θ < threshold` and the scalar
//! strain otherwise ([`DEFAULT_THRESHOLD`] = 5°). `threshold` must lie in
//! `[0, π/2)`.
//!
//! # Measure, stiffness and calibration
//!
//! Measure `Ω = D/2` (the Voronoi length, m); stiffness `k_b = E I = E π R⁴/4`
//! (N m²), the flexural rigidity. So `V = ½ Ω k_b ε² = k_b θ² / D` (scalar
//! strain) and `V = k_b tan²θ / D` (vector strain), in J. For a smooth curve
//! of curvature `κ` sampled with Voronoi lengths `D/2`, `2θ/D → κ` and the sum
//! of `V` over the nodes tends to `∫ ½ E I κ² ds`, the energy of
//! Euler-Bernoulli beam theory; the tests check both on circular arcs.
//!
//! [SBO17 eq. 15-16] writes the same bending energy with strain
//! `θ/(Δu_1 - Δu_2)` and measure `Δu_1 - Δu_2`:
//! `V_paper = ½ (Δu_1 - Δu_2) k_paper θ²/(Δu_1 - Δu_2)² = k_paper θ² / (2D)`,
//! while ours is `V = ½ (D/2) k_b 4θ²/D² = k_b θ² / D`. The two agree when
//! `k_b = k_paper / 2`: to reproduce the papers' tables (e.g. the bending
//! stiffnesses 1e-5..1e-3 of [SBO17 Table 1]) use
//! [`bending_stiffness_from_sbo17`]`(k_paper)`. The same factor applies to the
//! bending damping coefficient `k_d` ([`bending_stiffness_from_sbo17`] works
//! for both, as `W` has the same structure).
//!
//! # Dissipation and the small-angle strain
//!
//! Dissipation is the strain-rate potential `W = ½ Ω k_d |ε̇|²` of the
//! selected strain [SBO17 eq. 6-11], built by [`crate::element::dissipation`];
//! see [`damping`]. Good damping [SBO18 eq. 1]: rigid translations and the
//! sliding of the yarn through all three nodes at equal speed (`ṡ_0 = ṡ_1 =
//! ṡ_2`) leave `e_1, e_2, D` unchanged, so both strains have zero rate and no
//! dissipative force. A rigid rotation (`ẋ_i = ω × x_i`) leaves `θ` unchanged,
//! so the scalar strain has zero rate. The vector strain rotates with the
//! body: under a rigid rotation `ċ = ω × c`, `ḋ = 0`, so its rate is exactly
//! `ε̇ = ω × ε`, a spurious strain rate with
//! `|ε̇| ≤ |ω| |ε| = |ω| (2/D) tan θ`.
//! It vanishes at `θ = 0`, and relative to the strain rate `|ω| (2/D)` of a
//! genuine bending motion at the same angular speed it is at most
//! `tan θ < tan(threshold)` (≈ 0.087 at 5°). The tests assert `ε̇ = ω × ε` to
//! round-off and the bound `|ε̇| / (|ω| 2/D) ≤ tan θ ≤ tan(threshold)`.
//!
//! # Continuity across the threshold
//!
//! Both energies are functions of `(θ, D)` only: `V_s = k_b θ²/D`,
//! `V_v = k_b tan²θ/D`. Since `∇θ` has only position components and `∇D`
//! only arc-length components, the elastic force jumps at the switch angle
//! `θ_t` by at most the relative amount
//! `tan θ_t sec²θ_t / θ_t - 1 ≈ (4/3) θ_t²` (1.02 % at 5°; the energy jumps
//! by `tan²θ_t/θ_t² - 1 ≈ (2/3) θ_t²`, 0.51 %). The tests assert this bound.
//!
//! # The strain over a step
//!
//! Chosen afresh at every Newton iterate, the switch makes the backward-Euler
//! residual jump where an iterate crosses `θ_t`: the elastic force by the
//! 1 % above and the dissipative force between the two strain rates. An
//! element whose equilibrium lies on the switch then has no root of the
//! step's residual, and Newton fails at every step size (measured on a
//! garment yarn end held at 5.0000° in a 10 mm drape, BENCHMARKS.md
//! 2026-11-29). So the assembler takes the strain from the step's start
//! `q_n` and holds it while the iterate stays within `[θ_t/2, 2θ_t]`
//! ([`step_threshold`]): within a step the residual is smooth; from one
//! step to the next the choice follows the angle.
//!
//! # Derivatives
//!
//! All derivatives are closed form: first w.r.t. the reduced variables
//! `(e_1, e_2)` through `c` (bilinear), `d` (bilinear), `σ = |c|` and
//! `θ = atan2(σ, d)`, then w.r.t. `D`, then scattered to the 12 coordinates
//! (`e_1 = x_1 - x_0`, `e_2 = x_2 - x_0`, `D = s_1 - s_2`).
//!
//! # Cost
//!
//! Throughput is measured by `cargo bench --bench elements` (see
//! `BENCHMARKS.md`). [`damping`] clamps the stress-weighted strain Hessian in
//! the 7 reduced variables `(e_1, e_2, D)` rather than the 12 coordinates,
//! and maps the result back block by block. The assembler calls
//! [`elastic_and_dissipation`], which evaluates the strain once for the
//! elastic and the dissipative terms and, for projected Newton, never builds
//! the 12 x 12 strain Hessians.

use crate::element::{
    Dissipation, DissipationTerms, ElementEval, Hessian, Measure, Strain, dissipation_first_order,
    dissipation_with_clamp, elastic, elastic_projected, elastic_projected_first_order, project_psd,
};
use nalgebra::{Matrix3, SMatrix, SVector, Vector3};
use std::ops::AddAssign;

/// Number of generalised coordinates of a bending element.
pub const DOFS: usize = 12;

/// Default switch angle between the small-angle vector strain and the scalar
/// strain: 5° in radians [DESIGN §2; SBO17 compares `tan²θ` and `θ²` at
/// small angles].
pub const DEFAULT_THRESHOLD: f64 = 5.0 * std::f64::consts::PI / 180.0;

/// Converts a bending stiffness (or bending damping coefficient) of
/// [SBO17 eq. 15-16] (strain `θ/(Δu_1-Δu_2)`, measure `Δu_1-Δu_2`) to this module's
/// `k_b` (strain `2θ/(Δu_1-Δu_2)`, measure `(Δu_1-Δu_2)/2`): `k_b = k_paper/2`
/// gives the identical energy `k_paper θ²/(2D)`. Units N m² (N m² s for
/// damping).
pub fn bending_stiffness_from_sbo17(k_paper: f64) -> f64 {
    0.5 * k_paper
}

/// Flexural rigidity `k_b = E I = E π R⁴ / 4` (N m²) of a yarn of Young's
/// modulus `young` (Pa) and radius `radius` (m), modelled as a solid circular
/// rod [DESIGN §2].
pub fn bending_stiffness_from_material(young: f64, radius: f64) -> f64 {
    young * std::f64::consts::PI * radius.powi(4) / 4.0
}

/// Reduced variables `e_1 = x_1 - x_0`, `e_2 = x_2 - x_0` (m) and
/// `D = s_1 - s_2` (m).
fn reduced(q: &SVector<f64, DOFS>) -> (Vector3<f64>, Vector3<f64>, f64) {
    let e1 = Vector3::new(q[4] - q[0], q[5] - q[1], q[6] - q[2]);
    let e2 = Vector3::new(q[8] - q[0], q[9] - q[1], q[10] - q[2]);
    (e1, e2, q[7] - q[11])
}

/// Turning angle `θ = atan2(|e_2 × e_1|, -e_2·e_1) ∈ [0, π]` (rad) at node 0;
/// 0 for a straight yarn [SBO17 eq. 15].
pub fn angle(q: &SVector<f64, DOFS>) -> f64 {
    let (e1, e2, _) = reduced(q);
    e2.cross(&e1).norm().atan2(-e2.dot(&e1))
}

/// The switch angle (rad) that keeps, over one backward-Euler step, the
/// bending strain chosen at the step's start `q_n` (shape 12, m):
/// `min(2 θ_t, (θ_t + π/2)/2)` when the step starts on the small-angle
/// vector strain (`θ(q_n) < θ_t`), `θ_t / 2` when it starts on the scalar
/// strain. Passed as `threshold` to [`strain`], [`energy`],
/// [`elastic_and_dissipation`] and [`damping`] at every Newton iterate of
/// the step, it makes the step's residual a smooth function of the iterate
/// across `θ_t` (`threshold`, rad, in `[0, π/2)`): the strain changes
/// within a step only if the iterate leaves the band `[θ_t/2, 2θ_t]`, where
/// the other strain stops being valid (the vector strain's `tan θ` grows
/// without bound towards 90°, the scalar strain's gradient is singular at
/// 0). At `q = q_n` it selects what `threshold` selects. See the module
/// docs, "The strain over a step".
pub fn step_threshold(q_n: &SVector<f64, DOFS>, threshold: f64) -> f64 {
    crate::element::held_threshold(uses_small_angle(q_n, threshold), threshold)
}

/// Whether [`strain`] uses the small-angle vector strain at `q`:
/// `θ < threshold` (rad).
pub fn uses_small_angle(q: &SVector<f64, DOFS>, threshold: f64) -> bool {
    angle(q) < threshold
}

/// Skew matrix `[a]×` with `[a]× b = a × b`.
fn skew(a: &Vector3<f64>) -> Matrix3<f64> {
    Matrix3::new(0.0, -a.z, a.y, a.z, 0.0, -a.x, -a.y, a.x, 0.0)
}

/// `c = e_2 × e_1`, its Jacobian w.r.t. `y = (e_1, e_2)` (3 x 6),
/// `d = -e_2·e_1` and its gradient (6). `∇²d = [[0, -I], [-I, 0]]`.
struct Bilinear {
    c: Vector3<f64>,
    jc: SMatrix<f64, 3, 6>,
    d: f64,
    gd: SVector<f64, 6>,
}

fn bilinear(e1: &Vector3<f64>, e2: &Vector3<f64>) -> Bilinear {
    let mut jc = SMatrix::<f64, 3, 6>::zeros();
    // ∂c/∂e_1 = [e_2]×, ∂c/∂e_2 = -[e_1]×.
    jc.fixed_view_mut::<3, 3>(0, 0).copy_from(&skew(e2));
    jc.fixed_view_mut::<3, 3>(0, 3).copy_from(&(-skew(e1)));
    let mut gd = SVector::<f64, 6>::zeros();
    gd.fixed_rows_mut::<3>(0).copy_from(&(-e2));
    gd.fixed_rows_mut::<3>(3).copy_from(&(-e1));
    Bilinear {
        c: e2.cross(e1),
        jc,
        d: -e2.dot(e1),
        gd,
    }
}

/// `∇²(w·c)` w.r.t. `y = (e_1, e_2)`: `[[0, [w]×], [-[w]×, 0]]`.
fn hess_wc(w: &Vector3<f64>) -> SMatrix<f64, 6, 6> {
    let mut h = SMatrix::<f64, 6, 6>::zeros();
    let s = skew(w);
    h.fixed_view_mut::<3, 3>(0, 3).copy_from(&s);
    h.fixed_view_mut::<3, 3>(3, 0).copy_from(&(-s));
    h
}

/// `∇²d` w.r.t. `y = (e_1, e_2)`: `[[0, -I], [-I, 0]]`.
fn hess_d() -> SMatrix<f64, 6, 6> {
    let mut h = SMatrix::<f64, 6, 6>::zeros();
    for i in 0..3 {
        h[(i, 3 + i)] = -1.0;
        h[(3 + i, i)] = -1.0;
    }
    h
}

/// One strain component `ε = 2 f(e_1, e_2) / D` from `f`, `∇_y f` (6) and
/// `∇²_y f` (6 x 6), `y = (e_1, e_2)`: writes its Jacobian into `jac` (12)
/// and its Hessian into `hes` (12 x 12) w.r.t. `q`, and returns `ε`.
///
/// Over the reduced variables `z = (e_1, e_2, D)`:
/// `∂ε/∂y = (2/D)∇f`, `∂ε/∂D = -2f/D²`, `∂²ε/∂y² = (2/D)∇²f`,
/// `∂²ε/∂y∂D = -(2/D²)∇f`, `∂²ε/∂D² = 4f/D³`; then scattered with
/// `e_1 = x_1 - x_0`, `e_2 = x_2 - x_0`, `D = s_1 - s_2` (block form below,
/// `A, B, C` the `(e_1,e_1)`, `(e_1,e_2)`, `(e_2,e_2)` blocks).
fn finish(
    f: f64,
    gf: &SVector<f64, 6>,
    hf: &SMatrix<f64, 6, 6>,
    dd: f64,
    jac: &mut SVector<f64, DOFS>,
    hes: &mut SMatrix<f64, DOFS, DOFS>,
) -> f64 {
    let eps = finish_jacobian(f, gf, dd, jac);
    let g = 2.0 / dd;
    let g2 = g / dd; // 2/D²
    // Hessian, position-position blocks.
    for i in 0..3 {
        for j in 0..3 {
            let a = g * hf[(i, j)];
            let b = g * hf[(i, 3 + j)];
            let bt = g * hf[(3 + i, j)];
            let c = g * hf[(3 + i, 3 + j)];
            hes[(X1 + i, X1 + j)] = a;
            hes[(X1 + i, X2 + j)] = b;
            hes[(X2 + i, X1 + j)] = bt;
            hes[(X2 + i, X2 + j)] = c;
            hes[(X0 + i, X1 + j)] = -(a + bt);
            hes[(X1 + j, X0 + i)] = -(a + bt);
            hes[(X0 + i, X2 + j)] = -(b + c);
            hes[(X2 + j, X0 + i)] = -(b + c);
            hes[(X0 + i, X0 + j)] = a + b + bt + c;
        }
    }
    // Position-arc-length blocks (the s_0 row and column stay zero).
    for i in 0..3 {
        let (a, b) = (-g2 * gf[i], -g2 * gf[3 + i]);
        for (p, v) in [(X0 + i, -(a + b)), (X1 + i, a), (X2 + i, b)] {
            hes[(p, S1)] = v;
            hes[(S1, p)] = v;
            hes[(p, S2)] = -v;
            hes[(S2, p)] = -v;
        }
    }
    let h = 2.0 * g2 * f / dd;
    hes[(S1, S1)] = h;
    hes[(S2, S2)] = h;
    hes[(S1, S2)] = -h;
    hes[(S2, S1)] = -h;
    eps
}

/// Coordinate offsets of `x_0`, `x_1`, `x_2`, `s_1`, `s_2` in `q`.
const X0: usize = 0;
const X1: usize = 4;
const X2: usize = 8;
const S1: usize = 7;
const S2: usize = 11;

/// The value and Jacobian half of [`finish`]: writes `∇ε` (12) into `jac`
/// and returns `ε = 2f/D`.
#[inline]
fn finish_jacobian(f: f64, gf: &SVector<f64, 6>, dd: f64, jac: &mut SVector<f64, DOFS>) -> f64 {
    let g = 2.0 / dd;
    let g2 = g / dd; // 2/D²
    let gd = -g2 * f;
    for i in 0..3 {
        let (a, b) = (g * gf[i], g * gf[3 + i]);
        jac[X0 + i] = -(a + b);
        jac[X1 + i] = a;
        jac[X2 + i] = b;
    }
    jac[X0 + 3] = 0.0;
    jac[S1] = gd;
    jac[S2] = -gd;
    g * f
}

/// One component `f(e_1, e_2)` of a bending strain `ε = 2f/D` with its
/// gradient (6) and Hessian (6 x 6) w.r.t. `y = (e_1, e_2)`: `f = θ` for the
/// scalar strain, `f = v_k` for the vector strain.
#[derive(Clone, Copy)]
struct Parts {
    f: f64,
    gf: SVector<f64, 6>,
    hf: SMatrix<f64, 6, 6>,
}

/// `θ = atan2(σ, d)` with its derivatives w.r.t. `y` (zero derivatives at
/// `σ = 0`, see [`scalar_strain`]).
fn scalar_parts(e1: &Vector3<f64>, e2: &Vector3<f64>) -> Parts {
    let b = bilinear(e1, e2);
    let sigma = b.c.norm();
    let d = b.d;
    let theta = sigma.atan2(d);
    let r2 = sigma * sigma + d * d; // = |e_1|²|e_2|²
    let (gf, hf) = if sigma > 0.0 {
        let n = b.c / sigma;
        let gs = b.jc.transpose() * n; // ∇σ
        // ∇²σ = (J_cᵀ J_c - ∇σ∇σᵀ)/σ + ∇²(n·c) (n held fixed).
        let hs = (b.jc.transpose() * b.jc - gs * gs.transpose()) / sigma + hess_wc(&n);
        let gt = (gs * d - b.gd * sigma) / r2;
        // θ_σ = d/r², θ_d = -σ/r², θ_σσ = -2σd/r⁴, θ_dd = 2σd/r⁴,
        // θ_σd = (σ² - d²)/r⁴.
        let r4 = r2 * r2;
        let sd = gs * b.gd.transpose();
        let ht = (hs * d - hess_d() * sigma) / r2
            + (sd + sd.transpose()) * ((sigma * sigma - d * d) / r4)
            + (b.gd * b.gd.transpose() - gs * gs.transpose()) * (2.0 * sigma * d / r4);
        (gt, ht)
    } else {
        (SVector::zeros(), SMatrix::zeros())
    };
    Parts { f: theta, gf, hf }
}

/// `v = c/d` component-wise with derivatives w.r.t. `y`.
fn vector_parts(e1: &Vector3<f64>, e2: &Vector3<f64>) -> [Parts; 3] {
    let b = bilinear(e1, e2);
    let d = b.d;
    let (id, id2, id3) = (1.0 / d, 1.0 / (d * d), 1.0 / (d * d * d));
    let hd = hess_d();
    std::array::from_fn(|k| {
        let ck = b.c[k];
        let gck: SVector<f64, 6> = b.jc.row(k).transpose();
        let gf = gck * id - b.gd * (ck * id2);
        // ∇²v_k = ∇²c_k/d - (∇c_k∇dᵀ + ∇d∇c_kᵀ)/d² + c_k (2∇d∇dᵀ/d³ - ∇²d/d²).
        let hck = hess_wc(&Vector3::ith(k, 1.0));
        let (a2, a3) = (ck * id2, 2.0 * ck * id3);
        let hf = SMatrix::<f64, 6, 6>::from_fn(|i, j| {
            hck[(i, j)] * id - (gck[i] * b.gd[j] + b.gd[i] * gck[j]) * id2 + a3 * b.gd[i] * b.gd[j]
                - a2 * hd[(i, j)]
        });
        Parts { f: ck * id, gf, hf }
    })
}

/// Scalar bending strain (curvature) `ε = 2θ/(s_1 - s_2)` (1/m) with its
/// Jacobian (1 x 12) and Hessian (12 x 12) w.r.t. `q` [SBO17 eq. 15-16,
/// CLMMO14]; `θ = atan2(σ, d)`, `σ = |e_2 × e_1|`, `d = -e_2·e_1`.
///
/// Preconditions: `|e_1|, |e_2| > 0`, `D = s_1 - s_2 > 0`. `θ` has no
/// gradient at `σ = 0` (`θ = 0` straight, `θ = π` folded back) and its
/// Hessian grows like `1/σ` near it: use this strain above the threshold
/// angle (see [`strain`]). Exactly at `σ = 0` the position derivatives are
/// returned as zero (the zero subgradient; no finite Hessian exists), so the
/// result stays finite; the derivatives w.r.t. `s` are exact there.
pub fn scalar_strain(q: &SVector<f64, DOFS>) -> Strain<1, DOFS> {
    let (e1, e2, dd) = reduced(q);
    scalar_strain_of(&scalar_parts(&e1, &e2), dd)
}

/// [`scalar_strain`] from its reduced part and `D` (m).
fn scalar_strain_of(p: &Parts, dd: f64) -> Strain<1, DOFS> {
    let mut jac = SVector::zeros();
    let mut hes = SMatrix::zeros();
    let eps = finish(p.f, &p.gf, &p.hf, dd, &mut jac, &mut hes);
    Strain {
        value: SVector::from([eps]),
        jacobian: jac.transpose(),
        hessians: [hes],
    }
}

/// Small-angle vector bending strain `ε = 2v/(s_1 - s_2)` (1/m),
/// `v = (e_2 × e_1)/(-e_2·e_1)` (`|v| = tan θ`), with its Jacobian (3 x 12)
/// and the Hessians of its three components (12 x 12 each) w.r.t. `q`
/// [SBO17 eq. 19].
///
/// Smooth at `θ = 0`. Preconditions: `d = -e_2·e_1 > 0` (`θ < π/2`; it is
/// meant for `θ` below the threshold angle, see [`strain`]) and
/// `D = s_1 - s_2 > 0`.
pub fn vector_strain(q: &SVector<f64, DOFS>) -> Strain<3, DOFS> {
    let (e1, e2, dd) = reduced(q);
    vector_strain_of(&vector_parts(&e1, &e2), dd)
}

/// [`vector_strain`] from its reduced parts and `D` (m).
fn vector_strain_of(parts: &[Parts; 3], dd: f64) -> Strain<3, DOFS> {
    let mut value = SVector::<f64, 3>::zeros();
    let mut jacobian = SMatrix::<f64, 3, DOFS>::zeros();
    let mut hessians = [SMatrix::<f64, DOFS, DOFS>::zeros(); 3];
    for (k, p) in parts.iter().enumerate() {
        let mut jac = SVector::zeros();
        value[k] = finish(p.f, &p.gf, &p.hf, dd, &mut jac, &mut hessians[k]);
        jacobian.set_row(k, &jac.transpose());
    }
    Strain {
        value,
        jacobian,
        hessians,
    }
}

/// The map `z = P q` from the 12 coordinates to the reduced variables
/// `z = (e_1, e_2, D)` (7 x 12, entries 0 and ±1); the reference for
/// [`reduced_to_full`] in the tests.
#[cfg(test)]
fn reduction() -> SMatrix<f64, 7, DOFS> {
    let mut p = SMatrix::<f64, 7, DOFS>::zeros();
    for i in 0..3 {
        p[(i, 4 + i)] = 1.0;
        p[(i, i)] = -1.0;
        p[(3 + i, 8 + i)] = 1.0;
        p[(3 + i, i)] = -1.0;
    }
    p[(6, 7)] = 1.0;
    p[(6, 11)] = -1.0;
    p
}

/// The stress-weighted strain Hessian `Σ_k ε̇_k ∇²ε_k` clamped to PSD in the
/// reduced variables `z = (e_1, e_2, D)` and mapped back as `Pᵀ (H_z)⁺ P`
/// [SBO18 §3.4]. A congruence keeps the result PSD; clamping in 7 variables
/// instead of 12 is about 5x cheaper, and differs from the 12 x 12 clamp only
/// in how the removed negative part is distributed. For `ε = 2f/D`:
/// `∂²ε/∂y² = (2/D)∇²f`, `∂²ε/∂y∂D = -(2/D²)∇f`, `∂²ε/∂D² = 4f/D³`.
fn clamped_stress_hessian(parts: &[Parts], rate: &[f64], dd: f64) -> SMatrix<f64, DOFS, DOFS> {
    let mut hz = SMatrix::<f64, 7, 7>::zeros();
    for (p, &r) in parts.iter().zip(rate) {
        let g = 2.0 * r / dd;
        let gd = -2.0 * r / (dd * dd);
        hz.fixed_view_mut::<6, 6>(0, 0).add_assign(&(p.hf * g));
        for i in 0..6 {
            hz[(i, 6)] += gd * p.gf[i];
            hz[(6, i)] += gd * p.gf[i];
        }
        hz[(6, 6)] += 4.0 * r * p.f / (dd * dd * dd);
    }
    reduced_to_full(&project_psd(&hz))
}

/// `Pᵀ H P` for a symmetric `H` (7 x 7) in the reduced variables
/// `z = (e_1, e_2, D)`: the 12 x 12 matrix w.r.t. `q` ([`reduction`]),
/// written block by block (`e_1 = x_1 - x_0`, `e_2 = x_2 - x_0`,
/// `D = s_1 - s_2`; the `s_0` row and column are zero) instead of two dense
/// products.
fn reduced_to_full(hz: &SMatrix<f64, 7, 7>) -> SMatrix<f64, DOFS, DOFS> {
    let mut out = SMatrix::<f64, DOFS, DOFS>::zeros();
    for i in 0..3 {
        for j in 0..3 {
            let (a, b) = (hz[(i, j)], hz[(i, 3 + j)]);
            let (bt, c) = (hz[(3 + i, j)], hz[(3 + i, 3 + j)]);
            out[(X1 + i, X1 + j)] = a;
            out[(X1 + i, X2 + j)] = b;
            out[(X2 + i, X1 + j)] = bt;
            out[(X2 + i, X2 + j)] = c;
            out[(X0 + i, X1 + j)] = -(a + bt);
            out[(X0 + i, X2 + j)] = -(b + c);
            out[(X1 + i, X0 + j)] = -(a + b);
            out[(X2 + i, X0 + j)] = -(bt + c);
            out[(X0 + i, X0 + j)] = (a + c) + (b + bt);
        }
        let (a, b) = (hz[(i, 6)], hz[(3 + i, 6)]);
        for (r, v) in [(X0 + i, -(a + b)), (X1 + i, a), (X2 + i, b)] {
            out[(r, S1)] = v;
            out[(S1, r)] = v;
            out[(r, S2)] = -v;
            out[(S2, r)] = -v;
        }
    }
    let d = hz[(6, 6)];
    out[(S1, S1)] = d;
    out[(S2, S2)] = d;
    out[(S1, S2)] = -d;
    out[(S2, S1)] = -d;
    out
}

/// Measure `Ω = (s_1 - s_2)/2` (m, the Voronoi length of node 0) with its
/// gradient [SBO17 eq. 16, DESIGN §2].
pub fn measure(q: &SVector<f64, DOFS>) -> Measure<DOFS> {
    let mut gradient = SVector::zeros();
    gradient[7] = 0.5;
    gradient[11] = -0.5;
    Measure {
        value: 0.5 * (q[7] - q[11]),
        gradient,
    }
}

/// The bending strain selected by [`strain`]: the small-angle vector strain
/// [SBO17 eq. 19] below the threshold angle, the scalar curvature
/// [SBO17 eq. 15-16] otherwise.
// The variants differ in size (3 vs 1 strain Hessians); boxing would allocate,
// which the per-element functions must not do.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BendingStrain {
    /// `ε = 2θ/D` (1/m), used for `θ ≥ threshold`.
    Scalar(Strain<1, DOFS>),
    /// `ε = 2v/D` (1/m), used for `θ < threshold`.
    Vector(Strain<3, DOFS>),
}

impl BendingStrain {
    /// Whether this is the small-angle vector strain.
    pub fn is_small_angle(&self) -> bool {
        matches!(self, Self::Vector(_))
    }

    /// `|ε|` (1/m): `2θ/D` for the scalar strain, `2 tan θ / D` for the vector
    /// strain.
    pub fn norm(&self) -> f64 {
        match self {
            Self::Scalar(s) => s.value.norm(),
            Self::Vector(s) => s.value.norm(),
        }
    }

    /// `|ε̇| = |∇ε q̇|` (1/(m s)) for the generalised velocity `qdot` (m/s,
    /// shape 12).
    pub fn rate_norm(&self, qdot: &SVector<f64, DOFS>) -> f64 {
        match self {
            Self::Scalar(s) => s.rate(qdot).norm(),
            Self::Vector(s) => s.rate(qdot).norm(),
        }
    }
}

/// The bending strain with derivatives, selected by the turning angle:
/// [`vector_strain`] when `θ < threshold`, [`scalar_strain`] otherwise
/// (`threshold` in rad, in `[0, π/2)`; [`DEFAULT_THRESHOLD`] is 5°).
/// Preconditions as for the two strains: `|e_1|, |e_2| > 0`, `s_1 > s_2`.
pub fn strain(q: &SVector<f64, DOFS>, threshold: f64) -> BendingStrain {
    if uses_small_angle(q, threshold) {
        BendingStrain::Vector(vector_strain(q))
    } else {
        BendingStrain::Scalar(scalar_strain(q))
    }
}

/// Bending energy `V = ½ Ω k_b |ε|²` (J), gradient (N, shape 12) and exact
/// Hessian (N/m, 12 x 12) of the strain selected by [`strain`], including
/// the Eulerian `∇Ω` terms [SBO17 eq. 2-3, 15-16, 19]. `k_b` is the
/// flexural rigidity `E I` in N m² (see the module docs for the factor ½
/// relative to [SBO17 eq. 15-16]).
pub fn energy(k_b: f64, q: &SVector<f64, DOFS>, threshold: f64) -> ElementEval<DOFS> {
    let m = measure(q);
    match strain(q, threshold) {
        BendingStrain::Scalar(s) => elastic(k_b, &s, &m),
        BendingStrain::Vector(s) => elastic(k_b, &s, &m),
    }
}

/// Bending energy and gradient as [`energy`] with the PSD Hessian
/// approximation of [`crate::elastic_projected`] (N/m, 12 x 12): the
/// stress-weighted strain Hessian `Σ_k ε_k ∇²ε_k` is clamped in the 7
/// reduced variables as the damping clamp does [SBO18 §3.4]. This is what
/// the system matrix uses. `k_b` in N m², `threshold` in rad.
pub fn energy_projected(k_b: f64, q: &SVector<f64, DOFS>, threshold: f64) -> ElementEval<DOFS> {
    let m = measure(q);
    let (e1, e2, dd) = reduced(q);
    match strain(q, threshold) {
        BendingStrain::Scalar(s) => {
            let parts = [scalar_parts(&e1, &e2)];
            elastic_projected(k_b, &s, &m, |eps| {
                clamped_stress_hessian(&parts, eps.as_slice(), dd)
            })
        }
        BendingStrain::Vector(s) => {
            let parts = vector_parts(&e1, &e2);
            elastic_projected(k_b, &s, &m, |eps| {
                clamped_stress_hessian(&parts, eps.as_slice(), dd)
            })
        }
    }
}

/// Strain-rate dissipation of a bending element, for the strain selected by
/// [`strain`] [SBO17 eq. 6-11, SBO18 eq. 9, 19].
// The variants differ in size (3 vs 1 strain Hessians); boxing would allocate,
// which the per-element functions must not do.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BendingDissipation {
    /// Scalar curvature (`θ ≥ threshold`).
    Scalar(Dissipation<1, DOFS>),
    /// Small-angle vector strain (`θ < threshold`).
    Vector(Dissipation<3, DOFS>),
}

impl BendingDissipation {
    /// Whether the small-angle vector strain was used.
    pub fn is_small_angle(&self) -> bool {
        matches!(self, Self::Vector(_))
    }

    /// `|ε̇|` (1/(m s)).
    pub fn strain_rate_norm(&self) -> f64 {
        match self {
            Self::Scalar(d) => d.strain_rate.norm(),
            Self::Vector(d) => d.strain_rate.norm(),
        }
    }

    /// Dissipation potential `W = ½ Ω k_d |ε̇|²` (W) [SBO17 eq. 6].
    pub fn potential(&self) -> f64 {
        match self {
            Self::Scalar(d) => d.potential,
            Self::Vector(d) => d.potential,
        }
    }

    /// Dissipative force `-Ω k_d ∇εᵀ ε̇` (N, shape 12) [SBO17 eq. 8].
    pub fn force(&self) -> SVector<f64, DOFS> {
        match self {
            Self::Scalar(d) => d.force,
            Self::Vector(d) => d.force,
        }
    }

    /// Velocity Jacobian `-Ω k_d ∇εᵀ∇ε` (N s/m, 12 x 12, symmetric NSD)
    /// [SBO17 eq. 10].
    pub fn velocity_jacobian(&self) -> SMatrix<f64, DOFS, DOFS> {
        match self {
            Self::Scalar(d) => d.velocity_jacobian,
            Self::Vector(d) => d.velocity_jacobian,
        }
    }

    /// Clamped position Jacobian (N/m, 12 x 12, symmetric NSD)
    /// [SBO17 eq. 11, SBO18 §3.4].
    pub fn position_jacobian(&self) -> SMatrix<f64, DOFS, DOFS> {
        match self {
            Self::Scalar(d) => d.position_jacobian,
            Self::Vector(d) => d.position_jacobian,
        }
    }

    /// Force, Jacobians and potential, borrowed
    /// ([`crate::element::Dissipation::terms`]).
    pub fn terms(&self) -> DissipationTerms<'_, DOFS> {
        match self {
            Self::Scalar(d) => d.terms(),
            Self::Vector(d) => d.terms(),
        }
    }
}

/// Strain-rate damping `W = ½ Ω k_d |ε̇|²` of the bending strain selected by
/// [`strain`] (`k_d` in N m² s, `qdot` in m/s, shape 12, `threshold` in rad)
/// [SBO17 eq. 6-11]. See the module docs for the good-damping properties and
/// the bounded spurious rotation damping of the small-angle strain.
pub fn damping(
    k_d: f64,
    q: &SVector<f64, DOFS>,
    qdot: &SVector<f64, DOFS>,
    threshold: f64,
) -> BendingDissipation {
    damping_with_jacobian(k_d, q, qdot, threshold, true)
}

/// As [`damping`]; with `position_jacobian` false its position Jacobian is
/// zero and the 7 x 7 clamp is skipped ([`dissipation_with_clamp`]).
pub fn damping_with_jacobian(
    k_d: f64,
    q: &SVector<f64, DOFS>,
    qdot: &SVector<f64, DOFS>,
    threshold: f64,
    position_jacobian: bool,
) -> BendingDissipation {
    /// The dissipation of strain `s` with the clamp of its `parts`.
    fn clamped<const M: usize>(
        k_d: f64,
        s: &Strain<M, DOFS>,
        m: &Measure<DOFS>,
        qdot: &SVector<f64, DOFS>,
        position_jacobian: bool,
        parts: &[Parts],
        dd: f64,
    ) -> Dissipation<M, DOFS> {
        dissipation_with_clamp(k_d, s, m, qdot, position_jacobian, |rate| {
            clamped_stress_hessian(parts, rate.as_slice(), dd)
        })
    }
    let m = measure(q);
    let (e1, e2, dd) = reduced(q);
    let pj = position_jacobian;
    match strain(q, threshold) {
        BendingStrain::Scalar(s) => {
            let parts = [scalar_parts(&e1, &e2)];
            BendingDissipation::Scalar(clamped(k_d, &s, &m, qdot, pj, &parts, dd))
        }
        BendingStrain::Vector(s) => {
            let parts = vector_parts(&e1, &e2);
            BendingDissipation::Vector(clamped(k_d, &s, &m, qdot, pj, &parts, dd))
        }
    }
}

/// The elastic terms of [`energy_projected`] (or [`energy`] for
/// [`Hessian::Exact`]) and, for `k_d > 0` (N m² s), the clamped dissipation
/// of [`damping_with_jacobian`] of one bending element from one evaluation
/// of its strain, as the assembler needs both per element and Newton
/// iteration: the numbers of the separate functions, bit for bit. The
/// projected path never builds the 12 x 12 strain Hessians (both clamps
/// work on the reduced parts in `(e_1, e_2, D)` [SBO18 §3.4]; about 18 %
/// of the bench patch's assembly, BENCHMARKS.md). [`Hessian::Skip`] also
/// skips both clamps (7 x 7 eigenproblems): energy, gradient and the
/// dissipative force are those of the other modes, the Hessian and the
/// dissipation's Jacobians are not to be used. `q`, `qdot` shape 12 (m,
/// m/s), `k_b` N m², `threshold` rad; `None` for `k_d ≤ 0`.
pub fn elastic_and_dissipation(
    k_b: f64,
    k_d: f64,
    q: &SVector<f64, DOFS>,
    qdot: &SVector<f64, DOFS>,
    threshold: f64,
    hessian: Hessian,
    position_jacobian: bool,
) -> (ElementEval<DOFS>, Option<BendingDissipation>) {
    /// Projected elastic terms and dissipation of the strain
    /// `ε_k = 2 f_k / D` of `parts` from its value and Jacobian alone;
    /// without `clamp` the two clamps (and so the Hessian) are skipped.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn projected<const M: usize>(
        k_b: f64,
        k_d: f64,
        parts: &[Parts; M],
        dd: f64,
        m: &Measure<DOFS>,
        qdot: &SVector<f64, DOFS>,
        position_jacobian: bool,
        clamp: bool,
    ) -> (ElementEval<DOFS>, Option<Dissipation<M, DOFS>>) {
        let mut value = SVector::<f64, M>::zeros();
        let mut jacobian = SMatrix::<f64, M, DOFS>::zeros();
        for (k, p) in parts.iter().enumerate() {
            let mut jac = SVector::zeros();
            value[k] = finish_jacobian(p.f, &p.gf, dd, &mut jac);
            jacobian.set_row(k, &jac.transpose());
        }
        let ev = elastic_projected_first_order(k_b, &value, &jacobian, m, |eps| {
            if clamp {
                clamped_stress_hessian(parts, eps.as_slice(), dd)
            } else {
                SMatrix::zeros()
            }
        });
        let d = (k_d > 0.0).then(|| {
            let pj = position_jacobian && clamp;
            dissipation_first_order(k_d, &jacobian, m, qdot, pj, |rate| {
                clamped_stress_hessian(parts, rate.as_slice(), dd)
            })
        });
        (ev, d)
    }
    /// Exact elastic terms and dissipation of the full strain `s` of
    /// `parts`.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn exact_terms<const M: usize>(
        k_b: f64,
        k_d: f64,
        s: &Strain<M, DOFS>,
        parts: &[Parts; M],
        dd: f64,
        m: &Measure<DOFS>,
        qdot: &SVector<f64, DOFS>,
        position_jacobian: bool,
    ) -> (ElementEval<DOFS>, Option<Dissipation<M, DOFS>>) {
        let d = (k_d > 0.0).then(|| {
            dissipation_with_clamp(k_d, s, m, qdot, position_jacobian, |rate| {
                clamped_stress_hessian(parts, rate.as_slice(), dd)
            })
        });
        (elastic(k_b, s, m), d)
    }
    let m = measure(q);
    let (e1, e2, dd) = reduced(q);
    let pj = position_jacobian;
    let clamp = hessian != Hessian::Skip;
    if uses_small_angle(q, threshold) {
        let parts = vector_parts(&e1, &e2);
        let (ev, d) = if hessian == Hessian::Exact {
            let s = vector_strain_of(&parts, dd);
            exact_terms(k_b, k_d, &s, &parts, dd, &m, qdot, pj)
        } else {
            projected(k_b, k_d, &parts, dd, &m, qdot, pj, clamp)
        };
        (ev, d.map(BendingDissipation::Vector))
    } else {
        let parts = [scalar_parts(&e1, &e2)];
        let (ev, d) = if hessian == Hessian::Exact {
            let s = scalar_strain_of(&parts[0], dd);
            exact_terms(k_b, k_d, &s, &parts, dd, &m, qdot, pj)
        } else {
            projected(k_b, k_d, &parts, dd, &m, qdot, pj, clamp)
        };
        (ev, d.map(BendingDissipation::Scalar))
    }
}

/// Closed-form rate of the scalar bending strain (the quantity of
/// [SBO17 eq. 17-18]; the paper's text was not at hand, so the form below is
/// derived here by differentiating `ε = 2θ/D` in time), written
/// independently of [`scalar_strain`] so tests can check `∇ε q̇` against it:
///
/// `ε̇ = 2θ̇/D - 2θ Ḋ/D²`, `θ̇ = (n × e_2)·ė_2/|e_2|² - (n × e_1)·ė_1/|e_1|²`
///
/// with `n = (e_2 × e_1)/|e_2 × e_1|` (1/(m s)). Derivation: `θ = π - φ`,
/// `φ` the angle between `e_1` and `e_2`; moving `e_1` by `δ` changes `φ` by
/// `-(n' × e_1)·δ/|e_1|²` with `n' = e_1 × e_2 / |e_1 × e_2| = -n` (and
/// symmetrically for `e_2`), i.e. each edge turns about `n` at its
/// perpendicular speed over its length. Requires `0 < θ < π`.
pub fn scalar_strain_rate_closed_form(q: &SVector<f64, DOFS>, qdot: &SVector<f64, DOFS>) -> f64 {
    let (e1, e2, dd) = reduced(q);
    let (e1d, e2d, ddd) = reduced(qdot);
    let c = e2.cross(&e1);
    let n = c.normalize();
    let theta = c.norm().atan2(-e2.dot(&e1));
    let thetad =
        n.cross(&e2).dot(&e2d) / e2.norm_squared() - n.cross(&e1).dot(&e1d) / e1.norm_squared();
    2.0 * thetad / dd - 2.0 * theta * ddd / (dd * dd)
}

/// Closed-form rate of the small-angle vector strain (the quantity of
/// [SBO17 eq. 20-21], derived here by differentiating `ε = 2v/D` in time),
/// written independently of [`vector_strain`]:
///
/// `ε̇ = 2v̇/D - 2v Ḋ/D²`, `v̇ = ċ/d - c ḋ/d²`,
/// `ċ = ė_2 × e_1 + e_2 × ė_1`, `ḋ = -(ė_2·e_1 + e_2·ė_1)`
///
/// (1/(m s), shape 3), the time derivative of `ε = 2 (e_2 × e_1) /
/// ((-e_2·e_1) D)`. Requires `d > 0`.
pub fn vector_strain_rate_closed_form(
    q: &SVector<f64, DOFS>,
    qdot: &SVector<f64, DOFS>,
) -> Vector3<f64> {
    let (e1, e2, dd) = reduced(q);
    let (e1d, e2d, ddd) = reduced(qdot);
    let c = e2.cross(&e1);
    let d = -e2.dot(&e1);
    let cd = e2d.cross(&e1) + e2.cross(&e1d);
    let dd_t = -(e2d.dot(&e1) + e2.dot(&e1d));
    let v = c / d;
    let vd = cd / d - c * (dd_t / (d * d));
    vd * (2.0 / dd) - v * (2.0 * ddd / (dd * dd))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::xorshift;

    /// The block-wise `Pᵀ H P` equals the dense products to round-off on
    /// random symmetric matrices (sums of at most four terms).
    #[test]
    fn reduced_to_full_equals_the_dense_congruence() {
        let mut rng = xorshift(0x7e57_b10c);
        let p = reduction();
        for _ in 0..200 {
            let a = SMatrix::<f64, 7, 7>::from_fn(|_, _| rng());
            let h = a + a.transpose();
            let dense = p.transpose() * h * p;
            let blocks = reduced_to_full(&h);
            let err = (blocks - dense).abs().max();
            assert!(err <= 1e-15 * h.abs().max() * 4.0, "error {err:e}");
            assert_eq!(blocks, blocks.transpose());
        }
    }
}
