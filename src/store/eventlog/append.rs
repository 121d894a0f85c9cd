//! Appending events: write the objects, then move the ref with a compare-and-swap, retrying lost races.

use std::time::{Duration, Instant};

use gix::bstr::BString;
use gix::objs::tree::EntryKind;
use gix::ObjectId;

use super::event::{event_message, Event, EventId, PayloadRef};
use super::Log;
use crate::kit::error::{Error, Result};
use crate::kit::names;

/// An event to append, with the files that ride along as blobs under `payload/` in its commit.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub event: Event,
    pub files: Vec<(String, Vec<u8>)>,
}

impl NewEvent {
    pub fn new(event: Event) -> Self {
        NewEvent {
            event,
            files: Vec::new(),
        }
    }
}

/// Where an appended event landed.
#[derive(Debug, Clone, Copy)]
pub struct Appended {
    pub id: EventId,
    pub commit: ObjectId,
    pub lamport: u64,
}

/// How hard [`Log::append_batch`] tries before giving up on a contended ref.
const MAX_ATTEMPTS: u32 = 1000;
const MAX_TOTAL_WAIT: Duration = Duration::from_secs(60);

#[cfg(test)]
thread_local! {
    /// The bounds of the retry loop on this thread ([`MAX_ATTEMPTS`], [`MAX_TOTAL_WAIT`]): a test lowers
    /// them to watch an append give up, which at the real bounds takes half a minute or more.
    static PATIENCE: std::cell::Cell<(u32, Duration)> =
        const { std::cell::Cell::new((MAX_ATTEMPTS, MAX_TOTAL_WAIT)) };
}

/// How many attempts, and how long, an append spends on a ref that keeps moving.
fn patience() -> (u32, Duration) {
    #[cfg(test)]
    return PATIENCE.with(|p| p.get());
    #[cfg(not(test))]
    (MAX_ATTEMPTS, MAX_TOTAL_WAIT)
}

struct Prepared {
    kind: String,
    canonical: Vec<u8>,
    id: EventId,
    tree: ObjectId,
    actor: String,
    /// The actor's signature over `canonical`, made once: a retry rebuilds the commit with the same one.
    signature: Option<String>,
}

impl Log<'_> {
    pub fn append(&self, event: NewEvent) -> Result<Appended> {
        Ok(self.append_batch(vec![event])?.remove(0))
    }

    /// Append many events with one ref update: they become a chain of commits, in the given order.
    pub fn append_batch(&self, events: Vec<NewEvent>) -> Result<Vec<Appended>> {
        Ok(self
            .append_inner(events, None)?
            .expect("an unconditional append never reports a moved tip"))
    }

    /// Append only if the local ref still points at `expected` (`None`: the log does not exist yet).
    /// `Ok(None)` means it moved: whoever decided what to append must look again. This is how decisions
    /// (a scheduler's tick, a claim) are made exactly once across concurrent writers.
    pub fn append_batch_if(
        &self,
        expected: Option<ObjectId>,
        events: Vec<NewEvent>,
    ) -> Result<Option<Vec<Appended>>> {
        self.append_inner(events, Some(expected))
    }

    fn append_inner(
        &self,
        events: Vec<NewEvent>,
        expected: Option<Option<ObjectId>>,
    ) -> Result<Option<Vec<Appended>>> {
        if events.is_empty() {
            return Ok(Some(Vec::new()));
        }
        let prepared = events
            .into_iter()
            .map(|e| self.prepare(e))
            .collect::<Result<Vec<_>>>()?;
        let committer = crate::kit::repo::committer(self.repo);
        let (max_attempts, max_wait) = patience();
        let started = Instant::now();
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let tip = self.local_tip()?;
            if expected.is_some_and(|e| e != tip) {
                return Ok(None);
            }
            // What this replica has seen (fetched remote-tracking copies included) happened before the new
            // events: join it in first, so the new clocks are above it and a plain push is a fast-forward.
            let (parent, absorbed) = self.joined_with_remotes(tip)?;
            let out = self.write_chain(&prepared, parent, &committer)?;
            let new_tip = out.last().expect("at least one event").commit;
            let msg = if out.len() == 1 {
                format!("jules: append {}", prepared[0].kind)
            } else {
                format!("jules: append {} events", out.len())
            };
            // The events' objects are written and the ref not yet moved: where a kill or a racer matters.
            crate::kit::testhook::pause(&["append", &self.name]);
            if crate::store::refs::cas(self.repo, &self.name, tip, new_tip, &msg)? {
                self.remember_absorbed(&absorbed);
                return Ok(Some(out));
            }
            if let Some(err) = crate::store::refs::stale_lock_error(self.repo, &self.name) {
                // A lock file left by a killed process: the user removes it (exit 2).
                return Err(Error::Refused(err.to_string()));
            }
            if attempt >= max_attempts || started.elapsed() > max_wait {
                return Err(Error::Race {
                    message: format!(
                        "gave up appending to {} after {attempt} attempts: the ref keeps moving",
                        self.name
                    ),
                });
            }
            std::thread::sleep(backoff(attempt));
        }
    }

    /// Write `events` as a chain of commits on top of `parent` without moving any ref: for protocols that
    /// publish the commits elsewhere first (a mail claim pushed to the remote under a lease) and only then
    /// bring the local ref along.
    pub fn write_detached(
        &self,
        parent: Option<ObjectId>,
        events: Vec<NewEvent>,
    ) -> Result<Vec<Appended>> {
        let prepared = events
            .into_iter()
            .map(|e| self.prepare(e))
            .collect::<Result<Vec<_>>>()?;
        let committer = crate::kit::repo::committer(self.repo);
        self.write_chain(&prepared, parent, &committer)
    }

    fn write_chain(
        &self,
        prepared: &[Prepared],
        tip: Option<ObjectId>,
        committer: &gix::actor::Signature,
    ) -> Result<Vec<Appended>> {
        let base_lamport = match tip {
            Some(tip) => self.lamport_at(tip)?,
            None => 0,
        };
        let mut parent = tip;
        let mut out = Vec::with_capacity(prepared.len());
        for (i, p) in prepared.iter().enumerate() {
            let lamport = base_lamport + 1 + i as u64;
            let message = event_message(
                &p.kind,
                &p.canonical,
                &p.id,
                lamport,
                p.signature.as_deref(),
            );
            let author = crate::kit::repo::persona_signature(&p.actor, committer.time);
            let commit = gix::objs::Commit {
                tree: p.tree,
                parents: parent.into_iter().collect(),
                author,
                committer: committer.clone(),
                encoding: None,
                message: BString::from(message),
                extra_headers: Vec::new(),
            };
            let id = crate::store::loose::write(self.repo, &commit)?;
            parent = Some(id);
            out.push(Appended {
                id: p.id,
                commit: id,
                lamport,
            });
        }
        Ok(out)
    }

    fn prepare(&self, new: NewEvent) -> Result<Prepared> {
        let NewEvent { mut event, files } = new;
        let mut tree = crate::store::loose::empty_tree(self.repo)?;
        if !files.is_empty() {
            let mut editor = self.repo.edit_tree(tree)?;
            let mut refs = Vec::with_capacity(files.len());
            for (name, bytes) in &files {
                names::validate_file_name(name)?;
                if refs.iter().any(|r: &PayloadRef| &r.name == name) {
                    return Err(Error::usage(format!("attachment {name:?} given twice")));
                }
                let blob = self.repo.write_blob(bytes)?.detach();
                editor.upsert(format!("payload/{name}"), EntryKind::Blob, blob)?;
                refs.push(PayloadRef {
                    name: name.clone(),
                    blob: blob.to_string(),
                    size: bytes.len() as u64,
                });
            }
            refs.sort_by(|a, b| a.name.cmp(&b.name));
            event.payload = refs;
            tree = editor.write()?.detach();
        }
        let canonical = event.canonical()?;
        let id = EventId::of(&canonical);
        let signature = crate::store::sign::sign_event(self.repo, &event.actor, &canonical)?;
        Ok(Prepared {
            signature,
            kind: event.kind.clone(),
            actor: event.actor.clone(),
            canonical,
            id,
            tree,
        })
    }
}

/// Exponential backoff from 0.2 ms to 25 ms with ±50 % jitter, so racing writers spread out.
fn backoff(attempt: u32) -> Duration {
    let base_us = 200u64 << attempt.min(7);
    let jitter = super::event::fresh_nonce();
    let r = u64::from_str_radix(&jitter[..4], 16).unwrap_or(0x8000) as f64 / 65535.0;
    Duration::from_micros((base_us as f64 * (0.5 + r)) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::eventlog::test_support::event;
    use crate::store::eventlog::EventId;

    fn id_of(e: &NewEvent) -> EventId {
        EventId::of(&e.event.canonical().unwrap())
    }

    /// `append_batch_if` appends only on the tip it was given (`None`: no log yet), reports where each
    /// event landed, and answers `None` without writing when the ref is elsewhere: how a decision is made
    /// once across writers.
    #[test]
    fn a_conditional_append_lands_only_on_the_tip_it_expects() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path().join("r.git")).unwrap();
        let log = Log::open(&repo, "t").unwrap();
        let (a, b, c) = (event(1), event(2), event(3));
        let (ida, idb, idc) = (id_of(&a), id_of(&b), id_of(&c));

        // No log yet: a tip that is not there is not expected.
        let somewhere = ObjectId::from_hex(&[b'5'; 40]).unwrap();
        assert!(log
            .append_batch_if(Some(somewhere), vec![a.clone()])
            .unwrap()
            .is_none());
        assert_eq!(log.local_tip().unwrap(), None);

        let first = log
            .append_batch_if(None, vec![a, b])
            .unwrap()
            .expect("the log did not exist");
        assert_eq!(
            first.iter().map(|x| (x.id, x.lamport)).collect::<Vec<_>>(),
            [(ida, 1), (idb, 2)]
        );
        assert_eq!(log.local_tip().unwrap(), Some(first[1].commit));
        assert_eq!(
            repo.find_commit(first[1].commit)
                .unwrap()
                .parent_ids()
                .map(|p| p.detach())
                .collect::<Vec<_>>(),
            [first[0].commit]
        );

        // The log exists now: expecting none, or an older tip, writes nothing.
        assert!(log
            .append_batch_if(None, vec![c.clone()])
            .unwrap()
            .is_none());
        assert!(log
            .append_batch_if(Some(first[0].commit), vec![c.clone()])
            .unwrap()
            .is_none());
        assert_eq!(log.local_tip().unwrap(), Some(first[1].commit));

        let second = log
            .append_batch_if(Some(first[1].commit), vec![c])
            .unwrap()
            .expect("the tip was the one expected");
        assert_eq!(second.len(), 1);
        assert_eq!((second[0].id, second[0].lamport), (idc, 3));
        assert_eq!(log.local_tip().unwrap(), Some(second[0].commit));
        let (events, _) = log.read_all().unwrap();
        assert_eq!(
            events.iter().map(|e| e.id).collect::<Vec<_>>(),
            [ida, idb, idc]
        );
    }

    /// Where the ref keeps a reflog (`core.logAllRefUpdates = always`), each append says
    /// what it added: the kind of a single event, the number of a batch's.
    #[test]
    fn the_reflog_names_a_single_event_by_kind_and_a_batch_by_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.git");
        gix::init_bare(&path).unwrap();
        let config = path.join("config");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str("[core]\n\tlogAllRefUpdates = always\n");
        std::fs::write(&config, text).unwrap();
        let repo = gix::open(&path).unwrap();
        let reflog = repo.common_dir().join("logs/refs/jules/t");
        let log = Log::open(&repo, "t").unwrap();
        log.append(event(1)).unwrap();
        log.append_batch(vec![event(2), event(3)]).unwrap();
        let text = std::fs::read_to_string(&reflog).unwrap();
        let messages: Vec<&str> = text
            .lines()
            .map(|l| l.split_once('\t').expect("a reflog line has a message").1)
            .collect();
        assert_eq!(messages, ["jules: append t.x", "jules: append 2 events"]);
    }

    /// The `.lock` file of the log's ref, made now: a writer that holds the ref (to git, a fresh lock is
    /// one; it turns stale after `STALE_LOCK_AGE`, 5 s).
    fn hold_lock(repo: &gix::Repository) -> std::path::PathBuf {
        let lock = repo.common_dir().join("refs/jules/t.lock");
        std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
        std::fs::write(&lock, "").unwrap();
        lock
    }

    fn race_message(r: Result<Appended>) -> String {
        match r {
            Err(Error::Race { message }) => message,
            other => panic!("expected a lost race, got {other:?}"),
        }
    }

    /// A ref held by another writer is tried again up to the attempts bound, then given up with a race
    /// error that says how many attempts were made; the log is left as it was.
    #[test]
    fn an_append_to_a_held_ref_gives_up_after_its_attempts() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path().join("r.git")).unwrap();
        let log = Log::open(&repo, "t").unwrap();
        let tip = log.append(event(1)).unwrap().commit;
        let lock = hold_lock(&repo);
        PATIENCE.with(|p| p.set((3, MAX_TOTAL_WAIT)));
        let message = race_message(log.append(event(2)));
        PATIENCE.with(|p| p.set((MAX_ATTEMPTS, MAX_TOTAL_WAIT)));
        assert_eq!(
            message,
            "gave up appending to refs/jules/t after 3 attempts: the ref keeps moving"
        );
        assert_eq!(log.local_tip().unwrap(), Some(tip));
        // Released, the same append goes through.
        std::fs::remove_file(lock).unwrap();
        assert_eq!(log.append(event(2)).unwrap().lamport, 2);
    }

    /// ... and whatever the attempts left, it gives up once its time is over (here: none, so after the
    /// first attempt).
    #[test]
    fn an_append_to_a_held_ref_gives_up_when_its_time_is_over() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path().join("r.git")).unwrap();
        let log = Log::open(&repo, "t").unwrap();
        let tip = log.append(event(1)).unwrap().commit;
        hold_lock(&repo);
        PATIENCE.with(|p| p.set((4, Duration::ZERO)));
        let message = race_message(log.append(event(2)));
        PATIENCE.with(|p| p.set((MAX_ATTEMPTS, MAX_TOTAL_WAIT)));
        assert_eq!(
            message,
            "gave up appending to refs/jules/t after 1 attempts: the ref keeps moving"
        );
        assert_eq!(log.local_tip().unwrap(), Some(tip));
    }

    /// `write_detached` writes its chain on the parent it is given, with clocks above the parent's, and
    /// moves no ref; without a parent the chain starts a history of its own at clock 1.
    #[test]
    fn a_detached_chain_is_written_on_its_parent_and_moves_no_ref() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path().join("r.git")).unwrap();
        let log = Log::open(&repo, "t").unwrap();
        let tip = log.append(event(1)).unwrap();
        let (b, c) = (event(2), event(3));
        let (idb, idc) = (id_of(&b), id_of(&c));
        let out = log.write_detached(Some(tip.commit), vec![b, c]).unwrap();
        assert_eq!(
            out.iter().map(|x| (x.id, x.lamport)).collect::<Vec<_>>(),
            [(idb, 2), (idc, 3)]
        );
        let parents = |id: ObjectId| -> Vec<ObjectId> {
            repo.find_commit(id)
                .unwrap()
                .parent_ids()
                .map(|p| p.detach())
                .collect()
        };
        assert_eq!(parents(out[0].commit), [tip.commit]);
        assert_eq!(parents(out[1].commit), [out[0].commit]);
        assert_eq!(log.local_tip().unwrap(), Some(tip.commit));
        let scan = log.scan(&[out[1].commit], &[], true).unwrap();
        assert_eq!((scan.events.len(), scan.invalid.len()), (3, 0));

        let d = event(4);
        let idd = id_of(&d);
        let root = log.write_detached(None, vec![d]).unwrap();
        assert_eq!((root.len(), root[0].id, root[0].lamport), (1, idd, 1));
        assert!(parents(root[0].commit).is_empty());
        assert_eq!(log.local_tip().unwrap(), Some(tip.commit));
    }

    /// Attachments ride in the event's commit as blobs under `payload/`, and the event names each (sorted by
    /// name, with its blob and size, so the id covers their content); a name given twice is refused.
    #[test]
    fn attachments_ride_under_payload_and_a_name_given_twice_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path().join("r.git")).unwrap();
        let log = Log::open(&repo, "t").unwrap();
        let mut with_files = event(1);
        with_files.files = vec![
            ("b.txt".into(), b"bee\n".to_vec()),
            ("a.txt".into(), b"a".to_vec()),
        ];
        let at = log.append(with_files).unwrap();
        let tree = repo.find_commit(at.commit).unwrap().tree().unwrap();
        let blob_of = |path: &str| -> ObjectId {
            tree.lookup_entry_by_path(path)
                .unwrap()
                .unwrap_or_else(|| panic!("{path} is in the commit"))
                .object_id()
        };
        let (a, b) = (blob_of("payload/a.txt"), blob_of("payload/b.txt"));
        assert_eq!(repo.find_blob(a).unwrap().data, b"a");
        assert_eq!(repo.find_blob(b).unwrap().data, b"bee\n");
        let (events, _) = log.read_all().unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(
            events[0].event.payload,
            [
                PayloadRef {
                    name: "a.txt".into(),
                    blob: a.to_string(),
                    size: 1,
                },
                PayloadRef {
                    name: "b.txt".into(),
                    blob: b.to_string(),
                    size: 4,
                },
            ]
        );
        assert_eq!(events[0].id, at.id);

        let mut twice = event(2);
        twice.files = vec![
            ("a.txt".into(), b"1".to_vec()),
            ("a.txt".into(), b"2".to_vec()),
        ];
        match log.append(twice) {
            Err(Error::Usage(m)) => assert_eq!(m, r#"attachment "a.txt" given twice"#),
            other => panic!("expected a usage error, got {other:?}"),
        }
        assert_eq!(log.local_tip().unwrap(), Some(at.commit));
    }

    /// The wait between attempts doubles from 0.2 ms to its cap of 25.6 ms (attempt 7 on), each draw
    /// jittered over ±50 % of it, so that racing writers spread out. 1,000 draws per attempt: the odds that
    /// none falls in the lowest or the highest tenth of the range are below 10^-45.
    #[test]
    fn backoff_doubles_to_its_cap_and_spreads_over_half_either_side() {
        for attempt in 1..=10u32 {
            let base = 200u64 << attempt.min(7);
            let draws: Vec<u64> = (0..1000)
                .map(|_| backoff(attempt).as_micros() as u64)
                .collect();
            let (min, max) = (*draws.iter().min().unwrap(), *draws.iter().max().unwrap());
            assert!(
                min >= base / 2 && max <= base * 3 / 2,
                "attempt {attempt}: {min}..{max} µs, not within ±50 % of {base}"
            );
            assert!(
                min < base * 6 / 10 && max > base * 14 / 10,
                "attempt {attempt}: {min}..{max} µs does not spread over ±50 % of {base}"
            );
        }
    }
}
