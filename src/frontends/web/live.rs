//! Live pages: `GET /events` streams a Server-Sent Event each time the refs move (a local send, a
//! `git fetch`, a sync by anyone), woken by `refwatch`. The page's script then fetches itself again and
//! swaps its `<main>`: the server stays the only renderer.

use std::io::Write;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use tiny_http::Request;

use super::Shared;

/// A fetch moves several refs in a row: waiting this long after a change folds the burst into one event.
const SETTLE: Duration = Duration::from_millis(15);
/// A comment line this often keeps proxies and the browser from timing the stream out, and finds closed
/// connections (the write fails) so their threads end.
const KEEPALIVE: Duration = Duration::from_secs(15);

/// A generation counter bumped on every ref change; streams sleep on the condition variable.
#[derive(Default)]
pub struct Live {
    generation: Mutex<u64>,
    changed: Condvar,
}

impl Live {
    pub fn bump(&self) {
        if let Ok(mut g) = self.generation.lock() {
            *g += 1;
            self.changed.notify_all();
        }
    }

    fn current(&self) -> u64 {
        self.generation.lock().map(|g| *g).unwrap_or(0)
    }

    /// Wait until the generation differs from `seen` or `timeout` passes; the generation now.
    fn wait(&self, seen: u64, timeout: Duration) -> u64 {
        let Ok(g) = self.generation.lock() else {
            return seen;
        };
        match self.changed.wait_timeout_while(g, timeout, |g| *g == seen) {
            Ok((g, _)) => *g,
            Err(_) => seen,
        }
    }
}

/// Serve the event stream on `req` until the client goes away.
pub fn stream(shared: &Shared, req: Request) {
    let mut w = req.into_writer();
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n\
                X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\nretry: 1000\n\n";
    if w.write_all(head.as_bytes())
        .and_then(|_| w.flush())
        .is_err()
    {
        return;
    }
    let mut seen = shared.live.current();
    loop {
        let now = shared.live.wait(seen, KEEPALIVE);
        let msg = if now != seen {
            std::thread::sleep(SETTLE);
            seen = shared.live.current();
            format!("event: refs\ndata: {seen}\n\n")
        } else {
            ": keepalive\n\n".to_owned()
        };
        if w.write_all(msg.as_bytes()).and_then(|_| w.flush()).is_err() {
            return;
        }
    }
}
