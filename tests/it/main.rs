//! One integration-test binary, a module per area, one harness.

mod harness;

mod cli;
mod eventlog;
mod mail;
mod series;
mod state;
mod verify;
mod weave;
