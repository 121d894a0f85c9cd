//! The fleet at a glance: every persona (declared in `.jules/`, or seen on the mail log) with its mail
//! counts, last activity, open claims, current task and live path leases (`src/capabilities/lease/`), and the sprint's
//! progress. One typed,
//! serialisable read over the mail and state views, for `git jules web`'s fleet page and `/api/fleet`.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::capabilities::mail::api;
use crate::capabilities::mail::message::BROADCAST;
use crate::capabilities::mail::recipients::{Groups, Known};
use crate::capabilities::state::status::{sprint_status, SprintStatus};
use crate::capabilities::state::view::{Run, TickRecord};
use crate::capabilities::state::State;
use crate::kit::error::Result;
use crate::store::eventlog::warm::WarmViews;

use crate::JSON_VERSION;

/// How many of the last ticks and runs the fleet shows.
const RECENT: usize = 10;

#[derive(Debug, Clone, Serialize)]
pub struct Fleet {
    pub version: u32,
    pub personas: Vec<PersonaRow>,
    pub messages: u64,
    /// Messages with `needs_response` nobody answered (as `mail stats` counts them).
    pub unanswered: u64,
    pub sprint: SprintStatus,
    /// Tasks of the current sprint by state (`todo`, `done`, `canceled`).
    pub tasks_by_state: BTreeMap<String, u64>,
    /// The last ticks, newest first: when, in which mode, whom they launched.
    pub ticks: Vec<TickRecord>,
    /// The last runs of the cycle history, newest first, with why each was launched.
    pub history: Vec<Run>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PersonaRow {
    pub persona: String,
    /// Named by `.jules/` (schedules, groups, persona directories); otherwise only seen on the log.
    pub declared: bool,
    pub received: u64,
    pub unread: u64,
    /// Unread messages in the inbox that ask for a response.
    pub needs_response: u64,
    pub sent: u64,
    /// The newest of its last message sent and its last run.
    pub last_activity: Option<String>,
    /// Messages in its inbox it holds the claim on.
    pub open_claims: Vec<String>,
    /// Its newest `todo` task of the current sprint.
    pub current_task: Option<String>,
    /// The status of its newest run (`running`, `ok`, `failed`).
    pub last_run: Option<String>,
    /// Its live leases (`refs/jules/lease`), in the log's order, as `lease list --json` lists them: paths,
    /// exclusive or shared, seconds left, reason.
    pub leases: Vec<crate::capabilities::lease::Listed>,
}

impl PersonaRow {
    fn empty(persona: &str, declared: bool) -> PersonaRow {
        PersonaRow {
            persona: persona.to_owned(),
            declared,
            received: 0,
            unread: 0,
            needs_response: 0,
            sent: 0,
            last_activity: None,
            open_claims: Vec::new(),
            current_task: None,
            last_run: None,
            leases: Vec::new(),
        }
    }
}

/// Read the fleet of `repo` (its work tree's `.jules/` and its logs) as of `now`; `warm`: the views a
/// long-running frontend keeps between its calls (the mail counts among them).
pub fn read(
    repo: &gix::Repository,
    warm: Option<std::sync::Arc<WarmViews>>,
    now: DateTime<Utc>,
) -> Result<Fleet> {
    let groups = Groups::load(repo)?;
    let known = Known::load(repo, &groups, std::iter::empty())?;
    let mut declared = known.personas.clone();
    if let Some(wt) = repo.workdir() {
        declared.extend(crate::capabilities::roles::scan(wt).personas);
    }
    let mut rows: BTreeMap<String, PersonaRow> = BTreeMap::new();
    // One pass over every mailbox (`MailView::tally`), not a listing per persona.
    let (messages, unanswered) = if let Some(tally) = api::tally(repo, warm, now)? {
        for (p, t) in tally.personas {
            let mut row = PersonaRow::empty(&p, declared.contains(&p));
            row.received = t.received;
            row.unread = t.unread;
            row.needs_response = t.needs_response;
            row.sent = t.sent;
            row.last_activity = t.last_sent;
            row.open_claims = t.open_claims;
            rows.insert(p, row);
        }
        (tally.messages, tally.unanswered)
    } else {
        (0, 0)
    };
    for p in &declared {
        if p == BROADCAST {
            continue;
        }
        rows.entry(p.clone())
            .or_insert_with(|| PersonaRow::empty(p, true));
    }
    // Leases are timed by the lease clock (`lease::now`: the committer time), as `lease list` times them.
    let lease_log = crate::capabilities::lease::open(repo)?;
    let leases = crate::capabilities::lease::view(&lease_log)?;
    let mut listed = crate::capabilities::lease::list(
        &leases,
        crate::capabilities::lease::now(repo),
        &crate::capabilities::lease::Filter::default(),
    )?;
    // Each lease says whether its acquire is its persona's (`signature`), as `lease list` does.
    crate::capabilities::lease::sign_listed(&lease_log, &mut listed)?;
    for l in listed {
        rows.entry(l.lease.persona.clone())
            .or_insert_with(|| PersonaRow::empty(&l.lease.persona, false))
            .leases
            .push(l);
    }
    let state = State::open(repo)?.view()?.view;
    let sprint = sprint_status(&state);
    for run in &state.runs {
        if let Some(row) = rows.get_mut(&run.persona_id) {
            row.last_run = run.status.clone().or(row.last_run.take());
            if row.last_activity.as_deref() < Some(run.created_at.as_str()) {
                row.last_activity = Some(run.created_at.clone());
            }
        }
    }
    for t in sprint.tasks.iter().filter(|t| t.state == "todo") {
        if let Some(row) = t.persona.as_ref().and_then(|p| rows.get_mut(p)) {
            row.current_task = Some(t.title.clone());
        }
    }
    let mut tasks_by_state = BTreeMap::new();
    for t in &sprint.tasks {
        *tasks_by_state.entry(t.state.clone()).or_insert(0) += 1;
    }
    Ok(Fleet {
        version: JSON_VERSION,
        personas: rows.into_values().collect(),
        messages,
        unanswered,
        tasks_by_state,
        ticks: state.ticks.iter().rev().take(RECENT).cloned().collect(),
        history: state.runs.iter().rev().take(RECENT).cloned().collect(),
        sprint,
    })
}
