//! Scene files (DESIGN §8): serde types mirroring the JSON keys, loading with
//! errors that name the file, the JSON path and the expectation, and semantic
//! validation.
//!
//! The key names are a public contract: they are never renamed; new keys may
//! be added (each is marked *added* below). Unknown keys are errors
//! everywhere (`#[serde(deny_unknown_fields)]` on every type). All values are
//! SI: metres, kilograms, seconds, newtons.
//!
//! Objects are numbered in file order (`objects[i]` is object `i`), fabric
//! objects (`yarn`, `woven_patch`) and the others alike; nodes are numbered in
//! fabric-object order and within an object in the order the object defines
//! (for `yarn` the order given, for `woven_patch` row-major over the crossing
//! grid: node `k·n_weft + l` is the crossing of warp yarn `k` and weft yarn
//! `l`).
//!
//! # Example
//! ```
//! use weft_io::Scene;
//! let text = r#"{
//!   "duration": 1.0,
//!   "time_step": {"dt": 0.001},
//!   "output": {"interval": 0.01},
//!   "materials": {"cotton": {"radius": 0.00025, "density": 130.0,
//!       "stretch_stiffness": 500.0, "bending_stiffness": 1e-5}},
//!   "objects": [{"type": "yarn", "material": "cotton",
//!       "nodes": [[0, 0, 0], [0.001, 0, 0], [0.002, 0, 0]], "pinned": [0]}]
//! }"#;
//! let scene = Scene::from_str(text, "spring.json").unwrap();
//! let built = scene.build().unwrap();
//! assert_eq!(built.fabric.node_count(), 3);
//! assert_eq!(built.time_step.dt_max, 0.01); // default 10·dt
//!
//! let err = Scene::from_str(&text.replace("\"cotton\",", "\"silk\","), "spring.json");
//! assert_eq!(
//!     err.unwrap_err().to_string(),
//!     "spring.json: objects[0].material: unknown material 'silk' (defined: cotton)"
//! );
//! ```

use crate::de::{self, Selector, SelectorMap};
use crate::error::SceneError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use weft_core::{
    Damping, FabricPreset, Friction, Material, ModeCoefficients, ModelError, NodeSelector,
};

/// How messages name a scene file: its path as given, `<scene>` for a
/// scene parsed from text without one.
pub(crate) fn file_label(source: &Path) -> String {
    if source.as_os_str().is_empty() {
        "<scene>".into()
    } else {
        source.display().to_string()
    }
}

fn yes() -> bool {
    true
}
fn default_gravity() -> [f64; 3] {
    [0.0, -9.81, 0.0]
}
fn default_normal() -> [f64; 3] {
    [0.0, 1.0, 0.0]
}
fn default_warp() -> [f64; 3] {
    [1.0, 0.0, 0.0]
}
fn default_formats() -> Vec<OutputFormat> {
    vec![OutputFormat::Obj]
}
fn one() -> f64 {
    1.0
}

/// A scene file (DESIGN §8). Keys:
///
/// | key | type | unit | default |
/// |---|---|---|---|
/// | `duration` | number > 0 | s | required |
/// | `time_step` | [`TimeStep`] | | required (`dt` inside it) |
/// | `integrator` | [`Integrator`] | | all defaults |
/// | `output` | [`Output`] | | required (`interval` inside it) |
/// | `gravity` | `[gx, gy, gz]` | m/s² | `[0, -9.81, 0]` |
/// | `materials` | `{name: `[`MaterialSpec`]`}` | | `{}` |
/// | `fabrics` (*added*) | `{name: `[`FabricSpec`]`}`: materials from fabric presets | | `{}` |
/// | `objects` | array of [`SceneObject`] | | required |
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scene {
    /// Simulated time (s), > 0.
    pub duration: f64,
    /// Time-step control.
    pub time_step: TimeStep,
    /// Newton and PCG settings.
    #[serde(default)]
    pub integrator: Integrator,
    /// Output frames.
    pub output: Output,
    /// Gravitational acceleration (m/s²), default `[0, -9.81, 0]` (Y up).
    #[serde(default = "default_gravity", deserialize_with = "de::vec3")]
    pub gravity: [f64; 3],
    /// Yarn materials by name.
    #[serde(default)]
    pub materials: BTreeMap<String, MaterialSpec>,
    /// Materials from fabric presets by name (*added*); objects name them
    /// as they name `materials`, and the two share one namespace.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fabrics: BTreeMap<String, FabricSpec>,
    /// Objects in file order; their index is the object number.
    pub objects: Vec<SceneObject>,
    /// Yarn-yarn self-collision (an addition to DESIGN §8); absent: off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_collision: Option<SelfCollisionSpec>,
    /// The file the scene was read from (not a key; empty for scenes built in
    /// code). Relative mesh paths are resolved against its directory, and
    /// error messages name it.
    #[serde(skip)]
    pub source: PathBuf,
}

/// `self_collision`: repulsion between yarn segments that are not neighbours
/// in the weave (DESIGN §6), `V = ½ k (d0 - d)²` for closest distance
/// `d < d0 = 2R + margin`, found by a spatial-hash broad phase each step.
///
/// | key | unit | default |
/// |---|---|---|
/// | `stiffness` | N/m, > 0 | required |
/// | `margin` | m, ≥ 0 | `0` |
/// | `exclusion_hops` | count | `2`: segments whose nodes are within this many hops in the fabric graph never collide |
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelfCollisionSpec {
    /// Repulsion stiffness `k` (N/m).
    pub stiffness: f64,
    /// Margin added to the yarn diameter (m).
    #[serde(default)]
    pub margin: f64,
    /// Neighbour exclusion in graph hops.
    #[serde(default = "default_exclusion_hops")]
    pub exclusion_hops: usize,
}

fn default_exclusion_hops() -> usize {
    2
}

/// `time_step`: backward-Euler step size and its adaptive control
/// (DESIGN §5, [SBO18 §6]).
///
/// | key | unit | default |
/// |---|---|---|
/// | `dt` | s, > 0 | required: the initial (or fixed) step |
/// | `adaptive` | bool | `true`: halve on rejection, grow ×2 after a run of accepted steps |
/// | `dt_min` | s, > 0, ≤ `dt` | `1e-7`, or `dt` if `dt` is smaller |
/// | `dt_max` | s, ≥ `dt` | `10·dt` |
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeStep {
    /// Initial step size (s).
    pub dt: f64,
    /// Adaptive step control on or off.
    #[serde(default = "yes")]
    pub adaptive: bool,
    /// Smallest step (s); a step below it is an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dt_min: Option<f64>,
    /// Largest step (s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dt_max: Option<f64>,
}

impl TimeStep {
    /// Default smallest step when `dt_min` is absent (s).
    pub const DEFAULT_DT_MIN: f64 = 1e-7;
    /// `dt_max = DEFAULT_DT_MAX_FACTOR · dt` when `dt_max` is absent.
    pub const DEFAULT_DT_MAX_FACTOR: f64 = 10.0;

    /// `dt_min` with its default applied (s).
    pub fn dt_min(&self) -> f64 {
        self.dt_min.unwrap_or(Self::DEFAULT_DT_MIN.min(self.dt))
    }

    /// `dt_max` with its default applied (s).
    pub fn dt_max(&self) -> f64 {
        self.dt_max.unwrap_or(Self::DEFAULT_DT_MAX_FACTOR * self.dt)
    }
}

/// `integrator`: Newton's method and PCG (DESIGN §5). Every key is optional.
///
/// | key | unit | default |
/// |---|---|---|
/// | `newton_max_iterations` | integer ≥ 1 | 20 |
/// | `newton_tolerance` | dimensionless, > 0: Newton stops when the largest residual force `|R|∞/h` is below this times the step's force scale `F` (the largest nodal force at the step's start, at least the heaviest node's weight; weft-solver's integrator docs); a line search that stalls counts as converged only within `min(1000 · newton_tolerance, 1e-3) · F` | `1e-6` |
/// | `cg_tolerance` | relative residual `|r|/|b|` of each linear solve, in (0, 1): the smallest relative residual asked of PCG (adaptive forcing stops a solve earlier when its Newton iteration can use no more) | `1e-8` |
/// | `cg_max_iterations` | integer ≥ 1 | 10000 |
/// | `preconditioner` | `"auto"`, `"cholesky"`, `"multigrid"` or `"block_jacobi"` (an addition to DESIGN §8) | `"auto"` |
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Integrator {
    /// Newton iterations per step before the step is rejected.
    pub newton_max_iterations: usize,
    /// Newton converges when `|R|∞/h ≤ newton_tolerance · F`, `F` the
    /// step's force scale (dimensionless).
    pub newton_tolerance: f64,
    /// The tightest relative residual `|r| / |b|` asked of PCG.
    pub cg_tolerance: f64,
    /// PCG iterations per solve before the step is rejected.
    pub cg_max_iterations: usize,
    /// Preconditioner of PCG.
    pub preconditioner: PreconditionerChoice,
}

/// `integrator.preconditioner`: how PCG is preconditioned (see
/// `weft_solver::LinearSolver`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PreconditionerChoice {
    /// Sparse Cholesky up to about 1.5 million free DOFs, multigrid above.
    #[default]
    Auto,
    /// Sparse Cholesky factor of the system matrix, refreshed lazily: few
    /// PCG iterations per Newton solve at any stiffness, memory growing like
    /// `n log n`.
    Cholesky,
    /// Aggregation multigrid with yarn-line smoothers: O(n) memory, far
    /// fewer iterations than block-Jacobi on large fabrics.
    Multigrid,
    /// Block-Jacobi on the 5x5 node blocks: least memory, but thousands of
    /// iterations on stiff yarn-scale scenes.
    BlockJacobi,
}

impl Default for Integrator {
    fn default() -> Self {
        Self {
            newton_max_iterations: 20,
            newton_tolerance: 1e-6,
            cg_tolerance: 1e-8,
            cg_max_iterations: 10_000,
            preconditioner: PreconditionerChoice::Auto,
        }
    }
}

/// `output`: frames written at exact output times (DESIGN §5, §8).
///
/// | key | unit | default |
/// |---|---|---|
/// | `interval` | s, > 0 | required |
/// | `formats` | array of [`OutputFormat`] names, no duplicates | `["obj"]` (`[]` writes only `energy.csv` and `final_state.json`) |
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Output {
    /// Time between frames (s).
    pub interval: f64,
    /// Frame formats under `frames/`.
    #[serde(default = "default_formats")]
    pub formats: Vec<OutputFormat>,
}

/// A frame format (`output.formats`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    /// `"obj"`: yarn centrelines as OBJ polylines ([`crate::write_obj_frame`]).
    Obj,
}

impl OutputFormat {
    /// File extension without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            OutputFormat::Obj => "obj",
        }
    }
}

/// A yarn material (`materials.NAME`), converted to [`weft_core::Material`].
/// Stiffnesses are the element stiffnesses of `V = ½ Ω k |ε|²`
/// [SBO17 eq. 2] in the physical calibration of DESIGN §2.
///
/// | key | unit | default |
/// |---|---|---|
/// | `radius` | m, > 0 | required |
/// | `density` | kg/m³, ≥ 0 | required |
/// | `stretch_stiffness` | N (`k_s = EπR²`), ≥ 0 | required |
/// | `bending_stiffness` | N·m² (`k_b = EπR⁴/4`), ≥ 0 | required |
/// | `shear_stiffness` | N, ≥ 0 | 0 |
/// | `contact_stiffness` | N, ≥ 0 | 0 |
/// | `friction` | [`FrictionSpec`] | μ = 0, anchors off |
/// | `damping` | [`DampingSpec`] | `{"model": "none"}` |
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialSpec {
    /// Yarn radius R (m).
    pub radius: f64,
    /// Volumetric density ρ (kg/m³); linear density ρπR².
    pub density: f64,
    /// `k_s` (N) [SBO17 eq. 12-13].
    pub stretch_stiffness: f64,
    /// `k_b` (N·m²) [SBO17 eq. 15-16].
    pub bending_stiffness: f64,
    /// `k_x` (N) [SBO17 eq. 22-23].
    #[serde(default)]
    pub shear_stiffness: f64,
    /// `k_c` (N) \[CLMMO14\].
    #[serde(default)]
    pub contact_stiffness: f64,
    /// Sliding friction at crossings.
    #[serde(default)]
    pub friction: FrictionSpec,
    /// Damping model.
    #[serde(default)]
    pub damping: DampingSpec,
}

impl MaterialSpec {
    /// The weft-core material named `name`.
    pub fn to_material(&self, name: &str) -> Material {
        Material {
            name: name.to_owned(),
            radius: self.radius,
            density: self.density,
            stretch_stiffness: self.stretch_stiffness,
            bending_stiffness: self.bending_stiffness,
            shear_stiffness: self.shear_stiffness,
            contact_stiffness: self.contact_stiffness,
            friction: Friction {
                mu: self.friction.mu,
                anchor_stiffness: self.friction.anchor_stiffness,
                thread_spacing: self.friction.thread_spacing,
            },
            damping: self.damping.to_damping(),
        }
    }
}

/// A material from a fabric preset (`fabrics.NAME`, *added*): the preset's
/// KES-F values homogenised per yarn at the scene's yarn `spacing`
/// ([`weft_core::preset`]: `k_s = E_w s`, `k_b = B_w s`, `k_x = G s / 4`,
/// `ρ_l = ρ_A s / 2`, strain-rate damping `k_d = β k`).
///
/// | key | unit | default |
/// |---|---|---|
/// | `preset` | `cotton`, `denim`, `silk`, `wool`, `polyester` | required |
/// | `spacing` | m, > 0: the distance between adjacent yarns of the objects that use it | required |
/// | `sliding` | bool: parallel-yarn contact `k_c = k_s` and crossing friction anchors `k_f = E_w` | `false` |
/// | `damping` | [`DampingSpec`]: replaces the preset's strain-rate damping | the preset's |
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FabricSpec {
    /// The fabric preset.
    pub preset: FabricPreset,
    /// Yarn spacing `s` (m).
    pub spacing: f64,
    /// Sliding mechanics on (see the table).
    #[serde(default)]
    pub sliding: bool,
    /// Damping in place of the preset's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping: Option<DampingSpec>,
}

impl FabricSpec {
    /// The weft-core material named `name`.
    pub fn to_material(&self, name: &str) -> Material {
        let mut m = self
            .preset
            .properties()
            .material(name, self.spacing, self.sliding);
        if let Some(d) = &self.damping {
            m.damping = d.to_damping();
        }
        m
    }
}

/// `friction`: Coulomb stick/slip of the sliding anchors (DESIGN §2). When
/// the object is given both keys are required.
///
/// | key | unit |
/// |---|---|
/// | `mu` | dimensionless, ≥ 0 |
/// | `anchor_stiffness` | N/m, ≥ 0 (0 disables the anchors) |
/// | `thread_spacing` (*added*, optional) | m, ≥ 0: the real threads' spacing where a model yarn stands for a band of them (`weft_core::Friction::thread_spacing`); default 0, every model yarn a real yarn |
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrictionSpec {
    /// Friction coefficient μ.
    pub mu: f64,
    /// Anchor stiffness `k_f` (N/m).
    pub anchor_stiffness: f64,
    /// Thread spacing `d` (m), 0 by default.
    #[serde(default)]
    pub thread_spacing: f64,
}

/// Per-mode values (`stretch`, `bending`, `shear`, `contact`), each optional
/// with default 0. Used for strain-rate `k_d` (units of the mode's stiffness
/// times s: N·s, N·m²·s, N·s, N·s) and for per-mode β (s).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModeSpec {
    /// Stretch.
    pub stretch: f64,
    /// Bending.
    pub bending: f64,
    /// Crossing shear.
    pub shear: f64,
    /// Parallel-yarn contact.
    pub contact: f64,
}

impl From<ModeSpec> for ModeCoefficients {
    fn from(m: ModeSpec) -> Self {
        ModeCoefficients {
            stretch: m.stretch,
            bending: m.bending,
            shear: m.shear,
            contact: m.contact,
        }
    }
}

/// `damping` (DESIGN §3). Four forms, selected by `model`:
///
/// - `{"model": "strain_rate", "stretch": k, "bending": k, "shear": k, "contact": k}`:
///   strain-rate dissipation `W = ½ Ω k_d |ε̇|²` [SBO17 eq. 6] with `k_d`
///   per mode (each optional, default 0; N·s, N·m²·s, N·s, N·s);
/// - `{"model": "strain_rate", "beta": {"stretch": b, ...}}`: the same with
///   `k_d = β k` per mode, β in s [SBO18 eq. 12] (modes default 0; do not mix
///   with per-mode `k_d` keys);
/// - `{"model": "rayleigh", "alpha": a, "beta": b}`: `f = -(αM + βK) q̇`
///   [SBO17 eq. 4], α in 1/s, β in s, each default 0 (a baseline);
/// - `{"model": "none"}` (the default when `damping` is absent).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawDamping", into = "RawDamping")]
pub enum DampingSpec {
    /// No damping.
    #[default]
    None,
    /// Strain-rate damping with `k_d` per mode.
    StrainRate(ModeSpec),
    /// Strain-rate damping with `k_d = β k` per mode (β in s).
    StrainRateBeta(ModeSpec),
    /// Rayleigh damping.
    Rayleigh {
        /// α (1/s).
        alpha: f64,
        /// β (s).
        beta: f64,
    },
}

impl DampingSpec {
    /// The weft-core damping model.
    pub fn to_damping(&self) -> Damping {
        match *self {
            DampingSpec::None => Damping::None,
            DampingSpec::StrainRate(m) => Damping::StrainRate(m.into()),
            DampingSpec::StrainRateBeta(m) => Damping::StrainRateBeta(m.into()),
            DampingSpec::Rayleigh { alpha, beta } => Damping::Rayleigh { alpha, beta },
        }
    }
}

/// `damping.model`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum DampingModel {
    StrainRate,
    Rayleigh,
    None,
}

/// `beta` is a number for `rayleigh` and an object of modes for `strain_rate`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
enum RawBeta {
    Scalar(f64),
    PerMode(ModeSpec),
}

fn beta_de<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<RawBeta>, D::Error> {
    use serde::de::{MapAccess, Visitor};
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = RawBeta;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(
                "a number (rayleigh, s) or an object {\"stretch\", \"bending\", \"shear\", \"contact\"} (strain_rate, s)",
            )
        }
        fn visit_f64<E>(self, v: f64) -> Result<RawBeta, E> {
            Ok(RawBeta::Scalar(v))
        }
        fn visit_u64<E>(self, v: u64) -> Result<RawBeta, E> {
            Ok(RawBeta::Scalar(v as f64))
        }
        fn visit_i64<E>(self, v: i64) -> Result<RawBeta, E> {
            Ok(RawBeta::Scalar(v as f64))
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawBeta, A::Error> {
            ModeSpec::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                .map(RawBeta::PerMode)
        }
    }
    d.deserialize_any(V).map(Some)
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDamping {
    model: DampingModel,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stretch: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bending: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    shear: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    contact: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    alpha: Option<f64>,
    #[serde(
        default,
        deserialize_with = "beta_de",
        skip_serializing_if = "Option::is_none"
    )]
    beta: Option<RawBeta>,
}

impl TryFrom<RawDamping> for DampingSpec {
    type Error = String;

    fn try_from(r: RawDamping) -> Result<Self, String> {
        let per_mode: Vec<&str> = [
            ("stretch", r.stretch),
            ("bending", r.bending),
            ("shear", r.shear),
            ("contact", r.contact),
        ]
        .iter()
        .filter(|(_, v)| v.is_some())
        .map(|(k, _)| *k)
        .collect();
        match r.model {
            DampingModel::None => {
                if !per_mode.is_empty() || r.alpha.is_some() || r.beta.is_some() {
                    return Err("model \"none\" takes no other keys".into());
                }
                Ok(DampingSpec::None)
            }
            DampingModel::Rayleigh => {
                if let Some(k) = per_mode.first() {
                    return Err(format!(
                        "model \"rayleigh\" takes \"alpha\" (1/s) and \"beta\" (s), not \"{k}\""
                    ));
                }
                let beta = match r.beta {
                    None => 0.0,
                    Some(RawBeta::Scalar(b)) => b,
                    Some(RawBeta::PerMode(_)) => {
                        return Err("model \"rayleigh\": \"beta\" must be a number (s), not an object (per-mode β belongs to model \"strain_rate\")".into());
                    }
                };
                Ok(DampingSpec::Rayleigh {
                    alpha: r.alpha.unwrap_or(0.0),
                    beta,
                })
            }
            DampingModel::StrainRate => {
                if r.alpha.is_some() {
                    return Err("model \"strain_rate\" takes per-mode \"stretch\", \"bending\", \"shear\", \"contact\" (k_d) or \"beta\" (an object of per-mode β), not \"alpha\"".into());
                }
                match r.beta {
                    None => Ok(DampingSpec::StrainRate(ModeSpec {
                        stretch: r.stretch.unwrap_or(0.0),
                        bending: r.bending.unwrap_or(0.0),
                        shear: r.shear.unwrap_or(0.0),
                        contact: r.contact.unwrap_or(0.0),
                    })),
                    Some(RawBeta::Scalar(_)) => Err("model \"strain_rate\": \"beta\" must be an object {\"stretch\": β, ...} (s per mode); a scalar β belongs to model \"rayleigh\"".into()),
                    Some(RawBeta::PerMode(m)) => {
                        if let Some(k) = per_mode.first() {
                            return Err(format!(
                                "model \"strain_rate\": give either per-mode k_d keys or \"beta\", not both (found \"{k}\" and \"beta\")"
                            ));
                        }
                        Ok(DampingSpec::StrainRateBeta(m))
                    }
                }
            }
        }
    }
}

impl From<DampingSpec> for RawDamping {
    fn from(d: DampingSpec) -> Self {
        let mut r = RawDamping {
            model: DampingModel::None,
            stretch: None,
            bending: None,
            shear: None,
            contact: None,
            alpha: None,
            beta: None,
        };
        match d {
            DampingSpec::None => {}
            DampingSpec::StrainRate(m) => {
                r.model = DampingModel::StrainRate;
                r.stretch = Some(m.stretch);
                r.bending = Some(m.bending);
                r.shear = Some(m.shear);
                r.contact = Some(m.contact);
            }
            DampingSpec::StrainRateBeta(m) => {
                r.model = DampingModel::StrainRate;
                r.beta = Some(RawBeta::PerMode(m));
            }
            DampingSpec::Rayleigh { alpha, beta } => {
                r.model = DampingModel::Rayleigh;
                r.alpha = Some(alpha);
                r.beta = Some(RawBeta::Scalar(beta));
            }
        }
        r
    }
}

/// One entry of `objects`, selected by its `type` key (internally tagged).
/// Each variant's keys are documented on its type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SceneObject {
    /// `"yarn"`: an explicit yarn.
    Yarn(YarnObject),
    /// `"woven_patch"`: a rectangular woven patch.
    WovenPatch(WovenPatchObject),
    /// `"triangle_cloth"` (*added*): a rectangle of implicit triangle-mesh
    /// cloth.
    TriangleCloth(TriangleClothObject),
    /// `"sphere"`: a sphere collider.
    Sphere(SphereObject),
    /// `"plane"`: a half-space collider.
    Plane(PlaneObject),
    /// `"capsule"` (*added*): a capsule collider.
    Capsule(CapsuleObject),
    /// `"mesh"` (*added*): a triangle-mesh collider from an OBJ file.
    Mesh(MeshObject),
    /// `"handle"`: prescribed motion of fabric nodes.
    Handle(HandleObject),
}

impl SceneObject {
    /// The `type` name as in the file.
    pub fn type_name(&self) -> &'static str {
        match self {
            SceneObject::Yarn(_) => "yarn",
            SceneObject::WovenPatch(_) => "woven_patch",
            SceneObject::TriangleCloth(_) => "triangle_cloth",
            SceneObject::Sphere(_) => "sphere",
            SceneObject::Plane(_) => "plane",
            SceneObject::Capsule(_) => "capsule",
            SceneObject::Mesh(_) => "mesh",
            SceneObject::Handle(_) => "handle",
        }
    }

    /// True for objects that make fabric nodes (`yarn`, `woven_patch`,
    /// `triangle_cloth`).
    pub fn is_fabric(&self) -> bool {
        matches!(
            self,
            SceneObject::Yarn(_) | SceneObject::WovenPatch(_) | SceneObject::TriangleCloth(_)
        )
    }

    /// Number of nodes the object makes (0 for colliders and handles).
    pub fn node_count(&self) -> usize {
        match self {
            SceneObject::Yarn(y) => y.nodes.len(),
            SceneObject::WovenPatch(p) => p.yarn_counts[0].saturating_mul(p.yarn_counts[1]),
            SceneObject::TriangleCloth(c) => c.vertices[0].saturating_mul(c.vertices[1]),
            _ => 0,
        }
    }
}

/// The `type` names, in the order of [`SceneObject`]'s variants.
pub const OBJECT_TYPES: [&str; 8] = [
    "yarn",
    "woven_patch",
    "triangle_cloth",
    "sphere",
    "plane",
    "capsule",
    "mesh",
    "handle",
];

/// `{"type": "yarn"}`: an explicit yarn (weft-core `YarnSpec`). Its
/// arc-length coordinates start at the cumulative chord lengths of its nodes
/// (at rest) unless `rest_lengths` overrides them.
///
/// | key | unit | default |
/// |---|---|---|
/// | `material` | material name | required |
/// | `nodes` | `[[x, y, z], ...]`, m, ≥ 2 nodes | required |
/// | `rest_lengths` (*added*) | m per segment (`nodes - 1` values, each > 0) | chord lengths |
/// | `pinned` | node indices (selectors; only indices apply to a yarn) | `[]` |
/// | `point_masses` | `{"node": kg}`, ≥ 0 | `{}` |
/// | `initial_velocities` | `{"node": [vx, vy, vz]}`, m/s | `{}` (at rest) |
/// | `sliding` (*added*) | bool: free the interior nodes' arc-length coordinates | `false` |
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct YarnObject {
    /// Material name (a key of `materials`).
    pub material: String,
    /// Node positions (m).
    pub nodes: Vec<[f64; 3]>,
    /// Rest length per segment (m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rest_lengths: Option<Vec<f64>>,
    /// Pinned nodes (positions fixed).
    #[serde(default)]
    pub pinned: Vec<Selector>,
    /// Lumped masses added to nodes (kg).
    #[serde(default, skip_serializing_if = "SelectorMap::is_empty")]
    pub point_masses: SelectorMap<f64>,
    /// Initial velocities of nodes (m/s).
    #[serde(default, skip_serializing_if = "SelectorMap::is_empty")]
    pub initial_velocities: SelectorMap<[f64; 3]>,
    /// Free interior arc-length coordinates.
    #[serde(default)]
    pub sliding: bool,
}

/// Weave pattern (`weave`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WeaveSpec {
    /// `"plain"`: the warp passes over the weft where `k + l` is even.
    #[default]
    Plain,
}

/// `{"type": "woven_patch"}`: a rectangular woven patch (weft-core
/// `WovenPatchSpec`; see its docs for the geometry and which arc-length
/// coordinates of boundary crossings stay free).
///
/// | key | unit | default |
/// |---|---|---|
/// | `material` | material name | required |
/// | `size` | `[along warp, along weft]`, m, > 0 | required |
/// | `yarn_counts` | `[n_warp, n_weft]`, each ≥ 2 | required |
/// | `center` | `[x, y, z]`, m | required |
/// | `normal` | direction, non-zero | `[0, 1, 0]` |
/// | `warp_direction` | direction, not parallel to `normal` | `[1, 0, 0]` |
/// | `weave` (*added*) | `"plain"` | `"plain"` |
/// | `sliding` (*added*) | bool: free arc-length coordinates of crossings | `true` |
/// | `pinned` | node selectors | `[]` |
/// | `initial_velocity` (*added*) | `[vx, vy, vz]` m/s for every node | `[0, 0, 0]` |
/// | `initial_velocities` (*added*) | `{"selector": [vx, vy, vz]}`, overrides `initial_velocity` | `{}` |
/// | `point_masses` (*added*) | `{"selector": kg}`, ≥ 0, added to every node the selector picks (entries that pick one node add up) | `{}` |
///
/// `corner:K` counts counter-clockwise about the normal from the warp/weft
/// origin: 0 = (warp 0, weft 0), 1 = (warp 0, last weft), 2 = (last, last),
/// 3 = (last warp, weft 0).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WovenPatchObject {
    /// Material name.
    pub material: String,
    /// Extent along warp and weft (m).
    #[serde(deserialize_with = "de::pair")]
    pub size: [f64; 2],
    /// `[n_warp, n_weft]`.
    #[serde(deserialize_with = "de::counts")]
    pub yarn_counts: [usize; 2],
    /// Patch centre (m).
    #[serde(deserialize_with = "de::vec3")]
    pub center: [f64; 3],
    /// Fabric normal.
    #[serde(default = "default_normal", deserialize_with = "de::vec3")]
    pub normal: [f64; 3],
    /// Warp direction.
    #[serde(default = "default_warp", deserialize_with = "de::vec3")]
    pub warp_direction: [f64; 3],
    /// Weave pattern.
    #[serde(default)]
    pub weave: WeaveSpec,
    /// Free arc-length coordinates.
    #[serde(default = "yes")]
    pub sliding: bool,
    /// Pinned nodes.
    #[serde(default)]
    pub pinned: Vec<Selector>,
    /// Uniform initial velocity (m/s).
    #[serde(default, deserialize_with = "de::vec3")]
    pub initial_velocity: [f64; 3],
    /// Initial velocities of selected nodes (m/s).
    #[serde(default, skip_serializing_if = "SelectorMap::is_empty")]
    pub initial_velocities: SelectorMap<[f64; 3]>,
    /// Lumped masses added to selected nodes (kg), on top of the yarns'
    /// own mass (e.g. to give edge yarns the mass per length of interior
    /// ones).
    #[serde(default, skip_serializing_if = "SelectorMap::is_empty")]
    pub point_masses: SelectorMap<f64>,
}

/// `{"type": "triangle_cloth"}` (*added*): a rectangle of implicit
/// triangle-mesh cloth \[SBO18 §4\]: StVK membrane triangles with
/// strain-rate (or Rayleigh) damping and discrete-shell bending hinges
/// (`weft_shell::implicit::shell_fabric`), integrated by the same
/// backward-Euler / Newton / PCG driver, colliders and handles as the
/// yarn objects. Its nodes are the mesh vertices, whose arc-length
/// coordinates are fixed (0 in `final_state.json`); frames write its
/// triangles as OBJ faces. A scene holds at most one, and no `yarn` or
/// `woven_patch` beside it (the models do not collide with each other),
/// and no `self_collision`.
///
/// | key | unit | default |
/// |---|---|---|
/// | `material` | `weft_shell::ShellMaterial` (`areal_density` kg/m², `stretch_modulus` N/m, `poisson_ratio`, `shear_modulus` N/m or `null` for isotropic, `bending_rigidity` N·m, `membrane_damping` `{"model": "none" \| "rayleigh" \| "strain_rate", "beta": s}`, `bending_damping` s) | cotton shirting, strain-rate `β` = 3 ms |
/// | `size` | `[along warp, along weft]`, m, > 0 | required |
/// | `vertices` | `[along warp, along weft]`, each ≥ 2 | required |
/// | `center` | `[x, y, z]`, m | required |
/// | `normal` | direction, non-zero | `[0, 1, 0]` |
/// | `warp_direction` | direction, not parallel to `normal`; the membrane's first axis | `[1, 0, 0]` |
/// | `pinned` | node selectors | `[]` |
/// | `initial_velocity` | `[vx, vy, vz]` m/s for every vertex | `[0, 0, 0]` |
/// | `model` | `"shell"` (implicit) or `"sbd"` ([`ClothModel`]) | `"shell"` |
/// | `sbd` | `weft_shell::SbdOptions` (`substeps`, `iterations`, constraint stiffnesses, `bending`, `velocity_damping` 1/s, `collision_thickness` m, `friction`, ...), with `"model": "sbd"` only | its defaults |
///
/// Vertex `(i, j)`, `i` along the warp direction, is node `j
/// vertices[0] + i`. `corner:K` counts counter-clockwise about the normal
/// from the origin corner: 0 = `(0, 0)`, 1 = `(last, 0)`, 2 = `(last,
/// last)`, 3 = `(0, last)`; `edge:warp_start` / `edge:warp_end` are the
/// sides at `i = 0` / `i = last`, `edge:weft_start` / `edge:weft_end` at
/// `j = 0` / `j = last` (the nodes a `woven_patch` of `yarn_counts =
/// [vertices[1], vertices[0]]` would pick).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TriangleClothObject {
    /// The membrane and hinge material.
    #[serde(default)]
    pub material: weft_shell::ShellMaterial,
    /// Extent along warp and weft (m).
    #[serde(deserialize_with = "de::pair")]
    pub size: [f64; 2],
    /// Vertices along warp and weft.
    #[serde(deserialize_with = "de::counts")]
    pub vertices: [usize; 2],
    /// Rectangle centre (m).
    #[serde(deserialize_with = "de::vec3")]
    pub center: [f64; 3],
    /// Cloth normal.
    #[serde(default = "default_normal", deserialize_with = "de::vec3")]
    pub normal: [f64; 3],
    /// Warp direction (the rest frame's first axis).
    #[serde(default = "default_warp", deserialize_with = "de::vec3")]
    pub warp_direction: [f64; 3],
    /// Pinned vertices.
    #[serde(default)]
    pub pinned: Vec<Selector>,
    /// Uniform initial velocity (m/s).
    #[serde(default, deserialize_with = "de::vec3")]
    pub initial_velocity: [f64; 3],
    /// The cloth model (default implicit).
    #[serde(default)]
    pub model: ClothModel,
    /// Options of the `sbd` model (its defaults when absent; only with
    /// `"model": "sbd"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sbd: Option<weft_shell::SbdOptions>,
}

/// The model of a `triangle_cloth` (`model`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClothModel {
    /// `"shell"`: implicit StVK membrane and discrete-shell hinges on the
    /// backward-Euler / Newton / PCG driver \[SBO18 §4\].
    #[default]
    Shell,
    /// `"sbd"`: strain-based dynamics with LOD bending springs \[SBD14,
    /// Kim23\] (`weft_shell::Sbd`), a position-based integrator of fixed
    /// steps `time_step.dt` (`adaptive`, `dt_min`, `dt_max` and
    /// `integrator` do not apply). Its stretch, shear and bending come from
    /// the `sbd` options' constraint stiffnesses, not from the material,
    /// of which it takes `areal_density` only; its gravity is the scene's
    /// (the options' `gravity` and `areal_density` are replaced), and the
    /// colliders' `friction` applies, their `stiffness` and `margin` not
    /// (contacts are projections at the options' `collision_thickness`).
    /// It starts at rest (no `initial_velocity`), no handle may move it,
    /// and `weft run --resume` refuses it.
    Sbd,
}

/// `{"type": "sphere"}`: a sphere collider (DESIGN §6).
///
/// | key | unit | default |
/// |---|---|---|
/// | `center` | `[x, y, z]`, m | required |
/// | `radius` | m, > 0 | required |
/// | `stiffness` | penalty `k_col`, N/m, > 0 | required |
/// | `friction` | Coulomb μ, ≥ 0 | 0 |
/// | `margin` (*added*) | δ, m, ≥ 0 | 0 |
/// | `keyframes` (*added*) | `[[t, [dx, dy, dz]], ...]`: translation from the initial placement (s, m), piecewise linear, held constant outside; a key may add a rotation vector `[t, [dx, dy, dz], [rx, ry, rz]]` (axis times angle, rad) about the collider's pivot (a sphere's centre, a plane's `point`, a capsule's midpoint, a mesh's `translation`), turned at constant angular velocity along the shortest arc between keys | `[]` (static) |
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SphereObject {
    /// Centre (m).
    #[serde(deserialize_with = "de::vec3")]
    pub center: [f64; 3],
    /// Radius (m).
    pub radius: f64,
    /// Penalty stiffness (N/m).
    pub stiffness: f64,
    /// Coulomb friction coefficient.
    #[serde(default)]
    pub friction: f64,
    /// Contact margin δ (m).
    #[serde(default)]
    pub margin: f64,
    /// Rigid-motion keyframes (translation, optional rotation).
    #[serde(default)]
    pub keyframes: Vec<de::ColliderKeyframe>,
}

/// `{"type": "plane"}`: the half-space on the `normal` side of the plane
/// through `point` is free; the other side is penetration (DESIGN §6).
///
/// | key | unit | default |
/// |---|---|---|
/// | `point` | `[x, y, z]`, m | required |
/// | `normal` | direction, non-zero (normalised on build) | required |
/// | `stiffness`, `friction`, `margin`, `keyframes` | as for [`SphereObject`] | |
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlaneObject {
    /// A point of the plane (m).
    #[serde(deserialize_with = "de::vec3")]
    pub point: [f64; 3],
    /// Normal pointing to the free side.
    #[serde(deserialize_with = "de::vec3")]
    pub normal: [f64; 3],
    /// Penalty stiffness (N/m).
    pub stiffness: f64,
    /// Coulomb friction coefficient.
    #[serde(default)]
    pub friction: f64,
    /// Contact margin δ (m).
    #[serde(default)]
    pub margin: f64,
    /// Rigid-motion keyframes (translation, optional rotation).
    #[serde(default)]
    pub keyframes: Vec<de::ColliderKeyframe>,
}

/// `{"type": "capsule"}` (*added*): the points within `radius` of the
/// segment `a`–`b`.
///
/// | key | unit | default |
/// |---|---|---|
/// | `a`, `b` | `[x, y, z]`, m (may coincide: a sphere) | required |
/// | `radius` | m, > 0 | required |
/// | `stiffness`, `friction`, `margin`, `keyframes` | as for [`SphereObject`] | |
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapsuleObject {
    /// First end of the axis (m).
    #[serde(deserialize_with = "de::vec3")]
    pub a: [f64; 3],
    /// Second end of the axis (m).
    #[serde(deserialize_with = "de::vec3")]
    pub b: [f64; 3],
    /// Radius (m).
    pub radius: f64,
    /// Penalty stiffness (N/m).
    pub stiffness: f64,
    /// Coulomb friction coefficient.
    #[serde(default)]
    pub friction: f64,
    /// Contact margin δ (m).
    #[serde(default)]
    pub margin: f64,
    /// Rigid-motion keyframes (translation, optional rotation).
    #[serde(default)]
    pub keyframes: Vec<de::ColliderKeyframe>,
}

/// `{"type": "mesh"}` (*added*): a closed triangle mesh from an OBJ file,
/// or an animated body from a folder of OBJ files (one per frame, the same
/// mesh in each, read in file-name order; `weft_solver::collide::MeshAnimation`:
/// vertices linear between frames, friction against their velocity); vertex
/// `p` of a file is placed at `scale · p + translation`. Exactly one of
/// `path` and `frames`.
///
/// | key | unit | default |
/// |---|---|---|
/// | `path` | OBJ file, relative to the scene file's directory (or absolute) | required unless `frames`; must exist |
/// | `frames` | folder of OBJ frames, relative as `path` | none (a still mesh) |
/// | `fps` | frames per second of `frames`, > 0 | required with `frames` |
/// | `translation` | `[x, y, z]`, m | `[0, 0, 0]` |
/// | `scale` | file units to m, > 0 | 1 |
/// | `stiffness`, `friction`, `margin`, `keyframes` | as for [`SphereObject`] | |
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeshObject {
    /// OBJ file as written in the scene (empty with `frames`).
    #[serde(default, skip_serializing_if = "path_is_empty")]
    pub path: PathBuf,
    /// Folder of OBJ frames of an animated body, as written in the scene.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<PathBuf>,
    /// Frames per second of `frames`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fps: Option<f64>,
    /// Translation (m).
    #[serde(default, deserialize_with = "de::vec3")]
    pub translation: [f64; 3],
    /// Uniform scale.
    #[serde(default = "one")]
    pub scale: f64,
    /// Penalty stiffness (N/m).
    pub stiffness: f64,
    /// Coulomb friction coefficient.
    #[serde(default)]
    pub friction: f64,
    /// Contact margin δ (m).
    #[serde(default)]
    pub margin: f64,
    /// Rigid-motion keyframes (translation, optional rotation).
    #[serde(default)]
    pub keyframes: Vec<de::ColliderKeyframe>,
}

fn path_is_empty(p: &Path) -> bool {
    p.as_os_str().is_empty()
}

/// `{"type": "handle"}`: prescribed motion of fabric nodes. The selected
/// nodes' positions become Dirichlet DOFs (pinned, even when not listed in
/// `pinned`), moved to `x₀ + d(t)` with `d` interpolated piecewise linearly
/// between keyframes and held constant before the first and after the last.
/// A node may belong to at most one handle; a handle may move pinned nodes
/// (DESIGN §8 example).
///
/// | key | unit | default |
/// |---|---|---|
/// | `object` | index of a `yarn` or `woven_patch` object | required |
/// | `nodes` | node selectors within that object, ≥ 1 | required |
/// | `keyframes` | `[[t, [dx, dy, dz]], ...]`: displacement from the initial positions (s, m), ≥ 1 key, times strictly increasing | required |
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandleObject {
    /// Scene object number of the fabric object.
    pub object: usize,
    /// Node selectors.
    pub nodes: Vec<Selector>,
    /// Displacement keyframes.
    #[serde(deserialize_with = "de::keyframes")]
    pub keyframes: Vec<(f64, [f64; 3])>,
}

/// The path shown for the document itself.
const ROOT: &str = "(top level)";

/// Formats a number compactly for messages (`1e-3`, `0.0125`, `10`).
pub(crate) fn num(x: f64) -> String {
    let plain = format!("{x}");
    let exp = format!("{x:e}");
    if exp.len() < plain.len() { exp } else { plain }
}

impl Scene {
    /// Reads and validates a scene file.
    ///
    /// # Errors
    /// [`SceneError::Io`] if the file cannot be read, otherwise as
    /// [`Scene::from_str`] with the path as the name.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Scene, SceneError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| SceneError::Io {
            file: path.display().to_string(),
            source,
        })?;
        Scene::from_str(&text, &path.display().to_string())
    }

    /// Parses and validates scene text. `name` is the file name used in
    /// messages and stored as [`Scene::source`], so relative mesh paths
    /// resolve against its directory.
    ///
    /// Objects are parsed one by one on their `type` (rather than through
    /// serde's buffered internally tagged enum), so errors inside an object
    /// carry the full path, e.g. `objects[1].yarn_counts[0]`.
    ///
    /// # Errors
    /// [`SceneError::Syntax`] for text that is not JSON;
    /// [`SceneError::Invalid`] naming the JSON path for a wrong type or
    /// shape, an unknown or missing key, an unknown material, object type,
    /// weave or format, a bad node selector, a handle naming a missing or
    /// non-fabric object, and values out of range (see [`Scene::validate`]).
    pub fn from_str(text: &str, name: &str) -> Result<Scene, SceneError> {
        let invalid = |path: String, message: String| SceneError::Invalid {
            file: name.to_owned(),
            path,
            message,
        };
        let mut root: serde_json::Value =
            serde_json::from_str(text).map_err(|e| SceneError::Syntax {
                file: name.to_owned(),
                line: e.line(),
                column: e.column(),
                message: strip_position(&e.to_string()),
            })?;
        let raw_objects = match root.as_object_mut() {
            Some(map) => map
                .get_mut("objects")
                .map(|v| std::mem::replace(v, serde_json::Value::Array(vec![]))),
            None => {
                return Err(invalid(
                    ROOT.into(),
                    format!(
                        "expected a JSON object with the scene keys, got {}",
                        json_kind(&root)
                    ),
                ));
            }
        };
        let mut scene: Scene = serde_path_to_error::deserialize(root).map_err(|e| {
            let p = e.path().to_string();
            let p = if p == "." { ROOT.to_owned() } else { p };
            invalid(p, e.inner().to_string())
        })?;
        let raw_objects = match raw_objects {
            Some(serde_json::Value::Array(a)) => a,
            Some(other) => {
                return Err(invalid(
                    "objects".into(),
                    format!("expected an array of objects, got {}", json_kind(&other)),
                ));
            }
            None => unreachable!("a missing `objects` key fails deserialization above"),
        };
        scene.objects = raw_objects
            .into_iter()
            .enumerate()
            .map(|(i, v)| parse_object(i, v).map_err(|(p, m)| invalid(p, m)))
            .collect::<Result<_, _>>()?;
        scene.source = PathBuf::from(name);
        scene.validate()?;
        Ok(scene)
    }

    /// The file name used in messages.
    pub fn file_name(&self) -> String {
        file_label(&self.source)
    }

    /// The directory relative paths resolve against.
    pub fn base_dir(&self) -> PathBuf {
        match self.source.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }

    pub(crate) fn invalid(
        &self,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> SceneError {
        SceneError::Invalid {
            file: self.file_name(),
            path: path.into(),
            message: message.into(),
        }
    }

    /// Semantic checks after parsing (called by [`Scene::from_str`]; call it
    /// on scenes made in code): positive finite `duration`, `dt`, `dt_min`,
    /// `dt_max`, `output.interval`, tolerances and iteration limits;
    /// `dt_min ≤ dt ≤ dt_max`; no duplicate output format; every material
    /// valid (weft-core rules); objects referring to defined materials; yarns
    /// with ≥ 2 nodes, matching `rest_lengths`, in-range node indices;
    /// patches with positive sizes and ≥ 2 yarns each way; node selectors that
    /// fit their object; colliders with positive radius/scale/stiffness,
    /// non-negative friction and margin, non-zero normals; keyframes with
    /// finite, strictly increasing times; handles naming an existing fabric
    /// object, with at least one node and one keyframe.
    ///
    /// # Errors
    /// The first problem found, as [`SceneError::Invalid`] with its path.
    pub fn validate(&self) -> Result<(), SceneError> {
        let positive = |path: &str, x: f64, unit: &str| {
            if x.is_finite() && x > 0.0 {
                Ok(())
            } else {
                Err(self.invalid(
                    path,
                    format!("expected a positive finite number ({unit}), got {}", num(x)),
                ))
            }
        };
        let non_negative = |path: &str, x: f64, unit: &str| {
            if x.is_finite() && x >= 0.0 {
                Ok(())
            } else {
                Err(self.invalid(
                    path,
                    format!(
                        "expected a non-negative finite number ({unit}), got {}",
                        num(x)
                    ),
                ))
            }
        };
        positive("duration", self.duration, "s")?;
        if let Some(sc) = &self.self_collision {
            positive("self_collision.stiffness", sc.stiffness, "N/m")?;
            non_negative("self_collision.margin", sc.margin, "m")?;
        }
        let ts = &self.time_step;
        positive("time_step.dt", ts.dt, "s")?;
        if let Some(m) = ts.dt_min {
            positive("time_step.dt_min", m, "s")?;
        }
        if let Some(m) = ts.dt_max {
            positive("time_step.dt_max", m, "s")?;
        }
        if ts.dt_min() > ts.dt {
            return Err(self.invalid(
                "time_step",
                format!(
                    "dt_min ({}) > dt ({}): expected dt_min ≤ dt ≤ dt_max",
                    num(ts.dt_min()),
                    num(ts.dt)
                ),
            ));
        }
        if ts.dt > ts.dt_max() {
            return Err(self.invalid(
                "time_step",
                format!(
                    "dt ({}) > dt_max ({}): expected dt_min ≤ dt ≤ dt_max",
                    num(ts.dt),
                    num(ts.dt_max())
                ),
            ));
        }
        let it = &self.integrator;
        if it.newton_max_iterations == 0 {
            return Err(self.invalid(
                "integrator.newton_max_iterations",
                "expected an integer ≥ 1, got 0",
            ));
        }
        if it.cg_max_iterations == 0 {
            return Err(self.invalid(
                "integrator.cg_max_iterations",
                "expected an integer ≥ 1, got 0",
            ));
        }
        positive(
            "integrator.newton_tolerance",
            it.newton_tolerance,
            "relative to the step's force scale",
        )?;
        if !(it.cg_tolerance > 0.0 && it.cg_tolerance < 1.0) {
            return Err(self.invalid(
                "integrator.cg_tolerance",
                format!(
                    "expected a relative tolerance in (0, 1), got {}",
                    num(it.cg_tolerance)
                ),
            ));
        }
        positive("output.interval", self.output.interval, "s")?;
        for (i, f) in self.output.formats.iter().enumerate() {
            if self.output.formats[..i].contains(f) {
                return Err(self.invalid(
                    format!("output.formats[{i}]"),
                    format!("duplicate format \"{}\"", f.extension()),
                ));
            }
        }
        if !self.gravity.iter().all(|g| g.is_finite()) {
            return Err(self.invalid("gravity", "expected three finite numbers (m/s²)"));
        }
        for (name, spec) in &self.fabrics {
            if self.materials.contains_key(name) {
                return Err(self.invalid(
                    format!("fabrics.{name}"),
                    "a name not also used in materials",
                ));
            }
            positive(&format!("fabrics.{name}.spacing"), spec.spacing, "m")?;
        }
        let all = self
            .materials
            .iter()
            .map(|(n, m)| ("materials", n, m.to_material(n)))
            .chain(
                self.fabrics
                    .iter()
                    .map(|(n, f)| ("fabrics", n, f.to_material(n))),
            );
        for (map, name, material) in all {
            if let Err(ModelError::InvalidMaterial {
                field,
                expected,
                value,
                ..
            }) = material.validate()
            {
                let field = match (map, field) {
                    ("fabrics", f) if f.starts_with("damping") => f.to_string(),
                    ("fabrics", _) => "preset".to_string(),
                    (_, f) => f.to_string(),
                };
                return Err(self.invalid(
                    format!("{map}.{name}.{field}"),
                    format!("expected {expected}, got {}", num(value)),
                ));
            }
        }
        let n_obj = self.objects.len();
        for (i, obj) in self.objects.iter().enumerate() {
            let p = |field: &str| format!("objects[{i}].{field}");
            let material = |m: &str| {
                if self.materials.contains_key(m) || self.fabrics.contains_key(m) {
                    Ok(())
                } else {
                    let mut known: Vec<&str> = self
                        .materials
                        .keys()
                        .chain(self.fabrics.keys())
                        .map(String::as_str)
                        .collect();
                    known.sort_unstable();
                    Err(self.invalid(
                        p("material"),
                        format!(
                            "unknown material '{m}' (defined: {})",
                            if known.is_empty() {
                                "none".to_string()
                            } else {
                                known.join(", ")
                            }
                        ),
                    ))
                }
            };
            let collider =
                |stiffness: f64, friction: f64, margin: f64, keyframes: &[de::ColliderKeyframe]| {
                    positive(&p("stiffness"), stiffness, "N/m")?;
                    non_negative(&p("friction"), friction, "Coulomb coefficient")?;
                    non_negative(&p("margin"), margin, "m")?;
                    let translations: Vec<(f64, [f64; 3])> =
                        keyframes.iter().map(|k| (k.time, k.translation)).collect();
                    self.check_keyframes(&p("keyframes"), &translations)?;
                    match keyframes
                        .iter()
                        .position(|k| k.rotation.is_some_and(|r| !r.iter().all(|c| c.is_finite())))
                    {
                        Some(j) => Err(self.invalid(
                            format!("{}[{j}]", p("keyframes")),
                            "expected a finite rotation vector (rad)",
                        )),
                        None => Ok(()),
                    }
                };
            match obj {
                SceneObject::Yarn(y) => {
                    material(&y.material)?;
                    let n = y.nodes.len();
                    if n < 2 {
                        return Err(self.invalid(
                            p("nodes"),
                            format!("a yarn needs at least two nodes, got {n}"),
                        ));
                    }
                    if let Some(r) = &y.rest_lengths {
                        if r.len() != n - 1 {
                            return Err(self.invalid(
                                p("rest_lengths"),
                                format!(
                                    "expected {} values (one per segment of the {n} nodes), got {}",
                                    n - 1,
                                    r.len()
                                ),
                            ));
                        }
                        for (j, &l) in r.iter().enumerate() {
                            positive(&p(&format!("rest_lengths[{j}]")), l, "m")?;
                        }
                    }
                    for (j, s) in y.pinned.iter().enumerate() {
                        self.check_selector(&p(&format!("pinned[{j}]")), s, obj)?;
                    }
                    for (s, m) in &y.point_masses.0 {
                        let path = p(&format!("point_masses.{s}"));
                        self.check_selector(&path, s, obj)?;
                        non_negative(&path, *m, "kg")?;
                    }
                    for (s, _) in &y.initial_velocities.0 {
                        self.check_selector(&p(&format!("initial_velocities.{s}")), s, obj)?;
                    }
                }
                SceneObject::TriangleCloth(c) => {
                    if let Err(weft_shell::ShellError::InvalidOption { name, message }) =
                        c.material.validate()
                    {
                        return Err(self.invalid(p(&format!("material.{name}")), message));
                    }
                    for (j, &s) in c.size.iter().enumerate() {
                        positive(&p(&format!("size[{j}]")), s, "m")?;
                    }
                    for (j, &n) in c.vertices.iter().enumerate() {
                        if n < 2 {
                            return Err(self.invalid(
                                p(&format!("vertices[{j}]")),
                                format!(
                                    "expected at least 2 vertices along the {}, got {n}",
                                    ["warp", "weft"][j]
                                ),
                            ));
                        }
                    }
                    let others = self.objects.iter().enumerate().filter(|(k, o)| {
                        *k != i
                            && matches!(
                                o,
                                SceneObject::Yarn(_)
                                    | SceneObject::WovenPatch(_)
                                    | SceneObject::TriangleCloth(_)
                            )
                    });
                    if let Some((k, o)) = others.min_by_key(|(k, _)| *k) {
                        return Err(self.invalid(
                            format!("objects[{}]", i.max(k)),
                            format!(
                                "a scene with one triangle_cloth and no other cloth (objects[{k}] is a {}): the triangle-mesh and yarn models do not collide with each other",
                                o.type_name()
                            ),
                        ));
                    }
                    if self.self_collision.is_some() {
                        return Err(self.invalid(
                            "self_collision",
                            "no self_collision in a scene with a triangle_cloth (yarn self-collision only)",
                        ));
                    }
                    for (j, s) in c.pinned.iter().enumerate() {
                        self.check_selector(&p(&format!("pinned[{j}]")), s, obj)?;
                    }
                    match (c.model, &c.sbd) {
                        (ClothModel::Shell, Some(_)) => {
                            return Err(self.invalid(
                                p("sbd"),
                                "no `sbd` options on a triangle_cloth of \"model\": \"shell\" (add \"model\": \"sbd\", or remove them)",
                            ));
                        }
                        (ClothModel::Sbd, options) => {
                            let options = options.clone().unwrap_or_default();
                            if let Err(weft_shell::ShellError::InvalidOption { name, message }) =
                                options.validate()
                            {
                                return Err(self.invalid(p(&format!("sbd.{name}")), message));
                            }
                            if c.initial_velocity != [0.0; 3] {
                                return Err(self.invalid(
                                    p("initial_velocity"),
                                    "no initial velocity on a triangle_cloth of \"model\": \"sbd\" (it starts at rest)",
                                ));
                            }
                            let moved = self
                                .objects
                                .iter()
                                .position(|o| matches!(o, SceneObject::Handle(h) if h.object == i));
                            if let Some(k) = moved {
                                return Err(self.invalid(
                                    format!("objects[{k}].object"),
                                    format!(
                                        "a handle of a yarn, woven_patch or implicit triangle_cloth; objects[{i}] is a triangle_cloth of \"model\": \"sbd\" (pin its vertices instead)"
                                    ),
                                ));
                            }
                        }
                        (ClothModel::Shell, None) => {}
                    }
                }
                SceneObject::WovenPatch(w) => {
                    material(&w.material)?;
                    for (j, &s) in w.size.iter().enumerate() {
                        positive(&p(&format!("size[{j}]")), s, "m")?;
                    }
                    for (j, &c) in w.yarn_counts.iter().enumerate() {
                        if c < 2 {
                            return Err(self.invalid(
                                p(&format!("yarn_counts[{j}]")),
                                format!(
                                    "expected at least 2 yarns ({}), got {c}",
                                    ["warp", "weft"][j]
                                ),
                            ));
                        }
                    }
                    if let Some(f) = self.fabrics.get(&w.material) {
                        // A preset is homogenised at one yarn spacing: the
                        // patch's warp spacing (across the warp yarns) and
                        // weft spacing must both be it.
                        let spacings = [
                            w.size[1] / (w.yarn_counts[0] - 1) as f64,
                            w.size[0] / (w.yarn_counts[1] - 1) as f64,
                        ];
                        for (j, sp) in spacings.into_iter().enumerate() {
                            if (sp / f.spacing - 1.0).abs() > 0.01 {
                                return Err(self.invalid(
                                    p(&format!("yarn_counts[{j}]")),
                                    format!(
                                        "a {} yarn spacing of fabrics.{}.spacing = {} mm (within 1 %), got {} mm (size / (count - 1))",
                                        ["warp", "weft"][j],
                                        w.material,
                                        num(f.spacing * 1e3),
                                        num(sp * 1e3)
                                    ),
                                ));
                            }
                        }
                        if w.sliding && !f.sliding {
                            return Err(self.invalid(
                                p("sliding"),
                                format!(
                                    "\"sliding\": false, or \"sliding\": true in fabrics.{} (its friction anchors and yarn contact); a sliding patch of a fabric without them lets the yarns run through the crossings freely",
                                    w.material
                                ),
                            ));
                        }
                    }
                    for (j, s) in w.pinned.iter().enumerate() {
                        self.check_selector(&p(&format!("pinned[{j}]")), s, obj)?;
                    }
                    for (s, _) in &w.initial_velocities.0 {
                        self.check_selector(&p(&format!("initial_velocities.{s}")), s, obj)?;
                    }
                    for (s, m) in &w.point_masses.0 {
                        let path = p(&format!("point_masses.{s}"));
                        self.check_selector(&path, s, obj)?;
                        non_negative(&path, *m, "kg")?;
                    }
                }
                SceneObject::Sphere(s) => {
                    positive(&p("radius"), s.radius, "m")?;
                    collider(s.stiffness, s.friction, s.margin, &s.keyframes)?;
                }
                SceneObject::Plane(s) => {
                    if s.normal.iter().all(|c| *c == 0.0) {
                        return Err(self.invalid(p("normal"), "expected a non-zero direction"));
                    }
                    collider(s.stiffness, s.friction, s.margin, &s.keyframes)?;
                }
                SceneObject::Capsule(s) => {
                    positive(&p("radius"), s.radius, "m")?;
                    collider(s.stiffness, s.friction, s.margin, &s.keyframes)?;
                }
                SceneObject::Mesh(s) => {
                    match (&s.frames, s.fps) {
                        (Some(_), _) if !s.path.as_os_str().is_empty() => {
                            return Err(self.invalid(
                                p("frames"),
                                "expected either `path` (a still mesh) or `frames` (an animated \
                                 one), not both",
                            ));
                        }
                        (Some(f), fps) => {
                            if f.as_os_str().is_empty() {
                                return Err(
                                    self.invalid(p("frames"), "expected a folder of OBJ frames")
                                );
                            }
                            let Some(fps) = fps else {
                                return Err(self.invalid(
                                    p("fps"),
                                    "expected the frames per second of `frames`",
                                ));
                            };
                            positive(&p("fps"), fps, "frames per second")?;
                        }
                        (None, Some(_)) => {
                            return Err(self
                                .invalid(p("fps"), "`fps` belongs to `frames`, which is absent"));
                        }
                        (None, None) if s.path.as_os_str().is_empty() => {
                            return Err(self.invalid(
                                p("path"),
                                "expected an OBJ file path (or `frames`, a folder of OBJ frames)",
                            ));
                        }
                        (None, None) => {}
                    }
                    positive(&p("scale"), s.scale, "file units to m")?;
                    collider(s.stiffness, s.friction, s.margin, &s.keyframes)?;
                }
                SceneObject::Handle(h) => {
                    let target = self.objects.get(h.object).ok_or_else(|| {
                        self.invalid(
                            p("object"),
                            format!(
                                "handle refers to object {} but the scene has {n_obj} objects (numbered from 0 in file order)",
                                h.object
                            ),
                        )
                    })?;
                    if !target.is_fabric() {
                        return Err(self.invalid(
                            p("object"),
                            format!(
                                "handle refers to object {}, a {}; expected a yarn, woven_patch or triangle_cloth object",
                                h.object,
                                target.type_name()
                            ),
                        ));
                    }
                    if h.nodes.is_empty() {
                        return Err(self.invalid(p("nodes"), "expected at least one node selector"));
                    }
                    for (j, s) in h.nodes.iter().enumerate() {
                        self.check_selector(&p(&format!("nodes[{j}]")), s, target)?;
                    }
                    if h.keyframes.is_empty() {
                        return Err(self.invalid(
                            p("keyframes"),
                            "expected at least one keyframe [t, [dx, dy, dz]]",
                        ));
                    }
                    self.check_keyframes(&p("keyframes"), &h.keyframes)?;
                }
            }
        }
        Ok(())
    }

    fn check_selector(
        &self,
        path: &str,
        sel: &Selector,
        target: &SceneObject,
    ) -> Result<(), SceneError> {
        let n = target.node_count();
        match (sel.0, target) {
            (NodeSelector::Index(i), _) if i >= n => Err(self.invalid(
                path,
                format!(
                    "'{sel}': node index out of range: the {} has {n} nodes",
                    target.type_name(),
                ),
            )),
            (NodeSelector::Corner(_) | NodeSelector::Edge(_), SceneObject::Yarn(_)) => {
                Err(self.invalid(
                    path,
                    format!(
                        "'{sel}': corner and edge selectors apply to woven patches; expected a node index on a yarn"
                    ),
                ))
            }
            _ => Ok(()),
        }
    }

    fn check_keyframes(&self, path: &str, keys: &[(f64, [f64; 3])]) -> Result<(), SceneError> {
        for (j, (t, d)) in keys.iter().enumerate() {
            if !t.is_finite() || !d.iter().all(|c| c.is_finite()) {
                return Err(self.invalid(
                    format!("{path}[{j}]"),
                    "expected a finite time and displacement",
                ));
            }
            if j > 0 && *t <= keys[j - 1].0 {
                return Err(self.invalid(
                    format!("{path}[{j}]"),
                    format!(
                        "keyframe times must increase strictly: {} follows {}",
                        num(*t),
                        num(keys[j - 1].0)
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// `serde_json` appends " at line L column C"; the Syntax variant carries
/// them separately.
fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_owned(),
        None => msg.to_owned(),
    }
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// Parses `objects[i]` on its `type`; errors are `(path, message)`.
fn parse_object(i: usize, v: serde_json::Value) -> Result<SceneObject, (String, String)> {
    let here = format!("objects[{i}]");
    let serde_json::Value::Object(mut map) = v else {
        return Err((
            here,
            format!(
                "expected an object with a \"type\" key, got {}",
                json_kind(&v)
            ),
        ));
    };
    let types = OBJECT_TYPES.join(", ");
    let ty = match map.remove("type") {
        Some(serde_json::Value::String(s)) => s,
        Some(other) => {
            return Err((
                format!("{here}.type"),
                format!(
                    "expected a string, one of: {types}; got {}",
                    json_kind(&other)
                ),
            ));
        }
        None => {
            return Err((
                here,
                format!("missing field `type`: expected one of: {types}"),
            ));
        }
    };
    let v = serde_json::Value::Object(map);
    fn sub<T: serde::de::DeserializeOwned>(
        here: &str,
        v: serde_json::Value,
    ) -> Result<T, (String, String)> {
        serde_path_to_error::deserialize(v).map_err(|e| {
            let p = e.path().to_string();
            let path = if p == "." {
                here.to_owned()
            } else if p.starts_with('[') {
                format!("{here}{p}")
            } else {
                format!("{here}.{p}")
            };
            (path, e.inner().to_string())
        })
    }
    Ok(match ty.as_str() {
        "yarn" => SceneObject::Yarn(sub(&here, v)?),
        "woven_patch" => SceneObject::WovenPatch(sub(&here, v)?),
        "triangle_cloth" => SceneObject::TriangleCloth(sub(&here, v)?),
        "sphere" => SceneObject::Sphere(sub(&here, v)?),
        "plane" => SceneObject::Plane(sub(&here, v)?),
        "capsule" => SceneObject::Capsule(sub(&here, v)?),
        "mesh" => SceneObject::Mesh(sub(&here, v)?),
        "handle" => SceneObject::Handle(sub(&here, v)?),
        other => {
            return Err((
                format!("{here}.type"),
                format!("unknown object type '{other}': expected one of: {types}"),
            ));
        }
    })
}
