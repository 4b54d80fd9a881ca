//! `weft`: the command-line front end of the yarn-level cloth engine.
//!
//! Subcommands: `bench` (solver benchmarks on woven patches).

mod bench;

use clap::{Parser, Subcommand};

/// Yarn-level woven cloth simulation.
#[derive(Parser, Debug)]
#[command(name = "weft", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Benchmark assembly, PCG and full backward-Euler steps on woven patches.
    Bench(bench::BenchArgs),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Bench(args) => bench::run(&args),
    }
}
