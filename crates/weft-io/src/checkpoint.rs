//! Checkpoints of a scene run (`weft run --checkpoint-every`, `--resume`):
//! `DIR/checkpoint.json`, written atomically at an output frame, with the
//! one it replaces kept as `DIR/checkpoint.prev.json`.
//!
//! A checkpoint holds the simulation's changing state
//! ([`weft_solver::SimCheckpoint`]: time, step size and its growth counter,
//! positions, velocities, friction anchors, dissipated energy, rejections),
//! the frame it was taken at, the run's counters, and the scene file's
//! name and digest (a resume from another scene, or from the scene edited
//! since, is refused). Floats are written in the shortest form that reads
//! back to the same bits.

use crate::output::{OutputError, atomic_write};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use weft_solver::SimCheckpoint;

/// Format version of [`RunCheckpoint`].
pub const CHECKPOINT_VERSION: u32 = 1;
/// File name of the newest checkpoint in a run folder.
pub const CHECKPOINT_FILE: &str = "checkpoint.json";
/// File name of the checkpoint before it.
pub const PREVIOUS_CHECKPOINT_FILE: &str = "checkpoint.prev.json";

/// A checkpoint of a scene run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunCheckpoint {
    /// [`CHECKPOINT_VERSION`].
    pub version: u32,
    /// The scene file as given to the run.
    pub scene: String,
    /// [`digest`] of the scene file's bytes.
    pub scene_digest: String,
    /// The last output frame written (0 is the initial state): the run
    /// goes on with frame `frame + 1`.
    pub frame: usize,
    /// Accepted steps so far.
    pub steps: usize,
    /// Newton iterations so far.
    pub newton_iterations: usize,
    /// PCG iterations so far.
    pub cg_iterations: usize,
    /// Wall time spent so far (s), over every part of the run.
    pub wall_s: f64,
    /// The simulation's state.
    pub sim: SimCheckpoint,
}

/// A 64-bit FNV-1a digest of `bytes` as 16 hex digits: enough to tell a
/// checkpoint's scene from another or an edited one (not a cryptographic
/// hash).
pub fn digest(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// A checkpoint format: its version, checked when reading.
pub trait Checkpoint: Serialize + serde::de::DeserializeOwned {
    /// The version this build writes and reads.
    const VERSION: u32;
    /// The version of this checkpoint.
    fn version(&self) -> u32;
}

impl Checkpoint for RunCheckpoint {
    const VERSION: u32 = CHECKPOINT_VERSION;
    fn version(&self) -> u32 {
        self.version
    }
}

/// Writes `cp` as `dir/checkpoint.json` atomically, after copying the
/// checkpoint there (if any) to `checkpoint.prev.json` (also atomically):
/// a crash at any point leaves `checkpoint.json` complete, old or new.
///
/// # Errors
/// [`OutputError::Io`] naming the file.
pub fn write_checkpoint<C: Checkpoint>(dir: &Path, cp: &C) -> Result<(), OutputError> {
    let path = dir.join(CHECKPOINT_FILE);
    if path.is_file() {
        let old = std::fs::read(&path).map_err(|source| OutputError::Io {
            path: path.clone(),
            source,
        })?;
        atomic_write(&dir.join(PREVIOUS_CHECKPOINT_FILE), |w| w.write_all(&old))?;
    }
    atomic_write(&path, |w| {
        serde_json::to_writer(&mut *w, cp).map_err(std::io::Error::other)
    })
}

/// Reads `dir/checkpoint.json`.
///
/// # Errors
/// [`OutputError::Io`] when it cannot be read (e.g. there is none);
/// [`OutputError::Parse`] for a truncated or corrupt file (naming the line
/// and column and, when it exists, the previous checkpoint to resume from
/// instead) or another format version.
pub fn read_checkpoint<C: Checkpoint>(dir: &Path) -> Result<C, OutputError> {
    let path = dir.join(CHECKPOINT_FILE);
    let text = std::fs::read_to_string(&path).map_err(|source| OutputError::Io {
        path: path.clone(),
        source,
    })?;
    let prev = dir.join(PREVIOUS_CHECKPOINT_FILE);
    let hint = if prev.is_file() {
        format!(
            "; the checkpoint before it is kept as {} (rename it to {CHECKPOINT_FILE} to resume from it)",
            prev.display()
        )
    } else {
        String::new()
    };
    let cp: C = serde_json::from_str(&text).map_err(|e| OutputError::Parse {
        path: path.clone(),
        line: e.line(),
        message: format!(
            "not a readable checkpoint (column {}: {e}; truncated or corrupt?){hint}",
            e.column()
        ),
    })?;
    if cp.version() != C::VERSION {
        return Err(OutputError::Parse {
            path,
            line: 1,
            message: format!(
                "checkpoint format version {}, this weft reads version {}",
                cp.version(),
                C::VERSION
            ),
        });
    }
    Ok(cp)
}

/// The file `path`'s digest ([`digest`] of its bytes): a scene or a
/// pattern, recorded in checkpoints.
///
/// # Errors
/// [`OutputError::Io`] naming the file.
pub fn file_digest(path: &Path) -> Result<String, OutputError> {
    std::fs::read(path)
        .map(|b| digest(&b))
        .map_err(|source| OutputError::Io {
            path: PathBuf::from(path),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checkpoint(frame: usize) -> RunCheckpoint {
        RunCheckpoint {
            version: CHECKPOINT_VERSION,
            scene: "s.json".into(),
            scene_digest: digest(b"scene"),
            frame,
            steps: 7,
            newton_iterations: 21,
            cg_iterations: 300,
            wall_s: 1.5,
            sim: SimCheckpoint {
                t: 0.1 + 0.2,
                h: 1e-3 / 3.0,
                q: vec![1e-300, 5e-324, -0.0, std::f64::consts::PI, 1.0 / 3.0],
                v: vec![2.0f64.sqrt(), -1e300, 0.1, 0.7, 1e-17],
                anchors: vec![0.3],
                dissipated: 1.0 / 7.0,
                rejections: [("newton".to_string(), 2)].into_iter().collect(),
                accepted_in_row: 3,
            },
        }
    }

    /// Every float reads back to the same bits; the previous checkpoint
    /// is kept; another version and a truncated file are refused, naming
    /// the file.
    #[test]
    fn checkpoints_round_trip_bit_for_bit_and_keep_the_previous_one() {
        let dir = tempfile::tempdir().unwrap();
        write_checkpoint(dir.path(), &checkpoint(1)).unwrap();
        assert!(!dir.path().join(PREVIOUS_CHECKPOINT_FILE).exists());
        write_checkpoint(dir.path(), &checkpoint(2)).unwrap();
        let back: RunCheckpoint = read_checkpoint(dir.path()).unwrap();
        assert_eq!(back.frame, 2);
        let (a, b) = (&checkpoint(2).sim, &back.sim);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a.q), bits(&b.q));
        assert_eq!(bits(&a.v), bits(&b.v));
        assert_eq!(a.t.to_bits(), b.t.to_bits());
        assert_eq!(a.h.to_bits(), b.h.to_bits());
        assert_eq!(back, checkpoint(2));
        let prev: RunCheckpoint = serde_json::from_slice(
            &std::fs::read(dir.path().join(PREVIOUS_CHECKPOINT_FILE)).unwrap(),
        )
        .unwrap();
        assert_eq!(prev.frame, 1);

        let path = dir.path().join(CHECKPOINT_FILE);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, &text[..text.len() - 10]).unwrap();
        let e = read_checkpoint::<RunCheckpoint>(dir.path())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("checkpoint.json") && e.contains("truncated"),
            "{e}"
        );
        assert!(e.contains(PREVIOUS_CHECKPOINT_FILE), "{e}");

        let mut other = checkpoint(3);
        other.version = CHECKPOINT_VERSION + 1;
        write_checkpoint(dir.path(), &other).unwrap();
        let e = read_checkpoint::<RunCheckpoint>(dir.path())
            .unwrap_err()
            .to_string();
        assert!(e.contains("format version"), "{e}");
        assert_ne!(digest(b"scene"), digest(b"scene "));
    }
}
