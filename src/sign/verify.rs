//! The verification state of an event: verified (by which key, for which persona), unsigned, a bad
//! signature, or a key the trust roots do not allow for its actor.
//!
//! Trust roots are `.jules/allowed_signers` as committed at the tip of `jules.trust.ref` (default `main`)
//! *now*: every event, old or new, is judged against today's file, with `valid-after`/`valid-before` read
//! against the event's own `time`. So removing a key's line revokes everything it signed, and a
//! `valid-before` keeps what it signed before that date (as the writer's clock tells it: the window is only
//! as honest as the key's holder, which is why removal is the revocation that holds).
//!
//! Verification runs only where it means something: a repository with no trust file and no
//! `jules.requireSigned` has no verifier ([`Verifier::open`] gives `None`), and its reads cost what they
//! did. Results are cached per commit under `.git/jules/signatures/<trust-file blob id>` (derived data:
//! a new trust file starts a new cache; deleting the directory changes no answer).

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use gix::ObjectId;
use serde::Serialize;
use ssh_key::{HashAlg, SshSig};

use super::trust::AllowedSigners;
use super::{NAMESPACE, TRUST_FILE};
use crate::error::{Error, Result};
use crate::eventlog::event::{decode_event, parse_message, Framed};

/// What the signature of one event says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum State {
    /// Signed by `key` (its `SHA256:` fingerprint), which the trust roots allow for `persona`, the actor.
    Verified { key: String, persona: String },
    /// No signature.
    Unsigned,
    /// A signature that does not verify (wrong bytes, wrong namespace, does not parse).
    BadSignature,
    /// A good signature by `key`, which the trust roots do not allow for the actor (at the event's time).
    KeyNotAllowed { key: String },
}

impl State {
    pub fn is_verified(&self) -> bool {
        matches!(self, State::Verified { .. })
    }

    /// The word for human output and `log fsck`.
    pub fn describe(&self) -> String {
        match self {
            State::Verified { key, persona } => format!("verified: {persona}'s key {key}"),
            State::Unsigned => "unsigned".into(),
            State::BadSignature => "bad signature".into(),
            State::KeyNotAllowed { key } => format!("key {key} not allowed for this actor"),
        }
    }

    fn encode(&self) -> String {
        match self {
            State::Verified { key, persona } => format!("v {key} {persona}"),
            State::Unsigned => "u".into(),
            State::BadSignature => "b".into(),
            State::KeyNotAllowed { key } => format!("k {key}"),
        }
    }

    fn decode(s: &str) -> Option<State> {
        let mut parts = s.split(' ');
        Some(match (parts.next()?, parts.next(), parts.next()) {
            ("v", Some(key), Some(persona)) => State::Verified {
                key: key.into(),
                persona: persona.into(),
            },
            ("u", None, None) => State::Unsigned,
            ("b", None, None) => State::BadSignature,
            ("k", Some(key), None) => State::KeyNotAllowed { key: key.into() },
            _ => return None,
        })
    }
}

/// The state of the event framed by the commit message `msg`, under `trust` (`None`: no trust file, so no
/// key is allowed); `None` when `msg` is not a valid event (other checks name it).
pub fn check(trust: Option<&AllowedSigners>, msg: &[u8]) -> Option<State> {
    check_event(trust, msg).map(|(_, _, s)| s)
}

/// [`check`], with the event's id and actor (for messages that name it).
pub fn check_event(
    trust: Option<&AllowedSigners>,
    msg: &[u8],
) -> Option<(crate::eventlog::EventId, String, State)> {
    let Ok(Framed::Event {
        json,
        claimed_id,
        signature,
        ..
    }) = parse_message(msg)
    else {
        return None;
    };
    let (id, event) = decode_event(json, claimed_id, false).ok()?;
    let state = match signature {
        None => State::Unsigned,
        Some(sig) => check_signature(trust, &event.actor, &event.time, json, sig),
    };
    Some((id, event.actor, state))
}

/// The state of `signature` (a trailer's value) over `json` by `actor` at `time`.
pub fn check_signature(
    trust: Option<&AllowedSigners>,
    actor: &str,
    time: &str,
    json: &[u8],
    signature: &str,
) -> State {
    let Ok(sig) = SshSig::from_pem(super::armor(signature)) else {
        return State::BadSignature;
    };
    let key = sig.public_key();
    // The key the signature names checks it; whether that key may speak for the actor comes after.
    if ssh_key::PublicKey::from(key.clone())
        .verify(NAMESPACE, json, &sig)
        .is_err()
    {
        return State::BadSignature;
    }
    let fingerprint = key.fingerprint(HashAlg::Sha256).to_string();
    let at = DateTime::parse_from_rfc3339(time)
        .ok()
        .map(|t| t.with_timezone(&Utc));
    match trust.map(|t| t.allows(key, actor, NAMESPACE, at)) {
        Some(Ok(())) => State::Verified {
            key: fingerprint,
            persona: actor.to_owned(),
        },
        _ => State::KeyNotAllowed { key: fingerprint },
    }
}

/// The trust roots of a repository: the allowed-signers file at `jules.trust.ref` (default `main`) and its
/// blob id, or `None` when there is none.
pub fn load_trust(repo: &gix::Repository) -> Result<Option<(AllowedSigners, ObjectId)>> {
    let trust_ref = trust_ref(repo);
    let spec = format!("{trust_ref}:{TRUST_FILE}");
    let Ok(id) = repo.rev_parse_single(spec.as_str()) else {
        return Ok(None);
    };
    let blob = repo
        .find_object(id)
        .map_err(|e| Error::Other(format!("reading {spec}: {e}")))?;
    let text = std::str::from_utf8(&blob.data)
        .map_err(|_| Error::usage(format!("{spec} is not UTF-8")))?;
    Ok(Some((AllowedSigners::parse(text, &spec)?, id.detach())))
}

/// `jules.trust.ref`, default `main`.
pub fn trust_ref(repo: &gix::Repository) -> String {
    repo.config_snapshot()
        .string("jules.trust.ref")
        .map(|v| v.to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "main".to_owned())
}

/// The cache directory (below `.git/jules/`) of folds under `jules.requireSigned`, which ignore unverified
/// events: `cache-signed/<trust file blob id>` (or `…/none`); `None` without `requireSigned`.
pub fn authority_cache(repo: &gix::Repository) -> Option<String> {
    if !require_signed(repo) {
        return None;
    }
    let spec = format!("{}:{TRUST_FILE}", trust_ref(repo));
    let blob = repo
        .rev_parse_single(spec.as_str())
        .map_or_else(|_| "none".to_owned(), |id| id.to_string());
    Some(format!("cache-signed/{blob}"))
}

/// `jules.requireSigned`.
pub fn require_signed(repo: &gix::Repository) -> bool {
    repo.config_snapshot()
        .boolean("jules.requireSigned")
        .unwrap_or(false)
}

/// Verifies events of one repository under its trust roots, with the cache.
pub struct Verifier<'r> {
    repo: &'r gix::Repository,
    trust: Option<AllowedSigners>,
    require: bool,
    cache_path: PathBuf,
    cache: Option<Cache>,
    fresh: Vec<(ObjectId, State)>,
}

/// The cache file as read: its text and where each commit's state is in it (a state is decoded only when
/// asked for, so a large cache costs one read and one pass of hex decoding), plus what was added since.
#[derive(Default)]
struct Cache {
    text: String,
    index: HashMap<ObjectId, std::ops::Range<usize>>,
    added: HashMap<ObjectId, State>,
}

impl Cache {
    fn get(&self, commit: &ObjectId) -> Option<State> {
        if let Some(s) = self.added.get(commit) {
            return Some(s.clone());
        }
        self.index
            .get(commit)
            .and_then(|r| State::decode(&self.text[r.clone()]))
    }
}

impl<'r> Verifier<'r> {
    /// `None` when the repository has no trust file and does not require signatures: nothing to verify
    /// against, and reads stay as cheap as before.
    pub fn open(repo: &'r gix::Repository) -> Result<Option<Self>> {
        let require = require_signed(repo);
        let trust = load_trust(repo)?;
        if trust.is_none() && !require {
            return Ok(None);
        }
        let name = trust
            .as_ref()
            .map_or_else(|| "none".to_owned(), |(_, id)| id.to_string());
        Ok(Some(Verifier {
            repo,
            trust: trust.map(|(t, _)| t),
            require,
            cache_path: crate::repo::jules_dir(repo).join("signatures").join(name),
            cache: None,
            fresh: Vec::new(),
        }))
    }

    /// Whether `jules.requireSigned` is set: unverified events carry no authority.
    pub fn require_signed(&self) -> bool {
        self.require
    }

    pub fn trust(&self) -> Option<&AllowedSigners> {
        self.trust.as_ref()
    }

    /// The state of the event in `commit` (cached); `None` when the commit is not a valid event.
    pub fn state(&mut self, commit: ObjectId) -> Result<Option<State>> {
        let cache = self
            .cache
            .get_or_insert_with(|| load_cache(&self.cache_path));
        if let Some(s) = cache.get(&commit) {
            return Ok(Some(s.clone()));
        }
        let c = self
            .repo
            .find_commit(commit)
            .map_err(|e| Error::Other(format!("reading commit {commit}: {e}")))?;
        let msg = c
            .message_raw()
            .map_err(|e| Error::Other(format!("reading commit {commit}: {e}")))?;
        let state = check(self.trust.as_ref(), msg);
        if let Some(s) = &state {
            cache.added.insert(commit, s.clone());
            self.fresh.push((commit, s.clone()));
        }
        Ok(state)
    }

    /// Whether the event in `commit` may act for its actor: always without `requireSigned`, only when
    /// verified with it.
    pub fn authorized(&mut self, commit: ObjectId) -> Result<bool> {
        if !self.require {
            return Ok(true);
        }
        Ok(self.state(commit)?.is_some_and(|s| s.is_verified()))
    }

    /// Write what was verified since the last save to the cache (best effort: derived data).
    pub fn save(&mut self) {
        if self.fresh.is_empty() {
            return;
        }
        let mut text = String::with_capacity(self.fresh.len() * 100);
        for (c, s) in self.fresh.drain(..) {
            text.push_str(&format!("{c} {}\n", s.encode()));
        }
        if let Some(dir) = self.cache_path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.cache_path)
        {
            // One write per save: concurrent readers append whole lines.
            let _ = f.write_all(text.as_bytes());
        }
    }
}

impl Drop for Verifier<'_> {
    fn drop(&mut self) {
        self.save();
    }
}

/// The cache file: `<commit> <state>` per line; lines that do not parse (a torn write) are ignored.
fn load_cache(path: &std::path::Path) -> Cache {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut index = HashMap::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let Some(body) = line.strip_suffix('\n') else {
            continue;
        };
        if let Some((c, _)) = body.split_once(' ') {
            if let Ok(id) = ObjectId::from_hex(c.as_bytes()) {
                index.insert(id, start + c.len() + 1..start + body.len());
            }
        }
    }
    Cache {
        text,
        index,
        added: HashMap::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssh_key::{Algorithm, LineEnding, PrivateKey};

    fn key() -> PrivateKey {
        PrivateKey::random(&mut ssh_key::rand_core::OsRng, Algorithm::Ed25519).unwrap()
    }

    fn trust_for(persona: &str, k: &PrivateKey, options: &str) -> AllowedSigners {
        let public = k.public_key().to_openssh().unwrap();
        AllowedSigners::parse(&format!("{persona} {options}{public}\n"), "t").unwrap()
    }

    #[test]
    fn the_four_states() {
        let (alice, mallory) = (key(), key());
        let trust = trust_for("alice", &alice, "");
        let json = br#"{"actor":"alice"}"#;
        let time = "2026-11-25T00:00:00.000Z";
        let sig = crate::sign::keys::sign_with(&alice, json).unwrap();
        assert!(check_signature(Some(&trust), "alice", time, json, &sig).is_verified());
        assert!(matches!(
            check_signature(Some(&trust), "bob", time, json, &sig),
            State::KeyNotAllowed { .. }
        ));
        assert_eq!(
            check_signature(Some(&trust), "alice", time, br#"{"actor":"bob"}"#, &sig),
            State::BadSignature
        );
        assert_eq!(
            check_signature(Some(&trust), "alice", time, json, "AAAA"),
            State::BadSignature
        );
        let other = crate::sign::keys::sign_with(&mallory, json).unwrap();
        assert!(matches!(
            check_signature(Some(&trust), "alice", time, json, &other),
            State::KeyNotAllowed { .. }
        ));
        assert!(matches!(
            check_signature(None, "alice", time, json, &sig),
            State::KeyNotAllowed { .. }
        ));
        // Another namespace is not an event signature, even by the right key.
        let foreign = alice
            .sign("git", ssh_key::HashAlg::Sha512, json)
            .unwrap()
            .to_pem(LineEnding::LF)
            .unwrap();
        assert_eq!(
            check_signature(
                Some(&trust),
                "alice",
                time,
                json,
                &crate::sign::compact(&foreign)
            ),
            State::BadSignature
        );
        // Revoked before the event's time.
        let revoked = trust_for("alice", &alice, "valid-before=\"20260101\" ");
        assert!(matches!(
            check_signature(Some(&revoked), "alice", time, json, &sig),
            State::KeyNotAllowed { .. }
        ));
    }

    #[test]
    fn cache_lines_round_trip() {
        for s in [
            State::Verified {
                key: "SHA256:x".into(),
                persona: "alice".into(),
            },
            State::Unsigned,
            State::BadSignature,
            State::KeyNotAllowed {
                key: "SHA256:y".into(),
            },
        ] {
            assert_eq!(State::decode(&s.encode()), Some(s));
        }
        assert_eq!(State::decode("v onlykey"), None);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c");
        let (a, b) = (
            ObjectId::from_hex(&[b'a'; 40]).unwrap(),
            ObjectId::from_hex(&[b'b'; 40]).unwrap(),
        );
        // The last line was torn by a crash: ignored.
        std::fs::write(&path, format!("{a} v SHA256:x alice\n{b} u\n{b} ")).unwrap();
        let cache = load_cache(&path);
        assert_eq!(cache.get(&b), Some(State::Unsigned));
        assert!(cache.get(&a).unwrap().is_verified());
    }
}
