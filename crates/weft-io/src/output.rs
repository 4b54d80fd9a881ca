//! Run outputs (DESIGN §8): `energy.csv`, `final_state.json`, OBJ frames,
//! with atomic writes and readers.
//!
//! **Atomic writes.** [`atomic_write`] writes into a temporary file created
//! (with `tempfile`) in the destination's directory, flushes and `fsync`s
//! it, then renames it over the destination (a rename within one directory
//! is atomic on POSIX file systems and replaces the target on Windows). A
//! reader therefore sees either the old complete file or the new complete
//! file; if writing fails, the temporary file is removed and the old file is
//! untouched. `final_state.json` and frames are written this way. On Unix
//! the file gets mode `0644` (tempfile's default would be `0600`).
//!
//! **energy.csv** is append-only: [`EnergyCsv::create`] writes the header
//! atomically (replacing any old file), then each [`EnergyCsv::append`]
//! formats the whole row first, writes it with a single `write_all` to the
//! file opened in append mode and flushes it. Earlier rows are never
//! rewritten, so a crash can at worst leave the last row incomplete, and
//! [`read_energy_csv`] reports such a row with its line number. Rewriting
//! the whole file per frame was rejected: it costs O(frames²) bytes.
//! Floats are written with the shortest round-trip formatting (Rust's `{}`
//! in the CSV, `ryu` in JSON) and parsed back exactly (`serde_json` with
//! `float_roundtrip`), so reading a file back gives the same `f64`s.

use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use thiserror::Error;
use weft_core::{Fabric, State};

/// An output file that could not be written or read back.
#[derive(Debug, Error)]
pub enum OutputError {
    /// An operating-system error on `path`.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A file that does not have the expected content.
    #[error("{path}: line {line}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line (1 for whole-file JSON errors without a position).
        line: usize,
        /// What was expected.
        message: String,
    },
    /// A state that does not fit the fabric.
    #[error("{path}: {message}")]
    Mismatch {
        /// The file that was to be written.
        path: PathBuf,
        /// What does not match.
        message: String,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> OutputError + '_ {
    move |source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes `path` atomically: `write` fills a temporary file in the same
/// directory, which is flushed, synced and renamed over `path` only if
/// `write` succeeds. On any error the temporary file is deleted and an
/// existing `path` keeps its old content.
///
/// # Errors
/// [`OutputError::Io`] naming `path` for a failure to create the temporary
/// file, an error returned by `write`, or a failed sync or rename.
pub fn atomic_write(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), OutputError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(io_err(path))?;
    {
        let mut w = BufWriter::new(tmp.as_file());
        write(&mut w).map_err(io_err(path))?;
        w.flush().map_err(io_err(path))?;
    }
    // tempfile creates 0600 files; give outputs the usual rw-r--r--.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(io_err(path))?;
    }
    tmp.as_file().sync_all().map_err(io_err(path))?;
    tmp.persist(path).map_err(|e| OutputError::Io {
        path: path.to_path_buf(),
        source: e.error,
    })?;
    Ok(())
}

/// The exact header of `energy.csv` (DESIGN §8), defined once in
/// weft-analysis (which reads the file for plots and fits).
pub const ENERGY_HEADER: &str = weft_analysis::ENERGY_CSV_HEADER;

/// One row of `energy.csv`: the state at an output frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnergyRow {
    /// Simulated time of the frame (s).
    pub t: f64,
    /// Kinetic energy (J).
    pub kinetic: f64,
    /// Elastic potential energy (J).
    pub elastic: f64,
    /// Gravitational potential energy (J).
    pub gravity: f64,
    /// Energy dissipated since the start (J), as the solver accounts it.
    pub dissipated: f64,
    /// The last accepted step size (s).
    pub h: f64,
    /// Newton iterations since the previous row.
    pub newton_iters: u64,
    /// PCG iterations since the previous row.
    pub cg_iters: u64,
}

impl EnergyRow {
    fn to_line(self) -> String {
        format!(
            "{},{},{},{},{},{},{},{}\n",
            self.t,
            self.kinetic,
            self.elastic,
            self.gravity,
            self.dissipated,
            self.h,
            self.newton_iters,
            self.cg_iters
        )
    }
}

/// Writes `value` as pretty-printed JSON to `path` atomically
/// ([`atomic_write`]): summaries, indexes, status files.
///
/// # Errors
/// [`OutputError::Io`] naming `path`.
pub fn write_json(path: &Path, value: &impl Serialize) -> Result<(), OutputError> {
    atomic_write(path, |w| {
        serde_json::to_writer_pretty(&mut *w, value).map_err(io::Error::other)
    })
}

/// Writer of `energy.csv` (append-only, see the module docs).
#[derive(Debug)]
pub struct EnergyCsv {
    path: PathBuf,
    file: File,
    rows: usize,
}

impl EnergyCsv {
    /// Creates (or replaces, atomically) `path` with the header line only and
    /// opens it for appending.
    ///
    /// # Errors
    /// [`OutputError::Io`] naming `path`.
    pub fn create(path: impl AsRef<Path>) -> Result<Self, OutputError> {
        let path = path.as_ref().to_path_buf();
        atomic_write(&path, |w| writeln!(w, "{ENERGY_HEADER}"))?;
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(io_err(&path))?;
        Ok(Self {
            path,
            file,
            rows: 0,
        })
    }

    /// Reopens `path`, written by an earlier run, for appending after its
    /// first `rows` rows: the header and those rows are kept (rewritten
    /// atomically), later rows (frames after a checkpoint) are dropped.
    ///
    /// # Errors
    /// [`OutputError::Io`] naming `path`; [`OutputError::Parse`] when it
    /// does not start with the header or has fewer than `rows` rows.
    pub fn resume(path: impl AsRef<Path>, rows: usize) -> Result<Self, OutputError> {
        let path = path.as_ref().to_path_buf();
        let text = std::fs::read_to_string(&path).map_err(io_err(&path))?;
        let mut lines = text.lines();
        if lines.next() != Some(ENERGY_HEADER) {
            return Err(OutputError::Parse {
                path,
                line: 1,
                message: format!("expected the header {ENERGY_HEADER:?}"),
            });
        }
        let kept: Vec<&str> = lines.take(rows).collect();
        if kept.len() < rows {
            return Err(OutputError::Parse {
                path,
                line: kept.len() + 2,
                message: format!("expected {rows} rows to resume after, found {}", kept.len()),
            });
        }
        atomic_write(&path, |w| {
            writeln!(w, "{ENERGY_HEADER}")?;
            for l in &kept {
                writeln!(w, "{l}")?;
            }
            Ok(())
        })?;
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(io_err(&path))?;
        Ok(Self { path, file, rows })
    }

    /// Appends one row and flushes it to the operating system.
    ///
    /// # Errors
    /// [`OutputError::Io`] naming the file.
    pub fn append(&mut self, row: &EnergyRow) -> Result<(), OutputError> {
        let line = row.to_line();
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.flush())
            .map_err(io_err(&self.path))?;
        self.rows += 1;
        Ok(())
    }

    /// `fsync`s the file (call at the end of a run or at checkpoints).
    ///
    /// # Errors
    /// [`OutputError::Io`] naming the file.
    pub fn sync(&self) -> Result<(), OutputError> {
        self.file.sync_all().map_err(io_err(&self.path))
    }

    /// Rows written so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Reads an `energy.csv` written by [`EnergyCsv`] (or anyone following
/// DESIGN §8).
///
/// # Errors
/// [`OutputError::Io`]; [`OutputError::Parse`] with the line number for a
/// wrong header, a row without exactly eight fields, or a field that is not
/// a number (the iteration counts must be non-negative integers).
pub fn read_energy_csv(path: impl AsRef<Path>) -> Result<Vec<EnergyRow>, OutputError> {
    let path = path.as_ref();
    let file = File::open(path).map_err(io_err(path))?;
    let parse = |line: usize, message: String| OutputError::Parse {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut rows = Vec::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(io_err(path))?;
        let n = i + 1;
        if i == 0 {
            if line.trim_end() != ENERGY_HEADER {
                return Err(parse(
                    n,
                    format!("expected the header `{ENERGY_HEADER}`, got `{line}`"),
                ));
            }
            continue;
        }
        let fields: Vec<&str> = line.trim_end().split(',').collect();
        if fields.len() != 8 {
            return Err(parse(
                n,
                format!(
                    "expected 8 comma-separated fields ({ENERGY_HEADER}), got {}",
                    fields.len()
                ),
            ));
        }
        let names: Vec<&str> = ENERGY_HEADER.split(',').collect();
        let mut f = [0.0; 6];
        for c in 0..6 {
            f[c] = fields[c].parse::<f64>().map_err(|_| {
                parse(
                    n,
                    format!("{}: expected a number, got `{}`", names[c], fields[c]),
                )
            })?;
        }
        let mut it = [0u64; 2];
        for c in 0..2 {
            it[c] = fields[6 + c].parse::<u64>().map_err(|_| {
                parse(
                    n,
                    format!(
                        "{}: expected a non-negative integer, got `{}`",
                        names[6 + c],
                        fields[6 + c]
                    ),
                )
            })?;
        }
        rows.push(EnergyRow {
            t: f[0],
            kinetic: f[1],
            elastic: f[2],
            gravity: f[3],
            dissipated: f[4],
            h: f[5],
            newton_iters: it[0],
            cg_iters: it[1],
        });
    }
    if rows.is_empty() && std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) == 0 {
        return Err(parse(
            1,
            format!("empty file: expected the header `{ENERGY_HEADER}`"),
        ));
    }
    Ok(rows)
}

/// Contents of `final_state.json`: per node, in the scene's node order,
/// position `x` (m) and arc-length coordinates `u`, `v` (m). Non-finite
/// values are written as JSON `null` and read back as NaN.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FinalState {
    /// Positions `[x, y, z]` (m).
    pub x: Vec<[f64; 3]>,
    /// Warp arc-length coordinates (m).
    pub u: Vec<f64>,
    /// Weft arc-length coordinates (m).
    pub v: Vec<f64>,
}

impl FinalState {
    /// Positions and arc-length coordinates of `state`.
    pub fn from_state(state: &State) -> Self {
        Self {
            x: state.x.iter().map(|p| [p.x, p.y, p.z]).collect(),
            u: state.u.clone(),
            v: state.v.clone(),
        }
    }
}

fn check_state(path: &Path, fabric: &Fabric, state: &State) -> Result<(), OutputError> {
    let n = fabric.node_count();
    for (what, len) in [
        ("x", state.x.len()),
        ("u", state.u.len()),
        ("v", state.v.len()),
    ] {
        if len != n {
            return Err(OutputError::Mismatch {
                path: path.to_path_buf(),
                message: format!("state has {len} entries in {what}, the fabric {n} nodes"),
            });
        }
    }
    Ok(())
}

/// Writes `final_state.json` (`{"x": [[x,y,z],...], "u": [...], "v": [...]}`,
/// DESIGN §8) atomically.
///
/// # Errors
/// [`OutputError::Mismatch`] if the state does not have one entry per
/// fabric node; [`OutputError::Io`].
pub fn write_final_state(
    path: impl AsRef<Path>,
    state: &State,
    fabric: &Fabric,
) -> Result<(), OutputError> {
    let path = path.as_ref();
    check_state(path, fabric, state)?;
    let fs = FinalState::from_state(state);
    atomic_write(path, |w| {
        serde_json::to_writer(&mut *w, &fs).map_err(io::Error::other)?;
        writeln!(w)
    })
}

/// Reads `final_state.json`.
///
/// # Errors
/// [`OutputError::Io`]; [`OutputError::Parse`] (with the JSON path in the
/// message) for anything but the three arrays of equal length.
pub fn read_final_state(path: impl AsRef<Path>) -> Result<FinalState, OutputError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Raw {
        x: Vec<[Option<f64>; 3]>,
        u: Vec<Option<f64>>,
        v: Vec<Option<f64>>,
    }
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(io_err(path))?;
    let mut de = serde_json::Deserializer::from_str(&text);
    let raw: Raw = serde_path_to_error::deserialize(&mut de).map_err(|e| OutputError::Parse {
        path: path.to_path_buf(),
        line: e.inner().line(),
        message: format!("{}: {}", e.path(), e.inner()),
    })?;
    let nan = |o: Option<f64>| o.unwrap_or(f64::NAN);
    let out = FinalState {
        x: raw.x.into_iter().map(|p| p.map(nan)).collect(),
        u: raw.u.into_iter().map(nan).collect(),
        v: raw.v.into_iter().map(nan).collect(),
    };
    if out.u.len() != out.x.len() || out.v.len() != out.x.len() {
        return Err(OutputError::Parse {
            path: path.to_path_buf(),
            line: 1,
            message: format!(
                "expected x, u, v of equal length (one entry per node), got {}, {}, {}",
                out.x.len(),
                out.u.len(),
                out.v.len()
            ),
        });
    }
    Ok(out)
}

/// The path of frame `index` in `format` under `dir/frames/`:
/// `dir/frames/frame_000042.obj`.
pub fn frame_path(dir: impl AsRef<Path>, index: usize, extension: &str) -> PathBuf {
    dir.as_ref()
        .join("frames")
        .join(format!("frame_{index:06}.{extension}"))
}

/// Writes one frame as OBJ polylines, atomically: a `v x y z` line per node
/// in node order, then one `l` line per yarn through its nodes (1-based
/// vertex indices, in order of increasing arc length), then one `f` line
/// per membrane triangle of triangle-mesh cloth (`fabric.elements.
/// triangles`, its vertices in the element's order). A crossing appears
/// once as a vertex and in two `l` lines (its warp and its weft yarn).
///
/// # Errors
/// [`OutputError::Mismatch`] if the state does not fit the fabric;
/// [`OutputError::Io`].
pub fn write_obj_frame(
    path: impl AsRef<Path>,
    fabric: &Fabric,
    state: &State,
) -> Result<(), OutputError> {
    let path = path.as_ref();
    check_state(path, fabric, state)?;
    atomic_write(path, |w| {
        writeln!(
            w,
            "# weft frame: {} nodes, {} yarns (polylines), {} triangles",
            fabric.node_count(),
            fabric.yarns.len(),
            fabric.elements.triangles.len()
        )?;
        for p in &state.x {
            writeln!(w, "v {} {} {}", p.x, p.y, p.z)?;
        }
        for yarn in &fabric.yarns {
            w.write_all(b"l")?;
            for &n in &yarn.nodes {
                write!(w, " {}", n + 1)?;
            }
            w.write_all(b"\n")?;
        }
        for t in &fabric.elements.triangles {
            let [a, b, c] = t.nodes.map(|n| n + 1);
            writeln!(w, "f {a} {b} {c}")?;
        }
        Ok(())
    })
}
