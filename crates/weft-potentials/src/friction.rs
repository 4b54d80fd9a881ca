//! Sliding friction at crossings: the anchor spring, its stick/slip update and
//! the crossing's normal force estimate [CLMMO14, DESIGN §2].
//!
//! # Anchor element
//!
//! One per free arc-length coordinate (`u` or `v`) of a crossing. Element
//! coordinates (shape [`DOFS`] = 1): `q = [s]` (m), the coordinate. Strain
//! `ε = s - s̄` (m) with the anchor `s̄` (m, a per-coordinate state, not a
//! DOF), measure `Ω = 1` (dimensionless, constant), stiffness `k_f` (N/m):
//! `V = ½ k_f (s - s̄)²` (J). The anchor force `-k_f (s - s̄)` models static
//! friction; after each accepted time step [`update_anchor`] lets the anchor
//! slip so that this force never exceeds the Coulomb limit `μ F_n`, with
//! `F_n` from [`crossing_normal_force`].
//!
//! # Normal force estimate
//!
//! The model has no normal degree of freedom at a crossing: the two yarns are
//! assumed offset by `±R` along the fabric normal (`+1` over, `-1` under,
//! alternating per weave pattern). A yarn of tension `T ≥ 0` whose centreline
//! runs from the previous crossing (offset `o_p R`, chord length `ℓ_p`)
//! through this one (`o R`) to the next (`o_n R`, `ℓ_n`) has unit directions
//! `d_in ∝ (ℓ_p, R (o - o_p))`, `d_out ∝ (ℓ_n, R (o_n - o))` in its
//! (along-yarn, normal) plane, and pulls the crossing point with
//! `T (d_out - d_in)`. Its normal component towards the partner yarn,
//! `P = -o T (d_out - d_in)·n̂` (the in-plane component is carried by the
//! yarn's in-plane equilibrium, not by the contact), is the yarn's normal
//! pull ([`yarn_normal_pull`]). In a plain weave each yarn rises `2R` over
//! one segment, so with `tan β = 2R/ℓ` the yarn comes in at slope `β` and
//! leaves at `-β`, a turn by `2β`, and the resultant is purely normal:
//! `P = 2 T sin β = 4 T R / √(ℓ² + 4R²)`. A mid-float crossing (twill,
//! satin) gives `P = 0`, a float end (one sloped segment) `P = T sin β`.
//!
//! In true equilibrium the contact force balances each yarn separately
//! (`F_n = P_warp = P_weft`, crimp interchange adjusts the crimp until they
//! agree). Our crimp is fixed, so the two pulls differ in general; we estimate
//! the compression as their mean, `F_n = ½ (P_warp + P_weft)` (for the plain
//! weave `F_n = T_warp sin β_warp + T_weft sin β_weft`), which equals both
//! when they agree, and floor it at a small positive value so a slack fabric
//! still has some static friction. Tensions in compression (`T < 0`)
//! contribute nothing. Yarn tensions come from the adjacent stretch elements,
//! `T = k_s (|w| - 1)` [SBO17 eq. 12] (e.g. averaged over the two segments at
//! the crossing).
//!
//! # Bands of yarns (garments woven coarser than their threads)
//!
//! A garment woven at spacing `ℓ` coarser than its fabric's threads (spacing
//! `d`, the material's thread spacing) has model yarns that
//! each stand for a band of `n = ℓ / d` real yarns, so a model crossing
//! stands for the `n_warp · n_weft` real crossings where the two bands
//! overlap, and for the bands to slide past each other every one of them
//! must slip. [`band_crossing_normal_force`] therefore evaluates the
//! estimate above for one real crossing, with the tension per real yarn
//! (`T / n`) and the real segment length (`ℓ / n`, about `d`), and
//! multiplies it by `n_warp · n_weft`. With small crimp angles this is
//! `n_warp n_weft` times the model crossing's own estimate (`T/n` over a
//! segment `ℓ/n` turns by the same angle per unit tension): the Coulomb
//! limit grows with the square of the coarsening. Evaluated on the model's
//! own crossing instead, the limit is that many times too small: the A-line
//! skirt refined to 30 mm with sliding (d = 0.25 mm, 14,400 real crossings
//! per model crossing) slid its yarns up to 14.8 mm through their crossings
//! in 0.15 s, against 0.25 mm with the bands' estimate (BENCHMARKS.md).

use crate::element::{Measure, Strain};
use nalgebra::{SMatrix, SVector, Vector2};

/// Number of generalised coordinates of an anchor element.
pub const DOFS: usize = 1;

/// A suggested floor for the normal force, 1 µN (see
/// [`crossing_normal_force`]).
pub const MIN_NORMAL_FORCE: f64 = 1e-6;

/// Anchor strain `ε = s - s̄` (m), Jacobian `[1]`, Hessian zero. `q = [s]`,
/// `anchor` `s̄` (m) \[CLMMO14\].
pub fn strain(q: &SVector<f64, DOFS>, anchor: f64) -> Strain<1, DOFS> {
    Strain {
        value: SVector::from([q[0] - anchor]),
        jacobian: SMatrix::from([[1.0]]),
        hessians: [SMatrix::zeros()],
    }
}

/// Measure `Ω = 1` (constant). With `k = k_f` (N/m) the generic
/// [`crate::element::elastic`] gives `V = ½ k_f (s - s̄)²`.
pub fn measure() -> Measure<DOFS> {
    Measure::constant(1.0)
}

/// Stick/slip update of the anchor after an accepted step (DESIGN §2): if the
/// anchor force exceeds the Coulomb limit, `|k_f (s - s̄)| > μ F_n`, the anchor
/// slips to `s̄' = s - sign(s - s̄) μ F_n / k_f`, so that the anchor force is
/// exactly `μ F_n`; otherwise (stick) it is returned unchanged.
///
/// `s`, `anchor` in m; `k_f > 0` (N/m); `mu ≥ 0`; `normal_force ≥ 0` (N).
/// With `μ F_n = 0` the anchor follows `s` (free sliding).
pub fn update_anchor(s: f64, anchor: f64, k_f: f64, mu: f64, normal_force: f64) -> f64 {
    let limit = mu * normal_force;
    let d = s - anchor;
    if (k_f * d).abs() > limit {
        s - d.signum() * limit / k_f
    } else {
        anchor
    }
}

/// One yarn passing a crossing, for the normal force estimate (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct YarnAtCrossing {
    /// Axial tension `T` (N), positive in tension; `T < 0` counts as 0.
    pub tension: f64,
    /// Normal offsets, in units of `R`, of the previous crossing, this one and
    /// the next along the yarn: `+1` over, `-1` under. Where the yarn ends,
    /// repeat this crossing's offset for the missing neighbour.
    pub sides: [f64; 3],
    /// Chord lengths `ℓ` (m) to the previous and the next crossing (> 0).
    pub segments: [f64; 2],
}

impl YarnAtCrossing {
    /// A yarn of a plain weave at a crossing on side `side` (`±1`), with
    /// neighbours on the other side at distance `segment` (m) on both sides.
    pub fn plain(tension: f64, side: f64, segment: f64) -> Self {
        Self {
            tension,
            sides: [-side, side, -side],
            segments: [segment, segment],
        }
    }
}

/// Normal pull `P = -o T (d_out - d_in)·n̂` (N) of a crimped yarn on the
/// crossing, towards its partner yarn (module docs); `radius` `R` (m). Zero
/// for `T ≤ 0` and for a straight yarn (mid-float). Plain weave:
/// `P = 2 T sin β = 4 T R / √(ℓ² + 4R²)`, `tan β = 2R/ℓ`; float end
/// `P = T sin β`.
pub fn yarn_normal_pull(yarn: &YarnAtCrossing, radius: f64) -> f64 {
    let t = yarn.tension.max(0.0);
    let [op, o, on] = yarn.sides;
    let d_in = Vector2::new(yarn.segments[0], radius * (o - op)).normalize();
    let d_out = Vector2::new(yarn.segments[1], radius * (on - o)).normalize();
    (-o * t * (d_out.y - d_in.y)).max(0.0)
}

/// Compression force `F_n` (N) at a crossing, estimated from the warp and
/// weft tensions and the crimp (module docs, DESIGN §2):
/// `F_n = max(½ (P_warp + P_weft), floor)` with `P` from
/// [`yarn_normal_pull`]; for a plain weave
/// `F_n = max(T_warp sin β_warp + T_weft sin β_weft, floor)`,
/// `tan β = 2R/ℓ`. `radius` `R` (m); `floor > 0` (N), e.g.
/// [`MIN_NORMAL_FORCE`].
pub fn crossing_normal_force(
    warp: &YarnAtCrossing,
    weft: &YarnAtCrossing,
    radius: f64,
    floor: f64,
) -> f64 {
    (0.5 * (yarn_normal_pull(warp, radius) + yarn_normal_pull(weft, radius))).max(floor)
}

/// Compression force (N) of a model crossing between two bands of real
/// yarns (module docs, "Bands of yarns"): `n_warp · n_weft` times
/// [`crossing_normal_force`] of one real crossing, whose warp carries
/// `T_warp / n_warp` over segments `ℓ / n_weft` (the model warp's chords
/// cut by the real weft yarns between two model weft yarns), and whose weft
/// carries `T_weft / n_weft` over segments `ℓ / n_warp`. `bands`
/// `[n_warp, n_weft]` are the real yarns per model warp and weft yarn (the
/// spacing of the model's warp yarns over the thread spacing, and of its
/// weft yarns), each taken as at least 1: with both 1 the model's yarns are
/// real yarns and this is [`crossing_normal_force`] itself. `radius` `R`
/// (m); `floor > 0` (N) applies per real crossing.
pub fn band_crossing_normal_force(
    warp: &YarnAtCrossing,
    weft: &YarnAtCrossing,
    bands: [f64; 2],
    radius: f64,
    floor: f64,
) -> f64 {
    let [nw, nf] = bands.map(|n| n.max(1.0));
    let real = |y: &YarnAtCrossing, n: f64, cut: f64| YarnAtCrossing {
        tension: y.tension / n,
        sides: y.sides,
        segments: y.segments.map(|l| l / cut),
    };
    nw * nf * crossing_normal_force(&real(warp, nw, nf), &real(weft, nf, nw), radius, floor)
}
