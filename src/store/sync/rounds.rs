//! The round loop of a sync: fetch, look, decide, publish, until one round publishes or finds nothing to
//! publish. Round 0 fetches nothing: it takes what the remote-tracking refs already hold (a plain `git fetch`
//! wrote them) into the local refs, so that pruning them in round 1 can not drop an event from the view.
//! Further rounds happen only when a push was refused for events held back, a local ref moved, or both
//! pushes lost their leases.

use std::collections::BTreeSet;
use std::time::Duration;

use super::ledger::{remember_push, PushPolicy};
use super::plan::{self, Round};
use super::publish::{self, Outcome, Publish};
use super::report::{SyncReport, Tally};
use super::transport::{fetch, reopen};
use super::view;
use super::writer_refs::{tracking_prefixes, writer_id};
use crate::kit::error::{Error, Result};

const MAX_ROUNDS: u32 = 20;

/// The logs and notes part of [`super::sync_with`].
pub(super) fn sync_logs(
    repo: &gix::Repository,
    remote: &str,
    policy: &PushPolicy,
) -> Result<SyncReport> {
    let me = writer_id(repo)?;
    let tracked_before: BTreeSet<String> = tracking_prefixes(remote)
        .iter()
        .map(|(p, _)| view::list(repo, p))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .map(|(n, _)| n)
        .collect();
    let mut tally = Tally::new(remote);
    let mut urgent = false;
    // What the remote refuses (issue 40): learned from its refusals, kept across rounds.
    let mut gate = crate::store::heldback::Gate::open(repo, remote);
    for round in 0..=MAX_ROUNDS {
        if round > 0 {
            fetch(repo, remote)?;
        }
        let fresh = reopen(repo)?;
        let repo = &fresh;
        let view = view::look(repo, remote, round, &tracked_before, &mut tally.pruned)?;
        let this = Round {
            repo,
            remote,
            number: round,
            me: &me,
            tracked_before: &tracked_before,
            gate: &gate,
        };
        let mut plan = plan::plan(&this, &view.seen, &mut tally.invalid)?;
        urgent |= plan.urgent;
        // What the rounds before this one did: a push the remote refuses for events it names is retried
        // without them, and what this round meant to push it did not.
        let before_round = tally.results.clone();
        tally.take_round(round, std::mem::take(&mut plan.results));
        if plan.local_race || round == 0 {
            continue;
        }
        let fetched_shared = |shared: &str| view.seen.get(shared).and_then(|s| s.main);
        let publishing = Publish {
            repo,
            remote,
            policy,
            round,
            me: &me,
            urgent,
            fetched_shared: &fetched_shared,
            before_round: &before_round,
        };
        match publish::publish(&publishing, &plan, view.skipped, &mut gate, &mut tally)? {
            Outcome::Done(report) => return Ok(*report),
            Outcome::Refused => continue,
            Outcome::Raced => {}
        }
        std::thread::sleep(Duration::from_millis(
            5 * u64::from(round) + u64::from(std::process::id() % 11),
        ));
    }
    remember_push(repo, tally.attempts);
    Err(Error::Race {
        message: format!(
            "sync with {remote} did not settle after {MAX_ROUNDS} rounds: the local refs or this clone's \
             writer refs kept moving"
        ),
    })
}
