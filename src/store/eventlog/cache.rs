//! Projections: views folded over a log's ordered events, cached under `.git/jules/cache/`.
//!
//! The cache is keyed by the tips it was computed from. When the tips moved forward, only the new commits
//! are read; if all their events sort after the cached ones they are folded in, otherwise (a merge brought
//! in older-sorting events) the projection is refolded from the log. With no usable cache, a checkpoint on
//! the shared log (see the `checkpoint` sibling) stands in for the cache before a full replay is tried.
//!
//! Caches are only speed. Every cache file is *sealed*: it ends with a trailer that names the log tips it was
//! built from and a sha256 of its path, those tips and its content, checked on every read. A file that is
//! damaged, truncated, swapped with another (the path is in the checksum) or gone is an unreadable cache,
//! and an unreadable cache is thrown away and rebuilt from the log: deleting `.git/jules/` changes no answer.

use std::io::Write;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::event::EventId;
use super::read::{InvalidCommit, LoggedEvent};
use super::Log;

/// A deterministic fold over a log's events in the total order.
pub trait Projection: Sized {
    /// Names the cache directory; change [`Projection::VERSION`] when the saved shape changes.
    const NAME: &'static str;
    const VERSION: u32;
    fn empty() -> Self;
    fn apply(&mut self, event: &LoggedEvent);
    /// Persist into `dir` (which exists and is private to this projection), sealing every file with
    /// `stamp` (see [`write_sealed`]).
    fn save(&self, dir: &Path, stamp: &Stamp) -> std::io::Result<()>;
    /// Load what [`Projection::save`] wrote; `None` when missing or unreadable.
    fn load(dir: &Path) -> Option<Self>;
}

/// What a cache file was built from: a digest of the log tips (sorted), 64 hex digits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp(String);

impl Stamp {
    pub fn of(tips: &[ObjectId]) -> Stamp {
        let mut sorted: Vec<&ObjectId> = tips.iter().collect();
        sorted.sort();
        let mut h = Sha256::new();
        for t in sorted {
            h.update(t.as_bytes());
        }
        Stamp(EventId(h.finalize().into()).to_hex())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

const SEAL_TAG: &[u8] = b"\njules-cache 1 ";
/// The trailer: the tag, the stamp (64 hex), a space, the checksum (64 hex), a newline.
pub(crate) const SEAL_LEN: usize = SEAL_TAG.len() + 64 + 1 + 64 + 1;

pub(super) fn seal_sum(rel: &str, stamp: &[u8], content: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(rel.as_bytes());
    h.update([0]);
    h.update(stamp);
    h.update([0]);
    h.update(content);
    EventId(h.finalize().into()).to_hex()
}

/// `content` followed by its trailer: the stamp and sha256(`rel`, stamp, content).
pub fn seal(rel: &str, content: &[u8], stamp: &Stamp) -> Vec<u8> {
    let mut out = Vec::with_capacity(content.len() + SEAL_LEN);
    out.extend_from_slice(content);
    out.extend_from_slice(SEAL_TAG);
    out.extend_from_slice(stamp.0.as_bytes());
    out.push(b' ');
    out.extend_from_slice(seal_sum(rel, stamp.0.as_bytes(), content).as_bytes());
    out.push(b'\n');
    out
}

/// The content of a sealed file read as `rel`, with the stamp it was built from; `None` when the trailer is
/// missing or the checksum does not match (bit flips, truncation, a file copied from another path).
pub fn unseal<'a>(rel: &str, file: &'a [u8]) -> Option<(&'a [u8], &'a str)> {
    if file.len() < SEAL_LEN {
        return None;
    }
    let (content, trailer) = file.split_at(file.len() - SEAL_LEN);
    let rest = trailer.strip_prefix(SEAL_TAG)?;
    let (stamp, rest) = rest.split_at(64);
    let (sum, nl) = rest.strip_prefix(b" ")?.split_at(64);
    if nl != b"\n" || seal_sum(rel, stamp, content).as_bytes() != sum {
        return None;
    }
    Some((content, std::str::from_utf8(stamp).ok()?))
}

/// The name a file is sealed under: `<log>/<projection>/<rel>`, from the last two components of its
/// projection directory, so that a file copied from another log, projection or path fails its seal.
pub fn seal_key(dir: &Path, rel: &str) -> String {
    let name = |p: Option<&Path>| {
        p.and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    format!("{}/{}/{rel}", name(dir.parent()), name(Some(dir)))
}

/// Seal `content` and write it to `dir/rel` atomically.
pub fn write_sealed(dir: &Path, rel: &str, content: &[u8], stamp: &Stamp) -> std::io::Result<()> {
    write_atomically(&dir.join(rel), &seal(&seal_key(dir, rel), content, stamp))
}

/// Read `dir/rel` and check its seal: `NotFound` when it is missing, `InvalidData` when it is damaged.
pub fn read_sealed(dir: &Path, rel: &str) -> std::io::Result<Vec<u8>> {
    Ok(read_sealed_stamp(dir, rel)?.0)
}

/// [`read_sealed`], with the stamp the file was built from.
pub fn read_sealed_stamp(dir: &Path, rel: &str) -> std::io::Result<(Vec<u8>, String)> {
    let mut bytes = match std::fs::read(dir.join(rel)) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match fetch_pending(dir, rel) {
            Some(b) => b,
            None => return Err(e),
        },
        Err(e) => return Err(e),
    };
    let (len, stamp) = match unseal(&seal_key(dir, rel), &bytes) {
        Some((content, stamp)) => (content.len(), stamp.to_owned()),
        None => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{rel}: cache file fails its checksum"),
            ))
        }
    };
    bytes.truncate(len);
    Ok((bytes, stamp))
}

/// Save and load a whole projection as one sealed JSON file; fine for small views. Such a file is rewritten
/// with the meta at every refresh, so it must carry the meta's stamp: an older copy of itself is refused too.
pub fn save_json<T: Serialize>(
    dir: &Path,
    file: &str,
    value: &T,
    stamp: &Stamp,
) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    write_sealed(dir, file, &bytes, stamp)
}

pub fn load_json<T: DeserializeOwned>(dir: &Path, file: &str) -> Option<T> {
    let (bytes, stamp) = read_sealed_stamp(dir, file).ok()?;
    if file != META && read_sealed_stamp(dir, META).ok()?.1 != stamp {
        return None;
    }
    serde_json::from_slice(&bytes).ok()
}

/// Names the checkpoint files a cache directory was seeded with but that are not written out yet: the
/// repository's git directory on the first line, then `<blob id> <path>` per file. A file that is missing
/// from the directory but listed here is read from its blob on first use (and written out then), so that a
/// fresh clone's first read inflates only the partitions it looks at.
pub(crate) const PENDING: &str = "checkpoint.pending";

pub(crate) fn write_pending(
    dir: &Path,
    git_dir: &Path,
    files: &[(String, ObjectId)],
) -> std::io::Result<()> {
    let mut text = format!("{}\n", git_dir.display());
    for (rel, id) in files {
        text.push_str(&format!("{id} {rel}\n"));
    }
    write_atomically(&dir.join(PENDING), text.as_bytes())
}

pub(super) fn fetch_pending(dir: &Path, rel: &str) -> Option<Vec<u8>> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static REPOS: OnceLock<Mutex<HashMap<PathBuf, gix::ThreadSafeRepository>>> = OnceLock::new();
    let text = std::fs::read_to_string(dir.join(PENDING)).ok()?;
    let mut lines = text.lines();
    let git_dir = PathBuf::from(lines.next()?);
    let id = lines.find_map(|l| {
        let (id, path) = l.split_once(' ')?;
        (path == rel).then(|| ObjectId::from_hex(id.as_bytes()).ok())?
    })?;
    let repo = {
        let mut repos = REPOS.get_or_init(Default::default).lock().ok()?;
        match repos.get(&git_dir) {
            Some(r) => r.clone(),
            None => {
                let r = gix::open(&git_dir).ok()?.into_sync();
                repos.insert(git_dir, r.clone());
                r
            }
        }
    }
    .to_thread_local();
    let bytes = repo.find_blob(id).ok()?.data.clone();
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    // Written out for the next read; a failure costs only speed.
    let _ = write_atomically(&path, &bytes);
    Some(bytes)
}

/// Whether reads through `repo` replay the whole log: no cache, no checkpoint is read (`--full`, set by the
/// frontend on its handle: [`crate::kit::repo::Overrides::full_replay`]). The answer is the same either way;
/// this is how to check it, and how to measure the cold path.
///
/// A value that is not a boolean counts as true (the answer is the same, only slower): opening the
/// repository already refused it with its name (`settings::validate`).
pub fn full_replay(repo: &gix::Repository) -> bool {
    crate::kit::settings::boolean(repo, crate::kit::repo::FULL_REPLAY, false).unwrap_or(true)
}

/// How a projection was brought up to date, for diagnostics and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Refresh {
    /// The cache matched the tips: nothing was read from git.
    Warm,
    /// Only the new commits were read and folded in.
    Incremental { commits: usize },
    /// No cache: a checkpoint on the log was loaded and only the commits after it were read.
    Checkpoint { commits: usize },
    /// Rebuilt from the whole log.
    Rebuilt { commits: usize },
}

/// A projection together with what reading it found.
pub struct Loaded<P> {
    pub view: P,
    pub refresh: Refresh,
    /// Invalid commits met while reading new commits (all of them on a rebuild).
    pub invalid: Vec<InvalidCommit>,
    pub events: u64,
    /// Under `jules.requireSigned`, the checkpoint this read could not use, so it replayed instead:
    /// a warning for the caller to pass on (empty otherwise, and on every warm or incremental read).
    pub passed_over: Vec<super::passed_over::Ignored>,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct Meta {
    pub(crate) projection: String,
    pub(crate) version: u32,
    pub(crate) tips: Vec<String>,
    /// The largest (lamport, id) folded so far.
    pub(crate) max_key: Option<(u64, String)>,
    pub(crate) events: u64,
}

pub(crate) const META: &str = "meta.json";
pub(crate) const IDS: &str = "ids.bin";

pub(crate) fn ids_bytes(ids: &[EventId]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(ids.len() * 32);
    for id in ids {
        raw.extend_from_slice(&id.0);
    }
    raw
}

/// An exclusive hold on one projection's cache directory, released on drop. The cache is several files (and
/// a projection may split itself into partitions), so two processes refreshing it at once could otherwise
/// leave files of two different states behind one `meta.json`.
pub struct CacheLock {
    path: Option<PathBuf>,
    pub(super) held: bool,
}

impl CacheLock {
    /// Whether this process holds the lock (it may not, when another kept it too long: then no cache is
    /// read or written).
    pub fn is_held(&self) -> bool {
        self.held
    }
}

impl Drop for CacheLock {
    fn drop(&mut self) {
        if let (Some(p), true) = (&self.path, self.held) {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// A cache lock older than this was left by a killed process and is taken over.
const STALE_CACHE_LOCK: std::time::Duration = std::time::Duration::from_secs(120);
/// How long to wait for another process's cache lock before answering without the cache.
const CACHE_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

impl Log<'_> {
    /// Take the lock of projection `name`'s cache, waiting a while for another process. When it cannot be
    /// had (read-only repository, a holder that takes too long) the lock is not held and
    /// [`Log::project_locked`] answers from the log without touching the cache.
    pub fn lock_cache(&self, name: &str) -> CacheLock {
        let path = self.cache_dir(name).with_extension("lock");
        let not_held = |path| CacheLock { path, held: false };
        if path
            .parent()
            .is_none_or(|p| std::fs::create_dir_all(p).is_err())
        {
            return not_held(None);
        }
        let started = std::time::Instant::now();
        loop {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(_) => {
                    return CacheLock {
                        path: Some(path),
                        held: true,
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let age = std::fs::metadata(&path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| t.elapsed().ok());
                    if age.is_some_and(|a| a > STALE_CACHE_LOCK) {
                        let _ = std::fs::remove_file(&path);
                    } else if started.elapsed() > CACHE_LOCK_WAIT {
                        return not_held(Some(path));
                    } else {
                        std::thread::sleep(std::time::Duration::from_millis(2));
                    }
                }
                Err(_) => return not_held(Some(path)),
            }
        }
    }
}

pub(super) fn load_ids(dir: &Path, expected: u64) -> Option<Vec<EventId>> {
    let raw = read_sealed(dir, IDS).ok()?;
    if raw.len() as u64 != expected * 32 {
        return None;
    }
    Some(
        raw.chunks_exact(32)
            .map(|c| EventId(c.try_into().expect("32 bytes")))
            .collect(),
    )
}

/// Write to a temporary file in the same directory and rename it over the target.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
