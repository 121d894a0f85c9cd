//! The full replay in bounded memory: every event reachable from the tips, folded in the total order,
//! without holding the events (or even their JSON) in memory.
//!
//! The order is only known once every commit is read, so the walk keeps, per event, only its place in the
//! order and where the rest is: (lamport, id, spill position), 48 bytes. The event's JSON and its commit id
//! go to a spill: a buffer per decoding thread that, once past [`SPILL_AT`] bytes, moves to an unnamed
//! temporary file under `.git/jules/tmp` (removed by the kernel when the process ends, however it ends).
//! After the sort (each thread sorts its own keys), events are read back in order a chunk at a time, with
//! neighbouring bytes read in one call: chunk i by thread i % threads, which parses it while this thread
//! folds the chunks before it, in order. What stays in memory is the keys and the sorted ids the cache
//! keeps (80 bytes per event) plus one chunk, whatever the size of the events: less than `git log` holds
//! for the same commits (docs/benchmarks-coldstart.md).

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use gix::ObjectId;

use super::event::{decode_json, EventId};
use super::read::{IdSet, InvalidCommit, LoggedEvent};
use super::walk::{classify, parallel_walk, Batches, Classified, Commits};
use super::Log;
use crate::kit::error::{Error, Result, ResultExt};

/// A decoding thread keeps up to this many JSON bytes in memory before it spills them to a file.
pub const SPILL_AT: usize = 1024 * 1024;

/// Events are read back, parsed and folded this many at a time.
const FOLD_CHUNK: usize = 4 * 1024;

/// Reads of spilled bytes closer than this are merged into one read.
const MERGE_GAP: u64 = 4096;

/// What a [`Log::replay`] read, beside the events it handed to the fold.
#[derive(Debug, Default)]
pub struct Replayed {
    pub commits: usize,
    pub merges: usize,
    pub invalid: Vec<InvalidCommit>,
    /// Every folded id, sorted (what the cache keeps to fold later events exactly once).
    pub ids: Vec<EventId>,
    /// The largest (lamport, id) folded.
    pub max_key: Option<(u64, EventId)>,
    /// How many JSON bytes went to spill files (0: the log was small enough to stay in memory).
    pub spilled: u64,
    /// How many commits were inflated straight from their pack (the rest went through the object
    /// database: loose, stored as deltas, or no commit-graph).
    pub from_packs: usize,
}

/// An event between the walk and the fold: its place in the order and where its record is in which spill.
/// A record is the JSON's length (4 bytes, little-endian), the JSON, then the commit id.
struct Key {
    lamport: u64,
    id: EventId,
    /// The spill's index in the top 8 bits, the record's offset in it below.
    place: u64,
}

const OFFSET_BITS: u32 = 56;

impl Key {
    /// The total order: Lamport clock, then id. Copies of one event (one id at one clock, on two commits)
    /// are next to each other; the fold takes the smallest commit of them (see `Log::replay_with`).
    fn order(&self) -> (u64, EventId) {
        (self.lamport, self.id)
    }

    fn spill(&self) -> usize {
        (self.place >> OFFSET_BITS) as usize
    }

    fn at(&self) -> u64 {
        self.place & ((1 << OFFSET_BITS) - 1)
    }
}

/// The keys of every run, each run sorted, in the total order (a k-way merge; runs are one per core).
struct Merge<'a> {
    runs: Vec<&'a [Key]>,
}

impl<'a> Merge<'a> {
    fn new(runs: &'a [Vec<Key>]) -> Self {
        Merge {
            runs: runs.iter().map(Vec::as_slice).collect(),
        }
    }
}

impl<'a> Iterator for Merge<'a> {
    type Item = &'a Key;

    fn next(&mut self) -> Option<&'a Key> {
        let best = (0..self.runs.len())
            .filter(|&i| !self.runs[i].is_empty())
            .min_by_key(|&i| self.runs[i][0].order())?;
        let (first, rest) = self.runs[best].split_first()?;
        self.runs[best] = rest;
        Some(first)
    }
}

/// One decoding thread's JSON bytes: in memory, then appended to an unnamed file.
struct Spill {
    dir: Option<PathBuf>,
    limit: usize,
    buf: Vec<u8>,
    file: Option<File>,
    /// Bytes already in the file; the buffer holds what follows.
    flushed: u64,
}

impl Spill {
    fn new(dir: Option<PathBuf>, limit: usize) -> Spill {
        Spill {
            dir,
            limit,
            buf: Vec::new(),
            file: None,
            flushed: 0,
        }
    }

    /// Append the record of an event; its offset.
    fn push(&mut self, json: &[u8], commit: &ObjectId) -> Result<u64> {
        let at = self.flushed + self.buf.len() as u64;
        self.buf
            .extend_from_slice(&(json.len() as u32).to_le_bytes());
        self.buf.extend_from_slice(json);
        self.buf.extend_from_slice(commit.as_bytes());
        if self.buf.len() >= self.limit {
            self.flush()?;
        }
        Ok(at)
    }

    fn flush(&mut self) -> Result<()> {
        if self.file.is_none() {
            let Some(dir) = &self.dir else {
                return Ok(()); // nowhere to spill: the bytes stay in memory
            };
            match create_spill_file(dir) {
                Ok(f) => self.file = Some(f),
                // A repository we cannot write to costs memory, never the answer.
                Err(_) => {
                    self.dir = None;
                    return Ok(());
                }
            }
        }
        if let Some(f) = self.file.as_mut() {
            f.write_all(&self.buf)
                .context(|| "writing the replay's spill file".into())?;
            self.flushed += self.buf.len() as u64;
            self.buf.clear();
        }
        Ok(())
    }

    /// Append the bytes `[at, at + len)` to `out`.
    fn read(&self, at: u64, len: usize, out: &mut Vec<u8>) -> Result<()> {
        let mut at = at;
        let mut len = len;
        if at < self.flushed {
            let from_file = len.min((self.flushed - at) as usize);
            let start = out.len();
            out.resize(start + from_file, 0);
            let file = self
                .file
                .as_ref()
                .ok_or_else(|| Error::Other("a spilled replay lost its file".into()))?;
            file.read_exact_at(&mut out[start..], at)
                .context(|| "reading the replay's spill file".into())?;
            at += from_file as u64;
            len -= from_file;
        }
        if len > 0 {
            let start = (at - self.flushed) as usize;
            out.extend_from_slice(&self.buf[start..start + len]);
        }
        Ok(())
    }
}

/// An unnamed file in `dir` (`O_TMPFILE` where the file system has it): nothing is left behind, also when
/// the process is killed.
fn create_spill_file(dir: &Path) -> std::io::Result<File> {
    std::fs::create_dir_all(dir)?;
    tempfile::tempfile_in(dir)
}

impl Log<'_> {
    /// Fold every event reachable from `tips` into `apply`, in the total order, in bounded memory (see the
    /// module's documentation). Events are read on every core; `apply` runs on this thread.
    pub fn replay(&self, tips: &[ObjectId], apply: impl FnMut(&LoggedEvent)) -> Result<Replayed> {
        let dir = crate::kit::repo::jules_dir(self.repo).join("tmp");
        self.replay_with(tips, Some(dir), SPILL_AT, apply)
    }

    /// [`Log::replay`] with the spill's place (`None`: keep everything in memory) and threshold.
    pub fn replay_with(
        &self,
        tips: &[ObjectId],
        spill_dir: Option<PathBuf>,
        spill_at: usize,
        mut apply: impl FnMut(&LoggedEvent),
    ) -> Result<Replayed> {
        let mut out = Replayed::default();
        if tips.is_empty() {
            return Ok(out);
        }
        // Each decoding thread's keys stay in their own vector (sorted there, merged while folding): one
        // vector of all keys would need a second copy of them while it is assembled.
        let mut runs: Vec<Vec<Key>> = Vec::new();
        let mut spills: Vec<Spill> = Vec::new();
        let mut commits = 0;
        let reads = parallel_walk(
            self.repo,
            tips,
            &[],
            |_, _| commits += 1,
            |w, commits, batches| {
                read_commits(
                    commits,
                    batches,
                    w as u8,
                    Spill::new(spill_dir.clone(), spill_at),
                )
            },
        )?;
        out.commits = commits;
        // The events are parsed on as many threads as decoded them.
        let workers = reads.len().max(1);
        for read in reads {
            runs.push(read.keys);
            out.invalid.extend(read.invalid);
            out.merges += read.merges;
            out.from_packs += read.from_packs;
            spills.push(read.spill);
        }
        out.spilled = spills.iter().map(|s| s.flushed).sum();
        // Ids appended more than once (rare): only their first place in the order is folded.
        let mut ids = sorted_ids(&runs, workers);
        let repeated: IdSet = ids
            .windows(2)
            .filter(|w| w[0] == w[1])
            .map(|w| w[0])
            .collect();
        ids.dedup();
        let mut seen = IdSet::default();
        let mut bad_ids = IdSet::default();
        let hash_len = self.repo.object_hash().len_in_bytes();
        let mut merged = Merge::new(&runs).peekable();
        let mut next_chunk = || next_chunk(&mut merged, FOLD_CHUNK);
        // Chunk i is read back and parsed by thread i % workers while this thread folds the ones before it,
        // in order; a folded chunk goes back to its thread to be dropped there.
        std::thread::scope(|s| -> Result<()> {
            let spills = &spills;
            let mut jobs = Vec::with_capacity(workers);
            let mut results = Vec::with_capacity(workers);
            for _ in 0..workers {
                let (job_tx, job_rx) = std::sync::mpsc::channel::<(Vec<&Key>, Vec<Parsed>)>();
                let (result_tx, result_rx) = std::sync::mpsc::channel::<Result<Vec<Parsed>>>();
                s.spawn(move || {
                    let mut arena = Vec::new();
                    for (chunk, folded) in job_rx {
                        drop(folded);
                        let parsed = gather(&chunk, spills, hash_len, &mut arena).map(|places| {
                            let mut parsed = parse_chunk(&chunk, &places, &arena, hash_len);
                            smallest_commit_first(&chunk, &mut parsed);
                            parsed
                        });
                        if result_tx.send(parsed).is_err() {
                            break;
                        }
                    }
                });
                jobs.push(job_tx);
                results.push(result_rx);
            }
            let (mut sent, mut done, mut exhausted) = (0, 0, false);
            let mut folded = Vec::new();
            loop {
                // Two chunks in flight per thread: one parsed while the other waits to be folded.
                while !exhausted && sent < done + 2 * workers {
                    match next_chunk() {
                        Some(chunk) => {
                            let old = std::mem::take(&mut folded);
                            // A thread that is gone panicked: its result's absence says so below.
                            let _ = jobs[sent % workers].send((chunk, old));
                            sent += 1;
                        }
                        None => exhausted = true,
                    }
                }
                if done == sent {
                    return Ok(());
                }
                let parsed = results[done % workers].recv().map_err(|_| {
                    Error::Other("a replay worker panicked while decoding events (a bug)".into())
                })??;
                done += 1;
                for r in &parsed {
                    match r {
                        Ok(e) => {
                            if repeated.contains(&e.id) && !seen.insert(e.id) {
                                continue;
                            }
                            out.max_key = Some(e.key());
                            apply(e);
                        }
                        Err((id, bad)) => {
                            // Same bytes, same id: every copy of this id is equally invalid.
                            bad_ids.insert(*id);
                            out.invalid.push(bad.clone());
                        }
                    }
                }
                folded = parsed;
            }
        })?;
        if !bad_ids.is_empty() {
            ids.retain(|id| !bad_ids.contains(id));
        }
        out.invalid.sort_by_key(|a| a.commit);
        out.ids = ids;
        Ok(out)
    }
}

/// What one decoding thread read.
struct Read {
    keys: Vec<Key>,
    invalid: Vec<InvalidCommit>,
    merges: usize,
    from_packs: usize,
    spill: Spill,
}

/// Decode the commits of the batches: keys for events whose id checks out, their JSON to `spill`.
fn read_commits(
    mut commits: Commits<'_>,
    batches: Batches<'_>,
    worker: u8,
    mut spill: Spill,
) -> Result<Read> {
    // Every commit is read once: a cache of objects would only hold memory.
    commits.repo.object_cache_size(0);
    let (mut keys, mut invalid, mut merges) = (Vec::new(), Vec::new(), 0);
    let mut buf = Vec::new();
    while let Some(batch) = batches.next() {
        for walked in batch {
            let id = walked.id;
            let message = commits.message(&walked, &mut buf)?;
            // The id is checked here (the order and the duplicates depend on it); the JSON is parsed when
            // it is folded.
            match classify(message, None) {
                Classified::Merge => merges += 1,
                Classified::Event {
                    json,
                    lamport,
                    id: eid,
                } => {
                    let at = spill.push(json, &id)?;
                    if at >> OFFSET_BITS != 0 {
                        return Err(Error::Other("a replay spill over 64 PiB".into()));
                    }
                    keys.push(Key {
                        lamport,
                        id: eid,
                        place: (u64::from(worker) << OFFSET_BITS) | at,
                    });
                }
                Classified::Invalid(reason) => invalid.push(InvalidCommit { commit: id, reason }),
            }
        }
    }
    // Each run is sorted here, on its own thread, while the other threads sort theirs.
    keys.shrink_to_fit();
    keys.sort_unstable_by_key(Key::order);
    Ok(Read {
        keys,
        invalid,
        merges,
        from_packs: commits.from_packs,
        spill,
    })
}

/// Read the records of `chunk`'s events into `arena` (cleared first), records of one spill that lie close
/// together in one read; returns where each event's JSON is in the arena, `(start, len)`, in `chunk`'s order
/// (its commit id follows it).
fn gather(
    chunk: &[&Key],
    spills: &[Spill],
    hash_len: usize,
    arena: &mut Vec<u8>,
) -> Result<Vec<(usize, usize)>> {
    arena.clear();
    let mut by_place: Vec<usize> = (0..chunk.len()).collect();
    by_place.sort_unstable_by_key(|&i| chunk[i].place);
    let mut places = vec![(0usize, 0usize); chunk.len()];
    let mut header = Vec::with_capacity(4);
    let mut i = 0;
    while i < by_place.len() {
        let first = chunk[by_place[i]];
        let spill = &spills[first.spill()];
        let mut last = first;
        let mut j = i + 1;
        while j < by_place.len() {
            let k = chunk[by_place[j]];
            if k.spill() != first.spill() || k.at() > last.at() + MERGE_GAP {
                break;
            }
            last = k;
            j += 1;
        }
        // The span ends with the last record, whose length its header says.
        header.clear();
        spill.read(last.at(), 4, &mut header)?;
        let end = last.at() + 4 + u64::from(record_len(&header)?) + hash_len as u64;
        let base = arena.len();
        spill.read(first.at(), (end - first.at()) as usize, arena)?;
        for &e in &by_place[i..j] {
            let start = base + (chunk[e].at() - first.at()) as usize;
            let len = record_len(&arena[start..])? as usize;
            if start + 4 + len + hash_len > arena.len() {
                return Err(Error::Other(
                    "a replay spill record runs past its read".into(),
                ));
            }
            places[e] = (start + 4, len);
        }
        i = j;
    }
    Ok(places)
}

fn record_len(bytes: &[u8]) -> Result<u32> {
    let head: [u8; 4] = bytes
        .get(..4)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| Error::Other("a truncated replay spill record".into()))?;
    Ok(u32::from_le_bytes(head))
}

/// The next chunk of keys in the order: `size` of them, and after those every further copy of the last
/// one's event. Copies of one event stay in one chunk, so that the smallest commit of them can be chosen
/// ([`smallest_commit_first`] sees one chunk at a time).
fn next_chunk<'a>(
    merged: &mut std::iter::Peekable<impl Iterator<Item = &'a Key>>,
    size: usize,
) -> Option<Vec<&'a Key>> {
    let mut chunk: Vec<&Key> = Vec::with_capacity(size);
    chunk.extend(merged.by_ref().take(size));
    while let (Some(last), Some(next)) = (chunk.last(), merged.peek()) {
        if last.order() != next.order() {
            break;
        }
        chunk.push(merged.next().expect("peeked"));
    }
    (!chunk.is_empty()).then_some(chunk)
}

/// Among copies of one event (one id at one clock, appended on two replicas), the one folded must be the
/// same on every replica: put the smallest commit first. Invalid copies are left as they are.
fn smallest_commit_first(chunk: &[&Key], parsed: &mut [Parsed]) {
    let mut i = 0;
    while i < chunk.len() {
        let mut j = i + 1;
        while j < chunk.len() && chunk[j].order() == chunk[i].order() {
            j += 1;
        }
        if j - i > 1 {
            parsed[i..j].sort_by_key(|p| match p {
                Ok(e) => (0, e.commit),
                Err((_, bad)) => (1, bad.commit),
            });
        }
        i = j;
    }
}

type Parsed = std::result::Result<LoggedEvent, (EventId, InvalidCommit)>;

/// Parse a chunk's events, in the chunk's order.
fn parse_chunk(
    chunk: &[&Key],
    places: &[(usize, usize)],
    arena: &[u8],
    hash_len: usize,
) -> Vec<Parsed> {
    chunk
        .iter()
        .zip(places)
        .map(|(k, &(start, len))| {
            let commit = ObjectId::from_bytes_or_panic(&arena[start + len..start + len + hash_len]);
            // The walk checked the id against these bytes.
            match decode_json(&arena[start..start + len], false) {
                Ok(event) => Ok(LoggedEvent {
                    id: k.id,
                    lamport: k.lamport,
                    commit,
                    event,
                }),
                Err(reason) => Err((k.id, InvalidCommit { commit, reason })),
            }
        })
        .collect()
}

/// Every id of `runs`, sorted. Ids are hashes: split by their first byte into one range per thread, about
/// even, each sorted on its own thread, first by their leading 8 bytes as a number (no `memcmp` per
/// comparison).
fn sorted_ids(runs: &[Vec<Key>], threads: usize) -> Vec<EventId> {
    let threads = threads.clamp(1, 256);
    let part = |id: &EventId| usize::from(id.0[0]) * threads / 256;
    let mut counts = vec![0usize; threads];
    for k in runs.iter().flatten() {
        counts[part(&k.id)] += 1;
    }
    let mut next: Vec<usize> = counts
        .iter()
        .scan(0, |start, &n| {
            let at = *start;
            *start += n;
            Some(at)
        })
        .collect();
    let mut ids = vec![EventId([0; 32]); counts.iter().sum()];
    for k in runs.iter().flatten() {
        let p = part(&k.id);
        ids[next[p]] = k.id;
        next[p] += 1;
    }
    let lead = |id: &EventId| u64::from_be_bytes(id.0[..8].try_into().expect("8 bytes"));
    std::thread::scope(|s| {
        let mut rest = &mut ids[..];
        for n in counts {
            let (range, tail) = rest.split_at_mut(n);
            rest = tail;
            s.spawn(move || {
                range.sort_unstable_by(|a, b| lead(a).cmp(&lead(b)).then_with(|| a.cmp(b)))
            });
        }
    });
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spilled_records_read_back_across_the_file_and_the_buffer() {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = Spill::new(Some(dir.path().to_owned()), 64);
        let commit = ObjectId::empty_tree(gix::hash::Kind::Sha1);
        let mut places = Vec::new();
        for i in 0..200u32 {
            let text = format!(
                "{{\"event\":{i},\"pad\":\"{}\"}}",
                "x".repeat((i % 37) as usize)
            );
            places.push((spill.push(text.as_bytes(), &commit).unwrap(), text));
        }
        assert!(
            spill.flushed > 0 && !spill.buf.is_empty(),
            "some in the file, some in memory"
        );
        // The file is unnamed: nothing is left in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        for (at, text) in places {
            let mut out = Vec::new();
            spill.read(at, 4 + text.len() + 20, &mut out).unwrap();
            assert_eq!(record_len(&out).unwrap() as usize, text.len());
            assert_eq!(&out[4..4 + text.len()], text.as_bytes());
            assert_eq!(&out[4 + text.len()..], commit.as_bytes());
        }
    }

    #[test]
    fn without_a_place_to_spill_the_bytes_stay_in_memory() {
        let mut spill = Spill::new(None, 8);
        let commit = ObjectId::empty_tree(gix::hash::Kind::Sha1);
        let at = spill.push(b"0123456789abcdef", &commit).unwrap();
        assert_eq!(spill.flushed, 0);
        let mut out = Vec::new();
        spill.read(at + 4, 16, &mut out).unwrap();
        assert_eq!(out, b"0123456789abcdef");
    }

    /// The spilled replay folds exactly what the in-memory one folds, in the same order, with the same ids,
    /// keys and invalid commits, on a log with duplicates (an event appended twice), merges and garbage.
    #[test]
    fn spilling_changes_nothing_but_memory() {
        use crate::store::eventlog::{Event, NewEvent};
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path().join("r.git")).unwrap();
        let log = Log::open(&repo, "t").unwrap();
        let mut twice = None;
        for i in 0..300u64 {
            let mut ev = Event::new(
                "t.x",
                "a",
                serde_json::json!({"i": i, "pad": "y".repeat((i * 13 % 400) as usize)}),
            );
            if i == 7 {
                ev.nonce = None;
                twice = Some(ev.clone());
            }
            log.append(NewEvent::new(ev)).unwrap();
        }
        let last = log.local_tip().unwrap().unwrap();
        // The same event again (same id): folded once.
        log.append(NewEvent::new(twice.unwrap())).unwrap();
        // A commit that is not an event: skipped and named.
        let tip = log.local_tip().unwrap().unwrap();
        let garbage = repo
            .commit_as(
                crate::kit::repo::committer(&repo).to_ref(&mut Default::default()),
                crate::kit::repo::committer(&repo).to_ref(&mut Default::default()),
                "refs/jules/t",
                "not an event",
                crate::store::loose::empty_tree(&repo).unwrap(),
                [tip],
            )
            .unwrap()
            .detach();
        // The same event at the same clock on a second commit (as two replicas appending one imported event
        // write it): folded once, from the smaller commit, whatever thread read which copy.
        let first = repo.find_commit(last).unwrap();
        let copy = repo
            .new_commit_as(
                crate::kit::repo::committer(&repo).to_ref(&mut Default::default()),
                crate::kit::repo::committer(&repo).to_ref(&mut Default::default()),
                first.message_raw().unwrap().to_string(),
                first.tree_id().unwrap().detach(),
                [repo
                    .find_commit(first.parent_ids().next().unwrap())
                    .unwrap()
                    .parent_ids()
                    .next()
                    .unwrap()
                    .detach()],
            )
            .unwrap()
            .id;
        assert_ne!(copy, last);
        let tips = vec![garbage, copy];
        let fold = |spill: Option<PathBuf>, at: usize| {
            let mut seen = Vec::new();
            let r = log
                .replay_with(&tips, spill, at, |e| seen.push(e.clone()))
                .unwrap();
            (seen, r)
        };
        let (in_memory, a) = fold(None, usize::MAX);
        let spill_dir = dir.path().join("spill");
        let (spilled, b) = fold(Some(spill_dir.clone()), 256);
        assert_eq!(a.spilled, 0);
        assert!(b.spilled > 0, "the small threshold spilled");
        assert_eq!(in_memory.len(), 300);
        let copied_id =
            crate::store::eventlog::event::decode_message(first.message_raw().unwrap(), false)
                .map(|d| match d {
                    crate::store::eventlog::event::Decoded::Event { id, .. } => id,
                    _ => panic!("not an event"),
                })
                .unwrap();
        let folded: Vec<_> = in_memory.iter().filter(|e| e.id == copied_id).collect();
        assert_eq!(folded.len(), 1);
        assert_eq!(folded[0].commit, last.min(copy));
        assert_eq!(in_memory, spilled);
        assert_eq!((a.ids, a.max_key, a.commits), (b.ids, b.max_key, b.commits));
        assert_eq!(a.invalid.len(), 1);
        assert_eq!(a.invalid[0].commit, b.invalid[0].commit);
        assert_eq!(
            std::fs::read_dir(&spill_dir).unwrap().count(),
            0,
            "no spill file left"
        );
    }

    /// A log whose events' JSON fits under [`SPILL_AT`] (1 MiB) is replayed without touching the disk;
    /// past the threshold its bytes go to the spill file, and the fold is the same.
    #[test]
    fn a_log_under_the_spill_threshold_stays_in_memory() {
        use crate::store::eventlog::{Event, NewEvent};
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path().join("r.git")).unwrap();
        let log = Log::open(&repo, "t").unwrap();
        for i in 0..40u64 {
            let ev = Event::new(
                "t.x",
                "a",
                serde_json::json!({"i": i, "pad": "z".repeat(2000)}),
            );
            log.append(NewEvent::new(ev)).unwrap();
        }
        let tip = log.local_tip().unwrap().unwrap();
        let mut in_memory = Vec::new();
        let r = log.replay(&[tip], |e| in_memory.push(e.id)).unwrap();
        assert_eq!(r.spilled, 0, "80 KB of JSON is not spilled");
        assert_eq!(in_memory.len(), 40);
        let mut from_file = Vec::new();
        let spill_dir = Some(dir.path().join("spill"));
        let r = log
            .replay_with(&[tip], spill_dir, 4096, |e| from_file.push(e.id))
            .unwrap();
        assert!(r.spilled > 70_000, "{}", r.spilled);
        assert_eq!(from_file, in_memory);
    }

    /// A key's place is the spill's index (top 8 bits) and the offset in it; records of several spills,
    /// near and far apart, are gathered into the arena at their places.
    #[test]
    fn places_name_their_spill_and_records_are_gathered_from_each() {
        let k = |spill: u64, at: u64| Key {
            lamport: 0,
            id: EventId([0; 32]),
            place: (spill << OFFSET_BITS) | at,
        };
        let key = k(5, 123_456);
        assert_eq!((key.spill(), key.at()), (5, 123_456));
        let key = k(255, (1 << OFFSET_BITS) - 1);
        assert_eq!((key.spill(), key.at()), (255, (1 << OFFSET_BITS) - 1));

        let commit = ObjectId::empty_tree(gix::hash::Kind::Sha1);
        let mut spills = vec![Spill::new(None, usize::MAX), Spill::new(None, usize::MAX)];
        let mut keys = Vec::new();
        for i in 0..40u64 {
            let w = (i % 2) as usize;
            // Every fifth record is long: its neighbours are more than MERGE_GAP apart.
            let text = format!(
                "{{\"i\":{i},\"pad\":\"{}\"}}",
                "p".repeat(if i % 5 == 0 { 5000 } else { 10 })
            );
            let at = spills[w].push(text.as_bytes(), &commit).unwrap();
            keys.push((k(w as u64, at), text));
        }
        // In an order unlike the spills': the gather reads by place, answers in the chunk's order.
        keys.reverse();
        let chunk: Vec<&Key> = keys.iter().map(|(k, _)| k).collect();
        let mut arena = Vec::new();
        let places = gather(&chunk, &spills, 20, &mut arena).unwrap();
        for ((_, text), (start, len)) in keys.iter().zip(places) {
            assert_eq!(&arena[start..start + len], text.as_bytes());
            assert_eq!(&arena[start + len..start + len + 20], commit.as_bytes());
        }
    }

    /// One read may start in the spill file and end in the buffer (the gather reads neighbouring records
    /// in one call): it returns the file's part, then the buffer's.
    #[test]
    fn a_read_across_the_end_of_the_file_continues_in_the_buffer() {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = Spill::new(Some(dir.path().to_owned()), 100);
        let commit = ObjectId::empty_tree(gix::hash::Kind::Sha1);
        let mut all = Vec::new();
        let mut places = Vec::new();
        for i in 0..7u32 {
            let text = format!("{{\"event\":{i}}}");
            places.push(spill.push(text.as_bytes(), &commit).unwrap());
            all.extend_from_slice(&(text.len() as u32).to_le_bytes());
            all.extend_from_slice(text.as_bytes());
            all.extend_from_slice(commit.as_bytes());
        }
        assert!(spill.flushed > 0 && !spill.buf.is_empty());
        let flushed = spill.flushed as usize;
        for &from in places.iter().filter(|&&at| (at as usize) < flushed) {
            let mut out = vec![b'x'];
            spill
                .read(from, all.len() - from as usize, &mut out)
                .unwrap();
            assert_eq!(&out[1..], &all[from as usize..], "from {from}");
        }
    }

    /// Keys in the total order: clock `l`, id from `n` (one id per `n`, so equal `n`s are copies of one event).
    fn key(l: u64, n: u8) -> Key {
        Key {
            lamport: l,
            id: EventId([n; 32]),
            place: u64::from(n),
        }
    }

    /// A chunk never ends between two copies of one event: it runs past its size until the last key's event
    /// has no more copies, and the next chunk starts with the next event.
    #[test]
    fn a_chunk_ends_after_every_copy_of_its_last_event() {
        let keys = [
            key(1, 1),
            key(2, 2),
            key(3, 3),
            key(3, 3),
            key(3, 3),
            key(4, 4),
            key(4, 5),
        ];
        let mut merged = keys.iter().peekable();
        let mut chunks = Vec::new();
        while let Some(chunk) = next_chunk(&mut merged, 3) {
            chunks.push(chunk.iter().map(|k| k.id.0[0]).collect::<Vec<_>>());
        }
        assert_eq!(chunks, [vec![1, 2, 3, 3, 3], vec![4, 5]]);
    }

    /// Within a chunk, each event's copies are put in commit order, decodable ones first; different events
    /// keep their places, whatever their commits.
    #[test]
    fn copies_of_one_event_are_put_smallest_commit_first() {
        use crate::store::eventlog::Event;
        let commit = |b: u8| ObjectId::from_bytes_or_panic(&[b; 20]);
        let ok = |k: &Key, c: u8| -> Parsed {
            Ok(LoggedEvent {
                id: k.id,
                lamport: k.lamport,
                commit: commit(c),
                event: Event::new("t.x", "a", serde_json::json!({})),
            })
        };
        let bad = |k: &Key, c: u8| -> Parsed {
            Err((
                k.id,
                InvalidCommit {
                    commit: commit(c),
                    reason: crate::store::eventlog::event::Invalid::NotCanonical,
                },
            ))
        };
        let keys = [
            key(1, 1),
            key(2, 2),
            key(2, 2),
            key(2, 2),
            key(3, 3),
            key(3, 3),
            key(4, 4),
        ];
        let chunk: Vec<&Key> = keys.iter().collect();
        let mut parsed = vec![
            ok(&keys[0], 9),
            bad(&keys[1], 1),
            ok(&keys[2], 7),
            ok(&keys[3], 3),
            ok(&keys[4], 8),
            ok(&keys[5], 2),
            ok(&keys[6], 0),
        ];
        smallest_commit_first(&chunk, &mut parsed);
        let seen: Vec<(u8, u8, bool)> = parsed
            .iter()
            .map(|p| match p {
                Ok(e) => (e.id.0[0], e.commit.as_bytes()[0], true),
                Err((id, b)) => (id.0[0], b.commit.as_bytes()[0], false),
            })
            .collect();
        assert_eq!(
            seen,
            [
                (1, 9, true),
                (2, 3, true),
                (2, 7, true),
                (2, 1, false),
                (3, 2, true),
                (3, 8, true),
                (4, 0, true)
            ]
        );
    }

    /// What a replay reports beside the fold: every commit walked, the joins among them, and an event
    /// appended twice (the same id on two commits) folded once, from its first place in the order.
    #[test]
    fn a_replay_counts_commits_and_joins_and_folds_a_repeated_event_once() {
        use crate::store::eventlog::{Event, MergeOutcome, NewEvent};
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path().join("r.git")).unwrap();
        let (t, u) = (
            Log::open(&repo, "t").unwrap(),
            Log::open(&repo, "u").unwrap(),
        );
        let mut ev = Event::new("t.x", "a", serde_json::json!({"once": true}));
        ev.nonce = None;
        t.append(NewEvent::new(ev.clone())).unwrap();
        t.append(NewEvent::new(ev.clone())).unwrap();
        let id = ev.id().unwrap();
        let ours = t.local_tip().unwrap().unwrap();
        let fold = |log: &Log<'_>, tips: &[ObjectId]| {
            let mut seen = Vec::new();
            let r = log
                .replay_with(tips, None, usize::MAX, |e| seen.push(e.id))
                .unwrap();
            (seen, r)
        };
        let (seen, r) = fold(&t, &[ours]);
        assert_eq!(seen, [id]);
        assert_eq!(r.ids, [id]);
        assert_eq!((r.commits, r.merges), (2, 0));

        u.append(NewEvent::new(Event::new("t.x", "b", serde_json::json!({}))))
            .unwrap();
        u.append(NewEvent::new(Event::new("t.x", "b", serde_json::json!({}))))
            .unwrap();
        let theirs = u.local_tip().unwrap().unwrap();
        let MergeOutcome::Merged(join) = t.join(ours, theirs).unwrap() else {
            panic!("two roots join in a merge commit");
        };
        let (seen, r) = fold(&t, &[join]);
        assert_eq!(seen.len(), 3);
        assert_eq!((r.commits, r.merges), (5, 1));
    }

    /// Chunks are parsed on several threads and folded in order: on a log of three chunks and more (a
    /// chunk is [`FOLD_CHUNK`] events), chunk i goes to thread i % workers and its result is taken from
    /// that thread in turn, so the fold sees every event once, in the total order.
    #[test]
    fn chunks_parsed_on_several_threads_are_folded_in_order() {
        use crate::store::eventlog::{Event, NewEvent};
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path().join("r.git")).unwrap();
        let log = Log::open(&repo, "t").unwrap();
        let n = 2 * FOLD_CHUNK + 100;
        let events = (0..n)
            .map(|i| NewEvent::new(Event::new("t.x", "a", serde_json::json!({ "i": i }))))
            .collect();
        log.append_batch(events).unwrap();
        let tip = log.local_tip().unwrap().unwrap();
        let mut keys = Vec::new();
        let r = log
            .replay_with(&[tip], None, usize::MAX, |e| keys.push(e.key()))
            .unwrap();
        assert_eq!(keys.len(), n);
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "folded in order");
        assert_eq!(r.max_key, keys.last().copied());
    }

    /// An event commit whose id checks out but whose JSON does not decode (here, a format from a later
    /// build) is named invalid, folded nowhere, and left out of the ids the cache keeps: a later build
    /// that reads it must still fold it once.
    #[test]
    fn an_event_that_does_not_decode_is_invalid_and_not_among_the_folded_ids() {
        use crate::store::eventlog::event::event_message;
        use crate::store::eventlog::{Event, NewEvent};
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path().join("r.git")).unwrap();
        let log = Log::open(&repo, "t").unwrap();
        let good = log
            .append(NewEvent::new(Event::new("t.x", "a", serde_json::json!({}))))
            .unwrap();
        let tip = log.local_tip().unwrap().unwrap();
        let json = br#"{"v":99}"#;
        let bad_id = EventId::of(json);
        let who = crate::kit::repo::committer(&repo);
        let bad = repo
            .new_commit_as(
                who.to_ref(&mut Default::default()),
                who.to_ref(&mut Default::default()),
                String::from_utf8(event_message("t.x", json, &bad_id, 2, None)).unwrap(),
                crate::store::loose::empty_tree(&repo).unwrap(),
                [tip],
            )
            .unwrap()
            .id;
        let mut folded = Vec::new();
        let r = log
            .replay_with(&[bad], None, usize::MAX, |e| folded.push(e.id))
            .unwrap();
        assert_eq!(folded, [good.id]);
        assert_eq!(r.ids, [good.id]);
        assert_eq!(r.invalid.len(), 1);
        assert_eq!(r.invalid[0].commit, bad);
    }

    /// A record whose length header runs past the bytes read for its span (a spill damaged under the
    /// replay) is refused with an error, not sliced out of bounds later.
    #[test]
    fn a_spill_record_longer_than_its_read_is_refused() {
        let commit = ObjectId::empty_tree(gix::hash::Kind::Sha1);
        let mut spill = Spill::new(None, usize::MAX);
        let a = spill.push(b"{\"a\":1}", &commit).unwrap();
        let b = spill.push(b"{\"b\":2}", &commit).unwrap();
        // A's header claims 50 bytes: past B's end (the read ends there), by less than a commit id.
        spill.buf[a as usize..a as usize + 4].copy_from_slice(&50u32.to_le_bytes());
        let key = |at: u64| Key {
            lamport: 0,
            id: EventId([0; 32]),
            place: at,
        };
        let (ka, kb) = (key(a), key(b));
        let mut arena = Vec::new();
        let err = gather(&[&ka, &kb], std::slice::from_ref(&spill), 20, &mut arena).unwrap_err();
        assert!(err.to_string().contains("runs past its read"), "{err}");
    }
}
