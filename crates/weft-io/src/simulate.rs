//! From a [`BuiltScene`] to a ready [`Simulation`]: the solver's colliders,
//! handles, self-collision and integrator settings (DESIGN §5-§8). This is
//! what `weft run` simulates, so tests and library users that load a scene
//! file get exactly the CLI's simulation.

use crate::{BuiltScene, ColliderShape, ColliderSpec, PreconditionerChoice, SceneError};
use nalgebra::Vector3;
use std::sync::Arc;
use weft_solver::assembly::SelfContact;
use weft_solver::collide::{
    Capsule, CollideError, Collider, Keyframe, MeshAnimation, Plane, RigidMotion, SelfCollision,
    Shape, Sphere, TriangleMesh,
};
use weft_solver::{Handle, LinearSolver, Settings, Simulation};

/// Converts a scene collider into the solver's collider and its contact
/// margin δ (m).
///
/// Without rotations in its keyframes the shape stays in world coordinates
/// and the motion is the keyframes' translation. With a rotation in any
/// keyframe the shape is built about its pivot ([`ColliderShape::pivot`])
/// and the motion at a key is the translation `pivot + d` with the key's
/// rotation about it (`weft_solver::collide::RigidMotion`: translation
/// linear, rotation at constant angular velocity between keys), so the
/// collider turns about its pivot, and its points move with the velocity
/// `ḋ + ω × (x - pivot)` that friction sees.
///
/// # Errors
/// [`CollideError`] for a degenerate shape (zero plane normal, radius
/// ≤ 0), an unreadable or malformed OBJ file (or frame of an animated
/// mesh), or keyframes out of order.
pub fn collider(spec: &ColliderSpec) -> Result<(Collider, f64), CollideError> {
    let v = Vector3::from;
    let rotating = spec.keyframes.iter().any(|k| k.rotation.is_some());
    let pivot = if rotating {
        v(spec.shape.pivot())
    } else {
        Vector3::zeros()
    };
    let shape: Shape = match &spec.shape {
        ColliderShape::Plane { point, normal } => Plane::new(v(*point) - pivot, v(*normal))?.into(),
        ColliderShape::Sphere { center, radius } => {
            Sphere::new(v(*center) - pivot, *radius)?.into()
        }
        ColliderShape::Capsule { a, b, radius } => {
            Capsule::new(v(*a) - pivot, v(*b) - pivot, *radius)?.into()
        }
        ColliderShape::Mesh {
            path,
            translation,
            scale,
        } => TriangleMesh::from_obj(path, *scale, v(*translation) - pivot)?.into(),
        ColliderShape::AnimatedMesh {
            frames,
            fps,
            translation,
            scale,
        } => {
            let a =
                MeshAnimation::from_obj_sequence(frames, *fps, *scale, v(*translation) - pivot)?;
            return keyframed(
                spec,
                pivot,
                Collider::animated(Arc::new(a), spec.stiffness, spec.friction)?,
            );
        }
    };
    keyframed(
        spec,
        pivot,
        Collider::new(shape, spec.stiffness, spec.friction)?,
    )
}

/// `c` following `spec`'s keyframes about `pivot` (m), with `spec`'s margin.
fn keyframed(
    spec: &ColliderSpec,
    pivot: Vector3<f64>,
    mut c: Collider,
) -> Result<(Collider, f64), CollideError> {
    let v = Vector3::from;
    if !spec.keyframes.is_empty() {
        let keys: Vec<Keyframe> = spec
            .keyframes
            .iter()
            .map(|k| Keyframe {
                time: k.time,
                translation: pivot + v(k.translation),
                rotation: k.rotation.map(v),
            })
            .collect();
        c = c.with_motion(RigidMotion::new(&keys)?);
    }
    Ok((c, spec.margin))
}

impl BuiltScene {
    /// The simulation of this scene: fabric, gravity, colliders (file
    /// order), handles, self-collision (contact distance `d0` = the largest
    /// yarn diameter of the fabric plus the scene's margin; the broad phase
    /// keeps pairs within `2 d0` so approaching pairs are seen) and the
    /// time-step and Newton/PCG settings of the file. `one_iteration` is
    /// `weft run --one-iteration` (one Newton iteration per step).
    ///
    /// # Errors
    /// [`SceneError::Collider`] naming the file and the JSON path of the
    /// collider (`objects[i]`) or `self_collision` that the solver rejects.
    pub fn simulation(self, one_iteration: bool) -> Result<Simulation, SceneError> {
        let file = crate::scene::file_label(&self.source);
        let rejected = |path: String, error: CollideError| SceneError::Collider {
            file: file.clone(),
            path,
            error: Box::new(error),
        };
        let ts = &self.time_step;
        let it = &self.integrator;
        let settings = Settings {
            dt: ts.dt,
            adaptive: ts.adaptive,
            dt_min: ts.dt_min,
            dt_max: ts.dt_max,
            newton_max_iterations: it.newton_max_iterations,
            newton_tolerance: it.newton_tolerance,
            cg_tolerance: it.cg_tolerance,
            cg_max_iterations: it.cg_max_iterations,
            one_iteration,
            linear_solver: match it.preconditioner {
                PreconditionerChoice::Auto => LinearSolver::Auto,
                PreconditionerChoice::Cholesky => LinearSolver::Cholesky,
                PreconditionerChoice::Multigrid => LinearSolver::Multigrid,
                PreconditionerChoice::BlockJacobi => LinearSolver::BlockJacobi,
            },
            ..Settings::default()
        };
        let handles = self
            .handles
            .iter()
            .map(|h| Handle {
                nodes: h.nodes.clone(),
                keyframes: h.keyframes.clone(),
            })
            .collect();
        let colliders = self
            .colliders
            .iter()
            .map(|c| collider(c).map_err(|e| rejected(format!("objects[{}]", c.object), e)))
            .collect::<Result<Vec<_>, _>>()?;
        let self_contact = match &self.self_collision {
            Some(sc) => {
                let radius = self
                    .fabric
                    .materials
                    .iter()
                    .map(|m| m.radius)
                    .fold(0.0, f64::max);
                let d0 = 2.0 * radius + sc.margin;
                let detector =
                    SelfCollision::from_fabric(&self.fabric, 2.0 * d0, sc.exclusion_hops)
                        .map_err(|e| rejected("self_collision".into(), e))?;
                Some(SelfContact::new(
                    detector,
                    d0,
                    sc.stiffness,
                    weft_solver::collide::RepulsionLaw::Quadratic,
                ))
            }
            None => None,
        };
        let mut sim = Simulation::new(self.fabric, Vector3::from(self.gravity), settings, handles);
        sim.assembler.contact.colliders = colliders;
        sim.assembler.contact.self_collision = self_contact;
        Ok(sim)
    }
}
