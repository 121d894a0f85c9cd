//! Verification of event commits under the repository's trust roots (`crate::store::sign` for the keys, the
//! trust file and the states), with the per-commit cache.
//!
//! Verification runs only where it means something: a repository with no trust file and no
//! `jules.requireSigned` has no verifier ([`Verifier::open`] gives `None`), and its reads cost what they
//! did. Results are cached per commit under `.git/jules/signatures/<trust-file blob id>/{shown,log}` (derived data:
//! a new trust file starts a new cache; deleting the directory changes no answer).

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use gix::ObjectId;

use super::event::{decode_event, parse_message, Framed};
use crate::kit::error::{Error, Result};
use crate::store::sign::verdict::{
    check_signature, parse_trust, require_signed, trust_blob, State,
};
use crate::store::sign::AllowedSigners;

/// The state of the event framed by the commit message `msg`, under `trust` (`None`: no trust file, so no
/// key is allowed); `None` when `msg` is not a valid event (other checks name it).
pub fn check(trust: Option<&AllowedSigners>, msg: &[u8]) -> Option<State> {
    check_event(trust, msg).map(|(_, _, s)| s)
}

/// [`check`], with the event's id and actor (for messages that name it).
pub fn check_event(
    trust: Option<&AllowedSigners>,
    msg: &[u8],
) -> Option<(super::EventId, String, State)> {
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
        None => crate::store::sign::verdict::unsigned(
            trust,
            &event.actor,
            crate::store::sign::NAMESPACE,
            crate::store::sign::verdict::parse_time(&event.time),
        ),
        Some(sig) => check_signature(trust, &event.actor, &event.time, json, sig),
    };
    Some((id, event.actor, state))
}

/// Verifies events of one repository under its trust roots, with the cache.
pub struct Verifier<'r> {
    repo: &'r gix::Repository,
    /// The trust file's blob id; `None`: there is none.
    trust_id: Option<ObjectId>,
    /// The parsed trust file, read on the first state the cache does not hold: a warm read, which finds
    /// every state in the cache, never parses it.
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
    /// A verifier for reads that show some events (listings, a message, a thread): `None` when the
    /// repository has no trust file and does not require signatures (nothing to verify against, and reads
    /// stay as cheap as before). Its cache holds only what reads showed, so a warm listing loads a cache
    /// the size of what it lists, not of the log.
    pub fn open(repo: &'r gix::Repository) -> Result<Option<Self>> {
        Self::open_in(repo, "shown")
    }

    /// A verifier for passes over a whole log (`log fsck`, folds under `jules.requireSigned`), with a cache
    /// of its own.
    pub fn open_log(repo: &'r gix::Repository) -> Result<Option<Self>> {
        Self::open_in(repo, "log")
    }

    /// A verifier under the trust file `trust` (blob `id`) that requires signatures whatever the
    /// configuration says: a signed checkpoint is the fold a reader under `jules.requireSigned` with that
    /// trust file computes. It shares the whole-log cache of that trust file.
    pub fn with_trust(repo: &'r gix::Repository, trust: AllowedSigners, id: ObjectId) -> Self {
        Verifier {
            repo,
            trust_id: Some(id),
            trust: Some(trust),
            require: true,
            cache_path: crate::kit::repo::jules_dir(repo)
                .join("signatures")
                .join(id.to_string())
                .join("log"),
            cache: None,
            fresh: Vec::new(),
        }
    }

    fn open_in(repo: &'r gix::Repository, cache: &str) -> Result<Option<Self>> {
        let require = require_signed(repo);
        let trust_id = trust_blob(repo);
        if trust_id.is_none() && !require {
            return Ok(None);
        }
        let name = trust_id.map_or_else(|| "none".to_owned(), |id| id.to_string());
        Ok(Some(Verifier {
            repo,
            trust_id,
            trust: None,
            require,
            cache_path: crate::kit::repo::jules_dir(repo)
                .join("signatures")
                .join(name)
                .join(cache),
            cache: None,
            fresh: Vec::new(),
        }))
    }

    /// Whether `jules.requireSigned` is set: unverified events carry no authority.
    pub fn require_signed(&self) -> bool {
        self.require
    }

    /// The directory of this verifier's caches (`.git/jules/signatures/<trust file blob id>`): derived data
    /// keyed by the trust file lives there.
    pub fn cache_dir(&self) -> Option<&std::path::Path> {
        self.cache_path.parent()
    }

    /// The state of the event in `commit` (cached); `None` when the commit is not a valid event.
    pub fn state(&mut self, commit: ObjectId) -> Result<Option<State>> {
        let cache = self
            .cache
            .get_or_insert_with(|| load_cache(&self.cache_path));
        if let Some(s) = cache.get(&commit) {
            return Ok(Some(s));
        }
        if let (None, Some(id)) = (&self.trust, self.trust_id) {
            self.trust = Some(parse_trust(self.repo, id)?);
        }
        let cache = self
            .cache
            .get_or_insert_with(|| load_cache(&self.cache_path));
        let c = self
            .repo
            .find_commit(commit)
            .map_err(|e| Error::wrap(format!("reading commit {commit}"), e))?;
        let msg = c
            .message_raw()
            .map_err(|e| Error::wrap(format!("reading commit {commit}"), e))?;
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

    #[test]
    fn cache_lines_round_trip() {
        for s in [
            State::Verified {
                key: "SHA256:x".into(),
                persona: "alice".into(),
            },
            State::Unsigned,
            State::UnsignedWithKey {
                persona: "bob".into(),
            },
            State::BadSignature,
            State::KeyNotAllowed {
                key: "SHA256:y".into(),
            },
        ] {
            assert_eq!(State::decode(&s.encode()), Some(s));
        }
        assert_eq!(State::decode("v onlykey"), None);
        // `u`, an unsigned state of a build before `unsigned_with_key`, is judged again.
        assert_eq!(State::decode("u"), None);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c");
        let (a, b) = (
            ObjectId::from_hex(&[b'a'; 40]).unwrap(),
            ObjectId::from_hex(&[b'b'; 40]).unwrap(),
        );
        // The last line was torn by a crash: ignored.
        std::fs::write(&path, format!("{a} v SHA256:x alice\n{b} n\n{b} ")).unwrap();
        let cache = load_cache(&path);
        assert_eq!(cache.get(&b), Some(State::Unsigned));
        assert!(cache.get(&a).unwrap().is_verified());
    }

    use crate::store::eventlog::test_support::signed_event_message;
    use ssh_key::{rand_core::OsRng, Algorithm, PrivateKey};

    /// A bare repository with `trust` committed as `.jules/allowed_signers` on `main` (none: no trust file),
    /// and `jules.requireSigned` when `require`.
    fn repo_with(
        dir: &std::path::Path,
        trust: Option<&str>,
        require: bool,
    ) -> (gix::Repository, Option<ObjectId>) {
        let path = dir.join("r.git");
        let repo = gix::init_bare(&path).unwrap();
        let blob = trust.map(|text| crate::store::sign::commit_trust_on_main(&repo, text));
        if require {
            let config = path.join("config");
            let mut text = std::fs::read_to_string(&config).unwrap();
            text.push_str("[jules]\n\trequireSigned = true\n");
            std::fs::write(&config, text).unwrap();
        }
        (gix::open(&path).unwrap(), blob)
    }

    fn trust_line(persona: &str, key: &PrivateKey) -> String {
        format!(
            "{persona} namespaces=\"git-jules-event\" {}\n",
            key.public_key().to_openssh().unwrap()
        )
    }

    /// An event's state under the trust roots: verified by a key allowed for its actor; a good signature by
    /// a key allowed for someone else; a signature over other bytes; no signature from an actor who has a
    /// key, or has none. A message that is not a valid event has no state.
    #[test]
    fn an_event_is_judged_by_its_signature_against_the_trust_roots() {
        let key = PrivateKey::random(&mut OsRng, Algorithm::Ed25519).unwrap();
        let trust = AllowedSigners::parse(&trust_line("alice", &key), "t").unwrap();
        let fingerprint = key.public_key().fingerprint(Default::default()).to_string();

        let (id, msg) = signed_event_message("alice", Some(&key), None);
        assert_eq!(
            check_event(Some(&trust), &msg),
            Some((
                id,
                "alice".to_owned(),
                State::Verified {
                    key: fingerprint.clone(),
                    persona: "alice".into()
                }
            ))
        );
        assert!(check(Some(&trust), &msg).unwrap().is_verified());
        assert_eq!(
            check(None, &msg),
            Some(State::KeyNotAllowed {
                key: fingerprint.clone()
            })
        );
        let (_, bob_signed) = signed_event_message("bob", Some(&key), None);
        assert_eq!(
            check(Some(&trust), &bob_signed),
            Some(State::KeyNotAllowed { key: fingerprint })
        );
        let (_, other_bytes) = signed_event_message("alice", Some(&key), Some(b"something else"));
        assert_eq!(check(Some(&trust), &other_bytes), Some(State::BadSignature));
        let (_, alice_unsigned) = signed_event_message("alice", None, None);
        assert_eq!(
            check(Some(&trust), &alice_unsigned),
            Some(State::UnsignedWithKey {
                persona: "alice".into()
            })
        );
        let (id, bob_unsigned) = signed_event_message("bob", None, None);
        assert_eq!(
            check_event(Some(&trust), &bob_unsigned),
            Some((id, "bob".to_owned(), State::Unsigned))
        );
        assert_eq!(
            check(Some(&trust), &super::super::event::merge_message(3)),
            None
        );
        let forged = String::from_utf8(msg)
            .unwrap()
            .replacen("\"n\":1", "\"n\":2", 1);
        assert_eq!(check(Some(&trust), forged.as_bytes()), None, "id mismatch");
    }

    /// Without a trust file and without `jules.requireSigned` there is nothing to verify against: no
    /// verifier. With either, one, whose cache lives under the trust file's blob id (`none` without one),
    /// a file for reads that show events and another for passes over a whole log.
    #[test]
    fn a_verifier_exists_only_with_trust_roots_or_required_signatures() {
        let dir = tempfile::tempdir().unwrap();
        let (repo, _) = repo_with(dir.path(), None, false);
        assert!(Verifier::open(&repo).unwrap().is_none());
        assert!(Verifier::open_log(&repo).unwrap().is_none());

        let dir = tempfile::tempdir().unwrap();
        let (repo, _) = repo_with(dir.path(), None, true);
        let v = Verifier::open(&repo)
            .unwrap()
            .expect("signatures are required");
        assert!(v.require_signed());
        let signatures = crate::kit::repo::jules_dir(&repo).join("signatures");
        assert_eq!(v.cache_dir(), Some(signatures.join("none").as_path()));
        assert_eq!(v.cache_path, signatures.join("none/shown"));

        let key = PrivateKey::random(&mut OsRng, Algorithm::Ed25519).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (repo, blob) = repo_with(dir.path(), Some(&trust_line("alice", &key)), false);
        let blob = blob.unwrap().to_string();
        let signatures = crate::kit::repo::jules_dir(&repo).join("signatures");
        let v = Verifier::open(&repo).unwrap().expect("a trust file");
        assert!(!v.require_signed());
        assert_eq!(v.cache_path, signatures.join(&blob).join("shown"));
        let v = Verifier::open_log(&repo).unwrap().unwrap();
        assert_eq!(v.cache_path, signatures.join(&blob).join("log"));
        let trust = AllowedSigners::parse(&trust_line("alice", &key), "t").unwrap();
        let id = ObjectId::from_hex(&[b'7'; 40]).unwrap();
        let v = Verifier::with_trust(&repo, trust, id);
        assert!(v.require_signed());
        assert_eq!(v.cache_path, signatures.join(id.to_string()).join("log"));
    }

    /// The verifier's states, their cache (written on save and on drop, one line per state, nothing when
    /// nothing is new; read back before anything is verified again), and `authorized`: everything without
    /// `jules.requireSigned`, only a verified event with it.
    #[test]
    fn states_are_cached_and_authority_follows_require_signed() {
        let key = PrivateKey::random(&mut OsRng, Algorithm::Ed25519).unwrap();
        let line = trust_line("alice", &key);
        for require in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let (repo, _) = repo_with(dir.path(), Some(&line), require);
            let commit = |msg: &[u8]| {
                let sig = crate::kit::repo::committer(&repo);
                crate::store::loose::write(
                    &repo,
                    &gix::objs::Commit {
                        tree: crate::store::loose::empty_tree(&repo).unwrap(),
                        parents: Default::default(),
                        author: sig.clone(),
                        committer: sig,
                        encoding: None,
                        message: msg.into(),
                        extra_headers: Vec::new(),
                    },
                )
                .unwrap()
            };
            let signed = commit(&signed_event_message("alice", Some(&key), None).1);
            let unsigned = commit(&signed_event_message("alice", None, None).1);
            let join = commit(&super::super::event::merge_message(2));

            let mut v = Verifier::open(&repo).unwrap().unwrap();
            let path = v.cache_path.clone();
            v.save();
            assert!(!path.exists(), "nothing verified, nothing written");
            assert!(v.state(signed).unwrap().unwrap().is_verified());
            assert_eq!(
                v.state(unsigned).unwrap(),
                Some(State::UnsignedWithKey {
                    persona: "alice".into()
                })
            );
            assert_eq!(v.state(join).unwrap(), None);
            assert!(v.authorized(signed).unwrap());
            assert_eq!(v.authorized(unsigned).unwrap(), !require);
            assert_eq!(v.authorized(join).unwrap(), !require);
            drop(v);
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(
                text.lines().map(|l| &l[..40]).collect::<Vec<_>>(),
                [signed.to_string(), unsigned.to_string()],
                "one line per state, written on drop"
            );

            // Read back from the cache: a state written there by hand is what the next verifier answers.
            std::fs::write(&path, format!("{signed} n\n")).unwrap();
            let mut v = Verifier::open(&repo).unwrap().unwrap();
            assert_eq!(v.state(signed).unwrap(), Some(State::Unsigned));
            assert_eq!(v.authorized(signed).unwrap(), !require);
            v.save();
            assert_eq!(
                std::fs::read_to_string(&path).unwrap(),
                format!("{signed} n\n"),
                "a state read from the cache is not written again"
            );
        }
    }
}
