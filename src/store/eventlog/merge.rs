//! Joining divergent copies of a log: a commit with both tips as parents and no event of its own.
//!
//! The union of events needs no resolution (events are immutable and content-addressed); the merge commit
//! only records the larger Lamport clock so that later appends on top stay causally after both sides.

use gix::bstr::BString;
use gix::ObjectId;

use super::event::merge_message;
use super::Log;
use crate::kit::error::Result;
use crate::store::refs::Relation;

/// What joining two tips produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeOutcome {
    /// Both sides were the same commit.
    Same(ObjectId),
    /// One side contained the other; the result is the descendant.
    FastForward(ObjectId),
    /// A new merge commit.
    Merged(ObjectId),
}

impl MergeOutcome {
    pub fn tip(&self) -> ObjectId {
        match *self {
            MergeOutcome::Same(id) | MergeOutcome::FastForward(id) | MergeOutcome::Merged(id) => id,
        }
    }
}

impl Log<'_> {
    /// Join `ours` and `theirs` without touching any ref. The merge commit's parents are ordered by object id
    /// so that two replicas merging the same pair write the same commit.
    pub fn join(&self, ours: ObjectId, theirs: ObjectId) -> Result<MergeOutcome> {
        match crate::store::refs::relation(self.repo, ours, theirs)? {
            Relation::Same => return Ok(MergeOutcome::Same(ours)),
            Relation::Ahead => return Ok(MergeOutcome::FastForward(ours)),
            Relation::Behind => return Ok(MergeOutcome::FastForward(theirs)),
            Relation::Diverged => {}
        }
        // Fixed identity and time for merges: the same pair merged anywhere gives the same commit id.
        Ok(MergeOutcome::Merged(self.write_join(&[ours, theirs])?))
    }

    /// Join any number of tips in one step: the tips no other contains ([`crate::store::refs::independent`], one
    /// walk), then the joins whose events the last of them already holds dropped (pass the local tip first and
    /// the remote's shared ref last: replicas settle on the remote's shape), then one join
    /// commit whose parents are all that is left, sorted, with the largest clock. A join with more than two
    /// parents is a valid merge in format 1 (readers and `fsck` ask for at least two). The same set of tips
    /// gives the same commit on every replica. `None` when `tips` is empty.
    ///
    /// With the outcome comes whether the first tip adds no event to the others: another tip contains it,
    /// or it is a join whose events the last tip holds. A sync passes its local tip first, so this answers
    /// "does the remote already hold every local event?" from the walk the join does anyway.
    pub fn join_all(&self, tips: &[ObjectId]) -> Result<Option<(MergeOutcome, bool)>> {
        let mut heads = crate::store::refs::independent(self.repo, tips)?;
        let Some(&first) = tips.first() else {
            return Ok(None);
        };
        let distinct_first = tips[1..].iter().all(|t| *t != first);
        // A head that is only a join of events the last head (the remote's shared ref, when there is one)
        // already holds adds nothing: drop it, so replicas settle on the remote's shape instead of merging
        // merges. Each head is compared with that one anchor only, never pairwise: at a hundred writer refs
        // pairwise tests were the whole cost of a sync (bench/sync.sh, round 2).
        if let Some(&anchor) = heads.last() {
            let mut kept = Vec::with_capacity(heads.len());
            // One walk below the anchor answers for every head.
            let mut below_anchor = crate::store::refs::Ancestry::of(self.repo, anchor);
            for (i, h) in heads.iter().enumerate() {
                let last = i + 1 == heads.len();
                if !last && self.is_join(*h) && self.events_within(*h, &mut below_anchor)? {
                    continue;
                }
                kept.push(*h);
            }
            heads = kept;
        }
        // A first tip equal to another one is "contained" too, but callers test that for free already.
        let first_adds_nothing = distinct_first && !heads.contains(&first);
        let outcome = match heads.as_slice() {
            [] => MergeOutcome::Same(first),
            [only] if *only == first => MergeOutcome::Same(first),
            [only] => MergeOutcome::FastForward(*only),
            _ => MergeOutcome::Merged(self.write_join(&heads)?),
        };
        Ok(Some((outcome, first_adds_nothing)))
    }

    /// Whether `id` is a join commit (a merge carrying no event).
    fn is_join(&self, id: ObjectId) -> bool {
        self.repo
            .find_commit(id)
            .ok()
            .and_then(|c| c.message_raw().ok().map(|m| m.to_vec()))
            .is_some_and(|m| {
                matches!(
                    super::event::parse_message(&m),
                    Ok(super::event::Framed::Merge { .. })
                )
            })
    }

    /// The join commit of `parents` (two or more): sorted parents, the largest clock, a fixed identity and time.
    fn write_join(&self, parents: &[ObjectId]) -> Result<ObjectId> {
        let mut lamport = 0;
        for p in parents {
            lamport = lamport.max(self.lamport_at(*p)?);
        }
        let mut parents = parents.to_vec();
        parents.sort();
        let sig = gix::actor::Signature {
            name: "git-jules".into(),
            email: "git-jules@jules.invalid".into(),
            time: gix::date::Time::new(0, 0),
        };
        let commit = gix::objs::Commit {
            tree: crate::store::loose::empty_tree(self.repo)?,
            parents: parents.into_iter().collect(),
            author: sig.clone(),
            committer: sig,
            encoding: None,
            message: BString::from(merge_message(lamport)),
            extra_headers: Vec::new(),
        };
        crate::store::loose::write(self.repo, &commit)
    }

    /// Whether every event of `a` is in `b`: each commit reachable from `a` but not from `b` is a merge (which
    /// carries no event). Then `b` can replace `a` without a merge commit, losing nothing: the union of two
    /// replicas' differently shaped joins of the same events need not grow the log again. Only answers yes
    /// when it found every path (reachability by [`crate::store::refs::Ancestry`]), so a wrong clock can only
    /// cost a merge.
    pub fn events_contained(&self, a: ObjectId, b: ObjectId) -> Result<bool> {
        self.events_within(a, &mut crate::store::refs::Ancestry::of(self.repo, b))
    }

    /// [`Log::events_contained`] against a walk below `b` that several questions share.
    fn events_within(&self, a: ObjectId, b: &mut crate::store::refs::Ancestry<'_>) -> Result<bool> {
        let mut stack = vec![a];
        let mut seen = std::collections::HashSet::new();
        while let Some(c) = stack.pop() {
            if !seen.insert(c) || b.contains(c) {
                continue;
            }
            let commit = self.repo.find_commit(c)?;
            let parents: Vec<ObjectId> = commit.parent_ids().map(|p| p.detach()).collect();
            let is_merge = parents.len() >= 2
                && matches!(
                    super::event::parse_message(commit.message_raw()?),
                    Ok(super::event::Framed::Merge { .. })
                );
            if !is_merge {
                return Ok(false);
            }
            stack.extend(parents);
        }
        Ok(true)
    }

    /// `tip` joined with every remote-tracking copy a plain `git fetch` wrote that it does not hold yet,
    /// and the remote tips that result contains. Nothing is written but merge commits; the caller moves the
    /// ref and then calls [`Log::remember_absorbed`].
    ///
    /// Remote tips already joined are remembered in `.git/jules/caught-up/<log>`, so the common case
    /// (nothing fetched since) costs a ref listing, not a merge-base walk over unpushed events. The memo is
    /// only a hint: the local ref only ever moves to descendants, so a remembered tip stays contained.
    pub(crate) fn joined_with_remotes(
        &self,
        tip: Option<ObjectId>,
    ) -> Result<(Option<ObjectId>, Vec<ObjectId>)> {
        let mut remotes: Vec<ObjectId> =
            self.remote_tips()?.into_iter().map(|(_, id)| id).collect();
        // Two remote refs often name one commit (a fold and the writer ref pushed with it): join it once,
        // remember it once.
        remotes.sort_unstable();
        remotes.dedup();
        if remotes.is_empty() {
            return Ok((tip, remotes));
        }
        let known = self.absorbed();
        let mut joined = tip;
        for r in remotes.iter().filter(|r| !known.contains(r)) {
            joined = Some(match joined {
                None => *r,
                Some(t) => self.join(t, *r)?.tip(),
            });
        }
        Ok((joined, remotes))
    }

    /// The remote tips the local ref is remembered to contain (see [`Log::joined_with_remotes`]): a hint that
    /// stays true, since the local ref only ever moves to descendants.
    pub(crate) fn absorbed(&self) -> Vec<ObjectId> {
        std::fs::read_to_string(self.memo_path())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.parse().ok())
            .collect()
    }

    /// Record that the local ref now contains these remote tips (see [`Log::joined_with_remotes`]).
    pub(crate) fn remember_absorbed(&self, remotes: &[ObjectId]) {
        if remotes.is_empty() {
            return;
        }
        let memo = self.memo_path();
        let remotes: std::collections::BTreeSet<&ObjectId> = remotes.iter().collect();
        let text: String = remotes.iter().map(|r| format!("{r}\n")).collect();
        if std::fs::read_to_string(&memo).ok().as_deref() == Some(text.as_str()) {
            return;
        }
        if let Some(dir) = memo.parent() {
            // Only a hint: losing it costs one merge-base walk next time.
            let _ = std::fs::create_dir_all(dir)
                .and_then(|_| super::cache::write_atomically(&memo, text.as_bytes()));
        }
    }

    /// Drop the hint (see [`Log::absorbed`]): the local ref was rewritten (`log held-back`), and the hint
    /// was made for the history it left.
    pub(crate) fn forget_absorbed(&self) {
        let _ = std::fs::remove_file(self.memo_path());
    }

    fn memo_path(&self) -> std::path::PathBuf {
        crate::kit::repo::jules_dir(self.repo)
            .join("caught-up")
            .join(self.short_name().replace('/', "%"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::eventlog::test_support::event;

    /// A log `A` (one event) and two branches on it, `B` and `C` (one event each), written without a ref.
    fn forked(log: &Log<'_>) -> (ObjectId, ObjectId, ObjectId) {
        let a = log.write_detached(None, vec![event(1)]).unwrap()[0].commit;
        let b = log.write_detached(Some(a), vec![event(2)]).unwrap()[0].commit;
        let c = log.write_detached(Some(a), vec![event(3)]).unwrap()[0].commit;
        (a, b, c)
    }

    fn parents(repo: &gix::Repository, id: ObjectId) -> Vec<ObjectId> {
        repo.find_commit(id)
            .unwrap()
            .parent_ids()
            .map(|p| p.detach())
            .collect()
    }

    /// `join_all` on the shapes a sync meets: nothing, one tip, the same tip twice, a tip and its
    /// descendant, two branches; and whether the first tip adds anything to the others.
    #[test]
    fn join_all_answers_each_shape_of_tips() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path().join("r.git")).unwrap();
        let log = Log::open(&repo, "t").unwrap();
        let (a, b, c) = forked(&log);
        assert_eq!(log.join_all(&[]).unwrap(), None);
        assert_eq!(
            log.join_all(&[b]).unwrap(),
            Some((MergeOutcome::Same(b), false))
        );
        // The same tip twice: nothing to join, and the first is not "contained" by a copy of itself.
        assert_eq!(
            log.join_all(&[b, b]).unwrap(),
            Some((MergeOutcome::Same(b), false))
        );
        // A tip behind another: the other, and the first adds nothing.
        assert_eq!(
            log.join_all(&[a, b]).unwrap(),
            Some((MergeOutcome::FastForward(b), true))
        );
        // Ahead: the first, which adds its event.
        assert_eq!(
            log.join_all(&[b, a]).unwrap(),
            Some((MergeOutcome::Same(b), false))
        );
        // Two branches: one join commit with both as parents (sorted), at the larger clock, in either order.
        let Some((MergeOutcome::Merged(m), false)) = log.join_all(&[c, b]).unwrap() else {
            panic!("two branches are merged");
        };
        let mut both = vec![b, c];
        both.sort();
        assert_eq!(parents(&repo, m), both);
        assert_eq!(log.lamport_at(m).unwrap(), 2);
        assert_eq!(
            log.join_all(&[b, c]).unwrap(),
            Some((MergeOutcome::Merged(m), false))
        );
        assert_eq!(log.join(b, c).unwrap(), MergeOutcome::Merged(m));
    }

    /// A join whose events the last tip (the remote's shared ref) already holds is dropped rather than
    /// merged again: the replica settles on the remote's shape. The last tip itself is never dropped,
    /// though it is a join too.
    #[test]
    fn a_join_the_last_tip_holds_the_events_of_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path().join("r.git")).unwrap();
        let log = Log::open(&repo, "t").unwrap();
        let (_, b, c) = forked(&log);
        // Ours: B and C joined. The remote's: B joined with D, which is C and one more event.
        let ours = log.join(b, c).unwrap().tip();
        let d = log.write_detached(Some(c), vec![event(4)]).unwrap()[0].commit;
        let theirs = log.join(b, d).unwrap().tip();
        assert!(log.is_join(ours) && log.is_join(theirs));
        assert_eq!(
            log.join_all(&[ours, theirs]).unwrap(),
            Some((MergeOutcome::FastForward(theirs), true))
        );
        // Not when the remote lacks an event of ours: then one join of both.
        let e = log.write_detached(Some(b), vec![event(5)]).unwrap()[0].commit;
        let mine = log.join(e, c).unwrap().tip();
        let Some((MergeOutcome::Merged(m), false)) = log.join_all(&[mine, theirs]).unwrap() else {
            panic!("a join with an event the other lacks is merged");
        };
        let mut both = vec![mine, theirs];
        both.sort();
        assert_eq!(parents(&repo, m), both);
    }

    /// `events_contained(a, b)`: every event of `a` is in `b`, so `b` may replace `a` without losing one.
    /// The commits of `a` that `b` lacks must all be joins: two parents and a join's message. An event
    /// commit with two parents still carries its event, and a commit framed as a join with one parent is
    /// not taken for one.
    #[test]
    fn events_are_contained_when_only_joins_are_missing() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path().join("r.git")).unwrap();
        let log = Log::open(&repo, "t").unwrap();
        let (a, b, c) = forked(&log);
        let ours = log.join(b, c).unwrap().tip();
        let d = log.write_detached(Some(c), vec![event(4)]).unwrap()[0].commit;
        let theirs = log.join(b, d).unwrap().tip();
        assert!(log.events_contained(ours, theirs).unwrap());
        assert!(log.events_contained(a, b).unwrap());
        assert!(log.events_contained(b, b).unwrap());
        assert!(!log.events_contained(theirs, ours).unwrap(), "D's event");
        assert!(!log.events_contained(b, c).unwrap());
        assert!(!log.events_contained(ours, d).unwrap(), "B's event");

        let commit_on = |message: Vec<u8>, parents: Vec<ObjectId>| {
            crate::store::eventlog::test_support::commit_on(&repo, &message, parents)
        };
        // An event on two parents that `theirs` holds: the event is not in `theirs`.
        let e = event(6).event;
        let canonical = e.canonical().unwrap();
        let message = super::super::event::event_message(
            &e.kind,
            &canonical,
            &super::super::EventId::of(&canonical),
            5,
            None,
        );
        let event_on_two = commit_on(message, vec![b, c]);
        assert!(
            log.scan(&[event_on_two], &[b, c], false)
                .unwrap()
                .events
                .len()
                == 1
        );
        assert!(!log.events_contained(event_on_two, theirs).unwrap());
        // A join's message on one parent: not a join.
        let one_parent = commit_on(super::super::event::merge_message(2), vec![b]);
        assert!(!log.events_contained(one_parent, theirs).unwrap());
    }

    /// An append joins the remote-tracking copies a fetch wrote into the local ref first (its events then
    /// come after theirs), and remembers them: the next append does not join them again. The memo is
    /// dropped when the local ref is rewritten.
    #[test]
    fn an_append_joins_the_fetched_copies_once_and_remembers_them() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path().join("r.git")).unwrap();
        let log = Log::open(&repo, "t").unwrap();
        let (a, b, c) = forked(&log);
        assert!(crate::store::refs::cas(&repo, "refs/jules/t", None, b, "test").unwrap());
        assert!(
            crate::store::refs::cas(&repo, "refs/remotes/origin/jules/t", None, c, "test").unwrap()
        );
        assert!(log.absorbed().is_empty());

        let first = log.append(event(4)).unwrap();
        assert_eq!(first.lamport, 3);
        let join = parents(&repo, first.commit);
        assert_eq!(join.len(), 1);
        let mut both = vec![b, c];
        both.sort();
        assert_eq!(
            parents(&repo, join[0]),
            both,
            "the join of B and the fetched C"
        );
        assert_eq!(log.absorbed(), [c]);
        let memo = crate::kit::repo::jules_dir(&repo).join("caught-up/t");
        assert_eq!(std::fs::read_to_string(&memo).unwrap(), format!("{c}\n"));

        // C is remembered: the next append goes on the local tip, no new join.
        let second = log.append(event(5)).unwrap();
        assert_eq!(parents(&repo, second.commit), [first.commit]);
        assert_eq!(log.absorbed(), [c]);

        // A newer fetched tip (D on C) is joined, and remembered with C: the memo holds every remote tip.
        let d = log.write_detached(Some(c), vec![event(6)]).unwrap()[0].commit;
        assert!(
            crate::store::refs::cas(&repo, "refs/remotes/origin/jules/t", Some(c), d, "test")
                .unwrap()
        );
        assert!(
            crate::store::refs::cas(&repo, "refs/remotes/other/jules/t", None, a, "test").unwrap()
        );
        let third = log.append(event(7)).unwrap();
        let join = parents(&repo, third.commit);
        let mut tips = vec![second.commit, d];
        tips.sort();
        assert_eq!(parents(&repo, join[0]), tips);
        let mut remembered = vec![a, d];
        remembered.sort();
        assert_eq!(log.absorbed(), remembered);

        log.forget_absorbed();
        assert!(log.absorbed().is_empty());
        assert!(!memo.exists());
    }
}
