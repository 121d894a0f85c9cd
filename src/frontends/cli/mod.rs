//! The command groups of `git jules`: one module per group, each an `Args`/`Subcommand` and a `run` that
//! translates the arguments, calls the library's use case and hands the typed result to the output.

pub mod agent;
pub mod completions;
pub mod demo;
pub mod exchange;
pub mod guard;
pub mod hooks;
pub mod init;
pub mod keys;
pub mod lease;
pub mod log;
pub mod mail;
pub mod man;
pub mod prompt;
pub mod roles;
pub mod series;
pub mod sprint;
pub mod state;
pub mod sync;
pub mod task;
pub mod tick;
pub mod verify;
pub mod weave;
pub mod web;
