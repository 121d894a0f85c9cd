//! JSON that keeps its keys in the order they were written: the harnesses' settings files belong to the
//! user, and rewriting one with its keys sorted (serde_json's map, which the crate keeps sorted because the
//! event log's canonical form needs it) would churn every line. Numbers are kept as serde_json reads them.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// A JSON value whose objects are lists of (key, value) in file order.
#[derive(Debug, Clone, PartialEq)]
pub enum Doc {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Doc>),
    Object(Vec<(String, Doc)>),
}

impl Doc {
    pub fn object() -> Doc {
        Doc::Object(Vec::new())
    }

    pub fn str(s: &str) -> Doc {
        Doc::String(s.to_owned())
    }

    pub fn get(&self, key: &str) -> Option<&Doc> {
        match self {
            Doc::Object(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Doc> {
        match self {
            Doc::Object(m) => m.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Set `key` (in place when present, else appended); `false` when this is not an object.
    pub fn set(&mut self, key: &str, value: Doc) -> bool {
        let Doc::Object(m) = self else {
            return false;
        };
        match m.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value,
            None => m.push((key.to_owned(), value)),
        }
        true
    }

    /// Remove `key`; the value it had.
    pub fn remove(&mut self, key: &str) -> Option<Doc> {
        let Doc::Object(m) = self else {
            return None;
        };
        let at = m.iter().position(|(k, _)| k == key)?;
        Some(m.remove(at).1)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Doc::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_empty_container(&self) -> bool {
        match self {
            Doc::Object(m) => m.is_empty(),
            Doc::Array(a) => a.is_empty(),
            _ => false,
        }
    }

    /// Parse JSON text (an empty or blank file is an empty object).
    pub fn parse(text: &str) -> serde_json::Result<Doc> {
        if text.trim().is_empty() {
            return Ok(Doc::object());
        }
        serde_json::from_str(text)
    }

    /// Pretty-printed (two spaces, as the harnesses write their files), with a final newline.
    pub fn to_pretty(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

impl Serialize for Doc {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Doc::Null => s.serialize_unit(),
            Doc::Bool(b) => s.serialize_bool(*b),
            Doc::Number(n) => n.serialize(s),
            Doc::String(t) => s.serialize_str(t),
            Doc::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for v in a {
                    seq.serialize_element(v)?;
                }
                seq.end()
            }
            Doc::Object(m) => {
                let mut map = s.serialize_map(Some(m.len()))?;
                for (k, v) in m {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Doc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Doc, D::Error> {
        d.deserialize_any(DocVisitor)
    }
}

struct DocVisitor;

impl<'de> Visitor<'de> for DocVisitor {
    type Value = Doc;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Doc, E> {
        Ok(Doc::Null)
    }
    fn visit_none<E>(self) -> Result<Doc, E> {
        Ok(Doc::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Doc, E> {
        Ok(Doc::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Doc, E> {
        Ok(Doc::Number(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Doc, E> {
        Ok(Doc::Number(n.into()))
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Doc, E> {
        serde_json::Number::from_f64(n)
            .map(Doc::Number)
            .ok_or_else(|| E::custom("a number JSON cannot hold"))
    }
    fn visit_str<E>(self, s: &str) -> Result<Doc, E> {
        Ok(Doc::String(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Doc, E> {
        Ok(Doc::String(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Doc, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element()? {
            out.push(v);
        }
        Ok(Doc::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Doc, A::Error> {
        let mut out: Vec<(String, Doc)> = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Doc>()? {
            // A repeated key: the last wins, as serde_json and JavaScript read it, at its first place.
            match out.iter_mut().find(|(o, _)| *o == k) {
                Some((_, old)) => *old = v,
                None => out.push((k, v)),
            }
        }
        Ok(Doc::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: a user's settings file rewritten with its keys sorted, or its numbers changed.
    #[test]
    fn keys_keep_their_order_and_values_round_trip() {
        let text = "{\n  \"zeta\": 1,\n  \"alpha\": {\n    \"b\": [\n      true,\n      null,\n      2.5,\n      -3\n    ],\n    \"a\": \"x\"\n  }\n}\n";
        let d = Doc::parse(text).unwrap();
        assert_eq!(d.to_pretty(), text);
        assert_eq!(Doc::parse("  ").unwrap(), Doc::object());
    }
}
