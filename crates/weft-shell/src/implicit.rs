//! Implicit triangle-mesh cloth on weft's solver: Saint-Venant–Kirchhoff
//! membrane triangles with strain-rate (or Rayleigh) damping [SBO18 §4,
//! eq. 13-16] and discrete-shell bending hinges, integrated by the same
//! backward-Euler / Newton / PCG driver, adaptive step, colliders and ties
//! as the yarn model ([`weft_solver::Simulation`]).
//!
//! [`shell_fabric`] turns a [`ClothMesh`] into a [`Fabric`] whose nodes are
//! the mesh vertices with positions only (their arc-length coordinates are
//! fixed), whose mass is the lumped triangle mass `ρ_A A / 3` per vertex
//! (point masses), and whose elements are one
//! [`weft_core::MembraneTriangle`] per triangle and one
//! [`weft_core::ShellHinge`] per interior edge. Everything else (time step,
//! Newton tolerance, colliders) is the solver's.
//!
//! The membrane is orthotropic in the rest frame's axes when
//! [`ShellMaterial::shear_modulus`] is given (a woven fabric with its warp
//! and weft along those axes: tensile `E t` along both, the measured shear
//! rigidity `G`, a few thousandths of `E t` for cotton, which no isotropic
//! membrane can have since `E ≤ 4μ` in 2D), and isotropic StVK [SBO18
//! eq. 13] with a Poisson ratio otherwise ([`weft_core::MembraneModuli`]).

use crate::ShellError;
use crate::mesh::ClothMesh;
use nalgebra::Vector3;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use weft_core::{
    DOFS_PER_NODE, Elements, Fabric, FabricPreset, FabricProperties, MembraneModuli,
    MembraneTriangle, ObjectInfo, ObjectKind, ShellHinge, State,
};
use weft_potentials::hinge::Hinge;
use weft_potentials::stvk::Stvk;
use weft_solver::{Settings, Simulation, SolverError};

/// Damping of the membrane [SBO18 §3, Fig. 3].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum MembraneDamping {
    /// No damping.
    None,
    /// Rayleigh stiffness-proportional damping `f = -β K⁺ q̇` (β in s): the
    /// baseline, which also damps the rigid rotation of a stressed membrane
    /// [SBO18 §3.5].
    Rayleigh {
        /// `β` (s).
        beta: f64,
    },
    /// Strain-rate dissipation `Ψ_d = λ_d/2 tr(Ė)² + μ_d tr(Ė²)` [SBO18
    /// eq. 15] tuned to Rayleigh's `β` by the analogy of [SBO18 eq. 12]:
    /// `λ_d = β λ`, `μ_d = β μ` (for an orthotropic membrane, every
    /// modulus times `β`).
    StrainRate {
        /// `β` (s).
        beta: f64,
    },
    /// Strain-rate dissipation with one `β` per deformation mode
    /// ([`MembraneModuli::scaled_per_mode`]): the tensile moduli times
    /// `stretch`, the shear modulus `G` times `shear` [SBO18 eq. 12 per
    /// mode, as the yarn model's `β_s` and `β_b`, DESIGN §2]. Both
    /// positive, or both 0 for none.
    StrainRateModes {
        /// `β` of the tensile moduli `c11, c22, c12` (s).
        stretch: f64,
        /// `β` of the in-plane shear modulus (s).
        shear: f64,
    },
}

/// Material of implicit triangle-mesh cloth (SI; unknown keys are errors
/// when read from JSON). The default is cotton shirting
/// ([`FabricPreset::Cotton`], KES-F values, DESIGN §2, orthotropic:
/// [`ShellMaterial::from_properties`]) with strain-rate damping
/// `β = 3 ms`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ShellMaterial {
    /// Areal density `ρ_A` (kg/m²).
    pub areal_density: f64,
    /// Tensile stiffness per width `E t` (N/m): the membrane's Young's
    /// modulus times its thickness.
    pub stretch_modulus: f64,
    /// Poisson ratio `ν` of the membrane, in `[0, 0.5)` (`ν₁₂` of an
    /// orthotropic one).
    pub poisson_ratio: f64,
    /// In-plane shear stiffness `G` (N/m, KES-F's shear force per width
    /// over the shear angle) of an orthotropic membrane whose two yarn
    /// families run along the rest frame's axes, each with tensile
    /// stiffness `stretch_modulus`
    /// ([`MembraneModuli::orthotropic`]); `None` for an isotropic one
    /// ([`MembraneModuli::isotropic`] with the Lamé moduli of
    /// [`ShellMaterial::lame`]).
    pub shear_modulus: Option<f64>,
    /// Bending rigidity `B` (N·m) of the hinges (the plate's `D`; the
    /// hinge energy on a regular mesh is about three times the plate's,
    /// `weft_potentials::hinge`).
    pub bending_rigidity: f64,
    /// Membrane damping.
    pub membrane_damping: MembraneDamping,
    /// Bending damping `β_b` (s): the hinges' strain-rate dissipation with
    /// `k_d = β_b B` [SBO18 eq. 12]; 0 for none (SBO18's Fig. 3 StVK runs
    /// damp the membrane only).
    pub bending_damping: f64,
}

impl Default for ShellMaterial {
    fn default() -> Self {
        let mut m = Self::from_properties(&FabricPreset::Cotton.properties());
        m.membrane_damping = MembraneDamping::StrainRate { beta: 3e-3 };
        m
    }
}

impl ShellMaterial {
    /// The woven fabric of measured properties as an orthotropic membrane
    /// with its warp and weft along the rest frame's axes: `ρ_A`, `E t` =
    /// the tensile stiffness per width, `G` = the shear rigidity, `B` = the
    /// bending rigidity per width, `ν = 0` (the yarn model's warp and weft
    /// are uncoupled too; KES-F gives no Poisson ratio), no damping.
    pub fn from_properties(p: &FabricProperties) -> Self {
        ShellMaterial {
            areal_density: p.areal_density,
            stretch_modulus: p.tensile,
            poisson_ratio: 0.0,
            shear_modulus: Some(p.shear),
            bending_rigidity: p.bending,
            membrane_damping: MembraneDamping::None,
            bending_damping: 0.0,
        }
    }

    /// Plane-stress Lamé moduli `(λ, μ)` (N/m) of the isotropic membrane:
    /// `λ = E t ν / (1 - ν²)`, `μ = E t / (2 (1 + ν))`.
    pub fn lame(&self) -> (f64, f64) {
        let (e, nu) = (self.stretch_modulus, self.poisson_ratio);
        (e * nu / (1.0 - nu * nu), e / (2.0 * (1.0 + nu)))
    }

    /// The membrane's elastic moduli (N/m): orthotropic with `G` =
    /// [`ShellMaterial::shear_modulus`] when given, else isotropic.
    pub fn moduli(&self) -> MembraneModuli {
        match self.shear_modulus {
            Some(g) => MembraneModuli::orthotropic(
                self.stretch_modulus,
                self.stretch_modulus,
                self.poisson_ratio,
                g,
            ),
            None => {
                let (lambda, mu) = self.lame();
                MembraneModuli::isotropic(lambda, mu)
            }
        }
    }

    /// Checks the documented ranges.
    ///
    /// # Errors
    /// [`ShellError::InvalidOption`] naming the field.
    pub fn validate(&self) -> Result<(), ShellError> {
        let bad =
            |name: &'static str, message: String| Err(ShellError::InvalidOption { name, message });
        let positive = [
            ("areal_density", self.areal_density),
            ("stretch_modulus", self.stretch_modulus),
        ];
        let shear = self.shear_modulus.map(|g| ("shear_modulus", g));
        for (name, v) in positive.into_iter().chain(shear) {
            if !(v > 0.0 && v.is_finite()) {
                return bad(name, format!("{v}: expected a finite value > 0"));
            }
        }
        for (name, v) in [
            ("bending_rigidity", self.bending_rigidity),
            ("bending_damping", self.bending_damping),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                return bad(name, format!("{v}: expected a finite value >= 0"));
            }
        }
        let nu = self.poisson_ratio;
        if !((0.0..0.5).contains(&nu)) {
            return bad(
                "poisson_ratio",
                format!("{nu}: expected a value in [0, 0.5)"),
            );
        }
        let betas: &[(&'static str, f64)] = match self.membrane_damping {
            MembraneDamping::None => &[],
            MembraneDamping::Rayleigh { beta } | MembraneDamping::StrainRate { beta } => {
                &[("membrane_damping.beta", beta)]
            }
            MembraneDamping::StrainRateModes { stretch, shear } => {
                // One zero and one positive would make `C_d` singular.
                if (stretch == 0.0) != (shear == 0.0) {
                    return bad(
                        "membrane_damping",
                        format!(
                            "stretch {stretch} s, shear {shear} s: expected both > 0, or both 0 \
                             for no damping"
                        ),
                    );
                }
                &[
                    ("membrane_damping.stretch", stretch),
                    ("membrane_damping.shear", shear),
                ]
            }
        };
        for &(name, beta) in betas {
            if !(beta >= 0.0 && beta.is_finite()) {
                return bad(name, format!("{beta}: expected a finite value >= 0 (s)"));
            }
        }
        Ok(())
    }
}

/// The interior edges of `mesh` as hinges `[a, b, c, d]`: the edge `a b`
/// with the opposite vertices `c` of the triangle `(a, b, c)` and `d` of
/// `(b, a, d)`, both oriented counter-clockwise in the rest frame. Edges
/// with one triangle (boundary) or more than two (non-manifold) get none.
pub fn hinges(mesh: &ClothMesh) -> Vec<[usize; 4]> {
    let rest = mesh.rest();
    let mut opposite: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
    for t in mesh.triangles() {
        let mut t = t.map(|v| v as usize);
        let [p, q, r] = t.map(|v| rest[v]);
        if (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]) < 0.0 {
            t.swap(1, 2);
        }
        for k in 0..3 {
            opposite
                .entry((t[k], t[(k + 1) % 3]))
                .or_default()
                .push(t[(k + 2) % 3]);
        }
    }
    let mut out = Vec::new();
    for (&(a, b), cs) in &opposite {
        if a > b {
            continue;
        }
        if let ([c], Some([d])) = (cs.as_slice(), opposite.get(&(b, a)).map(Vec::as_slice)) {
            out.push([a, b, *c, *d]);
        }
    }
    out.sort_unstable();
    out
}

/// The implicit cloth of `mesh` in `material`, at rest in the mesh's world
/// positions, with the vertices in `fixed` held in place (Dirichlet):
/// a [`Fabric`] for [`weft_solver::Simulation`] (module docs). The rest
/// shape is the mesh's 2D rest frame, flat (rest angle 0 at every hinge).
///
/// # Errors
/// [`ShellError::InvalidOption`] for a material outside its ranges,
/// [`ShellError::DegenerateTriangle`] for a triangle of zero rest area,
/// [`ShellError::InvalidMesh`] for a fixed vertex out of range.
pub fn shell_fabric(
    mesh: &ClothMesh,
    material: &ShellMaterial,
    fixed: &[usize],
) -> Result<Fabric, ShellError> {
    material.validate()?;
    let n = mesh.vertex_count();
    let stiffness = material.moduli();
    let (damping, rayleigh_beta) = match material.membrane_damping {
        MembraneDamping::None => (MembraneModuli::ZERO, 0.0),
        MembraneDamping::Rayleigh { beta } => (MembraneModuli::ZERO, beta),
        MembraneDamping::StrainRate { beta } => (stiffness.scaled(beta), 0.0),
        MembraneDamping::StrainRateModes { stretch, shear } => {
            (stiffness.scaled_per_mode(stretch, shear), 0.0)
        }
    };
    let rest = mesh.rest();
    let triangles = mesh
        .triangles()
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let nodes = t.map(|v| v as usize);
            let tri = MembraneTriangle {
                nodes,
                rest: nodes.map(|v| rest[v]),
                stiffness,
                damping,
                rayleigh_beta,
            };
            // The element's own validation, so the assembler cannot fail.
            Stvk::new(tri.rest, &stiffness.matrix(), &damping.matrix())
                .map(|_| tri)
                .ok_or(ShellError::DegenerateTriangle {
                    triangle: i,
                    vertices: *t,
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let hinges = hinges(mesh)
        .into_iter()
        .filter_map(|nodes| {
            let rest = nodes.map(|v| [rest[v][0], rest[v][1], 0.0]);
            // Hinges over a sliver are left out (their triangles carry the
            // membrane; a zero-area hinge has no bending measure).
            Hinge::new(rest, material.bending_rigidity).ok()?;
            Some(ShellHinge {
                nodes,
                rest,
                rigidity: material.bending_rigidity,
                damping: material.bending_damping * material.bending_rigidity,
            })
        })
        .collect();
    let mut free = vec![[true, true, true, false, false]; n];
    for &v in fixed {
        let f = free.get_mut(v).ok_or_else(|| {
            ShellError::InvalidMesh(format!(
                "fixed vertex {v} is out of range: the mesh has {n} vertices"
            ))
        })?;
        *f = [false; DOFS_PER_NODE];
    }
    let x = mesh.positions().to_vec();
    Ok(Fabric {
        materials: Vec::new(),
        yarns: Vec::new(),
        objects: vec![ObjectInfo {
            kind: ObjectKind::TriangleMesh {
                triangles: triangles.len(),
                grid: None,
            },
            first_node: 0,
            node_count: n,
        }],
        free,
        point_mass: mesh.lumped_masses(material.areal_density),
        node_yarns: vec![[None, None]; n],
        crimp: vec![0; n],
        elements: Elements {
            triangles,
            hinges,
            ..Elements::default()
        },
        initial: State {
            x_dot: vec![nalgebra::Vector3::zeros(); n],
            x,
            u: vec![0.0; n],
            v: vec![0.0; n],
            u_dot: vec![0.0; n],
            v_dot: vec![0.0; n],
            anchors: Vec::new(),
        },
    })
}

/// The two motions of SBO18 Fig. 3 (left) in our reading (the paper draws
/// them without giving the set-up): a square patch pinned along its top
/// edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fig3Motion {
    /// Released at rest in the vertical plane: the patch stretches under
    /// its weight and its stretch oscillation decays (a strain motion).
    Hanging,
    /// Released from horizontal: the patch swings about the pinned edge, a
    /// rigid rotation of a stressed membrane.
    Swinging,
}

/// Side of the SBO18 Fig. 3 patch (m), ours.
pub const FIG3_SIDE: f64 = 0.3;

/// The material of the SBO18 Fig. 3 patch, ours (SBO18 gives none): a soft
/// isotropic membrane (`E t` = 100 N/m, `ν` = 0.3, `ρ_A` = 0.15 kg/m²,
/// `B` = 1e-5 N·m) whose stretch oscillation under its own weight is slow
/// enough (a period of about 50 ms) to be resolved by the time step, with
/// the membrane damping `damping` and none on bending, as in SBO18.
pub fn fig3_material(damping: MembraneDamping) -> ShellMaterial {
    ShellMaterial {
        areal_density: 0.15,
        stretch_modulus: 100.0,
        poisson_ratio: 0.3,
        shear_modulus: None,
        bending_rigidity: 1e-5,
        membrane_damping: damping,
        bending_damping: 0.0,
    }
}

/// The SBO18 Fig. 3 (left) patch of `n x n` vertices ([SBO18 §6]: 33 x 33
/// = 1,089), side [`FIG3_SIDE`], in [`fig3_material`] with `damping`,
/// pinned along its top edge (the row of vertices at the origin, along
/// `x`), hanging down in the `x-y` plane or lying horizontal along `+z`
/// for `motion`.
///
/// # Errors
/// [`ShellError::InvalidMesh`] for `n < 2`; [`ShellError::InvalidOption`]
/// for a negative or non-finite `β`.
pub fn fig3_patch(
    motion: Fig3Motion,
    n: usize,
    damping: MembraneDamping,
) -> Result<Fabric, ShellError> {
    let axis_v = match motion {
        Fig3Motion::Hanging => -Vector3::y(),
        Fig3Motion::Swinging => Vector3::z(),
    };
    let mesh = ClothMesh::rectangle(
        [FIG3_SIDE, FIG3_SIDE],
        [n, n],
        Vector3::zeros(),
        Vector3::x(),
        axis_v,
    )?;
    let top: Vec<usize> = (0..n).collect();
    shell_fabric(&mesh, &fig3_material(damping), &top)
}

/// Runs `fabric` under gravity `(0, -9.81, 0)` m/s² from rest for
/// `t_end` (s) with backward-Euler steps of at most `dt` (s; adaptive,
/// halved where Newton fails) and returns the kinetic energy (J) at
/// `dt, 2 dt, …, t_end`, the curves of SBO18 Fig. 3. The Newton tolerance
/// is 1e-4 of the step's force scale (the solver's default is 1e-6): with
/// `β = 0.15 s` the damping dominates the Newton matrix, whose clamped
/// damping Jacobians then make Newton converge linearly, and the damped
/// swinging runs took 2-3x the iterations to reach 1e-6 for kinetic
/// energies that differ in the fourth digit.
///
/// # Errors
/// The solver's, when a step is rejected below `dt / 1000`.
pub fn kinetic_energy_history(
    fabric: Fabric,
    dt: f64,
    t_end: f64,
) -> Result<Vec<f64>, SolverError> {
    let settings = Settings {
        dt,
        dt_max: dt,
        dt_min: dt * 1e-3,
        newton_tolerance: 1e-4,
        ..Settings::default()
    };
    let mut sim = Simulation::new(fabric, Vector3::new(0.0, -9.81, 0.0), settings, Vec::new());
    let samples = (t_end / dt).round() as usize;
    let mut out = Vec::with_capacity(samples);
    for k in 1..=samples {
        sim.advance_to(k as f64 * dt, |_, _| {})?;
        out.push(sim.energies().kinetic);
    }
    Ok(out)
}
