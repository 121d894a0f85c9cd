//! A persona's signing key: where it is found, how one is made, how an event is signed with it.
//!
//! Lookup, first hit wins: the key the frontend pinned on its repository handle
//! ([`crate::kit::repo::Overrides::signing_key`]: the CLI passes `JULES_SIGNING_KEY`, the library reads no
//! environment; the MCP server and `web --as` pin their persona's key, [`pinned_key`]), then `jules.persona.<actor>.signingKey`,
//! then `jules.signingKey`. No key configured: the event is written unsigned, and nothing is read (an
//! unsigned repository pays two configuration look-ups per append). A configured key that cannot be used
//! (missing, encrypted, not ed25519, readable by others) fails the write: silently writing unsigned
//! events under `requireSigned` would be the trap git's own SSH signing sets.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ssh_key::{Algorithm, HashAlg, LineEnding, PrivateKey};

use super::{CHECKPOINT_NAMESPACE, NAMESPACE};
use crate::kit::error::{Error, ErrorKind, Remedy, Result};

/// Keys already read, by path: a long-running frontend signs many events with one key. A cache, not a
/// switch: which key signs is decided per call by [`key_for`].
static LOADED: Mutex<Option<HashMap<PathBuf, PrivateKey>>> = Mutex::new(None);

/// The key a frontend that acts as one persona (the MCP server, `web --as`) pins on the repository handle it
/// serves with ([`crate::kit::repo::Overrides::signing_key`]): found and checked now, so a bad setup fails at
/// start, and every event written through that handle is signed with it and no other. `None`: the persona
/// has no key (its events are unsigned).
pub fn pinned_key(repo: &gix::Repository, persona: &str) -> Result<Option<PathBuf>> {
    let Some(source) = key_for(repo, persona) else {
        return Ok(None);
    };
    load(source.path())?;
    Ok(Some(source.path().to_path_buf()))
}

/// Where a persona's key was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// Pinned on the repository handle by the frontend (`JULES_SIGNING_KEY`, or the persona an MCP
    /// server or `web --as` acts as).
    Session(PathBuf),
    /// `jules.persona.<name>.signingKey` or `jules.signingKey`: the key and the variable.
    Config(PathBuf, String),
}

impl KeySource {
    pub fn path(&self) -> &Path {
        match self {
            KeySource::Session(p) | KeySource::Config(p, _) => p,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            KeySource::Session(p) => format!("{} (JULES_SIGNING_KEY)", p.display()),
            KeySource::Config(p, var) => format!("{} ({var})", p.display()),
        }
    }
}

/// The key `actor` signs with, if one is configured.
pub fn key_for(repo: &gix::Repository, actor: &str) -> Option<KeySource> {
    let config = repo.config_snapshot();
    if let Some(p) = config.string(crate::kit::repo::SESSION_SIGNING_KEY) {
        let p = p.to_string();
        if !p.is_empty() {
            return Some(KeySource::Session(expand_home(&p)));
        }
    }
    let persona_var = format!("jules.persona.{actor}.signingKey");
    for var in [persona_var.as_str(), "jules.signingKey"] {
        if let Some(v) = config.string(var) {
            let v = v.to_string();
            if !v.is_empty() {
                return Some(KeySource::Config(expand_home(&v), var.to_owned()));
            }
        }
    }
    None
}

/// `~/x` as git reads its paths; HOME is the one variable git itself honours here.
fn expand_home(v: &str) -> PathBuf {
    match (v.strip_prefix("~/"), gix::path::env::home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(v),
    }
}

/// Read an OpenSSH ed25519 private key, refusing what ssh itself refuses (a file others can read) and
/// what a sandbox cannot use (a passphrase).
pub fn load(path: &Path) -> Result<PrivateKey> {
    let meta = std::fs::metadata(path)
        .map_err(|e| Error::Refused(format!("signing key {}: {e}", path.display())))?;
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(Error::Refused(format!(
            "signing key {} is readable by others (mode {:o}): chmod 600 it; a persona's key is its alone",
            path.display(),
            meta.permissions().mode() & 0o777
        )));
    }
    let key = PrivateKey::read_openssh_file(path)
        .map_err(|e| Error::Refused(format!("signing key {}: {e}", path.display())))?;
    if key.is_encrypted() {
        return Err(Error::Refused(format!(
            "signing key {} has a passphrase; git-jules signs unattended and needs an unencrypted key",
            path.display()
        )));
    }
    if key.algorithm() != Algorithm::Ed25519 {
        return Err(Error::Refused(format!(
            "signing key {} is {}, not ed25519",
            path.display(),
            key.algorithm()
        )));
    }
    Ok(key)
}

/// The SSHSIG of `canonical` (an event's canonical JSON) by `actor`'s key, compacted for the trailer;
/// `None` when no key is configured.
pub fn sign_event(repo: &gix::Repository, actor: &str, canonical: &[u8]) -> Result<Option<String>> {
    sign_as(repo, actor, super::NAMESPACE, canonical)
}

/// The SSHSIG of a series version's signed payload (`crate::store::version_refs::signed_payload`) by `persona`'s key
/// in [`super::SERIES_NAMESPACE`], compacted for the commit's trailer; `None` when no key is configured.
pub fn sign_series(
    repo: &gix::Repository,
    persona: &str,
    payload: &[u8],
) -> Result<Option<String>> {
    sign_as(repo, persona, super::SERIES_NAMESPACE, payload)
}

/// `bytes` signed in `namespace` by `actor`'s key (loaded once per process and path), compacted; `None`
/// when no key is configured for `actor`.
fn sign_as(
    repo: &gix::Repository,
    actor: &str,
    namespace: &str,
    bytes: &[u8],
) -> Result<Option<String>> {
    let Some(source) = key_for(repo, actor) else {
        return Ok(None);
    };
    let path = source.path().to_path_buf();
    let mut loaded = LOADED.lock().unwrap_or_else(|p| p.into_inner());
    let keys = loaded.get_or_insert_with(HashMap::new);
    if !keys.contains_key(&path) {
        keys.insert(path.clone(), load(&path)?);
    }
    Ok(Some(sign_in(&keys[&path], namespace, bytes)?))
}

/// The key checkpoints are signed with: the key pinned on the handle (`JULES_SIGNING_KEY`), else
/// `jules.signingKey`.
/// A checkpoint speaks for no persona, so no persona's own key is looked up for it.
pub fn checkpoint_key(repo: &gix::Repository) -> Option<KeySource> {
    let config = repo.config_snapshot();
    if let Some(p) = config.string(crate::kit::repo::SESSION_SIGNING_KEY) {
        let p = p.to_string();
        if !p.is_empty() {
            return Some(KeySource::Session(expand_home(&p)));
        }
    }
    let v = config.string("jules.signingKey")?.to_string();
    (!v.is_empty()).then(|| KeySource::Config(expand_home(&v), "jules.signingKey".to_owned()))
}

/// A checkpoint manifest's signature: the compacted SSHSIG of `manifest` in [`CHECKPOINT_NAMESPACE`] by the
/// [`checkpoint_key`], with the key's `SHA256:` fingerprint; `None` when no key is configured.
pub fn sign_checkpoint(
    repo: &gix::Repository,
    manifest: &[u8],
) -> Result<Option<(String, ssh_key::public::KeyData)>> {
    let Some(source) = checkpoint_key(repo) else {
        return Ok(None);
    };
    let key = load(source.path())?;
    let sig = sign_in(&key, CHECKPOINT_NAMESPACE, manifest)?;
    Ok(Some((sig, key.public_key().key_data().clone())))
}

/// The compacted SSHSIG of `msg` in [`NAMESPACE`].
pub fn sign_with(key: &PrivateKey, msg: &[u8]) -> Result<String> {
    sign_in(key, NAMESPACE, msg)
}

/// The compacted SSHSIG of `msg` in `namespace`.
pub fn sign_in(key: &PrivateKey, namespace: &str, msg: &[u8]) -> Result<String> {
    let sig = key
        .sign(namespace, HashAlg::Sha512, msg)
        .map_err(|e| Error::wrap("signing", e))?;
    let pem = sig
        .to_pem(LineEnding::LF)
        .map_err(|e| Error::wrap("encoding a signature", e))?;
    Ok(super::compact(&pem))
}

/// What `keys new` made.
#[derive(Debug, Clone)]
pub struct NewKey {
    pub path: PathBuf,
    /// `ssh-ed25519 AAAA… <persona>`: the public key line.
    pub public: String,
    /// `<persona> ssh-ed25519 AAAA…`: the line for `.jules/allowed_signers`.
    pub allowed_signers: String,
    /// `SHA256:…`.
    pub fingerprint: String,
}

/// Make a new ed25519 key for `persona` at `path` (mode 0600, created exclusively; the public key beside it
/// as `<path>.pub`, as ssh-keygen does).
pub fn generate(persona: &str, path: &Path) -> Result<NewKey> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut key = PrivateKey::random(&mut ssh_key::rand_core::OsRng, Algorithm::Ed25519)
        .map_err(|e| Error::wrap("making a key", e))?;
    key.set_comment(persona);
    let text = key
        .to_openssh(LineEnding::LF)
        .map_err(|e| Error::wrap("encoding a key", e))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => Error::needs(
                ErrorKind::Usage,
                format!("{} exists; not overwriting a key", path.display()),
                Remedy::OtherPath,
            ),
            _ => Error::io(format!("writing {}", path.display()), e),
        })?;
    file.write_all(text.as_bytes())
        .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
    let public = key
        .public_key()
        .to_openssh()
        .map_err(|e| Error::wrap("encoding a key", e))?;
    let mut pub_path = path.as_os_str().to_owned();
    pub_path.push(".pub");
    std::fs::write(&pub_path, format!("{public}\n"))
        .map_err(|e| Error::io(format!("writing {}", PathBuf::from(&pub_path).display()), e))?;
    let bare = public.rsplit_once(' ').map_or(public.as_str(), |(k, _)| k);
    Ok(NewKey {
        path: path.to_path_buf(),
        allowed_signers: format!("{persona} {bare}"),
        fingerprint: key.public_key().fingerprint(HashAlg::Sha256).to_string(),
        public,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sign::verdict::{check_in, State};
    use crate::store::sign::SERIES_NAMESPACE;

    /// Set `key` to `value` in the repository at `dir` (by git, away from the user's configuration).
    fn set(dir: &Path, key: &str, value: &str) {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["config", key, value])
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }

    fn trust(persona: &str, key: &NewKey) -> crate::store::sign::trust::AllowedSigners {
        crate::store::sign::trust::AllowedSigners::parse(
            &format!("{persona} {}\n", key.public),
            "t",
        )
        .unwrap()
    }

    /// A persona signs with `jules.persona.<name>.signingKey`, anyone else with `jules.signingKey`; an
    /// empty value is unset; a key pinned for the session (`JULES_SIGNING_KEY`) wins over both. Events and
    /// series versions are signed in their own namespaces.
    #[test]
    fn the_configured_key_signs_in_its_namespace() {
        let dir = tempfile::tempdir().unwrap();
        gix::init(dir.path()).unwrap();
        let (alice_path, shared_path) = (dir.path().join("k/alice"), dir.path().join("k/shared"));
        let alice = generate("alice", &alice_path).unwrap();
        let shared = generate("shared", &shared_path).unwrap();
        let open = || gix::open(dir.path()).unwrap();

        assert_eq!(sign_event(&open(), "alice", b"e").unwrap(), None);
        assert_eq!(pinned_key(&open(), "alice").unwrap(), None);
        assert!(sign_checkpoint(&open(), b"m").unwrap().is_none());

        set(
            dir.path(),
            "jules.persona.alice.signingKey",
            alice_path.to_str().unwrap(),
        );
        set(dir.path(), "jules.signingKey", "");
        let repo = open();
        let source = key_for(&repo, "alice").unwrap();
        assert_eq!(
            source.describe(),
            format!("{} (jules.persona.alice.signingKey)", alice_path.display())
        );
        assert_eq!(
            pinned_key(&repo, "alice").unwrap(),
            Some(alice_path.clone())
        );
        assert_eq!(key_for(&repo, "bob"), None);
        assert_eq!(checkpoint_key(&repo), None);
        let sig = sign_event(&repo, "alice", b"e").unwrap().unwrap();
        let alice_trust = trust("alice", &alice);
        assert!(check_in(Some(&alice_trust), NAMESPACE, "alice", None, b"e", &sig).is_verified());
        let series = sign_series(&repo, "alice", b"v").unwrap().unwrap();
        assert_eq!(
            check_in(Some(&alice_trust), NAMESPACE, "alice", None, b"v", &series),
            State::BadSignature
        );
        assert!(check_in(
            Some(&alice_trust),
            SERIES_NAMESPACE,
            "alice",
            None,
            b"v",
            &series
        )
        .is_verified());
        assert_eq!(sign_event(&repo, "bob", b"e").unwrap(), None);

        // An empty persona key falls through to `jules.signingKey`, which also signs checkpoints.
        set(dir.path(), "jules.persona.alice.signingKey", "");
        set(
            dir.path(),
            "jules.signingKey",
            shared_path.to_str().unwrap(),
        );
        let repo = open();
        assert_eq!(
            key_for(&repo, "alice"),
            Some(KeySource::Config(
                shared_path.clone(),
                "jules.signingKey".into()
            ))
        );
        let (sig, key) = sign_checkpoint(&repo, b"m").unwrap().unwrap();
        assert_eq!(
            key.fingerprint(HashAlg::Sha256).to_string(),
            shared.fingerprint
        );
        let shared_trust = trust("ops", &shared);
        assert!(check_in(
            Some(&shared_trust),
            CHECKPOINT_NAMESPACE,
            "ops",
            None,
            b"m",
            &sig
        )
        .is_verified());

        // The session's key wins, for personas and checkpoints; empty, it is unset.
        set(dir.path(), crate::kit::repo::SESSION_SIGNING_KEY, "");
        assert_eq!(key_for(&open(), "alice").unwrap().path(), shared_path);
        set(
            dir.path(),
            crate::kit::repo::SESSION_SIGNING_KEY,
            alice_path.to_str().unwrap(),
        );
        let repo = open();
        assert_eq!(
            key_for(&repo, "bob"),
            Some(KeySource::Session(alice_path.clone()))
        );
        assert_eq!(
            checkpoint_key(&repo),
            Some(KeySource::Session(alice_path.clone()))
        );
        assert_eq!(
            key_for(&repo, "bob").unwrap().describe(),
            format!("{} (JULES_SIGNING_KEY)", alice_path.display())
        );
    }

    /// `~/` is the home directory, as git reads its paths; anything else is taken as written.
    #[test]
    fn a_key_path_under_home_is_expanded() {
        let home = gix::path::env::home_dir().expect("HOME is set for the tests");
        assert_eq!(expand_home("~/keys/alice"), home.join("keys/alice"));
        assert_eq!(expand_home("/k/~/a"), PathBuf::from("/k/~/a"));
        assert_eq!(expand_home("~alice/k"), PathBuf::from("~alice/k"));
    }

    /// A key others can read is refused, as ssh refuses it; `generate` makes one that is not, in a
    /// directory it creates, and never overwrites one.
    #[test]
    fn keys_are_private_and_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new/dir/k");
        generate("alice", &path).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert!(load(&path).is_ok());
        for mode in [0o640, 0o604, 0o700 | 0o010] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let e = load(&path).unwrap_err().to_string();
            assert!(e.contains("readable by others"), "{mode:o}: {e}");
        }
        let again = generate("alice", &path).unwrap_err().to_string();
        assert!(again.contains("exists; not overwriting a key"), "{again}");
    }
}
