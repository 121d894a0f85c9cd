//! The union of one shared ref: the local copy joined with the remote's shared ref and every writer ref of
//! it (one join over all tips for a log, issue 29; the notes union for a notes ref), the invalid events it
//! took in, and the local ref moved to it.

use gix::ObjectId;

use super::report::Skipped;
use super::view::{Ref, Seen};
use crate::kit::error::{Error, Result};
use crate::store::eventlog::{Log, MergeOutcome};
use crate::store::refs;

/// The union of one ref.
pub(super) struct Joined {
    /// `None`: neither side has the ref.
    pub tip: Option<ObjectId>,
    /// A merge commit was made.
    pub merged: bool,
    /// The join found the local tip inside a remote tip: the remote holds every local event.
    pub local_held: bool,
}

/// Join the local copy of a ref with `remote_tips` (its writer refs, then its shared ref: last, so that
/// `join_all` settles on the remote's shape).
pub(super) fn join(ref_: Ref<'_, '_>, s: &Seen, remote_tips: &[ObjectId]) -> Result<Joined> {
    let repo = ref_.repo;
    let mut tip = s.local;
    let mut merged = false;
    let absorbed = ref_.log.map(|l| l.absorbed()).unwrap_or_default();
    // Whether the join found the local tip inside a remote tip: then the remote holds every local event.
    let mut local_held = false;
    match ref_.log {
        // One join over the local copy, every writer ref and the shared ref (issue 29: pairwise joins
        // made a second round 3.5x the push+fetch floor at 100 clones). The shared ref goes last, so
        // that when ours holds no event theirs lacks (only joins shaped differently) theirs is taken
        // and replicas settle on one tip instead of merging merges.
        // Remote tips the local ref is remembered to hold (the last sync or append joined them, and
        // the local ref only moves forward) need no join: an idle round, and the round before the
        // fetch, cost a memo read instead of a walk over the log's recent history.
        Some(_) if s.local.is_some() && remote_tips.iter().all(|t| absorbed.contains(t)) => {}
        Some(log) => {
            let tips: Vec<ObjectId> = s
                .local
                .into_iter()
                .chain(remote_tips.iter().copied())
                .collect();
            if let Some((outcome, first_adds_nothing)) = log.join_all(&tips)? {
                merged = matches!(outcome, MergeOutcome::Merged(_));
                tip = Some(outcome.tip());
                local_held = s.local.is_some() && first_adds_nothing;
            }
        }
        None => {
            for r in s.main.iter().chain(s.writers.iter().map(|(_, id)| id)) {
                tip = Some(match tip {
                    None => *r,
                    Some(t) => {
                        let outcome = join_notes(repo, t, *r)?;
                        if let MergeOutcome::Merged(_) = outcome {
                            merged = true;
                        }
                        outcome.tip()
                    }
                });
            }
        }
    }
    Ok(Joined {
        tip,
        merged,
        local_held,
    })
}

/// Add to `invalid` the commits between `local` and the joined `tip` of `log` that are not valid events
/// (readers skip them; `log fsck` names them), each once.
pub(super) fn note_invalid(
    log: &Log<'_>,
    name: &str,
    local: Option<ObjectId>,
    tip: ObjectId,
    invalid: &mut Vec<Skipped>,
) -> Result<()> {
    let hidden: Vec<ObjectId> = local.into_iter().collect();
    for bad in log.scan(&[tip], &hidden, false)?.invalid {
        if !invalid
            .iter()
            .any(|i| i.name.parse::<ObjectId>().ok() == Some(bad.commit))
        {
            invalid.push(Skipped {
                name: bad.commit.to_string(),
                reason: format!("{name}: {}", bad.reason),
            });
        }
    }
    Ok(())
}

/// Move the local ref from `local` to the joined `tip`: `Ok(false)` when it moved under us (the round is
/// made again).
pub(super) fn move_local(
    ref_: Ref<'_, '_>,
    local: Option<ObjectId>,
    tip: ObjectId,
    remote_tips: &[ObjectId],
) -> Result<bool> {
    let Ref { repo, name, log } = ref_;
    if Some(tip) != local && !refs::cas(repo, name, local, tip, "jules: sync")? {
        if let Some(err) = refs::stale_lock_error(repo, name) {
            // A lock file left by a killed process: the user removes it (exit 2).
            return Err(Error::Refused(err.to_string()));
        }
        return Ok(false);
    } else if let Some(log) = log {
        // The local ref holds every remote tip now: the next append and the next sync need not join
        // them again (an append after a sync would otherwise join each writer ref in turn).
        log.remember_absorbed(remote_tips);
    }
    Ok(true)
}

fn join_notes(repo: &gix::Repository, ours: ObjectId, theirs: ObjectId) -> Result<MergeOutcome> {
    Ok(match refs::relation(repo, ours, theirs)? {
        refs::Relation::Same => MergeOutcome::Same(ours),
        refs::Relation::Ahead => MergeOutcome::FastForward(ours),
        refs::Relation::Behind => MergeOutcome::FastForward(theirs),
        refs::Relation::Diverged => {
            MergeOutcome::Merged(crate::store::notes::union(repo, ours, theirs)?)
        }
    })
}
