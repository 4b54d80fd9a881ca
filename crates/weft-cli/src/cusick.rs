//! `weft cusick`: a thin shell over [`weft_garment::cusick`] (the Cusick
//! drape test): flags to [`CusickOptions`], a progress bar, the result
//! table.

use crate::drape::Bars;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use weft_garment::{CusickOptions, FabricPreset, RelaxOptions};

/// Arguments of `weft cusick` (defaults: those of [`CusickOptions`]).
#[derive(Args, Debug)]
pub struct CusickArgs {
    /// Fabric preset: cotton, denim, silk, wool or polyester.
    #[arg(long, default_value = "cotton", value_parser = crate::drape::parse_preset)]
    pub material: FabricPreset,
    /// Yarn spacing in millimetres (warp and weft), at most a quarter of
    /// the overhang (15 mm for the standard specimen).
    #[arg(long, default_value_t = 5.0)]
    pub spacing: f64,
    /// Specimen diameter (m).
    #[arg(long, default_value_t = 0.30)]
    pub specimen_diameter: f64,
    /// Supporting disc diameter (m).
    #[arg(long, default_value_t = 0.18)]
    pub disc_diameter: f64,
    /// Longest simulated time (s); the test stops earlier once static.
    #[arg(long, default_value_t = 4.0)]
    pub duration: f64,
    /// Largest time step (s).
    #[arg(long, default_value_t = 5e-3)]
    pub dt_max: f64,
    /// Output directory: summary.json, final_state.json, yarns.obj,
    /// preview.png (created if missing).
    #[arg(long, short)]
    pub out: PathBuf,
    /// No pedestal under the disc: the disc is only its clamped nodes
    /// (the model before the pedestal, for comparison).
    #[arg(long)]
    pub no_pedestal: bool,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Runs the Cusick test and writes its outputs.
///
/// # Errors
/// The library's [`weft_garment::GarmentError`]s.
pub fn run(args: &CusickArgs) -> Result<()> {
    let defaults = CusickOptions::default();
    let opts = CusickOptions {
        material: args.material,
        spacing_mm: args.spacing,
        specimen_diameter: args.specimen_diameter,
        disc_diameter: args.disc_diameter,
        dt_max: args.dt_max,
        pedestal: !args.no_pedestal,
        relax: RelaxOptions {
            min_time: defaults.relax.min_time.min(args.duration),
            max_time: args.duration,
            ..defaults.relax
        },
        ..defaults
    };
    let mut bars = Bars::new(args.quiet, "weft cusick");
    let c = weft_garment::cusick(&opts, &mut bars)?;
    c.write_outputs(&args.out, &[weft_io::CurveFormat::ObjPolylines])?;
    let s = &c.summary;
    println!(
        "{}: drape coefficient {:.3}, {} folds ({} nodes at {} mm; bending length {:.1} mm; {} in {:.2} s simulated, {} steps, {:.1} s wall)",
        s.material,
        s.drape_coefficient,
        s.folds,
        s.nodes,
        args.spacing,
        s.bending_length_m * 1e3,
        if s.is_static { "static" } else { "NOT static" },
        s.simulated_time_s,
        s.steps,
        s.wall_time_s
    );
    if !s.is_static {
        eprintln!(
            "warning: the specimen is not static after {:.2} s (kinetic energy {:.2e} J, force \
             residual {:.3}; static asks for an RMS speed below {} m/s and a residual below {}): \
             the drape coefficient is a snapshot of the fall, not of the drape; run longer \
             (--duration)",
            s.simulated_time_s,
            s.kinetic_energy_j,
            s.residual,
            opts.relax.speed_tolerance,
            opts.relax.residual_tolerance,
        );
    }
    println!("outputs in {}", args.out.display());
    Ok(())
}
