//! preview.png: a z-buffered, shaded picture of the stated size. Cloth is
//! drawn in front of the body where it is in front and hidden behind it;
//! both are lit by the view's light (two-sided Lambert plus ambient).

use weft_core::Family;
use weft_io::preview::{AMBIENT, BACKGROUND, BODY, Rendering, WARP, WEFT, shade};
use weft_io::{Curve, Preview, TriMesh, View, YarnCurves, mannequin, write_preview};

/// A flat square patch of side `size` (m) centred at `c`: `n` warp yarns
/// along `u` and (with `weft`) `n` weft yarns along `w` (`u`, `w` unit and
/// perpendicular), each point carrying `normal` if given.
fn patch(
    c: [f64; 3],
    u: [f64; 3],
    w: [f64; 3],
    size: f64,
    n: usize,
    weft: bool,
    normal: Option<[f64; 3]>,
) -> Vec<Curve> {
    let at = |a: f64, b: f64| [0, 1, 2].map(|k| c[k] + a * u[k] + b * w[k]);
    let s = |i: usize| size * (i as f64 / (n - 1) as f64 - 0.5);
    let normals = normal.map_or(Vec::new(), |v| vec![v; n]);
    let mut curves = Vec::new();
    for j in 0..n {
        curves.push(Curve {
            points: (0..n).map(|i| at(s(i), s(j))).collect(),
            normals: normals.clone(),
            radius: 0.0002,
            family: Family::Warp,
            yarn: j,
        });
        if weft {
            curves.push(Curve {
                points: (0..n).map(|i| at(s(j), s(i))).collect(),
                normals: normals.clone(),
                radius: 0.0002,
                family: Family::Weft,
                yarn: n + j,
            });
        }
    }
    curves
}

/// A UV sphere of radius `r` at `c`, outward counter-clockwise.
fn sphere(c: [f64; 3], r: f64, rings: u32, segments: u32) -> TriMesh {
    use std::f64::consts::PI;
    let mut m = TriMesh::default();
    m.vertices.push([c[0], c[1] + r, c[2]]);
    for i in 1..rings {
        let th = PI * f64::from(i) / f64::from(rings);
        for j in 0..segments {
            let ph = 2.0 * PI * f64::from(j) / f64::from(segments);
            m.vertices.push([
                c[0] + r * th.sin() * ph.cos(),
                c[1] + r * th.cos(),
                c[2] - r * th.sin() * ph.sin(),
            ]);
        }
    }
    let bottom = m.vertices.len() as u32;
    m.vertices.push([c[0], c[1] - r, c[2]]);
    let v = |i: u32, j: u32| 1 + (i - 1) * segments + j % segments;
    for j in 0..segments {
        m.triangles.push([0, v(1, j), v(1, j + 1)]);
        m.triangles
            .push([bottom, v(rings - 1, j + 1), v(rings - 1, j)]);
        for i in 1..rings - 1 {
            m.triangles.push([v(i, j), v(i + 1, j), v(i + 1, j + 1)]);
            m.triangles.push([v(i, j), v(i + 1, j + 1), v(i, j + 1)]);
        }
    }
    m
}

/// The rendering's pixel under world point `p` in `view`:
/// `(rgb, depth, body fraction, cloth fraction)`.
fn at(pv: &Preview, r: &Rendering, view: View, p: [f64; 3]) -> ([u8; 3], f32, f32, f32) {
    let (c, row) = pv.project(view, p);
    let (c, row) = (c.floor() as u32, row.floor() as u32);
    let i = r.index(c, row);
    (
        r.image.get_pixel(c, row).0,
        r.depth[i],
        r.body[i],
        r.cloth[i],
    )
}

fn render(curves: Vec<Curve>, body: Option<&TriMesh>, w: u32, h: u32) -> (Preview, Rendering) {
    let yarns = YarnCurves { curves };
    let pv = Preview::fit(&yarns, body, w, h);
    (pv, pv.render_layers(&yarns, body))
}

const X: [f64; 3] = [1.0, 0.0, 0.0];
const Y: [f64; 3] = [0.0, 1.0, 0.0];
const Z: [f64; 3] = [0.0, 0.0, 1.0];

fn grey(c: [u8; 3]) -> bool {
    c[0] == c[1] && c[1] == c[2]
}

#[test]
fn cloth_in_front_of_the_body_is_drawn_in_cloth_colours_at_its_depth() {
    // Sphere r = 0.2 at the origin; a 0.3 m patch of 2 mm yarns at z = 0.3.
    let body = sphere([0.0; 3], 0.2, 48, 96);
    let cloth = patch([0.0, 0.0, 0.3], X, Y, 0.3, 151, true, Some(Z));
    let (pv, r) = render(cloth, Some(&body), 400, 300);
    let (rgb, depth, b, c) = at(&pv, &r, View::Front, [0.0, 0.0, 0.3]);
    assert_eq!((b, c), (0.0, 1.0), "patch centre shows only cloth");
    assert!(
        (f64::from(depth) - pv.depth(View::Front, [0.0, 0.0, 0.3])).abs() < 1e-6,
        "depth {depth} is the patch's"
    );
    assert!(
        f64::from(depth) < pv.depth(View::Front, [0.0, 0.0, 0.2]) - 0.09,
        "patch 10 cm in front of the body"
    );
    // Facing the camera: intensity 0.3 + 0.7 / sqrt(3); the colour is a mix
    // of the two family tones at that intensity.
    let i = shade(View::Front, Z);
    assert!((i - (AMBIENT + (1.0 - AMBIENT) / 3f64.sqrt())).abs() < 1e-12);
    for k in 0..3 {
        let lo = f64::from(WARP[k].min(WEFT[k])) * i - 1.0;
        let hi = f64::from(WARP[k].max(WEFT[k])) * i + 1.0;
        assert!(
            (lo..=hi).contains(&f64::from(rgb[k])),
            "channel {k}: {rgb:?} outside [{lo}, {hi}]"
        );
    }
    // The sphere above the patch is lit grey body, at the sphere's depth.
    let s = [0.0, 0.18, 0.2 * (1.0 - 0.9f64 * 0.9).sqrt()];
    let (rgb, depth, b, c) = at(&pv, &r, View::Front, s);
    assert_eq!((b, c), (1.0, 0.0));
    assert!(grey(rgb), "{rgb:?}");
    // (The pixel's nearest sample: the surface there drops ~2 m per m.)
    assert!((f64::from(depth) - pv.depth(View::Front, s)).abs() < 3.0 / pv.scale);
    // Side view: the patch is edge-on, left of (in front of) the sphere.
    let (_, _, _, c) = at(&pv, &r, View::Side, [0.0, 0.1, 0.3]);
    assert!(c > 0.0, "side view shows the patch edge");
}

#[test]
fn cloth_behind_the_body_is_hidden_where_the_body_covers_it() {
    // A 0.6 m patch at z = -0.3, behind the r = 0.2 sphere.
    let body = sphere([0.0; 3], 0.2, 48, 96);
    let cloth = patch([0.0, 0.0, -0.3], X, Y, 0.6, 301, true, Some(Z));
    let (pv, r) = render(cloth, Some(&body), 400, 300);
    let (rgb, depth, b, c) = at(&pv, &r, View::Front, [0.0, 0.0, 0.0]);
    assert_eq!((b, c), (1.0, 0.0), "centre: body hides the cloth");
    assert!(grey(rgb), "{rgb:?}");
    assert!((f64::from(depth) - pv.depth(View::Front, [0.0, 0.0, 0.2])).abs() < 1e-3);
    let (_, _, b, c) = at(&pv, &r, View::Front, [0.25, 0.25, -0.3]);
    assert_eq!(
        (b, c),
        (0.0, 1.0),
        "outside the body's outline the cloth shows"
    );
    // No cloth sample anywhere inside the sphere's outline (r < 0.19 m).
    let (c0, r0) = pv.project(View::Front, [0.0; 3]);
    let mut inside = 0;
    for row in 0..300u32 {
        for col in 0..200u32 {
            let d = (f64::from(col) + 0.5 - c0).hypot(f64::from(row) + 0.5 - r0) / pv.scale;
            if d < 0.19 {
                inside += 1;
                let i = r.index(col, row);
                assert_eq!(r.cloth[i], 0.0, "cloth shows through at ({col}, {row})");
                assert_eq!(r.body[i], 1.0);
            }
        }
    }
    assert!(inside > 5000, "{inside} pixels tested");
}

#[test]
fn shading_follows_the_fabric_normal() {
    // Two warp-only patches: A faces the front light, B is tilted 70° away
    // from it (still facing the camera).
    let l = View::Front.light();
    let m = [1.0, -1.0, 2.0].map(|v: f64| v / 6f64.sqrt()); // ⟂ l, m·z > 0
    let a70 = 70f64.to_radians();
    let nb = [0, 1, 2].map(|k| a70.cos() * l[k] + a70.sin() * m[k]);
    // In-plane axes of each patch: u ⟂ n in the XZ plane... via cross products.
    let cross = |a: [f64; 3], b: [f64; 3]| {
        let c = [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ];
        let n = (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt();
        c.map(|v| v / n)
    };
    let mut curves = Vec::new();
    for (centre, n) in [([-0.3, 0.0, 0.0], l), ([0.3, 0.0, 0.0], nb)] {
        let u = cross(Y, n);
        let w = cross(n, u);
        curves.extend(patch(centre, u, w, 0.2, 101, false, Some(n)));
    }
    let (pv, r) = render(curves, None, 400, 300);
    let mean_red = |x: f64| {
        let (c0, r0) = pv.project(View::Front, [x, 0.0, 0.0]);
        let (mut sum, mut n) = (0.0, 0);
        for row in r0 as u32 - 8..r0 as u32 + 8 {
            for col in c0 as u32 - 8..c0 as u32 + 8 {
                assert_eq!(r.cloth[r.index(col, row)], 1.0, "({col}, {row}) covered");
                sum += f64::from(r.image.get_pixel(col, row).0[0]);
                n += 1;
            }
        }
        sum / f64::from(n) / f64::from(WARP[0])
    };
    let (ia, ib) = (mean_red(-0.3), mean_red(0.3));
    assert!((ia - 1.0).abs() < 0.005, "facing the light: intensity {ia}");
    let want = AMBIENT + (1.0 - AMBIENT) * a70.cos();
    assert!((ib - want).abs() < 0.005, "tilted 70°: {ib}, want {want}");
    assert!(ia > 1.8 * ib);
    assert!((shade(View::Front, nb) - want).abs() < 1e-12);
    // Two-sided: the reversed normal shades the same.
    assert_eq!(shade(View::Front, nb.map(|v| -v)), shade(View::Front, nb));
}

#[test]
fn body_is_lit_from_the_upper_left_either_winding() {
    let body = sphere([0.0; 3], 0.2, 48, 96);
    let (pv, r) = render(Vec::new(), Some(&body), 400, 300);
    let on = |d: [f64; 3]| {
        let n = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        let p = d.map(|v| 0.2 * v / n);
        let (rgb, _, b, _) = at(&pv, &r, View::Front, p);
        assert_eq!(b, 1.0);
        assert!(grey(rgb), "{rgb:?}");
        f64::from(rgb[0]) / f64::from(BODY[0])
    };
    // Where the normal is the light: full intensity; facing the camera:
    // 0.3 + 0.7 / sqrt(3); facing away from the light: ambient only.
    let full = on(View::Front.light());
    assert!((full - 1.0).abs() < 0.02, "lit side {full}");
    let front = on(Z);
    assert!(
        (front - shade(View::Front, Z)).abs() < 0.02,
        "centre {front}"
    );
    let dark = on([1.0, -1.0, 0.6]);
    assert!((dark - AMBIENT).abs() < 0.02, "shadow side {dark}");
    // Side view: the light comes from +X +Y +Z there.
    let (rgb, ..) = at(&pv, &r, View::Side, View::Side.light().map(|v| 0.2 * v));
    assert!((f64::from(rgb[0]) / f64::from(BODY[0]) - 1.0).abs() < 0.02);
    // Reversed winding renders the same picture.
    let mut flipped = body.clone();
    for t in &mut flipped.triangles {
        t.swap(1, 2);
    }
    // (Up to rounding: the rasteriser visits the corners in another order.)
    let (_, rf) = render(Vec::new(), Some(&flipped), 400, 300);
    let diff: Vec<i32> = (rf.image.as_raw().iter().zip(r.image.as_raw()))
        .map(|(a, b)| (i32::from(*a) - i32::from(*b)).abs())
        .collect();
    let mean = f64::from(diff.iter().sum::<i32>()) / diff.len() as f64;
    assert!(
        diff.iter().all(|&d| d <= 2) && mean < 0.05,
        "mean difference {mean}"
    );
}

/// A curtain of 11 warp (vertical) and 11 weft (horizontal) yarns, 4 cm
/// apart, 25 cm in front of the body at chest height, without normals.
fn curtain() -> YarnCurves {
    let mut curves = Vec::new();
    for k in 0..11 {
        let x = -0.2 + 0.04 * k as f64;
        curves.push(Curve {
            points: (0..21).map(|i| [x, 0.9 + 0.02 * i as f64, 0.25]).collect(),
            normals: Vec::new(),
            radius: 0.0005,
            family: Family::Warp,
            yarn: k,
        });
    }
    for l in 0..11 {
        let y = 0.9 + 0.04 * l as f64;
        curves.push(Curve {
            points: (0..21).map(|i| [-0.2 + 0.02 * i as f64, y, 0.25]).collect(),
            normals: Vec::new(),
            radius: 0.0005,
            family: Family::Weft,
            yarn: 11 + l,
        });
    }
    YarnCurves { curves }
}

#[test]
fn preview_is_a_png_with_a_shaded_body_and_coloured_yarns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("preview.png");
    let body = mannequin::generate();
    let yarns = curtain();
    let (w, h) = (600, 400);
    write_preview(&path, &yarns, Some(&body), w, h).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    let img = image::open(&path).unwrap().to_rgb8();
    assert_eq!(img.dimensions(), (w, h));
    let pv = Preview::fit(&yarns, Some(&body), w, h);
    let r = pv.render_layers(&yarns, Some(&body));
    assert_eq!(r.image, img, "the file holds the rendering");
    let px = |view: View, p: [f64; 3]| at(&pv, &r, view, p);
    // Body: the belly (front), the head and the thigh (side), where no yarn
    // passes: grey, between ambient and full light.
    for (view, p) in [
        (View::Front, [0.0, 0.75, 0.0]),
        (View::Front, [0.02, 1.5, 0.0]),
        (View::Side, [0.0, 0.5, 0.0]),
    ] {
        let (rgb, _, b, c) = px(view, p);
        assert_eq!((b, c), (1.0, 0.0), "{view:?} {p:?}");
        assert!(grey(rgb), "{rgb:?}");
        let i = f64::from(rgb[0]) / f64::from(BODY[0]);
        assert!((AMBIENT - 0.01..=1.0).contains(&i), "{view:?} {p:?}: {i}");
    }
    // The body is shaded, not a flat silhouette: its grey levels spread.
    let levels: Vec<f64> = (0..r.body.len())
        .filter(|&i| r.body[i] == 1.0)
        .map(|i| f64::from(img.as_raw()[3 * i]))
        .collect();
    let mean = levels.iter().sum::<f64>() / levels.len() as f64;
    let sd = (levels.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / levels.len() as f64).sqrt();
    assert!(sd > 15.0, "body grey levels: mean {mean}, sd {sd}");
    // Yarns (no normals: shaded as tubes facing the camera): where a pixel
    // is all yarn, it is the warp tone, the weft tone (at that intensity) or
    // at a crossing a mix a · warp + (1 - a) · weft.
    let i = shade(View::Front, Z);
    let (tw, tf) = (
        WARP.map(|v| f64::from(v) * i),
        WEFT.map(|v| f64::from(v) * i),
    );
    let (mut full, mut crossings) = (0, 0);
    for (k, p) in img.pixels().enumerate() {
        if r.cloth[k] == 1.0 && (k % w as usize) < (w / 2) as usize {
            full += 1;
            let p = p.0.map(f64::from);
            let a = (p[0] - tf[0]) / (tw[0] - tf[0]);
            assert!((-0.01..=1.01).contains(&a), "{p:?}");
            for c in 0..3 {
                let want = a * tw[c] + (1.0 - a) * tf[c];
                assert!((p[c] - want).abs() <= 1.5, "{p:?} no mix of {tw:?}, {tf:?}");
            }
            crossings += usize::from((0.1..0.9).contains(&a));
        }
    }
    assert!(
        crossings > 0 && crossings < full / 4,
        "{crossings} of {full}"
    );
    assert!(full > 200, "{full} full yarn pixels");
    // Midway between crossings a warp is reddish, a weft bluish.
    for (p, warp) in [
        ([-0.2, 0.92, 0.25], true),
        ([0.12, 1.16, 0.25], true),
        ([-0.18, 0.9, 0.25], false),
        ([0.1, 1.3, 0.25], false),
    ] {
        let (rgb, _, _, c) = px(View::Front, p);
        assert!(c > 0.0, "{p:?}");
        let (red, blue) = (i32::from(rgb[0]), i32::from(rgb[2]));
        assert!(
            if warp {
                red > blue + 20
            } else {
                blue > red + 20
            },
            "{p:?}: {rgb:?}"
        );
    }
    // Side: the curtain is seen edge-on, in front of (left of) the body.
    let (_, _, _, c) = px(View::Side, [0.0, 1.0, 0.25]);
    assert!(c > 0.0, "side view yarn pixel");
    let (c_yarn, _) = pv.project(View::Side, [0.0, 1.0, 0.25]);
    let (c_body, _) = pv.project(View::Side, [0.0, 1.0, 0.0]);
    assert!(c_yarn < c_body, "body faces +Z = left in the side view");
    // Background in the corners, and views stay in their halves.
    assert_eq!(img.get_pixel(0, 0).0, BACKGROUND);
    assert_eq!(img.get_pixel(w - 1, h - 1).0, BACKGROUND);
    let (cf, _) = pv.project(View::Front, [0.0, 1.0, 0.0]);
    assert!(cf < f64::from(w / 2) && c_body >= f64::from(w / 2));
    // Roughly the body's share: it covers 5-30 % of the image.
    let share = r.body.iter().map(|&v| f64::from(v)).sum::<f64>() / f64::from(w * h);
    assert!((0.05..0.3).contains(&share), "body fraction {share}");
}

#[test]
fn preview_without_body_odd_size_and_bad_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.png");
    write_preview(&path, &curtain(), None, 201, 100).unwrap();
    let img = image::open(&path).unwrap().to_rgb8();
    assert_eq!(img.dimensions(), (201, 100));
    assert!(
        img.pixels().all(|p| grey(p.0) == (p.0 == BACKGROUND)),
        "no body"
    );
    let reddish = img
        .pixels()
        .filter(|p| i32::from(p.0[0]) > i32::from(p.0[2]) + 20)
        .count();
    assert!(reddish > 100, "{reddish} warp pixels");
    // The odd last column is background.
    assert!((0..100).all(|y| img.get_pixel(200, y).0 == BACKGROUND));
    let e = write_preview(&path, &curtain(), None, 1, 100)
        .unwrap_err()
        .to_string();
    assert!(e.contains("p.png") && e.contains("at least 2 x 1"), "{e}");
}
