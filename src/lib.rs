//! git-jules: many AI personas, one repository, coordinated through git alone.
//!
//! The library is the engine; the `git-jules` binary only parses arguments, calls in here and prints.
//! Nothing in this crate prints, reads the terminal or parses command lines. See `docs/architecture.md`.

#![forbid(unsafe_code)]

pub mod abbrev;
pub mod agent;
pub mod backup;
pub mod base;
pub mod base85;
pub mod checkpoints;
pub mod error;
pub mod eventlog;
pub mod exchange;
pub mod fleet;
// The fuzz targets' bodies: built for the tests (`cargo test`, `bench/fuzz.sh`) and for cargo-fuzz (which
// passes `--cfg fuzzing`), never into the library users link.
#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub mod fuzzing;
pub mod gitcli;
pub mod guard;
pub mod heldback;
pub mod hooks;
pub mod hygiene;
pub mod id;
pub mod init;
pub mod lease;
pub mod loose;
pub mod mail;
// Seeded mutations shared by the fuzz passes: tests and cargo-fuzz only, like `fuzzing`.
#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub mod mutation;
pub mod names;
pub mod notes;
pub mod prompt;
pub mod refs;
pub mod refwatch;
pub mod repo;
pub mod roles;
pub mod series;
pub mod series_refs;
pub mod settings;
pub mod sign;
pub mod state;
pub mod sync;
pub mod tasks;
pub mod testhook;
pub mod text;
pub mod trailers;
pub mod verify;
pub mod weave;
pub mod web;
pub mod workspace;

pub use error::{Error, ErrorKind, NameProblem, Remedy, Result, Thing};
pub use workspace::Workspace;
