//! Pause points for tests that must prove where a process was, not guess it from a clock. Inert unless
//! armed; the binary arms it from the environment: when `JULES_TEST_PAUSE_AT` names a point (the point of
//! `pause(&["append", "refs/jules/mail"])` is `append refs/jules/mail`), the `JULES_TEST_PAUSE_HIT`-th time
//! (default 1) the process reaches it, it creates `JULES_TEST_PAUSE_DIR/<pid>` and waits until that
//! directory holds `JULES_TEST_PAUSE_UNTIL` entries (default 0: until it is killed). A test then kills a
//! writer provably inside an append, or lets two racers pass the same point together.
//!
//! The wait gives up after two minutes (a bound that only catches a test that never releases it) and the
//! process goes on as if nothing happened: whoever can set a process's environment can already make it do
//! far worse than wait. Unarmed, a pause point costs one atomic load.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Where to pause, as `arm` was given it.
pub struct Pause {
    /// The point's name, e.g. `append refs/jules/state`.
    pub at: String,
    /// Which time the process reaches it (1: the first).
    pub hit: u64,
    /// Where the mark goes and the others are counted.
    pub dir: PathBuf,
    /// Wait until the directory holds this many entries; 0: until killed.
    pub until: usize,
}

static CONFIG: OnceLock<Pause> = OnceLock::new();

/// Arm the pause (once per process; later calls are ignored). The binary does it from
/// `JULES_TEST_PAUSE_*`: the library itself never reads the environment.
pub fn arm(pause: Pause) {
    let _ = CONFIG.set(pause);
}

/// Mark and wait here if the environment names the point `parts` (joined by spaces) and this is the
/// chosen hit; else return at once (without building the name when nothing is configured).
pub fn pause(parts: &[&str]) {
    static HITS: AtomicU64 = AtomicU64::new(0);
    let Some(p) = CONFIG.get() else { return };
    let point = parts.join(" ");
    if p.at != point || HITS.fetch_add(1, Ordering::SeqCst) + 1 != p.hit {
        return;
    }
    if std::fs::write(p.dir.join(std::process::id().to_string()), &point).is_err() {
        return;
    }
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(120) {
        let entries = std::fs::read_dir(&p.dir).map_or(0, |d| d.count());
        if p.until > 0 && entries >= p.until {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
