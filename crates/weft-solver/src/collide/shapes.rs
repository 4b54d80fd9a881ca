//! Analytic collider shapes with exact signed distances (DESIGN §6).
//!
//! Each shape gives, for a point `x` in its own (local) frame, the signed
//! distance `φ(x)` (m; negative inside) and its gradient `∇φ`, the unit
//! outward normal. All three are convex, so `φ` is `C¹` everywhere except on
//! the shape's medial axis inside it (the centre of a sphere, the axis of a
//! capsule), where a fixed normal is returned.

use super::error::CollideError;
use nalgebra::{Unit, Vector3};

/// A signed-distance sample: `(φ, n)` with `φ` in metres (negative inside)
/// and `n = ∇φ` the unit outward normal.
pub type Sdf = (f64, Vector3<f64>);

fn finite3(v: &Vector3<f64>) -> bool {
    v.iter().all(|c| c.is_finite())
}

/// A half-space bounded by a plane through `point` with outward unit
/// `normal`: `φ(x) = n · (x - p)`, `∇φ = n`. Everything with `φ < 0` is
/// inside (solid ground).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plane {
    /// A point on the plane (m).
    pub point: Vector3<f64>,
    /// Unit outward normal.
    pub normal: Unit<Vector3<f64>>,
}

impl Plane {
    /// Plane through `point` with outward normal `normal` (any length > 0;
    /// normalised here).
    ///
    /// # Errors
    /// [`CollideError::InvalidShape`] if the normal is zero or anything is
    /// non-finite.
    pub fn new(point: Vector3<f64>, normal: Vector3<f64>) -> Result<Self, CollideError> {
        if !finite3(&point) || !finite3(&normal) || normal.norm() == 0.0 {
            return Err(CollideError::InvalidShape {
                shape: "plane",
                reason: format!(
                    "expected a finite point and a finite non-zero normal, got point {:?} and \
                     normal {:?}",
                    point.as_slice(),
                    normal.as_slice()
                ),
            });
        }
        Ok(Plane {
            point,
            normal: Unit::new_normalize(normal),
        })
    }

    /// Signed distance and outward normal at `x` (local frame).
    pub fn distance(&self, x: &Vector3<f64>) -> Sdf {
        (self.normal.dot(&(x - self.point)), self.normal.into_inner())
    }
}

/// A solid ball: `φ(x) = |x - c| - r`, `∇φ = (x - c)/|x - c|` (at the centre
/// itself the normal is `+y`, an arbitrary choice).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere {
    /// Centre (m).
    pub center: Vector3<f64>,
    /// Radius (m), > 0.
    pub radius: f64,
}

impl Sphere {
    /// Sphere with `center` and `radius` (m).
    ///
    /// # Errors
    /// [`CollideError::InvalidShape`] for a non-positive or non-finite radius
    /// or a non-finite centre.
    pub fn new(center: Vector3<f64>, radius: f64) -> Result<Self, CollideError> {
        if !(finite3(&center) && radius > 0.0 && radius.is_finite()) {
            return Err(CollideError::InvalidShape {
                shape: "sphere",
                reason: format!(
                    "expected a finite centre and a finite radius > 0 m, got centre {:?} and \
                     radius {radius}",
                    center.as_slice()
                ),
            });
        }
        Ok(Sphere { center, radius })
    }

    /// Signed distance and outward normal at `x` (local frame).
    pub fn distance(&self, x: &Vector3<f64>) -> Sdf {
        point_distance(x, &self.center, self.radius)
    }
}

/// `|x - c| - r` with the unit direction from `c` to `x` (`+y` at `c`).
fn point_distance(x: &Vector3<f64>, c: &Vector3<f64>, r: f64) -> Sdf {
    let d = x - c;
    let len = d.norm();
    if len > 0.0 {
        (len - r, d / len)
    } else {
        (-r, Vector3::y())
    }
}

/// A capsule: all points within `radius` of the segment `a b`.
/// `φ(x) = |x - c(x)| - r` with `c(x)` the closest point of the segment,
/// `∇φ = (x - c)/|x - c|` (on the axis itself: a fixed unit vector
/// perpendicular to the axis).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capsule {
    /// First end of the axis (m).
    pub a: Vector3<f64>,
    /// Second end of the axis (m); may equal `a` (then a sphere).
    pub b: Vector3<f64>,
    /// Radius (m), > 0.
    pub radius: f64,
}

impl Capsule {
    /// Capsule around the segment `a b` with `radius` (m).
    ///
    /// # Errors
    /// [`CollideError::InvalidShape`] for a non-positive or non-finite radius
    /// or non-finite ends.
    pub fn new(a: Vector3<f64>, b: Vector3<f64>, radius: f64) -> Result<Self, CollideError> {
        if !(finite3(&a) && finite3(&b) && radius > 0.0 && radius.is_finite()) {
            return Err(CollideError::InvalidShape {
                shape: "capsule",
                reason: format!(
                    "expected finite ends and a finite radius > 0 m, got a = {:?}, b = {:?}, \
                     radius {radius}",
                    a.as_slice(),
                    b.as_slice()
                ),
            });
        }
        Ok(Capsule { a, b, radius })
    }

    /// Signed distance and outward normal at `x` (local frame).
    pub fn distance(&self, x: &Vector3<f64>) -> Sdf {
        let ab = self.b - self.a;
        let l2 = ab.norm_squared();
        let s = if l2 > 0.0 {
            ((x - self.a).dot(&ab) / l2).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let c = self.a + s * ab;
        let d = x - c;
        let len = d.norm();
        if len > 0.0 {
            (len - self.radius, d / len)
        } else {
            // On the axis: any unit vector perpendicular to it.
            let n = if l2 > 0.0 {
                any_perpendicular(&ab)
            } else {
                Vector3::y()
            };
            (-self.radius, n)
        }
    }
}

/// A unit vector perpendicular to `v` (non-zero), chosen deterministically.
pub(crate) fn any_perpendicular(v: &Vector3<f64>) -> Vector3<f64> {
    let a = v.abs();
    let e = if a.x <= a.y && a.x <= a.z {
        Vector3::x()
    } else if a.y <= a.z {
        Vector3::y()
    } else {
        Vector3::z()
    };
    v.cross(&e).normalize()
}
