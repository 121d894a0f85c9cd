//! The event kinds of `refs/jules/state` and their data (documented in `docs/format.md`).

pub const RECORD: &str = "state.record";
pub const SESSION: &str = "state.session";
pub const DONE: &str = "state.done";
pub const TRACK: &str = "state.track";
pub const ALERT: &str = "state.alert";
pub const SPRINT_START: &str = "sprint.start";
pub const SPRINT_CLOSE: &str = "sprint.close";
pub const SPRINT_NOTE: &str = "sprint.note";
pub const TASK_ADD: &str = "task.add";
pub const TASK_DONE: &str = "task.done";
pub const TASK_CANCEL: &str = "task.cancel";
pub const TICK: &str = "tick";

pub const STATUS_RUNNING: &str = "running";
pub const STATUS_OK: &str = "ok";
pub const STATUS_FAILED: &str = "failed";

pub const TASK_TODO: &str = "todo";
pub const TASK_DONE_STATE: &str = "done";
pub const TASK_CANCELED: &str = "canceled";
