//! `weft batch MANIFEST.json --out DIR [--shard I/N]`: a thin shell over
//! [`weft::batch::run_batch`] (the manifest, sweeps, shards, index and
//! resume are documented there), with one line per finished job.

use anyhow::{Result, bail};
use clap::Args;
use std::path::PathBuf;
use weft::batch::{parse_shard, run_batch};

/// Arguments of `weft batch`.
#[derive(Args, Debug)]
pub struct BatchArgs {
    /// The manifest (JSON: `{"jobs": [...], "checkpoint_every_s": 60}`;
    /// see `weft::batch`).
    pub manifest: PathBuf,
    /// The batch folder: `jobs/NAME/` per job and the merged `index.json`.
    #[arg(long, short)]
    pub out: PathBuf,
    /// Run shard I of N (0-based): the jobs whose index is I mod N (a
    /// Slurm array task: `$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT`).
    #[arg(long, default_value = "0/1")]
    pub shard: String,
    /// No line per job (the summary line is still printed).
    #[arg(long, short)]
    pub quiet: bool,
}

/// `weft batch`.
pub fn run(args: &BatchArgs) -> Result<()> {
    let shard = parse_shard(&args.shard)?;
    let quiet = args.quiet;
    let s = run_batch(&args.manifest, &args.out, shard, &mut |st| {
        if !quiet {
            eprintln!(
                "weft batch: {} {} in {:.1} s{}",
                st.name,
                st.status,
                st.wall_s,
                st.error
                    .as_ref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            );
        }
    })?;
    eprintln!(
        "weft batch: shard {}: {} of {} jobs; {} done ({} resumed), {} skipped (done before), {} failed -> {}",
        args.shard,
        s.in_shard,
        s.jobs,
        s.done,
        s.resumed,
        s.skipped,
        s.failed,
        args.out.join("index.json").display()
    );
    if s.failed > 0 {
        bail!(
            "{} job(s) failed; their errors are in {}",
            s.failed,
            args.out.join("index.json").display()
        );
    }
    Ok(())
}
