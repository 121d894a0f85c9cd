//! The capabilities: every use case a frontend offers, as typed calls on a [`Workspace`](workspace::Workspace)
//! returning typed, serialisable results. Mail, sprint state and its tasks, path leases, patch series and
//! their verification, weave, workstream hand-offs, roles, prompts, the agent harnesses, the fleet at a
//! glance, and which projections each log checkpoints. Built on the store and the kit.

pub mod agent;
pub mod base;
pub mod exchange;
pub mod fleet;
pub mod lease;
pub mod mail;
pub mod projections;
pub mod prompt;
pub mod roles;
pub mod series;
pub mod sprint_tasks;
pub mod state;
pub mod verify;
pub mod weave;
pub mod workspace;
