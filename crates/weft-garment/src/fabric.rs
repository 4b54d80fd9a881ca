//! Fabric presets and their homogenisation to per-yarn materials at a
//! garment spacing (DESIGN §2).
//!
//! At garment scale a model yarn stands for a strip of fabric one spacing
//! `s` wide, so a preset gives fabric properties per unit width and area and
//! they are converted per yarn: `k_s = E_w s`, `k_b = B_w s`, shear
//! `k_x = G s / 4` (four warp/weft pairs per crossing, each with measure
//! `s`), linear density `ρ_l = ρ_A s / 2` (warp and weft share the areal
//! density). Strain-rate damping is `k_d = β k` [SBO18 eq. 12] with
//! β = 2 ms in stretch and 20 ms in bending and shear.
//!
//! Sliding (the yarn-level mechanics, used at fine spacings): yarn-on-yarn
//! Coulomb friction `μ` from the preset; the parallel-yarn contact
//! stiffness `k_c = k_s` (side-by-side yarns resist being pushed together as
//! stiffly as the yarn resists stretch) and the sticking stiffness of a
//! crossing `k_f = k_s / s = E_w` (a crossing sticks as stiffly as one rest
//! segment of yarn), see [`FabricPreset::material`].

use serde::{Deserialize, Serialize};
use weft_core::{Damping, Friction, Material, ModeCoefficients};

/// Strain-rate damping time of the stretch mode, β_s = k_d / k_s (s).
pub const BETA_STRETCH: f64 = 2e-3;
/// Strain-rate damping time of the bending and shear modes (s).
pub const BETA_BENDING_SHEAR: f64 = 2e-2;

/// A fabric preset (`--material`), in the physical values of
/// [`FabricProperties`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum FabricPreset {
    /// Cotton shirting: 0.15 kg/m², tensile 2e4 N/m, bending 5e-6 N·m,
    /// shear 50 N/m, yarn radius 0.3 mm, yarn friction μ = 0.3.
    #[default]
    Cotton,
    /// Denim: 0.35 kg/m², tensile 5e4 N/m, bending 3e-5 N·m, shear 200 N/m,
    /// yarn radius 0.5 mm, μ = 0.35.
    Denim,
    /// Silk: 0.06 kg/m², tensile 1e4 N/m, bending 5e-7 N·m, shear 20 N/m,
    /// yarn radius 0.15 mm, μ = 0.2.
    Silk,
}

/// Physical values of a [`FabricPreset`] (per unit width and area).
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
}

impl FabricPreset {
    /// Every preset, in documentation order.
    pub const ALL: [FabricPreset; 3] = [Self::Cotton, Self::Denim, Self::Silk];

    /// The preset's name (`cotton`, `denim`, `silk`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Cotton => "cotton",
            Self::Denim => "denim",
            Self::Silk => "silk",
        }
    }

    /// The preset's physical values.
    pub fn properties(self) -> FabricProperties {
        let (areal_density, tensile, bending, shear, radius, friction) = match self {
            Self::Cotton => (0.15, 2e4, 5e-6, 50.0, 0.3e-3, 0.3),
            Self::Denim => (0.35, 5e4, 3e-5, 200.0, 0.5e-3, 0.35),
            Self::Silk => (0.06, 1e4, 5e-7, 20.0, 0.15e-3, 0.2),
        };
        FabricProperties {
            areal_density,
            tensile,
            bending,
            shear,
            radius,
            friction,
        }
    }

    /// Bending length `(B_w / (ρ_A g))^(1/3)` (m, g = 9.81 m/s²): the
    /// length scale of the fabric's folds (1.5 to 3 cm for shirting).
    pub fn bending_length(self) -> f64 {
        let p = self.properties();
        (p.bending / (p.areal_density * 9.81)).cbrt()
    }

    /// The per-yarn material for yarn spacing `s` (m), see the module docs.
    /// With `sliding`, the parallel-contact stiffness `k_c = k_s` and the
    /// crossing's sticking stiffness `k_f = E_w` are set (they act only on
    /// free arc-length coordinates); without, both are 0.
    pub fn material(self, s: f64, sliding: bool) -> Material {
        let p = self.properties();
        let rho_l = p.areal_density * s / 2.0;
        let (k_s, k_b, k_x) = (p.tensile * s, p.bending * s, p.shear * s / 4.0);
        let k_c = if sliding { k_s } else { 0.0 };
        Material {
            name: self.name().into(),
            radius: p.radius,
            density: rho_l / (std::f64::consts::PI * p.radius * p.radius),
            stretch_stiffness: k_s,
            bending_stiffness: k_b,
            shear_stiffness: k_x,
            contact_stiffness: k_c,
            friction: Friction {
                mu: p.friction,
                anchor_stiffness: if sliding { p.tensile } else { 0.0 },
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

impl std::str::FromStr for FabricPreset {
    type Err = String;

    /// Parses a preset name (`cotton`, `denim`, `silk`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == s.trim())
            .ok_or_else(|| format!("unknown fabric preset {s:?}; expected cotton, denim or silk"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn homogenisation_keeps_per_width_values_at_any_spacing() {
        for preset in FabricPreset::ALL {
            let p = preset.properties();
            for s in [1e-3, 2e-3, 16e-3] {
                let m = preset.material(s, false);
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
