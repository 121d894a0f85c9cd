//! Joining divergent copies of a log: a commit with both tips as parents and no event of its own.
//!
//! The union of events needs no resolution (events are immutable and content-addressed); the merge commit
//! only records the larger Lamport clock so that later appends on top stay causally after both sides.

use gix::bstr::BString;
use gix::ObjectId;

use super::event::merge_message;
use super::Log;
use crate::error::Result;
use crate::refs::Relation;

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
        match crate::refs::relation(self.repo, ours, theirs)? {
            Relation::Same => return Ok(MergeOutcome::Same(ours)),
            Relation::Ahead => return Ok(MergeOutcome::FastForward(ours)),
            Relation::Behind => return Ok(MergeOutcome::FastForward(theirs)),
            Relation::Diverged => {}
        }
        let lamport = self.lamport_at(ours)?.max(self.lamport_at(theirs)?);
        let mut parents = [ours, theirs];
        parents.sort();
        // Fixed identity and time for merges: the same pair merged anywhere gives the same commit id.
        let sig = gix::actor::Signature {
            name: "git-jules".into(),
            email: "git-jules@jules.invalid".into(),
            time: gix::date::Time::new(0, 0),
        };
        let commit = gix::objs::Commit {
            tree: crate::repo::empty_tree(self.repo)?,
            parents: parents.into_iter().collect(),
            author: sig.clone(),
            committer: sig,
            encoding: None,
            message: BString::from(merge_message(lamport)),
            extra_headers: Vec::new(),
        };
        Ok(MergeOutcome::Merged(
            self.repo.write_object(&commit)?.detach(),
        ))
    }
}

impl Log<'_> {
    /// Bring the local ref up to the remote-tracking copies that a plain `git fetch` wrote (fast-forward,
    /// or join when they diverged), so that an append that follows builds on everything this replica has
    /// seen and a plain `git push` of it is a fast-forward. Returns the local tip.
    pub fn catch_up(&self) -> Result<Option<ObjectId>> {
        let remotes = self.remote_tips()?;
        for _ in 0..100 {
            let local = self.local_tip()?;
            let mut tip = local;
            for (_, r) in &remotes {
                tip = Some(match tip {
                    None => *r,
                    Some(t) => self.join(t, *r)?.tip(),
                });
            }
            match tip {
                Some(new) if tip != local => {
                    if crate::refs::cas(self.repo, &self.name, local, new, "jules: catch up")? {
                        return Ok(tip);
                    }
                }
                _ => return Ok(tip),
            }
        }
        Err(crate::Error::Race {
            message: format!(
                "{} kept moving while catching up with its remote copies",
                self.name
            ),
        })
    }
}
