//! preview.png: a PNG of the stated size with the body in grey and the
//! yarns in their family colours where they project.

use weft_core::Family;
use weft_io::preview::{BACKGROUND, BODY, WARP, WEFT};
use weft_io::{Curve, Preview, View, YarnCurves, mannequin, write_preview};

/// A curtain of 11 warp (vertical) and 11 weft (horizontal) yarns, 4 cm
/// apart, 25 cm in front of the body at chest height.
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
fn preview_is_a_png_with_grey_body_and_coloured_yarns() {
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
    let px = |view: View, p: [f64; 3]| {
        let (c, r) = pv.project(view, p);
        img.get_pixel(c.floor() as u32, r.floor() as u32).0
    };
    // Body: the belly (front) and the thigh (side), where no yarn passes.
    assert_eq!(px(View::Front, [0.0, 0.75, 0.0]), BODY, "front, hips");
    assert_eq!(px(View::Front, [0.02, 1.5, 0.0]), BODY, "front, head");
    assert_eq!(px(View::Side, [0.0, 0.5, 0.0]), BODY, "side, leg");
    // Yarns: midway between crossings, a warp is red, a weft blue (front).
    assert_eq!(px(View::Front, [-0.2, 0.92, 0.25]), WARP);
    assert_eq!(px(View::Front, [0.12, 1.16, 0.25]), WARP);
    assert_eq!(px(View::Front, [-0.18, 0.9, 0.25]), WEFT);
    assert_eq!(px(View::Front, [0.1, 1.3, 0.25]), WEFT);
    // Side: the curtain is seen edge-on, in front of (left of) the body.
    let side = px(View::Side, [0.0, 1.0, 0.25]);
    assert!(
        side == WARP || side == WEFT,
        "side view yarn pixel {side:?}"
    );
    let (c_yarn, _) = pv.project(View::Side, [0.0, 1.0, 0.25]);
    let (c_body, _) = pv.project(View::Side, [0.0, 1.0, 0.0]);
    assert!(c_yarn < c_body, "body faces +Z = left in the side view");
    // Background in the corners, and views stay in their halves.
    assert_eq!(img.get_pixel(0, 0).0, BACKGROUND);
    assert_eq!(img.get_pixel(w - 1, h - 1).0, BACKGROUND);
    let (cf, _) = pv.project(View::Front, [0.0, 1.0, 0.0]);
    assert!(cf < f64::from(w / 2) && c_body >= f64::from(w / 2));
    // Roughly the body's share: its silhouette covers 5-30 % of the image.
    let grey = img.pixels().filter(|p| p.0 == BODY).count() as f64 / f64::from(w * h);
    assert!((0.05..0.3).contains(&grey), "body fraction {grey}");
}

#[test]
fn preview_without_body_and_bad_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.png");
    write_preview(&path, &curtain(), None, 200, 100).unwrap();
    let img = image::open(&path).unwrap().to_rgb8();
    assert_eq!(img.dimensions(), (200, 100));
    assert_eq!(img.pixels().filter(|p| p.0 == BODY).count(), 0);
    assert!(img.pixels().filter(|p| p.0 == WARP).count() > 100);
    let e = write_preview(&path, &curtain(), None, 1, 100)
        .unwrap_err()
        .to_string();
    assert!(e.contains("p.png") && e.contains("at least 2 x 1"), "{e}");
}
