//! `git jules web --fetch INTERVAL` (issue 44): the server keeps its clone current by itself. A background
//! thread fetches the clone's jules remote (`sync::default_remote`: `jules.remote`, else the branch's
//! remote, else `origin`) with `sync::fetch`, the fetch `git jules sync` makes (the logs and notes into
//! remote-tracking refs, which every read already unions), every INTERVAL. A failure backs off: the wait
//! doubles with each failure in a row, up to [`MAX_BACKOFF`] (or the interval, if longer), and is back to
//! the interval after a success. Nothing is pushed and no local ref is moved: the fetch only brings news.
//!
//! What moved is announced as any ref change is (`refwatch` sees the remote-tracking refs move, the pages
//! refresh). Every page shows the last attempt and its result ([`Status`]); when the result changes (a
//! first failure, a recovery) the open pages are told to refresh too, so the line they show is current.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;

use super::live::Live;

/// The longest wait after failures in a row (unless the interval itself is longer).
pub const MAX_BACKOFF: Duration = Duration::from_secs(600);

/// What every page shows about the background fetch.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Status {
    pub remote: String,
    pub interval_secs: u64,
    /// RFC 3339: when the last fetch ended; `None` before the first.
    pub last: Option<String>,
    /// Whether it succeeded.
    pub ok: bool,
    /// Why it failed (git's own words, which the page shows made visible).
    pub error: Option<String>,
    /// Failures in a row.
    pub failures: u32,
    /// Seconds until the next attempt, as decided when the last one ended.
    pub next_in_secs: u64,
}

/// The fetcher a server runs: its settings and its status, which page renders read.
pub struct Fetcher {
    interval: Duration,
    status: Mutex<Status>,
}

impl Fetcher {
    pub fn new(remote: String, interval: Duration) -> Fetcher {
        Fetcher {
            interval,
            status: Mutex::new(Status {
                remote,
                interval_secs: interval.as_secs(),
                ..Status::default()
            }),
        }
    }

    pub fn status(&self) -> Status {
        self.status.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Start the thread: fetch now, then after each wait, for as long as the process runs.
    pub fn start(
        self: &Arc<Self>,
        dir: PathBuf,
        overrides: git_jules::kit::repo::Overrides,
        live: Arc<Live>,
    ) {
        let me = self.clone();
        std::thread::spawn(move || loop {
            let result = git_jules::kit::repo::open_with(&dir, &overrides).and_then(|repo| {
                let remote = me.status().remote;
                git_jules::store::sync::fetch(&repo, &remote)
            });
            let wait = me.record(result.err().map(|e| e.to_string()));
            if wait.1 {
                live.bump();
            }
            std::thread::sleep(wait.0);
        });
    }

    /// Record one attempt's result; the wait before the next and whether the result changed.
    fn record(&self, error: Option<String>) -> (Duration, bool) {
        let Ok(mut s) = self.status.lock() else {
            return (self.interval, false);
        };
        let changed = s.last.is_none() || s.ok != error.is_none() || s.error != error;
        s.last = Some(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
        s.ok = error.is_none();
        s.failures = if s.ok {
            0
        } else {
            s.failures.saturating_add(1)
        };
        s.error = error;
        let wait = backoff(self.interval, s.failures);
        s.next_in_secs = wait.as_secs();
        (wait, changed)
    }
}

/// The wait after `failures` failures in a row: the interval doubled for each, at most [`MAX_BACKOFF`] (or
/// the interval, when that is longer).
pub fn backoff(interval: Duration, failures: u32) -> Duration {
    let cap = MAX_BACKOFF.max(interval);
    interval
        .checked_mul(1u32 << failures.min(16))
        .unwrap_or(cap)
        .min(cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_back_off_doubling_up_to_the_cap_and_success_resets() {
        let s = Duration::from_secs;
        assert_eq!(backoff(s(30), 0), s(30));
        assert_eq!(backoff(s(30), 1), s(60));
        assert_eq!(backoff(s(30), 3), s(240));
        assert_eq!(backoff(s(30), 5), MAX_BACKOFF);
        assert_eq!(backoff(s(30), u32::MAX), MAX_BACKOFF);
        assert_eq!(
            backoff(s(3600), 4),
            s(3600),
            "an interval over the cap is the cap"
        );

        let f = Fetcher::new("origin".into(), s(30));
        assert_eq!(f.record(Some("no route".into())), (s(60), true));
        assert_eq!(f.record(Some("no route".into())), (s(120), false));
        assert_eq!(f.status().failures, 2);
        assert_eq!(f.record(None), (s(30), true));
        let st = f.status();
        assert!(st.ok && st.error.is_none() && st.failures == 0 && st.last.is_some());
    }
}
