//! Placing and stitching whole garments: every yarn end on a stitched edge
//! is tied, tie distances agree with the panel placement, labelled edges
//! are reported, GPG patterns are lifted onto the feet-at-zero body.

mod common;

use nalgebra::Vector3;
use std::collections::BTreeSet;
use std::path::PathBuf;
use weft_pattern::geometry::{Outline, edge_point};
use weft_pattern::{
    GPG_ORIGIN_HEIGHT_MEAN_BODY, MEAN_BODY_ARM_POSE_DEG, Pattern, VerticalOffset, WeaveOptions,
    weave_garment,
};

fn data_dir() -> Option<PathBuf> {
    common::shared_data()
}

#[test]
fn shirt_seams_tie_every_end_at_placement_distances() {
    let Some(dir) = data_dir() else { return };
    let p = Pattern::from_file(dir.join("patterns/gc_shirt_mean.json")).unwrap();
    let g = weave_garment(&p, &WeaveOptions::new(0.01)).unwrap();
    assert_eq!(g.vertical_offset, 0.0);
    let x = &g.fabric.initial.x;
    // Fine outlines for the exact 3D point an end should meet.
    let fine: Vec<Outline> = p.panels.iter().map(|q| Outline::new(q, 1e-6)).collect();
    let mut worst = 0.0_f64;
    for (si, (st, sr)) in p.stitches.iter().zip(&g.stitches).enumerate() {
        let ties = &g.seams[sr.ties.clone()];
        let ea = &g.panels[st.a.panel].edges[st.a.edge];
        let eb = &g.panels[st.b.panel].edges[st.b.edge];
        // Every end of both edges is tied exactly once, by this stitch.
        assert_eq!(ties.len(), ea.end_nodes.len() + eb.end_nodes.len());
        let tied: BTreeSet<usize> = ties.iter().map(|t| t.node).collect();
        let ends: BTreeSet<usize> = ea.end_nodes.iter().chain(&eb.end_nodes).copied().collect();
        assert_eq!(tied, ends, "stitch {si}");
        assert!(
            ties.iter()
                .all(|t| t.stitch == si && (0.0..=1.0).contains(&t.t))
        );
        // Each tie's gap equals the distance between the end and the point
        // of the other edge at the matching normalised arc length (start of
        // a meets end of b), up to the chord between two neighbouring ends of
        // the curved edge (its sagitta, below a tenth of the 10 mm spacing).
        let mut k = 0;
        let mut gaps = vec![];
        for (side, other) in [(0, st.b), (1, st.a)] {
            let e = if side == 0 { ea } else { eb };
            for &s in &e.params {
                let tie = &ties[k];
                k += 1;
                let q = edge_point(&fine[other.panel], other.edge, 1.0 - s);
                let target = p.panels[other.panel].place(q);
                let exact = (x[tie.node] - target).norm();
                let gap = tie.gap(x);
                worst = worst.max((gap - exact).abs());
                assert!(
                    (gap - exact).abs() < 1e-3,
                    "stitch {si}: gap {gap} vs {exact}"
                );
                gaps.push(gap);
                // The other nodes are yarn ends of the other panel.
                let r = &g.panels[other.panel];
                assert!(
                    tie.other
                        .iter()
                        .all(|&n| n >= r.first_node && n < r.first_node + r.nodes)
                );
            }
        }
        let (lo, hi) = gaps
            .iter()
            .fold((f64::MAX, 0.0_f64), |(l, h), &v| (l.min(v), h.max(v)));
        eprintln!(
            "stitch {si:2} {}[{}]-{}[{}]: {} ties, gap {lo:.4}..{hi:.4} m",
            p.panels[st.a.panel].name,
            st.a.edge,
            p.panels[st.b.panel].name,
            st.b.edge,
            ties.len()
        );
    }
    eprintln!("largest |tie gap - exact gap| = {worst:.2e} m");
    // Side seams: front panels at z = 0.25 m, back at z = -0.20 m, the
    // side edges over each other: every gap is 0.45 m.
    let side = 7; // left_ftorso[1] - left_btorso[5]
    let st = p.stitches[side];
    assert_eq!(
        (p.panels[st.a.panel].name.as_str(), st.a.edge),
        ("left_ftorso", 1)
    );
    for t in &g.seams[g.stitches[side].ties.clone()] {
        assert!((t.gap(x) - 0.45).abs() < 2e-3, "{}", t.gap(x));
    }
    // Centre-front seam: both halves share the x = 0 edge: gaps are zero.
    let centre = 16;
    assert_eq!(p.panels[p.stitches[centre].a.panel].name, "right_ftorso");
    for t in &g.seams[g.stitches[centre].ties.clone()] {
        assert!(t.gap(x) < 1e-12);
    }
    // Counts consistent: ties = ends on stitched edges.
    let stitched_ends: usize = g.stitches.iter().map(|s| s.ends[0] + s.ends[1]).sum();
    assert_eq!(g.seams.len(), stitched_ends);
}

#[test]
fn right_wrong_flips_the_pairing() {
    let file = format!("{}/tests/data/two_squares.json", env!("CARGO_MANIFEST_DIR"));
    let p = Pattern::from_file(&file).unwrap();
    let mut o = WeaveOptions::new(0.01);
    o.vertical_offset = VerticalOffset::None;
    let g = weave_garment(&p, &o).unwrap();
    let x = &g.fabric.initial.x;
    // Stitch 0: front edge 1 (x = 10 cm, going up) with back edge 3 (x = 0,
    // going down): start meets end, so equal heights meet: the gap is the
    // panels' offset (0.1, 0, 0.2) m, length 0.2236 m, for every end.
    for t in &g.seams[g.stitches[0].ties.clone()] {
        assert!((t.gap(x) - 0.05_f64.sqrt()).abs() < 1e-12, "{}", t.gap(x));
    }
    // Stitch 1 (right_wrong): front edge 3 (x = 0, going down) with back
    // edge 1 (x = 10 cm, going up): start meets start, so height h meets
    // 10 cm - h.
    for t in &g.seams[g.stitches[1].ties.clone()] {
        let target = x[t.other[0]] * (1.0 - t.t) + x[t.other[1]] * t.t;
        let (a, b) = (x[t.node].y, target.y);
        assert!((a + b - 0.1).abs() < 1e-12, "{a} + {b}");
    }
    // The labelled hem (edge 0 of both panels): 11 ends each.
    assert_eq!(g.labelled_nodes("hem").len(), 22);
}

#[test]
fn dress_labels_and_darts() {
    let Some(dir) = data_dir() else { return };
    let p = Pattern::from_file(dir.join("patterns/gc_dress_pencil.json")).unwrap();
    let g = weave_garment(&p, &WeaveOptions::new(0.02)).unwrap();
    let lower = g.labelled_nodes("lower_interface");
    let skirt: Vec<_> = g
        .panels
        .iter()
        .filter(|r| r.name.starts_with("skirt"))
        .collect();
    let mut expect = BTreeSet::new();
    for r in &skirt {
        for e in r
            .edges
            .iter()
            .filter(|e| e.label.as_deref() == Some("lower_interface"))
        {
            expect.extend(e.end_nodes.iter().copied());
        }
    }
    assert_eq!(lower, expect.into_iter().collect::<Vec<_>>());
    assert!(lower.len() > 20, "{}", lower.len());
    // All on the skirt panels, at the waist: the skirt's top (y > 0.75 m).
    let x = &g.fabric.initial.x;
    for &n in &lower {
        assert!(
            skirt
                .iter()
                .any(|r| n >= r.first_node && n < r.first_node + r.nodes)
        );
        assert!(x[n].y > 0.75, "{}", x[n].y);
    }
    // Darts (stitches within skirt_back): the legs meet at the tip, so the
    // ends next to it are less than half a spacing (1 cm) from their targets.
    let dart = &g.seams[g.stitches[0].ties.clone()];
    let min = dart.iter().map(|t| t.gap(x)).fold(f64::MAX, f64::min);
    assert!(min < 0.01, "{min}");
}

/// Height of the narrowest torso section of the body (|x| < 0.22 m), between
/// 0.9 and 1.3 m: the natural waist.
fn body_waist_height(obj: &std::path::Path) -> f64 {
    let (models, _) = tobj::load_obj(obj, &tobj::LoadOptions::default()).unwrap();
    let pos: Vec<[f64; 3]> = models
        .iter()
        .flat_map(|m| m.mesh.positions.chunks(3).map(|c| [c[0], c[1], c[2]]))
        .collect();
    let mut best = (f64::MAX, 0.0);
    for k in 0..=40 {
        let y = 0.9 + 0.01 * k as f64;
        let w = pos
            .iter()
            .filter(|p| (p[1] - y).abs() < 0.005 && p[0].abs() < 0.22)
            .fold((f64::MAX, f64::MIN), |(lo, hi), p| {
                (lo.min(p[0]), hi.max(p[0]))
            });
        if w.1 - w.0 < best.0 {
            best = (w.1 - w.0, y);
        }
    }
    best.1
}

#[test]
fn gpg_offset_fits_the_mean_body() {
    let Some(dir) = data_dir() else { return };
    let top = |name: &str| {
        let p = Pattern::from_file(dir.join("patterns").join(name)).unwrap();
        let g = weave_garment(&p, &WeaveOptions::new(0.02)).unwrap();
        let hi = g
            .fabric
            .initial
            .x
            .iter()
            .map(|x| x.y)
            .fold(f64::MIN, f64::max);
        (g.vertical_offset, hi)
    };
    let (shirt_off, shirt_top) = top("gc_shirt_mean.json");
    let (tee_off, tee_top) = top("gpg_tee.json");
    let (skirt_off, skirt_top) = top("gpg_skirt_2_panels.json");
    let (dress_off, _) = top("gc_dress_pencil.json");
    let (hoody_off, _) = top("gc_hoody_mean.json");
    assert_eq!((shirt_off, dress_off, hoody_off), (0.0, 0.0, 0.0));
    assert_eq!(
        (tee_off, skirt_off),
        (GPG_ORIGIN_HEIGHT_MEAN_BODY, GPG_ORIGIN_HEIGHT_MEAN_BODY)
    );
    eprintln!("shirt top {shirt_top:.3} m, tee top {tee_top:.3} m, skirt top {skirt_top:.3} m");
    // The tee's shoulder line meets the GarmentCode shirt's (both within
    // the 2 cm grid of the top).
    assert!(
        (tee_top - shirt_top).abs() < 0.02,
        "{tee_top} vs {shirt_top}"
    );
    // The skirt's waistband sits at most 8 cm under the body's waist.
    let obj = dir.join("bodies/mean_all.obj");
    if obj.is_file() {
        let waist = body_waist_height(&obj);
        eprintln!("body waist {waist:.3} m");
        assert!(
            skirt_top <= waist + 0.01 && skirt_top > waist - 0.08,
            "{skirt_top} vs {waist}"
        );
    } else {
        eprintln!("SKIPPED waist check: {} not found", obj.display());
    }
    // Fixed and None modes.
    let p = Pattern::from_file(dir.join("patterns/gpg_tee.json")).unwrap();
    let mut o = WeaveOptions::new(0.02);
    o.vertical_offset = VerticalOffset::Fixed(0.5);
    assert_eq!(weave_garment(&p, &o).unwrap().vertical_offset, 0.5);
    o.vertical_offset = VerticalOffset::None;
    assert_eq!(weave_garment(&p, &o).unwrap().vertical_offset, 0.0);
}

/// Every yarn piece crosses at least one yarn of the other family, so no
/// piece hangs free of the garment (trimming near yarn ends is per family and
/// used to leave pieces whose only grid points had been taken off the
/// crossing yarns: they fell away during draping). Checked on the project's
/// A-line skirt (slanted edges) and on every real pattern, at 10, 20 and
/// 40 mm, and never more than 4 nodes in a row (a yarn end and the grid
/// points next to a sewn edge) without one.
#[test]
fn every_yarn_piece_crosses_the_other_family() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = vec![root.join("data/patterns/a_line_skirt.json")];
    if let Some(dir) = data_dir() {
        for name in [
            "gc_shirt_mean.json",
            "gc_dress_pencil.json",
            "gc_hoody_mean.json",
            "gpg_skirt_2_panels.json",
            "gpg_tee.json",
        ] {
            files.push(dir.join("patterns").join(name));
        }
    }
    let mut checked = 0;
    for file in &files {
        let pattern = Pattern::from_file(file).unwrap();
        for spacing in [0.01, 0.02, 0.04] {
            let g = weave_garment(&pattern, &WeaveOptions::new(spacing)).unwrap();
            let f = &g.fabric;
            for y in &f.yarns {
                let crossing =
                    |n: usize| f.node_yarns[n][0].is_some() && f.node_yarns[n][1].is_some();
                assert!(
                    y.nodes.iter().any(|&n| crossing(n)),
                    "{} at {spacing} m: {} crosses no yarn of the other family",
                    file.display(),
                    y.label()
                );
                // Nor does a yarn run on for long past nodes that hold it to
                // nothing: a hem yarn whose crossings were taken off it hung
                // from its last few like a necklace (GPG's 2-panel skirt had
                // 13 such nodes in a row at 10 mm before free edges cut the
                // stubs instead).
                let mut run = 0;
                let mut longest = 0;
                for &n in &y.nodes {
                    run = if crossing(n) { 0 } else { run + 1 };
                    longest = longest.max(run);
                }
                assert!(
                    longest <= 4,
                    "{} at {spacing} m: {} has {longest} nodes in a row without a crossing",
                    file.display(),
                    y.label()
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "{checked}");
}

#[test]
fn gpg_sleeves_turn_down_to_the_arm_angle_rigidly() {
    let Some(dir) = data_dir() else { return };
    let p = Pattern::from_file(dir.join("patterns/gpg_tee.json")).unwrap();
    let outlines: Vec<Outline> = p.panels.iter().map(|q| Outline::new(q, 2e-4)).collect();
    let turns = weft_pattern::sleeve_rotations(&p, &outlines, MEAN_BODY_ARM_POSE_DEG);
    let turned: BTreeSet<&str> = p
        .panels
        .iter()
        .zip(&turns)
        .filter(|(_, t)| t.is_some())
        .map(|(q, _)| q.name.as_str())
        .collect();
    assert_eq!(
        turned,
        BTreeSet::from(["lbsleeve", "lfsleeve", "rbsleeve", "rfsleeve"])
    );
    let mut straight = WeaveOptions::new(0.02);
    straight.sleeve_pose_deg = None;
    let a = weave_garment(&p, &straight).unwrap();
    let b = weave_garment(&p, &WeaveOptions::new(0.02)).unwrap();
    let angle = MEAN_BODY_ARM_POSE_DEG.to_radians();
    for (panel, turn) in a.panels.iter().zip(&turns) {
        let range = panel.first_node..panel.first_node + panel.nodes;
        let (xa, xb) = (
            &a.fabric.initial.x[range.clone()],
            &b.fabric.initial.x[range],
        );
        match turn {
            None => assert_eq!(xa, xb, "{} moved", panel.name),
            Some(t) => {
                let pivot = t.pivot + Vector3::new(0.0, a.vertical_offset, 0.0);
                let side = xa[0].x.signum();
                for (p0, p1) in xa.iter().zip(xb) {
                    let (d0, d1) = (p0 - pivot, p1 - pivot);
                    // Rigid, about the z axis, by the arm angle, far end down.
                    assert!((d0.norm() - d1.norm()).abs() < 1e-12);
                    assert!((d0.z - d1.z).abs() < 1e-12);
                    let turn = d1.y.atan2(d1.x) - d0.y.atan2(d0.x);
                    let turn = (turn + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU)
                        - std::f64::consts::PI;
                    if d0.xy().norm() > 1e-6 {
                        assert!((turn + side * angle).abs() < 1e-9, "{}: {turn}", panel.name);
                    }
                }
            }
        }
    }
    // The GarmentCode shirt is made for the A-pose body: nothing turns.
    let shirt = Pattern::from_file(dir.join("patterns/gc_shirt_mean.json")).unwrap();
    let mut off = WeaveOptions::new(0.02);
    off.sleeve_pose_deg = None;
    assert_eq!(
        weave_garment(&shirt, &off).unwrap().fabric.initial.x,
        weave_garment(&shirt, &WeaveOptions::new(0.02))
            .unwrap()
            .fabric
            .initial
            .x
    );
}

#[test]
fn grading_scales_every_length() {
    let Some(dir) = data_dir() else { return };
    for name in ["gc_shirt_mean.json", "gpg_tee.json", "gc_dress_pencil.json"] {
        let p = Pattern::from_file(dir.join("patterns").join(name)).unwrap();
        let g = p.graded(1.15);
        for (a, b) in p.panels.iter().zip(&g.panels) {
            let (la, lb) = (Outline::new(a, 1e-7).length, Outline::new(b, 1e-7).length);
            assert!(
                (lb / la - 1.15).abs() < 1e-5,
                "{name} {}: {}",
                a.name,
                lb / la
            );
            assert!((b.translation[0] - 1.15 * a.translation[0]).abs() < 1e-12);
            assert!((b.translation[2] - 1.15 * a.translation[2]).abs() < 1e-12);
            assert_eq!(a.translation[1], b.translation[1]);
        }
    }
}

#[test]
fn every_stitch_is_sewn_from_both_sides_at_coarse_spacings() {
    let Some(dir) = data_dir() else { return };
    for name in [
        "gc_shirt_mean.json",
        "gc_hoody_mean.json",
        "gc_dress_pencil.json",
        "gpg_skirt_2_panels.json",
        "gpg_tee.json",
    ] {
        let p = Pattern::from_file(dir.join("patterns").join(name)).unwrap();
        for spacing in [0.02, 0.04, 0.06] {
            let g = weave_garment(&p, &WeaveOptions::new(spacing)).unwrap();
            for (si, (st, rep)) in p.stitches.iter().zip(&g.stitches).enumerate() {
                let ties = &g.seams[rep.ties.clone()];
                // Ties from side a start on panel a, from side b on panel b.
                for side in [st.a, st.b] {
                    let panel = &g.panels[side.panel];
                    let from_side = ties
                        .iter()
                        .filter(|t| {
                            (panel.first_node..panel.first_node + panel.nodes).contains(&t.node)
                        })
                        .count();
                    assert!(
                        from_side >= 1,
                        "{name} at {spacing} m: stitch {si} has no tie from {}",
                        panel.name
                    );
                }
            }
        }
    }
}
