//! Serde helpers: fixed-size numeric arrays with clear expectations, node
//! selectors that accept a number or a string, and selector-keyed maps.

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::marker::PhantomData;
use weft_core::NodeSelector;

/// A node selector as written in a scene file (DESIGN §8): a node index
/// within the object (JSON number or numeric string, e.g. `0` or `"2"`),
/// `"corner:K"` (K = 0..3, counter-clockwise about the normal from the
/// warp/weft origin) or `"edge:warp_start|warp_end|weft_start|weft_end"`.
/// Corners and edges apply to woven patches only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Selector(pub NodeSelector);

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl From<NodeSelector> for Selector {
    fn from(s: NodeSelector) -> Self {
        Self(s)
    }
}

impl Serialize for Selector {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            NodeSelector::Index(i) => s.serialize_u64(i as u64),
            other => s.serialize_str(&other.to_string()),
        }
    }
}

struct SelectorVisitor;

impl Visitor<'_> for SelectorVisitor {
    type Value = Selector;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "a node index, \"corner:0\"..\"corner:3\" or \"edge:warp_start|warp_end|weft_start|weft_end\"",
        )
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Selector, E> {
        usize::try_from(v)
            .map(|i| Selector(NodeSelector::Index(i)))
            .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Selector, E> {
        if v >= 0 {
            self.visit_u64(v as u64)
        } else {
            Err(E::invalid_value(de::Unexpected::Signed(v), &self))
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Selector, E> {
        // weft-core's message is "'corner:9': expected a node index, ...".
        v.parse::<NodeSelector>().map(Selector).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for Selector {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SelectorVisitor)
    }
}

/// A JSON object keyed by node selectors, kept in file order, e.g.
/// `{"2": 0.001}` or `{"edge:weft_end": [0, 1, 0]}`.
#[derive(Clone, Debug, PartialEq)]
pub struct SelectorMap<V>(pub Vec<(Selector, V)>);

impl<V> Default for SelectorMap<V> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<V> SelectorMap<V> {
    /// True when the map has no entry.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<V: Serialize> Serialize for SelectorMap<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(&k.0.to_string(), v)?;
        }
        m.end()
    }
}

struct SelectorMapVisitor<V>(PhantomData<V>);

impl<'de, V: Deserialize<'de>> Visitor<'de> for SelectorMapVisitor<V> {
    type Value = SelectorMap<V>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object keyed by node selectors (\"2\", \"corner:0\", \"edge:weft_end\")")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(k) = map.next_key::<Selector>()? {
            if out.iter().any(|(s, _): &(Selector, V)| *s == k) {
                return Err(de::Error::custom(format!("duplicate node selector '{k}'")));
            }
            out.push((k, map.next_value::<V>()?));
        }
        Ok(SelectorMap(out))
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for SelectorMap<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(SelectorMapVisitor(PhantomData))
    }
}

struct ArrayVisitor<T, const N: usize> {
    what: &'static str,
    _t: PhantomData<T>,
}

impl<'de, T: Deserialize<'de> + Copy + Default, const N: usize> Visitor<'de>
    for ArrayVisitor<T, N>
{
    type Value = [T; N];

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.what)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = [T::default(); N];
        for (i, slot) in out.iter_mut().enumerate() {
            *slot = seq
                .next_element()?
                .ok_or_else(|| de::Error::invalid_length(i, &self))?;
        }
        if seq.next_element::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::invalid_length(N + 1, &self));
        }
        Ok(out)
    }
}

fn array<'de, D, T, const N: usize>(d: D, what: &'static str) -> Result<[T; N], D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Copy + Default,
{
    d.deserialize_seq(ArrayVisitor::<T, N> {
        what,
        _t: PhantomData,
    })
}

/// `[x, y, z]`.
pub(crate) fn vec3<'de, D: Deserializer<'de>>(d: D) -> Result<[f64; 3], D::Error> {
    array(d, "an array of three numbers [x, y, z]")
}

/// `[a, b]` of numbers.
pub(crate) fn pair<'de, D: Deserializer<'de>>(d: D) -> Result<[f64; 2], D::Error> {
    array(d, "an array of two numbers")
}

/// `[a, b]` of non-negative integers.
pub(crate) fn counts<'de, D: Deserializer<'de>>(d: D) -> Result<[usize; 2], D::Error> {
    array(d, "an array of two integers")
}

struct V3([f64; 3]);

impl<'de> Deserialize<'de> for V3 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        vec3(d).map(V3)
    }
}

struct Key(f64, [f64; 3]);

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a keyframe [t, [dx, dy, dz]] (s, m)")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Key, A::Error> {
        let t: f64 = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let V3(x) = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(1, &self))?;
        if seq.next_element::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::invalid_length(3, &self));
        }
        Ok(Key(t, x))
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(KeyVisitor)
    }
}

/// Keyframes `[[t, [dx, dy, dz]], ...]`.
pub(crate) fn keyframes<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(f64, [f64; 3])>, D::Error> {
    let v = Vec::<Key>::deserialize(d)?;
    Ok(v.into_iter().map(|Key(t, x)| (t, x)).collect())
}

/// One keyframe of a collider's rigid motion (scene key `keyframes`):
/// `[t, [dx, dy, dz]]` or `[t, [dx, dy, dz], [rx, ry, rz]]`, at time `t`
/// (s) the collider is moved by `translation` (m) from its initial
/// placement and turned by the rotation vector `rotation` (axis times
/// angle, rad) about its pivot (`ColliderShape::pivot`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ColliderKeyframe {
    /// Time (s).
    pub time: f64,
    /// Translation from the initial placement (m).
    pub translation: [f64; 3],
    /// Rotation vector about the pivot (rad); `None` for none.
    pub rotation: Option<[f64; 3]>,
}

struct ColliderKeyVisitor;

impl<'de> Visitor<'de> for ColliderKeyVisitor {
    type Value = ColliderKeyframe;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a keyframe [t, [dx, dy, dz]] or [t, [dx, dy, dz], [rx, ry, rz]] (s, m, rad)")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ColliderKeyframe, A::Error> {
        let time: f64 = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let V3(translation) = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(1, &self))?;
        let rotation = seq.next_element::<V3>()?.map(|V3(r)| r);
        if seq.next_element::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::invalid_length(4, &self));
        }
        Ok(ColliderKeyframe {
            time,
            translation,
            rotation,
        })
    }
}

impl<'de> Deserialize<'de> for ColliderKeyframe {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(ColliderKeyVisitor)
    }
}

impl Serialize for ColliderKeyframe {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeTuple;
        let mut t = s.serialize_tuple(if self.rotation.is_some() { 3 } else { 2 })?;
        t.serialize_element(&self.time)?;
        t.serialize_element(&self.translation)?;
        if let Some(r) = &self.rotation {
            t.serialize_element(r)?;
        }
        t.end()
    }
}
