//! One integration-test binary, a module per area, one harness.

mod harness;

mod cli;
mod eventlog;
mod exchange;
mod finalize;
mod format;
mod layers;
mod mail;
mod prompt;
mod reroll;
mod review;
mod roles;
mod series;
mod state;
mod tick;
mod verify;
mod weave;
