//! The one way a log's commits are read: a walk on the calling thread that hands batches of commits to one
//! decoding thread per core ([`parallel_walk`]), and the one rule that says what a commit is
//! ([`classify`]). `scan` (which keeps every event in memory) and `replay` (which spills them and folds in
//! bounded memory) differ only in what their workers keep.

use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::Mutex;

use gix::ObjectId;

use super::event::{parse_message, EventId, Framed, Invalid};
use super::packed::{PackedCommits, NOWHERE};
use crate::kit::error::{Error, Result};

/// Commits are decoded in batches of this many, handed from the walking thread to the decoders.
const BATCH: usize = 2048;

/// A commit the walk reached: its id, its number of parents and where a pack holds it (see [`Commits`]).
pub(super) struct Walked {
    pub id: ObjectId,
    pub parents: usize,
    place: u64,
}

impl Walked {
    fn new(id: ObjectId, parents: usize) -> Walked {
        Walked {
            id,
            parents,
            place: NOWHERE,
        }
    }
}

/// The batches of commits a decoding thread takes from the walk.
pub(super) struct Batches<'a>(&'a Mutex<Receiver<Vec<Walked>>>);

impl Batches<'_> {
    /// The next batch; `None` once the walk is over (or failed).
    pub fn next(&self) -> Option<Vec<Walked>> {
        self.0.lock().ok()?.recv().ok()
    }
}

/// A decoding thread's reader of commits: straight from the pack the walk found a commit in, else (and for
/// anything the pack cannot answer exactly) through the object database.
pub(super) struct Commits<'a> {
    pub repo: gix::Repository,
    packed: Option<&'a PackedCommits>,
    /// libdeflate rather than zlib-rs for whole commits: 14 % less CPU on a 200,000-event replay, where
    /// building each small stream's Huffman tables is much of the work (docs/benchmarks.md).
    inflate: libdeflater::Decompressor,
    /// How many commits were read straight from a pack.
    pub from_packs: usize,
}

impl Commits<'_> {
    /// The message of `commit` (see [`commit_message`]).
    pub fn message<'b>(&mut self, commit: &Walked, buf: &'b mut Vec<u8>) -> Result<&'b [u8]> {
        if let Some(packed) = self.packed {
            if packed.read(commit.place, &mut self.inflate, buf) {
                self.from_packs += 1;
                return Ok(after_headers(buf));
            }
        }
        commit_message(&self.repo, &commit.id, buf)
    }
}

#[cfg(test)]
thread_local! {
    /// Off: every commit is read through the object database (what the tests compare the shortcut with).
    pub(super) static PACK_SHORTCUT: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Walk every commit reachable from `tips` but not from `hidden` on this thread (cheap with a
/// commit-graph), calling `seen` with each commit and its parents, while `decode` runs on one thread per
/// core (at most 8) over the batches, each with its own repository handle. Returns what each decoding
/// thread returned. A decoding thread that fails or panics fails the whole read: no thread's commits
/// silently drop out.
pub(super) fn parallel_walk<T: Send>(
    repo: &gix::Repository,
    tips: &[ObjectId],
    hidden: &[ObjectId],
    mut seen: impl FnMut(&ObjectId, &[ObjectId]),
    decode: impl Fn(usize, Commits<'_>, Batches<'_>) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    let shared = repo.clone().into_sync();
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Walked>>(workers * 2);
    let rx = Mutex::new(rx);
    // A whole history that the commit-graph holds is walked on it by position: no object is read, no id
    // looked up or hashed, only a bit per commit; and each position's place in the packs is known from one
    // merge of the graph with the pack indexes, so no commit is looked up in an index either.
    let graph_walk = if hidden.is_empty() {
        GraphWalk::new(repo, tips)?
    } else {
        None
    };
    let packed = graph_walk.as_ref().and_then(|walk| {
        #[cfg(test)]
        if !PACK_SHORTCUT.with(|on| on.get()) {
            return None;
        }
        PackedCommits::new(
            &walk.graph,
            repo.objects.store_ref().path(),
            repo.object_hash(),
        )
    });
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (rx, shared, decode, packed) = (&rx, &shared, &decode, packed.as_ref());
                s.spawn(move || {
                    let commits = Commits {
                        repo: shared.to_thread_local(),
                        packed,
                        inflate: libdeflater::Decompressor::new(),
                        from_packs: 0,
                    };
                    decode(w, commits, Batches(rx))
                })
            })
            .collect();
        let walked = (|| -> Result<()> {
            // Below hidden tips, a walk ordered by clocks proves commits hidden without walking the whole
            // history the way a time-ordered one does on logs (their joins carry a fixed time).
            if !hidden.is_empty() {
                if let Some(commits) = crate::store::refs::exclusive(repo, tips, hidden)? {
                    return send_batches(
                        &tx,
                        commits.into_iter().map(|(id, parents)| {
                            seen(&id, &parents);
                            Ok(Walked::new(id, parents.len()))
                        }),
                    );
                }
            }
            if let Some(walk) = graph_walk {
                let mut parents = Vec::with_capacity(2);
                let packed = packed.as_ref();
                return send_batches(
                    &tx,
                    walk.map(|step| {
                        let (pos, id, n) = step?;
                        parents.clear();
                        parents.extend(n.iter().copied());
                        seen(&id, &parents);
                        let mut walked = Walked::new(id, parents.len());
                        if let Some(packed) = packed {
                            walked.place = packed.place(pos);
                        }
                        Ok(walked)
                    }),
                );
            }
            let walk = repo
                .rev_walk(tips.iter().copied())
                .with_hidden(hidden.iter().copied())
                .all()?;
            send_batches(
                &tx,
                walk.map(|info| {
                    let info = info?;
                    seen(&info.id, &info.parent_ids);
                    Ok(Walked::new(info.id, info.parent_ids.len()))
                }),
            )
        })();
        drop(tx);
        let mut parts = Vec::with_capacity(handles.len());
        for h in handles {
            parts.push(
                h.join()
                    .map_err(|_| Error::Other("a log decoding thread panicked".into()))??,
            );
        }
        walked?;
        Ok(parts)
    })
}

/// Every commit reachable from some tips, read from the commit-graph alone (depth first, each commit once):
/// its id and its parents' ids.
struct GraphWalk {
    graph: gix::commitgraph::Graph,
    /// One bit per graph position: queued already.
    queued: Vec<u64>,
    stack: Vec<gix::commitgraph::Position>,
}

impl GraphWalk {
    /// `None` when there is no usable commit-graph or it lacks a tip (commits written since it was): the
    /// caller then walks the objects. A graph holds every ancestor of what it holds.
    fn new(repo: &gix::Repository, tips: &[ObjectId]) -> Result<Option<GraphWalk>> {
        let Ok(Some(graph)) = repo.commit_graph_if_enabled() else {
            return Ok(None);
        };
        let mut walk = GraphWalk {
            queued: vec![0; (graph.num_commits() as usize).div_ceil(64)],
            stack: Vec::with_capacity(tips.len()),
            graph,
        };
        for tip in tips {
            let Some(pos) = walk.graph.lookup(tip) else {
                return Ok(None);
            };
            walk.queue(pos);
        }
        Ok(Some(walk))
    }

    fn queue(&mut self, pos: gix::commitgraph::Position) {
        queue(&mut self.queued, &mut self.stack, pos);
    }

    /// The next commit's position, id and parents (up to two inline; octopus merges are rare).
    fn step(&mut self) -> Option<Result<(gix::commitgraph::Position, ObjectId, Parents)>> {
        let pos = self.stack.pop()?;
        let commit = self.graph.commit_at(pos);
        let id = commit.id().to_owned();
        let mut parents = Parents::default();
        for p in commit.iter_parents() {
            let p = match p {
                Ok(p) => p,
                Err(e) => return Some(Err(Error::wrap("reading the commit-graph", e))),
            };
            parents.push(self.graph.id_at(p).to_owned());
            queue(&mut self.queued, &mut self.stack, p);
        }
        Some(Ok((pos, id, parents)))
    }
}

/// Push `pos` on `stack` unless it was queued before.
fn queue(
    queued: &mut [u64],
    stack: &mut Vec<gix::commitgraph::Position>,
    pos: gix::commitgraph::Position,
) {
    let (word, bit) = (pos.0 as usize / 64, pos.0 % 64);
    if queued[word] & (1 << bit) == 0 {
        queued[word] |= 1 << bit;
        stack.push(pos);
    }
}

impl Iterator for GraphWalk {
    type Item = Result<(gix::commitgraph::Position, ObjectId, Parents)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.step()
    }
}

/// A commit's parents without an allocation for the usual one or two.
#[derive(Default)]
struct Parents {
    inline: [Option<ObjectId>; 2],
    more: Vec<ObjectId>,
}

impl Parents {
    fn push(&mut self, id: ObjectId) {
        match self.inline.iter_mut().find(|p| p.is_none()) {
            Some(slot) => *slot = Some(id),
            None => self.more.push(id),
        }
    }

    fn iter(&self) -> impl Iterator<Item = &ObjectId> {
        self.inline.iter().flatten().chain(&self.more)
    }
}

/// Hand `items` to the decoding threads in batches of [`BATCH`]; stops early when they are gone (one
/// failed, and its error is what the caller reports).
fn send_batches<T>(tx: &SyncSender<Vec<T>>, items: impl Iterator<Item = Result<T>>) -> Result<()> {
    let mut batch = Vec::with_capacity(BATCH);
    for item in items {
        batch.push(item?);
        if batch.len() == BATCH
            && tx
                .send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)))
                .is_err()
        {
            return Ok(());
        }
    }
    if !batch.is_empty() {
        let _ = tx.send(batch);
    }
    Ok(())
}

/// What a commit of a log is, from its message alone.
pub(super) enum Classified<'m> {
    /// A join of two or more histories.
    Merge,
    /// An event whose id is the hash of its JSON (the JSON is not parsed yet).
    Event {
        json: &'m [u8],
        lamport: u64,
        id: EventId,
    },
    Invalid(Invalid),
}

/// Classify a commit by its message. With `parents` (fsck's strict reading), a merge needs two parents and
/// an event at most one.
pub(super) fn classify(message: &[u8], parents: Option<usize>) -> Classified<'_> {
    match parse_message(message) {
        Ok(Framed::Merge { .. }) if parents.is_some_and(|p| p < 2) => Classified::Invalid(
            Invalid::NotAnEvent("merge commit with fewer than two parents".into()),
        ),
        Ok(Framed::Merge { .. }) => Classified::Merge,
        Ok(Framed::Event { .. }) if parents.is_some_and(|p| p > 1) => {
            Classified::Invalid(Invalid::NotAnEvent(format!(
                "event commit with {} parents",
                parents.unwrap_or(0)
            )))
        }
        Ok(Framed::Event {
            json,
            lamport,
            claimed_id,
            ..
        }) => {
            let id = EventId::of(json);
            if EventId::from_hex(claimed_id) == Some(id) {
                Classified::Event { json, lamport, id }
            } else {
                Classified::Invalid(Invalid::IdMismatch {
                    claimed: claimed_id.to_owned(),
                    actual: id.to_hex(),
                })
            }
        }
        Err(reason) => Classified::Invalid(reason),
    }
}

/// The message of a commit, without decoding its headers: it starts after the first empty line.
pub(crate) fn commit_message<'b>(
    repo: &gix::Repository,
    id: &ObjectId,
    buf: &'b mut Vec<u8>,
) -> Result<&'b [u8]> {
    use gix::objs::Find;
    let data = match repo.objects.try_find(id, buf) {
        Ok(Some(d)) if d.kind == gix::objs::Kind::Commit => d.data,
        Ok(Some(d)) => return Err(Error::Other(format!("{id} is a {}, not a commit", d.kind))),
        Ok(None) => return Err(Error::Other(format!("commit {id} is missing"))),
        Err(e) => return Err(Error::wrap(format!("reading commit {id}"), e)),
    };
    Ok(after_headers(data))
}

/// A commit's message: what follows the first empty line.
fn after_headers(data: &[u8]) -> &[u8] {
    // Line ends found by `memchr` (vectorised), a handful per commit; a plain
    // `windows(2).position(|w| w == b"\n\n")` may call memcmp once per header byte.
    let mut from = 0;
    while let Some(i) = memchr::memchr(b'\n', &data[from..]) {
        let at = from + i;
        if data.get(at + 1) == Some(&b'\n') {
            return &data[at + 2..];
        }
        from = at + 1;
    }
    &data[data.len()..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::eventlog::event::{event_message, merge_message};
    use crate::store::eventlog::test_support::event;
    use crate::store::eventlog::{Event, Log};

    /// What a commit is, from its message: a join, an event whose id is the hash of its JSON, or invalid.
    /// Read strictly (fsck, which passes the number of parents), a join needs two parents and an event at
    /// most one.
    #[test]
    fn a_commit_is_classified_by_its_message_and_strictly_by_its_parents() {
        let e = Event::new("t.x", "a", serde_json::json!({ "n": 1 }));
        let canonical = e.canonical().unwrap();
        let id = EventId::of(&canonical);
        let msg = event_message(&e.kind, &canonical, &id, 4, None);
        for parents in [None, Some(0), Some(1)] {
            match classify(&msg, parents) {
                Classified::Event {
                    json,
                    lamport,
                    id: got,
                } => assert_eq!((json, lamport, got), (canonical.as_slice(), 4, id)),
                _ => panic!("an event on {parents:?} parents"),
            }
        }
        let why = |c: Classified<'_>| match c {
            Classified::Invalid(reason) => reason,
            _ => panic!("not invalid"),
        };
        assert_eq!(
            why(classify(&msg, Some(2))),
            Invalid::NotAnEvent("event commit with 2 parents".into())
        );
        let join = merge_message(4);
        for parents in [None, Some(2), Some(3)] {
            assert!(matches!(classify(&join, parents), Classified::Merge));
        }
        for parents in [Some(0), Some(1)] {
            assert_eq!(
                why(classify(&join, parents)),
                Invalid::NotAnEvent("merge commit with fewer than two parents".into())
            );
        }
        let other = EventId::of(b"another event");
        let forged = event_message(&e.kind, &canonical, &other, 4, None);
        assert_eq!(
            why(classify(&forged, None)),
            Invalid::IdMismatch {
                claimed: other.to_hex(),
                actual: id.to_hex(),
            }
        );
        assert!(matches!(
            why(classify(b"not an event\n", None)),
            Invalid::NotAnEvent(_)
        ));
    }

    /// A commit's message is what follows the first empty line of the object; the message may itself
    /// start with or hold empty lines. A commit with no empty line has no message.
    #[test]
    fn the_message_starts_after_the_first_empty_line() {
        let cases: [(&[u8], &[u8]); 6] = [
            (
                b"tree 1\nparent 2\n\nsubject\n\nbody\n",
                b"subject\n\nbody\n",
            ),
            (b"tree 1\n\n\nafter an empty line", b"\nafter an empty line"),
            (b"\n\nmessage", b"message"),
            (b"tree 1\nauthor x\n\n", b""),
            (b"tree 1\nno message\n", b""),
            (b"", b""),
        ];
        for (data, message) in cases {
            assert_eq!(
                after_headers(data),
                message,
                "{:?}",
                String::from_utf8_lossy(data)
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path().join("r.git")).unwrap();
        let log = Log::open(&repo, "t").unwrap();
        let at = log.append(event(1)).unwrap();
        let mut buf = Vec::new();
        let message = commit_message(&repo, &at.commit, &mut buf)
            .unwrap()
            .to_vec();
        assert_eq!(
            message,
            repo.find_commit(at.commit).unwrap().message_raw().unwrap()
        );
        let blob = repo.write_blob(b"x").unwrap().detach();
        assert_eq!(
            commit_message(&repo, &blob, &mut buf)
                .unwrap_err()
                .to_string(),
            format!("{blob} is a blob, not a commit")
        );
        let missing = ObjectId::from_hex(&[b'5'; 40]).unwrap();
        assert_eq!(
            commit_message(&repo, &missing, &mut buf)
                .unwrap_err()
                .to_string(),
            format!("commit {missing} is missing")
        );
    }

    /// On a commit-graph (written by git), the walk by position finds what the walk of the objects finds:
    /// every commit once, with its parents, a join of three branches (whose third parent is not inline)
    /// and a join of two included, read strictly (fsck's parent checks).
    #[test]
    fn a_walk_on_the_commit_graph_finds_what_the_object_walk_finds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r");
        let status = std::process::Command::new("git")
            .args(["init", "-q", "r"])
            .current_dir(dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir.path())
            .status()
            .unwrap();
        assert!(status.success());
        let repo = gix::open(&path).unwrap();
        let log = Log::open(&repo, "t").unwrap();
        let a = log.append(event(0)).unwrap().commit;
        let branches: Vec<ObjectId> = (1..=3)
            .map(|i| log.write_detached(Some(a), vec![event(i)]).unwrap()[0].commit)
            .collect();
        let Some((crate::store::eventlog::MergeOutcome::Merged(octopus), _)) =
            log.join_all(&branches).unwrap()
        else {
            panic!("three branches are joined");
        };
        assert_eq!(repo.find_commit(octopus).unwrap().parent_ids().count(), 3);
        let side = log.write_detached(Some(a), vec![event(4)]).unwrap()[0].commit;
        let top = log.write_detached(Some(octopus), vec![event(5)]).unwrap()[0].commit;
        let tip = log.join(top, side).unwrap().tip();
        assert!(crate::store::refs::cas(&repo, "refs/jules/t", Some(a), tip, "test").unwrap());

        let read = || {
            let repo = gix::open(&path).unwrap();
            let log = Log::open(&repo, "t").unwrap();
            let scan = log.scan(&[tip], &[], true).unwrap();
            let mut seen = Vec::new();
            parallel_walk(
                &repo,
                &[tip],
                &[],
                |id, parents| seen.push((*id, parents.to_vec())),
                |_, _, batches| -> Result<()> {
                    while batches.next().is_some() {}
                    Ok(())
                },
            )
            .unwrap();
            seen.sort();
            let (events, invalid) = scan.into_ordered();
            (
                seen,
                events.iter().map(|e| e.id).collect::<Vec<_>>(),
                invalid.len(),
            )
        };
        let (by_objects, events, invalid) = read();
        assert_eq!(by_objects.len(), 8);
        assert_eq!((events.len(), invalid), (6, 0));
        let status = std::process::Command::new("git")
            .args(["commit-graph", "write", "--reachable"])
            .current_dir(&path)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir.path())
            .status()
            .unwrap();
        assert!(status.success());
        // The graph holds the tip: the second read walks by position.
        let fresh = gix::open(&path).unwrap();
        assert!(GraphWalk::new(&fresh, &[tip]).unwrap().is_some());
        assert_eq!(read(), (by_objects, events, 0));
    }
}
