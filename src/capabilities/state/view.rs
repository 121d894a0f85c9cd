//! The sprint state as a projection of `refs/jules/state`: cycle history, tracks, sprints, tasks, ticks.
//!
//! Indexes of the cycle history are positions in the log's total order, so every replica numbers runs alike.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use crate::store::eventlog::cache::{load_json, save_json, Projection, Stamp};
use crate::store::eventlog::LoggedEvent;

use super::events::*;

/// One run of a persona: a launched session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub index: u64,
    /// The id of the `state.record` event that created it.
    pub id: String,
    pub persona_id: String,
    pub session_id: Option<String>,
    pub pr_number: Option<u64>,
    pub track: String,
    pub created_at: String,
    /// `running`, `ok` or `failed`; `None` for runs imported without one.
    pub status: Option<String>,
    pub sprint: Option<u64>,
    /// Why it was launched: `cycle`, `parallel`, `weave`, `cron`, `mail`, `manual`, `import`.
    pub reason: String,
}

impl Run {
    pub fn is_running(&self) -> bool {
        self.status.as_deref() == Some(STATUS_RUNNING)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrackState {
    pub persona_id: String,
    pub session_id: Option<String>,
    pub pr_number: Option<u64>,
    pub updated_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Note {
    pub persona: String,
    pub kind: String,
    pub text: String,
    pub time: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SprintInfo {
    pub number: u64,
    pub started_at: String,
    pub closed_at: Option<String>,
    pub notes: Vec<Note>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub id: String,
    pub title: String,
    pub persona: Option<String>,
    pub sprint: Option<u64>,
    /// `todo`, `done` or `canceled`.
    pub state: String,
    pub created_at: String,
    pub updated_at: String,
    /// The paths or globs the task will change (`task add --path`), for lease-aware scheduling.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TickRecord {
    pub sprint: Option<u64>,
    pub mode: String,
    pub time: String,
    pub launched: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StateView {
    pub runs: Vec<Run>,
    pub tracks: BTreeMap<String, TrackState>,
    pub sprints: BTreeMap<u64, SprintInfo>,
    pub current_sprint: Option<u64>,
    pub tasks: Vec<Task>,
    pub ticks: Vec<TickRecord>,
    /// (persona, sprint) pairs for which the exhausted-retries alert was sent.
    pub alerts: BTreeSet<(String, u64)>,
}

impl StateView {
    pub fn run_by_session(&self, session: &str) -> Option<&Run> {
        self.runs
            .iter()
            .rev()
            .find(|r| r.session_id.as_deref() == Some(session))
    }

    /// The seed-004 `cycle_state.json` shape: history keyed by index in numeric order, and tracks.
    pub fn cycle_state(&self) -> CycleState<'_> {
        CycleState { view: self }
    }

    fn update_track(&mut self, run_index: usize, at: &str) {
        let r = &self.runs[run_index];
        // A track shows its latest run; an update to an older run does not move it back.
        let latest = self
            .runs
            .iter()
            .rev()
            .find(|x| x.track == r.track)
            .map(|x| x.index);
        if latest == Some(r.index) {
            self.tracks.insert(
                r.track.clone(),
                TrackState {
                    persona_id: r.persona_id.clone(),
                    session_id: r.session_id.clone(),
                    pr_number: r.pr_number,
                    updated_at: at.to_owned(),
                },
            );
        }
    }
}

impl Projection for StateView {
    const NAME: &'static str = "state";
    const VERSION: u32 = 1;

    fn empty() -> Self {
        StateView::default()
    }

    fn apply(&mut self, e: &LoggedEvent) {
        let data = &e.event.data;
        let s = |k: &str| data.get(k).and_then(|v| v.as_str()).map(str::to_owned);
        let n = |k: &str| data.get(k).and_then(|v| v.as_u64());
        match e.event.kind.as_str() {
            RECORD => {
                let (Some(persona_id), Some(track)) = (s("persona_id"), s("track")) else {
                    return;
                };
                let created_at = s("created_at").unwrap_or_else(|| e.event.time.clone());
                self.runs.push(Run {
                    index: self.runs.len() as u64,
                    id: e.id.to_hex(),
                    persona_id,
                    session_id: s("session_id"),
                    pr_number: n("pr_number"),
                    track,
                    created_at: created_at.clone(),
                    status: s("status"),
                    sprint: n("sprint"),
                    reason: s("reason").unwrap_or_else(|| "manual".into()),
                });
                let i = self.runs.len() - 1;
                self.update_track(i, &created_at);
            }
            SESSION => {
                let (Some(run), Some(session)) = (s("run"), s("session_id")) else {
                    return;
                };
                if let Some(i) = self.runs.iter().position(|r| r.id == run) {
                    self.runs[i].session_id = Some(session);
                    self.update_track(i, &e.event.time);
                }
            }
            DONE => {
                let target = match (s("run"), s("session_id")) {
                    (Some(run), _) => self.runs.iter().position(|r| r.id == run),
                    (None, Some(session)) => self
                        .runs
                        .iter()
                        .rposition(|r| r.session_id.as_deref() == Some(session.as_str())),
                    _ => None,
                };
                if let Some(i) = target {
                    self.runs[i].status = s("status").or(Some(STATUS_OK.into()));
                    if let Some(pr) = n("pr_number") {
                        self.runs[i].pr_number = Some(pr);
                    }
                    self.update_track(i, &e.event.time);
                }
            }
            TRACK => {
                if let (Some(track), Some(persona_id)) = (s("track"), s("persona_id")) {
                    self.tracks.insert(
                        track,
                        TrackState {
                            persona_id,
                            session_id: s("session_id"),
                            pr_number: n("pr_number"),
                            updated_at: s("updated_at").unwrap_or_else(|| e.event.time.clone()),
                        },
                    );
                }
            }
            ALERT => {
                if let (Some(p), Some(sprint)) = (s("persona"), n("sprint")) {
                    self.alerts.insert((p, sprint));
                }
            }
            SPRINT_START => {
                if let Some(number) = n("sprint") {
                    self.sprints.entry(number).or_insert(SprintInfo {
                        number,
                        started_at: e.event.time.clone(),
                        closed_at: None,
                        notes: Vec::new(),
                    });
                    if self.current_sprint.is_none_or(|c| number > c) {
                        self.current_sprint = Some(number);
                    }
                }
            }
            SPRINT_CLOSE => {
                if let Some(sprint) = n("sprint").and_then(|n| self.sprints.get_mut(&n)) {
                    sprint.closed_at.get_or_insert_with(|| e.event.time.clone());
                }
            }
            SPRINT_NOTE => {
                if let (Some(number), Some(persona), Some(kind), Some(text)) =
                    (n("sprint"), s("persona"), s("kind"), s("text"))
                {
                    if let Some(sprint) = self.sprints.get_mut(&number) {
                        sprint.notes.push(Note {
                            persona,
                            kind,
                            text,
                            time: e.event.time.clone(),
                        });
                    }
                }
            }
            TASK_ADD => {
                if let Some(title) = s("title") {
                    self.tasks.push(Task {
                        id: e.id.to_hex(),
                        title,
                        persona: s("persona"),
                        sprint: n("sprint"),
                        state: TASK_TODO.into(),
                        created_at: e.event.time.clone(),
                        updated_at: e.event.time.clone(),
                        paths: data
                            .get("paths")
                            .and_then(|p| p.as_array())
                            .map(|a| {
                                a.iter()
                                    .filter_map(|x| x.as_str().map(str::to_owned))
                                    .collect()
                            })
                            .unwrap_or_default(),
                    });
                }
            }
            TASK_DONE | TASK_CANCEL => {
                if let Some(task) =
                    s("task").and_then(|t| self.tasks.iter_mut().find(|x| x.id == t))
                {
                    // The first resolution wins: a task done on one replica and canceled on another is
                    // whichever came first in the total order, everywhere.
                    if task.state == TASK_TODO {
                        task.state = if e.event.kind == TASK_DONE {
                            TASK_DONE_STATE
                        } else {
                            TASK_CANCELED
                        }
                        .into();
                        task.updated_at = e.event.time.clone();
                    }
                }
            }
            TICK => {
                self.ticks.push(TickRecord {
                    sprint: n("sprint"),
                    mode: s("mode").unwrap_or_default(),
                    time: s("now").unwrap_or_else(|| e.event.time.clone()),
                    launched: data
                        .get("launched")
                        .and_then(|v| v.as_array())
                        .map(|a| {
                            a.iter()
                                .filter_map(|x| x.as_str().map(str::to_owned))
                                .collect()
                        })
                        .unwrap_or_default(),
                });
            }
            _ => {}
        }
    }

    fn save(&self, dir: &Path, stamp: &Stamp) -> std::io::Result<()> {
        save_json(dir, "state.json", self, stamp)
    }

    fn load(dir: &Path) -> Option<Self> {
        load_json(dir, "state.json")
    }
}

/// Serializes as seed 004's `cycle_state.json`.
pub struct CycleState<'a> {
    view: &'a StateView,
}

#[derive(Serialize)]
struct HistoryEntry<'a> {
    persona_id: &'a str,
    session_id: &'a Option<String>,
    pr_number: Option<u64>,
    created_at: &'a str,
    track: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: &'a Option<String>,
}

struct History<'a>(&'a [Run]);

impl Serialize for History<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        // Numeric order of the keys ("2" before "10"): the entries are already in index order.
        let mut map = ser.serialize_map(Some(self.0.len()))?;
        for r in self.0 {
            map.serialize_entry(
                &r.index.to_string(),
                &HistoryEntry {
                    persona_id: &r.persona_id,
                    session_id: &r.session_id,
                    pr_number: r.pr_number,
                    created_at: &r.created_at,
                    track: &r.track,
                    status: &r.status,
                },
            )?;
        }
        map.end()
    }
}

impl Serialize for CycleState<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut map = ser.serialize_map(Some(2))?;
        map.serialize_entry("history", &History(&self.view.runs))?;
        map.serialize_entry("tracks", &self.view.tracks)?;
        map.end()
    }
}
