//! The sprint's tasks as use cases: list them, mark one done (releasing the leases taken for it), as the
//! CLI's `task` commands, the MCP server's `task_*` tools and the web view call them.
//!
//! Its own module above `state` and `lease`: finishing a task is a state change that also ends leases.

use serde::Serialize;

use crate::capabilities::state::{view::Task, State};
use crate::capabilities::workspace::Workspace;
use crate::Result;

/// Which tasks to list.
#[derive(Debug, Clone, Default)]
pub struct TaskQuery {
    /// `todo`, `done` or `canceled`.
    pub state: Option<String>,
    pub persona: Option<String>,
}

/// The tasks of every sprint that match `query`, in the log's order (`task ls --json`).
pub fn list(ws: &Workspace, query: &TaskQuery) -> Result<Vec<Task>> {
    let repo = ws.repo();
    let view = State::open(&repo)?
        .with_passed_over(Some(ws.passed_over()))
        .view()?
        .view;
    Ok(view
        .tasks
        .into_iter()
        .filter(|t| query.state.as_ref().is_none_or(|w| &t.state == w))
        .filter(|t| query.persona.is_none() || t.persona == query.persona)
        .collect())
}

/// A task marked done (`task done --json`).
#[derive(Debug, Clone, Serialize)]
pub struct Done {
    // In the order of the sorted map the document had before it was a struct.
    /// Always `done`.
    pub state: &'static str,
    pub task: String,
    /// The leases acquired for the task that were released with it (when `jules.lease.releaseOnDone`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub released: Vec<String>,
    /// Why they were not released, when releasing failed (the task is done all the same): a warning,
    /// carried as data so that every frontend shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub release_error: Option<String>,
}

/// Mark the task `id` (or a unique prefix) done as `actor`, then release the leases `actor` took for it.
pub fn done(ws: &Workspace, actor: &str, id: &str) -> Result<Done> {
    let repo = ws.repo();
    let task = State::open(&repo)?
        .with_passed_over(Some(ws.passed_over()))
        .task_resolve(actor, id, true)?;
    let (released, release_error) =
        match crate::capabilities::lease::release_after_done(&repo, actor, &task) {
            Ok(leases) => (leases.into_iter().map(|l| l.id).collect(), None),
            // One string in the data: the message and its causes on one line.
            Err(e) => (Vec::new(), Some(format!("{e:#}"))),
        };
    Ok(Done {
        task,
        state: "done",
        released,
        release_error,
    })
}
