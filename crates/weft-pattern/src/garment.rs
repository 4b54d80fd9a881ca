//! A placed, woven garment: every panel woven ([`crate::weave`]), placed in
//! 3D from the file, built into one [`weft_core::Fabric`] (one woven-panel
//! object per panel, in [`Pattern::panels`] order), and the stitches turned
//! into seam ties between yarn ends.

use crate::error::PatternError;
use crate::geometry::Outline;
use crate::spec::{Panel, Pattern};
use crate::weave::{PanelWeave, weave_outline};
use nalgebra::Vector3;
use std::collections::HashMap;
use weft_core::{Fabric, FabricBuilder, Material, PanelNode, WovenPanelSpec};

/// How to shift the garment vertically after placement (DESIGN §9).
///
/// GarmentCode patterns are placed on a body standing with its feet at
/// y = 0 (the shirt's shoulder line is at 1.41 m, on `mean_all.obj`'s
/// 1.42 m shoulders). Garment-Pattern-Generator patterns are placed around
/// their body's root near the pelvis (the tee spans -0.32..0.29 m, the skirt
/// -0.68..-0.05 m), so they need to be lifted to drape on a feet-at-zero body.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum VerticalOffset {
    /// Place as the file says.
    None,
    /// Add this many metres to every y.
    Fixed(f64),
    /// If the placed panels' bounding-box centre lies below `threshold`
    /// (m), the pattern counts as pelvis-centred (GPG) and `origin_height`
    /// is added to every y; otherwise nothing is. The bounding-box centre is
    /// about 0 m for the GPG files and above 0.7 m for the GarmentCode files.
    Auto {
        /// Height above the feet of the GPG pattern origin on the target body (m).
        origin_height: f64,
        /// Bounding-box centre height below which a pattern is pelvis-centred (m).
        threshold: f64,
    },
}

impl VerticalOffset {
    /// Auto-detection for `mean_all.obj`: origin height
    /// [`GPG_ORIGIN_HEIGHT_MEAN_BODY`], threshold 0.5 m.
    pub const AUTO_MEAN_BODY: VerticalOffset = VerticalOffset::Auto {
        origin_height: GPG_ORIGIN_HEIGHT_MEAN_BODY,
        threshold: 0.5,
    };
}

/// Height of the GPG pattern origin on `mean_all.obj` (m): 1.11 m puts the
/// top of `gpg_tee.json` (0.294 m above its origin) at 1.405 m, the
/// shoulder line of the GarmentCode shirt made for that body (1.406 m), and
/// the waistband of `gpg_skirt_2_panels.json` (0.05 m below the origin) at
/// 1.06 m, just under the body's narrowest torso section (about 1.11 m).
/// The test `gpg_offset_fits_the_mean_body` checks both against the files
/// and the body mesh.
pub const GPG_ORIGIN_HEIGHT_MEAN_BODY: f64 = 1.11;

/// Arm angle below the horizontal of `mean_all.obj` (`arm_pose_angle` of
/// `mean_all.yaml`, 45.483°) and of weft's mannequin (degrees).
pub const MEAN_BODY_ARM_POSE_DEG: f64 = 45.483;

/// Options of [`weave_garment`].
#[derive(Clone, Debug, PartialEq)]
pub struct WeaveOptions {
    /// `[warp, weft]` yarn spacing (m): distance between neighbouring warp
    /// yarns and between neighbouring weft yarns; both > 0.
    pub spacing: [f64; 2],
    /// The material of every yarn (its name is used for all panels).
    pub material: Material,
    /// Grain angle per panel name (degrees, counter-clockwise from the
    /// panel's local y axis); panels not listed use `default_grain_deg`.
    pub grain_deg: HashMap<String, f64>,
    /// Grain angle of panels not in `grain_deg` (degrees; 0: warp along local y).
    pub default_grain_deg: f64,
    /// Curves are flattened to polylines within this distance (m), > 0.
    pub flatten_tolerance: f64,
    /// Free the arc-length coordinates of crossings (sliding yarns).
    pub sliding: bool,
    /// Shortest segment next to a yarn end, as a fraction of the spacing, in
    /// `[0, 1)`. Where a yarn end lies closer than this past a crossing, on
    /// a sewn edge the crossing is taken off that yarn, and on an unsewn edge
    /// (a hem, a neckline) the short stub is cut off so the crossing is the
    /// yarn's end (see [`crate::weave::weave_outline`]); 0 keeps every
    /// crossing and end, and segments then can be a few µm long.
    pub min_end_segment: f64,
    /// Vertical placement correction.
    pub vertical_offset: VerticalOffset,
    /// Arm angle below the horizontal (degrees) of the body a pelvis-centred
    /// (GPG) pattern is draped on, or `None` to place its sleeves as the
    /// file says. GPG patterns are made for arms held horizontally (a
    /// T-pose); on an A-pose body their sleeves sit beside the arm, and the
    /// armpit seams cannot close around it. With an angle, every sleeve is
    /// turned down by it, see [`sleeve_rotations`]. Only applied when the
    /// vertical offset detected a pelvis-centred pattern (a non-zero offset).
    pub sleeve_pose_deg: Option<f64>,
    /// Narrow panels: a panel that gets fewer than 2 warp or 2 weft yarn
    /// pieces at `spacing` (a waistband, cuff or placket narrower than
    /// the spacing) is woven again at half the spacing, up to this many
    /// times, with the material scaled to the narrower strips
    /// ([`Material::scaled_per_width`]). 0 keeps every panel at `spacing`
    /// (a panel with no yarns is then [`PatternError::EmptyPanel`]).
    pub narrow_panel_halvings: u32,
}

impl WeaveOptions {
    /// Square spacing `spacing` (m), example cotton, default grain, 0.2 mm
    /// flattening, sliding on, shortest end segment 0.2 spacings,
    /// [`VerticalOffset::AUTO_MEAN_BODY`], sleeves turned to
    /// [`MEAN_BODY_ARM_POSE_DEG`].
    pub fn new(spacing: f64) -> Self {
        Self {
            spacing: [spacing, spacing],
            material: Material::example_cotton(),
            grain_deg: HashMap::new(),
            default_grain_deg: 0.0,
            flatten_tolerance: 2e-4,
            sliding: true,
            min_end_segment: 0.2,
            vertical_offset: VerticalOffset::AUTO_MEAN_BODY,
            sleeve_pose_deg: Some(MEAN_BODY_ARM_POSE_DEG),
            narrow_panel_halvings: 0,
        }
    }
}

/// A seam tie: yarn end `node` should meet the point
/// `(1 - t) x[other[0]] + t x[other[1]]` on the other side of the stitch
/// (global node indices of [`Garment::fabric`]; `other[0] == other[1]` with
/// `t = 0` when the point is a single node).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeamTie {
    /// Index into [`Pattern::stitches`].
    pub stitch: usize,
    /// The yarn-end node.
    pub node: usize,
    /// Two consecutive yarn ends along the other panel's outline.
    pub other: [usize; 2],
    /// Interpolation weight in `[0, 1]`.
    pub t: f64,
}

impl SeamTie {
    /// The point on the other panel's outline the node is tied to, in
    /// positions `x` (m, one per node): `(1 - t) x[other[0]] + t x[other[1]]`.
    pub fn target(&self, x: &[Vector3<f64>]) -> Vector3<f64> {
        x[self.other[0]] * (1.0 - self.t) + x[self.other[1]] * self.t
    }

    /// Distance (m) between the node and its target point in positions `x`.
    pub fn gap(&self, x: &[Vector3<f64>]) -> f64 {
        (x[self.node] - self.target(x)).norm()
    }
}

/// The yarn ends on one pattern edge.
#[derive(Clone, Debug, PartialEq)]
pub struct EdgeReport {
    /// The edge's label, if any (e.g. `lower_interface`).
    pub label: Option<String>,
    /// Global node indices of the yarn ends on the edge, in order from the
    /// edge's start to its end (an end at a corner belongs to both edges).
    pub end_nodes: Vec<usize>,
    /// Their normalised arc length along the edge (0 at its start, 1 at its end).
    pub params: Vec<f64>,
}

/// What one panel became.
#[derive(Clone, Debug, PartialEq)]
pub struct PanelReport {
    /// Panel name.
    pub name: String,
    /// Panel label, if any.
    pub label: Option<String>,
    /// Object index in the fabric.
    pub object: usize,
    /// Global index of the panel's first node; its nodes are contiguous.
    pub first_node: usize,
    /// Number of nodes.
    pub nodes: usize,
    /// Warp yarn pieces.
    pub warp_yarns: usize,
    /// Weft yarn pieces.
    pub weft_yarns: usize,
    /// Nodes with a warp and a weft yarn.
    pub crossings: usize,
    /// Nodes on the outline (ends of at least one yarn).
    pub ends: usize,
    /// `[warp, weft]` spacing the panel was woven at (m): the garment's
    /// spacing, or a finer one for a narrow panel
    /// ([`WeaveOptions::narrow_panel_halvings`]).
    pub spacing: [f64; 2],
    /// Index of the panel's material in the fabric's materials.
    pub material: usize,
    /// Pieces dropped because they cross no other yarn.
    pub dropped_stubs: usize,
    /// Shortest rest segment (m).
    pub shortest_segment: f64,
    /// Outline area (m², positive for a counter-clockwise loop).
    pub area: f64,
    /// Grain angle used (degrees).
    pub grain_deg: f64,
    /// The panel's front normal in the world: `R (0, 0, ±1)`, `+` for a
    /// counter-clockwise edge loop (GarmentCode: the loop's traversal order
    /// defines the panel's front; on the files read, it points away from the
    /// body: +z for front panels, -z for back panels).
    pub normal: [f64; 3],
    /// Per pattern edge, its yarn ends.
    pub edges: Vec<EdgeReport>,
}

/// Seam ties of one stitch.
#[derive(Clone, Debug, PartialEq)]
pub struct StitchReport {
    /// Index range into [`Garment::seams`].
    pub ties: std::ops::Range<usize>,
    /// Yarn ends on side a and side b.
    pub ends: [usize; 2],
    /// Edge lengths of side a and side b (m, flattened outline).
    pub lengths: [f64; 2],
}

/// A woven, placed garment ready to sew.
#[derive(Clone, Debug)]
pub struct Garment {
    /// All panels as one fabric (positions in metres, Y up).
    pub fabric: Fabric,
    /// Seam ties of all stitches: every yarn end on a stitched edge has one;
    /// a side whose edge holds no yarn end (shorter than the spacing) is
    /// sewn by one tie from the panel's yarn end nearest to the edge's
    /// middle to the other edge's middle.
    pub seams: Vec<SeamTie>,
    /// Per stitch, its ties.
    pub stitches: Vec<StitchReport>,
    /// Per panel, in [`Pattern::panels`] order.
    pub panels: Vec<PanelReport>,
    /// Per node, its position in its panel's own 2D frame (m, the frame of
    /// the pattern file's outline): the map from the flat panel to the
    /// placed or simulated garment, used to carry a state from one weave
    /// of the pattern to another (multilevel draping).
    pub local: Vec<[f64; 2]>,
    /// The vertical offset applied (m).
    pub vertical_offset: f64,
}

impl Garment {
    /// Yarn-end nodes on edges labelled `label` (all panels), sorted.
    pub fn labelled_nodes(&self, label: &str) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .panels
            .iter()
            .flat_map(|p| &p.edges)
            .filter(|e| e.label.as_deref() == Some(label))
            .flat_map(|e| e.end_nodes.iter().copied())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Index (into [`Self::panels`]) of the panel that holds `node` (the
    /// panels' nodes are contiguous ranges of the fabric's); `None` for a
    /// node beyond them.
    pub fn panel_of(&self, node: usize) -> Option<usize> {
        self.panels
            .iter()
            .position(|p| (p.first_node..p.first_node + p.nodes).contains(&node))
    }

    /// Total counts `(yarns, crossings, ends)` over the panels.
    pub fn totals(&self) -> (usize, usize, usize) {
        self.panels.iter().fold((0, 0, 0), |t, p| {
            (
                t.0 + p.warp_yarns + p.weft_yarns,
                t.1 + p.crossings,
                t.2 + p.ends,
            )
        })
    }
}

fn option(option: &str, expected: &str, found: String) -> PatternError {
    PatternError::Option {
        option: option.into(),
        expected: expected.into(),
        found,
    }
}

/// Largest width or height of a panel's outline (m): no garment panel
/// comes near it, and weaving a much larger one at a garment's spacing
/// would not finish (a vertex at 1e12 cm is a typo, not a panel).
pub const MAX_PANEL_SIZE: f64 = 10.0;

/// Weaves, places and stitches `pattern`.
///
/// Each panel is woven at `opts.spacing` with its grain, placed by
/// `p = R (x, y, 0) + translation` plus the vertical offset, and added as one
/// [`weft_core::FabricBuilder::add_woven_panel`] object. For every stitch the
/// yarn ends on each side are mapped by normalised arc length to the other
/// side (the start of side a meets the end of side b, or its start with
/// `right_wrong`) and tied to the interpolated point between the two
/// consecutive yarn ends of the other panel's outline around that place.
///
/// # Errors
/// [`PatternError::Option`] for a non-positive spacing or tolerance or an
/// unknown panel in `grain_deg`; [`PatternError::PanelTooLarge`] for a
/// panel wider or taller than [`MAX_PANEL_SIZE`];
/// [`PatternError::EmptyPanel`] for a panel
/// smaller than the spacing (after the halvings of
/// [`WeaveOptions::narrow_panel_halvings`]); [`PatternError::Fabric`] if weft-core rejects
/// the result (material, validation).
pub fn weave_garment(pattern: &Pattern, opts: &WeaveOptions) -> Result<Garment, PatternError> {
    if !opts.spacing.iter().all(|s| s.is_finite() && *s > 0.0) {
        return Err(option(
            "spacing",
            "two positive lengths in m",
            format!("{:?}", opts.spacing),
        ));
    }
    if !(opts.flatten_tolerance.is_finite() && opts.flatten_tolerance > 0.0) {
        return Err(option(
            "flatten_tolerance",
            "a positive length in m",
            opts.flatten_tolerance.to_string(),
        ));
    }
    if !(0.0..1.0).contains(&opts.min_end_segment) {
        return Err(option(
            "min_end_segment",
            "a fraction of the spacing in [0, 1)",
            opts.min_end_segment.to_string(),
        ));
    }
    for name in opts.grain_deg.keys() {
        if pattern.panel_index(name).is_none() {
            return Err(option(
                "grain_deg",
                "names of panels of the pattern",
                name.clone(),
            ));
        }
    }
    let file = pattern.file.clone();
    let fabric_err = |source| PatternError::Fabric {
        file: file.clone(),
        source,
    };
    for panel in &pattern.panels {
        let extent = crate::geometry::size_bound(panel);
        if extent.is_nan() || extent > MAX_PANEL_SIZE {
            return Err(PatternError::PanelTooLarge {
                file: pattern.file.clone(),
                path: format!("pattern.panels.{}", panel.name),
                size_m: extent,
                limit_m: MAX_PANEL_SIZE,
            });
        }
    }
    let outlines: Vec<Outline> = pattern
        .panels
        .iter()
        .map(|p| Outline::new(p, opts.flatten_tolerance))
        .collect();
    let offset = vertical_offset(pattern, &outlines, opts.vertical_offset);
    let turns = match opts.sleeve_pose_deg {
        Some(angle) if offset != 0.0 => sleeve_rotations(pattern, &outlines, angle),
        _ => vec![None; pattern.panels.len()],
    };
    // The materials of the panels: the garment's, and per narrow panel the
    // garment's scaled to its finer spacing (one entry per distinct scale).
    let mut materials = vec![opts.material.clone()];
    let mut woven = Vec::with_capacity(pattern.panels.len());
    for (panel, outline) in pattern.panels.iter().zip(&outlines) {
        let grain = *opts
            .grain_deg
            .get(&panel.name)
            .unwrap_or(&opts.default_grain_deg);
        let pi = woven.len();
        let free_edges: Vec<bool> = (0..panel.edges.len())
            .map(|k| {
                !pattern
                    .stitches
                    .iter()
                    .any(|st| [st.a, st.b].iter().any(|e| e.panel == pi && e.edge == k))
            })
            .collect();
        let mut halvings = 0;
        let mut w;
        loop {
            let f = 0.5f64.powi(halvings as i32);
            w = weave_outline(
                outline,
                [opts.spacing[0] * f, opts.spacing[1] * f],
                grain.to_radians(),
                opts.min_end_segment,
                &free_edges,
            );
            if (w.warp.len() >= 2 && w.weft.len() >= 2) || halvings >= opts.narrow_panel_halvings {
                break;
            }
            halvings += 1;
        }
        let f = 0.5f64.powi(halvings as i32);
        let material = if halvings == 0 {
            0
        } else {
            let m = opts.material.scaled_per_width(f);
            match materials.iter().position(|x| x.name == m.name) {
                Some(k) => k,
                None => {
                    materials.push(m);
                    materials.len() - 1
                }
            }
        };
        woven.push((
            grain,
            w,
            [opts.spacing[0] * f, opts.spacing[1] * f],
            material,
        ));
    }
    let mut builder = FabricBuilder::new(materials.clone()).map_err(fabric_err)?;
    let mut local = Vec::new();
    let mut weaves: Vec<PanelWeave> = Vec::with_capacity(pattern.panels.len());
    let mut panels = Vec::with_capacity(pattern.panels.len());
    let mut first_node = 0;
    for (pi, ((panel, outline), (grain, w, spacing, material))) in
        pattern.panels.iter().zip(&outlines).zip(woven).enumerate()
    {
        if w.warp.is_empty() || w.weft.is_empty() {
            return Err(PatternError::EmptyPanel {
                file: file.clone(),
                path: format!("pattern.panels.{}", panel.name),
                spacing,
            });
        }
        let turn = turns[pi].unwrap_or_default();
        let r = turn.rotation * panel.rotation_matrix();
        let t = turn.rotation * (Vector3::from(panel.translation) - turn.pivot)
            + turn.pivot
            + Vector3::new(0.0, offset, 0.0);
        let nodes = (0..w.nodes.len())
            .map(|n| {
                let x = r * Vector3::new(w.nodes[n][0], w.nodes[n][1], 0.0) + t;
                PanelNode {
                    x: [x.x, x.y, x.z],
                    u: w.u[n],
                    v: w.v[n],
                    crimp: w.crimp[n],
                }
            })
            .collect();
        local.extend(w.nodes.iter().copied());
        let spec = WovenPanelSpec {
            material: materials[material].name.clone(),
            nodes,
            warp: w.warp.clone(),
            weft: w.weft.clone(),
            sliding: opts.sliding,
            pinned: vec![],
        };
        let object = builder.add_woven_panel(&spec).map_err(fabric_err)?;
        let edges = edge_reports(panel, outline, &w, first_node);
        panels.push(PanelReport {
            name: panel.name.clone(),
            label: panel.label.clone(),
            object,
            first_node,
            nodes: w.nodes.len(),
            warp_yarns: w.warp.len(),
            weft_yarns: w.weft.len(),
            crossings: w.crossings(),
            ends: w.end_nodes(),
            spacing,
            material,
            dropped_stubs: w.dropped_stubs,
            shortest_segment: w.shortest_segment(),
            area: outline.signed_area(),
            grain_deg: grain,
            normal: {
                let n = r * Vector3::new(0.0, 0.0, outline.signed_area().signum());
                [n.x, n.y, n.z]
            },
            edges,
        });
        debug_assert_eq!(object, pi);
        first_node += w.nodes.len();
        weaves.push(w);
    }
    let fabric = builder.build().map_err(fabric_err)?;
    fabric.check_state(&fabric.initial).map_err(fabric_err)?;
    // Seams.
    let mut seams = vec![];
    let mut stitches = vec![];
    for (si, st) in pattern.stitches.iter().enumerate() {
        let start = seams.len();
        let sides = [st.a, st.b];
        for side in 0..2 {
            let (me, other) = (sides[side], sides[1 - side]);
            let mine = &panels[me.panel].edges[me.edge];
            let ends = ends_by_position(&weaves[other.panel], panels[other.panel].first_node);
            let o = &outlines[other.panel];
            let [r0, r1] = o.edge_range[other.edge];
            for (&node, &s) in mine.end_nodes.iter().zip(&mine.params) {
                let sigma = if st.right_wrong { s } else { 1.0 - s };
                let (pair, t) = bracket(&ends, r0 + sigma * (r1 - r0), o.length);
                seams.push(SeamTie {
                    stitch: si,
                    node,
                    other: pair,
                    t,
                });
            }
            if mine.end_nodes.is_empty() {
                // An edge shorter than the spacing may hold no yarn end: sew
                // it at its middle with the panel's nearest yarn end.
                let own = ends_by_position(&weaves[me.panel], panels[me.panel].first_node);
                let mo = &outlines[me.panel];
                let [a0, a1] = mo.edge_range[me.edge];
                let mid = 0.5 * (a0 + a1);
                let cyclic = |p: f64| {
                    let d = (p - mid).rem_euclid(mo.length);
                    d.min(mo.length - d)
                };
                if let Some(&(_, node)) = own
                    .iter()
                    .min_by(|x, y| cyclic(x.0).total_cmp(&cyclic(y.0)))
                {
                    let (pair, t) = bracket(&ends, 0.5 * (r0 + r1), o.length);
                    seams.push(SeamTie {
                        stitch: si,
                        node,
                        other: pair,
                        t,
                    });
                }
            }
        }
        let len = |e: crate::spec::EdgeRef| {
            let [a, b] = outlines[e.panel].edge_range[e.edge];
            b - a
        };
        stitches.push(StitchReport {
            ties: start..seams.len(),
            ends: [
                panels[st.a.panel].edges[st.a.edge].end_nodes.len(),
                panels[st.b.panel].edges[st.b.edge].end_nodes.len(),
            ],
            lengths: [len(st.a), len(st.b)],
        });
    }
    Ok(Garment {
        fabric,
        seams,
        stitches,
        panels,
        local,
        vertical_offset: offset,
    })
}

/// A rigid turn of a panel after its placement: `x ↦ rotation (x - pivot) + pivot`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PanelTurn {
    /// Rotation (orthonormal).
    pub rotation: nalgebra::Matrix3<f64>,
    /// Fixed point (m, placed frame before the vertical offset).
    pub pivot: Vector3<f64>,
}

impl Default for PanelTurn {
    fn default() -> Self {
        Self {
            rotation: nalgebra::Matrix3::identity(),
            pivot: Vector3::zeros(),
        }
    }
}

/// Per panel, the turn that brings a T-pose sleeve down to an arm held
/// `angle_deg` below the horizontal, or `None` for other panels.
///
/// Torso panels are those whose placed outline straddles the body's
/// mid-plane `x = 0`; a sleeve is a panel whose whole placed outline lies
/// farther from that plane, on one side, than every torso point, and which is
/// stitched to a torso panel. It turns about the front-back (z) axis
/// through the midpoint of the torso edges it is stitched to (the armhole),
/// by `-angle` on the `+x` side and `+angle` on the `-x` side, so its far
/// end moves down. Nothing turns when no panel straddles `x = 0`.
pub fn sleeve_rotations(
    pattern: &Pattern,
    outlines: &[Outline],
    angle_deg: f64,
) -> Vec<Option<PanelTurn>> {
    let placed: Vec<Vec<Vector3<f64>>> = pattern
        .panels
        .iter()
        .zip(outlines)
        .map(|(p, o)| o.points.iter().map(|&q| p.place(q)).collect())
        .collect();
    let torso: Vec<bool> = placed
        .iter()
        .map(|pts| {
            let lo = pts.iter().map(|x| x.x).fold(f64::INFINITY, f64::min);
            let hi = pts.iter().map(|x| x.x).fold(f64::NEG_INFINITY, f64::max);
            lo < 0.0 && hi > 0.0
        })
        .collect();
    let half_width = placed
        .iter()
        .zip(&torso)
        .filter(|(_, t)| **t)
        .flat_map(|(pts, _)| pts.iter().map(|x| x.x.abs()))
        .fold(f64::NEG_INFINITY, f64::max);
    if !half_width.is_finite() {
        return vec![None; pattern.panels.len()];
    }
    (0..pattern.panels.len())
        .map(|pi| {
            let side = if placed[pi].iter().all(|x| x.x > half_width) {
                1.0
            } else if placed[pi].iter().all(|x| x.x < -half_width) {
                -1.0
            } else {
                return None;
            };
            // Highest end of the torso edges stitched to this panel.
            let mut top: Option<Vector3<f64>> = None;
            for st in &pattern.stitches {
                for (me, other) in [(st.a, st.b), (st.b, st.a)] {
                    if me.panel == pi && torso[other.panel] {
                        let panel = &pattern.panels[other.panel];
                        let (a, b) = panel.edge_ends(other.edge);
                        for x in [panel.place(a), panel.place(b)] {
                            if top.is_none_or(|t| x.y > t.y) {
                                top = Some(x);
                            }
                        }
                    }
                }
            }
            top.map(|pivot| PanelTurn {
                rotation: *nalgebra::Rotation3::from_axis_angle(
                    &Vector3::z_axis(),
                    -side * angle_deg.to_radians(),
                )
                .matrix(),
                pivot,
            })
        })
        .collect()
}

/// The applied vertical offset (m) for `mode`.
fn vertical_offset(pattern: &Pattern, outlines: &[Outline], mode: VerticalOffset) -> f64 {
    match mode {
        VerticalOffset::None => 0.0,
        VerticalOffset::Fixed(y) => y,
        VerticalOffset::Auto {
            origin_height,
            threshold,
        } => {
            let (lo, hi) = placed_height_range(pattern, outlines);
            if 0.5 * (lo + hi) < threshold {
                origin_height
            } else {
                0.0
            }
        }
    }
}

/// Lowest and highest y (m) of the placed outlines, before any offset.
pub fn placed_height_range(pattern: &Pattern, outlines: &[Outline]) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (panel, o) in pattern.panels.iter().zip(outlines) {
        for &p in &o.points {
            let y = panel.place(p).y;
            lo = lo.min(y);
            hi = hi.max(y);
        }
    }
    (lo, hi)
}

/// Yarn ends on each edge of a panel, ordered along the edge.
fn edge_reports(panel: &Panel, outline: &Outline, w: &PanelWeave, first: usize) -> Vec<EdgeReport> {
    let tol = 1e-7;
    (0..panel.edges.len())
        .map(|k| {
            let [r0, r1] = outline.edge_range[k];
            let mut ends: Vec<(f64, usize)> = vec![];
            for (n, pos) in w.outline_pos.iter().enumerate() {
                let Some(pos) = *pos else { continue };
                // A position near the loop's end is also near its start.
                for p in [pos, pos - outline.length, pos + outline.length] {
                    if p >= r0 - tol && p <= r1 + tol {
                        ends.push((((p - r0) / (r1 - r0)).clamp(0.0, 1.0), first + n));
                        break;
                    }
                }
            }
            ends.sort_by(|a, b| a.0.total_cmp(&b.0));
            EdgeReport {
                label: panel.edges[k].label.clone(),
                end_nodes: ends.iter().map(|e| e.1).collect(),
                params: ends.iter().map(|e| e.0).collect(),
            }
        })
        .collect()
}

/// All yarn ends of a panel as `(outline position, global node)`, sorted.
fn ends_by_position(w: &PanelWeave, first: usize) -> Vec<(f64, usize)> {
    let mut v: Vec<(f64, usize)> = w
        .outline_pos
        .iter()
        .enumerate()
        .filter_map(|(n, p)| p.map(|p| (p, first + n)))
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

/// The two consecutive ends (cyclically along the outline of length `len`)
/// around outline position `s`, and the weight of the second.
fn bracket(ends: &[(f64, usize)], s: f64, len: f64) -> ([usize; 2], f64) {
    let s = s.rem_euclid(len);
    let k = ends.partition_point(|e| e.0 <= s);
    let (a, b) = if k == 0 || k == ends.len() {
        (ends[ends.len() - 1], ends[0])
    } else {
        (ends[k - 1], ends[k])
    };
    let span = (b.0 - a.0).rem_euclid(len);
    let d = (s - a.0).rem_euclid(len);
    if span <= 1e-12 {
        return ([a.1, a.1], 0.0);
    }
    ([a.1, b.1], (d / span).clamp(0.0, 1.0))
}
