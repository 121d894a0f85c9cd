//! One integration-test binary, a module per area, one harness.

mod harness;

mod cache;
mod checkpoint;
mod cli;
mod eventlog;
mod finalize;
mod format;
mod json;
mod layering;
mod mail;
mod remotes;
mod reroll;
mod review;
mod series;
mod state;
mod sync;
mod tick;
mod verify;
mod weave;
mod weave_mail;
