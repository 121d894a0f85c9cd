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
pub const REASON_LAYER: &str = "layer";

pub const DEFAULT_MAX_RETRIES: u32 = 3;

/// Mail relaunches per persona per sprint: `explicit` (the command line), else `jules.maxRetries` (clamped to
/// `0..=u32::MAX`; a value that is not a number, or is negative, is an error), else [`DEFAULT_MAX_RETRIES`].
pub fn max_retries(repo: &gix::Repository, explicit: Option<u32>) -> crate::Result<u32> {
    if let Some(n) = explicit {
        return Ok(n);
    }
    Ok(crate::kit::settings::integer(repo, "jules.maxRetries", 0)?
        .map(|n| n.clamp(0, u32::MAX as i64) as u32)
        .unwrap_or(DEFAULT_MAX_RETRIES))
}

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

/// Decide what to launch now: by layers, a parallel sprint's batch and weave, or each track's cycle; then
/// the cron schedules that came due; then, unless a layer or a batch is still at work, the personas with
/// unread mail.
pub fn plan(input: &TickInput) -> Plan {
    let mut planner = Planner::new(input);
    let consolidate = match (planner.layered, planner.plan.sprint) {
        (true, _) => planner.layers(),
        (false, Some(s)) if planner.parallel => planner.parallel_sprint(s),
        _ => {
            planner.cycles();
            true
        }
    };
    planner.cron();
    if consolidate {
        planner.consolidate();
    }
    planner.plan
}

/// A plan being made: the input and the decisions so far.
struct Planner<'a> {
    input: &'a TickInput<'a>,
    layered: bool,
    parallel: bool,
    plan: Plan,
}

impl<'a> Planner<'a> {
    fn new(input: &'a TickInput<'a>) -> Self {
        let view = input.view;
        let sched = input.schedules;
        let sprint = view.current_sprint;
        let layered = !sched.layers.is_empty();
        let parallel = !layered && sprint.is_some_and(|s| sched.parallel.is_parallel(s));
        let plan = Plan {
            sprint,
            mode: if layered {
                "layered"
            } else if parallel {
                "parallel"
            } else {
                "sequential"
            }
            .into(),
            now: input.now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            decisions: Vec::new(),
            waiting: Vec::new(),
            skipped: Vec::new(),
            alerts: Vec::new(),
            complete: false,
        };
        Planner {
            input,
            layered,
            parallel,
            plan,
        }
    }

    /// The run of persona `p` that is running, if any.
    fn running(&self, p: &str) -> Option<&'a super::view::Run> {
        self.input
            .view
            .runs
            .iter()
            .rev()
            .find(|r| r.persona_id == p && r.is_running())
    }

    fn track_of(&self, p: &str) -> String {
        self.input
            .schedules
            .tracks
            .iter()
            .find(|(_, order)| order.iter().any(|x| x == p))
            .map(|(t, _)| t.clone())
            .unwrap_or_else(|| DEFAULT_TRACK.into())
    }

    fn wait_for(&mut self, r: &super::view::Run) {
        if !self.plan.waiting.iter().any(|w| w.run == r.id) {
            self.plan.waiting.push(Waiting {
                persona: r.persona_id.clone(),
                track: r.track.clone(),
                run: r.id.clone(),
                session_id: r.session_id.clone(),
            });
        }
    }

    /// Layers: the first layer not done this sprint; wait while its runs run, else launch its missing roles.
    /// Whether the mailboxes may be consolidated (every layer is done).
    fn layers(&mut self) -> bool {
        let view = self.input.view;
        let sprint = self.plan.sprint;
        for layer in &self.input.schedules.layers {
            let runs: Vec<_> = view
                .runs
                .iter()
                .filter(|r| r.sprint == sprint && r.reason == REASON_LAYER && r.track == layer.name)
                .collect();
            let busy: Vec<_> = runs.iter().filter(|r| r.is_running()).collect();
            if !busy.is_empty() {
                for r in busy {
                    self.wait_for(r);
                }
                return false;
            }
            let missing: Vec<_> = layer
                .roles
                .iter()
                .filter(|role| !runs.iter().any(|r| &r.persona_id == *role))
                .collect();
            if missing.is_empty() {
                continue;
            }
            for role in missing {
                self.plan.decisions.push(Decision {
                    persona: role.clone(),
                    track: layer.name.clone(),
                    reason: REASON_LAYER.into(),
                    context: format!("Layer {} of the sprint: you are role {role}.", layer.name),
                });
            }
            return false;
        }
        true
    }

    /// A parallel sprint `s`: wait while its runs run; else launch the batch, or the weaver once the batch
    /// (or a mail relaunch) ran after the last weave. Whether the mailboxes may be consolidated.
    fn parallel_sprint(&mut self, s: u64) -> bool {
        let sched = self.input.schedules;
        let in_sprint: Vec<_> = self
            .input
            .view
            .runs
            .iter()
            .filter(|r| r.sprint == Some(s))
            .collect();
        let busy: Vec<_> = in_sprint.iter().filter(|r| r.is_running()).collect();
        if !busy.is_empty() {
            for r in busy {
                self.wait_for(r);
            }
            return false;
        }
        if !in_sprint.iter().any(|r| r.reason == REASON_PARALLEL) {
            for p in sched.cycle_personas() {
                self.plan.decisions.push(Decision {
                    track: self.track_of(&p),
                    context: format!(
                        "Parallel batch of sprint {s}: work on your part; the weaver integrates."
                    ),
                    persona: p,
                    reason: REASON_PARALLEL.into(),
                });
            }
            return false;
        }
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
            self.plan.decisions.push(Decision {
                persona: sched.weaver.clone(),
                track: DEFAULT_TRACK.into(),
                reason: REASON_WEAVE.into(),
                context: format!(
                    "Weave sprint {s}: git jules weave the personas' branches and mail each conflict to its author."
                ),
            });
            return false;
        }
        true
    }

    /// Sequential tracks: in each, the persona after the last cycle run, unless a run still runs.
    fn cycles(&mut self) {
        let view = self.input.view;
        for (track, order) in &self.input.schedules.tracks {
            if order.is_empty() {
                continue;
            }
            let last = view.runs.iter().rev().find(|r| {
                &r.track == track && [REASON_CYCLE, "manual", "import"].contains(&r.reason.as_str())
            });
            let next = match last {
                Some(r) if r.is_running() => {
                    self.wait_for(r);
                    continue;
                }
                Some(r) => match order.iter().position(|p| *p == r.persona_id) {
                    Some(i) => order[(i + 1) % order.len()].clone(),
                    None => order[0].clone(),
                },
                None => order[0].clone(),
            };
            if let Some(r) = self.running(&next) {
                self.wait_for(r);
                continue;
            }
            if self.plan.decisions.iter().any(|d| d.persona == next) {
                continue;
            }
            self.plan.decisions.push(Decision {
                persona: next,
                track: track.clone(),
                reason: REASON_CYCLE.into(),
                context: format!("Your turn in the {track} cycle."),
            });
        }
    }

    /// Scheduled personas whose cron time came since the previous tick (the first tick sets the baseline).
    fn cron(&mut self) {
        let Some(since) = self
            .input
            .view
            .ticks
            .last()
            .and_then(|t| DateTime::parse_from_rfc3339(&t.time).ok())
            .map(|t| t.with_timezone(&Utc))
        else {
            return;
        };
        for sch in self.input.schedules.schedules.values() {
            if !sch.fires_between(since, self.input.now) {
                continue;
            }
            if let Some(r) = self.running(&sch.persona) {
                self.wait_for(r);
            } else if !self.plan.decisions.iter().any(|d| d.persona == sch.persona) {
                self.plan.decisions.push(Decision {
                    persona: sch.persona.clone(),
                    track: self.track_of(&sch.persona),
                    reason: REASON_CRON.into(),
                    context: format!("Scheduled run ({}).", sch.cron),
                });
            }
        }
    }

    /// Mailbox consolidation: personas with unread mail are (re)launched, within their retries; a parallel
    /// sprint with nothing left to launch or wait for is complete.
    fn consolidate(&mut self) {
        for (persona, &unread) in self.input.unread {
            if unread == 0 || self.plan.decisions.iter().any(|d| &d.persona == persona) {
                continue;
            }
            if let Some(r) = self.running(persona) {
                self.wait_for(r);
                continue;
            }
            self.relaunch_for_mail(persona, unread);
        }
        if self.parallel && self.plan.decisions.is_empty() && self.plan.waiting.is_empty() {
            self.plan.complete = true;
        }
    }

    /// Relaunch `persona` for its `unread` mail, or skip it (with an alert, once) when its retries this
    /// sprint are used up.
    fn relaunch_for_mail(&mut self, persona: &str, unread: usize) {
        let input = self.input;
        let sprint = self.plan.sprint;
        let used = input
            .view
            .runs
            .iter()
            .filter(|r| r.persona_id == persona && r.reason == REASON_MAIL && r.sprint == sprint)
            .count() as u32;
        if used >= input.max_retries {
            self.plan.skipped.push(Skipped {
                persona: persona.to_owned(),
                why: format!(
                    "{used} mail relaunches this sprint (jules.maxRetries = {})",
                    input.max_retries
                ),
            });
            let key = (persona.to_owned(), sprint.unwrap_or(0));
            if !input.view.alerts.contains(&key) {
                self.plan.alerts.push(Alert {
                    persona: persona.to_owned(),
                    sprint: key.1,
                    unread,
                });
            }
            return;
        }
        self.plan.decisions.push(Decision {
            persona: persona.to_owned(),
            track: self.track_of(persona),
            reason: REASON_MAIL.into(),
            context: mail_context(persona, unread),
        });
    }
}

/// The events that record `plan`: one `state.record` per decision (status running), one `state.alert` per
/// alert, and the `tick` itself.
pub fn plan_events(plan: &Plan, actor: &str) -> Vec<crate::store::eventlog::NewEvent> {
    use crate::store::eventlog::{Event, NewEvent};
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::eventlog::cache::Projection;
    use crate::store::eventlog::{Event, EventId, LoggedEvent};

    /// A view built by folding events, as the log would.
    struct Sim {
        view: StateView,
        n: u64,
    }

    impl Sim {
        fn new() -> Sim {
            Sim {
                view: StateView::default(),
                n: 0,
            }
        }
        fn apply(&mut self, e: Event) -> String {
            self.n += 1;
            let id = EventId::of(&serde_json::to_vec(&(self.n, &e.kind)).unwrap());
            self.view.apply(&LoggedEvent {
                id,
                lamport: self.n,
                commit: gix::ObjectId::null(gix::hash::Kind::Sha1),
                event: e,
            });
            id.to_hex()
        }
        fn record(&mut self, p: &Plan) -> Vec<String> {
            let before = self.view.runs.len();
            for ev in plan_events(p, "scheduler") {
                self.apply(ev.event);
            }
            self.view.runs[before..]
                .iter()
                .map(|r| r.id.clone())
                .collect()
        }
        fn done(&mut self, run: &str) {
            self.apply(Event::new(
                DONE,
                "x",
                serde_json::json!({"run": run, "status": "ok"}),
            ));
        }
        fn sprint(&mut self, n: u64) {
            self.apply(Event::new(
                SPRINT_START,
                "x",
                serde_json::json!({"sprint": n}),
            ));
        }
    }

    fn at(t: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(t).unwrap().with_timezone(&Utc)
    }

    fn tick(s: &Schedules, sim: &Sim, unread: &BTreeMap<String, usize>, now: &str) -> Plan {
        plan(&TickInput {
            schedules: s,
            view: &sim.view,
            unread,
            now: at(now),
            max_retries: 3,
        })
    }

    fn personas(p: &Plan) -> Vec<&str> {
        p.decisions.iter().map(|d| d.persona.as_str()).collect()
    }

    #[test]
    fn sequential_cycle_waits_for_the_running_session_and_wraps() {
        let s = Schedules::parse(
            "[cycle]\norder = [\"a\", \"b\", \"c\", \"d\", \"e\"]\n",
            "t",
        )
        .unwrap();
        let mut sim = Sim::new();
        sim.sprint(1);
        let none = BTreeMap::new();
        let mut launched = Vec::new();
        for _ in 0..7 {
            let p = tick(&s, &sim, &none, "2026-01-01T00:00:00Z");
            assert_eq!(p.decisions.len(), 1, "{p:?}");
            launched.push(p.decisions[0].persona.clone());
            let runs = sim.record(&p);
            // While it runs, the next tick waits.
            let waiting = tick(&s, &sim, &none, "2026-01-01T00:00:00Z");
            assert!(waiting.decisions.is_empty());
            assert_eq!(waiting.waiting.len(), 1);
            sim.done(&runs[0]);
        }
        assert_eq!(launched, ["a", "b", "c", "d", "e", "a", "b"]);
    }

    #[test]
    fn parallel_sprint_launches_all_then_the_weaver_then_only_the_conflicted() {
        let s = Schedules::parse(
            "[cycle]\norder = [\"a\", \"b\", \"c\"]\n[parallel]\nevery = 5\n",
            "t",
        )
        .unwrap();
        let mut sim = Sim::new();
        sim.sprint(5);
        let none = BTreeMap::new();
        let p = tick(&s, &sim, &none, "2026-01-01T00:00:00Z");
        assert_eq!(p.mode, "parallel");
        assert_eq!(personas(&p), ["a", "b", "c"]);
        let runs = sim.record(&p);
        sim.done(&runs[0]);
        assert!(
            tick(&s, &sim, &none, "2026-01-01T00:01:00Z")
                .decisions
                .is_empty(),
            "b and c still run"
        );
        sim.done(&runs[1]);
        sim.done(&runs[2]);
        let p = tick(&s, &sim, &none, "2026-01-01T00:02:00Z");
        assert_eq!(personas(&p), ["weaver"]);
        let w = sim.record(&p);
        sim.done(&w[0]);
        // The weaver mailed b a conflict: only b comes back, then the weaver again, then the sprint is complete.
        let mut unread = BTreeMap::new();
        unread.insert("b".to_string(), 1usize);
        let p = tick(&s, &sim, &unread, "2026-01-01T00:03:00Z");
        assert_eq!(personas(&p), ["b"]);
        assert!(p.decisions[0]
            .context
            .contains("git jules mail inbox --persona b"));
        let again = sim.record(&p);
        sim.done(&again[0]);
        let p = tick(&s, &sim, &none, "2026-01-01T00:04:00Z");
        assert_eq!(personas(&p), ["weaver"]);
        let w = sim.record(&p);
        sim.done(&w[0]);
        let p = tick(&s, &sim, &none, "2026-01-01T00:05:00Z");
        assert!(p.decisions.is_empty() && p.complete, "{p:?}");
    }

    #[test]
    fn consolidation_relaunches_exactly_those_with_mail_within_max_retries() {
        // c is not in the cycle: it only ever runs for its mail.
        let s = Schedules::parse("[cycle]\norder = [\"a\", \"b\"]\n", "t").unwrap();
        let mut sim = Sim::new();
        sim.sprint(1);
        let mut unread = BTreeMap::new();
        unread.insert("c".to_string(), 2usize);
        unread.insert("b".to_string(), 0usize);
        let p = tick(&s, &sim, &unread, "2026-01-01T00:00:00Z");
        assert_eq!(
            personas(&p),
            ["a", "c"],
            "a by the cycle, c for its mail, b has none"
        );
        let runs = sim.record(&p);
        sim.done(&runs[0]);
        sim.done(&runs[1]);
        for round in 0..2 {
            let p = tick(&s, &sim, &unread, "2026-01-01T00:00:00Z");
            assert!(personas(&p).contains(&"c"), "round {round}: {p:?}");
            for r in sim.record(&p) {
                sim.done(&r);
            }
        }
        // Three mail relaunches used: c is skipped and an alert is raised, once.
        let p = tick(&s, &sim, &unread, "2026-01-01T00:00:00Z");
        assert!(!personas(&p).contains(&"c"), "{p:?}");
        assert_eq!(p.skipped[0].persona, "c");
        assert_eq!(p.alerts.len(), 1);
        for r in sim.record(&p) {
            sim.done(&r);
        }
        let p = tick(&s, &sim, &unread, "2026-01-01T00:00:00Z");
        assert!(p.alerts.is_empty(), "the alert was already recorded");
    }

    #[test]
    fn cron_fires_once_its_time_has_come() {
        let s = Schedules::parse("[schedules.janitor]\ncron = \"0 3 * * *\"\n", "t").unwrap();
        let mut sim = Sim::new();
        let none = BTreeMap::new();
        let p = tick(&s, &sim, &none, "2026-01-01T02:00:00Z");
        assert!(p.decisions.is_empty(), "the first tick sets the baseline");
        sim.record(&p);
        let p = tick(&s, &sim, &none, "2026-01-01T02:30:00Z");
        assert!(p.decisions.is_empty());
        sim.record(&p);
        let p = tick(&s, &sim, &none, "2026-01-01T03:00:30Z");
        assert_eq!(personas(&p), ["janitor"]);
        assert_eq!(p.decisions[0].reason, REASON_CRON);
    }
}
