//! The collider type the solver uses: a shape, an optional keyframed motion
//! and its contact parameters (DESIGN §6, §8 collider objects).

use super::animation::MeshAnimation;
use super::error::CollideError;
use super::mesh::{TangentPlane, TriangleMesh};
use super::motion::RigidMotion;
use super::penalty::{DEFAULT_FRICTION_SPEED, FrictionEval, PenaltyEval, friction, penalty};
use super::shapes::{Capsule, Plane, Sdf, Sphere};
use nalgebra::Vector3;
use std::sync::Arc;

/// A collider's geometry in its local frame.
#[derive(Clone, Debug)]
pub enum Shape {
    /// Half-space.
    Plane(Plane),
    /// Ball.
    Sphere(Sphere),
    /// Capsule.
    Capsule(Capsule),
    /// Closed triangle mesh (shared, it can be large).
    Mesh(Arc<TriangleMesh>),
}

impl Shape {
    /// Signed distance (m) and unit outward normal at the local point `x`.
    pub fn distance(&self, x: &Vector3<f64>) -> Sdf {
        match self {
            Shape::Plane(s) => s.distance(x),
            Shape::Sphere(s) => s.distance(x),
            Shape::Capsule(s) => s.distance(x),
            Shape::Mesh(s) => s.distance(x),
        }
    }
}

impl From<Plane> for Shape {
    fn from(s: Plane) -> Self {
        Shape::Plane(s)
    }
}
impl From<Sphere> for Shape {
    fn from(s: Sphere) -> Self {
        Shape::Sphere(s)
    }
}
impl From<Capsule> for Shape {
    fn from(s: Capsule) -> Self {
        Shape::Capsule(s)
    }
}
impl From<TriangleMesh> for Shape {
    fn from(s: TriangleMesh) -> Self {
        Shape::Mesh(Arc::new(s))
    }
}

/// A (possibly moving) external collider with penalty stiffness and Coulomb
/// friction. World position of a local point: `motion.transform(t) * x`
/// (identity without motion).
#[derive(Clone, Debug)]
pub struct Collider {
    /// Geometry in the local frame.
    pub shape: Shape,
    /// Keyframed rigid motion; `None` for a static collider.
    pub motion: Option<RigidMotion>,
    /// Penalty stiffness `k_col` (N/m), DESIGN §8 `stiffness`.
    pub stiffness: f64,
    /// Coulomb coefficient `μ` (dimensionless), DESIGN §8 `friction`.
    pub friction: f64,
    /// Friction regularisation speed `ε_v` (m/s), default
    /// [`DEFAULT_FRICTION_SPEED`].
    pub friction_speed: f64,
    /// For an animated body, its frames; [`Self::shape`] is then the pose at
    /// [`Self::pose_time`] ([`Self::advance_to`]).
    animation: Option<Arc<MeshAnimation>>,
    /// The time (s) [`Self::shape`] was posed at (animated bodies only).
    pose_time: f64,
}

/// Everything the assembly needs for one node touching one collider.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeContact {
    /// Signed distance at the node (m).
    pub phi: f64,
    /// Unit outward normal at the node.
    pub normal: Vector3<f64>,
    /// Penalty energy, gradient (add to `∇V`), Hessian (add to `∂²V/∂x²`);
    /// all zero for a node outside the offset that was inside it at the
    /// step's start (friction only; [`Collider::plane_contact_from`]).
    pub penalty: PenaltyEval,
    /// Friction force (add to `f`) and damping `D = -∂f/∂ẋ` (add `h D` to
    /// the system matrix).
    pub friction: FrictionEval,
}

impl Collider {
    /// A static collider with `stiffness` (N/m) and friction coefficient
    /// `friction`.
    ///
    /// # Errors
    /// [`CollideError::InvalidShape`] if `stiffness` or `friction` is
    /// negative or non-finite.
    pub fn new(
        shape: impl Into<Shape>,
        stiffness: f64,
        friction: f64,
    ) -> Result<Self, CollideError> {
        if !(stiffness >= 0.0 && stiffness.is_finite() && friction >= 0.0 && friction.is_finite()) {
            return Err(CollideError::InvalidShape {
                shape: "collider",
                reason: format!(
                    "expected finite stiffness >= 0 N/m and friction >= 0, got stiffness \
                     {stiffness} and friction {friction}"
                ),
            });
        }
        Ok(Collider {
            shape: shape.into(),
            motion: None,
            stiffness,
            friction,
            friction_speed: DEFAULT_FRICTION_SPEED,
            animation: None,
            pose_time: 0.0,
        })
    }

    /// An animated body ([`MeshAnimation`]) with `stiffness` (N/m) and
    /// friction coefficient `friction`, posed at time 0 (its rest pose). The
    /// solver poses it at the end of every time step
    /// ([`Self::advance_to`]); friction acts against the surface's velocity.
    ///
    /// # Errors
    /// As [`Self::new`].
    pub fn animated(
        animation: Arc<MeshAnimation>,
        stiffness: f64,
        friction: f64,
    ) -> Result<Self, CollideError> {
        let mut c = Self::new(animation.pose_at(0.0), stiffness, friction)?;
        c.animation = Some(animation);
        Ok(c)
    }

    /// The animation an animated body follows ([`Self::animated`]).
    pub fn animation(&self) -> Option<&Arc<MeshAnimation>> {
        self.animation.as_ref()
    }

    /// The time (s) an animated body is posed at (0 for other colliders).
    pub fn pose_time(&self) -> f64 {
        self.pose_time
    }

    /// Poses an animated body at time `t` (s): [`Self::shape`] moves to
    /// [`MeshAnimation::pose_at`]`(t)` in place (the BVH refitted, `O(n)` in
    /// the triangles; a copy first if the mesh is shared; nothing when it is
    /// already posed at `t`). Other colliders are unchanged: their motion
    /// is evaluated at each query's time.
    pub fn advance_to(&mut self, t: f64) {
        if let Some(a) = &self.animation
            && t != self.pose_time
        {
            match &mut self.shape {
                Shape::Mesh(m) => a.pose(t, Arc::make_mut(m)),
                other => *other = Shape::Mesh(Arc::new(a.pose_at(t))),
            }
            self.pose_time = t;
        }
    }

    /// The same collider following `motion`.
    pub fn with_motion(mut self, motion: RigidMotion) -> Self {
        self.motion = Some(motion);
        self
    }

    /// Signed distance `φ` (m, negative inside) and unit outward world
    /// normal `∇φ` at the world point `x` at time `t` (s) (an animated body:
    /// in its pose at [`Self::pose_time`]).
    pub fn distance(&self, x: &Vector3<f64>, t: f64) -> (f64, Vector3<f64>) {
        match &self.motion {
            None => self.shape.distance(x),
            Some(m) => {
                let iso = m.transform(t);
                let (phi, n) = self
                    .shape
                    .distance(&iso.inverse_transform_vector(&(x - iso.translation.vector)));
                (phi, iso.rotation * n)
            }
        }
    }

    /// Velocity (m/s) of the collider's material point at world position `x`
    /// at time `t` (zero for a static collider); for an animated body, plus
    /// the velocity of its surface point closest to `x` (its pose at
    /// [`Self::pose_time`]).
    pub fn velocity_at(&self, x: &Vector3<f64>, t: f64) -> Vector3<f64> {
        let rigid = self.rigid_velocity_at(x, t);
        let Shape::Mesh(mesh) = &self.shape else {
            return rigid;
        };
        if self.animation.is_none() {
            return rigid;
        }
        match &self.motion {
            None => rigid + mesh.velocity_near(x),
            Some(m) => {
                let iso = m.transform(t);
                let local = iso.inverse_transform_vector(&(x - iso.translation.vector));
                rigid + iso.rotation * mesh.velocity_near(&local)
            }
        }
    }

    /// Velocity (m/s) at world position `x` and time `t` of the collider's
    /// rigid motion alone (zero without one).
    fn rigid_velocity_at(&self, x: &Vector3<f64>, t: f64) -> Vector3<f64> {
        match &self.motion {
            None => Vector3::zeros(),
            Some(m) => m.velocity_at(x, t),
        }
    }

    /// Whether this collider's contacts use tangent planes taken once per
    /// time step ([`Self::tangent_planes`], [`Self::plane_contact`]) instead
    /// of `φ` at every Newton iterate: true for triangle meshes, whose `φ`
    /// has a gradient that jumps across concave creases (the jump makes a
    /// node squeezed in a crease, an armpit say, flip between two forces and
    /// stalls Newton's line search). The analytic shapes have smooth `φ`
    /// outside and keep the exact evaluation.
    pub fn uses_tangent_planes(&self) -> bool {
        matches!(self.shape, Shape::Mesh(_))
    }

    /// The collider's tangent planes near the world point `x` (m) at time
    /// `t` (s), in its local frame: every surface sheet within `reach` (m)
    /// of `x`, see [`TriangleMesh::tangent_planes`]; none for analytic
    /// shapes. Appended to `out`.
    pub fn tangent_planes(
        &self,
        x: &Vector3<f64>,
        t: f64,
        reach: f64,
        out: &mut Vec<TangentPlane>,
    ) {
        let Shape::Mesh(mesh) = &self.shape else {
            return;
        };
        let local = match &self.motion {
            None => *x,
            Some(m) => {
                let iso = m.transform(t);
                iso.inverse_transform_vector(&(x - iso.translation.vector))
            }
        };
        mesh.tangent_planes(&local, reach, out);
    }

    /// Contact of a node at `x` (m) with velocity `x_dot` (m/s) at time `t`
    /// against a tangent `plane` of this collider (local frame, moved with
    /// the collider): the penalty and friction of [`Self::node_contact`] with
    /// `φ` replaced by the plane's signed distance, so the energy is a
    /// smooth function of `x` within a step and its Hessian `k n nᵀ` is
    /// exact. `None` when the node is `offset` (m) or more outside the plane.
    /// The friction's normal force is the one at `x` itself
    /// ([`Self::plane_contact_from`] with `x_start = x`).
    pub fn plane_contact(
        &self,
        plane: &TangentPlane,
        x: &Vector3<f64>,
        x_dot: &Vector3<f64>,
        t: f64,
        offset: f64,
    ) -> Option<NodeContact> {
        self.plane_contact_from(plane, x, x, x_dot, t, offset)
    }

    /// [`Self::plane_contact`] within a time step whose start had the node
    /// at `x_start` (m): where the plane is at rest (surface velocity zero
    /// at the node) the friction's normal force is the plane's penalty force
    /// at `x_start`, `F_n = k max(0, offset - φ(x_start))`, and it
    /// acts whenever that is above zero, whether or not the node is inside
    /// the offset at `x` ([`mod@super::penalty`]: the lagged normal force). With
    /// the plane fixed over the step the friction is then a smooth function
    /// of the velocity alone and its damping matrix is its exact Jacobian.
    /// `None` when the node is outside the offset both at `x` and at
    /// `x_start`; the penalty is zero when only `x_start` is inside.
    pub fn plane_contact_from(
        &self,
        plane: &TangentPlane,
        x_start: &Vector3<f64>,
        x: &Vector3<f64>,
        x_dot: &Vector3<f64>,
        t: f64,
        offset: f64,
    ) -> Option<NodeContact> {
        let world = match &self.motion {
            None => *plane,
            Some(m) => {
                let iso = m.transform(t);
                TangentPlane {
                    point: (iso * nalgebra::Point3::from(plane.point)).coords,
                    normal: iso.rotation * plane.normal,
                    velocity: iso.rotation * plane.velocity,
                }
            }
        };
        let phi = world.distance(x);
        let v_c = self.rigid_velocity_at(x, t) + world.velocity;
        let xs = lag_start(x_start, x, &v_c);
        let phi_start = if xs == x { phi } else { world.distance(xs) };
        let v_rel = x_dot - v_c;
        self.contact_with_lag(phi, world.normal, phi_start, world.normal, &v_rel, offset)
    }

    /// Contact of a node at `x` (m) with velocity `x_dot` (m/s) at time `t`,
    /// for a yarn of radius `r` plus margin `δ`, `offset = r + δ` (m): `None`
    /// when `φ(x) ≥ offset`. Penalty per [`penalty`], friction per
    /// [`friction`] with this collider's `μ`, `ε_v` and velocity, and the
    /// normal force at `x` itself ([`Self::node_contact_from`] with
    /// `x_start = x`).
    pub fn node_contact(
        &self,
        x: &Vector3<f64>,
        x_dot: &Vector3<f64>,
        t: f64,
        offset: f64,
    ) -> Option<NodeContact> {
        self.node_contact_from(x, x, x_dot, t, offset)
    }

    /// [`Self::node_contact`] within a time step whose start had the node at
    /// `x_start` (m): where the collider is at rest at the node, friction
    /// with the normal force and normal at `x_start` against the collider at
    /// time `t`, `F_n = k max(0, offset - φ(x_start, t))`, acting whenever
    /// that is above zero ([`mod@super::penalty`]: the lagged normal force; as
    /// [`Self::plane_contact_from`]).
    pub fn node_contact_from(
        &self,
        x_start: &Vector3<f64>,
        x: &Vector3<f64>,
        x_dot: &Vector3<f64>,
        t: f64,
        offset: f64,
    ) -> Option<NodeContact> {
        let (phi, normal) = self.distance(x, t);
        let v_c = self.velocity_at(x, t);
        let xs = lag_start(x_start, x, &v_c);
        let (phi_start, normal_start) = if xs == x {
            (phi, normal)
        } else {
            self.distance(xs, t)
        };
        let v_rel = x_dot - v_c;
        self.contact_with_lag(phi, normal, phi_start, normal_start, &v_rel, offset)
    }

    /// The penalty at signed distance `phi` (m) with unit `normal`, and the
    /// friction against `v_rel` (m/s) with the normal force
    /// `k max(0, offset - phi_start)` (N) and unit normal `normal_start` of
    /// the step's start; `None` when neither is in contact. The penalty is
    /// zero where only the start is in contact.
    fn contact_with_lag(
        &self,
        phi: f64,
        normal: Vector3<f64>,
        phi_start: f64,
        normal_start: Vector3<f64>,
        v_rel: &Vector3<f64>,
        offset: f64,
    ) -> Option<NodeContact> {
        let pen = penalty(phi, &normal, offset, self.stiffness);
        let started_in = offset - phi_start > 0.0;
        if pen.is_none() && !started_in {
            return None;
        }
        let normal_force = if started_in {
            self.stiffness * (offset - phi_start)
        } else {
            0.0
        };
        let penalty = pen.unwrap_or(PenaltyEval {
            energy: 0.0,
            gradient: Vector3::zeros(),
            hessian: nalgebra::Matrix3::zeros(),
            normal_force: 0.0,
            gap: 0.0,
        });
        Some(NodeContact {
            phi,
            normal,
            penalty,
            friction: friction(
                normal_force,
                &normal_start,
                v_rel,
                self.friction,
                self.friction_speed,
            ),
        })
    }
}

/// Where friction takes its normal force within a step ([`mod@super::penalty`]:
/// the lagged normal force): the step's start `x_start` where the
/// collider's surface is at rest at the node (`v_c` zero), else the iterate
/// `x` itself.
fn lag_start<'a>(
    x_start: &'a Vector3<f64>,
    x: &'a Vector3<f64>,
    v_c: &Vector3<f64>,
) -> &'a Vector3<f64> {
    if *v_c == Vector3::zeros() { x_start } else { x }
}
