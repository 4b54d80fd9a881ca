//! Collision physics (DESIGN §6): external colliders with signed distances,
//! penalty contact with smoothed Coulomb friction, and yarn self-collision
//! with a spatial-hash broad phase.
//!
//! - [`shapes`]: [`Plane`], [`Sphere`], [`Capsule`] with exact `φ` and `∇φ`;
//! - [`mesh`]: [`TriangleMesh`], closed meshes from OBJ, signed distance via
//!   the `parry3d-f64` BVH and pseudo-normal sign, and the per-step
//!   [`TangentPlane`]s of every surface sheet near a point;
//! - [`animation`]: [`MeshAnimation`], a closed mesh of fixed topology
//!   following a sequence of frames (an OBJ per frame), posed once per step
//!   with per-vertex surface velocities for friction;
//! - [`motion`]: [`RigidMotion`] from [`Keyframe`]s (translation linear,
//!   rotation slerp between keyframes) with the velocity of a collider point;
//! - [`collider`]: [`Collider`] = shape + motion + stiffness + friction,
//!   `distance(x, t)`, `velocity_at(x, t)`, `node_contact(...)`;
//! - [`mod@penalty`]: per-node penalty `V = ½ k (r + δ - φ)²` and friction
//!   `f = -μ F_n v_t / sqrt(|v_t|² + ε_v²)` with PSD derivative matrices;
//! - [`segments`]: closest points of two segments and their repulsion
//!   `V = ½ k (d0 - d)²` (12 coordinates);
//! - [`faces`]: closest point of a triangle to a vertex and their
//!   repulsion (triangle-mesh cloth's vertex–face pairs, 12 coordinates);
//! - [`broad`]: neighbour exclusion in the yarn graph and the data-parallel
//!   spatial-hash broad phase ([`SelfCollision`]).
//!
//! Conventions: SI units, `φ < 0` inside a collider, normals point out of
//! it; all gradients are of the energy (`∇V`, the force is `-∇V`); all
//! Hessians and damping matrices are symmetric positive semi-definite so
//! the implicit solver's system matrix stays positive definite.

pub mod animation;
pub mod broad;
pub mod collider;
pub mod error;
pub mod faces;
pub mod mesh;
pub mod motion;
pub mod penalty;
pub mod segments;
pub mod shapes;

pub use animation::MeshAnimation;
pub use broad::{
    DEFAULT_EXCLUSION_HOPS, Exclusion, FaceContact, NodeGraph, SegmentContact, SelfCollision,
    broad_phase, face_broad_phase,
};
pub use collider::{Collider, NodeContact, Shape};
pub use error::CollideError;
pub use faces::{
    FaceClosest, FaceRepulsionEval, FaceSeparation, closest_on_triangle, face_repulsion,
    face_repulsion_energy, face_separation, on_normal_side, segment_triangle_intersection,
};
pub use mesh::{SHEET_COS, TangentPlane, TriangleMesh};
pub use motion::{Keyframe, RigidMotion};
pub use penalty::{
    DEFAULT_FRICTION_SPEED, FrictionEval, PenaltyEval, friction, penalty, penalty_energy,
};
pub use segments::{
    ClosestPoints, RepulsionEval, RepulsionLaw, closest_points, repulsion, repulsion_energy,
    repulsion_energy_with, repulsion_with,
};
pub use shapes::{Capsule, Plane, Sdf, Sphere};
