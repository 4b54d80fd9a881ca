//! Curve writers, each read back (tobj for the tube mesh, small readers
//! written here from the format descriptions for the others) and checked
//! for counts and coordinates.

use std::path::Path;
use weft_core::Family;
use weft_io::export::{BCC_HEADER_BYTES, tube_rings};
use weft_io::{
    Curve, MitsubaScene, YarnCurves, write_bcc, write_mitsuba_curves, write_mitsuba_scene,
    write_obj_polylines, write_obj_tubes, write_usda_curves,
};

/// Two yarns: a helix (warp, 13 points) and a bent weft (4 points).
fn sample() -> YarnCurves {
    let helix = (0..13)
        .map(|i| {
            let t = i as f64 * 0.4;
            [0.01 * t.cos(), 0.003 * t + 1.0, 0.01 * t.sin()]
        })
        .collect();
    YarnCurves {
        curves: vec![
            Curve {
                points: helix,
                normals: Vec::new(),
                radius: 0.0005,
                family: Family::Warp,
                yarn: 0,
            },
            Curve {
                points: vec![
                    [0.0, 0.5, 0.0],
                    [0.01, 0.5, 0.001],
                    [0.02, 0.51, 0.0],
                    [0.03, 0.5, -0.002],
                ],
                normals: Vec::new(),
                radius: 0.00025,
                family: Family::Weft,
                yarn: 7,
            },
        ],
    }
}

fn all_points(c: &YarnCurves) -> Vec<[f64; 3]> {
    c.curves
        .iter()
        .flat_map(|k| k.points.iter().copied())
        .collect()
}

#[test]
fn bcc_reads_back_with_header_counts_and_f32_coordinates() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("yarns.bcc");
    let c = sample();
    write_bcc(&path, &c).unwrap();
    let b = std::fs::read(&path).unwrap();
    // Reader from the layout (Yuksel's BCC header, 64 bytes, little-endian).
    assert_eq!(&b[0..3], b"BCC");
    assert_eq!(b[3], 0x44);
    assert_eq!(&b[4..6], b"C0");
    assert_eq!((b[6], b[7]), (3, 1));
    let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    assert_eq!(u64_at(8), 2);
    assert_eq!(u64_at(16), 17);
    let mut o = BCC_HEADER_BYTES;
    let mut read = Vec::new();
    let mut counts = Vec::new();
    for _ in 0..u64_at(8) {
        let n = i32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        o += 4;
        counts.push(n);
        for _ in 0..n {
            let f = |k: usize| f32::from_le_bytes(b[o + 4 * k..o + 4 * k + 4].try_into().unwrap());
            read.push([f(0), f(1), f(2)]);
            o += 12;
        }
    }
    assert_eq!(o, b.len(), "no trailing bytes");
    assert_eq!(counts, vec![13, 4]);
    assert_eq!(b.len(), 64 + 2 * 4 + 17 * 12);
    for (r, p) in read.iter().zip(all_points(&c)) {
        assert_eq!(*r, p.map(|v| v as f32));
    }
}

#[test]
fn mitsuba_curves_read_back_per_block() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("yarns.txt");
    let c = sample();
    write_mitsuba_curves(&path, &c).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let blocks: Vec<Vec<[f64; 4]>> = text
        .split("\n\n")
        .map(|blk| {
            blk.lines()
                .map(|l| {
                    let v: Vec<f64> = l.split_whitespace().map(|t| t.parse().unwrap()).collect();
                    assert_eq!(v.len(), 4, "line `{l}`");
                    [v[0], v[1], v[2], v[3]]
                })
                .collect()
        })
        .collect();
    assert_eq!(blocks.len(), 2);
    for (blk, curve) in blocks.iter().zip(&c.curves) {
        assert_eq!(blk.len(), curve.points.len());
        for (row, p) in blk.iter().zip(&curve.points) {
            // Shortest round-trip formatting: exact.
            assert_eq!([row[0], row[1], row[2]], *p);
            assert_eq!(row[3], curve.radius);
        }
    }
}

/// Reads `v` and `l` lines of an OBJ (1-based indices) into polylines.
fn read_obj_polylines(path: &Path) -> Vec<Vec<[f64; 3]>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut v = Vec::new();
    let mut lines = Vec::new();
    for l in text.lines() {
        let mut it = l.split_whitespace();
        match it.next() {
            Some("v") => {
                let p: Vec<f64> = it.map(|t| t.parse().unwrap()).collect();
                v.push([p[0], p[1], p[2]]);
            }
            Some("l") => lines.push(it.map(|t| t.parse::<usize>().unwrap()).collect::<Vec<_>>()),
            _ => {}
        }
    }
    lines
        .iter()
        .map(|l| l.iter().map(|&i| v[i - 1]).collect())
        .collect()
}

#[test]
fn obj_polylines_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("yarns.obj");
    let c = sample();
    write_obj_polylines(&path, &c).unwrap();
    let polys = read_obj_polylines(&path);
    assert_eq!(polys.len(), 2);
    for (poly, curve) in polys.iter().zip(&c.curves) {
        assert_eq!(poly, &curve.points);
    }
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("o warp_0\n") && text.contains("o weft_7\n"));
}

#[test]
fn obj_tubes_read_back_closed_with_outward_unit_normals() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tubes.obj");
    let c = sample();
    let sides = 6;
    write_obj_tubes(&path, &c, sides).unwrap();
    let opts = tobj::LoadOptions {
        triangulate: false,
        single_index: false,
        ignore_points: true,
        ignore_lines: true,
    };
    let (models, _) = tobj::load_obj(&path, &opts).unwrap();
    assert_eq!(models.len(), 2, "one object per yarn");
    for (model, curve) in models.iter().zip(&c.curves) {
        let m = &model.mesh;
        let n_pts = curve.points.len();
        // Vertex count = samples × sides; faces: wall + 2 caps.
        assert_eq!(m.positions.len() / 3, n_pts * sides, "{}", model.name);
        let faces = m.indices.len() / 3;
        assert_eq!(faces, 2 * sides * (n_pts - 1) + 2 * (sides - 2));
        assert_eq!(m.normals.len() / 3, n_pts * sides + 2);
        let pos = |i: u32| {
            let i = 3 * i as usize;
            [m.positions[i], m.positions[i + 1], m.positions[i + 2]]
        };
        let nrm = |i: u32| {
            let i = 3 * i as usize;
            [m.normals[i], m.normals[i + 1], m.normals[i + 2]]
        };
        let sub = |a: [f64; 3], b: [f64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
        let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
        let cross = |a: [f64; 3], b: [f64; 3]| {
            [
                a[1] * b[2] - a[2] * b[1],
                a[2] * b[0] - a[0] * b[2],
                a[0] * b[1] - a[1] * b[0],
            ]
        };
        // Every vertex at distance R from its ring's centreline point, every
        // side normal unit and along (vertex - centre), i.e. pointing away.
        let rings = tube_rings(&curve.points, curve.radius, sides);
        assert_eq!(rings.vertices.len(), n_pts * sides);
        // tobj renumbers vertices by first use: map them back to ring
        // indices by their exact coordinates (written round-trip exactly).
        let key = |p: [f64; 3]| p.map(f64::to_bits);
        let ring_of: std::collections::HashMap<[u64; 3], usize> = rings
            .vertices
            .iter()
            .enumerate()
            .map(|(i, v)| (key([v.x, v.y, v.z]), i))
            .collect();
        assert_eq!(ring_of.len(), n_pts * sides, "distinct ring vertices");
        for i in 0..m.positions.len() / 3 {
            assert!(
                ring_of.contains_key(&key(pos(i as u32))),
                "file vertex {i} is not a ring vertex"
            );
        }
        let mut edges = std::collections::HashMap::<(u32, u32), i32>::new();
        for (f, tri) in m.indices.chunks(3).enumerate() {
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                *edges.entry((a.min(b), a.max(b))).or_default() += if a < b { 1 } else { -1 };
                *edges.entry((a.min(b), a.max(b) + 1_000_000)).or_default() += 1;
            }
            let nn = nrm(m.normal_indices[3 * f]);
            let len = dot(nn, nn).sqrt();
            assert!((len - 1.0).abs() < 1e-12, "normal length {len}");
            let [a, b, cc] = [tri[0], tri[1], tri[2]].map(pos);
            let face_n = cross(sub(b, a), sub(cc, a));
            if f < 2 * sides * (n_pts - 1) {
                for k in 0..3 {
                    let vi = ring_of[&key(pos(tri[k]))];
                    let centre = curve.points[vi / sides];
                    let radial = sub(pos(tri[k]), centre);
                    let r = dot(radial, radial).sqrt();
                    assert!(
                        (r - curve.radius).abs() < 1e-12 * (1.0 + curve.radius),
                        "radius {r}"
                    );
                    let vn = nrm(m.normal_indices[3 * f + k]);
                    assert!(
                        dot(vn, radial) / r > 1.0 - 1e-9,
                        "normal not radial outward"
                    );
                    // The triangle is wound counter-clockwise seen from outside.
                    assert!(dot(face_n, radial) > 0.0, "wall triangle {f} wound inwards");
                }
            } else {
                // Caps: the face normal agrees with the cap normal.
                assert!(
                    dot(face_n, nn) > 0.0,
                    "cap triangle {f} wound against its normal"
                );
            }
        }
        // Closed and consistently oriented: each undirected edge used twice,
        // once in each direction.
        for (&(a, b), &v) in &edges {
            if b >= 1_000_000 {
                assert_eq!(v, 2, "edge ({a}, {}) used {v} times", b - 1_000_000);
            } else {
                assert_eq!(v, 0, "edge ({a}, {b}) used twice in one direction");
            }
        }
    }
}

#[test]
fn tube_frames_do_not_twist_on_a_straight_yarn() {
    // Straight yarn: parallel transport keeps the frame fixed, so ring k's
    // vertices all lie on one line parallel to the yarn.
    let pts: Vec<[f64; 3]> = (0..10).map(|i| [0.1 * i as f64, 0.2, 0.3]).collect();
    let r = tube_rings(&pts, 0.001, 8);
    for i in 1..10 {
        for k in 0..8 {
            let (a, b) = (r.vertices[k], r.vertices[i * 8 + k]);
            assert!(
                (b.y - a.y).abs() < 1e-15 && (b.z - a.z).abs() < 1e-15,
                "ring {i} vertex {k} twisted"
            );
        }
    }
    // On the helix, the rotation-minimising frame's twist per step is tiny:
    // consecutive frame normals differ by less than the tangent turn.
    let c = sample();
    let h = tube_rings(&c.curves[0].points, 0.0005, 4);
    for i in 1..h.tangents.len() {
        let n0 = h.normals[(i - 1) * 4];
        let n1 = h.normals[i * 4];
        let turn = h.tangents[i - 1].angle(&h.tangents[i]);
        assert!(
            n0.angle(&n1) <= turn + 1e-9,
            "step {i}: frame turned {} > tangent {turn}",
            n0.angle(&n1)
        );
    }
}

#[test]
fn usda_reads_back_with_counts_points_and_widths() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("yarns.usda");
    let c = sample();
    write_usda_curves(&path, &c).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("#usda 1.0\n"));
    for must in [
        "def BasisCurves \"Yarns\"",
        "uniform token type = \"cubic\"",
        "uniform token basis = \"catmullRom\"",
        "uniform token wrap = \"pinned\"",
        "upAxis = \"Y\"",
        "metersPerUnit = 1",
    ] {
        assert!(text.contains(must), "missing `{must}`");
    }
    // A small reader for `TYPE[] NAME = [ ... ]` arrays.
    let array = |name: &str| -> Vec<f64> {
        let start = text
            .find(&format!("{name} = ["))
            .unwrap_or_else(|| panic!("no {name}"))
            + name.len()
            + 4;
        let end = start + text[start..].find(']').unwrap();
        text[start..end]
            .split(|ch: char| ch == ',' || ch == '(' || ch == ')' || ch.is_whitespace())
            .filter(|t| !t.is_empty())
            .map(|t| t.parse().unwrap())
            .collect()
    };
    assert_eq!(array("curveVertexCounts"), vec![13.0, 4.0]);
    let pts = array("point3f[] points");
    assert_eq!(pts.len(), 17 * 3);
    for (chunk, p) in pts.chunks(3).zip(all_points(&c)) {
        for k in 0..3 {
            assert_eq!(chunk[k] as f32, p[k] as f32);
        }
    }
    let widths = array("float[] widths");
    assert_eq!(widths.len(), 17);
    assert!(widths[..13].iter().all(|&w| w as f32 == 0.001f32));
    assert!(widths[13..].iter().all(|&w| w as f32 == 0.0005f32));
    assert_eq!(array("int[] primvars:family"), vec![0.0, 1.0]);
    // The extent: the points' box grown by the largest half width (0.5 mm).
    let extent = array("float3[] extent");
    assert_eq!(extent.len(), 6);
    let pts3 = all_points(&c);
    for k in 0..3 {
        let lo = pts3.iter().map(|p| p[k]).fold(f64::INFINITY, f64::min);
        let hi = pts3.iter().map(|p| p[k]).fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(extent[k] as f32, (lo - 0.0005) as f32, "axis {k}");
        assert_eq!(extent[3 + k] as f32, (hi + 0.0005) as f32, "axis {k}");
    }
}

#[test]
fn too_few_tube_sides_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.obj");
    let e = write_obj_tubes(&path, &sample(), 2)
        .unwrap_err()
        .to_string();
    assert!(e.contains("t.obj") && e.contains("at least 3 sides"), "{e}");
    assert!(!path.exists());
}

/// The Mitsuba scene names the curve and body files, frames the box (the
/// camera looks at its centre from +z, far enough for its 1.2 m height in a
/// 30° field of view), and exposes `spp`, `width` and `height` as defaults.
#[test]
fn mitsuba_scene_frames_the_box_and_names_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scene.xml");
    write_mitsuba_scene(
        &path,
        &MitsubaScene {
            curves_file: "yarns.txt",
            body_file: Some("body.obj"),
            frame: ([-0.2, 0.4, -0.1], [0.2, 1.6, 0.3]),
            size: [800, 1000],
            samples: 64,
        },
    )
    .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("<scene version=\"3.0.0\">"));
    assert!(text.trim_end().ends_with("</scene>"));
    for must in [
        "<shape type=\"linearcurve\">",
        "<string name=\"filename\" value=\"yarns.txt\"/>",
        "<shape type=\"obj\">",
        "<string name=\"filename\" value=\"body.obj\"/>",
        "<default name=\"spp\" value=\"64\"/>",
        "<default name=\"width\" value=\"800\"/>",
        "<default name=\"height\" value=\"1000\"/>",
        "value=\"$spp\"",
        "<emitter type=\"directional\">",
    ] {
        assert!(text.contains(must), "missing `{must}`:\n{text}");
    }
    let lookat = text.lines().find(|l| l.contains("<lookat")).unwrap();
    let nums: Vec<f64> = lookat
        .split('"')
        .skip(1)
        .step_by(2)
        .take(2)
        .flat_map(|v| {
            v.split(',')
                .map(|t| t.trim().parse::<f64>().unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    let (origin, target) = (&nums[..3], &nums[3..]);
    for (a, b) in target.iter().zip([0.0, 1.0, 0.1]) {
        assert!((a - b).abs() < 1e-12, "target {target:?}");
    }
    assert!(origin[0].abs() < 1e-12 && (origin[1] - 1.0).abs() < 1e-12);
    // Half height 0.6 m at 15° in the narrower (horizontal, 0.8 aspect) view.
    let d = origin[2] - 0.1;
    let seen = (d - 0.6) * (15f64.to_radians().tan() * 0.8);
    assert!(seen > 0.6 && seen < 1.0, "distance {d} m sees ±{seen} m");
    // The scene is rewritten whole (atomic) and without a body it has none.
    write_mitsuba_scene(
        &path,
        &MitsubaScene {
            curves_file: "a&b.txt",
            body_file: None,
            frame: ([0.0; 3], [1.0; 3]),
            size: [64, 64],
            samples: 4,
        },
    )
    .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("type=\"obj\"") && text.contains("value=\"a&amp;b.txt\""));
}
