//! Reading a log: walk the commits, decode the events, and put them in the one total order.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use gix::objs::FindExt;
use gix::ObjectId;

use super::event::{decode_event, decode_json, parse_message, Event, EventId, Framed, Invalid};
use super::walk::{classify, parallel_walk, Classified};
use super::Log;
use crate::kit::error::Result;

pub use super::event::MAX_LAMPORT;

/// An event as it sits in a log.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedEvent {
    pub id: EventId,
    pub lamport: u64,
    /// The commit that carries it (the first in the total order if the event was appended twice).
    pub commit: ObjectId,
    pub event: Event,
}

impl LoggedEvent {
    /// The sort key of the total order: Lamport clock, then id.
    pub fn key(&self) -> (u64, EventId) {
        (self.lamport, self.id)
    }
}

/// A commit on a log that is not a valid event; readers skip it and report it.
#[derive(Debug, Clone)]
pub struct InvalidCommit {
    pub commit: ObjectId,
    pub reason: Invalid,
}

/// What one walk over a log's commits found.
#[derive(Debug, Default)]
pub struct Scan {
    pub events: Vec<LoggedEvent>,
    pub invalid: Vec<InvalidCommit>,
    pub merges: usize,
    pub commits: usize,
    /// The hidden commits that are parents of walked commits: the old tips the new history builds on.
    pub hidden_reached: Vec<ObjectId>,
}

impl Scan {
    /// Sort into the total order and drop repeated ids, keeping each event's first place.
    pub fn into_ordered(self) -> (Vec<LoggedEvent>, Vec<InvalidCommit>) {
        (order(self.events), self.invalid)
    }
}

/// Sort by (lamport, id, commit) and keep the first occurrence of every id.
pub fn order(mut events: Vec<LoggedEvent>) -> Vec<LoggedEvent> {
    events.sort_unstable_by_key(|e| (e.lamport, e.id, e.commit));
    let mut seen: IdSet = HashSet::with_capacity_and_hasher(events.len(), Default::default());
    events.retain(|e| seen.insert(e.id));
    events
}

/// A set of event ids. Ids are sha256 digests, already uniformly distributed: hashing them again is waste.
pub type IdSet = HashSet<EventId, BuildHasherDefault<IdHasher>>;

#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // `[u8; 32]` hashes as its bytes; take the first eight (later writes, e.g. a length, are mixed in).
        for chunk in bytes.chunks(8) {
            let mut buf = [0u8; 8];
            buf[..chunk.len()].copy_from_slice(chunk);
            self.0 = self.0.rotate_left(5) ^ u64::from_le_bytes(buf);
            if bytes.len() >= 8 {
                break;
            }
        }
    }
}

impl Log<'_> {
    /// Walk every commit reachable from `tips` but not from `hidden`, in no particular order.
    /// `strict` additionally checks the canonical form and the parent structure (fsck).
    ///
    /// The walk (cheap with a commit-graph) runs on this thread; inflating and decoding the commits, which is
    /// most of the cost, runs on one worker per core.
    pub fn scan(&self, tips: &[ObjectId], hidden: &[ObjectId], strict: bool) -> Result<Scan> {
        let mut scan = Scan::default();
        if tips.is_empty() {
            return Ok(scan);
        }
        let (mut commits, mut hidden_reached) = (0, Vec::new());
        let parts = parallel_walk(
            self.repo,
            tips,
            hidden,
            |_, parents| {
                commits += 1;
                for p in parents {
                    if hidden.contains(p) && !hidden_reached.contains(p) {
                        hidden_reached.push(*p);
                    }
                }
            },
            |_, mut commits, batches| -> Result<Scan> {
                let mut part = Scan::default();
                let mut buf = Vec::new();
                while let Some(batch) = batches.next() {
                    for walked in batch {
                        let message = commits.message(&walked, &mut buf)?;
                        decode_commit(message, walked.id, walked.parents, strict, &mut part);
                    }
                }
                Ok(part)
            },
        )?;
        scan.commits = commits;
        scan.hidden_reached = hidden_reached;
        for part in parts {
            scan.events.extend(part.events);
            scan.invalid.extend(part.invalid);
            scan.merges += part.merges;
        }
        scan.invalid.sort_by_key(|a| a.commit);
        Ok(scan)
    }

    /// All events reachable from the log's tips (local and remote-tracking), in the total order.
    pub fn read_all(&self) -> Result<(Vec<LoggedEvent>, Vec<InvalidCommit>)> {
        let tips = self.tips()?;
        Ok(self.scan(&tips, &[], false)?.into_ordered())
    }

    /// The Lamport clock to continue from at `tip`: cheap when the tip is a valid commit of the log,
    /// a full walk when somebody pushed something else on top.
    pub(crate) fn lamport_at(&self, tip: ObjectId) -> Result<u64> {
        let mut buf = Vec::new();
        let commit = self
            .repo
            .objects
            .find_commit(&tip, &mut buf)
            .map_err(|e| crate::Error::wrap(format!("reading commit {tip}"), e))?;
        // Trust the tip's clock only if it is a valid event (cheap: one hash, one small parse); anything
        // else pushed on top, forged clocks included, costs a walk instead.
        let trusted = match parse_message(commit.message) {
            Ok(Framed::Event {
                json,
                lamport,
                claimed_id,
                ..
            }) => decode_event(json, claimed_id, false).ok().map(|_| lamport),
            Ok(Framed::Merge { lamport }) => Some(lamport),
            Err(_) => None,
        };
        match trusted.filter(|l| *l < MAX_LAMPORT) {
            Some(lamport) => Ok(lamport),
            None => {
                let scan = self.scan(&[tip], &[], false)?;
                // Events beyond the bound are invalid (skipped by the scan): they never block writers.
                Ok(scan.events.iter().map(|e| e.lamport).max().unwrap_or(0))
            }
        }
    }
}

/// Read one commit of a log and file it as an event, a merge, or an invalid commit.
fn decode_commit(message: &[u8], id: ObjectId, parents: usize, strict: bool, out: &mut Scan) {
    let reason = match classify(message, strict.then_some(parents)) {
        Classified::Merge => {
            out.merges += 1;
            return;
        }
        Classified::Event {
            json,
            lamport,
            id: eid,
        } => match decode_json(json, strict) {
            Ok(event) => {
                out.events.push(LoggedEvent {
                    id: eid,
                    lamport,
                    commit: id,
                    event,
                });
                return;
            }
            Err(reason) => reason,
        },
        Classified::Invalid(reason) => reason,
    };
    out.invalid.push(InvalidCommit { commit: id, reason });
}
