//! Ctrl-C for long-running commands: the first SIGINT, SIGTERM or SIGHUP sets a flag that the library polls,
//! so it can stop its children and remove its temporary worktrees; a second one exits at once with 130.
//!
//! A plain `signal(2)` handler through `libc` (already in the dependency tree through gix) rather than gix's
//! `interrupt` feature, which would add signal-hook and its dependencies for the same few lines.

use std::sync::atomic::{AtomicBool, Ordering};

pub const EXIT_INTERRUPTED: i32 = super::error::EXIT_INTERRUPTED;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    // Only async-signal-safe work here: an atomic swap and _exit.
    if INTERRUPTED.swap(true, Ordering::SeqCst) {
        // SAFETY: _exit is async-signal-safe and ends the process without running any Rust code.
        unsafe { libc::_exit(EXIT_INTERRUPTED) }
    }
}

/// Install the handler (idempotent) and return the flag it sets.
pub fn install() -> &'static AtomicBool {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only touches an atomic and calls _exit, both async-signal-safe.
        unsafe {
            libc::signal(sig, handler);
        }
    }
    &INTERRUPTED
}
