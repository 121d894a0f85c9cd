//! The store: loose objects, the one compare-and-swap on refs, notes, signatures, the append-only event logs
//! and their checkpoints, backups of moved history, the refs of series versions, what a signed-only remote
//! holds back, and how all of it travels (`sync`, `init`'s refspecs, the shipped hooks) and is kept
//! append-only on the remote (`guard`). Built on the kit; knows no capability.

pub mod backup;
pub mod eventlog;
pub mod guard;
pub mod heldback;
pub mod hooks;
pub mod hygiene;
pub mod init;
pub mod loose;
pub mod notes;
pub mod refs;
pub mod sign;
pub mod sync;
pub mod version_refs;
