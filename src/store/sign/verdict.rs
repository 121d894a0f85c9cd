//! The verification state of an event: verified (by which key, for which persona), unsigned, a bad
//! signature, or a key the trust roots do not allow for its actor.
//!
//! Trust roots are `.jules/allowed_signers` as committed at the tip of [`trust_ref`] (the remote's `main`)
//! *now*: every event, old or new, is judged against today's file, with `valid-after`/`valid-before` read
//! against the event's own `time`. So removing a key's line revokes everything it signed, and a
//! `valid-before` keeps what it signed up to that instant (as the writer's clock tells it: the window is only
//! as honest as the key's holder, which is why removal is the revocation that holds).
//!
//! This module knows keys and trust files, not logs: `eventlog::signed` applies it to event commits (and
//! caches the results per commit).

use chrono::{DateTime, Utc};
use gix::ObjectId;
use serde::Serialize;
use ssh_key::{HashAlg, SshSig};

use super::trust::AllowedSigners;
use super::{CHECKPOINT_NAMESPACE, NAMESPACE, TRUST_FILE};
use crate::kit::error::{Error, Result};

/// What the signature of one event says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum State {
    /// Signed by `key` (its `SHA256:` fingerprint), which the trust roots allow for `persona`, the actor.
    Verified { key: String, persona: String },
    /// No signature, from an actor no key was listed for at its time (an event written before keys existed,
    /// or by a persona without one).
    Unsigned,
    /// No signature, although the trust roots list a key for `persona` (the actor) that existed at the
    /// event's time: what a writer without the persona's key produces, likely a forgery. (The time is the
    /// writer's word: a forger may backdate to look [`State::Unsigned`]; both are equally not verified.)
    UnsignedWithKey { persona: String },
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
            State::UnsignedWithKey { persona } => {
                format!("unsigned, but {persona} has a key: likely forged")
            }
            State::BadSignature => "bad signature".into(),
            State::KeyNotAllowed { key } => format!("key {key} not allowed for this actor"),
        }
    }

    pub(crate) fn encode(&self) -> String {
        match self {
            State::Verified { key, persona } => format!("v {key} {persona}"),
            // `u` was an unsigned state before `UnsignedWithKey` existed: such lines are read as unknown
            // (and judged again), so a cache of an older build never hides a likely forgery.
            State::Unsigned => "n".into(),
            State::UnsignedWithKey { persona } => format!("w {persona}"),
            State::BadSignature => "b".into(),
            State::KeyNotAllowed { key } => format!("k {key}"),
        }
    }

    pub(crate) fn decode(s: &str) -> Option<State> {
        let mut parts = s.split(' ');
        Some(match (parts.next()?, parts.next(), parts.next()) {
            ("v", Some(key), Some(persona)) => State::Verified {
                key: key.into(),
                persona: persona.into(),
            },
            ("n", None, None) => State::Unsigned,
            ("w", Some(persona), None) => State::UnsignedWithKey {
                persona: persona.into(),
            },
            ("b", None, None) => State::BadSignature,
            ("k", Some(key), None) => State::KeyNotAllowed { key: key.into() },
            _ => return None,
        })
    }
}

/// An event time (RFC 3339) as UTC; `None` when it does not parse.
pub fn parse_time(time: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(time)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// The state of `signature` (a trailer's value) over `json` by `actor` at `time`.
pub fn check_signature(
    trust: Option<&AllowedSigners>,
    actor: &str,
    time: &str,
    json: &[u8],
    signature: &str,
) -> State {
    check_in(trust, NAMESPACE, actor, parse_time(time), json, signature)
}

/// The state of what carries no signature, by `actor` at `at`, in `namespace`: [`State::UnsignedWithKey`]
/// when the trust roots list a key for the actor that existed then, else [`State::Unsigned`].
pub fn unsigned(
    trust: Option<&AllowedSigners>,
    actor: &str,
    namespace: &str,
    at: Option<DateTime<Utc>>,
) -> State {
    if trust.is_some_and(|t| t.has_key_for(actor, namespace, at)) {
        State::UnsignedWithKey {
            persona: actor.to_owned(),
        }
    } else {
        State::Unsigned
    }
}

/// The state of `signature` (compacted SSHSIG) over `msg` in `namespace`, by `actor` at `at`.
pub fn check_in(
    trust: Option<&AllowedSigners>,
    namespace: &str,
    actor: &str,
    at: Option<DateTime<Utc>>,
    msg: &[u8],
    signature: &str,
) -> State {
    let Ok(sig) = SshSig::from_pem(super::armor(signature)) else {
        return State::BadSignature;
    };
    let key = sig.public_key();
    // The key the signature names checks it; whether that key may speak for the actor comes after.
    if ssh_key::PublicKey::from(key.clone())
        .verify(namespace, msg, &sig)
        .is_err()
    {
        return State::BadSignature;
    }
    let fingerprint = key.fingerprint(HashAlg::Sha256).to_string();
    match trust.map(|t| t.allows(key, actor, namespace, at)) {
        Some(Ok(())) => State::Verified {
            key: fingerprint,
            persona: actor.to_owned(),
        },
        _ => State::KeyNotAllowed { key: fingerprint },
    }
}

/// The state of `signature` (compacted SSHSIG) over the checkpoint manifest bytes `manifest`: `Verified`
/// names the key and the principals of the trust line that lets it sign checkpoints now.
pub fn check_checkpoint(trust: Option<&AllowedSigners>, manifest: &[u8], signature: &str) -> State {
    let Ok(sig) = SshSig::from_pem(super::armor(signature)) else {
        return State::BadSignature;
    };
    let key = sig.public_key();
    if ssh_key::PublicKey::from(key.clone())
        .verify(CHECKPOINT_NAMESPACE, manifest, &sig)
        .is_err()
    {
        return State::BadSignature;
    }
    let fingerprint = key.fingerprint(HashAlg::Sha256).to_string();
    match trust.map(|t| t.allows_checkpoints(key, Utc::now())) {
        Some(Ok(principals)) => State::Verified {
            key: fingerprint,
            persona: principals,
        },
        _ => State::KeyNotAllowed { key: fingerprint },
    }
}

/// The trust roots of a repository: the allowed-signers file at [`trust_ref`] and its
/// blob id, or `None` when there is none.
pub fn load_trust(repo: &gix::Repository) -> Result<Option<(AllowedSigners, ObjectId)>> {
    let Some(id) = trust_blob(repo) else {
        return Ok(None);
    };
    Ok(Some((parse_trust(repo, id)?, id)))
}

/// Parse the trust file in blob `id`.
pub fn parse_trust(repo: &gix::Repository, id: ObjectId) -> Result<AllowedSigners> {
    let spec = format!("{}:{TRUST_FILE}", trust_ref(repo));
    let blob = repo
        .find_object(id)
        .map_err(|e| Error::wrap(format!("reading {spec}"), e))?;
    let text = std::str::from_utf8(&blob.data)
        .map_err(|_| Error::usage(format!("{spec} is not UTF-8")))?;
    AllowedSigners::parse(text, &spec)
}

/// The blob id of `.jules/allowed_signers` at `jules.trust.ref`, `None` when there is none.
///
/// Every read that shows signature states asks (a new trust file must count at once), so this is on the
/// warm path. Where the trust ref is a reference, the answer for the commit it points at is remembered in
/// `.git/jules/signatures/trust-blob` (`<commit> <blob id | none>`, derived data): a warm read resolves one
/// ref and reads one small file, and opens no object. Any other revision is resolved by git's rules. The memo
/// is keyed by the commit, not by the ref's name: the blob at a commit never changes, so whichever ref
/// [`trust_ref`] picks (the remote-tracking `main` once a fetch brings one, the local `main` before), a
/// remembered answer is right for the commit it names and a moved or different ref misses it.
pub fn trust_blob(repo: &gix::Repository) -> Option<ObjectId> {
    let spec = trust_ref(repo);
    let resolve = |rev: &str| {
        repo.rev_parse_single(format!("{rev}:{TRUST_FILE}").as_str())
            .ok()
            .map(|id| id.detach())
    };
    let target = repo
        .try_find_reference(spec.as_str())
        .ok()
        .flatten()
        .and_then(|r| r.target().try_id().map(|id| id.to_owned()));
    let Some(target) = target else {
        return resolve(&spec);
    };
    let memo = crate::kit::repo::jules_dir(repo)
        .join("signatures")
        .join("trust-blob");
    let remembered = std::fs::read_to_string(&memo).ok().and_then(|text| {
        let (at, blob) = text.trim_end().split_once(' ')?;
        if ObjectId::from_hex(at.as_bytes()).ok()? != target {
            return None;
        }
        match blob {
            "none" => Some(None),
            b => Some(Some(ObjectId::from_hex(b.as_bytes()).ok()?)),
        }
    });
    if let Some(blob) = remembered {
        return blob;
    }
    let blob = resolve(&target.to_string());
    let line = format!(
        "{target} {}\n",
        blob.map_or_else(|| "none".to_owned(), |b| b.to_string())
    );
    // Best effort, whole or not at all: a memo that cannot be written costs the resolution next time,
    // never an answer.
    if let Some(dir) = memo.parent() {
        let _ = std::fs::create_dir_all(dir);
        if let Ok(mut tmp) = tempfile::NamedTempFile::new_in(dir) {
            use std::io::Write;
            if tmp.write_all(line.as_bytes()).is_ok() {
                let _ = tmp.persist(&memo);
            }
        }
    }
    blob
}

/// `jules.trust.ref`; unset, the base branch `main` as the remote has it.
///
/// The default is the remote-tracking `refs/remotes/<remote>/main` (the coordination remote `jules.remote`,
/// then `origin`) when this clone has one, else the local `main`. The trust roots are what was reviewed onto
/// the shared base branch: a clone that fetched but did not pull (or whose local `main` lags, or was moved
/// by hand) must not judge mail by an older or private trust file. A repository without remote-tracking
/// refs (the remote itself, where the guard reads its own branch) uses its `main`. Every read asks this,
/// so it resolves at most three refs and reads no object.
pub fn trust_ref(repo: &gix::Repository) -> String {
    let config = repo.config_snapshot();
    if let Some(v) = config
        .string(crate::kit::settings::TRUST_REF)
        .map(|v| v.to_string())
        .filter(|v| !v.is_empty())
    {
        return v;
    }
    let remote = config
        .string("jules.remote")
        .map(|v| v.to_string())
        .filter(|v| !v.is_empty());
    let found = remote
        .iter()
        .map(String::as_str)
        .chain(["origin"])
        .map(|r| format!("refs/remotes/{r}/main"))
        .find(|name| matches!(repo.try_find_reference(name.as_str()), Ok(Some(_))));
    found.unwrap_or_else(|| "main".to_owned())
}

/// The cache directory (below `.git/jules/`) of folds under `jules.requireSigned`, which ignore unverified
/// events: `cache-signed/<trust file blob id>` (or `…/none`); `None` without `requireSigned`.
pub fn authority_cache(repo: &gix::Repository) -> Option<String> {
    if !require_signed(repo) {
        return None;
    }
    let blob = trust_blob(repo).map_or_else(|| "none".to_owned(), |id| id.to_string());
    Some(format!("cache-signed/{blob}"))
}

/// `jules.requireSigned`. A value that is not a boolean counts as true here (fail closed): opening the
/// repository already refused it with its name (`settings::validate`), so only a handle opened around that
/// check gets here with one.
pub fn require_signed(repo: &gix::Repository) -> bool {
    crate::kit::settings::require_signed(repo).unwrap_or(true)
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

    /// Issue 40: an unsigned event from a persona the trust roots list a key for, at a time that key existed,
    /// is named `unsigned_with_key`; before the key's `valid-after` (or with no key) it is legacy `unsigned`.
    #[test]
    fn unsigned_with_a_listed_key_is_named_apart_from_legacy_unsigned() {
        let alice = key();
        let at = parse_time("2026-11-25T00:00:00.000Z");
        let always = trust_for("alice", &alice, "");
        assert_eq!(
            unsigned(Some(&always), "alice", NAMESPACE, at),
            State::UnsignedWithKey {
                persona: "alice".into()
            }
        );
        assert_eq!(
            unsigned(Some(&always), "alice", NAMESPACE, at).describe(),
            "unsigned, but alice has a key: likely forged"
        );
        // Another persona's key, no trust file, another namespace only: plain unsigned.
        assert_eq!(
            unsigned(Some(&always), "bob", NAMESPACE, at),
            State::Unsigned
        );
        assert_eq!(unsigned(None, "alice", NAMESPACE, at), State::Unsigned);
        let other_ns = trust_for("alice", &alice, "namespaces=\"git\" ");
        assert_eq!(
            unsigned(Some(&other_ns), "alice", NAMESPACE, at),
            State::Unsigned
        );
        // Written before the key's valid-after: legacy. After it (or revoked since): likely forged.
        let later = trust_for("alice", &alice, "valid-after=\"20270101\" ");
        assert_eq!(
            unsigned(Some(&later), "alice", NAMESPACE, at),
            State::Unsigned
        );
        let earlier = trust_for(
            "alice",
            &alice,
            "valid-after=\"20260101\",valid-before=\"20260201\" ",
        );
        assert!(matches!(
            unsigned(Some(&earlier), "alice", NAMESPACE, at),
            State::UnsignedWithKey { .. }
        ));
        // No readable time: a listed key counts.
        assert!(matches!(
            unsigned(Some(&later), "alice", NAMESPACE, None),
            State::UnsignedWithKey { .. }
        ));
    }

    #[test]
    fn the_four_states() {
        let (alice, mallory) = (key(), key());
        let trust = trust_for("alice", &alice, "");
        let json = br#"{"actor":"alice"}"#;
        let time = "2026-11-25T00:00:00.000Z";
        let sig = crate::store::sign::keys::sign_with(&alice, json).unwrap();
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
        let other = crate::store::sign::keys::sign_with(&mallory, json).unwrap();
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
                &crate::store::sign::compact(&foreign)
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

    /// Run git in `dir`, away from the user's configuration.
    fn git(dir: &std::path::Path, args: &[&str]) {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    /// A repository with `main` holding `trust` as the trust file (or no trust file), made by git.
    fn repo_with_trust(dir: &std::path::Path, trust: Option<&str>) -> gix::Repository {
        git(dir, &["init", "-q", "-b", "main"]);
        git(dir, &["config", "user.name", "t"]);
        git(dir, &["config", "user.email", "t@example.com"]);
        commit_trust(dir, trust);
        gix::open(dir).unwrap()
    }

    /// Commit `trust` (or a commit without it) on the checked-out branch.
    fn commit_trust(dir: &std::path::Path, trust: Option<&str>) {
        std::fs::create_dir_all(dir.join(".jules")).unwrap();
        match trust {
            Some(text) => {
                std::fs::write(dir.join(TRUST_FILE), text).unwrap();
                git(dir, &["add", TRUST_FILE]);
            }
            None => {
                std::fs::write(dir.join("README"), "x").unwrap();
                git(dir, &["add", "README"]);
            }
        }
        git(dir, &["commit", "-q", "--allow-empty", "-m", "trust"]);
    }

    fn blob_at(repo: &gix::Repository, rev: &str) -> ObjectId {
        repo.rev_parse_single(format!("{rev}:{TRUST_FILE}").as_str())
            .unwrap()
            .detach()
    }

    /// A checkpoint manifest signed by a key whose trust line names the checkpoint namespace is verified,
    /// naming that line's principals; signed by a key only allowed for events, it is not.
    #[test]
    fn a_checkpoint_signed_by_a_checkpoint_key_is_verified_with_its_principals() {
        let (signer, other) = (key(), key());
        let line = |k: &PrivateKey, who: &str, ns: &str| {
            format!(
                "{who} namespaces=\"{ns}\" {}\n",
                k.public_key().to_openssh().unwrap()
            )
        };
        let text =
            line(&signer, "ops,curator", CHECKPOINT_NAMESPACE) + &line(&other, "bob", NAMESPACE);
        let trust = AllowedSigners::parse(&text, "t").unwrap();
        let manifest = b"checkpoint manifest";
        let good =
            crate::store::sign::keys::sign_in(&signer, CHECKPOINT_NAMESPACE, manifest).unwrap();
        let State::Verified {
            key: fingerprint,
            persona,
        } = check_checkpoint(Some(&trust), manifest, &good)
        else {
            panic!("verified")
        };
        assert_eq!(persona, "ops,curator");
        assert_eq!(
            fingerprint,
            signer.public_key().fingerprint(HashAlg::Sha256).to_string()
        );
        let by_other =
            crate::store::sign::keys::sign_in(&other, CHECKPOINT_NAMESPACE, manifest).unwrap();
        assert!(matches!(
            check_checkpoint(Some(&trust), manifest, &by_other),
            State::KeyNotAllowed { .. }
        ));
        assert!(matches!(
            check_checkpoint(None, manifest, &good),
            State::KeyNotAllowed { .. }
        ));
        assert_eq!(
            check_checkpoint(Some(&trust), b"another manifest", &good),
            State::BadSignature
        );
    }

    /// The trust roots are the file on `main`, with its blob id; none without the file. A new commit of the
    /// file counts at once, whatever the memo of the previous commit says.
    #[test]
    fn trust_is_read_from_main_and_a_new_commit_of_it_counts_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let alice = key();
        let first = format!("alice {}\n", alice.public_key().to_openssh().unwrap());
        let repo = repo_with_trust(dir.path(), Some(&first));
        let (trust, blob) = load_trust(&repo).unwrap().expect("a trust file on main");
        assert_eq!(blob, blob_at(&repo, "main"));
        assert!(trust.has_key_for("alice", NAMESPACE, None));
        // Read twice: the second answer comes from the memo, and is the same.
        assert_eq!(trust_blob(&repo), Some(blob));

        let bob = key();
        commit_trust(
            dir.path(),
            Some(&format!("bob {}\n", bob.public_key().to_openssh().unwrap())),
        );
        let repo = gix::open(dir.path()).unwrap();
        let moved = blob_at(&repo, "main");
        assert_ne!(moved, blob);
        assert_eq!(trust_blob(&repo), Some(moved));
        let (trust, _) = load_trust(&repo).unwrap().unwrap();
        assert!(trust.has_key_for("bob", NAMESPACE, None));
        assert!(!trust.has_key_for("alice", NAMESPACE, None));

        let bare = tempfile::tempdir().unwrap();
        let repo = repo_with_trust(bare.path(), None);
        assert!(load_trust(&repo).unwrap().is_none());
    }

    /// An empty `jules.trust.ref` or `jules.remote` is unset: the default applies (the remote-tracking
    /// `main` of `origin` when there is one, else `main`).
    #[test]
    fn empty_trust_settings_fall_back_to_the_default_ref() {
        let dir = tempfile::tempdir().unwrap();
        let repo = repo_with_trust(dir.path(), None);
        let set = |key: &str, value: &str| git(dir.path(), &["config", key, value]);
        set("jules.trust.ref", "");
        assert_eq!(trust_ref(&gix::open(dir.path()).unwrap()), "main");
        set("jules.trust.ref", "refs/heads/trust");
        assert_eq!(
            trust_ref(&gix::open(dir.path()).unwrap()),
            "refs/heads/trust"
        );
        set("jules.trust.ref", "");
        let head = repo.head_id().unwrap().detach();
        for remote in ["origin", "coord"] {
            crate::store::refs::cas(
                &repo,
                &format!("refs/remotes/{remote}/main"),
                None,
                head,
                "t",
            )
            .unwrap();
        }
        set("jules.remote", "");
        assert_eq!(
            trust_ref(&gix::open(dir.path()).unwrap()),
            "refs/remotes/origin/main"
        );
        set("jules.remote", "coord");
        assert_eq!(
            trust_ref(&gix::open(dir.path()).unwrap()),
            "refs/remotes/coord/main"
        );
    }

    /// Folds under `jules.requireSigned` are cached per trust file: `cache-signed/<blob id>`, or
    /// `cache-signed/none` without one; without `requireSigned` there is no such cache.
    #[test]
    fn the_signed_only_cache_is_named_by_the_trust_file() {
        let dir = tempfile::tempdir().unwrap();
        let alice = key();
        let repo = repo_with_trust(
            dir.path(),
            Some(&format!(
                "alice {}\n",
                alice.public_key().to_openssh().unwrap()
            )),
        );
        assert_eq!(authority_cache(&repo), None);
        git(dir.path(), &["config", "jules.requireSigned", "true"]);
        let repo = gix::open(dir.path()).unwrap();
        assert_eq!(
            authority_cache(&repo),
            Some(format!("cache-signed/{}", blob_at(&repo, "main")))
        );
        let other = tempfile::tempdir().unwrap();
        repo_with_trust(other.path(), None);
        git(other.path(), &["config", "jules.requireSigned", "true"]);
        assert_eq!(
            authority_cache(&gix::open(other.path()).unwrap()),
            Some("cache-signed/none".to_owned())
        );
    }
}
