//! Identifiers: the one 32-byte id type (an event's sha256, a message id, a cache key) and the serde helper
//! that writes a git object id as hex.
//!
//! An [`Id32`] is written as 64 lowercase hex digits and read only in that form, as git writes and reads
//! object names; a user-given prefix is lowercased before it is matched (see [`crate::kit::abbrev`]).

use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// 32 bytes: the sha256 of an event's canonical JSON, which is also the id of the message it sends.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Id32(pub [u8; 32]);

impl Id32 {
    /// The sha256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Id32(Sha256::digest(bytes).into())
    }

    pub fn to_hex(&self) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut s = String::with_capacity(64);
        for b in self.0 {
            s.push(HEX[(b >> 4) as usize] as char);
            s.push(HEX[(b & 15) as usize] as char);
        }
        s
    }

    /// Same as [`Id32::to_hex`].
    pub fn hex(&self) -> String {
        self.to_hex()
    }

    /// Exactly 64 lowercase hex digits, else `None`.
    pub fn from_hex(hex: &str) -> Option<Self> {
        fn nibble(c: u8) -> Option<u8> {
            match c {
                b'0'..=b'9' => Some(c - b'0'),
                b'a'..=b'f' => Some(c - b'a' + 10),
                _ => None,
            }
        }
        let hex = hex.as_bytes();
        if hex.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, pair) in hex.chunks_exact(2).enumerate() {
            out[i] = (nibble(pair[0])? << 4) | nibble(pair[1])?;
        }
        Some(Id32(out))
    }

    /// Same as [`Id32::from_hex`].
    pub fn parse(hex: &str) -> Option<Self> {
        Self::from_hex(hex)
    }

    /// The first `len` hex digits (4 to 64), as git abbreviates object names.
    pub fn short(&self, len: usize) -> String {
        let mut s = self.to_hex();
        s.truncate(len.clamp(4, 64));
        s
    }
}

impl fmt::Display for Id32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Id32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Id32({})", self.short(12))
    }
}

impl From<Id32> for String {
    fn from(id: Id32) -> String {
        id.to_hex()
    }
}

impl TryFrom<String> for Id32 {
    type Error = String;
    fn try_from(s: String) -> std::result::Result<Self, String> {
        Id32::from_hex(&s).ok_or_else(|| format!("not a sha256 hex id: {s}"))
    }
}

impl Serialize for Id32 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for Id32 {
    /// Reads borrowed or owned strings without an intermediate allocation.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Id32;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("64 lowercase hex digits")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<Id32, E> {
                Id32::from_hex(v).ok_or_else(|| E::custom(format!("not a sha256 hex id: {v}")))
            }
        }
        d.deserialize_str(V)
    }
}

/// Serialize a git object id as its full hex name (for `#[serde(serialize_with)]`).
pub fn ser_oid<S: serde::Serializer>(
    id: &gix::ObjectId,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_is_lowercase_only() {
        let id = Id32::of(b"hello");
        let hex = id.to_hex();
        assert_eq!(
            hex,
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert_eq!(Id32::from_hex(&hex), Some(id));
        assert_eq!(Id32::from_hex(&hex.to_uppercase()), None);
        assert_eq!(Id32::from_hex(&hex[..63]), None);
        assert_eq!(id.short(7), "2cf24db");
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(serde_json::from_str::<Id32>(&json).unwrap(), id);
        assert!(serde_json::from_str::<Id32>(&json.to_uppercase()).is_err());
    }
}
