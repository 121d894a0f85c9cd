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
