//! Ctrl-C for long-running commands: the first SIGINT, SIGTERM or SIGHUP sets a flag that the library polls,
//! so it can stop its children and remove its temporary worktrees; a second one exits at once with 130.
//!
//! Through `signal-hook` (a maintained, signal-safe registry of handlers) so that no `unsafe` code lives in
//! this crate: the conditional shutdown is registered first, so it only fires once the flag is set.

use std::sync::atomic::AtomicBool;
use std::sync::Once;

pub const EXIT_INTERRUPTED: i32 = super::error::EXIT_INTERRUPTED;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Install the handlers (once) and return the flag they set.
pub fn install() -> &'static AtomicBool {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            // Order matters: a second signal finds the flag already set and exits.
            let _ = signal_hook::flag::register_conditional_shutdown(
                sig,
                EXIT_INTERRUPTED,
                &INTERRUPTED,
            );
            let _ = signal_hook::flag::register(sig, &INTERRUPTED);
        }
    });
    &INTERRUPTED
}
