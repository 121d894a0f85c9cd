//! The kit: what knows nothing of git-jules' concepts. Errors, ids and abbreviations, names, untrusted text
//! made safe to show, trailers, base85, an ordered parallel map, the fence around the `git` binary, the settings table and opening the
//! repository, waking on ref changes, and the test-only pause points and mutator.

pub mod abbrev;
pub mod base85;
pub mod error;
pub mod gitcli;
pub mod id;
// Seeded mutations shared by the fuzz passes: tests and cargo-fuzz only, like `fuzzing`.
#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub mod mutation;
pub mod names;
pub mod par;
pub mod refwatch;
pub mod repo;
pub mod settings;
pub mod testhook;
pub mod text;
pub mod trailers;
