//! One integration-test binary, a module per area, one harness.

mod harness;

mod cache;
mod checkpoint;
mod cli;
mod eventlog;
mod exchange;
mod finalize;
mod format;
mod install;
mod json;
mod layering;
mod layers;
mod mail;
mod mcp;
mod prompt;
mod remotes;
mod reroll;
mod review;
mod roles;
mod search;
mod series;
mod state;
mod sync;
mod tick;
mod verify;
mod weave;
mod weave_mail;
