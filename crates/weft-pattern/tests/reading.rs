//! Reading the real pattern files in `../shared/data/patterns` (GarmentCode
//! and Garment-Pattern-Generator): counts, lengths and areas in metres,
//! curves checked against an independent evaluation of the file's numbers.

mod common;

use serde_json::Value;
use std::path::PathBuf;
use weft_pattern::geometry::{Outline, edge_eval, edge_length};
use weft_pattern::{Curve, Pattern};

fn patterns_dir() -> Option<PathBuf> {
    common::shared_data().map(|d| d.join("patterns"))
}

fn raw(dir: &std::path::Path, name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
}

#[test]
fn every_real_pattern_reads_with_its_counts() {
    let Some(dir) = patterns_dir() else { return };
    let expected = [
        ("gc_dress_pencil.json", 6, 23, 100.0),
        ("gc_hoody_mean.json", 6, 12, 100.0),
        ("gc_shirt_mean.json", 8, 18, 100.0),
        ("gpg_skirt_2_panels.json", 2, 4, 100.0),
        ("gpg_tee.json", 6, 12, 300.0),
    ];
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    assert_eq!(names, expected.iter().map(|e| e.0).collect::<Vec<_>>());
    for (name, panels, stitches, units) in expected {
        let p = Pattern::from_file(dir.join(name)).unwrap();
        assert_eq!(p.panels.len(), panels, "{name}");
        assert_eq!(p.stitches.len(), stitches, "{name}");
        assert_eq!(p.units_in_meter, units, "{name}");
        let r = raw(&dir, name);
        for panel in &p.panels {
            let edges = r["pattern"]["panels"][&panel.name]["edges"]
                .as_array()
                .unwrap();
            assert_eq!(panel.edges.len(), edges.len(), "{name} {}", panel.name);
        }
    }
}

#[test]
fn straight_edge_length_and_panel_order() {
    let Some(dir) = patterns_dir() else { return };
    let p = Pattern::from_file(dir.join("gc_shirt_mean.json")).unwrap();
    // panel_order of the file.
    assert_eq!(p.panels[0].name, "right_sleeve_b");
    assert_eq!(p.panels[7].name, "left_sleeve_f");
    let b = &p.panels[p.panel_index("left_btorso").unwrap()];
    assert_eq!(b.edges[0].curve, Curve::Line);
    // Vertex 1 is (0, 40.58043003350011) cm.
    assert!((edge_length(b, 0) - 0.4058043003350011).abs() < 1e-15);
    assert!((b.translation[1] - 0.9466024668570651).abs() < 1e-15);
    assert_eq!(b.translation[2], -0.2);
}

/// Independent evaluation of a relative Bézier edge from the raw JSON
/// numbers: `P = start + s (end - start) + t perp`.
fn bezier_from_raw(verts: &[[f64; 2]], edge: &Value, units: f64) -> Vec<[f64; 2]> {
    let ep = edge["endpoints"].as_array().unwrap();
    let s = verts[ep[0].as_u64().unwrap() as usize];
    let e = verts[ep[1].as_u64().unwrap() as usize];
    let (s, e) = ([s[0] / units, s[1] / units], [e[0] / units, e[1] / units]);
    let d = [e[0] - s[0], e[1] - s[1]];
    let rel = |c: &Value| {
        let (a, b) = (c[0].as_f64().unwrap(), c[1].as_f64().unwrap());
        [s[0] + a * d[0] - b * d[1], s[1] + a * d[1] + b * d[0]]
    };
    let ctrl: Vec<[f64; 2]> = match &edge["curvature"] {
        Value::Array(_) => vec![rel(&edge["curvature"])],
        Value::Object(o) => o["params"].as_array().unwrap().iter().map(rel).collect(),
        _ => vec![],
    };
    let mut pts = vec![s];
    pts.extend(ctrl);
    pts.push(e);
    let n = 20000;
    (0..=n)
        .map(|k| {
            // de Casteljau.
            let t = k as f64 / n as f64;
            let mut q = pts.clone();
            while q.len() > 1 {
                q = q
                    .windows(2)
                    .map(|w| {
                        [
                            w[0][0] + t * (w[1][0] - w[0][0]),
                            w[0][1] + t * (w[1][1] - w[0][1]),
                        ]
                    })
                    .collect();
            }
            q[0]
        })
        .collect()
}

fn polyline_length(p: &[[f64; 2]]) -> f64 {
    p.windows(2)
        .map(|w| (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1]))
        .sum()
}

#[test]
fn bezier_edges_match_the_file_numbers() {
    let Some(dir) = patterns_dir() else { return };
    let mut checked = 0;
    for name in [
        "gc_shirt_mean.json",
        "gc_dress_pencil.json",
        "gpg_tee.json",
        "gpg_skirt_2_panels.json",
    ] {
        let p = Pattern::from_file(dir.join(name)).unwrap();
        let r = raw(&dir, name);
        for panel in &p.panels {
            let rp = &r["pattern"]["panels"][&panel.name];
            let verts: Vec<[f64; 2]> = rp["vertices"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| [v[0].as_f64().unwrap(), v[1].as_f64().unwrap()])
                .collect();
            for (k, e) in rp["edges"].as_array().unwrap().iter().enumerate() {
                if e.get("curvature").is_none() {
                    continue;
                }
                let pts = bezier_from_raw(&verts, e, p.units_in_meter);
                let want = polyline_length(&pts);
                let got = edge_length(panel, k);
                assert!(
                    (got - want).abs() < 1e-7,
                    "{name} {} edge {k}: {got} vs {want}",
                    panel.name
                );
                let mid = edge_eval(panel, k, 0.5);
                let m = pts[pts.len() / 2];
                assert!(
                    (mid[0] - m[0]).hypot(mid[1] - m[1]) < 1e-12,
                    "{name} {} edge {k}",
                    panel.name
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 40, "{checked} curved edges checked");
}

#[test]
fn circle_arcs_follow_garmentcode() {
    let Some(dir) = patterns_dir() else { return };
    let p = Pattern::from_file(dir.join("gc_hoody_mean.json")).unwrap();
    // left_ftorso edge 4: from (10.8188, 49.963) to (0, 34.3145) cm, radius
    // 11.564 cm, small arc, right = 0: the neckline scoops into the panel
    // (to the left of the edge vector), centre at (0, 34.3145 + r).
    let f = &p.panels[p.panel_index("left_ftorso").unwrap()];
    let Curve::Arc {
        radius,
        large_arc,
        right,
    } = f.edges[4].curve
    else {
        panic!("expected an arc")
    };
    assert!(!large_arc && !right);
    assert!((radius - 0.11564126734773824).abs() < 1e-15);
    let (s, e) = f.edge_ends(4);
    let chord = (e[0] - s[0]).hypot(e[1] - s[1]);
    let centre = [0.0, 0.3431450269441045 + radius];
    for t in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let q = edge_eval(f, 4, t);
        let r = (q[0] - centre[0]).hypot(q[1] - centre[1]);
        assert!((r - radius).abs() < 1e-12, "t = {t}: {r}");
    }
    let mid = edge_eval(f, 4, 0.5);
    let m = [0.5 * (s[0] + e[0]), 0.5 * (s[1] + e[1])];
    let sag = (mid[0] - m[0]).hypot(mid[1] - m[1]);
    assert!((sag - (radius - (radius * radius - 0.25 * chord * chord).sqrt())).abs() < 1e-12);
    // Left of the edge vector: cross(edge, mid - start) > 0.
    let cross = (e[0] - s[0]) * (mid[1] - s[1]) - (e[1] - s[1]) * (mid[0] - s[0]);
    assert!(cross > 0.0);
    // The arc's length is r times its angle 2 asin(L / 2r).
    let angle = 2.0 * (0.5 * chord / radius).asin();
    assert!((edge_length(f, 4) - radius * angle).abs() < 1e-12);
    // right = 1 (left_btorso edge 1) bulges to the right.
    let b = &p.panels[p.panel_index("left_btorso").unwrap()];
    let (s, e) = b.edge_ends(1);
    let mid = edge_eval(b, 1, 0.5);
    let cross = (e[0] - s[0]) * (mid[1] - s[1]) - (e[1] - s[1]) * (mid[0] - s[0]);
    assert!(cross < 0.0);
}

/// Shoelace area of the exact curves sampled densely (m²).
fn sampled_area(panel: &weft_pattern::Panel) -> f64 {
    let mut pts = vec![];
    for k in 0..panel.edges.len() {
        for i in 0..2000 {
            pts.push(edge_eval(panel, k, i as f64 / 2000.0));
        }
    }
    let n = pts.len();
    (0..n)
        .map(|i| {
            let (a, b) = (pts[i], pts[(i + 1) % n]);
            0.5 * (a[0] * b[1] - b[0] * a[1])
        })
        .sum()
}

#[test]
fn panel_areas_in_square_metres() {
    let Some(dir) = patterns_dir() else { return };
    // gpg_skirt_2_panels front: a trapezoid-like panel of 0.342 m² (both
    // panels equal); gc_shirt_mean left_ftorso: 0.100 m²; the back panels
    // run clockwise (negative area).
    let cases = [
        ("gpg_skirt_2_panels.json", "front", 0.3418),
        ("gpg_skirt_2_panels.json", "back", 0.3418),
        ("gc_shirt_mean.json", "left_ftorso", 0.1004),
        ("gc_shirt_mean.json", "right_ftorso", 0.1004),
        ("gc_shirt_mean.json", "left_btorso", -0.1009),
        ("gpg_tee.json", "front", 0.2443),
        ("gc_hoody_mean.json", "left_hood", 0.0884),
    ];
    for (file, panel, area) in cases {
        let p = Pattern::from_file(dir.join(file)).unwrap();
        let panel = &p.panels[p.panel_index(panel).unwrap()];
        let exact = sampled_area(panel);
        let outline = Outline::new(panel, 2e-4);
        let flat = outline.signed_area();
        // Flattening moves the outline by at most the tolerance (0.2 mm).
        assert!(
            (flat - exact).abs() < 2e-4 * outline.length,
            "{file} {}: {flat} vs {exact}",
            panel.name
        );
        assert!(
            (exact - area).abs() < 1e-4,
            "{file} {}: {exact}",
            panel.name
        );
    }
}

#[test]
fn placement_uses_rz_ry_rx_in_degrees() {
    let Some(dir) = patterns_dir() else { return };
    let p = Pattern::from_file(dir.join("gc_hoody_mean.json")).unwrap();
    // left_hood: rotation (0, 90, 0): local x goes to world -z.
    let h = &p.panels[p.panel_index("left_hood").unwrap()];
    let d = h.place([0.1, 0.0]) - h.place([0.0, 0.0]);
    assert!(
        (d - nalgebra::Vector3::new(0.0, 0.0, -0.1)).norm() < 1e-15,
        "{d}"
    );
    // gpg skirt back: rotation (180, 0, 180) mirrors x and faces -z.
    let p = Pattern::from_file(dir.join("gpg_skirt_2_panels.json")).unwrap();
    let b = &p.panels[p.panel_index("back").unwrap()];
    let d = b.place([0.1, 0.2]) - b.place([0.0, 0.0]);
    assert!(
        (d - nalgebra::Vector3::new(-0.1, 0.2, 0.0)).norm() < 1e-12,
        "{d}"
    );
    // The order matters: Rz Ry Rx maps local y to world x for (90, 90, 0),
    // Rx Ry Rz would map it to world z.
    let mut q = b.clone();
    q.rotation_deg = [90.0, 90.0, 0.0];
    q.translation = [0.0; 3];
    let y = q.place([0.0, 1.0]);
    assert!(
        (y - nalgebra::Vector3::new(1.0, 0.0, 0.0)).norm() < 1e-12,
        "{y}"
    );
}

#[test]
fn edge_and_panel_labels() {
    let Some(dir) = patterns_dir() else { return };
    let p = Pattern::from_file(dir.join("gc_dress_pencil.json")).unwrap();
    let back = &p.panels[p.panel_index("skirt_back").unwrap()];
    assert_eq!(back.label.as_deref(), Some("leg"));
    let labelled: Vec<usize> = (0..back.edges.len())
        .filter(|&k| back.edges[k].label.as_deref() == Some("lower_interface"))
        .collect();
    assert_eq!(labelled, vec![3, 6, 9, 10, 13, 16]);
    let total: usize = p
        .panels
        .iter()
        .flat_map(|q| &q.edges)
        .filter(|e| e.label.is_some())
        .count();
    assert_eq!(total, 9);
}

/// A one-panel pattern: a 30 x 20 unit rectangle from (10, 5) whose top
/// edge (vertex 2 -> 3) is a quadratic given as `curvature`.
fn props_pattern(props: &str, curvature: &str) -> Pattern {
    let text = format!(
        r#"{{"properties": {props},
            "pattern": {{"panels": {{"p": {{"translation": [1, 2, 3], "rotation": [0, 0, 0],
              "vertices": [[10, 5], [40, 5], [40, 25], [10, 25]],
              "edges": [{{"endpoints": [0, 1]}}, {{"endpoints": [1, 2]}},
                        {{"endpoints": [2, 3], "curvature": {curvature}}}, {{"endpoints": [3, 0]}}]}}}},
            "stitches": []}}}}"#
    );
    Pattern::from_str(&text, "inline.json").unwrap()
}

#[test]
fn units_absolute_curvature_and_translation_normalisation() {
    // Relative [0.5, 0.25] on the edge (40,25) -> (10,25): the point half way,
    // a quarter of the edge length (30) to the left of (-30, 0), i.e. down:
    // (25, 25 - 7.5) = (25, 17.5).
    let rel = props_pattern(r#"{"units_in_meter": 100}"#, "[0.5, 0.25]");
    let Curve::Quadratic { control } = rel.panels[0].edges[2].curve else {
        panic!()
    };
    assert!((control[0] - 0.25).abs() < 1e-15 && (control[1] - 0.175).abs() < 1e-15);
    let abs = props_pattern(
        r#"{"units_in_meter": 100, "curvature_coords": "absolute"}"#,
        r#"{"type": "quadratic", "params": [[25, 17.5]]}"#,
    );
    let Curve::Quadratic { control: c2 } = abs.panels[0].edges[2].curve else {
        panic!()
    };
    assert!((c2[0] - control[0]).abs() < 1e-15 && (c2[1] - control[1]).abs() < 1e-15);
    // units_in_meter 300: a 30-unit edge is 0.1 m; translation scaled too.
    let p300 = props_pattern(r#"{"units_in_meter": 300}"#, "[0.5, 0.25]");
    assert!((edge_length(&p300.panels[0], 0) - 0.1).abs() < 1e-15);
    assert!((p300.panels[0].translation[2] - 0.01).abs() < 1e-15);
    // normalize_panel_translation: vertices centred on their mean, the
    // world positions unchanged (no rotation).
    let norm = props_pattern(
        r#"{"units_in_meter": 100, "normalize_panel_translation": true}"#,
        "[0.5, 0.25]",
    );
    let (a, b) = (&rel.panels[0], &norm.panels[0]);
    assert!((b.vertices[0][0] + 0.15).abs() < 1e-15 && (b.vertices[0][1] + 0.10).abs() < 1e-15);
    for k in 0..4 {
        assert!((a.place(a.vertices[k]) - b.place(b.vertices[k])).norm() < 1e-15);
    }
    for t in [0.3, 0.5] {
        let (pa, pb) = (edge_eval(a, 2, t), edge_eval(b, 2, t));
        assert!((a.place(pa) - b.place(pb)).norm() < 1e-15);
    }
}
