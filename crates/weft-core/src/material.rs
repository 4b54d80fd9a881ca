//! Yarn materials: physical parameters, their validation and the calibration
//! of DESIGN §2.
//!
//! Stiffnesses are the element stiffnesses `k` of `V = ½ Ω k |ε|²`
//! [SBO17 eq. 2], calibrated so that they are the beam-theory rigidities of
//! the yarn: `stretch_stiffness = k_s = E π R²` (axial rigidity EA, N) and
//! `bending_stiffness = k_b = E π R⁴ / 4` (flexural rigidity EI, N·m²). With
//! these, a straight yarn obeys beam theory (DESIGN §2).

use crate::error::ModelError;

/// Coulomb friction of the sliding anchors at crossings (DESIGN §2).
#[derive(Clone, Debug, PartialEq)]
pub struct Friction {
    /// Friction coefficient μ (dimensionless), ≥ 0.
    pub mu: f64,
    /// Anchor spring stiffness `k_f` (N/m), ≥ 0; 0 disables the anchors.
    pub anchor_stiffness: f64,
    /// Spacing `d` of the fabric's real threads (m), ≥ 0, where a model
    /// yarn stands for a band of them (a garment woven coarser than its
    /// threads): a model crossing whose yarns lie `ℓ_warp`, `ℓ_weft` apart
    /// stands for `(ℓ_warp / d)(ℓ_weft / d)` real crossings, and its Coulomb
    /// limit is theirs together
    /// (`weft_potentials::friction::band_crossing_normal_force`). 0: every
    /// model yarn is one real yarn (scenes' default).
    pub thread_spacing: f64,
}

/// Strain-rate damping coefficients `k_d` per deformation mode, in the units
/// of the mode's stiffness times seconds [SBO17 eq. 6].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ModeCoefficients {
    /// Stretch (N·s).
    pub stretch: f64,
    /// Bending (N·m²·s).
    pub bending: f64,
    /// Crossing shear (N·s).
    pub shear: f64,
    /// Parallel-yarn contact (N·s).
    pub contact: f64,
}

impl ModeCoefficients {
    /// The strain-rate damping of a literal reading of [SBO17 Table 1]'s
    /// stretch-test row (`weft bench`'s material; the shipped sphere scene
    /// uses the cotton preset since the fifteenth session): stretch 3e-7
    /// N·s, bending 1e-10 N·m²·s, shear 1e-5 N·s, contact 1e-6 N·s.
    pub const SBO17: Self = Self {
        stretch: 3e-7,
        bending: 1e-10,
        shear: 1e-5,
        contact: 1e-6,
    };
}

/// Damping model of a material (DESIGN §3, scene key `damping.model`).
#[derive(Clone, Debug, PartialEq)]
pub enum Damping {
    /// No damping (baseline).
    None,
    /// Strain-rate dissipation potentials `W = ½ Ω k_d |ε̇|²` with `k_d` given
    /// per mode [SBO17 eq. 6].
    StrainRate(ModeCoefficients),
    /// Strain-rate dissipation parameterised by the Rayleigh analogy
    /// `k_d = β k` per mode, β in seconds [SBO18 eq. 12].
    StrainRateBeta(ModeCoefficients),
    /// Rayleigh damping `f = -(α M + β K) q̇` [SBO17 eq. 4]: `alpha` in 1/s,
    /// `beta` in s. A baseline: it damps rigid motion. `K` is taken as the
    /// PSD projection `K⁺` of each element's elastic stiffness: the exact
    /// `K` of a compressed or buckled element has negative eigenvalues, and
    /// `-β K q̇` along them would add energy.
    Rayleigh {
        /// Mass-proportional coefficient α (1/s).
        alpha: f64,
        /// Stiffness-proportional coefficient β (s).
        beta: f64,
    },
}

impl ModeCoefficients {
    /// Every coefficient times `f`.
    pub fn scaled(self, f: f64) -> Self {
        Self {
            stretch: f * self.stretch,
            bending: f * self.bending,
            shear: f * self.shear,
            contact: f * self.contact,
        }
    }
}

impl Damping {
    /// The same model with its damping `f` times stronger: every strain-rate
    /// coefficient (or β) times `f`, Rayleigh's `α` and `β` times `f`;
    /// [`Damping::None`] unchanged.
    pub fn scaled(self, f: f64) -> Self {
        match self {
            Damping::None => Damping::None,
            Damping::StrainRate(c) => Damping::StrainRate(c.scaled(f)),
            Damping::StrainRateBeta(c) => Damping::StrainRateBeta(c.scaled(f)),
            Damping::Rayleigh { alpha, beta } => Damping::Rayleigh {
                alpha: f * alpha,
                beta: f * beta,
            },
        }
    }
}

/// Physical parameters of a yarn material. SI units.
#[derive(Clone, Debug, PartialEq)]
pub struct Material {
    /// Name used by objects to refer to it.
    pub name: String,
    /// Yarn radius R (m), > 0.
    pub radius: f64,
    /// Volumetric density ρ (kg/m³), ≥ 0; the linear density is ρπR².
    pub density: f64,
    /// Stretch stiffness `k_s = E π R²` (N) [SBO17 eq. 12-13].
    pub stretch_stiffness: f64,
    /// Bending stiffness `k_b = E π R⁴/4` (N·m²) [SBO17 eq. 15-16].
    pub bending_stiffness: f64,
    /// Crossing shear stiffness `k_x` (N) [SBO17 eq. 22-23].
    pub shear_stiffness: f64,
    /// Parallel-yarn contact stiffness `k_c` (N) \[CLMMO14\].
    pub contact_stiffness: f64,
    /// Sliding friction at crossings.
    pub friction: Friction,
    /// Damping model.
    pub damping: Damping,
}

impl Material {
    /// The example cotton of DESIGN §8 (R = 0.25 mm, ρ = 130 kg/m³,
    /// k_s = 500 N, k_b = 1e-5 N·m², lower end of [SBO17 Table 1]; friction
    /// μ = 0.3, k_f = 100 N/m; strain-rate stretch damping 3e-7 N·s).
    pub fn example_cotton() -> Self {
        Self {
            name: "cotton".into(),
            radius: 0.25e-3,
            density: 130.0,
            stretch_stiffness: 500.0,
            bending_stiffness: 1e-5,
            shear_stiffness: 0.0,
            contact_stiffness: 0.0,
            friction: Friction {
                mu: 0.3,
                anchor_stiffness: 100.0,
                thread_spacing: 0.0,
            },
            damping: Damping::StrainRate(ModeCoefficients {
                stretch: 3e-7,
                ..Default::default()
            }),
        }
    }

    /// A literal reading of [SBO17 Table 1] (`weft bench`'s material and the
    /// solver tests'; it was the sphere scene's until that scene moved to the
    /// cotton preset, since as a fabric it is a stiff plate with a bending
    /// length of 0.37 m): the example cotton with R = 0.16 mm, shear 0.05 N,
    /// parallel contact 50 N and strain-rate damping in every mode
    /// ([`ModeCoefficients::SBO17`]).
    pub fn sbo17() -> Self {
        Self {
            name: "sbo17".into(),
            radius: 0.16e-3,
            shear_stiffness: 0.05,
            contact_stiffness: 50.0,
            damping: Damping::StrainRate(ModeCoefficients::SBO17),
            ..Self::example_cotton()
        }
    }

    /// A material from Young's modulus `e` (Pa), radius `radius` (m) and
    /// density (kg/m³): `k_s = E π R²`, `k_b = E π R⁴ / 4` (DESIGN §2);
    /// shear, contact, friction and damping zero.
    pub fn from_young_modulus(name: &str, e: f64, radius: f64, density: f64) -> Self {
        let area = std::f64::consts::PI * radius * radius;
        Self {
            name: name.into(),
            radius,
            density,
            stretch_stiffness: e * area,
            bending_stiffness: e * area * radius * radius / 4.0,
            shear_stiffness: 0.0,
            contact_stiffness: 0.0,
            friction: Friction {
                mu: 0.0,
                anchor_stiffness: 0.0,
                thread_spacing: 0.0,
            },
            damping: Damping::None,
        }
    }

    /// The material of a model yarn standing for a strip of fabric
    /// `factor` times as wide (homogenisation at garment scale, DESIGN §2:
    /// `k_s = E_w s`, `k_b = B_w s`, `k_x = G s / 4`, `ρ_l = ρ_A s / 2` are
    /// all proportional to the spacing `s`): the stretch, bending, shear and
    /// parallel-contact stiffnesses, the linear density (through `density`,
    /// the radius is kept) and the strain-rate damping coefficients `k_d`
    /// are multiplied by `factor`; μ, the friction anchor stiffness (a
    /// stiffness per crossing, N/m), the thread spacing, the radius, the β form of strain-rate
    /// damping and Rayleigh's α, β are kept. The
    /// name gets the suffix `@{factor}` unless `factor` is 1.
    ///
    /// # Panics
    /// Never; a non-positive or non-finite `factor` gives a material that
    /// [`Material::validate`] rejects.
    pub fn scaled_per_width(&self, factor: f64) -> Self {
        let damping = match &self.damping {
            Damping::StrainRate(c) => Damping::StrainRate(ModeCoefficients {
                stretch: c.stretch * factor,
                bending: c.bending * factor,
                shear: c.shear * factor,
                contact: c.contact * factor,
            }),
            d => d.clone(),
        };
        Self {
            name: if factor == 1.0 {
                self.name.clone()
            } else {
                format!("{}@{factor}", self.name)
            },
            radius: self.radius,
            density: self.density * factor,
            stretch_stiffness: self.stretch_stiffness * factor,
            bending_stiffness: self.bending_stiffness * factor,
            shear_stiffness: self.shear_stiffness * factor,
            contact_stiffness: self.contact_stiffness * factor,
            friction: Friction {
                mu: self.friction.mu,
                anchor_stiffness: self.friction.anchor_stiffness,
                thread_spacing: self.friction.thread_spacing,
            },
            damping,
        }
    }

    /// Linear density `ρ_l = ρ π R²` (kg/m).
    pub fn linear_density(&self) -> f64 {
        self.density * std::f64::consts::PI * self.radius * self.radius
    }

    /// Strain-rate damping coefficients `k_d` per mode (zero for `None` and
    /// `Rayleigh`); the β form is resolved as `k_d = β k` [SBO18 eq. 12].
    pub fn strain_rate_coefficients(&self) -> ModeCoefficients {
        match &self.damping {
            Damping::StrainRate(c) => *c,
            Damping::StrainRateBeta(b) => ModeCoefficients {
                stretch: b.stretch * self.stretch_stiffness,
                bending: b.bending * self.bending_stiffness,
                shear: b.shear * self.shear_stiffness,
                contact: b.contact * self.contact_stiffness,
            },
            Damping::None | Damping::Rayleigh { .. } => ModeCoefficients::default(),
        }
    }

    /// Checks every parameter: radius positive, everything else non-negative,
    /// all finite.
    ///
    /// # Errors
    /// [`ModelError::InvalidMaterial`] naming the material and the field.
    pub fn validate(&self) -> Result<(), ModelError> {
        let bad = |field: &'static str, expected: &'static str, value: f64| {
            Err(ModelError::InvalidMaterial {
                material: self.name.clone(),
                field,
                expected,
                value,
            })
        };
        if !(self.radius.is_finite() && self.radius > 0.0) {
            return bad("radius", "positive and finite (m)", self.radius);
        }
        let mut checks: Vec<(&'static str, f64)> = vec![
            ("density", self.density),
            ("stretch_stiffness", self.stretch_stiffness),
            ("bending_stiffness", self.bending_stiffness),
            ("shear_stiffness", self.shear_stiffness),
            ("contact_stiffness", self.contact_stiffness),
            ("friction.mu", self.friction.mu),
            ("friction.anchor_stiffness", self.friction.anchor_stiffness),
            ("friction.thread_spacing", self.friction.thread_spacing),
        ];
        match &self.damping {
            Damping::None => {}
            Damping::StrainRate(c) | Damping::StrainRateBeta(c) => checks.extend([
                ("damping.stretch", c.stretch),
                ("damping.bending", c.bending),
                ("damping.shear", c.shear),
                ("damping.contact", c.contact),
            ]),
            Damping::Rayleigh { alpha, beta } => {
                checks.extend([("damping.alpha", *alpha), ("damping.beta", *beta)])
            }
        }
        for (field, value) in checks {
            if !(value.is_finite() && value >= 0.0) {
                return bad(field, "non-negative and finite", value);
            }
        }
        Ok(())
    }
}
