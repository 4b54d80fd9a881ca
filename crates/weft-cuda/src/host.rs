//! The kernel headers' element math compiled for the host (by `build.rs`
//! with the system C++ compiler, CUDA qualifiers defined away) and exposed
//! through the shim `csrc/host_shim.cpp`.
//!
//! This is what the host parity tests compare with `weft-potentials`
//! element by element: the very source the GPU kernels include
//! (`kernels/weft_elements.cuh`, `kernels/weft_collide.cuh`,
//! `kernels/weft_math.cuh`), not a copy. Every matrix here is **row-major**
//! (entry `(r, c)` of an `R x C` matrix at `r * C + c`); element layouts are
//! those of `weft-potentials` (documented per element in the headers).
//!
//! When no C++ compiler was available at build time, [`AVAILABLE`] is
//! `false` and every function returns [`HostError::Unavailable`].

#![cfg_attr(not(weft_host_shim), allow(unused_mut, unused_variables))]

use thiserror::Error;
use weft_solver::collide::RepulsionLaw;

/// Whether the host shim was compiled (a C++ compiler was found at build
/// time).
pub const AVAILABLE: bool = cfg!(weft_host_shim);

/// Why a host evaluation could not run.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum HostError {
    /// The crate was built without a C++ compiler, so the shim over the
    /// kernel headers does not exist.
    #[error(
        "the host shim over kernels/*.cuh was not compiled (no C++ compiler at build time); \
         install g++ and rebuild weft-cuda"
    )]
    Unavailable,
    /// `project_psd` was asked for a size the shim does not instantiate.
    #[error("project_psd is instantiated for n in {{2, 5, 6, 7, 8, 9, 12}}, got n = {0}")]
    UnsupportedSize(usize),
}

/// Energy (J), gradient (shape `N`) and Hessian (`N x N`, row-major) of one
/// element, from the kernel headers.
#[derive(Clone, Debug, PartialEq)]
pub struct HostEval {
    /// Potential energy `V` (J).
    pub energy: f64,
    /// `∇V`, length `N`.
    pub gradient: Vec<f64>,
    /// `∇²V`, `N x N` row-major.
    pub hessian: Vec<f64>,
    /// Whether the small-angle vector strain was used (bending, shear;
    /// `false` for the other elements).
    pub small_angle: bool,
}

/// Strain-rate dissipation of one element [SBO17 eq. 6-11], from the kernel
/// headers.
#[derive(Clone, Debug, PartialEq)]
pub struct HostDissipation {
    /// Strain rate `ε̇` (length `M`: 1 scalar, 3 for the small-angle strains).
    pub rate: Vec<f64>,
    /// `W = ½ Ω k_d |ε̇|²` (W).
    pub potential: f64,
    /// `f_d = -Ω k_d ∇εᵀ ε̇` (N), length `N`.
    pub force: Vec<f64>,
    /// `-Ω k_d ∇εᵀ∇ε` (N·s/m), `N x N` row-major.
    pub velocity_jacobian: Vec<f64>,
    /// `-Ω k_d (Σ ε̇ᵢ ∇²εᵢ)⁺` (N/m), `N x N` row-major.
    pub position_jacobian: Vec<f64>,
    /// Whether the small-angle vector strain was used.
    pub small_angle: bool,
}

/// A strain with Jacobian and component Hessians, from the kernel headers.
#[derive(Clone, Debug, PartialEq)]
pub struct HostStrain {
    /// `ε`, length `M`.
    pub value: Vec<f64>,
    /// `∇ε`, `M x N` row-major.
    pub jacobian: Vec<f64>,
    /// `∇²εᵢ` for each component, `M` blocks of `N x N` row-major.
    pub hessians: Vec<f64>,
}

/// Shear jamming parameters as the kernels derive them from the geometry
/// (`shear::Jamming::from_geometry`, kept only when the onset exceeds the
/// small-angle threshold, as the CPU assembly does).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostJamming {
    /// Whether jamming applies.
    pub enabled: bool,
    /// Onset angle `ψ_on` (rad).
    pub onset: f64,
    /// Locking angle `ψ_lock` (rad).
    pub lock: f64,
    /// Gain `γ`.
    pub gain: f64,
}

/// A collider as the kernels take it (`struct Collider` of
/// `kernels/weft_collide.cuh`, same layout): world frame at the evaluation
/// time. `kind` 0 plane (`a` a point, `b` the unit outward normal), 1 sphere
/// (`a` the centre), 2 capsule (axis `a`..`b`); `radius` (m), `stiffness`
/// (N/m), `friction` `μ`, `friction_speed` `ε_v` (m/s), `margin` `δ` (m);
/// velocity field `lin + ang × (x - origin)` (m/s).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GpuCollider {
    /// 0 plane, 1 sphere, 2 capsule.
    pub kind: i32,
    /// Padding (keeps the C layout explicit).
    pub pad: i32,
    /// Plane point, sphere centre or capsule end `a` (m).
    pub a: [f64; 3],
    /// Plane unit normal or capsule end `b` (m).
    pub b: [f64; 3],
    /// Sphere or capsule radius (m).
    pub radius: f64,
    /// Penalty stiffness (N/m).
    pub stiffness: f64,
    /// Coulomb coefficient.
    pub friction: f64,
    /// Friction regularisation speed (m/s).
    pub friction_speed: f64,
    /// Contact margin (m).
    pub margin: f64,
    /// Linear velocity of the collider frame (m/s).
    pub lin: [f64; 3],
    /// Angular velocity (rad/s).
    pub ang: [f64; 3],
    /// Origin of the rotation (m).
    pub origin: [f64; 3],
}

/// Penalty contact and friction of one node against one collider.
#[derive(Clone, Debug, PartialEq)]
pub struct HostNodeContact {
    /// `½ k g²` (J).
    pub energy: f64,
    /// `-k g n` (N).
    pub gradient: [f64; 3],
    /// `k n nᵀ` (N/m), row-major.
    pub hessian: [f64; 9],
    /// Friction force (N).
    pub friction: [f64; 3],
    /// `-∂f/∂ẋ` (N·s/m), row-major.
    pub damping: [f64; 9],
    /// Tangential slip velocity (m/s).
    pub slip: [f64; 3],
}

#[cfg(weft_host_shim)]
mod ffi {
    use super::GpuCollider;
    unsafe extern "C" {
        pub fn weft_stretch_elastic(k: f64, q: *const f64, e: *mut f64, g: *mut f64, h: *mut f64);
        pub fn weft_stretch_elastic_projected(
            k: f64,
            q: *const f64,
            e: *mut f64,
            g: *mut f64,
            h: *mut f64,
        );
        pub fn weft_stretch_clamped_strain_hessian(q: *const f64, w: f64, out: *mut f64);
        pub fn weft_stretch_dissipation(
            kd: f64,
            q: *const f64,
            qd: *const f64,
            rate: *mut f64,
            w: *mut f64,
            f: *mut f64,
            vj: *mut f64,
            pj: *mut f64,
        );
        pub fn weft_stretch_dissipation_over_step(
            kd: f64,
            q: *const f64,
            qs: *const f64,
            qd: *const f64,
            h: f64,
            exact: i32,
            rate: *mut f64,
            w: *mut f64,
            f: *mut f64,
            vj: *mut f64,
            pj: *mut f64,
        );
        pub fn weft_bend_scalar_strain(q: *const f64, v: *mut f64, j: *mut f64, h: *mut f64);
        pub fn weft_bend_vector_strain(q: *const f64, v: *mut f64, j: *mut f64, h: *mut f64);
        pub fn weft_bend_step_threshold(q_n: *const f64, thr: f64) -> f64;
        pub fn weft_bend_elastic(
            k: f64,
            q: *const f64,
            thr: f64,
            e: *mut f64,
            g: *mut f64,
            h: *mut f64,
        ) -> i32;
        pub fn weft_bend_elastic_projected(
            k: f64,
            q: *const f64,
            thr: f64,
            e: *mut f64,
            g: *mut f64,
            h: *mut f64,
        ) -> i32;
        pub fn weft_bend_dissipation(
            kd: f64,
            q: *const f64,
            qd: *const f64,
            thr: f64,
            rate: *mut f64,
            w: *mut f64,
            f: *mut f64,
            vj: *mut f64,
            pj: *mut f64,
        ) -> i32;
        pub fn weft_stvk_elastic(
            b: *const f64,
            area: f64,
            lt: *const f64,
            q: *const f64,
            e: *mut f64,
            g: *mut f64,
            h: *mut f64,
        );
        pub fn weft_stvk_elastic_projected(
            b: *const f64,
            area: f64,
            lt: *const f64,
            q: *const f64,
            e: *mut f64,
            g: *mut f64,
            h: *mut f64,
        );
        pub fn weft_stvk_dissipation(
            b: *const f64,
            area: f64,
            lt_d: *const f64,
            q: *const f64,
            qd: *const f64,
            rate: *mut f64,
            w: *mut f64,
            f: *mut f64,
            vj: *mut f64,
            pj: *mut f64,
        );
        pub fn weft_hinge_angle(q: *const f64, v: *mut f64, j: *mut f64, h: *mut f64);
        pub fn weft_hinge_elastic(
            k: f64,
            measure: f64,
            rest: f64,
            projected: i32,
            q: *const f64,
            e: *mut f64,
            g: *mut f64,
            h: *mut f64,
        );
        pub fn weft_hinge_dissipation(
            kd: f64,
            measure: f64,
            q: *const f64,
            qd: *const f64,
            rate: *mut f64,
            w: *mut f64,
            f: *mut f64,
            vj: *mut f64,
            pj: *mut f64,
        );
        pub fn weft_shear_scalar_strain(q: *const f64, v: *mut f64, j: *mut f64, h: *mut f64);
        pub fn weft_shear_small_angle_strain(q: *const f64, v: *mut f64, j: *mut f64, h: *mut f64);
        pub fn weft_shear_jamming_from_geometry(r: f64, l: f64, thr: f64, out: *mut f64);
        pub fn weft_shear_step_threshold(
            q_n: *const f64,
            thr: f64,
            jam: i32,
            onset: f64,
            lock: f64,
            gain: f64,
        ) -> f64;
        pub fn weft_shear_elastic(
            k: f64,
            l: f64,
            thr: f64,
            jam: i32,
            onset: f64,
            lock: f64,
            gain: f64,
            q: *const f64,
            e: *mut f64,
            g: *mut f64,
            h: *mut f64,
        ) -> i32;
        pub fn weft_shear_elastic_projected(
            k: f64,
            l: f64,
            thr: f64,
            jam: i32,
            onset: f64,
            lock: f64,
            gain: f64,
            q: *const f64,
            e: *mut f64,
            g: *mut f64,
            h: *mut f64,
        ) -> i32;
        pub fn weft_shear_dissipation(
            kd: f64,
            l: f64,
            thr: f64,
            q: *const f64,
            qd: *const f64,
            rate: *mut f64,
            w: *mut f64,
            f: *mut f64,
            vj: *mut f64,
            pj: *mut f64,
        ) -> i32;
        pub fn weft_contact_elastic(
            k: f64,
            d: f64,
            l: f64,
            q: *const f64,
            e: *mut f64,
            g: *mut f64,
            h: *mut f64,
        );
        pub fn weft_contact_dissipation(
            kd: f64,
            d: f64,
            l: f64,
            q: *const f64,
            qd: *const f64,
            rate: *mut f64,
            w: *mut f64,
            f: *mut f64,
            vj: *mut f64,
            pj: *mut f64,
        );
        pub fn weft_anchor_elastic(k: f64, s: f64, a: f64, e: *mut f64, g: *mut f64, h: *mut f64);
        pub fn weft_anchor_update(s: f64, a: f64, k: f64, mu: f64, fn_: f64) -> f64;
        pub fn weft_segment_strain(q: *const f64, a: u32, b: u32, slot: i32) -> f64;
        pub fn weft_yarn_tension_at(
            q: *const f64,
            prev: u32,
            node: u32,
            next: u32,
            slot: i32,
            k_s: f64,
            t: *mut f64,
            l: *mut f64,
        );
        pub fn weft_yarn_normal_pull(
            t: f64,
            op: f64,
            o: f64,
            on: f64,
            l_in: f64,
            l_out: f64,
            radius: f64,
        ) -> f64;
        pub fn weft_plain_crossing_normal_force(
            tw: f64,
            lw: f64,
            tf: f64,
            lf: f64,
            side: f64,
            radius: f64,
            floor: f64,
        ) -> f64;
        pub fn weft_gravity(
            q: *const f64,
            rho: f64,
            gv: *const f64,
            e: *mut f64,
            g: *mut f64,
            h: *mut f64,
        );
        pub fn weft_mass_matrix(rho: f64, q: *const f64, m: *mut f64);
        pub fn weft_inertia_force(rho: f64, q: *const f64, qd: *const f64, out: *mut f64);
        pub fn weft_project_psd(n: i32, a: *const f64, out: *mut f64) -> i32;
        pub fn weft_node_contact(
            c: *const GpuCollider,
            x: *const f64,
            xd: *const f64,
            offset: f64,
            e: *mut f64,
            g: *mut f64,
            h: *mut f64,
            fric: *mut f64,
            damp: *mut f64,
            slip: *mut f64,
        ) -> i32;
        pub fn weft_segment_repulsion(
            q: *const f64,
            d0: f64,
            k: f64,
            law: i32,
            e: *mut f64,
            g: *mut f64,
            hdiag: *mut f64,
        ) -> i32;
        pub fn weft_face_repulsion(
            q: *const f64,
            d0: f64,
            k: f64,
            law: i32,
            e: *mut f64,
            g: *mut f64,
            hdiag: *mut f64,
        ) -> i32;
    }
}

/// Calls `$f` in the shim when it was built, else returns
/// [`HostError::Unavailable`].
macro_rules! shim {
    ($body:expr) => {{
        #[cfg(weft_host_shim)]
        {
            #[allow(unused_unsafe)]
            // SAFETY: every pointer passed comes from a live array or Vec of
            // the length the shim documents for that argument.
            Ok(unsafe { $body })
        }
        #[cfg(not(weft_host_shim))]
        {
            Err(HostError::Unavailable)
        }
    }};
}

/// What a shim call returns besides its buffers: nothing, or the `int`
/// small-angle branch flag of the bending and shear elements.
trait SmallAngleFlag {
    /// Whether the small-angle (vector strain) branch was taken.
    fn small_angle(self) -> bool;
}

impl SmallAngleFlag for () {
    fn small_angle(self) -> bool {
        false
    }
}

impl SmallAngleFlag for i32 {
    fn small_angle(self) -> bool {
        self != 0
    }
}

/// Runs a shim call `fill(energy, gradient, hessian)` on zeroed buffers of
/// an `n`-DOF element (`n`, `n x n`) and collects them.
#[cfg_attr(not(weft_host_shim), allow(dead_code))]
fn filled_eval<F: SmallAngleFlag>(
    n: usize,
    fill: impl FnOnce(*mut f64, *mut f64, *mut f64) -> F,
) -> HostEval {
    let mut o = HostEval {
        energy: 0.0,
        gradient: vec![0.0; n],
        hessian: vec![0.0; n * n],
        small_angle: false,
    };
    o.small_angle = fill(
        &mut o.energy,
        o.gradient.as_mut_ptr(),
        o.hessian.as_mut_ptr(),
    )
    .small_angle();
    o
}

/// Runs a shim call `fill(rate, potential, force, velocity_jacobian,
/// position_jacobian)` on zeroed buffers for an `m`-component strain rate
/// of an `n`-DOF element; off the small-angle branch only the first (scalar)
/// rate is kept.
#[cfg_attr(not(weft_host_shim), allow(dead_code))]
fn filled_dissipation<F: SmallAngleFlag>(
    m: usize,
    n: usize,
    fill: impl FnOnce(*mut f64, *mut f64, *mut f64, *mut f64, *mut f64) -> F,
) -> HostDissipation {
    let mut o = HostDissipation {
        rate: vec![0.0; m],
        potential: 0.0,
        force: vec![0.0; n],
        velocity_jacobian: vec![0.0; n * n],
        position_jacobian: vec![0.0; n * n],
        small_angle: false,
    };
    o.small_angle = fill(
        o.rate.as_mut_ptr(),
        &mut o.potential,
        o.force.as_mut_ptr(),
        o.velocity_jacobian.as_mut_ptr(),
        o.position_jacobian.as_mut_ptr(),
    )
    .small_angle();
    if !o.small_angle {
        o.rate.truncate(1);
    }
    o
}

/// Runs a shim call `fill(value, jacobian, hessians)` on zeroed buffers for
/// an `m`-component strain of an `n`-DOF element (`m`, `m x n`,
/// `m x n x n`).
#[cfg_attr(not(weft_host_shim), allow(dead_code))]
fn filled_strain(
    m: usize,
    n: usize,
    fill: impl FnOnce(*mut f64, *mut f64, *mut f64),
) -> HostStrain {
    let mut s = HostStrain {
        value: vec![0.0; m],
        jacobian: vec![0.0; m * n],
        hessians: vec![0.0; m * n * n],
    };
    fill(
        s.value.as_mut_ptr(),
        s.jacobian.as_mut_ptr(),
        s.hessians.as_mut_ptr(),
    );
    s
}

/// Jamming switched off (the shim's `jam = 0`).
#[cfg(weft_host_shim)]
const NO_JAMMING: HostJamming = HostJamming {
    enabled: false,
    onset: 0.0,
    lock: 0.0,
    gain: 0.0,
};

/// Stretch elastic energy `½ k_s Δu (|w| - 1)²` of a segment
/// `q = [x_a, s_a, x_b, s_b]` (m); `k_s` in N [SBO17 eq. 12-13].
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn stretch_elastic(k_s: f64, q: &[f64; 8]) -> Result<HostEval, HostError> {
    shim!(filled_eval(8, |energy, grad, hess| {
        ffi::weft_stretch_elastic(k_s, q.as_ptr(), energy, grad, hess)
    }))
}

/// Stretch energy and gradient as [`stretch_elastic`] with the PSD Hessian
/// approximation of `weft_potentials::elastic_projected` (N/m, 8x8
/// row-major; `stretch::energy_projected`): closed-form clamp of the
/// stress-weighted strain Hessian, the second-order Eulerian term dropped.
/// `k_s` in N, `q` in m.
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn stretch_elastic_projected(k_s: f64, q: &[f64; 8]) -> Result<HostEval, HostError> {
    shim!(filled_eval(8, |energy, grad, hess| {
        ffi::weft_stretch_elastic_projected(k_s, q.as_ptr(), energy, grad, hess)
    }))
}

/// The stress-weighted strain Hessian `w ∇²ε` of a stretch segment `q`
/// (m) projected to PSD in closed form (`stretch::clamped_strain_hessian`),
/// 8x8 row-major, 1/m² times the unit of the weight `w` (a strain or a
/// strain rate) [SBO18 §3.4].
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn stretch_clamped_strain_hessian(q: &[f64; 8], w: f64) -> Result<Vec<f64>, HostError> {
    let mut out = vec![0.0; 64];
    shim!({
        ffi::weft_stretch_clamped_strain_hessian(q.as_ptr(), w, out.as_mut_ptr());
        out
    })
}

/// Stretch dissipation with the closed-form clamp; `k_d` in N·s, `qdot`
/// in m/s [SBO17 eq. 6-14].
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn stretch_dissipation(
    k_d: f64,
    q: &[f64; 8],
    qdot: &[f64; 8],
) -> Result<HostDissipation, HostError> {
    shim!(filled_dissipation(1, 8, |rate, w, f, vj, pj| {
        ffi::weft_stretch_dissipation(k_d, q.as_ptr(), qdot.as_ptr(), rate, w, f, vj, pj)
    }))
}

/// Stretch dissipation over one backward-Euler step of `h` (s) from
/// `q_start` to `q` (m), the assembly kernel's form
/// (`weft_potentials::stretch::dissipation_over_step`); `k_d` in N·s;
/// `qdot` (m/s) used only at `h = 0`; the position Jacobian exact when
/// `exact`, else with the closed-form clamp.
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn stretch_dissipation_over_step(
    k_d: f64,
    q: &[f64; 8],
    q_start: &[f64; 8],
    qdot: &[f64; 8],
    h: f64,
    exact: bool,
) -> Result<HostDissipation, HostError> {
    shim!(filled_dissipation(1, 8, |rate, w, f, vj, pj| {
        ffi::weft_stretch_dissipation_over_step(
            k_d,
            q.as_ptr(),
            q_start.as_ptr(),
            qdot.as_ptr(),
            h,
            i32::from(exact),
            rate,
            w,
            f,
            vj,
            pj,
        )
    }))
}

/// Scalar bending strain `2θ/D` (1/m) of `q = [x_0, s_0, x_1, s_1, x_2, s_2]`
/// with Jacobian (1x12) and Hessian (12x12) [SBO17 eq. 15-16].
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn bending_scalar_strain(q: &[f64; 12]) -> Result<HostStrain, HostError> {
    shim!(filled_strain(
        1,
        12,
        |v, j, h| ffi::weft_bend_scalar_strain(q.as_ptr(), v, j, h)
    ))
}

/// Small-angle vector bending strain `2v/D` (1/m) with Jacobian (3x12) and
/// Hessians (3 x 12x12) [SBO17 eq. 19].
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn bending_vector_strain(q: &[f64; 12]) -> Result<HostStrain, HostError> {
    shim!(filled_strain(
        3,
        12,
        |v, j, h| ffi::weft_bend_vector_strain(q.as_ptr(), v, j, h)
    ))
}

/// The switch angle (rad) that holds the bending strain chosen at the
/// step's start `q_n` over the step, as the assembly kernel applies it
/// (`bend_step_threshold`, `weft_potentials::bending::step_threshold`);
/// `threshold` in rad.
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn bending_step_threshold(q_n: &[f64; 12], threshold: f64) -> Result<f64, HostError> {
    shim!(ffi::weft_bend_step_threshold(q_n.as_ptr(), threshold))
}

/// Bending energy of the strain selected by the turning angle (vector
/// strain below `threshold`, rad); `k_b` in N·m² [SBO17 eq. 15-19].
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn bending_elastic(k_b: f64, q: &[f64; 12], threshold: f64) -> Result<HostEval, HostError> {
    shim!(filled_eval(12, |energy, grad, hess| {
        ffi::weft_bend_elastic(k_b, q.as_ptr(), threshold, energy, grad, hess)
    }))
}

/// Bending energy and gradient as [`bending_elastic`] with the PSD Hessian
/// approximation (`bending::energy_projected`, 12x12 row-major, N/m): the
/// stress-weighted strain Hessian clamped in the 7 reduced variables.
/// `k_b` in N·m², `threshold` in rad.
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn bending_elastic_projected(
    k_b: f64,
    q: &[f64; 12],
    threshold: f64,
) -> Result<HostEval, HostError> {
    shim!(filled_eval(12, |energy, grad, hess| {
        ffi::weft_bend_elastic_projected(k_b, q.as_ptr(), threshold, energy, grad, hess)
    }))
}

/// Bending strain-rate damping with the selected strain and the reduced
/// (7-variable) clamp; `k_d` in N·m²·s [SBO17 eq. 6-11, 17-21].
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn bending_dissipation(
    k_d: f64,
    q: &[f64; 12],
    qdot: &[f64; 12],
    threshold: f64,
) -> Result<HostDissipation, HostError> {
    shim!(filled_dissipation(3, 12, |rate, w, f, vj, pj| {
        ffi::weft_bend_dissipation(
            k_d,
            q.as_ptr(),
            qdot.as_ptr(),
            threshold,
            rate,
            w,
            f,
            vj,
            pj,
        )
    }))
}

/// The rest data of a StVK membrane triangle as the kernels take it
/// (`kernels/weft_elements.cuh`, `weft_potentials::stvk`): the rest-frame
/// vectors `b_k` of `F = Σ_k x_k b_kᵀ` (1/m), the rest area (m²) and the
/// moduli as `Lᵀ` with `L Lᵀ = C` (row-major, √(N/m)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostTriangle {
    /// `b_0, b_1, b_2` (2 each), 1/m.
    pub b: [f64; 6],
    /// Rest area `A` (m²).
    pub area: f64,
    /// `Lᵀ` (3x3 row-major) of the elastic moduli `C` (√(N/m)) or, for
    /// [`stvk_dissipation`], of the damping moduli `C_d` (√(N·s/m)).
    pub factor: [f64; 9],
}

/// StVK membrane energy `A ½ εᵀ C ε` (J) with gradient (9, N) and exact
/// Hessian (9x9, N/m) at `q = [x_0, x_1, x_2]` (m) [SBO18 eq. 13].
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn stvk_elastic(t: &HostTriangle, q: &[f64; 9]) -> Result<HostEval, HostError> {
    shim!(filled_eval(9, |e, g, h| {
        ffi::weft_stvk_elastic(t.b.as_ptr(), t.area, t.factor.as_ptr(), q.as_ptr(), e, g, h)
    }))
}

/// As [`stvk_elastic`] with the stress-weighted strain Hessian clamped to
/// PSD in closed form (`(Σ_c S_c G_c)⁺ ⊗ I₃`) [SBO18 §3.4].
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn stvk_elastic_projected(t: &HostTriangle, q: &[f64; 9]) -> Result<HostEval, HostError> {
    shim!(filled_eval(9, |e, g, h| {
        ffi::weft_stvk_elastic_projected(
            t.b.as_ptr(),
            t.area,
            t.factor.as_ptr(),
            q.as_ptr(),
            e,
            g,
            h,
        )
    }))
}

/// StVK strain-rate dissipation `A ½ ε̇ᵀ C_d ε̇` [SBO18 eq. 15-16] at `q`
/// (m) and `qdot` (m/s), `t.factor` the damping moduli's `L_dᵀ`: the
/// weighted rate `L_dᵀ ε̇` (3, √(N·s/m)/s), potential (W), force (N),
/// velocity Jacobian (N·s/m) and clamped position Jacobian (N/m).
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn stvk_dissipation(
    t: &HostTriangle,
    q: &[f64; 9],
    qdot: &[f64; 9],
) -> Result<HostDissipation, HostError> {
    shim!({
        let mut d = filled_dissipation(3, 9, |rate, w, f, vj, pj| {
            ffi::weft_stvk_dissipation(
                t.b.as_ptr(),
                t.area,
                t.factor.as_ptr(),
                q.as_ptr(),
                qdot.as_ptr(),
                rate,
                w,
                f,
                vj,
                pj,
            );
            // Three rate components: keep them all.
            1i32
        });
        d.small_angle = false;
        d
    })
}

/// Discrete-shell bending angle `θ` (rad) of the hinge `q = [x_0, x_1,
/// x_2, x_3]` (m) with Jacobian (1x12) and Hessian (12x12)
/// (`weft_potentials::hinge::angle`).
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn hinge_angle(q: &[f64; 12]) -> Result<HostStrain, HostError> {
    shim!(filled_strain(1, 12, |v, j, h| ffi::weft_hinge_angle(
        q.as_ptr(),
        v,
        j,
        h
    )))
}

/// Hinge energy `½ B Ω (θ - θ̄)²` (J) with gradient (N) and the exact or
/// (`projected`) PSD-projected Hessian (N/m); `rigidity` `B` in N·m,
/// `measure` `Ω` dimensionless, `rest_angle` `θ̄` in rad.
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn hinge_elastic(
    rigidity: f64,
    measure: f64,
    rest_angle: f64,
    projected: bool,
    q: &[f64; 12],
) -> Result<HostEval, HostError> {
    shim!(filled_eval(12, |e, g, h| {
        ffi::weft_hinge_elastic(
            rigidity,
            measure,
            rest_angle,
            i32::from(projected),
            q.as_ptr(),
            e,
            g,
            h,
        )
    }))
}

/// Hinge strain-rate dissipation `½ Ω k_d θ̇²` (`k_d` in N·m·s) at `q`
/// (m), `qdot` (m/s), with the position Jacobian clamped over the edge
/// coordinates.
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn hinge_dissipation(
    k_d: f64,
    measure: f64,
    q: &[f64; 12],
    qdot: &[f64; 12],
) -> Result<HostDissipation, HostError> {
    shim!(filled_dissipation(1, 12, |rate, w, f, vj, pj| {
        ffi::weft_hinge_dissipation(k_d, measure, q.as_ptr(), qdot.as_ptr(), rate, w, f, vj, pj)
    }))
}

/// Scalar shear strain `φ - π/2` of `q = [x_0, x_a, x_b]` (m) with Jacobian
/// (1x9) and Hessian (9x9) [SBO17 eq. 22-23].
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn shear_scalar_strain(q: &[f64; 9]) -> Result<HostStrain, HostError> {
    shim!(filled_strain(
        1,
        9,
        |v, j, h| ffi::weft_shear_scalar_strain(q.as_ptr(), v, j, h)
    ))
}

/// Small-angle vector shear strain `(a×b)(a·b)/|a×b|²` with Jacobian (3x9)
/// and Hessians (3 x 9x9) (DESIGN §2).
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn shear_small_angle_strain(q: &[f64; 9]) -> Result<HostStrain, HostError> {
    shim!(filled_strain(3, 9, |v, j, h| {
        ffi::weft_shear_small_angle_strain(q.as_ptr(), v, j, h)
    }))
}

/// Jamming parameters for yarn radius `radius` and spacing `spacing` (m)
/// with small-angle threshold `threshold` (rad), as the kernels build them.
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn shear_jamming(radius: f64, spacing: f64, threshold: f64) -> Result<HostJamming, HostError> {
    let mut out = [0.0; 4];
    shim!({
        ffi::weft_shear_jamming_from_geometry(radius, spacing, threshold, out.as_mut_ptr());
        HostJamming {
            enabled: out[0] != 0.0,
            onset: out[1],
            lock: out[2],
            gain: out[3],
        }
    })
}

/// The switch angle (rad) that holds the shear strain chosen at the step's
/// start `q_n` over the step, as the assembly kernel applies it
/// (`shear_step_threshold`, `weft_potentials::shear::step_threshold`);
/// `threshold` in rad, optional jamming (its onset caps the vector
/// strain's band).
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn shear_step_threshold(
    q_n: &[f64; 9],
    threshold: f64,
    jamming: Option<HostJamming>,
) -> Result<f64, HostError> {
    shim!({
        let j = jamming.unwrap_or(NO_JAMMING);
        ffi::weft_shear_step_threshold(
            q_n.as_ptr(),
            threshold,
            i32::from(j.enabled),
            j.onset,
            j.lock,
            j.gain,
        )
    })
}

/// [`shear_elastic`] (`projected = false`) or [`shear_elastic_projected`]
/// (`true`): the two shims take the same arguments.
#[cfg(weft_host_shim)]
fn shear_eval(
    projected: bool,
    k: f64,
    spacing: f64,
    threshold: f64,
    jamming: Option<HostJamming>,
    q: &[f64; 9],
) -> HostEval {
    let j = jamming.unwrap_or(NO_JAMMING);
    let shim = if projected {
        ffi::weft_shear_elastic_projected
    } else {
        ffi::weft_shear_elastic
    };
    filled_eval(9, |energy, grad, hess| {
        // SAFETY: `q` holds 9 entries and `filled_eval` passes buffers of
        // 1, 9 and 81 entries, the lengths the shim documents.
        unsafe {
            shim(
                k,
                spacing,
                threshold,
                i32::from(j.enabled),
                j.onset,
                j.lock,
                j.gain,
                q.as_ptr(),
                energy,
                grad,
                hess,
            )
        }
    })
}

/// Shear elastic energy (`Shear::elastic` of weft-potentials): stiffness
/// `k` (N), spacing `L` (m), threshold (rad), optional jamming.
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn shear_elastic(
    k: f64,
    spacing: f64,
    threshold: f64,
    jamming: Option<HostJamming>,
    q: &[f64; 9],
) -> Result<HostEval, HostError> {
    shim!(shear_eval(false, k, spacing, threshold, jamming, q))
}

/// Shear energy and gradient as [`shear_elastic`] with the PSD Hessian
/// approximation of `Shear::elastic_projected` (9x9 row-major, N/m): the
/// stress-weighted strain Hessian (`Φ'(ε)∇²ε` on the scalar branch,
/// jammed or not) projected to PSD in the 6 reduced variables.
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn shear_elastic_projected(
    k: f64,
    spacing: f64,
    threshold: f64,
    jamming: Option<HostJamming>,
    q: &[f64; 9],
) -> Result<HostEval, HostError> {
    shim!(shear_eval(true, k, spacing, threshold, jamming, q))
}

/// Shear strain-rate dissipation (`Shear::dissipation`): `k_d` in N·s.
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn shear_dissipation(
    k_d: f64,
    spacing: f64,
    threshold: f64,
    q: &[f64; 9],
    qdot: &[f64; 9],
) -> Result<HostDissipation, HostError> {
    shim!(filled_dissipation(3, 9, |rate, w, f, vj, pj| {
        ffi::weft_shear_dissipation(
            k_d,
            spacing,
            threshold,
            q.as_ptr(),
            qdot.as_ptr(),
            rate,
            w,
            f,
            vj,
            pj,
        )
    }))
}

/// Parallel-yarn contact energy of `q = [s_a, s_b]` (m): diameter `d` (m),
/// spacing `L` (m), `k_c` (N) \[CLMMO14\].
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn contact_elastic(
    k_c: f64,
    diameter: f64,
    spacing: f64,
    q: &[f64; 2],
) -> Result<HostEval, HostError> {
    shim!(filled_eval(2, |energy, grad, hess| {
        ffi::weft_contact_elastic(k_c, diameter, spacing, q.as_ptr(), energy, grad, hess)
    }))
}

/// Parallel-yarn contact dissipation (generic strain-rate form).
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn contact_dissipation(
    k_d: f64,
    diameter: f64,
    spacing: f64,
    q: &[f64; 2],
    qdot: &[f64; 2],
) -> Result<HostDissipation, HostError> {
    shim!(filled_dissipation(1, 2, |rate, w, f, vj, pj| {
        ffi::weft_contact_dissipation(
            k_d,
            diameter,
            spacing,
            q.as_ptr(),
            qdot.as_ptr(),
            rate,
            w,
            f,
            vj,
            pj,
        )
    }))
}

/// Sliding-anchor energy `½ k_f (s - s̄)²` (J); `k_f` in N/m, `s`, `anchor`
/// in m \[CLMMO14\].
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn anchor_elastic(k_f: f64, s: f64, anchor: f64) -> Result<HostEval, HostError> {
    shim!(filled_eval(1, |energy, grad, hess| {
        ffi::weft_anchor_elastic(k_f, s, anchor, energy, grad, hess)
    }))
}

/// Stick/slip anchor update (`friction::update_anchor`), m.
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn anchor_update(
    s: f64,
    anchor: f64,
    k_f: f64,
    mu: f64,
    normal_force: f64,
) -> Result<f64, HostError> {
    shim!(ffi::weft_anchor_update(s, anchor, k_f, mu, normal_force))
}

/// Gravity potential of a segment (`gravity::potential`): `rho_l` kg/m,
/// `g` the acceleration vector (m/s²).
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn gravity(q: &[f64; 8], rho_l: f64, g: &[f64; 3]) -> Result<HostEval, HostError> {
    shim!(filled_eval(8, |energy, grad, hess| {
        ffi::weft_gravity(q.as_ptr(), rho_l, g.as_ptr(), energy, grad, hess)
    }))
}

/// Eulerian segment mass matrix (kg, 8x8 row-major) [SJLP11, DESIGN §4].
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn mass_matrix(rho_l: f64, q: &[f64; 8]) -> Result<Vec<f64>, HostError> {
    let mut m = vec![0.0; 64];
    shim!({
        ffi::weft_mass_matrix(rho_l, q.as_ptr(), m.as_mut_ptr());
        m
    })
}

/// Euler-Lagrange inertial force `∇_q T - Ṁ q̇` (N, 8) [SBO17 eq. 1].
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn inertia_force(rho_l: f64, q: &[f64; 8], qdot: &[f64; 8]) -> Result<[f64; 8], HostError> {
    let mut f = [0.0; 8];
    shim!({
        ffi::weft_inertia_force(rho_l, q.as_ptr(), qdot.as_ptr(), f.as_mut_ptr());
        f
    })
}

/// PSD projection of an `n x n` row-major matrix (only its symmetric part
/// is used) [SBO18 §3.4], `n` in {2, 5, 6, 7, 8, 9, 12}.
///
/// # Errors
/// [`HostError::Unavailable`] without the shim, [`HostError::UnsupportedSize`]
/// for another `n` or when `a.len() != n * n`.
pub fn project_psd(n: usize, a: &[f64]) -> Result<Vec<f64>, HostError> {
    if a.len() != n * n || ![2, 5, 6, 7, 8, 9, 12].contains(&n) {
        return Err(HostError::UnsupportedSize(n));
    }
    let mut out = vec![0.0; n * n];
    shim!({
        ffi::weft_project_psd(n as i32, a.as_ptr(), out.as_mut_ptr());
        out
    })
}

/// Penalty contact and smoothed Coulomb friction of a node at `x` (m) with
/// velocity `xdot` (m/s) against `collider`, for `offset = r + δ` (m);
/// `Ok(None)` without contact (DESIGN §6).
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn node_contact(
    collider: &GpuCollider,
    x: &[f64; 3],
    xdot: &[f64; 3],
    offset: f64,
) -> Result<Option<HostNodeContact>, HostError> {
    let mut c = HostNodeContact {
        energy: 0.0,
        gradient: [0.0; 3],
        hessian: [0.0; 9],
        friction: [0.0; 3],
        damping: [0.0; 9],
        slip: [0.0; 3],
    };
    shim!({
        let hit = ffi::weft_node_contact(
            collider,
            x.as_ptr(),
            xdot.as_ptr(),
            offset,
            &mut c.energy,
            c.gradient.as_mut_ptr(),
            c.hessian.as_mut_ptr(),
            c.friction.as_mut_ptr(),
            c.damping.as_mut_ptr(),
            c.slip.as_mut_ptr(),
        );
        (hit != 0).then_some(c)
    })
}

/// Self-collision repulsion of one pair as the kernels evaluate it.
#[derive(Clone, Debug, PartialEq)]
pub struct HostRepulsion {
    /// `V(d0 - d)` (J).
    pub energy: f64,
    /// `∇V` (N), layout `[p0, p1, q0, q1]` or `[p, a, b, c]` (12).
    pub gradient: [f64; 12],
    /// The node-diagonal 3x3 blocks of the Gauss-Newton Hessian `V'' w wᵀ`
    /// (N/m), 4 blocks of 9 row-major.
    pub hessian_diagonal: [f64; 36],
}

/// The kernels' code of a repulsion law (`law` argument of
/// `weft_assemble_repulsion`): 0 quadratic, 1 cubic.
pub fn law_code(law: RepulsionLaw) -> i32 {
    match law {
        RepulsionLaw::Quadratic => 0,
        RepulsionLaw::Cubic => 1,
    }
}

/// One pair's repulsion from the shim: vertex–face when `face`, else
/// segment–segment.
fn host_repulsion(
    face: bool,
    q: &[f64; 12],
    d0: f64,
    k: f64,
    law: RepulsionLaw,
) -> Result<Option<HostRepulsion>, HostError> {
    let mut r = HostRepulsion {
        energy: 0.0,
        gradient: [0.0; 12],
        hessian_diagonal: [0.0; 36],
    };
    shim!({
        let f = if face {
            ffi::weft_face_repulsion
        } else {
            ffi::weft_segment_repulsion
        };
        let hit = f(
            q.as_ptr(),
            d0,
            k,
            law_code(law),
            &mut r.energy,
            r.gradient.as_mut_ptr(),
            r.hessian_diagonal.as_mut_ptr(),
        );
        (hit != 0).then_some(r)
    })
}

/// Repulsion `V(d0 - d)` under `law` of segments `q[0..6]` and `q[6..12]`
/// (end points `[p0, p1, q0, q1]`, m) with interaction distance `d0` (m)
/// and stiffness `k` (N/m), `weft_solver::collide::repulsion_with`;
/// `Ok(None)` when `d ≥ d0`.
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn segment_repulsion(
    q: &[f64; 12],
    d0: f64,
    k: f64,
    law: RepulsionLaw,
) -> Result<Option<HostRepulsion>, HostError> {
    host_repulsion(false, q, d0, k, law)
}

/// Repulsion `V(d0 - d)` under `law` of vertex `q[0..3]` and triangle
/// `q[3..12]` (`[p, a, b, c]`, m) with interaction distance `d0` (m) and
/// stiffness `k` (N/m), `weft_solver::collide::face_repulsion`; `Ok(None)`
/// when `d ≥ d0`.
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn face_repulsion(
    q: &[f64; 12],
    d0: f64,
    k: f64,
    law: RepulsionLaw,
) -> Result<Option<HostRepulsion>, HostError> {
    host_repulsion(true, q, d0, k, law)
}

/// Stretch strain `|x_b - x_a|/(s_b - s_a) - 1` of the segment from node
/// `a` to node `b` at the coordinates `q` (`5 n`, m), `s` in `slot` (3
/// warp `u`, 4 weft `v`), from `segment_strain` of the kernel headers (the
/// acceptance kernel's strain).
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
///
/// # Panics
/// When `a` or `b` is not a node of `q` or `slot` is not 3 or 4.
pub fn segment_strain(q: &[f64], a: usize, b: usize, slot: usize) -> Result<f64, HostError> {
    assert!(5 * a.max(b) + 5 <= q.len() && (slot == 3 || slot == 4));
    shim!(ffi::weft_segment_strain(
        q.as_ptr(),
        a as u32,
        b as u32,
        slot as i32
    ))
}

/// Mean tension `k_s (|Δx|/Δs - 1)` (N) and mean chord `|Δx|` (m) of the
/// segments `prev..node` and `node..next` of a yarn (`None`: the yarn ends
/// there), `s` in `slot`, from `yarn_tension_at` of the kernel headers
/// (the anchor-update kernel's tension, `Assembler::update_anchors`).
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
///
/// # Panics
/// When a node is not in `q` or `slot` is not 3 or 4.
pub fn yarn_tension_at(
    q: &[f64],
    prev: Option<usize>,
    node: usize,
    next: Option<usize>,
    slot: usize,
    k_s: f64,
) -> Result<(f64, f64), HostError> {
    let top = prev.unwrap_or(0).max(node).max(next.unwrap_or(0));
    assert!(5 * top + 5 <= q.len() && (slot == 3 || slot == 4));
    let idx = |n: Option<usize>| n.map_or(u32::MAX, |n| n as u32);
    let (mut t, mut l) = (0.0, 0.0);
    shim!(ffi::weft_yarn_tension_at(
        q.as_ptr(),
        idx(prev),
        node as u32,
        idx(next),
        slot as i32,
        k_s,
        &mut t,
        &mut l
    ))
    .map(|()| (t, l))
}

/// `friction::yarn_normal_pull` (N) of a yarn with tension `t` (N), normal
/// offsets `sides` (units of `radius`) and chords `segments` (m), from the
/// kernel headers.
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
pub fn yarn_normal_pull(
    t: f64,
    sides: [f64; 3],
    segments: [f64; 2],
    radius: f64,
) -> Result<f64, HostError> {
    shim!(ffi::weft_yarn_normal_pull(
        t,
        sides[0],
        sides[1],
        sides[2],
        segments[0],
        segments[1],
        radius
    ))
}

/// The crossing normal force (N) of `Assembler::update_anchors`: warp
/// tension `tw` (N) and mean chord `lw` (m) on crimp side `side` (`±1`),
/// weft `tf`, `lf` on `-side`, yarn radius `radius` (m), at least `floor`
/// (N), from `plain_crossing_normal_force` of the kernel headers.
///
/// # Errors
/// [`HostError::Unavailable`] without the shim.
#[allow(clippy::too_many_arguments)]
pub fn plain_crossing_normal_force(
    tw: f64,
    lw: f64,
    tf: f64,
    lf: f64,
    side: f64,
    radius: f64,
    floor: f64,
) -> Result<f64, HostError> {
    shim!(ffi::weft_plain_crossing_normal_force(
        tw, lw, tf, lf, side, radius, floor
    ))
}
