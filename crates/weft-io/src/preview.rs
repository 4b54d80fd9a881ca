//! `preview.png`: front and side orthographic views of the draped yarns on
//! the body, shaded, so a user sees a drape without a renderer.
//!
//! **Layout.** The picture is `width × height` pixels split into two panels
//! of `width / 2`: on the left the **front** view (camera on +Z looking along
//! -Z: screen right = +X, up = +Y), on the right the **side** view (camera on
//! +X looking along -X: screen right = -Z, so the body faces left; up =
//! +Y). Both use the same scale, chosen so the bounding box of the body and
//! the yarns fills 90 % of a panel, centred ([`Preview::fit`]). An odd
//! `width` leaves the last column background. No text is drawn.
//!
//! **Rasteriser.** Each panel is drawn by a z-buffered software rasteriser
//! at [`SUPERSAMPLE`]`²` samples per pixel (a depth buffer per view, depth
//! [`Preview::depth`] along the view direction), then box-filtered down to
//! the output pixels, which antialiases edges and blends yarns thinner than
//! a pixel into a cloth tone. The two views render on two threads. The
//! buffers take about 130 bytes per output pixel (140 MB at 1200 × 900);
//! the time grows with the yarns' length on screen (about 1.5 s for
//! 1.6 × 10⁶ nodes at 1 mm spacing, 1200 × 900, on two cores).
//!
//! 1. **Body**: every triangle is filled and Gouraud-shaded, [`BODY`] grey
//!    times the intensity [`shade`] of its smoothed vertex normals (the
//!    area-weighted mean of the adjacent face normals, oriented like the face
//!    and turned to the side the camera sees, so a mesh of either winding and
//!    an open mesh are lit on both sides).
//! 2. **Yarns**: every segment of every [`Curve`] polyline is drawn as a
//!    depth-tested line (a capsule of the samples whose centre lies within
//!    half the width of the segment) of width `max(`[`LINE_WIDTH`]`, 2 R ·
//!    scale)` output pixels (`R` the yarn radius), so at millimetre spacing
//!    (a few yarns per pixel) the yarns close into a surface. Runs of
//!    consecutive points closer than one sample on screen are merged into
//!    one segment. The colour is [`WARP`] or [`WEFT`] (a cloth tone tinted
//!    per family) times [`shade`] of the segment's **fabric normal** (the sum
//!    of the [`Curve::normals`] at its two ends; for a curve without normals,
//!    or where both are zero, the normal of the yarn as a tube facing the
//!    camera, i.e. the view direction made perpendicular to the segment).
//! 3. **Occlusion**: one depth buffer per view holds body and yarns; a yarn
//!    sample is drawn where it is nearer than what the buffer holds, with a
//!    tolerance over body pixels of one pixel (`1 / scale` m) plus the body's
//!    depth slope across half a line width, at most four pixels: cloth
//!    resting on the body (its centreline one yarn radius off the surface)
//!    is not lost to the rasterisation of a sloped or faceted body, while
//!    cloth behind the body is hidden.
//! 4. **Front cloth layer**: the yarns are drawn twice. The first pass
//!    finds the nearest yarn depth per sample (as in 3); the second gives a
//!    cloth sample the mean colour of all yarn segments that cover it
//!    within one pixel of depth (`1 / scale` m) behind that nearest one. At
//!    millimetre spacing several warp and weft yarns share a sample, and
//!    which of them is nearest follows the crimp at a sub-pixel scale: the
//!    mean gives the cloth tone that the eye would see instead of a moiré
//!    of family colours. Where yarns are pixels apart a sample holds one
//!    yarn and keeps its colour.
//!
//! **Lighting** ([`shade`]): one directional light from the camera's upper
//! left, `l = (-right + up + toward_camera) / √3` ([`View::light`]), plus
//! ambient: intensity `I = AMBIENT + (1 - AMBIENT) · max(0, n̂ · l)` with
//! the normal `n̂` first turned toward the camera (two-sided lighting: the
//! inside of a skirt is lit like the outside, and a surface that faces away
//! from the light gets the ambient term only).
//!
//! The PNG is encoded by the `image` crate and written atomically.

use crate::curves::{Curve, YarnCurves};
use crate::mesh::TriMesh;
use crate::output::{OutputError, atomic_write};
use image::{ImageFormat, Rgb, RgbImage};
use std::io::Cursor;
use std::path::Path;
use weft_core::Family;

/// Background colour (white).
pub const BACKGROUND: [u8; 3] = [255, 255, 255];
/// Body colour at full light (intensity 1; a body pixel is this times
/// [`shade`]).
pub const BODY: [u8; 3] = [205, 205, 205];
/// Warp yarn colour at full light: a light, desaturated red cloth tone.
pub const WARP: [u8; 3] = [235, 150, 135];
/// Weft yarn colour at full light: a light, desaturated blue cloth tone.
pub const WEFT: [u8; 3] = [140, 165, 235];
/// Ambient share of the light: the intensity of a surface the light does
/// not reach (dimensionless, in `[0, 1]`).
pub const AMBIENT: f64 = 0.3;
/// Least width of a drawn yarn (output pixels); thicker yarns are drawn at
/// their projected diameter.
pub const LINE_WIDTH: f64 = 1.5;
/// Samples per pixel along each axis of the rasteriser (module docs).
pub const SUPERSAMPLE: u32 = 2;

/// Which panel of the preview.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// Left panel, seen from +Z.
    Front,
    /// Right panel, seen from +X.
    Side,
}

impl View {
    /// Unit vector from the scene toward this view's camera: `+Z` for
    /// [`View::Front`], `+X` for [`View::Side`].
    pub fn toward_camera(self) -> [f64; 3] {
        match self {
            View::Front => [0.0, 0.0, 1.0],
            View::Side => [1.0, 0.0, 0.0],
        }
    }

    /// Unit world vector of screen right: `+X` (front), `-Z` (side).
    pub fn screen_right(self) -> [f64; 3] {
        match self {
            View::Front => [1.0, 0.0, 0.0],
            View::Side => [0.0, 0.0, -1.0],
        }
    }

    /// Unit vector toward the light of this view: from the camera's upper
    /// left, `(-right + up + toward_camera) / √3` (module docs), i.e.
    /// `(-1, 1, 1) / √3` for the front and `(1, 1, 1) / √3` for the side.
    pub fn light(self) -> [f64; 3] {
        let (r, v) = (self.screen_right(), self.toward_camera());
        let s = 1.0 / 3f64.sqrt();
        [
            s * (-r[0] + v[0]),
            s * (-r[1] + 1.0 + v[1]),
            s * (-r[2] + v[2]),
        ]
    }
}

/// Light intensity in `[AMBIENT, 1]` of a surface with normal `n` (any
/// length, either orientation) seen in `view`: `n` is normalised and turned
/// toward the camera, then `AMBIENT + (1 - AMBIENT) · max(0, n̂ · l)` with
/// `l` = [`View::light`] (module docs). A zero or non-finite `n` counts as
/// facing the camera.
pub fn shade(view: View, n: [f64; 3]) -> f64 {
    let v = view.toward_camera();
    let len = norm(n);
    let n = if len > 0.0 && len.is_finite() {
        let sign = if dot(n, v) < 0.0 { -1.0 } else { 1.0 };
        scaled(n, sign / len)
    } else {
        v
    };
    lambert(view, n)
}

/// `AMBIENT + (1 - AMBIENT) · max(0, n · l)` for a unit `n` already facing
/// the camera.
fn lambert(view: View, n: [f64; 3]) -> f64 {
    AMBIENT + (1.0 - AMBIENT) * dot(n, view.light()).max(0.0)
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

/// A rendered preview with what each pixel shows, for checks and tools.
/// The per-pixel vectors are row-major, `width × height` long: pixel
/// `(column, row)` is at index `row · width + column`.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendering {
    /// The picture (`width × height` RGB).
    pub image: RgbImage,
    /// Nearest depth (m, [`Preview::depth`]) over the pixel's samples that
    /// show body or yarn; `f32::INFINITY` where all show background.
    pub depth: Vec<f32>,
    /// Fraction of the pixel's samples showing the body, in `[0, 1]`.
    pub body: Vec<f32>,
    /// Fraction of the pixel's samples showing a yarn, in `[0, 1]`.
    pub cloth: Vec<f32>,
}

impl Rendering {
    /// Index of pixel `(column, row)` into the per-pixel vectors.
    ///
    /// # Panics
    /// If the pixel lies outside the image.
    pub fn index(&self, column: u32, row: u32) -> usize {
        assert!(
            column < self.image.width() && row < self.image.height(),
            "pixel ({column}, {row}) outside a {} x {} preview",
            self.image.width(),
            self.image.height()
        );
        row as usize * self.image.width() as usize + column as usize
    }
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
        let x0 = match view {
            View::Front => 0.0,
            View::Side => half,
        };
        let (col, row) = self.panel_xy(view, p);
        (x0 + col, row)
    }

    /// Depth (m) of world point `p` in `view`: its distance along the view
    /// direction from the plane through [`Preview::center`], positive away
    /// from the camera (`center_z - z` in front, `center_x - x` from the
    /// side). Nearer points have smaller depth.
    pub fn depth(&self, view: View, p: [f64; 3]) -> f64 {
        match view {
            View::Front => self.center[2] - p[2],
            View::Side => self.center[0] - p[0],
        }
    }

    /// Draws the picture (module docs); [`Preview::render_layers`]`.image`.
    pub fn render(&self, curves: &YarnCurves, body: Option<&TriMesh>) -> RgbImage {
        self.render_layers(curves, body).image
    }

    /// Draws the picture (module docs) and reports per pixel its depth and
    /// how much of it shows body and yarns.
    pub fn render_layers(&self, curves: &YarnCurves, body: Option<&TriMesh>) -> Rendering {
        let normals = body.map(vertex_normals);
        let body = body.zip(normals.as_deref());
        let (front, side) = std::thread::scope(|s| {
            let side = s.spawn(|| self.render_panel(View::Side, curves, body));
            let front = self.render_panel(View::Front, curves, body);
            (front, side.join().expect("side panel render panicked"))
        });
        let (w, h) = (self.width as usize, self.height as usize);
        let mut out = Rendering {
            image: RgbImage::from_pixel(self.width, self.height, Rgb(BACKGROUND)),
            depth: vec![f32::INFINITY; w * h],
            body: vec![0.0; w * h],
            cloth: vec![0.0; w * h],
        };
        let half = w / 2;
        for (panel, x0) in [(front, 0), (side, half)] {
            panel.resolve_into(&mut out, x0, half);
        }
        out
    }

    /// Panel pixel coordinates (fractional, without the panel's column
    /// offset) of world point `p`.
    fn panel_xy(&self, view: View, p: [f64; 3]) -> (f64, f64) {
        let half = f64::from(self.width / 2);
        let h = match view {
            View::Front => p[0] - self.center[0],
            View::Side => -(p[2] - self.center[2]),
        };
        (
            0.5 * half + h * self.scale,
            0.5 * f64::from(self.height) - (p[1] - self.center[1]) * self.scale,
        )
    }

    /// `(x, y, depth)` of world point `p` in the supersampled panel buffer
    /// (sample units, depth in m).
    fn sample_point(&self, view: View, p: [f64; 3]) -> [f64; 3] {
        let ss = f64::from(SUPERSAMPLE);
        let (x, y) = self.panel_xy(view, p);
        [ss * x, ss * y, self.depth(view, p)]
    }

    /// Rasterises one view (module docs) into a supersampled panel.
    fn render_panel(
        &self,
        view: View,
        curves: &YarnCurves,
        body: Option<(&TriMesh, &[[f64; 3]])>,
    ) -> Panel {
        let ss = SUPERSAMPLE as usize;
        let mut panel = Panel::new(ss * (self.width / 2) as usize, ss * self.height as usize);
        if let Some((mesh, normals)) = body {
            self.draw_body(&mut panel, view, mesh, normals, curves);
        }
        // Yarn depth first, then the colours of the front cloth layer.
        for c in &curves.curves {
            self.draw_curve(&mut panel, view, c, Pass::Depth);
        }
        let front = Pass::Colour {
            layer: (1.0 / self.scale) as f32,
        };
        for c in &curves.curves {
            self.draw_curve(&mut panel, view, c, front);
        }
        panel.finish_cloth();
        panel
    }

    /// Half the drawn width of a yarn of radius `radius` (output pixels).
    fn line_radius(&self, radius: f64) -> f64 {
        0.5 * LINE_WIDTH.max(2.0 * radius * self.scale)
    }

    fn draw_body(
        &self,
        panel: &mut Panel,
        view: View,
        mesh: &TriMesh,
        normals: &[[f64; 3]],
        curves: &YarnCurves,
    ) {
        let ss = f64::from(SUPERSAMPLE);
        let pixel = 1.0 / self.scale;
        // The widest line decides how far across the body slope cloth reaches.
        let reach = curves
            .curves
            .iter()
            .map(|c| self.line_radius(c.radius))
            .fold(0.5 * LINE_WIDTH, f64::max);
        let v = view.toward_camera();
        for t in &mesh.triangles {
            let p = t.map(|i| mesh.vertices[i as usize]);
            let face = cross(sub(p[1], p[0]), sub(p[2], p[0]));
            let facing = dot(face, v);
            if facing == 0.0 || !facing.is_finite() {
                continue; // edge-on (zero area on screen) or degenerate
            }
            let to_camera = facing.signum();
            let shade = [0, 1, 2].map(|k| {
                let vn = normals[t[k] as usize];
                let n = if vn == [0.0; 3] {
                    scaled(face, 1.0 / norm(face))
                } else if dot(vn, face) < 0.0 {
                    scaled(vn, -1.0)
                } else {
                    vn
                };
                lambert(view, scaled(n, to_camera))
            });
            let q = p.map(|x| self.sample_point(view, x));
            let colour = shade.map(|s| BODY.map(|c| f64::from(c) * s));
            panel.fill_triangle(q, colour, |slope| {
                (pixel + reach * ss * slope).min(4.0 * pixel)
            });
        }
    }

    fn draw_curve(&self, panel: &mut Panel, view: View, c: &Curve, pass: Pass) {
        let pts = &c.points;
        if pts.len() < 2 {
            return;
        }
        let has_normals = c.normals.len() == pts.len();
        let r = f64::from(SUPERSAMPLE) * self.line_radius(c.radius);
        let base = match c.family {
            Family::Warp => WARP,
            Family::Weft => WEFT,
        };
        let v = view.toward_camera();
        let finite = |q: [f64; 3]| q.iter().all(|x| x.is_finite());
        let mut a = 0;
        let mut qa = self.sample_point(view, pts[0]);
        for k in 1..pts.len() {
            let qk = self.sample_point(view, pts[k]);
            if !(finite(qa) && finite(qk)) {
                (a, qa) = (k, qk);
                continue;
            }
            let (dx, dy) = (qk[0] - qa[0], qk[1] - qa[1]);
            if dx * dx + dy * dy < 1.0 && k + 1 < pts.len() {
                continue; // merge runs shorter than one sample
            }
            let mut n = if has_normals {
                add(c.normals[a], c.normals[k])
            } else {
                [0.0; 3]
            };
            let len = norm(n);
            if len.is_nan() || len <= 1e-9 {
                // A tube: the view direction made perpendicular to the yarn.
                let t = sub(pts[k], pts[a]);
                let tt = dot(t, t);
                n = if tt > 0.0 {
                    sub(v, scaled(t, dot(v, t) / tt))
                } else {
                    v
                };
            }
            let s = shade(view, n);
            panel.draw_capsule(qa, qk, r, pass, base.map(|c| (f64::from(c) * s) as f32));
            (a, qa) = (k, qk);
        }
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

/// What a sample shows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layer {
    Background,
    Body,
    Cloth,
}

/// A pass over the yarns (module docs).
#[derive(Clone, Copy)]
enum Pass {
    /// Find the nearest yarn per sample.
    Depth,
    /// Average the colours of the yarns within `layer` (m) behind it.
    Colour { layer: f32 },
}

/// One view's supersampled buffers, row-major `w × h` samples.
struct Panel {
    w: usize,
    h: usize,
    /// Depth (m) of what the sample shows, `INFINITY` for background.
    depth: Vec<f32>,
    /// Extra depth (m) by which yarns may lie behind a body sample and
    /// still be drawn (module docs); 0 elsewhere.
    bias: Vec<f32>,
    colour: Vec<[u8; 3]>,
    layer: Vec<Layer>,
    /// Sum of the front-layer yarn colours (RGB) and their count.
    cloth: Vec<[f32; 4]>,
}

impl Panel {
    fn new(w: usize, h: usize) -> Self {
        Self {
            w,
            h,
            depth: vec![f32::INFINITY; w * h],
            bias: vec![0.0; w * h],
            colour: vec![BACKGROUND; w * h],
            layer: vec![Layer::Background; w * h],
            cloth: vec![[0.0; 4]; w * h],
        }
    }

    /// Sample ranges `[lo, hi)` covering `[min - pad, max + pad]` of the
    /// given coordinates, clipped to the panel; `None` when empty.
    fn span(&self, xs: &[f64], ys: &[f64], pad: f64) -> Option<(usize, usize, usize, usize)> {
        let lo = |v: &[f64], n: usize| {
            (v.iter().copied().fold(f64::INFINITY, f64::min) - pad)
                .floor()
                .clamp(0.0, n as f64) as usize
        };
        let hi = |v: &[f64], n: usize| {
            (v.iter().copied().fold(f64::NEG_INFINITY, f64::max) + pad)
                .ceil()
                .clamp(0.0, n as f64) as usize
        };
        let (x0, x1, y0, y1) = (
            lo(xs, self.w),
            hi(xs, self.w),
            lo(ys, self.h),
            hi(ys, self.h),
        );
        (x0 < x1 && y0 < y1).then_some((x0, x1, y0, y1))
    }

    /// Fills the samples whose centres lie inside the triangle `q` (`[x, y,
    /// depth]` per corner, either winding) where it is nearest, Gouraud
    /// colour from the corner colours (0-255 floats); `bias(slope)` gives
    /// the yarn tolerance of the triangle from its depth slope (m per
    /// sample).
    fn fill_triangle(
        &mut self,
        q: [[f64; 3]; 3],
        colour: [[f64; 3]; 3],
        bias: impl Fn(f64) -> f64,
    ) {
        if q.iter().flatten().any(|v| !v.is_finite()) {
            return;
        }
        let edge = |a: [f64; 3], b: [f64; 3], x: f64, y: f64| {
            (b[0] - a[0]) * (y - a[1]) - (b[1] - a[1]) * (x - a[0])
        };
        let area = edge(q[0], q[1], q[2][0], q[2][1]);
        if area == 0.0 {
            return;
        }
        let Some((x0, x1, y0, y1)) = self.span(&q.map(|p| p[0]), &q.map(|p| p[1]), 0.0) else {
            return;
        };
        // Depth plane d(x, y): its gradient sets the yarn tolerance.
        let (e1, e2) = (sub(q[1], q[0]), sub(q[2], q[0]));
        let gx = (e1[2] * e2[1] - e2[2] * e1[1]) / area;
        let gy = (e2[2] * e1[0] - e1[2] * e2[0]) / area;
        let tol = bias(gx.hypot(gy)) as f32;
        let inv = 1.0 / area;
        for y in y0..y1 {
            let py = y as f64 + 0.5;
            for x in x0..x1 {
                let px = x as f64 + 0.5;
                let w = [
                    edge(q[1], q[2], px, py) * inv,
                    edge(q[2], q[0], px, py) * inv,
                    edge(q[0], q[1], px, py) * inv,
                ];
                if w.iter().any(|&b| b < 0.0) {
                    continue;
                }
                let d = (w[0] * q[0][2] + w[1] * q[1][2] + w[2] * q[2][2]) as f32;
                let i = y * self.w + x;
                if d < self.depth[i] {
                    self.depth[i] = d;
                    self.bias[i] = tol;
                    self.layer[i] = Layer::Body;
                    self.colour[i] = [0, 1, 2].map(|c| {
                        (w[0] * colour[0][c] + w[1] * colour[1][c] + w[2] * colour[2][c])
                            .round()
                            .clamp(0.0, 255.0) as u8
                    });
                }
            }
        }
    }

    /// Visits the samples within `r` (samples) of segment `a`-`b` (`[x, y,
    /// depth]`), the depth taken along the segment at the nearest point:
    /// [`Pass::Depth`] marks them cloth at that depth where nearer than what
    /// the panel holds (plus the body tolerance); [`Pass::Colour`] adds
    /// `colour` (0-255) to the samples whose cloth it lies within `layer`
    /// of.
    fn draw_capsule(&mut self, a: [f64; 3], b: [f64; 3], r: f64, pass: Pass, colour: [f32; 3]) {
        let Some((x0, x1, y0, y1)) = self.span(&[a[0], b[0]], &[a[1], b[1]], r) else {
            return;
        };
        let (ex, ey) = (b[0] - a[0], b[1] - a[1]);
        let len2 = ex * ex + ey * ey;
        let r2 = r * r;
        for y in y0..y1 {
            let py = y as f64 + 0.5;
            for x in x0..x1 {
                let px = x as f64 + 0.5;
                let (t, d) = if len2 > 1e-12 {
                    let t = (((px - a[0]) * ex + (py - a[1]) * ey) / len2).clamp(0.0, 1.0);
                    (t, a[2] + t * (b[2] - a[2]))
                } else {
                    (0.0, a[2].min(b[2]))
                };
                let (cx, cy) = (a[0] + t * ex - px, a[1] + t * ey - py);
                if cx * cx + cy * cy > r2 {
                    continue;
                }
                let i = y * self.w + x;
                let d = d as f32;
                match pass {
                    Pass::Depth => {
                        if d < self.depth[i] + self.bias[i] {
                            self.depth[i] = d;
                            self.bias[i] = 0.0;
                            self.layer[i] = Layer::Cloth;
                        }
                    }
                    Pass::Colour { layer } => {
                        if self.layer[i] == Layer::Cloth && d <= self.depth[i] + layer {
                            let acc = &mut self.cloth[i];
                            for c in 0..3 {
                                acc[c] += colour[c];
                            }
                            acc[3] += 1.0;
                        }
                    }
                }
            }
        }
    }

    /// Sets each cloth sample to the mean colour of its front layer.
    fn finish_cloth(&mut self) {
        for (i, acc) in self.cloth.iter().enumerate() {
            if self.layer[i] == Layer::Cloth && acc[3] > 0.0 {
                self.colour[i] =
                    [0, 1, 2].map(|c| (acc[c] / acc[3]).round().clamp(0.0, 255.0) as u8);
            }
        }
    }

    /// Box-filters the panel into columns `[x0, x0 + half)` of `out`.
    fn resolve_into(&self, out: &mut Rendering, x0: usize, half: usize) {
        let ss = SUPERSAMPLE as usize;
        let n = (ss * ss) as f32;
        let width = out.image.width() as usize;
        for row in 0..self.h / ss {
            for col in 0..half {
                let (mut rgb, mut depth, mut body, mut cloth) = ([0u32; 3], f32::INFINITY, 0, 0);
                for sy in 0..ss {
                    for sx in 0..ss {
                        let i = (row * ss + sy) * self.w + col * ss + sx;
                        for c in 0..3 {
                            rgb[c] += u32::from(self.colour[i][c]);
                        }
                        depth = depth.min(self.depth[i]);
                        match self.layer[i] {
                            Layer::Body => body += 1,
                            Layer::Cloth => cloth += 1,
                            Layer::Background => {}
                        }
                    }
                }
                let k = (ss * ss) as u32;
                let px = rgb.map(|v| ((v + k / 2) / k) as u8);
                out.image.put_pixel((x0 + col) as u32, row as u32, Rgb(px));
                let j = row * width + x0 + col;
                out.depth[j] = depth;
                out.body[j] = body as f32 / n;
                out.cloth[j] = cloth as f32 / n;
            }
        }
    }
}

/// Unit vertex normals: the area-weighted mean of the adjacent triangles'
/// normals (as wound); `[0, 0, 0]` where they cancel or none is adjacent.
fn vertex_normals(mesh: &TriMesh) -> Vec<[f64; 3]> {
    let mut n = vec![[0.0; 3]; mesh.vertices.len()];
    for t in &mesh.triangles {
        let p = t.map(|i| mesh.vertices[i as usize]);
        let face = cross(sub(p[1], p[0]), sub(p[2], p[0]));
        if face.iter().all(|c| c.is_finite()) {
            for &i in t {
                n[i as usize] = add(n[i as usize], face);
            }
        }
    }
    for v in &mut n {
        let len = norm(*v);
        *v = if len > 1e-300 {
            scaled(*v, 1.0 / len)
        } else {
            [0.0; 3]
        };
    }
    n
}

fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn scaled(a: [f64; 3], s: f64) -> [f64; 3] {
    [a[0] * s, a[1] * s, a[2] * s]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn norm(a: [f64; 3]) -> f64 {
    dot(a, a).sqrt()
}
