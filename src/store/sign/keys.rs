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
