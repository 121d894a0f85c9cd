//! The floor of a full replay (`bench/replay.sh`): one pass reading every commit of a log once, and nothing
//! else — no message parsing, no hashing, no ordering, no fold.
//!
//! `cargo bench --bench replay_floor -- REPO REF`: lists the commits reachable from REF with gix's walk (on
//! the commit-graph when there is one), then inflates each commit once, on one thread and then on one
//! thread per core (as the replay does), and prints the three times and the peak RSS so far.

use std::time::Instant;

use gix::objs::Find;
use gix::ObjectId;

/// Inflate every commit of `ids` once; the bytes read, so that nothing is optimised away.
fn read_all(repo: &gix::Repository, ids: &[ObjectId]) -> usize {
    let mut repo = repo.clone();
    repo.object_cache_size(0);
    let mut buf = Vec::new();
    let mut bytes = 0;
    for id in ids {
        let data = repo
            .objects
            .try_find(id, &mut buf)
            .expect("readable")
            .expect("present");
        bytes += data.data.len();
    }
    bytes
}

fn peak_rss_kb() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l.trim_start_matches("VmHWM:").trim().to_owned())
        })
        .unwrap_or_else(|| "?".into())
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let (Some(path), Some(refname)) = (args.first(), args.get(1)) else {
        eprintln!("usage: cargo bench --bench replay_floor -- REPO REF");
        std::process::exit(2);
    };
    let repo = gix::open(path).expect("a repository");
    let tip = repo
        .find_reference(refname.as_str())
        .expect("the ref")
        .into_fully_peeled_id()
        .expect("a commit")
        .detach();

    let t = Instant::now();
    let ids: Vec<ObjectId> = repo
        .rev_walk([tip])
        .all()
        .expect("walk")
        .map(|info| info.expect("walk").id)
        .collect();
    let walk = t.elapsed();

    let t = Instant::now();
    let bytes = read_all(&repo, &ids);
    let one = t.elapsed();

    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    let t = Instant::now();
    let per = ids.len().div_ceil(threads).max(1);
    let shared = repo.clone().into_sync();
    let total: usize = std::thread::scope(|s| {
        let handles: Vec<_> = ids
            .chunks(per)
            .map(|part| {
                let shared = &shared;
                s.spawn(move || read_all(&shared.to_thread_local(), part))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("reader")).sum()
    });
    let parallel = t.elapsed();
    assert_eq!(total, bytes);
    println!(
        "replay floor, {} commits ({} MB inflated): walk {:.2} s; inflate each once: {:.2} s on 1 thread, {:.2} s on {threads}; peak RSS {}",
        ids.len(),
        bytes / 1_000_000,
        walk.as_secs_f64(),
        one.as_secs_f64(),
        parallel.as_secs_f64(),
        peak_rss_kb()
    );
}
