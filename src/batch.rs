//! Batch runs (`weft batch MANIFEST.json --out DIR [--shard I/N]`): many
//! scene runs and drapes, parameter sweeps over them, split over machines
//! (e.g. a Slurm array, `scripts/slurm/`), surviving kills.
//!
//! A manifest ([`Manifest`], JSON) lists jobs ([`JobSpec`]); a job with a
//! `sweep` stands for one job per combination of the swept values (the
//! Cartesian product, keys in sorted order), named
//! `NAME-KEY=VALUE-...`. Paths in the manifest are relative to its folder.
//!
//! Each job gets `DIR/jobs/NAME/` with its outputs and `status.json`
//! ([`JobStatus`]: `running`, `done` or `failed`, wall time, key figures,
//! error); after every job `DIR/index.json` ([`Index`]) is rebuilt from all
//! status files, in manifest order (jobs without one are `pending`), so
//! the index merges what every shard has done. Jobs write checkpoints every
//! [`Manifest::checkpoint_every_s`]; a rerun skips `done` jobs, resumes a
//! job left `running` from its checkpoint (or starts it again without
//! one) and retries `failed` ones. Shard `I/N` runs the jobs whose index in
//! the expanded list is `I mod N`: deterministic, so N machines with
//! `I = 0..N-1` cover the list once.

use crate::run::{RunOptions, run_scene};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;
use thiserror::Error;
use weft_io::write_json;

/// A batch manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The jobs, in order.
    pub jobs: Vec<JobSpec>,
    /// Wall time between checkpoints of every job (s). Default 60.
    #[serde(default = "default_checkpoint_every")]
    pub checkpoint_every_s: f64,
}

fn default_checkpoint_every() -> f64 {
    60.0
}

/// One job of a manifest (`"kind": "run"` or `"drape"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum JobSpec {
    /// A scene run ([`crate::run::run_scene`]).
    Run {
        /// Job name (a folder name: letters, digits, `-`, `_`, `.`, `=`).
        name: String,
        /// The scene file.
        scene: PathBuf,
        /// Sweep: dotted paths into the scene's JSON (e.g.
        /// `materials.cotton.damping.stretch`, `gravity`) and their values.
        /// Each combination's scene is written to the job's folder as
        /// `scene.json`.
        #[serde(default)]
        sweep: BTreeMap<String, Vec<Value>>,
    },
    /// A drape ([`weft_garment::drape_to_dir`]).
    Drape {
        /// Job name.
        name: String,
        /// The pattern file.
        pattern: PathBuf,
        /// `weft_garment::DrapeOptions` as JSON (defaults for what is
        /// left out; a relative `body.obj.path` is relative to the
        /// manifest).
        #[serde(default)]
        options: serde_json::Map<String, Value>,
        /// Sweep: dotted paths into the options (e.g. `material`,
        /// `spacing_mm`, `relax.max_time`) and their values.
        #[serde(default)]
        sweep: BTreeMap<String, Vec<Value>>,
    },
}

/// A job of the expanded list.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// Its name (the base name, then `-KEY=VALUE` per swept key).
    pub name: String,
    /// What to do.
    pub work: Work,
}

/// What a job does.
#[derive(Clone, Debug, PartialEq)]
pub enum Work {
    /// Run the scene (JSON, written to the job's folder as `scene.json`).
    Run {
        /// The scene file it came from.
        source: PathBuf,
        /// The scene with the swept values set.
        scene: Value,
    },
    /// Drape the pattern with the options.
    Drape {
        /// The pattern file.
        pattern: PathBuf,
        /// The options.
        options: Box<weft_garment::DrapeOptions>,
    },
}

/// A job's state, `DIR/jobs/NAME/status.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobStatus {
    /// The job's name.
    pub name: String,
    /// `run` or `drape`.
    pub kind: String,
    /// `pending`, `running`, `done` or `failed`.
    pub status: String,
    /// Wall time of the last attempt (s).
    pub wall_s: f64,
    /// Key figures (run: simulated time, steps, rejected steps, frames;
    /// drape: nodes, steps, widest seam, penetration, slid off, static).
    pub figures: BTreeMap<String, Value>,
    /// The error of a failed job.
    pub error: Option<String>,
    /// The job's folder, relative to the batch folder.
    pub dir: String,
}

/// `DIR/index.json`: every job's status, in manifest order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Index {
    /// The jobs.
    pub jobs: Vec<JobStatus>,
}

/// What one call of [`run_batch`] did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BatchSummary {
    /// Jobs in the expanded list.
    pub jobs: usize,
    /// Jobs of this shard.
    pub in_shard: usize,
    /// Run (or resumed) and finished now.
    pub done: usize,
    /// Resumed from a checkpoint.
    pub resumed: usize,
    /// Skipped: finished by an earlier call.
    pub skipped: usize,
    /// Failed now.
    pub failed: usize,
}

/// A manifest or batch folder that cannot be used.
#[derive(Debug, Error)]
pub enum BatchError {
    /// The manifest: reading, JSON (with the path in it), a bad value.
    #[error("{file}: {place}: {message}")]
    Manifest {
        /// The manifest file.
        file: PathBuf,
        /// Where in it (a JSON path, or a job).
        place: String,
        /// What was expected.
        message: String,
    },
    /// A bad shard (`I/N` with `I < N`).
    #[error("--shard {0}: expected I/N with 0 <= I < N (e.g. 0/4)")]
    Shard(String),
    /// Writing the batch folder.
    #[error(transparent)]
    Output(#[from] weft_io::OutputError),
}

/// Parses a shard `I/N`.
///
/// # Errors
/// [`BatchError::Shard`].
pub fn parse_shard(s: &str) -> Result<(usize, usize), BatchError> {
    let bad = || BatchError::Shard(s.to_string());
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// Sets the dotted `path` of `v` to `value`, creating objects on the way.
fn set_path(v: &mut Value, path: &str, value: Value) -> Result<(), String> {
    let mut cur = v;
    let keys: Vec<&str> = path.split('.').collect();
    for (k, key) in keys.iter().enumerate() {
        let obj = cur
            .as_object_mut()
            .ok_or_else(|| format!("{} is not an object", keys[..k].join(".")))?;
        if k + 1 == keys.len() {
            obj.insert((*key).to_string(), value);
            return Ok(());
        }
        cur = obj
            .entry((*key).to_string())
            .or_insert_with(|| Value::Object(Default::default()));
    }
    Ok(())
}

/// Every combination of `sweep` (keys in sorted order) with its name
/// suffix.
fn combinations(sweep: &BTreeMap<String, Vec<Value>>) -> Vec<(String, Vec<(&str, &Value)>)> {
    let mut out = vec![(String::new(), Vec::new())];
    for (key, values) in sweep {
        let mut next = Vec::new();
        for (suffix, set) in &out {
            for v in values {
                let shown = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let shown: String = shown
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || "-_.=".contains(c) {
                            c
                        } else {
                            '_'
                        }
                    })
                    .collect();
                let mut set = set.clone();
                set.push((key.as_str(), v));
                next.push((format!("{suffix}-{key}={shown}"), set));
            }
        }
        out = next;
    }
    out
}

impl Manifest {
    /// Reads a manifest.
    ///
    /// # Errors
    /// [`BatchError::Manifest`] naming the file and the JSON path.
    pub fn from_file(path: &Path) -> Result<Self, BatchError> {
        let err = |place: String, message: String| BatchError::Manifest {
            file: path.to_path_buf(),
            place,
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err("file".into(), e.to_string()))?;
        let de = &mut serde_json::Deserializer::from_str(&text);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let place = e.path().to_string();
            err(place, e.into_inner().to_string())
        })
    }

    /// The expanded job list (sweeps multiplied out), with paths relative
    /// to `base` (the manifest's folder) resolved.
    ///
    /// # Errors
    /// [`BatchError::Manifest`] (`manifest` names the file) for a missing
    /// scene, an option that does not fit `DrapeOptions`, a bad or
    /// repeated job name.
    pub fn expand(&self, manifest: &Path, base: &Path) -> Result<Vec<Job>, BatchError> {
        let err = |place: String, message: String| BatchError::Manifest {
            file: manifest.to_path_buf(),
            place,
            message,
        };
        let mut jobs = Vec::new();
        for (j, spec) in self.jobs.iter().enumerate() {
            let place = |what: &str| format!("jobs[{j}]{what}");
            match spec {
                JobSpec::Run { name, scene, sweep } => {
                    let source = base.join(scene);
                    let text = std::fs::read_to_string(&source)
                        .map_err(|e| err(place(".scene"), format!("{}: {e}", source.display())))?;
                    let parsed: Value = serde_json::from_str(&text)
                        .map_err(|e| err(place(".scene"), format!("{}: {e}", source.display())))?;
                    for (suffix, set) in combinations(sweep) {
                        let mut scene = parsed.clone();
                        for (key, v) in set {
                            set_path(&mut scene, key, v.clone())
                                .map_err(|e| err(place(&format!(".sweep.{key}")), e))?;
                        }
                        jobs.push(Job {
                            name: format!("{name}{suffix}"),
                            work: Work::Run {
                                source: source.clone(),
                                scene,
                            },
                        });
                    }
                }
                JobSpec::Drape {
                    name,
                    pattern,
                    options,
                    sweep,
                } => {
                    for (suffix, set) in combinations(sweep) {
                        let mut o = Value::Object(options.clone());
                        for (key, v) in set {
                            set_path(&mut o, key, v.clone())
                                .map_err(|e| err(place(&format!(".sweep.{key}")), e))?;
                        }
                        if let Some(p) = o.pointer_mut("/body/obj/path")
                            && let Some(s) = p.as_str()
                        {
                            *p = Value::String(base.join(s).display().to_string());
                        }
                        let options: weft_garment::DrapeOptions =
                            serde_path_to_error::deserialize(o).map_err(|e| {
                                err(
                                    place(&format!(".options.{}", e.path())),
                                    e.into_inner().to_string(),
                                )
                            })?;
                        jobs.push(Job {
                            name: format!("{name}{suffix}"),
                            work: Work::Drape {
                                pattern: base.join(pattern),
                                options: Box::new(options),
                            },
                        });
                    }
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        for job in &jobs {
            let ok = !job.name.is_empty()
                && job
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.=".contains(c))
                && !job.name.starts_with('.');
            if !ok {
                return Err(err(
                    "jobs".into(),
                    format!(
                        "job name {:?}: expected letters, digits, '-', '_', '.', '=' (a folder name)",
                        job.name
                    ),
                ));
            }
            if !seen.insert(job.name.clone()) {
                return Err(err(
                    "jobs".into(),
                    format!("job name {:?} is used twice", job.name),
                ));
            }
        }
        Ok(jobs)
    }
}

fn kind(job: &Job) -> &'static str {
    match job.work {
        Work::Run { .. } => "run",
        Work::Drape { .. } => "drape",
    }
}

fn read_status(path: &Path) -> Option<JobStatus> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Rebuilds `out/index.json` from the jobs' status files.
///
/// # Errors
/// [`BatchError::Output`].
pub fn write_index(out: &Path, jobs: &[Job]) -> Result<Index, BatchError> {
    let index = Index {
        jobs: jobs
            .iter()
            .map(|job| {
                let dir = format!("jobs/{}", job.name);
                read_status(&out.join(&dir).join("status.json")).unwrap_or(JobStatus {
                    name: job.name.clone(),
                    kind: kind(job).into(),
                    status: "pending".into(),
                    wall_s: 0.0,
                    figures: BTreeMap::new(),
                    error: None,
                    dir,
                })
            })
            .collect(),
    };
    write_json(&out.join("index.json"), &index)?;
    Ok(index)
}

/// Runs one job in `dir`, resuming from its checkpoint with `resume`.
fn run_job(
    job: &Job,
    dir: &Path,
    resume: bool,
    checkpoint_every_s: f64,
) -> Result<BTreeMap<String, Value>, String> {
    let mut figures = BTreeMap::new();
    match &job.work {
        Work::Run { scene, .. } => {
            let file = dir.join("scene.json");
            if !resume {
                write_json(&file, scene).map_err(|e| e.to_string())?;
            }
            let opts = RunOptions {
                one_iteration: false,
                checkpoint_every_s: Some(checkpoint_every_s),
                resume,
            };
            let s = run_scene(&file, dir, &opts, &mut ()).map_err(|e| e.to_string())?;
            figures.insert("t".into(), s.t.into());
            figures.insert("steps".into(), s.steps.into());
            figures.insert("rejected".into(), s.rejected.into());
            figures.insert("frames".into(), s.frames.into());
            if let Ok(rows) = weft_io::read_energy_csv(dir.join("energy.csv"))
                && let Some(last) = rows.last()
            {
                figures.insert("kinetic_energy_j".into(), last.kinetic.into());
            }
        }
        Work::Drape { pattern, options } => {
            let mut opts = (**options).clone();
            opts.checkpoint_every_s = Some(checkpoint_every_s);
            opts.resume = resume;
            let d = weft_garment::drape_to_dir(pattern, &opts, dir, &mut ())
                .map_err(|e| e.to_string())?;
            let s = &d.summary;
            figures.insert("nodes".into(), s.nodes.into());
            figures.insert("steps".into(), s.steps.into());
            figures.insert("max_seam_gap_m".into(), s.max_seam_gap_m.into());
            figures.insert("max_penetration_m".into(), s.max_penetration_m.into());
            figures.insert("slid_off".into(), s.slid_off.into());
            figures.insert("is_static".into(), s.is_static.into());
        }
    }
    Ok(figures)
}

/// Runs the jobs of `manifest` in shard `shard = (I, N)` into `out`
/// (module docs), calling `on_job(name, status)` after each.
///
/// # Errors
/// [`BatchError`] for the manifest or the batch folder; a job's failure is
/// recorded in its status, not returned.
pub fn run_batch(
    manifest: &Path,
    out: &Path,
    shard: (usize, usize),
    on_job: &mut dyn FnMut(&JobStatus),
) -> Result<BatchSummary, BatchError> {
    let m = Manifest::from_file(manifest)?;
    let base = manifest.parent().unwrap_or(Path::new("."));
    let jobs = m.expand(manifest, base)?;
    if !(m.checkpoint_every_s.is_finite() && m.checkpoint_every_s >= 0.0) {
        return Err(BatchError::Manifest {
            file: manifest.to_path_buf(),
            place: "checkpoint_every_s".into(),
            message: format!(
                "expected a finite number of seconds >= 0, got {}",
                m.checkpoint_every_s
            ),
        });
    }
    let (i, n) = shard;
    let mut summary = BatchSummary {
        jobs: jobs.len(),
        ..BatchSummary::default()
    };
    let io = |e: std::io::Error, p: &Path| weft_io::OutputError::Io {
        path: p.to_path_buf(),
        source: e,
    };
    for (k, job) in jobs.iter().enumerate() {
        if k % n != i {
            continue;
        }
        summary.in_shard += 1;
        let dir = out.join("jobs").join(&job.name);
        std::fs::create_dir_all(&dir).map_err(|e| io(e, &dir))?;
        let status_file = dir.join("status.json");
        let before = read_status(&status_file);
        if before.as_ref().is_some_and(|s| s.status == "done") {
            summary.skipped += 1;
            continue;
        }
        let resume = before.as_ref().is_some_and(|s| s.status == "running")
            && dir.join(weft_io::checkpoint::CHECKPOINT_FILE).is_file();
        let mut status = JobStatus {
            name: job.name.clone(),
            kind: kind(job).into(),
            status: "running".into(),
            wall_s: 0.0,
            figures: BTreeMap::new(),
            error: None,
            dir: format!("jobs/{}", job.name),
        };
        write_json(&status_file, &status)?;
        let start = Instant::now();
        let result = run_job(job, &dir, resume, m.checkpoint_every_s);
        status.wall_s = start.elapsed().as_secs_f64();
        match result {
            Ok(figures) => {
                status.status = "done".into();
                status.figures = figures;
                summary.done += 1;
                summary.resumed += usize::from(resume);
            }
            Err(e) => {
                status.status = "failed".into();
                status.error = Some(e);
                summary.failed += 1;
            }
        }
        write_json(&status_file, &status)?;
        write_index(out, &jobs)?;
        on_job(&status);
    }
    write_index(out, &jobs)?;
    Ok(summary)
}
