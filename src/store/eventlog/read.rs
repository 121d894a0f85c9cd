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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::eventlog::test_support::{commit_on, event};
    use std::hash::BuildHasher;

    /// An id hashes as its first eight bytes (it is a sha256 digest: already uniform), and a later write
    /// (a length) is mixed in, rotated; in a set, distinct ids hash apart. With every id in one bucket the
    /// sets of a replay of a million events would be quadratic.
    #[test]
    fn an_id_hashes_as_its_first_eight_bytes_and_ids_hash_apart() {
        let id = EventId::of(b"some event");
        let first = u64::from_le_bytes(id.0[..8].try_into().unwrap());
        let mut h = IdHasher::default();
        h.write(&id.0);
        assert_eq!(h.finish(), first);
        let mut h = IdHasher::default();
        h.write(&[0xff; 8]);
        h.write(&id.0);
        assert_eq!(h.finish(), u64::MAX.rotate_left(5) ^ first);
        let build = BuildHasherDefault::<IdHasher>::default();
        let hashes: HashSet<u64> = (0..10_000u32)
            .map(|i| build.hash_one(EventId::of(&i.to_le_bytes())))
            .collect();
        assert_eq!(hashes.len(), 10_000);
    }

    /// A log `A`, `B` and `C` on it, their join `J`, and a commit that is not an event on top (`G`).
    struct Forked {
        a: crate::store::eventlog::Appended,
        b: crate::store::eventlog::Appended,
        c: crate::store::eventlog::Appended,
        j: ObjectId,
        g: ObjectId,
    }

    fn forked(log: &Log<'_>) -> Forked {
        let a = log.write_detached(None, vec![event(1)]).unwrap()[0];
        let b = log.write_detached(Some(a.commit), vec![event(2)]).unwrap()[0];
        let c = log.write_detached(Some(a.commit), vec![event(3)]).unwrap()[0];
        let j = log.join(b.commit, c.commit).unwrap().tip();
        let g = commit_on(log.repo, b"not an event\n", vec![j]);
        Forked { a, b, c, j, g }
    }

    /// A scan finds every event below its tips, names the commits that are not events, and counts the
    /// commits it walked and the joins; above hidden tips it stops, and names each hidden commit it
    /// reached as a parent, once.
    #[test]
    fn a_scan_counts_what_it_walked_and_names_the_hidden_parents_it_reached() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path().join("r.git")).unwrap();
        let log = Log::open(&repo, "t").unwrap();
        let f = forked(&log);
        let ids = |scan: &Scan| {
            let mut ids: Vec<EventId> = scan.events.iter().map(|e| e.id).collect();
            ids.sort();
            ids
        };
        let sorted = |mut v: Vec<EventId>| {
            v.sort();
            v
        };

        let all = log.scan(&[f.g], &[], false).unwrap();
        assert_eq!(ids(&all), sorted(vec![f.a.id, f.b.id, f.c.id]));
        assert_eq!((all.commits, all.merges), (5, 1));
        assert_eq!(all.invalid.len(), 1);
        assert_eq!(all.invalid[0].commit, f.g);
        assert!(all.hidden_reached.is_empty());
        let b = all.events.iter().find(|e| e.id == f.b.id).unwrap();
        assert_eq!((b.lamport, b.commit), (2, f.b.commit));

        // Above A: B and C (both on A) and their join; A reached, named once.
        let above = log.scan(&[f.j], &[f.a.commit], false).unwrap();
        assert_eq!(ids(&above), sorted(vec![f.b.id, f.c.id]));
        assert_eq!((above.commits, above.merges), (3, 1));
        assert_eq!(above.hidden_reached, [f.a.commit]);
        assert!(above.invalid.is_empty());

        assert_eq!(log.scan(&[], &[], false).unwrap().commits, 0);
    }

    /// `read_all` reads from the local ref (and fetched copies), in the total order: clock, then id.
    #[test]
    fn read_all_gives_the_events_in_the_total_order_and_the_invalid_commits() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path().join("r.git")).unwrap();
        let log = Log::open(&repo, "t").unwrap();
        let f = forked(&log);
        assert!(crate::store::refs::cas(&repo, "refs/jules/t", None, f.g, "test").unwrap());
        let (events, invalid) = log.read_all().unwrap();
        let mut clock2 = [f.b.id, f.c.id];
        clock2.sort();
        assert_eq!(
            events.iter().map(|e| (e.lamport, e.id)).collect::<Vec<_>>(),
            [(1, f.a.id), (2, clock2[0]), (2, clock2[1])]
        );
        assert_eq!(invalid.len(), 1);
        assert_eq!(invalid[0].commit, f.g);
    }

    /// The clock an append continues from: the tip's own when it is an event or a join; the largest
    /// clock below when the tip is anything else (a commit that is not an event, an event whose id does
    /// not match its JSON, a clock beyond the bound).
    #[test]
    fn the_clock_at_a_tip_is_its_own_or_the_largest_below_it() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path().join("r.git")).unwrap();
        let log = Log::open(&repo, "t").unwrap();
        let f = forked(&log);
        let d = log
            .write_detached(Some(f.c.commit), vec![event(4)])
            .unwrap()[0];
        assert_eq!(log.lamport_at(f.a.commit).unwrap(), 1);
        assert_eq!(log.lamport_at(d.commit).unwrap(), 3);
        assert_eq!(log.lamport_at(f.j).unwrap(), 2);
        assert_eq!(log.lamport_at(f.g).unwrap(), 2);
        // A join that claims a clock far above its parents' is taken at its word (joins are not checked).
        let high = commit_on(
            &repo,
            &super::super::event::merge_message(40),
            vec![f.b.commit, d.commit],
        );
        assert_eq!(log.lamport_at(high).unwrap(), 40);
        // An event whose claimed id is not its JSON's: not trusted, the walk below it answers.
        let e = event(5).event;
        let canonical = e.canonical().unwrap();
        let forged = super::super::event::event_message(
            &e.kind,
            &canonical,
            &EventId::of(b"another event"),
            1000,
            None,
        );
        let forged = commit_on(&repo, &forged, vec![d.commit]);
        assert_eq!(log.lamport_at(forged).unwrap(), 3);
        // A clock at the bound is refused as a clock: the walk below answers.
        let beyond = String::from_utf8(super::super::event::merge_message(7))
            .unwrap()
            .replace(": 7", &format!(": {MAX_LAMPORT}"));
        assert!(beyond.contains(&MAX_LAMPORT.to_string()));
        let beyond = commit_on(&repo, beyond.as_bytes(), vec![f.j, d.commit]);
        assert_eq!(log.lamport_at(beyond).unwrap(), 3);
    }
}
