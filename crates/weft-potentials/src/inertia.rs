//! Inertia of one yarn segment in the mixed Lagrangian-Eulerian model
//! [SJLP11, CLMMO14, DESIGN §4], with the Euler-Lagrange terms that exist
//! because the mass matrix depends on the configuration [SBO17 eq. 1].
//!
//! # Coordinates
//!
//! Element coordinates (shape 8, node-major, same layout as
//! [`crate::stretch`]): `q = [x_a (3), s_a, x_b (3), s_b]`, node `a` before
//! node `b` along the yarn, positions `x` in m, `s` the arc-length coordinate
//! of the segment's own yarn at that node (m of rest yarn length); `q̇` in m/s.
//! In the 5-DOF node layout `(x, u, v)` of DESIGN §1, a **warp** segment takes
//! its `s` from the node's `u` slot and a **weft** segment from its `v` slot;
//! the other arc-length coordinate of a crossing does not enter the segment.
//! The solver scatters the 8 rows/columns accordingly. An end node's fixed
//! arc-length coordinate is a Dirichlet DOF: its `ṡ = 0`.
//!
//! Notation: `Δx = x_b - x_a`, `Δu = s_b - s_a > 0` (rest length, m),
//! `w = Δx/Δu` (stretch vector, dimensionless), `ρ_l = ρ π R²` the linear
//! density (kg/m, mass per metre of *rest* length), `m = ρ_l Δu` the segment
//! mass (kg). Precondition everywhere: `Δu > 0` (the step controller rejects a
//! step otherwise, DESIGN §1); results are non-finite when `Δu = 0`. `Δx = 0`
//! is allowed (`w = 0`).
//!
//! # Kinematics and kinetic energy
//!
//! The material point with rest coordinate `σ ∈ [s_a, s_b]` sits at
//! `x(σ) = x_a + ξ Δx` with `ξ = (σ - s_a)/Δu`. Differentiating at fixed
//! material `σ` gives its velocity
//! `(1-ξ) v_a + ξ v_b`, with the *material velocity at the node*
//! `v_a = ẋ_a - w ṡ_a`, `v_b = ẋ_b - w ṡ_b` (a node sliding forward along the
//! yarn, `ṡ > 0`, sees material move backwards past it). Integrating
//! `½ ρ_l |·|²` over the rest length gives
//!
//! `T = (m/6) (|v_a|² + v_a·v_b + |v_b|²) = ½ q̇ᵀ M(q) q̇`,
//! `M = (m/6) [[2A, A], [A, 2A]]`, `A = J_wᵀ J_w = [[I₃, -w], [-wᵀ, wᵀw]]`,
//! `J_w = [I₃, -w]` (3x4) [SJLP11, CLMMO14].
//!
//! `M` is symmetric positive semi-definite with eigenvalues
//! `(m/6)·{1, 1, 1+|w|², 3, 3, 3(1+|w|²), 0, 0}` (Kronecker product of
//! `[[2,1],[1,2]]` with `A`, whose eigenvalues are `{1, 1, 1+|w|², 0}`): rank
//! 6. The null space `q̇ = (w α, α, w β, β)` are node motions that follow the
//! material (`v_a = v_b = 0`): no material moves, so no kinetic energy. One
//! segment alone is therefore singular; along a yarn the neighbouring segments
//! and the elastic terms fix the arc-length DOFs (and an isolated segment with
//! free `s` is ill-posed, see the solver's zero-mass check).
//!
//! # Euler-Lagrange inertia terms
//!
//! Because `M` depends on `q`, Lagrange's equations
//! `d/dt(∂T/∂q̇) - ∂T/∂q = f` read `M q̈ = f + f_in` with the generalised
//! inertial force [SBO17 eq. 1]
//!
//! `f_in = ∇_q T - Ṁ q̇`, `Ṁ q̇ = Σ_k (∂M/∂q_k) q̇_k q̇`.
//!
//! `Ṁ q̇` is the rate of change of the momentum `p = M q̇` caused by the
//! configuration changing under a constant `q̇` (mass entering or leaving the
//! segment as `Δu` changes, and the material direction `w` turning);
//! `∇_q T` is the change of kinetic energy with configuration at fixed `q̇`
//! (e.g. the momentum flux carried by yarn sliding through a crossing). They
//! are quadratic in `q̇` (Coriolis/centrifugal-type forces), do no net work
//! (`q̇·f_in = -½ q̇ᵀṀq̇ = -q̇·∇_q T`, so `dT/dt = q̇·f`), and vanish
//! identically on the positions when no node slides (`ṡ_a = ṡ_b = 0` gives
//! `f_in` zero on `x_a`, `x_b`; only the `s` rows remain, and those are
//! Dirichlet rows for non-sliding yarns). With `c = ρ_l/6`,
//! `n_a = 2v_a + v_b`, `n_b = v_a + 2v_b`, `κ_a = 2ṡ_a + ṡ_b`,
//! `κ_b = ṡ_a + 2ṡ_b`, `δ = ṡ_b - ṡ_a`, `e = Δẋ - w δ = Δu ẇ`,
//! `P = |v_a|² + v_a·v_b + |v_b|²`, `g = ṡ_a n_a + ṡ_b n_b`:
//!
//! - `∇_q T = c [g, -(P + w·g), -g, P + w·g]`;
//! - `Ṁ q̇ = c [δ n_a - κ_a e, -e·n_a - w·(δ n_a - κ_a e), δ n_b - κ_b e, -e·n_b - w·(δ n_b - κ_b e)]`;
//! - `f_in = c [φ_a, ψ_a - w·φ_a, φ_b, ψ_b - w·φ_b]` with
//!   `φ_a = g - δ n_a + κ_a e`, `φ_b = -g - δ n_b + κ_b e`,
//!   `ψ_a = -P + e·n_a`, `ψ_b = P + e·n_b`.
//!
//! `f_in` depends on `q` only through `w` (not on `Δu` at fixed `w`), which
//! makes its position Jacobian a rank-3 product `(∂f_in/∂w)(∂w/∂q)`, see
//! [`inertia_force_jacobians`].

use nalgebra::{Matrix3, Matrix4, SMatrix, SVector, Vector3};

/// Number of generalised coordinates of a segment.
pub const DOFS: usize = 8;

/// Quantities shared by the inertia functions (see the module docs for the
/// symbols).
struct Kin {
    w: Vector3<f64>,
    sa: f64,
    sb: f64,
    na: Vector3<f64>,
    nb: Vector3<f64>,
    e: Vector3<f64>,
    delta: f64,
    ka: f64,
    kb: f64,
    p: f64,
}

#[inline]
fn stretch_vector(q: &SVector<f64, DOFS>) -> (Vector3<f64>, f64) {
    let du = q[7] - q[3];
    let w = Vector3::new(q[4] - q[0], q[5] - q[1], q[6] - q[2]) / du;
    (w, du)
}

#[inline]
fn kin(q: &SVector<f64, DOFS>, qdot: &SVector<f64, DOFS>) -> Kin {
    let (w, _) = stretch_vector(q);
    let (sa, sb) = (qdot[3], qdot[7]);
    let xa = Vector3::new(qdot[0], qdot[1], qdot[2]);
    let xb = Vector3::new(qdot[4], qdot[5], qdot[6]);
    let va = xa - w * sa;
    let vb = xb - w * sb;
    let delta = sb - sa;
    Kin {
        w,
        sa,
        sb,
        na: va * 2.0 + vb,
        nb: va + vb * 2.0,
        e: (xb - xa) - w * delta,
        delta,
        ka: 2.0 * sa + sb,
        kb: sa + 2.0 * sb,
        p: va.norm_squared() + va.dot(&vb) + vb.norm_squared(),
    }
}

/// Assembles an 8-vector from the node parts `[x_a, s_a, x_b, s_b]`.
#[inline]
fn pack(xa: &Vector3<f64>, sa: f64, xb: &Vector3<f64>, sb: f64) -> SVector<f64, DOFS> {
    SVector::from([xa.x, xa.y, xa.z, sa, xb.x, xb.y, xb.z, sb])
}

/// Lumped mass per endpoint, `ρ_l Δu / 2` (kg), of a segment of rest length
/// `du` (m) and linear density `rho_l` (kg/m).
///
/// A convenience for diagonal preconditioners and for the solver's zero-mass
/// check (DESIGN §4: a free DOF with no mass is an error). It is the
/// row sum of the consistent translational block of [`mass_matrix`]; it is
/// **not** the mass of the arc-length DOFs, whose consistent diagonal is
/// `(ρ_l Δu/3)|w|²` (it scales with the squared stretch and vanishes for a
/// degenerate chord).
pub fn lumped_mass(rho_l: f64, du: f64) -> f64 {
    0.5 * rho_l * du
}

/// The segment's consistent mass matrix `M = (ρ_l Δu/6) [[2A, A], [A, 2A]]`,
/// `A = [[I₃, -w], [-wᵀ, wᵀw]]` (kg; shape 8x8, layout in the module docs)
/// [SJLP11, CLMMO14, DESIGN §4].
///
/// `rho_l` is the linear density `ρ π R²` (kg/m). Symmetric PSD of rank 6
/// (eigenvalues in the module docs). Requires `Δu > 0`.
pub fn mass_matrix(rho_l: f64, q: &SVector<f64, DOFS>) -> SMatrix<f64, DOFS, DOFS> {
    let (w, du) = stretch_vector(q);
    let mut a = Matrix4::<f64>::identity();
    for i in 0..3 {
        a[(i, 3)] = -w[i];
        a[(3, i)] = -w[i];
    }
    a[(3, 3)] = w.norm_squared();
    let c = rho_l * du / 6.0;
    let mut m = SMatrix::<f64, DOFS, DOFS>::zeros();
    for (bi, bj, f) in [(0, 0, 2.0), (0, 4, 1.0), (4, 0, 1.0), (4, 4, 2.0)] {
        m.fixed_view_mut::<4, 4>(bi, bj).copy_from(&(a * (c * f)));
    }
    m
}

/// Kinetic energy `T = ½ q̇ᵀ M(q) q̇ = (ρ_l Δu/6)(|v_a|² + v_a·v_b + |v_b|²)`
/// (J), with the nodes' material velocities `v = ẋ - w ṡ` (module docs)
/// [SJLP11, DESIGN §4]. `rho_l` in kg/m, `qdot` in m/s; requires `Δu > 0`.
pub fn kinetic_energy(rho_l: f64, q: &SVector<f64, DOFS>, qdot: &SVector<f64, DOFS>) -> f64 {
    let du = q[7] - q[3];
    rho_l * du / 6.0 * kin(q, qdot).p
}

/// Generalised momentum `p = ∂T/∂q̇ = M(q) q̇` (kg·m/s, shape 8), without
/// forming `M`: `p_x = (ρ_l Δu/6) n`, `p_s = -w·p_x` per node, with
/// `n_a = 2v_a + v_b`, `n_b = v_a + 2v_b` [SJLP11, DESIGN §4]. Requires `Δu > 0`.
pub fn momentum(
    rho_l: f64,
    q: &SVector<f64, DOFS>,
    qdot: &SVector<f64, DOFS>,
) -> SVector<f64, DOFS> {
    let du = q[7] - q[3];
    let k = kin(q, qdot);
    let c = rho_l * du / 6.0;
    let (pa, pb) = (k.na * c, k.nb * c);
    pack(&pa, -k.w.dot(&pa), &pb, -k.w.dot(&pb))
}

/// `∇_q T` at fixed `q̇` (N, shape 8):
/// `(ρ_l/6) [g, -(P + w·g), -g, P + w·g]` (symbols in the module docs)
/// [SBO17 eq. 1]. The `s` entries are the kinetic-energy change from
/// material entering the segment; for a rigid translation `V` without
/// sliding they are `∓ ρ_l |V|²/2` (they cancel between consecutive segments
/// of a uniformly translating yarn). Requires `Δu > 0`.
pub fn kinetic_energy_gradient(
    rho_l: f64,
    q: &SVector<f64, DOFS>,
    qdot: &SVector<f64, DOFS>,
) -> SVector<f64, DOFS> {
    let k = kin(q, qdot);
    let c = rho_l / 6.0;
    let g = k.na * k.sa + k.nb * k.sb;
    let s = c * (k.p + k.w.dot(&g));
    pack(&(g * c), -s, &(g * -c), s)
}

/// `Ṁ q̇ = Σ_k (∂M/∂q_k) q̇_k q̇` (N, shape 8): the change of the momentum
/// `M q̇` along the motion at constant `q̇` [SBO17 eq. 1]. Closed form per
/// node `i ∈ {a, b}`: `r_x = (ρ_l/6)(δ n_i - κ_i e)`,
/// `r_s = -(ρ_l/6) e·n_i - w·r_x` (symbols in the module docs; the first
/// term of `r_x` is mass inflow `ṁ = ρ_l δ`, the second the turning of `w`,
/// `ẇ = e/Δu`). Requires `Δu > 0`.
pub fn mass_derivative_times_velocity(
    rho_l: f64,
    q: &SVector<f64, DOFS>,
    qdot: &SVector<f64, DOFS>,
) -> SVector<f64, DOFS> {
    let k = kin(q, qdot);
    let c = rho_l / 6.0;
    let ra = (k.na * k.delta - k.e * k.ka) * c;
    let rb = (k.nb * k.delta - k.e * k.kb) * c;
    pack(
        &ra,
        -c * k.e.dot(&k.na) - k.w.dot(&ra),
        &rb,
        -c * k.e.dot(&k.nb) - k.w.dot(&rb),
    )
}

/// Generalised inertial force `f_in = ∇_q T - Ṁ q̇` (N, shape 8), so that
/// the equations of motion read `M q̈ = f + f_in` [SBO17 eq. 1, DESIGN §4].
///
/// Computed from the simplified closed form
/// `f_in = (ρ_l/6) [φ_a, ψ_a - w·φ_a, φ_b, ψ_b - w·φ_b]` (module docs),
/// independently of [`kinetic_energy_gradient`] and
/// [`mass_derivative_times_velocity`] (tests compare them). Quadratic in
/// `q̇`; zero on `x_a`, `x_b` when `ṡ_a = ṡ_b = 0`. Requires `Δu > 0`.
pub fn inertia_force(
    rho_l: f64,
    q: &SVector<f64, DOFS>,
    qdot: &SVector<f64, DOFS>,
) -> SVector<f64, DOFS> {
    let k = kin(q, qdot);
    let c = rho_l / 6.0;
    let g = k.na * k.sa + k.nb * k.sb;
    let phi_a = g - k.na * k.delta + k.e * k.ka;
    let phi_b = -g - k.nb * k.delta + k.e * k.kb;
    let psi_a = -k.p + k.e.dot(&k.na);
    let psi_b = k.p + k.e.dot(&k.nb);
    pack(
        &(phi_a * c),
        c * (psi_a - k.w.dot(&phi_a)),
        &(phi_b * c),
        c * (psi_b - k.w.dot(&phi_b)),
    )
}

/// Jacobians of [`inertia_force`] for an implicit solver: `(∂f_in/∂q,
/// ∂f_in/∂q̇)`, each 8x8 (row = force component, column = coordinate; units
/// N/m and N·s/m) [SBO17 eq. 1].
///
/// Position Jacobian: `f_in` depends on `q` only through `w`, so
/// `∂f_in/∂q = (1/Δu) G [-J_w, J_w]`, `J_w = [I₃, -w]`, with the 8x3
/// `G = ∂f_in/∂w = (ρ_l/6) [-K I₃; (K w - 2κ_a e)ᵀ; K I₃; (-K w - 2κ_b e)ᵀ]`,
/// `K = 2(ṡ_a² + ṡ_a ṡ_b + ṡ_b²)`; it vanishes when nothing slides.
///
/// Velocity Jacobian (`f_in` is quadratic in `q̇`, so `(∂f_in/∂q̇) q̇ = 2 f_in`),
/// node blocks in the module's symbols:
/// - row `x_a`: `[-2δ I, 2(n_a + δ w + e), 2κ_a I, n_b - n_a + e - 2κ_a w]`;
/// - row `x_b`: `[-2κ_b I, n_b - n_a + e + 2κ_b w, -2δ I, 2(-n_b + δ w + e)]`;
/// - row `s_a`: `[2(-n_a + e + δ w)ᵀ, -4 w·e - 2δ|w|², (n_a - n_b + e - 2κ_a w)ᵀ, -2 w·e + 2κ_a|w|²]`;
/// - row `s_b`: `[(n_a - n_b + e + 2κ_b w)ᵀ, -2 w·e - 2κ_b|w|², 2(n_b + e + δ w)ᵀ, -4 w·e - 2δ|w|²]`;
///
/// all times `ρ_l/6`. Neither matrix is symmetric (gyroscopic-type terms);
/// a solver that needs an SPD system must decide what to keep (e.g. the
/// symmetric part, or treat `f_in` explicitly). Their size relative to
/// `M/h` is of order `h |ṡ| / Δu`. Requires `Δu > 0`.
pub fn inertia_force_jacobians(
    rho_l: f64,
    q: &SVector<f64, DOFS>,
    qdot: &SVector<f64, DOFS>,
) -> (SMatrix<f64, DOFS, DOFS>, SMatrix<f64, DOFS, DOFS>) {
    let (_, du) = stretch_vector(q);
    let k = kin(q, qdot);
    let c = rho_l / 6.0;
    let (w, e, na, nb) = (k.w, k.e, k.na, k.nb);
    let (d, ka, kb) = (k.delta, k.ka, k.kb);
    let ww = w.norm_squared();
    let we = w.dot(&e);
    let eye = Matrix3::<f64>::identity();

    // Position Jacobian: G (8x3) times ∂w/∂q = (1/Δu)[-J_w, J_w] (3x8).
    let kk = 2.0 * (k.sa * k.sa + k.sa * k.sb + k.sb * k.sb);
    let ga = w * kk - e * (2.0 * ka);
    let gb = -w * kk - e * (2.0 * kb);
    let mut g = SMatrix::<f64, DOFS, 3>::zeros();
    g.fixed_view_mut::<3, 3>(0, 0).copy_from(&(eye * -kk));
    g.fixed_view_mut::<3, 3>(4, 0).copy_from(&(eye * kk));
    g.set_row(3, &ga.transpose());
    g.set_row(7, &gb.transpose());
    let mut dw = SMatrix::<f64, 3, DOFS>::zeros();
    for i in 0..3 {
        dw[(i, i)] = -1.0;
        dw[(i, 4 + i)] = 1.0;
        dw[(i, 3)] = w[i];
        dw[(i, 7)] = -w[i];
    }
    let dq = g * dw * (c / du);

    // Velocity Jacobian, node blocks (rows x_a, s_a, x_b, s_b).
    let mut dv = SMatrix::<f64, DOFS, DOFS>::zeros();
    let mut put3 = |r: usize, col: usize, m: Matrix3<f64>| {
        dv.fixed_view_mut::<3, 3>(r, col).copy_from(&m);
    };
    put3(0, 0, eye * (-2.0 * d));
    put3(0, 4, eye * (2.0 * ka));
    put3(4, 0, eye * (-2.0 * kb));
    put3(4, 4, eye * (-2.0 * d));
    let cols_x = [
        (0, 3, (na + w * d + e) * 2.0),
        (0, 7, nb - na + e - w * (2.0 * ka)),
        (4, 3, nb - na + e + w * (2.0 * kb)),
        (4, 7, (-nb + w * d + e) * 2.0),
    ];
    for (r, col, v) in cols_x {
        dv.fixed_view_mut::<3, 1>(r, col).copy_from(&v);
    }
    let rows_s = [
        (3, 0, (-na + e + w * d) * 2.0),
        (3, 4, na - nb + e - w * (2.0 * ka)),
        (7, 0, na - nb + e + w * (2.0 * kb)),
        (7, 4, (nb + e + w * d) * 2.0),
    ];
    for (r, col, v) in rows_s {
        dv.fixed_view_mut::<1, 3>(r, col).copy_from(&v.transpose());
    }
    dv[(3, 3)] = -4.0 * we - 2.0 * d * ww;
    dv[(3, 7)] = -2.0 * we + 2.0 * ka * ww;
    dv[(7, 3)] = -2.0 * we - 2.0 * kb * ww;
    dv[(7, 7)] = -4.0 * we - 2.0 * d * ww;
    (dq, dv * c)
}
