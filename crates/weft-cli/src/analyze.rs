//! `weft plot` and `weft analyze damping`: kinetic-energy plots and the
//! damping-ratio fit of a run's `energy.csv` (weft-analysis).

use anyhow::Result;
use clap::{Args, Subcommand};
use std::path::PathBuf;
use weft_analysis::{
    DampingFitOptions, PlotOptions, fit_damping_columns, plot_energy, plot_kinetic_comparison,
    read_energy_csv,
};

/// Arguments of `weft plot`.
#[derive(Args, Debug)]
pub struct PlotArgs {
    /// One or more `energy.csv` files; several are overlaid as kinetic-energy
    /// curves labelled by their directory name.
    #[arg(required = true)]
    pub energy: Vec<PathBuf>,
    /// Output SVG file.
    #[arg(long, short)]
    pub output: PathBuf,
    /// Logarithmic kinetic-energy axis.
    #[arg(long)]
    pub log: bool,
    /// Plot title.
    #[arg(long)]
    pub title: Option<String>,
}

/// `weft analyze` subcommands.
#[derive(Subcommand, Debug)]
pub enum AnalyzeCommand {
    /// Damping ratio ζ and natural frequency ω of a run's kinetic-energy
    /// curve (logarithmic decrement of the KE peaks, \[SBO17 eq. 24\]).
    Damping {
        /// The run's `energy.csv`.
        energy: PathBuf,
        /// Fit only frames with t ≥ this (s).
        #[arg(long)]
        t_start: Option<f64>,
        /// Fit only frames with t ≤ this (s).
        #[arg(long)]
        t_end: Option<f64>,
    },
}

/// `weft plot`.
pub fn plot(args: &PlotArgs) -> Result<()> {
    let options = PlotOptions {
        title: args.title.clone(),
        log_kinetic: args.log,
        ..PlotOptions::default()
    };
    if args.energy.len() == 1 {
        let c = read_energy_csv(&args.energy[0])?;
        plot_energy(&c, &args.output, &options)?;
    } else {
        let runs: Vec<(String, weft_analysis::EnergyColumns)> = args
            .energy
            .iter()
            .map(|p| {
                let label = p.parent().and_then(|d| d.file_name()).map_or_else(
                    || p.display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                );
                read_energy_csv(p).map(|c| (label, c))
            })
            .collect::<Result<_, _>>()?;
        let refs: Vec<(&str, &weft_analysis::EnergyColumns)> =
            runs.iter().map(|(l, c)| (l.as_str(), c)).collect();
        plot_kinetic_comparison(&refs, &args.output, &options)?;
    }
    eprintln!("weft plot: wrote {}", args.output.display());
    Ok(())
}

/// `weft analyze`.
pub fn analyze(cmd: &AnalyzeCommand) -> Result<()> {
    match cmd {
        AnalyzeCommand::Damping {
            energy,
            t_start,
            t_end,
        } => {
            let c = read_energy_csv(energy)?;
            let options = DampingFitOptions {
                t_start: *t_start,
                t_end: *t_end,
                ..DampingFitOptions::default()
            };
            let fit = fit_damping_columns(&c, &options)?;
            println!("damping ratio ζ      {:.6}", fit.zeta);
            println!("natural frequency ω  {:.6} rad/s", fit.omega);
            println!("damped frequency ω_d {:.6} rad/s", fit.omega_d);
            println!("peaks used           {}", fit.peaks_used);
            println!("rms log residual     {:.3e}", fit.rms_log_residual);
            Ok(())
        }
    }
}
