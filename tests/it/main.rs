//! One integration-test binary, a module per area, one harness.

mod harness;

mod agent;
mod cache;
mod checkpoint;
mod cli;
mod config;
mod eventlog;
mod exchange;
mod finalize;
mod format;
mod held;
mod json;
mod layering;
mod layers;
mod lease;
mod mail;
mod mcp;
mod names;
mod prompt;
mod remotes;
mod reroll;
mod review;
mod roles;
mod search;
mod series;
mod series_versions;
mod sign;
mod state;
mod sync;
mod tick;
mod usecases;
mod verify;
mod weave;
mod weave_mail;
mod web;
