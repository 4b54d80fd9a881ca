//! Fabric presets from Kawabata (KES-F) measurements and their
//! homogenisation to per-yarn materials at a garment spacing (DESIGN §2).
//!
//! A preset is a fabric as the KES-F system measures it
//! ([`KesMeasurement`]: weight W, extension EM at 500 gf/cm, bending
//! rigidity B, shear rigidity G, the means of warp and weft), plus the yarn
//! radius and the yarn-on-yarn friction coefficient, which KES-F does not
//! give. [`KesMeasurement::to_si`] converts to per-width and per-area SI
//! values ([`FabricProperties`]):
//!
//! | KES-F | unit | SI | conversion |
//! |---|---|---|---|
//! | W | mg/cm² | areal density ρ_A (kg/m²) | × 0.01 |
//! | EM | % at 500 gf/cm | tensile stiffness per width E_w (N/m), secant | 500 gf/cm = 490.3325 N/m, E_w = 490.3325 / (EM/100) |
//! | B | gf·cm²/cm | bending rigidity per width B_w (N·m) | × 9.80665e-5 |
//! | G | gf/(cm·deg) | in-plane shear stiffness G (N/m per rad) | × 0.980665 · 180/π = 56.19 |
//!
//! The values are chosen inside the ranges the KES-F literature reports for
//! each fabric class (Kawabata 1980, *The Standardization and Analysis of
//! Hand Evaluation*, 2nd ed., Textile Machinery Society of Japan: men's
//! suiting and women's thin dress fabrics; Kawabata & Niwa 1989, *Fabric
//! performance in clothing and clothing manufacture*, J. Text. Inst.
//! 80(1):19-50; Mäkinen, Meinander, Luible & Magnenat-Thalmann 2005,
//! *Influence of physical parameters on fabric hand*, HAPTEX, KES-F of a
//! collection of apparel fabrics). They describe a typical fabric of the
//! class, not one bolt: a user with measurements of their own fabric makes a
//! material from [`KesMeasurement::to_si`] and [`FabricProperties::material`].
//!
//! At garment scale a model yarn stands for a strip of fabric one spacing
//! `s` wide, so the properties are converted per yarn: `k_s = E_w s`,
//! `k_b = B_w s`, shear `k_x = G s / 4` (four warp/weft pairs per crossing,
//! each with measure `s`: energy per area ½ G ψ², KES-F's `F = G ψ`), linear
//! density `ρ_l = ρ_A s / 2` (warp and weft share the areal density).
//! Strain-rate damping is `k_d = β k` [SBO18 eq. 12] with β = 2 ms in
//! stretch and 20 ms in bending and shear.
//!
//! Sliding (the yarn-level mechanics, used at fine spacings): yarn-on-yarn
//! Coulomb friction `μ` from the preset, its limit summed over the real
//! crossings a model crossing stands for (the preset's thread spacing,
//! [`FabricPreset::thread_spacing`];
//! `weft_potentials::friction::band_crossing_normal_force`); the parallel-yarn contact
//! stiffness `k_c = k_s` (side-by-side yarns resist being pushed together as
//! stiffly as the yarn resists stretch) and the sticking stiffness of a
//! crossing `k_f = k_s / s = E_w` (a crossing sticks as stiffly as one rest
//! segment of yarn), see [`FabricProperties::material`].

use crate::material::{Damping, Friction, Material, ModeCoefficients};
use serde::{Deserialize, Serialize};

/// Strain-rate damping time of the stretch mode, β_s = k_d / k_s (s).
pub const BETA_STRETCH: f64 = 2e-3;
/// Strain-rate damping time of the bending and shear modes (s).
pub const BETA_BENDING_SHEAR: f64 = 2e-2;
/// Standard gravity (m/s²), the gram-force's and the bending length's.
pub const STANDARD_GRAVITY: f64 = 9.80665;

/// A fabric preset (`--material`, a scene material's `preset`): a
/// [`KesMeasurement`] with a yarn radius and friction coefficient (see
/// [`FabricPreset::measurement`] for the values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum FabricPreset {
    /// Cotton shirting (oxford/poplin): W 15 mg/cm², EM 2.45 %, B 0.051
    /// gf·cm²/cm, G 0.89 gf/(cm·deg); yarn radius 0.3 mm, μ = 0.3.
    #[default]
    Cotton,
    /// Denim (about 10 oz/yd²): W 35 mg/cm², EM 2.0 %, B 0.31 gf·cm²/cm,
    /// G 3.6 gf/(cm·deg); yarn radius 0.5 mm, μ = 0.35.
    Denim,
    /// Silk (habutae, crêpe de Chine): W 6 mg/cm², EM 4.9 %, B 0.0051
    /// gf·cm²/cm, G 0.36 gf/(cm·deg); yarn radius 0.15 mm, μ = 0.2.
    Silk,
    /// Wool (worsted suiting): W 22 mg/cm², EM 4.0 %, B 0.09 gf·cm²/cm,
    /// G 0.6 gf/(cm·deg); yarn radius 0.35 mm, μ = 0.3.
    Wool,
    /// Polyester (plain-woven filament dress fabric): W 10 mg/cm², EM 2.5 %,
    /// B 0.03 gf·cm²/cm, G 0.5 gf/(cm·deg); yarn radius 0.2 mm, μ = 0.25.
    Polyester,
}

/// A fabric's KES-F low-stress measurement (means of warp and weft), in the
/// units the instruments report (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KesMeasurement {
    /// W: weight per area (mg/cm²).
    pub weight: f64,
    /// EM: extension at the 500 gf/cm tensile load (%).
    pub extension: f64,
    /// B: bending rigidity (gf·cm²/cm).
    pub bending: f64,
    /// G: shear rigidity (gf/(cm·deg)).
    pub shear: f64,
}

/// The 500 gf/cm load of KES-F's tensile test (N/m).
pub const KES_TENSILE_LOAD: f64 = 500.0 * 1e-3 * STANDARD_GRAVITY / 1e-2;

impl KesMeasurement {
    /// The per-width and per-area SI values (module docs' table), with the
    /// yarn `radius` (m), friction coefficient `friction` and
    /// `thread_spacing` (m) that KES-F does not measure. The tensile
    /// stiffness is the secant at EM.
    pub fn to_si(&self, radius: f64, friction: f64, thread_spacing: f64) -> FabricProperties {
        let gf = 1e-3 * STANDARD_GRAVITY;
        FabricProperties {
            areal_density: self.weight * 1e-6 / 1e-4,
            tensile: KES_TENSILE_LOAD / (self.extension / 100.0),
            bending: self.bending * gf * 1e-4 / 1e-2,
            shear: self.shear * gf / 1e-2 * (180.0 / std::f64::consts::PI),
            radius,
            friction,
            thread_spacing,
        }
    }
}

/// Physical values of a fabric (per unit width and area, SI).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FabricProperties {
    /// Areal density ρ_A (kg/m²).
    pub areal_density: f64,
    /// Tensile stiffness per width E_w (N/m).
    pub tensile: f64,
    /// Bending rigidity per width B_w (N·m).
    pub bending: f64,
    /// In-plane shear stiffness G (N/m).
    pub shear: f64,
    /// Yarn radius R (m), used for crimp, exports and the contact margin.
    pub radius: f64,
    /// Yarn-on-yarn Coulomb friction coefficient μ (sliding at crossings).
    pub friction: f64,
    /// Mean spacing of the fabric's real threads (m; the inverse of the
    /// mean of ends and picks per length): the friction of a model
    /// crossing that stands for many real ones
    /// ([`crate::material::Friction::thread_spacing`]).
    pub thread_spacing: f64,
}

impl FabricProperties {
    /// Bending length `(B_w / (ρ_A g))^(1/3)` (m, g = 9.80665 m/s²): the
    /// length scale of the fabric's folds (1.5 to 3 cm for shirting).
    pub fn bending_length(&self) -> f64 {
        (self.bending / (self.areal_density * STANDARD_GRAVITY)).cbrt()
    }

    /// The per-yarn material named `name` for yarn spacing `s` (m), see the
    /// module docs. With `sliding`, the parallel-contact stiffness
    /// `k_c = k_s` and the crossing's sticking stiffness `k_f = E_w` are set
    /// (they act only on free arc-length coordinates); without, both are 0.
    pub fn material(&self, name: &str, s: f64, sliding: bool) -> Material {
        let rho_l = self.areal_density * s / 2.0;
        let (k_s, k_b, k_x) = (self.tensile * s, self.bending * s, self.shear * s / 4.0);
        let k_c = if sliding { k_s } else { 0.0 };
        Material {
            name: name.into(),
            radius: self.radius,
            density: rho_l / (std::f64::consts::PI * self.radius * self.radius),
            stretch_stiffness: k_s,
            bending_stiffness: k_b,
            shear_stiffness: k_x,
            contact_stiffness: k_c,
            friction: Friction {
                mu: self.friction,
                anchor_stiffness: if sliding { self.tensile } else { 0.0 },
                thread_spacing: self.thread_spacing,
            },
            damping: Damping::StrainRate(ModeCoefficients {
                stretch: BETA_STRETCH * k_s,
                bending: BETA_BENDING_SHEAR * k_b,
                shear: BETA_BENDING_SHEAR * k_x,
                contact: BETA_STRETCH * k_c,
            }),
        }
    }
}

impl FabricPreset {
    /// Every preset, in documentation order.
    pub const ALL: [FabricPreset; 5] = [
        Self::Cotton,
        Self::Denim,
        Self::Silk,
        Self::Wool,
        Self::Polyester,
    ];

    /// The preset's name (`cotton`, `denim`, `silk`, `wool`, `polyester`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Cotton => "cotton",
            Self::Denim => "denim",
            Self::Silk => "silk",
            Self::Wool => "wool",
            Self::Polyester => "polyester",
        }
    }

    /// The preset's KES-F measurement, yarn radius (m) and yarn friction
    /// coefficient (module docs for the sources).
    pub fn measurement(self) -> (KesMeasurement, f64, f64) {
        let (weight, extension, bending, shear, radius, friction) = match self {
            Self::Cotton => (15.0, 2.45, 0.051, 0.89, 0.3e-3, 0.3),
            Self::Denim => (35.0, 2.0, 0.31, 3.6, 0.5e-3, 0.35),
            Self::Silk => (6.0, 4.9, 0.0051, 0.36, 0.15e-3, 0.2),
            Self::Wool => (22.0, 4.0, 0.09, 0.6, 0.35e-3, 0.3),
            Self::Polyester => (10.0, 2.5, 0.03, 0.5, 0.2e-3, 0.25),
        };
        (
            KesMeasurement {
                weight,
                extension,
                bending,
                shear,
            },
            radius,
            friction,
        )
    }

    /// The mean spacing of the preset's real threads (m): the inverse of
    /// the mean of ends and picks per inch of a typical construction of the
    /// class as it is sold (cotton poplin shirting 133 × 72: 0.25 mm;
    /// 10 oz denim 3/1 twill 64 × 40: 0.5 mm; silk habutae about 130 × 100:
    /// 0.22 mm; worsted suiting about 70 × 60: 0.4 mm; polyester plain
    /// dress fabric about 100 × 85: 0.28 mm). Constructions within a class
    /// vary by tens of percent; the value sets how many real crossings a
    /// model crossing stands for in friction (module docs).
    pub fn thread_spacing(self) -> f64 {
        match self {
            Self::Cotton => 0.25e-3,
            Self::Denim => 0.5e-3,
            Self::Silk => 0.22e-3,
            Self::Wool => 0.4e-3,
            Self::Polyester => 0.28e-3,
        }
    }

    /// The preset's physical values ([`KesMeasurement::to_si`]).
    pub fn properties(self) -> FabricProperties {
        let (kes, radius, friction) = self.measurement();
        kes.to_si(radius, friction, self.thread_spacing())
    }

    /// Bending length of the preset ([`FabricProperties::bending_length`], m).
    pub fn bending_length(self) -> f64 {
        self.properties().bending_length()
    }

    /// The per-yarn material for yarn spacing `s` (m), named after the
    /// preset ([`FabricProperties::material`]).
    pub fn material(self, s: f64, sliding: bool) -> Material {
        self.properties().material(self.name(), s, sliding)
    }
}

impl std::str::FromStr for FabricPreset {
    type Err = String;

    /// Parses a preset name (`cotton`, `denim`, `silk`, `wool`, `polyester`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == s.trim())
            .ok_or_else(|| {
                format!(
                    "unknown fabric preset {s:?}; expected cotton, denim, silk, wool or polyester"
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn homogenisation_keeps_per_width_values_at_any_spacing() {
        for preset in FabricPreset::ALL {
            let p = preset.properties();
            // Real threads 0.2-0.5 mm apart, kept at every spacing.
            assert!((0.2e-3..=0.5e-3).contains(&p.thread_spacing));
            for s in [1e-3, 2e-3, 16e-3] {
                let m = preset.material(s, false);
                assert_eq!(m.friction.thread_spacing, p.thread_spacing);
                approx::assert_relative_eq!(
                    m.stretch_stiffness / s,
                    p.tensile,
                    max_relative = 1e-12
                );
                approx::assert_relative_eq!(
                    m.bending_stiffness / s,
                    p.bending,
                    max_relative = 1e-12
                );
                approx::assert_relative_eq!(
                    4.0 * m.shear_stiffness / s,
                    p.shear,
                    max_relative = 1e-12
                );
                approx::assert_relative_eq!(
                    2.0 * m.linear_density() / s,
                    p.areal_density,
                    max_relative = 1e-12
                );
            }
        }
        // Cotton's bending length is that of shirting (1.5 to 3 cm).
        let l = FabricPreset::Cotton.bending_length();
        assert!((0.015..0.03).contains(&l), "bending length {l} m");
    }

    #[test]
    fn kes_units_convert_to_si() {
        let unit = KesMeasurement {
            weight: 1.0,
            extension: 1.0,
            bending: 1.0,
            shear: 1.0,
        }
        .to_si(1e-4, 0.1, 0.0);
        // 1 mg/cm² = 10 g/m²; 500 gf/cm at 1 % strain; 1 gf·cm²/cm;
        // 1 gf/cm per degree.
        approx::assert_relative_eq!(unit.areal_density, 0.01, max_relative = 1e-12);
        approx::assert_relative_eq!(unit.tensile, 49_033.25, max_relative = 1e-12);
        approx::assert_relative_eq!(unit.bending, 9.80665e-5, max_relative = 1e-12);
        approx::assert_relative_eq!(unit.shear, 56.188, max_relative = 1e-4);
        // Cotton's KES-F values give the shirting it always stood for.
        let c = FabricPreset::Cotton.properties();
        approx::assert_relative_eq!(c.areal_density, 0.15, max_relative = 1e-12);
        approx::assert_relative_eq!(c.tensile, 2e4, max_relative = 1e-3);
        approx::assert_relative_eq!(c.bending, 5e-6, max_relative = 1e-3);
        approx::assert_relative_eq!(c.shear, 50.0, max_relative = 1e-3);
    }

    #[test]
    fn presets_have_the_bending_lengths_of_real_fabric() {
        // Bending lengths (B_w / ρ_A g)^(1/3): silk below shirting below
        // suiting below denim, all within the 0.8-2.5 cm of apparel fabric.
        let l: Vec<f64> = [
            FabricPreset::Silk,
            FabricPreset::Polyester,
            FabricPreset::Cotton,
            FabricPreset::Wool,
            FabricPreset::Denim,
        ]
        .iter()
        .map(|p| p.bending_length())
        .collect();
        for w in l.windows(2) {
            assert!(w[0] < w[1], "bending lengths not ordered: {l:?}");
        }
        assert!(l[0] > 0.008 && l[4] < 0.025, "bending lengths {l:?} m");
        for p in FabricPreset::ALL {
            assert_eq!(p.name().parse::<FabricPreset>(), Ok(p));
        }
        assert!(
            "linen"
                .parse::<FabricPreset>()
                .unwrap_err()
                .contains("wool or polyester")
        );
    }

    #[test]
    fn halving_the_spacing_is_scaling_per_width() {
        let coarse = FabricPreset::Denim.material(8e-3, true);
        let fine = FabricPreset::Denim.material(4e-3, true);
        let scaled = coarse.scaled_per_width(0.5);
        for (a, b) in [
            (scaled.stretch_stiffness, fine.stretch_stiffness),
            (scaled.bending_stiffness, fine.bending_stiffness),
            (scaled.shear_stiffness, fine.shear_stiffness),
            (scaled.contact_stiffness, fine.contact_stiffness),
            (scaled.linear_density(), fine.linear_density()),
            (
                scaled.friction.anchor_stiffness,
                fine.friction.anchor_stiffness,
            ),
        ] {
            approx::assert_relative_eq!(a, b, max_relative = 1e-12);
        }
        approx::assert_relative_eq!(
            scaled.strain_rate_coefficients().bending,
            fine.strain_rate_coefficients().bending,
            max_relative = 1e-12
        );
    }
}
