//! git-jules: many AI personas, one repository, coordinated through git alone.
//!
//! The library is the engine; the `git-jules` binary's frontends (the command line, the MCP server, the web
//! view) only translate, call in here and present. Nothing in this crate prints, reads the terminal, parses
//! command lines or speaks HTTP. See `docs/architecture.md`.
//!
//! Three rooms, each using only the ones before it:
//! - [`kit`]: what knows nothing of git-jules' concepts (errors, ids, names, text, trailers, the `git` fence,
//!   settings, opening the repository);
//! - [`store`]: objects, refs, notes, signatures, the event logs, backups, and how they travel (sync) and are
//!   guarded (the remote's pre-receive hook);
//! - [`capabilities`]: the use cases every frontend calls on a [`Workspace`]: mail, sprint state, leases,
//!   patch series, verification, weave, hand-offs, roles, prompts, agent harnesses, the fleet.

#![forbid(unsafe_code)]

pub mod capabilities;
pub mod kit;
pub mod store;

// The fuzz targets' bodies: built for the tests (`cargo test`, `bench/fuzz.sh`) and for cargo-fuzz (which
// passes `--cfg fuzzing`), never into the library users link.
#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub mod fuzzing;

/// The version of every JSON document a frontend hands out (the CLI's `--json`, the MCP server's results,
/// the web view's JSON pages): the contract in docs/json.md. Defined here once, for every frontend.
pub const JSON_VERSION: u32 = 1;

pub use capabilities::workspace::Workspace;
pub use kit::error::{Error, ErrorKind, NameProblem, Remedy, Result, Thing};
