//! `git jules tick`: decide what runs now, from the schedules, the state and the mailboxes.
//!
//! Planning is a pure function of its inputs; recording a plan is a conditional append on
//! `refs/jules/state` that only succeeds if the state is still the one the plan was made from, so two
//! schedulers ticking at once never launch the same run twice: the loser plans again from the new state.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::events::*;
use super::schedules::{Schedules, DEFAULT_TRACK};
use super::view::StateView;

/// Launch reasons, as recorded in `state.record`'s `reason`.
pub const REASON_CYCLE: &str = "cycle";
pub const REASON_PARALLEL: &str = "parallel";
pub const REASON_WEAVE: &str = "weave";
pub const REASON_CRON: &str = "cron";
pub const REASON_MAIL: &str = "mail";

pub const DEFAULT_MAX_RETRIES: u32 = 3;

pub struct TickInput<'a> {
    pub schedules: &'a Schedules,
    pub view: &'a StateView,
    /// Unread messages per persona (personas without mail may be absent).
    pub unread: &'a BTreeMap<String, usize>,
    pub now: DateTime<Utc>,
    /// Mail relaunches allowed per persona per sprint (`jules.maxRetries`).
    pub max_retries: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub persona: String,
    pub track: String,
    pub reason: String,
    /// The line handed to the session (`JULES_CONTEXT`).
    pub context: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Waiting {
    pub persona: String,
    pub track: String,
    pub run: String,
    pub session_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub persona: String,
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Alert {
    pub persona: String,
    pub sprint: u64,
    pub unread: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plan {
    pub sprint: Option<u64>,
    /// `sequential` or `parallel`.
    pub mode: String,
    pub now: String,
    pub decisions: Vec<Decision>,
    pub waiting: Vec<Waiting>,
    pub skipped: Vec<Skipped>,
    /// Personas that used up their retries this sprint and have not been reported yet.
    pub alerts: Vec<Alert>,
    /// A parallel sprint whose batch is woven and whose personas have no unread mail left.
    pub complete: bool,
}

fn mail_context(persona: &str, unread: usize) -> String {
    format!(
        "You have {unread} unread message(s). Read them with: git jules mail inbox --persona {persona}"
    )
}

/// Decide what to launch now.
pub fn plan(input: &TickInput) -> Plan {
    let view = input.view;
    let sched = input.schedules;
    let sprint = view.current_sprint;
    let parallel = sprint.is_some_and(|s| sched.parallel.is_parallel(s));
    let mut plan = Plan {
        sprint,
        mode: if parallel { "parallel" } else { "sequential" }.into(),
        now: input.now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        decisions: Vec::new(),
        waiting: Vec::new(),
        skipped: Vec::new(),
        alerts: Vec::new(),
        complete: false,
    };
    let running = |p: &str| {
        view.runs
            .iter()
            .rev()
            .find(|r| r.persona_id == p && r.is_running())
    };
    let track_of = |p: &str| -> String {
        sched
            .tracks
            .iter()
            .find(|(_, order)| order.iter().any(|x| x == p))
            .map(|(t, _)| t.clone())
            .unwrap_or_else(|| DEFAULT_TRACK.into())
    };
    let wait_for = |plan: &mut Plan, r: &super::view::Run| {
        if !plan.waiting.iter().any(|w| w.run == r.id) {
            plan.waiting.push(Waiting {
                persona: r.persona_id.clone(),
                track: r.track.clone(),
                run: r.id.clone(),
                session_id: r.session_id.clone(),
            });
        }
    };
    let mut consolidate = true;

    if parallel {
        let s = sprint.expect("parallel implies a sprint");
        let in_sprint: Vec<_> = view.runs.iter().filter(|r| r.sprint == Some(s)).collect();
        let busy: Vec<_> = in_sprint.iter().filter(|r| r.is_running()).collect();
        if !busy.is_empty() {
            for r in busy {
                wait_for(&mut plan, r);
            }
            consolidate = false;
        } else if !in_sprint.iter().any(|r| r.reason == REASON_PARALLEL) {
            for p in sched.cycle_personas() {
                plan.decisions.push(Decision {
                    track: track_of(&p),
                    context: format!(
                        "Parallel batch of sprint {s}: work on your part; the weaver integrates."
                    ),
                    persona: p,
                    reason: REASON_PARALLEL.into(),
                });
            }
            consolidate = false;
        } else {
            let last = |reasons: &[&str]| {
                in_sprint
                    .iter()
                    .filter(|r| reasons.contains(&r.reason.as_str()))
                    .map(|r| r.index)
                    .max()
            };
            let last_work = last(&[REASON_PARALLEL, REASON_MAIL]);
            let last_weave = last(&[REASON_WEAVE]);
            if last_weave < last_work {
                plan.decisions.push(Decision {
                    persona: sched.weaver.clone(),
                    track: DEFAULT_TRACK.into(),
                    reason: REASON_WEAVE.into(),
                    context: format!(
                        "Weave sprint {s}: git jules weave the personas' branches and mail each conflict to its author."
                    ),
                });
                consolidate = false;
            }
        }
    } else {
        for (track, order) in &sched.tracks {
            if order.is_empty() {
                continue;
            }
            let last = view.runs.iter().rev().find(|r| {
                &r.track == track && [REASON_CYCLE, "manual", "import"].contains(&r.reason.as_str())
            });
            let next = match last {
                Some(r) if r.is_running() => {
                    wait_for(&mut plan, r);
                    continue;
                }
                Some(r) => match order.iter().position(|p| *p == r.persona_id) {
                    Some(i) => order[(i + 1) % order.len()].clone(),
                    None => order[0].clone(),
                },
                None => order[0].clone(),
            };
            if let Some(r) = running(&next) {
                wait_for(&mut plan, r);
                continue;
            }
            if plan.decisions.iter().any(|d| d.persona == next) {
                continue;
            }
            plan.decisions.push(Decision {
                persona: next,
                track: track.clone(),
                reason: REASON_CYCLE.into(),
                context: format!("Your turn in the {track} cycle."),
            });
        }
    }

    // Scheduled personas whose cron time came since the previous tick (the first tick sets the baseline).
    if let Some(since) = view
        .ticks
        .last()
        .and_then(|t| DateTime::parse_from_rfc3339(&t.time).ok())
        .map(|t| t.with_timezone(&Utc))
    {
        for sch in sched.schedules.values() {
            if !sch.fires_between(since, input.now) {
                continue;
            }
            if let Some(r) = running(&sch.persona) {
                wait_for(&mut plan, r);
            } else if !plan.decisions.iter().any(|d| d.persona == sch.persona) {
                plan.decisions.push(Decision {
                    persona: sch.persona.clone(),
                    track: track_of(&sch.persona),
                    reason: REASON_CRON.into(),
                    context: format!("Scheduled run ({}).", sch.cron),
                });
            }
        }
    }

    // Mailbox consolidation: personas with unread mail are (re)launched, within their retries.
    if consolidate {
        for (persona, &unread) in input.unread {
            if unread == 0 || plan.decisions.iter().any(|d| &d.persona == persona) {
                continue;
            }
            if let Some(r) = running(persona) {
                wait_for(&mut plan, r);
                continue;
            }
            let used = view
                .runs
                .iter()
                .filter(|r| {
                    &r.persona_id == persona && r.reason == REASON_MAIL && r.sprint == sprint
                })
                .count() as u32;
            if used >= input.max_retries {
                plan.skipped.push(Skipped {
                    persona: persona.clone(),
                    why: format!(
                        "{used} mail relaunches this sprint (jules.maxRetries = {})",
                        input.max_retries
                    ),
                });
                let key = (persona.clone(), sprint.unwrap_or(0));
                if !view.alerts.contains(&key) {
                    plan.alerts.push(Alert {
                        persona: persona.clone(),
                        sprint: key.1,
                        unread,
                    });
                }
                continue;
            }
            plan.decisions.push(Decision {
                persona: persona.clone(),
                track: track_of(persona),
                reason: REASON_MAIL.into(),
                context: mail_context(persona, unread),
            });
        }
        if parallel && plan.decisions.is_empty() && plan.waiting.is_empty() {
            plan.complete = true;
        }
    }
    plan
}

/// The events that record `plan`: one `state.record` per decision (status running), one `state.alert` per
/// alert, and the `tick` itself.
pub fn plan_events(plan: &Plan, actor: &str) -> Vec<crate::eventlog::NewEvent> {
    use crate::eventlog::{Event, NewEvent};
    let mut events = Vec::new();
    for d in &plan.decisions {
        events.push(NewEvent::new(Event::new(
            RECORD,
            actor,
            serde_json::json!({
                "persona_id": d.persona,
                "session_id": null,
                "pr_number": null,
                "track": d.track,
                "created_at": plan.now,
                "status": STATUS_RUNNING,
                "sprint": plan.sprint,
                "reason": d.reason,
                "context": d.context,
            }),
        )));
    }
    for a in &plan.alerts {
        events.push(NewEvent::new(Event::new(
            ALERT,
            actor,
            serde_json::json!({ "persona": a.persona, "sprint": a.sprint, "unread": a.unread }),
        )));
    }
    events.push(NewEvent::new(Event::new(
        TICK,
        actor,
        serde_json::json!({
            "sprint": plan.sprint,
            "mode": plan.mode,
            "now": plan.now,
            "launched": plan.decisions.iter().map(|d| d.persona.clone()).collect::<Vec<_>>(),
        }),
    )));
    events
}
