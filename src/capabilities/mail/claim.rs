//! Claims: exactly one recipient takes a group message, and every replica agrees which one.
//!
//! The rule the fold applies (see [`super::view`]): among the claims of recipients, the first `lock` claim
//! wins; without one, the first claim in the total order wins.
//!
//! A plain claim is provisional: it wins on every replica once synced unless a claim sorts before it or a
//! lock claim exists. `claim --sync` takes the remote ref as the lock:
//!
//! 1. sync with the remote, so this replica holds everything the remote holds;
//! 2. if the view already has a winner other than us, we lost (nothing is written); if we hold the lock, we
//!    won;
//! 3. otherwise write a `lock` claim as a commit on top of the remote's tip, without moving any local ref,
//!    and push it with a lease on that tip. The remote accepts it only if nobody pushed in between, so only
//!    a remote state that holds no other winning claim ever receives a lock claim: at most one exists per
//!    message. A stale lease leaves the claim unpublished (it is dropped) and the round starts over.
//! 4. once accepted, the local ref is brought along (joined with anything appended locally meanwhile) and
//!    the view, now holding the lock claim, says who won.

use serde::Serialize;

use super::kinds::{self, ClaimData};
use super::ops::{self, to_value};
use super::view::Claim;
use crate::kit::error::{Error, Result};
use crate::store::eventlog::{Event, EventId, Log, NewEvent};
use crate::{store::refs, store::sync};

const MAX_ROUNDS: u32 = 12;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "outcome")]
pub enum Outcome {
    /// The persona holds the claim. `lock`: through the remote lock, final.
    Won { lock: bool },
    /// Somebody else holds it.
    Lost { winner: String, lock: bool },
}

#[derive(Debug, Clone, Serialize)]
pub struct ClaimReport {
    pub message: String,
    pub persona: String,
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Whether this call wrote a claim event.
    pub wrote: bool,
    /// The remote the claim went through (`--sync`).
    pub remote: Option<String>,
}

fn outcome_of(persona: &str, w: Claim) -> Outcome {
    if w.persona == persona {
        Outcome::Won { lock: w.lock }
    } else {
        Outcome::Lost {
            winner: w.persona,
            lock: w.lock,
        }
    }
}

fn claim_event(persona: &str, message: &EventId, lock: bool) -> Result<NewEvent> {
    let data = ClaimData {
        message: message.to_hex(),
        lock,
    };
    Ok(NewEvent::new(Event::new(
        kinds::CLAIM,
        persona,
        to_value(&data)?,
    )))
}

/// Check that `persona` may claim `prefix` and return the message's full id.
fn check(log: &Log<'_>, persona: &str, prefix: &str) -> Result<EventId> {
    super::message::validate_persona(persona)?;
    ops::with_view(log, |view| {
        let msg = ops::find(log, view, prefix)?;
        let h = msg.header(view)?;
        if !h.reaches(persona) {
            return Err(Error::usage(format!(
                "{persona} is not a recipient of message {}: only recipients can claim it",
                msg.id.short(12)
            )));
        }
        Ok(msg.id)
    })
}

fn winner(log: &Log<'_>, id: &EventId) -> Result<Option<Claim>> {
    ops::with_view(log, |view| Ok(view.meta(&id.to_hex())?.winner()))
}

/// A provisional claim, decided by this replica's view.
pub fn claim(log: &Log<'_>, persona: &str, prefix: &str) -> Result<ClaimReport> {
    let id = check(log, persona, prefix)?;
    let report = |outcome, wrote| ClaimReport {
        message: id.to_hex(),
        persona: persona.to_owned(),
        outcome,
        wrote,
        remote: None,
    };
    if let Some(w) = winner(log, &id)? {
        return Ok(report(outcome_of(persona, w), false));
    }
    ops::append(log, vec![claim_event(persona, &id, false)?])?;
    let w = winner(log, &id)?.ok_or_else(|| {
        Error::Other("the claim was written but the view does not show it".into())
    })?;
    Ok(report(outcome_of(persona, w), true))
}

/// A claim through the remote lock; reported as won only once the remote accepted it.
pub fn claim_synced(
    log: &Log<'_>,
    remote: &str,
    persona: &str,
    prefix: &str,
) -> Result<ClaimReport> {
    let repo = log.repo();
    sync::sync(repo, remote)?;
    let id = check(log, persona, prefix)?;
    let mut wrote = false;
    for round in 1..=MAX_ROUNDS {
        if round > 1 {
            sync::sync(repo, remote)?;
        }
        let report = |outcome, wrote| ClaimReport {
            message: id.to_hex(),
            persona: persona.to_owned(),
            outcome,
            wrote,
            remote: Some(remote.to_owned()),
        };
        match winner(log, &id)? {
            Some(w) if w.persona != persona || w.lock => {
                return Ok(report(outcome_of(persona, w), wrote))
            }
            _ => {}
        }
        let tracking = sync::tracking_name(remote, log.name());
        let remote_tip = refs::target(repo, &tracking)?;
        let parent = match remote_tip {
            Some(t) => t,
            None => log
                .local_tip()?
                .ok_or_else(|| Error::not_found(crate::kit::error::Thing::Message, prefix))?,
        };
        let commit =
            log.write_detached(Some(parent), vec![claim_event(persona, &id, true)?])?[0].commit;
        if sync::push_leased(repo, remote, log.name(), commit, remote_tip)? {
            wrote = true;
            bring_local_along(log, commit, "jules: mail claim")?;
            continue;
        }
        std::thread::sleep(std::time::Duration::from_millis(
            15 * u64::from(round) + u64::from(std::process::id() % 17),
        ));
    }
    Err(Error::Race {
        message: format!(
            "claim on {} through {remote} did not settle after {MAX_ROUNDS} rounds: others keep pushing",
            id.short(12)
        ),
    })
}

/// Move the local log to include `commit`, which the remote already has (`why`: the reflog message). The
/// last step of every remote-locked write (claims, leases).
pub(crate) fn bring_local_along(log: &Log<'_>, commit: gix::ObjectId, why: &str) -> Result<()> {
    loop {
        let local = log.local_tip()?;
        let new = match local {
            None => commit,
            Some(l) => log.join(l, commit)?.tip(),
        };
        if Some(new) == local || refs::cas(log.repo(), log.name(), local, new, why)? {
            return Ok(());
        }
    }
}
