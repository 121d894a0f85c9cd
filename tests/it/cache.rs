//! Caches are only speed (issue 18, items 9 and 10): cache files bit-flipped, truncated, swapped between
//! personas or deleted while reads run never change an answer; every answer is compared with a full replay.

use std::path::{Path, PathBuf};

use crate::checkpoint::{answers, mail_batch, state_events};
use crate::harness::{stderr, Repo};

fn repo_with_mail() -> Repo {
    let r = Repo::new();
    mail_batch(&r, "curator", 0, 12);
    mail_batch(&r, "weaver", 12, 12);
    mail_batch(&r, "refactor", 24, 6);
    let inbox: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["--json", "mail", "inbox", "--persona", "curator"]))
            .unwrap();
    for m in inbox["messages"].as_array().unwrap().iter().take(3) {
        r.jules_ok([
            "mail",
            "read",
            m["id"].as_str().unwrap(),
            "--persona",
            "curator",
        ]);
    }
    state_events(&r, 0..2);
    r
}

fn cache_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            cache_files(&p, out);
        } else if p.extension().is_none_or(|x| x != "lock") {
            out.push(p);
        }
    }
}

#[test]
fn damaged_truncated_and_swapped_cache_files_never_change_an_answer() {
    let r = repo_with_mail();
    let expected = answers(&r, &["--full"]);
    let cache = r.path().join(".git/jules/cache");
    let warm = || {
        let _ = std::fs::remove_dir_all(&cache);
        assert_eq!(answers(&r, &[]), expected, "a cold cache answers alike");
        r.jules_ok(["log", "stats", "mail"]);
        r.jules_ok(["log", "stats", "state"]);
    };
    warm();
    let mut files = Vec::new();
    cache_files(&cache, &mut files);
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    assert!(files.iter().any(|f| f.ends_with("boxes/curator.json")));
    let mut mutations = 0;
    for f in &files {
        let good = std::fs::read(f).unwrap();
        let n = good.len();
        // Which damage falls on which file rotates, so that every kind meets every kind of file.
        let damaged: Vec<(&str, Vec<u8>)> = vec![
            ("a bit flipped at the start", flip(&good, 0)),
            ("a bit flipped in the middle", flip(&good, n / 2)),
            ("a bit flipped in the trailer", flip(&good, n - 3)),
            ("truncated by one byte", good[..n - 1].to_vec()),
            ("truncated to half", good[..n / 2].to_vec()),
            ("emptied", Vec::new()),
        ];
        for k in 0..2 {
            let (what, bytes) = &damaged[(mutations + k * 3) % damaged.len()];
            std::fs::write(f, bytes).unwrap();
            assert_eq!(answers(&r, &[]), expected, "{}: {what}", f.display());
            mutations += 1;
            // A rebuilt cache is byte-identical, so putting the good file back leaves a consistent cache.
            std::fs::write(f, &good).unwrap();
        }
    }
    // Whole files swapped between personas (each file is intact, just in the wrong place).
    let boxes = cache.join("mail/mail/boxes");
    for (x, y) in [("curator", "weaver"), ("weaver", "refactor")] {
        let (px, py) = (
            boxes.join(format!("{x}.json")),
            boxes.join(format!("{y}.json")),
        );
        let (bx, by) = (std::fs::read(&px).unwrap(), std::fs::read(&py).unwrap());
        std::fs::write(&px, &by).unwrap();
        std::fs::write(&py, &bx).unwrap();
        assert_eq!(answers(&r, &[]), expected, "boxes {x} and {y} swapped");
        mutations += 1;
        warm();
    }
    // The cache of another log's projection in place of this one's.
    let (stats_mail, stats_state) = (
        cache.join("mail/stats/stats.json"),
        cache.join("state/stats/stats.json"),
    );
    let full_stats = r.jules_ok(["--json", "--full", "log", "stats", "mail"]);
    std::fs::copy(&stats_state, &stats_mail).unwrap();
    let stats = r.jules_ok(["--json", "log", "stats", "mail"]);
    assert!(stats.contains("\"rebuilt\""), "{stats}");
    let strip = |s: &str| {
        let mut v: serde_json::Value = serde_json::from_str(s).unwrap();
        v.as_object_mut().unwrap().remove("refresh");
        v
    };
    assert_eq!(strip(&stats), strip(&full_stats));
    mutations += 1;
    // Each file deleted alone.
    warm();
    for f in &files {
        let good = std::fs::read(f).unwrap();
        std::fs::remove_file(f).unwrap();
        assert_eq!(answers(&r, &[]), expected, "{} deleted", f.display());
        std::fs::write(f, &good).unwrap();
        mutations += 1;
    }
    assert!(mutations > 40, "{mutations}");
}

fn flip(bytes: &[u8], at: usize) -> Vec<u8> {
    let mut v = bytes.to_vec();
    if !v.is_empty() {
        let i = at.min(v.len() - 1);
        v[i] ^= 0x10;
    }
    v
}

#[test]
fn reads_succeed_while_the_cache_is_deleted_under_them() {
    let r = repo_with_mail();
    let inbox = |r: &Repo| r.jules(["--json", "mail", "inbox", "--persona", "weaver", "--all"]);
    let expected = crate::harness::stdout(&inbox(&r));
    let full = r.jules_ok([
        "--json",
        "--full",
        "mail",
        "inbox",
        "--persona",
        "weaver",
        "--all",
    ]);
    assert_eq!(expected, full);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let cache = r.path().join(".git/jules/cache");
    let deleter = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut n = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = std::fs::remove_dir_all(&cache);
                n += 1;
                std::thread::sleep(std::time::Duration::from_micros(300));
            }
            n
        })
    };
    let mut failures = Vec::new();
    for i in 0..80 {
        let out = if i % 2 == 0 {
            inbox(&r)
        } else {
            r.jules(["--json", "mail", "thread", "topic-2"])
        };
        if !out.status.success() {
            failures.push(stderr(&out));
        } else if i % 2 == 0 && crate::harness::stdout(&out) != expected {
            failures.push(format!("wrong answer: {}", crate::harness::stdout(&out)));
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let deletions = deleter.join().unwrap();
    assert!(deletions > 80, "the cache was deleted {deletions} times");
    assert!(
        failures.is_empty(),
        "{} of 80 reads failed: {:?}",
        failures.len(),
        failures
    );
}
