//! Run outputs: energy.csv and final_state.json round trips, atomic writes,
//! OBJ frames.

use nalgebra::Vector3;
use serde_json::json;
use std::io::Write;
use weft_core::Fabric;
use weft_io::{
    ENERGY_HEADER, EnergyCsv, EnergyRow, OutputError, Scene, atomic_write, frame_path,
    read_energy_csv, read_final_state, write_final_state, write_obj_frame,
};

/// A yarn of 3 nodes and a 4 x 5 patch: 23 nodes, 1 + 4 + 5 yarns.
fn fabric() -> Fabric {
    let v = json!({
        "duration": 1.0, "time_step": {"dt": 1e-3}, "output": {"interval": 0.01},
        "materials": {"cotton": {"radius": 0.00025, "density": 130.0,
            "stretch_stiffness": 500.0, "bending_stiffness": 1e-5}},
        "objects": [
            {"type": "yarn", "material": "cotton", "nodes": [[0, 0, 0], [0.001, 0, 0], [0.002, 0, 0]]},
            {"type": "sphere", "center": [0, 0, 0], "radius": 0.05, "stiffness": 1e3},
            {"type": "woven_patch", "material": "cotton", "size": [0.01, 0.02],
             "yarn_counts": [4, 5], "center": [0, 0.1, 0]}
        ]
    });
    Scene::from_str(&v.to_string(), "scene.json")
        .unwrap()
        .build()
        .unwrap()
        .fabric
}

fn dir_entries(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn row(i: u64) -> EnergyRow {
    let x = i as f64;
    EnergyRow {
        t: 0.01 * x,
        kinetic: 1.0 / 3.0 + x,
        elastic: 1e-300 * (x + 1.0),
        gravity: -0.1 - 7e12 * x,
        dissipated: std::f64::consts::PI * x,
        h: 1e-3 / (x + 1.0),
        newton_iters: 3 * i,
        cg_iters: 1000 * i + 7,
    }
}

#[test]
fn energy_csv_round_trip_and_header() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("energy.csv");
    let mut csv = EnergyCsv::create(&path).unwrap();
    let rows: Vec<EnergyRow> = (0..50).map(row).collect();
    for r in &rows {
        csv.append(r).unwrap();
    }
    csv.sync().unwrap();
    assert_eq!(csv.rows(), 50);
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "t,kinetic,elastic,gravity,dissipated,h,newton_iters,cg_iters"
    );
    assert_eq!(lines[0], ENERGY_HEADER);
    assert_eq!(lines.len(), 51);
    // Exact f64 round trip (shortest round-trip formatting).
    assert_eq!(read_energy_csv(&path).unwrap(), rows);
    assert_eq!(dir_entries(dir.path()), ["energy.csv"]);

    // Rows are visible to a reader while the writer is still open (flushed).
    let mut csv2 = EnergyCsv::create(&path).unwrap();
    assert_eq!(read_energy_csv(&path).unwrap(), vec![]);
    csv2.append(&rows[3]).unwrap();
    assert_eq!(read_energy_csv(&path).unwrap(), vec![rows[3]]);
}

#[test]
fn energy_csv_interrupted_row_keeps_earlier_rows() {
    // A crash in the middle of a row leaves a partial last line: the earlier
    // rows are byte-identical and the reader names the bad line.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("energy.csv");
    let mut csv = EnergyCsv::create(&path).unwrap();
    for i in 0..3 {
        csv.append(&row(i)).unwrap();
    }
    drop(csv);
    let before = std::fs::read(&path).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(b"0.04,1.2,0.3").unwrap();
    drop(f);
    let after = std::fs::read(&path).unwrap();
    assert_eq!(&after[..before.len()], &before[..]);
    let e = read_energy_csv(&path).unwrap_err();
    assert!(matches!(e, OutputError::Parse { line: 5, .. }), "{e}");
    assert!(
        e.to_string().contains("expected 8 comma-separated fields"),
        "{e}"
    );

    // Wrong header and a bad number are reported with their line.
    std::fs::write(&path, "t,kinetic\n").unwrap();
    let e = read_energy_csv(&path).unwrap_err();
    assert!(e.to_string().contains("line 1: expected the header"), "{e}");
    std::fs::write(
        &path,
        format!("{ENERGY_HEADER}\n0,1,2,3,4,5,6,7\n0,1,x,3,4,5,6,7\n"),
    )
    .unwrap();
    let e = read_energy_csv(&path).unwrap_err();
    assert!(
        e.to_string()
            .contains("line 3: elastic: expected a number, got `x`"),
        "{e}"
    );
}

#[test]
fn final_state_round_trip() {
    let fabric = fabric();
    let mut state = fabric.initial.clone();
    for (i, x) in state.x.iter_mut().enumerate() {
        *x += Vector3::new(1.0 / 3.0, -1e-17 * i as f64, 12345.678 * i as f64);
    }
    state.u[5] += 1e-9;
    state.v[7] = -0.0;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("final_state.json");
    write_final_state(&path, &state, &fabric).unwrap();
    let back = read_final_state(&path).unwrap();
    assert_eq!(back.x.len(), 23);
    for i in 0..23 {
        assert_eq!(back.x[i], [state.x[i].x, state.x[i].y, state.x[i].z]);
    }
    assert_eq!(back.u, state.u);
    assert_eq!(back.v, state.v);
    // The file has exactly the three contract keys.
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["u", "v", "x"]);
    assert_eq!(dir_entries(dir.path()), ["final_state.json"]);

    // Non-finite values: null in the file, NaN when read back.
    state.x[2].y = f64::NAN;
    state.u[0] = f64::INFINITY;
    write_final_state(&path, &state, &fabric).unwrap();
    let back = read_final_state(&path).unwrap();
    assert!(back.x[2][1].is_nan() && back.u[0].is_nan());
    assert_eq!(back.x[2][0], state.x[2].x);

    // A state of the wrong size is refused and the file is kept.
    let good = std::fs::read(&path).unwrap();
    state.u.pop();
    let e = write_final_state(&path, &state, &fabric).unwrap_err();
    assert!(
        e.to_string()
            .contains("state has 22 entries in u, the fabric 23 nodes"),
        "{e}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), good);

    // Reader errors name the JSON path.
    std::fs::write(&path, r#"{"x": [[0, 0]], "u": [0], "v": [0]}"#).unwrap();
    let e = read_final_state(&path).unwrap_err();
    assert!(e.to_string().contains("x[0]: invalid length 2"), "{e}");
    std::fs::write(&path, r#"{"x": [[0, 0, 0]], "u": [], "v": [0]}"#).unwrap();
    let e = read_final_state(&path).unwrap_err();
    assert!(
        e.to_string().contains("expected x, u, v of equal length"),
        "{e}"
    );
}

#[test]
fn atomic_write_failure_keeps_old_file_and_leaves_no_temp() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("final_state.json");
    std::fs::write(&path, "old content").unwrap();
    // A writer that has written part of its output and then fails.
    let e = atomic_write(&path, |w| {
        w.write_all(&vec![b'x'; 200_000])?;
        Err(std::io::Error::other("disk on fire"))
    })
    .unwrap_err();
    assert!(
        e.to_string().contains("final_state.json: disk on fire"),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "old content");
    assert_eq!(dir_entries(dir.path()), ["final_state.json"]);

    // A failing serialiser inside write_final_state behaves the same way:
    // writing into a directory that does not exist fails before anything.
    let missing = dir.path().join("nope/final_state.json");
    let f = fabric();
    assert!(write_final_state(&missing, &f.initial, &f).is_err());
    assert_eq!(dir_entries(dir.path()), ["final_state.json"]);

    // Success replaces the content and leaves no temporary file.
    atomic_write(&path, |w| w.write_all(b"new")).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    assert_eq!(dir_entries(dir.path()), ["final_state.json"]);
}

#[test]
fn obj_frame_counts() {
    let fabric = fabric();
    let dir = tempfile::tempdir().unwrap();
    let path = frame_path(dir.path(), 42, "obj");
    assert_eq!(path, dir.path().join("frames/frame_000042.obj"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut state = fabric.initial.clone();
    state.x[4].z = 0.25;
    write_obj_frame(&path, &fabric, &state).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let v: Vec<Vec<f64>> = text
        .lines()
        .filter_map(|l| l.strip_prefix("v "))
        .map(|l| l.split(' ').map(|c| c.parse().unwrap()).collect())
        .collect();
    let l: Vec<Vec<usize>> = text
        .lines()
        .filter_map(|l| l.strip_prefix("l "))
        .map(|l| l.split(' ').map(|c| c.parse().unwrap()).collect())
        .collect();
    assert_eq!(v.len(), 3 + 4 * 5);
    assert_eq!(l.len(), 1 + 4 + 5);
    assert_eq!(v[4], vec![state.x[4].x, state.x[4].y, 0.25]);
    // Yarn polyline lengths: 3, then 4 warp yarns of 5, then 5 weft yarns of 4.
    let lens: Vec<usize> = l.iter().map(Vec::len).collect();
    assert_eq!(lens, [3, 5, 5, 5, 5, 4, 4, 4, 4, 4]);
    // 1-based indices, matching the yarns' node lists.
    for (line, yarn) in l.iter().zip(&fabric.yarns) {
        let expect: Vec<usize> = yarn.nodes.iter().map(|n| n + 1).collect();
        assert_eq!(*line, expect);
    }
    assert_eq!(
        dir_entries(&dir.path().join("frames")),
        ["frame_000042.obj"]
    );
}
