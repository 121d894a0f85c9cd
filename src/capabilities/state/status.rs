//! `sprint status`: the current sprint, its runs and tasks, as one typed, serialisable value.

use serde::Serialize;

use super::view::{Run, SprintInfo, StateView, Task};

/// The current sprint (none before the first `sprint start`) with the runs and tasks that belong to it.
#[derive(Debug, Clone, Serialize)]
pub struct SprintStatus {
    pub sprint: Option<SprintInfo>,
    pub runs: Vec<Run>,
    pub tasks: Vec<Task>,
}

pub fn sprint_status(view: &StateView) -> SprintStatus {
    let current = view.current_sprint;
    let here = |s: Option<u64>| s.is_some() && s == current;
    SprintStatus {
        sprint: current.and_then(|n| view.sprints.get(&n)).cloned(),
        runs: view
            .runs
            .iter()
            .filter(|r| here(r.sprint))
            .cloned()
            .collect(),
        tasks: view
            .tasks
            .iter()
            .filter(|t| here(t.sprint))
            .cloned()
            .collect(),
    }
}
