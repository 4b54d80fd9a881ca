//! `weft drape` end to end on the A-line skirt the project ships
//! (`data/patterns/a_line_skirt.json`, two trapezoid panels 65 cm wide at
//! the hem and 46 cm at the top, 35 cm tall, sewn at both sides) on the default mannequin, at a coarse 60 mm spacing and short
//! phases so it runs in CI: the DESIGN §8 outputs exist, the seams close
//! during sewing, nothing is non-finite and no node is inside the body by
//! more than a yarn radius. A bad pattern fails naming the file and place.

mod common;

use common::{drape_ok, repo};
use std::process::Command;

#[test]
fn drape_a_line_skirt_writes_outputs_and_closes_seams() {
    let out = tempfile::tempdir().unwrap();
    let skirt = repo().join("data/patterns/a_line_skirt.json");
    let args = [
        "--spacing",
        "60",
        "--sew-duration",
        "0.4",
        "--duration",
        "0.05",
    ];
    let summary = drape_ok(
        "skirt",
        args.iter().map(|a| a.as_ref()).chain([skirt.as_os_str()]),
        out.path(),
    );
    eprintln!("{summary:#}");
    for key in [
        "panels",
        "yarns",
        "crossings",
        "seams",
        "steps",
        "wall_time_s",
        "max_seam_gap_m",
        "max_penetration_m",
        "finite",
    ] {
        assert!(summary.get(key).is_some(), "summary.json lacks {key}");
    }
    assert_eq!(summary["panels"], 2);
    assert_eq!(summary["seams"], 2);
    assert_eq!(summary["finite"], true);
    // The side seams start 0.4 m apart (the panels hang at z = ±0.2 m);
    // sewing brings them within one yarn spacing.
    let gap = summary["max_seam_gap_after_sewing_m"].as_f64().unwrap();
    assert!(gap < 0.06, "seam gap after sewing {gap} m");
    // Cotton preset yarn radius 0.3 mm.
    let pen = summary["max_penetration_m"].as_f64().unwrap();
    assert!(pen <= 0.3e-3, "penetration {pen} m");
    let fs: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("final_state.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        fs["x"].as_array().unwrap().len() as u64,
        summary["nodes"].as_u64().unwrap()
    );
    for f in [
        "preview.png",
        "yarns.bcc",
        "yarns.txt",
        "yarns.obj",
        "yarns_tubes.obj",
        "yarns.usda",
    ] {
        let meta = std::fs::metadata(out.path().join(f)).unwrap();
        assert!(meta.len() > 100, "{f} is {} bytes", meta.len());
    }
}

#[test]
fn drape_bad_pattern_names_file_and_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.json");
    std::fs::write(
        &path,
        r#"{"pattern": {"panels": {"a": {"translation": [0,0,0], "rotation": [0,0,0],
            "vertices": [[0,0],[10,0],[10,10]], "edges": [{"endpoints": [0, 1]}, {"endpoints": [1, 2]}]}},
            "stitches": []}, "properties": {"units_in_meter": 100}}"#,
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["drape", "--quiet"])
        .arg(&path)
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert!(!output.status.success());
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("broken.json"), "{err}");
    assert!(err.contains("pattern.panels.a"), "{err}");
}

#[test]
fn drape_writes_frames_and_holds_attachment_edges() {
    let out = tempfile::tempdir().unwrap();
    let skirt = repo().join("data/patterns/a_line_skirt.json");
    let args = [
        "--spacing",
        "60",
        "--formats",
        "obj",
        "--sew-duration",
        "0.4",
        "--duration",
        "0.05",
        "--frame-dt",
        "0.1",
        "--attach",
        "lower_interface",
    ];
    let summary = drape_ok(
        "skirt with frames",
        args.iter().map(|a| a.as_ref()).chain([skirt.as_os_str()]),
        out.path(),
    );
    // Frames: the placed garment, 4 of sewing (0.1 s apart), 1 of draping.
    assert_eq!(summary["frames"], 6);
    let frames = out.path().join("frames");
    let count = |name: &str| {
        std::fs::read_to_string(frames.join(name))
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("v "))
            .count()
    };
    let first = std::fs::read_to_string(frames.join("frame_0000.obj")).unwrap();
    let last = std::fs::read_to_string(frames.join("frame_0005.obj")).unwrap();
    assert!(count("frame_0000.obj") > 100);
    assert_eq!(count("frame_0000.obj"), count("frame_0005.obj"));
    assert_ne!(
        first, last,
        "the garment moved between the first and last frame"
    );
    assert!(!frames.join("frame_0006.obj").exists());
    // The waistband's yarn ends (both panels) were held while sewing.
    assert!(summary["attached_nodes"].as_u64().unwrap() >= 10);
    assert!(summary["max_seam_gap_after_sewing_m"].as_f64().unwrap() < 0.06);
}

#[test]
fn drape_unknown_attachment_label_is_an_error() {
    let out = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["drape", "--quiet", "--spacing", "60", "--attach", "collar"])
        .arg(repo().join("data/patterns/a_line_skirt.json"))
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("a_line_skirt.json"), "{err}");
    assert!(err.contains("\"collar\""), "{err}");
    assert!(err.contains("lower_interface"), "{err}");
}
