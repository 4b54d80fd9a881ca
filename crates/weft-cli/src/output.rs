//! The output folder, checkpoint and resume flags that `weft run` and
//! `weft drape` share (`--out DIR`, `--checkpoint-every S`,
//! `--resume DIR`).

use clap::Args;
use std::path::{Path, PathBuf};

/// `--out`, `--checkpoint-every` and `--resume`.
#[derive(Args, Debug)]
pub struct OutputArgs {
    /// Output directory (created if missing; existing outputs are replaced).
    #[arg(
        long,
        short,
        required_unless_present = "resume",
        conflicts_with = "resume"
    )]
    pub out: Option<PathBuf>,
    /// Write a checkpoint (`DIR/checkpoint.json`, the one before kept as
    /// `checkpoint.prev.json`) at the first output frame (`run`) or
    /// relaxation check (`drape`) after every this many seconds of wall
    /// time (0: at every one). Off by default.
    #[arg(long, value_name = "SECONDS")]
    pub checkpoint_every: Option<f64>,
    /// Resume the run or drape whose output directory is DIR from its
    /// checkpoint (same input file and options: their digests are
    /// checked); outputs continue in DIR, and the result equals the
    /// uninterrupted one's bit for bit.
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
}

impl OutputArgs {
    /// The output directory: `--resume DIR` or `--out DIR`.
    pub fn dir(&self) -> &Path {
        self.resume
            .as_deref()
            .or(self.out.as_deref())
            .expect("clap requires --out or --resume")
    }
}
