//! The error type of this crate.

use std::path::PathBuf;

use thiserror::Error;

/// Everything that can go wrong while reading, fitting or plotting.
///
/// Errors about a file name the file and, where there is one, the 1-based
/// line number; every message says what was expected.
#[derive(Debug, Error)]
pub enum AnalysisError {
    /// The file could not be opened, read or written.
    #[error("{file}: {action}: {source}")]
    Io {
        /// The file.
        file: PathBuf,
        /// What was being done ("reading", "writing temporary file ...", ...).
        action: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The first line is not the header of DESIGN §8.
    #[error("{file}, line {line}: expected the header '{expected}', found '{found}'")]
    Header {
        /// The file.
        file: PathBuf,
        /// 1-based line number (always 1 unless the file starts with blank lines).
        line: usize,
        /// The exact header required.
        expected: &'static str,
        /// What the file has instead.
        found: String,
    },
    /// A data row has the wrong number of comma-separated fields.
    #[error(
        "{file}, line {line}: expected {expected} comma-separated fields ({columns}), found {found}"
    )]
    FieldCount {
        /// The file.
        file: PathBuf,
        /// 1-based line number.
        line: usize,
        /// Number of fields required (8).
        expected: usize,
        /// Number of fields found.
        found: usize,
        /// The column names, for the message.
        columns: &'static str,
    },
    /// A field is not a finite number.
    #[error("{file}, line {line}, column '{column}': expected a finite number, found '{value}'")]
    NotANumber {
        /// The file.
        file: PathBuf,
        /// 1-based line number.
        line: usize,
        /// Column name from the header.
        column: &'static str,
        /// The offending text.
        value: String,
    },
    /// The time column does not increase strictly.
    #[error(
        "{file}, line {line}: expected t to increase strictly, found t = {t} after t = {previous}"
    )]
    NonIncreasingTime {
        /// The file.
        file: PathBuf,
        /// 1-based line number of the offending row.
        line: usize,
        /// Its time \[s\].
        t: f64,
        /// The time of the previous row \[s\].
        previous: f64,
    },
    /// The file has a header but no data row.
    #[error("{file}: expected at least one data row after the header, found none")]
    NoRows {
        /// The file.
        file: PathBuf,
    },
    /// Columns of an [`EnergyColumns`](crate::EnergyColumns) (or the slices
    /// given to a fit) differ in length or are empty.
    #[error("inconsistent columns: {0}")]
    Columns(String),
    /// An option is outside its documented range.
    #[error("invalid option {name} = {value}: expected {expected}")]
    InvalidOption {
        /// Option name.
        name: &'static str,
        /// The value given.
        value: String,
        /// The accepted range.
        expected: &'static str,
    },
    /// The damping fit found fewer kinetic-energy peaks than it needs.
    #[error(
        "damping fit: found {found} kinetic-energy peak(s) in t = [{t_start}, {t_end}] s, \
         need at least {needed} ({hint})"
    )]
    TooFewPeaks {
        /// Peaks found (after the floor and prominence filters).
        found: usize,
        /// Peaks required (`DampingFitOptions::min_peaks`).
        needed: usize,
        /// Start of the time window searched \[s\].
        t_start: f64,
        /// End of the time window searched \[s\].
        t_end: f64,
        /// What to try.
        hint: &'static str,
    },
    /// Drawing the plot failed.
    #[error("{file}: plotting failed: {message}")]
    Plot {
        /// The output file.
        file: PathBuf,
        /// The plotters error, as text.
        message: String,
    },
}
