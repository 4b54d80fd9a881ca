//! Bad pattern files give errors that name the file, the JSON path and what
//! was expected: one test per error, on small files in `tests/data/`.

use weft_pattern::{Pattern, PatternError};

fn data(name: &str) -> String {
    format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn read(name: &str) -> Result<Pattern, PatternError> {
    Pattern::from_file(data(name))
}

fn err(name: &str) -> (PatternError, String) {
    let e = read(name).expect_err("a bad file must fail");
    let msg = e.to_string();
    assert!(msg.contains(name), "message names the file: {msg}");
    (e, msg)
}

#[test]
fn the_base_file_reads() {
    let p = read("two_squares.json").unwrap();
    assert_eq!(p.panels.len(), 2);
    assert_eq!(p.stitches.len(), 2);
    assert!(!p.stitches[0].right_wrong);
    assert!(p.stitches[1].right_wrong);
}

#[test]
fn open_edge_loop() {
    let (e, msg) = err("bad_open_loop.json");
    assert!(
        matches!(&e, PatternError::OpenLoop { path, expected: 2, found: 0, .. }
            if path == "pattern.panels.front.edges[2]"),
        "{e:?}"
    );
    assert!(
        msg.contains("expected the edge to start at vertex 2"),
        "{msg}"
    );
    assert!(msg.contains("pattern.panels.front.edges[2]"), "{msg}");
}

#[test]
fn stitch_names_a_missing_panel() {
    let (e, msg) = err("bad_stitch_missing_panel.json");
    assert!(
        matches!(&e, PatternError::StitchMissingPanel { path, panel, .. }
            if path == "pattern.stitches[1][1]" && panel == "sleeve"),
        "{e:?}"
    );
    assert!(msg.contains("known: back, front"), "{msg}");
}

#[test]
fn stitch_names_a_missing_edge() {
    let (e, msg) = err("bad_stitch_missing_edge.json");
    assert!(
        matches!(&e, PatternError::StitchMissingEdge { path, edge: 7, count: 4, .. }
            if path == "pattern.stitches[0][1]"),
        "{e:?}"
    );
    assert!(msg.contains("expected 0..4"), "{msg}");
}

#[test]
fn edge_stitched_twice() {
    let (e, msg) = err("bad_edge_stitched_twice.json");
    assert!(
        matches!(&e, PatternError::EdgeStitchedTwice { path, edge: 1, first, .. }
            if path == "pattern.stitches[2][1]" && first == "pattern.stitches[0][0]"),
        "{e:?}"
    );
    assert!(msg.contains("at most one stitch"), "{msg}");
}

#[test]
fn self_intersecting_panel() {
    let (e, msg) = err("bad_self_intersecting.json");
    // The bow tie's edges 1 and 3 cross at the centre (5 cm, 5 cm).
    match &e {
        PatternError::SelfIntersecting {
            path,
            first,
            second,
            x,
            y,
            ..
        } => {
            assert_eq!(path, "pattern.panels.back");
            assert_eq!((*first, *second), (1, 3));
            assert!(
                (x - 0.05).abs() < 1e-12 && (y - 0.05).abs() < 1e-12,
                "{x} {y}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(msg.contains("expected a simple closed outline"), "{msg}");
}

#[test]
fn zero_length_edge() {
    let (e, msg) = err("bad_zero_length_edge.json");
    assert!(
        matches!(&e, PatternError::ZeroLengthEdge { path, start: 1, end: 2, length, .. }
            if path == "pattern.panels.front.edges[1]" && *length == 0.0),
        "{e:?}"
    );
    assert!(msg.contains("expected distinct endpoints"), "{msg}");
}

#[test]
fn malformed_json() {
    let (e, msg) = err("bad_malformed.json");
    assert!(
        matches!(&e, PatternError::Json { line, .. } if *line > 1),
        "{e:?}"
    );
    assert!(msg.contains("malformed JSON"), "{msg}");
}

#[test]
fn unknown_curvature_type() {
    let (e, msg) = err("bad_unknown_curvature.json");
    assert!(
        matches!(&e, PatternError::UnknownCurvature { path, found, .. }
            if path == "pattern.panels.back.edges[2].curvature.type" && found == "spline"),
        "{e:?}"
    );
    assert!(
        msg.contains("expected \"quadratic\", \"cubic\" or \"circle\""),
        "{msg}"
    );
}

#[test]
fn missing_and_mistyped_values() {
    let text = r#"{"pattern": {"panels": {"a": {"edges": []}}, "stitches": []}}"#;
    let e = Pattern::from_str(text, "inline.json").unwrap_err();
    assert_eq!(
        e.to_string(),
        "inline.json: pattern.panels.a.vertices: expected a value (missing key), found nothing"
    );
    let text = r#"{"pattern": {"panels": {"a": {"vertices": [[0, 0], [1, "x"]], "edges": []}}, "stitches": []}}"#;
    let e = Pattern::from_str(text, "inline.json").unwrap_err();
    assert_eq!(
        e.to_string(),
        "inline.json: pattern.panels.a.vertices[1][1]: expected a finite number, found the string \"x\""
    );
    let text = r#"{"pattern": {"panels": {"a": {"vertices": [[0, 0], [1, 0], [0, 1]],
        "edges": [{"endpoints": [0, 1]}, {"endpoints": [1, 2], "curvature": {"type": "circle", "params": [0.1, 0, 1]}},
                  {"endpoints": [2, 0]}]}}, "stitches": []}}"#;
    let e = Pattern::from_str(text, "inline.json").unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with("inline.json: pattern.panels.a.edges[1].curvature.params[0]: expected a radius of at least half the chord"),
        "{msg}"
    );
    let e = Pattern::from_file(data("no_such_file.json")).unwrap_err();
    assert!(matches!(e, PatternError::Io { .. }), "{e:?}");
}

/// A panel stretched to 1e12 (cm) is refused on reading, naming the panel
/// and its size (it used to be woven for minutes without an error), and so
/// is a curved edge bulging 1e9 m out.
#[test]
fn a_huge_panel_is_refused_at_once() {
    let text = std::fs::read_to_string(data("two_squares.json")).unwrap();
    let base: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut v = base.clone();
    v["pattern"]["panels"]["front"]["vertices"][1] = serde_json::json!([1e12, 0]);
    v["pattern"]["panels"]["front"]["vertices"][2] = serde_json::json!([1e12, 10]);
    let e = Pattern::from_str(&v.to_string(), "huge.json").expect_err("a 1e10 m panel");
    assert!(
        matches!(&e, PatternError::PanelTooLarge { path, size_m, limit_m, .. }
            if path == "pattern.panels.front" && (*size_m - 1e10).abs() < 1e6 && *limit_m == 10.0),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("huge.json") && msg.contains("1.000e10 m"),
        "{msg}"
    );

    let mut v = base;
    v["pattern"]["panels"]["front"]["edges"][0]["curvature"] =
        serde_json::json!({"type": "quadratic", "params": [[0.5, 1e11]]});
    let start = std::time::Instant::now();
    let e = Pattern::from_str(&v.to_string(), "bulge.json").expect_err("a 1e9 m bulge");
    assert!(start.elapsed().as_secs_f64() < 5.0);
    assert!(
        matches!(&e, PatternError::PanelTooLarge { path, size_m, .. }
            if path == "pattern.panels.front" && *size_m > 1e8),
        "{e:?}"
    );
}

/// A pattern built or edited in code skips the reader's checks; weaving
/// refuses a panel too large to weave, naming it.
#[test]
fn weaving_refuses_a_huge_panel_made_in_code() {
    let mut p = read("two_squares.json").unwrap();
    p.panels[0].vertices[1][0] = 1e10;
    p.panels[0].vertices[2][0] = 1e10;
    let want = format!("pattern.panels.{}", p.panels[0].name);
    let e = weft_pattern::weave_garment(&p, &weft_pattern::WeaveOptions::new(0.04))
        .expect_err("a 1e10 m panel");
    assert!(
        matches!(&e, PatternError::PanelTooLarge { path, .. } if *path == want),
        "{e:?}"
    );
}

/// Found by the fuzz harness (tests/fuzz_inputs.rs): a curve control point
/// or a vertex at ±1e308 made the curve flattener overflow an allocation
/// (a panic); the size bound now refuses it before any curve is measured.
#[test]
fn a_control_point_at_1e308_is_refused_not_a_panic() {
    let text = std::fs::read_to_string(data("two_squares.json")).unwrap();
    let base: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut curved = base.clone();
    curved["pattern"]["panels"]["front"]["edges"][0]["curvature"] =
        serde_json::json!({"type": "cubic", "params": [[0.3, -1e308], [0.6, 0.1]]});
    let mut vertex = base;
    vertex["pattern"]["panels"]["front"]["vertices"][0] = serde_json::json!([-1e308, 0]);
    for (name, v) in [("curved.json", curved), ("vertex.json", vertex)] {
        let e = Pattern::from_str(&v.to_string(), name).expect_err(name);
        assert!(
            matches!(&e, PatternError::PanelTooLarge { path, .. } if path == "pattern.panels.front"),
            "{name}: {e:?}"
        );
        assert!(e.to_string().contains(name));
    }
}

/// Found by the fuzz harness: a `circle` edge of radius 1e306 m made the
/// curve flattener loop. A minor arc of more than 1e4 chords reads as the
/// straight edge it is (sagitta under 1.3e-5 of the chord).
#[test]
fn a_circle_edge_of_huge_radius_reads_as_a_line() {
    let text = std::fs::read_to_string(data("two_squares.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["pattern"]["panels"]["front"]["edges"][0]["curvature"] =
        serde_json::json!({"type": "circle", "params": [1e308, 0, 1]});
    let p = Pattern::from_str(&v.to_string(), "huge_radius.json").unwrap();
    let front = p.panels.iter().find(|q| q.name == "front").unwrap();
    assert_eq!(front.edges[0].curve, weft_pattern::Curve::Line);
    let g = weft_pattern::weave_garment(&p, &weft_pattern::WeaveOptions::new(0.02)).unwrap();
    assert!(g.fabric.node_count() > 0);
}
