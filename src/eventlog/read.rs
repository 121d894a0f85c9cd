//! Reading a log: walk the commits, decode the events, and put them in the one total order.

use std::collections::HashSet;

use gix::objs::FindExt;
use gix::ObjectId;

use super::event::{decode_event, parse_message, Event, EventId, Framed, Invalid};
use super::Log;
use crate::error::Result;

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
    /// The parents of the walked commits that were not themselves walked: where the walk stopped.
    pub boundary_parents: HashSet<ObjectId>,
}

impl Scan {
    /// Sort into the total order and drop repeated ids, keeping each event's first place.
    pub fn into_ordered(self) -> (Vec<LoggedEvent>, Vec<InvalidCommit>) {
        (order(self.events), self.invalid)
    }
}

/// Sort by (lamport, id, commit) and keep the first occurrence of every id.
pub fn order(mut events: Vec<LoggedEvent>) -> Vec<LoggedEvent> {
    events.sort_unstable_by_key(|a| (a.lamport, a.id, a.commit));
    let mut seen = HashSet::with_capacity(events.len());
    events.retain(|e| seen.insert(e.id));
    events
}

impl Log<'_> {
    /// Walk every commit reachable from `tips` but not from `hidden`, in no particular order.
    /// `strict` additionally checks the canonical form and the parent structure (fsck).
    pub fn scan(&self, tips: &[ObjectId], hidden: &[ObjectId], strict: bool) -> Result<Scan> {
        let mut scan = Scan::default();
        if tips.is_empty() {
            return Ok(scan);
        }
        let walk = self
            .repo
            .rev_walk(tips.iter().copied())
            .with_hidden(hidden.iter().copied())
            .all()?;
        let mut buf = Vec::new();
        let mut walked = HashSet::new();
        for info in walk {
            let info = info?;
            scan.commits += 1;
            let id = info.id;
            walked.insert(id);
            let parents: Vec<ObjectId> = info.parent_ids.iter().copied().collect();
            scan.boundary_parents.extend(parents.iter().copied());
            let commit = self
                .repo
                .objects
                .find_commit(&id, &mut buf)
                .map_err(|e| crate::Error::Other(format!("reading commit {id}: {e}")))?;
            match parse_message(commit.message) {
                Ok(Framed::Merge { .. }) => {
                    if strict && parents.len() < 2 {
                        scan.invalid.push(InvalidCommit {
                            commit: id,
                            reason: Invalid::NotAnEvent(
                                "merge commit with fewer than two parents".into(),
                            ),
                        });
                    } else {
                        scan.merges += 1;
                    }
                }
                Ok(Framed::Event {
                    json,
                    lamport,
                    claimed_id,
                }) => {
                    if strict && parents.len() > 1 {
                        scan.invalid.push(InvalidCommit {
                            commit: id,
                            reason: Invalid::NotAnEvent(format!(
                                "event commit with {} parents",
                                parents.len()
                            )),
                        });
                        continue;
                    }
                    match decode_event(json, claimed_id, strict) {
                        Ok((eid, event)) => scan.events.push(LoggedEvent {
                            id: eid,
                            lamport,
                            commit: id,
                            event,
                        }),
                        Err(reason) => scan.invalid.push(InvalidCommit { commit: id, reason }),
                    }
                }
                Err(reason) => scan.invalid.push(InvalidCommit { commit: id, reason }),
            }
        }
        scan.boundary_parents.retain(|p| !walked.contains(p));
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
            .map_err(|e| crate::Error::Other(format!("reading commit {tip}: {e}")))?;
        match parse_message(commit.message) {
            Ok(Framed::Event { lamport, .. }) | Ok(Framed::Merge { lamport }) => Ok(lamport),
            Err(_) => {
                let scan = self.scan(&[tip], &[], false)?;
                Ok(scan.events.iter().map(|e| e.lamport).max().unwrap_or(0))
            }
        }
    }
}
