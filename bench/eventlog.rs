//! Library-level append cost against its floor, in one run: `cargo bench --bench eventlog`.
//!
//! The floor is the bare cost of what an append must do at least: write one loose object and move one ref
//! with a compare-and-swap and a reflog entry. Target: `Log::append` within 2x of it.

use std::time::{Duration, Instant};

use git_jules::store::eventlog::{Event, Log, NewEvent};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(2000);
    let dir = tempfile::tempdir_in(if std::path::Path::new("/dev/shm").is_dir() {
        "/dev/shm"
    } else {
        "/tmp"
    })
    .expect("tempdir");
    let repo = gix::init(dir.path()).expect("init");
    let log = Log::open(&repo, "bench").expect("log");

    let mut floor = Vec::with_capacity(n);
    let mut prev = None;
    for i in 0..n {
        let t = Instant::now();
        let blob = repo
            .write_blob(format!("{{\"i\":{i}}}"))
            .expect("blob")
            .detach();
        // A blob is not a commit, but the ref transaction does not care: this is the bare cost.
        assert!(
            git_jules::store::refs::cas(&repo, "refs/jules/floor", prev, blob, "floor")
                .expect("cas")
        );
        prev = Some(blob);
        floor.push(t.elapsed());
    }
    let mut ours = Vec::with_capacity(n);
    for i in 0..n {
        let ev = NewEvent::new(Event::new(
            "bench.append",
            "bench",
            serde_json::json!({ "i": i }),
        ));
        let t = Instant::now();
        log.append(ev).expect("append");
        ours.push(t.elapsed());
    }
    let (f, o) = (median(floor), median(ours));
    println!(
        "library append, median of {n}: floor (1 loose object + CAS ref update with reflog) {:.1} us, Log::append {:.1} us, ratio {:.2}x (target <= 2x)",
        f.as_secs_f64() * 1e6,
        o.as_secs_f64() * 1e6,
        o.as_secs_f64() / f.as_secs_f64()
    );
}
