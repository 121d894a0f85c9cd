//! Reading refs and moving them with compare-and-swap: the one primitive every writer builds on.

use gix::refs::transaction::{LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::Target;
use gix::ObjectId;

use crate::kit::error::{Error, Result};

/// The object a direct ref points at, `None` when the ref does not exist.
pub fn target(repo: &gix::Repository, name: &str) -> Result<Option<ObjectId>> {
    match repo.try_find_reference(name)? {
        None => Ok(None),
        Some(r) => match r.target().try_id() {
            Some(id) => Ok(Some(id.to_owned())),
            None => Err(Error::Other(format!(
                "{name} is a symbolic ref; git-jules refs must point at commits"
            ))),
        },
    }
}

/// Move `name` from `expected` (`None`: must not exist) to `new`, with a reflog entry where git would write one.
/// `Ok(false)` means the race was lost (the ref moved, or another writer holds its lock): re-read and retry.
pub fn cas(
    repo: &gix::Repository,
    name: &str,
    expected: Option<ObjectId>,
    new: ObjectId,
    message: &str,
) -> Result<bool> {
    let full: gix::refs::FullName = name
        .try_into()
        .map_err(|e| Error::usage(format!("bad ref name {name}: {e}")))?;
    let previous = match expected {
        Some(old) => PreviousValue::MustExistAndMatch(Target::Object(old)),
        None => PreviousValue::MustNotExist,
    };
    let committer = crate::kit::repo::committer(repo);
    let mut buf = gix::date::parse::TimeBuf::default();
    let edit = RefEdit::update_with_log(
        full,
        new,
        previous,
        LogChange {
            mode: RefLog::AndReference,
            // Reflogs as git keeps them (`core.logAllRefUpdates`): for branches, remote-tracking refs,
            // notes and HEAD, or where one already exists. Not for logs under refs/jules/: a log's history
            // is its own record, and a forced reflog grew by a line per event (about 200 MB for a million
            // events) at a few syscalls per append. Backups keep theirs (src/store/backup.rs forces it).
            force_create_reflog: false,
            message: message.into(),
        },
    );
    match repo.edit_references_as(Some(edit), Some(committer.to_ref(&mut buf))) {
        Ok(_) => Ok(true),
        Err(e) if e.is_conflict() || e.is_retryable() => Ok(false),
        Err(e) => {
            // A lock held by a concurrent writer can surface as a plain io error ("File exists");
            // the caller's bounded retry decides whether it is stale.
            let text = format!("{e:#}");
            if text.contains(".lock") || text.contains("File exists") {
                Ok(false)
            } else {
                Err(e.into())
            }
        }
    }
}

/// Delete `name` if it still points at `expected`. `Ok(false)`: it moved meanwhile.
pub fn cas_delete(repo: &gix::Repository, name: &str, expected: ObjectId) -> Result<bool> {
    let full: gix::refs::FullName = name
        .try_into()
        .map_err(|e| Error::usage(format!("bad ref name {name}: {e}")))?;
    let edit = RefEdit::delete(
        full,
        PreviousValue::MustExistAndMatch(Target::Object(expected)),
    );
    match repo.edit_reference(edit) {
        Ok(_) => Ok(true),
        Err(e) if e.is_conflict() || e.is_retryable() => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// How two commits relate in history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    Same,
    /// The first contains the second.
    Ahead,
    /// The second contains the first.
    Behind,
    Diverged,
}

/// How `a` relates to `b`, decided from reachability itself.
///
/// gix 0.90's `merge_base` may return a redundant base first on criss-cross histories whose commits share
/// one timestamp (every base of `[X, a]` where `X` is an ancestor of `a`; `git merge-base --all` prints only
/// `a`), so taking its first answer says "diverged" where `a` is contained in `b`. Here the full list of
/// merge bases only settles the easy cases (one tip among them); otherwise an explicit walk decides.
pub fn relation(repo: &gix::Repository, a: ObjectId, b: ObjectId) -> Result<Relation> {
    if a == b {
        return Ok(Relation::Same);
    }
    let bases = merge_bases_all(repo, a, b)?;
    if bases.contains(&b) {
        return Ok(Relation::Ahead);
    }
    if bases.contains(&a) {
        return Ok(Relation::Behind);
    }
    if bases.is_empty() {
        return Ok(Relation::Diverged);
    }
    // gix named neither tip: confirm with a walk, whatever it returned.
    if is_ancestor(repo, b, a)? {
        return Ok(Relation::Ahead);
    }
    if is_ancestor(repo, a, b)? {
        return Ok(Relation::Behind);
    }
    Ok(Relation::Diverged)
}

fn merge_bases_all(repo: &gix::Repository, a: ObjectId, b: ObjectId) -> Result<Vec<ObjectId>> {
    match repo.merge_bases_many(a, &[b]) {
        Ok(bases) => Ok(bases.into_iter().map(|id| id.detach()).collect()),
        Err(e) if e.is_not_found() => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

/// The best common ancestor of `a` and `b` (as `git merge-base a b`): among all merge bases gix reports,
/// one that is not an ancestor of another (gix may list redundant ones first, see [`relation`]).
pub fn merge_base(repo: &gix::Repository, a: ObjectId, b: ObjectId) -> Result<Option<ObjectId>> {
    let bases = merge_bases_all(repo, a, b)?;
    for (i, candidate) in bases.iter().enumerate() {
        let mut redundant = false;
        for (j, other) in bases.iter().enumerate() {
            if i != j && other != candidate && is_ancestor(repo, *candidate, *other)? {
                redundant = true;
                break;
            }
        }
        if !redundant {
            return Ok(Some(*candidate));
        }
    }
    Ok(bases.first().copied())
}

/// Whether `ancestor` is reachable from `descendant` (a commit is its own ancestor): one [`Ancestry`] walk,
/// pruned by the Lamport clock on logs; commits without a clock (notes, garbage pushed onto a log) are walked
/// through.
pub fn is_ancestor(
    repo: &gix::Repository,
    ancestor: ObjectId,
    descendant: ObjectId,
) -> Result<bool> {
    Ok(Ancestry::of(repo, descendant).contains(ancestor))
}

/// The ancestors of one commit, found as far as questions need them: a walk from the tip in descending Lamport
/// order that goes only as deep as the lowest clock asked about so far, so many questions about one tip cost one
/// walk, not one each (a join of a hundred writer refs asks about every one of them; issue 29).
///
/// Only says yes for a commit the walk reached. Clocks never decrease from parent to child, so every commit on a
/// path from the tip to a commit with clock `l` has a clock of at least `l`, and the walk has expanded them all
/// before it answers; a commit without a clock (garbage on a log) is expanded at once and makes a question about
/// it walk everything. A wrong clock can only make it say no.
pub struct Ancestry<'r> {
    repo: &'r gix::Repository,
    heap: std::collections::BinaryHeap<(u64, ObjectId)>,
    reached: std::collections::HashSet<ObjectId>,
}

impl<'r> Ancestry<'r> {
    /// The ancestors of `tip` (and `tip` itself).
    pub fn of(repo: &'r gix::Repository, tip: ObjectId) -> Self {
        let clock = lamport_of(repo, tip).unwrap_or(u64::MAX);
        Ancestry {
            repo,
            heap: std::collections::BinaryHeap::from([(clock, tip)]),
            reached: std::collections::HashSet::from([tip]),
        }
    }

    /// Whether `id` is the tip or one of its ancestors.
    pub fn contains(&mut self, id: ObjectId) -> bool {
        if self.reached.contains(&id) {
            return true;
        }
        let floor = lamport_of(self.repo, id).unwrap_or(0);
        while self.heap.peek().is_some_and(|(l, _)| *l >= floor) {
            let Some((_, c)) = self.heap.pop() else { break };
            // A missing or non-commit object ends this path (shallow or damaged history).
            let Ok(commit) = self.repo.find_commit(c) else {
                continue;
            };
            for p in commit.parent_ids() {
                let p = p.detach();
                if self.reached.insert(p) {
                    let clock = lamport_of(self.repo, p).unwrap_or(u64::MAX);
                    self.heap.push((clock, p));
                }
            }
            if self.reached.contains(&id) {
                return true;
            }
        }
        self.reached.contains(&id)
    }
}

/// The commits of `tips` that no other of them contains (`git merge-base --independent`), in the order given,
/// duplicates dropped: one walk from all of them at once instead of a reachability test per pair, so joining a
/// hundred writer refs costs about what joining one does.
///
/// The walk starts at the tips' parents (everything it visits is a strict ancestor of some tip) and goes in
/// descending Lamport order; it stops once every commit left has a clock below the smallest tip clock, since
/// clocks never decrease from parent to child. Commits without a clock (garbage pushed onto a log, notes) are
/// walked first and never prune.
pub fn independent(repo: &gix::Repository, tips: &[ObjectId]) -> Result<Vec<ObjectId>> {
    let mut unique: Vec<ObjectId> = Vec::with_capacity(tips.len());
    for t in tips {
        if !unique.contains(t) {
            unique.push(*t);
        }
    }
    if unique.len() < 2 {
        return Ok(unique);
    }
    let clock = |id: ObjectId| lamport_of(repo, id).unwrap_or(u64::MAX);
    let floor = unique
        .iter()
        .map(|t| lamport_of(repo, *t).unwrap_or(0))
        .min()
        .unwrap_or(0);
    let pending: std::collections::HashSet<ObjectId> = unique.iter().copied().collect();
    let mut reached = std::collections::HashSet::new();
    let mut seen = std::collections::HashSet::new();
    let mut heap = std::collections::BinaryHeap::new();
    let push_parents = |id: ObjectId,
                        heap: &mut std::collections::BinaryHeap<(u64, ObjectId)>,
                        seen: &mut std::collections::HashSet<ObjectId>| {
        // A missing or non-commit object ends this path (shallow or damaged history).
        if let Ok(commit) = repo.find_commit(id) {
            for p in commit.parent_ids() {
                let p = p.detach();
                if seen.insert(p) {
                    heap.push((clock(p), p));
                }
            }
        }
    };
    for t in &unique {
        push_parents(*t, &mut heap, &mut seen);
    }
    while let Some((l, id)) = heap.pop() {
        if l < floor || reached.len() + 1 == unique.len() {
            break;
        }
        if pending.contains(&id) {
            reached.insert(id);
        }
        push_parents(id, &mut heap, &mut seen);
    }
    Ok(unique
        .into_iter()
        .filter(|t| !reached.contains(t))
        .collect())
}

/// A commit and its parents.
pub type CommitWithParents = (ObjectId, Vec<ObjectId>);

/// The commits reachable from `tips` but not from `hidden` (`git rev-list TIPS --not HIDDEN`), each with its
/// parents, in no particular order; `None` when the history below does not let clocks order the walk (a commit
/// without a clock, one whose parent has a larger clock than it, or a missing commit), and then the caller
/// walks as git does.
///
/// The paint of git's merge-base walk, ordered by Lamport clock instead of commit time: join commits carry a
/// fixed time (so that replicas write the same join), which makes a time-ordered walk that must prove
/// commits hidden walk the whole history below a hundred writer refs (issue 29: that walk was a third of a
/// second sync's own cost). Clocks never decrease from parent to child, so once no commit in the queue is
/// visible only and the queue's highest clock is below every commit found visible only, nothing left can
/// reach one of them.
pub fn exclusive(
    repo: &gix::Repository,
    tips: &[ObjectId],
    hidden: &[ObjectId],
) -> Result<Option<Vec<CommitWithParents>>> {
    const VISIBLE: u8 = 1;
    const HIDDEN: u8 = 2;
    struct Node {
        clock: u64,
        parents: Vec<ObjectId>,
        flags: u8,
        /// The flags it had when its parents were last painted from it.
        done: u8,
    }
    let mut nodes: std::collections::HashMap<ObjectId, Node> = std::collections::HashMap::new();
    let mut heap = std::collections::BinaryHeap::new();
    // Reads a commit once: its clock and parents. `None`: not a commit with a clock.
    let load = |id: ObjectId| -> Option<Node> {
        let commit = repo.find_commit(id).ok()?;
        let clock = clock_in(commit.message_raw().ok()?)?;
        Some(Node {
            clock,
            parents: commit.parent_ids().map(|p| p.detach()).collect(),
            flags: 0,
            done: 0,
        })
    };
    for (ids, flag) in [(tips, VISIBLE), (hidden, HIDDEN)] {
        for id in ids {
            let node = match nodes.entry(*id) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(v) => match load(*id) {
                    Some(n) => v.insert(n),
                    None => return Ok(None),
                },
            };
            node.flags |= flag;
            heap.push((node.clock, *id));
        }
    }
    // The queued commits painted visible only, and the lowest clock of one processed so far.
    let mut visible_queued: std::collections::HashSet<ObjectId> = tips
        .iter()
        .filter(|t| nodes.get(*t).is_some_and(|n| n.flags == VISIBLE))
        .copied()
        .collect();
    let mut lowest_visible = u64::MAX;
    while let Some(&(top, _)) = heap.peek() {
        if visible_queued.is_empty() && top < lowest_visible {
            break;
        }
        let Some((clock, id)) = heap.pop() else { break };
        visible_queued.remove(&id);
        let (flags, parents) = match nodes.get_mut(&id) {
            Some(n) if n.done != n.flags => {
                n.done = n.flags;
                (n.flags, n.parents.clone())
            }
            _ => continue,
        };
        if flags == VISIBLE {
            lowest_visible = lowest_visible.min(clock);
        }
        for p in parents {
            let node = match nodes.entry(p) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(v) => match load(p) {
                    Some(n) => v.insert(n),
                    None => return Ok(None),
                },
            };
            if node.clock > clock {
                return Ok(None);
            }
            if node.flags | flags != node.flags {
                node.flags |= flags;
                heap.push((node.clock, p));
                if node.flags == VISIBLE {
                    visible_queued.insert(p);
                } else {
                    visible_queued.remove(&p);
                }
            }
        }
    }
    Ok(Some(
        nodes
            .into_iter()
            .filter(|(_, n)| n.flags == VISIBLE)
            .map(|(id, n)| (id, n.parents))
            .collect(),
    ))
}

/// The Lamport clock a log commit (event or merge) carries, if it is one: the value of its
/// [`LAMPORT_TRAILER`] line. An unparsable or out-of-range value gives `None`, which only disables pruning.
fn lamport_of(repo: &gix::Repository, id: ObjectId) -> Option<u64> {
    let commit = repo.find_commit(id).ok()?;
    clock_in(commit.message_raw().ok()?)
}

/// The clock a log commit's message carries (see [`lamport_of`]).
fn clock_in(message: &gix::bstr::BStr) -> Option<u64> {
    message.split(|b| *b == b'\n').find_map(|line| {
        let v = line.strip_prefix(LAMPORT_TRAILER.as_bytes())?;
        let l: u64 = std::str::from_utf8(v).ok()?.trim().parse().ok()?;
        // The event format's bound (`eventlog::event::MAX_LAMPORT`), restated: the log sits above us.
        (l < 1 << 62).then_some(l)
    })
}

/// The trailer carrying a log commit's Lamport clock (`Jules-Lamport: N`). It lives here, below the event
/// log, because ancestry walks (see [`is_ancestor`]) prune by it.
pub const LAMPORT_TRAILER: &str = "Jules-Lamport: ";

/// The namespace of per-writer refs below `refs/jules/` and `refs/notes/jules/`.
pub const WRITERS: &str = "writers/";

/// The kind of object `id` names, if it exists here.
pub fn object_kind(repo: &gix::Repository, id: ObjectId) -> Option<gix::object::Kind> {
    repo.find_header(id).ok().map(|h| h.kind())
}

/// How old a ref's lock file must be before it is reported as left behind by a dead writer: ref
/// transactions hold their lock for microseconds to milliseconds.
pub const STALE_LOCK_AGE: std::time::Duration = std::time::Duration::from_secs(5);

/// The lock file of ref `name` if it exists and is older than [`STALE_LOCK_AGE`]: most likely left by a
/// process that was killed while updating the ref (git never removes such files by itself, and neither do we).
pub fn stale_lock(repo: &gix::Repository, name: &str) -> Option<std::path::PathBuf> {
    let path = repo.common_dir().join(format!("{name}.lock"));
    let modified = std::fs::metadata(&path).ok()?.modified().ok()?;
    (modified.elapsed().ok()? > STALE_LOCK_AGE).then_some(path)
}

/// The error for a ref whose lock file was left behind: names the file, its age and the command that
/// clears it. `None` when there is no stale lock (the ref simply moved).
pub fn stale_lock_error(repo: &gix::Repository, name: &str) -> Option<Error> {
    let path = stale_lock(repo, name)?;
    let path = std::fs::canonicalize(&path).unwrap_or(path);
    let age = std::fs::metadata(&path)
        .ok()
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.elapsed().ok())
        .map(|d| d.as_secs())
        .unwrap_or_default();
    Some(Error::Other(format!(
        "{name} is locked by {}, {age} s old: a writer was probably killed while updating the ref; \
         if no git or git-jules process is running here, clear it with `rm {}` and try again",
        path.display(),
        path.display()
    )))
}
