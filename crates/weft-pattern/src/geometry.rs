//! Panel geometry: edges as kurbo curves, flattening to polylines, the panel
//! outline with arc-length positions, and self-intersection checks (geo).

use crate::spec::{Curve, Panel};
use kurbo::{BezPath, ParamCurve, ParamCurveArclen, Point};

/// Accuracy of analytic edge lengths (m).
const ARCLEN_ACCURACY: f64 = 1e-9;

fn pt(p: [f64; 2]) -> Point {
    Point::new(p[0], p[1])
}

/// The circular arc of a `circle` edge from `s` to `t` (GarmentCode
/// `CircleEdge`): its mid-point lies at distance `h = r ∓ sqrt(r² - L²/4)`
/// (small / large arc) from the chord mid-point, to the left of the edge
/// vector unless `right`. Returns a kurbo arc (angles in radians, measured
/// counter-clockwise from +x in panel coordinates).
pub fn circle_arc(
    s: [f64; 2],
    t: [f64; 2],
    radius: f64,
    large_arc: bool,
    right: bool,
) -> kurbo::Arc {
    let (e0, e1) = (t[0] - s[0], t[1] - s[1]);
    let l = (e0 * e0 + e1 * e1).sqrt();
    let n = [-e1 / l, e0 / l];
    let d = (radius * radius - 0.25 * l * l).max(0.0).sqrt();
    let h = if large_arc { radius + d } else { radius - d };
    let sigma = if right { -1.0 } else { 1.0 };
    let m = [0.5 * (s[0] + t[0]), 0.5 * (s[1] + t[1])];
    let c = [
        m[0] + sigma * (h - radius) * n[0],
        m[1] + sigma * (h - radius) * n[1],
    ];
    let mid = [m[0] + sigma * h * n[0], m[1] + sigma * h * n[1]];
    let ang = |p: [f64; 2]| (p[1] - c[1]).atan2(p[0] - c[0]);
    let tau = std::f64::consts::TAU;
    let (a0, a1, am) = (ang(s), ang(t), ang(mid));
    let ccw = (a1 - a0).rem_euclid(tau);
    let to_mid = (am - a0).rem_euclid(tau);
    let sweep = if to_mid <= ccw { ccw } else { ccw - tau };
    kurbo::Arc::new(pt(c), (radius, radius), a0, sweep, 0.0)
}

/// Edge `k` of `panel` as a kurbo path (panel coordinates, m) starting at its
/// start vertex.
pub fn edge_path(panel: &Panel, k: usize) -> BezPath {
    let (s, t) = panel.edge_ends(k);
    let mut path = BezPath::new();
    path.move_to(pt(s));
    match &panel.edges[k].curve {
        Curve::Line => path.line_to(pt(t)),
        Curve::Quadratic { control } => path.quad_to(pt(*control), pt(t)),
        Curve::Cubic { c1, c2 } => path.curve_to(pt(*c1), pt(*c2), pt(t)),
        Curve::Arc {
            radius,
            large_arc,
            right,
        } => {
            let arc = circle_arc(s, t, *radius, *large_arc, *right);
            for el in arc.append_iter(1e-7) {
                path.push(el);
            }
        }
    }
    path
}

/// Length of edge `k` of `panel` (m), from the exact curve (kurbo arc length
/// to 1e-9 m).
pub fn edge_length(panel: &Panel, k: usize) -> f64 {
    let (s, t) = panel.edge_ends(k);
    match &panel.edges[k].curve {
        Curve::Line => ((t[0] - s[0]).powi(2) + (t[1] - s[1]).powi(2)).sqrt(),
        Curve::Quadratic { control } => {
            kurbo::QuadBez::new(pt(s), pt(*control), pt(t)).arclen(ARCLEN_ACCURACY)
        }
        Curve::Cubic { c1, c2 } => {
            kurbo::CubicBez::new(pt(s), pt(*c1), pt(*c2), pt(t)).arclen(ARCLEN_ACCURACY)
        }
        Curve::Arc {
            radius,
            large_arc,
            right,
        } => {
            let arc = circle_arc(s, t, *radius, *large_arc, *right);
            radius * arc.sweep_angle.abs()
        }
    }
}

/// Edge `k` flattened to a polyline within `tolerance` (m) of the curve,
/// from its start vertex to its end vertex (both exact), at least two points.
pub fn flatten_edge(panel: &Panel, k: usize, tolerance: f64) -> Vec<[f64; 2]> {
    let (s, t) = panel.edge_ends(k);
    if panel.edges[k].curve == Curve::Line {
        return vec![s, t];
    }
    let mut pts: Vec<[f64; 2]> = vec![];
    kurbo::flatten(edge_path(panel, k), tolerance, |el| match el {
        kurbo::PathEl::MoveTo(p) | kurbo::PathEl::LineTo(p) => pts.push([p.x, p.y]),
        _ => {}
    });
    // Exact end vertices; drop flattening points that coincide with them.
    pts.retain(|p| {
        (p[0] - s[0]).hypot(p[1] - s[1]) > 1e-12 && (p[0] - t[0]).hypot(p[1] - t[1]) > 1e-12
    });
    pts.insert(0, s);
    pts.push(t);
    // Curve joins (arcs are several cubics) can repeat a point.
    pts.dedup_by(|a, b| dist(*a, *b) <= 1e-12);
    pts
}

/// The larger of the width and height (m) of the box around `points`
/// (panel coordinates); NaN if a coordinate is NaN.
pub fn extent(points: &[[f64; 2]]) -> f64 {
    (0..2)
        .map(|k| {
            let (lo, hi) = points
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                    (lo.min(p[k]), hi.max(p[k]))
                });
            hi - lo
        })
        .fold(0.0, f64::max)
}

/// An upper bound (m) of the larger of the width and height of a panel's
/// outline, without flattening it: the box around its vertices and Bézier
/// control points (a Bézier curve lies in the hull of its control points),
/// each arc grown by its sagitta (a minor arc) or its diameter (a major
/// arc). NaN or infinite for non-finite input.
pub fn size_bound(panel: &Panel) -> f64 {
    let mut pts: Vec<[f64; 2]> = panel.vertices.clone();
    let mut grow: f64 = 0.0;
    for (k, e) in panel.edges.iter().enumerate() {
        match &e.curve {
            Curve::Line => {}
            Curve::Quadratic { control } => pts.push(*control),
            Curve::Cubic { c1, c2 } => pts.extend([*c1, *c2]),
            Curve::Arc {
                radius, large_arc, ..
            } => {
                let (s, t) = panel.edge_ends(k);
                let half = 0.5 * dist(s, t);
                grow = grow.max(if *large_arc {
                    2.0 * radius
                } else {
                    // The sagitta r - sqrt(r² - h²), written without r².
                    let d = ((radius - half).max(0.0) * (radius + half)).sqrt();
                    half * (half / (radius + d))
                });
            }
        }
    }
    extent(&pts) + 2.0 * grow
}

/// A panel outline flattened to a closed polygon with arc-length positions.
#[derive(Clone, Debug, PartialEq)]
pub struct Outline {
    /// Polygon points (panel coordinates, m), the loop not repeated at the end.
    pub points: Vec<[f64; 2]>,
    /// Per point, the pattern edge of the segment that starts there.
    pub segment_edge: Vec<usize>,
    /// Per point, the arc length along the outline from edge 0's start (m).
    pub arc: Vec<f64>,
    /// Per pattern edge, `[start, end]` arc length along the outline (m).
    pub edge_range: Vec<[f64; 2]>,
    /// Total outline length (m).
    pub length: f64,
}

impl Outline {
    /// Flattens every edge of `panel` within `tolerance` (m).
    pub fn new(panel: &Panel, tolerance: f64) -> Self {
        let mut points = vec![];
        let mut segment_edge = vec![];
        for k in 0..panel.edges.len() {
            let mut p = flatten_edge(panel, k, tolerance);
            p.pop(); // the next edge starts there
            segment_edge.extend(std::iter::repeat_n(k, p.len()));
            points.extend(p);
        }
        Self::with_edges(points, segment_edge, panel.edges.len())
    }

    /// A closed polygon (panel coordinates, m, at least 3 points, the loop
    /// not repeated) as an outline of one edge (edge 0), as for a specimen
    /// cut to a shape rather than a pattern panel.
    pub fn from_polygon(points: Vec<[f64; 2]>) -> Self {
        let n = points.len();
        Self::with_edges(points, vec![0; n], 1)
    }

    fn with_edges(points: Vec<[f64; 2]>, segment_edge: Vec<usize>, edges: usize) -> Self {
        let n = points.len();
        let mut arc = vec![0.0; n];
        for i in 1..n {
            arc[i] = arc[i - 1] + dist(points[i - 1], points[i]);
        }
        let length = arc[n - 1] + dist(points[n - 1], points[0]);
        let mut edge_range = vec![[0.0, 0.0]; edges];
        for i in 0..n {
            let k = segment_edge[i];
            let end = if i + 1 < n { arc[i + 1] } else { length };
            if i == 0 || segment_edge[i - 1] != k {
                edge_range[k][0] = arc[i];
            }
            edge_range[k][1] = end;
        }
        Self {
            points,
            segment_edge,
            arc,
            edge_range,
            length,
        }
    }

    /// Segment `i` as `(start, end)` points.
    pub fn segment(&self, i: usize) -> ([f64; 2], [f64; 2]) {
        (self.points[i], self.points[(i + 1) % self.points.len()])
    }

    /// Shortest distance from `p` to the outline (m) and the arc-length
    /// position of the closest outline point (m).
    pub fn locate(&self, p: [f64; 2]) -> (f64, f64) {
        let mut best = (f64::INFINITY, 0.0);
        for i in 0..self.points.len() {
            let (a, b) = self.segment(i);
            let (d, s) = point_segment(p, a, b);
            if d < best.0 {
                best = (d, self.arc[i] + s * dist(a, b));
            }
        }
        best
    }

    /// The point at arc-length position `s` (m, taken modulo the length).
    pub fn point_at(&self, s: f64) -> [f64; 2] {
        let s = s.rem_euclid(self.length);
        let i = self.arc.partition_point(|&a| a <= s).saturating_sub(1);
        let (a, b) = self.segment(i);
        let l = dist(a, b);
        let f = if l > 0.0 {
            ((s - self.arc[i]) / l).clamp(0.0, 1.0)
        } else {
            0.0
        };
        [a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1])]
    }

    /// Signed area (m²): positive for a counter-clockwise outline.
    pub fn signed_area(&self) -> f64 {
        use geo::Area;
        self.polygon().signed_area()
    }

    /// The outline as a geo polygon.
    pub fn polygon(&self) -> geo::Polygon<f64> {
        let ring: Vec<geo::Coord<f64>> = self
            .points
            .iter()
            .map(|p| geo::Coord { x: p[0], y: p[1] })
            .collect();
        geo::Polygon::new(geo::LineString::new(ring), vec![])
    }
}

/// Euclidean distance (m).
pub fn dist(a: [f64; 2], b: [f64; 2]) -> f64 {
    (b[0] - a[0]).hypot(b[1] - a[1])
}

/// Distance from `p` to segment `ab` and the parameter (0..1) of the closest point.
pub fn point_segment(p: [f64; 2], a: [f64; 2], b: [f64; 2]) -> (f64, f64) {
    let e = [b[0] - a[0], b[1] - a[1]];
    let l2 = e[0] * e[0] + e[1] * e[1];
    let s = if l2 > 0.0 {
        (((p[0] - a[0]) * e[0] + (p[1] - a[1]) * e[1]) / l2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let q = [a[0] + s * e[0], a[1] + s * e[1]];
    (dist(p, q), s)
}

/// Flattening tolerance of the self-intersection check (m).
const CHECK_TOLERANCE: f64 = 1e-4;

/// The first pair of pattern edges `(i, j)` (`i <= j`) whose flattened
/// curves cross or overlap, and a point of the crossing (panel coordinates,
/// m); `None` for a simple outline. Consecutive segments may share their
/// common vertex; any other contact counts (geo `line_intersection`).
pub fn self_intersection(panel: &Panel) -> Option<(usize, usize, [f64; 2])> {
    use geo::line_intersection::{LineIntersection, line_intersection};
    let o = Outline::new(panel, CHECK_TOLERANCE);
    let n = o.points.len();
    let line = |i: usize| {
        let (a, b) = o.segment(i);
        geo::Line::new(
            geo::Coord { x: a[0], y: a[1] },
            geo::Coord { x: b[0], y: b[1] },
        )
    };
    for i in 0..n {
        let li = line(i);
        for j in i + 1..n {
            let adjacent = j == i + 1 || (i == 0 && j == n - 1);
            if adjacent && n > 2 {
                // Only a collinear overlap (the loop doubling back) is a defect.
                if let Some(LineIntersection::Collinear { intersection }) =
                    line_intersection(li, line(j))
                    && intersection.start != intersection.end
                {
                    let c = intersection.start;
                    return Some((o.segment_edge[i], o.segment_edge[j], [c.x, c.y]));
                }
                continue;
            }
            if let Some(x) = line_intersection(li, line(j)) {
                let c = match x {
                    LineIntersection::SinglePoint { intersection, .. } => intersection,
                    LineIntersection::Collinear { intersection } => intersection.start,
                };
                let (a, b) = (o.segment_edge[i], o.segment_edge[j]);
                return Some((a.min(b), a.max(b), [c.x, c.y]));
            }
        }
    }
    None
}

/// The point of edge `k` at normalised arc length `s` (0..1) along its
/// flattened polyline (panel coordinates, m).
pub fn edge_point(outline: &Outline, k: usize, s: f64) -> [f64; 2] {
    let [a, b] = outline.edge_range[k];
    outline.point_at(a + s * (b - a))
}

/// Evaluates the exact curve of edge `k` at curve parameter `t` (0..1).
pub fn edge_eval(panel: &Panel, k: usize, t: f64) -> [f64; 2] {
    let (s, e) = panel.edge_ends(k);
    let p = match &panel.edges[k].curve {
        Curve::Line => kurbo::Line::new(pt(s), pt(e)).eval(t),
        Curve::Quadratic { control } => kurbo::QuadBez::new(pt(s), pt(*control), pt(e)).eval(t),
        Curve::Cubic { c1, c2 } => kurbo::CubicBez::new(pt(s), pt(*c1), pt(*c2), pt(e)).eval(t),
        Curve::Arc {
            radius,
            large_arc,
            right,
        } => {
            let arc = circle_arc(s, e, *radius, *large_arc, *right);
            let a = arc.start_angle + t * arc.sweep_angle;
            Point::new(
                arc.center.x + radius * a.cos(),
                arc.center.y + radius * a.sin(),
            )
        }
    };
    [p.x, p.y]
}
