//! Weaving panels: a rectangle gives exactly the woven patch of weft-core,
//! concave panels give several pieces per grid line, yarn ends lie on the
//! outline, segments are at rest in the placed panel.

mod common;

use std::path::PathBuf;
use weft_core::{FabricBuilder, Material, WovenPatchSpec};
use weft_pattern::geometry::Outline;
use weft_pattern::weave::weave_outline;
use weft_pattern::{Pattern, VerticalOffset, WeaveOptions, weave_garment};

/// A one-panel pattern with the given vertices (cm) and straight edges.
fn polygon_pattern(vertices: &[[f64; 2]]) -> Pattern {
    sewn_polygon_pattern(vertices, &[])
}

/// A one-panel pattern with the given vertices (cm) and straight edges, and
/// stitches between pairs of its own edges (edge `k` runs from vertex `k`).
fn sewn_polygon_pattern(vertices: &[[f64; 2]], stitches: &[[usize; 2]]) -> Pattern {
    let edges: Vec<String> = (0..vertices.len())
        .map(|i| format!("{{\"endpoints\": [{i}, {}]}}", (i + 1) % vertices.len()))
        .collect();
    let verts: Vec<String> = vertices
        .iter()
        .map(|v| format!("[{}, {}]", v[0], v[1]))
        .collect();
    let stitches: Vec<String> = stitches
        .iter()
        .map(|[a, b]| format!(r#"[{{"panel": "p", "edge": {a}}}, {{"panel": "p", "edge": {b}}}]"#))
        .collect();
    let text = format!(
        r#"{{"properties": {{"units_in_meter": 100}},
            "pattern": {{"panels": {{"p": {{"translation": [0, 0, 0], "rotation": [0, 0, 0],
            "vertices": [{}], "edges": [{}]}}}}, "stitches": [{}]}}}}"#,
        verts.join(", "),
        edges.join(", "),
        stitches.join(", ")
    );
    Pattern::from_str(&text, "inline.json").unwrap()
}

fn opts(spacing: f64) -> WeaveOptions {
    let mut o = WeaveOptions::new(spacing);
    o.vertical_offset = VerticalOffset::None;
    o
}

#[test]
fn rectangle_panel_equals_the_woven_patch() {
    // 5 cm x 8 cm at 1 cm: 6 warp yarns (along local y) of 9 nodes.
    let p = polygon_pattern(&[[0.0, 0.0], [5.0, 0.0], [5.0, 8.0], [0.0, 8.0]]);
    let g = weave_garment(&p, &opts(0.01)).unwrap();
    let mut b = FabricBuilder::new(vec![Material::example_cotton()]).unwrap();
    let mut spec = WovenPatchSpec::new("cotton", [0.08, 0.05], [6, 9], [0.025, 0.04, 0.0]);
    spec.normal = [0.0, 0.0, 1.0];
    spec.warp_direction = [0.0, 1.0, 0.0];
    b.add_woven_patch(&spec).unwrap();
    let patch = b.build().unwrap();
    let (f, q) = (&g.fabric, &patch);
    assert_eq!(f.node_count(), 54);
    assert_eq!(f.node_count(), q.node_count());
    assert_eq!(f.yarns.len(), q.yarns.len());
    assert_eq!(f.elements.segments.len(), q.elements.segments.len());
    assert_eq!(f.elements.bending.len(), q.elements.bending.len());
    assert_eq!(f.elements.shear.len(), q.elements.shear.len());
    assert_eq!(f.elements.anchors.len(), q.elements.anchors.len());
    assert_eq!(f.free_dof_count(), q.free_dof_count());
    let r = &g.panels[0];
    assert_eq!(
        (r.warp_yarns, r.weft_yarns, r.crossings, r.ends),
        (6, 9, 54, 26)
    );
    // Same node positions, same total mass.
    let key = |x: &nalgebra::Vector3<f64>| ((x.x * 1e6).round() as i64, (x.y * 1e6).round() as i64);
    let mut a: Vec<_> = f.initial.x.iter().map(key).collect();
    let mut c: Vec<_> = q.initial.x.iter().map(key).collect();
    a.sort_unstable();
    c.sort_unstable();
    assert_eq!(a, c);
    let (ma, mc) = (f.total_mass(&f.initial), q.total_mass(&q.initial));
    assert!((ma - mc).abs() < 1e-15 * mc, "{ma} vs {mc}");
}

#[test]
fn rectangle_off_the_grid_ends_between_crossings() {
    // 5.5 cm wide: the weft yarns end on the right edge half a spacing past
    // the last warp yarn, at yarn-end nodes that are not crossings.
    let p = polygon_pattern(&[[0.0, 0.0], [5.5, 0.0], [5.5, 8.0], [0.0, 8.0]]);
    let g = weave_garment(&p, &opts(0.01)).unwrap();
    let r = &g.panels[0];
    assert_eq!((r.warp_yarns, r.weft_yarns, r.crossings), (6, 9, 54));
    assert_eq!(r.nodes, 54 + 9);
    // Outline nodes: 9 on each side edge, 5 more on the bottom and the top.
    assert_eq!(r.ends, 9 + 9 + 5 + 5);
    assert!((r.shortest_segment - 0.005).abs() < 1e-12);
    // The right edge (edge 1) carries 9 weft ends, at heights 0..8 cm.
    assert_eq!(r.edges[1].end_nodes.len(), 9);
    for (k, &n) in r.edges[1].end_nodes.iter().enumerate() {
        let x = g.fabric.initial.x[n];
        assert!((x.x - 0.055).abs() < 1e-15 && (x.y - 0.01 * k as f64).abs() < 1e-12);
        assert_eq!(g.fabric.crimp[n], 0);
        assert_eq!(g.fabric.node_yarns[n][0], None);
    }
}

#[test]
fn grain_override_turns_the_grid() {
    let p = polygon_pattern(&[[0.0, 0.0], [5.0, 0.0], [5.0, 8.0], [0.0, 8.0]]);
    let mut o = opts(0.01);
    o.grain_deg.insert("p".into(), 90.0);
    let g = weave_garment(&p, &o).unwrap();
    // Warp along local -x now: 9 warp yarns of 6 nodes.
    let r = &g.panels[0];
    assert_eq!((r.warp_yarns, r.weft_yarns, r.crossings), (9, 6, 54));
    let warp0 = &g.fabric.yarns[0];
    let (a, b) = (
        g.fabric.initial.x[warp0.nodes[0]],
        g.fabric.initial.x[warp0.nodes[1]],
    );
    assert!(((b - a).normalize() - nalgebra::Vector3::new(-1.0, 0.0, 0.0)).norm() < 1e-12);
    o.grain_deg.insert("nope".into(), 0.0);
    let e = weave_garment(&p, &o).unwrap_err().to_string();
    assert!(e.contains("grain_deg") && e.contains("nope"), "{e}");
}

#[test]
fn concave_panel_gives_several_pieces_per_line() {
    // A U: 10 x 10 cm with a 4 cm wide notch from y = 4 cm to the top.
    let p = polygon_pattern(&[
        [0.0, 0.0],
        [10.0, 0.0],
        [10.0, 10.0],
        [7.0, 10.0],
        [7.0, 4.0],
        [3.0, 4.0],
        [3.0, 10.0],
        [0.0, 10.0],
    ]);
    let o = Outline::new(&p.panels[0], 2e-4);
    let w = weave_outline(&o, [0.01, 0.01], 0.0, 0.2, &[]);
    // Weft lines y = 0..4 cm: one piece; y = 5..10 cm: two (left and right prong).
    let pieces_on = |j: i64| w.weft_line.iter().filter(|&&l| l == j).count();
    for j in 0..=4 {
        assert_eq!(pieces_on(j), 1, "line {j}");
    }
    for j in 5..=10 {
        assert_eq!(pieces_on(j), 2, "line {j}");
    }
    assert_eq!(w.weft.len(), 5 + 12);
    // Warp lines x = 4..6 cm stop at the notch's bottom (y = 4 cm); x = 3 and
    // 7 cm run up the notch's sides (on the outline) to the top.
    assert_eq!(w.warp.len(), 11);
    for (piece, &i) in w.warp.iter().zip(&w.warp_line) {
        let top = w.nodes[*piece.last().unwrap()][1];
        let want = if (4..=6).contains(&i) { 0.04 } else { 0.10 };
        assert!((top - want).abs() < 1e-12, "warp line {i}: top {top}");
    }
    // Every piece starts and ends on the outline.
    for piece in w.warp.iter().chain(&w.weft) {
        for n in [piece[0], piece[piece.len() - 1]] {
            assert!(o.locate(w.nodes[n]).0 < 1e-12);
            assert!(w.outline_pos[n].is_some());
        }
    }
    // Crossings: 11 x 11 grid minus the 3 x 6 grid points strictly inside the notch.
    assert_eq!(w.crossings(), 121 - 3 * 6);
}

#[test]
fn concave_panel_off_grid_has_separate_end_nodes() {
    // A V notch whose sides cut the grid lines between grid points.
    let p = polygon_pattern(&[
        [0.0, 0.0],
        [10.0, 0.0],
        [10.0, 10.0],
        [5.0, 2.5],
        [0.0, 10.0],
    ]);
    let o = Outline::new(&p.panels[0], 2e-4);
    let w = weave_outline(&o, [0.01, 0.01], 0.0, 0.2, &[]);
    // Weft line y = 5 cm meets the notch sides at x = 5 -/+ 5*2.5/7.5 cm:
    // two pieces, the inner ends at x = 3.333 and 6.667 cm.
    let ends: Vec<[f64; 2]> = w
        .weft
        .iter()
        .zip(&w.weft_line)
        .filter(|(_, l)| **l == 5)
        .map(|(p, _)| [w.nodes[p[0]][0], w.nodes[*p.last().unwrap()][0]])
        .collect();
    assert_eq!(ends.len(), 2);
    assert!((ends[0][1] - 0.05 + 0.05 / 3.0).abs() < 1e-12, "{ends:?}");
    assert!((ends[1][0] - 0.05 - 0.05 / 3.0).abs() < 1e-12, "{ends:?}");
}

fn patterns_dir() -> Option<PathBuf> {
    common::shared_data().map(|d| d.join("patterns"))
}

#[test]
fn real_panels_rest_lengths_and_yarn_length() {
    let Some(dir) = patterns_dir() else { return };
    let p = Pattern::from_file(dir.join("gc_shirt_mean.json")).unwrap();
    let s = 0.01;
    let g = weave_garment(&p, &opts(s)).unwrap();
    let f = &g.fabric;
    // Every segment is at rest in the placed flat panel: chord = Δu (or Δv).
    for seg in &f.elements.segments {
        let chord = (f.initial.x[seg.b] - f.initial.x[seg.a]).norm();
        let du = f.initial.arc(seg.b, seg.family) - f.initial.arc(seg.a, seg.family);
        assert!((chord - du).abs() < 1e-12, "{chord} vs {du}");
    }
    // Yarn length per family is area / spacing (the yarns cover the panel
    // once each way) up to the end correction of this rectangle rule: at
    // most one yarn length (the panel's extent along the yarn).
    for (pi, r) in g.panels.iter().enumerate() {
        let (lo, hi) = f
            .initial
            .x
            .iter()
            .skip(r.first_node)
            .take(r.nodes)
            .fold((f64::MAX, f64::MIN), |(lo, hi), x| {
                (lo.min(x.y), hi.max(x.y))
            });
        let extent = hi - lo;
        let mut len = [0.0; 2];
        for y in f.yarns.iter().filter(|y| y.object == pi) {
            let fam = y.family;
            let (a, b) = (y.nodes[0], *y.nodes.last().unwrap());
            len[fam.index()] += f.initial.arc(b, fam) - f.initial.arc(a, fam);
        }
        let want = r.area.abs() / s;
        eprintln!(
            "{}: warp {:.3} m, weft {:.3} m, area/s {want:.3} m",
            r.name, len[0], len[1]
        );
        for l in len {
            assert!((l - want).abs() < extent, "{}: {l} vs {want}", r.name);
        }
    }
    // Crossings alternate over / under along every warp yarn.
    for y in f
        .yarns
        .iter()
        .filter(|y| y.family == weft_core::Family::Warp)
    {
        let c: Vec<i8> = y
            .nodes
            .iter()
            .map(|&n| f.crimp[n])
            .filter(|&c| c != 0)
            .collect();
        assert!(c.windows(2).all(|w| w[0] == -w[1]), "{}", y.label());
    }
}

/// A 5.05 cm x 8 cm rectangle (cm): at 1 cm spacing its weft yarns end
/// 0.5 mm past the warp yarn at x = 5 cm, on the right edge (edge 1).
const RECT_5_05: [[f64; 2]; 4] = [[0.0, 0.0], [5.05, 0.0], [5.05, 8.0], [0.0, 8.0]];

/// The weft yarns of a fabric.
fn weft_yarns(f: &weft_core::Fabric) -> impl Iterator<Item = &weft_core::Yarn> {
    f.yarns
        .iter()
        .filter(|y| y.family == weft_core::Family::Weft)
}

/// Asserts a panel's shortest rest segment (m) to 1e-12.
fn assert_shortest_segment(r: &weft_pattern::PanelReport, expected: f64) {
    assert!(
        (r.shortest_segment - expected).abs() < 1e-12,
        "{}",
        r.shortest_segment
    );
}

#[test]
fn min_end_segment_takes_a_crossing_off_a_yarn_end_on_a_sewn_edge() {
    // 5.05 cm wide: the weft yarns end 0.5 mm past the warp yarn at x = 5 cm,
    // on the right edge (edge 1), sewn to the left one (edge 3) as a tube.
    let p = sewn_polygon_pattern(&RECT_5_05, &[[1, 3]]);
    let mut o = opts(0.01);
    o.min_end_segment = 0.0;
    let keep = weave_garment(&p, &o).unwrap();
    let r = &keep.panels[0];
    assert_eq!((r.crossings, r.nodes), (54, 63));
    assert_shortest_segment(r, 0.0005);
    o.min_end_segment = 0.2;
    let drop = weave_garment(&p, &o).unwrap();
    let r = &drop.panels[0];
    // The x = 5 cm grid points are taken off every weft yarn, so the warp
    // yarn at x = 5 cm crosses nothing and is dropped (it would hang free).
    assert_eq!((r.crossings, r.nodes), (45, 54));
    assert_eq!(r.dropped_stubs, 1);
    assert_shortest_segment(r, 0.01);
    let f = &drop.fabric;
    // Each weft yarn's last segment runs from x = 4 cm to its end at 5.05 cm,
    // on the sewn edge, where the seam ties it.
    for y in weft_yarns(f) {
        let (a, b) = (y.nodes[y.nodes.len() - 2], y.nodes[y.nodes.len() - 1]);
        let dv = f.initial.v[b] - f.initial.v[a];
        assert!((dv - 0.0105).abs() < 1e-12, "{}: {dv}", y.label());
        assert!((f.initial.x[b].x - 0.0505).abs() < 1e-12);
    }
    let on_x5 = (0..f.node_count())
        .filter(|&n| (f.initial.x[n].x - 0.05).abs() < 1e-12)
        .count();
    assert_eq!(on_x5, 0);
    assert_eq!(drop.panels[0].edges[1].end_nodes.len(), 9);
    assert_eq!(drop.stitches[0].ends, [9, 9]);
}

#[test]
fn min_end_segment_cuts_the_stub_off_a_yarn_end_on_a_free_edge() {
    // The same panel unsewn: the right edge is free, as a hem is. The 0.5 mm
    // stubs past x = 5 cm are cut off, so every weft yarn ends at its
    // crossing with the warp yarn at x = 5 cm, which keeps all 9 crossings
    // (taking them off would leave that warp yarn crossing nothing).
    let p = polygon_pattern(&RECT_5_05);
    let mut o = opts(0.01);
    o.min_end_segment = 0.2;
    let g = weave_garment(&p, &o).unwrap();
    let r = &g.panels[0];
    assert_eq!((r.crossings, r.nodes), (54, 54));
    assert_eq!(r.dropped_stubs, 0);
    assert_shortest_segment(r, 0.01);
    let f = &g.fabric;
    for y in weft_yarns(f) {
        let end = y.nodes[y.nodes.len() - 1];
        assert!((f.initial.x[end].x - 0.05).abs() < 1e-12, "{}", y.label());
        assert!(f.node_yarns[end][0].is_some() && f.node_yarns[end][1].is_some());
    }
    // The cut ends still count as the right edge's yarn ends, 0.5 mm inside
    // it, but for the two at y = 0 and 8 cm, which lie on the bottom and top
    // edges.
    let right = &g.panels[0].edges[1];
    assert_eq!(right.end_nodes.len(), 7);
    // Without the shortest end segment the free edge keeps its stubs.
    o.min_end_segment = 0.0;
    let keep = weave_garment(&p, &o).unwrap();
    assert_eq!((keep.panels[0].crossings, keep.panels[0].nodes), (54, 63));
}

#[test]
fn min_end_segment_must_be_below_one_spacing() {
    let p = polygon_pattern(&RECT_5_05);
    let mut o = opts(0.01);
    o.min_end_segment = 1.0;
    let e = weave_garment(&p, &o).unwrap_err().to_string();
    assert!(e.contains("min_end_segment"), "{e}");
}
