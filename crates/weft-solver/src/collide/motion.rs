//! Keyframed rigid motion of colliders (DESIGN §6, §8 `keyframes`).
//!
//! A motion maps a collider's local frame to the world at time `t`:
//! `x_world = R(t) x_local + T(t)` (rotation about the local origin, then
//! translation). Between consecutive keyframes `T` is linear in time and `R`
//! turns at constant angular velocity along the shortest arc (quaternion
//! slerp), so on each interval the linear velocity `Ṫ` and the world angular
//! velocity `ω` are constant; at a keyframe they jump (the interval starting
//! at that keyframe is used, i.e. velocities are right-continuous). Before the
//! first keyframe the collider rests at the first pose, after the last one at
//! the last pose, with zero velocity. The velocity of the collider's material
//! point that is at `x` at time `t` is `v(x, t) = Ṫ + ω × (x - T(t))`.

use super::error::CollideError;
use nalgebra::{Isometry3, Translation3, Unit, UnitQuaternion, Vector3};

/// One keyframe: at `time` (s) the collider is at `translation` (m) and
/// rotated by `rotation`, a rotation vector (axis times angle, rad;
/// `None` = no rotation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Keyframe {
    /// Time (s).
    pub time: f64,
    /// Translation `T` (m).
    pub translation: Vector3<f64>,
    /// Rotation vector (rad); `None` is the identity.
    pub rotation: Option<Vector3<f64>>,
}

/// Piecewise-linear (translation) / piecewise-slerp (rotation) rigid motion
/// through keyframes sorted by time.
#[derive(Clone, Debug, PartialEq)]
pub struct RigidMotion {
    times: Vec<f64>,
    translations: Vec<Vector3<f64>>,
    rotations: Vec<UnitQuaternion<f64>>,
}

impl RigidMotion {
    /// Motion from the identity pose at `t = 0` to `translation` (m) and
    /// `rotation` (rotation vector, rad; `None` = none) at `t = duration`
    /// (s), at constant linear and angular velocity, held afterwards: the
    /// two keyframes `(0, 0, None)` and `(duration, translation, rotation)`.
    ///
    /// # Errors
    /// As [`RigidMotion::new`]: a `duration` that is not positive and
    /// finite, or a non-finite translation or rotation (keyframe 1).
    pub fn from_rest(
        duration: f64,
        translation: Vector3<f64>,
        rotation: Option<Vector3<f64>>,
    ) -> Result<Self, CollideError> {
        Self::new(&[
            Keyframe {
                time: 0.0,
                translation: Vector3::zeros(),
                rotation: None,
            },
            Keyframe {
                time: duration,
                translation,
                rotation,
            },
        ])
    }

    /// Motion through `keyframes` (at least one; times strictly increasing).
    ///
    /// # Errors
    /// [`CollideError::Keyframes`] naming the keyframe: none given, a
    /// non-finite value, or a time not greater than the previous one.
    pub fn new(keyframes: &[Keyframe]) -> Result<Self, CollideError> {
        if keyframes.is_empty() {
            return Err(CollideError::Keyframes {
                index: 0,
                reason: "no keyframes given (expected at least one)".into(),
            });
        }
        for (i, k) in keyframes.iter().enumerate() {
            let finite = k.time.is_finite()
                && k.translation.iter().all(|c| c.is_finite())
                && k.rotation.is_none_or(|r| r.iter().all(|c| c.is_finite()));
            if !finite {
                return Err(CollideError::Keyframes {
                    index: i,
                    reason: format!("expected finite time, translation and rotation, got {k:?}"),
                });
            }
            if i > 0 && k.time <= keyframes[i - 1].time {
                return Err(CollideError::Keyframes {
                    index: i,
                    reason: format!(
                        "time {} s is not after the previous keyframe's {} s (expected strictly \
                         increasing times)",
                        k.time,
                        keyframes[i - 1].time
                    ),
                });
            }
        }
        Ok(RigidMotion {
            times: keyframes.iter().map(|k| k.time).collect(),
            translations: keyframes.iter().map(|k| k.translation).collect(),
            rotations: keyframes
                .iter()
                .map(|k| {
                    UnitQuaternion::from_scaled_axis(k.rotation.unwrap_or_else(Vector3::zeros))
                })
                .collect(),
        })
    }

    /// Translation-only motion from `(time, translation)` pairs, the DESIGN
    /// §8 `keyframes` format `[[t, [x, y, z]], ...]`.
    ///
    /// # Errors
    /// As [`Self::new`].
    pub fn from_translations(keys: &[(f64, [f64; 3])]) -> Result<Self, CollideError> {
        let frames: Vec<Keyframe> = keys
            .iter()
            .map(|&(time, t)| Keyframe {
                time,
                translation: Vector3::from(t),
                rotation: None,
            })
            .collect();
        Self::new(&frames)
    }

    /// The keyframes' times (s).
    pub fn times(&self) -> &[f64] {
        &self.times
    }

    /// `(i, s, Δt)`: the interval `[t_i, t_{i+1})` containing `t` and the
    /// fraction `s ∈ [0, 1)`; `None` outside the keyframe range.
    fn interval(&self, t: f64) -> Option<(usize, f64, f64)> {
        let n = self.times.len();
        if n < 2 || t < self.times[0] || t >= self.times[n - 1] {
            return None;
        }
        let i = self.times.partition_point(|&ti| ti <= t) - 1;
        let dt = self.times[i + 1] - self.times[i];
        Some((i, (t - self.times[i]) / dt, dt))
    }

    /// Relative rotation axis and angle from keyframe `i` to `i + 1`, in the
    /// frame of keyframe `i` (shortest arc, angle in `[0, π]`).
    fn relative(&self, i: usize) -> Option<(Unit<Vector3<f64>>, f64)> {
        (self.rotations[i].inverse() * self.rotations[i + 1]).axis_angle()
    }

    /// The pose at time `t`: `x_world = iso * x_local`.
    pub fn transform(&self, t: f64) -> Isometry3<f64> {
        let (tr, rot) = match self.interval(t) {
            None => {
                let k = if t < self.times[0] {
                    0
                } else {
                    self.times.len() - 1
                };
                (self.translations[k], self.rotations[k])
            }
            Some((i, s, _)) => {
                let tr = self.translations[i] * (1.0 - s) + self.translations[i + 1] * s;
                let rot = match self.relative(i) {
                    Some((axis, angle)) => {
                        self.rotations[i] * UnitQuaternion::from_axis_angle(&axis, s * angle)
                    }
                    None => self.rotations[i],
                };
                (tr, rot)
            }
        };
        Isometry3::from_parts(Translation3::from(tr), rot)
    }

    /// Linear velocity `Ṫ` of the local origin at time `t` (m/s).
    pub fn linear_velocity(&self, t: f64) -> Vector3<f64> {
        match self.interval(t) {
            Some((i, _, dt)) => (self.translations[i + 1] - self.translations[i]) / dt,
            None => Vector3::zeros(),
        }
    }

    /// World angular velocity `ω` at time `t` (rad/s).
    pub fn angular_velocity(&self, t: f64) -> Vector3<f64> {
        match self.interval(t) {
            Some((i, _, dt)) => match self.relative(i) {
                Some((axis, angle)) => self.rotations[i] * (axis.into_inner() * (angle / dt)),
                None => Vector3::zeros(),
            },
            None => Vector3::zeros(),
        }
    }

    /// Velocity (m/s) of the collider's material point located at world
    /// position `x` at time `t`: `Ṫ + ω × (x - T(t))`.
    pub fn velocity_at(&self, x: &Vector3<f64>, t: f64) -> Vector3<f64> {
        let origin = self.transform(t).translation.vector;
        self.linear_velocity(t) + self.angular_velocity(t).cross(&(x - origin))
    }
}
