//! One event: its canonical JSON form, its content address, and how it is framed in a commit message.
//!
//! The id of an event is the sha256 of its canonical JSON. The Lamport clock is *not* part of the event:
//! it belongs to the commit that places the event in a log, so the same event appended on two replicas
//! keeps one id and is counted once. See `docs/format.md` for the normative description.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::kit::error::{Error, Result};

/// The version of the event JSON and commit framing written by this build.
pub const FORMAT_VERSION: u64 = 1;

/// The largest canonical event (JSON only; attachments are separate blobs) a log accepts.
pub const MAX_EVENT_BYTES: usize = 256 * 1024;

/// The first line of every event commit's message starts with this.
pub(crate) const EVENT_SUBJECT_PREFIX: &str = "jules-event ";
/// The first line of every merge commit's message.
pub(crate) const MERGE_SUBJECT: &str = "jules-merge";
pub(crate) use crate::store::refs::LAMPORT_TRAILER;
pub(crate) const ID_TRAILER: &str = "Jules-Event-Id: ";
pub(crate) use crate::store::sign::SIGNATURE_TRAILER;

/// The sha256 of an event's canonical JSON: the crate's one 32-byte id type.
pub use crate::kit::id::Id32 as EventId;

/// A file that rides with an event as a blob in the event commit's tree, under `payload/<name>`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PayloadRef {
    pub name: String,
    /// The git object id of the blob (hex), so the event id covers the payload's content.
    pub blob: String,
    pub size: u64,
}

/// An immutable fact recorded in a log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Event {
    /// The format version, [`FORMAT_VERSION`] for events this build writes.
    pub v: u64,
    /// What happened, namespaced by subsystem: `mail.send`, `state.record`, …
    pub kind: String,
    /// Who did it: a persona name, or a tool name such as `scheduler`.
    pub actor: String,
    /// When, as RFC 3339 UTC with milliseconds. Informational: order comes from the log, not the clock.
    pub time: String,
    /// Random bits that keep two identical interactive events apart; absent for imported events so that
    /// importing the same source twice yields the same ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub payload: Vec<PayloadRef>,
    /// The subsystem's data. Numbers must be integers so that the canonical form is unambiguous.
    pub data: serde_json::Value,
}

impl Event {
    /// A new event stamped with the current time and a fresh nonce.
    pub fn new(kind: impl Into<String>, actor: impl Into<String>, data: serde_json::Value) -> Self {
        Event {
            v: FORMAT_VERSION,
            kind: kind.into(),
            actor: actor.into(),
            time: now_rfc3339(),
            nonce: Some(fresh_nonce()),
            payload: Vec::new(),
            data,
        }
    }

    /// The canonical JSON: object keys sorted by their UTF-8 bytes, no insignificant whitespace,
    /// strings escaped as serde_json does (only `"`, `\\` and control characters).
    /// Refused: a number that is not an integer anywhere in `data` (its decimal form is not unique, and
    /// serde_json's default parser does not read every float back to the same bits, so the id would not
    /// survive a strict reading), and an event over [`MAX_EVENT_BYTES`].
    pub fn canonical(&self) -> Result<Vec<u8>> {
        if let Some(n) = first_fraction(&self.data) {
            return Err(Error::usage(format!(
                "event {} data holds the number {n}; events may hold only integers (docs/format.md): write it as a string",
                self.kind
            )));
        }
        let value = serde_json::to_value(self).map_err(|e| Error::wrap("encoding event", e))?;
        let bytes = serde_json::to_vec(&value).map_err(|e| Error::wrap("encoding event", e))?;
        if bytes.len() > MAX_EVENT_BYTES {
            return Err(Error::usage(format!(
                "event is {} bytes, over the limit of {MAX_EVENT_BYTES} bytes",
                bytes.len()
            )));
        }
        Ok(bytes)
    }

    pub fn id(&self) -> Result<EventId> {
        Ok(EventId::of(&self.canonical()?))
    }
}

/// The first number in `v` that is not an integer (`i64` or `u64`), if any.
fn first_fraction(v: &serde_json::Value) -> Option<&serde_json::Number> {
    match v {
        serde_json::Value::Number(n) if !(n.is_i64() || n.is_u64()) => Some(n),
        serde_json::Value::Array(items) => items.iter().find_map(first_fraction),
        serde_json::Value::Object(map) => map.values().find_map(first_fraction),
        _ => None,
    }
}

/// Why a commit on a log is not a valid event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalid {
    NotAnEvent(String),
    BadJson(String),
    WrongVersion(u64),
    IdMismatch {
        claimed: String,
        actual: String,
    },
    NotCanonical,
    Oversized(usize),
    /// A clock at or above [`MAX_LAMPORT`]: only tampering produces one, and honouring it would leave
    /// writers no room to advance.
    LamportOutOfRange(u64),
}

/// The largest Lamport clock a valid event or merge may carry is `MAX_LAMPORT - 1` (2^62 - 1): at one event
/// per nanosecond that is 146 years of appends, and every writer can still add 1 without overflowing u64.
pub const MAX_LAMPORT: u64 = 1 << 62;

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Invalid::NotAnEvent(why) => write!(f, "not an event commit: {why}"),
            Invalid::BadJson(e) => write!(f, "bad event JSON: {e}"),
            Invalid::WrongVersion(v) => {
                write!(
                    f,
                    "unsupported event version {v} (this build reads {FORMAT_VERSION})"
                )
            }
            Invalid::IdMismatch { claimed, actual } => {
                write!(
                    f,
                    "event id mismatch: message says {claimed}, content hashes to {actual}"
                )
            }
            Invalid::NotCanonical => write!(f, "event JSON is not in canonical form"),
            Invalid::Oversized(n) => write!(f, "event is {n} bytes, over {MAX_EVENT_BYTES}"),
            Invalid::LamportOutOfRange(l) => write!(
                f,
                "Jules-Lamport {l} is beyond the format's bound {}",
                MAX_LAMPORT - 1
            ),
        }
    }
}

/// What a commit message on a log says.
pub(crate) enum Framed<'a> {
    Event {
        json: &'a [u8],
        lamport: u64,
        claimed_id: &'a str,
        /// The `Jules-Signature` trailer's value (format 4), outside the hashed event.
        signature: Option<&'a str>,
    },
    Merge {
        lamport: u64,
    },
}

/// Frame an event as a commit message; `signature` is the compacted SSHSIG over `canonical`, if signed.
pub(crate) fn event_message(
    kind: &str,
    canonical: &[u8],
    id: &EventId,
    lamport: u64,
    signature: Option<&str>,
) -> Vec<u8> {
    let mut m = Vec::with_capacity(canonical.len() + 160 + signature.map_or(0, |s| s.len() + 20));
    m.extend_from_slice(EVENT_SUBJECT_PREFIX.as_bytes());
    m.extend_from_slice(kind.as_bytes());
    m.push(b' ');
    m.extend_from_slice(id.short(12).as_bytes());
    m.extend_from_slice(b"\n\n");
    m.extend_from_slice(canonical);
    m.extend_from_slice(b"\n\n");
    m.extend_from_slice(LAMPORT_TRAILER.as_bytes());
    m.extend_from_slice(lamport.to_string().as_bytes());
    m.push(b'\n');
    m.extend_from_slice(ID_TRAILER.as_bytes());
    m.extend_from_slice(id.to_hex().as_bytes());
    m.push(b'\n');
    if let Some(sig) = signature {
        m.extend_from_slice(SIGNATURE_TRAILER.as_bytes());
        m.extend_from_slice(sig.as_bytes());
        m.push(b'\n');
    }
    m
}

pub(crate) fn merge_message(lamport: u64) -> Vec<u8> {
    format!("{MERGE_SUBJECT}\n\n{LAMPORT_TRAILER}{lamport}\n").into_bytes()
}

/// `msg.split(|b| *b == b'\n')`, with the line ends found by `memchr` (vectorised): the event's JSON line is
/// most of every message a replay reads.
fn lines(msg: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(msg);
    std::iter::from_fn(move || {
        let text = rest?;
        match memchr::memchr(b'\n', text) {
            Some(end) => {
                rest = Some(&text[end + 1..]);
                Some(&text[..end])
            }
            None => {
                rest = None;
                Some(text)
            }
        }
    })
}

/// Parse a commit message of a log; cheap: no JSON parsing, no hashing.
pub(crate) fn parse_message(msg: &[u8]) -> std::result::Result<Framed<'_>, Invalid> {
    let mut lines = lines(msg);
    let subject = lines.next().unwrap_or_default();
    let trailer = |line: &[u8], key: &str| -> Option<String> {
        line.strip_prefix(key.as_bytes())
            .and_then(|v| std::str::from_utf8(v).ok())
            .map(|s| s.trim().to_owned())
    };
    if subject == MERGE_SUBJECT.as_bytes() {
        for line in lines {
            if let Some(v) = trailer(line, LAMPORT_TRAILER) {
                let lamport = v
                    .parse()
                    .map_err(|_| Invalid::NotAnEvent(format!("bad lamport {v:?}")))?;
                if lamport >= MAX_LAMPORT {
                    return Err(Invalid::LamportOutOfRange(lamport));
                }
                return Ok(Framed::Merge { lamport });
            }
        }
        return Err(Invalid::NotAnEvent("merge without Jules-Lamport".into()));
    }
    if !subject.starts_with(EVENT_SUBJECT_PREFIX.as_bytes()) {
        let s = String::from_utf8_lossy(&subject[..subject.len().min(60)]).into_owned();
        return Err(Invalid::NotAnEvent(format!("subject {s:?}")));
    }
    if lines.next() != Some(&b""[..]) {
        return Err(Invalid::NotAnEvent(
            "no blank line after the subject".into(),
        ));
    }
    let json = lines
        .next()
        .ok_or_else(|| Invalid::NotAnEvent("no event JSON".into()))?;
    if json.len() > MAX_EVENT_BYTES {
        return Err(Invalid::Oversized(json.len()));
    }
    let (mut lamport, mut claimed_id, mut signature) = (None, None, None);
    for line in lines {
        if let Some(rest) = line.strip_prefix(LAMPORT_TRAILER.as_bytes()) {
            lamport = std::str::from_utf8(rest)
                .ok()
                .and_then(|s| s.trim().parse().ok());
        } else if let Some(rest) = line.strip_prefix(ID_TRAILER.as_bytes()) {
            claimed_id = std::str::from_utf8(rest).ok().map(str::trim);
        } else if let Some(rest) = line.strip_prefix(SIGNATURE_TRAILER.as_bytes()) {
            // Not UTF-8 cannot be base64: keep it, so verification calls it a bad signature.
            signature = Some(std::str::from_utf8(rest).map_or("!", str::trim));
        }
    }
    match (lamport, claimed_id) {
        (Some(lamport), Some(_)) if lamport >= MAX_LAMPORT => {
            Err(Invalid::LamportOutOfRange(lamport))
        }
        (Some(lamport), Some(claimed_id)) => Ok(Framed::Event {
            json,
            lamport,
            claimed_id,
            signature,
        }),
        _ => Err(Invalid::NotAnEvent(
            "missing Jules-Lamport or Jules-Event-Id trailer".into(),
        )),
    }
}

/// Decode and check the JSON of a framed event. `strict` also demands the canonical form (fsck).
pub(crate) fn decode_event(
    json: &[u8],
    claimed_id: &str,
    strict: bool,
) -> std::result::Result<(EventId, Event), Invalid> {
    let id = EventId::of(json);
    if EventId::from_hex(claimed_id) != Some(id) {
        return Err(Invalid::IdMismatch {
            claimed: claimed_id.to_owned(),
            actual: id.to_hex(),
        });
    }
    Ok((id, decode_json(json, strict)?))
}

/// Decode and check the JSON of an event whose id the caller has already checked against its bytes.
pub(crate) fn decode_json(json: &[u8], strict: bool) -> std::result::Result<Event, Invalid> {
    if !strict {
        // The hot path of every reader: one parse straight into the struct.
        if let Ok(event) = serde_json::from_slice::<Event>(json) {
            if event.v != FORMAT_VERSION {
                return Err(Invalid::WrongVersion(event.v));
            }
            return Ok(event);
        }
    }
    let value: serde_json::Value =
        serde_json::from_slice(json).map_err(|e| Invalid::BadJson(e.to_string()))?;
    let version = value.get("v").and_then(|v| v.as_u64()).unwrap_or(0);
    if version != FORMAT_VERSION {
        return Err(Invalid::WrongVersion(version));
    }
    if strict && serde_json::to_vec(&value).ok().as_deref() != Some(json) {
        return Err(Invalid::NotCanonical);
    }
    serde_json::from_value(value).map_err(|e| Invalid::BadJson(e.to_string()))
}

/// A log commit's message, fully decoded: what `log fsck` checks of every commit (and what the fuzz target
/// `fuzz/fuzz_targets/event.rs` feeds with arbitrary bytes).
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    Event {
        id: EventId,
        event: Event,
        lamport: u64,
    },
    Merge {
        lamport: u64,
    },
}

/// Frame and decode a commit message of a log; `strict` also demands the canonical JSON form.
pub fn decode_message(msg: &[u8], strict: bool) -> std::result::Result<Decoded, Invalid> {
    match parse_message(msg)? {
        Framed::Merge { lamport } => Ok(Decoded::Merge { lamport }),
        Framed::Event {
            json,
            lamport,
            claimed_id,
            ..
        } => {
            let (id, event) = decode_event(json, claimed_id, strict)?;
            Ok(Decoded::Event { id, event, lamport })
        }
    }
}

pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// 64 random bits from the OS-seeded hasher: enough to keep identical events apart, no extra crate.
pub(crate) fn fresh_nonce() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    h.write_u32(std::process::id());
    format!("{:016x}", h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_form_sorts_keys_and_is_compact() {
        let mut ev = Event::new(
            "t.x",
            "curator",
            serde_json::json!({"b": 1, "a": {"z": "\n", "y": [2, 1]}}),
        );
        ev.time = "2026-01-01T00:00:00.000Z".into();
        ev.nonce = None;
        let c = String::from_utf8(ev.canonical().unwrap()).unwrap();
        assert_eq!(
            c,
            r#"{"actor":"curator","data":{"a":{"y":[2,1],"z":"\n"},"b":1},"kind":"t.x","time":"2026-01-01T00:00:00.000Z","v":1}"#
        );
        assert_eq!(ev.id().unwrap(), EventId::of(c.as_bytes()));
    }

    #[test]
    fn message_round_trip_and_tamper_detection() {
        let ev = Event::new("t.x", "a", serde_json::json!({"n": 1}));
        let c = ev.canonical().unwrap();
        let id = EventId::of(&c);
        let msg = event_message(&ev.kind, &c, &id, 42, None);
        let Ok(Framed::Event {
            json,
            lamport,
            claimed_id,
            ..
        }) = parse_message(&msg)
        else {
            panic!("not parsed")
        };
        assert_eq!(lamport, 42);
        let (id2, ev2) = decode_event(json, claimed_id, true).unwrap();
        assert_eq!((id2, ev2), (id, ev));

        let tampered = String::from_utf8(msg)
            .unwrap()
            .replace(r#""n":1"#, r#""n":2"#);
        let Ok(Framed::Event {
            json, claimed_id, ..
        }) = parse_message(tampered.as_bytes())
        else {
            panic!("not parsed")
        };
        assert!(matches!(
            decode_event(json, claimed_id, false),
            Err(Invalid::IdMismatch { .. })
        ));
        assert!(matches!(
            parse_message(b"hello\n"),
            Err(Invalid::NotAnEvent(_))
        ));
    }

    #[test]
    fn fsck_classes() {
        let frame = |json: &str| {
            let id = EventId::of(json.as_bytes());
            event_message("t.x", json.as_bytes(), &id, 1, None)
        };
        let decode = |msg: &[u8]| match parse_message(msg) {
            Ok(Framed::Event {
                json, claimed_id, ..
            }) => decode_event(json, claimed_id, true).map(|_| ()),
            Ok(Framed::Merge { .. }) => Ok(()),
            Err(e) => Err(e),
        };
        assert!(matches!(
            decode(&frame("{not json")),
            Err(Invalid::BadJson(_))
        ));
        let v2 = r#"{"actor":"a","data":{},"kind":"t.x","time":"t","v":2}"#;
        assert!(matches!(decode(&frame(v2)), Err(Invalid::WrongVersion(2))));
        let spaced = r#"{"v":1, "actor":"a","data":{},"kind":"t.x","time":"t"}"#;
        assert!(matches!(decode(&frame(spaced)), Err(Invalid::NotCanonical)));
        let unknown = r#"{"actor":"a","data":{},"extra":1,"kind":"t.x","time":"t","v":1}"#;
        assert!(matches!(decode(&frame(unknown)), Err(Invalid::BadJson(_))));
        let huge = format!(
            r#"{{"actor":"a","data":{{"x":"{}"}},"kind":"t.x","time":"t","v":1}}"#,
            "a".repeat(MAX_EVENT_BYTES)
        );
        assert!(matches!(decode(&frame(&huge)), Err(Invalid::Oversized(_))));
        assert!(decode(&merge_message(4)).is_ok());
    }

    #[test]
    fn hex_round_trip() {
        let id = EventId::of(b"x");
        assert_eq!(EventId::from_hex(&id.to_hex()), Some(id));
        assert_eq!(EventId::from_hex("zz"), None);
    }

    /// The size bound is inclusive at both ends: an event of exactly `MAX_EVENT_BYTES` is written and read,
    /// one byte more is refused when written and when read.
    #[test]
    fn an_event_of_exactly_the_bound_is_accepted_one_byte_more_is_not() {
        let sized = |n: usize| {
            let mut ev = Event::new("t.x", "a", serde_json::json!({ "x": "" }));
            let base = ev.canonical().unwrap().len();
            ev.data = serde_json::json!({ "x": "a".repeat(n - base) });
            ev
        };
        let at = sized(MAX_EVENT_BYTES);
        let c = at.canonical().unwrap();
        assert_eq!(c.len(), MAX_EVENT_BYTES);
        let id = EventId::of(&c);
        let decoded = decode_message(&event_message("t.x", &c, &id, 1, None), true).unwrap();
        assert_eq!(
            decoded,
            Decoded::Event {
                id,
                event: at,
                lamport: 1
            }
        );

        let over = sized(MAX_EVENT_BYTES + 1);
        assert!(over.canonical().is_err());
        let json = serde_json::to_vec(&over).unwrap();
        assert_eq!(json.len(), MAX_EVENT_BYTES + 1);
        let msg = event_message("t.x", &json, &EventId::of(&json), 1, None);
        assert_eq!(
            decode_message(&msg, false),
            Err(Invalid::Oversized(MAX_EVENT_BYTES + 1))
        );
    }

    /// What `log fsck` prints for each class names the detail that tells them apart.
    #[test]
    fn each_invalid_class_says_what_is_wrong() {
        let cases = [
            (Invalid::NotAnEvent("subject".into()), "not an event commit: subject"),
            (Invalid::BadJson("eof".into()), "bad event JSON: eof"),
            (Invalid::WrongVersion(2), "unsupported event version 2 (this build reads 1)"),
            (Invalid::NotCanonical, "event JSON is not in canonical form"),
            (Invalid::Oversized(7), "event is 7 bytes, over 262144"),
            (
                Invalid::LamportOutOfRange(MAX_LAMPORT),
                "Jules-Lamport 4611686018427387904 is beyond the format's bound 4611686018427387903",
            ),
        ];
        for (invalid, text) in cases {
            assert_eq!(invalid.to_string(), text);
        }
    }

    /// A new event's time is RFC 3339 UTC with milliseconds, and two events made alike get different nonces
    /// (so different ids): the nonce is what keeps two identical interactive events apart.
    #[test]
    fn new_events_carry_a_utc_millisecond_time_and_a_fresh_nonce() {
        let a = Event::new("t.x", "a", serde_json::json!({}));
        let b = Event::new("t.x", "a", serde_json::json!({}));
        let t = chrono::DateTime::parse_from_rfc3339(&a.time).unwrap();
        assert_eq!(t.offset().local_minus_utc(), 0);
        assert_eq!(a.time.len(), "2026-01-01T00:00:00.000Z".len());
        assert!(a.time.ends_with('Z'));
        let nonce = a.nonce.clone().unwrap();
        assert_eq!(nonce.len(), 16);
        assert!(nonce.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a.nonce, b.nonce);
        assert_ne!(a.id().unwrap(), b.id().unwrap());
    }
}
