//! `weft mannequin`: writes weft's own mannequin, or an animation of it as
//! an OBJ sequence (a thin shell over [`weft_io::mannequin`]).

use anyhow::{Result, bail};
use clap::Args;
use std::path::PathBuf;
use weft_io::mannequin::{self, Motion};

/// Arguments of `weft mannequin`.
#[derive(Args, Debug)]
pub struct MannequinArgs {
    /// A motion to animate (`raise-arms`, `turn-torso` or `walk`): writes
    /// `OUT/frame_NNNN.obj`, one per frame, the input of `weft drape
    /// --body-animation OUT --fps FPS`. Without it, writes the rest pose
    /// as `OUT/mannequin.obj`.
    #[arg(long, value_parser = parse_motion)]
    pub motion: Option<Motion>,
    /// Frames per second of the animation.
    #[arg(long, default_value_t = 30.0)]
    pub fps: f64,
    /// Length of the animation (s).
    #[arg(long, default_value_t = 1.0)]
    pub duration: f64,
    /// Output folder.
    #[arg(long)]
    pub out: PathBuf,
}

fn parse_motion(s: &str) -> Result<Motion, String> {
    s.parse()
}

/// Entry point of `weft mannequin`.
///
/// # Errors
/// A non-positive `--fps` or negative `--duration`; files that cannot be
/// written.
pub fn run(args: &MannequinArgs) -> Result<()> {
    if !(args.fps.is_finite() && args.fps > 0.0) {
        bail!("--fps: expected frames per second > 0, got {}", args.fps);
    }
    if !(args.duration.is_finite() && args.duration >= 0.0) {
        bail!("--duration: expected seconds >= 0, got {}", args.duration);
    }
    match args.motion {
        None => {
            std::fs::create_dir_all(&args.out)?;
            let path = args.out.join("mannequin.obj");
            mannequin::generate().write_obj(
                &path,
                mannequin::OBJ_HEADER,
                mannequin::OBJ_DECIMALS,
            )?;
            eprintln!("weft mannequin: wrote {}", path.display());
        }
        Some(m) => {
            let n = mannequin::write_animation(&args.out, m, args.fps, args.duration)?;
            eprintln!(
                "weft mannequin: wrote {n} frames of {} ({} fps) to {}; drape on it with \
                 `weft drape PATTERN --body-animation {} --fps {}`",
                m.name(),
                args.fps,
                args.out.display(),
                args.out.display(),
                args.fps
            );
        }
    }
    Ok(())
}
