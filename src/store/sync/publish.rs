//! Publishing a round's unions: no push without news, the push budget's deferral, then the fold (one atomic
//! push moving the shared refs and deleting the writer refs they hold) and, when another clone folded first,
//! this clone's own writer refs; each push checked by `no_loss` first. A fold that deletes nothing goes out
//! in one push with this clone's writer refs (see [`publish_in_one_push`]).

use std::collections::BTreeMap;

use gix::ObjectId;

use super::ledger::{remember_push, PushPolicy};
use super::no_loss::check_no_loss;
use super::plan::Plan;
use super::report::{Action, Published, RefSync, Skipped, SyncReport, Tally};
use super::transport::{push_gated, record, Atomicity, Update};
use super::writer_refs::{shared_of_writer, writer_ref};
use crate::kit::error::Result;
use crate::store::heldback::Gate;

/// How a round's publishing ended.
pub(super) enum Outcome {
    /// The sync is over (boxed: the other outcomes carry nothing).
    Done(Box<SyncReport>),
    /// The remote refused events it names: build the round again without them, held back.
    Refused,
    /// Both pushes lost their leases: another round after a pause.
    Raced,
}

/// What publishing needs besides the round's plan.
pub(super) struct Publish<'a> {
    pub repo: &'a gix::Repository,
    pub remote: &'a str,
    pub policy: &'a PushPolicy,
    pub round: u32,
    /// This clone's writer id.
    pub me: &'a str,
    /// Whether the news (of any round so far) is urgent: it does not wait for the push interval.
    pub urgent: bool,
    /// The fetched value of a shared ref, for the no-loss check of a writer ref the push deletes alone.
    pub fetched_shared: &'a dyn Fn(&str) -> Option<ObjectId>,
    /// What the rounds before this one reported, to go back to when a push is refused.
    pub before_round: &'a BTreeMap<String, RefSync>,
}

/// Publish what `plan` decided, after the round's results went into `tally`.
pub(super) fn publish(
    p: &Publish<'_>,
    plan: &Plan,
    skipped: Vec<Skipped>,
    gate: &mut Gate,
    tally: &mut Tally,
) -> Result<Outcome> {
    let (repo, remote) = (p.repo, p.remote);
    let done = |tally: &mut Tally, skipped: Vec<Skipped>, push_attempts: u64| {
        finished(p, plan, tally, skipped, push_attempts)
    };
    // No push without news (issue 29): deleting writer refs the shared ref already holds is only cleanup;
    // it rides along with the next sync that publishes something, so an idle fleet makes no pushes.
    if plan.fold.iter().all(|(_, new, _)| new.is_none()) {
        return Ok(done(tally, skipped, 0));
    }
    if let Some(wait) = p.policy.wait(repo).filter(|_| !p.urgent) {
        for r in tally.results.values_mut() {
            if matches!(r.action, Action::Pushed | Action::Republished) {
                r.action = Action::UpToDate;
            }
        }
        let mut r = tally.report(p.round, skipped, plan.held.clone());
        r.push_deferred_secs = Some(wait.as_secs().max(1));
        return Ok(Outcome::Done(Box::new(r)));
    }
    if plan.fold.iter().all(|(_, new, _)| new.is_some()) && !plan.own.is_empty() {
        return publish_in_one_push(p, plan, skipped, gate, tally);
    }
    check_no_loss(repo, &plan.fold, p.fetched_shared)?;
    tally.attempts += 1;
    let outcome = push_atomic(repo, remote, &plan.fold, gate);
    let Some(pushed) = spent(repo, tally.attempts, outcome)? else {
        tally.unsay_pushes(p.before_round);
        return Ok(Outcome::Refused);
    };
    if pushed {
        remember_push(repo, tally.attempts);
        tally.folded += plan.fold.iter().filter(|(_, new, _)| new.is_none()).count();
        record(repo, remote, &plan.fold);
        for (name, new, _) in &plan.fold {
            if new.is_some() {
                if let Some(r) = tally.results.get_mut(name) {
                    r.published = Published::Shared;
                }
            }
        }
        let attempts = tally.attempts;
        return Ok(done(tally, skipped, attempts));
    }
    if plan.own.is_empty() {
        // Only the clean-up of folded writer refs failed: nothing of ours is unpublished.
        remember_push(repo, tally.attempts);
        let attempts = tally.attempts;
        return Ok(done(tally, skipped, attempts));
    }
    check_no_loss(repo, &plan.own, p.fetched_shared)?;
    tally.attempts += 1;
    let outcome = push_atomic(repo, remote, &plan.own, gate);
    let Some(pushed) = spent(repo, tally.attempts, outcome)? else {
        tally.unsay_pushes(p.before_round);
        return Ok(Outcome::Refused);
    };
    if !pushed {
        return Ok(Outcome::Raced);
    }
    remember_push(repo, tally.attempts);
    record(repo, remote, &plan.own);
    for (name, _, _) in &plan.own {
        if let Some((shared, _)) = shared_of_writer(name) {
            if let Some(r) = tally.results.get_mut(&shared) {
                r.published = Published::Writer;
            }
        }
    }
    let attempts = tally.attempts;
    Ok(done(tally, skipped, attempts))
}

/// The fold and this clone's writer refs in one push, each ref on its own lease, when the fold deletes no
/// writer ref (the first sync of a burst never does: the remote has none yet). When clones start together,
/// all but one fold lose the race for the shared ref; pushed apart, each loser paid a second push (its
/// writer ref) after the first came back, which kept a burst's first round at 1.6-2.3x a plain push+fetch
/// (docs/benchmarks-sync.md, issue 45). Pushed together, one of the two lands whatever the race, in one
/// round trip. The price: when the fold wins, the writer ref lands too, and stays on the remote until the
/// next fold (by anyone) deletes it, which the layout allows (docs/format.md, *Sync layout*). A fold that
/// deletes writer refs stays atomic and apart: pushed ref by ref, a writer ref could go while the shared ref
/// that holds its events did not move.
fn publish_in_one_push(
    p: &Publish<'_>,
    plan: &Plan,
    skipped: Vec<Skipped>,
    gate: &mut Gate,
    tally: &mut Tally,
) -> Result<Outcome> {
    let (repo, remote) = (p.repo, p.remote);
    let both: Vec<Update> = plan.fold.iter().chain(&plan.own).cloned().collect();
    check_no_loss(repo, &both, p.fetched_shared)?;
    tally.attempts += 1;
    let outcome = push_gated(repo, remote, &both, Atomicity::EachRef, gate);
    let Some(landed) = spent(repo, tally.attempts, outcome)? else {
        tally.unsay_pushes(p.before_round);
        return Ok(Outcome::Refused);
    };
    if landed.is_empty() {
        return Ok(Outcome::Raced);
    }
    remember_push(repo, tally.attempts);
    let moved: Vec<Update> = both
        .iter()
        .filter(|(name, _, _)| landed.contains(name))
        .cloned()
        .collect();
    record(repo, remote, &moved);
    let mut unpublished = false;
    for (shared, _, _) in &plan.fold {
        let published = if landed.contains(shared) {
            Published::Shared
        } else if landed.contains(&writer_ref(shared, p.me)) {
            Published::Writer
        } else {
            unpublished = true;
            continue;
        };
        if let Some(r) = tally.results.get_mut(shared) {
            r.published = published;
        }
    }
    if unpublished {
        // Both leases of some ref were stale (another sync of this clone moved its writer ref): what landed
        // is recorded, and the next round publishes the rest.
        return Ok(Outcome::Raced);
    }
    let attempts = tally.attempts;
    Ok(finished(p, plan, tally, skipped, attempts))
}

/// One atomic push of `updates`: `Some(true)` when they all moved, `Some(false)` when a lease was stale and
/// none did, `None` when the remote refused events the gate now holds back.
fn push_atomic(
    repo: &gix::Repository,
    remote: &str,
    updates: &[Update],
    gate: &mut Gate,
) -> Result<Option<bool>> {
    push_gated(repo, remote, updates, Atomicity::All, gate)
        .map(|landed| landed.map(|landed| !landed.is_empty()))
}

/// The sync is over: the report of the rounds so far, with the push attempts it made.
fn finished(
    p: &Publish<'_>,
    plan: &Plan,
    tally: &mut Tally,
    skipped: Vec<Skipped>,
    push_attempts: u64,
) -> Outcome {
    Outcome::Done(Box::new(SyncReport {
        push_attempts,
        ..tally.report(p.round, skipped, plan.held.clone())
    }))
}

/// A push the remote refused outright (a forge's rate limit, a hook, a lost connection) still spent the
/// push budget: it is remembered like any attempt, so that the next sync waits for the interval instead of
/// asking again at once, which a rate-limited forge refuses again (bench/sync.sh's simulated forge,
/// docs/scale.md). Without `jules.sync.minPushInterval` the ledger asks nobody to wait.
fn spent<T>(repo: &gix::Repository, attempts: u64, pushed: Result<T>) -> Result<T> {
    if pushed.is_err() {
        remember_push(repo, attempts);
    }
    pushed
}
