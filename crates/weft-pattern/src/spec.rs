//! Reading sewing-pattern files: the GarmentCode specification format
//! (`gc_*.json`) and the older Garment-Pattern-Generator format (`gpg_*.json`),
//! DESIGN §9.
//!
//! Both formats share one layout:
//!
//! ```text
//! { "properties": {"units_in_meter": 100, "curvature_coords": "relative", ...},
//!   "pattern": {
//!     "panels": { NAME: {"vertices": [[x, y], ...],
//!                        "edges": [{"endpoints": [i, j], "curvature": ..., "label": ...}, ...],
//!                        "translation": [x, y, z], "rotation": [rx, ry, rz], "label": ...}, ...},
//!     "stitches": [[{"panel": NAME, "edge": K}, {"panel": NAME, "edge": K}, "right_wrong"?], ...],
//!     "panel_order": [NAME, ...] } }
//! ```
//!
//! - Lengths are converted to metres on load: value / `units_in_meter`
//!   (100 for cm, 300 in some GPG files; 100 when absent, GarmentCode's default).
//! - `curvature` (relative coordinates, the default `curvature_coords`): a
//!   point `[s, t]` means `P = start + s (end - start) + t perp`, `perp` = the
//!   edge vector turned 90° counter-clockwise. GarmentCode writes
//!   `{"type": "quadratic", "params": [[s, t]]}` (one control point),
//!   `{"type": "cubic", "params": [[s1, t1], [s2, t2]]}` (two), or
//!   `{"type": "circle", "params": [radius, large_arc, right]}`: an SVG-style
//!   circular arc whose mid-point lies to the right of the edge vector when
//!   `right` is 1, on the short (`large_arc` 0) or long side (GarmentCode
//!   `CircleEdge`). GPG writes a bare `[s, t]` quadratic control point. With
//!   `curvature_coords: "absolute"` the control points are panel coordinates.
//! - Placement: `p = R (x, y, 0) + translation` with Euler angles in degrees,
//!   `R = Rz · Ry · Rx` (see [`Panel::rotation_matrix`]).
//! - `normalize_panel_translation: true` moves each panel's vertex mean to its
//!   origin and adds it to the translation (as the reference loader does).
//! - Edge loops are used as given (`normalized_edge_loops` is not re-applied).
//! - Panel order: `pattern.panel_order` where present, else by name.
//!
//! The reader checks: closed edge loops, no zero-length edge, no
//! self-intersecting outline (after flattening), stitches naming existing
//! panels and edges, each edge stitched at most once.

use crate::error::PatternError;
use crate::geometry;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// A minor circular arc whose radius exceeds this many chords is read as a
/// straight edge (its sagitta is below 1.3e-5 of the chord).
pub const STRAIGHT_ARC_RADIUS: f64 = 1e4;

/// The shape of one panel edge, in panel coordinates (m).
#[derive(Clone, Debug, PartialEq)]
pub enum Curve {
    /// A straight segment.
    Line,
    /// A quadratic Bézier with one control point (absolute, m).
    Quadratic {
        /// Control point.
        control: [f64; 2],
    },
    /// A cubic Bézier with two control points (absolute, m).
    Cubic {
        /// First control point.
        c1: [f64; 2],
        /// Second control point.
        c2: [f64; 2],
    },
    /// A circular arc (GarmentCode `circle`, SVG-style).
    Arc {
        /// Radius (m); at least half the chord.
        radius: f64,
        /// The arc spans more than 180°.
        large_arc: bool,
        /// The arc's mid-point lies to the right of the edge vector.
        right: bool,
    },
}

/// One directed edge of a panel outline.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    /// Index of the start vertex.
    pub start: usize,
    /// Index of the end vertex.
    pub end: usize,
    /// Its shape.
    pub curve: Curve,
    /// The edge's `label` (e.g. `lower_interface`), if any.
    pub label: Option<String>,
}

/// One panel: a closed loop of edges in the panel's own 2D frame, and its
/// placement in 3D.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    /// Panel name (the key in `pattern.panels`).
    pub name: String,
    /// Vertices in panel coordinates (m).
    pub vertices: Vec<[f64; 2]>,
    /// The edge loop, in file order; edge `k` ends where edge `k+1` starts.
    pub edges: Vec<Edge>,
    /// Translation (m).
    pub translation: [f64; 3],
    /// Euler angles (degrees) about x, y, z; `R = Rz · Ry · Rx`.
    pub rotation_deg: [f64; 3],
    /// The panel's `label` (e.g. `body`), if any.
    pub label: Option<String>,
}

impl Panel {
    /// The rotation `R = Rz(rz) · Ry(ry) · Rx(rx)` of `rotation_deg`
    /// (extrinsic x, then y, then z; the GarmentCode / GPG mesher convention).
    pub fn rotation_matrix(&self) -> nalgebra::Matrix3<f64> {
        let [rx, ry, rz] = self.rotation_deg.map(f64::to_radians);
        let (sx, cx) = rx.sin_cos();
        let (sy, cy) = ry.sin_cos();
        let (sz, cz) = rz.sin_cos();
        let mx = nalgebra::Matrix3::new(1.0, 0.0, 0.0, 0.0, cx, -sx, 0.0, sx, cx);
        let my = nalgebra::Matrix3::new(cy, 0.0, sy, 0.0, 1.0, 0.0, -sy, 0.0, cy);
        let mz = nalgebra::Matrix3::new(cz, -sz, 0.0, sz, cz, 0.0, 0.0, 0.0, 1.0);
        mz * my * mx
    }

    /// A panel point `(x, y)` (m) placed in 3D: `R (x, y, 0) + translation` (m).
    pub fn place(&self, p: [f64; 2]) -> nalgebra::Vector3<f64> {
        self.rotation_matrix() * nalgebra::Vector3::new(p[0], p[1], 0.0)
            + nalgebra::Vector3::from(self.translation)
    }

    /// The edge's start and end vertex positions (m).
    pub fn edge_ends(&self, edge: usize) -> ([f64; 2], [f64; 2]) {
        let e = &self.edges[edge];
        (self.vertices[e.start], self.vertices[e.end])
    }
}

/// One side of a stitch: an edge of a panel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EdgeRef {
    /// Panel index in [`Pattern::panels`].
    pub panel: usize,
    /// Edge index within the panel.
    pub edge: usize,
}

/// A stitch between two edges. By default the start of `a` meets the end of
/// `b` (the edges run in opposite directions, as two counter-clockwise
/// outlines sewn right side to right side do); `right_wrong` flips that: the
/// start of `a` meets the start of `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stitch {
    /// First side.
    pub a: EdgeRef,
    /// Second side.
    pub b: EdgeRef,
    /// The stitch's third element is `"right_wrong"`.
    pub right_wrong: bool,
}

/// A sewing pattern, in metres.
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    /// File it was read from (for messages).
    pub file: String,
    /// `properties.units_in_meter` of the file (already applied).
    pub units_in_meter: f64,
    /// Panels.
    pub panels: Vec<Panel>,
    /// Stitches, in file order.
    pub stitches: Vec<Stitch>,
}

impl Pattern {
    /// The pattern graded by `factor` (> 0): every panel's outline (vertices,
    /// Bézier control points, arc radii) is scaled by `factor` about the
    /// panel's own origin, and the panels' translations are scaled in x and z
    /// (so they stay around the body's vertical axis) while their heights
    /// are kept. A size grade in the simplest sense: a pattern made for a
    /// smaller body (the GPG tee's chest is 0.87 m round, `mean_all.obj`'s
    /// bust 1.00 m) fits with `factor` ≈ 1.15 instead of needing a 15 %
    /// stretch that woven fabric does not have.
    pub fn graded(&self, factor: f64) -> Pattern {
        let sc = |p: [f64; 2]| [p[0] * factor, p[1] * factor];
        let mut out = self.clone();
        for panel in &mut out.panels {
            panel.vertices.iter_mut().for_each(|v| *v = sc(*v));
            panel.translation[0] *= factor;
            panel.translation[2] *= factor;
            for e in &mut panel.edges {
                e.curve = match e.curve {
                    Curve::Line => Curve::Line,
                    Curve::Quadratic { control } => Curve::Quadratic {
                        control: sc(control),
                    },
                    Curve::Cubic { c1, c2 } => Curve::Cubic {
                        c1: sc(c1),
                        c2: sc(c2),
                    },
                    Curve::Arc {
                        radius,
                        large_arc,
                        right,
                    } => Curve::Arc {
                        radius: radius * factor,
                        large_arc,
                        right,
                    },
                };
            }
        }
        out
    }

    /// Reads and checks a pattern file.
    ///
    /// # Errors
    /// [`PatternError::Io`] when unreadable, otherwise as [`Pattern::from_str`].
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, PatternError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| PatternError::Io {
            file: file.clone(),
            source,
        })?;
        Self::from_str(&text, &file)
    }

    /// Parses and checks pattern text; `file` names it in errors.
    ///
    /// # Errors
    /// [`PatternError::Json`] for malformed JSON; [`PatternError::Schema`] for
    /// missing or mistyped values; [`PatternError::UnknownCurvature`],
    /// [`PatternError::OpenLoop`], [`PatternError::ZeroLengthEdge`],
    /// [`PatternError::SelfIntersecting`], [`PatternError::StitchMissingPanel`],
    /// [`PatternError::StitchMissingEdge`], [`PatternError::EdgeStitchedTwice`].
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(text: &str, file: &str) -> Result<Self, PatternError> {
        let root: Value = serde_json::from_str(text).map_err(|e| PatternError::Json {
            file: file.into(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        Reader { file }.pattern(&root)
    }

    /// The index of the panel called `name`.
    pub fn panel_index(&self, name: &str) -> Option<usize> {
        self.panels.iter().position(|p| p.name == name)
    }
}

/// JSON walking with paths in the errors.
struct Reader<'a> {
    file: &'a str,
}

fn kind(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string \"{s}\""),
        Value::Array(a) => format!("an array of {}", a.len()),
        Value::Object(_) => "an object".into(),
    }
}

impl Reader<'_> {
    fn schema(&self, path: &str, expected: &str, found: String) -> PatternError {
        PatternError::Schema {
            file: self.file.into(),
            path: path.into(),
            expected: expected.into(),
            found,
        }
    }

    fn get<'v>(&self, obj: &'v Value, path: &str, key: &str) -> Result<&'v Value, PatternError> {
        match obj.get(key) {
            Some(v) => Ok(v),
            None => Err(self.schema(
                &format!("{path}.{key}"),
                "a value (missing key)",
                "nothing".into(),
            )),
        }
    }

    fn num(&self, v: &Value, path: &str) -> Result<f64, PatternError> {
        match v.as_f64() {
            Some(x) if x.is_finite() => Ok(x),
            _ => Err(self.schema(path, "a finite number", kind(v))),
        }
    }

    fn array<'v>(
        &self,
        v: &'v Value,
        path: &str,
        len: Option<usize>,
    ) -> Result<&'v [Value], PatternError> {
        match (v.as_array(), len) {
            (Some(a), Some(n)) if a.len() == n => Ok(a),
            (Some(a), None) => Ok(a),
            _ => Err(self.schema(
                path,
                &match len {
                    Some(n) => format!("an array of {n}"),
                    None => "an array".into(),
                },
                kind(v),
            )),
        }
    }

    fn vec<const N: usize>(&self, v: &Value, path: &str) -> Result<[f64; N], PatternError> {
        let a = self.array(v, path, Some(N))?;
        let mut out = [0.0; N];
        for (i, x) in a.iter().enumerate() {
            out[i] = self.num(x, &format!("{path}[{i}]"))?;
        }
        Ok(out)
    }

    fn index(
        &self,
        v: &Value,
        path: &str,
        count: usize,
        what: &str,
    ) -> Result<usize, PatternError> {
        match v.as_u64() {
            Some(i) if (i as usize) < count => Ok(i as usize),
            _ => Err(self.schema(path, &format!("{what} index in 0..{count}"), kind(v))),
        }
    }

    fn label(&self, v: &Value, path: &str) -> Result<Option<String>, PatternError> {
        match v.get("label") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.schema(&format!("{path}.label"), "a string", kind(other))),
        }
    }

    fn pattern(&self, root: &Value) -> Result<Pattern, PatternError> {
        if !root.is_object() {
            return Err(self.schema("(root)", "an object with \"pattern\"", kind(root)));
        }
        let props = root.get("properties").cloned().unwrap_or(Value::Null);
        let units = match props.get("units_in_meter") {
            None => 100.0,
            Some(v) => {
                let u = self.num(v, "properties.units_in_meter")?;
                if u <= 0.0 {
                    return Err(self.schema(
                        "properties.units_in_meter",
                        "a positive number (units per metre)",
                        kind(v),
                    ));
                }
                u
            }
        };
        let absolute = match props.get("curvature_coords") {
            None => false,
            Some(Value::String(s)) if s == "relative" => false,
            Some(Value::String(s)) if s == "absolute" => true,
            Some(v) => {
                return Err(self.schema(
                    "properties.curvature_coords",
                    "\"relative\" or \"absolute\"",
                    kind(v),
                ));
            }
        };
        let normalize_translation = match props.get("normalize_panel_translation") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(v) => {
                return Err(self.schema(
                    "properties.normalize_panel_translation",
                    "true or false",
                    kind(v),
                ));
            }
        };
        let pat = self.get(root, "(root)", "pattern")?;
        let panels_v = self.get(pat, "pattern", "panels")?;
        let panels_map = panels_v
            .as_object()
            .ok_or_else(|| self.schema("pattern.panels", "an object of panels", kind(panels_v)))?;
        let mut names: Vec<String> = panels_map.keys().cloned().collect();
        if let Some(order) = pat.get("panel_order").and_then(Value::as_array) {
            let listed: Vec<String> = order
                .iter()
                .filter_map(|v| v.as_str().map(String::from))
                .filter(|n| panels_map.contains_key(n))
                .collect();
            let mut rest: Vec<String> = names
                .iter()
                .filter(|n| !listed.contains(n))
                .cloned()
                .collect();
            names = listed;
            names.append(&mut rest);
        }
        let mut panels = Vec::with_capacity(names.len());
        for name in &names {
            let path = format!("pattern.panels.{name}");
            panels.push(self.panel(
                &panels_map[name],
                &path,
                name,
                units,
                absolute,
                normalize_translation,
            )?);
        }
        let stitches_v = self.get(pat, "pattern", "stitches")?;
        let stitches_a = self.array(stitches_v, "pattern.stitches", None)?;
        let mut stitches = Vec::with_capacity(stitches_a.len());
        let mut used: HashMap<EdgeRef, String> = HashMap::new();
        for (k, s) in stitches_a.iter().enumerate() {
            let path = format!("pattern.stitches[{k}]");
            let a = s
                .as_array()
                .filter(|a| a.len() == 2 || a.len() == 3)
                .ok_or_else(|| {
                    self.schema(
                        &path,
                        "an array of two {\"panel\", \"edge\"} objects and an optional \"right_wrong\"",
                        kind(s),
                    )
                })?;
            let mut sides = [EdgeRef { panel: 0, edge: 0 }; 2];
            for side in 0..2 {
                let p = format!("{path}[{side}]");
                let r = self.edge_ref(&a[side], &p, &panels)?;
                if let Some(first) = used.get(&r) {
                    return Err(PatternError::EdgeStitchedTwice {
                        file: self.file.into(),
                        path: p,
                        panel: panels[r.panel].name.clone(),
                        edge: r.edge,
                        first: first.clone(),
                    });
                }
                used.insert(r, p);
                sides[side] = r;
            }
            let right_wrong = match a.get(2) {
                None => false,
                Some(Value::String(s)) if s == "right_wrong" => true,
                Some(v) => {
                    return Err(self.schema(&format!("{path}[2]"), "\"right_wrong\"", kind(v)));
                }
            };
            stitches.push(Stitch {
                a: sides[0],
                b: sides[1],
                right_wrong,
            });
        }
        Ok(Pattern {
            file: self.file.into(),
            units_in_meter: units,
            panels,
            stitches,
        })
    }

    fn edge_ref(&self, v: &Value, path: &str, panels: &[Panel]) -> Result<EdgeRef, PatternError> {
        if !v.is_object() {
            return Err(self.schema(
                path,
                "an object {\"panel\": NAME, \"edge\": INDEX}",
                kind(v),
            ));
        }
        let name_v = self.get(v, path, "panel")?;
        let name = name_v
            .as_str()
            .ok_or_else(|| self.schema(&format!("{path}.panel"), "a panel name", kind(name_v)))?;
        let panel = panels.iter().position(|p| p.name == name).ok_or_else(|| {
            PatternError::StitchMissingPanel {
                file: self.file.into(),
                path: path.into(),
                panel: name.into(),
                known: panels
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }
        })?;
        let edge_v = self.get(v, path, "edge")?;
        let count = panels[panel].edges.len();
        let edge = match edge_v.as_u64() {
            Some(e) if (e as usize) < count => e as usize,
            Some(e) => {
                return Err(PatternError::StitchMissingEdge {
                    file: self.file.into(),
                    path: path.into(),
                    panel: name.into(),
                    edge: e as usize,
                    count,
                });
            }
            None => {
                return Err(self.schema(&format!("{path}.edge"), "an edge index", kind(edge_v)));
            }
        };
        Ok(EdgeRef { panel, edge })
    }

    fn panel(
        &self,
        v: &Value,
        path: &str,
        name: &str,
        units: f64,
        absolute: bool,
        normalize_translation: bool,
    ) -> Result<Panel, PatternError> {
        if !v.is_object() {
            return Err(self.schema(path, "a panel object", kind(v)));
        }
        let scale = 1.0 / units;
        let verts_v = self.get(v, path, "vertices")?;
        let verts_a = self.array(verts_v, &format!("{path}.vertices"), None)?;
        let mut vertices = Vec::with_capacity(verts_a.len());
        for (i, p) in verts_a.iter().enumerate() {
            let [x, y] = self.vec::<2>(p, &format!("{path}.vertices[{i}]"))?;
            vertices.push([x * scale, y * scale]);
        }
        if vertices.len() < 2 {
            return Err(self.schema(
                &format!("{path}.vertices"),
                "at least two vertices",
                kind(verts_v),
            ));
        }
        let translation = match v.get("translation") {
            None => [0.0; 3],
            Some(t) => self
                .vec::<3>(t, &format!("{path}.translation"))?
                .map(|c| c * scale),
        };
        let rotation_deg = match v.get("rotation") {
            None => [0.0; 3],
            Some(r) => self.vec::<3>(r, &format!("{path}.rotation"))?,
        };
        let edges_v = self.get(v, path, "edges")?;
        let edges_a = self.array(edges_v, &format!("{path}.edges"), None)?;
        if edges_a.is_empty() {
            return Err(self.schema(
                &format!("{path}.edges"),
                "a non-empty edge loop",
                kind(edges_v),
            ));
        }
        let mut edges = Vec::with_capacity(edges_a.len());
        for (k, e) in edges_a.iter().enumerate() {
            let ep = format!("{path}.edges[{k}]");
            if !e.is_object() {
                return Err(self.schema(&ep, "an edge object", kind(e)));
            }
            let ends_v = self.get(e, &ep, "endpoints")?;
            let ends = self.array(ends_v, &format!("{ep}.endpoints"), Some(2))?;
            let n = vertices.len();
            let start = self.index(&ends[0], &format!("{ep}.endpoints[0]"), n, "a vertex")?;
            let end = self.index(&ends[1], &format!("{ep}.endpoints[1]"), n, "a vertex")?;
            let (s, t) = (vertices[start], vertices[end]);
            let curve = match e.get("curvature") {
                None | Some(Value::Null) => Curve::Line,
                Some(c) => self.curve(c, &format!("{ep}.curvature"), s, t, absolute, scale)?,
            };
            edges.push(Edge {
                start,
                end,
                curve,
                label: self.label(e, &ep)?,
            });
        }
        // Closed loop: edge k starts where edge k-1 ends.
        for k in 0..edges.len() {
            let prev = &edges[(k + edges.len() - 1) % edges.len()];
            if edges[k].start != prev.end {
                return Err(PatternError::OpenLoop {
                    file: self.file.into(),
                    path: format!("{path}.edges[{k}]"),
                    expected: prev.end,
                    found: edges[k].start,
                });
            }
        }
        let mut panel = Panel {
            name: name.into(),
            vertices,
            edges,
            translation,
            rotation_deg,
            label: self.label(v, path)?,
        };
        if normalize_translation {
            let n = panel.vertices.len() as f64;
            let mean = panel
                .vertices
                .iter()
                .fold([0.0, 0.0], |m, p| [m[0] + p[0] / n, m[1] + p[1] / n]);
            for p in &mut panel.vertices {
                *p = [p[0] - mean[0], p[1] - mean[1]];
            }
            for e in &mut panel.edges {
                match &mut e.curve {
                    Curve::Quadratic { control } => {
                        *control = [control[0] - mean[0], control[1] - mean[1]];
                    }
                    Curve::Cubic { c1, c2 } => {
                        *c1 = [c1[0] - mean[0], c1[1] - mean[1]];
                        *c2 = [c2[0] - mean[0], c2[1] - mean[1]];
                    }
                    Curve::Line | Curve::Arc { .. } => {}
                }
            }
            panel.translation[0] += mean[0];
            panel.translation[1] += mean[1];
        }
        // Size first, without flattening: measuring and flattening curves
        // kilometres across (or with a control point at 1e308) would take
        // minutes or overflow an allocation.
        let extent = geometry::size_bound(&panel);
        if extent.is_nan() || extent > crate::garment::MAX_PANEL_SIZE {
            return Err(PatternError::PanelTooLarge {
                file: self.file.into(),
                path: path.into(),
                size_m: extent,
                limit_m: crate::garment::MAX_PANEL_SIZE,
            });
        }
        for k in 0..panel.edges.len() {
            let length = geometry::edge_length(&panel, k);
            if length <= 1e-9 {
                return Err(PatternError::ZeroLengthEdge {
                    file: self.file.into(),
                    path: format!("{path}.edges[{k}]"),
                    start: panel.edges[k].start,
                    end: panel.edges[k].end,
                    length,
                });
            }
        }
        if let Some((first, second, at)) = geometry::self_intersection(&panel) {
            return Err(PatternError::SelfIntersecting {
                file: self.file.into(),
                path: path.into(),
                first,
                second,
                x: at[0],
                y: at[1],
            });
        }
        Ok(panel)
    }

    /// A control point `[s, t]` in edge-relative (or absolute) coordinates
    /// turned into panel coordinates (m).
    fn point(
        &self,
        v: &Value,
        path: &str,
        s: [f64; 2],
        t: [f64; 2],
        absolute: bool,
        scale: f64,
    ) -> Result<[f64; 2], PatternError> {
        let [a, b] = self.vec::<2>(v, path)?;
        if absolute {
            return Ok([a * scale, b * scale]);
        }
        let e = [t[0] - s[0], t[1] - s[1]];
        let perp = [-e[1], e[0]];
        Ok([s[0] + a * e[0] + b * perp[0], s[1] + a * e[1] + b * perp[1]])
    }

    fn curve(
        &self,
        c: &Value,
        path: &str,
        s: [f64; 2],
        t: [f64; 2],
        absolute: bool,
        scale: f64,
    ) -> Result<Curve, PatternError> {
        if c.is_array() {
            // GPG: a bare quadratic control point.
            let control = self.point(c, path, s, t, absolute, scale)?;
            return Ok(Curve::Quadratic { control });
        }
        if !c.is_object() {
            return Err(self.schema(
                path,
                "a control point [s, t] or {\"type\", \"params\"}",
                kind(c),
            ));
        }
        let ty_v = self.get(c, path, "type")?;
        let ty = ty_v.as_str().ok_or_else(|| {
            self.schema(&format!("{path}.type"), "a curvature type name", kind(ty_v))
        })?;
        let params_v = self.get(c, path, "params")?;
        let pp = format!("{path}.params");
        match ty {
            "quadratic" => {
                let p = self.array(params_v, &pp, Some(1))?;
                Ok(Curve::Quadratic {
                    control: self.point(&p[0], &format!("{pp}[0]"), s, t, absolute, scale)?,
                })
            }
            "cubic" => {
                let p = self.array(params_v, &pp, Some(2))?;
                Ok(Curve::Cubic {
                    c1: self.point(&p[0], &format!("{pp}[0]"), s, t, absolute, scale)?,
                    c2: self.point(&p[1], &format!("{pp}[1]"), s, t, absolute, scale)?,
                })
            }
            "circle" => {
                let p = self.array(params_v, &pp, Some(3))?;
                let radius = self.num(&p[0], &format!("{pp}[0]"))? * scale;
                let flag = |i: usize| -> Result<bool, PatternError> {
                    match &p[i] {
                        Value::Bool(b) => Ok(*b),
                        v => match v.as_f64() {
                            Some(x) if x == 0.0 || x == 1.0 => Ok(x == 1.0),
                            _ => Err(self.schema(&format!("{pp}[{i}]"), "0 or 1", kind(v))),
                        },
                    }
                };
                let (large_arc, right) = (flag(1)?, flag(2)?);
                let chord = ((t[0] - s[0]).powi(2) + (t[1] - s[1]).powi(2)).sqrt();
                if !(radius > 0.0 && radius >= 0.5 * chord * (1.0 - 1e-6)) {
                    return Err(self.schema(
                        &format!("{pp}[0]"),
                        &format!("a radius of at least half the chord ({:.6} m)", 0.5 * chord),
                        format!("{radius:.6} m"),
                    ));
                }
                // A minor arc with a radius over 1e4 chords bulges less than
                // 1.3e-5 of its chord: a straight edge (and the arc's centre
                // would be too far away to compute; a radius of 1e306 m made
                // the flattener loop).
                if !large_arc && radius > STRAIGHT_ARC_RADIUS * chord {
                    return Ok(Curve::Line);
                }
                Ok(Curve::Arc {
                    radius,
                    large_arc,
                    right,
                })
            }
            other => Err(PatternError::UnknownCurvature {
                file: self.file.into(),
                path: format!("{path}.type"),
                found: other.into(),
            }),
        }
    }
}
