//! Building fabrics from object descriptions (DESIGN §8 `yarn` and
//! `woven_patch`), with validation that names the object, yarn and node.

use crate::error::ModelError;
use crate::fabric::{
    BendingElement, DOFS_PER_NODE, Elements, Fabric, Family, NodeSelector, ObjectInfo, ObjectKind,
    Segment, ShearElement, SlidingAnchor, State, U_SLOT, V_SLOT, Yarn,
};
use crate::material::Material;
use nalgebra::Vector3;

/// An explicit yarn (DESIGN §8 `"type": "yarn"`). Its arc-length coordinates
/// start at the cumulative chord lengths of its nodes (the initial shape is at
/// rest) unless `rest_lengths` overrides them; it uses the `u` slot.
#[derive(Clone, Debug, PartialEq)]
pub struct YarnSpec {
    /// Material name.
    pub material: String,
    /// Node positions (m), at least two.
    pub nodes: Vec<[f64; 3]>,
    /// Optional rest length per segment (m), `nodes.len() - 1` entries, each > 0.
    pub rest_lengths: Option<Vec<f64>>,
    /// Node indices whose position is fixed (Dirichlet).
    pub pinned: Vec<usize>,
    /// Extra lumped masses `(node, kg)`.
    pub point_masses: Vec<(usize, f64)>,
    /// Initial velocities `(node, m/s)`; others start at rest.
    pub initial_velocities: Vec<(usize, [f64; 3])>,
    /// Free the interior nodes' arc-length coordinates (the ends stay fixed).
    pub sliding: bool,
}

impl YarnSpec {
    /// A yarn through `nodes` of material `material`, nothing pinned, no point
    /// masses, at rest, not sliding.
    pub fn new(material: &str, nodes: Vec<[f64; 3]>) -> Self {
        Self {
            material: material.into(),
            nodes,
            rest_lengths: None,
            pinned: vec![],
            point_masses: vec![],
            initial_velocities: vec![],
            sliding: false,
        }
    }
}

/// Weave pattern of a woven patch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weave {
    /// Plain weave: the warp passes over the weft where `k + l` is even.
    Plain,
}

impl std::str::FromStr for Weave {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "plain" => Ok(Weave::Plain),
            _ => Err(format!("unknown weave '{s}': expected \"plain\"")),
        }
    }
}

/// A rectangular woven patch (DESIGN §8 `"type": "woven_patch"`).
///
/// Warp yarns run along `warp_direction` (projected into the plane normal to
/// `normal`); weft yarns along `weft = normal × warp`, so (warp, weft, normal)
/// is right-handed. `size[0]` is the extent along the warp direction (the
/// length of a warp yarn), `size[1]` along the weft direction;
/// `yarn_counts = [n_warp, n_weft]`. Warp yarn `k` lies at weft offset
/// `k·size[1]/(n_warp-1)`, weft yarn `l` at warp offset `l·size[0]/(n_weft-1)`,
/// both measured from the corner `center - size/2`. Crossing `(k, l)` is node
/// `k·n_weft + l` of the object (row-major: a row is a warp yarn), so
/// `[200, 200]` is 40,000 nodes as in [SBO17 §6.3]. Its rest coordinates are
/// `u = l·size[0]/(n_weft-1)`, `v = k·size[1]/(n_warp-1)`. See
/// [`crate::fabric`] for which coordinates of boundary nodes stay free.
#[derive(Clone, Debug, PartialEq)]
pub struct WovenPatchSpec {
    /// Material name.
    pub material: String,
    /// Extent along warp and weft directions (m), both > 0.
    pub size: [f64; 2],
    /// `[n_warp, n_weft]`, both ≥ 2.
    pub yarn_counts: [usize; 2],
    /// Patch centre (m).
    pub center: [f64; 3],
    /// Fabric normal (any length > 0).
    pub normal: [f64; 3],
    /// Warp direction (any length > 0, not parallel to `normal`).
    pub warp_direction: [f64; 3],
    /// Weave pattern.
    pub weave: Weave,
    /// Free the arc-length coordinates of crossings (default true).
    pub sliding: bool,
    /// Pinned nodes.
    pub pinned: Vec<NodeSelector>,
}

impl WovenPatchSpec {
    /// A horizontal plain-weave patch (normal +y, warp along +x) centred at
    /// `center`, sliding enabled, nothing pinned.
    pub fn new(material: &str, size: [f64; 2], yarn_counts: [usize; 2], center: [f64; 3]) -> Self {
        Self {
            material: material.into(),
            size,
            yarn_counts,
            center,
            normal: [0.0, 1.0, 0.0],
            warp_direction: [1.0, 0.0, 0.0],
            weave: Weave::Plain,
            sliding: true,
            pinned: vec![],
        }
    }
}

/// One node of a [`WovenPanelSpec`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PanelNode {
    /// Position (m).
    pub x: [f64; 3],
    /// Rest arc-length coordinate along the node's warp yarn (m); unused
    /// (and fixed) when no warp yarn passes through the node.
    pub u: f64,
    /// Rest arc-length coordinate along the node's weft yarn (m); unused
    /// (and fixed) when no weft yarn passes through the node.
    pub v: f64,
    /// `+1` where the warp passes over the weft (along the fabric normal),
    /// `-1` where it passes under, `0` for a node on one yarn only.
    pub crimp: i8,
}

/// A general woven panel: nodes and the warp and weft yarn pieces through
/// them, e.g. a plain-weave grid clipped to a sewing-pattern outline
/// (`weft-pattern`). A rectangular [`WovenPatchSpec`] is the special case in
/// which every yarn runs from one side of the rectangle to the other.
///
/// Each yarn piece is a list of indices into `nodes` in order of strictly
/// increasing arc-length coordinate (`u` for warp pieces, `v` for weft
/// pieces), at least two nodes long. Every node lies on at least one piece,
/// on at most one warp piece and at most one weft piece. Free arc-length
/// coordinates follow [`crate::fabric`]: with `sliding`, a node's `u` is free
/// exactly when it is an interior node of its warp piece and `v` exactly when
/// it is an interior node of its weft piece; the first and last node of a
/// piece (its yarn ends) keep that piece's coordinate fixed.
#[derive(Clone, Debug, PartialEq)]
pub struct WovenPanelSpec {
    /// Material name.
    pub material: String,
    /// Nodes, numbered in this order within the object.
    pub nodes: Vec<PanelNode>,
    /// Warp yarn pieces (node lists, `u` increasing).
    pub warp: Vec<Vec<usize>>,
    /// Weft yarn pieces (node lists, `v` increasing).
    pub weft: Vec<Vec<usize>>,
    /// Free the arc-length coordinates of interior nodes of the pieces.
    pub sliding: bool,
    /// Node indices (within the object) whose position is fixed.
    pub pinned: Vec<usize>,
}

/// Accumulates objects into a [`Fabric`]. Objects are numbered in the order
/// they are added; nodes in object order.
#[derive(Clone, Debug)]
pub struct FabricBuilder {
    materials: Vec<Material>,
    yarns: Vec<Yarn>,
    objects: Vec<ObjectInfo>,
    free: Vec<[bool; DOFS_PER_NODE]>,
    point_mass: Vec<f64>,
    node_yarns: Vec<[Option<usize>; 2]>,
    crimp: Vec<i8>,
    state: State,
    pinned: Vec<(usize, NodeSelector)>,
}

impl FabricBuilder {
    /// A builder over `materials`, each validated.
    ///
    /// # Errors
    /// [`ModelError::InvalidMaterial`] for the first bad material.
    pub fn new(materials: Vec<Material>) -> Result<Self, ModelError> {
        for m in &materials {
            m.validate()?;
        }
        Ok(Self {
            materials,
            yarns: vec![],
            objects: vec![],
            free: vec![],
            point_mass: vec![],
            node_yarns: vec![],
            crimp: vec![],
            state: State {
                x: vec![],
                u: vec![],
                v: vec![],
                x_dot: vec![],
                u_dot: vec![],
                v_dot: vec![],
                anchors: vec![],
            },
            pinned: vec![],
        })
    }

    fn material_index(&self, object: usize, name: &str) -> Result<usize, ModelError> {
        self.materials
            .iter()
            .position(|m| m.name == name)
            .ok_or_else(|| ModelError::UnknownMaterial {
                object,
                material: name.into(),
                known: self
                    .materials
                    .iter()
                    .map(|m| m.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    fn push_node(&mut self, x: Vector3<f64>, u: f64, v: f64, free: [bool; DOFS_PER_NODE]) -> usize {
        self.state.x.push(x);
        self.state.u.push(u);
        self.state.v.push(v);
        self.state.x_dot.push(Vector3::zeros());
        self.state.u_dot.push(0.0);
        self.state.v_dot.push(0.0);
        self.free.push(free);
        self.point_mass.push(0.0);
        self.node_yarns.push([None, None]);
        self.crimp.push(0);
        self.free.len() - 1
    }

    /// Adds an explicit yarn; returns its object index.
    ///
    /// # Errors
    /// Unknown material, fewer than two nodes, non-finite positions,
    /// velocities or masses, negative point masses, coincident consecutive
    /// nodes, non-positive rest lengths (non-increasing arc-length
    /// coordinates), indices out of range.
    pub fn add_yarn(&mut self, spec: &YarnSpec) -> Result<usize, ModelError> {
        let object = self.objects.len();
        let material = self.material_index(object, &spec.material)?;
        let yarn_id = self.yarns.len();
        let label = format!("object {object}, warp yarn 0");
        let n = spec.nodes.len();
        if n < 2 {
            return Err(ModelError::TooFewNodes {
                yarn: label,
                count: n,
            });
        }
        for (i, p) in spec.nodes.iter().enumerate() {
            if !p.iter().all(|c| c.is_finite()) {
                return Err(ModelError::NonFinite {
                    yarn: label,
                    node: i,
                    what: "position",
                    value: format!("{p:?}"),
                });
            }
        }
        for (i, w) in spec.nodes.windows(2).enumerate() {
            if w[0] == w[1] {
                return Err(ModelError::CoincidentNodes {
                    yarn: label,
                    prev: i,
                    node: i + 1,
                });
            }
        }
        let lengths: Vec<f64> = match &spec.rest_lengths {
            Some(r) => {
                if r.len() != n - 1 {
                    return Err(ModelError::LengthMismatch {
                        object,
                        what: "rest_lengths",
                        expected: n - 1,
                        got: r.len(),
                    });
                }
                r.clone()
            }
            None => spec
                .nodes
                .windows(2)
                .map(|w| (Vector3::from(w[1]) - Vector3::from(w[0])).norm())
                .collect(),
        };
        let mut s = vec![0.0; n];
        for i in 1..n {
            let l = lengths[i - 1];
            if !l.is_finite() {
                return Err(ModelError::NonFinite {
                    yarn: label,
                    node: i,
                    what: "rest length",
                    value: l.to_string(),
                });
            }
            s[i] = s[i - 1] + l;
            if s[i] <= s[i - 1] {
                return Err(ModelError::NonIncreasingArcLength {
                    yarn: label,
                    node: i,
                    value: s[i],
                    prev: i - 1,
                    prev_value: s[i - 1],
                });
            }
        }
        let first = self.free.len();
        let mut nodes = Vec::with_capacity(n);
        for i in 0..n {
            let slide = spec.sliding && i > 0 && i < n - 1;
            let id = self.push_node(
                Vector3::from(spec.nodes[i]),
                s[i],
                0.0,
                [true, true, true, slide, false],
            );
            self.node_yarns[id][0] = Some(yarn_id);
            nodes.push(id);
        }
        let check = |i: usize, what: &'static str| {
            if i < n {
                Ok(first + i)
            } else {
                Err(ModelError::NodeOutOfRange {
                    object,
                    what,
                    index: i,
                    count: n,
                })
            }
        };
        for &(i, m) in &spec.point_masses {
            let id = check(i, "point_masses")?;
            if !(m.is_finite() && m >= 0.0) {
                return Err(ModelError::NonFinite {
                    yarn: label,
                    node: i,
                    what: "point mass (kg, must be ≥ 0)",
                    value: m.to_string(),
                });
            }
            self.point_mass[id] += m;
        }
        for &(i, v) in &spec.initial_velocities {
            let id = check(i, "initial_velocities")?;
            if !v.iter().all(|c| c.is_finite()) {
                return Err(ModelError::NonFinite {
                    yarn: label,
                    node: i,
                    what: "initial velocity",
                    value: format!("{v:?}"),
                });
            }
            self.state.x_dot[id] = Vector3::from(v);
        }
        for &i in &spec.pinned {
            check(i, "pinned")?;
            self.pinned.push((object, NodeSelector::Index(i)));
        }
        self.yarns.push(Yarn {
            family: Family::Warp,
            material,
            object,
            index_in_object: 0,
            nodes,
        });
        self.objects.push(ObjectInfo {
            kind: ObjectKind::Yarn,
            first_node: first,
            node_count: n,
        });
        Ok(object)
    }

    /// Adds a rectangular woven patch; returns its object index. The patch is
    /// turned into a [`WovenPanelSpec`] (nodes row-major, warp yarns then weft
    /// yarns) and built through the same code path as
    /// [`Self::add_woven_panel`].
    ///
    /// # Errors
    /// Unknown material; [`ModelError::InvalidPatch`] for a non-positive or
    /// non-finite size, fewer than two yarns in a direction, a zero or
    /// non-finite normal or warp direction, or a warp direction parallel to
    /// the normal; [`ModelError::BadSelector`] for pinned selectors that do
    /// not fit the grid.
    pub fn add_woven_patch(&mut self, spec: &WovenPatchSpec) -> Result<usize, ModelError> {
        let object = self.objects.len();
        let material = self.material_index(object, &spec.material)?;
        let bad = |field: &'static str, reason: String| ModelError::InvalidPatch {
            object,
            field,
            reason,
        };
        if !spec.size.iter().all(|s| s.is_finite() && *s > 0.0) {
            return Err(bad(
                "size",
                format!("must be two positive lengths in m, got {:?}", spec.size),
            ));
        }
        if spec.yarn_counts.iter().any(|&c| c < 2) {
            return Err(bad(
                "yarn_counts",
                format!(
                    "must be at least [2, 2] (warp, weft), got {:?}",
                    spec.yarn_counts
                ),
            ));
        }
        if !spec.center.iter().all(|c| c.is_finite()) {
            return Err(bad(
                "center",
                format!("must be finite, got {:?}", spec.center),
            ));
        }
        let normal = Vector3::from(spec.normal);
        if !(normal.iter().all(|c| c.is_finite()) && normal.norm() > 0.0) {
            return Err(bad(
                "normal",
                format!("must be a non-zero finite vector, got {:?}", spec.normal),
            ));
        }
        let normal = normal.normalize();
        let warp = Vector3::from(spec.warp_direction);
        if !warp.iter().all(|c| c.is_finite()) {
            return Err(bad(
                "warp_direction",
                format!("must be finite, got {:?}", spec.warp_direction),
            ));
        }
        let warp_in_plane = warp - normal * normal.dot(&warp);
        if warp_in_plane.norm() <= 1e-9 * warp.norm().max(f64::MIN_POSITIVE) || warp.norm() == 0.0 {
            return Err(bad(
                "warp_direction",
                format!(
                    "must be non-zero and not parallel to the normal, got {:?}",
                    spec.warp_direction
                ),
            ));
        }
        let d1 = warp_in_plane.normalize();
        let d2 = normal.cross(&d1);
        let [n_warp, n_weft] = spec.yarn_counts;
        let hx = spec.size[0] / (n_weft - 1) as f64; // spacing of weft yarns, along warp
        let hy = spec.size[1] / (n_warp - 1) as f64; // spacing of warp yarns, along weft
        let origin =
            Vector3::from(spec.center) - d1 * (0.5 * spec.size[0]) - d2 * (0.5 * spec.size[1]);
        let mut nodes = Vec::with_capacity(n_warp * n_weft);
        for k in 0..n_warp {
            for l in 0..n_weft {
                let (u, v) = (l as f64 * hx, k as f64 * hy);
                let x = origin + d1 * u + d2 * v;
                let crimp = match spec.weave {
                    Weave::Plain => {
                        if (k + l) % 2 == 0 {
                            1
                        } else {
                            -1
                        }
                    }
                };
                nodes.push(PanelNode {
                    x: [x.x, x.y, x.z],
                    u,
                    v,
                    crimp,
                });
            }
        }
        let warp = (0..n_warp)
            .map(|k| (0..n_weft).map(|l| k * n_weft + l).collect())
            .collect();
        let weft = (0..n_weft)
            .map(|l| (0..n_warp).map(|k| k * n_weft + l).collect())
            .collect();
        let panel = WovenPanelSpec {
            material: spec.material.clone(),
            nodes,
            warp,
            weft,
            sliding: spec.sliding,
            pinned: vec![],
        };
        let info = self.push_woven(
            object,
            material,
            &panel,
            ObjectKind::WovenPatch { n_warp, n_weft },
        );
        for sel in &spec.pinned {
            crate::fabric::select_in(&info, sel).map_err(|reason| ModelError::BadSelector {
                object,
                selector: sel.to_string(),
                reason,
            })?;
            self.pinned.push((object, *sel));
        }
        Ok(object)
    }

    /// Adds a general woven panel; returns its object index. Nodes keep the
    /// order of `spec.nodes`; the warp pieces become yarns `0..` of the
    /// object in order, then the weft pieces. Segments, bending, shear and
    /// sliding anchors are derived in [`FabricBuilder::build`] exactly as for
    /// a woven patch (which is built through the same code path).
    ///
    /// # Errors
    /// Unknown material; [`ModelError::InvalidPatch`] (field `nodes`,
    /// `warp`, `weft` or `pinned`) for a non-finite node, a piece with fewer
    /// than two nodes, a node index out of range, a node on two pieces of one
    /// family or on none; [`ModelError::CoincidentNodes`] for consecutive
    /// nodes of a piece at one position; [`ModelError::NonIncreasingArcLength`]
    /// where the arc-length coordinate does not increase along a piece.
    pub fn add_woven_panel(&mut self, spec: &WovenPanelSpec) -> Result<usize, ModelError> {
        let object = self.objects.len();
        let material = self.material_index(object, &spec.material)?;
        let bad = |field: &'static str, reason: String| ModelError::InvalidPatch {
            object,
            field,
            reason,
        };
        let n = spec.nodes.len();
        for (i, p) in spec.nodes.iter().enumerate() {
            if !(p.x.iter().all(|c| c.is_finite()) && p.u.is_finite() && p.v.is_finite()) {
                return Err(bad("nodes", format!("node {i} is not finite: {p:?}")));
            }
        }
        let mut on = vec![[false; 2]; n];
        for (fam, (field, pieces)) in [("warp", &spec.warp), ("weft", &spec.weft)]
            .into_iter()
            .enumerate()
        {
            for (y, piece) in pieces.iter().enumerate() {
                let label = format!("object {object}, {field} yarn {y}");
                if piece.len() < 2 {
                    return Err(ModelError::TooFewNodes {
                        yarn: label,
                        count: piece.len(),
                    });
                }
                for (i, &node) in piece.iter().enumerate() {
                    if node >= n {
                        return Err(bad(
                            field,
                            format!("yarn {y} names node {node}, but the panel has {n} nodes"),
                        ));
                    }
                    if on[node][fam] {
                        return Err(bad(
                            field,
                            format!("node {node} lies on two {field} yarns; expected at most one"),
                        ));
                    }
                    on[node][fam] = true;
                    if i > 0 {
                        let prev = piece[i - 1];
                        let (a, b) = (&spec.nodes[prev], &spec.nodes[node]);
                        if a.x == b.x {
                            return Err(ModelError::CoincidentNodes {
                                yarn: label,
                                prev: i - 1,
                                node: i,
                            });
                        }
                        let (sa, sb) = if fam == 0 { (a.u, b.u) } else { (a.v, b.v) };
                        if sb <= sa {
                            return Err(ModelError::NonIncreasingArcLength {
                                yarn: label,
                                node: i,
                                value: sb,
                                prev: i - 1,
                                prev_value: sa,
                            });
                        }
                    }
                }
            }
        }
        if let Some(i) = on.iter().position(|o| !o[0] && !o[1]) {
            return Err(bad(
                "nodes",
                format!("node {i} lies on no yarn; every node must be on a warp or weft piece"),
            ));
        }
        if let Some(&i) = spec.pinned.iter().find(|&&i| i >= n) {
            return Err(ModelError::NodeOutOfRange {
                object,
                what: "pinned",
                index: i,
                count: n,
            });
        }
        let kind = ObjectKind::WovenPanel {
            warp_yarns: spec.warp.len(),
            weft_yarns: spec.weft.len(),
        };
        self.push_woven(object, material, spec, kind);
        for &i in &spec.pinned {
            self.pinned.push((object, NodeSelector::Index(i)));
        }
        Ok(object)
    }

    /// The code path shared by [`Self::add_woven_patch`] and
    /// [`Self::add_woven_panel`]: pushes the (validated) nodes, the warp then
    /// weft yarns and the object record.
    fn push_woven(
        &mut self,
        object: usize,
        material: usize,
        spec: &WovenPanelSpec,
        kind: ObjectKind,
    ) -> ObjectInfo {
        let first = self.free.len();
        let first_yarn = self.yarns.len();
        let n = spec.nodes.len();
        // Position of each node on its warp / weft piece: (yarn, interior?).
        let mut along: Vec<[Option<(usize, bool)>; 2]> = vec![[None, None]; n];
        for (fam, pieces) in [&spec.warp, &spec.weft].into_iter().enumerate() {
            let offset = if fam == 0 { 0 } else { spec.warp.len() };
            for (y, piece) in pieces.iter().enumerate() {
                let last = piece.len() - 1;
                for (i, &node) in piece.iter().enumerate() {
                    along[node][fam] = Some((first_yarn + offset + y, i > 0 && i < last));
                }
            }
        }
        for (p, a) in spec.nodes.iter().zip(&along) {
            let u_free = spec.sliding && matches!(a[0], Some((_, true)));
            let v_free = spec.sliding && matches!(a[1], Some((_, true)));
            let id = self.push_node(
                Vector3::from(p.x),
                p.u,
                p.v,
                [true, true, true, u_free, v_free],
            );
            self.node_yarns[id] = [a[0].map(|(y, _)| y), a[1].map(|(y, _)| y)];
            self.crimp[id] = p.crimp;
        }
        for (family, pieces) in [(Family::Warp, &spec.warp), (Family::Weft, &spec.weft)] {
            for (y, piece) in pieces.iter().enumerate() {
                self.yarns.push(Yarn {
                    family,
                    material,
                    object,
                    index_in_object: y,
                    nodes: piece.iter().map(|&i| first + i).collect(),
                });
            }
        }
        let info = ObjectInfo {
            kind,
            first_node: first,
            node_count: n,
        };
        self.objects.push(info);
        info
    }

    /// Builds the element lists, applies the pins, checks masses and returns
    /// the fabric.
    ///
    /// # Errors
    /// [`ModelError::ZeroMass`] for a node with free DOFs and no mass.
    pub fn build(self) -> Result<Fabric, ModelError> {
        let FabricBuilder {
            materials,
            yarns,
            objects,
            mut free,
            point_mass,
            node_yarns,
            crimp,
            mut state,
            pinned,
        } = self;
        let mut elements = Elements::default();
        for (y, yarn) in yarns.iter().enumerate() {
            let (f, mat) = (yarn.family, yarn.material);
            for w in yarn.nodes.windows(2) {
                let rest = state.arc(w[1], f) - state.arc(w[0], f);
                elements.segments.push(Segment {
                    a: w[0],
                    b: w[1],
                    yarn: y,
                    family: f,
                    material: mat,
                    rest_spacing: rest,
                });
            }
            for w in yarn.nodes.windows(3) {
                elements.bending.push(BendingElement {
                    center: w[1],
                    next: w[2],
                    prev: w[0],
                    yarn: y,
                    family: f,
                    material: mat,
                });
            }
        }
        // Shear pairs: every crossing with each of its warp and weft neighbours.
        let neighbours = |yarn: &Yarn, node: usize| -> Vec<usize> {
            let i = yarn
                .nodes
                .iter()
                .position(|&n| n == node)
                .expect("node on yarn");
            let mut v = vec![];
            if i > 0 {
                v.push(yarn.nodes[i - 1]);
            }
            if i + 1 < yarn.nodes.len() {
                v.push(yarn.nodes[i + 1]);
            }
            v
        };
        for (node, ny) in node_yarns.iter().enumerate() {
            if let [Some(wy), Some(fy)] = *ny {
                let (wyarn, fyarn) = (&yarns[wy], &yarns[fy]);
                for a in neighbours(wyarn, node) {
                    for b in neighbours(fyarn, node) {
                        let la = (state.u[a] - state.u[node]).abs();
                        let lb = (state.v[b] - state.v[node]).abs();
                        elements.shear.push(ShearElement {
                            crossing: node,
                            warp_neighbor: a,
                            weft_neighbor: b,
                            material: wyarn.material,
                            rest_spacing: 0.5 * (la + lb),
                        });
                    }
                }
            }
        }
        for (object, sel) in &pinned {
            let info = objects[*object];
            for n in crate::fabric::select_in(&info, sel).expect("validated when added") {
                free[n][0] = false;
                free[n][1] = false;
                free[n][2] = false;
            }
        }
        for (node, ny) in node_yarns.iter().enumerate() {
            for (slot, family, yarn) in
                [(U_SLOT, Family::Warp, ny[0]), (V_SLOT, Family::Weft, ny[1])]
            {
                if let (true, Some(y)) = (free[node][slot], yarn) {
                    elements.anchors.push(SlidingAnchor {
                        node,
                        family,
                        material: yarns[y].material,
                    });
                    state.anchors.push(state.arc(node, family));
                }
            }
        }
        let fabric = Fabric {
            materials,
            yarns,
            objects,
            free,
            point_mass,
            node_yarns,
            crimp,
            elements,
            initial: state,
        };
        let masses = fabric.lumped_masses(&fabric.initial);
        for yarn in &fabric.yarns {
            for (i, &n) in yarn.nodes.iter().enumerate() {
                if masses[n] <= 0.0 && fabric.free[n].iter().any(|f| *f) {
                    return Err(ModelError::ZeroMass {
                        yarn: yarn.label(),
                        node: i,
                        material: fabric.materials[yarn.material].name.clone(),
                    });
                }
            }
        }
        Ok(fabric)
    }
}
