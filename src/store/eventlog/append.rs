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
            if attempt >= MAX_ATTEMPTS || started.elapsed() > MAX_TOTAL_WAIT {
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
