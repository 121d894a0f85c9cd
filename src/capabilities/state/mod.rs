//! Sprint state on `refs/jules/state`: the scheduler's cycle history, tracks, sprints, tasks and ticks.
//!
//! - [`events`] — the event kinds.
//! - [`view`] — the projection, and seed 004's `cycle_state.json` shape.
//! - [`schedules`] — `.jules/schedules.toml`.
//! - [`tick`] — planning what runs now and recording the decision exactly once.
//! - [`stats`] — per-sprint metrics.
//! - [`status`] — the current sprint with its runs and tasks (`sprint status`, the web fleet page).

pub mod events;
pub mod schedules;
pub mod stats;
pub mod status;
pub mod tick;
pub mod view;

use serde::Serialize;

use crate::kit::abbrev;
use crate::kit::error::{Error, Result};
use crate::kit::names::validate_name;
use crate::store::eventlog::cache::Loaded;
use crate::store::eventlog::{Event, EventId, Log, NewEvent};
use events::*;
use view::StateView;

pub const LOG: &str = "state";

/// The state log of a repository.
pub struct State<'r> {
    pub log: Log<'r>,
}

/// What `state record` adds.
#[derive(Debug, Clone, Default)]
pub struct RecordArgs {
    pub persona: String,
    pub session: Option<String>,
    pub track: String,
    pub pr: Option<u64>,
    pub reason: String,
}

#[derive(Debug, Serialize)]
pub struct ImportReport {
    pub runs: usize,
    pub tracks: usize,
    pub added: usize,
    pub already_present: usize,
}

impl<'r> State<'r> {
    pub fn open(repo: &'r gix::Repository) -> Result<Self> {
        Ok(State {
            log: Log::open(repo, LOG)?,
        })
    }

    /// This state recording the checkpoints its reads pass over in its caller's `record` (see
    /// [`crate::store::eventlog::checkpoint::PassedOver`]).
    pub fn with_passed_over(
        self,
        record: Option<std::sync::Arc<crate::store::eventlog::checkpoint::PassedOver>>,
    ) -> Self {
        State {
            log: self.log.with_passed_over(record),
        }
    }

    pub fn view(&self) -> Result<Loaded<StateView>> {
        self.log.project::<StateView>()
    }

    fn append(&self, kind: &str, actor: &str, data: serde_json::Value) -> Result<EventId> {
        validate_name("actor", actor)?;
        Ok(self
            .log
            .append(NewEvent::new(Event::new(kind, actor, data)))?
            .id)
    }

    /// Record a run (a launched session) in the cycle history; returns the run's id.
    pub fn record(&self, actor: &str, a: &RecordArgs) -> Result<EventId> {
        validate_name("persona", &a.persona)?;
        validate_name("track", &a.track)?;
        if let Some(s) = &a.session {
            validate_session(s)?;
        }
        let sprint = self.view()?.view.current_sprint;
        self.append(
            RECORD,
            actor,
            serde_json::json!({
                "persona_id": a.persona,
                "session_id": a.session,
                "pr_number": a.pr,
                "track": a.track,
                "created_at": crate::store::eventlog::event::now_rfc3339(),
                "status": STATUS_RUNNING,
                "sprint": sprint,
                "reason": a.reason,
            }),
        )
    }

    /// Attach the session id a launcher reported to a recorded run.
    pub fn set_session(&self, actor: &str, run: &str, session: &str) -> Result<()> {
        validate_session(session)?;
        self.append(
            SESSION,
            actor,
            serde_json::json!({ "run": run, "session_id": session }),
        )?;
        Ok(())
    }

    /// Mark a run finished, named by its session id or by (a prefix of) its run id.
    pub fn done(
        &self,
        actor: &str,
        session_or_run: &str,
        status: &str,
        pr: Option<u64>,
    ) -> Result<String> {
        if ![STATUS_OK, STATUS_FAILED].contains(&status) {
            return Err(Error::usage(format!(
                "status must be ok or failed, not {status:?}"
            )));
        }
        let view = self.view()?.view;
        let run = match view.run_by_session(session_or_run) {
            Some(r) => r.id.clone(),
            None => {
                let mut ids: Vec<String> = view.runs.iter().map(|r| r.id.clone()).collect();
                ids.sort();
                abbrev::resolve(crate::kit::error::Thing::RunOrSession, session_or_run, &ids)
                    .map_err(|_| {
                        Error::not_found(crate::kit::error::Thing::RunOrSession, session_or_run)
                    })?
                    .to_owned()
            }
        };
        // Like a task, a finished run stays finished: a second `done` would silently rewrite history.
        if let Some(r) = view.runs.iter().find(|r| r.id == run) {
            if r.status.is_some() && !r.is_running() {
                return Err(Error::usage(format!(
                    "run {} is already {}",
                    &run[..12.min(run.len())],
                    r.status.as_deref().unwrap_or("finished")
                )));
            }
        }
        self.append(
            DONE,
            actor,
            serde_json::json!({ "run": run, "status": status, "pr_number": pr }),
        )?;
        Ok(run)
    }

    /// Start sprint `number` (default: one after the current); refuses a number already started.
    pub fn sprint_start(&self, actor: &str, number: Option<u64>) -> Result<u64> {
        let view = self.view()?.view;
        let number = number.unwrap_or_else(|| view.current_sprint.map_or(1, |c| c + 1));
        if view.sprints.contains_key(&number) {
            return Err(Error::usage(format!("sprint {number} was already started")));
        }
        self.append(SPRINT_START, actor, serde_json::json!({ "sprint": number }))?;
        Ok(number)
    }

    pub fn sprint_close(&self, actor: &str, number: Option<u64>) -> Result<u64> {
        let view = self.view()?.view;
        let number = number
            .or(view.current_sprint)
            .ok_or_else(|| Error::usage("no sprint has been started"))?;
        match view.sprints.get(&number) {
            None => {
                return Err(Error::not_found(
                    crate::kit::error::Thing::Sprint,
                    number.to_string(),
                ))
            }
            Some(s) if s.closed_at.is_some() => {
                return Err(Error::usage(format!("sprint {number} is already closed")))
            }
            Some(_) => {}
        }
        self.append(SPRINT_CLOSE, actor, serde_json::json!({ "sprint": number }))?;
        Ok(number)
    }

    pub fn sprint_note(&self, actor: &str, persona: &str, kind: &str, text: &str) -> Result<u64> {
        validate_name("persona", persona)?;
        if !["plan", "feedback"].contains(&kind) {
            return Err(Error::usage(format!(
                "note kind must be plan or feedback, not {kind:?}"
            )));
        }
        if text.trim().is_empty() {
            return Err(Error::usage("the note is empty"));
        }
        let sprint =
            self.view()?.view.current_sprint.ok_or_else(|| {
                Error::usage("no sprint has been started: `git jules sprint start`")
            })?;
        self.append(
            SPRINT_NOTE,
            actor,
            serde_json::json!({ "sprint": sprint, "persona": persona, "kind": kind, "text": text }),
        )?;
        Ok(sprint)
    }

    pub fn task_add(&self, actor: &str, title: &str, persona: Option<&str>) -> Result<EventId> {
        self.task_add_paths(actor, title, persona, &[])
    }

    /// [`State::task_add`] declaring the paths or globs the task will change (the caller checks them as lease
    /// patterns: leases sit above state), so that `tick` can hold the persona back while another persona
    /// leases them.
    pub fn task_add_paths(
        &self,
        actor: &str,
        title: &str,
        persona: Option<&str>,
        paths: &[String],
    ) -> Result<EventId> {
        if title.trim().is_empty() {
            return Err(Error::usage("the task title is empty"));
        }
        if let Some(p) = persona {
            validate_name("persona", p)?;
        }
        let sprint = self.view()?.view.current_sprint;
        let mut data =
            serde_json::json!({ "title": title.trim(), "persona": persona, "sprint": sprint });
        if !paths.is_empty() {
            data["paths"] = paths.into();
        }
        self.append(TASK_ADD, actor, data)
    }

    /// Mark a task (named by a prefix of its id) done or canceled; returns its full id.
    pub fn task_resolve(&self, actor: &str, prefix: &str, done: bool) -> Result<String> {
        let view = self.view()?.view;
        let mut ids: Vec<String> = view.tasks.iter().map(|t| t.id.clone()).collect();
        ids.sort();
        let id = abbrev::resolve(crate::kit::error::Thing::Task, prefix, &ids)?.to_owned();
        let task = view.tasks.iter().find(|t| t.id == id).expect("resolved");
        if task.state != TASK_TODO {
            return Err(Error::usage(format!(
                "task {} is already {}",
                &id[..12],
                task.state
            )));
        }
        self.append(
            if done { TASK_DONE } else { TASK_CANCEL },
            actor,
            serde_json::json!({ "task": id }),
        )?;
        Ok(id)
    }

    /// Import seed 004's `cycle_state.json`: history as a dict with integer keys, or the legacy list.
    /// Imported events carry no nonce and take their time from the file, so importing twice adds nothing.
    pub fn import_cycle_state(&self, actor: &str, text: &str) -> Result<ImportReport> {
        validate_name("actor", actor)?;
        let doc: serde_json::Value =
            serde_json::from_str(text).map_err(|e| Error::usage(format!("not valid JSON: {e}")))?;
        let history: Vec<(u64, serde_json::Value)> = match doc.get("history") {
            None | Some(serde_json::Value::Null) => Vec::new(),
            Some(serde_json::Value::Array(list)) => list
                .iter()
                .cloned()
                .enumerate()
                .map(|(i, v)| (i as u64, v))
                .collect(),
            Some(serde_json::Value::Object(map)) => {
                let mut entries = Vec::new();
                for (k, v) in map {
                    let i = k.parse::<u64>().map_err(|_| {
                        Error::usage(format!("history key {k:?} is not an integer"))
                    })?;
                    entries.push((i, v.clone()));
                }
                entries.sort_by_key(|(i, _)| *i);
                entries
            }
            Some(_) => return Err(Error::usage("`history` must be an object or a list")),
        };
        // Older files spelled fields with a `last_` prefix.
        let field = |v: &serde_json::Value, k: &str| -> serde_json::Value {
            v.get(k)
                .or_else(|| v.get(format!("last_{k}")))
                .cloned()
                .unwrap_or(serde_json::Value::Null)
        };
        let mut events = Vec::new();
        for (i, entry) in &history {
            let persona = field(entry, "persona_id");
            let persona = persona
                .as_str()
                .ok_or_else(|| Error::usage(format!("history entry {i} has no persona_id")))?;
            validate_name("persona", persona)?;
            let created_at = field(entry, "created_at");
            let track = field(entry, "track");
            let mut data = serde_json::json!({
                "persona_id": persona,
                "session_id": field(entry, "session_id"),
                "pr_number": field(entry, "pr_number"),
                "track": track.as_str().unwrap_or(crate::capabilities::state::schedules::DEFAULT_TRACK),
                "created_at": created_at,
                "reason": "import",
                "import_index": i,
            });
            if let Some(status) = entry.get("status") {
                data["status"] = status.clone();
            }
            events.push(imported(RECORD, actor, created_at.as_str(), data));
        }
        let mut tracks = 0;
        if let Some(map) = doc.get("tracks").and_then(|t| t.as_object()) {
            for (name, t) in map {
                validate_name("track", name)?;
                let updated_at = field(t, "updated_at");
                events.push(imported(
                    TRACK,
                    actor,
                    updated_at.as_str(),
                    serde_json::json!({
                        "track": name,
                        "persona_id": field(t, "persona_id"),
                        "session_id": field(t, "session_id"),
                        "pr_number": field(t, "pr_number"),
                        "updated_at": updated_at,
                    }),
                ));
                tracks += 1;
            }
        }
        let (present, _) = self.log.read_all()?;
        let present: std::collections::HashSet<EventId> = present.iter().map(|e| e.id).collect();
        let total = events.len();
        let mut fresh = Vec::new();
        for e in events {
            if !present.contains(&e.event.id()?) {
                fresh.push(e);
            }
        }
        let added = fresh.len();
        self.log.append_batch(fresh)?;
        Ok(ImportReport {
            runs: history.len(),
            tracks,
            added,
            already_present: total - added,
        })
    }
}

fn imported(kind: &str, actor: &str, time: Option<&str>, data: serde_json::Value) -> NewEvent {
    let mut e = Event::new(kind, actor, data);
    e.nonce = None;
    e.time = time.unwrap_or("1970-01-01T00:00:00.000Z").to_owned();
    NewEvent::new(e)
}

/// Session ids come from launchers: printable, no whitespace, bounded.
pub fn validate_session(s: &str) -> Result<()> {
    if s.is_empty() || s.len() > 200 || s.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(Error::usage(format!(
            "invalid session id {s:?}: 1 to 200 printable characters without spaces"
        )));
    }
    Ok(())
}
