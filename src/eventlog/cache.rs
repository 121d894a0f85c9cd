//! Projections: views folded over a log's ordered events, cached under `.git/jules/cache/`.
//!
//! The cache is keyed by the tips it was computed from. When the tips moved forward, only the new commits
//! are read; if all their events sort after the cached ones they are folded in, otherwise (a merge brought
//! in older-sorting events) the projection is refolded from the log. A missing, foreign or corrupt cache is
//! rebuilt. The cache is never needed for correctness: deleting `.git/jules/` changes no answer.

use std::io::Write;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use serde::{de::DeserializeOwned, Deserialize, Serialize};

use super::event::EventId;
use super::read::{InvalidCommit, LoggedEvent};
use super::Log;
use crate::error::{Result, ResultExt};

/// A deterministic fold over a log's events in the total order.
pub trait Projection: Sized {
    /// Names the cache directory; change [`Projection::VERSION`] when the saved shape changes.
    const NAME: &'static str;
    const VERSION: u32;
    fn empty() -> Self;
    fn apply(&mut self, event: &LoggedEvent);
    /// Persist into `dir` (which exists and is private to this projection).
    fn save(&self, dir: &Path) -> std::io::Result<()>;
    /// Load what [`Projection::save`] wrote; `None` when missing or unreadable.
    fn load(dir: &Path) -> Option<Self>;
}

/// Save and load a whole projection as one JSON file; fine for small views.
pub fn save_json<T: Serialize>(dir: &Path, file: &str, value: &T) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    write_atomically(&dir.join(file), &bytes)
}

pub fn load_json<T: DeserializeOwned>(dir: &Path, file: &str) -> Option<T> {
    let bytes = std::fs::read(dir.join(file)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// How a projection was brought up to date, for diagnostics and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Refresh {
    /// The cache matched the tips: nothing was read from git.
    Warm,
    /// Only the new commits were read and folded in.
    Incremental { commits: usize },
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
}

#[derive(Serialize, Deserialize)]
struct Meta {
    projection: String,
    version: u32,
    tips: Vec<String>,
    /// The largest (lamport, id) folded so far.
    max_key: Option<(u64, String)>,
    events: u64,
}

impl Log<'_> {
    pub fn cache_dir(&self, projection: &str) -> PathBuf {
        crate::repo::jules_dir(self.repo)
            .join("cache")
            .join(self.short_name().replace('/', "%"))
            .join(projection)
    }

    /// The projection `P` of this replica's view of the log, using and refreshing the cache under its lock.
    pub fn project<P: Projection>(&self) -> Result<Loaded<P>> {
        let lock = self.lock_cache(P::NAME);
        self.project_locked::<P>(&lock)
    }

    /// Like [`Log::project`], for a caller that holds the cache lock itself because the projection keeps
    /// reading its cache directory after it is returned (lazily loaded partitions).
    pub fn project_locked<P: Projection>(&self, lock: &CacheLock) -> Result<Loaded<P>> {
        if !lock.held {
            // Another process kept the lock too long: answer from the log, touch no cache file.
            let tips = self.tips()?;
            let scan = self.scan(&tips, &[], false)?;
            let commits = scan.commits;
            let (events, invalid) = scan.into_ordered();
            let mut view = P::empty();
            for e in &events {
                view.apply(e);
            }
            return Ok(Loaded {
                view,
                refresh: Refresh::Rebuilt { commits },
                invalid,
                events: events.len() as u64,
            });
        }
        let tips = self.tips()?;
        let dir = self.cache_dir(P::NAME);
        let meta: Option<Meta> = load_json(&dir, "meta.json")
            .filter(|m: &Meta| m.projection == P::NAME && m.version == P::VERSION);
        let tip_strings: Vec<String> = tips.iter().map(|t| t.to_string()).collect();

        if let Some(meta) = meta {
            if meta.tips == tip_strings {
                if let Some(view) = P::load(&dir) {
                    return Ok(Loaded {
                        view,
                        refresh: Refresh::Warm,
                        invalid: Vec::new(),
                        events: meta.events,
                    });
                }
            } else if let Some(loaded) = self.try_incremental::<P>(&dir, &meta, &tips)? {
                return Ok(loaded);
            }
        }
        self.rebuild::<P>(&dir, &tips)
    }

    fn try_incremental<P: Projection>(
        &self,
        dir: &Path,
        meta: &Meta,
        tips: &[ObjectId],
    ) -> Result<Option<Loaded<P>>> {
        let old: Vec<ObjectId> = match meta.tips.iter().map(|t| t.parse()).collect() {
            Ok(v) => v,
            Err(_) => return Ok(None),
        };
        // An old tip must still be reachable: be a new tip or the parent of a newly walked commit.
        let scan = match self.scan(tips, &old, false) {
            Ok(scan) => scan,
            Err(_) => return Ok(None),
        };
        if !old
            .iter()
            .all(|t| tips.contains(t) || scan.hidden_reached.contains(t))
        {
            return Ok(None);
        }
        let Some(mut view) = P::load(dir) else {
            return Ok(None);
        };
        let Some(mut ids) = load_ids(dir, meta.events) else {
            return Ok(None);
        };
        let commits = scan.commits;
        let (fresh, invalid) = scan.into_ordered();
        let fresh: Vec<LoggedEvent> = fresh
            .into_iter()
            .filter(|e| ids.binary_search(&e.id).is_err())
            .collect();
        let max_key = match &meta.max_key {
            Some((l, id)) => match EventId::from_hex(id) {
                Some(id) => Some((*l, id)),
                None => return Ok(None),
            },
            None => None,
        };
        if let (Some(first), Some(max)) = (fresh.first(), max_key) {
            if first.key() <= max {
                // Events that sort before ones already folded: the fold must be redone in order.
                return Ok(None);
            }
        }
        for e in &fresh {
            view.apply(e);
        }
        let new_max = fresh.last().map(|e| e.key()).or(max_key);
        ids.extend(fresh.iter().map(|e| e.id));
        ids.sort_unstable();
        let events = ids.len() as u64;
        self.store(dir, &view, tips, new_max, &ids)?;
        Ok(Some(Loaded {
            view,
            refresh: Refresh::Incremental { commits },
            invalid,
            events,
        }))
    }

    fn rebuild<P: Projection>(&self, dir: &Path, tips: &[ObjectId]) -> Result<Loaded<P>> {
        let scan = self.scan(tips, &[], false)?;
        let commits = scan.commits;
        let (events, invalid) = scan.into_ordered();
        let mut view = P::empty();
        for e in &events {
            view.apply(e);
        }
        let mut ids: Vec<EventId> = events.iter().map(|e| e.id).collect();
        ids.sort_unstable();
        let max = events.last().map(|e| e.key());
        // A cache that cannot be written (read-only repository) costs speed, never an answer.
        let _ = self.store(dir, &view, tips, max, &ids);
        Ok(Loaded {
            view,
            refresh: Refresh::Rebuilt { commits },
            invalid,
            events: ids.len() as u64,
        })
    }

    fn store<P: Projection>(
        &self,
        dir: &Path,
        view: &P,
        tips: &[ObjectId],
        max_key: Option<(u64, EventId)>,
        ids: &[EventId],
    ) -> Result<()> {
        std::fs::create_dir_all(dir).context(|| format!("creating {}", dir.display()))?;
        // Meta goes last and names the tips: a crash in between leaves a cache that does not match and is rebuilt.
        let _ = std::fs::remove_file(dir.join("meta.json"));
        view.save(dir)
            .context(|| format!("writing the {} cache", P::NAME))?;
        let mut raw = Vec::with_capacity(ids.len() * 32);
        for id in ids {
            raw.extend_from_slice(&id.0);
        }
        write_atomically(&dir.join("ids.bin"), &raw).context(|| "writing the id cache".into())?;
        let meta = Meta {
            projection: P::NAME.into(),
            version: P::VERSION,
            tips: tips.iter().map(|t| t.to_string()).collect(),
            max_key: max_key.map(|(l, id)| (l, id.to_hex())),
            events: ids.len() as u64,
        };
        save_json(dir, "meta.json", &meta).context(|| "writing the cache meta".into())
    }
}

/// An exclusive hold on one projection's cache directory, released on drop. The cache is several files (and
/// a projection may split itself into partitions), so two processes refreshing it at once could otherwise
/// leave files of two different states behind one `meta.json`.
pub struct CacheLock {
    path: Option<PathBuf>,
    held: bool,
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

fn load_ids(dir: &Path, expected: u64) -> Option<Vec<EventId>> {
    let raw = std::fs::read(dir.join("ids.bin")).ok()?;
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
