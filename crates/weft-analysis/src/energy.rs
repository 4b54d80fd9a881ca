//! Reader for the run output `energy.csv` (DESIGN §8).

use std::path::{Path, PathBuf};

use crate::AnalysisError;

/// The exact header line of `energy.csv` (DESIGN §8).
pub const ENERGY_CSV_HEADER: &str = "t,kinetic,elastic,gravity,dissipated,h,newton_iters,cg_iters";

/// Column names in file order.
pub const ENERGY_CSV_COLUMNS: [&str; 8] = [
    "t",
    "kinetic",
    "elastic",
    "gravity",
    "dissipated",
    "h",
    "newton_iters",
    "cg_iters",
];

/// The columns of an `energy.csv`, one entry per output frame (all the same
/// length, `t` strictly increasing when read from a file).
///
/// Energies are in joules, times in seconds. The iteration counts are kept as
/// `f64` so that a writer may report per-frame totals (integers) or
/// per-step averages alike.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EnergyColumns {
    /// Simulated time of the frame \[s\].
    pub t: Vec<f64>,
    /// Kinetic energy `1/2 q̇ᵀ M q̇` \[J\].
    pub kinetic: Vec<f64>,
    /// Elastic potential energy \[J\].
    pub elastic: Vec<f64>,
    /// Gravitational potential energy \[J\] (absolute; plots shift it to start at 0).
    pub gravity: Vec<f64>,
    /// Energy dissipated so far \[J\].
    pub dissipated: Vec<f64>,
    /// Time step in use at the frame \[s\].
    pub h: Vec<f64>,
    /// Newton iterations reported for the frame.
    pub newton_iters: Vec<f64>,
    /// Conjugate-gradient iterations reported for the frame.
    pub cg_iters: Vec<f64>,
}

impl EnergyColumns {
    /// Number of frames (length of `t`).
    pub fn len(&self) -> usize {
        self.t.len()
    }

    /// Whether there are no frames.
    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }

    /// Checks that there is at least one frame and all eight columns have the
    /// same length.
    ///
    /// # Errors
    /// [`AnalysisError::Columns`] naming the first column whose length
    /// differs from `t`, or saying the columns are empty.
    pub fn validate(&self) -> Result<(), AnalysisError> {
        if self.t.is_empty() {
            return Err(AnalysisError::Columns(
                "expected at least one frame, the columns are empty".into(),
            ));
        }
        let lens = [
            self.kinetic.len(),
            self.elastic.len(),
            self.gravity.len(),
            self.dissipated.len(),
            self.h.len(),
            self.newton_iters.len(),
            self.cg_iters.len(),
        ];
        for (name, len) in ENERGY_CSV_COLUMNS[1..].iter().zip(lens) {
            if len != self.t.len() {
                return Err(AnalysisError::Columns(format!(
                    "column '{name}' has {len} entries, expected {} (the length of 't')",
                    self.t.len()
                )));
            }
        }
        Ok(())
    }

    fn push_row(&mut self, row: &[f64; 8]) {
        self.t.push(row[0]);
        self.kinetic.push(row[1]);
        self.elastic.push(row[2]);
        self.gravity.push(row[3]);
        self.dissipated.push(row[4]);
        self.h.push(row[5]);
        self.newton_iters.push(row[6]);
        self.cg_iters.push(row[7]);
    }
}

/// Reads `energy.csv` from `path`.
///
/// # Errors
/// [`AnalysisError::Io`] if the file cannot be read, else the errors of
/// [`parse_energy_csv`], all naming `path`.
pub fn read_energy_csv(path: impl AsRef<Path>) -> Result<EnergyColumns, AnalysisError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| AnalysisError::Io {
        file: path.to_path_buf(),
        action: "reading".into(),
        source,
    })?;
    parse_energy_csv(&text, path)
}

/// Parses the text of an `energy.csv`; `file` is only used in error messages.
///
/// Format: the first non-blank line is exactly [`ENERGY_CSV_HEADER`]
/// (surrounding whitespace and a trailing `\r` are ignored); every following
/// non-blank line has exactly 8 comma-separated fields, each a finite number
/// (Rust `f64` syntax, surrounding spaces allowed); `t` increases strictly.
/// Blank lines are skipped.
///
/// # Errors
/// [`AnalysisError::Header`], [`AnalysisError::FieldCount`],
/// [`AnalysisError::NotANumber`] (also for `NaN`/`inf`),
/// [`AnalysisError::NonIncreasingTime`], each with the 1-based line number;
/// [`AnalysisError::NoRows`] if there is no data row.
pub fn parse_energy_csv(
    text: &str,
    file: impl AsRef<Path>,
) -> Result<EnergyColumns, AnalysisError> {
    let file: PathBuf = file.as_ref().to_path_buf();
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let Some((header_line, header)) = lines.next() else {
        return Err(AnalysisError::Header {
            file,
            line: 1,
            expected: ENERGY_CSV_HEADER,
            found: "(empty file)".into(),
        });
    };
    let normalized: Vec<&str> = header.split(',').map(str::trim).collect();
    if normalized != ENERGY_CSV_COLUMNS {
        return Err(AnalysisError::Header {
            file,
            line: header_line,
            expected: ENERGY_CSV_HEADER,
            found: header.to_string(),
        });
    }
    let mut cols = EnergyColumns::default();
    for (line, content) in lines {
        let fields: Vec<&str> = content.split(',').map(str::trim).collect();
        if fields.len() != ENERGY_CSV_COLUMNS.len() {
            return Err(AnalysisError::FieldCount {
                file,
                line,
                expected: ENERGY_CSV_COLUMNS.len(),
                found: fields.len(),
                columns: ENERGY_CSV_HEADER,
            });
        }
        let mut row = [0.0; 8];
        for (k, field) in fields.iter().enumerate() {
            match field.parse::<f64>() {
                Ok(v) if v.is_finite() => row[k] = v,
                _ => {
                    return Err(AnalysisError::NotANumber {
                        file,
                        line,
                        column: ENERGY_CSV_COLUMNS[k],
                        value: (*field).to_string(),
                    });
                }
            }
        }
        if let Some(&previous) = cols.t.last()
            && row[0] <= previous
        {
            return Err(AnalysisError::NonIncreasingTime {
                file,
                line,
                t: row[0],
                previous,
            });
        }
        cols.push_row(&row);
    }
    if cols.is_empty() {
        return Err(AnalysisError::NoRows { file });
    }
    Ok(cols)
}

/// Writes `columns` as `energy.csv` text (header of DESIGN §8, one row per
/// frame, numbers in Rust's shortest round-trip `f64` format, so
/// [`parse_energy_csv`] reads back the same values).
///
/// Used by tests and by tools that produce synthetic runs; the solver's own
/// writer lives in the CLI.
///
/// # Errors
/// [`AnalysisError::Columns`] if the columns are empty or differ in length.
pub fn format_energy_csv(columns: &EnergyColumns) -> Result<String, AnalysisError> {
    columns.validate()?;
    let mut out = String::with_capacity(64 * (columns.len() + 1));
    out.push_str(ENERGY_CSV_HEADER);
    out.push('\n');
    for i in 0..columns.len() {
        let row = [
            columns.t[i],
            columns.kinetic[i],
            columns.elastic[i],
            columns.gravity[i],
            columns.dissipated[i],
            columns.h[i],
            columns.newton_iters[i],
            columns.cg_iters[i],
        ];
        let fields: Vec<String> = row.iter().map(|v| format!("{v:?}")).collect();
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    Ok(out)
}
