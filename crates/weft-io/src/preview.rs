//! `preview.png`: front and side orthographic views of the yarns over the
//! body silhouette, so a user sees a drape without a renderer.
//!
//! The picture is `width × height` pixels split into two panels of
//! `width / 2`: on the left the **front** view (camera on +Z looking along
//! -Z: screen right = +X, up = +Y), on the right the **side** view (camera on
//! +X looking along -X: screen right = -Z, so the body faces left; up =
//! +Y). Both use the same scale, chosen so the bounding box of the body and
//! the yarns fills 90 % of a panel, centred. The body's triangles are filled
//! in [`BODY`] grey (a silhouette, no shading), then the yarn polylines drawn
//! over it as 1-pixel lines (Bresenham), warp in [`WARP`] red, weft in
//! [`WEFT`] blue, on a [`BACKGROUND`] white canvas. No text is drawn. The
//! PNG is encoded by the `image` crate and written atomically.

use crate::curves::YarnCurves;
use crate::mesh::TriMesh;
use crate::output::{OutputError, atomic_write};
use image::{ImageFormat, Rgb, RgbImage};
use std::io::Cursor;
use std::path::Path;
use weft_core::Family;

/// Background colour.
pub const BACKGROUND: [u8; 3] = [255, 255, 255];
/// Body silhouette colour (light grey).
pub const BODY: [u8; 3] = [200, 200, 200];
/// Warp yarn colour.
pub const WARP: [u8; 3] = [200, 30, 30];
/// Weft yarn colour.
pub const WEFT: [u8; 3] = [30, 70, 210];

/// Which panel of the preview.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// Left panel, seen from +Z.
    Front,
    /// Right panel, seen from +X.
    Side,
}

/// The orthographic projection of a preview: maps world points (m) to pixel
/// coordinates of either panel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Preview {
    /// Image width (pixels).
    pub width: u32,
    /// Image height (pixels).
    pub height: u32,
    /// Pixels per metre.
    pub scale: f64,
    /// World centre of the framed bounding box (m).
    pub center: [f64; 3],
}

impl Preview {
    /// Frames the bounding box of `curves` and `body` (module docs). An
    /// empty scene gets a 2 m box around the origin.
    pub fn fit(curves: &YarnCurves, body: Option<&TriMesh>, width: u32, height: u32) -> Self {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        let pts = curves
            .curves
            .iter()
            .flat_map(|c| c.points.iter())
            .chain(body.into_iter().flat_map(|b| b.vertices.iter()));
        for p in pts.filter(|p| p.iter().all(|c| c.is_finite())) {
            for a in 0..3 {
                lo[a] = lo[a].min(p[a]);
                hi[a] = hi[a].max(p[a]);
            }
        }
        if lo[0] > hi[0] {
            lo = [-1.0; 3];
            hi = [1.0; 3];
        }
        let ext = |a: usize| (hi[a] - lo[a]).max(1e-6);
        let panel_w = f64::from(width / 2);
        let scale = (0.9 * panel_w / ext(0).max(ext(2))).min(0.9 * f64::from(height) / ext(1));
        Self {
            width,
            height,
            scale,
            center: [
                0.5 * (lo[0] + hi[0]),
                0.5 * (lo[1] + hi[1]),
                0.5 * (lo[2] + hi[2]),
            ],
        }
    }

    /// Pixel coordinates `(column, row)` (fractional; row 0 at the top) of
    /// world point `p` (m) in `view`.
    pub fn project(&self, view: View, p: [f64; 3]) -> (f64, f64) {
        let half = f64::from(self.width / 2);
        let (h, x0) = match view {
            View::Front => (p[0] - self.center[0], 0.0),
            View::Side => (-(p[2] - self.center[2]), half),
        };
        let col = x0 + 0.5 * half + h * self.scale;
        let row = 0.5 * f64::from(self.height) - (p[1] - self.center[1]) * self.scale;
        (col, row)
    }

    /// Draws the picture (module docs).
    pub fn render(&self, curves: &YarnCurves, body: Option<&TriMesh>) -> RgbImage {
        let mut img = RgbImage::from_pixel(self.width, self.height, Rgb(BACKGROUND));
        let half = self.width / 2;
        for view in [View::Front, View::Side] {
            let (x_lo, x_hi) = match view {
                View::Front => (0, half),
                View::Side => (half, 2 * half),
            };
            if let Some(b) = body {
                for t in &b.triangles {
                    let q = t.map(|i| self.project(view, b.vertices[i as usize]));
                    fill_triangle(&mut img, q, x_lo, x_hi, Rgb(BODY));
                }
            }
            for c in &curves.curves {
                let colour = Rgb(match c.family {
                    Family::Warp => WARP,
                    Family::Weft => WEFT,
                });
                for w in c.points.windows(2) {
                    let (a, b) = (self.project(view, w[0]), self.project(view, w[1]));
                    draw_line(&mut img, a, b, x_lo, x_hi, colour);
                }
            }
        }
        img
    }
}

/// Writes `preview.png` (module docs) of size `width × height` pixels
/// (`width ≥ 2`, `height ≥ 1`) atomically.
///
/// # Errors
/// [`OutputError::Mismatch`] for a too-small size; [`OutputError::Io`]
/// (also for an encoder failure).
pub fn write_preview(
    path: impl AsRef<Path>,
    curves: &YarnCurves,
    body: Option<&TriMesh>,
    width: u32,
    height: u32,
) -> Result<(), OutputError> {
    let path = path.as_ref();
    if width < 2 || height < 1 {
        return Err(OutputError::Mismatch {
            path: path.to_path_buf(),
            message: format!("preview size must be at least 2 x 1 pixels, got {width} x {height}"),
        });
    }
    let img = Preview::fit(curves, body, width, height).render(curves, body);
    let mut bytes = Vec::new();
    img.write_to(&mut Cursor::new(&mut bytes), ImageFormat::Png)
        .map_err(|e| OutputError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other(e),
        })?;
    atomic_write(path, |w| w.write_all(&bytes))
}

fn put(img: &mut RgbImage, x: i64, y: i64, x_lo: u32, x_hi: u32, c: Rgb<u8>) {
    if x >= i64::from(x_lo) && x < i64::from(x_hi) && y >= 0 && y < i64::from(img.height()) {
        img.put_pixel(x as u32, y as u32, c);
    }
}

/// Fills the pixels whose centres lie inside the triangle (either winding),
/// clipped to columns `[x_lo, x_hi)`.
fn fill_triangle(img: &mut RgbImage, q: [(f64, f64); 3], x_lo: u32, x_hi: u32, c: Rgb<u8>) {
    if q.iter().any(|p| !(p.0.is_finite() && p.1.is_finite())) {
        return;
    }
    let min_x = q
        .iter()
        .map(|p| p.0)
        .fold(f64::INFINITY, f64::min)
        .floor()
        .max(f64::from(x_lo));
    let max_x = q
        .iter()
        .map(|p| p.0)
        .fold(f64::NEG_INFINITY, f64::max)
        .ceil()
        .min(f64::from(x_hi));
    let min_y = q
        .iter()
        .map(|p| p.1)
        .fold(f64::INFINITY, f64::min)
        .floor()
        .max(0.0);
    let max_y = q
        .iter()
        .map(|p| p.1)
        .fold(f64::NEG_INFINITY, f64::max)
        .ceil()
        .min(f64::from(img.height()));
    let edge = |a: (f64, f64), b: (f64, f64), p: (f64, f64)| {
        (b.0 - a.0) * (p.1 - a.1) - (b.1 - a.1) * (p.0 - a.0)
    };
    let area = edge(q[0], q[1], q[2]);
    if area == 0.0 {
        return;
    }
    for y in min_y as i64..max_y as i64 {
        for x in min_x as i64..max_x as i64 {
            let p = (x as f64 + 0.5, y as f64 + 0.5);
            let w = [
                edge(q[1], q[2], p),
                edge(q[2], q[0], p),
                edge(q[0], q[1], p),
            ];
            if w.iter().all(|v| v * area >= 0.0) {
                put(img, x, y, x_lo, x_hi, c);
            }
        }
    }
}

/// Bresenham line between pixel positions, clipped to columns `[x_lo, x_hi)`.
fn draw_line(img: &mut RgbImage, a: (f64, f64), b: (f64, f64), x_lo: u32, x_hi: u32, c: Rgb<u8>) {
    let ok = |v: f64| v.is_finite() && v.abs() < 1e7;
    if !(ok(a.0) && ok(a.1) && ok(b.0) && ok(b.1)) {
        return;
    }
    let (mut x0, mut y0) = (a.0.floor() as i64, a.1.floor() as i64);
    let (x1, y1) = (b.0.floor() as i64, b.1.floor() as i64);
    let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
    let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
    let mut err = dx + dy;
    loop {
        put(img, x0, y0, x_lo, x_hi, c);
        if x0 == x1 && y0 == y1 {
            break;
        }
        let e2 = 2 * err;
        if e2 >= dy {
            err += dy;
            x0 += sx;
        }
        if e2 <= dx {
            err += dx;
            y0 += sy;
        }
    }
}
