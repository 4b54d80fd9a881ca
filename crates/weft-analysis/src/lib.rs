//! # weft-analysis
//!
//! Analysis and plots of weft run outputs (DESIGN §8), independent of the
//! solver:
//!
//! - [`read_energy_csv`] / [`parse_energy_csv`]: the `energy.csv` reader, into
//!   an [`EnergyColumns`] struct of columns, with errors naming the file, the
//!   line and what was expected;
//! - [`fit_damping`]: damping ratio `ζ` and natural frequency `ω` of the
//!   dominant mode from the kinetic-energy peaks \[SBO17 eq. 24\] (see the
//!   [`damping`] module for the estimator and its assumptions);
//! - [`plot_energy`] and [`plot_kinetic_comparison`]: SVG plots with
//!   plotters' SVG backend and no font library.
//!
//! ```
//! use weft_analysis::{fit_damping, DampingFitOptions};
//! // KE of x = e^{-σt} sin(ω_d t) with ζ = 0.05, ω = 2π rad/s (m = 1).
//! let (zeta, omega) = (0.05_f64, 2.0 * std::f64::consts::PI);
//! let (sigma, omega_d) = (zeta * omega, omega * (1.0 - zeta * zeta).sqrt());
//! let t: Vec<f64> = (0..400).map(|i| i as f64 * 0.025).collect();
//! let ke: Vec<f64> = t
//!     .iter()
//!     .map(|&t| {
//!         let v = (-sigma * t).exp() * (omega_d * (omega_d * t).cos() - sigma * (omega_d * t).sin());
//!         0.5 * v * v
//!     })
//!     .collect();
//! let fit = fit_damping(&t, &ke, &DampingFitOptions::default()).unwrap();
//! assert!((fit.zeta - zeta).abs() < 1e-3);
//! assert!((fit.omega / omega - 1.0).abs() < 1e-3);
//! ```

pub mod damping;
pub mod energy;
pub mod error;
pub mod plot;

pub use damping::{DampingFit, DampingFitOptions, fit_damping, fit_damping_columns};
pub use energy::{
    ENERGY_CSV_COLUMNS, ENERGY_CSV_HEADER, EnergyColumns, format_energy_csv, parse_energy_csv,
    read_energy_csv,
};
pub use error::AnalysisError;
pub use plot::{PlotOptions, plot_energy, plot_kinetic_comparison};
