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

    /// Bring the local ref up to the remote-tracking copies that a plain `git fetch` wrote (fast-forward,
    /// or join when they diverged), so that an append that follows builds on everything this replica has
    /// seen and a plain `git push` of it is a fast-forward. Returns the local tip.
    ///
    /// Remote tips already joined are remembered in `.git/jules/caught-up/<log>`, so that the common case
    /// (nothing fetched since) costs a ref listing, not a merge-base walk over unpushed events.
    pub fn catch_up(&self) -> Result<Option<ObjectId>> {
        let remotes: Vec<ObjectId> = self.remote_tips()?.into_iter().map(|(_, id)| id).collect();
        if remotes.is_empty() {
            return self.local_tip();
        }
        let memo = crate::repo::jules_dir(self.repo)
            .join("caught-up")
            .join(self.short_name().replace('/', "%"));
        let known: Vec<ObjectId> = std::fs::read_to_string(&memo)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.parse().ok())
            .collect();
        for _ in 0..100 {
            let local = self.local_tip()?;
            let mut tip = local;
            for r in remotes.iter().filter(|r| !known.contains(r)) {
                tip = Some(match tip {
                    None => *r,
                    Some(t) => self.join(t, *r)?.tip(),
                });
            }
            if let Some(new) = tip.filter(|_| tip != local) {
                if !crate::refs::cas(self.repo, &self.name, local, new, "jules: catch up")? {
                    continue;
                }
            }
            // Only a hint: losing it costs one merge-base walk next time.
            if known != remotes {
                let text: String = remotes.iter().map(|r| format!("{r}\n")).collect();
                if let Some(dir) = memo.parent() {
                    let _ = std::fs::create_dir_all(dir)
                        .and_then(|_| super::cache::write_atomically(&memo, text.as_bytes()));
                }
            }
            return Ok(tip);
        }
        Err(crate::Error::Race {
            message: format!(
                "{} kept moving while catching up with its remote copies",
                self.name
            ),
        })
    }
}
