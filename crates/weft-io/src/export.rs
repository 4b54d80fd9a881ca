//! Curve files for renderers, written atomically ([`crate::atomic_write`]).
//!
//! All writers take [`YarnCurves`] (m) and write coordinates in metres, Y up.
//! Which point set to pass (see [`crate::curves`]): the formats a renderer
//! evaluates as cubic splines ([`write_bcc`], [`write_usda_curves`]) want the
//! crimped control points (`samples_per_segment = 1`); the piecewise-linear
//! ones ([`write_obj_polylines`], [`write_obj_tubes`], [`write_mitsuba_curves`]
//! for Mitsuba's `linearcurve`) want the smoothed samples.
//!
//! | writer | format |
//! |---|---|
//! | [`write_bcc`] | Cem Yuksel's Binary Curve Collection (`.bcc`), curve type `C0` |
//! | [`write_mitsuba_curves`] | Mitsuba 3 curve text file: `x y z radius` per line, a blank line between curves |
//! | [`write_obj_polylines`] | Wavefront OBJ: `v` lines, one `l` line per curve |
//! | [`write_obj_tubes`] | Wavefront OBJ triangle mesh: a tube per curve with `vn` normals |
//! | [`write_mitsuba_scene`] | Mitsuba 3 scene (`scene.xml`): the curve file as a `linearcurve`, a body, camera and lights |
//! | [`write_usda_curves`] | USD ASCII (`.usda`): one `BasisCurves` prim, cubic Catmull-Rom, `widths` |

use crate::curves::{Curve, YarnCurves};
use crate::output::{OutputError, atomic_write};
use nalgebra::Vector3;
use std::io::{self, Write};
use std::path::Path;

/// Size of the BCC header in bytes.
pub const BCC_HEADER_BYTES: usize = 64;

/// Writes a Binary Curve Collection file (Cem Yuksel, the format of the
/// yarn-level cloth models at <https://www.cemyuksel.com/research/yarnmodels/>).
/// Layout (all little-endian), as read by the reference loader of those
/// models:
///
/// | offset | size | field | value written |
/// |---|---|---|---|
/// | 0 | 3 | signature | `BCC` |
/// | 3 | 1 | bytes per value | `0x44` (4-byte integers, 4-byte floats) |
/// | 4 | 2 | curve type | `C0` (uniform Catmull-Rom) |
/// | 6 | 1 | dimensions | 3 |
/// | 7 | 1 | up dimension | 1 (Y) |
/// | 8 | 8 | curve count | u64 |
/// | 16 | 8 | total control points | u64 |
/// | 24 | 40 | file info | ASCII, zero-padded |
/// | 64 | … | per curve: control-point count (i32, negative for a closed loop; always positive here), then `count × 3` f32 | |
///
/// Coordinates are rounded to `f32`. The format has no radius field: the
/// yarn radius is a renderer setting.
///
/// # Errors
/// [`OutputError::Mismatch`] if a curve has more than `i32::MAX` points;
/// [`OutputError::Io`].
pub fn write_bcc(path: impl AsRef<Path>, curves: &YarnCurves) -> Result<(), OutputError> {
    let path = path.as_ref();
    if let Some(c) = curves
        .curves
        .iter()
        .find(|c| c.points.len() > i32::MAX as usize)
    {
        return Err(OutputError::Mismatch {
            path: path.to_path_buf(),
            message: format!(
                "yarn {} has {} points; BCC stores at most {} per curve",
                c.yarn,
                c.points.len(),
                i32::MAX
            ),
        });
    }
    atomic_write(path, |w| {
        let mut header = [0u8; BCC_HEADER_BYTES];
        header[..3].copy_from_slice(b"BCC");
        header[3] = 0x44;
        header[4..6].copy_from_slice(b"C0");
        header[6] = 3;
        header[7] = 1;
        header[8..16].copy_from_slice(&(curves.curves.len() as u64).to_le_bytes());
        header[16..24].copy_from_slice(&(curves.point_count() as u64).to_le_bytes());
        let info = b"weft yarn curves, metres, Y up";
        header[24..24 + info.len()].copy_from_slice(info);
        w.write_all(&header)?;
        for c in &curves.curves {
            w.write_all(&(c.points.len() as i32).to_le_bytes())?;
            for p in &c.points {
                for v in p {
                    w.write_all(&(*v as f32).to_le_bytes())?;
                }
            }
        }
        Ok(())
    })
}

/// Writes a Mitsuba 3 curve text file (the input of the `linearcurve` and
/// `bsplinecurve` shapes): one control point per line as `x y z radius`
/// (m), a blank line between curves.
///
/// # Errors
/// [`OutputError::Io`].
pub fn write_mitsuba_curves(
    path: impl AsRef<Path>,
    curves: &YarnCurves,
) -> Result<(), OutputError> {
    atomic_write(path.as_ref(), |w| {
        for (i, c) in curves.curves.iter().enumerate() {
            if i > 0 {
                w.write_all(b"\n")?;
            }
            for p in &c.points {
                writeln!(w, "{} {} {} {}", p[0], p[1], p[2], c.radius)?;
            }
        }
        Ok(())
    })
}

/// A Mitsuba 3 scene around a garment's curves ([`write_mitsuba_scene`]).
#[derive(Clone, Debug, PartialEq)]
pub struct MitsubaScene<'a> {
    /// The curve file ([`write_mitsuba_curves`]), as named from the
    /// scene's folder (e.g. `yarns.txt`).
    pub curves_file: &'a str,
    /// A body mesh (OBJ, as named from the scene's folder), if any.
    pub body_file: Option<&'a str>,
    /// The box to frame (m): `(min, max)`, usually the garment's.
    pub frame: ([f64; 3], [f64; 3]),
    /// Image width and height (pixels).
    pub size: [u32; 2],
    /// Samples per pixel.
    pub samples: u32,
}

/// Writes a Mitsuba 3 scene file (XML, `version="3.0.0"`) that renders with
/// `mitsuba FILE` or `mi.render(mi.load_file(FILE))`: the curves as a
/// `linearcurve` shape (its radii from the curve file) with a diffuse
/// cotton-red material, the body as an `obj` shape in light grey, a
/// perspective camera (30° field of view, `+y` up) looking at the centre of
/// `scene.frame` from the front (`+z`) at a distance that fits the box with
/// a margin, a path tracer, a constant environment and a directional light
/// from above-front. The sample count and image size are the scene's
/// defaults `spp`, `width` and `height` (`mitsuba -D spp=256 scene.xml`).
///
/// # Errors
/// [`OutputError::Io`].
pub fn write_mitsuba_scene(
    path: impl AsRef<Path>,
    scene: &MitsubaScene,
) -> Result<(), OutputError> {
    let (lo, hi) = scene.frame;
    let c: [f64; 3] = std::array::from_fn(|k| 0.5 * (lo[k] + hi[k]));
    let half = (0..3)
        .map(|k| 0.5 * (hi[k] - lo[k]))
        .fold(0.0, f64::max)
        .max(1e-3);
    let fov = 30.0f64;
    let [width, height] = scene.size;
    // Fit the box's largest half extent in the narrower field of view.
    let aspect = width as f64 / height.max(1) as f64;
    let narrow = (fov.to_radians() / 2.0).tan() * aspect.min(1.0);
    let distance = 1.3 * half / narrow + half;
    let xml_escape = |t: &str| {
        t.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    // A shape from a file with a diffuse material.
    let shape = |kind: &str, file: &str, rgb: &str| {
        format!(
            r#"    <shape type="{kind}">
        <string name="filename" value="{}"/>
        <bsdf type="diffuse">
            <rgb name="reflectance" value="{rgb}"/>
        </bsdf>
    </shape>
"#,
            xml_escape(file)
        )
    };
    let curves = shape("linearcurve", scene.curves_file, "0.65, 0.22, 0.18");
    let body = scene
        .body_file
        .map(|b| shape("obj", b, "0.6, 0.6, 0.6"))
        .unwrap_or_default();
    let (spp, z) = (scene.samples, c[2] + distance);
    let (cx, cy, cz) = (c[0], c[1], c[2]);
    atomic_write(path.as_ref(), |w| {
        write!(
            w,
            r#"<scene version="3.0.0">
    <!-- written by weft: yarn curves on a body -->
    <default name="spp" value="{spp}"/>
    <default name="width" value="{width}"/>
    <default name="height" value="{height}"/>
    <integrator type="path">
        <integer name="max_depth" value="6"/>
    </integrator>
    <sensor type="perspective">
        <float name="fov" value="{fov}"/>
        <transform name="to_world">
            <lookat origin="{cx}, {cy}, {z}" target="{cx}, {cy}, {cz}" up="0, 1, 0"/>
        </transform>
        <sampler type="independent">
            <integer name="sample_count" value="$spp"/>
        </sampler>
        <film type="hdrfilm">
            <integer name="width" value="$width"/>
            <integer name="height" value="$height"/>
        </film>
    </sensor>
{curves}{body}    <emitter type="constant">
        <rgb name="radiance" value="0.4"/>
    </emitter>
    <emitter type="directional">
        <vector name="direction" value="-0.3, -1, -0.5"/>
        <rgb name="irradiance" value="2.5"/>
    </emitter>
</scene>
"#
        )?;
        Ok(())
    })
}

/// Writes the curves as Wavefront OBJ polylines: all points as `v x y z`
/// lines (curve after curve), then one `l` line per curve through its
/// points (1-based indices), preceded by `o warp_K` / `o weft_K` naming the
/// yarn index K.
///
/// # Errors
/// [`OutputError::Io`].
pub fn write_obj_polylines(path: impl AsRef<Path>, curves: &YarnCurves) -> Result<(), OutputError> {
    atomic_write(path.as_ref(), |w| {
        writeln!(
            w,
            "# weft yarn curves: {} curves, {} points (m, Y up)",
            curves.curves.len(),
            curves.point_count()
        )?;
        for c in &curves.curves {
            for p in &c.points {
                writeln!(w, "v {} {} {}", p[0], p[1], p[2])?;
            }
        }
        let mut base = 1;
        for c in &curves.curves {
            writeln!(w, "o {}", object_name(c))?;
            w.write_all(b"l")?;
            for k in 0..c.points.len() {
                write!(w, " {}", base + k)?;
            }
            w.write_all(b"\n")?;
            base += c.points.len();
        }
        Ok(())
    })
}

fn object_name(c: &Curve) -> String {
    match c.family {
        weft_core::Family::Warp => format!("warp_{}", c.yarn),
        weft_core::Family::Weft => format!("weft_{}", c.yarn),
    }
}

/// A tube around one curve: ring vertices, their outward unit normals and
/// the unit tangent at each ring, from [`tube_rings`].
#[derive(Clone, Debug, PartialEq)]
pub struct TubeRings {
    /// `points × sides` vertices (m), ring after ring; vertex `k` of ring `i`
    /// is at `i · sides + k`.
    pub vertices: Vec<Vector3<f64>>,
    /// Outward unit normal per vertex (radial direction of the ring).
    pub normals: Vec<Vector3<f64>>,
    /// Unit tangent per ring.
    pub tangents: Vec<Vector3<f64>>,
}

/// Rings of a tube of radius `radius` (m) with `sides ≥ 3` vertices each
/// around the polyline `points` (at least 2 points, consecutive points
/// distinct). Frames are propagated by parallel transport (the double
/// reflection method of Wang, Jüttler, Zheng & Liu, "Computation of rotation
/// minimizing frames", ACM TOG 27(1), 2008), so the tube does not twist; the
/// first frame's normal is the coordinate axis least aligned with the first
/// tangent, made orthogonal. Ring vertex `k` is at
/// `p + R (cos θ_k n + sin θ_k b)`, `θ_k = 2πk / sides`, `b = t × n`: the ring
/// runs counter-clockwise seen from the tangent's head. Tangents are central
/// differences (one-sided at the ends); a zero-length tangent reuses the
/// previous one.
pub fn tube_rings(points: &[[f64; 3]], radius: f64, sides: usize) -> TubeRings {
    let p: Vec<Vector3<f64>> = points.iter().map(|&q| Vector3::from(q)).collect();
    let n = p.len();
    let mut tangents = Vec::with_capacity(n);
    let mut last = Vector3::x();
    for i in 0..n {
        let d = p[(i + 1).min(n - 1)] - p[i.saturating_sub(1)];
        if d.norm() > 0.0 {
            last = d.normalize();
        }
        tangents.push(last);
    }
    let t0 = tangents[0];
    let axis = [Vector3::x(), Vector3::y(), Vector3::z()]
        .into_iter()
        .min_by(|a, b| a.dot(&t0).abs().total_cmp(&b.dot(&t0).abs()))
        .unwrap_or_else(Vector3::x);
    let mut r = (axis - t0 * axis.dot(&t0)).normalize();
    let mut frames = Vec::with_capacity(n);
    frames.push(r);
    for i in 0..n.saturating_sub(1) {
        // Double reflection: reflect across the bisector plane of the step,
        // then across the plane between the reflected and the next tangent.
        let v1 = p[i + 1] - p[i];
        let c1 = v1.dot(&v1);
        if c1 == 0.0 {
            frames.push(r);
            continue;
        }
        let r_l = r - v1 * (2.0 / c1 * v1.dot(&r));
        let t_l = tangents[i] - v1 * (2.0 / c1 * v1.dot(&tangents[i]));
        let v2 = tangents[i + 1] - t_l;
        let c2 = v2.dot(&v2);
        r = if c2 > 0.0 {
            r_l - v2 * (2.0 / c2 * v2.dot(&r_l))
        } else {
            r_l
        };
        // Keep it exactly orthonormal to the tangent against drift.
        let t = tangents[i + 1];
        r = (r - t * r.dot(&t)).normalize();
        frames.push(r);
    }
    let mut vertices = Vec::with_capacity(n * sides);
    let mut normals = Vec::with_capacity(n * sides);
    for i in 0..n {
        let (t, nn) = (tangents[i], frames[i]);
        let b = t.cross(&nn);
        for k in 0..sides {
            let th = std::f64::consts::TAU * k as f64 / sides as f64;
            let d = nn * th.cos() + b * th.sin();
            vertices.push(p[i] + d * radius);
            normals.push(d);
        }
    }
    TubeRings {
        vertices,
        normals,
        tangents,
    }
}

/// Writes one tube mesh per curve as a Wavefront OBJ (`o warp_K`/`o weft_K`
/// per yarn): `points × sides` vertices per curve ([`tube_rings`], radius =
/// the curve's yarn radius), one `vn` per vertex (the outward radial unit
/// normal, same index as its vertex) plus two per curve for the end caps
/// (`-t₀` and `+t_last`), faces `f v//vn`. The side wall is
/// `2 · sides · (points - 1)` triangles wound counter-clockwise seen from
/// outside; each end is closed by a fan of `sides - 2` triangles over the end
/// ring (no extra vertices), so every tube is a closed surface. Curves with
/// fewer than two points are skipped.
///
/// # Errors
/// [`OutputError::Mismatch`] for `sides < 3`; [`OutputError::Io`].
pub fn write_obj_tubes(
    path: impl AsRef<Path>,
    curves: &YarnCurves,
    sides: usize,
) -> Result<(), OutputError> {
    let path = path.as_ref();
    if sides < 3 {
        return Err(OutputError::Mismatch {
            path: path.to_path_buf(),
            message: format!("a tube needs at least 3 sides, got {sides}"),
        });
    }
    atomic_write(path, |w| {
        writeln!(
            w,
            "# weft yarn tubes: {} curves, {sides} sides (m, Y up)",
            curves.curves.len()
        )?;
        let (mut vbase, mut nbase) = (1usize, 1usize);
        for c in curves.curves.iter().filter(|c| c.points.len() >= 2) {
            let rings = tube_rings(&c.points, c.radius, sides);
            writeln!(w, "o {}", object_name(c))?;
            for v in &rings.vertices {
                writeln!(w, "v {} {} {}", v.x, v.y, v.z)?;
            }
            for nrm in &rings.normals {
                writeln!(w, "vn {} {} {}", nrm.x, nrm.y, nrm.z)?;
            }
            let (t0, t1) = (rings.tangents[0], rings.tangents[rings.tangents.len() - 1]);
            writeln!(w, "vn {} {} {}", -t0.x, -t0.y, -t0.z)?;
            writeln!(w, "vn {} {} {}", t1.x, t1.y, t1.z)?;
            let m = c.points.len();
            let idx = |i: usize, k: usize| i * sides + (k % sides);
            let face = |w: &mut dyn Write, a: usize, b: usize, cc: usize| -> io::Result<()> {
                writeln!(
                    w,
                    "f {}//{} {}//{} {}//{}",
                    vbase + a,
                    nbase + a,
                    vbase + b,
                    nbase + b,
                    vbase + cc,
                    nbase + cc
                )
            };
            for i in 0..m - 1 {
                for k in 0..sides {
                    face(w, idx(i, k), idx(i, k + 1), idx(i + 1, k))?;
                    face(w, idx(i, k + 1), idx(i + 1, k + 1), idx(i + 1, k))?;
                }
            }
            let cap =
                |w: &mut dyn Write, ring: usize, normal: usize, rev: bool| -> io::Result<()> {
                    for k in 1..sides - 1 {
                        let (a, b, cc) = (idx(ring, 0), idx(ring, k), idx(ring, k + 1));
                        let (b, cc) = if rev { (cc, b) } else { (b, cc) };
                        writeln!(
                            w,
                            "f {}//{n} {}//{n} {}//{n}",
                            vbase + a,
                            vbase + b,
                            vbase + cc,
                            n = nbase + normal
                        )?;
                    }
                    Ok(())
                };
            // Start cap faces -t (clockwise seen from the tangent's head),
            // end cap faces +t (counter-clockwise).
            cap(w, 0, m * sides, true)?;
            cap(w, m - 1, m * sides + 1, false)?;
            vbase += m * sides;
            nbase += m * sides + 2;
        }
        Ok(())
    })
}

/// Writes a USD ASCII layer (`#usda 1.0`, `upAxis = "Y"`,
/// `metersPerUnit = 1`) with one `BasisCurves` prim `/Yarns` holding all
/// curves: `type = "cubic"`, `basis = "catmullRom"`, `wrap = "pinned"` (the
/// renderer adds phantom points so each curve starts and ends at its first
/// and last point; OpenUSD ≥ 21.11), `curveVertexCounts`, `points` (m) and
/// `widths` (the yarn diameter `2R` per vertex, `interpolation =
/// "vertex"`), plus a per-curve `primvars:family` (`0` warp, `1` weft,
/// `interpolation = "uniform"`) for shading, and the prim's `extent`: the
/// box around the points grown by the largest half width, as
/// `UsdGeom.Curves.ComputeExtent` computes it (renderers and the USD
/// compliance checker read it; without it a viewer must compute it).
///
/// # Errors
/// [`OutputError::Io`].
pub fn write_usda_curves(path: impl AsRef<Path>, curves: &YarnCurves) -> Result<(), OutputError> {
    atomic_write(path.as_ref(), |w| {
        writeln!(w, "#usda 1.0")?;
        writeln!(
            w,
            "(\n    defaultPrim = \"Yarns\"\n    metersPerUnit = 1\n    upAxis = \"Y\"\n)\n"
        )?;
        writeln!(w, "def BasisCurves \"Yarns\"\n{{")?;
        writeln!(w, "    uniform token type = \"cubic\"")?;
        writeln!(w, "    uniform token basis = \"catmullRom\"")?;
        writeln!(w, "    uniform token wrap = \"pinned\"")?;
        let pad = curves.curves.iter().map(|c| c.radius).fold(0.0, f64::max);
        let (lo, hi) = curves.curves.iter().flat_map(|c| c.points.iter()).fold(
            ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]),
            |(lo, hi), p| {
                (
                    std::array::from_fn(|k| lo[k].min(p[k])),
                    std::array::from_fn(|k| hi[k].max(p[k])),
                )
            },
        );
        if lo[0] <= hi[0] {
            let f = |v: f64| v as f32;
            writeln!(
                w,
                "    float3[] extent = [({}, {}, {}), ({}, {}, {})]",
                f(lo[0] - pad),
                f(lo[1] - pad),
                f(lo[2] - pad),
                f(hi[0] + pad),
                f(hi[1] + pad),
                f(hi[2] + pad)
            )?;
        }
        let list = |w: &mut dyn Write, items: &mut dyn Iterator<Item = String>| -> io::Result<()> {
            let mut first = true;
            for s in items {
                if !first {
                    w.write_all(b", ")?;
                }
                first = false;
                w.write_all(s.as_bytes())?;
            }
            Ok(())
        };
        w.write_all(b"    int[] curveVertexCounts = [")?;
        list(
            w,
            &mut curves.curves.iter().map(|c| c.points.len().to_string()),
        )?;
        w.write_all(b"]\n    point3f[] points = [")?;
        list(
            w,
            &mut curves
                .curves
                .iter()
                .flat_map(|c| c.points.iter())
                .map(|p| format!("({}, {}, {})", p[0] as f32, p[1] as f32, p[2] as f32)),
        )?;
        w.write_all(b"]\n    float[] widths = [")?;
        list(
            w,
            &mut curves
                .curves
                .iter()
                .flat_map(|c| std::iter::repeat_n(2.0 * c.radius, c.points.len()))
                .map(|d| format!("{}", d as f32)),
        )?;
        w.write_all(b"] (\n        interpolation = \"vertex\"\n    )\n")?;
        w.write_all(b"    int[] primvars:family = [")?;
        list(
            w,
            &mut curves.curves.iter().map(|c| c.family.index().to_string()),
        )?;
        w.write_all(b"] (\n        interpolation = \"uniform\"\n    )\n}\n")?;
        Ok(())
    })
}

/// A curve file format of [`write_curves`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CurveFormat {
    /// [`write_bcc`], `.bcc`, crimped control points.
    Bcc,
    /// [`write_mitsuba_curves`], `.txt`, smoothed samples.
    Mitsuba,
    /// [`write_obj_polylines`], `.obj`, smoothed samples.
    ObjPolylines,
    /// [`write_obj_tubes`], `_tubes.obj`, smoothed samples.
    ObjTubes,
    /// [`write_usda_curves`], `.usda`, crimped control points.
    Usda,
}

impl CurveFormat {
    /// Every format, in the order above.
    pub const ALL: [CurveFormat; 5] = [
        CurveFormat::Bcc,
        CurveFormat::Mitsuba,
        CurveFormat::ObjPolylines,
        CurveFormat::ObjTubes,
        CurveFormat::Usda,
    ];

    /// The name used on command lines and in scene files: `bcc`, `mitsuba`,
    /// `obj`, `tubes`, `usda`.
    pub fn name(self) -> &'static str {
        match self {
            CurveFormat::Bcc => "bcc",
            CurveFormat::Mitsuba => "mitsuba",
            CurveFormat::ObjPolylines => "obj",
            CurveFormat::ObjTubes => "tubes",
            CurveFormat::Usda => "usda",
        }
    }

    /// File name suffix appended to a stem: `.bcc`, `.txt`, `.obj`,
    /// `_tubes.obj`, `.usda`.
    pub fn suffix(self) -> &'static str {
        match self {
            CurveFormat::Bcc => ".bcc",
            CurveFormat::Mitsuba => ".txt",
            CurveFormat::ObjPolylines => ".obj",
            CurveFormat::ObjTubes => "_tubes.obj",
            CurveFormat::Usda => ".usda",
        }
    }

    /// Whether the renderer evaluates the curve itself (Catmull-Rom), so
    /// the file gets the crimped control points rather than the samples.
    pub fn wants_control_points(self) -> bool {
        matches!(self, CurveFormat::Bcc | CurveFormat::Usda)
    }
}

impl std::str::FromStr for CurveFormat {
    type Err = String;

    /// Parses [`CurveFormat::name`]; the error lists the accepted names.
    fn from_str(s: &str) -> Result<Self, String> {
        CurveFormat::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown curve format '{s}': expected one of bcc, mitsuba, obj, tubes, usda"
                )
            })
    }
}

/// A failure of [`write_curves`].
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The curves could not be built from the state.
    #[error(transparent)]
    Curves(#[from] crate::curves::CurveError),
    /// A file could not be written.
    #[error(transparent)]
    Output(#[from] OutputError),
}

/// Options of [`write_curves`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CurveExportOptions {
    /// Catmull-Rom samples per segment for the sampled formats (≥ 1).
    pub samples_per_segment: usize,
    /// Tube sides for [`CurveFormat::ObjTubes`] (≥ 3).
    pub tube_sides: usize,
}

impl Default for CurveExportOptions {
    /// 4 samples per segment, 8 tube sides.
    fn default() -> Self {
        Self {
            samples_per_segment: 4,
            tube_sides: 8,
        }
    }
}

/// Builds the yarn curves of `fabric` at positions `x` (m, one per node)
/// and writes one file per format to `dir/STEM SUFFIX` (see
/// [`CurveFormat::suffix`]), each atomically: BCC and USDA get the crimped
/// control points, the others the Catmull-Rom samples. Returns the paths
/// written, in the order of `formats`.
///
/// # Errors
/// [`ExportError::Curves`] (wrong node count, zero samples, non-finite
/// position) or [`ExportError::Output`] naming the file.
pub fn write_curves(
    dir: impl AsRef<Path>,
    stem: &str,
    fabric: &weft_core::Fabric,
    x: &[Vector3<f64>],
    formats: &[CurveFormat],
    options: &CurveExportOptions,
) -> Result<Vec<std::path::PathBuf>, ExportError> {
    let control = formats
        .iter()
        .any(|f| f.wants_control_points())
        .then(|| YarnCurves::from_positions(fabric, x, 1))
        .transpose()?;
    let sampled = formats
        .iter()
        .any(|f| !f.wants_control_points())
        .then(|| YarnCurves::from_positions(fabric, x, options.samples_per_segment))
        .transpose()?;
    let mut out = Vec::with_capacity(formats.len());
    for &f in formats {
        let path = dir.as_ref().join(format!("{stem}{}", f.suffix()));
        let curves = if f.wants_control_points() {
            &control
        } else {
            &sampled
        };
        let curves = curves
            .as_ref()
            .expect("built above for this kind of format");
        match f {
            CurveFormat::Bcc => write_bcc(&path, curves)?,
            CurveFormat::Mitsuba => write_mitsuba_curves(&path, curves)?,
            CurveFormat::ObjPolylines => write_obj_polylines(&path, curves)?,
            CurveFormat::ObjTubes => write_obj_tubes(&path, curves, options.tube_sides)?,
            CurveFormat::Usda => write_usda_curves(&path, curves)?,
        }
        out.push(path);
    }
    Ok(out)
}
