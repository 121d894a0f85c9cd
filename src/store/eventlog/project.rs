//! Folding a log into a [`Projection`]: from the sealed cache when it is valid, incrementally when the tips
//! only moved forward, from a checkpoint when there is no usable cache, and by a full replay otherwise.
//! The cache files themselves (sealing, metadata, locks) live in [`super::cache`].

use std::path::{Path, PathBuf};

use gix::ObjectId;

use super::cache::*;
use super::event::EventId;
use super::read::LoggedEvent;
use super::Log;
use crate::kit::error::{Result, ResultExt};

impl Log<'_> {
    /// Where projection `projection` of this log is cached: `cache/<log>/<projection>`, or, under
    /// `jules.requireSigned`, `cache-signed/<trust file blob>/<log>/<projection>` (a fold that ignores
    /// unverified events is another fold, and a new trust file another again).
    pub fn cache_dir(&self, projection: &str) -> PathBuf {
        let base = crate::kit::repo::jules_dir(self.repo);
        let base = match crate::store::sign::verdict::authority_cache(self.repo) {
            Some(sub) => base.join(sub),
            None => base.join("cache"),
        };
        base.join(self.short_name().replace('/', "%"))
            .join(projection)
    }

    /// The projection `P` of this replica's view of the log, using and refreshing the cache under its lock.
    pub fn project<P: Projection>(&self) -> Result<Loaded<P>> {
        let lock = self.lock_cache(P::NAME);
        self.project_locked::<P>(&lock)
    }

    /// Like [`Log::project`], for a caller that holds the cache lock itself because the projection keeps
    /// reading its cache directory after it is returned (lazily loaded partitions).
    ///
    /// A cache that turns out unreadable, or that vanishes while it is read (somebody deleted
    /// `.git/jules/`), is thrown away and the projection is computed once more.
    pub fn project_locked<P: Projection>(&self, lock: &CacheLock) -> Result<Loaded<P>> {
        if !lock.held || self.full_replay() {
            // Another process kept the lock too long, or a full replay was asked for: answer from the log,
            // touch no cache file.
            let tips = self.tips()?;
            return self.fold_from_log::<P>(&tips);
        }
        let dir = self.cache_dir(P::NAME);
        match self.project_cached::<P>(&dir, &self.tips()?) {
            Ok(l) => Ok(l),
            Err(_) => {
                super::checkpoint::distrust_seed(&dir);
                let _ = std::fs::remove_dir_all(&dir);
                self.project_cached::<P>(&dir, &self.tips()?)
            }
        }
    }

    /// The projection at `tips`, kept in `dir`: warm, incremental, from a checkpoint, or rebuilt.
    pub(crate) fn project_cached<P: Projection>(
        &self,
        dir: &Path,
        tips: &[ObjectId],
    ) -> Result<Loaded<P>> {
        let tips = tips.to_vec();
        let tip_strings: Vec<String> = tips.iter().map(|t| t.to_string()).collect();
        if let Some(meta) = self.valid_meta::<P>(dir) {
            if meta.tips == tip_strings {
                if let Some(view) = P::load(dir) {
                    return Ok(Loaded {
                        view,
                        refresh: Refresh::Warm,
                        invalid: Vec::new(),
                        events: meta.events,
                        passed_over: Vec::new(),
                    });
                }
            } else if let Some(loaded) = self.try_incremental::<P>(dir, &meta, &tips)? {
                return Ok(loaded);
            }
        } else {
            // Under requireSigned only a signed checkpoint of the verified events seeds (see checkpoint);
            // the one passed over instead comes back with the projection, and goes to the caller's record.
            let seed = super::checkpoint::seed_cache::<P>(self, dir, &tips).unwrap_or_default();
            let passed_over: Vec<_> = seed.passed_over.into_iter().collect();
            if let Some(record) = &self.passed_over {
                passed_over.iter().for_each(|i| record.record(i.clone()));
            }
            let seeded = seed
                .meta
                .and_then(|meta| self.try_incremental::<P>(dir, &meta, &tips).ok().flatten());
            let mut loaded = match seeded {
                Some(mut loaded) => {
                    if let Refresh::Incremental { commits } = loaded.refresh {
                        loaded.refresh = Refresh::Checkpoint { commits };
                    }
                    loaded
                }
                None => self.rebuild::<P>(dir, &tips)?,
            };
            loaded.passed_over = passed_over;
            return Ok(loaded);
        }
        self.rebuild::<P>(dir, &tips)
    }

    fn valid_meta<P: Projection>(&self, dir: &Path) -> Option<Meta> {
        load_json(dir, META).filter(|m: &Meta| m.projection == P::NAME && m.version == P::VERSION)
    }

    /// Fold every event reachable from `tips` into an empty projection, reading and writing no cache.
    pub fn fold_from_log<P: Projection>(&self, tips: &[ObjectId]) -> Result<Loaded<P>> {
        let (view, r) = self.fold_all::<P>(tips)?;
        Ok(Loaded {
            view,
            refresh: Refresh::Rebuilt { commits: r.commits },
            invalid: r.invalid,
            events: r.ids.len() as u64,
            passed_over: Vec::new(),
        })
    }

    pub(crate) fn try_incremental<P: Projection>(
        &self,
        dir: &Path,
        meta: &Meta,
        tips: &[ObjectId],
    ) -> Result<Option<Loaded<P>>> {
        let old: Vec<ObjectId> = match meta.tips.iter().map(|t| t.parse()).collect() {
            Ok(v) => v,
            Err(_) => return Ok(None),
        };
        if old == tips {
            // A seeded checkpoint that is the tip: nothing to read.
            let Some(view) = P::load(dir) else {
                return Ok(None);
            };
            return Ok(Some(Loaded {
                view,
                refresh: Refresh::Incremental { commits: 0 },
                invalid: Vec::new(),
                events: meta.events,
                passed_over: Vec::new(),
            }));
        }
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
        let commits = scan.commits;
        let (fresh, invalid) = scan.into_ordered();
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
        // The ids folded so far are read only when there is something new: an event appended twice (on two
        // branches) must be folded once.
        let mut ids = Vec::new();
        if !fresh.is_empty() {
            match load_ids(dir, meta.events) {
                Some(v) => ids = v,
                None => return Ok(None),
            }
        }
        let fresh: Vec<LoggedEvent> = fresh
            .into_iter()
            .filter(|e| ids.binary_search(&e.id).is_err())
            .collect();
        let mut authority = Authority::of(self.repo)?;
        for e in &fresh {
            if authority.allows(e) {
                view.apply(e);
            }
        }
        let new_max = fresh.last().map(|e| e.key()).or(max_key);
        let events = meta.events + fresh.len() as u64;
        if !fresh.is_empty() {
            ids.extend(fresh.iter().map(|e| e.id));
            ids.sort_unstable();
        }
        // A cache that cannot be written (read-only repository, deleted under us) costs speed, never an answer.
        let _ = self.store(
            dir,
            &view,
            tips,
            new_max,
            (!fresh.is_empty()).then_some(&ids[..]),
            events,
        );
        Ok(Some(Loaded {
            view,
            refresh: Refresh::Incremental { commits },
            invalid,
            events,
            passed_over: Vec::new(),
        }))
    }

    /// Every event reachable from `tips` the log's authority allows, folded into an empty projection.
    fn fold_all<P: Projection>(&self, tips: &[ObjectId]) -> Result<(P, super::replay::Replayed)> {
        let mut view = P::empty();
        let mut authority = Authority::of(self.repo)?;
        let r = self.replay(tips, |e| {
            if authority.allows(e) {
                view.apply(e)
            }
        })?;
        Ok((view, r))
    }

    fn rebuild<P: Projection>(&self, dir: &Path, tips: &[ObjectId]) -> Result<Loaded<P>> {
        let (view, r) = self.fold_all::<P>(tips)?;
        let events = r.ids.len() as u64;
        let _ = std::fs::remove_dir_all(dir);
        let _ = self.store(dir, &view, tips, r.max_key, Some(&r.ids), events);
        Ok(Loaded {
            view,
            refresh: Refresh::Rebuilt { commits: r.commits },
            invalid: r.invalid,
            events,
            passed_over: Vec::new(),
        })
    }

    /// Write the projection and its meta; `ids` is `None` when the folded ids did not change.
    pub(crate) fn store<P: Projection>(
        &self,
        dir: &Path,
        view: &P,
        tips: &[ObjectId],
        max_key: Option<(u64, EventId)>,
        ids: Option<&[EventId]>,
        events: u64,
    ) -> Result<()> {
        std::fs::create_dir_all(dir).context(|| format!("creating {}", dir.display()))?;
        let stamp = Stamp::of(tips);
        // Meta goes last and names the tips: a crash in between leaves a cache that does not match and is rebuilt.
        let _ = std::fs::remove_file(dir.join(META));
        view.save(dir, &stamp)
            .context(|| format!("writing the {} cache", P::NAME))?;
        if let Some(ids) = ids {
            write_sealed(dir, IDS, &ids_bytes(ids), &stamp)
                .context(|| "writing the id cache".into())?;
        }
        let meta = Meta {
            projection: P::NAME.into(),
            version: P::VERSION,
            tips: tips.iter().map(|t| t.to_string()).collect(),
            max_key: max_key.map(|(l, id)| (l, id.to_hex())),
            events,
        };
        save_json(dir, META, &meta, &stamp).context(|| "writing the cache meta".into())
    }
}

/// Which events a fold may apply: all of them, or under `jules.requireSigned` only those verified for their
/// actor (docs/format.md, "Signed events"): an unverified mark, claim, lease or state change counts for
/// nothing, and an unverified message is not mail from its sender.
struct Authority<'r>(Option<super::Verifier<'r>>);

impl<'r> Authority<'r> {
    fn of(repo: &'r gix::Repository) -> Result<Self> {
        if !crate::store::sign::verdict::require_signed(repo) {
            return Ok(Authority(None));
        }
        Ok(Authority(super::Verifier::open_log(repo)?))
    }

    fn allows(&mut self, e: &LoggedEvent) -> bool {
        match &mut self.0 {
            None => true,
            // A commit that cannot be read cannot be verified: no authority.
            Some(v) => v.authorized(e.commit).unwrap_or(false),
        }
    }
}
