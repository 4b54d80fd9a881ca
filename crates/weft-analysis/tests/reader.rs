//! energy.csv reader: round trip and errors naming file, line and expectation.

use std::path::Path;

use weft_analysis::{
    AnalysisError, ENERGY_CSV_HEADER, EnergyColumns, format_energy_csv, parse_energy_csv,
    read_energy_csv,
};

const H: &str = "t,kinetic,elastic,gravity,dissipated,h,newton_iters,cg_iters";

fn write(dir: &Path, text: &str) -> std::path::PathBuf {
    let p = dir.join("energy.csv");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn header_constant_matches_design() {
    assert_eq!(ENERGY_CSV_HEADER, H);
}

#[test]
fn reads_columns_and_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "{H}\n0,0,1.5,-2,0,0.001,0,0\n0.01, 2e-3 ,1.25,-2.5,0.125,0.0005,3,41\r\n\n0.02,1,1,1,1,1,2.5,7\n"
    );
    let c = read_energy_csv(write(dir.path(), &text)).unwrap();
    assert_eq!(c.len(), 3);
    assert_eq!(c.t, vec![0.0, 0.01, 0.02]);
    assert_eq!(c.kinetic, vec![0.0, 2e-3, 1.0]);
    assert_eq!(c.elastic, vec![1.5, 1.25, 1.0]);
    assert_eq!(c.gravity, vec![-2.0, -2.5, 1.0]);
    assert_eq!(c.dissipated, vec![0.0, 0.125, 1.0]);
    assert_eq!(c.h, vec![0.001, 0.0005, 1.0]);
    assert_eq!(c.newton_iters, vec![0.0, 3.0, 2.5]);
    assert_eq!(c.cg_iters, vec![0.0, 41.0, 7.0]);
    let again = parse_energy_csv(&format_energy_csv(&c).unwrap(), "x").unwrap();
    assert_eq!(again, c);
}

/// Parses `text` from a file and returns the error and its message, checking
/// the message names the file.
fn error_of(text: &str) -> (AnalysisError, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), text);
    let e = read_energy_csv(&path).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains(&path.display().to_string()),
        "message does not name the file: {msg}"
    );
    (e, msg)
}

#[test]
fn wrong_header() {
    let (e, msg) = error_of("t,kinetic,elastic\n0,0,0\n");
    assert!(matches!(e, AnalysisError::Header { line: 1, .. }), "{e:?}");
    assert!(
        msg.contains("line 1") && msg.contains(H) && msg.contains("found 't,kinetic,elastic'"),
        "{msg}"
    );
    let (e, _) = error_of("");
    assert!(matches!(e, AnalysisError::Header { line: 1, .. }));
    // Reordered columns are a different contract.
    let (e, _) = error_of("kinetic,t,elastic,gravity,dissipated,h,newton_iters,cg_iters\n");
    assert!(matches!(e, AnalysisError::Header { .. }));
}

#[test]
fn non_numeric_field_names_line_and_column() {
    let (e, msg) = error_of(&format!(
        "{H}\n0,0,0,0,0,0,0,0\n0.1,0,0,0,0,0,0,0\n0.2,0,abc,0,0,0,0,0\n"
    ));
    assert!(
        matches!(&e, AnalysisError::NotANumber { line: 4, column: "elastic", value, .. } if value == "abc"),
        "{e:?}"
    );
    assert!(
        msg.contains("line 4")
            && msg.contains("'elastic'")
            && msg.contains("expected a finite number"),
        "{msg}"
    );
    let (e, _) = error_of(&format!("{H}\n0,NaN,0,0,0,0,0,0\n"));
    assert!(matches!(
        e,
        AnalysisError::NotANumber {
            line: 2,
            column: "kinetic",
            ..
        }
    ));
    let (e, _) = error_of(&format!("{H}\n0,0,0,0,0,0,0,inf\n"));
    assert!(matches!(
        e,
        AnalysisError::NotANumber {
            line: 2,
            column: "cg_iters",
            ..
        }
    ));
    let (e, _) = error_of(&format!("{H}\n0,0,0,0,0,,0,0\n"));
    assert!(matches!(
        e,
        AnalysisError::NotANumber {
            line: 2,
            column: "h",
            ..
        }
    ));
}

#[test]
fn wrong_field_count() {
    let (e, msg) = error_of(&format!("{H}\n0,0,0,0,0,0,0,0\n0.1,0,0,0,0\n"));
    assert!(
        matches!(
            e,
            AnalysisError::FieldCount {
                line: 3,
                expected: 8,
                found: 5,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        msg.contains("line 3") && msg.contains("expected 8") && msg.contains("found 5"),
        "{msg}"
    );
    let (e, _) = error_of(&format!("{H}\n0,0,0,0,0,0,0,0,0\n"));
    assert!(matches!(
        e,
        AnalysisError::FieldCount {
            line: 2,
            found: 9,
            ..
        }
    ));
}

#[test]
fn non_increasing_time() {
    let (e, msg) = error_of(&format!(
        "{H}\n0,0,0,0,0,0,0,0\n0.1,0,0,0,0,0,0,0\n\n0.1,0,0,0,0,0,0,0\n"
    ));
    assert!(
        matches!(e, AnalysisError::NonIncreasingTime { line: 5, .. }),
        "{e:?}"
    );
    assert!(
        msg.contains("line 5") && msg.contains("increase strictly"),
        "{msg}"
    );
    let (e, _) = error_of(&format!("{H}\n1,0,0,0,0,0,0,0\n0.5,0,0,0,0,0,0,0\n"));
    assert!(matches!(
        e,
        AnalysisError::NonIncreasingTime { line: 3, .. }
    ));
}

#[test]
fn header_only_and_missing_file() {
    let (e, msg) = error_of(&format!("{H}\n"));
    assert!(matches!(e, AnalysisError::NoRows { .. }), "{e:?}");
    assert!(msg.contains("at least one data row"));
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.csv");
    let e = read_energy_csv(&missing).unwrap_err();
    assert!(matches!(e, AnalysisError::Io { .. }));
    assert!(e.to_string().contains("nope.csv"));
}

#[test]
fn validate_names_ragged_column() {
    let mut c = EnergyColumns {
        t: vec![0.0, 1.0],
        kinetic: vec![0.0, 1.0],
        elastic: vec![0.0, 1.0],
        gravity: vec![0.0, 1.0],
        dissipated: vec![0.0],
        h: vec![0.0, 1.0],
        newton_iters: vec![0.0, 1.0],
        cg_iters: vec![0.0, 1.0],
    };
    let e = c.validate().unwrap_err();
    assert!(
        e.to_string()
            .contains("'dissipated' has 1 entries, expected 2"),
        "{e}"
    );
    assert!(format_energy_csv(&c).is_err());
    c.dissipated.push(1.0);
    assert!(c.validate().is_ok());
    assert!(EnergyColumns::default().validate().is_err());
}
