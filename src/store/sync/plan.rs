//! One round's decisions, ref by ref: join, then whether there is news, then what to publish (the fold and
//! this clone's writer ref, with what the remote refuses held back) and what to report.

use std::collections::{BTreeMap, BTreeSet};

use gix::ObjectId;

use super::join;
use super::news;
use super::report::{Action, Published, RefSync, Skipped};
use super::transport::Update;
use super::view::{Ref, Seen};
use super::writer_refs::{tracking_name, writer_ref};
use crate::kit::error::Result;
use crate::store::eventlog::Log;
use crate::store::heldback::{Gate, HeldBack};

/// What a round's decisions depend on besides the refs it sees.
pub(super) struct Round<'a> {
    pub repo: &'a gix::Repository,
    pub remote: &'a str,
    pub number: u32,
    /// This clone's writer id.
    pub me: &'a str,
    /// The remote-tracking refs before the sync's first fetch (a shared ref gone since was lost).
    pub tracked_before: &'a BTreeSet<String>,
    /// What the remote refuses (issue 40).
    pub gate: &'a Gate,
}

/// What a round decided.
#[derive(Default)]
pub(super) struct Plan {
    /// The fold: the shared refs moved to their unions and the writer refs they hold deleted, one atomic push.
    pub fold: Vec<Update>,
    /// This clone's writer refs, pushed when the fold loses the race.
    pub own: Vec<Update>,
    /// Events not published because the remote refuses them.
    pub held: Vec<HeldBack>,
    pub results: Vec<RefSync>,
    /// A local ref moved under this round: the round is made again.
    pub local_race: bool,
    /// News that may not wait for the push interval.
    pub urgent: bool,
}

/// Decide every ref `seen` holds. `invalid` gathers the invalid commits the joins took in, across rounds.
pub(super) fn plan(
    round: &Round<'_>,
    seen: &BTreeMap<String, Seen>,
    invalid: &mut Vec<Skipped>,
) -> Result<Plan> {
    let mut plan = Plan::default();
    for (name, s) in seen {
        plan_ref(round, name, s, invalid, &mut plan)?;
    }
    Ok(plan)
}

/// Decide one shared ref.
fn plan_ref(
    round: &Round<'_>,
    name: &str,
    s: &Seen,
    invalid: &mut Vec<Skipped>,
    plan: &mut Plan,
) -> Result<()> {
    let repo = round.repo;
    let is_notes = name.starts_with("refs/notes/jules/");
    let log = if is_notes {
        None
    } else {
        Some(Log::open(repo, name)?)
    };
    let this = Ref {
        repo,
        name,
        log: log.as_ref(),
    };
    // The writer refs, then the shared ref: last, so that join_all settles on the remote's shape.
    let remote_tips: Vec<ObjectId> = s.writers.iter().map(|(_, id)| *id).chain(s.main).collect();
    let joined = join::join(this, s, &remote_tips)?;
    let Some(tip) = joined.tip else {
        return Ok(());
    };
    if let (Some(log), true) = (&log, Some(tip) != s.local) {
        join::note_invalid(log, name, s.local, tip, invalid)?;
    }
    if !join::move_local(this, s.local, tip, &remote_tips)? {
        plan.local_race = true;
    }
    let remote_commits: Vec<ObjectId> = s
        .main
        .into_iter()
        .chain(s.writers.iter().map(|(_, id)| *id))
        .collect();
    let news = news::has_news(
        this,
        s,
        tip,
        joined.local_held,
        &remote_commits,
        &mut plan.urgent,
    )?;
    let mut publish = news && Some(tip) != s.main;
    // What is published: the joined tip, unless it carries events the remote refuses; then the
    // remote's union plus every other unpushed event, rebuilt (round 0 pushes nothing: not before).
    let mut published_tip = tip;
    if let (true, true, Some(log)) = (publish, round.number > 0, &log) {
        if let Some(split) = crate::store::heldback::split(log, round.gate, tip, &remote_commits)? {
            plan.held.extend(split.held);
            match split.publish {
                Some(p) => published_tip = p,
                None => publish = false,
            }
        }
    }
    if publish {
        add_updates(plan, name, s, published_tip, round.me);
    }
    plan.results.push(RefSync {
        name: name.to_owned(),
        action: action(round, name, s, tip, joined.merged, publish),
        tip: tip.to_string(),
        published: Published::Nothing,
    });
    Ok(())
}

/// Publish `tip` as the new value of the shared ref `name`: in the fold, with every writer ref it holds
/// deleted in the same atomic push; and to this clone's own writer ref, for when the fold loses the race.
fn add_updates(plan: &mut Plan, name: &str, s: &Seen, tip: ObjectId, me: &str) {
    // The new shared value holds every writer ref: they go in the same atomic push.
    for (writer, id) in &s.writers {
        plan.fold.push((writer.clone(), None, Some(*id)));
    }
    plan.fold
        .push((name.to_owned(), Some(tip), s.main.or(s.main_other)));
    let mine = writer_ref(name, me);
    let current = s
        .writers
        .iter()
        .find(|(n, _)| *n == mine)
        .map(|(_, id)| *id);
    // Our own writer ref, for when the fold loses the race: the local copy has news, so no ref of
    // the remote contains it.
    plan.own.push((mine, Some(tip), current));
}

/// What happened to the ref `name`, joined to `tip`, as the report says it.
fn action(
    round: &Round<'_>,
    name: &str,
    s: &Seen,
    tip: ObjectId,
    merged: bool,
    publish: bool,
) -> Action {
    let lost = s.main.is_none()
        && (round
            .tracked_before
            .contains(&tracking_name(round.remote, name))
            || s.main_other.is_some());
    if s.local.is_none() {
        Action::Created
    } else if merged && publish {
        Action::Merged
    } else if Some(tip) != s.local {
        Action::FastForwarded
    } else if publish && lost {
        Action::Republished
    } else if publish {
        Action::Pushed
    } else {
        Action::UpToDate
    }
}
