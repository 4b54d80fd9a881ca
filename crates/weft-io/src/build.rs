//! Turning a validated [`Scene`] into what the solver consumes: the
//! [`weft_core::Fabric`], plain-data collider and handle descriptions, and
//! typed settings. No physics here.

use crate::de::ColliderKeyframe;
use crate::error::SceneError;
use crate::scene::{Integrator, MaterialSpec, Output, Scene, SceneObject, WeaveSpec};
use std::collections::HashMap;
use std::path::PathBuf;
use weft_core::{
    Fabric, FabricBuilder, Material, ModelError, NodeSelector, Weave, WovenPatchSpec, YarnSpec,
};

/// Resolved `time_step` (all defaults applied), see [`crate::TimeStep`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeStepSettings {
    /// Initial step (s).
    pub dt: f64,
    /// Adaptive control on.
    pub adaptive: bool,
    /// Smallest step (s).
    pub dt_min: f64,
    /// Largest step (s).
    pub dt_max: f64,
}

/// The shape of a collider (DESIGN §6), in its initial placement. Plain
/// data: the solver implements the distance functions.
#[derive(Clone, Debug, PartialEq)]
pub enum ColliderShape {
    /// Half-space: free on the side `normal` points to.
    Plane {
        /// A point of the plane (m).
        point: [f64; 3],
        /// Unit normal (normalised from the file's direction).
        normal: [f64; 3],
    },
    /// Sphere.
    Sphere {
        /// Centre (m).
        center: [f64; 3],
        /// Radius (m).
        radius: f64,
    },
    /// Capsule: points within `radius` of segment `a`–`b`.
    Capsule {
        /// First axis end (m).
        a: [f64; 3],
        /// Second axis end (m).
        b: [f64; 3],
        /// Radius (m).
        radius: f64,
    },
    /// Triangle mesh from an OBJ file; vertex `p` goes to
    /// `scale · p + translation`.
    Mesh {
        /// The OBJ file, resolved against the scene file's directory; it
        /// existed when the scene was built.
        path: PathBuf,
        /// Translation (m).
        translation: [f64; 3],
        /// Uniform scale (file units to m).
        scale: f64,
    },
    /// Animated triangle mesh from a folder of OBJ frames; vertex `p` goes
    /// to `scale · p + translation`.
    AnimatedMesh {
        /// The folder, resolved against the scene file's directory; it
        /// existed when the scene was built.
        frames: PathBuf,
        /// Frames per second.
        fps: f64,
        /// Translation (m).
        translation: [f64; 3],
        /// Uniform scale (file units to m).
        scale: f64,
    },
}

impl ColliderShape {
    /// The point a keyframed rotation turns the collider about (m): a
    /// plane's `point`, a sphere's centre, a capsule's midpoint, a mesh's
    /// `translation` (where the OBJ file's origin is placed).
    pub fn pivot(&self) -> [f64; 3] {
        match self {
            ColliderShape::Plane { point, .. } => *point,
            ColliderShape::Sphere { center, .. } => *center,
            ColliderShape::Capsule { a, b, .. } => std::array::from_fn(|i| 0.5 * (a[i] + b[i])),
            ColliderShape::Mesh { translation, .. }
            | ColliderShape::AnimatedMesh { translation, .. } => *translation,
        }
    }
}

/// A collider: shape plus penalty-contact parameters
/// `V = ½ k_col (r + δ - φ(x))²` with Coulomb friction (DESIGN §6).
#[derive(Clone, Debug, PartialEq)]
pub struct ColliderSpec {
    /// Scene object number (`objects[object]`).
    pub object: usize,
    /// Geometry.
    pub shape: ColliderShape,
    /// Penalty stiffness `k_col` (N/m).
    pub stiffness: f64,
    /// Coulomb friction coefficient μ.
    pub friction: f64,
    /// Margin δ (m) added to the yarn radius.
    pub margin: f64,
    /// Rigid-motion keyframes (s, m, rad), strictly increasing in time;
    /// empty for a static collider.
    pub keyframes: Vec<ColliderKeyframe>,
}

impl ColliderSpec {
    /// Translation of the collider at time `t` (m), see [`interpolate_keyframes`].
    pub fn translation_at(&self, t: f64) -> [f64; 3] {
        let keys: Vec<(f64, [f64; 3])> = self
            .keyframes
            .iter()
            .map(|k| (k.time, k.translation))
            .collect();
        interpolate_keyframes(&keys, t)
    }
}

/// A handle: global node indices whose positions are prescribed as
/// `x₀ + d(t)`. [`Scene::build`] marks their position DOFs not free in the
/// fabric.
#[derive(Clone, Debug, PartialEq)]
pub struct HandleSpec {
    /// Scene object number of the handle itself.
    pub object: usize,
    /// Scene object number of the fabric object it moves.
    pub target: usize,
    /// Global node indices (into the fabric), without repeats, in selector
    /// order.
    pub nodes: Vec<usize>,
    /// Displacement keyframes `(t, [dx, dy, dz])` (s, m), ≥ 1, strictly
    /// increasing in `t`.
    pub keyframes: Vec<(f64, [f64; 3])>,
}

impl HandleSpec {
    /// Displacement of the handle's nodes from their initial positions at
    /// time `t` (m), see [`interpolate_keyframes`].
    pub fn displacement_at(&self, t: f64) -> [f64; 3] {
        interpolate_keyframes(&self.keyframes, t)
    }
}

/// Piecewise-linear interpolation of `(t, d)` keyframes (times strictly
/// increasing): `d` of the first key before it, of the last key after it,
/// zero for no keys.
pub fn interpolate_keyframes(keys: &[(f64, [f64; 3])], t: f64) -> [f64; 3] {
    let (Some(first), Some(last)) = (keys.first(), keys.last()) else {
        return [0.0; 3];
    };
    if t <= first.0 {
        return first.1;
    }
    if t >= last.0 {
        return last.1;
    }
    let j = keys.partition_point(|k| k.0 <= t); // keys[j-1].0 <= t < keys[j].0
    let ((t0, d0), (t1, d1)) = (keys[j - 1], keys[j]);
    let s = (t - t0) / (t1 - t0);
    std::array::from_fn(|c| d0[c] + s * (d1[c] - d0[c]))
}

/// A scene ready to simulate.
#[derive(Clone, Debug)]
pub struct BuiltScene {
    /// The fabric of all `yarn` and `woven_patch` objects (handle nodes'
    /// positions not free).
    pub fabric: Fabric,
    /// Self-collision settings, if the scene enables it.
    pub self_collision: Option<crate::scene::SelfCollisionSpec>,
    /// Colliders in file order.
    pub colliders: Vec<ColliderSpec>,
    /// Handles in file order.
    pub handles: Vec<HandleSpec>,
    /// Simulated time (s).
    pub duration: f64,
    /// Gravitational acceleration (m/s²).
    pub gravity: [f64; 3],
    /// Time-step settings with defaults applied.
    pub time_step: TimeStepSettings,
    /// Newton/PCG settings.
    pub integrator: Integrator,
    /// Output settings.
    pub output: Output,
    /// Per scene object, its fabric object number (index into
    /// `fabric.objects`), `None` for colliders and handles.
    pub fabric_object: Vec<Option<usize>>,
    /// Per fabric object, its scene object number.
    pub scene_object: Vec<usize>,
    /// The scene file.
    pub source: PathBuf,
    /// The `triangle_cloth` of `"model": "sbd"`, if the scene has one:
    /// `fabric` is then its implicit twin (same vertices, triangles and
    /// mass), which stores the state and measures the energies of
    /// `energy.csv`, while [`SbdCloth`] steps it.
    pub sbd: Option<SbdCloth>,
}

/// A `triangle_cloth` of `"model": "sbd"`: what `weft_shell::Sbd::new`
/// takes. Its colliders are the scene's.
#[derive(Clone, Debug)]
pub struct SbdCloth {
    /// The rectangle's mesh.
    pub mesh: weft_shell::ClothMesh,
    /// Pinned vertices.
    pub pinned: Vec<usize>,
    /// The options, with the scene's gravity and the material's areal
    /// density.
    pub options: weft_shell::SbdOptions,
}

impl BuiltScene {
    /// Global node range of scene object `object` (`None` if it makes no
    /// nodes or does not exist).
    pub fn node_range(&self, object: usize) -> Option<std::ops::Range<usize>> {
        let fi = (*self.fabric_object.get(object)?)?;
        let info = &self.fabric.objects[fi];
        Some(info.first_node..info.first_node + info.node_count)
    }
}

/// Replaces fabric object numbers in a weft-core error by scene numbers and
/// returns the JSON path of the object (and field where known).
fn remap(err: ModelError, scene_of: &[usize]) -> (ModelError, String) {
    let map = |o: usize| scene_of.get(o).copied().unwrap_or(o);
    let relabel = |label: String| -> (String, Option<usize>) {
        // weft-core labels yarns "object N, warp yarn K".
        let parsed = label
            .strip_prefix("object ")
            .and_then(|r| r.split_once(','))
            .and_then(|(n, rest)| n.parse::<usize>().ok().map(|n| (n, rest.to_owned())));
        match parsed {
            Some((n, rest)) => (format!("object {},{rest}", map(n)), Some(map(n))),
            None => (label, None),
        }
    };
    let obj_path = |o: Option<usize>, field: Option<&str>| match (o, field) {
        (Some(o), Some(f)) => format!("objects[{o}].{f}"),
        (Some(o), None) => format!("objects[{o}]"),
        (None, _) => "objects".into(),
    };
    use ModelError as E;
    match err {
        E::InvalidMaterial {
            ref material,
            field,
            ..
        } => {
            let p = format!("materials.{material}.{field}");
            (err, p)
        }
        E::UnknownMaterial {
            object,
            material,
            known,
        } => (
            E::UnknownMaterial {
                object: map(object),
                material,
                known,
            },
            obj_path(Some(map(object)), Some("material")),
        ),
        E::TooFewNodes { yarn, count } => {
            let (yarn, o) = relabel(yarn);
            (E::TooFewNodes { yarn, count }, obj_path(o, Some("nodes")))
        }
        E::NonFinite {
            yarn,
            node,
            what,
            value,
        } => {
            let (yarn, o) = relabel(yarn);
            (
                E::NonFinite {
                    yarn,
                    node,
                    what,
                    value,
                },
                obj_path(o, None),
            )
        }
        E::NonIncreasingArcLength {
            yarn,
            node,
            value,
            prev,
            prev_value,
        } => {
            let (yarn, o) = relabel(yarn);
            (
                E::NonIncreasingArcLength {
                    yarn,
                    node,
                    value,
                    prev,
                    prev_value,
                },
                obj_path(o, None),
            )
        }
        E::CoincidentNodes { yarn, prev, node } => {
            let (yarn, o) = relabel(yarn);
            (
                E::CoincidentNodes { yarn, prev, node },
                obj_path(o, Some(&format!("nodes[{node}]"))),
            )
        }
        E::ZeroMass {
            yarn,
            node,
            material,
        } => {
            let (yarn, o) = relabel(yarn);
            (
                E::ZeroMass {
                    yarn,
                    node,
                    material,
                },
                obj_path(o, None),
            )
        }
        E::NodeOutOfRange {
            object,
            what,
            index,
            count,
        } => (
            E::NodeOutOfRange {
                object: map(object),
                what,
                index,
                count,
            },
            obj_path(Some(map(object)), Some(what)),
        ),
        E::BadSelector {
            object,
            selector,
            reason,
        } => (
            E::BadSelector {
                object: map(object),
                selector,
                reason,
            },
            obj_path(Some(map(object)), None),
        ),
        E::InvalidPatch {
            object,
            field,
            reason,
        } => (
            E::InvalidPatch {
                object: map(object),
                field,
                reason,
            },
            obj_path(Some(map(object)), Some(field)),
        ),
        E::LengthMismatch {
            object,
            what,
            expected,
            got,
        } => (
            E::LengthMismatch {
                object: map(object),
                what,
                expected,
                got,
            },
            obj_path(Some(map(object)), Some(what)),
        ),
    }
}

/// The fabric of a `triangle_cloth` object: the rectangle
/// ([`weft_shell::ClothMesh::rectangle`], placed as a `woven_patch` is:
/// first axis the warp direction in the cloth's plane, second axis
/// `normal × warp`) as implicit cloth ([`weft_shell::shell_fabric`]),
/// with its grid recorded for the corner and edge selectors, pinned
/// vertices fixed and the initial velocity set.
///
/// # Errors
/// `(field, message)`: a `normal` or `warp_direction` that spans no plane
/// (`.warp_direction`), a selector that picks no vertex (`.pinned[j]`), or
/// a mesh the cloth refuses (`""`).
fn triangle_cloth(
    c: &crate::scene::TriangleClothObject,
) -> Result<(Fabric, weft_shell::ClothMesh), (String, String)> {
    use nalgebra::Vector3;
    let normal = Vector3::from(c.normal);
    let warp = Vector3::from(c.warp_direction);
    let in_plane = warp - normal * (normal.dot(&warp) / normal.norm_squared());
    if !(normal.norm() > 0.0 && in_plane.norm() > 1e-9 * warp.norm()) {
        return Err((
            ".warp_direction".into(),
            format!(
                "a direction not parallel to the normal {:?}, got {:?}",
                c.normal, c.warp_direction
            ),
        ));
    }
    let d1 = in_plane.normalize();
    let d2 = normal.normalize().cross(&d1);
    let origin = Vector3::from(c.center) - d1 * (0.5 * c.size[0]) - d2 * (0.5 * c.size[1]);
    let mesh = weft_shell::ClothMesh::rectangle(c.size, c.vertices, origin, d1, d2)
        .map_err(|e| (String::new(), e.to_string()))?;
    let mut fabric = weft_shell::shell_fabric(&mesh, &c.material, &[])
        .map_err(|e| (String::new(), e.to_string()))?;
    let triangles = mesh.triangles().len();
    fabric.objects[0].kind = weft_core::ObjectKind::TriangleMesh {
        triangles,
        grid: Some([c.vertices[1], c.vertices[0]]),
    };
    for (j, sel) in c.pinned.iter().enumerate() {
        let nodes = fabric
            .select(0, &sel.0)
            .map_err(|e| (format!(".pinned[{j}]"), e.to_string()))?;
        for n in nodes {
            fabric.free[n] = [false; weft_core::DOFS_PER_NODE];
        }
    }
    for v in &mut fabric.initial.x_dot {
        *v = c.initial_velocity.into();
    }
    Ok((fabric, mesh))
}

fn index_of(sel: NodeSelector) -> usize {
    match sel {
        NodeSelector::Index(i) => i,
        // Scene::validate rejects corners and edges on yarns.
        _ => unreachable!("validated: only node indices on a yarn"),
    }
}

impl Scene {
    /// The weft-core materials (`materials` and `fabrics`), in name order.
    pub fn core_materials(&self) -> Vec<Material> {
        let mut all: Vec<Material> = self
            .materials
            .iter()
            .map(|(name, m): (&String, &MaterialSpec)| m.to_material(name))
            .chain(self.fabrics.iter().map(|(name, f)| f.to_material(name)))
            .collect();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        all
    }

    /// Builds the fabric, colliders, handles and settings.
    ///
    /// Yarn objects become weft-core `YarnSpec`s and woven patches
    /// `WovenPatchSpec`s, added in file order (so fabric objects keep the
    /// file's relative order and nodes are numbered as DESIGN §8 says).
    /// Patch initial velocities are applied after building (uniform
    /// `initial_velocity`, then `initial_velocities` per selector in file
    /// order), and so are patch `point_masses` (added up). Handle nodes'
    /// positions are made Dirichlet.
    ///
    /// # Errors
    /// [`SceneError::Invalid`] for anything [`Scene::validate`] rejects, a
    /// mesh file that does not exist (`objects[i].path`) or a node claimed
    /// by two handles (`objects[i].nodes[j]`); [`SceneError::Model`] for a
    /// weft-core rejection (coincident consecutive nodes, a warp direction
    /// parallel to the normal, a free node without mass, ...), with the
    /// object's path and scene object numbers.
    pub fn build(&self) -> Result<BuiltScene, SceneError> {
        self.validate()?;
        let file = self.file_name();
        let mut fabric_object = vec![None; self.objects.len()];
        let mut scene_object = Vec::new();
        let model = |e: ModelError, scene_of: &[usize]| {
            let (error, path) = remap(e, scene_of);
            SceneError::Model {
                file: file.clone(),
                path,
                error,
            }
        };
        let mut builder = FabricBuilder::new(self.core_materials()).map_err(|e| model(e, &[]))?;
        let mut colliders = Vec::new();
        for (i, obj) in self.objects.iter().enumerate() {
            let fi = scene_object.len();
            let added = match obj {
                SceneObject::Yarn(y) => {
                    let spec = YarnSpec {
                        material: y.material.clone(),
                        nodes: y.nodes.clone(),
                        rest_lengths: y.rest_lengths.clone(),
                        pinned: y.pinned.iter().map(|s| index_of(s.0)).collect(),
                        point_masses: y
                            .point_masses
                            .0
                            .iter()
                            .map(|(s, m)| (index_of(s.0), *m))
                            .collect(),
                        initial_velocities: y
                            .initial_velocities
                            .0
                            .iter()
                            .map(|(s, v)| (index_of(s.0), *v))
                            .collect(),
                        sliding: y.sliding,
                    };
                    Some(builder.add_yarn(&spec))
                }
                SceneObject::WovenPatch(w) => {
                    let spec = WovenPatchSpec {
                        material: w.material.clone(),
                        size: w.size,
                        yarn_counts: w.yarn_counts,
                        center: w.center,
                        normal: w.normal,
                        warp_direction: w.warp_direction,
                        weave: match w.weave {
                            WeaveSpec::Plain => Weave::Plain,
                        },
                        sliding: w.sliding,
                        pinned: w.pinned.iter().map(|s| s.0).collect(),
                    };
                    Some(builder.add_woven_patch(&spec))
                }
                SceneObject::TriangleCloth(_) => {
                    // Built below, in place of the builder's (empty) fabric.
                    scene_object.push(i);
                    fabric_object[i] = Some(fi);
                    None
                }
                SceneObject::Sphere(s) => {
                    colliders.push(ColliderSpec {
                        object: i,
                        shape: ColliderShape::Sphere {
                            center: s.center,
                            radius: s.radius,
                        },
                        stiffness: s.stiffness,
                        friction: s.friction,
                        margin: s.margin,
                        keyframes: s.keyframes.clone(),
                    });
                    None
                }
                SceneObject::Plane(s) => {
                    let n = s.normal;
                    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
                    colliders.push(ColliderSpec {
                        object: i,
                        shape: ColliderShape::Plane {
                            point: s.point,
                            normal: n.map(|c| c / len),
                        },
                        stiffness: s.stiffness,
                        friction: s.friction,
                        margin: s.margin,
                        keyframes: s.keyframes.clone(),
                    });
                    None
                }
                SceneObject::Capsule(s) => {
                    colliders.push(ColliderSpec {
                        object: i,
                        shape: ColliderShape::Capsule {
                            a: s.a,
                            b: s.b,
                            radius: s.radius,
                        },
                        stiffness: s.stiffness,
                        friction: s.friction,
                        margin: s.margin,
                        keyframes: s.keyframes.clone(),
                    });
                    None
                }
                SceneObject::Mesh(s) => {
                    let resolve = |p: &PathBuf| {
                        if p.is_absolute() {
                            p.clone()
                        } else {
                            self.base_dir().join(p)
                        }
                    };
                    let shape = match (&s.frames, s.fps) {
                        (Some(frames), Some(fps)) => {
                            let dir = resolve(frames);
                            if !dir.is_dir() {
                                return Err(self.invalid(
                                    format!("objects[{i}].frames"),
                                    format!(
                                        "frame folder '{}' not found (looked for {}); expected a folder of OBJ files relative to the scene file's directory",
                                        frames.display(),
                                        dir.display()
                                    ),
                                ));
                            }
                            ColliderShape::AnimatedMesh {
                                frames: dir,
                                fps,
                                translation: s.translation,
                                scale: s.scale,
                            }
                        }
                        _ => {
                            let path = resolve(&s.path);
                            if !path.is_file() {
                                return Err(self.invalid(
                                    format!("objects[{i}].path"),
                                    format!(
                                        "mesh file '{}' not found (looked for {}); expected an OBJ file relative to the scene file's directory",
                                        s.path.display(),
                                        path.display()
                                    ),
                                ));
                            }
                            ColliderShape::Mesh {
                                path,
                                translation: s.translation,
                                scale: s.scale,
                            }
                        }
                    };
                    colliders.push(ColliderSpec {
                        object: i,
                        shape,
                        stiffness: s.stiffness,
                        friction: s.friction,
                        margin: s.margin,
                        keyframes: s.keyframes.clone(),
                    });
                    None
                }
                SceneObject::Handle(_) => None,
            };
            if let Some(result) = added {
                scene_object.push(i);
                let got = result.map_err(|e| model(e, &scene_object))?;
                debug_assert_eq!(got, fi);
                fabric_object[i] = Some(fi);
            }
        }
        let mut sbd = None;
        let mut fabric = match self.objects.iter().enumerate().find_map(|(i, o)| match o {
            SceneObject::TriangleCloth(c) => Some((i, c)),
            _ => None,
        }) {
            // Validated: the scene's only cloth.
            Some((i, cloth)) => {
                let (fabric, mesh) = triangle_cloth(cloth).map_err(|(field, message)| {
                    self.invalid(format!("objects[{i}]{field}"), message)
                })?;
                if cloth.model == crate::scene::ClothModel::Sbd {
                    let mut options = cloth.sbd.clone().unwrap_or_default();
                    options.gravity = self.gravity;
                    options.areal_density = cloth.material.areal_density;
                    sbd = Some(SbdCloth {
                        mesh,
                        pinned: (0..fabric.node_count())
                            .filter(|&n| !fabric.free[n][0])
                            .collect(),
                        options,
                    });
                }
                fabric
            }
            None => builder.build().map_err(|e| model(e, &scene_object))?,
        };

        for (i, obj) in self.objects.iter().enumerate() {
            if let SceneObject::WovenPatch(w) = obj {
                let info = fabric.objects[fabric_object[i].expect("fabric object")];
                for n in info.first_node..info.first_node + info.node_count {
                    fabric.initial.x_dot[n] = w.initial_velocity.into();
                }
                for (s, v) in &w.initial_velocities.0 {
                    let nodes = fabric
                        .select(fabric_object[i].expect("fabric object"), &s.0)
                        .map_err(|e| model(e, &scene_object))?;
                    for n in nodes {
                        fabric.initial.x_dot[n] = (*v).into();
                    }
                }
                for (s, m) in &w.point_masses.0 {
                    let nodes = fabric
                        .select(fabric_object[i].expect("fabric object"), &s.0)
                        .map_err(|e| model(e, &scene_object))?;
                    for n in nodes {
                        fabric.point_mass[n] += *m;
                    }
                }
            }
        }

        let mut handles = Vec::new();
        let mut owner: HashMap<usize, usize> = HashMap::new();
        for (i, obj) in self.objects.iter().enumerate() {
            let SceneObject::Handle(h) = obj else {
                continue;
            };
            let fi = fabric_object[h.object].expect("validated: handle targets a fabric object");
            let mut nodes = Vec::new();
            for (j, s) in h.nodes.iter().enumerate() {
                let selected = fabric.select(fi, &s.0).map_err(|e| {
                    let (error, _) = remap(e, &scene_object);
                    SceneError::Model {
                        file: file.clone(),
                        path: format!("objects[{i}].nodes[{j}]"),
                        error,
                    }
                })?;
                for n in selected {
                    match owner.get(&n) {
                        Some(&other) if other != i => {
                            let first = fabric.objects[fi].first_node;
                            return Err(self.invalid(
                                format!("objects[{i}].nodes[{j}]"),
                                format!(
                                    "'{s}' selects node {} of object {}, already moved by the handle objects[{other}]; a node may belong to one handle only",
                                    n - first,
                                    h.object
                                ),
                            ));
                        }
                        Some(_) => {}
                        None => {
                            owner.insert(n, i);
                            nodes.push(n);
                        }
                    }
                }
            }
            for &n in &nodes {
                fabric.free[n][0] = false;
                fabric.free[n][1] = false;
                fabric.free[n][2] = false;
            }
            handles.push(HandleSpec {
                object: i,
                target: h.object,
                nodes,
                keyframes: h.keyframes.clone(),
            });
        }

        let ts = &self.time_step;
        Ok(BuiltScene {
            fabric,
            self_collision: self.self_collision.clone(),
            colliders,
            handles,
            duration: self.duration,
            gravity: self.gravity,
            time_step: TimeStepSettings {
                dt: ts.dt,
                adaptive: ts.adaptive,
                dt_min: ts.dt_min(),
                dt_max: ts.dt_max(),
            },
            integrator: self.integrator.clone(),
            output: self.output.clone(),
            fabric_object,
            scene_object,
            source: self.source.clone(),
            sbd,
        })
    }
}
